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
//! The predicate is decided once into a byte mask; the merge is one pass dispatched on element
//! width ([`merge_bytes`]).

use super::dma::{fmaxf, fminf};
use super::operand::{adds, same_count};
use super::{Arg, Res, Simulator, Written, fault, unclassified};
use crate::fault::{FaultCause, Slot};
use bir_ir::ops::CopyPredicatedFields;
use bir_ir::{AluOp, Dtype, EngineAccumulationType, F32, Instruction, Operand};

/// `out[e] = take[e] ? a[e] : b[e]` over elements of `N` bytes (`b` may be `out` itself).
fn merge<const N: usize>(take: &[bool], a: &[[u8; N]], out: &mut [[u8; N]]) {
    for ((o, t), v) in out.iter_mut().zip(take).zip(a) {
        if *t {
            *o = *v;
        }
    }
}

/// [`merge`] on bytes, dispatched once on element width: `out[e] = a[e]` where `take[e]`.
pub(crate) fn merge_bytes(take: &[bool], a: &[u8], size: usize, out: &mut [u8]) {
    fn go<const N: usize>(take: &[bool], a: &[u8], out: &mut [u8]) {
        merge::<N>(take, a.as_chunks::<N>().0, out.as_chunks_mut::<N>().0);
    }
    match size {
        1 => go::<1>(take, a, out),
        2 => go::<2>(take, a, out),
        4 => go::<4>(take, a, out),
        _ => go::<8>(take, a, out),
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

impl<'p> Simulator<'p> {
    /// An fp32 value converted to `dt` (the project cast), as bytes.
    pub(crate) fn f32_as(&self, a: Arg<'_>, v: f32, dt: Dtype) -> Res<Vec<u8>> {
        let mut out = vec![0u8; dt.size()];
        numerics::cast(Dtype::Float32, &v.to_le_bytes(), dt, &mut out, self.profile())
            .map_err(|e| a.numerics(e))?;
        Ok(out)
    }

    /// `ins[k]` as `n` values of `dt`: an AP read converted, or an immediate broadcast.
    fn operand_as(
        &mut self,
        i: &'p Instruction,
        k: usize,
        dt: Dtype,
        n: usize,
        out: &mut Vec<u8>,
    ) -> Res<()> {
        let slot = Slot::In(k);
        match i.ins.get(k) {
            Some(Operand::Imm { value, .. }) => {
                let a = self.output(i, 0)?;
                let one = self.f32_as(Arg { slot, ..a }, value.as_f64() as f32, dt)?;
                out.clear();
                crate::alloc::extend(out, one.len() * n, one.iter().copied().cycle().take(one.len() * n))?;
                Ok(())
            }
            Some(Operand::Ap(_)) => {
                let a = self.input(i, k)?;
                self.read(a, dt, out)?;
                if out.len() != n * dt.size() {
                    return fault(FaultCause::Count {
                        slot,
                        expected: n as u64,
                        actual: (out.len() / dt.size().max(1)) as u64,
                        why: "the operand holds one value per output element",
                    });
                }
                Ok(())
            }
            _ => fault(FaultCause::OperandKind { slot, want: "an AP or an imm_value" }),
        }
    }

    /// Select (§5.5): `ins` = [pred, on_true, on_false].
    pub(crate) fn select(&mut self, i: &'p Instruction, regions: &mut Written) -> Res<()> {
        let out = self.output(i, 0)?;
        let dt = out.ap.dtype;
        if dt.lanes() != 1 {
            return unclassified("Select into a packed x4 dtype");
        }
        let n = out.elements()?;
        let pred_arg = self.input(i, 0)?;
        let mut pred = self.pool.take_f32();
        let (mut t, mut f) = (self.pool.take(), self.pool.take());
        let r = (|| {
            self.read_f32(pred_arg, &mut pred)?;
            same_count(pred_arg.slot, n, pred.len(), "the predicate holds one value per output element")?;
            if let Some((index, value)) = first_bad_predicate(&pred) {
                return fault(FaultCause::BadPredicate {
                    slot: pred_arg.slot,
                    index: index as u64,
                    value: F32::new(value),
                });
            }
            self.operand_as(i, 1, dt, n, &mut t)?;
            self.operand_as(i, 2, dt, n, &mut f)?;
            let take = crate::alloc::collected(pred.len(), pred.iter().map(|&p| p == 1.0))?;
            merge_bytes(&take, &t, dt.size(), &mut f);
            self.write(out, dt, &f, regions)
        })();
        self.pool.give_f32(pred);
        self.pool.give(t);
        self.pool.give(f);
        r
    }

    /// CopyPredicated (§5.5): `ins` = [src, pred].
    pub(crate) fn copy_predicated(
        &mut self,
        i: &'p Instruction,
        fields: &CopyPredicatedFields,
        regions: &mut Written,
    ) -> Res<()> {
        let out = self.output(i, 0)?;
        let dt = out.ap.dtype;
        if dt.lanes() != 1 {
            return unclassified("CopyPredicated into a packed x4 dtype");
        }
        let n = out.elements()?;
        // The side output's fields and shape are checked before anything is written.
        let side = if i.outs.len() > 1 { Some(side_op(fields)?) } else { None };
        if side.is_some() {
            let parts = out.shape()?.0;
            let s = self.output(i, 1)?;
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
        let pred_arg = self.input(i, 1)?;
        // The source is a tensor or an immediate (nki tensor_copy_predicated: "src tile or scalar").
        let imm = match i.ins.first() {
            Some(Operand::Imm { value, .. }) => Some(value.as_f64() as f32),
            _ => None,
        };
        let src = match imm {
            Some(_) => None,
            None => Some(self.input(i, 0)?),
        };
        let (mut s, mut p, mut o) = (self.pool.take(), self.pool.take(), self.pool.take());
        let r = (|| {
            self.read(pred_arg, Dtype::Uint32, &mut p)?;
            if p.len() != 4 * n {
                return fault(FaultCause::Count {
                    slot: pred_arg.slot,
                    expected: n as u64,
                    actual: (p.len() / 4) as u64,
                    why: "the predicate holds one value per output element",
                });
            }
            match (src, imm) {
                (Some(src), _) => self.read(src, dt, &mut s)?,
                (None, c) => {
                    let mut one = [0u8; 8];
                    let one = &mut one[..dt.size()];
                    let c = c.unwrap_or(0.0);
                    numerics::encode_from_f32(dt, &[c], one, self.profile())
                        .map_err(|error| FaultCause::Numerics { slot: Slot::In(0), error })?;
                    s.clear();
                    crate::alloc::extend(
                        &mut s,
                        n * one.len(),
                        std::iter::repeat_n(&*one, n).flatten().copied(),
                    )?;
                }
            }
            if s.len() != n * dt.size() {
                return fault(FaultCause::Count {
                    slot: Slot::In(0),
                    expected: n as u64,
                    actual: (s.len() / dt.size().max(1)) as u64,
                    why: "the source holds one value per output element",
                });
            }
            let rev = fields.reverse_pred;
            let words = p.as_chunks::<4>().0;
            let take = crate::alloc::collected(
                words.len(),
                words.iter().map(|w| (u32::from_le_bytes(*w) != 0) != rev),
            )?;
            if self.uncast(out.ap) {
                self.read(out, dt, &mut o)?;
                merge_bytes(&take, &s, dt.size(), &mut o);
                return self.write(out, dt, &o, regions);
            }
            // The output casts at the memory boundary: write only the taken elements, so the
            // others keep their stored bits exactly.
            let idx = super::dma::element_indices(out)?;
            let size = dt.size();
            for (k, &e) in idx.iter().enumerate() {
                if take[k] {
                    let ap = super::dma::one_element(out.ap, e);
                    self.write(out.with(&ap), dt, &s[k * size..(k + 1) * size], regions)?;
                }
            }
            Ok(())
        })();
        self.pool.give(s);
        self.pool.give(p);
        self.pool.give(o);
        r?;
        match side {
            Some(op) => self.copy_predicated_reduce(i, op, fields.acc, regions),
            None => Ok(()),
        }
    }

    /// CopyPredicated's side output (D10, ASSUMED but for its existence): for each partition row
    /// of `outs[0]`, `fold = v0 ⊕ v1 ⊕ …` over the row's values after the copy, in element order
    /// in fp32 (`⊕` = add, mult, or glibc `fmaxf`/`fminf`; an empty row gives the identity), then
    /// `outs[1][p] ← fold` (acc absent, Idle, Zero, ZeroAccumulate) or `outs[1][p] += fold`
    /// through the shared accumulate (Accumulate, AddAccumulate, LoadAccumulate: L1).
    fn copy_predicated_reduce(
        &mut self,
        i: &'p Instruction,
        op: AluOp,
        acc: Option<EngineAccumulationType>,
        regions: &mut Written,
    ) -> Res<()> {
        let (out, side) = (self.output(i, 0)?, self.output(i, 1)?);
        let (parts, free) = out.shape()?;
        let mut v = self.pool.take_f32();
        let r = (|| {
            self.read_f32(out, &mut v)?;
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
                    self.accumulate(side, acc, Dtype::Float32, &bytes, regions)
                }
                None => self.write_f32(side, &fold, regions),
            }
        })();
        self.pool.give_f32(v);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_by_width() {
        let take = [true, false, true];
        let mut out = vec![9u8, 9, 9, 9, 9, 9];
        merge_bytes(&take, &[1, 2, 3, 4, 5, 6], 2, &mut out);
        assert_eq!(out, [1, 2, 9, 9, 5, 6]);
    }

    #[test]
    fn bad_predicates() {
        assert_eq!(first_bad_predicate(&[0.0, -0.0, 1.0]), None);
        assert_eq!(first_bad_predicate(&[0.0, 2.0, 0.5]), Some((1, 2.0)));
        let nan = first_bad_predicate(&[1.0, f32::NAN]);
        assert!(matches!(nan, Some((1, v)) if v.is_nan()));
    }
}
