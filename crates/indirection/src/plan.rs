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
use bir_ir::ApPair;

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

/// A table whose entry `r` starts at element `base + r·step` and spans `lo..=hi` relative to
/// that start. The indirect ops' entries are the `len` contiguous elements from there
/// ([`Table::contiguous`]; seed 000 §6.1: the index is scaled "by `qword_5F4500[dataDtype]` *
/// `Pattern[final].step`", and §6.3 copies `entrySize` bytes with one `memcpy`): no table shape is
/// refused and no entry count bounds `r`, an entry is out of bounds only when it leaves the
/// table's memory location (I2, I4). The HW-DGE bridge's entries are a row walk, and its index
/// is also bounded by `indirect_dim_max_index` (seed 000 §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// The table AP's first element (its offset).
    pub base: i64,
    /// Elements between consecutive entries.
    pub step: i64,
    /// The entry's lowest element relative to its start (0 for a contiguous entry).
    pub lo: i64,
    /// The entry's highest element relative to its start (L − 1 for a contiguous entry).
    pub hi: i64,
    /// An index at or past this is out of bounds (the HW-DGE bridge's max index); `None`: only
    /// the location bounds the entries.
    pub bound: Option<u64>,
    /// Elements the table's location holds (`Layout::capacity`).
    pub capacity: u64,
}

impl Table {
    /// IndirectLoad / IndirectSave / IndirectSaveAccumulate: entries of `len` contiguous
    /// elements `step` apart from `base`, bounded only by the location.
    pub fn contiguous(base: i64, step: i64, len: u64, capacity: u64) -> Table {
        let hi = i64::try_from(len.max(1) - 1).unwrap_or(i64::MAX);
        Table { base, step, lo: 0, hi, bound: None, capacity }
    }
}

/// Where the bad index is, for the error.
#[derive(Clone, Copy)]
struct At {
    operand: usize,
    position: u64,
    value: u64,
    /// The value as its dtype reads it, when the builder knows it (GenericIndirect's combined
    /// offset is a signed 64-bit sum).
    stored: Option<i128>,
}

/// The decision for one index under the policy: `Ok(None)` skips.
#[inline]
fn reject(oob: Oob, e: impl FnOnce() -> IndirectError) -> Result<Option<i64>, IndirectError> {
    match oob {
        Oob::Fault => Err(e()),
        Oob::Skip => Ok(None),
    }
}

/// The start of the entry at element `start` (spanning `start + lo ..= start + hi`), when all
/// of it is inside the location (I2).
#[inline]
fn place(
    start: i128,
    lo: i64,
    hi: i64,
    capacity: u64,
    at: At,
    oob: Oob,
) -> Result<Option<i64>, IndirectError> {
    let (a, b) = (start.saturating_add(i128::from(lo)), start.saturating_add(i128::from(hi)));
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
        stored: at.stored,
        lo: a,
        hi: b,
        capacity,
    })
}

/// The lowest and highest element offset (relative to 0) a walk reaches
/// (saturating).
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

/// `apply_wrap` on `v`, or the overflow under the policy.
#[inline]
fn wrapped(v: u64, wrap: Option<Wrap>, at: At, oob: Oob) -> Result<Option<u64>, IndirectError> {
    let Some(w) = wrap else { return Ok(Some(v)) };
    match w.apply(v) {
        Some(r) => Ok(Some(r)),
        None => match oob {
            Oob::Skip => Ok(None),
            Oob::Fault => Err(IndirectError::WrapOverflow {
                operand: at.operand,
                position: at.position,
                value: at.value,
                stored: at.stored,
                n: w.n,
                hi: w.hi,
            }),
        },
    }
}

