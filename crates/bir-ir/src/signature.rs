//! Operand signatures: what each modelled opcode takes in `ins` and `outs` (docs/bir-json.md
//! "Operand order", fidelity J19). Each opcode's signature is a column of the one opcode list
//! (`for_each_opcode!` in opcode.rs); the constants here are the values that column names.

/// What an operand position accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A `physical_ap`.
    Ap,
    /// A `physical_ap` or an `imm_value`.
    ApOrImm,
    /// A `register_access`.
    Reg,
    /// A `register_access` or an `imm_value`.
    RegOrImm,
    /// Anything.
    Any,
}

/// Fixed leading `ins` slots (the first `min_ins` required), then optionally any number of
/// `rest` slots; `outs` slots, the first `min_outs` required.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sig {
    pub(crate) ins: &'static [Slot],
    pub(crate) min_ins: usize,
    pub(crate) rest: Option<Slot>,
    pub(crate) outs: &'static [Slot],
    pub(crate) min_outs: usize,
}

/// An opcode's signature column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signature {
    /// An unmodelled opcode (fields kept verbatim): its operands are not checked.
    Unchecked,
    /// Always this signature.
    Fixed(Sig),
    /// `DMACopy`: `cce` in CopyMode CCE (N inputs), `plain` in every other mode.
    ByCopyMode {
        /// Copy, Transpose, Replicate, Dynamic.
        plain: Sig,
        /// CCE.
        cce: Sig,
    },
}

use Slot::{Any, Ap, ApOrImm, Reg, RegOrImm};

const fn sig(ins: &'static [Slot], min_ins: usize, outs: &'static [Slot]) -> Sig {
    Sig { ins, min_ins, rest: None, outs, min_outs: outs.len() }
}

const fn variadic(ins: &'static [Slot], rest: Slot, outs: &'static [Slot]) -> Sig {
    Sig { ins, min_ins: ins.len(), rest: Some(rest), outs, min_outs: outs.len() }
}

