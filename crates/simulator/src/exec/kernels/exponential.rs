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

/// Elements per block of a thread's piece (kept in cache between the two steps).
const BLOCK: usize = 4096;

/// Runs one Exponential.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, e: &ExponentialFields, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (_, free) = src.shape()?;
    let total = src.elements()?;
    let max = Param::read(cx, i, 1, total, 0.0)?;
    let load = if i.ins.len() > 2 { Some(Param::read(cx, i, 2, total, 0.0)?) } else { None };
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(src, &mut v).and_then(|()| {
        // Per cache-sized block of each thread's piece: the subtraction, then the exponential.
        let exp = |offset: usize, piece: &mut [f32]| {
            piece.chunks_mut(BLOCK).enumerate().try_for_each(|(b, block)| {
                max.each(offset + b * BLOCK, block, |x, m| x - m);
                numerics::activation::apply(ActivationFunctionType::Exp, block, 0.0)
            })
        };
        if cx.options.parallelism.chunks(&mut v, 1, exp).is_err() {
            return bug("Exp has a closed form");
        }
        cx.write_f32(dst, &v, regions)?;
        Accumulate { acc: e.acc, fold: Fold::Add, load: load.as_ref() }.apply(cx, i.engine, &v, free)
    });
    cx.pool.give_f32(v);
    r
}
