//! Dynamic offsets on every op (issue #25 items 5–7; docs/bir-json.md "Dynamic offsets";
//! docs/fidelity.md D1, D4, D18, D19, G56, G57): scalar offsets resolved before the kernel
//! runs, their out-of-bounds faults, which stride an offset scales by, TensorCopyDynamicSrc/Dst,
//! DMACopy's other modes, the HW-DGE bridge beside a scalar offset and with revisiting rows,
//! and DMACopy CCE from a zeroed accumulator. Every expected value is worked by hand in the
//! comments from the formula (never from birsim's output).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use bir_ir::{ValidateOptions, json, validate};
use common::*;
use simulator::{FaultKind, Options};

/// A fault's kind, its instruction and message, and the bytes memory holds after it.
type Faulted = (FaultKind, String, Vec<Vec<u8>>);

/// Runs `insts`; every tensor's final bytes, or the fault.
fn run(tensors: &[T<'_>], insts: &str) -> Result<Vec<Vec<u8>>, Faulted> {
    match run_keep(tensors, insts, Options::default(), None) {
        (None, mem) => Ok(mem),
        (Some(f), mem) => Err((f.kind, format!("{} {}", f.instruction, f.message()), mem)),
    }
}

fn inst(opcode: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"dyn_inst","engine":"DMA","ins":[{}],"outs":[{}]{}{fields}}}"#,
        ins.join(","),
        outs.join(","),
        if fields.is_empty() { "" } else { "," }
    )
}

/// A physical AP with a scalar dynamic offset read from `idx` (int32, one element).
fn dyn_ap(mem: &str, dtype: &str, pairs: &[(i64, i64)], dim: &str, max: i64) -> String {
    let plain = ap(mem, dtype, 0, pairs);
    let idx = ap("idx", "int32", 0, &[(1, 1), (1, 1)]);
    format!(
        r#"{},"indirect_dim":"{dim}","indirect_dim_max_index":{max},"scalar_offset":{idx}}}"#,
        plain.strip_suffix('}').unwrap()
    )
}

/// A physical AP with a vector offset read from `ix` (uint16, `n` elements).
fn vec_ap(mem: &str, dtype: &str, pairs: &[(i64, i64)], dim: &str, max: i64, n: i64) -> String {
    let plain = ap(mem, dtype, 0, pairs);
    let ix = ap("ix", "uint16", 0, &[(n, 1), (1, n)]);
    format!(
        r#"{},"indirect_dim":"{dim}","indirect_dim_max_index":{max},"vector_offset":{ix}}}"#,
        plain.strip_suffix('}').unwrap()
    )
}

/// The diagnostics `bir_ir::validate` gives for `insts` over flat DRAM tensors (name, dtype,
/// elements), as one string.
fn validation_errors(tensors: &[(&str, &str, usize)], insts: &str) -> String {
    let allocs: Vec<String> = tensors
        .iter()
        .map(|(name, dtype, n)| {
            format!(
                r#"{{"name":"{name}","kind":"ExternalInput","dtype":"{dtype}","tensor_shape":[{n}],"memorylocations":[{{"name":"{name}","type":"DRAM","dims":[1,{}]}}]}}"#,
                n * size_of(dtype)
            )
        })
        .collect();
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{}],"blocks":[{insts}]}}]}}"#,
        allocs.join(",")
    );
    let prog = json::load_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    match validate(&prog, &ValidateOptions::default()) {
        Ok(_) => String::new(),
        Err(e) => format!("{e:?}"),
    }
}

/// x[r, c] = 100·r + c over 8 rows × 16 columns (a row-major base tensor).
fn base_8x16() -> Vec<f32> {
    (0..8).flat_map(|r| (0..16).map(move |c| (100 * r + c) as f32)).collect()
}

// ---------------------------------------------------------------- the stride rule (D1)

/// Item 6: a window of 4 of the base tensor's 16 columns, AP `[[16, 2], [1, 4]]`, index 3 on
/// W. The indexed level's step is the base tensor's row stride (16 elements), so the window
/// moves 3 rows: rows 3 and 4, columns 0..3. The other reading (the product of the AP's own
/// inner nums, 4) would start at element 12: `[12, 13, 14, 15, 28, 29, 30, 31]`.
#[test]
fn a_scalar_offset_scales_by_the_indexed_levels_step() {
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[3])),
            t("y", "float32", 8, f32s(&[-1.0; 8])),
        ],
        &inst(
            "TensorCopy",
            &[dyn_ap("x", "float32", &[(16, 2), (1, 4)], "W", 7)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            "",
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [300.0, 301.0, 302.0, 303.0, 400.0, 401.0, 402.0, 403.0]);
    assert_ne!(to_f32(&out[2]), [12.0, 13.0, 14.0, 15.0, 28.0, 29.0, 30.0, 31.0]);
}

