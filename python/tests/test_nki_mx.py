"""birsim.nki's MX calls (nisa.quantize_mx, nisa.nc_matmul_mx) and the packed _x4 dtypes, against
NumPy / ml_dtypes goldens worked from AWS's documented semantics, never from birsim:

* quantize_mx (nki/api/nki/isa/__init__.py): groups of 8 partitions × 4 elements per partition;
  block scale X = 2^(⌊log₂ amax⌋ − (Emax − 1)), Emax 8 (float8_e4m3fn) / 15 (float8_e5m2),
  X = 2^-127 for an all-zero group; the values divided by X and cast to the element type; the
  scale is the float8_e8m0fnu code of X (2^(code − 127)). This is the doc's formula, which birsim
  follows over AWS's golden helper (quantize_mx_golden subtracts Emax; docs/fidelity.md Q10).
* nc_matmul_mx (same file, and the deep dive nki/deep-dives/mxfp-matmul.rst): each value times
  2^(scale − 127) of its 8 × 4 block, contracted over the partitions and the four lanes of each
  x4 element: dst[m, n] = Σ_k Σ_q st[k, m, q] · mv[k, n, q].
* the x4 packing (the tutorial's pack_mx_data_into_x4, fidelity N9): lane q of an element is its
  q-th lowest byte (fp8, a uint32 container) or nibble (fp4, a uint16 container; the host's uint8
  bytes hold two lanes each, low nibble first).

Exactness: quantize_mx results (data and scales) are compared bit for bit (the division by a
power of two is exact; the cast is the ml_dtypes round-to-nearest-even the doc's "cast" means).
For nc_matmul_mx the hardware's summation order is not documented, so the exact tests use data
whose dequantized values lie on a coarse grid (multiples of 2^-4 at most 4 · 2 in magnitude):
every partial sum is then exact in fp32 and the float64 golden is the only possible fp32
result, bit for bit, in any order. A bfloat16 PSUM result is that sum rounded once to bfloat16
(round-to-nearest-even; ASSUMED: AWS says only that the output may be bf16). One test also runs
the tutorial's kind of data (random fp8 codes, random scales) within the tutorial's tolerance
(np.allclose, rtol = atol = 5e-2), since there rounding in the sum depends on the order.
"""

from __future__ import annotations

import json
import zlib

import ml_dtypes
import numpy as np
import pytest

import birsim.nki as bn
from nki_support import KERNELS, markers, rng

import nki.language as nl  # noqa: E402 (nki_support installed the switch)

from nki_kernels import mx as K  # noqa: E402

E4M3, E5M2, FP4 = "float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4"
X4 = {E4M3: nl.float8_e4m3fn_x4, E5M2: nl.float8_e5m2_x4, FP4: nl.float4_e2m1fn_x4}
LANE = {E4M3: ml_dtypes.float8_e4m3fn, E5M2: ml_dtypes.float8_e5m2, FP4: ml_dtypes.float4_e2m1fn}
EMAX = {E4M3: 8, E5M2: 15}  # AWS quantize_mx: the largest unbiased exponent of the element type
GRID = np.array([0, 0.5, 1, 1.5, 2, 3, 4, -0.5, -1, -1.5, -2, -3, -4])  # exact in every element type


# ---------------------------------------------------------------------------------------------
# goldens (NumPy / ml_dtypes, from the documented semantics)


