//! The twenty vectors of shared/reference/numerics.md §6 (typed in from its table), the
//! accumulate-path vectors listed under it, and named tests for each ASSUMED encoder choice.
#![expect(clippy::unwrap_used, reason = "helpers outside #[test] fns unwrap on fixed test data")]

use numerics::*;
use rstest::rstest;

fn enc(dt: Dtype, profile: &Profile, bits: u32) -> u32 {
    let mut out = vec![0u8; dt.size()];
    let xs = vec![f32::from_bits(bits); dt.lanes()];
    encode_from_f32(dt, &xs, &mut out, profile).unwrap();
    let mut a = [0u8; 4];
    a[..dt.size()].copy_from_slice(&out);
    u32::from_le_bytes(a) & if dt.lanes() == 4 { 0xF } else { u32::MAX }
}

/// (fp32, e4m3fn, e5m2, e4m3, e3m4, bf16, f16) from the ml_dtypes columns of numerics.md §6.
#[rstest]
#[case(0x80000000, 0x80, 0x80, 0x80, 0x80, 0x8000, 0x8000)]
#[case(0xFFC00000, 0xFF, 0xFE, 0xFC, 0xF8, 0xFFC0, 0xFE00)]
#[case(0x7F800001, 0x7F, 0x7E, 0x7C, 0x78, 0x7FC0, 0x7C01)]
#[case(0xFF800000, 0xFF, 0xFC, 0xF8, 0xF0, 0xFF80, 0xFC00)]
#[case(0x7F7FFFFF, 0x7F, 0x7C, 0x78, 0x70, 0x7F80, 0x7C00)]
#[case(0x43E80000, 0x7E, 0x5F, 0x78, 0x70, 0x43E8, 0x5F40)]
#[case(0x43E80001, 0x7F, 0x5F, 0x78, 0x70, 0x43E8, 0x5F40)]
#[case(0x43780000, 0x78, 0x5C, 0x78, 0x70, 0x4378, 0x5BC0)]
#[case(0x47700000, 0x7F, 0x7C, 0x78, 0x70, 0x4770, 0x7B80)]
#[case(0x417C0000, 0x58, 0x4C, 0x58, 0x70, 0x417C, 0x4BE0)]
#[case(0x477FF000, 0x7F, 0x7C, 0x78, 0x70, 0x4780, 0x7C00)]
#[case(0x3F880000, 0x38, 0x3C, 0x38, 0x31, 0x3F88, 0x3C40)]
#[case(0x3F980000, 0x3A, 0x3D, 0x3A, 0x33, 0x3F98, 0x3CC0)]
#[case(0x3F808000, 0x38, 0x3C, 0x38, 0x30, 0x3F80, 0x3C04)]
#[case(0x3B400000, 0x02, 0x1A, 0x02, 0x00, 0x3B40, 0x1A00)]
#[case(0x3A800000, 0x00, 0x14, 0x00, 0x00, 0x3A80, 0x1400)]
#[case(0x3C700000, 0x08, 0x24, 0x08, 0x01, 0x3C70, 0x2380)]
#[case(0x37000000, 0x00, 0x00, 0x00, 0x00, 0x3700, 0x0080)]
#[case(0x807FFFFF, 0x80, 0x80, 0x80, 0x80, 0x8080, 0x8000)]
#[case(0x00400000, 0x00, 0x00, 0x00, 0x00, 0x0040, 0x0000)]
fn twenty_vectors_nki(
    #[case] x: u32,
    #[case] e4m3fn: u32,
    #[case] e5m2: u32,
    #[case] e4m3: u32,
    #[case] e3m4: u32,
    #[case] bf16: u32,
    #[case] f16: u32,
) {
    let p = Profile::nki();
    let got = [
        enc(Dtype::Float8E4m3fn, &p, x),
        enc(Dtype::Float8E5, &p, x),
        enc(Dtype::Float8E4, &p, x),
        enc(Dtype::Float8E3, &p, x),
        enc(Dtype::Bfloat16, &p, x),
        enc(Dtype::Float16, &p, x),
    ];
    assert_eq!(got, [e4m3fn, e5m2, e4m3, e3m4, bf16, f16], "fp32 {x:08X}: got {got:X?}");
}