/// The same rule on the free level (letter Z = level 1 of a 2-level AP, step 1): index 5
/// moves every row's window 5 columns right: x[r, 5..9].
#[test]
fn a_free_dim_offset_moves_the_window_along_the_row() {
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[5])),
            t("y", "float32", 8, f32s(&[-1.0; 8])),
        ],
        &inst(
            "GenericCopy",
            &[dyn_ap("x", "float32", &[(16, 2), (1, 4)], "Z", 13)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            "",
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [5.0, 6.0, 7.0, 8.0, 105.0, 106.0, 107.0, 108.0]);
}

// ---------------------------------------------------------------- out of bounds (D18)

fn copy_with_index(op: &str, index: i32, max: i64) -> Result<Vec<f32>, (FaultKind, String, Vec<f32>)> {
    run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[index])),
            t("y", "float32", 8, f32s(&[-1.0; 8])),
        ],
        &inst(
            op,
            &[dyn_ap("x", "float32", &[(16, 2), (1, 4)], "W", max)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            "",
        ),
    )
    .map(|m| to_f32(&m[2]))
    .map_err(|(k, msg, m)| (k, msg, to_f32(&m[2])))
}

#[test]
fn an_out_of_bounds_scalar_offset_is_a_located_fault_and_writes_nothing() {
    // Index 7 ≥ max 7.
    let (kind, msg, y) = copy_with_index("TensorCopy", 7, 7).unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("dyn_inst") && msg.contains("ins[0].scalar_offset"), "{msg}");
    assert!(msg.contains("index 7 is outside 0..7"), "{msg}");
    assert_eq!(y, [-1.0; 8]);
    // Index −1.
    let (kind, msg, y) = copy_with_index("Load", -1, 7).unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("index -1"), "{msg}");
    assert_eq!(y, [-1.0; 8]);
    // Index 7 < max 100, but rows 7 and 8 leave the 8-row location.
    let (kind, msg, y) = copy_with_index("Save", 7, 100).unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(
        msg.contains("ins[0].scalar_offset: index 7 moves the access pattern out of its memory location"),
        "{msg}"
    );
    assert_eq!(y, [-1.0; 8]);
    // Index 6: rows 6 and 7, inside.
    assert_eq!(
        copy_with_index("AbstractCopy", 6, 7).unwrap(),
        [600.0, 601.0, 602.0, 603.0, 700.0, 701.0, 702.0, 703.0]
    );
}

#[test]
fn an_out_of_bounds_output_offset_names_the_output() {
    // Memset a 4-element row of y (2 rows × 4) at row index 2 ≥ max 2.
    let r = run(
        &[t("idx", "int32", 1, i32s(&[2])), t("y", "float32", 8, f32s(&[-1.0; 8]))],
        &inst(
            "Memset",
            &[],
            &[dyn_ap("y", "float32", &[(4, 1), (1, 4)], "W", 2)],
            r#""mode":"Const","constant":0"#,
        ),
    );
    let (kind, msg, mem) = r.unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("outs[0].scalar_offset: index 2"), "{msg}");
    assert_eq!(to_f32(&mem[1]), [-1.0; 8]);
}

// ---------------------------------------------------------------- scalar offsets on other ops

#[test]
fn memset_and_tensor_tensor_take_scalar_offsets() {
    // Memset row 1 of y (2 × 4) to 0: y = [-1]*4 + [0]*4.
    let out = run(
        &[t("idx", "int32", 1, i32s(&[1])), t("y", "float32", 8, f32s(&[-1.0; 8]))],
        &inst(
            "Memset",
            &[],
            &[dyn_ap("y", "float32", &[(4, 1), (1, 4)], "W", 2)],
            r#""mode":"Const","constant":0"#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [-1.0, -1.0, -1.0, -1.0, 0.0, 0.0, 0.0, 0.0]);
    // TensorTensor add: ins[0] = a[0..4] = [1, 2, 3, 4]; ins[1] = x row 2 (index 2 on W,
    // step 16): [200, 201, 202, 203] → [201, 203, 205, 207].
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("a", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])),
            t("idx", "int32", 1, i32s(&[2])),
            t("y", "float32", 4, vec![]),
        ],
        &inst(
            "TensorTensor",
            &[ap("a", "float32", 0, &[(4, 1), (1, 4)]), dyn_ap("x", "float32", &[(16, 1), (1, 4)], "W", 8)],
            &[ap("y", "float32", 0, &[(4, 1), (1, 4)])],
            r#""op":"add""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[3]), [201.0, 203.0, 205.0, 207.0]);
}

