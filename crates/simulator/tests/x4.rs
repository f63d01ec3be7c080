//! The packed `_x4` forms of Select, CopyPredicated, TensorScalarAffineSelect and the casting
//! DMA transpose (docs/fidelity.md K1, K2, K3; lane order N9: lane k is the k-th lowest byte
//! (fp8) or nibble (fp4) of the little-endian container), on small programs whose expected
//! bytes are worked by hand in the comments.
//!
//! Codes used (docs/shared numerics.md formats, worked from the bit layouts):
//! float8_e4m3fn (bias 7): 0.5 = 0x30, 1 = 0x38, 1.5 = 0x3C, 2 = 0x40, 3 = 0x44, 4 = 0x48,
//! 5 = 0x4A, 6 = 0x4C, 7 = 0x4E, 8 = 0x50, 9..16 = 0x51..0x58 (step 1 for 9..15: mantissa
//! 001..111 at 2^3, 16 = 0x58), −1 = 0xB8, −2 = 0xC0.
//! float8_e5m2 (bias 15): 0.5 = 0x38, 1 = 0x3C, 1.5 = 0x3E, 2 = 0x40, 3 = 0x42, 4 = 0x44,
//! 5 = 0x45, 6 = 0x46, 7 = 0x47, 8 = 0x48, 10 = 0x49, 12 = 0x4A, 14 = 0x4B, 16 = 0x4C,
//! −1 = 0xBC, −2 = 0xC0; 0x7D, 0x7F (and 0xFE) are NaNs with payloads.
//! float4_e2m1fn (bias 1): 0.5 = 0x1, 1 = 0x2, 1.5 = 0x3, 2 = 0x4, 3 = 0x5, 4 = 0x6, 6 = 0x7,
//! −1 = 0xA, −6 = 0xF.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use simulator::{FaultKind, Options};

const E4X4: &str = "float8_e4m3fn_x4";
const E5X4: &str = "float8_e5m2_x4";
const F4X4: &str = "float4_e2m1fn_x4";

/// Runs `insts` over the tensors: every tensor's final bytes, and the fault if any.
fn run(tensors: &[T<'_>], insts: &str) -> (Option<(FaultKind, String)>, Vec<Vec<u8>>) {
    let (f, mem) = run_keep(tensors, insts, Options::default(), None);
    (f.map(|f| (f.kind, f.message())), mem)
}

/// [`run`] for a program expected to finish.
fn ok(tensors: &[T<'_>], insts: &str) -> Vec<Vec<u8>> {
    let (f, mem) = run(tensors, insts);
    assert!(f.is_none(), "{f:?}");
    mem
}

fn inst(opcode: &str, engine: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"i","engine":"{engine}","ins":[{}],"outs":[{}]{}{fields}}}"#,
        ins.join(","),
        outs.join(","),
        if fields.is_empty() { "" } else { "," }
    )
}

