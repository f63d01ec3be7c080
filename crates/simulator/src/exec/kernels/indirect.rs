//! The seven indirect kernels (seed 000 §6; docs/fidelity.md I1–I12): IndirectLoad (43),
//! IndirectSave (45), IndirectSaveAccumulate (46), GenericIndirectLoad/Save (42/44),
//! IndirectCopy (26) and Gather (92), each a front end over the `indirection` crate: read and
//! decode the indices, build the plan (every index checked, nothing written yet), then apply it
//! in order.
//!
//! Paths: when the table and the dense side share a buffer, or a gather's destination revisits
//! an element, the element-serial executor runs over that buffer (each entry sees what earlier
//! ones wrote, I12). Otherwise the dense side is read once into a pooled flat buffer (or, for a
//! gather into a contiguous destination, written in place) and the plan applied with one
//! memcpy per entry, or one reduce kernel chosen per instruction.

use super::operand::injective;
use super::{Arg, Res, Simulator, Written, bug, fault, unclassified};
use crate::fault::FaultCause;
use crate::memory::Touch;
use access_pattern::{Layout, Pattern};
use bir_ir::ops::{
    GenericIndirectFields, IndirectCopyFields, IndirectFields, IndirectSaveAccumulateFields, IndirectWrap,
};
use bir_ir::{Instruction, MemoryReductionOp, Opcode};
use indirection::plan::{self, GenericDim, GenericGeometry, Step, Table, Wrap};
use indirection::{Addressing, Direction, Entry, IndirectError, decode};

/// Reused index and plan vectors (no allocation per instruction once warm).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    idx: Vec<Vec<u64>>,
    plan: Vec<Step>,
}

fn ind(e: IndirectError) -> super::Stop {
    FaultCause::Indirect(e).into()
}

fn wrap_of(w: Option<IndirectWrap>) -> Option<Wrap> {
    w.map(|w| Wrap { n: w.n, hi: w.hi })
}

