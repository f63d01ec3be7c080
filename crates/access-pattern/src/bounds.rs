//! Bounds: does every element of a pattern lie inside a layout, and if not, which dimension and
//! index leaves it (used for validation and the simulator's `oob_is_err`, seed 000 §5.1).

use crate::runs::Pattern;
use crate::{ApError, Layout};

/// Checks that every element of `p` is inside `layout`. On failure names the first dimension
/// (outermost first) whose index takes the address out, with the first such index.
pub fn check_bounds(layout: &Layout, p: &Pattern<'_>) -> Result<(), ApError> {
    p.check_shape()?;
    let cap = layout.capacity(p.elem_size);
    let cap_i = i64::try_from(cap).unwrap_or(i64::MAX);
    let out = |element: i64, dim: Option<usize>, index: i64| ApError::OutOfBounds {
        dim,
        index,
        element,
        capacity: cap,
    };
    if p.offset < 0 || p.offset >= cap_i {
        return Err(out(p.offset, None, 0));
    }
    // Walk dims outermost first with each at its extreme towards the bound it could cross.
    let (mut lo, mut hi) = (p.offset, p.offset);
    for (dim, q) in p.pairs.iter().enumerate() {
        let span = q.step.checked_mul(q.num - 1).ok_or(ApError::Overflow { dim })?;
        if span > 0 {
            let new_hi = hi.checked_add(span).ok_or(ApError::Overflow { dim })?;
            if new_hi >= cap_i {
                // First index i with hi + step·i ≥ cap: ⌈(cap − hi) / step⌉ with cap > hi, in a
                // form that cannot overflow for any step (i64::MAX included; found by the
                // access_pattern fuzz target).
                let index = (cap_i - hi - 1) / q.step + 1;
                return Err(out(hi.saturating_add(q.step.saturating_mul(index)), Some(dim), index));
            }
            hi = new_hi;
        } else if span < 0 {
            let new_lo = lo.checked_add(span).ok_or(ApError::Overflow { dim })?;
            if new_lo < 0 {
                // First index i with lo + step·i < 0 (step < 0, lo ≥ 0): ⌊lo / |step|⌋ + 1, with
                // |step| unsigned so step = i64::MIN does not overflow (fuzz crash
                // `check_bounds_step_i64_min`).
                let index = (lo.unsigned_abs() / q.step.unsigned_abs()) as i64 + 1;
                return Err(out(lo.saturating_add(q.step.saturating_mul(index)), Some(dim), index));
            }
            lo = new_lo;
        }
    }
    Ok(())
}