impl Table {
    /// The entry for decoded row index `v` (wrap, then the location check), `None` when
    /// skipped. `sentinel`: −1 ([`SKIP`]) skips (the §6.1 decode's −1); IndirectSaveAccumulate's
    /// slots carry no sentinel of their own (§6.2 rebases the table base, not the index).
    #[inline]
    fn entry(
        &self,
        v: u64,
        sentinel: bool,
        wrap: Option<Wrap>,
        at: At,
        oob: Oob,
    ) -> Result<Option<i64>, IndirectError> {
        if sentinel && v == SKIP {
            return Ok(None);
        }
        let Some(r) = wrapped(v, wrap, at, oob)? else { return Ok(None) };
        if let Some(bound) = self.bound
            && r >= bound
        {
            return reject(oob, || IndirectError::OutOfBounds {
                operand: at.operand,
                position: at.position,
                value: v,
                stored: at.stored,
                bound,
            });
        }
        let start = i128::from(self.base).saturating_add(i128::from(r).saturating_mul(i128::from(self.step)));
        place(start, self.lo, self.hi, self.capacity, at, oob)
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
        let at = At { operand, position: j as u64, value: v, stored: None };
        if let Some(start) = table.entry(v, true, wrap, at, oob)? {
            plan.push(Step { row: j, start });
        }
    }
    Ok(())
}

/// IndirectSaveAccumulate (seed 000 §6.2, the 2-D build): the index operand's `partitions`
/// partitions each hold `E = idx.len() / partitions` slots, slot (p, e) = `idx[p·E + e]` and
/// values row `p·E + e`; slots with `e ≥ num_indices` are −1 (skipped). Applied entry-major,
/// `for e { for p }` (I6). `num_indices > E` is "insufficient indices" (I5). The indices are
/// plain row numbers ([`decode::decode_accumulate_indices`](crate::decode::decode_accumulate_indices)):
/// a stored value is never the −1 sentinel, whatever its bits.
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
            let Some(&v) = idx.get(k) else { return shape("an index slot past the index operand") };
            let at = At { operand, position: k as u64, value: v, stored: None };
            if let Some(start) = table.entry(v, false, wrap, at, oob)? {
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
    /// The table AP level it drives.
    pub level: usize,
}

/// A GenericIndirect table AP taken apart (seed 000 §6.2): per level its coefficient
/// `coef_d = Π_{l > d} N_l` (nums, not steps) and the entry length L, the product of the
/// non-indirect levels' nums (1 when every level is indirect). An entry is one contiguous run of
/// L elements (§6.3's `memcpy` of `entrySize` bytes), not a walk of the other levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenericGeometry {
    /// Per table level: the product of the nums of the levels inboard of it.
    pub coefs: Vec<u64>,
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
        let len = nums
            .iter()
            .enumerate()
            .filter(|(l, _)| !levels.contains(l))
            .try_fold(1usize, |n, (_, &m)| n.checked_mul(usize::try_from(m).ok()?));
        let Some(len) = len else { return shape("the table's entry length overflows") };
        Ok(GenericGeometry { coefs, len })
    }
}

/// GenericIndirectLoad / Save: entry `j` is the L contiguous elements from `base + O_j`,
/// `O_j = Σ_k coef_{d_k}·idx_k[j]` in 64-bit wrapping arithmetic, dense row `j`. −1 is tested
/// on the combined offset, as §6.3's loop tests its final offset list (I8): `O_j = −1` skips; a
/// −1 in one dim whose sum is not −1 is just a huge offset. `wrap` rebases `O_j` (after the
/// test, §6.3), and the entry must lie inside the table's location (I2, I7): no per-dim bound.
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
    plan.reserve(k);
    for j in 0..k {
        let mut o: u64 = 0;
        for d in dims {
            let v = d.idx.get(j).copied().unwrap_or(0);
            let coef = geometry.coefs.get(d.level).copied().unwrap_or(0);
            o = o.wrapping_add(coef.wrapping_mul(v));
        }
        if o == SKIP {
            continue;
        }
        let at =
            At { operand: dims[0].operand, position: j as u64, value: o, stored: Some(i128::from(o as i64)) };
        let Some(o) = wrapped(o, wrap, at, oob)? else { continue };
        let start = i128::from(base).saturating_add(i128::from(o));
        let hi = i64::try_from(geometry.len.max(1) - 1).unwrap_or(i64::MAX);
        if let Some(start) = place(start, 0, hi, capacity, at, oob)? {
            plan.push(Step { row: j, start });
        }
    }
    Ok(())
}

