//! The structural and mode enums of BIR (re-facts §3), each with its reference ordinal and BIR
//! JSON spellings. Enums whose ordinals no source gives are numbered in documented order and
//! marked ASSUMED in docs/fidelity.md.

use crate::enum_macro::bir_enum;

bir_enum! {
    /// Which innermost dims a TensorReduce folds (re-facts §3, CERTAIN).
    pub enum AxisListType ("axis list") {
        /// X, the innermost free dim.
        X = 0 => ["X"],
        /// Y and X.
        Xy = 1 => ["XY"],
        /// Z, Y and X: every free dim.
        Xyz = 2 => ["XYZ"],
        /// W, Z, Y and X: the partition dim included.
        Xyzw = 3 => ["XYZW"],
        /// Everything, across partitions (cross-lane).
        Xyzwc = 4 => ["XYZWC"],
        /// W only: across partitions (cross-lane).
        C = 5 => ["C"],
    }
}

impl AxisListType {
    /// The dims this axis list folds, outermost first, by the dim-letter rule of
    /// [`AccessPattern::level_of`](crate::AccessPattern::level_of) (seed 000 §3.1; fidelity J28):
    /// X {X}; XY {Y, X}; XYZ {Z, Y, X}; XYZW and XYZWC {W, Z, Y, X}; C {W}. Only XYZW, C and
    /// XYZWC fold W, the partition dim. On a short AP a folded padded dim has size 1, so, for
    /// example, XY on a 2-level `[P, F]` AP folds the F elements of each partition.
    pub fn folds(self) -> &'static [IndirectDim] {
        use IndirectDim::{W, X, Y, Z};
        match self {
            AxisListType::X => &[X],
            AxisListType::Xy => &[Y, X],
            AxisListType::Xyz => &[Z, Y, X],
            AxisListType::Xyzw | AxisListType::Xyzwc => &[W, Z, Y, X],
            AxisListType::C => &[W],
        }
    }

    /// True when this axis list folds `dim`.
    pub fn folds_dim(self, dim: IndirectDim) -> bool {
        self.folds().contains(&dim)
    }

    /// True for the cross-partition (cross-lane) reductions C and XYZWC.
    pub fn is_cross_partition(self) -> bool {
        matches!(self, AxisListType::C | AxisListType::Xyzwc)
    }
}

bir_enum! {
    /// How an engine result combines with what the output already holds (re-facts §3, CERTAIN).
    /// JSON keys `acc`, `reduce_cmd` and `accumulator_cmd` all carry it.
    pub enum EngineAccumulationType ("accumulation type") {
        /// No accumulation.
        Idle = 0 => ["Idle"],
        /// Clear the accumulator.
        Zero = 1 => ["Zero"],
        /// `+=` into the output.
        Accumulate = 2 => ["Accumulate"],
        /// Start: initialise to zero, then accumulate.
        ZeroAccumulate = 3 => ["ZeroAccumulate"],
        /// `+=` into the output.
        AddAccumulate = 4 => ["AddAccumulate"],
        /// Start from a loaded initial value.
        LoadAccumulate = 5 => ["LoadAccumulate"],
    }
}

impl EngineAccumulationType {
    /// The ISA wire code; Accumulate (2) has none (re-facts §3, CONFIRMED).
    pub fn wire(self) -> Option<u8> {
        match self {
            Self::Idle => Some(0),
            Self::Zero => Some(1),
            Self::Accumulate => None,
            Self::ZeroAccumulate => Some(3),
            Self::AddAccumulate => Some(2),
            Self::LoadAccumulate => Some(4),
        }
    }
}

bir_enum! {
    /// The dormant reduce-command enum (no instruction uses it; re-facts §3).
    pub enum ReduceCmdType ("reduce command") {
        /// Idle.
        Idle = 0 => ["Idle"],
        /// Reset.
        Reset = 1 => ["Reset"],
        /// Reduce.
        Reduce = 2 => ["Reduce"],
        /// Reset then reduce.
        ResetReduce = 3 => ["ResetReduce"],
    }
}

bir_enum! {
    /// TensorScalarCache evaluation mode (seed 000 §4, re-facts §3).
    pub enum TscMode ("TensorScalarCache mode") {
        /// Write only the final folded value.
        Reduce = 0 => ["Reduce"],
        /// Write the running value at every element.
        Cumulative = 1 => ["Cumulative"],
        /// Write the running value at every element (scan).
        TensorScan = 2 => ["TensorScan"],
    }
}

