//! What a BIR DMA instruction becomes (docs/dge.md "What a DMA becomes"): DMACopy in every
//! mode, the DMADescriptor* entries of a DMABlock, IndirectLoad/IndirectSave with their index
//! bytes; operands addressed in the G9 space ([`crate::address`]) through the caller's layouts
//! (the simulator's `Memory::layout`, which places `allocated` SB/PSUM locations in arenas).

use crate::address::location_base;
use crate::generate::{self, DgeError, Direction, Operand};
use crate::{ComputeOp, Descriptor, DgeKind};
use access_pattern::Layout;
use bir_ir::{
    AccessPattern, CopyMode, Dtype, Function, Instruction, LocId, MemoryReductionOp, Op, TransposeOps,
};
use indirection::Oob;

/// The result of planning one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// The descriptors, in execution order.
    Descriptors(Vec<Descriptor>),
    /// No descriptors can be given without running the program; the note says why.
    Static(String),
}

/// What the planner needs of a program: its entry function and where each location sits.
pub struct Context<'a> {
    /// The function whose locations the operands name.
    pub function: &'a Function,
    /// A location's layout in its buffer.
    pub layout: &'a dyn Fn(LocId) -> Layout,
    /// The out-of-bounds policy of the indirect ops (the simulator's `indirect_oob`).
    pub oob: Oob,
}

