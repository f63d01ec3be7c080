//! SW-DGE descriptor blocks and the HW-DGE bridge (seed 000 §5.2, §7; re-facts §5; the DGE
//! contract §1–§2; docs/fidelity.md G1–G8, G50–G58).
//!
//! - DMATrigger (67) fires one DMABlock per execution: `dge::swdge::Cursors` picks it (round
//!   robin over `dma_blocks`, per trigger name); the block's descriptors then run in list order,
//!   each re-dispatched to the DMACopy mode kernel of `exec/dma.rs` (DMADescriptorCopy → Copy,
//!   CCE → CCE, Transpose → Transpose, Replicate → Replicate, `oob_is_err` true), exactly as
//!   `visitInstDMABlock` re-visits each descriptor. A descriptor's fault names the block, the
//!   descriptor and (as the faulting instruction) the trigger.
//! - A DMABlock met in the stream runs nothing unless `Options::dma_block_in_stream` says run
//!   (G4). Switch/ResetQueueInstance (85/86) erase the cursors (G5).
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

use super::indirect::record_entries;
use super::operand::{distinct_pairs, same_count};
use super::{Arg, Res, Simulator, Stop, Written, bug, fault, unclassified};
use crate::fault::{FaultCause, Slot};
use ::dge::swdge::{BlockInStream, Cursors, EraseScope};
use access_pattern::Pattern;
use bir_ir::ops::{DmaBlockFields, DmaCopyFields, DmaFields, DmaTriggerFields, QueueInstanceFields};
use bir_ir::{
    AccessPattern, AluOp, ApPairs, CopyMode, Dtype, DynamicOffset, EngineAccumulationType, Instruction,
    MemoryReductionOp, OffsetSource, Op, Opcode, Operand,
};
use indirection::plan::{self, Oob, Step, Table};
use indirection::{Entry, IndirectError};

/// The vector offset of an AP (its index AP and the dynamic info), if it has one.
pub(crate) fn vector_of(ap: &AccessPattern) -> Option<(&AccessPattern, &DynamicOffset)> {
    let d = ap.dynamic.as_deref()?;
    match &d.source {
        OffsetSource::Vector(v) => Some((v, d)),
        _ => None,
    }
}

/// True for an AP operand carrying a vector offset.
pub(crate) fn has_vector_offset(op: &Operand) -> bool {
    op.as_ap().is_some_and(|a| vector_of(a).is_some())
}

