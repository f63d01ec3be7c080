//! Typed DGE descriptors and the emission records (seed 004 §6, re-facts §8 "DGE descriptor
//! generation"; docs/dge.md).
//!
//! A [`Descriptor`] moves `Π num` elements of `elem_size` bytes: element `(i0..i4)` (dim 0
//! innermost) from `src + Σ i_d·src_step_d` to `dst + Σ i_d·dst_step_d`, byte addresses in a
//! 64-bit address space (for BIR programs the G9 space of [`crate::address`]), steps signed bytes.
//! `compute_op` NONE copies bytes; the others combine `dst = dst op src` per value of `dtype`:
//! in fp32 for a float dtype, at the width for an integer one (crate::execute, G41).

use bir_ir::Dtype;

/// The most dims a descriptor carries (the DGE's 5-D walk, seed 004 §6 "num_elem=[%u×5]").
pub const MAX_DIMS: usize = 5;

/// The DGE descriptor kinds (re-facts §8: kind 0 DIRECT2D, 1 INDIRECT1D, 2 TRANSPOSE,
/// 3 GATHER_TRANSPOSE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DgeKind {
    /// A direct (affine on both sides) copy.
    Direct2D = 0,
    /// One index of an indirect gather/scatter (address += index·step).
    Indirect1D = 1,
    /// A permuting copy (the source steps carry the permutation).
    Transpose = 2,
    /// One gathered row segment of a gather-transpose tile.
    GatherTranspose = 3,
}

impl DgeKind {
    /// The re-facts spelling (`DIRECT2D`, `INDIRECT1D`, `TRANSPOSE`, `GATHER_TRANSPOSE`).
    pub fn name(self) -> &'static str {
        match self {
            DgeKind::Direct2D => "DIRECT2D",
            DgeKind::Indirect1D => "INDIRECT1D",
            DgeKind::Transpose => "TRANSPOSE",
            DgeKind::GatherTranspose => "GATHER_TRANSPOSE",
        }
    }
}

/// `DGE_COMPUTE_OP` (seed 004 §3c: NONE=0 copy, ADD=1, MULTIPLY=2, MAX=3, MIN=4): the ISA
/// layer's enum (crates/indirection `isa`), so a DMA_INDIRECT1D word's op is a descriptor's.
pub use indirection::isa::DgeComputeOp;

/// The name the rest of this crate uses for [`DgeComputeOp`].
pub type ComputeOp = DgeComputeOp;

/// One `[num, step]` level of a descriptor, steps in bytes for both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Elements along this dim (≥ 1).
    pub num: u32,
    /// Source bytes between consecutive indices (signed).
    pub src_step: i64,
    /// Destination bytes between consecutive indices (signed).
    pub dst_step: i64,
}

impl Dim {
    /// A dim.
    pub const fn new(num: u32, src_step: i64, dst_step: i64) -> Dim {
        Dim { num, src_step, dst_step }
    }

    /// The filler of unused dims.
    const UNIT: Dim = Dim { num: 1, src_step: 0, dst_step: 0 };
}

/// A descriptor with more dims than [`MAX_DIMS`] or a zero count.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    /// More than [`MAX_DIMS`] dims.
    #[error("a descriptor has at most {MAX_DIMS} dims; {0} given")]
    TooManyDims(usize),
    /// A dim with `num = 0`.
    #[error("descriptor dim {0} has num 0")]
    ZeroNum(usize),
    /// `elem_size = 0`.
    #[error("a descriptor's elem_size must be at least 1 byte")]
    ZeroElem,
}

/// One DGE descriptor (contract §3; seed 004 §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Descriptor {
    /// The kind.
    pub kind: DgeKind,
    /// Source byte address of element 0.
    pub src: u64,
    /// Destination byte address of element 0.
    pub dst: u64,
    /// Bytes of one element (a fused contiguous run).
    pub elem_size: u32,
    /// The combine of each element into the destination.
    pub compute_op: DgeComputeOp,
    /// The values' dtype (what compute ops decode; informational for NONE).
    pub dtype: Dtype,
    rank: u8,
    dims: [Dim; MAX_DIMS],
}

