//! The run's semantic switches and limits ([`Options`]), beside the numerics profile: each names
//! a docs/fidelity.md choice or a resource bound.

use super::Parallelism;

/// Semantic switches the sources leave open, beside the numerics [`numerics::Profile`]
/// (docs/fidelity.md names each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// TensorScalarCache: a set `reverse0` or `reverse1` runs the scan from the last element to
    /// the first (seed 000 §4 prose, ASSUMED S14). When false the flags only swap operands (the
    /// seed's pseudocode).
    pub reverse_flags_reverse_scan: bool,
    /// Threads per kernel and the smallest chunk worth one; results are identical for every
    /// setting.
    pub parallelism: Parallelism,
    /// The most instructions a run executes (loop iterations counted) before it stops with a
    /// `budget` fault; validation refuses programs that statically exceed its own budget.
    pub max_instructions: u64,
    /// The most bytes one operand's buffers may take (default: validation's 4 GiB memory cap);
    /// an instruction that would need more stops with a `budget` fault before allocating.
    pub memory_cap: u64,
    /// What an indirect instruction does with an index that is not −1 but lands outside its
    /// table (docs/fidelity.md I2): fault (default) or skip it like −1.
    pub indirect_oob: indirection::Oob,
    /// What a DMABlock met in the instruction stream does (docs/fidelity.md G4): skip it (a
    /// definition; default) or run its descriptors once there. Fired blocks run either way.
    pub dma_block_in_stream: ::dge::swdge::BlockInStream,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reverse_flags_reverse_scan: true,
            parallelism: Parallelism::default(),
            max_instructions: bir_ir::ValidateOptions::default().max_instructions,
            memory_cap: bir_ir::ValidateOptions::default().memory_cap_bytes,
            indirect_oob: indirection::Oob::Fault,
            dma_block_in_stream: ::dge::swdge::BlockInStream::Skip,
        }
    }
}
