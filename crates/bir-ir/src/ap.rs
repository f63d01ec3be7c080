//! Operands: access patterns (with their optional dynamic offset, seed 000 §5.2/§7), immediates
//! and registers (bir-json.md "Arguments").

use crate::dtype::Dtype;
use crate::enums::{AxisListType, IndirectDim};
use crate::program::LocId;
use crate::verbatim::JsonMap;
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

/// The dim letters: which level of an AP each of W, Z, Y, X names. This is the one rule every
/// consumer (validation, reduce/pool axes, dynamic offsets, GenericIndirect dims) uses
/// (docs/bir-json.md "Dim letters", fidelity J28/J29).
///
/// W is always level 0 (the partition dim) and X always the last (innermost) level (seed 000
/// §1.3: `Pattern[0]` = W, `Pattern[3]` = X on a 4-level AP). A shorter AP is read as if its missing
/// middle dims had size 1: `[P]` is W = P (Z = Y = X = 1); `[P, F]` is W = P, Z = 1, Y = 1,
/// X = F; `[P, A, B]` is W = P, Z = 1, Y = A, X = B; `[P, A, B, C]` is W, Z, Y, X in order. A
/// 5-level AP `[P, V, A, B, C]` is W = P, Z = A, Y = B, X = C, and level 1 (V) is an extra outer
/// free dim that no letter names (see [`AccessPattern::folds_level`] for how reduces treat it).
impl AccessPattern {
    /// The level (index into [`pairs`](Self::pairs)) that `dim` names, or `None` when `dim` is
    /// a padded size-1 dim of a short AP (and for an AP without levels).
    ///
    /// | levels | W | Z | Y | X |
    /// |---|---|---|---|---|
    /// | 1 | 0 | – | – | – |
    /// | 2 | 0 | – | – | 1 |
    /// | 3 | 0 | – | 1 | 2 |
    /// | 4 | 0 | 1 | 2 | 3 |
    /// | 5 | 0 | 2 | 3 | 4 |
    pub fn level_of(&self, dim: IndirectDim) -> Option<usize> {
        let n = self.pairs.len();
        // Distance of the dim from the innermost level: X 0, Y 1, Z 2; W is pinned to level 0.
        let from_inner = match dim {
            IndirectDim::W => return (n >= 1).then_some(0),
            IndirectDim::Z => 2,
            IndirectDim::Y => 1,
            IndirectDim::X => 0,
        };
        // Level 0 is W, so a free-dim letter needs a level at or after 1.
        n.checked_sub(1 + from_inner).filter(|&level| level >= 1)
    }

    /// The level an **indirect dim** names (a dynamic offset's `indirect_dim`, a GenericIndirect
    /// `indirect_dims` entry): the letter's ordinal, W 0, Z 1, Y 2, X 3, which "equals the AP dim
    /// index" (re-facts §3, CERTAIN; seed 000 §8 `DynamicAPINFO.indirect_dim`), or `None` when the
    /// AP has no such level. Unlike [`level_of`](Self::level_of) (the reduce-axis rule, seed 000
    /// §3.1, which pins X to the innermost level), nothing is padded: on `[P, F]` the free level
    /// is Z, and X exists only on an AP of 4 or more levels.
    ///
    /// | levels | W | Z | Y | X |
    /// |---|---|---|---|---|
    /// | 1 | 0 | – | – | – |
    /// | 2 | 0 | 1 | – | – |
    /// | 3 | 0 | 1 | 2 | – |
    /// | 4, 5 | 0 | 1 | 2 | 3 |
    pub fn indirect_level(&self, dim: IndirectDim) -> Option<usize> {
        let level = dim as usize;
        (level < self.pairs.len()).then_some(level)
    }

    /// The letter that names `level`, or `None` for a level past the end or the unnamed extra
    /// level of a 5-level AP. The inverse of [`level_of`](Self::level_of).
    pub fn dim_at(&self, level: usize) -> Option<IndirectDim> {
        [IndirectDim::W, IndirectDim::Z, IndirectDim::Y, IndirectDim::X]
            .into_iter()
            .find(|&d| self.level_of(d) == Some(level))
    }

    /// The size (`num`) of `dim`: its level's `num`, or 1 for a padded dim.
    pub fn dim_num(&self, dim: IndirectDim) -> i64 {
        self.level_of(dim).and_then(|l| self.pairs.get(l)).map_or(1, |p| p.num)
    }

    /// True when a reduce over `axis` folds `level` of this AP: the level's letter is one of
    /// [`AxisListType::folds`]. The unnamed extra level of a 5-level AP sits between W and Z,
    /// so it is folded exactly when the axis folds both W and Z (XYZW, XYZWC). A level past the
    /// end is never folded.
    pub fn folds_level(&self, axis: AxisListType, level: usize) -> bool {
        if level >= self.pairs.len() {
            return false;
        }
        let folds = axis.folds();
        match self.dim_at(level) {
            Some(d) => folds.contains(&d),
            None => folds.contains(&IndirectDim::W) && folds.contains(&IndirectDim::Z),
        }
    }

    /// The levels other than `level`, in order (the walk of one row along `level`).
    pub fn without_level(&self, level: usize) -> ApPairs {
        self.pairs.iter().enumerate().filter(|(l, _)| *l != level).map(|(_, p)| *p).collect()
    }

    /// The vector offset of the AP — its index AP and the dynamic info — if it carries one.
    pub fn vector_offset(&self) -> Option<(&AccessPattern, &DynamicOffset)> {
        let d = self.dynamic.as_deref()?;
        match &d.source {
            OffsetSource::Vector(v) => Some((v, d)),
            _ => None,
        }
    }
}

/// A runtime offset on one AP dim (`DynamicAPINFO`, re-facts §6).
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicOffset {
    /// The AP dim the offset indexes; its level is [`AccessPattern::level_of`].
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
    /// A `register_ap` operand (re-facts §5 "RegisterAP"; the compiler's kind-3
    /// `RegisterAccessPattern`): the AP's start is held in registers — `offset_reg`
    /// (`reg_ap_offset`: the element offset) when given, else `regref` (the engine address of
    /// an SB location's first element) — and replaces `offset` when the instruction runs
    /// (docs/bir-json.md "Registers and control flow"; fidelity B13). `indirect_dim` and
    /// `max_index` are not used.
    RegisterBase {
        /// `regref`.
        regref: String,
        /// `reg_ap_offset`, if given.
        offset_reg: Option<String>,
    },
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
    Other(JsonMap),
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
