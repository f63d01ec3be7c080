//! Bulk decode to fp32, encode from fp32, and casts between any two dtypes (re-facts §4:
//! the reference's `CastToNewDType` is hub-and-spoke, src → fp32 → dst with RNE).
//!
//! Each call matches on the dtype once and runs a monomorphic loop over the slice. Values are
//! little-endian; `_x4` dtypes hold four values per container, lane 0 in the lowest bits
//! (ASSUMED, docs/fidelity.md N9).

use crate::minifloat::{self, E2M1FN, E3M4, E4M3, E4M3FN, E5M2, F32Slot, Format, Policy};
use crate::profile::{E8m0Mode, FloatToInt, IntToInt, NanSign, Profile};
use crate::{Dtype, NumericsError};

/// Values held by `bytes` bytes of `dt` (containers × lanes).
pub fn values_in(dt: Dtype, bytes: usize) -> usize {
    bytes / dt.size() * dt.lanes()
}

fn check(src: Dtype, src_values: usize, dst: Dtype, dst_values: usize) -> Result<(), NumericsError> {
    if src_values == dst_values {
        Ok(())
    } else {
        Err(NumericsError::LengthMismatch { src, src_values, dst, dst_values })
    }
}

// ----- element codecs for fused passes -----

/// How a fused pass reads and writes one stored element: fp32 straight from its bytes, as plain
/// `f32`, or as bf16 bits narrowed under the profile's NaN rule. Kernels are generic over it, so
/// one monomorphic loop runs per (storage format, op) pair with no per-element dispatch.
pub trait Codec: Copy {
    /// One stored element.
    type C: Copy;
    /// Decoding is a table lookup (FP8), which keeps a loop that also encodes from vectorising:
    /// passes then decode a block into fp32 first and compute from that.
    const DECODES_BY_TABLE: bool = false;
    /// Its value.
    fn decode(self, c: Self::C) -> f32;
    /// A value stored.
    fn encode(self, f: f32) -> Self::C;
}

/// Any [`F32Slot`] (plain `f32`, or fp32 as little-endian bytes) as a stateless codec.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot<S>(std::marker::PhantomData<S>);

impl<S: F32Slot> Slot<S> {
    /// The codec.
    pub const fn new() -> Self {
        Slot(std::marker::PhantomData)
    }
}

impl<S: F32Slot> Codec for Slot<S> {
    type C = S;
    #[inline(always)]
    fn decode(self, c: S) -> f32 {
        c.get()
    }
    #[inline(always)]
    fn encode(self, f: f32) -> S {
        S::put(f)
    }
}

/// bf16 as little-endian bytes, narrowed with RNE and the profile's NaN rule (re-facts §4).
#[derive(Clone, Copy, Debug)]
pub struct Bf16(pub NanSign);

impl Codec for Bf16 {
    type C = [u8; 2];
    #[inline(always)]
    fn decode(self, c: [u8; 2]) -> f32 {
        f32::from_bits(u32::from(u16::from_le_bytes(c)) << 16)
    }
    #[inline(always)]
    fn encode(self, f: f32) -> [u8; 2] {
        f32_to_bf16_bits(f.to_bits(), self.0).to_le_bytes()
    }
}

/// An FP8 format (float8e3, float8e4, float8_e4m3fn, float8e5): decoded through its table,
/// encoded by its [`minifloat::Encoder`] under the profile — exactly what [`decode_to_f32`] and
/// [`encode_from_f32`] do for that dtype.
#[derive(Clone, Copy, Debug)]
pub struct Fp8 {
    table: &'static [u32; 256],
    enc: minifloat::Encoder,
}

impl Fp8 {
    /// The codec of an FP8 dtype under a profile; `None` for any other dtype.
    pub fn of(dt: Dtype, profile: &Profile) -> Option<Fp8> {
        let (table, f) = match dt {
            Dtype::Float8E3 => (&minifloat::E3M4_TABLE, E3M4),
            Dtype::Float8E4 => (&minifloat::E4M3_TABLE, E4M3),
            Dtype::Float8E4m3fn => (&minifloat::E4M3FN_TABLE, E4M3FN),
            Dtype::Float8E5 => (&minifloat::E5M2_TABLE, E5M2),
            _ => return None,
        };
        Some(Fp8 { table, enc: minifloat::Encoder::new(f, Policy::of(profile, f)) })
    }
}

impl Codec for Fp8 {
    type C = u8;
    const DECODES_BY_TABLE: bool = true;
    #[inline(always)]
    fn decode(self, c: u8) -> f32 {
        f32::from_bits(self.table[usize::from(c)])
    }
    #[inline(always)]
    fn encode(self, f: f32) -> u8 {
        self.enc.encode(f.to_bits())
    }
}

