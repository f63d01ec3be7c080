//! GetSequenceBounds' rule (AWS `nki.isa.sequence_bounds` and its test's
//! `compute_sequence_bounds`; docs/fidelity.md Q1): for each element of a row of segment ids,
//! the index where its run of equal ids starts and the index one past where it ends; id 0 is
//! padding, whose start is the row length n and whose end is −1. [`nonzero`]: NonzeroWithCount's
//! indices of the nonzero elements (AWS `nki.isa.nonzero_with_count`; fidelity Q8).

/// Writes each element's `[start, end)` run bounds of `ids` into `starts` and `ends` (all three
/// the same length), as fp32: the forward sweep for starts, the backward sweep for ends, ids
/// compared as fp32 values (so −0 equals 0 and is padding; a NaN id equals nothing, not even
/// its neighbour, and is a run of its own).
pub fn bounds(ids: &[f32], starts: &mut [f32], ends: &mut [f32]) {
    let n = ids.len();
    for i in 0..n {
        starts[i] = if ids[i] == 0.0 {
            n as f32
        } else if i > 0 && ids[i] == ids[i - 1] {
            starts[i - 1]
        } else {
            i as f32
        };
    }
    for i in (0..n).rev() {
        ends[i] = if ids[i] == 0.0 {
            -1.0
        } else if i + 1 < n && ids[i] == ids[i + 1] {
            ends[i + 1]
        } else {
            (i + 1) as f32
        };
    }
}

/// NonzeroWithCount of one row into `out` (`row.len() + 1` values): the positions of the nonzero
/// elements (`x != 0` as fp32: NaN is nonzero, −0 is not) plus `offset` (wrapping), in order,
/// then `padding` up to `row.len()` values, then the count of nonzero elements.
pub fn nonzero(row: &[f32], offset: i32, padding: i32, out: &mut [i32]) {
    let mut n = 0;
    for (j, _) in row.iter().enumerate().filter(|(_, x)| **x != 0.0) {
        out[n] = (j as i32).wrapping_add(offset);
        n += 1;
    }
    out[n..row.len()].fill(padding);
    out[row.len()] = n as i32;
}

#[cfg(test)]
mod tests {
    /// AWS's documented example: [0, 1, 1, 0, 0, 1, 0, 0] with offset 16 and padding −1 →
    /// [17, 18, 21, −1, −1, −1, −1, −1, 3].
    #[test]
    fn the_documented_nonzero_example() {
        let mut out = [0; 9];
        super::nonzero(&[0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0], 16, -1, &mut out);
        assert_eq!(out, [17, 18, 21, -1, -1, -1, -1, -1, 3]);
        let mut out = [0; 4];
        super::nonzero(&[-0.0, f32::NAN, 0.0], 0, 7, &mut out);
        assert_eq!(out, [1, 7, 7, 1]);
    }

    /// AWS's documented example: ids [0, 1, 1, 2, 2, 2, 0, 3, 3] give starts
    /// [9, 1, 1, 3, 3, 3, 9, 7, 7] and ends [-1, 3, 3, 6, 6, 6, -1, 9, 9].
    #[test]
    fn the_documented_example() {
        let ids = [0.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.0, 3.0, 3.0];
        let (mut s, mut e) = ([0.0; 9], [0.0; 9]);
        super::bounds(&ids, &mut s, &mut e);
        assert_eq!(s, [9.0, 1.0, 1.0, 3.0, 3.0, 3.0, 9.0, 7.0, 7.0]);
        assert_eq!(e, [-1.0, 3.0, 3.0, 6.0, 6.0, 6.0, -1.0, 9.0, 9.0]);
    }
}
