//! The offset-list builders of seed 000 §6.2 and the bound policy (fidelity I2–I8, I10).
//!
//! A builder turns decoded indices into a [`Step`] list in apply order: which dense row (of the
//! destination for a gather, of the values for a scatter) goes with which table entry, the entry
//! named by the table element its first element is at. Skipped entries (−1, `num_indices` tails,
//! `num_valid_indices` tails, out-of-bounds under [`Oob::Skip`]) are simply left out. Every index
//! is checked here, before anything is written: under [`Oob::Fault`] the first bad index (in
//! apply order) is the error.

use crate::decode::SKIP;
use crate::{IndirectError, shape};
use bir_ir::{ApPair, IndirectDim};

/// One entry to apply: dense row `row` ↔ the table entry whose first element is `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The dense row (its elements are `row·L .. (row+1)·L` of the dense side).
    pub row: usize,
    /// The table element of the entry's first element.
    pub start: i64,
}

/// What to do with an index that is not −1 but lands outside the table (I2, ASSUMED).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Oob {
    /// Stop with an error naming the index (the default).
    #[default]
    Fault,
    /// Treat it like −1: its destination is left unchanged.
    Skip,
}

/// `apply_wrap` (seed 000 §6.3; I3): `v' = (v % n) + hi·(v / n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wrap {
    /// The divisor (≥ 1; validation refuses 0).
    pub n: u64,
    /// The high-part multiplier.
    pub hi: u64,
}

impl Wrap {
    /// The rebased value; `None` when it overflows 64 bits (or `n` is 0).
    #[inline]
    pub fn apply(self, v: u64) -> Option<u64> {
        let lo = v.checked_rem(self.n)?;
        self.hi.checked_mul(v / self.n)?.checked_add(lo)
    }
}

/// A table whose entries are `base + r·step` (IndirectLoad, IndirectSave: `step` is the table
/// AP's final-level step; IndirectSaveAccumulate: `entry_step_elements`), `r < entries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// The table AP's first element (its offset).
    pub base: i64,
    /// Elements between consecutive entries.
    pub step: i64,
    /// The bound V (the table AP's final-level num; I4).
    pub entries: u64,
    /// The entry's lowest element relative to its first (0 for a contiguous entry).
    pub entry_lo: i64,
    /// The entry's highest element relative to its first (L − 1 for a contiguous entry).
    pub entry_hi: i64,
    /// Elements the table's location holds (`Layout::capacity`).
    pub capacity: u64,
}

/// Where the bad index is, for the error.
#[derive(Clone, Copy)]
struct At {
    operand: usize,
    position: u64,
    value: u64,
}

/// The decision for one index under the policy: `Ok(None)` skips.
#[inline]
fn reject(oob: Oob, e: impl FnOnce() -> IndirectError) -> Result<Option<i64>, IndirectError> {
    match oob {
        Oob::Fault => Err(e()),
        Oob::Skip => Ok(None),
    }
}

/// The first element of an entry at element `start`, when all of it is inside the location.
#[inline]
fn place(
    start: i128,
    lo: i64,
    hi: i64,
    capacity: u64,
    at: At,
    oob: Oob,
) -> Result<Option<i64>, IndirectError> {
    let (a, b) = (start + i128::from(lo), start + i128::from(hi));
    if a >= 0 && b < i128::from(capacity) {
        // a ≥ 0 and b < capacity ≤ u64::MAX, and lo ≤ 0 ≤ hi, so start fits when a, b do.
        if let Ok(s) = i64::try_from(start) {
            return Ok(Some(s));
        }
    }
    reject(oob, || IndirectError::LeavesLocation {
        operand: at.operand,
        position: at.position,
        value: at.value,
        lo: a,
        hi: b,
        capacity,
    })
}