// ----- scalar pieces -----

/// fp16 bits → fp32 bits, exact; a NaN keeps its payload (as NumPy widens it).
pub fn f16_to_f32_bits(h: u16) -> u32 {
    let h = u32::from(h);
    let sign = (h & 0x8000) << 16;
    let e = (h >> 10) & 0x1F;
    let m = h & 0x3FF;
    if e == 0x1F {
        return sign | 0x7F80_0000 | (m << 13);
    }
    if e == 0 {
        // m · 2^-24 is exact in fp32.
        return sign | (m as f32 * f32::from_bits(0x3380_0000)).to_bits();
    }
    sign | ((e + 112) << 23) | (m << 13)
}

/// fp32 → fp16 bits: RNE, overflow → ±Inf; NaN → 0x7E00 (sign dropped) or, with
/// `payload`, NumPy's `sign | 0x7C00 | mantissa >> 13` (at least 1).
#[inline(always)]
pub fn f32_to_f16_bits(f: f32, nan: NanSign, payload: bool) -> u16 {
    let b = f.to_bits();
    if f.is_nan() {
        let sign = ((b >> 16) & 0x8000) as u16;
        if payload {
            let m = ((b & 0x007F_FFFF) >> 13) as u16;
            return sign | 0x7C00 | m.max(1);
        }
        return match nan {
            NanSign::Keep => sign | 0x7E00,
            NanSign::Drop => 0x7E00,
        };
    }
    f32_to_f16_rne(b)
}

/// fp32 → fp16 bits for a non-NaN input: IEEE round-to-nearest-even, overflow → ±Inf (what
/// F16C's `vcvtps2ph` and `half::f16::from_f32` give; tests/f16.rs checks it against the
/// latter). Written here so numerics depends on no float crate.
#[inline(always)]
fn f32_to_f16_rne(b: u32) -> u16 {
    let sign = ((b >> 16) & 0x8000) as u16;
    let a = b & 0x7FFF_FFFF;
    let magnitude = if a >= 0x477F_F000 {
        // 65520 (halfway from fp16's largest finite, 65504, to 2^16; ties to the even 2^16)
        // and above, Inf included.
        0x7C00
    } else if a >= 0x3880_0000 {
        // 2^-14 and above: normal in fp16. Rebias the exponent (127 → 15) and round off 13
        // mantissa bits; a carry out of the mantissa steps the exponent, as it should.
        let a = a - 0x3800_0000;
        (a + 0x0FFF + ((a >> 13) & 1)) >> 13
    } else if a >= 0x3300_0000 {
        // [2^-25, 2^-14): an fp16 subnormal, in units of 2^-24: the 24-bit significand
        // m · 2^(e − 150) shifted right by 126 − e (14..=24) and rounded. 2^-25 ties to 0; the
        // top of the range rounds up to 0x0400, the smallest normal.
        let shift = 126 - (a >> 23);
        let m = (a & 0x007F_FFFF) | 0x0080_0000;
        (m + (1 << (shift - 1)) - 1 + ((m >> shift) & 1)) >> shift
    } else {
        // Below half the smallest subnormal.
        0
    };
    sign | magnitude as u16
}

/// fp32 → bf16 bits: RNE on the bit pattern, no saturation; NaN → 0x7FC0 (with sign if kept).
#[inline(always)]
pub fn f32_to_bf16_bits(b: u32, nan: NanSign) -> u16 {
    let rounded = b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16;
    let sign = if nan == NanSign::Keep { (b >> 16) & 0x8000 } else { 0 };
    // A select, not a branch: vectorised loops compare and blend.
    (if f32::from_bits(b).is_nan() { sign | 0x7FC0 } else { rounded }) as u16
}

/// fp32 → fp32r bits: RNE at round bit 0x1000 (re-facts §4), keeping 10 explicit mantissa bits
/// (re-facts' "11 explicit bits" contradicts its own round bit; docs/fidelity.md N11). A NaN
/// stays a quiet NaN (sign per policy).
#[inline(always)]
pub fn f32_to_f32r_bits(b: u32, nan: NanSign) -> u32 {
    let rounded = b.wrapping_add(0xFFF + ((b >> 13) & 1)) & !0x1FFF;
    let nan_code = match nan {
        NanSign::Keep => (b & 0x8000_0000) | 0x7FC0_0000,
        NanSign::Drop => 0x7FC0_0000,
    };
    if b & 0x7FFF_FFFF > 0x7F80_0000 { nan_code } else { rounded }
}

