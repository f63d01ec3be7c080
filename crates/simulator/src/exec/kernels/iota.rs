//! Iota and TensorScalarAffineSelect: synthesis from coordinates (seed 000 §5.4 `doIota`;
//! docs/fidelity.md D5).
//!
//! The value of partition `p` at pattern coordinates `(w, z, y, x)` is
//! `int32(base + channel_multiplier·p + step_W·w + step_Z·z + step_Y·y + step_X·x)`, computed
//! with wrap-around (D5). A pattern of k pairs names the k innermost dims (X; Y,X; Z,Y,X;
//! W,Z,Y,X). Within a partition the flat order is the seed's loop order w, **y**, z, x:
//! `flat = ((w·nY + y)·nZ + z)·nX + x` (CONFIRMED; Y outside Z, unlike AP order).
//!
//! Iota writes the values cast from int32 to the output dtype; AffineSelect writes
//! `cmp(v, 0) ? in[e] : fill_value` (`ts_int_cmp_ops`, signed). Both compute into a reused buffer
//! and write once.
//!
//! AffineSelect into a packed `_x4` dtype (docs/fidelity.md K2): the affine index belongs to an
//! AP element, i.e. a container (lanes have no coordinate), so a container's 4 lanes share one
//! predicate: `out lane k = pred(container) ? in lane k : fill_value`, the fill cast to the lane
//! dtype in every lane. The input holds as many values as the output (an x4 input of as many
//! containers, or a one-lane input of 4× the elements, 4 consecutive values per container),
//! converted to the output dtype; the merge moves whole containers.

use crate::exec::kit::lanes::merge_bytes;
use crate::exec::kit::{Arg, Cx, Res, Written, fault, fnv1a, same_count};
use crate::fault::FaultCause;
use crate::memory::Touch;
use bir_ir::ops::{AffinePattern, AffineSelectFields, IotaFields};
use bir_ir::{AluOp, Dtype, Instruction};

/// `[step, num]` for W, Z, Y, X of a pattern (missing outer dims num 1, step 0).
pub(crate) fn wzyx(g: &AffinePattern) -> [(i64, i64); 4] {
    let mut d = [(0i64, 1i64); 4];
    let k = g.pattern.len().min(4);
    for (slot, pair) in d[4 - k..].iter_mut().zip(&g.pattern[g.pattern.len() - k..]) {
        *slot = (pair.step, pair.num);
    }
    d
}

/// The affine values of `parts` partitions, in the seed's flat order, appended to `out`.
pub(crate) fn affine_values(
    g: &AffinePattern,
    parts: usize,
    out: &mut Vec<i32>,
) -> Result<(), crate::alloc::OutOfMemory> {
    let [(sw, nw), (sz, nz), (sy, ny), (sx, nx)] = wzyx(g);
    let n = |v: i64| usize::try_from(v).unwrap_or(0);
    let (nw, nz, ny, nx) = (n(nw), n(nz), n(ny), n(nx));
    out.clear();
    let total = [nw, nz, ny, nx].iter().try_fold(parts, |a, d| a.checked_mul(*d));
    crate::alloc::reserve(out, total.unwrap_or(usize::MAX))?;
    let mul = |a: i64, b: usize| a.wrapping_mul(b as i64);
    for p in 0..parts {
        let vp = g.base.wrapping_add(mul(g.channel_multiplier, p));
        for w in 0..nw {
            let vw = vp.wrapping_add(mul(sw, w));
            for y in 0..ny {
                let vy = vw.wrapping_add(mul(sy, y));
                for z in 0..nz {
                    let vz = vy.wrapping_add(mul(sz, z));
                    out.extend((0..nx).map(|x| vz.wrapping_add(mul(sx, x)) as i32));
                }
            }
        }
    }
    Ok(())
}

