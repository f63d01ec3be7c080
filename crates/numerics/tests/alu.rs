//! The ALU functor tables: membership (re-facts §2) and each op on edge values, worked by hand.
//! The ASSUMED semantics are the ones docs/fidelity.md N12–N17 record.

use bir_ir::AluOp;
use numerics::alu::*;
use numerics::{Dtype, NumericsError};
use rstest::rstest;

#[test]
fn ts_ops_has_the_21_members_of_re_facts() {
    let ords: Vec<u8> = ts_ops::MEMBERS.iter().map(|o| o.ordinal()).collect();
    assert_eq!(ords, [0, 4, 5, 6, 7, 8, 9, 13, 14, 15, 18, 19, 20, 21, 22, 23, 26, 28, 29, 30, 31]);
    for op in [AluOp::Average, AluOp::ElemwiseMul, AluOp::Mod, AluOp::BitwiseAnd] {
        assert_eq!(ts_ops::lookup(op).err(), Some(NumericsError::UnsupportedOp { op, table: "ts_ops" }));
    }
}

const NAN: f32 = f32::NAN;

#[rstest]
#[case(AluOp::Bypass, 3.0, 9.0, 3.0)]
// 0.1f32 = 13421773·2^-27, 0.2f32 = 13421773·2^-26; the sum 40265319·2^-27 rounds (RNE, 24 bits
// at 2^-25) to 10066330·2^-25 = 0x3E99999A (worked by hand).
#[case(AluOp::Add, 0.1, 0.2, f32::from_bits(0x3E99_999A))]
// 1 + 2^-24 is a tie between 1 and 1 + 2^-23: RNE keeps 1.0 (a truncating or round-up adder would not
// both pass this and the next row).
#[case(AluOp::Add, 1.0, f32::from_bits(0x3380_0000), 1.0)]
#[case(AluOp::Add, f32::from_bits(0x3F80_0001), f32::from_bits(0x3380_0000), f32::from_bits(0x3F80_0002))]
#[case(AluOp::Subtract, 5.0, 3.0, 2.0)]
#[case(AluOp::Mult, 1.5, -2.0, -3.0)]
#[case(AluOp::Divide, 1.0, 0.0, f32::INFINITY)]
#[case(AluOp::Divide, -1.0, 4.0, -0.25)]
#[case(AluOp::Max, NAN, 1.0, 1.0)]
#[case(AluOp::Max, 1.0, NAN, 1.0)]
#[case(AluOp::Max, -0.0, 0.0, -0.0)]
#[case(AluOp::Min, 0.0, -0.0, 0.0)]
#[case(AluOp::Min, 2.0, -7.0, -7.0)]
#[case(AluOp::LogicalAnd, NAN, 1.0, 1.0)]
#[case(AluOp::LogicalAnd, 0.0, 1.0, 0.0)]
#[case(AluOp::LogicalOr, -0.0, 0.0, 0.0)]
#[case(AluOp::LogicalXor, 2.0, 0.0, 1.0)]
#[case(AluOp::IsEqual, NAN, NAN, 0.0)]
#[case(AluOp::NotEqual, NAN, NAN, 1.0)]
#[case(AluOp::IsEqual, -0.0, 0.0, 1.0)]
#[case(AluOp::IsGt, 2.0, 1.0, 1.0)]
#[case(AluOp::IsGe, 1.0, 1.0, 1.0)]
#[case(AluOp::IsLt, 2.0, 1.0, 0.0)]
#[case(AluOp::IsLe, NAN, 1.0, 0.0)]
#[case(AluOp::Pow, 2.0, 10.0, 1024.0)]
#[case(AluOp::Pow, -8.0, 0.5, NAN)]
#[case(AluOp::Rsqrt, 4.0, 99.0, 0.5)]
#[case(AluOp::Rsqrt, 0.0, 0.0, f32::INFINITY)]
#[case(AluOp::Abs, -0.0, 1.0, 0.0)]
#[case(AluOp::AbsMax, -3.0, 2.0, 3.0)]
#[case(AluOp::AbsMin, -3.0, 2.0, 2.0)]
fn ts_ops_values(#[case] op: AluOp, #[case] acc: f32, #[case] x: f32, #[case] want: f32) {
    let got = ts_ops::lookup(op).unwrap()(acc, x);
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{op}({acc}, {x}) = {got} (0x{:08X}), want {want} (0x{:08X})",
        got.to_bits(),
        want.to_bits()
    );
}