/// E8M0 as ml_dtypes encodes it: normal inputs round half up in the exponent
/// (`(bits + 0x400000) >> 23`), fp32 subnormals give 0 (≤ 2^-127) or 1, and zero, negative,
/// Inf and NaN inputs give 0xFF (NaN).
#[inline(always)]
pub fn f32_to_e8m0_exponent(b: u32) -> u8 {
    if b == 0 || b >= 0x7F80_0000 {
        return 0xFF;
    }
    if b < 0x0080_0000 {
        return u8::from(b > 0x0040_0000);
    }
    ((b + 0x0040_0000) >> 23).min(0xFF) as u8
}

/// E8M0 code → fp32 bits as 2^(code − 127) (0xFF = NaN).
pub fn e8m0_exponent_to_f32_bits(c: u8) -> u32 {
    match c {
        0xFF => 0x7FC0_0000,
        0 => 0x0040_0000,
        c => u32::from(c) << 23,
    }
}

/// The reference's float → int rule (re-facts §4) or truncation, for one target range.
macro_rules! float_to_int {
    ($name:ident, $t:ty, $signed:expr) => {
        #[inline(always)]
        fn $name(f: f32, rule: FloatToInt) -> $t {
            if f.is_nan() {
                let negative = f.is_sign_negative();
                return match rule {
                    FloatToInt::TruncSaturate => 0,
                    FloatToInt::RneSaturate if $signed => {
                        if negative {
                            <$t>::MIN
                        } else {
                            <$t>::MAX
                        }
                    }
                    FloatToInt::RneSaturate => {
                        if negative {
                            0
                        } else {
                            <$t>::MAX
                        }
                    }
                };
            }
            let r = match rule {
                FloatToInt::RneSaturate => f.round_ties_even(),
                FloatToInt::TruncSaturate => f.trunc(),
            };
            // `as` saturates at the range ends, which is the clamp.
            r as $t
        }
    };
}
float_to_int!(to_u8, u8, false);
float_to_int!(to_i8, i8, true);
float_to_int!(to_u16, u16, false);
float_to_int!(to_i16, i16, true);
float_to_int!(to_u32, u32, false);
float_to_int!(to_i32, i32, true);
float_to_int!(to_u64, u64, false);
float_to_int!(to_i64, i64, true);

// ----- slice loops -----

fn decode_ints<const N: usize, O: F32Slot>(src: &[u8], out: &mut [O], f: impl Fn([u8; N]) -> f32) {
    for (o, c) in out.iter_mut().zip(src.as_chunks::<N>().0) {
        *o = O::put(f(*c));
    }
}

fn encode_ints<const N: usize, I: F32Slot>(src: &[I], out: &mut [u8], f: impl Fn(f32) -> [u8; N]) {
    for (c, s) in out.as_chunks_mut::<N>().0.iter_mut().zip(src) {
        *c = f(s.get());
    }
}

fn decode_x4<O: F32Slot>(table: &[u32; 256], lane_bits: u32, container: usize, src: &[u8], out: &mut [O]) {
    let mask = (1u32 << lane_bits) - 1;
    for (o, c) in out.chunks_exact_mut(4).zip(src.chunks_exact(container)) {
        let mut v = 0u32;
        for (k, b) in c.iter().enumerate() {
            v |= u32::from(*b) << (8 * k);
        }
        for (lane, x) in o.iter_mut().enumerate() {
            *x = O::put(f32::from_bits(table[((v >> (lane_bits * lane as u32)) & mask) as usize]));
        }
    }
}

fn encode_x4<I: F32Slot>(f: Format, p: Policy, container: usize, src: &[I], out: &mut [u8]) {
    let lane_bits = f.bits().next_power_of_two();
    let enc = minifloat::Encoder::new(f, p);
    for (c, s) in out.chunks_exact_mut(container).zip(src.chunks_exact(4)) {
        let mut v = 0u32;
        for (lane, x) in s.iter().enumerate() {
            v |= u32::from(enc.encode(x.get().to_bits())) << (lane_bits * lane as u32);
        }
        c.copy_from_slice(&v.to_le_bytes()[..container]);
    }
}

/// Decodes `src` (values of `dt`) into fp32. `out` must hold exactly the values.
pub fn decode_to_f32(dt: Dtype, src: &[u8], out: &mut [f32], profile: &Profile) -> Result<(), NumericsError> {
    decode_into(dt, src, out, profile)
}

