//! Descriptor generation (seed 004 §6 mechanism C; seed 000 §1.3 for the fusion; docs/dge.md
//! "The rules").
//!
//! - Direct kinds ([`direct`], [`transpose`], [`replicate`]): the two APs' levels are refined into
//!   one joint walk (each level a common factor of both shapes, innermost first), mapped to bytes
//!   through each side's `Layout`, unit dims dropped, contiguous inner levels fused into the
//!   element (on BOTH sides), adjacent levels fused where the outer step is the inner span on both
//!   sides, then split into descriptors of at most five dims. A walk a layout cannot express
//!   affinely (a run crossing a partition row of a shared arena) is split at its outermost level,
//!   and a single level at the row crossings.
//! - Indirect kinds ([`indirect_rows`] for the BIR IndirectLoad/IndirectSave, [`indirect1d`] for a
//!   DMA_INDIRECT1D-shaped request): one descriptor per in-bounds index, the address formed by the
//!   64-bit unsigned × signed multiply-accumulate of `do_indirection` ([`mac`]).
//! - [`gather_transpose`]: the GATHER_XPOSE constraints (each a located [`Violation`]) and the
//!   16 × 128 tiles.

use crate::descriptor::{ComputeOp, DescriptorError, DgeKind, Dim, MAX_DIMS};
use crate::{Descriptor, DgeComputeOp};
use access_pattern::{ApError, Layout, Pattern};
use bir_ir::{ApPair, Dtype};
use indirection::IndirectError;
use indirection::plan::{self, Oob, Step, Table, Wrap};

/// Why a DMA cannot become descriptors. Every variant names the operand or field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DgeError {
    /// An access-pattern error on one side (bounds, shape, overflow).
    #[error("{side}: {error}")]
    Access {
        /// `ins[0]`, `outs[0]`, ….
        side: &'static str,
        /// The AP error.
        error: ApError,
    },
    /// The two sides move different element counts.
    #[error("the source moves {src} elements but the destination {dst}")]
    Count {
        /// Source elements.
        src: u64,
        /// Destination elements.
        dst: u64,
    },
    /// Operand shapes that do not fit the mode.
    #[error("{0}")]
    Shape(String),
    /// A DMA the descriptor model does not express (G31: casting copies, CCE reduces, …).
    #[error("not expressible as descriptors: {0}")]
    Unsupported(String),
    /// An index error from the indirection plan builders.
    #[error(transparent)]
    Indirect(#[from] IndirectError),
    /// A count too large for a descriptor field.
    #[error("{what} = {value} does not fit a descriptor's {bits}-bit field")]
    TooLarge {
        /// The quantity.
        what: &'static str,
        /// Its value.
        value: u128,
        /// The field width.
        bits: u32,
    },
    /// A malformed descriptor.
    #[error(transparent)]
    Descriptor(#[from] DescriptorError),
    /// GATHER_XPOSE constraint violations (all of them).
    #[error("{}", .0.iter().map(|v| format!("{}: {} ({})", v.field, v.message, v.rule)).collect::<Vec<_>>().join("; "))]
    GatherTranspose(Vec<Violation>),
    /// An ISA word the datapath would refuse (validation, a marker, an index bound, a
    /// duplicate scatter target), located by field.
    #[error("{field}: {message}")]
    Isa {
        /// The word's field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An address outside the 64-bit space.
    #[error("an address of {side} leaves the 64-bit address space")]
    Address {
        /// The side.
        side: &'static str,
    },
}

/// One violated GATHER_XPOSE constraint, located by field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The field path, e.g. `src.num_elem[1]`.
    pub field: &'static str,
    /// The rule id, e.g. `src-y-multiple-of-16`.
    pub rule: &'static str,
    /// What is wrong.
    pub message: String,
}

/// One side of a direct DMA: where its location is in the address space and which elements
/// the AP names.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    /// Which operand (`ins[0]`, `outs[0]`), for errors.
    pub name: &'static str,
    /// The location's base address (G9: [`crate::address::location_base`]).
    pub base: u64,
    /// Where the location's elements are in its buffer.
    pub layout: Layout,
    /// The AP's levels, outermost first, in elements.
    pub pairs: &'a [ApPair],
    /// The AP's start element.
    pub offset: i64,
}

/// Joint levels: at most 5 + 5 − 1 after refinement, plus room.
const MAX_LEVELS: usize = 2 * MAX_DIMS;