#[rstest]
#[case(AluOp::Add, i32::MAX, 1, i32::MAX)]
#[case(AluOp::Subtract, i32::MIN, 1, i32::MIN)]
#[case(AluOp::Mult, 1 << 20, 1 << 20, i32::MAX)]
#[case(AluOp::Divide, 7, -2, -3)]
#[case(AluOp::Divide, 7, 0, 0)]
#[case(AluOp::Divide, i32::MIN, -1, i32::MAX)]
#[case(AluOp::Mod, -7, 3, -1)]
#[case(AluOp::ModInt, 7, 0, 0)]
#[case(AluOp::Max, -1, 1, 1)]
#[case(AluOp::Min, -1, 1, -1)]
#[case(AluOp::ArithShiftLeft, 1, 31, i32::MIN)]
#[case(AluOp::ArithShiftLeft, 1, 32, 0)]
#[case(AluOp::ArithShiftRight, -8, 1, -4)]
#[case(AluOp::ArithShiftRight, -8, 40, -1)]
#[case(AluOp::ArithShiftRight, 8, -1, 0)]
#[case(AluOp::LogicalShiftRight, -8, 28, 15)]
#[case(AluOp::LogicalShiftLeft, 1, -1, 0)]
#[case(AluOp::BitwiseNot, 0, 5, -1)]
#[case(AluOp::BitwiseXor, 0b1100, 0b1010, 0b0110)]
#[case(AluOp::Bypass, 4, 5, 4)]
fn ts_int_ops_values(#[case] op: AluOp, #[case] acc: i32, #[case] x: i32, #[case] want: i32) {
    assert_eq!(ts_int_ops::lookup(op).unwrap()(acc, x), want, "{op}({acc}, {x})");
}

#[rstest]
#[case(AluOp::Add, i64::MAX, 1, i64::MIN)]
#[case(AluOp::Mult, 1 << 40, 1 << 40, 0)]
#[case(AluOp::Max, -1, 1, 1)]
#[case(AluOp::LogicalShiftRight, -1, 60, 15)]
#[case(AluOp::ArithShiftLeft, 1, 64, 0)]
fn ta_ops_values(#[case] op: AluOp, #[case] acc: i64, #[case] x: i64, #[case] want: i64) {
    assert_eq!(ta_ops::lookup(op).unwrap()(acc, x), want, "{op}({acc}, {x})");
}

#[test]
fn int_tables_reject_float_only_ops() {
    for op in [AluOp::Pow, AluOp::Rsqrt, AluOp::IsGt, AluOp::Average] {
        assert!(ts_int_ops::lookup(op).is_err(), "{op}");
        assert!(ta_ops::lookup(op).is_err(), "{op}");
    }
}

#[rstest]
#[case(AluOp::IsGt, true, -1, 1, false)]
#[case(AluOp::IsGt, false, -1, 1, true)]
#[case(AluOp::IsLe, false, 5, 5, true)]
#[case(AluOp::IsLt, true, i32::MIN, 0, true)]
#[case(AluOp::NotEqual, false, 3, 3, false)]
#[case(AluOp::IsGe, false, 0, -1, false)]
fn int_compares(#[case] op: AluOp, #[case] signed: bool, #[case] a: i32, #[case] x: i32, #[case] want: bool) {
    assert_eq!(ts_int_cmp_ops::lookup(op, signed).unwrap()(a, x), want);
}

