//! Select and CopyPredicated (seed 000 §5.5, re-facts §7; docs/fidelity.md D8–D10).
//!
//! - Select: `out[e] = pred[e] ? T[e] : F[e]`, the predicate strictly 0 or 1 (read as fp32,
//!   −0 counts as 0; D8), any other value a fault naming the element. T and F are APs or fp32
//!   immediates, read converted to the output dtype.
//! - CopyPredicated: `out[e] ← (pred[e] ≠ 0) XOR reverse_pred ? src[e] : out[e]`, the predicate
//!   read converted to uint32 (D9); with an `outs[1]`, the `doEngineAccumReduce` side output
//!   (seed 000 §5.5): per destination partition row, the in-order fp32 fold of `reduce_op` over
//!   the values the row holds after the copy, written or accumulated by `acc` (D10; LoadAccumulate
//!   accumulates, as Accumulate does: L1).
//!
//! Both are elementwise over *values* (docs/fidelity.md K1): an operand holds elements × lanes
//! values, an `_x4` container 4 of them in lane order (N9: lane k = the k-th lowest byte (fp8)
//! or nibble (fp4) of the little-endian container), and every operand must hold as many values
//! as the output (a located `count` fault otherwise, before anything is written). So an int32 or
//! fp32 predicate against an fp8_x4 output has 4× its elements, one per lane; an x4 predicate is
//! read lane by lane. Tensor operands are converted to the output dtype lane by lane; an fp32
//! immediate is cast to the lane dtype and stands for every lane.
//!
//! The predicate is decided once into one flag per value; the merge is one pass dispatched once
//! on the lane layout ([`merge_lanes`]: whole elements by width, the bytes of an fp8 x4
//! container, the nibbles of an fp4 one). CopyPredicated merges in the output memory's bits
//! (`Cx::write_where`), so a false lane keeps its stored bits exactly.

use crate::exec::kit::facts::{Fact, Facts, SIDE_ABSENT, SIDE_FOLD, Verdict};
use crate::exec::kit::lanes::merge_lanes;
use crate::exec::kit::{Arg, Cx, Res, Written, adds, facts, fault, same_count};
use crate::fault::{FaultCause, Slot};
use bir_ir::ops::CopyPredicatedFields;
use bir_ir::{AluOp, Dtype, EngineAccumulationType, F32, Instruction, Operand};
use numerics::alu::{fmaxf, fminf};

/// CopyPredicated : the side output's fold (packed x4 outputs run lane by
/// lane, K1).
pub(crate) fn classify_copy_predicated(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if !q.yes(Fact::SideOutput) {
        return Verdict::runs("");
    }
    match q.get(Fact::SideOp) {
        SIDE_ABSENT => Verdict::rejected("a side output needs a reduce_op (a bad-field fault)"),
        SIDE_FOLD => Verdict::runs("the side output folds add, mult, max or min, any acc (D10, L1)"),
        _ => Verdict::rejected("the side output folds only add, mult, max or min (an unsupported-op fault)"),
    }
}

/// The first predicate value that is neither 0 nor 1, with its index.
pub(crate) fn first_bad_predicate(pred: &[f32]) -> Option<(usize, f32)> {
    pred.iter().position(|&v| v != 0.0 && v != 1.0).map(|k| (k, pred[k]))
}

/// The side output's fold (D10): `reduce_op` must be add, mult, max or min (every `acc` value
/// is accepted: L1).
fn side_op(fields: &CopyPredicatedFields) -> Res<AluOp> {
    let Some(op) = fields.reduce_op else {
        return fault(FaultCause::BadField {
            field: "reduce_op",
            why: "a CopyPredicated side output (outs[1]) needs a reduce_op",
        });
    };
    if !matches!(op, AluOp::Add | AluOp::Mult | AluOp::Max | AluOp::Min) {
        return fault(FaultCause::UnsupportedOp {
            what: "a CopyPredicated side output (add, mult, max or min)",
            op,
        });
    }
    Ok(op)
}

/// The count rule every Select / CopyPredicated operand follows (K1).
const VALUES: &str = "every operand holds one value per output value (4 per x4 container)";

