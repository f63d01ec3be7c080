//! The VectorE's top-8 search: Max's eight largest values, MaxIndex's first-occurrence indices and
//! MatchReplace's pairing of values with positions (AWS `nki.isa.max8`, `nc_find_index8`,
//! `nc_match_replace8`; re-facts §7 "Max/MaxIndex/MatchReplace"; docs/fidelity.md Q5–Q7). Values
//! are compared as fp32: `==` for matches (−0 matches +0, NaN matches nothing), strict `>` for
//! the order.

/// The eight largest values of `row` (at least 8 elements), descending: an 8-slot insertion sort
/// with strict `>` (re-facts §7). Each element goes before the first slot it is greater than (or
/// after the last filled one), the ninth falls off; so among equal values the earliest element
/// comes first, and a NaN, greater than nothing, lands in the first free slot and stays there
/// (values after it insert after it) until pushed off the end.
pub fn max8(row: &[f32]) -> [f32; 8] {
    let mut top = [0.0f32; 8];
    let mut len = 0;
    for &x in row {
        // The common case: not above the smallest of a full list (NaN-free at its end).
        if len == 8 && x <= top[7] {
            continue;
        }
        let p = top[..len].iter().position(|&t| x > t).unwrap_or(len);
        if p < 8 {
            let end = len.min(7);
            top.copy_within(p..end, p + 1);
            top[p] = x;
            len = (len + 1).min(8);
        }
    }
    top
}

/// For each of `vals` in order, the position of the first element of `row` equal to it that no
/// earlier value took (so duplicate values take successive matches, ascending); `None` when
/// there is none (MaxIndex: nc_find_index8).
pub fn find_index8(row: &[f32], vals: &[f32; 8]) -> [Option<usize>; 8] {
    let mut out = [None; 8];
    for k in 0..8 {
        out[k] = first_free(row, vals[k], &out);
    }
    out
}

/// As [`find_index8`] but taking `vals` in reverse order (`k = 7, 6, …, 0`), as AWS's
/// nc_match_replace8 documents: among duplicate values the highest slot gets the first match.
pub fn match_index8(row: &[f32], vals: &[f32; 8]) -> [Option<usize>; 8] {
    let mut out = [None; 8];
    for k in (0..8).rev() {
        out[k] = first_free(row, vals[k], &out);
    }
    out
}

/// The first position of `row` holding `v` that is not in `taken`.
fn first_free(row: &[f32], v: f32, taken: &[Option<usize>; 8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let j = from + row.get(from..)?.iter().position(|&x| x == v)?;
        if !taken.contains(&Some(j)) {
            return Some(j);
        }
        from = j + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max8_by_hand() {
        let row = [3.0, 9.0, 1.0, 9.0, 4.0, 7.0, 2.0, 8.0, 5.0, 6.0, 0.0];
        assert_eq!(max8(&row), [9.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0]);
        // Equal values keep their order: −0 before +0 when −0 comes first.
        let z = max8(&[-0.0, 0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]);
        assert_eq!(z.map(f32::to_bits)[..2], [0x8000_0000, 0]);
        // A NaN stays where it lands: first in the list, nothing is greater than it, so the
        // later values go after it; a NaN after a full list is never taken.
        let n = max8(&[f32::NAN, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -1.0, f32::NAN]);
        assert!(n[0].is_nan());
        assert_eq!(n[1..], [7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
        // A ninth value above the list's smallest pushes the NaN out.
        let n = max8(&[1.0, f32::NAN, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, f32::NAN]);
        assert_eq!(n, [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    }

    /// The fast rejection (`x <= top[7]` on a full list) against the plain insertion rule it
    /// shortcuts, on rows of odd lengths full of ties, ±0, NaN (first, inside, last) and ±Inf.
    #[test]
    fn the_fast_rejection_matches_plain_insertion() {
        fn plain(row: &[f32]) -> Vec<u32> {
            let mut top: Vec<f32> = Vec::new();
            for &x in row {
                let p = top.iter().position(|&t| x > t).unwrap_or(top.len());
                top.insert(p, x);
                top.truncate(8);
            }
            top.iter().map(|v| v.to_bits()).collect()
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for n in [8, 9, 13, 31, 100, 257, 1001, 16384] {
            let row: Vec<f32> = (0..n)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    match (state >> 33) % 23 {
                        0 => f32::NAN,
                        1 => -0.0,
                        2 => 0.0,
                        3 => f32::INFINITY,
                        4 => f32::NEG_INFINITY,
                        r => (r % 7) as f32 - 3.0 + ((state >> 40) % 4) as f32 * 0.25,
                    }
                })
                .collect();
            for r in [row.clone(), [&[f32::NAN], &row[..]].concat(), [&row[..], &[f32::NAN]].concat()] {
                assert_eq!(max8(&r).map(f32::to_bits).to_vec(), plain(&r), "n = {}", r.len());
            }
        }
    }

    /// AWS's nc_match_replace8 example: data [1, 2, 3, 4, 8 ×7], vals [3, 8 ×7] → dst_idx
    /// [2, 10, 9, 8, 7, 6, 5, 4] (reverse pairing); nc_find_index8 pairs them ascending.
    #[test]
    fn the_documented_duplicate_example() {
        let data = [1.0, 2.0, 3.0, 4.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0];
        let vals = [3.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0];
        let m = match_index8(&data, &vals).map(Option::unwrap);
        assert_eq!(m, [2, 10, 9, 8, 7, 6, 5, 4]);
        let f = find_index8(&data, &vals).map(Option::unwrap);
        assert_eq!(f, [2, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn missing_values_and_signed_zero() {
        let data = [0.0, 1.0, f32::NAN, 2.0, 3.0, 4.0, 5.0, 6.0];
        let vals = [-0.0, f32::NAN, 7.0, 1.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(
            find_index8(&data, &vals),
            [Some(0), None, None, Some(1), None, Some(3), Some(4), Some(5)]
        );
    }
}
