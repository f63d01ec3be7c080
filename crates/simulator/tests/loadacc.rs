//! The one LoadAccumulate rule (docs/fidelity.md L1, ASSUMED) in the kernels without an
//! initial-value operand: TensorTensor (S5), TensorReduce (S6) and CopyPredicated's side output
//! (D10) add their result into what the output holds through the shared accumulate (S16),
//! exactly as Accumulate and AddAccumulate do; absent, Idle, Zero and ZeroAccumulate overwrite;
//! accumulating into a dtype the accumulate cannot reduce is a `numerics` fault that writes
//! nothing (TensorScalarPtr's forms, T4, are in tests/tspint.rs). Every expected value is worked
//! by hand in the comments.
#![expect(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use rstest::rstest;
use simulator::{FaultKind, Options};

/// Every tensor's bytes after the run, and the fault's kind and message (outputs also after a
/// fault).
fn run(tensors: &[T<'_>], insts: &str) -> (Option<(FaultKind, String)>, Vec<Vec<u8>>) {
    let (f, mem) = run_keep(tensors, insts, Options::default(), None);
    (f.map(|f| (f.kind, f.message())), mem)
}

/// One instruction named `i`; `fields` is empty or a comma-led list.
fn inst(opcode: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"i","engine":"DVE","ins":[{}],"outs":[{}]{fields}}}"#,
        ins.join(","),
        outs.join(",")
    )
}