/// `ins[k]` as `n` values of `dt` (K1: elements × lanes): an AP read converted, or an
/// immediate broadcast to every lane.
fn operand_as(cx: &mut Cx<'_>, i: &Instruction, k: usize, dt: Dtype, n: usize, out: &mut Vec<u8>) -> Res<()> {
    let slot = Slot::In(k);
    match i.ins.get(k) {
        Some(Operand::Imm { value, .. }) => {
            let a = cx.output(i, 0)?;
            let one = cx.f32_as(Arg { slot, ..a }, value.as_f64() as f32, dt)?;
            let len = one.len() * (n / dt.lanes());
            out.clear();
            crate::alloc::extend(out, len, one.iter().copied().cycle().take(len))?;
            Ok(())
        }
        Some(Operand::Ap(_)) => {
            let a = cx.input(i, k)?;
            same_count(slot, n, a.values()?, VALUES)?;
            cx.read(a, dt, out)?;
            same_count(slot, n, numerics::codec::values_in(dt, out.len()), VALUES)
        }
        _ => fault(FaultCause::OperandKind { slot, want: "an AP or an imm_value" }),
    }
}

/// Select (§5.5): `ins` = [pred, on_true, on_false], elementwise over values (K1).
pub(crate) fn select(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let out = cx.output(i, 0)?;
    let dt = out.ap.dtype;
    let n = out.values()?;
    let pred_arg = cx.input(i, 0)?;
    let mut pred = cx.pool.take_f32();
    let (mut t, mut f) = (cx.pool.take(), cx.pool.take());
    let r = (|| {
        cx.read_f32(pred_arg, &mut pred)?;
        same_count(pred_arg.slot, n, pred.len(), VALUES)?;
        if let Some((index, value)) = first_bad_predicate(&pred) {
            return fault(FaultCause::BadPredicate {
                slot: pred_arg.slot,
                index: index as u64,
                value: F32::new(value),
            });
        }
        operand_as(cx, i, 1, dt, n, &mut t)?;
        operand_as(cx, i, 2, dt, n, &mut f)?;
        let take = crate::alloc::collected(pred.len(), pred.iter().map(|&p| p == 1.0))?;
        merge_lanes(&take, &t, dt, &mut f);
        cx.write(out, dt, &f, regions)
    })();
    cx.pool.give_f32(pred);
    cx.pool.give(t);
    cx.pool.give(f);
    r
}

/// CopyPredicated (§5.5): `ins` = [src, pred], elementwise over values (K1); the merge is
/// in the output memory's bits ([`Cx::write_where`]).
pub(crate) fn copy_predicated(
    cx: &mut Cx<'_>,
    i: &Instruction,
    fields: &CopyPredicatedFields,
    regions: &mut Written,
) -> Res<()> {
    let out = cx.output(i, 0)?;
    let dt = out.ap.dtype;
    let n = out.values()?;
    // The side output's fields and shape are checked before anything is written.
    let side = if i.outs.len() > 1 { Some(side_op(fields)?) } else { None };
    if side.is_some() {
        let parts = out.shape()?.0;
        let s = cx.output(i, 1)?;
        same_count(
            s.slot,
            parts,
            s.elements()?,
            "the side output holds one value per destination partition",
        )?;
        // An accumulating side output needs a dtype the shared accumulate reduces (S16).
        if let Some(acc) = adds(fields.acc)
            && !s.ap.dtype.is_reducible()
        {
            return fault(FaultCause::NotReducible { slot: s.slot, dtype: s.ap.dtype, acc });
        }
    }
    let pred_arg = cx.input(i, 1)?;
    // The source is a tensor or an immediate (nki tensor_copy_predicated: "src tile or scalar").
    let imm = match i.ins.first() {
        Some(Operand::Imm { value, .. }) => Some(value.as_f64() as f32),
        _ => None,
    };
    let src = match imm {
        Some(_) => None,
        None => Some(cx.input(i, 0)?),
    };
    let (mut s, mut p) = (cx.pool.take(), cx.pool.take());
    let r = (|| {
        same_count(pred_arg.slot, n, pred_arg.values()?, VALUES)?;
        cx.read(pred_arg, Dtype::Uint32, &mut p)?;
        same_count(pred_arg.slot, n, p.len() / 4, VALUES)?;
        match (src, imm) {
            (Some(src), _) => {
                same_count(src.slot, n, src.values()?, VALUES)?;
                cx.read(src, dt, &mut s)?;
            }
            (None, c) => {
                let a = Arg { slot: Slot::In(0), ..out };
                let one = cx.f32_as(a, c.unwrap_or(0.0), dt)?;
                let len = one.len() * (n / dt.lanes());
                s.clear();
                crate::alloc::extend(&mut s, len, one.iter().copied().cycle().take(len))?;
            }
        }
        same_count(Slot::In(0), n, numerics::codec::values_in(dt, s.len()), VALUES)?;
        let rev = fields.reverse_pred;
        let words = p.as_chunks::<4>().0;
        let take =
            crate::alloc::collected(words.len(), words.iter().map(|w| (u32::from_le_bytes(*w) != 0) != rev))?;
        if !fields.use_false_fill {
            return cx.write_where(out, &take, &s, regions);
        }
        // useFalseFill (D17): a false value is written with the fill (converted to the dtype as
        // the immediate source is), so every element is written: the fill everywhere, then the
        // source merged in where the predicate holds.
        let one = cx.f32_as(Arg { slot: Slot::Out(0), ..out }, fields.false_fill.get(), dt)?;
        let mut merged = Vec::new();
        crate::alloc::extend(&mut merged, s.len(), one.iter().copied().cycle().take(s.len()))?;
        merge_lanes(&take, &s, dt, &mut merged);
        cx.write(out, dt, &merged, regions)
    })();
    cx.pool.give(s);
    cx.pool.give(p);
    r?;
    match side {
        Some(op) => copy_predicated_reduce(cx, i, op, fields.acc, regions),
        None => Ok(()),
    }
}

