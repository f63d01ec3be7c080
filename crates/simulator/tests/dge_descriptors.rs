//! Differential property tests (issue #13): for random APs (up to 5 levels, strided, negative
//! steps, odd sizes), dtypes, layouts (flat DRAM, private SB rows, SB rows in the shared arena,
//! rows whose byte size is not a multiple of the element) and indices in and out of bounds, the
//! descriptors `dge` generates for an instruction, executed against the simulator's store
//! through `DgeMemory`, leave every location byte-identical to the simulator running the same
//! instruction directly. DMACopy Copy / Transpose / Replicate, IndirectLoad, IndirectSave.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use bir_ir::{LocId, ValidateOptions, json, validate};
use dge::bir::{Context, Planned};
use numerics::Profile;
use simulator::dge_memory::DgeMemory;
use simulator::{IndirectOob, Options, Outcome, Simulator};
use test_rng::XorShift64Star;

/// Draws in an inclusive range and picks from a slice, over the shared xorshift64* stream (one
/// `below` each).
trait Draw {
    fn range(&mut self, lo: i64, hi: i64) -> i64;
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T;
}

impl Draw for XorShift64Star {
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// A memory location (one per allocation).
#[derive(Clone)]
struct Loc {
    name: &'static str,
    ty: &'static str,
    dtype: &'static str,
    parts: u64,
    bytes: u64,
    addr: u64,
    allocated: bool,
}

impl Loc {
    fn size(&self) -> usize {
        size_of(self.dtype)
    }
    /// Elements the location holds (the pitch rule).
    fn capacity(&self) -> i64 {
        (self.parts * (self.bytes / self.size() as u64)) as i64
    }
    fn json(&self) -> String {
        format!(
            r#"{{"name":"{0}","kind":"Internal","dtype":"{1}","tensor_shape":[{2}],"memorylocations":[{{"name":"{0}","type":"{3}","dims":[{4},{5}],"addr":{6},"allocated":{7}}}]}}"#,
            self.name,
            self.dtype,
            self.capacity().max(1),
            self.ty,
            self.parts,
            self.bytes,
            self.addr,
            self.allocated
        )
    }
}

fn size_of(dtype: &str) -> usize {
    match dtype {
        "uint8" | "int8" | "float8e3" | "float8e4" | "float8e5" => 1,
        "bfloat16" | "float16" | "int16" | "uint16" => 2,
        "int64" | "uint64" => 8,
        _ => 4,
    }
}

fn ap(mem: &str, dtype: &str, offset: i64, pairs: &[(i64, i64)]) -> String {
    let p: Vec<String> = pairs.iter().map(|(s, n)| format!("[{s},{n}]")).collect();
    format!(
        r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dtype}","offset":{offset},"ap":[{}]}}"#,
        p.join(",")
    )
}

fn inst(opcode: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"i","engine":"DMA","ins":[{}],"outs":[{}]{}{fields}}}"#,
        ins.join(","),
        outs.join(","),
        if fields.is_empty() { "" } else { "," }
    )
}

/// A random location for `dtype`: flat DRAM, private SB rows, arena SB rows, or rows whose
/// byte size leaves a tail (not a multiple of the element).
fn rand_loc(rng: &mut XorShift64Star, name: &'static str, dtype: &'static str, addr_slot: u64) -> Loc {
    let size = size_of(dtype) as u64;
    match rng.below(4) {
        0 => Loc {
            name,
            ty: "DRAM",
            dtype,
            parts: 1,
            bytes: size * rng.range(64, 400) as u64,
            addr: 0,
            allocated: false,
        },
        1 => Loc {
            name,
            ty: "SB",
            dtype,
            parts: rng.range(2, 9) as u64,
            bytes: size * rng.range(8, 40) as u64,
            addr: 0,
            allocated: false,
        },
        2 => Loc {
            name,
            ty: "SB",
            dtype,
            parts: rng.range(2, 9) as u64,
            bytes: size * rng.range(8, 40) as u64,
            addr: addr_slot * 512,
            allocated: true,
        },
        _ => Loc {
            name,
            ty: "SB",
            dtype,
            parts: rng.range(2, 9) as u64,
            bytes: size * rng.range(8, 40) as u64 + (size - 1).max(1),
            addr: 0,
            allocated: false,
        },
    }
}

