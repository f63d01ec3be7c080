//! What the support classifier may ask of an instruction and what it answers (issue #15 item 3;
//! docs/fidelity.md C1–C6).
//!
//! A kernel's `classify` looks at an instruction only through [`Fact`]s: finite-valued
//! questions such as "is `apply_transpose` set" or "does an operand carry a dynamic offset",
//! answered by a [`Facts`] — [`InstFacts`] from the instruction when the executor asks, a partial
//! assignment when `support::matrix` enumerates the classifiers. It answers a [`Verdict`]. The
//! executor asks once per instruction (and once per fired DMA descriptor) before the kernel runs
//! and stops with the verdict's `not-implemented` fault; no kernel decides "not implemented" by
//! itself (see `kit::unclassified`).

use crate::fault::FaultCause;
use bir_ir::ops::TensorScalarPtrFields;
use bir_ir::{
    AccessPattern, AluOp, BirEnum, CopyMode, Dtype, EngineAccumulationType, Function, Instruction,
    MemsetMode, OffsetSource, Op, Opcode, Operand,
};
use std::fmt;

/// What birsim does with a combination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// It runs (skipped opcodes included: the reference skips them too).
    Runs,
    /// This version does not run it yet (a `not-implemented` fault).
    NotImplemented,
    /// The reference does not accept it: `bir_ir::validate` refuses it, or the kernel faults
    /// with a typed fault.
    Rejected,
}

impl Status {
    /// Stable name: `runs`, `not_implemented`, `rejected`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Runs => "runs",
            Status::NotImplemented => "not_implemented",
            Status::Rejected => "rejected",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The classifier's answer for one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// What happens.
    pub status: Status,
    /// Why (for `not_implemented`, the fault's feature text).
    pub reason: &'static str,
    /// The opcode has no kernel at all (the fault is `OpcodeNotImplemented`).
    no_kernel: bool,
}

impl Verdict {
    pub(crate) const fn runs(reason: &'static str) -> Verdict {
        Verdict { status: Status::Runs, reason, no_kernel: false }
    }
    pub(crate) const fn not_implemented(reason: &'static str) -> Verdict {
        Verdict { status: Status::NotImplemented, reason, no_kernel: false }
    }
    pub(crate) const fn rejected(reason: &'static str) -> Verdict {
        Verdict { status: Status::Rejected, reason, no_kernel: false }
    }
    pub(crate) const fn no_kernel(reason: &'static str) -> Verdict {
        Verdict { status: Status::NotImplemented, reason, no_kernel: true }
    }

    /// The fault the executor stops with, when the verdict is `not_implemented`.
    pub(crate) fn fault(&self, op: Opcode) -> Option<FaultCause> {
        match (self.status, self.no_kernel) {
            (Status::NotImplemented, true) => Some(FaultCause::OpcodeNotImplemented(op)),
            (Status::NotImplemented, false) => Some(FaultCause::NotImplemented { feature: self.reason }),
            _ => None,
        }
    }
}

