//! Memset (seed 000 §5.4): every element of the output gets the low `dtype size` bytes of
//! `constant` (Const mode), or random bits (Random mode; re-facts §7; docs/fidelity.md D6, D7):
//!
//! - The host generator: one `std::mt19937_64` per run, seeded 42, reseeded by SetRandState;
//!   each draw is libstdc++'s `std::uniform_int_distribution<uint32_t>` over the full range
//!   (reject `y ≥ 0xFFFF_FFFF_0000_0000`, return `y / 0xFFFF_FFFF`). CONFIRMED.
//! - The Pool generator: one Xorwow per output partition row (re-facts §7 step; D7 seeding).
//! - Element bits (D6): elements in the output AP's order; an element of at most 4 bytes takes
//!   the low bytes of one 32-bit draw, an 8-byte element two draws, low word first.
//!
//! The generators live in `kit::rng` (engine state shared with SetRandState).

use crate::exec::kit::facts::{Fact, Facts, Verdict};
use crate::exec::kit::{Cx, Parallelism, Res, Written, facts, fnv1a};
use crate::memory::Touch;
use bir_ir::ops::MemsetFields;
use bir_ir::{BirEnum, EngineType, Instruction, MemsetMode};

/// Memset (10): the constant fill or the random one, by `mode`.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, m: &MemsetFields, regions: &mut Written) -> Res<()> {
    match m.mode {
        MemsetMode::Random => memset_random(cx, i, m, regions),
        _ => memset(cx, i, m, regions),
    }
}

/// Memset runs every mode, scalar dynamic offsets included (`facts::classify_offsets`).
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    match MemsetMode::ALL.get(usize::from(q.get(Fact::MemsetMode))) {
        Some(MemsetMode::Random) => Verdict::runs("the MT19937-64 / Xorwow generators"),
        _ => Verdict::runs("the constant fill"),
    }
}