/// The twelve predicates (six comparisons, signed and unsigned), each on an ordered pair where
/// signed and unsigned disagree (−1 = 0xFFFF_FFFF vs 1) and on a tie. Expected values by hand.
#[rstest]
#[case(AluOp::IsEqual, true, -1, 1, false)]
#[case(AluOp::IsEqual, false, -1, 1, false)]
#[case(AluOp::IsEqual, true, 5, 5, true)]
#[case(AluOp::IsEqual, false, -5, -5, true)]
#[case(AluOp::NotEqual, true, -1, 1, true)]
#[case(AluOp::NotEqual, false, -1, 1, true)]
#[case(AluOp::NotEqual, true, 5, 5, false)]
#[case(AluOp::NotEqual, false, -5, -5, false)]
#[case(AluOp::IsGt, true, -1, 1, false)]
#[case(AluOp::IsGt, false, -1, 1, true)]
#[case(AluOp::IsGt, true, 5, 5, false)]
#[case(AluOp::IsGt, false, -5, -5, false)]
#[case(AluOp::IsGe, true, -1, 1, false)]
#[case(AluOp::IsGe, false, -1, 1, true)]
#[case(AluOp::IsGe, true, 5, 5, true)]
#[case(AluOp::IsGe, false, -5, -5, true)]
#[case(AluOp::IsLt, true, -1, 1, true)]
#[case(AluOp::IsLt, false, -1, 1, false)]
#[case(AluOp::IsLt, true, 5, 5, false)]
#[case(AluOp::IsLt, false, -5, -5, false)]
#[case(AluOp::IsLe, true, -1, 1, true)]
#[case(AluOp::IsLe, false, -1, 1, false)]
#[case(AluOp::IsLe, true, 5, 5, true)]
#[case(AluOp::IsLe, false, -5, -5, true)]
// Operand order: op(acc, x), so acc = 1, x = −1 flips the strict ones.
#[case(AluOp::IsGt, true, 1, -1, true)]
#[case(AluOp::IsLt, false, 1, -1, true)]
fn twelve_int_predicates(
    #[case] op: AluOp,
    #[case] signed: bool,
    #[case] a: i32,
    #[case] x: i32,
    #[case] want: bool,
) {
    assert_eq!(ts_int_cmp_ops::lookup(op, signed).unwrap()(a, x), want, "{op} signed={signed} ({a}, {x})");
}

#[test]
fn int_predicates_are_the_six_comparisons() {
    assert_eq!(
        ts_int_cmp_ops::MEMBERS,
        [AluOp::IsEqual, AluOp::NotEqual, AluOp::IsGt, AluOp::IsGe, AluOp::IsLt, AluOp::IsLe]
    );
    for signed in [true, false] {
        for op in [AluOp::Add, AluOp::Max, AluOp::BitwiseAnd, AluOp::Bypass] {
            assert!(ts_int_cmp_ops::lookup(op, signed).is_err(), "{op} signed={signed}");
        }
    }
}

#[rstest]
#[case(1.5, 1)]
#[case(-1.0, u64::MAX)]
#[case(9_223_372_036_854_775_808.0, 0x8000_0000_0000_0000)]
#[case(1e19, 9_999_999_980_506_447_872)]
#[case(18_446_744_073_709_551_616.0, 0)]
#[case(f32::NAN, 0)]
fn address_path_float_conversion(#[case] f: f32, #[case] want: u64) {
    assert_eq!(f32_to_u64_addr(f), want, "{f}");
}

/// The visitor hands each op its own functor type, so a caller's generic loop is instantiated
/// (monomorphised) once per op, never dispatching per element: every member of every table
/// reaches `visit` with a distinct type, and the functor it gets computes that op.
#[test]
fn visitor_hands_each_op_its_own_type() {
    struct Name;
    impl F32Visitor for Name {
        type Out = &'static str;
        fn visit<O: F32Op>(self) -> &'static str {
            std::any::type_name::<O>()
        }
    }
    let names: std::collections::HashSet<&str> =
        ts_ops::MEMBERS.iter().map(|op| ts_ops::with(*op, Name).unwrap()).collect();
    assert_eq!(names.len(), ts_ops::MEMBERS.len(), "{names:?}");
    struct SumOver<'a>(&'a [f32]);
    impl F32Visitor for SumOver<'_> {
        type Out = f32;
        fn visit<O: F32Op>(self) -> f32 {
            self.0.iter().fold(1.0, |acc, x| O::apply(acc, *x))
        }
    }
    // Hand-worked: 1·2·3·4 = 24; (1 − 2) − 3 = −4.
    assert_eq!(ts_ops::with(AluOp::Mult, SumOver(&[2.0, 3.0, 4.0])).unwrap(), 24.0);
    assert_eq!(ts_ops::with(AluOp::Subtract, SumOver(&[2.0, 3.0])).unwrap(), -4.0);
}

