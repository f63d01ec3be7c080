//! The copy family — GenericCopy (1), AbstractCopy (3), Load (19), Save (22), TensorCopy (23):
//! all run `doCopy` (seed 000 §5.1, `kit::copy`): read the whole source AP, cast when the dtypes
//! differ, write the destination AP. TensorCopyDynamicSrc/Dst (24/25; nki-semantics
//! `tensor_copy_dynamic_src/dst`, legacy test `np.take(src, 4 + arange(n), axis=1)`) are doCopy
//! too: their scalar offset was resolved into a static AP before the kernel runs (`kit::offsets`;
//! fidelity D20). Classified by the plain rule (`facts::plain`).

use crate::exec::kit::{Cx, Res, Written};
use bir_ir::Instruction;

/// Runs one instruction of the copy family.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    cx.copy(i, regions)
}
