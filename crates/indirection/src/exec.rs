//! `Memory::doCopyIndirect` (seed 000 §6.3): a plan applied in order. Copy is a memcpy per
//! entry (duplicates: last writer wins); add runs numerics' `cast_copy_or_accumulate` per element
//! through one kernel picked per call ([`numerics::visit_accumulate`]), so duplicates accumulate
//! in list order and round to the destination dtype at every step.
//!
//! - [`gather`]: table (a buffer and its [`Layout`]) → a flat dense buffer (row `r` at
//!   `r·L` elements); rows the plan does not name keep their bytes.
//! - [`scatter`]: a flat dense buffer → the table, in place.
//! - [`serial`]: the same loop element by element over one buffer holding both sides, each side
//!   addressed through its layout and an optional element map. It is what operands sharing a
//!   buffer need (an entry written early is read by a later one, exactly as the reference's loop
//!   does) and the slow obvious twin the fast loops are tested against.
//!
//! Entries are contiguous runs of elements through the layout (`Entry::Contiguous`; in a
//! partitioned layout a run continues into the next partition row, as `runAP` does) or an AP walk
//! (`Entry::Walk`, GenericIndirect's non-indirect levels).

use crate::plan::Step;
use crate::{IndirectError, shape};
use access_pattern::{Layout, Pattern};
use bir_ir::{ApPair, Dtype, MemoryReductionOp};
use numerics::{Profile, ReduceVisitor, SliceReduce};

/// The elements of one table entry relative to its first element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry<'a> {
    /// `L` consecutive elements.
    Contiguous(usize),
    /// An AP walk (levels outermost first, steps in elements); its elements must be distinct
    /// for [`scatter`] (else use [`serial`]).
    Walk(&'a [ApPair]),
}

impl Entry<'_> {
    /// Elements per entry (L).
    pub fn len(&self) -> usize {
        match self {
            Entry::Contiguous(l) => *l,
            Entry::Walk(p) => p.iter().map(|q| usize::try_from(q.num).unwrap_or(0)).product(),
        }
    }

    /// True when an entry has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry's element offsets relative to its first, in AP order.
    pub fn offsets(&self) -> Vec<i64> {
        match self {
            Entry::Contiguous(l) => (0..*l as i64).collect(),
            Entry::Walk(p) => element_offsets(0, p),
        }
    }
}

/// Every element offset of an AP (`offset`, levels `pairs`), in AP order (level 0 outermost).
pub fn element_offsets(offset: i64, pairs: &[ApPair]) -> Vec<i64> {
    let n: usize = pairs.iter().map(|p| usize::try_from(p.num).unwrap_or(0)).product();
    let mut out = Vec::with_capacity(n);
    let mut coord = vec![0i64; pairs.len()];
    for _ in 0..n {
        let e = coord.iter().zip(pairs).fold(offset, |e, (c, p)| e.saturating_add(c.saturating_mul(p.step)));
        out.push(e);
        for l in (0..pairs.len()).rev() {
            coord[l] += 1;
            if coord[l] < pairs[l].num {
                break;
            }
            coord[l] = 0;
        }
    }
    out
}

#[cold]
fn outside<T>() -> Result<T, IndirectError> {
    shape("a planned entry or row lies outside its buffer")
}

/// Copies `len` elements from `start` of a table laid out as `layout` (not linear: a run crosses
/// partition rows at the pitch) into `out`.
fn read_run(
    table: &[u8],
    layout: &Layout,
    size: usize,
    start: i64,
    out: &mut [u8],
) -> Result<(), IndirectError> {
    let pitch = layout.pitch(size).max(1);
    let (mut e, mut done) = (start, 0usize);
    while done < out.len() {
        let Some(addr) = layout.address(e, size) else { return outside() };
        let intra = (e as u64 % pitch) as usize;
        let take = ((pitch as usize - intra) * size).min(out.len() - done);
        let Some(src) = table.get(addr..addr + take) else { return outside() };
        out[done..done + take].copy_from_slice(src);
        done += take;
        e += (take / size) as i64;
    }
    Ok(())
}

/// Applies `k` to the elements of a run of a non-linear table, piece by piece.
fn apply_run<K: SliceReduce>(
    k: &K,
    table: &mut [u8],
    layout: &Layout,
    size: usize,
    start: i64,
    src: &[u8],
) -> Result<(), IndirectError> {
    let pitch = layout.pitch(size).max(1);
    let (mut e, mut done) = (start, 0usize);
    while done < src.len() {
        let Some(addr) = layout.address(e, size) else { return outside() };
        let intra = (e as u64 % pitch) as usize;
        let take = ((pitch as usize - intra) * size).min(src.len() - done);
        let Some(dst) = table.get_mut(addr..addr + take) else { return outside() };
        k.apply(dst, &src[done..done + take]);
        done += take;
        e += (take / size) as i64;
    }
    Ok(())
}