#[test]
fn tensor_reduce_with_an_indirect_input_runs_on_axis_x() {
    // Row 4 of x (index 4 on W, step 16), 8 columns summed: 400·8 + (0 + … + 7) = 3228.
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[4])),
            t("y", "float32", 1, vec![]),
        ],
        &inst(
            "TensorReduce",
            &[dyn_ap("x", "float32", &[(16, 1), (1, 8)], "W", 8)],
            &[ap("y", "float32", 0, &[(1, 1), (1, 1)])],
            r#""op":"add","axis":"X""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [3228.0]);
    // Any other axis: seed 000 §3.1's assertion, a validation bad-field error.
    let e = validation_errors(
        &[("x", "float32", 128), ("idx", "int32", 1), ("y", "float32", 1)],
        &inst(
            "TensorReduce",
            &[dyn_ap("x", "float32", &[(16, 1), (1, 8)], "W", 8)],
            &[ap("y", "float32", 0, &[(1, 1), (1, 1)])],
            r#""op":"add","axis":"XY""#,
        ),
    );
    assert!(e.contains("Indirection is only allowed for AxisListType::X") && e.contains("BadField"), "{e}");
}

// ---------------------------------------------------------------- TensorCopyDynamicSrc/Dst

/// AWS's legacy test: `np.take(src, 4 + arange(n), axis=1)`: with src = x (8 × 16), n = 6 and
/// index 4 on level 1 (letter Z), row r of the result is x[r, 4..10] = 100·r + 4 .. 100·r + 9.
#[test]
fn tensor_copy_dynamic_src_is_np_take_along_axis_1() {
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[4])),
            t("y", "float32", 48, vec![]),
        ],
        &inst(
            "TensorCopyDynamicSrc",
            &[dyn_ap("x", "float32", &[(16, 8), (1, 6)], "Z", 11)],
            &[ap("y", "float32", 0, &[(6, 8), (1, 6)])],
            "",
        ),
    )
    .unwrap();
    let want: Vec<f32> = (0..8).flat_map(|r| (4..10).map(move |c| (100 * r + c) as f32)).collect();
    assert_eq!(to_f32(&out[2]), want);
}

/// Dst: y (2 × 8, all −1) gets a = [1, 2, 3, 4 | 5, 6, 7, 8] at columns 3..7 of each row.
#[test]
fn tensor_copy_dynamic_dst_writes_at_the_offset() {
    let out = run(
        &[
            t("a", "float32", 8, f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])),
            t("idx", "int32", 1, i32s(&[3])),
            t("y", "float32", 16, f32s(&[-1.0; 16])),
        ],
        &inst(
            "TensorCopyDynamicDst",
            &[ap("a", "float32", 0, &[(4, 2), (1, 4)])],
            &[dyn_ap("y", "float32", &[(8, 2), (1, 4)], "Z", 5)],
            "",
        ),
    )
    .unwrap();
    let m = -1.0;
    assert_eq!(to_f32(&out[2]), [m, m, m, 1.0, 2.0, 3.0, 4.0, m, m, m, m, 5.0, 6.0, 7.0, 8.0, m]);
}

#[test]
fn tensor_copy_dynamic_needs_its_offset_on_a_free_dim() {
    let tensors = [("a", "float32", 8), ("idx", "int32", 1), ("y", "float32", 16)];
    let missing = validation_errors(
        &tensors,
        &inst(
            "TensorCopyDynamicSrc",
            &[ap("a", "float32", 0, &[(4, 2), (1, 4)])],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            "",
        ),
    );
    assert!(missing.contains("ins[0].scalar_offset") && missing.contains("BadField"), "{missing}");
    let on_w = validation_errors(
        &tensors,
        &inst(
            "TensorCopyDynamicDst",
            &[ap("a", "float32", 0, &[(4, 2), (1, 4)])],
            &[dyn_ap("y", "float32", &[(8, 2), (1, 4)], "W", 1)],
            "",
        ),
    );
    assert!(on_w.contains("outs[0].indirect_dim") && on_w.contains("never the partition dim"), "{on_w}");
}

