"""`birsim.run` on the conformance corpus: every program case (conformance/programs/**) against
its committed expected outputs (written by the NumPy / ml_dtypes oracles, never by birsim), and a
handful of cases through both the `birsim run` CLI and `birsim.run`, whose output bytes and
trace lines must be equal."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import birsim

# The activation cases hold range-edge inputs on purpose: their valid-range warnings are expected.
pytestmark = pytest.mark.filterwarnings("ignore:.*outside the hardware's valid range:RuntimeWarning")
from conftest import ROOT, Case, all_cases

RUNNABLE = [c for c in all_cases() if not c.errors]
INVALID = [c for c in all_cases() if c.errors]


def raw_of(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()


def expected_npy(path):
    """The expected array as committed: raw bits in the CLI's .npy dtype."""
    return np.load(path, allow_pickle=False)


def run_case(case: Case, trace: bool = False):
    inputs = {name: np.load(path, allow_pickle=False) for name, path in case.inputs}
    names = [name for name, _ in case.outputs]
    return birsim.run(
        case.program,
        inputs,
        profile=case.profile,
        outputs=names,
        trace=trace,
        allow_uninit_inputs=True,  # as xtask's runner: inputs a case does not give are 0xFF
        **case.run_options(),
    )


def compare(name: str, got: np.ndarray, want: np.ndarray):
    """Bit for bit (NaN payloads and -0 included), with the first differences in hex."""
    assert got.shape == want.shape, name
    assert got.dtype.itemsize == want.dtype.itemsize, name
    if want.dtype.kind == "i" or got.dtype.kind in "iu":
        assert got.dtype == want.dtype, name  # integers come back as themselves
    raw = np.dtype(f"<u{want.dtype.itemsize}")
    g, w = got.view(raw).reshape(-1), want.view(raw).reshape(-1)
    bad = np.flatnonzero(g != w)
    digits = 2 * raw.itemsize
    shown = [f"[{k}] expected 0x{int(w[k]):0{digits}X}, birsim 0x{int(g[k]):0{digits}X}" for k in bad[:6]]
    assert bad.size == 0, f"{name}: {bad.size} of {w.size} elements differ: " + "; ".join(shown)


def test_the_corpus_is_there():
    assert len(RUNNABLE) > 100 and len(INVALID) > 10


@pytest.mark.parametrize("case", RUNNABLE, ids=lambda c: c.name)
def test_case_matches_committed_outputs(case):
    if case.fault is None:
        outputs = run_case(case)
    else:
        kind, message = case.fault
        with pytest.raises(birsim.Fault) as info:
            run_case(case)
        f = info.value
        assert f.kind == kind
        assert message in str(f)
        outputs = f.outputs
    assert sorted(outputs) == sorted(name for name, _ in case.outputs)
    for name, path in case.outputs:
        compare(f"{case.name}: {name}", outputs[name], expected_npy(path))


@pytest.mark.parametrize("case", INVALID[:20], ids=lambda c: c.name)
def test_invalid_case_raises_program_error(case):
    inputs = {name: np.load(path, allow_pickle=False) for name, path in case.inputs}
    with pytest.raises(birsim.ProgramError) as info:
        birsim.run(case.program, inputs, allow_uninit_inputs=True)
    assert info.value.diagnostics
    assert isinstance(info.value, birsim.InputError) and isinstance(info.value, ValueError)


# A handful of cases through the CLI too: several suites, both profiles, an option, a bf16
# fused path, an indirect gather, the embedding bag example.
CLI_CASES = [
    "elementwise/copy_bfloat16_to_float32",
    "elementwise/nki_a_plus_b_bf16",
    "elementwise/cache_tensorscan_mult_add",
    "indirect/gather_int32",
    "indirect/embedding_bag_example",
]


def cli_case(name: str) -> Case:
    return next(c for c in RUNNABLE if c.name == name)


def extra_cli_cases():
    # One case with an option line and one from each remaining suite, whichever come first.
    chosen = []
    for suite in ("core", "datamove", "dge"):
        chosen += [c.name for c in RUNNABLE if c.name.startswith(suite + "/") and c.fault is None][:1]
    chosen += [c.name for c in RUNNABLE if c.options and c.fault is None][:1]
    return chosen


@pytest.mark.parametrize("name", CLI_CASES + extra_cli_cases())
def test_python_and_cli_agree(name, cli, tmp_path):
    case = cli_case(name)
    args = [str(cli), "run", str(case.program), *case.cli_flags(), "--trace", str(tmp_path / "t.jsonl")]
    for n, path in case.inputs:
        args += ["--input", f"{n}={path}"]
    for n, _ in case.outputs:
        args += ["--output", f"{n}={tmp_path / (n + '.npy')}"]
    # The CLI needs every input allocation; the cases give them all.
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    outputs, trace = run_case(case, trace=True)
    for n, path in case.outputs:
        from_cli = np.load(tmp_path / (n + ".npy"), allow_pickle=False)
        want = expected_npy(path)
        assert from_cli.dtype == want.dtype and from_cli.shape == want.shape
        # Python and CLI bytes are equal, and both are the committed oracle output.
        assert raw_of(outputs[n]) == raw_of(from_cli), f"{name}: {n}"
        assert raw_of(from_cli) == raw_of(want), f"{name}: {n}"
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert len(lines) == len(trace) > 0
    for a, b in zip(lines, trace):
        assert sorted(a) == sorted(b)  # the same keys
        a.pop("elapsed_ns"), b.pop("elapsed_ns")  # wall-clock time differs between runs
        assert a == b


def test_cli_and_python_agree_on_a_fault(cli, tmp_path):
    case = cli_case("indirect/gather_oob_fault")
    args = [str(cli), "run", str(case.program), *case.cli_flags()]
    for n, path in case.inputs:
        args += ["--input", f"{n}={path}"]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 1
    with pytest.raises(birsim.Fault) as info:
        run_case(case)
    # The CLI's message is "birsim: " + the exception's text.
    assert done.stderr.strip() == f"birsim: {info.value}"


def test_sub_one_example():
    ex = ROOT / "examples" / "sub_one"
    a = np.load(ex / "a.npy")
    out = birsim.run(ex / "program.json", {"a": a})  # every output allocation, by its name
    assert list(out) == ["b_set"]
    assert raw_of(out["b_set"]) == raw_of(np.load(ex / "expected_b.npy"))
    # A memory location's name works too (the CLI's NAME rule).
    by_location = birsim.run(ex / "program.json", {"a": a}, outputs=["b"])
    assert raw_of(by_location["b"]) == raw_of(out["b_set"])
