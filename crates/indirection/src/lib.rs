//! The indirection engine: index decode, offset-list construction and the serial gather/scatter
//! executor of the BIR indirect ops (seed 000 §6; docs/fidelity.md I1–I12).
//!
//! It works on byte slices and [`Layout`]s, never on a simulator's store, so another compiler
//! can use it on its own. The pieces, in the order an instruction uses them:
//!
//! - [`decode`]: index vectors to `u64` (seed 000 §6.1: int32 zero-extended, uint64/int64
//!   rebased by −2^32, −1 = skip; IndirectSaveAccumulate's plain rows, §6.2; the local gathers'
//!   uint8/uint16/uint32/int32 forms).
//! - [`plan`]: the offset-list builders of seed 000 §6.2 — plain rows (IndirectLoad/Save), the
//!   2-D IndirectSaveAccumulate build (entry-major, −1 past `num_indices`), the GenericIndirect
//!   Σ coef·index, IndirectCopy's 16-partition blocks and Gather's per-partition lists — with
//!   `apply_wrap` ([`Wrap`]) and the out-of-bounds policy ([`Oob`]). Every index is checked
//!   while the plan is built, so a faulting instruction writes nothing.
//! - [`exec`]: `doCopyIndirect` (seed 000 §6.3): the plan applied in order, copy = a memcpy per
//!   entry, add = numerics' `cast_copy_or_accumulate` per element (one kernel chosen per
//!   instruction), so duplicates accumulate in list order and round at every step; plus the
//!   element-serial twin for operands that share a buffer.
//! - [`isa`]: the 64-byte ISA words of the GpSimd indirection opcodes (seed 004 §3), their
//!   codec, per-generation validator and the NKI name → opcode binding (docs/isa.md).

pub mod decode;
pub mod exec;
pub mod isa;
pub mod plan;

pub use access_pattern::Layout;
pub use decode::{SKIP, decode_accumulate_indices, decode_dge_indices, decode_indices, decode_local_indices};
pub use exec::{Addressing, Direction, Entry, gather, scatter, serial};
pub use plan::{GenericDim, GenericGeometry, Oob, Step, Table, Wrap};

use bir_ir::Dtype;

