//! The ISA bridge (contract §3; /work/isa-decisions.md §4 "DMA_INDIRECT 0xbb"): a DMA_INDIRECT1D
//! word against an ISA [`Machine`] becomes an INDIRECT1D list ([`dma_indirect1d`]), and
//! [`MachineMemory`] runs lists on the machine, so the two together equal the word's datapath
//! (`Machine::run_word`) byte for byte (tests/isa_bridge.rs).
//!
//! Addresses (G45): a DRAM byte address is the machine's own (X5, below 2^55); an on-chip byte
//! (partition p, space s, offset o) is `ON_CHIP | s << 48 | p << 40 | o` ([`on_chip_address`]),
//! so a step that leaves the partition can never alias another partition's bytes.

use crate::generate::{DgeError, Indirect1d, IndirectMode, indirect1d};
use crate::{Descriptor, DescriptorMemory, MemoryError};
use indirection::isa::machine::{BoundRule, Buf, Dup, IsaOptions, Machine, REGISTERS};
use indirection::isa::{Addr4Marker, Addr8Marker, Addr8Target, DmaIndirect1d, Space, Word, validate};

/// The marker bit of on-chip addresses in the descriptor space.
pub const ON_CHIP: u64 = 1 << 63;

const PARTITION_SHIFT: u32 = 40;
const SPACE_SHIFT: u32 = 48;
const OFFSET_MASK: u64 = (1 << PARTITION_SHIFT) - 1;

/// The descriptor-space address of an on-chip byte.
pub fn on_chip_address(partition: u8, space: Space, offset: u32) -> u64 {
    let s = u64::from(space == Space::Psum);
    ON_CHIP | (s << SPACE_SHIFT) | (u64::from(partition) << PARTITION_SHIFT) | u64::from(offset)
}

/// A [`Machine`] seen through the descriptor address space. A range must lie inside one DRAM
/// region, or inside one partition of SBUF or PSUM.
pub struct MachineMemory<'m> {
    /// The machine.
    pub machine: &'m mut Machine,
}

impl MachineMemory<'_> {
    fn locate(&self, addr: u64, len: usize) -> Result<(Buf, usize), MemoryError> {
        let unmapped = MemoryError::Unmapped { addr, len: len as u64 };
        if addr & ON_CHIP == 0 {
            return self.machine.find_dram(addr, len).map(|(k, off)| (Buf::Dram(k), off)).ok_or(unmapped);
        }
        let rest = addr & !ON_CHIP;
        if rest >> (SPACE_SHIFT + 1) != 0 {
            return Err(unmapped);
        }
        let space = if rest >> SPACE_SHIFT & 1 == 1 { Space::Psum } else { Space::Sbuf };
        let partition = (rest >> PARTITION_SHIFT & 0xFF) as usize;
        let off = rest & OFFSET_MASK;
        let pb = self.machine.partition_bytes(space);
        let fits = partition < indirection::isa::machine::PARTITIONS
            && off.checked_add(len as u64).is_some_and(|e| e <= pb as u64);
        if !fits {
            return Err(unmapped);
        }
        let buf = if space == Space::Psum { Buf::Psum } else { Buf::Sbuf };
        Ok((buf, partition * pb + off as usize))
    }
}

impl DescriptorMemory for MachineMemory<'_> {
    fn check(&mut self, addr: u64, len: usize) -> Result<(), MemoryError> {
        self.locate(addr, len).map(|_| ())
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let (b, off) = self.locate(addr, out.len())?;
        let src = self.machine.buf(b).get(off..off + out.len());
        out.copy_from_slice(src.ok_or(MemoryError::Unmapped { addr, len: out.len() as u64 })?);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        let (b, off) = self.locate(addr, data.len())?;
        let dst = self.machine.buf_mut(b).get_mut(off..off + data.len());
        dst.ok_or(MemoryError::Unmapped { addr, len: data.len() as u64 })?.copy_from_slice(data);
        Ok(())
    }

    fn copy(&mut self, src: u64, dst: u64, len: usize) -> Result<(), MemoryError> {
        let (sb, so) = self.locate(src, len)?;
        let (db, doff) = self.locate(dst, len)?;
        let bad = MemoryError::Unmapped { addr: src, len: len as u64 };
        if sb == db {
            let buf = self.machine.buf_mut(sb);
            if so + len > buf.len() || doff + len > buf.len() {
                return Err(bad);
            }
            buf.copy_within(so..so + len, doff);
            return Ok(());
        }
        let (a, b) = self.machine.two_bufs(sb, db).ok_or(bad.clone())?;
        match (a.get(so..so + len), b.get_mut(doff..doff + len)) {
            (Some(x), Some(y)) => {
                y.copy_from_slice(x);
                Ok(())
            }
            _ => Err(bad),
        }
    }
}

fn isa(field: &'static str, message: impl Into<String>) -> DgeError {
    DgeError::Isa { field, message: message.into() }
}

/// A side's start address in the descriptor space.
fn start(a: &indirection::isa::Addr8, field: &'static str) -> Result<u64, DgeError> {
    if a.marker != Addr8Marker::Imm || a.offset_reg || a.offset_wide {
        return Err(isa(field, "only an IMM ADDR8 runs functionally"));
    }
    match a.target() {
        Ok(Addr8Target::Dram(x)) => Ok(x),
        Ok(Addr8Target::OnChip { partition, space, offset }) => Ok(on_chip_address(partition, space, offset)),
        Err(e) => Err(isa(field, e.to_string())),
    }
}

