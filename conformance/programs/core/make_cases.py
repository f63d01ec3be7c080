#!/usr/bin/env python3
"""Writes the `programs/core` conformance suite: BIR JSON programs, .npy inputs and expected .npy
outputs, computed here with NumPy / ml_dtypes (pinned in oracle/requirements.txt) from the
semantics the seed (shared/seeds/000_*) and docs/fidelity.md state, independently of birsim.

Families:
  * overlap_*  : every instruction reads all of its inputs before it writes (seed 000 §5.1 doCopy:
                 tmp = read(srcAP); write(dstAP, tmp)), on >= 1 MiB operands, both directions;
  * acc_*      : one accumulate rule (re-facts §8 cast_copy_or_accumulate): the result narrowed to
                 the output dtype first, then dst = narrow0(widen(dst) + widen(result)), floats in
                 fp32 with RNE and FP8 config 0 (no saturation), int32/int64 wrapping; only the 8
                 reducible dtypes accumulate, any other output dtype is a `numerics` fault;
  * tsc_*      : TensorScalarCache (seed 000 §4): scan order (fidelity S14), the carried cache per
                 engine and partition row (S15), the NKI chained cumulative test;
  * reduce_* / pool_* : reduce axes on 2-, 3- and 4-level APs (W = level 0, X = last level,
                 missing middle dims size 1), sequential folds in element order (seed 000 §3);
  * fp8sat_*   : FP32 extremes into fp8 / bf16 / fp16 under refsim (saturating FP8) and nki.

Sequential folds are explicit loops (NumPy's reductions are pairwise).
Run: .venv/bin/python conformance/programs/core/make_cases.py
"""
import os
import sys
import warnings

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import ap, imm, tile  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
RNG = np.random.default_rng(20261201)

# ---------------------------------------------------------------- dtypes and refsim narrowing
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "float8_e4m3fn": np.uint8,
         "float8e5": np.uint8, "float8e4": np.uint8, "int32": np.int32, "uint8": np.uint8, "int8": np.int8,
         "uint32": np.uint32, "uint64": np.uint64, "int16": np.int16, "uint16": np.uint16, "int64": np.int64,
         "float32r": np.float32, "float8e3": np.uint8}
SIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3fn": 1, "float8e5": 1, "float8e4": 1,
        "int32": 4, "uint8": 1, "int8": 1, "uint32": 4, "uint64": 8, "int16": 2, "uint16": 2, "int64": 8,
        "float32r": 4, "float8e3": 1}
# legacy float8e3 (E3M4, max 15.5, has Inf) and float8e4 (E4M3, max 240, has Inf) as ml_dtypes'
# IEEE-style float8_e3m4 / float8_e4m3 (fidelity N7)
ML = {"bfloat16": md.bfloat16, "float8_e4m3fn": md.float8_e4m3fn, "float8e5": md.float8_e5m2,
      "float8e4": md.float8_e4m3, "float8e3": md.float8_e3m4}
# (canonical NaN code, max finite code) per FP8 format
FP8 = {"float8_e4m3fn": (0x7F, 0x7E), "float8e5": (0x7E, 0x7B), "float8e4": (0x7C, 0x77), "float8e3": (0x78, 0x6F)}


