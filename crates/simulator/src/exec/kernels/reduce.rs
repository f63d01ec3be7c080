//! TensorReduce (seed 000 §3.1) and Pool (§3.2).
//!
//! The folded dims come from the AP's [W,Z,Y,X] letters (docs/bir-json.md "Dim letters"): W is
//! level 0, X the innermost level, and a short AP's missing middle dims are size 1, so no axis
//! but XYZW / C / XYZWC ever folds the partition dim. Every fold runs strictly in element order
//! within its output (a left fold; never reassociated), dispatched once on the op into a
//! monomorphic loop. An accumulating TensorReduce (`acc` Accumulate, AddAccumulate or
//! LoadAccumulate: docs/fidelity.md S6, L1) adds the negated fold into what the output holds
//! through the shared accumulate; absent, Idle, Zero and ZeroAccumulate overwrite.

use crate::exec::kit::facts::{self, Fact, Facts, Verdict};
use crate::exec::kit::{Arg, Cx, Parallelism, Res, Written, adds, fault};
use crate::fault::FaultCause;
use bir_ir::ops::{PoolFields, TensorReduceFields};
use bir_ir::{AluOp, AxisListType, Dtype, Instruction, PoolFunctionType};
use numerics::alu::{F32Op, F32Visitor, I32Op, I32Visitor, fmaxf, ts_int_ops, ts_ops};
use std::marker::PhantomData;

/// The 32 × 32 partition transpose of `apply_transpose` (seed 000 §3.1), with StreamTranspose's
/// index mapping (§5.3): element (p, e) goes to partition `(p & ~31) | (e & 31)`, element
/// `(e & ~31) | (p & 31)` (ASSUMED: the same mapping).
fn transpose32(v: &[f32], parts: usize, free: usize) -> Option<Vec<f32>> {
    if !parts.is_multiple_of(32) || !free.is_multiple_of(32) {
        return None;
    }
    let mut out = crate::alloc::filled(v.len(), 0f32).ok()?;
    for p in 0..parts {
        for e in 0..free {
            let (op, oe) = ((p & !31) | (e & 31), (e & !31) | (p & 31));
            out[op * free + oe] = v[p * free + e];
        }
    }
    Some(out)
}

/// How a fold starts and steps.
pub(crate) trait Comb<T>: Copy {
    /// The accumulator from a fold's first value.
    fn first(self, x: T) -> T;
    /// The next step.
    fn next(self, acc: T, x: T) -> T;
}

/// A left fold by an ALU functor: `acc = x0; acc = op(acc, x)`.
pub(crate) struct ByOp<O>(PhantomData<fn() -> O>);

impl<O> Clone for ByOp<O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O> Copy for ByOp<O> {}

impl<O: F32Op> Comb<f32> for ByOp<O> {
    #[inline(always)]
    fn first(self, x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn next(self, acc: f32, x: f32) -> f32 {
        O::apply(acc, x)
    }
}

/// The same over int32 with a `ts_int_ops` functor.
struct ByIntOp<O>(PhantomData<fn() -> O>);

impl<O> Clone for ByIntOp<O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O> Copy for ByIntOp<O> {}

impl<O: I32Op> Comb<i32> for ByIntOp<O> {
    #[inline(always)]
    fn first(self, x: i32) -> i32 {
        x
    }
    #[inline(always)]
    fn next(self, acc: i32, x: i32) -> i32 {
        O::apply(acc, x)
    }
}

/// The divide-first running mean (seed 000 §3.1, CONFIRMED): `acc = x0 / N`, then
/// `acc = acc + (1/N)·x`, the product and the sum each rounded to fp32.
#[derive(Clone, Copy)]
struct Average {
    n: f32,
    inv: f32,
}

impl Comb<f32> for Average {
    #[inline(always)]
    fn first(self, x: f32) -> f32 {
        x / self.n
    }
    #[inline(always)]
    fn next(self, acc: f32, x: f32) -> f32 {
        acc + self.inv * x
    }
}

/// Folds consecutive rows of `extent` values into `out` (one per row), strictly in order within
/// each row. Eight rows go at once in lockstep, four columns at a time: each row's next four
/// values are loaded together and fed to its fold one by one, so the eight independent folds of
/// a column run as two 4-lane vector operations (SIMD across rows, never reassociating a row:
/// peers.md's note on bit-exact reductions) and the loads need no staging buffer. Eight rows
/// (not sixteen) keep few memory streams open, which this read-bound loop is limited by.
#[expect(
    clippy::needless_range_loop,
    reason = "column-major walks over row-major lanes read clearest indexed"
)]
fn fold_rows<S: Copy, T: Copy>(v: &[S], extent: usize, get: impl Fn(S) -> T, c: impl Comb<T>, out: &mut [T]) {
    const L: usize = 8;
    let extent = extent.max(1);
    let mut blocks = v.chunks_exact(L * extent);
    let mut outs = out.chunks_exact_mut(L);
    for (block, o) in (&mut blocks).zip(&mut outs) {
        let rows: [&[S]; L] = std::array::from_fn(|l| &block[l * extent..(l + 1) * extent]);
        let mut acc: [T; L] = std::array::from_fn(|l| c.first(get(rows[l][0])));
        let mut j = 1;
        while j + 4 <= extent {
            let quads: [[T; 4]; L] = std::array::from_fn(|l| {
                let q = &rows[l][j..j + 4];
                [get(q[0]), get(q[1]), get(q[2]), get(q[3])]
            });
            for k in 0..4 {
                for l in 0..L {
                    acc[l] = c.next(acc[l], quads[l][k]);
                }
            }
            j += 4;
        }
        for j in j..extent {
            for l in 0..L {
                acc[l] = c.next(acc[l], get(rows[l][j]));
            }
        }
        o.copy_from_slice(&acc);
    }
    for (row, o) in blocks.remainder().chunks_exact(extent).zip(outs.into_remainder()) {
        *o = row[1..].iter().fold(c.first(get(row[0])), |acc, x| c.next(acc, get(*x)));
    }
}

