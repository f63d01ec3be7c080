//! DMA descriptor generation (DGE) and execution.
//!
//! This crate will own (issue "DGE"): the software-DGE descriptor lists (DMATrigger → DMABlock →
//! DMADescriptor*, seed 000 §5.2), the hardware-DGE dynamic-offset bridge (seed 000 §7), and
//! descriptor generation as seed 004 describes it.

pub mod swdge;
