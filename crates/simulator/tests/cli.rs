//! The `birsim` binary, run as a user would: the happy path, every input error with its exit
//! code and message, and that failures create or truncate no output file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{birsim, s, scratch};

use std::path::{Path, PathBuf};
use std::process::Command;

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sub_one").join(file)
}

/// `birsim run` of the example program on its input `a`, writing each `(name, path)` output,
/// with `extra` arguments after.
fn run_example(outputs: &[(&str, &Path)], extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run".to_owned(), s(&example("program.json")), "--input".to_owned()];
    args.push(format!("a={}", s(&example("a.npy"))));
    for (name, path) in outputs {
        args.push("--output".to_owned());
        args.push(format!("{name}={}", s(path)));
    }
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    birsim(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn runs_the_example_bit_exactly_with_a_trace() {
    let d = scratch();
    let (b, trace) = (d.join("b.npy"), d.join("t.jsonl"));
    let (code, _, err) = run_example(&[("b", &b)], &["--trace", &s(&trace)]);
    assert_eq!(code, 0, "{err}");
    // The expected file was written by NumPy (examples/sub_one/make_input.py).
    assert_eq!(std::fs::read(&b).unwrap(), std::fs::read(example("expected_b.npy")).unwrap());
    let lines: Vec<String> = std::fs::read_to_string(&trace).unwrap().lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[1].contains("\"opcode\":\"TensorScalar\"") && lines[1].contains("fnv1a64:"),
        "{}",
        lines[1]
    );
}

#[test]
fn out_dir_writes_every_output_allocation() {
    let d = scratch();
    let (code, _, err) = birsim(&[
        "run",
        &s(&example("program.json")),
        "--input",
        &format!("a_set={}", s(&example("a.npy"))),
        "--out-dir",
        &s(&d),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(d.join("b_set.npy")).unwrap(),
        std::fs::read(example("expected_b.npy")).unwrap()
    );
}

/// Runs a failing command and checks its exit code, message, and that `out` is untouched.
fn fails(args: &[&str], code: i32, message: &str, out: &Path) {
    let before = std::fs::read(out).ok();
    let (got, _, err) = birsim(args);
    assert_eq!(got, code, "exit code of {args:?}; stderr: {err}");
    assert!(err.contains(message), "stderr of {args:?} should contain {message:?}:\n{err}");
    assert_eq!(std::fs::read(out).ok(), before, "the output file changed");
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind: {leftovers:?}");
}

/// A hand-written .npy file (so the test does not rely on our own writer).
fn npy(descr: &str, shape: &str, bytes: usize) -> Vec<u8> {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}").into_bytes();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    f.extend_from_slice(&(h.len() as u16).to_le_bytes());
    f.extend_from_slice(&h);
    f.extend(std::iter::repeat_n(0u8, bytes));
    f
}

#[test]
fn input_errors_exit_2_and_write_nothing() {
    let d = scratch();
    let b = d.join("b.npy");
    let prog = s(&example("program.json"));
    let out = format!("b={}", s(&b));
    fails(
        &["run", &prog, "--input", "a=/nonexistent/a.npy", "--output", &out],
        2,
        "cannot read /nonexistent/a.npy",
        &b,
    );
    let wrong_shape = d.join("shape.npy");
    std::fs::write(&wrong_shape, npy("<f4", "(512, 128)", 512 * 128 * 4)).unwrap();
    fails(
        &["run", &prog, "--input", &format!("a={}", s(&wrong_shape)), "--output", &out],
        2,
        "has shape (512, 128)",
        &b,
    );
    let wrong_dtype = d.join("dtype.npy");
    std::fs::write(&wrong_dtype, npy("<f2", "(128, 512)", 128 * 512 * 2)).unwrap();
    fails(
        &["run", &prog, "--input", &format!("a={}", s(&wrong_dtype)), "--output", &out],
        2,
        "needs <f4",
        &b,
    );
    let not_npy = d.join("text.npy");
    std::fs::write(&not_npy, "hello").unwrap();
    fails(
        &["run", &prog, "--input", &format!("a={}", s(&not_npy)), "--output", &out],
        2,
        "not an .npy file",
        &b,
    );
    let a = format!("a={}", s(&example("a.npy")));
    fails(
        &["run", &prog, "--input", "zzz=x.npy", "--output", &out],
        2,
        "no allocation or memory location is named 'zzz'",
        &b,
    );
    fails(&["run", &prog, "--input", &a, "--output", "zzz=/tmp/z.npy"], 2, "--output zzz", &b);
    let bad_json = d.join("bad.json");
    std::fs::write(&bad_json, "{\"functions\": [").unwrap();
    fails(&["run", &s(&bad_json), "--output", &out], 2, "not valid JSON at line 1", &b);
    let invalid = d.join("invalid.json");
    let text = std::fs::read_to_string(example("program.json")).unwrap().replacen(
        "\"subtract\"",
        "\"frobnicate\"",
        1,
    );
    std::fs::write(&invalid, text).unwrap();
    fails(&["run", &s(&invalid), "--output", &out], 2, "unknown ALU op \"frobnicate\"", &b);
    fails(&["run", &prog, "--profile", "fast"], 2, "[possible values: refsim, nki]", &b);
    fails(&["frobnicate"], 2, "unrecognized subcommand 'frobnicate'", &b);
    fails(&["run"], 2, "required arguments were not provided:\n  <PROGRAM.json>", &b);
    assert!(!b.exists(), "no output may be created by a failed run");
}

#[test]
fn a_faulting_program_exits_1_and_leaves_outputs_untouched() {
    let d = scratch();
    let b = d.join("b.npy");
    std::fs::write(&b, b"previous contents").unwrap();
    // Replace the TensorScalar by an opcode this version does not run yet.
    let text = std::fs::read_to_string(example("program.json")).unwrap();
    let text = text.replacen("\"opcode\":\"TensorScalar\"", "\"opcode\":\"MatmultSparse\"", 1);
    let prog = d.join("transpose.json");
    std::fs::write(&prog, text).unwrap();
    fails(
        &[
            "run",
            &s(&prog),
            "--input",
            &format!("a={}", s(&example("a.npy"))),
            "--output",
            &format!("b={}", s(&b)),
        ],
        1,
        "not implemented yet: MatmultSparse",
        &b,
    );
    assert_eq!(std::fs::read(&b).unwrap(), b"previous contents");
}

#[test]
fn validate_and_dump() {
    let (code, out, _) = birsim(&["validate", &s(&example("program.json"))]);
    assert_eq!(code, 0);
    assert!(out.contains("ok (1 function(s), 3 instruction(s))"), "{out}");
    let d = scratch();
    let invalid = d.join("invalid.json");
    let text = std::fs::read_to_string(example("program.json")).unwrap().replacen(
        "\"memref\":\"a_tile\",\"memsetref\":\"a_tile_set\",\"dtype\":\"float32\",\n            \"offset\":0",
        "\"memref\":\"nope\",\"memsetref\":\"a_tile_set\",\"dtype\":\"float32\",\n            \"offset\":0",
        1,
    );
    std::fs::write(&invalid, &text).unwrap();
    let (code, _, err) = birsim(&["validate", &s(&invalid)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("memref 'nope' names no memory location") && err.contains("instruction #1"),
        "{err}"
    );
    let (code, out, _) = birsim(&["dump", &s(&example("program.json"))]);
    assert_eq!(code, 0);
    assert!(out.contains("a_tile SB dims [128, 2048]") && out.contains("TensorScalar"), "{out}");
}

/// Hardening: with two outputs, the first is not replaced when the second's folder is missing
/// (every output path is checked before the run, and none is replaced unless all are written).
#[test]
fn partial_outputs_replace_none() {
    let d = scratch();
    let first = d.join("first.npy");
    std::fs::write(&first, b"keep me").unwrap();
    let (prog, a) = (s(&example("program.json")), format!("a={}", s(&example("a.npy"))));
    fails(
        &[
            "run",
            &prog,
            "--input",
            &a,
            "--output",
            &format!("b={}", s(&first)),
            "--output",
            &format!("b_set={}/no/such/dir/second.npy", s(&d)),
        ],
        2,
        "does not exist",
        &first,
    );
    assert_eq!(std::fs::read(&first).unwrap(), b"keep me");
}

/// Hardening: a FIFO or a device given as an output is refused before running (never replaced
/// by a regular file); a symlink is written through to its target and stays a symlink.
#[cfg(unix)]
#[test]
fn clobbered_files_fifo_device_and_symlink() {
    let d = scratch();
    let (prog, a) = (s(&example("program.json")), format!("a={}", s(&example("a.npy"))));
    let fifo = d.join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (code, _, err) = birsim(&["run", &prog, "--input", &a, "--output", &format!("b={}", s(&fifo))]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo_like());
    let (code, _, err) = birsim(&["run", &prog, "--input", &a, "--output", "b=/dev/null"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    // A symlink to a regular file: the target gets the output, the link stays a link.
    let target = d.join("target.npy");
    std::fs::write(&target, b"old").unwrap();
    let link = d.join("link.npy");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (code, _, err) = birsim(&["run", &prog, "--input", &a, "--output", &format!("b={}", s(&link))]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), std::fs::read(example("expected_b.npy")).unwrap());
}

/// The names in folder `d`, sorted (hidden temporary files included).
fn names_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Overwriting existing outputs (twice, two outputs at once) replaces their bytes with the new
/// ones and leaves nothing else in the folder: on Linux the old file is swapped out by
/// `renameat2(RENAME_EXCHANGE)` and must then be removed (docs/robustness.md "Output files").
#[test]
fn overwriting_outputs_replaces_their_bytes_and_leaves_no_temporary_file() {
    let d = scratch();
    let (b, b_set) = (d.join("b.npy"), d.join("b_set.npy"));
    std::fs::write(&b, b"old b, longer than nothing").unwrap();
    std::fs::write(&b_set, b"old b_set").unwrap();
    let expected = std::fs::read(example("expected_b.npy")).unwrap();
    for _ in 0..2 {
        let (code, _, err) = run_example(&[("b", &b), ("b_set", &b_set)], &[]);
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("warning"), "{err}");
        assert_eq!(std::fs::read(&b).unwrap(), expected);
        assert_eq!(std::fs::read(&b_set).unwrap(), expected);
        assert_eq!(names_in(&d), ["b.npy", "b_set.npy"]);
    }
}

/// An output that is one of two hard links: the output's name gets a new file (a rename and an
/// exchange both give the name a new inode), so the other link keeps the old bytes, and a run
/// that faults changes neither link.
#[cfg(unix)]
#[test]
fn a_hard_linked_output_gets_a_new_file_and_the_other_link_keeps_the_old_bytes() {
    use std::os::unix::fs::MetadataExt;
    let d = scratch();
    let (b, other) = (d.join("b.npy"), d.join("other.npy"));
    std::fs::write(&b, b"old bytes").unwrap();
    std::fs::hard_link(&b, &other).unwrap();
    let old_inode = std::fs::metadata(&b).unwrap().ino();
    let a = format!("a={}", s(&example("a.npy")));
    let out = format!("b={}", s(&b));
    // A run that faults: both names still name the old file.
    let text = std::fs::read_to_string(example("program.json")).unwrap();
    let faulting = d.join("faulting.json");
    std::fs::write(
        &faulting,
        text.replacen("\"opcode\":\"TensorScalar\"", "\"opcode\":\"MatmultSparse\"", 1),
    )
    .unwrap();
    fails(&["run", &s(&faulting), "--input", &a, "--output", &out], 1, "MatmultSparse", &b);
    assert_eq!(std::fs::metadata(&b).unwrap().ino(), old_inode);
    assert_eq!(std::fs::metadata(&other).unwrap().nlink(), 2);
    assert_eq!(names_in(&d), ["b.npy", "faulting.json", "other.npy"]);
    // A run that succeeds: b is a new file, other keeps the old one (now its only link).
    let (code, _, err) = birsim(&["run", &s(&example("program.json")), "--input", &a, "--output", &out]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&b).unwrap(), std::fs::read(example("expected_b.npy")).unwrap());
    assert_eq!(std::fs::read(&other).unwrap(), b"old bytes");
    assert_ne!(std::fs::metadata(&b).unwrap().ino(), old_inode);
    assert_eq!(std::fs::metadata(&other).unwrap().ino(), old_inode);
    assert_eq!(std::fs::metadata(&other).unwrap().nlink(), 1);
    assert_eq!(names_in(&d), ["b.npy", "faulting.json", "other.npy"]);
}

/// An output through a symlink into another folder: the link's target is replaced (its
/// temporary file is made beside the target, not beside the link), the link stays the same
/// link, and neither folder keeps a temporary file.
#[cfg(unix)]
#[test]
fn an_output_through_a_symlink_replaces_the_target_in_its_own_folder() {
    let d = scratch();
    let (links, files) = (d.join("links"), d.join("files"));
    std::fs::create_dir(&links).unwrap();
    std::fs::create_dir(&files).unwrap();
    let (target, link) = (files.join("target.npy"), links.join("link.npy"));
    std::fs::write(&target, b"old target").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (code, _, err) = run_example(&[("b", &link)], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    assert!(std::fs::symlink_metadata(&target).unwrap().file_type().is_file());
    assert_eq!(std::fs::read(&target).unwrap(), std::fs::read(example("expected_b.npy")).unwrap());
    assert_eq!(names_in(&links), ["link.npy"]);
    assert_eq!(names_in(&files), ["target.npy"]);
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}
#[cfg(unix)]
impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_fifo(self)
    }
}

