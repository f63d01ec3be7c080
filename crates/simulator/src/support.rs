//! The support matrix: which opcode, mode/flag and dtype combinations birsim runs, which it does
//! not implement yet, and which the reference rejects — from the one function the executor
//! itself asks before it runs an instruction (issue #15 item 3; docs/fidelity.md C1–C6).
//!
//! [`classify`] looks at an instruction only through [`Fact`]s: finite-valued questions such as
//! "is `apply_transpose` set" or "does an operand carry a dynamic offset". The executor calls it
//! once per instruction (exec/mod.rs) and once per fired DMA descriptor (exec/dge.rs), with
//! [`InstFacts`] answering from the instruction, and stops with a `not-implemented` fault when
//! the verdict says so; no kernel decides "not implemented" by itself (a kernel's own
//! defensive check reports a birsim bug instead, see `exec::unclassified`). So the executor
//! cannot run what the classifier refuses, nor refuse what it accepts.
//!
//! [`matrix`] enumerates the classifier: for each opcode it runs `classify` on partial answers,
//! branching on every value of each fact the classifier asks for, until each path ends in a
//! verdict. Each path is one matrix entry: only the facts that decided it, every other one
//! "any". [`check`] classifies each instruction of a program the same way (recording which
//! facts were asked), adds what `bir_ir::validate` rejects, and groups the instructions by
//! combination.
//!
//! `rejected` entries are of two kinds: forms `bir_ir::validate` refuses (the classifier names
//! them so the matrix is complete; validation stays the enforcer) and forms a kernel faults on
//! with a typed fault (unsupported-op, numerics). The executor lets those through to the kernel,
//! which raises the typed fault with its values.

use crate::exec::{distinct_pairs, is_bitvec, without_level};
use crate::fault::FaultCause;
use bir_ir::ops::TensorScalarPtrFields;
use bir_ir::{
    AccessPattern, AluOp, BirEnum, CopyMode, Diagnostics, Dtype, EngineAccumulationType, Function,
    Instruction, MemsetMode, Node, OffsetSource, Op, OpCategory, Opcode, Operand, Program,
};
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};
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
    const fn runs(reason: &'static str) -> Verdict {
        Verdict { status: Status::Runs, reason, no_kernel: false }
    }
    const fn not_implemented(reason: &'static str) -> Verdict {
        Verdict { status: Status::NotImplemented, reason, no_kernel: false }
    }
    const fn rejected(reason: &'static str) -> Verdict {
        Verdict { status: Status::Rejected, reason, no_kernel: false }
    }
    const fn no_kernel(reason: &'static str) -> Verdict {
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
    /// Some AP operand (or an offset's own index AP) carries a dynamic offset.
    Dynamic,
    /// A DMA descriptor sits in a DMABlock (else it is met as an instruction of its own).
    InBlock,
    /// DMACopy's `mode` (a [`CopyMode`] in its ordinal order).
    CopyMode,
    /// Memset's `mode` (a [`MemsetMode`] in its ordinal order).
    MemsetMode,
    /// The dynamic offset of DMACopy's `ins[0]`: none, scalar, vector, register.
    SrcOffset,
    /// The dynamic offset of DMACopy's `outs[0]`: none, scalar, vector, register.
    DstOffset,
    /// A DMA operand other than `ins[0]`/`outs[0]`, or an offset's index AP, has a dynamic
    /// offset.
    OtherOffset,
    /// The HW-DGE reduce-on-write (`cce_op`): bypass (or absent), add, other.
    DgeReduce,
    /// The HW-DGE written rows' walk visits some element twice.
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
}

