//! Matmult's two record schemas and its validation rules (issue #27 items 1, 3 and 6;
//! docs/fidelity.md M1, M5): the KLR-era `start_tensor_calc` pair and neuronx-cc 2.24's 13-key
//! record both load and round-trip key for key; one record with both, or neither, is refused;
//! dtypes, shapes and PE tiles outside the documented limits are located errors.
#![expect(clippy::unwrap_used, clippy::panic, reason = "test code")]

use bir_ir::ops::{MatmultFields, MatmultFlags};
use bir_ir::{Op, ValidateOptions, json, validate};

/// A program with one Matmult of moving `x` (`k` × `n`, `xd`) by stationary `w` (`k` × `m`,
/// `wd`) into PSUM `ps` (`m` × `n`, `od`), with the instruction's extra members `fields`.
fn program(
    (k, m, n): (i64, i64, i64),
    (xd, wd, od): (&str, &str, &str),
    out_type: &str,
    fields: &str,
) -> String {
    let loc = |name: &str, typ: &str, dt: &str, parts: i64, per: i64| {
        format!(
            r#"{{"name":"{name}_set","kind":"Internal","dtype":"{dt}","tensor_shape":[{parts},{per}],"memorylocations":[{{"name":"{name}","type":"{typ}","dims":[{parts},{}]}}]}}"#,
            per * 4
        )
    };
    let ap = |mem: &str, dt: &str, parts: i64, per: i64| {
        format!(
            r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","offset":0,"ap":[[{per},{parts}],[1,{per}]]}}"#
        )
    };
    format!(
        r#"{{"functions":[{{"name":"f","allocations":[{},{},{}],"blocks":[{{"opcode":"Matmult","name":"mm","engine":"PE","ins":[{},{}],"outs":[{}]{fields}}}]}}]}}"#,
        loc("x", "SB", xd, k.min(128), n.max(1)),
        loc("w", "SB", wd, k.min(128), m.max(1)),
        loc("ps", out_type, od, m.min(128), 512),
        ap("x", xd, k, n),
        ap("w", wd, k, m),
        ap("ps", od, m, n),
    )
}

const F32: (&str, &str, &str) = ("float32", "float32", "float32");

fn fields(text: &str) -> MatmultFields {
    let p = json::load_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut got = None;
    p.functions[0].for_each_instruction(&mut |i| {
        if let Op::Matmult(m) = &i.op {
            got = Some(m.clone());
        }
    });
    let again = json::load_str(&json::to_json_string(&p)).unwrap();
    assert_eq!(again, p, "round trip");
    *got.unwrap()
}

/// The diagnostics `load` then `validate` give, one string.
fn errors(text: &str) -> String {
    match json::load_str(text) {
        Err(e) => e.to_string(),
        Ok(p) => match validate(&p, &ValidateOptions::default()) {
            Ok(_) => String::new(),
            Err(d) => d.to_string(),
        },
    }
}

#[test]
fn the_2_24_record_loads_with_every_key() {
    let text = program(
        (4, 2, 8),
        F32,
        "PSUM",
        r#","accumulation_flag":5,"psum_zero_region":2,"replication_resolution":1,"replication_shift_amnt":2,"replication_num_rows":3,"is_transpose":false,"is_fmap_onezero":true,"is_weight_onezero":false,"tile_size":[128,128],"tile_position":[0,0],"ifmap_quant_offset":7,"weights_quant_offset":9,"perf_mode":"None""#,
    );
    let m = fields(&text);
    assert_eq!(m.flags, MatmultFlags::Record { accumulation_flag: 5, psum_zero_region: 2 });
    assert_eq!(m.flags.bits(), MatmultFlags::START | MatmultFlags::ACCUMULATE);
    assert_eq!(m.flags.zero_banks(), 4);
    assert_eq!((m.ifmap_quant_offset, m.weights_quant_offset), (Some(7), Some(9)));
    assert_eq!(m.replication, [Some(1), Some(2), Some(3)]);
    assert_eq!(m.onezero, [Some(true), Some(false)]);
    // Written back in its own schema: no start_tensor_calc appears.
    let p = json::load_str(&text).unwrap();
    let out = json::to_json_string(&p);
    assert!(out.contains("\"accumulation_flag\"") && !out.contains("start_tensor_calc"), "{out}");
    assert_eq!(errors(&text), "");
}

