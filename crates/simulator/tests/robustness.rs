//! The bad-input catalogue of docs/robustness.md, one row per class: the `birsim` binary is run
//! on a hostile program, `.npy` file, argument or path, and must answer with the documented exit
//! code (0 ok, 1 the program faulted, 2 bad input or usage, 3 a birsim bug — never 101 or 134),
//! a message naming the problem, no panic, and no output file touched when it fails.
//!
//! Expected exit codes come from the CLI's documented contract (`birsim --help`, README), and the
//! `.npy` files are written byte by byte here (the NumPy format spec), not by our writer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rstest::rstest;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sub_one").join(file)
}

/// A hand-written `.npy` file: version, header dict text (padded to 64 bytes), data bytes.
fn npy_v(version: u8, dict: &str, data: usize) -> Vec<u8> {
    let pre = if version == 1 { 10 } else { 12 };
    let mut h = dict.as_bytes().to_vec();
    while !(pre + h.len() + 1).is_multiple_of(64) {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut f = b"\x93NUMPY".to_vec();
    f.extend_from_slice(&[version, 0]);
    if version == 1 {
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        f.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    f.extend_from_slice(&h);
    f.extend(std::iter::repeat_n(0u8, data));
    f
}

fn dict(descr: &str, shape: &str) -> String {
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
}

/// The example's input size: 128 × 512 fp32.
const A_BYTES: usize = 128 * 512 * 4;

/// Every fixture file, written once per test process.
fn fixtures() -> &'static Path {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("birsim-robust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("dir")).unwrap();
        let prog = std::fs::read_to_string(example("program.json")).unwrap();
        let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
        w("prog.json", prog.as_bytes());
        w("a.npy", &std::fs::read(example("a.npy")).unwrap());
        // Programs: the example with one edit each.
        let edit = |name: &str, from: &str, to: &str| {
            assert!(prog.contains(from), "{from}");
            w(name, prog.replacen(from, to, 1).as_bytes());
        };
        edit("const_nan.json", "\"const0\":1.0", "\"const0\":NaN");
        edit("const_inf.json", "\"const0\":1.0", "\"const0\":Infinity");
        edit("const_1e999.json", "\"const0\":1.0", "\"const0\":1e999");
        edit("const_neg_zero.json", "\"const0\":1.0", "\"const0\":-0.0");
        edit("const_string.json", "\"const0\":1.0", "\"const0\":\"1.0\"");
        edit("const_null.json", "\"const0\":1.0", "\"const0\":null");
        edit("const_array.json", "\"const0\":1.0", "\"const0\":[1.0]");
        edit("dup_key.json", "\"op0\":\"subtract\"", "\"op0\":\"subtract\",\"op0\":\"frobnicate\"");
        edit("dup_key_same.json", "\"op0\":\"subtract\"", "\"op0\":\"subtract\",\"op0\":\"subtract\"");
        edit("unknown_opcode.json", "\"opcode\":\"TensorScalar\"", "\"opcode\":\"TensorScalarX\"");
        edit("opcode_number.json", "\"opcode\":\"TensorScalar\"", "\"opcode\":7");
        edit("opcode_lowercase.json", "\"opcode\":\"TensorScalar\"", "\"opcode\":\"tensorscalar\"");
        edit("unknown_dtype.json", "\"dtype\":\"float32\",\"partition_dim\"", "\"dtype\":\"float128\",\"partition_dim\"");
        edit("unknown_engine.json", "\"engine\":\"Unassigned\",\n    \"op0\"", "\"engine\":\"Warp\",\n    \"op0\"");
        edit("unknown_op0.json", "\"op0\":\"subtract\"", "\"op0\":\"frobnicate\"");
        edit("op0_number.json", "\"op0\":\"subtract\"", "\"op0\":1");
        edit("unknown_loc_type.json", "\"type\":\"SB\"", "\"type\":\"L3\"");
        edit("unknown_kind.json", "\"kind\":\"Internal\"", "\"kind\":\"Secret\"");
        edit("operand_kind.json", "\"kind\":\"physical_ap\"", "\"kind\":\"quantum_ap\"");
        edit("memref_missing.json", "\"memref\":\"a_tile\"", "\"memref\":\"nowhere\"");
        edit("reverse0_string.json", "\"reverse0\":false", "\"reverse0\":\"no\"");
        edit("reverse0_number.json", "\"reverse0\":false", "\"reverse0\":0");
        edit("reverse0_two.json", "\"reverse0\":false", "\"reverse0\":2");
        edit("const_nan_string.json", "\"const0\":1.0", "\"const0\":\"nan\"");
        let ap = "\"ap\":[[512,128],[1,512]]}],\n    \"outs\"";
        let with_ap = |name: &str, pairs: &str| edit(name, ap, &format!("\"ap\":{pairs}}}],\n    \"outs\""));
        with_ap("num_zero.json", "[[512,128],[1,0]]");
        with_ap("num_minus_one.json", "[[512,128],[1,-1]]");
        with_ap("num_2_62.json", "[[512,128],[1,4611686018427387904]]");
        with_ap("num_2_64.json", "[[512,128],[1,18446744073709551616]]");
        with_ap("num_float.json", "[[512,128],[1,512.5]]");
        with_ap("num_string.json", "[[512,128],[1,\"512\"]]");
        with_ap("step_num_overflow.json", "[[512,128],[4611686018427387904,4]]");
        with_ap("step_i64_min.json", "[[512,128],[-9223372036854775808,2]]");
        with_ap("step_zero_num_2_40.json", "[[512,128],[0,1099511627776]]");
        with_ap("ap_empty.json", "[]");
        with_ap("ap_rank_seven.json", "[[0,1],[0,1],[0,1],[0,1],[0,1],[512,128],[1,512]]");
        with_ap("ap_pair_one.json", "[[512,128],[1]]");
        with_ap("ap_pair_three.json", "[[512,128],[1,512,1]]");
        with_ap("ap_not_array.json", "\"row-major\"");
        with_ap("ap_partition_past.json", "[[512,129],[1,512]]");
        with_ap("ap_free_past.json", "[[512,128],[1,513]]");
        with_ap("ap_negative_step.json", "[[512,128],[-1,512]]");
        edit("offset_past.json", "\"offset\":0,\"ap\":[[512,128],[1,512]]}],\n    \"outs\"", "\"offset\":2048,\"ap\":[[512,128],[1,512]]}],\n    \"outs\"");
        edit("offset_negative.json", "\"offset\":0,\"ap\":[[512,128],[1,512]]}],\n    \"outs\"", "\"offset\":-1,\"ap\":[[512,128],[1,512]]}],\n    \"outs\"");
        edit("offset_i64_max.json", "\"offset\":0,\"ap\":[[512,128],[1,512]]}],\n    \"outs\"", "\"offset\":9223372036854775807,\"ap\":[[512,128],[1,512]]}],\n    \"outs\"");
        edit("dims_negative.json", "\"dims\":[128,2048],\"bank\":0,\"base\":0,\"allocated\":false}]},\n   {\"Skind\":\"memory_location_set\",\"name\":\"b_tile_set\"", "\"dims\":[128,-2048],\"bank\":0,\"base\":0,\"allocated\":false}]},\n   {\"Skind\":\"memory_location_set\",\"name\":\"b_tile_set\"");
        edit("dims_huge.json", "\"dims\":[128,2048],\"bank\":0,\"base\":0,\"allocated\":false}]},\n   {\"Skind\":\"memory_location_set\",\"name\":\"b_tile_set\"", "\"dims\":[128,9223372036854775807],\"bank\":0,\"base\":0,\"allocated\":false}]},\n   {\"Skind\":\"memory_location_set\",\"name\":\"b_tile_set\"");
        edit("partitions_129.json", "\"dims\":[128,2048],\"bank\":0,\"base\":0,\"allocated\":false}]},\n   {\"Skind\":\"memory_location_set\",\"name\":\"b_tile_set\"", "\"dims\":[129,2048],\"bank\":0,\"base\":0,\"allocated\":false}]},\n   {\"Skind\":\"memory_location_set\",\"name\":\"b_tile_set\"");
        edit("tensor_shape_overflow.json", "\"tensor_shape\":[128,512]", "\"tensor_shape\":[4294967296,4294967296]");
        edit("tensor_shape_negative.json", "\"tensor_shape\":[128,512]", "\"tensor_shape\":[-128,512]");
        edit("tensor_shape_past.json", "\"tensor_shape\":[128,512]", "\"tensor_shape\":[128,1024]");
        edit("dup_allocation.json", "\"name\":\"b_tile_set\"", "\"name\":\"a_tile_set\"");
        edit("dup_location.json", "\"name\":\"b_tile\",\"type\":\"SB\"", "\"name\":\"a_tile\",\"type\":\"SB\"");
        edit("arch_unknown.json", "\"arch\":\"gen3\"", "\"arch\":\"gen99\"");
        edit("version_string.json", "\"version\":2", "\"version\":\"two\"");
        edit("functions_object.json", "\"functions\":[", "\"functions\":{\"f\":[");
        edit("name_long.json", "\"name\":\"i1\"", &format!("\"name\":\"{}\"", "n".repeat(1 << 20)));
        edit("name_nul.json", "\"name\":\"i1\"", "\"name\":\"i\\u0000x\"");
        edit("name_lone_surrogate.json", "\"name\":\"i1\"", "\"name\":\"\\ud800\"");
        edit("name_control_char.json", "\"name\":\"i1\"", "\"name\":\"i\u{1}1\"");
        edit("ins_missing.json", "\"reverse1\":false,\n    \"ins\":", "\"reverse1\":false,\n    \"ins_\":");
        edit("ins_not_array.json", "\"reverse1\":false,\n    \"ins\":[", "\"reverse1\":false,\n    \"ins\":{\"x\":[");
        edit("extra_key.json", "\"op0\":\"subtract\"", "\"op0\":\"subtract\",\"frobnicate\":[1,2,3]");
        edit("deep_attribute.json", "\"attributes\":{\"neuron_core_id\":0}", &format!("\"attributes\":{}{}", "[".repeat(100_000), "]".repeat(100_000)));
        edit("block_empty.json", "\"blocks\":[{\"name\":\"Block1\"", "\"blocks\":[{\"name\":\"Empty\",\"instructions\":[]},{\"name\":\"Block1\"");
        w("empty.json", b"");
        w("whitespace.json", b"  \n\t ");
        w("null.json", b"null");
        w("number.json", b"42");
        w("string.json", b"\"program\"");
        w("array.json", b"[]");
        w("object.json", b"{}");
        w("truncated.json", &prog.as_bytes()[..prog.len() / 2]);
        w("trailing_garbage.json", format!("{prog}x").as_bytes());
        w("two_objects.json", format!("{prog}{prog}").as_bytes());
        w("not_utf8.json", b"\xff\xfe{\"functions\":[]}");
        w("bom.json", format!("\u{feff}{prog}").as_bytes());
        let utf16: Vec<u8> = prog.encode_utf16().flat_map(u16::to_le_bytes).collect();
        w("utf16.json", &utf16);
        w("nested_arrays.json", format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).as_bytes());
        w("nested_objects.json", "{\"a\":".repeat(100_000).as_bytes());
        w("comment.json", format!("// a kernel\n{prog}").as_bytes());
        w("single_quotes.json", prog.replace('"', "'").as_bytes());
        w("nul_bytes.json", &[0u8; 64]);
        // .npy inputs.
        let a = dict("<f4", "(128, 512)");
        w("n_empty.npy", b"");
        w("n_short.npy", b"\x93NUM");
        w("n_magic.npy", &npy_v(1, &a, A_BYTES)[..].iter().enumerate().map(|(k, b)| if k == 1 { b'X' } else { *b }).collect::<Vec<_>>());
        w("n_version0.npy", &{
            let mut f = npy_v(1, &a, A_BYTES);
            f[6] = 0;
            f
        });
        w("n_version4.npy", &{
            let mut f = npy_v(1, &a, A_BYTES);
            f[6] = 4;
            f
        });
        w("n_v2.npy", &npy_v(2, &a, A_BYTES));
        w("n_v3.npy", &npy_v(3, &a, A_BYTES));
        w("n_header_past_eof.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr'");
        w("n_header_huge_v2.npy", b"\x93NUMPY\x02\x00\x00\x00\x00\x80{'descr'");
        w("n_header_not_utf8.npy", &npy_v(1, "{'descr': '\u{fffd}'}", 0).iter().map(|b| if *b == 0xEF { 0xFF } else { *b }).collect::<Vec<_>>());
        w("n_no_descr.npy", &npy_v(1, "{'fortran_order': False, 'shape': (128, 512), }", A_BYTES));
        w("n_no_shape.npy", &npy_v(1, "{'descr': '<f4', 'fortran_order': False, }", A_BYTES));
        w("n_no_fortran.npy", &npy_v(1, "{'descr': '<f4', 'shape': (128, 512), }", A_BYTES));
        w("n_descr_not_string.npy", &npy_v(1, &dict("<f4", "(128, 512)").replace("'<f4'", "4"), A_BYTES));
        w("n_big_endian.npy", &npy_v(1, &dict(">f4", "(128, 512)"), A_BYTES));
        w("n_fortran.npy", &npy_v(1, &dict("<f4", "(128, 512)").replace("False", "True"), A_BYTES));
        w("n_shape_list.npy", &npy_v(1, &dict("<f4", "[128, 512]"), A_BYTES));
        w("n_shape_negative.npy", &npy_v(1, &dict("<f4", "(-128, 512)"), A_BYTES));
        w("n_shape_word.npy", &npy_v(1, &dict("<f4", "(rows, 512)"), A_BYTES));
        w("n_shape_scalar.npy", &npy_v(1, &dict("<f4", "()"), 4));
        w("n_shape_3d.npy", &npy_v(1, &dict("<f4", "(128, 512, 1)"), A_BYTES));
        w("n_shape_flat.npy", &npy_v(1, &dict("<f4", "(65536,)"), A_BYTES));
        w("n_shape_overflow.npy", &npy_v(1, &dict("<f4", "(4294967296, 4294967296)"), 0));
        w("n_shape_u64_overflow.npy", &npy_v(1, &dict("<f4", "(18446744073709551616, 1)"), 0));
        w("n_complex.npy", &npy_v(1, &dict("<c8", "(128, 512)"), A_BYTES * 2));
        w("n_object.npy", &npy_v(1, &dict("|O", "(128, 512)"), A_BYTES * 2));
        w("n_unicode.npy", &npy_v(1, &dict("<U1", "(128, 512)"), A_BYTES));
        w("n_struct.npy", &npy_v(1, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (128, 512), }", A_BYTES));
        w("n_f8.npy", &npy_v(1, &dict("<f8", "(128, 512)"), A_BYTES * 2));
        w("n_f2.npy", &npy_v(1, &dict("<f2", "(128, 512)"), A_BYTES / 2));
        w("n_i4.npy", &npy_v(1, &dict("<i4", "(128, 512)"), A_BYTES));
        w("n_native_order.npy", &npy_v(1, &dict("=f4", "(128, 512)"), A_BYTES));
        w("n_data_short.npy", &npy_v(1, &a, A_BYTES - 1));
        w("n_data_long.npy", &npy_v(1, &a, A_BYTES + 1));
        w("n_data_none.npy", &npy_v(1, &a, 0));
        w("n_header_only_garbage.npy", &npy_v(1, "garbage", A_BYTES));
        d
    })
}