/// IndirectCopy (NKI local_gather; I10): `partitions` (a multiple of 16) partitions each hold
/// `per` indices (`idx` in AP order); core `c` owns partitions `16c..16c+16` and its list is their
/// indices partition-first, `k = j·16 + q`. An index is an **element offset** inside the
/// partition's own source (AWS local_gather: "`num_elem_per_idx` contiguous elements of its own
/// partition starting at element offset k"; seed 004 §5's cross-check bounds `idx + E`). For
/// every partition `p` of the core and `k < min(16·per, num_valid)`: dense row `p·16·per + k`
/// (of `len` = E elements) ← the partition's source elements `[idx_k, idx_k + E)`, i.e. flat
/// source element `p·src_per + idx_k`. An index with `idx_k + E > src_per` is out of bounds.
#[expect(clippy::too_many_arguments, reason = "the instruction's geometry, each named")]
pub fn indirect_copy(
    idx: &[u64],
    partitions: usize,
    num_valid: u64,
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
            if v.checked_add(len as u64).is_none_or(|end| end > src_per as u64) {
                match oob {
                    Oob::Fault => {
                        return Err(IndirectError::RunOutside {
                            operand,
                            position: position as u64,
                            value: v,
                            stored: None,
                            len: len as u64,
                            per: src_per as u64,
                        });
                    }
                    Oob::Skip => continue,
                }
            }
            for p in 16 * c..16 * c + 16 {
                let start = p * src_per + v as usize;
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
                        stored: None,
                        bound: src_per as u64,
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

    /// Entries of 2 consecutive elements (base 0, step 2) in a 16-element location: entries
    /// 0..=7 fit, entry 8 would span 16..=17.
    const T8: Table = Table { base: 0, step: 2, lo: 0, hi: 1, bound: None, capacity: 16 };

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

    /// Out of bounds = the entry leaves the location: entry v spans 2v..=2v+1 of 0..16.
    #[rstest]
    #[case::one_past_end(&[8], 0, 8)]
    #[case::all_oob(&[8, 9, 100], 0, 8)]
    #[case::mixed_oob(&[1, 9, 2, 8], 1, 9)]
    #[case::int32_minus_one(&[0xFFFF_FFFF], 0, 0xFFFF_FFFF)]
    fn val_sweep_out_of_bounds(#[case] idx: &[u64], #[case] position: u64, #[case] value: u64) {
        let e = starts(idx, Oob::Fault).unwrap_err();
        let lo = 2 * i128::from(value);
        assert_eq!(
            e,
            IndirectError::LeavesLocation {
                operand: 1,
                position,
                value,
                stored: None,
                lo,
                hi: lo + 1,
                capacity: 16
            }
        );
        assert!(
            e.to_string().contains(&format!(
                "index ins[1] element {position} = {value} is outside the table's location"
            ))
        );
        // Skip keeps only the in-bounds entries, in order.
        let kept: Vec<(usize, i64)> =
            idx.iter().enumerate().filter(|(_, v)| **v < 8).map(|(j, v)| (j, 2 * *v as i64)).collect();
        assert_eq!(starts(idx, Oob::Skip).unwrap(), kept);
    }

    /// No entry count bounds the index (I4): a table AP `[[128, 4096], [1, 128]]` has final step
    /// 1, so index v is the element run v..v+128 of a 128 × 4096 location, for any v up to
    /// 524288 − 128 (its last run), far past the final level's num 128.
    #[test]
    fn the_final_level_num_is_no_bound() {
        let t = Table::contiguous(0, 1, 128, 128 * 4096);
        let mut plan = Vec::new();
        rows(&[128, 4096, 524_160], &t, None, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.iter().map(|s| s.start).collect::<Vec<_>>(), [128, 4096, 524_160]);
        let e = rows(&[524_161], &t, None, Oob::Fault, 1, &mut plan).unwrap_err();
        assert!(matches!(e, IndirectError::LeavesLocation { lo: 524_161, hi: 524_288, .. }), "{e:?}");
        // A negative final step walks backwards from the base.
        let t = Table::contiguous(10, -2, 2, 16);
        rows(&[0, 5], &t, None, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.iter().map(|s| s.start).collect::<Vec<_>>(), [10, 0]);
        assert!(rows(&[6], &t, None, Oob::Fault, 1, &mut plan).is_err(), "element −2");
    }

    /// An entry that would leave the location is out of bounds.
    #[test]
    fn entry_leaving_the_location() {
        let t = Table { capacity: 15, ..T8 };
        let mut plan = Vec::new();
        let e = rows(&[6, 7], &t, None, Oob::Fault, 2, &mut plan).unwrap_err();
        assert_eq!(
            e,
            IndirectError::LeavesLocation {
                operand: 2,
                position: 1,
                value: 7,
                stored: None,
                lo: 14,
                hi: 15,
                capacity: 15
            }
        );
        rows(&[6, 7], &t, None, Oob::Skip, 2, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 0, start: 12 }]);
    }

    /// v' = v % n + hi·(v / n), before the bound: n 3, hi 2: 4 → 1 + 2 = 3; 7 → 1 + 4 = 5;
    /// 10 → 1 + 6 = 7; 12 → 0 + 8 = 8, whose entry 16..=17 leaves the location.
    #[test]
    fn wrap_rebases_before_the_bound() {
        let w = Some(Wrap { n: 3, hi: 2 });
        let mut plan = Vec::new();
        rows(&[4, 7, 10], &T8, w, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.iter().map(|s| s.start).collect::<Vec<_>>(), [6, 10, 14]);
        let e = rows(&[12], &T8, w, Oob::Fault, 1, &mut plan).unwrap_err();
        assert!(matches!(e, IndirectError::LeavesLocation { value: 12, lo: 16, .. }), "{e:?}");
        assert_eq!(Wrap { n: 1, hi: u64::MAX }.apply(2), None, "overflow");
        assert!(rows(&[2], &T8, Some(Wrap { n: 1, hi: u64::MAX }), Oob::Fault, 1, &mut plan).is_err());
        assert_eq!(Wrap { n: 0, hi: 1 }.apply(5), None);
    }

    /// P = 2, E = 3, num_indices 2: slot (p, e) = idx[3p + e], applied e-major; e = 2 skipped.
    /// A stored all-ones value is a row like any other (no sentinel): out of bounds here.
    #[test]
    fn save_accumulate_is_entry_major() {
        let t = Table { step: 1, hi: 0, ..T8 };
        let idx = [10, 11, 12, 13, 14, 15];
        let mut plan = Vec::new();
        save_accumulate(&idx, 2, 2, &t, None, Oob::Fault, 1, &mut plan).unwrap();
        let got: Vec<(usize, i64)> = plan.iter().map(|s| (s.row, s.start)).collect();
        assert_eq!(got, [(0, 10), (3, 13), (1, 11), (4, 14)]);
        let e = save_accumulate(&idx, 2, 4, &t, None, Oob::Fault, 1, &mut plan).unwrap_err();
        assert_eq!(e, IndirectError::InsufficientIndices { num_indices: 4, available: 3 });
        assert!(e.to_string().contains("insufficient indices"));
        let e = save_accumulate(&[SKIP, 1], 1, 2, &t, None, Oob::Fault, 1, &mut plan).unwrap_err();
        assert!(matches!(e, IndirectError::LeavesLocation { position: 0, value: SKIP, .. }), "{e:?}");
        save_accumulate(&[SKIP, 1], 1, 2, &t, None, Oob::Skip, 1, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 1, start: 1 }]);
    }

    /// Table `[[4, 3], [1, 4]]` (3 × 4) in a 12-element location: coef W = 4, Z (level 1) = 1.
    #[test]
    fn generic_sums_coefficients() {
        let pairs = [ApPair::new(4, 3), ApPair::new(1, 4)];
        let g = GenericGeometry::new(&pairs, &[0, 1]).unwrap();
        assert_eq!((g.coefs.clone(), g.len), (vec![4, 1], 1));
        // O = 4w + z: (2, 3) → 11, (0, 1) → 1; (−1, 0) → −4 (a huge offset, not a skip under
        // Skip); (1, −1) → 3: a −1 in one dim is no sentinel; (0, −1) → −1: skipped.
        let (w, z) = ([2, 0, SKIP, 1, 0], [3, 1, 0, SKIP, SKIP]);
        let dims =
            [GenericDim { idx: &w, operand: 1, level: 0 }, GenericDim { idx: &z, operand: 2, level: 1 }];
        let mut plan = Vec::new();
        generic(&dims, &g, 0, 12, None, Oob::Skip, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 0, start: 11 }, Step { row: 1, start: 1 }, Step { row: 3, start: 3 }]);
        let e = generic(&dims, &g, 0, 12, None, Oob::Fault, &mut plan).unwrap_err();
        assert!(matches!(e, IndirectError::LeavesLocation { operand: 1, position: 2, .. }), "{e:?}");
        // No per-dim bound: z = 4 of 4 is element 4 of the 12, inside the location.
        let (w, z) = ([0], [4]);
        let dims =
            [GenericDim { idx: &w, operand: 1, level: 0 }, GenericDim { idx: &z, operand: 2, level: 1 }];
        generic(&dims, &g, 0, 12, None, Oob::Fault, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 0, start: 4 }]);
        // Only Z indirect: the entry is W's num 3 of contiguous elements (not a walk of W's
        // step 4): z = 2 → elements 2..=4; z = 10 → 10..=12 leaves the 12.
        let g = GenericGeometry::new(&pairs, &[1]).unwrap();
        assert_eq!(g.len, 3);
        let z = [2, 10];
        let dims = [GenericDim { idx: &z, operand: 1, level: 1 }];
        let e = generic(&dims, &g, 0, 12, None, Oob::Fault, &mut plan).unwrap_err();
        assert!(matches!(e, IndirectError::LeavesLocation { position: 1, lo: 10, hi: 12, .. }), "{e:?}");
        generic(&dims, &g, 0, 12, None, Oob::Skip, &mut plan).unwrap();
        assert_eq!(plan, [Step { row: 0, start: 2 }]);
    }

    /// 16 partitions, 2 indices each: core list k = j·16 + q (column-major); an index is an
    /// element offset into the partition's 12 source elements, runs of 4.
    #[test]
    fn indirect_copy_blocks_are_column_major() {
        // idx[q][0] = q % 2 (offset 0 or 1), idx[q][1] = 8.
        let mut idx = vec![0u64; 32];
        for q in 0..16 {
            idx[2 * q] = (q % 2) as u64;
            idx[2 * q + 1] = 8;
        }
        let mut plan = Vec::new();
        indirect_copy(&idx, 16, 17, 12, 4, Oob::Fault, 1, &mut plan).unwrap();
        assert_eq!(plan.len(), 17 * 16);
        // k = 1 → partition q = 1's first index (offset 1); for partition 5 that is 5·12 + 1.
        let at = |p: usize, k: usize| plan.iter().find(|s| s.row == p * 32 + k).map(|s| s.start);
        assert_eq!(at(5, 1), Some(61));
        assert_eq!(at(5, 0), Some(60));
        assert_eq!(at(5, 16), Some(60 + 8), "k = 16 is partition 0's second index: offset 8");
        assert_eq!(at(5, 17), None, "past num_valid_indices");
        // Offset 9 + 4 elements passes the 12.
        idx[7] = 9;
        let e = indirect_copy(&idx, 16, 32, 12, 4, Oob::Fault, 1, &mut plan).unwrap_err();
        assert_eq!(
            e,
            IndirectError::RunOutside { operand: 1, position: 7, value: 9, stored: None, len: 4, per: 12 }
        );
        assert!(
            e.to_string().contains("element 7 = 9: its 4 elements [9, 9 + 4) are outside the partition's 12"),
            "{e}"
        );
        assert!(indirect_copy(&idx, 8, 32, 12, 4, Oob::Fault, 1, &mut plan).is_err(), "8 partitions");
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