/// The DMACopy fields a descriptor runs with: its twin mode, `oob_is_err` true, its own
/// `transpose_op`, `constants` and `op` (read as `cce_op`). `None` for a non-descriptor.
fn descriptor_fields(d: &Instruction) -> Option<DmaCopyFields> {
    let (mode, f) = match &d.op {
        Op::DMADescriptorCopy(f) => (CopyMode::Copy, f),
        Op::DMADescriptorCCE(f) => (CopyMode::Cce, f),
        Op::DMADescriptorTranspose(f) => (CopyMode::Transpose, f),
        Op::DMADescriptorReplicate(f) => (CopyMode::Replicate, f),
        _ => return None,
    };
    Some(DmaCopyFields {
        dma: DmaFields::default(),
        mode,
        oob_is_err: true,
        transpose_op: f.transpose_op,
        constants: f.constants.clone(),
        cce_op: f.op,
    })
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

/// The levels of `ap` other than `level` (a row's walk).
pub(crate) fn without_level(ap: &AccessPattern, level: usize) -> ApPairs {
    ap.pairs.iter().enumerate().filter(|(l, _)| *l != level).map(|(_, p)| *p).collect()
}

impl<'p> Simulator<'p> {
    /// DMATrigger (67): fires the block its cursor names (G1, G2).
    pub(crate) fn dma_trigger(
        &mut self,
        i: &'p Instruction,
        f: &'p DmaTriggerFields,
        regions: &mut Written,
    ) -> Res<()> {
        let Some(k) = self.engines.cursors.fire(&i.name, f.dma.queue.as_deref(), &f.dma_blocks) else {
            return Ok(());
        };
        let Some(name) = f.dma_blocks.get(k) else { return bug("a cursor past its block list") };
        let block = self.block_named(name)?;
        let Op::DMABlock(b) = &block.op else { return bug("a block map entry that is not a DMABlock") };
        self.run_block(block, b, regions)
    }

    /// A DMABlock met in the instruction stream (G4).
    pub(crate) fn dma_block_in_stream(
        &mut self,
        i: &'p Instruction,
        f: &'p DmaBlockFields,
        regions: &mut Written,
    ) -> Res<()> {
        match self.options.dma_block_in_stream {
            BlockInStream::Skip => Ok(()),
            BlockInStream::Run => self.run_block(i, f, regions),
        }
    }

    /// SwitchQueueInstance (85) / ResetQueueInstance (86): erase the trigger cursors (G5).
    pub(crate) fn queue_instance(&mut self, i: &Instruction, f: &QueueInstanceFields) {
        if Cursors::erases(i.opcode() == Opcode::SwitchQueueInstance, f.no_rearm) {
            self.engines.cursors.erase(EraseScope::of(f.queue.as_deref()));
        }
    }

    /// The DMABlock instruction named `name` (validation made it exist and be unique).
    fn block_named(&mut self, name: &str) -> Res<&'p Instruction> {
        if self.dma_blocks.is_none() {
            let mut map = std::collections::HashMap::new();
            let f: &'p bir_ir::Function = self.f;
            f.for_each_instruction(&mut |i| {
                if i.opcode() == Opcode::DMABlock {
                    map.entry(i.name.as_str()).or_insert(i);
                }
            });
            self.dma_blocks = Some(map);
        }
        match self.dma_blocks.as_ref().and_then(|m| m.get(name)) {
            Some(b) => Ok(*b),
            None => bug("a trigger names a DMABlock validation did not find"),
        }
    }

    /// Runs a block's descriptors in list order, each as its DMACopy twin; a fault is located
    /// at the block and the descriptor (G51).
    fn run_block(&mut self, block: &'p Instruction, b: &'p DmaBlockFields, regions: &mut Written) -> Res<()> {
        for (index, d) in b.descriptors.iter().enumerate() {
            // Each descriptor is classified as it runs, like an instruction (support.rs).
            let verdict =
                crate::support::classify(d.opcode(), &crate::support::InstFacts::new(d, self.f, true));
            let r = match (verdict.fault(d.opcode()), descriptor_fields(d)) {
                (Some(cause), _) => Err(cause.into()),
                (None, Some(f)) => self.ensure_buffers(d).and_then(|()| self.dma_copy(d, &f, regions)),
                (None, None) => bug("validation admits only DMADescriptor* in a DMABlock"),
            };
            match r {
                Ok(()) => {}
                Err(Stop::Fault(cause)) => {
                    return Err(FaultCause::InDescriptor {
                        block: block.name.clone(),
                        index,
                        descriptor: d.name.clone(),
                        opcode: d.opcode(),
                        cause,
                    }
                    .into());
                }
                Err(bug) => return Err(bug),
            }
        }
        Ok(())
    }

    /// DMACopy Copy with a vector dynamic offset: the HW-DGE bridge (seed 000 §7; G6–G8,
    /// G50–G56).
    pub(crate) fn hw_dge(
        &mut self,
        f: &DmaCopyFields,
        src: Arg<'p>,
        dst: Arg<'p>,
        regions: &mut Written,
    ) -> Res<()> {
        let scatter = match (src.ap.dynamic.is_some(), vector_of(dst.ap).is_some()) {
            (false, true) => true,
            (true, false) if vector_of(src.ap).is_some() && dst.ap.dynamic.is_none() => false,
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
        let Some((vec_ap, dynamic)) = vector_of(indexed.ap) else {
            return bug("the indexed AP lost its vector");
        };
        let Some(level) = indexed.ap.level_of(dynamic.indirect_dim) else {
            return bug("a validated indirect_dim names no level");
        };
        let Some(stride) = indexed.ap.pairs.get(level).map(|p| p.step) else {
            return bug("a validated indirect_dim level is missing");
        };
        let row_pairs = without_level(indexed.ap, level);
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
            entries: u64::try_from(dynamic.max_index).unwrap_or(0),
            entry_lo: lo,
            entry_hi: hi,
            capacity: self.memory.layout(indexed.ap.loc).capacity(size),
        };
        let oob = if f.oob_is_err { Oob::Fault } else { Oob::Skip };
        let mut steps: Vec<Step> = Vec::new();
        crate::alloc::reserve(&mut steps, idx.len())?;
        plan::rows(&idx, &table, None, oob, 0, &mut steps).map_err(|e| located(indexed.slot, e))?;
        // The side written, and its rows' walk.
        let (to, to_walk) =
            if scatter { (indexed, row_pairs.clone()) } else { (dense, without_level(dense.ap, 0)) };
        if op == MemoryReductionOp::Add {
            if !to.ap.dtype.is_reducible() {
                return fault(FaultCause::NotReducible {
                    slot: to.slot,
                    dtype: to.ap.dtype,
                    acc: EngineAccumulationType::Accumulate,
                });
            }
            if !distinct_pairs(&to_walk) {
                return unclassified("a HW-DGE add whose rows visit an element twice");
            }
        }
        if scatter && self.fast_scatter_ok(dense, indexed, &row_pairs, &steps) {
            return self.dge_scatter_fast(dense, indexed, &row_pairs, &steps, op, regions);
        }
        self.dge_serial(scatter, indexed, level, dense, &steps, op, regions)
    }

    /// The serial bridge (G54): planned rows in order, each read whole (cast to the written
    /// side's dtype, like doCopy), then written or accumulated.
    #[expect(clippy::too_many_arguments, reason = "both sides, the plan and the reduce, each named")]
    fn dge_serial(
        &mut self,
        scatter: bool,
        indexed: Arg<'_>,
        level: usize,
        dense: Arg<'_>,
        steps: &[Step],
        op: MemoryReductionOp,
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
                    _ => self.accumulate(to, EngineAccumulationType::Accumulate, dt, &bytes, regions)?,
                }
            }
            Ok(())
        })();
        self.pool.give(bytes);
        r
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
            || !distinct_pairs(row_pairs)
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
        record_entries(self, indexed, entry, steps, regions);
        Ok(())
    }
}
