//! LoadActFuncSet (6): selects the ScalarEngine's table set on hardware (engines.md §2.5; the
//! reference simulator treats it as a no-op validity gate, RE). birsim evaluates every function
//! on the exact path (docs/fidelity.md E3), so it changes no value and writes nothing; the
//! trace still shows it ran. Its fields (`act_func_set_id`) are kept as written.

use crate::exec::kit::{Cx, Res, Written};
use bir_ir::Instruction;

/// Runs one LoadActFuncSet: nothing to do.
pub(crate) fn run(_cx: &mut Cx<'_>, _i: &Instruction, _regions: &mut Written) -> Res<()> {
    Ok(())
}
