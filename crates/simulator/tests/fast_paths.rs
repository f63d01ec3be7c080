//! The chunked, fused and SIMD-across-partitions kernels against slow obvious references written
//! here: random shapes (including fewer than 16 partitions and rows longer than a chunk), every
//! result compared bit for bit. What is under test is the pipelines, not the ops: the reduce
//! reference spells its ops out, and the TensorScalar reference applies numerics' functors one
//! element at a time (their semantics are tested on their own in numerics/tests/alu.rs and by the
//! NumPy-oracle programs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use bir_ir::{AluOp, ValidateOptions, json, validate};
use numerics::Profile;
use simulator::{Outcome, Simulator, io, npy::Npy};
use test_rng::SplitMix64;

/// The operand values these tests draw.
trait Value {
    /// A multiple of 1/64 in [-150, 162.5], from one draw.
    fn value(&mut self) -> f32;
}

impl Value for SplitMix64 {
    fn value(&mut self) -> f32 {
        self.below(20001) as f32 / 64.0 - 150.0
    }
}

/// A program `y = <inst>(x)` over DRAM tensors x [p, f] and y [p, yf].
fn run(p: usize, f: usize, yf: usize, inst: &str, x: &[f32]) -> Vec<f32> {
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[
          {{"name":"x","kind":"ExternalInput","dtype":"float32","tensor_shape":[{p},{f}],"memorylocations":[{{"name":"x","type":"DRAM","dims":[{p},{}]}}]}},
          {{"name":"y","kind":"ExternalOutput","dtype":"float32","tensor_shape":[{p},{yf}],"memorylocations":[{{"name":"y","type":"DRAM","dims":[{p},{}]}}]}}],
          "blocks":[{inst}]}}]}}"#,
        f * 4,
        yf * 4
    );
    let prog = json::load_str(&text).unwrap();
    let v = validate(&prog, &ValidateOptions::default()).unwrap();
    let f0 = &prog.functions[0];
    let mut sim = Simulator::new(v, Profile::refsim());
    let data = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let npy = Npy { descr: "<f4".into(), shape: vec![p as u64, f as u64], data };
    io::load(&mut sim, &io::resolve(f0, "x").unwrap(), &npy).unwrap();
    assert_eq!(sim.run().unwrap(), Outcome::Finished);
    let out = io::read(&mut sim, &io::resolve(f0, "y").unwrap()).unwrap();
    out.data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn ap(mem: &str, p: usize, row: usize, n: usize) -> String {
    format!(r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"float32","ap":[[{row},{p}],[1,{n}]]}}"#)
}