const NO_YES: &[&str] = &["no", "yes"];
const OFFSETS: &[&str] = &["none", "scalar", "vector", "register"];
const OFFSET_NONE: u8 = 0;
const OFFSET_SCALAR: u8 = 1;
const OFFSET_VECTOR: u8 = 2;
const OFFSET_REGISTER: u8 = 3;
const REDUCE_BYPASS: u8 = 0;
const REDUCE_ADD: u8 = 1;
const SIDE_ABSENT: u8 = 0;
const SIDE_FOLD: u8 = 1;

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
        Fact::OutPacked,
        Fact::OutReducible,
        Fact::StorageCast,
        Fact::InOutDiffer,
        Fact::TransposeCastsPacked,
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
            Fact::OutPacked => "outs[0] packed x4",
            Fact::OutReducible => "outs[0] reducible",
            Fact::StorageCast => "AP dtype differs from memory's",
            Fact::InOutDiffer => "ins[0] dtype differs from outs[0]'s",
            Fact::TransposeCastsPacked => "transpose casts to/from x4",
        }
    }

    /// How many values the fact takes.
    pub fn arity(self) -> u8 {
        let n = match self {
            Fact::CopyMode => CopyMode::ALL.len(),
            Fact::MemsetMode => MemsetMode::ALL.len(),
            Fact::SrcOffset | Fact::DstOffset => OFFSETS.len(),
            Fact::DgeReduce | Fact::SideOp => 3,
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
            Fact::DgeReduce => ["bypass", "add", "other"].get(k).copied(),
            Fact::SideOp => ["absent", "add, mult, max or min", "other"].get(k).copied(),
            Fact::Acc => match EngineAccumulationType::ALL.get(k) {
                Some(EngineAccumulationType::Idle) => Some("Idle or absent"),
                a => a.map(|a| a.name()),
            },
            Fact::IntOps => ["arithmetic", "bitvec"].get(k).copied(),
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
            Some(OffsetSource::Scalar(_)) => OFFSET_SCALAR,
            Some(OffsetSource::Vector(_)) => OFFSET_VECTOR,
            Some(OffsetSource::Register(_)) => OFFSET_REGISTER,
        }
    }

    fn acc(&self) -> Option<EngineAccumulationType> {
        match &self.i.op {
            Op::TensorScalarPtr(t) => t.acc,
            Op::TensorScalarCache(t) => Some(t.acc),
            Op::CopyPredicated(c) => c.acc,
            Op::TensorTensor(t) => t.acc,
            Op::TensorReduce(t) => t.acc,
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
            Some(d) if matches!(d.source, OffsetSource::Vector(_)) => dst.level_of(d.indirect_dim),
            _ => Some(0),
        };
        level.is_some_and(|l| !distinct_pairs(&without_level(dst, l)))
    }
}

fn flag(b: bool) -> u8 {
    u8::from(b)
}

impl Facts for InstFacts<'_> {
    fn get(&self, fact: Fact) -> u8 {
        let i = self.i;
        match fact {
            Fact::Dynamic => flag(self.aps().any(|a| a.dynamic.is_some())),
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
                let nested = |a: &AccessPattern| match a.dynamic.as_deref().map(|d| &d.source) {
                    Some(OffsetSource::Scalar(x) | OffsetSource::Vector(x)) => x.dynamic.is_some(),
                    _ => false,
                };
                let others = i.ins.iter().skip(1).chain(i.outs.iter().skip(1)).filter_map(Operand::as_ap);
                flag(others.clone().any(|a| a.dynamic.is_some()) || self.aps().any(nested))
            }
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
                Op::TensorScalarPtr(t) => is_bitvec(&[t.op0, t.op1]),
                Op::TensorScalar(t) => is_bitvec(&[t.op0, t.op1]),
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
        }
    }
}

const DYNAMIC: &str = "access patterns with a dynamic offset";

