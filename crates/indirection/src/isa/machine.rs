//! The ISA machine state (contract §3, seed 004 §7): SBUF and PSUM (128 partitions each), DRAM
//! as 64-bit addressed regions, the 64 registers bound checks read, and the Pool_Buffer that
//! POOL_BUFFER_LOAD fills and GATHER reads. The four datapaths and POOL_BUFFER_LOAD live in
//! [`run`], one file each; [`IsaOptions`] selects the documented choices (profile, the
//! INDIRECT_COPY out-of-bounds policy, the bound-check rule, duplicate scatter indices).
//!
//! Every access is resolved and bounds-checked here before a word writes anything (contract §3:
//! all-or-nothing); a bad address is an [`IsaFault`] of kind `out-of-bounds`, never a wild read
//! or a panic.

pub mod run;
pub mod tensor;

use super::Generation;
use bir_ir::Dtype;
use std::ops::Range;

pub use tensor::{OnChip, Space, TensorRef};

/// Partitions of SBUF and PSUM.
pub const PARTITIONS: usize = 128;
/// PSUM bytes per partition, every generation (contract §2).
pub const PSUM_BYTES: usize = 16 << 10;
/// The Pool_Buffer's capacity in elements per channel (seed 004 §2: `POOL_BUFFER_MAX_ELEMENTS`).
pub const POOL_BUFFER_MAX_ELEMENTS: usize = 512;
/// The number of registers (`bc_reg` is 6 bits).
pub const REGISTERS: usize = 64;

/// What kind of guest fault stopped a word (contract §0; the names are the CLI's and the
/// conformance `expect` files').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The word fails validation, or has no wire layout / an unknown opcode.
    Invalid,
    /// An access leaves its memory, or a hard bound-check error.
    OutOfBounds,
    /// The machine state does not allow the word (GATHER with no Pool_Buffer loaded).
    State,
    /// A dtype the word cannot use here (GATHER out_dtype ≠ the Pool_Buffer's).
    Dtype,
    /// A scatter index used twice without `non_unique_dst_idx` (option `dup = fault`).
    DuplicateIndex,
    /// A form the functional model does not run (register markers, address tables).
    NotImplemented,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 6] = [
        FaultKind::Invalid,
        FaultKind::OutOfBounds,
        FaultKind::State,
        FaultKind::Dtype,
        FaultKind::DuplicateIndex,
        FaultKind::NotImplemented,
    ];

    /// Its name (`out-of-bounds`, …).
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Invalid => "invalid",
            FaultKind::OutOfBounds => "out-of-bounds",
            FaultKind::State => "state",
            FaultKind::Dtype => "dtype",
            FaultKind::DuplicateIndex => "duplicate-index",
            FaultKind::NotImplemented => "not-implemented",
        }
    }

    /// The kind a name stands for.
    pub fn named(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A guest fault: the word (its index in the run), its opcode, the struct field and the values
/// involved. The machine is unchanged by the faulting word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("word {word} ({opcode}): {field}: {message}")]
pub struct IsaFault {
    /// The kind.
    pub kind: FaultKind,
    /// The word's index in the run (0 for [`Machine::run_word`]).
    pub word: usize,
    /// The opcode's name (`GATHER`, …).
    pub opcode: &'static str,
    /// The struct field (`src.num_elem[2]`, `dst_idx_start_addr`, …).
    pub field: String,
    /// What is wrong, with the values.
    pub message: String,
}

impl IsaFault {
    /// A fault of `kind` at `field` of an `opcode` word.
    #[cold]
    pub fn new(
        kind: FaultKind,
        opcode: &'static str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        IsaFault { kind, word: 0, opcode, field: field.into(), message: message.into() }
    }
}

/// A fault result.
#[cold]
pub(crate) fn fault<T>(
    kind: FaultKind,
    opcode: &'static str,
    field: impl Into<String>,
    message: impl Into<String>,
) -> Result<T, IsaFault> {
    Err(IsaFault::new(kind, opcode, field, message))
}

/// Which simulator's semantics a run reproduces where they differ (contract §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IsaProfile {
    /// The device firmware as seed 004 describes it (the default).
    #[default]
    Device,
    /// The NKI CPU simulator: nc_n_gather zero-fills misses, local_gather indexes element
    /// offsets, pre-zeroes its output and clips a run at the buffer's end.
    Nki,
}

