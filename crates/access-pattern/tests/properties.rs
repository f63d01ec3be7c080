//! Property tests: for random patterns and layouts, the fast paths equal a naive per-element
//! walker written here from the definitions (nested loops, explicit address formula).

use access_pattern::*;
use bir_ir::ApPair;
use test_rng::SplitMix64;

/// Draws in an inclusive range.
trait Range {
    /// A value in `lo..=hi` (`lo <= hi`), from one draw.
    fn range(&mut self, lo: i64, hi: i64) -> i64;
}

impl Range for SplitMix64 {
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// Every element index of the pattern in row-major order, by plain nested loops.
fn naive_elements(pairs: &[ApPair], offset: i64) -> Vec<i64> {
    let mut out = vec![offset];
    for p in pairs {
        out = out.iter().flat_map(|&b| (0..p.num).map(move |i| b + i * p.step)).collect();
    }
    out
}

/// The address rule written out: partition e / pitch, byte (e % pitch)·size, rows `row` apart.
fn naive_address(
    e: i64,
    flat: bool,
    partitions: i64,
    row_bytes: i64,
    row: i64,
    origin: i64,
    size: i64,
) -> Option<i64> {
    if flat {
        // A flat location is `partitions` × `row_bytes` bytes long.
        return (e >= 0 && (e + 1) * size <= partitions * row_bytes).then_some(origin + e * size);
    }
    let pitch = row_bytes / size;
    (e >= 0 && e < partitions * pitch).then(|| origin + (e / pitch) * row + (e % pitch) * size)
}

struct Case {
    pairs: Vec<ApPair>,
    offset: i64,
    size: usize,
    layout: Layout,
    flat: bool,
    partitions: i64,
    row_bytes: i64,
    row: i64,
    origin: i64,
    buf_len: usize,
}

fn random_case(rng: &mut SplitMix64) -> Case {
    let size = [1usize, 2, 4, 8][rng.range(0, 3) as usize];
    let flat = rng.range(0, 3) == 0;
    let partitions = rng.range(1, 6);
    let pitch = rng.range(1, 12);
    let row_bytes =
        pitch * size as i64 + if rng.range(0, 3) == 0 { rng.range(0, size as i64 - 1) } else { 0 };
    let row = if rng.range(0, 1) == 0 { row_bytes } else { row_bytes + rng.range(1, 9) };
    let origin = rng.range(0, 5);
    let (layout, buf_len) = if flat {
        let bytes = partitions * row_bytes;
        (Layout::flat(origin as usize, bytes as u64), (origin + bytes) as usize)
    } else {
        let l = Layout::partitioned(origin as usize, partitions as u64, row_bytes as u64, row as u64);
        (l, (origin + (partitions - 1) * row + row_bytes) as usize)
    };
    let dims = rng.range(1, 5) as usize;
    let capacity =
        if flat { partitions * row_bytes / size as i64 } else { partitions * (row_bytes / size as i64) };
    let mut pairs = Vec::new();
    for d in 0..dims {
        let num = rng.range(1, 4);
        let step = match rng.range(0, 5) {
            0 => 0,
            1 => 1,
            2 => -rng.range(1, 3),
            _ => rng.range(1, capacity.max(1)),
        };
        // The partition dim's step is never negative in BIR.
        pairs.push(ApPair::new(if d == 0 { step.abs() } else { step }, num));
    }
    let offset = rng.range(-2, capacity + 2);
    Case { pairs, offset, size, layout, flat, partitions, row_bytes, row, origin, buf_len }
}

#[test]
fn fast_paths_match_the_naive_walker() {
    let mut rng = SplitMix64::new(7);
    let (mut in_bounds, mut out_of_bounds) = (0, 0);
    for round in 0..20_000 {
        let c = random_case(&mut rng);
        let p = Pattern { pairs: &c.pairs, offset: c.offset, elem_size: c.size };
        let elements = naive_elements(&c.pairs, c.offset);
        let want: Option<Vec<i64>> = elements
            .iter()
            .map(|&e| naive_address(e, c.flat, c.partitions, c.row_bytes, c.row, c.origin, c.size as i64))
            .collect();
        let mut got = Vec::new();
        let r = for_each_element(&c.layout, &p, |k, at| {
            assert_eq!(k, got.len(), "elements come in order");
            got.push(at as i64);
        });
        match want {
            None => {
                assert!(
                    matches!(r, Err(ApError::OutOfBounds { .. })),
                    "round {round}: {r:?} for {:?} +{}",
                    c.pairs,
                    c.offset
                );
                assert_eq!(check_bounds(&c.layout, &p), r);
                out_of_bounds += 1;
            }
            Some(addrs) => {
                r.unwrap();
                assert_eq!(
                    got, addrs,
                    "round {round}: addresses of {:?} +{} size {}",
                    c.pairs, c.offset, c.size
                );
                // read: gathers exactly the bytes at those addresses.
                let buf: Vec<u8> = (0..c.buf_len).map(|i| (i * 31 + 7) as u8).collect();
                let mut out = vec![0u8; addrs.len() * c.size];
                read(&buf, &c.layout, &p, &mut out).unwrap();
                let expect: Vec<u8> = addrs
                    .iter()
                    .flat_map(|&a| buf[a as usize..a as usize + c.size].iter().copied())
                    .collect();
                assert_eq!(out, expect, "round {round}: read");
                // write: scatters in order, last write wins.
                let src: Vec<u8> = (0..out.len()).map(|i| (i * 13 + 1) as u8).collect();
                let mut dst = vec![0u8; c.buf_len];
                write(&mut dst, &c.layout, &p, &src).unwrap();
                let mut expect = vec![0u8; c.buf_len];
                for (k, &a) in addrs.iter().enumerate() {
                    expect[a as usize..a as usize + c.size]
                        .copy_from_slice(&src[k * c.size..(k + 1) * c.size]);
                }
                assert_eq!(dst, expect, "round {round}: write");
                in_bounds += 1;
            }
        }
    }
    assert!(in_bounds > 5000 && out_of_bounds > 1000, "{in_bounds} in bounds, {out_of_bounds} out");
}

#[test]
fn transpose_shaped_reads_match_the_naive_walker() {
    // Strided runs under a near-contiguous outer loop take the cache-blocked path; cover full and
    // partial tiles, every width, block steps of one and two elements, extra outer loops.
    let mut rng = SplitMix64::new(99);
    for round in 0..400 {
        let size = [1usize, 2, 4, 8][rng.range(0, 3) as usize];
        let m = rng.range(4, 40);
        let n = rng.range(4, 40);
        let a = rng.range(1, 2);
        let b = (64 / size as i64).max(1) * rng.range(1, 3) + a * m;
        let outer = rng.range(1, 3);
        let plane = b * n + 1;
        let pairs = vec![ApPair::new(plane, outer), ApPair::new(a, m), ApPair::new(b, n)];
        let offset = rng.range(0, 5);
        let elements = naive_elements(&pairs, offset);
        let bytes = (elements.iter().max().unwrap() + 1) as usize * size + 8;
        let layout = Layout::flat(0, bytes as u64);
        let buf: Vec<u8> = (0..bytes).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut out = vec![0u8; elements.len() * size];
        read(&buf, &layout, &Pattern { pairs: &pairs, offset, elem_size: size }, &mut out).unwrap();
        let expect: Vec<u8> = elements
            .iter()
            .flat_map(|&e| buf[e as usize * size..(e as usize + 1) * size].iter().copied())
            .collect();
        assert_eq!(out, expect, "round {round}: {pairs:?} +{offset} size {size}");
    }
}

/// The slow twin of the blocked reads: every element's address by the definition (nested loops,
/// the pitch rule), its bytes copied one element at a time. `None` when an element is outside.
fn naive_read(buf: &[u8], c: &Case) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for e in naive_elements(&c.pairs, c.offset) {
        let at =
            naive_address(e, c.flat, c.partitions, c.row_bytes, c.row, c.origin, c.size as i64)? as usize;
        out.extend_from_slice(&buf[at..at + c.size]);
    }
    Some(out)
}

