//! Row kernels: each output partition row a function of the same input row alone (BNStats,
//! BNStatsAggregate, Max, GetSequenceBounds). The rows run on the threads (no state crosses a
//! row, so results do not depend on the thread count) and the output is written once. An input
//! whose rows each lie in one ascending run of fp32 memory (no cast) in a linear layout is read
//! in place, a row at a time; any other is read whole as fp32 first.

use super::{Arg, Cx, Parallelism, Res, Written, fault};
use crate::fault::FaultCause;
use crate::memory::Touch;
use access_pattern::Pattern;
use bir_ir::Dtype;
use std::ops::Range;

impl Cx<'_> {
    /// Reads `src` as fp32 rows of its free values, checks that `dst` holds `per_row` values
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
        let n = src.values()? / parts.max(1);
        let total = dst.values()?;
        if Some(total) != parts.checked_mul(per_row) {
            return fault(FaultCause::Count {
                slot: dst.slot,
                expected: (parts as u64).saturating_mul(per_row as u64),
                actual: total as u64,
                why,
            });
        }
        // Threads split the output by whole rows; the grain counts the input they read.
        let par = self.options.parallelism;
        let par = Parallelism { grain: (par.grain / (n / per_row.max(1)).max(1)).max(1), ..par };
        let step = per_row.max(1);
        let mut out = self.pool.take_f32();
        let r = crate::alloc::resize(&mut out, total, 0.0).map_err(Into::into).and_then(|()| {
            if let Some(rows) = self.row_runs(src, n)? {
                let touch = Touch { range: self.extent(src.ap), covers: false };
                let (buf, _) = self.memory.buffer_for(src.ap.loc, &touch);
                let buf: &[u8] = buf;
                par.chunks(&mut out, step, |at, o| -> Res<()> {
                    let mut row = vec![0f32; n];
                    for (k, o) in o.chunks_exact_mut(step).enumerate() {
                        let bytes = rows.get(at / step + k).and_then(|r| buf.get(r.clone())).unwrap_or(&[]);
                        for (v, b) in row.iter_mut().zip(bytes.chunks_exact(4)) {
                            *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        }
                        f(&row, o);
                    }
                    Ok(())
                })?;
            } else {
                let mut vals = self.pool.take_f32();
                let r = self.read_f32(src, &mut vals).and_then(|()| {
                    par.chunks(&mut out, step, |at, o| -> Res<()> {
                        for (k, o) in o.chunks_exact_mut(step).enumerate() {
                            let r = (at / step + k) * n;
                            f(vals.get(r..r + n).unwrap_or(&[]), o);
                        }
                        Ok(())
                    })
                });
                self.pool.give_f32(vals);
                r?;
            }
            self.write_f32(dst, &out, regions)
        });
        self.pool.give_f32(out);
        r
    }

    /// The buffer bytes of each row of `n` values of `a`, when `a` reads fp32 memory as fp32 in a
    /// linear layout and each row is one ascending run (runs of several whole rows split).
    fn row_runs(&self, a: Arg<'_>, n: usize) -> Res<Option<Vec<Range<usize>>>> {
        let layout = self.memory.layout(a.ap.loc);
        if a.ap.dtype != Dtype::Float32
            || a.ap.dynamic.is_some()
            || !self.uncast(a.ap)
            || !layout.is_linear(4)
            || n == 0
        {
            return Ok(None);
        }
        let p = Pattern::of(a.ap);
        access_pattern::check_bounds(&layout, &p).map_err(|e| a.access(e))?;
        let Ok(runs) = p.runs() else { return Ok(None) };
        if runs.stride() != 1 {
            return Ok(None);
        }
        let mut rows = Vec::new();
        for run in runs {
            if run.len % n as u64 != 0 || run.start < 0 {
                return Ok(None);
            }
            let start = layout.origin() + run.start as usize * 4;
            rows.extend((0..run.len as usize / n).map(|k| start + k * n * 4..start + (k + 1) * n * 4));
        }
        Ok(Some(rows))
    }
}