/// One joint level: `num` indices, `s`/`d` the source/destination steps (elements or bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Lv {
    num: u64,
    s: i64,
    d: i64,
}

/// How one side's elements map to address-space bytes.
#[derive(Clone, Copy, Debug)]
struct Map {
    base: u64,
    layout: Layout,
    size: i64,
    linear: bool,
    pitch: i64,
    row_stride: i64,
}

impl Map {
    fn new(base: u64, layout: Layout, size: usize) -> Map {
        let pitch = layout.pitch(size) as i64;
        let linear = layout.is_linear(size);
        let row_stride = layout.row_stride() as i64;
        Map { base, layout, size: size as i64, linear, pitch: pitch.max(1), row_stride }
    }

    /// The address of element `e` (in bounds: checked by the caller).
    #[inline]
    fn addr(&self, e: i64) -> Option<u64> {
        if self.linear {
            return self.base.checked_add(u64::try_from(e).ok()?.checked_mul(self.size as u64)?);
        }
        let rel = self.layout.address(e, self.size as usize)? - self.layout.origin();
        self.base.checked_add(rel as u64)
    }

    /// Byte steps of `levels` from element `off` when the walk is affine in bytes (every
    /// element's address = addr(off) + Σ i·byte_step), else `None` (docs/dge.md rule 3).
    #[inline]
    fn affine(&self, off: i64, levels: &[Lv], source: bool, out: &mut [i64; MAX_LEVELS]) -> Option<u64> {
        let step = |l: &Lv| if source { l.s } else { l.d };
        if self.linear {
            for (o, l) in out.iter_mut().zip(levels) {
                *o = step(l).checked_mul(self.size)?;
            }
            return self.addr(off);
        }
        let r0 = off.rem_euclid(self.pitch);
        let (mut lo, mut hi) = (r0, r0);
        for (o, l) in out.iter_mut().zip(levels) {
            let st = step(l);
            if st % self.pitch == 0 {
                *o = (st / self.pitch).checked_mul(self.row_stride)?;
            } else {
                *o = st.checked_mul(self.size)?;
                let span = st.checked_mul(l.num as i64 - 1)?;
                if span < 0 {
                    lo += span;
                } else {
                    hi += span;
                }
            }
        }
        if lo < 0 || hi >= self.pitch {
            return None;
        }
        self.addr(off)
    }

    /// The byte step of a level that stays in one row (or steps whole rows).
    #[inline]
    fn level_bytes(&self, step: i64) -> Option<i64> {
        if !self.linear && step % self.pitch == 0 {
            (step / self.pitch).checked_mul(self.row_stride)
        } else {
            step.checked_mul(self.size)
        }
    }

    /// How many indices of a single level from element `off` stay in one row (`u64::MAX` when
    /// the level never crosses a row).
    fn in_row(&self, off: i64, step: i64) -> u64 {
        if self.linear || step % self.pitch == 0 {
            return u64::MAX;
        }
        let r = off.rem_euclid(self.pitch);
        if step > 0 { ((self.pitch - 1 - r) / step + 1) as u64 } else { (r / -step + 1) as u64 }
    }
}

/// The emitter: one kind, one dtype, two maps, the output list.
struct Emit<'o> {
    kind: DgeKind,
    dtype: Dtype,
    op: DgeComputeOp,
    src: Map,
    dst: Map,
    out: &'o mut Vec<Descriptor>,
}

