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
//! A [`Product`] sums in register blocks of 4 output rows × 8 columns, each element's whole
//! chain in a register, the compiler vectorising across the columns: every output element sees
//! exactly its own ascending chain, whatever the block or thread it falls in.

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
/// hold at least those sizes; a caller error panics on the slice bounds rather than reading
/// past them.
pub fn matmul(
    moving: &[f32],
    stationary: &[f32],
    dims: (usize, usize, usize),
    order: MatmulOrder,
    out: &mut [f32],
) {
    let mut scratch = Scratch::default();
    Product::new(moving, stationary, dims, Form::Plain(order), &mut scratch).rows(0, out);
}

/// How a [`Product`] sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// One product a step, in the given order.
    Plain(MatmulOrder),
    /// The double-row form (fp8 `perf_mode` DoubleRow, engines.md §1.2; docs/fidelity.md M8):
    /// the K rows are P pairs `(p, h)`; each output element adds, for p = 0, 1, …, P−1
    /// ascending from +0, the fp32 sum of its pair's two products
    /// `moving[(p,0), n]·stationary[(p,0), m] + moving[(p,1), n]·stationary[(p,1), m]` (each
    /// processing element multiplies two pairs and adds them before passing the sum on).
    DoubleRow,
}

/// The buffers a [`Product`] rearranges its operands into, reused across products.
#[derive(Debug, Default)]
pub struct Scratch {
    panels: Vec<f32>,
    blocks: Vec<f32>,
}

impl Scratch {
    /// Scratch in the given buffers (a caller that meters memory reserves
    /// [`Scratch::sizes`] in them first).
    pub fn with(panels: Vec<f32>, blocks: Vec<f32>) -> Scratch {
        Scratch { panels, blocks }
    }

    /// The buffers back (for a caller's pool).
    pub fn into_parts(self) -> (Vec<f32>, Vec<f32>) {
        (self.panels, self.blocks)
    }

    /// The elements [`Product::new`] puts in each buffer for a product of `dims` (K, M, N).
    pub fn sizes((k, m, n): (usize, usize, usize)) -> (usize, usize) {
        (k * (n - n % COLS), k * (m - m % ROWS))
    }
}

/// One product `out[i, j] = Σ_k moving[k, j] · stationary[k, i]` (`moving` K × N, `stationary`
/// K × M, row-major; `dims` = (K, M, N)), its operands rearranged for register blocks: made
/// once, then its output rows computed in any pieces ([`Product::rows`], e.g. one per thread;
/// every element's chain is the same either way).
///
/// The output goes in blocks of 4 rows × 8 columns, each element's whole chain summed in a
/// register before it is stored, k ascending, so every element sees exactly its own chain. For
/// that the moving operand is copied into panels of 8 columns (a panel's K rows one after
/// another) and the stationary one into blocks of 4 rows likewise, so the inner loop reads both
/// in order; edge rows and columns read the operands as given, one at a time.
#[derive(Debug)]
pub struct Product<'a> {
    moving: &'a [f32],
    stationary: &'a [f32],
    /// `moving`'s panels: for each 8 columns, K rows of 8.
    panels: &'a [f32],
    /// `stationary`'s blocks: for each 4 output rows, K rows of 4.
    blocks: &'a [f32],
    k: usize,
    m: usize,
    n: usize,
    form: Form,
}

/// Output columns a register block spans (two 4-lane vectors).
const COLS: usize = 8;
/// Output rows a register block spans.
const ROWS: usize = 4;

