//! The checks behind birsim's fuzz targets (docs/robustness.md "Fuzzing"), kept in a library so
//! each target is one line and a crash input can be replayed outside libFuzzer.
//!
//! - [`json_validate`]: any bytes → load → validate; a loaded program written back and read
//!   again must be equal (the JSON contract's round trip, ARCHITECTURE.md invariants).
//! - [`access_pattern`]: a structured AP over a structured layout → element count,
//!   linearisation, bounds; when in bounds, the fast `read`/`write` against a per-element
//!   odometer (the slow obvious twin).
//! - [`run_program`]: a whole program under a small memory cap and instruction budget, either
//!   JSON bytes (the conformance seeds) or a structured [`Spec`] rendered to JSON from the
//!   instruction templates in `fuzz/templates.json`; it runs at one thread and again at two
//!   threads with tiny chunks, and the traces (per-instruction checksums) must be identical.
//! - [`isa_decode`]: any bytes as 64-byte ISA words (docs/isa.md) → decode; every word that
//!   decodes re-encodes to the same bytes and survives its WORDS.json form; validation for
//!   each generation never panics.
//!
//! A crash is a panic, an `Err` from the simulator (a birsim bug by definition), a round trip that
//! changes the program, a fast path that disagrees with its twin, or a run that differs between
//! thread counts.

use access_pattern::{Layout, Pattern};
use arbitrary::{Arbitrary, Unstructured};
use bir_ir::{ApPair, ValidateOptions};
use serde_json::{Value, json};
use simulator::{Options, Outcome, Parallelism, Simulator};

/// The fuzzers' memory cap on a program's locations (validation): 64 MiB, room for the SB and PSUM
/// arenas (30 MiB) and the builder's locations.
pub const MEMORY_CAP: u64 = 64 << 20;
/// The fuzzers' cap on one operand's buffers (run time): 8 MiB, so the largest operand (2 Mi fp32
/// elements, e.g. a step-0 level over a tiny location) runs well inside the 10 s per-input timeout
/// even under ASan.
pub const OPERAND_CAP: u64 = 8 << 20;
/// The fuzzers' instruction budget (loop iterations counted).
pub const MAX_INSTRUCTIONS: u64 = 2_000;

fn validate_options() -> ValidateOptions {
    ValidateOptions {
        memory_cap_bytes: MEMORY_CAP,
        max_instructions: MAX_INSTRUCTIONS,
        ..ValidateOptions::default()
    }
}

/// Target 1: load and validate any bytes.
pub fn json_validate(data: &[u8]) {
    let whole = bir_ir::json::load_slice(data);
    // The stream answers only with what the whole-text reader reads (any window size).
    for window in [1, 7, 1 << 20] {
        if let Ok(Some(s)) = bir_ir::json::load_streaming_in(data, u64::MAX, window) {
            assert!(whole.as_ref().is_ok_and(|p| *p == s), "the stream read another program (window {window})");
        }
    }
    let Ok(p) = whole else { return };
    let again = bir_ir::json::load_str(&bir_ir::json::to_json_string(&p));
    match again {
        Ok(q) => assert!(q == p, "writing then reading changed the program"),
        Err(e) => panic!("the canonical form of a loaded program does not load: {e}"),
    }
    let _ = bir_ir::validate(&p, &validate_options());
}

/// Target 2's input: one AP over one layout.
#[derive(Arbitrary, Debug)]
pub struct ApCase {
    partitioned: bool,
    partitions: u8,
    partition_bytes: u16,
    stride_pad: u8,
    origin: u8,
    elem_size_log2: u8,
    offset: Num,
    levels: Vec<(Num, Num)>,
}

/// A number biased towards the values that break address arithmetic.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Num {
    /// 0..=255.
    Small(u8),
    /// A negative small number.
    Negative(u8),
    /// One of [`INTERESTING`].
    Interesting(u8),
    /// Anything.
    Raw(i64),
}

/// Boundary values: zero, ±1, powers of two and their neighbours, the 32- and 64-bit limits.
pub const INTERESTING: [i64; 20] = [
    0,
    1,
    -1,
    2,
    31,
    32,
    33,
    127,
    128,
    129,
    4096,
    i32::MAX as i64,
    i32::MIN as i64,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 62,
    i64::MAX,
    i64::MIN,
    -(1 << 40),
];

