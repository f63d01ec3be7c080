//! The BIR functional simulator: memory store, instruction visitor and the `birsim` CLI.
//!
//! [`Simulator`] runs a [`bir_ir::Validated`] program's entry function in order (blocks, `Loop`
//! repetitions), dispatching once per instruction on its typed opcode (re-facts §5). Operands are
//! read through the AP walk ([`access_pattern`], seed 000 §1), computed in the op's domain (fp32,
//! int32 or 64-bit) with the [`numerics`] functor tables, and written back cast to the output
//! dtype under the selected fidelity [`numerics::Profile`]. Guest faults come back as
//! [`Outcome::Faulted`]; an `Err` is a birsim bug. [`Options`] are the run's semantic switches,
//! set by name through [`Options::set`] (the CLI, the Python package and the conformance runner
//! share its spellings).

pub mod alloc;
pub mod dge_cli;
pub mod dge_memory;
pub mod diff;
pub mod exec;
mod fault;
pub mod io;
pub mod isa_state;
pub mod memory;
pub mod npy;
pub mod support;
pub mod trace;

pub use alloc::OutOfMemory;
pub use dge::swdge::BlockInStream as DmaBlockInStream;
pub use exec::{
    BranchTrace, Check, CheckWarning, Finding, MatmulTrace, Options, OutOfRange, Outcome, Parallelism,
    RangeWarning, RegisterWrite, Simulator, Stats, TraceEntry, TraceRegion, UninitRegisters, Writer,
};
pub use exec::{OptionError, OptionSpec, OptionValues, OptionWord};
pub use fault::{Fault, FaultCause, FaultKind, SimError, Slot};
pub use indirection::Oob as IndirectOob;
pub use memory::Memory;
