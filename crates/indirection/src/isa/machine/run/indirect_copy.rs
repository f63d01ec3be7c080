//! INDIRECT_COPY 0xe7 (S4D4_IC; seed 004 §5 mechanism B and §7b, contract §4): eight cores of
//! 16 partitions; core `b`'s index list is column-major over its 16 index partitions
//! (`list[j]` = u16 at partition `16b + j % 16`, element `j / 16`); each partition of the core
//! copies, for every `j`, the row `list[j]` — elements `[r·E, r·E + E)` of its data buffer
//! (`device`, X18) or `[r, r + E)` (`nki`) — into destination elements `[j·E, j·E + E)`.
//! Elements at or past `src_buffer_size` are never read: the row is zero-filled there, left
//! alone, or faults ([`IcOob`], X20); the `nki` profile pre-zeroes and clips.
//!
//! All reads happen before any write (X52). The row copy is one `copy_from_slice` per row when
//! the destination's rows are contiguous and do not overlap the data buffer (decided once per
//! word), else an element loop over a snapshot of the data; both give the same bytes.

use super::super::tensor::runs_contiguous;
use super::super::{
    FaultKind, IcOob, IsaFault, IsaOptions, IsaProfile, Machine, OnChip, PARTITIONS, TensorRef, fault,
    split_rw,
};

const OP: &str = "INDIRECT_COPY";

/// Partitions per GpSimd core.
pub const CORE_PARTITIONS: usize = 16;

/// An INDIRECT_COPY word's operands, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectCopy {
    /// The index tensor's start (u16 indices).
    pub index: OnChip,
    /// The data buffer's start.
    pub data: OnChip,
    /// Elements per partition to produce (n · E).
    pub num_elem: usize,
    /// Element size in bytes (in_dtype == out_dtype).
    pub esize: usize,
    /// Active channels (a multiple of 16).
    pub channels: usize,
    /// Elements per index (E ∈ {1, 2, 4, 8, 16, 32}).
    pub elem_per_idx: usize,
    /// Elements per partition in the data buffer (X19).
    pub src_buffer_size: usize,
    /// The destination tensor.
    pub dst: TensorRef,
}

/// The rows of one partition's copy: where row `j` starts in the data buffer (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowRule {
    /// `list[j] · E` (device).
    Rows,
    /// `list[j]` (nki: element offsets).
    Elements,
}