impl Emit<'_> {
    /// One level of `n` elements from `soff`/`doff`, steps `s`/`d` elements, known to stay
    /// affine on both sides (linear maps, or a piece inside one row): the descriptor directly.
    #[inline]
    fn single(&mut self, soff: i64, doff: i64, n: u64, s: i64, d: i64) -> Result<(), DgeError> {
        let (Some(sa), Some(da)) = (self.src.addr(soff), self.dst.addr(doff)) else {
            return Err(DgeError::Address { side: "an element" });
        };
        let size = self.src.size;
        let (Some(sb), Some(db)) = (self.src.level_bytes(s), self.dst.level_bytes(d)) else {
            return Err(DgeError::Address { side: "a step" });
        };
        let total = (n as u128) * (size as u128);
        let d = if n == 1 {
            Descriptor::new(self.kind, sa, da, size as u32, &[], self.op, self.dtype)?
        } else if sb == size && db == size && total <= u128::from(u32::MAX) {
            Descriptor::new(self.kind, sa, da, total as u32, &[], self.op, self.dtype)?
        } else {
            let num = u32::try_from(n).map_err(|_| DgeError::TooLarge {
                what: "a dim's num",
                value: n.into(),
                bits: 32,
            })?;
            Descriptor::new(self.kind, sa, da, size as u32, &[Dim::new(num, sb, db)], self.op, self.dtype)?
        };
        self.out.push(d);
        Ok(())
    }

    /// Emits the walk `levels` (outermost first, no unit levels) from elements `soff`/`doff`.
    fn walk(&mut self, levels: &[Lv], soff: i64, doff: i64) -> Result<(), DgeError> {
        let (mut sb, mut db) = ([0i64; MAX_LEVELS], [0i64; MAX_LEVELS]);
        if let (Some(sa), Some(da)) =
            (self.src.affine(soff, levels, true, &mut sb), self.dst.affine(doff, levels, false, &mut db))
        {
            return self.push(levels, sa, &sb, da, &db);
        }
        match levels.split_first() {
            Some((outer, inner)) if !inner.is_empty() => {
                let (mut s, mut d) = (soff, doff);
                for _ in 0..outer.num {
                    self.walk(inner, s, d)?;
                    s = s.wrapping_add(outer.s);
                    d = d.wrapping_add(outer.d);
                }
                Ok(())
            }
            Some((only, _)) => {
                // One level crossing rows: pieces that stay inside a row on both sides.
                let mut done = 0u64;
                while done < only.num {
                    let s = soff.wrapping_add(only.s.wrapping_mul(done as i64));
                    let d = doff.wrapping_add(only.d.wrapping_mul(done as i64));
                    let n = (only.num - done).min(self.src.in_row(s, only.s)).min(self.dst.in_row(d, only.d));
                    self.single(s, d, n, only.s, only.d)?;
                    done += n;
                }
                Ok(())
            }
            None => Err(DgeError::Address { side: "an element" }),
        }
    }

    /// Fuses byte levels into dims (docs/dge.md rule 4) and pushes the descriptor(s).
    fn push(&mut self, levels: &[Lv], sa: u64, sb: &[i64], da: u64, db: &[i64]) -> Result<(), DgeError> {
        let mut elem = self.src.size as u64;
        let mut dims = [Dim::new(1, 0, 0); MAX_LEVELS];
        let mut n = 0usize;
        // Innermost first.
        for k in (0..levels.len()).rev() {
            let (num, s, d) = (levels[k].num, sb[k], db[k]);
            if num == 1 {
                continue;
            }
            let e = elem as i64;
            if n == 0
                && s == e
                && d == e
                && let Some(v) = elem.checked_mul(num).filter(|v| *v <= u64::from(u32::MAX))
            {
                elem = v;
                continue;
            }
            if n > 0 {
                let last = &mut dims[n - 1];
                let ln = i64::from(last.num);
                if Some(s) == last.src_step.checked_mul(ln)
                    && Some(d) == last.dst_step.checked_mul(ln)
                    && let Some(v) = u64::from(last.num).checked_mul(num).and_then(|v| u32::try_from(v).ok())
                {
                    last.num = v;
                    continue;
                }
            }
            let num32 = u32::try_from(num).map_err(|_| DgeError::TooLarge {
                what: "a dim's num",
                value: num.into(),
                bits: 32,
            })?;
            dims[n] = Dim::new(num32, s, d);
            n += 1;
        }
        let elem = elem as u32; // ≤ u32::MAX by construction
        if n <= MAX_DIMS {
            self.out.push(Descriptor::new(self.kind, sa, da, elem, &dims[..n], self.op, self.dtype)?);
            return Ok(());
        }
        // More than five dims: one descriptor per index of the outer ones (outer odometer).
        let outer = &dims[MAX_DIMS..n];
        let mut idx = [0u32; MAX_LEVELS];
        let total = outer.iter().fold(1u64, |n, d| n.saturating_mul(u64::from(d.num)));
        for _ in 0..total {
            let (mut s, mut d) = (sa, da);
            for (i, o) in idx.iter().zip(outer) {
                s = s.wrapping_add_signed(i64::from(*i).wrapping_mul(o.src_step));
                d = d.wrapping_add_signed(i64::from(*i).wrapping_mul(o.dst_step));
            }
            self.out.push(Descriptor::new(self.kind, s, d, elem, &dims[..MAX_DIMS], self.op, self.dtype)?);
            for (i, o) in idx.iter_mut().zip(outer) {
                *i += 1;
                if *i < o.num {
                    break;
                }
                *i = 0;
            }
        }
        Ok(())
    }
}