/// `pred[e] = cmp(v[e], 0)` for a comparison op, one monomorphic pass.
fn compare(op: AluOp, v: &[i32], pred: &mut Vec<bool>) -> bool {
    fn go(v: &[i32], pred: &mut Vec<bool>, f: impl Fn(i32) -> bool) {
        pred.clear();
        pred.extend(v.iter().map(|&x| f(x)));
    }
    match op {
        AluOp::IsEqual => go(v, pred, |x| x == 0),
        AluOp::NotEqual => go(v, pred, |x| x != 0),
        AluOp::IsGt => go(v, pred, |x| x > 0),
        AluOp::IsGe => go(v, pred, |x| x >= 0),
        AluOp::IsLt => go(v, pred, |x| x < 0),
        AluOp::IsLe => go(v, pred, |x| x <= 0),
        _ => return false,
    }
    true
}

/// The affine values for an output AP, checking that the pattern covers its free size.
fn affine_for(out: Arg<'_>, g: &AffinePattern, vals: &mut Vec<i32>) -> Res<()> {
    let (parts, free) = out.shape()?;
    let covered = wzyx(g).iter().try_fold(1i64, |acc, d| if d.1 < 1 { None } else { acc.checked_mul(d.1) });
    if g.pattern.len() > 4 || covered.and_then(|c| usize::try_from(c).ok()) != Some(free) {
        return fault(FaultCause::Dims {
            slot: out.slot,
            why: "the pattern's nums must multiply to the output's elements per partition (at most 4 pairs)",
        });
    }
    Ok(affine_values(g, parts, vals)?)
}

/// Iota (§5.4).
pub(crate) fn iota(cx: &mut Cx<'_>, i: &Instruction, f: &IotaFields, regions: &mut Written) -> Res<()> {
    let out = cx.output(i, 0)?;
    if out.ap.dtype == Dtype::Int32 && iota_direct(cx, out, &f.generator, regions)? {
        return Ok(());
    }
    let mut vals = Vec::new();
    affine_for(out, &f.generator, &mut vals)?;
    let mut bytes = cx.pool.take();
    let r = crate::alloc::extend(&mut bytes, vals.len() * 4, vals.iter().flat_map(|v| v.to_le_bytes()))
        .map_err(Into::into)
        .and_then(|()| cx.write(out, Dtype::Int32, &bytes, regions));
    cx.pool.give(bytes);
    r
}

/// Iota into one contiguous int32 run: each partition's row is computed straight into the
/// output buffer, rows split across threads. The same values as [`affine_values`], in
/// wrapping i32 arithmetic (truncating i64 wrap-around to 32 bits commutes with + and ·).
/// Returns false when the output is not of that form (the general path then runs).
fn iota_direct(cx: &mut Cx<'_>, out: Arg<'_>, g: &AffinePattern, regions: &mut Written) -> Res<bool> {
    let Some(r) = cx.contiguous(out)? else { return Ok(false) };
    let (parts, free) = out.shape()?;
    let [(sw, nw), (sz, nz), (sy, ny), (sx, nx)] = wzyx(g);
    let n = |v: i64| usize::try_from(v).ok().filter(|&v| v > 0);
    let (Some(nw), Some(nz), Some(ny), Some(nx)) = (n(nw), n(nz), n(ny), n(nx)) else { return Ok(false) };
    let row = nw.checked_mul(nz).and_then(|v| v.checked_mul(ny)).and_then(|v| v.checked_mul(nx));
    if g.pattern.len() > 4 || row != Some(free) || r.len() != parts * free * 4 || free == 0 {
        return Ok(false); // the general path reports the mismatch
    }
    let t = |v: i64| v as i32; // truncation: D5's int32 wrap
    let (base, cm, sw, sz, sy, sx) = (t(g.base), t(g.channel_multiplier), t(sw), t(sz), t(sy), t(sx));
    let par = cx.options.parallelism;
    let touch = Touch { range: Some(r.clone()), covers: true };
    let (buf, _) = cx.memory.buffer_for(out.ap.loc, &touch);
    let rows = buf[r.clone()].as_chunks_mut::<4>().0;
    let mul = |a: i32, b: usize| a.wrapping_mul(b as i32);
    let _ = par.chunks(rows, free, |off, chunk| {
        for (k, prow) in chunk.chunks_exact_mut(free).enumerate() {
            let vp = base.wrapping_add(mul(cm, off / free + k));
            let mut runs = prow.chunks_exact_mut(nx);
            for w in 0..nw {
                for y in 0..ny {
                    for z in 0..nz {
                        let v0 =
                            vp.wrapping_add(mul(sw, w)).wrapping_add(mul(sy, y)).wrapping_add(mul(sz, z));
                        let Some(run) = runs.next() else { return Ok(()) };
                        for (x, e) in run.iter_mut().enumerate() {
                            *e = v0.wrapping_add(mul(sx, x)).to_le_bytes();
                        }
                    }
                }
            }
        }
        Ok::<(), ()>(())
    });
    let memory = &mut cx.memory;
    regions.record_region(|h| fnv1a(h, &memory.buffer_for(out.ap.loc, &touch).0[r.clone()]), r.len() as u64);
    Ok(true)
}

