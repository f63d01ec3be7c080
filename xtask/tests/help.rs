//! `cargo xtask <command> --help` and `-h` print that command's usage on stdout and exit 0,
//! for every command `cargo xtask help` lists (run as the built binary, so the exit status and
//! streams are the real ones).

#![expect(clippy::unwrap_used, reason = "test code")]

use std::process::Command;

fn xtask(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask")).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[test]
fn every_command_prints_its_help_and_exits_0() {
    let (code, usage, _) = xtask(&["help"]);
    assert_eq!(code, 0);
    // The command lines: two spaces, then the name.
    let commands: Vec<&str> = usage
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for expected in ["verify", "bench", "exhaustive-fp8", "fuzz", "help"] {
        assert!(commands.contains(&expected), "`cargo xtask help` lacks {expected}:\n{usage}");
    }
    for command in commands {
        for flag in ["--help", "-h"] {
            let (code, out, err) = xtask(&[command, flag]);
            assert_eq!((code, err.as_str()), (0, ""), "cargo xtask {command} {flag}");
            assert!(
                out.starts_with(&format!("usage: cargo xtask {command}")),
                "cargo xtask {command} {flag}:\n{out}"
            );
        }
    }
}

#[test]
fn unknown_options_still_fail_with_usage() {
    for command in ["verify", "bench", "exhaustive-fp8", "fuzz"] {
        let (code, out, err) = xtask(&[command, "--no-such-option"]);
        assert_eq!((code, out.as_str()), (2, ""), "cargo xtask {command} --no-such-option");
        assert!(err.contains("--no-such-option") && err.contains("usage: cargo xtask"), "{err}");
    }
    let (code, _, err) = xtask(&[]);
    assert_eq!(code, 2);
    assert!(err.contains("usage: cargo xtask"), "{err}");
}

/// Without cargo (so without nightly or cargo-fuzz) `fuzz` fails, saying why and how to skip;
/// `--skip-missing` prints SKIPPED and succeeds (issue #26 item 5: CI must fuzz or fail).
#[test]
fn fuzz_without_cargo_fuzz_fails_unless_told_to_skip() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask")).args(args).env("PATH", "").output().unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
    };
    let (code, _, err) = run(&["fuzz", "--seconds", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot fuzz") && err.contains("--skip-missing"), "{err}");
    let (code, out, _) = run(&["fuzz", "--seconds", "1", "--skip-missing"]);
    assert_eq!(code, 0);
    assert!(out.contains("SKIPPED"), "{out}");
}