fn same(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[test]
fn reduce_over_rows_matches_an_in_order_fold() {
    let mut rng = SplitMix64::new(3);
    for round in 0..60 {
        let p = 1 + rng.below_usize(40);
        let f = 1 + rng.below_usize(300);
        fn add(a: f32, x: f32) -> f32 {
            a + x
        }
        fn max(a: f32, x: f32) -> f32 {
            if x > a || a.is_nan() { x } else { a }
        }
        fn mult(a: f32, x: f32) -> f32 {
            a * x
        }
        type Fold = fn(f32, f32) -> f32;
        let table: [(&str, Fold); 3] = [("add", add), ("max", max), ("mult", mult)];
        let (name, op) = table[rng.below_usize(3)];
        let x: Vec<f32> =
            (0..p * f).map(|_| rng.value() / if name == "mult" { 100.0 } else { 1.0 }).collect();
        let want: Vec<f32> = x.chunks(f).map(|r| r[1..].iter().fold(r[0], |a, v| op(a, *v))).collect();
        let inst = format!(
            r#"{{"opcode":"TensorReduce","name":"r","op":"{name}","axis":"X","ins":[{}],"outs":[{}]}}"#,
            ap("x", p, f, f),
            ap("y", p, 1, 1)
        );
        let got = run(p, f, 1, &inst, &x);
        assert!(same(&got, &want), "round {round}: {name} over [{p}, {f}]\n got {got:?}\nwant {want:?}");
    }
}

#[test]
fn chunked_tensor_scalar_matches_elementwise_math() {
    let mut rng = SplitMix64::new(5);
    for round in 0..40 {
        let p = 1 + rng.below_usize(20);
        // Rows from tiny to longer than one chunk (8192 elements).
        let f = [1, 7, 100, 8192, 9000, 20000][rng.below_usize(6)];
        let x: Vec<f32> = (0..p * f).map(|_| rng.value()).collect();
        let (c0, c1) = (rng.value(), rng.value());
        let ops = [AluOp::Mult, AluOp::Add, AluOp::Subtract, AluOp::Max];
        let (o0, o1) = (ops[rng.below_usize(4)], ops[rng.below_usize(4)]);
        let apply = |op: AluOp, a: f32, b: f32| numerics::alu::ts_ops::lookup(op).unwrap()(a, b);
        let want: Vec<f32> = x.iter().map(|v| apply(o1, apply(o0, *v, c0), c1)).collect();
        let inst = format!(
            r#"{{"opcode":"TensorScalar","name":"t","op0":"{o0}","const0":{c0},"op1":"{o1}","const1":{c1},"ins":[{}],"outs":[{}]}}"#,
            ap("x", p, f, f),
            ap("y", p, f, f)
        );
        let got = run(p, f, f, &inst, &x);
        assert!(same(&got, &want), "round {round}: {o0}/{o1} over [{p}, {f}]");
    }
}

/// One random AP over a [parts, free] fp32 tile: `k` partitions × `n` elements, partition step
/// `free` (or 0 when `broadcast`), free step ±1, placed anywhere it stays in bounds.
fn random_ap(
    rng: &mut SplitMix64,
    parts: usize,
    free: usize,
    k: usize,
    n: usize,
    broadcast: bool,
) -> (i64, [(i64, i64); 2]) {
    // Validation refuses a negative partition step; the free step may be negative.
    let ps = if broadcast { 0 } else { free as i64 };
    let fs = if rng.below_usize(3) == 0 { -1 } else { 1 };
    let pairs = [(ps, k as i64), (fs, n as i64)];
    let (mut lo, mut hi) = (0i64, 0i64);
    for (s, num) in pairs {
        let d = s * (num - 1);
        if d < 0 { lo += d } else { hi += d }
    }
    let cap = (parts * free) as i64;
    let offset = -lo + rng.below((cap - hi + lo) as u64) as i64;
    (offset, pairs)
}

/// The element indices an AP visits, in AP order (the slow twin's address walk).
fn elements_of((offset, pairs): (i64, [(i64, i64); 2])) -> Vec<usize> {
    let mut out = Vec::new();
    for a in 0..pairs[0].1 {
        for b in 0..pairs[1].1 {
            out.push((offset + a * pairs[0].0 + b * pairs[1].0) as usize);
        }
    }
    out
}

fn sb_ap(offset: i64, pairs: [(i64, i64); 2]) -> String {
    format!(
        r#"{{"kind":"physical_ap","memref":"t","dtype":"float32","offset":{offset},"ap":[[{},{}],[{},{}]]}}"#,
        pairs[0].0, pairs[0].1, pairs[1].0, pairs[1].1
    )
}

/// `y = x` through an SB tile `t` on which `inst` runs in place: Load x → t, inst, Save t → y.
fn run_on_tile(parts: usize, free: usize, inst: &str, x: &[f32]) -> Vec<f32> {
    let whole = |mem: &str| {
        format!(
            r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"float32","ap":[[{free},{parts}],[1,{free}]]}}"#
        )
    };
    let body = format!(
        r#"{{"name":"b","instructions":[
          {{"opcode":"Load","name":"ld","ins":[{}],"outs":[{}]}}, {inst},
          {{"opcode":"Save","name":"st","ins":[{}],"outs":[{}]}}]}}"#,
        whole("x"),
        whole("t"),
        whole("t"),
        whole("y")
    );
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[
          {{"name":"x","kind":"ExternalInput","dtype":"float32","tensor_shape":[{parts},{free}],"memorylocations":[{{"name":"x","type":"DRAM","dims":[{parts},{b}]}}]}},
          {{"name":"t","kind":"Internal","dtype":"float32","tensor_shape":[{parts},{free}],"memorylocations":[{{"name":"t","type":"SB","dims":[{parts},{b}]}}]}},
          {{"name":"y","kind":"ExternalOutput","dtype":"float32","tensor_shape":[{parts},{free}],"memorylocations":[{{"name":"y","type":"DRAM","dims":[{parts},{b}]}}]}}],
          "blocks":[{body}]}}]}}"#,
        b = free * 4
    );
    let prog = json::load_str(&text).unwrap();
    let v = validate(&prog, &ValidateOptions::default()).unwrap();
    let f0 = &prog.functions[0];
    let mut sim = Simulator::new(v, Profile::refsim());
    let data = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let npy = Npy { descr: "<f4".into(), shape: vec![parts as u64, free as u64], data };
    io::load(&mut sim, &io::resolve(f0, "x").unwrap(), &npy).unwrap();
    assert_eq!(sim.run().unwrap(), Outcome::Finished);
    let out = io::read(&mut sim, &io::resolve(f0, "y").unwrap()).unwrap();
    out.data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Overlapping source and destination APs in one SB tile, up to 4 MiB, in both directions,