/// A finite-valued question the classifier asks about an instruction. Values are small
/// integers, `0..arity()`, named by [`Fact::value`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fact {
    /// The dynamic offsets the AP operands (and offsets' own index APs) carry: none or only
    /// scalar ones, memory- or register-held (which the floor resolves, `kit::offsets`), or
    /// some vector one.
    Dynamic,
    /// A DMA descriptor sits in a DMABlock (else it is met as an instruction of its own).
    InBlock,
    /// DMACopy's `mode` (a [`CopyMode`] in its ordinal order).
    CopyMode,
    /// Memset's `mode` (a [`MemsetMode`] in its ordinal order).
    MemsetMode,
    /// The dynamic offset of DMACopy's `ins[0]`: none, scalar (memory- or register-held), vector.
    SrcOffset,
    /// The dynamic offset of DMACopy's `outs[0]`: none, scalar (memory- or register-held), vector.
    DstOffset,
    /// The dynamic offsets of a DMA operand other than `ins[0]`/`outs[0]`, or of an offset's
    /// own index AP: none or scalar, some vector (as [`Fact::Dynamic`]).
    OtherOffset,
    /// The HW-DGE reduce-on-write (`cce_op`): bypass (or absent), add, other.
    DgeReduce,
    /// The HW-DGE written rows' walk visits some element twice. No opcode asks it since such an
    /// add runs element by element (docs/fidelity.md G57); kept so the enum stays
    /// source-compatible.
    DgeRevisits,
    /// TensorScalarPtr `is_tensor_tensor_scan`.
    Scan,
    /// TensorScalarPtr `apply_transpose`.
    Transpose,
    /// TensorScalarPtr `is_tensor_scalar_addr`.
    Addr,
    /// TensorScalarPtr `is_scalar_tensor_tensor`.
    ScalarTensorTensor,
    /// `op0`/`op1`: a bitvec op makes the int32 path.
    IntOps,
    /// The `acc` field: an [`EngineAccumulationType`] in ordinal order (absent reads as Idle:
    /// no kernel tells them apart).
    Acc,
    /// CopyPredicated has a side output (`outs[1]`).
    SideOutput,
    /// CopyPredicated's `reduce_op`: absent, add/mult/max/min, other.
    SideOp,
    /// TensorReduce's `axis` is X (the only axis an indirect input allows, seed 000 §3.1).
    AxisX,
    /// `outs[0]` is a packed `_x4` dtype. No opcode asks it since Select, CopyPredicated and
    /// TensorScalarAffineSelect run into x4 (docs/fidelity.md K1, K2); kept so the enum stays
    /// source-compatible.
    OutPacked,
    /// `outs[0]`'s dtype is one `cast_copy_or_accumulate` reduces.
    OutReducible,
    /// `ins[0]` or `outs[0]` is read in a dtype other than its memory's.
    StorageCast,
    /// `ins[0]` and `outs[0]` have different dtypes.
    InOutDiffer,
    /// A DMA transpose (a real permutation) casts into or out of a packed `_x4` dtype. No
    /// opcode asks it since those transposes run (docs/fidelity.md K3); kept so the enum stays
    /// source-compatible.
    TransposeCastsPacked,
    /// Matmult `is_transpose` (the PE transpose).
    MatmultTranspose,
    /// Matmult `perf_mode`: None, DoubleRow, or another mode.
    MatmultPerfMode,
    /// Activation `is_activate2`.
    Activate2,
    /// RegisterAlu `is_64bit`.
    Register64,
}

const NO_YES: &[&str] = &["no", "yes"];
const OFFSETS: &[&str] = &["none", "scalar", "vector"];
const KINDS: &[&str] = &["none or scalar", "vector"];
/// [`Fact::Dynamic`] / [`Fact::OtherOffset`]: no offset, or only scalar ones (memory- or
/// register-held).
pub(crate) const OTHER_NONE_OR_SCALAR: u8 = 0;
/// [`Fact::Dynamic`] / [`Fact::OtherOffset`]: some vector offset.
pub(crate) const OTHER_VECTOR: u8 = 1;
pub(crate) const OFFSET_NONE: u8 = 0;
pub(crate) const OFFSET_SCALAR: u8 = 1;
pub(crate) const OFFSET_VECTOR: u8 = 2;
pub(crate) const REDUCE_BYPASS: u8 = 0;
pub(crate) const REDUCE_ADD: u8 = 1;
pub(crate) const SIDE_ABSENT: u8 = 0;
pub(crate) const SIDE_FOLD: u8 = 1;