/// A fresh folder per case for outputs.
fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = fixtures().join(format!("out{}", N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs birsim with `F/` replaced by the fixtures folder and `O/` by a fresh output folder;
/// returns (exit code, stderr, the output folder).
fn birsim(args: &[&str]) -> (i32, String, PathBuf) {
    let (f, o) = (fixtures(), scratch());
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("F/", &format!("{}/", f.display())).replace("O/", &format!("{}/", o.display())))
        .collect();
    let out =
        Command::new(env!("CARGO_BIN_EXE_birsim")).args(&args).env_remove("BIRSIM_THREADS").output().unwrap();
    let mut err = String::from_utf8_lossy(&out.stderr).into_owned();
    err.push_str(&String::from_utf8_lossy(&out.stdout));
    (out.status.code().unwrap_or(-1), err, o)
}

const RUN: &[&str] = &["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=O/b.npy"];

/// `RUN` with the program replaced.
fn with_program(p: &str) -> Vec<&str> {
    let mut v = RUN.to_vec();
    v[1] = p;
    v
}

/// `RUN` with the input file replaced.
fn with_input(i: &str) -> Vec<&str> {
    let mut v = RUN.to_vec();
    v[3] = i;
    v
}

/// One catalogue row: exit `code`, stderr containing `message`, no panic, and (unless it
/// succeeds) no output written.
fn check(args: &[&str], code: i32, message: &str) {
    let (got, err, out) = birsim(args);
    assert_eq!(got, code, "exit code of {args:?}; output:\n{err}");
    assert!(err.contains(message), "output of {args:?} should contain {message:?}:\n{err}");
    assert!(!err.contains("panicked") && !err.contains("please report"), "{err}");
    assert!(err.len() < 64 << 10, "{} bytes of diagnostics", err.len());
    if code != 0 {
        let left: Vec<_> =
            std::fs::read_dir(&out).unwrap().filter_map(Result::ok).map(|e| e.file_name()).collect();
        assert!(left.is_empty(), "a failed run left {left:?} behind");
    }
}

/// Programs: syntax, encoding, nesting and the JSON edge cases (docs/robustness.md §1).
#[rstest]
#[case::empty_file("F/empty.json", 2, "not valid JSON")]
#[case::whitespace_only("F/whitespace.json", 2, "not valid JSON")]
#[case::top_null("F/null.json", 2, "object")]
#[case::top_number("F/number.json", 2, "object")]
#[case::top_string("F/string.json", 2, "object")]
#[case::top_array("F/array.json", 2, "object")]
#[case::empty_object("F/object.json", 2, "functions")]
#[case::truncated("F/truncated.json", 2, "not valid JSON")]
#[case::trailing_garbage("F/trailing_garbage.json", 2, "not valid JSON")]
#[case::two_objects("F/two_objects.json", 2, "not valid JSON")]
#[case::not_utf8("F/not_utf8.json", 2, "not valid JSON")]
#[case::byte_order_mark("F/bom.json", 2, "not valid JSON")]
#[case::utf16("F/utf16.json", 2, "not valid JSON")]
#[case::nested_arrays_1e5("F/nested_arrays.json", 2, "not valid JSON")]
#[case::nested_objects_1e5("F/nested_objects.json", 2, "not valid JSON")]
#[case::nested_in_attribute_1e5("F/deep_attribute.json", 2, "not valid JSON")]
#[case::comment("F/comment.json", 2, "not valid JSON")]
#[case::single_quotes("F/single_quotes.json", 2, "not valid JSON")]
#[case::nul_bytes("F/nul_bytes.json", 2, "not valid JSON")]
#[case::nan_literal("F/const_nan.json", 2, "not valid JSON")]
#[case::infinity_literal("F/const_inf.json", 2, "not valid JSON")]
#[case::number_1e999("F/const_1e999.json", 2, "not valid JSON")]
#[case::lone_surrogate("F/name_lone_surrogate.json", 2, "not valid JSON")]
#[case::raw_control_char("F/name_control_char.json", 2, "not valid JSON")]
#[case::missing_file("F/nonexistent.json", 2, "cannot read")]
#[case::directory("F/dir", 2, "cannot read")]
fn program_syntax(#[case] program: &str, #[case] code: i32, #[case] message: &str) {
    check(&with_program(program), code, message);
}

/// Programs that parse but do not describe a valid kernel (docs/robustness.md §2).
#[rstest]
#[case::negative_zero_const("F/const_neg_zero.json", 0, "ok")]
#[case::const_string("F/const_string.json", 2, "const0")]
#[case::const_null_is_absent("F/const_null.json", 0, "ok")]
#[case::const_nan_string("F/const_nan_string.json", 0, "ok")]
#[case::const_array("F/const_array.json", 2, "const0")]
#[case::duplicate_key_last_wins_bad("F/dup_key.json", 2, "frobnicate")]
#[case::duplicate_key_same("F/dup_key_same.json", 0, "ok")]
#[case::unknown_opcode("F/unknown_opcode.json", 2, "TensorScalarX")]
#[case::opcode_number("F/opcode_number.json", 2, "opcode")]
#[case::opcode_wrong_case("F/opcode_lowercase.json", 2, "tensorscalar")]
#[case::unknown_dtype("F/unknown_dtype.json", 2, "float128")]
#[case::unknown_engine("F/unknown_engine.json", 2, "Warp")]
#[case::unknown_alu_op("F/unknown_op0.json", 2, "frobnicate")]
#[case::alu_op_number("F/op0_number.json", 2, "op0")]
#[case::unknown_location_type("F/unknown_loc_type.json", 2, "L3")]
#[case::unknown_tensor_kind("F/unknown_kind.json", 2, "Secret")]
#[case::unknown_operand_kind("F/operand_kind.json", 2, "quantum_ap")]
#[case::unresolved_memref("F/memref_missing.json", 2, "nowhere")]
#[case::flag_string("F/reverse0_string.json", 2, "reverse0")]
#[case::flag_as_0_or_1("F/reverse0_number.json", 0, "ok")]
#[case::flag_as_2("F/reverse0_two.json", 2, "reverse0")]
#[case::num_zero("F/num_zero.json", 2, "num")]
#[case::num_minus_one("F/num_minus_one.json", 2, "num")]
#[case::num_2_62("F/num_2_62.json", 2, "ins[0]")]
#[case::num_past_i64("F/num_2_64.json", 2, "ap")]
#[case::num_fractional("F/num_float.json", 2, "ap")]
#[case::num_string("F/num_string.json", 2, "ap")]
#[case::step_num_overflow("F/step_num_overflow.json", 2, "ins[0]")]
#[case::step_i64_min("F/step_i64_min.json", 2, "ins[0]")]
#[case::step_zero_num_2_40("F/step_zero_num_2_40.json", 2, "ins[0]")]
#[case::ap_no_levels("F/ap_empty.json", 2, "ins[0]")]
#[case::ap_seven_levels("F/ap_rank_seven.json", 2, "ins[0]")]
#[case::ap_pair_of_one("F/ap_pair_one.json", 2, "ap")]
#[case::ap_pair_of_three("F/ap_pair_three.json", 2, "ap")]
#[case::ap_not_array("F/ap_not_array.json", 2, "ap")]
#[case::ap_partition_past("F/ap_partition_past.json", 2, "ins[0]")]
#[case::ap_free_past("F/ap_free_past.json", 2, "ins[0]")]
#[case::ap_negative_step_below_zero("F/ap_negative_step.json", 2, "ins[0]")]
#[case::offset_past_location("F/offset_past.json", 2, "ins[0]")]
#[case::offset_negative("F/offset_negative.json", 2, "ins[0]")]
#[case::offset_i64_max("F/offset_i64_max.json", 2, "ins[0]")]
#[case::dims_negative("F/dims_negative.json", 2, "dims")]
#[case::dims_huge("F/dims_huge.json", 2, "a_tile")]
#[case::partitions_129("F/partitions_129.json", 2, "a_tile")]
#[case::tensor_shape_overflow("F/tensor_shape_overflow.json", 2, "tensor_shape")]
#[case::tensor_shape_negative("F/tensor_shape_negative.json", 2, "tensor_shape")]
#[case::tensor_shape_past_location("F/tensor_shape_past.json", 2, "tensor_shape")]
#[case::duplicate_allocation("F/dup_allocation.json", 2, "a_tile_set")]
#[case::duplicate_location("F/dup_location.json", 2, "a_tile")]
#[case::unknown_arch("F/arch_unknown.json", 2, "gen99")]
#[case::version_string("F/version_string.json", 2, "version")]
#[case::functions_object("F/functions_object.json", 2, "functions")]
#[case::name_1_mib("F/name_long.json", 0, "ok")]
#[case::name_with_nul("F/name_nul.json", 0, "ok")]
#[case::ins_missing("F/ins_missing.json", 2, "ins")]
#[case::ins_not_array("F/ins_not_array.json", 2, "ins")]
#[case::unknown_key_ignored("F/extra_key.json", 0, "ok")]
#[case::empty_block("F/block_empty.json", 0, "ok")]
fn program_semantics(#[case] program: &str, #[case] code: i32, #[case] message: &str) {
    check(&with_program(program), code, message);
}

/// `.npy` inputs of every kind (docs/robustness.md §3).
#[rstest]
#[case::empty("a=F/n_empty.npy", 2, "not an .npy file")]
#[case::shorter_than_magic("a=F/n_short.npy", 2, "not an .npy file")]
#[case::bad_magic("a=F/n_magic.npy", 2, "not an .npy file")]
#[case::version_0("a=F/n_version0.npy", 2, "not an .npy file")]
#[case::version_4("a=F/n_version4.npy", 2, "not an .npy file")]
#[case::version_2_header("a=F/n_v2.npy", 0, "ok")]
#[case::version_3_header("a=F/n_v3.npy", 0, "ok")]
#[case::header_past_eof("a=F/n_header_past_eof.npy", 2, "truncated")]
#[case::header_2_gib("a=F/n_header_huge_v2.npy", 2, "implausible")]
#[case::header_not_utf8("a=F/n_header_not_utf8.npy", 2, "UTF-8")]
#[case::header_garbage("a=F/n_header_only_garbage.npy", 2, "malformed .npy header")]
#[case::no_descr("a=F/n_no_descr.npy", 2, "no 'descr'")]
#[case::no_shape("a=F/n_no_shape.npy", 2, "no 'shape'")]
#[case::no_fortran_order("a=F/n_no_fortran.npy", 2, "fortran_order")]
#[case::descr_not_string("a=F/n_descr_not_string.npy", 2, "descr is not a string")]
#[case::big_endian("a=F/n_big_endian.npy", 2, "big-endian")]
#[case::fortran_order("a=F/n_fortran.npy", 2, "Fortran")]
#[case::shape_list("a=F/n_shape_list.npy", 2, "shape is not a tuple")]
#[case::shape_negative("a=F/n_shape_negative.npy", 2, "bad dimension")]
#[case::shape_word("a=F/n_shape_word.npy", 2, "bad dimension")]
#[case::shape_0d("a=F/n_shape_scalar.npy", 2, "shape ()")]
#[case::shape_3d("a=F/n_shape_3d.npy", 2, "shape (128, 512, 1)")]
#[case::shape_flat("a=F/n_shape_flat.npy", 2, "shape (65536)")]
#[case::shape_product_overflow("a=F/n_shape_overflow.npy", 2, "shape (4294967296, 4294967296)")]
#[case::shape_past_u64("a=F/n_shape_u64_overflow.npy", 2, "bad dimension")]
#[case::complex_dtype("a=F/n_complex.npy", 2, "unsupported dtype")]
#[case::object_dtype("a=F/n_object.npy", 2, "unsupported dtype")]
#[case::unicode_dtype("a=F/n_unicode.npy", 2, "unsupported dtype")]
#[case::structured_dtype("a=F/n_struct.npy", 2, "descr is not a string")]
#[case::float64_for_float32("a=F/n_f8.npy", 2, "needs <f4")]
#[case::float16_for_float32("a=F/n_f2.npy", 2, "needs <f4")]
#[case::int32_for_float32("a=F/n_i4.npy", 2, "needs <f4")]
#[case::native_byte_order("a=F/n_native_order.npy", 0, "ok")]
#[case::data_one_byte_short("a=F/n_data_short.npy", 2, "data bytes")]
#[case::data_one_byte_long("a=F/n_data_long.npy", 2, "data bytes")]
#[case::data_missing("a=F/n_data_none.npy", 2, "data bytes")]
#[case::file_missing("a=F/nonexistent.npy", 2, "cannot read")]
#[case::file_is_directory("a=F/dir", 2, "--input a")]
#[case::no_equals_sign("F/a.npy", 2, "expected NAME=FILE.npy")]
#[case::empty_name("=F/a.npy", 2, "--input")]
#[case::unknown_name("zzz=F/a.npy", 2, "'zzz'")]
#[case::name_of_a_location("a=F/a.npy", 0, "ok")]
#[case::name_of_an_output("b=F/a.npy", 2, "no --input for 'a_set'")]
fn npy_inputs(#[case] input: &str, #[case] code: i32, #[case] message: &str) {
    check(&with_input(input), code, message);
}

/// Arguments, flags and paths (docs/robustness.md §4).
#[rstest]
#[case::no_arguments(&[], 2, "Usage: birsim <COMMAND>")]
#[case::unknown_command(&["frobnicate"], 2, "unrecognized subcommand 'frobnicate'")]
#[case::help(&["--help"], 0, "Exit codes")]
#[case::version(&["--version"], 0, "birsim")]
#[case::run_without_program(&["run"], 2, "required arguments were not provided:\n  <PROGRAM.json>")]
#[case::two_programs(&["run", "F/prog.json", "F/prog.json"], 2, "prog.json' found")]
#[case::unknown_option(&["run", "F/prog.json", "--frobnicate"], 2, "unexpected argument '--frobnicate' found")]
#[case::single_dash_option(&["run", "F/prog.json", "-o"], 2, "unexpected argument '-o' found")]
#[case::input_without_value(&["run", "F/prog.json", "--input"], 2, "a value is required for '--input <NAME=FILE.npy>'")]
#[case::output_without_equals(&["run", "F/prog.json", "--output", "O/b.npy"], 2, "expected NAME=FILE.npy")]
#[case::threads_zero(&["run", "F/prog.json", "--threads", "0"], 2, "1 or more")]
#[case::threads_negative(&["run", "F/prog.json", "--threads", "-1"], 2, "1 or more")]
#[case::threads_word(&["run", "F/prog.json", "--threads", "many"], 2, "1 or more")]
#[case::threads_past_u64(&["run", "F/prog.json", "--threads", "99999999999999999999999"], 2, "1 or more")]
#[case::memory_cap_word(&["run", "F/prog.json", "--memory-cap", "4G"], 2, "expected a number of bytes")]
#[case::memory_cap_negative(&["run", "F/prog.json", "--memory-cap", "-1"], 2, "expected a number of bytes")]
#[case::memory_cap_below_locations(&["validate", "F/prog.json", "--memory-cap", "100000"], 2, "[memory-cap]")]
#[case::max_instructions_word(&["run", "F/prog.json", "--max-instructions", "lots"], 2, "expected a number")]
#[case::max_instructions_too_few(&["validate", "F/prog.json", "--max-instructions", "2"], 2, "budget of 2")]
#[case::profile_unknown(&["run", "F/prog.json", "--profile", "fast"], 2, "[possible values: refsim, nki]")]
#[case::fp8_saturate_unknown(&["run", "F/prog.json", "--fp8-saturate", "maybe"], 2, "[possible values: on, off]")]
#[case::tsc_reverse_unknown(&["run", "F/prog.json", "--tsc-reverse", "sideways"], 2, "sideways' for '--tsc-reverse <WHAT>': expected direction or operands")]
#[case::stats_with_value(&["run", "F/prog.json", "--stats=yes"], 2, "unexpected value 'yes' for '--stats'")]
#[case::allow_uninit_with_value(&["run", "F/prog.json", "--allow-uninit-inputs=1"], 2, "unexpected value '1' for '--allow-uninit-inputs'")]
#[case::run_only_option_on_validate(&["validate", "F/prog.json", "--trace", "O/t"], 2, "unexpected argument '--trace' found")]
#[case::option_on_dump(&["dump", "F/prog.json", "--stats"], 2, "unexpected argument '--stats' found")]
#[case::missing_input(&["run", "F/prog.json", "--output", "b=O/b.npy"], 2, "no --input for 'a_set'")]
#[case::uninit_inputs_allowed(&["run", "F/prog.json", "--allow-uninit-inputs", "--output", "b=O/b.npy"], 0, "ok")]
#[case::output_unknown_name(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "zzz=O/z.npy"], 2, "--output zzz")]
#[case::output_missing_folder(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=O/no/b.npy"], 2, "does not exist")]
#[case::output_is_directory(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=F/dir"], 2, "not a regular file")]
#[case::output_is_device(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=/dev/null"], 2, "not a regular file")]
#[case::output_empty_path(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b="], 2, "not a file path")]
#[case::output_root(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=/"], 2, "not a file path")]
#[case::output_dot_dot(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=O/.."], 2, "not a file path")]
#[case::trace_empty_path(&["run", "F/prog.json", "--input", "a=F/a.npy", "--trace", ""], 2, "not a file path")]
#[case::out_dir_missing(&["run", "F/prog.json", "--input", "a=F/a.npy", "--out-dir", "O/none"], 2, "not a directory")]
#[case::out_dir_is_file(&["run", "F/prog.json", "--input", "a=F/a.npy", "--out-dir", "F/prog.json"], 2, "not a directory")]
#[case::trace_is_directory(&["run", "F/prog.json", "--input", "a=F/a.npy", "--trace", "F/dir"], 2, "not a regular file")]
#[case::trace_missing_folder(&["run", "F/prog.json", "--input", "a=F/a.npy", "--trace", "O/no/t.jsonl"], 2, "does not exist")]
#[case::output_twice_same_path(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=O/b.npy", "--output", "b=O/b.npy"], 2, "cannot create a file")]
#[case::input_given_twice(&["run", "F/prog.json", "--input", "a=F/a.npy", "--input", "a=F/a.npy", "--output", "b=O/b.npy"], 0, "ok")]
#[case::trace_and_output_same_path(&["run", "F/prog.json", "--input", "a=F/a.npy", "--output", "b=O/b.npy", "--trace", "O/b.npy"], 2, "cannot create a file")]
#[case::program_is_device(&["validate", "/dev/null"], 2, "not valid JSON")]
#[case::dump_ok(&["dump", "F/prog.json"], 0, "TensorScalar")]
#[case::program_from_dev_zero(&["validate", "/dev/zero", "--memory-cap", "1000000"], 2, "larger than the memory cap")]
#[case::program_larger_than_cap(&["validate", "F/prog.json", "--memory-cap", "1000"], 2, "larger than the memory cap")]
#[case::validate_ok(&["validate", "F/prog.json"], 0, "ok (1 function(s), 3 instruction(s))")]
#[case::validate_bad(&["validate", "F/unknown_op0.json"], 2, "frobnicate")]
#[case::dump_bad(&["dump", "F/truncated.json"], 2, "not valid JSON")]
fn arguments(#[case] args: &[&str], #[case] code: i32, #[case] message: &str) {
    check(args, code, message);
}

/// Defect 11 (first half): a panic — any remaining bug — exits 3 with a one-line report, not
/// Rust's 101 and a backtrace (debug builds panic on request through `BIRSIM_TEST_PANIC`).
#[cfg(debug_assertions)]
#[test]
fn a_panic_exits_3_with_one_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_birsim"))
        .arg("--version")
        .env("BIRSIM_TEST_PANIC", "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.starts_with("birsim: internal error (please report): panic at "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Defect 5: a streamed trace keeps nothing in memory — 100,000 executed NoOps reach the sink
/// one by one and the simulator holds no entry (it used to keep ~190 bytes per instruction).
#[test]
fn trace_memory_is_bounded_when_streamed() {
    let text = r#"{"functions":[{"name":"f","allocations":[],"blocks":[{"name":"b","instructions":[
        {"opcode":"Loop","name":"l","LoopAxis":{"name":"i","lb":0,"ub":100000},
         "blocks":[{"name":"b1","instructions":[{"opcode":"NoOp","name":"n","ins":[],"outs":[]}]}]}]}]}]}"#;
    let p = bir_ir::json::load_str(text).unwrap();
    let v = bir_ir::validate(&p, &bir_ir::ValidateOptions::default()).unwrap();
    let mut sim = simulator::Simulator::new(v, numerics::Profile::refsim());
    let seen = std::cell::Cell::new(0u64);
    sim.enable_trace_sink(|e| {
        assert_eq!(e.index, seen.get(), "entries arrive in order, one per instruction");
        seen.set(seen.get() + 1);
    });
    assert_eq!(sim.run().unwrap(), simulator::Outcome::Finished);
    assert!(sim.trace().is_empty(), "a streamed trace is not kept");
    drop(sim);
    assert_eq!(seen.get(), 100_000);
}

