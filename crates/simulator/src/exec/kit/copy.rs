//! `doCopy` (seed 000 §5.1): read the whole source AP, cast when the dtypes differ, then write the
//! destination AP. The copy family (GenericCopy, AbstractCopy, TensorCopy, Load, Save) is this
//! and nothing else; DMACopy's Copy mode without a dynamic offset runs it too.

use super::{Arg, Cx, Res, Written, pieces};
use crate::memory::Touch;
use bir_ir::Instruction;

impl Cx<'_> {
    /// `doCopy`: a strided/broadcast copy with cast-on-copy. Disjoint operands go piece by piece
    /// through a reused buffer; overlapping ones read the whole source first (§5.1:
    /// `tmp = read(srcAP); write(dstAP, tmp)`).
    pub(crate) fn copy(&mut self, i: &Instruction, regions: &mut Written) -> Res<()> {
        let (src, dst) = (self.input(i, 0)?, self.output(i, 0)?);
        if self.dies_here(src.ap.loc) && self.move_whole(src, dst, regions)? {
            return Ok(());
        }
        if self.copy_direct(src, dst, regions)? {
            return Ok(());
        }
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

    /// A copy of one whole location onto another of the same size and dtype, out of a location
    /// that is dead after it, moves the buffer instead (nothing observable differs: the source is
    /// never read again). Returns false when the copy is not of that form.
    fn move_whole(&mut self, src: Arg<'_>, dst: Arg<'_>, regions: &mut Written) -> Res<bool> {
        if src.ap.loc == dst.ap.loc || src.ap.dtype != dst.ap.dtype {
            return Ok(false);
        }
        let (Some(a), Some(b)) = (self.contiguous(src)?, self.contiguous(dst)?) else { return Ok(false) };
        let (sa, sb) = (self.memory.span_of(src.ap.loc), self.memory.span_of(dst.ap.loc));
        if a != (0..sa) || b != (0..sb) || !self.memory.move_buffer(src.ap.loc, dst.ap.loc) {
            return Ok(false);
        }
        let memory = &mut self.memory;
        regions
            .record_region(|h| super::fnv1a(h, &memory.buffer_mut(dst.ap.loc).0[b.clone()]), b.len() as u64);
        Ok(true)
    }

    /// A copy between single contiguous runs in different buffers: one memcpy when the dtypes
    /// agree, else one `numerics::cast` straight from the source bytes into the destination's
    /// (what reading the source as the destination's dtype and writing it gives, without the two
    /// staging buffers); split across threads either way. Returns false when that does not apply
    /// (a dtype that packs lanes, or a count mismatch, which the general path reports). A cast
    /// between single-lane dtypes fails only on a count mismatch, so no chunk is left half done.
    fn copy_direct(&mut self, src: Arg<'_>, dst: Arg<'_>, regions: &mut Written) -> Res<bool> {
        let (from, to) = (src.ap.dtype, dst.ap.dtype);
        if from != to && (from.lanes() != 1 || to.lanes() != 1) {
            return Ok(false);
        }
        let (Some(a), Some(b)) = (self.contiguous(src)?, self.contiguous(dst)?) else { return Ok(false) };
        let (fs, ts) = (from.size(), to.size());
        if a.len() / fs != b.len() / ts {
            return Ok(false);
        }
        let par =
            super::Parallelism { grain: self.options.parallelism.grain * ts, ..self.options.parallelism };
        let profile = &self.profile;
        let (ta, tb) =
            (Touch { range: Some(a.clone()), covers: false }, Touch { range: Some(b.clone()), covers: true });
        let done = self.memory.with_two((src.ap.loc, &ta), (dst.ap.loc, &tb), |sb, _, db, _| {
            let from_bytes = &sb[a.clone()];
            par.chunks(&mut db[b.clone()], ts, |off, chunk| {
                let k = off / ts;
                let part = &from_bytes[k * fs..(k + chunk.len() / ts) * fs];
                if from == to {
                    chunk.copy_from_slice(part);
                    Ok(())
                } else {
                    numerics::cast(from, part, to, chunk, profile)
                }
            })
        });
        match done {
            None => return Ok(false),
            Some(r) => r.map_err(|e| src.numerics(e))?,
        }
        let memory = &mut self.memory;
        regions.record_region(
            |h| super::fnv1a(h, &memory.buffer_for(dst.ap.loc, &tb).0[b.clone()]),
            b.len() as u64,
        );
        Ok(true)
    }

    fn copy_aps(&mut self, src: Arg<'_>, dst: Arg<'_>, regions: &mut Written) -> Res<()> {
        let mut bytes = self.pool.take();
        let r = self
            .read(src, dst.ap.dtype, &mut bytes)
            .and_then(|()| self.write(dst, dst.ap.dtype, &bytes, regions));
        self.pool.give(bytes);
        r
    }
}