impl Fact {
    /// Every fact, in declaration order.
    pub const ALL: &'static [Fact] = &[
        Fact::Dynamic,
        Fact::InBlock,
        Fact::CopyMode,
        Fact::MemsetMode,
        Fact::SrcOffset,
        Fact::DstOffset,
        Fact::OtherOffset,
        Fact::DgeReduce,
        Fact::DgeRevisits,
        Fact::Scan,
        Fact::Transpose,
        Fact::Addr,
        Fact::ScalarTensorTensor,
        Fact::IntOps,
        Fact::Acc,
        Fact::SideOutput,
        Fact::SideOp,
        Fact::AxisX,
        Fact::OutPacked,
        Fact::OutReducible,
        Fact::StorageCast,
        Fact::InOutDiffer,
        Fact::TransposeCastsPacked,
        Fact::MatmultTranspose,
        Fact::MatmultPerfMode,
        Fact::Activate2,
        Fact::Register64,
    ];

    /// The name printed for the fact (a JSON field name or a short phrase).
    pub fn name(self) -> &'static str {
        match self {
            Fact::Dynamic => "dynamic offset",
            Fact::InBlock => "in a DMABlock",
            Fact::CopyMode => "mode",
            Fact::MemsetMode => "mode",
            Fact::SrcOffset => "ins[0] offset",
            Fact::DstOffset => "outs[0] offset",
            Fact::OtherOffset => "other dynamic offsets",
            Fact::DgeReduce => "cce_op",
            Fact::DgeRevisits => "written rows revisit elements",
            Fact::Scan => "is_tensor_tensor_scan",
            Fact::Transpose => "apply_transpose",
            Fact::Addr => "is_tensor_scalar_addr",
            Fact::ScalarTensorTensor => "is_scalar_tensor_tensor",
            Fact::IntOps => "op0/op1",
            Fact::Acc => "acc",
            Fact::SideOutput => "side output",
            Fact::SideOp => "reduce_op",
            Fact::AxisX => "axis is X",
            Fact::OutPacked => "outs[0] packed x4",
            Fact::OutReducible => "outs[0] reducible",
            Fact::StorageCast => "AP dtype differs from memory's",
            Fact::InOutDiffer => "ins[0] dtype differs from outs[0]'s",
            Fact::TransposeCastsPacked => "transpose casts to/from x4",
            Fact::MatmultTranspose => "is_transpose",
            Fact::MatmultPerfMode => "perf_mode",
            Fact::Activate2 => "is_activate2",
            Fact::Register64 => "is_64bit",
        }
    }

    /// How many values the fact takes.
    pub fn arity(self) -> u8 {
        let n = match self {
            Fact::CopyMode => CopyMode::ALL.len(),
            Fact::MemsetMode => MemsetMode::ALL.len(),
            Fact::SrcOffset | Fact::DstOffset => OFFSETS.len(),
            Fact::Dynamic | Fact::OtherOffset => KINDS.len(),
            Fact::DgeReduce | Fact::SideOp | Fact::MatmultPerfMode => 3,
            Fact::Acc => EngineAccumulationType::ALL.len(),
            _ => NO_YES.len(),
        };
        u8::try_from(n).unwrap_or(u8::MAX)
    }

    /// The name of value `v` (`?` outside the domain).
    pub fn value(self, v: u8) -> &'static str {
        let k = usize::from(v);
        let name = match self {
            Fact::CopyMode => CopyMode::ALL.get(k).map(|m| m.name()),
            Fact::MemsetMode => MemsetMode::ALL.get(k).map(|m| m.name()),
            Fact::SrcOffset | Fact::DstOffset => OFFSETS.get(k).copied(),
            Fact::Dynamic | Fact::OtherOffset => KINDS.get(k).copied(),
            Fact::DgeReduce => ["bypass", "add", "other"].get(k).copied(),
            Fact::SideOp => ["absent", "add, mult, max or min", "other"].get(k).copied(),
            Fact::Acc => match EngineAccumulationType::ALL.get(k) {
                Some(EngineAccumulationType::Idle) => Some("Idle or absent"),
                a => a.map(|a| a.name()),
            },
            Fact::IntOps => ["arithmetic", "bitvec"].get(k).copied(),
            Fact::MatmultPerfMode => ["None", "DoubleRow", "another mode"].get(k).copied(),
            _ => NO_YES.get(k).copied(),
        };
        name.unwrap_or("?")
    }

    /// True for facts about dtypes (the "dtypes" column), false for modes and flags.
    pub fn is_dtype(self) -> bool {
        matches!(
            self,
            Fact::OutPacked
                | Fact::OutReducible
                | Fact::StorageCast
                | Fact::InOutDiffer
                | Fact::TransposeCastsPacked
        )
    }
}

/// Answers [`Fact`]s. The executor's answers come from the instruction ([`InstFacts`]); the
/// matrix's from a partial assignment that records the first unanswered question.
pub trait Facts {
    /// The value of `fact` (in `0..fact.arity()`).
    fn get(&self, fact: Fact) -> u8;
    /// `get(fact) != 0`, for the yes/no facts.
    fn yes(&self, fact: Fact) -> bool {
        self.get(fact) != 0
    }
}

/// The facts of one instruction of function `f`.
#[derive(Clone, Copy)]
pub struct InstFacts<'a> {
    i: &'a Instruction,
    f: &'a Function,
    in_block: bool,
}