def decode(raw, dt):
    """Stored values -> float32."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    return raw.astype(F32)


def encode(x, dt, profile="refsim"):
    """float32 -> stored values under a profile (refsim: FP8 saturates, NaN canonical)."""
    x = np.asarray(x, F32)
    nan = np.isnan(x)
    neg = np.signbit(x)
    if dt == "float32":
        return x.copy()
    if dt == "bfloat16":
        b = x.astype(md.bfloat16).view(np.uint16)
        return np.where(nan, 0x7FC0, b).astype(np.uint16) if profile == "refsim" else b
    if dt == "float16":
        h = x.astype(np.float16)
        return np.where(nan, np.uint16(0x7E00).view(np.float16), h).astype(np.float16) if profile == "refsim" else h
    if dt in FP8:
        ml = x.astype(ML[dt]).view(np.uint8)
        if profile != "refsim":
            return ml
        nan_code, max_code = FP8[dt]
        over = ~nan & ~np.isfinite(ml.view(ML[dt]).astype(F32))
        sat = np.where(over, np.where(neg, 0x80 | max_code, max_code), ml)
        return np.where(nan, nan_code, sat).astype(np.uint8)
    info = np.iinfo(STORE[dt])
    r = np.rint(np.where(nan, 0, x).astype(np.float64))
    r = np.clip(r, info.min, info.max)
    nanv = np.where(neg, info.min if info.min < 0 else 0, info.max)
    return np.where(nan, nanv, r).astype(STORE[dt])


def encode_config0(x, dt):
    """The accumulate path's narrowing (re-facts §4/§8): RNE, FP8 config 0 = no saturation
    (overflow -> +-Inf). The cases below hold no NaN, so NaN codes do not matter here."""
    x = np.asarray(x, F32)
    assert not np.isnan(x).any()
    if dt in ML:
        return x.astype(ML[dt]).view(STORE[dt])
    if dt == "float16":
        return x.astype(np.float16)
    assert dt == "float32"
    return x.copy()


def accumulate(prev_raw, result_raw, dt):
    """cast_copy_or_accumulate(add): dst = narrow0(widen(dst) + widen(src))."""
    if dt in ("int32", "int64"):
        bits = 32 if dt == "int32" else 64
        s = [(int(a) + int(b)) & ((1 << bits) - 1) for a, b in zip(prev_raw.reshape(-1), result_raw.reshape(-1))]
        s = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in s]
        return np.array(s, STORE[dt]).reshape(prev_raw.shape)
    return encode_config0(decode(prev_raw, dt) + decode(result_raw, dt), dt).reshape(prev_raw.shape)


def fmax(a, x):
    return np.where(np.isnan(a) | (x > a), x, a).astype(F32)


TS = {
    "bypass": lambda a, x: a,
    "add": lambda a, x: a + x,
    "subtract": lambda a, x: a - x,
    "mult": lambda a, x: a * x,
    "divide": lambda a, x: a / x,
    "max": fmax,
}


def ts(op, a, x):
    a, x = np.broadcast_arrays(np.asarray(a, F32), np.asarray(x, F32))
    return np.asarray(TS[op](a, x), F32)


def fold(v, op):
    """Sequential fold over the last axis, in fp32."""
    acc = v[..., 0].astype(F32)
    for j in range(1, v.shape[-1]):
        acc = ts(op, acc, v[..., j])
    return acc


def fold_avg(v):
    n = v.shape[-1]
    inv = F32(1) / F32(n)
    acc = (v[..., 0] / F32(n)).astype(F32)
    for j in range(1, n):
        acc = (acc + (inv * v[..., j]).astype(F32)).astype(F32)
    return acc


# ---------------------------------------------------------------- program building (birprog)
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Pool": "Pool"}
    DEFAULT_ENGINE = "DVE"


CASES = {}


def case(name, prog, note, choices=(), fault=None):
    assert name not in CASES, name
    CASES[name] = (prog, note, tuple(choices), fault)


def gather(flat, pairs, offset=0):
    """The elements an AP visits, in AP order, as an array shaped by its nums (flat = the location's
    elements in row-major partition x free order, base 0)."""
    idx = np.array(offset)
    for step, num in pairs:
        idx = idx[..., None] + step * np.arange(num)
    return flat.reshape(-1)[idx]


# ================================================================ 1. overlapping operands (seed 000 §5.1)
OP, OF = 128, 2048  # 1 MiB fp32 tile
SEED51 = "seed 000 §5.1: doCopy reads the whole source (tmp = read(srcAP)) before it writes (write(dstAP, tmp))"


def unique_tile(p, f):
    """Distinct, exactly representable values (the value names its source element)."""
    k = np.arange(p * f, dtype=np.int64)
    return ((k + 0.5) * np.where(k % 2 == 0, 1, -1)).astype(F32).reshape(p, f)


def overlap_program(x, opcode, src_ap, dst_ap, expected, dt="float32", **fields):
    p, f = x.shape
    g = Prog()
    g.dram_in("x", dt, x)
    g.sb("t", dt, p, f)
    g.load("x", "t", dt, p, f)
    g.inst(opcode, [src_ap], [dst_ap], **fields)
    g.save("t", "y", dt, p, f, expected)
    return g


x = unique_tile(OP, OF)
for opcode in ("TensorCopy", "GenericCopy", "AbstractCopy"):
    dirs = [("down", 0, 32), ("up", 32, 0)] if opcode == "TensorCopy" else \
        ([("down", 0, 32)] if opcode == "GenericCopy" else [("up", 32, 0)])
    for name, s, d in dirs:
        y = x.copy()
        y[d:d + 96] = x[s:s + 96]
        case(f"overlap_{opcode.lower()}_partitions_{name}",
             overlap_program(x, opcode, tile("t", "float32", 96, OF, s * OF), tile("t", "float32", 96, OF, d * OF), y),
             f"{opcode} within one 1 MiB SB tile, partitions {s}..{s + 95} -> {d}..{d + 95} ({SEED51})")

# Load from an SB location into itself, shifted along the free dim
SH = 100
for name, s, d in [("right", 0, SH), ("left", SH, 0)]:
    y = x.copy()
    y[:, d:d + OF - SH] = x[:, s:s + OF - SH]
    case(f"overlap_load_sb_to_sb_shift_{name}",
         overlap_program(x, "Load", tile("t", "float32", OP, OF - SH, s, row=OF), tile("t", "float32", OP, OF - SH, d, row=OF), y),
         f"Load SB -> the same SB location, free elements {s}.. -> {d}.. of every partition ({SEED51})")

# flat internal DRAM, 1 MiB, shifted by a non-power-of-two element count
N, K = OP * OF, 12345
xf = unique_tile(1, N)
for name, s, d in [("forward", 0, K), ("backward", K, 0)]:
    y = xf.copy()
    y[0, d:d + N - K] = xf[0, s:s + N - K]
    g = Prog()
    g.dram_in("x", "float32", xf)
    g.dram("d", "float32", N)
    g.inst("Load", [tile("x", "float32", 1, N)], [tile("d", "float32", 1, N)])
    g.inst("Load", [ap("d", "float32", [[N - K, 1], [1, N - K]], s)], [ap("d", "float32", [[N - K, 1], [1, N - K]], d)])
    g.dram_out("y", "float32", (1, N), y)
    g.inst("Save", [tile("d", "float32", 1, N)], [tile("y", "float32", 1, N)])
    case(f"overlap_dram_flat_shift_{name}", g,
         f"flat internal DRAM copy of 1 MiB, elements {s}.. -> {d}.. (shift {K}) ({SEED51})")

# TensorScalar x*2+1 in place and shifted
TSF = dict(op0="mult", const0=2.0, reverse0=False, op1="add", const1=1.0, reverse1=False)
y = ts("add", ts("mult", x, F32(2)), F32(1))
case("overlap_tensorscalar_in_place",
     overlap_program(x, "TensorScalar", tile("t", "float32", OP, OF), tile("t", "float32", OP, OF), y, **TSF),
     "TensorScalar x*2+1 with the same AP in and out on a 1 MiB tile (seed 000 §2.2, §5.1)")
for name, s, d in [("down", 0, 32), ("up", 32, 0)]:
    y = x.copy()
    y[d:d + 96] = ts("add", ts("mult", x[s:s + 96], F32(2)), F32(1))
    case(f"overlap_tensorscalar_partitions_{name}",
         overlap_program(x, "TensorScalar", tile("t", "float32", 96, OF, s * OF), tile("t", "float32", 96, OF, d * OF), y, **TSF),
         f"TensorScalar x*2+1, partitions {s}..{s + 95} -> {d}..{d + 95} of the same 1 MiB tile (seed 000 §2.2, §5.1)")

# TensorTensor: both inputs overlap the output
g = Prog()
g.dram_in("x", "float32", x)
g.sb("t", "float32", OP, OF)
g.load("x", "t", "float32", OP, OF)
g.inst("TensorTensor", [tile("t", "float32", 96, OF, 0), tile("t", "float32", 96, OF, 32 * OF)],
       [tile("t", "float32", 96, OF, 16 * OF)], op="subtract")
y = x.copy()
y[16:112] = ts("subtract", x[0:96], x[32:128])
g.save("t", "y", "float32", OP, OF, y)
case("overlap_tensortensor_partitions", g,
     "TensorTensor subtract, in0 = partitions 0..95, in1 = 32..127, out = 16..111 of the same 1 MiB tile "
     "(seed 000 §2.3, §5.1: all inputs read before the output is written)")

# TensorReduce: row p's sum lands in element 0 of row p + 32, a row still to be reduced
y = x.copy()
y[32:128, 0] = fold(x[0:96], "add")
case("overlap_tensorreduce_rows_down",
     overlap_program(x, "TensorReduce", tile("t", "float32", 96, OF, 0), ap("t", "float32", [[OF, 96], [1, 1]], 32 * OF), y,
                     op="add", axis="X"),
     "TensorReduce add over X of partitions 0..95 of a 1 MiB tile into element 0 of partitions 32..127, which are "
     "themselves reduced (seed 000 §3.1, §5.1: the input read before the output is written)")

# bf16 TensorScalar overlap (cast/codec path): a [128, 4096] bf16 tile = 1 MiB
BF = 4096
xb32 = (RNG.standard_normal((OP, BF)) * 8).astype(F32)
xb = encode(xb32, "bfloat16")
for name, s, d in [("down", 0, 32), ("up", 32, 0)]:
    y = xb.copy()
    y[d:d + 96] = encode(ts("add", ts("mult", decode(xb[s:s + 96], "bfloat16"), F32(2)), F32(1)), "bfloat16")
    case(f"overlap_tensorscalar_bf16_partitions_{name}",
         overlap_program(xb, "TensorScalar", tile("t", "bfloat16", 96, BF, s * BF), tile("t", "bfloat16", 96, BF, d * BF), y,
                         dt="bfloat16", **TSF),
         f"bf16 TensorScalar x*2+1 (fp32 ALU, RNE to bf16), partitions {s}.. -> {d}.. of one 1 MiB bf16 tile (seed 000 §2.2, §5.1)")

# broadcast source (partition step 0) that the copy itself overwrites: every row p gets row 0's
# elements 1..F-1 at 0..F-2; row 0 is among the destinations, so a copy that re-reads row 0 after
# writing it would see shifted data.
y = x.copy()
y[:, 0:OF - 1] = x[0, 1:OF]
case("overlap_broadcast_source_overwritten",
     overlap_program(x, "TensorCopy", ap("t", "float32", [[0, OP], [1, OF - 1]], 1), ap("t", "float32", [[OF, OP], [1, OF - 1]], 0), y),
     f"TensorCopy from a broadcast source (partition step 0, row 0 elements 1..) over every row, row 0 included ({SEED51})")

# cast through APs of another dtype over the same fp32 memory (fidelity S2): fp32 AP in, bf16 AP out
y = x.copy()
y[32:128] = decode(encode(x[0:96], "bfloat16"), "bfloat16")
xc = (RNG.standard_normal((OP, OF)) * 100).astype(F32)
yc = xc.copy()
yc[32:128] = decode(encode(xc[0:96], "bfloat16"), "bfloat16")
case("overlap_copy_cast_bf16_ap_partitions_down",
     overlap_program(xc, "TensorCopy", tile("t", "float32", 96, OF, 0), tile("t", "bfloat16", 96, OF, 32 * OF), yc),
     f"TensorCopy fp32 AP -> bf16 AP over the same fp32 tile, partitions 0.. -> 32.. (cast on write, {SEED51})",
     choices=["S2"])

# strided overlaps
H = OF // 2
y = x.copy()
y[:, H:OF] = x[:, 0:OF:2]
case("overlap_strided_src_step2_dst_after",
     overlap_program(x, "TensorCopy", ap("t", "float32", [[OF, OP], [2, H]], 0), ap("t", "float32", [[OF, OP], [1, H]], H), y),
     f"TensorCopy, source every 2nd element 0,2,..; destination step 1 from element {H}, overlapping ({SEED51})")
y = x.copy()
y[:, 0:OF:2] = x[:, H:OF]
case("overlap_strided_dst_step2_src_after",
     overlap_program(x, "TensorCopy", ap("t", "float32", [[OF, OP], [1, H]], H), ap("t", "float32", [[OF, OP], [2, H]], 0), y),
     f"TensorCopy, source step 1 from element {H}; destination every 2nd element 0,2,.., overlapping ({SEED51})")


# ================================================================ 2. one accumulate (re-facts §8)
ACC = "re-facts §8 cast_copy_or_accumulate: the result narrowed to the output dtype, then dst = narrow(widen(dst) + widen(result)) (seed 000 §2.3, §3.1)"
P, F = 16, 24


def tt_program(dt_in, dt_out, a, b, prev, expected, out_name="y", **fields):
    """Load a, b (and prev into the output tile, unless None), TensorTensor, Save (unless expected is None)."""
    p, f = a.shape
    g = Prog()
    g.dram_in("a", dt_in, a)
    g.dram_in("b", dt_in, b)
    g.sb("at", dt_in, p, f)
    g.sb("bt", dt_in, p, f)
    g.sb("yt", dt_out, p, f)
    g.load("a", "at", dt_in, p, f)
    g.load("b", "bt", dt_in, p, f)
    if prev is not None:
        g.dram_in("prev", dt_out, prev)
        g.load("prev", "yt", dt_out, p, f)
    g.inst("TensorTensor", [tile("at", dt_in, p, f), tile("bt", dt_in, p, f)], [tile("yt", dt_out, p, f)], **fields)
    if expected is not None:
        g.save("yt", out_name, dt_out, p, f, expected)
    return g


# int32: the ALU add (ts_int_ops) stays small; only the accumulate wraps
a = RNG.integers(-1000, 1000, (P, F)).astype(np.int32)
b = RNG.integers(-1000, 1000, (P, F)).astype(np.int32)
a[0, 0], b[0, 0] = 0, 1
a[0, 1], b[0, 1] = 0, -1
prev = RNG.integers(-2**31, 2**31, (P, F), dtype=np.int64).astype(np.int32)
prev[:, ::2] = np.int32(2**31 - 1) - RNG.integers(0, 500, (P, F // 2)).astype(np.int32)
prev[:, 1::4] = np.int32(-2**31) + RNG.integers(0, 500, (P, F // 4)).astype(np.int32)
prev[0, 0], prev[0, 1] = 2**31 - 1, -2**31
r = (a.astype(np.int64) + b).astype(np.int32)
y = accumulate(prev, r, "int32")
assert y[0, 0] == -2**31 and y[0, 1] == 2**31 - 1
assert (y.astype(np.int64) != prev.astype(np.int64) + r).sum() > P * F // 4
case("acc_tt_int32_add_wraps", tt_program("int32", "int32", a, b, prev, y, op="add", acc="Accumulate"),
     f"int32 TensorTensor add, acc=Accumulate: 2147483647 + 1 -> -2147483648, the accumulate wraps ({ACC})")
case("acc_tt_int32_add_wraps_addaccumulate", tt_program("int32", "int32", a, b, prev, y, op="add", acc="AddAccumulate"),
     f"as acc_tt_int32_add_wraps with acc=AddAccumulate ({ACC})")
# int64 output from int32 inputs: the result converts to int64 (exact: small), the accumulate wraps at 2^63
prev64 = RNG.integers(2**63 - 2000, 2**63 - 1, (P, F), dtype=np.int64, endpoint=True)
prev64[:, 1::2] = RNG.integers(-2**63, -2**63 + 2000, (P, F // 2), dtype=np.int64)
y64 = accumulate(prev64, r.astype(np.int64), "int64")
assert (y64 < 0).any() and (y64 > 0).any()
case("acc_tt_int64_out_wraps", tt_program("int32", "int64", a, b, prev64, y64, op="add", acc="Accumulate"),
     f"int32 TensorTensor add into an int64 output, acc=Accumulate: wraps at 2^63 ({ACC})")


def double_rounding_pairs(dt, n, gen):
    """(prev_raw, result_fp32) pairs where narrow(prev + narrow(r)) != narrow(prev + r)."""
    out_p, out_r = [], []
    while len(out_p) < n:
        pv = encode(gen(), dt)
        rv = gen()
        two = encode_config0(decode(pv, dt) + decode(encode(rv, dt), dt), dt)
        one = encode_config0(decode(pv, dt) + rv, dt)
        keep = two.view(np.uint16) != one.view(np.uint16)
        out_p += list(pv[keep])
        out_r += list(rv[keep])
    return np.array(out_p[:n], STORE[dt]), np.array(out_r[:n], F32)


for dt in ("bfloat16", "float16"):
    gen = lambda: (RNG.standard_normal(4096) * 4).astype(F32)
    pv, rv = double_rounding_pairs(dt, P * F * 3 // 4, gen)
    prev = encode(gen()[:P * F], dt)
    rr = gen()[:P * F]
    prev[:pv.size], rr[:rv.size] = pv, rv
    perm = RNG.permutation(P * F)
    prev, rr = prev[perm].reshape(P, F), rr[perm].reshape(P, F)
    # TensorTensor mult: a * b == rr exactly with b = 1; use a second factor that keeps it exact: 0.5 * (2 rr)
    a_, b_ = (rr * F32(2)).astype(F32), np.full((P, F), 0.5, F32)
    assert (ts("mult", a_, b_) == rr).all()
    y = accumulate(prev, encode(ts("mult", a_, b_), dt), dt)
    single = encode_config0(decode(prev, dt) + rr, dt)
    assert (y.view(np.uint16) != single.view(np.uint16)).sum() >= P * F // 2
    case(f"acc_tt_{dt}_double_rounding", tt_program("float32", dt, a_, b_, prev, y, op="mult", acc="Accumulate"),
         f"fp32 TensorTensor mult into {dt} with acc=Accumulate: the product rounds to {dt} first, then prev + it "
         f"rounds again (differs from one rounding in most elements) ({ACC})")

# fp8 float8e5 / float8e4: the result narrows with refsim saturation; the accumulate does not saturate
for dt, mx, big in (("float8e5", 57344.0, 1e6), ("float8e4", 240.0, 1e4), ("float8e3", 15.5, 100.0)):
    pairs = [(mx, mx), (-mx, -mx), (mx, big), (-mx, -big), (1.0, 2.0), (mx, -1.0), (-1.0, -mx), (0.5, 0.25),
             (mx, mx / 4), (-mx, -mx / 4), (mx / 2, mx / 2), (-mx / 2, -mx / 2), (2.0, big), (mx, 0.0), (-3.0, 1.5),
             (mx, mx / 8)]
    pv = encode(np.array([p_ for p_, _ in pairs], F32), dt)
    rv = np.array([r_ for _, r_ in pairs], F32)
    prev = np.tile(pv, (2, 1))
    a_ = np.tile(rv, (2, 1))
    b_ = np.ones_like(a_)
    b_[1] = -1.0  # the second row negated: product -r, prev kept
    r8 = encode(ts("mult", a_, b_), dt)  # refsim narrowing of the result: saturating
    y = accumulate(prev, r8, dt)
    inf_code = {"float8e5": 0x7C, "float8e4": 0x78, "float8e3": 0x70}[dt]
    assert (y == inf_code).any() and (y == 0x80 | inf_code).any()
    sat = encode(decode(prev, dt) + decode(r8, dt), dt)  # what a saturating accumulate would give
    assert (sat != y).any()
    case(f"acc_tt_{dt}_overflow_to_inf", tt_program("float32", dt, a_, b_, prev, y, op="mult", acc="AddAccumulate"),
         f"fp32 TensorTensor mult into {dt}, acc=AddAccumulate: the result saturates (refsim narrowing), the "
         f"accumulate overflows to -Inf/+Inf (0x{0x80 | inf_code:02X}/0x{inf_code:02X}), FP8 config 0 ({ACC})",
         choices=["N7"] if dt != "float8e5" else [])

# non-reducible output dtypes fault at the accumulate
for dt in ("uint8", "int8", "float8_e4m3fn", "int16", "uint16", "uint32", "uint64", "float32r"):
    a_ = (RNG.standard_normal((P, F)) * 4).astype(F32)
    b_ = (RNG.standard_normal((P, F)) * 4).astype(F32)
    # the output tile is not loaded first (its dtype need not be readable from .npy): the fault comes
    # from the dtype, whatever the tile holds
    g = tt_program("float32", dt, a_, b_, None, None, op="add", acc="Accumulate")
    # an output saved before the faulting instruction must hold its value
    g.insts.insert(len(g.insts) - 1, {"opcode": "Save", "name": "save_a", "engine": "SP",
                                      "ins": [tile("at", "float32", P, F)], "outs": [tile("y0", "float32", P, F)]})
    g.dram_out("y0", "float32", (P, F), a_)
    for k, ins in enumerate(g.insts):
        ins["name"] = f"i{k}"
    case(f"acc_fault_tt_{dt}", g,
         f"TensorTensor with acc=Accumulate into {dt}: not one of the 8 reducible dtypes, a numerics fault "
         f"naming the dtype; the earlier Save stands (re-facts §8)", fault=("numerics", dt))


# TensorReduce with accumulate
def reduce_program(x_raw, dt, pairs_in, out_dt, out_p, out_f, expected, prev=None, opcode="TensorReduce", **fields):
    g = Prog()
    p = x_raw.shape[0]
    f = x_raw.size // p
    g.dram_in("x", dt, x_raw.reshape(p, f))
    g.sb("xt", dt, p, f)
    g.load("x", "xt", dt, p, f)
    g.sb("yt", out_dt, out_p, out_f)
    if prev is not None:
        g.dram_in("prev", out_dt, prev.reshape(out_p, out_f))
        g.load("prev", "yt", out_dt, out_p, out_f)
    g.inst(opcode, [ap("xt", dt, pairs_in)], [tile("yt", out_dt, out_p, out_f)], **fields)
    if expected is not None:
        g.save("yt", "y", out_dt, out_p, out_f, expected)
    return g


xi = RNG.integers(-50, 50, (P, F)).astype(np.int32)
s = xi.astype(np.int64).sum(axis=1).astype(np.int32)
prev = (np.int32(2**31 - 1) - RNG.integers(0, 300, P)).astype(np.int32)
prev[1::2] = (np.int32(-2**31) + RNG.integers(0, 300, P // 2)).astype(np.int32)
s[1::2] = -np.abs(s[1::2]) - 400
xi[1::2, 0] = s[1::2] - xi[1::2, 1:].astype(np.int64).sum(axis=1)
s[0::2] = np.abs(s[0::2]) + 400
xi[0::2, 0] = s[0::2] - xi[0::2, 1:].astype(np.int64).sum(axis=1)
assert (xi.astype(np.int64).sum(axis=1) == s).all() and np.abs(xi).max() < 2**20
y = accumulate(prev.reshape(P, 1), s.reshape(P, 1), "int32")
assert ((y.astype(np.int64) > 0) == (prev.reshape(P, 1) < 0)).all()  # every row wrapped
case("acc_reduce_int32_add_wraps", reduce_program(xi, "int32", [[F, P], [1, F]], "int32", P, 1, y, prev=prev,
     op="add", axis="X", acc="AddAccumulate"),
     f"int32 TensorReduce add over X (small sums), acc=AddAccumulate into values near INT32_MAX/MIN: wraps ({ACC})")

for dt, neg in (("bfloat16", False), ("float16", False), ("bfloat16", True)):
    # per row: the fp32 sum rounds to dt, then prev + it rounds again; pick rows where that differs
    xs, ps = [], []
    while len(xs) < P:
        v = (RNG.standard_normal(F) * 3).astype(F32)
        sm = fold(v[None], "add")[0]
        if neg:
            sm = -sm
        pv = encode(np.array([RNG.standard_normal() * 6], F32), dt)
        two = encode_config0(decode(pv, dt) + decode(encode(np.array([sm]), dt), dt), dt)
        one = encode_config0(decode(pv, dt) + F32(sm), dt)
        if two.view(np.uint16)[0] != one.view(np.uint16)[0] or len(xs) >= P - 3:
            xs.append(v)
            ps.append(pv[0])
    xr = np.array(xs, F32)
    prev = np.array(ps, STORE[dt]).reshape(P, 1)
    sm = fold(xr, "add").reshape(P, 1)
    if neg:
        sm = -sm
    y = accumulate(prev, encode(sm, dt), dt)
    single = encode_config0(decode(prev, dt) + sm, dt)
    assert (y.view(np.uint16) != single.view(np.uint16)).sum() >= P - 3
    fields = dict(op="add", axis="X", acc="Accumulate")
    if neg:
        fields["negate"] = True
    nm = f"acc_reduce_{dt}" + ("_negate" if neg else "") + "_double_rounding"
    case(nm, reduce_program(xr, "float32", [[F, P], [1, F]], dt, P, 1, y, prev=prev, **fields),
         f"fp32 TensorReduce add over X{' with negate (applied to the fold, before the accumulate, seed 000 §3.1)' if neg else ''} "
         f"into {dt}, acc=Accumulate: the {'negated ' if neg else ''}sum rounds to {dt}, then prev + it rounds again ({ACC})")

x2 = (RNG.standard_normal((P, F)) * 5).astype(F32)
prev = (RNG.standard_normal((P, 1)) * 5).astype(F32)
y = accumulate(prev, -fold(x2, "max").reshape(P, 1), "float32")
case("acc_reduce_fp32_max_negate", reduce_program(x2, "float32", [[F, P], [1, F]], "float32", P, 1, y, prev=prev,
     op="max", axis="X", negate=True, acc="AddAccumulate"),
     f"fp32 TensorReduce max over X, negate, acc=AddAccumulate: prev + (-max) (the accumulate adds whatever the op; seed 000 §3.1; {ACC})")

# TensorReduce into float8e5: the fp32 sum saturates to 57344 (refsim narrowing), prev + it overflows to Inf
xs8 = np.full((4, 8), 12500.0, F32)  # row sums 100000 -> 57344 (0x7B)
xs8[1] *= -1
xs8[2] = 1000.0  # 8000 -> 8192 (0x70); 57344 + 8192 = 65536 -> Inf
xs8[3] = -1000.0
prev = encode(np.array([[57344.0], [-57344.0], [57344.0], [-57344.0]], F32), "float8e5")
r8 = encode(fold(xs8, "add").reshape(4, 1), "float8e5")
y = accumulate(prev, r8, "float8e5")
assert list(y.reshape(-1)) == [0x7C, 0xFC, 0x7C, 0xFC]
case("acc_reduce_float8e5_overflow_to_inf", reduce_program(xs8, "float32", [[8, 4], [1, 8]], "float8e5", 4, 1, y, prev=prev,
     op="add", axis="X", acc="Accumulate"),
     f"fp32 TensorReduce add over X into float8e5, acc=Accumulate: the sum saturates (refsim), prev + it overflows to +-Inf ({ACC})")

for dt in ("uint8", "int16", "float8_e4m3fn"):
    g = reduce_program(x2, "float32", [[F, P], [1, F]], dt, P, 1, None,
                       op="add", axis="X", acc="Accumulate")
    case(f"acc_fault_reduce_{dt}", g,
         f"TensorReduce add with acc=Accumulate into {dt}: not reducible, a numerics fault naming the dtype (re-facts §8)",
         fault=("numerics", dt))


# ================================================================ 3./4. TensorScalarCache (seed 000 §4)
SEED4 = "seed 000 §4"


def tsc_run(x, op0, op1, rev0, rev1, c0, direction=None):
    """Returns (per-element outputs, final cache) per row. S14: scan from the last element when
    reverse0 or reverse1 is set."""
    p, f = x.shape
    if direction is None:
        direction = -1 if (rev0 or rev1) else 1
    order = range(f) if direction == 1 else range(f - 1, -1, -1)
    c = np.broadcast_to(np.asarray(c0, F32), (p,)).astype(F32)
    out = np.zeros((p, f), F32)
    for i in order:
        t = ts(op0, c, x[:, i]) if rev0 else ts(op0, x[:, i], c)
        u = ts(op1, c, t) if rev1 else ts(op1, t, c)
        c = u
        out[:, i] = u
    return out, c


def tsc_inst(g, src, dst, p, f, mode, op0, op1, rev0, rev1, acc, init=None, engine="DVE", out_rows=None):
    ins = [tile(src, "float32", p, f)]
    if init is not None:
        ins.append(init)
    of = f if mode != "Reduce" else 1
    g.inst("TensorScalarCache", ins, [tile(dst, "float32", p, of, row=out_rows)], engine=engine, op0=op0,
           reverse0=rev0, op1=op1, reverse1=rev1, mode=mode, acc=acc)


PT, FT = 8, 9  # FT odd: with divide-then-subtract, reverse0 alone and both reversed give negated caches
for op0, op1, c0 in (("subtract", "divide", 1.25), ("divide", "subtract", 1.5)):
    # data for which all four flag combinations, and both scan directions, give different bits
    while True:
        xt_ = RNG.uniform(0.5, 3.0, (PT, FT)).astype(F32)
        res = {}
        ok = True
        for r0 in (False, True):
            for r1 in (False, True):
                o, c = tsc_run(xt_, op0, op1, r0, r1, c0)
                ok &= bool(np.isfinite(o).all() and (np.abs(o) < 1e6).all())
                res[(r0, r1)] = (o, c)
                if r0 or r1:
                    of_, cf_ = tsc_run(xt_, op0, op1, r0, r1, c0, direction=1)
                    ok &= bool((of_ != o).mean() > 0.8 and (cf_ != c).all())
        keys = list(res)
        for i in range(4):
            for j in range(i + 1, 4):
                ok &= bool((res[keys[i]][0] != res[keys[j]][0]).mean() > 0.5)
                ok &= bool((res[keys[i]][1] != res[keys[j]][1]).all())
        if ok:
            break
    for (r0, r1), (o, c) in res.items():
        for mode in ("Cumulative", "TensorScan", "Reduce"):
            g = Prog()
            g.dram_in("x", "float32", xt_)
            g.sb("xt", "float32", PT, FT)
            of = FT if mode != "Reduce" else 1
            g.sb("yt", "float32", PT, of)
            g.load("x", "xt", "float32", PT, FT)
            tsc_inst(g, "xt", "yt", PT, FT, mode, op0, op1, r0, r1, "LoadAccumulate", init=imm(c0))
            g.save("yt", "y", "float32", PT, of, o if mode != "Reduce" else c.reshape(PT, 1))
            scan = "last to first" if (r0 or r1) else "first to last"
            case(f"tsc_{mode.lower()}_{op0}_{op1}_rev{int(r0)}{int(r1)}", g,
                 f"TensorScalarCache {mode}, op0={op0} reverse0={r0}, op1={op1} reverse1={r1}, LoadAccumulate {c0}: "
                 f"t = rev0 ? op0(c,x) : op0(x,c); u = rev1 ? op1(c,t) : op1(t,c); scan {scan} "
                 f"({'every u at its own position' if mode != 'Reduce' else 'final c only'}) ({SEED4})",
                 choices=["S14"] if (r0 or r1) else [])

# reversed scan of a commutative op: out[i] = x[i] + ... + x[F-1]
ones = np.ones((PT, FT), F32)
xw = RNG.integers(1, 9, (PT, FT)).astype(F32)
o, _ = tsc_run(xw, "add", "bypass", True, False, 0.0)
assert (o[:, 0] == xw.sum(axis=1)).all()
g = Prog()
g.dram_in("x", "float32", xw)
g.sb("xt", "float32", PT, FT)
g.sb("yt", "float32", PT, FT)
g.load("x", "xt", "float32", PT, FT)
tsc_inst(g, "xt", "yt", PT, FT, "Cumulative", "add", "bypass", True, False, "ZeroAccumulate")
g.save("yt", "y", "float32", PT, FT, o)
case("tsc_cumulative_add_reverse0_suffix_sums", g,
     f"TensorScalarCache Cumulative add/bypass with reverse0: scans last to first, out[i] = sum of x[i..F-1] ({SEED4})",
     choices=["S14"])

# initial values: Zero / ZeroAccumulate -> 0; LoadAccumulate from a per-partition AP
xz = RNG.uniform(-2, 2, (PT, FT)).astype(F32)
for acc in ("Zero", "ZeroAccumulate"):
    o, _ = tsc_run(xz, "add", "subtract", False, True, 0.0)
    g = Prog()
    g.dram_in("x", "float32", xz)
    g.sb("xt", "float32", PT, FT)
    g.sb("yt", "float32", PT, FT)
    g.load("x", "xt", "float32", PT, FT)
    tsc_inst(g, "xt", "yt", PT, FT, "TensorScan", "add", "subtract", False, True, acc)
    g.save("yt", "y", "float32", PT, FT, o)
    case(f"tsc_init_{acc.lower()}", g, f"TensorScalarCache TensorScan add / reverse1 subtract with acc={acc}: the cache starts at 0 ({SEED4})",
         choices=["S14"])
init = RNG.uniform(1, 3, (PT, 1)).astype(F32)
o, c = tsc_run(xz, "mult", "add", False, False, init[:, 0])
g = Prog()
g.dram_in("x", "float32", xz)
g.dram_in("init", "float32", init)
g.sb("xt", "float32", PT, FT)
g.sb("it", "float32", PT, 1)
g.sb("yt", "float32", PT, FT)
g.load("x", "xt", "float32", PT, FT)
g.load("init", "it", "float32", PT, 1)
tsc_inst(g, "xt", "yt", PT, FT, "Cumulative", "mult", "add", False, False, "LoadAccumulate", init=tile("it", "float32", PT, 1))
g.save("yt", "y", "float32", PT, FT, o)
case("tsc_init_load_per_partition_ap", g,
     f"TensorScalarCache Cumulative c = x*c + c with LoadAccumulate from a per-partition AP (one initial value per row) ({SEED4})",
     choices=["S8"])

# 4. the carried cache
NR, NF = 128, 64
ones = np.ones((NR, NF), F32)


def chain_program(steps, x_arrays):
    """steps: (src, mode, op0, op1, rev0, rev1, acc, init, engine, rows, expected)"""
    g = Prog()
    for k, xa in x_arrays.items():
        g.dram_in(k, "float32", xa)
        g.sb(k + "t", "float32", xa.shape[0], xa.shape[1])
        g.load(k, k + "t", "float32", xa.shape[0], xa.shape[1])
    for n, (src, mode, op0, op1, r0, r1, acc, init, engine, rows, expected) in enumerate(steps):
        f = x_arrays[src].shape[1]
        of = f if mode != "Reduce" else 1
        g.sb(f"y{n}t", "float32", rows, of)
        tsc_inst(g, src + "t", f"y{n}t", rows, f, mode, op0, op1, r0, r1, acc, init=init, engine=engine)
        g.save(f"y{n}t", f"y{n}", "float32", rows, of, expected)
    return g


cum1 = np.tile(np.arange(1, NF + 1, dtype=F32), (NR, 1))
g = chain_program([("x", "Cumulative", "add", "bypass", False, False, "ZeroAccumulate", None, "DVE", NR, cum1),
                   ("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, cum1 + 64)],
                  {"x": ones})
case("tsc_chain_nki_cumulative", g,
     "NKI test_nki_isa_tensor_scalar_cumulative chain1/chain2 on ones(128, 64): Cumulative add/bypass "
     f"ZeroAccumulate gives 1..64 per row, then acc=Accumulate on the same engine continues: 65..128 (DOCUMENTED; {SEED4})")
g = chain_program([("x", "Cumulative", "add", "bypass", False, False, "LoadAccumulate", imm(10.0), "DVE", NR, cum1 + 10),
                   ("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, cum1 + 74)],
                  {"x": ones})
case("tsc_chain_load_then_accumulate", g,
     f"TensorScalarCache LoadAccumulate(10) gives 11..74, then Accumulate continues 75..138 ({SEED4})", choices=["S15"])
xr_ = RNG.integers(-8, 9, (NR, NF)).astype(F32)
xr2 = RNG.integers(-8, 9, (NR, NF)).astype(F32)
_, c1 = tsc_run(xr_, "add", "bypass", False, False, 0.0)
_, c2 = tsc_run(xr2, "add", "bypass", False, False, c1)
g = chain_program([("x", "Reduce", "add", "bypass", False, False, "ZeroAccumulate", None, "DVE", NR, c1.reshape(NR, 1)),
                   ("x2", "Reduce", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, c2.reshape(NR, 1))],
                  {"x": xr_, "x2": xr2})
case("tsc_chain_reduce", g,
     f"TensorScalarCache Reduce chained: the second Reduce (acc=Accumulate, other data) starts from the first's final value ({SEED4})",
     choices=["S15"])
twos = np.full((NR, NF), 2, F32)
cum2 = np.tile(np.arange(2, 2 * NF + 1, 2, dtype=F32), (NR, 1))
g = chain_program([("x", "Cumulative", "add", "bypass", False, False, "ZeroAccumulate", None, "DVE", NR, cum1),
                   ("x2", "Cumulative", "add", "bypass", False, False, "ZeroAccumulate", None, "Pool", NR, cum2),
                   ("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, cum1 + 64)],
                  {"x": ones, "x2": twos})
case("tsc_chain_other_engine_between", g,
     f"TensorScalarCache on DVE (1..64), one on Pool (2,4,..,128), then Accumulate on DVE continues DVE's cache: 65..128 ({SEED4})",
     choices=["S15"])
g = chain_program([("x", "Cumulative", "add", "bypass", False, False, "ZeroAccumulate", None, "DVE", NR, cum1),
                   ("x2", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "Pool", NR, cum2),
                   ("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, cum1 + 64)],
                  {"x": ones, "x2": twos})
case("tsc_chain_other_engine_starts_at_zero", g,
     f"TensorScalarCache on DVE (1..64), then Accumulate on Pool starts from Pool's own cache, 0 (2..128), then DVE continues 65..128 ({SEED4})",
     choices=["S15"])
g = chain_program([("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, cum1)], {"x": ones})
case("tsc_accumulate_first_starts_at_zero", g,
     f"TensorScalarCache Cumulative add with acc=Accumulate and no earlier TensorScalarCache: the cache starts at 0 ({SEED4})",
     choices=["S15"])
half = np.ones((64, NF), F32)
cum_rows = np.concatenate([cum1[:64] + 64, cum1[64:]])
g = chain_program([("h", "Cumulative", "add", "bypass", False, False, "ZeroAccumulate", None, "DVE", 64, cum1[:64]),
                   ("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", NR, cum_rows)],
                  {"x": ones, "h": half})
case("tsc_chain_per_partition_row", g,
     f"TensorScalarCache on partitions 0..63 (1..64), then Accumulate on 0..127: rows 0..63 continue (65..128), rows 64..127 start at 0 (1..64) ({SEED4})",
     choices=["S15"])
o1, c1 = tsc_run(xw, "subtract", "bypass", False, False, 0.0)
o2, c2 = tsc_run(xw, "subtract", "bypass", False, False, c1)
g = chain_program([("x", "TensorScan", "subtract", "bypass", False, False, "Zero", None, "DVE", PT, o1),
                   ("x", "TensorScan", "subtract", "bypass", False, False, "Idle", None, "DVE", PT, o2)], {"x": xw})
case("tsc_chain_zero_then_idle", g,
     f"TensorScalarCache TensorScan u = x - c with acc=Zero, then acc=Idle continues from the carried cache ({SEED4})",
     choices=["S15"])
o1, c1 = tsc_run(xw, "add", "bypass", True, False, 0.0)
o2, c2 = tsc_run(xw, "add", "bypass", False, False, c1)
g = chain_program([("x", "Cumulative", "add", "bypass", True, False, "ZeroAccumulate", None, "DVE", PT, o1),
                   ("x", "Cumulative", "add", "bypass", False, False, "Accumulate", None, "DVE", PT, o2)], {"x": xw})
case("tsc_chain_reverse_then_forward", g,
     f"TensorScalarCache reversed suffix sums (reverse0), then a forward Accumulate continues from the row total ({SEED4})",
     choices=["S14", "S15"])


# ================================================================ 5. reduce axes on short APs (seed 000 §3)
FOLD = {"X": (3,), "XY": (2, 3), "XYZ": (1, 2, 3), "XYZW": (0, 1, 2, 3), "C": (0,), "XYZWC": (0, 1, 2, 3)}


def as_wzyx(v):
    """AP-ordered values -> [W, Z, Y, X]: W level 0, X the last, missing middle dims size 1."""
    s = v.shape
    if len(s) == 2:
        return v.reshape(s[0], 1, 1, s[1])
    if len(s) == 3:
        return v.reshape(s[0], 1, s[1], s[2])
    return v


def reduce_expect(v4, axis, op):
    folded = FOLD[axis]
    kept = tuple(d for d in range(4) if d not in folded)
    t = np.transpose(v4, kept + folded)
    shp = [v4.shape[d] for d in kept]
    t = t.reshape(int(np.prod(shp)) if shp else 1, -1)
    r = fold_avg(t) if op == "average" else fold(t, op)
    if 0 in kept:  # one row of outputs per partition
        return r.reshape(v4.shape[0], -1)
    return r.reshape(1, -1)


# input layouts: (name, P, row elements, pairs)
LAYOUTS = [
    ("2l", 12, 24, [[24, 12], [1, 24]]),
    ("3l", 12, 24, [[24, 12], [6, 4], [1, 6]]),
    ("3l_transposed", 12, 24, [[24, 12], [1, 4], [4, 6]]),  # inner level steps 4: element order != memory order
    ("4l", 6, 60, [[60, 6], [20, 3], [5, 4], [1, 5]]),
]
SEED3 = "seed 000 §3.1; W = level 0, X = last level, missing middle dims size 1; sequential fold in element order"
for lname, p, f, pairs in LAYOUTS:
    xv = (RNG.standard_normal((p, f)) * 4).astype(F32)
    v4 = as_wzyx(gather(xv, pairs))
    for axis in FOLD:
        for op in ("add", "max") + (("average",) if lname in ("2l", "3l_transposed", "4l") and axis in ("X", "XY", "C", "XYZW") else ()):
            if lname == "3l_transposed" and op == "max" and axis not in ("X", "C"):
                continue
            xin = xv
            choices = []
            if op == "average":
                # data on which divide-first (the running mean) differs from sum-then-divide
                folded = FOLD[axis]
                n = int(np.prod([v4.shape[d] for d in folded]))
                assert n & (n - 1) != 0
                while True:
                    va = as_wzyx(gather(xin, pairs))
                    t = np.transpose(va, tuple(d for d in range(4) if d not in folded) + folded).reshape(-1, n)
                    if (fold(t, "add") / F32(n) != reduce_expect(va, axis, op).reshape(-1)).any():
                        break
                    xin = (RNG.standard_normal((p, f)) * 4).astype(F32)
                choices.append("S6")
            y = reduce_expect(as_wzyx(gather(xin, pairs)), axis, op)
            if axis == "XYZWC":
                choices.append("S6")
            g = reduce_program(xin, "float32", pairs, "float32", y.shape[0], y.shape[1], y, op=op, axis=axis)
            case(f"reduce_{op}_{axis}_{lname}", g,
                 f"TensorReduce {op} axis={axis} on a {len(pairs)}-level input AP {pairs}: {y.size} output(s) "
                 f"({SEED3}{'; average divides first: acc = x0/N, then acc + (1/N)*x' if op == 'average' else ''})",
                 choices=sorted(set(choices)))

# Pool: window = the X and Y dims under the same rule
SEED32 = "seed 000 §3.2; window = the X and Y dims (W level 0, X last, missing middle dims size 1)"


def pool_max(win):
    acc = np.full(win.shape[:-1], -np.finfo(F32).max, F32)
    for j in range(win.shape[-1]):
        v = win[..., j]
        acc = np.where(np.isnan(v), acc, np.where(np.isnan(acc) | (v >= acc), v, acc)).astype(F32)
    return acc


def pool_avg(win):
    n = win.shape[-1]
    body = n // 4 * 4
    lanes = np.zeros(win.shape[:-1] + (4,), F32)
    for j in range(0, body, 4):
        lanes = (lanes + win[..., j:j + 4]).astype(F32)
    s = ((lanes[..., 0] + lanes[..., 1]) + (lanes[..., 2] + lanes[..., 3])).astype(F32)
    for j in range(body, n):
        s = (s + win[..., j]).astype(F32)
    return (s.astype(np.float64) * (1.0 / n)).astype(F32)


for lname, p, f, pairs in LAYOUTS:
    if lname == "3l_transposed":
        continue
    xv = (RNG.standard_normal((p, f)) * 4).astype(F32)
    v4 = as_wzyx(gather(xv, pairs))
    win = v4.reshape(v4.shape[0], v4.shape[1], -1)  # [W, Z, Y*X]
    for func in ("Max", "Avg"):
        y = (pool_max(win) if func == "Max" else pool_avg(win)).reshape(p, -1)
        g = reduce_program(xv, "float32", pairs, "float32", p, y.shape[1], y, opcode="Pool", func=func)
        case(f"pool_{func.lower()}_{lname}", g,
             f"Pool {func} on a {len(pairs)}-level input AP {pairs}: window {win.shape[2]} elements, {y.shape[1]} output(s) "
             f"per partition ({SEED32}{'; Max from -FLT_MAX with fmaxf' if func == 'Max' else ''})",
             choices=["S7"] if func == "Avg" else [])


# ================================================================ 6. fp32 extremes into fp8 / bf16 / fp16 (re-facts §4)
EXT = np.array([np.finfo(F32).min, np.finfo(F32).max, -np.inf, np.inf, 1e30, -1e30, 1.5, -2.0], F32).reshape(1, 8)
for profile in ("refsim", "nki"):
    for dt in ("float8e5", "float8e4", "float8_e4m3fn", "bfloat16", "float16"):
        y = encode(EXT, dt, profile)
        if dt == "float8e5":
            assert list(y[0, :4]) == ([0xFB, 0x7B, 0xFB, 0x7B] if profile == "refsim" else [0xFC, 0x7C, 0xFC, 0x7C])
        if dt == "float8e4":
            assert list(y[0, :4]) == ([0xF7, 0x77, 0xF7, 0x77] if profile == "refsim" else [0xF8, 0x78, 0xF8, 0x78])
        g = Prog(profile)
        g.dram_in("x", "float32", EXT)
        g.sb("xt", "float32", 1, 8)
        g.sb("yt", dt, 1, 8)
        g.load("x", "xt", "float32", 1, 8)
        g.inst("TensorCopy", [tile("xt", "float32", 1, 8)], [tile("yt", dt, 1, 8)])
        g.save("yt", "y", dt, 1, 8, y)
        what = {"refsim": "FP8 saturates: finite overflow and +-Inf -> +-max" if dt.startswith("float8") else "RNE, overflow -> +-Inf",
                "nki": "ml_dtypes, no saturation"}[profile]
        case(f"fp8sat_fp32_extremes_to_{dt}_{profile}", g,
             f"TensorCopy of [FP32_MIN, FP32_MAX, -inf, +inf, 1e30, -1e30, 1.5, -2] into {dt} under {profile}: {what} "
             f"(re-facts §4 libBIR default FP8 config; seed 000 §5.1 cast-on-copy)",
             choices=["N7"] if dt == "float8e4" else [])


def write_all():
    birprog.clear_cases(HERE)
    total = 0
    for name, (g, note, choices, fault) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes), never from birsim",
                 f"profile: {g.profile}"]
        lines += [f"choice: {c}" for c in choices]
        if fault is not None:
            lines.append(f"fault {fault[0]} | {fault[1]}")
        total += birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    print(f"{len(CASES)} cases, {total / 2**20:.1f} MiB of tensors")


write_all()
