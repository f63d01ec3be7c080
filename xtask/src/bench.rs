//! `cargo xtask bench`: speed targets as ratios against baselines measured in the same run
//! (DEVELOPERS.md: never timed unit tests). Peer figures are NumPy's, from
//! shared/reference/peers.md, measured on the same kind of machine.

use access_pattern::{Layout, Pattern, read, write};
use bir_ir::{ApPair, BirEnum, Dtype};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Median time of `reps` runs of `f` (after one warm-up run).
fn time(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut t: Vec<Duration> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[t.len() / 2]
}

fn pairs(v: &[(i64, i64)]) -> Vec<ApPair> {
    v.iter().map(|&(s, n)| ApPair::new(s, n)).collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The obvious per-element walker: nested loops over the levels, the address formula per element.
fn naive_read(buf: &[u8], layout: &Layout, ps: &[ApPair], offset: i64, size: usize, out: &mut [u8]) {
    let mut idx = vec![0i64; ps.len()];
    let mut k = 0;
    loop {
        let e = offset + idx.iter().zip(ps).map(|(i, p)| i * p.step).sum::<i64>();
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

/// peers.md: memcpy of 64 MiB (bytes read + written) took 3.66 ms on the machine the peer figures
/// come from. Timing the same memcpy here gives the factor that carries a peer figure over.
const PEER_MEMCPY_64MIB_MS: f64 = 3.66;

/// How much slower this machine is than the peers' (> 1 = slower), from a 64 MiB memcpy.
fn machine_factor() -> f64 {
    let src = vec![1u8; 64 << 20];
    let mut dst = vec![0u8; 64 << 20];
    let t = time(9, || {
        dst.copy_from_slice(&src);
        black_box(&dst);
    });
    ms(t) / PEER_MEMCPY_64MIB_MS
}

pub fn run(filter: &[String]) {
    let want = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let factor = machine_factor();
    println!("machine factor vs peers.md (64 MiB memcpy): {factor:.2}x; peer figures below are scaled by it");
    println!("{:<44} {:>8} {:>12} {:>28}", "case", "ms", "elements/s", "ratio");
    if want("ap-contiguous") {
        contiguous();
    }
    for (name, ap, src_bytes, numpy_ms) in strided_cases() {
        if want(name) {
            strided(name, &ap, src_bytes, numpy_ms * factor);
        }
    }
    for (name, from, to, peer_ms, target) in conversions() {
        if want(name) {
            conversion(name, from, to, peer_ms * factor, target);
        }
    }
    if want("sim-tensor-scalar") {
        sim_tensor_scalar(factor);
    }
    if want("sim-reduce") {
        sim_reduce();
    }
    if want("sim-tiny") {
        sim_tiny();
    }
    if want("sim-peak-memory") {
        sim_peak_memory();
    }
}

/// `birsim run` on 512 MiB of tensors (a 256 MiB input, a 256 MiB output): its peak resident set
/// against the target of 1.1 × the tensor bytes + 50 MiB.
fn sim_peak_memory() {
    use std::io::Write;
    let (parts, free) = (128usize, 1usize << 19);
    let bytes = parts * free * 4;
    let dir = std::env::temp_dir().join(format!("birsim-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let text = program(
        parts,
        free,
        "float32",
        free,
        &format!(
            r#"{{"opcode":"TensorScalar","name":"ts","op0":"mult","const0":2.0,"ins":[{}],"outs":[{}]}}"#,
            ap("x", "float32", parts, free),
            ap("y", "float32", parts, free)
        ),
        |i| i,
    )
    .replace(r#""kind":"Internal""#, r#""kind":"ExternalInput""#);
    let (prog, input, output) = (dir.join("p.json"), dir.join("x.npy"), dir.join("y.npy"));
    let written = std::fs::write(&prog, text).and_then(|()| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&input)?);
        f.write_all(&simulator::npy::header_bytes("<f4", &[parts as u64, free as u64]))?;
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..bytes >> 20 {
            f.write_all(&zeros)?;
        }
        f.flush()
    });
    let built = std::process::Command::new(env!("CARGO"))
        .args(["build", "--release", "-q", "-p", "simulator", "--bin", "birsim"])
        .status()
        .is_ok_and(|s| s.success());
    let birsim = super::verify::root().join("target/release/birsim");
    let run = (written.is_ok() && built)
        .then(|| {
            std::process::Command::new(&birsim)
                .args(["run", &prog.to_string_lossy(), "--input", &format!("x={}", input.display())])
                .arg("--output")
                .arg(format!("y={}", output.display()))
                .env("BIRSIM_REPORT_PEAK_RSS", "1")
                .output()
                .ok()
        })
        .flatten();
    let _ = std::fs::remove_dir_all(&dir);
    let peak_kb = run.as_ref().and_then(|o| {
        let err = String::from_utf8_lossy(&o.stderr);
        err.lines().find_map(|l| l.split("VmHWM:").nth(1)?.split_whitespace().next()?.parse::<f64>().ok())
    });
    match peak_kb {
        Some(kb) => {
            let (peak, tensors) = (kb / 1024.0, (2 * bytes) as f64 / (1 << 20) as f64);
            let limit = 1.1 * tensors + 50.0;
            println!(
                "{:<44} peak {peak:.0} MiB for {tensors:.0} MiB of tensors: {:.2}x the target (1.1x + 50 MiB = {limit:.0} MiB; <= 1 is ok)",
                "sim-peak-memory birsim run",
                peak / limit
            );
        }
        None => println!("sim-peak-memory FAILED to run birsim ({})", birsim.display()),
    }
}

/// A one-function program over flat DRAM tensors `x` and `y` ([parts, free] of `dt`).
fn program(
    parts: usize,
    free: usize,
    dt: &str,
    out_free: usize,
    inst: &str,
    body_wrap: impl Fn(String) -> String,
) -> String {
    let size = Dtype::from_name(dt).map_or(4, |d| d.size());
    let alloc = |name: &str, f: usize| {
        format!(
            r#"{{"name":"{name}","kind":"Internal","dtype":"{dt}","tensor_shape":[{parts},{f}],
               "memorylocations":[{{"name":"{name}","type":"DRAM","dims":[{parts},{}]}}]}}"#,
            f * size
        )
    };
    format!(
        r#"{{"arch":"gen4","functions":[{{"name":"f","allocations":[{},{}],"blocks":[{}]}}]}}"#,
        alloc("x", free),
        alloc("y", out_free),
        body_wrap(inst.to_owned())
    )
}

