//! `birsim isa decode|encode|validate` run as a user would (docs/isa.md "Files and CLI"): words
//! poked by hand from the re-facts §8 offsets, the JSON they decode to, encode back to the same
//! bytes, validation per generation, and every input error with its exit code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{s, scratch};

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs birsim; returns (exit code, stdout bytes, stderr).
fn birsim(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_birsim")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), out.stdout, String::from_utf8_lossy(&out.stderr).into())
}

fn put(w: &mut [u8; 64], at: usize, b: &[u8]) {
    w[at..at + b.len()].copy_from_slice(b);
}

/// A valid GATHER: 4 channels × 8 u32 indices at SBUF p0, into fp32 at `dst` (an ADDR4 u32).
fn gather(dst: u32) -> [u8; 64] {
    let mut w = [0u8; 64];
    put(&mut w, 0, &[0x68]);
    put(&mut w, 16, &[1, 0]); // src step X
    put(&mut w, 24, &[8, 0, 1, 0, 1, 0, 1, 0]); // src counts
    put(&mut w, 32, &[0x09, 0x0A, 4]); // UINT32, FP32, 4 channels
    put(&mut w, 44, &dst.to_le_bytes());
    put(&mut w, 48, &[1, 0]);
    put(&mut w, 56, &[8, 0, 1, 0, 1, 0, 1, 0]);
    w
}

/// A valid DMA_INDIRECT gather of 16 fp32 values from DRAM 0x1000 (re-facts §8 offsets).
fn dma() -> [u8; 64] {
    let mut w = [0u8; 64];
    put(&mut w, 0, &[0xBB]);
    put(&mut w, 14, &[128, 0]);
    put(&mut w, 16, &0x1000u64.to_le_bytes());
    put(&mut w, 24, &[1, 0, 0, 0, 16, 0, 4, 0]); // step 1, 16 elements, 4 bytes
    put(&mut w, 32, &((1u64 << 55) | 0x100).to_le_bytes()); // on chip: SBUF p0 offset 0x100
    put(&mut w, 40, &[1, 0, 0, 0, 16, 0, 4, 0]);
    put(&mut w, 48, &0x800u32.to_le_bytes());
    put(&mut w, 56, &[0x0A, 0x0A]);
    w
}

fn file(d: &Path, name: &str, words: &[[u8; 64]]) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, words.concat()).unwrap();
    p
}

#[test]
fn decode_prints_json_that_encode_turns_back_into_the_same_bytes() {
    let d = scratch();
    // dst (X3): PSUM (bit 25 = 0x0200_0000) | partition 2 << 15 (= 0x0001_0000) | offset 0x40
    // = 0x0201_0040.
    let words = [gather(0x0201_0040), dma()];
    let bin = file(&d, "w.bin", &words);
    let (code, out, err) = birsim(&["isa", "decode", &s(&bin)]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v[0]["opcode"], "GATHER");
    assert_eq!(
        v[0]["dst"]["start_addr"],
        serde_json::json!({"marker": "IMM", "partition": 2, "space": "PSUM", "offset": 64})
    );
    assert_eq!(v[0]["in_dtype"], "UINT32");
    assert_eq!(v[1]["opcode"], "DMA_INDIRECT");
    assert_eq!(v[1]["src_start_addr"], serde_json::json!({"marker": "IMM", "address": "0x1000"}));
    assert_eq!(v[1]["flags"]["indirect_mode"], "SRC_INDIRECTION");

    let json = d.join("w.json");
    std::fs::write(&json, &out).unwrap();
    let back = d.join("back.bin");
    let (code, _, err) = birsim(&["isa", "encode", &s(&json), "-o", &s(&back)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&back).unwrap(), words.concat());
    // Without -o the bytes go to stdout.
    let (code, out, err) = birsim(&["isa", "encode", &s(&json)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, words.concat());
}

#[test]
fn validate_prints_every_violation_with_field_and_rule() {
    let d = scratch();
    let bin = file(&d, "ok.bin", &[gather(0x1000), dma()]);
    let (code, _, err) = birsim(&["isa", "validate", &s(&bin), "--gen", "v2"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("ok (2 word(s) valid on v2)"), "{err}");

    // A PSUM destination (bit 25, X3) is fine on v4 but not on v5 (seed 004 §1); word 1 also has 64 index
    // channels (must be 128) and priority class 5.
    let mut bad_dma = dma();
    bad_dma[14] = 64;
    bad_dma[61] = 5;
    let bin = file(&d, "bad.bin", &[gather(0x0200_0000), bad_dma]);
    let (code, out, err) = birsim(&["isa", "validate", &s(&bin), "--gen=v5"]);
    assert_eq!(code, 1, "{err}");
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("word 0: dst.start_addr.space: ") && lines[0].ends_with("[gather-sbuf-only-v5]"),
        "{out}"
    );
    assert_eq!(lines[1], "word 1: idx_num_active_channels: 64; must be 128 [dma-idx-channels]");
    assert_eq!(lines[2], "word 1: dma_configs.priority_class: 5; expected 0..=4 [priority-class]");
    assert!(err.contains("3 violation(s) in 2 of 2 word(s) on v5"), "{err}");
    let (code, out, _) =
        birsim(&["isa", "validate", &s(&file(&d, "psum.bin", &[gather(0x0200_0000)])), "--gen", "v4"]);
    assert_eq!((code, out.len()), (0, 0));
    // A word that does not decode is reported on its own line too.
    let mut no_layout = [0u8; 64];
    no_layout[0] = 0xB8;
    let (code, out, _) = birsim(&["isa", "validate", &s(&file(&d, "b8.bin", &[no_layout])), "--gen", "v3"]);
    assert_eq!(code, 1);
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.starts_with("word 0: header.opcode: opcode 0xb8 has no wire layout")
            && out.trim_end().ends_with("[decode]"),
        "{out}"
    );
}

