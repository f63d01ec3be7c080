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

/// Where an fp32 value lives: an `f32`, or the 4 little-endian bytes of one (so casts from or to
/// fp32 memory run one loop, with no intermediate buffer).
pub trait F32Slot: Copy {
    /// Wraps a value.
    fn put(f: f32) -> Self;
    /// The value.
    fn get(self) -> f32;
}

impl F32Slot for f32 {
    #[inline(always)]
    fn put(f: f32) -> Self {
        f
    }
    #[inline(always)]
    fn get(self) -> f32 {
        self
    }
}

impl F32Slot for [u8; 4] {
    #[inline(always)]
    fn put(f: f32) -> Self {
        f.to_le_bytes()
    }
    #[inline(always)]
    fn get(self) -> f32 {
        f32::from_le_bytes(self)
    }
}

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

/// An encoder for one format under one policy: every policy decision is folded into codes up
/// front, so [`Encoder::encode`] is pure integer arithmetic and selects and slice loops
/// auto-vectorise.
#[derive(Clone, Copy, Debug)]
pub struct Encoder {
    shift: u32,
    round_half: u32,
    rebias: u32,
    magic: u32,
    min_normal: u32,
    max_code: u32,
    sign_shift: u32,
    /// Results for a NaN input, by input sign (positive, negative).
    nan: [u32; 2],
    /// Results for an overflowing input, by sign.
    overflow: [u32; 2],
}

impl Encoder {
    /// The encoder of `f` under `p`.
    pub fn new(f: Format, p: Policy) -> Encoder {
        let m = f.man_bits;
        let shift = 23 - m;
        let signs = [0, f.sign_bit()];
        let nan = signs.map(|sign| match p.nan {
            NanOut::Keep => sign | f.nan_code(),
            NanOut::Drop => f.nan_code(),
            NanOut::Zero => sign,
            NanOut::ZeroOppositeSign => sign ^ f.sign_bit(),
        });
        let overflow = [0, 1].map(|k| {
            if p.saturate || f.style == Style::Finite {
                signs[k] | f.max_code()
            } else if f.style == Style::Ieee {
                signs[k] | f.inf_code()
            } else {
                nan[k]
            }
        });
        Encoder {
            shift,
            round_half: (1 << (shift - 1)) - 1,
            rebias: ((127 - f.bias) as u32) << m,
            magic: ((1 - f.bias - m as i32 + 23 + 127) as u32) << 23,
            min_normal: ((1 - f.bias + 127) as u32) << 23,
            max_code: f.max_code(),
            sign_shift: 31 - (f.exp_bits + m),
            nan,
            overflow,
        }
    }

    /// Encodes one fp32 bit pattern (see the module doc). Written with masks rather than `if`s
    /// so that LLVM keeps it branch-free and vectorises slice loops.
    #[inline(always)]
    pub fn encode(&self, bits: u32) -> u8 {
        /// All ones when `x` (an i32-range difference) is negative.
        #[inline(always)]
        fn neg(x: u32) -> u32 {
            ((x as i32) >> 31) as u32
        }
        #[inline(always)]
        fn pick(mask: u32, yes: u32, no: u32) -> u32 {
            no ^ ((no ^ yes) & mask)
        }
        let negative = neg(bits);
        let sign = (bits & 0x8000_0000) >> self.sign_shift;
        let a = bits & 0x7FFF_FFFF;
        // Normal range: RNE on the fp32 bits, then re-bias the exponent.
        let rounded = a.wrapping_add(self.round_half + ((a >> self.shift) & 1));
        let normal = (rounded >> self.shift).wrapping_sub(self.rebias);
        // Subnormal range: adding 2^k, whose ulp is the target's subnormal step, rounds by RNE.
        let sub = (f32::from_bits(a) + f32::from_bits(self.magic)).to_bits().wrapping_sub(self.magic);
        let code = pick(neg(a.wrapping_sub(self.min_normal)), sub, normal);
        let overflow = pick(negative, self.overflow[1], self.overflow[0]);
        let nan = pick(negative, self.nan[1], self.nan[0]);
        let out = pick(neg(self.max_code.wrapping_sub(code)), overflow, sign | code);
        pick(neg(0x7F80_0000u32.wrapping_sub(a)), nan, out) as u8
    }

    /// Encodes a slice with the format fixed at compile time: the format's fields come from a
    /// constant, so they fold into immediates; only the policy's codes are read from `self`.
    fn encode_slice_const<const FMT: u8, I: F32Slot>(&self, src: &[I], dst: &mut [u8]) {
        let constant =
            Encoder::new(CONST_FORMATS[FMT as usize], Policy { saturate: false, nan: NanOut::Keep });
        let e = Encoder { nan: self.nan, overflow: self.overflow, ..constant };
        for (d, s) in dst.iter_mut().zip(src) {
            *d = e.encode(s.get().to_bits());
        }
    }
}

/// The formats [`encode_slice`] specialises for, indexed by a const parameter.
const CONST_FORMATS: [Format; 5] = [E4M3FN, E5M2, E4M3, E3M4, E2M1FN];

/// Encodes one fp32 bit pattern under `p` (convenience; loops should build one [`Encoder`]).
pub fn encode(f: Format, p: Policy, bits: u32) -> u8 {
    Encoder::new(f, p).encode(bits)
}

/// Encodes a slice; the five known formats get a loop with their parameters as constants.
pub fn encode_slice<I: F32Slot>(f: Format, p: Policy, src: &[I], dst: &mut [u8]) {
    let e = Encoder::new(f, p);
    match CONST_FORMATS.iter().position(|c| *c == f) {
        Some(0) => e.encode_slice_const::<0, I>(src, dst),
        Some(1) => e.encode_slice_const::<1, I>(src, dst),
        Some(2) => e.encode_slice_const::<2, I>(src, dst),
        Some(3) => e.encode_slice_const::<3, I>(src, dst),
        Some(4) => e.encode_slice_const::<4, I>(src, dst),
        _ => {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = e.encode(s.get().to_bits());
            }
        }
    }
}

/// Decodes a slice through a table.
pub fn decode_slice<O: F32Slot>(table: &[u32; 256], src: &[u8], dst: &mut [O]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = O::put(f32::from_bits(table[usize::from(*s)]));
    }
}