// ---------------------------------------------------------------- DMACopy's other modes

#[test]
fn dma_replicate_and_cce_take_scalar_offsets() {
    // Replicate: src = x row 5 (index 5 on W), [[16, 1], [1, 4]] → 2 partitions of y.
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[5])),
            t("y", "float32", 8, vec![]),
        ],
        &inst(
            "DMACopy",
            &[dyn_ap("x", "float32", &[(16, 1), (1, 4)], "W", 8)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            r#""mode":"Replicate""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [500.0, 501.0, 502.0, 503.0, 500.0, 501.0, 502.0, 503.0]);
    // CCE add: ins[0] = [1, 1, 1, 1], ins[1] = x row 1 columns 0..3 → [101, 102, 103, 104].
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("a", "float32", 4, f32s(&[1.0; 4])),
            t("idx", "int32", 1, i32s(&[1])),
            t("y", "float32", 4, vec![]),
        ],
        &inst(
            "DMACopy",
            &[ap("a", "float32", 0, &[(4, 1), (1, 4)]), dyn_ap("x", "float32", &[(16, 1), (1, 4)], "W", 8)],
            &[ap("y", "float32", 0, &[(4, 1), (1, 4)])],
            r#""mode":"CCE","cce_op":"add""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[3]), [101.0, 102.0, 103.0, 104.0]);
}

/// D1's tolerance belongs to doCopy (seed 000 §5.1): Transpose code None is doCopy and
/// tolerates; Replicate does not (a fault even with `oob_is_err` false; D18).
#[test]
fn dma_oob_tolerance_is_docopys_only() {
    // x row 7 and "row 8" (outside): with oob_is_err false, only row 7's 4 elements copy.
    let tensors = || {
        [
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[7])),
            t("y", "float32", 8, f32s(&[-1.0; 8])),
        ]
    };
    let out = run(
        &tensors(),
        &inst(
            "DMACopy",
            &[dyn_ap("x", "float32", &[(16, 2), (1, 4)], "W", 100)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            r#""mode":"Transpose","transpose_op":"None","oob_is_err":false"#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [700.0, 701.0, 702.0, 703.0, -1.0, -1.0, -1.0, -1.0]);
    let (kind, msg, mem) = run(
        &tensors(),
        &inst(
            "DMACopy",
            &[dyn_ap("x", "float32", &[(16, 1), (1, 4)], "W", 7)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            r#""mode":"Replicate","oob_is_err":false"#,
        ),
    )
    .unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("ins[0].scalar_offset: index 7 is outside 0..7"), "{msg}");
    assert_eq!(to_f32(&mem[2]), [-1.0; 8]);
}

#[test]
fn vector_offsets_outside_the_hw_dge_arm_are_validation_errors() {
    let tensors = [("x", "float32", 128), ("ix", "uint16", 2), ("y", "float32", 8), ("idx", "int32", 1)];
    // On a TensorCopy.
    let e = validation_errors(
        &tensors,
        &inst(
            "TensorCopy",
            &[vec_ap("x", "float32", &[(16, 2), (1, 4)], "W", 8, 2)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            "",
        ),
    );
    assert!(e.contains("ins[0].vector_offset") && e.contains("HW-DGE form"), "{e}");
    // In DMACopy Replicate.
    let e = validation_errors(
        &tensors,
        &inst(
            "DMACopy",
            &[vec_ap("x", "float32", &[(16, 2), (1, 4)], "W", 8, 2)],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            r#""mode":"Replicate""#,
        ),
    );
    assert!(e.contains("routes only Copy mode"), "{e}");
    // On both sides of a DMACopy Copy.
    let e = validation_errors(
        &tensors,
        &inst(
            "DMACopy",
            &[vec_ap("x", "float32", &[(16, 2), (1, 4)], "W", 8, 2)],
            &[vec_ap("y", "float32", &[(4, 2), (1, 4)], "W", 2, 2)],
            r#""mode":"Copy""#,
        ),
    );
    assert!(e.contains("getIndirectArgId"), "{e}");
}

// ---------------------------------------------------------------- the HW-DGE bridge

/// A scatter (vector offset on outs[0]) whose dense side carries a scalar offset: the scalar
/// resolves first. Dense = x rows 2 and 3 (index 2 on W), columns 0..3; ix = [1, 0]: y row 1
/// ← x row 2, y row 0 ← x row 3.
#[test]
fn a_vector_offset_beside_a_scalar_offset() {
    let out = run(
        &[
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[2])),
            t("ix", "uint16", 2, u16s(&[1, 0])),
            t("y", "float32", 8, f32s(&[-1.0; 8])),
        ],
        &inst(
            "DMACopy",
            &[dyn_ap("x", "float32", &[(16, 2), (1, 4)], "W", 7)],
            &[vec_ap("y", "float32", &[(4, 2), (1, 4)], "W", 2, 2)],
            r#""mode":"Copy""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[3]), [300.0, 301.0, 302.0, 303.0, 200.0, 201.0, 202.0, 203.0]);
}

/// A HW-DGE add whose written row visits one element twice (step 0): seed 000 §6.3's serial
/// loop, each add rounding to bf16. y (bf16) = [256, 0]; one dense row [1, 1] → y[0] += 1
/// twice: 256 + 1 = 257 rounds (RNE, spacing 2) to 256, twice → 256. An add of the row's sum
/// (2) at once would give 258.
#[test]
fn a_hw_dge_add_whose_row_revisits_an_element_runs_serially() {
    let bf = |v: f32| ((v.to_bits() >> 16) as u16).to_le_bytes();
    let y0: Vec<u8> = [256.0f32, 0.0].iter().flat_map(|v| bf(*v)).collect();
    let out = run(
        &[
            t("a", "float32", 2, f32s(&[1.0, 1.0])),
            t("ix", "uint16", 1, u16s(&[0])),
            t("y", "bfloat16", 2, y0),
        ],
        &inst(
            "DMACopy",
            &[ap("a", "float32", 0, &[(2, 1), (1, 2)])],
            &[vec_ap("y", "bfloat16", &[(1, 2), (0, 2)], "W", 2, 1)],
            r#""mode":"Copy","cce_op":"add""#,
        ),
    )
    .unwrap();
    let y = to_u16(&out[2]);
    assert_eq!(y, [0x4380, 0x0000], "256 (0x4380) kept: each +1 rounds back");
    // In fp32 the same row adds exactly: y = [1, 2] + row [3, 4] on one element → [8, 2].
    let out = run(
        &[
            t("a", "float32", 2, f32s(&[3.0, 4.0])),
            t("ix", "uint16", 1, u16s(&[0])),
            t("y", "float32", 2, f32s(&[1.0, 2.0])),
        ],
        &inst(
            "DMACopy",
            &[ap("a", "float32", 0, &[(2, 1), (1, 2)])],
            &[vec_ap("y", "float32", &[(1, 2), (0, 2)], "W", 2, 1)],
            r#""mode":"Copy","cce_op":"add""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [8.0, 2.0]);
}

// ---------------------------------------------------------------- DMACopy CCE (D4)

fn cce(op: &str, ins: &[[f32; 3]], constants: &str) -> Vec<f32> {
    let mut tensors = Vec::new();
    let names = ["a", "b", "c"];
    for (k, v) in ins.iter().enumerate() {
        tensors.push(t(names[k], "float32", 3, f32s(v)));
    }
    tensors.push(t("y", "float32", 3, vec![]));
    let srcs: Vec<String> = (0..ins.len()).map(|k| ap(names[k], "float32", 0, &[(3, 1), (1, 3)])).collect();
    let out = run(
        &tensors,
        &inst(
            "DMACopy",
            &srcs,
            &[ap("y", "float32", 0, &[(3, 1), (1, 3)])],
            &format!(r#""mode":"CCE","cce_op":"{op}"{constants}"#),
        ),
    )
    .unwrap();
    to_f32(&out[ins.len()])
}

/// re-facts §5: "folded into a zeroed fp32 accumulator". max over all-negative inputs is
/// fmaxf(fmaxf(0, a), b) = 0; min over all-positive ones is 0; constants scale add only.
#[test]
fn dma_cce_folds_from_a_zeroed_accumulator() {
    let neg = [[-1.0, -5.0, -0.5], [-2.0, -3.0, -7.0]];
    assert_eq!(cce("max", &neg, ""), [0.0, 0.0, 0.0]);
    let pos = [[1.0, 5.0, 0.5], [2.0, 3.0, 7.0]];
    assert_eq!(cce("min", &pos, ""), [0.0, 0.0, 0.0]);
    // Mixed: max(0, 1, -2) = 1; max(0, -5, 3) = 3; max(0, -0.5, -7) = 0.
    assert_eq!(cce("max", &[[1.0, -5.0, -0.5], [-2.0, 3.0, -7.0]], ""), [1.0, 3.0, 0.0]);
    // Constants (-1, 2) do not scale max: max(0, 1, 2) = 2, not max(0, -1, 4).
    let c = r#","constants":[-1.0, 2.0]"#;
    assert_eq!(cce("max", &[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], c), [2.0, 2.0, 2.0]);
    // Add with constants: 0 + (-1)·1 + 2·2 = 3.
    assert_eq!(cce("add", &[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], c), [3.0, 3.0, 3.0]);
    // The zero start is +0.0, and glibc's fminf returns its first argument on a ±0 tie:
    // fminf(+0, −0) = +0, then fminf(+0, 1) = +0.
    let z = cce("min", &[[-0.0, -0.0, 1.0]], "");
    assert_eq!(z.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [0, 0, 0]);
}

// ---------------------------------------------------------------- indirect ops and descriptors

/// An IndirectLoad whose table AP carries a scalar offset: tab holds 8 entries of 3 (value
/// 10·entry + column); the table AP `[[1, 1], [3, 5]]` with index 2 on Z (level 1, step 3)
/// starts at entry 2, so indices [0, 4, 1] read entries 2, 6 and 3.
#[test]
fn an_indirect_load_table_with_a_scalar_offset() {
    let tab: Vec<f32> = (0..8).flat_map(|r| (0..3).map(move |c| (10 * r + c) as f32)).collect();
    let out = run(
        &[
            t("tab", "float32", 24, f32s(&tab)),
            t("idx", "int32", 1, i32s(&[2])),
            t("ix", "int32", 3, i32s(&[0, 4, 1])),
            t("dst", "float32", 9, vec![]),
        ],
        &inst(
            "IndirectLoad",
            &[dyn_ap("tab", "float32", &[(1, 1), (3, 5)], "Z", 4), ap("ix", "int32", 0, &[(3, 1), (1, 3)])],
            &[ap("dst", "float32", 0, &[(3, 3), (1, 3)])],
            "",
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[3]), [20.0, 21.0, 22.0, 60.0, 61.0, 62.0, 30.0, 31.0, 32.0]);
}

/// A DMADescriptorCopy fired from a DMABlock resolves its scalar offset like an instruction:
/// x row 3 (index 3 on W) → y. Index 8 ≥ max 8 faults, located at the trigger, the block and
/// the descriptor, with y untouched.
#[test]
fn a_fired_descriptor_resolves_its_scalar_offset() {
    let body = || {
        let desc = format!(
            r#"{{"opcode":"DMADescriptorCopy","name":"d0","engine":"DMA","ins":[{}],"outs":[{}]}}"#,
            dyn_ap("x", "float32", &[(16, 1), (1, 4)], "W", 8),
            ap("y", "float32", 0, &[(4, 1), (1, 4)])
        );
        format!(
            r#"{{"opcode":"DMABlock","name":"blk","engine":"DMA","ins":[],"outs":[],"descriptors":[{desc}]}},{{"opcode":"DMATrigger","name":"fire","engine":"SP","ins":[],"outs":[],"dma_blocks":["blk"]}}"#
        )
    };
    let tensors = |i: i32| {
        [
            t("x", "float32", 128, f32s(&base_8x16())),
            t("idx", "int32", 1, i32s(&[i])),
            t("y", "float32", 4, f32s(&[-1.0; 4])),
        ]
    };
    let out = run(&tensors(3), &body()).unwrap();
    assert_eq!(to_f32(&out[2]), [300.0, 301.0, 302.0, 303.0]);
    let (kind, msg, mem) = run(&tensors(8), &body()).unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(
        msg.starts_with("fire ") && msg.contains("'d0'") && msg.contains("ins[0].scalar_offset: index 8"),
        "{msg}"
    );
    assert_eq!(to_f32(&mem[2]), [-1.0; 4]);
}
