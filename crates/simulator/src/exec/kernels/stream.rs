//! StreamShuffle and StreamTranspose, the DVE reorganizers (seed 000 §5.3, CONFIRMED formulas).
//!
//! - StreamShuffle: within each 32-partition block, output partition `blockStart + i` gets
//!   source partition `blockStart + mask[i]` (whole rows), `255` leaves it untouched. All rows are
//!   read first, so an in-place shuffle is safe; written rows go out as runs of consecutive
//!   partitions, one write per run.
//! - StreamTranspose: element `(p, e)` goes to the destination's flat index
//!   `(pLow | eBlk) + outElem · (pBlk | eLow)` — a 32 × 32 partition ⇄ element swap — as one
//!   pass dispatched on element width, one 32 × 32 tile at a time: within a tile the index is
//!   `pLow + eBlk + outElem · (pBlk + eLow)`, a plain transpose into destination rows.
//!
//! Neither casts (a dtype change is a validation error; the kernels fault too).

use crate::exec::kit::facts::{Fact, Facts, Verdict};
use crate::exec::kit::transpose::{stream_transpose_index, tile_edge, tile_transpose};
use crate::exec::kit::{Arg, Cx, Parallelism, Res, Written, facts, fault, fnv1a, sub_ap};
use crate::fault::FaultCause;
use bir_ir::Instruction;
use bir_ir::ops::StreamShuffleFields;

/// The shuffle plan: for each output partition, the source partition or `None` (left as is).
/// A source partition past `src_parts` is an error (`Err(output partition)`).
pub(crate) fn shuffle_plan(
    mask: &[u8],
    out_parts: usize,
    src_parts: usize,
) -> Result<Vec<Option<usize>>, usize> {
    let mut plan = vec![None; out_parts];
    for (p, slot) in plan.iter_mut().enumerate() {
        let (block, i) = (p & !31, p & 31);
        let m = mask.get(i).copied().unwrap_or(255);
        if m == 255 {
            continue;
        }
        let s = block + usize::from(m);
        if usize::from(m) >= 32 || s >= src_parts {
            return Err(p);
        }
        *slot = Some(s);
    }
    Ok(plan)
}

/// The StreamTranspose scatter for elements of `N` bytes, `src` holding `in_part` rows of
/// `in_elem`. `Err(dstIdx)` if an index falls outside `dst` (then `dst` is partly written).
/// Tile by tile: with `p = pBlk + pl`, `e = eBlk + el` (`pl, el < 32`) the index is
/// `pl + eBlk + outElem·(pBlk + el)`, so the tile is a transpose into destination rows
/// `pBlk + el`, columns `eBlk + pl`; the tile's largest index (largest `pl` and `el`) is
/// checked before it is written.
fn scatter<const N: usize>(
    src: &[[u8; N]],
    in_part: usize,
    in_elem: usize,
    out_elem: usize,
    dst: &mut [[u8; N]],
) -> Result<(), usize> {
    if src.len() < in_part * in_elem {
        return Err(0);
    }
    let e = tile_edge(N);
    let mut tmp = vec![[0u8; N]; e * e];
    for p_blk in (0..in_part).step_by(32) {
        let pn = 32.min(in_part - p_blk);
        for e_blk in (0..in_elem).step_by(32) {
            let en = 32.min(in_elem - e_blk);
            let kmax = stream_transpose_index(p_blk + pn - 1, e_blk + en - 1, out_elem);
            if kmax >= dst.len() {
                return Err(kmax);
            }
            // dst[o + el·outElem + pl] = src[so + el + pl·inElem].
            let (so, o) = (p_blk * in_elem + e_blk, e_blk + out_elem * p_blk);
            tile_transpose(src, so, in_elem, en, dst, o, out_elem, pn, (&mut tmp, e));
        }
    }
    Ok(())
}

