//! The indirect kernels (seed 000 §6; docs/fidelity.md I1–I12) on small programs whose expected
//! values are worked by hand in the comments, faults that must leave memory unchanged, and the
//! fast paths against slow obvious twins written here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use rstest::rstest;
use simulator::{FaultKind, IndirectOob, Options};
use test_rng::XorShift64Star;

fn inst(opcode: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"i","engine":"DMA","ins":[{}],"outs":[{}]{}{fields}}}"#,
        ins.join(","),
        outs.join(","),
        if fields.is_empty() { "" } else { "," }
    )
}

/// Runs `insts` over the tensors; returns every tensor's final bytes, and the fault if any
/// (memory is returned either way, so a fault's "nothing written" can be checked).
fn run_with(tensors: &[T<'_>], insts: &str, oob: IndirectOob) -> (Vec<Vec<u8>>, Option<(FaultKind, String)>) {
    let (fault, mem) = run_keep(tensors, insts, Options { indirect_oob: oob, ..Options::default() }, None);
    (mem, fault.map(|f| (f.kind, f.message())))
}

fn run(tensors: &[T<'_>], insts: &str) -> Vec<Vec<u8>> {
    let (mem, fault) = run_with(tensors, insts, IndirectOob::Fault);
    assert!(fault.is_none(), "{fault:?}");
    mem
}

/// A 5-row × 3 fp32 table: row r = [10r, 10r+1, 10r+2].
fn table5x3() -> Vec<f32> {
    (0..5).flat_map(|r| (0..3).map(move |c| (10 * r + c) as f32)).collect()
}

/// IndirectLoad `dst` (rows of 3) from `tab` (final level [3, 5]) by `idx` (`idx_dtype`).
fn iload(idx_dtype: &str, n: usize, extra: &str) -> String {
    inst(
        "IndirectLoad",
        &[
            ap("tab", "float32", 0, &[(1, 1), (3, 5)]),
            ap("idx", idx_dtype, 0, &[(n as i64, 1), (1, n as i64)]),
        ],
        &[ap("dst", "float32", 0, &[(3, n as i64), (1, 3)])],
        extra,
    )
}

#[test]
fn indirect_load_gathers_rows() {
    // idx [3, 0, 3, 4] → rows 3, 0, 3, 4 of the table.
    let out = run(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 4, i32s(&[3, 0, 3, 4])),
            t("dst", "float32", 12, vec![]),
        ],
        &iload("int32", 4, ""),
    );
    assert_eq!(to_f32(&out[2]), [30., 31., 32., 0., 1., 2., 30., 31., 32., 40., 41., 42.]);
    // The table AP's offset is the base: offset 3 makes entry 0 the table's row 1.
    let out = run(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 1, i32s(&[0])),
            t("dst", "float32", 3, vec![]),
        ],
        &inst(
            "IndirectLoad",
            &[ap("tab", "float32", 3, &[(1, 1), (3, 4)]), ap("idx", "int32", 0, &[(1, 1), (1, 1)])],
            &[ap("dst", "float32", 0, &[(3, 1), (1, 3)])],
            "",
        ),
    );
    assert_eq!(to_f32(&out[2]), [10., 11., 12.]);
}

#[test]
fn rebased_64_bit_indices_reach_rows_and_skip() {
    // uint64: 2^32 + 1 → row 1; 2^32 − 1 → −1 → skipped (dst row keeps 7s); 2^32 → row 0 (I1).
    let out = run(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "uint64", 3, u64s(&[(1 << 32) + 1, (1 << 32) - 1, 1 << 32])),
            t("dst", "float32", 9, f32s(&[7.; 9])),
        ],
        &iload("uint64", 3, ""),
    );
    assert_eq!(to_f32(&out[2]), [10., 11., 12., 7., 7., 7., 0., 1., 2.]);
    // int32 −1 is row 4294967295, not a skip: out of bounds.
    let (mem, fault) = run_with(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 1, i32s(&[-1])),
            t("dst", "float32", 3, f32s(&[7.; 3])),
        ],
        &iload("int32", 1, ""),
        IndirectOob::Fault,
    );
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("index ins[1] element 0 = -1 is outside the table's location"), "{msg}");
    assert_eq!(to_f32(&mem[2]), [7.; 3]);
}

