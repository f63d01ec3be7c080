//! The streaming reader (node lists kept as text and decoded one node at a time) gives exactly
//! what decoding a parsed `serde_json::Value` gives: the same program, or the same located
//! diagnostics in the same order, or the same syntax error. Each case also pins the expected
//! outcome by hand (kind and location of the first diagnostic).

use bir_ir::{ErrorKind, LoadError, Node, Program, json};
use rstest::rstest;

/// The reference: parse a `Value`, then decode it.
fn via_value(text: &str) -> Result<Program, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => json::load_value(&v).map_err(|e| e.diagnostics().to_string()),
        Err(e) => Err(LoadError::Syntax { line: e.line(), column: e.column(), message: e.to_string() }
            .diagnostics()
            .to_string()),
    }
}

fn streamed(text: &str) -> Result<Program, String> {
    json::load_str(text).map_err(|e| e.diagnostics().to_string())
}

/// One function with a location `t` and the given `blocks` text; `before` goes in front of
/// `blocks` inside the function object, `after` behind it.
fn program(before: &str, blocks: &str, after: &str) -> String {
    format!(
        r#"{{"functions":[{{{before}"name":"f","allocations":[{{"name":"s","dtype":"float32",
            "memorylocations":[{{"name":"t","type":"SB","dims":[1,64]}}]}}],
            "blocks":{blocks}{after}}}]}}"#
    )
}

fn ts(name: &str, memref: &str) -> String {
    format!(
        r#"{{"opcode":"TensorScalar","name":"{name}","op0":"add","const0":1,
            "ins":[{{"kind":"physical_ap","memref":"{memref}","dtype":"float32","ap":[[1,1],[1,4]]}}],
            "outs":[{{"kind":"physical_ap","memref":"t","dtype":"float32","ap":[[1,1],[1,4]]}}]}}"#
    )
}

fn deep(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

/// Checks the streamed result against the reference and returns it.
fn same(text: &str) -> Result<Program, String> {
    let a = streamed(text);
    let b = via_value(text);
    assert_eq!(a, b, "streamed vs Value for {text}");
    a
}

#[test]
fn nested_blocks_and_loops_load_in_order() {
    let blocks = format!(
        r#"[{{"name":"b0","instructions":[{},{{"name":"inner","instructions":[{}]}}]}},
            {{"opcode":"Loop","name":"l","LoopAxis":{{"name":"i","lb":0,"ub":2}},"blocks":[{}]}}]"#,
        ts("a", "t"),
        ts("b", "t"),
        ts("c", "t")
    );
    let p = same(&program("", &blocks, "")).unwrap();
    let body = &p.functions[0].body;
    assert_eq!(body.len(), 2);
    let Node::Block(b0) = &body[0] else { panic!("block first") };
    assert_eq!(b0.name, "b0");
    assert!(matches!(&b0.body[1], Node::Block(inner) if inner.name == "inner" && inner.body.len() == 1));
    assert!(matches!(&body[1], Node::Loop(l) if l.ub == 2 && l.body.len() == 1));
}

#[test]
fn blocks_before_allocations_still_resolve() {
    let blocks = format!("[{{\"name\":\"b\",\"instructions\":[{}]}}]", ts("a", "t"));
    let text = format!(
        r#"{{"functions":[{{"blocks":{blocks},"name":"f","allocations":[{{"name":"s","dtype":"float32",
            "memorylocations":[{{"name":"t","type":"SB","dims":[1,64]}}]}}]}}]}}"#
    );
    assert!(same(&text).is_ok());
}

#[rstest]
// An unresolved memref three levels down: located in the instruction's context.
#[case::unresolved(
    format!("[{{\"name\":\"b\",\"instructions\":[{},{}]}}]", ts("a", "t"), ts("x", "nope")),
    "function 'f' › block 'b' › instruction #1 'x' (TensorScalar) › ins[0].memref"
)]
// A node that is no object, inside a streamed list: its path runs through the block.
#[case::not_an_object(
    "[{\"name\":\"b\",\"instructions\":[7]}]",
    "function 'f' › block 'b' › blocks[0].instructions[0]"
)]
// A block whose `instructions` is no array.
#[case::instructions_not_array(
    "[{\"name\":\"b\",\"instructions\":{\"a\":1}}]",
    "function 'f' › block 'b' › blocks[0].instructions"
)]
// `blocks` is no array.
#[case::blocks_not_array("\"x\"", "function 'f' › blocks")]
fn located_errors_match(#[case] blocks: String, #[case] location: &str) {
    let text = program("", &blocks, "");
    let err = same(&text).unwrap_err();
    assert!(err.starts_with(location), "{err}");
}

