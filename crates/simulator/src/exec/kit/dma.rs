//! The DMA datapath: DMACopy's mode multiplexer (seed 000 §5.2; docs/fidelity.md D1–D4), run by
//! DMACopy (`kernels/dma.rs`) and by every descriptor a fired SW-DGE block runs
//! (`kernels/dge.rs`):
//!
//! - Copy: `doCopy` (§5.1); with a scalar dynamic offset the AP's offset grows by the index times
//!   the step of the level its letter names, and an out-of-bounds access faults (`oob_is_err`) or
//!   copies only the element pairs whose both addresses are inside their locations (D1).
//! - Transpose: code 0 is `doCopy`; codes 1..13 permute 4-level APs,
//!   `dst = numpy.transpose(src, perm)` with `perm` the TransposeOps table (re-facts §3; D2),
//!   one cache-blocked pass dispatched on element width. A transpose that casts into, out of
//!   or between packed `_x4` dtypes casts first, in the source's order, packing 4 consecutive
//!   X values per container or unpacking them (the source counted `[W, Z, Y, X/4]` or
//!   `[W, Z, Y, 4X]`, [`packed_shape`]; an X that does not pack faults `dims` on outs[0]), then
//!   permutes the containers (K3).
//! - Replicate: `dst = numpy.tile(src, (dst_parts / src_parts, 1))` (D3).
//! - CCE: an N-input fp32 reduce (add/max/min, optional per-input scale; D4).
//!
//! Every mode reads all its inputs before it writes (§5.1). A Copy with a vector dynamic offset
//! is the HW-DGE bridge (§7; re-facts §5; G6–G8, G50–G58):
//!
//! - DMACopy Copy with a `vector_offset` (uint16 indices) on one AP is a scatter (`outs[0]`) or
//!   a gather (`ins[0]`, G6): dense row i (the other AP's level-0 coordinate i) ↔ the indexed AP
//!   with its `indirect_dim` level's num taken as 1 and its offset moved by `index[i]·stride`
//!   (`getIndirectAddrsVector`: `dst += dtype_size·stride·index[i]`, `src += i·partition_stride`).
//!   Every index is decoded and bound-checked by `indirection::plan::rows` before anything is
//!   written (index ≥ `indirect_dim_max_index`, or a row leaving its location: skipped, or a
//!   fault with `oob_is_err`; G7, G8). Rows then apply serially in i order, each read whole and
//!   then written (copy, cast like doCopy) or added through the one accumulate (`cce_op` add,
//!   G54); duplicates: last writer wins / accumulate in order, rounding every step.
//!   Fast path (G55): a scatter between different buffers whose rows are all distinct (no
//!   duplicate index, a row walk that visits each element once) reads the dense side once and
//!   runs `indirection::scatter`; `tests/dge.rs` checks it against the serial path.
//!
//! [`classify_mode`] is the support classifier of every form (DMACopy's and the descriptors').

use super::facts::{
    Fact, Facts, OFFSET_VECTOR, OTHER_VECTOR, REDUCE_ADD, REDUCE_BYPASS, VECTOR_ELSEWHERE, Verdict,
};
use super::transpose::permute_bytes;
use super::{Arg, Cx, Res, Stop, Written, bug, fault, record_entries, same_count, unclassified};
use crate::fault::{FaultCause, Slot};
use access_pattern::{ApError, Pattern};
use bir_ir::ops::DmaCopyFields;
use bir_ir::{
    AccessPattern, AluOp, CopyMode, Dtype, EngineAccumulationType, Instruction, MemoryReductionOp,
    TransposeOps,
};
use indirection::plan::{self, Oob, Step, Table};
use indirection::{Entry, IndirectError};
use numerics::alu::{fmaxf, fminf};

/// The source shape of a DMA transpose counted in the destination's dtype (K3): the source is
/// read converted to `dst` in its own AP order, so packing into an `_x4` dtype groups 4
/// consecutive values along X (`[W, Z, Y, X/4]`, `None` when X is not a multiple of 4),
/// unpacking one gives `[W, Z, Y, 4X]`, and equal lane counts keep the shape.
pub(crate) fn packed_shape(sn: [usize; 4], src: Dtype, dst: Dtype) -> Option<[usize; 4]> {
    let (ls, ld) = (src.lanes(), dst.lanes());
    let [w, z, y, x] = sn;
    if ls == ld {
        Some(sn)
    } else if ld > ls {
        let k = ld / ls;
        x.is_multiple_of(k).then(|| [w, z, y, x / k])
    } else {
        Some([w, z, y, x.saturating_mul(ls / ld)])
    }
}

