//! The WORDS.json form (contract §6; docs/isa.md "Files and CLI"), feature `serde`: a word's JSON
//! text written out by hand here, parsed and encoded to bytes poked by hand from the re-facts §8
//! offsets; JSON round trips; unknown and missing keys are errors.
#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use indirection::isa::{S4d4Gt, Word};

/// A GATHER word as a user would write it.
const GATHER_JSON: &str = r#"{
  "opcode": "GATHER",
  "header": {"inst_flags": 1, "unnamed_2": "abcd"},
  "events": "0102030405060708",
  "src": {"start_addr": {"marker": "IMM", "partition": 2, "space": "SBUF", "offset": 64},
          "step_elem": [1, 4, 0, 0], "num_elem": [4, 2, 1, 1]},
  "in_dtype": "UINT32", "out_dtype": "FP32", "num_active_channels": 16, "unnamed_35": "5a",
  "index_miss_behavior": "SKIP_WRITE", "free_pool_buffer": 1, "unnamed_38": "1122",
  "immediate": 3735928559,
  "dst": {"start_addr": {"marker": "IMM", "partition": 3, "space": "PSUM", "offset": 512},
          "step_elem": [-1, 8, 0, 0], "num_elem": [8, 1, 1, 1]}
}"#;

fn gather_bytes() -> [u8; 64] {
    let mut w = [0u8; 64];
    let mut put = |at: usize, b: &[u8]| w[at..at + b.len()].copy_from_slice(b);
    put(0, &[0x68, 0x01, 0xAB, 0xCD]);
    put(4, &[1, 2, 3, 4, 5, 6, 7, 8]);
    put(12, &0x0008_0040u32.to_le_bytes()); // partition 2 << 18 = 0x0008_0000, offset 64
    put(16, &[1, 0, 4, 0, 0, 0, 0, 0]);
    put(24, &[4, 0, 2, 0, 1, 0, 1, 0]);
    put(32, &[0x09, 0x0A, 16, 0x5A, 1, 1, 0x11, 0x22]);
    put(40, &0xDEAD_BEEFu32.to_le_bytes());
    put(44, &0x0201_8200u32.to_le_bytes()); // PSUM 0x0200_0000 | 3 << 15 (0x0001_8000) | offset 0x200
    put(48, &[0xFF, 0xFF, 8, 0, 0, 0, 0, 0]);
    put(56, &[8, 0, 1, 0, 1, 0, 1, 0]);
    w
}

#[test]
fn hand_written_json_encodes_to_hand_poked_bytes() {
    let w: Word = serde_json::from_str(GATHER_JSON).unwrap();
    assert_eq!(w.encode(), gather_bytes());
    // And the other way: decode → JSON → the same value.
    let back: Word = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
    assert_eq!(back, w);
    let v = serde_json::to_value(Word::decode(&gather_bytes()).unwrap()).unwrap();
    assert_eq!(v["opcode"], "GATHER");
    assert_eq!(v["dst"]["start_addr"]["space"], "PSUM");
    assert_eq!(v["index_miss_behavior"], "SKIP_WRITE");
    assert_eq!(v["events"], "0102030405060708");
}

