//! The operand structs of the indirection opcodes (seed 004 §3a–3d; re-facts §8 "Device 64-byte
//! words"; contract docs/isa.md "Word layouts"), their opcodes and the generations whose
//! validity rules differ (seed 004 §1).
//!
//! The five wire structs name every byte: a byte no source names is an `unnamed_NN` field (NN =
//! its offset) kept raw, so encoding a decoded word gives back the same 64 bytes. DMA_DIRECT2D
//! and GATHER_XPOSE have typed fields only: no source gives their offsets.

use super::parts::{
    Addr4, Addr8, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs, DmaDim, DmaIndirectFlags, Header,
    IndexMissBehavior, IndirectDim, IsaDtype, MemPattern4D, Tensor1D, Tensor2D, Tensor4D, isa_enum,
};

isa_enum! {
    /// The `NEURON_ISA_TPB_OPCODE` bytes of the indirection family (seed 004 §1, identical in all
    /// four generations).
    pub enum Opcode {
        /// 0x67: fills the Pool_Buffer (a birsim form, X11).
        PoolBufferLoad = 0x67 => "POOL_BUFFER_LOAD",
        /// 0x68: S4D4_GT.
        Gather = 0x68 => "GATHER",
        /// 0x79: the raw SEQ-side EMBEDDING_UPDATE; decodes as PSEUDO_EMBEDDING_UPDATE.
        EmbeddingUpdate = 0x79 => "EMBEDDING_UPDATE",
        /// 0xb8: DMA_DIRECT2D (no wire layout).
        DmaMemcpy = 0xb8 => "DMA_MEMCPY",
        /// 0xbb: DMA_INDIRECT1D.
        DmaIndirect = 0xbb => "DMA_INDIRECT",
        /// 0xca: PSEUDO_EMBEDDING_UPDATE.
        PseudoEmbeddingUpdate = 0xca => "PSEUDO_EMBEDDING_UPDATE",
        /// 0xe7: S4D4_IC.
        IndirectCopy = 0xe7 => "INDIRECT_COPY",
        /// 0xf1: GATHER_XPOSE (no wire layout).
        GatherXpose = 0xf1 => "GATHER_XPOSE",
    }
}

/// A device generation (seed 004 §1: sunda NC-v2, cayman NC-v3, mariana NC-v4, maverick NC-v5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// NC-v2, sunda.
    V2,
    /// NC-v3, cayman.
    V3,
    /// NC-v4, mariana.
    V4,
    /// NC-v5, maverick.
    V5,
}

impl Generation {
    /// Every generation, oldest first.
    pub const ALL: [Generation; 4] = [Generation::V2, Generation::V3, Generation::V4, Generation::V5];

    /// PSUM bytes per partition, every generation (16 KiB; re-facts / bir-json.md).
    pub const PSUM_PARTITION_BYTES: u32 = 16 * 1024;

    /// SBUF bytes per partition: 192 / 224 / 256 KiB for v2 / v3 / v4 (bir-json.md "Top level",
    /// DOCUMENTED) and 256 KiB for v5 (X12 ASSUMED).
    pub const fn sbuf_partition_bytes(self) -> u32 {
        match self {
            Generation::V2 => 192 * 1024,
            Generation::V3 => 224 * 1024,
            Generation::V4 | Generation::V5 => 256 * 1024,
        }
    }

    /// PSUM bytes per partition.
    pub const fn psum_partition_bytes(self) -> u32 {
        Generation::PSUM_PARTITION_BYTES
    }

    /// `v2` … `v5`.
    pub const fn name(self) -> &'static str {
        match self {
            Generation::V2 => "v2",
            Generation::V3 => "v3",
            Generation::V4 => "v4",
            Generation::V5 => "v5",
        }
    }

    /// The code name: sunda, cayman, mariana, maverick.
    pub const fn code_name(self) -> &'static str {
        match self {
            Generation::V2 => "sunda",
            Generation::V3 => "cayman",
            Generation::V4 => "mariana",
            Generation::V5 => "maverick",
        }
    }

    /// The generation spelled `v2`..`v5` or by its code name.
    pub fn from_name(s: &str) -> Option<Generation> {
        Generation::ALL.into_iter().find(|g| g.name() == s || g.code_name() == s)
    }
}

impl std::fmt::Display for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// GATHER 0x68, `NEURON_ISA_TPB_S4D4_GT_STRUCT` (seed 004 §3a, §7a; re-facts §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct S4d4Gt {
    /// +0.
    pub header: Header,
    /// +4..+11, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub events: [u8; 8],
    /// +12: the INDEX tensor (20 bytes).
    pub src: Tensor4D,
    /// +32: the index width (valid UINT8, UINT16, UINT32).
    pub in_dtype: IsaDtype,
    /// +33: the gathered element dtype (must equal the Pool_Buffer's at run time).
    pub out_dtype: IsaDtype,
    /// +34: channels (1..=128).
    pub num_active_channels: u8,
    /// +35, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_35: [u8; 1],
    /// +36.
    pub index_miss_behavior: IndexMissBehavior,
    /// +37: 0 or 1 (else a validator violation).
    pub free_pool_buffer: u8,
    /// +38..+39, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_38: [u8; 2],
    /// +40: the miss fill (its low `size(out_dtype)` bytes, X17).
    pub immediate: u32,
    /// +44 (20 bytes).
    pub dst: Tensor4D,
}

