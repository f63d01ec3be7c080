//! Registers and branches through the simulator's library API (issue #30 item 6; docs/trace.md
//! "registers", "branch"; docs/fidelity.md B6, B9): the trace records each register write and
//! branch decision, and `diff_traces` reports the first divergent register value or branch,
//! then stops where the two runs' paths part. Expected values are worked by hand from the
//! program below.
#![expect(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod common;
use bir_ir::{ValidateOptions, json, validate};
use common::*;
use numerics::Profile;
use simulator::diff::diff_traces;
use simulator::trace::{RegisterRecord, TraceRecord};
use simulator::{BranchTrace, Outcome, Simulator};

/// `x[0]` into register `n`; `n > 5` branches to block `big` (writes 2 to `y`), else block
/// `small` runs (writes 1), then `done` ends the run.
fn program() -> String {
    let reg = r#"{"kind":"register_access","dtype":"int32","regref":"n"}"#;
    let one = ap("x", "int32", 0, &[(4, 1), (1, 1)]);
    let out = ap("y", "int32", 0, &[(4, 1), (1, 1)]);
    let mov = |name: &str, v: i32| {
        format!(
            r#"{{"opcode":"RegisterMove","name":"{name}","engine":"Pool","ins":[{{"kind":"imm_value","dtype":"int32","value":{v}}}],"outs":[{reg}]}},
               {{"opcode":"TensorSave","name":"{name}_st","engine":"Pool","ins":[{reg}],"outs":[{out}]}}"#
        )
    };
    let body = format!(
        r#"{{"name":"top","instructions":[
             {{"opcode":"TensorLoad","name":"ld","engine":"Pool","ins":[{one}],"outs":[{reg}]}},
             {{"opcode":"CompareAndBranch","name":"br","engine":"Pool","comp_op":"IS_GTIMM","on_true":"big","ins":[{reg},{{"kind":"imm_value","dtype":"int32","value":5}}],"outs":[]}}]}},
           {{"name":"small","instructions":[{},{{"opcode":"UnconditionalBranch","name":"j","engine":"Pool","target":"done","ins":[],"outs":[]}}]}},
           {{"name":"big","instructions":[{}]}},
           {{"name":"done","instructions":[{{"opcode":"Return","name":"ret","engine":"Pool","ins":[],"outs":[]}}]}}"#,
        mov("one", 1),
        mov("two", 2),
    );
    program_text("gen3", &[sb("x", "int32", 1, 4, Vec::new()), sb("y", "int32", 1, 4, Vec::new())], &body)
}

/// The trace of a run with `x[0] = v`, and `y[0]` after it.
fn traced(v: i32) -> (Vec<TraceRecord>, i32) {
    let text = program();
    let prog = json::load_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let valid = validate(&prog, &ValidateOptions::default()).unwrap();
    let f = &prog.functions[0];
    let mut sim = Simulator::new(valid, Profile::refsim());
    sim.enable_trace();
    let x = simulator::io::resolve(f, "x").unwrap();
    sim.memory_mut().load(&f.locations[x.loc.index()], x.loc, &i32s(&[v, 0, 0, 0])).unwrap();
    assert_eq!(sim.run().unwrap(), Outcome::Finished);
    let y = simulator::io::resolve(f, "y").unwrap();
    let out = to_i32(&simulator::io::read(&mut sim, &y).unwrap().data)[0];
    (sim.trace().iter().map(TraceRecord::from).collect(), out)
}

#[test]
fn the_trace_records_register_writes_and_branch_decisions() {
    let (t, y) = traced(9);
    assert_eq!(y, 2);
    let names: Vec<&str> = t.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["ld", "br", "two", "two_st", "ret"]);
    let pool = |name: &str, value: u32| RegisterRecord { engine: "Pool".into(), name: name.into(), value };
    assert_eq!(t[0].registers, [pool("n", 9)]);
    assert_eq!(t[1].branch, Some(BranchTrace { taken: true, target: Some("big".into()) }));
    assert_eq!(t[2].registers, [pool("n", 2)]);
    assert!(t[3].registers.is_empty() && t[3].branch.is_none());

    let (t, y) = traced(-4);
    assert_eq!(y, 1);
    assert_eq!(t[0].registers, [pool("n", 0xFFFF_FFFC)]);
    assert_eq!(t[1].branch, Some(BranchTrace { taken: false, target: None }));
    assert_eq!(t[4].branch, Some(BranchTrace { taken: true, target: Some("done".into()) }));
}

