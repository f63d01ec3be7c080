//! The buffer bytes an access pattern touches, as contiguous spans in AP order: what a tracker of
//! written bytes marks and checks (the simulator's uninitialised-read checker, docs/fidelity.md
//! B10) without walking element by element where the pattern is contiguous.

use crate::{ApError, Layout, Pattern};
use std::ops::Range;

/// Calls `f(k, bytes)` for each span of consecutive buffer bytes the pattern touches, in AP
/// order: `k` is the AP-order index of the span's first element, `bytes` the buffer range its
/// elements fill. A contiguous run is cut where it crosses a partition row (rows need not be
/// adjacent in the buffer); a strided run gives one span per element. Stops when `f` returns
/// false. An element outside the layout is [`ApError::OutOfBounds`] (check bounds first to name
/// the dimension).
pub fn for_each_span(
    layout: &Layout,
    p: &Pattern<'_>,
    mut f: impl FnMut(u64, Range<usize>) -> bool,
) -> Result<(), ApError> {
    let size = p.elem_size.max(1);
    let pitch = layout.pitch(size).max(1);
    let linear = layout.is_linear(size);
    let oob =
        |e: i64| ApError::OutOfBounds { dim: None, index: 0, element: e, capacity: layout.capacity(size) };
    let mut k = 0u64;
    for run in p.runs()? {
        if run.stride != 1 {
            let mut e = run.start;
            for _ in 0..run.len {
                let a = layout.address(e, size).ok_or_else(|| oob(e))?;
                if !f(k, a..a + size) {
                    return Ok(());
                }
                k += 1;
                e += run.stride;
            }
            continue;
        }
        let (mut e, end) = (run.start, run.start + run.len as i64);
        while e < end {
            // The rest of the run, or of the partition row it starts in.
            let row_end = if linear { end } else { end.min((e.div_euclid(pitch as i64) + 1) * pitch as i64) };
            let n = (row_end - e) as usize;
            let a = layout.address(e, size).ok_or_else(|| oob(e))?;
            layout.address(row_end - 1, size).ok_or_else(|| oob(row_end - 1))?;
            if !f(k, a..a + n * size) {
                return Ok(());
            }
            k += n as u64;
            e = row_end;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bir_ir::ApPair;

    fn spans(layout: &Layout, pairs: &[(i64, i64)], offset: i64, size: usize) -> Vec<(u64, Range<usize>)> {
        let pairs: Vec<ApPair> = pairs.iter().map(|&(s, n)| ApPair::new(s, n)).collect();
        let p = Pattern { pairs: &pairs, offset, elem_size: size };
        let mut out = Vec::new();
        for_each_span(layout, &p, |k, r| {
            out.push((k, r));
            true
        })
        .unwrap();
        out
    }

    /// Worked by hand: 4 partitions of 16 fp32 in an arena whose rows are 256 bytes apart.
    #[test]
    fn rows_are_cut_at_partition_boundaries() {
        let arena = Layout::partitioned(100, 4, 64, 256);
        // Two whole rows as one AP run [[16, 2], [1, 16]] fuse into one run of 32 elements: two
        // spans, one per row.
        assert_eq!(spans(&arena, &[(16, 2), (1, 16)], 0, 4), [(0, 100..164), (16, 356..420)]);
        // Columns 2..5 of rows 1 and 2.
        assert_eq!(spans(&arena, &[(16, 2), (1, 3)], 18, 4), [(0, 364..376), (3, 620..632)]);
        // A strided run: one span per element.
        assert_eq!(spans(&arena, &[(16, 1), (2, 3)], 1, 4), [(0, 104..108), (1, 112..116), (2, 120..124)]);
        // A packed private layout is linear: the same two rows are one span.
        let packed = Layout::partitioned(0, 4, 64, 64);
        assert_eq!(spans(&packed, &[(16, 2), (1, 16)], 0, 4), [(0, 0..128)]);
    }

    #[test]
    fn an_element_outside_the_layout_is_an_error() {
        let flat = Layout::flat(0, 16);
        let pairs = [ApPair::new(1, 5)];
        let p = Pattern { pairs: &pairs, offset: 0, elem_size: 4 };
        assert!(for_each_span(&flat, &p, |_, _| true).is_err());
    }
}
