//! The TensorEngine's Matmult arithmetic (engines.md §1.4; docs/fidelity.md M3): the fp32 dot
//! products `out[m, n] = Σ_k moving[k, n] · stationary[k, m]` of operands already widened to
//! fp32.
//!
//! No public source pins the reference's summation order (its Eigen contraction's order is
//! internal, engines.md §1.4), so the order is a documented choice: each product rounded to
//! fp32, summed k = 0, 1, …, K−1 in ascending order from +0.0 with round-to-nearest-even adds
//! ([`MatmulOrder::Ascending`], the default; ASSUMED M3), or the same chain through fused
//! multiply-adds ([`MatmulOrder::Fma`]). Starting from +0.0 (as a systolic column's partial sum
//! starts) makes a column of −0 products +0.
//!
//! The loops run over a whole output row at once (the moving operand's free axis N), so every
//! output element sees exactly its own ascending chain while the compiler vectorises across N.

/// How a Matmult sums its products (docs/fidelity.md M3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MatmulOrder {
    /// `acc = +0; acc = acc + (x·w)` for k ascending, each product and sum rounded to fp32.
    #[default]
    Ascending,
    /// `acc = +0; acc = fma(x, w, acc)` for k ascending (one rounding per step).
    Fma,
}

/// `out[i·n + j] = Σ_k moving[k·n + j] · stationary[k·m + i]` for `i < m`, `j < n`, `k < k_len`
/// (row-major: `moving` is K × N, `stationary` K × M, `out` M × N), in `order`. The slices must
/// hold exactly those sizes; a caller error panics on the slice bounds rather than reading past
/// them.
pub fn matmul(
    moving: &[f32],
    stationary: &[f32],
    dims: (usize, usize, usize),
    order: MatmulOrder,
    out: &mut [f32],
) {
    matmul_rows(moving, stationary, dims, order, 0, out);
}

/// Output rows `first..first + out.len() / n` of [`matmul`] into `out` (a piece of the whole
/// output, for splitting rows across threads; every element's chain is the same either way).
/// Four rows go together, so each moving row is loaded once per four outputs.
pub fn matmul_rows(
    moving: &[f32],
    stationary: &[f32],
    (k_len, m, n): (usize, usize, usize),
    order: MatmulOrder,
    first: usize,
    out: &mut [f32],
) {
    let moving = &moving[..k_len * n];
    let stationary = &stationary[..k_len * m];
    out.fill(0.0);
    let mut i = first;
    for block in out.chunks_mut(4 * n.max(1)) {
        let rows = block.len() / n.max(1);
        if rows == 4 && order == MatmulOrder::Ascending {
            let (a0, rest) = block.split_at_mut(n);
            let (a1, rest) = rest.split_at_mut(n);
            let (a2, a3) = rest.split_at_mut(n);
            for k in 0..k_len {
                let w = &stationary[k * m + i..k * m + i + 4];
                let (w0, w1, w2, w3) = (w[0], w[1], w[2], w[3]);
                let x = &moving[k * n..(k + 1) * n];
                for ((((&x, a0), a1), a2), a3) in
                    x.iter().zip(&mut *a0).zip(&mut *a1).zip(&mut *a2).zip(&mut *a3)
                {
                    *a0 += x * w0;
                    *a1 += x * w1;
                    *a2 += x * w2;
                    *a3 += x * w3;
                }
            }
        } else {
            for (r, row) in block.chunks_exact_mut(n.max(1)).enumerate() {
                for k in 0..k_len {
                    let w = stationary[k * m + i + r];
                    let x = &moving[k * n..(k + 1) * n];
                    match order {
                        MatmulOrder::Ascending => {
                            for (acc, &x) in row.iter_mut().zip(x) {
                                *acc += x * w;
                            }
                        }
                        MatmulOrder::Fma => {
                            for (acc, &x) in row.iter_mut().zip(x) {
                                *acc = x.mul_add(w, *acc);
                            }
                        }
                    }
                }
            }
        }
        i += rows;
    }
}

