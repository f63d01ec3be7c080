"""birsim.nki's gathers, scatters and selection / scan calls (python/birsim/nki/_gather.py)
against NumPy goldens worked from AWS's documented semantics (nki/api/nki/isa/__init__.py,
nki/api/nki/language/__init__.py, and the NumPy oracles of AWS's nki/test/test_nki_*.py), bit
for bit; errors at the kernel line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import birsim
import birsim.nki as bn
from nki_support import KERNELS, markers, rng

from nki_kernels import gather as G  # noqa: E402

F32_MIN = np.finfo(np.float32).min
DATA = rng(70).standard_normal((128, 512)).astype(np.float32)
EVEN = 2 * np.arange(64)


def _insts(text):
    return json.loads(text)["functions"][0]["blocks"][0]["instructions"]


# ---------------------------------------------------------------------------------------------
# indirect DMA


@pytest.mark.parametrize("dt", [np.uint32, np.int32, np.uint16, np.uint8])
def test_ap_vector_offset_gather(dt):
    """AWS dma_copy's gather example: row p of the result is data[indices[p]]."""
    idx = EVEN.astype(dt).reshape(64, 1)
    np.testing.assert_array_equal(G.indirect_gather_kernel(DATA, idx), DATA[EVEN])


def test_gather_is_one_dmacopy_with_a_uint16_vector_offset():
    text = bn.trace_json(G.indirect_gather_kernel)(DATA, EVEN.astype(np.uint16).reshape(64, 1))
    dma = [x for x in _insts(text) if x["ins"] and x["ins"][0].get("vector_offset")]
    assert len(dma) == 1 and dma[0]["opcode"] == "DMACopy" and dma[0]["mode"] == "Copy"
    src = dma[0]["ins"][0]
    assert src["indirect_dim"] == "W" and src["indirect_dim_max_index"] == 128
    assert src["ap"] == [[512, 64], [1, 512]] and src["vector_offset"]["dtype"] == "uint16"


def test_the_index_tile_stays_live_until_the_gather_reads_it():
    """The gather's SBUF destination never takes the index tile's bytes: the tile is live
    through the DMACopy that reads it as its vector offset."""
    prog = json.loads(bn.trace_json(G.indirect_gather_kernel)(DATA, EVEN.astype(np.uint16).reshape(64, 1)))
    locs = {a["name"]: a["memorylocations"][0] for a in prog["functions"][0]["allocations"]}
    dma = [x for x in _insts(json.dumps(prog)) if x["ins"] and x["ins"][0].get("vector_offset")][0]
    idx, dst = locs[dma["ins"][0]["vector_offset"]["memref"]], locs[dma["outs"][0]["memref"]]
    assert idx["type"] == dst["type"] == "SB"
    spans = sorted((loc["addr"], loc["addr"] + loc["dims"][1]) for loc in (idx, dst))
    assert spans[0][1] <= spans[1][0], spans


def test_int32_indices_are_narrowed_by_two_exact_instructions():
    text = bn.trace_json(G.indirect_gather_kernel)(DATA, EVEN.astype(np.int32).reshape(64, 1))
    ops = [(x["opcode"], x.get("op0"), x.get("op1")) for x in _insts(text)]
    assert ("TensorScalar", "max", "min") in ops and ("TensorScalarPtr", "bitwise_and", "bypass") in ops


def test_ap_vector_offset_scatter_updates_the_output_in_place():
    src = rng(71).standard_normal((64, 512)).astype(np.float32)
    out = np.full((128, 512), -1, np.float32)
    want = out.copy()
    want[EVEN] = src
    got = G.indirect_scatter_kernel(src, EVEN.astype(np.uint32).reshape(64, 1), out)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want)


def test_oob_skip_keeps_the_rows_of_out_of_range_indices():
    """AWS test_nki_isa_dma_copy.py: indices 3p over 128 rows, oob_mode.skip: rows 0..42 gathered,
    the rest keep the fill; a negative int32 index is out of range too."""
    idx = (3 * np.arange(64)).astype(np.int32).reshape(64, 1)
    idx[5] = -1
    fill = np.full((64, 512), -1, np.float32)
    want = fill.copy()
    want[:43] = DATA[3 * np.arange(43)]
    want[5] = -1
    np.testing.assert_array_equal(G.gather_skip(DATA, idx, fill), want)


