//! Whether an access pattern's elements have distinct addresses: the test kernels use to decide
//! that a write through an AP never lands twice on one element (so it can be chunked, reordered
//! or done in place; seed 000 §5.1 reads everything before writing only when it must).

use bir_ir::{AccessPattern, ApPair};

/// True when no two elements of the AP share an address. A sufficient test: with the levels
/// sorted by |step|, each level's step exceeds the span of the levels inside it (unit levels
/// ignored). A `false` may be conservative (e.g. interleavings this rule does not see).
pub fn injective(ap: &AccessPattern) -> bool {
    distinct_pairs(&ap.pairs)
}

/// [`injective`] for a bare list of `[step, num]` levels (e.g. an indirect entry's walk, or an AP
/// without one of its levels).
pub fn distinct_pairs(pairs: &[ApPair]) -> bool {
    let mut levels: smallvec::SmallVec<[(u64, u64); bir_ir::MAX_AP_DIMS]> =
        pairs.iter().filter(|p| p.num > 1).map(|p| (p.step.unsigned_abs(), p.num as u64)).collect();
    levels.sort_unstable();
    let mut span = 0u64;
    for (step, num) in levels {
        if step <= span {
            return false;
        }
        match (num - 1).checked_mul(step).and_then(|d| span.checked_add(d)) {
            Some(s) => span = s,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{distinct_pairs, injective};
    use bir_ir::{AccessPattern, ApPair, Dtype, LocId};
    use rstest::rstest;

    fn ap(pairs: &[(i64, i64)]) -> AccessPattern {
        AccessPattern {
            loc: LocId(0),
            dtype: Dtype::Float32,
            offset: 0,
            pairs: pairs.iter().map(|&(s, n)| ApPair::new(s, n)).collect(),
            dynamic: None,
        }
    }

    #[rstest]
    #[case::row_major(&[(64, 128), (1, 64)], true)]
    #[case::broadcast(&[(0, 128), (1, 64)], false)]
    #[case::overlapping_rows(&[(32, 128), (1, 64)], false)]
    #[case::reversed(&[(-64, 128), (-1, 64)], true)]
    #[case::transposed(&[(1, 64), (64, 128)], true)]
    #[case::unit_dims_ignored(&[(0, 1), (5, 1), (1, 7)], true)]
    #[case::interleaved(&[(2, 4), (1, 2)], true)]
    #[case::collide(&[(2, 4), (1, 3)], false)]
    #[case::spans_overflow(&[(1 << 62, 8), (1, 2)], false)]
    fn injective_levels(#[case] pairs: &[(i64, i64)], #[case] want: bool) {
        assert_eq!(injective(&ap(pairs)), want, "{pairs:?}");
        assert_eq!(distinct_pairs(&ap(pairs).pairs), want, "{pairs:?}");
    }
}
