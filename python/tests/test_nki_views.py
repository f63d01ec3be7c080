"""birsim.nki's views against NumPy: random strided slices of HBM tensors loaded into SBUF,
combined element-wise with differently sliced tiles, and stored into strided HBM views. Every
golden is NumPy's own slicing of the same arrays, so these pin the access patterns (offsets,
steps, fused levels, partition-first ordering) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import birsim.nki as bn
from nki_support import rng

nl = bn.language


def _slices(r, shape, full_first=False):
    key, out = [], []
    for d, n in enumerate(shape):
        if full_first and d == 0:
            key.append(slice(None))
            out.append(n)
            continue
        step = int(r.integers(1, 4))
        start = int(r.integers(0, max(1, n // 3)))
        stop = int(r.integers(start + 1, n + 1))
        key.append(slice(start, stop, step))
        out.append(len(range(start, stop, step)))
    return tuple(key), tuple(out)


@bn.jit
def slice_roundtrip(x_in, key_in, key_out, out_shape):
    out = nl.ndarray(out_shape, dtype=x_in.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.zeros(out_shape, dtype=x_in.dtype)) if out_shape[0] <= 128 else None
    t = nl.load(x_in[key_in])
    nl.store(out[key_out], value=t)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_random_hbm_slices_through_sbuf(seed):
    r = rng(100 + seed)
    ndim = int(r.integers(2, 5))
    shape = tuple(int(r.integers(2, 9)) for _ in range(ndim))
    shape = (int(r.integers(2, 100)),) + shape[1:]
    x = r.standard_normal(shape).astype(np.float32)
    key_in, sub = _slices(r, shape)
    # the destination: a bigger tensor, the loaded tile stored into a strided window of it
    steps = [int(r.integers(1, 3)) for _ in sub]
    offs = [int(r.integers(0, 3)) for _ in sub]
    out_shape = tuple(o + s * (n - 1) + 1 + int(r.integers(0, 2)) for o, s, n in zip(offs, steps, sub))
    key_out = tuple(slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offs, steps, sub))
    if out_shape[0] > 128:
        pytest.skip("the zero fill tile would exceed 128 partitions")
    got = slice_roundtrip(x, key_in, key_out, out_shape)
    want = np.zeros(out_shape, np.float32)
    want[key_out] = x[key_in]
    np.testing.assert_array_equal(got, want)


@bn.jit
def strided_elementwise(a_in, b_in, ka, kb):
    a = nl.load(a_in)
    b = nl.load(b_in)
    c = nl.subtract(a[ka], b[kb])
    out = nl.ndarray(c.shape, dtype=c.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=c)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_random_on_chip_views_elementwise(seed):
    r = rng(200 + seed)
    ndim = int(r.integers(2, 5))
    free = [int(r.integers(2, 10)) for _ in range(ndim - 1)]
    parts = int(r.integers(2, 129))
    a = r.standard_normal([parts] + free).astype(np.float32)
    b = r.standard_normal([parts] + free).astype(np.float32)
    ka, sub_a = _slices(r, a.shape)
    # b's window has a's shape, at other offsets and steps
    kb = []
    for d, n in enumerate(sub_a):
        size = b.shape[d]
        step = 1 if n == 1 else int(r.integers(1, max(2, (size - 1) // max(1, n - 1) + 1)))
        while step > 1 and step * (n - 1) >= size:
            step -= 1
        start = int(r.integers(0, size - step * (n - 1)))
        kb.append(slice(start, start + step * (n - 1) + 1, step))
    kb = tuple(kb)
    got = strided_elementwise(a, b, ka, kb)
    want = a[ka] - b[kb]
    np.testing.assert_array_equal(got, want)


@bn.jit
def reduce_middle(x_in, axes):
    x = nl.load(x_in)
    s = nl.max(x, axis=axes)
    out = nl.ndarray(s.shape, dtype=s.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=s)
    return out


@pytest.mark.parametrize("axes", [[1], [2], [3], [1, 2], [2, 3], [1, 3], [1, 2, 3]])
def test_reductions_over_any_free_axes(axes):
    x = rng(300).standard_normal((64, 3, 5, 7)).astype(np.float32)
    got = reduce_middle(x, axes)
    want = x.max(axis=tuple(axes))
    np.testing.assert_array_equal(got.reshape(want.shape), want)
