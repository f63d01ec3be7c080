//! The NKI name → opcode binding (seed 004 §2, CONFIRMED; contract §5; docs/isa.md "NKI
//! binding"). The names cross: `local_gather` lowers to INDIRECT_COPY 0xe7 ("maps to IndirectCopy
//! in NISA dialect", uint16 indices) and `nc_n_gather` to GATHER 0x68 (uint32 indices).

use super::words::Opcode;

/// The opcode an NKI gather name lowers to: `local_gather` → [`Opcode::IndirectCopy`] (0xe7),
/// `nc_n_gather` → [`Opcode::Gather`] (0x68). Also `dma_copy` / `dma_compute` → DMA_INDIRECT
/// 0xbb, which holds only for their `vector_offset` form (see [`nki_dma_opcode`]). Any other name
/// → `None`.
pub fn nki_opcode(name: &str) -> Option<Opcode> {
    match name {
        "local_gather" => Some(Opcode::IndirectCopy),
        "nc_n_gather" => Some(Opcode::Gather),
        "dma_copy" | "dma_compute" => Some(Opcode::DmaIndirect),
        _ => None,
    }
}

/// The indirection opcode of an NKI DMA call: `dma_copy` / `dma_compute` with a `vector_offset`
/// (the swdge gather / scatter form, nki-semantics "dma_copy") → DMA_INDIRECT 0xbb; without one
/// the call is not an indirection word (X32 ASSUMED: its direct form belongs to the DGE, issue #13)
/// → `None`.
pub fn nki_dma_opcode(name: &str, vector_offset: bool) -> Option<Opcode> {
    match name {
        "dma_copy" | "dma_compute" if vector_offset => Some(Opcode::DmaIndirect),
        _ => None,
    }
}

/// The index dtype NKI requires for a gather name (seed 004 §2: local_gather uint16, nc_n_gather
/// uint32).
pub fn nki_index_dtype(name: &str) -> Option<bir_ir::Dtype> {
    match name {
        "local_gather" => Some(bir_ir::Dtype::Uint16),
        "nc_n_gather" => Some(bir_ir::Dtype::Uint32),
        _ => None,
    }
}
