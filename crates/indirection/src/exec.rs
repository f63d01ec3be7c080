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

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use test_rng::XorShift64Star;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn to_f32(b: &[u8]) -> Vec<f32> {
        b.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect()
    }

    /// Colliding pairs and all-colliding adds in fp32, worked by hand; copy keeps the last.
    #[test]
    fn duplicates_accumulate_in_order() {
        let mut table = f32s(&[0.0; 4]);
        let values = f32s(&[1.0, 2.0, 3.0, 4.0]);
        let layout = Layout::flat(0, 16);
        let plan = [
            Step { row: 0, start: 1 },
            Step { row: 1, start: 1 },
            Step { row: 2, start: 3 },
            Step { row: 3, start: 3 },
        ];
        let p = Profile::refsim();
        scatter(
            &values,
            &plan,
            Entry::Contiguous(1),
            &mut table,
            &layout,
            MemoryReductionOp::Add,
            Dtype::Float32,
            &p,
        )
        .unwrap();
        assert_eq!(to_f32(&table), [0.0, 3.0, 0.0, 7.0]);
        scatter(
            &values,
            &plan,
            Entry::Contiguous(1),
            &mut table,
            &layout,
            MemoryReductionOp::Copy,
            Dtype::Float32,
            &p,
        )
        .unwrap();
        assert_eq!(to_f32(&table), [0.0, 2.0, 0.0, 4.0]);
        // uint8 does not reduce: an error, nothing written.
        let mut t8 = vec![9u8; 4];
        let e = scatter(
            &[1, 2],
            &plan[..2],
            Entry::Contiguous(1),
            &mut t8,
            &Layout::flat(0, 4),
            MemoryReductionOp::Add,
            Dtype::Uint8,
            &p,
        );
        assert!(matches!(e, Err(IndirectError::Numerics(_))));
        assert_eq!(t8, [9; 4]);
    }

    /// The fast gather/scatter loops against the element-serial twin: a table in a partitioned
    /// layout whose rows are padded (entries cross partition rows), linear tables, walks,
    /// duplicates, every element width, copy and add.
    #[rstest]
    #[case::f32_linear(Dtype::Float32, false, 1)]
    #[case::f32_padded_rows(Dtype::Float32, true, 2)]
    #[case::bf16_padded_rows(Dtype::Bfloat16, true, 3)]
    #[case::bf16_linear(Dtype::Bfloat16, false, 4)]
    #[case::int32(Dtype::Int32, true, 5)]
    #[case::int64(Dtype::Int64, false, 6)]
    #[case::fp8(Dtype::Float8E4, true, 7)]
    #[case::uint8_copy(Dtype::Uint8, true, 8)]
    fn fast_paths_match_the_serial_twin(#[case] dt: Dtype, #[case] padded: bool, #[case] seed: u64) {
        let mut rng = XorShift64Star::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let size = dt.size();
        let p = Profile::refsim();
        for round in 0..6 {
            // Table: 4 partitions of `pitch` elements; rows `row_stride` bytes apart.
            let pitch = 3 + (rng.next_u64() % 7) as usize;
            let stride = if padded { pitch * size + 8 } else { pitch * size };
            let layout = Layout::partitioned(0, 4, (pitch * size) as u64, stride as u64);
            let cap = 4 * pitch;
            let tbytes = 4 * stride;
            let walk = [ApPair::new(2, 2), ApPair::new(1, 2)];
            let entry = if round % 3 == 2 {
                Entry::Walk(&walk)
            } else {
                Entry::Contiguous(1 + (rng.next_u64() % 4) as usize)
            };
            // The walk [[2, 2], [1, 2]] reaches elements 0..=3 of its first; a run 0..=L−1.
            let (lo, hi) = (0i64, 3i64);
            let len = entry.len();
            let hi = if let Entry::Contiguous(l) = entry { l as i64 - 1 } else { hi };
            let rows = 1 + (rng.next_u64() % 9) as usize;
            // Plan: duplicate-heavy starts, rows in order (some rows repeated for the gather).
            let n = 1 + (rng.next_u64() % 12) as usize;
            let plan: Vec<Step> = (0..n)
                .map(|_| Step {
                    row: (rng.next_u64() % rows as u64) as usize,
                    start: (rng.next_u64() % (cap as u64 - hi as u64)) as i64 - lo,
                })
                .collect();
            let mut buf: Vec<u8> =
                (0..tbytes + rows * len * size).map(|_| (rng.next_u64() % 64) as u8).collect();
            let dense_layout = Layout::flat(tbytes, (rows * len * size) as u64);
            let table_addr = Addressing { layout, map: None };
            let dense_addr = Addressing { layout: dense_layout, map: None };
            let rel = entry.offsets();
            // Gather.
            let mut slow = buf.clone();
            serial(
                &mut slow,
                Direction::Gather,
                &table_addr,
                &rel,
                &dense_addr,
                &plan,
                MemoryReductionOp::Copy,
                dt,
                &p,
            )
            .unwrap();
            let mut fast = buf.clone();
            let (t, d) = fast.split_at_mut(tbytes);
            gather(t, &layout, size, entry, &plan, d).unwrap();
            assert_eq!(fast, slow, "gather round {round}");
            // Scatter, copy and (for reducible dtypes) add.
            let ops: &[MemoryReductionOp] = if dt.is_reducible() {
                &[MemoryReductionOp::Copy, MemoryReductionOp::Add]
            } else {
                &[MemoryReductionOp::Copy]
            };
            // Values must not be NaN-sensitive: keep fp8/bf16 bytes small (finite).
            if dt == Dtype::Bfloat16 {
                for c in buf.chunks_exact_mut(2) {
                    c[1] &= 0x3F;
                }
            }
            if dt == Dtype::Float32 {
                for c in buf.chunks_exact_mut(4) {
                    c[3] &= 0x3F;
                }
            }
            for &op in ops {
                let mut slow = buf.clone();
                serial(&mut slow, Direction::Scatter, &table_addr, &rel, &dense_addr, &plan, op, dt, &p)
                    .unwrap();
                let mut fast = buf.clone();
                let (t, d) = fast.split_at_mut(tbytes);
                scatter(d, &plan, entry, t, &layout, op, dt, &p).unwrap();
                assert_eq!(fast, slow, "scatter {op:?} round {round}");
            }
        }
    }

    /// One buffer holding both sides: a later entry reads what an earlier one wrote.
    #[test]
    fn serial_sees_earlier_writes() {
        // Elements [0, 1, 2, 3]. Step 0: dense row 0 (elements 2, 3) ← entry 0 (elements 0, 1)
        // → [0, 1, 0, 1]. Step 1: dense row 1 (elements 0, 1) ← entry at 2 (elements 2, 3, as
        // step 0 left them) = [0, 1]. Reading everything first would give [2, 3, 0, 1].
        let mut buf = f32s(&[0.0, 1.0, 2.0, 3.0]);
        let l = Layout::flat(0, 16);
        let dense_map = [2, 3, 0, 1];
        let plan = [Step { row: 0, start: 0 }, Step { row: 1, start: 2 }];
        serial(
            &mut buf,
            Direction::Gather,
            &Addressing { layout: l, map: None },
            &[0, 1],
            &Addressing { layout: l, map: Some(&dense_map) },
            &plan,
            MemoryReductionOp::Copy,
            Dtype::Float32,
            &Profile::refsim(),
        )
        .unwrap();
        assert_eq!(to_f32(&buf), [0.0, 1.0, 0.0, 1.0]);
    }
}