/// with reversed and broadcast sources: every copy, TensorScalar and TensorTensor must act as if
/// its inputs were read whole before any output byte was written (seed 000 §5.1). The twin reads
/// every source element first, then writes.
#[test]
fn overlapping_operands_read_everything_before_writing() {
    let mut rng = SplitMix64::new(11);
    for round in 0..36 {
        let parts = 128;
        let free = [64, 1000, 2048, 8192][rng.below_usize(4)];
        let k = 1 + rng.below_usize(parts);
        let n = 1 + rng.below_usize(free);
        let broadcast = rng.below_usize(6) == 0;
        let src = random_ap(&mut rng, parts, free, k, n, broadcast);
        let src2 = random_ap(&mut rng, parts, free, k, n, false);
        let dst = random_ap(&mut rng, parts, free, k, n, false);
        let x: Vec<f32> = (0..parts * free).map(|_| rng.value()).collect();
        let (c0, c1) = (rng.value(), rng.value());
        let kind = round % 3;
        let inst = match kind {
            0 => format!(
                r#"{{"opcode":"TensorCopy","name":"c","ins":[{}],"outs":[{}]}}"#,
                sb_ap(src.0, src.1),
                sb_ap(dst.0, dst.1)
            ),
            1 => format!(
                r#"{{"opcode":"TensorScalar","name":"t","op0":"mult","const0":{c0},"op1":"add","const1":{c1},"ins":[{}],"outs":[{}]}}"#,
                sb_ap(src.0, src.1),
                sb_ap(dst.0, dst.1)
            ),
            _ => format!(
                r#"{{"opcode":"TensorTensor","name":"tt","op":"subtract","ins":[{},{}],"outs":[{}]}}"#,
                sb_ap(src.0, src.1),
                sb_ap(src2.0, src2.1),
                sb_ap(dst.0, dst.1)
            ),
        };
        let (es, es2, ed) = (elements_of(src), elements_of(src2), elements_of(dst));
        let vals: Vec<f32> = match kind {
            0 => es.iter().map(|&e| x[e]).collect(),
            1 => es.iter().map(|&e| x[e] * c0 + c1).collect(),
            _ => es.iter().zip(&es2).map(|(&a, &b)| x[a] - x[b]).collect(),
        };
        let mut want = x.clone();
        for (&e, v) in ed.iter().zip(vals) {
            want[e] = v;
        }
        let got = run_on_tile(parts, free, &inst, &x);
        let bad = got.iter().zip(&want).position(|(g, w)| g.to_bits() != w.to_bits());
        assert!(
            bad.is_none(),
            "round {round} kind {kind}: src {src:?} dst {dst:?} [{parts}, {free}]: element {bad:?} got {:#010x} want {:#010x}",
            bad.map_or(0, |b| got[b].to_bits()),
            bad.map_or(0, |b| want[b].to_bits())
        );
    }
}

