//! Program suites (`programs/*`): run a BIR JSON program on its input tensors and compare every
//! expected output tensor bit for bit, with hex in failure messages. A case with a `fault` line
//! must stop with that guest fault; its `output` tensors (if any) are compared afterwards.

use super::Outcome;
use super::case::{Case, ExpectedFault};
use bir_ir::{json, validate};
use numerics::Profile;
use simulator::npy::{Npy, descr_size};
use simulator::{Simulator, io};

pub fn run(case: &Case) -> Outcome {
    // A program the validator must refuse: its located errors, exactly as the bir-ir suite checks.
    if !case.errors.is_empty() {
        return super::bir_ir::run(case);
    }
    match check(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn read_npy(path: &std::path::Path) -> Result<Npy, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Npy::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Compares how the run ended (`Some((kind name, Display text))` for a guest fault) with the
/// case's `fault` line, if any.
fn check_fault(got: Option<(&str, String)>, want: Option<&ExpectedFault>) -> Result<(), String> {
    match (got, want) {
        (None, None) => Ok(()),
        (Some((_, text)), None) => Err(format!("the program faulted: {text}")),
        (None, Some(want)) => Err(format!(
            "expected a `{}` fault containing {:?}, but the program finished",
            want.kind, want.message
        )),
        (Some((kind, text)), Some(want)) if kind != want.kind || !text.contains(&want.message) => {
            Err(format!(
                "expected a `{}` fault containing {:?}, got a `{kind}` fault: {text}",
                want.kind, want.message
            ))
        }
        (Some(_), Some(_)) => Ok(()),
    }
}

fn check(case: &Case) -> Result<(), String> {
    if case.outputs.is_empty() && case.fault.is_none() {
        return Err("a program case needs `output` tensors or a `fault`".into());
    }
    let text = std::fs::read(&case.program).map_err(|e| format!("{}: {e}", case.program.display()))?;
    let program = json::load_slice(&text).map_err(|e| e.to_string())?;
    let options = options(case)?;
    let valid = validate(&program, &options.validate_options()).map_err(|d| d.to_string())?;
    let f = &program.functions[0];
    let profile = Profile::named(case.profile.as_deref().unwrap_or("refsim")).ok_or("unknown profile")?;
    let mut sim = Simulator::new(valid, profile);
    sim.set_options(options);
    for (name, path) in &case.inputs {
        let t = io::resolve(f, name)?;
        let npy = read_npy(path)?;
        io::check_input(&t, name, &npy)?;
        io::load(&mut sim, &t, &npy)?;
    }
    let fault = match sim.run().map_err(|e| e.to_string())? {
        simulator::Outcome::Finished => None,
        simulator::Outcome::Faulted(fault) => Some((fault.kind.name(), fault.to_string())),
    };
    check_fault(fault, case.fault.as_ref())?;
    let mut problems = Vec::new();
    for (name, path) in &case.outputs {
        let want = read_npy(path)?;
        let got = io::read(&mut sim, &io::resolve(f, name)?)?;
        if (got.descr.as_str(), &got.shape) != (want.descr.as_str(), &want.shape) {
            problems.push(format!(
                "{name}: birsim wrote {} {:?}, expected {} {:?}",
                got.descr, got.shape, want.descr, want.shape
            ));
            continue;
        }
        let size = descr_size(&want.descr).unwrap_or(1) as usize;
        let bad: Vec<usize> = (0..want.data.len() / size)
            .filter(|k| got.data[k * size..(k + 1) * size] != want.data[k * size..(k + 1) * size])
            .collect();
        if bad.is_empty() {
            continue;
        }
        let hex = |d: &[u8], k: usize| {
            d[k * size..(k + 1) * size].iter().rev().map(|b| format!("{b:02X}")).collect::<String>()
        };
        let shown: Vec<String> = bad
            .iter()
            .take(6)
            .map(|&k| format!("    [{k}] expected 0x{}, birsim 0x{}", hex(&want.data, k), hex(&got.data, k)))
            .collect();
        problems.push(format!(
            "{name}: {} of {} elements differ:\n{}",
            bad.len(),
            want.data.len() / size,
            shown.join("\n")
        ));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

/// The simulator options for program cases: the case's own (its `option:` lines), with
/// `BIRSIM_THREADS` (through the same `Options::set` as the CLI's variable) and `BIRSIM_GRAIN`
/// (elements per thread, a tuning knob with no user-facing name) overriding the parallelism, so
/// CI can run the corpus at several thread counts with tiny chunks and check the results stay
/// bit-identical.
fn options(case: &Case) -> Result<simulator::Options, String> {
    let mut o = case.options;
    if let Ok(v) = std::env::var("BIRSIM_THREADS") {
        o.set("threads", &v).map_err(|e| format!("BIRSIM_THREADS: {e}"))?;
    }
    if let Ok(v) = std::env::var("BIRSIM_GRAIN") {
        let g: usize = v.parse().map_err(|_| format!("BIRSIM_GRAIN={v}: expected a number"))?;
        o.parallelism.grain = g.max(1);
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(kind: &str, message: &str) -> ExpectedFault {
        ExpectedFault { kind: kind.into(), message: message.into() }
    }

    #[test]
    fn a_fault_must_match_kind_and_message() {
        let text = || "instruction #1 'i1' (TensorTensor): op mod is not in ts_ops".to_owned();
        assert!(check_fault(None, None).is_ok());
        assert!(
            check_fault(Some(("unsupported-op", text())), Some(&want("unsupported-op", "not in ts_ops")))
                .is_ok()
        );
        assert!(check_fault(Some(("unsupported-op", text())), Some(&want("unsupported-op", ""))).is_ok());
        let e = check_fault(Some(("unsupported-op", text())), None).unwrap_err();
        assert!(e.contains("the program faulted"), "{e}");
        let e = check_fault(None, Some(&want("unsupported-op", "x"))).unwrap_err();
        assert!(e.contains("but the program finished"), "{e}");
        let e =
            check_fault(Some(("shape", text())), Some(&want("unsupported-op", "not in ts_ops"))).unwrap_err();
        assert!(e.contains("got a `shape` fault"), "{e}");
        let e = check_fault(Some(("unsupported-op", text())), Some(&want("unsupported-op", "ta_ops")))
            .unwrap_err();
        assert!(e.contains("ta_ops"), "{e}");
    }
}
