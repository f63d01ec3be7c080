//! `simulator::diff` on real runs: two traces of one program that differ in one injected
//! instruction name it, traces of different programs are refused, and write provenance names
//! the last writer when several instructions write the same bytes. Expected values are worked
//! by hand from the programs below (fp32 bit patterns written out).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{ap, f32s, scale_shift_double, ts};

use bir_ir::{ValidateOptions, json, validate};
use numerics::Profile;
use simulator::diff::{Tolerance, compare_expected, diff_traces};
use simulator::trace::{TraceRecord, parse_trace};
use simulator::{Outcome, Simulator, io};

/// A program over four 8-element fp32 DRAM tensors `a` (input), `t`, `u`, `out` (output).
fn program(body: &str) -> bir_ir::Program {
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
    json::load_str(&text).unwrap()
}

/// Runs `p` with a = 1..=8 and returns its trace as the JSONL file would hold it, read back.
fn trace(p: &bir_ir::Program, data: bool) -> Vec<TraceRecord> {
    let v = validate(p, &ValidateOptions::default()).unwrap();
    let f = &p.functions[0];
    let mut sim = Simulator::new(v, Profile::refsim());
    sim.enable_trace();
    if data {
        sim.enable_trace_data();
    }
    let a = io::resolve(f, "a").unwrap();
    sim.memory_mut()
        .load(&f.locations[a.loc.index()], a.loc, &f32s(&[1., 2., 3., 4., 5., 6., 7., 8.]))
        .unwrap();
    assert_eq!(sim.run().unwrap(), Outcome::Finished);
    let text: String =
        sim.trace().iter().map(|e| TraceRecord::from(e).to_json().to_string() + "\n").collect();
    parse_trace("t.jsonl", &text).unwrap()
}

#[test]
fn one_changed_constant_is_named() {
    let a = trace(&program(&scale_shift_double("shift", 0.5)), true);
    let b = trace(&program(&scale_shift_double("shift", 0.25)), true);
    let r = diff_traces(&a, &b).unwrap();
    let d = r.first.as_ref().expect("a divergence");
    assert_eq!((d.at.index, d.at.name.as_str(), d.at.opcode.as_str()), (1, "shift", "TensorScalar"));
    assert_eq!(d.regions.len(), 1);
    let g = &d.regions[0];
    assert_eq!((g.location.as_str(), g.shape), ("u", [1, 8]));
    let (n, e) = g.elements.as_ref().unwrap();
    // u[0] = 1 + 0.5 = 1.5 = 0x3fc00000 against 1 + 0.25 = 1.25 = 0x3fa00000; all 8 differ.
    assert_eq!(*n, 8);
    assert_eq!(e.coords, [0, 0]);
    assert_eq!(e.a.to_string(), "0x3fc00000 (1.5)");
    assert_eq!(e.b.to_string(), "0x3fa00000 (1.25)");
    // `double` reads u, so it diverges too.
    assert_eq!(r.later, 1);
    assert_eq!(r.next.as_ref().map(|n| n.name.as_str()), Some("double"));
    assert!(!r.same());

    // Without --trace-data only the checksums differ, and the report says how to see values.
    let (a, b) = (
        trace(&program(&scale_shift_double("shift", 0.5)), false),
        trace(&program(&scale_shift_double("shift", 0.25)), false),
    );
    let r = diff_traces(&a, &b).unwrap();
    assert_eq!(r.first.as_ref().map(|d| d.at.name.as_str()), Some("shift"));
    assert!(r.to_string().contains("run both with --trace-data"), "{r}");

    // A trace against itself: no divergence.
    let r = diff_traces(&a, &a).unwrap();
    assert!(r.same() && r.first.is_none(), "{r}");
}

#[test]
fn traces_of_different_programs_are_refused() {
    let a = trace(&program(&scale_shift_double("shift", 0.5)), false);
    let b = trace(&program(&scale_shift_double("shift2", 0.5)), false);
    let e = diff_traces(&a, &b).unwrap_err();
    assert_eq!(e.position, 1);
    assert_eq!(
        e.to_string(),
        "the traces are of different programs: at position 1 trace A ran #1 'shift' (TensorScalar) and trace B ran #1 'shift2' (TensorScalar)"
    );
}

