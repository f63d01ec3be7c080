//! Program suites (`programs/*`): run a BIR JSON program on its input tensors and compare every
//! expected output tensor bit for bit, with hex in failure messages. A case with a `fault` line
//! must stop with that guest fault; its `output` tensors (if any) are compared afterwards.

use super::Outcome;
use super::case::Case;
use bir_ir::{ValidateOptions, json, validate};
use numerics::Profile;
use simulator::npy::{Npy, descr_size};
use simulator::{Simulator, io};

pub fn run(case: &Case) -> Outcome {
    match check(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn read_npy(path: &std::path::Path) -> Result<Npy, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Npy::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn check(case: &Case) -> Result<(), String> {
    if case.outputs.is_empty() && case.fault.is_none() {
        return Err("a program case needs `output` tensors or a `fault`".into());
    }
    let text = std::fs::read(&case.program).map_err(|e| format!("{}: {e}", case.program.display()))?;
    let program = json::load_slice(&text).map_err(|e| e.to_string())?;
    let valid = validate(&program, &ValidateOptions::default()).map_err(|d| d.to_string())?;
    let f = &program.functions[0];
    let profile = Profile::named(case.profile.as_deref().unwrap_or("refsim")).ok_or("unknown profile")?;
    let mut sim = Simulator::new(valid, profile);
    for (name, path) in &case.inputs {
        let t = io::resolve(f, name)?;
        let npy = read_npy(path)?;
        io::check_input(&t, name, &npy)?;
        io::load(&mut sim, &t, &npy)?;
    }
    let outcome = sim.run().map_err(|e| e.to_string())?;
    match (outcome, &case.fault) {
        (simulator::Outcome::Finished, None) => {}
        (simulator::Outcome::Faulted(fault), None) => return Err(format!("the program faulted: {fault}")),
        (simulator::Outcome::Finished, Some(want)) => {
            return Err(format!(
                "expected a `{}` fault containing {:?}, but the program finished",
                want.kind, want.message
            ));
        }
        (simulator::Outcome::Faulted(fault), Some(want)) => {
            let text = fault.to_string();
            if fault.kind.name() != want.kind || !text.contains(&want.message) {
                return Err(format!(
                    "expected a `{}` fault containing {:?}, got a `{}` fault: {text}",
                    want.kind,
                    want.message,
                    fault.kind.name()
                ));
            }
        }
    }
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
