//! In-process rows: one instruction (or one library kernel) at a time, against a C loop or the
//! NumPy / ml_dtypes peer measured in the same run.
//!
//! Buffers are as a fresh `birsim run` has them: every rep builds a new simulator, loads its
//! input (untimed; the input is then warm, as after reading the file) and times `run()`, whose
//! destination tile is untouched memory (first touch, the 0xFF fill included). The C baselines
//! are timed the same way ("cold": a freshly allocated destination), and the Python peers
//! allocate their results, as NumPy code does.

use super::program::{self, Prog, tile};
use super::{Ctx, Goal, ms, note, peers, row, time};
use access_pattern::{Layout, Pattern, read_to_vec};
use bir_ir::{ApPair, Dtype};
use simulator::npy::Npy;
use simulator::{Outcome, Simulator, io};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

const PARTS: u64 = 128;
const FREE: u64 = 65536;

/// Runs a program `reps` times on fresh simulators with its inputs loaded; the median of `run()`.
pub(super) fn time_sim(text: &str, inputs: &[(&str, &Npy)], reps: usize) -> Result<f64, String> {
    time_sim_on(text, inputs, reps, None)
}

/// [`time_sim`] with the kernels capped at `threads` (default: every core).
pub(super) fn time_sim_on(
    text: &str,
    inputs: &[(&str, &Npy)],
    reps: usize,
    threads: Option<usize>,
) -> Result<f64, String> {
    let times = each_rep(text, inputs, reps, threads, |sim| {
        let s = Instant::now();
        let r = sim.run();
        (r, vec![s.elapsed()])
    })?;
    times.first().copied().ok_or_else(|| "no time".to_owned())
}

/// Each instruction's median time (ms, in program order) over `reps` fresh runs at `threads`,
/// from the simulator's own per-instruction clock (`--stats`, which keeps the slowest
/// [`simulator::Stats::SLOWEST`]: a longer program is an error, not a silently short list).
pub(super) fn instruction_times(
    text: &str,
    inputs: &[(&str, &Npy)],
    reps: usize,
    threads: Option<usize>,
) -> Result<Vec<f64>, String> {
    each_rep(text, inputs, reps, threads, |sim| {
        sim.enable_stats();
        let r = sim.run();
        let mut each: Vec<(u64, Duration)> = sim
            .stats()
            .map(|s| s.slowest.iter().map(|e| (e.1, Duration::from_nanos(e.0))).collect())
            .unwrap_or_default();
        each.sort_unstable();
        (r, each.into_iter().map(|e| e.1).collect())
    })
    .and_then(|t| {
        if t.len() < simulator::Stats::SLOWEST {
            Ok(t)
        } else {
            Err(format!("more instructions than --stats keeps ({})", simulator::Stats::SLOWEST))
        }
    })
}

/// Instruction `k`'s time (program order) from [`instruction_times`].
pub(super) fn at(times: &Result<Vec<f64>, String>, k: usize) -> Result<f64, String> {
    match times {
        Ok(t) => t.get(k).copied().ok_or_else(|| format!("no time for instruction {k}")),
        Err(e) => Err(e.clone()),
    }
}