bir_enum! {
    /// Pool window function (seed 000 §3.2). There is no Sum.
    pub enum PoolFunctionType ("pool function") {
        /// Max over the window, from −FLT_MAX.
        Max = 0 => ["Max"],
        /// Sum times 1/N.
        Avg = 1 => ["Avg", "Average"],
    }
}

impl PoolFunctionType {
    /// The wire byte is the ordinal plus one (re-facts §3, CONFIRMED).
    pub fn wire(self) -> u8 {
        self as u8 + 1
    }
}

bir_enum! {
    /// DMACopy mode (seed 000 §5.2). `Dynamic` is listed by the public schema but has no
    /// reference ordinal; 4 is ours (ASSUMED).
    pub enum CopyMode ("copy mode") {
        /// Plain AP→AP copy (or the HW-DGE vector-offset path).
        Copy = 0 => ["Copy"],
        /// Axis permutation per `transpose_op`.
        Transpose = 1 => ["Transpose"],
        /// N-input in-flight reduce.
        Cce = 2 => ["CCE"],
        /// Broadcast source partitions across the destination.
        Replicate = 3 => ["Replicate"],
        /// Dynamic (ordinal ASSUMED).
        Dynamic = 4 => ["Dynamic"],
    }
}

bir_enum! {
    /// Memset mode.
    pub enum MemsetMode ("memset mode") {
        /// Fill with `constant`.
        Const = 0 => ["Const"],
        /// Fill with random bits.
        Random = 1 => ["Random"],
    }
}

bir_enum! {
    /// What Dropout's probability means (KLR `DropoutThresholdType`).
    pub enum DropoutThresholdType ("dropout threshold type") {
        /// The probability of zeroing an element (AWS `nki.isa.dropout`'s `prob`).
        DropRate = 0 => ["DropRate", "drop_rate"],
        /// The probability of keeping an element.
        KeepRate = 1 => ["KeepRate", "keep_rate"],
    }
}

bir_enum! {
    /// Which descriptor engine serves a DMA. The simulator never reads it (re-facts §3).
    pub enum DgeType ("DGE type") {
        /// No DGE.
        None = 0 => ["None"],
        /// Software DGE.
        Swdge = 1 => ["SWDGE"],
        /// Hardware DGE.
        Hwdge = 2 => ["HWDGE"],
        /// Not yet assigned (the default).
        Unassigned = 3 => ["Unassigned"],
    }
}

bir_enum! {
    /// Where a memory location lives. Bit flags; the only enum whose JSON may be a number
    /// (re-facts §3, CERTAIN).
    pub enum MemoryType ("memory type") {
        /// Not yet placed.
        Unallocated = 1 => ["Unallocated"],
        /// A kernel input in DRAM.
        Input = 2 => ["Input"],
        /// A kernel output in DRAM.
        Output = 4 => ["Output"],
        /// Device DRAM (HBM).
        Dram = 8 => ["DRAM", "HBM"],
        /// State buffer (SBUF).
        Sb = 16 => ["SB", "SBUF"],
        /// The partial-sum buffer.
        Psum = 32 => ["PSUM"],
        /// RNG state.
        RngState = 64 => ["RNGSTATE"],
        /// A register.
        Reg = 128 => ["REG"],
    }
}

impl MemoryType {
    /// True for the partitioned on-chip spaces (SBUF and PSUM).
    pub fn is_partitioned(self) -> bool {
        matches!(self, MemoryType::Sb | MemoryType::Psum)
    }
}

bir_enum! {
    /// The AP dim letters W, Z, Y, X: the BIR indirect dim, and the letters reduce axes fold.
    /// As an indirect dim (a dynamic offset's `indirect_dim`, GenericIndirect `indirect_dims`)
    /// the ordinal is the AP level index on every AP (re-facts §3, CERTAIN:
    /// [`AccessPattern::indirect_level`](crate::AccessPattern::indirect_level)); as a reduce
    /// axis letter X is the innermost level and a short AP's middle letters are padded
    /// ([`AccessPattern::level_of`](crate::AccessPattern::level_of), seed 000 §3.1).
    pub enum IndirectDim ("indirect dim") {
        /// The partition dim: always level 0.
        W = 0 => ["W", "W0"],
        /// Indirect: level 1. Reduce: the third free dim from the inside, level `n − 3` of an
        /// `n ≥ 4`-level AP, padded on shorter APs.
        Z = 1 => ["Z", "Z1"],
        /// Indirect: level 2. Reduce: the second free dim from the inside, level `n − 2` of an
        /// `n ≥ 3`-level AP, padded on shorter APs.
        Y = 2 => ["Y", "Y2"],
        /// Indirect: level 3. Reduce: the innermost free dim, the last level of an `n ≥ 2`-level AP.
        X = 3 => ["X", "X3"],
    }
}

