//! The reference's run-time checkers (re-facts §5 "MemoryObject": `checkUninitMemReadHelper` over
//! the written-byte interval map, the write guard `canInstReadFromUninitMem(I) ||
//! !result.hasNaN()`, `--check-inst-output-NaN`; docs/fidelity.md B10, B11):
//!
//! - **Uninitialised reads.** The memory store tracks which bytes a load or an instruction ever
//!   wrote (`Memory::mark_written`). Before an instruction runs, the bytes of each input AP are
//!   looked up; an instruction without `can_read_uninit` that would read a byte never written is
//!   reported with its operand, location and the AP-order element (`--uninit-reads`: a warning,
//!   a fault, or off). After it runs, its output APs are marked written.
//! - **Non-finite outputs** (`--nan-outputs`, off by default): after an instruction without
//!   `can_read_uninit`, the first NaN or ±Inf in a float output is reported.
//!
//! Not checked: the data-dependent reads of the indirect family, of a vector-offset DMA and of
//! DMA descriptors (which rows they read depends on index values); their writes, and those of
//! the other instructions that write only some elements of their outputs (a predicated copy, a
//! scatter), mark the whole output AP, so a later read is never wrongly reported.

use super::{Arg, Cx, Res};
use crate::fault::{FaultCause, Slot};
use access_pattern::{Pattern, for_each_span};
use bir_ir::{AccessPattern, DtypeClass, Instruction, Op, Opcode, Operand};

/// What a checker does when it finds something (docs/fidelity.md B10, B11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Check {
    /// Nothing is checked.
    Off,
    /// A warning per instruction after the run (the count and the first case).
    #[default]
    Warn,
    /// A located fault; the instruction writes nothing.
    Fault,
}

/// What an instruction read or wrote that a checker reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// An input element no load or instruction wrote.
    Uninit {
        /// The operand.
        slot: Slot,
        /// Its memory location.
        location: String,
        /// The element's position in the operand's AP order.
        element: u64,
    },
    /// A NaN or infinite output element.
    NonFinite {
        /// The operand.
        slot: Slot,
        /// Its memory location.
        location: String,
        /// The element's position in the operand's AP order.
        element: u64,
        /// Its value, decoded to fp32.
        value: f32,
    },
}

impl Finding {
    /// The fault of a checker set to `fault`.
    pub(crate) fn fault(self) -> FaultCause {
        match self {
            Finding::Uninit { slot, location, element } => {
                FaultCause::UninitializedRead { slot, location, element }
            }
            Finding::NonFinite { slot, location, element, value } => {
                FaultCause::NonFiniteOutput { slot, location, element, value_bits: value.to_bits() }
            }
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Uninit { slot, location, element } => write!(
                f,
                "{slot} reads element {element} (AP order) of '{location}', which nothing wrote (it holds the 0xFF uninitialised marker)"
            ),
            Finding::NonFinite { slot, location, element, value } => {
                write!(f, "{slot} element {element} (AP order) of '{location}' is {value}")
            }
        }
    }
}

/// The instruction's `can_read_uninit` flag (bir-json.md: copies, Load, Save, DMACopy,
/// CopyPredicated).
fn can_read_uninit(op: &Op) -> bool {
    match op {
        Op::GenericCopy(c)
        | Op::AbstractCopy(c)
        | Op::TensorCopy(c)
        | Op::TensorCopyDynamicSrc(c)
        | Op::TensorCopyDynamicDst(c) => c.can_read_uninit,
        Op::Load(d) | Op::Save(d) => d.can_read_uninit,
        Op::DMACopy(d) => d.dma.can_read_uninit,
        Op::CopyPredicated(c) => c.can_read_uninit,
        _ => false,
    }
}

/// Opcodes whose reads depend on index values (module doc), and ReadVarAddr, which reads its
/// input's address, not its bytes: their inputs are not checked.
fn reads_by_index(i: &Instruction) -> bool {
    matches!(
        i.opcode(),
        Opcode::ReadVarAddr
            | Opcode::IndirectCopy
            | Opcode::IndirectLoad
            | Opcode::IndirectSave
            | Opcode::IndirectSaveAccumulate
            | Opcode::GenericIndirectLoad
            | Opcode::GenericIndirectSave
            | Opcode::Gather
            | Opcode::DMATrigger
            | Opcode::DMABlock
    ) || i.ins.iter().chain(&i.outs).any(|o| o.as_ap().is_some_and(|a| a.vector_offset().is_some()))
}