/// refsim: the "sat" columns of numerics.md §6 with NaN made canonical and positive (re-facts §4),
/// and bf16/f16 NaN as 0x7FC0/0x7E00.
#[rstest]
#[case(0x80000000, 0x80, 0x80, 0x8000, 0x8000)]
#[case(0xFFC00000, 0x7F, 0x7E, 0x7FC0, 0x7E00)]
#[case(0x7F800001, 0x7F, 0x7E, 0x7FC0, 0x7E00)]
#[case(0xFF800000, 0xFE, 0xFB, 0xFF80, 0xFC00)]
#[case(0x7F7FFFFF, 0x7E, 0x7B, 0x7F80, 0x7C00)]
#[case(0x43E80000, 0x7E, 0x5F, 0x43E8, 0x5F40)]
#[case(0x43E80001, 0x7E, 0x5F, 0x43E8, 0x5F40)]
#[case(0x47700000, 0x7E, 0x7B, 0x4770, 0x7B80)]
#[case(0x477FF000, 0x7E, 0x7B, 0x4780, 0x7C00)]
#[case(0x3F808000, 0x38, 0x3C, 0x3F80, 0x3C04)]
#[case(0x3B400000, 0x02, 0x1A, 0x3B40, 0x1A00)]
fn twenty_vectors_refsim(
    #[case] x: u32,
    #[case] e4m3fn: u32,
    #[case] e5m2: u32,
    #[case] bf16: u32,
    #[case] f16: u32,
) {
    let p = Profile::refsim();
    let got = [
        enc(Dtype::Float8E4m3fn, &p, x),
        enc(Dtype::Float8E5, &p, x),
        enc(Dtype::Bfloat16, &p, x),
        enc(Dtype::Float16, &p, x),
    ];
    assert_eq!(got, [e4m3fn, e5m2, bf16, f16], "fp32 {x:08X}: got {got:X?}");
}

#[test]
fn e4m3fn_between_464_and_512_saturates_to_448_under_refsim() {
    // ASSUMED (docs/fidelity.md N5): round first, then any code above 0x7E saturates.
    for x in [464.00003f32, 470.0, 479.99997, 480.0, 500.0, 511.99997] {
        assert_eq!(enc(Dtype::Float8E4m3fn, &Profile::refsim(), x.to_bits()), 0x7E, "{x}");
        assert_eq!(enc(Dtype::Float8E4m3fn, &Profile::refsim(), (-x).to_bits()), 0xFE, "{x}");
    }
}

#[test]
fn e5m2_nan_is_tested_before_overflow() {
    // ASSUMED (N6): a saturating encoder still writes NaN for NaN, not 0x7B.
    assert_eq!(enc(Dtype::Float8E5, &Profile::refsim(), 0x7FC0_0000), 0x7E);
    assert_eq!(enc(Dtype::Float8E5, &Profile::refsim(), 0xFFC0_0000), 0x7E);
}

#[test]
fn legacy_fp8_follows_the_fp8_config() {
    // ASSUMED (N7): E4M3 (max 240) and E3M4 (max 15.5) saturate under refsim like E4M3FN/E5M2.
    let p = Profile::refsim();
    assert_eq!(enc(Dtype::Float8E4, &p, 1000f32.to_bits()), 0x77);
    assert_eq!(enc(Dtype::Float8E4, &p, f32::NEG_INFINITY.to_bits()), 0xF7);
    assert_eq!(enc(Dtype::Float8E3, &p, 100f32.to_bits()), 0x6F);
    assert_eq!(enc(Dtype::Float8E3, &p, f32::NAN.to_bits()), 0x78);
}

#[test]
fn nan_suppression_gives_signed_zero() {
    let p = Profile { fp8_nan_suppress: true, ..Profile::refsim() };
    assert_eq!(enc(Dtype::Float8E4m3fn, &p, 0xFFC0_0000), 0x80);
    assert_eq!(enc(Dtype::Float8E5, &p, 0x7FC0_0000), 0x00);
    // Without saturation, e4m3fn overflow becomes NaN, which is then suppressed.
    let q = Profile { fp8_saturate: false, ..p };
    assert_eq!(enc(Dtype::Float8E4m3fn, &q, 1000f32.to_bits()), 0x00);
}

#[test]
fn x4_lane_order_is_low_bits_first() {
    // ASSUMED (N9): lane k of a container is its k-th lowest byte (fp8) or nibble (fp4).
    let mut out = [0u8; 4];
    encode_from_f32(Dtype::Float8E4m3fnX4, &[1.0, 2.0, -1.0, 0.0], &mut out, &Profile::nki()).unwrap();
    assert_eq!(u32::from_le_bytes(out), 0x00B8_4038);
    let mut out = [0u8; 2];
    encode_from_f32(Dtype::Float4E2m1fnX4, &[0.5, 1.0, 6.0, -6.0], &mut out, &Profile::nki()).unwrap();
    assert_eq!(u16::from_le_bytes(out), 0xF721);
    let mut back = [0f32; 4];
    decode_to_f32(Dtype::Float4E2m1fnX4, &out, &mut back, &Profile::nki()).unwrap();
    assert_eq!(back, [0.5, 1.0, 6.0, -6.0]);
}

#[rstest]
#[case(Dtype::Float32r, 0x3F80_1000, 0x3F80_0000)] // tie, even stays
#[case(Dtype::Float32r, 0x3F80_3000, 0x3F80_4000)] // tie, odd rounds up
#[case(Dtype::Float32r, 0x3F80_1001, 0x3F80_2000)]
#[case(Dtype::Float32r, 0x7F7F_FFFF, 0x7F80_0000)] // rounds to Inf
#[case(Dtype::Float32r, 0xFFC1_2345, 0x7FC0_0000)] // NaN canonical under refsim
fn float32r_rounds_at_bit_0x1000(#[case] dt: Dtype, #[case] x: u32, #[case] want: u32) {
    assert_eq!(enc(dt, &Profile::refsim(), x), want);
}

