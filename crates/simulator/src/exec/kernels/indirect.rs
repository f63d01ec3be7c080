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

use crate::exec::kit::facts::{Fact, Facts, Verdict};
use crate::exec::kit::{Arg, Cx, Res, Stop, Written, bug, fault, fnv1a, record_entries, unclassified};
use crate::fault::FaultCause;
use crate::memory::Touch;
use access_pattern::injective;
use access_pattern::{Layout, Pattern};
use bir_ir::ops::{
    GenericIndirectFields, IndirectCopyFields, IndirectFields, IndirectSaveAccumulateFields, IndirectWrap,
};
use bir_ir::{Instruction, MemoryReductionOp, Opcode};
use indirection::plan::{self, GenericDim, GenericGeometry, Step, Table, Wrap};
use indirection::{Addressing, Direction, Entry, IndirectError, decode};

/// The indirect ops: scalar dynamic offsets run (the floor resolves them,
/// `facts::classify_offsets`); an operand whose AP dtype differs from its memory's is not
/// implemented yet.
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = crate::exec::kit::facts::classify_offsets(q) {
        return v;
    }
    if q.yes(Fact::StorageCast) {
        return Verdict::not_implemented("indirect operands whose AP dtype differs from their memory's");
    }
    Verdict::runs("")
}

/// GenericIndirectLoad/Save: an indirect copy does not cast (validation), then as [`classify`].
pub(crate) fn classify_generic(q: &dyn Facts) -> Verdict {
    if q.yes(Fact::InOutDiffer) {
        return Verdict::rejected("bir-ir validation: an indirect copy does not cast");
    }
    classify(q)
}

fn ind(e: IndirectError) -> Stop {
    FaultCause::Indirect(e).into()
}

fn wrap_of(w: Option<IndirectWrap>) -> Option<Wrap> {
    w.map(|w| Wrap { n: w.n, hi: w.hi })
}

/// Indirect operands are read and written in their memory's own dtype (runAP asserts it).
fn same_storage(cx: &Cx<'_>, args: &[Arg<'_>]) -> Res<()> {
    if args.iter().any(|a| !cx.uncast(a.ap) || a.ap.dynamic.is_some()) {
        return unclassified(
            "indirect operands whose AP dtype differs from their memory's (or with a dynamic offset)",
        );
    }
    Ok(())
}

