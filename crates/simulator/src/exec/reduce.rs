//! TensorReduce (seed 000 §3.1), Pool (§3.2) and TensorScalarCache (§4).

use super::elementwise::{Codec, Fp32, contiguous};
use super::{Res, Simulator, Written, elements, fault, i32_bytes, i32s, imm_f32, shape, sub_ap};
use crate::fault::FaultKind;
use bir_ir::ops::{PoolFields, TensorReduceFields, TensorScalarCacheFields};
use bir_ir::{
    AccessPattern, AluOp, AxisListType, Dtype, EngineAccumulationType, Instruction, PoolFunctionType, TscMode,
};
use numerics::alu::{ts_int_ops, ts_ops};

/// The 32 × 32 partition transpose of `apply_transpose` (seed 000 §3.1), with StreamTranspose's
/// index mapping (§5.3): element (p, e) goes to partition `(p & ~31) | (e & 31)`, element
/// `(e & ~31) | (p & 31)` (ASSUMED: the same mapping).
fn transpose32(v: &[f32], parts: usize, free: usize) -> Option<Vec<f32>> {
    if !parts.is_multiple_of(32) || !free.is_multiple_of(32) {
        return None;
    }
    let mut out = vec![0f32; v.len()];
    for p in 0..parts {
        for e in 0..free {
            let (op, oe) = ((p & !31) | (e & 31), (e & !31) | (p & 31));
            out[op * free + oe] = v[p * free + e];
        }
    }
    Some(out)
}

/// glibc `fmaxf(x, y)`: the other operand when one is NaN; `x` when `x >= y` (ASSUMED for ±0).
fn fmaxf(x: f32, y: f32) -> f32 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x >= y {
        x
    } else {
        y
    }
}

/// Folds consecutive rows of `extent` values, strictly in order within each row. Sixteen rows go
/// at once in lockstep, so the sixteen independent folds of a column run as one vector operation
/// (SIMD across rows, never reassociating a row: peers.md's note on bit-exact reductions).
struct FoldRows<'a, K: Codec> {
    v: &'a [K::C],
    extent: usize,
    out: &'a mut Vec<f32>,
    codec: std::marker::PhantomData<K>,
}

impl<K: Codec> numerics::alu::F32Visitor for FoldRows<'_, K> {
    type Out = ();
    fn visit<O: numerics::alu::F32Op>(self) {
        const L: usize = 16;
        let (v, extent) = (self.v, self.extent.max(1));
        for block in v.chunks(L * extent) {
            let rows: Vec<&[K::C]> = block.chunks_exact(extent).collect();
            if rows.len() < L {
                for row in rows {
                    let acc = row[1..].iter().fold(K::decode(row[0]), |acc, x| O::apply(acc, K::decode(*x)));
                    self.out.push(acc);
                }
                continue;
            }
            // Sixteen rows of exactly `extent` values, folded in lockstep: each lane folds its own
            // row in order; the lanes are independent, so the sixteen operations per column run as
            // one vector operation.
            let r: [&[K::C]; L] = std::array::from_fn(|l| &rows[l][..extent]);
            let mut acc: [f32; L] = std::array::from_fn(|l| K::decode(r[l][0]));
            #[allow(clippy::needless_range_loop, reason = "lockstep over sixteen rows")]
            for j in 1..extent {
                for l in 0..L {
                    acc[l] = O::apply(acc[l], K::decode(r[l][j]));
                }
            }
            self.out.extend_from_slice(&acc);
        }
    }
}

/// Plain `f32` values (already decoded).
#[derive(Clone, Copy)]
struct F32Values;
impl Codec for F32Values {
    type C = f32;
    #[inline(always)]
    fn decode(c: f32) -> f32 {
        c
    }
    #[inline(always)]
    fn encode(self, f: f32) -> f32 {
        f
    }
}

/// Whether an accumulation type adds the result into the output.
fn adds(acc: Option<EngineAccumulationType>) -> bool {
    matches!(acc, Some(EngineAccumulationType::Accumulate | EngineAccumulationType::AddAccumulate))
}

