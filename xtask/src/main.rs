//! birsim automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! - `verify`: the conformance corpus under `conformance/` (the project's main job).
//! - `bench`: speed targets, as ratios against baselines measured in the same run.
//! - `exhaustive-fp8`: the opt-in 2^32 check of the FP8 encoders (not in CI).
//! - `exhaustive-exp`: the opt-in 2^32 check of Exp's fast path against libm (not in CI).
//! - `fuzz`: the cargo-fuzz targets in `fuzz/` for a fixed time each (docs/robustness.md).
//! - `help [COMMAND]`: usage; every command also takes `-h`/`--help` for its own.
//!
//! Only xtask and the CLI touch files; the library crates stay free of I/O policy.

mod bench;
mod exhaustive;
mod fuzz;
mod tidy;
mod verify;

use std::process::ExitCode;

/// Every command: its synopsis (first line) and what it does (the lines after, indented by 4).
/// `cargo xtask help` prints them all, `cargo xtask <command> --help` its own.
const COMMANDS: [(&str, &str); 6] = [
    (
        "verify",
        "\
verify [--jobs N] [--filter PATTERN] [--shard K/N] [--list]
    Run the conformance corpus under conformance/. Threads: --jobs, else $BIRSIM_JOBS,
    else all cores. --filter keeps cases whose id contains PATTERN (repeatable: any
    matches). --shard K/N runs the K-th of N slices (1-based). --list prints case ids.",
    ),
    (
        "bench",
        "\
bench [--quick] [--large] [--no-python] [PATTERN...]
    Run the benchmarks whose names contain a PATTERN (all when none), printing each
    as a ratio against a baseline measured in the same run (C loops built with
    cc -O3 -march=native, NumPy/ml_dtypes from .venv when present, fresh processes
    for the end-to-end rows). --quick: fewer repetitions, no 256 MiB row. --large:
    also the 1 GiB row. --no-python: as without the oracle environment.",
    ),
    (
        "exhaustive-fp8",
        "\
exhaustive-fp8 [FORMAT...]
    Check every fp32 input (2^32) through the FP8 encoders against a slow reference,
    saturating and not (float8_e4m3fn, float8e5, float8e4, float8e3; all when none).
    Minutes; not in CI.",
    ),
    (
        "exhaustive-exp",
        "\
exhaustive-exp
    Check the Activation Exp fast path (numerics::activation::exp_slice) against
    libm::exp rounded to fp32 on every fp32 input (2^32). Under a minute on two
    cores; not in CI (run it after changing the fast path).",
    ),
    (
        "fuzz",
        "\
fuzz [TARGET...] [--seconds N] [--ci] [--skip-missing]
    Run the cargo-fuzz targets in fuzz/ (json_validate, access_pattern, run_program, isa_decode;
    all when none) for N seconds each (default 60) from the committed seed corpus with
    the BIR dictionary; fails on any crash, timeout or OOM. Needs nightly and cargo-fuzz
    (cargo install cargo-fuzz --locked): fails when either is missing, unless
    --skip-missing (then prints SKIPPED and exits 0). --ci: a quick build (16 codegen
    units, no sanitizer). See docs/robustness.md.",
    ),
    (
        "help",
        "\
help [COMMAND]
    This text, or COMMAND's alone (as `cargo xtask COMMAND --help`).",
    ),
];

