//! Call (84), Return and Exit across functions, and ReadVarAddr (41) (docs/fidelity.md B14,
//! B15; docs/bir-json.md "Call", "ReadVarAddr"). Expected values are worked by hand from each
//! program: a called function's location named like an entry location is that location, the
//! registers are the engine's (shared by every function), a Return ends the callee, an Exit
//! the run; a ReadVarAddr address is `(ordinal + 1) << 40` plus the element's byte offset.
#![expect(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod common;
use bir_ir::{ValidateOptions, json, validate};
use common::*;
use numerics::Profile;
use simulator::{Fault, Outcome, Simulator};

/// An SB int32 allocation `name` of `n` elements on one partition.
fn tile(name: &str, dtype: &str, n: usize) -> String {
    let size = if dtype.ends_with("64") { 8 } else { 4 };
    format!(
        r#"{{"name":"{name}","kind":"Internal","dtype":"{dtype}","tensor_shape":[1,{n}],"memorylocations":[{{"name":"{name}","type":"SB","dims":[1,{}]}}]}}"#,
        n * size
    )
}

fn function(name: &str, allocs: &[String], blocks: &str) -> String {
    format!(r#"{{"name":"{name}","allocations":[{}],"blocks":[{blocks}]}}"#, allocs.join(","))
}

fn program(functions: &[String]) -> String {
    format!(r#"{{"arch":"gen3","functions":[{}]}}"#, functions.join(","))
}

const R: &str = r#"{"kind":"register_access","dtype":"int32","regref":"r"}"#;

fn imm(v: i32) -> String {
    format!(r#"{{"kind":"imm_value","dtype":"int32","value":{v}}}"#)
}

fn inst(opcode: &str, name: &str, extra: &str, ins: &[String], outs: &[String]) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"{name}","engine":"Pool"{extra},"ins":[{}],"outs":[{}]}}"#,
        ins.join(","),
        outs.join(",")
    )
}

fn y(k: i64) -> String {
    ap("y", "int32", k, &[(4, 1), (1, 1)])
}

fn call(name: &str, target: &str) -> String {
    inst("Call", name, &format!(r#","target":"{target}""#), &[], &[])
}

fn alu(name: &str, op: &str, reg: &str, v: i32) -> String {
    let reg = R.replace("\"r\"", &format!("\"{reg}\""));
    inst("RegisterAlu", name, &format!(r#","op":"{op}""#), &[reg.clone(), imm(v)], &[reg])
}

/// Runs `text` with SB `x` = `x` (when the entry has it) and `y` = four −1s; `y` after the run
/// and the fault.
fn run(text: &str, x: &[i32]) -> (Vec<i32>, Option<Fault>) {
    let prog = json::load_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let valid = validate(&prog, &ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let f = &prog.functions[0];
    let mut sim = Simulator::new(valid, Profile::refsim());
    if let Ok(t) = simulator::io::resolve(f, "x") {
        sim.memory_mut().load(&f.locations[t.loc.index()], t.loc, &i32s(x)).unwrap();
    }
    let t = simulator::io::resolve(f, "y").unwrap();
    sim.memory_mut().load(&f.locations[t.loc.index()], t.loc, &i32s(&[-1; 4])).unwrap();
    let fault = match sim.run().unwrap() {
        Outcome::Finished => None,
        Outcome::Faulted(f) => Some(f),
    };
    (to_i32(&simulator::io::read(&mut sim, &t).unwrap().data), fault)
}

/// `bump` loads `x[0]` into `r`, adds 10, stores it to `y[0]`, returns (its last store never
/// runs). The entry calls it, doubles `r` into `y[2]`, calls it again and stores `r` to `y[3]`:
/// with `x[0] = 5`, `y = [15, −1, 30, 15]`.
#[test]
fn a_called_function_shares_locations_by_name_and_registers_and_returns_to_its_caller() {
    let x0 = ap("x", "int32", 0, &[(4, 1), (1, 1)]);
    let bump = function(
        "bump",
        &[tile("x", "int32", 4), tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"b","instructions":[{},{},{},{},{}]}}"#,
            inst("TensorLoad", "ld", "", &[x0], &[R.into()]),
            alu("add", "add", "r", 10),
            inst("TensorSave", "st0", "", &[R.into()], &[y(0)]),
            inst("Return", "ret", "", &[], &[]),
            inst("TensorSave", "st1", "", &[R.into()], &[y(1)]),
        ),
    );
    let main = function(
        "main",
        &[tile("x", "int32", 4), tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"m","instructions":[{},{},{},{},{}]}}"#,
            call("c1", "bump"),
            alu("dbl", "mult", "r", 2),
            inst("TensorSave", "st2", "", &[R.into()], &[y(2)]),
            call("c2", "bump"),
            inst("TensorSave", "st3", "", &[R.into()], &[y(3)]),
        ),
    );
    let (out, fault) = run(&program(&[main, bump]), &[5, 0, 0, 0]);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(out, [15, -1, 30, 15]);
}

/// An Exit in a called function ends the run: the caller's store after the call never runs.
#[test]
fn an_exit_in_a_called_function_ends_the_run() {
    let quit = function(
        "quit",
        &[tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"q","instructions":[{},{},{}]}}"#,
            inst("RegisterMove", "mv", "", &[imm(7)], &[R.into()]),
            inst("TensorSave", "st1", "", &[R.into()], &[y(1)]),
            inst("Exit", "exit", "", &[], &[]),
        ),
    );
    let main = function(
        "main",
        &[tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"m","instructions":[{},{}]}}"#,
            call("c", "quit"),
            inst("TensorSave", "st0", "", &[R.into()], &[y(0)]),
        ),
    );
    let (out, fault) = run(&program(&[main, quit]), &[]);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(out, [-1, 7, -1, -1]);
}

