//! SW-DGE descriptor blocks (seed 000 §5.2; re-facts §5; the DGE contract §1–§2;
//! docs/fidelity.md G1–G5, G51).
//!
//! - DMATrigger (67) fires one DMABlock per execution: `dge::swdge::Cursors` picks it (round
//!   robin over `dma_blocks`, per trigger name); the block's descriptors then run in list order,
//!   each classified like an instruction and re-dispatched to the DMACopy mode datapath of
//!   `kit::dma` (DMADescriptorCopy → Copy, CCE → CCE, Transpose → Transpose, Replicate →
//!   Replicate, `oob_is_err` true), exactly as `visitInstDMABlock` re-visits each descriptor. A
//!   descriptor's fault names the block, the descriptor and (as the faulting instruction) the
//!   trigger.
//! - A DMABlock met in the stream runs nothing unless `Options::dma_block_in_stream` says run
//!   (G4). Switch/ResetQueueInstance (85/86) erase the cursors (G5).
//! - A descriptor met outside a DMABlock has no kernel (its classifier says so).

use crate::exec::kit::facts::{Fact, Facts, InstFacts, Verdict};
use crate::exec::kit::{Cx, Res, Stop, Written, bug, dma, unclassified};
use crate::fault::FaultCause;
use ::dge::swdge::{BlockInStream, Cursors, EraseScope};
use bir_ir::ops::{DmaBlockFields, DmaCopyFields, DmaFields, DmaTriggerFields, QueueInstanceFields};
use bir_ir::{CopyMode, Instruction, Op, Opcode};

/// DMATrigger's verdict: it runs; the descriptors it fires are classified as they run.
pub(crate) fn classify_trigger(_: &dyn Facts) -> Verdict {
    Verdict::runs("fires the next DMABlock; its descriptors are classified as they run")
}

/// DMABlock's verdict: a definition.
pub(crate) fn classify_block(_: &dyn Facts) -> Verdict {
    Verdict::runs("a definition (skipped in the stream unless --dma-block-in-stream run)")
}

/// Switch/ResetQueueInstance's verdict.
pub(crate) fn classify_queue(_: &dyn Facts) -> Verdict {
    Verdict::runs("erases trigger cursors")
}

/// A descriptor's verdict: its DMACopy twin's mode inside a DMABlock, no kernel outside one.
fn classify_descriptor(mode: CopyMode, q: &dyn Facts) -> Verdict {
    if !q.yes(Fact::InBlock) {
        return Verdict::no_kernel("a DMA descriptor outside a DMABlock");
    }
    dma::classify_mode(mode, q)
}

/// DMADescriptorCopy (69): DMACopy Copy.
pub(crate) fn classify_copy(q: &dyn Facts) -> Verdict {
    classify_descriptor(CopyMode::Copy, q)
}

/// DMADescriptorCCE (70): DMACopy CCE.
pub(crate) fn classify_cce(q: &dyn Facts) -> Verdict {
    classify_descriptor(CopyMode::Cce, q)
}

/// DMADescriptorTranspose (71): DMACopy Transpose.
pub(crate) fn classify_transpose(q: &dyn Facts) -> Verdict {
    classify_descriptor(CopyMode::Transpose, q)
}

/// DMADescriptorReplicate (72): DMACopy Replicate.
pub(crate) fn classify_replicate(q: &dyn Facts) -> Verdict {
    classify_descriptor(CopyMode::Replicate, q)
}

/// A descriptor in the instruction stream: its classifier refuses it there (no kernel), so the
/// executor never calls this.
pub(crate) fn descriptor(_: &mut Cx<'_>, _: &Instruction, _: &mut Written) -> Res<()> {
    unclassified("a DMA descriptor outside a DMABlock")
}

/// The DMACopy fields a descriptor runs with: its twin mode, `oob_is_err` true, its own
/// `transpose_op`, `constants` and `op` (read as `cce_op`). `None` for a non-descriptor.
fn descriptor_fields(d: &Instruction) -> Option<DmaCopyFields> {
    let (mode, f) = match &d.op {
        Op::DMADescriptorCopy(f) => (CopyMode::Copy, f),
        Op::DMADescriptorCCE(f) => (CopyMode::Cce, f),
        Op::DMADescriptorTranspose(f) => (CopyMode::Transpose, f),
        Op::DMADescriptorReplicate(f) => (CopyMode::Replicate, f),
        _ => return None,
    };
    Some(DmaCopyFields {
        dma: DmaFields::default(),
        mode,
        oob_is_err: true,
        oob_is_err_reg: None,
        transpose_op: f.transpose_op,
        constants: f.constants.clone(),
        cce_op: f.op,
    })
}

