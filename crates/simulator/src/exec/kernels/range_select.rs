//! RangeSelect (63, VectorE, gen3+; AWS `nki.isa.range_select`; docs/fidelity.md Q9): keep an
//! element where its index passes both comparisons, else write `fill_value`, and fold the
//! results into the engine's accumulator registers.
//!
//! `ins = [on_true, bound0, bound1]` (each bound an fp32 immediate or one value per partition
//! row), `outs = [dst, reduce_res?]`. Element j of a row has index `fp32(range_start + j)`; it is
//! kept when `op0(index, bound0)` and `op1(index, bound1)` (the `ts_ops` comparisons, in fp32).
//! `acc` (absent: ZeroAccumulate, AWS's `reset_reduce` default) folds the fp32 results, before
//! the cast, into the registers with `reduce_op` (max when absent), as Activation's accumulators
//! do (E7); `reduce_res`, when present, receives the registers after the fold.

use crate::exec::kit::registers::{Accumulate, Param};
use crate::exec::kit::{Cx, Res, Written, fault};
use crate::fault::FaultCause;
use bir_ir::ops::RangeSelectFields;
use bir_ir::{AluOp, EngineAccumulationType as Acc, Instruction};
use numerics::activation::Fold;
use numerics::alu::ts_ops;

/// Runs one RangeSelect.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, f: &RangeSelectFields, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let reduce_res = if i.outs.len() > 1 { Some(cx.output(i, 1)?) } else { None };
    let (parts, _) = src.shape()?;
    let total = src.values()?;
    let n = total / parts.max(1);
    let (Ok(op0), Ok(op1)) = (ts_ops::lookup(f.op0), ts_ops::lookup(f.op1)) else {
        return fault(FaultCause::BadField {
            field: "op0",
            why: "RangeSelect compares with is_equal, is_lt, is_le, is_gt or is_ge",
        });
    };
    let Some(fold) = Fold::of(Some(f.reduce_op.unwrap_or(AluOp::Max))) else {
        return fault(FaultCause::BadField {
            field: "reduce_op",
            why: "the fold is max, add, min, abs_max or abs_min",
        });
    };
    let acc = Accumulate { acc: Some(f.acc.unwrap_or(Acc::ZeroAccumulate)), fold, load: None };
    acc.check()?;
    if let Some(r) = reduce_res
        && r.values()? != parts
    {
        return fault(FaultCause::Count {
            slot: r.slot,
            expected: parts as u64,
            actual: r.values()? as u64,
            why: "one reduction result per partition row",
        });
    }
    let bounds = [Param::per_element(cx, i, 1, total)?, Param::per_element(cx, i, 2, total)?];
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(src, &mut v).and_then(|()| {
        let fill = f.fill_value.get();
        for (e, x) in v.iter_mut().enumerate() {
            let index = (f.range_start.wrapping_add((e % n.max(1)) as i64)) as f32;
            if op0(index, bounds[0][e]) == 0.0 || op1(index, bounds[1][e]) == 0.0 {
                *x = fill;
            }
        }
        if let Some(r) = reduce_res {
            // Both outputs' bounds first: a fault writes neither.
            cx.check_access(dst)?;
            cx.check_access(r)?;
        }
        cx.write_f32(dst, &v, regions)?;
        acc.apply(cx, i.engine, &v, n)?;
        match reduce_res {
            Some(r) => {
                // A register never written reads +0 (E8), as under `acc` Idle before any fold.
                let held = cx.engines.registers.of(i.engine);
                let regs: Vec<f32> = (0..parts).map(|k| held.get(k).copied().unwrap_or(0.0)).collect();
                cx.write_f32(r, &regs, regions)
            }
            None => Ok(()),
        }
    });
    cx.pool.give_f32(v);
    r
}
