"""Every BIR dtype round-trips through `birsim.run` on a copy program (Load, Save; no cast), as
its natural NumPy / ml_dtypes dtype and as raw bits. The expected output is the input itself
(a copy's definition), compared bit for bit; every bit pattern of the 1-byte formats is used,
NaNs included."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import birsim
from conftest import copy_program

# BIR dtype -> (container bytes, the dtype `run` returns: written out here independently of
# birsim.DTYPES, so a wrong table entry fails).
EXPECTED = {
    "uint8": (1, np.dtype(np.uint8)),
    "int8": (1, np.dtype(np.int8)),
    "float4_e2m1fn_x4": (2, np.dtype(np.uint16)),
    "float8e3": (1, np.dtype(ml_dtypes.float8_e3m4)),
    "float8e4": (1, np.dtype(ml_dtypes.float8_e4m3)),
    "float8_e4m3fn": (1, np.dtype(ml_dtypes.float8_e4m3fn)),
    "float8_e8m0fnu": (1, np.dtype(ml_dtypes.float8_e8m0fnu)),
    "float8e5": (1, np.dtype(ml_dtypes.float8_e5m2)),
    "float8_e4m3fn_x4": (4, np.dtype(np.uint32)),
    "float8_e5m2_x4": (4, np.dtype(np.uint32)),
    "uint16": (2, np.dtype(np.uint16)),
    "int16": (2, np.dtype(np.int16)),
    "bfloat16": (2, np.dtype(ml_dtypes.bfloat16)),
    "float16": (2, np.dtype(np.float16)),
    "uint32": (4, np.dtype(np.uint32)),
    "int32": (4, np.dtype(np.int32)),
    "float32": (4, np.dtype(np.float32)),
    "float32r": (4, np.dtype(np.float32)),
    "uint64": (8, np.dtype(np.uint64)),
    "int64": (8, np.dtype(np.int64)),
}

ROWS, COLS = 8, 32


def test_every_bir_dtype_is_covered():
    # The 20 dtypes of re-facts §1 (docs/fidelity.md J1), each with a mapping.
    assert len(EXPECTED) == 20
    assert sorted(EXPECTED) == sorted(birsim.DTYPES)


def bits(size: int) -> np.ndarray:
    """ROWS x COLS raw bit patterns: every byte value for 1-byte types, else a fixed mix of
    random patterns with all-zero, all-one and sign-bit-only words."""
    raw = np.dtype(f"<u{size}")
    if size == 1:
        return np.arange(256, dtype=raw).reshape(ROWS, COLS)
    rng = np.random.default_rng(size)
    b = rng.integers(0, np.iinfo(raw).max, size=(ROWS, COLS), dtype=raw, endpoint=True)
    b.flat[:3] = [0, np.iinfo(raw).max, 1 << (8 * size - 1)]
    return b


@pytest.mark.parametrize("dtype", sorted(EXPECTED))
def test_natural_dtype_round_trip(dtype):
    size, natural = EXPECTED[dtype]
    raw = bits(size)
    x = raw.view(natural)
    out = birsim.run(copy_program(dtype, size, ROWS, COLS), {"x": x})
    assert list(out) == ["y"]
    y = out["y"]
    assert y.dtype == natural
    assert y.shape == (ROWS, COLS)
    assert y.flags.c_contiguous and y.flags.writeable
    np.testing.assert_array_equal(y.view(raw.dtype), raw)


@pytest.mark.parametrize("dtype", sorted(d for d, (s, n) in EXPECTED.items() if n.kind not in "iu"))
def test_raw_bits_accepted(dtype):
    # The CLI's .npy rule: bfloat16, fp8, float32r and the _x4 dtypes also as unsigned integers
    # of their width holding the raw bits; the output still comes back as the natural dtype.
    size, natural = EXPECTED[dtype]
    raw = bits(size)
    if dtype in ("float32", "float16"):
        with pytest.raises(birsim.InputError):  # the CLI takes <f4 / <f2 only for these
            birsim.run(copy_program(dtype, size, ROWS, COLS), {"x": raw})
        return
    y = birsim.run(copy_program(dtype, size, ROWS, COLS), {"x": raw})["y"]
    assert y.dtype == natural
    np.testing.assert_array_equal(y.view(raw.dtype), raw)


def test_inputs_are_not_modified():
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    before = x.copy()
    y = birsim.run(copy_program("float32", 4, ROWS, COLS), {"x": x})["y"]
    y[0, 0] = 99.0  # the output owns its memory
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_threads_give_the_same_bits(threads):
    x = bits(2).view(ml_dtypes.bfloat16)
    y = birsim.run(copy_program("bfloat16", 2, ROWS, COLS), {"x": x}, threads=threads)["y"]
    np.testing.assert_array_equal(y.view(np.uint16), x.view(np.uint16))
