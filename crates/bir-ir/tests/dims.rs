//! The dim-letter rule (docs/bir-json.md "Dim letters", fidelity J28/J29): which AP level each
//! of W, Z, Y, X names, the size of a padded dim, and which levels each reduce axis folds.
//! Every expected value is worked by hand from the rule (W = level 0, X = the last level, the
//! missing middle dims of a short AP are size 1; on 5 levels, level 1 is unnamed).

use bir_ir::IndirectDim::{W, X, Y, Z};
use bir_ir::*;
use rstest::rstest;

/// An AP whose level k has `num = nums[k]` (steps do not matter to the letters).
fn ap(nums: &[i64]) -> AccessPattern {
    AccessPattern {
        loc: LocId(0),
        dtype: Dtype::Float32,
        offset: 0,
        pairs: nums.iter().map(|&n| ApPair::new(1, n)).collect(),
        dynamic: None,
    }
}

#[rstest]
// 1 level [P]: only W.
#[case(&[128], W, Some(0), 128)]
#[case(&[128], Z, None, 1)]
#[case(&[128], Y, None, 1)]
#[case(&[128], X, None, 1)]
// 2 levels [P, F] = W, (Z = 1), (Y = 1), X.
#[case(&[128, 64], W, Some(0), 128)]
#[case(&[128, 64], Z, None, 1)]
#[case(&[128, 64], Y, None, 1)]
#[case(&[128, 64], X, Some(1), 64)]
// 3 levels [P, A, B] = W, (Z = 1), Y, X.
#[case(&[128, 4, 16], W, Some(0), 128)]
#[case(&[128, 4, 16], Z, None, 1)]
#[case(&[128, 4, 16], Y, Some(1), 4)]
#[case(&[128, 4, 16], X, Some(2), 16)]
// 4 levels [P, A, B, C] = W, Z, Y, X.
#[case(&[128, 2, 4, 8], W, Some(0), 128)]
#[case(&[128, 2, 4, 8], Z, Some(1), 2)]
#[case(&[128, 2, 4, 8], Y, Some(2), 4)]
#[case(&[128, 2, 4, 8], X, Some(3), 8)]
// 5 levels [P, V, A, B, C] = W, (unnamed V), Z, Y, X.
#[case(&[128, 3, 2, 4, 8], W, Some(0), 128)]
#[case(&[128, 3, 2, 4, 8], Z, Some(2), 2)]
#[case(&[128, 3, 2, 4, 8], Y, Some(3), 4)]
#[case(&[128, 3, 2, 4, 8], X, Some(4), 8)]
// No levels (validation refuses it): nothing is named.
#[case(&[], W, None, 1)]
#[case(&[], X, None, 1)]
fn level_of_each_letter(
    #[case] nums: &[i64],
    #[case] dim: IndirectDim,
    #[case] level: Option<usize>,
    #[case] num: i64,
) {
    let a = ap(nums);
    assert_eq!(a.level_of(dim), level, "level_of({dim}) on {nums:?}");
    assert_eq!(a.dim_num(dim), num, "dim_num({dim}) on {nums:?}");
    if let Some(l) = level {
        assert_eq!(a.dim_at(l), Some(dim), "dim_at({l}) on {nums:?}");
    }
}

#[rstest]
#[case(&[128, 3, 2, 4, 8], 1, None)] // the unnamed extra level
#[case(&[128, 64], 2, None)] // past the end
fn dim_at_unnamed_levels(#[case] nums: &[i64], #[case] level: usize, #[case] want: Option<IndirectDim>) {
    assert_eq!(ap(nums).dim_at(level), want);
}

#[rstest]
#[case(AxisListType::X, &[X])]
#[case(AxisListType::Xy, &[Y, X])]
#[case(AxisListType::Xyz, &[Z, Y, X])]
#[case(AxisListType::Xyzw, &[W, Z, Y, X])]
#[case(AxisListType::Xyzwc, &[W, Z, Y, X])]
#[case(AxisListType::C, &[W])]
fn axis_folds(#[case] axis: AxisListType, #[case] want: &[IndirectDim]) {
    assert_eq!(axis.folds(), want);
    for d in [W, Z, Y, X] {
        assert_eq!(axis.folds_dim(d), want.contains(&d), "{axis} folds {d}");
    }
}

