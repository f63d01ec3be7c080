//! The `bir-ir` suite: programs that must load, validate and round-trip, and malformed programs
//! that must produce exactly their listed located errors.

use super::Outcome;
use super::case::Case;
use bir_ir::{Diagnostic, ValidateOptions, json, validate};

pub fn run(case: &Case) -> Outcome {
    let text = match std::fs::read(&case.program) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("{}: {e}", case.program.display())),
    };
    let opts = ValidateOptions::default();
    let diagnostics: Vec<Diagnostic> = match json::load_slice(&text) {
        Ok(p) => match validate(&p, &opts) {
            Ok(_) if case.expect_ok => return round_trip(&p),
            Ok(_) => Vec::new(),
            Err(d) => d.0,
        },
        Err(e) => e.diagnostics().0,
    };
    if case.expect_ok {
        return Outcome::Fail(format!(
            "expected the program to load and validate, got:\n{}",
            list(&diagnostics)
        ));
    }
    match_errors(case, &diagnostics)
}

fn round_trip(p: &bir_ir::Program) -> Outcome {
    let text = json::to_json_string(p);
    let again = match json::load_str(&text) {
        Ok(q) => q,
        Err(e) => return Outcome::Fail(format!("the written JSON does not load back:\n{e}")),
    };
    if let Err(d) = validate(&again, &ValidateOptions::default()) {
        return Outcome::Fail(format!("the written JSON does not validate:\n{d}"));
    }
    if &again != p {
        return Outcome::Fail("reading the written JSON gives a different program".to_owned());
    }
    if json::to_json_string(&again) != text {
        return Outcome::Fail("writing the program twice gives different text".to_owned());
    }
    Outcome::Pass
}

fn list(ds: &[Diagnostic]) -> String {
    if ds.is_empty() {
        return "  (no errors)".to_owned();
    }
    ds.iter().map(|d| format!("  {d}")).collect::<Vec<_>>().join("\n")
}

fn match_errors(case: &Case, got: &[Diagnostic]) -> Outcome {
    let mut used = vec![false; got.len()];
    let mut missing = Vec::new();
    for e in &case.errors {
        let hit = got.iter().enumerate().position(|(k, d)| {
            !used[k]
                && d.kind.name() == e.kind
                && d.location().contains(&e.location)
                && d.message.contains(&e.message)
        });
        match hit {
            Some(k) => used[k] = true,
            None => missing.push(format!(
                "  {}:{}: error {} @ {} | {}",
                case.expect_file.display(),
                e.line,
                e.kind,
                e.location,
                e.message
            )),
        }
    }
    let extra: Vec<&Diagnostic> = got.iter().zip(&used).filter(|(_, u)| !**u).map(|(d, _)| d).collect();
    if missing.is_empty() && extra.is_empty() {
        return Outcome::Pass;
    }
    let mut msg = String::new();
    if !missing.is_empty() {
        msg += &format!("expected but not reported:\n{}\n", missing.join("\n"));
    }
    if !extra.is_empty() {
        msg += &format!(
            "reported but not expected:\n{}\n",
            extra.iter().map(|d| format!("  {d}")).collect::<Vec<_>>().join("\n")
        );
    }
    msg += &format!("all reported:\n{}", list(got));
    Outcome::Fail(msg)
}
