//! Hand-worked descriptor lists (counts, addresses, dims typed here from the rules of docs/dge.md,
//! worked by hand in the comments) and execution edge cases against slow obvious twins.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use access_pattern::Layout;
use bir_ir::{ApPair, Dtype};
use dge::generate::{
    self, DgeError, GatherTranspose, Indirect1d, IndirectMode, Operand, gather_transpose, indirect1d, mac,
};
use dge::{ComputeOp, Descriptor, DgeKind, Dim, Emission, FlatMemory, emissions, execute};
use test_rng::XorShift64;

const L0: u64 = 0x100_0000_0000; // G9 base of location 0
const L1: u64 = 0x200_0000_0000; // G9 base of location 1

fn op<'a>(name: &'static str, base: u64, layout: Layout, pairs: &'a [ApPair], offset: i64) -> Operand<'a> {
    Operand { name, base, layout, pairs, offset }
}

fn d(kind: DgeKind, src: u64, dst: u64, elem: u32, dims: &[Dim]) -> Descriptor {
    Descriptor::new(kind, src, dst, elem, dims, ComputeOp::None, Dtype::Float32).unwrap()
}

/// A 2-D copy: 4 rows of 8 fp32 out of a 16-wide source into a packed destination at element 2.
/// Joint levels (4, 16, 8) × (8, 1, 1); the inner level is contiguous on both sides, so it fuses
/// into a 32-byte element; the outer becomes one dim [4, 64 B, 32 B]. One descriptor, 128 bytes.
#[test]
fn two_d_copy_fuses_the_rows() {
    let s = [ApPair::new(16, 4), ApPair::new(1, 8)];
    let t = [ApPair::new(8, 4), ApPair::new(1, 8)];
    let mut out = Vec::new();
    generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, Layout::flat(0, 256), &s, 0),
        &op("outs[0]", L1, Layout::flat(0, 256), &t, 2),
        Dtype::Float32,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, vec![d(DgeKind::Direct2D, L0, L1 + 8, 32, &[Dim::new(4, 64, 32)])]);
    assert_eq!(out[0].bytes(), 128);
    // Fully contiguous on both sides: one 128-byte element, no dims.
    let c = [ApPair::new(8, 4), ApPair::new(1, 8)];
    out.clear();
    generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, Layout::flat(0, 256), &c, 0),
        &op("outs[0]", L1, Layout::flat(0, 256), &[ApPair::new(1, 32)], 0),
        Dtype::Float32,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, vec![d(DgeKind::Direct2D, L0, L1, 128, &[])]);
}

/// A strided copy that cannot fuse: every other fp32 (step 2 = 8 bytes) into 6 packed ones;
/// the inner steps differ (8 B vs 4 B), so the element stays 4 bytes: one descriptor
/// [6, 8, 4] at offset 1 (src + 4). Then a contiguous run of 8 fp32 over a 2-row arena location
/// (rows of 16 bytes, 64 bytes apart): it crosses the row at element 4, so two descriptors of
/// 16 bytes, at src 0 and 64.
#[test]
fn strided_copy_and_row_crossing() {
    let s = [ApPair::new(2, 6)];
    let t = [ApPair::new(1, 6)];
    let mut out = Vec::new();
    generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, Layout::flat(0, 64), &s, 1),
        &op("outs[0]", L1, Layout::flat(0, 64), &t, 0),
        Dtype::Float32,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, vec![d(DgeKind::Direct2D, L0 + 4, L1, 4, &[Dim::new(6, 8, 4)])]);

    let arena = Layout::partitioned(4096, 2, 16, 64);
    out.clear();
    generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, arena, &[ApPair::new(1, 8)], 0),
        &op("outs[0]", L1, Layout::flat(0, 64), &[ApPair::new(1, 8)], 0),
        Dtype::Float32,
        &mut out,
    )
    .unwrap();
    assert_eq!(
        out,
        vec![d(DgeKind::Direct2D, L0, L1, 16, &[]), d(DgeKind::Direct2D, L0 + 64, L1 + 16, 16, &[])]
    );
    // The usual partition-major AP [[4, 2], [1, 4]] over the same arena: the partition step (4 =
    // the pitch) maps to the 64-byte row stride; one descriptor [2, 64, 16] of 16-byte elements.
    out.clear();
    generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, arena, &[ApPair::new(4, 2), ApPair::new(1, 4)], 0),
        &op("outs[0]", L1, Layout::flat(0, 64), &[ApPair::new(1, 8)], 0),
        Dtype::Float32,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, vec![d(DgeKind::Direct2D, L0, L1, 16, &[Dim::new(2, 64, 16)])]);
}

