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
//! (`Simulator::write_where`), so a false lane keeps its stored bits exactly.

use super::dma::{fmaxf, fminf};
use super::operand::{adds, same_count};
use super::{Arg, Res, Simulator, Written, fault};
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

/// `out` lane ← `a` lane where `take[lane]`, over values of `dt` (one flag per value, an `_x4`
/// container's lanes in N9 order), as bits: whole elements for a one-lane dtype, bytes for the
/// fp8 x4 dtypes (lane k = byte k of the little-endian container), nibbles for fp4 x4 (lane 2j
/// = the low nibble of byte j, lane 2j + 1 its high nibble). Dispatched once on the lane width.
pub(crate) fn merge_lanes(take: &[bool], a: &[u8], dt: Dtype, out: &mut [u8]) {
    let lanes = dt.lanes();
    if lanes == 1 {
        return merge_bytes(take, a, dt.size(), out);
    }
    if dt.size() * 8 / lanes == 8 {
        return merge_bytes(take, a, 1, out);
    }
    // Four-bit lanes: two per byte, the even lane in the low nibble.
    for ((o, v), [even, odd]) in out.iter_mut().zip(a).zip(take.as_chunks::<2>().0) {
        let mask = (u8::from(*even) * 0x0F) | (u8::from(*odd) * 0xF0);
        *o = (*o & !mask) | (*v & mask);
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

impl<'p> Simulator<'p> {
    /// An fp32 value converted to `dt` (the project cast), as one element's bytes; for an `_x4`
    /// dtype one container with the value cast to the lane dtype in every lane (K1).
    pub(crate) fn f32_as(&self, a: Arg<'_>, v: f32, dt: Dtype) -> Res<Vec<u8>> {
        let mut out = vec![0u8; dt.size()];
        let lanes = [v; 4];
        numerics::encode_from_f32(dt, lanes.get(..dt.lanes()).unwrap_or(&lanes), &mut out, self.profile())
            .map_err(|e| a.numerics(e))?;
        Ok(out)
    }

    /// `ins[k]` as `n` values of `dt` (K1: elements × lanes): an AP read converted, or an
    /// immediate broadcast to every lane.
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
                let len = one.len() * (n / dt.lanes());
                out.clear();
                crate::alloc::extend(out, len, one.iter().copied().cycle().take(len))?;
                Ok(())
            }
            Some(Operand::Ap(_)) => {
                let a = self.input(i, k)?;
                same_count(slot, n, a.values()?, VALUES)?;
                self.read(a, dt, out)?;
                same_count(slot, n, numerics::codec::values_in(dt, out.len()), VALUES)
            }
            _ => fault(FaultCause::OperandKind { slot, want: "an AP or an imm_value" }),
        }
    }

    /// Select (§5.5): `ins` = [pred, on_true, on_false], elementwise over values (K1).
    pub(crate) fn select(&mut self, i: &'p Instruction, regions: &mut Written) -> Res<()> {
        let out = self.output(i, 0)?;
        let dt = out.ap.dtype;
        let n = out.values()?;
        let pred_arg = self.input(i, 0)?;
        let mut pred = self.pool.take_f32();
        let (mut t, mut f) = (self.pool.take(), self.pool.take());
        let r = (|| {
            self.read_f32(pred_arg, &mut pred)?;
            same_count(pred_arg.slot, n, pred.len(), VALUES)?;
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
            merge_lanes(&take, &t, dt, &mut f);
            self.write(out, dt, &f, regions)
        })();
        self.pool.give_f32(pred);
        self.pool.give(t);
        self.pool.give(f);
        r
    }

    /// CopyPredicated (§5.5): `ins` = [src, pred], elementwise over values (K1); the merge is
    /// in the output memory's bits ([`Simulator::write_where`]).
    pub(crate) fn copy_predicated(
        &mut self,
        i: &'p Instruction,
        fields: &CopyPredicatedFields,
        regions: &mut Written,
    ) -> Res<()> {
        let out = self.output(i, 0)?;
        let dt = out.ap.dtype;
        let n = out.values()?;
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
        let (mut s, mut p) = (self.pool.take(), self.pool.take());
        let r = (|| {
            same_count(pred_arg.slot, n, pred_arg.values()?, VALUES)?;
            self.read(pred_arg, Dtype::Uint32, &mut p)?;
            same_count(pred_arg.slot, n, p.len() / 4, VALUES)?;
            match (src, imm) {
                (Some(src), _) => {
                    same_count(src.slot, n, src.values()?, VALUES)?;
                    self.read(src, dt, &mut s)?;
                }
                (None, c) => {
                    let a = Arg { slot: Slot::In(0), ..out };
                    let one = self.f32_as(a, c.unwrap_or(0.0), dt)?;
                    let len = one.len() * (n / dt.lanes());
                    s.clear();
                    crate::alloc::extend(&mut s, len, one.iter().copied().cycle().take(len))?;
                }
            }
            same_count(Slot::In(0), n, numerics::codec::values_in(dt, s.len()), VALUES)?;
            let rev = fields.reverse_pred;
            let words = p.as_chunks::<4>().0;
            let take = crate::alloc::collected(
                words.len(),
                words.iter().map(|w| (u32::from_le_bytes(*w) != 0) != rev),
            )?;
            self.write_where(out, &take, &s, regions)
        })();
        self.pool.give(s);
        self.pool.give(p);
        r?;
        match side {
            Some(op) => self.copy_predicated_reduce(i, op, fields.acc, regions),
            None => Ok(()),
        }
    }

    /// CopyPredicated's side output (D10, ASSUMED but for its existence): for each partition row
    /// of `outs[0]`, `fold = v0 ⊕ v1 ⊕ …` over the row's values after the copy, in element order
    /// (an x4 row's lane values container by container, lanes low to high: K1) in fp32 (`⊕` = add, mult, or glibc `fmaxf`/`fminf`; an empty row gives the identity), then
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
        let free = free * out.ap.dtype.lanes();
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

    /// K1 / N9 by hand. fp8 x4: lane k is byte k; lanes 0 and 3 taken. fp4 x4: the container
    /// 0x4321 (bytes 21 43) holds lanes 1, 2, 3, 4 (lane 0 the low nibble); lanes 1 and 2 taken
    /// from 0xDCBA (lanes A, B, C, D) give lanes 1, B, C, 4 = 0x4CB1, bytes B1 4C.
    #[test]
    fn merge_lanes_as_bytes_and_nibbles() {
        let mut out = vec![0x11, 0x22, 0x33, 0x44];
        merge_lanes(&[true, false, false, true], &[0xA0, 0xA1, 0xA2, 0xA3], Dtype::Float8E4m3fnX4, &mut out);
        assert_eq!(out, [0xA0, 0x22, 0x33, 0xA3]);
        let mut out = vec![0x21, 0x43];
        merge_lanes(&[false, true, true, false], &[0xBA, 0xDC], Dtype::Float4E2m1fnX4, &mut out);
        assert_eq!(out, [0xB1, 0x4C]);
        let mut out = vec![9u8, 9, 9, 9];
        merge_lanes(&[false, true], &[1, 2, 3, 4], Dtype::Bfloat16, &mut out);
        assert_eq!(out, [9, 9, 3, 4]);
    }

    /// The slow twin of [`merge_lanes`]: each container as its little-endian integer, lane k
    /// shifted out by k × the lane width (N9), picked, and shifted back.
    fn merge_twin(take: &[bool], a: &[u8], dt: Dtype, out: &[u8]) -> Vec<u8> {
        let (size, lanes) = (dt.size(), dt.lanes());
        let bits = 8 * size / lanes;
        let mask = u64::MAX >> (64 - bits);
        let word = |c: &[u8]| c.iter().rev().fold(0u64, |w, b| (w << 8) | u64::from(*b));
        let mut res = Vec::new();
        for (k, (o, v)) in out.chunks_exact(size).zip(a.chunks_exact(size)).enumerate() {
            let (o, v) = (word(o), word(v));
            let mut w = 0u64;
            for lane in 0..lanes {
                let from = if take[k * lanes + lane] { v } else { o };
                w |= from & (mask << (bits * lane));
            }
            res.extend_from_slice(&w.to_le_bytes()[..size]);
        }
        res
    }

    #[test]
    fn merge_lanes_matches_the_per_lane_twin() {
        let dts = [
            Dtype::Float4E2m1fnX4,
            Dtype::Float8E4m3fnX4,
            Dtype::Float8E5m2X4,
            Dtype::Bfloat16,
            Dtype::Int64,
        ];
        for dt in dts {
            let containers = 37;
            let bytes = |seed: u32| -> Vec<u8> {
                (0..containers * dt.size() as u32)
                    .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 13) as u8)
                    .collect()
            };
            let (a, out) = (bytes(1), bytes(7));
            let take: Vec<bool> = (0..containers as usize * dt.lanes())
                .map(|i| (i.wrapping_mul(40_503) >> 5) % 3 == 0)
                .collect();
            let want = merge_twin(&take, &a, dt, &out);
            let mut got = out.clone();
            merge_lanes(&take, &a, dt, &mut got);
            assert_eq!(got, want, "{dt}");
            assert!(got != out && got != a, "{dt}: the mix takes from both sides");
        }
    }

    #[test]
    fn bad_predicates() {
        assert_eq!(first_bad_predicate(&[0.0, -0.0, 1.0]), None);
        assert_eq!(first_bad_predicate(&[0.0, 2.0, 0.5]), Some((1, 2.0)));
        let nan = first_bad_predicate(&[1.0, f32::NAN]);
        assert!(matches!(nan, Some((1, v)) if v.is_nan()));
    }
}
