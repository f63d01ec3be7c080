//! The TRACKED write path of `runAP` (seed 000 §1.3; re-facts §5 "MemoryObject"): how the
//! TensorEngine writes PSUM. Every PSUM element has a written-shadow (`Memory`'s shadows, clear
//! until a tracked write lands): a tracked write copies into an element whose shadow is clear
//! and adds in fp32 (`cast_copy_or_accumulate`'s add, round-to-nearest-even) into one whose
//! shadow is set, then sets it. An overwrite (a Matmult with neither START nor ACCUMULATE,
//! "idle = overwrite") copies and sets the shadow. A START first clears whole 2 KiB banks
//! (zero bytes, clear shadow) on the output's partitions (docs/fidelity.md M4).

use super::{Arg, Cx, Res, Stop, Written};
use crate::fault::FaultCause;
use access_pattern::Pattern;
use bir_ir::ops::MatmultFlags;
use bir_ir::{Arch, Dtype, MemoryType, PSUM_BYTES_PER_PARTITION};
use numerics::matmul::{Form, Product, Scratch};

/// Bytes of one PSUM bank in each partition.
pub(crate) const BANK: u64 = 2048;

/// One partition row a PSUM output touches: where the row starts in its buffer, and the buffer
/// bytes the output touches in it (its first element's to its last's).
struct Row {
    start: usize,
    bytes: std::ops::Range<usize>,
}

/// How [`Cx::write_tracked`] treats an element already written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tracked {
    /// Add into it (fp32) where its shadow is set, copy where clear.
    Accumulate,
    /// Copy over it.
    Overwrite,
}