/// The issue 26 programs: the example with one edit, written on first use.
fn bounded_fixture(name: &str, make: impl FnOnce() -> Vec<u8>) -> String {
    let path = fixtures().join(name);
    if !path.exists() {
        std::fs::write(&path, make()).unwrap();
    }
    format!("F/{name}")
}

/// The example's program text.
fn example_program() -> String {
    std::fs::read_to_string(example("program.json")).unwrap()
}

/// Runs birsim under an address-space limit of `mib` MiB (`ulimit -v`), as `birsim` does.
fn birsim_within(mib: u64, args: &[&str]) -> (i32, String) {
    let f = fixtures();
    let args: Vec<String> = args.iter().map(|a| a.replace("F/", &format!("{}/", f.display()))).collect();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib << 10))
        .arg(env!("CARGO_BIN_EXE_birsim"))
        .args(&args)
        .env("BIRSIM_THREADS", "1")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Issue 26 row 1: `birsim diff` reads its traces a line at a time, and a line is at most
/// `--max-line` bytes (256 MiB by default): `/dev/zero`, which has no line end, is refused at the
/// limit instead of filling the machine (it grew past 6 GB), and within 1 GiB of address space.
#[test]
fn bounded_diff_of_dev_zero_stops_at_the_line_limit() {
    let o = scratch();
    let trace = o.join("a.jsonl");
    let t = trace.to_str().unwrap();
    let (code, err, _) = birsim(&["run", "F/prog.json", "--input", "a=F/a.npy", "--trace", t]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = birsim_within(1024, &["diff", t, "/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/dev/zero:1: the line is longer than 268435456 bytes"), "{err}");
    check(
        &["diff", t, "/dev/zero", "--max-line", "1000"],
        2,
        "/dev/zero:1: the line is longer than 1000 bytes",
    );
    check(&["diff", t, t, "--max-line", "100"], 2, ":1: the line is longer than 100 bytes");
    check(&["diff", t, t], 0, "");
}

/// Issue 26 row 2: `--expect` reads the header first and then exactly the data it promises, as
/// `--input` does: `/dev/zero` is refused at once (it grew past 7 GB), and so is a file with
/// more data than its header says.
#[test]
fn bounded_expect_from_dev_zero_is_refused_at_the_header() {
    let (code, err) =
        birsim_within(1024, &["run", "F/prog.json", "--input", "a=F/a.npy", "--expect", "b=/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--expect b: /dev/zero: not an .npy file"), "{err}");
    let long = bounded_fixture("expect_long.npy", || npy_v(1, &dict("<f4", "(128, 512)"), A_BYTES + 1));
    check(
        &["run", "F/prog.json", "--input", "a=F/a.npy", "--expect", &format!("b={long}")],
        2,
        "longer than the 262144 bytes its header promises",
    );
    let short = bounded_fixture("expect_short.npy", || npy_v(1, &dict("<f4", "(128, 512)"), A_BYTES - 1));
    check(
        &["run", "F/prog.json", "--input", "a=F/a.npy", "--expect", &format!("b={short}")],
        2,
        "has 262143 bytes; its header promises 262144",
    );
}

/// Issue 26 row 3: a 1.3 MB program whose instruction has a 1 MiB name and 2,000 bad operands
/// held 4.1 GB (each diagnostic copied the name); names in contexts are cut to 300 characters
/// and every diagnostic part to 1,200, so `validate`, `run`, `check` and `dump` stay within
/// 512 MiB of address space and print under 64 KiB.
#[test]
fn bounded_diagnostics_on_an_instruction_with_a_1_mib_name() {
    let p = bounded_fixture("name_errors.json", || {
        let ins = r#"{"kind":"physical_ap","memref":"nope","memsetref":"a_tile_set","dtype":"float32","offset":0,"ap":[[512,128],[1,512]]}"#;
        let many = vec![ins; 2000].join(",");
        let prog = example_program();
        let from = "\"name\":\"i1\"";
        assert!(prog.contains(from));
        let prog = prog.replacen(from, &format!("\"name\":\"{}\"", "n".repeat(1 << 20)), 1);
        let at = prog.find("\"opcode\":\"TensorScalar\"").unwrap();
        let ins_at = at + prog[at..].find("\"ins\":[").unwrap();
        let end = ins_at + prog[ins_at..].find("}],").unwrap() + 2;
        format!("{}\"ins\":[{many}]{}", &prog[..ins_at], &prog[end..]).into_bytes()
    });
    for cmd in ["validate", "run", "check", "dump"] {
        let mut args = vec![cmd, p.as_str()];
        if cmd == "run" {
            args.extend(["--input", "a=F/a.npy"]);
        }
        let (code, err) = birsim_within(512, &args);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("more characters)"), "{cmd}: {err}");
        assert!(err.contains("more problem(s)"), "{cmd}: {err}");
        assert!(err.len() < 64 << 10, "{cmd}: {} bytes", err.len());
    }
}