fn ap(mem: &str, dt: &str, parts: usize, free: usize) -> String {
    format!(r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","ap":[[{free},{parts}],[1,{free}]]}}"#)
}

/// Loads, validates and times `reps` runs of a program (after one warm-up run).
fn time_program(text: &str, reps: usize) -> Option<(Duration, u64)> {
    let p = bir_ir::json::load_str(text).ok()?;
    let v = bir_ir::validate(&p, &Default::default()).ok()?;
    let mut sim = simulator::Simulator::new(v, numerics::Profile::refsim());
    let mut ok = true;
    let t = time(reps, || {
        ok &= matches!(sim.run(), Ok(simulator::Outcome::Finished));
    });
    ok.then(|| (t, sim.executed()))
}

fn sim_tensor_scalar(factor: f64) {
    let (parts, free) = (128usize, 65536usize);
    let n = parts * free;
    // Baseline: the same math as a plain Rust loop over slices.
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let mut ys = vec![0f32; n];
    let base = time(9, || {
        for (y, x) in ys.iter_mut().zip(&xs) {
            *y = *x * 1.5 + 0.25;
        }
        black_box(&ys);
    });
    // (dtype, peer figure in ms from peers.md or None, target)
    for (dt, peer, target) in
        [("float32", None, 1.2), ("bfloat16", Some(5.64), 4.0), ("float8_e4m3fn", Some(94.0), 15.0)]
    {
        let inst = format!(
            r#"{{"opcode":"TensorScalar","name":"ts","op0":"mult","const0":1.5,"op1":"add","const1":0.25,"ins":[{}],"outs":[{}]}}"#,
            ap("x", dt, parts, free),
            ap("y", dt, parts, free)
        );
        let Some((t, _)) = time_program(&program(parts, free, dt, free, &inst, |i| i), 5) else {
            println!("{:<44} FAILED to run", format!("sim-tensor-scalar x*s0+s1 {dt}"));
            continue;
        };
        let ratio = match peer {
            None => format!(
                "{:.2}x plain Rust loop time (target <= {target})",
                t.as_secs_f64() / base.as_secs_f64()
            ),
            Some(peer_ms) => format!("{:.1}x ml_dtypes (target >= {target}x)", peer_ms * factor / ms(t)),
        };
        println!(
            "{:<44} {:>8.3} {:>12.3e} {ratio}",
            format!("sim-tensor-scalar x*s0+s1 {dt}"),
            ms(t),
            n as f64 / t.as_secs_f64()
        );
    }
}

fn sim_reduce() {
    let (parts, free) = (128usize, 65536usize);
    let xs: Vec<f32> = (0..parts * free).map(|i| (i % 977) as f32 * 0.25).collect();
    let mut sums = vec![0f32; parts];
    // Baseline: 16 independent accumulators per row (reassociates; the practical limit).
    let base = time(9, || {
        for (s, row) in sums.iter_mut().zip(xs.chunks_exact(free)) {
            let mut acc = [0f32; 16];
            for c in row.chunks_exact(16) {
                for (a, x) in acc.iter_mut().zip(c) {
                    *a += *x;
                }
            }
            *s = acc.iter().sum();
        }
        black_box(&sums);
    });
    let inst = format!(
        r#"{{"opcode":"TensorReduce","name":"r","op":"add","axis":"X","ins":[{}],"outs":[{}]}}"#,
        ap("x", "float32", parts, free),
        ap("y", "float32", parts, 1)
    );
    match time_program(&program(parts, free, "float32", 1, &inst, |i| i), 5) {
        Some((t, _)) => println!(
            "{:<44} {:>8.3} {:>12.3e} {:.2}x 16-accumulator loop time (target <= 3)",
            "sim-reduce add over the free axis (in order)",
            ms(t),
            (parts * free) as f64 / t.as_secs_f64(),
            t.as_secs_f64() / base.as_secs_f64()
        ),
        None => println!("sim-reduce FAILED to run"),
    }
}

fn sim_tiny() {
    let inst = format!(
        r#"{{"opcode":"TensorScalar","name":"ts","op0":"add","const0":1.0,"ins":[{}],"outs":[{}]}}"#,
        ap("x", "float32", 1, 1),
        ap("y", "float32", 1, 1)
    );
    let wrap = |i: String| {
        format!(
            r#"{{"opcode":"Loop","name":"l","LoopAxis":{{"name":"i","lb":0,"ub":100000}},"blocks":[{i}]}}"#
        )
    };
    match time_program(&program(1, 1, "float32", 1, &inst, wrap), 3) {
        Some((t, _)) => println!(
            "{:<44} {:>8.3} {:>12.3e} instructions/s (target >= 1e6)",
            "sim-tiny 100,000 one-element instructions",
            ms(t),
            100_000.0 / t.as_secs_f64()
        ),
        None => println!("sim-tiny FAILED to run"),
    }
}

/// (name, from, to, ml_dtypes ms for 16 Mi elements from peers.md, target speed-up)
fn conversions() -> Vec<(&'static str, Dtype, Dtype, f64, f64)> {
    vec![
        ("cast fp32 -> float8_e4m3fn", Dtype::Float32, Dtype::Float8E4m3fn, 106.0, 10.0),
        ("cast fp32 -> float8e5", Dtype::Float32, Dtype::Float8E5, 106.0, 10.0),
        ("cast float8_e4m3fn -> fp32", Dtype::Float8E4m3fn, Dtype::Float32, 85.0, 20.0),
        ("cast float8e5 -> fp32", Dtype::Float8E5, Dtype::Float32, 85.0, 20.0),
        ("cast fp32 -> bfloat16", Dtype::Float32, Dtype::Bfloat16, 5.5, 1.0),
        ("cast bfloat16 -> fp32", Dtype::Bfloat16, Dtype::Float32, 2.74, 1.0),
    ]
}

/// Converts 16 Mi values under the nki profile (ml_dtypes semantics, the peer's).
fn conversion(name: &str, from: Dtype, to: Dtype, peer_ms: f64, target: f64) {
    let n = 16usize << 20;
    let src: Vec<u8> = (0..n * from.size()).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect();
    let mut dst = vec![0u8; n * to.size()];
    let profile = numerics::Profile::nki();
    let ours = time(7, || {
        numerics::cast(from, &src, to, &mut dst, &profile).ok();
        black_box(&dst);
    });
    // The same memory traffic as the conversion: read src.len() bytes, write dst.len() bytes.
    let half = (src.len() + dst.len()) / 2;
    let from = vec![1u8; half];
    let mut to = vec![0u8; half];
    let base = time(7, || {
        to.copy_from_slice(&from);
        black_box(&to);
    });
    let speedup = peer_ms / ms(ours);
    let verdict = if speedup >= target { "ok" } else { "BELOW TARGET" };
    println!(
        "{:<44} {:>8.3} {:>12.3e} {:>6.1}x ml_dtypes (target {target}x: {verdict}), {:.2}x memcpy time (same traffic)",
        name,
        ms(ours),
        n as f64 / ours.as_secs_f64(),
        speedup,
        ours.as_secs_f64() / base.as_secs_f64()
    );
}

fn contiguous() {
    // 128 x 65536 fp32 SBUF-shaped tile, read through its AP and written back through another.
    let (parts, pitch) = (128u64, 65536u64);
    let bytes = (parts * pitch * 4) as usize;
    let layout = Layout::partitioned(0, parts, pitch * 4, pitch * 4);
    let ps = pairs(&[(pitch as i64, parts as i64), (1, pitch as i64)]);
    let p = Pattern { pairs: &ps, offset: 0, elem_size: 4 };
    let src: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    let mut flat = vec![0u8; bytes];
    let mut dst = vec![0u8; bytes];
    let ours = time(9, || {
        read(&src, &layout, &p, &mut flat).ok();
        write(&mut dst, &layout, &p, &flat).ok();
        black_box(&dst);
    });
    let base = time(9, || {
        flat.copy_from_slice(&src);
        dst.copy_from_slice(&flat);
        black_box(&dst);
    });
    let n = (parts * pitch) as f64;
    println!(
        "{:<44} {:>8.3} {:>12.3e} {:>10.2}x memcpy time (target <= 1.2)",
        "ap-contiguous 128x65536 f32 read+write",
        ms(ours),
        n / ours.as_secs_f64(),
        ours.as_secs_f64() / base.as_secs_f64()
    );
}

/// (name, source AP over a flat fp32 source, source bytes, NumPy ms from peers.md)
fn strided_cases() -> Vec<(&'static str, Vec<ApPair>, usize, f64)> {
    // The logical tensor is [W=128, Z=4, Y=64, X=64] fp32 = 2 Mi elements.
    let (w, z, y, x) = (128i64, 4i64, 64i64, 64i64);
    let plane = z * y * x;
    vec![
        (
            "ap-strided Y step 2",
            pairs(&[(2 * plane, w), (2 * y * x, z), (2 * x, y), (1, x)]),
            (2 * w * plane * 4) as usize,
            0.36,
        ),
        (
            "ap-strided Z<->Y swapped",
            pairs(&[(plane, w), (x, y), (y * x, z), (1, x)]),
            (w * plane * 4) as usize,
            0.31,
        ),
        (
            "ap-strided Y<->X swapped (inner stride 64)",
            pairs(&[(plane, w), (y * x, z), (1, x), (x, y)]),
            (w * plane * 4) as usize,
            0.54,
        ),
        ("ap-strided partition transpose", pairs(&[(1, w), (w, plane)]), (w * plane * 4) as usize, 2.47),
    ]
}

/// `numpy_ms` is the peer figure already scaled to this machine.
fn strided(name: &str, ps: &[ApPair], src_bytes: usize, numpy_ms: f64) {
    let layout = Layout::flat(0, src_bytes as u64);
    let p = Pattern { pairs: ps, offset: 0, elem_size: 4 };
    let n = ps.iter().map(|q| q.num).product::<i64>() as usize;
    let src: Vec<u8> = (0..src_bytes).map(|i| (i >> 2) as u8).collect();
    let mut out = vec![0u8; n * 4];
    let ours = time(15, || {
        read(&src, &layout, &p, &mut out).ok();
        black_box(&out);
    });
    let mut naive_out = vec![0u8; n * 4];
    let naive = time(3, || {
        naive_read(&src, &layout, ps, 0, 4, &mut naive_out);
        black_box(&naive_out);
    });
    let same = if out == naive_out { "" } else { "  MISMATCH vs naive" };
    println!(
        "{:<44} {:>8.3} {:>12.3e} {:>6.1}x naive, {:>5.2}x NumPy speed{same}",
        name,
        ms(ours),
        n as f64 / ours.as_secs_f64(),
        naive.as_secs_f64() / ours.as_secs_f64(),
        numpy_ms / ms(ours)
    );
}
