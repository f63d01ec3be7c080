//! Activation (issue #28; docs/fidelity.md E1–E5; engines.md §2.1): `dst = cast(f(x·scale +
//! bias))` with `ins = [data, scale?, bias?, alpha?]`, each parameter an immediate or one value
//! per partition; the affine step's two roundings; an operand over its JSON key; the output
//! cast; the faults; the accumulator registers, their read-outs, activate2 and Exponential
//! (E7–E10). Every expected value is worked by hand in the comments.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use simulator::{FaultKind, Options};

/// An Activation of the 2 × 4 fp32 tile `x` into `y` (`dt`), with parameters `params` (JSON
/// operands after the data) and extra JSON members `fields`.
fn act(func: &str, params: &[String], dt: &str, fields: &str) -> String {
    let ins: Vec<String> =
        std::iter::once(ap("x", "float32", 0, &[(4, 2), (1, 4)])).chain(params.iter().cloned()).collect();
    format!(
        r#"{{"opcode":"Activation","name":"act","engine":"Activation","ins":[{}],"outs":[{}],"func":"{func}"{fields}}}"#,
        ins.join(","),
        ap("y", dt, 0, &[(4, 2), (1, 4)]),
    )
}

fn imm(v: f32) -> String {
    format!(r#"{{"kind":"imm_value","dtype":"float32","value":{v:?}}}"#)
}

/// One value per partition from the 2 × 1 tile `p`.
fn per_partition() -> String {
    ap("p", "float32", 0, &[(1, 2), (1, 1)])
}

/// Runs `body` on x (2 × 4 fp32), p (2 × 1 fp32) and y (2 × 4 `dt`); y's bytes, or the fault.
fn run(body: &str, x: [f32; 8], p: [f32; 2], dt: &str) -> Result<Vec<u8>, (FaultKind, String)> {
    let tensors = [
        sb("x", "float32", 2, 4, f32s(&x)),
        sb("p", "float32", 2, 1, f32s(&p)),
        sb("y", dt, 2, 4, Vec::new()),
    ];
    match run_keep(&tensors, body, Options::default(), None) {
        (None, mem) => Ok(mem[2].clone()),
        (Some(f), _) => Err((f.kind, format!("{} {}", f.instruction, f.message()))),
    }
}

fn bits(b: &[u8]) -> Vec<String> {
    to_f32(b).iter().map(|x| format!("{:#010x}", x.to_bits())).collect()
}

fn want(v: &[f32]) -> Vec<String> {
    v.iter().map(|x| format!("{:#010x}", x.to_bits())).collect()
}

#[test]
fn relu_of_scale_and_a_bias_per_partition() {
    // scale 2 (immediate), bias −1 on partition 0 and 3 on partition 1:
    // p0: 2·[1, −2, 0.25, 3] − 1 = [1, −5, −0.5, 5] → Relu [1, 0, 0, 5];
    // p1: 2·[−1, 0, 0.5, −4] + 3 = [1, 3, 4, −5] → [1, 3, 4, 0].
    let x = [1.0, -2.0, 0.25, 3.0, -1.0, 0.0, 0.5, -4.0];
    let got =
        run(&act("Relu", &[imm(2.0), per_partition()], "float32", ""), x, [-1.0, 3.0], "float32").unwrap();
    assert_eq!(bits(&got), want(&[1.0, 0.0, 0.0, 5.0, 1.0, 3.0, 4.0, 0.0]));
}

#[test]
fn the_affine_step_rounds_twice() {
    // x = scale = 1 + 2^-12: x·scale = 1 + 2^-11 + 2^-24, a tie in fp32 that rounds (to even)
    // to 1 + 2^-11; adding the bias −1 gives 2^-11. A fused multiply-add would keep
    // 2^-11 + 2^-24.
    let s = 1.0 + f32::powi(2.0, -12);
    let got =
        run(&act("Identity", &[imm(s), imm(-1.0)], "float32", ""), [s; 8], [0.0; 2], "float32").unwrap();
    assert_eq!(bits(&got), want(&[f32::powi(2.0, -11); 8]));
}

#[test]
fn an_operand_wins_over_its_key_and_a_missing_one_is_the_key() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    // Key scale 3, operand 2: 2x.
    let body = act("Identity", &[imm(2.0)], "float32", r#","scale":3.0"#);
    let got = run(&body, x, [0.0; 2], "float32").unwrap();
    assert_eq!(bits(&got), want(&x.map(|v| 2.0 * v)));
    // No operand: the key's 3x; no bias: + 0.
    let got = run(&act("Identity", &[], "float32", r#","scale":3.0"#), x, [0.0; 2], "float32").unwrap();
    assert_eq!(bits(&got), want(&x.map(|v| 3.0 * v)));
}

#[test]
fn prelu_takes_alpha_per_partition_or_from_its_key() {
    // alpha 0.5 on partition 0 and 0.25 on partition 1 (ins[3]); scale 1, bias 0 as operands.
    let x = [-2.0, 2.0, -4.0, -0.0, -2.0, 2.0, -4.0, 8.0];
    let body = act("Prelu", &[imm(1.0), imm(0.0), per_partition()], "float32", "");
    let got = run(&body, x, [0.5, 0.25], "float32").unwrap();
    // x ≤ 0: alpha·x; x > 0: x. The −0 meets the bias first: −0 + (+0) = +0, and alpha·(+0)
    // = +0.
    assert_eq!(bits(&got), want(&[-1.0, 2.0, -2.0, 0.0, -0.5, 2.0, -1.0, 8.0]));
    // A missing bias is +0 and is added all the same.
    let got = run(&act("Prelu", &[], "float32", r#","alpha":0.125"#), x, [0.0; 2], "float32").unwrap();
    assert_eq!(bits(&got), want(&[-0.25, 2.0, -0.5, 0.0, -0.25, 2.0, -0.5, 8.0]));
}

#[test]
fn the_result_is_cast_to_the_output_dtype() {
    // Exp(1) rounds once to fp32 e = 0x402DF854; bf16 keeps the top half rounded to nearest:
    // 0x402D with 0xF854 below, more than half, so 0x402E. Exp(0) = 1 = 0x3F80.
    let x = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
    let got = run(&act("Exp", &[], "bfloat16", ""), x, [0.0; 2], "bfloat16").unwrap();
    assert_eq!(to_u16(&got), [0x402E, 0x3F80, 0x402E, 0x3F80, 0x402E, 0x3F80, 0x402E, 0x3F80]);
}

#[test]
fn unsupported_functions_fault_and_write_nothing() {
    for func in ["Is_finite", "Unknown", "Dsqrt"] {
        let err = run(&act(func, &[], "float32", ""), [1.0; 8], [0.0; 2], "float32").unwrap_err();
        assert_eq!(err.0, FaultKind::UnsupportedOp, "{func}: {}", err.1);
        assert!(err.1.contains("unsupported activation function"), "{func}: {}", err.1);
    }
}

/// A read-out of `engine`'s registers into the 2 × 1 fp32 tile `r`.
fn read_out(opcode: &str, engine: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"read","engine":"{engine}","ins":[],"outs":[{}]}}"#,
        ap("r", "float32", 0, &[(1, 2), (1, 1)])
    )
}

/// Runs `body` on x (2 × 4 fp32), p (2 × 1 fp32), y (2 × 4 `dt`) and r (2 × 1 fp32): r's
/// values (the read-outs' target), or the fault.
fn run_r(body: &str, x: [f32; 8], p: [f32; 2], dt: &str) -> Result<Vec<f32>, (FaultKind, String)> {
    let tensors = [
        sb("x", "float32", 2, 4, f32s(&x)),
        sb("p", "float32", 2, 1, f32s(&p)),
        sb("y", dt, 2, 4, Vec::new()),
        sb("r", "float32", 2, 1, f32s(&[f32::NAN; 2])),
    ];
    match run_keep(&tensors, body, Options::default(), None) {
        (None, mem) => Ok(to_f32(&mem[3])),
        (Some(f), _) => Err((f.kind, format!("{} {}", f.instruction, f.message()))),
    }
}

/// Row 0 [1e8, 1, −1e8, 0.5] folds serially in fp32 from 0: 1e8 + 1 = 1e8 (1 is below half
/// its ulp of 8), − 1e8 = 0, + 0.5 = 0.5. Row 1 [1, 2, 3, 4] sums to 10.
const ORDER: [f32; 8] = [1e8, 1.0, -1e8, 0.5, 1.0, 2.0, 3.0, 4.0];

#[test]
fn activation_reduce_folds_each_row_serially_into_the_registers() {
    let body = [
        act("Identity", &[], "float32", r#","acc":"ZeroAccumulate""#),
        read_out("ActivationReadAccumulator", "Activation"),
    ]
    .join(",");
    assert_eq!(run_r(&body, ORDER, [0.0; 2], "float32").unwrap(), [0.5, 10.0]);
    // ReadActivationAccumulator (5) is the same read-out.
    let body = body.replace("ActivationReadAccumulator", "ReadActivationAccumulator");
    assert_eq!(run_r(&body, ORDER, [0.0; 2], "float32").unwrap(), [0.5, 10.0]);
}

#[test]
fn accumulate_continues_from_the_register_element_by_element() {
    // A second pass over row 0 from 0.5: 0.5 + 1e8 = 1e8, + 1 = 1e8, − 1e8 = 0, + 0.5 = 0.5
    // (adding the row's own sum, 0.5, to the register would give 1). Row 1: 10 + 10 = 20.
    let body = [
        act("Identity", &[], "float32", r#","acc":"ZeroAccumulate""#),
        act("Identity", &[], "float32", r#","acc":"Accumulate""#),
        read_out("ActivationReadAccumulator", "Activation"),
    ]
    .join(",");
    assert_eq!(run_r(&body, ORDER, [0.0; 2], "float32").unwrap(), [0.5, 20.0]);
}

#[test]
fn registers_start_at_zero_idle_leaves_them_and_zero_resets_them() {
    let read = read_out("ActivationReadAccumulator", "Activation");
    assert_eq!(run_r(&read, ORDER, [0.0; 2], "float32").unwrap(), [0.0, 0.0]);
    let set = act("Identity", &[], "float32", r#","acc":"ZeroAccumulate""#);
    let idle = act("Exp", &[], "float32", r#","acc":"Idle""#);
    assert_eq!(
        run_r(&[set.clone(), idle, read.clone()].join(","), ORDER, [0.0; 2], "float32").unwrap(),
        [0.5, 10.0]
    );
    let zero = act("Exp", &[], "float32", r#","acc":"Zero""#);
    assert_eq!(run_r(&[set, zero, read].join(","), ORDER, [0.0; 2], "float32").unwrap(), [0.0, 0.0]);
}

#[test]
fn the_fold_sees_the_fp32_result_before_the_output_cast() {
    // 1 + 2^-10 is 1.0 in bfloat16 (7 fraction bits) but exact in fp32: the registers sum
    // 4 · (1 + 2^-10) = 4 + 2^-8, not 4.
    let v = 1.0 + f32::powi(2.0, -10);
    let body = [
        act("Identity", &[], "bfloat16", r#","acc":"ZeroAccumulate""#),
        read_out("ActivationReadAccumulator", "Activation"),
    ]
    .join(",");
    assert_eq!(run_r(&body, [v; 8], [0.0; 2], "bfloat16").unwrap(), [4.0 + f32::powi(2.0, -8); 2]);
}

#[test]
fn activate2_runs_its_two_steps_then_the_function_then_the_fold() {
    // (mult 2, subtract 1 reversed): 1 − 2x; Relu; max fold from −inf.
    // Row 0 x = [1, −2, 0.25, 3]: 1 − 2x = [−1, 5, 0.5, −5] → Relu [0, 5, 0.5, 0], max 5.
    // Row 1 x = [−1, 0, 0.5, −4] (imm0 per partition: 3): 1 − 3x = [4, 1, −0.5, 13] → max 13.
    let x = [1.0, -2.0, 0.25, 3.0, -1.0, 0.0, 0.5, -4.0];
    let fields = r#","is_activate2":true,"op0":"mult","op1":"subtract","reverse1":true,"reduce_op":"max","acc":"ZeroAccumulate""#;
    let body = [
        act("Relu", &[per_partition(), imm(1.0)], "float32", fields),
        read_out("ActivationReadAccumulator", "Activation"),
    ]
    .join(",");
    assert_eq!(run_r(&body, x, [2.0, 3.0], "float32").unwrap(), [5.0, 13.0]);
    // Identity over all-negative values: a max reset to 0 would read 0; from −inf it reads −1.
    let neg = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0];
    let fields = r#","is_activate2":true,"reduce_op":"max","acc":"ZeroAccumulate""#;
    let body = [act("Identity", &[], "float32", fields), read_out("ActivationReadAccumulator", "Activation")]
        .join(",");
    assert_eq!(run_r(&body, neg, [0.0; 2], "float32").unwrap(), [-1.0, -5.0]);
}

#[test]
fn exponential_subtracts_then_sums_into_the_vector_engines_registers() {
    // max_value per partition [1, 2]; x − max = 0 everywhere → exp 1; sums 4 per row. The
    // ScalarE's registers are separate: its read-out still shows +0.
    let x = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0];
    let exp = format!(
        r#"{{"opcode":"Exponential","name":"e","engine":"DVE","ins":[{},{}],"outs":[{}],"acc":"ZeroAccumulate"}}"#,
        ap("x", "float32", 0, &[(4, 2), (1, 4)]),
        per_partition(),
        ap("y", "float32", 0, &[(4, 2), (1, 4)]),
    );
    let body = [exp.clone(), read_out("DveReadAccumulator", "DVE")].join(",");
    assert_eq!(run_r(&body, x, [1.0, 2.0], "float32").unwrap(), [4.0, 4.0]);
    let body = [exp.clone(), read_out("ActivationReadAccumulator", "Activation")].join(",");
    assert_eq!(run_r(&body, x, [1.0, 2.0], "float32").unwrap(), [0.0, 0.0]);
    // LoadAccumulate from reduce_init 10 (an immediate): 10 + 4.
    let load = exp
        .replace(r#"],"outs""#, &format!(r#",{}],"outs""#, imm(10.0)))
        .replace("ZeroAccumulate", "LoadAccumulate");
    let body = [load, read_out("DveReadAccumulator", "DVE")].join(",");
    assert_eq!(run_r(&body, x, [1.0, 2.0], "float32").unwrap(), [14.0, 14.0]);
}

#[test]
fn load_accumulate_on_activation_is_not_implemented_by_name() {
    let err = run(&act("Exp", &[], "float32", r#","acc":"LoadAccumulate""#), [1.0; 8], [0.0; 2], "float32")
        .unwrap_err();
    assert_eq!(err.0, FaultKind::NotImplemented, "{}", err.1);
    assert!(err.1.contains("LoadAccumulate"), "{}", err.1);
}

#[test]
fn activate2_pairs_and_folds_outside_the_documented_sets_are_refused() {
    for fields in [
        r#","is_activate2":true,"op0":"add","op1":"add""#,
        r#","is_activate2":true,"reduce_op":"mult""#,
        r#","reduce_op":"max""#,
        r#","op0":"mult""#,
    ] {
        let tensors = [
            sb("x", "float32", 2, 4, Vec::new()),
            sb("p", "float32", 2, 1, Vec::new()),
            sb("y", "float32", 2, 4, Vec::new()),
        ];
        let text = program_text("gen3", &tensors, &act("Exp", &[], "float32", fields));
        let prog = bir_ir::json::load_str(&text).unwrap();
        let err = bir_ir::validate(&prog, &bir_ir::ValidateOptions::default()).unwrap_err();
        let msg = format!("{err:?}");
        assert!(msg.contains("op0") || msg.contains("reduce_op"), "{fields}: {msg}");
    }
    // A parameter immediate of another dtype than float32 (RE: the kernel asserts).
    let tensors = [
        sb("x", "float32", 2, 4, Vec::new()),
        sb("p", "float32", 2, 1, Vec::new()),
        sb("y", "float32", 2, 4, Vec::new()),
    ];
    let bf16 = r#"{"kind":"imm_value","dtype":"bfloat16","value":2.0}"#.to_owned();
    let prog =
        bir_ir::json::load_str(&program_text("gen3", &tensors, &act("Exp", &[bf16], "float32", ""))).unwrap();
    let err = format!("{:?}", bir_ir::validate(&prog, &bir_ir::ValidateOptions::default()).unwrap_err());
    assert!(err.contains("ins[1].dtype") && err.contains("must be float32"), "{err}");
}

#[test]
fn a_parameter_that_does_not_divide_the_data_faults() {
    // Three values for eight elements.
    let three = ap("x", "float32", 0, &[(1, 3)]);
    let err = run(&act("Identity", &[three], "float32", ""), [1.0; 8], [0.0; 2], "float32").unwrap_err();
    assert_eq!(err.0, FaultKind::Shape, "{}", err.1);
}

/// Runs `body` on x and p as [`run`] does, with `options`; the run's range warnings and fault.
fn run_warnings(
    body: &str,
    x: [f32; 8],
    options: Options,
) -> (Vec<simulator::RangeWarning>, Option<FaultKind>) {
    let tensors = [
        sb("x", "float32", 2, 4, f32s(&x)),
        sb("p", "float32", 2, 1, f32s(&[0.0, 0.0])),
        sb("y", "float32", 2, 4, Vec::new()),
    ];
    let text = program_text("gen3", &tensors, body);
    let prog = bir_ir::json::load_str(&text).unwrap();
    let v = bir_ir::validate(&prog, &Default::default()).unwrap();
    let f0 = &prog.functions[0];
    let mut sim = simulator::Simulator::new(v, numerics::Profile::refsim());
    sim.set_options(options);
    sim.enable_trace();
    let t = simulator::io::resolve(f0, "x").unwrap();
    sim.memory_mut().load(&f0.locations[t.loc.index()], t.loc, &f32s(&x)).unwrap();
    let fault = match sim.run().unwrap() {
        simulator::Outcome::Faulted(f) => Some(f.kind),
        simulator::Outcome::Finished => None,
    };
    let traced: u64 = sim.trace().iter().map(|e| e.out_of_range).sum();
    let warnings = sim.range_warnings().to_vec();
    assert_eq!(traced, warnings.iter().map(|w| w.note.count).sum::<u64>(), "the trace counts the same");
    (warnings, fault)
}

#[test]
fn inputs_outside_the_valid_range_are_counted_once_per_instruction() {
    // Ln's valid range is [2^-64, 2^64]: 0, −1 and 2^65 are outside (three of eight), the first
    // of them in element order being 0. Run twice (two instructions of the same name would be
    // one program error, so one instruction, and Exp beside it has no range).
    let x = [1.0, 0.0, -1.0, 2.0, f32::powi(2.0, 65), 4.0, 5.0, 6.0];
    let body = [act("Ln", &[], "float32", ""), act("Exp", &[], "float32", "").replace(r#""act""#, r#""e""#)]
        .join(",");
    let (w, fault) = run_warnings(&body, x, Options::default());
    assert_eq!(fault, None);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!((w[0].name.as_str(), w[0].note.func, w[0].note.count), ("act", "Ln", 3));
    assert_eq!(w[0].note.example.to_bits(), 0, "the first outside input, +0");
    assert_eq!(w[0].note.range, "[2^-64, 2^64]");
    // ranges=fault: a numerics fault, nothing written.
    let mut o = Options::default();
    o.set("ranges", "fault").unwrap();
    let (w, fault) = run_warnings(&body, x, o);
    assert_eq!((w.len(), fault), (0, Some(FaultKind::Numerics)));
    // Split across two threads in pieces of four elements (0 and −1 fall in the first piece,
    // 2^65 in the second): the same count and the same first input; then only the second
    // piece has any.
    let o = Options { parallelism: simulator::Parallelism { threads: 2, grain: 3 }, ..Default::default() };
    let (w2, _) = run_warnings(&body, x, o);
    assert_eq!((w2[0].note.count, w2[0].note.example.to_bits()), (3, 0));
    let x = [1.0, 2.0, 3.0, 4.0, -1.0, 0.0, 5.0, 6.0];
    let (w2, _) = run_warnings(&body, x, o);
    assert_eq!((w2[0].note.count, w2[0].note.example), (2, -1.0), "the second piece's first");
    // All inside: no warning.
    let (w, _) = run_warnings(&act("Ln", &[], "float32", ""), [1.0; 8], Options::default());
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn load_act_func_set_changes_nothing() {
    // A table-set switch before the same Relu as above: the same bytes.
    let set = r#"{"opcode":"LoadActFuncSet","name":"ls","engine":"Activation","ins":[],"outs":[],"act_func_set_id":3}"#;
    let x = [1.0, -2.0, 0.25, 3.0, -1.0, 0.0, 0.5, -4.0];
    let body = [set.to_owned(), act("Relu", &[imm(2.0), per_partition()], "float32", "")].join(",");
    let got = run(&body, x, [-1.0, 3.0], "float32").unwrap();
    assert_eq!(bits(&got), want(&[1.0, 0.0, 0.0, 5.0, 1.0, 3.0, 4.0, 0.0]));
}

#[test]
fn check_reports_immediates_that_fix_the_argument_outside_the_range() {
    // Ln with scale 0 (the key) and bias −1: every finite x gives 0·x + (−1) = −1, outside
    // [2^-64, 2^64]; Sqrt with scale 0 and no bias gives +0, outside [2^-116, 2^118]; Sin with
    // scale 0 gives 0, inside [−π, π]; Ln with scale 1 depends on the data.
    let body = [
        act("Ln", &[imm(0.0), imm(-1.0)], "float32", "").replace(r#""act""#, r#""ln""#),
        act("Sqrt", &[], "float32", r#","scale":0.0"#).replace(r#""act""#, r#""sqrt""#),
        act("Sin", &[imm(0.0)], "float32", "").replace(r#""act""#, r#""sin""#),
        act("Ln", &[imm(1.0), imm(-1.0)], "float32", "").replace(r#""act""#, r#""ln1""#),
    ]
    .join(",");
    let tensors = [
        sb("x", "float32", 2, 4, Vec::new()),
        sb("p", "float32", 2, 1, Vec::new()),
        sb("y", "float32", 2, 4, Vec::new()),
    ];
    let prog = bir_ir::json::load_str(&program_text("gen3", &tensors, &body)).unwrap();
    let report = simulator::support::check(&prog);
    let got: Vec<(String, &str, f32)> =
        report.ranges.iter().map(|r| (r.instruction.clone(), r.func, r.argument)).collect();
    assert_eq!(got, [("ln".to_owned(), "Ln", -1.0), ("sqrt".to_owned(), "Sqrt", 0.0)]);
    assert!(report.to_string().contains("range warning   ln: Ln's argument is -1.0"), "{report}");
}

/// The function's pass split across threads (pieces of whole partitions for a per-partition
/// alpha, of any length otherwise) gives every element the serial pass's bits: 7 × 5 odd shapes,
/// pieces of 3 elements, NaN / −0 / ±Inf / subnormal data, Prelu with alpha per partition and
/// Gelu, and the accumulators' sums.
#[test]
fn the_threaded_function_pass_matches_the_serial_one() {
    let x: Vec<f32> = (0..35)
        .map(|k| match k % 7 {
            0 => f32::NAN,
            1 => -0.0,
            2 => f32::INFINITY,
            3 => -1e-40,
            _ => (k as f32 - 17.0) * 0.37,
        })
        .collect();
    let alpha: Vec<f32> = (0..7).map(|p| 0.1 * p as f32 - 0.3).collect();
    let tile = |m: &str, per: i64| ap(m, "float32", 0, &[(per, 7), (1, per)]);
    for (func, params) in [("Prelu", vec![imm(1.0), imm(0.0), tile("a", 1)]), ("Gelu", vec![])] {
        let ins: Vec<String> = std::iter::once(tile("x", 5)).chain(params).collect();
        let body = format!(
            r#"{{"opcode":"Activation","name":"act","engine":"Activation","ins":[{}],"outs":[{}],"func":"{func}","acc":"ZeroAccumulate"}},{{"opcode":"ActivationReadAccumulator","name":"read","engine":"Activation","ins":[],"outs":[{}]}}"#,
            ins.join(","),
            tile("y", 5),
            tile("r", 1)
        );
        let out = |threads: usize| {
            let tensors = [
                sb("x", "float32", 7, 5, f32s(&x)),
                sb("a", "float32", 7, 1, f32s(&alpha)),
                sb("y", "float32", 7, 5, Vec::new()),
                sb("r", "float32", 7, 1, Vec::new()),
            ];
            let o =
                Options { parallelism: simulator::Parallelism { threads, grain: 3 }, ..Default::default() };
            let (f, mem) = run_keep(&tensors, &body, o, None);
            assert!(f.is_none(), "{func}: {f:?}");
            (bits(&mem[2]), bits(&mem[3]))
        };
        assert_eq!(out(2), out(1), "{func}");
    }
}

/// The direct path (fp32 in and out, straight between the buffers, or in place) against the
/// read-map-write path (taken when the accumulators need the values: acc ZeroAccumulate) on 7 ×
/// 1301 elements (blocks of 4096 cross partitions and a per-partition alpha's runs), NaN / −0 /
/// ±Inf / subnormal data, at 1 and 2 threads: the same bits; in place gives them too. Activation
/// (Prelu with alpha per partition, Gelu, Ln with its range count) and Exponential.
#[test]
fn the_direct_path_matches_the_read_map_write_path() {
    let (p, f) = (7i64, 1301i64);
    let n = (p * f) as usize;
    let x: Vec<f32> = (0..n)
        .map(|k| match k % 11 {
            0 => f32::NAN,
            1 => -0.0,
            2 => f32::NEG_INFINITY,
            3 => 1e-41,
            _ => (k as f32 * 0.731).sin() * 9.0,
        })
        .collect();
    let alpha: Vec<f32> = (0..p).map(|k| 0.25 * k as f32 - 1.0).collect();
    let tile = |m: &str, per: i64| ap(m, "float32", 0, &[(per, p), (1, per)]);
    let cases = [
        ("Activation", r#""func":"Prelu""#, vec![imm(1.5), imm(0.25), tile("a", 1)]),
        ("Activation", r#""func":"Gelu""#, vec![]),
        ("Activation", r#""func":"Ln""#, vec![]),
        ("Exponential", r#""engine":"DVE""#, vec![tile("a", 1)]),
    ];
    for (opcode, key, params) in cases {
        let one = |out: &str, acc: &str, threads: usize| {
            let ins: Vec<String> = std::iter::once(tile("x", f)).chain(params.iter().cloned()).collect();
            let body = format!(
                r#"{{"opcode":"{opcode}","name":"i","engine":"Activation","ins":[{}],"outs":[{}],{key}{acc}}}"#,
                ins.join(","),
                tile(out, f),
            )
            .replace(r#""engine":"Activation","ins""#, if opcode == "Exponential" { r#""ins""# } else { r#""engine":"Activation","ins""# });
            let tensors = [
                sb("x", "float32", p as usize, f as usize, f32s(&x)),
                sb("a", "float32", p as usize, 1, f32s(&alpha)),
                sb("y", "float32", p as usize, f as usize, Vec::new()),
            ];
            let o =
                Options { parallelism: simulator::Parallelism { threads, grain: 3 }, ..Default::default() };
            let (fault, mem) = run_keep(&tensors, &body, o, None);
            assert!(fault.is_none(), "{opcode} {key}: {fault:?}");
            bits(&mem[if out == "x" { 0 } else { 2 }])
        };
        let want = one("y", r#","acc":"ZeroAccumulate""#, 1);
        for threads in [1, 2] {
            assert_eq!(one("y", "", threads), want, "{opcode} {key}: direct, {threads} thread(s)");
            assert_eq!(
                one("y", r#","acc":"ZeroAccumulate""#, threads),
                want,
                "{opcode} {key}: {threads} thread(s)"
            );
            assert_eq!(one("x", "", threads), want, "{opcode} {key}: in place, {threads} thread(s)");
        }
    }
}

/// Exponential with acc LoadAccumulate but no `reduce_init` operand: a `bad-field` fault before
/// anything is written (y keeps its bytes).
#[test]
fn load_accumulate_without_its_initial_values_faults_and_writes_nothing() {
    let body = format!(
        r#"{{"opcode":"Exponential","name":"e","engine":"DVE","ins":[{}],"outs":[{}],"acc":"LoadAccumulate"}}"#,
        ap("x", "float32", 0, &[(4, 2), (1, 4)]),
        ap("y", "float32", 0, &[(4, 2), (1, 4)]),
    );
    let tensors = [
        sb("x", "float32", 2, 4, f32s(&[1.0; 8])),
        sb("p", "float32", 2, 1, Vec::new()),
        sb("y", "float32", 2, 4, f32s(&[7.0; 8])),
    ];
    let (fault, mem) = run_keep(&tensors, &body, Options::default(), None);
    assert_eq!(fault.map(|f| f.kind), Some(FaultKind::BadField));
    assert_eq!(to_f32(&mem[2]), [7.0; 8]);
}

/// Overlapping but different operands in one location (the output one element past the input)
/// do not take the direct path: every input is read before anything is written, so the result
/// is the non-overlapping run's, shifted by one (1 × 1999 Gelu, 2 threads).
#[test]
fn overlapping_operands_read_the_whole_input_first() {
    let n = 2000usize;
    let x: Vec<f32> = (0..n).map(|k| (k as f32 * 0.37).sin() * 5.0).collect();
    let inst = |dst: &str, off: i64| {
        format!(
            r#"{{"opcode":"Activation","name":"a","engine":"Activation","ins":[{}],"outs":[{}],"func":"Gelu"}}"#,
            ap("x", "float32", 0, &[(n as i64, 1), (1, n as i64 - 1)]),
            ap(dst, "float32", off, &[(n as i64, 1), (1, n as i64 - 1)]),
        )
    };
    let o = Options { parallelism: simulator::Parallelism { threads: 2, grain: 3 }, ..Default::default() };
    let tensors = || [sb("x", "float32", 1, n, f32s(&x)), sb("y", "float32", 1, n, Vec::new())];
    let (f, apart) = run_keep(&tensors(), &inst("y", 0), o, None);
    assert!(f.is_none(), "{f:?}");
    let (f, shifted) = run_keep(&tensors(), &inst("x", 1), o, None);
    assert!(f.is_none(), "{f:?}");
    assert_eq!(bits(&shifted[0][4..]), bits(&apart[1][..(n - 1) * 4]));
    assert_eq!(bits(&shifted[0][..4]), bits(&f32s(&x[..1])), "element 0 is not written");
}
