//! Typed field payloads of the modelled opcodes (bir-json.md "Opcode fields", seed 000 §2–§7).
//! Operands (`ins`/`outs`) are not here: they live on [`crate::Instruction`], in the operand
//! order docs/bir-json.md fixes per opcode.

use crate::alu::AluOp;
use crate::ap::{ApPair, F32};
use crate::enums::*;
use crate::program::Instruction;
use crate::verbatim::JsonMap;
use smallvec::SmallVec;

/// The fields of an opcode we do not model yet, kept verbatim (every key except `opcode`,
/// `name`, `engine`, `ins` and `outs`), so the program loads, round-trips, and the simulator
/// can say precisely what it cannot run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Raw(pub JsonMap);

/// An opcode with no fields of its own (StreamTranspose, Select, Gather, SetRandState).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoFields;

/// GenericCopy, AbstractCopy, TensorCopy, TensorCopyDynamicSrc/Dst.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyFields {
    /// The instruction may read memory nobody wrote.
    pub can_read_uninit: bool,
}

/// The DMA queue fields shared by Load, Save, DMACopy and the indirect DMA ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaFields {
    /// The DMA queue name, if assigned.
    pub queue: Option<String>,
    /// Which descriptor engine serves it (never read by the simulator).
    pub dge_type: DgeType,
    /// Duplicate flag.
    pub duplicate: bool,
    /// The instruction may read memory nobody wrote.
    pub can_read_uninit: bool,
}

impl Default for DmaFields {
    fn default() -> Self {
        DmaFields { queue: None, dge_type: DgeType::Unassigned, duplicate: false, can_read_uninit: false }
    }
}

/// DMACopy (seed 000 §5.2).
#[derive(Clone, Debug, PartialEq)]
pub struct DmaCopyFields {
    /// Queue fields.
    pub dma: DmaFields,
    /// Copy, Transpose, CCE or Replicate.
    pub mode: CopyMode,
    /// Out-of-bounds dynamic accesses are fatal (default true).
    pub oob_is_err: bool,
    /// `oob_is_err` held in a register instead (KLR `DmaBounds.reg`): the register of this
    /// name, non-zero meaning fatal, decides at run time (fidelity B12).
    pub oob_is_err_reg: Option<String>,
    /// Axis permutation for Transpose mode.
    pub transpose_op: TransposeOps,
    /// Per-input scale factors for CCE mode (empty = none).
    pub constants: Vec<F32>,
    /// CCE reduce op (add/max/min), also the reduce-on-write op of the HW-DGE path.
    pub cce_op: Option<AluOp>,
}

/// TensorScalar: `out = op1(op0(x, const0), const1)` (seed 000 §2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorScalarFields {
    /// First stage op.
    pub op0: AluOp,
    /// First stage immediate.
    pub const0: F32,
    /// Swap the first stage's operands.
    pub reverse0: bool,
    /// Second stage op.
    pub op1: AluOp,
    /// Second stage immediate.
    pub const1: F32,
    /// Swap the second stage's operands.
    pub reverse1: bool,
}

/// TensorScalarPtr: TensorScalar with scalars read from APs (seed 000 §2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorScalarPtrFields {
    /// First stage op.
    pub op0: AluOp,
    /// Swap the first stage's operands.
    pub reverse0: bool,
    /// Second stage op.
    pub op1: AluOp,
    /// Swap the second stage's operands.
    pub reverse1: bool,
    /// Cast to fp32 and 32×32 partition-transpose first.
    pub apply_transpose: bool,
    /// Run on the 64-bit address table.
    pub is_tensor_scalar_addr: bool,
    /// Scalar-tensor-tensor form.
    pub is_scalar_tensor_tensor: bool,
    /// Tensor-tensor scan form.
    pub is_tensor_tensor_scan: bool,
    /// Accumulation into the output, if any.
    pub acc: Option<EngineAccumulationType>,
    /// Negate the second output.
    pub negate_second_output: bool,
}

/// TensorScalarCache: the per-partition running-cache recurrence (seed 000 §4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorScalarCacheFields {
    /// First stage op.
    pub op0: AluOp,
    /// Swap the first stage's operands.
    pub reverse0: bool,
    /// Second stage op.
    pub op1: AluOp,
    /// Swap the second stage's operands.
    pub reverse1: bool,
    /// Reduce, Cumulative or TensorScan.
    pub mode: TscMode,
    /// Cache initialisation: ZeroAccumulate (0) or LoadAccumulate (from the init operand).
    pub acc: EngineAccumulationType,
}