#[test]
fn deep_nesting_inside_a_streamed_list_is_the_same_syntax_error() {
    // 10^5 nested arrays in an instruction field, two lazy levels down.
    let inst = format!(r#"{{"opcode":"Generic","name":"n","junk":{}}}"#, deep(100_000));
    let text = program("", &format!("[{{\"name\":\"b\",\"instructions\":[{inst}]}}]"), "");
    let err = same(&text).unwrap_err();
    assert!(err.contains("recursion limit exceeded"), "{err}");
    assert!(err.contains("[syntax]"), "{err}");
}

#[rstest]
// Just below and at serde_json's limit of 128 nested containers, counted from the root (the
// junk's outermost array sits at depth 8, so 120 loads and 121 does not).
#[case(119)]
#[case(120)]
#[case(121)]
fn depth_limit_is_the_value_parsers(#[case] n: usize) {
    let inst = format!(r#"{{"opcode":"Generic","name":"n","junk":{}}}"#, deep(n));
    let text = program("", &format!("[{{\"name\":\"b\",\"instructions\":[{inst}]}}]"), "");
    assert_eq!(same(&text).is_ok(), n <= 120);
}

#[test]
fn text_the_reader_skips_is_still_checked() {
    // A loop's `instructions` is not read, and a repeated `blocks` key keeps only the last,
    // but a `Value` parse rejects their deep nesting, so the streaming reader must too.
    let looped = format!(
        r#"[{{"opcode":"Loop","name":"l","LoopAxis":{{"lb":0,"ub":1}},"instructions":[{}],"blocks":[]}}]"#,
        deep(200)
    );
    let err = same(&program("", &looped, "")).unwrap_err();
    assert!(err.contains("recursion limit exceeded"), "{err}");
    let twice = program("", &format!("[{}]", deep(200)), r#","blocks":[]"#);
    let err = same(&twice).unwrap_err();
    assert!(err.contains("recursion limit exceeded"), "{err}");
    // Shallow skipped text is fine, and the last `blocks` wins.
    let p = same(&program("", "[[1,2]]", r#","blocks":[]"#)).unwrap();
    assert!(p.functions[0].body.is_empty());
}

#[test]
fn unmodelled_opcode_keeps_lazy_fields_verbatim() {
    // An `instructions` key on an instruction is a lazy list to the parser; the raw payload
    // must still hold it as a value.
    let inst = r#"{"opcode":"Generic","name":"n","instructions":[{"x":[1,2.5,"s"]}]}"#;
    let text = program("", &format!("[{{\"name\":\"b\",\"instructions\":[{inst}]}}]"), "");
    assert!(same(&text).is_ok());
}

#[rstest]
#[case::truncated("{\"functions\":[{\"name\":\"f\",\"blocks\":[{\"name\":\"b\",\"instructions\":[1,")]
#[case::bad_escape_in_list(r#"{"functions":[{"name":"f","blocks":[{"name":"\u12","instructions":[]}]}]}"#)]
#[case::lone_surrogate(r#"{"functions":[{"name":"f","blocks":[{"name":"\ud800","instructions":[]}]}]}"#)]
#[case::trailing(r#"{"functions":[]} x"#)]
fn syntax_errors_match(#[case] text: &str) {
    let err = same(text).unwrap_err();
    assert!(err.contains("[syntax]"), "{err}");
}

#[test]
fn syntax_error_diagnostic_kind() {
    let e = json::load_str("{\"functions\":[{\"blocks\":[1,]}]}").unwrap_err();
    assert_eq!(e.diagnostics().0[0].kind, ErrorKind::Syntax);
}

#[rstest]
// Keys in the writer's (sorted) order: `instructions` before `name`, so the list is streamed
// before the node is known to be a block.
#[case::sorted_ok(format!("[{{\"instructions\":[{}],\"name\":\"b\"}}]", ts("a", "t")))]
#[case::sorted_error(format!("[{{\"instructions\":[{},{}],\"name\":\"b\"}}]", ts("a", "t"), ts("x", "nope")))]
#[case::sorted_bad_name(format!("[{{\"instructions\":[{}],\"name\":5}}]", ts("a", "t")))]
#[case::nested_sorted_error(format!(
    "[{{\"instructions\":[{{\"instructions\":[{}],\"name\":\"in\"}}],\"name\":\"out\"}}]",
    ts("x", "nope")
))]
// An `opcode` after the streamed list: an instruction (or loop) after all.
#[case::opcode_after(format!("[{{\"instructions\":[{}],\"opcode\":\"Generic\",\"name\":\"g\"}}]", ts("a", "t")))]
#[case::loop_after(
    "[{\"instructions\":[1],\"opcode\":\"Loop\",\"LoopAxis\":{\"lb\":0,\"ub\":1},\"blocks\":[]}]".to_owned()
)]
// A non-string `opcode` keeps it a block; a repeated `instructions` keeps the last.
#[case::numeric_opcode(format!("[{{\"instructions\":[{}],\"opcode\":5}}]", ts("a", "t")))]
#[case::instructions_twice(format!("[{{\"instructions\":[{}],\"instructions\":[],\"name\":\"b\"}}]", ts("a", "t")))]
#[case::instructions_not_a_list("[{\"instructions\":7,\"name\":\"b\"}]".to_owned())]
fn streamed_before_known_matches(#[case] blocks: String) {
    let _ = same(&program("", &blocks, ""));
}

