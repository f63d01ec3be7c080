//! Loading, validating and round-tripping real-shaped dumps (the example of bir-json.md and a
//! dump exercising every modelled opcode).
#![expect(clippy::unwrap_used, clippy::panic, reason = "test code")]

use bir_ir::{AccessPattern, AluOp, ApPair, Dtype, MemoryType, Op, Opcode, ValidateOptions, json, validate};

fn load(path: &str) -> bir_ir::Program {
    let text = std::fs::read_to_string(path).unwrap();
    json::load_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn assert_round_trip(p: &bir_ir::Program) {
    let text = json::to_json_string(p);
    let q = json::load_str(&text).unwrap();
    if &q != p {
        // Narrow the difference down to the first differing instruction for the failure message.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        p.functions[0].for_each_instruction(&mut |i| a.push(format!("{i:?}")));
        q.functions[0].for_each_instruction(&mut |i| b.push(format!("{i:?}")));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "first differing instruction after a round trip");
        }
        panic!("programs differ after a round trip (not in instructions)");
    }
    assert_eq!(json::to_json_string(&q), text, "writing is not stable");
}

#[test]
fn the_bir_json_example_loads_validates_and_round_trips() {
    let p = load("tests/data/sub_one.json");
    validate(&p, &ValidateOptions::default()).unwrap();
    let f = &p.functions[0];
    assert_eq!(f.name, "sg0000");
    assert_eq!(f.allocations.len(), 4);
    let a = &f.locations[f.location_by_name("a").unwrap().index()];
    assert_eq!((a.mem_type, a.partitions, a.bytes_per_partition), (MemoryType::Input, 128, 2048));
    let mut ops = Vec::new();
    f.for_each_instruction(&mut |i| ops.push(i.opcode()));
    assert_eq!(ops, [Opcode::Load, Opcode::TensorScalar, Opcode::Save]);
    let mut ts = None;
    f.for_each_instruction(&mut |i| {
        if let Op::TensorScalar(t) = &i.op {
            ts = Some((*t, i.in_ap(0).cloned().unwrap()));
        }
    });
    let (t, ap) = ts.unwrap();
    assert_eq!((t.op0, t.const0.get(), t.op1), (AluOp::Subtract, 1.0, AluOp::Bypass));
    let want = AccessPattern {
        loc: f.location_by_name("a_tile").unwrap(),
        dtype: Dtype::Float32,
        offset: 0,
        pairs: [ApPair::new(512, 128), ApPair::new(1, 512)].into_iter().collect(),
        dynamic: None,
    };
    assert_eq!(ap, want);
    assert_round_trip(&p);
}

#[test]
fn every_conformance_program_round_trips() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/bir-ir/valid");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let p = load(path.to_str().unwrap());
            validate(&p, &ValidateOptions::default()).unwrap_or_else(|d| panic!("{}: {d}", path.display()));
            assert_round_trip(&p);
            n += 1;
        }
    }
    assert!(n >= 5, "found only {n} programs");
}

