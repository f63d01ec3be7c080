//! Physical mapping: where element `e` of a memory location lives in a byte buffer
//! (bir-json.md "Access-pattern units"; seed 000 §1.3 `runAP`).
//!
//! A partitioned location (SB/PSUM) holds `partitions` rows of `partition_bytes` bytes; with
//! `pitch = partition_bytes / size` elements per row, element `e` is at row `e / pitch`, byte
//! `(e % pitch)·size`. Rows sit `row_stride` bytes apart in the buffer, starting at `origin`: a
//! location with its own buffer packs rows (`row_stride == partition_bytes`), one placed in a
//! shared SBUF arena uses the arena's partition size. Flat locations (DRAM, Input, Output) are
//! `bytes` long, element `e` at byte `e·size`.

use crate::ApError;
use bir_ir::MemoryLocation;

/// Where a location's elements are in a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    origin: usize,
    partitions: u64,
    partition_bytes: u64,
    row_stride: u64,
    flat: bool,
}

impl Layout {
    /// A flat location of `bytes` bytes at `origin`.
    pub fn flat(origin: usize, bytes: u64) -> Layout {
        Layout { origin, partitions: 1, partition_bytes: bytes, row_stride: bytes, flat: true }
    }

    /// A partitioned location: `partitions` rows of `partition_bytes` bytes, `row_stride` bytes
    /// apart in the buffer, the first row at `origin`.
    pub fn partitioned(origin: usize, partitions: u64, partition_bytes: u64, row_stride: u64) -> Layout {
        Layout { origin, partitions, partition_bytes, row_stride, flat: false }
    }

    /// The layout of a location with its own buffer (rows packed, starting at byte 0).
    pub fn private(loc: &MemoryLocation) -> Layout {
        if loc.mem_type.is_partitioned() {
            Layout::partitioned(0, loc.partitions, loc.bytes_per_partition, loc.bytes_per_partition)
        } else {
            Layout::flat(0, loc.partitions.saturating_mul(loc.bytes_per_partition))
        }
    }

    /// The layout of a partitioned location placed in a shared arena whose rows are
    /// `arena_row_bytes` apart: row `p` of the location is arena row `base + p`, at byte `addr`.
    pub fn in_arena(loc: &MemoryLocation, arena_row_bytes: u64) -> Option<Layout> {
        let origin = loc.base.checked_mul(arena_row_bytes)?.checked_add(loc.addr)?;
        Some(Layout::partitioned(
            usize::try_from(origin).ok()?,
            loc.partitions,
            loc.bytes_per_partition,
            arena_row_bytes,
        ))
    }

    /// True for flat locations.
    pub fn is_flat(&self) -> bool {
        self.flat
    }

    /// Buffer byte of row 0, byte 0.
    pub fn origin(&self) -> usize {
        self.origin
    }

    /// Elements per row for an element size (the pitch); the whole location when flat.
    pub fn pitch(&self, elem_size: usize) -> u64 {
        self.partition_bytes / elem_size.max(1) as u64
    }

    /// How many elements of this size the location holds.
    pub fn capacity(&self, elem_size: usize) -> u64 {
        self.partitions.saturating_mul(self.pitch(elem_size))
    }

    /// True when element `e` is simply at `origin + e·size` (flat, or rows packed exactly).
    pub fn is_linear(&self, elem_size: usize) -> bool {
        self.flat || self.partitions == 1 || self.row_stride == self.pitch(elem_size) * elem_size as u64
    }

    /// The buffer bytes this layout spans (its last row's end).
    pub fn span(&self) -> Option<usize> {
        let last = (self.partitions.checked_sub(1)?).checked_mul(self.row_stride)?;
        let end = last.checked_add(self.partition_bytes)?;
        usize::try_from(end).ok()?.checked_add(self.origin)
    }

    /// Checks that the layout fits a buffer of `len` bytes.
    pub fn check_buffer(&self, len: usize) -> Result<(), ApError> {
        match self.span() {
            Some(need) if need <= len => Ok(()),
            need => Err(ApError::Buffer { need: need.unwrap_or(usize::MAX), have: len }),
        }
    }

    /// The buffer byte of element `e`, if the location holds it.
    pub fn address(&self, e: i64, elem_size: usize) -> Option<usize> {
        let e = u64::try_from(e).ok()?;
        if e >= self.capacity(elem_size) {
            return None;
        }
        let pitch = self.pitch(elem_size);
        let byte = (e / pitch) * self.row_stride + (e % pitch) * elem_size as u64;
        usize::try_from(byte).ok()?.checked_add(self.origin)
    }

    /// Buffer bytes between the starts of consecutive rows.
    pub fn row_stride(&self) -> u64 {
        self.row_stride
    }

    /// Rows (partitions); 1 when flat.
    pub fn partitions(&self) -> u64 {
        self.partitions
    }

    /// Bytes of one row (the whole location when flat).
    pub fn partition_bytes(&self) -> u64 {
        self.partition_bytes
    }
}
