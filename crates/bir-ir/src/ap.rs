//! Operands: access patterns (with their optional dynamic offset, seed 000 §5.2/§7), immediates
//! and registers (bir-json.md "Arguments").

use crate::dtype::Dtype;
use crate::enums::IndirectDim;
use crate::program::LocId;
use smallvec::SmallVec;

/// One access-pattern level: `num` iterations `step` elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ApPair {
    /// Distance between consecutive indices, in elements of the operand dtype (may be negative
    /// on free dims, 0 = broadcast).
    pub step: i64,
    /// Number of indices (must be ≥ 1).
    pub num: i64,
}

impl ApPair {
    /// A `[step, num]` pair.
    pub const fn new(step: i64, num: i64) -> Self {
        ApPair { step, num }
    }
}

/// The most levels an AP may have: [W, Z, Y, X] plus one spare (bir-json.md).
pub const MAX_AP_DIMS: usize = 5;

/// The `[step, num]` levels of an AP, outermost (the partition dim W) first, stored inline.
pub type ApPairs = SmallVec<[ApPair; MAX_AP_DIMS]>;

/// A physical access pattern over one memory location.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessPattern {
    /// The memory location addressed (`memref`); its allocation is the `memsetref`.
    pub loc: LocId,
    /// Element type of the access (may differ from the allocation's: the access casts).
    pub dtype: Dtype,
    /// Start element, row-major over the location's partition × free view.
    pub offset: i64,
    /// The levels, partition dim first.
    pub pairs: ApPairs,
    /// A runtime offset added on one dim, if any.
    pub dynamic: Option<Box<DynamicOffset>>,
}

/// A runtime offset on one AP dim (`DynamicAPINFO`, re-facts §6).
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicOffset {
    /// The AP dim the offset indexes.
    pub indirect_dim: IndirectDim,
    /// Indices ≥ this are out of bounds.
    pub max_index: i64,
    /// Where the index values come from.
    pub source: OffsetSource,
}

/// The source of a dynamic offset: exactly one of a vector or a scalar (re-facts §6, CONFIRMED).
#[derive(Clone, Debug, PartialEq)]
pub enum OffsetSource {
    /// One index per element of the indirect dim, read from this AP (HW-DGE).
    Vector(AccessPattern),
    /// A single value held in a register.
    Register(String),
    /// A single value read from memory through this AP.
    Scalar(AccessPattern),
}

/// An fp32 value stored as its bit pattern, so equality is bitwise (NaN equals itself, −0 is
/// not +0) and the value survives any copy unchanged (style.md practice 10).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct F32(pub u32);

impl F32 {
    /// Wraps a float.
    pub fn new(f: f32) -> Self {
        F32(f.to_bits())
    }
    /// The float.
    pub fn get(self) -> f32 {
        f32::from_bits(self.0)
    }
}

impl From<f32> for F32 {
    fn from(f: f32) -> Self {
        F32::new(f)
    }
}

impl std::fmt::Debug for F32 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} (0x{:08X})", self.get(), self.0)
    }
}

/// A JSON number as written: integers stay exact, floats keep NaN/Inf. Equality is bitwise.
#[derive(Clone, Copy, Debug)]
pub enum Number {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// A float (`"nan"`, `"inf"` and `"-inf"` included).
    Float(f64),
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::UInt(a), Number::UInt(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl Number {
    /// The value as f64 (integers above 2^53 round).
    #[expect(clippy::cast_precision_loss, reason = "documented rounding of huge integers")]
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::UInt(u) => u as f64,
            Number::Float(f) => f,
        }
    }
}

/// An instruction operand (bir-json.md "Arguments").
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// `physical_ap`.
    Ap(AccessPattern),
    /// `imm_value`.
    Imm {
        /// Its dtype.
        dtype: Dtype,
        /// Its value.
        value: Number,
    },
    /// `imm_array`.
    ImmArray {
        /// Its dtype.
        dtype: Dtype,
        /// Its values.
        values: Vec<Number>,
    },
    /// `register_access`.
    Register {
        /// Its dtype.
        dtype: Dtype,
        /// The register name.
        regref: String,
    },
    /// Any other kind (`register_ap`, `symbolic_ap`, ...), kept verbatim.
    Other(serde_json::Map<String, serde_json::Value>),
}

impl Operand {
    /// The BIR JSON `kind` of this operand.
    pub fn kind_name(&self) -> &str {
        match self {
            Operand::Ap(_) => "physical_ap",
            Operand::Imm { .. } => "imm_value",
            Operand::ImmArray { .. } => "imm_array",
            Operand::Register { .. } => "register_access",
            Operand::Other(map) => map.get("kind").and_then(|k| k.as_str()).unwrap_or("?"),
        }
    }

    /// The access pattern, if this operand is one.
    pub fn as_ap(&self) -> Option<&AccessPattern> {
        match self {
            Operand::Ap(ap) => Some(ap),
            _ => None,
        }
    }
}
