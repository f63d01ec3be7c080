//! POOL_BUFFER_LOAD 0x67, birsim's form (contract §1, X11): channel `c` of the Pool_Buffer
//! (c = 0..num_active_channels) receives the `src` elements of partition `src.partition + c`
//! (at most 512 per channel), with the dtype, start index and mask GATHER's hit test uses.
//! The previous content is replaced whole; channels past the loaded ones hold zeros (X55).

use super::super::{
    FaultKind, IsaFault, Machine, PARTITIONS, POOL_BUFFER_MAX_ELEMENTS, PoolBuffer, TensorRef, fault,
    isa_dtype,
};

const OP: &str = "POOL_BUFFER_LOAD";

/// A POOL_BUFFER_LOAD word's operands, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolLoad {
    /// The elements each channel loads.
    pub src: TensorRef,
    /// The ISA dtype code.
    pub dtype: u8,
    /// Active channels.
    pub channels: usize,
    /// The window mask.
    pub mask: u32,
    /// The window start.
    pub start_index: u32,
}

impl Machine {
    /// Runs a POOL_BUFFER_LOAD (all-or-nothing).
    pub fn pool_buffer_load(&mut self, p: &PoolLoad) -> Result<(), IsaFault> {
        let Some(dtype) = isa_dtype(p.dtype) else {
            return fault(
                FaultKind::Dtype,
                OP,
                "dtype",
                format!("ISA dtype {:#04x} has no element type in the functional model", p.dtype),
            );
        };
        let count = p.src.count();
        if count > POOL_BUFFER_MAX_ELEMENTS {
            return fault(
                FaultKind::Invalid,
                OP,
                "src.num_elem",
                format!("{count} elements per channel; the Pool_Buffer holds {POOL_BUFFER_MAX_ELEMENTS}"),
            );
        }
        if p.channels == 0 || p.channels > PARTITIONS {
            return fault(
                FaultKind::Invalid,
                OP,
                "num_active_channels",
                format!("{} active channels (1..=128)", p.channels),
            );
        }
        let es = dtype.size();
        let pb = self.partition_bytes(p.src.start.space);
        let mut offs = Vec::new();
        p.src.offsets(OP, es, p.channels, pb, &mut offs)?;
        let mut data = vec![0u8; PARTITIONS * count * es];
        let mem = self.space(p.src.start.space);
        for (c, row) in data.chunks_exact_mut((count * es).max(1)).enumerate().take(p.channels) {
            let q = usize::from(p.src.start.partition) + c;
            let part = mem.get(q * pb..(q + 1) * pb).unwrap_or(&[]);
            for (d, &o) in row.chunks_exact_mut(es).zip(&offs) {
                if let Some(s) = part.get(o..o + es) {
                    d.copy_from_slice(s);
                }
            }
        }
        self.pool_buffer =
            PoolBuffer { loaded: true, dtype, count, start_index: p.start_index, mask: p.mask, data };
        Ok(())
    }
}