impl<'a> InstFacts<'a> {
    /// The facts of `i` (an instruction of `f`); `in_block` for a descriptor of a DMABlock.
    pub fn new(i: &'a Instruction, f: &'a Function, in_block: bool) -> InstFacts<'a> {
        InstFacts { i, f, in_block }
    }

    fn aps(&self) -> impl Iterator<Item = &'a AccessPattern> {
        self.i.ins.iter().chain(&self.i.outs).filter_map(Operand::as_ap)
    }

    fn storage(&self, ap: &AccessPattern) -> Dtype {
        self.f.location(ap.loc).and_then(|l| self.f.allocation(l.alloc)).map_or(ap.dtype, |a| a.dtype)
    }

    fn offset(ap: Option<&AccessPattern>) -> u8 {
        match ap.and_then(|a| a.dynamic.as_deref()).map(|d| &d.source) {
            None => OFFSET_NONE,
            Some(OffsetSource::Scalar(_) | OffsetSource::Register(_) | OffsetSource::RegisterBase { .. }) => {
                OFFSET_SCALAR
            }
            Some(OffsetSource::Vector(_)) => OFFSET_VECTOR,
        }
    }

    fn acc(&self) -> Option<EngineAccumulationType> {
        match &self.i.op {
            Op::TensorScalarPtr(t) => t.acc,
            Op::TensorScalarCache(t) => Some(t.acc),
            Op::CopyPredicated(c) => c.acc,
            Op::TensorTensor(t) => t.acc,
            Op::TensorReduce(t) => t.acc,
            Op::Activation(a) => a.acc,
            Op::Exponential(e) => e.acc,
            _ => None,
        }
    }

    fn tsp(&self) -> Option<&'a TensorScalarPtrFields> {
        match &self.i.op {
            Op::TensorScalarPtr(t) => Some(t),
            _ => None,
        }
    }

    /// The HW-DGE written side's row walk (exec/dge.rs `hw_dge`): a scatter's indexed `outs[0]`
    /// without its indirect level, a gather's dense `outs[0]` without level 0.
    fn dge_revisits(&self) -> bool {
        let Some(dst) = self.i.out_ap(0) else { return false };
        let level = match dst.dynamic.as_deref() {
            Some(d) if matches!(d.source, OffsetSource::Vector(_)) => dst.indirect_level(d.indirect_dim),
            _ => Some(0),
        };
        level.is_some_and(|l| !access_pattern::distinct_pairs(&dst.without_level(l)))
    }
}

fn flag(b: bool) -> u8 {
    u8::from(b)
}

/// An AP and the index APs of its offsets, outermost first.
fn offset_chain(ap: &AccessPattern) -> impl Iterator<Item = &AccessPattern> {
    std::iter::successors(Some(ap), |a| match a.dynamic.as_deref().map(|d| &d.source) {
        Some(OffsetSource::Scalar(x) | OffsetSource::Vector(x)) => Some(x),
        _ => None,
    })
}

/// The [`Fact::Dynamic`] value of these APs' own offsets: some vector, or none or scalar.
fn kinds<'a>(mut aps: impl Iterator<Item = &'a AccessPattern>) -> u8 {
    let vector =
        aps.any(|a| matches!(a.dynamic.as_deref().map(|d| &d.source), Some(OffsetSource::Vector(_))));
    if vector { OTHER_VECTOR } else { OTHER_NONE_OR_SCALAR }
}

