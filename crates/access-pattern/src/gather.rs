//! The fast reads ([`crate::read`], [`crate::read_to_vec`]) for linear layouts and elements of
//! 1, 2, 4 or 8 bytes.
//!
//! The pattern's runs are split once into *blocks*: the innermost loop outside the runs (`m`
//! rows, `a` apart) times one run (`len` elements, `b` apart). A block fills `m · len`
//! consecutive output elements, and the outer loops only hand out one base address per block, so
//! the per-run odometer is paid once per block. Inside a block one of three loops runs,
//! monomorphised on the element type so that every element moves with one load and one store of
//! a constant size:
//!
//! - contiguous runs (`b` one element): one slice copy per row;
//! - transposes (a strided run at least a cache line apart under an outer loop one element apart,
//!   or at most 16 bytes apart when the run is long): 16 × 16-element tiles, so both sides stay
//!   within a few cache lines;
//! - everything else (gathers, broadcast `b == 0`, negative steps): a row loop over fixed-size
//!   element chunks, one load and one store per element, short rows several to a piece of
//!   output; a step of 2, 3 or 4 elements reads whole groups of that many elements (a loop the
//!   compiler vectorises).
//!
//! Output goes to a [`Sink`]: a slice ([`read`](crate::read)), or the end of a vector
//! ([`read_to_vec`](crate::read_to_vec)), which grows piece by piece (contiguous rows are
//! appended, other pieces zero-filled just before they are written, while in cache) rather than
//! zero-filling the whole result up front.
//!
//! Every address was checked against the layout before this runs (`copy::prepare`); the slice
//! indexing here still checks each access, so a bug panics rather than reading out of bounds.
//! The per-element walker in `copy.rs` is the reference the tests hold these loops to.

use crate::runs::Runs;
use bir_ir::ApPair;

/// Where the output goes, in order.
pub(crate) trait Sink {
    /// Appends a copy of `src`.
    fn copy(&mut self, src: &[u8]);
    /// The next `bytes` bytes of output, to be overwritten whole by the caller.
    fn next(&mut self, bytes: usize) -> &mut [u8];
}

/// Output into a slice of exactly the pattern's bytes.
pub(crate) struct SliceSink<'a> {
    pub(crate) out: &'a mut [u8],
    pub(crate) at: usize,
}

impl Sink for SliceSink<'_> {
    #[inline]
    fn copy(&mut self, src: &[u8]) {
        self.next(src.len()).copy_from_slice(src);
    }

    #[inline]
    fn next(&mut self, bytes: usize) -> &mut [u8] {
        let at = self.at;
        self.at += bytes;
        &mut self.out[at..at + bytes]
    }
}

/// Output appended to a vector (whose capacity the caller reserved).
impl Sink for Vec<u8> {
    #[inline]
    fn copy(&mut self, src: &[u8]) {
        self.extend_from_slice(src);
    }

    #[inline]
    fn next(&mut self, bytes: usize) -> &mut [u8] {
        let at = self.len();
        self.resize(at + bytes, 0);
        &mut self[at..]
    }
}

/// An element as a plain integer of its width, so that copies are single moves.
pub(crate) trait Elem: Copy {
    /// Bytes per element.
    const W: usize;
    /// The element in the first `W` bytes of `b`.
    fn load(b: &[u8]) -> Self;
    /// Writes the element into the first `W` bytes of `b`.
    fn store(self, b: &mut [u8]);
    /// Fills `d` with the elements at buffer bytes `first`, `first + b`, … (`b` a whole number
    /// of elements, any sign, or 0).
    fn strided(buf: &[u8], first: i64, b: i64, d: &mut [u8]);
}

