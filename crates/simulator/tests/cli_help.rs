//! The `birsim` command line as clap builds it: `--help` of birsim and of every subcommand
//! compared with the committed snapshots in `tests/snapshots/help*.txt` (written once from the
//! program and then read and checked by hand against it; a changed help text means editing the
//! snapshot deliberately, there is no update switch), `help SUB`, `--version`, the shell
//! completion scripts, and the exit codes of clap's own usage errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::path::PathBuf;
use std::process::Command;

/// Runs birsim at a fixed help width (COLUMNS, read by clap when the output is not a
/// terminal) so the wrapping of help texts does not depend on the machine; returns (exit code,
/// stdout, stderr).
fn birsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_birsim")).args(args).env("COLUMNS", "100").output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn snapshot(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name)
}

/// The subcommand names a help text lists under `Commands:` (clap's own `help` left out).
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_owned)
        .collect()
}

/// `birsim PATH… --help` against `help_PATH.txt`, then every subcommand it lists, recursively:
/// a new subcommand without a snapshot fails here. Returns the paths visited.
fn check_help(path: &[String], visited: &mut Vec<Vec<String>>, failures: &mut Vec<String>) {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let (code, out, err) = birsim(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(err.is_empty(), "{args:?} printed on stderr: {err}");
    // Clap indents the blank lines inside a long help; the snapshots hold no trailing blanks.
    let out: String = out.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    let file =
        std::iter::once("help").chain(args[..args.len() - 1].iter().copied()).collect::<Vec<_>>().join("_");
    let file = format!("{file}.txt");
    match std::fs::read_to_string(snapshot(&file)) {
        Ok(want) if want == out => {}
        Ok(want) => {
            let first = want.lines().zip(out.lines()).position(|(a, b)| a != b);
            failures.push(format!(
                "{args:?} differs from tests/snapshots/{file} (first at line {}):\n{out}",
                first.map_or_else(|| "the end".to_owned(), |k| (k + 1).to_string())
            ));
        }
        Err(_) => failures.push(format!("tests/snapshots/{file} is missing; {args:?} prints:\n{out}")),
    }
    visited.push(path.to_vec());
    for c in commands(&out) {
        let mut sub = path.to_vec();
        sub.push(c);
        check_help(&sub, visited, failures);
    }
}

#[test]
fn help_of_every_subcommand_matches_its_snapshot() {
    let (mut visited, mut failures) = (Vec::new(), Vec::new());
    check_help(&[], &mut visited, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The walk reached every subcommand there is today (and so cannot pass by finding none).
    let names: Vec<String> = visited.iter().map(|p| p.join(" ")).collect();
    for want in [
        "",
        "run",
        "validate",
        "dump",
        "dge",
        "diff",
        "check",
        "ops",
        "isa",
        "isa decode",
        "isa encode",
        "isa validate",
        "isa run",
        "completions",
    ] {
        assert!(names.iter().any(|n| n == want), "no help checked for `birsim {want}`: {names:?}");
    }
    // Every snapshot file is some subcommand's (none left over from a removed one).
    for e in std::fs::read_dir(snapshot("")).unwrap() {
        let f = e.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = f.strip_prefix("help").and_then(|s| s.strip_suffix(".txt")) {
            let path = stem.trim_start_matches('_').replace('_', " ");
            assert!(names.contains(&path), "tests/snapshots/{f} belongs to no subcommand");
        }
    }
}

/// `birsim help SUB` prints what `birsim SUB --help` does; `-h` the short form.
#[test]
fn help_subcommand_and_short_help() {
    for sub in [&["run"][..], &["isa", "run"], &["dge"]] {
        let mut help = vec!["help"];
        help.extend_from_slice(sub);
        let (code, out, _) = birsim(&help);
        assert_eq!(code, 0);
        let mut flag = sub.to_vec();
        flag.push("--help");
        assert_eq!(out, birsim(&flag).1, "{help:?}");
    }
    let (code, short, _) = birsim(&["run", "-h"]);
    assert_eq!(code, 0);
    assert!(short.contains("Usage: birsim run [OPTIONS] <PROGRAM.json>"), "{short}");
    assert!(!short.contains("Possible values:"), "-h is the summary:\n{short}");
}

#[test]
fn version_is_the_crate_version() {
    for flag in ["--version", "-V"] {
        let (code, out, err) = birsim(&[flag]);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "birsim 0.1.0\n", ""), "{flag}");
    }
    assert_eq!(env!("CARGO_PKG_VERSION"), "0.1.0", "update the expected version above");
}

