"""birsim.nki per call: each nki.language / nki.isa call traced by a small kernel and compared
with NumPy (fp32 NumPy arithmetic is correctly rounded, as the engines' fp32 is, so the
element-wise goldens are exact; transcendental functions get a few-ulp tolerance)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import birsim.nki as bn
from nki_support import KERNELS, rng

from nki_kernels import ops  # noqa: E402

F32 = np.float32


def exact(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def _ab(seed=0):
    r = rng(seed)
    a = r.standard_normal((128, 96)).astype(F32)
    b = r.standard_normal((128, 96)).astype(F32)
    b[b == 0] = 1
    return a, b


BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "greater": lambda x, y: (x > y).astype(F32),
    "less_equal": lambda x, y: (x <= y).astype(F32),
    "equal": lambda x, y: (x == y).astype(F32),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_tiles(op):
    a, b = _ab(1)
    b[:, :8] = a[:, :8]  # some equal elements for the comparisons
    exact(ops.binary_tiles(a, b, op), BINARY[op](a, b).astype(F32))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum"])
@pytest.mark.parametrize("column_first", [False, True])
def test_binary_with_partition_column(op, column_first):
    a, _ = _ab(2)
    col = rng(3).standard_normal((128, 1)).astype(F32)
    want = BINARY[op](col, a) if column_first else BINARY[op](a, col)
    exact(ops.binary_column(a, col, op, column_first), want.astype(F32))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "minimum"])
@pytest.mark.parametrize("scalar_first", [False, True])
def test_binary_with_scalar(op, scalar_first):
    a, _ = _ab(4)
    a[a == 0] = 1
    v = F32(1.75)
    want = BINARY[op](v, a) if scalar_first else BINARY[op](a, v)
    exact(ops.binary_scalar(a, 1.75, op, scalar_first), want.astype(F32))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY = {
    "exp": (np.exp, lambda a: a),
    "log": (np.log, lambda a: np.abs(a) + F32(0.01)),
    "tanh": (np.tanh, lambda a: a),
    "sigmoid": (_sigmoid, lambda a: a),
    "relu": (lambda x: np.maximum(x, 0), lambda a: a),
    "sqrt": (np.sqrt, lambda a: np.abs(a) + F32(0.01)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda a: np.abs(a) + F32(0.01)),
    "square": (np.square, lambda a: a),
    "abs": (np.abs, lambda a: a),
    "sign": (np.sign, lambda a: a),
    "silu": (lambda x: x * _sigmoid(x), lambda a: a),
    "softplus": (lambda x: np.log1p(np.exp(x)), lambda a: a),
    "arctan": (np.arctan, lambda a: np.clip(a, -1.5, 1.5)),
    "sin": (np.sin, lambda a: np.clip(a, -3, 3)),
    "reciprocal": (lambda x: 1 / x, lambda a: a + F32(8)),
    "negative": (np.negative, lambda a: a),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    f, domain = UNARY[op]
    a = domain(_ab(5)[0]).astype(F32)
    got = ops.unary(a, op)
    want = f(a.astype(np.float64))
    if op in ("relu", "square", "abs", "sign", "negative", "reciprocal"):
        exact(got, want.astype(F32))
    else:
        # each function's f64 closed form rounded once to fp32 (fidelity E2): within 1-2 ulp
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-37)


@pytest.mark.parametrize("op,np_op", [("sum", np.sum), ("max", np.max), ("min", np.min), ("mean", np.mean)])
def test_reduce_free_axis(op, np_op):
    a = rng(6).standard_normal((128, 200)).astype(F32)
    got = ops.reduce(a, op, 1)
    assert got.shape == (128, 1)
    want = np_op(a.astype(np.float64), axis=1, keepdims=True)
    if op in ("max", "min"):
        exact(got, want.astype(F32))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_reduce_two_trailing_axes():
    a = rng(7).standard_normal((64, 6, 20)).astype(F32)
    got = ops.reduce(a, "max", [1, 2])
    exact(got, a.max(axis=(1, 2)).reshape(64, 1))
    got = ops.reduce(a, "sum", 2)
    np.testing.assert_allclose(got, a.astype(np.float64).sum(axis=2), rtol=1e-5, atol=1e-5)


def test_activation_tile_scale_and_bias():
    r = rng(8)
    a = r.standard_normal((128, 64)).astype(F32)
    s = r.standard_normal((128, 1)).astype(F32)
    b = r.standard_normal((128, 1)).astype(F32)
    out1, out2 = ops.activation_scaled(a, s, b)
    # the pre-activation value is rounded to fp32 twice (x*scale, then + bias), as the engine does
    pre = ((a * s).astype(F32) + b).astype(F32)
    np.testing.assert_allclose(out1, np.tanh(pre.astype(np.float64)), rtol=3e-7, atol=1e-37)
    np.testing.assert_allclose(out2, np.exp((a * F32(0.5)).astype(np.float64)), rtol=3e-7)


def test_tensor_scalar_two_ops_tile_and_immediate():
    r = rng(9)
    a = r.standard_normal((128, 64)).astype(F32)
    c = r.standard_normal((128, 1)).astype(F32)
    t = ((a - c) * F32(0.25)).astype(F32)
    exact(ops.two_op_tensor_scalar(a, c), np.maximum(F32(1) - t, F32(0)))


def test_scalar_tensor_tensor():
    a, b = _ab(10)
    exact(ops.stt(a, b), a * F32(2) + b)


def test_iota_memset_and_mgrid():
    i32, f32, i16 = ops.iota_and_fill(np.zeros((1, 1), F32))
    p = np.arange(128)[:, None]
    j = np.arange(64)[None, :]
    exact(i32, (5 + 100 * p + j).astype(np.int32))
    exact(f32, (2 * j - p).astype(F32))
    exact(i16, np.full((64, 32), -7, np.int16))


def test_vector_engine_transpose_32x32():
    x = rng(11).standard_normal((32, 32)).astype(F32)
    exact(ops.vector_transpose(x), np.ascontiguousarray(x.T))


def test_par_dim_blocked_tiles():
    x = rng(12).standard_normal((4, 128, 64)).astype(F32)
    exact(ops.blocked_tiles(x), x * F32(2))


def test_dtype_casts_round_to_nearest_even():
    a = rng(13).standard_normal((128, 64)).astype(F32)
    a[0, :3] = [1 + 2**-8, 1 + 3 * 2**-9, -0.0]
    exact(ops.cast_load_store(a), a.astype(ml_dtypes.bfloat16).astype(F32))


def test_uninitialised_read_is_reported_at_the_kernel_line():
    line = next(n for n, s in enumerate((KERNELS / "ops.py").read_text().splitlines(), 1) if "never written" in s)
    with pytest.warns(RuntimeWarning, match=rf"exp@ops.py:{line}#"):
        ops.uninitialised_read(np.zeros((128, 8), F32))


def test_affine_select_causal_mask():
    s = rng(14).standard_normal((128, 96)).astype(F32)
    p = np.arange(128)[:, None]
    j = np.arange(96)[None, :]
    exact(ops.causal_mask(s), np.where(p - j >= 0, s, F32(-9984.0)).astype(F32))


def test_tensor_copy_predicated():
    a, b = _ab(15)
    exact(ops.predicated(a, b), np.where(a > 0, a, b).astype(F32))


def test_stream_shuffle():
    a = rng(16).standard_normal((128, 40)).astype(F32)
    want = np.zeros_like(a)
    for q in range(4):
        for i in range(32):
            if i != 5:
                want[32 * q + i] = a[32 * q + (i - 1) % 32]
    exact(ops.shuffle(a), want)


def test_top8_index_and_replace():
    a = rng(17).permutation(128 * 64).reshape(128, 64).astype(F32)  # distinct values
    order = np.argsort(-a, axis=1, kind="stable")[:, :8]
    vals, idx, rep = ops.top8(a)
    exact(vals, np.take_along_axis(a, order, axis=1))
    exact(idx, order.astype(np.uint32))
    want = a.copy()
    np.put_along_axis(want, order, F32(-1e9), axis=1)
    exact(rep, want)


def test_exponential_needs_gen4(monkeypatch):
    a = rng(18).standard_normal((128, 64)).astype(F32)
    m = a.max(axis=1, keepdims=True)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    with pytest.raises(bn.NkiError, match="NeuronCore-v4"):
        ops.exp_sum(a, m)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    e, s = ops.exp_sum(a, m)
    want = np.exp((a - m).astype(np.float64))
    np.testing.assert_allclose(e, want, rtol=3e-7)
    np.testing.assert_allclose(s, e.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-6)


def test_tensor_scalar_reduce_reduces_the_fp32_results():
    a = rng(19).standard_normal((128, 100)).astype(F32)
    d, mx = ops.scale_and_row_max(a)
    half = a * F32(0.5)
    exact(d, half.astype(ml_dtypes.bfloat16))
    exact(mx, half.max(axis=1, keepdims=True))


@pytest.mark.parametrize("dt", [ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, np.float16, ml_dtypes.bfloat16])
def test_low_precision_dtypes(dt):
    # low-precision inputs widen exactly to fp32; the fp32 sum narrows once (round to nearest even)
    r = rng(20)
    a = (r.standard_normal((128, 64)) * 4).astype(dt)
    b = (r.standard_normal((128, 64)) * 4).astype(dt)
    exact(ops.binary_tiles(a, b, "add"), a.astype(F32) + b.astype(F32))
    got = ops.unary(a, "negative")
    exact(got, -a.astype(F32))


@pytest.mark.parametrize("dt", [ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, np.int8, np.int32, np.uint16])
def test_narrowing_casts(dt):
    nl = bn.language

    @bn.jit
    def cast(a_in, out_dt):
        out = nl.ndarray(a_in.shape, dtype=out_dt, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(nl.load(a_in), dtype=out_dt))
        return out

    r = rng(21)
    if np.dtype(dt).kind in "iu":
        a = r.integers(0, 100, (128, 32)).astype(F32)  # integral values: exact in every int dtype
    else:
        a = (r.standard_normal((128, 32)) * 8).astype(F32)  # inside the fp8 ranges
    exact(cast(a, np.dtype(dt)), a.astype(dt))


def test_returned_views_are_cut_out():
    nl = bn.language

    @bn.jit
    def halves(a_in):
        out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a_in))
        return out[0:64, :], out[64:128, 1::2]

    a = (rng(22).standard_normal((128, 16)) * 4).astype(ml_dtypes.float8_e5m2)
    top, odd = halves(a)
    exact(top, a[0:64])
    exact(odd, np.ascontiguousarray(a[64:128, 1::2]))