/// The non-unit levels of an AP, innermost first.
fn nonunit(pairs: &[ApPair]) -> impl Iterator<Item = (u64, i64)> + '_ {
    pairs.iter().rev().filter(|p| p.num != 1).map(|p| (p.num as u64, p.step))
}

/// The joint refinement of two shapes (docs/dge.md rule 2): innermost first, the smaller of the
/// two current levels is taken whole and the larger split by it when it divides; `false` when
/// some level pair does not divide (then the caller pairs runs instead).
fn joint(src: &[ApPair], dst: &[ApPair], out: &mut [Lv; MAX_LEVELS]) -> Option<usize> {
    let mut s = nonunit(src);
    let mut d = nonunit(dst);
    let (mut a, mut b) = (s.next(), d.next());
    let mut n = 0;
    loop {
        match (a, b) {
            (None, None) => return Some(n),
            (Some((an, as_)), Some((bn, bs))) => {
                if n == MAX_LEVELS {
                    return None;
                }
                let m = an.min(bn);
                if an % m != 0 || bn % m != 0 {
                    return None;
                }
                out[n] = Lv { num: m, s: as_, d: bs };
                n += 1;
                a = if an == m { s.next() } else { Some((an / m, as_.checked_mul(m as i64)?)) };
                b = if bn == m { d.next() } else { Some((bn / m, bs.checked_mul(m as i64)?)) };
            }
            _ => return None,
        }
    }
}

/// Checks one side against its layout and returns its element count.
fn check(o: &Operand<'_>, size: usize) -> Result<u64, DgeError> {
    let p = Pattern { pairs: o.pairs, offset: o.offset, elem_size: size };
    let side = o.name;
    access_pattern::check_bounds(&o.layout, &p).map_err(|error| DgeError::Access { side, error })?;
    p.elements().map_err(|error| DgeError::Access { side, error })
}

/// The descriptors of a direct copy of `src`'s elements onto `dst`'s, in AP order, both of
/// `dtype` (no cast: G31), appended to `out` with kind `kind` (seed 000 §1.3; docs/dge.md).
pub fn direct(
    kind: DgeKind,
    src: &Operand<'_>,
    dst: &Operand<'_>,
    dtype: Dtype,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    pair(kind, src, dst, dtype, ComputeOp::None, out)
}

/// [`direct`] with a compute op (descriptors combine `dst = dst op src`).
pub fn pair(
    kind: DgeKind,
    src: &Operand<'_>,
    dst: &Operand<'_>,
    dtype: Dtype,
    op: DgeComputeOp,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    let size = dtype.size();
    let (ns, nd) = (check(src, size)?, check(dst, size)?);
    if ns != nd {
        return Err(DgeError::Count { src: ns, dst: nd });
    }
    let mut e = Emit {
        kind,
        dtype,
        op,
        src: Map::new(src.base, src.layout, size),
        dst: Map::new(dst.base, dst.layout, size),
        out,
    };
    let mut lv = [Lv::default(); MAX_LEVELS];
    if let Some(n) = joint(src.pairs, dst.pairs, &mut lv) {
        lv[..n].reverse();
        return e.walk(&lv[..n], src.offset, dst.offset);
    }
    // Shapes that do not refine: pair the two run lists chunk by chunk.
    let runs = |o: &Operand<'_>| {
        Pattern { pairs: o.pairs, offset: o.offset, elem_size: size }
            .runs()
            .map_err(|error| DgeError::Access { side: o.name, error })
    };
    let (mut rs, mut rd) = (runs(src)?, runs(dst)?);
    let (mut cs, mut cd) = (rs.next(), rd.next());
    let (mut us, mut ud) = (0u64, 0u64);
    while let (Some(a), Some(b)) = (cs, cd) {
        let n = (a.len - us).min(b.len - ud);
        let piece = [Lv { num: n, s: a.stride, d: b.stride }];
        let so = a.start.wrapping_add(a.stride.wrapping_mul(us as i64));
        let dof = b.start.wrapping_add(b.stride.wrapping_mul(ud as i64));
        e.walk(if n == 1 { &[] } else { &piece }, so, dof)?;
        us += n;
        ud += n;
        if us == a.len {
            (cs, us) = (rs.next(), 0);
        }
        if ud == b.len {
            (cd, ud) = (rd.next(), 0);
        }
    }
    Ok(())
}