fn scatter_bytes(
    src: &[u8],
    size: usize,
    in_part: usize,
    in_elem: usize,
    out_elem: usize,
    dst: &mut [u8],
) -> Result<(), usize> {
    fn go<const N: usize>(s: &[u8], ip: usize, ie: usize, oe: usize, d: &mut [u8]) -> Result<(), usize> {
        scatter::<N>(s.as_chunks::<N>().0, ip, ie, oe, d.as_chunks_mut::<N>().0)
    }
    match size {
        1 => go::<1>(src, in_part, in_elem, out_elem, dst),
        2 => go::<2>(src, in_part, in_elem, out_elem, dst),
        4 => go::<4>(src, in_part, in_elem, out_elem, dst),
        _ => go::<8>(src, in_part, in_elem, out_elem, dst),
    }
}

/// StreamTranspose straight between row-addressed buffers when the swap covers the destination
/// whole: `rows` partitions of `elems` elements on both sides, both multiples of 32, so
/// destination row `pBlk + eLow`, column `eBlk + pLow` gets source `(pBlk + pLow, eBlk + eLow)`
/// (the tile form of [`stream_transpose_index`]). `srows`/`drows` are each row's byte range.
/// The 32-row blocks are independent, so when the destination rows ascend they are split
/// between threads (each block computes what the serial loop would: bit-identical).
fn transpose_rows(
    size: usize,
    (sb, srows): (&[u8], &[std::ops::Range<usize>]),
    (db, drows): (&mut [u8], &[std::ops::Range<usize>]),
    par: Parallelism,
) {
    /// One 32-row block; `db` starts at byte `base` of the destination buffer.
    fn block<const N: usize>(
        sb: &[u8],
        sblk: &[std::ops::Range<usize>],
        (db, base): (&mut [u8], usize),
        dblk: &[std::ops::Range<usize>],
    ) {
        let src: Vec<&[[u8; N]]> =
            sblk.iter().map(|r| sb.get(r.clone()).map_or(&[][..], |b| b.as_chunks::<N>().0)).collect();
        // Tile by tile through a contiguous 32 × 32 buffer: rows of a partitioned buffer sit a
        // power-of-two pitch apart, so reading a tile's column straight from them would keep
        // evicting itself from one cache set. Each row's slice is copied in whole instead,
        // transposed in L1, and written out as whole row slices.
        let tiles = src.first().map_or(0, |r| r.len() / 32);
        let mut tmp = [[[0u8; N]; 32]; 32];
        let mut out = [[[0u8; N]; 32]; 32];
        for e_blk in 0..tiles {
            let cols = e_blk * 32..e_blk * 32 + 32;
            for (t, s) in tmp.iter_mut().zip(&src) {
                if let Some(row) = s.get(cols.clone()) {
                    t.copy_from_slice(row);
                }
            }
            for (el, o) in out.iter_mut().enumerate() {
                for (pl, v) in o.iter_mut().enumerate() {
                    *v = tmp[pl][el];
                }
            }
            for (o, d) in out.iter().zip(dblk) {
                let row = db.get_mut(d.start.wrapping_sub(base)..d.end.wrapping_sub(base));
                if let Some(row) = row.and_then(|r| r.as_chunks_mut::<N>().0.get_mut(cols.clone())) {
                    row.copy_from_slice(o);
                }
            }
        }
    }
    fn go<const N: usize>(
        sb: &[u8],
        srows: &[std::ops::Range<usize>],
        db: &mut [u8],
        drows: &[std::ops::Range<usize>],
        par: Parallelism,
    ) {
        let ascending = drows.windows(2).all(|w| w[0].end <= w[1].start);
        if !ascending || par.threads <= 1 {
            for (sblk, dblk) in srows.chunks_exact(32).zip(drows.chunks_exact(32)) {
                block::<N>(sb, sblk, (&mut *db, 0), dblk);
            }
            return;
        }
        // Cut the destination at each block's first row: disjoint pieces, one per block.
        let mut pieces: Vec<(&mut [u8], usize)> = Vec::new();
        let (mut rest, mut at) = (db, 0usize);
        for dblk in drows.chunks_exact(32).skip(1) {
            let cut = dblk.first().map_or(at, |r| r.start).saturating_sub(at).min(rest.len());
            let (head, tail) = rest.split_at_mut(cut);
            pieces.push((head, at));
            at += cut;
            rest = tail;
        }
        pieces.push((rest, at));
        let blocks = pieces.len();
        let par = Parallelism { grain: 1, ..par };
        let _ = par.chunks(&mut pieces, 1, |first, chunk| {
            for (k, (piece, base)) in chunk.iter_mut().enumerate() {
                let b = first + k;
                if b < blocks {
                    block::<N>(
                        sb,
                        &srows[32 * b..32 * b + 32],
                        (&mut **piece, *base),
                        &drows[32 * b..32 * b + 32],
                    );
                }
            }
            Ok::<(), ()>(())
        });
    }
    match size {
        1 => go::<1>(sb, srows, db, drows, par),
        2 => go::<2>(sb, srows, db, drows, par),
        4 => go::<4>(sb, srows, db, drows, par),
        _ => go::<8>(sb, srows, db, drows, par),
    }
}