impl Table {
    /// The entry for decoded row index `v` (wrap, bound, location checks), `None` when skipped.
    #[inline]
    fn entry(&self, v: u64, wrap: Option<Wrap>, at: At, oob: Oob) -> Result<Option<i64>, IndirectError> {
        if v == SKIP {
            return Ok(None);
        }
        let r = match wrap {
            None => v,
            Some(w) => match w.apply(v) {
                Some(r) => r,
                None => {
                    return reject(oob, || IndirectError::WrapOverflow {
                        operand: at.operand,
                        position: at.position,
                        value: v,
                        n: w.n,
                        hi: w.hi,
                    });
                }
            },
        };
        if r >= self.entries {
            return reject(oob, || IndirectError::OutOfBounds {
                operand: at.operand,
                position: at.position,
                value: v,
                bound: self.entries,
                along: None,
                wrapped: wrap.map(|_| r),
            });
        }
        let start = i128::from(self.base) + i128::from(r) * i128::from(self.step);
        place(start, self.entry_lo, self.entry_hi, self.capacity, at, oob)
    }
}

/// IndirectLoad / IndirectSave: dense row `j` ↔ entry `idx[j]`, in index order (seed 000 §6.2
/// "plain gather"). `operand` is the index operand's `ins` slot.
pub fn rows(
    idx: &[u64],
    table: &Table,
    wrap: Option<Wrap>,
    oob: Oob,
    operand: usize,
    plan: &mut Vec<Step>,
) -> Result<(), IndirectError> {
    plan.clear();
    plan.reserve(idx.len());
    for (j, &v) in idx.iter().enumerate() {
        let at = At { operand, position: j as u64, value: v };
        if let Some(start) = table.entry(v, wrap, at, oob)? {
            plan.push(Step { row: j, start });
        }
    }
    Ok(())
}

/// IndirectSaveAccumulate (seed 000 §6.2, the 2-D build): the index operand's `partitions`
/// partitions each hold `E = idx.len() / partitions` slots, slot (p, e) = `idx[p·E + e]` and
/// values row `p·E + e`; slots with `e ≥ num_indices` are −1. Applied entry-major, `for e { for
/// p }` (I6). `num_indices > E` is "insufficient indices" (I5).
#[expect(clippy::too_many_arguments, reason = "the instruction's geometry, each named")]
pub fn save_accumulate(
    idx: &[u64],
    partitions: usize,
    num_indices: u64,
    table: &Table,
    wrap: Option<Wrap>,
    oob: Oob,
    operand: usize,
    plan: &mut Vec<Step>,
) -> Result<(), IndirectError> {
    plan.clear();
    if partitions == 0 || !idx.len().is_multiple_of(partitions) {
        return shape(format!("{} indices do not split into {partitions} partitions", idx.len()));
    }
    let per = idx.len() / partitions;
    if num_indices > per as u64 {
        return Err(IndirectError::InsufficientIndices { num_indices, available: per as u64 });
    }
    let used = num_indices as usize;
    plan.reserve(used * partitions);
    for e in 0..used {
        for p in 0..partitions {
            let k = p * per + e;
            let v = idx.get(k).copied().unwrap_or(SKIP);
            let at = At { operand, position: k as u64, value: v };
            if let Some(start) = table.entry(v, wrap, at, oob)? {
                plan.push(Step { row: k, start });
            }
        }
    }
    Ok(())
}

/// One GenericIndirect index operand: its decoded indices and the level it drives.
#[derive(Clone, Copy, Debug)]
pub struct GenericDim<'a> {
    /// The decoded indices (K of them, AP order).
    pub idx: &'a [u64],
    /// The `ins` slot of the operand.
    pub operand: usize,
    /// The dim letter (for messages).
    pub dim: IndirectDim,
    /// The table AP level it drives.
    pub level: usize,
}

/// A GenericIndirect table AP taken apart (seed 000 §6.2): per indirect level its coefficient
/// `coef_d = Π_{l > d} N_l` and bound `N_d`, and the entry walk (the non-indirect levels, with
/// their own steps, in AP order; one `[1, 1]` level when every level is indirect).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenericGeometry {
    /// Per table level: the product of the nums of the levels inboard of it.
    pub coefs: Vec<u64>,
    /// The table AP's nums.
    pub nums: Vec<u64>,
    /// The entry walk, relative to the entry's first element.
    pub entry: Vec<ApPair>,
    /// Elements per entry (L).
    pub len: usize,
}

