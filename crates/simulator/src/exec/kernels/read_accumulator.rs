//! ReadActivationAccumulator (5), ActivationReadAccumulator (101) and DveReadAccumulator (102):
//! copy the accumulator registers of the instruction's engine into `outs[0]`, one value per
//! partition (RE: both ScalarE opcodes copy the accumulator into an fp32 destination by plain
//! write; AWS: `activation_reduce` is the Activation plus this read-out; docs/fidelity.md E8).
//!
//! Row r of the output gets register r (+0 if never written), cast to the output's dtype as
//! every write; an output with more than one element per partition is a fault. The registers
//! are unchanged.

use crate::exec::kit::{Cx, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::Instruction;

/// Runs one read-out.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let dst = cx.output(i, 0)?;
    let (parts, free) = dst.shape()?;
    if free != 1 {
        return fault(FaultCause::Dims {
            slot: Slot::Out(0),
            why: "a read-out of the accumulators writes one value per partition ([P, 1])",
        });
    }
    let mut v = cx.pool.take_f32();
    let r = crate::alloc::resize(&mut v, parts, 0.0).map_err(Into::into).and_then(|()| {
        v.iter_mut().zip(cx.engines.registers.of(i.engine)).for_each(|(d, r)| *d = *r);
        cx.write_f32(dst, &v, regions)
    });
    cx.pool.give_f32(v);
    r
}
