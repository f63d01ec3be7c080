//! ReadVarAddr (41; KLR 7e15ca6 `ReadVarAddr extends DMA`; docs/bir-json.md "ReadVarAddr",
//! docs/fidelity.md B15): `outs[0]`, one int64/uint64 element, takes the device address of
//! `ins[0]`'s first element in birsim's address space (docs/dge.md G9: location ordinal `k`
//! at `(k + 1) << 40`, plus the element's byte offset in the location's buffer), the addresses
//! DMA descriptors use. A called function's location named like an entry location has that
//! location's ordinal; its own locations have ordinals after the entry's (B14).

use crate::exec::kit::{Cx, Res, Written, fault};
use crate::fault::FaultCause;
use bir_ir::Instruction;

/// ReadVarAddr (41).
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let src = cx.input(i, 0)?;
    let ap = src.ap;
    let layout = cx.memory.layout(ap.loc);
    let base = dge::address::location_base(cx.memory.slot_of(ap.loc));
    let byte = layout.address(ap.offset, ap.dtype.size()).map(|b| (b - layout.origin()) as u64);
    let Some(addr) = base.zip(byte).and_then(|(b, o)| b.checked_add(o)) else {
        return fault(FaultCause::BadField {
            field: "ins[0]",
            why: "its first element has no address (outside its location, or past the address space's 2^24 - 1 locations)",
        });
    };
    let out = cx.output(i, 0)?;
    // int64 and uint64 hold the address's bits alike (validation: one of the two).
    cx.write(out, out.ap.dtype, &addr.to_le_bytes(), regions)
}