/// Runs `go` on `reps` fresh simulators (after one untimed warm-up) with the inputs loaded and
/// `threads` set; the median of each of the durations it returns, in ms.
fn each_rep(
    text: &str,
    inputs: &[(&str, &Npy)],
    reps: usize,
    threads: Option<usize>,
    go: impl Fn(&mut Simulator<'_>) -> (Result<Outcome, simulator::SimError>, Vec<Duration>),
) -> Result<Vec<f64>, String> {
    let p = bir_ir::json::load_str(text).map_err(|e| e.to_string())?;
    let f = &p.functions[0];
    let tensors = inputs
        .iter()
        .map(|(name, npy)| io::resolve(f, name).map(|t| (t, *npy)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut times: Vec<Vec<Duration>> = Vec::new();
    for k in 0..=reps.max(1) {
        let v = bir_ir::validate(&p, &Default::default()).map_err(|d| d.to_string())?;
        let mut sim = Simulator::new(v, numerics::Profile::refsim());
        if let Some(t) = threads {
            let mut o = simulator::Options::default();
            o.parallelism.threads = t;
            sim.set_options(o);
        }
        for (t, npy) in &tensors {
            io::load(&mut sim, t, npy)?;
        }
        let (r, each) = go(&mut sim);
        match r {
            Ok(Outcome::Finished) => {}
            Ok(Outcome::Faulted(f)) => return Err(format!("faulted: {f}")),
            Err(e) => return Err(e.to_string()),
        }
        if k > 0 {
            times.resize_with(each.len(), Vec::new);
            times.iter_mut().zip(each).for_each(|(t, e)| t.push(e));
        }
    }
    Ok(times.into_iter().map(|t| ms(super::median(t.into_iter()))).collect())
}

/// A `[rows, cols]` input array of `dt` holding the bench's data.
pub(super) fn npy(dt: &str, rows: u64, cols: u64) -> Npy {
    let mut data = vec![0u8; (rows * cols) as usize * program::size_of(dt)];
    program::fill(dt, 0, &mut data);
    Npy { descr: program::descr(dt).to_owned(), shape: vec![rows, cols], data }
}

fn pairs(v: &[(i64, i64)]) -> Vec<ApPair> {
    v.iter().map(|&(s, n)| ApPair::new(s, n)).collect()
}

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    // Every Python peer the wanted rows need, measured in one process.
    let mut want_py: Vec<&str> = Vec::new();
    let mut ask = |row: &str, peer: &'static str| {
        if o.want(row) {
            want_py.push(peer);
        }
    };
    ask("load-contiguous", "copy-f32-128x65536");
    for (dt, peer) in TS_CASES {
        ask(&format!("tensor-scalar {dt}"), peer);
    }
    ask("reduce-in-order", "sum-free-axis");
    for (_, key, _, _) in TRANSPOSES {
        ask("dma-transpose", key);
    }
    for c in conversions() {
        ask(c.0, c.3);
    }
    for c in strided_cases() {
        ask(c.0, c.3);
    }
    let py = if want_py.is_empty() {
        Ok(HashMap::new())
    } else {
        peers::py_kernels(&ctx.python, o.reps(), &want_py)
    };
    let peer = |key: &str| peers::pick(&py, key);

    if o.want("load-contiguous") {
        load_contiguous(ctx, &peer);
    }
    for (dt, key) in TS_CASES {
        if o.want(&format!("tensor-scalar {dt}")) {
            tensor_scalar(ctx, dt, peer(key));
        }
    }
    if o.want("reduce-in-order") {
        reduce(ctx, peer("sum-free-axis"));
    }
    for (name, from, to, key, target) in conversions() {
        if o.want(name) {
            conversion(ctx, name, from, to, peer(key), target);
        }
    }
    for (name, ap, src_bytes, key) in strided_cases() {
        if o.want(name) {
            strided(ctx, name, &ap, src_bytes, peer(key));
        }
    }
    if o.want("interpret-loop") {
        interpret_loop(ctx);
    }
    if o.want("threads") {
        thread_scaling(ctx);
    }
    datamove(ctx, &peer);
}

/// Load of a 128 x 65536 fp32 DRAM input into an untouched SB tile, against one memcpy of the
/// same 32 MiB into a fresh destination.
fn load_contiguous(ctx: &Ctx, peer: &dyn Fn(&str) -> Result<f64, String>) {
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("t", dt, PARTS, FREE);
    p.push(program::copy("Load", "ld", &tile("x", dt, 0, PARTS, FREE), &tile("t", dt, 0, PARTS, FREE)));
    let x = npy(dt, PARTS, FREE);
    let ours = time_sim(&p.text(), &[("x", &x)], ctx.opts.reps());
    let bytes = PARTS * FREE * 4;
    let c = peers::run_c(&ctx.c, "memcpy", &[bytes.to_string(), ctx.opts.reps().to_string()]);
    let name = "load-contiguous 128x65536 fp32 into a fresh SB tile";
    row(name, ours.clone(), "C memcpy (fresh THP dst)", peers::pick(&c, "huge"), Goal::Within(1.2));
    c_notes(&c, "memcpy");
    if let (Ok(o), Ok(n)) = (&ours, peer("copy-f32-128x65536")) {
        note(&format!("NumPy x.copy(): {n:.2} ms ({:.2}x birsim's speed)", n / o));
    }
}

/// The other destinations a C baseline was timed with.
fn c_notes(c: &Result<HashMap<String, f64>, String>, what: &str) {
    if let (Ok(cold), Ok(warm)) = (peers::pick(c, "cold"), peers::pick(c, "warm")) {
        note(&format!(
            "{what} into a fresh 4 KiB-page destination: {cold:.2} ms; into a warm one: {warm:.2} ms \
             (THP = madvise(MADV_HUGEPAGE), as NumPy does for large arrays)"
        ));
    }
}

/// (dtype, the kernels.py case): x * 1.5 + 0.25 on a 128 x 65536 tile.
const TS_CASES: [(&str, &str); 3] =
    [("float32", "axpb-float32"), ("bfloat16", "axpb-bfloat16"), ("float8_e4m3fn", "axpb-float8_e4m3fn")];

/// TensorScalar x * 1.5 + 0.25 from a loaded input into a fresh SB tile.
fn tensor_scalar(ctx: &Ctx, dt: &str, peer: Result<f64, String>) {
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("t", dt, PARTS, FREE);
    p.push(program::tensor_scalar(
        "ts",
        "mult",
        1.5,
        "add",
        0.25,
        &tile("x", dt, 0, PARTS, FREE),
        &tile("t", dt, 0, PARTS, FREE),
    ));
    let x = npy(dt, PARTS, FREE);
    let ours = time_sim(&p.text(), &[("x", &x)], ctx.opts.reps());
    let name = format!("tensor-scalar {dt} x*1.5+0.25 128x65536");
    if dt == "float32" {
        let c = peers::run_c(&ctx.c, "axpb", &[(PARTS * FREE).to_string(), ctx.opts.reps().to_string()]);
        row(&name, ours.clone(), "C loop (fresh THP dst)", peers::pick(&c, "huge"), Goal::Within(1.2));
        c_notes(&c, "the C loop");
        if let (Ok(o), Ok(n)) = (&ours, &peer) {
            note(&format!("NumPy (u = x*a; u += b): {n:.2} ms ({:.2}x birsim's speed)", n / o));
        }
    } else {
        let target = if dt == "bfloat16" { 4.0 } else { 15.0 };
        row(&name, ours, "ml_dtypes", peer, Goal::Faster(target));
    }
}

/// In-order TensorReduce add over the free axis, against the C 16-accumulator loop.
fn reduce(ctx: &Ctx, peer: Result<f64, String>) {
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("s", dt, PARTS, 1);
    p.push(program::reduce_add_x("r", &tile("x", dt, 0, PARTS, FREE), &tile("s", dt, 0, PARTS, 1)));
    let x = npy(dt, PARTS, FREE);
    let ours = time_sim(&p.text(), &[("x", &x)], ctx.opts.reps());
    let c = peers::run_c(&ctx.c, "fold", &[PARTS.to_string(), FREE.to_string(), ctx.opts.reps().to_string()]);
    row(
        "reduce-in-order add over the free axis 128x65536",
        ours.clone(),
        "C 16-acc loop",
        peers::pick(&c, "fold16"),
        Goal::Within(3.0),
    );
    note("the C 16-accumulator loop reassociates each row (not bit-exact with an in-order fold)");
    if let (Ok(o), Ok(b)) = (&ours, peers::pick(&c, "inorder16")) {
        note(&format!(
            "C in order, 16 rows per SIMD lane group (bit-exact): {b:.2} ms (birsim {:.2}x its time)",
            o / b
        ));
    }
    if let (Ok(o), Ok(n)) = (&ours, &peer) {
        note(&format!(
            "NumPy x.sum(axis=1) (pairwise, not in order): {n:.2} ms ({:.2}x birsim's speed)",
            n / o
        ));
    }
}

/// (name, from, to, kernels.py case, target speed-up over ml_dtypes)
fn conversions() -> Vec<(&'static str, Dtype, Dtype, &'static str, f64)> {
    vec![
        ("cast fp32 -> float8_e4m3fn", Dtype::Float32, Dtype::Float8E4m3fn, "cast-f32-e4m3fn", 10.0),
        ("cast fp32 -> float8e5", Dtype::Float32, Dtype::Float8E5, "cast-f32-e5m2", 10.0),
        ("cast float8_e4m3fn -> fp32", Dtype::Float8E4m3fn, Dtype::Float32, "cast-e4m3fn-f32", 20.0),
        ("cast float8e5 -> fp32", Dtype::Float8E5, Dtype::Float32, "cast-e5m2-f32", 20.0),
        ("cast fp32 -> bfloat16", Dtype::Float32, Dtype::Bfloat16, "cast-f32-bf16", 1.0),
        ("cast bfloat16 -> fp32", Dtype::Bfloat16, Dtype::Float32, "cast-bf16-f32", 1.0),
    ]
}

/// numerics::cast of 16 Mi values under the nki profile (ml_dtypes semantics) into a fresh
/// buffer with transparent huge pages requested, as NumPy allocates the peer's result (and as
/// the simulator's memory holds large tensors); a 4 KiB-page `Vec` would time 16,384 page
/// faults the peer never takes.
fn conversion(ctx: &Ctx, name: &str, from: Dtype, to: Dtype, peer: Result<f64, String>, target: f64) {
    let n = 16usize << 20;
    let mut src = vec![0u8; n * from.size()];
    program::fill(if from == Dtype::Float32 { "float32" } else { "uint8" }, 0, &mut src);
    let profile = numerics::Profile::nki();
    let mut ok = true;
    let ours = time(ctx.opts.reps(), || match fresh_huge(n * to.size()) {
        Ok(mut dst) => {
            ok &= numerics::cast(from, &src, to, &mut dst, &profile).is_ok();
            black_box(&dst[..]);
        }
        Err(_) => ok = false,
    });
    let ours = if ok {
        Ok(ms(ours))
    } else {
        Err("numerics::cast refused, or no mapping for the destination".to_owned())
    };
    row(&format!("{name} 16 Mi"), ours, "ml_dtypes", peer, Goal::Faster(target));
}

/// `n` untouched bytes in an anonymous mapping advised to use transparent huge pages (what NumPy
/// does for arrays of 4 MiB or more on Linux).
fn fresh_huge(n: usize) -> std::io::Result<memmap2::MmapMut> {
    let map = memmap2::MmapMut::map_anon(n)?;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}

/// (name, source AP over a flat fp32 source, source bytes, kernels.py case)
fn strided_cases() -> Vec<(&'static str, Vec<ApPair>, usize, &'static str)> {
    // The logical tensor is [W=128, Z=4, Y=64, X=64] fp32 = 2 Mi elements.
    let (w, z, y, x) = (128i64, 4i64, 64i64, 64i64);
    let plane = z * y * x;
    vec![
        (
            "ap-strided Y step 2",
            pairs(&[(2 * plane, w), (2 * y * x, z), (2 * x, y), (1, x)]),
            (2 * w * plane * 4) as usize,
            "strided-y-step-2",
        ),
        (
            "ap-strided Z<->Y swapped",
            pairs(&[(plane, w), (x, y), (y * x, z), (1, x)]),
            (w * plane * 4) as usize,
            "strided-zy-swap",
        ),
        (
            "ap-strided Y<->X swapped (inner stride 64)",
            pairs(&[(plane, w), (y * x, z), (1, x), (x, y)]),
            (w * plane * 4) as usize,
            "strided-yx-swap",
        ),
        (
            "ap-strided partition transpose",
            pairs(&[(1, w), (w, plane)]),
            (w * plane * 4) as usize,
            "strided-partition-transpose",
        ),
        (
            // A gather: every other element of each X row, so no run is longer than one element.
            "ap-strided X step 2 (1-element runs)",
            pairs(&[(2 * plane, w), (2 * y * x, z), (x, 2 * y), (2, x / 2)]),
            (2 * w * plane * 4) as usize,
            "strided-x-step-2",
        ),
    ]
}

/// The obvious per-element walker: nested loops over the levels, the address formula per element.
fn naive_read(buf: &[u8], layout: &Layout, ps: &[ApPair], size: usize, out: &mut [u8]) {
    let mut idx = vec![0i64; ps.len()];
    let mut k = 0;
    loop {
        let e = idx.iter().zip(ps).map(|(i, p)| i * p.step).sum::<i64>();
        if let Some(at) = layout.address(e, size) {
            out[k..k + size].copy_from_slice(&buf[at..at + size]);
        }
        k += size;
        let mut d = ps.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < ps[d].num {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// An access-pattern read of 2 Mi fp32 (1 Mi for the gather) into a fresh buffer, against NumPy's
/// `np.ascontiguousarray` of the same view (target ≥ 1.2x, issue #25; the naive walker checks the bytes). The
/// read is the simulator's operand read: `read_to_vec` into a vector with the capacity reserved,
/// which (like NumPy's `malloc`ed result) is not zero-filled first.
fn strided(ctx: &Ctx, name: &str, ps: &[ApPair], src_bytes: usize, peer: Result<f64, String>) {
    let layout = Layout::flat(0, src_bytes as u64);
    let p = Pattern { pairs: ps, offset: 0, elem_size: 4 };
    let n = ps.iter().map(|q| q.num).product::<i64>() as usize;
    let src: Vec<u8> = (0..src_bytes).map(|i| (i >> 2) as u8).collect();
    // Each rep's result is dropped inside the timing, as NumPy's is (so the allocator may hand
    // the same memory back next time, to both); the bytes checked below are one more read.
    let ours: Duration = time(ctx.opts.reps() * 2, || {
        let mut out = Vec::with_capacity(n * 4);
        read_to_vec(&src, &layout, &p, &mut out).ok();
        black_box(&out);
    });
    let mut last = Vec::with_capacity(n * 4);
    read_to_vec(&src, &layout, &p, &mut last).ok();
    let mut naive_out = vec![0u8; n * 4];
    let naive = time(1, || {
        naive_read(&src, &layout, ps, 4, &mut naive_out);
        black_box(&naive_out);
    });
    let size = if n == 2 << 20 { "2 Mi".to_owned() } else { format!("{} Ki", n >> 10) };
    // Issue #25: at least 1.2x NumPy's same-run copy of the same view.
    row(&format!("{name} {size} fp32"), Ok(ms(ours)), "NumPy", peer, Goal::Faster(1.2));
    let same = if last == naive_out { "same bytes" } else { "MISMATCH" };
    note(&format!(
        "{:.1}x the naive per-element walker's speed ({same})",
        naive.as_secs_f64() / ours.as_secs_f64()
    ));
    // The same view read by plain nested C loops with ordinary (cached) stores into a fresh
    // malloc'd result: what a compiled copy reaches on this machine, for scale.
    let mut args = vec![ctx.opts.reps().to_string(), (src_bytes / 4).to_string()];
    args.extend(ps.iter().flat_map(|q| [q.step.to_string(), q.num.to_string()]));
    if let Ok(c) = peers::pick(&peers::run_c(&ctx.c, "strided", &args), "loop") {
        note(&format!(
            "C nested loops (cc -O3, cached stores): {c:.2} ms ({:.2}x birsim's speed)",
            c / ms(ours)
        ));
    }
}

/// The interpreter's per-instruction cost: a Loop of 100,000 one-element TensorScalars (in
/// process, no JSON in the timing). No target of its own; the end-to-end tiny row has one.
fn interpret_loop(ctx: &Ctx) {
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, 1, 1);
    p.sb("t", dt, 1, 1);
    let inner = program::tensor_scalar(
        "ts",
        "add",
        1.0,
        "bypass",
        0.0,
        &tile("t", dt, 0, 1, 1),
        &tile("t", dt, 0, 1, 1),
    );
    p.push(format!(
        r#"{{"opcode":"Loop","name":"l","LoopAxis":{{"name":"i","lb":0,"ub":100000}},"blocks":[{inner}]}}"#
    ));
    let x = npy(dt, 1, 1);
    let t = time_sim(&p.text(), &[("x", &x)], ctx.opts.reps().min(3));
    let (ours, rate) = match &t {
        Ok(t) => (format!("{t:.2} ms"), format!("{:.2e}/s", 1e5 / (t / 1e3))),
        Err(e) => ("-".to_owned(), format!("FAILED: {e}")),
    };
    super::fact(
        "interpret-loop 100,000 one-element TensorScalars",
        &ours,
        "-",
        "-",
        &format!("{rate} (no target)"),
        None,
    );
}

/// Compute-bound kernels at 1 and 2 threads: the fp32 -> fp8 cast (TensorCopy), the fp8
/// TensorScalar (a table lookup per element) and the in-order fold. Target: 2 threads at least
/// 1.8x the 1-thread speed.
///
/// Each program runs its instruction twice onto the same tile, and the row times the second
/// (the tile's pages already resident, as in a kernel that rewrites its SB tiles); the first,
/// into a fresh tile, is printed beside it. On this VM first touches of fresh memory cost more
/// than the kernels themselves and do not scale across vCPUs (the host serialises them), so a
/// fresh-tile ratio measures the hypervisor, not the kernel.
fn thread_scaling(ctx: &Ctx) {
    let f8 = "float8_e4m3fn";
    let twice = |dst: &str, dst_dt: &str, free: u64, inst: &dyn Fn(&str, &str) -> String, src_dt: &str| {
        let mut p = Prog::default();
        p.flat("x", "ExternalInput", src_dt, PARTS, FREE);
        p.sb(dst, dst_dt, PARTS, free);
        for name in ["first", "again"] {
            p.push(inst(name, &tile(dst, dst_dt, 0, PARTS, free)));
        }
        p.text()
    };
    let cast = twice(
        "t",
        f8,
        FREE,
        &|n, d| program::copy("TensorCopy", n, &tile("x", "float32", 0, PARTS, FREE), d),
        "float32",
    );
    let ts = twice(
        "t",
        f8,
        FREE,
        &|n, d| program::tensor_scalar(n, "mult", 1.5, "add", 0.25, &tile("x", f8, 0, PARTS, FREE), d),
        f8,
    );
    let red = twice(
        "s",
        "float32",
        1,
        &|n, d| program::reduce_add_x(n, &tile("x", "float32", 0, PARTS, FREE), d),
        "float32",
    );
    let (x32, x8) = (npy("float32", PARTS, FREE), npy(f8, PARTS, FREE));
    let mut fold = (Err(String::new()), Err(String::new()));
    for (name, text, input, is_fold) in [
        ("threads: cast (TensorCopy) fp32 -> float8_e4m3fn 128x65536", cast, &x32, false),
        ("threads: tensor-scalar float8_e4m3fn 128x65536", ts, &x8, false),
        ("threads: reduce-in-order add 128x65536", red, &x32, true),
    ] {
        let reps = ctx.opts.reps();
        let one = instruction_times(&text, &[("x", input)], reps, Some(1));
        let two = instruction_times(&text, &[("x", input)], reps, Some(2));
        row(&format!("{name}, rewriting its tile"), at(&two, 1), "1 thread", at(&one, 1), Goal::Faster(1.8));
        if is_fold {
            fold = (at(&one, 1), at(&two, 1));
        }
        if let (Ok(o), Ok(t)) = (at(&one, 0), at(&two, 0)) {
            note(&format!(
                "the first write, into a fresh tile: 1 thread {o:.2} ms, 2 threads {t:.2} ms ({:.2}x)",
                o / t
            ));
        }
    }
    // What two cores' reads give on this machine, measured now: a C loop bound by memory.
    let c = peers::run_c(&ctx.c, "fold", &[PARTS.to_string(), FREE.to_string(), ctx.opts.reps().to_string()]);
    if let (Ok(one), Ok(two)) = (peers::pick(&c, "fold16"), peers::pick(&c, "fold16x2")) {
        note(&format!(
            "the C 16-accumulator sum of the same 32 MiB: 1 thread {one:.2} ms, 2 threads {two:.2} ms ({:.2}x): \
             a kernel as fast as memory reads scales no better",
            one / two
        ));
        if let (Ok(o), Ok(t)) = &fold {
            note(&format!(
                "the fold against it: 1 thread {:.2}x, 2 threads {:.2}x the C loop's time ({:.1} and {:.1} GB/s read)",
                o / one,
                t / two,
                (PARTS * FREE * 4) as f64 / o / 1e6,
                (PARTS * FREE * 4) as f64 / t / 1e6
            ));
        }
    }
}

/// DMACopy Transpose of a 128 × 64 × 64 fp32 tile: (NumPy permutation, the 4-level source shape
/// that moves elements the same way, TransposeOps code, its permutation of W,Z,Y,X).
/// (NumPy permutation, peer key, source shape, (code, permutation)).
type Transpose = (&'static str, &'static str, [u64; 4], (&'static str, [usize; 4]));
const TRANSPOSES: [Transpose; 3] = [
    ("(2,1,0)", "transpose-210", [128, 64, 64, 1], ("XYZW", [3, 2, 1, 0])),
    ("(0,2,1)", "transpose-021", [128, 1, 64, 64], ("WZXY", [0, 1, 3, 2])),
    ("(1,0,2)", "transpose-102", [128, 64, 1, 64], ("ZWYX", [1, 0, 2, 3])),
];

/// A 4-level AP over a flat location holding a row-major tensor of `shape`.
fn ap4(mem: &str, dt: &str, shape: [u64; 4]) -> String {
    let strides = [shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1];
    let pairs: Vec<String> = (0..4).map(|k| format!("[{},{}]", strides[k], shape[k])).collect();
    format!(r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","ap":[{}]}}"#, pairs.join(","))
}

/// The data-movement targets (issue "Data movement"): DMACopy Transpose at least 3x NumPy's
/// `transpose(...).copy()`; StreamShuffle and StreamTranspose within 2x of a memcpy of the same bytes; Iota and
/// Memset within 1.5x of a memset of the same bytes; Memset random at least 300 M draws/s.
fn datamove(ctx: &Ctx, peer: &dyn Fn(&str) -> Result<f64, String>) {
    let o = &ctx.opts;
    let n = 128 * 64 * 64u64;
    if o.want("dma-transpose") {
        for (np_perm, key, shape, (code, perm)) in TRANSPOSES {
            let dshape = perm.map(|p| shape[p]);
            let mut p = Prog::default();
            p.flat("x", "ExternalInput", "float32", 1, n);
            p.flat("y", "Internal", "float32", 1, n);
            p.push(format!(
                r#"{{"opcode":"DMACopy","name":"t","engine":"DMA","mode":"Transpose","transpose_op":"{code}","ins":[{}],"outs":[{}]}}"#,
                ap4("x", "float32", shape),
                ap4("y", "float32", dshape)
            ));
            let x = npy("float32", 1, n);
            let ours = time_sim(&p.text(), &[("x", &x)], o.reps());
            row(
                &format!("dma-transpose {code} = numpy transpose{np_perm} 128x64x64 fp32"),
                ours,
                "NumPy",
                peer(key),
                Goal::Faster(3.0),
            );
            // The same on one thread: on a loaded machine a second thread can wait for a core.
            let one = time_sim_on(&p.text(), &[("x", &x)], o.reps(), Some(1));
            row(&format!("dma-transpose {code} on 1 thread"), one, "NumPy", peer(key), Goal::Info);
        }
        // The floor: the transpose writes 2 MiB into untouched memory, as a fresh memcpy does
        // (NumPy's result reuses warm pages its allocator just freed).
        let c = peers::run_c(&ctx.c, "memcpy", &[(n * 4).to_string(), o.reps().to_string()]);
        row(
            "dma-transpose floor: C memcpy of the 2 MiB (fresh THP dst)",
            peers::pick(&c, "huge"),
            "NumPy transpose(1,0,2)",
            peer("transpose-102"),
            Goal::Info,
        );
    }
    let bytes = PARTS * FREE * 4;
    if o.want("stream-shuffle") {
        let mask: Vec<String> = (0..32).map(|i| ((i + 1) % 32).to_string()).collect();
        let mut p = Prog::default();
        p.flat("x", "ExternalInput", "float32", PARTS, FREE);
        p.sb("t", "float32", PARTS, FREE);
        p.push(format!(
            r#"{{"opcode":"StreamShuffle","name":"s","engine":"DVE","mask":[{}],"ins":[{}],"outs":[{}]}}"#,
            mask.join(","),
            tile("x", "float32", 0, PARTS, FREE),
            tile("t", "float32", 0, PARTS, FREE)
        ));
        let x = npy("float32", PARTS, FREE);
        let ours = time_sim(&p.text(), &[("x", &x)], o.reps());
        let c = peers::run_c(&ctx.c, "memcpy", &[bytes.to_string(), o.reps().to_string()]);
        row(
            "stream-shuffle 128x65536 fp32 into a fresh SB tile",
            ours,
            "C memcpy (fresh THP dst)",
            peers::pick(&c, "huge"),
            Goal::Within(2.0),
        );
    }
    if o.want("stream-transpose") {
        // 32 x 32 blocks swapped within each 32-partition group: dst[p, e] for a [128, F] tile
        // with outElem F (seed 000 §5.3).
        let mut p = Prog::default();
        p.flat("x", "ExternalInput", "float32", PARTS, FREE);
        p.sb("t", "float32", PARTS, FREE);
        p.push(format!(
            r#"{{"opcode":"StreamTranspose","name":"s","engine":"DVE","ins":[{}],"outs":[{}]}}"#,
            tile("x", "float32", 0, PARTS, FREE),
            tile("t", "float32", 0, PARTS, FREE)
        ));
        let x = npy("float32", PARTS, FREE);
        let ours = time_sim(&p.text(), &[("x", &x)], o.reps());
        let c = peers::run_c(&ctx.c, "memcpy", &[bytes.to_string(), o.reps().to_string()]);
        row(
            "stream-transpose 128x65536 fp32 into a fresh SB tile",
            ours,
            "C memcpy (fresh THP dst)",
            peers::pick(&c, "huge"),
            Goal::Within(2.0),
        );
    }
    let c = peers::run_c(&ctx.c, "memset", &[bytes.to_string(), o.reps().to_string()]);
    for (name, inst) in [
        (
            "iota 128x65536 int32 into a fresh SB tile",
            format!(
                r#"{{"opcode":"Iota","name":"i","engine":"Pool","ins":[],"outs":[{}],"base":3,"pattern":[[1,{FREE}]],"channel_multiplier":{FREE}}}"#,
                tile("t", "int32", 0, PARTS, FREE)
            ),
        ),
        (
            "memset 128x65536 int32 into a fresh SB tile",
            format!(
                r#"{{"opcode":"Memset","name":"m","engine":"DVE","mode":"Const","constant":7,"ins":[],"outs":[{}]}}"#,
                tile("t", "int32", 0, PARTS, FREE)
            ),
        ),
    ] {
        if !o.want(name.split(' ').next().unwrap_or_default()) {
            continue;
        }
        let mut p = Prog::default();
        p.sb("t", "int32", PARTS, FREE);
        p.push(inst);
        let ours = time_sim(&p.text(), &[], o.reps());
        row(name, ours, "C memset (fresh THP dst)", peers::pick(&c, "huge"), Goal::Within(1.5));
    }
    if o.want("memset-random") {
        let mut p = Prog::default();
        p.sb("t", "uint32", PARTS, FREE);
        p.push(format!(r#"{{"opcode":"Memset","name":"r","engine":"DVE","mode":"Random","constant":0,"ins":[],"outs":[{}]}}"#, tile("t", "uint32", 0, PARTS, FREE)));
        let ours = time_sim(&p.text(), &[], o.reps());
        let draws = (PARTS * FREE) as f64;
        // The baseline is the target itself: the time 300 M draws/s would take.
        row(
            "memset-random 8 Mi uint32 draws (MT19937-64, one thread)",
            ours,
            "300 M draws/s",
            Ok(draws / 3e8 * 1e3),
            Goal::Within(1.0),
        );
    }
}