def test_out_of_range_index_faults_at_the_kernel_line():
    line = next(n for n, s in enumerate((KERNELS / "gather.py").read_text().splitlines(), 1)
                if "data_tile = nl.load(data_tensor[idx_tile[i_p, 0], i_f])" in s)
    idx = EVEN.astype(np.int32)
    idx[3] = 128
    with pytest.raises(birsim.Fault, match=rf"load@gather.py:{line}#"):
        G.example_indirect_load_1(DATA, idx)


def test_scatter_add_dst_rmw_op():
    """The older dma_copy(..., dst_rmw_op=np.add): b = 1; b[2k] += a[k] (AWS test_nki_isa_dma_copy)."""
    src = rng(72).standard_normal((64, 512)).astype(np.float32)
    out = np.ones((128, 512), np.float32)
    want = out.copy()
    want[EVEN] += src
    np.testing.assert_array_equal(G.scatter_add(src, EVEN.astype(np.int32).reshape(64, 1), out), want)


def test_vector_select_gathers_blocks():
    t = rng(73).standard_normal((10, 4, 8)).astype(np.float32)
    ii = np.array([[3], [0], [9], [3]], np.int32)
    np.testing.assert_array_equal(G.vector_select_rows(t, ii), t[ii[:, 0]])


def test_older_api_tile_indexed_load_and_store():
    """AWS test_nki_nl_load_store_indirect.py: in[idx] and out[idx] = in, idx = 2·arange(64)."""
    np.testing.assert_array_equal(G.example_indirect_load_1(DATA, EVEN.astype(np.int32)), DATA[EVEN])
    np.testing.assert_array_equal(G.example_indirect_load_2(DATA), DATA[EVEN])
    src = rng(74).standard_normal((64, 512)).astype(np.float32)
    out = np.zeros((128, 512), np.float32)
    want = out.copy()
    want[EVEN] = src
    np.testing.assert_array_equal(G.example_indirect_save_1(src, EVEN.astype(np.int32), out), want)


def test_embedding_lookup_tutorial():
    """Rows of an embedding table picked by token ids, 128 per indirect DMA."""
    r = rng(75)
    table = r.standard_normal((1000, 64)).astype(np.float32)
    ids = r.integers(0, 1000, 256).astype(np.int32)
    np.testing.assert_array_equal(G.embedding_lookup(table, ids), table[ids])


def test_embedding_lookup_bf16_with_uint16_ids():
    import ml_dtypes

    r = rng(76)
    table = r.standard_normal((70000, 32)).astype(ml_dtypes.bfloat16)
    ids = r.integers(0, 70000, 128).astype(np.uint16)
    got = G.embedding_lookup(table, ids)
    assert got.dtype == table.dtype
    np.testing.assert_array_equal(got.view(np.uint16), table[ids].view(np.uint16))


# ---------------------------------------------------------------------------------------------
# within-SBUF gathers


def test_nc_n_gather():
    """AWS nc_n_gather: data (32, 64), uint32 indices 5j: np.take_along_axis per partition."""
    d = rng(77).standard_normal((32, 64)).astype(np.float32)
    ii = np.tile((5 * np.arange(10)).astype(np.uint32), (32, 1))
    np.testing.assert_array_equal(G.n_gather(d, ii), np.take_along_axis(d, ii.astype(np.int64), -1))


def test_gather_flattened():
    """AWS test_nki_nl_gather_flattened.py: np.take_along_axis(data, indices, -1)."""
    r = rng(78)
    d = r.standard_normal((32, 64)).astype(np.float32)
    ii = r.integers(0, 64, (32, 10)).astype(np.uint32)
    np.testing.assert_array_equal(G.gather_flat(d, ii), np.take_along_axis(d, ii.astype(np.int64), -1))


def test_local_gather():
    """AWS test_nki_isa_local_gather.py's NUMPY_SEMANTICS: per core, the 16-partition index slice
    flattened partition-first, the first num_valid kept, rows of 4 taken from the core's own
    partitions (the kernel passes index·4, element offsets)."""
    r = rng(79)
    src = r.standard_normal((128, 512, 4)).astype(np.float32)
    index = np.tile(r.integers(0, 512, (16, 4)).astype(np.uint16), (8, 1))
    nv = 64
    want = np.zeros((128, nv, 4), np.float32)
    for c in range(8):
        ii = index[16 * c:16 * c + 16].flatten(order="F")[:nv].astype(np.int64)
        want[16 * c:16 * c + 16] = np.take(src[16 * c:16 * c + 16], ii, axis=1)
    np.testing.assert_array_equal(G.local_gather_kernel(src, (index * 4).astype(np.uint16), nv), want)