#[test]
fn sorted_error_is_located_in_its_block() {
    let blocks = format!("[{{\"instructions\":[{},{}],\"name\":\"b\"}}]", ts("a", "t"), ts("x", "nope"));
    let err = same(&program("", &blocks, "")).unwrap_err();
    assert!(
        err.starts_with("function 'f' › block 'b' › instruction #1 'x' (TensorScalar) › ins[0].memref"),
        "{err}"
    );
}

#[rstest]
#[case::sorted(r#"{"instructions":["#, r#"],"name":"b"}"#)]
#[case::named(r#"{"name":"b","instructions":["#, "]}")]
#[case::loops(r#"{"opcode":"Loop","LoopAxis":{"lb":0,"ub":1},"blocks":["#, "]}")]
fn deeply_nested_blocks_are_the_same_syntax_error(#[case] open: &str, #[case] close: &str) {
    // 10^5 blocks (or loops) inside each other: each level is streamed by the one above.
    let n = 100_000;
    let blocks = format!("[{}{}]", open.repeat(n), close.repeat(n));
    let err = same(&program("", &blocks, "")).unwrap_err();
    assert!(err.contains("recursion limit exceeded"), "{err}");
    // And a whole document of nothing but nesting.
    let err = same(&deep(n)).unwrap_err();
    assert!(err.contains("recursion limit exceeded"), "{err}");
}

/// A function object from its members, in the given order.
fn function_with(members: &[&str]) -> String {
    format!(r#"{{"functions":[{{{}}}]}}"#, members.join(","))
}

const ALLOCS: &str = r#""allocations":[{"name":"s","dtype":"float32",
    "memorylocations":[{"name":"t","type":"SB","dims":[1,64]}]}]"#;

#[rstest]
// The writer's order (allocations, attributes, blocks, name): decoded while parsed.
#[case::sorted(&[ALLOCS, r#""attributes":{"k":[1]}"#, "\"blocks\":BLOCKS", "\"name\":\"f\""])]
#[case::sorted_unresolved(&[ALLOCS, "\"blocks\":BAD", "\"name\":\"f\""])]
#[case::sorted_bad_name(&[ALLOCS, "\"blocks\":BLOCKS", "\"name\":7"])]
#[case::sorted_no_name(&[ALLOCS, "\"blocks\":BLOCKS"])]
#[case::bad_allocation(&[r#""allocations":[{"name":"s","memorylocations":[]}]"#, "\"blocks\":BLOCKS", "\"name\":\"f\""])]
#[case::null_allocations(&["\"allocations\":null", "\"blocks\":BLOCKS", "\"name\":\"f\""])]
// Allocations again after the blocks, or blocks twice: the last of each wins.
#[case::allocations_after(&[ALLOCS, "\"blocks\":BLOCKS", "\"allocations\":[]", "\"name\":\"f\""])]
#[case::blocks_twice(&[ALLOCS, "\"blocks\":BLOCKS", "\"blocks\":BAD", "\"name\":\"f\""])]
#[case::blocks_not_a_list(&[ALLOCS, "\"blocks\":{}", "\"name\":\"f\""])]
#[case::blocks_first(&["\"blocks\":BLOCKS", ALLOCS, "\"name\":\"f\""])]
fn functions_decoded_while_parsed_match(#[case] members: &[&str]) {
    let good = format!("[{{\"instructions\":[{}],\"name\":\"b\"}}]", ts("a", "t"));
    let bad = format!("[{{\"instructions\":[{}],\"name\":\"b\"}}]", ts("x", "nope"));
    let members: Vec<String> =
        members.iter().map(|m| m.replace("BLOCKS", &good).replace("BAD", &bad)).collect();
    let members: Vec<&str> = members.iter().map(String::as_str).collect();
    let text = function_with(&members);
    let _ = same(&text);
    // Twice in one program, and as a repeated `functions` key.
    let f = &text[r#"{"functions":["#.len()..text.len() - 2];
    let _ = same(&format!(r#"{{"functions":[{f},{f}]}}"#));
    let _ = same(&format!(r#"{{"functions":[{f}],"version":"x","functions":[{f}]}}"#));
}

#[test]
fn functions_decoded_while_parsed_keep_their_names_and_body() {
    let good = format!("[{{\"instructions\":[{}],\"name\":\"b\"}}]", ts("a", "t"));
    let text = function_with(&[ALLOCS, &format!("\"blocks\":{good}"), "\"name\":\"f\""]);
    let p = same(&text).unwrap();
    assert_eq!(p.functions[0].name, "f");
    assert_eq!(p.functions[0].locations[0].name, "t");
    assert!(matches!(&p.functions[0].body[0], Node::Block(b) if b.name == "b" && b.body.len() == 1));
}
