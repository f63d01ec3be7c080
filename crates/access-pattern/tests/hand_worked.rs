//! Hand-worked cases: runs, addresses and bounds computed on paper from seed 000 §1.3 and the
//! bir-json.md address rule.
#![expect(clippy::unwrap_used, reason = "helpers outside #[test] fns unwrap on fixed test data")]

use access_pattern::*;
use bir_ir::ApPair;
use rstest::rstest;

fn pairs(v: &[(i64, i64)]) -> Vec<ApPair> {
    v.iter().map(|&(s, n)| ApPair::new(s, n)).collect()
}

fn run(start: i64, len: u64, stride: i64) -> Run {
    Run { start, len, stride }
}

/// (first runs, run count) of a pattern.
fn runs_of(v: &[(i64, i64)], offset: i64, take: usize) -> (Vec<Run>, u64) {
    let ps = pairs(v);
    let p = Pattern { pairs: &ps, offset, elem_size: 4 };
    let runs = p.runs().unwrap();
    let n = runs.remaining();
    (runs.take(take).collect(), n)
}

#[rstest]
// The whole 128 x 512 fp32 tile fuses into one run.
#[case(&[(512, 128), (1, 512)], 0, vec![run(0, 65536, 1)], 1)]
// A partition slice starting at partition 32 (offset 32·512).
#[case(&[(512, 64), (1, 512)], 16384, vec![run(16384, 32768, 1)], 1)]
// Unit dims in the middle are dropped before fusing.
#[case(&[(512, 128), (7, 1), (1, 512)], 0, vec![run(0, 65536, 1)], 1)]
// A column slice: 256 of 512 per partition, so one run per partition.
#[case(&[(512, 128), (1, 256)], 0, vec![run(0, 256, 1), run(512, 256, 1)], 128)]
// Z/Y swapped over [128][4][64][64] (pitch 16384): X fuses (64), then Y (step 4096 != 64) loops.
#[case(&[(16384, 128), (64, 64), (4096, 4), (1, 64)], 0,
       vec![run(0, 64, 1), run(4096, 64, 1), run(8192, 64, 1), run(12288, 64, 1), run(64, 64, 1)], 128 * 64 * 4)]
// Y step 2: X fuses 64, Y has step 128.
#[case(&[(16384, 128), (4096, 4), (128, 64), (1, 64)], 0, vec![run(0, 64, 1), run(128, 64, 1)], 128 * 4 * 64)]
// Broadcast: step 0 innermost is one strided run per partition.
#[case(&[(512, 128), (0, 512)], 3, vec![run(3, 512, 0), run(515, 512, 0)], 128)]
// Negative step: each partition row read backwards.
#[case(&[(512, 128), (-1, 512)], 511, vec![run(511, 512, -1), run(1023, 512, -1)], 128)]
// Partition transpose (W step 1, X step 128): strided runs of 128 elements.
#[case(&[(1, 128), (128, 128)], 0, vec![run(0, 128, 128), run(1, 128, 128)], 128)]
// Everything unit: one run of one element.
#[case(&[(5, 1), (9, 1)], 7, vec![run(7, 1, 1)], 1)]
fn linearization(#[case] v: &[(i64, i64)], #[case] offset: i64, #[case] first: Vec<Run>, #[case] count: u64) {
    let (got, n) = runs_of(v, offset, first.len());
    assert_eq!(got, first);
    assert_eq!(n, count);
}

#[rstest]
// X step 2 over [128][4][128][64] (the bench's gather): Y (step 64 = 2 · 32), then Z
// (8192 = 2 · 4096) and W (32768 = 2 · 16384) each continue the strided X run: every other
// element of the whole tensor is one run.
#[case(&[(32768, 128), (8192, 4), (64, 128), (2, 32)], 0, vec![run(0, 2 << 20, 2)], 1)]
// X step 2 of every other Y row: Y (step 128 != 2 · 32) does not continue the run.
#[case(&[(16384, 128), (4096, 4), (128, 64), (2, 32)], 0, vec![run(0, 32, 2), run(128, 32, 2)], 128 * 4 * 64)]
// Broadcast over two levels: one run of 12 copies of element 5.
#[case(&[(0, 3), (0, 4)], 5, vec![run(5, 12, 0)], 1)]
// Backwards in steps of 2 over two levels (-64 = -2 · 32): one run.
#[case(&[(-64, 4), (-2, 32)], 255, vec![run(255, 128, -2)], 1)]
// (64, 2) continues the run (64 = 2 · 32); (96, 2) does not (the run now spans 2 · 64 = 128).
#[case(&[(96, 2), (64, 2), (2, 32)], 0, vec![run(0, 64, 2), run(96, 64, 2)], 2)]
// Contiguous runs are left as they are (64 rows of 64, 128 apart).
#[case(&[(128, 64), (1, 64)], 0, vec![run(0, 64, 1), run(128, 64, 1)], 64)]
fn strided_runs_fuse(
    #[case] v: &[(i64, i64)],
    #[case] offset: i64,
    #[case] first: Vec<Run>,
    #[case] count: u64,
) {
    let ps = pairs(v);
    let runs = Pattern { pairs: &ps, offset, elem_size: 4 }.runs().unwrap().fuse_strided();
    assert_eq!(runs.remaining(), count);
    assert_eq!(runs.take(first.len()).collect::<Vec<_>>(), first);
}