/// Whole rows of `N`-byte elements from a linear table (element `e` = `t[e]`).
fn rows_linear<const N: usize>(
    t: &[[u8; N]],
    plan: &[Step],
    len: usize,
    out: &mut [[u8; N]],
) -> Result<(), IndirectError> {
    if len == 1 {
        for s in plan {
            let (Some(v), Some(d)) = (t.get(s.start as usize), out.get_mut(s.row)) else { return outside() };
            *d = *v;
        }
        return Ok(());
    }
    for s in plan {
        let a = s.start as usize;
        let b = s.row * len;
        let (Some(src), Some(dst)) = (t.get(a..a + len), out.get_mut(b..b + len)) else { return outside() };
        dst.copy_from_slice(src);
    }
    Ok(())
}

/// Gathers the plan's entries from `table` (laid out as `layout`, elements of `size` bytes)
/// into the flat dense buffer `out`: row `r` is elements `r·L .. (r+1)·L`. Rows not in the plan
/// are left as they are. In order (a row named twice keeps the later entry).
pub fn gather(
    table: &[u8],
    layout: &Layout,
    size: usize,
    entry: Entry<'_>,
    plan: &[Step],
    out: &mut [u8],
) -> Result<(), IndirectError> {
    layout.check_buffer(table.len())?;
    let len = entry.len();
    let row_bytes = len * size;
    match entry {
        Entry::Contiguous(_) if layout.is_linear(size) => {
            let Some(t) = table.get(layout.origin()..) else { return outside() };
            match size {
                1 => rows_linear::<1>(t.as_chunks::<1>().0, plan, len, out.as_chunks_mut::<1>().0),
                2 => rows_linear::<2>(t.as_chunks::<2>().0, plan, len, out.as_chunks_mut::<2>().0),
                4 => rows_linear::<4>(t.as_chunks::<4>().0, plan, len, out.as_chunks_mut::<4>().0),
                8 => rows_linear::<8>(t.as_chunks::<8>().0, plan, len, out.as_chunks_mut::<8>().0),
                _ => shape(format!("element size {size} is not 1, 2, 4 or 8")),
            }
        }
        Entry::Contiguous(_) => {
            for s in plan {
                let Some(dst) = out.get_mut(s.row * row_bytes..(s.row + 1) * row_bytes) else {
                    return outside();
                };
                read_run(table, layout, size, s.start, dst)?;
            }
            Ok(())
        }
        Entry::Walk(pairs) => {
            for s in plan {
                let Some(dst) = out.get_mut(s.row * row_bytes..(s.row + 1) * row_bytes) else {
                    return outside();
                };
                access_pattern::read(
                    table,
                    layout,
                    &Pattern { pairs, offset: s.start, elem_size: size },
                    dst,
                )?;
            }
            Ok(())
        }
    }
}

/// The scatter loop, run with the instruction's one kernel.
struct Scatter<'a, 'e> {
    values: &'a [u8],
    plan: &'a [Step],
    size: usize,
    entry: Entry<'e>,
    table: &'a mut [u8],
    layout: &'a Layout,
}

impl ReduceVisitor for Scatter<'_, '_> {
    type Out = Result<(), IndirectError>;

    fn visit<K: SliceReduce>(self, k: K) -> Self::Out {
        let Scatter { values, plan, size, entry, table, layout } = self;
        let row_bytes = entry.len() * size;
        let src_of = |s: &Step| values.get(s.row * row_bytes..(s.row + 1) * row_bytes);
        match entry {
            Entry::Contiguous(_) if layout.is_linear(size) => {
                let origin = layout.origin();
                for s in plan {
                    let a = origin + s.start as usize * size;
                    let (Some(src), Some(dst)) = (src_of(s), table.get_mut(a..a + row_bytes)) else {
                        return outside();
                    };
                    k.apply(dst, src);
                }
            }
            Entry::Contiguous(_) => {
                for s in plan {
                    let Some(src) = src_of(s) else { return outside() };
                    apply_run(&k, table, layout, size, s.start, src)?;
                }
            }
            Entry::Walk(pairs) => {
                let mut tmp = vec![0u8; row_bytes];
                for s in plan {
                    let Some(src) = src_of(s) else { return outside() };
                    let p = Pattern { pairs, offset: s.start, elem_size: size };
                    access_pattern::read(table, layout, &p, &mut tmp)?;
                    k.apply(&mut tmp, src);
                    access_pattern::write(table, layout, &p, &tmp)?;
                }
            }
        }
        Ok(())
    }
}