impl Cx<'_> {
    /// The pattern of a static AP in elements of its memory's dtype.
    fn memory_pattern<'a>(&self, ap: &'a AccessPattern) -> Pattern<'a> {
        let mut p = Pattern::of(ap);
        p.elem_size = self.storage(ap).size();
        p
    }

    /// The first input element of `i` never written, if its instruction is checked (module doc).
    pub(crate) fn first_uninit_read(&self, i: &Instruction) -> Option<Finding> {
        if self.options.uninit_reads == Check::Off || can_read_uninit(&i.op) || reads_by_index(i) {
            return None;
        }
        for (k, op) in i.ins.iter().enumerate() {
            let Operand::Ap(ap) = op else { continue };
            if ap.dynamic.is_some() || self.memory.fully_written(ap.loc) {
                continue;
            }
            let p = self.memory_pattern(ap);
            let size = p.elem_size.max(1);
            let layout = self.memory.layout(ap.loc);
            let mut found = None;
            // An AP that leaves its location faults in its kernel; nothing to report here.
            let _ = for_each_span(&layout, &p, |at, bytes| {
                match self.memory.first_unwritten(ap.loc, bytes.clone()) {
                    Some(b) => {
                        found = Some(at + ((b - bytes.start) / size) as u64);
                        false
                    }
                    None => true,
                }
            });
            if let Some(element) = found {
                let location = self.f.location(ap.loc).map_or_else(String::new, |l| l.name.clone());
                return Some(Finding::Uninit { slot: Slot::In(k), location, element });
            }
        }
        None
    }

    /// Marks what `i` wrote: its output APs, whole locations where it picks what it writes
    /// (`picks`: a scatter, a predicated copy, a vector-offset DMA; module doc), and a
    /// DMATrigger's descriptors' outputs.
    pub(crate) fn mark_outputs(&mut self, i: &Instruction, picks: bool) -> Res<()> {
        if self.options.uninit_reads == Check::Off {
            return Ok(());
        }
        for ap in i.outs.iter().filter_map(Operand::as_ap) {
            self.mark_ap(ap, picks)?;
        }
        if let Op::DMATrigger(t) = &i.op {
            for name in &t.dma_blocks {
                let Some(block) = self.dma_blocks.as_ref().and_then(|m| m.get(name.as_str()).copied()) else {
                    continue;
                };
                if let Op::DMABlock(b) = &block.op {
                    let aps = b.descriptors.iter().flat_map(|d| d.outs.iter().filter_map(Operand::as_ap));
                    for ap in aps {
                        self.mark_ap(ap, false)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Marks the bytes of an output AP written: its elements, or its whole location when the
    /// instruction picks what it writes or the AP has a dynamic offset.
    fn mark_ap(&mut self, ap: &AccessPattern, whole: bool) -> Res<()> {
        if self.memory.fully_written(ap.loc) {
            return Ok(());
        }
        if whole || ap.dynamic.is_some() {
            let layout = self.memory.layout(ap.loc);
            return Ok(self.memory.mark_written(ap.loc, layout.origin()..layout.span().unwrap_or(0))?);
        }
        let p = self.memory_pattern(ap);
        let layout = self.memory.layout(ap.loc);
        let (memory, mut done) = (&mut self.memory, Ok(()));
        // An AP that leaves its location faulted in its kernel; what is inside is marked.
        let _ = for_each_span(&layout, &p, |_, bytes| {
            done = memory.mark_written(ap.loc, bytes);
            done.is_ok()
        });
        Ok(done?)
    }

    /// The first NaN or infinite element of `i`'s float outputs, when `--nan-outputs` asks.
    pub(crate) fn first_non_finite(&mut self, i: &Instruction) -> Res<Option<Finding>> {
        if self.options.nan_outputs == Check::Off || can_read_uninit(&i.op) {
            return Ok(None);
        }
        for (k, op) in i.outs.iter().enumerate() {
            let Operand::Ap(ap) = op else { continue };
            if !matches!(ap.dtype.class(), DtypeClass::Float | DtypeClass::PackedFloat)
                || ap.dynamic.is_some()
            {
                continue;
            }
            let mut v = self.pool.take_f32();
            let r = self.read_f32(Arg { slot: Slot::Out(k), ap, cap: self.options.memory_cap }, &mut v);
            let bad = v.iter().position(|x| !x.is_finite()).map(|e| (e, v[e]));
            self.pool.give_f32(v);
            r?;
            if let Some((element, value)) = bad {
                let location = self.f.location(ap.loc).map_or_else(String::new, |l| l.name.clone());
                return Ok(Some(Finding::NonFinite {
                    slot: Slot::Out(k),
                    location,
                    element: element as u64,
                    value,
                }));
            }
        }
        Ok(None)
    }
}
