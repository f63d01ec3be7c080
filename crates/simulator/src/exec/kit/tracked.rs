//! The TRACKED write path of `runAP` (seed 000 §1.3; re-facts §5 "MemoryObject"): how the
//! TensorEngine writes PSUM. Every PSUM element has a written-shadow (`Memory`'s shadows, clear
//! until a tracked write lands): a tracked write copies into an element whose shadow is clear
//! and adds in fp32 (`cast_copy_or_accumulate`'s add, round-to-nearest-even) into one whose
//! shadow is set, then sets it. An overwrite (a Matmult with neither START nor ACCUMULATE,
//! "idle = overwrite") copies and sets the shadow. A START first clears whole 2 KiB banks
//! (zero bytes, clear shadow) on the output's partitions (docs/fidelity.md M4).

use super::{Arg, Cx, Res, Written};
use crate::fault::FaultCause;
use access_pattern::Pattern;
use bir_ir::{Dtype, MemoryType, PSUM_BYTES_PER_PARTITION};

/// Bytes of one PSUM bank in each partition.
pub(crate) const BANK: u64 = 2048;

/// How [`Cx::write_tracked`] treats an element already written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tracked {
    /// Add into it (fp32) where its shadow is set, copy where clear.
    Accumulate,
    /// Copy over it.
    Overwrite,
}

