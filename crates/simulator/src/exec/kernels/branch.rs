//! The control-flow instructions (re-facts §5: "CompareAndBranch compares at the lhs dtype width
//! … then sets the next-BB slot", "Return clears all semaphores"; KLR 7e15ca6 `CompareAndBranch`,
//! `UnconditionalBranch`, `Return`, `Break`; docs/bir-json.md "Blocks and branches",
//! docs/fidelity.md B6–B8). Each leaves its request in `Cx::flow`; the instruction loop
//! (`exec/mod.rs`) acts on it when the instruction completes:
//!
//! - CompareAndBranch (78): `ins[0] comp_op ins[1]` at `ins[0]`'s dtype (int32 signed, uint32
//!   unsigned) picks `on_true` or `on_false` as the next block.
//! - UnconditionalBranch (79): `target` is the next block.
//! - Break (83): cancels a branch target set earlier in the block (the reference only clears its
//!   next-block slot).
//! - Return (81): the running function ends (the run, in the entry function); Exit (82): the
//!   run ends there, finished.
//! - Call (84): the named function runs, then the caller continues (fidelity B14).
//! - BranchHint (80): no effect.

use crate::exec::kit::regfile::Flow;
use crate::exec::kit::{Cx, Res, Written};
use bir_ir::Instruction;
use bir_ir::ops::{BranchFields, CallFields, CompareBranchFields};

/// CompareAndBranch (78).
pub(crate) fn compare(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &CompareBranchFields,
    _regions: &mut Written,
) -> Res<()> {
    let (x, y, signed) = cx.register_pair(i)?;
    let taken = if signed { f.comp_op.holds(x as i32, y as i32) } else { f.comp_op.holds(x, y) };
    cx.flow = Some(Flow::Branch { taken });
    Ok(())
}

/// UnconditionalBranch (79).
pub(crate) fn jump(cx: &mut Cx<'_>, _i: &Instruction, _f: &BranchFields, _regions: &mut Written) -> Res<()> {
    cx.flow = Some(Flow::Branch { taken: true });
    Ok(())
}

/// Break (83).
pub(crate) fn brk(cx: &mut Cx<'_>, _i: &Instruction, _regions: &mut Written) -> Res<()> {
    cx.flow = Some(Flow::Break);
    Ok(())
}

/// Return (81).
pub(crate) fn ret(cx: &mut Cx<'_>, _i: &Instruction, _regions: &mut Written) -> Res<()> {
    cx.flow = Some(Flow::Return);
    Ok(())
}

/// Exit (82).
pub(crate) fn exit(cx: &mut Cx<'_>, _i: &Instruction, _regions: &mut Written) -> Res<()> {
    cx.flow = Some(Flow::Exit);
    Ok(())
}

/// Call (84): the instruction loop runs the target once this completes (`exec/flow.rs`).
pub(crate) fn call(cx: &mut Cx<'_>, _i: &Instruction, _f: &CallFields, _regions: &mut Written) -> Res<()> {
    cx.flow = Some(Flow::Call);
    Ok(())
}