#[test]
fn oob_faults_and_writes_nothing() {
    // Entry 0 (row 1) is fine, entry 1 (row 9: elements 27..=29 of the 15) is not: nothing is
    // written, row 0 included.
    let tensors = || {
        vec![
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 2, i32s(&[1, 9])),
            t("dst", "float32", 6, f32s(&[7.; 6])),
        ]
    };
    let (mem, fault) = run_with(&tensors(), &iload("int32", 2, ""), IndirectOob::Fault);
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(
        msg.contains("index ins[1] element 1 = 9 is outside the table's location: its entry spans elements 27..=29, the location holds 0..15"),
        "{msg}"
    );
    assert_eq!(to_f32(&mem[2]), [7.; 6]);
    // An entry whose elements leave the location (row 4 of 4 elements in a 15-element tensor:
    // elements 12..=15) is out of bounds.
    let (mem, fault) = run_with(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 1, i32s(&[4])),
            t("dst", "float32", 4, f32s(&[7.; 4])),
        ],
        &inst(
            "IndirectLoad",
            &[ap("tab", "float32", 0, &[(1, 1), (3, 5)]), ap("idx", "int32", 0, &[(1, 1), (1, 1)])],
            &[ap("dst", "float32", 0, &[(4, 1), (1, 4)])],
            "",
        ),
        IndirectOob::Fault,
    );
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("elements 12..=15"), "{msg}");
    assert_eq!(to_f32(&mem[2]), [7.; 4]);
}

#[test]
fn oob_skip_leaves_rows() {
    let (mem, fault) = run_with(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 2, i32s(&[1, 9])),
            t("dst", "float32", 6, f32s(&[7.; 6])),
        ],
        &iload("int32", 2, ""),
        IndirectOob::Skip,
    );
    assert!(fault.is_none());
    assert_eq!(to_f32(&mem[2]), [10., 11., 12., 7., 7., 7.]);
}

/// Any table AP runs (seed 000 §6.1 reads only its offset and final-level step): the table AP
/// `[[4, 3], [1, 4]]` (3 partitions-worth of rows of 4, final step 1) over the 15-element table
/// makes an index count elements: index 5 → elements 5, 6 (row 1 col 2, row 2 col 0 of the 5 × 3
/// table: [12, 20]); index 13 → 13, 14 ([41, 42]), past the final level's num 4 and the W level's
/// 3 rows but inside the location.
#[test]
fn any_table_ap_runs_with_its_final_step() {
    let out = run(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 2, i32s(&[5, 13])),
            t("dst", "float32", 4, vec![]),
        ],
        &inst(
            "IndirectLoad",
            &[ap("tab", "float32", 0, &[(4, 3), (1, 4)]), ap("idx", "int32", 0, &[(2, 1), (1, 2)])],
            &[ap("dst", "float32", 0, &[(2, 2), (1, 2)])],
            "",
        ),
    );
    assert_eq!(to_f32(&out[2]), [12., 20., 41., 42.]);
}

#[test]
fn wrap_splits_the_index() {
    // wrap n = 2, hi = 3: v' = v % 2 + 3·(v / 2): 1 → 1, 2 → 3, 3 → 4; then 4 → 6, whose row
    // (elements 18..=20) leaves the 15-element table: a fault.
    let out = run(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 3, i32s(&[1, 2, 3])),
            t("dst", "float32", 9, vec![]),
        ],
        &iload("int32", 3, r#""wrap":{"n":2,"hi":3}"#),
    );
    assert_eq!(to_f32(&out[2]), [10., 11., 12., 30., 31., 32., 40., 41., 42.]);
    let (_, fault) = run_with(
        &[
            t("tab", "float32", 15, f32s(&table5x3())),
            t("idx", "int32", 1, i32s(&[4])),
            t("dst", "float32", 3, vec![]),
        ],
        &iload("int32", 1, r#""wrap":{"n":2,"hi":3}"#),
        IndirectOob::Fault,
    );
    let msg = fault.unwrap().1;
    assert!(
        msg.contains("element 0 = 4 is outside the table's location: its entry spans elements 18..=20"),
        "{msg}"
    );
}

#[test]
fn indirect_save_last_writer_wins() {
    // values rows [1,2], [3,4], [5,6] to rows 2, 0, 2 of a 4 × 2 table of zeros.
    let out = run(
        &[
            t("val", "float32", 6, f32s(&[1., 2., 3., 4., 5., 6.])),
            t("idx", "int32", 3, i32s(&[2, 0, 2])),
            t("tab", "float32", 8, f32s(&[0.; 8])),
        ],
        &inst(
            "IndirectSave",
            &[ap("val", "float32", 0, &[(2, 3), (1, 2)]), ap("idx", "int32", 0, &[(3, 1), (1, 3)])],
            &[ap("tab", "float32", 0, &[(1, 1), (2, 4)])],
            "",
        ),
    );
    assert_eq!(to_f32(&out[2]), [3., 4., 0., 0., 5., 6., 0., 0.]);
}

