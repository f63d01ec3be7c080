//! `birsim dge PROGRAM.json [--input NAME=FILE.npy]... [--oob fault|skip] [--json]` (issue #13
//! item 6; docs/dge.md "CLI output"): for every DMA instruction of the entry function, in
//! program order (DMACopy in every mode, the DMADescriptor* entries of each DMABlock, and
//! IndirectLoad/IndirectSave/IndirectSaveAccumulate when their index operand's location was
//! given as an input), the
//! descriptors it becomes, their count, the bytes each moves, and a warning when some move fewer
//! than [`SMALL_DESCRIPTOR`] bytes. The index values are the inputs as given (before the program
//! runs); an indirect op whose indices are not an input gets a static note instead.

use crate::dge_memory;
use crate::memory::Memory;
use access_pattern::Pattern;
use bir_ir::{Function, Instruction, LocId, Op};
use dge::Descriptor;
use dge::bir::{Context, Planned};
use serde_json::{Value, json};

/// Descriptors moving fewer bytes than this get a warning (the small-descriptor inefficiency).
pub const SMALL_DESCRIPTOR: u64 = 512;

/// What one DMA instruction became.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its descriptors.
    Descriptors(Vec<Descriptor>),
    /// No list without running the program; why.
    Note(String),
    /// It cannot become descriptors; why.
    Error(String),
}

/// One DMA instruction's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The instruction's name.
    pub name: String,
    /// Its opcode name.
    pub opcode: &'static str,
    /// The DMABlock holding it, for a descriptor entry.
    pub block: Option<String>,
    /// What it became.
    pub outcome: Outcome,
}

/// Plans every DMA instruction of `f`. `given` lists the locations loaded from inputs (their
/// bytes in `memory` are what indirect ops' indices are read from).
pub fn plan_program(f: &Function, memory: &mut Memory, given: &[LocId], oob: indirection::Oob) -> Vec<Entry> {
    let mut order: Vec<(&Instruction, Option<&str>)> = Vec::new();
    let mut block: Option<&str> = None;
    let mut in_block = 0usize;
    f.for_each_instruction(&mut |i| {
        if in_block > 0 {
            in_block -= 1;
            order.push((i, block));
            return;
        }
        if let Op::DMABlock(b) = &i.op {
            block = Some(i.name.as_str());
            in_block = b.descriptors.len();
            return;
        }
        order.push((i, None));
    });
    let mut out = Vec::new();
    for (i, blk) in order {
        let index = index_bytes(f, memory, given, i);
        let layouts = dge_memory::layouts(memory);
        let ctx = Context { function: f, layout: &layouts, oob };
        let Some(r) = dge::bir::plan(&ctx, i, index.as_deref()) else { continue };
        let outcome = match r {
            Ok(Planned::Descriptors(list)) => Outcome::Descriptors(list),
            Ok(Planned::Static(s)) => Outcome::Note(s),
            Err(e) => Outcome::Error(e.to_string()),
        };
        out.push(Entry {
            name: i.name.clone(),
            opcode: i.opcode().name(),
            block: blk.map(str::to_owned),
            outcome,
        });
    }
    out
}

/// The raw bytes of an indirect op's index operand (`ins[1]`), when its location was an input.
fn index_bytes(f: &Function, memory: &mut Memory, given: &[LocId], i: &Instruction) -> Option<Vec<u8>> {
    if !matches!(i.op, Op::IndirectLoad(_) | Op::IndirectSave(_) | Op::IndirectSaveAccumulate(_)) {
        return None;
    }
    let ap = i.in_ap(1)?;
    if !given.contains(&ap.loc) || ap.dynamic.is_some() {
        return None;
    }
    let storage = f.location(ap.loc).and_then(|l| f.allocation(l.alloc)).map(|a| a.dtype)?;
    if storage != ap.dtype {
        return None;
    }
    let p = Pattern::of(ap);
    let n = usize::try_from(p.elements().ok()?).ok()?.checked_mul(ap.dtype.size())?;
    let mut out = Vec::new();
    out.try_reserve(n).ok()?;
    out.resize(n, 0);
    let (buf, layout) = memory.buffer_mut(ap.loc);
    access_pattern::read(buf, &layout, &p, &mut out).ok()?;
    Some(out)
}