/// What INDIRECT_COPY does with a row that reaches past `src_buffer_size` (contract §4, X20).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IcOob {
    /// Elements in bounds are copied, those past the end written 0 (the default; mechanism A's
    /// dead lanes read 0).
    #[default]
    ZeroLanes,
    /// The whole row is left unchanged.
    SkipRow,
    /// An `out-of-bounds` fault.
    Fault,
}

/// When DMA_INDIRECT's bound check applies (contract §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BoundRule {
    /// Whenever `bc_enabled` (seed 004 §7c pseudocode; the default).
    #[default]
    Seed,
    /// When `bc_enabled && (idx_bound_is_err || !bc_disable_oob_error_notif)` (re-facts §8).
    ReFacts,
}

/// What a duplicate scatter index does without `non_unique_dst_idx` (contract §4, X22).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dup {
    /// A `duplicate-index` fault naming both positions (the default).
    #[default]
    Fault,
    /// Applied in order (copy: the last writer wins; a compute op accumulates in order).
    Serial,
}

/// The selectable choices of a run (contract §4, §6 `options`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IsaOptions {
    /// Device or NKI semantics.
    pub profile: IsaProfile,
    /// INDIRECT_COPY's out-of-bounds rows (ignored by the `nki` profile, which clips).
    pub ic_oob: IcOob,
    /// DMA_INDIRECT's bound-check rule.
    pub bound_rule: BoundRule,
    /// Duplicate scatter indices without `non_unique_dst_idx`.
    pub dup: Dup,
}

macro_rules! named_enum {
    ($t:ty { $($name:literal => $v:expr),* $(,)? }) => {
        impl $t {
            /// Its name in STATE.json's `options`.
            pub fn name(self) -> &'static str {
                $(if self == $v { return $name; })*
                ""
            }
            /// The value a name stands for.
            pub fn named(name: &str) -> Option<Self> {
                match name {
                    $($name => Some($v),)*
                    _ => None,
                }
            }
            /// Every accepted name, for messages.
            pub const NAMES: &'static str = concat!($($name, " "),*);
        }
    };
}

named_enum!(IsaProfile { "device" => IsaProfile::Device, "nki" => IsaProfile::Nki });
named_enum!(IcOob { "zero-lanes" => IcOob::ZeroLanes, "skip-row" => IcOob::SkipRow, "fault" => IcOob::Fault });
named_enum!(BoundRule { "seed" => BoundRule::Seed, "re-facts" => BoundRule::ReFacts });
named_enum!(Dup { "fault" => Dup::Fault, "serial" => Dup::Serial });

impl IsaOptions {
    /// The numerics profile of every cast and compute op (X50 ASSUMED): the reference
    /// interpreter's accumulate configuration (RNE, FP8 config 0: overflow gives ±Inf, as
    /// `cast_copy_or_accumulate` does, re-facts §8) for `device`; ml_dtypes (NKI) for `nki`.
    pub fn numerics(&self) -> numerics::Profile {
        match self.profile {
            IsaProfile::Device => numerics::Profile::refsim().for_accumulate(),
            IsaProfile::Nki => numerics::Profile::nki(),
        }
    }
}

/// The BIR dtype an ISA dtype code stands for in the functional model (re-facts §1), `None` for
/// INVALID and the codes it does not compute with ([`IsaDtype::to_dtype`](super::IsaDtype::to_dtype):
/// code 0xE FP8_EXP4 is `float8e4`).
pub fn isa_dtype(code: u8) -> Option<Dtype> {
    super::IsaDtype(code).to_dtype()
}

/// A DRAM region: bytes at a 64-bit base address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DramRegion {
    /// Its name (the state file's).
    pub name: String,
    /// Its first byte's address.
    pub base: u64,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The Pool_Buffer (seed 004 §7a): up to 512 elements per channel, the window
