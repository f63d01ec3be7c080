//! The one opcode list: the reference's 110-case `InstructionType` switch (re-facts §5), with
//! each opcode's ordinal, category and field payload. [`Opcode`], [`Op`], the JSON field
//! reader/writer dispatch and the docs' opcode table are all derived from `for_each_opcode!`;
//! add or re-type an opcode here and nowhere else.
//!
//! Naming grammar: the variant name is the BIR JSON `opcode` string, verbatim.

use crate::enum_macro::BirEnum;
use crate::ops::*;

/// How the reference dispatcher treats an opcode (re-facts §5, CONFIRMED).
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

/// Calls `$m!` with the whole opcode list: `ordinal Name Category Payload,` per opcode.
/// `Raw` marks an opcode whose fields we do not model yet (kept verbatim).
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_opcode {
    ($m:ident) => {
        $m! {
            0 Generic Base Raw,
            1 GenericCopy Kernel CopyFields,
            2 GenericRelu Base Raw,
            3 AbstractCopy Kernel CopyFields,
            4 Activation Kernel ActivationFields,
            5 ReadActivationAccumulator Kernel Raw,
            6 LoadActFuncSet Kernel Raw,
            7 MatmultBase Base Raw,
            8 Matmult Kernel MatmultFields,
            9 MatmultSparse Kernel Raw,
            10 Memset Kernel MemsetFields,
            11 GetGlobalRankId Kernel Raw,
            12 NoOp NoOp Raw,
            13 EventSemaphore NoOp Raw,
            14 GroupResetSemaphores Kernel Raw,
            15 AllEngineBarrier NoOp Raw,
            16 Drain Kernel Raw,
            17 Halt Kernel Raw,
            18 DMA Base Raw,
            19 Load Kernel DmaFields,
            20 Pool Kernel PoolFields,
            21 Reciprocal Kernel Raw,
            22 Save Kernel DmaFields,
            23 TensorCopy Kernel CopyFields,
            24 TensorCopyDynamicSrc Kernel Raw,
            25 TensorCopyDynamicDst Kernel Raw,
            26 IndirectCopy Kernel IndirectCopyFields,
            27 TensorReduce Kernel TensorReduceFields,
            28 TensorScalar Kernel TensorScalarFields,
            29 TensorScalarPtr Kernel TensorScalarPtrFields,
            30 TensorScalarCache Kernel TensorScalarCacheFields,
            31 TensorTensor Kernel TensorTensorFields,
            32 DMACopy Kernel DmaCopyFields,
            33 GPSIMDSB2SB Kernel Raw,
            34 BNStats Kernel Raw,
            35 BNStatsAggregate Kernel Raw,
            36 BNGradients Kernel Raw,
            37 BNBackprop Kernel Raw,
            38 BNBackprop2 Kernel Raw,
            39 StreamShuffle Kernel StreamShuffleFields,
            40 StreamTranspose Kernel NoFields,
            41 ReadVarAddr Kernel Raw,
            42 GenericIndirectLoad Kernel GenericIndirectFields,
            43 IndirectLoad Kernel DmaFields,
            44 GenericIndirectSave Kernel GenericIndirectFields,
            45 IndirectSave Kernel DmaFields,
            46 IndirectSaveAccumulate Kernel IndirectSaveAccumulateFields,
            47 Collective Base Raw,
            48 CollectiveCompute Kernel Raw,
            49 CollectiveSend Kernel Raw,
            50 CollectiveRecv Kernel Raw,
            51 Select Kernel NoFields,
            52 CopyPredicated Kernel CopyPredicatedFields,
            53 CustomOp Kernel Raw,
            54 BIRKernel Kernel Raw,
            55 NKIKernel Kernel Raw,
            56 NKIKLIRKernel Base Raw,
            57 DevicePrint Kernel Raw,
            58 GetRandState Kernel Raw,
            59 SetRandState Kernel NoFields,
            60 Rand Kernel Raw,
            61 Iota Kernel IotaFields,
            62 TensorScalarAffineSelect Kernel AffineSelectFields,
            63 RangeSelect Kernel Raw,
            64 GetSequenceBounds Kernel Raw,
            65 Dropout Kernel Raw,
            66 GetCurProcessingRankID Kernel Raw,
            67 DMATrigger Kernel DmaTriggerFields,
            68 DMADescriptor Base Raw,
            69 DMADescriptorCopy Kernel DmaDescriptorFields,
            70 DMADescriptorCCE Kernel DmaDescriptorFields,
            71 DMADescriptorTranspose Kernel DmaDescriptorFields,
            72 DMADescriptorReplicate Kernel DmaDescriptorFields,
            73 RegisterAlu Kernel Raw,
            74 RegisterMove Kernel Raw,
            75 TensorLoad Kernel Raw,
            76 TensorSave Kernel Raw,
            77 Terminator Base Raw,
            78 CompareAndBranch Kernel Raw,
            79 UnconditionalBranch Kernel Raw,
            80 BranchHint Kernel Raw,
            81 Return Kernel Raw,
            82 Exit Kernel Raw,
            83 Break Kernel Raw,
            84 Call Kernel Raw,
            85 SwitchQueueInstance Kernel Raw,
            86 ResetQueueInstance Kernel Raw,
            87 CoreBarrier Kernel Raw,
            88 Max Kernel Raw,
            89 MaxIndex Kernel Raw,
            90 MatchReplace Kernel Raw,
            91 MaxIndexAndMatchReplace Kernel Raw,
            92 Gather Kernel NoFields,
            93 InlineASMBytes Base Raw,
            94 TensorCompletion Kernel Raw,
            95 MatmultMx Kernel Raw,
            96 QuantizeMx Kernel Raw,
            97 Rand2 Kernel Raw,
            98 RandSetState Kernel Raw,
            99 RandGetState Kernel Raw,
            100 Rng Base Raw,
            101 ActivationReadAccumulator Kernel Raw,
            102 DveReadAccumulator Kernel Raw,
            103 Exponential Kernel Raw,
            104 NonzeroWithCount Base Raw,
            105 Loop Control Raw,
            106 DynamicForLoop Control Raw,
            107 DMABlock Kernel DmaBlockFields,
            108 DoWhile Control Raw,
            109 TongaReduceMacroSymbolic Kernel Raw,
        }
    };
}

macro_rules! define_opcodes {
    ($($ord:literal $name:ident $cat:ident $payload:ident,)*) => {
        /// A BIR instruction type. The discriminant is the reference ordinal (re-facts §5).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        #[allow(clippy::upper_case_acronyms, reason = "names are the BIR JSON opcode strings")]
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
                    $(Self::$name => !matches!(stringify!($payload).as_bytes(), b"Raw"),)*
                }
            }
        }

        /// An instruction's opcode together with its typed fields: one variant per opcode.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::upper_case_acronyms, reason = "names are the BIR JSON opcode strings")]
        pub enum Op {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                $name($payload),
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
