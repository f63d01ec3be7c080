//! GetSequenceBounds (64, GpSimd): each segment id's run bounds (AWS `nki.isa.sequence_bounds`;
//! docs/fidelity.md Q1). `ins = [segment ids AP]`, `outs = [AP]`: for each partition row of n
//! ids, the output row holds 2n values, the n starts then the n ends (AWS's `[1, 2, n]` tile);
//! padding (id 0) gets start n and end −1. The math is `numerics::sequence::bounds`, on the ids
//! read as fp32 (AWS allows float32 and int32) and written cast to the output's dtype. AWS
//! requires one partition; birsim applies the rule to each row.

use crate::exec::kit::{Cx, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::Instruction;

/// Runs one GetSequenceBounds.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (parts, n) = src.shape()?;
    let total = dst.elements()?;
    if total != 2 * parts * n {
        return fault(FaultCause::Count {
            slot: Slot::Out(0),
            expected: 2 * (parts * n) as u64,
            actual: total as u64,
            why: "two bounds (start, end) per segment id",
        });
    }
    let (mut ids, mut out) = (cx.pool.take_f32(), cx.pool.take_f32());
    let r = cx.read_f32(src, &mut ids).and_then(|()| {
        crate::alloc::resize(&mut out, total, 0.0)?;
        for (row, o) in ids.chunks_exact(n.max(1)).zip(out.chunks_exact_mut(2 * n.max(1))) {
            let (starts, ends) = o.split_at_mut(n);
            numerics::sequence::bounds(row, starts, ends);
        }
        cx.write_f32(dst, &out, regions)
    });
    cx.pool.give_f32(ids);
    cx.pool.give_f32(out);
    r
}