/// `(index & !mask) == start_index` GATHER hits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolBuffer {
    /// Whether it holds anything (GATHER needs it loaded).
    pub loaded: bool,
    /// Its element dtype.
    pub dtype: Dtype,
    /// Elements per channel (≤ 512).
    pub count: usize,
    /// The window's start index.
    pub start_index: u32,
    /// The window mask.
    pub mask: u32,
    /// `[128][count · size(dtype)]`, channel-major.
    pub data: Vec<u8>,
}

impl Default for PoolBuffer {
    fn default() -> Self {
        PoolBuffer {
            loaded: false,
            dtype: Dtype::Float32,
            count: 0,
            start_index: 0,
            mask: 0,
            data: Vec::new(),
        }
    }
}

impl PoolBuffer {
    /// Channel `c`'s bytes.
    pub fn channel(&self, c: usize) -> &[u8] {
        let row = self.count * self.dtype.size();
        self.data.get(c * row..(c + 1) * row).unwrap_or(&[])
    }
}

/// Why a machine state cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// An image larger than its memory.
    #[error("{what}: {got} bytes per partition, but the memory holds {max}")]
    TooLarge {
        /// Which image.
        what: &'static str,
        /// Bytes given.
        got: usize,
        /// Bytes it holds.
        max: usize,
    },
    /// Image rows that are not 128 partitions.
    #[error("{what}: {got} partitions, expected 128")]
    Partitions {
        /// Which image.
        what: &'static str,
        /// Partitions given.
        got: usize,
    },
    /// A DRAM region that overlaps another or wraps past 2^64.
    #[error("DRAM region '{name}' at {base:#x} ({len} bytes) {why}")]
    Region {
        /// Its name.
        name: String,
        /// Its base.
        base: u64,
        /// Its length.
        len: usize,
        /// What is wrong.
        why: String,
    },
    /// A Pool_Buffer that does not fit.
    #[error("pool_buffer: {0}")]
    PoolBuffer(String),
}

/// Which buffer of the machine an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    /// SBUF (partition-major, `bytes(gen)` per partition).
    Sbuf,
    /// PSUM (16 KiB per partition).
    Psum,
    /// DRAM region `k`.
    Dram(usize),
}

/// The machine state (contract §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    generation: Generation,
    sbuf: Vec<u8>,
    psum: Vec<u8>,
    dram: Vec<DramRegion>,
    /// The registers bound checks read.
    pub registers: [u32; REGISTERS],
    /// The Pool_Buffer.
    pub pool_buffer: PoolBuffer,
}

impl Machine {
    /// A fresh machine: every byte 0 (X15), no DRAM, registers 0, no Pool_Buffer.
    pub fn new(generation: Generation) -> Machine {
        Machine {
            generation,
            sbuf: vec![0; PARTITIONS * generation.sbuf_partition_bytes() as usize],
            psum: vec![0; PARTITIONS * PSUM_BYTES],
            dram: Vec::new(),
            registers: [0; REGISTERS],
            pool_buffer: PoolBuffer::default(),
        }
    }

    /// Its generation.
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// Bytes per partition of a space.
    pub fn partition_bytes(&self, space: Space) -> usize {
        match space {
            Space::Sbuf => self.generation.sbuf_partition_bytes() as usize,
            Space::Psum => PSUM_BYTES,
        }
    }

    /// All of SBUF, partition-major.
    pub fn sbuf(&self) -> &[u8] {
        &self.sbuf
    }

    /// All of SBUF, mutable.
    pub fn sbuf_mut(&mut self) -> &mut [u8] {
        &mut self.sbuf
    }

    /// All of PSUM, partition-major.
    pub fn psum(&self) -> &[u8] {
        &self.psum
    }

    /// All of PSUM, mutable.
    pub fn psum_mut(&mut self) -> &mut [u8] {
        &mut self.psum
    }

    /// A space's bytes.
    pub fn space(&self, s: Space) -> &[u8] {
        match s {
            Space::Sbuf => &self.sbuf,
            Space::Psum => &self.psum,
        }
    }