/// The indirect ops' `wrap` object (docs/fidelity.md I3): `hi` defaults to 0, the written form
/// spells both, a missing `n` is located at `wrap.n`.
#[test]
fn indirect_wrap_reads_writes_and_locates_errors() {
    let prog = |wrap: &str| {
        format!(
            r#"{{"functions":[{{"name":"f","allocations":[{{"name":"t","kind":"Internal","dtype":"float32","memorylocations":[{{"name":"t","type":"DRAM","dims":[1,64]}}]}},{{"name":"i","kind":"Internal","dtype":"int32","memorylocations":[{{"name":"i","type":"DRAM","dims":[1,8]}}]}}],"blocks":[{{"opcode":"IndirectLoad","name":"g","engine":"DMA","ins":[{{"kind":"physical_ap","memref":"t","dtype":"float32","ap":[[1,1],[2,4]]}},{{"kind":"physical_ap","memref":"i","dtype":"int32","ap":[[2,1],[1,2]]}}],"outs":[{{"kind":"physical_ap","memref":"t","dtype":"float32","offset":8,"ap":[[2,2],[1,2]]}}]{wrap}}}]}}]}}"#
        )
    };
    let p = json::load_str(&prog(r#","wrap":{"n":3}"#)).unwrap();
    validate(&p, &ValidateOptions::default()).unwrap();
    let Some(bir_ir::Node::Inst(i)) = p.functions[0].body.first() else { panic!("one instruction") };
    let Op::IndirectLoad(f) = &i.op else { panic!("{:?}", i.op) };
    assert_eq!(f.wrap, Some(bir_ir::ops::IndirectWrap { n: 3, hi: 0 }));
    let text: String = json::to_json_string(&p).chars().filter(|c| !c.is_whitespace()).collect();
    assert!(text.contains(r#""wrap":{"hi":0,"n":3}"#) || text.contains(r#""wrap":{"n":3,"hi":0}"#), "{text}");
    assert_round_trip(&p);
    let none = json::load_str(&prog("")).unwrap();
    assert!(!json::to_json_string(&none).contains("wrap"));
    let e = json::load_str(&prog(r#","wrap":{"hi":3}"#)).unwrap_err().to_string();
    assert!(e.contains("wrap.n") && e.contains("missing"), "{e}");
    let p = json::load_str(&prog(r#","wrap":{"n":0,"hi":3}"#)).unwrap();
    let e = validate(&p, &ValidateOptions::default()).unwrap_err().to_string();
    assert!(e.contains("wrap.n") && e.contains("at least 1"), "{e}");
}

/// SwitchQueueInstance / ResetQueueInstance are typed (fidelity G5): `queue` (absent = every
/// trigger) and `no_rearm` (default false) read, write back and round-trip; a wrong type is a
/// located error; `no_rearm` on a reset and operands are validation errors.
#[test]
fn queue_instance_fields_read_write_and_validate() {
    let prog = |op: &str, fields: &str| {
        format!(
            r#"{{"functions":[{{"name":"f","allocations":[],"blocks":[{{"opcode":"{op}","name":"q","engine":"SP","ins":[],"outs":[]{fields}}}]}}]}}"#
        )
    };
    let fields_of = |p: &bir_ir::Program| {
        let Some(bir_ir::Node::Inst(i)) = p.functions[0].body.first() else { panic!("one instruction") };
        match &i.op {
            Op::SwitchQueueInstance(f) | Op::ResetQueueInstance(f) => (**f).clone(),
            other => panic!("{other:?}"),
        }
    };
    let p = json::load_str(&prog("SwitchQueueInstance", r#","queue":"q1","no_rearm":true"#)).unwrap();
    validate(&p, &ValidateOptions::default()).unwrap();
    assert_eq!(fields_of(&p), bir_ir::ops::QueueInstanceFields { queue: Some("q1".into()), no_rearm: true });
    assert_round_trip(&p);
    let p = json::load_str(&prog("ResetQueueInstance", "")).unwrap();
    validate(&p, &ValidateOptions::default()).unwrap();
    assert_eq!(fields_of(&p), bir_ir::ops::QueueInstanceFields { queue: None, no_rearm: false });
    let text = json::to_json_string(&p);
    assert!(text.contains("no_rearm") && !text.contains("queue"), "{text}");
    assert_round_trip(&p);
    let e = json::load_str(&prog("SwitchQueueInstance", r#","no_rearm":"yes""#)).unwrap_err().to_string();
    assert!(e.contains("no_rearm") && e.contains("wrong-type"), "{e}");
    let p = json::load_str(&prog("ResetQueueInstance", r#","no_rearm":true"#)).unwrap();
    let e = validate(&p, &ValidateOptions::default()).unwrap_err().to_string();
    assert!(e.contains("no_rearm") && e.contains("bad-field"), "{e}");
}