/// Steps for `nums` (outermost first): each level's step is the inner span (contiguous), the
/// span plus a gap, or their negatives (all injective), or — when `loose` — a small or zero step.
fn rand_steps(rng: &mut XorShift64Star, nums: &[i64], loose: bool) -> Vec<i64> {
    let mut steps = vec![0i64; nums.len()];
    let mut span = 1i64; // extent of the inner levels
    for k in (0..nums.len()).rev() {
        let c = rng.below(if loose { 7 } else { 5 });
        let s = match c {
            0 | 1 => span,
            2 => span + rng.range(1, 3),
            3 => -span,
            4 => -(span + rng.range(1, 2)),
            5 => rng.range(-3, 3),
            _ => 0,
        };
        // Validation: the partition-dim (level 0) step must not be negative.
        steps[k] = if k == 0 { s.abs() } else { s };
        span += s.abs() * (nums[k] - 1);
    }
    steps
}

/// Places levels inside a location of `cap` elements: the offset, or `None` if they do not fit.
fn place(rng: &mut XorShift64Star, cap: i64, nums: &[i64], steps: &[i64]) -> Option<i64> {
    let (mut lo, mut hi) = (0i64, 0i64);
    for (n, s) in nums.iter().zip(steps) {
        let span = s * (n - 1);
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    if hi - lo >= cap {
        return None;
    }
    Some(-lo + rng.range(0, cap - 1 - (hi - lo)))
}

fn pairs(nums: &[i64], steps: &[i64]) -> Vec<(i64, i64)> {
    steps.iter().zip(nums).map(|(s, n)| (*s, *n)).collect()
}

/// A random factorisation of `total` into 1..=5 levels (outermost first).
fn factor(rng: &mut XorShift64Star, total: i64) -> Vec<i64> {
    let mut rest = total;
    let mut out = Vec::new();
    let levels = rng.range(1, 5);
    for _ in 1..levels {
        let divs: Vec<i64> = (1..=rest).filter(|d| rest % d == 0).collect();
        let d = *rng.pick(&divs);
        out.push(d);
        rest /= d;
    }
    out.push(rest);
    out
}

/// Outcome of one side: every location's bytes, or an error/fault text.
type Side = Result<Vec<Vec<u8>>, String>;

/// Runs `text`'s single instruction directly and through descriptors.
fn twin(
    locs: &[Loc],
    insts: &str,
    init: &[Vec<u8>],
    oob: IndirectOob,
    index: Option<&[u8]>,
) -> Option<(Side, Side, usize)> {
    let allocs: Vec<String> = locs.iter().map(Loc::json).collect();
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{}],"blocks":[{insts}]}}]}}"#,
        allocs.join(",")
    );
    let prog = json::load_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Err(e) = validate(&prog, &ValidateOptions::default()) {
        if std::env::var("DGE_DEBUG").is_ok() {
            eprintln!("INVALID {:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>());
        }
        return None;
    }
    let f0 = &prog.functions[0];
    let fresh = || {
        let v = validate(&prog, &ValidateOptions::default()).unwrap();
        let mut sim = Simulator::new(v, Profile::refsim());
        sim.set_options(Options { indirect_oob: oob, ..Options::default() });
        for (k, l) in f0.locations.iter().enumerate() {
            sim.memory_mut().load(l, LocId(k as u32), &init[k]).unwrap();
        }
        sim
    };
    let dump = |sim: &mut Simulator<'_>| -> Vec<Vec<u8>> {
        f0.locations
            .iter()
            .enumerate()
            .map(|(k, l)| sim.memory_mut().dump(l, LocId(k as u32), init[k].len()).unwrap())
            .collect()
    };
    let mut a = fresh();
    let direct = match a.run().unwrap() {
        Outcome::Finished => Ok(dump(&mut a)),
        Outcome::Faulted(f) => Err(f.message()),
    };
    let mut b = fresh();
    let lays: Vec<_> = (0..f0.locations.len()).map(|k| b.memory().layout(LocId(k as u32))).collect();
    let layout = |l: LocId| lays[l.index()];
    let ctx = Context {
        function: f0,
        layout: &layout,
        oob: match oob {
            IndirectOob::Fault => indirection::Oob::Fault,
            IndirectOob::Skip => indirection::Oob::Skip,
        },
    };
    let mut first = None;
    f0.for_each_instruction(&mut |i| {
        if first.is_none() {
            first = Some(i);
        }
    });
    let planned = dge::bir::plan(&ctx, first.unwrap(), index).expect("a DMA");
    let mut n = 0;
    let via = match planned {
        Ok(Planned::Descriptors(list)) => {
            n = list.len();
            match dge::execute(&list, &mut DgeMemory::new(b.memory_mut())) {
                Ok(()) => Ok(dump(&mut b)),
                Err(e) => {
                    let shown: Vec<String> = list.iter().take(12).map(|d| d.to_string()).collect();
                    let lays: Vec<String> = lays.iter().map(|l| format!("{l:?}")).collect();
                    Err(format!("execute: {e}\n{}\nlayouts {}", shown.join("\n"), lays.join(" ")))
                }
            }
        }
        Ok(Planned::Static(s)) => Err(format!("static: {s}")),
        Err(e) => Err(format!("generate: {e}")),
    };
    Some((direct, via, n))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