/// The completion scripts name every subcommand (bash: its `case` arms) and the run flags.
#[test]
fn completions_name_every_subcommand() {
    let (code, bash, err) = birsim(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(bash.contains("complete -F _birsim"), "{bash}");
    for sub in ["run", "validate", "dump", "dge", "diff", "check", "ops", "isa", "completions"] {
        assert!(bash.contains(&format!("birsim,{sub})")), "bash completion lacks `{sub}`");
    }
    for sub in ["decode", "encode", "validate", "run"] {
        assert!(bash.contains(&format!("birsim__subcmd__isa,{sub})")), "bash completion lacks `isa {sub}`");
    }
    for flag in
        ["--input", "--dma-block-in-stream", "--max-instructions", "--gen", "--expect", "--trace-data"]
    {
        assert!(bash.contains(flag), "bash completion lacks {flag}");
    }
    for shell in ["zsh", "fish"] {
        let (code, script, err) = birsim(&["completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(script.contains("dma-block-in-stream") && script.contains("validate"), "{shell}:\n{script}");
    }
    let (code, _, err) = birsim(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}

/// Clap's own errors follow the README's codes: usage errors are exit 2 with a message naming
/// the culprit, on stderr and nothing on stdout; help and version are exit 0.
#[test]
fn usage_errors_exit_2_naming_the_flag() {
    for (args, message) in [
        (&["run", "p.json", "--frobnicate"][..], "unexpected argument '--frobnicate' found"),
        (&["validate", "p.json", "--stats"], "unexpected argument '--stats' found"),
        (&["isa", "decode", "w.bin", "--gen", "v2"], "unexpected argument '--gen' found"),
        (&["run", "p.json", "--threads"], "a value is required for '--threads <N>'"),
        (&["run", "p.json", "--threads", "0"], "invalid value '0' for '--threads <N>'"),
        (&["isa", "run", "w.bin", "--out-dir", "d"], "--state <STATE.json>"),
        (&["isa"], "Usage: birsim isa <COMMAND>"),
        (&[], "Usage: birsim <COMMAND>"),
    ] {
        let (code, out, err) = birsim(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?} should say {message:?}:\n{err}");
        assert!(out.is_empty(), "{args:?} printed on stdout: {out}");
    }
    let (code, out, _) = birsim(&["help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Commands:"), "{out}");
}

/// BIRSIM_THREADS stands in for --threads (checked like it), and --threads wins over it.
#[test]
fn birsim_threads_environment_variable() {
    let ex = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/sub_one");
    let prog = ex.join("program.json").to_str().unwrap().to_owned();
    let input = format!("a={}", ex.join("a.npy").to_str().unwrap());
    let run = |threads: &[&str], env: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_birsim"))
            .args(["run", &prog, "--input", &input])
            .args(threads)
            .env("BIRSIM_THREADS", env)
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = run(&[], "0");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("BIRSIM_THREADS 0: expected a number of threads (1 or more)"), "{err}");
    let (code, err) = run(&["--threads", "2"], "0");
    assert_eq!(code, 0, "{err}");
    let (code, err) = run(&[], "3");
    assert_eq!(code, 0, "{err}");
}

/// Every simulator option (`simulator::Options::NAMES`) is a `birsim run` flag: its name with
/// dashes, listing the table's words with their help, refusing a bad value with the table's
/// text (the one parser the Python package and the conformance cases use too).
#[test]
fn every_simulator_option_is_a_run_flag_spelled_from_the_table() {
    let (code, help, err) = birsim(&["run", "--help"]);
    assert_eq!(code, 0, "{err}");
    for spec in simulator::Options::NAMES {
        let flag = format!("--{}", spec.name.replace('_', "-"));
        assert!(help.contains(&format!("      {flag} <")), "birsim run has no {flag}");
        if let simulator::OptionValues::Words(words) = spec.values {
            for w in words {
                assert!(
                    help.contains(&format!("- {}:", w.word)) && help.contains(w.help),
                    "{flag} {}",
                    w.word
                );
            }
        }
        let (code, out, err) = birsim(&["run", "p.json", &flag, "bogus"]);
        assert_eq!(code, 2, "{flag}: {err}");
        let want = format!("invalid value 'bogus' for '{flag} <");
        assert!(err.contains(&want) && err.contains(&format!(">': expected {}\n", spec.expected())), "{err}");
        assert!(out.is_empty());
    }
}

/// The README's command list names every subcommand `birsim --help` lists (issue #26 item 1).
#[test]
fn readme_names_every_command() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let start = readme.find("- Commands: ").expect("the README's `- Commands:` list");
    let list = &readme[start..start + readme[start..].find(".\n").unwrap()];
    let (code, help, _) = birsim(&["--help"]);
    assert_eq!(code, 0);
    for c in commands(&help) {
        assert!(
            list.contains(&format!("`{c}`")) || list.contains(&format!("`{c} ")),
            "README lacks `{c}`: {list}"
        );
    }
}
