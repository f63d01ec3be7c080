//! Blocked tile transposes shared by the kernels: DMACopy's 4-level permutations
//! (`dst = numpy.transpose(src, perm)`, re-facts §3; docs/fidelity.md D2), the cache-blocked
//! square tile StreamTranspose scatters through, and StreamTranspose's index map (which
//! TensorScalarPtr's `apply_transpose` follows too). Each has a slow twin in the tests.

use super::Parallelism;

/// StreamTranspose's destination index of source element `(p, e)`.
#[inline(always)]
pub(crate) fn stream_transpose_index(p: usize, e: usize, out_elem: usize) -> usize {
    let (e_blk, e_low, p_blk, p_low) = (e & !31, e & 31, p & !31, p & 31);
    (p_low | e_blk) + out_elem * (p_blk | e_low)
}

/// The canonical axes of `dst = numpy.transpose(src, perm)` for a row-major `src` of `shape`:
/// (num, source stride) per destination axis, outermost first, size-1 axes dropped and
/// destination-adjacent axes that are also source-adjacent merged. `None` when an axis is empty.
fn canonical(shape: [usize; 4], perm: [usize; 4]) -> Option<Vec<(usize, usize)>> {
    let s = [shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1];
    let mut axes: Vec<(usize, usize)> = Vec::with_capacity(4);
    for &p in &perm {
        let (n, st) = (shape[p], s[p]);
        if n == 0 {
            return None;
        }
        if n == 1 {
            continue;
        }
        match axes.last_mut() {
            // The previous (outer) destination axis steps the source by exactly this axis's span.
            Some(last) if last.1 == st * n => *last = (last.0 * n, st),
            _ => axes.push((n, st)),
        }
    }
    Some(axes)
}

/// The edge of the square tile the blocked transpose moves through a local buffer: 128-byte
/// rows (two cache lines) for 2-, 4- and 8-byte elements, 64 bytes for 1-byte ones.
pub(crate) const fn tile_edge(n: usize) -> usize {
    let e = 128 / n;
    if e > 64 {
        64
    } else if e < 16 {
        16
    } else {
        e
    }
}

/// `dst = numpy.transpose(src, perm)` for a row-major `src` of shape `shape`, elements of `N`
/// bytes (D2). After [`canonical`], either the source's contiguous axis is the destination's
/// (whole runs, `copy_from_slice`) or it is a 2-D blocked transpose between the two
/// contiguous axes inside at most two outer loops. The destination is split on its outermost
/// axis into contiguous chunks run on `par`'s threads; every element is written exactly once
/// from `src` alone, so the result is the same at every thread count. `src` and `dst` are
/// distinct slices: a kernel whose operands overlap reads everything first (seed 000 §5.1).
pub(crate) fn permute<const N: usize>(
    src: &[[u8; N]],
    shape: [usize; 4],
    perm: [usize; 4],
    dst: &mut [[u8; N]],
    par: Parallelism,
) {
    let Some(axes) = canonical(shape, perm) else { return };
    let total: usize = axes.iter().map(|a| a.0).product();
    if src.len() < total || dst.len() < total {
        return;
    }
    let dst = &mut dst[..total];
    let Some(&(n0, s0)) = axes.first() else {
        // Every axis has size 1: one element.
        if let (Some(d), Some(v)) = (dst.first_mut(), src.first()) {
            *d = *v;
        }
        return;
    };
    let span = total / n0;
    let Ok(()) = par.chunks(dst, span, |off, chunk| {
        let mut sub = axes.clone();
        sub[0] = (chunk.len() / span, s0);
        let base = off / span * s0;
        permute_part(src.get(base..).unwrap_or_default(), &sub, chunk);
        Ok::<(), std::convert::Infallible>(())
    });
}

