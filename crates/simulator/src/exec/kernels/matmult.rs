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
use crate::exec::kit::{Arg, Cx, Res, Written};
use bir_ir::ops::{MatmultFields, MatmultFlags};
use bir_ir::{Arch, Dtype, Instruction, MatmultPerfMode};
use numerics::matmul::Form;

/// Runs products, DoubleRow and the PE transpose; the other perf modes are not implemented.
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    match q.get(Fact::MatmultPerfMode) {
        MODE_NONE if q.yes(Fact::MatmultTranspose) => {
            Verdict::runs("the PE transpose (gen3+: the data's bits; gen2: a product with the identity)")
        }
        MODE_NONE => Verdict::runs("fp32 products into PSUM through the tracked write"),
        MODE_DOUBLE_ROW => Verdict::runs("DoubleRow: fp8 row pairs summed before the chain"),
        _ => Verdict::not_implemented("Matmult perf_mode DoubleColumn, DoublePixel or DoubleRowSwInterleave"),
    }
}

/// Runs one Matmult.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, m: &MatmultFields, regions: &mut Written) -> Res<()> {
    let (mov, st, out) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    if m.is_transpose && cx.arch != Arch::Gen2 {
        return transpose(cx, (mov, st, out), m, regions);
    }
    let double = m.perf_mode == MatmultPerfMode::DoubleRow;
    // K rows of the contraction: the partitions, twice over in DoubleRow (its size-2 level).
    let k = mov.ap.pairs.first().map_or(1, |p| p.num.max(1)) as usize * if double { 2 } else { 1 };
    let n = mov.elements()? / k;
    let m_len = st.elements()? / k;
    let mut x = cx.pool.take_f32();
    let mut w = cx.pool.take_f32();
    let r = operand(cx, mov, m.ifmap_quant_offset, &mut x)
        .and_then(|()| operand(cx, st, m.weights_quant_offset, &mut w))
        .and_then(|()| {
            let form = if double { Form::DoubleRow } else { Form::Plain(cx.options.matmul_order) };
            cx.product_into_psum((&x, &w), (k, m_len, n), form, m.flags, out, regions)
        });
    cx.pool.give_f32(w);
    cx.pool.give_f32(x);
    r
}

/// [`Fact::MatmultPerfMode`]'s values (`InstFacts`).
const MODE_NONE: u8 = 0;
const MODE_DOUBLE_ROW: u8 = 1;

/// The PE transpose on gen3 and later (docs/fidelity.md M7): the output is the data operand
/// transposed, its bits copied in its own dtype (fp8 data into 16-bit elements, the byte low and
/// 0 above). The data is the stationary operand under the NKI reading (moving = a P × P
/// identity, output F × P) and the moving one under KLR's lowering (stationary = an F × F
/// identity, output F × P); validation let through only shapes that fit one of them, and when
/// both fit (all square) the data is the operand that is not an identity (the stationary when
/// both or neither are). A START clears the bank(s) first; the elements are then overwritten.
fn transpose(
    cx: &mut Cx<'_>,
    (mov, st, out): (Arg<'_>, Arg<'_>, Arg<'_>),
    m: &MatmultFields,
    regions: &mut Written,
) -> Res<()> {
    let part = |a: Arg<'_>| a.ap.pairs.first().map_or(1, |p| p.num.max(1)) as usize;
    let (k_mov, k_st) = (part(mov), part(st));
    let (n, m_free) = (mov.elements()? / k_mov, st.elements()? / k_st);
    let nki = n == k_mov && k_mov == k_st;
    let klr = k_st == m_free && n == m_free;
    let mut a = cx.pool.take();
    let mut b = cx.pool.take();
    let r = cx.read_raw(mov, &mut a).and_then(|()| cx.read_raw(st, &mut b)).and_then(|()| {
        let data_is_moving = match (nki, klr) {
            (false, true) => true,
            (true, true) => is_identity(cx, st, k_st)? && !is_identity(cx, mov, k_mov)?,
            _ => false,
        };
        let (data, bytes, rows) = if data_is_moving { (mov, &a, k_mov) } else { (st, &b, k_st) };
        let size = data.ap.dtype.size();
        let cols = bytes.len() / size / rows.max(1);
        let wide = out.ap.dtype.size();
        // out[f, p] = data[p, f]; an element narrower than the output's sits in its low bytes.
        let mut t = vec![0u8; cols * rows * wide];
        for p in 0..rows {
            for f in 0..cols {
                let src = &bytes[(p * cols + f) * size..][..size];
                t[(f * rows + p) * wide..][..size].copy_from_slice(src);
            }
        }
        if m.flags.bits() & MatmultFlags::START != 0 {
            cx.psum_clear_banks(out, m.flags.zero_banks())?;
        }
        cx.write_psum_raw(out, &t, regions)
    });
    cx.pool.give(a);
    cx.pool.give(b);
    r
}

/// Whether a square operand (`k` × `k`) holds exactly the identity: ones on the diagonal, zeros
/// (either sign) elsewhere.
fn is_identity(cx: &mut Cx<'_>, a: Arg<'_>, k: usize) -> Res<bool> {
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(a, &mut v).map(|()| {
        v.len() == k * k && v.iter().enumerate().all(|(e, &x)| x == if e / k == e % k { 1.0 } else { 0.0 })
    });
    cx.pool.give_f32(v);
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