/// How an index operand decodes (seed 000 §6.1, §6.2; fidelity I1, I9, I11).
#[derive(Clone, Copy)]
enum Decode {
    /// The Load/Save family: uint64/int64 rebased by −2^32, −1 = skip.
    Rebased,
    /// IndirectSaveAccumulate: plain rows (§6.2 rebases the table base instead).
    Plain,
    /// The local gathers: zero-extended, from the opcode's dtype set.
    Local(&'static [bir_ir::Dtype]),
}

/// Reads index operand `a` and decodes it into scratch list `slot`.
fn indices(cx: &mut Cx<'_>, a: Arg<'_>, slot: usize, how: Decode) -> Res<Vec<u64>> {
    let mut bytes = cx.pool.take();
    let r = cx.read(a, a.ap.dtype, &mut bytes);
    let mut out = cx.scratch.idx.get_mut(slot).map(std::mem::take).unwrap_or_default();
    out.clear();
    // One u64 per index, reserved fallibly (the decoders then extend within capacity).
    if let Err(e) = crate::alloc::reserve(&mut out, bytes.len() / a.ap.dtype.size().max(1)) {
        cx.pool.give(bytes);
        return Err(e.into());
    }
    let k = match a.slot {
        crate::fault::Slot::In(k) | crate::fault::Slot::Out(k) => k,
    };
    let d = r.and_then(|()| {
        match how {
            Decode::Rebased => decode::decode_indices(a.ap.dtype, &bytes, k, &mut out),
            Decode::Plain => decode::decode_accumulate_indices(a.ap.dtype, &bytes, k, &mut out),
            Decode::Local(set) => decode::decode_local_indices(a.ap.dtype, &bytes, set, k, &mut out),
        }
        .map_err(ind)
    });
    cx.pool.give(bytes);
    d.map(|()| out)
}

/// The reused plan buffer, emptied, with room for `n` steps reserved fallibly (the plan
/// builders then push within capacity).
fn plan_buffer(cx: &mut Cx<'_>, n: usize) -> Res<Vec<Step>> {
    let mut steps = std::mem::take(&mut cx.scratch.plan);
    steps.clear();
    crate::alloc::reserve(&mut steps, n)?;
    Ok(steps)
}

fn give_indices(cx: &mut Cx<'_>, slot: usize, v: Vec<u64>) {
    while cx.scratch.idx.len() <= slot {
        cx.scratch.idx.push(Vec::new());
    }
    cx.scratch.idx[slot] = v;
}

/// The table of an IndirectLoad/Save/SaveAccumulate: entry r is the `len` contiguous elements
/// from `offset + r·step` (step: the table AP's final-level step, or IndirectSaveAccumulate's
/// `entry_step_elements`), bounded only by the table's location (seed 000 §6.1/§6.3; I2, I4).
fn table_of(cx: &Cx<'_>, t: Arg<'_>, step: Option<i64>, len: usize) -> Res<Table> {
    let Some(last) = t.ap.pairs.last() else { return bug("a validated table AP has no levels") };
    let size = t.ap.dtype.size();
    let capacity = cx.memory.layout(t.ap.loc).capacity(size);
    Ok(Table::contiguous(t.ap.offset, step.unwrap_or(last.step), len as u64, capacity))
}

/// Gathers `plan` from the table into `dst` (rows of `entry.len()` elements in AP order).
fn run_gather(
    cx: &mut Cx<'_>,
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
    if memory_same(cx, table, dst) {
        let dense = indirection::exec::element_offsets(dst.ap.offset, &dst.ap.pairs);
        let rel = entry.offsets();
        let (tl, dl) = (cx.memory.layout(table.ap.loc), cx.memory.layout(dst.ap.loc));
        let profile = cx.profile;
        let (buf, _) = cx.memory.buffer_mut(table.ap.loc);
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
        record_ap(&mut cx.memory, dst, regions);
        return Ok(());
    }
    if !injective(dst.ap) {
        // A destination that revisits elements: the planned rows, written in plan order.
        let mut flat = cx.pool.take();
        crate::alloc::resize(&mut flat, rows * len * size, 0)?;
        let (tb, tl) = cx.memory.buffer_mut(table.ap.loc);
        let r = indirection::gather(tb, &tl, size, entry, plan, &mut flat).map_err(ind);
        let r = r.and_then(|()| write_rows(cx, dst, &flat, len, plan, regions));
        cx.pool.give(flat);
        return r;
    }
    // A contiguous destination in its own buffer: gather in place.
    if let Some(range) = cx.contiguous(dst)?
        && range.len() == rows * len * size
    {
        let covers = plan.len() == rows;
        let td = Touch { range: Some(range.clone()), covers };
        let done = cx.memory.with_two((table.ap.loc, &Touch::ALL), (dst.ap.loc, &td), |tb, tl, db, _| {
            indirection::gather(tb, &tl, size, entry, plan, &mut db[range.clone()])
        });
        if let Some(r) = done {
            r.map_err(ind)?;
            let memory = &mut cx.memory;
            regions.record_region(
                |h| fnv1a(h, &memory.buffer_for(dst.ap.loc, &td).0[range.clone()]),
                range.len() as u64,
            );
            return Ok(());
        }
    }
    let mut flat = cx.pool.take();
    let r = (|| {
        if plan.len() < rows {
            cx.read(dst, dt, &mut flat)?;
        } else {
            crate::alloc::resize(&mut flat, rows * len * size, 0)?;
        }
        let (tb, tl) = cx.memory.buffer_mut(table.ap.loc);
        indirection::gather(tb, &tl, size, entry, plan, &mut flat).map_err(ind)?;
        cx.write(dst, dt, &flat, regions)
    })();
    cx.pool.give(flat);
    r
}

/// Writes the planned rows of `flat` (dst rows of `len` elements, AP order) into `dst`
/// element by element in plan order (a destination that revisits elements: last writer wins).
fn write_rows(
    cx: &mut Cx<'_>,
    dst: Arg<'_>,
    flat: &[u8],
    len: usize,
    plan: &[Step],
    regions: &mut Written,
) -> Res<()> {
    let size = dst.ap.dtype.size();
    let dense = indirection::exec::element_offsets(dst.ap.offset, &dst.ap.pairs);
    let (buf, dl) = cx.memory.buffer_mut(dst.ap.loc);
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
    record_ap(&mut cx.memory, dst, regions);
    Ok(())
}

fn memory_same(cx: &Cx<'_>, a: Arg<'_>, b: Arg<'_>) -> bool {
    cx.memory.same_buffer(a.ap.loc, b.ap.loc)
}

/// Scatters `values` (rows of `entry.len()` elements in AP order) into the plan's entries.
fn run_scatter(
    cx: &mut Cx<'_>,
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
        Entry::Walk(p) => access_pattern::distinct_pairs(p),
    };
    let profile = cx.profile;
    if memory_same(cx, values, table) || !walk_ok {
        let dense = indirection::exec::element_offsets(values.ap.offset, &values.ap.pairs);
        let rel = entry.offsets();
        let (tl, dl) = (cx.memory.layout(table.ap.loc), cx.memory.layout(values.ap.loc));
        if !memory_same(cx, values, table) {
            // Distinct buffers but an entry revisiting elements: read the values first.
            let mut flat = cx.pool.take();
            let r = cx.read(values, dt, &mut flat).and_then(|()| {
                let (buf, _) = cx.memory.buffer_mut(table.ap.loc);
                serial_from_flat(buf, tl, &rel, &flat, plan, op, dt, &profile).map_err(ind)
            });
            cx.pool.give(flat);
            r?;
        } else {
            let (buf, _) = cx.memory.buffer_mut(table.ap.loc);
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
        record_entries(&mut cx.memory, table, entry, plan, regions);
        return Ok(());
    }
    // Values one contiguous run in their own buffer: scatter straight from it.
    if let Some(range) = cx.contiguous(values)? {
        let tv = Touch { range: Some(range.clone()), covers: false };
        let done = cx.memory.with_two((values.ap.loc, &tv), (table.ap.loc, &Touch::ALL), |vb, _, tb, tl| {
            indirection::scatter(&vb[range.clone()], plan, entry, tb, &tl, op, dt, &profile)
        });
        if let Some(r) = done {
            r.map_err(ind)?;
            record_entries(&mut cx.memory, table, entry, plan, regions);
            return Ok(());
        }
    }
    let mut flat = cx.pool.take();
    let r = cx.read(values, dt, &mut flat).and_then(|()| {
        let (buf, layout) = cx.memory.buffer_mut(table.ap.loc);
        indirection::scatter(&flat, plan, entry, buf, &layout, op, dt, &profile).map_err(ind)
    });
    cx.pool.give(flat);
    r?;
    record_entries(&mut cx.memory, table, entry, plan, regions);
    Ok(())
}

/// IndirectLoad (43): dst row j ← table entry idx[j] (seed 000 §6.2; I1–I4).
pub(crate) fn indirect_load(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &IndirectFields,
    regions: &mut Written,
) -> Res<()> {
    let (table, idx, dst) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    same_storage(cx, &[table, dst])?;
    let len = dst.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize);
    let t = table_of(cx, table, None, len)?;
    let ix = indices(cx, idx, 0, Decode::Rebased)?;
    let mut steps = plan_buffer(cx, ix.len())?;
    let r = plan::rows(&ix, &t, wrap_of(f.wrap), cx.options.indirect_oob, 1, &mut steps)
        .map_err(|e| ind(e.index_dtype(idx.ap.dtype, true)))
        .and_then(|()| run_gather(cx, table, None, Entry::Contiguous(len), dst, &steps, regions));
    give_indices(cx, 0, ix);
    cx.scratch.plan = steps;
    r
}