# ---------------------------------------------------------------------------------------------
# selection


def test_nl_where():
    r = rng(80)
    c = (r.random((128, 64)) < 0.5).astype(np.float32)
    x = r.standard_normal((128, 64)).astype(np.float32)
    y = r.standard_normal((128, 64)).astype(np.float32)
    np.testing.assert_array_equal(G.where_kernel(c, x, y), np.where(c == 1.0, x, y))


@pytest.mark.parametrize("tile,reverse", [(False, False), (True, False), (True, True)])
def test_select_reduce(tile, reverse):
    """AWS select_reduce: np.where(pred, on_true, on_false) and its row max (reset_reduce)."""
    r = rng(81)
    p = (r.random((128, 512)) < 0.5).astype(np.uint8)
    t = r.standard_normal((128, 512)).astype(np.float32)
    f = r.standard_normal((128, 1)).astype(np.float32) if tile else -0.25
    res = np.where((p == 0) if reverse else (p != 0), t, np.float32(f) if not tile else f).astype(np.float32)
    got, mx = G.select_reduce_kernel(p, t, f, reverse)
    np.testing.assert_array_equal(got, res)
    np.testing.assert_array_equal(mx, res.max(1, keepdims=True))


def test_range_select():
    """AWS range_select (test 19 of nki-semantics.md): bound0 0, bound1 64, range_start 32, ge / lt:
    columns j < 32 kept, the rest FP32_MIN; the row max of the result."""
    x = rng(82).standard_normal((128, 512)).astype(np.float32)
    b0 = np.zeros((128, 1), np.float32)
    b1 = np.full((128, 1), 64, np.float32)
    j = np.float32(32) + np.arange(512, dtype=np.float32)
    res = np.where((j >= b0) & (j < b1), x, F32_MIN).astype(np.float32)
    got, mx = G.range_select_kernel(x, b0, b1, 32)
    np.testing.assert_array_equal(got, res)
    np.testing.assert_array_equal(mx, res.max(1, keepdims=True))


# ---------------------------------------------------------------------------------------------
# reductions and scans


def test_tensor_partition_reduce_add_of_integers_is_exact():
    """AWS test_nki_isa_partition_reduce.py: (128, 32, 4) → np.sum(a, 0, keepdims) (small
    integers, so every fp32 sum order gives the same bits)."""
    x = rng(83).integers(-50, 50, (128, 32, 4)).astype(np.float32)
    np.testing.assert_array_equal(G.partition_reduce(x, np.add), x.sum(0, keepdims=True))


def test_tensor_partition_reduce_max():
    x = rng(84).standard_normal((128, 32, 4)).astype(np.float32)
    np.testing.assert_array_equal(G.partition_reduce(x, np.maximum), x.max(0, keepdims=True))


def test_tensor_scalar_cumulative_cumsum_and_chain():
    """AWS test_nki_isa_tensor_scalar_cumulative.py: ones(128, 64), add → cumsum; a second call
    with reduce continues from 64."""
    x = np.ones((128, 64), np.float32)
    a, b = G.cumulative(x, np.add, 0.0, None, True)
    np.testing.assert_array_equal(a, np.cumsum(x, 1))
    np.testing.assert_array_equal(b, 64 + np.cumsum(x, 1))


def test_tensor_scalar_cumulative_load_reduce():
    x = np.ones((128, 64), np.float32)
    a, _ = G.cumulative(x, np.add, 0.0, 1.0, False)
    np.testing.assert_array_equal(a, np.cumsum(x, 1) + 1)


def test_tensor_scalar_cumulative_running_max():
    """reset_reduce starts max at -inf: np.maximum.accumulate(x + imm0)."""
    x = rng(85).standard_normal((128, 64)).astype(np.float32)
    a, _ = G.cumulative(x, np.maximum, 0.5, None, False)
    np.testing.assert_array_equal(a, np.maximum.accumulate(x + np.float32(0.5), 1))