/// DMACopy Transpose (D2; docs/dge.md "TRANSPOSE"): `dst = numpy.transpose(src, perm)` over
/// 4-level APs is the direct walk of the destination against the source AP with its levels
/// permuted (`src level perm[k]` becomes level `k`), emitted as kind TRANSPOSE; the dims carry
/// the permuted source steps.
pub fn transpose(
    src: &Operand<'_>,
    dst: &Operand<'_>,
    perm: [usize; 4],
    dtype: Dtype,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    if src.pairs.len() != 4 || dst.pairs.len() != 4 {
        return Err(DgeError::Shape("a DMA transpose needs 4-level access patterns".into()));
    }
    let mut permuted = [ApPair::new(0, 1); 4];
    for (k, &p) in perm.iter().enumerate() {
        let Some(q) = src.pairs.get(p) else {
            return Err(DgeError::Shape("a transpose permutation names a level past 3".into()));
        };
        permuted[k] = *q;
        if dst.pairs[k].num != q.num {
            return Err(DgeError::Shape("a DMA transpose needs dst.num[k] = src.num[perm[k]]".into()));
        }
    }
    check(src, dtype.size())?;
    let s = Operand { pairs: &permuted, ..*src };
    direct(DgeKind::Transpose, &s, dst, dtype, out)
}

/// DMACopy Replicate (D3): 2-level APs, destination partition `p` ← source partition
/// `p mod src partitions`: the direct walk of `dst` as `[dp/sp, sp, F]` against `src` with a
/// zero-step outer level.
pub fn replicate(
    src: &Operand<'_>,
    dst: &Operand<'_>,
    dtype: Dtype,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    let (&[sp, sf], &[dp, df]) = (src.pairs, dst.pairs) else {
        return Err(DgeError::Shape("DMA replicate needs 2-level access patterns".into()));
    };
    if sp.num < 1 || dp.num % sp.num != 0 || sf.num != df.num {
        return Err(DgeError::Shape(
            "DMA replicate needs dst partitions a multiple of src partitions and equal free sizes".into(),
        ));
    }
    check(src, dtype.size())?;
    check(dst, dtype.size())?;
    let reps = dp.num / sp.num;
    let s3 = [ApPair::new(0, reps), sp, sf];
    let d3 = [ApPair::new(dp.step.saturating_mul(sp.num), reps), ApPair::new(dp.step, sp.num), df];
    direct(DgeKind::Direct2D, &Operand { pairs: &s3, ..*src }, &Operand { pairs: &d3, ..*dst }, dtype, out)
}

/// Which side of an indirect op the index applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The table is the source (IndirectLoad): dense row `j` ← entry `idx[j]`.
    Gather,
    /// The table is the destination (IndirectSave): entry `idx[j]` ← dense row `j`.
    Scatter,
}

/// IndirectLoad / IndirectSave (seed 000 §6.2 "plain gather"; fidelity I1–I4): the plan of
/// `indirection::plan::rows` (wrap, −1 skip, bound, location checks, `oob` policy; `operand` =
/// the index operand's `ins` slot for errors), then one INDIRECT1D descriptor per planned row:
/// the table entry (`len` = the dense AP's last-level num contiguous elements from the planned
/// start) against dense row `j` (the dense AP's elements `j·len .. (j+1)·len`).
#[expect(clippy::too_many_arguments, reason = "the op's operands and policies, each named")]
pub fn indirect_rows(
    dir: Direction,
    table: &Operand<'_>,
    idx: &[u64],
    dense: &Operand<'_>,
    wrap: Option<Wrap>,
    oob: Oob,
    operand: usize,
    dtype: Dtype,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    let t = table_of(table, dense, None, dtype)?;
    let mut steps: Vec<Step> = Vec::new();
    plan::rows(idx, &t, wrap, oob, operand, &mut steps)?;
    emit_plan(dir, table, &steps, dense, dtype, ComputeOp::None, out)
}

/// IndirectSaveAccumulate (seed 000 §6.2, the 2-D entry-major build; I5, I6):
/// `indirection::plan::save_accumulate` over the index operand's `partitions` partitions with
/// `num_indices` used slots and entries `entry_step` elements apart, then one INDIRECT1D per
/// planned slot from values row `k` into its entry, with `op` (NONE for bypass, ADD for add:
/// `dst = dst + src` in fp32 rounded at every step for a float, wrapping for int32 / int64, so
/// duplicates accumulate in plan order as `cast_copy_or_accumulate` does; G41, G47).
#[expect(clippy::too_many_arguments, reason = "the op's operands and policies, each named")]
pub fn indirect_save_accumulate(
    values: &Operand<'_>,
    idx: &[u64],
    partitions: usize,
    num_indices: u64,
    table: &Operand<'_>,
    entry_step: i64,
    wrap: Option<Wrap>,
    oob: Oob,
    op: DgeComputeOp,
    dtype: Dtype,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    let t = table_of(table, values, Some(entry_step), dtype)?;
    let mut steps: Vec<Step> = Vec::new();
    plan::save_accumulate(idx, partitions, num_indices, &t, wrap, oob, 1, &mut steps)?;
    emit_plan(Direction::Scatter, table, &steps, values, dtype, op, out)
}

