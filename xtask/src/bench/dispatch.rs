//! The per-instruction cost of a trivial instruction (issue 26): a loop of NoOps run in process,
//! against `xtask/bench/c/dispatch.c`, the floor of a tree-walking interpreter (a budget check,
//! an indirect call through an opcode table and a count per instruction) timed in the same run.
//! A NoOp does nothing, so the row measures what the simulator spends around every instruction:
//! what bounds the instruction budget's wall time (`--max-instructions`, 10^9 by default).
//!
//! The register-loop row (issue #30) runs a loop of 100,000 iterations made of register
//! instructions and a branch — `n -= 1; acc += n; if n > 0 goto loop` — through the whole
//! simulator, and reports executed instructions per second against the issue's floor of
//! 2 × 10^6 per second (an absolute rate: the C dispatch loop of the row above is its context).

use super::{Ctx, Goal, fact, kernels, note, peers, row};

/// A program of one loop of `trips` NoOps.
fn noop_loop(trips: u64) -> String {
    format!(
        r#"{{"functions":[{{"name":"f","allocations":[],"blocks":[{{"name":"b","instructions":[
          {{"opcode":"Loop","name":"l","LoopAxis":{{"name":"i","lb":0,"ub":{trips}}},
           "blocks":[{{"name":"b1","instructions":[{{"opcode":"NoOp","name":"n","ins":[],"outs":[]}}]}}]}}]}}]}}]}}"#
    )
}

pub fn run(ctx: &Ctx) {
    let name = "noop-loop (per-instruction cost)";
    if !ctx.opts.want(name) {
        return;
    }
    let trips: u64 = if ctx.opts.quick { 1_000_000 } else { 10_000_000 };
    let reps = ctx.opts.reps();
    let ours = kernels::time_sim(&noop_loop(trips), &[], reps);
    let c = peers::run_c(&ctx.c, "dispatch", &[trips.to_string(), reps.to_string()]);
    let base = peers::pick(&c, "noop");
    row(name, ours.clone(), "C dispatch loop", base.clone(), Goal::Within(15.0));
    if let (Ok(o), Ok(b)) = (ours, base) {
        let per = |ms: f64| ms * 1e6 / trips as f64;
        note(&format!(
            "{trips} NoOps: {:.1} ns per instruction (C floor {:.1} ns); the default budget of 10^9 \
             instructions is {:.0} s of NoOps",
            per(o),
            per(b),
            per(o)
        ));
    }
}

/// A program whose block `loop` runs `iterations` times: `n -= 1; acc += n; if n > 0 goto
/// loop` on the Pool engine's registers (3 instructions per iteration, 2 before).
fn register_loop(iterations: u64) -> String {
    let reg = |n: &str| format!(r#"{{"kind":"register_access","dtype":"int32","regref":"{n}"}}"#);
    let imm = |v: u64| format!(r#"{{"kind":"imm_value","dtype":"int32","value":{v}}}"#);
    let (n, acc) = (reg("n"), reg("acc"));
    format!(
        r#"{{"functions":[{{"name":"f","allocations":[],"blocks":[
          {{"name":"pre","instructions":[
            {{"opcode":"RegisterMove","name":"init_n","engine":"Pool","ins":[{}],"outs":[{n}]}},
            {{"opcode":"RegisterMove","name":"init_acc","engine":"Pool","ins":[{}],"outs":[{acc}]}}]}},
          {{"name":"loop","instructions":[
            {{"opcode":"RegisterAlu","name":"dec","engine":"Pool","op":"subtract","ins":[{n},{}],"outs":[{n}]}},
            {{"opcode":"RegisterAlu","name":"sum","engine":"Pool","op":"add","ins":[{acc},{n}],"outs":[{acc}]}},
            {{"opcode":"CompareAndBranch","name":"again","engine":"Pool","comp_op":"IS_GTIMM","on_true":"loop","ins":[{n},{}],"outs":[]}}]}}]}}]}}"#,
        imm(iterations),
        imm(0),
        imm(1),
        imm(0),
    )
}

/// The register-loop row (module doc).
pub fn run_register_loop(ctx: &Ctx) {
    let name = "register loop, 100k iterations (instructions/s)";
    if !ctx.opts.want(name) {
        return;
    }
    let iterations: u64 = 100_000;
    let executed = 3 * iterations + 2;
    match kernels::time_sim(&register_loop(iterations), &[], ctx.opts.reps()) {
        Ok(ms) => {
            let rate = executed as f64 / (ms / 1e3);
            fact(
                name,
                &format!("{ms:.2} ms"),
                "-",
                &format!("{:.2}e6/s", rate / 1e6),
                "rate >= 2e6 instructions/s",
                Some(rate >= 2e6),
            );
            note(&format!(
                "{executed} instructions (RegisterAlu x2 + CompareAndBranch per iteration): {:.0} ns each",
                ms * 1e6 / executed as f64
            ));
        }
        Err(e) => {
            fact(name, "-", "-", "-", "rate >= 2e6 instructions/s", None);
            note(&format!("FAILED: {e}"));
        }
    }
}