/// Memset in Const mode: every element gets the low `dtype size` bytes of `constant` (seed 000 §5.4).
/// A single contiguous run in memory of its own dtype is filled in place (split across
/// threads); any other output goes through a pooled buffer.
fn memset(cx: &mut Cx<'_>, i: &Instruction, m: &MemsetFields, regions: &mut Written) -> Res<()> {
    let out = cx.output(i, 0)?;
    let size = out.ap.dtype.size();
    let word = u64::from(m.constant).to_le_bytes();
    let word = &word[..size];
    let n = out.elements()?;
    if let Some(r) = cx.contiguous(out)? {
        let par = Parallelism { grain: cx.options.parallelism.grain * size, ..cx.options.parallelism };
        let touch = Touch { range: Some(r.clone()), covers: true };
        let (buf, _) = cx.memory.buffer_for(out.ap.loc, &touch);
        // One dispatch on the element width, then a fill the compiler vectorises.
        let _ = par.chunks(&mut buf[r.clone()], size, |_, chunk| {
            match *word {
                [a] => chunk.fill(a),
                [a, b] => chunk.as_chunks_mut::<2>().0.fill([a, b]),
                [a, b, c, d] => chunk.as_chunks_mut::<4>().0.fill([a, b, c, d]),
                [a, b, c, d, e, f, g, h] => chunk.as_chunks_mut::<8>().0.fill([a, b, c, d, e, f, g, h]),
                // Dtype sizes are 1, 2, 4 or 8 (re-facts §1): nothing else reaches here.
                _ => chunk.chunks_exact_mut(size).for_each(|c| c.copy_from_slice(word)),
            }
            Ok::<(), ()>(())
        });
        let memory = &mut cx.memory;
        regions
            .record_region(|h| fnv1a(h, &memory.buffer_for(out.ap.loc, &touch).0[r.clone()]), r.len() as u64);
        return Ok(());
    }
    let mut bytes = cx.pool.take();
    bytes.clear();
    let r = crate::alloc::extend(&mut bytes, n * word.len(), std::iter::repeat_n(word, n).flatten().copied())
        .map_err(Into::into)
        .and_then(|()| cx.write(out, out.ap.dtype, &bytes, regions));
    cx.pool.give(bytes);
    r
}
/// Memset in Random mode: random bits in every element (D6), from the Pool engine's
/// per-partition Xorwow or else the host MT19937-64.
fn memset_random(cx: &mut Cx<'_>, i: &Instruction, m: &MemsetFields, regions: &mut Written) -> Res<()> {
    let out = cx.output(i, 0)?;
    let dt = out.ap.dtype;
    let (parts, free) = out.shape()?;
    // Draws per element: one for ≤ 4 bytes, two for 8 (D6). Packed x4 dtypes are 4 bytes.
    let per = if dt.size() == 8 { 2 } else { 1 };
    let n = parts * free * per;
    if i.engine != EngineType::Pool
        && dt.size() == 4
        && let Some(r) = cx.contiguous(out)?
        && r.len() == n * 4
    {
        // Host draws straight into a contiguous 4-byte output, in element order.
        if let Some(s) = m.seed {
            cx.engines.random.host.seed(s);
        }
        let touch = Touch { range: Some(r.clone()), covers: true };
        let (buf, _) = cx.memory.buffer_for(out.ap.loc, &touch);
        let host = &mut cx.engines.random.host;
        cx.options.parallelism.serial_prefaulted(&mut buf[r.clone()], 1 << 20, |piece| {
            host.fill_uniform_u32(piece.as_chunks_mut::<4>().0);
        });
        let memory = &mut cx.memory;
        regions
            .record_region(|h| fnv1a(h, &memory.buffer_for(out.ap.loc, &touch).0[r.clone()]), r.len() as u64);
        return Ok(());
    }
    let mut draws = crate::alloc::filled(n, 0u32)?;
    let rng = &mut cx.engines.random;
    if i.engine == EngineType::Pool {
        if let Some(s) = m.seed {
            rng.reseed_pool(s);
        }
        let row = free * per;
        if row > 0 {
            for (r, chunk) in draws.chunks_mut(row).enumerate() {
                rng.row(r).fill(chunk);
            }
        }
    } else {
        if let Some(s) = m.seed {
            rng.host.seed(s);
        }
        rng.host.fill_uniform_u32(&mut draws);
    }
    let mut bytes = cx.pool.take();
    let r = spread(&draws, if per == 2 { 4 } else { dt.size() }, &mut bytes)
        .map_err(Into::into)
        .and_then(|()| cx.write(out, dt, &bytes, regions));
    cx.pool.give(bytes);
    r
}

/// Spreads 32-bit draws into elements of `size` bytes (D6): the low bytes of one draw each, or
/// two draws (low word first) for 8-byte elements.
fn spread(draws: &[u32], size: usize, out: &mut Vec<u8>) -> Result<(), crate::alloc::OutOfMemory> {
    out.clear();
    crate::alloc::reserve(out, draws.len() * size.min(4))?;
    match size {
        1 => out.extend(draws.iter().map(|d| *d as u8)),
        2 => out.extend(draws.iter().flat_map(|d| (*d as u16).to_le_bytes())),
        _ => out.extend(draws.iter().flat_map(|d| d.to_le_bytes())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_low_bytes_little_endian() {
        let mut out = Vec::new();
        spread(&[0x1122_3344, 0xAABB_CCDD], 1, &mut out).unwrap();
        assert_eq!(out, [0x44, 0xDD]);
        spread(&[0x1122_3344, 0xAABB_CCDD], 2, &mut out).unwrap();
        assert_eq!(out, [0x44, 0x33, 0xDD, 0xCC]);
        spread(&[0x1122_3344], 4, &mut out).unwrap();
        assert_eq!(out, [0x44, 0x33, 0x22, 0x11]);
    }
}
