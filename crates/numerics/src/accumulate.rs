//! `cast_copy_or_accumulate` (seed 000 §6.3/§6.4, re-facts §8): the memory-side reduce of
//! scatters and tracked PSUM writes.
//!
//! Copy moves the element's bytes for every dtype. Add, min and max exist only for the eight
//! reducible dtypes; integers add with wrap-around and compare signed; floats widen to fp32,
//! combine as x86 `addss`/`minss`/`maxss` with the destination as the second operand (so on a NaN
//! or a tie the destination wins), and narrow back with RNE under FP8 config 0 (overflow → Inf).

use crate::codec::{f16_to_f32_bits, f32_to_bf16_bits, f32_to_f16_bits};
use crate::minifloat::{self, Format, Policy};
use crate::{Dtype, MemoryReductionOp, NumericsError, Profile};
use bir_ir::AluOp;

/// `AluOpType2MemoryReduction`: bypass → copy, add → add, anything else is an error
/// (re-facts §8; min/max included).
pub fn memory_reduction(op: AluOp) -> Result<MemoryReductionOp, NumericsError> {
    bir_ir::alu_to_memory_reduction(op).ok_or(NumericsError::NoMemoryReduction(op))
}

/// Combines one element of `src` into `dst` (both `dtype.size()` bytes).
pub fn accumulate(
    op: MemoryReductionOp,
    dtype: Dtype,
    dst: &mut [u8],
    src: &[u8],
    profile: &Profile,
) -> Result<(), NumericsError> {
    accumulate_slice(op, dtype, dst, src, profile)
}

/// The x86 SSE rule with `dst` as the second operand.
#[inline(always)]
fn combine_f32(op: MemoryReductionOp, dst: f32, src: f32) -> f32 {
    match op {
        MemoryReductionOp::Add => src + dst,
        MemoryReductionOp::Min => {
            if src < dst {
                src
            } else {
                dst
            }
        }
        MemoryReductionOp::Max => {
            if src > dst {
                src
            } else {
                dst
            }
        }
        MemoryReductionOp::Copy => src,
    }
}

/// Integers: add wraps, min/max are signed (re-facts §8).
#[inline(always)]
fn int_op<T: num_traits::PrimInt + num_traits::WrappingAdd>(op: MemoryReductionOp, d: T, s: T) -> T {
    match op {
        MemoryReductionOp::Add => d.wrapping_add(&s),
        MemoryReductionOp::Min => d.min(s),
        MemoryReductionOp::Max => d.max(s),
        MemoryReductionOp::Copy => s,
    }
}

/// One element-wise reduce over equal-length slices of one dtype, chosen once: the
/// monomorphic kernel [`visit_accumulate`] hands to its visitor (seed 000 §6.3: the serial
/// `cast_copy_or_accumulate` loop of `doCopyIndirect`, without a dtype match per element).
pub trait SliceReduce {
    /// Combines each element of `src` into the matching element of `dst`, in order. The caller
    /// passes slices of equal length, a multiple of the dtype size (extra bytes are left alone).
    fn apply(&self, dst: &mut [u8], src: &[u8]);
}

/// What [`visit_accumulate`] calls with the chosen kernel.
pub trait ReduceVisitor {
    /// The visitor's result.
    type Out;
    /// Runs with the monomorphic kernel.
    fn visit<K: SliceReduce>(self, kernel: K) -> Self::Out;
}

/// Copy: the bytes move for every dtype.
struct CopyK;
impl SliceReduce for CopyK {
    #[inline]
    fn apply(&self, dst: &mut [u8], src: &[u8]) {
        let n = dst.len().min(src.len());
        dst[..n].copy_from_slice(&src[..n]);
    }
}

/// The reduce op as a type, so each kernel is compiled for one op (no op match per element).
trait Combine: Copy {
    const OP: MemoryReductionOp;
}

macro_rules! combine_types {
    ($($name:ident = $op:ident),*) => {$(
        #[derive(Clone, Copy)]
        struct $name;
        impl Combine for $name {
            const OP: MemoryReductionOp = MemoryReductionOp::$op;
        }
    )*};
}
combine_types!(AddC = Add, MinC = Min, MaxC = Max);

struct Fp8K<C> {
    table: &'static [u32; 256],
    enc: minifloat::Encoder,
    _op: C,
}
impl<C: Combine> SliceReduce for Fp8K<C> {
    #[inline]
    fn apply(&self, dst: &mut [u8], src: &[u8]) {
        for (d, s) in dst.iter_mut().zip(src) {
            let r = combine_f32(
                C::OP,
                f32::from_bits(self.table[usize::from(*d)]),
                f32::from_bits(self.table[usize::from(*s)]),
            );
            *d = self.enc.encode(r.to_bits());
        }
    }
}

