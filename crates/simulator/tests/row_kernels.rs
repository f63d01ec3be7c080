//! The row kernels' in-place read (`Cx::map_rows` reading each row straight from fp32 memory when
//! the row is one run) against their slow twin (the whole input read and decoded first), which
//! runs whenever a row is split: the same values in the same order through a gapped layout must
//! give the same bits. Rows of odd lengths (a partial BNStats chunk, more than one chunk), NaN,
//! −0 and infinities among the values, the output written over the input tile itself, and the
//! largest Max row (16384).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;
use common::{ap, f32s, sb};
use simulator::Options;
use test_rng::SplitMix64;

const P: usize = 5;

/// Values with NaN, ±0 and ±Inf sprinkled among multiples of 1/64.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| match r.below(50) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f32::INFINITY,
            _ => r.below(20001) as f32 / 64.0 - 150.0,
        })
        .collect()
}

/// Runs `opcode` over the first `n` values of each row of tile x (`per` values a row) — read
/// through one run per row (`split` false) or two half-rows with a gap (`split` true) — writing
/// `out_per` values a row at element `out_at` of tile x itself (the output may cover the input);
/// tile x's bytes after the run.
fn run(opcode: &str, n: usize, out_per: usize, out_at: i64, split: bool, x: &[f32], per: usize) -> Vec<u8> {
    let (half, gap) = (n / 2, n / 2 + 3);
    let src_pairs: Vec<(i64, i64)> = if split {
        vec![(per as i64, P as i64), (gap as i64, 2), (1, half as i64)]
    } else {
        vec![(per as i64, P as i64), (1, n as i64)]
    };
    // The gapped layout holds the same values: copy each row's halves apart first.
    let mut body = String::new();
    let base = 2 * per as i64 / 3;
    if split {
        let straight = ap("x", "float32", 0, &[(per as i64, P as i64), (half as i64, 2), (1, half as i64)]);
        body += &format!(
            r#"{{"opcode":"TensorCopy","name":"spread","engine":"DVE","ins":[{straight}],"outs":[{}]}},"#,
            ap("x", "float32", base, &src_pairs)
        );
    }
    let src = ap("x", "float32", if split { base } else { 0 }, &src_pairs);
    let dst = ap("x", "float32", out_at, &[(per as i64, P as i64), (1, out_per as i64)]);
    body += &format!(r#"{{"opcode":"{opcode}","name":"op","engine":"DVE","ins":[{src}],"outs":[{dst}]}}"#);
    let (fault, out) =
        common::run_keep(&[sb("x", "float32", P, per, f32s(x))], &body, Options::default(), None);
    assert!(fault.is_none(), "{opcode} n={n} split={split}: {fault:?}");
    out.into_iter().next().unwrap()
}

/// The output region of tile x's bytes.
fn region(bytes: &[u8], per: usize, at: usize, len: usize) -> Vec<String> {
    (0..P)
        .flat_map(|p| {
            bytes[(p * per + at) * 4..(p * per + at + len) * 4]
                .chunks_exact(4)
                .map(|b| format!("{:08x}", u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn in_place_rows_match_the_whole_read() {
    let cases: &[(&str, usize, usize)] = &[
        ("BNStats", 514, 12),
        ("BNStats", 1030, 18),
        ("BNStats", 8 * 512 + 2, 6 * 9),
        ("BNStatsAggregate", 36, 2),
        ("Max", 1030, 8),
        ("Max", 16384, 8),
        ("GetSequenceBounds", 66, 132),
    ];
    for (k, &(op, n, out_per)) in cases.iter().enumerate() {
        let per = 3 * n + 8;
        let mut x = values(P * per, k as u64);
        if op == "GetSequenceBounds" || op == "BNStatsAggregate" {
            // Segment ids with runs; triples with positive counts.
            x.iter_mut().enumerate().for_each(|(e, v)| *v = ((e / 3) % 4) as f32);
        }
        // Output after the input, and over its start (the input is read before the write).
        for out_at in [n as i64 + 1, 0] {
            let fast = run(op, n, out_per, out_at, false, &x, per);
            let slow = run(op, n, out_per, out_at, true, &x, per);
            let at = out_at as usize;
            assert_eq!(
                region(&fast, per, at, out_per),
                region(&slow, per, at, out_per),
                "{op} n={n} output at {out_at}"
            );
        }
    }
}