impl Machine {
    /// Runs an INDIRECT_COPY (all-or-nothing).
    pub fn indirect_copy(&mut self, ic: &IndirectCopy, o: &IsaOptions) -> Result<(), IsaFault> {
        let e = ic.elem_per_idx;
        if e == 0
            || !ic.num_elem.is_multiple_of(e)
            || !ic.channels.is_multiple_of(CORE_PARTITIONS)
            || ic.esize == 0
        {
            return fault(
                FaultKind::Invalid,
                OP,
                "src_num_elem_per_idx",
                format!(
                    "num_elem {} / src_num_elem_per_idx {e} / num_active_channels {} do not form whole rows and cores",
                    ic.num_elem, ic.channels
                ),
            );
        }
        let n = ic.num_elem / e;
        let cores = ic.channels / CORE_PARTITIONS;
        let (rule, oob) = match o.profile {
            IsaProfile::Device => (RowRule::Rows, o.ic_oob),
            IsaProfile::Nki => (RowRule::Elements, IcOob::ZeroLanes),
        };
        if ic.dst.count() != ic.num_elem {
            return fault(
                FaultKind::Invalid,
                OP,
                "dst.num_elem",
                format!("dst holds {} elements per partition, num_elem is {}", ic.dst.count(), ic.num_elem),
            );
        }
        for (what, a) in [("src.index_addr", ic.index), ("src.data_addr", ic.data)] {
            let p = usize::from(a.partition);
            if p + ic.channels > PARTITIONS {
                return fault(
                    FaultKind::OutOfBounds,
                    OP,
                    what,
                    format!("partitions {p}..{} leave the 128 partitions", p + ic.channels),
                );
            }
        }
        // The index lists, core by core.
        let ipb = self.partition_bytes(ic.index.space);
        let cols = n.div_ceil(CORE_PARTITIONS);
        let iend = ic.index.offset as usize + 2 * cols;
        if iend > ipb {
            return fault(
                FaultKind::OutOfBounds,
                OP,
                "src.index_addr",
                format!(
                    "{n} indices per core need u16 elements up to byte {iend} of a {ipb}-byte {} partition (offset {})",
                    ic.index.space.name(),
                    ic.index.offset
                ),
            );
        }
        let imem = self.space(ic.index.space);
        let mut lists = vec![0u32; cores * n];
        for (b, list) in lists.chunks_exact_mut(n.max(1)).enumerate().take(cores) {
            for (j, v) in list.iter_mut().enumerate() {
                let p = usize::from(ic.index.partition) + CORE_PARTITIONS * b + j % CORE_PARTITIONS;
                let at = p * ipb + ic.index.offset as usize + 2 * (j / CORE_PARTITIONS);
                *v = imem.get(at..at + 2).map_or(0, |s| u32::from(u16::from_le_bytes([s[0], s[1]])));
            }
        }
        let start = |r: u32| match rule {
            RowRule::Rows => r as usize * e,
            RowRule::Elements => r as usize,
        };
        // Out-of-bounds rows, and how far into the data buffer any read reaches.
        let sbs = ic.src_buffer_size;
        let mut reach = 0usize;
        for (k, &r) in lists.iter().enumerate() {
            let s = start(r);
            if s + e > sbs && oob == IcOob::Fault {
                return fault(
                    FaultKind::OutOfBounds,
                    OP,
                    "src_buffer_size",
                    format!(
                        "core {} index {} = {r}: elements {s}..{} leave the {sbs}-element source buffer",
                        k / n.max(1),
                        k % n.max(1),
                        s + e
                    ),
                );
            }
            if !(s + e > sbs && oob == IcOob::SkipRow) {
                reach = reach.max((s + e).min(sbs));
            }
        }
        let dpb = self.partition_bytes(ic.data.space);
        let dend = ic.data.offset as usize + reach * ic.esize;
        if reach > 0 && dend > dpb {
            return fault(
                FaultKind::OutOfBounds,
                OP,
                "src.data_addr",
                format!(
                    "the rows read source elements up to {reach} (byte {dend}) of a {dpb}-byte {} partition (offset {})",
                    ic.data.space.name(),
                    ic.data.offset
                ),
            );
        }
        let opb = self.partition_bytes(ic.dst.start.space);
        let mut offs = Vec::new();
        ic.dst.offsets(OP, ic.esize, ic.channels, opb, &mut offs)?;
        // Checked: now write.
        let geo = Geo { e, esize: ic.esize, sbs, rule, oob };
        let contiguous = runs_contiguous(&offs, e, ic.esize);
        let data_off = ic.data.offset as usize;
        let dlen = reach * ic.esize;
        let (lo, hi) = ic.dst.span(ic.esize);
        for b in 0..cores {
            let list = lists.get(b * n..(b + 1) * n).unwrap_or(&[]);
            for t in 0..CORE_PARTITIONS {
                let q = CORE_PARTITIONS * b + t;
                let sp = usize::from(ic.data.partition) + q;
                let dp = usize::from(ic.dst.start.partition) + q;
                let r = sp * dpb + data_off..sp * dpb + data_off + dlen;
                let w = dp * opb + lo as usize..dp * opb + hi as usize;
                if contiguous {
                    let direct = if ic.data.space == ic.dst.start.space {
                        split_rw(self.space_mut(ic.data.space), r.clone(), w.clone())
                    } else {
                        let Machine { sbuf, psum, .. } = self;
                        let (src, dst) = if ic.data.space == super::super::Space::Sbuf {
                            (&*sbuf, psum)
                        } else {
                            (&*psum, sbuf)
                        };
                        src.get(r.clone()).zip(dst.get_mut(w.clone()))
                    };
                    if let Some((src, dst)) = direct {
                        rows_fast(dst, &offs, lo as usize, src, list, geo);
                        continue;
                    }
                }
                // Overlapping or strided: a snapshot of the data, then the element loop.
                let snap = self.space(ic.data.space).get(r).map(<[u8]>::to_vec).unwrap_or_default();
                let part =
                    self.space_mut(ic.dst.start.space).get_mut(dp * opb..(dp + 1) * opb).unwrap_or(&mut []);
                rows_slow(part, &offs, &snap, list, geo);
            }
        }
        Ok(())
    }
}

