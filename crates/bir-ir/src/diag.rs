//! Located diagnostics: every loader and validator error says where (function, block,
//! instruction index and name, operand, field path), what kind of problem it is, and what was
//! expected.

use crate::enum_macro::bir_enum;
use std::borrow::Cow;
use std::fmt;

/// The most characters of one echoed value — a name, a shape, an option's value — that a
/// message repeats; the rest is counted ([`clip`]).
pub const ECHO_CHARS: usize = 300;

/// The most characters of each part of a [`Diagnostic`] (its context, field and message): a
/// few echoed values and the words around them. Longer parts are [`clip`]ped when recorded, so
/// a program's diagnostics take memory in proportion to their number, not to the names they
/// repeat (issue 26: 2,000 problems on an instruction with a 1 MB name held 4 GB).
pub const DIAGNOSTIC_CHARS: usize = 4 * ECHO_CHARS;

/// `text` cut to its first `max` characters, followed by a count of the rest:
/// `nnnn…(1048276 more characters)`. Text of at most `max` characters is returned as it is.
/// Every message that repeats something the user wrote (a name, a shape, an option's value)
/// passes it through here, so no message is longer than a few hundred characters.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((at, _)) => {
            let rest = text[at..].chars().count();
            Cow::Owned(format!("{}…({rest} more characters)", &text[..at]))
        }
    }
}

bir_enum! {
    /// The stable class of a diagnostic. The names are part of our interface: conformance cases
    /// and tools match on them.
    pub enum ErrorKind ("error kind") {
        /// The text is not JSON.
        Syntax = 0 => ["syntax"],
        /// A required field is absent or null.
        MissingField = 1 => ["missing-field"],
        /// A field has the wrong JSON type.
        WrongType = 2 => ["wrong-type"],
        /// An enum name or number that the enum does not have.
        UnknownEnum = 3 => ["unknown-enum"],
        /// An `opcode` that is not one of the 110.
        UnknownOpcode = 4 => ["unknown-opcode"],
        /// A number outside its field's range.
        OutOfRange = 5 => ["out-of-range"],
        /// A `memref` / `memsetref` naming nothing.
        UnresolvedRef = 6 => ["unresolved-ref"],
        /// A `memref` that does not belong to the `memsetref` given with it.
        RefMismatch = 7 => ["ref-mismatch"],
        /// Two things of one kind share a name.
        DuplicateName = 8 => ["duplicate-name"],
        /// Wrong number of `ins` or `outs` for the opcode.
        OperandCount = 9 => ["operand-count"],
        /// An operand of a kind the opcode does not take at that position.
        OperandKind = 10 => ["operand-kind"],
        /// A dtype the operation does not allow.
        Dtype = 11 => ["dtype"],
        /// An access pattern with no levels or more than five.
        ApRank = 12 => ["ap-rank"],
        /// An access pattern level with `num` < 1, or a negative partition step.
        ApShape = 13 => ["ap-shape"],
        /// Address arithmetic overflows 64 bits.
        Overflow = 14 => ["overflow"],
        /// A static access leaves its memory location.
        OutOfBounds = 15 => ["out-of-bounds"],
        /// A memory location's placement is impossible (partitions, start partition, size).
        Placement = 16 => ["placement"],
        /// The program's memory exceeds the configured cap.
        MemoryCap = 17 => ["memory-cap"],
        /// A loop that cannot run (zero stride, absurd trip count).
        Loop = 18 => ["loop"],
        /// A field value the opcode does not allow (mask entries, op choices, ...).
        BadField = 19 => ["bad-field"],
        /// A structural problem (a block entry that is neither block, loop nor instruction).
        Structure = 20 => ["structure"],
    }
}

/// One located problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Its class.
    pub kind: ErrorKind,
    /// Where: `function 'f' › block 'b' › instruction #3 'i3' (TensorScalar)`, or the
    /// allocation / location it concerns.
    pub context: String,
    /// The field path inside the context, e.g. `ins[0].ap[1].num` (may be empty).
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl Diagnostic {
    /// `context › field`, the full location.
    pub fn location(&self) -> String {
        match (self.context.is_empty(), self.field.is_empty()) {
            (_, true) => self.context.clone(),
            (true, false) => self.field.clone(),
            (false, false) => format!("{} › {}", self.context, self.field),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} [{}]", self.location(), self.message, self.kind)
    }
}

/// All the diagnostics of one pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Records one problem, each part cut to [`DIAGNOSTIC_CHARS`] characters ([`clip`]).
    pub fn push(&mut self, kind: ErrorKind, context: &str, field: &str, message: impl Into<String>) {
        let message = message.into();
        let message = match clip(&message, DIAGNOSTIC_CHARS) {
            Cow::Borrowed(_) => message,
            Cow::Owned(cut) => cut,
        };
        self.0.push(Diagnostic {
            kind,
            context: clip(context, DIAGNOSTIC_CHARS).into_owned(),
            field: clip(field, DIAGNOSTIC_CHARS).into_owned(),
            message,
        });
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of problems.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Iterates over the problems.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Why a BIR JSON file could not be turned into a [`crate::Program`].
#[derive(Debug)]
pub enum LoadError {
    /// The text is not valid JSON.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The JSON does not describe a BIR program; every problem found is listed.
    Invalid(Diagnostics),
}

// Written out rather than derived (thiserror): this crate builds no proc macros, so other
// compilers depending on it stay light (tidy checks numerics' and access-pattern's trees).
impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Syntax { line, column, message } => {
                write!(f, "not valid JSON at line {line}, column {column}: {message}")
            }
            LoadError::Invalid(diags) => write!(f, "{} problem(s) in the BIR program:\n{diags}", diags.len()),
        }
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    /// The diagnostics, with a syntax error presented as one `syntax` diagnostic.
    pub fn diagnostics(&self) -> Diagnostics {
        match self {
            LoadError::Syntax { line, column, message } => {
                let mut d = Diagnostics::default();
                d.push(ErrorKind::Syntax, &format!("line {line}, column {column}"), "", message.clone());
                d
            }
            LoadError::Invalid(d) => d.clone(),
        }
    }
}