macro_rules! elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const W: usize = size_of::<$t>();

            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let mut a = [0u8; size_of::<$t>()];
                a.copy_from_slice(&b[..Self::W]);
                <$t>::from_ne_bytes(a)
            }

            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b[..Self::W].copy_from_slice(&self.to_ne_bytes());
            }

            // On `[u8; W]` chunks of constant size, so that no element access needs a bounds check
            // or an index computation: an element is one load, one store and a pointer step.
            #[inline(always)]
            fn strided(buf: &[u8], first: i64, b: i64, d: &mut [u8]) {
                const W: usize = size_of::<$t>();
                let (out, _) = d.as_chunks_mut::<W>();
                let step = b.unsigned_abs() as usize / W;
                let reach = out.len().saturating_sub(1) * step * W;
                let f = first as usize;
                if b == 0 {
                    let mut v = [0u8; W];
                    v.copy_from_slice(&buf[f..f + W]);
                    out.fill(v);
                } else if b > 0 {
                    let (span, _) = buf[f..f + reach + W].as_chunks::<W>();
                    match step {
                        2 => pick::<W, 2>(span, out),
                        3 => pick::<W, 3>(span, out),
                        4 => pick::<W, 4>(span, out),
                        _ => {
                            let mut k = 0;
                            for e in out {
                                *e = span[k];
                                k += step;
                            }
                        }
                    }
                } else {
                    // The first element is the highest: walk the span down from its end.
                    let (span, _) = buf[f - reach..f + W].as_chunks::<W>();
                    let mut k = span.len() - 1;
                    for e in out {
                        *e = span[k];
                        k = k.wrapping_sub(step);
                    }
                }
            }
        }
    )*};
}
elem!(u8, u16, u32, u64);

/// `out[k] = span[k·S]`: a strided run whose step is the constant `S` (in elements), so the
/// compiler vectorises the loads as interleaved groups. `span` holds `(out.len() − 1)·S + 1`
/// elements: all but the last output come from whole `S`-element groups.
#[inline(always)]
fn pick<const W: usize, const S: usize>(span: &[[u8; W]], out: &mut [[u8; W]]) {
    let (groups, _) = span.as_chunks::<S>();
    let n = groups.len().min(out.len());
    let (head, tail) = out.split_at_mut(n);
    for (o, g) in head.iter_mut().zip(groups) {
        *o = g[0];
    }
    for (k, o) in tail.iter_mut().enumerate() {
        *o = span[(n + k) * S];
    }
}

/// A transpose's run has at least this many bytes between elements (a cache line).
const LINE: usize = 64;

/// Side of a transpose tile, in elements.
const TILE: usize = 16;

/// A strided row walk touches one source line per element; it runs at cache speed while the
/// lines of one row (`len` of them) stay in L1 for the next row. Longer rows go through tiles.
const ROW_LINES: usize = 256;

/// Strided rows are produced in pieces of at most this many elements, so a vector sink never
/// zero-fills more than it is about to overwrite while in cache.
const PIECE: usize = 1024;

/// Reads the pattern whose runs are `runs` from a linear layout whose element 0 is at buffer
/// byte `origin` into `out`. Returns false, doing nothing, for element sizes other than 1, 2, 4
/// and 8 bytes.
pub(crate) fn read_linear(buf: &[u8], origin: usize, size: usize, runs: Runs, out: &mut impl Sink) -> bool {
    match size {
        1 => blocks::<u8>(buf, origin, runs, out),
        2 => blocks::<u16>(buf, origin, runs, out),
        4 => blocks::<u32>(buf, origin, runs, out),
        8 => blocks::<u64>(buf, origin, runs, out),
        _ => return false,
    }
    true
}

/// One block: element `(i, j)` (`i < m`, `j < len`) is at buffer byte `b0 + i·a + j·b` and goes
/// to output element `i·len + j` of the block. Steps are in bytes.
struct Block {
    m: usize,
    a: i64,
    len: usize,
    b: i64,
}

fn blocks<E: Elem>(buf: &[u8], origin: usize, runs: Runs, out: &mut impl Sink) {
    let w = E::W as i64;
    let (len, stride) = (runs.run_len() as usize, runs.stride());
    let (bases, outer) = match runs.clone().into_blocks() {
        Some(split) => split,
        None => (runs, ApPair::new(0, 1)),
    };
    let blk = Block { m: outer.num as usize, a: outer.step * w, len, b: stride * w };
    let transpose = stride != 1 && is_transpose(&blk, E::W);
    for base in bases {
        let b0 = origin as i64 + base.start * w;
        if stride == 1 {
            contiguous_rows(buf, b0, &blk, E::W, out);
        } else if transpose {
            tiles::<E>(buf, b0, &blk, out);
        } else {
            strided_rows::<E>(buf, b0, &blk, out);
        }
    }
}

/// A transpose: a strided run (at least a cache line between elements) under an outer loop that
/// moves by at most 16 bytes. With the outer loop moving by exactly one element, tiles load and
/// store whole slices; otherwise they only pay once the run spans more than [`ROW_LINES`] lines
/// (shorter rows stay in L1 between one row and the next).
fn is_transpose(blk: &Block, w: usize) -> bool {
    blk.b.unsigned_abs() >= LINE as u64
        && blk.a != 0
        && blk.a.unsigned_abs() <= 16
        && blk.m >= 4
        && blk.len >= 4
        && (blk.a == w as i64 || blk.len > ROW_LINES)
}

