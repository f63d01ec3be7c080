//! Small hand-worked programs for #29's instructions where the conformance corpus does not reach:
//! a faulting instruction writes nothing, registers never
//! written read +0, rows NonzeroWithCount does not serve keep their bytes. Expected values are
//! worked by hand in the comments.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{ap, f32s, i32s, run_keep, sb, to_f32, to_i32};
use simulator::Options;

/// RangeSelect with `acc` Idle on fresh registers: the registers were never written, so
/// `reduce_res` receives +0; dst keeps x where `2 + j` is in [3, 5) (j = 1, 2), else FP32_MIN.
#[test]
fn range_select_idle_reads_fresh_registers_as_zero() {
    let x: Vec<f32> = (0..8).map(|k| k as f32 + 10.0).collect();
    let body = format!(
        r#"{{"opcode":"RangeSelect","name":"rs","engine":"DVE","op0":"is_ge","op1":"is_lt","range_start":2,"acc":"Idle",
            "ins":[{},{{"kind":"imm_value","dtype":"float32","value":3.0}},{{"kind":"imm_value","dtype":"float32","value":5.0}}],
            "outs":[{},{}]}}"#,
        ap("x", "float32", 0, &[(4, 2), (1, 4)]),
        ap("y", "float32", 0, &[(4, 2), (1, 4)]),
        ap("r", "float32", 0, &[(1, 2), (1, 1)]),
    );
    let tensors = [
        sb("x", "float32", 2, 4, f32s(&x)),
        sb("y", "float32", 2, 4, vec![]),
        sb("r", "float32", 2, 1, f32s(&[7.0, 7.0])),
    ];
    let (fault, out) = run_keep(&tensors, &body, Options::default(), None);
    assert!(fault.is_none(), "{fault:?}");
    let m = f32::MIN;
    assert_eq!(to_f32(&out[1]), [m, 11.0, 12.0, m, m, 15.0, 16.0, m]);
    assert_eq!(to_f32(&out[2]), [0.0, 0.0]);
}

/// MaxIndexAndMatchReplace whose index output holds 7 positions, not 8: a `count` fault, and
/// neither output is written (dst keeps its 5.0s).
#[test]
fn match_replace_faults_before_writing_either_output() {
    let data: Vec<f32> = (0..8).map(|k| k as f32).collect();
    let body = format!(
        r#"{{"opcode":"MaxIndexAndMatchReplace","name":"mr","engine":"DVE","imm_value":-1.0,
            "ins":[{},{}],"outs":[{},{}]}}"#,
        ap("d", "float32", 0, &[(8, 1), (1, 8)]),
        ap("d", "float32", 0, &[(8, 1), (1, 8)]),
        ap("y", "float32", 0, &[(8, 1), (1, 8)]),
        ap("ix", "uint32", 0, &[(8, 1), (1, 7)]),
    );
    let tensors = [
        sb("d", "float32", 1, 8, f32s(&data)),
        sb("y", "float32", 1, 8, f32s(&[5.0; 8])),
        sb("ix", "uint32", 1, 8, vec![]),
    ];
    let (fault, out) = run_keep(&tensors, &body, Options::default(), None);
    assert!(fault.is_some(), "seven positions for eight values");
    assert_eq!(to_f32(&out[1]), [5.0; 8]);
}

/// A Dropout whose probability AP holds 3 values for 8 data elements (one per row or per element
/// would be 2 or 8) faults after drawing and writes nothing (the data, its own output, keeps its
/// 1.0s).
#[test]
fn a_faulting_dropout_writes_nothing() {
    let x = ap("x", "float32", 0, &[(4, 2), (1, 4)]);
    let p = ap("p", "float32", 0, &[(3, 1), (1, 3)]);
    let drop = format!(r#"{{"opcode":"Dropout","name":"bad","engine":"DVE","ins":[{x},{p}],"outs":[{x}]}}"#);
    let tensors = [sb("x", "float32", 2, 4, f32s(&[1.0; 8])), sb("p", "float32", 1, 3, f32s(&[0.5; 3]))];
    let (fault, out) = run_keep(&tensors, &drop, Options::default(), None);
    assert!(fault.is_some(), "3 probabilities for 8 elements");
    assert_eq!(to_f32(&out[0]), [1.0; 8], "the data is untouched");
}

/// NonzeroWithCount on partitions 0..=16 of a tile: rows 0 and 16 are served, row 1..15 keep
/// their −7s. Row 0 = [0, 3, 0, 4] → [1, 2, pad, pad, 2]; row 16 = [5, 0, 0, 0] → [0, pad, pad,
/// pad, 1] (index_offset 0, padding_val −1).
#[test]
fn nonzero_serves_every_sixteenth_partition() {
    let mut src = vec![0.0f32; 17 * 4];
    src[..4].copy_from_slice(&[0.0, 3.0, 0.0, 4.0]);
    src[16 * 4..].copy_from_slice(&[5.0, 0.0, 0.0, 0.0]);
    let body = format!(
        r#"{{"opcode":"NonzeroWithCount","name":"nz","engine":"Pool","ins":[{}],"outs":[{}]}}"#,
        ap("s", "float32", 0, &[(4, 17), (1, 4)]),
        ap("d", "int32", 0, &[(5, 17), (1, 5)]),
    );
    let tensors = [sb("s", "float32", 17, 4, f32s(&src)), sb("d", "int32", 17, 5, i32s(&[-7; 85]))];
    let (fault, out) = run_keep(&tensors, &body, Options::default(), None);
    assert!(fault.is_none(), "{fault:?}");
    let d = to_i32(&out[1]);
    assert_eq!(d[..5], [1, 3, -1, -1, 2]);
    assert!(d[5..80].iter().all(|&v| v == -7));
    assert_eq!(d[80..], [0, -1, -1, -1, 1]);
}
