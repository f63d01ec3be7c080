//! DMACopy (32): the mode multiplexer of `kit::dma` (seed 000 §5.2, §7; docs/fidelity.md D1–D4,
//! G6–G8, G50–G56), the datapath fired SW-DGE descriptors run too.

use crate::exec::kit::facts::{Fact, Facts, Verdict};
use crate::exec::kit::{Cx, Res, Written, dma};
use bir_ir::ops::DmaCopyFields;
use bir_ir::{BirEnum, CopyMode, Instruction};

/// Runs a DMACopy in its mode.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, f: &DmaCopyFields, regions: &mut Written) -> Res<()> {
    cx.dma_copy(i, f, regions)
}

/// DMACopy's forms, by `mode` (`kit::dma::classify_mode`).
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    let mode = CopyMode::ALL.get(usize::from(q.get(Fact::CopyMode))).copied();
    dma::classify_mode(mode.unwrap_or(CopyMode::Copy), q)
}