impl<'a> Product<'a> {
    /// Rearranges the operands into `scratch`. The slices must hold at least K × N and K × M
    /// elements (K even for DoubleRow); a caller error panics on the slice bounds rather than
    /// reading past them.
    pub fn new(
        moving: &'a [f32],
        stationary: &'a [f32],
        (k, m, n): (usize, usize, usize),
        form: Form,
        scratch: &'a mut Scratch,
    ) -> Product<'a> {
        let (moving, stationary) = (&moving[..k * n], &stationary[..k * m]);
        let Scratch { panels, blocks } = scratch;
        panels.clear();
        blocks.clear();
        if n > 0 && m > 0 {
            for j in (0..n - n % COLS).step_by(COLS) {
                moving.chunks_exact(n).for_each(|row| panels.extend_from_slice(&row[j..j + COLS]));
            }
            for i in (0..m - m % ROWS).step_by(ROWS) {
                stationary.chunks_exact(m).for_each(|row| blocks.extend_from_slice(&row[i..i + ROWS]));
            }
        }
        Product { moving, stationary, panels, blocks, k, m, n, form }
    }

    /// Output rows `first..first + out.len() / N` into `out`.
    pub fn rows(&self, first: usize, out: &mut [f32]) {
        match self.form {
            Form::Plain(MatmulOrder::Ascending) => self.rows_in::<1, false>(first, out),
            Form::Plain(MatmulOrder::Fma) => self.rows_in::<1, true>(first, out),
            Form::DoubleRow => self.rows_in::<2, false>(first, out),
        }
    }

    /// [`Product::rows`] in steps of `S` operand rows (S = 2: DoubleRow's pairs), through FMAs
    /// when `FMA` (S = 1 only): whole blocks of 4 rows where they fit, else one row at a time.
    fn rows_in<const S: usize, const FMA: bool>(&self, first: usize, out: &mut [f32]) {
        let n = self.n;
        if n == 0 {
            return;
        }
        let blocked = self.m - self.m % ROWS;
        let mut i = first;
        let mut rest = out;
        while rest.len() >= n {
            let take = if i.is_multiple_of(ROWS) && i + ROWS <= blocked && rest.len() >= ROWS * n {
                ROWS
            } else {
                1
            };
            let (here, tail) = rest.split_at_mut(take * n);
            if take == ROWS {
                self.row_block::<ROWS, S, FMA>(i, here);
            } else {
                self.row_block::<1, S, FMA>(i, here);
            }
            rest = tail;
            i += take;
        }
    }

    /// Output rows `i..i + R` (R = 4: a whole block of the stationary's; R = 1: any row) into
    /// `out`: 8 columns at a time from the panels, then the edge columns one at a time.
    #[inline(always)]
    fn row_block<const R: usize, const S: usize, const FMA: bool>(&self, i: usize, out: &mut [f32]) {
        let (k, n) = (self.k, self.n);
        let block = match self.blocks.get((i / ROWS) * k * ROWS..) {
            Some(b) if R == ROWS => Some(&b[..k * ROWS]),
            _ => None,
        };
        for (p, panel) in self.panels.chunks_exact((k * COLS).max(1)).enumerate() {
            let j = p * COLS;
            match block {
                Some(block) => {
                    let acc = panel_block::<S, FMA>(panel, block);
                    for (r, a) in acc.iter().enumerate() {
                        out[r * n + j..][..COLS].copy_from_slice(a);
                    }
                }
                None => {
                    for r in 0..R {
                        for c in 0..COLS {
                            out[r * n + j + c] = self.element::<S, FMA>(i + r, j + c);
                        }
                    }
                }
            }
        }
        for j in n - n % COLS..n {
            for r in 0..R {
                out[r * n + j] = self.element::<S, FMA>(i + r, j);
            }
        }
    }

    /// One output element's chain, read from the operands as given (the edges).
    fn element<const S: usize, const FMA: bool>(&self, i: usize, j: usize) -> f32 {
        let (m, n) = (self.m, self.n);
        let xs = self.moving.chunks_exact(S * n);
        let ws = self.stationary.chunks_exact(S * m);
        xs.zip(ws).fold(0.0, |acc, (x, w)| step::<S, FMA>(acc, |h| (x[h * n + j], w[h * m + i])))
    }
}

/// One step of an element's chain: `acc + x₀·w₀` (an FMA when `FMA`), or for S = 2
/// `acc + (x₀·w₀ + x₁·w₁)`; `xw(h)` gives the step's h-th operand pair.
#[inline(always)]
fn step<const S: usize, const FMA: bool>(acc: f32, xw: impl Fn(usize) -> (f32, f32)) -> f32 {
    let (x0, w0) = xw(0);
    if S == 1 {
        if FMA { x0.mul_add(w0, acc) } else { acc + x0 * w0 }
    } else {
        let (x1, w1) = xw(S - 1);
        acc + (x0 * w0 + x1 * w1)
    }
}