/// Out of bounds and count mismatches are located errors.
#[test]
fn bad_operands_are_located() {
    let mut out = Vec::new();
    let e = generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, Layout::flat(0, 16), &[ApPair::new(1, 5)], 0),
        &op("outs[0]", L1, Layout::flat(0, 64), &[ApPair::new(1, 5)], 0),
        Dtype::Float32,
        &mut out,
    )
    .unwrap_err();
    assert!(matches!(e, DgeError::Access { side: "ins[0]", .. }), "{e:?}");
    let e = generate::direct(
        DgeKind::Direct2D,
        &op("ins[0]", L0, Layout::flat(0, 64), &[ApPair::new(1, 5)], 0),
        &op("outs[0]", L1, Layout::flat(0, 64), &[ApPair::new(1, 4)], 0),
        Dtype::Float32,
        &mut out,
    )
    .unwrap_err();
    assert_eq!(e, DgeError::Count { src: 5, dst: 4 });
    assert!(out.is_empty());
}

/// 16-index gather with 3 indices out of bounds: rows of 256 bytes, srx_idx_max 10.
/// Indices 12 (k=2), 10 (k=5) and 15 (k=8) are ≥ 10: 13 descriptors. src = 0x1000 + idx·0x100,
/// dst = 0x9000 + k·0x100.
#[test]
fn sixteen_index_gather_three_out_of_bounds() {
    let idx = [0u32, 3, 12, 5, 9, 10, 1, 2, 15, 4, 4, 7, 8, 6, 3, 0];
    let r = Indirect1d {
        mode: IndirectMode::Src,
        src: 0x1000,
        src_step: 0x100,
        dst: 0x9000,
        dst_step: 0x100,
        elem_size: 256,
        srx_idx_max: 10,
        dst_idx_max: 0,
        compute_op: ComputeOp::None,
        dtype: Dtype::Float32,
    };
    let mut out = Vec::new();
    indirect1d(&r, &idx, &[], &mut out).unwrap();
    let want: Vec<(u64, u64)> = vec![
        (0x1000, 0x9000),
        (0x1300, 0x9100),
        (0x1500, 0x9300),
        (0x1900, 0x9400),
        (0x1100, 0x9600),
        (0x1200, 0x9700),
        (0x1400, 0x9900),
        (0x1400, 0x9A00),
        (0x1700, 0x9B00),
        (0x1800, 0x9C00),
        (0x1600, 0x9D00),
        (0x1300, 0x9E00),
        (0x1000, 0x9F00),
    ];
    let got: Vec<(u64, u64)> = out.iter().map(|d| (d.src, d.dst)).collect();
    assert_eq!(got, want);
    assert!(out.iter().all(|d| d.kind == DgeKind::Indirect1D && d.bytes() == 256 && d.dims().is_empty()));
    // Emission: 13 GENERATE (no dims, so no DIMPUSH), the two bound REGWRITEs, one doorbell.
    let e = emissions(&out, &[(2, 10), (3, 0)]);
    assert_eq!(e.len(), 2 + 13 + 1);
    assert_eq!(e[0], Emission::RegWrite { reg: 2, value: 10 });
    assert_eq!(e.last(), Some(&Emission::Doorbell { tail: 13 }));
    // Scatter mode with the same list: dst indexed, src by position.
    let s = Indirect1d { mode: IndirectMode::Dst, dst_idx_max: 10, ..r };
    out.clear();
    indirect1d(&s, &[], &idx, &mut out).unwrap();
    assert_eq!(out.len(), 13);
    assert_eq!((out[2].src, out[2].dst), (0x1300, 0x9500));
}