/// `f` counts its runs in `c` and calls itself until `n` (5 at the start) reaches 0: five runs.
#[test]
fn a_function_may_call_itself_until_a_register_says_stop() {
    let n = R.replace("\"r\"", "\"n\"");
    let f = function(
        "f",
        &[],
        &format!(
            r#"{{"name":"body","instructions":[{},{},{}]}},{{"name":"again","instructions":[{}]}},{{"name":"out","instructions":[{}]}}"#,
            alu("inc", "add", "r", 1),
            alu("dec", "subtract", "n", 1),
            inst(
                "CompareAndBranch",
                "br",
                r#","comp_op":"IS_EQIMM","on_true":"out""#,
                &[n.clone(), imm(0)],
                &[]
            ),
            call("again", "f"),
            inst("Return", "ret", "", &[], &[]),
        ),
    );
    let main = function(
        "main",
        &[tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"m","instructions":[{},{},{},{}]}}"#,
            inst("RegisterMove", "n5", "", &[imm(5)], &[n]),
            inst("RegisterMove", "c0", "", &[imm(0)], &[R.into()]),
            call("c", "f"),
            inst("TensorSave", "st", "", &[R.into()], &[y(0)]),
        ),
    );
    let (out, fault) = run(&program(&[main, f]), &[]);
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(out, [5, -1, -1, -1]);
}

/// Endless recursion is a located `budget` fault at the 65th nested call (the 64th run of `f`
/// calling again), quickly.
#[test]
fn endless_recursion_is_a_located_budget_fault() {
    let f = function(
        "f",
        &[tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"b","instructions":[{},{},{}]}}"#,
            alu("inc", "add", "r", 1),
            inst("TensorSave", "st", "", &[R.into()], &[y(0)]),
            call("again", "f")
        ),
    );
    let main = function(
        "main",
        &[tile("y", "int32", 4)],
        &format!(
            r#"{{"name":"m","instructions":[{},{}]}}"#,
            inst("RegisterMove", "c0", "", &[imm(0)], &[R.into()]),
            call("c", "f")
        ),
    );
    let (out, fault) = run(&program(&[main, f]), &[]);
    let fault = fault.unwrap();
    assert_eq!(fault.kind.name(), "budget");
    assert_eq!(fault.instruction, "again");
    assert!(fault.cause.to_string().contains("calls nest deeper than 64"), "{}", fault.cause);
    assert!(fault.at.starts_with("block 'm' › function 'f' › block 'b' › function 'f'"), "{}", fault.at);
    // 64 runs of f stored their count before the 65th nested call faulted.
    assert_eq!(out, [64, -1, -1, -1]);
}

