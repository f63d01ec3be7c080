//! Running whole 64-byte words (contract §3): words assembled by hand from the byte offsets of
//! contract §1 (never by our encoder), validation before execution, the fault's word index,
//! not-implemented markers, and the NKI two-window GATHER sequence.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use indirection::isa::Generation;
use indirection::isa::machine::{FaultKind, IsaOptions, Machine};

const SB: usize = 192 << 10;

/// ADDR4-IMM bits (X3): space bit 25; partition << 18 (SBUF) or << 15 (PSUM), re-facts §6; the
/// offset below it.
fn addr4(partition: u32, psum: bool, offset: u32) -> u32 {
    if psum { 1 << 25 | partition << 15 | offset } else { partition << 18 | offset }
}

/// A TENSOR4D at `at`: [ADDR4][4 × i16 step][4 × u16 num].
fn tensor4(w: &mut [u8; 64], at: usize, addr: u32, step: [i16; 4], num: [u16; 4]) {
    w[at..at + 4].copy_from_slice(&addr.to_le_bytes());
    for d in 0..4 {
        w[at + 4 + 2 * d..at + 6 + 2 * d].copy_from_slice(&step[d].to_le_bytes());
        w[at + 12 + 2 * d..at + 14 + 2 * d].copy_from_slice(&num[d].to_le_bytes());
    }
}

/// POOL_BUFFER_LOAD 0x67: src +12, dtype +32, channels +34, mask +36 (u16), start +40 (u32).
fn pool_load(src: u32, n: u16, dtype: u8, channels: u8, mask: u16, start: u32) -> [u8; 64] {
    let mut w = [0u8; 64];
    w[0] = 0x67;
    tensor4(&mut w, 12, src, [1, 0, 0, 0], [n, 1, 1, 1]);
    w[32] = dtype;
    w[34] = channels;
    w[36..38].copy_from_slice(&mask.to_le_bytes());
    w[40..44].copy_from_slice(&start.to_le_bytes());
    w
}

/// GATHER 0x68: src +12, in +32, out +33, channels +34, miss +36, free +37, immediate +40,
/// dst +44.
#[expect(clippy::too_many_arguments, reason = "one argument per field")]
fn gather(
    src: u32,
    dst: u32,
    n: u16,
    in_dt: u8,
    out_dt: u8,
    channels: u8,
    skip: bool,
    free: bool,
    imm: u32,
) -> [u8; 64] {
    let mut w = [0u8; 64];
    w[0] = 0x68;
    tensor4(&mut w, 12, src, [1, 0, 0, 0], [n, 1, 1, 1]);
    w[32] = in_dt;
    w[33] = out_dt;
    w[34] = channels;
    w[36] = u8::from(skip);
    w[37] = u8::from(free);
    w[40..44].copy_from_slice(&imm.to_le_bytes());
    tensor4(&mut w, 44, dst, [1, 0, 0, 0], [n, 1, 1, 1]);
    w
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn machine() -> Machine {
    let mut m = Machine::new(Generation::V2);
    // Partition 0: indices at 0, table (8 fp32) at 1024, destination at 256 (= -1.0 x 6).
    let s = m.sbuf_mut();
    s[0..24].copy_from_slice(&u32s(&[7, 0, 4, 9, 3, 5]));
    s[1024..1056].copy_from_slice(&f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]));
    s[256..280].copy_from_slice(&f32s(&[-1.0; 6]));
    m
}

/// The NKI lowering of one nc_n_gather over 8 elements in two 4-element windows: load window 0,
/// GATHER IMMEDIATE_WRITE 0, load window 1, GATHER SKIP_WRITE with free_pool_buffer.
#[test]
fn two_window_gather_sequence() {
    let mut m = machine();
    let words = [
        pool_load(addr4(0, false, 1024), 4, 0x0A, 1, 3, 0),
        gather(addr4(0, false, 0), addr4(0, false, 256), 6, 0x09, 0x0A, 1, false, false, 0),
        pool_load(addr4(0, false, 1040), 4, 0x0A, 1, 3, 4),
        gather(addr4(0, false, 0), addr4(0, false, 256), 6, 0x09, 0x0A, 1, true, true, 0),
    ];
    m.run_raw(&words, &IsaOptions::default()).unwrap();
    // 7 → 8, 0 → 1, 4 → 5, 9 → in neither window → 0 (first gather), 3 → 4, 5 → 6.
    assert_eq!(m.sbuf()[256..280], f32s(&[8.0, 1.0, 5.0, 0.0, 4.0, 6.0]));
    assert!(!m.pool_buffer.loaded, "the last gather freed it");
}

