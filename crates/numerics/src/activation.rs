//! The ScalarEngine's activation functions on their exact path (engines.md §2.3, §2.5–2.6;
//! docs/fidelity.md E1–E5): each function's closed form evaluated in IEEE double on the fp32
//! argument and rounded once, to nearest even, to fp32 — what the reference simulator's
//! non-table path does (RE, CERTAIN), not the hardware's piecewise polynomials.
//!
//! The transcendental calls go to the `libm` crate (a pure-Rust port of musl's libm), so the
//! bits do not depend on the host's C library; `sqrt` and the arithmetic are IEEE operations.
//! Exp, the hot one (softmax, attention), has its own faster path, [`exp_slice`], that gives
//! libm's fp32 result on every fp32 argument (checked exhaustively).
//! The closed forms are the reference's, step by step (so Gelu's left tail cancels to −0 where
//! `1 + erf` rounds to 0, Sigmoid is `1 / (exp(−x) + 1)`, Lrelu's slope is the double 0.01).
//! NaN arguments give NaN except where a form says otherwise: Sign(NaN) = +0 (the comparisons
//! are false), Relu(NaN) = NaN (docs/fidelity.md E3).

use bir_ir::ActivationFunctionType as F;
use std::f64::consts::{PI, SQRT_2};

/// A function the exact path has no closed form for (the reference throws "Unsupported
/// activation function" on Is_finite and Unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported(pub F);

/// Applies `f` in place to fp32 arguments `vals`; `alpha` is the parameter (Prelu's slope; no
/// other function reads it). One dispatch, then a loop per function.
pub fn apply(f: F, vals: &mut [f32], alpha: f32) -> Result<(), Unsupported> {
    let alpha = f64::from(alpha);
    let sqrt_2_over_pi = (2.0 / PI).sqrt();
    let two_over_sqrt_pi = 2.0 / PI.sqrt();
    let sqrt_2pi = (2.0 * PI).sqrt();
    match f {
        F::Identity | F::Copy => each(vals, |a| a),
        F::Square => each(vals, |a| a * a),
        F::Relu => each(vals, |a| if a > 0.0 || a.is_nan() { a } else { 0.0 }),
        F::Lrelu => each(vals, |a| if a > 0.0 { a } else { 0.01 * a }),
        F::Prelu => each(vals, |a| if a > 0.0 { a } else { alpha * a }),
        F::Sigmoid => each(vals, sigmoid),
        F::Tanh => each(vals, libm::tanh),
        F::Exp => exp_slice(vals),
        F::Softplus => each(vals, softplus),
        F::Sqrt => each(vals, f64::sqrt),
        F::Rsqrt => each(vals, |a| 1.0 / a.sqrt()),
        F::Ln => each(vals, libm::log),
        F::Erf => each(vals, libm::erf),
        F::Sin => each(vals, libm::sin),
        F::Arctan => each(vals, libm::atan),
        F::Sign => each(vals, |a| f64::from(i8::from(a > 0.0) - i8::from(a < 0.0))),
        F::Gelu => each(vals, |a| 0.5 * a * (1.0 + libm::erf(a / SQRT_2))),
        F::Mish => each(vals, |a| a * libm::tanh(softplus(a))),
        F::GeluApprxTanh => {
            each(vals, |a| 0.5 * a * (1.0 + libm::tanh(sqrt_2_over_pi * (a + 0.044715 * a * a * a))))
        }
        F::GeluApprxSigmoid => each(vals, |a| a * sigmoid(1.702 * a)),
        F::DerivativeGeluApprxSigmoid => each(vals, |a| {
            let s = sigmoid(1.702 * a);
            s + 1.702 * a * s * (1.0 - s)
        }),
        F::DerivativeGelu => {
            each(vals, |a| 0.5 * (1.0 + libm::erf(a / SQRT_2)) + a * libm::exp(-a * a / 2.0) / sqrt_2pi)
        }
        F::DerivativeErf => each(vals, |a| two_over_sqrt_pi * libm::exp(-a * a)),
        F::Abs => each(vals, f64::abs),
        F::Reciprocal => each(vals, |a| 1.0 / a),
        F::AbsReciprocalSqrt => each(vals, |a| 1.0 / a.abs().sqrt()),
        F::Silu => each(vals, |a| a / (1.0 + libm::exp(-a))),
        F::DerivativeSilu => each(vals, |a| {
            let s = sigmoid(a);
            s * (1.0 + a * (1.0 - s))
        }),
        F::IsFinite | F::Unknown => return Err(Unsupported(f)),
    }
    Ok(())
}