impl<'p> Simulator<'p> {
    /// Indirect operands are read and written in their memory's own dtype (runAP asserts it).
    fn same_storage(&self, args: &[Arg<'_>]) -> Res<()> {
        if args.iter().any(|a| !self.uncast(a.ap) || a.ap.dynamic.is_some()) {
            return unclassified(
                "indirect operands whose AP dtype differs from their memory's (or with a dynamic offset)",
            );
        }
        Ok(())
    }

    /// Reads index operand `a` and decodes it into scratch list `slot`.
    fn indices(&mut self, a: Arg<'_>, slot: usize, local: Option<&'static [bir_ir::Dtype]>) -> Res<Vec<u64>> {
        let mut bytes = self.pool.take();
        let r = self.read(a, a.ap.dtype, &mut bytes);
        let mut out = self.scratch.idx.get_mut(slot).map(std::mem::take).unwrap_or_default();
        out.clear();
        // One u64 per index, reserved fallibly (the decoders then extend within capacity).
        if let Err(e) = crate::alloc::reserve(&mut out, bytes.len() / a.ap.dtype.size().max(1)) {
            self.pool.give(bytes);
            return Err(e.into());
        }
        let k = match a.slot {
            crate::fault::Slot::In(k) | crate::fault::Slot::Out(k) => k,
        };
        let d = r.and_then(|()| {
            match local {
                None => decode::decode_indices(a.ap.dtype, &bytes, k, &mut out),
                Some(set) => decode::decode_local_indices(a.ap.dtype, &bytes, set, k, &mut out),
            }
            .map_err(ind)
        });
        self.pool.give(bytes);
        d.map(|()| out)
    }

    /// The reused plan buffer, emptied, with room for `n` steps reserved fallibly (the plan
    /// builders then push within capacity).
    fn plan_buffer(&mut self, n: usize) -> Res<Vec<Step>> {
        let mut steps = std::mem::take(&mut self.scratch.plan);
        steps.clear();
        crate::alloc::reserve(&mut steps, n)?;
        Ok(steps)
    }

    fn give_indices(&mut self, slot: usize, v: Vec<u64>) {
        while self.scratch.idx.len() <= slot {
            self.scratch.idx.push(Vec::new());
        }
        self.scratch.idx[slot] = v;
    }

    /// The table of an IndirectLoad/Save/SaveAccumulate: entries `offset + r·step`, `r < V`.
    fn table_of(&self, t: Arg<'_>, step: Option<i64>, len: usize) -> Res<Table> {
        let Some(last) = t.ap.pairs.last() else { return bug("a validated table AP has no levels") };
        let size = t.ap.dtype.size();
        Ok(Table {
            base: t.ap.offset,
            step: step.unwrap_or(last.step),
            entries: last.num.max(0) as u64,
            entry_lo: 0,
            entry_hi: len as i64 - 1,
            capacity: self.memory.layout(t.ap.loc).capacity(size),
        })
    }

    /// Gathers `plan` from the table into `dst` (rows of `entry.len()` elements in AP order).
    fn run_gather(
        &mut self,
        table: Arg<'_>,
        table_map: Option<&[i64]>,
        entry: Entry<'_>,
        dst: Arg<'_>,
        plan: &[Step],
        regions: &mut Written,
    ) -> Res<()> {
        let dt = dst.ap.dtype;
        let size = dt.size();
        let len = entry.len();
        let rows = dst.elements()? / len.max(1);
        if self.memory_same(table, dst) {
            let dense = indirection::exec::element_offsets(dst.ap.offset, &dst.ap.pairs);
            let rel = entry.offsets();
            let (tl, dl) = (self.memory.layout(table.ap.loc), self.memory.layout(dst.ap.loc));
            let profile = self.profile;
            let (buf, _) = self.memory.buffer_mut(table.ap.loc);
            indirection::serial(
                buf,
                Direction::Gather,
                &Addressing { layout: tl, map: table_map },
                &rel,
                &Addressing { layout: dl, map: Some(&dense) },
                plan,
                MemoryReductionOp::Copy,
                dt,
                &profile,
            )
            .map_err(ind)?;
            record_ap(&mut self.memory, dst, regions);
            return Ok(());
        }
        if !injective(dst.ap) {
            // A destination that revisits elements: the planned rows, written in plan order.
            let mut flat = self.pool.take();
            crate::alloc::resize(&mut flat, rows * len * size, 0)?;
            let (tb, tl) = self.memory.buffer_mut(table.ap.loc);
            let r = indirection::gather(tb, &tl, size, entry, plan, &mut flat).map_err(ind);
            let r = r.and_then(|()| self.write_rows(dst, &flat, len, plan, regions));
            self.pool.give(flat);
            return r;
        }
        // A contiguous destination in its own buffer: gather in place.
        if let Some(range) = self.contiguous(dst)?
            && range.len() == rows * len * size
        {
            let covers = plan.len() == rows;
            let td = Touch { range: Some(range.clone()), covers };
            let done =
                self.memory.with_two((table.ap.loc, &Touch::ALL), (dst.ap.loc, &td), |tb, tl, db, _| {
                    indirection::gather(tb, &tl, size, entry, plan, &mut db[range.clone()])
                });
            if let Some(r) = done {
                r.map_err(ind)?;
                let memory = &mut self.memory;
                regions.record_region(
                    |h| super::fnv1a(h, &memory.buffer_for(dst.ap.loc, &td).0[range.clone()]),
                    range.len() as u64,
                );
                return Ok(());
            }
        }
        let mut flat = self.pool.take();
        let r = (|| {
            if plan.len() < rows {
                self.read(dst, dt, &mut flat)?;
            } else {
                crate::alloc::resize(&mut flat, rows * len * size, 0)?;
            }
            let (tb, tl) = self.memory.buffer_mut(table.ap.loc);
            indirection::gather(tb, &tl, size, entry, plan, &mut flat).map_err(ind)?;
            self.write(dst, dt, &flat, regions)
        })();
        self.pool.give(flat);
        r
    }

    /// Writes the planned rows of `flat` (dst rows of `len` elements, AP order) into `dst`
    /// element by element in plan order (a destination that revisits elements: last writer wins).
    fn write_rows(
        &mut self,
        dst: Arg<'_>,
        flat: &[u8],
        len: usize,
        plan: &[Step],
        regions: &mut Written,
    ) -> Res<()> {
        let size = dst.ap.dtype.size();
        let dense = indirection::exec::element_offsets(dst.ap.offset, &dst.ap.pairs);
        let (buf, dl) = self.memory.buffer_mut(dst.ap.loc);
        for s in plan {
            for k in s.row * len..(s.row + 1) * len {
                let at = dense.get(k).and_then(|&e| dl.address(e, size));
                let (Some(b), Some(v)) = (at, flat.get(k * size..(k + 1) * size)) else {
                    return fault(FaultCause::Indirect(IndirectError::Shape(
                        "a destination row lies outside its location".into(),
                    )));
                };
                let Some(d) = buf.get_mut(b..b + size) else {
                    return bug("a layout address outside its buffer");
                };
                d.copy_from_slice(v);
            }
        }
        record_ap(&mut self.memory, dst, regions);
        Ok(())
    }

    fn memory_same(&self, a: Arg<'_>, b: Arg<'_>) -> bool {
        self.memory.same_buffer(a.ap.loc, b.ap.loc)
    }

    /// Scatters `values` (rows of `entry.len()` elements in AP order) into the plan's entries.
    fn run_scatter(
        &mut self,
        values: Arg<'_>,
        entry: Entry<'_>,
        table: Arg<'_>,
        plan: &[Step],
        op: MemoryReductionOp,
        regions: &mut Written,
    ) -> Res<()> {
        let dt = table.ap.dtype;
        let walk_ok = match entry {
            Entry::Contiguous(_) => true,
            Entry::Walk(p) => super::operand::distinct_pairs(p),
        };
        let profile = self.profile;
        if self.memory_same(values, table) || !walk_ok {
            let dense = indirection::exec::element_offsets(values.ap.offset, &values.ap.pairs);
            let rel = entry.offsets();
            let (tl, dl) = (self.memory.layout(table.ap.loc), self.memory.layout(values.ap.loc));
            if !self.memory_same(values, table) {
                // Distinct buffers but an entry revisiting elements: read the values first.
                let mut flat = self.pool.take();
                let r = self.read(values, dt, &mut flat).and_then(|()| {
                    let (buf, _) = self.memory.buffer_mut(table.ap.loc);
                    serial_from_flat(buf, tl, &rel, &flat, plan, op, dt, &profile).map_err(ind)
                });
                self.pool.give(flat);
                r?;
            } else {
                let (buf, _) = self.memory.buffer_mut(table.ap.loc);
                indirection::serial(
                    buf,
                    Direction::Scatter,
                    &Addressing { layout: tl, map: None },
                    &rel,
                    &Addressing { layout: dl, map: Some(&dense) },
                    plan,
                    op,
                    dt,
                    &profile,
                )
                .map_err(ind)?;
            }
            record_entries(self, table, entry, plan, regions);
            return Ok(());
        }
        // Values one contiguous run in their own buffer: scatter straight from it.
        if let Some(range) = self.contiguous(values)? {
            let tv = Touch { range: Some(range.clone()), covers: false };
            let done =
                self.memory.with_two((values.ap.loc, &tv), (table.ap.loc, &Touch::ALL), |vb, _, tb, tl| {
                    indirection::scatter(&vb[range.clone()], plan, entry, tb, &tl, op, dt, &profile)
                });
            if let Some(r) = done {
                r.map_err(ind)?;
                record_entries(self, table, entry, plan, regions);
                return Ok(());
            }
        }
        let mut flat = self.pool.take();
        let r = self.read(values, dt, &mut flat).and_then(|()| {
            let (buf, layout) = self.memory.buffer_mut(table.ap.loc);
            indirection::scatter(&flat, plan, entry, buf, &layout, op, dt, &profile).map_err(ind)
        });
        self.pool.give(flat);
        r?;
        record_entries(self, table, entry, plan, regions);
        Ok(())
    }

    /// IndirectLoad (43): dst row j ← table entry idx[j] (seed 000 §6.2; I1–I4).
    pub(crate) fn indirect_load(
        &mut self,
        i: &'p Instruction,
        f: &IndirectFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (table, idx, dst) = (self.input(i, 0)?, self.input(i, 1)?, self.output(i, 0)?);
        self.same_storage(&[table, dst])?;
        let len = dst.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize);
        let t = self.table_of(table, None, len)?;
        let ix = self.indices(idx, 0, None)?;
        let mut steps = self.plan_buffer(ix.len())?;
        let r = plan::rows(&ix, &t, wrap_of(f.wrap), self.options.indirect_oob, 1, &mut steps)
            .map_err(ind)
            .and_then(|()| self.run_gather(table, None, Entry::Contiguous(len), dst, &steps, regions));
        self.give_indices(0, ix);
        self.scratch.plan = steps;
        r
    }

