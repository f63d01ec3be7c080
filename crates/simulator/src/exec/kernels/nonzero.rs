//! NonzeroWithCount (104, GpSimd, gen3+; AWS `nki.isa.nonzero_with_count`; docs/fidelity.md
//! Q8): the positions of a row's nonzero elements plus `index_offset`, then `padding_val`, then
//! the count (`numerics::sequence::nonzero`). The reference names it and skips it (re-facts
//! §9.5); birsim runs it as AWS documents it.
//!
//! `ins = [src]` (read as fp32: AWS allows float32 and int32, whose nonzero values stay nonzero),
//! `outs = [dst, int32, n + 1 values per row]`. As on the hardware, where each of the eight
//! GpSimd cores reads and writes only the first of its 16 partitions, only the rows whose
//! partition within the memory location is a multiple of 16 are read and written; the other
//! rows of dst keep their bytes.

use crate::exec::kit::{Arg, Cx, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::Instruction;
use bir_ir::ops::NonzeroFields;

/// The partition of the location that row `r` of `a` lies in.
fn partition(cx: &Cx<'_>, a: Arg<'_>, r: usize) -> Option<i64> {
    let l = cx.f.location(a.ap.loc)?;
    let pitch = (l.bytes_per_partition as i64 / a.ap.dtype.size().max(1) as i64).max(1);
    let step = a.ap.pairs.first().map_or(0, |p| p.step);
    Some(a.ap.offset.checked_add(step.checked_mul(i64::try_from(r).ok()?)?)?.div_euclid(pitch))
}

/// Runs one NonzeroWithCount.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, f: &NonzeroFields, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (parts, _) = src.shape()?;
    let total = src.values()?;
    let n = total / parts.max(1);
    let out_total = dst.values()?;
    if out_total != parts * (n + 1) {
        return fault(FaultCause::Count {
            slot: Slot::Out(0),
            expected: (parts * (n + 1)) as u64,
            actual: out_total as u64,
            why: "one more value per partition row than the source (the count)",
        });
    }
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(src, &mut v).and_then(|()| {
        let mut out = vec![0i32; out_total];
        let mut take = vec![false; out_total];
        for (r, (row, o)) in v.chunks_exact(n.max(1)).zip(out.chunks_exact_mut(n + 1)).enumerate() {
            if partition(cx, dst, r).is_some_and(|p| p % 16 == 0) {
                numerics::sequence::nonzero(row, f.index_offset, f.padding_val, o);
                take[r * (n + 1)..(r + 1) * (n + 1)].fill(true);
            }
        }
        let bytes: Vec<u8> = out.iter().flat_map(|x| x.to_le_bytes()).collect();
        cx.write_where(dst, &take, &bytes, regions)
    });
    cx.pool.give_f32(v);
    r
}
