//! [W,Z,Y,X] access-pattern linearization and AP reads/writes over partitioned memory.
//!
//! Every copy, elementwise op and gather in birsim goes through this crate (seed 000 §1: "every
//! one of these ops is one shared primitive — read an access pattern into a flat byte buffer,
//! optionally transform, write it back through another access pattern").
//!
//! - [`Pattern`] and [`Runs`]: the reference `linearizedElementIntervals` (seed 000 §1.3): unit
//!   dims dropped, contiguous inner dims fused into one run, one base offset per outer iteration.
//! - [`Layout`]: where element `e` of a memory location lives in a byte buffer, by the pitch rule
//!   of bir-json.md (partition `e / pitch`, byte `(e % pitch)·size`); flat for DRAM.
//! - [`read`], [`write`], [`for_each_element`]: byte gathers/scatters through an AP, dispatched
//!   once on element width, plus the per-element hook the simulator's tracked-PSUM path uses.
//! - [`check_bounds`]: which dimension and index leaves the location, if any.
//! - [`injective`], [`distinct_pairs`]: whether an AP's elements have distinct addresses.
//!
//! It computes addresses and copies bytes; it knows no opcode and no numerics.

mod bounds;
mod copy;
mod distinct;
mod layout;
mod runs;

pub use bounds::check_bounds;
pub use copy::{for_each_element, read, write};
pub use distinct::{distinct_pairs, injective};
pub use layout::Layout;
pub use runs::{Pattern, Run, Runs};

/// Why an access pattern cannot be walked over a layout.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApError {
    /// More levels than [`bir_ir::MAX_AP_DIMS`].
    #[error("the access pattern has {dims} levels; at most {max} are supported", max = bir_ir::MAX_AP_DIMS)]
    TooManyDims {
        /// The number of levels given.
        dims: usize,
    },
    /// An access pattern with no levels.
    #[error("the access pattern has no levels")]
    NoDims,
    /// A level with `num < 1`.
    #[error("dimension {dim} has num = {num}; every num must be at least 1")]
    BadNum {
        /// The level (0 = partition dim).
        dim: usize,
        /// The offending count.
        num: i64,
    },
    /// Address arithmetic overflows 64 bits.
    #[error("address arithmetic overflows at dimension {dim}")]
    Overflow {
        /// The level where it overflows.
        dim: usize,
    },
    /// An element falls outside the location.
    #[error(
        "{} leaves the location: element {element} is outside 0..{capacity}",
        match dim { Some(d) => format!("dimension {d} at index {index}"), None => "the offset".to_owned() }
    )]
    OutOfBounds {
        /// The first level (outermost first) whose index takes the address out; `None` when the
        /// offset alone is out.
        dim: Option<usize>,
        /// The first index along `dim` that leaves (0 when `dim` is `None`).
        index: i64,
        /// The element index reached.
        element: i64,
        /// The location holds elements `0..capacity`.
        capacity: u64,
    },
    /// The flat buffer handed to [`read`]/[`write`] does not hold exactly the AP's elements.
    #[error("the flat buffer has {got} bytes; the access pattern moves {want}")]
    FlatSize {
        /// Bytes the AP moves.
        want: usize,
        /// Bytes given.
        got: usize,
    },
    /// The layout does not fit its buffer.
    #[error("the layout needs {need} bytes of buffer; the buffer has {have}")]
    Buffer {
        /// Bytes the layout spans.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}