/// The input range where the hardware's piecewise polynomial for a function is valid (AWS's
/// activation-function table, engines.md §2.4: DOCUMENTED); outside it the hardware's output is
/// "invalid". Only log, sin, arctan, sqrt, rsqrt and reciprocal have one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidRange {
    /// The smallest valid magnitude (or value, when not `symmetric`).
    pub lo: f64,
    /// The largest.
    pub hi: f64,
    /// The range is `±[lo, hi]` (reciprocal's) rather than `[lo, hi]`.
    pub symmetric: bool,
    /// How the documentation writes it.
    pub text: &'static str,
}

impl ValidRange {
    /// Whether the fp32 argument `u` lies in the range, its edges rounded to fp32 (so the fp32
    /// π is inside sin's `[-π, π]`); a NaN does not.
    pub fn contains(&self, u: f32) -> bool {
        let v = if self.symmetric { u.abs() } else { u };
        v >= self.lo as f32 && v <= self.hi as f32
    }
}

/// `f`'s documented valid input range, if it has one.
pub fn valid_range(f: F) -> Option<ValidRange> {
    let p2 = |e: i32| 2f64.powi(e);
    let (lo, hi, symmetric, text) = match f {
        F::Ln => (p2(-64), p2(64), false, "[2^-64, 2^64]"),
        F::Sin => (-PI, PI, false, "[-pi, pi]"),
        F::Arctan => (-PI / 2.0, PI / 2.0, false, "[-pi/2, pi/2]"),
        F::Sqrt => (p2(-116), p2(118), false, "[2^-116, 2^118]"),
        F::Rsqrt => (p2(-87), p2(97), false, "[2^-87, 2^97]"),
        F::Reciprocal => (p2(-42), p2(42), true, "±[2^-42, 2^42]"),
        _ => return None,
    };
    Some(ValidRange { lo, hi, symmetric, text })
}

/// How an engine's accumulator registers fold results (AWS `activation`: add; `activate2`
/// also max, min, abs_max and abs_min; docs/fidelity.md E7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// `r + y`.
    Add,
    /// [`crate::alu::fmaxf`]`(r, y)`.
    Max,
    /// [`crate::alu::fminf`]`(r, y)`.
    Min,
    /// `fmaxf(|r|, |y|)`.
    AbsMax,
    /// `fminf(|r|, |y|)`.
    AbsMin,
}

impl Fold {
    /// The fold of an ALU op, if it is one (`None`, the default, is add).
    pub fn of(op: Option<bir_ir::AluOp>) -> Option<Fold> {
        use bir_ir::AluOp as A;
        Some(match op {
            None | Some(A::Add) => Fold::Add,
            Some(A::Max) => Fold::Max,
            Some(A::Min) => Fold::Min,
            Some(A::AbsMax) => Fold::AbsMax,
            Some(A::AbsMin) => Fold::AbsMin,
            Some(_) => return None,
        })
    }

    /// The value a reset gives the registers: the fold's identity (activate2's "reset to the
    /// identity value for reduce_op"; activation and exponential reset to 0, add's identity).
    pub fn identity(self) -> f32 {
        match self {
            Fold::Add | Fold::AbsMax => 0.0,
            Fold::Max => f32::NEG_INFINITY,
            Fold::Min | Fold::AbsMin => f32::INFINITY,
        }
    }