/// TensorTensor: `out = op(in0, in1)` (seed 000 §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorTensorFields {
    /// The op.
    pub op: AluOp,
    /// Accumulation into the output, if any.
    pub acc: Option<EngineAccumulationType>,
}

/// TensorReduce (seed 000 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorReduceFields {
    /// The fold op.
    pub op: AluOp,
    /// Which innermost dims to fold.
    pub axis: AxisListType,
    /// Negate the folded value.
    pub negate: bool,
    /// Cast to fp32 and 32×32 partition-transpose first.
    pub apply_transpose: bool,
    /// Accumulation into the output, if any.
    pub acc: Option<EngineAccumulationType>,
}

/// Pool: a window over the two innermost dims (seed 000 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolFields {
    /// Max or Avg.
    pub func: PoolFunctionType,
}

/// An affine index generator: `base + channel_multiplier·p + Σ step·index` (seed 000 §5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinePattern {
    /// The constant term.
    pub base: i64,
    /// `[step, num]` per free dim, outermost first.
    pub pattern: SmallVec<[ApPair; 5]>,
    /// The partition coefficient.
    pub channel_multiplier: i64,
}

/// Iota.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IotaFields {
    /// The index generator.
    pub generator: AffinePattern,
}

/// TensorScalarAffineSelect: `out = cmp(index, 0) ? in : fill_value`.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineSelectFields {
    /// The index generator.
    pub generator: AffinePattern,
    /// The comparison applied to the index.
    pub compare_op: AluOp,
    /// The value written where the comparison is false.
    pub fill_value: F32,
}

/// Memset (seed 000 §5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemsetFields {
    /// Const or Random.
    pub mode: MemsetMode,
    /// The fill bit pattern (low `dtype size` bytes are stored).
    pub constant: u32,
    /// Random-mode seed (our extension; absent = the engine's current state).
    pub seed: Option<u64>,
}

/// StreamShuffle (seed 000 §5.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamShuffleFields {
    /// 32 entries: source partition within the 32-block, or 255 = leave the row.
    pub mask: Vec<u8>,
}

/// CopyPredicated (re-facts §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPredicatedFields {
    /// Copy where the predicate is false instead.
    pub reverse_pred: bool,
    /// The instruction may read memory nobody wrote.
    pub can_read_uninit: bool,
    /// `useFalseFill` (seed 000 §5.5 names the mode): a false element is written with
    /// [`false_fill`](Self::false_fill) instead of keeping its bits (fidelity D17, ASSUMED).
    pub use_false_fill: bool,
    /// The fill value (fp32, converted to the destination dtype); JSON `false_fill`, default 0.
    pub false_fill: F32,
    /// The `doEngineAccumReduce` side output's fold (seed 000 §5.5; re-facts §7 `reduce_op`).
    pub reduce_op: Option<AluOp>,
    /// What the side output does with the fold (re-facts §7 `accumulator_cmd`).
    pub acc: Option<EngineAccumulationType>,
}

/// IndirectCopy (seed 000 §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectCopyFields {
    /// Entries at or after this count are skipped.
    pub num_valid_indices: u64,
}

/// `apply_wrap` (seed 000 §6.3; fidelity I3): every non-skipped row index (GenericIndirect: the
/// combined element offset) becomes `(v % n) + hi·(v / n)` before the bound check. JSON
/// `"wrap": {"n": N, "hi": H}` (ours).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectWrap {
    /// The divisor (at least 1).
    pub n: u64,
    /// The high-part multiplier.
    pub hi: u64,
}

/// IndirectLoad / IndirectSave (seed 000 §6.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndirectFields {
    /// Queue fields.
    pub dma: DmaFields,
    /// The optional index rebase.
    pub wrap: Option<IndirectWrap>,
}

/// IndirectSaveAccumulate (seed 000 §6.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndirectSaveAccumulateFields {
    /// Queue fields.
    pub dma: DmaFields,
    /// The optional index rebase.
    pub wrap: Option<IndirectWrap>,
    /// Entries per partition that are used; later slots are skipped.
    pub num_indices: u64,
    /// Elements between consecutive table entries.
    pub entry_step_elements: i64,
    /// The reduce op (add; bypass = overwrite).
    pub op: AluOp,
}

/// GenericIndirectLoad / GenericIndirectSave (seed 000 §6.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenericIndirectFields {
    /// Queue fields.
    pub dma: DmaFields,
    /// The optional rebase of the combined offset.
    pub wrap: Option<IndirectWrap>,
    /// The table-AP dim each index operand drives, in operand order (the table is `ins[0]` of a
    /// load, `outs[0]` of a save); its level is [`AccessPattern::indirect_level`](crate::AccessPattern::indirect_level).
    pub indirect_dims: Vec<IndirectDim>,
    /// The reduce op on write (Save only; bypass = overwrite).
    pub op: AluOp,
}