impl Context<'_> {
    /// The memory dtype of a location (its allocation's).
    fn storage(&self, ap: &AccessPattern) -> Dtype {
        self.function
            .location(ap.loc)
            .and_then(|l| self.function.allocation(l.alloc))
            .map_or(ap.dtype, |a| a.dtype)
    }

    fn operand<'a>(&self, name: &'static str, ap: &'a AccessPattern) -> Result<Operand<'a>, DgeError> {
        let base = location_base(ap.loc.index()).ok_or(DgeError::Address { side: name })?;
        if self.function.location(ap.loc).is_none() {
            return Err(DgeError::Shape(format!("{name} names no memory location")));
        }
        Ok(Operand { name, base, layout: (self.layout)(ap.loc), pairs: &ap.pairs, offset: ap.offset })
    }

    /// The one dtype of a byte-copying DMA: every AP and memory dtype equal (G31).
    fn same_dtype(&self, aps: &[(&'static str, &AccessPattern)]) -> Result<Dtype, DgeError> {
        let Some((_, first)) = aps.first() else { return Err(DgeError::Shape("no operands".into())) };
        let dt = first.dtype;
        for (name, ap) in aps {
            let st = self.storage(ap);
            if ap.dtype != dt || st != dt {
                return Err(DgeError::Unsupported(format!(
                    "{name} moves {:?} over {st:?} memory while the copy moves {dt:?}: a casting DMA is not a byte-copy descriptor list (G31)",
                    ap.dtype
                )));
            }
        }
        Ok(dt)
    }
}

fn ap(i: &Instruction, input: bool, k: usize) -> Result<(&'static str, &AccessPattern), DgeError> {
    const INS: [&str; 3] = ["ins[0]", "ins[1]", "ins[2]"];
    let name = if input { INS.get(k).copied().unwrap_or("ins[k]") } else { "outs[0]" };
    let a = if input { i.in_ap(k) } else { i.out_ap(k) };
    a.map(|a| (name, a))
        .ok_or_else(|| DgeError::Shape(format!("{name} of {} is not an access pattern", i.name)))
}

/// The copy of a DMACopy/descriptor in mode `mode` (`transpose_op` for Transpose).
fn copy_mode(
    c: &Context<'_>,
    i: &Instruction,
    mode: CopyMode,
    op: TransposeOps,
) -> Result<Planned, DgeError> {
    let (sn, s) = ap(i, true, 0)?;
    let (dn, d) = ap(i, false, 0)?;
    if s.dynamic.is_some() || d.dynamic.is_some() {
        return Ok(Planned::Static(
            "a dynamic offset: the addresses depend on an index read at run time (the HW-DGE bridge)".into(),
        ));
    }
    let dt = c.same_dtype(&[(sn, s), (dn, d)])?;
    let (so, dst) = (c.operand(sn, s)?, c.operand(dn, d)?);
    let mut out = Vec::new();
    match mode {
        CopyMode::Copy => generate::direct(DgeKind::Direct2D, &so, &dst, dt, &mut out)?,
        CopyMode::Transpose if op == TransposeOps::None => {
            generate::direct(DgeKind::Direct2D, &so, &dst, dt, &mut out)?
        }
        CopyMode::Transpose => generate::transpose(&so, &dst, op.permutation(), dt, &mut out)?,
        CopyMode::Replicate => generate::replicate(&so, &dst, dt, &mut out)?,
        CopyMode::Cce => {
            return Err(DgeError::Unsupported(
                "a CCE reduce accumulates every input in fp32 and rounds once; a descriptor chain rounds after each (G32)"
                    .into(),
            ));
        }
        CopyMode::Dynamic => return Err(DgeError::Unsupported("DMACopy in Dynamic mode".into())),
    }
    Ok(Planned::Descriptors(out))
}

/// Plans one instruction. `index` holds the raw bytes of an indirect op's index operand (`ins[1]`,
/// in its AP order and dtype) when known; without them an indirect op is [`Planned::Static`].
/// `None` for instructions that are not DMAs.
pub fn plan(c: &Context<'_>, i: &Instruction, index: Option<&[u8]>) -> Option<Result<Planned, DgeError>> {
    Some(match &i.op {
        Op::DMACopy(f) => copy_mode(c, i, f.mode, f.transpose_op),
        Op::DMADescriptorCopy(_) => copy_mode(c, i, CopyMode::Copy, TransposeOps::None),
        Op::DMADescriptorTranspose(f) => copy_mode(c, i, CopyMode::Transpose, f.transpose_op),
        Op::DMADescriptorReplicate(_) => copy_mode(c, i, CopyMode::Replicate, TransposeOps::None),
        Op::DMADescriptorCCE(_) => copy_mode(c, i, CopyMode::Cce, TransposeOps::None),
        Op::IndirectLoad(f) => indirect(c, i, Direction::Gather, f.wrap, index),
        Op::IndirectSave(f) => indirect(c, i, Direction::Scatter, f.wrap, index),
        Op::IndirectSaveAccumulate(f) => save_accumulate(c, i, f, index),
        Op::GenericIndirectLoad(_) | Op::GenericIndirectSave(_) => {
            Ok(Planned::Static("an indirect op this model does not turn into descriptors (G33)".into()))
        }
        _ => return None,
    })
}

fn indirect(
    c: &Context<'_>,
    i: &Instruction,
    dir: Direction,
    wrap: Option<bir_ir::ops::IndirectWrap>,
    index: Option<&[u8]>,
) -> Result<Planned, DgeError> {
    let (tn, t) = match dir {
        Direction::Gather => ap(i, true, 0)?,
        Direction::Scatter => ap(i, false, 0)?,
    };
    let (dn, d) = match dir {
        Direction::Gather => ap(i, false, 0)?,
        Direction::Scatter => ap(i, true, 0)?,
    };
    let (_, x) = ap(i, true, 1)?;
    let Some(bytes) = index else {
        return Ok(Planned::Static(format!(
            "one INDIRECT1D per in-bounds index of ins[1] ({}); give the index input to list them",
            x.dtype.name()
        )));
    };
    let dt = c.same_dtype(&[(tn, t), (dn, d)])?;
    let mut idx = Vec::new();
    indirection::decode_indices(x.dtype, bytes, 1, &mut idx)?;
    let (to, dense) = (c.operand(tn, t)?, c.operand(dn, d)?);
    let mut out = Vec::new();
    let w = wrap.map(|w| indirection::Wrap { n: w.n, hi: w.hi });
    generate::indirect_rows(dir, &to, &idx, &dense, w, c.oob, 1, dt, &mut out)
        .map_err(index_dtype(x.dtype, true))?;
    Ok(Planned::Descriptors(out))
}

/// IndirectSaveAccumulate: bypass → NONE descriptors; add → ADD descriptors over a dtype
/// `cast_copy_or_accumulate` reduces: its floats (fp32 add rounded at every step) and int32 /
/// int64, whose add wraps as an integer ADD descriptor does (re-facts §8, G41, G47).
fn save_accumulate(
    c: &Context<'_>,
    i: &Instruction,
    f: &bir_ir::ops::IndirectSaveAccumulateFields,
    index: Option<&[u8]>,
) -> Result<Planned, DgeError> {
    let (vn, v) = ap(i, true, 0)?;
    let (tn, t) = ap(i, false, 0)?;
    let (_, x) = ap(i, true, 1)?;
    let Some(bytes) = index else {
        return Ok(Planned::Static(format!(
            "one INDIRECT1D per used in-bounds slot of ins[1] ({}); give the index input to list them",
            x.dtype.name()
        )));
    };
    let dt = c.same_dtype(&[(vn, v), (tn, t)])?;
    let op = match bir_ir::alu_to_memory_reduction(f.op) {
        Some(MemoryReductionOp::Copy) => ComputeOp::None,
        Some(MemoryReductionOp::Add) if dt.is_reducible() => ComputeOp::Add,
        Some(MemoryReductionOp::Add) => {
            return Err(DgeError::Unsupported(format!(
                "an add into {dt:?}: cast_copy_or_accumulate reduces only its eight dtypes (G47)"
            )));
        }
        _ => {
            return Err(DgeError::Unsupported(format!(
                "reduce op {:?} (only bypass and add reach memory)",
                f.op
            )));
        }
    };
    let mut idx = Vec::new();
    indirection::decode_accumulate_indices(x.dtype, bytes, 1, &mut idx)?;
    let parts = x.pairs.first().map_or(1, |p| p.num.max(1) as usize);
    let (vo, to) = (c.operand(vn, v)?, c.operand(tn, t)?);
    let w = f.wrap.map(|w| indirection::Wrap { n: w.n, hi: w.hi });
    let mut out = Vec::new();
    generate::indirect_save_accumulate(
        &vo,
        &idx,
        parts,
        f.num_indices,
        &to,
        f.entry_step_elements,
        w,
        c.oob,
        op,
        dt,
        &mut out,
    )
    .map_err(index_dtype(x.dtype, false))?;
    Ok(Planned::Descriptors(out))
}

/// A bad index's message reads it as its dtype does (`IndirectError::index_dtype`).
fn index_dtype(dtype: Dtype, rebased: bool) -> impl Fn(DgeError) -> DgeError {
    move |e| match e {
        DgeError::Indirect(i) => DgeError::Indirect(i.index_dtype(dtype, rebased)),
        e => e,
    }
}