/// Two compilers' outputs of one kernel: B's `shift` writes t in place and `double` reads t.
/// The values agree; only the place of `shift`'s output differs. And a trace cut short (a run
/// that faulted) is compared over the common part.
#[test]
fn another_place_and_a_shorter_trace() {
    let a = trace(&program(&scale_shift_double("shift", 0.5)), true);
    let b_body = [
        ts("scale", "a", "t", "mult", 1.0),
        ts("shift", "t", "t", "add", 0.5),
        ts("double", "t", "out", "mult", 2.0),
    ]
    .join(",");
    let b = trace(&program(&b_body), true);
    let r = diff_traces(&a, &b).unwrap();
    let text = r.to_string();
    assert_eq!(
        text,
        "trace A: 3 instruction(s), trace B: 3 instruction(s)\n\
         first divergence: #1 'shift' (TensorScalar)\n  \
         outs[0] 'u' float32 [1, 8]: a different region in trace B ('t' float32 @0 [8,1][1,8]); the same 8 element value(s)\n\
         later: no other instruction diverges"
    );
    let r = diff_traces(&a, &a[..2]).unwrap();
    assert!(r.first.is_none() && !r.same());
    assert_eq!(
        r.to_string(),
        "trace A: 3 instruction(s), trace B: 2 instruction(s)\n\
         trace B stops after 2 instruction(s); compared the first 2\n\
         no divergence: every compared instruction wrote the same bytes"
    );
}

fn memset(name: &str, dst: &str, bits: u32, offset: i64, pairs: &[(i64, i64)]) -> String {
    format!(
        r#"{{"opcode":"Memset","name":"{name}","mode":"Const","constant":{bits},"ins":[],"outs":[{}]}}"#,
        ap(dst, "float32", offset, pairs)
    )
}

/// Three Memsets over overlapping parts of `out` (8 elements, loaded as zeros):
/// w1 writes 1.0 to 0..6, w2 writes 2.0 to 2..5, w3 writes 2.0 to 4 and 6 (step 2).
/// By hand, the final values are [1, 1, 2, 2, 2, 1, 2, 0] and the last writers
/// w1 w1 w2 w2 w3 w1 w3 none — element 4 gets the same 2.0 from w3 that w2 wrote, and is
/// still w3's; element 5 lies between w3's elements and stays w1's.
#[test]
fn provenance_names_the_last_of_overlapping_writers() {
    let one = 0x3f80_0000;
    let two = 0x4000_0000;
    let body = [
        memset("w1", "out", one, 0, &[(1, 6)]),
        memset("w2", "out", two, 2, &[(1, 3)]),
        memset("w3", "out", two, 4, &[(2, 2)]),
    ]
    .join(",");
    let p = program(&body);
    let f = &p.functions[0];
    let out = io::resolve(f, "out").unwrap();
    let run = |watch: Option<&simulator::diff::ExpectReport>| {
        let v = validate(&p, &ValidateOptions::default()).unwrap();
        let mut sim = Simulator::new(v, Profile::refsim());
        sim.memory_mut().load(&f.locations[out.loc.index()], out.loc, &[0; 32]).unwrap();
        if let Some(r) = watch {
            let ranges = r.watch_ranges(&sim, &out);
            sim.watch(ranges);
        }
        assert_eq!(sim.run().unwrap(), Outcome::Finished);
        let got = io::read(&mut sim, &out).unwrap();
        (got, sim.writers().to_vec())
    };
    let (got, none) = run(None);
    assert!(none.is_empty());
    assert_eq!(got.data, f32s(&[1., 1., 2., 2., 2., 1., 2., 0.]));
    let mut expected = got.clone();
    expected.data = f32s(&[9.; 8]);
    let mut r =
        compare_expected("out", out.dtype, &got, &expected, Tolerance::Exact, &Profile::refsim()).unwrap();
    assert_eq!(r.mismatches, 8);
    let (_, writers) = run(Some(&r));
    let names: Vec<Option<&str>> = writers.iter().map(|w| w.as_ref().map(|w| w.name.as_str())).collect();
    assert_eq!(
        names,
        [Some("w1"), Some("w1"), Some("w2"), Some("w2"), Some("w3"), Some("w1"), Some("w3"), None]
    );
    assert_eq!(writers[4].as_ref().map(|w| (w.index, w.opcode)), Some((2, "Memset")));
    r.attach_writers(&writers);
    let text = r.to_string();
    assert!(
        text.contains(
            "[4]: got 0x40000000 (2.0), expected 0x41100000 (9.0); last written by #2 'w3' (Memset)"
        ),
        "{text}"
    );
    assert!(
        text.contains("[7]: got 0x00000000 (0.0), expected 0x41100000 (9.0); written by no instruction"),
        "{text}"
    );
}