/// DMATrigger: a round-robin cursor over named DMABlocks (re-facts §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaTriggerFields {
    /// Queue fields.
    pub dma: DmaFields,
    /// Names of the DMABlock instructions it fires, in order.
    pub dma_blocks: Vec<String>,
}

/// SwitchQueueInstance (85) / ResetQueueInstance (86): erase the SW-DGE trigger cursors
/// (re-facts §5; docs/fidelity.md G5). Semaphores are not modelled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueInstanceFields {
    /// When given, only triggers whose DMA `queue` equals it are erased; else every trigger.
    pub queue: Option<String>,
    /// SwitchQueueInstance only: keep the cursors (no re-arm). ResetQueueInstance ignores it.
    pub no_rearm: bool,
}

/// DMABlock: a list of descriptors re-dispatched in order.
#[derive(Clone, Debug, PartialEq)]
pub struct DmaBlockFields {
    /// The descriptor instructions (opcodes 69–72).
    pub descriptors: Vec<Instruction>,
}

/// DMADescriptorCopy / CCE / Transpose / Replicate.
#[derive(Clone, Debug, PartialEq)]
pub struct DmaDescriptorFields {
    /// Number of tiling dimensions, if given.
    pub num_tiling_dimensions: Option<u32>,
    /// CCE reduce op.
    pub op: Option<AluOp>,
    /// CCE per-input scale factors.
    pub constants: Vec<F32>,
    /// Transpose code.
    pub transpose_op: TransposeOps,
}

/// Matmult (TensorE into PSUM; engines.md §1, re-facts §5): `out[m, n] = Σ_k (moving[k, n] −
/// zpI)·(stationary[k, m] − zpW)` with `ins = [moving, stationary]`. Both of the compiler's
/// schemas load: the KLR-era `start_tensor_calc` / `stop_tensor_calc` pair and neuronx-cc 2.24's
/// `accumulation_flag` / `psum_zero_region` record ([`MatmultFlags`]); the other keys are the same
/// in both and are kept as given (absent stays absent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmultFields {
    /// The accumulation-group flags, in the schema the record used.
    pub flags: MatmultFlags,
    /// Transpose mode (PE transpose).
    pub is_transpose: bool,
    /// PE tile size, if given.
    pub tile_size: Vec<i64>,
    /// PE tile position, if given.
    pub tile_position: Vec<i64>,
    /// Performance mode.
    pub perf_mode: MatmultPerfMode,
    /// The moving operand's uint8 zero point (`ifmap_quant_offset`).
    pub ifmap_quant_offset: Option<i64>,
    /// The stationary operand's uint8 zero point (`weights_quant_offset`).
    pub weights_quant_offset: Option<i64>,
    /// `replication_resolution`, `replication_shift_amnt`, `replication_num_rows` (kept, not
    /// modelled).
    pub replication: [Option<i64>; 3],
    /// `is_fmap_onezero`, `is_weight_onezero`: performance hints (kept, not modelled).
    pub onezero: [Option<bool>; 2],
}

/// A Matmult's place in its PSUM accumulation group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatmultFlags {
    /// KLR-era schema: `start_tensor_calc` (true: START, false: ACCUMULATE) and the optional
    /// `stop_tensor_calc`.
    Calc {
        /// First of its group.
        start: bool,
        /// Last of its group, if given.
        stop: Option<bool>,
    },
    /// neuronx-cc 2.24 schema: `accumulation_flag` bits (1 START, 2 STOP, 4 ACCUMULATE) and
    /// `psum_zero_region`, log2 of the 2 KiB banks a START clears.
    Record {
        /// The flag bits (0..=7).
        accumulation_flag: u8,
        /// log2 of the banks a START clears (0..=3).
        psum_zero_region: u8,
    },
}

impl MatmultFlags {
    /// START bit of `accumulation_flag`.
    pub const START: u8 = 1;
    /// STOP bit of `accumulation_flag`.
    pub const STOP: u8 = 2;
    /// ACCUMULATE bit of `accumulation_flag`.
    pub const ACCUMULATE: u8 = 4;

    /// The flag bits either schema means (`start_tensor_calc: false` is ACCUMULATE).
    pub fn bits(self) -> u8 {
        match self {
            MatmultFlags::Calc { start, stop } => {
                (if start { Self::START } else { Self::ACCUMULATE })
                    | (if stop == Some(true) { Self::STOP } else { 0 })
            }
            MatmultFlags::Record { accumulation_flag, .. } => accumulation_flag,
        }
    }