fn decode_into<O: F32Slot>(
    dt: Dtype,
    src: &[u8],
    out: &mut [O],
    profile: &Profile,
) -> Result<(), NumericsError> {
    check(dt, values_in(dt, src.len()), Dtype::Float32, out.len())?;
    match dt {
        Dtype::Uint8 => decode_ints::<1, _>(src, out, |b| f32::from(b[0])),
        Dtype::Int8 => decode_ints::<1, _>(src, out, |b| f32::from(b[0] as i8)),
        Dtype::Float4E2m1fnX4 => decode_x4(&minifloat::E2M1FN_TABLE, 4, 2, src, out),
        Dtype::Float8E3 => minifloat::decode_slice(&minifloat::E3M4_TABLE, src, out),
        Dtype::Float8E4 => minifloat::decode_slice(&minifloat::E4M3_TABLE, src, out),
        Dtype::Float8E4m3fn => minifloat::decode_slice(&minifloat::E4M3FN_TABLE, src, out),
        Dtype::Float8E5 => minifloat::decode_slice(&minifloat::E5M2_TABLE, src, out),
        Dtype::Float8E8m0fnu => match profile.e8m0 {
            E8m0Mode::RawByte => decode_ints::<1, _>(src, out, |b| f32::from(b[0])),
            E8m0Mode::Exponent => {
                decode_ints::<1, _>(src, out, |b| f32::from_bits(e8m0_exponent_to_f32_bits(b[0])))
            }
        },
        Dtype::Float8E4m3fnX4 => decode_x4(&minifloat::E4M3FN_TABLE, 8, 4, src, out),
        Dtype::Float8E5m2X4 => decode_x4(&minifloat::E5M2_TABLE, 8, 4, src, out),
        Dtype::Uint16 => decode_ints::<2, _>(src, out, |b| f32::from(u16::from_le_bytes(b))),
        Dtype::Int16 => decode_ints::<2, _>(src, out, |b| f32::from(i16::from_le_bytes(b))),
        Dtype::Bfloat16 => {
            decode_ints::<2, _>(src, out, |b| f32::from_bits(u32::from(u16::from_le_bytes(b)) << 16))
        }
        Dtype::Float16 => {
            decode_ints::<2, _>(src, out, |b| f32::from_bits(f16_to_f32_bits(u16::from_le_bytes(b))))
        }
        Dtype::Uint32 => decode_ints::<4, _>(src, out, |b| u32::from_le_bytes(b) as f32),
        Dtype::Int32 => decode_ints::<4, _>(src, out, |b| i32::from_le_bytes(b) as f32),
        Dtype::Float32 | Dtype::Float32r => decode_ints::<4, O>(src, out, f32::from_le_bytes),
        Dtype::Uint64 => decode_ints::<8, _>(src, out, |b| u64::from_le_bytes(b) as f32),
        Dtype::Int64 => decode_ints::<8, _>(src, out, |b| i64::from_le_bytes(b) as f32),
    }
    Ok(())
}

/// Encodes fp32 values into `dt`. `out` must hold exactly the values.
pub fn encode_from_f32(
    dt: Dtype,
    src: &[f32],
    out: &mut [u8],
    profile: &Profile,
) -> Result<(), NumericsError> {
    encode_from(dt, src, out, profile)
}

