//! Reciprocal (21): `out = 1.0f / x` per element (engines.md §2.5: the dedicated opcode is
//! exactly the fp32 division, bypassing the activation tables). The input is read widened to
//! fp32 from its AP dtype and the result written cast to the output's, like every elementwise op
//! (`Cx::read_f32` / `Cx::write_f32`); the math is `numerics::alu::reciprocal`. The whole input is
//! read before anything is written, so overlapping operands are safe (seed 000 §5.1).
//! Classified by the plain rule (`facts::plain`).

use crate::exec::kit::{Cx, Res, Written};
use bir_ir::Instruction;

/// Runs one Reciprocal.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(src, &mut v).and_then(|()| {
        numerics::alu::reciprocal_slice(&mut v);
        cx.write_f32(dst, &v, regions)
    });
    cx.pool.give_f32(v);
    r
}