    /// How many 2 KiB PSUM banks a START clears (1 in the KLR-era schema).
    pub fn zero_banks(self) -> u32 {
        match self {
            MatmultFlags::Calc { .. } => 1,
            MatmultFlags::Record { psum_zero_region, .. } => 1 << psum_zero_region.min(31),
        }
    }
}

/// Activation (ScalarE).
#[derive(Clone, Debug, PartialEq)]
pub struct ActivationFields {
    /// The function.
    pub func: ActivationFunc,
    /// Input scale.
    pub scale: F32,
    /// Alpha parameter.
    pub alpha: F32,
    /// Accumulation, if any.
    pub acc: Option<EngineAccumulationType>,
    /// `is_activate2`: gen4's form `f((data op0 imm0) op1 imm1)` (AWS `activate2`).
    pub is_activate2: bool,
    /// activate2's first tensor-scalar op (`bypass` when absent).
    pub op0: AluOp,
    /// activate2's second tensor-scalar op (`bypass` when absent).
    pub op1: AluOp,
    /// activate2: `imm0 op0 data` instead of `data op0 imm0`.
    pub reverse0: bool,
    /// activate2: `imm1 op1 t` instead of `t op1 imm1`.
    pub reverse1: bool,
    /// The accumulator's fold (`add` when absent; activate2 also max, min, abs_max, abs_min).
    pub reduce_op: Option<AluOp>,
}

/// Exponential (VectorE, gen4): `exp(src − max_value)` with an optional sum into the engine's
/// accumulators (AWS `nki.isa.exponential`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExponentialFields {
    /// The accumulators' command (NKI `reduce_cmd`), if any.
    pub acc: Option<EngineAccumulationType>,
}

/// MatchReplace and MaxIndexAndMatchReplace (VectorE; AWS `nki.isa.nc_match_replace8`): the
/// value written over each matched element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchReplaceFields {
    /// `imm_value`: the replacement (fp32).
    pub imm_value: F32,
}

/// RangeSelect (VectorE, gen3+; AWS `nki.isa.range_select`): keep the elements whose index
/// (plus `range_start`) passes both comparisons against the bounds, fill the rest, and fold the
/// results into the engine's accumulator registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeSelectFields {
    /// The comparison against bound0 (`idx op0 bound0`).
    pub op0: AluOp,
    /// The comparison against bound1 (`idx op1 bound1`).
    pub op1: AluOp,
    /// The index of a row's first element (`range_start`, 0 when absent).
    pub range_start: i64,
    /// The value of an element outside the range (`fill_value`; FP32_MIN when absent).
    pub fill_value: F32,
    /// The accumulators' fold (`max` when absent).
    pub reduce_op: Option<AluOp>,
    /// The accumulators' command (absent: ZeroAccumulate, NKI's `reset_reduce` default).
    pub acc: Option<EngineAccumulationType>,
}

/// NonzeroWithCount (GpSimd, gen3+; AWS `nki.isa.nonzero_with_count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NonzeroFields {
    /// Added to every index written (`index_offset`, 0 when absent).
    pub index_offset: i32,
    /// The value after the last index (`padding_val`, −1 when absent).
    pub padding_val: i32,
}

/// Dropout (VectorE; AWS `nki.isa.dropout`): zero each element with a probability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropoutFields {
    /// Whether the probability operand drops or keeps (`threshold_type`; DropRate when absent).
    pub threshold_type: DropoutThresholdType,
}

/// RegisterAlu (73; KLR 7e15ca6 `RegisterAlu`): `dst = src op operand` on a 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterAluFields {
    /// The operation.
    pub op: AluOp,
    /// A 64-bit (register pair) operation (false when absent; the pairing is not pinned, so
    /// `true` does not run).
    pub is_64bit: bool,
}

/// UnconditionalBranch (79; KLR 7e15ca6): the block to continue at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchFields {
    /// The target block's name.
    pub target: String,
}

/// Call (84; KLR 7e15ca6 `Call`): runs another function of the program, then continues after
/// the call (docs/fidelity.md B14).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallFields {
    /// The called function's name.
    pub target: String,
    /// KLR's `table_id` (kept; no source says what it selects).
    pub table_id: Option<i64>,
}

/// CompareAndBranch (78; KLR 7e15ca6 `CompareAndBranch`): `ins[0] comp_op ins[1]` picks the
/// block to continue at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareBranchFields {
    /// The comparison.
    pub comp_op: BranchCompareOp,
    /// The block when it holds (`None`: the next block).
    pub on_true: Option<String>,
    /// The block when it does not (`None`: the next block).
    pub on_false: Option<String>,
}