/// The 4 nums of a 4-level AP.
fn nums4(a: Arg<'_>) -> Res<[usize; 4]> {
    let p = &a.ap.pairs;
    if p.len() != 4 {
        return fault(FaultCause::Dims {
            slot: a.slot,
            why: "a DMA transpose needs a 4-level access pattern",
        });
    }
    let mut n = [0usize; 4];
    for (k, pair) in p.iter().enumerate() {
        n[k] = usize::try_from(pair.num).map_err(|_| a.access(ApError::Overflow { dim: k }))?;
    }
    Ok(n)
}

/// The flat element index of every element of an AP, in AP order.
pub(crate) fn element_indices(a: Arg<'_>) -> Res<Vec<i64>> {
    let n = a.elements()?;
    let mut out = Vec::new();
    crate::alloc::reserve(&mut out, n)?;
    let pairs = &a.ap.pairs;
    let mut coord = vec![0i64; pairs.len()];
    for _ in 0..n {
        let mut e = a.ap.offset;
        for (c, p) in coord.iter().zip(pairs) {
            e = e.saturating_add(c.saturating_mul(p.step));
        }
        out.push(e);
        for l in (0..pairs.len()).rev() {
            coord[l] += 1;
            if coord[l] < pairs[l].num {
                break;
            }
            coord[l] = 0;
        }
    }
    Ok(out)
}

/// A one-element AP at flat element `e` of `ap`'s location.
pub(crate) fn one_element(ap: &AccessPattern, e: i64) -> AccessPattern {
    AccessPattern {
        loc: ap.loc,
        dtype: ap.dtype,
        offset: e,
        pairs: std::iter::once(bir_ir::ApPair::new(1, 1)).collect(),
        dynamic: None,
    }
}

/// A plan error of the bridge, located at the AP carrying the vector offset.
fn located(slot: Slot, e: IndirectError) -> Stop {
    match e {
        IndirectError::OutOfBounds { position, value, bound, .. } => {
            FaultCause::DgeIndexOutOfBounds { slot, element: position, value, bound }.into()
        }
        IndirectError::LeavesLocation { position, value, lo, hi, capacity, .. } => {
            FaultCause::DgeRowOutside { slot, element: position, value, lo, hi, capacity }.into()
        }
        e => FaultCause::Indirect(e).into(),
    }
}

/// An AP with its level `level`'s num taken as 1 and its offset at `offset` (one row).
fn row_ap(ap: &AccessPattern, level: usize, offset: i64) -> AccessPattern {
    let mut r = ap.clone();
    r.dynamic = None;
    r.offset = offset;
    if let Some(p) = r.pairs.get_mut(level) {
        p.num = 1;
    }
    r
}

/// DMACopy in `mode`, or a descriptor running as its DMACopy twin (`Cx::dma_copy`,
/// `Cx::hw_dge`). Scalar offsets run in every mode (the floor resolves them, `kit::offsets`;
/// D1, D18); a vector offset is the HW-DGE arm of Copy mode only (seed 000 §5.2), on one AP
/// only (§7 `getIndirectArgId` finds one offset argument; G56).
pub(crate) fn classify_mode(mode: CopyMode, q: &dyn Facts) -> Verdict {
    if mode == CopyMode::Dynamic {
        return Verdict::not_implemented("DMACopy in Dynamic mode");
    }
    match q.get(Fact::Dynamic) {
        OTHER_VECTOR => {}
        _ => return Verdict::runs("scalar dynamic offsets resolved before the mode runs (D1, D18)"),
    }
    if mode != CopyMode::Copy {
        return Verdict::rejected(
            "bir-ir validation: a vector offset outside Copy mode (seed 000 §5.2 routes only Copy mode to the vector-indirect HW-DGE arm)",
        );
    }
    if q.get(Fact::OtherOffset) == OTHER_VECTOR {
        return Verdict::rejected(VECTOR_ELSEWHERE);
    }
    let (s, d) = (q.get(Fact::SrcOffset), q.get(Fact::DstOffset));
    match (s == OFFSET_VECTOR, d == OFFSET_VECTOR) {
        (true, true) => {
            return Verdict::rejected(
                "bir-ir validation: a vector offset on both access patterns (seed 000 §7: getIndirectArgId reads one offset argument)",
            );
        }
        (false, false) => return Verdict::rejected(VECTOR_ELSEWHERE),
        _ => {}
    }
    match q.get(Fact::DgeReduce) {
        REDUCE_BYPASS => {
            Verdict::runs("the HW-DGE gather/scatter (G6), a scalar offset on the other AP resolved first")
        }
        REDUCE_ADD => {
            if !q.yes(Fact::OutReducible) {
                return Verdict::rejected(
                    "a HW-DGE add into a dtype cast_accumulate cannot reduce (a numerics fault)",
                );
            }
            Verdict::runs("the HW-DGE scatter/gather with add, serial in index order (G54, G57)")
        }
        _ => Verdict::rejected("the HW-DGE reduce-on-write is bypass or add (an unsupported-op fault)"),
    }
}