fn imm(v: f32) -> String {
    format!(r#"{{"kind":"imm_value","dtype":"float32","value":{v:?}}}"#)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------- Select (K1)

/// K1: an fp8_x4 output of 2 containers holds 8 values, so the int32 predicate has 8
/// elements, one per lane. T = fp32 [1, 2, 0.5, 3, 4, −1, 1, 2] cast lane by lane, F = imm 2.0
/// (0x40 in every lane). pred [1,0,0,1, 0,1,1,0] → lanes [1, 2, 2, 3, 2, −1, 1, 2]
/// = 38 40 40 44 | 40 B8 38 40 (lane k at byte k of its container).
#[test]
fn select_into_fp8_x4_takes_one_int32_predicate_value_per_lane() {
    let out = ok(
        &[
            t("p", "int32", 8, i32s(&[1, 0, 0, 1, 0, 1, 1, 0])),
            t("a", "float32", 8, f32s(&[1.0, 2.0, 0.5, 3.0, 4.0, -1.0, 1.0, 2.0])),
            t("y", E4X4, 2, vec![]),
        ],
        &inst(
            "Select",
            "DVE",
            &[ap("p", "int32", 0, &[(8, 1), (1, 8)]), ap("a", "float32", 0, &[(8, 1), (1, 8)]), imm(2.0)],
            &[ap("y", E4X4, 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(hex(&out[2]), "38 40 40 44 40 B8 38 40");
}

/// The validation diagnostics (field, message) of `inst` over 2-container DRAM tensors `p`
/// (`p_dtype`, `p_n` elements) and `y` (`y_dtype`).
fn refused(p_dtype: &str, p_n: usize, y_dtype: &str, inst: &str) -> Vec<(String, String)> {
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[
          {{"name":"p","kind":"ExternalInput","dtype":"{p_dtype}","tensor_shape":[{p_n}],"memorylocations":[{{"name":"p","type":"DRAM","dims":[1,{}]}}]}},
          {{"name":"y","kind":"ExternalOutput","dtype":"{y_dtype}","tensor_shape":[2],"memorylocations":[{{"name":"y","type":"DRAM","dims":[1,8]}}]}}],
          "blocks":[{inst}]}}]}}"#,
        p_n * size_of(p_dtype)
    );
    let prog = bir_ir::json::load_str(&text).unwrap();
    let err = bir_ir::validate(&prog, &bir_ir::ValidateOptions::default()).unwrap_err();
    err.iter().map(|d| (d.field.clone(), d.message.clone())).collect()
}

