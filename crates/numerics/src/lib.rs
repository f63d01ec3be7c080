//! Every BIR dtype's bit-exact codecs, `cast_copy_or_accumulate` and the ALU functor tables.
//!
//! - [`Profile`]: the fidelity profile (`refsim`, the reference interpreter as re-facts §4
//!   describes it, or `nki`, bit-exact with ml_dtypes 0.6); every knob settable on its own.
//! - [`minifloat`]: one branch-free encoder and compile-time decode tables for every ≤ 8-bit
//!   float format (FP8 E3M4/E4M3/E4M3FN/E5M2, FP4 E2M1FN), parameterised by format and policy.
//! - [`codec`]: bulk decode to fp32 and encode from fp32 for all 20 dtypes, dispatched once per
//!   call onto monomorphic slice loops; [`cast`] converts between any two dtypes through fp32
//!   (the reference's hub-and-spoke `CastToNewDType`, re-facts §4).
//! - [`accumulate`](mod@accumulate): `cast_copy_or_accumulate` (seed 000 §6.4, re-facts §8).
//! - [`lut`]: a lookup table of any slice kernel over a 1- or 2-byte element, built by running
//!   that kernel once over every code, for passes whose result per element depends on its bits
//!   alone.
//! - [`matmul`](mod@matmul): the TensorEngine's fp32 dot products in a chosen order.
//! - [`activation`](mod@activation): the ScalarEngine's activation functions on the exact path
//!   (f64 closed forms through the pure-Rust `libm`, one rounding to fp32).
//! - [`mx`]: microscaling blocks: QuantizeMx's scales and values, MatmultMx's dequantization.
//! - [`random`]: the random family's unit values, Rand2's uniform and Dropout's decision.
//! - [`sequence`]: GetSequenceBounds' run bounds of segment ids and NonzeroWithCount's indices.
//! - [`stats`]: BNStats' and BNStatsAggregate's batch-norm statistics.
//! - [`top8`]: the top-8 search of Max, MaxIndex and MatchReplace.
//! - [`alu`]: the four functor tables `ts_ops`, `ts_int_ops`, `ta_ops`, `ts_int_cmp_ops`
//!   (seed 000 §2.1), with a visitor so callers run monomorphic loops per op, and
//!   [`alu::int_combine`], the integer combine of the DMA compute ops.
//!
//! It knows nothing of instructions or memory. Values are little-endian bytes; low-precision
//! values stay bits until decoded.

pub mod accumulate;
pub mod activation;
pub mod alu;
pub mod codec;
pub mod lut;
pub mod matmul;
pub mod minifloat;
pub mod mx;
mod profile;
pub mod random;
pub mod register;
pub mod sequence;
pub mod stats;
pub mod top8;

pub use accumulate::{
    ReduceVisitor, SliceReduce, accumulate, accumulate_slice, memory_reduction, visit_accumulate,
};
pub use codec::{cast, decode_to_f32, encode_from_f32};
pub use profile::{E8m0Mode, FloatToInt, IntToInt, NanSign, Profile};

pub use bir_ir::{Dtype, DtypeClass, MemoryReductionOp};

/// A numeric operation that cannot be done; a guest fault, not a bug.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NumericsError {
    /// `cast_copy_or_accumulate` cannot reduce this dtype (re-facts §8).
    UnsupportedReduceDtype(Dtype, MemoryReductionOp),
    /// An ALU op that is not a member of the table the instruction selects (seed 000 §2.1).
    UnsupportedOp {
        /// The op.
        op: bir_ir::AluOp,
        /// The table (`ts_ops`, `ts_int_ops`, `ta_ops`, `ts_int_cmp_ops`).
        table: &'static str,
    },
    /// An ALU op with no memory-side reduce (only bypass and add have one).
    NoMemoryReduction(bir_ir::AluOp),
    /// An integer-only combine ([`alu::int_combine`]) asked of a dtype that is not an integer.
    NotInteger {
        /// The dtype.
        dtype: Dtype,
        /// The op.
        op: bir_ir::AluOp,
    },
    /// Source and destination hold different numbers of values.
    LengthMismatch {
        /// Source dtype.
        src: Dtype,
        /// Values in the source.
        src_values: usize,
        /// Destination dtype.
        dst: Dtype,
        /// Values the destination holds.
        dst_values: usize,
    },
}

// Written out rather than derived (thiserror): this crate builds no proc macros, so other
// compilers depending on it stay light (tidy checks its dependency tree).
impl std::fmt::Display for NumericsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NumericsError::UnsupportedReduceDtype(dtype, op) => write!(
                f,
                "cast_accumulate: unsupported dtype {dtype} for {op} (only float8e3, float8e4, float8e5, bfloat16, float16, int32, float32 and int64 reduce)"
            ),
            NumericsError::UnsupportedOp { op, table } => {
                write!(f, "op {op} is not supported yet in {table}")
            }
            NumericsError::NoMemoryReduction(op) => {
                write!(f, "op {op} has no memory-side reduction (only bypass → copy and add → add)")
            }
            NumericsError::NotInteger { dtype, op } => {
                write!(f, "int_combine: {op} on {dtype} (an integer combine needs an integer dtype)")
            }
            NumericsError::LengthMismatch { src, src_values, dst, dst_values } => {
                write!(f, "cast of {src_values} {src} values into room for {dst_values} {dst} values")
            }
        }
    }
}

impl std::error::Error for NumericsError {}
