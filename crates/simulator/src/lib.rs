//! The BIR functional simulator: memory store, instruction visitor and the `birsim` CLI.
//!
//! This crate will own (issue "simulator"): the lazily created, 0xFF-filled memory objects
//! (re-facts §5), the visitor that runs a validated program in order, and the elementwise,
//! reduce, data-movement and indirect kernels built on the lower crates.
