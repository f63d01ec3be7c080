//! Activation rows (issue #28): one Activation Exp over a 128 × 65536 fp32 SB tile against a C
//! loop doing the same f64-then-round with the same libm (`(float)exp((double)x)`, the libm
//! crate's exp ported to C; glibc's beside it) and against NumPy's
//! `np.exp(x.astype(np.float64)).astype(np.float32)`; Gelu and Silu beside it (their C twins, no
//! target); and the Exp at 2 threads against 1. Every row reads the same values: uniform in
//! [-80, 80) (every exp a normal fp32), a SplitMix64 stream from one seed, written once to a raw
//! file the C loops and NumPy read.
//!
//! The program Loads the input into an SB tile, then runs the Activation twice from it into a
//! second tile; the rows time the second (its output tile written before, as every Activation of
//! a running kernel but its first), by the simulator's own per-instruction clock, as the Matmult
//! rows do. The first, into a fresh tile, is printed beside it.

use super::kernels::{at, instruction_times};
use super::matmul::run_once;
use super::program::{self, Prog, tile};
use super::{Ctx, Goal, ms, note, peers, row, time};
use bir_ir::ActivationFunctionType;
use simulator::npy::Npy;
use std::collections::HashMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

const PARTS: u64 = 128;
const FREE: u64 = 65536;
/// The seed of every row's data.
const SEED: u64 = 28;

/// (Activation func, row, the C loop's key, the C baseline's name) for the rows without a target.
const OTHERS: [(&str, &str, &str, &str); 2] = [
    ("Gelu", "activation gelu fp32 128x65536", "gelu", "C loop (glibc erf)"),
    ("Silu", "activation silu fp32 128x65536", "silu", "C loop (glibc exp)"),
];

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    let exp = "activation exp fp32 128x65536";
    let numpy = format!("{exp} vs NumPy");
    let threads = format!("{exp}, 2 threads");
    let c_rows = o.want(exp) || OTHERS.iter().any(|r| o.want(r.1));
    if !(c_rows || o.want(&numpy) || o.want(&threads)) {
        return;
    }
    let (x, file) = input(ctx);
    let inputs = [("x", &x)];
    let reps = o.reps();
    let c = match &file {
        Ok(f) if c_rows => {
            let args = [f.display().to_string(), reps.to_string(), ctx.dir.display().to_string()];
            peers::run_c(&ctx.c, "activation", &args)
        }
        Ok(_) => Err("not wanted".to_owned()),
        Err(e) => Err(e.clone()),
    };
    let text = program("Exp");
    // The Exp program's Activations (the first, the second) at every core.
    let (first, again) = if o.want(exp) || o.want(&numpy) {
        let t = instruction_times(&text, &inputs, reps, None);
        (at(&t, 1), at(&t, 2))
    } else {
        (Err(String::new()), Err(String::new()))
    };
    if o.want(exp) {
        exp_row(ctx, exp, &text, &x, &c, &again, &first);
    }
    if o.want(&numpy) {
        let peer = match &file {
            Ok(f) => peers::py_kernels_on(&ctx.python, reps, &["exp-f64"], Some(f)),
            Err(e) => Err(e.clone()),
        };
        row(&numpy, again.clone(), "NumPy f64 exp", peers::pick(&peer, "exp-f64"), Goal::Faster(2.0));
        note("np.exp(x.astype(np.float64)).astype(np.float32), allocating its arrays as NumPy code does");
    }
    for (func, name, key, base) in OTHERS {
        if o.want(name) {
            let t = instruction_times(&program(func), &inputs, reps, None);
            row(name, at(&t, 2), base, peers::pick(&c, key), Goal::Info);
        }
    }
    if o.want(&threads) {
        let one = instruction_times(&text, &inputs, reps, Some(1));
        let two = instruction_times(&text, &inputs, reps, Some(2));
        row(&threads, at(&two, 2), "1 thread", at(&one, 2), Goal::Faster(1.8));
        note("the second Activation (its output tile written before) at 2 threads against 1");
        if let (Ok(o), Ok(t)) = (at(&one, 1), at(&two, 1)) {
            note(&format!(
                "the first write, into a fresh tile: 1 thread {o:.2} ms, 2 threads {t:.2} ms ({:.2}x)",
                o / t
            ));
        }
        // Where the function dominates the memory traffic, for comparison.
        let gelu = program("Gelu");
        let (one, two) = (
            instruction_times(&gelu, &inputs, reps, Some(1)),
            instruction_times(&gelu, &inputs, reps, Some(2)),
        );
        if let (Ok(o), Ok(t)) = (at(&one, 2), at(&two, 2)) {
            note(&format!(
                "the same for Gelu (its function costlier than its memory traffic): 1 thread {o:.2} ms, 2 threads {t:.2} ms ({:.2}x)",
                o / t
            ));
        }
    }
}

