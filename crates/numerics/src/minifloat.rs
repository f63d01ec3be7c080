//! One encoder and one decoder for every float format of at most 8 bits: FP8 E3M4, E4M3
//! (IEEE-style, max 240), E4M3FN (max 448), E5M2 and FP4 E2M1FN, parameterised by format and
//! policy instead of six copies (re-facts §4; numerics.md §1 for the format parameters).
//!
//! Encoding is round-to-nearest-even on the fp32 bit pattern and branch-free, so slice loops
//! auto-vectorise: the normal range rounds with integer arithmetic, the subnormal range with one
//! fp32 addition of a "magic" power of two whose ulp is the target's subnormal step. A result
//! above the largest finite code overflows: to ±max when saturating (and always for E2M1FN, which
//! has neither Inf nor NaN), else to ±Inf (IEEE style) or NaN (FN style). Decoding is a
//! 256-entry table built at compile time; a NaN decodes to the quiet NaN 0x7FC00000 with its sign.

use crate::profile::{NanSign, Profile};

/// How a format spends its top exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// IEEE: top exponent = Inf (mantissa 0) or NaN.
    Ieee,
    /// OCP FN: no Inf; only S.1111…1 is NaN.
    Fn,
    /// Finite only: no Inf, no NaN (E2M1FN); overflow always saturates.
    Finite,
}

/// A minifloat format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// Exponent bits.
    pub exp_bits: u32,
    /// Mantissa bits.
    pub man_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Inf/NaN style.
    pub style: Style,
}

/// OCP FP8 E4M3FN (`float8_e4m3fn`, max 448).
pub const E4M3FN: Format = Format { exp_bits: 4, man_bits: 3, bias: 7, style: Style::Fn };
/// FP8 E5M2 (`float8e5`, max 57344).
pub const E5M2: Format = Format { exp_bits: 5, man_bits: 2, bias: 15, style: Style::Ieee };
/// Legacy IEEE-style FP8 E4M3 (`float8e4`, max 240, has Inf).
pub const E4M3: Format = Format { exp_bits: 4, man_bits: 3, bias: 7, style: Style::Ieee };
/// Legacy FP8 E3M4 (`float8e3`, max 15.5).
pub const E3M4: Format = Format { exp_bits: 3, man_bits: 4, bias: 3, style: Style::Ieee };
/// FP4 E2M1FN (the lanes of `float4_e2m1fn_x4`, max 6).
pub const E2M1FN: Format = Format { exp_bits: 2, man_bits: 1, bias: 1, style: Style::Finite };

impl Format {
    /// Bits of a code, sign included.
    pub const fn bits(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    /// The sign bit of a code.
    pub const fn sign_bit(self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }

    const fn top_exp(self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    const fn man_mask(self) -> u32 {
        (1 << self.man_bits) - 1
    }

    /// The largest finite magnitude code.
    pub const fn max_code(self) -> u32 {
        match self.style {
            Style::Ieee => ((self.top_exp() - 1) << self.man_bits) | self.man_mask(),
            Style::Fn => (self.top_exp() << self.man_bits) | (self.man_mask() - 1),
            Style::Finite => (self.top_exp() << self.man_bits) | self.man_mask(),
        }
    }

    /// The canonical quiet NaN magnitude code (0 for formats without NaN).
    pub const fn nan_code(self) -> u32 {
        match self.style {
            Style::Ieee => (self.top_exp() << self.man_bits) | (1 << (self.man_bits - 1)),
            Style::Fn => (self.top_exp() << self.man_bits) | self.man_mask(),
            Style::Finite => 0,
        }
    }

    /// The Inf magnitude code (IEEE style only; else the max code).
    pub const fn inf_code(self) -> u32 {
        match self.style {
            Style::Ieee => self.top_exp() << self.man_bits,
            _ => self.max_code(),
        }
    }

    /// The fp32 bit pattern a code decodes to (exact; NaN → 0x7FC00000 | sign).
    pub const fn decode_bits(self, code: u32) -> u32 {
        let sign = ((code >> (self.exp_bits + self.man_bits)) & 1) << 31;
        let mag = code & (self.sign_bit() - 1);
        let e = mag >> self.man_bits;
        let m = mag & self.man_mask();
        match self.style {
            Style::Ieee if e == self.top_exp() => {
                return sign | if m == 0 { 0x7F80_0000 } else { 0x7FC0_0000 };
            }
            Style::Fn if mag == (self.top_exp() << self.man_bits) | self.man_mask() => {
                return sign | 0x7FC0_0000;
            }
            _ => {}
        }
        if e == 0 {
            if m == 0 {
                return sign;
            }
            // m · 2^(1 − bias − M): normalise on the highest set bit h of m.
            let h = 31 - m.leading_zeros();
            let exp = (h as i32 + 1 - self.bias - self.man_bits as i32 + 127) as u32;
            return sign | (exp << 23) | ((m - (1 << h)) << (23 - h));
        }
        let exp = (e as i32 - self.bias + 127) as u32;
        sign | (exp << 23) | (m << (23 - self.man_bits))
    }

    /// The 256-entry decode table (codes past the format's width decode as if masked).
    pub const fn table(self) -> [u32; 256] {
        let mut t = [0u32; 256];
        let mut c = 0;
        while c < 256 {
            t[c] = self.decode_bits(c as u32 & ((1 << self.bits()) - 1));
            c += 1;
        }
        t
    }
}

/// Decode tables, built at compile time.
pub static E4M3FN_TABLE: [u32; 256] = E4M3FN.table();
/// E5M2 decode table.
pub static E5M2_TABLE: [u32; 256] = E5M2.table();
/// E4M3 decode table.
pub static E4M3_TABLE: [u32; 256] = E4M3.table();
/// E3M4 decode table.
pub static E3M4_TABLE: [u32; 256] = E3M4.table();
/// E2M1FN decode table (16 codes used).
pub static E2M1FN_TABLE: [u32; 256] = E2M1FN.table();

/// What NaN (and FN-style overflow without saturation) encodes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanOut {
    /// The canonical NaN with the input's sign.
    Keep,
    /// The canonical NaN, sign dropped.
    Drop,
    /// Signed zero (NaN suppression).
    Zero,
    /// Zero with the opposite sign: what ml_dtypes writes for an E2M1FN NaN (+NaN → 0x8,
    /// −NaN → 0x0; measured, conformance `encode_float4_e2m1fn_x4_nki`).
    ZeroOppositeSign,
}

/// An encoding policy: the loop-invariant part of a [`Profile`] for one format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Overflow (and ±Inf) goes to ±max.
    pub saturate: bool,
    /// NaN handling.
    pub nan: NanOut,
}