/// A 4 × 8 block of output elements from a panel (K rows of 8 moving values) and a block (K rows
/// of 4 stationary values), each element's chain from +0 in a register.
#[inline(always)]
fn panel_block<const S: usize, const FMA: bool>(panel: &[f32], block: &[f32]) -> [[f32; COLS]; ROWS] {
    let mut acc = [[0.0f32; COLS]; ROWS];
    for (x, w) in panel.chunks_exact(S * COLS).zip(block.chunks_exact(S * ROWS)) {
        for (r, acc) in acc.iter_mut().enumerate() {
            for (c, acc) in acc.iter_mut().enumerate() {
                *acc = step::<S, FMA>(*acc, |h| (x[h * COLS + c], w[h * ROWS + r]));
            }
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::{Form, MatmulOrder, Product, Scratch, matmul};

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

    /// Register blocks, edge rows and columns, a split at every row and NaN/−0/Inf operands give
    /// exactly each element's own chain (the slow twin below, written from the definition), in
    /// every form. Where two NaNs meet in an add, which one survives is the compiled code's
    /// (docs/fidelity.md N20), so a NaN result is compared as NaN.
    #[test]
    fn blocks_match_the_per_element_chain() {
        let val = |s: usize| match s % 17 {
            0 => f32::NAN,
            1 => -0.0,
            2 => f32::INFINITY,
            v => (v as f32 - 8.0) * 0.37,
        };
        let b =
            |v: &[f32]| v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect::<Vec<_>>();
        // (K, M, N): blocks with edges on both sides, exact blocks, fewer than one block.
        for (k, m, n) in [(7, 11, 13), (6, 8, 16), (4, 3, 5), (2, 13, 8), (1, 4, 23)] {
            let moving: Vec<f32> = (0..k * n).map(|s| val(s * 7 + 3)).collect();
            let stationary: Vec<f32> = (0..k * m).map(|s| val(s * 5 + 1)).collect();
            let forms = [Form::Plain(MatmulOrder::Ascending), Form::Plain(MatmulOrder::Fma), Form::DoubleRow];
            for form in forms {
                if form == Form::DoubleRow && k % 2 == 1 {
                    continue;
                }
                let mut want = vec![0.0f32; m * n];
                for i in 0..m {
                    for j in 0..n {
                        let (x, w) = (|kk: usize| moving[kk * n + j], |kk: usize| stationary[kk * m + i]);
                        let mut acc = 0.0f32;
                        match form {
                            Form::Plain(MatmulOrder::Ascending) => (0..k).for_each(|kk| acc += x(kk) * w(kk)),
                            Form::Plain(MatmulOrder::Fma) => {
                                (0..k).for_each(|kk| acc = x(kk).mul_add(w(kk), acc))
                            }
                            Form::DoubleRow => (0..k / 2)
                                .for_each(|p| acc += x(2 * p) * w(2 * p) + x(2 * p + 1) * w(2 * p + 1)),
                        }
                        want[i * n + j] = acc;
                    }
                }
                let mut scratch = Scratch::default();
                let product = Product::new(&moving, &stationary, (k, m, n), form, &mut scratch);
                let mut got = vec![f32::NAN; m * n];
                product.rows(0, &mut got);
                assert_eq!(b(&got), b(&want), "{form:?} {k}x{m}x{n}");
                for split in 1..m {
                    let mut got = vec![f32::NAN; m * n];
                    let (lo, hi) = got.split_at_mut(split * n);
                    product.rows(0, lo);
                    product.rows(split, hi);
                    assert_eq!(b(&got), b(&want), "{form:?} {k}x{m}x{n} split at {split}");
                }
            }
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
        let mut scratch = Scratch::default();
        Product::new(&moving, &stationary, (4, 1, 1), Form::DoubleRow, &mut scratch).rows(0, &mut out);
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