bir_enum! {
    /// The ISA/DGE `INDIRECT_DIM`, minor to major: the reverse of [`IndirectDim`] (re-facts §3).
    pub enum IsaIndirectDim ("ISA indirect dim") {
        /// Innermost.
        X = 0 => ["X0"],
        /// Y.
        Y = 1 => ["Y1"],
        /// Z.
        Z = 2 => ["Z2"],
        /// Partition.
        W = 3 => ["W3"],
    }
}

impl IndirectDim {
    /// The same axis in ISA numbering.
    pub fn to_isa(self) -> IsaIndirectDim {
        match self {
            IndirectDim::W => IsaIndirectDim::W,
            IndirectDim::Z => IsaIndirectDim::Z,
            IndirectDim::Y => IsaIndirectDim::Y,
            IndirectDim::X => IsaIndirectDim::X,
        }
    }
}

bir_enum! {
    /// The 14 DMA transpose codes. The name gives the destination axis order (re-facts §3).
    pub enum TransposeOps ("transpose op") {
        /// Identity.
        None = 0 => ["None"],
        /// WZXY.
        Wzxy = 1 => ["WZXY"],
        /// WXZY.
        Wxzy = 2 => ["WXZY"],
        /// WYXZ.
        Wyxz = 3 => ["WYXZ"],
        /// ZWYX.
        Zwyx = 4 => ["ZWYX"],
        /// ZYWX.
        Zywx = 5 => ["ZYWX"],
        /// ZYXW.
        Zyxw = 6 => ["ZYXW"],
        /// YXWZ.
        Yxwz = 7 => ["YXWZ"],
        /// YXZW.
        Yxzw = 8 => ["YXZW"],
        /// YWZX.
        Ywzx = 9 => ["YWZX"],
        /// XWZY.
        Xwzy = 10 => ["XWZY"],
        /// XZYW.
        Xzyw = 11 => ["XZYW"],
        /// XYZW (full reversal).
        Xyzw = 12 => ["XYZW"],
        /// XYWZ.
        Xywz = 13 => ["XYWZ"],
    }
}

impl TransposeOps {
    /// For each destination slot `d` (W, Z, Y, X), the source axis index (W=0, Z=1, Y=2, X=3)
    /// it takes: the source axis whose letter is `name[d]` (re-facts §3, CERTAIN).
    pub fn permutation(self) -> [usize; 4] {
        if self == TransposeOps::None {
            return [0, 1, 2, 3];
        }
        let mut perm = [0; 4];
        for (slot, letter) in perm.iter_mut().zip(self.name().bytes()) {
            *slot = match letter {
                b'W' => 0,
                b'Z' => 1,
                b'Y' => 2,
                _ => 3,
            };
        }
        perm
    }
}

bir_enum! {
    /// The engine an instruction is queued on (re-facts §3, CERTAIN).
    pub enum EngineType ("engine") {
        /// Not yet assigned.
        Unassigned = 0 => ["Unassigned"],
        /// GpSimd.
        Pool = 1 => ["Pool", "GPSIMD", "GpSimd"],
        /// ScalarE.
        Activation = 2 => ["Activation", "Scalar", "ACT"],
        /// TensorE.
        Pe = 3 => ["PE", "Tensor"],
        /// A DMA queue.
        Dma = 4 => ["DMA", "SyncDMA"],
        /// VectorE.
        Dve = 5 => ["DVE", "Vector"],
        /// The sync engine.
        Sp = 6 => ["SP", "Sync"],
        /// All engines.
        All = 7 => ["ALL"],
    }
}

bir_enum! {
    /// Matmul performance mode (ordinals re-facts §3, CERTAIN; their simulator meaning conflicts).
    pub enum MatmultPerfMode ("matmul perf mode") {
        /// Normal.
        None = 0 => ["None"],
        /// Double row.
        DoubleRow = 1 => ["DoubleRow"],
        /// Double column.
        DoubleColumn = 2 => ["DoubleColumn"],
        /// Double pixel.
        DoublePixel = 3 => ["DoublePixel"],
        /// Double row, software interleaved.
        DoubleRowSwInterleave = 4 => ["DoubleRowSwInterleave"],
    }
}

