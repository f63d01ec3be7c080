//! Small generators for the bench's programs (BIR JSON, docs/bir-json.md) and input `.npy` files.

use bir_ir::{BirEnum, Dtype};
use std::io::Write;
use std::path::Path;

/// Bytes per element of a dtype name.
pub fn size_of(dt: &str) -> usize {
    Dtype::from_name(dt).map_or(4, Dtype::size)
}

/// The `.npy` descriptor the CLI reads and writes for a dtype name (raw bits for bfloat16, fp8).
pub fn descr(dt: &str) -> &'static str {
    Dtype::from_name(dt).map_or("<f4", simulator::npy::descr_for)
}

/// A one-function gen4 program (256 KiB of SB per partition) being assembled.
#[derive(Default)]
pub struct Prog {
    allocs: Vec<String>,
    body: Vec<String>,
    /// Bytes of every tensor the program declares (what its peak memory is judged against).
    pub tensor_bytes: u64,
}

impl Prog {
    /// A flat tensor `name` of `[rows, cols]` `dt`: `kind` ExternalInput / ExternalOutput /
    /// Internal, memory type Input / Output / DRAM to match.
    pub fn flat(&mut self, name: &str, kind: &str, dt: &str, rows: u64, cols: u64) {
        let ty = match kind {
            "ExternalInput" => "Input",
            "ExternalOutput" => "Output",
            _ => "DRAM",
        };
        self.alloc(name, kind, ty, dt, rows, cols);
    }

    /// An SB tile `name` of `[parts, free]` `dt`.
    pub fn sb(&mut self, name: &str, dt: &str, parts: u64, free: u64) {
        self.alloc(name, "Internal", "SB", dt, parts, free);
    }

    /// A PSUM location `name` holding `[parts, free]` fp32 (16 KiB a partition = 8 banks of 512).
    pub fn psum(&mut self, name: &str, parts: u64, free: u64) {
        self.alloc(name, "Internal", "PSUM", "float32", parts, free);
    }

    fn alloc(&mut self, name: &str, kind: &str, ty: &str, dt: &str, rows: u64, cols: u64) {
        let bytes = cols * size_of(dt) as u64;
        self.tensor_bytes += rows * bytes;
        self.allocs.push(format!(
            r#"{{"name":"{name}_set","kind":"{kind}","dtype":"{dt}","tensor_shape":[{rows},{cols}],"memorylocations":[{{"name":"{name}","type":"{ty}","dims":[{rows},{bytes}]}}]}}"#
        ));
    }

    /// Appends an instruction (its JSON object).
    pub fn push(&mut self, inst: String) {
        self.body.push(inst);
    }

    /// The program's JSON text: one block holding every instruction.
    pub fn text(&self) -> String {
        format!(
            r#"{{"arch":"gen4","functions":[{{"name":"f","allocations":[{}],"blocks":[{{"name":"b","instructions":[{}]}}]}}]}}"#,
            self.allocs.join(","),
            self.body.join(",\n")
        )
    }
}

/// A `[parts, free]` access pattern over `mem` starting at element `offset`.
pub fn tile(mem: &str, dt: &str, offset: u64, parts: u64, free: u64) -> String {
    format!(
        r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","offset":{offset},"ap":[[{free},{parts}],[1,{free}]]}}"#
    )
}

/// A `[parts, free]` block of a row-major tensor whose rows hold `pitch` elements, starting at
/// element `offset` (a tile of a larger DRAM matrix, or of a PSUM partition's banks).
pub fn block(mem: &str, dt: &str, offset: u64, pitch: u64, parts: u64, free: u64) -> String {
    format!(
        r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","offset":{offset},"ap":[[{pitch},{parts}],[1,{free}]]}}"#
    )
}