fn small(list: &[Descriptor]) -> (usize, u64) {
    let n = list.iter().filter(|d| d.bytes() < SMALL_DESCRIPTOR).count();
    (n, list.iter().map(Descriptor::bytes).min().unwrap_or(0))
}

/// The address-space lines: each location's G9 base.
fn bases(f: &Function) -> Vec<(String, u64)> {
    f.locations
        .iter()
        .enumerate()
        .filter_map(|(k, l)| dge::address::location_base(k).map(|b| (l.name.clone(), b)))
        .collect()
}

/// The text report (docs/dge.md "CLI output").
pub fn render_text(f: &Function, entries: &[Entry]) -> String {
    let mut s = String::from("address space (G9):\n");
    for (name, b) in bases(f) {
        s.push_str(&format!("  {b:#018x} {name}\n"));
    }
    let (mut total, mut bytes, mut warned) = (0usize, 0u64, 0usize);
    for e in entries {
        let inside = e.block.as_ref().map(|b| format!(" in DMABlock '{b}'")).unwrap_or_default();
        match &e.outcome {
            Outcome::Descriptors(list) => {
                let sum: u64 = list.iter().map(Descriptor::bytes).sum();
                s.push_str(&format!(
                    "{} '{}'{inside}: {} descriptor(s), {sum} bytes\n",
                    e.opcode,
                    e.name,
                    list.len()
                ));
                for (k, d) in list.iter().enumerate() {
                    s.push_str(&format!("  #{k} {d}\n"));
                }
                let (n, min) = small(list);
                if n > 0 {
                    warned += 1;
                    s.push_str(&format!(
                        "  warning: {n} of {} descriptor(s) move fewer than {SMALL_DESCRIPTOR} bytes (smallest {min} bytes)\n",
                        list.len()
                    ));
                }
                total += list.len();
                bytes += sum;
            }
            Outcome::Note(n) => {
                s.push_str(&format!("{} '{}'{inside}: no static list: {n}\n", e.opcode, e.name))
            }
            Outcome::Error(m) => s.push_str(&format!("{} '{}'{inside}: error: {m}\n", e.opcode, e.name)),
        }
    }
    s.push_str(&format!(
        "total: {} DMA instruction(s), {total} descriptor(s), {bytes} bytes, {warned} with small descriptors\n",
        entries.len()
    ));
    s
}

fn descriptor_json(d: &Descriptor) -> Value {
    json!({
        "kind": d.kind.name(),
        "src": format!("{:#x}", d.src),
        "dst": format!("{:#x}", d.dst),
        "elem_size": d.elem_size,
        "dims": d.dims().iter().map(|m| json!({"num": m.num, "src_step": m.src_step, "dst_step": m.dst_step})).collect::<Vec<_>>(),
        "compute_op": d.compute_op.name(),
        "dtype": d.dtype.name(),
        "bytes": d.bytes(),
    })
}

/// The same report as JSON.
pub fn render_json(f: &Function, entries: &[Entry]) -> Value {
    let insts: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut v = json!({"name": e.name, "opcode": e.opcode, "block": e.block});
            match &e.outcome {
                Outcome::Descriptors(list) => {
                    let (n, _) = small(list);
                    v["count"] = json!(list.len());
                    v["bytes"] = json!(list.iter().map(Descriptor::bytes).sum::<u64>());
                    v["small"] = json!(n);
                    v["descriptors"] = Value::Array(list.iter().map(descriptor_json).collect());
                }
                Outcome::Note(n) => v["note"] = json!(n),
                Outcome::Error(m) => v["error"] = json!(m),
            }
            v
        })
        .collect();
    json!({
        "address_space": bases(f).into_iter().map(|(n, b)| json!({"location": n, "base": format!("{b:#x}")})).collect::<Vec<_>>(),
        "small_descriptor_bytes": SMALL_DESCRIPTOR,
        "instructions": insts,
    })
}