impl Cx<'_> {
    /// DMACopy: dispatch on `mode` (§5.2).
    pub(crate) fn dma_copy(&mut self, i: &Instruction, f: &DmaCopyFields, regions: &mut Written) -> Res<()> {
        if f.mode != CopyMode::Copy
            && i.ins.iter().chain(&i.outs).any(|o| o.as_ap().is_some_and(|a| a.vector_offset().is_some()))
        {
            return unclassified(
                "a vector dynamic offset (HW-DGE) outside DMACopy Copy mode (validation refuses it)",
            );
        }
        match f.mode {
            CopyMode::Copy => self.dma_plain(i, f, regions),
            CopyMode::Transpose => self.dma_transpose(i, f.transpose_op, regions),
            CopyMode::Replicate => self.dma_replicate(i, regions),
            CopyMode::Cce => self.dma_cce(i, f, regions),
            CopyMode::Dynamic => unclassified("DMACopy in Dynamic mode"),
        }
    }

    /// Copy mode: `doCopy` (its scalar offsets already resolved by the floor, `kit::offsets`),
    /// or the HW-DGE bridge for a vector offset.
    fn dma_plain(&mut self, i: &Instruction, f: &DmaCopyFields, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        if src.ap.vector_offset().is_some() || dst.ap.vector_offset().is_some() {
            return self.hw_dge(f, src, dst, regions);
        }
        self.do_copy(i, regions)
    }

    /// `doCopy` with seed 000 §5.1's DMACopy OOB flag: when the floor found a scalar offset out
    /// of bounds and `oob_is_err` is false, only the element pairs whose both addresses are
    /// inside are copied (D1).
    fn do_copy(&mut self, i: &Instruction, regions: &mut Written) -> Res<()> {
        if !self.oob_tolerated {
            return self.copy(i, regions);
        }
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        self.copy_in_bounds_pairs(src, dst, regions)
    }

    /// Tolerated out-of-bounds copy (D1): pair k (k-th source element, k-th destination
    /// element) is copied only when both addresses are inside their locations.
    fn copy_in_bounds_pairs(&mut self, src: Arg<'_>, dst: Arg<'_>, regions: &mut Written) -> Res<()> {
        let (si, di) = (element_indices(src)?, element_indices(dst)?);
        same_count(dst.slot, si.len(), di.len(), "a copy writes as many elements as it reads")?;
        let (ssz, dsz) = (self.storage(src.ap).size(), self.storage(dst.ap).size());
        let (sl, dl) = (self.memory.layout(src.ap.loc), self.memory.layout(dst.ap.loc));
        let mut keep: Vec<(i64, i64)> = Vec::new();
        crate::alloc::reserve(&mut keep, si.len())?;
        let kept = si
            .iter()
            .zip(&di)
            .filter(|(s, d)| sl.address(**s, ssz).is_some() && dl.address(**d, dsz).is_some())
            .map(|(s, d)| (*s, *d));
        keep.extend(kept);
        // Read every kept source element first (§5.1), then write.
        let one = one_element;
        let dt = dst.ap.dtype;
        let mut vals = Vec::new();
        crate::alloc::reserve(&mut vals, keep.len())?;
        let mut bytes = self.pool.take();
        for &(s, _) in &keep {
            let ap = one(src.ap, s);
            self.read(src.with(&ap), dt, &mut bytes)?;
            vals.push(crate::alloc::copied(&bytes)?);
        }
        self.pool.give(bytes);
        for (&(_, d), v) in keep.iter().zip(&vals) {
            let ap = one(dst.ap, d);
            self.write(dst.with(&ap), dt, v, regions)?;
        }
        Ok(())
    }

    /// Transpose mode (D2).
    fn dma_transpose(&mut self, i: &Instruction, op: TransposeOps, regions: &mut Written) -> Res<()> {
        if op == TransposeOps::None {
            return self.do_copy(i, regions);
        }
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        let (sn, dn) = (nums4(src)?, nums4(dst)?);
        let dt = dst.ap.dtype;
        // The source as it is after the cast to dt in its own order (K3).
        let Some(sn) = packed_shape(sn, src.ap.dtype, dt) else {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "a DMA transpose that packs into an x4 dtype needs the source's X count a multiple of 4",
            });
        };
        let perm = op.permutation();
        if perm.map(|p| sn[p]) != dn {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "a DMA transpose needs dst.num[k] = src.num[perm[k]] (the source counted in the destination's dtype)",
            });
        }
        let par = self.options.parallelism;
        if src.ap.dtype == dt
            && let (Some(sr), Some(dr)) = (self.contiguous(src)?, self.contiguous(dst)?)
            && sr.len() == dr.len()
        {
            // Both single contiguous runs of their memory's own dtype in distinct buffers: one
            // pass from memory to memory.
            let size = dt.size();
            let ts = crate::memory::Touch { range: Some(sr.clone()), covers: false };
            let td = crate::memory::Touch { range: Some(dr.clone()), covers: true };
            let done = self.memory.with_two((src.ap.loc, &ts), (dst.ap.loc, &td), |sb, _, db, _| {
                permute_bytes(&sb[sr.clone()], size, sn, perm, &mut db[dr.clone()], par);
            });
            if done.is_some() {
                let memory = &mut self.memory;
                regions.record_region(
                    |h| super::fnv1a(h, &memory.buffer_for(dst.ap.loc, &td).0[dr.clone()]),
                    dr.len() as u64,
                );
                return Ok(());
            }
        }
        let (mut a, mut b) = (self.pool.take(), self.pool.take());
        let r = self.read(src, dt, &mut a).and_then(|()| {
            crate::alloc::resize(&mut b, a.len(), 0)?;
            // Elements of dt after the cast: an x4 container moves whole, as one element of its
            // container size (D2, K3), and the read packed or unpacked the source along X.
            permute_bytes(&a, dt.size(), sn, perm, &mut b, par);
            self.write(dst, dt, &b, regions)
        });
        self.pool.give(a);
        self.pool.give(b);
        r
    }

    /// Replicate mode (D3): 2-level APs, dst partition p ← src partition p mod src partitions.
    fn dma_replicate(&mut self, i: &Instruction, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        for a in [src, dst] {
            if a.ap.pairs.len() != 2 {
                return fault(FaultCause::Dims {
                    slot: a.slot,
                    why: "DMA replicate needs a 2-level access pattern",
                });
            }
        }
        let ((sp, sf), (dp, df)) = (src.shape()?, dst.shape()?);
        if sp == 0 || !dp.is_multiple_of(sp) || sf != df {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "DMA replicate needs dst partitions a multiple of src partitions and equal free sizes",
            });
        }
        let dt = dst.ap.dtype;
        let mut a = self.pool.take();
        let r = self.read(src, dt, &mut a).and_then(|()| {
            let bytes = a.repeat(dp / sp);
            self.write(dst, dt, &bytes, regions)
        });
        self.pool.give(a);
        r
    }

    /// CCE mode (D4): an N-input fp32 reduce into the output, from a zeroed accumulator for
    /// every op (so a max over all-negative inputs is +0.0); `constants` scale the add form only.
    fn dma_cce(&mut self, i: &Instruction, f: &DmaCopyFields, regions: &mut Written) -> Res<()> {
        let op = f.cce_op.unwrap_or(AluOp::Add);
        if !matches!(op, AluOp::Add | AluOp::Max | AluOp::Min) {
            return fault(FaultCause::UnsupportedOp { what: "a DMA CCE (add, max or min)", op });
        }
        let out = self.output(i, 0)?;
        // Values, not containers: an x4 operand decodes to 4 fp32 values per container
        // (re-facts §4), and the reduce runs over those values (D16).
        let n_out = out.elements()? * out.ap.dtype.lanes();
        let n_in = i.ins.len();
        if !f.constants.is_empty() && f.constants.len() != n_in {
            return fault(FaultCause::BadField {
                field: "constants",
                why: "CCE needs one constant per input",
            });
        }
        let mut acc = self.pool.take_f32();
        let mut v = self.pool.take_f32();
        let r = (|| {
            // re-facts §5: "N inputs cast to fp32, folded into a zeroed fp32 accumulator; add =
            // acc += (constants ? c_i·in_i : in_i), max/min via fmaxf/fminf" (D4).
            crate::alloc::resize(&mut acc, n_out, 0.0)?;
            for k in 0..n_in {
                let a = self.input(i, k)?;
                self.read_f32(a, &mut v)?;
                same_count(
                    Slot::In(k),
                    n_out,
                    v.len(),
                    "every CCE input holds as many values as the output",
                )?;
                match op {
                    AluOp::Add => match f.constants.get(k).map(|c| c.get()) {
                        Some(c) => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a += c * *x),
                        None => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a += *x),
                    },
                    AluOp::Max => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a = fmaxf(*a, *x)),
                    _ => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a = fminf(*a, *x)),
                }
            }
            self.write_f32(out, &acc, regions)
        })();
        self.pool.give_f32(acc);
        self.pool.give_f32(v);
        r
    }
    /// DMACopy Copy with a vector dynamic offset: the HW-DGE bridge (seed 000 §7; G6–G8,
    /// G50–G56).
    pub(crate) fn hw_dge(
        &mut self,
        f: &DmaCopyFields,
        src: Arg<'_>,
        dst: Arg<'_>,
        regions: &mut Written,
    ) -> Res<()> {
        let scatter = match (src.ap.dynamic.is_some(), dst.ap.vector_offset().is_some()) {
            (false, true) => true,
            (true, false) if src.ap.vector_offset().is_some() && dst.ap.dynamic.is_none() => false,
            _ => {
                return unclassified(
                    "a DMACopy with a vector dynamic offset and a second dynamic offset on the other access pattern",
                );
            }
        };
        // isDstReduceDGE → AluOpType2MemoryReduction: bypass → copy, add → add, else throws.
        let op = match f.cce_op {
            None | Some(AluOp::Bypass) => MemoryReductionOp::Copy,
            Some(AluOp::Add) => MemoryReductionOp::Add,
            Some(op) => {
                return fault(FaultCause::UnsupportedOp {
                    what: "the HW-DGE reduce-on-write (AluOpType2MemoryReduction: bypass or add)",
                    op,
                });
            }
        };
        let (indexed, dense) = if scatter { (dst, src) } else { (src, dst) };
        let Some((vec_ap, dynamic)) = indexed.ap.vector_offset() else {
            return bug("the indexed AP lost its vector");
        };
        let Some(level) = indexed.ap.indirect_level(dynamic.indirect_dim) else {
            return bug("a validated indirect_dim names no level");
        };
        let Some(stride) = indexed.ap.pairs.get(level).map(|p| p.step) else {
            return bug("a validated indirect_dim level is missing");
        };
        let row_pairs = indexed.ap.without_level(level);
        let rows = dense.ap.pairs.first().map_or(1, |p| p.num.max(1) as usize);
        let dense_len = dense.elements()? / rows;
        let row_len: usize = row_pairs.iter().map(|p| p.num.max(0) as usize).product();
        same_count(
            indexed.slot,
            dense_len,
            row_len,
            "an indexed row holds as many elements as a dense row (fidelity G50)",
        )?;
        // The indices, all decoded and checked before anything is written.
        let idx_arg = self.arg(indexed.slot, vec_ap);
        let mut bytes = self.pool.take();
        let r = self.read(idx_arg, Dtype::Uint16, &mut bytes);
        let mut idx: Vec<u64> = Vec::new();
        let r = r.and_then(|()| Ok(crate::alloc::reserve(&mut idx, bytes.len() / 2)?)).and_then(|()| {
            indirection::decode_dge_indices(Dtype::Uint16, &bytes, 0, &mut idx)
                .map_err(|e| FaultCause::Indirect(e).into())
        });
        self.pool.give(bytes);
        r?;
        same_count(
            indexed.slot,
            rows,
            idx.len(),
            "counting the indices of its vector_offset: one per dense row (fidelity G50)",
        )?;
        let size = self.storage(indexed.ap).size();
        let (lo, hi) = plan::span(&row_pairs);
        let table = Table {
            base: indexed.ap.offset,
            step: stride,
            lo,
            hi,
            bound: Some(u64::try_from(dynamic.max_index).unwrap_or(0)),
            capacity: self.memory.layout(indexed.ap.loc).capacity(size),
        };
        let oob = if f.oob_is_err { Oob::Fault } else { Oob::Skip };
        let mut steps: Vec<Step> = Vec::new();
        crate::alloc::reserve(&mut steps, idx.len())?;
        plan::rows(&idx, &table, None, oob, 0, &mut steps).map_err(|e| located(indexed.slot, e))?;
        // The side written, and its rows' walk.
        let (to, to_walk) =
            if scatter { (indexed, row_pairs.clone()) } else { (dense, dense.ap.without_level(0)) };
        if op == MemoryReductionOp::Add && !to.ap.dtype.is_reducible() {
            return fault(FaultCause::NotReducible {
                slot: to.slot,
                dtype: to.ap.dtype,
                acc: EngineAccumulationType::Accumulate,
            });
        }
        let revisits = !access_pattern::distinct_pairs(&to_walk);
        if scatter && self.fast_scatter_ok(dense, indexed, &row_pairs, &steps) {
            return self.dge_scatter_fast(dense, indexed, &row_pairs, &steps, op, regions);
        }
        self.dge_serial(scatter, indexed, level, dense, &steps, (op, revisits), regions)
    }

    /// The serial bridge (G54): planned rows in order, each read whole (cast to the written
    /// side's dtype, like doCopy), then written or accumulated. An add whose written row visits
    /// an element twice (`revisits`) accumulates that row element by element in its AP order,
    /// each add rounding to the destination dtype, as seed 000 §6.3's serial loop does
    /// (`cast_copy_or_accumulate` per element; G57).
    #[expect(clippy::too_many_arguments, reason = "both sides, the plan and the reduce, each named")]
    fn dge_serial(
        &mut self,
        scatter: bool,
        indexed: Arg<'_>,
        level: usize,
        dense: Arg<'_>,
        steps: &[Step],
        (op, revisits): (MemoryReductionOp, bool),
        regions: &mut Written,
    ) -> Res<()> {
        let dense_step = dense.ap.pairs.first().map_or(0, |p| p.step);
        let mut bytes = self.pool.take();
        let r = (|| {
            for s in steps {
                let t_ap = row_ap(indexed.ap, level, s.start);
                let d_off =
                    (s.row as i64).checked_mul(dense_step).and_then(|o| o.checked_add(dense.ap.offset));
                let Some(d_off) = d_off else { return bug("a validated dense row offset overflows") };
                let d_ap = row_ap(dense.ap, 0, d_off);
                let (t, d) = (indexed.with(&t_ap), dense.with(&d_ap));
                let (from, to) = if scatter { (d, t) } else { (t, d) };
                let dt = to.ap.dtype;
                self.read(from, dt, &mut bytes)?;
                match op {
                    MemoryReductionOp::Copy => self.write(to, dt, &bytes, regions)?,
                    _ if revisits => self.accumulate_serially(to, dt, &bytes, regions)?,
                    _ => self.accumulate(to, EngineAccumulationType::Accumulate, dt, &bytes, regions)?,
                }
            }
            Ok(())
        })();
        self.pool.give(bytes);
        r
    }

    /// Adds `bytes` (values of `dt`, one per element of `to` in AP order) into `to` one element
    /// at a time, so an element the walk visits twice sees its first add (G57).
    fn accumulate_serially(
        &mut self,
        to: Arg<'_>,
        dt: Dtype,
        bytes: &[u8],
        regions: &mut Written,
    ) -> Res<()> {
        let size = dt.size();
        for (k, e) in element_indices(to)?.into_iter().enumerate() {
            let Some(value) = bytes.get(k * size..(k + 1) * size) else {
                return bug("a HW-DGE row read holds fewer values than its walk");
            };
            let one = one_element(to.ap, e);
            self.accumulate(to.with(&one), EngineAccumulationType::Accumulate, dt, value, regions)?;
        }
        Ok(())
    }

    /// Whether a scatter may take the fast path (G55): different buffers, a table side stored in
    /// its own dtype, a row walk visiting each element once, and no index twice.
    fn fast_scatter_ok(
        &self,
        dense: Arg<'_>,
        indexed: Arg<'_>,
        row_pairs: &[bir_ir::ApPair],
        steps: &[Step],
    ) -> bool {
        if self.memory.same_buffer(dense.ap.loc, indexed.ap.loc)
            || !self.uncast(indexed.ap)
            || !access_pattern::distinct_pairs(row_pairs)
        {
            return false;
        }
        let mut starts: Vec<i64> = steps.iter().map(|s| s.start).collect();
        starts.sort_unstable();
        starts.windows(2).all(|w| w[0] != w[1])
    }

    /// The fast scatter: the dense side read once (cast to the table's dtype), then
    /// `indirection::scatter` (copy, or add through numerics' accumulate) in plan order.
    fn dge_scatter_fast(
        &mut self,
        dense: Arg<'_>,
        indexed: Arg<'_>,
        row_pairs: &[bir_ir::ApPair],
        steps: &[Step],
        op: MemoryReductionOp,
        regions: &mut Written,
    ) -> Res<()> {
        let dt = indexed.ap.dtype;
        let contiguous = Pattern { pairs: row_pairs, offset: 0, elem_size: 1 }
            .runs()
            .is_ok_and(|r| r.remaining() == 1 && (r.stride() == 1 || r.run_len() == 1));
        let len: usize = row_pairs.iter().map(|p| p.num.max(0) as usize).product();
        let entry =
            if contiguous || row_pairs.is_empty() { Entry::Contiguous(len) } else { Entry::Walk(row_pairs) };
        let profile = self.profile;
        let mut flat = self.pool.take();
        let r = self.read(dense, dt, &mut flat).and_then(|()| {
            let (buf, layout) = self.memory.buffer_mut(indexed.ap.loc);
            indirection::scatter(&flat, steps, entry, buf, &layout, op, dt, &profile)
                .map_err(|e| FaultCause::Indirect(e).into())
        });
        self.pool.give(flat);
        r?;
        record_entries(&mut self.memory, indexed, entry, steps, regions);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The re-facts §3 table, copied by hand, against `TransposeOps::permutation`.
    #[test]
    fn permutations_are_the_re_facts_table() {
        const TABLE: [[usize; 4]; 14] = [
            [0, 1, 2, 3],
            [0, 1, 3, 2],
            [0, 3, 1, 2],
            [0, 2, 3, 1],
            [1, 0, 2, 3],
            [1, 2, 0, 3],
            [1, 2, 3, 0],
            [2, 3, 0, 1],
            [2, 3, 1, 0],
            [2, 0, 1, 3],
            [3, 0, 1, 2],
            [3, 1, 2, 0],
            [3, 2, 1, 0],
            [3, 2, 0, 1],
        ];
        for (code, want) in TABLE.iter().enumerate() {
            let op = <TransposeOps as bir_ir::BirEnum>::from_ordinal(code as u64).unwrap();
            assert_eq!(op.permutation(), *want, "code {code}");
        }
    }

    /// K3: the source shape counted in the destination's dtype.
    #[test]
    fn packed_shape_packs_and_unpacks_along_x() {
        let (f, e4, e5, f4) =
            (Dtype::Float32, Dtype::Float8E4m3fnX4, Dtype::Float8E5m2X4, Dtype::Float4E2m1fnX4);
        assert_eq!(packed_shape([2, 3, 4, 8], f, e4), Some([2, 3, 4, 2]));
        assert_eq!(packed_shape([2, 3, 4, 6], f, f4), None);
        assert_eq!(packed_shape([2, 3, 4, 2], e4, f), Some([2, 3, 4, 8]));
        assert_eq!(packed_shape([2, 3, 4, 5], e4, e5), Some([2, 3, 4, 5]));
        assert_eq!(packed_shape([2, 3, 4, 5], f, Dtype::Bfloat16), Some([2, 3, 4, 5]));
    }

    #[test]
    fn glibc_fmax_fmin_ties_and_nans() {
        assert_eq!(fmaxf(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(fmaxf(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(fminf(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(fmaxf(f32::NAN, 2.0), 2.0);
        assert_eq!(fmaxf(2.0, f32::NAN), 2.0);
        assert_eq!(fminf(f32::NAN, -2.0), -2.0);
        assert!(fmaxf(f32::NAN, f32::NAN).is_nan());
        assert_eq!(fmaxf(1.0, 3.0), 3.0);
        assert_eq!(fminf(1.0, 3.0), 1.0);
    }
}
