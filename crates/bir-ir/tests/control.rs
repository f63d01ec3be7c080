//! Registers, blocks and the loop nodes in the IR (issue #30; docs/bir-json.md "Registers and
//! control flow", docs/fidelity.md B1–B6): DoWhile and DynamicForLoop load, round-trip and keep
//! their bounds; branch targets, register operands and register files are checked by validation
//! with located errors.
#![expect(clippy::panic, reason = "test code")]

use bir_ir::{Affine, LoopKind, Node, ValidateOptions, json, validate};

/// A program whose function body is `body` (a JSON list's contents), over one int32 SB tile `t`.
fn program(body: &str) -> String {
    format!(
        r#"{{"functions":[{{"name":"f","allocations":[{{"name":"t_set","kind":"Internal","dtype":"int32","tensor_shape":[4,4],"memorylocations":[{{"name":"t","type":"SB","dims":[4,16]}}]}}],"blocks":[{body}]}}]}}"#
    )
}

fn reg(name: &str) -> String {
    format!(r#"{{"kind":"register_access","dtype":"int32","regref":"{name}"}}"#)
}

fn imm(v: i64) -> String {
    format!(r#"{{"kind":"imm_value","dtype":"int32","value":{v}}}"#)
}

fn mov(name: &str, v: i64) -> String {
    format!(
        r#"{{"opcode":"RegisterMove","name":"mv","engine":"Pool","ins":[{}],"outs":[{}]}}"#,
        imm(v),
        reg(name)
    )
}

/// The validation errors of `body`, as `kind @ location | message` lines.
fn errors(body: &str) -> Vec<String> {
    let p = json::load_str(&program(body)).unwrap_or_else(|e| panic!("{e}"));
    match validate(&p, &ValidateOptions::default()) {
        Ok(_) => Vec::new(),
        Err(d) => d.iter().map(|e| format!("{} @ {} | {}", e.kind, e.location(), e.message)).collect(),
    }
}

#[test]
fn loop_nodes_load_and_round_trip() {
    let body = format!(
        r#"{{"opcode":"Loop","name":"outer","LoopAxis":{{"name":"c","lb":0,"ub":2}},"blocks":[
            {{"opcode":"DoWhile","name":"dw","engine":"Pool","ins":[{}],"blocks":[{{"name":"b","instructions":[{}]}}]}},
            {{"opcode":"DynamicForLoop","name":"dfl","engine":"Pool","LoopAxis":{{"name":"j","lb":{{"const":1,"terms":[{{"var":"c","coef":2}}]}},"stride":3}},
              "ub_const":5,"ub_coef":-1,"ins":[{}],"outs":[{}],"blocks":[]}}]}}"#,
        reg("k"),
        mov("k", 0),
        reg("n"),
        reg("i"),
    );
    let p = json::load_str(&program(&body)).unwrap();
    validate(&p, &ValidateOptions::default()).unwrap();
    let Node::Loop(outer) = &p.functions[0].body[0] else { panic!("not a loop") };
    let kinds: Vec<&LoopKind> = outer
        .body
        .iter()
        .map(|n| match n {
            Node::Loop(l) => &l.kind,
            _ => panic!("not a loop"),
        })
        .collect();
    assert!(matches!(kinds[0], LoopKind::DoWhile { cond } if cond.name == "k"));
    let LoopKind::Dynamic(d) = kinds[1] else { panic!("not dynamic") };
    assert_eq!(d.lb, Affine { constant: 1, terms: vec![("c".into(), 2)] });
    assert_eq!(d.stride, Affine { constant: 3, terms: vec![] });
    assert_eq!((d.ub_const, d.ub_coef, d.ub_reg.name.as_str()), (5, -1, "n"));
    assert_eq!(d.induction.as_ref().map(|r| r.name.as_str()), Some("i"));
    let text = json::to_json_string(&p);
    let q = json::load_str(&text).unwrap();
    assert_eq!(q, p, "{text}");
}