#[test]
fn diff_reports_the_first_divergent_register_then_stops_where_the_paths_part() {
    let (a, _) = traced(9);
    let (b, _) = traced(7);
    // Same path, different register value: the TensorLoad diverges, then nothing else.
    let r = diff_traces(&a, &b).unwrap();
    let first = r.first.as_ref().unwrap();
    assert_eq!(first.at.name, "ld");
    assert!(first.branch.is_none());
    assert_eq!(r.later, 0);
    assert!(r.parted.is_none());
    // Different paths: the register first, then the branch; the runs part at the block after.
    let (c, _) = traced(3);
    let r = diff_traces(&a, &c).unwrap();
    assert_eq!(r.first.as_ref().unwrap().at.name, "ld");
    assert_eq!(r.later, 1);
    assert_eq!(r.next.as_ref().unwrap().name, "br");
    let [pa, pc] = r.parted.as_ref().unwrap();
    assert_eq!((pa.name.as_str(), pc.name.as_str()), ("two", "one"));
    let text = r.to_string();
    assert!(text.contains("registers written: A Pool 'n' = 0x00000009, B Pool 'n' = 0x00000003"), "{text}");
    assert!(
        text.contains(
            "the runs part there after: trace A runs #2 'two' (RegisterMove), trace B runs #2 'one'"
        ),
        "{text}"
    );
}

/// The checkers (docs/fidelity.md B10, B11) on a 4 × 8 fp32 tile `a` of which a Memset writes
/// only columns 0..4: a TensorCopy of the whole tile reads element 4 (row 0, column 4) first
/// unwritten; with `can_read_uninit` it is not reported.
fn partial(
    can_read_uninit: bool,
    options: &[(&str, &str)],
) -> (Option<Box<simulator::Fault>>, Vec<String>, Vec<u8>) {
    let body = format!(
        r#"{{"opcode":"Memset","name":"half","engine":"Pool","mode":"Const","constant":0,"ins":[],"outs":[{}]}},
           {{"opcode":"TensorCopy","name":"cp","engine":"DVE","can_read_uninit":{can_read_uninit},"ins":[{}],"outs":[{}]}}"#,
        ap("a", "float32", 0, &[(8, 4), (1, 4)]),
        ap("a", "float32", 0, &[(8, 4), (1, 8)]),
        ap("b", "float32", 0, &[(8, 4), (1, 8)]),
    );
    let tensors = [
        T { load: false, ..sb("a", "float32", 4, 8, Vec::new()) },
        T { load: false, ..sb("b", "float32", 4, 8, Vec::new()) },
    ];
    let text = program_text("gen3", &tensors, &body);
    let prog = json::load_str(&text).unwrap();
    let valid = validate(&prog, &ValidateOptions::default()).unwrap();
    let mut sim = Simulator::new(valid, Profile::refsim());
    let mut o = simulator::Options::default();
    for (k, v) in options {
        o.set(k, v).unwrap();
    }
    sim.set_options(o);
    let fault = match sim.run().unwrap() {
        Outcome::Faulted(f) => Some(Box::new(f)),
        Outcome::Finished => None,
    };
    let f = &prog.functions[0];
    let b = simulator::io::resolve(f, "b").unwrap();
    let out = simulator::io::read(&mut sim, &b).unwrap().data;
    (fault, sim.warnings(), out)
}

#[test]
fn a_read_of_memory_nothing_wrote_is_a_warning_or_a_fault() {
    let (fault, warnings, out) = partial(false, &[]);
    assert!(fault.is_none());
    assert_eq!(
        warnings,
        [
            "'cp': ins[0] reads element 4 (AP order) of 'a', which nothing wrote (it holds the 0xFF uninitialised marker)"
        ]
    );
    assert_eq!(&out[..16], &[0; 16], "the copy ran");

    let (fault, _, out) = partial(false, &[("uninit_reads", "fault")]);
    let fault = fault.unwrap();
    assert_eq!(fault.kind.name(), "uninitialized");
    assert_eq!(fault.instruction, "cp");
    assert!(
        fault.cause.to_string().starts_with("ins[0] reads element 4 (AP order) of 'a'"),
        "{}",
        fault.cause
    );
    assert!(out.iter().all(|b| *b == 0xFF), "nothing written");

    // can_read_uninit, or the checker off: nothing reported.
    assert!(partial(true, &[("uninit_reads", "fault")]).1.is_empty());
    assert!(partial(false, &[("uninit_reads", "off")]).1.is_empty());
}

#[test]
fn non_finite_outputs_are_reported_when_asked() {
    // The copy carries the 0xFF marker (a NaN in fp32) into b's element 4.
    let (_, warnings, _) = partial(true, &[("nan_outputs", "warn")]);
    assert!(warnings.is_empty(), "can_read_uninit instructions are not checked: {warnings:?}");
    let (_, warnings, _) = partial(false, &[("nan_outputs", "warn"), ("uninit_reads", "off")]);
    assert_eq!(warnings, ["'cp': outs[0] element 4 (AP order) of 'b' is NaN"]);
    let (fault, _, out) = partial(false, &[("nan_outputs", "fault"), ("uninit_reads", "off")]);
    let fault = fault.unwrap();
    assert_eq!((fault.kind.name(), fault.instruction.as_str()), ("numerics", "cp"));
    assert_eq!(&out[..16], &[0; 16], "the fault comes after the write");
}

