//! Scalar dynamic offsets, resolved in the floor before the kernel runs (seed 000 §5.1, §5.2;
//! re-facts §5 "DMA execution", §6 `DynamicAPINFO`; docs/bir-json.md "Dynamic offsets";
//! docs/fidelity.md D1, D18).
//!
//! An AP whose `scalar_offset` is a one-value AP (memory-held) or a register is moved, once per instruction
//! and before any kernel reads or writes, to a plain static AP: the index is read through the
//! cast to int64 (its first element), and the AP's `offset` grows by
//! `index × step` of the level its `indirect_dim` names (`AccessPattern::indirect_level`:
//! W 0, Z 1, Y 2, X 3). That is re-facts §5's `dst += dtype_size·stride·index` with `stride`
//! the indexed level's step, counted in elements (fidelity D1 records the other reading,
//! `index·prod(base.shape[d+1:])`, and where they differ). Kernels then see static APs only;
//! an offset's own index AP may carry a scalar offset too (resolved first).
//!
//! Out of bounds — index < 0, index ≥ `indirect_dim_max_index`, or the shifted AP leaving its
//! memory location — is a located `out-of-bounds` fault naming the operand and the field,
//! before anything is written. The one exception is seed 000 §5.1's: "DMACopy is the only one
//! that adds the scalar-dynamic-offset OOB tolerance" — a DMACopy whose `oob_is_err` is false
//! and whose datapath is `doCopy` (Copy mode without a vector offset, or Transpose with code
//! None) runs with the out-of-bounds flag instead ([`Resolved::tolerated`]; D1).
//!
//! A register-held offset (`scalar_offset` a register name) is resolved the same way, its index
//! the register of the instruction's engine read as int32 (`kit::regfile`; fidelity B4), and so
//! is a DMACopy's `oob_is_err` held in a register (B12).
//! Vector offsets stay on their AP (the HW-DGE bridge, `kit::dma`).

use super::{Arg, Cx, Res, bug, fault};
use crate::fault::{FaultCause, Slot};
use access_pattern::Pattern;
use bir_ir::{
    AccessPattern, CopyMode, Dtype, EngineType, Instruction, OffsetSource, Op, Operand, TransposeOps,
};

/// An instruction with its scalar offsets resolved.
pub(crate) struct Resolved {
    /// The instruction with static APs where scalar offsets were (`None`: it had none).
    pub(crate) inst: Option<Instruction>,
    /// Some access is out of bounds and the instruction tolerates it (DMACopy's D1 form): the
    /// kernel copies only the element pairs whose both addresses are inside.
    pub(crate) tolerated: bool,
}

/// True when an AP or any index AP under it carries a scalar offset (memory- or
/// register-held).
fn has_scalar(ap: &AccessPattern) -> bool {
    match ap.dynamic.as_deref().map(|d| &d.source) {
        Some(OffsetSource::Scalar(_) | OffsetSource::Register(_) | OffsetSource::RegisterBase { .. }) => true,
        Some(OffsetSource::Vector(v)) => has_scalar(v),
        _ => false,
    }
}

/// True when `i` takes seed 000 §5.1's OOB tolerance: a DMACopy with `oob_is_err` false whose
/// datapath is `doCopy` (`isScalarDynamicOffsetDMA` sits in `doCopy` only: Copy mode without a
/// vector offset, or Transpose code 0, which is `doCopy`). DMA descriptors run with
/// `oob_is_err` true, so they never tolerate.
fn tolerates(i: &Instruction) -> bool {
    let Op::DMACopy(f) = &i.op else { return false };
    let vector = i.ins.iter().chain(&i.outs).any(|o| o.as_ap().is_some_and(|a| a.vector_offset().is_some()));
    !f.oob_is_err
        && match f.mode {
            CopyMode::Copy => !vector,
            CopyMode::Transpose => f.transpose_op == TransposeOps::None,
            _ => false,
        }
}

/// Why a scalar offset is out of bounds.
#[derive(Clone, Copy)]
enum Oob {
    /// The index is < 0 or ≥ `indirect_dim_max_index`.
    Index,
    /// The shifted AP leaves its memory location.
    Leaves,
}

