//! The ISA layer (issue 12, seed 004): the machine state and datapaths (temporary module file
//! of branch isa-run until the typed structs of branch isa-words are merged).

pub mod machine;

/// A NeuronCore generation (contract §2; temporary until isa-words' type lands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gen {
    /// v2 (sunda), 192 KiB SBUF per partition.
    V2,
    /// v3 (cayman), 224 KiB.
    V3,
    /// v4 (mariana), 256 KiB.
    V4,
    /// v5 (maverick), 256 KiB.
    V5,
}

impl Gen {
    /// SBUF bytes per partition.
    pub fn sbuf_bytes(self) -> usize {
        match self {
            Gen::V2 => 192 << 10,
            Gen::V3 => 224 << 10,
            Gen::V4 | Gen::V5 => 256 << 10,
        }
    }
}
