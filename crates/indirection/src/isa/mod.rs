//! The ISA words of the GpSimd indirection engine (seed 004 §1–3, §8; re-facts §8 "Device
//! 64-byte words"; the contract is docs/isa.md): the typed 64-byte operand structs of GATHER
//! 0x68, INDIRECT_COPY 0xe7, DMA_INDIRECT 0xbb, PSEUDO_EMBEDDING_UPDATE 0xca (raw 0x79) and
//! birsim's POOL_BUFFER_LOAD 0x67 form, plus the typed-only DMA_DIRECT2D and GATHER_XPOSE.
//!
//! - [`parts`]: header, ADDR4 / ADDR8 and their markers, TENSORnD, MEM_PATTERN4D, the ISA dtype
//!   byte, the flag bytes and enums.
//! - [`words`]: the structs, [`Word`], [`Opcode`] and [`Generation`].
//! - [`codec`]: `decode(&[u8; 64])` / `encode` per struct and for [`Word`].
//! - [`validate`](mod@validate): [`validate()`], every violation of contract §2 per generation.
//! - `json` (feature `serde`): the WORDS.json form.
//! - [`nki`]: [`nki_opcode`], the NKI name → opcode binding.
//! - [`machine`]: the machine state (SBUF, PSUM, DRAM regions, registers, Pool_Buffer) and the
//!   datapaths that run words on it (`Machine::run_word`, contract §3–4).

pub mod codec;
#[cfg(feature = "serde")]
pub mod json;
pub mod machine;
pub mod nki;
pub mod parts;
pub mod validate;
pub mod words;

pub use nki::{nki_dma_opcode, nki_index_dtype, nki_opcode};
pub use validate::{Validate, Violation, rule, validate};

pub use parts::{
    Addr4, Addr4Marker, Addr8, Addr8Marker, Addr8Target, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs,
    DmaDim, DmaIndirectFlags, Header, IndexMissBehavior, Indirect20B, IndirectDim, IndirectMode, IsaDtype,
    MemPattern4D, Space, TargetError, Tensor1D, Tensor2D, Tensor4D, TensorNd,
};
pub use words::{
    DmaDirect2d, DmaIndirect1d, GatherXpose, Generation, Opcode, PoolBufferLoad, PseudoEmbeddingUpdate,
    S4d4Gt, S4d4Ic, Word,
};

/// Why 64 bytes are not a word of the expected kind. Every variant names the field (a path such
/// as `src.start_addr.marker`) where that applies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IsaError {
    /// The opcode byte is not this struct's.
    #[error("opcode byte 0x{found:02x} is not {expected}'s")]
    WrongOpcode {
        /// The struct decoded.
        expected: &'static str,
        /// The byte at +0.
        found: u8,
    },
    /// No known struct has this opcode byte.
    #[error("opcode byte 0x{opcode:02x} is not an indirection opcode (0x67, 0x68, 0x79, 0xbb, 0xca, 0xe7)")]
    UnknownOpcode {
        /// The byte at +0.
        opcode: u8,
    },
    /// An indirection opcode whose struct has no known byte layout (DMA_MEMCPY 0xb8,
    /// GATHER_XPOSE 0xf1).
    #[error("opcode 0x{opcode:02x} has no wire layout in the sources (typed fields only)")]
    NoWireLayout {
        /// The byte at +0.
        opcode: u8,
    },
    /// An enum field holds a value outside its enum.
    #[error("{field} = 0x{value:02x} is not a valid value ({expected})")]
    BadEnum {
        /// The field path.
        field: &'static str,
        /// The bits found.
        value: u32,
        /// The accepted values.
        expected: &'static str,
    },
}