#[test]
fn bad_inputs_are_exit_2_with_a_clear_message() {
    let d = scratch();
    let short = d.join("short.bin");
    std::fs::write(&short, [0u8; 65]).unwrap();
    for cmd in [&["isa", "decode", &s(&short)][..], &["isa", "validate", &s(&short), "--gen", "v2"]] {
        let (code, _, err) = birsim(cmd);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(
                "65 bytes is not a whole number of 64-byte words (1 word(s) and 1 byte(s) left over)"
            ),
            "{err}"
        );
    }
    let mut bad_miss = gather(0x1000);
    bad_miss[36] = 7;
    let (code, _, err) = birsim(&["isa", "decode", &s(&file(&d, "m.bin", &[gather(0x1000), bad_miss]))]);
    assert_eq!(code, 2);
    assert!(
        err.contains("word 1: index_miss_behavior: index_miss_behavior = 0x07 is not a valid value"),
        "{err}"
    );
    let (code, _, err) = birsim(&["isa", "validate", &s(&file(&d, "v.bin", &[dma()]))]);
    assert_eq!(code, 2);
    assert!(err.contains("required arguments were not provided:\n  --gen <GEN>"), "{err}");
    let (code, _, err) = birsim(&["isa", "validate", &s(&file(&d, "v.bin", &[dma()])), "--gen", "v9"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("invalid value 'v9' for '--gen <GEN>'\n  [possible values: v2, v3, v4, v5]"),
        "{err}"
    );
    let (code, _, err) = birsim(&["isa", "frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("unrecognized subcommand 'frobnicate'"), "{err}");
    let (code, _, _) = birsim(&["isa", "decode", &s(&d.join("missing.bin"))]);
    assert_eq!(code, 2);
}

#[test]
fn encode_names_the_word_and_writes_nothing_on_error() {
    let d = scratch();
    let json = d.join("w.json");
    let out = d.join("out.bin");
    std::fs::write(&json, r#"[{"opcode": "GATHER", "bogus": 1}]"#).unwrap();
    let (code, _, err) = birsim(&["isa", "encode", &s(&json), "-o", &s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("word 0: unknown field `bogus`"), "{err}");
    assert!(!out.exists());
    std::fs::write(&json, "[{").unwrap();
    let (code, _, err) = birsim(&["isa", "encode", &s(&json), "-o", &s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("line 1"), "{err}");
    assert!(!out.exists());
    std::fs::write(&json, r#"[{"opcode": "DMA_MEMCPY"}]"#).unwrap();
    let (code, _, err) = birsim(&["isa", "encode", &s(&json)]);
    assert_eq!(code, 2);
    assert!(err.contains("word 0: unknown variant `DMA_MEMCPY`"), "{err}");
    // Nothing left behind in the folder (no temporary files).
    let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [std::ffi::OsString::from("w.json")]);
}