/// `inst` (over tiles `t` and `u` of one dtype, loaded from `x` and `z`) then `t` saved to `y`,
/// with a given parallelism; the output bytes.
fn run_two_tiles(
    dt: &str,
    parts: usize,
    free: usize,
    inst: &str,
    x: &[u8],
    z: &[u8],
    par: simulator::Parallelism,
) -> Vec<u8> {
    let size = x.len() / (parts * free);
    let whole = |mem: &str| {
        format!(
            r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","ap":[[{free},{parts}],[1,{free}]]}}"#
        )
    };
    let body = format!(
        r#"{{"name":"b","instructions":[
          {{"opcode":"Load","name":"l1","ins":[{x}],"outs":[{t}]}},
          {{"opcode":"Load","name":"l2","ins":[{z}],"outs":[{u}]}}, {inst},
          {{"opcode":"Save","name":"st","ins":[{t}],"outs":[{y}]}}]}}"#,
        x = whole("x"),
        z = whole("z"),
        t = whole("t"),
        u = whole("u"),
        y = whole("y")
    );
    let loc = |name: &str, kind: &str, typ: &str| {
        format!(
            r#"{{"name":"{name}","kind":"{kind}","dtype":"{dt}","tensor_shape":[{parts},{free}],"memorylocations":[{{"name":"{name}","type":"{typ}","dims":[{parts},{}]}}]}}"#,
            free * size
        )
    };
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{},{},{},{},{}],"blocks":[{body}]}}]}}"#,
        loc("x", "ExternalInput", "DRAM"),
        loc("z", "ExternalInput", "DRAM"),
        loc("t", "Internal", "SB"),
        loc("u", "Internal", "SB"),
        loc("y", "ExternalOutput", "DRAM")
    );
    let prog = json::load_str(&text).unwrap();
    let v = validate(&prog, &ValidateOptions::default()).unwrap();
    let f0 = &prog.functions[0];
    let mut sim = Simulator::new(v, Profile::refsim());
    sim.set_options(simulator::Options { parallelism: par, ..Default::default() });
    let descr = if dt == "float32" { "<f4" } else { "<u2" };
    for (name, data) in [("x", x), ("z", z)] {
        let npy = Npy { descr: descr.into(), shape: vec![parts as u64, free as u64], data: data.to_vec() };
        io::load(&mut sim, &io::resolve(f0, name).unwrap(), &npy).unwrap();
    }
    assert_eq!(sim.run().unwrap(), Outcome::Finished);
    io::read(&mut sim, &io::resolve(f0, "y").unwrap()).unwrap().data
}

/// The direct passes (between buffers, in place, copies) at several thread counts and tiny
/// chunks, against element-by-element math with numerics' functors, for fp32 and bf16 (NaN and
/// −0 among the values).
#[test]
fn direct_passes_match_elementwise_math_at_any_thread_count() {
    let mut rng = SplitMix64::new(17);
    for round in 0..36 {
        let (parts, free) = (1 + rng.below_usize(64), 1 + rng.below_usize(700));
        let dt = ["float32", "bfloat16", "float8e5", "float8_e4m3fn"][round % 4];
        let dtype = <bir_ir::Dtype as bir_ir::BirEnum>::from_name(dt).unwrap();
        let scale = if dt.starts_with("float8") { 16.0 } else { 1.0 };
        let vals = |rng: &mut SplitMix64| -> Vec<f32> {
            (0..parts * free)
                .map(|_| match rng.below_usize(40) {
                    0 => f32::NAN,
                    1 => -0.0,
                    _ => rng.value() / scale,
                })
                .collect()
        };
        let (xs, zs) = (vals(&mut rng), vals(&mut rng));
        // numerics' bulk codecs (tested on their own against ml_dtypes) are the reference here.
        let profile = Profile::refsim();
        let enc = |v: &[f32]| -> Vec<u8> {
            let mut out = vec![0u8; v.len() * dtype.size()];
            numerics::encode_from_f32(dtype, v, &mut out, &profile).unwrap();
            out
        };
        let dec = |b: &[u8]| -> Vec<f32> {
            let mut out = vec![0f32; b.len() / dtype.size()];
            numerics::decode_to_f32(dtype, b, &mut out, &profile).unwrap();
            out
        };
        let (x, z) = (enc(&xs), enc(&zs));
        let (xd, zd) = (dec(&x), dec(&z));
        let ap = |m: &str| {
            format!(
                r#"{{"kind":"physical_ap","memref":"{m}","dtype":"{dt}","ap":[[{free},{parts}],[1,{free}]]}}"#
            )
        };
        let ops = [AluOp::Mult, AluOp::Add, AluOp::Subtract, AluOp::Max];
        let (o0, o1) = (ops[rng.below_usize(4)], ops[rng.below_usize(4)]);
        let (c0, c1) = (rng.value(), rng.value());
        let f = |op: AluOp, a: f32, b: f32| numerics::alu::ts_ops::lookup(op).unwrap()(a, b);
        let (inst, want): (String, Vec<f32>) = match round % 6 / 2 {
            // In place, or from another buffer (every other TensorScalar round).
            0 => {
                let (from, vals) = if round % 12 < 6 { ("t", &xd) } else { ("u", &zd) };
                (
                    format!(
                        r#"{{"opcode":"TensorScalar","name":"i","op0":"{o0}","const0":{c0},"op1":"{o1}","const1":{c1},"ins":[{}],"outs":[{}]}}"#,
                        ap(from),
                        ap("t")
                    ),
                    vals.iter().map(|v| f(o1, f(o0, *v, c0), c1)).collect(),
                )
            }
            1 => (
                format!(
                    r#"{{"opcode":"TensorTensor","name":"i","op":"{o0}","ins":[{},{}],"outs":[{}]}}"#,
                    ap("t"),
                    ap("t"),
                    ap("t")
                ),
                xd.iter().map(|v| f(o0, *v, *v)).collect(),
            ),
            _ => (
                format!(
                    r#"{{"opcode":"TensorTensor","name":"i","op":"{o0}","ins":[{},{}],"outs":[{}]}}"#,
                    ap("u"),
                    ap("u"),
                    ap("t")
                ),
                zd.iter().map(|v| f(o0, *v, *v)).collect(),
            ),
        };
        let want = enc(&want);
        for threads in [1, 2, 7] {
            let par = simulator::Parallelism { threads, grain: 5 };
            let got = run_two_tiles(dt, parts, free, &inst, &x, &z, par);
            assert!(got == want, "round {round} ({dt}, {threads} threads): {inst}");
        }
    }
}