def test_activate2_on_gen4(monkeypatch):
    """AWS activate2: relu((x · 2) − 0.5), each step one fp32 operation, and the row max."""
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    x = rng(86).standard_normal((128, 64)).astype(np.float32)
    v = (x * np.float32(2.0)) - np.float32(0.5)
    res = np.maximum(v, np.float32(0)).astype(np.float32)
    got, mx = G.activate2_kernel(x, 2.0, 0.5)
    np.testing.assert_array_equal(got, res)
    np.testing.assert_array_equal(mx, res.max(1, keepdims=True))


def test_activate2_needs_gen4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    with pytest.raises(bn.NkiError, match="NeuronCore-v4"):
        G.activate2_kernel(np.ones((128, 64), np.float32), 2.0, 0.5)


# ---------------------------------------------------------------------------------------------
# GpSimd index calls, DMA transpose


def test_nonzero_with_count():
    """AWS nonzero_with_count: on partitions 0, 16, ..., 112 the nonzero positions + offset,
    padding -1, the count last; the other partitions keep what they held (7)."""
    x = (rng(87).random((128, 16)) < 0.4).astype(np.float32) * 3
    want = np.full((128, 17), 7, np.int32)
    for p in range(0, 128, 16):
        pos = np.nonzero(x[p])[0] + 5
        want[p, :] = -1
        want[p, :len(pos)] = pos
        want[p, 16] = len(pos)
    np.testing.assert_array_equal(G.nonzero(x, 5), want)


def test_sequence_bounds():
    """AWS sequence_bounds (nki-semantics.md case 30): ids [0,1,1,2,2,2,0,3,3] → starts
    [9,1,1,3,3,3,9,7,7], ends [-1,3,3,6,6,6,-1,9,9]."""
    ids = np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]], np.float32)
    want = np.array([[[9, 1, 1, 3, 3, 3, 9, 7, 7], [-1, 3, 3, 6, 6, 6, -1, 9, 9]]], np.float32)
    np.testing.assert_array_equal(G.seq_bounds(ids), want)


@pytest.mark.parametrize("shape,axes", [((16, 64), (1, 0)), ((4, 8, 16), (2, 1, 0)), ((2, 3, 4, 5), (3, 1, 2, 0))])
def test_dma_transpose(shape, axes):
    import ml_dtypes

    x = rng(88).standard_normal(shape).astype(ml_dtypes.bfloat16)
    got = G.dma_transpose_kernel(x)
    np.testing.assert_array_equal(got.view(np.uint16), np.transpose(x, axes).view(np.uint16))


# ---------------------------------------------------------------------------------------------
# errors at the kernel line

LINES = markers(KERNELS / "gather.py")
IDX64 = EVEN.reshape(64, 1)
CASES = [
    ("bad_index_dtype", (DATA, IDX64.astype(np.int16)), "idx_dtype", "dma_copy", "uint16, uint8, uint32 or int32"),
    ("bad_hwdge", (DATA, IDX64.astype(np.uint32)), "hwdge", "dma_copy", "needs dge_mode swdge or unknown"),
    ("bad_n_gather_dtype", (np.ones((32, 64), np.float32), np.zeros((32, 10), np.int32)), "n_gather_dtype",
     "nc_n_gather", "indices must be uint32"),
    ("bad_local_gather_elems", (np.ones((128, 64), np.float32), np.zeros((128, 4), np.uint16)), "elems",
     "local_gather", "num_elem_per_idx must be 1, 2, 4, 8, 16 or 32"),
    ("bad_range_select_fill", (np.ones((128, 64), np.float32), np.zeros((128, 1), np.float32),
                               np.ones((128, 1), np.float32)), "fill", "range_select", "must be FP32_MIN"),
    ("bad_select_pred", (np.ones((128, 64), np.float32), np.ones((128, 64), np.float32)), "pred", "select_reduce",
     "predicate must be int8, uint8, int16 or uint16"),
    ("bad_quantize", (np.ones((128, 64), np.float32),), "mx", "quantize_mx", "available only on NeuronCore-v4"),
    ("bad_vector_on_chip", (np.ones((128, 64), np.float32), np.zeros((128, 1), np.int32)), "on_chip",
     "vector_select", "HBM tensors only"),
]