/// IndirectSave (45): table entry idx[j] ← values row j, last writer wins.
pub(crate) fn indirect_save(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &IndirectFields,
    regions: &mut Written,
) -> Res<()> {
    let (values, idx, table) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    same_storage(cx, &[table, values])?;
    let len = values.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize);
    let t = table_of(cx, table, None, len)?;
    let ix = indices(cx, idx, 0, Decode::Rebased)?;
    let mut steps = plan_buffer(cx, ix.len())?;
    let r = plan::rows(&ix, &t, wrap_of(f.wrap), cx.options.indirect_oob, 1, &mut steps)
        .map_err(|e| ind(e.index_dtype(idx.ap.dtype, true)))
        .and_then(|()| {
            run_scatter(cx, values, Entry::Contiguous(len), table, &steps, MemoryReductionOp::Copy, regions)
        });
    give_indices(cx, 0, ix);
    cx.scratch.plan = steps;
    r
}

/// IndirectSaveAccumulate (46): the 2-D slot build, entry-major, then copy or add (I5, I6).
pub(crate) fn indirect_save_accumulate(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &IndirectSaveAccumulateFields,
    regions: &mut Written,
) -> Res<()> {
    let (values, idx, table) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    same_storage(cx, &[table, values])?;
    let op = numerics::memory_reduction(f.op).map_err(|error| FaultCause::Op { field: "op", error })?;
    let len = values.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize);
    let t = table_of(cx, table, Some(f.entry_step_elements), len)?;
    let parts = idx.ap.pairs.first().map_or(1, |p| p.num.max(1) as usize);
    let ix = indices(cx, idx, 0, Decode::Plain)?;
    let mut steps = plan_buffer(cx, ix.len())?;
    let r = plan::save_accumulate(
        &ix,
        parts,
        f.num_indices,
        &t,
        wrap_of(f.wrap),
        cx.options.indirect_oob,
        1,
        &mut steps,
    )
    .map_err(|e| ind(e.index_dtype(idx.ap.dtype, false)))
    .and_then(|()| run_scatter(cx, values, Entry::Contiguous(len), table, &steps, op, regions));
    give_indices(cx, 0, ix);
    cx.scratch.plan = steps;
    r
}

