//! SetRandState (seed 000 §5.4, re-facts §7; docs/fidelity.md D7): `ins[0]` reseeds the host
//! generator and resets the Pool generator's rows (the generators live in `kit::rng`).

use crate::exec::kit::{Cx, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::{Dtype, Instruction, Number, Operand};

/// SetRandState: `ins[0]` (an immediate or a one-element AP, as uint64) reseeds the host
/// generator and resets the Pool rows (D7).
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, _regions: &mut Written) -> Res<()> {
    let seed = match i.ins.first() {
        Some(Operand::Imm { value, .. }) => match *value {
            Number::Int(v) => v as u64,
            Number::UInt(v) => v,
            Number::Float(f) => f as u64,
        },
        Some(Operand::Ap(_)) => {
            let a = cx.input(i, 0)?;
            let mut bytes = cx.pool.take();
            let r = cx.read(a, Dtype::Uint64, &mut bytes);
            let v = bytes.get(..8).map(|b| {
                let mut w = [0u8; 8];
                w.copy_from_slice(b);
                u64::from_le_bytes(w)
            });
            cx.pool.give(bytes);
            r?;
            match v {
                Some(v) => v,
                None => {
                    return fault(FaultCause::Count {
                        slot: Slot::In(0),
                        expected: 1,
                        actual: 0,
                        why: "SetRandState reads one seed value",
                    });
                }
            }
        }
        _ => return fault(FaultCause::OperandKind { slot: Slot::In(0), want: "an imm_value or an AP" }),
    };
    cx.engines.random.reseed_all(seed);
    Ok(())
}