/// Issue 26 row 4: Memset Random on a step-0 AP keeps two buffers of 4 bytes per element (the
/// draws and their bytes); the per-operand check counted one. Every kernel's buffers now count
/// together against the memory cap as they are allocated: 2^24 elements (64 MiB a buffer) fault
/// under a 100 MiB cap and run under 200 MiB.
#[test]
fn bounded_memset_random_counts_all_its_buffers() {
    let p = bounded_fixture("memset_random.json", || {
        let loc = r#"{"Skind":"memory_location","name":"yt","type":"SB","addr":0,"dims":[1,8],"base":0,"bank":0,"allocated":false}"#;
        format!(
            r#"{{"arch":"gen3","version":2,"functions":[{{"name":"f","allocations":[
              {{"Skind":"memory_location_set","name":"yt","kind":"Internal","dtype":"uint32","tensor_shape":[1,1],"partition_dim":0,"memorylocations":[{loc}]}}],
              "blocks":[{{"name":"b","instructions":[{{"opcode":"Memset","name":"m","engine":"SP","ins":[],
              "outs":[{{"kind":"physical_ap","memref":"yt","memsetref":"yt","dtype":"uint32","offset":0,"ap":[[2,1],[0,16777216]]}}],"mode":"Random"}}]}}]}}]}}"#
        )
        .into_bytes()
    });
    check(
        &["run", &p, "--memory-cap", "104857600"],
        1,
        "this instruction's buffers would pass the memory cap of 104857600 bytes",
    );
    check(&["run", &p, "--memory-cap", "209715200"], 0, "ok");
}

