//! The synchronisation-only instructions: GroupResetSemaphores (14), Drain (16), Halt (17),
//! CoreBarrier (87) and TensorCompletion (94). The reference's bodies of Drain, Halt,
//! CoreBarrier and TensorCompletion are empty — their effect is only their SyncInfo — and
//! GroupResetSemaphores only zeroes semaphores (re-facts "Sync state", CONFIRMED); birsim models
//! no sync state (as for NoOp, EventSemaphore, AllEngineBarrier), so each runs, changes no value
//! and is recorded in the trace (docs/fidelity.md Q2). Their fields are kept as written.

use crate::exec::kit::{Cx, Res, Written};
use bir_ir::Instruction;

/// Runs one synchronisation-only instruction: nothing to do.
pub(crate) fn run(_cx: &mut Cx<'_>, _i: &Instruction, _regions: &mut Written) -> Res<()> {
    Ok(())
}
