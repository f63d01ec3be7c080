//! The executor's structure (issue #24), checked on its source: kernels import only the floor
//! (`exec::kit`) and the lower crates, never another kernel or the table; the instruction loop
//! stays small; the fuzz templates cover every opcode the kernel table runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use bir_ir::{BirEnum, OpCategory, Opcode};
use simulator::support::{self, Status};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every path a kernel file names inside this crate goes through `crate::exec::kit` (or
/// `crate::fault`, `crate::memory`, `crate::alloc`, the leaves the floor itself builds on); no
/// `super::` outside its own test module, so no kernel reaches a sibling.
#[test]
fn kernels_import_only_the_floor() {
    let dir = src().join("exec/kernels");
    let mut bad = Vec::new();
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name == "mod.rs" {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&p).unwrap();
        let mut in_tests = false;
        for (k, line) in text.lines().enumerate() {
            in_tests |= line.starts_with("mod tests");
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let ok = ["exec::kit", "fault", "memory", "alloc"].iter().any(|m| rest.starts_with(m));
                if !ok {
                    bad.push(format!("{name}:{}: {}", k + 1, line.trim()));
                }
            }
            if code.contains("super::") && !(in_tests && code.contains("use super::")) {
                bad.push(format!("{name}:{}: {}", k + 1, line.trim()));
            }
        }
    }
    assert!(files >= 10, "only {files} kernel files read");
    assert!(bad.is_empty(), "kernels reaching past the floor:\n{}", bad.join("\n"));
}

/// `exec/mod.rs` holds the instruction loop only.
#[test]
fn the_instruction_loop_stays_small() {
    let lines = std::fs::read_to_string(src().join("exec/mod.rs")).unwrap().lines().count();
    assert!(lines < 450, "exec/mod.rs has {lines} lines");
}

/// Every opcode of the reference's kernel category that birsim runs in some form (the support
/// matrix, i.e. the kernel table's classifiers) has a template in fuzz/templates.json, at the
/// top level or as a descriptor of a DMABlock template (`fuzz/make_seeds.py` draws them from
/// the conformance corpus).
#[test]
fn fuzz_templates_cover_every_running_kernel() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/templates.json");
    let templates: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut have = BTreeSet::new();
    for t in templates.as_array().unwrap() {
        have.insert(t["opcode"].as_str().unwrap().to_owned());
        for d in t.get("descriptors").and_then(|d| d.as_array()).into_iter().flatten() {
            have.insert(d["opcode"].as_str().unwrap().to_owned());
        }
    }
    let runs: BTreeSet<&str> = support::matrix()
        .entries
        .iter()
        .filter(|e| e.status == Status::Runs && e.opcode.category() == OpCategory::Kernel)
        .map(|e| e.opcode.name())
        .collect();
    let missing: Vec<&&str> = runs.iter().filter(|op| !have.contains(**op)).collect();
    assert!(runs.len() > 25, "only {} running kernel opcodes", runs.len());
    assert!(missing.is_empty(), "no fuzz template for {missing:?} (rerun fuzz/make_seeds.py)");
    assert!(have.iter().all(|op| Opcode::ALL.iter().any(|o| o.name() == op)));
}