def pack(values: np.ndarray, name: str) -> np.ndarray:
    """(P, 4C) values -> (P, C) x4 containers: lane q of container c is value 4c + q, in the q-th
    lowest byte (fp8, uint32) or nibble (fp4, uint16)."""
    codes = np.asarray(values, np.float64).astype(LANE[name]).view(np.uint8).astype(np.uint32)
    P, F = codes.shape
    lanes = codes.reshape(P, F // 4, 4)
    if name == FP4:
        lanes = lanes & 0xF
        return sum(lanes[..., q] << (4 * q) for q in range(4)).astype(np.uint16)
    return sum(lanes[..., q] << (8 * q) for q in range(4)).astype(np.uint32)


def unpack(containers: np.ndarray, name: str) -> np.ndarray:
    """(P, C) containers -> (P, C, 4) lane values as float64."""
    c = containers.astype(np.uint32)
    bits, mask = (4, 0xF) if name == FP4 else (8, 0xFF)
    lanes = np.stack([(c >> (bits * q)) & mask for q in range(4)], axis=-1).astype(np.uint8)
    return lanes.view(LANE[name]).astype(np.float64)


def host_bytes(containers: np.ndarray, name: str) -> np.ndarray:
    """What the tutorial's host passes: fp8 containers as uint32; fp4 as uint8, two lanes a byte
    (the same little-endian bytes)."""
    if name == FP4:
        c = containers.astype(np.uint16)
        return np.stack([c & 0xFF, c >> 8], axis=-1).reshape(c.shape[0], -1).astype(np.uint8)
    return containers.astype(np.uint32)


def quantize_golden(x: np.ndarray, name: str):
    """AWS quantize_mx on a (P, F) tile: (x4 containers (P, F/4), scale codes (P/8, F/4))."""
    v = np.asarray(x).astype(np.float64)
    P, F = v.shape
    amax = np.abs(v).reshape(P // 8, 8, F // 4, 4).max(axis=(1, 3))
    _, e = np.frexp(amax)  # amax = m · 2^e, 0.5 <= m < 1, so floor(log2 amax) = e - 1
    log2x = np.where(amax > 0, (e - 1) - (EMAX[name] - 1), -127)
    assert (log2x >= -127).all() and (log2x <= 127).all()
    X = np.repeat(np.repeat(np.ldexp(1.0, log2x), 8, axis=0), 4, axis=1)
    return pack(v / X, name), (log2x + 127).astype(np.uint8)


def matmul_golden(st, st_scale, mv, mv_scale, st_name, mv_name) -> np.ndarray:
    """AWS nc_matmul_mx in float64: (M, N) from x4 containers (K, M) / (K, N) and packed scale
    codes (K/8, M) / (K/8, N)."""

    def dequant(c, s, name):
        lanes = unpack(c, name)
        factor = np.ldexp(1.0, np.repeat(s.astype(np.int64), 8, axis=0) - 127)
        return lanes * factor[:, :, None]

    return np.einsum("kmq,knq->mn", dequant(st, st_scale, st_name), dequant(mv, mv_scale, mv_name))


def grid_operand(g, K, C, name):
    """x4 containers (K, C) of grid values and scale codes (K/8, C) in 126..128: dequantized
    values are multiples of 2^-2 of magnitude at most 8."""
    values = g.choice(GRID, size=(K, 4 * C))
    return pack(values, name), g.integers(126, 129, size=(K // 8, C)).astype(np.uint8)


def bf16_rne(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32).astype(ml_dtypes.bfloat16)


def _insts(text):
    return json.loads(text)["functions"][0]["blocks"][0]["instructions"]


def _allocs(text):
    return {a["name"]: a for a in json.loads(text)["functions"][0]["allocations"]}


# ---------------------------------------------------------------------------------------------
# the x4 dtypes


def test_x4_dtypes_are_their_containers():
    """AWS: float8_*_x4 are 32-bit, float4_e2m1fn_x4 16-bit (the deep dive); each its own dtype."""
    assert nl.float8_e4m3fn_x4.itemsize == 4 and nl.float8_e5m2_x4.itemsize == 4
    assert nl.float4_e2m1fn_x4.itemsize == 2
    assert len({nl.float8_e4m3fn_x4, nl.float8_e5m2_x4, nl.float4_e2m1fn_x4, nl.uint32, nl.uint16}) == 5
    assert nl.float8_e4m3fn_x4 != nl.float4_e2m1fn_x4


def test_golden_packing_matches_the_tutorials_layout():
    """Our pack() against the layout the tutorial states: fp8 lanes = the uint32's little-endian
    bytes; fp4 two values a byte, low nibble first."""
    v = rng(1).choice(GRID, size=(8, 16))
    p8 = pack(v, E4M3)
    np.testing.assert_array_equal(p8, v.astype(ml_dtypes.float8_e4m3fn).view("<u4"))
    p4 = pack(v, FP4)
    b = v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    np.testing.assert_array_equal(host_bytes(p4, FP4), (b[:, 0::2] | (b[:, 1::2] << 4)).astype(np.uint8))


@pytest.mark.parametrize("name", [E4M3, E5M2, FP4])
@pytest.mark.parametrize("engine", ["vector", "scalar", "gpsimd"])
def test_x4_copies_move_whole_containers(name, engine):
    """dma_copy and tensor_copy of x4 tiles keep every container's bits (NaN lanes included); an
    x4-typed host array goes in as its containers and comes back as them."""
    import nki.isa as nisa

    c = np.uint32 if name != FP4 else np.uint16
    x = rng(3).integers(0, np.iinfo(c).max, size=(32, 16), dtype=c, endpoint=True)
    x[0, 0] = 0x7D7EFD7F if name != FP4 else 0xF7F7
    got = K.copy_x4_kernel(x.view(X4[name]), getattr(nisa.engine, engine))
    assert got.dtype == c
    np.testing.assert_array_equal(got, x)


# ---------------------------------------------------------------------------------------------
# quantize_mx


def _quantize_input(g, P, F, dt):
    """Normal values with a magnitude per 8 × 4 group (2^-6 .. 2^6), one all-zero group, one
    group of negative zeros and small values."""
    x = g.standard_normal((P, F))
    mag = np.ldexp(1.0, g.integers(-6, 7, size=(P // 8, F // 4)))
    x = x * np.repeat(np.repeat(mag, 8, axis=0), 4, axis=1)
    x[0:8, 0:4] = 0.0
    x[8:16, 4:8] = -0.0
    x[8:16, 5] = 2.0 ** -9
    return x.astype(dt)


@pytest.mark.parametrize("name", [E4M3, E5M2])
@pytest.mark.parametrize("dt", [ml_dtypes.bfloat16, np.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("shape", [(128, 512), (64, 32), (32, 64)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_quantize_mx_bit_exact(name, dt, shape):
    """Data and scales bit for bit against the documented quantization (scales spread over the
    quadrants when P > 32, a (P/8, F/4) tile when P = 32)."""
    x = _quantize_input(rng(zlib.crc32(f"{name}{shape}{dt.__name__}".encode())), *shape, dt)
    data, scale = K.quantize_kernel(x, X4[name])
    want_data, want_scale = quantize_golden(x, name)
    assert data.dtype == np.uint32 and data.shape == (shape[0], shape[1] // 4)
    np.testing.assert_array_equal(scale, want_scale)
    np.testing.assert_array_equal(data, want_data)
    assert want_scale[0, 0] == 0  # the all-zero group: 2^-127


def test_quantize_mx_e8m0_scales_and_raw_output():
    """dst_scale in float8_e8m0fnu (the OCP type AWS prefers) holds the same codes; the data
    written through a uint32 tensor viewed as x4 are the same containers."""
    x = _quantize_input(rng(5), 64, 128, ml_dtypes.bfloat16)
    data, scale = K.quantize_kernel(x, nl.float8_e5m2_x4, nl.float8_e8m0fnu, raw_data=True)
    want_data, want_scale = quantize_golden(x, E5M2)
    assert scale.dtype == ml_dtypes.float8_e8m0fnu
    np.testing.assert_array_equal(scale.view(np.uint8), want_scale)
    np.testing.assert_array_equal(data, want_data)


def test_quantize_mx_program():
    """One QuantizeMx on the Vector Engine: ins = [src], outs = [x4 data, scales]."""
    x = _quantize_input(rng(6), 128, 64, ml_dtypes.bfloat16)
    q = [i for i in _insts(bn.trace_json(K.quantize_kernel)(x, nl.float8_e4m3fn_x4)) if i["opcode"] == "QuantizeMx"]
    assert len(q) == 1 and q[0]["engine"] == "DVE"
    assert [o["dtype"] for o in q[0]["ins"] + q[0]["outs"]] == ["bfloat16", E4M3, "uint8"]
    assert q[0]["outs"][0]["ap"] == [[16, 128], [1, 16]] and q[0]["outs"][1]["ap"] == [[16, 128], [1, 16]]


# ---------------------------------------------------------------------------------------------
# nc_matmul_mx on host-quantized data


@pytest.mark.parametrize("st_name,mv_name", [(E4M3, E4M3), (E5M2, E5M2), (FP4, FP4), (FP4, E5M2), (E4M3, FP4)])
@pytest.mark.parametrize("KMN", [(128, 128, 512), (32, 64, 256), (32, 64, 4096)], ids=lambda s: "K{}_M{}_N{}".format(*s))
def test_matmul_mx_offline_float32_exact(st_name, mv_name, KMN):
    """(32, 64, 4096): the output fills all 8 PSUM banks (AWS nc_matmul_mx: up to 4096 fp32)."""
    Kd, M, N = KMN
    g = rng(zlib.crc32(f"{st_name}{mv_name}{KMN}".encode()))
    st, sts = grid_operand(g, Kd, M, st_name)
    mv, mvs = grid_operand(g, Kd, N, mv_name)
    got = K.matmul_offline_kernel(host_bytes(st, st_name), sts, host_bytes(mv, mv_name), mvs, X4[st_name],
                                  X4[mv_name], nl.float32)
    want = matmul_golden(st, sts, mv, mvs, st_name, mv_name)
    np.testing.assert_array_equal(got, want.astype(np.float32))
    assert np.abs(want).max() > 8  # not a trivially small result


@pytest.mark.parametrize("position", [(0, 0), (32, 0), (96, 0)])
def test_matmul_mx_on_a_row_tile(position):
    """AWS nc_matmul_mx's row tiling: a 32-row tile anywhere in the array; the math is unchanged."""
    g = rng(zlib.crc32(f"tile{position}".encode()))
    st, sts = grid_operand(g, 32, 64, E4M3)
    mv, mvs = grid_operand(g, 32, 256, E5M2)
    got = K.matmul_offline_kernel(host_bytes(st, E4M3), sts, host_bytes(mv, E5M2), mvs, X4[E4M3], X4[E5M2],
                                  nl.float32, tile_position=position, tile_size=(32, 128))
    np.testing.assert_array_equal(got, matmul_golden(st, sts, mv, mvs, E4M3, E5M2).astype(np.float32))


@pytest.mark.parametrize("name", [E4M3, E5M2, FP4])
def test_matmul_mx_offline_bfloat16(name):
    """The tutorial's bf16 PSUM tile: the exact sum rounded once to bf16 (ASSUMED, see top)."""
    g = rng(11)
    st, sts = grid_operand(g, 128, 128, name)
    mv, mvs = grid_operand(g, 128, 512, name)
    got = K.matmul_offline_kernel(host_bytes(st, name), sts, host_bytes(mv, name), mvs, X4[name], X4[name])
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.view(np.uint16), bf16_rne(matmul_golden(st, sts, mv, mvs, name, name)).view(np.uint16))


def _tutorial_operand(g, Kd, C, name):
    """The tutorial's kind of data: any finite element value, scales making values at most ~1."""
    fmax = {E4M3: 448.0, E5M2: 57344.0, FP4: 6.0}[name]
    values = ((g.random((Kd, 4 * C)) * 2 - 1) * fmax)
    hi = int(np.log2(1.0 / fmax) + 127)
    return pack(values, name), g.integers(hi - 10, hi + 1, size=(Kd // 8, C)).astype(np.uint8)


@pytest.mark.parametrize("name", [E4M3, E5M2, FP4])
def test_matmul_mx_tutorial_data_within_tutorial_tolerance(name):
    """Random codes: the summation order (undocumented) changes the last bits, so compare as the
    tutorial does (np.allclose with rtol = atol = 5e-2)."""
    g = rng(12)
    st, sts = _tutorial_operand(g, 128, 128, name)
    mv, mvs = _tutorial_operand(g, 128, 512, name)
    got = K.matmul_offline_kernel(host_bytes(st, name), sts, host_bytes(mv, name), mvs, X4[name], X4[name])
    want = matmul_golden(st, sts, mv, mvs, name, name)
    assert np.allclose(got.astype(np.float32), want, rtol=5e-2, atol=5e-2)
    assert np.abs(want).max() > 0.1


def test_matmul_mx_through_view():
    """NkiTensor.view(dtype) in place of .ap(dtype=...): uint8 bytes viewed as float4_e2m1fn_x4."""
    g = rng(13)
    st, sts = grid_operand(g, 64, 32, FP4)
    mv, mvs = grid_operand(g, 64, 128, FP4)
    got = K.matmul_view_kernel(host_bytes(st, FP4), sts, host_bytes(mv, FP4), mvs, nl.float4_e2m1fn_x4)
    np.testing.assert_array_equal(got, matmul_golden(st, sts, mv, mvs, FP4, FP4).astype(np.float32))


def test_matmul_mx_accumulates_k_tiles():
    """K = 256 in two 128-partition tiles into one float32 PSUM tile: accumulate=None overwrites,
    then adds (AWS nc_matmul_mx: "auto-detect based on whether this PSUM location was previously
    written")."""
    g = rng(14)
    st, sts = grid_operand(g, 256, 64, E5M2)
    mv, mvs = grid_operand(g, 256, 512, E5M2)
    got = K.matmul_k_tiles_kernel(st, sts, mv, mvs, nl.float8_e5m2_x4)
    np.testing.assert_array_equal(got, matmul_golden(st, sts, mv, mvs, E5M2, E5M2).astype(np.float32))
    flags = [i["accumulation_flag"] for i in _insts(bn.trace_json(K.matmul_k_tiles_kernel, loops="unroll")(
        st, sts, mv, mvs, nl.float8_e5m2_x4)) if i["opcode"] == "MatmultMx"]
    assert flags == [2, 6]


def test_matmul_mx_program():
    """MatmultMx on the PE: ins = [moving, stationary, moving scales, stationary scales]; the host's
    uint8 fp4 bytes are declared float4_e2m1fn_x4 (BIR memory holds one dtype, fidelity S2)."""
    g = rng(15)
    st, sts = grid_operand(g, 32, 16, FP4)
    mv, mvs = grid_operand(g, 32, 64, E4M3)
    text = bn.trace_json(K.matmul_offline_kernel)(host_bytes(st, FP4), sts, mv, mvs, nl.float4_e2m1fn_x4,
                                                  nl.float8_e4m3fn_x4)
    mm = [i for i in _insts(text) if i["opcode"] == "MatmultMx"]
    assert len(mm) == 1 and mm[0]["engine"] == "PE" and mm[0]["accumulation_flag"] == 2
    assert [o["dtype"] for o in mm[0]["ins"]] == [E4M3, FP4, "uint8", "uint8"]
    allocs = _allocs(text)
    assert allocs["st_data"]["dtype"] == FP4 and allocs["st_data"]["tensor_shape"] == [32, 16]
    assert allocs["mv_data"]["dtype"] == E4M3 and allocs["mv_data"]["tensor_shape"] == [32, 64]  # same container


# ---------------------------------------------------------------------------------------------
# quantize_mx -> nc_matmul_mx on the device


def _grid_source(g, P, F):
    """bf16 grid values times a power of two per 8 × 4 group: the quantization is exact."""
    j = np.repeat(np.repeat(g.integers(-1, 2, size=(P // 8, F // 4)), 8, axis=0), 4, axis=1)
    return np.ldexp(g.choice(GRID, size=(P, F)), j).astype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("st_name,mv_name", [(FP4, E5M2), (E5M2, E5M2), (E4M3, E4M3)])
def test_quantize_then_matmul_on_device(st_name, mv_name):
    """The tutorial's on-device pipeline (stationary quantized on the host, moving on the device):
    the device's scales are the documented ones, and the bf16 result is the documented pipeline's
    exact sum rounded once."""
    g = rng(16)
    st, sts = grid_operand(g, 128, 128, st_name)
    mv = _grid_source(g, 128, 2048)
    got, scales = K.quantize_matmul_kernel(host_bytes(st, st_name), sts, mv, X4[st_name], X4[mv_name])
    q, qs = quantize_golden(mv, mv_name)
    np.testing.assert_array_equal(scales, qs)
    want = matmul_golden(st, sts, q, qs, st_name, mv_name)
    np.testing.assert_array_equal(got.view(np.uint16), bf16_rne(want).view(np.uint16))


@pytest.mark.parametrize("name", [E4M3, E5M2])
def test_quantize_both_with_packed_scales(name):
    """Both operands quantized on the device, their scales in one tile at quadrant offsets 0 and 4."""
    g = rng(17)
    st = _grid_source(g, 128, 512)
    mv = _grid_source(g, 128, 2048)
    got = K.quantize_both_packed_kernel(st, mv, X4[name])
    q1, s1 = quantize_golden(st, name)
    q2, s2 = quantize_golden(mv, name)
    np.testing.assert_array_equal(got, matmul_golden(q1, s1, q2, s2, name, name).astype(np.float32))


# ---------------------------------------------------------------------------------------------
# errors at the kernel line

LINES = markers(KERNELS / "mx.py")
BF = np.ones((128, 64), ml_dtypes.bfloat16)
U32 = np.zeros((32, 8), np.uint32)
CASES = [
    ("gen", K.bad_generation, (BF,), {}, "quantize_mx", "available only on NeuronCore-v4"),
    ("mmgen", K.bad_matmul_generation, (U32,), {}, "nc_matmul_mx", "available only on NeuronCore-v4"),
    ("fp4", K.bad_quantize, (BF,), {"mx_dtype": nl.float4_e2m1fn_x4}, "quantize_mx", "not float4_e2m1fn_x4"),
    ("fp32_src", K.bad_quantize, (np.ones((128, 64), np.float32),), {}, "quantize_mx",
     "src must be float16 or bfloat16, got float32"),
    ("src_psum", K.bad_quantize, (BF,), {"src_buffer": nl.psum}, "quantize_mx", "src must be in SBUF"),
    ("partitions", K.bad_quantize, (np.ones((16, 64), ml_dtypes.bfloat16),), {}, "quantize_mx",
     "must be a multiple of 32"),
    ("dst_cols", K.bad_quantize, (BF,), {"dst_cols": 32, "scale_cols": 32}, "quantize_mx",
     "a quarter of its 64 elements per partition"),
    ("not_fp8_dst", K.bad_quantize, (BF,), {"mx_dtype": nl.uint32}, "quantize_mx",
     "dst must be float8_e5m2_x4 or float8_e4m3fn_x4, got uint32"),
    ("compact_scales", K.bad_quantize, (BF,), {"scale_rows": 16}, "quantize_mx", "needs 100 partitions"),
    ("scale_cols", K.bad_quantize, (BF,), {"scale_cols": 8}, "quantize_mx", "one scale column per dst column"),
    ("scale_offset", K.bad_quantize, (BF,), {"scale_at": 2}, "quantize_mx", "offset 0, 4, 8 or 12"),
    ("mm_dst_sbuf", K.bad_matmul, (U32,), {"out_buffer": nl.sbuf}, "nc_matmul_mx", "dst must be in PSUM"),
    ("mm_not_x4", K.bad_matmul, (U32,), {"st_dtype": nl.bfloat16}, "nc_matmul_mx",
     "stationary must be float8_e5m2_x4, float8_e4m3fn_x4 or float4_e2m1fn_x4, got bfloat16"),
    ("mm_dst_dtype", K.bad_matmul, (U32,), {"out_dtype": nl.float16}, "nc_matmul_mx",
     "dst must be float32 or bfloat16"),
    ("mm_k", K.bad_matmul, (U32,), {"mv_K": 64}, "nc_matmul_mx", "contraction (partition) dims differ"),
    ("mm_k32", K.bad_matmul, (U32,), {"K": 48}, "nc_matmul_mx", "must be a multiple of 32"),
    ("mm_odd_m", K.bad_matmul, (U32,), {"M": 63}, "nc_matmul_mx", "must be even and at most 128"),
    ("mm_tile_half", K.bad_matmul, (U32,), {"tile_size": (64, 128)}, "nc_matmul_mx", "must both be set"),
    ("mm_tile_columns", K.bad_matmul, (U32,), {"K": 32, "tile_size": (32, 64), "tile_position": (0, 0)},
     "nc_matmul_mx", "tiles rows only"),
    ("mm_tile_small", K.bad_matmul, (U32,), {"tile_size": (64, 128), "tile_position": (0, 0)},
     "nc_matmul_mx", "does not hold stationary's 128 partitions"),
    ("mm_scales", K.bad_matmul, (U32,), {"st_scale_rows": 16}, "nc_matmul_mx", "stationary_scale (16, 128) is too short"),
    ("arith", K.bad_x4_arithmetic, (U32,), {}, "tensor_tensor", "would compute on its containers"),
    ("cast", K.bad_x4_cast, (U32,), {}, "dma_copy", "copies packed float8_e4m3fn_x4 data only"),
    ("twice", K.bad_two_dtypes, (U32,), {}, "dma_copy", "is used as uint32 and as float8_e4m3fn_x4"),
]
MARK = {"gen": "gen", "mmgen": "mmgen", "arith": "arith", "cast": "cast", "twice": "twice"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_error_at_kernel_line(case, monkeypatch):
    label, kernel, args, kw, call, why = case
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    with pytest.raises(bn.NkiError) as info:
        kernel(*args, **kw)
    e = info.value
    marker = MARK.get(label, "matmul" if call == "nc_matmul_mx" else "quantize")
    assert e.lineno == LINES[marker], str(e)
    assert e.call == call, str(e)
    assert str(e).startswith(f"{e.filename}:{e.lineno}: {call}: ")
    if why is not None:
        assert why in str(e)