impl GenericGeometry {
    /// The geometry of a table AP `pairs` whose `levels` are indirect.
    pub fn new(pairs: &[ApPair], levels: &[usize]) -> Result<GenericGeometry, IndirectError> {
        let nums: Vec<u64> = pairs.iter().map(|p| u64::try_from(p.num).unwrap_or(0)).collect();
        let mut coefs = vec![0u64; nums.len()];
        let mut acc: u64 = 1;
        for l in (0..nums.len()).rev() {
            coefs[l] = acc;
            acc = acc.saturating_mul(nums[l]);
        }
        let entry: Vec<ApPair> =
            pairs.iter().enumerate().filter(|(l, _)| !levels.contains(l)).map(|(_, p)| *p).collect();
        let entry = if entry.is_empty() { vec![ApPair::new(1, 1)] } else { entry };
        let len = entry.iter().try_fold(1usize, |n, p| n.checked_mul(usize::try_from(p.num).ok()?));
        let Some(len) = len else { return shape("the table's entry length overflows") };
        Ok(GenericGeometry { coefs, nums, entry, len })
    }

    /// The entry walk's lowest and highest element relative to its first.
    pub fn entry_span(&self) -> (i64, i64) {
        span(&self.entry)
    }
}

/// The lowest and highest element offset (relative to 0) a walk reaches (saturating).
pub fn span(pairs: &[ApPair]) -> (i64, i64) {
    let (mut lo, mut hi) = (0i64, 0i64);
    for p in pairs {
        let d = p.step.saturating_mul(p.num.saturating_sub(1));
        if d < 0 {
            lo = lo.saturating_add(d);
        } else {
            hi = hi.saturating_add(d);
        }
    }
    (lo, hi)
}

/// GenericIndirectLoad / Save: entry `j` starts at `base + Σ_k coef_{d_k}·idx_k[j]` (wrap on the
/// sum), dense row `j`. −1 in any dim skips the entry (I8); a dim's index must be below its
/// level's num (I7).
pub fn generic(
    dims: &[GenericDim<'_>],
    geometry: &GenericGeometry,
    base: i64,
    capacity: u64,
    wrap: Option<Wrap>,
    oob: Oob,
    plan: &mut Vec<Step>,
) -> Result<(), IndirectError> {
    plan.clear();
    let Some(k) = dims.first().map(|d| d.idx.len()) else { return shape("no index operands") };
    if dims.iter().any(|d| d.idx.len() != k) {
        return shape("the index operands hold different numbers of indices");
    }
    let (lo, hi) = geometry.entry_span();
    plan.reserve(k);
    'entries: for j in 0..k {
        if dims.iter().any(|d| d.idx.get(j) == Some(&SKIP)) {
            continue;
        }
        let mut o: u128 = 0;
        for d in dims {
            let v = d.idx.get(j).copied().unwrap_or(SKIP);
            let bound = geometry.nums.get(d.level).copied().unwrap_or(0);
            if v >= bound {
                match oob {
                    Oob::Fault => {
                        return Err(IndirectError::OutOfBounds {
                            operand: d.operand,
                            position: j as u64,
                            value: v,
                            bound,
                            along: Some(d.dim),
                            wrapped: None,
                        });
                    }
                    Oob::Skip => continue 'entries,
                }
            }
            let coef = geometry.coefs.get(d.level).copied().unwrap_or(0);
            o += u128::from(coef) * u128::from(v);
        }
        let first = dims[0];
        let at =
            At { operand: first.operand, position: j as u64, value: first.idx.get(j).copied().unwrap_or(0) };
        let o = match u64::try_from(o).ok().and_then(|o| wrap.map_or(Some(o), |w| w.apply(o))) {
            Some(o) => o,
            None if oob == Oob::Skip => continue,
            None => {
                let w = wrap.unwrap_or(Wrap { n: 1, hi: 1 });
                return Err(IndirectError::WrapOverflow {
                    operand: at.operand,
                    position: at.position,
                    value: at.value,
                    n: w.n,
                    hi: w.hi,
                });
            }
        };
        if let Some(start) = place(i128::from(base) + i128::from(o), lo, hi, capacity, at, oob)? {
            plan.push(Step { row: j, start });
        }
    }
    Ok(())
}