/// IndirectSaveAccumulate of `n` values (L = 1) with the index AP [[E, P], [1, E]] into `tab`.
fn isacc(dtype: &str, p: i64, e: i64, num_indices: u64, op: &str) -> String {
    inst(
        "IndirectSaveAccumulate",
        &[ap("val", dtype, 0, &[(1, p * e), (1, 1)]), ap("idx", "int32", 0, &[(e, p), (1, e)])],
        &[ap("tab", dtype, 0, &[(1, 1), (1, 4)])],
        &format!(r#""num_indices":{num_indices},"entry_step_elements":1,"op":"{op}""#),
    )
}

#[test]
fn save_accumulate_tail_and_order() {
    // P = 2, E = 2: slots (p, e) = idx[p·2 + e]; num_indices 1 keeps e = 0 only: rows 0 and 2.
    // table [5, 5, 5, 5]: row 0 += 1 (slot (0,0)), row 0 += 10 (slot (1,0)); 100 and 1000 skipped.
    let out = run(
        &[
            t("val", "float32", 4, f32s(&[1., 100., 10., 1000.])),
            t("idx", "int32", 4, i32s(&[0, 0, 0, 1])),
            t("tab", "float32", 4, f32s(&[5.; 4])),
        ],
        &isacc("float32", 2, 2, 1, "add"),
    );
    assert_eq!(to_f32(&out[2]), [16., 5., 5., 5.]);
    // Entry-major order (I6): v = [2^24, −2^24, 1, 1] all into row 0 (from 0):
    // (0,0) 2^24, (1,0) +1 → 2^24 (RNE), (0,1) −2^24 → 0, (1,1) +1 → 1. Partition-major would give 2.
    let out = run(
        &[
            t("val", "float32", 4, f32s(&[16_777_216., -16_777_216., 1., 1.])),
            t("idx", "int32", 4, i32s(&[0, 0, 0, 0])),
            t("tab", "float32", 4, f32s(&[0.; 4])),
        ],
        &isacc("float32", 2, 2, 2, "add"),
    );
    assert_eq!(to_f32(&out[2]), [1., 0., 0., 0.]);
    // Bypass copies, last writer (in entry-major order: slot (1,1) = 1) wins.
    let out = run(
        &[
            t("val", "float32", 4, f32s(&[4., 3., 2., 1.])),
            t("idx", "int32", 4, i32s(&[0, 0, 0, 0])),
            t("tab", "float32", 4, f32s(&[9.; 4])),
        ],
        &isacc("float32", 2, 2, 2, "bypass"),
    );
    assert_eq!(to_f32(&out[2]), [1., 9., 9., 9.]);
}

#[test]
fn save_accumulate_rounds_every_step() {
    // bf16: 1.0 (0x3F80) + 2^-8 (0x3B80) is a tie between 1 and 1 + 2^-7: RNE keeps 1.0 each of
    // four times; one fp32 sum would be 1 + 2^-6 = 0x3F82.
    let out = run(
        &[
            t("val", "bfloat16", 4, u16s(&[0x3B80; 4])),
            t("idx", "int32", 4, i32s(&[0, 0, 0, 0])),
            t("tab", "bfloat16", 4, u16s(&[0x3F80; 4])),
        ],
        &isacc("bfloat16", 1, 4, 4, "add"),
    );
    assert_eq!(to_u16(&out[2]), [0x3F80, 0x3F80, 0x3F80, 0x3F80]);
    // int32 wraps: i32::MAX + 1 = i32::MIN.
    let out = run(
        &[
            t("val", "int32", 1, i32s(&[1])),
            t("idx", "int32", 1, i32s(&[2])),
            t("tab", "int32", 4, i32s(&[0, 0, i32::MAX, 0])),
        ],
        &isacc("int32", 1, 1, 1, "add"),
    );
    assert_eq!(out[2], i32s(&[0, 0, i32::MIN, 0]));
    // uint8 does not reduce: a numerics fault, the table unchanged.
    let (mem, fault) = run_with(
        &[t("val", "uint8", 1, vec![1]), t("idx", "int32", 1, i32s(&[0])), t("tab", "uint8", 4, vec![5; 4])],
        &isacc("uint8", 1, 1, 1, "add"),
        IndirectOob::Fault,
    );
    assert_eq!(fault.unwrap().0, FaultKind::Numerics);
    assert_eq!(mem[2], [5, 5, 5, 5]);
}

/// IndirectSaveAccumulate's 64-bit indices are plain rows (seed 000 §6.2 subtracts 2^32 from the
/// table base, not from the index): uint64 [2, 0] add into rows 2 and 0; a stored 2^32 + 1 is
/// row 4294967297 (out of bounds), not row 1 as IndirectLoad's rebase would read it; a stored
/// int64 −1 is no skip but row 2^64 − 1 (out of bounds).
#[test]
fn save_accumulate_64_bit_indices_are_plain_rows() {
    let isacc64 = |dt: &str| {
        inst(
            "IndirectSaveAccumulate",
            &[ap("val", "float32", 0, &[(1, 2), (1, 1)]), ap("idx", dt, 0, &[(2, 1), (1, 2)])],
            &[ap("tab", "float32", 0, &[(1, 1), (1, 4)])],
            r#""num_indices":2,"entry_step_elements":1,"op":"add""#,
        )
    };
    let out = run(
        &[
            t("val", "float32", 2, f32s(&[1., 10.])),
            t("idx", "uint64", 2, u64s(&[2, 0])),
            t("tab", "float32", 4, f32s(&[5.; 4])),
        ],
        &isacc64("uint64"),
    );
    assert_eq!(to_f32(&out[2]), [15., 5., 6., 5.]);
    for (dt, v, shown) in [("uint64", (1u64 << 32) + 1, "4294967297"), ("int64", u64::MAX, "-1")] {
        let (mem, fault) = run_with(
            &[
                t("val", "float32", 2, f32s(&[1., 10.])),
                t("idx", dt, 2, u64s(&[0, v])),
                t("tab", "float32", 4, f32s(&[5.; 4])),
            ],
            &isacc64(dt),
            IndirectOob::Fault,
        );
        let (kind, msg) = fault.unwrap();
        assert_eq!(kind, FaultKind::OutOfBounds, "{msg}");
        assert!(
            msg.contains(&format!("index ins[1] element 1 = {shown} is outside the table's location")),
            "{msg}"
        );
        assert_eq!(to_f32(&mem[2]), [5.; 4], "nothing written");
    }
}

#[test]
fn generic_indirect_two_dims() {
    // Table 3 × 4 (element e holds e), dims W (coef 4) and Z = level 1 (coef 1): L = 1.
    // int64 W [2, 0, −1], Z [3, 1, −1] (rebased): O = 11, 1, and 4·(−1) + (−1) = −5: not −1,
    // so no skip but an offset outside the table (out of bounds).
    let tab: Vec<f32> = (0..12).map(|e| e as f32).collect();
    let r = |v: i64| (v + (1 << 32)) as u64;
    let (mem, fault) = run_with(
        &[
            t("tab", "float32", 12, f32s(&tab)),
            t("iw", "int64", 3, u64s(&[r(2), r(0), r(-1)])),
            t("iz", "int64", 3, u64s(&[r(3), r(1), r(-1)])),
            t("dst", "float32", 3, f32s(&[7.; 3])),
        ],
        &inst(
            "GenericIndirectLoad",
            &[
                ap("tab", "float32", 0, &[(4, 3), (1, 4)]),
                ap("iw", "int64", 0, &[(3, 1), (1, 3)]),
                ap("iz", "int64", 0, &[(3, 1), (1, 3)]),
            ],
            &[ap("dst", "float32", 0, &[(3, 1), (1, 3)])],
            r#""indirect_dims":["W","Z"]"#,
        ),
        IndirectOob::Fault,
    );
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds, "{msg}");
    assert!(msg.contains("element 2 = -5 is outside the table's location"), "{msg}");
    assert_eq!(to_f32(&mem[3]), [7.; 3], "nothing written");
    // −1 is tested on the combined offset (seed §6.3): W 0, Z −1 sum to −1: skipped.
    let out = run(
        &[
            t("tab", "float32", 12, f32s(&tab)),
            t("iw", "int64", 3, u64s(&[r(2), r(0), r(0)])),
            t("iz", "int64", 3, u64s(&[r(3), r(1), r(-1)])),
            t("dst", "float32", 3, f32s(&[7.; 3])),
        ],
        &inst(
            "GenericIndirectLoad",
            &[
                ap("tab", "float32", 0, &[(4, 3), (1, 4)]),
                ap("iw", "int64", 0, &[(3, 1), (1, 3)]),
                ap("iz", "int64", 0, &[(3, 1), (1, 3)]),
            ],
            &[ap("dst", "float32", 0, &[(3, 1), (1, 3)])],
            r#""indirect_dims":["W","Z"]"#,
        ),
    );
    assert_eq!(to_f32(&out[3]), [11., 1., 7.]);
    // Dim Z (level 1) only: the entry is W's num 3 of *contiguous* elements (seed §6.3's one
    // memcpy), not a walk of W's step 4: idx 2 → elements 2, 3, 4 (a walk would give 2, 6, 10).
    let out = run(
        &[
            t("tab", "float32", 12, f32s(&tab)),
            t("iz", "int32", 1, i32s(&[2])),
            t("dst", "float32", 3, vec![]),
        ],
        &inst(
            "GenericIndirectLoad",
            &[ap("tab", "float32", 0, &[(4, 3), (1, 4)]), ap("iz", "int32", 0, &[(1, 1), (1, 1)])],
            &[ap("dst", "float32", 0, &[(3, 1), (1, 3)])],
            r#""indirect_dims":["Z"]"#,
        ),
    );
    assert_eq!(to_f32(&out[2]), [2., 3., 4.]);
    // Save, dim W: rows of 4; both index 1, op absent = add (the schema's `op? (add)`):
    // row 1 += [1,1,1,1] then += [2,2,2,2].
    let out = run(
        &[
            t("val", "float32", 8, f32s(&[1., 1., 1., 1., 2., 2., 2., 2.])),
            t("iw", "int32", 2, i32s(&[1, 1])),
            t("tab", "float32", 12, f32s(&[0.; 12])),
        ],
        &inst(
            "GenericIndirectSave",
            &[ap("val", "float32", 0, &[(4, 2), (1, 4)]), ap("iw", "int32", 0, &[(2, 1), (1, 2)])],
            &[ap("tab", "float32", 0, &[(4, 3), (1, 4)])],
            r#""indirect_dims":["W"]"#,
        ),
    );
    assert_eq!(to_f32(&out[2]), [0., 0., 0., 0., 3., 3., 3., 3., 0., 0., 0., 0.]);
    // No per-dim bound: Z = 4 of Z's num 4 is the run 4, 5, 6 of the 12, inside the table;
    // Z = 10 (elements 10..=12) is not.
    let gl = |v: i32| {
        run_with(
            &[
                t("tab", "float32", 12, f32s(&tab)),
                t("iz", "int32", 1, i32s(&[v])),
                t("dst", "float32", 3, f32s(&[7.; 3])),
            ],
            &inst(
                "GenericIndirectLoad",
                &[ap("tab", "float32", 0, &[(4, 3), (1, 4)]), ap("iz", "int32", 0, &[(1, 1), (1, 1)])],
                &[ap("dst", "float32", 0, &[(3, 1), (1, 3)])],
                r#""indirect_dims":["Z"]"#,
            ),
            IndirectOob::Fault,
        )
    };
    let (mem, fault) = gl(4);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(to_f32(&mem[2]), [4., 5., 6.]);
    let (mem, fault) = gl(10);
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(
        msg.contains("element 0 = 10 is outside the table's location: its entry spans elements 10..=12"),
        "{msg}"
    );
    assert_eq!(to_f32(&mem[2]), [7.; 3]);
}

