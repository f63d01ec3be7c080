//! `birsim diff`, `run --trace-data` and `run --expect` as a user runs them: outputs compared
//! with hand-written snapshots (tests/snapshots/, each line worked out from the programs below),
//! exit codes, and bad input (traces of different programs, malformed JSONL, an expected array
//! of the wrong shape or dtype) refused with exit 2 naming the file/line or tensor, writing
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{ap, birsim, f32s, s, scale_shift_double, scratch};

use std::path::{Path, PathBuf};

fn snapshot(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Writes a program over four 8-element fp32 DRAM tensors `a` (input), `t`, `u`, `out`
/// (output) running `body`.
fn program(d: &Path, file: &str, body: &str) -> PathBuf {
    let t = |name: &str, kind: &str| {
        format!(
            r#"{{"name":"{name}","kind":"{kind}","dtype":"float32","tensor_shape":[8],"memorylocations":[{{"name":"{name}","type":"DRAM","dims":[1,32]}}]}}"#
        )
    };
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{},{},{},{}],"blocks":[{{"name":"b","instructions":[{body}]}}]}}]}}"#,
        t("a", "ExternalInput"),
        t("t", "Internal"),
        t("u", "Internal"),
        t("out", "ExternalOutput")
    );
    let p = d.join(file);
    std::fs::write(&p, text).unwrap();
    p
}

