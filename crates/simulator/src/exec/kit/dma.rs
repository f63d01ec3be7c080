//! DMACopy, the mode multiplexer (seed 000 §5.2; docs/fidelity.md D1–D4):
//!
//! - Copy: `doCopy` (§5.1); with a scalar dynamic offset the AP's offset grows by the index times
//!   the step of the level its letter names, and an out-of-bounds access faults (`oob_is_err`) or
//!   copies only the element pairs whose both addresses are inside their locations (D1).
//! - Transpose: code 0 is `doCopy`; codes 1..13 permute 4-level APs,
//!   `dst = numpy.transpose(src, perm)` with `perm` the TransposeOps table (re-facts §3; D2),
//!   one cache-blocked pass dispatched on element width. A transpose that casts into, out of
//!   or between packed `_x4` dtypes casts first, in the source's order, packing 4 consecutive
//!   X values per container or unpacking them (the source counted `[W, Z, Y, X/4]` or
//!   `[W, Z, Y, 4X]`, [`packed_shape`]; an X that does not pack faults `dims` on outs[0]), then
//!   permutes the containers (K3).
//! - Replicate: `dst = numpy.tile(src, (dst_parts / src_parts, 1))` (D3).
//! - CCE: an N-input fp32 reduce (add/max/min, optional per-input scale; D4).
//!
//! Every mode reads all its inputs before it writes (§5.1). A Copy with a vector dynamic offset
//! is the HW-DGE bridge (§7), in `exec/dge.rs`.

use super::operand::same_count;
use super::{Arg, Parallelism, Res, Simulator, Written, fault, unclassified};
use crate::fault::{FaultCause, Slot};
use access_pattern::{ApError, Pattern};
use bir_ir::ops::DmaCopyFields;
use bir_ir::{AccessPattern, AluOp, CopyMode, Dtype, Instruction, OffsetSource, TransposeOps};

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

/// glibc `fmaxf` / `fminf`: a NaN operand yields the other; a tie (±0) returns the first
/// argument (D4) — numerics' one definition.
pub(crate) use numerics::alu::{fmaxf, fminf};

/// The source shape of a DMA transpose counted in the destination's dtype (K3): the source is
/// read converted to `dst` in its own AP order, so packing into an `_x4` dtype groups 4
/// consecutive values along X (`[W, Z, Y, X/4]`, `None` when X is not a multiple of 4),
/// unpacking one gives `[W, Z, Y, 4X]`, and equal lane counts keep the shape.
pub(crate) fn packed_shape(sn: [usize; 4], src: Dtype, dst: Dtype) -> Option<[usize; 4]> {
    let (ls, ld) = (src.lanes(), dst.lanes());
    let [w, z, y, x] = sn;
    if ls == ld {
        Some(sn)
    } else if ld > ls {
        let k = ld / ls;
        x.is_multiple_of(k).then(|| [w, z, y, x / k])
    } else {
        Some([w, z, y, x.saturating_mul(ls / ld)])
    }
}

/// The 4 nums of a 4-level AP.
fn nums4(a: Arg<'_>) -> Res<[usize; 4]> {
    let p = &a.ap.pairs;
    if p.len() != 4 {
        return fault(FaultCause::Dims {
            slot: a.slot,
            why: "a DMA transpose needs a 4-level access pattern",
        });
    }
    let mut n = [0usize; 4];
    for (k, pair) in p.iter().enumerate() {
        n[k] = usize::try_from(pair.num).map_err(|_| a.access(ApError::Overflow { dim: k }))?;
    }
    Ok(n)
}

/// The flat element index of every element of an AP, in AP order.
pub(crate) fn element_indices(a: Arg<'_>) -> Res<Vec<i64>> {
    let n = a.elements()?;
    let mut out = Vec::new();
    crate::alloc::reserve(&mut out, n)?;
    let pairs = &a.ap.pairs;
    let mut coord = vec![0i64; pairs.len()];
    for _ in 0..n {
        let mut e = a.ap.offset;
        for (c, p) in coord.iter().zip(pairs) {
            e = e.saturating_add(c.saturating_mul(p.step));
        }
        out.push(e);
        for l in (0..pairs.len()).rev() {
            coord[l] += 1;
            if coord[l] < pairs[l].num {
                break;
            }
            coord[l] = 0;
        }
    }
    Ok(out)
}

/// A one-element AP at flat element `e` of `ap`'s location.
pub(crate) fn one_element(ap: &AccessPattern, e: i64) -> AccessPattern {
    AccessPattern {
        loc: ap.loc,
        dtype: ap.dtype,
        offset: e,
        pairs: std::iter::once(bir_ir::ApPair::new(1, 1)).collect(),
        dynamic: None,
    }
}

