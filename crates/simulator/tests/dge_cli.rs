//! `birsim dge`, run as a user would (tests/cli.rs style): the text listing (descriptor lines,
//! counts, bytes, the small-descriptor warning, DMABlock attribution, an indirect op listed from
//! its --input or noted statically), `--json`, and bad usage. Expected values are worked by hand
//! from docs/dge.md in the comments.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{birsim, s, scratch};

use std::path::Path;

/// An int32 .npy of `v` (shape (n,)).
fn npy_i32(v: &[i32]) -> Vec<u8> {
    let mut h = format!("{{'descr': '<i4', 'fortran_order': False, 'shape': ({},), }}", v.len()).into_bytes();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    f.extend_from_slice(&(h.len() as u16).to_le_bytes());
    f.extend_from_slice(&h);
    f.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    f
}

const AP_A: &str = r#"{"kind":"physical_ap","memref":"a","dtype":"float32","offset":0,"ap":[[16,4],[1,8]]}"#;
const AP_B: &str = r#"{"kind":"physical_ap","memref":"b","dtype":"float32","offset":0,"ap":[[8,4],[1,8]]}"#;

/// Locations a (ordinal 0, base 0x100_0000_0000), x (1, 0x200_…), b (2, 0x300_…), big (3) and
/// big2 (4); instructions: a 2-D copy, a DMABlock with one descriptor copy, an IndirectLoad of
/// 4 rows of 16 fp32 by x, and a 4 KiB copy.
fn program(d: &Path) -> String {
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[
{{"name":"a","kind":"ExternalInput","dtype":"float32","tensor_shape":[64],"memorylocations":[{{"name":"a","type":"DRAM","dims":[1,256]}}]}},
{{"name":"x","kind":"ExternalInput","dtype":"int32","tensor_shape":[4],"memorylocations":[{{"name":"x","type":"DRAM","dims":[1,16]}}]}},
{{"name":"b","kind":"ExternalOutput","dtype":"float32","tensor_shape":[64],"memorylocations":[{{"name":"b","type":"DRAM","dims":[1,256]}}]}},
{{"name":"big","kind":"Internal","dtype":"float32","tensor_shape":[1024],"memorylocations":[{{"name":"big","type":"DRAM","dims":[1,4096]}}]}},
{{"name":"big2","kind":"Internal","dtype":"float32","tensor_shape":[1024],"memorylocations":[{{"name":"big2","type":"DRAM","dims":[1,4096]}}]}}],
"blocks":[
{{"opcode":"DMACopy","name":"c0","engine":"DMA","ins":[{AP_A}],"outs":[{AP_B}],"mode":"Copy"}},
{{"opcode":"DMABlock","name":"blk","engine":"DMA","ins":[],"outs":[],"descriptors":[{{"opcode":"DMADescriptorCopy","name":"d0","engine":"DMA","ins":[{AP_A}],"outs":[{AP_B}]}}]}},
{{"opcode":"IndirectLoad","name":"g","engine":"DMA","ins":[{{"kind":"physical_ap","memref":"a","dtype":"float32","offset":0,"ap":[[1,1],[16,4]]}},{{"kind":"physical_ap","memref":"x","dtype":"int32","offset":0,"ap":[[4,1],[1,4]]}}],"outs":[{{"kind":"physical_ap","memref":"b","dtype":"float32","offset":0,"ap":[[16,4],[1,16]]}}]}},
{{"opcode":"DMACopy","name":"c1","engine":"DMA","ins":[{{"kind":"physical_ap","memref":"big","dtype":"float32","offset":0,"ap":[[1024,1],[1,1024]]}}],"outs":[{{"kind":"physical_ap","memref":"big2","dtype":"float32","offset":0,"ap":[[1024,1],[1,1024]]}}],"mode":"Copy"}}
]}}]}}"#
    );
    let p = d.join("p.json");
    std::fs::write(&p, text).unwrap();
    s(&p)
}