    /// `r` folded with every value of `vals` in order, each step one fp32 operation (the
    /// architecture guide's per-element `reduce_res[lane] += out[lane][k]`, activate2's and
    /// exponential's per-element pseudo-code): serial, not a tree.
    pub fn over(self, r: f32, vals: &[f32]) -> f32 {
        use crate::alu::{fmaxf, fminf};
        match self {
            Fold::Add => vals.iter().fold(r, |r, &y| r + y),
            Fold::Max => vals.iter().fold(r, |r, &y| fmaxf(r, y)),
            Fold::Min => vals.iter().fold(r, |r, &y| fminf(r, y)),
            Fold::AbsMax => vals.iter().fold(r, |r, &y| fmaxf(r.abs(), y.abs())),
            Fold::AbsMin => vals.iter().fold(r, |r, &y| fminf(r.abs(), y.abs())),
        }
    }
}

/// `fp32(exp(f64(x)))` exactly as `libm::exp(x) as f32` gives it, about three times faster.
///
/// For `−87 < x < 88.5` (every argument whose exp is a normal fp32) a short table-driven exp
/// in f64 — `x = (32·k' + j)·ln2/32 + r`, `2^(j/32)` from a table, a degree-5 Taylor polynomial
/// on `|r| ≤ ln2/64` — whose relative error is below 2^-45. That value and libm's (error below
/// one f64 ulp) round to the same fp32 unless the exact exp lies within 2^-44 of a point halfway
/// between two fp32 values; so when the fast value is that close to a halfway point (its low 29
/// bits within 2^10 of 2^28, about one argument in 2^18) the result is libm's, as it is for
/// every other argument. `cargo xtask exhaustive-exp` checks all 2^32 (under a minute); a
/// sweep runs in the tests.
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    let mut v = [x];
    exp_slice(&mut v);
    v[0]
}

/// [`exp_f32`] in place over a slice: per block, the fast value of every element in one
/// branch-free loop (arguments outside the fast range clamped to 0), then a pass that rounds
/// each to fp32 or, outside the range or near a halfway point, takes libm's.
pub fn exp_slice(vals: &mut [f32]) {
    const B: usize = 256;
    let mut fast = [0f64; B];
    let table: &[f64; 32] = &EXP2_32;
    for block in vals.chunks_mut(B) {
        let fast = &mut fast[..block.len()];
        fast.iter_mut().zip(block.iter()).for_each(|(y, x)| *y = exp_fast(*x, table));
        for (x, y) in block.iter_mut().zip(fast.iter()) {
            let low = (y.to_bits() & ((1 << 29) - 1)) as i64;
            *x = if *x > -87.0 && *x < 88.5 && (low - (1 << 28)).abs() >= 1 << 10 {
                *y as f32
            } else {
                libm::exp(f64::from(*x)) as f32
            };
        }
    }
}

/// The table-driven exp of [`exp_f32`] in f64 for `−87 < x < 88.5` (any value elsewhere).
#[inline(always)]
fn exp_fast(x: f32, table: &[f64; 32]) -> f64 {
    const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5·2^52: adding it rounds to an integer
    let x = if x > -87.0 && x < 88.5 { f64::from(x) } else { 0.0 };
    let t = x * (32.0 / std::f64::consts::LN_2);
    let shifted = t + SHIFT;
    let kf = shifted - SHIFT;
    // k in the low bits of the shifted value (two's complement of the integer part).
    let k = shifted.to_bits() as i64 - SHIFT.to_bits() as i64;
    let r = x - kf * (std::f64::consts::LN_2 / 32.0);
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0)))));
    // 2^(k div 32): the biased exponent (k + 32·1023) / 32, positive here, by logical shifts.
    let scale = f64::from_bits(((k + 32 * 1023) as u64 >> 5) << 52);
    table[(k & 31) as usize] * p * scale
}

/// `2^(j/32)` for j in 0..32, each within one f64 ulp (libm's exp2).
static EXP2_32: std::sync::LazyLock<[f64; 32]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|j| libm::exp2(j as f64 / 32.0)));

/// `1 / (exp(−a) + 1)`, the reference's form.
#[inline(always)]
fn sigmoid(a: f64) -> f64 {
    1.0 / (libm::exp(-a) + 1.0)
}

/// `log1p(exp(−|a|)) + max(a, 0)`, the reference's (overflow-free) form.
#[inline(always)]
fn softplus(a: f64) -> f64 {
    libm::log1p(libm::exp(-a.abs())) + a.max(0.0)
}