/// The verdict for an instruction of opcode `op` whose facts `q` answers. The executor stops
/// with its `not-implemented` fault before running the kernel; see the module doc.
#[inline]
pub fn classify(op: Opcode, q: &impl Facts) -> Verdict {
    match op.category() {
        OpCategory::Base => return Verdict::runs("a base record: named and skipped, as the reference does"),
        OpCategory::NoOp => return Verdict::runs("runs no kernel (its sync effects are not modelled)"),
        OpCategory::Control => {
            return Verdict::no_kernel("structured control flow other than a counted Loop node");
        }
        OpCategory::Kernel => {}
    }
    match op {
        Opcode::GenericCopy
        | Opcode::AbstractCopy
        | Opcode::TensorCopy
        | Opcode::Load
        | Opcode::Save
        | Opcode::SetRandState
        | Opcode::StreamTranspose
        | Opcode::TensorScalar
        | Opcode::TensorTensor
        | Opcode::TensorReduce
        | Opcode::Pool
        | Opcode::Iota
        | Opcode::StreamShuffle
        | Opcode::TensorScalarCache
        | Opcode::Memset => {
            if q.yes(Fact::Dynamic) {
                return Verdict::not_implemented(DYNAMIC);
            }
            if matches!(op, Opcode::StreamShuffle | Opcode::StreamTranspose) && q.yes(Fact::InOutDiffer) {
                return Verdict::rejected("bir-ir validation: the stream ops do not cast");
            }
            if op == Opcode::TensorScalarCache
                && q.get(Fact::Acc) == acc_value(EngineAccumulationType::AddAccumulate)
            {
                return Verdict::rejected(
                    "bir-ir validation: AddAccumulate has no TensorScalarCache meaning",
                );
            }
            if op == Opcode::Memset {
                return match MemsetMode::ALL.get(usize::from(q.get(Fact::MemsetMode))) {
                    Some(MemsetMode::Random) => Verdict::runs("the MT19937-64 / Xorwow generators"),
                    _ => Verdict::runs("the constant fill"),
                };
            }
            Verdict::runs("")
        }
        Opcode::TensorScalarPtr => tensor_scalar_ptr(q),
        Opcode::Select | Opcode::TensorScalarAffineSelect => {
            // Packed x4 outputs run too: lane by lane (K1), a shared predicate per container (K2).
            if q.yes(Fact::Dynamic) {
                return Verdict::not_implemented(DYNAMIC);
            }
            Verdict::runs("")
        }
        Opcode::CopyPredicated => copy_predicated(q),
        Opcode::IndirectLoad
        | Opcode::IndirectSave
        | Opcode::IndirectSaveAccumulate
        | Opcode::GenericIndirectLoad
        | Opcode::GenericIndirectSave
        | Opcode::IndirectCopy
        | Opcode::Gather => {
            if matches!(op, Opcode::GenericIndirectLoad | Opcode::GenericIndirectSave)
                && q.yes(Fact::InOutDiffer)
            {
                return Verdict::rejected("bir-ir validation: an indirect copy does not cast");
            }
            if q.yes(Fact::Dynamic) || q.yes(Fact::StorageCast) {
                return Verdict::not_implemented(
                    "indirect operands whose AP dtype differs from their memory's (or with a dynamic offset)",
                );
            }
            Verdict::runs("")
        }
        Opcode::DMACopy => {
            let mode = CopyMode::ALL.get(usize::from(q.get(Fact::CopyMode))).copied();
            dma(mode.unwrap_or(CopyMode::Copy), q)
        }
        Opcode::DMADescriptorCopy
        | Opcode::DMADescriptorCCE
        | Opcode::DMADescriptorTranspose
        | Opcode::DMADescriptorReplicate => {
            if !q.yes(Fact::InBlock) {
                return Verdict::no_kernel("a DMA descriptor outside a DMABlock");
            }
            let mode = match op {
                Opcode::DMADescriptorCCE => CopyMode::Cce,
                Opcode::DMADescriptorTranspose => CopyMode::Transpose,
                Opcode::DMADescriptorReplicate => CopyMode::Replicate,
                _ => CopyMode::Copy,
            };
            dma(mode, q)
        }
        Opcode::DMATrigger => {
            Verdict::runs("fires the next DMABlock; its descriptors are classified as they run")
        }
        Opcode::DMABlock => {
            Verdict::runs("a definition (skipped in the stream unless --dma-block-in-stream run)")
        }
        Opcode::SwitchQueueInstance | Opcode::ResetQueueInstance => Verdict::runs("erases trigger cursors"),
        _ if op.is_modelled() => Verdict::no_kernel("no kernel yet (fields modelled)"),
        _ => Verdict::no_kernel("no kernel yet (fields kept raw)"),
    }
}

/// The [`Fact::Acc`] value of `a` (its position in ordinal order; an absent `acc` is Idle).
fn acc_value(a: EngineAccumulationType) -> u8 {
    EngineAccumulationType::ALL.iter().position(|x| *x == a).map_or(0, |k| k as u8)
}

