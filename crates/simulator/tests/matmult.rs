//! Matmult into PSUM (issue #27; docs/fidelity.md M1–M6; engines.md §1): operand roles
//! (`ins = [moving K × N, stationary K × M]`), the group flags of both schemas through the
//! tracked write (START clears its bank and copies, ACCUMULATE adds where written, neither
//! overwrites), the `matmul` order switch, and the located faults. Every expected value is
//! worked by hand in the comments from the formula `out[m, n] = Σ_k moving[k, n]·stationary[k, m]`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::*;
use simulator::{FaultKind, Options};

/// moving K×N = [[1, 2, 3], [4, 5, 6]] and stationary K×M = [[1, 10], [2, 20]]: out[0, ·] =
/// 1·[1, 2, 3] + 2·[4, 5, 6] = [9, 12, 15], out[1, ·] = 10·[1, 2, 3] + 20·[4, 5, 6] = [90, 120, 150].
const MOVING: [f32; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
const STATIONARY: [f32; 4] = [1.0, 10.0, 2.0, 20.0];
const PRODUCT: [f32; 6] = [9.0, 12.0, 15.0, 90.0, 120.0, 150.0];

/// A Matmult of `x` (2 × 3) by `w` (2 × 2) into `ps` at element `offset` of each partition, with
/// the group fields `flags` (JSON members).
fn mm(name: &str, offset: i64, per: i64, flags: &str) -> String {
    format!(
        r#"{{"opcode":"Matmult","name":"{name}","engine":"PE","ins":[{},{}],"outs":[{}],{flags}}}"#,
        ap("x", "float32", 0, &[(3, 2), (1, 3)]),
        ap("w", "float32", 0, &[(2, 2), (1, 2)]),
        ap("ps", "float32", offset, &[(per, 2), (1, 3)]),
    )
}

/// Runs `body` over x, w and a 2-partition PSUM tile of `per` fp32 per partition (preloaded
/// with `init`); the PSUM bytes as fp32, or the fault.
fn run(body: &str, per: usize, init: &[f32], options: Options) -> Result<Vec<f32>, (FaultKind, String)> {
    let tensors = [
        sb("x", "float32", 2, 3, f32s(&MOVING)),
        sb("w", "float32", 2, 2, f32s(&STATIONARY)),
        psum("ps", "float32", 2, per, f32s(init)),
    ];
    match run_keep(&tensors, body, options, None) {
        (None, mem) => Ok(to_f32(&mem[2])),
        (Some(f), _) => Err((f.kind, format!("{} {}", f.instruction, f.message()))),
    }
}

fn bits(v: &[f32]) -> Vec<String> {
    v.iter().map(|x| format!("{:#010x}", x.to_bits())).collect()
}

/// ps[p, j] of a 2 × `per` tile.
fn at(v: &[f32], per: usize, p: usize, j: usize) -> f32 {
    v[p * per + j]
}

#[test]
fn a_start_writes_the_product_with_moving_first() {
    let got = run(
        &mm("mm", 0, 3, r#""start_tensor_calc":true,"stop_tensor_calc":true"#),
        3,
        &[],
        Options::default(),
    )
    .unwrap();
    assert_eq!(bits(&got), bits(&PRODUCT));
}

#[test]
fn a_group_accumulates_and_the_schemas_agree() {
    // START then two ACCUMULATEs: 3 × PRODUCT (each an exact small integer).
    let want: Vec<f32> = PRODUCT.iter().map(|v| 3.0 * v).collect();
    for (start, acc) in [
        (r#""start_tensor_calc":true"#, r#""start_tensor_calc":false"#),
        (r#""accumulation_flag":1,"psum_zero_region":0"#, r#""accumulation_flag":4,"psum_zero_region":0"#),
        // START|ACCUMULATE, then ACCUMULATE|STOP: STOP changes nothing.
        (r#""accumulation_flag":5,"psum_zero_region":0"#, r#""accumulation_flag":6,"psum_zero_region":0"#),
    ] {
        let body = [mm("a", 0, 3, start), mm("b", 0, 3, acc), mm("c", 0, 3, acc)].join(",");
        let got = run(&body, 3, &[], Options::default()).unwrap();
        assert_eq!(bits(&got), bits(&want), "{start} / {acc}");
    }
}

#[test]
fn accumulate_copies_into_unwritten_psum_and_idle_overwrites() {
    // PSUM preloaded with 100.0 but never written by a matmul: its shadow is clear, so an
    // ACCUMULATE copies (PRODUCT, not 100 + PRODUCT); a second one adds (2 × PRODUCT); an idle
    // (flag 0) write overwrites (PRODUCT again).
    let init = [100.0f32; 6];
    let one =
        run(&mm("a", 0, 3, r#""accumulation_flag":4,"psum_zero_region":0"#), 3, &init, Options::default())
            .unwrap();
    assert_eq!(bits(&one), bits(&PRODUCT));
    let acc = r#""accumulation_flag":4,"psum_zero_region":0"#;
    let body = [
        mm("a", 0, 3, acc),
        mm("b", 0, 3, acc),
        mm("c", 0, 3, r#""accumulation_flag":0,"psum_zero_region":0"#),
    ];
    let two = run(&body[..2].join(","), 3, &init, Options::default()).unwrap();
    assert_eq!(bits(&two), bits(&PRODUCT.map(|v| 2.0 * v)));
    let idle = run(&body.join(","), 3, &init, Options::default()).unwrap();
    assert_eq!(bits(&idle), bits(&PRODUCT));
}

#[test]
fn a_start_clears_its_banks_and_restarts_the_group() {
    // A 2-partition PSUM tile of 1024 fp32 (two 2 KiB banks) preloaded with 7.0. A group in
    // bank 0 (elements 0..3), then a START into bank 0 at element 8: bank 0 (elements 0..512)
    // reads 0 except the new product at 8..11; bank 1 keeps 7.0. With psum_zero_region 1 the
    // START clears both banks.
    let per = 1024;
    let init = vec![7.0f32; 2 * per];
    let acc = r#""accumulation_flag":4,"psum_zero_region":0"#;
    for (region, bank1) in [(0, 7.0f32), (1, 0.0)] {
        let start = format!(r#""accumulation_flag":1,"psum_zero_region":{region}"#);
        let body = [mm("a", 0, per as i64, acc), mm("b", 0, per as i64, acc), mm("c", 8, per as i64, &start)]
            .join(",");
        let got = run(&body, per, &init, Options::default()).unwrap();
        for p in 0..2 {
            for j in [0, 2, 7, 11, 511] {
                assert_eq!(at(&got, per, p, j).to_bits(), 0, "region {region}: ps[{p}, {j}]");
            }
            for j in 0..3 {
                assert_eq!(
                    at(&got, per, p, 8 + j),
                    PRODUCT[3 * p + j],
                    "region {region}: ps[{p}, {}]",
                    8 + j
                );
            }
            for j in [512, 700, 1023] {
                assert_eq!(at(&got, per, p, j), bank1, "region {region}: ps[{p}, {j}]");
            }
        }
    }
}

#[test]
fn psum_outside_the_written_banks_stays_uninitialised() {
    // An unloaded 4-partition PSUM tile of 1024 fp32 (banks 0 and 1) reads 0xFF everywhere. A
    // START into bank 1 at element 8 clears bank 1 of partitions 0 and 1 and writes the product
    // there; an ACCUMULATE into bank 0 at element 8 copies the product (nothing written there
    // yet) and leaves the rest of bank 0 as it was. Partitions 2 and 3 are never touched.
    let per = 1024;
    let body = [
        mm("a", 512 + 8, per as i64, r#""accumulation_flag":1,"psum_zero_region":0"#),
        mm("b", 8, per as i64, r#""accumulation_flag":4,"psum_zero_region":0"#),
    ]
    .join(",");
    let tensors = [
        sb("x", "float32", 2, 3, f32s(&MOVING)),
        sb("w", "float32", 2, 2, f32s(&STATIONARY)),
        psum_uninit("ps", "float32", 4, per),
    ];
    let (fault, mem) = run_keep(&tensors, &body, Options::default(), None);
    assert!(fault.is_none(), "{fault:?}");
    let got: Vec<u32> = to_f32(&mem[2]).iter().map(|v| v.to_bits()).collect();
    for p in 0..4 {
        for j in 0..per {
            let product =
                (p < 2 && (8..11).contains(&(j % 512))).then(|| PRODUCT[3 * p + j % 512 - 8].to_bits());
            let want = match (product, p < 2 && j >= 512) {
                (Some(v), _) => v,
                (None, true) => 0,
                (None, false) => u32::MAX,
            };
            assert_eq!(got[p * per + j], want, "ps[{p}, {j}]: {:#010x}", got[p * per + j]);
        }
    }
}

#[test]
fn the_matmul_option_picks_the_summation() {
    // K = 2 by hand: moving [[-1], [x]], stationary [[1], [x]], x = 1 + 2^-12. x² = 1 + 2^-11 +
    // 2^-24 is a tie in fp32 and rounds to 1 + 2^-11, so ascending gives -1 + (1 + 2^-11) =
    // 2^-11; an FMA adds the exact x² and gives 2^-11 + 2^-24.
    let x = 1.0 + f32::powi(2.0, -12);
    let tensors = |_: ()| {
        [
            sb("x", "float32", 2, 1, f32s(&[-1.0, x])),
            sb("w", "float32", 2, 1, f32s(&[1.0, x])),
            psum("ps", "float32", 1, 1, vec![]),
        ]
    };
    let body = format!(
        r#"{{"opcode":"Matmult","name":"mm","engine":"PE","ins":[{},{}],"outs":[{}],"start_tensor_calc":true}}"#,
        ap("x", "float32", 0, &[(1, 2), (1, 1)]),
        ap("w", "float32", 0, &[(1, 2), (1, 1)]),
        ap("ps", "float32", 0, &[(1, 1), (1, 1)]),
    );
    for (order, want) in
        [("ascending", f32::powi(2.0, -11)), ("fma", f32::powi(2.0, -11) + f32::powi(2.0, -24))]
    {
        let mut o = Options::default();
        o.set("matmul", order).unwrap();
        let (fault, mem) = run_keep(&tensors(()), &body, o, None);
        assert!(fault.is_none(), "{order}");
        assert_eq!(bits(&to_f32(&mem[2])), bits(&[want]), "{order}");
    }
}

#[test]
fn an_output_moved_across_a_bank_boundary_faults() {
    // Validation refuses a static output across a bank (bir-ir); a scalar dynamic offset of 509
    // along Z (the free level, step 1) moves the 3 output columns to elements 509..=511 of bank 0 (fine) and 510 to
    // 510..=512, which crosses into bank 1: a shape fault, nothing written.
    for (offset, crosses) in [(509, false), (510, true)] {
        let tensors = [
            sb("x", "float32", 2, 3, f32s(&MOVING)),
            sb("w", "float32", 2, 2, f32s(&STATIONARY)),
            psum("ps", "float32", 2, 1024, vec![]),
            sb("idx", "int32", 1, 1, i32s(&[offset])),
        ];
        let out = format!(
            r#"{},"indirect_dim":"Z","indirect_dim_max_index":1024,"scalar_offset":{}}}"#,
            ap("ps", "float32", 0, &[(1024, 2), (1, 3)]).strip_suffix('}').unwrap(),
            ap("idx", "int32", 0, &[(1, 1), (1, 1)])
        );
        let body = format!(
            r#"{{"opcode":"Matmult","name":"mm","engine":"PE","ins":[{},{}],"outs":[{out}],"start_tensor_calc":true}}"#,
            ap("x", "float32", 0, &[(3, 2), (1, 3)]),
            ap("w", "float32", 0, &[(2, 2), (1, 2)]),
        );
        let (fault, mem) = run_keep(&tensors, &body, Options::default(), None);
        match (fault, crosses) {
            (None, false) => {
                let ps = to_f32(&mem[2]);
                assert_eq!(
                    bits(&[ps[509], ps[510], ps[511], ps[1024 + 509]]),
                    bits(&[9.0, 12.0, 15.0, 90.0])
                );
            }
            (Some(f), true) => {
                assert_eq!(f.kind, FaultKind::Shape, "{}", f.message());
                assert!(f.message().contains("one 2 KiB PSUM bank"), "{}", f.message());
                assert!(mem[2].iter().all(|&b| b == 0), "nothing written");
            }
            (f, _) => panic!("offset {offset}: {:?}", f.map(|f| f.message())),
        }
    }
}

#[test]
fn a_start_past_the_eighth_bank_faults() {
    // PSUM has 8 banks per partition: a START at bank 7 (element 3584) clearing 2^1 banks runs past.
    let per = 4096;
    let err = run(
        &mm("mm", 3584, per as i64, r#""accumulation_flag":1,"psum_zero_region":1"#),
        per,
        &[],
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(err.0, FaultKind::BadField, "{}", err.1);
    assert!(err.1.contains("psum_zero_region"), "{}", err.1);
}

/// A program of one Matmult over `x` (moving), `w` (stationary) and PSUM `ps`, with these APs
/// (each `[[step, num], …]`) and fields, on `arch`; PSUM's bytes afterwards, or the fault text.
fn one(
    arch: &str,
    tensors: &[T<'_>],
    (xa, wa, pa): (&str, &str, &str),
    fields: &str,
) -> Result<Vec<u8>, String> {
    let body = format!(
        r#"{{"opcode":"Matmult","name":"mm","engine":"PE","ins":[{xa},{wa}],"outs":[{pa}],{fields}}}"#
    );
    match run_on(arch, tensors, &body, Options::default(), None) {
        (None, mem) => Ok(mem[2].clone()),
        (Some(f), _) => Err(f.message()),
    }
}

#[test]
fn the_pe_transpose_copies_the_data_bits_in_either_reading() {
    // Data D (P = 2 partitions × F = 3): [[1, -0, NaN(0x7FC00001)], [4, 5, 6]] in fp32; out
    // (3 × 2) = Dᵀ bit for bit: [[1, 4], [-0, 5], [NaN, 6]].
    let nan = f32::from_bits(0x7FC0_0001);
    let d = [1.0, -0.0, nan, 4.0, 5.0, 6.0];
    let want = bits(&[1.0, 4.0, -0.0, 5.0, nan, 6.0]);
    let flags = r#""start_tensor_calc":true,"is_transpose":true"#;
    // NKI: data stationary (2 × 3), identity moving (2 × 2).
    let nki = [
        sb("x", "float32", 2, 2, f32s(&[1.0, 0.0, 0.0, 1.0])),
        sb("w", "float32", 2, 3, f32s(&d)),
        psum("ps", "float32", 3, 2, vec![]),
    ];
    let aps = (
        ap("x", "float32", 0, &[(2, 2), (1, 2)]),
        ap("w", "float32", 0, &[(3, 2), (1, 3)]),
        ap("ps", "float32", 0, &[(2, 3), (1, 2)]),
    );
    let got = one("gen3", &nki, (&aps.0, &aps.1, &aps.2), flags).unwrap();
    assert_eq!(bits(&to_f32(&got)), want, "NKI reading");
    // KLR: data moving (2 × 3), identity stationary (3 × 3).
    let klr = [
        sb("x", "float32", 2, 3, f32s(&d)),
        sb("w", "float32", 3, 3, f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])),
        psum("ps", "float32", 3, 2, vec![]),
    ];
    let aps = (
        ap("x", "float32", 0, &[(3, 2), (1, 3)]),
        ap("w", "float32", 0, &[(3, 3), (1, 3)]),
        ap("ps", "float32", 0, &[(2, 3), (1, 2)]),
    );
    let got = one("gen3", &klr, (&aps.0, &aps.1, &aps.2), flags).unwrap();
    assert_eq!(bits(&to_f32(&got)), want, "KLR reading");
}

#[test]
fn a_square_transpose_takes_the_operand_that_is_not_the_identity() {
    // 2 × 2 everywhere: both readings fit. Moving D = [[1, 2], [3, 4]], stationary = I: the data
    // is the moving operand (KLR), out = Dᵀ = [[1, 3], [2, 4]]. Swapped (stationary D, moving I):
    // the data is the stationary, out = Dᵀ again.
    let d = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let id = f32s(&[1.0, 0.0, 0.0, 1.0]);
    let aps = (
        ap("x", "float32", 0, &[(2, 2), (1, 2)]),
        ap("w", "float32", 0, &[(2, 2), (1, 2)]),
        ap("ps", "float32", 0, &[(2, 2), (1, 2)]),
    );
    for (x, w) in [(d.clone(), id.clone()), (id, d)] {
        let t =
            [sb("x", "float32", 2, 2, x), sb("w", "float32", 2, 2, w), psum("ps", "float32", 2, 2, vec![])];
        let got =
            one("gen3", &t, (&aps.0, &aps.1, &aps.2), r#""start_tensor_calc":true,"is_transpose":true"#);
        assert_eq!(bits(&to_f32(&got.unwrap())), bits(&[1.0, 3.0, 2.0, 4.0]));
    }
}

#[test]
fn an_fp8_transpose_writes_16_bit_elements_and_gen2_multiplies() {
    // float8e4 data (2 × 2) bytes [[0x38, 0x40], [0xB8, 0x7F]] (1, 2, -1, a NaN): out (2 × 2
    // uint16) = the bytes transposed, each in the low byte: [[0x38, 0xB8], [0x40, 0x7F]].
    let t = [
        sb("x", "float8e4", 2, 2, vec![0x38, 0x00, 0x00, 0x38]),
        sb("w", "float8e4", 2, 2, vec![0x38, 0x40, 0xB8, 0x7F]),
        psum("ps", "uint16", 2, 2, vec![]),
    ];
    let aps = (
        ap("x", "float8e4", 0, &[(2, 2), (1, 2)]),
        ap("w", "float8e4", 0, &[(2, 2), (1, 2)]),
        ap("ps", "uint16", 0, &[(2, 2), (1, 2)]),
    );
    // Moving is the identity (0x38 = 1.0), so the data is the stationary.
    let got =
        one("gen3", &t, (&aps.0, &aps.1, &aps.2), r#""start_tensor_calc":true,"is_transpose":true"#).unwrap();
    assert_eq!(to_u16(&got), [0x38, 0xB8, 0x40, 0x7F]);
    // gen2: the product with the identity in fp32: out[m, n] = Σ_k I[k, n]·D[k, m] = D[n, m]
    // = [[1, -1], [2, 1.5]] for D = [[1, 2], [-1, 1.5]] (float8e4 0x38, 0x40, 0xB8, 0x3C).
    let t = [
        sb("x", "float8e4", 2, 2, vec![0x38, 0x00, 0x00, 0x38]),
        sb("w", "float8e4", 2, 2, vec![0x38, 0x40, 0xB8, 0x3C]),
        psum("ps", "float32", 2, 2, vec![]),
    ];
    let aps = (aps.0, aps.1, ap("ps", "float32", 0, &[(2, 2), (1, 2)]));
    let got =
        one("gen2", &t, (&aps.0, &aps.1, &aps.2), r#""start_tensor_calc":true,"is_transpose":true"#).unwrap();
    assert_eq!(bits(&to_f32(&got)), bits(&[1.0, -1.0, 2.0, 1.5]));
}

#[test]
fn double_row_sums_each_row_pair_first() {
    // P = 1 partition, pairs h = 0, 1, M = N = 1, float8e4: moving [a0, a1] = [2, 0.5] (0x40,
    // 0x30), stationary [b0, b1] = [3, -2] (0x44, 0xC0): out = 2·3 + 0.5·(-2) = 5.
    let t = [
        sb("x", "float8e4", 1, 2, vec![0x40, 0x30]),
        sb("w", "float8e4", 1, 2, vec![0x44, 0xC0]),
        psum("ps", "float32", 1, 1, vec![]),
    ];
    let aps = (
        ap("x", "float8e4", 0, &[(2, 1), (1, 2), (1, 1)]),
        ap("w", "float8e4", 0, &[(2, 1), (1, 2), (1, 1)]),
        ap("ps", "float32", 0, &[(1, 1), (1, 1)]),
    );
    let got =
        one("gen3", &t, (&aps.0, &aps.1, &aps.2), r#""start_tensor_calc":true,"perf_mode":"DoubleRow""#)
            .unwrap();
    assert_eq!(bits(&to_f32(&got)), bits(&[5.0]));
}

#[test]
fn gen4_bf16_psum_rounds_each_write() {
    // K = 1, M = N = 1: x = 1 + 2^-7 (bf16 0x3F81), w = 1 + 2^-7: the fp32 product 1 + 2^-6 +
    // 2^-14 rounds to bf16 1 + 2^-6 (0x3F82). Accumulating the same product again: 0x3F82
    // widens to 1 + 2^-6, plus the fp32 product = 2 + 2^-5 + 2^-14, rounds to bf16 2 + 2^-5
    // = 2·(1 + 2/128): exponent of 2 (0x4000) with mantissa 2, 0x4002.
    let t = [
        sb("x", "bfloat16", 1, 1, u16s(&[0x3F81])),
        sb("w", "bfloat16", 1, 1, u16s(&[0x3F81])),
        psum("ps", "bfloat16", 1, 1, vec![]),
    ];
    let (xa, wa, pa) = (
        ap("x", "bfloat16", 0, &[(1, 1), (1, 1)]),
        ap("w", "bfloat16", 0, &[(1, 1), (1, 1)]),
        ap("ps", "bfloat16", 0, &[(1, 1), (1, 1)]),
    );
    let mm = |name: &str, f: &str| {
        format!(r#"{{"opcode":"Matmult","name":"{name}","engine":"PE","ins":[{xa},{wa}],"outs":[{pa}],{f}}}"#)
    };
    let body = mm("a", r#""start_tensor_calc":true"#);
    let (f, mem) = run_on("gen4", &t, &body, Options::default(), None);
    assert!(f.is_none());
    assert_eq!(to_u16(&mem[2]), [0x3F82]);
    let body = [body, mm("b", r#""start_tensor_calc":false"#)].join(",");
    let (f, mem) = run_on("gen4", &t, &body, Options::default(), None);
    assert!(f.is_none());
    assert_eq!(to_u16(&mem[2]), [0x4002]);
}

#[test]
fn float32r_operands_round_through_their_encoder_first() {
    // K = 1: x = 1 + 2^-12 (bits 0x3F800800) held as float32r, w = 3. fp32r keeps 10 explicit
    // mantissa bits (round bit 0x1000, fidelity N11): x rounds to 1.0 before the product, so
    // out = 3 (not 3 + 3·2^-12).
    let t = [
        sb("x", "float32r", 1, 1, u32s(&[0x3F80_0800])),
        sb("w", "float32r", 1, 1, f32s(&[3.0])),
        psum("ps", "float32", 1, 1, vec![]),
    ];
    let aps = (
        ap("x", "float32r", 0, &[(1, 1), (1, 1)]),
        ap("w", "float32r", 0, &[(1, 1), (1, 1)]),
        ap("ps", "float32", 0, &[(1, 1), (1, 1)]),
    );
    let got = one("gen3", &t, (&aps.0, &aps.1, &aps.2), r#""start_tensor_calc":true"#).unwrap();
    assert_eq!(bits(&to_f32(&got)), bits(&[3.0]));
}

#[test]
fn the_trace_records_each_matmults_flags_and_bank() {
    // The same START/ACCUMULATE pair at element 520 of a 1024-element PSUM row (bank 1), in the
    // 2.24 schema with psum_zero_region 1: flags 1 (START) then 6 (ACCUMULATE | STOP).
    let body = [
        mm("a", 520, 1024, r#""accumulation_flag":1,"psum_zero_region":1"#),
        mm("b", 520, 1024, r#""accumulation_flag":6,"psum_zero_region":1"#),
    ]
    .join(",");
    let text = format!(
        r#"{{"arch":"gen3","functions":[{{"name":"f","allocations":[{},{},{}],"blocks":[{body}]}}]}}"#,
        r#"{"name":"x","kind":"Internal","dtype":"float32","tensor_shape":[2,3],"memorylocations":[{"name":"x","type":"SB","dims":[2,12]}]}"#,
        r#"{"name":"w","kind":"Internal","dtype":"float32","tensor_shape":[2,2],"memorylocations":[{"name":"w","type":"SB","dims":[2,8]}]}"#,
        r#"{"name":"ps","kind":"Internal","dtype":"float32","tensor_shape":[2,1024],"memorylocations":[{"name":"ps","type":"PSUM","dims":[2,4096]}]}"#,
    );
    let p = bir_ir::json::load_str(&text).unwrap();
    let v = bir_ir::validate(&p, &Default::default()).unwrap();
    let mut sim = simulator::Simulator::new(v, numerics::Profile::refsim());
    sim.enable_trace();
    assert!(matches!(sim.run().unwrap(), simulator::Outcome::Finished));
    let got: Vec<_> = sim.trace().iter().map(|e| e.matmul).collect();
    assert_eq!(
        got,
        [
            Some(simulator::MatmulTrace { flags: 1, zero_banks: 2, bank: 1 }),
            Some(simulator::MatmulTrace { flags: 6, zero_banks: 2, bank: 1 }),
        ]
    );
}

/// gen4's wide Matmult: moving K = 2 × N = 600 (`x[k, n] = n + 1000·k`), stationary [[1, 10],
/// [2, 20]], into a 2-partition PSUM tile of 2048 fp32 (4 banks) at element `offset`.
fn wide(offset: i64, flags: &str) -> String {
    format!(
        r#"{{"opcode":"Matmult","name":"wide","engine":"PE","ins":[{},{}],"outs":[{}],{flags}}}"#,
        ap("x", "float32", 0, &[(600, 2), (1, 600)]),
        ap("w", "float32", 0, &[(2, 2), (1, 2)]),
        ap("ps", "float32", offset, &[(2048, 2), (1, 600)]),
    )
}

fn wide_tensors(init: f32) -> [T<'static>; 3] {
    let x: Vec<f32> = (0..2).flat_map(|k| (0..600).map(move |n| (n + 1000 * k) as f32)).collect();
    [
        sb("x", "float32", 2, 600, f32s(&x)),
        sb("w", "float32", 2, 2, f32s(&STATIONARY)),
        psum("ps", "float32", 2, 2048, f32s(&vec![init; 2 * 2048])),
    ]
}

/// out[m, n] = Σ_k x[k, n]·w[k, m] by the formula: m = 0 weighs the rows 1 and 2, m = 1 10 and 20
/// (exact small integers).
fn wide_product(m: usize, n: usize) -> f32 {
    let (a, b) = if m == 0 { (1.0, 2.0) } else { (10.0, 20.0) };
    a * n as f32 + b * (n + 1000) as f32
}

#[test]
fn gen4_outputs_may_span_psum_banks() {
    // engines.md §1.2 / AWS nc_matmul: on v4 N reaches 4096 fp32 across the 8 banks. Elements
    // 500..1100 of each partition cover banks 0, 1 and 2. An ACCUMULATE first (nothing written:
    // it copies), then a START with psum_zero_region 0 over the same elements: the START clears
    // every bank the output covers, so the group restarts and each element is one product, not
    // two; element 1200 (bank 2, outside the output) reads 0, element 1600 (bank 3) keeps 7.0.
    let body = [
        wide(500, r#""accumulation_flag":4,"psum_zero_region":0"#),
        wide(500, r#""accumulation_flag":1,"psum_zero_region":0"#),
    ]
    .join(",");
    let (fault, mem) = run_on("gen4", &wide_tensors(7.0), &body, Options::default(), None);
    assert!(fault.is_none(), "{:?}", fault.map(|f| f.message()));
    let ps = to_f32(&mem[2]);
    for m in 0..2 {
        for n in [0, 11, 12, 511, 599] {
            assert_eq!(ps[m * 2048 + 500 + n], wide_product(m, n), "ps[{m}, {}]", 500 + n);
        }
        assert_eq!(ps[m * 2048 + 1200].to_bits(), 0, "ps[{m}, 1200]");
        assert_eq!(ps[m * 2048 + 1600], 7.0, "ps[{m}, 1600]");
        assert_eq!(ps[m * 2048 + 100].to_bits(), 0, "ps[{m}, 100]: bank 0 cleared");
    }
}

#[test]
fn before_gen4_an_output_spans_one_bank() {
    // The same program on gen3 is refused by validation: N = 600 fp32 is more than one bank.
    let text = program_text("gen3", &wide_tensors(0.0), &wide(0, r#""start_tensor_calc":true"#));
    let prog = bir_ir::json::load_str(&text).unwrap();
    let err = bir_ir::validate(&prog, &bir_ir::ValidateOptions::default()).unwrap_err();
    assert!(format!("{err:?}").contains("one 2 KiB PSUM bank"), "{err:?}");
}

#[test]
fn a_gen4_pe_transpose_may_cross_a_bank_too() {
    // The transpose of `the_pe_transpose_copies_the_data_bits_in_either_reading` (NKI reading)
    // written at element 511 of each partition of a 1024-fp32 PSUM tile: its two columns sit in
    // banks 0 and 1. gen4 (one rule for every Tensor Engine output) writes Dᵀ there; gen3's
    // validation refuses it.
    let d = [1.0, -0.0, 3.0, 4.0, 5.0, 6.0];
    let tensors = [
        sb("x", "float32", 2, 2, f32s(&[1.0, 0.0, 0.0, 1.0])),
        sb("w", "float32", 2, 3, f32s(&d)),
        psum("ps", "float32", 3, 1024, vec![]),
    ];
    let aps = (
        ap("x", "float32", 0, &[(2, 2), (1, 2)]),
        ap("w", "float32", 0, &[(3, 2), (1, 3)]),
        ap("ps", "float32", 511, &[(1024, 3), (1, 2)]),
    );
    let flags = r#""start_tensor_calc":true,"is_transpose":true"#;
    let got = to_f32(&one("gen4", &tensors, (&aps.0, &aps.1, &aps.2), flags).unwrap());
    let at = |f: usize, p: usize| got[f * 1024 + 511 + p];
    assert_eq!(
        bits(&[at(0, 0), at(0, 1), at(1, 0), at(1, 1), at(2, 0), at(2, 1)]),
        bits(&[1.0, 4.0, -0.0, 5.0, 3.0, 6.0])
    );
    let body = format!(
        r#"{{"opcode":"Matmult","name":"mm","engine":"PE","ins":[{},{}],"outs":[{}],{flags}}}"#,
        aps.0, aps.1, aps.2
    );
    let prog = bir_ir::json::load_str(&program_text("gen3", &tensors, &body)).unwrap();
    let err = bir_ir::validate(&prog, &bir_ir::ValidateOptions::default()).unwrap_err();
    assert!(format!("{err:?}").contains("one 2 KiB PSUM bank"), "{err:?}");
}