#[test]
fn a_call_of_no_function_and_a_shared_location_that_disagrees_are_validation_errors() {
    let errors = |text: &str| {
        let prog = json::load_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        validate(&prog, &ValidateOptions::default()).err().unwrap().to_string()
    };
    let main = |target: &str| {
        function(
            "main",
            &[tile("y", "int32", 4)],
            &format!(r#"{{"name":"m","instructions":[{}]}}"#, call("c", target)),
        )
    };
    let e = errors(&program(&[main("nowhere")]));
    assert!(
        e.contains("instruction #0 'c' (Call) › target: 'nowhere' names no function of the program"),
        "{e}"
    );
    let g = function("g", &[tile("y", "int32", 2)], r#"{"name":"b","instructions":[]}"#);
    let e = errors(&program(&[main("g"), g]));
    assert!(
        e.contains("function 'g' › location 'y': a called function's location named like one of the entry function's is that location, so type and dims must agree: SB [1, 8] here, SB [1, 16] in 'main'"),
        "{e}"
    );
}

/// ReadVarAddr of `x` (entry location ordinal 1: base 2 << 40) at element 5 of a 4 × 2 fp32 SB
/// tile (row 2, column 1: byte 2 · 8 + 4 = 20), and of the flat DRAM `d` (ordinal 2) at element 3
/// (byte 12), into uint64 / int64 elements.
#[test]
fn read_var_addr_writes_the_address_dma_descriptors_use() {
    let text = program(&[function(
        "main",
        &[
            tile("y", "int32", 4),
            r#"{"name":"x","kind":"Internal","dtype":"float32","tensor_shape":[4,2],"memorylocations":[{"name":"x","type":"SB","dims":[4,8]}]}"#.into(),
            r#"{"name":"d","kind":"Internal","dtype":"float32","tensor_shape":[16],"memorylocations":[{"name":"d","type":"DRAM","dims":[1,64]}]}"#.into(),
            tile("a", "uint64", 1),
            tile("b", "int64", 1),
        ],
        &format!(
            r#"{{"name":"m","instructions":[{},{}]}}"#,
            inst("ReadVarAddr", "rx", "", &[ap("x", "float32", 5, &[(2, 1), (1, 1)])], &[ap("a", "uint64", 0, &[(1, 1), (1, 1)])]),
            inst("ReadVarAddr", "rd", "", &[ap("d", "float32", 3, &[(16, 1), (1, 1)])], &[ap("b", "int64", 0, &[(1, 1), (1, 1)])]),
        ),
    )]);
    let prog = json::load_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let valid = validate(&prog, &ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let f = &prog.functions[0];
    let mut sim = Simulator::new(valid, Profile::refsim());
    assert_eq!(sim.run().unwrap(), Outcome::Finished);
    let mut got = Vec::new();
    for name in ["a", "b"] {
        let t = simulator::io::resolve(f, name).unwrap();
        got.push(u64::from_le_bytes(
            simulator::io::read(&mut sim, &t).unwrap().data[..8].try_into().unwrap(),
        ));
    }
    assert_eq!(got, [(2u64 << 40) + 20, (3u64 << 40) + 12], "{:#x?}", got);
}

/// Endless recursion through 58 nested loops per call (about the deepest JSON nesting allows)
/// stops at 256 levels of loops and calls with a `budget` fault, inside a test thread's 2 MiB
/// stack, in a debug build.
#[test]
fn recursion_through_deep_loops_stops_before_the_stack_runs_out() {
    let mut node = call("again", "f");
    for d in 0..58 {
        node = format!(
            r#"{{"opcode":"Loop","name":"l{d}","LoopAxis":{{"name":"v{d}","lb":0,"ub":1,"stride":1}},"blocks":[{node}]}}"#
        );
    }
    let f = function("f", &[tile("y", "int32", 4)], &node);
    let main = function(
        "main",
        &[tile("y", "int32", 4)],
        &format!(r#"{{"name":"m","instructions":[{}]}}"#, call("c", "f")),
    );
    let (out, fault) = run(&program(&[main, f]), &[]);
    let fault = fault.unwrap();
    assert_eq!(fault.kind.name(), "budget");
    assert!(fault.cause.to_string().starts_with("loops and calls nest deeper than 256"), "{}", fault.cause);
    assert_eq!(out, [-1; 4]);
}