/// TensorScalarPtr (exec/elementwise.rs `tensor_scalar_ptr`): every form (plain, apply_transpose,
/// scalar-tensor-tensor, scan, any `acc`) runs in the domain its flags and ops pick (fidelity
/// S3, T1-T5), except a scan with scalar-tensor-tensor (a bad-field fault, T6).
fn tensor_scalar_ptr(q: &impl Facts) -> Verdict {
    if q.yes(Fact::Dynamic) {
        return Verdict::not_implemented(DYNAMIC);
    }
    let scan = q.yes(Fact::Scan);
    if scan && q.yes(Fact::ScalarTensorTensor) {
        return Verdict::rejected(
            "is_tensor_tensor_scan with is_scalar_tensor_tensor (a bad-field fault, T6)",
        );
    }
    match (scan, q.yes(Fact::Addr), q.yes(Fact::IntOps)) {
        (true, true, _) => Verdict::runs("tensor_tensor_scan on the 64-bit path (ta_ops)"),
        (true, false, true) => Verdict::runs("tensor_tensor_scan on the int32 path (ts_int_ops)"),
        (true, false, false) => Verdict::runs("tensor_tensor_scan in fp32 (ts_ops)"),
        (false, true, _) => Verdict::runs("the 64-bit path (ta_ops), every form and acc"),
        (false, false, true) => Verdict::runs("the int32 path (ts_int_ops), every form and acc"),
        (false, false, false) => Verdict::runs("fp32 (ts_ops), every form and acc"),
    }
}

/// CopyPredicated (exec/select.rs): the side output's fold (packed x4 outputs run lane by
/// lane, K1).
fn copy_predicated(q: &impl Facts) -> Verdict {
    if q.yes(Fact::Dynamic) {
        return Verdict::not_implemented(DYNAMIC);
    }
    if !q.yes(Fact::SideOutput) {
        return Verdict::runs("");
    }
    match q.get(Fact::SideOp) {
        SIDE_ABSENT => Verdict::rejected("a side output needs a reduce_op (a bad-field fault)"),
        SIDE_FOLD => Verdict::runs("the side output folds add, mult, max or min, any acc (D10, L1)"),
        _ => Verdict::rejected("the side output folds only add, mult, max or min (an unsupported-op fault)"),
    }
}

/// DMACopy in `mode`, or a descriptor running as its DMACopy twin (exec/dma.rs `dma_copy`,
/// exec/dge.rs `hw_dge`).
fn dma(mode: CopyMode, q: &impl Facts) -> Verdict {
    if mode == CopyMode::Dynamic {
        return Verdict::not_implemented("DMACopy in Dynamic mode");
    }
    if mode != CopyMode::Copy {
        if q.yes(Fact::Dynamic) {
            return Verdict::not_implemented(
                "a dynamic offset (scalar, vector or register) outside DMACopy Copy mode",
            );
        }
        return Verdict::runs("");
    }
    if q.yes(Fact::OtherOffset) {
        return Verdict::not_implemented(DYNAMIC);
    }
    let (s, d) = (q.get(Fact::SrcOffset), q.get(Fact::DstOffset));
    if s == OFFSET_VECTOR || d == OFFSET_VECTOR {
        if s != OFFSET_NONE && d != OFFSET_NONE {
            return Verdict::not_implemented(
                "a DMACopy with a vector dynamic offset and a second dynamic offset on the other access pattern",
            );
        }
        return match q.get(Fact::DgeReduce) {
            REDUCE_BYPASS => Verdict::runs("the HW-DGE gather/scatter (G6)"),
            REDUCE_ADD => {
                if !q.yes(Fact::OutReducible) {
                    return Verdict::rejected(
                        "a HW-DGE add into a dtype cast_accumulate cannot reduce (a numerics fault)",
                    );
                }
                if q.yes(Fact::DgeRevisits) {
                    return Verdict::not_implemented("a HW-DGE add whose rows visit an element twice");
                }
                Verdict::runs("the HW-DGE scatter/gather with add (G54)")
            }
            _ => Verdict::rejected("the HW-DGE reduce-on-write is bypass or add (an unsupported-op fault)"),
        };
    }
    if s == OFFSET_REGISTER || d == OFFSET_REGISTER {
        return Verdict::not_implemented("a dynamic offset held in a register");
    }
    if s == OFFSET_SCALAR || d == OFFSET_SCALAR {
        return Verdict::runs("a scalar dynamic offset (D1)");
    }
    Verdict::runs("")
}

