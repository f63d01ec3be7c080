//! `Simulator::set_progress`: the callback sees increasing counts of executed instructions out
//! of the total the run executes (loop iterations counted), and a last call with the final
//! count; `birsim run` draws a progress bar only on a terminal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use bir_ir::{ValidateOptions, json, validate};
use numerics::Profile;
use simulator::{Options, Outcome, Simulator};
use std::cell::RefCell;
use std::time::Duration;

/// One NoOp, then a loop of 1000 trips over two NoOps: 1 + 1000 × 2 = 2001 instructions.
const PROGRAM: &str = r#"{"functions":[{"name":"f","allocations":[],"blocks":[{"name":"b","instructions":[
  {"opcode":"NoOp","name":"n0","ins":[],"outs":[]},
  {"opcode":"Loop","name":"l","LoopAxis":{"name":"i","lb":0,"ub":1000},"blocks":[{"name":"b1","instructions":[
    {"opcode":"NoOp","name":"n1","ins":[],"outs":[]},
    {"opcode":"NoOp","name":"n2","ins":[],"outs":[]}]}]}]}]}]}"#;
const TOTAL: u64 = 2001;

/// Runs PROGRAM with a progress callback (interval `every`, unless None: the default) and
/// `max_instructions`; returns the outcome and every (executed, total) call.
fn run(every: Option<Duration>, max_instructions: u64) -> (Outcome, Vec<(u64, u64)>) {
    let p = json::load_str(PROGRAM).unwrap();
    let v = validate(&p, &ValidateOptions::default()).unwrap();
    let calls = RefCell::new(Vec::new());
    let outcome = {
        let mut sim = Simulator::new(v, Profile::refsim());
        sim.set_options(Options { max_instructions, ..Options::default() });
        sim.set_progress(|done, total| calls.borrow_mut().push((done, total)));
        if let Some(d) = every {
            sim.set_progress_interval(d);
        }
        sim.run().unwrap()
    };
    (outcome, calls.into_inner())
}

fn assert_increasing(calls: &[(u64, u64)]) {
    assert!(calls.windows(2).all(|w| w[0].0 < w[1].0), "counts not increasing: {calls:?}");
    assert!(calls.iter().all(|&(_, total)| total == TOTAL), "{calls:?}");
}

#[test]
fn every_instruction_is_reported_with_a_zero_interval() {
    let (outcome, calls) = run(Some(Duration::ZERO), u64::MAX);
    assert_eq!(outcome, Outcome::Finished);
    let want: Vec<(u64, u64)> = (1..=TOTAL).map(|k| (k, TOTAL)).collect();
    assert_eq!(calls, want);
}

#[test]
fn the_default_interval_ends_with_executed_equal_to_total() {
    let (outcome, calls) = run(None, u64::MAX);
    assert_eq!(outcome, Outcome::Finished);
    assert_increasing(&calls);
    assert_eq!(calls.last(), Some(&(TOTAL, TOTAL)));
}

/// A run stopped by its instruction budget after 10 instructions ends on 10 of 2001.
#[test]
fn a_faulted_run_ends_on_its_last_count() {
    let (outcome, calls) = run(Some(Duration::from_secs(3600)), 10);
    assert!(matches!(outcome, Outcome::Faulted(_)), "{outcome:?}");
    assert_eq!(calls, [(10, TOTAL)]);
}

/// Piped stderr (not a terminal): a run past the bar's delay (set to 0 ms by the debug-build
/// switch) prints exactly the one `ok` line, no bar. Under a pseudo-terminal (`script`, when
/// the machine has it) the same run draws the bar.
#[test]
fn birsim_run_draws_no_bar_when_stderr_is_not_a_terminal() {
    let d = common::scratch();
    let p = d.join("p.json");
    std::fs::write(&p, PROGRAM).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_birsim"))
        .args(["run", &common::s(&p)])
        .env("BIRSIM_TEST_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "birsim: ok: 2001 instruction(s) executed, 0 output(s) written\n"
    );
    assert!(out.stdout.is_empty());
    let cmd = format!("{} run {}", env!("CARGO_BIN_EXE_birsim"), common::s(&p));
    // The test switch exists in debug builds only; a release build shows the bar after 2 s.
    if cfg!(debug_assertions)
        && let Ok(tty) = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("BIRSIM_TEST_PROGRESS_AFTER_MS", "0")
            .output()
    {
        let text = String::from_utf8_lossy(&tty.stdout);
        assert!(text.contains("instructions"), "no progress bar on a terminal:\n{text:?}");
    }
}
