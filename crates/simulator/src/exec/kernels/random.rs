//! The random family on the engines' Xorwow generators (AWS `nki.isa.rng`, `rand2`, `dropout`;
//! re-facts §7; docs/fidelity.md R1–R4): Rand (60), Rand2 (97) and Dropout (65). Each draws
//! from the generators of its engine's rows (`kit::rng`: GpSimd one Xorwow per row, VectorE
//! four lanes per row serving elements `e % 4`), on copies put back only after the output is
//! written, so a faulting instruction advances nothing.
//!
//! - Rand: `ins = []`, `outs = [integer AP]`; each element the low bits of its draw.
//! - Rand2: `ins = [min, max]` (fp32 immediates or one value per row), `outs = [AP]`; each element
//!   `min + (max − min)·unit(draw)` in fp32 (`numerics::random`), cast to the output's dtype.
//! - Dropout: `ins = [data, prob]`, `outs = [AP of data's dtype]`; each element kept bit for bit
//!   or zeroed by `unit(draw)` against `prob` (a drop or a keep probability, `threshold_type`).

use crate::exec::kit::registers::Param;
use crate::exec::kit::rng::{Lanes, RngEngine};
use crate::exec::kit::{Arg, Cx, Res, Written, fault};
use crate::fault::FaultCause;
use bir_ir::ops::DropoutFields;
use bir_ir::{DropoutThresholdType, Instruction};

/// The generators of `parts` rows of the instruction's engine (validation allows only Pool and
/// DVE).
fn lanes(cx: &mut Cx<'_>, i: &Instruction, parts: usize) -> Res<Lanes> {
    match RngEngine::of(i.engine) {
        Some(e) => Ok(cx.engines.random.take(e, parts)),
        None => fault(FaultCause::BadField { field: "engine", why: "the random family runs on Pool or DVE" }),
    }
}

/// `a`'s rows, elements per row, and one draw per element from the instruction's generators.
fn draws(cx: &mut Cx<'_>, i: &Instruction, a: Arg<'_>) -> Res<(Lanes, Vec<u32>, usize)> {
    let (parts, _) = a.shape()?;
    let total = a.elements()?;
    let n = total / parts.max(1);
    let mut lanes = lanes(cx, i, parts)?;
    let mut d = Vec::new();
    crate::alloc::resize(&mut d, total, 0)?;
    lanes.draw(n, &mut d);
    Ok((lanes, d, total))
}

/// Runs one Rand.
pub(crate) fn rand(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let dst = cx.output(i, 0)?;
    let (lanes, d, _) = draws(cx, i, dst)?;
    let size = dst.ap.dtype.size();
    let bytes: Vec<u8> = d.iter().flat_map(|r| r.to_le_bytes().into_iter().take(size)).collect();
    cx.write(dst, dst.ap.dtype, &bytes, regions)?;
    cx.engines.random.put(lanes);
    Ok(())
}

/// Runs one Rand2.
pub(crate) fn rand2(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let dst = cx.output(i, 0)?;
    let (lanes, d, total) = draws(cx, i, dst)?;
    let (lo, hi) = (Param::per_element(cx, i, 0, total)?, Param::per_element(cx, i, 1, total)?);
    let v: Vec<f32> =
        d.iter().zip(lo.iter().zip(&hi)).map(|(&r, (&l, &h))| numerics::random::uniform(r, l, h)).collect();
    cx.write_f32(dst, &v, regions)?;
    cx.engines.random.put(lanes);
    Ok(())
}

/// Runs one Dropout.
pub(crate) fn dropout(cx: &mut Cx<'_>, i: &Instruction, f: &DropoutFields, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (lanes, d, total) = draws(cx, i, src)?;
    let prob = Param::per_element(cx, i, 1, total)?;
    let keep_rate = f.threshold_type == DropoutThresholdType::KeepRate;
    let dt = src.ap.dtype;
    let mut bytes = cx.pool.take();
    let r = cx.read(src, dt, &mut bytes).and_then(|()| {
        for ((e, &r), &p) in bytes.chunks_exact_mut(dt.size()).zip(&d).zip(&prob) {
            if !numerics::random::keeps(r, p, keep_rate) {
                e.fill(0);
            }
        }
        cx.write(dst, dt, &bytes, regions)
    });
    cx.pool.give(bytes);
    r?;
    cx.engines.random.put(lanes);
    Ok(())
}