/// What every row of a word shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geo {
    pub e: usize,
    pub esize: usize,
    pub sbs: usize,
    pub rule: RowRule,
    pub oob: IcOob,
}

impl Geo {
    /// Row `j`'s first source element and how many of its elements are in the buffer.
    #[inline(always)]
    fn row(self, r: u32) -> (usize, usize) {
        let s = match self.rule {
            RowRule::Rows => r as usize * self.e,
            RowRule::Elements => r as usize,
        };
        (s, self.sbs.saturating_sub(s).min(self.e))
    }
}

/// Contiguous destination rows: `dst` is the destination span (starting at byte `lo` of the
/// partition), `src` the data buffer's read span. Dispatches once on the row's byte length
/// (E · esize is a power of two up to 128 for every valid word), so each row is a fixed-size
/// copy the compiler inlines instead of a `memcpy` call.
fn rows_fast(dst: &mut [u8], offs: &[usize], lo: usize, src: &[u8], list: &[u32], g: Geo) {
    match g.e * g.esize {
        1 => rows_fixed::<1>(dst, offs, lo, src, list, g),
        2 => rows_fixed::<2>(dst, offs, lo, src, list, g),
        4 => rows_fixed::<4>(dst, offs, lo, src, list, g),
        8 => rows_fixed::<8>(dst, offs, lo, src, list, g),
        16 => rows_fixed::<16>(dst, offs, lo, src, list, g),
        32 => rows_fixed::<32>(dst, offs, lo, src, list, g),
        64 => rows_fixed::<64>(dst, offs, lo, src, list, g),
        128 => rows_fixed::<128>(dst, offs, lo, src, list, g),
        _ => {
            for (j, &r) in list.iter().enumerate() {
                row_partial(dst, offs, lo, src, j, r, g);
            }
        }
    }
}

/// [`rows_fast`] for rows of `B` bytes: whole in-buffer rows are one fixed-size copy; a row
/// that reaches past `src_buffer_size` takes [`row_partial`].
#[inline(always)]
fn rows_fixed<const B: usize>(dst: &mut [u8], offs: &[usize], lo: usize, src: &[u8], list: &[u32], g: Geo) {
    for (j, &r) in list.iter().enumerate() {
        let (s, inb) = g.row(r);
        if inb < g.e {
            row_partial(dst, offs, lo, src, j, r, g);
            continue;
        }
        let Some(&o) = offs.get(j * g.e) else { continue };
        let d = dst.get_mut(o - lo..).and_then(<[u8]>::first_chunk_mut::<B>);
        let v = src.get(s * g.esize..).and_then(<[u8]>::first_chunk::<B>);
        if let (Some(d), Some(v)) = (d, v) {
            *d = *v;
        }
    }
}

/// Row `j` (index `r`) of [`rows_fast`] with any length: its in-buffer head copied, the rest
/// zero-filled, or nothing under [`IcOob::SkipRow`] when part of it is out of the buffer.
fn row_partial(dst: &mut [u8], offs: &[usize], lo: usize, src: &[u8], j: usize, r: u32, g: Geo) {
    let row_bytes = g.e * g.esize;
    let (s, inb) = g.row(r);
    if inb < g.e && g.oob == IcOob::SkipRow {
        return;
    }
    let Some(&o) = offs.get(j * g.e) else { return };
    let Some(d) = dst.get_mut(o - lo..o - lo + row_bytes) else { return };
    let (head, tail) = d.split_at_mut(inb * g.esize);
    if let Some(sv) = src.get(s * g.esize..(s + inb) * g.esize) {
        head.copy_from_slice(sv);
    }
    tail.fill(0);
}

/// The element loop over a snapshot `src` of the data buffer (the slow obvious twin).
pub(crate) fn rows_slow(part: &mut [u8], offs: &[usize], src: &[u8], list: &[u32], g: Geo) {
    for (j, &r) in list.iter().enumerate() {
        let (s, inb) = g.row(r);
        if inb < g.e && g.oob == IcOob::SkipRow {
            continue;
        }
        for k in 0..g.e {
            let Some(&o) = offs.get(j * g.e + k) else { continue };
            let Some(d) = part.get_mut(o..o + g.esize) else { continue };
            if k < inb {
                if let Some(sv) = src.get((s + k) * g.esize..(s + k + 1) * g.esize) {
                    d.copy_from_slice(sv);
                }
            } else {
                d.fill(0);
            }
        }
    }
}
