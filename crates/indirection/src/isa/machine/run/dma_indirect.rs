//! DMA_INDIRECT 0xbb (DMA_INDIRECT1D; seed 004 §7c, contract §4): gather (indices on the
//! source), scatter (on the destination) or both, `n` moves of `dst_elem_size` bytes executed
//! serially in `k` order, each a copy (cast through fp32 when the dtypes differ) or
//! `dst = dst op src`: for a float destination in fp32 (ADD, MULTIPLY, MAX = glibc `fmaxf`,
//! MIN = `fminf`) rounded RNE; for an integer destination at its width (X14: ADD and MULTIPLY
//! wrap, MAX / MIN signed for intN and unsigned for uintN, the source cast to the destination
//! dtype first when they differ).
//!
//! Everything is checked before the first move: the index reads, each index against its bound
//! register ([`BoundRule`]: skip or a hard `out-of-bounds` fault), every address against
//! memory, duplicate scatter targets ([`Dup`]). Moves then run in order, so an overlapping
//! source sees what earlier moves wrote (the serial loop of the pseudocode). A copy between two
//! different buffers is one `copy_from_slice` per move; everything else goes through a small
//! per-move buffer.

use super::super::{
    BoundRule, Buf, Dup, FaultKind, IsaFault, IsaOptions, Machine, OnChip, REGISTERS, Space, fault,
};
use super::{Combine, reduce_slice};
use bir_ir::Dtype;
use std::collections::HashMap;

const OP: &str = "DMA_INDIRECT";

/// An ADDR8-IMM target (X5): a DRAM byte address, or an on-chip address whose moves stay in
/// its partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A DRAM byte address.
    Dram(u64),
    /// An on-chip address.
    OnChip(OnChip),
}

/// A BOUND_CHECK_REG byte, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoundReg {
    /// The register holding the bound (bits 0..5).
    pub reg: u8,
    /// bc_disable_oob_error_notif (bit 6).
    pub disable_notif: bool,
    /// bc_enabled (bit 7).
    pub enabled: bool,
}

/// One side (source or destination) of the move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    /// Where it starts.
    pub start: Target,
    /// Step (in elem_size units) between consecutive `k` when this side is not indexed.
    pub step_elem: i32,
    /// num_elem (the index count on an indexed side).
    pub num_elem: usize,
    /// Bytes per move.
    pub elem_size: usize,
    /// Its index tensor (u32 elements in partition 0).
    pub idx: OnChip,
    /// Its bound register.
    pub bound: BoundReg,
    /// Its dtype.
    pub dtype: Dtype,
}

/// A DMA_INDIRECT word's operands, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaIndirect {
    /// Indices on the source.
    pub gather: bool,
    /// Indices on the destination.
    pub scatter: bool,
    /// idx_bound_is_err.
    pub idx_bound_is_err: bool,
    /// non_unique_dst_idx.
    pub non_unique_dst_idx: bool,
    /// The source.
    pub src: Side,
    /// The destination.
    pub dst: Side,
    /// NONE (None), ADD, MULTIPLY, MAX, MIN.
    pub op: Option<Combine>,
}

/// One checked move: source and destination buffer and byte offset.
#[derive(Clone, Copy, Debug)]
struct Move {
    src: (Buf, usize),
    dst: (Buf, usize),
    /// The move's position (for the duplicate check's message).
    k: usize,
}