bir_enum! {
    /// The memory-side reduce of `cast_copy_or_accumulate` (re-facts §8, CONFIRMED).
    pub enum MemoryReductionOp ("memory reduction op") {
        /// Overwrite.
        Copy = 0 => ["copy"],
        /// Add.
        Add = 1 => ["add"],
        /// Min (unreachable through the reference's producers).
        Min = 2 => ["min"],
        /// Max (unreachable through the reference's producers).
        Max = 3 => ["max"],
    }
}

bir_enum! {
    /// ScalarE activation functions by their BIR names, with the reference's ordinals (re-facts
    /// enums, engines.md §2.3: CONFIRMED). Names not listed (KLR's Dsqrt, Ln_prime, MemsetZero,
    /// newer ones) load as [`ActivationFunc::Other`], kept verbatim.
    pub enum ActivationFunctionType ("activation function") {
        /// x.
        Identity = 0 => ["Identity"],
        /// x².
        Square = 1 => ["Square"],
        /// ReLU.
        Relu = 2 => ["Relu"],
        /// Leaky ReLU (slope 0.01).
        Lrelu = 3 => ["Lrelu"],
        /// Parametric ReLU (slope `alpha`).
        Prelu = 4 => ["Prelu"],
        /// Logistic sigmoid.
        Sigmoid = 5 => ["Sigmoid"],
        /// tanh.
        Tanh = 6 => ["Tanh"],
        /// exp.
        Exp = 7 => ["Exp"],
        /// softplus.
        Softplus = 8 => ["Softplus"],
        /// sqrt.
        Sqrt = 9 => ["Sqrt"],
        /// 1/sqrt.
        Rsqrt = 10 => ["Rsqrt"],
        /// Natural log.
        Ln = 11 => ["Ln"],
        /// erf.
        Erf = 12 => ["Erf"],
        /// sin.
        Sin = 13 => ["Sin"],
        /// arctan.
        Arctan = 14 => ["Arctan"],
        /// sign.
        Sign = 15 => ["Sign"],
        /// GELU (erf form).
        Gelu = 16 => ["Gelu"],
        /// Mish.
        Mish = 17 => ["Mish"],
        /// GELU, tanh approximation.
        GeluApprxTanh = 18 => ["Gelu_apprx_tanh"],
        /// GELU, sigmoid approximation.
        GeluApprxSigmoid = 19 => ["Gelu_apprx_sigmoid"],
        /// Derivative of the sigmoid-approximated GELU.
        DerivativeGeluApprxSigmoid = 20 => ["Derivative_Gelu_apprx_sigmoid"],
        /// Derivative of GELU.
        DerivativeGelu = 21 => ["Derivative_Gelu"],
        /// Derivative of erf.
        DerivativeErf = 22 => ["Derivative_Erf"],
        /// x (a copy).
        Copy = 23 => ["Copy"],
        /// |x|.
        Abs = 24 => ["Abs"],
        /// 1/x.
        Reciprocal = 25 => ["Reciprocal"],
        /// 1/sqrt(|x|).
        AbsReciprocalSqrt = 26 => ["Abs_reciprocal_sqrt"],
        /// SiLU.
        Silu = 27 => ["Silu"],
        /// Derivative of SiLU.
        DerivativeSilu = 28 => ["Derivative_silu"],
        /// Is-finite (the reference faults on it).
        IsFinite = 29 => ["Is_finite"],
        /// Unknown (the reference faults on it).
        Unknown = 30 => ["Unknown"],
    }
}

/// An activation function as written: a known one, or a name we keep verbatim so real dumps
/// with newer functions still load.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ActivationFunc {
    /// A function from the public list.
    Known(ActivationFunctionType),
    /// Any other name, kept as written.
    Other(String),
}

impl ActivationFunc {
    /// The name as written in BIR JSON.
    pub fn name(&self) -> &str {
        match self {
            ActivationFunc::Known(f) => f.name(),
            ActivationFunc::Other(s) => s,
        }
    }
}

