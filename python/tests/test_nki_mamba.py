"""The fused Mamba selective-scan kernel (nki_kernels/mamba.py, written from AWS's "Fused Mamba"
tutorial) against a float64 NumPy golden of the tutorial's PyTorch reference, unrolled and with
loops="bir" (bit-identical)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import birsim.nki as bn
from nki_support import rng

from nki_kernels import mamba  # noqa: E402


def _inputs(batch, channels, seq_len, state):
    r = rng(100)
    delta = r.uniform(0.01, 0.1, (batch, channels, seq_len)).astype(np.float32)
    u = r.standard_normal((batch, channels, seq_len)).astype(np.float32)
    A = -r.uniform(0.5, 2.0, (channels, state)).astype(np.float32)
    B = r.standard_normal((batch, state, seq_len)).astype(np.float32)
    C = r.standard_normal((batch, state, seq_len)).astype(np.float32)
    return delta, u, A, B, C


def _golden(delta, u, A, B, C):
    """mamba_torch.py's mamba_layer and associative_scan, in float64."""
    d, uu, a, b, c = (x.astype(np.float64) for x in (delta, u, A, B, C))
    dA = np.exp(d[:, :, None, :] * a[None, :, :, None])
    dBu = d[:, :, None, :] * b[:, None, :, :] * uu[:, :, None, :]
    h = np.empty_like(dA)
    prev = 0.0
    for t in range(dA.shape[-1]):
        prev = dA[..., t] * prev + dBu[..., t]
        h[..., t] = prev
    return (c[:, None, :, :] * h).sum(axis=-2)


@pytest.mark.parametrize("shape", [(1, 256, 512, 16), (2, 128, 256, 4)])
def test_mamba_layer_against_numpy(shape):
    args = _inputs(*shape)
    got = bn.simulate(mamba.mamba_layer)(*args)
    assert got.shape == shape[:3] and got.dtype == np.float32
    np.testing.assert_allclose(got, _golden(*args), rtol=1e-5, atol=1e-5)
    folded = bn.simulate(mamba.mamba_layer, loops="bir")(*args)
    np.testing.assert_array_equal(folded.view(np.uint32), got.view(np.uint32))


def test_mamba_state_loop_folds():
    text = bn.trace_json(mamba.mamba_layer, loops="bir")(*_inputs(1, 256, 512, 16))
    ops = []

    def walk(entries, depth):
        for e in entries:
            if "instructions" in e:
                walk(e["instructions"], depth)
            elif e.get("opcode") == "Loop":
                ops.append((depth, e["LoopAxis"]["ub"]))
                walk(e["blocks"], depth + 1)

    walk(json.loads(text)["functions"][0]["blocks"], 0)
    assert (0, 2) in ops and any(ub == 16 for _d, ub in ops)  # channel tiles, then the 16 states
