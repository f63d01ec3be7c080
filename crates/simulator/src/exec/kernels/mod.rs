//! The kernels: one file per instruction family, each a set of free functions
//! `run(cx, instruction, fields, written)` with their `classify`, listed in `exec/table.rs`. A
//! kernel imports only from `exec::kit` (the floor), `crate::fault` and the crates below the
//! simulator — never from another kernel (a test reads these files to check).

pub(crate) mod cache;
pub(crate) mod copy;
pub(crate) mod dge;
pub(crate) mod dma;
pub(crate) mod elementwise;
pub(crate) mod indirect;
pub(crate) mod iota;
pub(crate) mod memset;
pub(crate) mod rand_state;
pub(crate) mod reciprocal;
pub(crate) mod reduce;
pub(crate) mod select;
pub(crate) mod stream;