/// The table of a Load/Save-family op: entry r is the dense AP's last-level num contiguous
/// elements from `offset + r·step` (the table AP's last-level step unless given), bounded only
/// by the table's location (seed 000 §6.1/§6.3; fidelity I2, I4).
fn table_of(
    table: &Operand<'_>,
    dense: &Operand<'_>,
    step: Option<i64>,
    dtype: Dtype,
) -> Result<Table, DgeError> {
    let size = dtype.size();
    let Some(last) = table.pairs.last() else {
        return Err(DgeError::Access { side: table.name, error: ApError::NoDims });
    };
    let Some(dlast) = dense.pairs.last() else {
        return Err(DgeError::Access { side: dense.name, error: ApError::NoDims });
    };
    check(dense, size)?;
    Ok(Table::contiguous(
        table.offset,
        step.unwrap_or(last.step),
        dlast.num.max(1) as u64,
        table.layout.capacity(size),
    ))
}

/// One INDIRECT1D (or more, split at row crossings) per planned step (dense row ↔ table entry).
fn emit_plan(
    dir: Direction,
    table: &Operand<'_>,
    steps: &[Step],
    dense: &Operand<'_>,
    dtype: Dtype,
    op: DgeComputeOp,
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    let size = dtype.size();
    let Some(dlast) = dense.pairs.last() else {
        return Err(DgeError::Access { side: dense.name, error: ApError::NoDims });
    };
    let len = dlast.num.max(1);
    let tm = Map::new(table.base, table.layout, size);
    let dm = Map::new(dense.base, dense.layout, size);
    let (src, dst) = match dir {
        Direction::Gather => (tm, dm),
        Direction::Scatter => (dm, tm),
    };
    let mut e = Emit { kind: DgeKind::Indirect1D, dtype, op, src, dst, out };
    // Dense row j = the outer levels' coordinate j, the last level whole: an odometer over the
    // outer levels, advanced to each planned row (set afresh when the plan goes back, as the
    // entry-major save-accumulate plan does).
    let outer = &dense.pairs[..dense.pairs.len() - 1];
    let fast = e.src.linear && e.dst.linear;
    out_reserve(e.out, steps.len());
    let mut coord = [0i64; bir_ir::MAX_AP_DIMS];
    let (mut cur, mut row) = (0usize, dense.offset);
    let n = len as u64;
    for st in steps {
        if st.row < cur {
            let mut rest = st.row as u64;
            row = dense.offset;
            for (l, p) in outer.iter().enumerate().rev() {
                let k = p.num.max(1) as u64;
                coord[l] = (rest % k) as i64;
                row = row.wrapping_add(coord[l].wrapping_mul(p.step));
                rest /= k;
            }
            cur = st.row;
        }
        while cur < st.row {
            for (l, p) in outer.iter().enumerate().rev() {
                coord[l] += 1;
                row = row.wrapping_add(p.step);
                if coord[l] < p.num {
                    break;
                }
                row = row.wrapping_sub(p.step.wrapping_mul(p.num));
                coord[l] = 0;
            }
            cur += 1;
        }
        let (so, dof, ss, ds) = match dir {
            Direction::Gather => (st.start, row, 1, dlast.step),
            Direction::Scatter => (row, st.start, dlast.step, 1),
        };
        if fast {
            e.single(so, dof, n, ss, ds)?;
        } else {
            let lv = Lv { num: n, s: ss, d: ds };
            e.walk(if len == 1 { &[] } else { std::slice::from_ref(&lv) }, so, dof)?;
        }
    }
    Ok(())
}

fn out_reserve(out: &mut Vec<Descriptor>, n: usize) {
    // Best effort: a huge plan was already reserved by the plan builder.
    let _ = out.try_reserve(n);
}