impl Cx<'_> {
    /// The TensorEngine's product into PSUM, as Matmult and MatmultMx run it: `out[m, n] =
    /// Σ_k moving[k, n]·stationary[k, m]` over the fp32 operands (`x` K × N, `w` K × M), the dot
    /// products from `numerics::matmul` in `form`'s order, output rows split across threads (each
    /// element's chain is the same either way); then START clears the output's bank(s) and the
    /// result goes through the tracked write, accumulating under START or ACCUMULATE, overwriting
    /// under neither (docs/fidelity.md M3, M4).
    pub(crate) fn product_into_psum(
        &mut self,
        (x, w): (&[f32], &[f32]),
        (k, m, n): (usize, usize, usize),
        form: Form,
        flags: MatmultFlags,
        out: Arg<'_>,
        regions: &mut Written,
    ) -> Res<()> {
        let mut prod = self.pool.take_f32();
        let (mut panels, mut blocks) = (self.pool.take_f32(), self.pool.take_f32());
        let r = (|| {
            crate::alloc::resize(&mut prod, m * n, 0.0)?;
            // The rearranged operands (numerics::matmul::Product), charged before they are made.
            let (pn, bn) = Scratch::sizes((k, m, n));
            crate::alloc::reserve(&mut panels, pn)?;
            crate::alloc::reserve(&mut blocks, bn)?;
            let mut scratch = Scratch::with(std::mem::take(&mut panels), std::mem::take(&mut blocks));
            let product = Product::new(x, w, (k, m, n), form, &mut scratch);
            // A thread's share is counted in multiply-adds, K per element.
            let mut par = self.options.parallelism;
            par.grain = (par.grain / k.max(1)).max(1);
            let r = par.chunks(&mut prod, 4 * n.max(1), |off, rows| {
                product.rows(off / n.max(1), rows);
                Ok::<(), Stop>(())
            });
            (panels, blocks) = scratch.into_parts();
            r?;
            let bits = flags.bits();
            if bits & MatmultFlags::START != 0 {
                self.psum_clear_banks(out, flags.zero_banks())?;
            }
            let how = if bits & (MatmultFlags::START | MatmultFlags::ACCUMULATE) != 0 {
                Tracked::Accumulate
            } else {
                Tracked::Overwrite
            };
            self.write_tracked(out, &prod, how, regions)
        })();
        // Back in reverse, so the next product takes each buffer for the same role (no regrowth).
        for v in [blocks, panels, prod] {
            self.pool.give_f32(v);
        }
        r
    }

    /// The partition rows a PSUM output touches (each row's buffer start, and the buffer bytes
    /// it touches there, first to last element) and the banks of its elements (lowest, highest);
    /// faults when the output is out of bounds or, before gen4, leaves the 2 KiB bank of its first
    /// element (engines.md §1.2: N fills one bank on v2/v3; on v4 it may span all 8).
    /// One pass over the output's pieces (a contiguous piece is looked at by its first and last
    /// element in each row it covers), nothing per element kept.
    fn psum_survey(&self, out: Arg<'_>) -> Res<(Vec<Row>, (u64, u64))> {
        let layout = self.memory.layout(out.ap.loc);
        let addr = self.f.location(out.ap.loc).map_or(0, |l| l.addr);
        let size = out.ap.dtype.size();
        let p = Pattern { pairs: &out.ap.pairs, offset: out.ap.offset, elem_size: size };
        let (origin, stride) = (layout.origin() as u64, layout.row_stride().max(1));
        let mut rows: Vec<Row> = Vec::new();
        let (mut bank, mut banks) = (None, (u64::MAX, 0));
        let mut crosses = false;
        let mut visit = |b: u64| {
            let row = (b - origin) / stride;
            // The byte inside the PSUM partition: the location's `addr` plus its row offset.
            let k = addr.saturating_add((b - origin) % stride) / BANK;
            crosses |= *bank.get_or_insert(k) != k;
            banks = (banks.0.min(k), banks.1.max(k));
            let (start, b) = ((origin + row * stride) as usize, b as usize);
            let at = match rows.last() {
                Some(r) if r.start == start => rows.len() - 1,
                _ => rows.iter().position(|r| r.start == start).unwrap_or_else(|| {
                    rows.push(Row { start, bytes: b..b });
                    rows.len() - 1
                }),
            };
            let r = &mut rows[at].bytes;
            (r.start, r.end) = (r.start.min(b), r.end.max(b + size));
        };
        access_pattern::for_each_piece(&layout, &p, |_, at, count, step| {
            let (at, size) = (at as u64, size as u64);
            if step as u64 == size {
                // Contiguous bytes: the bank only grows along a row, so each row's ends decide.
                let end = at + count as u64 * size;
                let mut b = at;
                while b < end {
                    let row_end = origin + ((b - origin) / stride + 1) * stride;
                    visit(b);
                    visit(end.min(row_end) - size);
                    b = row_end;
                }
            } else {
                let mut pos = at as i64;
                for _ in 0..count {
                    visit(pos as u64);
                    pos += step as i64;
                }
            }
        })
        .map_err(|e| out.access(e))?;
        if crosses && self.arch != Arch::Gen4 {
            return Err(FaultCause::Dims {
                slot: out.slot,
                why: "a Matmult output lies within one 2 KiB PSUM bank of each partition (gen2/gen3)",
            }
            .into());
        }
        Ok((rows, if bank.is_some() { banks } else { (0, 0) }))
    }

    /// A START's clear (docs/fidelity.md M4): on every partition `out` touches, the `banks`
    /// 2 KiB banks from the one holding `out`'s first elements read +0.0 and their shadows are
    /// clear, and at least every bank `out` covers (gen4's outputs may span several). In a
    /// location of its own (not in the shared PSUM arena) only its own bytes are cleared; banks
    /// past PSUM's eight fault.
    pub(crate) fn psum_clear_banks(&mut self, out: Arg<'_>, banks: u32) -> Res<()> {
        let (rows, (bank, last)) = self.psum_survey(out)?;
        let banks = banks.max(u32::try_from(last - bank + 1).unwrap_or(u32::MAX));
        let starts = rows.iter().map(|r| r.start);
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
        let len = self.memory.span_of(out.ap.loc) as i128;
        // Banks in PSUM-partition bytes, then in this buffer row's bytes.
        // In i128: `addr` comes from the file.
        let (addr, row_bytes) = (i128::from(addr), i128::from(row_bytes));
        let (lo, hi) = (i128::from(bank * BANK) - addr, i128::from((bank + u64::from(banks)) * BANK) - addr);
        // A row of the arena starts at PSUM byte 0 (`addr` bytes before the location); a
        // location of its own holds only its row.
        let (lo, hi) = if arena { (lo, hi) } else { (lo.max(0), hi.min(row_bytes)) };
        let cleared: Vec<std::ops::Range<usize>> = starts
            .map(|start| (start as i128 + lo, start as i128 + hi))
            .filter(|&(a, b)| a >= 0 && a <= b && b <= len)
            .map(|(a, b)| a as usize..b as usize)
            .collect();
        // Overwritten whole: these granules need no 0xFF fill first.
        let (data, shadow, _) = self.memory.buffer_and_shadow_mut(out.ap.loc, &cleared, true)?;
        for r in cleared {
            if let (Some(d), Some(s)) = (data.get_mut(r.clone()), shadow.get_mut(r)) {
                d.fill(0);
                s.fill(0);
            }
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
            Dtype::Float32 => self.write_psum::<4>(out, vals.len(), regions, |k, cells, marks| {
                let vals = &vals[k..k + cells.len() / 4];
                let cells = cells.chunks_exact_mut(4);
                if add && marks.iter().any(|&m| m != 0) {
                    for ((cell, mark), &v) in cells.zip(marks.chunks_exact(4)).zip(vals) {
                        let old = f32::from_le_bytes([cell[0], cell[1], cell[2], cell[3]]);
                        let new = if mark[0] != 0 { old + v } else { v };
                        cell.copy_from_slice(&new.to_le_bytes());
                    }
                } else {
                    for (cell, &v) in cells.zip(vals) {
                        cell.copy_from_slice(&v.to_le_bytes());
                    }
                }
            }),
            // bf16 (gen4): each sum rounded to bf16 as the codec's encoder rounds it.
            _ => {
                let nan = self.profile.nan_sign;
                self.write_psum::<2>(out, vals.len(), regions, |k, cells, marks| {
                    let vals = &vals[k..k + cells.len() / 2];
                    for ((cell, mark), &v) in cells.chunks_exact_mut(2).zip(marks.chunks_exact(2)).zip(vals) {
                        let new = if add && mark[0] != 0 {
                            f32::from_bits(u32::from(u16::from_le_bytes([cell[0], cell[1]])) << 16) + v
                        } else {
                            v
                        };
                        cell.copy_from_slice(
                            &numerics::codec::f32_to_bf16_bits(new.to_bits(), nan).to_le_bytes(),
                        );
                    }
                })
            }
        }
    }

    /// Copies raw elements (each `out`'s element size) over the PSUM output, setting each
    /// element's shadow: the bit-exact PE transpose (fidelity M7).
    pub(crate) fn write_psum_raw(&mut self, out: Arg<'_>, bytes: &[u8], regions: &mut Written) -> Res<()> {
        fn copy<const W: usize>(bytes: &[u8]) -> impl FnMut(usize, &mut [u8], &[u8]) + '_ {
            move |k, cells, _| cells.copy_from_slice(&bytes[k * W..k * W + cells.len()])
        }
        match out.ap.dtype.size() {
            2 => self.write_psum::<2>(out, bytes.len() / 2, regions, copy::<2>(bytes)),
            _ => self.write_psum::<4>(out, bytes.len() / 4, regions, copy::<4>(bytes)),
        }
    }

    /// The one loop of the PSUM writes, over elements of `W` bytes (the output's dtype size):
    /// `set(k, cells, marks)` for each piece of the output (its elements from the `k`-th on:
    /// their bytes, and their shadow bytes as they were: non-zero where written), then the
    /// piece's shadow is set. Checked first (bounds, one bank, `count` elements), so a fault
    /// writes nothing; the written bytes are hashed for the trace after.
    fn write_psum<const W: usize>(
        &mut self,
        out: Arg<'_>,
        count: usize,
        regions: &mut Written,
        mut set: impl FnMut(usize, &mut [u8], &[u8]),
    ) -> Res<()> {
        let (rows, _) = self.psum_survey(out)?;
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
        let touched: Vec<_> = rows.into_iter().map(|r| r.bytes).collect();
        let (data, shadow, _) = self.memory.buffer_and_shadow_mut(out.ap.loc, &touched, false)?;
        let mut one = |k: usize, b: usize, n: usize| {
            if let (Some(cells), Some(marks)) = (data.get_mut(b..b + n * W), shadow.get_mut(b..b + n * W)) {
                set(k, cells, marks);
                marks.fill(0xFF);
            }
        };
        access_pattern::for_each_piece(&layout, &p, |k, at, n, step| {
            if step == W as isize {
                one(k, at, n);
            } else {
                let mut pos = at as isize;
                for e in k..k + n {
                    one(e, pos as usize, 1);
                    pos += step;
                }
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
