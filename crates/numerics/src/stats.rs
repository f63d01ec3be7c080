//! Batch-norm statistics: BNStats' per-chunk (count, mean, variance·count) of the even- and
//! odd-indexed elements and BNStatsAggregate's merge into a mean and a population variance (AWS
//! `nki.isa.bn_stats` / `bn_aggr`; docs/fidelity.md Q3, Q4). Everything is fp32, one rounding per
//! operation, no fused multiply-add, in the order each function states (the order is observable
//! and no source gives the hardware's: ours is the two-pass form).

/// BNStats' chunk: each run of this many consecutive elements of a row gets its own six values
/// (AWS `nl.tile_size.bn_stats_fmax`).
pub const BN_CHUNK: usize = 512;

/// The output elements BNStats writes for a row of `n` elements: six per chunk.
pub fn bn_stats_len(n: usize) -> usize {
    6 * n.div_ceil(BN_CHUNK)
}

/// BNStats of one row into `out` (`bn_stats_len(row.len())` values): per chunk
/// `[count_e, mean_e, m2_e, count_o, mean_o, m2_o]`, "e" the chunk's elements at even
/// positions, "o" at odd ones. Each half: `sum` from 0 adding the elements in order, `mean = sum
/// / count`, then `m2` from 0 adding each `(x − mean)²` (the square rounded, then the sum); a
/// half without elements gets mean 0 and m2 0.
///
/// Whole chunks run eight at a time, their sums interleaved (each half's sum is still its own
/// serial chain in element order, so the values are those of one chunk at a time).
pub fn bn_stats(row: &[f32], out: &mut [f32]) {
    let whole = row.len() / (GROUP * BN_CHUNK) * GROUP;
    let (grouped, rest) = row.split_at(whole * BN_CHUNK);
    let (out_grouped, out_rest) = out.split_at_mut((6 * whole).min(out.len()));
    for (g, o) in grouped.chunks_exact(GROUP * BN_CHUNK).zip(out_grouped.chunks_exact_mut(6 * GROUP)) {
        group_stats(g, o);
    }
    for (chunk, o) in rest.chunks(BN_CHUNK).zip(out_rest.chunks_exact_mut(6)) {
        o.copy_from_slice(&chunk_stats(chunk));
    }
}

/// Whole chunks [`bn_stats`] runs together: 2·GROUP independent sums in flight.
const GROUP: usize = 8;

/// [`chunk_stats`] of GROUP whole chunks at once (`x` holds GROUP·512 elements, `out` GROUP·6).
fn group_stats(x: &[f32], out: &mut [f32]) {
    const HALF: usize = BN_CHUNK / 2;
    let count = HALF as f32;
    let chunks: [&[f32]; GROUP] = std::array::from_fn(|c| &x[c * BN_CHUNK..(c + 1) * BN_CHUNK]);
    let (mut se, mut so) = ([0.0f32; GROUP], [0.0f32; GROUP]);
    for j in 0..HALF {
        for c in 0..GROUP {
            se[c] += chunks[c][2 * j];
            so[c] += chunks[c][2 * j + 1];
        }
    }
    let (me, mo) = (se.map(|s| s / count), so.map(|s| s / count));
    let (mut qe, mut qo) = ([0.0f32; GROUP], [0.0f32; GROUP]);
    for j in 0..HALF {
        for c in 0..GROUP {
            let (de, d_o) = (chunks[c][2 * j] - me[c], chunks[c][2 * j + 1] - mo[c]);
            qe[c] += de * de;
            qo[c] += d_o * d_o;
        }
    }
    for (c, o) in out.chunks_exact_mut(6).enumerate() {
        o.copy_from_slice(&[count, me[c], qe[c], count, mo[c], qo[c]]);
    }
}

/// The six values of one chunk; the two halves' serial sums run interleaved (two independent
/// chains), each in element order.
fn chunk_stats(x: &[f32]) -> [f32; 6] {
    let (ne, no) = (x.len().div_ceil(2), x.len() / 2);
    let (mut se, mut so) = (0.0f32, 0.0f32);
    let pairs = x.chunks_exact(2);
    let last = pairs.remainder().first().copied();
    for p in pairs.clone() {
        se += p[0];
        so += p[1];
    }
    if let Some(l) = last {
        se += l;
    }
    let (me, mo) = (mean(se, ne), mean(so, no));
    let (mut qe, mut qo) = (0.0f32, 0.0f32);
    for p in pairs {
        let (de, d_o) = (p[0] - me, p[1] - mo);
        qe += de * de;
        qo += d_o * d_o;
    }
    if let Some(l) = last {
        let d = l - me;
        qe += d * d;
    }
    let m2 = |q: f32, n: usize| if n == 0 { 0.0 } else { q };
    [ne as f32, me, m2(qe, ne), no as f32, mo, m2(qo, no)]
}

fn mean(sum: f32, n: usize) -> f32 {
    if n == 0 { 0.0 } else { sum / n as f32 }
}

