//! DMA_INDIRECT 0xbb (DMA_INDIRECT1D; seed 004 §7c, contract §4): gather (indices on the
//! source), scatter (on the destination) or both, `n` moves of `dst_elem_size` bytes executed
//! serially in `k` order, each a copy (cast through fp32 when the dtypes differ) or
//! `dst = dst op src` in fp32 (ADD, MULTIPLY, MAX = glibc `fmaxf`, MIN = `fminf`) rounded RNE.
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
use super::Combine;
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
        let mut moves = Vec::with_capacity(n);
        let mut applied_k = Vec::with_capacity(n);
        for k in 0..n {
            let si = sidx.get(k).copied();
            let di = didx.get(k).copied();
            let mut skip = false;
            for (side, idx, field) in [(&d.src, si, "src_idx_bound_reg"), (&d.dst, di, "dst_idx_bound_reg")] {
                let Some(i) = idx else { continue };
                let b = side.bound;
                let applies = match o.bound_rule {
                    BoundRule::Seed => b.enabled,
                    BoundRule::ReFacts => b.enabled && (d.idx_bound_is_err || !b.disable_notif),
                };
                let bound = self.registers.get(usize::from(b.reg) % REGISTERS).copied().unwrap_or(0);
                if applies && i >= bound {
                    if d.idx_bound_is_err && !b.disable_notif {
                        return fault(
                            FaultKind::OutOfBounds,
                            OP,
                            field,
                            format!("index {k} = {i} is at or past the bound {bound} in register {}", b.reg),
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
            let src = self.resolve(d.src.start, s_delta, d.src.elem_size, "src_start_addr", k)?;
            let dst = self.resolve(d.dst.start, d_delta, d.dst.elem_size, "dst_start_addr", k)?;
            moves.push(Move { src, dst });
            applied_k.push(k);
        }
        if d.scatter && !d.non_unique_dst_idx && o.dup == Dup::Fault {
            let mut first: HashMap<u32, usize> = HashMap::with_capacity(applied_k.len());
            for &k in &applied_k {
                let Some(&i) = didx.get(k) else { continue };
                if let Some(&k0) = first.get(&i) {
                    return fault(
                        FaultKind::DuplicateIndex,
                        OP,
                        "dst_idx_start_addr",
                        format!(
                            "scatter indices {k0} and {k} are both {i} and flags.non_unique_dst_idx is not set"
                        ),
                    );
                }
                first.insert(i, k);
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
            Some(c) => {
                let mut s = vec![0u8; d.src.elem_size];
                let mut sf = vec![0f32; values];
                let mut df = vec![0f32; values];
                for m in &moves {
                    let Some(sv) = self.buf(m.src.0).get(m.src.1..m.src.1 + s.len()) else { continue };
                    s.copy_from_slice(sv);
                    let Some(w) = self.buf_mut(m.dst.0).get_mut(m.dst.1..m.dst.1 + d.dst.elem_size) else {
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

    /// The buffer and offset of `len` bytes at `start + delta`; an `out-of-bounds` fault when
    /// they leave memory (a DRAM access must lie inside one region; an on-chip one inside its
    /// partition, X54).
    fn resolve(
        &self,
        start: Target,
        delta: i128,
        len: usize,
        field: &'static str,
        k: usize,
    ) -> Result<(Buf, usize), IsaFault> {
        match start {
            Target::Dram(base) => {
                let a = i128::from(base) + delta;
                if let Ok(a) = u64::try_from(a)
                    && let Some((r, off)) = self.find_dram(a, len)
                {
                    return Ok((Buf::Dram(r), off));
                }
                fault(
                    FaultKind::OutOfBounds,
                    OP,
                    field,
                    format!("move {k}: DRAM bytes {a:#x}..+{len} lie in no DRAM region"),
                )
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
                    return Ok((buf, usize::from(c.partition) * pb + off as usize));
                }
                fault(
                    FaultKind::OutOfBounds,
                    OP,
                    field,
                    format!(
                        "move {k}: bytes {off}..{} of {} partition {} leave its {pb} bytes",
                        off + len as i128,
                        c.space.name(),
                        c.partition
                    ),
                )
            }
        }
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