/// c0: rows of 8 fp32 (32 bytes, fused) 64 bytes apart in a, 32 apart in b: one descriptor
/// [4 × 64/32], 128 bytes, under 512 → a warning. The block's d0 is the same. c1: one 4096-byte
/// element, no warning. g without x given: a note.
#[test]
fn text_listing_with_and_without_the_index_input() {
    let d = scratch();
    let p = program(&d);
    let (code, out, err) = birsim(&["dge", &p]);
    assert_eq!(code, 0, "{err}");
    let want_c0 = "DMACopy 'c0': 1 descriptor(s), 128 bytes\n  #0 DIRECT2D src=0x10000000000 dst=0x30000000000 elem=32 dims=[4x64/32] op=NONE bytes=128\n  warning: 1 of 1 descriptor(s) move fewer than 512 bytes (smallest 128 bytes)\n";
    assert!(out.contains(want_c0), "{out}");
    assert!(out.contains("DMADescriptorCopy 'd0' in DMABlock 'blk': 1 descriptor(s), 128 bytes"), "{out}");
    assert!(out.contains("IndirectLoad 'g': no static list: "), "{out}");
    assert!(out.contains("DMACopy 'c1': 1 descriptor(s), 4096 bytes\n  #0 DIRECT2D src=0x40000000000 dst=0x50000000000 elem=4096 dims=[] op=NONE bytes=4096\ntotal"), "{out}");
    assert!(out.contains("  0x0000030000000000 b\n"), "{out}");
    // Indices 3, 0, 2, 1: table entry r of 16 fp32 (64 bytes) at a + 64r into b row j at b + 64j.
    let x = d.join("x.npy");
    std::fs::write(&x, npy_i32(&[3, 0, 2, 1])).unwrap();
    let (code, out, err) = birsim(&["dge", &p, "--input", &format!("x={}", s(&x))]);
    assert_eq!(code, 0, "{err}");
    let want_g = "IndirectLoad 'g': 4 descriptor(s), 256 bytes\n  #0 INDIRECT1D src=0x100000000c0 dst=0x30000000000 elem=64 dims=[] op=NONE bytes=64\n  #1 INDIRECT1D src=0x10000000000 dst=0x30000000040 elem=64 dims=[] op=NONE bytes=64\n  #2 INDIRECT1D src=0x10000000080 dst=0x30000000080 elem=64 dims=[] op=NONE bytes=64\n  #3 INDIRECT1D src=0x10000000040 dst=0x300000000c0 elem=64 dims=[] op=NONE bytes=64\n  warning: 4 of 4";
    assert!(out.contains(want_g), "{out}");
    assert!(
        out.contains("total: 4 DMA instruction(s), 7 descriptor(s), 4608 bytes, 3 with small descriptors"),
        "{out}"
    );
    // Index 7's entry (elements 112..=127) leaves a's 64 elements: an error line by default,
    // one descriptor fewer with skip.
    std::fs::write(&x, npy_i32(&[3, 0, 7, 1])).unwrap();
    let (_, out, _) = birsim(&["dge", &p, "--input", &format!("x={}", s(&x))]);
    assert!(
        out.contains("IndirectLoad 'g': error: index ins[1] element 2 = 7 is outside the table's location: its entry spans elements 112..=127, the location holds 0..64"),
        "{out}"
    );
    let (_, out, _) = birsim(&["dge", &p, "--input", &format!("x={}", s(&x)), "--oob", "skip"]);
    assert!(out.contains("IndirectLoad 'g': 3 descriptor(s), 192 bytes"), "{out}");
}