impl<'p> Simulator<'p> {
    /// TensorReduce: fold the innermost `axis` dims (or across partitions), divide-first average,
    /// negate after the fold, then accumulate into the output (seed 000 §3.1).
    pub(crate) fn tensor_reduce(
        &mut self,
        i: &'p Instruction,
        t: &TensorReduceFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (inp, out) = (self.in_ap(i, 0)?, self.out_ap(i, 0)?);
        if inp.dynamic.is_some() && t.axis != AxisListType::X {
            return fault(FaultKind::BadField, "Indirection is only allowed for AxisListType::X");
        }
        let cross = t.axis.is_cross_partition();
        if cross {
            if !matches!(
                t.op,
                AluOp::Add
                    | AluOp::Average
                    | AluOp::Max
                    | AluOp::BitwiseOr
                    | AluOp::BitwiseAnd
                    | AluOp::BitwiseXor
            ) {
                return fault(
                    FaultKind::UnsupportedOp,
                    format!("a cross-partition reduce does not support op {}", t.op),
                );
            }
            if t.negate {
                return fault(FaultKind::BadField, "a cross-partition reduce cannot negate");
            }
        }
        let nums: Vec<usize> = inp.pairs.iter().map(|p| p.num as usize).collect();
        let total: usize = nums.iter().product();
        // (outputs, extent, stride between folded elements, stride between outputs)
        let (n_out, extent, step, out_step) = match t.axis {
            AxisListType::C => (total / nums[0], nums[0], total / nums[0], 1),
            AxisListType::Xyzwc => (1, total, 1, 0),
            axis => {
                let d = axis.ordinal() as usize + 1;
                if nums.len() < d {
                    return fault(
                        FaultKind::Shape,
                        format!("Input AP dimension should be larger than num_dims, which is {d}"),
                    );
                }
                let extent: usize = nums[nums.len() - d..].iter().product();
                (total / extent, extent, 1, extent)
            }
        };
        let index = |k: usize, j: usize| if step == 1 { k * out_step + j } else { k + j * step };
        if inp.dtype.is_integer() && !t.apply_transpose {
            let v = i32s(&self.read_as(inp, Dtype::Int32)?);
            let f = ts_int_ops::lookup(t.op)?;
            let mut res: Vec<i32> = (0..n_out)
                .map(|k| (1..extent).fold(v[index(k, 0)], |acc, j| f(acc, v[index(k, j)])))
                .collect();
            if t.negate {
                res.iter_mut().for_each(|x| *x = x.wrapping_neg());
            }
            if adds(t.acc) {
                let prev = i32s(&self.read_as(out, Dtype::Int32)?);
                res.iter_mut().zip(prev).for_each(|(a, b)| *a = a.saturating_add(b));
            }
            return self.write_from(out, Dtype::Int32, &i32_bytes(&res), regions);
        }
        if step == 1
            && t.op != AluOp::Average
            && !t.apply_transpose
            && inp.dtype == Dtype::Float32
            && self.uncast(inp)
            && let Some(range) = contiguous(&self.memory.layout(inp.loc), inp)?
        {
            // One contiguous fp32 run: fold straight from memory, no copy.
            let mut res = Vec::with_capacity(n_out);
            let (buf, _) = self.memory.buffer_mut(inp.loc);
            let v = buf[range].as_chunks::<4>().0;
            let fold = FoldRows::<Fp32> { v, extent, out: &mut res, codec: std::marker::PhantomData };
            ts_ops::with(t.op, fold)?;
            return self.finish_reduce(out, res, t, regions);
        }
        if step == 1
            && t.op != AluOp::Average
            && !t.apply_transpose
            && inp.pairs.len() == 2
            && n_out == nums[0]
        {
            // One fold per partition: read 16 partitions at a time into a reused buffer.
            let mut res = Vec::with_capacity(n_out);
            let mut v = Vec::new();
            for p0 in (0..n_out).step_by(16) {
                self.read_f32_into(&sub_ap(inp, p0, 16.min(n_out - p0)), &mut v)?;
                let fold =
                    FoldRows::<F32Values> { v: &v, extent, out: &mut res, codec: std::marker::PhantomData };
                ts_ops::with(t.op, fold)?;
            }
            return self.finish_reduce(out, res, t, regions);
        }
        let mut v = self.read_f32(inp)?;
        if t.apply_transpose {
            let (parts, free) = shape(inp)?;
            v = match transpose32(&v, parts, free) {
                Some(tv) => tv,
                None => {
                    return fault(
                        FaultKind::Shape,
                        "apply_transpose needs partitions and free size that are multiples of 32",
                    );
                }
            };
        }
        let mut res = Vec::with_capacity(n_out);
        if step == 1 && t.op != AluOp::Average {
            // Contiguous folds: 16 outputs at a time, each lane folding its own row in order.
            let fold =
                FoldRows::<F32Values> { v: &v, extent, out: &mut res, codec: std::marker::PhantomData };
            ts_ops::with(t.op, fold)?;
        } else if t.op == AluOp::Average {
            // Divide first, then a running mean: acc = in0 / N; acc = acc + (1/N)·x.
            let n = extent as f32;
            let inv = 1.0 / n;
            for k in 0..n_out {
                let mut acc = v[index(k, 0)] / n;
                for j in 1..extent {
                    acc += inv * v[index(k, j)];
                }
                res.push(acc);
            }
        } else {
            let f = ts_ops::lookup(t.op)?;
            for k in 0..n_out {
                let mut acc = v[index(k, 0)];
                for j in 1..extent {
                    acc = f(acc, v[index(k, j)]);
                }
                res.push(acc);
            }
        }
        self.finish_reduce(out, res, t, regions)
    }