/// The INDIRECT1D list of a DMA_INDIRECT1D word on machine `m` under options `o`, checked as the
/// datapath checks it (contract §4): the word validated for the machine's generation, IMM
/// addresses, equal dtypes (a casting copy is `Unsupported`, G31), element sizes, the u32
/// indices read from SBUF/PSUM, each index against its bound register under `o.bound_rule`
/// (a hard error or a skip), duplicate scatter targets under `o.dup`. The indexed side's address
/// is `mac(start, index, elem_size)`, the other side's `mac(start, k, step_elem·elem_size)`.
/// Addresses that leave memory are found when the list runs ([`crate::execute`](fn@crate::execute) checks the whole
/// list first, so nothing is written either way).
pub fn dma_indirect1d(w: &DmaIndirect1d, m: &Machine, o: &IsaOptions) -> Result<Vec<Descriptor>, DgeError> {
    if let Some(v) = validate(&Word::DmaIndirect(*w), m.generation()).first() {
        return Err(isa(v.field, v.message.clone()));
    }
    let f = w.flags;
    let (gather, scatter) = (f.indirect_mode.gathers(), f.indirect_mode.scatters());
    let (src, dst) =
        (start(&w.src_start_addr, "src_start_addr")?, start(&w.dst_start_addr, "dst_start_addr")?);
    let sdt =
        w.in_dtype.to_dtype().ok_or_else(|| isa("in_dtype", "no element type in the functional model"))?;
    let ddt =
        w.out_dtype.to_dtype().ok_or_else(|| isa("out_dtype", "no element type in the functional model"))?;
    if sdt != ddt {
        return Err(DgeError::Unsupported(format!(
            "in_dtype {sdt:?} and out_dtype {ddt:?} differ: a casting DMA is not a descriptor list (G31)"
        )));
    }
    let (ses, des) = (usize::from(w.src_elem_size), usize::from(w.dst_elem_size));
    if ses == 0 || ses != des || !ses.is_multiple_of(sdt.size()) {
        return Err(isa(
            "src_elem_size",
            format!("elem sizes {ses} / {des} must be equal multiples of {sdt:?}"),
        ));
    }
    let n = usize::from(if gather { w.src_num_elem } else { w.dst_num_elem });
    let read = |a: &indirection::isa::Addr4, field: &'static str| -> Result<Vec<u32>, DgeError> {
        if a.marker != Addr4Marker::Imm {
            return Err(isa(field, "only an IMM index address runs functionally"));
        }
        let pb = m.partition_bytes(a.space);
        let end = a.offset as usize + 4 * n;
        if usize::from(a.partition) >= indirection::isa::machine::PARTITIONS || end > pb {
            return Err(isa(field, format!("{n} u32 indices reach byte {end} of a {pb}-byte partition")));
        }
        let at = usize::from(a.partition) * pb + a.offset as usize;
        let bytes = m.space(a.space).get(at..at + 4 * n).unwrap_or(&[]);
        Ok(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    };
    let sidx = if gather { read(&w.src_idx_start_addr, "src_idx_start_addr")? } else { Vec::new() };
    let didx = if scatter { read(&w.dst_idx_start_addr, "dst_idx_start_addr")? } else { Vec::new() };
    // The bound of one side: `u64::MAX` when no check applies; a hard error is raised here.
    let bound =
        |b: &indirection::isa::BoundCheckReg, idx: &[u32], field: &'static str| -> Result<u64, DgeError> {
            let applies = match o.bound_rule {
                BoundRule::Seed => b.bc_enabled,
                BoundRule::ReFacts => b.bc_enabled && (f.idx_bound_is_err || !b.bc_disable_oob_error_notif),
            };
            if !applies {
                return Ok(u64::MAX);
            }
            let max = m.registers.get(usize::from(b.bc_reg) % REGISTERS).copied().unwrap_or(0);
            if f.idx_bound_is_err
                && !b.bc_disable_oob_error_notif
                && let Some((k, i)) = idx.iter().enumerate().find(|(_, i)| **i >= max)
            {
                return Err(isa(
                    field,
                    format!("index {k} = {i} is at or past the bound {max} in register {}", b.bc_reg),
                ));
            }
            Ok(u64::from(max))
        };
    // The datapath checks both sides of each k in k order; one pass per side finds the same
    // first hard error unless both sides have one (then the lower k wins there too: G46).
    let sb = if gather { bound(&w.src_idx_bound_reg, &sidx, "src_idx_bound_reg")? } else { u64::MAX };
    let db = if scatter { bound(&w.dst_idx_bound_reg, &didx, "dst_idx_bound_reg")? } else { u64::MAX };
    let mode = match (gather, scatter) {
        (true, false) => IndirectMode::Src,
        (false, true) => IndirectMode::Dst,
        _ => IndirectMode::Both,
    };
    let es = i64::from(w.src_elem_size);
    let r = Indirect1d {
        mode,
        src,
        src_step: if gather { es } else { i64::from(w.src_step_elem) * es },
        dst,
        dst_step: if scatter { es } else { i64::from(w.dst_step_elem) * es },
        elem_size: u32::from(w.src_elem_size),
        srx_idx_max: sb,
        dst_idx_max: db,
        compute_op: w.compute_op,
        dtype: sdt,
    };
    if scatter && !f.non_unique_dst_idx && o.dup == Dup::Fault {
        let mut seen = std::collections::HashMap::with_capacity(n);
        for k in 0..n {
            let (s_ok, d_ok) = (!gather || u64::from(sidx[k]) < sb, u64::from(didx[k]) < db);
            if !(s_ok && d_ok) {
                continue;
            }
            if let Some(k0) = seen.insert(didx[k], k) {
                return Err(isa(
                    "dst_idx_start_addr",
                    format!(
                        "scatter indices {k0} and {k} are both {} and flags.non_unique_dst_idx is not set",
                        didx[k]
                    ),
                ));
            }
        }
    }
    let mut out = Vec::new();
    indirect1d(&r, &sidx, &didx, &mut out)?;
    Ok(out)
}
