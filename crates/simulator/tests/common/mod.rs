//! Helpers the simulator's integration tests share: small BIR programs over named tensors
//! (flat DRAM, or SB rows), their bytes in and out, and one runner that returns every tensor's
//! final bytes together with the fault, if any (so "nothing written" can be checked).
#![allow(dead_code, reason = "each test crate uses a subset of these helpers")]

use bir_ir::{ValidateOptions, json, validate};
use numerics::Profile;
use simulator::{Fault, Options, Outcome, Simulator};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh scratch folder per call (unique per test process and call).
pub fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "birsim-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the `birsim` binary; returns (exit code, stdout, stderr).
pub fn birsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_birsim")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A path as a `&str` argument.
pub fn s(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

/// A tensor: name, dtype, element count, initial bytes; flat DRAM, or SB over `parts`
/// partitions when `parts` > 0.
pub struct T<'a> {
    pub name: &'a str,
    pub dtype: &'a str,
    pub n: usize,
    pub init: Vec<u8>,
    pub parts: usize,
    /// The partitioned memory: "SB" or "PSUM".
    pub space: &'a str,
    /// Loaded with `init` (zero-padded) before the run; else its bytes start uninitialised.
    pub load: bool,
}

pub fn size_of(dtype: &str) -> usize {
    match dtype {
        "uint8" | "int8" => 1,
        "bfloat16" | "float16" | "int16" | "uint16" | "float4_e2m1fn_x4" => 2,
        "int64" | "uint64" => 8,
        _ => 4,
    }
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
pub fn to_u16(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
}

pub fn t<'a>(name: &'a str, dtype: &'a str, n: usize, init: Vec<u8>) -> T<'a> {
    T { name, dtype, n, init, parts: 0, space: "SB", load: true }
}

/// An SB tensor of `parts` partitions × `per` elements.
pub fn sb<'a>(name: &'a str, dtype: &'a str, parts: usize, per: usize, init: Vec<u8>) -> T<'a> {
    T { name, dtype, n: parts * per, init, parts, space: "SB", load: true }
}

/// A PSUM tensor of `parts` partitions × `per` elements (a location of its own: its bytes are
/// banks from PSUM byte 0 of each partition).
pub fn psum<'a>(name: &'a str, dtype: &'a str, parts: usize, per: usize, init: Vec<u8>) -> T<'a> {
    T { name, dtype, n: parts * per, init, parts, space: "PSUM", load: true }
}

/// [`psum`] left unloaded: every byte reads 0xFF until written.
pub fn psum_uninit<'a>(name: &'a str, dtype: &'a str, parts: usize, per: usize) -> T<'a> {
    T { load: false, ..psum(name, dtype, parts, per, Vec::new()) }
}

/// A physical AP over tensor `mem`.
pub fn ap(mem: &str, dtype: &str, offset: i64, pairs: &[(i64, i64)]) -> String {
    let p: Vec<String> = pairs.iter().map(|(s, n)| format!("[{s},{n}]")).collect();
    format!(
        r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dtype}","offset":{offset},"ap":[{}]}}"#,
        p.join(",")
    )
}

pub fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Runs `body` (instructions and loops) over the tensors with `options`; every tensor's final
/// bytes (also after a fault) and the fault. `keep`, when given, frees dead locations except
/// those named (as the CLI does), and only those are returned.
pub fn run_keep(
    tensors: &[T<'_>],
    body: &str,
    options: Options,
    keep: Option<&[&str]>,
) -> (Option<Box<Fault>>, Vec<Vec<u8>>) {
    run_on("gen3", tensors, body, options, keep)
}

/// The one-function program text over `tensors` (SB/PSUM tiles, or flat DRAM inputs) with
/// instructions `body`, on `arch`.
pub fn program_text(arch: &str, tensors: &[T<'_>], body: &str) -> String {
    let allocs: Vec<String> = tensors
        .iter()
        .map(|x| {
            if let Some(per) = x.n.checked_div(x.parts) {
                return format!(
                    r#"{{"name":"{0}","kind":"Internal","dtype":"{1}","tensor_shape":[{2},{3}],"memorylocations":[{{"name":"{0}","type":"{5}","dims":[{2},{4}]}}]}}"#,
                    x.name,
                    x.dtype,
                    x.parts,
                    per,
                    per * size_of(x.dtype),
                    x.space
                );
            }
            format!(
                r#"{{"name":"{0}","kind":"ExternalInput","dtype":"{1}","tensor_shape":[{2}],"memorylocations":[{{"name":"{0}","type":"DRAM","dims":[1,{3}]}}]}}"#,
                x.name,
                x.dtype,
                x.n,
                x.n * size_of(x.dtype)
            )
        })
        .collect();
    format!(
        r#"{{"arch":"{arch}","functions":[{{"name":"f","allocations":[{}],"blocks":[{body}]}}]}}"#,
        allocs.join(",")
    )
}

/// [`run_keep`] on the program `arch` (`gen2`, `gen3`, `gen4`).
pub fn run_on(
    arch: &str,
    tensors: &[T<'_>],
    body: &str,
    options: Options,
    keep: Option<&[&str]>,
) -> (Option<Box<Fault>>, Vec<Vec<u8>>) {
    let text = program_text(arch, tensors, body);
    let prog = json::load_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let v = validate(&prog, &ValidateOptions::default()).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let f0 = &prog.functions[0];
    let mut sim = Simulator::new(v, Profile::refsim());
    sim.set_options(options);
    if let Some(names) = keep {
        let locs: Vec<_> = names.iter().map(|n| simulator::io::resolve(f0, n).unwrap().loc).collect();
        sim.free_dead_locations(&locs);
    }
    for x in tensors.iter().filter(|x| x.load) {
        let tt = simulator::io::resolve(f0, x.name).unwrap();
        let loc = &f0.locations[tt.loc.index()];
        let mut init = x.init.clone();
        init.resize(x.n * size_of(x.dtype), 0);
        sim.memory_mut().load(loc, tt.loc, &init).unwrap();
    }
    let fault = match sim.run().unwrap() {
        Outcome::Faulted(f) => Some(Box::new(f)),
        Outcome::Finished => None,
    };
    let out = tensors
        .iter()
        .filter(|x| keep.is_none_or(|k| k.contains(&x.name)))
        .map(|x| {
            let tt = simulator::io::resolve(f0, x.name).unwrap();
            simulator::io::read(&mut sim, &tt).unwrap().data
        })
        .collect();
    (fault, out)
}

/// A TensorScalar `dst = src op c` over an 8 × 1 fp32 tile (the diff tests' programs).
pub fn ts(name: &str, src: &str, dst: &str, op: &str, c: f32) -> String {
    format!(
        r#"{{"opcode":"TensorScalar","name":"{name}","op0":"{op}","const0":{c:?},"reverse0":false,"op1":"bypass","const1":0.0,"reverse1":false,"ins":[{}],"outs":[{}]}}"#,
        ap(src, "float32", 0, &[(8, 1), (1, 8)]),
        ap(dst, "float32", 0, &[(8, 1), (1, 8)])
    )
}

/// scale: t = a × 1; shift: u = t + c; double: out = u × 2.
pub fn scale_shift_double(shift_name: &str, c: f32) -> String {
    [
        ts("scale", "a", "t", "mult", 1.0),
        ts(shift_name, "t", "u", "add", c),
        ts("double", "u", "out", "mult", 2.0),
    ]
    .join(",")
}
