//! Byte gathers and scatters through an access pattern (seed 000 §1.3 `readAP`/`writeAP`), and a
//! per-element address hook for the simulator's tracked-PSUM writes.
//!
//! Each call checks the pattern against the layout once, then walks runs: contiguous runs are one
//! `copy_from_slice` per partition row they touch; strided runs in linear layouts go through a
//! tight loop dispatched once on element width (1, 2, 4 or 8 bytes), so fp16, bf16 and int16
//! share one loop. Elements are visited in the reference's row-major [W,Z,Y,X] order, so a
//! destination that revisits an element (step 0) keeps the last write.

use crate::runs::{Pattern, Runs};
use crate::{ApError, Layout, check_bounds};

/// Gathers the elements `p` addresses in `buf` (laid out as `layout`) into `out`, in order.
/// `out` must hold exactly the pattern's elements.
pub fn read(buf: &[u8], layout: &Layout, p: &Pattern<'_>, out: &mut [u8]) -> Result<(), ApError> {
    let runs = prepare(layout, p, buf.len(), out.len())?;
    if is_transpose_shaped(layout, p.elem_size, &runs)
        && let Some((bases, block)) = runs.clone().into_blocks()
    {
        let g = Gather2d {
            origin: layout.origin() as i64,
            block,
            len: runs.run_len() as usize,
            stride: runs.stride(),
        };
        match p.elem_size {
            1 => g.run::<1>(buf, out, bases),
            2 => g.run::<2>(buf, out, bases),
            4 => g.run::<4>(buf, out, bases),
            _ => g.run::<8>(buf, out, bases),
        }
        return Ok(());
    }
    match p.elem_size {
        1 => walk::<1>(layout, p, runs, &mut ReadOp { buf, out }),
        2 => walk::<2>(layout, p, runs, &mut ReadOp { buf, out }),
        4 => walk::<4>(layout, p, runs, &mut ReadOp { buf, out }),
        8 => walk::<8>(layout, p, runs, &mut ReadOp { buf, out }),
        _ => walk::<0>(layout, p, runs, &mut ReadOp { buf, out }),
    }
    Ok(())
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
    f: impl FnMut(usize, usize),
) -> Result<(), ApError> {
    let total = p.elements()?;
    let bytes = usize::try_from(total).ok().and_then(|n| n.checked_mul(p.elem_size)).unwrap_or(usize::MAX);
    let span = layout.span().unwrap_or(usize::MAX);
    let runs = prepare(layout, p, span, bytes)?;
    walk::<0>(layout, p, runs, &mut EachOp { f, size: p.elem_size });
    Ok(())
}

/// A strided run whose next-outer loop moves by at most a few elements is a transpose: walking it
/// run by run touches a new cache line per element. Such reads go through [`Gather2d`].
fn is_transpose_shaped(layout: &Layout, size: usize, runs: &Runs) -> bool {
    let Some(block) = runs.innermost_outer() else { return false };
    matches!(size, 1 | 2 | 4 | 8)
        && layout.is_linear(size)
        && runs.stride() != 1
        && runs.stride().unsigned_abs() * size as u64 >= 64
        && block.step != 0
        && block.step.unsigned_abs() * size as u64 <= 16
        && block.num >= 4
        && runs.run_len() >= 4
}

/// A cache-blocked gather of `[block.num][len]` elements: element (i, j) is at
/// `base + i·block.step + j·stride`, and goes to flat position `i·len + j`. Reading order does not
/// matter for a gather, so tiles of 16 × 16 keep both sides within a few cache lines.
struct Gather2d {
    origin: i64,
    block: bir_ir::ApPair,
    len: usize,
    stride: i64,
}

impl Gather2d {
    fn run<const W: usize>(&self, buf: &[u8], out: &mut [u8], bases: Runs) {
        const T: usize = 16;
        let w = W as i64;
        let (a, m) = (self.block.step * w, self.block.num as usize);
        let (b, n) = (self.stride * w, self.len);
        let mut tmp = [[[0u8; W]; T]; T];
        let mut flat = 0usize;
        for base in bases {
            let b0 = self.origin + base.start * w;
            let tile = &mut out[flat..flat + m * n * W];
            for i0 in (0..m).step_by(T) {
                for j0 in (0..n).step_by(T) {
                    if a == w && i0 + T <= m && j0 + T <= n {
                        // A full tile whose columns are contiguous in the source: load each
                        // column with one slice copy, then store the rows contiguously.
                        for (jj, col) in tmp.iter_mut().enumerate() {
                            let lo = (b0 + (j0 + jj) as i64 * b + i0 as i64 * a) as usize;
                            for (d, e) in col.iter_mut().zip(buf[lo..lo + T * W].chunks_exact(W)) {
                                d.copy_from_slice(e);
                            }
                        }
                        #[expect(clippy::needless_range_loop, reason = "a transpose indexes tmp[jj][ii]")]
                        for ii in 0..T {
                            let o = ((i0 + ii) * n + j0) * W;
                            for (jj, d) in tile[o..o + T * W].chunks_exact_mut(W).enumerate() {
                                d.copy_from_slice(&tmp[jj][ii]);
                            }
                        }
                        continue;
                    }
                    for i in i0..(i0 + T).min(m) {
                        for j in j0..(j0 + T).min(n) {
                            let at = (b0 + i as i64 * a + j as i64 * b) as usize;
                            let o = (i * n + j) * W;
                            tile[o..o + W].copy_from_slice(&buf[at..at + W]);
                        }
                    }
                }
            }
            flat += m * n * W;
        }
    }
}

fn prepare(layout: &Layout, p: &Pattern<'_>, buf_len: usize, flat_len: usize) -> Result<Runs, ApError> {
    check_bounds(layout, p)?;
    layout.check_buffer(buf_len)?;
    let want =
        usize::try_from(p.elements()?).ok().and_then(|n| n.checked_mul(p.elem_size)).unwrap_or(usize::MAX);
    if want != flat_len {
        return Err(ApError::FlatSize { want, got: flat_len });
    }
    p.runs()
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

struct EachOp<F> {
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

impl<F: FnMut(usize, usize)> Op for EachOp<F> {
    #[inline]
    fn contiguous(&mut self, at: usize, flat: usize, bytes: usize) {
        for k in 0..bytes / self.size {
            (self.f)(flat / self.size + k, at + k * self.size);
        }
    }

    #[inline]
    fn strided<const W: usize>(&mut self, at: usize, step: isize, flat: usize, count: usize, _w: usize) {
        let mut pos = at as isize;
        for k in 0..count {
            (self.f)(flat / self.size + k, pos as usize);
            pos += step;
        }
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
