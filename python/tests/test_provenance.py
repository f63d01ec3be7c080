"""`birsim.last_writers` (write provenance, docs/fidelity.md V3): the instruction that last wrote
each listed element. The expected writers are read off the program by hand: `sub_one` loads `a`
into `a_tile` (#0 `i0`), subtracts one into `b_tile` (#1 `i1`) and saves it to `b` (#2 `i2`);
the variant below then saves `a_tile`'s partition 0 over `b`'s row 0 (#3 `fix_row0`)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import birsim
from conftest import ROOT

EX = ROOT / "examples" / "sub_one"


@pytest.fixture(scope="module")
def program() -> dict:
    return json.loads((EX / "program.json").read_text())


@pytest.fixture(scope="module")
def a() -> np.ndarray:
    return np.load(EX / "a.npy")


def with_row0_fix(program: dict) -> dict:
    p = copy.deepcopy(program)
    body = p["functions"][0]["blocks"][0]["instructions"]
    save = copy.deepcopy(next(i for i in body if i["name"] == "i2"))
    save["name"] = "fix_row0"
    for operand, memref in ((save["ins"][0], "a_tile"), (save["outs"][0], "b")):
        operand["memref"] = memref
        operand.pop("memsetref", None)
        operand["ap"] = [[512, 1], [1, 512]]
    body.append(save)
    return p


def test_each_element_names_its_last_writer(program, a):
    got = birsim.last_writers(program, {"a": a}, {"b": [0, 511, 512, 128 * 512 - 1], "a_tile": [7], "b_tile": [3]})
    save = {"index": 2, "name": "i2", "opcode": "Save"}
    assert got == {
        "b": [save] * 4,
        "a_tile": [{"index": 0, "name": "i0", "opcode": "Load"}],
        "b_tile": [{"index": 1, "name": "i1", "opcode": "TensorScalar"}],
    }


def test_a_later_partial_write_takes_only_its_elements(program, a):
    got = birsim.last_writers(with_row0_fix(program), {"a": a}, {"b": [0, 511, 512]})
    fix = {"index": 3, "name": "fix_row0", "opcode": "Save"}
    assert got["b"] == [fix, fix, {"index": 2, "name": "i2", "opcode": "Save"}]
    # The outputs agree: row 0 holds a's row 0, the others a - 1.
    out = birsim.run(with_row0_fix(program), {"a": a})["b"]
    assert np.array_equal(out[0], a[0]) and np.array_equal(out[1:], a[1:] - np.float32(1))


def test_an_element_nothing_wrote_has_no_writer(program, a):
    p = copy.deepcopy(program)
    body = p["functions"][0]["blocks"][0]["instructions"]
    p["functions"][0]["blocks"][0]["instructions"] = [i for i in body if i["name"] != "i2"]
    assert birsim.last_writers(p, {"a": a}, {"b": [5]}) == {"b": [None]}


def test_bad_element_lists_are_input_errors(program, a):
    with pytest.raises(birsim.InputError, match="element 65536 is past the tensor's 65536 elements"):
        birsim.last_writers(program, {"a": a}, {"b": [128 * 512]})
    with pytest.raises(birsim.InputError, match="must not be negative"):
        birsim.last_writers(program, {"a": a}, {"b": [-1]})
    with pytest.raises(birsim.InputError, match="nowhere"):
        birsim.last_writers(program, {"a": a}, {"nowhere": [0]})
