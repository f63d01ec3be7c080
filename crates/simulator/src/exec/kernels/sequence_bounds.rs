//! GetSequenceBounds (64, GpSimd): each segment id's run bounds (AWS `nki.isa.sequence_bounds`;
//! docs/fidelity.md Q1). `ins = [segment ids AP]`, `outs = [AP]`: for each partition row of n
//! ids, the output row holds 2n values, the n starts then the n ends (AWS's `[1, 2, n]` tile);
//! padding (id 0) gets start n and end −1. The math is `numerics::sequence::bounds`, on the ids
//! read as fp32 (AWS allows float32 and int32) and written cast to the output's dtype. AWS
//! requires one partition; birsim applies the rule to each row.

use crate::exec::kit::{Cx, Res, Written};
use bir_ir::Instruction;

/// Runs one GetSequenceBounds.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let n = src.shape()?.1;
    let bounds = |ids: &[f32], out: &mut [f32]| {
        let (starts, ends) = out.split_at_mut(ids.len());
        numerics::sequence::bounds(ids, starts, ends);
    };
    cx.map_rows(src, dst, 2 * n, "two bounds (start, end) per segment id", bounds, regions)
}