    /// IndirectSave (45): table entry idx[j] ← values row j, last writer wins.
    pub(crate) fn indirect_save(
        &mut self,
        i: &'p Instruction,
        f: &IndirectFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (values, idx, table) = (self.input(i, 0)?, self.input(i, 1)?, self.output(i, 0)?);
        self.same_storage(&[table, values])?;
        let len = values.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize);
        let t = self.table_of(table, None, len)?;
        let ix = self.indices(idx, 0, None)?;
        let mut steps = self.plan_buffer(ix.len())?;
        let r = plan::rows(&ix, &t, wrap_of(f.wrap), self.options.indirect_oob, 1, &mut steps)
            .map_err(ind)
            .and_then(|()| {
                self.run_scatter(
                    values,
                    Entry::Contiguous(len),
                    table,
                    &steps,
                    MemoryReductionOp::Copy,
                    regions,
                )
            });
        self.give_indices(0, ix);
        self.scratch.plan = steps;
        r
    }

    /// IndirectSaveAccumulate (46): the 2-D slot build, entry-major, then copy or add (I5, I6).
    pub(crate) fn indirect_save_accumulate(
        &mut self,
        i: &'p Instruction,
        f: &IndirectSaveAccumulateFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (values, idx, table) = (self.input(i, 0)?, self.input(i, 1)?, self.output(i, 0)?);
        self.same_storage(&[table, values])?;
        let op = numerics::memory_reduction(f.op).map_err(|error| FaultCause::Op { field: "op", error })?;
        let len = values.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize);
        let t = self.table_of(table, Some(f.entry_step_elements), len)?;
        let parts = idx.ap.pairs.first().map_or(1, |p| p.num.max(1) as usize);
        let ix = self.indices(idx, 0, None)?;
        let mut steps = self.plan_buffer(ix.len())?;
        let r = plan::save_accumulate(
            &ix,
            parts,
            f.num_indices,
            &t,
            wrap_of(f.wrap),
            self.options.indirect_oob,
            1,
            &mut steps,
        )
        .map_err(ind)
        .and_then(|()| self.run_scatter(values, Entry::Contiguous(len), table, &steps, op, regions));
        self.give_indices(0, ix);
        self.scratch.plan = steps;
        r
    }

    /// GenericIndirectLoad (42) / GenericIndirectSave (44): Σ coef·idx per entry (I7, I8).
    pub(crate) fn generic_indirect(
        &mut self,
        i: &'p Instruction,
        f: &GenericIndirectFields,
        regions: &mut Written,
    ) -> Res<()> {
        let load = i.opcode() == Opcode::GenericIndirectLoad;
        let (table, dense) = if load {
            (self.input(i, 0)?, self.output(i, 0)?)
        } else {
            (self.output(i, 0)?, self.input(i, 0)?)
        };
        self.same_storage(&[table, dense])?;
        let mut levels = Vec::with_capacity(f.indirect_dims.len());
        for d in &f.indirect_dims {
            let Some(l) = table.ap.level_of(*d) else {
                return bug("a validated indirect dim names no level");
            };
            levels.push(l);
        }
        let geometry = GenericGeometry::new(&table.ap.pairs, &levels).map_err(ind)?;
        let mut lists = Vec::with_capacity(levels.len());
        for k in 0..levels.len() {
            let a = self.input(i, k + 1)?;
            match self.indices(a, k, None) {
                Ok(v) => lists.push(v),
                Err(e) => {
                    for (s, v) in lists.into_iter().enumerate() {
                        self.give_indices(s, v);
                    }
                    return Err(e);
                }
            }
        }
        let dims: Vec<GenericDim<'_>> = lists
            .iter()
            .zip(&levels)
            .zip(&f.indirect_dims)
            .enumerate()
            .map(|(k, ((idx, &level), &dim))| GenericDim { idx, operand: k + 1, dim, level })
            .collect();
        let capacity = self.memory.layout(table.ap.loc).capacity(table.ap.dtype.size());
        let mut steps = self.plan_buffer(lists.first().map_or(0, Vec::len))?;
        let built = plan::generic(
            &dims,
            &geometry,
            table.ap.offset,
            capacity,
            wrap_of(f.wrap),
            self.options.indirect_oob,
            &mut steps,
        );
        drop(dims);
        let contiguous = Pattern { pairs: &geometry.entry, offset: 0, elem_size: 1 }
            .runs()
            .is_ok_and(|r| r.remaining() == 1 && (r.stride() == 1 || r.run_len() == 1));
        let entry = if contiguous { Entry::Contiguous(geometry.len) } else { Entry::Walk(&geometry.entry) };
        let r = built.map_err(ind).and_then(|()| {
            if load {
                self.run_gather(table, None, entry, dense, &steps, regions)
            } else {
                let op = numerics::memory_reduction(f.op)
                    .map_err(|error| FaultCause::Op { field: "op", error })?;
                self.run_scatter(dense, entry, table, &steps, op, regions)
            }
        });
        for (s, v) in lists.into_iter().enumerate() {
            self.give_indices(s, v);
        }
        self.scratch.plan = steps;
        r
    }

    /// IndirectCopy (26): 16-partition blocks, column-major index lists, rows of the partition's
    /// own source (I9, I10).
    pub(crate) fn indirect_copy(
        &mut self,
        i: &'p Instruction,
        f: &IndirectCopyFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (src, idx, dst) = (self.input(i, 0)?, self.input(i, 1)?, self.output(i, 0)?);
        let (parts, src_per) = src.shape()?;
        let len = if src.ap.pairs.len() >= 2 {
            src.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize)
        } else {
            1
        };
        let ix = self.indices(idx, 0, Some(decode::INDIRECT_COPY_INDEX))?;
        let mut steps = self.plan_buffer(ix.len().saturating_mul(16))?;
        let r = plan::indirect_copy(
            &ix,
            parts,
            f.num_valid_indices,
            (src_per / len.max(1)) as u64,
            src_per,
            len,
            self.options.indirect_oob,
            1,
            &mut steps,
        )
        .map_err(ind)
        .and_then(|()| self.local_gather(src, dst, len, &steps, regions));
        self.give_indices(0, ix);
        self.scratch.plan = steps;
        r
    }

    /// Gather (92): within-partition element gather (I11).
    pub(crate) fn gather(&mut self, i: &'p Instruction, regions: &mut Written) -> Res<()> {
        let (src, idx, dst) = (self.input(i, 0)?, self.input(i, 1)?, self.output(i, 0)?);
        let (parts, src_per) = src.shape()?;
        let ix = self.indices(idx, 0, Some(decode::GATHER_INDEX))?;
        let mut steps = self.plan_buffer(ix.len())?;
        let r = plan::gather_rows(&ix, parts, src_per, self.options.indirect_oob, 1, &mut steps)
            .map_err(ind)
            .and_then(|()| self.local_gather(src, dst, 1, &steps, regions));
        self.give_indices(0, ix);
        self.scratch.plan = steps;
        r
    }

    /// The local gathers: the source is addressed in its own AP order (plan starts are flat
    /// source element numbers).
    fn local_gather(
        &mut self,
        src: Arg<'_>,
        dst: Arg<'_>,
        len: usize,
        plan: &[Step],
        regions: &mut Written,
    ) -> Res<()> {
        self.same_storage(&[src, dst])?;
        let dt = dst.ap.dtype;
        let size = dt.size();
        // Sharing a buffer matters only when the source and destination extents meet.
        let meet = match (self.extent(src.ap), self.extent(dst.ap)) {
            (Some(a), Some(b)) => a.start < b.end && b.start < a.end,
            _ => true,
        };
        if self.memory_same(src, dst) && meet {
            let smap = indirection::exec::element_offsets(src.ap.offset, &src.ap.pairs);
            let dmap = indirection::exec::element_offsets(dst.ap.offset, &dst.ap.pairs);
            let (sl, dl) = (self.memory.layout(src.ap.loc), self.memory.layout(dst.ap.loc));
            let rel: Vec<i64> = (0..len as i64).collect();
            let profile = self.profile;
            let (buf, _) = self.memory.buffer_mut(src.ap.loc);
            indirection::serial(
                buf,
                Direction::Gather,
                &Addressing { layout: sl, map: Some(&smap) },
                &rel,
                &Addressing { layout: dl, map: Some(&dmap) },
                plan,
                MemoryReductionOp::Copy,
                dt,
                &profile,
            )
            .map_err(ind)?;
            record_ap(&mut self.memory, dst, regions);
            return Ok(());
        }
        if !injective(dst.ap) {
            let (mut sflat, mut dflat) = (self.pool.take(), self.pool.take());
            let r = (|| {
                self.read(src, dt, &mut sflat)?;
                crate::alloc::resize(&mut dflat, dst.elements()? * size, 0)?;
                let layout = Layout::flat(0, sflat.len() as u64);
                indirection::gather(&sflat, &layout, size, Entry::Contiguous(len), plan, &mut dflat)
                    .map_err(ind)?;
                self.write_rows(dst, &dflat, len, plan, regions)
            })();
            self.pool.give(sflat);
            self.pool.give(dflat);
            return r;
        }
        let (mut sflat, mut dflat) = (self.pool.take(), self.pool.take());
        let r = (|| {
            self.read(src, dt, &mut sflat)?;
            self.read(dst, dt, &mut dflat)?;
            let layout = Layout::flat(0, sflat.len() as u64);
            indirection::gather(&sflat, &layout, size, Entry::Contiguous(len), plan, &mut dflat)
                .map_err(ind)?;
            self.write(dst, dt, &dflat, regions)
        })();
        self.pool.give(sflat);
        self.pool.give(dflat);
        r
    }
}