impl Num {
    /// The value.
    pub fn get(self) -> i64 {
        match self {
            Num::Small(v) => i64::from(v),
            Num::Negative(v) => -i64::from(v),
            Num::Interesting(k) => INTERESTING[usize::from(k) % INTERESTING.len()],
            Num::Raw(v) => v,
        }
    }
}

/// Target 2: linearisation and bounds of an AP; in-bounds reads and writes against the odometer.
pub fn access_pattern(c: &ApCase) {
    let elem_size = 1usize << (c.elem_size_log2 % 4);
    let parts = u64::from(c.partitions % 129);
    let pb = u64::from(c.partition_bytes % 4097);
    let layout = if c.partitioned {
        Layout::partitioned(usize::from(c.origin), parts, pb, pb + u64::from(c.stride_pad % 17))
    } else {
        Layout::flat(usize::from(c.origin), parts * pb)
    };
    let pairs: Vec<ApPair> = c.levels.iter().take(6).map(|(s, n)| ApPair::new(s.get(), n.get())).collect();
    let p = Pattern { pairs: &pairs, offset: c.offset.get(), elem_size };
    let elements = p.elements();
    if let Ok(runs) = p.runs() {
        let _ = runs.remaining();
    }
    let bounds = access_pattern::check_bounds(&layout, &p);
    let Some(span) = layout.span() else { return };
    let (Ok(n), Ok(())) = (elements, bounds) else { return };
    if n > 1 << 14 {
        return;
    }
    let n = n as usize;
    // The slow obvious twin: every element's address by an odometer over the levels.
    let mut want = Vec::with_capacity(n);
    let mut idx = vec![0i64; pairs.len()];
    for _ in 0..n {
        let e = pairs.iter().zip(&idx).fold(p.offset, |e, (q, i)| e + q.step * i);
        let at = layout.address(e, elem_size).expect("check_bounds passed, so every element is inside");
        want.push(at);
        for l in (0..pairs.len()).rev() {
            idx[l] += 1;
            if idx[l] < pairs[l].num {
                break;
            }
            idx[l] = 0;
        }
    }
    let buf: Vec<u8> = (0..span).map(|k| (k as u8).wrapping_mul(31).wrapping_add(7)).collect();
    let mut out = vec![0u8; n * elem_size];
    access_pattern::read(&buf, &layout, &p, &mut out).expect("an in-bounds read succeeds");
    for (k, at) in want.iter().enumerate() {
        assert_eq!(out[k * elem_size..(k + 1) * elem_size], buf[*at..*at + elem_size], "element {k}");
    }
    // Writing the elements back (as read) must leave the buffer as it was; writing distinct
    // values must land where the odometer says (the last write wins for repeated addresses).
    let mut copy = buf.clone();
    access_pattern::write(&mut copy, &layout, &p, &out).expect("an in-bounds write succeeds");
    assert!(copy == buf, "writing back what was read changed the buffer");
    let src: Vec<u8> = (0..n * elem_size).map(|k| (k % 251) as u8).collect();
    access_pattern::write(&mut copy, &layout, &p, &src).expect("an in-bounds write succeeds");
    let mut slow = buf.clone();
    for (k, at) in want.iter().enumerate() {
        slow[*at..*at + elem_size].copy_from_slice(&src[k * elem_size..(k + 1) * elem_size]);
    }
    assert!(copy == slow, "write disagrees with the per-element twin");
}

/// Target 4's structured input: locations and instructions drawn from the templates.
#[derive(Arbitrary, Debug)]
pub struct Spec {
    locs: Vec<LocSpec>,
    insts: Vec<InstSpec>,
}

#[derive(Arbitrary, Debug)]
struct LocSpec {
    kind: u8,
    mem: u8,
    dtype: u8,
    parts: u8,
    bytes: u8,
    allocated: bool,
    addr: u8,
}