impl Cx<'_> {
    /// The partition rows (buffer row starts) a PSUM output touches and the bank of its
    /// elements; faults when the output is out of bounds or leaves the 2 KiB bank of its first
    /// element (engines.md §1.2). One pass over the output's addresses, nothing per element kept.
    fn psum_survey(&self, out: Arg<'_>) -> Res<(Vec<usize>, u64)> {
        let layout = self.memory.layout(out.ap.loc);
        let addr = self.f.location(out.ap.loc).map_or(0, |l| l.addr);
        let p = Pattern { pairs: &out.ap.pairs, offset: out.ap.offset, elem_size: out.ap.dtype.size() };
        let (origin, stride) = (layout.origin() as u64, layout.row_stride().max(1));
        let mut rows: Vec<usize> = Vec::new();
        let mut bank = None;
        let mut crosses = false;
        access_pattern::for_each_element(&layout, &p, |_, b| {
            let b = b as u64;
            let row = (b - origin) / stride;
            // The byte inside the PSUM partition: the location's `addr` plus its row offset.
            let k = addr.saturating_add((b - origin) % stride) / BANK;
            crosses |= *bank.get_or_insert(k) != k;
            let start = (origin + row * stride) as usize;
            if rows.last() != Some(&start) && !rows.contains(&start) {
                rows.push(start);
            }
        })
        .map_err(|e| out.access(e))?;
        if crosses {
            return Err(FaultCause::Dims {
                slot: out.slot,
                why: "a Matmult output lies within one 2 KiB PSUM bank of each partition",
            }
            .into());
        }
        Ok((rows, bank.unwrap_or(0)))
    }

    /// A START's clear (docs/fidelity.md M4): on every partition `out` touches, the `banks`
    /// 2 KiB banks from the one holding `out`'s elements read +0.0 and their shadows are clear.
    /// In a location of its own (not in the shared PSUM arena) only its own bytes are cleared;
    /// banks past PSUM's eight fault.
    pub(crate) fn psum_clear_banks(&mut self, out: Arg<'_>, banks: u32) -> Res<()> {
        let (rows, bank) = self.psum_survey(out)?;
        if (bank + u64::from(banks)) * BANK > PSUM_BYTES_PER_PARTITION {
            return Err(FaultCause::BadField {
                field: "psum_zero_region",
                why: "the banks a START clears run past PSUM's 8 banks of 2 KiB",
            }
            .into());
        }
        let loc = self.f.location(out.ap.loc);
        let addr = loc.map_or(0, |l| l.addr);
        let arena = loc.is_some_and(|l| l.allocated && l.mem_type == MemoryType::Psum);
        let row_bytes = self.memory.layout(out.ap.loc).partition_bytes();
        let (data, shadow, _) = self.memory.buffer_and_shadow_mut(out.ap.loc)?;
        // Banks in PSUM-partition bytes, then in this buffer row's bytes.
        // In i128: `addr` comes from the file.
        let (addr, row_bytes) = (i128::from(addr), i128::from(row_bytes));
        let (lo, hi) = (i128::from(bank * BANK) - addr, i128::from((bank + u64::from(banks)) * BANK) - addr);
        // A row of the arena starts at PSUM byte 0 (`addr` bytes before the location); a
        // location of its own holds only its row.
        let (lo, hi) = if arena { (lo, hi) } else { (lo.max(0), hi.min(row_bytes)) };
        for start in rows {
            let (a, b) = (start as i128 + lo, start as i128 + hi);
            if a < 0 || b < a || b > data.len() as i128 {
                continue;
            }
            data[a as usize..b as usize].fill(0);
            shadow[a as usize..b as usize].fill(0);
        }
        Ok(())
    }

    /// Writes fp32 `vals` through the PSUM output `out` (seed 000 §1.3's tracked path, or an
    /// overwrite), setting each element's shadow, and records the bytes as they are afterwards.
    /// A float32 output takes the values; a bfloat16 one (gen4, fidelity M9) rounds each to
    /// bf16, and an add reads the bf16, widens it, adds in fp32 and rounds the sum back.
    pub(crate) fn write_tracked(
        &mut self,
        out: Arg<'_>,
        vals: &[f32],
        how: Tracked,
        regions: &mut Written,
    ) -> Res<()> {
        let add = how == Tracked::Accumulate;
        // Validation lets a Matmult write float32 PSUM, or bfloat16 on gen4 (fidelity M5, M9).
        match out.ap.dtype {
            Dtype::Float32 => self.write_psum(out, vals.len(), regions, |k, cell: &mut [u8; 4], written| {
                let v = vals[k];
                let new = if add && written { f32::from_le_bytes(*cell) + v } else { v };
                *cell = new.to_le_bytes();
            }),
            // bf16 (gen4): each sum rounded to bf16 as the codec's encoder rounds it.
            _ => {
                let nan = self.profile.nan_sign;
                self.write_psum(out, vals.len(), regions, |k, cell: &mut [u8; 2], written| {
                    let v = vals[k];
                    let new = if add && written {
                        f32::from_bits(u32::from(u16::from_le_bytes(*cell)) << 16) + v
                    } else {
                        v
                    };
                    *cell = numerics::codec::f32_to_bf16_bits(new.to_bits(), nan).to_le_bytes();
                })
            }
        }
    }

    /// Copies raw elements (each `out`'s element size) over the PSUM output, setting each
    /// element's shadow: the bit-exact PE transpose (fidelity M7).
    pub(crate) fn write_psum_raw(&mut self, out: Arg<'_>, bytes: &[u8], regions: &mut Written) -> Res<()> {
        match out.ap.dtype.size() {
            2 => self.write_psum(out, bytes.len() / 2, regions, |k, cell: &mut [u8; 2], _| {
                cell.copy_from_slice(&bytes[2 * k..2 * k + 2]);
            }),
            _ => self.write_psum(out, bytes.len() / 4, regions, |k, cell: &mut [u8; 4], _| {
                cell.copy_from_slice(&bytes[4 * k..4 * k + 4]);
            }),
        }
    }

    /// The one element loop of the PSUM writes, over elements of `W` bytes (the output's dtype
    /// size): `set(k, cell, written)` for the output's `k`-th element (its bytes, and whether its
    /// shadow was set), then its shadow is set. Checked first (bounds, one bank, `count`
    /// elements), so a fault writes nothing; the written bytes are hashed for the trace after.
    fn write_psum<const W: usize>(
        &mut self,
        out: Arg<'_>,
        count: usize,
        regions: &mut Written,
        mut set: impl FnMut(usize, &mut [u8; W], bool),
    ) -> Res<()> {
        self.psum_survey(out)?;
        let elements = out.elements()?;
        if elements != count || out.ap.dtype.size() != W {
            return Err(FaultCause::Count {
                slot: out.slot,
                expected: count as u64,
                actual: elements as u64,
                why: "a Matmult output holds exactly the values it produces",
            }
            .into());
        }
        let layout = self.memory.layout(out.ap.loc);
        let p = Pattern { pairs: &out.ap.pairs, offset: out.ap.offset, elem_size: W };
        let (data, shadow, _) = self.memory.buffer_and_shadow_mut(out.ap.loc)?;
        access_pattern::for_each_element(&layout, &p, |k, b| {
            if let (Some(cell), Some(mark)) = (data.get_mut(b..b + W), shadow.get_mut(b..b + W))
                && let Ok(cell) = <&mut [u8; W]>::try_from(cell)
            {
                set(k, cell, mark[0] != 0);
                mark.fill(0xFF);
            }
        })
        .map_err(|e| out.access(e))?;
        regions.record_region(
            |h| {
                let mut h = h;
                let _ = access_pattern::for_each_element(&layout, &p, |_, b| {
                    h = super::fnv1a(h, data.get(b..b + W).unwrap_or_default());
                });
                h
            },
            (count * W) as u64,
        );
        Ok(())
    }
}