/// A count mismatch between plain dtypes says nothing of x4: 1 predicate value for the 2
/// int32 outputs.
#[test]
fn a_plain_count_mismatch_does_not_mention_x4() {
    let d = refused(
        "int32",
        1,
        "int32",
        &inst(
            "Select",
            "DVE",
            &[ap("p", "int32", 0, &[(1, 1), (1, 1)]), imm(1.0), imm(0.0)],
            &[ap("y", "int32", 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "ins[0].ap");
    assert!(d[0].1.ends_with("needs one value per output value (2), found 1"), "{}", d[0].1);
}

/// K1: one predicate value per container is a count mismatch (2 values for 8); validation
/// refuses it statically, naming the predicate operand.
#[test]
fn select_with_one_predicate_value_per_container_is_refused() {
    let d = refused(
        "int32",
        2,
        E4X4,
        &inst(
            "Select",
            "DVE",
            &[ap("p", "int32", 0, &[(2, 1), (1, 2)]), imm(1.0), imm(0.0)],
            &[ap("y", E4X4, 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "ins[0].ap");
    assert!(d[0].1.contains("(8; 4 per x4 element), found 2"), "{}", d[0].1);
}

/// K1: an x4 predicate is read lane by lane with Select's strict 0/1 test (D8). pred lanes
/// [1, 0, 0, 1] (38 00 00 38), T = an x4 tensor of 4.0s (48 48 48 48), F = imm −1 (B8):
/// 48 B8 B8 48. A lane holding 0.5 (0x30) at lane 2 faults naming value 2; nothing written.
#[test]
fn select_reads_an_x4_predicate_lane_by_lane() {
    let sel = |pred: Vec<u8>| {
        run(
            &[t("p", E4X4, 1, pred), t("a", E4X4, 1, vec![0x48; 4]), t("y", E4X4, 1, vec![0x11; 4])],
            &inst(
                "Select",
                "DVE",
                &[ap("p", E4X4, 0, &[(1, 1), (1, 1)]), ap("a", E4X4, 0, &[(1, 1), (1, 1)]), imm(-1.0)],
                &[ap("y", E4X4, 0, &[(1, 1), (1, 1)])],
                "",
            ),
        )
    };
    let (f, out) = sel(vec![0x38, 0x00, 0x00, 0x38]);
    assert!(f.is_none(), "{f:?}");
    assert_eq!(hex(&out[2]), "48 B8 B8 48");
    let (f, out) = sel(vec![0x38, 0x00, 0x30, 0x38]);
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::BadField);
    assert!(msg.contains("ins[0]") && msg.contains("element 2") && msg.contains("is 0.5"), "{msg}");
    assert_eq!(hex(&out[2]), "11 11 11 11");
}

/// K1 with both branches immediates into fp4 x4: T = 1.0 (0x2), F = −6.0 (0xF) in every lane;
/// fp32 pred [1, 0, 1, 1] → lanes [2, F, 2, 2]; lanes 0, 1 are byte 0's low and high nibbles:
/// bytes F2 22.
#[test]
fn select_into_fp4_x4_from_immediates() {
    let out = ok(
        &[t("p", "float32", 4, f32s(&[1.0, 0.0, 1.0, 1.0])), t("y", F4X4, 1, vec![])],
        &inst(
            "Select",
            "DVE",
            &[ap("p", "float32", 0, &[(4, 1), (1, 4)]), imm(1.0), imm(-6.0)],
            &[ap("y", F4X4, 0, &[(1, 1), (1, 1)])],
            "",
        ),
    );
    assert_eq!(hex(&out[1]), "F2 22");
}

// ---------------------------------------------------------------- CopyPredicated (K1)

/// K1 / D9: a false lane keeps its stored bits exactly, NaN payloads included. The e5m2_x4
/// output holds 7D 7F FE 3C (three NaNs, 1.0); src fp32 2.0 in every lane (0x40); uint8 pred
/// [0, 1, 0, 0] → 7D 40 FE 3C; with reverse_pred → 40 7F 40 40. A decode/encode round trip
/// would not keep the payloads.
#[test]
fn copy_predicated_false_lanes_keep_their_nan_bits() {
    let cp = |rev: bool| {
        ok(
            &[
                t("s", "float32", 4, f32s(&[2.0; 4])),
                t("p", "uint8", 4, vec![0, 1, 0, 0]),
                t("y", E5X4, 1, vec![0x7D, 0x7F, 0xFE, 0x3C]),
            ],
            &inst(
                "CopyPredicated",
                "DVE",
                &[ap("s", "float32", 0, &[(4, 1), (1, 4)]), ap("p", "uint8", 0, &[(4, 1), (1, 4)])],
                &[ap("y", E5X4, 0, &[(1, 1), (1, 1)])],
                &format!(r#""reverse_pred":{rev}"#),
            ),
        )
        .swap_remove(2)
    };
    assert_eq!(hex(&cp(false)), "7D 40 FE 3C");
    assert_eq!(hex(&cp(true)), "40 7F 40 40");
}

/// K1: fp4 lanes merge as nibbles. The output's containers hold lanes [1, 2, 3, 4] (bytes
/// 21 43) and [5, 6, 7, 0] (65 07); src an fp4 x4 tensor of −1.0 (0xA) lanes; int32 pred
/// [1,0,0,1, 0,0,1,1] → lanes [A, 2, 3, A] = 0xA32A (2A A3) and [5, 6, A, A] = 0xAA65
/// (65 AA).
#[test]
fn copy_predicated_merges_fp4_nibbles() {
    let out = ok(
        &[
            t("s", F4X4, 2, vec![0xAA; 4]),
            t("p", "int32", 8, i32s(&[1, 0, 0, 1, 0, 0, 1, 1])),
            t("y", F4X4, 2, vec![0x21, 0x43, 0x65, 0x07]),
        ],
        &inst(
            "CopyPredicated",
            "DVE",
            &[ap("s", F4X4, 0, &[(2, 1), (1, 2)]), ap("p", "int32", 0, &[(8, 1), (1, 8)])],
            &[ap("y", F4X4, 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(hex(&out[2]), "2A A3 65 AA");
}

/// K1: a predicate of one value per container against an x4 output holds 2 values for 8:
/// validation refuses it, naming the predicate (ins[1]); a source counted in containers (an
/// fp32 AP of 2 elements beside a predicate of 8) is named the same way (ins[0]).
#[test]
fn copy_predicated_counts_values_not_containers() {
    let d = refused(
        "int32",
        2,
        F4X4,
        &inst(
            "CopyPredicated",
            "DVE",
            &[imm(1.0), ap("p", "int32", 0, &[(2, 1), (1, 2)])],
            &[ap("y", F4X4, 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "ins[1].ap");
    assert!(
        d[0].1.contains("CopyPredicated needs one value per output value (8; 4 per x4 element), found 2"),
        "{}",
        d[0].1
    );
    let d = refused(
        "float32",
        8,
        E5X4,
        &inst(
            "CopyPredicated",
            "DVE",
            &[ap("p", "float32", 0, &[(2, 1), (1, 2)]), ap("p", "float32", 0, &[(8, 1), (1, 8)])],
            &[ap("y", E5X4, 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "ins[0].ap");
    assert!(d[0].1.contains("(8; 4 per x4 element), found 2"), "{}", d[0].1);
}

/// K1: the side output folds each row's lane values in lane order. Output rows (one x4
/// container each): [1, 2, 0.5, 0] (38 40 30 00) and [4, 4, 4, 4] (48 ×4); src imm 3.0 (44);
/// an x4 predicate converted to uint32 per lane (D9): row 0 [1, 0.5, 0, 0] → [T, F, F, F]
/// (0.5 → 0), row 1 [0, 0, 0, 2] → [F, F, F, T]. Rows after the copy: [3, 2, 0.5, 0]
/// (44 40 30 00) and [4, 4, 4, 3] (48 48 48 44); side add = [5.5, 15], max = [3, 4].
#[test]
fn copy_predicated_side_output_folds_x4_lanes() {
    let cp = |fields: &str| {
        ok(
            &[
                t("p", E4X4, 2, vec![0x38, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40]),
                t("y", E4X4, 2, vec![0x38, 0x40, 0x30, 0x00, 0x48, 0x48, 0x48, 0x48]),
                t("r", "float32", 2, f32s(&[100.0, 200.0])),
            ],
            &inst(
                "CopyPredicated",
                "DVE",
                &[imm(3.0), ap("p", E4X4, 0, &[(1, 2), (1, 1)])],
                &[ap("y", E4X4, 0, &[(1, 2), (1, 1)]), ap("r", "float32", 0, &[(1, 2), (1, 1)])],
                fields,
            ),
        )
    };
    let out = cp(r#""reduce_op":"add""#);
    assert_eq!(hex(&out[1]), "44 40 30 00 48 48 48 44");
    assert_eq!(to_f32(&out[2]), [5.5, 15.0]);
    let out = cp(r#""reduce_op":"max""#);
    assert_eq!(to_f32(&out[2]), [3.0, 4.0]);
}

// ---------------------------------------------------------------- TensorScalarAffineSelect (K2)

/// K2: 2 partitions × 2 x4 containers, v = p − x (cm 1, X step −1), is_ge keeps x ≤ p: row 0
/// keeps container 0 and fills container 1, row 1 keeps both; all 4 lanes of a container
/// share its predicate. The input is fp32 1..16 (4 consecutive values per container), the
/// fill −1.0 (B8 in every lane): 38 40 44 48 | B8 B8 B8 B8 | 51 52 53 54 | 55 56 57 58.
#[test]
fn affine_select_into_x4_shares_one_predicate_per_container() {
    let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let out = ok(
        &[t("x", "float32", 16, f32s(&x)), t("y", E4X4, 4, vec![])],
        &inst(
            "TensorScalarAffineSelect",
            "Pool",
            &[ap("x", "float32", 0, &[(8, 2), (1, 8)])],
            &[ap("y", E4X4, 0, &[(2, 2), (1, 2)])],
            r#""pattern":[[-1,2]],"channel_multiplier":1,"compare_op":"is_ge","fill_value":-1.0"#,
        ),
    );
    assert_eq!(hex(&out[1]), "38 40 44 48 B8 B8 B8 B8 51 52 53 54 55 56 57 58");
}

/// K2 with an x4 input of the same container count: a kept container moves with its lanes
/// (here raw, same dtype), a filled one is −1.0 in every lane. One partition, 2 containers,
/// v = 0 − x: is_ge keeps x = 0 only.
#[test]
fn affine_select_x4_input_keeps_whole_containers() {
    let out = ok(
        &[t("x", E5X4, 2, vec![0x7D, 0x3C, 0x40, 0x42, 0x44, 0x45, 0x46, 0x47]), t("y", E5X4, 2, vec![])],
        &inst(
            "TensorScalarAffineSelect",
            "Pool",
            &[ap("x", E5X4, 0, &[(2, 1), (1, 2)])],
            &[ap("y", E5X4, 0, &[(2, 1), (1, 2)])],
            r#""pattern":[[-1,2]],"channel_multiplier":0,"compare_op":"is_ge","fill_value":-1.0"#,
        ),
    );
    assert_eq!(hex(&out[1]), "7D 3C 40 42 BC BC BC BC");
}

// ---------------------------------------------------------------- DMACopy Transpose (K3)

/// K3, packing: fp32 [1,1,2,8] rows y=0: 1..8, y=1: 9..16 is cast to e4m3fn_x4 in its own
/// order, 4 consecutive X values per container: packed [1,1,2,2] with P[y][x'] = row y's
/// values 4x'..4x'+3. WZXY (perm 0,1,3,2) gives dst[a][b] = P[b][a]: P[0][0] = 1..4,
/// P[1][0] = 9..12, P[0][1] = 5..8, P[1][1] = 13..16.
#[test]
fn dma_transpose_fp32_into_fp8_x4_packs_along_source_x() {
    let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let out = ok(
        &[t("x", "float32", 16, f32s(&x)), t("y", E4X4, 4, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", "float32", 0, &[(16, 1), (16, 1), (8, 2), (1, 8)])],
            &[ap("y", E4X4, 0, &[(4, 1), (4, 1), (2, 2), (1, 2)])],
            r#""mode":"Transpose","transpose_op":"WZXY""#,
        ),
    );
    assert_eq!(hex(&out[1]), "38 40 44 48 51 52 53 54 4A 4C 4E 50 55 56 57 58");
}

/// K3, unpacking: e4m3fn_x4 [1,1,2,2] holding 1..16 (containers 1..4, 5..8, 9..12, 13..16)
/// unpacks to fp32 [1,1,2,8] (rows 1..8 and 9..16); WZXY makes [1,1,8,2] with dst[a][b] =
/// U[b][a]: 1, 9, 2, 10, …, 8, 16.
#[test]
fn dma_transpose_fp8_x4_into_fp32_unpacks_along_source_x() {
    let src =
        vec![0x38, 0x40, 0x44, 0x48, 0x4A, 0x4C, 0x4E, 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58];
    let out = ok(
        &[t("x", E4X4, 4, src), t("y", "float32", 16, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", E4X4, 0, &[(4, 1), (4, 1), (2, 2), (1, 2)])],
            &[ap("y", "float32", 0, &[(16, 1), (16, 1), (2, 8), (1, 2)])],
            r#""mode":"Transpose","transpose_op":"WZXY""#,
        ),
    );
    let want: Vec<f32> = (1..=8).flat_map(|v| [v as f32, (v + 8) as f32]).collect();
    assert_eq!(to_f32(&out[1]), want);
}

/// K3, between x4 dtypes: the shape is kept and each container is cast lane by lane, then
/// containers permute. e4m3fn_x4 [1,1,2,2] = [1,2,3,4] [5,6,7,8] [10,12,14,16]
/// [0.5,−1,1.5,−2]; WZXY orders them c00, c10, c01, c11, in e5m2: 3C 40 42 44 | 49 4A 4B 4C |
/// 45 46 47 48 | 38 BC 3E C0.
#[test]
fn dma_transpose_fp8e4_x4_into_fp8e5_x4_casts_lane_by_lane() {
    let src =
        vec![0x38, 0x40, 0x44, 0x48, 0x4A, 0x4C, 0x4E, 0x50, 0x52, 0x54, 0x56, 0x58, 0x30, 0xB8, 0x3C, 0xC0];
    let out = ok(
        &[t("x", E4X4, 4, src), t("y", E5X4, 4, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", E4X4, 0, &[(4, 1), (4, 1), (2, 2), (1, 2)])],
            &[ap("y", E5X4, 0, &[(4, 1), (4, 1), (2, 2), (1, 2)])],
            r#""mode":"Transpose","transpose_op":"WZXY""#,
        ),
    );
    assert_eq!(hex(&out[1]), "3C 40 42 44 49 4A 4B 4C 45 46 47 48 38 BC 3E C0");
}

/// K3: a source X of 6 does not pack into groups of 4: a `dims` (shape) fault naming outs[0],
/// nothing written (validation leaves it to the executor).
#[test]
fn dma_transpose_packing_an_x_not_a_multiple_of_4_faults() {
    let (f, out) = run(
        &[t("x", "float32", 12, f32s(&[1.0; 12])), t("y", E4X4, 4, vec![0x11; 16])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", "float32", 0, &[(12, 1), (12, 1), (6, 2), (1, 6)])],
            &[ap("y", E4X4, 0, &[(4, 1), (4, 1), (2, 2), (1, 1)])],
            r#""mode":"Transpose","transpose_op":"WZXY""#,
        ),
    );
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::Shape);
    assert!(msg.contains("outs[0]") && msg.contains("multiple of 4"), "{msg}");
    assert_eq!(out[1], vec![0x11; 16]);
}

/// K1 / D9 when the output's AP dtype is not its memory's: the taken values are converted on
/// to the memory dtype and merged as bits there, so an untaken one keeps its stored bits.
/// bf16 memory read as fp32: stored 7F81 (a NaN with payload), 3F80 (1.0); src fp32 [2, 3],
/// pred [0, 1] → 7F81, 4040 (3.0): bytes 81 7F 40 40. e5m2_x4 memory read as e4m3fn_x4: stored
/// 7D 3C 3C 3C; src imm 2.0 (e4m3fn 0x40, stored as e5m2 0x40); pred [0, 1, 0, 1] →
/// 7D 40 3C 40.
#[test]
fn copy_predicated_through_a_storage_cast_keeps_untaken_bits() {
    let out = ok(
        &[
            t("s", "float32", 2, f32s(&[2.0, 3.0])),
            t("p", "uint8", 2, vec![0, 1]),
            t("y", "bfloat16", 2, vec![0x81, 0x7F, 0x80, 0x3F]),
        ],
        &inst(
            "CopyPredicated",
            "DVE",
            &[ap("s", "float32", 0, &[(2, 1), (1, 2)]), ap("p", "uint8", 0, &[(2, 1), (1, 2)])],
            &[ap("y", "float32", 0, &[(2, 1), (1, 2)])],
            "",
        ),
    );
    assert_eq!(hex(&out[2]), "81 7F 40 40");
    let out = ok(
        &[t("p", "uint8", 4, vec![0, 1, 0, 1]), t("y", E5X4, 1, vec![0x7D, 0x3C, 0x3C, 0x3C])],
        &inst(
            "CopyPredicated",
            "DVE",
            &[imm(2.0), ap("p", "uint8", 0, &[(4, 1), (1, 4)])],
            &[ap("y", E4X4, 0, &[(1, 1), (1, 1)])],
            "",
        ),
    );
    assert_eq!(hex(&out[1]), "7D 40 3C 40");
}
