//! The microscaling (OCP MX) pair, gen4 (AWS `nki.isa.quantize_mx`, `nc_matmul_mx` and the MX
//! deep dive; engines.md §1.8; docs/fidelity.md Q10, Q11). A block is 8 partitions × 4
//! consecutive values with one E8M0 scale byte (`numerics::mx`).
//!
//! - QuantizeMx (96): `ins = [src P × F]` (bf16, fp16 or fp32), `outs = [dst P × F/4 of
//!   float8_e4m3fn_x4 or float8_e5m2_x4, scales]`: each block's scale and its values divided by it
//!   and saturated, packed four to a container (lane k = value 4j + k, N9).
//! - MatmultMx (95): `ins = [moving K × N, stationary K × M (x4 data), moving scales, stationary
//!   scales]`, `outs = [PSUM M × N]`, Matmult's fields: each value dequantized `ldexpf(x, s −
//!   127)`, then Matmult's product over the 4K contraction rows (row 4k + q holds lane q of
//!   partition k) into PSUM, exactly as Matmult (START, ACCUMULATE, the tracked write).
//!
//! Scales: block b (partitions 8b..8b+8) sits in row b of a scale AP of K/8 rows, or else in row
//! `32·(b / 4) + b % 4` (AWS: for more than 32 partitions, the first four partitions of each
//! quadrant, counted from the AP's first partition); the columns are the 4-value groups.

use crate::exec::kit::{Arg, Cx, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::ops::MatmultFields;
use bir_ir::{Dtype, Instruction};
use numerics::matmul::Form;
use numerics::mx::{self, MxElement};

/// The scale AP's row of block `b` of `parts / 8`: row b of an AP of exactly K/8 rows, else row
/// `32·(b / 4) + b % 4` (the first four partitions of each quadrant, counted from the AP's first
/// partition: AWS packs two tensors' scales at offsets 0 and 4 of one tile, the second through a
/// 124-row AP); `None` when the AP's rows do not reach the last block's.
fn scale_row(scale_parts: usize, parts: usize, b: usize) -> Option<usize> {
    let spread = |b: usize| 32 * (b / 4) + b % 4;
    if scale_parts == parts / 8 {
        Some(b)
    } else if parts >= 8 && spread(parts / 8 - 1) < scale_parts {
        Some(spread(b))
    } else {
        None
    }
}

/// The fault of a scale AP whose rows fit neither layout.
fn scale_rows_fault<T>(slot: Slot, parts: usize, actual: usize) -> Res<T> {
    fault(FaultCause::Count {
        slot,
        expected: (parts / 8) as u64,
        actual: actual as u64,
        why: "one scale row per 8 data partitions, or enough rows to reach the last block's row in the quadrant layout",
    })
}

/// Partitions and values per partition of `a`, checked against the block shape.
fn blocks(a: Arg<'_>) -> Res<(usize, usize)> {
    let (parts, _) = a.shape()?;
    let f = a.values()? / parts.max(1);
    if !parts.is_multiple_of(8) || !f.is_multiple_of(4) {
        return fault(FaultCause::Count {
            slot: a.slot,
            expected: parts.next_multiple_of(8) as u64,
            actual: parts as u64,
            why: "MX blocks: a multiple of 8 partitions and of 4 values per partition",
        });
    }
    Ok((parts, f))
}

/// Runs one QuantizeMx.
pub(crate) fn quantize(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst, sc) = (cx.input(i, 0)?, cx.output(i, 0)?, cx.output(i, 1)?);
    let fmt = match dst.ap.dtype {
        Dtype::Float8E5m2X4 => MxElement::E5m2,
        _ => MxElement::E4m3fn,
    };
    let (parts, f) = blocks(src)?;
    let (sparts, _) = sc.shape()?;
    let groups = f / 4;
    if scale_row(sparts, parts, 0).is_none() {
        return scale_rows_fault(Slot::Out(1), parts, sparts);
    }
    crate::exec::kit::same_count(
        Slot::Out(1),
        sparts * groups,
        sc.elements()?,
        "one scale per 4-value group in each scale row",
    )?;
    crate::exec::kit::same_count(
        Slot::Out(0),
        parts * f,
        dst.values()?,
        "the quantized values, four to a container",
    )?;
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(src, &mut v).and_then(|()| {
        let mut q = vec![0f32; v.len()];
        let mut s = vec![0u8; parts / 8 * groups];
        mx::quantize_blocks(&v, f, fmt, &mut q, &mut s);
        // The scale AP's bytes: blocks in their rows, other rows as they were.
        let mut bytes = vec![0u8; sparts * groups];
        let mut take = vec![false; sparts * groups];
        for (b, row) in s.chunks_exact(groups.max(1)).enumerate() {
            if let Some(r) = scale_row(sparts, parts, b) {
                bytes[r * groups..][..groups].copy_from_slice(row);
                take[r * groups..][..groups].fill(true);
            }
        }
        // Both outputs' bounds first: a fault writes neither.
        cx.check_access(dst)?;
        cx.check_access(sc)?;
        cx.write_f32(dst, &q, regions)?;
        cx.write_where(sc, &take, &bytes, regions)
    });
    cx.pool.give_f32(v);
    r
}

/// An MX operand (x4 data and its scales) dequantized to fp32 as a `4K × cols` matrix: row
/// `4k + q` holds lane q of partition k.
fn dequantized(cx: &mut Cx<'_>, data: Arg<'_>, scales: Arg<'_>) -> Res<(Vec<f32>, usize, usize)> {
    let (parts, _) = blocks(data)?;
    let cols = data.elements()? / parts.max(1);
    let (sparts, _) = scales.shape()?;
    if scale_row(sparts, parts, 0).is_none() {
        return scale_rows_fault(scales.slot, parts, sparts);
    }
    let why = "one scale per x4 column in each scale row";
    crate::exec::kit::same_count(scales.slot, sparts * cols, scales.elements()?, why)?;
    let (mut v, mut s) = (Vec::new(), Vec::new());
    cx.read_f32(data, &mut v)?;
    // E8M0 scales are their raw byte (re-facts §9.10), as are uint8 ones.
    cx.read_raw(scales, &mut s)?;
    let lanes = 4;
    let mut out = Vec::new();
    crate::alloc::resize(&mut out, parts * lanes * cols, 0.0)?;
    for k in 0..parts {
        let Some(srow) = scale_row(sparts, parts, k / 8) else { continue };
        for c in 0..cols {
            let sb = s.get(srow * cols + c).copied().unwrap_or(127);
            for q in 0..lanes {
                out[(k * lanes + q) * cols + c] = mx::dequantize(v[(k * cols + c) * lanes + q], sb);
            }
        }
    }
    Ok((out, parts * lanes, cols))
}

/// Runs one MatmultMx.
pub(crate) fn matmult(cx: &mut Cx<'_>, i: &Instruction, m: &MatmultFields, regions: &mut Written) -> Res<()> {
    let (mov, st, out) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    let (ms, ss) = (cx.input(i, 2)?, cx.input(i, 3)?);
    let (x, k, n) = dequantized(cx, mov, ms)?;
    let (w, k_st, m_len) = dequantized(cx, st, ss)?;
    crate::exec::kit::same_count(Slot::In(1), k, k_st, "the stationary's contraction rows, as the moving's")?;
    let form = Form::Plain(cx.options.matmul_order);
    cx.product_into_psum((&x, &w), (k, m_len, n), form, m.flags, out, regions)
}