/// Scatters the flat dense buffer `values` (row `r` = elements `r·L .. (r+1)·L`) into the
/// plan's table entries, in order: `op` copy overwrites (last writer wins), add accumulates
/// through numerics (`dtype` is both sides'). An add into a dtype that does not reduce is an
/// error before anything is written.
#[expect(clippy::too_many_arguments, reason = "both sides and the reduce, each named")]
pub fn scatter(
    values: &[u8],
    plan: &[Step],
    entry: Entry<'_>,
    table: &mut [u8],
    layout: &Layout,
    op: MemoryReductionOp,
    dtype: Dtype,
    profile: &Profile,
) -> Result<(), IndirectError> {
    layout.check_buffer(table.len())?;
    let size = dtype.size();
    numerics::visit_accumulate(op, dtype, profile, Scatter { values, plan, size, entry, table, layout })?
}

/// How [`serial`] finds one side's element `e` in the buffer: `layout.address(map[e])` (or
/// `layout.address(e)` without a map).
#[derive(Clone, Copy, Debug)]
pub struct Addressing<'a> {
    /// The side's location layout.
    pub layout: Layout,
    /// Element numbers → element offsets in the location (e.g. an AP's elements in AP order).
    pub map: Option<&'a [i64]>,
}

impl Addressing<'_> {
    #[inline]
    fn byte(&self, e: i64, size: usize) -> Result<usize, IndirectError> {
        let e = match self.map {
            Some(m) => match usize::try_from(e).ok().and_then(|i| m.get(i)) {
                Some(&x) => x,
                None => return outside(),
            },
            None => e,
        };
        match self.layout.address(e, size) {
            Some(a) => Ok(a),
            None => outside(),
        }
    }
}

/// Which way [`serial`] moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Table entry → dense row (the Load family, IndirectCopy, Gather).
    Gather,
    /// Dense row → table entry (the Save family).
    Scatter,
}

/// The element-serial `doCopyIndirect` over one buffer holding both sides. For each step in
/// order: copy reads the whole source entry, then writes it (a memmove); add combines element by
/// element in order, each read just before its accumulate (the reference's inner loop).
/// Table element `k` of a step is `start + entry[k]`; dense element `k` is `row·L + k`.
#[expect(clippy::too_many_arguments, reason = "both sides and the reduce, each named")]
pub fn serial(
    buf: &mut [u8],
    dir: Direction,
    table: &Addressing<'_>,
    entry: &[i64],
    dense: &Addressing<'_>,
    plan: &[Step],
    op: MemoryReductionOp,
    dtype: Dtype,
    profile: &Profile,
) -> Result<(), IndirectError> {
    let size = dtype.size();
    table.layout.check_buffer(buf.len())?;
    dense.layout.check_buffer(buf.len())?;
    if op != MemoryReductionOp::Copy && !dtype.is_reducible() {
        return Err(numerics::NumericsError::UnsupportedReduceDtype(dtype, op).into());
    }
    let len = entry.len();
    let mut tmp = vec![0u8; len * size];
    for s in plan {
        let t = |k: usize| table.byte(s.start.saturating_add(entry[k]), size);
        let d = |k: usize| dense.byte((s.row * len + k) as i64, size);
        let (from, to): (&dyn Fn(usize) -> _, &dyn Fn(usize) -> _) = match dir {
            Direction::Gather => (&t, &d),
            Direction::Scatter => (&d, &t),
        };
        if op == MemoryReductionOp::Copy {
            for k in 0..len {
                let a = from(k)?;
                tmp[k * size..(k + 1) * size].copy_from_slice(&buf[a..a + size]);
            }
            for k in 0..len {
                let b = to(k)?;
                buf[b..b + size].copy_from_slice(&tmp[k * size..(k + 1) * size]);
            }
        } else {
            for k in 0..len {
                let (a, b) = (from(k)?, to(k)?);
                let mut v = [0u8; 8];
                v[..size].copy_from_slice(&buf[a..a + size]);
                numerics::accumulate(op, dtype, &mut buf[b..b + size], &v[..size], profile)?;
            }
        }
    }
    Ok(())
}