/// IndirectCopy (NKI local_gather; I10): `partitions` (a multiple of 16) partitions each hold
/// `per` indices (`idx` in AP order); core `c` owns partitions `16c..16c+16` and its list is their
/// indices partition-first, `k = j·16 + q`. For every partition `p` of the core and
/// `k < min(16·per, num_valid)`: dense row `p·16·per + k` ← the partition's source row `idx_k`,
/// i.e. flat source element `p·src_per + idx_k·len`. A row ≥ `src_rows` is out of bounds.
#[expect(clippy::too_many_arguments, reason = "the instruction's geometry, each named")]
pub fn indirect_copy(
    idx: &[u64],
    partitions: usize,
    num_valid: u64,
    src_rows: u64,
    src_per: usize,
    len: usize,
    oob: Oob,
    operand: usize,
    plan: &mut Vec<Step>,
) -> Result<(), IndirectError> {
    plan.clear();
    if partitions == 0 || !partitions.is_multiple_of(16) || !idx.len().is_multiple_of(partitions) {
        return shape(format!("IndirectCopy needs a multiple of 16 partitions, found {partitions}"));
    }
    let per = idx.len() / partitions;
    let k_all = 16 * per;
    let k_used = k_all.min(usize::try_from(num_valid).unwrap_or(usize::MAX));
    for c in 0..partitions / 16 {
        for k in 0..k_used {
            let (j, q) = (k / 16, k % 16);
            let position = (16 * c + q) * per + j;
            let v = idx.get(position).copied().unwrap_or(u64::MAX);
            if v >= src_rows {
                match oob {
                    Oob::Fault => {
                        return Err(IndirectError::OutOfBounds {
                            operand,
                            position: position as u64,
                            value: v,
                            bound: src_rows,
                            along: None,
                            wrapped: None,
                        });
                    }
                    Oob::Skip => continue,
                }
            }
            for p in 16 * c..16 * c + 16 {
                let start = p * src_per + v as usize * len;
                plan.push(Step { row: p * k_all + k, start: start as i64 });
            }
        }
    }
    Ok(())
}

