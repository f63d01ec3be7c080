//! SW-DGE triggers and blocks, and the HW-DGE vector-offset bridge (seed 000 §5.2, §7; the DGE
//! contract §1–§2; docs/fidelity.md G1–G8, G50–G58), on small programs whose expected values are
//! worked by hand in the comments, plus the bridge's fast path against its serial path and a
//! slow model written here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use simulator::{DmaBlockInStream, Fault, FaultKind, Options, Parallelism};
use test_rng::XorShift64Star;

/// An AP with a uint16 vector offset `idx` on dim W.
fn vap(mem: &str, dtype: &str, offset: i64, pairs: &[(i64, i64)], max: i64, idx: &str) -> String {
    let base = ap(mem, dtype, offset, pairs);
    format!(
        r#"{},"indirect_dim":"W","indirect_dim_max_index":{max},"vector_offset":{idx}}}"#,
        &base[..base.len() - 1]
    )
}

fn inst(opcode: &str, name: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"{name}","engine":"DMA","ins":[{}],"outs":[{}]{}{fields}}}"#,
        ins.join(","),
        outs.join(","),
        if fields.is_empty() { "" } else { "," }
    )
}

/// Runs `body` (instructions and loops) over the tensors; every tensor's final bytes, or the fault.
fn run_with(tensors: &[T<'_>], body: &str, options: Options) -> Result<Vec<Vec<u8>>, Box<Fault>> {
    match run_keep(tensors, body, options, None) {
        (None, out) => Ok(out),
        (Some(f), _) => Err(f),
    }
}

fn run(tensors: &[T<'_>], body: &str) -> Result<Vec<Vec<u8>>, Box<Fault>> {
    run_with(tensors, body, Options::default())
}

fn with_blocks(b: DmaBlockInStream) -> Options {
    Options { dma_block_in_stream: b, ..Default::default() }
}

fn looped(name: &str, trips: u32, body: &str) -> String {
    format!(
        r#"{{"opcode":"Loop","name":"{name}","LoopAxis":{{"name":"i","lb":0,"ub":{trips}}},"blocks":[{{"name":"{name}_body","instructions":[{body}]}}]}}"#
    )
}

// ---------------------------------------------------------------- SW-DGE

/// Block `b{k}` appends digit k+1 to the accumulator: one DMADescriptorCCE `acc = 10·acc + 1·d_k`
/// (D4: fp32 add from +0.0 of `c_i·in_i`), so `acc` spells the fired blocks in order.
fn digit_blocks(n: usize) -> String {
    (0..n)
        .map(|k| {
            let desc = inst(
                "DMADescriptorCCE",
                &format!("d{k}"),
                &[ap("acc", "float32", 0, &[(1, 1), (1, 1)]), ap("digits", "float32", k as i64, &[(1, 1), (1, 1)])],
                &[ap("acc", "float32", 0, &[(1, 1), (1, 1)])],
                r#""op":"add","constants":[10.0,1.0]"#,
            );
            format!(r#"{{"opcode":"DMABlock","name":"b{k}","engine":"DMA","ins":[],"outs":[],"descriptors":[{desc}]}}"#)
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn trigger(name: &str, blocks: &[&str], queue: Option<&str>) -> String {
    let list: Vec<String> = blocks.iter().map(|b| format!("\"{b}\"")).collect();
    let q = queue.map_or(String::new(), |q| format!(r#","queue":"{q}""#));
    format!(
        r#"{{"opcode":"DMATrigger","name":"{name}","engine":"SP","ins":[],"outs":[],"dma_blocks":[{}]{q}}}"#,
        list.join(",")
    )
}

fn digits_tensors() -> Vec<T<'static>> {
    vec![t("acc", "float32", 1, f32s(&[0.0])), t("digits", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0]))]
}

fn acc_after(body: &str, options: Options) -> f32 {
    to_f32(&run_with(&digits_tensors(), body, options).unwrap()[0])[0]
}

/// A trigger over 3 blocks in a Loop of 7: fire counts c = 0..6 pick c mod 3 = 0,1,2,0,1,2,0
/// (G1), i.e. digits 1,2,3,1,2,3,1: acc = 1231231 (exact in fp32, below 2^24). The blocks placed
/// before the loop run nothing by themselves (G4).
#[test]
fn trigger_round_robin_over_three_blocks_in_a_loop_of_seven() {
    let body = format!("{},{}", digit_blocks(3), looped("l", 7, &trigger("trig", &["b0", "b1", "b2"], None)));
    assert_eq!(acc_after(&body, Options::default()), 1_231_231.0);
}

/// With `dma_block_in_stream=run` the three blocks met in the stream run once each (digits 1, 2, 3), and
/// the trigger still fires them: a loop of 2 adds 1, 2 → 12312.
#[test]
fn dma_block_in_stream_switch() {
    let body = format!("{},{}", digit_blocks(3), looped("l", 2, &trigger("trig", &["b0", "b1", "b2"], None)));
    assert_eq!(acc_after(&body, with_blocks(DmaBlockInStream::Run)), 12_312.0);
    assert_eq!(acc_after(&body, with_blocks(DmaBlockInStream::Skip)), 12.0);
}

/// A block listed twice and an empty trigger: [b1, b0, b1] fired 4 times → b1 b0 b1 b1 =
/// digits 2,1,2,2; the empty trigger fires nothing (G2).
#[test]
fn block_lists_repeat_and_empty_triggers_fire_nothing() {
    let body = format!(
        "{},{},{}",
        digit_blocks(2),
        trigger("empty", &[], None),
        looped(
            "l",
            4,
            &format!("{},{}", trigger("trig", &["b1", "b0", "b1"], None), trigger("empty", &[], None))
        )
    );
    assert_eq!(acc_after(&body, Options::default()), 2122.0);
}

fn queue_op(opcode: &str, fields: &str) -> String {
    format!(r#"{{"opcode":"{opcode}","name":"q","engine":"SP","ins":[],"outs":[]{fields}}}"#)
}

/// fire (b0), fire (b1), Reset → fire (b0), Switch no_rearm (kept) → fire (b1), Switch (erased)
/// → fire (b0): digits 1,2,1,2,1 = 12121 (re-facts §5).
#[test]
fn reset_and_switch_erase_cursors() {
    let tr = trigger("trig", &["b0", "b1", "b2"], None);
    let body = [
        digit_blocks(3),
        tr.clone(),
        tr.clone(),
        queue_op("ResetQueueInstance", ""),
        tr.clone(),
        queue_op("SwitchQueueInstance", r#","no_rearm":true"#),
        tr.clone(),
        queue_op("SwitchQueueInstance", ""),
        tr,
    ]
    .join(",");
    assert_eq!(acc_after(&body, Options::default()), 12121.0);
}

/// `queue` limits the erase (G5): t1 on q0 and t2 on q1 share [b0, b1, b2]. t1 b0, t2 b0, t1 b1,
/// t2 b1, Reset(q1) → t1 b2, t2 b0: digits 1,1,2,2,3,1 = 112231.
#[test]
fn queue_scoped_reset_erases_only_that_queue() {
    let (t1, t2) =
        (trigger("t1", &["b0", "b1", "b2"], Some("q0")), trigger("t2", &["b0", "b1", "b2"], Some("q1")));
    let body = [
        digit_blocks(3),
        t1.clone(),
        t2.clone(),
        t1.clone(),
        t2.clone(),
        queue_op("ResetQueueInstance", r#","queue":"q1""#),
        t1,
        t2,
    ]
    .join(",");
    assert_eq!(acc_after(&body, Options::default()), 112_231.0);
}

/// Every descriptor kind runs as its DMACopy twin, in list order, from one fire (d0 carries
/// `num_tiling_dimensions`, which changes nothing, G3):
/// d0 Copy casts int32 [1, 2, -3] → fp32; d1 Replicate tiles a 1 × 3 row onto 2 partitions;
/// d2 Transpose WZXY swaps Y and X of a [1,1,2,3] source: dst[.,.,x,y] = src[.,.,y,x], so
/// [[0,1,2],[3,4,5]] → [[0,3],[1,4],[2,5]] = 0,3,1,4,2,5; d3 CCE max of [1, 5] and [4, 2].
#[test]
fn every_descriptor_kind_runs_as_its_dma_copy_twin() {
    let descs = [
        inst(
            "DMADescriptorCopy",
            "d0",
            &[ap("xi", "int32", 0, &[(3, 1), (1, 3)])],
            &[ap("y0", "float32", 0, &[(3, 1), (1, 3)])],
            r#""num_tiling_dimensions":5"#,
        ),
        inst(
            "DMADescriptorReplicate",
            "d1",
            &[ap("y0", "float32", 0, &[(3, 1), (1, 3)])],
            &[ap("y1", "float32", 0, &[(3, 2), (1, 3)])],
            "",
        ),
        inst(
            "DMADescriptorTranspose",
            "d2",
            &[ap("m", "float32", 0, &[(6, 1), (6, 1), (3, 2), (1, 3)])],
            &[ap("y2", "float32", 0, &[(6, 1), (6, 1), (2, 3), (1, 2)])],
            r#""transpose_op":"WZXY""#,
        ),
        inst(
            "DMADescriptorCCE",
            "d3",
            &[ap("p", "float32", 0, &[(2, 1), (1, 2)]), ap("p", "float32", 2, &[(2, 1), (1, 2)])],
            &[ap("y3", "float32", 0, &[(2, 1), (1, 2)])],
            r#""op":"max""#,
        ),
    ]
    .join(",");
    let body = format!(
        r#"{{"opcode":"DMABlock","name":"blk","engine":"DMA","ins":[],"outs":[],"descriptors":[{descs}]}},{}"#,
        trigger("trig", &["blk"], None)
    );
    let xi: Vec<u8> = [1i32, 2, -3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let out = run(
        &[
            t("xi", "int32", 3, xi),
            t("y0", "float32", 3, vec![]),
            t("y1", "float32", 6, vec![]),
            t("m", "float32", 6, f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])),
            t("y2", "float32", 6, vec![]),
            t("p", "float32", 4, f32s(&[1.0, 5.0, 4.0, 2.0])),
            t("y3", "float32", 2, vec![]),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [1.0, 2.0, -3.0]);
    assert_eq!(to_f32(&out[2]), [1.0, 2.0, -3.0, 1.0, 2.0, -3.0]);
    assert_eq!(to_f32(&out[4]), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(to_f32(&out[6]), [4.0, 5.0]);
}

/// A descriptor's fault names the trigger (the faulting instruction), the block and the
/// descriptor (G51); the descriptors before it ran.
#[test]
fn descriptor_faults_name_trigger_block_and_descriptor() {
    let descs = [
        inst(
            "DMADescriptorCopy",
            "ok",
            &[ap("a", "float32", 0, &[(4, 1), (1, 4)])],
            &[ap("b", "float32", 0, &[(4, 1), (1, 4)])],
            "",
        ),
        // Transpose WZXY of [1,1,2,2] must give [1,1,2,2]; [1,1,1,4] is a shape fault.
        inst(
            "DMADescriptorTranspose",
            "bad",
            &[ap("a", "float32", 0, &[(4, 1), (4, 1), (2, 2), (1, 2)])],
            &[ap("b", "float32", 0, &[(4, 1), (4, 1), (4, 1), (1, 4)])],
            r#""transpose_op":"WZXY""#,
        ),
    ]
    .join(",");
    let body = format!(
        r#"{{"opcode":"DMABlock","name":"blk","engine":"DMA","ins":[],"outs":[],"descriptors":[{descs}]}},{}"#,
        trigger("fire_it", &["blk"], None)
    );
    let f = run(&[t("a", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])), t("b", "float32", 4, vec![])], &body)
        .unwrap_err();
    assert_eq!(f.kind, FaultKind::Shape);
    assert_eq!(f.instruction, "fire_it");
    let msg = f.message();
    assert!(msg.contains("DMABlock 'blk' descriptor #1 'bad' (DMADescriptorTranspose)"), "{msg}");
}

// ---------------------------------------------------------------- HW-DGE bridge

/// A scatter of `rows` rows of `len` fp32 from `s` into table `t` (rows of `len`, stride `len`)
/// at `idx` (uint16), `max` = indirect_dim_max_index.
fn scatter_prog(rows: usize, len: usize, max: i64, fields: &str, dt: &str) -> String {
    let idx = ap("ix", "uint16", 0, &[(1, rows as i64), (1, 1)]);
    inst(
        "DMACopy",
        "scatter",
        &[ap("s", dt, 0, &[(len as i64, rows as i64), (1, len as i64)])],
        &[vap("t", dt, 0, &[(len as i64, rows as i64), (1, len as i64)], max, &idx)],
        &format!(r#""mode":"Copy"{fields}"#),
    )
}

/// Rows 0..3 of [10, 11], [20, 21], [30, 31] scattered to [2, 0, 2] of a 4-row table of −1:
/// row 2 gets src row 0 then src row 2 (last writer wins), row 0 gets src row 1: table = [20,21], [-1,-1], [30,31],
/// [-1,-1].
#[test]
fn scatter_copy_duplicates_last_writer_wins() {
    let out = run(
        &[
            t("s", "float32", 6, f32s(&[10.0, 11.0, 20.0, 21.0, 30.0, 31.0])),
            t("ix", "uint16", 3, u16s(&[2, 0, 2])),
            t("t", "float32", 8, f32s(&[-1.0; 8])),
        ],
        &scatter_prog(3, 2, 4, "", "float32"),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [20.0, 21.0, -1.0, -1.0, 30.0, 31.0, -1.0, -1.0]);
}

/// bf16 scatter-add with duplicates, rounding at every step (RNE to bf16 after each add).
/// Table rows all 1.0 (0x3F80); src rows r0 = r1 = r3 = [2^-8 (0x3B80), 3·2^-8 (0x3C40)],
/// r2 = [2^-8, 0]; indices [1, 3, 1, 1]: table row 1 ← r0, r2, r3; row 3 ← r1.
/// Row 1 elem 0: 1 + 2^-8 is halfway between 1.0 and 1 + 2^-7: ties to even → 1.0, three
/// times → 1.0 (fp32-sum-then-round would give 1 + 3·2^-8 → 1.015625). Elem 1: 1 + 3·2^-8 =
/// 1.01171875, halfway between 1.0078125 and 1.015625 → even 1.015625 (0x3F82); adding 0 keeps
/// it; adding 3·2^-8 gives 1.02734375, halfway between 1.0234375 and 1.03125 → even 1.03125 (0x3F84).
/// Row 3: [1.0, 1.015625] = [0x3F80, 0x3F82]. Rows 0 and 2 unchanged.
#[test]
fn bf16_scatter_add_rounds_every_step() {
    let out = run(
        &[
            t("s", "bfloat16", 8, u16s(&[0x3B80, 0x3C40, 0x3B80, 0x3C40, 0x3B80, 0x0000, 0x3B80, 0x3C40])),
            t("ix", "uint16", 4, u16s(&[1, 3, 1, 1])),
            t("t", "bfloat16", 8, u16s(&[0x3F80; 8])),
        ],
        &scatter_prog(4, 2, 4, r#","cce_op":"add""#, "bfloat16"),
    )
    .unwrap();
    assert_eq!(to_u16(&out[2]), [0x3F80, 0x3F80, 0x3F80, 0x3F84, 0x3F80, 0x3F80, 0x3F80, 0x3F82]);
}

/// fp32 scatter-add without duplicates (the fast path): table [1, 2, 3, 4] (rows of 1), src
/// [10, 20], indices [3, 0] → [21, 2, 3, 14].
#[test]
fn fp32_scatter_add_unique_indices() {
    let out = run(
        &[
            t("s", "float32", 2, f32s(&[10.0, 20.0])),
            t("ix", "uint16", 2, u16s(&[3, 0])),
            t("t", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])),
        ],
        &scatter_prog(2, 1, 4, r#","cce_op":"add""#, "float32"),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [21.0, 2.0, 3.0, 14.0]);
}

/// index == M − 1 is in bounds; index == M is skipped with `oob_is_err: false` (G7) or faults
/// naming `outs[0].vector_offset`, the element, value and bound, writing nothing.
#[test]
fn scatter_oob_skip_versus_fault() {
    let tensors = || {
        vec![
            t("s", "float32", 3, f32s(&[1.0, 2.0, 3.0])),
            t("ix", "uint16", 3, u16s(&[3, 4, 0])),
            t("t", "float32", 6, f32s(&[0.0; 6])),
        ]
    };
    // M = 4 on a 6-row table: index 3 writes row 3, index 4 is out of bounds.
    let out = run(&tensors(), &scatter_prog(3, 1, 4, r#","oob_is_err":false"#, "float32")).unwrap();
    assert_eq!(to_f32(&out[2]), [3.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
    // Index 3 (element 0) comes first and is fine, but the fault stops the whole scatter first.
    let (f, out) = run_keep(&tensors(), &scatter_prog(3, 1, 4, "", "float32"), Options::default(), None);
    let f = f.unwrap();
    assert_eq!(to_f32(&out[2]), [0.0; 6], "all-or-nothing");
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    let msg = f.message();
    assert!(msg.contains("outs[0].vector_offset element 1 = 4"), "{msg}");
    assert!(msg.contains("indirect_dim_max_index is 4"), "{msg}");
}

/// An index below M whose row leaves the location is out of bounds the same way (G8): a
/// 3-row table with M = 8, index 5.
#[test]
fn scatter_row_leaving_its_location() {
    let tensors = || {
        vec![
            t("s", "float32", 2, f32s(&[1.0, 2.0])),
            t("ix", "uint16", 2, u16s(&[5, 1])),
            t("t", "float32", 3, f32s(&[0.0; 3])),
        ]
    };
    let out = run(&tensors(), &scatter_prog(2, 1, 8, r#","oob_is_err":false"#, "float32")).unwrap();
    assert_eq!(to_f32(&out[2]), [0.0, 2.0, 0.0]);
    let (f, out) = run_keep(&tensors(), &scatter_prog(2, 1, 8, "", "float32"), Options::default(), None);
    let f = f.unwrap();
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert!(f.message().contains("outs[0].vector_offset element 0 = 5"), "{}", f.message());
    // The fault wrote nothing: row 1, which the second index names, stays 0.
    assert_eq!(to_f32(&out[2]), [0.0; 3]);
}

/// cce_op other than bypass/add faults `unsupported-op`; bypass copies.
#[test]
fn scatter_reduce_ops() {
    let tensors = || {
        vec![
            t("s", "float32", 1, f32s(&[5.0])),
            t("ix", "uint16", 1, u16s(&[1])),
            t("t", "float32", 2, f32s(&[1.0, 1.0])),
        ]
    };
    let f = run(&tensors(), &scatter_prog(1, 1, 2, r#","cce_op":"max""#, "float32")).unwrap_err();
    assert_eq!(f.kind, FaultKind::UnsupportedOp);
    let out = run(&tensors(), &scatter_prog(1, 1, 2, r#","cce_op":"bypass""#, "float32")).unwrap();
    assert_eq!(to_f32(&out[2]), [1.0, 5.0]);
    // An add into uint8 is the accumulate's numerics fault.
    let u8t = || {
        vec![t("s", "uint8", 1, vec![5]), t("ix", "uint16", 1, u16s(&[1])), t("t", "uint8", 2, vec![1, 1])]
    };
    let f = run(&u8t(), &scatter_prog(1, 1, 2, r#","cce_op":"add""#, "uint8")).unwrap_err();
    assert_eq!(f.kind, FaultKind::Numerics);
}

/// Gather (vector offset on ins[0], G6): table rows [0,1,2], [10,11,12], [20,21,22],
/// [30,31,32]; indices [2, 0, 5, 2] with M = 4: dense rows 0, 1, 3 ← table rows 2, 0, 2; row 2
/// (index 5) is skipped (`oob_is_err: false`) and keeps −1, or the whole gather faults naming
/// `ins[0].vector_offset`. With cce_op add, rows accumulate into the destination.
#[test]
fn gather_rows_skip_fault_and_add() {
    let table: Vec<f32> = (0..4).flat_map(|r| (0..3).map(move |c| (10 * r + c) as f32)).collect();
    let tensors = |init: f32| {
        vec![
            t("tab", "float32", 12, f32s(&table)),
            t("ix", "uint16", 4, u16s(&[2, 0, 5, 2])),
            t("d", "float32", 12, f32s(&[init; 12])),
        ]
    };
    let prog = |fields: &str| {
        let idx = ap("ix", "uint16", 0, &[(1, 4), (1, 1)]);
        inst(
            "DMACopy",
            "gather",
            &[vap("tab", "float32", 0, &[(3, 4), (1, 3)], 4, &idx)],
            &[ap("d", "float32", 0, &[(3, 4), (1, 3)])],
            &format!(r#""mode":"Copy"{fields}"#),
        )
    };
    let out = run(&tensors(-1.0), &prog(r#","oob_is_err":false"#)).unwrap();
    assert_eq!(to_f32(&out[2]), [20.0, 21.0, 22.0, 0.0, 1.0, 2.0, -1.0, -1.0, -1.0, 20.0, 21.0, 22.0]);
    let f = run(&tensors(-1.0), &prog("")).unwrap_err();
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert!(f.message().contains("ins[0].vector_offset element 2 = 5"), "{}", f.message());
    let out = run(&tensors(1.0), &prog(r#","oob_is_err":false,"cce_op":"add""#)).unwrap();
    assert_eq!(to_f32(&out[2]), [21.0, 22.0, 23.0, 1.0, 2.0, 3.0, 1.0, 1.0, 1.0, 21.0, 22.0, 23.0]);
}

/// A scatter fired from a DMABlock descriptor (DMADescriptorCopy with a vector offset, `op` add)
/// runs the same bridge: table [0, 0], src [1, 2], indices [1, 1] → [0, 3].
#[test]
fn descriptor_scatter_add() {
    let idx = ap("ix", "uint16", 0, &[(1, 2), (1, 1)]);
    let desc = inst(
        "DMADescriptorCopy",
        "d",
        &[ap("s", "float32", 0, &[(1, 2), (1, 1)])],
        &[vap("t", "float32", 0, &[(1, 2), (1, 1)], 2, &idx)],
        r#""op":"add""#,
    );
    let body = format!(
        r#"{{"opcode":"DMABlock","name":"blk","engine":"DMA","ins":[],"outs":[],"descriptors":[{desc}]}},{}"#,
        trigger("trig", &["blk"], None)
    );
    let out = run(
        &[
            t("s", "float32", 2, f32s(&[1.0, 2.0])),
            t("ix", "uint16", 2, u16s(&[1, 1])),
            t("t", "float32", 2, vec![]),
        ],
        &body,
    );
    assert_eq!(to_f32(&out.unwrap()[2]), [0.0, 3.0]);
}

// ---------------------------------------------------------------- fast path vs serial

/// The slow model (G54): one flat fp32 array holding both sides; per planned row in order, the
/// source row is read whole, then copied or added (fp32 add = round(exact sum) to fp32).
fn model(mem: &mut [f32], src: &[usize], dst_rows: &[Option<usize>], len: usize, add: bool) {
    for (i, d) in dst_rows.iter().enumerate() {
        let Some(d) = d else { continue };
        let row: Vec<f32> = (0..len).map(|k| mem[src[i * len + k]]).collect();
        for (k, v) in row.iter().enumerate() {
            let at = d + k;
            mem[at] = if add { mem[at] + v } else { *v };
        }
    }
}

/// Random fp32 scatters in one location (src rows and table rows may overlap, duplicates, odd
/// sizes) against the model, and unique-index scatters between two locations (the fast path)
/// against the same scatter inside one location (the serial path), at 1 and 3 threads.
#[test]
fn bridge_paths_match_the_model_and_each_other() {
    let mut rng = XorShift64Star::new(0x9E37_79B9_7F4A_7C15);
    for round in 0..60 {
        let rows = 1 + rng.below(7) as usize;
        let len = 1 + rng.below(5) as usize;
        let table_rows = rows + rng.below(6) as usize;
        let add = round % 2 == 1;
        let max = table_rows as i64 - (rng.below(2) as i64);
        let unique = round % 3 != 0;
        let mut pool: Vec<u16> = (0..table_rows as u16).collect();
        let idx: Vec<u16> = (0..rows)
            .map(|_| {
                if unique && !pool.is_empty() {
                    let k = rng.below(pool.len() as u64) as usize;
                    pool.swap_remove(k)
                } else {
                    rng.below(table_rows as u64 + 1) as u16
                }
            })
            .collect();
        let fields = if add { r#","cce_op":"add","oob_is_err":false"# } else { r#","oob_is_err":false"# };
        let ix = ap("ix", "uint16", 0, &[(1, rows as i64), (1, 1)]);
        // One location z: the table at 0, the source rows at `src_off` (may overlap the table).
        let total = table_rows * len + rows * len + 3;
        let src_off = rng.below((table_rows * len + 4) as u64) as i64;
        let init: Vec<f32> = (0..total).map(|_| (rng.below(64) as f32) - 20.0).collect();
        let one = inst(
            "DMACopy",
            "s1",
            &[ap("z", "float32", src_off, &[(len as i64, rows as i64), (1, len as i64)])],
            &[vap("z", "float32", 0, &[(len as i64, rows as i64), (1, len as i64)], max, &ix)],
            &format!(r#""mode":"Copy"{fields}"#),
        );
        let dst_rows: Vec<Option<usize>> = idx
            .iter()
            .map(|&v| ((v as i64) < max && (v as usize) < table_rows).then(|| v as usize * len))
            .collect();
        let src: Vec<usize> = (0..rows * len).map(|e| src_off as usize + e).collect();
        let mut want = init.clone();
        model(&mut want, &src, &dst_rows, len, add);
        for threads in [1, 3] {
            let o = Options { parallelism: Parallelism { threads, grain: 1 }, ..Default::default() };
            let got = run_with(
                &[t("ix", "uint16", rows, u16s(&idx)), t("z", "float32", total, f32s(&init))],
                &one,
                o,
            )
            .unwrap();
            assert_eq!(
                to_f32(&got[1]),
                want,
                "round {round} threads {threads} idx {idx:?} src_off {src_off}"
            );
        }
        // Two locations (fast path when unique) vs the model on disjoint storage.
        let two = inst(
            "DMACopy",
            "s2",
            &[ap("s", "float32", 0, &[(len as i64, rows as i64), (1, len as i64)])],
            &[vap("t", "float32", 0, &[(len as i64, rows as i64), (1, len as i64)], max, &ix)],
            &format!(r#""mode":"Copy"{fields}"#),
        );
        let s_init: Vec<f32> = init[..rows * len].to_vec();
        let t_init: Vec<f32> = init[rows * len..rows * len + table_rows * len].to_vec();
        let mut mem: Vec<f32> = t_init.iter().chain(&s_init).copied().collect();
        let src2: Vec<usize> = (0..rows * len).map(|e| table_rows * len + e).collect();
        model(&mut mem, &src2, &dst_rows, len, add);
        let got = run(
            &[
                t("ix", "uint16", rows, u16s(&idx)),
                t("s", "float32", rows * len, f32s(&s_init)),
                t("t", "float32", table_rows * len, f32s(&t_init)),
            ],
            &two,
        )
        .unwrap();
        assert_eq!(to_f32(&got[2]), mem[..table_rows * len], "round {round} (two locations) idx {idx:?}");
    }
}

/// The docs/bir-json.md worked example, add form: `t` = 0, `s` = [10, 11, 20, 21, 30, 31],
/// `ix` = [2, 0, 2] → t = [20, 21, 0, 0, 40, 42, 0, 0].
#[test]
fn bir_json_worked_example_add() {
    let out = run(
        &[
            t("s", "float32", 6, f32s(&[10.0, 11.0, 20.0, 21.0, 30.0, 31.0])),
            t("ix", "uint16", 3, u16s(&[2, 0, 2])),
            t("t", "float32", 8, f32s(&[0.0; 8])),
        ],
        &scatter_prog(3, 2, 4, r#","cce_op":"add""#, "float32"),
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [20.0, 21.0, 0.0, 0.0, 40.0, 42.0, 0.0, 0.0]);
}

/// The fast path (two locations, unique indices) against the serial path (the same data in one
/// location, source rows after the table) on bf16 adds and copies, odd sizes.
#[test]
fn bf16_fast_scatter_equals_the_serial_scatter() {
    let mut rng = XorShift64Star::new(0x0123_4567_89AB_CDEF);
    for round in 0..40 {
        let rows = 1 + rng.below(6) as usize;
        let len = 1 + rng.below(7) as usize;
        let table_rows = rows + rng.below(5) as usize;
        let mut pool: Vec<u16> = (0..table_rows as u16).collect();
        let idx: Vec<u16> =
            (0..rows).map(|_| pool.swap_remove(rng.below(pool.len() as u64) as usize)).collect();
        // Finite bf16 values of varied magnitude (exponent 120..=135), either sign.
        let mut val =
            || ((rng.below(2) as u16) << 15) | ((120 + rng.below(16) as u16) << 7) | rng.below(128) as u16;
        let s_init: Vec<u16> = (0..rows * len).map(|_| val()).collect();
        let t_init: Vec<u16> = (0..table_rows * len).map(|_| val()).collect();
        let fields = if round % 2 == 0 { r#","cce_op":"add""# } else { "" };
        let (l, r) = (len as i64, rows as i64);
        let ix = ap("ix", "uint16", 0, &[(1, r), (1, 1)]);
        let two = inst(
            "DMACopy",
            "fast",
            &[ap("s", "bfloat16", 0, &[(l, r), (1, l)])],
            &[vap("t", "bfloat16", 0, &[(l, r), (1, l)], table_rows as i64, &ix)],
            &format!(r#""mode":"Copy"{fields}"#),
        );
        let fast = run(
            &[
                t("ix", "uint16", rows, u16s(&idx)),
                t("s", "bfloat16", rows * len, u16s(&s_init)),
                t("t", "bfloat16", table_rows * len, u16s(&t_init)),
            ],
            &two,
        )
        .unwrap();
        let one = inst(
            "DMACopy",
            "serial",
            &[ap("z", "bfloat16", (table_rows * len) as i64, &[(l, r), (1, l)])],
            &[vap("z", "bfloat16", 0, &[(l, r), (1, l)], table_rows as i64, &ix)],
            &format!(r#""mode":"Copy"{fields}"#),
        );
        let z: Vec<u16> = t_init.iter().chain(&s_init).copied().collect();
        let serial =
            run(&[t("ix", "uint16", rows, u16s(&idx)), t("z", "bfloat16", z.len(), u16s(&z))], &one).unwrap();
        assert_eq!(to_u16(&fast[2]), to_u16(&serial[1])[..table_rows * len], "round {round} idx {idx:?}");
    }
}

/// Trigger programs keep every location alive when dead locations are freed (their blocks name
/// locations from elsewhere): `digits`' last top-level use is a copy before the loop, yet the
/// blocks fired in the loop still read it; acc = 1231 as without freeing.
#[test]
fn freeing_dead_locations_keeps_trigger_programs_correct() {
    let copy = inst(
        "DMACopy",
        "peek",
        &[ap("digits", "float32", 0, &[(4, 1), (1, 4)])],
        &[ap("scratch", "float32", 0, &[(4, 1), (1, 4)])],
        r#""mode":"Copy""#,
    );
    let body =
        format!("{},{copy},{}", digit_blocks(3), looped("l", 4, &trigger("trig", &["b0", "b1", "b2"], None)));
    let mut tensors = digits_tensors();
    tensors.push(t("scratch", "float32", 4, vec![]));
    let (f, out) = run_keep(&tensors, &body, Options::default(), Some(&["acc"]));
    assert!(f.is_none());
    assert_eq!(to_f32(&out[0])[0], 1231.0);
}

/// SB operands (partition rows): src partitions [1, 2, 3], [4, 5, 6] scattered into a 4-partition
/// SB table of −1 (rows 3 elements, stride 3 = the partition pitch) at [3, 1]: partition 3 ←
/// [1, 2, 3], partition 1 ← [4, 5, 6] (the fast path); at [3, 3] partition 3 ends [4, 5, 6]
/// (serial). Then the NKI-style gather of DRAM rows [0, 2] into the two SB partitions.
#[test]
fn sb_partition_rows_scatter_and_gather() {
    let prog = |ix: &[u16]| {
        let tensors = vec![
            sb("s", "float32", 2, 3, f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
            t("ix", "uint16", 2, u16s(ix)),
            sb("tab", "float32", 4, 3, f32s(&[-1.0; 12])),
        ];
        let idx = ap("ix", "uint16", 0, &[(1, 2), (1, 1)]);
        let body = inst(
            "DMACopy",
            "scatter",
            &[ap("s", "float32", 0, &[(3, 2), (1, 3)])],
            &[vap("tab", "float32", 0, &[(3, 2), (1, 3)], 4, &idx)],
            r#""mode":"Copy""#,
        );
        to_f32(&run(&tensors, &body).unwrap()[2])
    };
    let m = -1.0;
    assert_eq!(prog(&[3, 1]), [m, m, m, 4.0, 5.0, 6.0, m, m, m, 1.0, 2.0, 3.0]);
    assert_eq!(prog(&[3, 3]), [m, m, m, m, m, m, m, m, m, 4.0, 5.0, 6.0]);
    let idx = ap("ix", "uint16", 0, &[(1, 2), (1, 1)]);
    let body = inst(
        "DMACopy",
        "gather",
        &[vap("d", "float32", 0, &[(3, 2), (1, 3)], 3, &idx)],
        &[ap("sbd", "float32", 0, &[(3, 2), (1, 3)])],
        r#""mode":"Copy""#,
    );
    let out = run(
        &[
            t("d", "float32", 9, f32s(&[0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0])),
            t("ix", "uint16", 2, u16s(&[0, 2])),
            sb("sbd", "float32", 2, 3, vec![]),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(to_f32(&out[2]), [0.0, 1.0, 2.0, 20.0, 21.0, 22.0]);
}