bir_enum! {
    /// The shape of a tensor's role in the kernel (an allocation's `kind`). The public schema
    /// lists names only; ordinals are list order (ASSUMED).
    pub enum TensorKind ("tensor kind") {
        /// External input.
        ExternalInput = 0 => ["ExternalInput"],
        /// External input parameter (weights).
        ExternalInputParameter = 1 => ["ExternalInputParameter"],
        /// Input.
        Input = 2 => ["Input"],
        /// External output.
        ExternalOutput = 3 => ["ExternalOutput"],
        /// External output parameter.
        ExternalOutputParameter = 4 => ["ExternalOutputParameter"],
        /// Output.
        Output = 5 => ["Output"],
        /// A constant.
        Const = 6 => ["Const"],
        /// Kernel-internal.
        Internal = 7 => ["Internal"],
        /// A pointer.
        Pointer = 8 => ["Pointer"],
        /// Internal interface.
        InternalInterface = 9 => ["InternalInterface"],
    }
}

impl TensorKind {
    /// True for the kinds a run produces (`--out-dir`).
    pub fn is_output(self) -> bool {
        matches!(self, TensorKind::ExternalOutput | TensorKind::ExternalOutputParameter | TensorKind::Output)
    }
}

bir_enum! {
    /// Target NeuronCore generation (`arch`). Ordinals are the generation number (ASSUMED).
    pub enum Arch ("arch") {
        /// NeuronCore-v2 (Trn1/Inf2).
        Gen2 = 2 => ["gen2"],
        /// NeuronCore-v3 (Trn2).
        Gen3 = 3 => ["gen3"],
        /// NeuronCore-v4 (Trn3).
        Gen4 = 4 => ["gen4"],
    }
}

/// SBUF and PSUM geometry (bir-json.md "Top level", DOCUMENTED).
pub const NUM_PARTITIONS: u64 = 128;
/// PSUM bytes per partition: 8 banks of 2 KiB.
pub const PSUM_BYTES_PER_PARTITION: u64 = 16 * 1024;

impl Arch {
    /// SBUF bytes per partition: 192 KiB (gen2), 224 KiB (gen3), 256 KiB (gen4).
    pub fn sbuf_bytes_per_partition(self) -> u64 {
        match self {
            Arch::Gen2 => 192 * 1024,
            Arch::Gen3 => 224 * 1024,
            Arch::Gen4 => 256 * 1024,
        }
    }
}

bir_enum! {
    /// CompareAndBranch's comparison (KLR 7e15ca6 `BranchCompareOp`): `ins[0] op ins[1]`, the
    /// right operand an immediate (`…IMM`) or a register (`…REG`).
    pub enum BranchCompareOp ("branch compare op") {
        /// `==` an immediate.
        IsEqImm = 0 => ["IS_EQIMM"],
        /// `==` a register.
        IsEqReg = 1 => ["IS_EQREG"],
        /// `>=` an immediate.
        IsGeImm = 2 => ["IS_GEIMM"],
        /// `>=` a register.
        IsGeReg = 3 => ["IS_GEREG"],
        /// `>` an immediate.
        IsGtImm = 4 => ["IS_GTIMM"],
        /// `>` a register.
        IsGtReg = 5 => ["IS_GTREG"],
        /// `<=` an immediate.
        IsLeImm = 6 => ["IS_LEIMM"],
        /// `<=` a register.
        IsLeReg = 7 => ["IS_LEREG"],
        /// `<` an immediate.
        IsLtImm = 8 => ["IS_LTIMM"],
        /// `<` a register.
        IsLtReg = 9 => ["IS_LTREG"],
        /// `!=` an immediate.
        IsNeImm = 10 => ["IS_NEIMM"],
        /// `!=` a register.
        IsNeReg = 11 => ["IS_NEREG"],
    }
}

impl BranchCompareOp {
    /// The right operand is a register (else an immediate).
    pub fn against_register(self) -> bool {
        matches!(
            self,
            Self::IsEqReg | Self::IsGeReg | Self::IsGtReg | Self::IsLeReg | Self::IsLtReg | Self::IsNeReg
        )
    }

    /// `a op b` on values already read at the left operand's width and signedness.
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Self::IsEqImm | Self::IsEqReg => a == b,
            Self::IsNeImm | Self::IsNeReg => a != b,
            Self::IsGeImm | Self::IsGeReg => a >= b,
            Self::IsGtImm | Self::IsGtReg => a > b,
            Self::IsLeImm | Self::IsLeReg => a <= b,
            Self::IsLtImm | Self::IsLtReg => a < b,
        }
    }
}