/// CopyPredicated's side output (D10, ASSUMED but for its existence): for each partition row
/// of `outs[0]`, `fold = v0 ⊕ v1 ⊕ …` over the row's values after the copy, in element order
/// (an x4 row's lane values container by container, lanes low to high: K1) in fp32 (`⊕` = add, mult, or glibc `fmaxf`/`fminf`; an empty row gives the identity), then
/// `outs[1][p] ← fold` (acc absent, Idle, Zero, ZeroAccumulate) or `outs[1][p] += fold`
/// through the shared accumulate (Accumulate, AddAccumulate, LoadAccumulate: L1).
fn copy_predicated_reduce(
    cx: &mut Cx<'_>,
    i: &Instruction,
    op: AluOp,
    acc: Option<EngineAccumulationType>,
    regions: &mut Written,
) -> Res<()> {
    let (out, side) = (cx.output(i, 0)?, cx.output(i, 1)?);
    let (parts, free) = out.shape()?;
    let free = free * out.ap.dtype.lanes();
    let mut v = cx.pool.take_f32();
    let r = (|| {
        cx.read_f32(out, &mut v)?;
        let identity = match op {
            AluOp::Add => 0.0,
            AluOp::Mult => 1.0,
            AluOp::Max => f32::NEG_INFINITY,
            _ => f32::INFINITY,
        };
        let fold: Vec<f32> = (0..parts)
            .map(|p| {
                let row = v.get(p * free..(p + 1) * free).unwrap_or_default();
                let Some((&first, rest)) = row.split_first() else { return identity };
                match op {
                    AluOp::Add => rest.iter().fold(first, |a, &x| a + x),
                    AluOp::Mult => rest.iter().fold(first, |a, &x| a * x),
                    AluOp::Max => rest.iter().fold(first, |a, &x| fmaxf(a, x)),
                    _ => rest.iter().fold(first, |a, &x| fminf(a, x)),
                }
            })
            .collect();
        match adds(acc) {
            Some(acc) => {
                let bytes: Vec<u8> = fold.iter().flat_map(|x| x.to_le_bytes()).collect();
                cx.accumulate(side, acc, Dtype::Float32, &bytes, regions)
            }
            None => cx.write_f32(side, &fold, regions),
        }
    })();
    cx.pool.give_f32(v);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_predicates() {
        assert_eq!(first_bad_predicate(&[0.0, -0.0, 1.0]), None);
        assert_eq!(first_bad_predicate(&[0.0, 2.0, 0.5]), Some((1, 2.0)));
        let nan = first_bad_predicate(&[1.0, f32::NAN]);
        assert!(matches!(nan, Some((1, v)) if v.is_nan()));
    }
}