/// GenericIndirectLoad (42) / GenericIndirectSave (44): Σ coef·idx per entry (I7, I8).
pub(crate) fn generic_indirect(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &GenericIndirectFields,
    regions: &mut Written,
) -> Res<()> {
    let load = i.opcode() == Opcode::GenericIndirectLoad;
    let (table, dense) =
        if load { (cx.input(i, 0)?, cx.output(i, 0)?) } else { (cx.output(i, 0)?, cx.input(i, 0)?) };
    same_storage(cx, &[table, dense])?;
    let mut levels = Vec::with_capacity(f.indirect_dims.len());
    for d in &f.indirect_dims {
        let Some(l) = table.ap.indirect_level(*d) else {
            return bug("a validated indirect dim names no level");
        };
        levels.push(l);
    }
    let geometry = GenericGeometry::new(&table.ap.pairs, &levels).map_err(ind)?;
    let mut lists = Vec::with_capacity(levels.len());
    for k in 0..levels.len() {
        let a = cx.input(i, k + 1)?;
        match indices(cx, a, k, Decode::Rebased) {
            Ok(v) => lists.push(v),
            Err(e) => {
                for (s, v) in lists.into_iter().enumerate() {
                    give_indices(cx, s, v);
                }
                return Err(e);
            }
        }
    }
    let dims: Vec<GenericDim<'_>> = lists
        .iter()
        .zip(&levels)
        .enumerate()
        .map(|(k, (idx, &level))| GenericDim { idx, operand: k + 1, level })
        .collect();
    let capacity = cx.memory.layout(table.ap.loc).capacity(table.ap.dtype.size());
    let mut steps = plan_buffer(cx, lists.first().map_or(0, Vec::len))?;
    let built = plan::generic(
        &dims,
        &geometry,
        table.ap.offset,
        capacity,
        wrap_of(f.wrap),
        cx.options.indirect_oob,
        &mut steps,
    );
    drop(dims);
    let entry = Entry::Contiguous(geometry.len);
    let r = built.map_err(ind).and_then(|()| {
        if load {
            run_gather(cx, table, None, entry, dense, &steps, regions)
        } else {
            let op =
                numerics::memory_reduction(f.op).map_err(|error| FaultCause::Op { field: "op", error })?;
            run_scatter(cx, dense, entry, table, &steps, op, regions)
        }
    });
    for (s, v) in lists.into_iter().enumerate() {
        give_indices(cx, s, v);
    }
    cx.scratch.plan = steps;
    r
}