@pytest.mark.parametrize("kernel,args,marker,call,why", CASES, ids=[c[0] for c in CASES])
def test_error_at_kernel_line(kernel, args, marker, call, why):
    with pytest.raises(bn.NkiError) as info:
        getattr(G, kernel)(*args)
    e = info.value
    assert e.lineno == LINES[marker], str(e)
    assert e.call == call, str(e)
    assert why in str(e)
    assert str(e).startswith(f"{e.filename}:{e.lineno}: {call}: ")


def test_wide_table_with_int32_ids_is_refused():
    """A table of more than 65535 rows needs uint16 ids: the exact narrowing of int32 ids keeps an
    out-of-range id out of range only when 65535 is (birsim's HW-DGE indices are uint16)."""
    table = np.zeros((70000, 4), np.float32)
    with pytest.raises(bn.NkiError, match="at most 65535 rows"):
        G.embedding_lookup(table, np.zeros(128, np.int32))


@pytest.mark.parametrize("cols,skip", [(1, False), (2, False), (1, True)])
def test_indirect_dma_transpose(cols, skip):
    """AWS's gather-transpose examples: dst = src[indices.T.flatten()[:F]].T, F = 128 · cols rows
    of 128 bf16 values; with oob_mode.skip an out-of-range index leaves dst's column (0) alone."""
    import ml_dtypes

    r = rng(91)
    src = r.standard_normal((300, 128)).astype(ml_dtypes.bfloat16)
    idx = r.integers(0, 300, (128, cols)).astype(np.uint32)
    if skip:
        idx[7, 0] = 300
    got = G.gather_transpose(src, idx, skip)
    flat = idx.T.flatten()[:128 * cols]
    want = np.zeros((128, 128 * cols), ml_dtypes.bfloat16)
    ok = flat < 300
    want[:, ok] = src[flat[ok]].T
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_tensor_indirection_is_refused_with_the_reason():
    @bn.jit
    def k(x, idx):
        t = bn.language.load(x)
        i = bn.language.load(idx)
        t.indirect(i)
        return x

    with pytest.raises(bn.NkiError, match="vector\\) offset on DMACopy only"):
        k(np.zeros((128, 64), np.float32), np.zeros((128, 4), np.uint32))


def test_gather_between_hbm_tensors():
    idx = np.array([[5], [0], [127], [5]], np.uint32)
    np.testing.assert_array_equal(G.gather_hbm_to_hbm(DATA, idx), DATA[idx[:, 0]])


def test_select_reduce_without_reduction():
    r = rng(89)
    p = (r.random((64, 32)) < 0.5).astype(np.int16)
    t = r.standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_array_equal(G.select_only(p, t), np.where(p != 0, t, np.float32(2.5)))


def test_range_select_max_of_negative_rows_starts_below_them():
    """reset_reduce starts the max below every value (AWS: the registers are reset for the max), so
    a row of negative kept values reduces to its own maximum, not 0."""
    x = -np.abs(rng(90).standard_normal((128, 64)).astype(np.float32)) - 1
    b0 = np.zeros((128, 1), np.float32)
    b1 = np.full((128, 1), 8, np.float32)
    _, mx = G.range_select_kernel(x, b0, b1, 0)
    np.testing.assert_array_equal(mx, x[:, :8].max(1, keepdims=True))


def test_range_select_chained_through_the_accumulator_registers():
    """AWS range_select's reduce_cmd: reset_reduce then reduce keep one running max in the Vector
    Engine's registers; reduce_res takes it after the second call."""
    r = rng(92)
    x = r.standard_normal((128, 64)).astype(np.float32)
    y = r.standard_normal((128, 64)).astype(np.float32)
    want = np.maximum(x[:, :16].max(1), y[:, :16].max(1)).reshape(128, 1)
    np.testing.assert_array_equal(G.range_select_chain(x, y), want)


def test_select_reduce_chained_through_the_accumulator_registers():
    r = rng(93)
    p = (r.random((128, 64)) < 0.5).astype(np.uint8)
    x = r.standard_normal((128, 64)).astype(np.float32)
    y = r.standard_normal((128, 64)).astype(np.float32)
    f = np.float32(-100.0)
    want = np.maximum(np.where(p != 0, x, f).max(1), np.where(p != 0, y, f).max(1)).reshape(128, 1)
    np.testing.assert_array_equal(G.select_reduce_chain(p, x, y), want)