#[test]
fn the_klr_record_reads_start_as_start_and_its_absence_as_accumulate() {
    let start =
        fields(&program((4, 2, 8), F32, "PSUM", r#","start_tensor_calc":true,"stop_tensor_calc":true"#));
    assert_eq!(start.flags.bits(), MatmultFlags::START | MatmultFlags::STOP);
    assert_eq!(start.flags.zero_banks(), 1);
    let acc = fields(&program((4, 2, 8), F32, "PSUM", r#","start_tensor_calc":false"#));
    assert_eq!(acc.flags, MatmultFlags::Calc { start: false, stop: None });
    assert_eq!(acc.flags.bits(), MatmultFlags::ACCUMULATE);
}

#[test]
fn both_schemas_or_neither_is_refused() {
    let both = errors(&program((4, 2, 8), F32, "PSUM", r#","start_tensor_calc":true,"accumulation_flag":1"#));
    assert!(both.contains("accumulation_flag") && both.contains("give one of the two"), "{both}");
    let neither = errors(&program((4, 2, 8), F32, "PSUM", ""));
    assert!(neither.contains("missing-field") && neither.contains("accumulation_flag"), "{neither}");
    let bits = errors(&program((4, 2, 8), F32, "PSUM", r#","accumulation_flag":8"#));
    assert!(bits.contains("out-of-range") && bits.contains("accumulation_flag"), "{bits}");
    let region = errors(&program((4, 2, 8), F32, "PSUM", r#","accumulation_flag":1,"psum_zero_region":4"#));
    assert!(region.contains("out-of-range") && region.contains("psum_zero_region"), "{region}");
}

#[test]
fn dtypes_shapes_and_tiles_are_checked() {
    let start = r#","start_tensor_calc":true"#;
    let cases: [(String, &str); 9] = [
        (program((4, 2, 8), ("float32", "bfloat16", "float32"), "PSUM", start), "only with each other"),
        (program((4, 2, 8), ("int32", "int32", "float32"), "PSUM", start), "ins[0].dtype"),
        (program((4, 2, 8), ("bfloat16", "bfloat16", "bfloat16"), "PSUM", start), "writes float32 PSUM"),
        (program((4, 2, 8), ("float8e4", "float8_e4m3fn", "float32"), "PSUM", start), "do not mix"),
        (program((4, 2, 8), F32, "SB", start), "a Matmult writes PSUM"),
        (program((4, 200, 8), F32, "PSUM", start), "M (the stationary free size) is 200"),
        (program((4, 2, 600), F32, "PSUM", start), "N (the moving free size)"),
        (
            program(
                (100, 2, 8),
                F32,
                "PSUM",
                r#","start_tensor_calc":true,"tile_size":[64,64],"tile_position":[0,0]"#,
            ),
            "does not hold K = 100",
        ),
        (
            program(
                (4, 2, 8),
                F32,
                "PSUM",
                r#","start_tensor_calc":true,"tile_size":[64,64],"tile_position":[96,0]"#,
            ),
            "leaves the 128 × 128 array",
        ),
    ];
    for (text, want) in cases {
        let got = errors(&text);
        assert!(got.contains(want), "want {want:?}, got {got:?}\n{text}");
    }
    // Bf16, fp8 and uint8 operands into float32 PSUM, with a PE tile that holds them, validate.
    for (xd, wd) in
        [("bfloat16", "bfloat16"), ("float8e4", "float8e5"), ("uint8", "uint8"), ("float32r", "float32")]
    {
        let text = program(
            (64, 32, 8),
            (xd, wd, "float32"),
            "PSUM",
            r#","start_tensor_calc":true,"tile_size":[64,32],"tile_position":[64,96]"#,
        );
        assert_eq!(errors(&text), "", "{xd} x {wd}");
    }
}

/// `text` on another arch.
fn on(arch: &str, text: &str) -> String {
    text.replacen('{', &format!(r#"{{"arch":"{arch}","#), 1)
}

#[test]
fn transposes_double_row_and_gen4_outputs_are_checked() {
    let start = r#","start_tensor_calc":true"#;
    let tr = r#","start_tensor_calc":true,"is_transpose":true"#;
    // gen4 takes a bfloat16 output, gen3 does not.
    let bf = program((4, 2, 8), ("bfloat16", "bfloat16", "bfloat16"), "PSUM", start);
    assert_eq!(errors(&on("gen4", &bf)), "");
    assert!(errors(&on("gen3", &bf)).contains("or bfloat16 on gen4"));
    // A transpose of stationary data 4 × 2 with a 4 × 4 identity moving into 2 × 4 (NKI).
    let nki = program((4, 2, 4), F32, "PSUM", tr);
    assert_eq!(errors(&nki), "");
    // Output 2 × 8 from moving 4 × 8 and stationary 4 × 2 fits neither reading on gen3 ...
    let neither = program((4, 2, 8), F32, "PSUM", tr);
    assert!(errors(&neither).contains("a PE transpose is data (P × F) into F × P"), "{}", errors(&neither));
    // ... and is an ordinary product on gen2.
    assert_eq!(errors(&on("gen2", &neither)), "");
    // A bf16 transpose writes bf16; fp32 output is refused.
    let bft = program((4, 2, 4), ("bfloat16", "bfloat16", "float32"), "PSUM", tr);
    assert!(errors(&bft).contains("writes the data's dtype"), "{}", errors(&bft));
    // A transpose of more than 128 × 128 is refused (stationary data 4 × 200, identity 4 × 4).
    let big = program((4, 200, 4), F32, "PSUM", tr);
    assert!(errors(&big).contains("up to 128 × 128"), "{}", errors(&big));
    // DoubleRow needs fp8 operands.
    let dr = program(
        (4, 2, 8),
        ("bfloat16", "bfloat16", "float32"),
        "PSUM",
        r#","start_tensor_calc":true,"perf_mode":"DoubleRow""#,
    );
    assert!(errors(&dr).contains("DoubleRow multiplies fp8"), "{}", errors(&dr));
}

#[test]
fn an_output_ap_whose_addresses_overflow_is_an_error_not_a_panic() {
    // The fuzzer's input (fuzz/regressions/run_program/matmult-bank-walk-overflow): a partition
    // step that is not a whole row sends the bank check down its per-element walk, where
    // 2 · 2^62 overflowed i64.
    let text = program((4, 2, 3), F32, "PSUM", r#","start_tensor_calc":true"#)
        .replace(r#""ap":[[3,2],[1,3]]}]"#, r#""ap":[[1,2],[4611686018427387904,3]]}]"#);
    assert!(text.contains("4611686018427387904"), "{text}");
    assert!(!errors(&text).is_empty());
}

#[test]
fn an_output_far_larger_than_a_bank_is_not_walked() {
    // The fuzzer's timeout (fuzz/regressions/run_program/matmult-bank-walk-huge): an output AP
    // of 2^40 elements whose partition step is not a whole row; its shape error is enough.
    let text = program((4, 2, 3), F32, "PSUM", r#","start_tensor_calc":true"#)
        .replace(r#""ap":[[3,2],[1,3]]}]"#, r#""ap":[[1,1048576],[1,1048576]]}]"#);
    let start = std::time::Instant::now();
    assert!(!errors(&text).is_empty());
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
}

/// A MatmultMx over x4 data and uint8 scales: into PSUM, without a transpose or a perf mode
/// (fidelity Q11), is valid; into SB, transposing, or in DoubleRow is refused by name.
#[test]
fn matmult_mx_writes_psum_without_transpose_or_perf_mode() {
    let mx = |out_type: &str, fields: &str| {
        let scale = r#"{"kind":"physical_ap","memref":"sc","dtype":"uint8","offset":0,"ap":[[16,4],[1,16]]}"#;
        program((32, 16, 16), ("float8_e4m3fn_x4", "float8_e4m3fn_x4", "float32"), out_type, fields)
            .replacen(r#""opcode":"Matmult""#, r#""opcode":"MatmultMx""#, 1)
            .replacen(r#"],"outs":["#, &format!(r#",{scale},{scale}],"outs":["#), 1)
            .replacen(
                r#""allocations":["#,
                r#""allocations":[{"name":"sc_set","kind":"Internal","dtype":"uint8","tensor_shape":[4,16],"memorylocations":[{"name":"sc","type":"SB","dims":[4,16]}]},"#,
                1,
            )
    };
    let start = r#","start_tensor_calc":true"#;
    assert_eq!(errors(&mx("PSUM", start)), "", "the plain form is valid");
    let sb = errors(&mx("SB", start));
    assert!(sb.contains("a MatmultMx writes PSUM"), "{sb}");
    let t = errors(&mx("PSUM", r#","start_tensor_calc":true,"is_transpose":true"#));
    assert!(t.contains("is_transpose") && t.contains("no PE transpose"), "{t}");
    let d = errors(&mx("PSUM", r#","start_tensor_calc":true,"perf_mode":"DoubleRow""#));
    assert!(d.contains("perf_mode") && d.contains("no perf mode"), "{d}");
}

/// On gen4 N may fill PSUM's 8 banks (4096 fp32, 8192 bf16: engines.md §1.2, AWS nc_matmul
/// "Tile size"), so the output may cross banks; gen3 keeps one bank.
#[test]
fn gen4_widens_n_to_all_of_psum() {
    let wide = |arch: &str, n: i64, od: &str| {
        let dt = if od == "bfloat16" { ("bfloat16", "bfloat16", od) } else { F32 };
        program((4, 2, n), dt, "PSUM", r#","start_tensor_calc":true"#)
            .replace(r#""dims":[2,2048]"#, r#""dims":[2,16384]"#)
            .replacen(r#"{"functions""#, &format!(r#"{{"arch":"{arch}","functions""#), 1)
    };
    for (arch, n, od, want) in [
        ("gen4", 600, "float32", ""),
        ("gen4", 4096, "float32", ""),
        ("gen4", 8192, "bfloat16", ""),
        ("gen4", 4097, "float32", "fills at most PSUM's 8 banks on gen4: it is 4097, at most 4096"),
        ("gen4", 8193, "bfloat16", "at most 8192"),
        ("gen3", 600, "float32", "one 2 KiB PSUM bank: it is 600, at most 512"),
    ] {
        let text = wide(arch, n, od);
        let got = errors(&text);
        if want.is_empty() {
            assert_eq!(got, "", "{arch} N = {n} {od}");
        } else {
            assert!(got.contains(want), "{arch} N = {n}: want {want:?}, got {got:?}");
        }
    }
}
