//! On-chip addresses and TENSORnD walks (contract §0): an ADDR4-IMM's partition, space and
//! byte offset, and a tensor's element offsets inside one partition, X fastest
//! (`offset + esize · Σ step_elem[d] · i_d`, signed). A tensor's whole byte span is checked once
//! against the partition ([`TensorRef::offsets`]), so the walks that follow index in bounds.

use super::{FaultKind, IsaFault, PARTITIONS, fault};

pub use crate::isa::parts::Space;

/// A resolved on-chip address (an ADDR4 with the IMM marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnChip {
    /// Partition 0..=127.
    pub partition: u8,
    /// The memory.
    pub space: Space,
    /// Byte offset inside the partition.
    pub offset: u32,
}

/// A TENSORnD (N ≤ 4; unused dims are step 0, count 1) with the field name faults cite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorRef {
    /// The struct field (`src`, `dst`, `embed_data_in`, …).
    pub field: &'static str,
    /// Its start.
    pub start: OnChip,
    /// Steps in elements, dim 0 = X (innermost).
    pub step: [i16; 4],
    /// Counts per dim.
    pub num: [u16; 4],
}

impl TensorRef {
    /// Elements per partition.
    pub fn count(&self) -> usize {
        self.num.iter().map(|&n| usize::from(n)).product()
    }

    /// The lowest and one-past-the-highest byte its elements touch, relative to the partition.
    pub fn span(&self, esize: usize) -> (i64, i64) {
        let e = esize as i64;
        let (mut lo, mut hi) = (i64::from(self.start.offset), i64::from(self.start.offset) + e);
        if self.count() == 0 {
            return (lo, lo);
        }
        for (s, n) in self.step.iter().zip(&self.num) {
            let reach = i64::from(*s) * (i64::from(*n) - 1) * e;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        (lo, hi)
    }

    /// Checks that partitions `[start, start + channels)` exist and the span lies inside a
    /// partition of `part_bytes`; else an `out-of-bounds` fault naming the field.
    pub fn check(
        &self,
        opcode: &'static str,
        esize: usize,
        channels: usize,
        part_bytes: usize,
    ) -> Result<(), IsaFault> {
        let p = usize::from(self.start.partition);
        if p + channels > PARTITIONS {
            return fault(
                FaultKind::OutOfBounds,
                opcode,
                format!("{}.start_addr", self.field),
                format!("partitions {p}..{} leave the 128 partitions", p + channels),
            );
        }
        let (lo, hi) = self.span(esize);
        if lo < 0 || hi > part_bytes as i64 {
            return fault(
                FaultKind::OutOfBounds,
                opcode,
                self.field,
                format!(
                    "its elements span bytes {lo}..{hi} of a {} partition of {part_bytes} bytes (offset {}, steps {:?}, counts {:?}, {esize}-byte elements)",
                    self.start.space.name(),
                    self.start.offset,
                    self.step,
                    self.num
                ),
            );
        }
        Ok(())
    }

    /// Every element's byte offset inside its partition, X fastest, after [`check`](Self::check)
    /// (the offsets are then in bounds). `out` is cleared first.
    pub fn offsets(
        &self,
        opcode: &'static str,
        esize: usize,
        channels: usize,
        part_bytes: usize,
        out: &mut Vec<usize>,
    ) -> Result<(), IsaFault> {
        self.check(opcode, esize, channels, part_bytes)?;
        out.clear();
        out.reserve(self.count());
        let e = esize as i64;
        let st: [i64; 4] = self.step.map(|s| i64::from(s) * e);
        let n = self.num.map(usize::from);
        let base = i64::from(self.start.offset);
        for w in 0..n[3] {
            let bw = base + st[3] * w as i64;
            for z in 0..n[2] {
                let bz = bw + st[2] * z as i64;
                for y in 0..n[1] {
                    let by = bz + st[1] * y as i64;
                    // In bounds by the span check: every offset is in [0, part_bytes - esize].
                    out.extend((0..n[0]).map(|x| (by + st[0] * x as i64) as usize));
                }
            }
        }
        Ok(())
    }
}

/// True when `offs` (element byte offsets) are `len`-element runs, each contiguous: offset
/// `k·len + e` is offset `k·len` plus `e · esize`.
pub(crate) fn runs_contiguous(offs: &[usize], len: usize, esize: usize) -> bool {
    len > 0
        && offs
            .chunks(len)
            .all(|run| run.first().is_some_and(|&a| run.iter().enumerate().all(|(e, &o)| o == a + e * esize)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(offset: u32, step: [i16; 4], num: [u16; 4]) -> TensorRef {
        TensorRef { field: "src", start: OnChip { partition: 0, space: Space::Sbuf, offset }, step, num }
    }

    /// Offsets worked by hand from `offset + esize · Σ step·i`, X fastest.
    #[test]
    fn offsets_are_x_fastest_and_signed() {
        let mut v = Vec::new();
        t(100, [1, 3, 0, 0], [2, 2, 1, 1]).offsets("T", 4, 1, 1000, &mut v).unwrap();
        assert_eq!(v, [100, 104, 112, 116]);
        t(100, [-2, 10, 0, 0], [3, 1, 1, 1]).offsets("T", 2, 1, 1000, &mut v).unwrap();
        assert_eq!(v, [100, 96, 92]);
        t(0, [1, 1, 1, 1], [1, 1, 1, 2]).offsets("T", 1, 1, 1000, &mut v).unwrap();
        assert_eq!(v, [0, 1]);
    }

    #[test]
    fn leaving_the_partition_is_a_fault() {
        let mut v = Vec::new();
        let e = t(4, [-1, 0, 0, 0], [3, 1, 1, 1]).offsets("T", 4, 1, 1000, &mut v).unwrap_err();
        assert_eq!(e.kind, FaultKind::OutOfBounds);
        assert!(e.message.contains("-4..8"), "{e}");
        assert!(t(992, [1, 0, 0, 0], [2, 1, 1, 1]).check("T", 4, 1, 1000).is_ok());
        assert!(t(993, [1, 0, 0, 0], [2, 1, 1, 1]).check("T", 4, 1, 1000).is_err());
        let mut p = t(0, [1, 0, 0, 0], [1, 1, 1, 1]);
        p.start.partition = 120;
        assert!(p.check("T", 4, 8, 1000).is_ok());
        assert!(p.check("T", 4, 9, 1000).is_err());
    }

    #[test]
    fn contiguous_runs() {
        assert!(runs_contiguous(&[0, 4, 100, 104], 2, 4));
        assert!(!runs_contiguous(&[0, 4, 100, 108], 2, 4));
        assert!(!runs_contiguous(&[0, 4], 0, 4));
    }
}