/// TensorScalar over a whole tile large enough for its lookup table (docs/fidelity.md F1)
/// against the same op run over row groups too small for one (the direct pass), for the FP8
/// formats (bf16 checks the direct pass against itself), in place and from another buffer, at several thread counts: every code (NaNs with
/// payloads, ±0, ±Inf, subnormals) is in the input, the rest random, rows of odd length.
#[test]
fn table_tensor_scalar_matches_the_direct_pass_row_by_row() {
    let mut rng = SplitMix64::new(23);
    let ops = [AluOp::Mult, AluOp::Add, AluOp::Subtract, AluOp::Max, AluOp::Min, AluOp::Divide];
    for (round, dt) in ["float8_e4m3fn", "float8e5", "float8e4", "float8e3"].into_iter().enumerate() {
        let size = if dt == "bfloat16" { 2 } else { 1 };
        let codes = 1usize << (8 * size);
        let parts = 64;
        let free = (4 * codes).div_ceil(parts) + 1 + 2 * rng.below_usize(20);
        let group = (4 * codes - 1) / free;
        let mut x: Vec<u8> = (0..codes).flat_map(|k| (k as u16).to_le_bytes()[..size].to_vec()).collect();
        x.extend((x.len()..parts * free * size).map(|_| rng.next_u64() as u8));
        let (o0, o1) = (ops[rng.below_usize(ops.len())], ops[rng.below_usize(ops.len())]);
        let consts = [1.5, 0.25, -0.0, 0.001, -300.0, 7.0, rng.value()];
        let (c0, c1) = (consts[rng.below_usize(consts.len())], consts[rng.below_usize(consts.len())]);
        let (r0, r1) = (rng.below_usize(2) == 1, rng.below_usize(2) == 1);
        let from = if round % 2 == 0 { "t" } else { "u" };
        let ts = |name: &str, p0: usize, rows: usize| {
            let ap = |m: &str| {
                format!(
                    r#"{{"kind":"physical_ap","memref":"{m}","dtype":"{dt}","offset":{},"ap":[[{free},{rows}],[1,{free}]]}}"#,
                    p0 * free
                )
            };
            format!(
                r#"{{"opcode":"TensorScalar","name":"{name}","op0":"{o0}","const0":{c0},"reverse0":{r0},"op1":"{o1}","const1":{c1},"reverse1":{r1},"ins":[{}],"outs":[{}]}}"#,
                ap(from),
                ap("t")
            )
        };
        let whole = ts("whole", 0, parts);
        let rows: Vec<String> =
            (0..parts).step_by(group).map(|p0| ts(&format!("g{p0}"), p0, group.min(parts - p0))).collect();
        let direct = simulator::Parallelism { threads: 1, grain: 1 << 16 };
        let want = run_two_tiles(dt, parts, free, &rows.join(","), &x, &x, direct);
        for threads in [1, 2, 7] {
            let par = simulator::Parallelism { threads, grain: 5 };
            let got = run_two_tiles(dt, parts, free, &whole, &x, &x, par);
            if let Some(k) = (0..x.len()).find(|&k| want[k] != got[k]) {
                panic!(
                    "{dt} {threads} threads ({whole}): byte {k} from {:#04x}: direct {:#04x}, table {:#04x}",
                    x[k], want[k], got[k]
                );
            }
        }
    }
}

