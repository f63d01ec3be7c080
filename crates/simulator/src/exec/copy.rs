//! The copy family — GenericCopy, AbstractCopy, TensorCopy, Load, Save all run `doCopy` (seed 000
//! §5.1): read the whole source AP, cast when the dtypes differ, then write the destination AP —
//! and Memset in constant mode (§5.4).

use super::operand::pieces;
use super::{Arg, Res, Simulator, Written};
use bir_ir::Instruction;
use bir_ir::ops::MemsetFields;

impl<'p> Simulator<'p> {
    /// `doCopy`: a strided/broadcast copy with cast-on-copy. Disjoint operands go piece by piece
    /// through a reused buffer; overlapping ones read the whole source first (§5.1:
    /// `tmp = read(srcAP); write(dstAP, tmp)`).
    pub(crate) fn copy(&mut self, i: &'p Instruction, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        if !self.overlaps(&[src], &[dst])
            && let Some(pieces) = pieces(&[src, dst])?
        {
            for piece in &pieces {
                self.copy_aps(src.with(&piece[0]), dst.with(&piece[1]), regions)?;
            }
            return Ok(());
        }
        self.copy_aps(src, dst, regions)
    }

    fn copy_aps(&mut self, src: Arg<'_>, dst: Arg<'_>, regions: &mut Written) -> Res<()> {
        let mut bytes = self.pool.take();
        let r = self
            .read(src, dst.ap.dtype, &mut bytes)
            .and_then(|()| self.write(dst, dst.ap.dtype, &bytes, regions));
        self.pool.give(bytes);
        r
    }

    /// Memset in Const mode (Random runs in `random.rs`): every element gets the low `dtype size` bytes of `constant` (seed 000 §5.4).
    pub(crate) fn memset(&mut self, i: &'p Instruction, m: &MemsetFields, regions: &mut Written) -> Res<()> {
        let out = self.output(i, 0)?;
        let size = out.ap.dtype.size();
        let word = u64::from(m.constant).to_le_bytes();
        let bytes = word[..size].repeat(out.elements()?);
        self.write(out, out.ap.dtype, &bytes, regions)
    }
}