/// `do_indirection`'s address MAC (seed 004 §6: "IVP_MULUSAN_2X32", unsigned index × signed
/// step accumulated into a 64-bit address): `base + index·step` in 64-bit two's complement.
#[inline]
pub fn mac(base: u64, index: u32, step: i64) -> u64 {
    base.wrapping_add(u64::from(index).wrapping_mul(step as u64))
}

/// Which sides of a DMA_INDIRECT1D are indexed (seed 004 §3c `indirect_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndirectMode {
    /// Source indexed (gather).
    Src,
    /// Destination indexed (scatter).
    Dst,
    /// Both, with independent index lists.
    Both,
}

/// A DMA_INDIRECT1D-shaped request (seed 004 §3c / §6), addresses and steps in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Indirect1d {
    /// Which side the indices drive.
    pub mode: IndirectMode,
    /// Source base address.
    pub src: u64,
    /// Source bytes per index (indexed side) or per position `k` (direct side).
    pub src_step: i64,
    /// Destination base address.
    pub dst: u64,
    /// Destination bytes per index or per position.
    pub dst_step: i64,
    /// Bytes each index moves.
    pub elem_size: u32,
    /// Source indices ≥ this produce no descriptor (`srx_idx_max`; `u64::MAX`: no bound).
    pub srx_idx_max: u64,
    /// Destination indices ≥ this produce no descriptor (`dst_idx_max`).
    pub dst_idx_max: u64,
    /// The combine.
    pub compute_op: DgeComputeOp,
    /// The values' dtype.
    pub dtype: Dtype,
}

/// The INDIRECT1D list of a request: for k in order, one descriptor per position whose indices
/// are all in bounds (unsigned compare, seed 004 §6 "our_indices_valid"); the indexed address is
/// [`mac`]`(base, idx[k], step)`, the direct one `base + k·step`. `src_idx` is used for modes
/// Src/Both, `dst_idx` for Dst/Both; with both, the shorter list sets the count.
pub fn indirect1d(
    r: &Indirect1d,
    src_idx: &[u32],
    dst_idx: &[u32],
    out: &mut Vec<Descriptor>,
) -> Result<(), DgeError> {
    let n = match r.mode {
        IndirectMode::Src => src_idx.len(),
        IndirectMode::Dst => dst_idx.len(),
        IndirectMode::Both => src_idx.len().min(dst_idx.len()),
    };
    out_reserve(out, n);
    for k in 0..n {
        let kk = u32::try_from(k).map_err(|_| DgeError::TooLarge {
            what: "index count",
            value: k as u128,
            bits: 32,
        })?;
        let (src, ok_s) = match r.mode {
            IndirectMode::Dst => (mac(r.src, kk, r.src_step), true),
            _ => (mac(r.src, src_idx[k], r.src_step), u64::from(src_idx[k]) < r.srx_idx_max),
        };
        let (dst, ok_d) = match r.mode {
            IndirectMode::Src => (mac(r.dst, kk, r.dst_step), true),
            _ => (mac(r.dst, dst_idx[k], r.dst_step), u64::from(dst_idx[k]) < r.dst_idx_max),
        };
        if ok_s && ok_d {
            out.push(Descriptor::new(
                DgeKind::Indirect1D,
                src,
                dst,
                r.elem_size,
                &[],
                r.compute_op,
                r.dtype,
            )?);
        }
    }
    Ok(())
}

/// A GATHER_XPOSE request (re-facts §8): `dims` are `(step_elem, num_elem)` X, Y, Z, W.
#[derive(Clone, Copy, Debug)]
pub struct GatherTranspose {
    /// The element dtype (2-byte dtypes only).
    pub dtype: Dtype,
    /// Source base address.
    pub src: u64,
    /// Source dims.
    pub src_dims: [(i64, u32); 4],
    /// Destination base address (32-byte aligned).
    pub dst: u64,
    /// Destination dims (dim 0's step is implicitly one element).
    pub dst_dims: [(i64, u32); 4],
    /// The gather dim (INDIRECT_DIM: 0 X, 1 Y, 2 Z, 3 W; must be Y).
    pub gather_dim: u8,
    /// Indices ≥ this produce no descriptor.
    pub srx_idx_max: u32,
}

/// Gather-transpose tile edges: 16 gathered rows × 128 elements (re-facts §8 "16×128 crossbar
/// tiles").
pub const TILE_ROWS: usize = 16;
/// See [`TILE_ROWS`].
pub const TILE_COLS: u32 = 128;