/// A DMACopy whose `oob_is_err` is held in a register (docs/fidelity.md B12): row 7 of an 8-row
/// table through a 2-row AP leaves the table; register 0 tolerates it (row 7 copies, the rest of
/// the output keeps its −1s), register 1 makes it the out-of-bounds fault.
#[test]
fn a_dma_bounds_flag_held_in_a_register() {
    let run = |flag: i32| {
        let reg = |n: &str| format!(r#"{{"kind":"register_access","dtype":"int32","regref":"{n}"}}"#);
        let mov = |n: &str, v: i32| {
            format!(
                r#"{{"opcode":"RegisterMove","name":"mv_{n}","engine":"DMA","ins":[{{"kind":"imm_value","dtype":"int32","value":{v}}}],"outs":[{}]}}"#,
                reg(n)
            )
        };
        let src = ap("tab", "float32", 0, &[(4, 2), (1, 4)]).replace(
            r#""ap":"#,
            r#""indirect_dim":"W","indirect_dim_max_index":8,"scalar_offset":"i","ap":"#,
        );
        let body = format!(
            r#"{},{},{{"opcode":"DMACopy","name":"dma","engine":"DMA","mode":"Copy","oob_is_err":"flag","ins":[{src}],"outs":[{}]}}"#,
            mov("i", 7),
            mov("flag", flag),
            ap("o", "float32", 0, &[(8, 1), (1, 8)]),
        );
        let tab: Vec<f32> = (0..32).map(|k| k as f32).collect();
        run_keep(
            &[t("tab", "float32", 32, f32s(&tab)), sb("o", "float32", 1, 8, f32s(&[-1.0; 8]))],
            &body,
            simulator::Options::default(),
            None,
        )
    };
    let (fault, out) = run(0);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(to_f32(&out[1]), [28.0, 29.0, 30.0, 31.0, -1.0, -1.0, -1.0, -1.0]);
    let (fault, out) = run(1);
    assert_eq!(fault.unwrap().kind.name(), "out-of-bounds");
    assert_eq!(to_f32(&out[1]), [-1.0; 8]);
}

/// A `register_ap` (docs/fidelity.md B13) over a 4 × 8 fp32 tile holding 0..32: a 2 × 4 window
/// starting at element 10 (row 1, column 2), from `reg_ap_offset` = 10 or from `regref` = the SB
/// engine address 1 · 0x40000 + 2 · 4; a start of 28 leaves the tile.
#[test]
fn a_register_ap_starts_where_its_registers_say() {
    let run = |moves: &[(&str, i64)], offset_reg: bool| {
        let reg = |n: &str| format!(r#"{{"kind":"register_access","dtype":"int32","regref":"{n}"}}"#);
        let mut body: Vec<String> = moves
            .iter()
            .map(|(n, v)| {
                format!(
                    r#"{{"opcode":"RegisterMove","name":"mv_{n}","engine":"DVE","ins":[{{"kind":"imm_value","dtype":"uint32","value":{v}}}],"outs":[{}]}}"#,
                    reg(n)
                )
            })
            .collect();
        let extra = if offset_reg { r#","reg_ap_offset":"o""# } else { "" };
        body.push(format!(
            r#"{{"opcode":"TensorCopy","name":"cp","engine":"DVE","ins":[{{"kind":"register_ap","memsetref":"x","dtype":"float32","ap":[[8,2],[1,4]],"regref":"a"{extra}}}],"outs":[{}]}}"#,
            ap("y", "float32", 0, &[(4, 2), (1, 4)])
        ));
        let x: Vec<f32> = (0..32).map(|k| k as f32).collect();
        run_keep(
            &[sb("x", "float32", 4, 8, f32s(&x)), sb("y", "float32", 2, 4, f32s(&[-1.0; 8]))],
            &body.join(","),
            simulator::Options::default(),
            None,
        )
    };
    let want = [10.0, 11.0, 12.0, 13.0, 18.0, 19.0, 20.0, 21.0];
    let (fault, out) = run(&[("a", 0), ("o", 10)], true);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(to_f32(&out[1]), want);
    let (fault, out) = run(&[("a", 0x40000 + 8)], false);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(to_f32(&out[1]), want);
    let (fault, out) = run(&[("a", 0), ("o", 28)], true);
    let fault = fault.unwrap();
    assert_eq!(fault.kind.name(), "out-of-bounds");
    assert!(fault.cause.to_string().contains("register_ap"), "{}", fault.cause);
    assert_eq!(to_f32(&out[1]), [-1.0; 8]);
}
