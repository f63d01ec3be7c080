//! The copy family — GenericCopy, AbstractCopy, TensorCopy, Load, Save all run `doCopy` (seed 000
//! §5.1): read the source AP, cast when the dtypes differ, write the destination AP — and Memset
//! in constant mode (§5.4).

use super::{Res, Simulator, Written, elements, fault, pieces};
use crate::fault::FaultKind;
use bir_ir::ops::MemsetFields;
use bir_ir::{AccessPattern, Instruction, MemsetMode};

impl<'p> Simulator<'p> {
    /// `doCopy`: a strided/broadcast copy with cast-on-copy.
    pub(crate) fn copy(&mut self, i: &'p Instruction, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.in_ap(i, 0)?, self.out_ap(i, 0)?);
        if let Some(pieces) = pieces(&[src, dst])? {
            for piece in &pieces {
                self.copy_aps(&piece[0], &piece[1], regions)?;
            }
            return Ok(());
        }
        self.copy_aps(src, dst, regions)
    }

    fn copy_aps(&mut self, src: &AccessPattern, dst: &AccessPattern, regions: &mut Written) -> Res<()> {
        if src.dtype == dst.dtype {
            return self.copy_same(src, dst, regions);
        }
        let bytes = self.read_bytes(src)?;
        self.write_from(dst, src.dtype, &bytes, regions)
    }

    /// Memset: every element gets the low `dtype size` bytes of `constant` (seed 000 §5.4).
    pub(crate) fn memset(&mut self, i: &'p Instruction, m: &MemsetFields, regions: &mut Written) -> Res<()> {
        if m.mode == MemsetMode::Random {
            return fault(FaultKind::NotImplemented, "not implemented yet: Memset in Random mode");
        }
        let out = self.out_ap(i, 0)?;
        let size = out.dtype.size();
        let word = u64::from(m.constant).to_le_bytes();
        let bytes = word[..size].repeat(elements(out)?);
        self.write_bytes(out, bytes, regions)
    }
}
