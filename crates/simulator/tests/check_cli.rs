//! `birsim check` and `birsim ops`, run as a user would: the three fixed programs of
//! tests/data/check/ print their committed snapshots (tests/snapshots/check_*.txt, read by
//! hand) with exit 0 / 1 / 1, `--json` carries the same verdict, bad input is exit 2, and
//! `ops --json` starts with the committed head.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::{birsim, s, scratch};
use rstest::rstest;
use std::path::PathBuf;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn snapshot(name: &str) -> String {
    std::fs::read_to_string(crate_dir().join("tests/snapshots").join(name)).unwrap()
}

#[rstest]
#[case::supported("supported", 0, "runs")]
#[case::not_implemented("not_implemented", 1, "not_implemented")]
#[case::rejected("rejected", 1, "rejected")]
fn check_prints_the_snapshot(#[case] name: &str, #[case] code: i32, #[case] verdict: &str) {
    let program = crate_dir().join(format!("tests/data/check/check_{name}.json"));
    let (c, out, err) = birsim(&["check", &s(&program)]);
    assert_eq!(c, code, "{err}");
    assert_eq!(out, snapshot(&format!("check_{name}.txt")));
    if code == 0 {
        assert_eq!(err, "");
    } else {
        assert_eq!(err, format!("birsim: {}: {verdict}\n", program.display()));
    }
    let (c, out, _) = birsim(&["check", &s(&program), "--json"]);
    assert_eq!(c, code);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["verdict"], verdict);
}

#[test]
fn check_bad_input_is_exit_2() {
    let dir = scratch();
    let (c, out, err) = birsim(&["check", &s(&dir.join("missing.json"))]);
    assert_eq!((c, out.as_str()), (2, ""));
    assert!(err.starts_with("birsim: cannot read "), "{err}");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let (c, out, _) = birsim(&["check", &s(&bad)]);
    assert_eq!((c, out.as_str()), (2, ""));
    let (c, _, err) = birsim(&["check"]);
    assert_eq!(c, 2, "{err}");
}

#[test]
fn ops_json_starts_with_the_snapshot_head() {
    let (c, out, err) = birsim(&["ops", "--json"]);
    assert_eq!((c, err.as_str()), (0, ""));
    let head: Vec<&str> = out.lines().take(60).collect();
    assert_eq!(head.join("\n") + "\n", snapshot("ops_json_head.txt"));
    let (c, text, _) = birsim(&["ops"]);
    assert_eq!(c, 0);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let n = j["entries"].as_array().unwrap().len();
    // One header line, then one line per entry.
    assert_eq!(text.lines().count(), n + 1);
    assert!(text.starts_with(&format!("{n} combinations: ")), "{text}");
}