/// Source bytes: random, with fp32/fp16/bf16 NaN payloads and −0 sprinkled in, so a read that
/// went through a float (or lost a byte) would show.
fn noisy_bytes(rng: &mut SplitMix64, n: usize) -> Vec<u8> {
    let mut v: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
    let specials: [&[u8]; 4] =
        [&0x7FC0_0001u32.to_le_bytes(), &0x8000_0000u32.to_le_bytes(), &0xFFFFu16.to_le_bytes(), &[0x80]];
    for _ in 0..n / 16 {
        let s = specials[rng.below(4) as usize];
        let at = rng.below(n.saturating_sub(s.len()) as u64 + 1) as usize;
        v[at..at + s.len()].copy_from_slice(s);
    }
    v
}

/// A pattern drawn to reach the blocked loops: 1 to 5 levels with counts up to a few hundred,
/// outer loops one element apart (transposes), strides of a cache line or more, negative and
/// zero steps, every element width, over a flat or a packed partitioned (linear) layout, or an
/// unpacked one (the run-by-run walk).
fn blocked_case(rng: &mut SplitMix64) -> Case {
    let size = [1usize, 2, 4, 8][rng.range(0, 3) as usize];
    let dims = rng.range(1, 5) as usize;
    let mut pairs = Vec::new();
    for d in 0..dims {
        let inner = d + 1 == dims;
        let num = match rng.range(0, 3) {
            0 => rng.range(1, 3),
            1 => rng.range(4, 40),
            _ if inner || d + 2 == dims => rng.range(200, 700),
            _ => rng.range(2, 6),
        };
        let step = match rng.range(0, 7) {
            0 => 0,
            1 => 1,
            2 => -rng.range(1, 3),
            3 => rng.range(1, 4),
            4 => -(64 / size as i64) * rng.range(1, 3) - rng.range(0, 2),
            _ => (64 / size as i64) * rng.range(1, 4) + rng.range(0, 3),
        };
        pairs.push(ApPair::new(if d == 0 { step.abs() } else { step }, num));
    }
    // Sometimes a level continues the one inside it (step = inner step · inner num), so strided
    // runs fuse across levels.
    if dims >= 2 && rng.range(0, 3) == 0 {
        let inner = pairs[dims - 1];
        pairs[dims - 2].step = inner.step * inner.num;
        if dims == 2 {
            pairs[0].step = pairs[0].step.abs();
        }
    }
    // Keep the element count (and the naive walker) small enough for a debug test.
    while pairs.iter().map(|p| p.num).product::<i64>() > 300_000 {
        let k = rng.below(pairs.len() as u64) as usize;
        pairs[k].num = (pairs[k].num / 2).max(1);
    }
    // Place the pattern so its lowest element is at 0..3 and size the location to its highest.
    let (mut lo, mut hi) = (0i64, 0i64);
    for p in &pairs {
        let span = p.step * (p.num - 1);
        if span < 0 { lo += span } else { hi += span }
    }
    let offset = -lo + rng.range(0, 3);
    let capacity = offset + hi + 1 + rng.range(0, 5);
    let origin = rng.range(0, 9);
    match rng.range(0, 2) {
        0 => {
            let bytes = capacity * size as i64;
            Case {
                pairs,
                offset,
                size,
                layout: Layout::flat(origin as usize, bytes as u64),
                flat: true,
                partitions: 1,
                row_bytes: bytes,
                row: bytes,
                origin,
                buf_len: (origin + bytes) as usize,
            }
        }
        k => {
            // Rows packed (linear) or `k - 1` ≥ 1 bytes of gap after each (not linear).
            let pitch = rng.range(16, 600);
            let partitions = (capacity + pitch - 1) / pitch;
            let row_bytes = pitch * size as i64;
            let row = row_bytes + if k == 1 { 0 } else { rng.range(1, 9) };
            let layout =
                Layout::partitioned(origin as usize, partitions as u64, row_bytes as u64, row as u64);
            let buf_len = (origin + (partitions - 1) * row + row_bytes) as usize;
            Case { pairs, offset, size, layout, flat: false, partitions, row_bytes, row, origin, buf_len }
        }
    }
}