    /// A space's bytes, mutable.
    pub fn space_mut(&mut self, s: Space) -> &mut [u8] {
        match s {
            Space::Sbuf => &mut self.sbuf,
            Space::Psum => &mut self.psum,
        }
    }

    /// Copies an image into a space: `rows` rows (must be 128) of `row_bytes` each, row `p` to
    /// partition `p` from byte 0; the rest of each partition keeps its bytes.
    pub fn load_image(&mut self, s: Space, row_bytes: usize, image: &[u8]) -> Result<(), StateError> {
        let what = match s {
            Space::Sbuf => "sbuf",
            Space::Psum => "psum",
        };
        let max = self.partition_bytes(s);
        if row_bytes > max {
            return Err(StateError::TooLarge { what, got: row_bytes, max });
        }
        let rows = image.len().checked_div(row_bytes).unwrap_or(0);
        if rows != PARTITIONS || rows * row_bytes != image.len() {
            return Err(StateError::Partitions { what, got: rows });
        }
        let buf = self.space_mut(s);
        for (dst, src) in buf.chunks_exact_mut(max).zip(image.chunks_exact(row_bytes)) {
            dst[..row_bytes].copy_from_slice(src);
        }
        Ok(())
    }

    /// The DRAM regions, in the order they were added.
    pub fn dram(&self) -> &[DramRegion] {
        &self.dram
    }

    /// Adds a DRAM region; it must not overlap another or wrap past 2^64.
    pub fn add_dram(&mut self, name: impl Into<String>, base: u64, bytes: Vec<u8>) -> Result<(), StateError> {
        let name = name.into();
        let len = bytes.len();
        let err = |why: String| StateError::Region { name: name.clone(), base, len, why };
        let end = base.checked_add(len as u64).ok_or_else(|| err("wraps past 2^64".into()))?;
        if let Some(o) = self.dram.iter().find(|r| base < r.base + r.bytes.len() as u64 && r.base < end) {
            return Err(err(format!("overlaps region '{}' at {:#x}", o.name, o.base)));
        }
        if self.dram.iter().any(|r| r.name == name) {
            return Err(err("has the name of another region".into()));
        }
        self.dram.push(DramRegion { name, base, bytes });
        Ok(())
    }

    /// Sets the Pool_Buffer from a state image `[128][count · size(dtype)]`.
    pub fn set_pool_buffer(
        &mut self,
        dtype: Dtype,
        count: usize,
        start_index: u32,
        mask: u32,
        data: Vec<u8>,
    ) -> Result<(), StateError> {
        if count > POOL_BUFFER_MAX_ELEMENTS {
            return Err(StateError::PoolBuffer(format!(
                "count {count} is more than {POOL_BUFFER_MAX_ELEMENTS} elements per channel"
            )));
        }
        let want = PARTITIONS * count * dtype.size();
        if data.len() != want {
            return Err(StateError::PoolBuffer(format!(
                "{} bytes, but 128 channels x {count} {dtype} elements are {want}",
                data.len()
            )));
        }
        self.pool_buffer = PoolBuffer { loaded: true, dtype, count, start_index, mask, data };
        Ok(())
    }

    /// The DRAM region holding `[addr, addr + len)` whole, and the offset of `addr` in it.
    pub fn find_dram(&self, addr: u64, len: usize) -> Option<(usize, usize)> {
        let end = addr.checked_add(len as u64)?;
        self.dram.iter().position(|r| addr >= r.base && end <= r.base + r.bytes.len() as u64).map(|k| {
            let off = (addr - self.dram[k].base) as usize;
            (k, off)
        })
    }

    /// A buffer's bytes.
    pub fn buf(&self, b: Buf) -> &[u8] {
        match b {
            Buf::Sbuf => &self.sbuf,
            Buf::Psum => &self.psum,
            Buf::Dram(k) => self.dram.get(k).map_or(&[], |r| &r.bytes),
        }
    }

