//! Guest faults (the program did something the reference rejects at run time) kept apart from
//! simulator bugs (style.md practice 7): a fault is an outcome, an error means birsim is broken.
//!
//! Both carry typed payloads — the operand, the field, the offending values — so a library user
//! can match on why a run stopped; `Display` is the message. Constructors are `#[cold]`: the
//! kernels' hot paths only ever carry a pointer-sized `Result` error.

use access_pattern::ApError;
use bir_ir::{AluOp, Dtype, EngineAccumulationType, Opcode};
use numerics::NumericsError;
use std::fmt;

/// The class of a guest fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// A run limit of birsim's (the instruction budget), not a reference behaviour.
    Budget,
    /// A read of a register never written (docs/fidelity.md B2), or of memory never written
    /// under `--uninit-reads fault` (B10).
    Uninitialized,
}

impl FaultKind {
    /// Stable name (the `.expect` files and the CLI print it).
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::NotImplemented => "not-implemented",
            FaultKind::UnsupportedOp => "unsupported-op",
            FaultKind::Numerics => "numerics",
            FaultKind::OutOfBounds => "out-of-bounds",
            FaultKind::Shape => "shape",
            FaultKind::BadField => "bad-field",
            FaultKind::Budget => "budget",
            FaultKind::Uninitialized => "uninitialized",
        }
    }
}

/// Which operand of an instruction a fault concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// `ins[k]`.
    In(usize),
    /// `outs[k]`.
    Out(usize),
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slot::In(k) => write!(f, "ins[{k}]"),
            Slot::Out(k) => write!(f, "outs[{k}]"),
        }
    }
}

