#!/usr/bin/env python3
"""Writes the `programs/mx` conformance suite: QuantizeMx (96, VectorE) and MatmultMx (95, PE) -- AWS's
MXFP8 / MXFP4 deep-dive kernels and their goldens re-expressed as BIR JSON, edge cases, and the PSUM
accumulation of MatmultMx -- with the .npy inputs and the expected .npy outputs.

The expected values come from a step-by-step NumPy float32 / ml_dtypes emulation of the written spec
(SPEC.md in this directory) and, for the instructions around them, docs/bir-json.md and
docs/fidelity.md (Load / Save / Memset / TensorCopy; Matmult's M3 summation order, M4 PSUM writes,
M9 bf16 PSUM; N9 lane order), never from birsim: nothing under crates/ was read. AWS's public helpers
(nki/deep-dives/src/mxfp-matmul/mx_cpu_utils.py: generate_stabilized_mx_data, quantize_mx_golden,
nc_matmul_mx_golden, pack_mx_data_into_x4, get_p_contiguous_scale, dequantize_mx_golden) are ported
below (`aws_*`, the code as AWS wrote it but for the RNG, which is a numpy RandomState per case
instead of the global one): the generator makes the AWS cases' data, the goldens are sanity checks.

The emulation (below; every arithmetic step one NumPy float32 operation, so one IEEE rounding, no FMA):
  * x4 containers (N9): lane k = the k-th lowest byte (fp8) / nibble (fp4) of the container, built
    and taken apart with shifts (not a little-endian view), so the lane order is explicit;
  * QuantizeMx: per block of 8 partitions x 4 values, e = max of the fp32 exponent fields
    ((bits >> 23) & 0xFF), s = max(e - (Emax - 1), 0) (Emax 8 e4m3fn, 15 e5m2: AWS's documented
    2^(floor(log2 amax) - (Emax - 1)), not its golden's e - Emax); q = ldexpf(x, 127 - s) (np.ldexp on
    float32: exact, or one rounding in fp32's subnormal range); clamp to +-max (448 / 57344; NaN stays
    NaN, +-Inf -> +-max); ml_dtypes cast (RNE); scales to row b (an AP of exactly P/8 rows) or row
    32*(b//4) + b%4 (any other AP, counted from its first partition; it must reach the last block's
    row), the AP's other rows untouched;
  * MatmultMx: lane values (ml_dtypes float8_e4m3fn / float8_e5m2 / float4_e2m1fn -> fp32, exact),
    v = ldexpf(x, s - 127) with the block's scale byte (raw uint8), then Matmult's M3 order over the
    4K contraction rows r = 4k + q ascending: acc = +0, acc = fp32(acc + fp32(mov[r, n] * st[r, m]));
  * PSUM (M4, M9): START clears 2^psum_zero_region banks of the output's partitions and their
    written shadows; START / ACCUMULATE copy into unwritten elements and add (fp32 RNE) into written
    ones; a bf16 output (gen4) rounds each write to bf16 (RNE) and adds to the widened bf16;
  * Load / Save / TensorCopy copy elements in AP order (equal dtypes: bits); Memset stores the
    constant's low bytes.

Sanity: each MatmultMx result is compared with AWS's nc_matmul_mx_golden (an fp32 einsum of unknown
order): bit-equal wherever the sum is order-independent (a sufficient test: every partial sum in any
order is an exact fp32 value), asserted; the QuantizeMx results with AWS's quantize_mx_golden run with
custom_mx_max_exp = Emax - 1 (the documented formula): bit-equal except the blocks where AWS's uint8
scale arithmetic wraps (all-zero and tiny blocks), asserted. See README.md for the tables.

Run: /work/main/.venv/bin/python conformance/programs/mx/make_cases.py (any Python with NumPy 2.4.6,
ml_dtypes 0.6.0: oracle/requirements.txt)
"""
import os
import re
import sys
import zlib

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import ap, ap_index  # noqa: E402

np.seterr(all="raise")
HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64 = np.float32, np.float64
SEED = 20270702  # each case's own RNG: np.random.default_rng([SEED, crc32(case name)])

FP32, BF16, FP16, U8, E8M0 = "float32", "bfloat16", "float16", "uint8", "float8_e8m0fnu"
E4X, E5X, F4X = "float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4"
STORE = {FP32: np.float32, BF16: np.uint16, FP16: np.float16, U8: np.uint8, E8M0: np.uint8,
         E4X: np.uint32, E5X: np.uint32, F4X: np.uint16}
SIZE = {FP32: 4, BF16: 2, FP16: 2, U8: 1, E8M0: 1, E4X: 4, E5X: 4, F4X: 2}
LANE_ML = {E4X: md.float8_e4m3fn, E5X: md.float8_e5m2, F4X: md.float4_e2m1fn}
LANE_BITS = {E4X: 8, E5X: 8, F4X: 4}
EMAX = {E4X: 8, E5X: 15}  # the element format's largest unbiased exponent (AWS quantize_mx doc)
FMAX = {E4X: F32(448.0), E5X: F32(57344.0)}
X4_OF = {md.float8_e4m3fn: E4X, md.float8_e5m2: E5X, md.float4_e2m1fn: F4X}

BANK_BYTES = 2048
PSUM_BYTES = 8 * BANK_BYTES
START, STOP, ACC = 1, 2, 4


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def rs_for(name):
    """The RandomState standing for AWS's global np.random in the ported generator."""
    return np.random.RandomState(zlib.crc32(("aws:" + name).encode()))


def bits(x):
    return np.asarray(x, F32).view(np.uint32)


def f32b(u):
    return np.array(u, np.uint32).view(F32)[()]


def to_bf(x):
    """fp32 -> bf16 bits (RNE; no NaN here)."""
    x = np.asarray(x, F32)
    assert not np.isnan(x).any()
    return x.astype(md.bfloat16).view(np.uint16)


def bf_to_f(u):
    return np.asarray(u, np.uint16).view(md.bfloat16).astype(F32)


def widen(raw, dt):
    """A source operand's stored values -> fp32 (exact)."""
    raw = np.asarray(raw)
    if dt == BF16:
        return raw.view(md.bfloat16).astype(F32)
    return raw.astype(F32)