#[rstest]
// Private 128 x 2048-byte fp32 location: element 513 = partition 1, element 1 → byte 2048 + 4.
#[case(Layout::partitioned(0, 128, 2048, 2048), 513, 4, Some(2052))]
// The same location in a gen3 SBUF arena at partition 32, byte 4096.
#[case(Layout::partitioned(32 * 229376 + 4096, 128, 2048, 229376), 513, 4, Some(33 * 229376 + 4096 + 4))]
// bf16 in the same location: pitch 1024, element 1025 = partition 1, element 1.
#[case(Layout::partitioned(0, 128, 2048, 2048), 1025, 2, Some(2050))]
// Past the last partition.
#[case(Layout::partitioned(0, 128, 2048, 2048), 65536, 4, None)]
// Flat DRAM: byte = e·size.
#[case(Layout::flat(0, 1024), 255, 4, Some(1020))]
#[case(Layout::flat(0, 1024), 256, 4, None)]
#[case(Layout::flat(0, 1024), -1, 4, None)]
fn addresses(#[case] l: Layout, #[case] e: i64, #[case] size: usize, #[case] want: Option<usize>) {
    assert_eq!(l.address(e, size), want);
}

fn bounds(v: &[(i64, i64)], offset: i64) -> Result<(), ApError> {
    let ps = pairs(v);
    check_bounds(&Layout::partitioned(0, 128, 2048, 2048), &Pattern { pairs: &ps, offset, elem_size: 4 })
}

#[rstest]
#[case(&[(512, 128), (1, 512)], 0, Ok(()))]
#[case(&[(512, 128), (1, 513)], 0, Err(ApError::OutOfBounds { dim: Some(1), index: 512, element: 65536, capacity: 65536 }))]
#[case(&[(512, 129), (1, 512)], 0, Err(ApError::OutOfBounds { dim: Some(0), index: 128, element: 65536, capacity: 65536 }))]
#[case(&[(512, 2), (-1, 3)], 1, Err(ApError::OutOfBounds { dim: Some(1), index: 2, element: -1, capacity: 65536 }))]
#[case(&[(512, 128), (1, 512)], -1, Err(ApError::OutOfBounds { dim: None, index: 0, element: -1, capacity: 65536 }))]
#[case(&[(512, 128), (1, 0)], 0, Err(ApError::BadNum { dim: 1, num: 0 }))]
#[case(&[(1, 2); 6], 0, Err(ApError::TooManyDims { dims: 6 }))]
#[case(&[], 0, Err(ApError::NoDims))]
#[case(&[(512, 2), (1 << 40, 1 << 40)], 0, Err(ApError::Overflow { dim: 1 }))]
fn bounds_report_dimension_and_index(
    #[case] v: &[(i64, i64)],
    #[case] offset: i64,
    #[case] want: Result<(), ApError>,
) {
    assert_eq!(bounds(v, offset), want);
}

#[test]
fn a_4x4_transpose_through_aps() {
    // Buffer: a 4 x 4 u16 matrix, rows as partitions (pitch 4).
    let layout = Layout::partitioned(0, 4, 8, 8);
    let buf: Vec<u8> = (0u16..16).flat_map(u16::to_le_bytes).collect();
    // Read column-major: W step 1 (element), X step 4 (a row).
    let ps = pairs(&[(1, 4), (4, 4)]);
    let mut out = vec![0u8; 32];
    read(&buf, &layout, &Pattern { pairs: &ps, offset: 0, elem_size: 2 }, &mut out).unwrap();
    let got: Vec<u16> = out.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!(got, [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]);
    // Write it back transposed: the buffer becomes the transpose.
    let mut dst = vec![0u8; 32];
    write(&mut dst, &layout, &Pattern { pairs: &pairs(&[(4, 4), (1, 4)]), offset: 0, elem_size: 2 }, &out)
        .unwrap();
    assert_eq!(dst, out);
}