/// INDIRECT_COPY 0xe7, `NEURON_ISA_TPB_S4D4_IC_STRUCT` (seed 004 §3b, §5, §7b; re-facts §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct S4d4Ic {
    /// +0.
    pub header: Header,
    /// +4..+11, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub events: [u8; 8],
    /// +12: MEM_PATTERN4D (the indirect form is the only valid one).
    pub src: MemPattern4D,
    /// +32.
    pub in_dtype: IsaDtype,
    /// +33 (must equal `in_dtype`).
    pub out_dtype: IsaDtype,
    /// +34: a multiple of 16, 16..=128.
    pub num_active_channels: u8,
    /// +35: ∈ {1, 2, 4, 8, 16, 32}.
    pub src_num_elem_per_idx: u8,
    /// +36: must be 0 (scatter is not implemented).
    pub dst_num_elem_per_idx: u8,
    /// +37, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_37: [u8; 1],
    /// +38: elements per partition of the source buffer (X19).
    pub src_buffer_size: u16,
    /// +40: must be 0.
    pub dst_buffer_size: u16,
    /// +42..+43, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_42: [u8; 2],
    /// +44: MEM_PATTERN4D (the tensor form is required).
    pub dst: MemPattern4D,
}

/// DMA_INDIRECT 0xbb, `NEURON_ISA_TPB_DMA_INDIRECT1D_STRUCT` (seed 004 §3c, §7c; offsets
/// CONFIRMED by re-facts §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct DmaIndirect1d {
    /// +0.
    pub header: Header,
    /// +4..+11, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub events: [u8; 8],
    /// +12.
    pub semaphore: u8,
    /// +13.
    pub sem_increment: u8,
    /// +14: must be 128.
    pub idx_num_active_channels: u8,
    /// +15.
    pub flags: DmaIndirectFlags,
    /// +16.
    pub src_start_addr: Addr8,
    /// +24.
    pub src_step_elem: i32,
    /// +28.
    pub src_num_elem: u16,
    /// +30: bytes moved per source element.
    pub src_elem_size: u16,
    /// +32.
    pub dst_start_addr: Addr8,
    /// +40.
    pub dst_step_elem: i32,
    /// +44.
    pub dst_num_elem: u16,
    /// +46.
    pub dst_elem_size: u16,
    /// +48: the gather indices (SBUF partition 0, or a register marker).
    pub src_idx_start_addr: Addr4,
    /// +52: the scatter indices.
    pub dst_idx_start_addr: Addr4,
    /// +56.
    pub in_dtype: IsaDtype,
    /// +57.
    pub out_dtype: IsaDtype,
    /// +58.
    pub src_idx_bound_reg: BoundCheckReg,
    /// +59.
    pub dst_idx_bound_reg: BoundCheckReg,
    /// +60.
    pub compute_op: DgeComputeOp,
    /// +61.
    pub dma_configs: DmaConfigs,
    /// +62..+63, `reserved` (raw).
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub reserved_62: [u8; 2],
}

/// PSEUDO_EMBEDDING_UPDATE 0xca (raw SEQ opcode 0x79 decodes to it too; `header.opcode` keeps
/// which) — seed 004 §3d, §7d; re-facts §8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct PseudoEmbeddingUpdate {
    /// +0.
    pub header: Header,
    /// +4..+11, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub events: [u8; 8],
    /// +12.
    pub data_dtype: IsaDtype,
    /// +13.
    pub cce_op: CceOp,
    /// +14..+15, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_14: [u8; 2],
    /// +16: the row indices (8 bytes).
    pub embed_index_in: Tensor1D,
    /// +24: the data, dim 0 = entry element, dim 1 = sequence position (12 bytes).
    pub embed_data_in: Tensor2D,
    /// +36: descriptor scratch, no functional effect (X9; 8 bytes).
    pub desc: Tensor1D,
    /// +44: the table's DRAM byte address (X10).
    pub embedding_table_base_addr: u32,
    /// +48.
    pub embed_entry_num_elements: u16,
    /// +50: the stride's low 16 bits.
    pub embed_entry_stride_bytes_lo: u16,
    /// +52.
    pub sequence_length: u32,
    /// +56: indices ≥ this are skipped.
    pub embedding_table_num_entries: u32,
    /// +60: the stride's high 16 bits.
    pub embed_entry_stride_bytes_hi: u16,
    /// +62..+63, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_62: [u8; 2],
}

