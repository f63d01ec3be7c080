//! The copy family — GenericCopy, AbstractCopy, TensorCopy, Load, Save all run `doCopy` (seed 000
//! §5.1): read the source AP, cast when the dtypes differ, write the destination AP — and Memset
//! in constant mode (§5.4).

use super::{Res, Simulator, elements, fault};
use crate::fault::FaultKind;
use bir_ir::ops::MemsetFields;
use bir_ir::{Instruction, MemsetMode};

impl<'p> Simulator<'p> {
    /// `doCopy`: a strided/broadcast copy with cast-on-copy.
    pub(crate) fn copy(&mut self, i: &'p Instruction, regions: &mut Vec<Vec<u8>>) -> Res<()> {
        let (src, dst) = (self.in_ap(i, 0)?, self.out_ap(i, 0)?);
        let bytes = self.read_bytes(src)?;
        if src.dtype == dst.dtype {
            let n = elements(dst)?;
            if n * dst.dtype.size() != bytes.len() {
                return fault(
                    FaultKind::Shape,
                    format!(
                        "the source has {} elements but the destination {n}",
                        bytes.len() / src.dtype.size()
                    ),
                );
            }
            return self.write_bytes(dst, bytes, regions);
        }
        self.write_from(dst, src.dtype, &bytes, regions)
    }

    /// Memset: every element gets the low `dtype size` bytes of `constant` (seed 000 §5.4).
    pub(crate) fn memset(
        &mut self,
        i: &'p Instruction,
        m: &MemsetFields,
        regions: &mut Vec<Vec<u8>>,
    ) -> Res<()> {
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