#[derive(Arbitrary, Debug)]
struct InstSpec {
    template: u16,
    operands: Vec<OpSpec>,
    fields: Vec<(u8, FieldValue)>,
    trips: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct OpSpec {
    loc: u8,
    dtype: Option<u8>,
    offset: Option<Num>,
    levels: Option<Vec<(Num, Num)>>,
}

#[derive(Arbitrary, Debug)]
enum FieldValue {
    /// Another value this key takes in some template (an enum spelling, a flag).
    Seen(u8),
    /// A boundary number.
    Number(Num),
    /// A boolean.
    Bool(bool),
}

const DTYPES: [&str; 12] = [
    "float32", "bfloat16", "float16", "int32", "uint8", "int8", "uint16", "int16", "float8e4", "float8e5",
    "uint32", "int64",
];
const SIZES: [u64; 12] = [4, 2, 2, 4, 1, 1, 2, 2, 1, 1, 4, 8];
const PARTS: [u64; 8] = [1, 2, 4, 32, 128, 3, 64, 5];
const BYTES: [u64; 8] = [64, 256, 16, 2048, 8, 512, 4, 1024];

fn templates() -> &'static [Value] {
    static T: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    T.get_or_init(|| serde_json::from_str(include_str!("../templates.json")).unwrap_or_default())
}

/// Every scalar value a key takes across the templates (the spellings a mutation picks from).
fn seen_values(key: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for t in templates() {
        if let Some(v) = t.get(key)
            && !out.contains(v)
        {
            out.push(v.clone());
        }
    }
    out
}

fn ap_pairs(levels: &[(Num, Num)]) -> Value {
    Value::Array(levels.iter().take(5).map(|(s, n)| json!([s.get(), n.get()])).collect())
}

/// Renders a [`Spec`] as a BIR JSON program.
pub fn spec_json(spec: &Spec) -> Value {
    let locs: Vec<&LocSpec> = spec.locs.iter().take(4).collect();
    let mut allocations = Vec::new();
    for (k, l) in locs.iter().enumerate() {
        let d = usize::from(l.dtype) % DTYPES.len();
        let mem = ["SB", "PSUM", "DRAM", "SB"][usize::from(l.mem % 4)];
        let parts = PARTS[usize::from(l.parts) % PARTS.len()];
        let bytes = BYTES[usize::from(l.bytes) % BYTES.len()].max(SIZES[d]);
        let kind = ["Internal", "ExternalInput", "ExternalOutput"][usize::from(l.kind % 3)];
        let (mem, dims) = if mem == "DRAM" { ("DRAM", [1, parts * bytes]) } else { (mem, [parts, bytes]) };
        allocations.push(json!({
            "name": format!("l{k}"), "kind": kind, "dtype": DTYPES[d],
            "tensor_shape": [parts, bytes / SIZES[d]],
            "memorylocations": [{
                "name": format!("l{k}"), "type": mem, "dims": dims,
                "addr": u64::from(l.addr % 4) * 1024, "base": 0,
                "allocated": l.allocated && mem != "DRAM",
            }],
        }));
    }
    let ts = templates();
    let mut insts = Vec::new();
    for (k, s) in spec.insts.iter().take(8).enumerate() {
        if ts.is_empty() || locs.is_empty() {
            break;
        }
        let mut t = ts[usize::from(s.template) % ts.len()].clone();
        if let Some(o) = t.as_object_mut() {
            o.insert("name".into(), json!(format!("i{k}")));
        }
        let mut ops = s.operands.iter();
        for side in ["ins", "outs"] {
            let Some(list) = t.get_mut(side).and_then(Value::as_array_mut) else { continue };
            for op in list.iter_mut().filter(|o| o.get("memref").is_some()) {
                let spec = ops.next();
                let loc = spec.map_or(0, |o| usize::from(o.loc) % locs.len());
                op["memref"] = json!(format!("l{loc}"));
                let Some(o) = spec else { continue };
                if let Some(d) = o.dtype {
                    op["dtype"] = json!(DTYPES[usize::from(d) % DTYPES.len()]);
                }
                if let Some(off) = o.offset {
                    op["offset"] = json!(off.get());
                }
                if let Some(levels) = &o.levels
                    && !levels.is_empty()
                {
                    op["ap"] = ap_pairs(levels);
                }
            }
        }
        let keys: Vec<String> = t
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(k, v)| {
                        !matches!(k.as_str(), "name" | "opcode" | "ins" | "outs") && !v.is_array()
                    })
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        for (key, value) in s.fields.iter().take(4) {
            let Some(key) = keys.get(usize::from(*key) % keys.len().max(1)) else { break };
            t[key.as_str()] = match value {
                FieldValue::Seen(j) => {
                    let seen = seen_values(key);
                    seen.get(usize::from(*j) % seen.len().max(1)).cloned().unwrap_or(Value::Null)
                }
                FieldValue::Number(n) => json!(n.get()),
                FieldValue::Bool(b) => json!(b),
            };
        }
        let node = match s.trips {
            Some(n) => json!({
                "opcode": "Loop", "name": format!("loop{k}"),
                "LoopAxis": {"name": format!("v{k}"), "lb": 0, "ub": n % 5},
                "blocks": [{"name": format!("lb{k}"), "instructions": [t]}],
            }),
            None => t,
        };
        insts.push(node);
    }
    json!({
        "arch": "gen3", "version": 2,
        "functions": [{"name": "f", "allocations": allocations, "blocks": [{"name": "b", "instructions": insts}]}],
    })
}