/// TensorScalarAffineSelect (§5.4): `out = cmp(v, 0) ? in : fill_value`.
pub(crate) fn affine_select(
    cx: &mut Cx<'_>,
    i: &Instruction,
    f: &AffineSelectFields,
    regions: &mut Written,
) -> Res<()> {
    let (src, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let dt = out.ap.dtype;
    let mut vals = Vec::new();
    affine_for(out, &f.generator, &mut vals)?;
    let mut pred = Vec::new();
    if !compare(f.compare_op, &vals, &mut pred) {
        return fault(FaultCause::UnsupportedOp {
            what: "TensorScalarAffineSelect's compare_op",
            op: f.compare_op,
        });
    }
    let fill = cx.f32_as(out, f.fill_value.get(), dt)?;
    // Values, not containers (K2): the input holds as many as the output.
    const WHY: &str = "the input holds one value per output value (4 per x4 container)";
    let n = vals.len() * dt.lanes();
    same_count(src.slot, n, src.values()?, WHY)?;
    let (mut data, mut o) = (cx.pool.take(), cx.pool.take());
    let r = cx.read(src, dt, &mut data).and_then(|()| {
        same_count(src.slot, n, numerics::codec::values_in(dt, data.len()), WHY)?;
        crate::alloc::extend(&mut o, data.len(), fill.iter().copied().cycle().take(data.len()))?;
        merge_bytes(&pred, &data, dt.size(), &mut o);
        cx.write(out, dt, &o, regions)
    });
    cx.pool.give(data);
    cx.pool.give(o);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use bir_ir::ApPair;

    fn g(base: i64, cm: i64, pairs: &[(i64, i64)]) -> AffinePattern {
        AffinePattern {
            base,
            pattern: pairs.iter().map(|&(s, n)| ApPair::new(s, n)).collect(),
            channel_multiplier: cm,
        }
    }

    #[test]
    fn one_pair_is_x_with_channel_multiplier() {
        // base 3, cm 4, X = [1, 4], 2 partitions: p0 3,4,5,6; p1 7,8,9,10.
        let mut v = Vec::new();
        affine_values(&g(3, 4, &[(1, 4)]), 2, &mut v).unwrap();
        assert_eq!(v, [3, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn three_pairs_run_y_outside_z() {
        // Pattern Z = [100, 2], Y = [10, 3], X = [1, 2]; the seed's order w, y, z, x:
        // y=0: z=0: 0,1; z=1: 100,101; y=1: 10,11, 110,111; y=2: 20,21, 120,121.
        let mut v = Vec::new();
        affine_values(&g(0, 0, &[(100, 2), (10, 3), (1, 2)]), 1, &mut v).unwrap();
        assert_eq!(v, [0, 1, 100, 101, 10, 11, 110, 111, 20, 21, 120, 121]);
    }

    #[test]
    fn values_wrap_to_int32() {
        // 2^31 − 1 + 1 wraps to −2^31 (D5).
        let mut v = Vec::new();
        affine_values(&g(i64::from(i32::MAX), 0, &[(1, 2)]), 1, &mut v).unwrap();
        assert_eq!(v, [i32::MAX, i32::MIN]);
    }

    #[test]
    fn compare_against_zero() {
        let mut p = Vec::new();
        assert!(compare(AluOp::IsGe, &[-1, 0, 1], &mut p));
        assert_eq!(p, [false, true, true]);
        assert!(compare(AluOp::IsLt, &[-1, 0, 1], &mut p));
        assert_eq!(p, [true, false, false]);
        assert!(!compare(AluOp::Add, &[0], &mut p));
    }
}