/// DMATrigger (67): fires the block its cursor names (G1, G2).
pub(crate) fn trigger(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &DmaTriggerFields,
    regions: &mut Written,
) -> Res<()> {
    let Some(k) = cx.engines.cursors.fire(&i.name, f.dma.queue.as_deref(), &f.dma_blocks) else {
        return Ok(());
    };
    let Some(name) = f.dma_blocks.get(k) else { return bug("a cursor past its block list") };
    let block = block_named(cx, name)?;
    let Op::DMABlock(b) = &block.op else { return bug("a block map entry that is not a DMABlock") };
    run_block(cx, block, b, regions)
}

/// A DMABlock met in the instruction stream (G4).
pub(crate) fn block(cx: &mut Cx<'_>, i: &Instruction, f: &DmaBlockFields, regions: &mut Written) -> Res<()> {
    match cx.options.dma_block_in_stream {
        BlockInStream::Skip => Ok(()),
        BlockInStream::Run => run_block(cx, i, f, regions),
    }
}

/// SwitchQueueInstance (85) / ResetQueueInstance (86): erase the trigger cursors (G5).
pub(crate) fn queue_instance(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &QueueInstanceFields,
    _regions: &mut Written,
) -> Res<()> {
    if Cursors::erases(i.opcode() == Opcode::SwitchQueueInstance, f.no_rearm) {
        cx.engines.cursors.erase(EraseScope::of(f.queue.as_deref()));
    }
    Ok(())
}

/// The DMABlock instruction named `name` (validation made it exist and be unique).
fn block_named<'p>(cx: &mut Cx<'p>, name: &str) -> Res<&'p Instruction> {
    if cx.dma_blocks.is_none() {
        let mut map = std::collections::HashMap::new();
        let f: &'p bir_ir::Function = cx.f;
        f.for_each_instruction(&mut |i| {
            if i.opcode() == Opcode::DMABlock {
                map.entry(i.name.as_str()).or_insert(i);
            }
        });
        cx.dma_blocks = Some(map);
    }
    match cx.dma_blocks.as_ref().and_then(|m| m.get(name)) {
        Some(b) => Ok(*b),
        None => bug("a trigger names a DMABlock validation did not find"),
    }
}

/// Runs a block's descriptors in list order, each as its DMACopy twin; a fault is located
/// at the block and the descriptor (G51).
fn run_block(cx: &mut Cx<'_>, block: &Instruction, b: &DmaBlockFields, regions: &mut Written) -> Res<()> {
    for (index, d) in b.descriptors.iter().enumerate() {
        // Each descriptor is classified as it runs, like an instruction, by its table row's
        // classifier (`classify_descriptor` with its twin mode).
        let r = match descriptor_fields(d) {
            Some(f) => match classify_descriptor(f.mode, &InstFacts::new(d, cx.f, true)).fault(d.opcode()) {
                Some(cause) => Err(cause.into()),
                None => cx.ensure_buffers(d).and_then(|()| {
                    // Scalar offsets resolve as an instruction's do (kit::offsets; descriptors
                    // run with oob_is_err true, so none is tolerated).
                    let resolved = cx.resolve_offsets(d)?;
                    cx.dma_copy(resolved.inst.as_ref().unwrap_or(d), &f, regions)
                }),
            },
            None => bug("validation admits only DMADescriptor* in a DMABlock"),
        };
        match r {
            Ok(()) => {}
            Err(Stop::Fault(cause)) => {
                return Err(FaultCause::InDescriptor {
                    block: block.name.clone(),
                    index,
                    descriptor: d.name.clone(),
                    opcode: d.opcode(),
                    cause,
                }
                .into());
            }
            Err(bug) => return Err(bug),
        }
    }
    Ok(())
}