/// The `acc` field, or nothing for "absent".
fn acc_field(acc: &str) -> String {
    if acc == "absent" { String::new() } else { format!(r#","acc":"{acc}""#) }
}

/// A `parts` × `free` AP over a flat tensor.
fn rows(mem: &str, dtype: &str, parts: i64, free: i64) -> String {
    ap(mem, dtype, 0, &[(free, parts), (1, free)])
}

fn to_bf16(b: &[u8]) -> Vec<u16> {
    to_u16(b)
}

// ---------------------------------------------------------------- TensorTensor (S5)

#[rstest]
#[case::load_accumulate("LoadAccumulate", [111.0, 222.0])]
#[case::accumulate("Accumulate", [111.0, 222.0])]
#[case::add_accumulate("AddAccumulate", [111.0, 222.0])]
#[case::zero_accumulate("ZeroAccumulate", [11.0, 22.0])]
#[case::zero("Zero", [11.0, 22.0])]
#[case::idle("Idle", [11.0, 22.0])]
#[case::absent("absent", [11.0, 22.0])]
fn tensor_tensor_f32_acc(#[case] acc: &str, #[case] want: [f32; 2]) {
    // a = [1, 2], b = [10, 20], add → [11, 22]; the output holds [100, 200]: the accumulating
    // forms give [100 + 11, 200 + 22] = [111, 222], the others overwrite with [11, 22].
    let (f, mem) = run(
        &[
            t("a", "float32", 2, f32s(&[1.0, 2.0])),
            t("b", "float32", 2, f32s(&[10.0, 20.0])),
            t("y", "float32", 2, f32s(&[100.0, 200.0])),
        ],
        &inst(
            "TensorTensor",
            &[rows("a", "float32", 1, 2), rows("b", "float32", 1, 2)],
            &[rows("y", "float32", 1, 2)],
            &format!(r#","op":"add"{}"#, acc_field(acc)),
        ),
    );
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[2]), want);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [13, i32::MIN])]
#[case::accumulate("Accumulate", [13, i32::MIN])]
#[case::zero_accumulate("ZeroAccumulate", [3, i32::MAX])]
#[case::idle("Idle", [3, i32::MAX])]
fn tensor_tensor_int32_acc_wraps(#[case] acc: &str, #[case] want: [i32; 2]) {
    // The int32 path: a = [[3], [MAX]], b = [[0], [0]], add → [[3], [MAX]]; the output holds
    // [[10], [1]]: accumulating gives [[13], [MAX + 1 = MIN]] (the shared accumulate wraps),
    // overwriting gives [[3], [MAX]].
    let (f, mem) = run(
        &[
            t("a", "int32", 2, i32s(&[3, i32::MAX])),
            t("b", "int32", 2, i32s(&[0, 0])),
            t("y", "int32", 2, i32s(&[10, 1])),
        ],
        &inst(
            "TensorTensor",
            &[rows("a", "int32", 2, 1), rows("b", "int32", 2, 1)],
            &[rows("y", "int32", 2, 1)],
            &format!(r#","op":"add"{}"#, acc_field(acc)),
        ),
    );
    assert_eq!(f, None);
    assert_eq!(to_i32(&mem[2]), want);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", 0x4060)]
#[case::zero("Zero", 0x4040)]
fn tensor_tensor_into_bfloat16(#[case] acc: &str, #[case] want: u16) {
    // a = [1], b = [2], add → 3.0 (bf16 0x4040: exponent 128 → 0x40, mantissa .5 → 0x40); the
    // output holds bf16 0.5 (0x3F00). LoadAccumulate: 3.0 narrowed to bf16 (exact), then
    // 3.0 + 0.5 = 3.5 = 1.75·2^1 → 0x4060; Zero overwrites with 0x4040.
    let (f, mem) = run(
        &[
            t("a", "float32", 1, f32s(&[1.0])),
            t("b", "float32", 1, f32s(&[2.0])),
            t("y", "bfloat16", 1, u16s(&[0x3F00])),
        ],
        &inst(
            "TensorTensor",
            &[rows("a", "float32", 1, 1), rows("b", "float32", 1, 1)],
            &[rows("y", "bfloat16", 1, 1)],
            &format!(r#","op":"add"{}"#, acc_field(acc)),
        ),
    );
    assert_eq!(f, None);
    assert_eq!(to_bf16(&mem[2]), [want], "{:#06x}", to_bf16(&mem[2])[0]);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate")]
#[case::accumulate("Accumulate")]
fn tensor_tensor_accumulating_into_uint8_faults(#[case] acc: &str) {
    // [11, 22] into a uint8 output holding [7, 7]: an accumulate is a numerics fault naming
    // outs[0] that leaves [7, 7]; ZeroAccumulate writes [11, 22].
    let go = |acc: &str| {
        run(
            &[
                t("a", "float32", 2, f32s(&[1.0, 2.0])),
                t("b", "float32", 2, f32s(&[10.0, 20.0])),
                t("y", "uint8", 2, vec![7, 7]),
            ],
            &inst(
                "TensorTensor",
                &[rows("a", "float32", 1, 2), rows("b", "float32", 1, 2)],
                &[rows("y", "uint8", 1, 2)],
                &format!(r#","op":"add"{}"#, acc_field(acc)),
            ),
        )
    };
    let (f, mem) = go(acc);
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::Numerics, "{msg}");
    assert!(msg.starts_with(&format!("outs[0]: cannot accumulate ({acc}) into uint8")), "{msg}");
    assert_eq!(mem[2], [7, 7]);
    let (f, mem) = go("ZeroAccumulate");
    assert_eq!(f, None);
    assert_eq!(mem[2], [11, 22]);
}

// ---------------------------------------------------------------- TensorReduce (S6)

/// One TensorReduce of a 2 × 3 fp32 input [[1, 2, 3], [4, 5, 6]] into `out` (an AP over `y`).
fn reduce(axis: &str, out: String, y: T<'_>, fields: &str) -> (Option<(FaultKind, String)>, Vec<Vec<u8>>) {
    run(
        &[t("x", "float32", 6, f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])), y],
        &inst(
            "TensorReduce",
            &[rows("x", "float32", 2, 3)],
            &[out],
            &format!(r#","op":"add","axis":"{axis}"{fields}"#),
        ),
    )
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [106.0, 215.0])]
#[case::add_accumulate("AddAccumulate", [106.0, 215.0])]
#[case::zero_accumulate("ZeroAccumulate", [6.0, 15.0])]
#[case::zero("Zero", [6.0, 15.0])]
#[case::idle("Idle", [6.0, 15.0])]
#[case::absent("absent", [6.0, 15.0])]
fn tensor_reduce_x_acc(#[case] acc: &str, #[case] want: [f32; 2]) {
    // X folds each row: [1 + 2 + 3, 4 + 5 + 6] = [6, 15]; the output holds [100, 200]:
    // accumulating gives [106, 215], overwriting [6, 15].
    let (f, mem) =
        reduce("X", rows("y", "float32", 2, 1), t("y", "float32", 2, f32s(&[100.0, 200.0])), &acc_field(acc));
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[1]), want);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [94.0, 185.0])]
#[case::zero_accumulate("ZeroAccumulate", [-6.0, -15.0])]
fn tensor_reduce_negates_before_accumulating(#[case] acc: &str, #[case] want: [f32; 2]) {
    // seed 000 §3.1: negate the fold, then fold it into the output: [−6, −15] added into
    // [100, 200] = [94, 185]; ZeroAccumulate writes [−6, −15].
    let (f, mem) = reduce(
        "X",
        rows("y", "float32", 2, 1),
        t("y", "float32", 2, f32s(&[100.0, 200.0])),
        &format!(r#","negate":true{}"#, acc_field(acc)),
    );
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[1]), want);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [15.0, 27.0, 39.0])]
#[case::accumulate("Accumulate", [15.0, 27.0, 39.0])]
#[case::zero_accumulate("ZeroAccumulate", [5.0, 7.0, 9.0])]
#[case::idle("Idle", [5.0, 7.0, 9.0])]
fn tensor_reduce_across_partitions_acc(#[case] acc: &str, #[case] want: [f32; 3]) {
    // C folds the partitions (partition 0 first): [1 + 4, 2 + 5, 3 + 6] = [5, 7, 9] into one
    // partition of 3; the output holds [10, 20, 30]: accumulating gives [15, 27, 39].
    let (f, mem) = reduce(
        "C",
        rows("y", "float32", 1, 3),
        t("y", "float32", 3, f32s(&[10.0, 20.0, 30.0])),
        &acc_field(acc),
    );
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[1]), want);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", 121.0)]
#[case::zero("Zero", 21.0)]
fn tensor_reduce_everything_acc(#[case] acc: &str, #[case] want: f32) {
    // XYZWC folds everything: 1 + 2 + … + 6 = 21; the output holds 100: LoadAccumulate 121.
    let (f, mem) =
        reduce("XYZWC", rows("y", "float32", 1, 1), t("y", "float32", 1, f32s(&[100.0])), &acc_field(acc));
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[1]), [want]);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [i32::MIN, 13])]
#[case::zero_accumulate("ZeroAccumulate", [7, 3])]
fn tensor_reduce_int32_acc_wraps(#[case] acc: &str, #[case] want: [i32; 2]) {
    // The int32 path: [[3, 4], [1, 2]] add over X = [7, 3]; the output holds [MAX − 6, 10]:
    // accumulating gives [MAX − 6 + 7 = MAX + 1 = MIN (wraps), 13], overwriting [7, 3].
    let (f, mem) = run(
        &[t("x", "int32", 4, i32s(&[3, 4, 1, 2])), t("y", "int32", 2, i32s(&[i32::MAX - 6, 10]))],
        &inst(
            "TensorReduce",
            &[rows("x", "int32", 2, 2)],
            &[rows("y", "int32", 2, 1)],
            &format!(r#","op":"add","axis":"X"{}"#, acc_field(acc)),
        ),
    );
    assert_eq!(f, None);
    assert_eq!(to_i32(&mem[1]), want);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate")]
#[case::accumulate("Accumulate")]
fn tensor_reduce_accumulating_into_uint8_faults(#[case] acc: &str) {
    // [6, 15] into a uint8 output holding [7, 7]: a numerics fault naming outs[0], [7, 7]
    // kept; Zero writes [6, 15].
    let go =
        |acc: &str| reduce("X", rows("y", "uint8", 2, 1), t("y", "uint8", 2, vec![7, 7]), &acc_field(acc));
    let (f, mem) = go(acc);
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::Numerics, "{msg}");
    assert!(msg.starts_with(&format!("outs[0]: cannot accumulate ({acc}) into uint8")), "{msg}");
    assert_eq!(mem[1], [7, 7]);
    let (f, mem) = go("Zero");
    assert_eq!(f, None);
    assert_eq!(mem[1], [6, 15]);
}

// ---------------------------------------------------------------- CopyPredicated side output (D10)

/// CopyPredicated of src [[10, 20, 30], [40, 50, 60]] under pred [[1, 0, 1], [0, 0, 1]] into
/// y = [[1, 2, 3], [4, 5, 6]] (→ [[10, 2, 30], [4, 5, 60]]), side output `r` (2 values).
fn copy_predicated(r: T<'_>, fields: &str) -> (Option<(FaultKind, String)>, Vec<Vec<u8>>) {
    let side = rows("r", r.dtype, 2, 1);
    run(
        &[
            t("s", "float32", 6, f32s(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0])),
            t("p", "uint8", 6, vec![1, 0, 1, 0, 0, 1]),
            t("y", "float32", 6, f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
            r,
        ],
        &inst(
            "CopyPredicated",
            &[rows("s", "float32", 2, 3), rows("p", "uint8", 2, 3)],
            &[rows("y", "float32", 2, 3), side],
            fields,
        ),
    )
}

#[rstest]
#[case::load_accumulate("LoadAccumulate", [142.0, 269.0])]
#[case::accumulate("Accumulate", [142.0, 269.0])]
#[case::add_accumulate("AddAccumulate", [142.0, 269.0])]
#[case::zero_accumulate("ZeroAccumulate", [42.0, 69.0])]
#[case::zero("Zero", [42.0, 69.0])]
#[case::idle("Idle", [42.0, 69.0])]
#[case::absent("absent", [42.0, 69.0])]
fn copy_predicated_side_acc(#[case] acc: &str, #[case] want: [f32; 2]) {
    // Row sums after the copy: 10 + 2 + 30 = 42, 4 + 5 + 60 = 69; the side holds [100, 200]:
    // accumulating gives [142, 269], overwriting [42, 69].
    let (f, mem) = copy_predicated(
        t("r", "float32", 2, f32s(&[100.0, 200.0])),
        &format!(r#","reduce_op":"add"{}"#, acc_field(acc)),
    );
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[2]), [10.0, 2.0, 30.0, 4.0, 5.0, 60.0]);
    assert_eq!(to_f32(&mem[3]), want);
}

