//! Exponential (103, VectorE, gen4): `dst = cast(exp(src − max_value))` per element, with an
//! optional sum into the engine's accumulator registers (AWS `nki.isa.exponential`;
//! docs/fidelity.md E10).
//!
//! `ins = [src, max_value?, reduce_init?]`, each parameter an fp32 immediate or an AP of one
//! value per partition (absent `max_value` is 0). The difference is one fp32 subtraction (RE:
//! `expf(x − max)`); the exponential is Activation's exact path on it (`exp` in f64 from the
//! `libm` crate, rounded once to fp32). `acc` (NKI `reduce_cmd`) folds the fp32 results, before
//! the output cast, into the registers of the instruction's engine with add (E7);
//! LoadAccumulate first loads them from `reduce_init`. DveReadAccumulator reads them out.

use crate::exec::kit::registers::{Accumulate, Param};
use crate::exec::kit::{Cx, Res, Written, bug};
use bir_ir::ops::ExponentialFields;
use bir_ir::{ActivationFunctionType, Instruction};
use numerics::activation::Fold;

/// Runs one Exponential.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, e: &ExponentialFields, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (_, free) = src.shape()?;
    let total = src.elements()?;
    let max = Param::read(cx, i, 1, total, 0.0)?;
    let load = if i.ins.len() > 2 { Some(Param::read(cx, i, 2, total, 0.0)?) } else { None };
    let acc = Accumulate { acc: e.acc, fold: Fold::Add, load: load.as_ref() };
    acc.check()?;
    // Per block: the subtraction, then the exponential; straight into the output unless the
    // accumulators need the values.
    let block = |at: usize, block: &mut [f32], (): &mut ()| {
        max.each(at, block, |x, m| x - m);
        match numerics::activation::apply(ActivationFunctionType::Exp, block, 0.0) {
            Ok(()) => Ok(()),
            Err(_) => bug("Exp has a closed form"),
        }
    };
    let mapped = cx.map_blocks(src, dst, !acc.active(), || (), block, regions)?;
    let Some(v) = mapped.vals else { return Ok(()) };
    let r = cx.write_f32(dst, &v, regions).and_then(|()| acc.apply(cx, i.engine, &v, free));
    cx.pool.give_f32(v);
    r
}