/// [`permute`] on one thread over canonical `axes` (every source offset from `src`'s start).
fn permute_part<const N: usize>(src: &[[u8; N]], axes: &[(usize, usize)], dst: &mut [[u8; N]]) {
    let Some((&(nj, sj), outer)) = axes.split_last() else { return };
    // Destination strides of the canonical axes (row-major over them).
    let mut ds = vec![1usize; axes.len()];
    for k in (0..axes.len().saturating_sub(1)).rev() {
        ds[k] = ds[k + 1] * axes[k + 1].0;
    }
    if sj == 1 {
        // Whole runs of the innermost axis, the outer axes as an odometer.
        let mut idx = vec![0usize; outer.len()];
        let mut so = 0usize;
        for run in dst.chunks_exact_mut(nj) {
            if let Some(s) = src.get(so..so + nj) {
                run.copy_from_slice(s);
            }
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                so += outer[k].1;
                if idx[k] < outer[k].0 {
                    break;
                }
                so -= idx[k] * outer[k].1;
                idx[k] = 0;
            }
        }
        return;
    }
    // The destination axis that walks the source contiguously: the source's innermost non-unit
    // axis, which keeps stride 1 through merging.
    let Some(ki) = outer.iter().position(|a| a.1 == 1) else { return };
    let (ni, di) = (axes[ki].0, ds[ki]);
    let rest: Vec<usize> = (0..outer.len()).filter(|&k| k != ki).collect();
    let e = tile_edge(N);
    let mut tmp = vec![[0u8; N]; e * e];
    let mut idx = vec![0usize; rest.len()];
    let outer_total: usize = rest.iter().map(|&k| axes[k].0).product();
    for _ in 0..outer_total {
        let so: usize = idx.iter().zip(&rest).map(|(c, &k)| c * axes[k].1).sum();
        let o: usize = idx.iter().zip(&rest).map(|(c, &k)| c * ds[k]).sum();
        tile_transpose(src, so, sj, ni, dst, o, di, nj, (&mut tmp, e));
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < axes[rest[k]].0 {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// `dst[o + i·di + j] = src[so + i + j·sj]` for `i < ni`, `j < nj`, through `e × e` tiles: each
/// tile's source rows are gathered contiguously into `tmp` (so source rows a power-of-two
/// stride apart never fight over one cache set), then written out as contiguous destination rows.
#[expect(clippy::too_many_arguments, reason = "the two strided planes of one tile loop")]
pub(crate) fn tile_transpose<const N: usize>(
    src: &[[u8; N]],
    so: usize,
    sj: usize,
    ni: usize,
    dst: &mut [[u8; N]],
    o: usize,
    di: usize,
    nj: usize,
    (tmp, e): (&mut [[u8; N]], usize),
) {
    for i0 in (0..ni).step_by(e) {
        let ti = e.min(ni - i0);
        for j0 in (0..nj).step_by(e) {
            let tj = e.min(nj - j0);
            for (j, t) in tmp.chunks_exact_mut(e).take(tj).enumerate() {
                let s = so + i0 + (j0 + j) * sj;
                if let Some(row) = src.get(s..s + ti) {
                    t[..ti].copy_from_slice(row);
                }
            }
            // A full tile leaves the (contiguous) buffer as fixed-size blocks.
            if ti == e
                && tj == e
                && e.is_multiple_of(MICRO)
                && micro_tiles(tmp, 0, e, dst, o + i0 * di + j0, di, e)
            {
                continue;
            }
            for i in 0..ti {
                let d = o + (i0 + i) * di + j0;
                let (Some(row), Some(col)) = (dst.get_mut(d..d + tj), tmp.get(i..)) else { continue };
                for (d, v) in row.iter_mut().zip(col.iter().step_by(e)) {
                    *d = *v;
                }
            }
        }
    }
}

/// The edge of the register-sized blocks a full tile is moved in.
const MICRO: usize = 8;

/// One full `e × e` tile of [`tile_transpose`] (`e` a multiple of [`MICRO`]), read from the
/// tile buffer, as `MICRO × MICRO` blocks of fixed size, so every index is a constant but the
/// row starts. `false` (nothing written) when a row leaves either slice; the caller's element
/// loop then does the checks.
fn micro_tiles<const N: usize>(
    src: &[[u8; N]],
    s: usize,
    sj: usize,
    dst: &mut [[u8; N]],
    d: usize,
    di: usize,
    e: usize,
) -> bool {
    let (last_s, last_d) = (s + (e - 1) + (e - 1) * sj, d + (e - 1) * di + (e - 1));
    if last_s >= src.len() || last_d >= dst.len() {
        return false;
    }
    for ib in (0..e).step_by(MICRO) {
        for jb in (0..e).step_by(MICRO) {
            micro_block(src, s + ib + jb * sj, sj, dst, d + ib * di + jb, di);
        }
    }
    true
}

/// One `MICRO × MICRO` block: `dst[d + i·di + j] = src[s + i + j·sj]`, the eight source rows
/// and each destination row taken once as fixed-size arrays, so the element moves are
/// unrolled loads and stores (the caller checked that every row is inside its slice).
#[inline(always)]
fn micro_block<const N: usize>(
    src: &[[u8; N]],
    s: usize,
    sj: usize,
    dst: &mut [[u8; N]],
    d: usize,
    di: usize,
) {
    let zero = [[0u8; N]; MICRO];
    let mut rows = [&zero; MICRO];
    for (j, r) in rows.iter_mut().enumerate() {
        let a = s + j * sj;
        match src.get(a..a + MICRO).and_then(|r| <&[[u8; N]; MICRO]>::try_from(r).ok()) {
            Some(row) => *r = row,
            None => return,
        }
    }
    for i in 0..MICRO {
        let a = d + i * di;
        let Some(out) = dst.get_mut(a..a + MICRO).and_then(|r| <&mut [[u8; N]; MICRO]>::try_from(r).ok())
        else {
            return;
        };
        for (o, row) in out.iter_mut().zip(&rows) {
            *o = row[i];
        }
    }
}

/// [`permute`] on raw bytes, dispatched once on element width.
pub(crate) fn permute_bytes(
    src: &[u8],
    size: usize,
    shape: [usize; 4],
    perm: [usize; 4],
    dst: &mut [u8],
    par: Parallelism,
) {
    fn go<const N: usize>(src: &[u8], shape: [usize; 4], perm: [usize; 4], dst: &mut [u8], par: Parallelism) {
        let (s, _) = src.as_chunks::<N>();
        let (d, _) = dst.as_chunks_mut::<N>();
        permute(s, shape, perm, d, par);
    }
    match size {
        1 => go::<1>(src, shape, perm, dst, par),
        2 => go::<2>(src, shape, perm, dst, par),
        4 => go::<4>(src, shape, perm, dst, par),
        _ => go::<8>(src, shape, perm, dst, par),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bir_ir::TransposeOps;

    /// The slow twin: the definition, one element at a time.
    fn slow(src: &[u32], shape: [usize; 4], perm: [usize; 4]) -> Vec<u32> {
        let d = perm.map(|p| shape[p]);
        let mut out = Vec::new();
        for c0 in 0..d[0] {
            for c1 in 0..d[1] {
                for c2 in 0..d[2] {
                    for c3 in 0..d[3] {
                        let c = [c0, c1, c2, c3];
                        let mut sc = [0usize; 4];
                        for k in 0..4 {
                            sc[perm[k]] = c[k];
                        }
                        out.push(src[((sc[0] * shape[1] + sc[1]) * shape[2] + sc[2]) * shape[3] + sc[3]]);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_code_matches_the_slow_twin_on_odd_shapes() {
        // Odd sizes, unit axes, and edges past one tile (64 > 32 for 4 bytes, 65 > 64 for 1 byte)
        // so partial tiles appear on both axes.
        let shapes = [
            [2, 3, 4, 5],
            [3, 65, 1, 37],
            [2, 33, 67, 1],
            [1, 17, 1, 70],
            [1, 17, 33, 3],
            [5, 1, 19, 40],
            [3, 35, 2, 18],
            [7, 5, 3, 1],
            [1, 1, 1, 1],
            [3, 1, 1, 7],
            [33, 1, 17, 1],
            // Full tiles for every width (64 × 64 for 1- and 2-byte elements) with ragged
            // edges, so the fixed-size block path and the element loop both run.
            [2, 130, 1, 67],
            [1, 64, 3, 128],
        ];
        for code in 0..14u8 {
            let op = <TransposeOps as bir_ir::BirEnum>::from_ordinal(u64::from(code))
                .unwrap_or(TransposeOps::None);
            let perm = op.permutation();
            for shape in shapes {
                let n: usize = shape.iter().product();
                let src: Vec<u32> = (0..n as u32).map(|x| x.wrapping_mul(2_654_435_761)).collect();
                let want = slow(&src, shape, perm);
                for size in [1usize, 2, 4, 8] {
                    let bytes: Vec<u8> =
                        src.iter().flat_map(|v| v.to_le_bytes()[..size.min(4)].to_vec()).collect();
                    let bytes: Vec<u8> = if size == 8 {
                        src.iter().flat_map(|v| u64::from(*v).to_le_bytes()).collect()
                    } else {
                        bytes
                    };
                    let mask = if size >= 4 { u32::MAX } else { (1u32 << (8 * size)) - 1 };
                    let want: Vec<u32> = want.iter().map(|v| v & mask).collect();
                    // One thread, and chunks as small as one outermost index on 2 and 3.
                    for threads in [1, 2, 3] {
                        let par = Parallelism { threads, grain: 1 };
                        let mut dst = vec![0u8; bytes.len()];
                        permute_bytes(&bytes, size, shape, perm, &mut dst, par);
                        let got: Vec<u32> = dst
                            .chunks_exact(size)
                            .map(|c| {
                                let mut w = [0u8; 4];
                                w[..size.min(4)].copy_from_slice(&c[..size.min(4)]);
                                u32::from_le_bytes(w)
                            })
                            .collect();
                        assert_eq!(got, want, "code {code} shape {shape:?} size {size} threads {threads}");
                    }
                }
            }
        }
    }

    /// Worked by hand (docs/bir-json.md): source [2,3,4,5] row-major holds its flat index;
    /// code 12 XYZW (perm 3,2,1,0) gives dst shape [5,4,3,2] and dst[c0,c1,c2,c3] =
    /// src[c3,c2,c1,c0] = 60·c3 + 20·c2 + 5·c1 + c0. dst[1,2,0,1] = 60 + 0 + 10 + 1 = 71 at
    /// flat 1·24 + 2·6 + 0·2 + 1 = 37. Code 1 WZXY (0,1,3,2): dst [2,3,5,4], dst[1,2,3,0] =
    /// src[1,2,0,3] = 60 + 40 + 0 + 3 = 103, at flat 1·60 + 2·20 + 3·4 + 0 = 112.
    #[test]
    fn transpose_worked_examples() {
        let src: Vec<u32> = (0..120).collect();
        let bytes: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
        let at = |op: TransposeOps, flat: usize| {
            let mut dst = vec![0u8; bytes.len()];
            permute_bytes(&bytes, 4, [2, 3, 4, 5], op.permutation(), &mut dst, Parallelism::default());
            u32::from_le_bytes([dst[4 * flat], dst[4 * flat + 1], dst[4 * flat + 2], dst[4 * flat + 3]])
        };
        assert_eq!(at(TransposeOps::Xyzw, 37), 71);
        assert_eq!(at(TransposeOps::Wzxy, 112), 103);
        // Code 11 XZYW (3,1,2,0): dst [5,3,4,2]; dst[4,1,3,1] = src[1,1,3,4] = 60+20+15+4 = 99
        // at flat 4·24 + 1·8 + 3·2 + 1 = 111.
        assert_eq!(at(TransposeOps::Xzyw, 111), 99);
        // The docs/bir-json.md table: where src[1,0,2,3] (value 73) lands, per code.
        let lands = [73, 74, 98, 99, 33, 28, 27, 81, 79, 78, 86, 77, 85, 87];
        for (code, &flat) in lands.iter().enumerate() {
            let op = <TransposeOps as bir_ir::BirEnum>::from_ordinal(code as u64).unwrap();
            assert_eq!(at(op, flat), 73, "code {code}");
        }
    }
}
