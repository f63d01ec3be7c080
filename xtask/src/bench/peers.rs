//! Finding, building and running what the rows compare against: the C baselines, the oracle
//! environment's Python, and the release `birsim` binary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C baselines under `xtask/bench/c/` (one program each).
const C_PROGRAMS: [&str; 9] =
    ["memcpy", "axpb", "fold", "memset", "indirect", "dispatch", "strided", "matmul", "activation"];

fn bench_dir() -> PathBuf {
    super::super::verify::root().join("xtask/bench")
}

/// Compiles every C baseline into `out` with the flags the issue names (linked with the system
/// libm, which the activation loops call).
pub fn compile_c(out: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    for name in C_PROGRAMS {
        let src = bench_dir().join("c").join(format!("{name}.c"));
        let o = Command::new(&cc)
            .args(["-O3", "-march=native", "-ffp-contract=off", "-pthread", "-o"])
            .arg(out.join(name))
            .arg(&src)
            .arg("-lm")
            .output()
            .map_err(|e| format!("cannot run {cc}: {e}"))?;
        if !o.status.success() {
            return Err(format!(
                "{cc} failed on {}: {}",
                src.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
    }
    Ok(out.to_path_buf())
}

/// Parses `NAME MS` lines.
fn parse_times(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_owned(), v.trim().parse().ok()?))
        })
        .collect()
}

/// Runs a compiled C baseline and returns its `NAME MS` lines.
pub fn run_c(
    c: &Result<PathBuf, String>,
    program: &str,
    args: &[String],
) -> Result<HashMap<String, f64>, String> {
    let dir = c.as_ref().map_err(Clone::clone)?;
    let o = Command::new(dir.join(program)).args(args).output().map_err(|e| format!("{program}: {e}"))?;
    if !o.status.success() {
        return Err(format!("{program} failed: {}", String::from_utf8_lossy(&o.stderr).trim()));
    }
    Ok(parse_times(&String::from_utf8_lossy(&o.stdout)))
}

/// One time from a baseline's output.
pub fn pick(times: &Result<HashMap<String, f64>, String>, key: &str) -> Result<f64, String> {
    match times {
        Ok(m) => m.get(key).copied().ok_or_else(|| format!("no `{key}` time")),
        Err(e) => Err(e.clone()),
    }
}

/// The oracle environment's interpreter: `.venv/bin/python` at this checkout's root, else at the
/// main worktree's root (a linked worktree shares the main checkout's `.venv`). It must import
/// NumPy and ml_dtypes.
pub fn find_python() -> Result<PathBuf, String> {
    let root = super::super::verify::root();
    let mut candidates = vec![root.join(".venv/bin/python")];
    let common = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(main) = common.as_deref().and_then(Path::parent) {
        candidates.push(main.join(".venv/bin/python"));
    }
    for py in &candidates {
        if !py.exists() {
            continue;
        }
        let ok = Command::new(py)
            .args(["-c", "import numpy, ml_dtypes"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(py.clone());
        }
    }
    Err(format!(
        "no .venv/bin/python importing numpy and ml_dtypes at {}",
        candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" or ")
    ))
}

/// `Python 3.x, NumPy a.b, ml_dtypes c.d`.
pub fn python_versions(py: &Path) -> Option<String> {
    let code = "import sys, numpy, ml_dtypes; print(f'Python {sys.version.split()[0]}, NumPy {numpy.__version__}, ml_dtypes {ml_dtypes.__version__}')";
    let o = Command::new(py).args(["-c", code]).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

/// A peer script under `xtask/bench/py/`.
pub fn script(name: &str) -> PathBuf {
    bench_dir().join("py").join(name)
}

/// The in-process NumPy / ml_dtypes timings of `names` (kernels.py), each a median of `reps`.
pub fn py_kernels(
    python: &Result<PathBuf, String>,
    reps: usize,
    names: &[&str],
) -> Result<HashMap<String, f64>, String> {
    py_kernels_on(python, reps, names, None)
}

/// [`py_kernels`] with `input` (a raw little-endian fp32 file) as kernels.py's `--input`, the
/// data of the cases that read one (the activation rows').
pub fn py_kernels_on(
    python: &Result<PathBuf, String>,
    reps: usize,
    names: &[&str],
    input: Option<&Path>,
) -> Result<HashMap<String, f64>, String> {
    let py = python.as_ref().map_err(|_| "no oracle environment".to_owned())?;
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    let mut cmd = Command::new(py);
    cmd.arg(script("kernels.py")).arg(reps.to_string());
    if let Some(file) = input {
        cmd.arg("--input").arg(file);
    }
    let o = cmd.args(names).output().map_err(|e| format!("kernels.py: {e}"))?;
    if !o.status.success() {
        return Err(format!("kernels.py failed: {}", String::from_utf8_lossy(&o.stderr).trim()));
    }
    Ok(parse_times(&String::from_utf8_lossy(&o.stdout)))
}

/// Builds the release `birsim` (`cargo build --release -p birsim --bin birsim`) and returns it.
pub fn build_birsim() -> Result<PathBuf, String> {
    let root = super::super::verify::root();
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q", "-p", "birsim", "--bin", "birsim"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build --release -p birsim --bin birsim failed".to_owned());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let bin = target.join("release/birsim");
    if bin.exists() { Ok(bin) } else { Err(format!("{} is missing after the build", bin.display())) }
}
