//! Running words on a [`Machine`] (contract §3–4): one file per datapath, each taking its
//! word's operands resolved (addresses to [`OnChip`](super::OnChip) / DRAM targets, enums to
//! flags) and checking everything before it writes. Element arithmetic goes through numerics
//! (fp32 decode/encode of every dtype, RNE) with glibc `fmaxf`/`fminf` for MAX/MIN.

pub mod dma_indirect;
pub mod embedding;
pub mod gather;
pub mod indirect_copy;
pub mod pool_load;

pub use dma_indirect::{BoundReg, DmaIndirect, Side, Target};
pub use embedding::Embedding;
pub use gather::Gather;
pub use indirect_copy::IndirectCopy;
pub use pool_load::PoolLoad;

use super::IsaFault;

/// An element-wise reduce `dst = dst op src` in fp32 (DGE_COMPUTE_OP ADD/MULTIPLY/MAX/MIN,
/// CCE_OP ADD/MAX/MIN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// `dst + src`.
    Add,
    /// `dst · src`.
    Multiply,
    /// glibc `fmaxf(dst, src)`.
    Max,
    /// glibc `fminf(dst, src)`.
    Min,
}

/// glibc `fmaxf(a, b)`: a NaN operand yields the other; a tie (±0) returns `a` (contract §4:
/// `a` is the destination, so a tie keeps it).
#[inline(always)]
pub fn fmaxf(a: f32, b: f32) -> f32 {
    if a.is_nan() || b > a { b } else { a }
}

/// glibc `fminf(a, b)`, the same way.
#[inline(always)]
pub fn fminf(a: f32, b: f32) -> f32 {
    if a.is_nan() || b < a { b } else { a }
}

impl Combine {
    /// `dst[k] = dst[k] op src[k]`, one dispatch per call.
    pub fn apply(self, dst: &mut [f32], src: &[f32]) {
        fn go(dst: &mut [f32], src: &[f32], f: impl Fn(f32, f32) -> f32) {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = f(*d, *s);
            }
        }
        match self {
            Combine::Add => go(dst, src, |a, b| a + b),
            Combine::Multiply => go(dst, src, |a, b| a * b),
            Combine::Max => go(dst, src, fmaxf),
            Combine::Min => go(dst, src, fminf),
        }
    }
}

/// Reads unsigned little-endian integers of `width` bytes (1, 2, 4) at `offs` of `part` into
/// `out` (zero-extended); one dispatch on the width. Offsets come from a checked tensor walk.
pub(crate) fn read_uint_elements(part: &[u8], offs: &[usize], width: usize, out: &mut [u32]) {
    fn go<const W: usize>(part: &[u8], offs: &[usize], out: &mut [u32]) {
        for (v, &o) in out.iter_mut().zip(offs) {
            let mut b = [0u8; 4];
            if let Some(s) = part.get(o..o + W) {
                b[..W].copy_from_slice(s);
            }
            *v = u32::from_le_bytes(b);
        }
    }
    match width {
        1 => go::<1>(part, offs, out),
        2 => go::<2>(part, offs, out),
        _ => go::<4>(part, offs, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc: fmaxf(NaN, 1) = 1, fmaxf(1, NaN) = 1, fmaxf(-0, +0) = -0 (the first), fmaxf(+0, -0)
    /// = +0; fminf the same way.
    #[test]
    fn fmaxf_fminf_follow_glibc() {
        assert_eq!(fmaxf(f32::NAN, 1.0), 1.0);
        assert_eq!(fmaxf(1.0, f32::NAN), 1.0);
        assert_eq!(fmaxf(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(fmaxf(0.0, -0.0).to_bits(), 0);
        assert_eq!(fminf(f32::NAN, -3.0), -3.0);
        assert_eq!(fminf(0.0, -0.0).to_bits(), 0);
        assert_eq!(fminf(2.0, -1.0), -1.0);
        assert_eq!(fmaxf(2.0, -1.0), 2.0);
    }

    #[test]
    fn uint_elements_zero_extend() {
        let part = [0xFFu8, 0x01, 0x02, 0x03, 0x04];
        let mut out = [0u32; 2];
        read_uint_elements(&part, &[0, 1], 1, &mut out);
        assert_eq!(out, [0xFF, 0x01]);
        read_uint_elements(&part, &[0, 1], 2, &mut out);
        assert_eq!(out, [0x01FF, 0x0201]);
        read_uint_elements(&part, &[1], 4, &mut out[..1]);
        assert_eq!(out[0], 0x0403_0201);
    }
}