#[test]
fn every_word_kind_round_trips_through_json() {
    // EMBEDDING_UPDATE keeps its opcode byte: 0x79 is "EMBEDDING_UPDATE", 0xca the pseudo form.
    let mut raw = [0u8; 64];
    raw[0] = 0x79;
    raw[13] = 2; // MAX
    let w = Word::decode(&raw).unwrap();
    let text = serde_json::to_string(&w).unwrap();
    assert!(text.starts_with(r#"{"opcode":"EMBEDDING_UPDATE""#), "{text}");
    assert_eq!(serde_json::from_str::<Word>(&text).unwrap().encode(), raw);
    raw[0] = 0xCA;
    let text = serde_json::to_string(&Word::decode(&raw).unwrap()).unwrap();
    assert!(text.starts_with(r#"{"opcode":"PSEUDO_EMBEDDING_UPDATE""#), "{text}");
    assert_eq!(serde_json::from_str::<Word>(&text).unwrap().encode(), raw);
    // DMA_INDIRECT with ADDR8 flags and raw bits, INDIRECT_COPY with both union forms, POOL.
    let mut d = [0u8; 64];
    d[0] = 0xBB;
    d[16..24].copy_from_slice(&0x6D00_0012_3456_789Au64.to_le_bytes());
    d[61] = 0xAA;
    let mut ic = [0u8; 64];
    ic[0] = 0xE7;
    ic[12..16].copy_from_slice(&0x2800_0010u32.to_le_bytes());
    ic[22] = 0x99;
    ic[44..48].copy_from_slice(&0xA000_0000u32.to_le_bytes());
    let mut p = [0u8; 64];
    p[0] = 0x67;
    p[50] = 0x42;
    for bytes in [d, ic, p] {
        let w = Word::decode(&bytes).unwrap();
        let text = serde_json::to_string(&w).unwrap();
        assert_eq!(serde_json::from_str::<Word>(&text).unwrap().encode(), bytes, "{text}");
    }
    let text = serde_json::to_string(&Word::decode(&d).unwrap()).unwrap();
    assert!(
        text.contains(
            r#""marker":"ADDR_TABLE|SHAPE_REG|OFFSET_REG|OFFSET_WIDE","reserved":1,"address":"0x123456789a""#
        ),
        "{text}"
    );
}

#[test]
fn unknown_and_missing_keys_are_errors() {
    let unknown = GATHER_JSON.replace(r#""immediate""#, r#""immediat""#);
    let e = serde_json::from_str::<Word>(&unknown).unwrap_err().to_string();
    assert!(e.contains("immediat"), "{e}");
    let extra = GATHER_JSON.replace(r#""in_dtype""#, r#""bogus": 1, "in_dtype""#);
    let e = serde_json::from_str::<Word>(&extra).unwrap_err().to_string();
    assert!(e.contains("unknown field `bogus`"), "{e}");
    let missing = GATHER_JSON.replace(r#""free_pool_buffer": 1,"#, "");
    let e = serde_json::from_str::<Word>(&missing).unwrap_err().to_string();
    assert!(e.contains("missing field `free_pool_buffer`"), "{e}");
    let bad_enum = GATHER_JSON.replace("SKIP_WRITE", "SKIP");
    let e = serde_json::from_str::<Word>(&bad_enum).unwrap_err().to_string();
    assert!(e.contains("SKIP") && e.contains("IMMEDIATE_WRITE"), "{e}");
    let bad_opcode = GATHER_JSON.replace(r#""GATHER""#, r#""GATHR""#);
    assert!(serde_json::from_str::<Word>(&bad_opcode).is_err());
    let short = GATHER_JSON.replace("[4, 2, 1, 1]", "[4, 2, 1]");
    let e = serde_json::from_str::<Word>(&short).unwrap_err().to_string();
    assert!(e.contains("num_elem has 3 entries, expected 4"), "{e}");
    let wide = GATHER_JSON.replace(r#""partition": 2"#, r#""partition": 128"#);
    assert!(serde_json::from_str::<Word>(&wide).unwrap_err().to_string().contains("7 bits"));
    // X3: a PSUM offset has 15 bits; reserved bits are kept in place and must lie in the
    // space's reserved mask (PSUM 0x1DC0_0000).
    let psum_off =
        GATHER_JSON.replace(r#""space": "PSUM", "offset": 512"#, r#""space": "PSUM", "offset": 32768"#);
    assert!(serde_json::from_str::<Word>(&psum_off).unwrap_err().to_string().contains("at most 32767"));
    let res = GATHER_JSON.replace(
        r#""space": "PSUM", "offset": 512"#,
        r#""space": "PSUM", "offset": 512, "reserved": 4194304"#,
    );
    let w: Word = serde_json::from_str(&res).unwrap();
    let Word::Gather(S4d4Gt { dst, .. }) = w else { panic!() };
    assert_eq!(dst.start_addr.reserved, 0x0040_0000);
    assert_eq!(dst.start_addr.to_bits(), 0x0241_8200, "bit 22 kept in place");
    let res_out = GATHER_JSON
        .replace(r#""space": "PSUM", "offset": 512"#, r#""space": "PSUM", "offset": 512, "reserved": 1"#);
    assert!(serde_json::from_str::<Word>(&res_out).unwrap_err().to_string().contains("reserved"));
    let hex = GATHER_JSON.replace(r#""5a""#, r#""5""#);
    assert!(serde_json::from_str::<Word>(&hex).unwrap_err().to_string().contains("hex"));
    // An unnamed ISA dtype code is spelled 0xNN.
    let code = GATHER_JSON.replace(r#""FP32""#, r#""0x17""#);
    let w: Word = serde_json::from_str(&code).unwrap();
    let Word::Gather(S4d4Gt { out_dtype, .. }) = w else { panic!() };
    assert_eq!(out_dtype.0, 0x17);
}
