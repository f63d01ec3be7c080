//! TensorScalarPtr's forms on the integer paths, the scan combinations and every `acc` value
//! (docs/fidelity.md T1–T6; the decisions file of the `tspint` branch). Every expected value is
//! worked by hand in the comments from those rules (int32 `ts_int_ops` saturates, the
//! accumulate wraps, the 32 × 32 transpose moves (p, e) to (e, p) inside a tile).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use rstest::rstest;
use simulator::{FaultKind, Options};

fn run(tensors: &[T<'_>], insts: &str) -> Result<Vec<Vec<u8>>, (FaultKind, String)> {
    match run_keep(tensors, insts, Options::default(), None) {
        (None, mem) => Ok(mem),
        (Some(f), _) => Err((f.kind, f.message())),
    }
}

/// Every tensor's bytes after the run, and the fault (the outputs also after a fault).
fn run_faulting(tensors: &[T<'_>], insts: &str) -> (Option<(FaultKind, String)>, Vec<Vec<u8>>) {
    let (f, mem) = run_keep(tensors, insts, Options::default(), None);
    (f.map(|f| (f.kind, f.message())), mem)
}

/// One TensorScalarPtr instruction.
fn tsp(ins: &[String], out: String, fields: &str) -> String {
    format!(
        r#"{{"opcode":"TensorScalarPtr","name":"i","engine":"DVE","ins":[{}],"outs":[{out}],{fields}}}"#,
        ins.join(",")
    )
}

fn imm(v: f32) -> String {
    format!(r#"{{"kind":"imm_value","dtype":"float32","value":{v:?}}}"#)
}

/// A `parts` × `free` AP over a flat tensor.
fn rows(mem: &str, dtype: &str, parts: i64, free: i64) -> String {
    ap(mem, dtype, 0, &[(free, parts), (1, free)])
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_i64(b: &[u8]) -> Vec<i64> {
    b.as_chunks::<8>().0.iter().map(|c| i64::from_le_bytes(*c)).collect()
}

#[test]
fn int32_scalar_tensor_tensor_saturates() {
    // E1: x = [[5, 12], [−1, 255]] & 6 = [[4, 4], [6, 6]]; + z = [[1, 2], [2147483647, −10]]
    // = [[5, 6], [2147483647 (6 + MAX saturates), −4]]. reverse1 subtract: z − t =
    // [[−3, −2], [2147483641, −16]].
    let go = |fields: &str| {
        let out = run(
            &[
                t("x", "int32", 4, i32s(&[5, 12, -1, 255])),
                t("z", "int32", 4, i32s(&[1, 2, i32::MAX, -10])),
                t("y", "int32", 4, vec![]),
            ],
            &tsp(
                &[rows("x", "int32", 2, 2), imm(6.0), rows("z", "int32", 2, 2)],
                rows("y", "int32", 2, 2),
                fields,
            ),
        )
        .unwrap();
        to_i32(&out[2])
    };
    let base = r#""op0":"bitwise_and","is_scalar_tensor_tensor":true"#;
    assert_eq!(go(&format!(r#"{base},"op1":"add""#)), [5, 6, i32::MAX, -4]);
    assert_eq!(go(&format!(r#"{base},"op1":"subtract","reverse1":true"#)), [-3, -2, 2147483641, -16]);
}

#[rstest]
#[case::accumulate("Accumulate", [13, i32::MIN])]
#[case::add_accumulate("AddAccumulate", [13, i32::MIN])]
#[case::load_accumulate("LoadAccumulate", [13, i32::MIN])]
#[case::zero_accumulate("ZeroAccumulate", [3, i32::MAX])]
#[case::zero("Zero", [3, i32::MAX])]
#[case::idle("Idle", [3, i32::MAX])]
fn int32_acc_forms(#[case] acc: &str, #[case] want: [i32; 2]) {
    // E2: x = [[3], [MAX]] | 0 = x; the output holds [[10], [1]]: the accumulating forms give
    // [[13], [MAX + 1 = MIN]] (the fold wraps), the others overwrite with x.
    let out = run(
        &[t("x", "int32", 2, i32s(&[3, i32::MAX])), t("y", "int32", 2, i32s(&[10, 1]))],
        &tsp(
            &[rows("x", "int32", 2, 1), imm(0.0)],
            rows("y", "int32", 2, 1),
            &format!(r#""op0":"bitwise_or","op1":"bypass","acc":"{acc}""#),
        ),
    )
    .unwrap();
    assert_eq!(to_i32(&out[1]), want);
}

#[test]
fn int64_apply_transpose() {
    // E3: x[p][e] = 32p + e on 32 × 32 int64; transposed and + 1: y[p][e] = 32e + p + 1, so
    // y[0][1] = 33, y[1][0] = 2, y[3][5] = 164, y[31][31] = 1024.
    let out = run(
        &[t("x", "int64", 1024, i64s(&(0..1024).collect::<Vec<_>>())), t("y", "int64", 1024, vec![])],
        &tsp(
            &[rows("x", "int64", 32, 32), imm(1.0)],
            rows("y", "int64", 32, 32),
            r#""op0":"add","op1":"bypass","is_tensor_scalar_addr":true,"apply_transpose":true"#,
        ),
    )
    .unwrap();
    let y = to_i64(&out[1]);
    assert_eq!((y[1], y[32], y[3 * 32 + 5], y[1023]), (33, 2, 164, 1024));
    assert!((0..32).all(|p| (0..32).all(|e| y[p * 32 + e] == (32 * e + p + 1) as i64)));
}

#[test]
fn int32_apply_transpose_keeps_large_values_exact() {
    // The words are permuted without an fp32 step (T2): x[p][e] = 0x7F00_0001 + 32p + e
    // (above 2^24, where fp32 would round), | 0 → y[p][e] = x[e][p] = 0x7F00_0001 + 32e + p.
    let base = 0x7F00_0001i32;
    let out = run(
        &[
            t("x", "int32", 1024, i32s(&(0..1024).map(|k| base + k).collect::<Vec<_>>())),
            t("y", "int32", 1024, vec![]),
        ],
        &tsp(
            &[rows("x", "int32", 32, 32), imm(0.0)],
            rows("y", "int32", 32, 32),
            r#""op0":"bitwise_or","apply_transpose":true"#,
        ),
    )
    .unwrap();
    let y = to_i32(&out[1]);
    assert_eq!((y[1], y[32]), (base + 32, base + 1));
    assert!((0..32).all(|p| (0..32).all(|e| y[p * 32 + e] == base + (32 * e + p) as i32)));
}

#[test]
fn int32_scan() {
    // E4: x = [1, 2, 4], y = [8, 0, 16], xor then or: init 0: (1^0)|8 = 9, (2^9)|0 = 11,
    // (4^11)|16 = 31; init imm 1: (1^1)|8 = 8, (2^8)|0 = 10, (4^10)|16 = 30.
    let go = |init: Option<f32>| {
        let mut ins = vec![rows("x", "int32", 1, 3), rows("d", "int32", 1, 3)];
        ins.extend(init.map(imm));
        let out = run(
            &[
                t("x", "int32", 3, i32s(&[1, 2, 4])),
                t("d", "int32", 3, i32s(&[8, 0, 16])),
                t("y", "int32", 3, vec![]),
            ],
            &tsp(
                &ins,
                rows("y", "int32", 1, 3),
                r#""op0":"bitwise_xor","op1":"bitwise_or","is_tensor_tensor_scan":true"#,
            ),
        )
        .unwrap();
        to_i32(&out[2])
    };
    assert_eq!(go(None), [9, 11, 31]);
    assert_eq!(go(Some(1.0)), [8, 10, 30]);
}

#[test]
fn f32_scan_with_apply_transpose() {
    // E5: x[p][e] = p, y[p][e] = 100p, add/add, init 0. Only x is transposed: T(x)[p][e] = e, so
    // out[p][e] = e(e+1)/2 + 100p(e+1): out[0][31] = 496, out[1][0] = 100, out[1][1] = 201,
    // out[2][3] = 806.
    let x: Vec<f32> = (0..1024).map(|k| (k / 32) as f32).collect();
    let d: Vec<f32> = (0..1024).map(|k| 100.0 * (k / 32) as f32).collect();
    let out = run(
        &[
            t("x", "float32", 1024, f32s(&x)),
            t("d", "float32", 1024, f32s(&d)),
            t("y", "float32", 1024, vec![]),
        ],
        &tsp(
            &[rows("x", "float32", 32, 32), rows("d", "float32", 32, 32)],
            rows("y", "float32", 32, 32),
            r#""op0":"add","op1":"add","is_tensor_tensor_scan":true,"apply_transpose":true"#,
        ),
    )
    .unwrap();
    let y = to_f32(&out[2]);
    assert_eq!((y[31], y[32], y[33], y[2 * 32 + 3]), (496.0, 100.0, 201.0, 806.0));
    for p in 0..32 {
        for e in 0..32 {
            assert_eq!(y[p * 32 + e], (e * (e + 1) / 2 + 100 * p * (e + 1)) as f32, "({p}, {e})");
        }
    }
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [12.0, 23.0])]
#[case::accumulate("Accumulate", [12.0, 23.0])]
#[case::add_accumulate("AddAccumulate", [12.0, 23.0])]
#[case::zero_accumulate("ZeroAccumulate", [2.0, 3.0])]
#[case::zero("Zero", [2.0, 3.0])]
#[case::idle("Idle", [2.0, 3.0])]
fn f32_acc_forms(#[case] acc: &str, #[case] want: [f32; 2]) {
    // E6: x = [1, 2] + 1 = [2, 3]; the output holds [10, 20].
    let out = run(
        &[t("x", "float32", 2, f32s(&[1.0, 2.0])), t("y", "float32", 2, f32s(&[10.0, 20.0]))],
        &tsp(
            &[rows("x", "float32", 1, 2), imm(1.0)],
            rows("y", "float32", 1, 2),
            &format!(r#""op0":"add","acc":"{acc}""#),
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), want);
}

#[test]
fn accumulating_into_uint8_faults_and_overwriting_does_not() {
    // E6 into uint8 (not reducible): LoadAccumulate is a numerics fault, output untouched
    // ([7, 7]); ZeroAccumulate writes [2, 3].
    let go = |acc: &str| {
        run_faulting(
            &[t("x", "float32", 2, f32s(&[1.0, 2.0])), t("y", "uint8", 2, vec![7, 7])],
            &tsp(
                &[rows("x", "float32", 1, 2), imm(1.0)],
                rows("y", "uint8", 1, 2),
                &format!(r#""op0":"add","acc":"{acc}""#),
            ),
        )
    };
    let (f, mem) = go("LoadAccumulate");
    assert_eq!(f.map(|f| f.0), Some(FaultKind::Numerics));
    assert_eq!(mem[1], [7, 7]);
    let (f, mem) = go("ZeroAccumulate");
    assert_eq!(f, None);
    assert_eq!(mem[1], [2, 3]);
}

#[test]
fn int64_scan_with_ap_init_add_accumulates() {
    // E7: x = [[1, 2], [3, 4]], d = [[10, 20], [30, 40]], init [[100], [1000]], mult/add:
    // row 0: 1·100 + 10 = 110, 2·110 + 20 = 240; row 1: 3·1000 + 30 = 3030, 4·3030 + 40 = 12160;
    // added into [[1, 1], [1, 1]] → [[111, 241], [3031, 12161]].
    let out = run(
        &[
            t("x", "int64", 4, i64s(&[1, 2, 3, 4])),
            t("d", "int64", 4, i64s(&[10, 20, 30, 40])),
            t("s", "int64", 2, i64s(&[100, 1000])),
            t("y", "int64", 4, i64s(&[1; 4])),
        ],
        &tsp(
            &[rows("x", "int64", 2, 2), rows("d", "int64", 2, 2), rows("s", "int64", 2, 1)],
            rows("y", "int64", 2, 2),
            r#""op0":"mult","op1":"add","is_tensor_scalar_addr":true,"is_tensor_tensor_scan":true,"acc":"AddAccumulate""#,
        ),
    )
    .unwrap();
    assert_eq!(to_i64(&out[3]), [111, 241, 3031, 12161]);
}

#[test]
fn int64_scalar_tensor_tensor_reversed() {
    // x = [5, 7] − 1 = [4, 6] (ta_ops), op1 subtract reversed against z = [100, 200]:
    // z − t = [96, 194].
    let out = run(
        &[
            t("x", "int64", 2, i64s(&[5, 7])),
            t("z", "int64", 2, i64s(&[100, 200])),
            t("y", "int64", 2, vec![]),
        ],
        &tsp(
            &[rows("x", "int64", 1, 2), imm(1.0), rows("z", "int64", 1, 2)],
            rows("y", "int64", 1, 2),
            r#""op0":"subtract","op1":"subtract","reverse1":true,"is_tensor_scalar_addr":true,"is_scalar_tensor_tensor":true"#,
        ),
    )
    .unwrap();
    assert_eq!(to_i64(&out[2]), [96, 194]);
}

#[test]
fn scan_with_scalar_tensor_tensor_is_a_bad_field() {
    // T6: both flags give ins[2] a role; the output keeps its bytes.
    let (f, mem) = run_faulting(
        &[
            t("x", "float32", 2, f32s(&[1.0, 2.0])),
            t("d", "float32", 2, f32s(&[1.0, 2.0])),
            t("y", "float32", 2, f32s(&[9.0, 9.0])),
        ],
        &tsp(
            &[rows("x", "float32", 1, 2), rows("d", "float32", 1, 2), imm(0.0)],
            rows("y", "float32", 1, 2),
            r#""op0":"add","op1":"add","is_tensor_tensor_scan":true,"is_scalar_tensor_tensor":true"#,
        ),
    );
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::BadField);
    assert!(msg.contains("is_scalar_tensor_tensor: cannot be combined with is_tensor_tensor_scan"), "{msg}");
    assert_eq!(to_f32(&mem[2]), [9.0, 9.0]);
}

#[test]
fn int_transpose_needs_multiples_of_32_and_stt_counts_match() {
    // A 2 × 2 int32 transpose is a shape fault; an STT z of 3 values for 4 data elements is a
    // count fault; both leave the output as it was.
    let tensors = || {
        [
            t("x", "int32", 4, i32s(&[1, 2, 3, 4])),
            t("z", "int32", 3, i32s(&[1, 2, 3])),
            t("y", "int32", 4, i32s(&[9; 4])),
        ]
    };
    let (f, mem) = run_faulting(
        &tensors(),
        &tsp(
            &[rows("x", "int32", 2, 2), imm(0.0)],
            rows("y", "int32", 2, 2),
            r#""op0":"bitwise_or","apply_transpose":true"#,
        ),
    );
    assert_eq!(f.map(|f| f.0), Some(FaultKind::Shape));
    assert_eq!(to_i32(&mem[2]), [9; 4]);
    let (f, mem) = run_faulting(
        &tensors(),
        &tsp(
            &[rows("x", "int32", 2, 2), imm(0.0), rows("z", "int32", 1, 3)],
            rows("y", "int32", 2, 2),
            r#""op0":"bitwise_or","op1":"add","is_scalar_tensor_tensor":true"#,
        ),
    );
    assert!(f.is_some());
    assert_eq!(to_i32(&mem[2]), [9; 4]);
}

#[test]
fn missing_tensor_operands_are_located_faults() {
    // Operands are positional: an STT with only [data, s0] has no operand1 tensor; a fault, and
    // the output keeps its bytes.
    let (f, mem) = run_faulting(
        &[t("x", "int32", 2, i32s(&[1, 2])), t("y", "int32", 2, i32s(&[9, 9]))],
        &tsp(
            &[rows("x", "int32", 1, 2), imm(0.0)],
            rows("y", "int32", 1, 2),
            r#""op0":"bitwise_or","op1":"add","is_scalar_tensor_tensor":true"#,
        ),
    );
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::Shape);
    assert!(msg.contains("scalar_tensor_tensor operand1"), "{msg}");
    assert_eq!(to_i32(&mem[1]), [9, 9]);
    // Likewise a scan whose data1 is an immediate (fp32 path).
    let (f, mem) = run_faulting(
        &[t("x", "float32", 2, f32s(&[1.0, 2.0])), t("y", "float32", 2, f32s(&[9.0, 9.0]))],
        &tsp(
            &[rows("x", "float32", 1, 2), imm(0.0)],
            rows("y", "float32", 1, 2),
            r#""op0":"add","op1":"add","is_tensor_tensor_scan":true"#,
        ),
    );
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::Shape);
    assert!(msg.contains("tensor_tensor_scan data1"), "{msg}");
    assert_eq!(to_f32(&mem[1]), [9.0, 9.0]);
}