/// `cargo xtask help`: every command.
fn usage() -> String {
    let mut out = String::from(
        "usage: cargo xtask <command> [options]\n\n\
         Every command takes -h or --help for its own usage.\n\ncommands:\n",
    );
    for (_, text) in COMMANDS {
        for line in text.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `cargo xtask <command> --help`: that command's synopsis and description.
fn command_help(command: &str) -> Option<String> {
    let (_, text) = COMMANDS.iter().find(|(name, _)| *name == command)?;
    let (synopsis, what) = text.split_once('\n').unwrap_or((text, ""));
    Some(format!("usage: cargo xtask {synopsis}\n\n{what}\n"))
}

/// A command line, parsed: what to run, or help to print.
enum Parsed {
    Verify(verify::Options),
    Bench(bench::Opts),
    ExhaustiveFp8(Vec<String>),
    ExhaustiveExp,
    Fuzz(fuzz::Options),
    /// Help text to print (exit 0).
    Help(String),
}

/// Parses the arguments after `cargo xtask`. `Err` carries the message, usage follows it.
fn parse(args: &[String]) -> Result<Parsed, String> {
    let Some((command, rest)) = args.split_first() else {
        return Err("xtask: no command given".to_owned());
    };
    // What each option parser returns for -h/--help: this command's help.
    let help = || Parsed::Help(command_help(command).unwrap_or_else(usage));
    let failed = |e: String| format!("xtask {command}: {e}");
    Ok(match command.as_str() {
        "verify" => verify::Options::parse(rest).map_err(failed)?.map_or_else(help, Parsed::Verify),
        "bench" => bench::Opts::parse(rest).map_err(failed)?.map_or_else(help, Parsed::Bench),
        "exhaustive-fp8" => exhaustive::parse(rest).map_err(failed)?.map_or_else(help, Parsed::ExhaustiveFp8),
        "exhaustive-exp" => match rest {
            [] => Parsed::ExhaustiveExp,
            [one] if one == "--help" || one == "-h" => help(),
            _ => return Err(failed(format!("unexpected argument `{}`", rest.join(" ")))),
        },
        "fuzz" => fuzz::parse(rest).map_err(failed)?.map_or_else(help, Parsed::Fuzz),
        "help" | "--help" | "-h" => match rest {
            [] => Parsed::Help(usage()),
            [one] if one == "--help" || one == "-h" => help(),
            [one] => {
                Parsed::Help(command_help(one).ok_or_else(|| failed(format!("unknown command `{one}`")))?)
            }
            _ => return Err(failed("expected at most one command name".to_owned())),
        },
        other => return Err(format!("xtask: unknown command `{other}`")),
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match parse(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    match parsed {
        Parsed::Verify(opts) => verify::run(&opts),
        Parsed::Bench(opts) => match bench::run(opts) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask bench: {e}");
                ExitCode::from(2)
            }
        },
        Parsed::ExhaustiveFp8(formats) => {
            if exhaustive::run(&formats) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Parsed::ExhaustiveExp => {
            if exhaustive::exp() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Parsed::Fuzz(opts) => fuzz::run(&opts),
        Parsed::Help(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    /// `cargo xtask <command> -h` / `--help`, alone or after a valid option, is that command's
    /// help (its synopsis line, then the description), for every command.
    #[test]
    fn every_command_takes_help() {
        // An option each command accepts, to show help wins wherever it comes.
        let valid = |name: &str| match name {
            "verify" => vec!["--list"],
            "bench" => vec!["--quick"],
            "exhaustive-fp8" => vec!["float8e5"],
            "fuzz" => vec!["--ci"],
            _ => vec![],
        };
        for (name, text) in COMMANDS {
            let synopsis = text.lines().next().unwrap();
            for flag in ["--help", "-h"] {
                for before in [vec![], valid(name)] {
                    let line: Vec<&str> = [name].into_iter().chain(before).chain([flag]).collect();
                    let Ok(Parsed::Help(help)) = parse(&args(&line)) else {
                        panic!("`cargo xtask {}` is not help", line.join(" "));
                    };
                    assert_eq!(help.lines().next(), Some(format!("usage: cargo xtask {synopsis}").as_str()));
                    assert!(help.lines().count() >= 3, "{help}");
                }
            }
        }
    }

    /// `help`, `--help` and `-h` alone print every command; `help COMMAND` one.
    #[test]
    fn help_command() {
        for a in [&["help"][..], &["--help"], &["-h"]] {
            let Ok(Parsed::Help(text)) = parse(&args(a)) else { panic!("{a:?}") };
            for (name, _) in COMMANDS {
                assert!(text.contains(&format!("\n  {name}")), "{a:?} lacks {name}");
            }
        }
        let Ok(Parsed::Help(text)) = parse(&args(&["help", "fuzz"])) else { panic!() };
        assert!(text.starts_with("usage: cargo xtask fuzz "), "{text}");
        assert!(parse(&args(&["help", "nope"])).is_err());
    }

    /// Unknown commands and options are still errors (exit 2 with usage), and real options
    /// still parse.
    #[test]
    fn other_arguments_still_parse() {
        assert!(parse(&[]).is_err());
        assert!(parse(&args(&["nope"])).is_err());
        for name in ["verify", "bench", "exhaustive-fp8", "exhaustive-exp", "fuzz"] {
            let e = parse(&args(&[name, "--nope"])).err().unwrap_or_default();
            assert!(e.contains("--nope"), "{name}: {e}");
        }
        assert!(matches!(parse(&args(&["verify", "--jobs", "2", "--list"])), Ok(Parsed::Verify(_))));
        assert!(matches!(parse(&args(&["bench", "--quick", "e2e"])), Ok(Parsed::Bench(_))));
        assert!(matches!(
            parse(&args(&["exhaustive-fp8", "float8e5"])),
            Ok(Parsed::ExhaustiveFp8(f)) if f == ["float8e5"]
        ));
        assert!(matches!(parse(&args(&["fuzz", "isa_decode", "--seconds", "5"])), Ok(Parsed::Fuzz(_))));
    }
}