#[test]
fn blocked_reads_match_the_per_element_walker() {
    // `read` and `read_to_vec` (appending after bytes already there) against the slow twin,
    // byte for byte, on patterns that reach every loop of the blocked reads.
    let mut rng = SplitMix64::new(2025);
    let mut linear = 0;
    for round in 0..1500 {
        let c = blocked_case(&mut rng);
        let p = Pattern { pairs: &c.pairs, offset: c.offset, elem_size: c.size };
        let buf = noisy_bytes(&mut rng, c.buf_len);
        let want = naive_read(&buf, &c).unwrap();
        let mut out = vec![0xA5u8; want.len()];
        read(&buf, &c.layout, &p, &mut out).unwrap();
        assert!(out == want, "round {round}: read {:?} +{} size {}", c.pairs, c.offset, c.size);
        let mut appended = vec![7u8, 8, 9];
        read_to_vec(&buf, &c.layout, &p, &mut appended).unwrap();
        assert!(appended[..3] == [7, 8, 9] && appended[3..] == want[..], "round {round}: read_to_vec");
        linear += usize::from(c.layout.is_linear(c.size));
    }
    assert!(linear > 900, "{linear} linear layouts");
}

#[test]
fn the_bench_shapes_match_the_per_element_walker() {
    // The `cargo xtask bench` ap-strided rows at full size (2 Mi fp32 of a [128, 4, 64, 64]
    // tensor, or of one twice as tall for the step-2 rows), and the same shapes in every other
    // element width.
    let (w, z, y, x) = (128i64, 4i64, 64i64, 64i64);
    let plane = z * y * x;
    let shapes: [(&[(i64, i64)], i64); 5] = [
        (&[(2 * plane, w), (2 * y * x, z), (2 * x, y), (1, x)], 2),
        (&[(plane, w), (x, y), (y * x, z), (1, x)], 1),
        (&[(plane, w), (y * x, z), (1, x), (x, y)], 1),
        (&[(1, w), (w, plane)], 1),
        (&[(2 * plane, w), (2 * y * x, z), (x, 2 * y), (2, x / 2)], 2),
    ];
    let mut rng = SplitMix64::new(5);
    for (levels, tall) in shapes {
        let pairs: Vec<ApPair> = levels.iter().map(|&(s, n)| ApPair::new(s, n)).collect();
        for size in [4usize, 1, 2, 8] {
            let bytes = (tall * w * plane) as usize * size;
            let c = Case {
                pairs: pairs.clone(),
                offset: 0,
                size,
                layout: Layout::flat(0, bytes as u64),
                flat: true,
                partitions: 1,
                row_bytes: bytes as i64,
                row: bytes as i64,
                origin: 0,
                buf_len: bytes,
            };
            let buf = noisy_bytes(&mut rng, bytes);
            let want = naive_read(&buf, &c).unwrap();
            let p = Pattern { pairs: &pairs, offset: 0, elem_size: size };
            let mut out = vec![0u8; want.len()];
            read(&buf, &c.layout, &p, &mut out).unwrap();
            assert!(out == want, "{levels:?} size {size}: read");
            let mut v = Vec::with_capacity(want.len());
            read_to_vec(&buf, &c.layout, &p, &mut v).unwrap();
            assert!(v == want, "{levels:?} size {size}: read_to_vec");
        }
    }
}

#[test]
fn read_to_vec_leaves_the_vector_alone_on_error() {
    let layout = Layout::flat(0, 64);
    let pairs = [ApPair::new(1, 65)];
    let mut v = vec![1u8, 2];
    let r = read_to_vec(&[0u8; 64], &layout, &Pattern { pairs: &pairs, offset: 0, elem_size: 1 }, &mut v);
    assert!(matches!(r, Err(ApError::OutOfBounds { .. })));
    assert_eq!(v, [1, 2]);
}