/// StreamShuffle / StreamTranspose: the plain rule; a cast between their operands is refused by
/// validation.
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if q.yes(Fact::InOutDiffer) {
        return Verdict::rejected("bir-ir validation: the stream ops do not cast");
    }
    Verdict::runs("")
}

#[cold]
fn no_cast<T>(what: &'static str) -> Res<T> {
    fault(FaultCause::BadField { field: "dtype", why: what })
}

/// StreamShuffle (§5.3).
pub(crate) fn shuffle(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &StreamShuffleFields,
    regions: &mut Written,
) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    if src.ap.dtype != dst.ap.dtype {
        return no_cast("StreamShuffle does not support cast");
    }
    if f.mask.len() != 32 || f.mask.iter().any(|&m| m >= 32 && m != 255) {
        return fault(FaultCause::BadField {
            field: "mask",
            why: "StreamShuffle needs 32 mask entries, each < 32 or 255",
        });
    }
    let ((sp, sf), (dp, df)) = (src.shape()?, dst.shape()?);
    if sf != df {
        return fault(FaultCause::Dims {
            slot: dst.slot,
            why: "StreamShuffle needs equal elements per partition in source and destination",
        });
    }
    let Ok(plan) = shuffle_plan(&f.mask, dp, sp) else {
        return fault(FaultCause::Dims {
            slot: src.slot,
            why: "a StreamShuffle mask entry names a source partition past the source",
        });
    };
    let dt = dst.ap.dtype;
    let row = df * dt.size();
    if shuffle_direct(cx, src, dst, &plan, (sp, dp, df), regions)? {
        return Ok(());
    }
    let mut all = cx.pool.take();
    let mut out = cx.pool.take();
    let r = cx.read(src, dt, &mut all).and_then(|()| {
        let mut p = 0;
        while p < dp {
            if plan[p].is_none() {
                p += 1;
                continue;
            }
            let start = p;
            out.clear();
            crate::alloc::reserve(&mut out, dp.saturating_mul(row))?;
            while let Some(Some(s)) = plan.get(p) {
                out.extend_from_slice(&all[s * row..(s + 1) * row]);
                p += 1;
            }
            let piece = sub_ap(dst.ap, start, p - start);
            cx.write(dst.with(&piece), dt, &out, regions)?;
        }
        Ok(())
    });
    cx.pool.give(all);
    cx.pool.give(out);
    r
}