/// Issue 26 row 5: an output whose `tensor_shape` has more than 64 dimensions (NumPy's limit)
/// was written as an `.npy` NumPy cannot load; it is refused before the run.
#[test]
fn bounded_an_output_of_65_dimensions_is_refused_before_the_run() {
    let p = bounded_fixture("dims65.json", || {
        let prog = example_program();
        let shape = format!("\"tensor_shape\":[128,512{}]", ",1".repeat(63));
        let b = prog.find("\"name\":\"b_set\"").unwrap();
        let at = b + prog[b..].find("\"tensor_shape\":[128,512]").unwrap();
        format!("{}{shape}{}", &prog[..at], &prog[at + "\"tensor_shape\":[128,512]".len()..]).into_bytes()
    });
    check(
        &["run", &p, "--input", "a=F/a.npy", "--output", "b=O/b.npy"],
        2,
        "--output b: 'b' has a tensor_shape of 65 dimensions; an .npy array has at most 64 (NumPy's limit)",
    );
}

/// Issue 26 row 6: a 2^32-trip NoOp loop ran for 254 s under the old default budget of 10^10;
/// the default is now 10^9 (about a minute of NoOps), so it is refused before it runs.
#[test]
fn bounded_a_2_32_trip_loop_is_refused_by_the_default_budget() {
    let p = bounded_fixture("noop_2_32.json", || {
        br#"{"functions":[{"name":"f","allocations":[],"blocks":[{"name":"b","instructions":[
          {"opcode":"Loop","name":"l","LoopAxis":{"name":"i","lb":0,"ub":4294967296},
           "blocks":[{"name":"b1","instructions":[{"opcode":"NoOp","name":"n","ins":[],"outs":[]}]}]}]}]}]}"#
            .to_vec()
    });
    check(
        &["run", &p],
        2,
        "the program would execute 4294967296 instructions (loop iterations counted), above the budget of 1000000000",
    );
    check(&["validate", &p, "--max-instructions", "4294967296"], 0, "ok");
}

