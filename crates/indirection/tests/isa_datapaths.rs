//! The ISA datapaths on resolved operands (seed 004 §7, contract §4): hand-worked examples from
//! the seed pseudocode with the expected bytes typed in, every option, the `nki` profile, the
//! all-or-nothing rule, and property tests of the fast loops against slow obvious twins written
//! here from the pseudocode.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use bir_ir::Dtype;
use indirection::isa::Generation;
use indirection::isa::machine::run::{
    BoundReg, Combine, DmaIndirect, Embedding, Gather, IndirectCopy, PoolLoad, Side, Target,
};
use indirection::isa::machine::{
    BoundRule, Dup, FaultKind, IcOob, IsaOptions, IsaProfile, Machine, OnChip, PSUM_BYTES, Space, TensorRef,
};
use test_rng::SplitMix64;

const SB: usize = 192 << 10;

fn at(partition: u8, offset: u32) -> OnChip {
    OnChip { partition, space: Space::Sbuf, offset }
}

fn t1(field: &'static str, a: OnChip, n: u16) -> TensorRef {
    TensorRef { field, start: a, step: [1, 0, 0, 0], num: [n, 1, 1, 1] }
}

fn sb(m: &Machine, p: usize, off: usize, len: usize) -> &[u8] {
    &m.sbuf()[p * SB + off..p * SB + off + len]
}

