//! BNStats (34) and BNStatsAggregate (35), VectorE: batch-norm statistics per partition row (AWS
//! `nki.isa.bn_stats` / `bn_aggr`; docs/fidelity.md Q3, Q4). The math is `numerics::stats`, on
//! the inputs read as fp32, the results cast to the output's dtype.
//!
//! - BNStats: `ins = [data]`, `outs = [AP]`; a row of n elements gets six values per
//!   512-element chunk (count, mean, m2 of the even-, then the odd-indexed elements). AWS allows
//!   one chunk (n ≤ 512); birsim runs longer rows chunk after chunk (Q3).
//! - BNStatsAggregate: `ins = [AP of (count, mean, m2) triples]`, `outs = [AP]`; each row's
//!   triples merge into its mean and population variance (Q4).

use crate::exec::kit::{Cx, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::Instruction;
use numerics::stats;

/// Runs one BNStats.
pub(crate) fn stats(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let n = src.shape()?.1 * src.ap.dtype.lanes();
    let why = "six values (count, mean, m2 of the even then the odd elements) per 512-element chunk of a row";
    cx.map_rows(src, dst, stats::bn_stats_len(n), why, stats::bn_stats, regions)
}

/// Runs one BNStatsAggregate.
pub(crate) fn aggregate(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let n = src.shape()?.1 * src.ap.dtype.lanes();
    if !n.is_multiple_of(3) {
        return fault(FaultCause::Count {
            slot: Slot::In(0),
            expected: n.next_multiple_of(3) as u64,
            actual: n as u64,
            why: "whole (count, mean, m2) triples per partition row",
        });
    }
    let why = "two values (mean, variance) per partition row";
    cx.map_rows(src, dst, 2, why, |row, out| out.copy_from_slice(&stats::bn_aggr(row)), regions)
}