    /// A buffer's bytes, mutable.
    pub fn buf_mut(&mut self, b: Buf) -> &mut [u8] {
        match b {
            Buf::Sbuf => &mut self.sbuf,
            Buf::Psum => &mut self.psum,
            Buf::Dram(k) => self.dram.get_mut(k).map_or(&mut [], |r| &mut r.bytes),
        }
    }

    /// Two different buffers at once, the first to read and the second to write; `None` when
    /// they are the same buffer.
    pub fn two_bufs(&mut self, r: Buf, w: Buf) -> Option<(&[u8], &mut [u8])> {
        let Machine { sbuf, psum, dram, .. } = self;
        match (r, w) {
            (Buf::Sbuf, Buf::Psum) => Some((sbuf, psum)),
            (Buf::Psum, Buf::Sbuf) => Some((psum, sbuf)),
            (Buf::Sbuf, Buf::Dram(k)) => Some((sbuf, &mut dram.get_mut(k)?.bytes)),
            (Buf::Psum, Buf::Dram(k)) => Some((psum, &mut dram.get_mut(k)?.bytes)),
            (Buf::Dram(k), Buf::Sbuf) => Some((&dram.get(k)?.bytes, sbuf)),
            (Buf::Dram(k), Buf::Psum) => Some((&dram.get(k)?.bytes, psum)),
            (Buf::Dram(i), Buf::Dram(j)) if i != j => {
                if i < j {
                    let (a, b) = dram.split_at_mut(j);
                    Some((&a.get(i)?.bytes, &mut b.first_mut()?.bytes))
                } else {
                    let (a, b) = dram.split_at_mut(i);
                    Some((&b.first()?.bytes, &mut a.get_mut(j)?.bytes))
                }
            }
            _ => None,
        }
    }
}

/// Disjoint read and write ranges of one slice at once; `None` if they overlap or leave it.
pub(crate) fn split_rw(buf: &mut [u8], r: Range<usize>, w: Range<usize>) -> Option<(&[u8], &mut [u8])> {
    if r.end > buf.len() || w.end > buf.len() || r.start > r.end || w.start > w.end {
        return None;
    }
    if r.end <= w.start {
        let (a, b) = buf.split_at_mut(w.start);
        Some((a.get(r)?, b.get_mut(..w.end - w.start)?))
    } else if w.end <= r.start {
        let (a, b) = buf.split_at_mut(r.start);
        Some((b.get(..r.end - r.start)?, a.get_mut(w)?))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in FaultKind::ALL {
            assert_eq!(FaultKind::named(k.name()), Some(k));
        }
        assert_eq!(IcOob::named("skip-row"), Some(IcOob::SkipRow));
        assert_eq!(BoundRule::named("re-facts"), Some(BoundRule::ReFacts));
        assert_eq!(Dup::named("serial").map(Dup::name), Some("serial"));
        assert_eq!(IsaProfile::named("gpu"), None);
    }

    #[test]
    fn dram_regions_must_not_overlap() {
        let mut m = Machine::new(Generation::V2);
        m.add_dram("a", 0x1000, vec![0; 16]).unwrap();
        assert!(m.add_dram("b", 0x100f, vec![0; 1]).is_err());
        assert!(m.add_dram("c", 0x0ff8, vec![0; 9]).is_err());
        m.add_dram("d", 0x1010, vec![0; 4]).unwrap();
        assert!(m.add_dram("e", u64::MAX - 1, vec![0; 4]).is_err());
        assert_eq!(m.find_dram(0x100c, 4), Some((0, 12)));
        assert_eq!(m.find_dram(0x100c, 5), None, "an access must lie inside one region");
        assert_eq!(m.find_dram(0x1012, 2), Some((1, 2)));
    }

    #[test]
    fn split_rw_refuses_overlap() {
        let mut b = [0u8, 1, 2, 3, 4, 5];
        let (r, w) = split_rw(&mut b, 4..6, 0..2).unwrap();
        w.copy_from_slice(r);
        assert_eq!(b, [4, 5, 2, 3, 4, 5]);
        assert!(split_rw(&mut b, 1..3, 2..4).is_none());
        assert!(split_rw(&mut b, 5..7, 0..1).is_none());
    }
}
