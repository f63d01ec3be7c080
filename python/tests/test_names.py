"""One name for an output (issue #26 item 4): an output allocation (`b_set`) and its memory
location (`b`, the name the CLI's README examples use) are interchangeable in `inputs`,
`outputs` and the result, and a name asked for comes back as given; the CLI takes both in
`--input`, `--output` and `--expect` and writes the same bytes."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import birsim
from conftest import ROOT

EX = ROOT / "examples" / "sub_one"


def raw(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.fixture(scope="module")
def a() -> np.ndarray:
    return np.load(EX / "a.npy")


@pytest.fixture(scope="module")
def want() -> bytes:
    return raw(np.load(EX / "expected_b.npy"))


def test_default_result_answers_to_both_names(a, want):
    out = birsim.run(EX / "program.json", {"a": a})
    assert isinstance(out, birsim.Outputs) and isinstance(out, dict)
    assert list(out) == ["b_set"]  # keyed by allocation, as before
    assert out["b"] is out["b_set"] and raw(out["b"]) == want
    assert "b" in out and "b_set" in out and "a" not in out and "nope" not in out
    assert out.get("b") is out["b_set"] and out.get("nope") is None and out.get("nope", 1) == 1
    with pytest.raises(KeyError):
        out["nope"]
    with pytest.raises(KeyError):
        out["a_tile"]  # a location, but not of an output
    # Copies and pickles keep both names.
    import copy
    import pickle

    for c in (copy.copy(out), copy.deepcopy(out), pickle.loads(pickle.dumps(out))):
        assert raw(c["b"]) == want and "b" in c


@pytest.mark.parametrize("name", ["b", "b_set"])
@pytest.mark.parametrize("inp", ["a", "a_set"])
def test_outputs_come_back_under_the_name_asked(a, want, name, inp):
    out = birsim.run(EX / "program.json", {inp: a}, outputs=[name])
    assert list(out) == [name]
    assert raw(out[name]) == want


def test_fault_outputs_answer_to_both_names():
    from conftest import CONFORMANCE

    case = CONFORMANCE / "indirect" / "gather_oob_fault"
    inputs = {n: np.load(case / f"in_{n}.npy") for n in ("src", "idx", "y0")}
    with pytest.raises(birsim.Fault) as info:
        birsim.run(case / "case.json", inputs)
    outs = info.value.outputs
    assert isinstance(outs, birsim.Outputs)
    for alloc in list(outs):
        assert alloc in outs


@pytest.mark.parametrize("name", ["b", "b_set"])
def test_cli_takes_both_names(cli, tmp_path, want, name):
    for flag in ("--output", "--expect"):
        target = tmp_path / f"{name}.npy" if flag == "--output" else EX / "expected_b.npy"
        done = subprocess.run(
            [str(cli), "run", str(EX / "program.json"), "--input", f"a_set={EX / 'a.npy'}", flag, f"{name}={target}"],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        if flag == "--expect":
            assert done.stdout.startswith(f"{name}: matches"), done.stdout
        else:
            assert raw(np.load(target)) == want
