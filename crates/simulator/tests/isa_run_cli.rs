//! `birsim isa run`, run as a user would: the happy path (words assembled by hand from the
//! contract's offsets, expected bytes from seed 004 §7a), a guest fault (exit 1, no output
//! folder), bad files (exit 2 naming the file) and an output folder that is not empty.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{birsim, s, scratch};

use simulator::npy::Npy;
use std::path::{Path, PathBuf};

/// POOL_BUFFER_LOAD 0x67 of 4 fp32 at SBUF partition 0 offset 1024 (window start 0, mask 3),
/// then GATHER 0x68 of 3 u32 indices at offset 0 into offset 256, IMMEDIATE_WRITE, immediate
/// 0x3F800000 (1.0).
fn words() -> Vec<u8> {
    let mut load = [0u8; 64];
    load[0] = 0x67;
    load[12..16].copy_from_slice(&1024u32.to_le_bytes());
    load[16..18].copy_from_slice(&1i16.to_le_bytes());
    for d in 0..4 {
        load[24 + 2 * d..26 + 2 * d].copy_from_slice(&(if d == 0 { 4u16 } else { 1 }).to_le_bytes());
    }
    load[32] = 0x0A;
    load[34] = 1;
    load[36..38].copy_from_slice(&3u16.to_le_bytes());
    let mut g = [0u8; 64];
    g[0] = 0x68;
    g[12..16].copy_from_slice(&0u32.to_le_bytes());
    g[16..18].copy_from_slice(&1i16.to_le_bytes());
    g[44..48].copy_from_slice(&256u32.to_le_bytes());
    g[48..50].copy_from_slice(&1i16.to_le_bytes());
    for d in 0..4 {
        let n = (if d == 0 { 3u16 } else { 1 }).to_le_bytes();
        g[24 + 2 * d..26 + 2 * d].copy_from_slice(&n);
        g[56 + 2 * d..58 + 2 * d].copy_from_slice(&n);
    }
    g[32] = 0x09;
    g[33] = 0x0A;
    g[34] = 1;
    g[40..44].copy_from_slice(&0x3F80_0000u32.to_le_bytes());
    [load, g].concat()
}

/// A state folder: SBUF image [128, 1040]: indices [2, 9, 0] at 0, table [10, 11, 12, 13] at 1024.
fn state(d: &Path) -> PathBuf {
    let st = d.join("state");
    std::fs::create_dir_all(&st).unwrap();
    let mut sb = vec![0u8; 128 * 1040];
    for (k, v) in [2u32, 9, 0].iter().enumerate() {
        sb[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    for (k, v) in [10.0f32, 11.0, 12.0, 13.0].iter().enumerate() {
        sb[1024 + 4 * k..1028 + 4 * k].copy_from_slice(&v.to_le_bytes());
    }
    let npy = Npy { descr: "|u1".into(), shape: vec![128, 1040], data: sb };
    std::fs::write(st.join("sbuf.npy"), npy.to_bytes()).unwrap();
    let dram = Npy { descr: "|u1".into(), shape: vec![4], data: vec![1, 2, 3, 4] };
    std::fs::write(st.join("table.npy"), dram.to_bytes()).unwrap();
    std::fs::write(
        st.join("STATE.json"),
        r#"{"gen": "v2", "sbuf": "sbuf.npy", "dram": [{"name": "table", "base": "0x100000", "file": "table.npy"}]}"#,
    )
    .unwrap();
    st.join("STATE.json")
}

#[test]
fn runs_words_and_writes_the_state() {
    let d = scratch();
    std::fs::write(d.join("w.bin"), words()).unwrap();
    let out = d.join("out");
    let (code, _, err) =
        birsim(&["isa", "run", &s(&d.join("w.bin")), "--state", &s(&state(&d)), "--out-dir", &s(&out)]);
    assert_eq!(code, 0, "{err}");
    let sb = Npy::parse(&std::fs::read(out.join("sbuf.npy")).unwrap()).unwrap();
    assert_eq!(sb.shape, [128, 192 << 10], "SBUF is written at full size");
    // Indices 2, 9, 0: hit → 12.0, miss → the immediate 1.0, hit → 10.0.
    let want: Vec<u8> = [12.0f32, 1.0, 10.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(sb.data[256..268], want);
    let psum = Npy::parse(&std::fs::read(out.join("psum.npy")).unwrap()).unwrap();
    assert_eq!(psum.shape, [128, 16384]);
    let table = Npy::parse(&std::fs::read(out.join("table.npy")).unwrap()).unwrap();
    assert_eq!(table.data, [1, 2, 3, 4]);
    let pool = Npy::parse(&std::fs::read(out.join("pool.npy")).unwrap()).unwrap();
    assert_eq!(pool.shape, [128, 16]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("state.json")).unwrap()).unwrap();
    assert_eq!(json["gen"], "v2");
    assert_eq!(json["pool_buffer"]["dtype"], "float32");
    assert_eq!(json["dram"][0]["base"], "0x100000");
    // The written state is a valid input state: running no words reproduces it.
    std::fs::write(d.join("none.bin"), b"").unwrap();
    let again = d.join("again");
    let (code, _, err) = birsim(&[
        "isa",
        "run",
        &s(&d.join("none.bin")),
        "--state",
        &s(&out.join("state.json")),
        "--out-dir",
        &s(&again),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(again.join("sbuf.npy")).unwrap(), std::fs::read(out.join("sbuf.npy")).unwrap());
}

#[test]
fn a_fault_is_exit_1_and_writes_nothing() {
    let d = scratch();
    // The GATHER alone: nothing loaded.
    std::fs::write(d.join("w.bin"), &words()[64..]).unwrap();
    let out = d.join("out");
    let (code, _, err) =
        birsim(&["isa", "run", &s(&d.join("w.bin")), "--state", &s(&state(&d)), "--out-dir", &s(&out)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("fault state: word 0 (GATHER)"), "{err}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2, "no temporary folder left behind");
}

#[test]
fn bad_files_are_exit_2() {
    let d = scratch();
    let st = state(&d);
    std::fs::write(d.join("w.bin"), &words()[..70]).unwrap();
    let out = d.join("out");
    let (code, _, err) =
        birsim(&["isa", "run", &s(&d.join("w.bin")), "--state", &s(&st), "--out-dir", &s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("not a whole number of 64-byte words"), "{err}");
    std::fs::write(d.join("w.bin"), words()).unwrap();
    std::fs::write(st.parent().unwrap().join("STATE.json"), r#"{"gen": "v2", "psum": "missing.npy"}"#)
        .unwrap();
    let (code, _, err) =
        birsim(&["isa", "run", &s(&d.join("w.bin")), "--state", &s(&st), "--out-dir", &s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.npy"), "{err}");
    assert!(!out.exists());
    let (code, _, err) = birsim(&["isa", "run", &s(&d.join("w.bin")), "--out-dir", &s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("--state"), "{err}");
}

#[test]
fn a_non_empty_output_folder_is_refused() {
    let d = scratch();
    std::fs::write(d.join("w.bin"), words()).unwrap();
    let out = d.join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let (code, _, err) =
        birsim(&["isa", "run", &s(&d.join("w.bin")), "--state", &s(&state(&d)), "--out-dir", &s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");
    // An empty existing folder is filled.
    std::fs::remove_file(out.join("keep.txt")).unwrap();
    let (code, _, err) =
        birsim(&["isa", "run", &s(&d.join("w.bin")), "--state", &s(&state(&d)), "--out-dir", &s(&out)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.join("state.json").is_file());
}
