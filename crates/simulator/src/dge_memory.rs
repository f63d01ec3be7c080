//! The simulator's store as a [`dge::DescriptorMemory`] (contract §3; docs/dge.md "The address
//! space", G9): address `((k + 1) << 40) + o` is byte `o` of location `k`'s layout (relative to
//! the layout's origin). A byte range is accessible only inside one location: anywhere in its
//! span when its rows are packed, else inside one row (for a location in a shared SB/PSUM arena,
//! the gaps between its rows belong to other locations and are refused), so a descriptor can never reach bytes its location does not own.

use crate::memory::{Memory, Touch};
use bir_ir::LocId;
use dge::MemoryError;
use std::ops::Range;

/// A [`Memory`] seen through the G9 address space.
pub struct DgeMemory<'m> {
    /// The store.
    pub memory: &'m mut Memory,
}

impl<'m> DgeMemory<'m> {
    /// The adapter.
    pub fn new(memory: &'m mut Memory) -> DgeMemory<'m> {
        DgeMemory { memory }
    }

    /// The location and buffer byte range of `addr .. addr + len`, when one row of one location
    /// holds it all; the location's buffer is created if it has none.
    fn locate(&mut self, addr: u64, len: usize) -> Result<(LocId, Range<usize>), MemoryError> {
        let unmapped = MemoryError::Unmapped { addr, len: len as u64 };
        let (k, off) = dge::address::split(addr).ok_or(unmapped.clone())?;
        // The running function's view: the entry's locations, or a callee's (fidelity B14).
        let loc = self.memory.local_of(k).ok_or(unmapped.clone())?;
        let l = self.memory.layout(loc);
        let stride = l.row_stride().max(1);
        let (row, within) = (off / stride, off % stride);
        let end = off.checked_add(len as u64);
        let fits = if stride == l.partition_bytes() {
            // Packed rows: the location owns every byte of its span.
            end.is_some_and(|e| e <= l.partitions().saturating_mul(stride))
        } else {
            row < l.partitions() && within.checked_add(len as u64).is_some_and(|e| e <= l.partition_bytes())
        };
        if !fits {
            return Err(unmapped);
        }
        let start =
            usize::try_from(off).ok().and_then(|o| o.checked_add(l.origin())).ok_or(unmapped.clone())?;
        self.memory.ensure(loc).map_err(|e| MemoryError::Backing { addr, why: e.to_string() })?;
        let r = start..start + len;
        if r.end > self.memory.span_of(loc) {
            return Err(unmapped);
        }
        Ok((loc, r))
    }
}

impl dge::DescriptorMemory for DgeMemory<'_> {
    fn check(&mut self, addr: u64, len: usize) -> Result<(), MemoryError> {
        self.locate(addr, len).map(|_| ())
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let (loc, r) = self.locate(addr, out.len())?;
        let (buf, _) = self.memory.buffer_for(loc, &Touch { range: Some(r.clone()), covers: false });
        let src = buf.get(r).ok_or(MemoryError::Unmapped { addr, len: out.len() as u64 })?;
        out.copy_from_slice(src);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        let (loc, r) = self.locate(addr, data.len())?;
        let (buf, _) = self.memory.buffer_for(loc, &Touch { range: Some(r.clone()), covers: true });
        let dst = buf.get_mut(r).ok_or(MemoryError::Unmapped { addr, len: data.len() as u64 })?;
        dst.copy_from_slice(data);
        Ok(())
    }

    fn copy(&mut self, src: u64, dst: u64, len: usize) -> Result<(), MemoryError> {
        let (ls, rs) = self.locate(src, len)?;
        let (ld, rd) = self.locate(dst, len)?;
        let (ts, td) = (
            Touch { range: Some(rs.clone()), covers: false },
            Touch { range: Some(rd.clone()), covers: true },
        );
        let done = self.memory.with_two((ls, &ts), (ld, &td), |sb, _, db, _| {
            match (sb.get(rs.clone()), db.get_mut(rd.clone())) {
                (Some(a), Some(b)) => {
                    b.copy_from_slice(a);
                    true
                }
                _ => false,
            }
        });
        let ok = match done {
            Some(ok) => ok,
            None => {
                // One buffer holds both: make both ranges valid, then move within it.
                self.memory.buffer_for(ls, &ts);
                let (buf, _) = self.memory.buffer_for(ld, &td);
                let fits = rs.end <= buf.len() && rd.end <= buf.len();
                if fits {
                    buf.copy_within(rs, rd.start);
                }
                fits
            }
        };
        if ok { Ok(()) } else { Err(MemoryError::Unmapped { addr: src, len: len as u64 }) }
    }
}

/// The layout of every location, for [`dge::bir::Context::layout`].
pub fn layouts(memory: &Memory) -> impl Fn(LocId) -> access_pattern::Layout + '_ {
    move |loc| memory.layout(loc)
}