/// The byte ranges of an AP's first `rows` partition rows when each is one contiguous run of
/// `elems` elements in memory of the AP's own dtype (a 2-level AP with a unit inner step).
fn row_ranges(cx: &Cx<'_>, a: Arg<'_>, rows: usize, elems: usize) -> Option<Vec<std::ops::Range<usize>>> {
    let ap = a.ap;
    if ap.dynamic.is_some() || !cx.uncast(ap) || ap.pairs.len() != 2 || ap.pairs[1].step != 1 || elems == 0 {
        return None;
    }
    let layout = cx.memory.layout(ap.loc);
    let size = ap.dtype.size();
    let pitch = i64::try_from(layout.pitch(size)).ok()?;
    let n = i64::try_from(elems).ok()?;
    (0..rows as i64)
        .map(|r| {
            let e = ap.offset.checked_add(r.checked_mul(ap.pairs[0].step)?)?;
            // The whole row inside one partition row of the location, so it is contiguous.
            if !layout.is_flat() && e.rem_euclid(pitch) + n > pitch {
                return None;
            }
            let start = layout.address(e, size)?;
            layout.address(e + n - 1, size)?;
            Some(start..start + elems * size)
        })
        .collect()
}

/// StreamShuffle row by row straight from the source buffer into a different destination
/// buffer, when both APs' rows are contiguous runs. Returns false when that does not apply.
fn shuffle_direct(
    cx: &mut Cx<'_>,
    src: Arg<'_>,
    dst: Arg<'_>,
    plan: &[Option<usize>],
    (sp, dp, elems): (usize, usize, usize),
    regions: &mut Written,
) -> Res<bool> {
    let (Some(srows), Some(drows)) = (row_ranges(cx, src, sp, elems), row_ranges(cx, dst, dp, elems)) else {
        return Ok(false);
    };
    let cover = |rows: &[std::ops::Range<usize>]| {
        rows.first().map(|f| f.start).unwrap_or(0)..rows.last().map(|l| l.end).unwrap_or(0)
    };
    // The destination is overwritten whole only when every row is written and they abut.
    let whole = plan.iter().all(Option::is_some) && drows.windows(2).all(|w| w[0].end == w[1].start);
    let ts = crate::memory::Touch { range: Some(cover(&srows)), covers: false };
    let td = crate::memory::Touch { range: Some(cover(&drows)), covers: whole };
    let done = cx.memory.with_two((src.ap.loc, &ts), (dst.ap.loc, &td), |sb, _, db, _| {
        for (d, s) in drows.iter().zip(plan) {
            if let Some(s) = s {
                db[d.clone()].copy_from_slice(&sb[srows[*s].clone()]);
            }
        }
    });
    if done.is_none() {
        return Ok(false);
    }
    let memory = &mut cx.memory;
    let bytes: u64 = drows.iter().zip(plan).filter(|(_, s)| s.is_some()).map(|(d, _)| d.len() as u64).sum();
    regions.record_region(
        |h| {
            let (buf, _) = memory.buffer_for(dst.ap.loc, &td);
            drows.iter().zip(plan).filter(|(_, s)| s.is_some()).fold(h, |h, (d, _)| fnv1a(h, &buf[d.clone()]))
        },
        bytes,
    );
    Ok(true)
}