/// Issue 26 row 7: whatever a message repeats is cut, with a count: a 10^6-dimension input
/// shape (a 3 MB line), an `.npy` shape of 300,000 dimensions, an option's value of 100,000
/// characters.
#[test]
fn bounded_long_shapes_and_values_are_cut_with_a_count() {
    let p = bounded_fixture("dims_1e6.json", || {
        let prog = example_program();
        let shape = format!("\"tensor_shape\":[128,512{}]", ",1".repeat(999_998));
        prog.replacen("\"tensor_shape\":[128,512]", &shape, 1).into_bytes()
    });
    check(
        &["run", &p, "--input", "a=F/a.npy", "--output", "b=O/b.npy"],
        2,
        "--input a: 'a' has a tensor_shape of 1000000 dimensions; an .npy array has at most 64",
    );
    let wide = bounded_fixture("wide.npy", || {
        npy_v(2, &dict("<f4", &format!("(128, 512{})", ", 1".repeat(299_998))), A_BYTES)
    });
    check(&with_input(&format!("a={wide}")), 2, "the array has shape (128, 512, 1, 1");
    check(&with_input(&format!("a={wide}")), 2, "…(300000 dimensions in all))");
    let value = "9".repeat(100_000);
    check(&["run", "F/prog.json", "--memory-cap", &value], 2, "more characters)");
    check(&["run", "F/prog.json", "--tsc-reverse", &value], 2, "more characters)");
    check(&["validate", "F/prog.json", "--max-instructions", &format!("x{value}")], 2, "more characters)");
}