#[test]
fn copy_predicated_side_load_accumulate_adds_a_max_fold() {
    // reduce_op max folds each row: max(10, 2, 30) = 30, max(4, 5, 60) = 60; LoadAccumulate
    // adds that into what the side holds (the shared accumulate always adds): [100 + 30,
    // 200 + 60] = [130, 260].
    let (f, mem) = copy_predicated(
        t("r", "float32", 2, f32s(&[100.0, 200.0])),
        r#","reduce_op":"max","accumulator_cmd":"LoadAccumulate""#,
    );
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[3]), [130.0, 260.0]);
}

#[rstest]
#[case::load_accumulate("LoadAccumulate")]
#[case::accumulate("Accumulate")]
fn copy_predicated_side_accumulating_into_uint8_faults_before_any_write(#[case] acc: &str) {
    // A uint8 side holding [7, 7]: an accumulate is a numerics fault naming outs[1], raised
    // before the copy, so y keeps [1, 2, 3, 4, 5, 6] and r [7, 7]; ZeroAccumulate writes the
    // copy and [42, 69].
    let go = |acc: &str| {
        copy_predicated(t("r", "uint8", 2, vec![7, 7]), &format!(r#","reduce_op":"add"{}"#, acc_field(acc)))
    };
    let (f, mem) = go(acc);
    let (kind, msg) = f.unwrap();
    assert_eq!(kind, FaultKind::Numerics, "{msg}");
    assert!(msg.starts_with(&format!("outs[1]: cannot accumulate ({acc}) into uint8")), "{msg}");
    assert_eq!(to_f32(&mem[2]), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(mem[3], [7, 7]);
    let (f, mem) = go("ZeroAccumulate");
    assert_eq!(f, None);
    assert_eq!(to_f32(&mem[2]), [10.0, 2.0, 30.0, 4.0, 5.0, 60.0]);
    assert_eq!(mem[3], [42, 69]);
}
