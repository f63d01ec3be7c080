//! Data-movement kernels (seed 000 §5; /work decisions D1–D10 in docs/fidelity.md) on small
//! programs whose expected values are worked by hand in the comments, plus the fast paths
//! (blocked transpose, row shuffle) against slow obvious twins written here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use simulator::{FaultKind, Options};
use test_rng::XorShift32;

/// Runs `insts` over the tensors; returns every tensor's final bytes, or the fault.
fn run(tensors: &[T<'_>], insts: &str) -> Result<Vec<Vec<u8>>, (FaultKind, String)> {
    run_on(tensors, insts, None)
}

/// [`run`] with the kernels' threads and grain set.
fn run_on(
    tensors: &[T<'_>],
    insts: &str,
    par: Option<simulator::Parallelism>,
) -> Result<Vec<Vec<u8>>, (FaultKind, String)> {
    let options = par.map_or_else(Options::default, |p| Options { parallelism: p, ..Default::default() });
    match run_keep(tensors, insts, options, None) {
        (None, mem) => Ok(mem),
        (Some(f), _) => Err((f.kind, f.message())),
    }
}

fn inst(opcode: &str, engine: &str, ins: &[String], outs: &[String], fields: &str) -> String {
    format!(
        r#"{{"opcode":"{opcode}","name":"i","engine":"{engine}","ins":[{}],"outs":[{}]{}{fields}}}"#,
        ins.join(","),
        outs.join(","),
        if fields.is_empty() { "" } else { "," }
    )
}

// ---------------------------------------------------------------- DMACopy

#[test]
fn dma_copy_plain_casts_like_docopy() {
    // int32 [1, 2, -3] → float32.
    let out = run(
        &[t("x", "int32", 3, i32s(&[1, 2, -3])), t("y", "float32", 3, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", "int32", 0, &[(3, 1), (1, 3)])],
            &[ap("y", "float32", 0, &[(3, 1), (1, 3)])],
            r#""mode":"Copy""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [1.0, 2.0, -3.0]);
}

#[test]
fn dma_transpose_xyzw_on_2x3x4x5() {
    // src [2,3,4,5] holds its flat index; code 12 XYZW: dst [5,4,3,2], dst[c] = src[c3,c2,c1,c0]
    // = 60·c3 + 20·c2 + 5·c1 + c0. dst flat 0..4: c = [0,0,0,0..1], [0,0,1,0..1], [0,0,2,0]
    // → 0, 60, 20, 80, 40.
    let src: Vec<f32> = (0..120).map(|v| v as f32).collect();
    let out = run(
        &[t("x", "float32", 120, f32s(&src)), t("y", "float32", 120, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", "float32", 0, &[(60, 2), (20, 3), (5, 4), (1, 5)])],
            &[ap("y", "float32", 0, &[(24, 5), (6, 4), (2, 3), (1, 2)])],
            r#""mode":"Transpose","transpose_op":"XYZW""#,
        ),
    )
    .unwrap();
    let y = to_f32(&out[1]);
    assert_eq!(&y[..5], &[0.0, 60.0, 20.0, 80.0, 40.0]);
    // dst[4,3,2,1] (flat 119) = src[1,2,3,4] = 119.
    assert_eq!(y[119], 119.0);
    // dst[1,2,0,1] (flat 37) = src[1,0,2,1] = 60 + 10 + 1 = 71.
    assert_eq!(y[37], 71.0);
}

/// The re-facts §3 TransposeOps table, copied by hand (code → permutation of W,Z,Y,X).
const PERMS: [[usize; 4]; 14] = [
    [0, 1, 2, 3],
    [0, 1, 3, 2],
    [0, 3, 1, 2],
    [0, 2, 3, 1],
    [1, 0, 2, 3],
    [1, 2, 0, 3],
    [1, 2, 3, 0],
    [2, 3, 0, 1],
    [2, 3, 1, 0],
    [2, 0, 1, 3],
    [3, 0, 1, 2],
    [3, 1, 2, 0],
    [3, 2, 1, 0],
    [3, 2, 0, 1],
];

/// The flat element index of every element of a 4-level AP (offset, [(step, num)]), in AP order.
fn ap_elements(offset: i64, pairs: &[(i64, i64); 4]) -> Vec<i64> {
    let mut out = Vec::new();
    for a in 0..pairs[0].1 {
        for b in 0..pairs[1].1 {
            for c in 0..pairs[2].1 {
                for d in 0..pairs[3].1 {
                    out.push(offset + a * pairs[0].0 + b * pairs[1].0 + c * pairs[2].0 + d * pairs[3].0);
                }
            }
        }
    }
    out
}

/// DMACopy Transpose against the slow twin written here (the definition: destination
/// element c = source element c permuted back, every source element read before any
/// destination element is written, seed 000 §5.1), for all 14 codes, every element width,
/// odd shapes, source and destination in one tensor both overlapping (shifted by a few
/// elements) and disjoint, on 1 and 2 threads with one-element chunks. Fails if the kernel
/// writes while it still reads, permutes the wrong way, or splits chunks wrongly.
#[test]
fn dma_transpose_matches_the_read_all_then_write_twin() {
    let shapes: [[i64; 4]; 4] = [[3, 5, 7, 2], [2, 1, 33, 35], [1, 37, 3, 65], [5, 3, 1, 1]];
    for (dtype, size) in [("uint8", 1usize), ("int16", 2), ("int32", 4), ("int64", 8)] {
        for (code, perm) in PERMS.iter().enumerate() {
            for shape in shapes {
                let n: i64 = shape.iter().product();
                let dshape = perm.map(|p| shape[p]);
                let row =
                    |s: [i64; 4]| [(s[1] * s[2] * s[3], s[0]), (s[2] * s[3], s[1]), (s[3], s[2]), (1, s[3])];
                // Shifted overlap (dst starts 3 elements into the source), disjoint in one
                // tensor, and in a second tensor (the direct memory-to-memory pass).
                for (dst_off, other) in [(3, false), (n + 1, false), (1, true)] {
                    let len = (n + dst_off + 2) as usize;
                    let init: Vec<u8> = (0..len * size)
                        .map(|k| (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()[7])
                        .collect();
                    // The twin: read every source element, then write dst[c] = src[perm⁻¹(c)].
                    let (sp, dp) = (row(shape), row(dshape));
                    let src_e = ap_elements(0, &sp);
                    let vals: Vec<&[u8]> =
                        src_e.iter().map(|&e| &init[e as usize * size..(e as usize + 1) * size]).collect();
                    let y_init: Vec<u8> = init.iter().map(|b| b ^ 0x5A).collect();
                    let mut want = if other { y_init.clone() } else { init.clone() };
                    let dst_e = ap_elements(dst_off, &dp);
                    let mut k = 0;
                    for c0 in 0..dshape[0] {
                        for c1 in 0..dshape[1] {
                            for c2 in 0..dshape[2] {
                                for c3 in 0..dshape[3] {
                                    let c = [c0, c1, c2, c3];
                                    let mut sc = [0i64; 4];
                                    for a in 0..4 {
                                        sc[perm[a]] = c[a];
                                    }
                                    let flat =
                                        ((sc[0] * shape[1] + sc[1]) * shape[2] + sc[2]) * shape[3] + sc[3];
                                    let d = dst_e[k] as usize * size;
                                    want[d..d + size].copy_from_slice(vals[flat as usize]);
                                    k += 1;
                                }
                            }
                        }
                    }
                    let sp4: Vec<(i64, i64)> = sp.to_vec();
                    let dp4: Vec<(i64, i64)> = dp.to_vec();
                    let code_name = [
                        "None", "WZXY", "WXZY", "WYXZ", "ZWYX", "ZYWX", "ZYXW", "YXWZ", "YXZW", "YWZX",
                        "XWZY", "XZYW", "XYZW", "XYWZ",
                    ][code];
                    let prog = inst(
                        "DMACopy",
                        "DMA",
                        &[ap("x", dtype, 0, &sp4)],
                        &[ap(if other { "y" } else { "x" }, dtype, dst_off, &dp4)],
                        &format!(r#""mode":"Transpose","transpose_op":"{code_name}""#),
                    );
                    for threads in [1, 2] {
                        let par = simulator::Parallelism { threads, grain: 1 };
                        let tensors = [t("x", dtype, len, init.clone()), t("y", dtype, len, y_init.clone())];
                        let out = run_on(&tensors, &prog, Some(par)).unwrap();
                        let (got, untouched) = if other { (&out[1], &out[0]) } else { (&out[0], &out[1]) };
                        let kept = if other { &init } else { &y_init };
                        assert!(
                            *got == want && untouched == kept,
                            "{dtype} code {code} shape {shape:?} dst_off {dst_off} threads {threads}"
                        );
                    }
                }
            }
        }
    }
}

/// D2: a packed x4 dtype moves whole 4-byte containers. src 2 × 3 containers, container k
/// holding bytes 4k..4k+3; WZXY swaps the last two axes, so dst 3 × 2 holds containers
/// [0, 3, 1, 4, 2, 5] (dst[c2, c3] = src[c3, c2]), each with its four lanes in place.
#[test]
fn dma_transpose_of_x4_moves_whole_containers() {
    let dt = "float8_e4m3fn_x4";
    let src: Vec<u8> = (0..24).collect();
    let out = run(
        &[t("x", dt, 6, src), t("y", dt, 6, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", dt, 0, &[(6, 1), (6, 1), (3, 2), (1, 3)])],
            &[ap("y", dt, 0, &[(6, 1), (6, 1), (2, 3), (1, 2)])],
            r#""mode":"Transpose","transpose_op":"WZXY""#,
        ),
    )
    .unwrap();
    let want: Vec<u8> =
        [0u8, 3, 1, 4, 2, 5].iter().flat_map(|k| (4 * k..4 * k + 4).collect::<Vec<u8>>()).collect();
    assert_eq!(out[1], want);
}

/// D16: CCE over packed x4 operands reduces their unpacked lanes in fp32 (re-facts §4: "x4
/// sources give 4 floats per element"). float8_e4m3fn (bias 7): 0x38 = 1.0, 0x40 = 2.0,
/// 0x30 = 0.5, 0x44 = 3.0. Lanes [1, 2, 0.5, 0] + [2, 1, 0.5, 1] = [3, 3, 1, 1]
/// = [0x44, 0x44, 0x38, 0x38], whichever lane order a container uses.
#[test]
fn dma_cce_adds_x4_lanes() {
    let dt = "float8_e4m3fn_x4";
    let out = run(
        &[
            t("a", dt, 1, vec![0x38, 0x40, 0x30, 0x00]),
            t("b", dt, 1, vec![0x40, 0x38, 0x30, 0x38]),
            t("y", dt, 1, vec![]),
        ],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("a", dt, 0, &[(1, 1), (1, 1)]), ap("b", dt, 0, &[(1, 1), (1, 1)])],
            &[ap("y", dt, 0, &[(1, 1), (1, 1)])],
            r#""mode":"CCE","cce_op":"add""#,
        ),
    )
    .unwrap();
    assert_eq!(out[2], [0x44, 0x44, 0x38, 0x38]);
}

#[test]
fn dma_transpose_shape_mismatch_faults_when_not_caught_statically() {
    // Validation checks this statically; the kernel checks again (see bir-ir tests). Here the
    // shapes agree and an identity code copies.
    let out = run(
        &[t("x", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])), t("y", "float32", 4, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", "float32", 0, &[(2, 2), (1, 2)])],
            &[ap("y", "float32", 0, &[(2, 2), (1, 2)])],
            r#""mode":"Transpose","transpose_op":"None""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn dma_replicate_tiles_partitions() {
    // src 2 partitions × 2: [[1,2],[3,4]]; dst 6 partitions: [[1,2],[3,4]] × 3.
    let out = run(
        &[t("x", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])), t("y", "float32", 12, vec![])],
        &inst(
            "DMACopy",
            "DMA",
            &[ap("x", "float32", 0, &[(2, 2), (1, 2)])],
            &[ap("y", "float32", 0, &[(2, 6), (1, 2)])],
            r#""mode":"Replicate""#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn dma_cce_add_with_constants_and_max_ties() {
    // add, constants [2, -1]: 2·a − b; a = [1, 0.5, -0], b = [3, 0.25, +0]:
    // [2−3, 1−0.25, +0 + (2·−0) + (−1·+0)] = [−1, 0.75, +0 + −0 + −0 = +0].
    let a = f32s(&[1.0, 0.5, -0.0]);
    let b = f32s(&[3.0, 0.25, 0.0]);
    let cce = |op: &str, consts: &str| {
        run(
            &[t("a", "float32", 3, a.clone()), t("b", "float32", 3, b.clone()), t("y", "float32", 3, vec![])],
            &inst(
                "DMACopy",
                "DMA",
                &[ap("a", "float32", 0, &[(3, 1), (1, 3)]), ap("b", "float32", 0, &[(3, 1), (1, 3)])],
                &[ap("y", "float32", 0, &[(3, 1), (1, 3)])],
                &format!(r#""mode":"CCE","cce_op":"{op}"{consts}"#),
            ),
        )
        .unwrap()[2]
            .clone()
    };
    let y = to_f32(&cce("add", r#","constants":[2.0,-1.0]"#));
    assert_eq!(y[..2], [-1.0, 0.75]);
    assert_eq!(y[2].to_bits(), 0.0f32.to_bits());
    // max from the zeroed accumulator (re-facts §5): fmaxf(fmaxf(+0, a), b) =
    // [3, 0.5, fmaxf(fmaxf(+0, −0), +0): ties keep the first, +0].
    let y = to_f32(&cce("max", ""));
    assert_eq!(y[..2], [3.0, 0.5]);
    assert_eq!(y[2].to_bits(), 0.0f32.to_bits());
    // min: fminf(fminf(+0, a), b) = [0, 0, +0] (every input is ≥ 0).
    let y = to_f32(&cce("min", ""));
    assert_eq!(y[..2], [0.0, 0.0]);
    assert_eq!(y[2].to_bits(), 0.0f32.to_bits());
}

/// A copy of one row (4 elements) of a 3-row table, the row picked by a scalar index.
fn dynamic_copy(index: i32, oob_is_err: bool) -> Result<Vec<f32>, (FaultKind, String)> {
    let table: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let src = format!(
        r#"{{"kind":"physical_ap","memref":"x","dtype":"float32","offset":0,"ap":[[4,1],[1,4]],"indirect_dim":"W","indirect_dim_max_index":3,"scalar_offset":{}}}"#,
        ap("i", "int32", 0, &[(1, 1), (1, 1)])
    );
    let out = run(
        &[
            t("x", "float32", 12, f32s(&table)),
            t("i", "int32", 1, i32s(&[index])),
            t("y", "float32", 4, f32s(&[-1.0; 4])),
        ],
        &inst(
            "DMACopy",
            "DMA",
            &[src],
            &[ap("y", "float32", 0, &[(4, 1), (1, 4)])],
            &format!(r#""mode":"Copy","oob_is_err":{oob_is_err}"#),
        ),
    )?;
    Ok(to_f32(&out[2]))
}

#[test]
fn dma_scalar_dynamic_offset() {
    // Index 2 on W (step 4): offset 8 → [8, 9, 10, 11].
    assert_eq!(dynamic_copy(2, true).unwrap(), [8.0, 9.0, 10.0, 11.0]);
    // Index 3 ≥ max 3: out of bounds, fatal with oob_is_err.
    let (kind, msg) = dynamic_copy(3, true).unwrap_err();
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert!(msg.contains("ins[0]"), "{msg}");
    // Tolerated (D1): offset 12 is past the 12-element table; every pair is skipped.
    assert_eq!(dynamic_copy(3, false).unwrap(), [-1.0; 4]);
    // Index -1: offset −4, all outside → nothing copied.
    assert_eq!(dynamic_copy(-1, false).unwrap(), [-1.0; 4]);
}

// ---------------------------------------------------------------- Memset Random, SetRandState

#[test]
fn memset_random_host_draws_match_the_libstdcxx_oracle() {
    // The first uniform_int_distribution<uint32_t> draws on mt19937_64(42), from
    // tests/data/mt19937_64.txt (section 2): 3243368318, then the next three.
    let data = include_str!("data/mt19937_64.txt");
    let want: Vec<u32> = data.lines().skip(10_002).take(6).map(|l| l.parse().unwrap()).collect();
    let out = run(
        &[t("y", "uint32", 4, vec![]), t("z", "int64", 1, vec![])],
        &[
            inst(
                "Memset",
                "DVE",
                &[],
                &[ap("y", "uint32", 0, &[(4, 1), (1, 4)])],
                r#""mode":"Random","constant":0"#,
            ),
            inst(
                "Memset",
                "DVE",
                &[],
                &[ap("z", "int64", 0, &[(1, 1), (1, 1)])],
                r#""mode":"Random","constant":0"#,
            ),
        ]
        .join(","),
    )
    .unwrap();
    let y: Vec<u32> = out[0].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(y, want[..4]);
    // An 8-byte element: two draws, low word first (D6).
    let z = u64::from_le_bytes(out[1][..8].try_into().unwrap());
    assert_eq!(z, u64::from(want[4]) | (u64::from(want[5]) << 32));
}

#[test]
fn set_rand_state_reseeds_the_host_generator() {
    // After SetRandState(7): the oracle's third section.
    let data = include_str!("data/mt19937_64.txt");
    let want: Vec<u32> = data.lines().skip(20_003).take(2).map(|l| l.parse().unwrap()).collect();
    let out = run(
        &[t("y", "uint32", 2, vec![])],
        &[
            inst("Memset", "DVE", &[], &[ap("y", "uint32", 0, &[(2, 1), (1, 2)])], r#""mode":"Random","constant":0"#),
            r#"{"opcode":"SetRandState","name":"s","engine":"Pool","ins":[{"kind":"imm_value","dtype":"uint32","value":7}],"outs":[]}"#.to_string(),
            inst("Memset", "DVE", &[], &[ap("y", "uint32", 0, &[(2, 1), (1, 2)])], r#""mode":"Random","constant":0"#),
        ]
        .join(","),
    )
    .unwrap();
    let y: Vec<u32> = out[0].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(y, want);
}

#[test]
fn memset_random_pool_rows_use_their_own_xorwow() {
    // Row 0 first draw 0x400587D4, row 1 first draw 0x400587E3 (worked in exec/kit/rng.rs);
    // uint8 keeps the low byte: 0xD4, then row 0's second draw's low byte; row 1: 0xE3, ...
    let xw = include_str!("data/xorwow.txt");
    let row0: Vec<u32> = xw.lines().skip(1).take(2).map(|l| l.parse().unwrap()).collect();
    let out = run(
        &[t("y", "uint8", 4, vec![])],
        &inst(
            "Memset",
            "Pool",
            &[],
            &[ap("y", "uint8", 0, &[(2, 2), (1, 2)])],
            r#""mode":"Random","constant":0"#,
        ),
    )
    .unwrap();
    assert_eq!(out[0][0], 0xD4);
    assert_eq!(out[0][1], row0[1] as u8);
    assert_eq!(out[0][2], 0xE3);
}

// ---------------------------------------------------------------- StreamShuffle, StreamTranspose

fn mask_json(mask: &[u8; 32]) -> String {
    let m: Vec<String> = mask.iter().map(u8::to_string).collect();
    format!(r#""mask":[{}]"#, m.join(","))
}

/// The slow twin of StreamShuffle: rows as vectors, the seed's loop verbatim.
fn shuffle_twin(src: &[Vec<u32>], dst: &mut [Vec<u32>], mask: &[u8; 32]) {
    let snapshot = src.to_vec();
    let mut block = 0;
    while block < dst.len() {
        for i in 0..32 {
            if block + i >= dst.len() || mask[i] == 255 {
                continue;
            }
            dst[block + i] = snapshot[block + mask[i] as usize].clone();
        }
        block += 32;
    }
}

#[test]
fn stream_shuffle_in_place_matches_the_twin() {
    let mut rng = XorShift32::new(0x1234_5678);
    for round in 0..12 {
        let parts = [1usize, 5, 31, 32, 33, 40, 64, 70][round % 8];
        let free = 1 + (rng.next_u32() as usize % 7);
        let mut mask = [255u8; 32];
        for (i, m) in mask.iter_mut().enumerate() {
            let r = rng.next_u32();
            // Entries stay inside the last (partial) block's rows.
            let lim = if parts.is_multiple_of(32) { 32 } else { parts % 32 };
            if !r.is_multiple_of(5) && i < 32 {
                *m = (r % lim as u32) as u8;
            }
        }
        let rows: Vec<Vec<u32>> = (0..parts).map(|_| (0..free).map(|_| rng.next_u32()).collect()).collect();
        let flat: Vec<u8> = rows.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let a = ap("y", "uint32", 0, &[(free as i64, parts as i64), (1, free as i64)]);
        let out = run(
            &[t("y", "uint32", parts * free, flat)],
            &inst(
                "StreamShuffle",
                "DVE",
                std::slice::from_ref(&a),
                std::slice::from_ref(&a),
                &mask_json(&mask),
            ),
        )
        .unwrap();
        let mut want = rows.clone();
        shuffle_twin(&rows, &mut want, &mask);
        let got: Vec<u32> =
            out[0].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, want.concat(), "round {round} parts {parts} free {free} mask {mask:?}");
    }
}

#[test]
fn stream_shuffle_reverse_by_hand() {
    // 4 partitions × 1: mask [3, 2, 1, 0, 255...] reverses rows 0..3.
    let mut mask = [255u8; 32];
    mask[..4].copy_from_slice(&[3, 2, 1, 0]);
    let out = run(
        &[t("x", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])), t("y", "float32", 4, f32s(&[9.0; 4]))],
        &inst(
            "StreamShuffle",
            "DVE",
            &[ap("x", "float32", 0, &[(1, 4), (1, 1)])],
            &[ap("y", "float32", 0, &[(1, 4), (1, 1)])],
            &mask_json(&mask),
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [4.0, 3.0, 2.0, 1.0]);
    // Rows with 255 stay: mask [1, 255, ...] over 2 rows → [2, 9].
    let mut mask = [255u8; 32];
    mask[0] = 1;
    let out = run(
        &[t("x", "float32", 2, f32s(&[1.0, 2.0])), t("y", "float32", 2, f32s(&[9.0; 2]))],
        &inst(
            "StreamShuffle",
            "DVE",
            &[ap("x", "float32", 0, &[(1, 2), (1, 1)])],
            &[ap("y", "float32", 0, &[(1, 2), (1, 1)])],
            &mask_json(&mask),
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [2.0, 9.0]);
}

#[test]
fn stream_transpose_swaps_a_2x3_tile() {
    // src 2 partitions × 3: [[0,1,2],[3,4,5]]; dst 3 × 2 (outElem 2): element (p,e) → e·2 + p:
    // (0,0)→0, (0,1)→2, (0,2)→4, (1,0)→1, (1,1)→3, (1,2)→5 → [0,3,1,4,2,5].
    let out = run(
        &[t("x", "int32", 6, i32s(&[0, 1, 2, 3, 4, 5])), t("y", "int32", 6, vec![])],
        &inst(
            "StreamTranspose",
            "DVE",
            &[ap("x", "int32", 0, &[(3, 2), (1, 3)])],
            &[ap("y", "int32", 0, &[(2, 3), (1, 2)])],
            "",
        ),
    )
    .unwrap();
    assert_eq!(to_i32(&out[1]), [0, 3, 1, 4, 2, 5]);
}

// ---------------------------------------------------------------- Iota, AffineSelect

#[test]
fn iota_base_channel_multiplier_and_cast() {
    // base 3, cm 4, pattern [[1,4]] on 2 partitions × 4: [3..6, 7..10], as float32.
    let out = run(
        &[t("y", "float32", 8, vec![])],
        &inst(
            "Iota",
            "Pool",
            &[],
            &[ap("y", "float32", 0, &[(4, 2), (1, 4)])],
            r#""base":3,"pattern":[[1,4]],"channel_multiplier":4"#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[0]), [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
    // Three pairs, Y outside Z: Z [100,2], Y [10,3], X [1,2] → 0,1,100,101,10,11,110,111,...
    let out = run(
        &[t("y", "int32", 12, vec![])],
        &inst(
            "Iota",
            "Pool",
            &[],
            &[ap("y", "int32", 0, &[(12, 1), (1, 12)])],
            r#""base":0,"pattern":[[100,2],[10,3],[1,2]],"channel_multiplier":0"#,
        ),
    )
    .unwrap();
    assert_eq!(to_i32(&out[0]), [0, 1, 100, 101, 10, 11, 110, 111, 20, 21, 120, 121]);
}

/// The contiguous int32 Iota path (values computed in place) against the general path (the same
/// pattern into rows padded by one element), on patterns whose values wrap past int32.
#[test]
fn iota_in_place_matches_the_padded_twin() {
    let big = 1i64 << 40;
    type Case<'a> = (i64, i64, &'a [(i64, i64)], usize);
    let cases: [Case<'_>; 5] = [
        (3, 4, &[(1, 5)], 3),
        (-7, i64::from(i32::MAX), &[(i64::from(i32::MAX) + 9, 7)], 3),
        (big + 5, -big - 3, &[(100, 2), (big + 1, 3), (-1, 5)], 4),
        (1, 1, &[(2, 2), (3, 3), (5, 2), (7, 3)], 2),
        (i64::from(i32::MIN), -1, &[(-3, 1), (1, 11)], 5),
    ];
    for (base, cm, pattern, parts) in cases {
        let free: usize = pattern.iter().map(|&(_, n)| n as usize).product();
        let pat: Vec<String> = pattern.iter().map(|(s, n)| format!("[{s},{n}]")).collect();
        let fields = format!(r#""base":{base},"pattern":[{}],"channel_multiplier":{cm}"#, pat.join(","));
        let (f, w) = (free as i64, free as i64 + 1);
        let fast = run(
            &[t("y", "int32", parts * free, vec![])],
            &inst("Iota", "Pool", &[], &[ap("y", "int32", 0, &[(f, parts as i64), (1, f)])], &fields),
        )
        .unwrap();
        let slow = run(
            &[t("z", "int32", parts * (free + 1), vec![])],
            &inst("Iota", "Pool", &[], &[ap("z", "int32", 0, &[(w, parts as i64), (1, f)])], &fields),
        )
        .unwrap();
        let slow: Vec<i32> = to_i32(&slow[0]).chunks(free + 1).flat_map(|r| r[..free].to_vec()).collect();
        let fast = to_i32(&fast[0]);
        for (k, (a, b)) in fast.iter().zip(&slow).enumerate() {
            assert_eq!(a, b, "{base} {cm} {pattern:?} element {k}: {a:#010x} vs {b:#010x}");
        }
        assert_eq!(fast.len(), slow.len());
    }
}

#[test]
fn affine_select_keeps_the_lower_triangle() {
    // 3 partitions × 3, v = p − x (cm 1, X step −1), is_ge: keep where x ≤ p, else fill −1:
    // [[a00,-1,-1],[a10,a11,-1],[a20,a21,a22]].
    let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let out = run(
        &[t("x", "float32", 9, f32s(&x)), t("y", "float32", 9, vec![])],
        &inst(
            "TensorScalarAffineSelect",
            "Pool",
            &[ap("x", "float32", 0, &[(3, 3), (1, 3)])],
            &[ap("y", "float32", 0, &[(3, 3), (1, 3)])],
            r#""pattern":[[-1,3]],"channel_multiplier":1,"compare_op":"is_ge","fill_value":-1.0"#,
        ),
    )
    .unwrap();
    assert_eq!(to_f32(&out[1]), [1.0, -1.0, -1.0, 4.0, 5.0, -1.0, 7.0, 8.0, 9.0]);
}

// ---------------------------------------------------------------- Select, CopyPredicated

#[test]
fn select_by_a_strict_predicate() {
    // pred [1, 0, −0, 1], T = [1,2,3,4], F = imm 9 → [1, 9, 9, 4].
    let sel = |pred: &[f32]| {
        run(
            &[
                t("p", "float32", 4, f32s(pred)),
                t("a", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])),
                t("y", "float32", 4, vec![]),
            ],
            &inst(
                "Select",
                "DVE",
                &[
                    ap("p", "float32", 0, &[(4, 1), (1, 4)]),
                    ap("a", "float32", 0, &[(4, 1), (1, 4)]),
                    r#"{"kind":"imm_value","dtype":"float32","value":9.0}"#.to_string(),
                ],
                &[ap("y", "float32", 0, &[(4, 1), (1, 4)])],
                "",
            ),
        )
    };
    assert_eq!(to_f32(&sel(&[1.0, 0.0, -0.0, 1.0]).unwrap()[2]), [1.0, 9.0, 9.0, 4.0]);
    // A 2 at element 2: fault naming the element; nothing written.
    let (kind, msg) = sel(&[1.0, 0.0, 2.0, 1.0]).unwrap_err();
    assert_eq!(kind, FaultKind::BadField);
    assert!(msg.contains("element 2") && msg.contains("is 2"), "{msg}");
}

#[test]
fn copy_predicated_with_reverse() {
    // src [1,2,3,4], pred uint8 [0, 5, 0, 1], out starts [9,9,9,9]:
    // plain → [9, 2, 9, 4]; reverse_pred → [1, 9, 3, 9].
    let cp = |rev: bool| {
        run(
            &[
                t("s", "float32", 4, f32s(&[1.0, 2.0, 3.0, 4.0])),
                t("p", "uint8", 4, vec![0, 5, 0, 1]),
                t("y", "float32", 4, f32s(&[9.0; 4])),
            ],
            &inst(
                "CopyPredicated",
                "DVE",
                &[ap("s", "float32", 0, &[(4, 1), (1, 4)]), ap("p", "uint8", 0, &[(4, 1), (1, 4)])],
                &[ap("y", "float32", 0, &[(4, 1), (1, 4)])],
                &format!(r#""reverse_pred":{rev}"#),
            ),
        )
        .unwrap()[2]
            .clone()
    };
    assert_eq!(to_f32(&cp(false)), [9.0, 2.0, 9.0, 4.0]);
    assert_eq!(to_f32(&cp(true)), [1.0, 9.0, 3.0, 9.0]);
}

/// D17 (ASSUMED): `use_false_fill` writes `false_fill` (default 0) where the predicate is false
/// instead of keeping the destination. src [1,2,3,4], pred [0, 5, 0, 1], out starts [9,9,9,9]:
/// fill −2.5 → [−2.5, 2, −2.5, 4]; the default fill → [0, 2, 0, 4]; with reverse_pred and
/// fill −2.5 → [1, −2.5, 3, −2.5]. bf16: fill 1/3 rounds to 0x3EAB (RNE of 0x3EAAAAAB).
#[test]
fn copy_predicated_false_fill() {
    let cp = |dt: &str, src: Vec<u8>, fields: &str| {
        run(
            &[
                t("s", dt, 4, src),
                t("p", "uint8", 4, vec![0, 5, 0, 1]),
                t("y", dt, 4, if dt == "float32" { f32s(&[9.0; 4]) } else { u16s(&[0x4110; 4]) }),
            ],
            &inst(
                "CopyPredicated",
                "DVE",
                &[ap("s", dt, 0, &[(4, 1), (1, 4)]), ap("p", "uint8", 0, &[(4, 1), (1, 4)])],
                &[ap("y", dt, 0, &[(4, 1), (1, 4)])],
                fields,
            ),
        )
        .unwrap()[2]
            .clone()
    };
    let src = || f32s(&[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        to_f32(&cp("float32", src(), r#""use_false_fill":true,"false_fill":-2.5"#)),
        [-2.5, 2.0, -2.5, 4.0]
    );
    assert_eq!(to_f32(&cp("float32", src(), r#""use_false_fill":true"#)), [0.0, 2.0, 0.0, 4.0]);
    assert_eq!(
        to_f32(&cp("float32", src(), r#""use_false_fill":true,"false_fill":-2.5,"reverse_pred":true"#)),
        [1.0, -2.5, 3.0, -2.5]
    );
    // A fill without use_false_fill changes nothing: false elements keep 9.
    assert_eq!(to_f32(&cp("float32", src(), r#""false_fill":-2.5"#)), [9.0, 2.0, 9.0, 4.0]);
    // bf16 src [1, 2, 3, 4] = 0x3F80, 0x4000, 0x4040, 0x4080.
    let bsrc = u16s(&[0x3F80, 0x4000, 0x4040, 0x4080]);
    assert_eq!(
        to_u16(&cp("bfloat16", bsrc, r#""use_false_fill":true,"false_fill":0.3333333432674408"#)),
        [0x3EAB, 0x4000, 0x3EAB, 0x4080]
    );
}

/// D10 (ASSUMED): the side output folds each destination row after the copy. src
/// [[10,20,30],[40,50,60]], pred [[1,0,1],[0,0,1]], dst starts [[1,2,3],[4,5,6]] → dst
/// [[10,2,30],[4,5,60]]; side starts [100, 200]. add + AddAccumulate: [100 + 42, 200 + 69]
/// = [142, 269]; max with no acc: [30, 60] written; a side output without reduce_op, or with
/// the wrong number of values, faults before anything is written.
#[test]
fn copy_predicated_side_output_folds_each_row() {
    let cp = |fields: &str| {
        run(
            &[
                t("s", "float32", 6, f32s(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0])),
                t("p", "uint8", 6, vec![1, 0, 1, 0, 0, 1]),
                t("y", "float32", 6, f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
                t("r", "float32", 2, f32s(&[100.0, 200.0])),
            ],
            &inst(
                "CopyPredicated",
                "DVE",
                &[ap("s", "float32", 0, &[(3, 2), (1, 3)]), ap("p", "uint8", 0, &[(3, 2), (1, 3)])],
                &[ap("y", "float32", 0, &[(3, 2), (1, 3)]), ap("r", "float32", 0, &[(1, 2), (1, 1)])],
                fields,
            ),
        )
    };
    let out = cp(r#""reduce_op":"add","accumulator_cmd":"AddAccumulate""#).unwrap();
    assert_eq!(to_f32(&out[2]), [10.0, 2.0, 30.0, 4.0, 5.0, 60.0]);
    assert_eq!(to_f32(&out[3]), [142.0, 269.0]);
    let out = cp(r#""reduce_op":"max""#).unwrap();
    assert_eq!(to_f32(&out[3]), [30.0, 60.0]);
    let err = cp(r#""reverse_pred":false"#).unwrap_err();
    assert_eq!(err.0, FaultKind::BadField, "{}", err.1);
    // Two values wanted, three given: a count fault (outputs untouched: `run` returns only the
    // fault, and the kernel checks before its first write).
    let bad = run(
        &[
            t("s", "float32", 6, f32s(&[10.0; 6])),
            t("p", "uint8", 6, vec![1; 6]),
            t("y", "float32", 6, vec![]),
            t("r", "float32", 3, vec![]),
        ],
        &inst(
            "CopyPredicated",
            "DVE",
            &[ap("s", "float32", 0, &[(3, 2), (1, 3)]), ap("p", "uint8", 0, &[(3, 2), (1, 3)])],
            &[ap("y", "float32", 0, &[(3, 2), (1, 3)]), ap("r", "float32", 0, &[(1, 3), (1, 1)])],
            r#""reduce_op":"add""#,
        ),
    );
    assert!(bad.is_err(), "{bad:?}");
}

// ---------------------------------------------------------------- TensorScalarPtr leftovers

fn tsp(ins: &[String], init_out: &[f32], fields: &str, n: usize) -> Vec<f32> {
    let out = run(
        &[
            t("a", "float32", n, f32s(&(1..=n).map(|v| v as f32).collect::<Vec<_>>())),
            t("b", "float32", n, f32s(&(1..=n).map(|v| 10.0 * v as f32).collect::<Vec<_>>())),
            t("y", "float32", n, f32s(init_out)),
        ],
        &inst(
            "TensorScalarPtr",
            "DVE",
            ins,
            &[ap("y", "float32", 0, &[(n as i64, 1), (1, n as i64)])],
            fields,
        ),
    )
    .unwrap();
    to_f32(&out[2])
}

fn imm(v: f32) -> String {
    format!(r#"{{"kind":"imm_value","dtype":"float32","value":{v:?}}}"#)
}

#[test]
fn tsp_scalar_tensor_tensor() {
    // a = [1,2,3,4], b = [10,20,30,40]: (a·2) + b = [12, 24, 36, 48]; reverse1 subtract:
    // b − a·2 = [8, 16, 24, 32].
    let row = |m: &str| ap(m, "float32", 0, &[(4, 1), (1, 4)]);
    let ins = [row("a"), imm(2.0), row("b")];
    let y = tsp(&ins, &[0.0; 4], r#""op0":"mult","op1":"add","is_scalar_tensor_tensor":true"#, 4);
    assert_eq!(y, [12.0, 24.0, 36.0, 48.0]);
    let y = tsp(
        &ins,
        &[0.0; 4],
        r#""op0":"mult","op1":"subtract","reverse1":true,"is_scalar_tensor_tensor":true"#,
        4,
    );
    assert_eq!(y, [8.0, 16.0, 24.0, 32.0]);
}

#[test]
fn tsp_add_accumulate() {
    // a + 1 = [2,3,4,5], added into y = [1,1,1,1] → [3,4,5,6].
    let ins = [ap("a", "float32", 0, &[(4, 1), (1, 4)]), imm(1.0)];
    let y = tsp(&ins, &[1.0; 4], r#""op0":"add","acc":"AddAccumulate""#, 4);
    assert_eq!(y, [3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn tsp_tensor_tensor_scan() {
    // Two rows of 3: a = [[1,2,3],[4,5,6]], b = [[10,20,30],[40,50,60]], init imm 0,
    // op0 mult, op1 add: row 0: r = 1·0+10 = 10, 2·10+20 = 40, 3·40+30 = 150;
    // row 1: 4·0+40 = 40, 5·40+50 = 250, 6·250+60 = 1560.
    let rows = |m: &str| ap(m, "float32", 0, &[(3, 2), (1, 3)]);
    let run_scan = |fields: &str| {
        let out = run(
            &[
                t("a", "float32", 6, f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
                t("b", "float32", 6, f32s(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0])),
                t("y", "float32", 6, vec![]),
            ],
            &inst("TensorScalarPtr", "DVE", &[rows("a"), rows("b"), imm(0.0)], &[rows("y")], fields),
        )
        .unwrap();
        to_f32(&out[2])
    };
    assert_eq!(
        run_scan(r#""op0":"mult","op1":"add","is_tensor_tensor_scan":true"#),
        [10.0, 40.0, 150.0, 40.0, 250.0, 1560.0]
    );
    // op1 subtract with reverse1 (b is the left operand): row 0: 10 − 1·0 = 10, 20 − 2·10 = 0,
    // 30 − 3·0 = 30; row 1: 40 − 0 = 40, 50 − 5·40 = −150, 60 − 6·(−150) = 960.
    assert_eq!(
        run_scan(r#""op0":"mult","op1":"subtract","reverse1":true,"is_tensor_tensor_scan":true"#),
        [10.0, 0.0, 30.0, 40.0, -150.0, 960.0]
    );
}

#[test]
fn tsp_apply_transpose_swaps_a_32x32_tile() {
    // a[p][e] = p·32 + e + 1 on 32 × 32; after the transpose y[p][e] = a[e][p] = e·32 + p + 1,
    // then + 0: y[0][1] = 33, y[1][0] = 2, y[31][31] = 1024.
    let a32 = ap("a", "float32", 0, &[(32, 32), (1, 32)]);
    let out = run(
        &[
            t("a", "float32", 1024, f32s(&(1..=1024).map(|v| v as f32).collect::<Vec<_>>())),
            t("y", "float32", 1024, vec![]),
        ],
        &inst(
            "TensorScalarPtr",
            "DVE",
            &[a32, imm(0.0)],
            &[ap("y", "float32", 0, &[(32, 32), (1, 32)])],
            r#""op0":"add","apply_transpose":true"#,
        ),
    )
    .unwrap();
    let y = to_f32(&out[1]);
    assert_eq!((y[1], y[32], y[1023]), (33.0, 2.0, 1024.0));
}

/// The direct StreamShuffle path (source and destination rows contiguous, in different
/// buffers) against the twin, on odd partition counts, row lengths and strided row pitches.
#[test]
fn stream_shuffle_between_buffers_matches_the_twin() {
    for (parts, free, pitch) in [(5usize, 3usize, 3usize), (33, 7, 9), (64, 1, 1), (97, 13, 20)] {
        let mut mask = [255u8; 32];
        let lim = if parts.is_multiple_of(32) { 32 } else { (parts % 32).min(32) };
        for (i, m) in mask.iter_mut().enumerate() {
            if i % 4 != 3 {
                *m = ((i * 11 + 5) % lim) as u8;
            }
        }
        let src: Vec<u32> = (0..parts * pitch).map(|v| v as u32 * 7 + 3).collect();
        let rows: Vec<Vec<u32>> = src.chunks(pitch).map(|r| r[..free].to_vec()).collect();
        let old: Vec<u32> = (0..parts * pitch).map(|v| 0xDEAD_0000 + v as u32).collect();
        let mut want: Vec<Vec<u32>> = old.chunks(pitch).map(|r| r[..free].to_vec()).collect();
        shuffle_twin(&rows, &mut want, &mask);
        let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (f, p, s) = (free as i64, parts as i64, pitch as i64);
        let out = run(
            &[t("x", "uint32", parts * pitch, bytes(&src)), t("y", "uint32", parts * pitch, bytes(&old))],
            &inst(
                "StreamShuffle",
                "DVE",
                &[ap("x", "uint32", 0, &[(s, p), (1, f)])],
                &[ap("y", "uint32", 0, &[(s, p), (1, f)])],
                &mask_json(&mask),
            ),
        )
        .unwrap();
        let got: Vec<u32> =
            out[1].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let got_rows: Vec<Vec<u32>> = got.chunks(pitch).map(|r| r[..free].to_vec()).collect();
        assert_eq!(got_rows, want, "parts {parts} free {free} pitch {pitch}");
        // Bytes between rows are untouched.
        for (k, r) in got.chunks(pitch).enumerate() {
            assert_eq!(&r[free..], &old[k * pitch + free..(k + 1) * pitch]);
        }
    }
}

#[test]
fn stream_shuffle_on_shifted_overlapping_rows_matches_the_twin() {
    // Source rows 1..=P and destination rows 0..P of one tensor: every source row is read
    // before any destination row is written (§5.1), so the twin works on a snapshot.
    for (parts, free) in [(5usize, 3usize), (33, 2), (64, 1)] {
        let mut mask = [255u8; 32];
        let lim = if parts.is_multiple_of(32) { 32 } else { parts % 32 };
        for (i, m) in mask.iter_mut().enumerate() {
            if i % 3 != 1 {
                *m = ((i * 7 + 3) % lim) as u8;
            }
        }
        let all: Vec<u32> = (0..(parts + 1) * free).map(|v| v as u32 * 3 + 1).collect();
        let rows: Vec<Vec<u32>> = all.chunks(free).map(<[u32]>::to_vec).collect();
        let src_rows = rows[1..].to_vec();
        let mut want = rows.clone();
        shuffle_twin(&src_rows, &mut want[..parts], &mask);
        let flat: Vec<u8> = all.iter().flat_map(|v| v.to_le_bytes()).collect();
        let (f, p) = (free as i64, parts as i64);
        let out = run(
            &[t("y", "uint32", (parts + 1) * free, flat)],
            &inst(
                "StreamShuffle",
                "DVE",
                &[ap("y", "uint32", f, &[(f, p), (1, f)])],
                &[ap("y", "uint32", 0, &[(f, p), (1, f)])],
                &mask_json(&mask),
            ),
        )
        .unwrap();
        let got: Vec<u32> =
            out[0].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, want.concat(), "parts {parts} free {free}");
    }
}
