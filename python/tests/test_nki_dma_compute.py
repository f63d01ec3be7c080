"""birsim.nki's nisa.dma_compute (python/birsim/nki/_dma_compute.py) against NumPy / ml_dtypes
goldens worked from AWS's documented semantics (nki/api/nki/isa/__init__.py, dma_compute):

    dst = srcs[0] * scales[0] + srcs[1] * scales[1] + ...   (reduce_op add, every scale 1.0)

"The DMA engines perform all computations in float32 precision internally. Input tensors are
automatically cast from their source data types to float32 before computation, and the final
float32 result is cast to the output data type": so the golden casts every source to float32,
adds them in float32 in the formula's order (srcs[0] first), and casts the sum once to dst's
dtype (ml_dtypes' round-to-nearest-even). The read-modify-write forms are
dst(HBM)[indices] = dst[indices] + src(SB) (scatter) and dst(SB) = dst + src(HBM)[indices]
(gather); oob_mode.skip "silently skips any operations involving out-of-bounds indices". Bit for
bit; errors at the kernel line."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

import birsim
import birsim.nki as bn
from nki_support import KERNELS, markers, rng

from nki_kernels import dma_compute as K  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)


def golden_sum(dst_dtype, *srcs):
    """AWS: each source cast to float32, added in float32 in order, one cast to dst's dtype."""
    acc = np.asarray(srcs[0]).astype(np.float32)
    for s in srcs[1:]:
        acc = (acc + np.asarray(s).astype(np.float32)).astype(np.float32)
    return acc.astype(dst_dtype)


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}"))


def _insts(text):
    return json.loads(text)["functions"][0]["blocks"][0]["instructions"]


def _normal(seed, shape, dtype, scale=1.0):
    if np.dtype(dtype).kind == "i":
        return rng(seed).integers(-1000, 1000, shape).astype(dtype)
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32).astype(dtype)


# ---------------------------------------------------------------------------------------------
# dst = sum of the sources (no vector offset)


@pytest.mark.parametrize("dt", [F32, BF16, F16])
def test_two_sources(dt):
    a, b = _normal(1, (128, 64), dt), _normal(2, (128, 64), dt, 3.0)
    same_bits(K.sum2(a, b, dt), golden_sum(dt, a, b))


@pytest.mark.parametrize("src_dt,dst_dt", [(F32, BF16), (BF16, F32), (F16, BF16), (BF16, F16)])
def test_two_sources_cast_once_into_dst(src_dt, dst_dt):
    a, b = _normal(3, (64, 96), src_dt), _normal(4, (64, 96), src_dt, 1e-2)
    same_bits(K.sum2(a, b, dst_dt), golden_sum(dst_dt, a, b))


@pytest.mark.parametrize("dt", [F32, BF16])
def test_three_sources(dt):
    a, b, c = _normal(5, (32, 128), dt), _normal(6, (32, 128), dt, 4.0), _normal(7, (32, 128), dt, 0.25)
    same_bits(K.sum3(a, b, c, dt), golden_sum(dt, a, b, c))


def test_bf16_three_sources_round_once():
    """1 + 2^-8 + 2^-8 in bf16 (an ulp of 1 is 2^-7): fp32 sums to 1 + 2^-7 exactly, one cast
    keeps it; rounding after each add would give 1 + 2^-8 -> 1 (a tie to even), then 1 again.
    The second column: 2^-8 + 1 + 2^-8. The third: (1 + 2^-7) + 2^-8 - 2^-9 is 1 + 2^-7 + 2^-9
    in fp32, a quarter ulp above 1 + 2^-7, so 1 + 2^-7; rounding after the first add ties to the
    even 1 + 2^-6, which the -2^-9 does not bring back."""
    a = np.array([[1.0, 2.0**-8, 1 + 2.0**-7]], np.float32).astype(BF16)
    b = np.array([[2.0**-8, 1.0, 2.0**-8]], np.float32).astype(BF16)
    c = np.array([[2.0**-8, 2.0**-8, -(2.0**-9)]], np.float32).astype(BF16)
    want = golden_sum(BF16, a, b, c)
    np.testing.assert_array_equal(want.astype(np.float32), [[1 + 2.0**-7, 1 + 2.0**-7, 1 + 2.0**-7]])
    twice = ((a.astype(np.float32) + b.astype(np.float32)).astype(BF16).astype(np.float32)
             + c.astype(np.float32)).astype(BF16)
    assert not np.array_equal(want.view(np.uint16), twice.view(np.uint16))
    same_bits(K.sum3(a, b, c, BF16), want)


