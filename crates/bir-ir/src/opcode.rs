//! The one opcode list: the reference's 110-case `InstructionType` switch (re-facts §5), with
//! each opcode's ordinal, category and field payload. [`Opcode`], [`Op`], the JSON field
//! reader/writer dispatch and the docs' opcode table are all derived from `for_each_opcode!`;
//! add or re-type an opcode here and nowhere else.
//!
//! Naming grammar: the variant name is the BIR JSON `opcode` string, verbatim.

use crate::enum_macro::BirEnum;
use crate::ops::*;
use crate::signature::{self, Signature};

/// How an [`Op`] variant holds its payload. The payloads much larger than the common ones
/// (an inline `[step, num]` list, a queue name, lists of constants) are boxed, so that every
/// instruction costs what the small payloads need (32 bytes of [`Op`], not 112): programs of
/// 10^5 instructions and more are held in memory whole.
pub trait Payload: Sized {
    /// What the [`Op`] variant holds: the payload itself or a box of it.
    type Stored;
    /// Wraps a payload for its [`Op`] variant.
    fn store(self) -> Self::Stored;
}

macro_rules! payloads {
    (inline: $($inline:ty),*; boxed: $($boxed:ty),*;) => {
        $(impl Payload for $inline {
            type Stored = $inline;
            fn store(self) -> $inline {
                self
            }
        })*
        $(impl Payload for $boxed {
            type Stored = Box<$boxed>;
            fn store(self) -> Box<$boxed> {
                Box::new(self)
            }
        })*
    };
}

payloads! {
    inline: Raw, NoFields, CopyFields, CopyPredicatedFields, DmaBlockFields, IndirectCopyFields,
        MemsetFields, PoolFields, RegisterAluFields, BranchFields, ExponentialFields, MatchReplaceFields, NonzeroFields, RangeSelectFields, DropoutFields, StreamShuffleFields, TensorReduceFields, TensorScalarCacheFields,
        TensorScalarFields, TensorScalarPtrFields, TensorTensorFields;
    boxed: ActivationFields, AffineSelectFields, DmaCopyFields, DmaDescriptorFields, DmaFields,
        DmaTriggerFields, GenericIndirectFields, IndirectFields, IndirectSaveAccumulateFields, IotaFields,
        MatmultFields, QueueInstanceFields, CompareBranchFields, CallFields;
}

/// How the reference dispatcher treats an opcode (re-facts §5, CONFIRMED), except NonzeroWithCount,
/// a base record the reference skips (re-facts §9.5) that birsim runs as AWS documents it (fidelity
/// Q8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpCategory {
    /// A "base" record: the reference names it in a diagnostic and skips it (not fatal).
    Base,
    /// Runs no kernel; only its sync effects matter (enter/leave only).
    NoOp,
    /// Has its own kernel.
    Kernel,
    /// Structured control flow handled before the switch (Loop, DynamicForLoop, DoWhile).
    Control,
}