/// 16 partitions of 3 rows × 2: src[p][r][c] = 100p + 10r + c.
fn icopy_src() -> Vec<f32> {
    (0..16)
        .flat_map(|p| (0..3).flat_map(move |r| (0..2).map(move |c| (100 * p + 10 * r + c) as f32)))
        .collect()
}

/// The 6 src elements of partition p in AP order: [100p, 100p+1, 100p+10, 100p+11, 100p+20, 100p+21].
fn icopy_elems(p: usize) -> [f32; 6] {
    let b = 100. * p as f32;
    [b, b + 1., b + 10., b + 11., b + 20., b + 21.]
}

#[test]
fn indirect_copy_blocks() {
    // One uint16 index per partition: an element offset into the partition's own 6 src elements
    // (NKI local_gather), E = the dst AP's innermost num = 2. idx[q] = q % 5, so the core's list
    // is [0, 1, 2, 3, 4, 0, ...]: odd offsets straddle the src's rows of 2. num_valid_indices 5:
    // every partition p gets its elements [0,1], [1,2], [2,3], [3,4], [4,5], then 7s.
    let idx: Vec<u16> = (0..16).map(|q| q % 5).collect();
    let out = run(
        &[
            t("src", "float32", 96, f32s(&icopy_src())),
            t("idx", "uint16", 16, u16s(&idx)),
            t("dst", "float32", 512, f32s(&[7.; 512])),
        ],
        &inst(
            "IndirectCopy",
            &[
                ap("src", "float32", 0, &[(6, 16), (2, 3), (1, 2)]),
                ap("idx", "uint16", 0, &[(1, 16), (1, 1)]),
            ],
            &[ap("dst", "float32", 0, &[(32, 16), (2, 16), (1, 2)])],
            r#""num_valid_indices":5"#,
        ),
    );
    let d = to_f32(&out[2]);
    for p in 0..16 {
        let e = icopy_elems(p);
        let mut want: Vec<f32> = (0..5).flat_map(|k| [e[k], e[k + 1]]).collect();
        want.resize(32, 7.);
        assert_eq!(d[p * 32..p * 32 + 32], want[..], "partition {p}");
    }
    // Two indices per partition: the list is partition-first (k = j·16 + q). idx[q][0] = 0
    // except idx[1][0] = 2, idx[q][1] = 4; num_valid 17: k = 1 is idx[1][0] = offset 2, k = 16 is
    // idx[0][1] = offset 4 (row-major would make k = 1 idx[0][1] = offset 4).
    let mut idx = vec![0u16; 32];
    for q in 0..16 {
        idx[q * 2 + 1] = 4;
    }
    idx[2] = 2;
    let out = run(
        &[
            t("src", "float32", 96, f32s(&icopy_src())),
            t("idx", "uint16", 32, u16s(&idx)),
            t("dst", "float32", 1024, f32s(&[7.; 1024])),
        ],
        &inst(
            "IndirectCopy",
            &[
                ap("src", "float32", 0, &[(6, 16), (2, 3), (1, 2)]),
                ap("idx", "uint16", 0, &[(2, 16), (1, 2)]),
            ],
            &[ap("dst", "float32", 0, &[(64, 16), (2, 32), (1, 2)])],
            r#""num_valid_indices":17"#,
        ),
    );
    let d = to_f32(&out[2]);
    for p in 0..16 {
        let e = icopy_elems(p);
        let row = &d[p * 64..p * 64 + 64];
        assert_eq!(row[0..4], [e[0], e[1], e[2], e[3]], "partition {p}");
        assert_eq!(row[4..6], [e[0], e[1]]);
        assert_eq!(row[32..34], [e[4], e[5]]);
        assert!(row[34..].iter().all(|&v| v == 7.));
    }
    // Offset 5 + 2 elements passes the partition's 6: out of bounds, nothing written.
    let mut idx: Vec<u16> = vec![0; 16];
    idx[3] = 5;
    let (mem, fault) = run_with(
        &[
            t("src", "float32", 96, f32s(&icopy_src())),
            t("idx", "uint16", 16, u16s(&idx)),
            t("dst", "float32", 512, f32s(&[7.; 512])),
        ],
        &inst(
            "IndirectCopy",
            &[
                ap("src", "float32", 0, &[(6, 16), (2, 3), (1, 2)]),
                ap("idx", "uint16", 0, &[(1, 16), (1, 1)]),
            ],
            &[ap("dst", "float32", 0, &[(32, 16), (2, 16), (1, 2)])],
            r#""num_valid_indices":16"#,
        ),
        IndirectOob::Fault,
    );
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(
        msg.contains(
            "element 3 = 5: its 2 elements [5, 5 + 2) are outside the partition's 6 source elements"
        ),
        "{msg}"
    );
    assert!(to_f32(&mem[2]).iter().all(|&v| v == 7.));
}