/// Row 1: the Exp against the C loop running the libm crate's exp in C, the C loop with glibc's exp
/// in C beside it, both into fresh memory, and whether the results have the same bits.
fn exp_row(
    ctx: &Ctx,
    name: &str,
    text: &str,
    x: &Npy,
    c: &Result<HashMap<String, f64>, String>,
    ours: &Result<f64, String>,
    first: &Result<f64, String>,
) {
    // The baseline: the same f64-then-round with the same libm, i.e. the libm crate's
    // exp (what birsim calls) compiled from C; glibc's exp beside it.
    row(
        name,
        ours.clone(),
        "C loop (the libm crate's exp in C)",
        peers::pick(c, "musl_exp"),
        Goal::Within(1.5),
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    note(&format!(
        "an Activation of a running kernel (its output tile written before), every core ({cores}); the C loop: \
         one thread, into a reused result"
    ));
    note(
        "birsim calls the pure-Rust `libm` crate's exp (musl 1.1's, from FreeBSD's e_exp.c); the C loop runs the \
         same algorithm ported to C (xtask/bench/c/activation.c), out of line",
    );
    if let (Ok(o), Ok(g)) = (ours, peers::pick(c, "exp")) {
        note(&format!("the C loop calling glibc's exp: {g:.2} ms (birsim {:.2}x its time)", o / g));
    }
    if let Ok(o) = ours {
        let k = ms(kernel(x, ctx.opts.reps()));
        note(&format!(
            "the exp loop alone (numerics::activation::apply, one thread, over a warm copy of the values, the \
             copy included): {k:.2} ms (birsim's instruction {:.2}x its time)",
            o / k
        ));
    }
    if let (Ok(a), Ok(b)) = (first, peers::pick(c, "exp_cold")) {
        note(&format!(
            "into fresh memory: a fresh simulator's first Activation {a:.2} ms, the C loop into a fresh mapping \
             {b:.2} ms ({:.2}x)",
            a / b
        ));
    }
    if c.is_err() {
        return;
    }
    let same = match run_once(text, &[("x", x)], "ys") {
        Ok(ys) => ["musl_exp", "exp"]
            .map(|k| {
                let what = if k == "exp" { "glibc's" } else { "the libm crate's in C" };
                match std::fs::read(ctx.dir.join(format!("{k}.bin"))) {
                    Ok(b) if b.len() == ys.len() => {
                        let differ =
                            b.chunks_exact(4).zip(ys.chunks_exact(4)).filter(|(p, q)| p != q).count();
                        format!("{what}: {differ} elements differ")
                    }
                    Ok(_) => format!("{what}: a different length"),
                    Err(e) => format!("{what}: not read ({e})"),
                }
            })
            .join("; "),
        Err(e) => format!("birsim: {e}"),
    };
    note(&format!("birsim's tile against the C loops' results: {same}"));
}

/// The median time of `numerics::activation::apply`'s Exp over `x`'s values, refreshed from a
/// warm copy each rep (the simulator's kernel without its operand reads, affine passes and write).
fn kernel(x: &Npy, reps: usize) -> Duration {
    let vals: Vec<f32> =
        x.data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let mut buf = vals.clone();
    time(reps, || {
        buf.copy_from_slice(&vals);
        let _ = numerics::activation::apply(ActivationFunctionType::Exp, &mut buf, 0.0);
        black_box(&buf);
    })
}

/// Activation `func` twice from a loaded SB tile into a second one: Load, `first`, `again`.
fn program(func: &str) -> String {
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("xs", dt, PARTS, FREE);
    p.sb("ys", dt, PARTS, FREE);
    p.push(program::copy("Load", "ld", &tile("x", dt, 0, PARTS, FREE), &tile("xs", dt, 0, PARTS, FREE)));
    for name in ["first", "again"] {
        p.push(program::activation(
            name,
            func,
            &tile("xs", dt, 0, PARTS, FREE),
            &tile("ys", dt, 0, PARTS, FREE),
        ));
    }
    p.text()
}

/// The rows' input as birsim loads it, and the same values as a raw file for the peers.
fn input(ctx: &Ctx) -> (Npy, Result<PathBuf, String>) {
    program::uniform_input(&ctx.dir, "activation-x.f32", SEED, (PARTS, FREE), (-80.0, 80.0))
}
