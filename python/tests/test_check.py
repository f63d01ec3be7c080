"""`birsim.check` and `birsim.ops`: the support report of a kernel with an instruction birsim does
not run (an Activation whose accumulator loads an initial value, `acc` LoadAccumulate: no source
says where that value lives, so docs/fidelity.md E7 leaves it not implemented), and agreement between what `check` says and what `run` does on the same kernel."""

from __future__ import annotations

import numpy as np
import pytest

import birsim
from conftest import allocation, ap, copy_program


def with_activation() -> dict:
    """The float32 copy program plus an Activation `act` with `acc` LoadAccumulate (not run) of
    one SB tile into another."""
    p = copy_program("float32", 4, 4, 8)
    f = p["functions"][0]
    for name in ("ma", "mc"):
        f["allocations"].append(allocation(name, "Internal", "float32", [4, 8], "SB", 4))
    f["blocks"][0]["instructions"].append(
        {
            "opcode": "Activation",
            "name": "act",
            "engine": "Activation",
            "ins": [ap("ma", "float32", 4, 8)],
            "outs": [ap("mc", "float32", 4, 8)],
            "func": "Exp",
            "acc": "LoadAccumulate",
        }
    )
    return p


def test_check_names_the_unsupported_opcode_and_its_instruction():
    report = birsim.check(with_activation())
    assert report["verdict"] == "not_implemented"
    assert report["problems"] == []
    by_opcode = {e["opcode"]: e for e in report["entries"]}
    assert set(by_opcode) == {"Load", "Save", "Activation"}
    mm = by_opcode["Activation"]
    assert mm["status"] == "not_implemented"
    assert mm["instructions"] == ["act"] and mm["count"] == 1
    assert mm["reason"]
    for op in ("Load", "Save"):
        assert by_opcode[op]["status"] == "runs"
    assert by_opcode["Load"]["instructions"] == ["load"]


def test_run_faults_where_check_said_it_would():
    p = with_activation()
    report = birsim.check(p)
    (mm,) = [e for e in report["entries"] if e["status"] == "not_implemented"]
    with pytest.raises(birsim.Fault) as info:
        birsim.run(p, {"x": np.zeros((4, 8), np.float32)})
    f = info.value
    assert f.kind == "not-implemented"
    assert f.instruction in mm["instructions"]
    assert f.opcode == "Activation"
    assert f.executed == 2  # Load and Save ran first
    # What ran before the fault is kept in the fault's outputs: y = x (zeros).
    np.testing.assert_array_equal(f.outputs["y"], np.zeros((4, 8), np.float32))


def test_check_of_a_supported_kernel_runs():
    report = birsim.check(copy_program("bfloat16", 2, 4, 8))
    assert report["verdict"] == "runs"
    assert {e["status"] for e in report["entries"]} == {"runs"}


def test_check_reports_a_kernel_validation_rejects():
    p = copy_program("float32", 4, 4, 8)
    # Save reads 4 x 16 elements from a 4 x 8 tile: the AP leaves its location.
    p["functions"][0]["blocks"][0]["instructions"][1]["ins"][0]["ap"] = [[16, 4], [1, 16]]
    report = birsim.check(p)
    assert report["verdict"] == "rejected"
    save = [e for e in report["entries"] if e["opcode"] == "Save"]
    assert save and save[0]["status"] == "rejected" and save[0]["instructions"] == ["save"]


def test_check_of_malformed_json_is_a_program_error():
    with pytest.raises(birsim.ProgramError):
        birsim.check("{")


def test_ops_matrix_has_every_status():
    m = birsim.ops()
    entries = m["entries"] if isinstance(m, dict) else m
    statuses = {e["status"] for e in entries}
    assert {"runs", "not_implemented"} <= statuses
    assert any(e["opcode"] == "Activation" and e["status"] == "not_implemented" for e in entries)