/// StreamTranspose straight from the source buffer into a different destination buffer
/// ([`transpose_rows`]) when both APs are contiguous rows and the swap rewrites the
/// destination whole (equal shapes, multiples of 32). Returns false when that does not apply.
fn transpose_direct(
    cx: &mut Cx<'_>,
    src: Arg<'_>,
    dst: Arg<'_>,
    (ip, ie, dp, oe): (usize, usize, usize, usize),
    regions: &mut Written,
) -> Res<bool> {
    if ip != dp || ie != oe || ip % 32 != 0 || ie % 32 != 0 || ip == 0 {
        return Ok(false);
    }
    let (Some(srows), Some(drows)) = (row_ranges(cx, src, ip, ie), row_ranges(cx, dst, dp, oe)) else {
        return Ok(false);
    };
    let cover = |rows: &[std::ops::Range<usize>]| {
        rows.first().map(|f| f.start).unwrap_or(0)..rows.last().map(|l| l.end).unwrap_or(0)
    };
    let whole = drows.windows(2).all(|w| w[0].end == w[1].start);
    let ts = crate::memory::Touch { range: Some(cover(&srows)), covers: false };
    let td = crate::memory::Touch { range: Some(cover(&drows)), covers: whole };
    let (size, par) = (dst.ap.dtype.size(), cx.options.parallelism);
    let done = cx.memory.with_two((src.ap.loc, &ts), (dst.ap.loc, &td), |sb, _, db, _| {
        transpose_rows(size, (sb, &srows), (db, &drows), par);
    });
    if done.is_none() {
        return Ok(false);
    }
    let memory = &mut cx.memory;
    let bytes: u64 = drows.iter().map(|d| d.len() as u64).sum();
    regions.record_region(
        |h| {
            let (buf, _) = memory.buffer_for(dst.ap.loc, &td);
            drows.iter().fold(h, |h, d| fnv1a(h, &buf[d.clone()]))
        },
        bytes,
    );
    Ok(true)
}