impl Machine {
    /// Runs a DMA_INDIRECT (all-or-nothing up to the first move; then serial).
    pub fn dma_indirect(&mut self, d: &DmaIndirect, o: &IsaOptions) -> Result<(), IsaFault> {
        let (ss, ds) = (d.src.dtype.size(), d.dst.dtype.size());
        if d.src.elem_size == 0 || !d.src.elem_size.is_multiple_of(ss) || !d.dst.elem_size.is_multiple_of(ds)
        {
            return fault(
                FaultKind::Invalid,
                OP,
                "src_elem_size",
                format!(
                    "elem sizes {} / {} are not multiples of the dtype sizes",
                    d.src.elem_size, d.dst.elem_size
                ),
            );
        }
        let values = d.src.elem_size / ss;
        if d.dst.elem_size / ds != values {
            return fault(
                FaultKind::Invalid,
                OP,
                "dst_elem_size",
                format!(
                    "src_elem_size {} holds {values} {} values, dst_elem_size {} holds {} {} values (X53: they must match)",
                    d.src.elem_size,
                    d.src.dtype,
                    d.dst.elem_size,
                    d.dst.elem_size / ds,
                    d.dst.dtype
                ),
            );
        }
        let n = if d.gather { d.src.num_elem } else { d.dst.num_elem };
        let sidx = if d.gather { self.read_indices(&d.src, n, "src_idx_start_addr")? } else { Vec::new() };
        let didx = if d.scatter { self.read_indices(&d.dst, n, "dst_idx_start_addr")? } else { Vec::new() };
        // Each side's bound check, decided once (contract §4).
        let check = |side: &Side, field: &'static str| {
            let b = side.bound;
            let applies = match o.bound_rule {
                BoundRule::Seed => b.enabled,
                BoundRule::ReFacts => b.enabled && (d.idx_bound_is_err || !b.disable_notif),
            };
            let bound = self.registers.get(usize::from(b.reg) % REGISTERS).copied().unwrap_or(0);
            (applies, bound, d.idx_bound_is_err && !b.disable_notif, b.reg, field)
        };
        let checks = [check(&d.src, "src_idx_bound_reg"), check(&d.dst, "dst_idx_bound_reg")];
        if self.dma_direct(d, o, (&sidx, &didx), n, checks.map(|c| c.0)) {
            return Ok(());
        }
        let mut moves = Vec::with_capacity(n);
        let (mut src_cache, mut dst_cache) = (None, None);
        for k in 0..n {
            let si = sidx.get(k).copied();
            let di = didx.get(k).copied();
            let mut skip = false;
            for (idx, &(applies, bound, hard, reg, field)) in [si, di].into_iter().zip(&checks) {
                let Some(i) = idx else { continue };
                if applies && i >= bound {
                    if hard {
                        return fault(
                            FaultKind::OutOfBounds,
                            OP,
                            field,
                            format!("index {k} = {i} is at or past the bound {bound} in register {reg}"),
                        );
                    }
                    skip = true;
                }
            }
            if skip {
                continue;
            }
            let s_delta = match si {
                Some(i) => i128::from(i) * d.src.elem_size as i128,
                None => k as i128 * i128::from(d.src.step_elem) * d.src.elem_size as i128,
            };
            let d_delta = match di {
                Some(i) => i128::from(i) * d.dst.elem_size as i128,
                None => k as i128 * i128::from(d.dst.step_elem) * d.dst.elem_size as i128,
            };
            let Some(src) = self.locate(d.src.start, s_delta, d.src.elem_size, &mut src_cache) else {
                return Err(self.leaves(d.src.start, s_delta, d.src.elem_size, "src_start_addr", k));
            };
            let Some(dst) = self.locate(d.dst.start, d_delta, d.dst.elem_size, &mut dst_cache) else {
                return Err(self.leaves(d.dst.start, d_delta, d.dst.elem_size, "dst_start_addr", k));
            };
            moves.push(Move { src, dst, k });
        }
        if d.scatter && !d.non_unique_dst_idx && o.dup == Dup::Fault {
            let mut first: HashMap<u32, usize> = HashMap::with_capacity(moves.len());
            for m in &moves {
                let Some(&i) = didx.get(m.k) else { continue };
                if let Some(&k0) = first.get(&i) {
                    return fault(
                        FaultKind::DuplicateIndex,
                        OP,
                        "dst_idx_start_addr",
                        format!(
                            "scatter indices {k0} and {} are both {i} and flags.non_unique_dst_idx is not set",
                            m.k
                        ),
                    );
                }
                first.insert(i, m.k);
            }
        }
        // Checked: run the moves in order.
        let numerics = o.numerics();
        let same = d.src.dtype == d.dst.dtype;
        match d.op {
            None if same => self.copy_moves(&moves, d.dst.elem_size),
            None => {
                let mut s = vec![0u8; d.src.elem_size];
                let mut t = vec![0u8; d.dst.elem_size];
                for m in &moves {
                    let Some(sv) = self.buf(m.src.0).get(m.src.1..m.src.1 + s.len()) else { continue };
                    s.copy_from_slice(sv);
                    let _ = numerics::cast(d.src.dtype, &s, d.dst.dtype, &mut t, &numerics);
                    if let Some(w) = self.buf_mut(m.dst.0).get_mut(m.dst.1..m.dst.1 + t.len()) {
                        w.copy_from_slice(&t);
                    }
                }
            }
            Some(c) if d.dst.dtype.is_integer() => {
                // Integer destination (X14): the source value is first cast to the destination
                // dtype when they differ (re-facts §4: through fp32, RNE, saturating), then
                // combined at the destination's width (ADD / MULTIPLY wrap, MAX / MIN compare
                // as the dtype reads).
                let (ss, ds) = (d.src.elem_size, d.dst.elem_size);
                let mut s = vec![0u8; ss];
                let mut t = vec![0u8; ds];
                for m in &moves {
                    let Some(sv) = self.buf(m.src.0).get(m.src.1..m.src.1 + ss) else { continue };
                    s.copy_from_slice(sv);
                    let src: &[u8] = if same {
                        &s
                    } else {
                        let _ = numerics::cast(d.src.dtype, &s, d.dst.dtype, &mut t, &numerics);
                        &t
                    };
                    // Cannot fail: the dtype is an integer and both slices hold `ds` bytes
                    // (equal dtypes hold equal value counts, X53 above; a cast fills `t`).
                    if let Some(w) = self.buf_mut(m.dst.0).get_mut(m.dst.1..m.dst.1 + ds) {
                        let _ = numerics::alu::int_combine(d.dst.dtype, c.alu(), w, src);
                    }
                }
            }
            Some(c) => {
                let (ss, ds) = (d.src.elem_size, d.dst.elem_size);
                let mut s = vec![0u8; ss];
                let mut sf = vec![0f32; values];
                let mut df = vec![0f32; values];
                // Every move between the same two buffers: borrow them once.
                if let Some(first) = moves.first()
                    && same
                    && matches!(d.dst.dtype, Dtype::Float32 | Dtype::Bfloat16)
                    && moves.iter().all(|m| m.src.0 == first.src.0 && m.dst.0 == first.dst.0)
                    && let Some((src, dst)) = self.two_bufs(first.src.0, first.dst.0)
                {
                    for m in &moves {
                        if let (Some(sv), Some(dv)) =
                            (src.get(m.src.1..m.src.1 + ss), dst.get_mut(m.dst.1..m.dst.1 + ds))
                        {
                            reduce_slice(d.dst.dtype, &numerics, c, dv, sv);
                        }
                    }
                    return Ok(());
                }
                for m in &moves {
                    // Between two buffers and one fast dtype: straight on the bytes.
                    if same
                        && m.src.0 != m.dst.0
                        && let Some((src, dst)) = self.two_bufs(m.src.0, m.dst.0)
                        && let (Some(sv), Some(dv)) =
                            (src.get(m.src.1..m.src.1 + ss), dst.get_mut(m.dst.1..m.dst.1 + ds))
                        && reduce_slice(d.dst.dtype, &numerics, c, dv, sv)
                    {
                        continue;
                    }
                    let Some(sv) = self.buf(m.src.0).get(m.src.1..m.src.1 + ss) else { continue };
                    s.copy_from_slice(sv);
                    let Some(w) = self.buf_mut(m.dst.0).get_mut(m.dst.1..m.dst.1 + ds) else {
                        continue;
                    };
                    let _ = numerics::decode_to_f32(d.src.dtype, &s, &mut sf, &numerics);
                    let _ = numerics::decode_to_f32(d.dst.dtype, w, &mut df, &numerics);
                    c.apply(&mut df, &sf);
                    let _ = numerics::encode_from_f32(d.dst.dtype, &df, w, &numerics);
                }
            }
        }
        Ok(())
    }

    /// The common shape straight between two DRAM regions, without a move list: one side
    /// indexed with no bound check applying to it and no duplicate rule to enforce, the other
    /// walking `k · step`. Both sides' whole extents (the largest index's row; the walk's ends)
    /// are checked once, so every move is in bounds and the moves run in `k` order as the
    /// general path runs them. Returns false (nothing done) when the shape does not apply.
    fn dma_direct(
        &mut self,
        d: &DmaIndirect,
        o: &IsaOptions,
        (sidx, didx): (&[u32], &[u32]),
        n: usize,
        bound_applies: [bool; 2],
    ) -> bool {
        let (Target::Dram(sbase), Target::Dram(dbase)) = (d.src.start, d.dst.start) else { return false };
        let same = d.src.dtype == d.dst.dtype;
        let reducible = matches!(d.dst.dtype, Dtype::Float32 | Dtype::Bfloat16);
        if d.gather == d.scatter
            || n == 0
            || !same
            || (d.op.is_some() && !reducible)
            || (d.gather && bound_applies[0])
            || (d.scatter && (bound_applies[1] || (!d.non_unique_dst_idx && o.dup == Dup::Fault)))
            || d.src.elem_size != d.dst.elem_size
        {
            return false;
        }
        let len = d.dst.elem_size;
        // Byte extent of a side: an indexed one reaches its largest index's row, a walking
        // one spans k = 0 and k = n − 1.
        let extent = |base: u64, side: &Side, idx: Option<&[u32]>| -> Option<(u64, u64)> {
            let (lo, hi) = match idx {
                Some(i) => (0i128, i128::from(*i.iter().max()?) * len as i128),
                None => {
                    let last = (n as i128 - 1) * i128::from(side.step_elem) * len as i128;
                    (last.min(0), last.max(0))
                }
            };
            let a = u64::try_from(i128::from(base) + lo).ok()?;
            let z = u64::try_from(i128::from(base) + hi + len as i128).ok()?;
            Some((a, z))
        };
        let Some((s_lo, s_hi)) = extent(sbase, &d.src, d.gather.then_some(sidx)) else { return false };
        let Some((d_lo, d_hi)) = extent(dbase, &d.dst, d.scatter.then_some(didx)) else { return false };
        let (Some((sr, _)), Some((dr, _))) =
            (self.find_dram(s_lo, (s_hi - s_lo) as usize), self.find_dram(d_lo, (d_hi - d_lo) as usize))
        else {
            return false;
        };
        if sr == dr {
            return false;
        }
        let (s0, d0) = (self.dram()[sr].base, self.dram()[dr].base);
        let numerics = o.numerics();
        let Some((src, dst)) = self.two_bufs(Buf::Dram(sr), Buf::Dram(dr)) else { return false };
        // Offsets inside the two regions (in bounds by the extents above).
        let at = |base: u64, region: u64, side: &Side, idx: Option<&[u32]>, k: usize| -> usize {
            let delta = match idx {
                Some(i) => i64::from(i[k]) * len as i64,
                None => k as i64 * i64::from(side.step_elem) * len as i64,
            };
            (base - region).wrapping_add_signed(delta) as usize
        };
        let (si, di) = (d.gather.then_some(sidx), d.scatter.then_some(didx));
        for k in 0..n {
            let (so, doff) = (at(sbase, s0, &d.src, si, k), at(dbase, d0, &d.dst, di, k));
            let (Some(sv), Some(dv)) = (src.get(so..so + len), dst.get_mut(doff..doff + len)) else {
                continue;
            };
            match d.op {
                None => dv.copy_from_slice(sv),
                Some(c) => {
                    reduce_slice(d.dst.dtype, &numerics, c, dv, sv);
                }
            }
        }
        true
    }

    /// `n` u32 indices from a side's index tensor (consecutive elements of one partition).
    fn read_indices(&self, side: &Side, n: usize, field: &'static str) -> Result<Vec<u32>, IsaFault> {
        let a = side.idx;
        let pb = self.partition_bytes(a.space);
        let end = a.offset as usize + 4 * n;
        if usize::from(a.partition) >= super::super::PARTITIONS || end > pb {
            return fault(
                FaultKind::OutOfBounds,
                OP,
                field,
                format!(
                    "{n} u32 indices at partition {} offset {} reach byte {end} of a {pb}-byte {} partition",
                    a.partition,
                    a.offset,
                    a.space.name()
                ),
            );
        }
        let at = usize::from(a.partition) * pb + a.offset as usize;
        let bytes = self.space(a.space).get(at..at + 4 * n).unwrap_or(&[]);
        Ok(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    /// The buffer and offset of `len` bytes at `start + delta`, or `None` when they leave
    /// memory (a DRAM access must lie inside one region; an on-chip one inside its partition,
    /// X54). `cache` holds the DRAM region of the previous move (moves mostly stay in one).
    #[inline(always)]
    fn locate(
        &self,
        start: Target,
        delta: i128,
        len: usize,
        cache: &mut Option<(usize, u64, u64)>,
    ) -> Option<(Buf, usize)> {
        match start {
            Target::Dram(base) => {
                let a = u64::try_from(i128::from(base) + delta).ok()?;
                let end = a.checked_add(len as u64)?;
                if let Some((r, lo, hi)) = *cache
                    && a >= lo
                    && end <= hi
                {
                    return Some((Buf::Dram(r), (a - lo) as usize));
                }
                let (r, off) = self.find_dram(a, len)?;
                let reg = self.dram().get(r)?;
                *cache = Some((r, reg.base, reg.base + reg.bytes.len() as u64));
                Some((Buf::Dram(r), off))
            }
            Target::OnChip(c) => {
                let pb = self.partition_bytes(c.space);
                let off = i128::from(c.offset) + delta;
                if usize::from(c.partition) < super::super::PARTITIONS
                    && off >= 0
                    && off + len as i128 <= pb as i128
                {
                    let buf = match c.space {
                        Space::Sbuf => Buf::Sbuf,
                        Space::Psum => Buf::Psum,
                    };
                    return Some((buf, usize::from(c.partition) * pb + off as usize));
                }
                None
            }
        }
    }

    /// The `out-of-bounds` fault of a move whose bytes [`locate`](Self::locate) refused.
    #[cold]
    fn leaves(&self, start: Target, delta: i128, len: usize, field: &'static str, k: usize) -> IsaFault {
        let message = match start {
            Target::Dram(base) => {
                format!("move {k}: DRAM bytes {:#x}..+{len} lie in no DRAM region", i128::from(base) + delta)
            }
            Target::OnChip(c) => {
                let off = i128::from(c.offset) + delta;
                format!(
                    "move {k}: bytes {off}..{} of {} partition {} leave its {} bytes",
                    off + len as i128,
                    c.space.name(),
                    c.partition,
                    self.partition_bytes(c.space)
                )
            }
        };
        IsaFault::new(FaultKind::OutOfBounds, OP, field, message)
    }

    /// Plain copies, in order: one `copy_from_slice` per move between two buffers, a
    /// `copy_within` (memmove) inside one.
    fn copy_moves(&mut self, moves: &[Move], len: usize) {
        let Some(first) = moves.first() else { return };
        let (sb, db) = (first.src.0, first.dst.0);
        let uniform = moves.iter().all(|m| m.src.0 == sb && m.dst.0 == db);
        if uniform && let Some((src, dst)) = self.two_bufs(sb, db) {
            copy_between(src, dst, moves, len);
            return;
        }
        for m in moves {
            if m.src.0 == m.dst.0 {
                let buf = self.buf_mut(m.src.0);
                if m.src.1 + len <= buf.len() && m.dst.1 + len <= buf.len() {
                    buf.copy_within(m.src.1..m.src.1 + len, m.dst.1);
                }
            } else if let Some((src, dst)) = self.two_bufs(m.src.0, m.dst.0) {
                copy_between(src, dst, std::slice::from_ref(m), len);
            }
        }
    }
}

/// The copy loop between two buffers.
fn copy_between(src: &[u8], dst: &mut [u8], moves: &[Move], len: usize) {
    for m in moves {
        if let (Some(s), Some(d)) = (src.get(m.src.1..m.src.1 + len), dst.get_mut(m.dst.1..m.dst.1 + len)) {
            d.copy_from_slice(s);
        }
    }
}