/// Asserts the two sides agree: both fail, or both succeed with equal bytes (hex on mismatch).
fn agree(case: &str, locs: &[Loc], direct: &Side, via: &Side) {
    match (direct, via) {
        (Ok(x), Ok(y)) => {
            for (k, (p, q)) in x.iter().zip(y).enumerate() {
                if p != q {
                    let at = p.iter().zip(q).position(|(a, b)| a != b).unwrap_or(0);
                    let w = at.saturating_sub(8)..(at + 24).min(p.len());
                    panic!(
                        "{case}\nlocation {} differs first at byte {at}\ndirect: {}\ndescr.: {}",
                        locs[k].name,
                        hex(&p[w.clone()]),
                        hex(&q[w])
                    );
                }
            }
        }
        (Err(_), Err(_)) => {}
        _ => panic!("{case}\ndirect: {:?}\ndescr.: {:?}", direct.as_ref().err(), via.as_ref().err()),
    }
}

const DTYPES: [&str; 5] = ["float32", "bfloat16", "uint8", "int64", "int16"];

fn random_init(rng: &mut XorShift64Star, locs: &[Loc]) -> Vec<Vec<u8>> {
    locs.iter().map(|l| (0..l.parts * l.bytes).map(|_| rng.next_u64() as u8).collect()).collect()
}

/// One random DMACopy case between a source `s` of shape `sn` and a destination `d` of shape
/// `dn` (random steps, `contiguous_src` asking for a mostly contiguous source, random
/// placement and contents), `mode` the instruction's mode fields: run directly and through
/// its descriptors, which must agree. `None` when the random placement does not fit;
/// otherwise how many descriptors it took.
fn dma_case(
    rng: &mut XorShift64Star,
    case: usize,
    dt: &'static str,
    sn: &[i64],
    dn: &[i64],
    contiguous_src: bool,
    mode: &str,
) -> Option<usize> {
    let locs = [rand_loc(rng, "s", dt, 0), rand_loc(rng, "d", dt, 1)];
    let ss = rand_steps(rng, sn, contiguous_src);
    let ds = rand_steps(rng, dn, false);
    let so = place(rng, locs[0].capacity(), sn, &ss)?;
    let doff = place(rng, locs[1].capacity(), dn, &ds)?;
    let text =
        inst("DMACopy", &[ap("s", dt, so, &pairs(sn, &ss))], &[ap("d", dt, doff, &pairs(dn, &ds))], mode);
    let init = random_init(rng, &locs);
    let (direct, via, n) = twin(&locs, &text, &init, IndirectOob::Fault, None)?;
    assert!(direct.is_ok(), "case {case}: {direct:?}\n{text}");
    agree(&format!("case {case}: {text}"), &locs, &direct, &via);
    Some(n)
}

