//! The NKI front end's tracing speed (issue #31: "tracing a 64-tile matmul takes under 1 s"):
//! `birsim.nki.trace_json` of the tiled matmul test kernel (`python/tests/nki_kernels/matmul.py`,
//! 4 × 4 × 4 tiles of 128 × 512 × 128) in a Python that imports the installed `birsim` package
//! (the venv `.ci/run` builds, `target/python-ci-venv`, else the oracle `.venv`), the median of
//! the repetitions after one warm-up, against the issue's absolute bound of 1 s. Tracing runs no
//! simulation: the row times the Python front end alone, as a kernel author meets it.

use super::{Ctx, fact, note};
use std::path::PathBuf;
use std::process::Command;

/// The script: prints `<median ms> <Matmult count>`.
const SCRIPT: &str = r#"
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import birsim.nki as bn
bn.install()
from nki_kernels import matmul
reps = int(sys.argv[2])
lhsT = np.ones((512, 512), np.float32)
rhs = np.ones((512, 2048), np.float32)
times = []
for _ in range(reps + 1):
    t0 = time.perf_counter()
    text = bn.trace_json(matmul.matmul_tiled)(lhsT, rhs)
    times.append(time.perf_counter() - t0)
times = sorted(times[1:])
print(times[len(times) // 2] * 1e3, text.count('"opcode": "Matmult"'))
"#;

/// A Python that imports `birsim.nki`, or why there is none.
fn python(ctx: &Ctx) -> Result<PathBuf, String> {
    let root = super::super::verify::root();
    let mut candidates = vec![root.join("target/python-ci-venv/bin/python")];
    if let Ok(p) = &ctx.python {
        candidates.push(p.clone());
    }
    candidates
        .into_iter()
        .find(|py| {
            py.exists()
                && Command::new(py)
                    .args(["-c", "import birsim.nki"])
                    .output()
                    .is_ok_and(|o| o.status.success())
        })
        .ok_or_else(|| "no Python with the birsim package (run .ci/run, or pip install ./python)".to_owned())
}

/// The row.
pub fn run(ctx: &Ctx) {
    let name = "nki trace, 64-tile matmul (ms)";
    if !ctx.opts.want(name) {
        return;
    }
    let target = "time <= 1000 ms";
    let measured = python(ctx).and_then(|py| {
        let tests = super::super::verify::root().join("python/tests");
        let o = Command::new(py)
            .args(["-c", SCRIPT])
            .arg(&tests)
            .arg(ctx.opts.reps().to_string())
            .output()
            .map_err(|e| e.to_string())?;
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).trim().to_owned());
        }
        let out = String::from_utf8_lossy(&o.stdout);
        let mut words = out.split_whitespace();
        let ms = words.next().and_then(|w| w.parse::<f64>().ok());
        let tiles = words.next().and_then(|w| w.parse::<u64>().ok());
        match (ms, tiles) {
            (Some(ms), Some(64)) => Ok(ms),
            _ => Err(format!("unexpected output: {out}")),
        }
    });
    match measured {
        Ok(ms) => fact(name, &format!("{ms:.2} ms"), "-", "-", target, Some(ms <= 1000.0)),
        Err(e) => {
            fact(name, "-", "-", "-", target, None);
            note(&format!("not measured: {e}"));
        }
    }
}