def test_fp32_arithmetic_in_source_order():
    """2^30 + 1 - 2^30: in fp32, 2^30 + 1 rounds to 2^30 (24-bit significand), so the sum is 0,
    not 1 (AWS: float32 internally; the formula adds srcs[0], srcs[1], ... in order)."""
    a = np.full((4, 8), 2.0**30, np.float32).astype(BF16)
    b = np.ones((4, 8), np.float32).astype(BF16)
    c = -a
    want = golden_sum(BF16, a, b, c)
    assert (want.astype(np.float32) == 0).all()
    same_bits(K.sum3(a, b, c, BF16), want)


def test_plain_form_is_one_cce_dmacopy():
    a, b = _normal(8, (16, 16), F32), _normal(9, (16, 16), F32)
    text = bn.trace_json(K.sum3)(a, b, a, F32)
    cce = [x for x in _insts(text) if x["opcode"] == "DMACopy" and x.get("mode") == "CCE"]
    assert len(cce) == 1 and cce[0]["cce_op"] == "add" and len(cce[0]["ins"]) == 3
    assert cce[0]["name"].startswith("dma_compute@dma_compute.py:")


def test_one_source_adds_into_dst():
    """One source is `dst += src` (AWS's migration guide), in fp32, cast once."""
    acc = _normal(16, (16, 40), F32, 100.0).astype(BF16)
    a = _normal(17, (16, 40), F32, 3.0).astype(BF16)
    same_bits(K.one_source(acc, a), golden_sum(BF16, acc, a))


def test_one_source_scatter_adds_into_the_table():
    table = _normal(18, (32, 16), F32)
    src = _normal(19, (8, 16), F32)
    idx = np.array([3, 0, 31, 7, 8, 12, 30, 1], np.uint16).reshape(8, 1)
    want = table.copy()
    want[idx[:, 0]] = table[idx[:, 0]] + src
    same_bits(K.one_source_scatter(table.copy(), src, idx), want)


def test_older_argument_order():
    a, b = _normal(10, (8, 32), F32), _normal(11, (8, 32), F32)
    same_bits(K.sum_older_order(a, b), golden_sum(F32, a, b))


def test_shapes_may_differ_when_element_counts_match():
    a = _normal(12, (16, 8), F32)
    b = _normal(13, (16, 4, 2), F32)
    same_bits(K.sum_reshaped(a, b), golden_sum(F32, a.reshape(-1), b.reshape(-1)))


def test_dst_may_be_a_source():
    a, b = _normal(14, (32, 16), BF16), _normal(15, (32, 16), BF16)
    same_bits(K.accumulate_in_place(a, b), golden_sum(BF16, golden_sum(BF16, a, b), b))


# ---------------------------------------------------------------------------------------------
# read-modify-write with a vector offset

ROWS, P, F = 100, 32, 48
IDX = (3 * np.arange(P)).astype(np.uint32).reshape(P, 1)  # unique, rows 0..93


def _scatter_golden(table, idx, data, skip=False):
    want = table.copy()
    for p, i in enumerate(idx[:, 0].astype(np.int64)):
        if 0 <= i < table.shape[0]:
            want[i] = golden_sum(table.dtype, table[i], data[p])
        elif not skip:
            raise AssertionError("golden: index out of range")
    return want


def _gather_golden(table, idx, init, skip=False):
    want = init.copy()
    for p, i in enumerate(idx[:, 0].astype(np.int64)):
        if 0 <= i < table.shape[0]:
            want[p] = golden_sum(init.dtype, table[i], init[p])
        elif not skip:
            raise AssertionError("golden: index out of range")
    return want