fn encode_from<I: F32Slot>(
    dt: Dtype,
    src: &[I],
    out: &mut [u8],
    profile: &Profile,
) -> Result<(), NumericsError> {
    check(Dtype::Float32, src.len(), dt, values_in(dt, out.len()))?;
    let r = profile.float_to_int;
    let nan = profile.nan_sign;
    match dt {
        Dtype::Uint8 => encode_ints::<1, _>(src, out, |f| [to_u8(f, r)]),
        Dtype::Int8 => encode_ints::<1, _>(src, out, |f| to_i8(f, r).to_le_bytes()),
        Dtype::Float4E2m1fnX4 => encode_x4(E2M1FN, Policy::of(profile, E2M1FN), 2, src, out),
        Dtype::Float8E3 => minifloat::encode_slice(E3M4, Policy::of(profile, E3M4), src, out),
        Dtype::Float8E4 => minifloat::encode_slice(E4M3, Policy::of(profile, E4M3), src, out),
        Dtype::Float8E4m3fn => minifloat::encode_slice(E4M3FN, Policy::of(profile, E4M3FN), src, out),
        Dtype::Float8E5 => minifloat::encode_slice(E5M2, Policy::of(profile, E5M2), src, out),
        Dtype::Float8E8m0fnu => match profile.e8m0 {
            E8m0Mode::RawByte => encode_ints::<1, _>(src, out, |f| [to_u8(f, r)]),
            E8m0Mode::Exponent => encode_ints::<1, _>(src, out, |f| [f32_to_e8m0_exponent(f.to_bits())]),
        },
        Dtype::Float8E4m3fnX4 => encode_x4(E4M3FN, Policy::of(profile, E4M3FN), 4, src, out),
        Dtype::Float8E5m2X4 => encode_x4(E5M2, Policy::of(profile, E5M2), 4, src, out),
        Dtype::Uint16 => encode_ints::<2, _>(src, out, |f| to_u16(f, r).to_le_bytes()),
        Dtype::Int16 => encode_ints::<2, _>(src, out, |f| to_i16(f, r).to_le_bytes()),
        Dtype::Bfloat16 => {
            encode_ints::<2, _>(src, out, |f| f32_to_bf16_bits(f.to_bits(), nan).to_le_bytes())
        }
        Dtype::Float16 => {
            let payload = profile.f16_nan_payload;
            encode_ints::<2, _>(src, out, |f| f32_to_f16_bits(f, nan, payload).to_le_bytes());
        }
        Dtype::Uint32 => encode_ints::<4, _>(src, out, |f| to_u32(f, r).to_le_bytes()),
        Dtype::Int32 => encode_ints::<4, _>(src, out, |f| to_i32(f, r).to_le_bytes()),
        Dtype::Float32 => encode_ints::<4, I>(src, out, f32::to_le_bytes),
        Dtype::Float32r => {
            encode_ints::<4, _>(src, out, |f| f32_to_f32r_bits(f.to_bits(), nan).to_le_bytes())
        }
        Dtype::Uint64 => encode_ints::<8, _>(src, out, |f| to_u64(f, r).to_le_bytes()),
        Dtype::Int64 => encode_ints::<8, _>(src, out, |f| to_i64(f, r).to_le_bytes()),
    }
    Ok(())
}

/// An integer value of an integer dtype, widened exactly.
fn int_value(dt: Dtype, b: &[u8]) -> i128 {
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    let u = u64::from_le_bytes(a);
    match dt {
        Dtype::Int8 => i128::from(u as u8 as i8),
        Dtype::Int16 => i128::from(u as u16 as i16),
        Dtype::Int32 => i128::from(u as u32 as i32),
        Dtype::Int64 => i128::from(u as i64),
        _ => i128::from(u),
    }
}

/// Converts `src` (values of `src_dt`) into `dst` (values of `dst_dt`). Equal dtypes copy the
/// bytes; integer pairs under [`IntToInt::Wrap`] truncate exactly; everything else goes through
/// fp32 in chunks (re-facts §4).
pub fn cast(
    src_dt: Dtype,
    src: &[u8],
    dst_dt: Dtype,
    dst: &mut [u8],
    profile: &Profile,
) -> Result<(), NumericsError> {
    let n = values_in(src_dt, src.len());
    check(src_dt, n, dst_dt, values_in(dst_dt, dst.len()))?;
    if src_dt == dst_dt {
        dst.copy_from_slice(src);
        return Ok(());
    }
    if src_dt.is_integer() && dst_dt.is_integer() && profile.int_to_int == IntToInt::Wrap {
        let (ss, ds) = (src_dt.size(), dst_dt.size());
        for (d, s) in dst.chunks_exact_mut(ds).zip(src.chunks_exact(ss)) {
            d.copy_from_slice(&(int_value(src_dt, s) as u64).to_le_bytes()[..ds]);
        }
        return Ok(());
    }
    // One side is fp32 memory: convert straight between it and the other side.
    if dst_dt == Dtype::Float32 {
        return decode_into(src_dt, src, dst.as_chunks_mut::<4>().0, profile);
    }
    if src_dt == Dtype::Float32 {
        return encode_from(dst_dt, src.as_chunks::<4>().0, dst, profile);
    }
    // Chunks that are whole containers on both sides (4 values per x4 container).
    const CHUNK: usize = 1024;
    let mut buf = [0f32; CHUNK];
    let (s_per, d_per) = (src_dt.size() * CHUNK / src_dt.lanes(), dst_dt.size() * CHUNK / dst_dt.lanes());
    for (k, s) in src.chunks(s_per).enumerate() {
        let m = values_in(src_dt, s.len());
        decode_to_f32(src_dt, s, &mut buf[..m], profile)?;
        let d0 = k * d_per;
        let d = &mut dst[d0..d0 + m / dst_dt.lanes() * dst_dt.size()];
        encode_from_f32(dst_dt, &buf[..m], d, profile)?;
    }
    Ok(())
}
