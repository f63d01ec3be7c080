//! The four ALU functor tables of the reference (seed 000 §2.1, re-facts §2): `ts_ops` (fp32),
//! `ts_int_ops` (int32), `ta_ops` (64-bit address path) and `ts_int_cmp_ops` (int32 predicates).
//!
//! The left operand is the accumulator: `subtract` is `acc − x`, `is_gt` is `acc > x`; unary ops
//! ignore `x`. Each table is one list below, from which its membership, its lookup, and a
//! visitor that hands the caller a zero-sized functor type are derived, so simulator loops are
//! monomorphised per op (`with(op, visitor)`) instead of calling through a pointer per element.
//! A miss is [`NumericsError::UnsupportedOp`] ("op … is not supported yet").
//!
//! Where the sources are silent (comparison result values, NaN and ties in max/min, division
//! and modulo by zero, shift counts outside 0..width, the saturating int arithmetic) the choices
//! are documented per entry and in docs/fidelity.md N12–N17 (ASSUMED).
//!
//! [`int_combine`] is the integer `dst = dst op src` of the DMA compute ops (wrapping ADD and
//! MULTIPLY, MAX/MIN by the dtype's signedness; re-facts §8, fidelity X14 and G41).

use crate::{Dtype, NumericsError};
use bir_ir::AluOp;

/// A binary fp32 functor.
pub trait F32Op {
    /// The op it implements.
    const OP: AluOp;
    /// `op(acc, x)`.
    fn apply(acc: f32, x: f32) -> f32;
}

/// A binary int32 functor.
pub trait I32Op {
    /// The op it implements.
    const OP: AluOp;
    /// `op(acc, x)`.
    fn apply(acc: i32, x: i32) -> i32;
}

/// A binary 64-bit functor (the address path).
pub trait I64Op {
    /// The op it implements.
    const OP: AluOp;
    /// `op(acc, x)`.
    fn apply(acc: i64, x: i64) -> i64;
}

/// Receives the functor type of an fp32 op.
pub trait F32Visitor {
    /// What the visit returns.
    type Out;
    /// Called with the op's functor type.
    fn visit<O: F32Op>(self) -> Self::Out;
}

/// Receives the functor type of an int32 op.
pub trait I32Visitor {
    /// What the visit returns.
    type Out;
    /// Called with the op's functor type.
    fn visit<O: I32Op>(self) -> Self::Out;
}

/// Receives the functor type of a 64-bit op.
pub trait I64Visitor {
    /// What the visit returns.
    type Out;
    /// Called with the op's functor type.
    fn visit<O: I64Op>(self) -> Self::Out;
}