#[test]
fn broadcast_destination_keeps_the_last_write() {
    let layout = Layout::flat(0, 4);
    let mut buf = vec![0u8; 4];
    let src: Vec<u8> = (1u32..=3).flat_map(u32::to_le_bytes).collect();
    write(&mut buf, &layout, &Pattern { pairs: &pairs(&[(0, 3)]), offset: 0, elem_size: 4 }, &src).unwrap();
    assert_eq!(buf, 3u32.to_le_bytes());
}

#[test]
fn arena_runs_split_at_partition_ends() {
    // Two 8-byte rows 16 bytes apart; a u8 run of 12 crosses from row 0 into row 1.
    let layout = Layout::partitioned(0, 2, 8, 16);
    let buf: Vec<u8> = (0u8..32).collect();
    let mut out = vec![0u8; 12];
    read(&buf, &layout, &Pattern { pairs: &pairs(&[(1, 12)]), offset: 2, elem_size: 1 }, &mut out).unwrap();
    assert_eq!(out, [2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21]);
}

#[test]
fn size_and_buffer_errors() {
    let ps = pairs(&[(1, 4)]);
    let p = Pattern { pairs: &ps, offset: 0, elem_size: 4 };
    let mut out = vec![0u8; 15];
    assert_eq!(
        read(&[0u8; 16], &Layout::flat(0, 16), &p, &mut out),
        Err(ApError::FlatSize { want: 16, got: 15 })
    );
    let mut out = vec![0u8; 16];
    assert_eq!(
        read(&[0u8; 8], &Layout::flat(0, 16), &p, &mut out),
        Err(ApError::Buffer { need: 16, have: 8 })
    );
}

/// bir-json.md's rule (fidelity A3): rows are `dims[1]` = 2048 bytes, so a 4-byte element's pitch
/// is 512 elements and element 259 is byte 1036 of row 0, whatever the tensor's own shape.
#[test]
fn the_partition_modulus_is_the_location_row() {
    use bir_ir::{AllocId, MemoryLocation, MemoryType};
    let loc = MemoryLocation {
        name: "t".into(),
        alloc: AllocId(0),
        mem_type: MemoryType::Sb,
        addr: 0,
        partitions: 128,
        bytes_per_partition: 2048,
        base: 0,
        bank: 0,
        allocated: false,
    };
    let l = Layout::private(&loc);
    assert_eq!(l.pitch(4), 512);
    assert_eq!(l.address(259, 4), Some(1036));
    assert_eq!(l.address(512 + 3, 4), Some(2048 + 12));
}

/// Fuzz crash (access_pattern target, fuzz/regressions/access_pattern/check_bounds_step_i64_min):
/// a level of step −2^63 and num 2 negated its step and overflowed. Worked by hand: a 4-element
/// location, offset 3; index 1 reaches 3 − 2^63, the first index below 0.
#[test]
fn check_bounds_step_i64_min() {
    let ps = pairs(&[(i64::MIN, 2)]);
    let p = Pattern { pairs: &ps, offset: 3, elem_size: 4 };
    assert_eq!(
        check_bounds(&Layout::flat(0, 16), &p),
        Err(ApError::OutOfBounds { dim: Some(0), index: 1, element: 3 + i64::MIN, capacity: 4 })
    );
}

/// The same for the upper bound: step 2^63 − 1 from offset 0 (⌈(4 − 0) / step⌉ = 1 used to
/// overflow computing `cap − hi + step − 1`); index 1 reaches i64::MAX.
#[test]
fn check_bounds_step_i64_max() {
    let ps = pairs(&[(i64::MAX, 2)]);
    let p = Pattern { pairs: &ps, offset: 0, elem_size: 4 };
    assert_eq!(
        check_bounds(&Layout::flat(0, 16), &p),
        Err(ApError::OutOfBounds { dim: Some(0), index: 1, element: i64::MAX, capacity: 4 })
    );
    // Ordinary steps keep their first crossing index: 2 + 4·i ≥ 10 first at i = 2 (element 10);
    // 5 − 2·i < 0 first at i = 3 (element −1).
    let ps = pairs(&[(4, 3)]);
    let p = Pattern { pairs: &ps, offset: 2, elem_size: 4 };
    assert_eq!(
        check_bounds(&Layout::flat(0, 40), &p),
        Err(ApError::OutOfBounds { dim: Some(0), index: 2, element: 10, capacity: 10 })
    );
    let ps = pairs(&[(-2, 4)]);
    let p = Pattern { pairs: &ps, offset: 5, elem_size: 4 };
    assert_eq!(
        check_bounds(&Layout::flat(0, 40), &p),
        Err(ApError::OutOfBounds { dim: Some(0), index: 3, element: -1, capacity: 10 })
    );
}