/// A partial assignment of facts for the matrix's enumeration: answers what it holds and
/// remembers the first fact it could not answer (answering 0 meanwhile).
struct Explore<'a> {
    set: &'a [(Fact, u8)],
    missing: Cell<Option<Fact>>,
}

impl Facts for Explore<'_> {
    fn get(&self, fact: Fact) -> u8 {
        if let Some((_, v)) = self.set.iter().find(|(f, _)| *f == fact) {
            return *v;
        }
        if self.missing.get().is_none() {
            self.missing.set(Some(fact));
        }
        0
    }
}

/// Answers through `inner`, recording each fact asked (once, in asking order).
struct Recorded<'a, F> {
    inner: &'a F,
    seen: RefCell<Vec<(Fact, u8)>>,
}

impl<F: Facts> Facts for Recorded<'_, F> {
    fn get(&self, fact: Fact) -> u8 {
        let v = self.inner.get(fact);
        let mut seen = self.seen.borrow_mut();
        if !seen.iter().any(|(f, _)| *f == fact) {
            seen.push((fact, v));
        }
        v
    }
}

/// One combination of the matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixEntry {
    /// The opcode.
    pub opcode: Opcode,
    /// The mode and flag facts that decide the verdict, with their values (in asking order).
    pub mode: Vec<(Fact, u8)>,
    /// The dtype facts that decide it.
    pub dtypes: Vec<(Fact, u8)>,
    /// The verdict.
    pub status: Status,
    /// Why.
    pub reason: &'static str,
}

/// Every combination the executor distinguishes, per opcode in ordinal order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupportMatrix {
    /// The entries.
    pub entries: Vec<MatrixEntry>,
}

/// Facts with their values, in asking order.
pub type FactValues = Vec<(Fact, u8)>;

/// The facts of `facts` split into (mode, dtypes).
fn split(facts: &[(Fact, u8)]) -> (FactValues, FactValues) {
    facts.iter().copied().partition(|(f, _)| !f.is_dtype())
}

/// The matrix: [`classify`] enumerated over every opcode and every value of each fact it asks.
pub fn matrix() -> SupportMatrix {
    let mut entries = Vec::new();
    for &op in Opcode::ALL {
        let mut stack: Vec<Vec<(Fact, u8)>> = vec![Vec::new()];
        while let Some(set) = stack.pop() {
            let q = Explore { set: &set, missing: Cell::new(None) };
            let verdict = classify(op, &q);
            match q.missing.get() {
                Some(fact) => {
                    // Reversed, so the stack pops values in order.
                    for v in (0..fact.arity()).rev() {
                        let mut next = set.clone();
                        next.push((fact, v));
                        stack.push(next);
                    }
                }
                None => {
                    let (mode, dtypes) = split(&set);
                    entries.push(MatrixEntry {
                        opcode: op,
                        mode,
                        dtypes,
                        status: verdict.status,
                        reason: verdict.reason,
                    });
                }
            }
        }
    }
    SupportMatrix { entries }
}

fn facts_text(facts: &[(Fact, u8)]) -> String {
    if facts.is_empty() {
        return "any".to_owned();
    }
    facts.iter().map(|(f, v)| format!("{}={}", f.name(), f.value(*v))).collect::<Vec<_>>().join(", ")
}

fn facts_json(facts: &[(Fact, u8)]) -> Value {
    Value::Object(facts.iter().map(|(f, v)| (f.name().to_owned(), Value::from(f.value(*v)))).collect())
}