/// Folds columns `off..off + out.len()` of rows of `n_out` values: output `k` is the in-order
/// fold of `v[k], v[n_out + k], v[2·n_out + k], …` (the C axis: across partitions, partition 0
/// first).
fn fold_cols<S: Copy, T: Copy>(
    v: &[S],
    n_out: usize,
    off: usize,
    get: impl Fn(S) -> T,
    c: impl Comb<T>,
    out: &mut [T],
) {
    let mut rows = v.chunks_exact(n_out.max(1));
    let Some(first) = rows.next() else { return };
    let cols = off..off + out.len();
    out.iter_mut().zip(&first[cols.clone()]).for_each(|(o, x)| *o = c.first(get(*x)));
    for row in rows {
        out.iter_mut().zip(&row[cols.clone()]).for_each(|(a, x)| *a = c.next(*a, get(*x)));
    }
}

/// Every output of a reduce, split across threads between outputs (never within one).
fn fold<S: Copy + Sync, T: Copy + Send>(
    par: Parallelism,
    v: &[S],
    shape: Shape,
    get: impl Fn(S) -> T + Copy + Sync,
    c: impl Comb<T> + Sync,
    out: &mut [T],
) {
    let par = Parallelism { grain: (par.grain / shape.extent.max(1)).max(16), ..par };
    let e = shape.extent.max(1);
    let _ = par.chunks(out, 16, |off, chunk| {
        if shape.cols {
            fold_cols(v, shape.n_out, off, get, c, chunk);
        } else {
            fold_rows(&v[off * e..(off + chunk.len()) * e], e, get, c, chunk);
        }
        Ok::<(), ()>(())
    });
}

/// The shape of a reduce: `n_out` outputs, each folding `extent` elements, laid out as
/// consecutive rows (`cols == false`) or as columns `n_out` apart (`cols == true`).
#[derive(Clone, Copy, Debug)]
struct Shape {
    n_out: usize,
    extent: usize,
    cols: bool,
}

/// Product of `nums`, checked.
fn product(nums: &[usize]) -> Option<usize> {
    nums.iter().try_fold(1usize, |a, &n| a.checked_mul(n))
}

/// Visits an fp32 op with a reduce's data.
struct FoldF32<'a, S, G> {
    par: Parallelism,
    v: &'a [S],
    shape: Shape,
    /// Decodes one element (a zero-sized function item, inlined into the loop).
    get: G,
    out: &'a mut [f32],
}

impl<S: Copy + Sync, G: Fn(S) -> f32 + Copy + Sync> F32Visitor for FoldF32<'_, S, G> {
    type Out = ();
    fn visit<O: F32Op>(self) {
        fold(self.par, self.v, self.shape, self.get, ByOp::<O>(PhantomData), self.out);
    }
}

struct FoldI32<'a> {
    par: Parallelism,
    v: &'a [[u8; 4]],
    shape: Shape,
    out: &'a mut [i32],
}

impl I32Visitor for FoldI32<'_> {
    type Out = ();
    fn visit<O: I32Op>(self) {
        fold(self.par, self.v, self.shape, i32::from_le_bytes, ByIntOp::<O>(PhantomData), self.out);
    }
}

