//! Typed Neuron BIR: the IR the Neuron compiler lowers kernels to, as the reference
//! interpreter models it, plus the BIR JSON reader/writer and the validator.
//!
//! - [`Dtype`], [`AluOp`] and the enums of [`enums`] carry the reference ordinals, every BIR
//!   JSON spelling and, where known, the ISA wire code (re-facts §1–§3).
//! - [`Opcode`] and [`Op`] are generated from one opcode list (re-facts §5); modelled opcodes
//!   have typed fields ([`ops`]), the rest keep their raw fields so any dump loads.
//! - `json` (the default feature `json`) reads BIR JSON tolerantly, collecting every located
//!   error, and writes it back. Without it the crate needs no serde; the values the IR keeps
//!   verbatim are [`JsonValue`]s either way.
//! - [`validate`] checks what the executor relies on and returns a [`Validated`] proof.
//!
//! Seed 000 §1 and §8 give the operand conventions (`ins` read, `outs` written) and the field
//! anchors this crate mirrors.

mod alu;
mod ap;
mod diag;
mod dtype;
mod enum_macro;
pub mod enums;
#[cfg(feature = "json")]
pub mod json;
mod opcode;
pub mod ops;
mod program;
mod signature;
mod validate;
mod verbatim;

pub use alu::{AluClass, AluOp};
pub use ap::{
    AccessPattern, ApPair, ApPairs, DynamicOffset, F32, MAX_AP_DIMS, Number, OffsetSource, Operand,
};
pub use diag::{DIAGNOSTIC_CHARS, Diagnostic, Diagnostics, ECHO_CHARS, ErrorKind, LoadError, clip};
pub use dtype::{Dtype, DtypeClass, isa_only};
pub use enum_macro::BirEnum;
pub use enums::*;
pub use opcode::{Op, OpCategory, Opcode, Payload};
pub use program::*;
pub use validate::{ExtentError, ValidateOptions, Validated, executed, static_extent, validate};
pub use verbatim::{JsonMap, JsonNumber, JsonValue};
