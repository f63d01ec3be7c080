//! Byte gathers and scatters through an access pattern (seed 000 §1.3 `readAP`/`writeAP`), and a
//! per-element address hook for the simulator's tracked-PSUM writes.
//!
//! Each call checks the pattern against the layout once. Reads from linear layouts (flat, or rows
//! packed) of 1-, 2-, 4- or 8-byte elements then go through the blocked loops of `gather`; every
//! other access walks runs: contiguous runs are one `copy_from_slice` per partition row they
//! touch; strided runs in linear layouts go through a tight loop dispatched once on element width
//! (1, 2, 4 or 8 bytes), so fp16, bf16 and int16 share one loop. Elements are visited in the
//! reference's row-major [W,Z,Y,X] order, so a destination that revisits an element (step 0)
//! keeps the last write.

use crate::gather::SliceSink;
use crate::runs::{Pattern, Runs};
use crate::{ApError, Layout, check_bounds};

/// Gathers the elements `p` addresses in `buf` (laid out as `layout`) into `out`, in order.
/// `out` must hold exactly the pattern's elements.
pub fn read(buf: &[u8], layout: &Layout, p: &Pattern<'_>, out: &mut [u8]) -> Result<(), ApError> {
    let runs = prepare(layout, p, buf.len(), out.len())?;
    if layout.is_linear(p.elem_size)
        && crate::gather::read_linear(
            buf,
            layout.origin(),
            p.elem_size,
            runs.clone(),
            &mut SliceSink { out, at: 0 },
        )
    {
        return Ok(());
    }
    slow_read(buf, layout, p, runs, out);
    Ok(())
}

/// [`read`], appending the elements to `out` instead of overwriting a slice: the bytes `out`
/// gains are exactly those [`read`] would write, but no zero-filled buffer is needed first (the
/// simulator's operand buffers are reused vectors). Reserve the capacity beforehand to keep this
/// from allocating. On error `out` is unchanged.
pub fn read_to_vec(buf: &[u8], layout: &Layout, p: &Pattern<'_>, out: &mut Vec<u8>) -> Result<(), ApError> {
    let bytes = pattern_bytes(p)?;
    let runs = prepare(layout, p, buf.len(), bytes)?;
    if layout.is_linear(p.elem_size)
        && crate::gather::read_linear(buf, layout.origin(), p.elem_size, runs.clone(), out)
    {
        return Ok(());
    }
    let start = out.len();
    out.resize(start + bytes, 0);
    slow_read(buf, layout, p, runs, &mut out[start..]);
    Ok(())
}

/// The run-by-run walk: partitioned layouts whose rows are not packed, and odd element sizes.
fn slow_read(buf: &[u8], layout: &Layout, p: &Pattern<'_>, runs: Runs, out: &mut [u8]) {
    match p.elem_size {
        1 => walk::<1>(layout, p, runs, &mut ReadOp { buf, out }),
        2 => walk::<2>(layout, p, runs, &mut ReadOp { buf, out }),
        4 => walk::<4>(layout, p, runs, &mut ReadOp { buf, out }),
        8 => walk::<8>(layout, p, runs, &mut ReadOp { buf, out }),
        _ => walk::<0>(layout, p, runs, &mut ReadOp { buf, out }),
    }
}

/// Scatters `src` (the pattern's elements, in order) into `buf` through `p`.
pub fn write(buf: &mut [u8], layout: &Layout, p: &Pattern<'_>, src: &[u8]) -> Result<(), ApError> {
    let runs = prepare(layout, p, buf.len(), src.len())?;
    match p.elem_size {
        1 => walk::<1>(layout, p, runs, &mut WriteOp { buf, src }),
        2 => walk::<2>(layout, p, runs, &mut WriteOp { buf, src }),
        4 => walk::<4>(layout, p, runs, &mut WriteOp { buf, src }),
        8 => walk::<8>(layout, p, runs, &mut WriteOp { buf, src }),
        _ => walk::<0>(layout, p, runs, &mut WriteOp { buf, src }),
    }
    Ok(())
}

/// Calls `f(k, byte)` for the `k`-th element of `p` (in order) at buffer byte `byte`. The simulator
/// uses it for writes that must look at each destination element (tracked PSUM accumulation)
/// without this crate knowing any numerics.
pub fn for_each_element(
    layout: &Layout,
    p: &Pattern<'_>,
    mut f: impl FnMut(usize, usize),
) -> Result<(), ApError> {
    for_each_piece(layout, p, |k, at, count, step| {
        let mut pos = at as isize;
        for e in k..k + count {
            f(e, pos as usize);
            pos += step;
        }
    })
}

/// Calls `f(k, byte, count, step)` for each piece of `p` in element order: `count` elements,
/// the first of them the pattern's `k`-th, at buffer byte `byte`, the others `step` bytes apart
/// (`step` = the element size: contiguous bytes). The same checks and walk as
/// [`for_each_element`], for loops that want whole slices (the simulator's PSUM writes).
pub fn for_each_piece(
    layout: &Layout,
    p: &Pattern<'_>,
    f: impl FnMut(usize, usize, usize, isize),
) -> Result<(), ApError> {
    let total = p.elements()?;
    let bytes = usize::try_from(total).ok().and_then(|n| n.checked_mul(p.elem_size)).unwrap_or(usize::MAX);
    let span = layout.span().unwrap_or(usize::MAX);
    let runs = prepare(layout, p, span, bytes)?;
    walk::<0>(layout, p, runs, &mut PieceOp { f, size: p.elem_size });
    Ok(())
}

