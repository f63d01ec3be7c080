//! Guest faults (the program did something the reference rejects at run time) kept apart from
//! simulator bugs (style.md practice 7): a fault is an outcome, an error means birsim is broken.

use std::fmt;

/// The class of a guest fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// An opcode (or a form of one) this version does not run yet.
    NotImplemented,
    /// An op that is not a member of the table the instruction selects (seed 000 §2.1).
    UnsupportedOp,
    /// A numeric operation the reference rejects (e.g. an unsupported accumulate dtype).
    Numerics,
    /// An access leaves its memory location at run time.
    OutOfBounds,
    /// Operand shapes that do not fit together.
    Shape,
    /// A field value the reference asserts on at run time.
    BadField,
}

impl FaultKind {
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::NotImplemented => "not-implemented",
            FaultKind::UnsupportedOp => "unsupported-op",
            FaultKind::Numerics => "numerics",
            FaultKind::OutOfBounds => "out-of-bounds",
            FaultKind::Shape => "shape",
            FaultKind::BadField => "bad-field",
        }
    }
}

/// A guest fault, located at the instruction that raised it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What kind.
    pub kind: FaultKind,
    /// `instruction #k 'name' (Opcode)` with its block path.
    pub at: String,
    /// What happened and, where possible, what to change.
    pub message: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} [{}]", self.at, self.message, self.kind.name())
    }
}

/// A simulator bug: an internal invariant did not hold. Never the program's fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("birsim internal error (please report): {0}")]
pub struct SimError(pub String);