#[test]
fn gather_within_partitions() {
    // P = 2, src rows [10..13], [20..23]; idx [3,0,3], [1,1,2] → [13,10,13], [21,21,22].
    let tensors = |idx: &[u32]| {
        vec![
            t("src", "float32", 8, f32s(&[10., 11., 12., 13., 20., 21., 22., 23.])),
            t("idx", "uint32", 6, u32s(idx)),
            t("dst", "float32", 6, f32s(&[7.; 6])),
        ]
    };
    let g = inst(
        "Gather",
        &[ap("src", "float32", 0, &[(4, 2), (1, 4)]), ap("idx", "uint32", 0, &[(3, 2), (1, 3)])],
        &[ap("dst", "float32", 0, &[(3, 2), (1, 3)])],
        "",
    );
    let (mem, fault) = run_with(&tensors(&[3, 0, 3, 1, 1, 2]), &g, IndirectOob::Fault);
    assert!(fault.is_none());
    assert_eq!(to_f32(&mem[2]), [13., 10., 13., 21., 21., 22.]);
    // Index 4 of a 4-element partition: a fault, nothing written; skip leaves that element.
    let (mem, fault) = run_with(&tensors(&[3, 0, 3, 1, 4, 2]), &g, IndirectOob::Fault);
    let (kind, msg) = fault.unwrap();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("element 4 = 4 is outside the table's 4 entries"), "{msg}");
    assert_eq!(to_f32(&mem[2]), [7.; 6]);
    let (mem, _) = run_with(&tensors(&[3, 0, 3, 1, 4, 2]), &g, IndirectOob::Skip);
    assert_eq!(to_f32(&mem[2]), [13., 10., 13., 21., 7., 22.]);
}