/// The element-serial scatter from a flat values buffer (an entry walk that revisits elements).
#[expect(clippy::too_many_arguments, reason = "both sides and the reduce, each named")]
fn serial_from_flat(
    buf: &mut [u8],
    layout: Layout,
    rel: &[i64],
    values: &[u8],
    plan: &[Step],
    op: MemoryReductionOp,
    dt: bir_ir::Dtype,
    profile: &numerics::Profile,
) -> Result<(), IndirectError> {
    let size = dt.size();
    let len = rel.len();
    if op != MemoryReductionOp::Copy && !dt.is_reducible() {
        return Err(numerics::NumericsError::UnsupportedReduceDtype(dt, op).into());
    }
    for s in plan {
        for (k, r) in rel.iter().enumerate() {
            let Some(b) = layout.address(s.start.saturating_add(*r), size) else {
                return Err(IndirectError::Shape("a planned entry lies outside its location".into()));
            };
            let src = values.get((s.row * len + k) * size..(s.row * len + k + 1) * size);
            let (Some(src), Some(dst)) = (src, buf.get_mut(b..b + size)) else {
                return Err(IndirectError::Shape("a planned entry lies outside its buffer".into()));
            };
            numerics::accumulate(op, dt, dst, src, profile)?;
        }
    }
    Ok(())
}