@pytest.mark.parametrize("table_dt,data_dt", [(F32, F32), (BF16, BF16), (F16, F16), (F32, BF16), (BF16, F32),
                                              (np.dtype(np.int32), np.dtype(np.int32))])
def test_scatter_rmw(table_dt, data_dt):
    table = _normal(20, (ROWS, F), table_dt, 8.0)
    data = _normal(21, (P, F), data_dt, 0.01)
    want = _scatter_golden(table, IDX, data)
    arg = table.copy()
    same_bits(K.scatter_rmw(arg, IDX, data, False), want)
    same_bits(arg, want)  # the input table is updated in place


@pytest.mark.parametrize("table_dt,init_dt", [(F32, F32), (BF16, BF16), (BF16, F32), (F32, BF16),
                                             (np.dtype(np.int32), np.dtype(np.int32))])
def test_gather_rmw(table_dt, init_dt):
    table = _normal(22, (ROWS, F), table_dt, 0.01)
    init = _normal(23, (P, F), init_dt, 8.0)
    same_bits(K.gather_rmw(table, IDX, init, False), _gather_golden(table, IDX, init))


def test_int32_adds_in_fp32():
    """AWS: int32 sources are cast to float32 and added there: 2^24 + 1 is 2^24 in fp32, so
    2^24 + 1 (a) plus 2 gives 2^24 + 2, not the integer 2^24 + 3."""
    table = np.full((ROWS, F), 2**24 + 1, np.int32)
    data = np.full((P, F), 2, np.int32)
    want = _scatter_golden(table, IDX, data)
    assert want[0, 0] == 2**24 + 2
    same_bits(K.scatter_rmw(table.copy(), IDX, data, False), want)
    init = np.full((P, F), 2**24 + 1, np.int32)
    same_bits(K.gather_rmw(np.full((ROWS, F), 2, np.int32), IDX, init, False),
              _gather_golden(np.full((ROWS, F), 2, np.int32), IDX, init))


def test_bf16_scatter_rmw_rounds_once():
    """bf16 table row 1.0, fp32 data 2^-8 + 2^-20: fp32 sum 1 + 2^-8 + 2^-20 rounds up to
    1 + 2^-7 in bf16; casting the data to bf16 first (2^-8) and then adding would tie to 1.0."""
    table = np.ones((ROWS, F), np.float32).astype(BF16)
    data = np.full((P, F), 2.0**-8 + 2.0**-20, np.float32)
    want = _scatter_golden(table, IDX, data)
    assert want[0, 0].astype(np.float32) == 1 + 2.0**-7
    same_bits(K.scatter_rmw(table.copy(), IDX, data, False), want)
    init = np.ones((P, F), np.float32).astype(BF16)
    same_bits(K.gather_rmw(np.full((ROWS, F), 2.0**-8 + 2.0**-20, np.float32), IDX, init, False),
              np.full((P, F), 1 + 2.0**-7, np.float32).astype(BF16))


def test_same_dtype_rmw_is_one_dmacopy_add():
    table, data = _normal(24, (ROWS, F), F32), _normal(25, (P, F), F32)
    insts = _insts(bn.trace_json(K.scatter_rmw)(table, IDX.astype(np.uint16), data, False))
    dma = [x for x in insts if x["name"].startswith("dma_compute@")]
    assert len(dma) == 1 and dma[0]["opcode"] == "DMACopy" and dma[0]["mode"] == "Copy"
    assert dma[0]["cce_op"] == "add" and dma[0]["outs"][0]["vector_offset"]["dtype"] == "uint16"
    insts = _insts(bn.trace_json(K.gather_rmw)(table, IDX.astype(np.uint16), data, False))
    dma = [x for x in insts if x["name"].startswith("dma_compute@")]
    assert len(dma) == 1 and dma[0]["cce_op"] == "add" and "vector_offset" in dma[0]["ins"][0]


