//! Row kernels: each output partition row a function of the same input row alone (BNStats,
//! BNStatsAggregate, Max, GetSequenceBounds). The input is read once as fp32, the rows run on
//! the threads (no state crosses a row, so results do not depend on the thread count), and the
//! output is written once.

use super::{Arg, Cx, Parallelism, Res, Written, fault};
use crate::fault::FaultCause;

impl Cx<'_> {
    /// Reads `src` as fp32 rows of its free elements, checks that `dst` holds `per_row` values
    /// for each (`why` names the rule in the fault), and writes `f(row, out_row)` for every row.
    /// `f` must write every value of its `out_row`.
    pub(crate) fn map_rows(
        &mut self,
        src: Arg<'_>,
        dst: Arg<'_>,
        per_row: usize,
        why: &'static str,
        f: impl Fn(&[f32], &mut [f32]) + Sync,
        regions: &mut Written,
    ) -> Res<()> {
        let (parts, _) = src.shape()?;
        let total = dst.values()?;
        if Some(total) != parts.checked_mul(per_row) {
            return fault(FaultCause::Count {
                slot: dst.slot,
                expected: (parts as u64).saturating_mul(per_row as u64),
                actual: total as u64,
                why,
            });
        }
        let (mut vals, mut out) = (self.pool.take_f32(), self.pool.take_f32());
        let r = self.read_f32(src, &mut vals).and_then(|()| {
            crate::alloc::resize(&mut out, total, 0.0)?;
            // Values per row (an `_x4` element holds four).
            let n = vals.len() / parts.max(1);
            // Threads split the output by whole rows; the grain counts the input they read.
            let p = self.options.parallelism;
            let ratio = (n / per_row.max(1)).max(1);
            let p = Parallelism { grain: (p.grain / ratio).max(1), ..p };
            let rows = |at: usize, o: &mut [f32]| -> Res<()> {
                let first = at / per_row.max(1);
                for (k, o) in o.chunks_exact_mut(per_row.max(1)).enumerate() {
                    let r = (first + k) * n;
                    f(vals.get(r..r + n).unwrap_or(&[]), o);
                }
                Ok(())
            };
            p.chunks(&mut out, per_row.max(1), rows)?;
            self.write_f32(dst, &out, regions)
        });
        self.pool.give_f32(vals);
        self.pool.give_f32(out);
        r
    }
}