#[rstest]
#[case(Profile::refsim(), 16_777_217, 16_777_216)] // int → int through fp32 loses the low bit
#[case(Profile::nki(), 16_777_217, 16_777_217)]
#[case(Profile::refsim(), -2_147_483_648, -2_147_483_648)]
fn int_to_int(#[case] p: Profile, #[case] v: i32, #[case] want: i64) {
    let mut out = [0u8; 8];
    cast(Dtype::Int32, &v.to_le_bytes(), Dtype::Int64, &mut out, &p).unwrap();
    assert_eq!(i64::from_le_bytes(out), want);
}

#[rstest]
#[case(Dtype::Int8, 300.0, 127)]
#[case(Dtype::Int8, -300.0, -128)]
#[case(Dtype::Int8, 2.5, 2)]
#[case(Dtype::Int8, 3.5, 4)]
#[case(Dtype::Int8, -2.5, -2)]
#[case(Dtype::Uint8, -3.0, 0)]
#[case(Dtype::Int32, f32::NAN, i32::MAX as i64)]
#[case(Dtype::Int32, -f32::NAN, i32::MIN as i64)]
#[case(Dtype::Uint32, -f32::NAN, 0)]
#[case(Dtype::Uint16, f32::NAN, 65535)]
#[case(Dtype::Int32, f32::INFINITY, i32::MAX as i64)]
#[case(Dtype::Int64, 1e30, i64::MAX)]
fn float_to_int_refsim(#[case] dt: Dtype, #[case] x: f32, #[case] want: i64) {
    let mut out = vec![0u8; dt.size()];
    encode_from_f32(dt, &[x], &mut out, &Profile::refsim()).unwrap();
    let mut a = [0u8; 8];
    a[..dt.size()].copy_from_slice(&out);
    let got = match dt {
        Dtype::Int8 => i64::from(out[0] as i8),
        Dtype::Int32 => i64::from(i32::from_le_bytes([out[0], out[1], out[2], out[3]])),
        _ => i64::from_le_bytes(a),
    };
    assert_eq!(got, want, "{x} → {dt}");
}

#[test]
fn length_mismatch_is_an_error() {
    let mut out = [0u8; 3];
    let e = cast(Dtype::Float32, &[0u8; 8], Dtype::Bfloat16, &mut out, &Profile::refsim()).unwrap_err();
    assert!(matches!(e, NumericsError::LengthMismatch { src_values: 2, dst_values: 1, .. }), "{e}");
}

#[test]
fn e8m0_modes() {
    let mut out = [0f32; 3];
    decode_to_f32(Dtype::Float8E8m0fnu, &[127, 0, 255], &mut out, &Profile::refsim()).unwrap();
    assert_eq!(out, [127.0, 0.0, 255.0], "refsim reads a raw byte");
    decode_to_f32(Dtype::Float8E8m0fnu, &[127, 128, 254], &mut out, &Profile::nki()).unwrap();
    assert_eq!(out, [1.0, 2.0, 2f32.powi(127)]);
}

/// fp32.min (0xFF7FFFFF = −(2 − 2^-23)·2^127) narrowed to each 8/16-bit float, fidelity N19.
/// Codes worked by hand from numerics.md §1's format table: float8e5 = E5M2 (max 57344 = 0x7B,
/// Inf 0x7C), float8e4 = IEEE-style E4M3 (max 240 = 0x77, Inf 0x78); the sign bit is 0x80.
/// refsim reproduces libBIR's default FP8 config (saturate on, re-facts §4 {C}): −max. With
/// saturation off (the `nki` profile, or `fp8_saturate = false`) fp8 gives −Inf, as AWS's
/// range_select docs say the hardware does. bf16 and fp16 never saturate: −Inf (0xFF80, 0xFC00).
#[rstest]
#[case::e5_refsim(Dtype::Float8E5, Profile::refsim(), 0xFB)]
#[case::e4_refsim(Dtype::Float8E4, Profile::refsim(), 0xF7)]
#[case::e5_no_saturate(Dtype::Float8E5, Profile { fp8_saturate: false, ..Profile::refsim() }, 0xFC)]
#[case::e4_no_saturate(Dtype::Float8E4, Profile { fp8_saturate: false, ..Profile::refsim() }, 0xF8)]
#[case::e5_nki(Dtype::Float8E5, Profile::nki(), 0xFC)]
#[case::e4_nki(Dtype::Float8E4, Profile::nki(), 0xF8)]
#[case::bf16_refsim(Dtype::Bfloat16, Profile::refsim(), 0xFF80)]
#[case::fp16_refsim(Dtype::Float16, Profile::refsim(), 0xFC00)]
#[case::bf16_nki(Dtype::Bfloat16, Profile::nki(), 0xFF80)]
#[case::fp16_nki(Dtype::Float16, Profile::nki(), 0xFC00)]
fn fp32_min_narrows(#[case] dt: Dtype, #[case] profile: Profile, #[case] want: u32) {
    assert_eq!(enc(dt, &profile, 0xFF7F_FFFF), want, "fp32.min → {dt}");
}