impl Facts for InstFacts<'_> {
    fn get(&self, fact: Fact) -> u8 {
        let i = self.i;
        match fact {
            Fact::Dynamic => kinds(self.aps().flat_map(offset_chain)),
            Fact::InBlock => flag(self.in_block),
            Fact::CopyMode => match &i.op {
                Op::DMACopy(f) => CopyMode::ALL.iter().position(|m| *m == f.mode).map_or(0, |k| k as u8),
                _ => 0,
            },
            Fact::MemsetMode => match &i.op {
                Op::Memset(m) => MemsetMode::ALL.iter().position(|x| *x == m.mode).map_or(0, |k| k as u8),
                _ => 0,
            },
            Fact::SrcOffset => Self::offset(i.in_ap(0)),
            Fact::DstOffset => Self::offset(i.out_ap(0)),
            Fact::OtherOffset => {
                let others = i.ins.iter().skip(1).chain(i.outs.iter().skip(1)).filter_map(Operand::as_ap);
                let nested = self.aps().flat_map(|a| offset_chain(a).skip(1));
                kinds(others.flat_map(offset_chain).chain(nested))
            }
            Fact::AxisX => flag(matches!(&i.op, Op::TensorReduce(t) if t.axis == bir_ir::AxisListType::X)),
            Fact::DgeReduce => {
                let op = match &i.op {
                    Op::DMACopy(f) => f.cce_op,
                    Op::DMADescriptorCopy(f) => f.op,
                    _ => None,
                };
                match op {
                    None | Some(AluOp::Bypass) => REDUCE_BYPASS,
                    Some(AluOp::Add) => REDUCE_ADD,
                    Some(_) => 2,
                }
            }
            Fact::DgeRevisits => flag(self.dge_revisits()),
            Fact::Scan => flag(self.tsp().is_some_and(|t| t.is_tensor_tensor_scan)),
            Fact::Transpose => flag(self.tsp().is_some_and(|t| t.apply_transpose)),
            Fact::Addr => flag(self.tsp().is_some_and(|t| t.is_tensor_scalar_addr)),
            Fact::ScalarTensorTensor => flag(self.tsp().is_some_and(|t| t.is_scalar_tensor_tensor)),
            Fact::IntOps => flag(match &i.op {
                Op::TensorScalarPtr(t) => t.op0.is_bitvec() || t.op1.is_bitvec(),
                Op::TensorScalar(t) => t.op0.is_bitvec() || t.op1.is_bitvec(),
                _ => false,
            }),
            Fact::Acc => acc_value(self.acc().unwrap_or(EngineAccumulationType::Idle)),
            Fact::SideOutput => flag(i.outs.len() > 1),
            Fact::SideOp => match &i.op {
                Op::CopyPredicated(c) => match c.reduce_op {
                    None => SIDE_ABSENT,
                    Some(AluOp::Add | AluOp::Mult | AluOp::Max | AluOp::Min) => SIDE_FOLD,
                    Some(_) => 2,
                },
                _ => SIDE_ABSENT,
            },
            Fact::OutPacked => flag(i.out_ap(0).is_some_and(|a| a.dtype.lanes() != 1)),
            Fact::OutReducible => flag(i.out_ap(0).is_some_and(|a| a.dtype.is_reducible())),
            Fact::StorageCast => {
                let cast = |a: Option<&AccessPattern>| a.is_some_and(|a| self.storage(a) != a.dtype);
                flag(cast(i.in_ap(0)) || cast(i.out_ap(0)))
            }
            Fact::InOutDiffer => flag(match (i.in_ap(0), i.out_ap(0)) {
                (Some(a), Some(b)) => a.dtype != b.dtype,
                _ => false,
            }),
            Fact::TransposeCastsPacked => {
                let transposes = match &i.op {
                    Op::DMACopy(f) => f.transpose_op != bir_ir::TransposeOps::None,
                    Op::DMADescriptorTranspose(f) => f.transpose_op != bir_ir::TransposeOps::None,
                    _ => false,
                };
                flag(match (i.in_ap(0), i.out_ap(0)) {
                    (Some(s), Some(d)) if transposes => {
                        (s.dtype.lanes() != 1 || d.dtype.lanes() != 1) && s.dtype != d.dtype
                    }
                    _ => false,
                })
            }
            Fact::MatmultTranspose => flag(matches!(&i.op, Op::Matmult(m) if m.is_transpose)),
            Fact::Activate2 => flag(matches!(&i.op, Op::Activation(a) if a.is_activate2)),
            Fact::Register64 => flag(matches!(&i.op, Op::RegisterAlu(r) if r.is_64bit)),
            Fact::MatmultPerfMode => match &i.op {
                Op::Matmult(m) => match m.perf_mode {
                    bir_ir::MatmultPerfMode::None => 0,
                    bir_ir::MatmultPerfMode::DoubleRow => 1,
                    _ => 2,
                },
                _ => 0,
            },
        }
    }
}

/// The reason of every "rejected: a vector offset" verdict outside DMACopy's ins[0]/outs[0].
pub(crate) const VECTOR_ELSEWHERE: &str = "bir-ir validation: a vector offset is the HW-DGE form, only on DMACopy (or DMADescriptorCopy) ins[0]/outs[0] in Copy mode (seed 000 §5.2, §7)";

/// The dynamic-offset rule of every op but DMACopy and its descriptors (`kit::dma` has its
/// own): scalar offsets, memory- or register-held, run (the floor resolves them,
/// `kit::offsets`; D18), a vector offset is rejected (the HW-DGE bridge is DMACopy's, seed 000
/// §5.2/§7; validation refuses it). `None`: the kernel's own rules decide.
pub(crate) fn classify_offsets(q: &dyn Facts) -> Option<Verdict> {
    match q.get(Fact::Dynamic) {
        OTHER_VECTOR => Some(Verdict::rejected(VECTOR_ELSEWHERE)),
        _ => None,
    }
}

/// The plain rule: runs, scalar dynamic offsets included ([`classify_offsets`]).
pub(crate) fn plain(q: &dyn Facts) -> Verdict {
    classify_offsets(q).unwrap_or(Verdict::runs(""))
}

/// The [`Fact::Acc`] value of `a` (its position in ordinal order; an absent `acc` is Idle).
pub(crate) fn acc_value(a: EngineAccumulationType) -> u8 {
    EngineAccumulationType::ALL.iter().position(|x| *x == a).map_or(0, |k| k as u8)
}
