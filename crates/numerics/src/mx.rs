//! Microscaling (OCP MX) blocks: QuantizeMx's shared scale and quantized values, MatmultMx's
//! dequantization (AWS `nki.isa.quantize_mx`, `nc_matmul_mx`; engines.md §1.8; docs/fidelity.md
//! Q10, Q11). A block is 8 partitions × 4 consecutive free elements (32 values) with one E8M0
//! scale byte `s`, the power of two `2^(s − 127)`.

/// An FP8 element format of MX data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MxElement {
    /// float8_e4m3fn: largest exponent 8, largest value 448.
    E4m3fn,
    /// float8_e5m2: largest exponent 15, largest value 57344.
    E5m2,
}

impl MxElement {
    /// The format's largest unbiased exponent, Emax (AWS: 8 for e4m3fn, 15 for e5m2).
    pub fn emax(self) -> u8 {
        match self {
            MxElement::E4m3fn => 8,
            MxElement::E5m2 => 15,
        }
    }

    /// The format's largest finite value (AWS `get_mx_fp_max`).
    pub fn max(self) -> f32 {
        match self {
            MxElement::E4m3fn => 448.0,
            MxElement::E5m2 => 57344.0,
        }
    }
}

/// QuantizeMx's scale byte for a block whose largest fp32 exponent field (the biased exponent
/// of its values' bits) is `exp`: `2^(⌊log₂ amax⌋ − (Emax − 1))`, AWS's documented scale (twice
/// OCP's), as a biased E8M0 byte `exp − (Emax − 1)`; an all-zero block (or one whose scale would
/// fall below 2^-127) gets 0, i.e. 2^-127 (AWS).
pub fn scale_byte(exp: u8, fmt: MxElement) -> u8 {
    exp.saturating_sub(fmt.emax() - 1)
}

/// The biased fp32 exponent field of `x` (0 for zeros and subnormals, 255 for Inf and NaN).
#[inline]
pub fn exponent_field(x: f32) -> u8 {
    ((x.to_bits() >> 23) & 0xFF) as u8
}

/// `x · 2^(s − 127)` as `ldexpf` computes it (MatmultMx's dequantization, engines.md §1.8):
/// exact unless the result is subnormal or overflows (then rounded to nearest even, or ±Inf).
#[inline]
pub fn dequantize(x: f32, s: u8) -> f32 {
    libm::ldexpf(x, i32::from(s) - 127)
}

/// QuantizeMx's value before the FP8 cast: `x / 2^(s − 127)` (an exact power-of-two scaling,
/// `ldexpf(x, 127 − s)`), saturated to the format's largest value (re-facts §9.8: QuantizeMx
/// forces saturation); NaN stays NaN.
#[inline]
pub fn quantize(x: f32, s: u8, fmt: MxElement) -> f32 {
    let q = libm::ldexpf(x, 127 - i32::from(s));
    if q.is_nan() { q } else { q.clamp(-fmt.max(), fmt.max()) }
}

/// QuantizeMx over rows of `f` values (`src.len() / f` rows, a multiple of 8; `f` a multiple
/// of 4): each block's scale byte into `scales` (`rows / 8` rows of `f / 4`) and every value
/// quantized into `out` (same shape as `src`), ready for the FP8 cast.
pub fn quantize_blocks(src: &[f32], f: usize, fmt: MxElement, out: &mut [f32], scales: &mut [u8]) {
    let groups = f / 4;
    for (g, (block_rows, out_rows)) in src.chunks(8 * f).zip(out.chunks_mut(8 * f)).enumerate() {
        for c in 0..groups {
            let cols = 4 * c..4 * c + 4;
            let exp =
                block_rows.chunks(f).flat_map(|r| r[cols.clone()].iter()).map(|&x| exponent_field(x)).max();
            let s = scale_byte(exp.unwrap_or(0), fmt);
            scales[g * groups + c] = s;
            for (r, o) in block_rows.chunks(f).zip(out_rows.chunks_mut(f)) {
                for j in cols.clone() {
                    o[j] = quantize(r[j], s, fmt);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: amax 3.0 (exponent field 128) in e4m3fn gives scale byte 128 − 7 = 121, i.e.
    /// 2^-6; values are multiplied by 64; an all-zero block gets 0 (2^-127).
    #[test]
    fn scale_and_values_by_hand() {
        assert_eq!(scale_byte(exponent_field(3.0), MxElement::E4m3fn), 121);
        assert_eq!(scale_byte(exponent_field(3.0), MxElement::E5m2), 114);
        assert_eq!(scale_byte(0, MxElement::E4m3fn), 0);
        assert_eq!(quantize(3.0, 121, MxElement::E4m3fn), 192.0);
        assert_eq!(quantize(-0.5, 121, MxElement::E4m3fn), -32.0);
        // Saturation: Inf in the block gives byte 248 (2^121); Inf itself saturates to 448.
        assert_eq!(quantize(f32::INFINITY, 248, MxElement::E4m3fn), 448.0);
        assert!(quantize(f32::NAN, 121, MxElement::E4m3fn).is_nan());
        assert_eq!(dequantize(192.0, 121), 3.0);
        assert_eq!(dequantize(1.0, 0), f32::from_bits(1 << 22)); // 2^-127, a subnormal
        assert_eq!(dequantize(1.5, 255), f32::INFINITY);
    }

    #[test]
    fn blocks_of_eight_rows_and_four_columns() {
        // 8 rows × 8 columns: block 0 (columns 0..4) holds 1.0 only, block 1 holds a 6.0.
        let mut src = vec![1.0f32; 64];
        src[8 * 5 + 6] = 6.0;
        let (mut out, mut scales) = (vec![0.0; 64], vec![0u8; 2]);
        quantize_blocks(&src, 8, MxElement::E4m3fn, &mut out, &mut scales);
        assert_eq!(scales, [127 - 7, 129 - 7]);
        assert_eq!((out[0], out[4], out[8 * 5 + 6]), (128.0, 32.0, 192.0));
    }
}