# ---------------------------------------------------------------- x4 lanes (N9)
def pack(codes, dt):
    """Lane codes [P, 4C] (fp8 bytes or fp4 nibbles, lane k = value 4j + k) -> containers [P, C]:
    lane k in bits LANE_BITS*k (the k-th lowest byte / nibble)."""
    codes = np.asarray(codes, np.uint32)
    p, f = codes.shape
    assert f % 4 == 0
    w = LANE_BITS[dt]
    assert (codes < (1 << w)).all()
    c = codes.reshape(p, f // 4, 4)
    out = np.zeros((p, f // 4), np.uint32)
    for k in range(4):
        out |= c[..., k] << np.uint32(w * k)
    return out.astype(STORE[dt])


def unpack(cont, dt):
    """Containers [P, C] -> lane codes [P, C, 4] (uint8)."""
    cont = np.asarray(cont).astype(np.uint32)
    w = LANE_BITS[dt]
    return np.stack([(cont >> np.uint32(w * k)) & np.uint32((1 << w) - 1) for k in range(4)], axis=-1).astype(np.uint8)


def lane_values(cont, dt):
    """Containers [P, C] -> lane values as fp32 [P, C, 4] (ml_dtypes decode, exact)."""
    return unpack(cont, dt).view(LANE_ML[dt]).astype(F32)


def lane_codes(vals, dt):
    """fp32 values (exactly representable) -> lane codes [.., 4C] (uint8)."""
    v = np.asarray(vals, F32)
    c = v.astype(LANE_ML[dt])
    assert np.array_equal(c.astype(F32), v, equal_nan=True)
    return c.view(np.uint8)


# ---------------------------------------------------------------- the scale layout
def block_rows(rows, nblocks):
    """AP rows holding blocks 0..nblocks-1 of a scale AP with `rows` rows (spec, as amended: exactly
    P/8 rows -> row b; any other row count -> row 32*(b // 4) + b % 4 from the AP's first partition,
    the AP reaching the last block's row, else a fault, which no case here asks for)."""
    b = np.arange(nblocks)
    if rows == nblocks:
        return b
    r = 32 * (b // 4) + b % 4
    assert rows > r[-1], ("the scale AP does not reach the last block's row", rows, nblocks)
    return r


# ---------------------------------------------------------------- QuantizeMx
def quantize_mx(x, dt, emax_shift=1, clamp0=True):
    """QuantizeMx on fp32 values x [P, F] -> (containers [P, F/4], scale bytes [P/8, F/4] uint8).
    emax_shift / clamp0 give the alternative readings (AWS's golden: 0, wrapping)."""
    x = np.asarray(x, F32)
    p, f = x.shape
    assert p % 8 == 0 and f % 4 == 0
    e = ((x.view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64)
    eb = e.reshape(p // 8, 8, f // 4, 4).max(axis=(1, 3))
    s = eb - (EMAX[dt] - emax_shift)
    s = np.maximum(s, 0) if clamp0 else s % 256
    sx = np.repeat(np.repeat(s, 8, axis=0), 4, axis=1)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        q = np.ldexp(x, (127 - sx).astype(np.int32))
        assert q.dtype == F32
        q = np.clip(q, -FMAX[dt], FMAX[dt])  # NaN stays NaN; +-Inf -> +-max
        assert not (np.isnan(q) & np.signbit(q)).any(), "a negative NaN: ml_dtypes and refsim's N4 would differ"
        codes = q.astype(LANE_ML[dt]).view(np.uint8)
    return pack(codes, dt), s.astype(np.uint8)


# ---------------------------------------------------------------- MatmultMx
def dequant(cont, dt, sblk):
    """Containers [K, C] and block scales [K/8, C] -> fp32 [K, C, 4]: ldexpf(x, s - 127)."""
    v = lane_values(cont, dt)
    sx = (np.repeat(np.asarray(sblk).astype(np.int32), 8, axis=0) - 127)[:, :, None]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.ldexp(v, np.broadcast_to(sx, v.shape))
    assert out.dtype == F32
    return out


def mx_dot(mv, sv, order="rq"):
    """out[m, n] over the 4K rows of mv [K, N, 4], sv [K, M, 4], from +0 in fp32.
    order 'rq' (the spec: r = 4k + q ascending), 'qk' (all lanes 0, then 1, ...), 'lane' (each
    partition's 4 products summed first, serially), 'pair' (((p0 + p1) + (p2 + p3)) first)."""
    K, N, _ = mv.shape
    M = sv.shape[1]
    acc = np.zeros((M, N), F32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        def prod(k, q):
            return mv[k, :, q][None, :] * sv[k, :, q][:, None]  # fp32 moving * stationary, one rounding
        if order == "rq":
            for k in range(K):
                for q in range(4):
                    acc = acc + prod(k, q)
        elif order == "qk":
            for q in range(4):
                for k in range(K):
                    acc = acc + prod(k, q)
        elif order == "q3210":
            for k in range(K):
                for q in (3, 2, 1, 0):
                    acc = acc + prod(k, q)
        elif order == "lane":
            for k in range(K):
                t = prod(k, 0)
                for q in (1, 2, 3):
                    t = t + prod(k, q)
                acc = acc + t
        elif order == "pair":
            for k in range(K):
                acc = acc + ((prod(k, 0) + prod(k, 1)) + (prod(k, 2) + prod(k, 3)))
        else:
            raise ValueError(order)
    assert acc.dtype == F32
    return acc


def exact_info(mv, sv):
    """(compensated float64 sum rounded once to fp32, order-independent mask): an element is
    order-independent when u = its smallest product's lowest set bit and S = sum of |products|
    satisfy S <= 2^24 u (then every partial sum, in any order, is an exact fp32 value)."""
    K, N, _ = mv.shape
    M = sv.shape[1]
    s = np.zeros((M, N), F64)
    c = np.zeros((M, N), F64)
    tot = np.zeros((M, N), F64)
    u = np.full((M, N), np.inf)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for k in range(K):
            for q in range(4):
                t = (mv[k, :, q][None, :] * sv[k, :, q][:, None]).astype(F64)  # the fp32 product, widened
                a = s + t
                c += np.where(np.abs(s) >= np.abs(t), (s - a) + t, (t - a) + s)
                s = a
                tot += np.abs(t)
                m, e = np.frexp(t)
                mi = np.abs(m * 2.0 ** 53).astype(np.int64)
                lsb = np.ldexp((mi & -mi).astype(F64), e - 53)
                u = np.where(t != 0, np.minimum(u, lsb), u)
        ex = (s + c).astype(F32)
    indep = (tot == 0) | (tot <= 2.0 ** 24 * u)
    return ex, indep


# ---------------------------------------------------------------- AWS's helpers, ported
# From aws-neuron/aws-neuron-sdk nki/deep-dives/src/mxfp-matmul/mx_cpu_utils.py (81ce03ae): the same
# code, with `rs` (a numpy RandomState) in place of the global np.random.
def aws_get_float32_exp(float_data):
    man_nbits, exp_nbits = 23, 8
    return (float_data.astype(np.float32).view(np.uint32) >> man_nbits) & ((1 << exp_nbits) - 1)


def aws_get_mx_fp_max(mx_dtype):
    return {md.float8_e5m2: 57344.0, md.float8_e4m3fn: 448.0, md.float4_e2m1fn: 6.0}[mx_dtype]


def aws_get_mx_max_exp(mx_dtype):
    return {md.float8_e5m2: 15, md.float8_e4m3fn: 8, md.float4_e2m1fn: 2}[mx_dtype]


def aws_get_p_contiguous_scale(hw_scale, data_p_size, p_offset=0):
    if data_p_size <= 32:
        return hw_scale[p_offset: p_offset + data_p_size]
    scale = np.zeros((data_p_size // 8,) + tuple(hw_scale.shape[1:]), hw_scale.dtype)
    for i in range(data_p_size // 8):
        scale[i] = hw_scale[i // 4 * 32 + i % 4 + p_offset]
    return scale


def aws_pack_mx_data_into_x4(mx_data):
    if mx_data.dtype == md.float4_e2m1fn:
        mx_as_bytes = mx_data.view(np.uint8)
        H, W = mx_data.shape
        bytes_grouped = mx_as_bytes.reshape(H, W // 2, 2)
        return ((bytes_grouped[:, :, 0] & 0xF).astype(np.uint8) << 0) | \
            ((bytes_grouped[:, :, 1] & 0xF).astype(np.uint8) << 4)
    return mx_data.view(np.uint32)


def aws_unpack_mx_data_from_x4(packed_data, target_dtype):
    if target_dtype == md.float4_e2m1fn:
        assert packed_data.dtype == np.uint8
        H, W_packed = packed_data.shape
        unpacked = np.zeros((H, W_packed, 2), dtype=np.uint8)
        unpacked[:, :, 0] = packed_data & 0xF
        unpacked[:, :, 1] = (packed_data >> 4) & 0xF
        return unpacked.reshape(H, W_packed * 2).view(target_dtype)
    assert packed_data.dtype == np.uint32
    return packed_data.view(target_dtype)


def aws_quantize_mx_golden(in_tensor, out_quantized_dtype, ocp_saturation=True, custom_mx_max_exp=None):
    max_exp = custom_mx_max_exp(out_quantized_dtype) if custom_mx_max_exp else aws_get_mx_max_exp(out_quantized_dtype)
    max_val = aws_get_mx_fp_max(out_quantized_dtype)
    float32_exp_bias = 127
    P, F = in_tensor.shape
    SP, SF = P // 8, F // 4
    in_tensor_ = np.copy(in_tensor)
    exp = aws_get_float32_exp(in_tensor_)
    exp_reshaped = exp.reshape(SP, 8, SF, 4)
    mx_scale_golden = np.max(exp_reshaped, axis=(1, 3)).astype(np.uint8) - max_exp  # uint8: wraps below 0
    scale_exp = mx_scale_golden.astype(np.int32) - float32_exp_bias
    scale_factors = 2.0 ** scale_exp
    scale_expanded_p = np.repeat(scale_factors, 8, axis=0)
    scale = np.repeat(scale_expanded_p, 4, axis=1)
    with np.errstate(all="ignore"):
        mx_data_golden = in_tensor_ / scale
        if ocp_saturation:
            mx_data_golden = np.clip(mx_data_golden, -max_val, max_val)
        mx_data_golden = mx_data_golden.astype(out_quantized_dtype)
    return aws_pack_mx_data_into_x4(mx_data_golden), mx_scale_golden


def aws_nc_matmul_mx_golden(stationary_x4, moving_x4, stationary_scale, moving_scale, stationary_quantized_dtype,
                            moving_quantized_dtype, use_contiguous_scale=True, stationary_scale_p_offset=0,
                            moving_scale_p_offset=0):
    moving = aws_unpack_mx_data_from_x4(moving_x4, moving_quantized_dtype).astype(np.float32)
    moving_scale = moving_scale.astype(np.float32)
    stationary = aws_unpack_mx_data_from_x4(stationary_x4, stationary_quantized_dtype).astype(np.float32)
    stationary_scale = stationary_scale.astype(np.float32)
    new_shape = moving.shape[:-1] + (moving.shape[-1] // 4, 4)
    moving = moving.reshape(new_shape)
    MP, MF0, MF1 = moving.shape
    if not use_contiguous_scale:
        moving_scale = aws_get_p_contiguous_scale(moving_scale, MP, moving_scale_p_offset)
    MSP, MSF0 = moving_scale.shape
    moving_scale_relevant = moving_scale[:, :MF0]
    moving_scale_factors = 2.0 ** (moving_scale_relevant - 127)
    moving_scale_expanded = np.repeat(moving_scale_factors[:, :, np.newaxis], 4, axis=2)
    moving_scale_expanded = np.repeat(moving_scale_expanded[:, np.newaxis, :, :], 8, axis=1)
    moving_scale_expanded = moving_scale_expanded.reshape(MSP * 8, MF0, 4)
    moving *= moving_scale_expanded
    new_shape = stationary.shape[:-1] + (stationary.shape[-1] // 4, 4)
    stationary = stationary.reshape(new_shape)
    SP, SF0, SF1 = stationary.shape
    stationary = stationary.astype(np.float32)
    if not use_contiguous_scale:
        stationary_scale = aws_get_p_contiguous_scale(stationary_scale, SP, stationary_scale_p_offset)
    SSP, SSF0 = stationary_scale.shape
    stationary_scale_relevant = stationary_scale[:, :SF0]
    stationary_scale_factors = 2.0 ** (stationary_scale_relevant - 127)
    stationary_scale_expanded = np.repeat(stationary_scale_factors[:, :, np.newaxis], 4, axis=2)
    stationary_scale_expanded = np.repeat(stationary_scale_expanded[:, np.newaxis, :, :], 8, axis=1)
    stationary_scale_expanded = stationary_scale_expanded.reshape(SSP * 8, SF0, 4)
    stationary *= stationary_scale_expanded
    return np.einsum("kiq,kjq->ij", stationary, moving)


def aws_dequantize_mx_golden(mx_data_x4, quantized_dtype, mx_scale):
    float32_exp_bias = 127
    data_float = aws_unpack_mx_data_from_x4(mx_data_x4, quantized_dtype).astype(np.float32)
    scale_exp = mx_scale.astype(np.int32) - float32_exp_bias
    scale_exp = np.clip(scale_exp, -127, 127)
    scale_factors = 2.0 ** scale_exp
    scale_expanded = np.repeat(np.repeat(scale_factors, 8, axis=0), 4, axis=1)
    return data_float * scale_expanded


def aws_generate_stabilized_mx_data(rs, quantized_dtype, shape, val_range=1.0):
    """-> (fp_data float64, quantized data, x4-packed data (uint32 fp8 / uint8 fp4), scales uint8 [P/8, F/4])."""
    _q_height, _q_width = 8, 4
    max_val = aws_get_mx_fp_max(quantized_dtype)
    max_exp = aws_get_mx_max_exp(quantized_dtype)
    rand_data = (rs.random(shape) * 2 - 1) * max_val
    for i in range(0, shape[0], _q_height):
        for j in range(0, shape[1], _q_width):
            tile_i = rs.randint(0, _q_height - 1)
            tile_j = rs.randint(0, _q_width - 1)
            sign = rs.choice([-1, 1])
            mantissa = 1.0 + rs.random() * 0.5
            rand_data[i + tile_i, j + tile_j] = sign * mantissa * (2 ** max_exp)
    rand_data_quantized = rand_data.astype(quantized_dtype)
    rand_data_quantized_x4 = aws_pack_mx_data_into_x4(rand_data_quantized)
    float32_exp_bias = 127
    mx_scale_upper_bound = min(255, int(np.log2(val_range / max_val) + float32_exp_bias))
    mx_scale_lower_bound = max(0, mx_scale_upper_bound - 10)
    scale_shape = (shape[0] // _q_height, shape[1] // _q_width)
    rand_quantized_scale_np = rs.randint(mx_scale_lower_bound, mx_scale_upper_bound + 1, size=scale_shape, dtype=np.uint8)
    dequantized_fp_data_np = aws_dequantize_mx_golden(rand_data_quantized_x4, quantized_dtype, rand_quantized_scale_np)
    return dequantized_fp_data_np, rand_data_quantized, rand_data_quantized_x4, rand_quantized_scale_np


def aws_x4_to_bir(x4, mldt):
    """AWS's packed array (uint32 for fp8; uint8 [K, 2C] for fp4) -> BIR containers [K, C], checked
    against our own lane packing (N9: AWS's pack_mx_data_into_x4 puts lane k in the k-th lowest byte /
    nibble, as the spec says)."""
    dt = X4_OF[mldt]
    if mldt == md.float4_e2m1fn:
        b = x4.astype(np.uint16)
        cont = (b[:, 0::2] | (b[:, 1::2] << np.uint16(8))).astype(np.uint16)
        codes = np.stack([x4 & 0xF, x4 >> 4], axis=-1).reshape(x4.shape[0], -1)
    else:
        cont = x4.astype(np.uint32)
        codes = x4.view(np.uint8)
    assert np.array_equal(pack(codes, dt), cont)
    return cont


def stabilized(rs, mldt, shape):
    """AWS's generate_stabilized_mx_data for an unquantized [K, 4C] shape -> (fp data, aws x4, BIR
    containers [K, C], scales [K/8, C])."""
    fp, _, x4, sc = aws_generate_stabilized_mx_data(rs, mldt, shape)
    return fp, x4, aws_x4_to_bir(x4, mldt), sc


# ---------------------------------------------------------------- PSUM (M4, M9)
class Psum:
    """One PSUM memory location: bytes, a per-byte written shadow, what a case may read back."""

    def __init__(self, parts, nbytes, addr):
        self.nbytes, self.addr = nbytes, addr
        self.raw = np.full((parts, nbytes), 0xFF, np.uint8)
        self.wb = np.zeros((parts, nbytes), bool)  # written shadow
        self.tb = np.zeros((parts, nbytes), bool)  # written or cleared

    def write(self, idx, res, start, accumulate, zero_region, dt):
        """One MatmultMx's write: idx [M, N] flat element indices (units of dt, AP order), res [M, N]
        fp32 dot products. START: clear 2^zero_region banks from the output's first element's bank on
        its partitions; START / ACCUMULATE: tracked (copy where unwritten, else add); else overwrite."""
        es = SIZE[dt]
        pe = self.nbytes // es
        rows, cols = idx // pe, idx % pe
        assert len(np.unique(idx)) == idx.size
        banks = np.unique((self.addr + cols * es) // BANK_BYTES)
        assert len(banks) == 1, "the output lies within one bank"
        if start:
            lo = int(banks[0]) * BANK_BYTES - self.addr
            hi = lo + (1 << zero_region) * BANK_BYTES
            assert 0 <= lo and hi <= self.nbytes
            parts = np.unique(rows)
            self.raw[parts, lo:hi] = 0
            self.wb[parts, lo:hi] = False
            self.tb[parts, lo:hi] = True
        bidx = (cols * es)[..., None] + np.arange(es)
        wr3 = self.wb[rows[..., None], bidx]
        assert (wr3.all(-1) == wr3.any(-1)).all()
        wr = wr3.all(-1)
        tracked = start or accumulate
        with np.errstate(over="ignore", invalid="ignore"):
            if dt == FP32:
                view = self.raw.view(F32)
                old = view[rows, cols]
                view[rows, cols] = np.where(wr, old + res, res).astype(F32) if tracked else res
            else:
                assert dt == BF16  # M9: round to bf16 at the write; an add widens the bf16 first
                view = self.raw.view(np.uint16)
                old = bf_to_f(view[rows, cols])
                new = np.where(wr, (old + res).astype(F32), res).astype(F32) if tracked else res
                view[rows, cols] = to_bf(new)
        self.wb[rows[..., None], bidx] = True
        self.tb[rows[..., None], bidx] = True


def cc224(flag, zero_region=0):
    """Matmult's neuronx-cc 2.24 record fields (docs/bir-json.md Matmult, fidelity M1)."""
    return {"accumulation_flag": flag, "psum_zero_region": zero_region, "replication_resolution": 0,
            "replication_shift_amnt": 0, "replication_num_rows": 0, "is_transpose": False,
            "is_fmap_onezero": False, "is_weight_onezero": False, "tile_size": [128, 128],
            "tile_position": [0, 0], "ifmap_quant_offset": 0, "weights_quant_offset": 0,
            "perf_mode": "None"}


def klr(start, stop):
    """Matmult's KLR-era record fields."""
    return {"start_tensor_calc": start, "stop_tensor_calc": stop, "is_transpose": False,
            "tile_size": [128, 128], "tile_position": [0, 0], "perf_mode": "None"}


def mode_of(fields):
    if "accumulation_flag" in fields:
        f = fields["accumulation_flag"]
        return bool(f & 1), bool(f & 4), fields["psum_zero_region"]
    return bool(fields["start_tensor_calc"]), not fields["start_tensor_calc"], 0


# ---------------------------------------------------------------- program building
def rect(mem, dt, pitch, p, f, p0=0, c0=0):
    """p partitions x f elements of a location with `pitch` elements per partition, from (p0, c0)."""
    return ap(mem, dt, [[pitch, p], [1, f]], p0 * pitch + c0)


class Prog(birprog.Prog):
    """A model of every location (flat element arrays with a written mask, PSUM as bytes) so each
    instruction's expected effect is computed as it is emitted."""
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "QuantizeMx": "DVE", "MatmultMx": "PE", "TensorCopy": "DVE",
               "Memset": "Pool"}
    DEFAULT_ENGINE = "DVE"

    def __init__(self, arch="gen4"):
        super().__init__()
        self.arch = arch
        self.mem = {}  # name -> [dtype, flat stored array, written mask, pitch]
        self.ps = {}
        self.mx = []  # per MatmultMx: (mv [K, N, 4], sv [K, M, 4], dot) for the alternatives / sanity
        self.nput = {}

    def program(self):
        d = super().program()
        d["arch"] = self.arch
        return d

    def input(self, name, dt, raw):
        """An external input holding raw [p, f]."""
        raw = np.ascontiguousarray(raw)
        p, f = self.dram_in(name, dt, raw)
        self.mem[name] = [dt, raw.reshape(-1).copy(), np.ones(p * f, bool), f]
        return name

    def tile(self, name, dt, parts, row):
        self.sb(name, dt, parts, row)
        self.mem[name] = [dt, np.zeros(parts * row, STORE[dt]), np.zeros(parts * row, bool), row]
        return name

    def psum(self, name, dt=FP32):
        self._alloc(name, "Internal", dt, [128, PSUM_BYTES // SIZE[dt]], "PSUM", [128, PSUM_BYTES])
        self.ps[name] = Psum(128, PSUM_BYTES, 0)
        return name

    def whole(self, name, p=None, f=None, p0=0, c0=0):
        """An AP over (a window of) location `name`."""
        dt, arr, _, pitch = self.mem[name]
        if p is None:
            p, f = arr.size // pitch, pitch
        return rect(name, dt, pitch, p, f, p0, c0)

    def rd(self, op, need=True):
        dt, arr, w, _ = self.mem[op["memref"]]
        assert op["dtype"] == dt
        idx = ap_index(op["ap"], op["offset"])
        if need:
            assert w[idx].all(), ("reads an unwritten element", op["memref"])
        return arr[idx]

    def wr(self, op, vals):
        dt, arr, w, _ = self.mem[op["memref"]]
        assert op["dtype"] == dt
        idx = ap_index(op["ap"], op["offset"])
        arr[idx] = np.asarray(vals).reshape(idx.shape)
        w[idx] = True

    def copy(self, opcode, src, dst):
        self.inst(opcode, [src], [dst])
        self.wr(dst, self.rd(src).reshape(-1))

    def put(self, tname, raw, p0=0, c0=0):
        """A new DRAM input holding raw [p, f], Loaded into tile tname at (p0, c0)."""
        raw = np.ascontiguousarray(raw)
        k = self.nput.get(tname, 0)
        self.nput[tname] = k + 1
        name = self.input(f"{tname}_in" + (str(k) if k else ""), self.mem[tname][0], raw)
        self.copy("Load", self.whole(name), self.whole(tname, raw.shape[0], raw.shape[1], p0, c0))
        return name

    def memset(self, op, const):
        self.inst("Memset", [], [op], mode="Const", constant=int(const))
        dt = op["dtype"]
        v = np.array([const], np.uint64).astype(np.uint32 if SIZE[dt] == 4 else np.uint16 if SIZE[dt] == 2 else np.uint8)
        self.wr(op, np.broadcast_to(v.view(STORE[dt]), ap_index(op["ap"], op["offset"]).shape))

    def out(self, src, name, expected=None, shape=None):
        """Saves the SB AP src into a new external output of `shape` (default [first num, the rest])."""
        v = self.rd(src)
        v = v.reshape(shape if shape else (v.shape[0], -1))
        if expected is not None:
            assert np.array_equal(np.asarray(expected).view(v.dtype).reshape(v.shape), v)
        dt = src["dtype"]
        self.dram_out(name, dt, v.shape, v)
        self.inst("Save", [src], [rect(name, dt, v.shape[1], v.shape[0], v.shape[1])])
        return v

    def quantize(self, src, dst, scale):
        """QuantizeMx: ins [src], outs [dst, scale]; the model writes dst and the block rows of scale."""
        self.inst("QuantizeMx", [src], [dst, scale])
        x = widen(self.rd(src), src["dtype"])
        assert x.ndim == 2
        cont, s = quantize_mx(x, dst["dtype"])
        self.wr(dst, cont)
        idx = ap_index(scale["ap"], scale["offset"])
        rows = block_rows(idx.shape[0], s.shape[0])
        dt, arr, w, _ = self.mem[scale["memref"]]
        arr[idx[rows]] = s
        w[idx[rows]] = True
        return x, cont, s

    def matmult_mx(self, mov, st, movs, sts, out, fields):
        """MatmultMx: ins [moving, stationary, moving scales, stationary scales], outs [PSUM]."""
        self.inst("MatmultMx", [mov, st, movs, sts], [out], **fields)
        mc, sc = self.rd(mov), self.rd(st)
        K = mc.shape[0]
        assert sc.shape[0] == K and K % 8 == 0
        blocks = []
        for sop in (movs, sts):
            sv = self.rd(sop, need=False)
            rows = block_rows(sv.shape[0], K // 8)
            idx = ap_index(sop["ap"], sop["offset"])
            assert self.mem[sop["memref"]][2][idx[rows]].all(), "reads an unwritten scale"
            blocks.append(sv[rows])
        mv = dequant(mc, mov["dtype"], blocks[0])
        svv = dequant(sc, st["dtype"], blocks[1])
        res = mx_dot(mv, svv)
        self.mx.append((mv, svv, res))
        start, accumulate, zr = mode_of(fields)
        pidx = ap_index(out["ap"], out["offset"])
        pidx = pidx.reshape(pidx.shape[0], -1)
        assert pidx.shape == res.shape
        self.ps[out["memref"]].write(pidx, res, start, accumulate, zr, out["dtype"])
        return res

    def psum_out(self, psname, name, dt, p0, c0, m, n):
        """TensorCopy PSUM [p0:p0+m, c0:c0+n] (dtype dt) -> an SB tile of dt (a copy), Save as `name`."""
        p = self.ps[psname]
        es = SIZE[dt]
        pe = p.nbytes // es
        assert p.tb[p0:p0 + m, c0 * es:(c0 + n) * es].all(), "reads only what the case wrote or cleared"
        vals = np.ascontiguousarray(p.raw[p0:p0 + m, c0 * es:(c0 + n) * es]).view(STORE[dt])
        self.tile(name + "_sb", dt, m, n)
        self.inst("TensorCopy", [rect(psname, dt, pe, m, n, p0, c0)], [self.whole(name + "_sb")])
        self.wr(self.whole(name + "_sb"), vals)
        return self.out(self.whole(name + "_sb"), name)


def psap(psname, dt, m, n, p0=0, bank=0, c0=0):
    pe = PSUM_BYTES // SIZE[dt]
    return rect(psname, dt, pe, m, n, p0, bank * BANK_BYTES // SIZE[dt] + c0)


CASES = {}
SANITY = []  # (case, check, result)
SENS = []  # (case, alternative reading, how many expected values it would change)


def differ(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == F32:
        a = a.view(np.uint32)
    if b.dtype == F32:
        b = b.view(np.uint32)
    return int((a != b).sum())


def case(name, g, note, source, choices=()):
    assert name not in CASES, name
    ops = sorted({i["opcode"] for i in g.insts} - {"Load", "Save"})
    # N9 (the lane order) is DOCUMENTED by the very golden this file ports: no choice line.
    rows = {"QuantizeMx": ["Q10"], "MatmultMx": ["Q11", "M3", "M4"]}
    ch = list(choices) + [c for o in ops for c in rows.get(o, [])]
    CASES[name] = (g, note, source, ops, ch)


# ---------------------------------------------------------------- sources
AWS = "aws-neuron/aws-neuron-sdk"
SRC_QDOC = f"{AWS} nki/api/nki/isa/__init__.py (quantize_mx); SPEC.md QuantizeMx"
SRC_MDOC = f"{AWS} nki/api/nki/isa/__init__.py (nc_matmul_mx); SPEC.md MatmultMx"
SRC_UTIL = f"{AWS} nki/deep-dives/src/mxfp-matmul/mx_cpu_utils.py"
SRC_OFF = (f"{AWS} nki/deep-dives/src/mxfp-matmul/mx_kernels.py (kernel_offline_quantized_mx_matmul), "
           "mx_toplevel.py (run_offline_quantized_matmul_mx_test), mx_cpu_utils.py")
SRC_ONDEV = (f"{AWS} nki/deep-dives/src/mxfp-matmul/mx_kernels.py (kernel_on_device_quantize_matmul_mx), "
             "mx_toplevel.py (run_on_device_quantize_matmul_mx_test), mx_cpu_utils.py")
SRC_PACKED = (f"{AWS} nki/deep-dives/src/mxfp-matmul/mx_kernels.py "
              "(kernel_copy_strided_quantize_matmul_mx_packed_scale), mx_kernel_utils.py (copy_data_strided)")


# ================================================================ QuantizeMx
def set_block(x, b, c, vals):
    """Block (b, c) of x [P, F] (partitions 8b..8b+8, values 4c..4c+4) = vals (8 x 4, or broadcast)."""
    x[8 * b:8 * b + 8, 4 * c:4 * c + 4] = vals


def random_blocks(rng, p, f, lo, hi):
    """fp32 values: each block normal(0, 1) * 2^E with E drawn per block in [lo, hi]."""
    e = rng.integers(lo, hi + 1, (p // 8, f // 4))
    sc = np.repeat(np.repeat(np.ldexp(1.0, e), 8, axis=0), 4, axis=1)
    return (rng.normal(0.0, 1.0, (p, f)) * sc).astype(F32)


def quant_checks(name, x, dt, cont, s):
    """Sanity and sensitivity rows of one QuantizeMx: AWS's golden with the documented exponent and with
    its own; the lane order reversed."""
    mldt = LANE_ML[dt]
    blocks = s.size
    ex = ((x.view(np.uint32) >> 23) & 0xFF).astype(np.int64).reshape(x.shape[0] // 8, 8, -1, 4).max(axis=(1, 3))
    wraps = ex < EMAX[dt] - 1  # AWS's uint8 scale arithmetic wraps below 0 (all-zero / tiny blocks)
    gx4, gs = aws_quantize_mx_golden(x, mldt, custom_mx_max_exp=lambda d: aws_get_mx_max_exp(d) - 1)
    ok_s = (gs == s) | wraps
    ok_d = (gx4 == cont) | np.repeat(wraps, 8, axis=0)
    assert ok_s.all() and ok_d.all(), (name, int((~ok_s).sum()), int((~ok_d).sum()))
    SANITY.append((name, "AWS quantize_mx_golden with custom_mx_max_exp = Emax - 1 (the documented "
                   "2^(floor(log2 amax) - (Emax - 1)))",
                   f"bit-equal on the {blocks - int(wraps.sum())} blocks with e >= Emax - 1; "
                   f"{int(wraps.sum())} all-zero / tiny blocks differ only by AWS's uint8 wrap of e - 7 "
                   f"(its scale {sorted(set(int(v) for v in gs[wraps]))}, ours 0)" if wraps.any() else
                   f"bit-equal on all {blocks} blocks"))
    g2x4, g2s = aws_quantize_mx_golden(x, mldt)
    SENS.append((name, "AWS's quantize_mx_golden as written (scale e - Emax, OCP's; uint8 wrap)",
                 f"{differ(g2s, s)} of {blocks} scales, {differ(unpack(g2x4.view(np.uint32), dt), unpack(cont, dt))} of "
                 f"{cont.size * 4} lanes"))
    rev = unpack(cont, dt)[..., ::-1]
    SENS.append((name, "lanes packed high byte first (N9 reversed)",
                 f"{differ(pack(rev.reshape(cont.shape[0], -1), dt), cont)} of {cont.size} containers"))


def q_bf16_32x64():
    name = "quantize_mx_bf16_32x64_e4m3fn_compact"
    rng = rng_for(name)
    P, F = 32, 64
    x = random_blocks(rng, P, F, -30, 30)
    z = np.zeros((8, 4), F32)
    # (0,0) all-zero, with -0 at a few positions: s = 0, lanes 0x00 / 0x80
    blk = z.copy()
    blk[1, 2] = blk[5, 0] = blk[7, 3] = -0.0
    set_block(x, 0, 0, blk)
    # (0,1) +Inf: e = 255, s = 248: Inf -> 448 (0x7E), the finite values * 2^-121 -> +-0
    blk = rng.normal(0, 1, (8, 4)).astype(F32)
    blk[3, 1] = np.inf
    set_block(x, 0, 1, blk)
    # (0,2) -Inf -> -448 (0xFE)
    blk = rng.normal(0, 100, (8, 4)).astype(F32)
    blk[0, 0] = -np.inf
    set_block(x, 0, 2, blk)
    # (0,3) NaN (bf16 0x7FC0): s = 248, NaN -> 0x7F, the rest -> +-0
    blk = rng.normal(0, 1, (8, 4)).astype(F32)
    blk[6, 2] = np.nan
    set_block(x, 0, 3, blk)
    # (1,0) rounding ties at scale 1 (amax 248: e = 134, s = 127): 1.0625 -> 1.0, 1.1875 -> 1.25,
    # 3.125 -> 3.0, 3.375 -> 3.5, 17 -> 16, 19 -> 20, 108 -> 112, 124 -> 128, 248 -> 256, and negatives
    ties = [1.0625, 1.1875, 3.125, 3.375, 17.0, 19.0, 108.0, 124.0, 248.0, -1.0625, -17.0, -19.0, -124.0, 0.5,
            0.5625, 0.6875]
    blk = np.resize(np.array(ties, F32), (8, 4))
    set_block(x, 1, 0, blk)
    # (1,1) e4m3fn subnormals: amax 1.0 (e = 127, s = 120, q = x * 2^7); q = k * 2^-10 for k = 1..9, 2^-7, ...
    blk = np.zeros((8, 4), F32)
    blk.flat[0] = 1.0
    qs = [2 ** -10, 3 * 2 ** -10, 5 * 2 ** -11, 7 * 2 ** -11, 2 ** -11, 2 ** -7, 3 * 2 ** -9, 2 ** -9, 9 * 2 ** -10,
          2 ** -6, 15 * 2 ** -10, -3 * 2 ** -10, -2 ** -10, 2 ** -12]
    blk.flat[1:1 + len(qs)] = np.array(qs) * 2.0 ** -7
    set_block(x, 1, 1, blk)
    # (1,2) tiny normals (e = 6 < 7): s = max(6 - 7, 0) = 0, q = x * 2^127: 2^-121 -> 64, 1.5 * 2^-122 -> 48
    blk = np.zeros((8, 4), F32)
    blk.flat[:6] = [2.0 ** -121, 1.5 * 2.0 ** -122, -2.0 ** -123, 1.75 * 2.0 ** -125, 2.0 ** -126, 1.0078125 * 2 ** -122]
    set_block(x, 1, 2, blk)
    # (1,3) bf16 subnormals (e = 0, s = 0): k * 2^-133 -> k * 2^-6
    blk = (rng.integers(-127, 128, (8, 4)) * 2.0 ** -133).astype(F32)
    blk[0, 0] = 127 * 2.0 ** -133
    set_block(x, 1, 3, blk)
    # (2,0) amax 1.9921875 * 2^20 (the largest bf16 mantissa): q = 255 -> 256; AWS's golden scale would
    # give 510 -> clamped to 448
    blk = rng.normal(0, 2 ** 18, (8, 4)).astype(F32)
    blk[4, 1] = 1.9921875 * 2 ** 20
    blk[2, 2] = -1.9921875 * 2 ** 20
    set_block(x, 2, 0, blk)
    # (2,1) negatives far below amax -> -0 (0x80)
    blk = -np.abs(rng.normal(0, 2 ** -12, (8, 4))).astype(F32)
    blk[0, 0] = 1.0
    set_block(x, 2, 1, blk)
    # (2,2) bf16's largest finite +-0x7F7F (e = 254, s = 247)
    blk = rng.normal(0, 2 ** 120, (8, 4)).astype(F32)
    blk[1, 1] = bf_to_f(np.uint16(0x7F7F))
    blk[6, 3] = bf_to_f(np.uint16(0xFF7F))
    set_block(x, 2, 2, blk)
    raw = to_bf(np.where(np.isnan(x), 0, x))
    raw[np.isnan(x)] = 0x7FC0
    xw = widen(raw, BF16)
    g = Prog()
    src = g.tile("src", BF16, P, F)
    g.put(src, raw)
    dst = g.tile("dst_t", E4X, P, F // 4)
    sct = g.tile("scale_t", U8, P // 8, F // 4)
    _, cont, s = g.quantize(g.whole(src), g.whole(dst), g.whole(sct))
    # hand checks
    lanes = unpack(cont, E4X).reshape(P, F)
    assert s[0, 0] == 0 and s[0, 1] == 248 and s[0, 2] == 248 and s[0, 3] == 248 and s[1, 0] == 127
    assert s[1, 1] == 120 and s[1, 2] == 0 and s[1, 3] == 0 and s[2, 0] == 20 + 127 - 7 and s[2, 2] == 247
    assert lanes[3, 5] == 0x7E and lanes[0, 8] == 0xFE and lanes[6, 14] == 0x7F
    assert lanes[1, 2] == 0x80 and lanes[0, 0] == 0x00
    got = lanes[8:16, 0:4].reshape(-1).view(md.float8_e4m3fn).astype(F32)
    assert list(got[:9]) == [1.0, 1.25, 3.0, 3.5, 16.0, 20.0, 112.0, 128.0, 256.0], got
    got = lanes[8:16, 4:8].reshape(-1).view(md.float8_e4m3fn).astype(F32)[1:15] / 2.0 ** -9
    # in units of 2^-9: 0.5 -> 0, 1.5 -> 2, 1.25 -> 1, 1.75 -> 2, 0.25 -> 0, 4, 3, 1, 4.5 -> 4, 8, 7.5 -> 8 (the
    # largest subnormal ties up to the smallest normal), -1.5 -> -2, -0.5 -> -0, 0.125 -> 0
    assert list(got) == [0, 2, 1, 2, 0, 4, 3, 1, 4, 8, 8, -2, -0.0, 0], got
    got = lanes[8:16, 8:12].reshape(-1).view(md.float8_e4m3fn).astype(F32)
    assert list(got[:6]) == [64.0, 48.0, -16.0, 7.0, 2.0, 32.0], got  # 32.25 -> 32
    g.out(g.whole(dst), "dst")
    g.out(g.whole(sct), "scale")
    quant_checks(name, xw, E4X, cont, s)
    alt, alts = quantize_mx(xw, E4X, clamp0=False)
    SENS.append((name, "no clamp of s at 0 (e - 7 wrapping in a byte)", f"{differ(alts, s)} of {s.size} scales, "
                 f"{differ(unpack(alt, E4X), unpack(cont, E4X))} lanes (the tiny and subnormal blocks)"))
    case(name, g,
         "QuantizeMx bf16 [32, 64] -> float8_e4m3fn_x4 [32, 16] with compact uint8 scales [4, 16] (P/8 rows: block "
         "b in row b). Blocks: (0,0) all zero with -0 lanes (s 0; 0x00 / 0x80); (0,1) +Inf, (0,2) -Inf (e 255, s 248: "
         "+-448 = 0x7E / 0xFE, the others +-0); (0,3) NaN 0x7FC0 (s 248; 0x7F); (1,0) RNE ties at scale 1 "
         "(1.0625 -> 1, 1.1875 -> 1.25, 3.125 -> 3, 3.375 -> 3.5, 17 -> 16, 19 -> 20, 108 -> 112, 124 -> 128, "
         "248 -> 256); (1,1) e4m3fn subnormals and their ties (amax 1, s 120); (1,2) tiny normals e = 6 < 7 (s "
         "clamped to 0: 2^-121 -> 64); (1,3) bf16 subnormals (s 0); (2,0) amax 1.9921875 * 2^20 (q 255 -> 256, no "
         "saturation); (2,1) negatives -> -0; (2,2) bf16 +-max (s 247); the rest normal values at 2^-30..2^30. "
         "Outputs: dst [32,16] (uint32 containers), scale [4,16]", SRC_QDOC, ["N4"])


def q_fp16_128x256():
    name = "quantize_mx_fp16_128x256_e5m2_spread"
    rng = rng_for(name)
    P, F = 128, 256
    x = random_blocks(rng, P, F, -10, 10)
    # (0,0) all zero; (0,1) +Inf; (0,2) -Inf; (0,3) NaN (fp16 0x7E00)
    set_block(x, 0, 0, 0.0)
    blk = rng.normal(0, 30, (8, 4)).astype(F32)
    blk[2, 3] = np.inf
    set_block(x, 0, 1, blk)
    blk = rng.normal(0, 30, (8, 4)).astype(F32)
    blk[7, 0] = -np.inf
    set_block(x, 0, 2, blk)
    blk = rng.normal(0, 30, (8, 4)).astype(F32)
    blk[5, 1] = np.nan
    set_block(x, 0, 3, blk)
    # (1,0) e5m2 ties at scale 1 (amax 2^14 = 16384: e 141, s 127): 1.125 -> 1, 1.375 -> 1.5, 1.875 -> 2,
    # 18432 -> 16384, 22528 -> 24576, 0.28125 -> 0.25, 0.46875 -> 0.5, 2.5 exact; subnormals (unit 2^-16):
    # 5 * 2^-17 = 2.5 units -> 2 (2^-15), 3 * 2^-17 = 1.5 units -> 2 (2^-15), 2^-17 = 0.5 units -> 0
    ties = [16384.0, 1.125, 1.375, 1.875, 18432.0, 22528.0, 0.28125, 0.46875, 2.5, -1.125, -1.375, -1.875, 3.5, 7.0,
            5 * 2.0 ** -17, 3 * 2.0 ** -17, 2.0 ** -17]
    blk = np.zeros((8, 4), F32)
    blk.flat[:len(ties)] = ties
    set_block(x, 1, 0, blk)
    # (1,1) e5m2 subnormals: amax 2^15 (e 142, s 128, q = x / 2): 2^-14 -> 2^-15, 3 * 2^-17 -> 2^-16, 2^-16 -> 0
    blk = np.zeros((8, 4), F32)
    blk.flat[:9] = [2.0 ** 15, 2.0 ** -14, 3 * 2.0 ** -17, 2.0 ** -16, 3 * 2.0 ** -16, 5 * 2.0 ** -16, 7 * 2.0 ** -16,
                    -2.0 ** -14, 2.0 ** -13]
    set_block(x, 1, 1, blk)
    # (1,2) fp16 subnormal inputs k * 2^-24 (normal in fp32: e 103..112)
    blk = (rng.integers(-1023, 1024, (8, 4)) * 2.0 ** -24).astype(F32)
    set_block(x, 1, 2, blk)
    # (1,3) fp16's largest finite 65504 (e 142, s 128: q 32752 -> 32768); AWS's golden scale gives 65504 -> 57344
    blk = rng.normal(0, 2 ** 12, (8, 4)).astype(F32)
    blk[3, 2] = 65504.0
    blk[4, 0] = -65504.0
    set_block(x, 1, 3, blk)
    # (2,0) values far below amax -> +-0 (e5m2 0x00 / 0x80)
    blk = rng.normal(0, 2 ** -10, (8, 4)).astype(F32)
    blk[0, 0] = 2.0 ** 10
    set_block(x, 2, 0, blk)
    with np.errstate(under="ignore"):
        raw = np.where(np.isnan(x), 0, x).astype(np.float16)
    raw.view(np.uint16)[np.isnan(x)] = 0x7E00
    xw = widen(raw, FP16)
    init = rng.integers(0, 256, (P, F // 4), dtype=np.int64).astype(np.uint8)
    g = Prog()
    src = g.tile("src", FP16, P, F)
    g.put(src, raw)
    dst = g.tile("dst_t", E5X, P, F // 4)
    sct = g.tile("scale_t", E8M0, P, F // 4)
    g.put(sct, init)
    _, cont, s = g.quantize(g.whole(src), g.whole(dst), g.whole(sct))
    lanes = unpack(cont, E5X).reshape(P, F)
    assert s[0, 0] == 0 and s[0, 1] == 241 and s[0, 3] == 241 and s[1, 0] == 127 and s[1, 1] == 128 and s[1, 3] == 128
    assert lanes[2, 7] == 0x7B and lanes[7, 8] == 0xFB and lanes[5, 13] == 0x7E
    got = lanes[8:16, 0:4].reshape(-1).view(md.float8_e5m2).astype(F32)
    assert list(got[:17]) == [16384, 1, 1.5, 2, 16384, 24576, 0.25, 0.5, 2.5, -1, -1.5, -2, 3.5, 7, 2.0 ** -15,
                              2.0 ** -15, 0.0], got
    got = lanes[8:16, 4:8].reshape(-1).view(md.float8_e5m2).astype(F32)
    assert list(got[:9] / 2.0 ** -16) == [2.0 ** 30, 2, 1, 0, 2, 2, 4, -2, 4], got  # 1.5 -> 2, 2.5 -> 2, 3.5 -> 4
    assert lanes[8 + 3, 12 + 2] == 0x78 and lanes[8 + 4, 12] == 0xF8  # +-32768
    sc_exp = init.copy()
    sc_exp[block_rows(P, P // 8)] = s
    g.out(g.whole(dst), "dst")
    g.out(g.whole(sct), "scale", sc_exp)
    quant_checks(name, xw, E5X, cont, s)
    alt = init.copy()
    alt[:P // 8] = s
    SENS.append((name, "scales in rows 0..15 (the compact layout) instead of 32 * (b // 4) + b % 4",
                 f"{differ(alt, sc_exp)} of {alt.size} scale-tile bytes"))
    case(name, g,
         "QuantizeMx fp16 [128, 256] -> float8_e5m2_x4 [128, 64] with spread float8_e8m0fnu scales [128, 64] (P rows: "
         "block b in row 32 * (b // 4) + b % 4, i.e. rows 0..3, 32..35, 64..67, 96..99), the tile prefilled by a Load "
         "of random bytes so the other 112 rows show unchanged. Blocks: (0,0) all zero (s 0); (0,1) +Inf, (0,2) -Inf "
         "(e 255, s 241: +-57344 = 0x7B / 0xFB); (0,3) NaN 0x7E00 (0x7E); (1,0) e5m2 RNE ties at scale 1 (1.125 -> 1, "
         "1.375 -> 1.5, 1.875 -> 2, 18432 -> 16384, 22528 -> 24576, 5 * 2^-17 -> 2^-15); (1,1) e5m2 subnormals "
         "(amax 2^15, s 128, q = x / 2: 3 * 2^-17 -> 2^-16, 2^-16 -> 0); (1,2) fp16 subnormal inputs; (1,3) fp16 "
         "+-65504 (s 128: +-32768, no saturation); (2,0) small values -> +-0; the rest normal values at 2^-10..2^10. "
         "Outputs: dst [128,64], scale [128,64]", SRC_QDOC, ["N4"])


def q_fp32_16x32():
    name = "quantize_mx_fp32_16x32_e4m3fn_subnormals"
    rng = rng_for(name)
    P, F = 16, 32
    x = random_blocks(rng, P, F, -100, 100)
    # (0,0) fp32 subnormals (e 0, s 0, q = x * 2^127): 2^-133 -> 2^-6, 3 * 2^-141 -> 3 * 2^-14 -> 0 (< 2^-10)
    blk = np.zeros((8, 4), F32)
    blk.flat[:6] = [2.0 ** -133, 3 * 2.0 ** -141, f32b(1), 2.0 ** -136, 3 * 2.0 ** -137, 5 * 2.0 ** -138]
    set_block(x, 0, 0, blk)
    # (0,1) tiny normals (clamp): 1.5 * 2^-121 -> 96, 2^-125 -> 4
    blk = np.zeros((8, 4), F32)
    blk.flat[:3] = [1.5 * 2.0 ** -121, 2.0 ** -125, -1.25 * 2.0 ** -124]
    set_block(x, 0, 1, blk)
    # (0,2) fp32 max 0x7F7FFFFF (e 254, s 247: q = 255.99998 -> 256)
    blk = rng.normal(0, 2 ** 125, (8, 4)).astype(F32)
    blk[1, 2] = f32b(0x7F7FFFFF)
    set_block(x, 0, 2, blk)
    # (0,3) ties with the full fp32 mantissa at scale 1 (amax 128): 1.0625 -> 1 (a tie), 1.0625 + 2^-20 -> 1.125
    # (just above), 3.125 - 2^-21 -> 3.0
    blk = np.zeros((8, 4), F32)
    blk.flat[:5] = [128.0, 1.0625, 1.0625 + 2.0 ** -20, 3.125 - 2.0 ** -21, 3.125]
    set_block(x, 0, 3, blk)
    # (1,0) +Inf with fp32 NaN payload elsewhere? no: one special per block. +Inf
    blk = rng.normal(0, 1, (8, 4)).astype(F32)
    blk[7, 3] = np.inf
    set_block(x, 1, 0, blk)
    # (1,1) a NaN with a payload (0x7FC01234 -> e4m3fn 0x7F)
    blk = rng.normal(0, 1, (8, 4)).astype(F32)
    blk[0, 1] = f32b(0x7FC01234)
    set_block(x, 1, 1, blk)
    g = Prog()
    src = g.tile("src", FP32, P, F)
    g.put(src, x)
    dst = g.tile("dst_t", E4X, P, F // 4)
    sct = g.tile("scale_t", E8M0, P // 8, F // 4)
    _, cont, s = g.quantize(g.whole(src), g.whole(dst), g.whole(sct))
    lanes = unpack(cont, E4X).reshape(P, F).view(md.float8_e4m3fn).astype(F32)
    assert s[0, 0] == 0 and s[0, 1] == 0 and s[0, 2] == 247 and s[0, 3] == 127 and s[1, 0] == 248 and s[1, 1] == 248
    assert list(lanes[0:2, 0:4].reshape(-1)[:6]) == [2.0 ** -6, 0, 0, 2.0 ** -9, 2.0 ** -8, 2.0 ** -9]
    assert list(lanes[0, 4:7]) == [96.0, 4.0, -10.0] and lanes[1, 10] == 256.0
    assert list(lanes[0:2, 12:16].reshape(-1)[:5]) == [128.0, 1.0, 1.125, 3.0, 3.0]
    g.out(g.whole(dst), "dst")
    g.out(g.whole(sct), "scale")
    quant_checks(name, x, E4X, cont, s)
    case(name, g,
         "QuantizeMx fp32 [16, 32] (the spec allows float32; AWS documents fp16 / bf16 only) -> float8_e4m3fn_x4 "
         "[16, 8], compact float8_e8m0fnu scales [2, 8]. Blocks: (0,0) fp32 subnormals (e 0, s 0: 2^-133 -> 2^-6, "
         "2^-136 -> 2^-9, 3 * 2^-137 -> 2^-8 (a tie), 5 * 2^-138 -> 2^-9 (1.25 ulp), 0x00000001 -> 0); (0,1) tiny normals "
         "(s clamped to 0: 1.5 * 2^-121 -> 96); (0,2) fp32 max 0x7F7FFFFF (s 247: 255.99998 -> 256); (0,3) one "
         "rounding from the full fp32 value (1.0625 -> 1, 1.0625 + 2^-20 -> 1.125, 3.125 - 2^-21 -> 3); (1,0) +Inf "
         "(s 248); (1,1) NaN 0x7FC01234 (0x7F). Outputs: dst [16,8], scale [2,8]", SRC_QDOC, ["N4"])


def q_scales_at_partition_4():
    name = "quantize_mx_bf16_64x32_scales_at_quadrant_offsets_0_and_4"
    rng = rng_for(name)
    P, F = 64, 32
    a = random_blocks(rng, P, F, -8, 8)
    b = random_blocks(rng, P, F, -8, 8)
    init = rng.integers(0, 256, (128, F // 4), dtype=np.int64).astype(np.uint8)
    g = Prog()
    ta = g.tile("a", BF16, P, F)
    tb = g.tile("b", BF16, P, F)
    g.put(ta, to_bf(a))
    g.put(tb, to_bf(b))
    qa = g.tile("qa_t", E4X, P, F // 4)
    qb = g.tile("qb_t", E4X, P, F // 4)
    sct = g.tile("scale_t", U8, 128, F // 4)
    g.put(sct, init)
    _, ca, sa = g.quantize(g.whole(ta), g.whole(qa), g.whole(sct, P, F // 4, 0))
    _, cb, sb_ = g.quantize(g.whole(tb), g.whole(qb), g.whole(sct, P, F // 4, 4))
    want = init.copy()
    want[[0, 1, 2, 3, 32, 33, 34, 35]] = sa
    want[[4, 5, 6, 7, 36, 37, 38, 39]] = sb_
    g.out(g.whole(qa), "qa")
    g.out(g.whole(qb), "qb")
    g.out(g.whole(sct), "scale", want)
    alt = init.copy()
    alt[[0, 1, 2, 3, 32, 33, 34, 35]] = sb_
    SENS.append((name, "block rows taken as absolute partitions 32 * (b // 4) + b % 4 (the AP's start ignored: "
                 "the second QuantizeMx overwrites the first's scales)", f"{differ(alt, want)} of {want.size} "
                 "scale-tile bytes"))
    alt = init.copy()
    alt[[0, 1, 2, 3, 32, 33, 34, 35]] = sa
    alt[[4, 5, 6, 7, 8, 9, 10, 11]] = sb_
    SENS.append((name, "the second tensor's 8 scale rows contiguous from its AP start (4..11, the compact layout)",
                 f"{differ(alt, want)} of {want.size} scale-tile bytes"))
    case(name, g,
         "AWS's scale packing (deep dive 'Packing Scale Values'): two QuantizeMx bf16 [64, 32] -> float8_e4m3fn_x4 "
         "[64, 8] write their spread scales (64-row APs) into one uint8 [128, 8] tile prefilled by a Load: the first "
         "AP starts at partition 0 (blocks at rows 0..3, 32..35), the second at partition 4 (offset 4 * 8: blocks at "
         "AP rows 0..3, 32..35 = partitions 4..7, 36..39); every other row keeps its Loaded byte. Outputs: qa, qb "
         "[64,8], scale [128,8]", SRC_PACKED)
    return ca, cb


# ================================================================ MatmultMx
def load_scales_scattered(g, tname, sc):
    """AWS's load_scales_scattered: for K > 32, a [K, C] tile Memset to 0 and 4-row groups q of the
    contiguous [K/8, C] scales Loaded to partitions 32q..32q+3; for K <= 32 a [K/8, C] tile Loaded whole."""
    kb, c = sc.shape
    if kb <= 4:
        t = g.tile(tname, U8, kb, c)
        g.put(t, sc)
        return g.whole(t)
    t = g.tile(tname, U8, 8 * kb, c)
    g.memset(g.whole(t), 0)
    src = g.input(tname + "_in", U8, sc)
    for q in range(kb // 4):
        g.copy("Load", rect(src, U8, c, 4, c, 4 * q), rect(t, U8, c, 4, c, 32 * q))
    return g.whole(t)


def mx_checks(name, g, idx, aws=None, what="", gwhat="", out_bf16=False):
    """Sensitivity rows for the MatmultMx number idx of program g (on its fp32 dot products, or on their
    bf16 roundings when out_bf16); AWS's golden (if given) compared with the fp32 dot products."""
    mv, sv, res = g.mx[idx]
    ex, indep = exact_info(mv, sv)
    n = res.size
    fin = to_bf if out_bf16 else (lambda v: v)
    unit = " (bf16 outputs)" if out_bf16 else ""
    for order, text in (("qk", "rows taken lane-major (all lanes 0 of k = 0..K-1, then lanes 1, ...)"),
                        ("lane", "each partition's 4 lane products summed first (serially), then added"),
                        ("pair", "each partition's lanes summed as (p0 + p1) + (p2 + p3) first, then added"),
                        ("q3210", "lanes taken 3, 2, 1, 0 within a partition (N9 reversed)")):
        SENS.append((name, f"MatmultMx{what}: {text}", f"{differ(fin(mx_dot(mv, sv, order)), fin(res))} of {n}{unit}"))
    if np.isfinite(res).all():
        SENS.append((name, f"MatmultMx{what}: the exact sum rounded once (float64, compensated)",
                     f"{differ(fin(ex), fin(res))} of {n}{unit}"))
    what = what + gwhat
    if aws is not None:
        gold = np.asarray(aws, F32)
        assert differ(gold[indep], res[indep]) == 0, name
        d = np.abs(gold.astype(F64) - res.astype(F64))
        rel = float((d / np.maximum(np.abs(res.astype(F64)), 1e-30)).max())
        SANITY.append((name, f"AWS nc_matmul_mx_golden{what} (fp32 einsum)",
                       f"bit-equal on all {int(indep.sum())} order-independent elements of {n}; "
                       f"{n - differ(gold, res)} of {n} bit-equal in all; max rel. diff {rel:.2e}; "
                       f"np.allclose(rtol=atol=5e-2) {np.allclose(gold, res, rtol=5e-2, atol=5e-2)}"))
    return ex, indep


def mm_aws_offline(mldt, tag):
    """AWS's kernel_offline_quantized_mx_matmul at M, K, N = 128, 128, 512 with an fp32 PSUM tile."""
    name = f"matmult_mx_aws_offline_{tag}_K128_M128_N512"
    rs = rs_for(name)
    M, K, N = 128, 128, 512
    _, st_x4, st_c, st_s = stabilized(rs, mldt, (K, M * 4))
    _, mv_x4, mv_c, mv_s = stabilized(rs, mldt, (K, N * 4))
    dt = X4_OF[mldt]
    g = Prog()
    st = g.tile("st_t", dt, K, M)
    g.put(st, st_c)
    sts = load_scales_scattered(g, "st_scale_t", st_s)
    mv = g.tile("mv_t", dt, K, N)
    g.put(mv, mv_c)
    mvs = load_scales_scattered(g, "mv_scale_t", mv_s)
    g.psum("ps")
    g.matmult_mx(g.whole(mv), g.whole(st), mvs, sts, psap("ps", FP32, M, N), cc224(START | STOP))
    y = g.psum_out("ps", "y", FP32, 0, 0, M, N)
    gold = aws_nc_matmul_mx_golden(st_x4, mv_x4, st_s, mv_s, mldt, mldt)
    mx_checks(name, g, 0, gold)
    hw_s = np.zeros((K, N), np.uint8)
    hw_s[block_rows(K, K // 8)] = mv_s
    alt_rows = dequant(mv_c, dt, hw_s[:K // 8])  # spread scales read as compact (rows 0..15)
    SENS.append((name, "the moving's scales read from rows 0..15 (compact) of the spread [128, 512] tile",
                 f"{differ(mx_dot(alt_rows, g.mx[0][1]), y)} of {y.size}"))
    case(name, g,
         f"AWS's kernel_offline_quantized_mx_matmul / run_offline_quantized_matmul_mx_test with {mldt.__name__} "
         f"({dt}): generate_stabilized_mx_data stationary (K, 4M) = (128, 512) -> [128, 128] x4, moving (128, 2048) "
         "-> [128, 512] x4 (Loaded as is), contiguous scales [16, 128] / [16, 512] spread by load_scales_scattered "
         "(Memset 0 of a [128, C] uint8 tile, then 4 Loads of rows 4q..4q+3 to partitions 32q..32q+3); one MatmultMx "
         "(accumulation_flag 3, START|STOP) into an fp32 PSUM tile (AWS's kernel uses bf16; fp32 here so the M3 "
         "order shows), TensorCopy to SB, Save. Output: y [128,512] fp32", SRC_OFF)


def mm_fp4_e4_compact():
    name = "matmult_mx_fp4_stationary_e4m3fn_moving_K32_M64_N256_compact"
    rs = rs_for(name)
    M, K, N = 64, 32, 256
    _, st_x4, st_c, st_s = stabilized(rs, md.float4_e2m1fn, (K, M * 4))
    _, mv_x4, mv_c, mv_s = stabilized(rs, md.float8_e4m3fn, (K, N * 4))
    g = Prog()
    st = g.tile("st_t", F4X, K, M)
    g.put(st, st_c)
    sts = g.tile("st_scale_t", E8M0, K // 8, M)
    g.put(sts, st_s)
    mv = g.tile("mv_t", E4X, K, N)
    g.put(mv, mv_c)
    mvs = g.tile("mv_scale_t", E8M0, K // 8, N)
    g.put(mvs, mv_s)
    g.psum("ps")
    g.matmult_mx(g.whole(mv), g.whole(st), g.whole(mvs), g.whole(sts), psap("ps", FP32, M, N, p0=32, bank=3),
                 klr(True, True))
    g.psum_out("ps", "y", FP32, 32, 3 * 512, M, N)
    gold = aws_nc_matmul_mx_golden(st_x4, mv_x4, st_s, mv_s, md.float4_e2m1fn, md.float8_e4m3fn)
    mx_checks(name, g, 0, gold)
    case(name, g,
         "MatmultMx with a float4_e2m1fn_x4 stationary [32, 64] (2-byte containers, uint16 .npy) and a "
         "float8_e4m3fn_x4 moving [32, 256], both from generate_stabilized_mx_data, compact float8_e8m0fnu scales "
         "[4, 64] / [4, 256] (K/8 rows) Loaded as is; the KLR record (start_tensor_calc true, stop_tensor_calc true); "
         "output fp32 at PSUM partitions 32..95, bank 3. Output: y [64,256]", SRC_MDOC + "; " + SRC_UTIL)


def mm_accumulate():
    name = "matmult_mx_start_then_accumulate_K64_M48_N200_spread"
    rs = rs_for(name)
    M, K, N = 48, 64, 200
    g = Prog()
    g.psum("ps")
    golds = []
    for t, flag in enumerate((START, ACC | STOP)):
        _, st_x4, st_c, st_s = stabilized(rs, md.float8_e4m3fn, (K, M * 4))
        _, mv_x4, mv_c, mv_s = stabilized(rs, md.float8_e5m2, (K, N * 4))
        st = g.tile(f"st{t}_t", E4X, K, M)
        g.put(st, st_c)
        sts = load_scales_scattered(g, f"st{t}_scale_t", st_s)
        mv = g.tile(f"mv{t}_t", E5X, K, N)
        g.put(mv, mv_c)
        mvs = load_scales_scattered(g, f"mv{t}_scale_t", mv_s)
        g.matmult_mx(g.whole(mv), g.whole(st), mvs, sts, psap("ps", FP32, M, N, p0=8, bank=1, c0=100), cc224(flag))
        golds.append(aws_nc_matmul_mx_golden(st_x4, mv_x4, st_s, mv_s, md.float8_e4m3fn, md.float8_e5m2))
    y = g.psum_out("ps", "y", FP32, 8, 512 + 100, M, N)
    p0, p1 = g.mx[0][2], g.mx[1][2]
    assert differ(y, (p0 + p1).astype(F32)) == 0
    for i in range(2):
        mx_checks(name, g, i, golds[i], f" #{i}")
    SENS.append((name, "the second MatmultMx overwriting (no accumulation)", f"{differ(p1, y)} of {y.size}"))
    case(name, g,
         "Two MatmultMx into the same PSUM tile (fp32, partitions 8..55, bank 1 columns 100..299): accumulation_flag 1 "
         "(START) then 6 (ACCUMULATE|STOP), each a float8_e4m3fn_x4 stationary [64, 48] and a float8_e5m2_x4 moving "
         "[64, 200] from generate_stabilized_mx_data with spread scales (64-row uint8 tiles, blocks at rows 0..3, "
         "32..35, by AWS's load_scales_scattered): y = fp32(P0 + P1), each P its own M3 sum. Output: y [48,200]",
         SRC_MDOC + "; " + SRC_UTIL)


def mm_order_hand():
    """K = 8 (one block row), e4m3fn both sides, M = 2, N = 4. Element [0, 0] (moving scale 135 = 2^8,
    stationary scale 127): products by row r = 4k + q: r0 = 256 * 256 * 2^8 = 2^24, r4 = r5 = 2^-8 * 1 *
    2^8 = 1, r8 = 256 * -256 * 2^8 = -2^24, all others 0. Rows ascending (the spec): 2^24 + 1 = 2^24 (a
    tie, to even), + 1 = 2^24, - 2^24 = +0. Lane-major (lane 0 of every k, then lane 1, ...): r0 + r4 =
    2^24 (tie), + r8 = 0, then lane 1: + r5 = 1. Each partition's lanes first: k1 gives 1 + 1 = 2, 2^24 + 2
    is exact, - 2^24 = 2. Exact sum: 2."""
    name = "matmult_mx_order_hand_K8_M2_N4"
    rng = rng_for(name)
    K, M, N = 8, 2, 4
    mvv = np.zeros((K, N, 4), F32)
    stv = np.zeros((K, M, 4), F32)
    mvv[0, 0, 0], stv[0, 0, 0] = 256.0, 256.0
    mvv[1, 0, 0], stv[1, 0, 0] = 2.0 ** -8, 1.0
    mvv[1, 0, 1], stv[1, 0, 1] = 2.0 ** -8, 1.0
    mvv[2, 0, 0], stv[2, 0, 0] = 256.0, -256.0
    # the other columns: small integers (order-independent sums)
    mvv[:, 1:, :] = rng.integers(-8, 9, (K, N - 1, 4))
    stv[:, 1, :] = rng.integers(-8, 9, (K, 4))
    mv_c = pack(lane_codes(mvv.reshape(K, -1), E4X), E4X)
    st_c = pack(lane_codes(stv.reshape(K, -1), E4X), E4X)
    mv_s = np.array([[135, 127, 126, 128]], np.uint8)
    st_s = np.array([[127, 127]], np.uint8)
    g = Prog()
    st = g.tile("st_t", E4X, K, M)
    g.put(st, st_c)
    sts = g.tile("st_scale_t", U8, 1, M)
    g.put(sts, st_s)
    mv = g.tile("mv_t", E4X, K, N)
    g.put(mv, mv_c)
    mvs = g.tile("mv_scale_t", U8, 1, N)
    g.put(mvs, mv_s)
    g.psum("ps")
    g.matmult_mx(g.whole(mv), g.whole(st), g.whole(mvs), g.whole(sts), psap("ps", FP32, M, N), cc224(START | STOP))
    y = g.psum_out("ps", "y", FP32, 0, 0, M, N)
    mv3, sv3, _ = g.mx[0]
    assert bits(y[0, 0]) == 0  # +0
    assert mx_dot(mv3, sv3, "qk")[0, 0] == 1.0 and mx_dot(mv3, sv3, "lane")[0, 0] == 2.0
    assert mx_dot(mv3, sv3, "pair")[0, 0] == 2.0 and exact_info(mv3, sv3)[0][0, 0] == 2.0
    mx_checks(name, g, 0)
    case(name, g,
         "Hand-worked M3 order over the 4K rows r = 4k + q: K = 8, float8_e4m3fn_x4 both, M = 2, N = 4, compact uint8 "
         "scales [1, 4] = [135, 127, 126, 128] (moving) and [1, 2] = [127, 127]. Element [0, 0]: products 2^24 "
         "(k0 lane 0: 256 * 256 * 2^8), 1 and 1 (k1 lanes 0 and 1: 2^-8 * 1 * 2^8), -2^24 (k2 lane 0): ascending r "
         "gives ((2^24 + 1) = 2^24 (tie to even) + 1 = 2^24) - 2^24 = +0; per-partition lane sums first and the "
         "exact sum give 2, lane-major order (lane 0 of all k first) 1. The other elements are small-integer (exact) sums. Output: y [2,4]",
         SRC_MDOC)


def mm_exact_fp4():
    name = "matmult_mx_exact_fp4_K32_M32_N128_aws_golden"
    rs = rs_for(name)
    rng = rng_for(name)
    M, K, N = 32, 32, 128
    _, st_x4, st_c, _ = stabilized(rs, md.float4_e2m1fn, (K, M * 4))
    _, mv_x4, mv_c, _ = stabilized(rs, md.float4_e2m1fn, (K, N * 4))
    st_s = rng.integers(120, 125, (K // 8, M)).astype(np.uint8)  # a narrow band: every sum exact
    mv_s = rng.integers(120, 125, (K // 8, N)).astype(np.uint8)
    g = Prog()
    st = g.tile("st_t", F4X, K, M)
    g.put(st, st_c)
    sts = g.tile("st_scale_t", U8, K, M)  # K rows (= K/8 rows' layout for K = 32): blocks in rows 0..3
    g.memset(g.whole(sts), 0xFF)
    g.copy("Load", g.whole(g.input("st_scale_in", U8, st_s)), g.whole(sts, K // 8, M))
    mv = g.tile("mv_t", F4X, K, N)
    g.put(mv, mv_c)
    mvs = g.tile("mv_scale_t", U8, K // 8, N)
    g.put(mvs, mv_s)
    g.psum("ps")
    g.matmult_mx(g.whole(mv), g.whole(st), g.whole(mvs), g.whole(sts), psap("ps", FP32, M, N, bank=7), cc224(START | STOP))
    y = g.psum_out("ps", "y", FP32, 0, 7 * 512, M, N)
    gold = aws_nc_matmul_mx_golden(st_x4, mv_x4, st_s, mv_s, md.float4_e2m1fn, md.float4_e2m1fn)
    ex, indep = mx_checks(name, g, 0, gold)
    assert indep.all() and differ(gold, y) == 0
    case(name, g,
         "An order-independent MatmultMx checked bit for bit against AWS's nc_matmul_mx_golden: float4_e2m1fn_x4 "
         "stationary [32, 32] and moving [32, 128] (generate_stabilized_mx_data lanes) with scales drawn from 120..124 "
         "(so every partial sum is an exact fp32 value: sum |p| <= 2^24 * the smallest product bit); the stationary's "
         "scales in a 32-row uint8 tile (Memset 0xFF, blocks Loaded into rows 0..3: a K-row AP, as K <= 32 makes "
         "it the same rows), the moving's in a [4, 128] tile; PSUM bank 7. Output: y [32,128]", SRC_UTIL)


def mm_edges():
    """NaN / Inf lanes, scale bytes 255 and 0, products that round in fp32's subnormal range. Lanes
    are set one by one below; the result is order-independent (asserted over five orders)."""
    name = "matmult_mx_edges_nan_inf_scale_255_and_0_K32"
    rng = rng_for(name)
    K, M, N = 32, 6, 8
    sv = np.zeros((K, M, 4), F32)  # stationary lane values (e4m3fn), [k, m, q]
    mv = np.zeros((K, N, 4), F32)  # moving lane values (e5m2), [k, n, q]
    st_s = np.full((K // 8, M), 127, np.uint8)
    mv_s = np.full((K // 8, N), 127, np.uint8)
    sv[0, 0, 0] = np.nan  # stationary row 0: NaN (0x7F) -> out[0, :] = 0x7FC00000
    # n = 0: +Inf (k8 q1) and -Inf (k16 q2) lanes (e5m2 0x7C / 0xFC)
    mv[8, 0, 1], mv[16, 0, 2] = np.inf, -np.inf
    sv[8, :, 1] = [1.0, 0.0, -1.0, 1.0, 0.0, 0.0]  # m1: Inf * 0 -> 0xFFC00000; m2: -Inf; m3: +Inf ...
    sv[16, :, 2] = [1.0, 0.0, 2.0, 1.0, 0.0, 0.0]  # ... m2: -Inf + -Inf = -Inf; m3: +Inf + -Inf = 0xFFC00000
    # n = 1: scale 255 (2^128) on block 0: lanes 0.5 -> 2^127 (finite), the sum overflows for m3
    mv_s[0, 1] = 255
    mv[2, 1, 1], mv[2, 1, 3] = 0.5, 0.5
    sv[2, :, 1] = [1.0, 1.0, 1.0, 1.5, 0.0, 0.0]
    sv[2, :, 3] = [1.0, -1.0, 0.5, 1.5, 0.0, 0.0]  # m1: 0; m2: 2^127 + 2^126; m3: 1.5 * 2^127 * 2 -> +Inf
    # n = 2: scale 255 with a lane 1.0 -> ldexpf overflows to +Inf
    mv_s[0, 2] = 255
    mv[3, 2, 0] = 1.0
    sv[3, :, 0] = [1.0, 0.0, -2.0, 1.0, 0.0, 0.0]  # m1: Inf * 0 -> 0xFFC00000; m2: -Inf; m3: +Inf
    # n = 3: scale 0 (2^-127): 1.25 -> 1.25 * 2^-127 (fp32 subnormal); stationary m4's block 0 at scale 107:
    # 1.125 * 2^-20 -> product 1.40625 * 2^-147 = 5.625 * 2^-149 -> 6 * 2^-149 (one rounding)
    mv_s[0, 3] = 0
    st_s[0, 4] = 107
    mv[0, 3, 1] = 1.25
    sv[0, :, 1] = [1.0, 1.0, 2.0 ** -9, 0.0, 1.125, 0.0]  # m1: 1.25 * 2^-127 = 5 * 2^-129; m2: 1.25 * 2^-136
    # n = 4: scale 0 on block 1: e5m2 2^-16 -> 2^-143; stationary m5 k8 q0 = 6 * 2^-9 (e4m3fn subnormal):
    # 1.5 * 2^-150 -> 2^-149 (rounds up to the smallest subnormal); m2: 2^-9 -> 2^-152 -> +0
    mv_s[1, 4] = 0
    mv[8, 4, 0] = 2.0 ** -16
    sv[8, :, 0] = [1.0, 1.0, 2.0 ** -9, 0.0, 0.0, 6 * 2.0 ** -9]
    # n = 5: an e5m2 NaN lane (0x7E -> 0x7FC00000) at k20 q0
    mv[20, 5, 0] = np.nan
    # n = 5..7 and everywhere not set above: ordinary values on blocks 2, 3 (k 16..31)
    mv[24:, 5:, :] = (rng.integers(-4, 5, (8, 3, 4)) * 0.25).astype(F32)
    sv[24:, 1:, :] = (rng.integers(-4, 5, (8, M - 1, 4)) * 0.5).astype(F32)
    mv_c = pack(lane_codes(mv.reshape(K, -1), E5X), E5X)
    st_c = pack(lane_codes(sv.reshape(K, -1), E4X), E4X)
    g = Prog()
    st = g.tile("st_t", E4X, K, M)
    g.put(st, st_c)
    sts = g.tile("st_scale_t", U8, K // 8, M)
    g.put(sts, st_s)
    mvt = g.tile("mv_t", E5X, K, N)
    g.put(mvt, mv_c)
    mvs = g.tile("mv_scale_t", U8, K // 8, N)
    g.put(mvs, mv_s)
    g.psum("ps")
    g.matmult_mx(g.whole(mvt), g.whole(st), g.whole(mvs), g.whole(sts), psap("ps", FP32, M, N), cc224(START | STOP))
    y = g.psum_out("ps", "y", FP32, 0, 0, M, N)
    m3, s3, _ = g.mx[0]
    for order in ("qk", "lane", "pair", "q3210"):
        assert differ(mx_dot(m3, s3, order), y) == 0, order
    yb = y.view(np.uint32)
    assert (yb[0] == 0x7FC00000).all()
    assert yb[1, 0] == 0xFFC00000 and y[2, 0] == -np.inf and yb[3, 0] == 0xFFC00000
    assert y[1, 1] == 0.0 and y[2, 1] == F32(1.5 * 2.0 ** 127) and y[3, 1] == np.inf
    assert yb[1, 2] == 0xFFC00000 and y[2, 2] == -np.inf and y[3, 2] == np.inf
    assert yb[1, 3] == 5 * 2 ** 20 and yb[4, 3] == 6 and yb[2, 3] == bits(F32(1.25 * 2.0 ** -136))
    assert yb[5, 4] == 1 and yb[1, 4] == bits(F32(2.0 ** -143)) and yb[2, 4] == 0
    assert (yb[1:, 5] == 0x7FC00000).all()
    mx_checks(name, g, 0)
    case(name, g,
         "MatmultMx special values (float8_e4m3fn_x4 stationary [32, 6], float8_e5m2_x4 moving [32, 8], compact uint8 "
         "scales): a stationary NaN lane (0x7F) makes row 0 0x7FC00000; moving +-Inf lanes (0x7C / 0xFC) give Inf * 0 "
         "= 0xFFC00000, -Inf + -Inf, Inf - Inf = 0xFFC00000 (x86 default NaN, fidelity M6); scale byte 255 read raw "
         "(2^128, not OCP's NaN): 0.5 -> 2^127 finite, 1.0 -> ldexpf overflow +Inf, a sum 1.5 * 2^127 * 2 -> +Inf; "
         "scale byte 0 (2^-127): 1.25 -> fp32 subnormal, a product 1.40625 * 2^-147 rounds to 6 * 2^-149, 1.5 * "
         "2^-150 rounds up to 0x00000001, 2^-152 to +0 (no flush to zero); an e5m2 NaN lane (0x7E) -> 0x7FC00000. "
         "Every order of the sum gives the same bits (asserted). Output: y [6,8]", SRC_MDOC, ["M6"])


def mm_bf16_psum():
    name = "matmult_mx_bf16_psum_start_acc_K32_M32_N64_gen4"
    rs = rs_for(name)
    M, K, N = 32, 32, 64
    g = Prog("gen4")
    g.psum("ps", BF16)
    golds = []
    for t, flag in enumerate((START, ACC | STOP)):
        _, st_x4, st_c, st_s = stabilized(rs, md.float8_e4m3fn, (K, M * 4))
        _, mv_x4, mv_c, mv_s = stabilized(rs, md.float8_e4m3fn, (K, N * 4))
        st = g.tile(f"st{t}_t", E4X, K, M)
        g.put(st, st_c)
        sts = g.tile(f"st{t}_scale_t", U8, K // 8, M)
        g.put(sts, st_s)
        mv = g.tile(f"mv{t}_t", E4X, K, N)
        g.put(mv, mv_c)
        mvs = g.tile(f"mv{t}_scale_t", U8, K // 8, N)
        g.put(mvs, mv_s)
        g.matmult_mx(g.whole(mv), g.whole(st), g.whole(mvs), g.whole(sts), psap("ps", BF16, M, N, bank=2), cc224(flag))
        golds.append(aws_nc_matmul_mx_golden(st_x4, mv_x4, st_s, mv_s, md.float8_e4m3fn, md.float8_e4m3fn))
    y = g.psum_out("ps", "y", BF16, 0, 2 * 1024, M, N)
    p0, p1 = g.mx[0][2], g.mx[1][2]
    want = to_bf((bf_to_f(to_bf(p0)) + p1).astype(F32))
    assert differ(y, want) == 0
    SENS.append((name, "the bf16 output rounded once from the fp32 sum P0 + P1 (no rounding of P0)",
                 f"{differ(to_bf((p0 + p1).astype(F32)), y)} of {y.size}"))
    SENS.append((name, "the bf16 output truncated instead of RNE", f"{differ(((bf_to_f(to_bf(p0)) + p1).astype(F32).view(np.uint32) >> 16).astype(np.uint16), y)} of {y.size}"))
    for i in range(2):
        mx_checks(name, g, i, golds[i], f" #{i} (its fp32 dot product)")
    case(name, g,
         "arch gen4, bf16 PSUM output (fidelity M9, as AWS's MX kernels allocate it): two MatmultMx (float8_e4m3fn_x4 "
         "stationary [32, 32], moving [32, 64], stabilized data, compact uint8 scales) into PSUM bank 2: START writes "
         "bf16(P0) (RNE), ACCUMULATE|STOP writes bf16(fp32(bf16(P0)) + P1); TensorCopy bf16 -> bf16 SB, Save. "
         "Output: y [32,64] bf16", SRC_MDOC + "; docs/fidelity.md M9", ["M9"])


# ================================================================ QuantizeMx feeding MatmultMx
def pipeline_on_device(st_ml, mv_ml, out_dt, tag):
    """AWS's kernel_on_device_quantize_matmul_mx: stationary offline (stabilized, scales spread by
    load_scales_scattered), moving bf16 [128, 2048] -> QuantizeMx -> MatmultMx."""
    name = f"quantize_matmult_mx_aws_on_device_{tag}"
    rs = rs_for(name)
    M, K, N = 128, 128, 512
    _, st_x4, st_c, st_s = stabilized(rs, st_ml, (K, M * 4))
    mv_fp, _, _, _ = aws_generate_stabilized_mx_data(rs, mv_ml, (K, N * 4))
    mv_bf = to_bf(mv_fp.astype(F32))
    assert np.array_equal(bf_to_f(mv_bf).astype(F64), mv_fp)  # the stabilized data is exact in bf16
    st_dt, mv_dt = X4_OF[st_ml], X4_OF[mv_ml]
    g = Prog("gen4")
    st = g.tile("st_t", st_dt, K, M)
    g.put(st, st_c)
    sts = load_scales_scattered(g, "st_scale_t", st_s)
    src = g.tile("mv_bf16_t", BF16, K, N * 4)
    g.put(src, mv_bf)
    mvq = g.tile("mv_q_t", mv_dt, K, N)
    mvs = g.tile("mv_scale_t", U8, K, N)
    x, cont, s = g.quantize(g.whole(src), g.whole(mvq), g.whole(mvs))
    g.psum("ps", out_dt)
    g.matmult_mx(g.whole(mvq), g.whole(st), g.whole(mvs), sts, psap("ps", out_dt, M, N), cc224(START | STOP))
    y = g.psum_out("ps", "y", out_dt, 0, 0, M, N)
    g.out(g.whole(mvq), "mv_q")
    g.out(ap(mvs, U8, [[32 * N, 4], [N, 4], [1, N]]), "mv_scale", shape=(16, N))  # the 16 written rows
    # sanity: AWS's golden (its quantize_mx_golden, scale e - Emax) and ours
    gq, gs = aws_quantize_mx_golden(mv_fp, mv_ml)
    gold = aws_nc_matmul_mx_golden(st_x4, gq, st_s, gs, st_ml, mv_ml)
    res = g.mx[0][2]
    yv = bf_to_f(y) if out_dt == BF16 else y
    SANITY.append((name, "AWS's flow as its host code checks it: nc_matmul_mx_golden(stationary, "
                   "quantize_mx_golden(moving)) vs our result, np.allclose(rtol=atol=5e-2)",
                   f"{np.allclose(yv, gold, rtol=5e-2, atol=5e-2)}; max |diff| {float(np.abs(yv - gold).max()):.2e}; "
                   f"its scales are ours - 1 on {int((gs.astype(int) == s.astype(int) - 1).sum())} of {s.size} blocks "
                   f"(e - Emax vs e - (Emax - 1)), so its moving lanes are 2x ours"))
    gq_doc, gs_doc = aws_quantize_mx_golden(mv_fp, mv_ml, custom_mx_max_exp=lambda d: aws_get_mx_max_exp(d) - 1)
    assert np.array_equal(gs_doc, s) and np.array_equal(gq_doc, cont)
    gold_doc = aws_nc_matmul_mx_golden(st_x4, gq_doc, st_s, gs_doc, st_ml, mv_ml)
    ex, indep = mx_checks(name, g, 0, gold_doc, gwhat=" on the documented quantization (quantize_mx_golden with "
                          "custom_mx_max_exp = Emax - 1, bit-equal to our QuantizeMx, asserted)", out_bf16=out_dt == BF16)
    lossy = int((bf_to_f(mv_bf) != dequant(cont, mv_dt, s).reshape(K, -1)).sum())
    SANITY.append((name, "QuantizeMx of the stabilized moving data, dequantized back (the documented scale is 2x "
                   "the one AWS's stabilization was made for, so an e5m2 subnormal lane could lose its last bit)",
                   f"{mv_bf.size - lossy} of {mv_bf.size} values exact"))
    if out_dt == BF16:
        SENS.append((name, "bf16 PSUM: truncation instead of RNE",
                     f"{differ((res.view(np.uint32) >> 16).astype(np.uint16), y)} of {y.size}"))
    case(name, g,
         f"AWS's kernel_on_device_quantize_matmul_mx (run_on_device_quantize_matmul_mx_test) with stationary "
         f"{st_ml.__name__} and moving {mv_ml.__name__}: stationary [128, 128] {st_dt} from "
         "generate_stabilized_mx_data (128, 512), scales spread by load_scales_scattered (Memset 0 + 4 Loads); moving "
         "= the generator's fp data (128, 2048) as bf16 (exact), Loaded, QuantizeMx -> "
         f"{mv_dt} [128, 512] with spread uint8 scales [128, 512] (allocate_mx_tiles); MatmultMx (flag 3) into a "
         f"{out_dt} PSUM tile" + (" (as AWS's kernel)" if out_dt == BF16 else " (AWS's kernel uses bf16)") +
         ", TensorCopy, Save. Outputs: y [128,512], mv_q [128,512], mv_scale (the 16 written rows, Saved through a "
         "3-level AP [[32*512, 4], [512, 4], [1, 512]])", SRC_ONDEV, ["M9"] if out_dt == BF16 else [])


def pipeline_packed_scales():
    """AWS's kernel_copy_strided_quantize_matmul_mx_packed_scale at K = 64 (unquantized K 256): the
    stationary / moving bf16 tensors [4K, M] / [4K, N] DMA-Loaded into the interleaved [K, 4M] / [K, 4N]
    layout (copy_data_strided, use_tensor_copy False), both quantized into one packed scale tile."""
    name = "quantize_matmult_mx_aws_packed_scales_K64_M64_N128"
    rs = rs_for(name)
    K, M, N = 64, 64, 128
    st_fp, _, _, _ = aws_generate_stabilized_mx_data(rs, md.float8_e5m2, (4 * K, M))
    mv_fp, _, _, _ = aws_generate_stabilized_mx_data(rs, md.float8_e5m2, (4 * K, N))
    st_bf, mv_bf = to_bf(st_fp.astype(F32)), to_bf(mv_fp.astype(F32))
    g = Prog("gen4")
    sin = g.input("stationary_hbm", BF16, st_bf)
    min_ = g.input("moving_hbm", BF16, mv_bf)
    sst = g.tile("st_strided_t", BF16, K, 4 * M)
    mst = g.tile("mv_strided_t", BF16, K, 4 * N)
    # copy_data_strided (DMA): source [4, K, F] read as [[F, K], [1, F], [K * F, 4]] -> dense [K, F, 4]
    g.copy("Load", ap(sin, BF16, [[M, K], [1, M], [K * M, 4]]), g.whole(sst))
    g.copy("Load", ap(min_, BF16, [[N, K], [1, N], [K * N, 4]]), g.whole(mst))
    stq = g.tile("st_q_t", E5X, K, M)
    mvq = g.tile("mv_q_t", E5X, K, N)
    packed = g.tile("packed_scale_t", U8, 128, N)
    sts = g.whole(packed, K, M, 0)
    mvs = g.whole(packed, K, N, 4)
    g.quantize(g.whole(sst), g.whole(stq), sts)
    g.quantize(g.whole(mst), g.whole(mvq), mvs)
    g.psum("ps")
    g.matmult_mx(g.whole(mvq), g.whole(stq), mvs, sts, psap("ps", FP32, M, N), cc224(START | STOP))
    y = g.psum_out("ps", "y", FP32, 0, 0, M, N)
    g.out(g.whole(stq), "st_q")
    g.out(g.whole(mvq), "mv_q")
    g.out(ap(packed, U8, [[32 * N, 2], [N, 4], [1, M]]), "st_scale", shape=(8, M))  # rows 0..3, 32..35
    g.out(ap(packed, U8, [[32 * N, 2], [N, 4], [1, N]], 4 * N), "mv_scale", shape=(8, N))  # rows 4..7, 36..39
    gold = (st_fp.T @ mv_fp)
    SANITY.append((name, "AWS's golden for this kernel: st_data.T @ mv_data (float64), np.allclose(rtol=atol=5e-2)",
                   f"{np.allclose(y, gold, rtol=5e-2, atol=5e-2)}; max |diff| {float(np.abs(y - gold).max()):.2e}"))
    mx_checks(name, g, 0)
    case(name, g,
         "AWS's kernel_copy_strided_quantize_matmul_mx_packed_scale (DMA variant) at K = 64 (unquantized 256), M = 64, "
         "N = 128, float8_e5m2_x4: bf16 stationary [256, 64] and moving [256, 128] (generate_stabilized_mx_data fp "
         "data) DMA-Loaded through the 3-level source APs [[F, 64], [1, F], [64 * F, 4]] into the interleaved [64, 4F] "
         "layout; both QuantizeMx write their spread scales into one uint8 [128, 128] tile: the stationary's 64-row AP "
         "from partition 0 (columns 0..63), the moving's from partition 4 (AWS's [4:, :]); MatmultMx reads both "
         "back; fp32 PSUM (AWS: bf16). AWS's K = 128 form (the moving's AP [4:, :] of 124 rows) is a case of its "
         "own. Outputs: y [64,128], st_q, mv_q, st_scale (rows 0..3, 32..35, columns 0..63) "
         "and mv_scale (rows 4..7, 36..39) of the packed tile, Saved through 3-level APs",
         SRC_PACKED)


def pipeline_packed_scales_k128():
    """AWS's kernel_copy_strided_quantize_matmul_mx_packed_scale as run_copy_strided_test(float8_e5m2,
    use_tensor_copy=True, pack_scales=True) runs it: K, M, N = 128, 128, 512 (unquantized K 512). The
    bf16 stationary [512, 128] / moving [512, 512] are DMA-Loaded as [K, 4, F] (load_tensor_helper),
    TensorCopy'd into the interleaved [K, 4F] layout (copy_data_strided), quantized into one packed
    [128, 512] uint8 scale tile: the stationary's through packed[0:, :128] (128 rows), the moving's
    through packed[4:, :] (124 rows: the amended rule's quadrant layout from partition 4), MatmultMx into
    a bf16 PSUM tile, TensorCopy to bf16 SB, Save."""
    name = "quantize_matmult_mx_aws_packed_scales_K128_M128_N512"
    rs = rs_for(name)
    K, M, N = 128, 128, 512
    st_fp, _, _, _ = aws_generate_stabilized_mx_data(rs, md.float8_e5m2, (4 * K, M))
    mv_fp, _, _, _ = aws_generate_stabilized_mx_data(rs, md.float8_e5m2, (4 * K, N))
    st_bf, mv_bf = to_bf(st_fp.astype(F32)), to_bf(mv_fp.astype(F32))
    assert np.array_equal(bf_to_f(st_bf).astype(F64), st_fp) and np.array_equal(bf_to_f(mv_bf).astype(F64), mv_fp)
    g = Prog("gen4")
    sin = g.input("stationary_hbm", BF16, st_bf)
    min_ = g.input("moving_hbm", BF16, mv_bf)
    strided = []
    for src, f, tag in ((sin, M, "st"), (min_, N, "mv")):
        # load_tensor_helper: dma_copy src [4, K, F].ap([[F, K], [K * F, 4], [1, F]]) -> SB [K, 4, F]
        sb = g.tile(f"{tag}_sbuf_t", BF16, K, 4 * f)
        g.copy("Load", ap(src, BF16, [[f, K], [K * f, 4], [1, f]]), g.whole(sb))
        # copy_data_strided: tensor_copy src SB.ap([[4F, K], [1, F], [F, 4]]) -> SB [K, F, 4] (dense)
        st_ = g.tile(f"{tag}_strided_t", BF16, K, 4 * f)
        g.copy("TensorCopy", ap(sb, BF16, [[4 * f, K], [1, f], [f, 4]]), g.whole(st_))
        strided.append(st_)
    stq = g.tile("st_q_t", E5X, K, M)
    mvq = g.tile("mv_q_t", E5X, K, N)
    packed = g.tile("packed_scale_t", U8, K, N)
    sts = g.whole(packed, K, M, 0)  # packed_mx_scale_sbuf[0:, :MAX_TILE_M]: 128 rows
    mvs = g.whole(packed, K - 4, N, 4)  # packed_mx_scale_sbuf[4:, :]: 124 rows from partition 4
    xs, cs, ss = g.quantize(g.whole(strided[0]), g.whole(stq), sts)
    xm, cm, sm = g.quantize(g.whole(strided[1]), g.whole(mvq), mvs)
    g.psum("ps", BF16)
    g.matmult_mx(g.whole(mvq), g.whole(stq), mvs, sts, psap("ps", BF16, M, N), cc224(START | STOP))
    y = g.psum_out("ps", "y", BF16, 0, 0, M, N)
    g.out(g.whole(stq), "st_q")
    g.out(g.whole(mvq), "mv_q")
    g.out(ap(packed, U8, [[32 * N, 4], [N, 4], [1, M]]), "st_scale", shape=(16, M))  # rows 0..3, 32..35, ...
    g.out(ap(packed, U8, [[32 * N, 4], [N, 4], [1, N]], 4 * N), "mv_scale", shape=(16, N))  # rows 4..7, 36..39, ...
    # the interleaved layout: strided[k, 4j + q] = data[q * K + k, j]
    for x, fp, f in ((xs, st_fp, M), (xm, mv_fp, N)):
        assert np.array_equal(x.astype(F64), fp.reshape(4, K, f).transpose(1, 2, 0).reshape(K, 4 * f))
    for x, c, s_, who in ((xs, cs, ss, "stationary"), (xm, cm, sm, "moving")):
        n0, n1 = len(SANITY), len(SENS)
        quant_checks(name, x, E5X, c, s_)
        SANITY[n0:] = [(a, f"{who} QuantizeMx: {b}", r) for a, b, r in SANITY[n0:]]
        SENS[n1:] = [(a, f"{who} QuantizeMx: {b}", r) for a, b, r in SENS[n1:]]
    lossy = int((xs != dequant(cs, E5X, ss).reshape(K, -1)).sum() + (xm != dequant(cm, E5X, sm).reshape(K, -1)).sum())
    SANITY.append((name, "both QuantizeMx dequantized back (the documented scale, one above the stabilization's)",
                   f"{xs.size + xm.size - lossy} of {xs.size + xm.size} values exact"))
    # AWS's golden reading the packed tile with its own offset helper (get_p_contiguous_scale: block i at
    # hw_scale[i // 4 * 32 + i % 4 + p_offset]), p_offset 0 (stationary) and 4 (moving)
    hw = g.mem[packed][1].reshape(K, N)
    gold = aws_nc_matmul_mx_golden(cs, cm, hw, hw, md.float8_e5m2, md.float8_e5m2, use_contiguous_scale=False,
                                   stationary_scale_p_offset=0, moving_scale_p_offset=4)
    mx_checks(name, g, 0, gold, gwhat=" with use_contiguous_scale=False, stationary_scale_p_offset 0, "
              "moving_scale_p_offset 4 on the packed [128, 512] tile", out_bf16=True)
    SANITY.append((name, "the same golden rounded to bf16 (RNE) vs our bf16 y",
                   f"{y.size - differ(to_bf(np.asarray(gold, F32)), y)} of {y.size} bit-equal"))
    yv = bf_to_f(y)
    ref = st_fp.T @ mv_fp
    SANITY.append((name, "AWS's golden for this kernel: st_data.T @ mv_data (float64) vs our bf16 y, "
                   "np.allclose(rtol=atol=5e-2)",
                   f"{np.allclose(yv, ref, rtol=5e-2, atol=5e-2)}; max |diff| {float(np.abs(yv - ref).max()):.2e}"))
    res = g.mx[0][2]
    SENS.append((name, "bf16 PSUM: truncation instead of RNE",
                 f"{differ((res.view(np.uint32) >> 16).astype(np.uint16), y)} of {y.size}"))
    # the moving's block rows taken as absolute partitions (its AP's start ignored): its QuantizeMx then
    # overwrites the stationary's scales (columns 0..127 of rows 0..3, 32..35, ...), which MatmultMx reads
    mv3 = g.mx[0][0]
    sv_alt = dequant(cs, E5X, sm[:, :M])
    SENS.append((name, "the moving's scale rows counted from partition 0, not from its AP's first partition 4 "
                 "(the stationary's scales overwritten)",
                 f"{differ(to_bf(mx_dot(mv3, sv_alt)), y)} of {y.size} y; {differ(sm[:, :M], ss)} of {ss.size} st_scale"))
    case(name, g,
         "AWS's kernel_copy_strided_quantize_matmul_mx_packed_scale at its own size, as run_copy_strided_test("
         "float8_e5m2, use_tensor_copy=True, pack_scales=True) runs it: K = 128 (unquantized 512), M = 128, N = 512, "
         "float8_e5m2_x4. bf16 stationary [512, 128] and moving [512, 512] (generate_stabilized_mx_data fp data, exact "
         "in bf16) DMA-Loaded as [128, 4, F] through [[F, 128], [128 * F, 4], [1, F]] (load_tensor_helper), then "
         "TensorCopy'd SB -> SB through [[4F, 128], [1, F], [F, 4]] into the interleaved [128, 4F] layout "
         "(copy_data_strided); both QuantizeMx write their scales into one uint8 [128, 512] tile: the stationary's "
         "through a 128-row AP from partition 0 (columns 0..127: rows 0..3, 32..35, 64..67, 96..99), the moving's "
         "through AWS's packed_mx_scale_sbuf[4:, :], a 124-row AP from partition 4 (neither K/8 nor K rows: block b "
         "at AP row 32 * (b // 4) + b % 4, i.e. partitions 4..7, 36..39, 68..71, 100..103; the last block's row, "
         "AP row 99, lies inside the 124); MatmultMx (flag 3) reads both back through the same APs into a bf16 PSUM "
         "tile (as AWS's kernel), TensorCopy to bf16 SB, Save. Outputs: y [128,512] bf16, st_q [128,128], mv_q "
         "[128,512], st_scale (rows 0..3, 32..35, 64..67, 96..99, columns 0..127) and mv_scale (rows 4..7, 36..39, "
         "68..71, 100..103) of the packed tile, Saved through 3-level APs",
         SRC_PACKED + ", mx_toplevel.py (run_copy_strided_test)", ["M9"])


# ---------------------------------------------------------------- the cases
q_bf16_32x64()
q_fp16_128x256()
q_fp32_16x32()
q_scales_at_partition_4()
mm_aws_offline(md.float8_e5m2, "e5m2")
mm_aws_offline(md.float4_e2m1fn, "fp4")
mm_aws_offline(md.float8_e4m3fn, "e4m3fn")
mm_fp4_e4_compact()
mm_accumulate()
mm_order_hand()
mm_exact_fp4()
mm_edges()
mm_bf16_psum()
pipeline_on_device(md.float4_e2m1fn, md.float8_e5m2, BF16, "fp4_stationary_e5m2_moving_bf16_psum")
pipeline_on_device(md.float8_e5m2, md.float8_e5m2, FP32, "e5m2_e5m2_fp32_psum")
pipeline_packed_scales()
pipeline_packed_scales_k128()


# ---------------------------------------------------------------- writing
def readme_section():
    out = ["<!-- BEGIN GENERATED by make_cases.py: do not edit by hand -->", "",
           f"### Cases ({len(CASES)})", "", "| case | instructions (besides Load / Save) | choices | follows | what |",
           "|---|---|---|---|---|"]
    for name, (g, note, source, ops, choices) in CASES.items():
        out.append(f"| `{name}` | {', '.join(ops)} | {', '.join(sorted(set(choices), key=_ck))} | {source} | {note} |")
    out += ["", "### Sanity checks against AWS's goldens", "", "| case | check | result |", "|---|---|---|"]
    for c, what, res in SANITY:
        out.append(f"| `{c}` | {what} | {res} |")
    out += ["", "### What the expected bits distinguish", "",
            "Each row: an alternative reading and how many expected values it would change (computed by the "
            "generator on the case's own data).", "", "| case | alternative | changed |", "|---|---|---|"]
    for c, alt, k in SENS:
        out.append(f"| `{c}` | {alt} | {k} |")
    out += ["", "<!-- END GENERATED -->", ""]
    return "\n".join(out)


def _ck(c):
    return (c[0], int(c[1:]))


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, source, ops, choices) in CASES.items():
        lines = [f"# {note}", f"# follows {source}",
                 "# expected outputs from make_cases.py (NumPy / ml_dtypes emulation of SPEC.md and "
                 "docs/bir-json.md, docs/fidelity.md), never from birsim"]
        lines += [f"choice: {c}" for c in sorted(set(choices), key=_ck)]
        lines.append(f"profile: {g.profile}")
        birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    readme = os.path.join(HERE, "README.md")
    if os.path.exists(readme):
        text = open(readme).read()
        text = re.sub(r"<!-- BEGIN GENERATED.*<!-- END GENERATED -->\n", lambda _: readme_section(), text, flags=re.S)
        if "<!-- BEGIN GENERATED" not in text:
            text += "\n" + readme_section()
        with open(readme, "w") as f:
            f.write(text)


if __name__ == "__main__":
    write_all()
    print(f"{len(CASES)} cases")