/// The bytes a pattern moves (`usize::MAX` when that does not fit).
fn pattern_bytes(p: &Pattern<'_>) -> Result<usize, ApError> {
    Ok(usize::try_from(p.elements()?).ok().and_then(|n| n.checked_mul(p.elem_size)).unwrap_or(usize::MAX))
}

fn prepare(layout: &Layout, p: &Pattern<'_>, buf_len: usize, flat_len: usize) -> Result<Runs, ApError> {
    check_bounds(layout, p)?;
    layout.check_buffer(buf_len)?;
    let want = pattern_bytes(p)?;
    if want != flat_len {
        return Err(ApError::FlatSize { want, got: flat_len });
    }
    Ok(p.runs()?.fuse_strided())
}

/// What to do with each piece of the walk.
trait Op {
    /// `bytes` contiguous bytes at buffer byte `at` ↔ flat byte `flat`.
    fn contiguous(&mut self, at: usize, flat: usize, bytes: usize);
    /// `count` elements of `W` bytes (or `w` when `W == 0`) starting at buffer byte `at`, `step`
    /// bytes apart ↔ contiguous flat bytes from `flat`.
    fn strided<const W: usize>(&mut self, at: usize, step: isize, flat: usize, count: usize, w: usize);
}

struct ReadOp<'a> {
    buf: &'a [u8],
    out: &'a mut [u8],
}

struct WriteOp<'a> {
    buf: &'a mut [u8],
    src: &'a [u8],
}

struct PieceOp<F> {
    f: F,
    size: usize,
}

impl Op for ReadOp<'_> {
    #[inline]
    fn contiguous(&mut self, at: usize, flat: usize, bytes: usize) {
        self.out[flat..flat + bytes].copy_from_slice(&self.buf[at..at + bytes]);
    }

    #[inline]
    fn strided<const W: usize>(&mut self, at: usize, step: isize, flat: usize, count: usize, w: usize) {
        let out = &mut self.out[flat..flat + count * width::<W>(w)];
        let mut pos = at as isize;
        if W == 0 {
            for chunk in out.chunks_exact_mut(w) {
                let p = pos as usize;
                chunk.copy_from_slice(&self.buf[p..p + w]);
                pos += step;
            }
        } else {
            for chunk in out.chunks_exact_mut(W) {
                let p = pos as usize;
                chunk.copy_from_slice(&self.buf[p..p + W]);
                pos += step;
            }
        }
    }
}

impl Op for WriteOp<'_> {
    #[inline]
    fn contiguous(&mut self, at: usize, flat: usize, bytes: usize) {
        self.buf[at..at + bytes].copy_from_slice(&self.src[flat..flat + bytes]);
    }

    #[inline]
    fn strided<const W: usize>(&mut self, at: usize, step: isize, flat: usize, count: usize, w: usize) {
        let src = &self.src[flat..flat + count * width::<W>(w)];
        let mut pos = at as isize;
        if W == 0 {
            for chunk in src.chunks_exact(w) {
                let p = pos as usize;
                self.buf[p..p + w].copy_from_slice(chunk);
                pos += step;
            }
        } else {
            for chunk in src.chunks_exact(W) {
                let p = pos as usize;
                self.buf[p..p + W].copy_from_slice(chunk);
                pos += step;
            }
        }
    }
}

impl<F: FnMut(usize, usize, usize, isize)> Op for PieceOp<F> {
    #[inline]
    fn contiguous(&mut self, at: usize, flat: usize, bytes: usize) {
        (self.f)(flat / self.size, at, bytes / self.size, self.size as isize);
    }

    #[inline]
    fn strided<const W: usize>(&mut self, at: usize, step: isize, flat: usize, count: usize, _w: usize) {
        (self.f)(flat / self.size, at, count, step);
    }
}

#[inline(always)]
fn width<const W: usize>(w: usize) -> usize {
    if W == 0 { w } else { W }
}

/// Walks the runs of a pattern already checked against the layout, so every address computed
/// here is inside the layout (and the buffer): the casts below cannot wrap.
fn walk<const W: usize>(layout: &Layout, p: &Pattern<'_>, runs: Runs, op: &mut impl Op) {
    let s = p.elem_size;
    let origin = layout.origin() as i64;
    let mut flat = 0usize;
    if layout.is_linear(s) {
        let s64 = s as i64;
        let step = runs.stride() * s64;
        let len = runs.run_len() as usize;
        for run in runs {
            let at = (origin + run.start * s64) as usize;
            if run.stride == 1 {
                op.contiguous(at, flat, len * s);
            } else {
                op.strided::<W>(at, step as isize, flat, len, s);
            }
            flat += len * s;
        }
        return;
    }
    // Rows are not packed: split contiguous runs at row ends (as runAP does) and place each
    // element of a strided run on its own.
    let pitch = layout.pitch(s);
    let row = layout.row_stride();
    for run in runs {
        if run.stride == 1 {
            let mut e = run.start as u64;
            let mut left = run.len;
            while left > 0 {
                let (r, intra) = (e / pitch, e % pitch);
                let take = left.min(pitch - intra);
                let at = origin as u64 + r * row + intra * s as u64;
                op.contiguous(at as usize, flat, take as usize * s);
                flat += take as usize * s;
                e += take;
                left -= take;
            }
        } else {
            let mut e = run.start;
            for _ in 0..run.len {
                let u = e as u64;
                let at = origin as u64 + (u / pitch) * row + (u % pitch) * s as u64;
                op.contiguous(at as usize, flat, s);
                flat += s;
                e += run.stride;
            }
        }
    }
}
