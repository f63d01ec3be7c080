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
    (k_len, m, n): (usize, usize, usize),
    order: MatmulOrder,
    out: &mut [f32],
) {
    let moving = &moving[..k_len * n];
    let stationary = &stationary[..k_len * m];
    for (i, row) in out[..m * n].chunks_exact_mut(n.max(1)).enumerate() {
        row.fill(0.0);
        for k in 0..k_len {
            let w = stationary[k * m + i];
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