impl<'p> Simulator<'p> {
    /// DMACopy: dispatch on `mode` (§5.2).
    pub(crate) fn dma_copy(
        &mut self,
        i: &'p Instruction,
        f: &DmaCopyFields,
        regions: &mut Written,
    ) -> Res<()> {
        if f.mode != CopyMode::Copy && i.ins.iter().chain(&i.outs).any(super::dge::has_vector_offset) {
            return unclassified("a vector dynamic offset (HW-DGE) outside DMACopy Copy mode");
        }
        match f.mode {
            CopyMode::Copy => self.dma_plain(i, f, regions),
            CopyMode::Transpose => self.dma_transpose(i, f.transpose_op, regions),
            CopyMode::Replicate => self.dma_replicate(i, regions),
            CopyMode::Cce => self.dma_cce(i, f, regions),
            CopyMode::Dynamic => unclassified("DMACopy in Dynamic mode"),
        }
    }

    /// Copy mode: `doCopy`, or the scalar-dynamic-offset form (D1).
    fn dma_plain(&mut self, i: &'p Instruction, f: &DmaCopyFields, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        if src.ap.dynamic.is_none() && dst.ap.dynamic.is_none() {
            return self.copy(i, regions);
        }
        if super::dge::vector_of(src.ap).is_some() || super::dge::vector_of(dst.ap).is_some() {
            return self.hw_dge(f, src, dst, regions);
        }
        let (s, s_oob) = self.resolve_dynamic(src)?;
        let (d, d_oob) = self.resolve_dynamic(dst)?;
        let (src, dst) = (src.with(&s), dst.with(&d));
        let oob = s_oob || d_oob || !self.in_bounds(src) || !self.in_bounds(dst);
        if !oob {
            let mut bytes = self.pool.take();
            let r = self
                .read(src, dst.ap.dtype, &mut bytes)
                .and_then(|()| self.write(dst, dst.ap.dtype, &bytes, regions));
            self.pool.give(bytes);
            return r;
        }
        if f.oob_is_err {
            let slot = if s_oob || !self.in_bounds(src) { src.slot } else { dst.slot };
            return fault(FaultCause::DynamicOutOfBounds { slot });
        }
        self.copy_in_bounds_pairs(src, dst, regions)
    }

    /// The AP with its scalar dynamic offset applied, and whether the index itself is out of
    /// range (i < 0 or i ≥ `indirect_dim_max_index`).
    fn resolve_dynamic(&mut self, a: Arg<'_>) -> Res<(AccessPattern, bool)> {
        let Some(dynamic) = a.ap.dynamic.as_deref() else { return Ok((a.ap.clone(), false)) };
        let index_ap = match &dynamic.source {
            OffsetSource::Scalar(ap) => ap,
            OffsetSource::Register(_) => return unclassified("a dynamic offset held in a register"),
            OffsetSource::Vector(_) => {
                return unclassified("a vector dynamic offset beside another dynamic offset");
            }
        };
        let idx_arg = a.with(index_ap);
        let mut bytes = self.pool.take();
        let r = self.read(idx_arg, Dtype::Int64, &mut bytes);
        let first = bytes.first_chunk::<8>().map(|b| i64::from_le_bytes(*b));
        self.pool.give(bytes);
        r?;
        let Some(index) = first else {
            return fault(FaultCause::Count {
                slot: a.slot,
                expected: 1,
                actual: 0,
                why: "a scalar dynamic offset reads one index",
            });
        };
        let mut ap = a.ap.clone();
        ap.dynamic = None;
        let step = a.ap.level_of(dynamic.indirect_dim).and_then(|l| a.ap.pairs.get(l)).map_or(0, |p| p.step);
        let oob = index < 0 || index >= dynamic.max_index;
        match index.checked_mul(step).and_then(|d| ap.offset.checked_add(d)) {
            Some(o) => ap.offset = o,
            None => return Ok((ap, true)),
        }
        Ok((ap, oob))
    }

    fn in_bounds(&self, a: Arg<'_>) -> bool {
        let mut p = Pattern::of(a.ap);
        p.elem_size = self.storage(a.ap).size();
        access_pattern::check_bounds(&self.memory.layout(a.ap.loc), &p).is_ok()
    }

    /// Tolerated out-of-bounds copy (D1): pair k (k-th source element, k-th destination
    /// element) is copied only when both addresses are inside their locations.
    fn copy_in_bounds_pairs(&mut self, src: Arg<'_>, dst: Arg<'_>, regions: &mut Written) -> Res<()> {
        let (si, di) = (element_indices(src)?, element_indices(dst)?);
        same_count(dst.slot, si.len(), di.len(), "a copy writes as many elements as it reads")?;
        let (ssz, dsz) = (self.storage(src.ap).size(), self.storage(dst.ap).size());
        let (sl, dl) = (self.memory.layout(src.ap.loc), self.memory.layout(dst.ap.loc));
        let mut keep: Vec<(i64, i64)> = Vec::new();
        crate::alloc::reserve(&mut keep, si.len())?;
        let kept = si
            .iter()
            .zip(&di)
            .filter(|(s, d)| sl.address(**s, ssz).is_some() && dl.address(**d, dsz).is_some())
            .map(|(s, d)| (*s, *d));
        keep.extend(kept);
        // Read every kept source element first (§5.1), then write.
        let one = one_element;
        let dt = dst.ap.dtype;
        let mut vals = Vec::new();
        crate::alloc::reserve(&mut vals, keep.len())?;
        let mut bytes = self.pool.take();
        for &(s, _) in &keep {
            let ap = one(src.ap, s);
            self.read(src.with(&ap), dt, &mut bytes)?;
            vals.push(crate::alloc::copied(&bytes)?);
        }
        self.pool.give(bytes);
        for (&(_, d), v) in keep.iter().zip(&vals) {
            let ap = one(dst.ap, d);
            self.write(dst.with(&ap), dt, v, regions)?;
        }
        Ok(())
    }

    /// Transpose mode (D2).
    fn dma_transpose(&mut self, i: &'p Instruction, op: TransposeOps, regions: &mut Written) -> Res<()> {
        if op == TransposeOps::None {
            return self.copy(i, regions);
        }
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        let (sn, dn) = (nums4(src)?, nums4(dst)?);
        let dt = dst.ap.dtype;
        // The source as it is after the cast to dt in its own order (K3).
        let Some(sn) = packed_shape(sn, src.ap.dtype, dt) else {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "a DMA transpose that packs into an x4 dtype needs the source's X count a multiple of 4",
            });
        };
        let perm = op.permutation();
        if perm.map(|p| sn[p]) != dn {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "a DMA transpose needs dst.num[k] = src.num[perm[k]] (the source counted in the destination's dtype)",
            });
        }
        let par = self.options.parallelism;
        if src.ap.dtype == dt
            && let (Some(sr), Some(dr)) = (self.contiguous(src)?, self.contiguous(dst)?)
            && sr.len() == dr.len()
        {
            // Both single contiguous runs of their memory's own dtype in distinct buffers: one
            // pass from memory to memory.
            let size = dt.size();
            let ts = crate::memory::Touch { range: Some(sr.clone()), covers: false };
            let td = crate::memory::Touch { range: Some(dr.clone()), covers: true };
            let done = self.memory.with_two((src.ap.loc, &ts), (dst.ap.loc, &td), |sb, _, db, _| {
                permute_bytes(&sb[sr.clone()], size, sn, perm, &mut db[dr.clone()], par);
            });
            if done.is_some() {
                let memory = &mut self.memory;
                regions.record_region(
                    |h| super::fnv1a(h, &memory.buffer_for(dst.ap.loc, &td).0[dr.clone()]),
                    dr.len() as u64,
                );
                return Ok(());
            }
        }
        let (mut a, mut b) = (self.pool.take(), self.pool.take());
        let r = self.read(src, dt, &mut a).and_then(|()| {
            crate::alloc::resize(&mut b, a.len(), 0)?;
            // Elements of dt after the cast: an x4 container moves whole, as one element of its
            // container size (D2, K3), and the read packed or unpacked the source along X.
            permute_bytes(&a, dt.size(), sn, perm, &mut b, par);
            self.write(dst, dt, &b, regions)
        });
        self.pool.give(a);
        self.pool.give(b);
        r
    }

    /// Replicate mode (D3): 2-level APs, dst partition p ← src partition p mod src partitions.
    fn dma_replicate(&mut self, i: &'p Instruction, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        for a in [src, dst] {
            if a.ap.pairs.len() != 2 {
                return fault(FaultCause::Dims {
                    slot: a.slot,
                    why: "DMA replicate needs a 2-level access pattern",
                });
            }
        }
        let ((sp, sf), (dp, df)) = (src.shape()?, dst.shape()?);
        if sp == 0 || !dp.is_multiple_of(sp) || sf != df {
            return fault(FaultCause::Dims {
                slot: dst.slot,
                why: "DMA replicate needs dst partitions a multiple of src partitions and equal free sizes",
            });
        }
        let dt = dst.ap.dtype;
        let mut a = self.pool.take();
        let r = self.read(src, dt, &mut a).and_then(|()| {
            let bytes = a.repeat(dp / sp);
            self.write(dst, dt, &bytes, regions)
        });
        self.pool.give(a);
        r
    }

    /// CCE mode (D4): an N-input fp32 reduce into the output.
    fn dma_cce(&mut self, i: &'p Instruction, f: &DmaCopyFields, regions: &mut Written) -> Res<()> {
        let op = f.cce_op.unwrap_or(AluOp::Add);
        if !matches!(op, AluOp::Add | AluOp::Max | AluOp::Min) {
            return fault(FaultCause::UnsupportedOp { what: "a DMA CCE (add, max or min)", op });
        }
        let out = self.output(i, 0)?;
        // Values, not containers: an x4 operand decodes to 4 fp32 values per container
        // (re-facts §4), and the reduce runs over those values (D16).
        let n_out = out.elements()? * out.ap.dtype.lanes();
        let n_in = i.ins.len();
        if !f.constants.is_empty() && f.constants.len() != n_in {
            return fault(FaultCause::BadField {
                field: "constants",
                why: "CCE needs one constant per input",
            });
        }
        let mut acc = self.pool.take_f32();
        let mut v = self.pool.take_f32();
        let r = (|| {
            for k in 0..n_in {
                let a = self.input(i, k)?;
                self.read_f32(a, &mut v)?;
                same_count(
                    Slot::In(k),
                    n_out,
                    v.len(),
                    "every CCE input holds as many values as the output",
                )?;
                if let Some(c) = f.constants.get(k) {
                    let c = c.get();
                    v.iter_mut().for_each(|x| *x *= c);
                }
                if k == 0 {
                    acc.clear();
                    crate::alloc::reserve(&mut acc, v.len())?;
                    if op == AluOp::Add {
                        acc.extend(v.iter().map(|x| 0.0f32 + *x));
                    } else {
                        acc.extend_from_slice(&v);
                    }
                    continue;
                }
                match op {
                    AluOp::Add => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a += *x),
                    AluOp::Max => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a = fmaxf(*a, *x)),
                    _ => acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a = fminf(*a, *x)),
                }
            }
            if n_in == 0 {
                acc.clear();
                crate::alloc::resize(&mut acc, n_out, 0.0)?;
            }
            self.write_f32(out, &acc, regions)
        })();
        self.pool.give_f32(acc);
        self.pool.give_f32(v);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The re-facts §3 table, copied by hand, against `TransposeOps::permutation`.
    #[test]
    fn permutations_are_the_re_facts_table() {
        const TABLE: [[usize; 4]; 14] = [
            [0, 1, 2, 3],
            [0, 1, 3, 2],
            [0, 3, 1, 2],
            [0, 2, 3, 1],
            [1, 0, 2, 3],
            [1, 2, 0, 3],
            [1, 2, 3, 0],
            [2, 3, 0, 1],
            [2, 3, 1, 0],
            [2, 0, 1, 3],
            [3, 0, 1, 2],
            [3, 1, 2, 0],
            [3, 2, 1, 0],
            [3, 2, 0, 1],
        ];
        for (code, want) in TABLE.iter().enumerate() {
            let op = <TransposeOps as bir_ir::BirEnum>::from_ordinal(code as u64).unwrap();
            assert_eq!(op.permutation(), *want, "code {code}");
        }
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

    /// K3: the source shape counted in the destination's dtype.
    #[test]
    fn packed_shape_packs_and_unpacks_along_x() {
        let (f, e4, e5, f4) =
            (Dtype::Float32, Dtype::Float8E4m3fnX4, Dtype::Float8E5m2X4, Dtype::Float4E2m1fnX4);
        assert_eq!(packed_shape([2, 3, 4, 8], f, e4), Some([2, 3, 4, 2]));
        assert_eq!(packed_shape([2, 3, 4, 6], f, f4), None);
        assert_eq!(packed_shape([2, 3, 4, 2], e4, f), Some([2, 3, 4, 8]));
        assert_eq!(packed_shape([2, 3, 4, 5], e4, e5), Some([2, 3, 4, 5]));
        assert_eq!(packed_shape([2, 3, 4, 5], f, Dtype::Bfloat16), Some([2, 3, 4, 5]));
    }

    #[test]
    fn glibc_fmax_fmin_ties_and_nans() {
        assert_eq!(fmaxf(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(fmaxf(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(fminf(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(fmaxf(f32::NAN, 2.0), 2.0);
        assert_eq!(fmaxf(2.0, f32::NAN), 2.0);
        assert_eq!(fminf(f32::NAN, -2.0), -2.0);
        assert!(fmaxf(f32::NAN, f32::NAN).is_nan());
        assert_eq!(fmaxf(1.0, 3.0), 3.0);
        assert_eq!(fminf(1.0, 3.0), 1.0);
    }
}