/// The double-row form (fp8 `perf_mode` DoubleRow, engines.md §1.2; docs/fidelity.md M8):
/// `moving` is `2·P` rows of N in `(p, h)` order and `stationary` `2·P` rows of M likewise; each
/// output element adds, for p = 0, 1, …, P−1 ascending from +0, the fp32 sum of its row pair's
/// two products `moving[(p,0), n]·stationary[(p,0), m] + moving[(p,1), n]·stationary[(p,1), m]`
/// (each processing element multiplies two pairs and adds them before passing the sum on). Rows
/// `first..` of the output, as [`matmul_rows`].
pub fn double_row_rows(
    moving: &[f32],
    stationary: &[f32],
    (p_len, m, n): (usize, usize, usize),
    first: usize,
    out: &mut [f32],
) {
    let moving = &moving[..2 * p_len * n];
    let stationary = &stationary[..2 * p_len * m];
    out.fill(0.0);
    for (r, row) in out.chunks_exact_mut(n.max(1)).enumerate() {
        let i = first + r;
        for p in 0..p_len {
            let (w0, w1) = (stationary[2 * p * m + i], stationary[(2 * p + 1) * m + i]);
            let x0 = &moving[2 * p * n..(2 * p + 1) * n];
            let x1 = &moving[(2 * p + 1) * n..(2 * p + 2) * n];
            for ((acc, &a), &b) in row.iter_mut().zip(x0).zip(x1) {
                *acc += a * w0 + b * w1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MatmulOrder, matmul};

    /// Hand-worked: K = 3 with products 2^24, 1, −2^24 in ascending order. (0 + 2^24) + 1 rounds
    /// to 2^24 (ties to even), then − 2^24 gives 0; any order that adds 1 last gives 1.
    #[test]
    fn ascending_order_rounds_each_partial_sum() {
        let moving = [16777216.0f32, 1.0, -16777216.0];
        let stationary = [1.0f32, 1.0, 1.0];
        let mut out = [f32::NAN];
        matmul(&moving, &stationary, (3, 1, 1), MatmulOrder::Ascending, &mut out);
        assert_eq!(out[0].to_bits(), 0, "got {:#010x}", out[0].to_bits());
    }

    /// Hand-worked: K = 2 with products −1·1, then x·x for x = 1 + 2^-12. x² = 1 + 2^-11 + 2^-24
    /// is a tie in fp32 and rounds (to even) to 1 + 2^-11, so Ascending gives −1 + (1 + 2^-11)
    /// = 2^-11; an FMA adds the exact x² to −1 and keeps 2^-11 + 2^-24 (exact in fp32).
    #[test]
    fn fma_keeps_the_product_unrounded() {
        let x = 1.0 + f32::powi(2.0, -12);
        let moving = [-1.0, x];
        let stationary = [1.0, x];
        let mut out = [0.0f32];
        matmul(&moving, &stationary, (2, 1, 1), MatmulOrder::Ascending, &mut out);
        assert_eq!(out[0], f32::powi(2.0, -11), "got {:#010x}", out[0].to_bits());
        matmul(&moving, &stationary, (2, 1, 1), MatmulOrder::Fma, &mut out);
        assert_eq!(out[0], f32::powi(2.0, -11) + f32::powi(2.0, -24), "got {:#010x}", out[0].to_bits());
    }

    /// A column of −0 products sums to +0 (the chain starts from +0).
    #[test]
    fn negative_zero_products_sum_to_positive_zero() {
        let mut out = [f32::NAN; 2];
        matmul(&[-0.0, 0.0], &[1.0, -1.0], (2, 1, 1), MatmulOrder::Ascending, &mut out[..1]);
        assert_eq!(out[0].to_bits(), 0, "got {:#010x}", out[0].to_bits());
    }

    /// Blocked rows, odd sizes, a split at every row and NaN/−0/Inf operands give exactly each
    /// element's own ascending chain (the slow twin below, written from the definition). Where
    /// two NaNs meet in an add, which one survives is the compiled code's (docs/fidelity.md N20),
    /// so a NaN result is compared as NaN.
    #[test]
    fn blocked_rows_match_the_per_element_chain() {
        let (k, m, n) = (7, 11, 13);
        let val = |s: usize| match s % 17 {
            0 => f32::NAN,
            1 => -0.0,
            2 => f32::INFINITY,
            v => (v as f32 - 8.0) * 0.37,
        };
        let moving: Vec<f32> = (0..k * n).map(|s| val(s * 7 + 3)).collect();
        let stationary: Vec<f32> = (0..k * m).map(|s| val(s * 5 + 1)).collect();
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for kk in 0..k {
                    acc += moving[kk * n + j] * stationary[kk * m + i];
                }
                want[i * n + j] = acc;
            }
        }
        let mut got = vec![f32::NAN; m * n];
        matmul(&moving, &stationary, (k, m, n), MatmulOrder::Ascending, &mut got);
        let b =
            |v: &[f32]| v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect::<Vec<_>>();
        assert_eq!(b(&got), b(&want));
        for split in 1..m {
            let (lo, hi) = got.split_at_mut(split * n);
            super::matmul_rows(&moving, &stationary, (k, m, n), MatmulOrder::Ascending, 0, lo);
            super::matmul_rows(&moving, &stationary, (k, m, n), MatmulOrder::Ascending, split, hi);
            assert_eq!(b(&got), b(&want), "split at {split}");
        }
    }

    /// Hand-worked: one row pair with products 2^24 and 1, then a pair with −2^24 and 0. Pairs
    /// first: (2^24 + 1) rounds to 2^24, then 2^24 − 2^24 = 0; the plain ascending chain gives
    /// the same here, so the second half checks the pair is summed before joining: products
    /// 1 and 2^24 after a first pair of −2^24 and 0: −2^24 + (1 + 2^24 → 2^24) = 0, while
    /// ((−2^24 + 0) + 1) + 2^24 = 1.
    #[test]
    fn double_row_adds_each_pair_first() {
        let big = 16777216.0f32;
        // P = 2 pairs, M = N = 1: moving rows (p,h) = [-2^24, 0, 1, 2^24], stationary all 1.
        let moving = [-big, 0.0, 1.0, big];
        let stationary = [1.0f32; 4];
        let mut out = [f32::NAN];
        super::double_row_rows(&moving, &stationary, (2, 1, 1), 0, &mut out);
        assert_eq!(out[0].to_bits(), 0, "got {:#010x}", out[0].to_bits());
        matmul(&moving, &stationary, (4, 1, 1), MatmulOrder::Ascending, &mut out);
        assert_eq!(out[0], 1.0);
    }

    /// 2 × 3 output from K = 2, worked by hand: rows of `out` are stationary columns.
    #[test]
    fn small_product_by_hand() {
        // moving K×N = [[1, 2, 3], [4, 5, 6]], stationary K×M = [[1, 10], [2, 20]].
        let moving = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let stationary = [1.0, 10.0, 2.0, 20.0];
        let mut out = [0.0f32; 6];
        matmul(&moving, &stationary, (2, 2, 3), MatmulOrder::Ascending, &mut out);
        // out[0, j] = 1·m0j + 2·m1j = [9, 12, 15]; out[1, j] = 10·m0j + 20·m1j = [90, 120, 150].
        assert_eq!(out, [9.0, 12.0, 15.0, 90.0, 120.0, 150.0]);
    }
}