/// `folded` lists, per level, whether the axis folds it.
#[rstest]
// The worked example of docs/bir-json.md: XY on [[64,128],[1,64]] folds the 64 elements of each
// partition and keeps the 128 partitions (the padded Y has size 1).
#[case(&[128, 64], AxisListType::Xy, &[false, true])]
#[case(&[128, 64], AxisListType::X, &[false, true])]
#[case(&[128, 64], AxisListType::Xyz, &[false, true])]
#[case(&[128, 64], AxisListType::Xyzw, &[true, true])]
#[case(&[128, 64], AxisListType::C, &[true, false])]
#[case(&[128, 4, 16], AxisListType::X, &[false, false, true])]
#[case(&[128, 4, 16], AxisListType::Xy, &[false, true, true])]
#[case(&[128, 4, 16], AxisListType::Xyz, &[false, true, true])]
#[case(&[128, 2, 4, 8], AxisListType::Xy, &[false, false, true, true])]
#[case(&[128, 2, 4, 8], AxisListType::Xyz, &[false, true, true, true])]
#[case(&[128, 2, 4, 8], AxisListType::C, &[true, false, false, false])]
#[case(&[128, 2, 4, 8], AxisListType::Xyzwc, &[true, true, true, true])]
// 5 levels: the unnamed level 1 is folded only when both W and Z are.
#[case(&[128, 3, 2, 4, 8], AxisListType::Xyz, &[false, false, true, true, true])]
#[case(&[128, 3, 2, 4, 8], AxisListType::Xyzw, &[true, true, true, true, true])]
#[case(&[128, 3, 2, 4, 8], AxisListType::C, &[true, false, false, false, false])]
// 1 level: X is padded, so X folds nothing (each partition's one element is its own result).
#[case(&[128], AxisListType::X, &[false])]
fn folds_level(#[case] nums: &[i64], #[case] axis: AxisListType, #[case] folded: &[bool]) {
    let a = ap(nums);
    let got: Vec<bool> = (0..nums.len()).map(|l| a.folds_level(axis, l)).collect();
    assert_eq!(got, folded, "{axis} on {nums:?}");
    assert!(!a.folds_level(axis, nums.len()), "a level past the end is never folded");
}

/// The worked example of docs/bir-json.md "Dim letters": XY on `[[64, 128], [1, 64]]` reduces
/// Y·X = 1·64 = 64 elements per partition into 128 outputs.
#[test]
fn worked_example_reduce_counts() {
    let a = ap(&[128, 64]);
    let axis = AxisListType::Xy;
    let folded: i64 = [W, Z, Y, X].iter().filter(|&&d| axis.folds_dim(d)).map(|&d| a.dim_num(d)).product();
    let kept: i64 = [W, Z, Y, X].iter().filter(|&&d| !axis.folds_dim(d)).map(|&d| a.dim_num(d)).product();
    assert_eq!((folded, kept), (64, 128));
}

/// The indirect-dim rule (re-facts §3: "W 0, Z 1, Y 2, X 3 (equals the AP dim index)"): the
/// letter's ordinal is the level on every AP, with nothing padded; a letter past the AP's last
/// level names nothing.
#[rstest]
#[case(&[128], &[Some(0), None, None, None])]
#[case(&[128, 64], &[Some(0), Some(1), None, None])]
#[case(&[128, 4, 16], &[Some(0), Some(1), Some(2), None])]
#[case(&[128, 2, 4, 8], &[Some(0), Some(1), Some(2), Some(3)])]
#[case(&[128, 3, 2, 4, 8], &[Some(0), Some(1), Some(2), Some(3)])]
fn indirect_level_is_the_ordinal(#[case] nums: &[i64], #[case] want: &[Option<usize>]) {
    let a = ap(nums);
    let got: Vec<Option<usize>> = [W, Z, Y, X].into_iter().map(|d| a.indirect_level(d)).collect();
    assert_eq!(got, want, "indirect_level on {nums:?}");
}
