//! `cargo xtask fuzz [TARGET...] [--seconds N] [--ci]`: runs the cargo-fuzz targets in `fuzz/`
//! (docs/robustness.md "Fuzzing") one after the other, each for N seconds (default 60) on a
//! scratch copy of its committed seed corpus (`fuzz/corpus/TARGET`, plus every committed crash
//! input in `fuzz/regressions/TARGET`, replayed first) with the BIR dictionary
//! (`fuzz/bir.dict`), and fails on any crash, timeout or out-of-memory. Prints each target's
//! executions and executions per second from libFuzzer's final statistics.
//!
//! Needs a nightly toolchain and `cargo install cargo-fuzz --locked`; when either is missing it
//! says so and fails (exit 1), unless `--skip-missing` asks it to print `SKIPPED` and succeed
//! (`.ci/run` installs both instead, so CI always fuzzes). `--ci` builds with 16 codegen units
//! and no sanitizer so CI's build takes minutes; runs without `--ci` keep cargo-fuzz's defaults:
//! one codegen unit and AddressSanitizer. The committed
//! corpus is never modified: new inputs go to `target/fuzz-corpus/TARGET`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Every target, in the order they run.
pub const TARGETS: [&str; 4] = ["json_validate", "access_pattern", "run_program", "isa_decode"];

/// Command-line options of `fuzz`.
pub struct Options {
    targets: Vec<String>,
    seconds: u64,
    /// `--ci`: a quick build (16 codegen units, no sanitizer) for the smoke run.
    quick_build: bool,
    /// `--skip-missing`: without nightly or cargo-fuzz, print SKIPPED and succeed.
    skip_missing: bool,
}

/// The options, or `None` for `-h`/`--help`.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options { targets: Vec::new(), seconds: 60, quick_build: false, skip_missing: false };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it.next().ok_or("--seconds needs a value")?;
                o.seconds = v.parse().map_err(|_| format!("--seconds {v}: expected a number"))?;
            }
            "--ci" => o.quick_build = true,
            "--skip-missing" => o.skip_missing = true,
            "--help" | "-h" => return Ok(None),
            t if TARGETS.contains(&t) => o.targets.push(t.to_owned()),
            other => {
                return Err(format!(
                    "unknown fuzz target or option `{other}` (targets: {})",
                    TARGETS.join(", ")
                ));
            }
        }
    }
    if o.targets.is_empty() {
        o.targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    }
    Ok(Some(o))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether `cargo +nightly fuzz` can run here.
fn available() -> Result<(), String> {
    let ok = |mut c: Command| c.output().map(|o| o.status.success()).unwrap_or(false);
    let mut nightly = Command::new("cargo");
    nightly.args(["+nightly", "--version"]);
    if !ok(nightly) {
        return Err("no nightly toolchain (rustup toolchain install nightly)".into());
    }
    let mut fuzz = Command::new("cargo");
    fuzz.args(["+nightly", "fuzz", "--help"]);
    if !ok(fuzz) {
        return Err("cargo-fuzz is not installed (cargo install cargo-fuzz --locked)".into());
    }
    Ok(())
}

/// The last value of a libFuzzer statistic (`stat::number_of_executed_units: 123`).
fn stat(log: &str, key: &str) -> Option<u64> {
    log.lines().rev().find_map(|l| l.strip_prefix(key)?.trim_start_matches(':').trim().parse().ok())
}

/// Runs the targets; the exit status fails on the first crash, timeout or OOM.
pub fn run(o: &Options) -> ExitCode {
    if let Err(why) = available() {
        if o.skip_missing {
            println!("xtask fuzz: SKIPPED, {why}");
            return ExitCode::SUCCESS;
        }
        eprintln!("xtask fuzz: cannot fuzz: {why}; pass --skip-missing to skip instead");
        return ExitCode::FAILURE;
    }
    let root = root();
    let fuzz_dir = root.join("fuzz");
    let mut failed = Vec::new();
    println!("{:<16} {:>8} {:>14} {:>10}  result", "target", "seconds", "executions", "execs/s");
    for t in &o.targets {
        let scratch = root.join("target/fuzz-corpus").join(t);
        let _ = std::fs::create_dir_all(&scratch);
        let artifacts = root.join("target/fuzz-artifacts").join(t);
        let _ = std::fs::create_dir_all(&artifacts);
        let seeds = fuzz_dir.join("corpus").join(t);
        let mut c = Command::new("cargo");
        c.current_dir(&fuzz_dir).args(["+nightly", "fuzz", "run", t]);
        if o.quick_build {
            // cargo-fuzz's defaults (one codegen unit, AddressSanitizer) make the instrumented
            // build of the simulator crate take tens of minutes on two cores; the code is safe
            // Rust, so CI's smoke run trades ASan for a build of a few minutes.
            c.args(["--codegen-units", "16", "--sanitizer", "none"]);
        }
        c.arg(&scratch);
        // Every crash ever found is replayed first (`fuzz/regressions/TARGET`, committed).
        for dir in [seeds, fuzz_dir.join("regressions").join(t)] {
            if dir.is_dir() {
                c.arg(dir);
            }
        }
        c.arg("--")
            .arg(format!("-max_total_time={}", o.seconds))
            .arg(format!("-dict={}", fuzz_dir.join("bir.dict").display()))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .args(["-timeout=10", "-rss_limit_mb=2048", "-max_len=65536", "-print_final_stats=1"]);
        let out = match c.output() {
            Ok(out) => out,
            Err(e) => {
                eprintln!("xtask fuzz: cannot start cargo fuzz: {e}");
                return ExitCode::FAILURE;
            }
        };
        let log = String::from_utf8_lossy(&out.stderr);
        let execs = stat(&log, "stat::number_of_executed_units").unwrap_or(0);
        let rate = stat(&log, "stat::average_exec_per_sec").unwrap_or(0);
        let result = if out.status.success() { "ok" } else { "FAILED" };
        println!("{t:<16} {:>8} {execs:>14} {rate:>10}  {result}", o.seconds);
        if !out.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
            eprintln!("xtask fuzz: {t} failed; the input is in {}", artifacts.display());
            failed.push(t.clone());
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("xtask fuzz: failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}