/// `do_indirection`'s MAC: unsigned index × signed step into a 64-bit address.
#[test]
fn mac_is_unsigned_times_signed() {
    assert_eq!(mac(0x1000, 3, -256), 0xD00);
    // (2^32 − 1) · 2^32 = 0xFFFF_FFFF_0000_0000 (no sign extension of the index).
    assert_eq!(mac(0, u32::MAX, 1 << 32), 0xFFFF_FFFF_0000_0000);
    // 0x10 + 1·(−0x20) wraps below zero.
    assert_eq!(mac(0x10, 1, -0x20), 0xFFFF_FFFF_FFFF_FFF0);
}

/// One 16 × 128 bf16 tile: 16 source rows of 128 elements, 128 elements apart (256 bytes);
/// gathered row k lands in destination column k (dst + 2k), destination rows 16 elements = 32
/// bytes apart. idx[1] = 70 ≥ srx_idx_max 64 emits nothing: 15 descriptors [128, 2, 32].
#[test]
fn gather_transpose_tile() {
    let mut idx: Vec<u32> = (0..16).map(|k| (k * 3) % 64).collect();
    idx[1] = 70;
    let r = GatherTranspose {
        dtype: Dtype::Bfloat16,
        src: 0x10000,
        src_dims: [(1, 128), (128, 16), (0, 1), (0, 1)],
        dst: 0x20000,
        dst_dims: [(1, 16), (16, 128), (0, 1), (0, 1)],
        gather_dim: 1,
        srx_idx_max: 64,
    };
    let mut out = Vec::new();
    gather_transpose(&r, &idx, &mut out).unwrap();
    assert_eq!(out.len(), 15);
    assert_eq!(out[0].src, 0x10000);
    assert_eq!(out[0].dst, 0x20000);
    // k = 2: idx 6 → src 0x10000 + 6·256 = 0x10600, dst 0x20000 + 4.
    assert_eq!((out[1].src, out[1].dst), (0x10600, 0x20004));
    assert!(out.iter().all(|d| d.kind == DgeKind::GatherTranspose && d.dims() == [Dim::new(128, 2, 32)]));

    // Every constraint broken at once: each reported, located.
    let bad = GatherTranspose {
        dtype: Dtype::Float32,
        gather_dim: 0,
        dst: 0x20010,
        src_dims: [(1, 128), (128, 15), (0, 1), (0, 1)],
        ..r
    };
    let Err(DgeError::GatherTranspose(v)) = gather_transpose(&bad, &idx[..15], &mut out) else { panic!() };
    let fields: Vec<&str> = v.iter().map(|v| v.field).collect();
    assert_eq!(fields, ["dtype", "gather_dim", "dst.address", "src.num_elem[1]", "dst.num_elem[0]"]);
}

// ---------------------------------------------------------------- execution

fn mem(bytes: Vec<u8>) -> FlatMemory {
    let mut m = FlatMemory::new();
    assert!(m.map(0x1000, bytes));
    m
}