/// Why a guest fault happened, with the values involved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FaultCause {
    /// A form of an opcode this version does not run yet.
    #[error("not implemented yet: {feature}")]
    NotImplemented {
        /// What is missing (an opcode, a mode, a flag).
        feature: &'static str,
    },
    /// An opcode this version does not run yet.
    #[error("not implemented yet: {0}")]
    OpcodeNotImplemented(Opcode),
    /// A numerics error on an operand (an ALU op outside its table, a cast that cannot fit).
    #[error("{slot}: {error}")]
    Numerics {
        /// The operand.
        slot: Slot,
        /// What numerics said.
        error: NumericsError,
    },
    /// An accumulate (read-modify-write) into a dtype `cast_copy_or_accumulate` cannot reduce
    /// (re-facts §8: only float8e3, float8e4, float8e5, bfloat16, float16, int32, float32, int64).
    #[error(
        "{slot}: cannot accumulate ({acc}) into {dtype}: cast_accumulate reduces only float8e3, float8e4, float8e5, bfloat16, float16, int32, float32 and int64"
    )]
    NotReducible {
        /// The output operand.
        slot: Slot,
        /// Its dtype.
        dtype: Dtype,
        /// The accumulation the instruction asked for.
        acc: EngineAccumulationType,
    },
    /// An instruction's ALU op field names an op outside the table its kernel uses (seed 000
    /// §2.1), or one with no memory-side reduction.
    #[error("{field}: {error}")]
    Op {
        /// The field (`op0`, `op1`, `op`, ...).
        field: &'static str,
        /// What numerics said.
        error: NumericsError,
    },
    /// An op the kernel does not support in this form.
    #[error("{what} does not support op {op}")]
    UnsupportedOp {
        /// The kernel form ("a cross-partition reduce").
        what: &'static str,
        /// The op.
        op: AluOp,
    },
    /// An activation function the exact path has no closed form for: the reference throws
    /// "Unsupported activation function" (engines.md §2.3).
    #[error("func: unsupported activation function '{func}'")]
    UnsupportedActivation {
        /// The function's name as written.
        func: String,
    },
    /// Activation inputs outside the function's documented valid range, under `ranges=fault`
    /// (docs/fidelity.md E6).
    #[error("func: {count} input(s) of {func} outside its valid range {range}, the first {:?}", f32::from_bits(*example))]
    OutOfRange {
        /// The function.
        func: &'static str,
        /// The range as documented.
        range: &'static str,
        /// How many inputs lie outside it.
        count: u64,
        /// The first of them (its fp32 bits).
        example: u32,
    },
    /// An access pattern that cannot be walked over its location.
    #[error("{slot}: {error}")]
    Access {
        /// The operand.
        slot: Slot,
        /// What the AP walk said.
        error: ApError,
    },
    /// An operand that must hold a given number of values holds another.
    #[error("{slot} holds {actual} values but {expected} are needed ({why})")]
    Count {
        /// The operand.
        slot: Slot,
        /// Values the operation needs there.
        expected: u64,
        /// Values the operand holds.
        actual: u64,
        /// Which rule fixes the count.
        why: &'static str,
    },
    /// Scalars that do not divide the data evenly.
    #[error(
        "{slot}: {scalars} scalars do not divide the {elements} data elements evenly (one per partition or per element)"
    )]
    ScalarCount {
        /// The scalar operand.
        slot: Slot,
        /// Its element count.
        scalars: u64,
        /// The data element count.
        elements: u64,
    },
    /// An operand of the wrong kind (an immediate where an AP is needed, or the reverse).
    #[error("{slot} must be {want}")]
    OperandKind {
        /// The operand.
        slot: Slot,
        /// What it must be.
        want: &'static str,
    },
    /// An AP with fewer dims than the operation folds.
    #[error("{slot}: {why}")]
    Dims {
        /// The operand.
        slot: Slot,
        /// The rule that failed.
        why: &'static str,
    },
    /// A scalar dynamic offset puts its access out of bounds: the index is < 0 or ≥
    /// `indirect_dim_max_index`, or the shifted AP leaves its memory location. Nothing is
    /// written. DMACopy tolerates it when `oob_is_err` is false (seed 000 §5.1:
    /// `NeuronAssertion("!DMAInst->getOobIsErr()")`); every other op faults (fidelity D1, D18).
    #[error(
        "{slot}.{field}: index {index} {}",
        if *leaves {
            "moves the access pattern out of its memory location".to_owned()
        } else {
            format!("is outside 0..{bound} (indirect_dim_max_index)")
        }
    )]
    DynamicOutOfBounds {
        /// The operand whose access is out of bounds.
        slot: Slot,
        /// The field holding the offset (`scalar_offset`, or a nested one).
        field: &'static str,
        /// The index read.
        index: i64,
        /// `indirect_dim_max_index`.
        bound: i64,
        /// True when the index is in range but the shifted AP leaves its location.
        leaves: bool,
    },
    /// A predicate value that must be exactly 0 or 1 (Select, seed 000 §5.5).
    #[error("{slot}: predicate element {index} is {}, not 0 or 1", value.get())]
    BadPredicate {
        /// The predicate operand.
        slot: Slot,
        /// The value index: the element index in AP order, an `_x4` predicate's lanes counted
        /// one by one (docs/fidelity.md K1).
        index: u64,
        /// The value read (as fp32 bits, for an exact message).
        value: bir_ir::F32,
    },
    /// An operand whose buffers would pass the run's memory cap (a step-0 level with a huge
    /// num stays inside a tiny location, so only this check sees it).
    #[error(
        "{slot} has {elements} elements: its buffers would need {bytes} bytes, above the memory cap of {cap} bytes (raise it with --memory-cap)"
    )]
    TooLarge {
        /// The operand.
        slot: Slot,
        /// Its element count.
        elements: u64,
        /// The bytes its buffers would need.
        bytes: u64,
        /// The cap.
        cap: u64,
    },
    /// The instruction's buffers together would pass the memory cap (each kernel's scratch is
    /// metered as it is allocated, with what the buffer pool keeps from earlier instructions).
    #[error(
        "this instruction's buffers would pass the memory cap of {cap} bytes: {bytes} bytes more were asked for (raise it with --memory-cap)"
    )]
    ScratchOverCap {
        /// The bytes asked for.
        bytes: u64,
        /// The cap.
        cap: u64,
    },
    /// The host could not allocate memory the instruction needs (below the memory cap, but more
    /// than the machine has): a limit, like the cap, not a reference behaviour.
    #[error(
        "the host could not allocate {bytes} bytes for this instruction (the memory cap allows it, the machine does not; lower --memory-cap to refuse such programs up front)"
    )]
    OutOfMemory {
        /// The bytes asked for.
        bytes: u64,
    },
    /// The run reached its instruction budget.
    #[error("the run reached its budget of {limit} executed instructions (raise it with --max-instructions)")]
    InstructionBudget {
        /// The budget.
        limit: u64,
    },
    /// An indirect instruction's index or plan error (seed 000 §6; docs/fidelity.md I1–I12):
    /// an out-of-bounds index names the operand, the index position and value.
    #[error("{0}")]
    Indirect(indirection::IndirectError),
    /// A HW-DGE index (seed 000 §7) at or past `indirect_dim_max_index` while `oob_is_err` is
    /// set (docs/fidelity.md G7).
    #[error(
        "{slot}.vector_offset element {element} = {value} is out of bounds: indirect_dim_max_index is {bound} (oob_is_err is set)"
    )]
    DgeIndexOutOfBounds {
        /// The AP carrying the vector offset.
        slot: Slot,
        /// The index's position in the vector offset's AP order.
        element: u64,
        /// The index value.
        value: u64,
        /// `indirect_dim_max_index`.
        bound: u64,
    },
    /// A HW-DGE index below the bound whose row would leave its memory location while
    /// `oob_is_err` is set (docs/fidelity.md G8).
    #[error(
        "{slot}.vector_offset element {element} = {value} is out of bounds: its row spans elements {lo}..={hi}, the memory location holds 0..{capacity} (oob_is_err is set)"
    )]
    DgeRowOutside {
        /// The AP carrying the vector offset.
        slot: Slot,
        /// The index's position in the vector offset's AP order.
        element: u64,
        /// The index value.
        value: u64,
        /// The row's lowest element.
        lo: i128,
        /// The row's highest element.
        hi: i128,
        /// Elements the location holds.
        capacity: u64,
    },
    /// A fault inside a descriptor of a DMABlock, fired by the instruction that faulted (a
    /// DMATrigger) or met in the stream (docs/fidelity.md G51).
    #[error("DMABlock '{block}' descriptor #{index} '{descriptor}' ({opcode}): {cause}")]
    InDescriptor {
        /// The block's name.
        block: String,
        /// The descriptor's position in the block's list.
        index: usize,
        /// The descriptor's name.
        descriptor: String,
        /// The descriptor's opcode.
        opcode: Opcode,
        /// What went wrong in it.
        cause: Box<FaultCause>,
    },
    /// A field value the reference asserts on.
    #[error("{field}: {why}")]
    BadField {
        /// The field.
        field: &'static str,
        /// The rule.
        why: &'static str,
    },
    /// A register read before any write to it (docs/fidelity.md B2).
    #[error(
        "register '{name}' of engine {engine} is read before anything wrote it (the reference would read 0xFFFFFFFF: --uninit-registers ones)"
    )]
    UninitializedRegister {
        /// The register's name.
        name: String,
        /// The engine whose file it is in.
        engine: bir_ir::EngineType,
    },
    /// An input element no load or instruction wrote, under `--uninit-reads fault`
    /// (docs/fidelity.md B10); the instruction wrote nothing.
    #[error(
        "{slot} reads element {element} (AP order) of '{location}', which nothing wrote (it holds the 0xFF uninitialised marker; the instruction has no can_read_uninit)"
    )]
    UninitializedRead {
        /// The operand.
        slot: Slot,
        /// Its memory location.
        location: String,
        /// The element's position in the operand's AP order.
        element: u64,
    },
    /// A NaN or infinite output element under `--nan-outputs fault` (docs/fidelity.md B11); the
    /// instruction's outputs are written.
    #[error("{slot} element {element} (AP order) of '{location}' is {} (--nan-outputs fault)", f32::from_bits(*value_bits))]
    NonFiniteOutput {
        /// The operand.
        slot: Slot,
        /// Its memory location.
        location: String,
        /// The element's position in the operand's AP order.
        element: u64,
        /// Its value decoded to fp32, as bits.
        value_bits: u32,
    },
    /// A register ALU divide or mod by zero (docs/fidelity.md B3).
    #[error("division by zero: RegisterAlu {op} {a} by 0")]
    DivisionByZero {
        /// The op.
        op: AluOp,
        /// The dividend's 32 bits.
        a: u32,
    },
    /// A control-flow instruction ran again with nothing changed since its last run: the program
    /// would repeat forever (docs/fidelity.md B9).
    #[error(
        "{what} ran again with nothing changed since its last run (no instruction wrote memory or a register, no loop moved on): the program would loop forever"
    )]
    NoProgress {
        /// What repeated ("this branch", "this DoWhile pass").
        what: &'static str,
    },
    /// A DynamicForLoop whose passes cannot fit the budget left (docs/fidelity.md B9).
    #[error(
        "the loop would run {passes} passes, more than the {left} instructions left of the budget of {limit} (each pass counts at least one; raise it with --max-instructions)"
    )]
    LoopBudget {
        /// Its passes.
        passes: u128,
        /// What is left of the budget.
        left: u64,
        /// The budget.
        limit: u64,
    },
    /// A Call nested deeper than the simulator follows (docs/fidelity.md B14).
    #[error("{what} nest deeper than {limit} (a function calling itself without end?)")]
    CallDepth {
        /// What nests: "calls", or "loops and calls" (levels together).
        what: &'static str,
        /// The deepest nesting followed.
        limit: usize,
    },
    /// A DynamicForLoop whose stride would never reach its bound (docs/fidelity.md B5).
    #[error("stride {stride} is not positive while lb {lb} < ub {ub}: the loop would never end")]
    LoopStride {
        /// The stride.
        stride: i64,
        /// The lower bound.
        lb: i64,
        /// The upper bound.
        ub: i64,
    },
}