/// BNStatsAggregate of one row of `(count, mean, m2)` triples (a trailing partial triple is the
/// caller's to reject): `[mean, variance]`. Triples whose count is 0 are skipped. In order:
/// `N = Σ count`; `mean = (Σ count·mean_i) / N`; `var = (Σ (m2_i + count·(d·d))) / N` with
/// `d = mean_i − mean`, each product and sum rounded in the order written. No live triple gives
/// `[0, 0]`.
pub fn bn_aggr(triples: &[f32]) -> [f32; 2] {
    let live = || triples.chunks_exact(3).filter(|t| t[0] != 0.0);
    let n = live().fold(0.0f32, |n, t| n + t[0]);
    if n == 0.0 {
        return [0.0, 0.0];
    }
    let mean = live().fold(0.0f32, |s, t| s + t[0] * t[1]) / n;
    let q = live().fold(0.0f32, |q, t| {
        let d = t[1] - mean;
        q + (t[2] + t[0] * (d * d))
    });
    [mean, q / n]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: [1, 2, 3, 4, 5] → evens {1, 3, 5}: count 3, mean 3, m2 4 + 0 + 4 = 8;
    /// odds {2, 4}: count 2, mean 3, m2 1 + 1 = 2.
    #[test]
    fn one_chunk_by_hand() {
        let mut out = [0.0; 6];
        bn_stats(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut out);
        assert_eq!(out, [3.0, 3.0, 8.0, 2.0, 3.0, 2.0]);
    }

    /// A one-element chunk (the 513th element) has an empty odd half: count 0, mean 0, m2 0.
    #[test]
    fn a_second_chunk_of_one_element() {
        let row: Vec<f32> = (0..513).map(|k| k as f32).collect();
        let mut out = [f32::NAN; 12];
        bn_stats(&row, &mut out);
        assert_eq!(bn_stats_len(513), 12);
        assert_eq!(&out[6..], &[1.0, 512.0, 0.0, 0.0, 0.0, 0.0]);
        // First chunk: evens 0, 2, …, 510 (256 values, mean 255), odds 1, …, 511 (mean 256).
        assert_eq!((out[0], out[1], out[3], out[4]), (256.0, 255.0, 256.0, 256.0));
    }

    /// The aggregate of the hand example's two halves: N 5, mean (9 + 6) / 5 = 3,
    /// var (8 + 3·0 + 2 + 2·0) / 5 = 2 (= np.var([1, 2, 3, 4, 5])).
    #[test]
    fn aggregate_by_hand() {
        assert_eq!(bn_aggr(&[3.0, 3.0, 8.0, 2.0, 3.0, 2.0]), [3.0, 2.0]);
        // Differing means: {0, 2} (count 2, mean 1, m2 2) and {10} (count 1, mean 10, m2 0):
        // mean 12 / 3 = 4; var (2 + 2·9 + 0 + 1·36) / 3 = 56 / 3.
        assert_eq!(bn_aggr(&[2.0, 1.0, 2.0, 1.0, 10.0, 0.0]), [4.0, 56.0f32 / 3.0]);
        // Empty triples are skipped (their mean would otherwise count); none at all gives 0, 0.
        assert_eq!(bn_aggr(&[0.0, 99.0, 5.0, 3.0, 3.0, 8.0, 2.0, 3.0, 2.0]), [3.0, 2.0]);
        assert_eq!(bn_aggr(&[0.0, 1.0, 1.0]), [0.0, 0.0]);
    }

    /// The grouped path (whole chunks eight at a time) against the one-chunk path, chunk by
    /// chunk, bit for bit: rows of 1 to 9 groups plus odd tails, values spanning many binades,
    /// NaN, ±0 and infinities among them.
    #[test]
    fn grouped_chunks_match_one_chunk_at_a_time() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let e = (state >> 40) % 40;
            let v = ((state >> 8) as u32 as f32 / u32::MAX as f32 - 0.5) * (1u64 << e) as f32;
            match state % 997 {
                0 => f32::NAN,
                1 => -0.0,
                2 => f32::INFINITY,
                _ => v,
            }
        };
        for n in [512 * 8, 512 * 8 + 1, 512 * 9 + 300, 512 * 16, 512 * 17 + 511, 512 * 72 + 7] {
            let row: Vec<f32> = (0..n).map(|_| next()).collect();
            let mut fast = vec![0.0f32; bn_stats_len(n)];
            bn_stats(&row, &mut fast);
            let slow: Vec<f32> = row.chunks(BN_CHUNK).flat_map(chunk_stats).collect();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&slow), "n = {n}");
        }
    }

    /// The serial order is observable: 2^24 + 1 + 1 summed in order stays 2^24 in fp32.
    #[test]
    fn the_sum_is_serial_in_fp32() {
        let mut out = [0.0; 6];
        bn_stats(&[16_777_216.0, 0.0, 1.0, 0.0, 1.0, 0.0], &mut out);
        assert_eq!(out[1], 16_777_216.0f32 / 3.0);
    }
}