pub fn copy(opcode: &str, name: &str, src: &str, dst: &str) -> String {
    format!(r#"{{"opcode":"{opcode}","name":"{name}","ins":[{src}],"outs":[{dst}]}}"#)
}

/// `out = op1(op0(in, c0), c1)`.
pub fn tensor_scalar(name: &str, op0: &str, c0: f32, op1: &str, c1: f32, src: &str, dst: &str) -> String {
    format!(
        r#"{{"opcode":"TensorScalar","name":"{name}","op0":"{op0}","const0":{c0:?},"op1":"{op1}","const1":{c1:?},"ins":[{src}],"outs":[{dst}]}}"#
    )
}

pub fn tensor_tensor(name: &str, op: &str, a: &str, b: &str, dst: &str) -> String {
    format!(r#"{{"opcode":"TensorTensor","name":"{name}","op":"{op}","ins":[{a},{b}],"outs":[{dst}]}}"#)
}

/// Activation `func` (`dst = func(src)`: scale 1, bias +0; docs/bir-json.md's Activation).
pub fn activation(name: &str, func: &str, src: &str, dst: &str) -> String {
    format!(
        r#"{{"opcode":"Activation","name":"{name}","engine":"Activation","func":"{func}","ins":[{src}],"outs":[{dst}]}}"#
    )
}

/// An instruction without fields of its own: `opcode` from `src` into `dst`, on the VectorE.
pub fn inst(opcode: &str, name: &str, src: &str, dst: &str) -> String {
    format!(r#"{{"opcode":"{opcode}","name":"{name}","engine":"DVE","ins":[{src}],"outs":[{dst}]}}"#)
}

pub fn reduce_add_x(name: &str, src: &str, dst: &str) -> String {
    format!(
        r#"{{"opcode":"TensorReduce","name":"{name}","op":"add","axis":"X","ins":[{src}],"outs":[{dst}]}}"#
    )
}

/// The bench's data: element `i` is `(i % 1000) * 0.5` (exact in fp32, no denormals anywhere).
pub fn value(i: usize) -> f32 {
    (i % 1000) as f32 * 0.5
}

/// The raw bytes of `n` values of `dt` (float32, or the top half of the fp32 bits for bfloat16,
/// or one byte of the index for anything else), from element `first` on.
pub fn fill(dt: &str, first: usize, out: &mut [u8]) {
    match size_of(dt) {
        4 => out
            .chunks_exact_mut(4)
            .enumerate()
            .for_each(|(k, c)| c.copy_from_slice(&value(first + k).to_le_bytes())),
        2 => out
            .chunks_exact_mut(2)
            .enumerate()
            .for_each(|(k, c)| c.copy_from_slice(&((value(first + k).to_bits() >> 16) as u16).to_le_bytes())),
        _ => out
            .iter_mut()
            .enumerate()
            .for_each(|(k, b)| *b = ((first + k).wrapping_mul(2_654_435_761) >> 7) as u8),
    }
}

/// Writes a `[rows, cols]` `dt` input as the CLI reads it (raw bits for bfloat16 and fp8).
pub fn write_npy(path: &Path, dt: &str, rows: u64, cols: u64) -> std::io::Result<()> {
    let size = size_of(dt);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(&simulator::npy::header_bytes(descr(dt), &[rows, cols]))?;
    let total = (rows * cols) as usize;
    let chunk = (1usize << 20) / size;
    let mut buf = vec![0u8; chunk * size];
    let mut at = 0;
    while at < total {
        let n = chunk.min(total - at);
        fill(dt, at, &mut buf[..n * size]);
        f.write_all(&buf[..n * size])?;
        at += n;
    }
    f.flush()
}

/// A `parts × free` fp32 input uniform in `[lo, hi)` from a SplitMix64 stream seeded `seed`, as
/// birsim loads it, and the same values as a raw little-endian file `dir/name` for the C loops
/// and NumPy (or why it could not be written).
pub fn uniform_input(
    dir: &Path,
    name: &str,
    seed: u64,
    (parts, free): (u64, u64),
    (lo, hi): (f64, f64),
) -> (simulator::npy::Npy, Result<std::path::PathBuf, String>) {
    let mut rng = test_rng::SplitMix64::new(seed);
    let data: Vec<u8> = (0..parts * free)
        .flat_map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            ((lo + u * (hi - lo)) as f32).to_le_bytes()
        })
        .collect();
    let path = dir.join(name);
    let file =
        std::fs::write(&path, &data).map(|()| path.clone()).map_err(|e| format!("{}: {e}", path.display()));
    (simulator::npy::Npy { descr: "<f4".to_owned(), shape: vec![parts, free], data }, file)
}