#[test]
fn same_buffer_keeps_serial_order() {
    // One tensor [0..8): table entries r = elements r, r+1 (final level [1, 7], L = 2); dst rows
    // at elements 4..6 and 6..8. idx [0, 3]: row 0 ← [0, 1] (elements 4, 5 now 0, 1), then
    // row 1 ← elements 3, 4 = [3, 0] — element 4 as entry 0 left it.
    let m: Vec<f32> = (0..8).map(|e| e as f32).collect();
    let out = run(
        &[t("m", "float32", 8, f32s(&m)), t("idx", "int32", 2, i32s(&[0, 3]))],
        &inst(
            "IndirectLoad",
            &[ap("m", "float32", 0, &[(1, 1), (1, 7)]), ap("idx", "int32", 0, &[(2, 1), (1, 2)])],
            &[ap("m", "float32", 4, &[(2, 2), (1, 2)])],
            "",
        ),
    );
    assert_eq!(to_f32(&out[0]), [0., 1., 2., 3., 0., 1., 3., 0.]);
    // A scatter-add whose values live in the table: row 1 (elements 2, 3) += values row 0
    // (elements 0, 1) = [0, 1] → [2, 4]; then row 0 (elements 0, 1) += values row 1 (elements
    // 2, 3, as just written) = [2, 4] → [2, 5].
    let m: Vec<f32> = (0..4).map(|e| e as f32).collect();
    let out = run(
        &[t("m", "float32", 4, f32s(&m)), t("idx", "int32", 2, i32s(&[1, 0]))],
        &inst(
            "IndirectSaveAccumulate",
            &[ap("m", "float32", 0, &[(2, 2), (1, 2)]), ap("idx", "int32", 0, &[(2, 1), (1, 2)])],
            &[ap("m", "float32", 0, &[(1, 1), (2, 2)])],
            r#""num_indices":2,"entry_step_elements":2,"op":"add""#,
        ),
    );
    assert_eq!(to_f32(&out[0]), [2., 5., 2., 4.]);
}