@pytest.mark.parametrize("dt", [F32, BF16])
def test_scatter_rmw_oob_skip(dt):
    """Indices 0, 4, ..., 124 into 100 rows, one negative: the out-of-range rows are skipped."""
    idx = (4 * np.arange(P)).astype(np.int32).reshape(P, 1)
    idx[3] = -2
    table = _normal(26, (ROWS, F), dt)
    data = _normal(27, (P, F), F32 if dt == BF16 else dt)
    want = _scatter_golden(table, idx, data, skip=True)
    same_bits(K.scatter_rmw(table.copy(), idx, data, True), want)


@pytest.mark.parametrize("table_dt,init_dt", [(F32, F32), (F32, BF16)])
def test_gather_rmw_oob_skip(table_dt, init_dt):
    idx = (4 * np.arange(P)).astype(np.uint32).reshape(P, 1)
    table = _normal(28, (ROWS, F), table_dt)
    init = _normal(29, (P, F), init_dt)
    same_bits(K.gather_rmw(table, idx, init, True), _gather_golden(table, idx, init, skip=True))


def _call_line(kernel):
    """The line of the first dma_compute call in ``kernel``."""
    lines = (KERNELS / "dma_compute.py").read_text().splitlines()
    start = next(n for n, s in enumerate(lines, 1) if s.startswith(f"def {kernel}("))
    return next(n for n, s in enumerate(lines, 1) if n > start and "nisa.dma_compute(" in s)


@pytest.mark.parametrize("kernel,mixed", [("scatter_rmw", False), ("scatter_rmw", True), ("gather_rmw", False),
                                          ("gather_rmw", True)])
def test_oob_error_faults_at_the_kernel_line(kernel, mixed):
    """Index 124 into 100 rows with oob_mode.error: birsim's out-of-bounds fault names the call."""
    idx = (4 * np.arange(P)).astype(np.uint32).reshape(P, 1)
    table = _normal(30, (ROWS, F), BF16 if mixed else F32)
    data = _normal(31, (P, F), F32)
    line = _call_line(kernel)
    with pytest.raises(birsim.Fault, match=rf"dma_compute@dma_compute.py:{line}#"):
        getattr(K, kernel)(table, idx, data, False)


# ---------------------------------------------------------------------------------------------
# errors at the kernel line

LINES = markers(KERNELS / "dma_compute.py")
A = np.ones((16, 32), np.float32)
T100 = np.zeros((ROWS, F), np.float32)
D32 = np.ones((P, F), np.float32)
CASES = [
    ("bad_reduce_op", (A, A), "reduce_op", "only nl.add is supported"),
    ("bad_scales", (A, A), "scales", "every scale must be 1.0"),
    ("bad_psum", (A,), "psum", "dst must be in SBUF or HBM"),
    ("bad_skip_without_indices", (A, A), "skip", "oob_mode.skip applies to an indirect access"),
    ("bad_sizes", (A, A), "sizes", "element counts must match"),
    ("bad_not_unique", (T100, IDX, D32), "unique", "unique_indices=False"),
    ("bad_scatter_src_in_hbm", (T100, IDX, D32), "scatter_hbm", "data source must be an SBUF tile"),
    ("bad_gather_dst_in_hbm", (T100, IDX, D32), "gather_hbm", "dst must be an SBUF tile"),
    ("bad_gather_other_not_dst", (T100, IDX, D32), "gather_other", "one source that is dst itself"),
    ("bad_three_with_indices", (T100, IDX, D32), "three", "exactly 2 sources"),
    ("bad_int32_gather_skip", (T100.astype(np.int32), IDX, D32.astype(np.int32)), "int_skip",
     "would change a skipped row"),
]


@pytest.mark.parametrize("kernel,args,marker,why", CASES, ids=[c[0] for c in CASES])
def test_error_at_kernel_line(kernel, args, marker, why):
    with pytest.raises(bn.NkiError) as info:
        getattr(K, kernel)(*args)
    e = info.value
    assert e.lineno == LINES[marker], str(e)
    assert e.call == "dma_compute", str(e)
    assert why in str(e)
    assert str(e).startswith(f"{e.filename}:{e.lineno}: dma_compute: ")