/// StreamTranspose (§5.3).
pub(crate) fn transpose(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    if src.ap.dtype != dst.ap.dtype {
        return no_cast("StreamTranspose does not support cast");
    }
    let dt = dst.ap.dtype;
    let ((ip, ie), (dp, oe)) = (src.shape()?, dst.shape()?);
    if transpose_direct(cx, src, dst, (ip, ie, dp, oe), regions)? {
        return Ok(());
    }
    let (mut a, mut b) = (cx.pool.take(), cx.pool.take());
    let r = cx.read(src, dt, &mut a).and_then(|()| {
        // Elements the transpose does not reach keep their values.
        cx.read(dst, dt, &mut b)?;
        if scatter_bytes(&a, dt.size(), ip, ie, oe, &mut b).is_err() {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "a StreamTranspose destination index falls outside the destination",
            });
        }
        cx.write(dst, dt, &b, regions)
    });
    cx.pool.give(a);
    cx.pool.give(b);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_transpose_index_by_hand() {
        // p = 3, e = 5, outElem 32: (3 | 0) + 32·(0 | 5) = 163 — element (3,5) to (5,3).
        assert_eq!(stream_transpose_index(3, 5, 32), 163);
        // p = 33 (pBlk 32, pLow 1), e = 40 (eBlk 32, eLow 8), outElem 64:
        // (1 | 32) + 64·(32 | 8) = 33 + 64·40 = 2593.
        assert_eq!(stream_transpose_index(33, 40, 64), 2593);
    }

    /// The slow twin: the seed's `dstIdx` formula one element at a time.
    fn scatter_slow(src: &[u32], ip: usize, ie: usize, oe: usize, dst: &mut [u32]) -> Result<(), ()> {
        for p in 0..ip {
            for e in 0..ie {
                *dst.get_mut(stream_transpose_index(p, e, oe)).ok_or(())? = src[p * ie + e];
            }
        }
        Ok(())
    }

    /// The tiled scatter against the twin on partial tiles, every width, and destinations too
    /// small (both must refuse); fails if a tile lands in the wrong rows or columns.
    #[test]
    fn tiled_scatter_matches_the_per_element_twin() {
        let shapes: [(usize, usize, usize); 7] =
            [(2, 3, 2), (32, 32, 32), (33, 70, 70), (70, 33, 40), (128, 65, 65), (5, 40, 64), (64, 64, 63)];
        for (ip, ie, oe) in shapes {
            let src: Vec<u32> = (0..(ip * ie) as u32).map(|x| x.wrapping_mul(2_654_435_761)).collect();
            let n = ip.max(32).div_ceil(32) * 32 * oe.max(ie.div_ceil(32) * 32);
            for len in [n, n / 2] {
                let mut want = vec![7u32; len];
                let ok = scatter_slow(&src, ip, ie, oe, &mut want).is_ok();
                for size in [1usize, 2, 4, 8] {
                    let bytes: Vec<u8> =
                        src.iter().flat_map(|v| u64::from(*v).to_le_bytes()[..size].to_vec()).collect();
                    let mut dst: Vec<u8> =
                        (0..len).flat_map(|_| 7u64.to_le_bytes()[..size].to_vec()).collect();
                    let r = scatter_bytes(&bytes, size, ip, ie, oe, &mut dst);
                    assert_eq!(r.is_ok(), ok, "{ip}x{ie} oe {oe} len {len} size {size}");
                    if ok {
                        let mask = if size >= 4 { u32::MAX } else { (1u32 << (8 * size)) - 1 };
                        let got: Vec<u32> = dst
                            .chunks_exact(size)
                            .map(|c| {
                                let mut w = [0u8; 4];
                                w[..size.min(4)].copy_from_slice(&c[..size.min(4)]);
                                u32::from_le_bytes(w)
                            })
                            .collect();
                        let want: Vec<u32> = want.iter().map(|v| v & mask).collect();
                        assert_eq!(got, want, "{ip}x{ie} oe {oe} len {len} size {size}");
                    }
                }
            }
        }
    }

    /// The row-buffer transpose against the per-element twin, rows at a pitch wider than the
    /// data (as in an SB arena), every width, 32..128 partitions; fails on a misplaced tile.
    #[test]
    fn row_transpose_matches_the_per_element_twin() {
        for (parts, elems) in [(32usize, 32usize), (64, 96), (128, 64), (96, 160)] {
            let src: Vec<u32> = (0..(parts * elems) as u32).map(|x| x.wrapping_mul(2_654_435_761)).collect();
            let mut want = vec![0u32; parts * elems];
            scatter_slow(&src, parts, elems, elems, &mut want).unwrap();
            for size in [1usize, 2, 4, 8] {
                let pitch = elems * size + 24;
                let rows: Vec<_> = (0..parts).map(|p| p * pitch + 8..p * pitch + 8 + elems * size).collect();
                let mut sb = vec![0xEEu8; parts * pitch];
                for (p, r) in rows.iter().enumerate() {
                    for e in 0..elems {
                        let v = u64::from(src[p * elems + e]).to_le_bytes();
                        sb[r.start + e * size..][..size].copy_from_slice(&v[..size]);
                    }
                }
                let mut db = vec![0xEEu8; parts * pitch];
                let threads = 1 + parts % 3;
                transpose_rows(size, (&sb, &rows), (&mut db, &rows), Parallelism { threads, grain: 1 });
                for (p, r) in rows.iter().enumerate() {
                    for e in 0..elems {
                        let v = u64::from(want[p * elems + e]).to_le_bytes();
                        assert_eq!(
                            db[r.start + e * size..][..size],
                            v[..size],
                            "{parts}x{elems} size {size} at ({p}, {e})"
                        );
                    }
                    // Bytes between rows are never touched.
                    assert!(db[r.end..r.end + 16].iter().all(|&b| b == 0xEE));
                }
            }
        }
    }

    #[test]
    fn shuffle_plan_by_hand() {
        let mut mask = [255u8; 32];
        mask[0] = 2;
        mask[1] = 0;
        // 34 output partitions, 34 source: block 0 rows 0 ← 2, 1 ← 0; block 32: 32 ← 34 is past
        // the source (34 partitions) → error at output partition 32.
        assert_eq!(shuffle_plan(&mask, 34, 34), Err(32));
        let plan = shuffle_plan(&mask, 34, 35).unwrap();
        assert_eq!(plan[0], Some(2));
        assert_eq!(plan[1], Some(0));
        assert_eq!(plan[2], None);
        assert_eq!(plan[32], Some(34));
        assert_eq!(plan[33], Some(32));
    }
}