/// Calls `$m!` with the whole opcode list: `ordinal Name Category Payload Signature,` per
/// opcode. `Raw` marks an opcode whose fields we do not model yet (kept verbatim); its signature
/// is `UNCHECKED`. The signature names a constant of `signature.rs`: the operand kinds and
/// counts validation checks (docs/bir-json.md "Operand order").
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_opcode {
    ($m:ident) => {
        $m! {
            0 Generic Base Raw UNCHECKED,
            1 GenericCopy Kernel CopyFields UNARY,
            2 GenericRelu Base Raw UNCHECKED,
            3 AbstractCopy Kernel CopyFields UNARY,
            4 Activation Kernel ActivationFields ACTIVATION,
            5 ReadActivationAccumulator Kernel NoFields FILL,
            6 LoadActFuncSet Kernel Raw UNCHECKED,
            7 MatmultBase Base Raw UNCHECKED,
            8 Matmult Kernel MatmultFields BINARY,
            9 MatmultSparse Kernel Raw UNCHECKED,
            10 Memset Kernel MemsetFields FILL,
            11 GetGlobalRankId Kernel Raw UNCHECKED,
            12 NoOp NoOp Raw UNCHECKED,
            13 EventSemaphore NoOp Raw UNCHECKED,
            14 GroupResetSemaphores Kernel Raw UNCHECKED,
            15 AllEngineBarrier NoOp Raw UNCHECKED,
            16 Drain Kernel Raw UNCHECKED,
            17 Halt Kernel Raw UNCHECKED,
            18 DMA Base Raw UNCHECKED,
            19 Load Kernel DmaFields UNARY,
            20 Pool Kernel PoolFields UNARY,
            21 Reciprocal Kernel NoFields UNARY,
            22 Save Kernel DmaFields UNARY,
            23 TensorCopy Kernel CopyFields UNARY,
            24 TensorCopyDynamicSrc Kernel CopyFields UNARY,
            25 TensorCopyDynamicDst Kernel CopyFields UNARY,
            26 IndirectCopy Kernel IndirectCopyFields BINARY,
            27 TensorReduce Kernel TensorReduceFields UNARY,
            28 TensorScalar Kernel TensorScalarFields UNARY,
            29 TensorScalarPtr Kernel TensorScalarPtrFields SCALAR_PTR,
            30 TensorScalarCache Kernel TensorScalarCacheFields CACHE,
            31 TensorTensor Kernel TensorTensorFields BINARY,
            32 DMACopy Kernel DmaCopyFields DMA_COPY,
            33 GPSIMDSB2SB Kernel Raw UNCHECKED,
            34 BNStats Kernel NoFields UNARY,
            35 BNStatsAggregate Kernel NoFields UNARY,
            36 BNGradients Kernel Raw UNCHECKED,
            37 BNBackprop Kernel Raw UNCHECKED,
            38 BNBackprop2 Kernel Raw UNCHECKED,
            39 StreamShuffle Kernel StreamShuffleFields UNARY,
            40 StreamTranspose Kernel NoFields UNARY,
            41 ReadVarAddr Kernel DmaFields UNARY,
            42 GenericIndirectLoad Kernel GenericIndirectFields GENERIC_INDIRECT,
            43 IndirectLoad Kernel IndirectFields BINARY,
            44 GenericIndirectSave Kernel GenericIndirectFields GENERIC_INDIRECT,
            45 IndirectSave Kernel IndirectFields BINARY,
            46 IndirectSaveAccumulate Kernel IndirectSaveAccumulateFields BINARY,
            47 Collective Base Raw UNCHECKED,
            48 CollectiveCompute Kernel Raw UNCHECKED,
            49 CollectiveSend Kernel Raw UNCHECKED,
            50 CollectiveRecv Kernel Raw UNCHECKED,
            51 Select Kernel NoFields SELECT,
            52 CopyPredicated Kernel CopyPredicatedFields PREDICATED,
            53 CustomOp Kernel Raw UNCHECKED,
            54 BIRKernel Kernel Raw UNCHECKED,
            55 NKIKernel Kernel Raw UNCHECKED,
            56 NKIKLIRKernel Base Raw UNCHECKED,
            57 DevicePrint Kernel Raw UNCHECKED,
            58 GetRandState Kernel NoFields FILL,
            59 SetRandState Kernel NoFields ANY_IN,
            60 Rand Kernel NoFields FILL,
            61 Iota Kernel IotaFields FILL,
            62 TensorScalarAffineSelect Kernel AffineSelectFields UNARY,
            63 RangeSelect Kernel RangeSelectFields RANGE_SELECT,
            64 GetSequenceBounds Kernel NoFields UNARY,
            65 Dropout Kernel DropoutFields DATA_PARAM,
            66 GetCurProcessingRankID Kernel Raw UNCHECKED,
            67 DMATrigger Kernel DmaTriggerFields NO_OPERANDS,
            68 DMADescriptor Base Raw UNCHECKED,
            69 DMADescriptorCopy Kernel DmaDescriptorFields UNARY,
            70 DMADescriptorCCE Kernel DmaDescriptorFields VARIADIC,
            71 DMADescriptorTranspose Kernel DmaDescriptorFields UNARY,
            72 DMADescriptorReplicate Kernel DmaDescriptorFields UNARY,
            73 RegisterAlu Kernel RegisterAluFields REG_ALU,
            74 RegisterMove Kernel NoFields REG_MOVE,
            75 TensorLoad Kernel NoFields REG_LOAD,
            76 TensorSave Kernel NoFields REG_SAVE,
            77 Terminator Base Raw UNCHECKED,
            78 CompareAndBranch Kernel CompareBranchFields COMPARE_BRANCH,
            79 UnconditionalBranch Kernel BranchFields NO_OPERANDS,
            80 BranchHint Kernel Raw UNCHECKED,
            81 Return Kernel NoFields NO_OPERANDS,
            82 Exit Kernel NoFields NO_OPERANDS,
            83 Break Kernel NoFields NO_OPERANDS,
            84 Call Kernel CallFields NO_OPERANDS,
            85 SwitchQueueInstance Kernel QueueInstanceFields NO_OPERANDS,
            86 ResetQueueInstance Kernel QueueInstanceFields NO_OPERANDS,
            87 CoreBarrier Kernel Raw UNCHECKED,
            88 Max Kernel NoFields UNARY,
            89 MaxIndex Kernel NoFields BINARY,
            90 MatchReplace Kernel MatchReplaceFields BINARY,
            91 MaxIndexAndMatchReplace Kernel MatchReplaceFields MATCH_INDEX,
            92 Gather Kernel NoFields BINARY,
            93 InlineASMBytes Base Raw UNCHECKED,
            94 TensorCompletion Kernel Raw UNCHECKED,
            95 MatmultMx Kernel MatmultFields MATMUL_MX,
            96 QuantizeMx Kernel NoFields QUANTIZE_MX,
            97 Rand2 Kernel NoFields BOUNDS,
            98 RandSetState Kernel NoFields STATE_IN,
            99 RandGetState Kernel NoFields FILL,
            100 Rng Base Raw UNCHECKED,
            101 ActivationReadAccumulator Kernel NoFields FILL,
            102 DveReadAccumulator Kernel NoFields FILL,
            103 Exponential Kernel ExponentialFields EXPONENTIAL,
            104 NonzeroWithCount Kernel NonzeroFields UNARY,
            105 Loop Control Raw UNCHECKED,
            106 DynamicForLoop Control Raw UNCHECKED,
            107 DMABlock Kernel DmaBlockFields NO_OPERANDS,
            108 DoWhile Control Raw UNCHECKED,
            109 TongaReduceMacroSymbolic Kernel Raw UNCHECKED,
        }
    };
}