/// Reciprocal (21) by hand: 1/3 in fp32 is 0x3EAAAAAB (0.3333333433…, the nearer of the two
/// neighbours of 1/3: 0x3EAAAAAA is 0.33333331…, 2.0e-8 below; 0x3EAAAAAB 9.9e-9 above);
/// powers of two are exact; ±0 gives ±inf, ±inf gives ±0; 2^127 (0x7F000000) gives the subnormal
/// 2^-127 = 2^22 · 2^-149, bits 0x00400000.
#[rstest]
#[case(3.0, 0x3EAA_AAAB)]
#[case(4.0, 0x3E80_0000)]
#[case(-0.5, 0xC000_0000)]
#[case(0.0, 0x7F80_0000)]
#[case(-0.0, 0xFF80_0000)]
#[case(f32::INFINITY, 0x0000_0000)]
#[case(f32::NEG_INFINITY, 0x8000_0000)]
#[case(f32::from_bits(0x7F00_0000), 0x0040_0000)]
fn reciprocal_by_hand(#[case] x: f32, #[case] want: u32) {
    assert_eq!(reciprocal(x).to_bits(), want, "1/{x:e}: {:#010x}", reciprocal(x).to_bits());
    let mut v = [x, x];
    reciprocal_slice(&mut v);
    assert_eq!(v.map(f32::to_bits), [want, want]);
    assert!(reciprocal(f32::NAN).is_nan());
}

/// `int_combine` (re-facts §8 "Int add wraps; min/max are signed"; fidelity X14), worked by
/// hand on little-endian bytes:
/// - int32 ADD: i32::MAX + 1 = 2^31 → −2^31 (0x8000_0000); uint32 gives the same bytes.
/// - uint8 MAX(200, 100) = 200 (unsigned); int8 reads 200 as −56, MAX(−56, 100) = 100.
/// - int8 MIN(−1, 1) = −1 (0xFF); uint8 reads 0xFF as 255, MIN(255, 1) = 1.
/// - int16 MULTIPLY 300·300 = 90000 − 65536 = 24464 = 0x5F90.
/// - uint64 MULTIPLY (2^64 − 1)·2 = 2^65 − 2 → 2^64 − 2.
/// - two int8 values at once: [100 + 100, −128 + −1] = [200 → −56, −129 → 127].
#[rstest]
#[case(Dtype::Int32, AluOp::Add, &[0xFF, 0xFF, 0xFF, 0x7F], &[1, 0, 0, 0], &[0, 0, 0, 0x80])]
#[case(Dtype::Uint32, AluOp::Add, &[0xFF, 0xFF, 0xFF, 0x7F], &[1, 0, 0, 0], &[0, 0, 0, 0x80])]
#[case(Dtype::Uint8, AluOp::Max, &[200], &[100], &[200])]
#[case(Dtype::Int8, AluOp::Max, &[200], &[100], &[100])]
#[case(Dtype::Int8, AluOp::Min, &[0xFF], &[1], &[0xFF])]
#[case(Dtype::Uint8, AluOp::Min, &[0xFF], &[1], &[1])]
#[case(Dtype::Int16, AluOp::Mult, &[0x2C, 0x01], &[0x2C, 0x01], &[0x90, 0x5F])]
#[case(Dtype::Uint64, AluOp::Mult, &[0xFF; 8], &[2, 0, 0, 0, 0, 0, 0, 0], &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])]
#[case(Dtype::Int8, AluOp::Add, &[100, 0x80], &[100, 0xFF], &[200, 127])]
fn int_combine_by_hand(
    #[case] dtype: Dtype,
    #[case] op: AluOp,
    #[case] dst: &[u8],
    #[case] src: &[u8],
    #[case] want: &[u8],
) {
    let mut d = dst.to_vec();
    int_combine(dtype, op, &mut d, src).unwrap();
    assert_eq!(d, want, "{op} {dtype}");
}

/// `int_combine` refuses, writing nothing: an op outside ADD/MULTIPLY/MAX/MIN, a dtype that is
/// not an integer, slices of different lengths.
#[test]
fn int_combine_refusals() {
    let mut d = vec![5u8; 4];
    assert_eq!(
        int_combine(Dtype::Int32, AluOp::Subtract, &mut d, &[1; 4]),
        Err(NumericsError::UnsupportedOp { op: AluOp::Subtract, table: "int_combine" })
    );
    assert_eq!(
        int_combine(Dtype::Float32, AluOp::Add, &mut d, &[1; 4]),
        Err(NumericsError::NotInteger { dtype: Dtype::Float32, op: AluOp::Add })
    );
    assert!(matches!(
        int_combine(Dtype::Int16, AluOp::Add, &mut d, &[1; 2]),
        Err(NumericsError::LengthMismatch { src_values: 1, dst_values: 2, .. })
    ));
    assert_eq!(d, [5; 4]);
}
