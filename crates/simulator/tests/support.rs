//! `simulator::support` (issue #15 item 3): the executor's not-implemented decisions are made
//! only by `support::classify`; the executor's faults agree with `check` on hand-written
//! programs of every status; every form of the corpus is a matrix entry; the matrix's `runs`
//! entries the corpus leaves unexercised are exactly the committed list; and `check` / `ops`
//! outputs on small fixed programs equal committed snapshots (tests/snapshots/, read by hand).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use bir_ir::{ValidateOptions, json, validate};
use numerics::Profile;
use rstest::rstest;
use simulator::support::{self, Status};
use simulator::{FaultKind, Outcome, Simulator};
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The executor's not-implemented faults come from `Verdict::fault` only (exec/kit/facts.rs):
/// no other library source constructs either not-implemented cause, and a not-implemented
/// verdict is made only inside a classifier (a function named `classify…`, which the kernel
/// table lists, or the facts module's shared `plain` rule). Together with exec/mod.rs stopping on
/// every `not_implemented` verdict (`agreement` below), the executor returns not-implemented
/// exactly when the classifier says.
#[test]
fn not_implemented_is_decided_only_by_the_classifier() {
    let mut files = Vec::new();
    rust_files(&crate_dir().join("src"), &mut files);
    let mut found = Vec::new();
    let mut causes = 0;
    for p in &files {
        let name = p.strip_prefix(crate_dir()).unwrap().to_string_lossy().into_owned();
        if name.contains("/bin/") || name.ends_with("fault.rs") {
            continue;
        }
        let facts = name.ends_with("exec/kit/facts.rs");
        let text = std::fs::read_to_string(p).unwrap();
        let mut current = "";
        for (k, line) in text.lines().enumerate() {
            if let Some(at) = line.find("fn ") {
                let rest = &line[at + 3..];
                current =
                    &rest[..rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len())];
            }
            if line.contains("FaultCause::NotImplemented {")
                || line.contains("FaultCause::OpcodeNotImplemented(")
            {
                causes += 1;
                if facts && current == "fault" {
                    continue;
                }
            } else if !(line.contains("not_implemented(") || line.contains("no_kernel(")) {
                continue;
            }
            let in_classifier = current.starts_with("classify")
                || (facts && matches!(current, "not_implemented" | "no_kernel" | "plain"));
            if !in_classifier {
                found.push(format!("{name}:{}: {} (in fn {current})", k + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "not-implemented decided outside a classifier:\n{}", found.join("\n"));
    assert_eq!(causes, 2, "each not-implemented cause is constructed once, in Verdict::fault");
}

/// An SB tensor: name, dtype, partitions, elements per partition.
type Tensor<'a> = (&'a str, &'a str, usize, usize);

fn size_of(dtype: &str) -> usize {
    match dtype {
        "uint8" | "int8" => 1,
        "bfloat16" | "float16" | "int16" | "uint16" => 2,
        "int64" | "uint64" => 8,
        _ => 4,
    }
}

/// A one-function program over SB tensors with `body` (instructions, comma-separated).
fn program(tensors: &[Tensor<'_>], body: &str) -> String {
    let allocs: Vec<String> = tensors
        .iter()
        .map(|(name, dtype, parts, per)| {
            format!(
                r#"{{"name":"{name}","kind":"Internal","dtype":"{dtype}","tensor_shape":[{parts},{per}],"memorylocations":[{{"name":"{name}","type":"SB","dims":[{parts},{}]}}]}}"#,
                per * size_of(dtype)
            )
        })
        .collect();
    format!(r#"{{"functions":[{{"name":"f","allocations":[{}],"blocks":[{body}]}}]}}"#, allocs.join(","))
}

/// An AP over all of an SB tensor of `parts` × `per` elements.
fn ap(mem: &str, dtype: &str, parts: usize, per: usize) -> String {
    format!(
        r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dtype}","offset":0,"ap":[[{per},{parts}],[1,{per}]]}}"#
    )
}

/// Runs `text` (memory starts as the uninitialised marker: the kernels here read it freely).
/// `None` when validation refuses it, else the fault kind and message, if any.
fn run(text: &str) -> Option<Option<(FaultKind, String)>> {
    let prog = json::load_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let v = validate(&prog, &ValidateOptions::default()).ok()?;
    let mut sim = Simulator::new(v, Profile::refsim());
    Some(match sim.run().unwrap() {
        Outcome::Finished => None,
        Outcome::Faulted(f) => Some((f.kind, f.message())),
    })
}

fn tsp(name: &str, data: &str, s: &str, out: &str, fields: &str) -> String {
    format!(
        r#"{{"opcode":"TensorScalarPtr","name":"{name}","engine":"DVE","ins":[{data},{s},{{"kind":"imm_value","dtype":"float32","value":1.0}}],"outs":[{out}],{fields}}}"#
    )
}

/// A fixed program of tests/data/check/ (shared with the CLI test, tests/check_cli.rs): the
/// fully supported one (Memset, TensorScalar, TensorTensor, TensorScalarPtr), the one using
/// not-implemented combinations (a DMACopy in Dynamic mode, a Matmult, beside a
/// TensorTensor that runs), and the one bir-ir validation rejects (a StreamTranspose that
/// casts, a TensorTensor whose output leaves its location, beside one that is fine).
fn fixture(name: &str) -> String {
    std::fs::read_to_string(crate_dir().join("tests/data/check").join(format!("check_{name}.json"))).unwrap()
}

fn supported() -> String {
    fixture("supported")
}

fn not_implemented() -> String {
    fixture("not_implemented")
}

fn rejected() -> String {
    fixture("rejected")
}

fn snapshot(name: &str) -> String {
    std::fs::read_to_string(crate_dir().join("tests/snapshots").join(name)).unwrap()
}

#[rstest]
#[case::supported(supported(), "check_supported.txt", Status::Runs)]
#[case::not_implemented(not_implemented(), "check_not_implemented.txt", Status::NotImplemented)]
#[case::rejected(rejected(), "check_rejected.txt", Status::Rejected)]
fn check_snapshots(#[case] text: String, #[case] file: &str, #[case] verdict: Status) {
    let report = support::check(&json::load_str(&text).unwrap());
    assert_eq!(report.verdict, verdict);
    assert_eq!(report.to_string(), snapshot(file), "{file}");
    let j = report.to_json();
    assert_eq!(j["verdict"], verdict.name());
    assert_eq!(j["entries"].as_array().unwrap().len(), report.entries.len());
}

/// Hand-written single instructions (named `i`), one per form the agreement test checks.
fn agreement_cases() -> Vec<(&'static str, String)> {
    let (a, b, s) = (ap("a", "float32", 2, 4), ap("b", "float32", 2, 4), ap("s", "float32", 2, 1));
    let (h, p) = (ap("h", "bfloat16", 2, 4), ap("p", "float8_e4m3fn_x4", 2, 4));
    let (n, k) = (ap("n", "int32", 2, 4), ap("k", "int32", 2, 1));
    let (t, t2, ts) = (ap("t", "float32", 32, 32), ap("t2", "float32", 32, 32), ap("ts", "float32", 32, 1));
    let (tn, tk) = (ap("tn", "int32", 32, 32), ap("tk", "int32", 32, 1));
    let pred = |fields: &str| {
        format!(
            r#"{{"opcode":"CopyPredicated","name":"i","engine":"DVE","ins":[{a},{a}],"outs":[{b},{s}],{fields}}}"#
        )
    };
    let dma = |mode: &str| {
        format!(
            r#"{{"opcode":"DMACopy","name":"i","engine":"DMA","ins":[{a}],"outs":[{b}],"mode":"{mode}"}}"#
        )
    };
    vec![
        ("tsp_fp32", tsp("i", &a, &s, &b, r#""op0":"add","op1":"mult""#)),
        ("tsp_fp32_idle", tsp("i", &a, &s, &b, r#""op0":"add","op1":"mult","acc":"Idle""#)),
        ("tsp_int32_idle", tsp("i", &n, &k, &n, r#""op0":"bitwise_and","op1":"bypass","acc":"Idle""#)),
        (
            "tsp_addr_idle",
            tsp("i", &n, &k, &n, r#""op0":"add","op1":"bypass","is_tensor_scalar_addr":true,"acc":"Idle""#),
        ),
        ("tsp_transpose", tsp("i", &t, &ts, &t2, r#""op0":"add","op1":"mult","apply_transpose":true"#)),
        (
            "tsp_scalar_tensor_tensor",
            format!(
                r#"{{"opcode":"TensorScalarPtr","name":"i","engine":"DVE","ins":[{a},{s},{b}],"outs":[{b}],"op0":"add","op1":"mult","is_scalar_tensor_tensor":true}}"#
            ),
        ),
        ("tsp_accumulate", tsp("i", &a, &s, &b, r#""op0":"add","op1":"mult","acc":"Accumulate""#)),
        ("tsp_add_accumulate", tsp("i", &a, &s, &b, r#""op0":"add","op1":"mult","acc":"AddAccumulate""#)),
        ("tsp_scan", tsp("i", &a, &b, &b, r#""op0":"add","op1":"mult","is_tensor_tensor_scan":true"#)),
        (
            "tsp_scan_transpose",
            tsp(
                "i",
                &t,
                &t2,
                &t2,
                r#""op0":"add","op1":"mult","is_tensor_tensor_scan":true,"apply_transpose":true"#,
            ),
        ),
        ("tsp_zero_acc", tsp("i", &a, &s, &b, r#""op0":"add","op1":"mult","acc":"Zero""#)),
        (
            "tsp_scan_scalar_tensor_tensor",
            tsp(
                "i",
                &a,
                &b,
                &b,
                r#""op0":"add","op1":"mult","is_tensor_tensor_scan":true,"is_scalar_tensor_tensor":true"#,
            ),
        ),
        (
            "tsp_int32_transpose",
            tsp("i", &tn, &tk, &tn, r#""op0":"bitwise_and","op1":"bypass","apply_transpose":true"#),
        ),
        (
            "select_packed",
            format!(r#"{{"opcode":"Select","name":"i","engine":"DVE","ins":[{p},{p},{p}],"outs":[{p}]}}"#),
        ),
        (
            "matmult",
            format!(
                r#"{{"opcode":"Matmult","name":"i","engine":"PE","ins":[{a},{a}],"outs":[{a}],"start_tensor_calc":true,"stop_tensor_calc":true}}"#
            ),
        ),
        ("dma_dynamic_mode", dma("Dynamic")),
        ("dma_copy", dma("Copy")),
        ("copy_predicated_side_subtract", pred(r#""reduce_op":"subtract""#)),
        ("copy_predicated_side_load", pred(r#""reduce_op":"add","acc":"LoadAccumulate""#)),
        ("copy_predicated_side_add", pred(r#""reduce_op":"add","acc":"Accumulate""#)),
        (
            "stream_transpose_cast",
            format!(r#"{{"opcode":"StreamTranspose","name":"i","engine":"DVE","ins":[{a}],"outs":[{h}]}}"#),
        ),
    ]
}

/// The tensors of the agreement programs, each zeroed by a Memset first (so Select and
/// CopyPredicated read predicates of 0).
const AGREEMENT_TENSORS: [Tensor<'static>; 12] = [
    ("a", "float32", 2, 4),
    ("b", "float32", 2, 4),
    ("s", "float32", 2, 1),
    ("h", "bfloat16", 2, 4),
    ("p", "float8_e4m3fn_x4", 2, 4),
    ("n", "int32", 2, 4),
    ("k", "int32", 2, 1),
    ("t", "float32", 32, 32),
    ("t2", "float32", 32, 32),
    ("ts", "float32", 32, 1),
    ("tn", "int32", 32, 32),
    ("tk", "int32", 32, 1),
];

fn agreement_program(inst: &str) -> String {
    let zero: Vec<String> = AGREEMENT_TENSORS
        .iter()
        .map(|(n, d, p, e)| {
            format!(
                r#"{{"opcode":"Memset","name":"zero_{n}","engine":"Pool","ins":[],"outs":[{}],"mode":"Const","constant":0}}"#,
                ap(n, d, *p, *e)
            )
        })
        .collect();
    program(&AGREEMENT_TENSORS, &format!("{},{inst}", zero.join(",")))
}

/// The executor agrees with `check` on each hand-written form: `runs` finishes, a
/// `not_implemented` entry faults not-implemented with the entry's reason as the message, and
/// `rejected` is refused by validation or faults with a typed fault of another kind.
#[test]
fn agreement() {
    for (name, inst) in agreement_cases() {
        let text = agreement_program(&inst);
        let report = support::check(&json::load_str(&text).unwrap());
        let entry = report.entries.iter().find(|e| e.instructions.iter().any(|n| n == "i")).unwrap();
        match (entry.status, run(&text)) {
            (Status::Runs, Some(None)) => {}
            (Status::NotImplemented, Some(Some((FaultKind::NotImplemented, msg)))) => {
                let want = if entry.opcode == bir_ir::Opcode::Matmult {
                    "not implemented yet: Matmult".to_owned()
                } else {
                    format!("not implemented yet: {}", entry.reason)
                };
                assert_eq!(msg, want, "{name}");
            }
            (Status::Rejected, None) => {}
            (Status::Rejected, Some(Some((kind, _)))) if kind != FaultKind::NotImplemented => {}
            (status, got) => panic!("{name}: check says {status} ({}), the executor: {got:?}", entry.reason),
        }
    }
}

/// One instruction of every base and no-op opcode: the reference names and skips them, and so
/// does the executor (the run finishes).
fn skipped() -> String {
    let body: Vec<String> = <bir_ir::Opcode as bir_ir::BirEnum>::ALL
        .iter()
        .filter(|op| matches!(op.category(), bir_ir::OpCategory::Base | bir_ir::OpCategory::NoOp))
        .map(|op| format!(r#"{{"opcode":"{op}","name":"skip_{op}","engine":"Pool","ins":[],"outs":[]}}"#))
        .collect();
    program(&[("a", "float32", 2, 4)], &body.join(","))
}

#[test]
fn base_and_no_op_opcodes_are_skipped() {
    let text = skipped();
    assert_eq!(support::check(&json::load_str(&text).unwrap()).verdict, Status::Runs);
    assert_eq!(run(&text), Some(None));
}

/// Every `case.json` of the program corpus.
fn corpus() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().is_some_and(|n| n == "case.json") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&crate_dir().join("../../conformance/programs"), &mut out);
    out.sort();
    out
}

/// Every instruction form of the corpus and of this file's programs is exactly one matrix
/// entry (same opcode, same deciding facts, same status); the matrix's `runs` entries that
/// none exercises are the committed list tests/snapshots/ops_uncovered.txt.
#[test]
fn the_corpus_lands_on_matrix_entries() {
    let m = support::matrix();
    let mut used = vec![false; m.entries.len()];
    let mut texts: Vec<(String, String)> =
        corpus().iter().map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap())).collect();
    assert!(texts.len() > 100, "the corpus was not found");
    for (name, t) in
        [("supported", supported()), ("not_implemented", not_implemented()), ("skipped", skipped())]
    {
        texts.push((name.to_owned(), t));
    }
    for (name, inst) in agreement_cases() {
        texts.push((name.to_owned(), agreement_program(&inst)));
    }
    for (name, text) in &texts {
        let Ok(prog) = json::load_str(text) else { continue };
        for e in support::check(&prog).entries {
            let hit: Vec<usize> = m
                .entries
                .iter()
                .enumerate()
                .filter(|(_, me)| me.opcode == e.opcode && me.mode == e.mode && me.dtypes == e.dtype_facts)
                .map(|(k, _)| k)
                .collect();
            assert_eq!(
                hit.len(),
                1,
                "{name}: {} {:?} {:?} is not one matrix entry",
                e.opcode,
                e.mode,
                e.dtype_facts
            );
            let me = &m.entries[hit[0]];
            if e.status != Status::Rejected || me.status == Status::Rejected {
                // A validation diagnostic may reject a form the matrix runs; else they agree.
                assert_eq!(me.status, e.status, "{name}: {}", e.opcode);
            }
            used[hit[0]] = true;
        }
    }
    let uncovered: Vec<String> = m
        .entries
        .iter()
        .zip(&used)
        .filter(|(e, u)| e.status == Status::Runs && !**u)
        .map(|(e, _)| {
            let j = support::SupportMatrix { entries: vec![e.clone()] }.to_json();
            let e = &j["entries"][0];
            format!("{} mode={} dtypes={}", e["opcode"].as_str().unwrap(), e["mode"], e["dtypes"])
        })
        .collect();
    let want = snapshot("ops_uncovered.txt");
    assert_eq!(uncovered.join("\n") + "\n", want);
}

/// The matrix is well formed: each opcode has at least one entry, no two entries of one opcode
/// share their deciding facts, and every fact value is inside its domain.
#[test]
fn matrix_is_a_partition_per_opcode() {
    let m = support::matrix();
    for &op in <bir_ir::Opcode as bir_ir::BirEnum>::ALL {
        assert!(m.entries.iter().any(|e| e.opcode == op), "{op}");
    }
    for (k, a) in m.entries.iter().enumerate() {
        for (f, v) in a.mode.iter().chain(&a.dtypes) {
            assert!(*v < f.arity(), "{} {f:?}={v}", a.opcode);
        }
        for b in &m.entries[k + 1..] {
            assert!(!(a.opcode == b.opcode && a.mode == b.mode && a.dtypes == b.dtypes), "{}", a.opcode);
        }
    }
}

/// `ops --json`'s head (the counts and the first entries, pretty-printed) equals the snapshot.
#[test]
fn ops_json_head_snapshot() {
    let j = serde_json::to_string_pretty(&support::matrix().to_json()).unwrap();
    let head: Vec<&str> = j.lines().take(60).collect();
    assert_eq!(head.join("\n") + "\n", snapshot("ops_json_head.txt"));
}
