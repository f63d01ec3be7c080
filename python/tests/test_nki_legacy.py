"""birsim.nki on the older neuronxcc.nki API: mgrid grids, advanced-indexing pools with a
non-trailing reduce, `psum[...] += nisa.nc_matmul(...)` over par_dim blocks, and
tensor_tensor_scan, each against a NumPy golden."""

from __future__ import annotations

import ml_dtypes
import pytest
import numpy as np

import birsim.nki as bn
from nki_support import rng

from nki_kernels import legacy  # noqa: E402


def test_avgpool_mgrid_advanced_indexing():
    x = rng(40).standard_normal((32, 8, 12)).astype(np.float32)
    want = x.astype(np.float64).reshape(32, 4, 2, 6, 2).mean(axis=(2, 4))
    np.testing.assert_allclose(legacy.avgpool_mgrid(x, 2), want, rtol=1e-6, atol=1e-6)


def test_avgpool_mgrid_exact_on_small_integers():
    x = np.arange(4 * 6 * 6, dtype=np.float32).reshape(4, 6, 6)
    want = x.reshape(4, 2, 3, 2, 3).sum(axis=(2, 4)) / np.float32(9)
    np.testing.assert_array_equal(legacy.avgpool_mgrid(x, 3), want.astype(np.float32))


def test_matmul_blocked_psum_iadd():
    r = rng(41)
    lhsT = r.standard_normal((384, 128)).astype(ml_dtypes.bfloat16)
    rhs = r.standard_normal((384, 256)).astype(ml_dtypes.bfloat16)
    want = lhsT.astype(np.float64).T @ rhs.astype(np.float64)
    got = legacy.matmul_blocked(lhsT, rhs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * np.abs(want).max())
    text = bn.trace_json(legacy.matmul_blocked)(lhsT, rhs)
    assert text.count('"opcode": "Matmult"') == 3
    assert text.count('"opcode": "TensorTensor"') == 0  # no PSUM + PSUM adds: the matmuls accumulate


def test_tensor_tensor_scan_recurrence_bit_exact():
    r = rng(42)
    a = r.uniform(0.5, 1.0, (128, 64)).astype(np.float32)
    b = r.standard_normal((128, 64)).astype(np.float32)
    init = r.standard_normal((128, 1)).astype(np.float32)
    want = np.empty_like(a)
    g = init[:, 0]
    for i in range(64):
        g = a[:, i] * g + b[:, i]  # fp32 products and sums, each rounded, as the engine does
        want[:, i] = g
    np.testing.assert_array_equal(legacy.scan(a, b, init), want)


def test_affine_select_with_index_expression_predicate():
    s = rng(43).standard_normal((64, 80)).astype(np.float32)
    p = np.arange(64)[:, None]
    j = np.arange(80)[None, :]
    want = np.where(j < p + 4, s, np.finfo(np.float32).min).astype(np.float32)
    np.testing.assert_array_equal(legacy.causal_mask_expr(s), want)


def test_ragged_tiles_with_masks():
    x = rng(44).standard_normal((300, 600)).astype(np.float32)
    np.testing.assert_array_equal(legacy.scale_ragged(x, 1.5), x * np.float32(1.5))
    text = bn.trace_json(legacy.scale_ragged)(x, 1.5)
    # 3 x 3 tiles: the last row tile covers 44 rows, the last column tile 88 columns
    assert '"ap": [[600, 44], [1, 88]]' in text


def test_rmsnorm_tutorial_with_ragged_rows():
    from nki_kernels import norms

    r = rng(45)
    a = r.standard_normal((300, 256)).astype(np.float32)
    g = r.standard_normal(256).astype(np.float32)
    a64 = a.astype(np.float64)
    want = a64 / np.sqrt((a64 * a64).mean(axis=1, keepdims=True)) * g
    np.testing.assert_allclose(norms.rmsnorm(a, g), want, rtol=1e-5, atol=1e-5)


def test_index_past_the_tensor_without_a_mask_is_an_error():
    @bn.jit
    def k(x_in):
        out = nl.ndarray(x_in.shape, dtype=x_in.dtype, buffer=nl.shared_hbm)
        ip = nl.arange(128)[:, None]
        jf = nl.arange(64)[None, :]
        t = nl.load(x_in[64 + ip, jf])
        nl.store(out[0:128, :], value=t)
        return out

    import neuronxcc.nki.language as nl

    with pytest.raises(bn.NkiError, match=r"load: index expression covers \[64, 191\], outside dimension 0 of size 128"):
        k(np.zeros((128, 64), np.float32))


def test_attention_tile():
    from nki_kernels import attention

    r = rng(46)
    q, k, v = (((r.random((128, 128)) - 0.5) * 2).astype(np.float32) for _ in range(3))
    qk = q.astype(np.float64).T @ k
    e = np.exp(qk - qk.max(axis=1, keepdims=True))
    want = (e / e.sum(axis=1, keepdims=True)) @ v.astype(np.float64).T
    np.testing.assert_allclose(attention.attention_tile(q, k, v), want, rtol=1e-5, atol=1e-5)


def test_transpose_with_a_shared_identity_constant():
    from nki_kernels import attention

    x = rng(47).standard_normal((128, 96)).astype(np.float32)
    np.testing.assert_array_equal(attention.transpose_with_identity(x), x.T)
    prog = bn.trace(attention.transpose_with_identity)(x)
    assert sorted(prog.input_names()) == ["const", "x"]


def test_psum_accumulator_first_written_by_iadd_is_live_there():
    # `res` is first named by the retargeted matmul: its live range must start there, so the
    # tiles allocated meanwhile cannot share its bank
    @bn.jit
    def k(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for i in nl.affine_range(2):
            res += nl.matmul(nl.load(lhsT[i * 128:(i + 1) * 128, :]), nl.load(rhs[i * 128:(i + 1) * 128, :]),
                             transpose_x=True)
            other = nl.transpose(nl.load(lhsT[i * 128:(i + 1) * 128, :]))  # a PSUM tile live meanwhile
            del other
        nl.store(out, value=nl.copy(res))
        return out

    import neuronxcc.nki.language as nl

    r = rng(48)
    lhsT = r.integers(-4, 4, (256, 128)).astype(np.float32)
    rhs = r.integers(-4, 4, (256, 512)).astype(np.float32)
    want = (lhsT.T.astype(np.float64) @ rhs).astype(np.float32)
    np.testing.assert_array_equal(k(lhsT, rhs), want)