#[test]
fn json_listing() {
    let d = scratch();
    let p = program(&d);
    let (code, out, err) = birsim(&["dge", &p, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let insts = v["instructions"].as_array().unwrap();
    assert_eq!(insts.len(), 4);
    assert_eq!(insts[0]["name"], "c0");
    assert_eq!(insts[0]["count"], 1);
    assert_eq!(insts[0]["small"], 1);
    let d0 = &insts[0]["descriptors"][0];
    assert_eq!(d0["kind"], "DIRECT2D");
    assert_eq!(d0["src"], "0x10000000000");
    assert_eq!(d0["dst"], "0x30000000000");
    assert_eq!(d0["elem_size"], 32);
    assert_eq!(d0["dims"][0], serde_json::json!({"num": 4, "src_step": 64, "dst_step": 32}));
    assert_eq!(insts[1]["block"], "blk");
    assert!(insts[2]["note"].is_string());
    assert_eq!(insts[3]["small"], 0);
    assert_eq!(v["address_space"][2], serde_json::json!({"location": "b", "base": "0x30000000000"}));
}

#[test]
fn bad_usage_exits_2() {
    let (code, _, err) = birsim(&["dge"]);
    assert_eq!(code, 2);
    assert!(err.contains("required arguments were not provided:\n  <PROGRAM.json>"), "{err}");
    let d = scratch();
    let p = program(&d);
    let (code, _, err) = birsim(&["dge", &p, "--json=yes"]);
    assert_eq!(code, 2);
    assert!(err.contains("unexpected value 'yes' for '--json'"), "{err}");
    let (code, _, err) = birsim(&["dge", &p, "--input", "nope=/nonexistent.npy"]);
    assert_eq!(code, 2);
    assert!(err.contains("--input nope"), "{err}");
}

/// A casting copy is an error line (G31); a transpose is listed as TRANSPOSE with the permuted
/// source steps: a 4-level [1,1,2,3] fp32 source (Y step 3, X step 1) transposed by code XYZW
/// (perm 3,2,1,0) into a packed [3,2,1,1] destination: dst(c0, c1) = src(y = c1, x = c0), so the
/// inner destination dim (num 2, dst step 4 B) walks the source by 3 elements (12 B) and the
/// outer (num 3, dst 8 B) by 1 element (4 B): `dims=[2x12/4, 3x4/8]`, 24 bytes.
#[test]
fn cast_and_transpose_listing() {
    let d = scratch();
    let text = r#"{"functions":[{"name":"f","allocations":[
{"name":"a","kind":"ExternalInput","dtype":"float32","tensor_shape":[6],"memorylocations":[{"name":"a","type":"DRAM","dims":[1,24]}]},
{"name":"h","kind":"ExternalOutput","dtype":"bfloat16","tensor_shape":[6],"memorylocations":[{"name":"h","type":"DRAM","dims":[1,12]}]},
{"name":"b","kind":"ExternalOutput","dtype":"float32","tensor_shape":[6],"memorylocations":[{"name":"b","type":"DRAM","dims":[1,24]}]}],
"blocks":[
{"opcode":"DMACopy","name":"cast","engine":"DMA","ins":[{"kind":"physical_ap","memref":"a","dtype":"float32","offset":0,"ap":[[6,1],[1,6]]}],"outs":[{"kind":"physical_ap","memref":"h","dtype":"bfloat16","offset":0,"ap":[[6,1],[1,6]]}],"mode":"Copy"},
{"opcode":"DMACopy","name":"tr","engine":"DMA","ins":[{"kind":"physical_ap","memref":"a","dtype":"float32","offset":0,"ap":[[6,1],[6,1],[3,2],[1,3]]}],"outs":[{"kind":"physical_ap","memref":"b","dtype":"float32","offset":0,"ap":[[2,3],[1,2],[1,1],[1,1]]}],"mode":"Transpose","transpose_op":"XYZW"}
]}]}"#;
    let p = d.join("p.json");
    std::fs::write(&p, text).unwrap();
    let (code, out, err) = birsim(&["dge", &s(&p)]);
    // The cast's error line makes the exit code 1; the whole report is still printed.
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("1 DMA instruction(s) cannot become descriptors"), "{err}");
    assert!(out.contains("DMACopy 'cast': error: not expressible as descriptors: "), "{out}");
    assert!(
        out.contains("  #0 TRANSPOSE src=0x10000000000 dst=0x30000000000 elem=4 dims=[2x12/4, 3x4/8] op=NONE bytes=24\n"),
        "{out}"
    );
}
