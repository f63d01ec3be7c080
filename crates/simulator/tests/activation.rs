//! Activation (issue #28; docs/fidelity.md E1–E5; engines.md §2.1): `dst = cast(f(x·scale +
//! bias))` with `ins = [data, scale?, bias?, alpha?]`, each parameter an immediate or one value
//! per partition; the affine step's two roundings; an operand over its JSON key; the output
//! cast; the faults. Every expected value is worked by hand in the comments.
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

#[test]
fn accumulators_and_activate2_are_not_implemented_by_name() {
    for (fields, what) in [(r#","acc":"ZeroAccumulate""#, "acc"), (r#","is_activate2":true"#, "activate2")] {
        let err = run(&act("Exp", &[], "float32", fields), [1.0; 8], [0.0; 2], "float32").unwrap_err();
        assert_eq!(err.0, FaultKind::NotImplemented, "{}", err.1);
        assert!(err.1.contains(what), "{}", err.1);
    }
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
