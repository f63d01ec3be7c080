"""loops="bir": nl.affine_range / sequential_range folded into BIR counted Loop nodes where the
iterations differ only by affine access-pattern offsets. Tested both ways: every kernel gives
bit-identical outputs unrolled and folded, and the folded programs hold the Loop nodes
expected (the tests of the other files also pass with BIRSIM_NKI_LOOPS=bir, except the ones that
count unrolled instructions)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import birsim.nki as bn
from nki_support import rng

from nki_kernels import control, legacy, matmul, norms, softmax, tensor_add, transpose2d  # noqa: E402


def _loops(kernel, *args):
    prog = json.loads(bn.trace_json(kernel, loops="bir")(*args))
    found = []

    def walk(entries, depth):
        for e in entries:
            if "instructions" in e:
                walk(e["instructions"], depth)
            elif e.get("opcode") == "Loop":
                found.append((depth, e["LoopAxis"]["ub"]))
                walk(e["blocks"], depth + 1)

    walk(prog["functions"][0]["blocks"], 0)
    return found


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))  # bit for bit


R = rng(90)
A = R.standard_normal((256, 1024)).astype(np.float32)
B = R.standard_normal((256, 1024)).astype(np.float32)
LHST = R.standard_normal((512, 256)).astype(np.float32)
RHS = R.standard_normal((512, 1024)).astype(np.float32)
G = R.standard_normal(1024).astype(np.float32)
RAG = R.standard_normal((300, 700)).astype(np.float32)

CASES = {
    # name: (kernel, args, expected Loop nodes as (depth, passes))
    "add_tiled": (tensor_add.add_tiled, (A, B), [(0, 2), (1, 2)]),
    "matmul_k_tiled": (matmul.matmul_k_tiled, (LHST[:, :128], RHS[:, :512]), [(0, 3)]),  # k = 0 peeled
    # three levels: m, n, and k with k = 0 peeled (it overwrites PSUM, the others accumulate)
    "matmul_tiled": (matmul.matmul_tiled, (LHST, RHS), [(0, 2), (1, 2), (2, 3)]),
    "softmax_nl": (softmax.softmax_nl, (A,), [(0, 2)]),
    "rmsnorm": (norms.rmsnorm, (A, G), [(0, 2)]),
    "transpose_rows": (transpose2d.transpose_rows, (R.standard_normal((128, 12)).astype(np.float32), (3, 4)), [(0, 3), (1, 4)]),
    # the last row and column tiles are ragged: iterations 0..1 fold, the last stays unrolled
    # (rows 0..255: a Loop over i holding a Loop over j, then j = 2; rows 256..299: a Loop over j)
    "scale_ragged": (legacy.scale_ragged, (RAG, 1.5), [(0, 2), (1, 2), (0, 2)]),
    "prefix_rows": (control.prefix_rows, (A,), [(0, 2)]),  # an SBUF sum carried across passes
    "squares_of_columns": (control.squares_of_columns, (A[:128, :100],), []),  # offsets i*i
    "matmul_psum_blocks": (matmul.matmul_psum_blocks, (LHST[:128, :128], R.standard_normal((128, 6144)).astype(np.float32)), []),  # ps[j]: a block per j
}


@pytest.mark.parametrize("name", list(CASES))
def test_unrolled_and_folded_outputs_are_bit_identical(name):
    kernel, args, _ = CASES[name]
    _same(bn.simulate(kernel, loops="unroll")(*args), bn.simulate(kernel, loops="bir")(*args))


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2] is not None])
def test_folded_programs_hold_loops(name):
    kernel, args, want = CASES[name]
    assert _loops(kernel, *args) == want


def test_unrolling_is_the_default_and_the_env_var_switches(monkeypatch):
    monkeypatch.delenv("BIRSIM_NKI_LOOPS", raising=False)
    assert _count(bn.trace_json(tensor_add.add_tiled)(A, B)) == 0
    monkeypatch.setenv("BIRSIM_NKI_LOOPS", "bir")
    assert _count(bn.trace_json(tensor_add.add_tiled)(A, B)) == 2
    assert _count(bn.trace_json(tensor_add.add_tiled, loops="unroll")(A, B)) == 0
    monkeypatch.setenv("BIRSIM_NKI_LOOPS", "sometimes")
    with pytest.raises(bn.NkiError, match="loops='sometimes'"):
        bn.trace_json(tensor_add.add_tiled)(A, B)


def _count(text):
    return text.count('"opcode": "Loop"')


def test_prefix_rows_against_numpy():
    want = np.cumsum(A.reshape(2, 128, 1024), axis=0, dtype=np.float32).reshape(256, 1024)
    np.testing.assert_array_equal(bn.simulate(control.prefix_rows, loops="bir")(A), want)


def test_a_tile_made_in_a_folded_loop_and_used_after_it_is_an_error():
    with pytest.raises(bn.NkiError, match="used after it; trace with loops='unroll'"):
        bn.trace_json(control.tiles_kept_after_loop, loops="bir")(A[:128])
    x = A[:128, :512]
    np.testing.assert_array_equal(bn.simulate(control.tiles_kept_after_loop, loops="unroll")(x), x * np.float32(2))
