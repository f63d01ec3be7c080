//! GATHER 0x68 (S4D4_GT; seed 004 §7a, contract §4): each active channel reads its index
//! tensor and writes `Pool_Buffer[c][index & mask]` on a hit of the loaded window
//! (`(index & !mask) == start_index && (index & mask) < count`), the immediate (or 0 under the
//! `nki` profile) on a miss with IMMEDIATE_WRITE, nothing with SKIP_WRITE.
//!
//! Every index is read before anything is written (X52), so a destination that overlaps the
//! index tensor sees the indices as they were. One dispatch per word on the element width, then
//! a tight loop per channel.

use super::super::{FaultKind, IsaOptions, IsaProfile, Machine, TensorRef, fault};
use super::{IsaFault, read_uint_elements};

const OP: &str = "GATHER";

/// A GATHER word's operands, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// The index tensor.
    pub src: TensorRef,
    /// Index width in bytes (1, 2 or 4: in_dtype UINT8, UINT16, UINT32).
    pub index_bytes: usize,
    /// The ISA out_dtype code.
    pub out_dtype: u8,
    /// Active channels (1..=128).
    pub channels: usize,
    /// SKIP_WRITE (true) or IMMEDIATE_WRITE.
    pub skip_write: bool,
    /// Unload the Pool_Buffer afterwards.
    pub free_pool_buffer: bool,
    /// The miss value (its low `size(out_dtype)` bytes, X17).
    pub immediate: u32,
    /// The destination tensor.
    pub dst: TensorRef,
}

impl Machine {
    /// Runs a GATHER (all-or-nothing).
    pub fn gather(&mut self, g: &Gather, o: &IsaOptions) -> Result<(), IsaFault> {
        let pb = &self.pool_buffer;
        if !pb.loaded {
            return fault(FaultKind::State, OP, "src", "GATHER with no Pool_Buffer loaded");
        }
        if pb.dtype.isa_code() != g.out_dtype {
            return fault(
                FaultKind::Dtype,
                OP,
                "out_dtype",
                format!(
                    "out_dtype {:#04x} is not the Pool_Buffer's dtype {} (ISA code {:#04x})",
                    g.out_dtype,
                    pb.dtype,
                    pb.dtype.isa_code()
                ),
            );
        }
        let esize = pb.dtype.size();
        let count = g.src.count();
        if g.dst.count() != count {
            return fault(
                FaultKind::Invalid,
                OP,
                "dst.num_elem",
                format!("dst holds {} elements per channel, src {count}", g.dst.count()),
            );
        }
        let mut src_offs = Vec::new();
        let sp = self.partition_bytes(g.src.start.space);
        g.src.offsets(OP, g.index_bytes, g.channels, sp, &mut src_offs)?;
        let mut dst_offs = Vec::new();
        let dp = self.partition_bytes(g.dst.start.space);
        g.dst.offsets(OP, esize, g.channels, dp, &mut dst_offs)?;
        // Every index first (X52).
        let mut idx = vec![0u32; g.channels * count];
        let src_mem = self.space(g.src.start.space);
        for (c, out) in idx.chunks_exact_mut(count.max(1)).enumerate().take(g.channels) {
            let p = usize::from(g.src.start.partition) + c;
            let part = src_mem.get(p * sp..(p + 1) * sp).unwrap_or(&[]);
            read_uint_elements(part, &src_offs, g.index_bytes, out);
        }
        let imm = if o.profile == IsaProfile::Nki { 0 } else { g.immediate };
        let imm8 = u64::from(imm).to_le_bytes();
        let Machine { sbuf, psum, pool_buffer, .. } = self;
        let pb = &*pool_buffer;
        let dst_mem: &mut [u8] = match g.dst.start.space {
            super::super::Space::Sbuf => sbuf,
            super::super::Space::Psum => psum,
        };
        let w = Window { start: pb.start_index, mask: pb.mask, count: pb.count as u32 };
        for c in 0..g.channels {
            let p = usize::from(g.dst.start.partition) + c;
            let Some(part) = dst_mem.get_mut(p * dp..(p + 1) * dp) else { continue };
            let ids = idx.get(c * count..(c + 1) * count).unwrap_or(&[]);
            let table = pb.channel(c);
            match esize {
                1 => channel::<1>(part, &dst_offs, ids, table, w, g.skip_write, &imm8),
                2 => channel::<2>(part, &dst_offs, ids, table, w, g.skip_write, &imm8),
                4 => channel::<4>(part, &dst_offs, ids, table, w, g.skip_write, &imm8),
                _ => channel::<8>(part, &dst_offs, ids, table, w, g.skip_write, &imm8),
            }
        }
        if g.free_pool_buffer {
            pool_buffer.loaded = false;
        }
        Ok(())
    }
}

/// The loaded window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub start: u32,
    pub mask: u32,
    pub count: u32,
}

impl Window {
    /// The Pool_Buffer element an index hits (X16: the mask test and the count check).
    #[inline(always)]
    pub fn hit(self, index: u32) -> Option<usize> {
        let off = index & self.mask;
        ((index & !self.mask) == self.start && off < self.count).then_some(off as usize)
    }
}

/// One channel: `ids[k]` → the element at `offs[k]` of `part`.
#[inline(always)]
fn channel<const ES: usize>(
    part: &mut [u8],
    offs: &[usize],
    ids: &[u32],
    table: &[u8],
    w: Window,
    skip: bool,
    imm: &[u8; 8],
) {
    let mut fill = [0u8; ES];
    fill.copy_from_slice(&imm[..ES]);
    for (&o, &i) in offs.iter().zip(ids) {
        let v: [u8; ES] = match w.hit(i) {
            Some(e) => match table.get(e * ES..e * ES + ES).and_then(|s| s.try_into().ok()) {
                Some(v) => v,
                None => continue,
            },
            None if skip => continue,
            None => fill,
        };
        if let Some(d) = part.get_mut(o..o + ES) {
            d.copy_from_slice(&v);
        }
    }
}
