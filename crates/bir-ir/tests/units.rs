//! Hand-worked cases for loop trip counts, static AP extents and the JSON number spellings.
#![expect(clippy::unwrap_used, reason = "test code")]

use bir_ir::*;
use rstest::rstest;

#[rstest]
#[case(0, 4, 1, Some(4))]
#[case(0, 5, 2, Some(3))] // 0, 2, 4
#[case(8, 0, -3, Some(3))] // 8, 5, 2
#[case(0, 0, 1, Some(0))]
#[case(0, 4, -1, Some(0))]
#[case(4, 0, 1, Some(0))]
#[case(0, 4, 0, None)]
#[case(i64::MIN, i64::MAX, 1, Some(u64::MAX))]
fn loop_trip_count(#[case] lb: i64, #[case] ub: i64, #[case] stride: i64, #[case] want: Option<u64>) {
    let l = Loop {
        name: String::new(),
        var: "i".into(),
        lb,
        ub,
        stride,
        engine: EngineType::Unassigned,
        kind: LoopKind::Counted,
        body: vec![],
    };
    assert_eq!(l.trip_count(), want);
}

fn sb(partitions: u64, bytes: u64) -> MemoryLocation {
    MemoryLocation {
        name: "t".into(),
        alloc: AllocId(0),
        mem_type: MemoryType::Sb,
        addr: 0,
        partitions,
        bytes_per_partition: bytes,
        base: 0,
        bank: 0,
        allocated: false,
    }
}

fn ap(dtype: Dtype, offset: i64, pairs: &[(i64, i64)]) -> AccessPattern {
    AccessPattern {
        loc: LocId(0),
        dtype,
        offset,
        pairs: pairs.iter().map(|&(s, n)| ApPair::new(s, n)).collect(),
        dynamic: None,
    }
}

#[rstest]
// The whole 128 x 512 fp32 tile: elements 0 ..= 128*512-1.
#[case(ap(Dtype::Float32, 0, &[(512, 128), (1, 512)]), Ok((0, 65535)))]
// Reversed rows: offset 511, step -1.
#[case(ap(Dtype::Float32, 511, &[(512, 128), (-1, 512)]), Ok((0, 65535)))]
// Broadcast of one element per partition.
#[case(ap(Dtype::Float32, 3, &[(512, 128), (0, 512)]), Ok((3, 65027)))]
// bf16 halves the element size: the pitch is 1024 elements.
#[case(ap(Dtype::Bfloat16, 0, &[(1024, 128), (1, 1024)]), Ok((0, 131071)))]
// One element past the end.
#[case(ap(Dtype::Float32, 1, &[(512, 128), (1, 512)]),
       Err(ExtentError::OutOfBounds { lowest: 1, highest: 65536, limit: 65536 }))]
// Below the start.
#[case(ap(Dtype::Float32, 0, &[(512, 2), (-1, 2)]),
       Err(ExtentError::OutOfBounds { lowest: -1, highest: 512, limit: 65536 }))]
// step * (num - 1) overflows at level 1.
#[case(ap(Dtype::Float32, 0, &[(512, 2), (1 << 40, 1 << 40)]), Err(ExtentError::Overflow { dim: 1 }))]
fn extents(#[case] a: AccessPattern, #[case] want: Result<(i64, i64), ExtentError>) {
    let size = a.dtype.size();
    assert_eq!(static_extent(&a, &sb(128, 2048), size), want);
}

#[test]
fn dram_extent_is_flat() {
    let mut loc = sb(1, 256);
    loc.mem_type = MemoryType::Dram;
    // 64 fp32 in 256 bytes, even though there is one "partition".
    assert_eq!(static_extent(&ap(Dtype::Float32, 0, &[(8, 8), (1, 8)]), &loc, 4), Ok((0, 63)));
}

fn one_scalar_program(const0: &str) -> String {
    format!(
        r#"{{"functions":[{{"name":"f","allocations":[
            {{"name":"s","kind":"Internal","dtype":"float32","memorylocations":[
              {{"name":"t","type":16,"dims":[1,4]}}]}}],
          "blocks":[{{"opcode":"TensorScalar","name":"i","op0":"add","const0":{const0},
            "ins":[{{"kind":"physical_ap","memref":"t","dtype":"float32","ap":[{{"step":1,"num":1}},[1,1]]}}],
            "outs":[{{"kind":"physical_ap","memref":"t","memsetref":"s","dtype":"float32","ap":[[1,1],[1,1]]}}]}}]}}]}}"#
    )
}

fn const0_of(p: &Program) -> F32 {
    let mut c = None;
    p.functions[0].for_each_instruction(&mut |i| {
        if let Op::TensorScalar(t) = &i.op {
            c = Some(t.const0);
        }
    });
    c.unwrap()
}

#[rstest]
#[case("\"nan\"", 0x7FC0_0000, "\"nan\"")]
#[case("\"-inf\"", 0xFF80_0000, "\"-inf\"")]
#[case("\"inf\"", 0x7F80_0000, "\"inf\"")]
#[case("-0.0", 0x8000_0000, "-0.0")]
#[case("0.1", 0x3DCC_CCCD, "0.1")]
#[case("16777217", 0x4B80_0000, "16777216.0")] // rounds to nearest fp32 on load
#[case("1e39", 0x7F80_0000, "\"inf\"")]
fn fp32_fields_load_and_write(#[case] text: &str, #[case] bits: u32, #[case] written: &str) {
    let p = json::load_str(&one_scalar_program(text)).unwrap();
    assert_eq!(const0_of(&p), F32(bits), "loading {text}");
    let out = json::to_json_string(&p);
    assert!(out.contains(&format!("\"const0\": {written}")), "writing {text}: {out}");
    assert_eq!(json::load_str(&out).unwrap(), p);
}

#[test]
fn defaults_and_tolerance() {
    let p = json::load_str(&one_scalar_program("1")).unwrap();
    assert_eq!(p.arch, Arch::Gen3, "arch defaults to gen3");
    let f = &p.functions[0];
    assert_eq!(f.locations[0].mem_type, MemoryType::Sb, "memory type by bit value");
    assert_eq!(f.body.len(), 1, "a bare instruction is a function body entry");
    validate(&p, &ValidateOptions::default()).unwrap();
}

#[test]
fn memory_cap_is_configurable() {
    let p = json::load_str(&one_scalar_program("1")).unwrap();
    let tiny = ValidateOptions { memory_cap_bytes: 3, ..ValidateOptions::default() };
    let d = validate(&p, &tiny).unwrap_err();
    assert_eq!(d.0[0].kind, ErrorKind::MemoryCap);
}
