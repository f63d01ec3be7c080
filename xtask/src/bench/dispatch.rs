//! The per-instruction cost of a trivial instruction (issue 26): a loop of NoOps run in process,
//! against `xtask/bench/c/dispatch.c`, the floor of a tree-walking interpreter (a budget check,
//! an indirect call through an opcode table and a count per instruction) timed in the same run.
//! A NoOp does nothing, so the row measures what the simulator spends around every instruction:
//! what bounds the instruction budget's wall time (`--max-instructions`, 10^9 by default).

use super::{Ctx, Goal, kernels, note, peers, row};

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