impl Descriptor {
    /// A descriptor; `dims` innermost first, at most [`MAX_DIMS`], every `num ≥ 1`. No dims =
    /// one element.
    pub fn new(
        kind: DgeKind,
        src: u64,
        dst: u64,
        elem_size: u32,
        dims: &[Dim],
        compute_op: DgeComputeOp,
        dtype: Dtype,
    ) -> Result<Descriptor, DescriptorError> {
        if dims.len() > MAX_DIMS {
            return Err(DescriptorError::TooManyDims(dims.len()));
        }
        if let Some(k) = dims.iter().position(|d| d.num == 0) {
            return Err(DescriptorError::ZeroNum(k));
        }
        if elem_size == 0 {
            return Err(DescriptorError::ZeroElem);
        }
        let mut all = [Dim::UNIT; MAX_DIMS];
        all[..dims.len()].copy_from_slice(dims);
        Ok(Descriptor { kind, src, dst, elem_size, compute_op, dtype, rank: dims.len() as u8, dims: all })
    }

    /// The dims, innermost first.
    pub fn dims(&self) -> &[Dim] {
        &self.dims[..usize::from(self.rank)]
    }

    /// Elements moved (Π num; saturating: five u32 counts can exceed 64 bits).
    pub fn elements(&self) -> u64 {
        self.dims().iter().fold(1u64, |n, d| n.saturating_mul(u64::from(d.num)))
    }

    /// Bytes moved (elements · elem_size).
    pub fn bytes(&self) -> u64 {
        self.elements().saturating_mul(u64::from(self.elem_size))
    }

    /// The lowest and one-past-highest byte of one side (`src` when `source`), as `u128` so the
    /// extent of any descriptor is exact; `None` when it leaves the 64-bit space.
    pub fn extent(&self, source: bool) -> Option<(u64, u64)> {
        let base = i128::from(if source { self.src } else { self.dst });
        let (mut lo, mut hi) = (base, base);
        for d in self.dims() {
            let step = i128::from(if source { d.src_step } else { d.dst_step });
            let span = step * (i128::from(d.num) - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        hi += i128::from(self.elem_size);
        Some((u64::try_from(lo).ok()?, u64::try_from(hi).ok()?))
    }
}

impl std::fmt::Display for Descriptor {
    /// `KIND src=0x… dst=0x… elem=N dims=[num×src_step/dst_step, …] op=OP bytes=B` (dims
    /// innermost first), the CLI's text form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} src={:#x} dst={:#x} elem={} dims=[",
            self.kind.name(),
            self.src,
            self.dst,
            self.elem_size
        )?;
        for (k, d) in self.dims().iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{}x{}/{}", d.num, d.src_step, d.dst_step)?;
        }
        write!(f, "] op={} bytes={}", self.compute_op.name(), self.bytes())
    }
}

/// One record the DGE emits (seed 004 §6, re-facts §8 "Emission").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emission {
    /// GENERATE: one per in-bounds index (indirect kinds) or per descriptor (direct kinds).
    Generate {
        /// The descriptor generated.
        descriptor: Descriptor,
    },
    /// DIMPUSH: one per dim of the descriptor just generated, `[src, dst]` nums and steps.
    DimPush {
        /// The dim (0 innermost).
        dim: u8,
        /// `[src num, dst num]` (equal: both sides walk the same shape).
        num: [u32; 2],
        /// `[src step, dst step]` in bytes.
        step: [i64; 2],
    },
    /// REGWRITE: an optional register write (the index bounds of an indirect list).
    RegWrite {
        /// The register.
        reg: u8,
        /// The value written.
        value: u32,
    },
    /// The tail-pointer doorbell: the queue's tail after the list (descriptors generated).
    Doorbell {
        /// The new tail.
        tail: u64,
    },
}

/// The emission records of a descriptor list: the register writes first, then per descriptor
/// one GENERATE followed by one DIMPUSH per dim, then one doorbell with the descriptor count
/// as tail (docs/dge.md "Emission records"; G36).
pub fn emissions(list: &[Descriptor], reg_writes: &[(u8, u32)]) -> Vec<Emission> {
    let dims: usize = list.iter().map(|d| d.dims().len()).sum();
    let mut out = Vec::with_capacity(reg_writes.len() + list.len() + dims + 1);
    out.extend(reg_writes.iter().map(|&(reg, value)| Emission::RegWrite { reg, value }));
    for d in list {
        out.push(Emission::Generate { descriptor: *d });
        for (k, dim) in d.dims().iter().enumerate() {
            out.push(Emission::DimPush {
                dim: k as u8,
                num: [dim.num, dim.num],
                step: [dim.src_step, dim.dst_step],
            });
        }
    }
    out.push(Emission::Doorbell { tail: list.len() as u64 });
    out
}