/// IndirectCopy (26): 16-partition blocks, column-major index lists; an index is an element
/// offset into the partition's own source and moves E = the dst AP's innermost num elements
/// (NKI local_gather's `num_elem_per_idx`; I9, I10).
pub(crate) fn indirect_copy(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &IndirectCopyFields,
    regions: &mut Written,
) -> Res<()> {
    let (src, idx, dst) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    let (parts, src_per) = src.shape()?;
    let len =
        if dst.ap.pairs.len() >= 2 { dst.ap.pairs.last().map_or(1, |p| p.num.max(1) as usize) } else { 1 };
    let ix = indices(cx, idx, 0, Decode::Local(decode::INDIRECT_COPY_INDEX))?;
    let mut steps = plan_buffer(cx, ix.len().saturating_mul(16))?;
    let r = plan::indirect_copy(
        &ix,
        parts,
        f.num_valid_indices,
        src_per,
        len,
        cx.options.indirect_oob,
        1,
        &mut steps,
    )
    .map_err(|e| ind(e.index_dtype(idx.ap.dtype, false)))
    .and_then(|()| local_gather(cx, src, dst, len, &steps, regions));
    give_indices(cx, 0, ix);
    cx.scratch.plan = steps;
    r
}

/// Gather (92): within-partition element gather (I11).
pub(crate) fn gather(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, idx, dst) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    let (parts, src_per) = src.shape()?;
    let ix = indices(cx, idx, 0, Decode::Local(decode::GATHER_INDEX))?;
    let mut steps = plan_buffer(cx, ix.len())?;
    let r = plan::gather_rows(&ix, parts, src_per, cx.options.indirect_oob, 1, &mut steps)
        .map_err(|e| ind(e.index_dtype(idx.ap.dtype, false)))
        .and_then(|()| local_gather(cx, src, dst, 1, &steps, regions));
    give_indices(cx, 0, ix);
    cx.scratch.plan = steps;
    r
}

/// The local gathers: the source is addressed in its own AP order (plan starts are flat
/// source element numbers).
fn local_gather(
    cx: &mut Cx<'_>,
    src: Arg<'_>,
    dst: Arg<'_>,
    len: usize,
    plan: &[Step],
    regions: &mut Written,
) -> Res<()> {
    same_storage(cx, &[src, dst])?;
    let dt = dst.ap.dtype;
    let size = dt.size();
    // Sharing a buffer matters only when the source and destination extents meet.
    let meet = match (cx.extent(src.ap), cx.extent(dst.ap)) {
        (Some(a), Some(b)) => a.start < b.end && b.start < a.end,
        _ => true,
    };
    if memory_same(cx, src, dst) && meet {
        let smap = indirection::exec::element_offsets(src.ap.offset, &src.ap.pairs);
        let dmap = indirection::exec::element_offsets(dst.ap.offset, &dst.ap.pairs);
        let (sl, dl) = (cx.memory.layout(src.ap.loc), cx.memory.layout(dst.ap.loc));
        let rel: Vec<i64> = (0..len as i64).collect();
        let profile = cx.profile;
        let (buf, _) = cx.memory.buffer_mut(src.ap.loc);
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
        record_ap(&mut cx.memory, dst, regions);
        return Ok(());
    }
    if !injective(dst.ap) {
        let (mut sflat, mut dflat) = (cx.pool.take(), cx.pool.take());
        let r = (|| {
            cx.read(src, dt, &mut sflat)?;
            crate::alloc::resize(&mut dflat, dst.elements()? * size, 0)?;
            let layout = Layout::flat(0, sflat.len() as u64);
            indirection::gather(&sflat, &layout, size, Entry::Contiguous(len), plan, &mut dflat)
                .map_err(ind)?;
            write_rows(cx, dst, &dflat, len, plan, regions)
        })();
        cx.pool.give(sflat);
        cx.pool.give(dflat);
        return r;
    }
    let (mut sflat, mut dflat) = (cx.pool.take(), cx.pool.take());
    let r = (|| {
        cx.read(src, dt, &mut sflat)?;
        cx.read(dst, dt, &mut dflat)?;
        let layout = Layout::flat(0, sflat.len() as u64);
        indirection::gather(&sflat, &layout, size, Entry::Contiguous(len), plan, &mut dflat).map_err(ind)?;
        cx.write(dst, dt, &dflat, regions)
    })();
    cx.pool.give(sflat);
    cx.pool.give(dflat);
    r
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
            fnv1a(h, &out)
        },
        n as u64,
    );
}