#[test]
fn a_fault_names_its_word_and_stops_the_run() {
    let mut m = machine();
    // Word 1 gathers with nothing loaded: a `state` fault; word 2 never runs.
    let words = [
        gather(addr4(0, false, 0), addr4(0, false, 256), 6, 0x09, 0x0A, 1, true, true, 0),
        gather(addr4(0, false, 0), addr4(0, false, 256), 6, 0x09, 0x0A, 1, false, false, 0),
        pool_load(addr4(0, false, 1024), 4, 0x0A, 1, 3, 0),
    ];
    let e = m.run_raw(&words, &IsaOptions::default()).unwrap_err();
    assert_eq!((e.kind, e.word), (FaultKind::State, 0));
    assert!(e.to_string().starts_with("word 0 (GATHER)"), "{e}");
    assert!(!m.pool_buffer.loaded);
}

#[test]
fn invalid_words_fault_before_running() {
    let mut m = machine();
    let before = m.clone();
    // in_dtype FP32 is not an index dtype; num_active_channels 0.
    let w = gather(addr4(0, false, 0), addr4(0, false, 256), 6, 0x0A, 0x0A, 0, false, false, 0);
    let e = m.run_raw(&[w], &IsaOptions::default()).unwrap_err();
    assert_eq!(e.kind, FaultKind::Invalid);
    assert!(e.message.contains("in_dtype") && e.message.contains("num_active_channels"), "{e}");
    assert_eq!(m, before);
    // An unknown opcode and one without a wire layout are invalid too.
    let mut w = [0u8; 64];
    w[0] = 0x12;
    assert_eq!(m.run_raw(&[w], &IsaOptions::default()).unwrap_err().kind, FaultKind::Invalid);
    w[0] = 0xb8;
    assert_eq!(m.run_raw(&[w], &IsaOptions::default()).unwrap_err().kind, FaultKind::Invalid);
}

#[test]
fn register_markers_are_not_implemented() {
    let mut m = machine();
    m.run_raw(&[pool_load(addr4(0, false, 1024), 4, 0x0A, 1, 3, 0)], &IsaOptions::default()).unwrap();
    // The dst ADDR4 with the ADDR_REG marker (0x80 in the top byte).
    let w = gather(addr4(0, false, 0), 0x8000_0000 | addr4(0, false, 256), 6, 0x09, 0x0A, 1, false, false, 0);
    let e = m.run_raw(&[w], &IsaOptions::default()).unwrap_err();
    assert_eq!(e.kind, FaultKind::NotImplemented, "{e}");
    assert!(e.field.starts_with("dst.start_addr"), "{e}");
}

/// DMA_INDIRECT1D assembled from re-facts §8's offsets: gather 2 rows of 8 bytes from a DRAM
/// table by u32 indices in SBUF partition 0 into SBUF partition 1 (an on-chip ADDR8, X5).
#[test]
fn dma_indirect_word() {
    let mut m = Machine::new(Generation::V2);
    m.add_dram("t", 0x4000, (0u8..32).collect()).unwrap();
    m.sbuf_mut()[0..8].copy_from_slice(&u32s(&[3, 1]));
    let mut w = [0u8; 64];
    w[0] = 0xbb;
    w[14] = 128; // idx_num_active_channels
    w[15] = 0; // flags: SRC_INDIRECTION
    w[16..24].copy_from_slice(&0x4000u64.to_le_bytes());
    w[24..28].copy_from_slice(&1i32.to_le_bytes());
    w[28..30].copy_from_slice(&2u16.to_le_bytes());
    w[30..32].copy_from_slice(&8u16.to_le_bytes());
    let on_chip = 1u64 << 55 | u64::from(addr4(1, false, 16));
    w[32..40].copy_from_slice(&on_chip.to_le_bytes());
    w[40..44].copy_from_slice(&1i32.to_le_bytes());
    w[44..46].copy_from_slice(&2u16.to_le_bytes());
    w[46..48].copy_from_slice(&8u16.to_le_bytes());
    w[48..52].copy_from_slice(&addr4(0, false, 0).to_le_bytes());
    w[52..56].copy_from_slice(&addr4(0, false, 0).to_le_bytes());
    w[56] = 0x03; // UINT8
    w[57] = 0x03;
    m.run_raw(&[w], &IsaOptions::default()).unwrap();
    let got = &m.sbuf()[SB + 16..SB + 32];
    assert_eq!(got, [24, 25, 26, 27, 28, 29, 30, 31, 8, 9, 10, 11, 12, 13, 14, 15]);
}
