//! DMA descriptor generation (DGE) and execution (issue #13; contract /work/dge-decisions.md §3;
//! docs/dge.md).
//!
//! - [`descriptor`]: typed descriptors (kinds DIRECT2D / INDIRECT1D / TRANSPOSE /
//!   GATHER_TRANSPOSE, 64-bit addresses, up to five `[num, src_step, dst_step]` dims, element
//!   size, compute op) and the emission records (GENERATE, DIMPUSH, REGWRITE, doorbell) of seed
//!   004 §6.
//! - [`address`]: the G9 address space of a BIR program's locations.
//! - [`generate`]: descriptor lists from AP pairs (seed 000 §1.3 fusion), from the indirect ops'
//!   plans (crates/indirection), from DMA_INDIRECT1D-shaped requests and GATHER_XPOSE.
//! - [`bir`]: what a BIR DMA instruction becomes.
//! - [`execute`](mod@execute): a descriptor list run against any [`DescriptorMemory`].
//! - [`isa`]: DMA_INDIRECT1D words against the ISA `Machine` (crates/indirection `isa`).
//! - [`swdge`]: SW-DGE planning: the per-trigger round-robin cursors (which DMABlock a
//!   DMATrigger fires next) and their erase rules (seed 000 §5.2; the simulator executes).
//!
//! The simulator implements [`DescriptorMemory`] for its store; `dge` never sees it.

pub mod address;
pub mod bir;
pub mod descriptor;
pub mod execute;
pub mod generate;
pub mod isa;
pub mod swdge;

pub use descriptor::{ComputeOp, Descriptor, DgeComputeOp, DgeKind, Dim, Emission, emissions};
pub use execute::{DescriptorMemory, ExecError, FlatMemory, MemoryError, execute, execute_with};
pub use generate::DgeError;