#[test]
fn dma_copy_descriptors_equal_the_direct_copy() {
    let mut rng = XorShift64Star::new(0x5EED_0001);
    let (mut ran, mut multi) = (0, 0);
    for case in 0..600 {
        let dt = *rng.pick(&DTYPES);
        let levels = rng.range(1, 5) as usize;
        let nums: Vec<i64> = (0..levels).map(|_| rng.range(1, 5)).collect();
        let total: i64 = nums.iter().product();
        let dn = factor(&mut rng, total);
        let Some(n) = dma_case(&mut rng, case, dt, &nums, &dn, true, r#""mode":"Copy""#) else { continue };
        ran += 1;
        multi += usize::from(n > 1);
    }
    assert!(ran > 300, "only {ran} cases validated");
    assert!(multi > 50, "only {multi} cases needed more than one descriptor");
}

#[test]
fn dma_transpose_descriptors_equal_the_direct_transpose() {
    const CODES: [&str; 14] = [
        "None", "WZXY", "WXZY", "WYXZ", "ZWYX", "ZYWX", "ZYXW", "YXWZ", "YXZW", "YWZX", "XWZY", "XZYW",
        "XYZW", "XYWZ",
    ];
    let mut rng = XorShift64Star::new(0x5EED_0002);
    let mut ran = 0;
    for case in 0..400 {
        let dt = *rng.pick(&DTYPES);
        let code = rng.below(14) as usize;
        let op = <bir_ir::TransposeOps as bir_ir::BirEnum>::from_ordinal(code as u64).unwrap();
        let perm = op.permutation();
        let sn: Vec<i64> = (0..4).map(|_| rng.range(1, 4)).collect();
        let dn: Vec<i64> = perm.iter().map(|&p| sn[p]).collect();
        let mode = format!(r#""mode":"Transpose","transpose_op":"{}""#, CODES[code]);
        if dma_case(&mut rng, case, dt, &sn, &dn, false, &mode).is_some() {
            ran += 1;
        }
    }
    assert!(ran > 200, "only {ran} cases validated");
}

#[test]
fn dma_replicate_descriptors_equal_the_direct_replicate() {
    let mut rng = XorShift64Star::new(0x5EED_0003);
    let mut ran = 0;
    for case in 0..300 {
        let dt = *rng.pick(&DTYPES);
        let (sp, f, r) = (rng.range(1, 3), rng.range(1, 6), rng.range(1, 3));
        if dma_case(&mut rng, case, dt, &[sp, f], &[sp * r, f], false, r#""mode":"Replicate""#).is_some() {
            ran += 1;
        }
    }
    assert!(ran > 150, "only {ran} cases validated");
}

/// IndirectLoad (`save` false) or IndirectSave: a V-entry table of L-element entries `step`
/// apart, `n` int32 indices (some ≥ V, some −1 = 4294967295 out of bounds), the dense side rows of
/// L; under `Skip` both sides leave the out-of-bounds rows alone, under `Fault` both refuse.
fn indirect_case(rng: &mut XorShift64Star, save: bool, oob: IndirectOob) -> Option<(String, Side, Side)> {
    let dt = *rng.pick(&DTYPES);
    let (l, v, n) = (rng.range(1, 6), rng.range(1, 8), rng.range(1, 16));
    let step = l + rng.range(0, 2);
    let table = Loc {
        name: "t",
        ty: "DRAM",
        dtype: dt,
        parts: 1,
        bytes: (step * v + 3) as u64 * size_of(dt) as u64,
        addr: 0,
        allocated: false,
    };
    let dense = rand_loc(rng, "v", dt, 1);
    let idx = Loc {
        name: "x",
        ty: "DRAM",
        dtype: "int32",
        parts: 1,
        bytes: 4 * n as u64,
        addr: 0,
        allocated: false,
    };
    let locs = [table, dense, idx];
    let dn = [n, l];
    let ds = [if rng.below(2) == 0 { l } else { l + rng.range(1, 3) }, 1];
    let doff = place(rng, locs[1].capacity(), &dn, &ds)?;
    let toff = rng.range(0, 2);
    let t_ap = ap("t", dt, toff, &[(1, 1), (step, v)]);
    let d_ap = ap("v", dt, doff, &pairs(&dn, &ds));
    let x_ap = ap("x", "int32", 0, &[(n, 1), (1, n)]);
    let text = if save {
        inst("IndirectSave", &[d_ap, x_ap], &[t_ap], "")
    } else {
        inst("IndirectLoad", &[t_ap, x_ap], &[d_ap], "")
    };
    let mut init = random_init(rng, &locs);
    let ids: Vec<i32> = (0..n)
        .map(|_| match rng.below(10) {
            0 => v as i32 + rng.range(0, 2) as i32,
            1 => -1,
            _ => rng.range(0, v - 1) as i32,
        })
        .collect();
    init[2] = ids.iter().flat_map(|x| x.to_le_bytes()).collect();
    let index = init[2].clone();
    let (direct, via, _) = twin(&locs, &text, &init, oob, Some(&index))?;
    agree(&text, &locs, &direct, &via);
    Some((text, direct, via))
}

#[test]
fn indirect_load_and_save_descriptors_equal_the_direct_ops() {
    let mut rng = XorShift64Star::new(0x5EED_0004);
    let (mut ok, mut faults) = (0, 0);
    for case in 0..400 {
        let save = case % 2 == 1;
        let oob = if case % 4 < 2 { IndirectOob::Skip } else { IndirectOob::Fault };
        if let Some((_, direct, _)) = indirect_case(&mut rng, save, oob) {
            if direct.is_ok() {
                ok += 1;
            } else {
                faults += 1;
            }
        }
    }
    assert!(ok > 150 && faults > 30, "ok {ok}, faults {faults}");
}

/// IndirectSaveAccumulate: P partitions × E slots of int32 indices (some out of bounds, some
/// duplicates), `num_indices` used slots (sometimes more than E: both refuse), values rows of L,
/// entries `step` apart; `add` over the dtypes cast_copy_or_accumulate reduces (floats rounding
/// at every step, int32 / int64 wrapping: ADD descriptors in plan order, G47) or `bypass` over
/// any dtype.
#[test]
fn indirect_save_accumulate_descriptors_equal_the_direct_op() {
    const ADD: [&str; 7] = ["float32", "bfloat16", "float16", "float8e4", "float8e5", "int32", "int64"];
    let mut rng = XorShift64Star::new(0x5EED_0005);
    let (mut ok, mut faults) = (0, 0);
    for case in 0..300 {
        let add = rng.below(3) != 0;
        let dt = if add { *rng.pick(&ADD) } else { *rng.pick(&DTYPES) };
        let (l, v, p, e) = (rng.range(1, 4), rng.range(1, 6), rng.range(1, 3), rng.range(1, 5));
        let step = l + rng.range(0, 1);
        let extra = i64::from(rng.below(8) == 0);
        let num = rng.range(0, e + extra);
        let n = p * e;
        let table = Loc {
            name: "t",
            ty: "DRAM",
            dtype: dt,
            parts: 1,
            bytes: (step * v + 2) as u64 * size_of(dt) as u64,
            addr: 0,
            allocated: false,
        };
        let vals = rand_loc(&mut rng, "v", dt, 1);
        let idx = Loc {
            name: "x",
            ty: "DRAM",
            dtype: "int32",
            parts: 1,
            bytes: 4 * n as u64,
            addr: 0,
            allocated: false,
        };
        let locs = [table, vals, idx];
        let (dn, ds) = ([n, l], [l, 1]);
        let Some(voff) = place(&mut rng, locs[1].capacity(), &dn, &ds) else { continue };
        let text = inst(
            "IndirectSaveAccumulate",
            &[ap("v", dt, voff, &pairs(&dn, &ds)), ap("x", "int32", 0, &[(e, p), (1, e)])],
            &[ap("t", dt, 0, &[(1, 1), (step, v)])],
            &format!(
                r#""num_indices":{num},"entry_step_elements":{step},"op":"{}""#,
                if add { "add" } else { "bypass" }
            ),
        );
        let mut init = random_init(&mut rng, &locs);
        // Finite small values for the float adds (so the sums are ordinary numbers): bytes as
        // given are fine for bypass; for add keep NaN/Inf out by clearing the top exponent bit.
        if add {
            for part in init.iter_mut().take(2) {
                part.iter_mut().for_each(|b| *b &= 0xBF);
            }
        }
        let ids: Vec<i32> = (0..n)
            .map(|_| match rng.below(8) {
                0 => v as i32 + rng.range(0, 1) as i32,
                _ => rng.range(0, v - 1) as i32,
            })
            .collect();
        init[2] = ids.iter().flat_map(|x| x.to_le_bytes()).collect();
        let index = init[2].clone();
        let oob = if case % 2 == 0 { IndirectOob::Skip } else { IndirectOob::Fault };
        let Some((direct, via, _)) = twin(&locs, &text, &init, oob, Some(&index)) else { continue };
        agree(&text, &locs, &direct, &via);
        if direct.is_ok() {
            ok += 1;
        } else {
            faults += 1;
        }
    }
    assert!(ok > 120 && faults > 20, "ok {ok}, faults {faults}");
}