/// Hardening: a run without `--input` for an Input allocation names it (exit 2) instead of
/// computing on 0xFF bytes; `--allow-uninit-inputs` runs it anyway.
#[test]
fn silent_missing_inputs_are_named() {
    let d = scratch();
    let b = d.join("b.npy");
    let prog = s(&example("program.json"));
    fails(&["run", &prog, "--output", &format!("b={}", s(&b))], 2, "no --input for 'a_set'", &b);
    let (code, _, err) =
        birsim(&["run", &prog, "--allow-uninit-inputs", "--output", &format!("b={}", s(&b))]);
    assert_eq!(code, 0, "{err}");
}

/// Hardening: a program with thousands of problems prints at most 100 of them and a count.
#[test]
fn diagnostic_amplification_is_capped() {
    let d = scratch();
    let mut insts = Vec::new();
    for k in 0..1500 {
        insts.push(format!(r#"{{"opcode":"TensorCopy","name":"c{k}","ins":[{{"kind":"physical_ap","memref":"nope{k}","dtype":"float32","ap":[[1,1],[1,1]]}}],"outs":[]}}"#));
    }
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[],"blocks":[{{"name":"b","instructions":[{}]}}]}}]}}"#,
        insts.join(",")
    );
    let p = d.join("p.json");
    std::fs::write(&p, text).unwrap();
    let (code, _, err) = birsim(&["validate", &s(&p)]);
    assert_eq!(code, 2);
    assert!(err.lines().count() <= 103, "{} lines", err.lines().count());
    assert!(err.contains("more problem(s)"), "{err}");
}