/// A kernel over `N`-byte lanes.
struct Lanes<const N: usize, F>(F);
impl<const N: usize, F: Fn([u8; N], [u8; N]) -> [u8; N]> SliceReduce for Lanes<N, F> {
    #[inline]
    fn apply(&self, dst: &mut [u8], src: &[u8]) {
        let (d, _) = dst.as_chunks_mut::<N>();
        let (s, _) = src.as_chunks::<N>();
        for (d, s) in d.iter_mut().zip(s) {
            *d = (self.0)(*d, *s);
        }
    }
}

/// Picks the kernel for `op` on `dtype` once and hands it to `v`: copy for every dtype, add /
/// min / max for the eight reducible ones (anything else is
/// [`NumericsError::UnsupportedReduceDtype`]). Each kernel is monomorphic in both the dtype and
/// the op.
pub fn visit_accumulate<V: ReduceVisitor>(
    op: MemoryReductionOp,
    dtype: Dtype,
    profile: &Profile,
    v: V,
) -> Result<V::Out, NumericsError> {
    if !dtype.is_reducible() && op != MemoryReductionOp::Copy {
        return Err(NumericsError::UnsupportedReduceDtype(dtype, op));
    }
    match op {
        MemoryReductionOp::Copy => Ok(v.visit(CopyK)),
        MemoryReductionOp::Add => by_dtype(AddC, dtype, profile, v),
        MemoryReductionOp::Min => by_dtype(MinC, dtype, profile, v),
        MemoryReductionOp::Max => by_dtype(MaxC, dtype, profile, v),
    }
}

fn by_dtype<C: Combine, V: ReduceVisitor>(
    c: C,
    dtype: Dtype,
    profile: &Profile,
    v: V,
) -> Result<V::Out, NumericsError> {
    let p = profile.for_accumulate();
    let fp8 = |f: Format, table: &'static [u32; 256]| Fp8K {
        table,
        enc: minifloat::Encoder::new(f, Policy::of(&p, f)),
        _op: c,
    };
    Ok(match dtype {
        Dtype::Float8E3 => v.visit(fp8(minifloat::E3M4, &minifloat::E3M4_TABLE)),
        Dtype::Float8E4 => v.visit(fp8(minifloat::E4M3, &minifloat::E4M3_TABLE)),
        Dtype::Float8E5 => v.visit(fp8(minifloat::E5M2, &minifloat::E5M2_TABLE)),
        Dtype::Bfloat16 => {
            let nan_sign = p.nan_sign;
            v.visit(Lanes::<2, _>(move |d: [u8; 2], s: [u8; 2]| {
                let (d, s) = (u32::from(u16::from_le_bytes(d)) << 16, u32::from(u16::from_le_bytes(s)) << 16);
                let r = combine_f32(C::OP, f32::from_bits(d), f32::from_bits(s));
                f32_to_bf16_bits(r.to_bits(), nan_sign).to_le_bytes()
            }))
        }
        Dtype::Float16 => {
            let (nan_sign, payload) = (p.nan_sign, p.f16_nan_payload);
            v.visit(Lanes::<2, _>(move |d: [u8; 2], s: [u8; 2]| {
                let d = f32::from_bits(f16_to_f32_bits(u16::from_le_bytes(d)));
                let s = f32::from_bits(f16_to_f32_bits(u16::from_le_bytes(s)));
                f32_to_f16_bits(combine_f32(C::OP, d, s), nan_sign, payload).to_le_bytes()
            }))
        }
        Dtype::Float32 => v.visit(Lanes::<4, _>(move |d: [u8; 4], s: [u8; 4]| {
            combine_f32(C::OP, f32::from_le_bytes(d), f32::from_le_bytes(s)).to_le_bytes()
        })),
        Dtype::Int32 => v.visit(Lanes::<4, _>(move |d: [u8; 4], s: [u8; 4]| {
            int_op(C::OP, i32::from_le_bytes(d), i32::from_le_bytes(s)).to_le_bytes()
        })),
        Dtype::Int64 => v.visit(Lanes::<8, _>(move |d: [u8; 8], s: [u8; 8]| {
            int_op(C::OP, i64::from_le_bytes(d), i64::from_le_bytes(s)).to_le_bytes()
        })),
        _ => return Err(NumericsError::UnsupportedReduceDtype(dtype, C::OP)),
    })
}

/// Combines each element of `src` into the matching element of `dst`, in order.
pub fn accumulate_slice(
    op: MemoryReductionOp,
    dtype: Dtype,
    dst: &mut [u8],
    src: &[u8],
    profile: &Profile,
) -> Result<(), NumericsError> {
    let size = dtype.size();
    if dst.len() != src.len() || !dst.len().is_multiple_of(size) {
        return Err(NumericsError::LengthMismatch {
            src: dtype,
            src_values: src.len() / size,
            dst: dtype,
            dst_values: dst.len() / size,
        });
    }
    struct Once<'a>(&'a mut [u8], &'a [u8]);
    impl ReduceVisitor for Once<'_> {
        type Out = ();
        fn visit<K: SliceReduce>(self, k: K) {
            k.apply(self.0, self.1)
        }
    }
    visit_accumulate(op, dtype, profile, Once(dst, src))
}