/// Rows of `len` contiguous elements: one slice copy each.
fn contiguous_rows(buf: &[u8], b0: i64, blk: &Block, w: usize, out: &mut impl Sink) {
    let row = blk.len * w;
    let mut at = b0;
    for _ in 0..blk.m {
        let s = at as usize;
        out.copy(&buf[s..s + row]);
        at += blk.a;
    }
}

/// Rows of `len` elements `b` bytes apart (any sign, or 0), in pieces of about [`PIECE`]
/// elements (a long row split, short rows taken several at a time): one load and one store per
/// element.
fn strided_rows<E: Elem>(buf: &[u8], b0: i64, blk: &Block, out: &mut impl Sink) {
    let mut start = b0;
    if blk.len < PIECE {
        let row = blk.len * E::W;
        let mut left = blk.m;
        while left > 0 {
            let rows = left.min(PIECE / blk.len);
            for d in out.next(rows * row).chunks_exact_mut(row) {
                E::strided(buf, start, blk.b, d);
                start += blk.a;
            }
            left -= rows;
        }
        return;
    }
    for _ in 0..blk.m {
        let mut first = start;
        let mut left = blk.len;
        while left > 0 {
            let k = left.min(PIECE);
            E::strided(buf, first, blk.b, out.next(k * E::W));
            first += k as i64 * blk.b;
            left -= k;
        }
        start += blk.a;
    }
}

/// A block read in bands of [`TILE`] rows, each band in `TILE × TILE` tiles, so the source
/// lines a tile reads and the output lines it writes stay in L1 while it runs. A full tile whose
/// columns are contiguous in the source (`a` one element) loads each column with one slice and
/// stores each row with one slice, through a small array; ragged edges and other `a` move element
/// by element.
fn tiles<E: Elem>(buf: &[u8], b0: i64, blk: &Block, out: &mut impl Sink) {
    // The element width as a const parameter, for the tile array's type.
    match E::W {
        1 => tiles_of::<E, 1>(buf, b0, blk, out),
        2 => tiles_of::<E, 2>(buf, b0, blk, out),
        4 => tiles_of::<E, 4>(buf, b0, blk, out),
        _ => tiles_of::<E, 8>(buf, b0, blk, out),
    }
}

fn tiles_of<E: Elem, const W: usize>(buf: &[u8], b0: i64, blk: &Block, out: &mut impl Sink) {
    let (m, n) = (blk.m, blk.len);
    let unit = blk.a == W as i64;
    let mut tmp = [[[0u8; W]; TILE]; TILE];
    let mut i0 = 0;
    while i0 < m {
        let rows = TILE.min(m - i0);
        let band = out.next(rows * n * W);
        // Where the band's row 0 starts in the source; rows below are relative to the band.
        let top = b0 + i0 as i64 * blk.a;
        let mut j0 = 0;
        while j0 < n {
            let cols = TILE.min(n - j0);
            if unit && rows == TILE && cols == TILE {
                for (jj, col) in tmp.iter_mut().enumerate() {
                    let lo = (top + (j0 + jj) as i64 * blk.b) as usize;
                    for (d, e) in col.iter_mut().zip(buf[lo..lo + TILE * W].chunks_exact(W)) {
                        d.copy_from_slice(e);
                    }
                }
                for ii in 0..TILE {
                    let o = (ii * n + j0) * W;
                    for (d, col) in band[o..o + TILE * W].chunks_exact_mut(W).zip(&tmp) {
                        d.copy_from_slice(&col[ii]);
                    }
                }
            } else {
                for r in 0..rows {
                    elements::<E>(buf, top, blk, band, r, j0..j0 + cols);
                }
            }
            j0 += cols;
        }
        i0 += rows;
    }
}

/// Output row `r` of a band whose row 0 starts at source byte `top`, columns `cols`, element by
/// element.
#[inline(always)]
fn elements<E: Elem>(
    buf: &[u8],
    top: i64,
    blk: &Block,
    band: &mut [u8],
    r: usize,
    cols: std::ops::Range<usize>,
) {
    let row = top + r as i64 * blk.a;
    let o = r * blk.len * E::W;
    for j in cols {
        let at = (row + j as i64 * blk.b) as usize;
        E::load(&buf[at..]).store(&mut band[o + j * E::W..]);
    }
}
