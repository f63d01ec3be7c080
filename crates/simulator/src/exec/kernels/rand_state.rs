//! The generators' state (the generators live in `kit::rng`):
//! - SetRandState (seed 000 §5.4, re-facts §7; docs/fidelity.md D7, R1): `ins[0]` reseeds the
//!   host generator and resets the Pool rows and the Vector lanes.
//! - RandSetState (98) / RandGetState (99), and GetRandState (58) as RandGetState (AWS
//!   `rand_set_state`, `rand_get_state`; R2): a row's state words as uint32, `[s0, s1, s2, s3,
//!   s4, counter]` per Xorwow — 6 per row on Pool, 24 (four lanes) on DVE.

use crate::exec::kit::rng::{Lanes, RngEngine, Xorwow};
use crate::exec::kit::{Arg, Cx, Res, Written, fault, same_count};
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

/// The generators of `a`'s rows on the instruction's engine, and the state words they hold per
/// row (validation allows only Pool and DVE).
fn state_of(cx: &mut Cx<'_>, i: &Instruction, a: Arg<'_>) -> Res<(Lanes, usize)> {
    let Some(engine) = RngEngine::of(i.engine) else {
        return fault(FaultCause::BadField { field: "engine", why: "generator state lives on Pool or DVE" });
    };
    let (parts, _) = a.shape()?;
    let words = 6 * engine.lanes();
    let why = "the generators' state words: 6 per row on Pool, 24 on DVE";
    same_count(a.slot, parts * words, a.elements()?, why)?;
    Ok((cx.engines.random.take(engine, parts), words))
}

/// RandSetState: each row's generators take the row's words.
pub(crate) fn set_state(cx: &mut Cx<'_>, i: &Instruction, _regions: &mut Written) -> Res<()> {
    let src = cx.input(i, 0)?;
    let (mut lanes, _) = state_of(cx, i, src)?;
    let mut bytes = cx.pool.take();
    let r = cx.read(src, Dtype::Uint32, &mut bytes);
    if r.is_ok() {
        for (g, w) in lanes.gens.iter_mut().zip(bytes.chunks_exact(24)) {
            *g = Xorwow::from_words(std::array::from_fn(|k| {
                u32::from_le_bytes([w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]])
            }));
        }
        cx.engines.random.put(lanes);
    }
    cx.pool.give(bytes);
    r
}

/// RandGetState (and GetRandState): each row's generators' words; nothing advances.
pub(crate) fn get_state(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let dst = cx.output(i, 0)?;
    let (lanes, _) = state_of(cx, i, dst)?;
    let bytes: Vec<u8> = lanes.gens.iter().flat_map(|g| g.words()).flat_map(u32::to_le_bytes).collect();
    cx.write(dst, Dtype::Uint32, &bytes, regions)
}
