//! docs/bir-json.md is part of the contract: every opcode is listed, and every example loads and
//! validates with the opcode its heading names.
#![expect(clippy::unwrap_used, reason = "test code")]

use bir_ir::{BirEnum, Opcode, ValidateOptions, json, validate};

fn doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/bir-json.md")).unwrap()
}

/// The contents of the fenced block whose opening line is exactly `fence`, after `from`.
fn block_after(text: &str, from: usize, fence: &str) -> Option<(usize, String)> {
    let start = text[from..].find(&format!("\n{fence}\n"))? + from + fence.len() + 2;
    let end = text[start..].find("\n```")? + start;
    Some((end, text[start..end].to_owned()))
}

#[test]
fn every_opcode_is_documented() {
    let d = doc();
    for op in Opcode::ALL {
        assert!(d.contains(&format!("`{}`", op.name())), "docs/bir-json.md does not mention `{}`", op.name());
    }
}

#[test]
fn every_example_loads_and_validates() {
    let d = doc();
    let (_, allocations) = block_after(&d, 0, "```json allocations").expect("the allocations block");
    let mut checked = 0;
    let mut at = 0;
    while let Some(h) = d[at..].find("\n### `") {
        let name_start = at + h + 6;
        let name_end = name_start + d[name_start..].find('`').unwrap();
        let name = &d[name_start..name_end];
        at = name_end;
        let Some(op) = Opcode::from_name(name) else { continue };
        let (end, example) =
            block_after(&d, at, "```json").unwrap_or_else(|| panic!("no example for {name}"));
        at = end;
        // An example may be a list of instructions; the last one is the documented opcode.
        let example = example.trim();
        let body = example.strip_prefix('[').and_then(|e| e.strip_suffix(']')).unwrap_or(example);
        let program = format!(
            r#"{{"arch":"gen3","functions":[{{"name":"f","allocations":{allocations},"blocks":[{body}]}}]}}"#
        );
        let p = json::load_str(&program).unwrap_or_else(|e| panic!("{name} example: {e}"));
        validate(&p, &ValidateOptions::default()).unwrap_or_else(|e| panic!("{name} example: {e}"));
        let last = p.functions[0].body.last().and_then(|n| match n {
            bir_ir::Node::Inst(i) => Some(i.opcode()),
            _ => None,
        });
        assert_eq!(last, Some(op), "the example under `{name}`");
        checked += 1;
    }
    let modelled = Opcode::ALL.iter().filter(|o| o.is_modelled()).count();
    assert_eq!(checked, modelled, "one example per modelled opcode");
}

/// The "A whole program" skeleton loads, validates, names every allocation kind in its bullet
/// list, and reads back equal after writing (issue #26 item 2).
#[test]
fn the_whole_program_skeleton_loads_and_validates() {
    let d = doc();
    let (_, text) = block_after(&d, 0, "```json program").expect("the ```json program block");
    let p = json::load_str(&text).unwrap_or_else(|e| panic!("the skeleton: {e}"));
    validate(&p, &ValidateOptions::default()).unwrap_or_else(|e| panic!("the skeleton: {e}"));
    assert_eq!(p.functions.len(), 1);
    let kinds: Vec<&str> = p.functions[0].allocations.iter().map(|a| a.kind.name()).collect();
    assert_eq!(kinds, ["ExternalInput", "Internal", "Internal", "ExternalOutput"]);
    let q = json::load_str(&json::to_json_string(&p)).unwrap();
    assert_eq!(json::to_json_string(&q), json::to_json_string(&p));
    let section = &d[d.find("## A whole program").unwrap()..d.find("## Reading rules").unwrap()];
    for kind in bir_ir::TensorKind::ALL {
        assert!(
            section.contains(&format!("`{}`", kind.name())),
            "the skeleton's list lacks `{}`",
            kind.name()
        );
    }
}