fn put(m: &mut Machine, p: usize, off: usize, bytes: &[u8]) {
    m.sbuf_mut()[p * SB + off..p * SB + off + bytes.len()].copy_from_slice(bytes);
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn opts() -> IsaOptions {
    IsaOptions::default()
}

// ----- GATHER -----

/// Pool_Buffer fp32, 4 elements per channel, window start 8, mask 3: indices 8..=11 hit.
fn gather_machine() -> Machine {
    let mut m = Machine::new(Generation::V2);
    let mut pb = vec![0u8; 128 * 16];
    pb[..16].copy_from_slice(&f32s(&[10.0, 11.0, 12.0, 13.0]));
    pb[16..32].copy_from_slice(&f32s(&[20.0, 21.0, 22.0, 23.0]));
    m.set_pool_buffer(Dtype::Float32, 4, 8, 3, pb).unwrap();
    // Channel 0 indices (u32) at partition 0 offset 0, channel 1 at partition 1.
    put(&mut m, 0, 0, &u32s(&[9, 8, 12, 11, 3]));
    put(&mut m, 1, 0, &u32s(&[8, 10, 16, 9, 11]));
    // The destination starts as 7.0 everywhere it is written.
    for p in 0..2 {
        put(&mut m, p, 256, &f32s(&[7.0; 5]));
    }
    m
}

fn gather(skip: bool, imm: u32) -> Gather {
    Gather {
        src: t1("src", at(0, 0), 5),
        index_bytes: 4,
        out_dtype: 0x0A,
        channels: 2,
        skip_write: skip,
        free_pool_buffer: false,
        immediate: imm,
        dst: t1("dst", at(0, 256), 5),
    }
}

#[test]
fn gather_immediate_write_fills_misses_with_the_immediate() {
    let mut m = gather_machine();
    m.gather(&gather(false, 0x4000_0000), &opts()).unwrap(); // 2.0
    // 9→PB[1], 8→PB[0], 12 misses (12 & !3 = 12 ≠ 8), 11→PB[3], 3 misses.
    assert_eq!(sb(&m, 0, 256, 20), f32s(&[11.0, 10.0, 2.0, 13.0, 2.0]));
    // Channel 1 reads its own Pool_Buffer row: 8, 10, 16 (miss), 9, 11.
    assert_eq!(sb(&m, 1, 256, 20), f32s(&[20.0, 22.0, 2.0, 21.0, 23.0]));
    assert!(m.pool_buffer.loaded);
}

#[test]
fn gather_skip_write_leaves_misses() {
    let mut m = gather_machine();
    m.gather(&gather(true, 0x4000_0000), &opts()).unwrap();
    assert_eq!(sb(&m, 0, 256, 20), f32s(&[11.0, 10.0, 7.0, 13.0, 7.0]));
}

#[test]
fn gather_nki_profile_writes_zero_on_a_miss() {
    let mut m = gather_machine();
    let o = IsaOptions { profile: IsaProfile::Nki, ..opts() };
    m.gather(&gather(false, 0x4000_0000), &o).unwrap();
    assert_eq!(sb(&m, 0, 256, 20), f32s(&[11.0, 10.0, 0.0, 13.0, 0.0]));
    let mut m = gather_machine();
    m.gather(&gather(true, 0x4000_0000), &o).unwrap();
    assert_eq!(sb(&m, 0, 256, 20), f32s(&[11.0, 10.0, 7.0, 13.0, 7.0]), "SKIP_WRITE as on the device");
}

/// X16: an index inside the mask but at or past the loaded count misses.
#[test]
fn gather_count_check() {
    let mut m = gather_machine();
    let mut pb = m.pool_buffer.clone();
    pb.count = 3;
    pb.data = vec![0; 128 * 12];
    pb.data[..12].copy_from_slice(&f32s(&[1.0, 2.0, 3.0]));
    m.set_pool_buffer(Dtype::Float32, 3, 8, 3, pb.data).unwrap();
    m.gather(&gather(false, 0), &opts()).unwrap();
    assert_eq!(sb(&m, 0, 256, 20), f32s(&[2.0, 1.0, 0.0, 0.0, 0.0]), "11 & 3 = 3 is not < 3");
}

#[test]
fn gather_narrow_indices_and_free() {
    let mut m = gather_machine();
    put(&mut m, 0, 64, &[11, 8, 200]);
    let g = Gather {
        src: t1("src", at(0, 64), 3),
        index_bytes: 1,
        channels: 1,
        free_pool_buffer: true,
        dst: t1("dst", at(0, 256), 3),
        ..gather(false, 0)
    };
    m.gather(&g, &opts()).unwrap();
    assert_eq!(sb(&m, 0, 256, 12), f32s(&[13.0, 10.0, 0.0]));
    assert!(!m.pool_buffer.loaded, "free_pool_buffer unloads it");
    let e = m.gather(&g, &opts()).unwrap_err();
    assert_eq!(e.kind, FaultKind::State);
    // u16 indices: 0x0109 = 265: (265 & !3) = 264 ≠ 8 → miss.
    let mut m = gather_machine();
    put(&mut m, 0, 64, &[0x09, 0x00, 0x09, 0x01]);
    let g = Gather { src: t1("src", at(0, 64), 2), index_bytes: 2, dst: t1("dst", at(0, 256), 2), ..g };
    m.gather(&Gather { free_pool_buffer: false, channels: 1, ..g }, &opts()).unwrap();
    assert_eq!(sb(&m, 0, 256, 8), f32s(&[11.0, 0.0]));
}

#[test]
fn gather_dtype_must_match_the_pool_buffer() {
    let mut m = gather_machine();
    let before = m.clone();
    let e = m.gather(&Gather { out_dtype: 0x06, ..gather(false, 0) }, &opts()).unwrap_err();
    assert_eq!(e.kind, FaultKind::Dtype);
    assert!(e.message.contains("0x06"), "{e}");
    assert_eq!(m, before);
}

#[test]
fn gather_into_psum_and_out_of_bounds_dst() {
    let mut m = gather_machine();
    let g = Gather {
        dst: t1("dst", OnChip { partition: 0, space: Space::Psum, offset: 8 }, 5),
        ..gather(false, 0)
    };
    m.gather(&g, &opts()).unwrap();
    assert_eq!(&m.psum()[8..28], f32s(&[11.0, 10.0, 0.0, 13.0, 0.0]));
    assert_eq!(&m.psum()[PSUM_BYTES + 8..PSUM_BYTES + 12], f32s(&[20.0]));
    let mut m = gather_machine();
    let before = m.clone();
    let g = Gather { dst: t1("dst", at(0, (SB - 16) as u32), 5), ..gather(false, 0) };
    let e = m.gather(&g, &opts()).unwrap_err();
    assert_eq!((e.kind, e.field.as_str()), (FaultKind::OutOfBounds, "dst"));
    assert_eq!(m, before, "nothing written");
}

/// The NKI lowering of one nc_n_gather over 8 elements with a 4-element window: load window 0,
/// gather IMMEDIATE_WRITE 0, load window 1, gather SKIP_WRITE (contract §4).
#[test]
fn gather_two_window_sequence() {
    let mut m = Machine::new(Generation::V2);
    // The table (8 fp32) at partition 0 offset 1024; indices at 0.
    let table = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    put(&mut m, 0, 1024, &f32s(&table));
    put(&mut m, 0, 0, &u32s(&[7, 0, 4, 9, 3, 5]));
    put(&mut m, 0, 256, &f32s(&[-1.0; 6]));
    let load = |start: u32, off: u32| PoolLoad {
        src: t1("src", at(0, off), 4),
        dtype: 0x0A,
        channels: 1,
        mask: 3,
        start_index: start,
    };
    let g = |skip| Gather {
        channels: 1,
        src: t1("src", at(0, 0), 6),
        dst: t1("dst", at(0, 256), 6),
        ..gather(skip, 0x1234_5678)
    };
    m.pool_buffer_load(&load(0, 1024)).unwrap();
    m.gather(&Gather { immediate: 0, ..g(false) }, &opts()).unwrap();
    assert_eq!(sb(&m, 0, 256, 24), f32s(&[0.0, 1.0, 0.0, 0.0, 4.0, 0.0]));
    m.pool_buffer_load(&load(4, 1040)).unwrap();
    m.gather(&g(true), &opts()).unwrap();
    // 7→8, 0→1, 4→5, 9 out of both windows → 0, 3→4, 5→6.
    assert_eq!(sb(&m, 0, 256, 24), f32s(&[8.0, 1.0, 5.0, 0.0, 4.0, 6.0]));
}

// ----- INDIRECT_COPY -----

/// 16 channels of uint8 data: partition q's data element e is q·16 + e (e < 16); indices u16
/// column-major: list = [part0 elem0, part1 elem0, part2 elem0] = [2, 0, 5]; E = 2.
fn ic_machine(channels: usize) -> Machine {
    let mut m = Machine::new(Generation::V2);
    for q in 0..channels {
        let data: Vec<u8> = (0..16).map(|e| (q * 16 + e) as u8).collect();
        put(&mut m, q, 512, &data);
        put(&mut m, q, 1024, &[0xEE; 8]);
    }
    for (p, v) in [(0, 2u16), (1, 0), (2, 5), (16, 1), (17, 7), (18, 3)] {
        put(&mut m, p, 0, &v.to_le_bytes());
    }
    m
}

fn ic(channels: usize, sbs: usize) -> IndirectCopy {
    IndirectCopy {
        index: at(0, 0),
        data: at(0, 512),
        num_elem: 6,
        esize: 1,
        channels,
        elem_per_idx: 2,
        src_buffer_size: sbs,
        dst: t1("dst", at(0, 1024), 6),
    }
}

#[test]
fn indirect_copy_rows_device() {
    let mut m = ic_machine(32);
    m.indirect_copy(&ic(32, 11), &opts()).unwrap();
    // Rows r → elements [2r, 2r+2): 2 → 4,5; 0 → 0,1; 5 → 10,11 but 11 ≥ 11 → 0 (zero-lanes).
    for q in [0usize, 3, 15] {
        let b = (q * 16) as u8;
        assert_eq!(sb(&m, q, 1024, 8), [b + 4, b + 5, b, b + 1, b + 10, 0, 0xEE, 0xEE], "partition {q}");
    }
    // Core 1 (partitions 16..32) reads its own list [1, 7, 3]: 2,3; 14,15 → both ≥ 11 → 0; 6,7.
    let b = (20 * 16) as u8;
    assert_eq!(sb(&m, 20, 1024, 6), [b + 2, b + 3, 0, 0, b + 6, b + 7]);
}

#[test]
fn indirect_copy_oob_policies() {
    let mut m = ic_machine(16);
    m.indirect_copy(&ic(16, 11), &IsaOptions { ic_oob: IcOob::SkipRow, ..opts() }).unwrap();
    assert_eq!(sb(&m, 1, 1024, 6), [20, 21, 16, 17, 0xEE, 0xEE], "the overrunning row is left alone");
    let mut m = ic_machine(16);
    let before = m.clone();
    let e = m.indirect_copy(&ic(16, 11), &IsaOptions { ic_oob: IcOob::Fault, ..opts() }).unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    assert!(e.message.contains("index 2 = 5"), "{e}");
    assert_eq!(m, before);
    // With room for the whole row, every policy copies it.
    for oob in [IcOob::ZeroLanes, IcOob::SkipRow, IcOob::Fault] {
        let mut m = ic_machine(16);
        m.indirect_copy(&ic(16, 12), &IsaOptions { ic_oob: oob, ..opts() }).unwrap();
        assert_eq!(sb(&m, 0, 1024, 6), [4, 5, 0, 1, 10, 11]);
    }
}

#[test]
fn indirect_copy_nki_counts_element_offsets_and_clips() {
    let mut m = ic_machine(16);
    put(&mut m, 2, 0, &10u16.to_le_bytes());
    let o = IsaOptions { profile: IsaProfile::Nki, ic_oob: IcOob::Fault, ..opts() };
    m.indirect_copy(&ic(16, 11), &o).unwrap();
    // Element offsets [r, r+2): 2 → 2,3; 0 → 0,1; 10 → 10, (11 clipped → 0).
    let b = 5 * 16;
    assert_eq!(sb(&m, 5, 1024, 6), [b + 2, b + 3, b, b + 1, b + 10, 0]);
}

#[test]
fn indirect_copy_strided_and_overlapping_destinations() {
    // A strided dst (step 2): the element loop.
    let mut m = ic_machine(16);
    let mut c = ic(16, 16);
    c.dst.step = [2, 0, 0, 0];
    m.indirect_copy(&c, &opts()).unwrap();
    assert_eq!(sb(&m, 0, 1024, 11), [4, 0xEE, 5, 0xEE, 0, 0xEE, 1, 0xEE, 10, 0, 11]);
    // The destination over the data buffer itself: every read sees the data as it was.
    let mut m = ic_machine(16);
    let c = IndirectCopy { dst: t1("dst", at(0, 512), 6), ..ic(16, 16) };
    m.indirect_copy(&c, &opts()).unwrap();
    assert_eq!(sb(&m, 0, 512, 8), [4, 5, 0, 1, 10, 11, 6, 7]);
}

#[test]
fn indirect_copy_data_leaving_the_partition_faults() {
    let mut m = ic_machine(16);
    let c = IndirectCopy { data: at(0, (SB - 4) as u32), ..ic(16, 16) };
    let before = m.clone();
    let e = m.indirect_copy(&c, &opts()).unwrap_err();
    assert_eq!((e.kind, e.field.as_str()), (FaultKind::OutOfBounds, "src.data_addr"));
    assert_eq!(m, before);
}

// ----- DMA_INDIRECT -----

const TABLE: u64 = 0x10_0000;

/// A DRAM table of 4 rows × 2 fp32 (row r = [r + 0.5, -(r + 0.5)]) and indices in partition 0.
fn dma_machine() -> Machine {
    let mut m = Machine::new(Generation::V2);
    let rows: Vec<f32> = (0..4).flat_map(|r| [r as f32 + 0.5, -(r as f32 + 0.5)]).collect();
    m.add_dram("table", TABLE, f32s(&rows)).unwrap();
    put(&mut m, 0, 0, &u32s(&[2, 0, 2, 3]));
    m.registers[5] = 3;
    m
}

fn side(start: Target, num: usize) -> Side {
    Side {
        start,
        step_elem: 1,
        num_elem: num,
        elem_size: 8,
        idx: at(0, 0),
        bound: BoundReg::default(),
        dtype: Dtype::Float32,
    }
}

fn dma_gather(n: usize) -> DmaIndirect {
    DmaIndirect {
        gather: true,
        scatter: false,
        idx_bound_is_err: false,
        non_unique_dst_idx: false,
        src: side(Target::Dram(TABLE), n),
        dst: side(Target::OnChip(at(1, 64)), n),
        op: None,
    }
}

#[test]
fn dma_gather_rows_by_index() {
    let mut m = dma_machine();
    m.dma_indirect(&dma_gather(4), &opts()).unwrap();
    assert_eq!(sb(&m, 1, 64, 32), f32s(&[2.5, -2.5, 0.5, -0.5, 2.5, -2.5, 3.5, -3.5]));
}

#[test]
fn dma_bound_check_skip_fault_and_rules() {
    let bound = BoundReg { reg: 5, disable_notif: false, enabled: true };
    // Soft: idx_bound_is_err clear → index 3 (≥ reg5 = 3) is skipped.
    let mut m = dma_machine();
    put(&mut m, 1, 64 + 24, &f32s(&[9.0, 9.0]));
    let mut d = dma_gather(4);
    d.src.bound = bound;
    m.dma_indirect(&d, &opts()).unwrap();
    assert_eq!(sb(&m, 1, 64, 32), f32s(&[2.5, -2.5, 0.5, -0.5, 2.5, -2.5, 9.0, 9.0]));
    // Hard: idx_bound_is_err set, notification on → fault, nothing written.
    let mut m = dma_machine();
    let before = m.clone();
    let e = m.dma_indirect(&DmaIndirect { idx_bound_is_err: true, ..d }, &opts()).unwrap_err();
    assert_eq!((e.kind, e.field.as_str()), (FaultKind::OutOfBounds, "src_idx_bound_reg"));
    assert!(e.message.contains("index 3 = 3"), "{e}");
    assert_eq!(m, before);
    // Notification disabled, not an error: seed applies the check (skip), re-facts does not
    // (the row is in memory, so it moves).
    let mut d2 = d;
    d2.src.bound.disable_notif = true;
    let mut m = dma_machine();
    m.dma_indirect(&d2, &opts()).unwrap();
    assert_eq!(sb(&m, 1, 88, 8), [0; 8]);
    let mut m = dma_machine();
    m.dma_indirect(&d2, &IsaOptions { bound_rule: BoundRule::ReFacts, ..opts() }).unwrap();
    assert_eq!(sb(&m, 1, 88, 8), f32s(&[3.5, -3.5]));
    // Bound check off, index past the table's memory → fault, never a wild read.
    let mut m = dma_machine();
    put(&mut m, 0, 0, &u32s(&[1, 4]));
    let e = m.dma_indirect(&dma_gather(2), &opts()).unwrap_err();
    assert_eq!((e.kind, e.field.as_str()), (FaultKind::OutOfBounds, "src_start_addr"));
    assert_eq!(sb(&m, 1, 64, 8), [0; 8], "move 0 was not made either");
}

fn dma_scatter(op: Option<Combine>, non_unique: bool) -> DmaIndirect {
    // Values [1, 2], [3, 4], [5, 6] from SBUF partition 1 scattered to rows didx = [2, 0, 2].
    DmaIndirect {
        gather: false,
        scatter: true,
        idx_bound_is_err: false,
        non_unique_dst_idx: non_unique,
        src: side(Target::OnChip(at(1, 0)), 3),
        dst: side(Target::Dram(TABLE), 3),
        op,
    }
}

fn scatter_machine() -> Machine {
    let mut m = dma_machine();
    put(&mut m, 1, 0, &f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    m
}

fn table(m: &Machine) -> Vec<u8> {
    m.dram()[0].bytes.clone()
}

#[test]
fn dma_scatter_duplicates() {
    // Without non_unique_dst_idx: a fault naming both positions (dup = fault).
    let mut m = scatter_machine();
    let before = m.clone();
    let e = m.dma_indirect(&dma_scatter(None, false), &opts()).unwrap_err();
    assert_eq!(e.kind, FaultKind::DuplicateIndex);
    assert!(e.message.contains("0 and 2"), "{e}");
    assert_eq!(m, before);
    // dup = serial: the last writer wins.
    let want_copy = f32s(&[3.0, 4.0, 1.5, -1.5, 5.0, 6.0, 3.5, -3.5]);
    let mut m = scatter_machine();
    m.dma_indirect(&dma_scatter(None, false), &IsaOptions { dup: Dup::Serial, ..opts() }).unwrap();
    assert_eq!(table(&m), want_copy);
    // non_unique_dst_idx: allowed under either option.
    let mut m = scatter_machine();
    m.dma_indirect(&dma_scatter(None, true), &opts()).unwrap();
    assert_eq!(table(&m), want_copy);
    // ADD accumulates in order: row 2 = 2.5 + 1 + 5, -2.5 + 2 + 6.
    let mut m = scatter_machine();
    m.dma_indirect(&dma_scatter(Some(Combine::Add), true), &opts()).unwrap();
    assert_eq!(table(&m), f32s(&[3.5, 3.5, 1.5, -1.5, 8.5, 5.5, 3.5, -3.5]));
    let mut m = scatter_machine();
    m.dma_indirect(&dma_scatter(Some(Combine::Multiply), true), &opts()).unwrap();
    assert_eq!(table(&m), f32s(&[1.5, -2.0, 1.5, -1.5, 12.5, -30.0, 3.5, -3.5]));
}

/// MAX/MIN are glibc fmaxf/fminf with dst first: NaN yields the other operand, ±0 keeps dst.
#[test]
fn dma_max_min_nan_and_signed_zero() {
    let mut m = Machine::new(Generation::V2);
    let dst = [f32::NAN, 1.0, 0.0, -0.0, 2.0, f32::NAN];
    let src = [3.0, f32::NAN, -0.0, 0.0, -5.0, f32::NAN];
    m.add_dram("d", 0, f32s(&dst)).unwrap();
    put(&mut m, 1, 0, &f32s(&src));
    put(&mut m, 0, 0, &u32s(&[0]));
    let mut d = dma_scatter(Some(Combine::Max), false);
    d.src = Side { elem_size: 24, num_elem: 1, ..d.src };
    d.dst = Side { start: Target::Dram(0), elem_size: 24, num_elem: 1, ..d.dst };
    m.dma_indirect(&d, &opts()).unwrap();
    let got: Vec<u32> =
        m.dram()[0].bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got[..5], [3.0f32.to_bits(), 1.0f32.to_bits(), 0, 0x8000_0000, 2.0f32.to_bits()]);
    assert!(f32::from_bits(got[5]).is_nan());
    let mut m2 = Machine::new(Generation::V2);
    m2.add_dram("d", 0, f32s(&dst)).unwrap();
    put(&mut m2, 1, 0, &f32s(&src));
    m2.dma_indirect(&DmaIndirect { op: Some(Combine::Min), ..d }, &opts()).unwrap();
    let got: Vec<u32> =
        m2.dram()[0].bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got[..5], [3.0f32.to_bits(), 1.0f32.to_bits(), 0, 0x8000_0000, (-5.0f32).to_bits()]);
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// X14: compute ops on integer dtypes run (seed 004 §3c lists NONE/ADD/MULTIPLY/MAX/MIN with no
/// dtype limit). Scatter of src rows [1, 3], [10, -2], [5, 4] (SBUF partition 1, 2 × int32) to
/// didx = [0, 1, 0] of a DRAM table with rows [i32::MAX, -5], [7, 0]; worked by hand:
/// - ADD wraps (re-facts §8 "Int add wraps"): row 0 = [2^31 − 1 + 1 + 5 = 2^31 + 5 → −2^31 + 5
///   = −2147483643, −5 + 3 + 4 = 2], row 1 = [7 + 10, 0 − 2] = [17, −2].
/// - MULTIPLY wraps: (2^31 − 1)·1·5 = 10737418235 = 2·2^32 + 2147483643 → 2147483643;
///   −5·3·4 = −60; row 1 = [70, 0].
/// - MAX / MIN signed for int32 (re-facts §8 "min/max are signed"): MAX row 0 = [2^31 − 1, 4],
///   row 1 = [10, 0]; MIN row 0 = [1, −5], row 1 = [7, −2].
/// - uint32 (the same bytes): MAX / MIN compare unsigned (X14 ASSUMED), so −5 reads
///   4294967291: MAX row 0 = [2^31 − 1, 4294967291], row 1 = [10, 4294967294 (the bytes of −2)];
///   MIN row 0 = [1, 3], row 1 = [7, 0].
#[test]
fn dma_integer_compute_wraps_and_compares_by_dtype() {
    let run = |op: Combine, dtype: Dtype| -> Vec<u8> {
        let mut m = Machine::new(Generation::V2);
        m.add_dram("t", TABLE, i32s(&[i32::MAX, -5, 7, 0])).unwrap();
        put(&mut m, 1, 0, &i32s(&[1, 3, 10, -2, 5, 4]));
        put(&mut m, 0, 0, &u32s(&[0, 1, 0]));
        let mut d = dma_scatter(Some(op), true);
        d.src.dtype = dtype;
        d.dst.dtype = dtype;
        m.dma_indirect(&d, &opts()).unwrap();
        table(&m)
    };
    assert_eq!(run(Combine::Add, Dtype::Int32), i32s(&[-2147483643, 2, 17, -2]));
    assert_eq!(run(Combine::Multiply, Dtype::Int32), i32s(&[2147483643, -60, 70, 0]));
    assert_eq!(run(Combine::Max, Dtype::Int32), i32s(&[i32::MAX, 4, 10, 0]));
    assert_eq!(run(Combine::Min, Dtype::Int32), i32s(&[1, -5, 7, -2]));
    assert_eq!(run(Combine::Max, Dtype::Uint32), u32s(&[0x7FFF_FFFF, 4294967291, 10, 4294967294]));
    assert_eq!(run(Combine::Min, Dtype::Uint32), u32s(&[1, 3, 7, 0]));
    // ADD / MULTIPLY bytes do not depend on the signedness (two's complement wrap).
    assert_eq!(run(Combine::Add, Dtype::Uint32), run(Combine::Add, Dtype::Int32));
    assert_eq!(run(Combine::Multiply, Dtype::Uint32), run(Combine::Multiply, Dtype::Int32));
}

/// X14, narrow and wide integers: int8 ADD 100 + 100 = 200 → 200 − 256 = −56; uint8 MIN(200, 3)
/// = 3 where int8 gives MIN(−56, 3) = −56; int64 MULTIPLY 2^62 · 4 = 2^64 → 0; uint16 MAX(0xFFFF,
/// 1) = 0xFFFF where int16 gives MAX(−1, 1) = 1.
#[test]
fn dma_integer_compute_every_width() {
    let run = |op: Combine, dtype: Dtype, dst: &[u8], src: &[u8]| -> Vec<u8> {
        let mut m = Machine::new(Generation::V2);
        m.add_dram("t", TABLE, dst.to_vec()).unwrap();
        put(&mut m, 1, 0, src);
        put(&mut m, 0, 0, &u32s(&[0]));
        let mut d = dma_scatter(Some(op), true);
        d.src = Side { dtype, elem_size: src.len(), num_elem: 1, ..d.src };
        d.dst = Side { dtype, elem_size: dst.len(), num_elem: 1, ..d.dst };
        m.dma_indirect(&d, &opts()).unwrap();
        table(&m)
    };
    assert_eq!(run(Combine::Add, Dtype::Int8, &[100], &[100]), [(-56i8) as u8]);
    assert_eq!(run(Combine::Min, Dtype::Uint8, &[200], &[3]), [3]);
    assert_eq!(run(Combine::Min, Dtype::Int8, &[200], &[3]), [200]);
    assert_eq!(
        run(Combine::Multiply, Dtype::Int64, &(1i64 << 62).to_le_bytes(), &4i64.to_le_bytes()),
        [0; 8]
    );
    assert_eq!(run(Combine::Max, Dtype::Uint16, &[0xFF, 0xFF], &[1, 0]), [0xFF, 0xFF]);
    assert_eq!(run(Combine::Max, Dtype::Int16, &[0xFF, 0xFF], &[1, 0]), [1, 0]);
}

/// X14, differing dtypes with an integer destination: the source value is cast to the
/// destination dtype first (re-facts §4: fp32 hub, RNE, saturating clamp), then combined at the
/// destination's width: fp32 [2.5, −3.5, 3e9] ADD into int32 [10, 10, 1] → RNE 2.5 → 2,
/// −3.5 → −4, 3e9 saturates to 2^31 − 1 → [12, 6, (2^31 − 1) + 1 wraps to −2^31].
#[test]
fn dma_integer_compute_casts_the_source_first() {
    let mut m = Machine::new(Generation::V2);
    m.add_dram("t", TABLE, i32s(&[10, 10, 1])).unwrap();
    put(&mut m, 1, 0, &f32s(&[2.5, -3.5, 3e9]));
    put(&mut m, 0, 0, &u32s(&[0]));
    let mut d = dma_scatter(Some(Combine::Add), true);
    d.src = Side { elem_size: 12, num_elem: 1, ..d.src };
    d.dst = Side { dtype: Dtype::Int32, elem_size: 12, num_elem: 1, ..d.dst };
    m.dma_indirect(&d, &opts()).unwrap();
    assert_eq!(table(&m), i32s(&[12, 6, i32::MIN]));
}

/// A copy with differing dtypes casts through fp32 (RNE): 1 + 2^-8 → bf16 0x3F80 (tie to
/// even), 1 + 3·2^-9 → 0x3F81.
#[test]
fn dma_copy_casts_rne() {
    let mut m = Machine::new(Generation::V2);
    let a = f32::from_bits(0x3F80_8000);
    let b = f32::from_bits(0x3F80_C000);
    put(&mut m, 1, 0, &f32s(&[a, b]));
    put(&mut m, 0, 0, &u32s(&[1, 0]));
    m.add_dram("d", 0x40, vec![0; 4]).unwrap();
    let mut d = dma_scatter(None, false);
    d.src = Side { elem_size: 4, num_elem: 2, ..d.src };
    d.dst = Side { start: Target::Dram(0x40), elem_size: 2, num_elem: 2, dtype: Dtype::Bfloat16, ..d.dst };
    m.dma_indirect(&d, &opts()).unwrap();
    assert_eq!(m.dram()[0].bytes, [0x81, 0x3F, 0x80, 0x3F]);
    // Mismatched value counts are invalid (X53).
    d.dst.elem_size = 4;
    assert_eq!(m.dma_indirect(&d, &opts()).unwrap_err().kind, FaultKind::Invalid);
}

/// Both sides indexed: src row sidx[k] → dst row didx[k].
#[test]
fn dma_both_indexed() {
    let mut m = dma_machine();
    put(&mut m, 0, 64, &u32s(&[1, 3, 0, 2]));
    m.add_dram("out", 0x20_0000, vec![0; 32]).unwrap();
    let mut d = dma_gather(4);
    d.scatter = true;
    d.dst = Side { start: Target::Dram(0x20_0000), idx: at(0, 64), ..d.dst };
    m.dma_indirect(&d, &opts()).unwrap();
    // k: src rows [2, 0, 2, 3] → dst rows [1, 3, 0, 2].
    assert_eq!(m.dram()[1].bytes, f32s(&[2.5, -2.5, 2.5, -2.5, 3.5, -3.5, 0.5, -0.5]));
}

/// Overlapping source and destination in one buffer: the moves run serially in k order, so a
/// later move reads what an earlier one wrote (contract §4).
#[test]
fn dma_overlapping_moves_are_serial() {
    let mut m = Machine::new(Generation::V2);
    put(&mut m, 1, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let mut d = dma_gather(3);
    // Gather 2-byte elements from partition 1 at rows sidx = [0, 1, 2] into partition 1 offset 2.
    put(&mut m, 0, 0, &u32s(&[0, 1, 2]));
    d.src = Side { start: Target::OnChip(at(1, 0)), elem_size: 2, dtype: Dtype::Uint16, ..d.src };
    d.dst = Side { start: Target::OnChip(at(1, 2)), elem_size: 2, dtype: Dtype::Uint16, ..d.dst };
    m.dma_indirect(&d, &opts()).unwrap();
    // k0: [0..2] → [2..4] = 1,2; k1: [2..4] (now 1,2) → [4..6]; k2: [4..6] (1,2) → [6..8].
    assert_eq!(sb(&m, 1, 0, 8), [1, 2, 1, 2, 1, 2, 1, 2]);
}

// ----- EMBEDDING_UPDATE -----

fn emb_machine() -> Machine {
    let mut m = Machine::new(Generation::V2);
    // 4 rows of 2 fp32, stride 8, at 0x1000: row r = [r, 10 r].
    let rows: Vec<f32> = (0..4).flat_map(|r| [r as f32, 10.0 * r as f32]).collect();
    m.add_dram("emb", 0x1000, f32s(&rows)).unwrap();
    put(&mut m, 0, 0, &u32s(&[1, 7, 1, 0]));
    // Data (j, i) at offset 64 + 4·(j + 2 i): column i = [i + 1, -(i + 1)].
    let data: Vec<f32> = (0..4).flat_map(|i| [i as f32 + 1.0, -(i as f32 + 1.0)]).collect();
    put(&mut m, 0, 64, &f32s(&data));
    m
}

fn emb(op: Combine) -> Embedding {
    Embedding {
        dtype: Dtype::Float32,
        op,
        index: t1("embed_index_in", at(0, 0), 4),
        data: TensorRef { field: "embed_data_in", start: at(0, 64), step: [1, 2, 0, 0], num: [2, 4, 1, 1] },
        table_base: 0x1000,
        entry_elems: 2,
        stride: 8,
        sequence_length: 4,
        num_entries: 4,
    }
}

#[test]
fn embedding_add_accumulates_and_skips_past_the_table() {
    let mut m = emb_machine();
    m.embedding_update(&emb(Combine::Add), &opts()).unwrap();
    // i=0 → row 1 += [1, -1]; i=1 index 7 ≥ 4 skipped; i=2 → row 1 += [3, -3]; i=3 → row 0 += [4, -4].
    assert_eq!(m.dram()[0].bytes, f32s(&[4.0, -4.0, 5.0, 6.0, 2.0, 20.0, 3.0, 30.0]));
}

#[test]
fn embedding_max_min() {
    let mut m = emb_machine();
    m.embedding_update(&emb(Combine::Max), &opts()).unwrap();
    assert_eq!(m.dram()[0].bytes, f32s(&[4.0, 0.0, 3.0, 10.0, 2.0, 20.0, 3.0, 30.0]));
    let mut m = emb_machine();
    m.embedding_update(&emb(Combine::Min), &opts()).unwrap();
    assert_eq!(m.dram()[0].bytes, f32s(&[0.0, -4.0, 1.0, -3.0, 2.0, 20.0, 3.0, 30.0]));
}

#[test]
fn embedding_bf16_rounds_every_step() {
    let mut m = Machine::new(Generation::V2);
    // One bf16 row [1.0]; adds 2^-8 twice: 1 + 2^-8 ties to 1.0 each time (RNE at every step).
    m.add_dram("emb", 0, vec![0x80, 0x3F]).unwrap();
    put(&mut m, 0, 0, &u32s(&[0, 0]));
    put(&mut m, 0, 64, &[0x80, 0x3B, 0x80, 0x3B]);
    let e = Embedding {
        dtype: Dtype::Bfloat16,
        index: t1("embed_index_in", at(0, 0), 2),
        data: TensorRef { field: "embed_data_in", start: at(0, 64), step: [1, 1, 0, 0], num: [1, 2, 1, 1] },
        table_base: 0,
        entry_elems: 1,
        stride: 2,
        sequence_length: 2,
        num_entries: 1,
        ..emb(Combine::Add)
    };
    m.embedding_update(&e, &opts()).unwrap();
    assert_eq!(m.dram()[0].bytes, [0x80, 0x3F]);
}

#[test]
fn embedding_row_outside_dram_faults_before_writing() {
    let mut m = emb_machine();
    let before = m.clone();
    let e = m.embedding_update(&Embedding { num_entries: 8, ..emb(Combine::Add) }, &opts()).unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    assert!(e.message.contains("index 1 = 7"), "{e}");
    assert_eq!(m, before, "row 1 (i = 0) was not updated either");
}

// ----- POOL_BUFFER_LOAD -----

#[test]
fn pool_buffer_load_replaces_the_content() {
    let mut m = Machine::new(Generation::V2);
    put(&mut m, 3, 8, &[1, 2, 3, 4, 5, 6]);
    put(&mut m, 4, 8, &[7, 8, 9, 10, 11, 12]);
    let p = PoolLoad {
        src: TensorRef { field: "src", start: at(3, 8), step: [2, 0, 0, 0], num: [3, 1, 1, 1] },
        dtype: 0x05,
        channels: 2,
        mask: 0xF,
        start_index: 32,
    };
    m.pool_buffer_load(&p).unwrap();
    let pb = &m.pool_buffer;
    assert!(pb.loaded);
    assert_eq!((pb.dtype, pb.count, pb.start_index, pb.mask), (Dtype::Uint16, 3, 32, 0xF));
    // u16 elements at 8, 12, 16 of partitions 3 and 4.
    assert_eq!(pb.channel(0), [1, 2, 5, 6, 0, 0]);
    assert_eq!(pb.channel(1), [7, 8, 11, 12, 0, 0]);
    assert_eq!(pb.channel(2), [0; 6], "channels past the loaded ones are zero");
    let big = PoolLoad { src: t1("src", at(0, 0), 513), ..p };
    assert_eq!(m.pool_buffer_load(&big).unwrap_err().kind, FaultKind::Invalid);
    assert_eq!(m.pool_buffer_load(&PoolLoad { dtype: 0x30, ..p }).unwrap_err().kind, FaultKind::Dtype);
}

// ----- property tests: fast loops against slow obvious twins -----

/// The seed's INDIRECT_COPY loop element by element over a copy of SBUF (snapshot reads).
fn ic_reference(m: &Machine, c: &IndirectCopy, o: &IsaOptions) -> Vec<u8> {
    let src = m.sbuf().to_vec();
    let mut out = src.clone();
    let e = c.elem_per_idx;
    let n = c.num_elem / e;
    let nki = o.profile == IsaProfile::Nki;
    let mut offs = Vec::new();
    c.dst.offsets("T", c.esize, c.channels, SB, &mut offs).unwrap();
    for q in 0..c.channels {
        let (b, t) = (q / 16, q % 16);
        let _ = t;
        for j in 0..n {
            let ip = c.index.partition as usize + 16 * b + j % 16;
            let ia = ip * SB + c.index.offset as usize + 2 * (j / 16);
            let r = u16::from_le_bytes([src[ia], src[ia + 1]]) as usize;
            let s = if nki { r } else { r * e };
            let whole = s + e <= c.src_buffer_size;
            if !whole && !nki && o.ic_oob == IcOob::SkipRow {
                continue;
            }
            for k in 0..e {
                let d = (c.dst.start.partition as usize + q) * SB + offs[j * e + k];
                for x in 0..c.esize {
                    out[d + x] = if s + k < c.src_buffer_size {
                        src[(c.data.partition as usize + q) * SB
                            + c.data.offset as usize
                            + (s + k) * c.esize
                            + x]
                    } else {
                        0
                    };
                }
            }
        }
    }
    out
}

#[test]
fn indirect_copy_matches_the_element_loop() {
    let mut rng = SplitMix64::new(7);
    for case in 0..60 {
        let mut m = Machine::new(Generation::V2);
        let channels = 16 * (1 + rng.below(3) as usize);
        let e = 1 << rng.below(6);
        let esize = [1, 2, 4][rng.below(3) as usize];
        let n = 1 + rng.below(40) as usize;
        let sbs = 1 + rng.below(200) as usize;
        for q in 0..channels {
            let bytes: Vec<u8> = (0..1024).map(|_| rng.next_u64() as u8).collect();
            put(&mut m, q, 0, &bytes);
            let idx: Vec<u8> =
                (0..8).flat_map(|_| (rng.below(sbs as u64 / e as u64 + 3) as u16).to_le_bytes()).collect();
            put(&mut m, q, 4096, &idx);
        }
        // Destination: contiguous, strided, or over the data buffer (same start partition).
        let dst_off = match case % 3 {
            0 => 2048,
            1 => rng.below(256) as u32,
            _ => 2048,
        };
        let step = if case % 3 == 2 { 1 + rng.below(2) as i16 } else { 1 };
        let c = IndirectCopy {
            index: at(0, 4096),
            data: at(0, rng.below(64) as u32),
            num_elem: n * e,
            esize,
            channels,
            elem_per_idx: e,
            src_buffer_size: sbs,
            dst: TensorRef {
                field: "dst",
                start: at(0, dst_off),
                step: [step, 0, 0, 0],
                num: [(n * e) as u16, 1, 1, 1],
            },
        };
        for o in [
            opts(),
            IsaOptions { ic_oob: IcOob::SkipRow, ..opts() },
            IsaOptions { profile: IsaProfile::Nki, ..opts() },
        ] {
            let want = ic_reference(&m, &c, &o);
            let mut got = m.clone();
            if c.dst.check("T", esize, channels, SB).is_err() {
                continue;
            }
            got.indirect_copy(&c, &o).unwrap();
            assert!(got.sbuf() == want.as_slice(), "case {case} {o:?} {c:?}");
        }
    }
}

/// The seed's DMA_INDIRECT loop byte by byte over one buffer, moves in order.
#[test]
fn dma_copy_matches_the_serial_byte_loop() {
    let mut rng = SplitMix64::new(11);
    for case in 0..80 {
        let mut m = Machine::new(Generation::V2);
        let bytes: Vec<u8> = (0..2048).map(|_| rng.next_u64() as u8).collect();
        put(&mut m, 1, 0, &bytes);
        let esz = 1 + rng.below(24) as usize;
        let n = 1 + rng.below(30) as usize;
        let idx: Vec<u32> = (0..n).map(|_| rng.below(40) as u32).collect();
        put(&mut m, 0, 0, &u32s(&idx));
        let scatter = case % 2 == 1;
        let same = case % 4 < 2;
        let dst_p = if same { 1 } else { 2 };
        let (s_off, d_off) = (rng.below(900) as u32, rng.below(900) as u32);
        let step = rng.below(3) as i32;
        let mut d = dma_gather(n);
        d.gather = !scatter;
        d.scatter = scatter;
        d.non_unique_dst_idx = true;
        d.src = Side {
            start: Target::OnChip(at(1, s_off)),
            elem_size: esz,
            dtype: Dtype::Uint8,
            step_elem: step,
            ..d.src
        };
        d.dst = Side {
            start: Target::OnChip(at(dst_p, d_off)),
            elem_size: esz,
            dtype: Dtype::Uint8,
            step_elem: step,
            ..d.dst
        };
        let mut want = m.sbuf().to_vec();
        for (k, &i) in idx.iter().enumerate() {
            let sa = SB + s_off as usize + if scatter { k * step as usize * esz } else { i as usize * esz };
            let da = dst_p as usize * SB
                + d_off as usize
                + if scatter { i as usize * esz } else { k * step as usize * esz };
            let tmp: Vec<u8> = want[sa..sa + esz].to_vec();
            want[da..da + esz].copy_from_slice(&tmp);
        }
        m.dma_indirect(&d, &opts()).unwrap();
        assert!(m.sbuf() == want.as_slice(), "case {case}");
    }
}

/// The seed's GATHER loop element by element (snapshot indices), over contiguous and strided
/// destinations and every element width.
#[test]
fn gather_matches_the_element_loop() {
    let mut rng = SplitMix64::new(5);
    for case in 0..40 {
        let mut m = Machine::new(Generation::V2);
        let (dt, code) =
            [(Dtype::Uint8, 0x03), (Dtype::Bfloat16, 0x06), (Dtype::Float32, 0x0A), (Dtype::Int64, 0x0C)]
                [rng.below(4) as usize];
        let es = dt.size();
        let count = 1 + rng.below(20) as usize;
        let (start, mask) = (16 * rng.below(3) as u32, 15u32);
        let pb: Vec<u8> = (0..128 * count * es).map(|_| rng.next_u64() as u8).collect();
        m.set_pool_buffer(dt, count, start, mask, pb.clone()).unwrap();
        let ch = 1 + rng.below(4) as usize;
        let n = 1 + rng.below(50) as usize;
        let ib = [1usize, 2, 4][rng.below(3) as usize];
        for p in 0..ch {
            let bytes: Vec<u8> =
                (0..n).flat_map(|_| (rng.below(60) as u32).to_le_bytes()[..ib].to_vec()).collect();
            put(&mut m, p, 0, &bytes);
            let fill: Vec<u8> = (0..2048).map(|_| rng.next_u64() as u8).collect();
            put(&mut m, p, 1024, &fill);
        }
        let step = 1 + (case % 3) as i16 / 2;
        let skip = rng.below(2) == 1;
        let imm = rng.next_u64() as u32;
        let g = Gather {
            src: t1("src", at(0, 0), n as u16),
            index_bytes: ib,
            out_dtype: code,
            channels: ch,
            skip_write: skip,
            free_pool_buffer: false,
            immediate: imm,
            dst: TensorRef {
                field: "dst",
                start: at(0, 1024),
                step: [step, 0, 0, 0],
                num: [n as u16, 1, 1, 1],
            },
        };
        let mut want = m.sbuf().to_vec();
        for c in 0..ch {
            for k in 0..n {
                let mut b = [0u8; 4];
                b[..ib].copy_from_slice(sb(&m, c, k * ib, ib));
                let i = u32::from_le_bytes(b);
                let d = c * SB + 1024 + k * step as usize * es;
                let hit = (i & !mask) == start && (i & mask) < count as u32;
                if hit {
                    let e = (i & mask) as usize;
                    want[d..d + es].copy_from_slice(&pb[(c * count + e) * es..(c * count + e + 1) * es]);
                } else if !skip {
                    let v = u64::from(imm).to_le_bytes();
                    want[d..d + es].copy_from_slice(&v[..es]);
                }
            }
        }
        m.gather(&g, &opts()).unwrap();
        assert!(m.sbuf() == want.as_slice(), "case {case}");
    }
}

/// The inline fp32/bf16 reduce (between two buffers) against numerics' slice path (both sides
/// in SBUF), with NaN, ±0 and rounding cases, for every compute op.
#[test]
fn dma_compute_fast_path_matches_numerics() {
    let mut rng = SplitMix64::new(3);
    let specials = [f32::NAN, -0.0, 0.0, 1.0, -1.0, f32::from_bits(0x3F80_8000), 1e38, -3.5];
    for (dt, es) in [(Dtype::Float32, 4usize), (Dtype::Bfloat16, 2)] {
        for op in [Combine::Add, Combine::Multiply, Combine::Max, Combine::Min] {
            let vals: Vec<f32> = (0..64).map(|_| specials[rng.below(8) as usize]).collect();
            let enc = |v: &[f32]| -> Vec<u8> {
                v.iter()
                    .flat_map(|x| {
                        if es == 4 {
                            x.to_le_bytes().to_vec()
                        } else {
                            ((x.to_bits() >> 16) as u16).to_le_bytes().to_vec()
                        }
                    })
                    .collect()
            };
            let (src, dst) = (enc(&vals[..32]), enc(&vals[32..]));
            let mut fast = Machine::new(Generation::V2);
            let mut slow = Machine::new(Generation::V2);
            for m in [&mut fast, &mut slow] {
                put(m, 1, 0, &src);
                put(m, 0, 0, &u32s(&[1, 0, 1, 3]));
            }
            fast.add_dram("d", 0, dst.clone()).unwrap();
            put(&mut slow, 2, 0, &dst);
            let mut d = dma_scatter(Some(op), true);
            d.src = Side { elem_size: 8 * es, num_elem: 4, dtype: dt, ..d.src };
            let row = d.src.elem_size;
            d.dst = Side { start: Target::Dram(0), elem_size: row, num_elem: 4, dtype: dt, ..d.dst };
            fast.dma_indirect(&d, &opts()).unwrap();
            d.dst.start = Target::OnChip(at(2, 0));
            slow.dma_indirect(&d, &opts()).unwrap();
            assert_eq!(fast.dram()[0].bytes, sb(&slow, 2, 0, dst.len()), "{dt} {op:?}");
        }
    }
}

/// EMBEDDING_UPDATE with a contiguous data column (inline reduce) and the same values strided
/// (numerics' path) give the same table.
#[test]
fn embedding_fast_path_matches_strided() {
    let mut a = emb_machine();
    let mut b = emb_machine();
    // b: the same data with a stride of 2 elements between j's (columns 4 elements apart).
    let data: Vec<f32> = (0..4).flat_map(|i| [i as f32 + 1.0, 99.0, -(i as f32 + 1.0), 99.0]).collect();
    put(&mut b, 0, 64, &f32s(&data));
    a.embedding_update(&emb(Combine::Add), &opts()).unwrap();
    let mut e = emb(Combine::Add);
    e.data.step = [2, 4, 0, 0];
    b.embedding_update(&e, &opts()).unwrap();
    assert_eq!(a.dram()[0].bytes, b.dram()[0].bytes);
}

/// DMA_INDIRECT between two DRAM regions takes the direct loop (no move list) when no bound
/// check applies; with a bound register that can never fail, the same word takes the general
/// path. Both must leave identical bytes for gathers and scatters, every compute op, fp32 and
/// bf16, duplicates, walking steps of ±1 and 2, and odd row counts.
#[test]
fn dma_direct_loop_matches_the_general_path() {
    let mut rng = SplitMix64::new(0xD4A);
    const T: u64 = 0x4000;
    const W: u64 = 0x90_0000;
    for case in 0..48 {
        let dtype = if case % 2 == 0 { Dtype::Float32 } else { Dtype::Bfloat16 };
        let esz = dtype.size();
        let values = 1 + rng.below(7) as usize;
        let len = values * esz;
        let rows = 3 + rng.below(40) as usize;
        let n = 1 + rng.below(60) as usize;
        let gather = case % 4 < 2;
        let op = [None, Some(Combine::Add), Some(Combine::Multiply), Some(Combine::Max), Some(Combine::Min)]
            [rng.below(5) as usize];
        let step = [1i32, -1, 2][rng.below(3) as usize];
        let walk_rows = n * step.unsigned_abs() as usize + 1;
        let mut m = Machine::new(Generation::V2);
        let table: Vec<u8> = (0..rows * len).map(|_| rng.below(256) as u8 & 0x3F).collect();
        let walk: Vec<u8> = (0..walk_rows * len).map(|_| rng.below(256) as u8 & 0x3F).collect();
        m.add_dram("table", T, table).unwrap();
        m.add_dram("walk", W, walk).unwrap();
        let idx: Vec<u32> = (0..n).map(|_| rng.below(rows as u64) as u32).collect();
        put(&mut m, 0, 0, &u32s(&idx));
        m.registers[9] = u32::MAX;
        // The walking side starts where a negative step stays inside its region.
        let walk_start = if step < 0 { W + ((n - 1) * step.unsigned_abs() as usize * len) as u64 } else { W };
        let mk = |start: Target| Side {
            start,
            step_elem: step,
            num_elem: n,
            elem_size: len,
            idx: at(0, 0),
            bound: BoundReg::default(),
            dtype,
        };
        let d = DmaIndirect {
            gather,
            scatter: !gather,
            idx_bound_is_err: false,
            non_unique_dst_idx: true,
            src: if gather { mk(Target::Dram(T)) } else { mk(Target::Dram(walk_start)) },
            dst: if gather { mk(Target::Dram(walk_start)) } else { mk(Target::Dram(T)) },
            op,
        };
        let mut checked = d;
        let bound = BoundReg { reg: 9, disable_notif: false, enabled: true };
        if gather {
            checked.src.bound = bound;
        } else {
            checked.dst.bound = bound;
        }
        let (mut fast, mut general) = (m.clone(), m);
        fast.dma_indirect(&d, &opts()).unwrap();
        general.dma_indirect(&checked, &opts()).unwrap();
        assert_eq!(
            fast.dram(),
            general.dram(),
            "case {case}: {dtype} gather {gather} op {op:?} step {step} n {n}"
        );
    }
}