/// The program target 4 runs for `data`: JSON bytes as they are, anything else through [`Spec`].
pub fn program_bytes(data: &[u8]) -> Option<Vec<u8>> {
    if data.first() == Some(&b'{') {
        return Some(data.to_vec());
    }
    let spec = Spec::arbitrary_take_rest(Unstructured::new(data)).ok()?;
    serde_json::to_vec(&spec_json(&spec)).ok()
}

/// What a run did: its outcome and, per executed instruction, the bytes written and checksums.
type Observed = (Option<Outcome>, Vec<(u64, u64, Vec<u64>)>);

fn observe(v: bir_ir::Validated<'_>, par: Parallelism) -> Observed {
    let mut sim = Simulator::new(v, numerics::Profile::refsim());
    sim.set_options(Options {
        parallelism: par,
        max_instructions: MAX_INSTRUCTIONS,
        memory_cap: OPERAND_CAP,
        ..Options::default()
    });
    sim.enable_trace();
    let outcome = match sim.run() {
        Ok(o) => Some(o),
        Err(e) => panic!("the simulator reported a bug: {e}"),
    };
    let trace = sim.trace().iter().map(|e| (e.index, e.bytes_written, e.checksums.clone())).collect();
    (outcome, trace)
}

/// Target 4: validate and run a program twice (1 thread; 2 threads, tiny chunks); the runs must
/// agree bit for bit.
pub fn run_program(data: &[u8]) {
    let Some(bytes) = program_bytes(data) else { return };
    let Ok(p) = bir_ir::json::load_slice(&bytes) else { return };
    let Ok(v) = bir_ir::validate(&p, &validate_options()) else { return };
    let one = observe(v, Parallelism { threads: 1, grain: 1 << 16 });
    let Ok(v) = bir_ir::validate(&p, &validate_options()) else { unreachable!("validated once") };
    let two = observe(v, Parallelism { threads: 2, grain: 3 });
    assert!(one == two, "the run differs between 1 and 2 threads:\n{one:?}\n{two:?}");
}

/// Target 5: any bytes as 64-byte ISA words (the last partial chunk zero-padded): decode never
/// panics; a decoded word re-encodes to its bytes, its JSON form reads back equal, and
/// `validate` runs for every generation.
pub fn isa_decode(data: &[u8]) {
    use indirection::isa::{Generation, Word, validate};
    for chunk in data.chunks(64) {
        let mut w = [0u8; 64];
        w[..chunk.len()].copy_from_slice(chunk);
        let Ok(word) = Word::decode(&w) else { continue };
        assert_eq!(word.encode(), w, "encode(decode(w)) != w for {word:?}");
        let text = serde_json::to_string(&word).expect("a decoded word serialises");
        let back: Word = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, word, "the JSON form changed the word: {text}");
        for g in Generation::ALL {
            let _ = validate(&word, g);
        }
    }
}