/// Unmodelled: not checked.
pub(crate) const UNCHECKED: Signature = Signature::Unchecked;
/// `[AP] → [AP]`.
pub(crate) const UNARY: Signature = Signature::Fixed(sig(&[Ap], 1, &[Ap]));
/// `[AP, AP] → [AP]`.
pub(crate) const BINARY: Signature = Signature::Fixed(sig(&[Ap, Ap], 2, &[Ap]));
/// `[AP, AP, …] → [AP]` (at least one input).
pub(crate) const VARIADIC: Signature = Signature::Fixed(variadic(&[Ap], Ap, &[Ap]));
/// `[data AP, s0?, s1?] → [AP]`, each scalar an AP or an immediate.
pub(crate) const SCALAR_PTR: Signature = Signature::Fixed(sig(&[Ap, ApOrImm, ApOrImm], 1, &[Ap]));
/// `[data AP, scale?, bias?, alpha?] → [AP]` (Activation, engines.md §2.1: the reference's
/// operand order), each parameter an AP (one value per partition) or an immediate.
pub(crate) const ACTIVATION: Signature = Signature::Fixed(sig(&[Ap, ApOrImm, ApOrImm, ApOrImm], 1, &[Ap]));
/// `[src AP, max_value?, reduce_init?] → [AP]` (Exponential).
pub(crate) const EXPONENTIAL: Signature = Signature::Fixed(sig(&[Ap, ApOrImm, ApOrImm], 1, &[Ap]));
/// `[on_true AP, bound0, bound1] → [AP, reduce_res AP?]` (RangeSelect), each bound an AP (one
/// value per partition) or an immediate.
pub(crate) const RANGE_SELECT: Signature = Signature::Fixed(Sig {
    ins: &[Ap, ApOrImm, ApOrImm],
    min_ins: 3,
    rest: None,
    outs: &[Ap, Ap],
    min_outs: 1,
});
/// `[data AP, vals AP] → [AP, index AP]` (MaxIndexAndMatchReplace).
pub(crate) const MATCH_INDEX: Signature = Signature::Fixed(sig(&[Ap, Ap], 2, &[Ap, Ap]));
/// `[data AP, param] → [AP]` (Dropout's probability: an AP of one value per partition or an
/// immediate).
pub(crate) const DATA_PARAM: Signature = Signature::Fixed(sig(&[Ap, ApOrImm], 2, &[Ap]));
/// `[min, max] → [AP]` (Rand2), each bound an AP of one value per partition or an immediate.
pub(crate) const BOUNDS: Signature = Signature::Fixed(sig(&[ApOrImm, ApOrImm], 2, &[Ap]));
/// `[AP] → []` (RandSetState).
pub(crate) const STATE_IN: Signature = Signature::Fixed(sig(&[Ap], 1, &[]));
/// `[moving, stationary, moving scales, stationary scales] → [PSUM AP]` (MatmultMx).
pub(crate) const MATMUL_MX: Signature = Signature::Fixed(sig(&[Ap, Ap, Ap, Ap], 4, &[Ap]));
/// `[src AP] → [data AP, scales AP]` (QuantizeMx).
pub(crate) const QUANTIZE_MX: Signature = Signature::Fixed(sig(&[Ap], 1, &[Ap, Ap]));
/// `[data AP, init?] → [AP]` (TensorScalarCache).
pub(crate) const CACHE: Signature = Signature::Fixed(sig(&[Ap, ApOrImm], 1, &[Ap]));
/// `[] → [AP]`.
pub(crate) const FILL: Signature = Signature::Fixed(sig(&[], 0, &[Ap]));
/// `[pred AP, on_true, on_false] → [AP]`.
pub(crate) const SELECT: Signature = Signature::Fixed(sig(&[Ap, ApOrImm, ApOrImm], 3, &[Ap]));
/// `[src, pred AP] → [AP]`.
pub(crate) const PREDICATED: Signature =
    Signature::Fixed(Sig { ins: &[ApOrImm, Ap], min_ins: 2, rest: None, outs: &[Ap, Ap], min_outs: 1 });
/// `[table or values AP, index AP, index AP…] → [AP]`.
pub(crate) const GENERIC_INDIRECT: Signature = Signature::Fixed(variadic(&[Ap, Ap], Ap, &[Ap]));
/// `[] → []`.
pub(crate) const NO_OPERANDS: Signature = Signature::Fixed(sig(&[], 0, &[]));
/// `[anything] → []`.
pub(crate) const ANY_IN: Signature = Signature::Fixed(sig(&[Any], 1, &[]));
/// DMACopy: `[AP] → [AP]`, or `[AP, AP, …] → [AP]` in CCE mode.
pub(crate) const DMA_COPY: Signature =
    Signature::ByCopyMode { plain: sig(&[Ap], 1, &[Ap]), cce: variadic(&[Ap], Ap, &[Ap]) };
/// `[register or immediate] → [register]` (RegisterMove).
pub(crate) const REG_MOVE: Signature = Signature::Fixed(sig(&[RegOrImm], 1, &[Reg]));
/// `[register, register or immediate] → [register]` (RegisterAlu).
pub(crate) const REG_ALU: Signature = Signature::Fixed(sig(&[Reg, RegOrImm], 2, &[Reg]));
/// `[one-element AP] → [register]` (TensorLoad).
pub(crate) const REG_LOAD: Signature = Signature::Fixed(sig(&[Ap], 1, &[Reg]));
/// `[register] → [one-element AP]` (TensorSave).
pub(crate) const REG_SAVE: Signature = Signature::Fixed(sig(&[Reg], 1, &[Ap]));
/// `[register, register or immediate] → []` (CompareAndBranch).
pub(crate) const COMPARE_BRANCH: Signature = Signature::Fixed(sig(&[Reg, RegOrImm], 2, &[]));
