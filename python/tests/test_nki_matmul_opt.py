"""The tutorial's matmul optimisation steps (hoisted operand loads, blocked M/N) in kernels of our
own: small-integer operands make every product and sum exact in fp32 (|sum| <= 4 * 4 * K =
8192 < 2^24), so the NumPy golden (float64 matmul) is compared bit-exactly; random normal
operands are compared with a tolerance, as the samples do."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nki_support import rng

from nki_kernels import matmul_opt  # noqa: E402


def ints(r, shape, dtype):
    return r.integers(-4, 5, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_hoisted_exact(dtype):
    r = rng(21)
    lhsT, rhs = ints(r, (512, 256), dtype), ints(r, (512, 1024), dtype)
    want = (lhsT.astype(np.float64).T @ rhs.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(matmul_opt.matmul_hoisted(lhsT, rhs), want)


@pytest.mark.parametrize("block_m, block_n", [(1, 1), (2, 2), (2, 1)])
def test_blocked_exact(block_m, block_n):
    r = rng(22)
    lhsT, rhs = ints(r, (256, 512), np.float32), ints(r, (256, 1024), np.float32)
    want = (lhsT.astype(np.float64).T @ rhs.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(matmul_opt.matmul_blocked(lhsT, rhs, block_m, block_n), want)


def test_blocked_random_normal_within_tolerance():
    r = rng(23)
    lhsT = r.standard_normal((384, 256)).astype(np.float32)
    rhs = r.standard_normal((384, 1024)).astype(np.float32)
    got = matmul_opt.matmul_blocked(lhsT, rhs)
    np.testing.assert_allclose(got, lhsT.astype(np.float64).T @ rhs, rtol=1e-4, atol=1e-4)