#[test]
fn expect_refuses_other_shapes_and_dtypes_naming_the_tensor() {
    let got = simulator::npy::Npy { descr: "<f4".into(), shape: vec![8], data: vec![0; 32] };
    let mut other = got.clone();
    other.shape = vec![2, 4];
    let e =
        compare_expected("out", bir_ir::Dtype::Float32, &got, &other, Tolerance::Exact, &Profile::refsim())
            .unwrap_err();
    assert_eq!(e.to_string(), "--expect out: the array has shape [2, 4], but 'out' has tensor_shape [8]");
    other = got.clone();
    other.descr = "<i4".into();
    let e =
        compare_expected("out", bir_ir::Dtype::Float32, &got, &other, Tolerance::Exact, &Profile::refsim())
            .unwrap_err();
    assert_eq!(e.to_string(), "--expect out: the array has dtype <i4, but 'out' is float32 and needs <f4");
}

/// --ulp on a whole array: bf16 1.0 (0x3f80) against 0x3f82 is 2 ULP apart, -0 against +0 is
/// 0 ULP apart but not bit-equal.
#[test]
fn ulp_tolerance_on_an_array() {
    let got = simulator::npy::Npy { descr: "<u2".into(), shape: vec![2], data: vec![0x80, 0x3f, 0x00, 0x80] };
    let mut want = got.clone();
    want.data = vec![0x82, 0x3f, 0x00, 0x00];
    let dt = bir_ir::Dtype::Bfloat16;
    let cmp = |t| compare_expected("o", dt, &got, &want, t, &Profile::refsim()).unwrap();
    assert_eq!(cmp(Tolerance::Exact).mismatches, 2);
    assert_eq!(cmp(Tolerance::Ulp(0)).mismatches, 1);
    assert_eq!(cmp(Tolerance::Ulp(1)).mismatches, 1);
    assert!(cmp(Tolerance::Ulp(2)).matches());
    assert_eq!(
        cmp(Tolerance::Ulp(1)).to_string(),
        "o: 1 of 2 element(s) differ (within 1 ULP)\n  [0]: got 0x3f80 (1.0), expected 0x3f82 (1.015625), 2 ULP apart"
    );
}

/// A scatter claims only the entries it wrote: `m` sets the 8-element table to 1.0, then
/// IndirectSave `s` writes the one values row [5, 6] to entry idx = 2 of 4 two-element entries,
/// i.e. table[4..6]. By hand: table = [1, 1, 1, 1, 5, 6, 1, 1], writers m m m m s s m m (the
/// scatter's table AP spans all eight, but its data picked only entry 2).
#[test]
fn a_scatter_claims_only_the_entries_it_wrote() {
    let alloc = |name: &str, dtype: &str, n: usize, size: usize| {
        format!(
            r#"{{"name":"{name}","kind":"Internal","dtype":"{dtype}","tensor_shape":[{n}],"memorylocations":[{{"name":"{name}","type":"DRAM","dims":[1,{}]}}]}}"#,
            n * size
        )
    };
    let body = [
        memset("m", "tab", 0x3f80_0000, 0, &[(1, 8)]),
        format!(
            r#"{{"opcode":"IndirectSave","name":"s","engine":"DMA","ins":[{},{}],"outs":[{}]}}"#,
            ap("vals", "float32", 0, &[(2, 1), (1, 2)]),
            ap("idx", "int32", 0, &[(1, 1), (1, 1)]),
            ap("tab", "float32", 0, &[(1, 1), (2, 4)])
        ),
    ]
    .join(",");
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{},{},{}],"blocks":[{{"name":"b","instructions":[{body}]}}]}}]}}"#,
        alloc("tab", "float32", 8, 4),
        alloc("vals", "float32", 2, 4),
        alloc("idx", "int32", 1, 4)
    );
    let p = json::load_str(&text).unwrap();
    let f = &p.functions[0];
    let tab = io::resolve(f, "tab").unwrap();
    let run = |watch: Option<&simulator::diff::ExpectReport>| {
        let v = validate(&p, &ValidateOptions::default()).unwrap();
        let mut sim = Simulator::new(v, Profile::refsim());
        for (name, bytes) in [("vals", f32s(&[5., 6.])), ("idx", 2i32.to_le_bytes().to_vec())] {
            let t = io::resolve(f, name).unwrap();
            sim.memory_mut().load(&f.locations[t.loc.index()], t.loc, &bytes).unwrap();
        }
        if let Some(r) = watch {
            let ranges = r.watch_ranges(&sim, &tab);
            sim.watch(ranges);
        }
        assert_eq!(sim.run().unwrap(), Outcome::Finished);
        (io::read(&mut sim, &tab).unwrap(), sim.writers().to_vec())
    };
    let (got, _) = run(None);
    assert_eq!(got.data, f32s(&[1., 1., 1., 1., 5., 6., 1., 1.]));
    let mut expected = got.clone();
    expected.data = f32s(&[9.; 8]);
    let r =
        compare_expected("tab", tab.dtype, &got, &expected, Tolerance::Exact, &Profile::refsim()).unwrap();
    let (_, writers) = run(Some(&r));
    let names: Vec<Option<&str>> = writers.iter().map(|w| w.as_ref().map(|w| w.name.as_str())).collect();
    let (m, s) = (Some("m"), Some("s"));
    assert_eq!(names, [m, m, m, m, s, s, m, m]);
}