impl SupportMatrix {
    /// How many entries have each status: (runs, not implemented, rejected).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s| self.entries.iter().filter(|e| e.status == s).count();
        (n(Status::Runs), n(Status::NotImplemented), n(Status::Rejected))
    }

    /// `{"entries": [{opcode, mode, dtypes, status, reason}], "counts": {...}}`; `mode` and
    /// `dtypes` map each deciding fact to its value (empty: any).
    pub fn to_json(&self) -> Value {
        let (r, n, j) = self.counts();
        json!({
            "counts": {"runs": r, "not_implemented": n, "rejected": j},
            "entries": self.entries.iter().map(|e| json!({
                "opcode": e.opcode.name(),
                "mode": facts_json(&e.mode),
                "dtypes": facts_json(&e.dtypes),
                "status": e.status.name(),
                "reason": e.reason,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for SupportMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (r, n, j) = self.counts();
        writeln!(f, "{} combinations: {r} run, {n} not implemented, {j} rejected", self.entries.len())?;
        for e in &self.entries {
            write!(
                f,
                "{:<15} {:<24} mode: {}; dtypes: {}",
                e.status.name(),
                e.opcode.name(),
                facts_text(&e.mode),
                facts_text(&e.dtypes)
            )?;
            if e.reason.is_empty() {
                writeln!(f)?;
            } else {
                writeln!(f, " ({})", e.reason)?;
            }
        }
        Ok(())
    }
}

/// How many instruction names a [`CheckEntry`] keeps.
pub const NAMES_KEPT: usize = 5;

/// One combination a program uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckEntry {
    /// The opcode.
    pub opcode: Opcode,
    /// The mode and flag facts the classifier asked, with the program's values.
    pub mode: Vec<(Fact, u8)>,
    /// The operand dtypes, `ins` then `outs` (`ins=[float32, bfloat16] outs=[float32]`).
    pub dtypes: String,
    /// The dtype facts the classifier asked, with the program's values.
    pub dtype_facts: Vec<(Fact, u8)>,
    /// The verdict.
    pub status: Status,
    /// Why (a validation diagnostic for `rejected` by validation).
    pub reason: String,
    /// The first [`NAMES_KEPT`] instruction names using it.
    pub instructions: Vec<String>,
    /// How many instructions use it.
    pub count: usize,
}

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// The overall verdict: `rejected` if anything is, else `not_implemented` if anything is,
    /// else `runs`.
    pub verdict: Status,
    /// The combinations, by first use.
    pub entries: Vec<CheckEntry>,
    /// Validation diagnostics that concern no instruction (memory placement, structure).
    pub problems: Vec<String>,
}

/// The name of the instruction a diagnostic's context ends in (`… instruction #3 'NAME' (Op)`).
fn diagnostic_instruction(context: &str) -> Option<&str> {
    let at = context.rfind("instruction #")?;
    let rest = &context[at..];
    let open = rest.find('\'')?;
    let close = rest.rfind("' (")?;
    rest.get(open + 1..close)
}

fn dtypes_text(i: &Instruction) -> String {
    let d = |o: &Operand| match o {
        Operand::Ap(a) => a.dtype.name().to_owned(),
        Operand::Imm { dtype, .. } => format!("imm {}", dtype.name()),
        Operand::ImmArray { dtype, .. } => format!("imm array {}", dtype.name()),
        Operand::Register { dtype, .. } => format!("register {}", dtype.name()),
        Operand::Other(_) => o.kind_name().to_owned(),
    };
    let list = |l: &[Operand]| l.iter().map(d).collect::<Vec<_>>().join(", ");
    format!("ins=[{}] outs=[{}]", list(&i.ins), list(&i.outs))
}

/// Every (opcode, mode, dtype) combination `program` uses, with its status and the instructions
/// using it; validation diagnostics make their instruction `rejected`.
pub fn check(program: &Program) -> CheckReport {
    check_with(program, &bir_ir::ValidateOptions::default())
}

/// [`check`] with validation limits of the caller's (the CLI's `--memory-cap`,
/// `--max-instructions`).
pub fn check_with(program: &Program, limits: &bir_ir::ValidateOptions) -> CheckReport {
    let mut rejected: Vec<(String, String)> = Vec::new();
    let mut problems = Vec::new();
    if let Err(Diagnostics(diags)) = bir_ir::validate(program, limits) {
        for d in diags {
            let text = if d.field.is_empty() {
                format!("bir-ir validation [{}]: {}", d.kind.name(), d.message)
            } else {
                format!("bir-ir validation [{}]: {}: {}", d.kind.name(), d.field, d.message)
            };
            match diagnostic_instruction(&d.context) {
                Some(name) => rejected.push((name.to_owned(), text)),
                None => problems.push(format!("{}: {text}", d.location())),
            }
        }
    }
    let mut entries: Vec<CheckEntry> = Vec::new();
    let mut add = |i: &Instruction, f: &Function, in_block: bool| {
        let q = Recorded { inner: &InstFacts::new(i, f, in_block), seen: RefCell::new(Vec::new()) };
        let verdict = classify(i.opcode(), &q);
        let (mode, dtype_facts) = split(&q.seen.into_inner());
        let (status, reason) = match rejected.iter().find(|(n, _)| *n == i.name) {
            Some((_, why)) => (Status::Rejected, why.clone()),
            None => (verdict.status, verdict.reason.to_owned()),
        };
        let dtypes = dtypes_text(i);
        let same = |e: &&mut CheckEntry| {
            e.opcode == i.opcode()
                && e.mode == mode
                && e.dtypes == dtypes
                && e.dtype_facts == dtype_facts
                && e.status == status
                && e.reason == reason
        };
        match entries.iter_mut().find(same) {
            Some(e) => {
                e.count += 1;
                if e.instructions.len() < NAMES_KEPT {
                    e.instructions.push(i.name.clone());
                }
            }
            None => entries.push(CheckEntry {
                opcode: i.opcode(),
                mode,
                dtypes,
                dtype_facts,
                status,
                reason,
                instructions: vec![i.name.clone()],
                count: 1,
            }),
        }
    };
    fn walk(nodes: &[Node], f: &Function, add: &mut dyn FnMut(&Instruction, &Function, bool)) {
        for node in nodes {
            match node {
                Node::Block(b) => walk(&b.body, f, add),
                Node::Loop(l) => walk(&l.body, f, add),
                Node::Inst(i) => {
                    add(i, f, false);
                    if let Op::DMABlock(b) = &i.op {
                        for d in &b.descriptors {
                            add(d, f, true);
                        }
                    }
                }
            }
        }
    }
    for f in &program.functions {
        walk(&f.body, f, &mut add);
    }
    let verdict = if !problems.is_empty() || entries.iter().any(|e| e.status == Status::Rejected) {
        Status::Rejected
    } else if entries.iter().any(|e| e.status == Status::NotImplemented) {
        Status::NotImplemented
    } else {
        Status::Runs
    };
    CheckReport { verdict, entries, problems }
}

impl CheckReport {
    /// `{"verdict", "entries": [{opcode, mode, dtypes, status, reason, instructions, count}],
    /// "problems"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "verdict": self.verdict.name(),
            "entries": self.entries.iter().map(|e| json!({
                "opcode": e.opcode.name(),
                "mode": facts_json(&e.mode),
                "dtypes": e.dtypes,
                "dtype_facts": facts_json(&e.dtype_facts),
                "status": e.status.name(),
                "reason": e.reason,
                "instructions": e.instructions,
                "count": e.count,
            })).collect::<Vec<_>>(),
            "problems": self.problems,
        })
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.entries {
            write!(
                f,
                "{:<15} {} {}; mode: {}",
                e.status.name(),
                e.opcode.name(),
                e.dtypes,
                facts_text(&e.mode)
            )?;
            if e.dtype_facts.is_empty() {
                writeln!(f)?;
            } else {
                writeln!(f, "; dtypes: {}", facts_text(&e.dtype_facts))?;
            }
            if !e.reason.is_empty() {
                writeln!(f, "    {}", e.reason)?;
            }
            let more = e.count - e.instructions.len();
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            writeln!(f, "    {} instruction(s): {}{tail}", e.count, e.instructions.join(", "))?;
        }
        for p in &self.problems {
            writeln!(f, "rejected        {p}")?;
        }
        let n = |s| self.entries.iter().filter(|e| e.status == s).count();
        writeln!(
            f,
            "verdict: {} ({} combination(s): {} run, {} not implemented, {} rejected)",
            self.verdict.name(),
            self.entries.len(),
            n(Status::Runs),
            n(Status::NotImplemented),
            n(Status::Rejected)
        )
    }
}