impl FaultCause {
    /// The class.
    pub fn kind(&self) -> FaultKind {
        match self {
            FaultCause::NotImplemented { .. } | FaultCause::OpcodeNotImplemented(_) => {
                FaultKind::NotImplemented
            }
            FaultCause::Numerics { error, .. } => match error {
                NumericsError::UnsupportedOp { .. } => FaultKind::UnsupportedOp,
                NumericsError::LengthMismatch { .. } => FaultKind::Shape,
                _ => FaultKind::Numerics,
            },
            FaultCause::NotReducible { .. } | FaultCause::OutOfRange { .. } => FaultKind::Numerics,
            FaultCause::Op { error, .. } => match error {
                NumericsError::UnsupportedOp { .. } => FaultKind::UnsupportedOp,
                _ => FaultKind::Numerics,
            },
            FaultCause::UnsupportedOp { .. } | FaultCause::UnsupportedActivation { .. } => {
                FaultKind::UnsupportedOp
            }
            FaultCause::Access { error, .. } => match error {
                ApError::OutOfBounds { .. } => FaultKind::OutOfBounds,
                _ => FaultKind::Shape,
            },
            FaultCause::Count { .. }
            | FaultCause::ScalarCount { .. }
            | FaultCause::OperandKind { .. }
            | FaultCause::Dims { .. } => FaultKind::Shape,
            FaultCause::BadField { .. } | FaultCause::BadPredicate { .. } | FaultCause::LoopStride { .. } => {
                FaultKind::BadField
            }
            FaultCause::UninitializedRegister { .. } | FaultCause::UninitializedRead { .. } => {
                FaultKind::Uninitialized
            }
            FaultCause::NonFiniteOutput { .. } => FaultKind::Numerics,
            FaultCause::DivisionByZero { .. } => FaultKind::Numerics,
            FaultCause::InstructionBudget { .. }
            | FaultCause::TooLarge { .. }
            | FaultCause::OutOfMemory { .. }
            | FaultCause::ScratchOverCap { .. }
            | FaultCause::NoProgress { .. }
            | FaultCause::LoopBudget { .. }
            | FaultCause::CallDepth { .. } => FaultKind::Budget,
            FaultCause::DynamicOutOfBounds { .. }
            | FaultCause::DgeIndexOutOfBounds { .. }
            | FaultCause::DgeRowOutside { .. } => FaultKind::OutOfBounds,
            FaultCause::InDescriptor { cause, .. } => cause.kind(),
            FaultCause::Indirect(e) => match e {
                _ if e.is_out_of_bounds() => FaultKind::OutOfBounds,
                indirection::IndirectError::Numerics(n) => match n {
                    NumericsError::LengthMismatch { .. } => FaultKind::Shape,
                    _ => FaultKind::Numerics,
                },
                indirection::IndirectError::Access(ApError::OutOfBounds { .. }) => FaultKind::OutOfBounds,
                indirection::IndirectError::IndexDtype { .. } => FaultKind::BadField,
                _ => FaultKind::Shape,
            },
        }
    }
}

/// A guest fault, located at the instruction that raised it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What kind (the same as `cause.kind()`).
    pub kind: FaultKind,
    /// `instruction #k 'name' (Opcode)` with its block path.
    pub at: String,
    /// The instruction's name.
    pub instruction: String,
    /// Its opcode.
    pub opcode: Opcode,
    /// Why, with the values involved.
    pub cause: FaultCause,
}

impl Fault {
    /// The message (the cause's `Display`).
    pub fn message(&self) -> String {
        self.cause.to_string()
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} [{}]", self.at, self.cause, self.kind.name())
    }
}

/// A simulator bug: an internal invariant did not hold. Never the program's fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("birsim internal error (please report): {what}{}", match detail { Some(d) => format!(" ({d})"), None => String::new() })]
pub struct SimError {
    /// The invariant that failed.
    pub what: &'static str,
    /// The values involved, if any.
    pub detail: Option<String>,
}

impl SimError {
    /// A bug with no further detail.
    #[cold]
    pub fn new(what: &'static str) -> SimError {
        SimError { what, detail: None }
    }
}