/// Gather (seed 004 nc_n_gather; I11): per partition `p`, dense element `p·per + k` ← flat source
/// element `p·src_per + idx[p·per + k]`; an index ≥ `src_per` is out of bounds.
pub fn gather_rows(
    idx: &[u64],
    partitions: usize,
    src_per: usize,
    oob: Oob,
    operand: usize,
    plan: &mut Vec<Step>,
) -> Result<(), IndirectError> {
    plan.clear();
    if partitions == 0 || !idx.len().is_multiple_of(partitions) {
        return shape(format!("{} indices do not split into {partitions} partitions", idx.len()));
    }
    let per = idx.len() / partitions;
    plan.reserve(idx.len());
    for (k, &v) in idx.iter().enumerate() {
        if v >= src_per as u64 {
            match oob {
                Oob::Fault => {
                    return Err(IndirectError::OutOfBounds {
                        operand,
                        position: k as u64,
                        value: v,
                        bound: src_per as u64,
                        along: None,
                        wrapped: None,
                    });
                }
                Oob::Skip => continue,
            }
        }
        let p = k / per.max(1);
        plan.push(Step { row: k, start: (p * src_per + v as usize) as i64 });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// 8 entries of 2 consecutive elements (base 0, step 2) in a 16-element location.
    const T8: Table = Table { base: 0, step: 2, entries: 8, entry_lo: 0, entry_hi: 1, capacity: 16 };

    fn starts(idx: &[u64], oob: Oob) -> Result<Vec<(usize, i64)>, IndirectError> {
        let mut plan = Vec::new();
        rows(idx, &T8, None, oob, 1, &mut plan)?;
        Ok(plan.iter().map(|s| (s.row, s.start)).collect())
    }

    /// The VAL sweep of re-facts §8, worked by hand: entry r starts at element 2r.
    #[rstest]
    #[case::sequential(&[0, 1, 2, 3, 4, 5, 6, 7], &[(0, 0), (1, 2), (2, 4), (3, 6), (4, 8), (5, 10), (6, 12), (7, 14)])]
    #[case::all_same(&[3, 3, 3], &[(0, 6), (1, 6), (2, 6)])]
    #[case::reverse(&[7, 6, 5, 4, 3, 2, 1, 0], &[(0, 14), (1, 12), (2, 10), (3, 8), (4, 6), (5, 4), (6, 2), (7, 0)])]
    #[case::zero(&[0], &[(0, 0)])]
    #[case::last_in_bounds(&[7], &[(0, 14)])]
    #[case::colliding_pairs(&[1, 1, 2, 2], &[(0, 2), (1, 2), (2, 4), (3, 4)])]
    #[case::skips(&[SKIP, 2, SKIP], &[(1, 4)])]
    fn val_sweep(#[case] idx: &[u64], #[case] want: &[(usize, i64)]) {
        assert_eq!(starts(idx, Oob::Fault).unwrap(), want);
        assert_eq!(starts(idx, Oob::Skip).unwrap(), want);
    }

    #[rstest]
    #[case::one_past_end(&[8], 0, 8)]
    #[case::all_oob(&[8, 9, 100], 0, 8)]
    #[case::mixed_oob(&[1, 9, 2, 8], 1, 9)]
    #[case::int32_minus_one(&[0xFFFF_FFFF], 0, 0xFFFF_FFFF)]
    fn val_sweep_out_of_bounds(#[case] idx: &[u64], #[case] position: u64, #[case] value: u64) {
        let e = starts(idx, Oob::Fault).unwrap_err();
        assert_eq!(
            e,
            IndirectError::OutOfBounds { operand: 1, position, value, bound: 8, along: None, wrapped: None }
        );
        assert!(e.to_string().contains(&format!(
            "index ins[1] element {position} = {value} is outside the table's 8 entries"
        )));
        // Skip keeps only the in-bounds entries, in order.
        let kept: Vec<(usize, i64)> =
            idx.iter().enumerate().filter(|(_, v)| **v < 8).map(|(j, v)| (j, 2 * *v as i64)).collect();
        assert_eq!(starts(idx, Oob::Skip).unwrap(), kept);
    }

    /// An entry that would leave the location is out of bounds even when r < V.
    #[test]
    fn entry_leaving_the_location() {
        let t = Table { capacity: 15, ..T8 };
        let mut plan = Vec::new();
        let e = rows(&[6, 7], &t, None, Oob::Fault, 2, &mut plan).unwrap_err();
        assert!(
            matches!(
                e,
                IndirectError::LeavesLocation {
                    operand: 2,
                    position: 1,
                    value: 7,
                    lo: 14,
                    hi: 15,
                    capacity: 15
                }
            ),
            "{e:?}"
        );
        rows(&[6, 7], &t, None, Oob::Skip, 2, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 0, start: 12 }]);
    }

    /// v' = v % n + hi·(v / n), before the bound: n 3, hi 2: 4 → 1 + 2 = 3; 7 → 1 + 4 = 5;
    /// 10 → 1 + 6 = 7; 12 → 0 + 8 = 8 ≥ 8.
    #[test]
    fn wrap_rebases_before_the_bound() {
        let w = Some(Wrap { n: 3, hi: 2 });
        let mut plan = Vec::new();
        rows(&[4, 7, 10], &T8, w, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.iter().map(|s| s.start).collect::<Vec<_>>(), [6, 10, 14]);
        let e = rows(&[12], &T8, w, Oob::Fault, 1, &mut plan).unwrap_err();
        assert!(e.to_string().ends_with("(after wrap: 8)"), "{e}");
        assert_eq!(Wrap { n: 1, hi: u64::MAX }.apply(2), None, "overflow");
        assert!(rows(&[2], &T8, Some(Wrap { n: 1, hi: u64::MAX }), Oob::Fault, 1, &mut plan).is_err());
        assert_eq!(Wrap { n: 0, hi: 1 }.apply(5), None);
    }

    /// P = 2, E = 3, num_indices 2: slot (p, e) = idx[3p + e], applied e-major; e = 2 skipped.
    #[test]
    fn save_accumulate_is_entry_major() {
        let t = Table { step: 1, entries: 16, entry_hi: 0, ..T8 };
        let idx = [10, 11, 12, 13, 14, 15];
        let mut plan = Vec::new();
        save_accumulate(&idx, 2, 2, &t, None, Oob::Fault, 1, &mut plan).unwrap();
        let got: Vec<(usize, i64)> = plan.iter().map(|s| (s.row, s.start)).collect();
        assert_eq!(got, [(0, 10), (3, 13), (1, 11), (4, 14)]);
        let e = save_accumulate(&idx, 2, 4, &t, None, Oob::Fault, 1, &mut plan).unwrap_err();
        assert_eq!(e, IndirectError::InsufficientIndices { num_indices: 4, available: 3 });
        assert!(e.to_string().contains("insufficient indices"));
    }

    /// Table [[4, 3], [1, 4]] (3 × 4), dims W and X: coef W = 4, X = 1; −1 in either skips.
    #[test]
    fn generic_sums_coefficients() {
        let pairs = [ApPair::new(4, 3), ApPair::new(1, 4)];
        let g = GenericGeometry::new(&pairs, &[0, 1]).unwrap();
        assert_eq!((g.coefs.clone(), g.len), (vec![4, 1], 1));
        let (w, x) = ([2, 0, SKIP, 1], [3, 1, 0, SKIP]);
        let dims = [
            GenericDim { idx: &w, operand: 1, dim: IndirectDim::W, level: 0 },
            GenericDim { idx: &x, operand: 2, dim: IndirectDim::X, level: 1 },
        ];
        let mut plan = Vec::new();
        generic(&dims, &g, 0, 12, None, Oob::Fault, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 0, start: 11 }, Step { row: 1, start: 1 }]);
        // X = 4 of 4 is out of bounds along X, even though 4 < 12.
        let x = [4];
        let w = [0];
        let dims = [
            GenericDim { idx: &w, operand: 1, dim: IndirectDim::W, level: 0 },
            GenericDim { idx: &x, operand: 2, dim: IndirectDim::X, level: 1 },
        ];
        let e = generic(&dims, &g, 0, 12, None, Oob::Fault, &mut plan).unwrap_err();
        assert!(
            e.to_string().contains("ins[2] element 0 = 4 is outside the table's 4 entries along X"),
            "{e}"
        );
        // Only X indirect: the entry walks W with its step: [4, 3].
        let g = GenericGeometry::new(&pairs, &[1]).unwrap();
        assert_eq!((g.entry.clone(), g.len, g.entry_span()), (vec![ApPair::new(4, 3)], 3, (0, 8)));
    }

    /// 16 partitions, 2 indices each: core list k = j·16 + q (column-major).
    #[test]
    fn indirect_copy_blocks_are_column_major() {
        // idx[q][0] = q % 2 (row 0 or 1), idx[q][1] = 2.
        let mut idx = vec![0u64; 32];
        for q in 0..16 {
            idx[2 * q] = (q % 2) as u64;
            idx[2 * q + 1] = 2;
        }
        let mut plan = Vec::new();
        // 3 rows of 4 per partition (src_per 12), num_valid 17.
        indirect_copy(&idx, 16, 17, 3, 12, 4, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.len(), 17 * 16);
        // k = 1 → partition q = 1's first index (row 1); for partition 5 that is start 5·12 + 4.
        let at = |p: usize, k: usize| plan.iter().find(|s| s.row == p * 32 + k).map(|s| s.start);
        assert_eq!(at(5, 1), Some(64));
        assert_eq!(at(5, 0), Some(60));
        assert_eq!(at(5, 16), Some(60 + 8), "k = 16 is partition 0's second index: row 2");
        assert_eq!(at(5, 17), None, "past num_valid_indices");
        // 3 of 3 rows is out of bounds, named by its position in the index AP.
        idx[7] = 3;
        let e = indirect_copy(&idx, 16, 32, 3, 12, 4, Oob::Fault, 1, &mut plan).unwrap_err();
        assert!(e.to_string().contains("element 7 = 3 is outside the table's 3 entries"), "{e}");
        assert!(indirect_copy(&idx, 8, 32, 3, 12, 4, Oob::Fault, 1, &mut plan).is_err(), "8 partitions");
    }

    #[test]
    fn gather_is_per_partition() {
        let mut plan = Vec::new();
        gather_rows(&[3, 0, 1, 1], 2, 4, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.iter().map(|s| s.start).collect::<Vec<_>>(), [3, 0, 5, 5]);
        assert!(gather_rows(&[4, 0], 1, 4, Oob::Fault, 1, &mut plan).is_err());
        gather_rows(&[4, 0], 1, 4, Oob::Skip, 1, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 1, start: 0 }]);
    }
}