/// TensorReduce: scalar dynamic offsets run (the floor resolves them, `facts::classify_offsets`), but
/// an input carrying one needs `axis` X (seed 000 §3.1: "Indirection is only allowed for
/// AxisListType::X" + "num_dims == 1"; validation refuses the rest, D19).
pub(crate) fn classify_reduce(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if !q.yes(Fact::AxisX) && q.get(Fact::SrcOffset) != facts::OFFSET_NONE {
        return Verdict::rejected(
            "bir-ir validation: an indirect input with an axis other than X (seed 000 §3.1: \"Indirection is only allowed for AxisListType::X\")",
        );
    }
    Verdict::runs("")
}

/// TensorReduce: fold the `axis` dims, divide-first average, negate after the fold, then
/// accumulate into the output when `acc` adds (seed 000 §3.1; fidelity L1) or write it.
pub(crate) fn tensor_reduce(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorReduceFields,
    regions: &mut Written,
) -> Res<()> {
    let (inp, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    if t.axis.is_cross_partition() {
        if !matches!(
            t.op,
            AluOp::Add
                | AluOp::Average
                | AluOp::Max
                | AluOp::BitwiseOr
                | AluOp::BitwiseAnd
                | AluOp::BitwiseXor
        ) {
            return fault(FaultCause::UnsupportedOp { what: "a cross-partition reduce", op: t.op });
        }
        if t.negate {
            return fault(FaultCause::BadField {
                field: "negate",
                why: "a cross-partition reduce cannot negate",
            });
        }
    }
    let shape = reduce_shape(inp, t.axis)?;
    let par = cx.options.parallelism;
    let acc = adds(t.acc);
    if inp.ap.dtype.is_integer() && !t.apply_transpose {
        let mut b = cx.pool.take();
        let r = (|| {
            cx.read(inp, Dtype::Int32, &mut b)?;
            let mut res = crate::alloc::filled(shape.n_out, 0i32)?;
            let fold = FoldI32 { par, v: b.as_chunks::<4>().0, shape, out: &mut res };
            ts_int_ops::with(t.op, fold).map_err(|error| FaultCause::Op { field: "op", error })?;
            if t.negate {
                res.iter_mut().for_each(|x| *x = x.wrapping_neg());
            }
            let bytes = crate::alloc::collected(res.len() * 4, res.iter().flat_map(|x| x.to_le_bytes()))?;
            match acc {
                Some(acc) => cx.accumulate(out, acc, Dtype::Int32, &bytes, regions),
                None => cx.write(out, Dtype::Int32, &bytes, regions),
            }
        })();
        cx.pool.give(b);
        return r;
    }
    let mut res = crate::alloc::filled(shape.n_out, 0f32)?;
    if !shape.cols
        && t.op != AluOp::Average
        && !t.apply_transpose
        && inp.ap.dtype == Dtype::Float32
        && let Some(range) = cx.contiguous(inp)?
    {
        // One contiguous fp32 run: fold straight from memory, no copy.
        let touch = crate::memory::Touch { range: Some(range.clone()), covers: false };
        let (buf, _) = cx.memory.buffer_for(inp.ap.loc, &touch);
        let v = buf[range].as_chunks::<4>().0;
        let fold = FoldF32 { par, v, shape, get: f32::from_le_bytes, out: &mut res };
        ts_ops::with(t.op, fold).map_err(|error| FaultCause::Op { field: "op", error })?;
        return finish_reduce(cx, out, res, t, regions);
    }
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(inp, &mut v).and_then(|()| {
        if t.apply_transpose {
            let (parts, free) = inp.shape()?;
            match transpose32(&v, parts, free) {
                Some(tv) => v = tv,
                None => {
                    return fault(FaultCause::Dims {
                        slot: inp.slot,
                        why: "apply_transpose needs partitions and free size that are multiples of 32",
                    });
                }
            }
        }
        if t.op == AluOp::Average {
            let n = shape.extent as f32;
            fold(par, &v, shape, |x| x, Average { n, inv: 1.0 / n }, &mut res);
        } else {
            let fold = FoldF32 { par, v: &v, shape, get: |x: f32| x, out: &mut res };
            ts_ops::with(t.op, fold).map_err(|error| FaultCause::Op { field: "op", error })?;
        }
        Ok(())
    });
    cx.pool.give_f32(v);
    r?;
    finish_reduce(cx, out, res, t, regions)
}

/// Negate after the fold, then accumulate into the output or write (seed 000 §3.1).
fn finish_reduce(
    cx: &mut Cx<'_>,
    out: Arg<'_>,
    mut res: Vec<f32>,
    t: &TensorReduceFields,
    regions: &mut Written,
) -> Res<()> {
    if t.negate {
        res.iter_mut().for_each(|x| *x = -*x);
    }
    cx.finish_f32(out, &res, adds(t.acc), regions)
}

/// Pool: a window of the X and Y dims; Max from −FLT_MAX with `fmaxf`, Avg as an SSE 4-lane
/// sum times 1/N (seed 000 §3.2).
pub(crate) fn pool(cx: &mut Cx<'_>, i: &Instruction, p: &PoolFields, regions: &mut Written) -> Res<()> {
    let (inp, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let window = pool_window(inp.ap);
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(inp, &mut v);
    let res: Vec<f32> = v
        .chunks_exact(window)
        .map(|w| match p.func {
            PoolFunctionType::Max => w.iter().fold(-f32::MAX, |acc, x| fmaxf(*x, acc)),
            PoolFunctionType::Avg => {
                // Four SSE lanes over whole groups of four, combined as two `haddps`, then the
                // scalar tail in order; the product with 1/N is taken in double (ASSUMED).
                let mut lanes = [0f32; 4];
                let body = w.len() / 4 * 4;
                for quad in w[..body].chunks_exact(4) {
                    for (l, x) in lanes.iter_mut().zip(quad) {
                        *l += *x;
                    }
                }
                let mut sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
                for x in &w[body..] {
                    sum += *x;
                }
                (f64::from(sum) * (1.0 / window as f64)) as f32
            }
        })
        .collect();
    cx.pool.give_f32(v);
    r?;
    cx.write_f32(out, &res, regions)
}

/// Which elements a TensorReduce folds, from its axis and the input AP's dim letters
/// (`AccessPattern::folds_level`, docs/bir-json.md "Dim letters"): a suffix of levels folds
/// consecutive rows; C folds the partition level alone, as columns.
fn reduce_shape(inp: Arg<'_>, axis: AxisListType) -> Res<Shape> {
    let ap = inp.ap;
    let nums: Vec<usize> = ap.pairs.iter().map(|p| p.num.max(1) as usize).collect();
    let total = inp.elements()?;
    let folded: Vec<bool> = (0..nums.len()).map(|l| ap.folds_level(axis, l)).collect();
    let first = folded.iter().position(|f| *f).unwrap_or(nums.len());
    if folded[first..].iter().all(|f| *f) {
        let extent = product(&nums[first..])
            .ok_or_else(|| inp.access(access_pattern::ApError::Overflow { dim: first }))?;
        return Ok(Shape { n_out: total / extent.max(1), extent: extent.max(1), cols: false });
    }
    if first == 0 && folded[1..].iter().all(|f| !*f) {
        let parts = nums[0];
        return Ok(Shape { n_out: total / parts, extent: parts, cols: true });
    }
    fault(FaultCause::Dims {
        slot: inp.slot,
        why: "the axis folds levels that are neither a suffix nor the partition level alone",
    })
}

/// The Pool window: the X and Y dims of the input (seed 000 §3.2, under the dim-letter rule).
fn pool_window(ap: &bir_ir::AccessPattern) -> usize {
    let nums: Vec<usize> = ap
        .pairs
        .iter()
        .enumerate()
        .filter(|(l, _)| ap.folds_level(AxisListType::Xy, *l))
        .map(|(_, p)| p.num.max(1) as usize)
        .collect();
    product(&nums).unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numerics::alu::ts_ops;

    /// fold_rows against a plain loop on sizes that are not multiples of the 16 lanes.
    #[test]
    fn fold_rows_matches_a_plain_left_fold() {
        // Row counts around the 8-row blocks, extents around the 4-column quads; values that
        // lose bits when reassociated, with NaN, ±0 and ±Inf mixed in.
        for rows in [1, 7, 8, 9, 17, 37] {
            for extent in [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 67] {
                let v: Vec<f32> = (0..rows * extent)
                    .map(|k| match k % 23 {
                        5 => f32::NAN,
                        7 => -0.0,
                        11 => f32::INFINITY,
                        13 => f32::NEG_INFINITY,
                        _ => ((k * 7919) % 1000) as f32 * 1.0e-3 + 1.0e7 * (k % 3) as f32 - 1.0e7,
                    })
                    .collect();
                for op in [AluOp::Add, AluOp::Max, AluOp::Min, AluOp::Subtract, AluOp::Mult] {
                    let mut got = vec![0f32; rows];
                    struct Go<'a>(&'a [f32], usize, &'a mut [f32]);
                    impl F32Visitor for Go<'_> {
                        type Out = ();
                        fn visit<O: F32Op>(self) {
                            fold_rows(self.0, self.1, |x| x, ByOp::<O>(PhantomData), self.2);
                        }
                    }
                    ts_ops::with(op, Go(&v, extent, &mut got)).ok();
                    struct Want<'a>(&'a [f32], usize);
                    impl F32Visitor for Want<'_> {
                        type Out = Vec<u32>;
                        fn visit<O: F32Op>(self) -> Vec<u32> {
                            self.0
                                .chunks(self.1)
                                .map(|r| r[1..].iter().fold(r[0], |a, x| O::apply(a, *x)).to_bits())
                                .collect()
                        }
                    }
                    let want = ts_ops::with(op, Want(&v, extent)).unwrap();
                    // Which of two NaNs a result carries is the compiled code's (docs/fidelity.md
                    // N20): a NaN matches any NaN, every other value bit for bit.
                    let canon = |b: u32| if f32::from_bits(b).is_nan() { 0x7FC0_0000 } else { b };
                    let got: Vec<u32> = got.iter().map(|x| canon(x.to_bits())).collect();
                    let want: Vec<u32> = want.into_iter().map(canon).collect();
                    assert_eq!(got, want, "{op:?}: {rows} rows of {extent}");
                }
            }
        }
    }

    /// Divide-first differs from sum-then-divide: the mean of ten 1.0s is 0x3F800001, not 1.0
    /// (worked with NumPy float32: acc = 1/10, then acc + 0.1f·1 nine times).
    #[test]
    fn average_divides_first() {
        let c = Average { n: 10.0, inv: 1.0 / 10.0 };
        let mut out = [0f32; 2];
        fold_rows(&[1.0f32; 10], 10, |x| x, c, &mut out[..1]);
        fold_cols(&[1.0f32; 10], 1, 0, |x| x, c, &mut out[1..]);
        assert_eq!(out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), [0x3F80_0001; 2]);
    }

    fn ap(nums: &[i64]) -> bir_ir::AccessPattern {
        bir_ir::AccessPattern {
            loc: bir_ir::LocId(0),
            dtype: Dtype::Float32,
            offset: 0,
            pairs: nums.iter().map(|&n| bir_ir::ApPair::new(1, n)).collect(),
            dynamic: None,
        }
    }

    /// (outputs, extent, across partitions) per axis and AP, worked by hand from the letters.
    #[rstest::rstest]
    #[case::two_level_x(&[128, 64], AxisListType::X, (128, 64, false))]
    #[case::two_level_xy(&[128, 64], AxisListType::Xy, (128, 64, false))]
    #[case::two_level_xyz(&[128, 64], AxisListType::Xyz, (128, 64, false))]
    #[case::two_level_xyzw(&[128, 64], AxisListType::Xyzw, (1, 8192, false))]
    #[case::two_level_c(&[128, 64], AxisListType::C, (64, 128, true))]
    #[case::three_level_x(&[8, 3, 5], AxisListType::X, (24, 5, false))]
    #[case::three_level_xy(&[8, 3, 5], AxisListType::Xy, (8, 15, false))]
    #[case::three_level_xyz(&[8, 3, 5], AxisListType::Xyz, (8, 15, false))]
    #[case::four_level_xyz(&[4, 2, 3, 5], AxisListType::Xyz, (4, 30, false))]
    #[case::four_level_xyzwc(&[4, 2, 3, 5], AxisListType::Xyzwc, (1, 120, false))]
    #[case::one_level_x(&[7], AxisListType::X, (7, 1, false))]
    fn reduce_shapes_never_fold_w_unless_asked(
        #[case] nums: &[i64],
        #[case] axis: AxisListType,
        #[case] want: (usize, usize, bool),
    ) {
        let ap = ap(nums);
        let s = reduce_shape(Arg { slot: crate::fault::Slot::In(0), ap: &ap, cap: u64::MAX }, axis)
            .ok()
            .unwrap_or(Shape { n_out: 0, extent: 0, cols: false });
        assert_eq!((s.n_out, s.extent, s.cols), want);
    }

    #[rstest::rstest]
    #[case::two_level(&[128, 64], 64)]
    #[case::three_level(&[8, 3, 5], 15)]
    #[case::four_level(&[4, 2, 3, 5], 15)]
    fn pool_window_is_x_and_y(#[case] nums: &[i64], #[case] want: usize) {
        assert_eq!(pool_window(&ap(nums)), want);
    }
}
