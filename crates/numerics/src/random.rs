//! The random family's arithmetic on 32-bit draws (re-facts §7; docs/fidelity.md R3, R4): the
//! generators themselves are engine state and live with the simulator.

/// A draw's unit value in [0, 1): the fp32 with bits `0x3F800000 | (r & 0x7FFFFF)` (a value in
/// [1, 2)) minus 1, exactly (re-facts §7: Rand2).
#[inline]
pub fn unit(r: u32) -> f32 {
    f32::from_bits(0x3F80_0000 | (r & 0x007F_FFFF)) - 1.0
}

/// Rand2's value: `lo + (hi − lo)·unit(r)` in fp32, each operation rounded in that order (the
/// difference, the product, the sum; no fused multiply-add).
#[inline]
pub fn uniform(r: u32, lo: f32, hi: f32) -> f32 {
    let d = hi - lo;
    lo + d * unit(r)
}

/// Dropout's decision: whether the element whose draw is `r` is kept. With `keep_rate` false,
/// `p` is the drop probability (the element is dropped when `unit(r) < p`); with it true, `p` is
/// the keep probability (kept when `unit(r) < p`).
#[inline]
pub fn keeps(r: u32, p: f32, keep_rate: bool) -> bool {
    (unit(r) < p) == keep_rate
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: the low 23 bits are the mantissa of [1, 2): 0 gives 0, all ones 1 − 2^-23, and
    /// the high 9 bits are ignored.
    #[test]
    fn unit_values_by_hand() {
        assert_eq!(unit(0), 0.0);
        assert_eq!(unit(0xFF80_0000), 0.0);
        assert_eq!(unit(0x007F_FFFF), 1.0 - f32::EPSILON);
        assert_eq!(unit(0x0040_0000), 0.5);
        // (3 − (−1))·0.5 − 1 = 1.
        assert_eq!(uniform(0x0040_0000, -1.0, 3.0), 1.0);
        // Drop probability 0 keeps everything, 1 drops everything (unit < 1 always).
        assert!(keeps(0, 0.0, false) && keeps(u32::MAX, 0.0, false));
        assert!(!keeps(0, 1.0, false) && !keeps(u32::MAX, 1.0, false));
        assert!(keeps(0x0040_0000, 0.75, true) && !keeps(0x0040_0000, 0.25, true));
    }
}