/// An fp32 `.npy` of shape `shape`.
fn npy(d: &Path, file: &str, shape: &[u64], v: &[f32]) -> PathBuf {
    let mut bytes = simulator::npy::header_bytes("<f4", shape);
    bytes.extend(f32s(v));
    let p = d.join(file);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Runs `prog` on a = 1..=8 with `extra` arguments.
fn run(d: &Path, prog: &Path, extra: &[&str]) -> (i32, String, String) {
    let a = npy(d, "a.npy", &[8], &[1., 2., 3., 4., 5., 6., 7., 8.]);
    let input = format!("a={}", s(&a));
    let mut args = vec!["run", prog.to_str().unwrap(), "--input", &input];
    args.extend_from_slice(extra);
    birsim(&args)
}

fn traced(d: &Path, prog: &Path, trace: &str, data: bool) -> PathBuf {
    let t = d.join(trace);
    let mut extra = vec!["--trace", t.to_str().unwrap()];
    if data {
        extra.push("--trace-data");
    }
    let (code, _, err) = run(d, prog, &extra);
    assert_eq!(code, 0, "{err}");
    t
}

#[test]
fn diff_names_the_injected_instruction() {
    let d = scratch();
    let pa = program(&d, "a.json", &scale_shift_double("shift", 0.5));
    let pb = program(&d, "b.json", &scale_shift_double("shift", 0.25));
    let (ta, tb) = (traced(&d, &pa, "a.jsonl", true), traced(&d, &pb, "b.jsonl", true));
    let (code, out, err) = birsim(&["diff", &s(&ta), &s(&tb)]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, snapshot("diff_one_constant.txt"));
    assert_eq!(err, "birsim: the traces diverge\n");

    // --json: the same facts as one object.
    let (code, out, _) = birsim(&["diff", &s(&ta), &s(&tb), "--json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["first"]["instruction"]["name"], "shift");
    assert_eq!(v["first"]["regions"][0]["first_element"]["a"]["hex"], "0x3fc00000");
    assert_eq!(v["later_divergent"], 1);

    // Without --trace-data: checksums only.
    let (ta, tb) = (traced(&d, &pa, "a2.jsonl", false), traced(&d, &pb, "b2.jsonl", false));
    let (code, out, _) = birsim(&["diff", &s(&ta), &s(&tb)]);
    assert_eq!(code, 1);
    assert!(
        out.contains("first divergence: #1 'shift' (TensorScalar)") && out.contains("--trace-data"),
        "{out}"
    );

    // A trace against itself agrees: exit 0.
    let (code, out, _) = birsim(&["diff", &s(&ta), &s(&ta)]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "trace A: 3 instruction(s), trace B: 3 instruction(s)\nno divergence: every compared instruction wrote the same bytes\n"
    );
}

#[test]
fn diff_refuses_different_programs_and_malformed_lines() {
    let d = scratch();
    let pa = program(&d, "a.json", &scale_shift_double("shift", 0.5));
    let pb = program(&d, "b.json", &scale_shift_double("nudge", 0.5));
    let (ta, tb) = (traced(&d, &pa, "a.jsonl", false), traced(&d, &pb, "b.jsonl", false));
    let (code, out, err) = birsim(&["diff", &s(&ta), &s(&tb)]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("the traces are of different programs: at position 1 trace A ran #1 'shift' (TensorScalar) and trace B ran #1 'nudge' (TensorScalar)"),
        "{err}"
    );

    // A malformed second line: named by file, line and field.
    let text = std::fs::read_to_string(&ta).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[1] = lines[1].replace("\"dtype\":\"float32\"", "\"dtype\":7");
    let bad = d.join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let (code, out, err) = birsim(&["diff", &s(&ta), &s(&bad)]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err, format!("birsim: {}:2: field `regions[0].dtype`: expected a string\n", s(&bad)));
    std::fs::write(&bad, "not json\n").unwrap();
    let (code, _, err) = birsim(&["diff", &s(&bad), &s(&ta)]);
    assert_eq!(code, 2);
    assert!(err.starts_with(&format!("birsim: {}:1: not JSON", s(&bad))), "{err}");
    let (code, _, err) = birsim(&["diff", &s(&ta), &s(&d.join("missing.jsonl"))]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
}

/// On the example (Load, TensorScalar, Save: each writes its whole output AP once, in AP order)
/// two independent hashes agree: the write-order checksum the kernels fold as they write and the
/// region checksum read back after each instruction. The trace is unchanged without data, apart
/// from the `data` field.
#[test]
fn region_checksums_agree_with_write_checksums() {
    let d = scratch();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sub_one");
    let input = format!("a={}", s(&ex.join("a.npy")));
    let prog = s(&ex.join("program.json"));
    let (t1, t2) = (d.join("t1.jsonl"), d.join("t2.jsonl"));
    for (t, data) in [(&t1, false), (&t2, true)] {
        let mut args = vec!["run", &prog, "--input", &input, "--trace", t.to_str().unwrap()];
        if data {
            args.push("--trace-data");
        }
        let (code, _, err) = birsim(&args);
        assert_eq!(code, 0, "{err}");
    }
    let read = |p: &Path| simulator::trace::parse_trace("t", &std::fs::read_to_string(p).unwrap()).unwrap();
    let (plain, data) = (read(&t1), read(&t2));
    assert_eq!(plain.len(), 3);
    for (p, q) in plain.iter().zip(&data) {
        assert_eq!(p.regions.len(), 1, "{}", p.name);
        assert_eq!(p.checksums, vec![p.regions[0].checksum], "{}", p.name);
        assert_eq!(p.regions[0].data, None);
        let mut q = q.clone();
        assert_eq!(q.regions[0].data.take().map(|d| d.len()), Some(128 * 512 * 4));
        q.elapsed_ns = p.elapsed_ns;
        assert_eq!(&q, p);
    }
    assert_eq!(
        (plain[1].regions[0].location.as_str(), plain[1].regions[0].ap.clone()),
        ("b_tile", vec![[512, 128], [1, 512]])
    );
}

fn memset(name: &str, bits: u32, offset: i64, pairs: &[(i64, i64)]) -> String {
    format!(
        r#"{{"opcode":"Memset","name":"{name}","mode":"Const","constant":{bits},"ins":[],"outs":[{}]}}"#,
        ap("out", "float32", offset, pairs)
    )
}

/// w1 writes 1.0 to out[0..6], w2 writes 2.0 to out[2..5], w3 writes 2.0 to out[4] and out[6];
/// out[7] is never written and holds the uninitialised marker 0xFF (a NaN). Worked by hand:
/// out = [1, 1, 2, 2, 2, 1, 2, NaN], last writers w1 w1 w2 w2 w3 w1 w3 none (out[4] already held
/// w2's 2.0 when w3 wrote it again).
fn overlapping(d: &Path) -> PathBuf {
    let body = [
        memset("w1", 0x3f80_0000, 0, &[(1, 6)]),
        memset("w2", 0x4000_0000, 2, &[(1, 3)]),
        memset("w3", 0x4000_0000, 4, &[(2, 2)]),
    ]
    .join(",");
    program(d, "overlap.json", &body)
}

#[test]
fn expect_names_the_last_writer_of_each_mismatch() {
    let d = scratch();
    let prog = overlapping(&d);
    let nines = npy(&d, "nines.npy", &[8], &[9.; 8]);
    let out = d.join("out.npy");
    let (code, stdout, err) = run(
        &d,
        &prog,
        &[
            "--expect",
            &format!("out={}", s(&nines)),
            "--output",
            &format!("out={}", s(&out)),
            "--allow-uninit-inputs",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(stdout, snapshot("expect_overlapping_writers.txt"));
    assert!(err.contains("--expect: out differ(s) from the expected array"), "{err}");
    // The run itself succeeded: the output is written.
    assert_eq!(std::fs::read(&out).unwrap().len(), 128 + 32);

    // The right values match; --ulp 1 accepts 0x3f800001 for 1.0 but not 0x3f800002.
    let want = [1., 1., 2., 2., 2., 1., 2., f32::from_bits(0xffff_ffff)];
    let exact = npy(&d, "exact.npy", &[8], &want);
    let (code, stdout, err) = run(&d, &prog, &["--expect", &format!("out={}", s(&exact))]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(stdout, "out: matches (exact, 8 element(s))\n");
    let mut near = want;
    near[0] = f32::from_bits(0x3f80_0001);
    let near1 = npy(&d, "near1.npy", &[8], &near);
    near[0] = f32::from_bits(0x3f80_0002);
    let near2 = npy(&d, "near2.npy", &[8], &near);
    let (code, stdout, _) = run(&d, &prog, &["--expect", &format!("out={}", s(&near1)), "--ulp", "1"]);
    assert_eq!((code, stdout.as_str()), (0, "out: matches (within 1 ULP, 8 element(s))\n"));
    let (code, stdout, _) = run(&d, &prog, &["--expect", &format!("out={}", s(&near2)), "--ulp", "1"]);
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "out: 1 of 8 element(s) differ (within 1 ULP)\n  [0]: got 0x3f800000 (1.0), expected 0x3f800002 (1.0000002), 2 ULP apart; last written by #0 'w1' (Memset)\n"
    );
}

#[test]
fn expect_bad_input_is_exit_2_naming_the_tensor_and_writes_nothing() {
    let d = scratch();
    let prog = overlapping(&d);
    let out = d.join("out.npy");
    let output = format!("out={}", s(&out));
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--expect".into(), format!("out={}", s(&npy(&d, "wide.npy", &[2, 4], &[0.; 8])))],
            "--expect out: the array has shape [2, 4], but 'out' has tensor_shape [8]".into(),
        ),
        (
            vec!["--expect".into(), format!("nope={}", s(&npy(&d, "n.npy", &[8], &[0.; 8])))],
            "--expect nope: no allocation or memory location is named 'nope'".into(),
        ),
        (
            vec!["--expect".into(), format!("out={}", s(&d.join("missing.npy")))],
            "--expect out: cannot read".into(),
        ),
        (
            vec!["--trace-data".into()],
            "the following required arguments were not provided:\n  --trace <FILE.jsonl>".into(),
        ),
        (
            vec!["--ulp".into(), "1".into()],
            "the following required arguments were not provided:\n  --expect <NAME=FILE.npy>".into(),
        ),
        (
            vec![
                "--expect".into(),
                format!("out={}", s(&npy(&d, "m.npy", &[8], &[0.; 8]))),
                "--ulp".into(),
                "-1".into(),
            ],
            "invalid value '-1' for '--ulp <N>': expected a number of ULP (0 or more)".into(),
        ),
    ];
    for (extra, message) in cases {
        let mut args: Vec<&str> = extra.iter().map(String::as_str).collect();
        args.extend(["--output", &output]);
        let (code, stdout, err) = run(&d, &prog, &args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains(&message), "{extra:?}: {err}");
        assert_eq!(stdout, "");
        assert!(!out.exists(), "{extra:?} wrote the output");
    }
    // An int32 array for a float32 output.
    let mut bytes = simulator::npy::header_bytes("<i4", &[8]);
    bytes.extend([0u8; 32]);
    let ints = d.join("ints.npy");
    std::fs::write(&ints, bytes).unwrap();
    let (code, _, err) = run(&d, &prog, &["--expect", &format!("out={}", s(&ints)), "--output", &output]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--expect out: the array has dtype <i4, but 'out' is float32 and needs <f4"),
        "{err}"
    );
    assert!(!out.exists());
}