/// bf16 RNE of an fp32 (finite values), written here as the twin's rounding.
fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// The fast paths (a contiguous destination gathered in place; strided destinations through a
/// flat buffer; the fp32 and bf16 scatter-add kernels) against loops written here, over random
/// sizes, duplicate-heavy indices and skips.
#[rstest]
#[case(1, 7, 5, 11)]
#[case(2, 64, 3, 40)]
#[case(3, 9, 33, 17)]
#[case(4, 1, 4, 6)]
fn fast_paths_match_the_twin(#[case] seed: u64, #[case] rows: usize, #[case] len: usize, #[case] n: usize) {
    let mut rng = XorShift64Star::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let tab: Vec<f32> = (0..rows * len).map(|_| (rng.next_u64() % 1000) as f32 / 8.0).collect();
    let idx: Vec<u64> = (0..n)
        .map(|_| {
            if rng.next_u64().is_multiple_of(5) {
                (1u64 << 32) - 1
            } else {
                (1u64 << 32) + rng.next_u64() % rows as u64
            }
        })
        .collect();
    let row = |v: u64| (v != (1 << 32) - 1).then(|| (v - (1 << 32)) as usize);
    // Gather, contiguous and strided (rows reversed) destinations.
    for reversed in [false, true] {
        let dst_ap = if reversed {
            ap(
                "dst",
                "float32",
                ((n - 1) * len) as i64,
                &[(1, 1), (-(len as i64), n as i64), (1, len as i64)],
            )
        } else {
            ap("dst", "float32", 0, &[(len as i64, n as i64), (1, len as i64)])
        };
        let out = run(
            &[
                t("tab", "float32", rows * len, f32s(&tab)),
                t("idx", "uint64", n, u64s(&idx)),
                t("dst", "float32", n * len, f32s(&vec![-1.; n * len])),
            ],
            &inst(
                "IndirectLoad",
                &[
                    ap("tab", "float32", 0, &[(1, 1), (len as i64, rows as i64)]),
                    ap("idx", "uint64", 0, &[(n as i64, 1), (1, n as i64)]),
                ],
                &[dst_ap],
                "",
            ),
        );
        let mut want = vec![-1f32; n * len];
        for (j, &v) in idx.iter().enumerate() {
            let at = if reversed { n - 1 - j } else { j };
            if let Some(r) = row(v) {
                want[at * len..(at + 1) * len].copy_from_slice(&tab[r * len..(r + 1) * len]);
            }
        }
        assert_eq!(to_f32(&out[2]), want, "reversed {reversed}");
    }
    // Scatter-add fp32 and bf16, serial rounding per step; values contiguous (scattered straight
    // from their buffer) and with rows reversed (through a flat buffer). IndirectSaveAccumulate's
    // uint64 indices are plain rows (seed 000 §6.2) and have no sentinel: the loads' skipped
    // entries add into row 0 here.
    let plain: Vec<u64> = idx.iter().map(|&v| row(v).unwrap_or(0) as u64).collect();
    let vals: Vec<f32> = (0..n * len).map(|_| (rng.next_u64() % 4096) as f32 / 3.0).collect();
    for reversed in [false, true] {
        let isa = |dt: &str| {
            let val_ap = if reversed {
                ap("val", dt, ((n - 1) * len) as i64, &[(1, 1), (-(len as i64), n as i64), (1, len as i64)])
            } else {
                ap("val", dt, 0, &[(len as i64, n as i64), (1, len as i64)])
            };
            inst(
                "IndirectSaveAccumulate",
                &[val_ap, ap("idx", "uint64", 0, &[(n as i64, 1), (1, n as i64)])],
                &[ap("tab", dt, 0, &[(1, 1), (len as i64, rows as i64)])],
                &format!(r#""num_indices":{n},"entry_step_elements":{len},"op":"add""#),
            )
        };
        let vrow = |j: usize| if reversed { n - 1 - j } else { j };
        let out = run(
            &[
                t("val", "float32", n * len, f32s(&vals)),
                t("idx", "uint64", n, u64s(&plain)),
                t("tab", "float32", rows * len, f32s(&tab)),
            ],
            &isa("float32"),
        );
        let mut want = tab.clone();
        for (j, &r) in plain.iter().enumerate() {
            let r = r as usize;
            for k in 0..len {
                want[r * len + k] += vals[vrow(j) * len + k];
            }
        }
        assert_eq!(to_f32(&out[2]), want, "reversed {reversed}");
        let tb: Vec<u16> = tab.iter().map(|&x| bf16(x)).collect();
        let vb: Vec<u16> = vals.iter().map(|&x| bf16(x)).collect();
        let out = run(
            &[
                t("val", "bfloat16", n * len, u16s(&vb)),
                t("idx", "uint64", n, u64s(&plain)),
                t("tab", "bfloat16", rows * len, u16s(&tb)),
            ],
            &isa("bfloat16"),
        );
        let mut want = tb.clone();
        for (j, &r) in plain.iter().enumerate() {
            let r = r as usize;
            for k in 0..len {
                want[r * len + k] = bf16(from_bf16(want[r * len + k]) + from_bf16(vb[vrow(j) * len + k]));
            }
        }
        assert_eq!(to_u16(&out[2]), want, "reversed {reversed}");
    }
}

#[test]
fn gather_in_place_is_serial() {
    // src = dst = [10, 11, 12, 13] (one partition), idx [1, 0, 0, 2]: dst[0] ← src[1] = 11, then
    // dst[1] ← element 0 = 11 (as just written), dst[2] ← 11, dst[3] ← element 2 = 11.
    let a = ap("m", "float32", 0, &[(4, 1), (1, 4)]);
    let out = run(
        &[t("m", "float32", 4, f32s(&[10., 11., 12., 13.])), t("idx", "uint8", 4, vec![1, 0, 0, 2])],
        &inst("Gather", &[a.clone(), ap("idx", "uint8", 0, &[(4, 1), (1, 4)])], &[a], ""),
    );
    assert_eq!(to_f32(&out[0]), [11., 11., 11., 11.]);
}
