//! Vector rows (issue #29): one BNStats and one Max (max8) over a 128 × 16384 fp32 SB tile
//! against NumPy's same computation on the same values: per 512-element chunk the count, mean
//! and variance × count of the even- and odd-indexed elements; each row's eight largest values,
//! descending. The values are uniform in [-100, 100) from a SplitMix64 stream, written once to a
//! raw file NumPy reads.
//!
//! The program Loads the input into an SB tile, then runs each instruction twice; the rows time
//! the second (its output written before, as in a running kernel), by the simulator's own
//! per-instruction clock, as the activation rows do.

use super::kernels::{at, instruction_times};
use super::program::{self, Prog, tile};
use super::{Ctx, Goal, note, peers, row};
use simulator::npy::Npy;
use std::path::PathBuf;

const PARTS: u64 = 128;
const FREE: u64 = 16384;
/// BNStats writes six values per 512-element chunk.
const STATS: u64 = 6 * FREE / 512;
/// The seed of the rows' data.
const SEED: u64 = 29;

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    let stats = "bn_stats fp32 128x16384 vs NumPy";
    let max8 = "max8 fp32 128x16384 vs NumPy";
    if !(o.want(stats) || o.want(max8)) {
        return;
    }
    let (x, file) = input(ctx);
    let reps = o.reps();
    let t = instruction_times(&program(), &[("x", &x)], reps, None);
    let peer = match &file {
        Ok(f) => peers::py_kernels_on(&ctx.python, reps, &["bn-stats", "max8"], Some(f)),
        Err(e) => Err(e.clone()),
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if o.want(stats) {
        row(stats, at(&t, 2), "NumPy", peers::pick(&peer, "bn-stats"), Goal::Faster(2.0));
        note(&format!(
            "the second BNStats (its output written before), every core ({cores}); NumPy: mean and \
             ((x - mean)**2).sum of x[..., ::2] and x[..., 1::2] over x.reshape(128, 32, 512), stacked"
        ));
    }
    if o.want(max8) {
        row(max8, at(&t, 4), "NumPy", peers::pick(&peer, "max8"), Goal::Faster(2.0));
        note(&format!(
            "the second Max, every core ({cores}); NumPy: np.sort(np.partition(x, -8, axis=1)[:, -8:], \
             axis=1)[:, ::-1]"
        ));
    }
}

/// Load; BNStats twice; Max twice (instructions 1..=4 after the Load at 0).
fn program() -> String {
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("xs", dt, PARTS, FREE);
    p.sb("st", dt, PARTS, STATS);
    p.sb("m8", dt, PARTS, 8);
    let xs = tile("xs", dt, 0, PARTS, FREE);
    p.push(program::copy("Load", "ld", &tile("x", dt, 0, PARTS, FREE), &xs));
    for (op, out, name) in [("BNStats", "st", "stats"), ("Max", "m8", "max8")] {
        let free = if out == "st" { STATS } else { 8 };
        for k in ["first", "again"] {
            p.push(program::inst(op, &format!("{name}_{k}"), &xs, &tile(out, dt, 0, PARTS, free)));
        }
    }
    p.text()
}

/// The rows' input as birsim loads it, and the same values as a raw file for the peers.
fn input(ctx: &Ctx) -> (Npy, Result<PathBuf, String>) {
    program::uniform_input(&ctx.dir, "vector-x.f32", SEED, (PARTS, FREE), (-100.0, 100.0))
}