/// The GATHER_XPOSE constraint list (re-facts §8), all violations collected.
pub fn gather_transpose_violations(r: &GatherTranspose, indices: usize) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut bad = |field, rule, message: String| v.push(Violation { field, rule, message });
    if r.dtype.size() != 2 {
        bad(
            "dtype",
            "two-byte-dtype",
            format!("{:?} is {} bytes; GATHER_XPOSE moves 2-byte dtypes only", r.dtype, r.dtype.size()),
        );
    }
    if r.gather_dim != 1 {
        bad("gather_dim", "gather-dim-y", format!("gather_dim is {}; it must be Y (1)", r.gather_dim));
    }
    if !r.dst.is_multiple_of(32) {
        bad(
            "dst.address",
            "dst-32-byte-aligned",
            format!("the destination address {:#x} is not 32-byte aligned", r.dst),
        );
    }
    let y = r.src_dims[1].1;
    if !y.is_multiple_of(16) {
        bad(
            "src.num_elem[1]",
            "src-y-multiple-of-16",
            format!("the source Y count {y} is not a multiple of 16"),
        );
    }
    if r.dst_dims[0].1 != y {
        bad(
            "dst.num_elem[0]",
            "dst-x-equals-src-y",
            format!("dst num_elem[0] is {} but src num_elem[Y] is {y}", r.dst_dims[0].1),
        );
    }
    if r.dst_dims[1].1 != r.src_dims[0].1 {
        bad(
            "dst.num_elem[1]",
            "dst-y-equals-src-x",
            format!(
                "dst num_elem[1] is {} but src num_elem[X] is {} (G38)",
                r.dst_dims[1].1, r.src_dims[0].1
            ),
        );
    }
    for (field, d) in [
        ("src.num_elem[2]", r.src_dims[2]),
        ("src.num_elem[3]", r.src_dims[3]),
        ("dst.num_elem[2]", r.dst_dims[2]),
        ("dst.num_elem[3]", r.dst_dims[3]),
    ] {
        if d.1 != 1 {
            bad(field, "two-dims-only", format!("is {}; this model gathers 2-D tiles only (G38)", d.1));
        }
    }
    if indices != y as usize {
        bad("indices", "one-index-per-row", format!("{indices} indices given for {y} gathered rows"));
    }
    v
}

/// GATHER_XPOSE as descriptors (docs/dge.md "GATHER_TRANSPOSE"; G38): gathered row `k` is the
/// source row `idx[k]` (`src + idx[k]·step_Y` by [`mac`]), its X elements land in destination
/// column `k` (`dst + k·esize`, rows `step_1` elements apart). Tiles of 16 rows × 128 columns are
/// emitted tile by tile (rows of a tile, then the next 128 columns, then the next 16 rows); each
/// in-bounds row segment of a tile is one GATHER_TRANSPOSE descriptor, indices ≥ `srx_idx_max`
/// emit none.
pub fn gather_transpose(r: &GatherTranspose, idx: &[u32], out: &mut Vec<Descriptor>) -> Result<(), DgeError> {
    let v = gather_transpose_violations(r, idx.len());
    if !v.is_empty() {
        return Err(DgeError::GatherTranspose(v));
    }
    let es = r.dtype.size() as i64;
    let (sx, nx) = r.src_dims[0];
    let sy = r.src_dims[1].0;
    let dy = r.dst_dims[1].0;
    for k0 in (0..idx.len()).step_by(TILE_ROWS) {
        for x0 in (0..nx).step_by(TILE_COLS as usize) {
            let w = TILE_COLS.min(nx - x0);
            for (k, &i) in idx.iter().enumerate().skip(k0).take(TILE_ROWS) {
                if i >= r.srx_idx_max {
                    continue;
                }
                // 64-bit two's complement throughout, as the MAC (steps come from the request).
                let (sxb, dyb) = (sx.wrapping_mul(es), dy.wrapping_mul(es));
                let src =
                    mac(r.src, i, sy.wrapping_mul(es)).wrapping_add_signed(i64::from(x0).wrapping_mul(sxb));
                let dst = r.dst.wrapping_add_signed(
                    (k as i64).wrapping_mul(es).wrapping_add(i64::from(x0).wrapping_mul(dyb)),
                );
                let dims = [Dim::new(w, sxb, dyb)];
                out.push(Descriptor::new(
                    DgeKind::GatherTranspose,
                    src,
                    dst,
                    es as u32,
                    if w == 1 { &[] } else { &dims },
                    ComputeOp::None,
                    r.dtype,
                )?);
            }
        }
    }
    Ok(())
}