impl Policy {
    /// The policy a profile implies for a format.
    pub fn of(profile: &Profile, format: Format) -> Policy {
        if format.style == Style::Finite {
            // E2M1FN has no NaN: ml_dtypes writes a zero of the opposite sign; the reference's
            // local FP4 encoder writes ±0 (re-facts §9 item 8). Overflow always saturates.
            let nan = match profile.nan_sign {
                NanSign::Keep => NanOut::ZeroOppositeSign,
                NanSign::Drop => NanOut::Zero,
            };
            return Policy { saturate: true, nan };
        }
        let nan = if profile.fp8_nan_suppress {
            NanOut::Zero
        } else {
            match profile.nan_sign {
                NanSign::Keep => NanOut::Keep,
                NanSign::Drop => NanOut::Drop,
            }
        };
        Policy { saturate: profile.fp8_saturate, nan }
    }
}

/// Encodes one fp32 bit pattern (see the module doc). `#[inline(always)]` so slice loops over a
/// constant format fold every parameter.
#[inline(always)]
pub fn encode(f: Format, p: Policy, bits: u32) -> u8 {
    let m = f.man_bits;
    let shift = 23 - m;
    let sign = (bits >> 31) << (f.exp_bits + m);
    let a = bits & 0x7FFF_FFFF;
    // Normal range: RNE on the fp32 bits, then re-bias the exponent.
    let rounded = a.wrapping_add((1 << (shift - 1)) - 1 + ((a >> shift) & 1));
    let normal = (rounded >> shift).wrapping_sub(((127 - f.bias) as u32) << m);
    // Subnormal range: adding 2^k, whose ulp is the target's subnormal step, rounds |x| by RNE.
    let magic = ((1 - f.bias - m as i32 + 23 + 127) as u32) << 23;
    let sub = (f32::from_bits(a) + f32::from_bits(magic)).to_bits().wrapping_sub(magic);
    let min_normal = ((1 - f.bias + 127) as u32) << 23;
    let code = if a < min_normal { sub } else { normal };
    let nan = match p.nan {
        NanOut::Keep => sign | f.nan_code(),
        NanOut::Drop => f.nan_code(),
        NanOut::Zero => sign,
        NanOut::ZeroOppositeSign => sign ^ f.sign_bit(),
    };
    let overflow = if p.saturate || f.style == Style::Finite {
        sign | f.max_code()
    } else if f.style == Style::Ieee {
        sign | f.inf_code()
    } else {
        nan
    };
    let out = if code > f.max_code() { overflow } else { sign | code };
    let out = if a > 0x7F80_0000 { nan } else { out };
    out as u8
}

/// Encodes a slice. Inlined so each call site's constant format folds into the loop.
#[inline(always)]
pub fn encode_slice(f: Format, p: Policy, src: &[f32], dst: &mut [u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = encode(f, p, s.to_bits());
    }
}

/// Decodes a slice through a table.
pub fn decode_slice(table: &[u32; 256], src: &[u8], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f32::from_bits(table[usize::from(*s)]);
    }
}
