//! Matmult (8): the TensorEngine's product into PSUM (engines.md §1; docs/fidelity.md M1–M6).
//!
//! `ins = [moving K × N, stationary K × M]`, `outs = [PSUM M × N]` (the reference simulator's
//! operand roles, engines.md §1.1): `out[m, n] = Σ_k (moving[k, n] − zpI)·(stationary[k, m] −
//! zpW)`. Both inputs are read widened exactly to fp32 (float32r operands rounded through its
//! encoder first, uint8 ones less their zero points `ifmap_quant_offset` / `weights_quant_offset`),
//! the dot products come from `numerics::matmul` in the order the `matmul` option names (M3),
//! and the result goes to PSUM through the floor's tracked write (`kit::tracked`, seed 000 §1.3):
//! START clears the output's bank(s) first, so the group's first write copies; ACCUMULATE adds
//! where an element was written before; neither overwrites (M4). Both inputs are read before
//! anything is written.

use crate::exec::kit::facts::{self, Fact, Facts, Verdict};
use crate::exec::kit::tracked::Tracked;
use crate::exec::kit::{Arg, Cx, Res, Written};
use bir_ir::ops::{MatmultFields, MatmultFlags};
use bir_ir::{Dtype, Instruction};

/// Runs plain products; the PE transpose and the perf modes are not implemented yet.
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if q.yes(Fact::MatmultTranspose) {
        return Verdict::not_implemented("Matmult is_transpose (the PE transpose)");
    }
    if q.yes(Fact::MatmultPerfMode) {
        return Verdict::not_implemented("Matmult perf_mode other than None");
    }
    Verdict::runs("fp32 products into PSUM through the tracked write")
}

/// Runs one Matmult.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, m: &MatmultFields, regions: &mut Written) -> Res<()> {
    let (mov, st, out) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    let k = mov.ap.pairs.first().map_or(1, |p| p.num.max(1)) as usize;
    let n = mov.elements()? / k;
    let m_len = st.elements()? / k;
    let mut x = cx.pool.take_f32();
    let mut w = cx.pool.take_f32();
    let mut prod = cx.pool.take_f32();
    let r = operand(cx, mov, m.ifmap_quant_offset, &mut x)
        .and_then(|()| operand(cx, st, m.weights_quant_offset, &mut w))
        .and_then(|()| {
            crate::alloc::resize(&mut prod, m_len * n, 0.0)?;
            numerics::matmul::matmul(&x, &w, (k, m_len, n), cx.options.matmul_order, &mut prod);
            let bits = m.flags.bits();
            if bits & MatmultFlags::START != 0 {
                cx.psum_clear_banks(out, m.flags.zero_banks())?;
            }
            let how = if bits & (MatmultFlags::START | MatmultFlags::ACCUMULATE) != 0 {
                Tracked::Accumulate
            } else {
                Tracked::Overwrite
            };
            cx.write_tracked(out, &prod, how, regions)
        });
    cx.pool.give_f32(x);
    cx.pool.give_f32(w);
    cx.pool.give_f32(prod);
    r
}

/// One input widened to fp32: float32r through its encoder (the reference rounds tf32
/// operands first, engines.md §1.3), uint8 less its zero point (exact: small integers).
fn operand(cx: &mut Cx<'_>, a: Arg<'_>, zero_point: Option<i64>, out: &mut Vec<f32>) -> Res<()> {
    cx.read_f32(a, out)?;
    match a.ap.dtype {
        Dtype::Float32r => {
            let mut bits = vec![0u8; out.len() * 4];
            numerics::encode_from_f32(Dtype::Float32r, out, &mut bits, &cx.profile)
                .and_then(|()| numerics::decode_to_f32(Dtype::Float32r, &bits, out, &cx.profile))
                .map_err(|e| a.numerics(e))?;
        }
        Dtype::Uint8 => {
            let zp = zero_point.unwrap_or(0) as f32;
            out.iter_mut().for_each(|v| *v -= zp);
        }
        _ => {}
    }
    Ok(())
}