macro_rules! table {
    (
        $(#[$doc:meta])* mod $module:ident: $trait:ident, $visitor:ident, $t:ty, $table:literal {
            $( $(#[$odoc:meta])* $name:ident = $variant:ident => |$a:ident, $x:ident| $body:expr; )*
        }
    ) => {
        $(#[$doc])*
        pub mod $module {
            use super::*;

            $(
                $(#[$odoc])*
                pub struct $name;
                impl $trait for $name {
                    const OP: AluOp = AluOp::$variant;
                    #[inline(always)]
                    fn apply($a: $t, $x: $t) -> $t {
                        $body
                    }
                }
            )*

            /// The ops this table holds.
            pub const MEMBERS: &[AluOp] = &[$(AluOp::$variant),*];

            /// Calls `v.visit::<Functor>()` for `op`, or says the op is not in this table.
            pub fn with<V: $visitor>(op: AluOp, v: V) -> Result<V::Out, NumericsError> {
                match op {
                    $(AluOp::$variant => Ok(v.visit::<$name>()),)*
                    other => Err(NumericsError::UnsupportedOp { op: other, table: $table }),
                }
            }

            /// The functor of `op` as a plain function.
            pub fn lookup(op: AluOp) -> Result<fn($t, $t) -> $t, NumericsError> {
                struct AsFn;
                impl $visitor for AsFn {
                    type Out = fn($t, $t) -> $t;
                    fn visit<O: $trait>(self) -> Self::Out {
                        O::apply
                    }
                }
                with(op, AsFn)
            }
        }
    };
}

fn truth(b: bool) -> f32 {
    if b { 1.0 } else { 0.0 }
}

/// max with a defined NaN and tie rule: a NaN operand yields the other operand, a tie (±0
/// included) yields `acc` (ASSUMED).
/// It matches glibc's `fmaxf(acc, x)` (first argument on a tie), and is the one definition the
/// DMA CCE (D4), the DGE compute ops and the ISA datapaths use as well.
#[inline(always)]
pub fn fmaxf(acc: f32, x: f32) -> f32 {
    if x > acc || acc.is_nan() { x } else { acc }
}

/// min, mirror of [`fmaxf`] (glibc `fminf(acc, x)`).
#[inline(always)]
pub fn fminf(acc: f32, x: f32) -> f32 {
    if x < acc || acc.is_nan() { x } else { acc }
}

/// Reciprocal (opcode 21): exactly `1.0f / x` in fp32, IEEE division rounded to nearest even
/// (engines.md §2.5: the dedicated opcode bypasses the activation tables), so 1/±0 = ±inf,
/// 1/±inf = ±0 and a NaN stays NaN.
#[inline(always)]
pub fn reciprocal(x: f32) -> f32 {
    1.0 / x
}

/// [`reciprocal`] over a slice, in place (one tight loop the compiler vectorises).
pub fn reciprocal_slice(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = reciprocal(*x));
}

table! {
    /// `ts_ops`: `float(float, float)`, the 21 members of re-facts §2. Comparisons and logical
    /// ops write 1.0 or 0.0; a non-zero (or NaN) operand is true.
    mod ts_ops: F32Op, F32Visitor, f32, "ts_ops" {
        /// `acc`.
        Bypass = Bypass => |a, _x| a;
        /// `acc + x`.
        Add = Add => |a, x| a + x;
        /// `acc − x`.
        Subtract = Subtract => |a, x| a - x;
        /// `acc · x`.
        Mult = Mult => |a, x| a * x;
        /// `acc / x` (IEEE: x = 0 gives ±Inf or NaN).
        Divide = Divide => |a, x| a / x;
        /// max (see [`fmaxf`]).
        Max = Max => |a, x| fmaxf(a, x);
        /// min (see [`fminf`]).
        Min = Min => |a, x| fminf(a, x);
        /// `acc ≠ 0 ∧ x ≠ 0`.
        LogicalAnd = LogicalAnd => |a, x| truth(a != 0.0 && x != 0.0);
        /// `acc ≠ 0 ∨ x ≠ 0`.
        LogicalOr = LogicalOr => |a, x| truth(a != 0.0 || x != 0.0);
        /// `(acc ≠ 0) ≠ (x ≠ 0)`.
        LogicalXor = LogicalXor => |a, x| truth((a != 0.0) != (x != 0.0));
        /// `acc == x`.
        IsEqual = IsEqual => |a, x| truth(a == x);
        /// `acc ≠ x` (true when either is NaN).
        NotEqual = NotEqual => |a, x| truth(a != x);
        /// `acc > x`.
        IsGt = IsGt => |a, x| truth(a > x);
        /// `acc ≥ x`.
        IsGe = IsGe => |a, x| truth(a >= x);
        /// `acc < x`.
        IsLt = IsLt => |a, x| truth(a < x);
        /// `acc ≤ x`.
        IsLe = IsLe => |a, x| truth(a <= x);
        /// `powf(acc, x)` (the platform libm).
        Pow = Pow => |a, x| a.powf(x);
        /// `1 / sqrtf(acc)`, two roundings.
        Rsqrt = Rsqrt => |a, _x| 1.0 / a.sqrt();
        /// `|acc|`.
        Abs = Abs => |a, _x| a.abs();
        /// `max(|acc|, |x|)`.
        AbsMax = AbsMax => |a, x| fmaxf(a.abs(), x.abs());
        /// `min(|acc|, |x|)`.
        AbsMin = AbsMin => |a, x| fminf(a.abs(), x.abs());
    }
}

/// Shift count rule for the integer tables: counts outside 0..width shift everything out
/// (left and logical right give 0; arithmetic right gives the sign fill) (ASSUMED).
#[inline(always)]
fn in_width(count: i64, width: u32) -> Option<u32> {
    u32::try_from(count).ok().filter(|c| *c < width)
}

table! {
    /// `ts_int_ops`: `int(int, int)` for bitvec instructions and int32 data: bit operations,
    /// shifts, and saturating ("sq_*") arithmetic. Division and modulo by zero give 0; modulo
    /// takes the sign of the dividend (C `%`) (ASSUMED: the page lists no members).
    mod ts_int_ops: I32Op, I32Visitor, i32, "ts_int_ops" {
        /// `acc`.
        Bypass = Bypass => |a, _x| a;
        /// `!acc`.
        BitwiseNot = BitwiseNot => |a, _x| !a;
        /// `acc << x`.
        ArithShiftLeft = ArithShiftLeft => |a, x| in_width(x.into(), 32).map_or(0, |c| a << c);
        /// `acc >> x`, sign-propagating.
        ArithShiftRight = ArithShiftRight => |a, x| a >> in_width(x.into(), 32).unwrap_or(31);
        /// Saturating `acc + x`.
        Add = Add => |a, x| a.saturating_add(x);
        /// Saturating `acc − x`.
        Subtract = Subtract => |a, x| a.saturating_sub(x);
        /// Saturating `acc · x`.
        Mult = Mult => |a, x| a.saturating_mul(x);
        /// `acc / x` toward zero, saturating; 0 when x = 0.
        Divide = Divide => |a, x| if x == 0 { 0 } else { a.saturating_div(x) };
        /// Signed max.
        Max = Max => |a, x| a.max(x);
        /// Signed min.
        Min = Min => |a, x| a.min(x);
        /// `acc & x`.
        BitwiseAnd = BitwiseAnd => |a, x| a & x;
        /// `acc | x`.
        BitwiseOr = BitwiseOr => |a, x| a | x;
        /// `acc ^ x`.
        BitwiseXor = BitwiseXor => |a, x| a ^ x;
        /// `acc << x`, as unsigned.
        LogicalShiftLeft = LogicalShiftLeft => |a, x| in_width(x.into(), 32).map_or(0, |c| ((a as u32) << c) as i32);
        /// `acc >> x`, zero-filling.
        LogicalShiftRight = LogicalShiftRight => |a, x| in_width(x.into(), 32).map_or(0, |c| ((a as u32) >> c) as i32);
        /// `acc mod x` with the dividend's sign; 0 when x = 0.
        Mod = Mod => |a, x| if x == 0 { 0 } else { a.wrapping_rem(x) };
        /// As `mod`.
        ModInt = ModInt => |a, x| if x == 0 { 0 } else { a.wrapping_rem(x) };
    }
}

table! {
    /// `ta_ops`: `long(long, long)`, the 64-bit address path (`IsAluOpOnPool`, is_tensor_scalar_addr).
    /// Address arithmetic wraps; max/min are signed (ASSUMED: the members are not listed).
    mod ta_ops: I64Op, I64Visitor, i64, "ta_ops" {
        /// `acc`.
        Bypass = Bypass => |a, _x| a;
        /// `!acc`.
        BitwiseNot = BitwiseNot => |a, _x| !a;
        /// `acc << x`.
        ArithShiftLeft = ArithShiftLeft => |a, x| in_width(x, 64).map_or(0, |c| a << c);
        /// `acc >> x`, sign-propagating.
        ArithShiftRight = ArithShiftRight => |a, x| a >> in_width(x, 64).unwrap_or(63);
        /// Wrapping `acc + x`.
        Add = Add => |a, x| a.wrapping_add(x);
        /// Wrapping `acc − x`.
        Subtract = Subtract => |a, x| a.wrapping_sub(x);
        /// Wrapping `acc · x`.
        Mult = Mult => |a, x| a.wrapping_mul(x);
        /// Signed max.
        Max = Max => |a, x| a.max(x);
        /// Signed min.
        Min = Min => |a, x| a.min(x);
        /// `acc & x`.
        BitwiseAnd = BitwiseAnd => |a, x| a & x;
        /// `acc | x`.
        BitwiseOr = BitwiseOr => |a, x| a | x;
        /// `acc ^ x`.
        BitwiseXor = BitwiseXor => |a, x| a ^ x;
        /// `acc << x`, as unsigned.
        LogicalShiftLeft = LogicalShiftLeft => |a, x| in_width(x, 64).map_or(0, |c| ((a as u64) << c) as i64);
        /// `acc >> x`, zero-filling.
        LogicalShiftRight = LogicalShiftRight => |a, x| in_width(x, 64).map_or(0, |c| ((a as u64) >> c) as i64);
    }
}

/// `ts_int_cmp_ops`: the 12 int32 predicates (6 comparisons × signed/unsigned) of
/// RangeSelect/AffineSelect (seed 000 §5.4).
pub mod ts_int_cmp_ops {
    use super::*;

    /// The comparison ops; each exists signed and unsigned.
    pub const MEMBERS: &[AluOp] =
        &[AluOp::IsEqual, AluOp::NotEqual, AluOp::IsGt, AluOp::IsGe, AluOp::IsLt, AluOp::IsLe];

    /// The predicate `op(acc, x)`, comparing as signed or unsigned 32-bit integers.
    pub fn lookup(op: AluOp, signed: bool) -> Result<fn(i32, i32) -> bool, NumericsError> {
        Ok(match (op, signed) {
            (AluOp::IsEqual, _) => |a, x| a == x,
            (AluOp::NotEqual, _) => |a, x| a != x,
            (AluOp::IsGt, true) => |a, x| a > x,
            (AluOp::IsGe, true) => |a, x| a >= x,
            (AluOp::IsLt, true) => |a, x| a < x,
            (AluOp::IsLe, true) => |a, x| a <= x,
            (AluOp::IsGt, false) => |a, x| (a as u32) > (x as u32),
            (AluOp::IsGe, false) => |a, x| (a as u32) >= (x as u32),
            (AluOp::IsLt, false) => |a, x| (a as u32) < (x as u32),
            (AluOp::IsLe, false) => |a, x| (a as u32) <= (x as u32),
            (other, _) => return Err(NumericsError::UnsupportedOp { op: other, table: "ts_int_cmp_ops" }),
        })
    }
}

/// `dst = dst op src` for each whole element of an integer `dtype`, straight on the
/// little-endian bytes and at the dtype's width: the integer combine of the DMA compute ops
/// (DGE_COMPUTE_OP ADD/MULTIPLY/MAX/MIN, seed 004 §3c), which the ISA datapath (fidelity X14)
/// and the DGE descriptors (G41) both run through this one definition.
///
/// - [`AluOp::Add`] and [`AluOp::Mult`] wrap modulo 2^bits (re-facts §8, the reference's
///   `cast_copy_or_accumulate`: "Int add wraps; min/max are signed"; MULTIPLY wrapping alike is
///   ASSUMED). Two's complement wrap makes their bytes the same for intN and uintN.
/// - [`AluOp::Max`] / [`AluOp::Min`] compare signed for the intN dtypes (re-facts §8) and
///   unsigned for the uintN ones (ASSUMED, X14: the dtype says how its bits read).
///
/// Elements pair up in order (`dst[k] op src[k]`); bytes after the last whole element are left
/// alone. One dispatch per call, none per element.
///
/// Errors (nothing written): another op is [`NumericsError::UnsupportedOp`] (table
/// `int_combine`), a dtype that is not an integer [`NumericsError::NotInteger`], slices of
/// different lengths [`NumericsError::LengthMismatch`].
pub fn int_combine(dtype: Dtype, op: AluOp, dst: &mut [u8], src: &[u8]) -> Result<(), NumericsError> {
    if !matches!(op, AluOp::Add | AluOp::Mult | AluOp::Max | AluOp::Min) {
        return Err(NumericsError::UnsupportedOp { op, table: "int_combine" });
    }
    if !dtype.is_integer() {
        return Err(NumericsError::NotInteger { dtype, op });
    }
    if dst.len() != src.len() {
        let size = dtype.size().max(1);
        return Err(NumericsError::LengthMismatch {
            src: dtype,
            src_values: src.len() / size,
            dst: dtype,
            dst_values: dst.len() / size,
        });
    }
    macro_rules! lanes {
        ($t:ty) => {{
            const W: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn each(dst: &mut [u8], src: &[u8], f: impl Fn($t, $t) -> $t) {
                for (d, s) in dst.as_chunks_mut::<W>().0.iter_mut().zip(src.as_chunks::<W>().0) {
                    *d = f(<$t>::from_le_bytes(*d), <$t>::from_le_bytes(*s)).to_le_bytes();
                }
            }
            match op {
                AluOp::Add => each(dst, src, <$t>::wrapping_add),
                AluOp::Mult => each(dst, src, <$t>::wrapping_mul),
                AluOp::Max => each(dst, src, Ord::max),
                _ => each(dst, src, Ord::min),
            }
        }};
    }
    match dtype {
        Dtype::Int8 => lanes!(i8),
        Dtype::Uint8 => lanes!(u8),
        Dtype::Int16 => lanes!(i16),
        Dtype::Uint16 => lanes!(u16),
        Dtype::Int32 => lanes!(i32),
        Dtype::Uint32 => lanes!(u32),
        Dtype::Int64 => lanes!(i64),
        Dtype::Uint64 => lanes!(u64),
        _ => return Err(NumericsError::NotInteger { dtype, op }),
    }
    Ok(())
}

/// The 64-bit path's conversion of an fp32 scalar, as x86-64 compilers lower `(uint64_t)f`:
/// below 2^63 a signed truncating convert, else convert `f − 2^63` and set the top bit; an
/// out-of-range or NaN convert yields the "integer indefinite" 0x8000_0000_0000_0000 (so NaN and
/// values ≥ 2^64 end as 0, negatives wrap) (re-facts §2 "2^63 unsigned-saturate trick"; ASSUMED
/// that it is exactly this lowering).
pub fn f32_to_u64_addr(f: f32) -> u64 {
    const TWO_63: f32 = 9_223_372_036_854_775_808.0;
    fn cvttss2si(v: f32) -> u64 {
        if v.is_nan() || !(-TWO_63..TWO_63).contains(&v) { 0x8000_0000_0000_0000 } else { v as i64 as u64 }
    }
    if f < TWO_63 { cvttss2si(f) } else { cvttss2si(f - TWO_63) ^ 0x8000_0000_0000_0000 }
}
