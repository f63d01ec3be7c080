"""Faults and bad input: a guest fault raises `birsim.Fault` with the typed cause's fields;
wrong dtypes, wrong shapes, non-contiguous arrays, unknown or missing names, bad options and
malformed programs raise `InputError` / `ProgramError` naming the tensor, and never crash the
interpreter."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

import birsim
from conftest import CONFORMANCE, copy_program

GATHER_OOB = CONFORMANCE / "indirect" / "gather_oob_fault"


def gather_inputs():
    return {n: np.load(GATHER_OOB / f"in_{n}.npy") for n in ("src", "idx", "y0")}


def test_fault_carries_the_typed_fields():
    # The case's own comment: "Gather index 20 >= 20 -> fault, nothing written" (seed 004
    # nc_n_gather, dst[p, k] = src[p, idx[p, k]] over a 20-column table). Its position and value
    # are read from the committed index file, not from birsim.
    inputs = gather_inputs()
    idx = inputs["idx"]
    (bad,) = np.flatnonzero(idx.reshape(-1) >= 20)
    with pytest.raises(birsim.Fault) as info:
        birsim.run(GATHER_OOB / "case.json", inputs, outputs=["y0_t"])
    f = info.value
    assert isinstance(f, Exception) and not isinstance(f, ValueError)
    assert f.kind == "out-of-bounds"
    assert f.cause == "indirect"
    assert f.error_kind == "out_of_bounds"
    assert f.instruction == "i3"
    assert f.opcode == "Gather"
    assert "instruction #3 'i3' (Gather)" in f.at
    assert f.slot == "ins[1]" and f.slot_side == "ins" and f.slot_index == 1
    assert f.position == bad
    assert f.value == int(idx.reshape(-1)[bad]) == 20
    assert f.bound == 20
    assert f.fields["position"] == f.position
    assert f.executed == 3  # the three Loads ran
    assert f.message in str(f) and "[out-of-bounds]" in str(f)
    # Nothing written: y0_t holds the loaded y0, as the committed expected output says.
    want = np.load(GATHER_OOB / "expected_y0_t.npy")
    np.testing.assert_array_equal(f.outputs["y0_t"].view(np.uint32), want.view(np.uint32))
    assert f.trace is None


def test_fault_with_trace_keeps_the_trace_so_far():
    with pytest.raises(birsim.Fault) as info:
        birsim.run(GATHER_OOB / "case.json", gather_inputs(), trace=True)
    assert [e["name"] for e in info.value.trace] == ["i0", "i1", "i2"]


def test_not_implemented_opcode_is_a_fault():
    # An opcode that loads and validates but does not run (README: "Every other opcode loads and
    # validates, and running it reports 'not implemented yet: <opcode>'"): a RegisterAlu on a
    # 64-bit register pair (docs/fidelity.md B3).
    reg = {"kind": "register_access", "dtype": "int32", "regref": "r"}
    program = {"functions": [{"name": "f", "allocations": [], "blocks": [
        {"opcode": "RegisterMove", "name": "mv", "engine": "Pool",
         "ins": [{"kind": "imm_value", "dtype": "int32", "value": 1}], "outs": [reg]},
        {"opcode": "RegisterAlu", "name": "wide", "engine": "Pool", "op": "add", "is_64bit": True,
         "ins": [reg, {"kind": "imm_value", "dtype": "int32", "value": 1}], "outs": [reg]}]}]}
    with pytest.raises(birsim.Fault) as info:
        birsim.run(json.dumps(program), {})
    assert info.value.kind == "not-implemented"
    assert info.value.cause in ("not_implemented", "opcode_not_implemented")
    assert info.value.feature


def prog():
    return copy_program("float32", 4, 4, 8)


def good():
    return np.zeros((4, 8), dtype=np.float32)


def raises_input(inputs, tensor, *parts, program=None, **kw):
    with pytest.raises(birsim.InputError) as info:
        birsim.run(program or prog(), inputs, **kw)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.tensor == tensor
    for p in parts:
        assert p in str(e), str(e)
    return e


def test_wrong_dtype_names_the_tensor_and_both_dtypes():
    raises_input({"x": good().astype(np.float64)}, "x", "'x'", "float32", "float64")


def test_same_width_wrong_float_format_is_refused():
    p8 = copy_program("float8_e4m3fn", 1, 4, 8)
    arr = np.zeros((4, 8), dtype=ml_dtypes.float8_e5m2)
    raises_input({"x": arr}, "x", "float8_e4m3fn", "float8_e5m2", program=p8)
    p16 = copy_program("float16", 2, 4, 8)
    raises_input({"x": np.zeros((4, 8), ml_dtypes.bfloat16)}, "x", "float16", "bfloat16", program=p16)


def test_signed_raw_bits_are_refused():
    p = copy_program("bfloat16", 2, 4, 8)
    raises_input({"x": np.zeros((4, 8), np.int16)}, "x", "bfloat16", "int16", program=p)


def test_big_endian_is_refused():
    raises_input({"x": good().astype(">f4")}, "x", "'x'", ">f4")


def test_wrong_shape_names_both_shapes():
    raises_input({"x": np.zeros((8, 4), np.float32)}, "x", "'x'", "(4, 8)", "(8, 4)")
    raises_input({"x": np.zeros(32, np.float32)}, "x", "(32,)")


def test_non_contiguous_is_refused():
    wide = np.zeros((4, 16), np.float32)
    raises_input({"x": wide[:, ::2]}, "x", "'x'", "C-contiguous", "ascontiguousarray")
    raises_input({"x": np.asfortranarray(good())}, "x", "C-contiguous")
    # The documented fix works.
    birsim.run(prog(), {"x": np.ascontiguousarray(wide[:, ::2])})


def test_not_an_array_is_refused():
    raises_input({"x": [[0.0] * 8] * 4}, "x", "numpy.ndarray", "list")


def test_unknown_input_name():
    raises_input({"x": good(), "nope": good()}, "nope", "'nope'", "x, xt, y")


def test_unknown_output_name():
    raises_input({"x": good()}, "nope", "'nope'", outputs=["nope"])


def test_missing_input_is_named_unless_allowed():
    raises_input({}, "x", "'x'", "allow_uninit_inputs")
    # The copy's read of the never-loaded input is reported (fidelity B10).
    with pytest.warns(RuntimeWarning, match=r"'load': ins\[0\] reads element 0 \(AP order\) of 'x', which nothing wrote"):
        out = birsim.run(prog(), {}, allow_uninit_inputs=True)
    # Uninitialised memory is 0xFF bytes (README, `--allow-uninit-inputs`).
    assert out["y"].view(np.uint32).tolist() == [[0xFFFFFFFF] * 8] * 4


def test_bad_options():
    raises_input({"x": good()}, None, "profile", "refsim or nki", profile="fast")
    raises_input({"x": good()}, None, "threads=0", threads=0)
    raises_input({"x": good()}, None, "oob", oob="ignore")
    raises_input({"x": good()}, None, "fp8_saturate", fp8_saturate="yes")
    with pytest.raises(TypeError, match="no_such_option"):
        birsim.run(prog(), {"x": good()}, no_such_option=1)


def test_simulator_options_share_the_cli_spelling_and_messages():
    # Names, values and error texts come from simulator::Options::set, as for `birsim run` and
    # the conformance cases' `option:` lines.
    raises_input({"x": good()}, None, "oob=ignore: expected fault or skip", oob="ignore")
    raises_input({"x": good()}, None, "tsc_reverse=x: expected direction or operands", tsc_reverse="x")
    raises_input({"x": good()}, None, "dma_block_in_stream=twice: expected skip or run", dma_block_in_stream="twice")
    raises_input({"x": good()}, None, "threads=0: expected a number of threads (1 or more)", threads=0)
    raises_input({"x": good()}, None, "memory_cap=-1: expected a number of bytes", memory_cap=-1)
    raises_input({"x": good()}, None, "max_instructions=-5: expected a number", max_instructions=-5)
    # A value of the wrong Python type is shown as its repr.
    raises_input({"x": good()}, None, "oob=3: expected fault or skip", oob=3)
    raises_input({"x": good()}, None, "threads='4': expected a number of threads", threads="4")
    raises_input({"x": good()}, None, "threads=True: expected a number of threads", threads=True)
    raises_input({"x": good()}, None, "memory_cap=1.5: expected a number of bytes", memory_cap=1.5)
    # Good values, NumPy integers included; None is the default.
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    for kw in (
        dict(oob="skip", tsc_reverse="operands", dma_block_in_stream="run"),
        dict(threads=np.int64(2), max_instructions=10, memory_cap=1 << 20),
        dict(oob=None, threads=None, memory_cap=None),
    ):
        np.testing.assert_array_equal(birsim.run(prog(), {"x": x}, **kw)["y"], x)
    # The budget reaches validation as on the CLI: 2 instructions do not fit in 1.
    with pytest.raises(birsim.ProgramError):
        birsim.run(prog(), {"x": x}, max_instructions=1)
    # One spelling: the conformance files' old `dma_block` is no keyword.
    with pytest.raises(TypeError, match="dma_block_in_stream"):
        birsim.run(prog(), {"x": x}, dma_block="run")


def test_malformed_json_is_a_program_error():
    with pytest.raises(birsim.ProgramError) as info:
        birsim.run('{"functions": [', {})
    e = info.value
    assert isinstance(e, birsim.InputError) and isinstance(e, ValueError)
    assert [d["kind"] for d in e.diagnostics] == ["syntax"]
    assert "line 1" in str(e)


def test_invalid_program_lists_every_problem():
    p = prog()
    block = p["functions"][0]["blocks"][0]["instructions"]
    block[0]["opcode"] = "NoSuchOpcode"
    block[1]["ins"][0]["memref"] = "missing"
    with pytest.raises(birsim.ProgramError) as info:
        birsim.run(p, {"x": good()})
    kinds = {d["kind"] for d in info.value.diagnostics}
    assert "unknown-opcode" in kinds and len(info.value.diagnostics) >= 2
    assert all(d["location"] for d in info.value.diagnostics)


def test_program_forms(tmp_path):
    p = prog()
    path = tmp_path / "p.json"
    path.write_text(json.dumps(p))
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    for form in (p, json.dumps(p), json.dumps(p).encode(), path, str(path), birsim.load(p)):
        np.testing.assert_array_equal(birsim.run(form, {"x": x})["y"], x)
    with pytest.raises(TypeError):
        birsim.run(42, {})


@pytest.mark.parametrize("what", ["absent.json", "folder"])
def test_unreadable_program_path_is_a_program_error(tmp_path, what):
    # A mistyped path or a folder is bad input (the CLI's exit 2), as the README promises:
    # ProgramError (an InputError, a ValueError) naming the file, the OSError as its cause.
    (tmp_path / "folder").mkdir()
    path = tmp_path / what
    for form in (path, str(path)):
        for call in (lambda: birsim.run(form, {}), lambda: birsim.check(form), lambda: birsim.load(form)):
            with pytest.raises(birsim.ProgramError) as info:
                call()
            e = info.value
            assert isinstance(e, birsim.InputError) and isinstance(e, ValueError)
            assert not isinstance(e, OSError)
            assert isinstance(e.__cause__, OSError)
            assert str(path) in str(e) and e.filename == str(path)
            assert e.diagnostics == []


def test_program_introspection():
    p = birsim.load(prog())
    assert p.input_names() == ["x"] and p.output_names() == ["y"]
    assert p.tensor("y") == ("float32", [4, 8], "ExternalOutput")
    assert ("xt", "Internal", "float32", [4, 8]) in p.allocations()
    with pytest.raises(birsim.InputError) as info:
        p.tensor("nope")
    assert info.value.tensor == "nope"


def test_trace_keys_and_values():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    tr = birsim.trace(prog(), {"x": x})
    assert [(e["index"], e["name"], e["opcode"]) for e in tr] == [(0, "load", "Load"), (1, "save", "Save")]
    assert all(e["bytes_written"] == 128 for e in tr)
    assert set(tr[0]) == {"index", "name", "opcode", "bytes_written", "checksums", "elapsed_ns", "regions"}
    # The Save's one output region: the 4 x 8 fp32 output, its checksum the write's (docs/trace.md).
    (region,) = tr[1]["regions"]
    assert (region["slot"], region["location"], region["dtype"]) == (0, "y", "float32")
    assert (region["partitions"], region["free"]) == (4, 8)
    assert region["checksum"] == tr[1]["checksums"][0]
    # FNV-1a 64 of the 128 bytes written (the public FNV-1a definition, computed here).
    h = 0xCBF29CE484222325
    for byte in x.tobytes():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    assert tr[1]["checksums"] == [f"fnv1a64:{h:016x}"]


def test_an_output_of_65_dimensions_is_refused_before_the_run():
    # Issue 26: NumPy holds at most 64 dimensions (NPY_MAXDIMS); an output allocation with 65
    # used to run and then fail in NumPy's reshape with a raw ValueError.
    prog = copy_program("float32", 4, 4, 8)
    y = prog["functions"][0]["allocations"][2]
    y["tensor_shape"] = [4, 8] + [1] * 63
    x = np.zeros((4, 8), dtype=np.float32)
    with pytest.raises(birsim.InputError) as info:
        birsim.run(json.dumps(prog), {"x": x})
    assert "'y' has a tensor_shape of 65 dimensions; an .npy array has at most 64" in str(info.value)


def ln_program() -> dict:
    """Ln over a [1, 4] fp32 tile: y = ln(x) (Activation, fidelity E6's valid range [2^-64, 2^64])."""
    tile = lambda m: {"kind": "physical_ap", "memref": m, "dtype": "float32", "offset": 0, "ap": [[4, 1], [1, 4]]}  # noqa: E731
    alloc = lambda n, kind, ty: {  # noqa: E731
        "name": n, "kind": kind, "dtype": "float32", "tensor_shape": [1, 4],
        "memorylocations": [{"name": n, "type": ty, "dims": [1, 16]}],
    }
    return {
        "arch": "gen3",
        "functions": [{
            "name": "f",
            "allocations": [alloc("x", "ExternalInput", "Input"), alloc("xs", "Internal", "SB"),
                            alloc("y", "ExternalOutput", "Output")],
            "blocks": [
                {"opcode": "Load", "name": "ld", "engine": "SP", "ins": [tile("x")], "outs": [tile("xs")]},
                {"opcode": "Activation", "name": "act", "engine": "Activation", "ins": [tile("xs")],
                 "outs": [tile("xs")], "func": "Ln"},
                {"opcode": "Save", "name": "sv", "engine": "SP", "ins": [tile("xs")], "outs": [tile("y")]},
            ],
        }],
    }


def test_inputs_outside_the_valid_range_warn_or_fault():
    # 0 and -1 lie outside Ln's valid range [2^-64, 2^64]; 1 and e do not.
    x = np.array([[1.0, 0.0, -1.0, np.e]], np.float32)
    with pytest.warns(RuntimeWarning, match=r"'act' \(Ln\): 2 input\(s\) outside .*\[2\^-64, 2\^64\]"):
        y = birsim.run(ln_program(), {"x": x})
    assert y["y"][0, 0] == 0.0
    with pytest.raises(birsim.Fault) as info:
        birsim.run(ln_program(), {"x": x}, ranges="fault")
    assert info.value.kind == "numerics" and info.value.cause == "out_of_range"
    assert info.value.fields["count"] == 2


def test_reading_memory_nothing_wrote_warns_or_faults():
    # The Activation reads xs before anything wrote it: the Load fills x, not xs (fidelity B10).
    p = ln_program()
    p["functions"][0]["blocks"] = p["functions"][0]["blocks"][1:]
    p["functions"][0]["blocks"][0]["func"] = "Identity"
    with pytest.warns(RuntimeWarning, match=r"'act': ins\[0\] reads element 0 \(AP order\) of 'xs', which nothing wrote"):
        birsim.run(p, {"x": np.ones((1, 4), np.float32)})
    with pytest.raises(birsim.Fault) as info:
        birsim.run(p, {"x": np.ones((1, 4), np.float32)}, uninit_reads="fault")
    assert info.value.kind == "uninitialized" and info.value.cause == "uninitialized_read"
    assert info.value.fields["location"] == "xs" and info.value.fields["element"] == 0


def test_a_register_loop_runs_and_its_branches_are_traced():
    reg = {"kind": "register_access", "dtype": "int32", "regref": "n"}
    imm = lambda v: {"kind": "imm_value", "dtype": "int32", "value": v}  # noqa: E731
    program = {"functions": [{"name": "f", "allocations": [], "blocks": [
        {"name": "pre", "instructions": [
            {"opcode": "RegisterMove", "name": "mv", "engine": "Pool", "ins": [imm(3)], "outs": [reg]}]},
        {"name": "loop", "instructions": [
            {"opcode": "RegisterAlu", "name": "dec", "engine": "Pool", "op": "subtract", "ins": [reg, imm(1)],
             "outs": [reg]},
            {"opcode": "CompareAndBranch", "name": "br", "engine": "Pool", "comp_op": "IS_GTIMM",
             "on_true": "loop", "ins": [reg, imm(0)], "outs": []}]}]}]}
    _, trace = birsim.run(json.dumps(program), {}, trace=True)
    assert [e["name"] for e in trace] == ["mv"] + ["dec", "br"] * 3
    assert [e["registers"][0]["value"] for e in trace if e["name"] == "dec"] == [2, 1, 0]
    assert [e["branch"] for e in trace if e["name"] == "br"] == [
        {"taken": True, "target": "loop"}, {"taken": True, "target": "loop"}, {"taken": False, "target": None}]
