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

fn fp8(op: MemoryReductionOp, f: Format, table: &[u32; 256], p: Policy, dst: &mut [u8], src: &[u8]) {
    let enc = minifloat::Encoder::new(f, p);
    for (d, s) in dst.iter_mut().zip(src) {
        let r =
            combine_f32(op, f32::from_bits(table[usize::from(*d)]), f32::from_bits(table[usize::from(*s)]));
        *d = enc.encode(r.to_bits());
    }
}

fn lanes<const N: usize>(dst: &mut [u8], src: &[u8], f: impl Fn([u8; N], [u8; N]) -> [u8; N]) {
    for (d, s) in dst.chunks_exact_mut(N).zip(src.chunks_exact(N)) {
        let (mut a, mut b) = ([0u8; N], [0u8; N]);
        a.copy_from_slice(d);
        b.copy_from_slice(s);
        d.copy_from_slice(&f(a, b));
    }
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
    if op == MemoryReductionOp::Copy {
        dst.copy_from_slice(src);
        return Ok(());
    }
    if !dtype.is_reducible() {
        return Err(NumericsError::UnsupportedReduceDtype(dtype, op));
    }
    let p = profile.for_accumulate();
    match dtype {
        Dtype::Float8E3 => {
            fp8(op, minifloat::E3M4, &minifloat::E3M4_TABLE, Policy::of(&p, minifloat::E3M4), dst, src)
        }
        Dtype::Float8E4 => {
            fp8(op, minifloat::E4M3, &minifloat::E4M3_TABLE, Policy::of(&p, minifloat::E4M3), dst, src)
        }
        Dtype::Float8E5 => {
            fp8(op, minifloat::E5M2, &minifloat::E5M2_TABLE, Policy::of(&p, minifloat::E5M2), dst, src)
        }
        Dtype::Bfloat16 => lanes::<2>(dst, src, |d, s| {
            let (d, s) = (u32::from(u16::from_le_bytes(d)) << 16, u32::from(u16::from_le_bytes(s)) << 16);
            let r = combine_f32(op, f32::from_bits(d), f32::from_bits(s));
            f32_to_bf16_bits(r.to_bits(), p.nan_sign).to_le_bytes()
        }),
        Dtype::Float16 => lanes::<2>(dst, src, |d, s| {
            let d = f32::from_bits(f16_to_f32_bits(u16::from_le_bytes(d)));
            let s = f32::from_bits(f16_to_f32_bits(u16::from_le_bytes(s)));
            f32_to_f16_bits(combine_f32(op, d, s), p.nan_sign, p.f16_nan_payload).to_le_bytes()
        }),
        Dtype::Float32 => lanes::<4>(dst, src, |d, s| {
            combine_f32(op, f32::from_le_bytes(d), f32::from_le_bytes(s)).to_le_bytes()
        }),
        Dtype::Int32 => lanes::<4>(dst, src, |d, s| {
            int_op(op, i32::from_le_bytes(d), i32::from_le_bytes(s)).to_le_bytes()
        }),
        Dtype::Int64 => lanes::<8>(dst, src, |d, s| {
            int_op(op, i64::from_le_bytes(d), i64::from_le_bytes(s)).to_le_bytes()
        }),
        _ => return Err(NumericsError::UnsupportedReduceDtype(dtype, op)),
    }
    Ok(())
}