impl PseudoEmbeddingUpdate {
    /// The row stride in bytes: `lo | hi << 16` (re-facts §8 "entry_stride_bytes +50 (high part
    /// +60)").
    pub const fn embed_entry_stride_bytes(&self) -> u32 {
        self.embed_entry_stride_bytes_lo as u32 | (self.embed_entry_stride_bytes_hi as u32) << 16
    }
}

/// POOL_BUFFER_LOAD 0x67 in birsim's own form (X11 ASSUMED: no source gives its struct; seed 004
/// §7a only says it fills ≤ 512 elements per channel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct PoolBufferLoad {
    /// +0.
    pub header: Header,
    /// +4..+11, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub events: [u8; 8],
    /// +12: the elements each channel loads (≤ 512 per channel).
    pub src: Tensor4D,
    /// +32.
    pub dtype: IsaDtype,
    /// +33, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_33: [u8; 1],
    /// +34.
    pub num_active_channels: u8,
    /// +35, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_35: [u8; 1],
    /// +36: the hit-test mask.
    pub mask: u16,
    /// +38..+39, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_38: [u8; 2],
    /// +40: the window's start index.
    pub start_index: u32,
    /// +44..+63, raw.
    #[cfg_attr(feature = "serde", serde(with = "super::json::hex"))]
    pub unnamed_44: [u8; 20],
}

/// DMA_DIRECT2D (DMA_MEMCPY 0xb8), typed fields only: no source gives its offsets (seed 004 §1;
/// re-facts §8 DGE kind DIRECT2D). Consumed by the DGE issue #13.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct DmaDirect2d {
    /// The source start.
    pub src_start_addr: Addr8,
    /// Source dims, dim 0 inner.
    pub src_dims: [DmaDim; 2],
    /// Bytes per source element.
    pub src_elem_size: u16,
    /// The destination start.
    pub dst_start_addr: Addr8,
    /// Destination dims, dim 0 inner.
    pub dst_dims: [DmaDim; 2],
    /// Bytes per destination element.
    pub dst_elem_size: u16,
    /// Source dtype.
    pub in_dtype: IsaDtype,
    /// Destination dtype.
    pub out_dtype: IsaDtype,
    /// What the DMA does with the destination.
    pub compute_op: DgeComputeOp,
}

/// GATHER_XPOSE (0xf1), typed fields only (re-facts §8 "GATHER_XPOSE": 2-byte dtypes, gather_dim
/// Y, dst 32-B aligned, src `num_elem[Y] % 16 == 0`, dst `num_elem[0]` == src `num_elem[Y]`, implicit
/// dst dim-0 step sizeof(dtype), 16×128 crossbar tiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct GatherXpose {
    /// The element dtype.
    pub dtype: IsaDtype,
    /// The source start.
    pub src_start_addr: Addr8,
    /// Source dims, dim 0 = X.
    pub src_dims: [DmaDim; 4],
    /// The destination start.
    pub dst_start_addr: Addr8,
    /// Destination dims, dim 0 = X.
    pub dst_dims: [DmaDim; 4],
    /// The gathered dim (must be Y).
    pub gather_dim: IndirectDim,
    /// The index tensor's start.
    pub index_addr: Addr4,
    /// Number of indices.
    pub index_count: u32,
}

/// A decoded 64-byte word: one of the five structs with a wire layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Word {
    /// 0x67.
    PoolBufferLoad(PoolBufferLoad),
    /// 0x68.
    Gather(S4d4Gt),
    /// 0xe7.
    IndirectCopy(S4d4Ic),
    /// 0xbb.
    DmaIndirect(DmaIndirect1d),
    /// 0xca or 0x79 (`header.opcode` says which).
    EmbeddingUpdate(PseudoEmbeddingUpdate),
}

impl Word {
    /// The header.
    pub const fn header(&self) -> &Header {
        match self {
            Word::PoolBufferLoad(w) => &w.header,
            Word::Gather(w) => &w.header,
            Word::IndirectCopy(w) => &w.header,
            Word::DmaIndirect(w) => &w.header,
            Word::EmbeddingUpdate(w) => &w.header,
        }
    }

    /// The struct's opcode (for EMBEDDING_UPDATE, the one its header carries).
    pub fn opcode(&self) -> Option<Opcode> {
        Opcode::from_byte(self.header().opcode)
    }

    /// The header struct name, e.g. `S4D4_GT`.
    pub const fn struct_name(&self) -> &'static str {
        match self {
            Word::PoolBufferLoad(_) => "POOL_BUFFER_LOAD",
            Word::Gather(_) => "S4D4_GT",
            Word::IndirectCopy(_) => "S4D4_IC",
            Word::DmaIndirect(_) => "DMA_INDIRECT1D",
            Word::EmbeddingUpdate(_) => "PSEUDO_EMBEDDING_UPDATE",
        }
    }
}