/// Provenance through an alias: `s` and `alias` are allocated SB locations at the same place
/// (arena rows 0-1, byte 64), 2 partitions × 4 fp32. w1 sets all of `s` to 1.0; w2 sets
/// partition 1, elements 1..3 of `alias` to 1.0 again — the bytes of s[1][1] and s[1][2]
/// (fidelity S1: overlapping placements alias), unchanged, so only its AP can name it. By hand:
/// s is all 1.0, writers of its elements in C order w1 w1 w1 w1 w1 w2 w2 w1.
#[test]
fn provenance_sees_writes_through_an_aliasing_location() {
    let loc = |name: &str| {
        format!(
            r#"{{"name":"{name}","kind":"Internal","dtype":"float32","tensor_shape":[2,4],"memorylocations":[{{"name":"{name}","type":"SB","dims":[2,16],"addr":64,"base":0,"allocated":true}}]}}"#
        )
    };
    let body = [
        memset("w1", "s", 0x3f80_0000, 0, &[(4, 2), (1, 4)]),
        memset("w2", "alias", 0x3f80_0000, 5, &[(4, 1), (1, 2)]),
    ]
    .join(",");
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{},{}],"blocks":[{{"name":"b","instructions":[{body}]}}]}}]}}"#,
        loc("s"),
        loc("alias")
    );
    let p = json::load_str(&text).unwrap();
    let f = &p.functions[0];
    let s = io::resolve(f, "s").unwrap();
    let run = |watch: Option<&simulator::diff::ExpectReport>| {
        let v = validate(&p, &ValidateOptions::default()).unwrap();
        let mut sim = Simulator::new(v, Profile::refsim());
        if let Some(r) = watch {
            let ranges = r.watch_ranges(&sim, &s);
            sim.watch(ranges);
        }
        assert_eq!(sim.run().unwrap(), Outcome::Finished);
        (io::read(&mut sim, &s).unwrap(), sim.writers().to_vec())
    };
    let (got, _) = run(None);
    assert_eq!(got.data, f32s(&[1.; 8]));
    let mut expected = got.clone();
    expected.data = f32s(&[9.; 8]);
    let r = compare_expected("s", s.dtype, &got, &expected, Tolerance::Exact, &Profile::refsim()).unwrap();
    assert_eq!(r.first[5].coords, [1, 1]);
    let (_, writers) = run(Some(&r));
    let names: Vec<Option<&str>> = writers.iter().map(|w| w.as_ref().map(|w| w.name.as_str())).collect();
    let (w1, w2) = (Some("w1"), Some("w2"));
    assert_eq!(names, [w1, w1, w1, w1, w1, w2, w2, w1]);
}