/// A TensorCopy that casts between contiguous tiles (the direct cast, split across threads)
/// against numerics' bulk cast of the same bytes (tested on its own against ml_dtypes), at
/// several thread counts and tiny chunks, for narrowing, widening and integer pairs, with
/// NaN, ±0, ±Inf and out-of-range values among the inputs and rows of odd length.
#[test]
fn a_contiguous_cast_copy_is_numerics_cast_at_any_thread_count() {
    use bir_ir::{BirEnum, Dtype};
    let mut rng = SplitMix64::new(29);
    let pairs = [
        ("float32", "float8_e4m3fn"),
        ("float32", "float8e5"),
        ("float32", "bfloat16"),
        ("bfloat16", "float32"),
        ("float8_e4m3fn", "float32"),
        ("float8e5", "bfloat16"),
        ("float32", "int8"),
        ("int32", "float32"),
        ("bfloat16", "uint16"),
    ];
    for (round, (from, to)) in pairs.into_iter().enumerate() {
        let (fd, td) = (Dtype::from_name(from).unwrap(), Dtype::from_name(to).unwrap());
        let (parts, free) = (1 + rng.below_usize(40), 1 + 2 * rng.below_usize(400));
        let n = parts * free;
        let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1e30, -7e5, 3.0e-39];
        let vals: Vec<f32> = (0..n)
            .map(|k| if k < specials.len() { specials[k] } else { rng.value() / [1.0, 16.0][round % 2] })
            .collect();
        let profile = Profile::refsim();
        // The input as the `from` dtype's bytes: fp32 values narrowed by numerics' encoder (for
        // an integer source, the values as integers).
        let mut x = vec![0u8; n * fd.size()];
        numerics::cast(
            Dtype::Float32,
            &vals.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
            fd,
            &mut x,
            &profile,
        )
        .unwrap();
        let mut want = vec![0u8; n * td.size()];
        numerics::cast(fd, &x, td, &mut want, &profile).unwrap();
        let ap = |m: &str, dt: &str| {
            format!(
                r#"{{"kind":"physical_ap","memref":"{m}","dtype":"{dt}","ap":[[{free},{parts}],[1,{free}]]}}"#
            )
        };
        let loc = |name: &str, kind: &str, dt: Dtype, typ: &str| {
            format!(
                r#"{{"name":"{name}","kind":"{kind}","dtype":"{}","tensor_shape":[{parts},{free}],"memorylocations":[{{"name":"{name}","type":"{typ}","dims":[{parts},{}]}}]}}"#,
                dt.name(),
                free * dt.size()
            )
        };
        let text = format!(
            r#"{{"functions":[{{"name":"f","allocations":[{},{},{},{}],"blocks":[{{"name":"b","instructions":[
              {{"opcode":"Load","name":"l","ins":[{}],"outs":[{}]}},
              {{"opcode":"TensorCopy","name":"c","ins":[{}],"outs":[{}]}},
              {{"opcode":"Save","name":"s","ins":[{}],"outs":[{}]}}]}}]}}]}}"#,
            loc("x", "ExternalInput", fd, "DRAM"),
            loc("t", "Internal", fd, "SB"),
            loc("u", "Internal", td, "SB"),
            loc("y", "ExternalOutput", td, "DRAM"),
            ap("x", from),
            ap("t", from),
            ap("t", from),
            ap("u", to),
            ap("u", to),
            ap("y", to)
        );
        let prog = json::load_str(&text).unwrap();
        let f0 = &prog.functions[0];
        for threads in [1, 2, 7] {
            let v = validate(&prog, &ValidateOptions::default()).unwrap();
            let mut sim = Simulator::new(v, Profile::refsim());
            let par = simulator::Parallelism { threads, grain: 5 };
            sim.set_options(simulator::Options { parallelism: par, ..Default::default() });
            let descr = ["|u1", "<u2", "", "<u4"][fd.size() - 1];
            let npy = Npy { descr: descr.into(), shape: vec![parts as u64, free as u64], data: x.clone() };
            io::load(&mut sim, &io::resolve(f0, "x").unwrap(), &npy).unwrap();
            assert_eq!(sim.run().unwrap(), Outcome::Finished);
            let got = io::read(&mut sim, &io::resolve(f0, "y").unwrap()).unwrap().data;
            assert!(got == want, "{from} -> {to}, {parts}x{free}, {threads} threads");
        }
    }
}
