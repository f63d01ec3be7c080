//! \[W,Z,Y,X\] access-pattern linearization and AP reads/writes over partitioned memory.
//!
//! Every copy, elementwise op and gather in birsim goes through this crate (seed 000 §1: "every
//! one of these ops is one shared primitive — read an access pattern into a flat byte buffer,
//! optionally transform, write it back through another access pattern").
//!
//! - [`Pattern`] and [`Runs`]: the reference `linearizedElementIntervals` (seed 000 §1.3): unit
//!   dims dropped, contiguous inner dims fused into one run, one base offset per outer iteration.
//! - [`Layout`]: where element `e` of a memory location lives in a byte buffer, by the pitch rule
//!   of bir-json.md (partition `e / pitch`, byte `(e % pitch)·size`); flat for DRAM.
//! - [`read`], [`read_to_vec`], [`write`](fn@write), [`for_each_element`], [`for_each_piece`]: byte gathers/scatters
//!   through an AP, dispatched once on element width (the reads' fast loops are in `gather`), plus
//!   the per-element hook the simulator's tracked-PSUM path uses.
//! - [`check_bounds`]: which dimension and index leaves the location, if any.
//! - [`for_each_span`]: the contiguous buffer byte spans an AP touches, in AP order.
//! - [`injective`], [`distinct_pairs`]: whether an AP's elements have distinct addresses.
//!
//! It computes addresses and copies bytes; it knows no opcode and no numerics.

mod bounds;
mod copy;
mod distinct;
mod gather;
mod layout;
mod runs;
mod spans;

pub use bounds::check_bounds;
pub use copy::{for_each_element, for_each_piece, read, read_to_vec, write};
pub use distinct::{distinct_pairs, injective};
pub use layout::Layout;
pub use runs::{Pattern, Run, Runs};
pub use spans::for_each_span;

/// Why an access pattern cannot be walked over a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApError {
    /// More levels than [`bir_ir::MAX_AP_DIMS`].
    TooManyDims {
        /// The number of levels given.
        dims: usize,
    },
    /// An access pattern with no levels.
    NoDims,
    /// A level with `num < 1`.
    BadNum {
        /// The level (0 = partition dim).
        dim: usize,
        /// The offending count.
        num: i64,
    },
    /// Address arithmetic overflows 64 bits.
    Overflow {
        /// The level where it overflows.
        dim: usize,
    },
    /// An element falls outside the location.
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
    /// The flat buffer handed to [`read`]/[`write`](fn@write) does not hold exactly the AP's elements.
    FlatSize {
        /// Bytes the AP moves.
        want: usize,
        /// Bytes given.
        got: usize,
    },
    /// The layout does not fit its buffer.
    Buffer {
        /// Bytes the layout spans.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}

// Written out rather than derived (thiserror): this crate builds no proc macros, so other
// compilers depending on it stay light (tidy checks its dependency tree).
impl std::fmt::Display for ApError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApError::TooManyDims { dims } => write!(
                f,
                "the access pattern has {dims} levels; at most {} are supported",
                bir_ir::MAX_AP_DIMS
            ),
            ApError::NoDims => f.write_str("the access pattern has no levels"),
            ApError::BadNum { dim, num } => {
                write!(f, "dimension {dim} has num = {num}; every num must be at least 1")
            }
            ApError::Overflow { dim } => write!(f, "address arithmetic overflows at dimension {dim}"),
            ApError::OutOfBounds { dim, index, element, capacity } => {
                match dim {
                    Some(d) => write!(f, "dimension {d} at index {index}")?,
                    None => f.write_str("the offset")?,
                }
                write!(f, " leaves the location: element {element} is outside 0..{capacity}")
            }
            ApError::FlatSize { want, got } => {
                write!(f, "the flat buffer has {got} bytes; the access pattern moves {want}")
            }
            ApError::Buffer { need, have } => {
                write!(f, "the layout needs {need} bytes of buffer; the buffer has {have}")
            }
        }
    }
}

impl std::error::Error for ApError {}