    /// Negate after the fold, then accumulate into the output, then write (seed 000 §3.1).
    fn finish_reduce(
        &mut self,
        out: &AccessPattern,
        mut res: Vec<f32>,
        t: &TensorReduceFields,
        regions: &mut Written,
    ) -> Res<()> {
        if t.negate {
            res.iter_mut().for_each(|x| *x = -*x);
        }
        if adds(t.acc) {
            let prev = self.read_f32(out)?;
            res.iter_mut().zip(prev).for_each(|(a, b)| *a += b);
        }
        self.write_f32(out, &res, regions)
    }

    /// Pool: a window of the two innermost dims; Max from −FLT_MAX with `fmaxf`, Avg as an SSE
    /// 4-lane sum times 1/N (seed 000 §3.2).
    pub(crate) fn pool(&mut self, i: &'p Instruction, p: &PoolFields, regions: &mut Written) -> Res<()> {
        let (inp, out) = (self.in_ap(i, 0)?, self.out_ap(i, 0)?);
        let n = inp.pairs.len();
        if n < 2 {
            return fault(FaultKind::Shape, "Pool needs an input AP with at least two dims (the window)");
        }
        let window = (inp.pairs[n - 1].num * inp.pairs[n - 2].num) as usize;
        let v = self.read_f32(inp)?;
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
        self.write_f32(out, &res, regions)
    }

    /// TensorScalarCache: per partition a running cache `c`; per element
    /// `t = op0(x, c)` then `t = op1(t, c)` (operands swapped by the reverse flags), `c = t`.
    /// Reduce writes the final `c`; Cumulative and TensorScan write every `t` (seed 000 §4).
    pub(crate) fn tensor_scalar_cache(
        &mut self,
        i: &'p Instruction,
        t: &TensorScalarCacheFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (inp, out) = (self.in_ap(i, 0)?, self.out_ap(i, 0)?);
        let (parts, free) = shape(inp)?;
        let init: Vec<f32> = match (t.acc, i.ins.get(1)) {
            (EngineAccumulationType::LoadAccumulate, Some(op)) => match (imm_f32(op), op.as_ap()) {
                (Some(c), _) => vec![c; parts],
                (None, Some(ap)) => {
                    let v = self.read_f32(ap)?;
                    if v.len() != parts {
                        return fault(
                            FaultKind::Shape,
                            format!("the initial value AP has {} elements for {parts} partitions", v.len()),
                        );
                    }
                    v
                }
                (None, None) => {
                    return fault(FaultKind::BadField, "the initial value must be an imm_value or an AP");
                }
            },
            _ => vec![0.0; parts],
        };
        let (f0, f1) = (ts_ops::lookup(t.op0)?, ts_ops::lookup(t.op1)?);
        let v = self.read_f32(inp)?;
        let every = t.mode != TscMode::Reduce;
        let mut res = Vec::with_capacity(if every { v.len() } else { parts });
        for (p, row) in v.chunks(free.max(1)).enumerate().take(parts) {
            let mut c = init[p];
            for &x in row {
                let a = if t.reverse0 { f0(c, x) } else { f0(x, c) };
                let b = if t.reverse1 { f1(c, a) } else { f1(a, c) };
                c = b;
                if every {
                    res.push(b);
                }
            }
            if !every {
                res.push(c);
            }
        }
        let _ = elements(out)?;
        self.write_f32(out, &res, regions)
    }
}
