//! birsim automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! - `verify`: the conformance corpus under `conformance/` (the project's main job).
//! - `bench`: speed targets, as ratios against baselines measured in the same run.
//! - `exhaustive-fp8`: the opt-in 2^32 check of the FP8 encoders (not in CI).
//! - `fuzz`: the cargo-fuzz targets in `fuzz/` for a fixed time each (docs/robustness.md).
//! - `help`: usage.
//!
//! Only xtask and the CLI touch files; the library crates stay free of I/O policy.

mod bench;
mod exhaustive;
mod fuzz;
mod tidy;
mod verify;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  verify [--jobs N] [--filter PATTERN] [--shard K/N] [--list]
      Run the conformance corpus under conformance/. Threads: --jobs, else $BIRSIM_JOBS,
      else all cores. --filter keeps cases whose id contains PATTERN (repeatable: any
      matches). --shard K/N runs the K-th of N slices (1-based). --list prints case ids.
  bench [PATTERN...]
      Run the benchmarks whose names contain a PATTERN (all when none), printing each
      as a ratio against a baseline measured in the same run (C loops built with
      cc -O3 -march=native, NumPy/ml_dtypes from .venv when present, fresh processes
      for the end-to-end rows; --quick, --large).
  exhaustive-fp8 [FORMAT...]
      Check every fp32 input (2^32) through the FP8 encoders against a slow reference,
      saturating and not (float8_e4m3fn, float8e5, float8e4, float8e3). Minutes; not in CI.
  fuzz [TARGET...] [--seconds N]
      Run the cargo-fuzz targets in fuzz/ (json_validate, access_pattern, run_program, isa_decode;
      all when none) for N seconds each (default 60) from the committed seed corpus with
      the BIR dictionary; fails on any crash, timeout or OOM. Needs nightly and
      cargo-fuzz (skipped with a message when missing). See docs/robustness.md.
  help
      This text.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    match command.as_str() {
        "verify" => match verify::Options::parse(rest) {
            Ok(opts) => verify::run(&opts),
            Err(e) => {
                eprintln!("xtask verify: {e}\n\n{USAGE}");
                ExitCode::from(2)
            }
        },
        "bench" => {
            bench::run(rest);
            ExitCode::SUCCESS
        }
        "exhaustive-fp8" => {
            if exhaustive::run(rest) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        "fuzz" => fuzz::run(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("xtask: unknown command `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