impl Cx<'_> {
    /// `i` with every memory-held scalar offset resolved into a static AP offset (module doc).
    /// `inst` is `None` when `i` has no scalar offset, so the common case clones nothing.
    pub(crate) fn resolve_offsets(&mut self, i: &Instruction) -> Res<Resolved> {
        let any = i.ins.iter().chain(&i.outs).any(|o| o.as_ap().is_some_and(has_scalar));
        let flag = match &i.op {
            Op::DMACopy(f) => f.oob_is_err_reg.as_deref(),
            _ => None,
        };
        if !any && flag.is_none() {
            return Ok(Resolved { inst: None, tolerated: false });
        }
        let mut out = i.clone();
        // A DMACopy's `oob_is_err` held in a register (KLR `DmaBounds.reg`; fidelity B12):
        // non-zero is fatal.
        if let (Some(name), Op::DMACopy(f)) = (flag, &mut out.op) {
            f.oob_is_err = self.register(i.engine, name)? != 0;
            f.oob_is_err_reg = None;
        }
        let tolerates = tolerates(&out);
        let mut tolerated = false;
        let slots = (0..out.ins.len()).map(Slot::In).chain((0..out.outs.len()).map(Slot::Out));
        let ops = out.ins.iter_mut().chain(out.outs.iter_mut());
        for (slot, op) in slots.zip(ops) {
            let Operand::Ap(ap) = op else { continue };
            if !has_scalar(ap) {
                continue;
            }
            let field = match ap.dynamic.as_deref().map(|d| &d.source) {
                Some(OffsetSource::RegisterBase { .. }) => "register_ap",
                _ => "scalar_offset",
            };
            match self.resolve(i.engine, slot, ap, field)? {
                None => {}
                Some(_) if tolerates => tolerated = true,
                Some((index, bound, why)) => return fault(oob_fault(slot, field, index, bound, why)),
            }
        }
        Ok(Resolved { inst: Some(out), tolerated })
    }

    /// Resolves `ap`'s scalar offset in place (and those of the index APs under it); returns
    /// the index, its bound and why when the access is out of bounds. The AP is shifted even
    /// then (the tolerated form copies what stays inside), unless the shift overflows, which
    /// faults.
    fn resolve(
        &mut self,
        engine: EngineType,
        slot: Slot,
        ap: &mut AccessPattern,
        field: &'static str,
    ) -> Res<Option<(i64, i64, Oob)>> {
        let Some(d) = ap.dynamic.as_deref_mut() else { return Ok(None) };
        let (max_index, dim) = (d.max_index, d.indirect_dim);
        let index = match &mut d.source {
            OffsetSource::Scalar(index_ap) => {
                // An index AP's own scalar offset first (its bounds are never tolerated).
                if let Some((index, bound, why)) =
                    self.resolve(engine, slot, index_ap, "scalar_offset.scalar_offset")?
                {
                    return fault(oob_fault(slot, "scalar_offset.scalar_offset", index, bound, why));
                }
                self.read_index(self.arg(slot, index_ap))?
            }
            OffsetSource::Vector(v) => {
                // The bridge keeps its vector; a scalar offset on the index AP resolves here.
                return match self.resolve(engine, slot, v, "vector_offset.scalar_offset")? {
                    None => Ok(None),
                    Some((index, bound, why)) => {
                        fault(oob_fault(slot, "vector_offset.scalar_offset", index, bound, why))
                    }
                };
            }
            // A register-held offset: the register of the instruction's engine, read as int32
            // (docs/fidelity.md B4).
            OffsetSource::Register(name) => i64::from(self.register(engine, name)? as i32),
            // A register_ap: its start replaces the offset (B13).
            OffsetSource::RegisterBase { regref, offset_reg } => {
                let start = match offset_reg {
                    Some(r) => i64::from(self.register(engine, r)? as i32),
                    None => {
                        let address = self.register(engine, regref)?;
                        self.sb_element(ap, address)?
                    }
                };
                ap.dynamic = None;
                ap.offset = start;
                let capacity = self.memory.layout(ap.loc).capacity(self.storage(ap).size()) as i64;
                return Ok(self.leaves(ap).then_some((start, capacity, Oob::Leaves)));
            }
        };
        let Some(level) = ap.indirect_level(dim) else {
            return bug("a validated indirect_dim names no level");
        };
        let step = ap.pairs.get(level).map_or(0, |p| p.step);
        ap.dynamic = None;
        let Some(offset) = index.checked_mul(step).and_then(|o| ap.offset.checked_add(o)) else {
            return fault(oob_fault(slot, field, index, max_index, Oob::Leaves));
        };
        ap.offset = offset;
        if index < 0 || index >= max_index {
            return Ok(Some((index, max_index, Oob::Index)));
        }
        Ok(self.leaves(ap).then_some((index, max_index, Oob::Leaves)))
    }

    /// Whether a resolved AP leaves its memory location.
    fn leaves(&self, ap: &AccessPattern) -> bool {
        let mut p = Pattern::of(ap);
        p.elem_size = self.storage(ap).size();
        access_pattern::check_bounds(&self.memory.layout(ap.loc), &p).is_err()
    }

    /// The element offset of an SB engine address (a register_ap's `regref` without
    /// `reg_ap_offset`): the compiler writes `base + (off / pitch) · 0x40000 + (off % pitch) ·
    /// size` with `base` the location's first byte (partition `base` · 0x40000 + `addr`), so
    /// `off` is read back from the partition and byte it names (a public RE write-up of the
    /// compiler's `convertSymAP`; ASSUMED, fidelity B13).
    fn sb_element(&self, ap: &AccessPattern, address: u32) -> Res<i64> {
        const PARTITION_STRIDE: i64 = 0x40000;
        let Some(l) = self.f.location(ap.loc) else { return bug("an AP names no location") };
        let size = ap.dtype.size().max(1) as i64;
        let base = l.base as i64 * PARTITION_STRIDE + l.addr as i64;
        let rel = i64::from(address) - base;
        let (p, byte) = (rel.div_euclid(PARTITION_STRIDE), rel.rem_euclid(PARTITION_STRIDE));
        if byte % size != 0 {
            return fault(FaultCause::BadField {
                field: "regref",
                why: "the register holds an SB address that is not a whole element of the register_ap's dtype",
            });
        }
        let pitch = l.bytes_per_partition as i64 / size;
        Ok(p * pitch + byte / size)
    }

    /// The scalar offset's value: its index AP's first element read through the cast to int64.
    fn read_index(&mut self, a: Arg<'_>) -> Res<i64> {
        let mut bytes = self.pool.take();
        let r = self.read(a, Dtype::Int64, &mut bytes);
        let first = bytes.first_chunk::<8>().map(|b| i64::from_le_bytes(*b));
        self.pool.give(bytes);
        r?;
        match first {
            Some(v) => Ok(v),
            None => fault(FaultCause::Count {
                slot: a.slot,
                expected: 1,
                actual: 0,
                why: "a scalar dynamic offset reads one index",
            }),
        }
    }
}

/// The located fault of an out-of-bounds scalar offset.
#[cold]
fn oob_fault(slot: Slot, field: &'static str, index: i64, bound: i64, why: Oob) -> FaultCause {
    FaultCause::DynamicOutOfBounds { slot, field, index, bound, leaves: matches!(why, Oob::Leaves) }
}
