//! An fp32 map over an instruction's data in cache-sized blocks, split across threads: the
//! shape of Activation and Exponential (read a value, compute it alone, write it).
//!
//! [`Cx::map_blocks`] hands `f` each block of the data's values widened to fp32 with the index
//! of its first element, on `par`'s threads (pieces of consecutive elements; every element gets
//! what a serial pass gives it). When the data and the output are both fp32 single contiguous
//! runs in linear memory — different buffers, or the same AP (in place) — and the caller allows
//! it, the blocks are decoded straight from the source bytes and written straight into the
//! output (one pass instead of the read, decode, encode and write copies): the direct path. Else
//! the values are read whole, mapped, and handed back for the caller to write (so a caller may
//! still refuse to write, e.g. on an out-of-range fault, and nothing has changed).

use super::{Arg, Cx, Res, Stop, Written, fnv1a};
use crate::memory::Touch;
use bir_ir::Dtype;

/// Elements per block: the block's values stay in cache between the map's steps.
pub(crate) const BLOCK: usize = 4096;

/// What [`Cx::map_blocks`] did.
pub(crate) struct Mapped<S> {
    /// Each piece's state, by the piece's first element, in element order.
    pub(crate) states: Vec<(usize, S)>,
    /// The mapped values (a buffer of the pool: give it back), for the caller to write; `None`
    /// when the direct path wrote them.
    pub(crate) vals: Option<Vec<f32>>,
}

impl Cx<'_> {
    /// Maps `src`'s values through `f(first_element, block, state)` (`state` one per piece,
    /// from `new`), directly into `dst` when `direct` allows and the operands fit (see the
    /// module doc), else into values returned to the caller.
    pub(crate) fn map_blocks<S: Send>(
        &mut self,
        src: Arg<'_>,
        dst: Arg<'_>,
        direct: bool,
        new: impl Fn() -> S + Sync,
        f: impl Fn(usize, &mut [f32], &mut S) -> Res<()> + Sync,
        regions: &mut Written,
    ) -> Res<Mapped<S>> {
        let par = self.options.parallelism;
        let states = std::sync::Mutex::new(Vec::new());
        let keep = |offset: usize, s: S| {
            if let Ok(mut v) = states.lock() {
                v.push((offset, s));
            }
        };
        let finish = |states: std::sync::Mutex<Vec<(usize, S)>>| {
            let mut s = states.into_inner().unwrap_or_default();
            s.sort_by_key(|p| p.0);
            s
        };
        if direct
            && src.ap.dtype == Dtype::Float32
            && dst.ap.dtype == Dtype::Float32
            && let (Some(a), Some(b)) = (self.contiguous(src)?, self.contiguous(dst)?)
            && a.len() == b.len()
            && (src.ap == dst.ap || !self.memory.same_buffer(src.ap.loc, dst.ap.loc))
        {
            // One piece of the output's bytes: decode each block from `from` (the source's
            // bytes, or the piece itself in place), map it, encode it back.
            let piece = |from: Option<&[u8]>, offset: usize, out: &mut [u8]| -> Res<()> {
                let mut s = new();
                let mut block = [0f32; BLOCK];
                for (k, o) in out.chunks_mut(BLOCK * 4).enumerate() {
                    let block = &mut block[..o.len() / 4];
                    let i = from.map_or(&*o, |from| &from[k * BLOCK * 4..][..o.len()]);
                    block.iter_mut().zip(i.chunks_exact(4)).for_each(|(v, b)| {
                        *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    });
                    f(offset / 4 + k * BLOCK, block, &mut s)?;
                    o.chunks_exact_mut(4)
                        .zip(block.iter())
                        .for_each(|(b, v)| b.copy_from_slice(&v.to_le_bytes()));
                }
                keep(offset / 4, s);
                Ok(())
            };
            let touch = Touch { range: Some(b.clone()), covers: src.ap != dst.ap };
            let r = if src.ap == dst.ap {
                let (buf, _) = self.memory.buffer_for(dst.ap.loc, &touch);
                Some(par.balanced(&mut buf[b.clone()], BLOCK * 4, |o, out| piece(None, o, out)))
            } else {
                let ts = Touch { range: Some(a.clone()), covers: false };
                self.memory.with_two((src.ap.loc, &ts), (dst.ap.loc, &touch), |sb, _, db, _| {
                    let from = &sb[a.clone()];
                    par.balanced(&mut db[b.clone()], BLOCK * 4, |o, out| {
                        piece(Some(&from[o..o + out.len()]), o, out)
                    })
                })
            };
            if let Some(r) = r {
                r?;
                let memory = &mut self.memory;
                regions.record_region(
                    |h| fnv1a(h, &memory.buffer_for(dst.ap.loc, &touch).0[b.clone()]),
                    b.len() as u64,
                );
                return Ok(Mapped { states: finish(states), vals: None });
            }
        }
        let mut v = self.pool.take_f32();
        let r = self.read_f32(src, &mut v).and_then(|()| {
            par.balanced(&mut v, BLOCK, |offset, piece| -> Result<(), Stop> {
                let mut s = new();
                for (k, block) in piece.chunks_mut(BLOCK).enumerate() {
                    f(offset + k * BLOCK, block, &mut s)?;
                }
                keep(offset, s);
                Ok(())
            })
        });
        if let Err(e) = r {
            self.pool.give_f32(v);
            return Err(e);
        }
        Ok(Mapped { states: finish(states), vals: Some(v) })
    }
}
