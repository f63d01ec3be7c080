//! The scalar register instructions (re-facts §5 "RegState", "TensorLoad/TensorSave move one
//! scalar between memory and a register"; KLR `RegisterMove`, `RegisterAluOp`, `TensorLoad`,
//! `TensorStore`; AWS `register_move`, `register_load`, `register_store`; docs/bir-json.md
//! "Registers", docs/fidelity.md B1–B4):
//!
//! - RegisterMove (74): `outs[0] = ins[0]` (an integer immediate or a register).
//! - RegisterAlu (73): `outs[0] = ins[0] op ins[1]` on 32 bits (`numerics::register`).
//! - TensorLoad (75): a register takes one integer element of memory, sign- or zero-extended.
//! - TensorSave (76): one integer element of memory takes a register's low bits.
//!
//! Every instruction uses its own engine's file. A faulting instruction writes nothing.

use crate::exec::kit::facts::{Fact, Facts, Verdict};
use crate::exec::kit::{Cx, Res, Written, bug, fault};
use crate::fault::FaultCause;
use bir_ir::ops::RegisterAluFields;
use bir_ir::{Dtype, Instruction, Operand};
use numerics::register::{RegisterAluError, register_alu};

/// The written register of `i` (`outs[0]`).
fn dst(i: &Instruction) -> Res<&str> {
    match i.outs.first() {
        Some(Operand::Register { regref, .. }) => Ok(regref),
        _ => bug("validation let through a register instruction without its register output"),
    }
}

/// RegisterMove (74).
pub(crate) fn register_move(cx: &mut Cx<'_>, i: &Instruction, _regions: &mut Written) -> Res<()> {
    let Some(src) = i.ins.first() else { return bug("RegisterMove without ins[0]") };
    let v = cx.register_operand(i.engine, src)?;
    cx.engines.scalars.set(i.engine, dst(i)?, v);
    Ok(())
}

/// RegisterAlu's classifier: a 64-bit (register pair) operation does not run: no source pins
/// how its pair is formed (re-facts §5: "64-bit uses a Hi/Lo pair; not pinned").
pub(crate) fn classify_alu(q: &dyn Facts) -> Verdict {
    if q.yes(Fact::Register64) {
        return Verdict::not_implemented("a 64-bit RegisterAlu (is_64bit): no source pins its register pair");
    }
    Verdict::runs("")
}

/// RegisterAlu (73).
pub(crate) fn register_alu_run(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &RegisterAluFields,
    _regions: &mut Written,
) -> Res<()> {
    let (x, y, signed) = cx.register_pair(i)?;
    let v = match register_alu(f.op, x, y, signed) {
        Ok(v) => v,
        Err(RegisterAluError::DivisionByZero) => return fault(FaultCause::DivisionByZero { op: f.op, a: x }),
        Err(RegisterAluError::Unsupported(_)) => return bug("validation let through a register ALU op"),
    };
    cx.engines.scalars.set(i.engine, dst(i)?, v);
    Ok(())
}

/// TensorLoad (75): the register gets the element's bits in its AP's dtype, sign- or
/// zero-extended to 32 (an integer dtype of at most 32 bits: validation).
pub(crate) fn tensor_load(cx: &mut Cx<'_>, i: &Instruction, _regions: &mut Written) -> Res<()> {
    let src = cx.input(i, 0)?;
    let dtype = src.ap.dtype;
    let mut bytes = cx.pool.take();
    let r = cx.read(src, dtype, &mut bytes);
    let v = match (dtype, bytes.as_slice()) {
        (Dtype::Int8, [b, ..]) => Some(i32::from(*b as i8) as u32),
        (Dtype::Uint8, [b, ..]) => Some(u32::from(*b)),
        (Dtype::Int16, [a, b, ..]) => Some(i32::from(i16::from_le_bytes([*a, *b])) as u32),
        (Dtype::Uint16, [a, b, ..]) => Some(u32::from(u16::from_le_bytes([*a, *b]))),
        (Dtype::Int32 | Dtype::Uint32, [a, b, c, d, ..]) => Some(u32::from_le_bytes([*a, *b, *c, *d])),
        _ => None,
    };
    cx.pool.give(bytes);
    r?;
    let Some(v) = v else {
        return bug(
            "validation let through a TensorLoad of a dtype other than an integer of at most 32 bits",
        );
    };
    cx.engines.scalars.set(i.engine, dst(i)?, v);
    Ok(())
}

/// TensorSave (76): the element takes the register's low bits, as many as its dtype holds.
pub(crate) fn tensor_save(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let Some(Operand::Register { regref, .. }) = i.ins.first() else {
        return bug("TensorSave without its register");
    };
    let v = cx.register(i.engine, regref)?;
    let out = cx.output(i, 0)?;
    let size = out.ap.dtype.size();
    let Some(bytes) = v.to_le_bytes().get(..size).map(<[u8]>::to_vec) else {
        return bug("validation let through a TensorSave dtype wider than a register");
    };
    cx.write(out, out.ap.dtype, &bytes, regions)
}