/// Records a gather's destination AP (bytes and, when tracing, its contents in AP order).
fn record_ap(memory: &mut crate::memory::Memory, dst: Arg<'_>, regions: &mut Written) {
    let n = Pattern::of(dst.ap).elements().unwrap_or(0) as usize * dst.ap.dtype.size();
    regions.record_region(
        |h| {
            let (buf, layout) = memory.buffer_mut(dst.ap.loc);
            let mut out = vec![0u8; n];
            let _ = access_pattern::read(buf, &layout, &Pattern::of(dst.ap), &mut out);
            super::fnv1a(h, &out)
        },
        n as u64,
    );
}

/// Records the table entries a scatter wrote (bytes and, when tracing, their contents in plan
/// order).
pub(super) fn record_entries(
    sim: &mut Simulator<'_>,
    table: Arg<'_>,
    entry: Entry<'_>,
    plan: &[Step],
    regions: &mut Written,
) {
    let size = table.ap.dtype.size();
    let len = entry.len();
    let memory = &mut sim.memory;
    regions.record_region(
        |h| {
            let (buf, layout) = memory.buffer_mut(table.ap.loc);
            let mut out = vec![0u8; plan.len() * len * size];
            let rows: Vec<Step> =
                plan.iter().enumerate().map(|(k, s)| Step { row: k, start: s.start }).collect();
            let _ = indirection::gather(buf, &layout, size, entry, &rows, &mut out);
            super::fnv1a(h, &out)
        },
        (plan.len() * len * size) as u64,
    );
}
