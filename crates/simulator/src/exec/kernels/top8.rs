//! The VectorE's top-8 family (AWS `nki.isa.max8`, `nc_find_index8`, `nc_match_replace8`;
//! re-facts §7; docs/fidelity.md Q5–Q7). Each partition row is searched on its own, values
//! compared as fp32 (`numerics::top8`); a row holds 8 to 16384 elements (AWS).
//!
//! - Max (88): `ins = [src]`, `outs = [8 per row]`: the eight largest values, descending.
//! - MaxIndex (89): `ins = [data, vals (8 per row)]`, `outs = [8 per row, uint32 or uint16]`: each
//!   value's first unclaimed position, all-ones when missing.
//! - MatchReplace (90): `ins = [data, vals]`, `outs = [dst]`: data with the matched positions
//!   (vals taken in reverse order, AWS's docstring) replaced by `imm_value`.
//! - MaxIndexAndMatchReplace (91): MatchReplace plus `outs[1]`, the matched positions.

use crate::exec::kit::{Arg, Cx, Res, Written, fault, same_count};
use crate::fault::{FaultCause, Slot};
use bir_ir::ops::MatchReplaceFields;
use bir_ir::{Dtype, Instruction};
use numerics::top8;

/// The elements per partition row AWS allows the family.
const ROW: std::ops::RangeInclusive<usize> = 8..=16384;

/// The rows of `src` and their length, checked against [`ROW`].
fn rows(src: Arg<'_>) -> Res<(usize, usize)> {
    let (parts, n) = src.shape()?;
    let n = n * src.ap.dtype.lanes();
    if !ROW.contains(&n) {
        return fault(FaultCause::Count {
            slot: src.slot,
            expected: if n < *ROW.start() { 8 } else { 16384 } as u64,
            actual: n as u64,
            why: "the top-8 instructions read 8 to 16384 elements per partition row",
        });
    }
    Ok((parts, n))
}

/// Runs one Max.
pub(crate) fn max(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    rows(src)?;
    let why = "the eight largest values of each partition row";
    cx.map_rows(src, dst, 8, why, |row, out| out.copy_from_slice(&top8::max8(row)), regions)
}

/// The data rows and each row's eight values, read as fp32.
fn data_and_vals(cx: &mut Cx<'_>, i: &Instruction) -> Res<(Vec<f32>, Vec<[f32; 8]>, usize)> {
    let (src, vals) = (cx.input(i, 0)?, cx.input(i, 1)?);
    let (parts, n) = rows(src)?;
    same_count(vals.slot, parts * 8, vals.values()?, "eight values per partition row of the data")?;
    let (mut data, mut v) = (Vec::new(), Vec::new());
    cx.read_f32(src, &mut data)?;
    cx.read_f32(vals, &mut v)?;
    let per_row = v.chunks_exact(8).map(|c| std::array::from_fn(|k| c[k])).collect();
    Ok((data, per_row, n))
}

/// Positions as the index output's dtype: little-endian uint32 or uint16, all-ones for none
/// (validation allows only these two dtypes).
fn index_bytes(idx: &[Option<usize>], dt: Dtype) -> Vec<u8> {
    match dt {
        Dtype::Uint16 => idx.iter().flat_map(|j| j.map_or(u16::MAX, |j| j as u16).to_le_bytes()).collect(),
        _ => idx.iter().flat_map(|j| j.map_or(u32::MAX, |j| j as u32).to_le_bytes()).collect(),
    }
}

/// Runs one MaxIndex.
pub(crate) fn max_index(cx: &mut Cx<'_>, i: &Instruction, regions: &mut Written) -> Res<()> {
    let dst = cx.output(i, 0)?;
    let (data, vals, n) = data_and_vals(cx, i)?;
    let idx: Vec<Option<usize>> =
        data.chunks_exact(n).zip(&vals).flat_map(|(row, v)| top8::find_index8(row, v)).collect();
    cx.write(dst, dst.ap.dtype, &index_bytes(&idx, dst.ap.dtype), regions)
}

/// Runs one MatchReplace (`with_index` false) or MaxIndexAndMatchReplace (true).
fn match_replace(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &MatchReplaceFields,
    with_index: bool,
    regions: &mut Written,
) -> Res<()> {
    let dst = cx.output(i, 0)?;
    let idx_out = if with_index { Some(cx.output(i, 1)?) } else { None };
    let (mut data, vals, n) = data_and_vals(cx, i)?;
    // Both outputs' counts are checked before either is written.
    let why = "the replaced data, as many values as ins[0]";
    same_count(Slot::Out(0), data.len(), dst.values()?, why)?;
    if let Some(o) = idx_out {
        same_count(Slot::Out(1), vals.len() * 8, o.values()?, "eight positions per partition row")?;
    }
    let mut idx = Vec::with_capacity(vals.len() * 8);
    for (row, v) in data.chunks_exact_mut(n).zip(&vals) {
        let m = top8::match_index8(row, v);
        for j in m.iter().flatten() {
            row[*j] = f.imm_value.get();
        }
        idx.extend(m);
    }
    if let Some(o) = idx_out {
        // Both outputs' bounds first: a fault writes neither.
        cx.check_access(dst)?;
        cx.check_access(o)?;
    }
    cx.write_f32(dst, &data, regions)?;
    match idx_out {
        Some(o) => cx.write(o, o.ap.dtype, &index_bytes(&idx, o.ap.dtype), regions),
        None => Ok(()),
    }
}

/// Runs one MatchReplace.
pub(crate) fn replace(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &MatchReplaceFields,
    regions: &mut Written,
) -> Res<()> {
    match_replace(cx, i, f, false, regions)
}

/// Runs one MaxIndexAndMatchReplace.
pub(crate) fn index_and_replace(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &MatchReplaceFields,
    regions: &mut Written,
) -> Res<()> {
    match_replace(cx, i, f, true, regions)
}