#[test]
fn branch_targets_are_blocks_of_the_same_list() {
    let jump = |t: &str| {
        format!(
            r#"{{"opcode":"UnconditionalBranch","name":"j","engine":"Pool","target":"{t}","ins":[],"outs":[]}}"#
        )
    };
    // A target in the same list: fine.
    assert_eq!(
        errors(&format!(r#"{{"name":"a","instructions":[{}]}},{{"name":"b","instructions":[]}}"#, jump("b"))),
        Vec::<String>::new()
    );
    // An unknown name, a block inside a loop, and a name two blocks share.
    let inner = format!(
        r#"{{"name":"a","instructions":[{}]}},{{"opcode":"Loop","name":"l","LoopAxis":{{"name":"i","lb":0,"ub":1}},"blocks":[{{"name":"in","instructions":[]}}]}}"#,
        jump("in")
    );
    let e = errors(&inner);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("unresolved-ref @ function 'f' › block 'a' › instruction #0 'j' (UnconditionalBranch) › target | 'in' names no block"), "{e:?}");
    let twice = format!(r#"{{"name":"a","instructions":[{}]}},{{"name":"a","instructions":[]}}"#, jump("a"));
    assert!(errors(&twice)[0].contains("2 blocks of this list are named 'a'"), "{:?}", errors(&twice));
}

#[test]
fn register_operands_are_checked() {
    let cab = |op: &str, rhs: &str| {
        format!(
            r#"{{"opcode":"CompareAndBranch","name":"c","engine":"Pool","comp_op":"{op}","ins":[{},{rhs}],"outs":[]}}"#,
            reg("a")
        )
    };
    assert!(
        errors(&cab("IS_EQREG", &imm(1)))[0].contains("comp_op IS_EQREG compares against a register_access")
    );
    assert!(
        errors(&cab("IS_EQIMM", &reg("b")))[0].contains("comp_op IS_EQIMM compares against an imm_value")
    );
    assert!(
        errors(&cab("IS_EQIMM", &imm(1 << 32)))[0]
            .contains("ins[1].value | a register immediate is an integer in -2147483648..=4294967295")
    );
    let f32reg = r#"{"kind":"register_access","dtype":"float32","regref":"x"}"#;
    assert!(
        errors(&cab("IS_EQIMM", &imm(0)).replace(&reg("a"), f32reg))[0]
            .contains("a register reads as int32 or uint32, found float32")
    );
    let alu = format!(
        r#"{{"opcode":"RegisterAlu","name":"r","engine":"Pool","op":"pow","ins":[{},{}],"outs":[{}]}}"#,
        reg("a"),
        imm(2),
        reg("a")
    );
    assert!(errors(&alu)[0].contains("pow is not a register ALU op"), "{:?}", errors(&alu));
    let load = |ap: &str, dt: &str| {
        format!(
            r#"{{"opcode":"TensorLoad","name":"ld","engine":"Pool","ins":[{{"kind":"physical_ap","memref":"t","dtype":"{dt}","ap":{ap}}}],"outs":[{}]}}"#,
            reg("a")
        )
    };
    assert_eq!(errors(&load("[[4,1],[1,1]]", "int32")), Vec::<String>::new());
    assert!(
        errors(&load("[[4,1],[1,2]]", "int32"))[0].contains("TensorLoad's source is exactly one element")
    );
    assert!(
        errors(&load("[[4,1],[1,1]]", "float32"))[0]
            .contains("TensorLoad's source must be int8 or int16 or int32")
    );
}

#[test]
fn an_engine_holds_64_registers() {
    let moves = |n: usize| (0..n).map(|k| mov(&format!("r{k}"), 0)).collect::<Vec<_>>().join(",");
    assert_eq!(errors(&moves(64)), Vec::<String>::new());
    let e = errors(&moves(65));
    assert_eq!(
        e,
        [
            "out-of-range @ function 'f' › blocks | the program names 65 registers on engine Pool; an engine has 64"
        ]
    );
}

#[test]
fn dynamic_bounds_name_enclosing_loop_variables() {
    let body = format!(
        r#"{{"opcode":"DynamicForLoop","name":"d","engine":"Pool","LoopAxis":{{"name":"j","lb":{{"const":0,"terms":[{{"var":"nope","coef":1}}]}}}},"ins":[{}],"blocks":[]}}"#,
        reg("n")
    );
    let e = errors(&body);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("LoopAxis.lb | 'nope' is not the variable of an enclosing loop"), "{e:?}");
}