/// Descriptor k sees what k − 1 wrote: [0..4) → [4..8), then [4..8) → [8..12) copies 0,1,2,3.
/// Inside one descriptor an overlap reads everything first: 4 one-byte elements from 0x1000 to
/// 0x1001 give 0,1,2,3 at 1..5 (a forward byte loop would smear 0).
#[test]
fn overlap_is_serial_between_and_snapshot_within() {
    let init: Vec<u8> = (0..16).collect();
    let mut m = mem(init.clone());
    let a = d(DgeKind::Direct2D, 0x1000, 0x1004, 4, &[]);
    let b = d(DgeKind::Direct2D, 0x1004, 0x1008, 4, &[]);
    execute(&[a, b], &mut m).unwrap();
    assert_eq!(&m.region(0x1000).unwrap()[..12], &[0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);

    let mut m = mem(init);
    let c = d(DgeKind::Direct2D, 0x1000, 0x1001, 1, &[Dim::new(4, 1, 1)]);
    execute(&[c], &mut m).unwrap();
    assert_eq!(&m.region(0x1000).unwrap()[..6], &[0, 0, 1, 2, 3, 5]);
}

/// An access outside the mapped range is a typed error naming the descriptor, and the list
/// writes nothing, not even the good descriptor before it (G40).
#[test]
fn out_of_range_is_an_error_and_writes_nothing() {
    let mut m = mem(vec![7; 16]);
    let ok = d(DgeKind::Direct2D, 0x1000, 0x1008, 4, &[]);
    // Elements at dst 0x1000, 0x100C, 0x1018: the third is outside.
    let bad = d(DgeKind::Direct2D, 0x1004, 0x1000, 1, &[Dim::new(3, 0, 12)]);
    let before = m.clone();
    let e = execute(&[ok, bad], &mut m).unwrap_err();
    assert!(matches!(e, dge::ExecError::Memory { descriptor: 1, .. }), "{e:?}");
    assert_eq!(m, before);
}

/// Contiguous NONE descriptors whose merged ranges do not overlap run as one copy; the result is
/// the serial one (the overlapping pair above is the guard: merged, it would give 4..8 at 8).
#[test]
fn contiguous_descriptors_coalesce_to_the_serial_result() {
    let init: Vec<u8> = (0..64).collect();
    let mut m = mem(init);
    let list: Vec<Descriptor> =
        (0..4).map(|k| d(DgeKind::Direct2D, 0x1000 + 8 * k, 0x1020 + 8 * k, 8, &[])).collect();
    execute(&list, &mut m).unwrap();
    let r = m.region(0x1000).unwrap();
    assert_eq!(&r[32..64], &(0u8..32).collect::<Vec<_>>()[..]);
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_f32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// glibc fmaxf/fminf with dst first: a NaN yields the other operand, a ±0 tie keeps dst.
#[test]
fn max_min_nan_and_signed_zero() {
    let dst = [0.0f32, -0.0, f32::NAN, 1.0];
    let src = [-0.0f32, 0.0, 2.0, f32::NAN];
    for (op, want) in [(ComputeOp::Max, [0.0f32, -0.0, 2.0, 1.0]), (ComputeOp::Min, [0.0f32, -0.0, 2.0, 1.0])]
    {
        let mut bytes = f32s(&dst);
        bytes.extend(f32s(&src));
        let mut m = mem(bytes);
        let x = Descriptor::new(DgeKind::Direct2D, 0x1010, 0x1000, 16, &[], op, Dtype::Float32).unwrap();
        execute(&[x], &mut m).unwrap();
        let got = to_f32(&m.region(0x1000).unwrap()[..16]);
        let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "{op:?}: got {got:08x?}");
    }
}

/// bf16 by hand: widen = bits << 16; round-to-nearest-even = add 0x7FFF + lsb, keep the top half
/// (finite values only; the generator below makes no NaN).
fn bf16_rne(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

/// Every compute op on bf16 and fp32, two elements of 8 values with a strided source, against
/// the definition computed here one value at a time.
#[test]
fn compute_ops_match_the_slow_twin() {
    let mut rng = XorShift64::new(0x9E37_79B9_7F4A_7C15);
    for op in [ComputeOp::Add, ComputeOp::Multiply, ComputeOp::Max, ComputeOp::Min] {
        for dt in [Dtype::Bfloat16, Dtype::Float32] {
            let es = dt.size();
            let vals: Vec<f32> = (0..64).map(|_| (rng.below(2001) as f32 - 1000.0) / 37.0).collect();
            let enc = |v: f32| -> Vec<u8> {
                match dt {
                    Dtype::Bfloat16 => bf16_rne(v).to_le_bytes().to_vec(),
                    _ => v.to_le_bytes().to_vec(),
                }
            };
            let dec = |b: &[u8]| -> f32 {
                match dt {
                    Dtype::Bfloat16 => f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16),
                    _ => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                }
            };
            let bytes: Vec<u8> = vals.iter().flat_map(|v| enc(*v)).collect();
            let mut m = mem(bytes.clone());
            // dst: elements at 0 and 8 values; src: elements at 32 and 48 values (stride 16).
            let x = Descriptor::new(
                DgeKind::Direct2D,
                0x1000 + 32 * es as u64,
                0x1000,
                8 * es as u32,
                &[Dim::new(2, 16 * es as i64, 8 * es as i64)],
                op,
                dt,
            )
            .unwrap();
            execute(&[x], &mut m).unwrap();
            let mut want = bytes.clone();
            for e in 0..2 {
                for v in 0..8 {
                    let (di, si) = (e * 8 + v, 32 + e * 16 + v);
                    let (a, b) = (dec(&bytes[di * es..]), dec(&bytes[si * es..]));
                    let r = match op {
                        ComputeOp::Add => a + b,
                        ComputeOp::Multiply => a * b,
                        ComputeOp::Max => {
                            if b > a {
                                b
                            } else {
                                a
                            }
                        }
                        _ => {
                            if b < a {
                                b
                            } else {
                                a
                            }
                        }
                    };
                    want[di * es..(di + 1) * es].copy_from_slice(&enc(r));
                }
            }
            let got = m.region(0x1000).unwrap();
            assert_eq!(got, &want[..], "{op:?} {dt:?}");
        }
    }
}

/// One DIRECT2D compute descriptor without dims over `dst ++ src` (dst at 0x1000, src right after
/// it): the destination bytes afterwards.
fn int_compute(op: ComputeOp, dt: Dtype, dst: &[u8], src: &[u8]) -> Vec<u8> {
    assert_eq!(dst.len(), src.len());
    let mut m = mem([dst, src].concat());
    let n = dst.len();
    let x = Descriptor::new(DgeKind::Direct2D, 0x1000 + n as u64, 0x1000, n as u32, &[], op, dt).unwrap();
    execute(&[x], &mut m).unwrap();
    m.region(0x1000).unwrap()[..n].to_vec()
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i16s(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Compute ops on integer dtypes combine at the dtype's width (G41, as the ISA datapath's X14),
/// worked by hand:
/// - int32 ADD wraps (re-facts §8 "Int add wraps"): i32::MAX + 1 = 2^31 → 2^31 − 2^32 = −2^31;
///   −7 + 3 = −4. A saturating add would give i32::MAX.
/// - uint32 ADD: 0xFFFF_FFFF + 2 = 2^32 + 1 → 1.
/// - uint8 MAX compares unsigned (X14 ASSUMED): MAX(200, 100) = 200; int8 reads the same byte
///   0xC8 as 200 − 256 = −56, so MAX(−56, 100) = 100.
/// - int8 MIN compares signed (re-facts §8 "min/max are signed"): MIN(−1, 1) = −1 (0xFF);
///   uint8 reads 0xFF as 255, so MIN(255, 1) = 1.
/// - int16 MULTIPLY wraps: 300·300 = 90000 = 65536 + 24464 → 24464; −200·200 = −40000 →
///   −40000 + 65536 = 25536 (< 2^15, so positive as int16).
/// - int64 MULTIPLY: 2^62·4 = 2^64 → 0; uint16 MIN(0xFFFF, 1) = 1 where int16 MIN(−1, 1) = −1.
#[test]
fn integer_compute_by_hand() {
    let c = int_compute;
    assert_eq!(
        c(ComputeOp::Add, Dtype::Int32, &i32s(&[i32::MAX, -7]), &i32s(&[1, 3])),
        i32s(&[i32::MIN, -4])
    );
    assert_eq!(
        c(ComputeOp::Add, Dtype::Uint32, &u32::MAX.to_le_bytes(), &2u32.to_le_bytes()),
        1u32.to_le_bytes()
    );
    assert_eq!(c(ComputeOp::Max, Dtype::Uint8, &[200], &[100]), [200]);
    assert_eq!(c(ComputeOp::Max, Dtype::Int8, &[200], &[100]), [100]);
    assert_eq!(c(ComputeOp::Min, Dtype::Int8, &[(-1i8) as u8], &[1]), [0xFF]);
    assert_eq!(c(ComputeOp::Min, Dtype::Uint8, &[0xFF], &[1]), [1]);
    assert_eq!(
        c(ComputeOp::Multiply, Dtype::Int16, &i16s(&[300, -200]), &i16s(&[300, 200])),
        i16s(&[24464, 25536])
    );
    assert_eq!(
        c(ComputeOp::Multiply, Dtype::Int64, &(1i64 << 62).to_le_bytes(), &4i64.to_le_bytes()),
        [0; 8]
    );
    assert_eq!(c(ComputeOp::Min, Dtype::Uint16, &[0xFF, 0xFF], &[1, 0]), [1, 0]);
    assert_eq!(c(ComputeOp::Min, Dtype::Int16, &[0xFF, 0xFF], &[1, 0]), [0xFF, 0xFF]);
}

/// A destination hit several times folds serially, in order (G42), with each step wrapped at
/// the dtype's width. int8 ADD of 20, 20, −50 into 100:
/// - three INDIRECT1D descriptors onto one byte: 100 + 20 = 120; 120 + 20 = 140 → 140 − 256 =
///   −116; −116 − 50 = −166 → −166 + 256 = 90. (Saturating would end at 127 − 50 = 77; each
///   descriptor reading the original dst, i.e. last writer wins, at 100 − 50 = 50.)
/// - one descriptor whose dim has dst step 0 (three elements onto one byte): the same 90.
#[test]
fn integer_compute_on_a_duplicate_destination_is_serial() {
    let start = [100u8, 20, 20, (-50i8) as u8];
    let list: Vec<Descriptor> = (1..4)
        .map(|k| {
            Descriptor::new(DgeKind::Indirect1D, 0x1000 + k, 0x1000, 1, &[], ComputeOp::Add, Dtype::Int8)
                .unwrap()
        })
        .collect();
    let mut m = mem(start.to_vec());
    execute(&list, &mut m).unwrap();
    assert_eq!(m.region(0x1000).unwrap()[0] as i8, 90);
    let one = Descriptor::new(
        DgeKind::Direct2D,
        0x1001,
        0x1000,
        1,
        &[Dim::new(3, 1, 0)],
        ComputeOp::Add,
        Dtype::Int8,
    )
    .unwrap();
    let mut m = mem(start.to_vec());
    execute(&[one], &mut m).unwrap();
    assert_eq!(m.region(0x1000).unwrap()[0] as i8, 90);
}

/// An integer compute descriptor whose source and destination overlap reads every source
/// element first (G42, as floats): int32 [1, 2, 3, 4], ADD from elements 0..3 onto 1..4:
/// dst[1] = 2 + 1 = 3, dst[2] = 3 + 2 = 5, dst[3] = 4 + 3 = 7 → [1, 3, 5, 7]. (Reading as it
/// writes would give dst[2] = 3 + 3 = 6, dst[3] = 4 + 6 = 10.)
#[test]
fn integer_compute_with_overlap_snapshots_the_source() {
    let mut m = mem(i32s(&[1, 2, 3, 4]));
    let x = Descriptor::new(
        DgeKind::Direct2D,
        0x1000,
        0x1004,
        4,
        &[Dim::new(3, 4, 4)],
        ComputeOp::Add,
        Dtype::Int32,
    )
    .unwrap();
    execute(&[x], &mut m).unwrap();
    assert_eq!(m.region(0x1000).unwrap(), &i32s(&[1, 3, 5, 7])[..]);
}

/// Every compute op on all eight integer dtypes, two elements of 4 values with a strided source,
/// against the definition computed here one value at a time in i128: ADD / MULTIPLY reduced mod
/// 2^bits, MAX / MIN on the values as the dtype reads them (signed for intN, unsigned for uintN).
#[test]
fn integer_compute_ops_match_the_slow_twin() {
    let mut rng = XorShift64::new(0x5EED_0641);
    let dtypes = [
        (Dtype::Int8, true),
        (Dtype::Uint8, false),
        (Dtype::Int16, true),
        (Dtype::Uint16, false),
        (Dtype::Int32, true),
        (Dtype::Uint32, false),
        (Dtype::Int64, true),
        (Dtype::Uint64, false),
    ];
    for op in [ComputeOp::Add, ComputeOp::Multiply, ComputeOp::Max, ComputeOp::Min] {
        for (dt, signed) in dtypes {
            let es = dt.size();
            let bits = 8 * es as u32;
            let bytes: Vec<u8> = (0..64 * es).map(|_| rng.next_u64() as u8).collect();
            let read = |b: &[u8]| -> i128 {
                let mut le = [0u8; 16];
                le[..es].copy_from_slice(&b[..es]);
                let u = i128::from_le_bytes(le);
                if signed && u >> (bits - 1) & 1 == 1 { u - (1i128 << bits) } else { u }
            };
            let mut m = mem(bytes.clone());
            // dst: elements at 0 and 4 values; src: elements at 32 and 48 values (stride 16).
            let x = Descriptor::new(
                DgeKind::Direct2D,
                0x1000 + 32 * es as u64,
                0x1000,
                4 * es as u32,
                &[Dim::new(2, 16 * es as i64, 4 * es as i64)],
                op,
                dt,
            )
            .unwrap();
            execute(&[x], &mut m).unwrap();
            let mut want = bytes.clone();
            for e in 0..2 {
                for v in 0..4 {
                    let (di, si) = (e * 4 + v, 32 + e * 16 + v);
                    let (a, b) = (read(&bytes[di * es..]), read(&bytes[si * es..]));
                    let r = match op {
                        // |a·b| < 2^128 for a, b < 2^64 in magnitude; wrapping_mul keeps the low
                        // bits either way, and only the low `bits` are kept.
                        ComputeOp::Add => a + b,
                        ComputeOp::Multiply => a.wrapping_mul(b),
                        ComputeOp::Max => a.max(b),
                        _ => a.min(b),
                    };
                    want[di * es..(di + 1) * es].copy_from_slice(&r.to_le_bytes()[..es]);
                }
            }
            let got = m.region(0x1000).unwrap();
            assert_eq!(got, &want[..], "{op:?} {dt:?}");
        }
    }
}

/// A compute op still refuses a packed dtype and an element size that is not a multiple of the
/// dtype's size (G41), before writing anything.
#[test]
fn compute_on_packed_or_ragged_elements_is_an_error() {
    for (dt, elem) in [(Dtype::Float8E4m3fnX4, 4), (Dtype::Int32, 6), (Dtype::Float32, 6)] {
        let mut m = mem(vec![7; 16]);
        let x = Descriptor::new(DgeKind::Direct2D, 0x1008, 0x1000, elem, &[], ComputeOp::Add, dt).unwrap();
        let e = execute(&[x], &mut m).unwrap_err();
        assert!(matches!(e, dge::ExecError::Compute { descriptor: 0, .. }), "{dt:?} {elem}: {e}");
        assert_eq!(m.region(0x1000).unwrap(), &[7; 16][..], "{dt:?} {elem}");
    }
    assert!(!execute::computes(Dtype::Float8E4m3fnX4));
    assert!(
        execute::computes(Dtype::Int8)
            && execute::computes(Dtype::Uint64)
            && execute::computes(Dtype::Bfloat16)
    );
}

/// The same 16-index gather as an IndirectLoad through crates/indirection's plan: an 8-row table
/// of 4 fp32 (16-byte entries), indices 8, 11 and 4294967295 (int32 −1 zero-extended: not the
/// skip sentinel, I1) are out of bounds and skipped under `Oob::Skip`: 13 INDIRECT1D of 16 bytes,
/// src = table + 16·idx, dst = row j at 16·j.
#[test]
fn indirect_load_plan_skips_three_of_sixteen() {
    let idx: [u64; 16] = [0, 3, 8, 5, 7, 11, 1, 2, 4294967295, 4, 4, 7, 6, 6, 3, 0];
    let table = [ApPair::new(1, 1), ApPair::new(4, 8)];
    let dense = [ApPair::new(4, 16), ApPair::new(1, 4)];
    let mut out = Vec::new();
    generate::indirect_rows(
        generate::Direction::Gather,
        &op("ins[0]", L0, Layout::flat(0, 128), &table, 0),
        &idx,
        &op("outs[0]", L1, Layout::flat(0, 256), &dense, 0),
        None,
        indirection::Oob::Skip,
        1,
        Dtype::Float32,
        &mut out,
    )
    .unwrap();
    let kept = [0usize, 1, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14, 15];
    let want: Vec<Descriptor> =
        kept.iter().map(|&j| d(DgeKind::Indirect1D, L0 + 16 * idx[j], L1 + 16 * j as u64, 16, &[])).collect();
    assert_eq!(out, want);
    // Under Oob::Fault the first bad index (position 2, value 8) is the error. The table is
    // bounded by its location (I2/I4): entry 8 spans elements 8·4 ..= 8·4 + 3 = 32..=35 of a
    // 128-byte location holding fp32 elements 0..32.
    let e = generate::indirect_rows(
        generate::Direction::Gather,
        &op("ins[0]", L0, Layout::flat(0, 128), &table, 0),
        &idx,
        &op("outs[0]", L1, Layout::flat(0, 256), &dense, 0),
        None,
        indirection::Oob::Fault,
        1,
        Dtype::Float32,
        &mut out,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains(
            "element 2 = 8 is outside the table's location: its entry spans elements 32..=35, the location holds 0..32"
        ),
        "{e}"
    );
}