/// `true` for the `Raw` payload (an unmodelled opcode), `false` for any other payload type.
macro_rules! is_raw {
    (Raw) => {
        true
    };
    ($other:ident) => {
        false
    };
}

macro_rules! define_opcodes {
    ($($ord:literal $name:ident $cat:ident $payload:ident $sig:ident,)*) => {
        /// A BIR instruction type. The discriminant is the reference ordinal (re-facts §5).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", stringify!($name), "` (ordinal ", stringify!($ord), ").")]
                $name = $ord,
            )*
        }

        impl BirEnum for Opcode {
            const WHAT: &'static str = "opcode";
            const ALL: &'static [Self] = &[$(Self::$name),*];
            fn ordinal(self) -> u8 {
                self as u8
            }
            fn from_ordinal(n: u64) -> Option<Self> {
                match n {
                    $($ord => Some(Self::$name),)*
                    _ => None,
                }
            }
            fn name(self) -> &'static str {
                match self {
                    $(Self::$name => stringify!($name),)*
                }
            }
            fn from_name(s: &str) -> Option<Self> {
                match s {
                    $(stringify!($name) => Some(Self::$name),)*
                    _ => None,
                }
            }
        }

        impl Opcode {
            /// The reference ordinal.
            pub const fn ordinal(self) -> u8 {
                self as u8
            }
            /// The BIR JSON `opcode` string.
            pub fn name(self) -> &'static str {
                <Self as BirEnum>::name(self)
            }
            /// How the reference dispatcher treats this opcode.
            pub fn category(self) -> OpCategory {
                match self {
                    $(Self::$name => OpCategory::$cat,)*
                }
            }
            /// True when this crate decodes the opcode's own fields into a typed payload.
            pub fn is_modelled(self) -> bool {
                match self {
                    $(Self::$name => !is_raw!($payload),)*
                }
            }
            /// The operand signature validation checks (the list's signature column).
            pub(crate) fn signature(self) -> Signature {
                match self {
                    $(Self::$name => signature::$sig,)*
                }
            }
        }

        /// An instruction's opcode together with its typed fields: one variant per opcode
        /// (large payloads boxed, see [`Payload`]).
        #[derive(Clone, Debug, PartialEq)]
        pub enum Op {
            $(
                #[doc = concat!("`", stringify!($name), "`: [`", stringify!($payload), "`].")]
                $name(<$payload as Payload>::Stored),
            )*
        }

        impl Op {
            /// The opcode of this instruction.
            pub fn opcode(&self) -> Opcode {
                match self {
                    $(Op::$name(_) => Opcode::$name,)*
                }
            }
        }
    };
}

for_each_opcode!(define_opcodes);

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::Signature;

    /// The signature column is filled in exactly for the modelled opcodes.
    #[test]
    fn signature_column_matches_the_payload_column() {
        for &op in <Opcode as BirEnum>::ALL {
            assert_eq!(op.is_modelled(), op.signature() != Signature::Unchecked, "{op}");
        }
    }
}