/// `v = fp32(g(f64(v)))` for every element: one rounding, to nearest even.
#[inline(always)]
fn each(vals: &mut [f32], g: impl Fn(f64) -> f64) {
    for v in vals {
        *v = g(f64::from(*v)) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::{F, apply};

    fn one(f: F, x: f32) -> f32 {
        let mut v = [x];
        apply(f, &mut v, 0.25).unwrap_or_else(|e| panic!("{e:?}"));
        v[0]
    }

    /// Hand-worked values whose f64 result is exact or rounds unambiguously to fp32.
    #[test]
    fn closed_forms_by_hand() {
        assert_eq!(one(F::Square, 3.0), 9.0);
        assert_eq!(one(F::Relu, -2.0).to_bits(), 0, "Relu(-2) = +0");
        assert_eq!(one(F::Relu, -0.0).to_bits(), 0, "Relu(-0) = +0");
        assert!(one(F::Relu, f32::NAN).is_nan());
        // 0.01 (f64) · −2 = −0.02 (f64), which rounds to the fp32 nearest −0.02.
        assert_eq!(one(F::Lrelu, -2.0), -0.02f32);
        assert_eq!(one(F::Lrelu, -0.0).to_bits(), 0x8000_0000, "Lrelu(-0) = -0");
        assert_eq!(one(F::Prelu, -2.0), -0.5, "alpha 0.25");
        assert_eq!(one(F::Sigmoid, 0.0), 0.5);
        assert_eq!(one(F::Exp, 0.0), 1.0);
        assert_eq!(one(F::Ln, 1.0), 0.0);
        assert_eq!(one(F::Sqrt, 2.25), 1.5);
        assert_eq!(one(F::Rsqrt, 0.25), 2.0);
        assert_eq!(one(F::Reciprocal, -4.0), -0.25);
        assert_eq!(one(F::AbsReciprocalSqrt, -16.0), 0.25);
        assert_eq!(one(F::Sign, -3.5), -1.0);
        assert_eq!(one(F::Sign, -0.0).to_bits(), 0, "Sign(-0) = +0");
        assert_eq!(one(F::Sign, f32::NAN).to_bits(), 0, "Sign(NaN) = +0");
        assert_eq!(one(F::Abs, -0.0).to_bits(), 0);
        assert_eq!(one(F::Gelu, 0.0), 0.0);
        // Gelu(−10): erf(−10/√2) is −1 in f64, so 1 + erf = 0 and the product is −0.
        assert_eq!(one(F::Gelu, -10.0).to_bits(), 0x8000_0000);
        assert_eq!(one(F::Silu, 0.0), 0.0);
        assert_eq!(one(F::DerivativeSilu, 0.0), 0.5);
        assert_eq!(one(F::DerivativeGelu, 0.0), 0.5);
        assert_eq!(one(F::Softplus, 0.0), std::f32::consts::LN_2);
        assert_eq!(one(F::Exp, f32::NEG_INFINITY), 0.0);
        assert!(one(F::Ln, -1.0).is_nan());
        assert_eq!(one(F::Ln, 0.0), f32::NEG_INFINITY);
        // One rounding: exp(1) in f64 rounds to the fp32 nearest e.
        assert_eq!(one(F::Exp, 1.0), std::f32::consts::E);
    }

    /// The documented edges are inside; the next fp32 values out are outside; NaN is outside.
    #[test]
    fn valid_ranges_hold_their_edges() {
        let r = super::valid_range(F::Ln).unwrap();
        let (lo, hi) = (f32::powi(2.0, -64), f32::powi(2.0, 64));
        assert!(r.contains(lo) && r.contains(hi) && r.contains(1.0));
        assert!(!r.contains(lo.next_down()) && !r.contains(hi.next_up()) && !r.contains(0.0));
        assert!(!r.contains(f32::NAN));
        let s = super::valid_range(F::Sin).unwrap();
        // The edges are rounded to fp32: fp32 π (3.14159274, above π) is inside, the next is not.
        assert!(s.contains(std::f32::consts::PI) && !s.contains(std::f32::consts::PI.next_up()));
        assert!(s.contains(-std::f32::consts::PI) && !s.contains(-std::f32::consts::PI.next_up()));
        let rec = super::valid_range(F::Reciprocal).unwrap();
        assert!(rec.contains(-1.0) && rec.contains(f32::powi(2.0, -42)) && !rec.contains(0.0));
        assert!(!rec.contains(-f32::powi(2.0, 43)));
        assert_eq!(super::valid_range(F::Exp), None);
    }

    /// The folds by hand: serial fp32 steps (1e8 + 1 − 1e8 is 0 in fp32, not 1), NaN ignored
    /// by max/min (fmaxf), identities.
    #[test]
    fn folds_are_serial_fp32_steps() {
        use super::Fold;
        assert_eq!(Fold::Add.over(0.0, &[1e8, 1.0, -1e8]), 0.0);
        assert_eq!(Fold::Add.over(0.0, &[1.0, 1e8, -1e8]), 0.0);
        assert_eq!(Fold::Add.over(0.0, &[1e8, -1e8, 1.0]), 1.0);
        assert_eq!(Fold::Add.over(0.0, &[-0.0]).to_bits(), 0, "+0 + −0 = +0");
        assert_eq!(Fold::Max.over(Fold::Max.identity(), &[-3.0, f32::NAN, -5.0]), -3.0);
        assert_eq!(Fold::Min.over(Fold::Min.identity(), &[3.0, 5.0]), 3.0);
        assert_eq!(Fold::AbsMax.over(0.0, &[-7.0, 2.0]), 7.0);
        assert_eq!(Fold::AbsMin.over(Fold::AbsMin.identity(), &[-7.0, 2.0]), 2.0);
        assert_eq!(Fold::Max.identity(), f32::NEG_INFINITY);
        assert_eq!(Fold::of(Some(bir_ir::AluOp::Mult)), None);
        assert_eq!(Fold::of(None), Some(Fold::Add));
    }

    /// Activation(Reciprocal) is the f64 quotient rounded once to fp32, which is the correctly
    /// rounded fp32 quotient (f64 carries more than 2·24 + 2 bits), so it equals the dedicated
    /// Reciprocal opcode's `1.0f / x` on every input (engines.md's "they differ" holds only on
    /// the hardware's table path; docs/fidelity.md E11): checked on a sweep of bit patterns
    /// across every exponent, subnormals, ±0, ±Inf and NaN.
    #[test]
    fn activation_reciprocal_equals_the_fp32_quotient() {
        let mut xs: Vec<f32> =
            (0..=u32::MAX / 65_521).map(|k| f32::from_bits(k.wrapping_mul(65_521))).collect();
        xs.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE, 1e-45]);
        let mut v = xs.clone();
        apply(F::Reciprocal, &mut v, 0.0).unwrap_or_else(|e| panic!("{e:?}"));
        for (x, got) in xs.iter().zip(&v) {
            let want = crate::alu::reciprocal(*x);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{x:e}: {got:e} vs {want:e}"
            );
        }
    }

    /// `exp_f32` against `libm::exp(x) as f32` on a sweep of fp32 bit patterns (every 4099th,
    /// both signs), the edges of its fast range and their neighbours, ±0, ±Inf, NaN.
    #[test]
    fn exp_f32_matches_libm() {
        let mut xs: Vec<f32> = (0..=u32::MAX / 4099).map(|k| f32::from_bits(k * 4099)).collect();
        for e in [-87.0f32, 88.5, 88.72284, -103.97208, 0.0, 1e-30] {
            for d in -3i32..=3 {
                let b = e.to_bits().wrapping_add_signed(d);
                xs.extend([f32::from_bits(b), -f32::from_bits(b)]);
            }
        }
        xs.extend([f32::INFINITY, f32::NEG_INFINITY, f32::NAN]);
        check_exp(&xs);
    }

    fn check_exp(xs: &[f32]) {
        for x in xs {
            let (got, want) = (super::exp_f32(*x), libm::exp(f64::from(*x)) as f32);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{x:e}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn is_finite_and_unknown_are_unsupported() {
        for f in [F::IsFinite, F::Unknown] {
            assert_eq!(apply(f, &mut [1.0], 0.0), Err(super::Unsupported(f)));
        }
    }
}