/// A one-location program running `inst` (an instruction over location `t`, 4 bytes of fp32).
fn tiny_program(d: &Path, inst: &str) -> String {
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{{"name":"t","kind":"Internal","dtype":"float32","memorylocations":[{{"name":"t","type":"DRAM","dims":[1,4]}}]}}],"blocks":[{{"name":"b","instructions":[{inst}]}}]}}]}}"#
    );
    let p = d.join("tiny.json");
    std::fs::write(&p, text).unwrap();
    s(&p)
}

/// Hardening: a step-0 level with num 2^40 stays inside a 4-byte location; the memory cap
/// refuses its buffers before any allocation (a `budget` fault, exit 1), and so does a Memset
/// of that many elements; a reduce whose nums multiply past 64 bits faults instead of panicking.
#[test]
fn allocation_aborts_and_overflowing_counts_are_faults() {
    let d = scratch();
    let ap = |pairs: &str| format!(r#"{{"kind":"physical_ap","memref":"t","dtype":"float32","ap":{pairs}}}"#);
    let huge = ap("[[0,1],[0,1099511627776]]");
    for inst in [
        format!(
            r#"{{"opcode":"TensorCopy","name":"c","ins":[{huge}],"outs":[{}]}}"#,
            ap("[[0,1],[0,1099511627776]]")
        ),
        format!(r#"{{"opcode":"Memset","name":"m","mode":"Const","constant":0,"ins":[],"outs":[{huge}]}}"#),
        format!(
            r#"{{"opcode":"TensorReduce","name":"r","op":"add","axis":"X","ins":[{}],"outs":[{}]}}"#,
            ap("[[0,1],[0,4611686018427387904],[0,4]]"),
            ap("[[0,1],[1,1]]")
        ),
    ] {
        let (code, _, err) = birsim(&["run", &tiny_program(&d, &inst)]);
        assert!(code == 1 || code == 2, "{inst}: exit {code}: {err}");
        assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
    }
}

/// Hardening: nested loops of 2^32 trips each are refused up front by the instruction budget.
#[test]
fn unbounded_work_is_refused() {
    let d = scratch();
    let nop = r#"{"opcode":"NoOp","name":"n","ins":[],"outs":[]}"#;
    let inner = format!(
        r#"{{"opcode":"Loop","name":"l2","LoopAxis":{{"name":"j","lb":0,"ub":4294967296}},"blocks":[{{"name":"b2","instructions":[{nop}]}}]}}"#
    );
    let outer = format!(
        r#"{{"opcode":"Loop","name":"l1","LoopAxis":{{"name":"i","lb":0,"ub":4294967296}},"blocks":[{{"name":"b1","instructions":[{inner}]}}]}}"#
    );
    let (code, _, err) = birsim(&["run", &tiny_program(&d, &outer)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("budget of 1000000000"), "{err}");
    // A small budget stops a long loop too.
    let loop1 = format!(
        r#"{{"opcode":"Loop","name":"l","LoopAxis":{{"name":"i","lb":0,"ub":1000}},"blocks":[{{"name":"b3","instructions":[{nop}]}}]}}"#
    );
    let (code, _, err) = birsim(&["run", &tiny_program(&d, &loop1), "--max-instructions", "10"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1000 instructions"), "{err}");
}

/// `--oob fault|skip` (docs/fidelity.md I2): an uninitialised int32 index is 0xFFFFFFFF, row
/// 4294967295 of a 2-row table: the default faults (exit 1) naming the index, `skip` runs it as
/// a skip, anything else is a usage error.
#[test]
fn oob_flag_picks_fault_or_skip() {
    let d = scratch();
    let ap = |m: &str, dt: &str, pairs: &str| {
        format!(r#"{{"kind":"physical_ap","memref":"{m}","dtype":"{dt}","ap":{pairs}}}"#)
    };
    let inst = format!(
        r#"{{"opcode":"IndirectLoad","name":"g","engine":"DMA","ins":[{},{}],"outs":[{}]}}"#,
        ap("t", "float32", "[[1,1],[1,2]]"),
        ap("i", "int32", "[[1,1],[1,1]]"),
        ap("t", "float32", "[[1,1],[1,1]]")
    );
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{{"name":"t","kind":"Internal","dtype":"float32","memorylocations":[{{"name":"t","type":"DRAM","dims":[1,16]}}]}},{{"name":"i","kind":"Internal","dtype":"int32","memorylocations":[{{"name":"i","type":"DRAM","dims":[1,4]}}]}}],"blocks":[{{"name":"b","instructions":[{inst}]}}]}}]}}"#
    );
    let p = d.join("oob.json");
    std::fs::write(&p, text).unwrap();
    let (code, _, err) = birsim(&["run", &s(&p)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("index ins[1] element 0 = -1 is outside the table's location"), "{err}");
    assert!(err.contains("out-of-bounds"), "{err}");
    let (code, _, err) = birsim(&["run", &s(&p), "--oob", "skip"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = birsim(&["run", &s(&p), "--oob", "clamp"]);
    assert_eq!(code, 2, "{err}");
    // The error text is simulator::Options::set's, as the Python package and xtask give it.
    assert!(err.contains("invalid value 'clamp' for '--oob <POLICY>': expected fault or skip"), "{err}");
}

/// Runs birsim with its address space capped at `kib` KiB (`ulimit -v`), so an allocation the
/// memory cap allows fails on the host: the way to see a fallible path instead of an abort.
fn birsim_limited(kib: u64, args: &[&str]) -> (i32, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_birsim"))
        .args(args)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into())
}

/// Hardening (defect 11, second half): an allocation the host cannot satisfy is a typed error
/// with the documented exit code — a `budget` fault (exit 1) for a 2 GiB location under a 1 GiB
/// address-space limit, exit 2 for an input `.npy` or a program file that does not fit —
/// never Rust's allocation-failure abort (134).
#[test]
fn out_of_host_memory_is_an_error_not_an_abort() {
    let d = scratch();
    let big = 1u64 << 31;
    let prog = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{{"name":"t","kind":"ExternalOutput","dtype":"float32","tensor_shape":[{n}],"memorylocations":[{{"name":"t","type":"DRAM","dims":[1,{big}]}}]}},{{"name":"u","kind":"ExternalInput","dtype":"float32","tensor_shape":[{n}],"memorylocations":[{{"name":"u","type":"DRAM","dims":[1,{big}]}}]}}],"blocks":[{{"name":"b","instructions":[{{"opcode":"Memset","name":"m","mode":"Const","constant":0,"ins":[],"outs":[{{"kind":"physical_ap","memref":"t","dtype":"float32","ap":[[0,1],[1,{n}]]}}]}}]}}]}}]}}"#,
        n = big / 4
    );
    let p = d.join("big.json");
    std::fs::write(&p, prog).unwrap();
    let limit = 1 << 20; // KiB: 1 GiB of address space
    let (code, err) = birsim_limited(limit, &["run", &s(&p), "--allow-uninit-inputs"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("could not allocate") && err.contains("[budget]"), "{err}");
    // The input's 2 GiB of data (a sparse file) cannot be loaded: exit 2, naming the location.
    let u = d.join("u.npy");
    let mut f = npy("<f4", &format!("({},)", big / 4), 0);
    let header = f.len() as u64;
    std::fs::write(&u, &f).unwrap();
    std::fs::OpenOptions::new().write(true).open(&u).unwrap().set_len(header + big).unwrap();
    let (code, err) = birsim_limited(limit, &["run", &s(&p), "--input", &format!("u={}", s(&u))]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("location 'u'") && err.contains("could not allocate"), "{err}");
    // A program file larger than memory (sparse, 2 GiB) is refused while reading it.
    f.clear();
    let huge = d.join("huge.json");
    std::fs::write(&huge, b"{").unwrap();
    std::fs::OpenOptions::new().write(true).open(&huge).unwrap().set_len(big).unwrap();
    let (code, err) = birsim_limited(limit, &["validate", &s(&huge)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("could not allocate"), "{err}");
}

/// `--dma-block-in-stream skip|run` (docs/fidelity.md G4): a DMABlock met in the stream whose one
/// descriptor faults (a transpose of mismatched shapes) runs nothing by default (exit 0), runs
/// and faults with `run` (exit 1, naming the block and descriptor); other values are usage errors.
#[test]
fn dma_block_in_stream_flag() {
    let d = scratch();
    let ap = |pairs: &str| format!(r#"{{"kind":"physical_ap","memref":"t","dtype":"float32","ap":{pairs}}}"#);
    let desc = format!(
        r#"{{"opcode":"DMADescriptorTranspose","name":"dx","transpose_op":"WZXY","ins":[{}],"outs":[{}]}}"#,
        ap("[[0,1],[0,1],[0,1],[0,1]]"),
        ap("[[0,1],[0,1],[0,1],[0,1]]").replace("[0,1]]}", "[0,2]]}")
    );
    let inst = format!(r#"{{"opcode":"DMABlock","name":"blk","ins":[],"outs":[],"descriptors":[{desc}]}}"#);
    let p = tiny_program(&d, &inst);
    let (code, _, err) = birsim(&["run", &p]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = birsim(&["run", &p, "--dma-block-in-stream", "run"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("DMABlock 'blk' descriptor #0 'dx' (DMADescriptorTranspose)"), "{err}");
    let (code, _, err) = birsim(&["run", &p, "--dma-block-in-stream", "twice"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid value 'twice' for '--dma-block-in-stream <WHAT>': expected skip or run"),
        "{err}"
    );
}

/// A program of at least 4 MiB streams through a window (issue #9: peak memory); it reads as
/// the same text read whole does: the same count when valid, and when not, the diagnostics and
/// syntax errors located in the whole text (line and column of the file as written).
#[test]
fn a_large_program_reads_as_the_whole_text_does() {
    let d = scratch();
    const N: usize = 17_000;
    let inst = |k: usize, memref: &str| {
        format!(
            r#"{{"opcode":"TensorScalar","name":"i{k}","op0":"add","const0":1.0,"ins":[{{"kind":"physical_ap","memref":"t","dtype":"float32","offset":0,"ap":[[1,1],[1,1]]}}],"outs":[{{"kind":"physical_ap","memref":"{memref}","dtype":"float32","offset":0,"ap":[[1,1],[1,1]]}}]}}"#
        )
    };
    // One instruction a line: line k + 2 holds instruction #k.
    let program = |bad: Option<(usize, String)>| {
        let lines: Vec<String> = (0..N)
            .map(|k| match &bad {
                Some((at, text)) if *at == k => text.clone(),
                _ => inst(k, "t"),
            })
            .collect();
        format!(
            "{{\"functions\":[{{\"name\":\"f\",\"allocations\":[{{\"name\":\"t\",\"kind\":\"Internal\",\"dtype\":\"float32\",\"memorylocations\":[{{\"name\":\"t\",\"type\":\"SB\",\"dims\":[1,4]}}]}}],\"blocks\":[{{\"name\":\"b\",\"instructions\":[\n{}\n]}}]}}]}}\n",
            lines.join(",\n")
        )
    };
    let p = d.join("large.json");
    let good = program(None);
    assert!(good.len() >= 4 << 20, "{} bytes", good.len());
    std::fs::write(&p, &good).unwrap();
    let (code, out, err) = birsim(&["validate", &s(&p)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("ok (1 function(s), {N} instruction(s))")), "{out}");

    std::fs::write(&p, program(Some((12_345, inst(12_345, "nope"))))).unwrap();
    let (code, _, err) = birsim(&["validate", &s(&p)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("memref 'nope' names no memory location") && err.contains("instruction #12345 'i12345'"),
        "{err}"
    );

    // A stray `]` opening instruction #9000's line: line 9002, column 1.
    std::fs::write(&p, program(Some((9_000, format!("]{}", inst(9_000, "t")))))).unwrap();
    let (code, _, err) = birsim(&["validate", &s(&p)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 9002 column 1"), "{err}");
}

/// Runs `birsim ARGS` with its stdout a pipe whose reader is already gone (`birsim ops | head
/// -1` after head exits): the write fails with EPIPE. Returns (exit code, stderr).
fn closed_pipe(args: &[&str]) -> (i32, String) {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_birsim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the child writes (it is still starting up); should it win the
    // race, its write succeeds and the run passes trivially, never spuriously fails.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into())
}

/// A closed pipe ends the output quietly (as Unix tools do): no "internal error", no message,
/// and the exit code the command's result makes it (issue #26 item 5).
#[test]
fn a_closed_pipe_is_not_an_error() {
    let program = s(&example("program.json"));
    let check_ok =
        s(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/check/check_not_implemented.json"));
    let cases: [(&[&str], i32); 8] = [
        (&["ops"], 0),
        (&["ops", "--json"], 0),
        (&["dump", &program], 0),
        (&["validate", &program], 0),
        (&["dge", &program], 0),
        (&["dge", &program, "--json"], 0),
        (&["completions", "bash"], 0),
        // check keeps its verdict's code (1: something does not run).
        (&["check", &check_ok], 1),
    ];
    for (args, want) in cases {
        let (code, err) = closed_pipe(args);
        assert_eq!(code, want, "{args:?}: {err}");
        assert!(!err.contains("internal error") && !err.contains("panic"), "{args:?}: {err}");
    }
}

/// `birsim dge` exits 1 when a DMA cannot become descriptors (its `error:` lines), after the
/// whole report, and says how many on stderr; 0 when every DMA can (issue #26 item 5).
#[test]
fn dge_error_lines_exit_1() {
    let d = scratch();
    let text = r#"{"functions":[{"name":"f","allocations":[
{"name":"a","kind":"ExternalInput","dtype":"float32","tensor_shape":[6],"memorylocations":[{"name":"a","type":"DRAM","dims":[1,24]}]},
{"name":"h","kind":"ExternalOutput","dtype":"bfloat16","tensor_shape":[6],"memorylocations":[{"name":"h","type":"DRAM","dims":[1,12]}]}],
"blocks":[
{"opcode":"DMACopy","name":"cast","engine":"DMA","ins":[{"kind":"physical_ap","memref":"a","dtype":"float32","offset":0,"ap":[[6,1],[1,6]]}],"outs":[{"kind":"physical_ap","memref":"h","dtype":"bfloat16","offset":0,"ap":[[6,1],[1,6]]}],"mode":"Copy"}
]}]}"#;
    let p = d.join("p.json");
    std::fs::write(&p, text).unwrap();
    for json in [false, true] {
        let mut args = vec!["dge", p.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let (code, out, err) = birsim(&args);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains("not expressible as descriptors"), "{out}");
        assert!(err.contains("1 DMA instruction(s) cannot become descriptors"), "{err}");
    }
    let (code, out, err) = birsim(&["dge", &s(&example("program.json"))]);
    assert_eq!(code, 0, "{out}{err}");
}

/// An output is named by its allocation (`b_set`) or its memory location (`b`) alike, in
/// `--output` and `--expect` (and `--input`: `a` / `a_set`); the expect report says the name
/// given (issue #26 item 4).
#[test]
fn outputs_take_allocation_and_location_names() {
    let d = scratch();
    let want = std::fs::read(example("expected_b.npy")).unwrap();
    for (input, name) in [("a", "b"), ("a_set", "b_set"), ("a", "b_set"), ("a_set", "b")] {
        let out = d.join(format!("{name}.npy"));
        let (code, stdout, err) = birsim(&[
            "run",
            &s(&example("program.json")),
            "--input",
            &format!("{input}={}", s(&example("a.npy"))),
            "--output",
            &format!("{name}={}", s(&out)),
            "--expect",
            &format!("{name}={}", s(&example("expected_b.npy"))),
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), want, "{name}");
        assert!(stdout.starts_with(&format!("{name}: matches (exact")), "{stdout}");
    }
}

/// An Activation Ln of −1 (a Memset of −1.0's bits, 0xBF800000, first): `birsim run` prints one warning line naming the
/// instruction, function, count and value and exits 0; `--strict-ranges` (= `--ranges fault`)
/// makes it a numerics fault, exit 1; both switches at once is a usage error.
#[test]
fn inputs_outside_the_valid_range_warn_or_fault() {
    let d = scratch();
    let ap = r#"{"kind":"physical_ap","memref":"t","dtype":"float32","ap":[[0,1],[1,1]]}"#;
    let inst = format!(
        r#"{{"opcode":"Memset","name":"m","mode":"Const","constant":3212836864,"ins":[],"outs":[{ap}]}},{{"opcode":"Activation","name":"act","engine":"Activation","ins":[{ap}],"outs":[{ap}],"func":"Ln"}}"#
    );
    let p = tiny_program(&d, &inst);
    let (code, _, err) = birsim(&["run", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "warning: 'act' (Ln): 1 input(s) outside the hardware's valid range [2^-64, 2^64] (e.g. -1.0)"
        ),
        "{err}"
    );
    for strict in [&["--strict-ranges"][..], &["--ranges", "fault"]] {
        let (code, _, err) = birsim(&[&["run", p.as_str()][..], strict].concat());
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("act") && err.contains("Ln"), "{err}");
    }
    let (code, _, err) = birsim(&["run", &p, "--strict-ranges", "--ranges", "warn"]);
    assert_eq!(code, 2, "{err}");
}
