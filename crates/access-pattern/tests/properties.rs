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