/// Why an indirect instruction cannot run. Every variant names the index operand (`ins[k]`) and,
/// for a bad index, its position in that operand's AP order and its decoded value. A message
/// prints the index as its dtype reads it (an int32 −1 as −1, not as the row 4294967295 it
/// decodes to) when the caller named the dtype ([`IndirectError::index_dtype`]; `stored`), else
/// the decoded value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndirectError {
    /// An index dtype this decode does not accept.
    #[error("index ins[{operand}] has dtype {dtype}; {expected}")]
    IndexDtype {
        /// The index operand (`ins[operand]`).
        operand: usize,
        /// Its dtype.
        dtype: Dtype,
        /// The accepted set.
        expected: &'static str,
    },
    /// A decoded index at or past the bound (Gather's per-partition element count, I11; the
    /// HW-DGE bridge's `indirect_dim_max_index`).
    #[error(
        "index ins[{operand}] element {position} = {} is outside the table's {bound} entries",
        shown(*.value, *.stored)
    )]
    OutOfBounds {
        /// The index operand.
        operand: usize,
        /// The index's position in the operand's AP order.
        position: u64,
        /// The decoded value.
        value: u64,
        /// The index as its dtype reads it, when known.
        stored: Option<i128>,
        /// The number of entries.
        bound: u64,
    },
    /// An entry whose elements leave the table's memory location (I2).
    #[error(
        "index ins[{operand}] element {position} = {} is outside the table's location: its entry spans elements {lo}..={hi}, the location holds 0..{capacity}",
        shown(*.value, *.stored)
    )]
    LeavesLocation {
        /// The index operand.
        operand: usize,
        /// The index's position in the operand's AP order.
        position: u64,
        /// The decoded value.
        value: u64,
        /// The index as its dtype reads it, when known.
        stored: Option<i128>,
        /// The entry's lowest element.
        lo: i128,
        /// The entry's highest element.
        hi: i128,
        /// Elements the location holds.
        capacity: u64,
    },
    /// IndirectCopy: an element offset whose run of `len` elements leaves the partition's source
    /// (I10; AWS calls local_gather's out-of-bounds behaviour undefined, we fault).
    #[error(
        "index ins[{operand}] element {position} = {v}: its {len} elements [{v}, {v} + {len}) are \
         outside the partition's {per} source elements",
        v = shown(*.value, *.stored)
    )]
    RunOutside {
        /// The index operand.
        operand: usize,
        /// The index's position in the operand's AP order.
        position: u64,
        /// The element offset.
        value: u64,
        /// The index as its dtype reads it, when known.
        stored: Option<i128>,
        /// Elements per index (the dst AP's innermost num).
        len: u64,
        /// Source elements per partition.
        per: u64,
    },
    /// `apply_wrap` overflows 64 bits (I3).
    #[error(
        "index ins[{operand}] element {position} = {} overflows 64 bits under wrap (n = {n}, hi = {hi})",
        shown(*.value, *.stored)
    )]
    WrapOverflow {
        /// The index operand.
        operand: usize,
        /// The index's position.
        position: u64,
        /// The decoded value.
        value: u64,
        /// The index as its dtype reads it, when known.
        stored: Option<i128>,
        /// The wrap's n.
        n: u64,
        /// The wrap's high-part multiplier.
        hi: u64,
    },
    /// IndirectSaveAccumulate's `num_indices` is more than the indices per partition (seed 000
    /// §6.2: "AddrCount >= I.getNumIndices() … insufficient indices"; I5).
    #[error(
        "insufficient indices: num_indices is {num_indices} but the index operand holds {available} per partition"
    )]
    InsufficientIndices {
        /// The field's value.
        num_indices: u64,
        /// Indices per partition.
        available: u64,
    },
    /// Operand sizes that do not fit together (validation rules this out for programs).
    #[error("{0}")]
    Shape(String),
    /// A numerics error (an add into a dtype that does not reduce).
    #[error(transparent)]
    Numerics(#[from] numerics::NumericsError),
    /// An access-pattern walk error.
    #[error(transparent)]
    Access(#[from] access_pattern::ApError),
}

/// The index a message prints: as its dtype reads it when known, else the decoded value.
fn shown(value: u64, stored: Option<i128>) -> i128 {
    stored.unwrap_or(i128::from(value))
}

impl IndirectError {
    /// Names the dtype the bad index was stored in, so the message prints it as that dtype reads
    /// it (an int32 −1 as −1). `rebased`: the index was decoded by
    /// [`decode_indices`] (uint64/int64 lose 2^32); else it was zero-extended or plain.
    #[must_use]
    pub fn index_dtype(mut self, dtype: Dtype, rebased: bool) -> Self {
        match &mut self {
            IndirectError::OutOfBounds { value, stored, .. }
            | IndirectError::LeavesLocation { value, stored, .. }
            | IndirectError::RunOutside { value, stored, .. }
            | IndirectError::WrapOverflow { value, stored, .. }
                if stored.is_none() =>
            {
                *stored = Some(decode::stored_value(dtype, rebased, *value));
            }
            _ => {}
        }
        self
    }

    /// True for the out-of-bounds family (a bad index).
    pub fn is_out_of_bounds(&self) -> bool {
        matches!(
            self,
            IndirectError::OutOfBounds { .. }
                | IndirectError::LeavesLocation { .. }
                | IndirectError::RunOutside { .. }
                | IndirectError::WrapOverflow { .. }
        )
    }
}

/// A shape error with a message.
#[cold]
pub(crate) fn shape<T>(msg: impl Into<String>) -> Result<T, IndirectError> {
    Err(IndirectError::Shape(msg.into()))
}
