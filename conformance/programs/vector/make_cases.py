#!/usr/bin/env python3
"""Writes the `programs/vector` conformance suite: the eight VectorE / GpSimd instructions of issue #29's
second batch -- BNStats (34), BNStatsAggregate (35), Max (88), MaxIndex (89), MatchReplace (90),
MaxIndexAndMatchReplace (91), RangeSelect (63), NonzeroWithCount (104) -- on AWS's documented examples
and tests re-expressed as BIR JSON, edge cases, and a layer-norm kernel, with the .npy inputs and the
expected .npy outputs.

The expected values come from a step-by-step NumPy float32 emulation of the written spec
(SPEC.md, the arithmetic order it fixes) and, for the ops the kernels already run,
docs/bir-json.md and docs/fidelity.md (Activation E1-E3, TensorScalarPtr seed 000 2.2, TensorTensor
seed 000 2.3, Memset, Load / Save), never from birsim: nothing under crates/ was read. Where AWS ships a
golden (the bn_stats test's np.mean / np.var, the nc_match_replace8 test's
get_replaced_output_and_max_indices, the range_select tests' NumPy equivalents), make_cases.py also
checks the emulation against it (copied verbatim below).

The emulation (one function per instruction, below; every operation one NumPy float32 operation, so
one IEEE rounding, no FMA):
  * BNStats: per row, chunks of 512 elements; per chunk the even / odd halves; per half count (fp32),
    sum = +0 then sum + x in order, mean = sum / count, m2 = +0 then m2 + fl(d * d) with
    d = x - mean; an empty half is (0, 0, 0);
  * BNStatsAggregate: triples with count 0 skipped; N = sum of counts, s = sum of fl(count * mean),
    mean = s / N; q = sum of fl(m2 + fl(count * fl(d * d))), d = mean_i - mean; var = q / N; N = 0
    gives (0, 0);
  * Max: an 8-slot insertion sort with strict > in element order (a tie keeps the earlier element);
  * MaxIndex: for k = 0..7, the first position equal (fp32 ==) to vals[k] not yet taken, else all-ones;
  * MatchReplace / MaxIndexAndMatchReplace: the same with k = 7..0, the taken positions replaced by
    imm_value;
  * RangeSelect: idx = fp32(range_start + j); keep x where op0(idx, bound0) and op1(idx, bound1), else
    fill_value; the VectorE registers (one fp32 per row) reset to the fold's identity by
    ZeroAccumulate (or an absent acc) and folded serially with the fp32 value before the cast;
    reduce_res = cast(register);
  * NonzeroWithCount: on rows whose absolute SBUF partition is a multiple of 16 only: the positions of
    x != 0 plus index_offset, padding_val, the count;
  * Activation Rsqrt (E1-E3): u = fp32(fp32(x * scale) + bias), y = 1/sqrt(f64(u)) in f64 rounded once;
  * TensorScalarPtr: out = op1(op0(x, s0), s1), each stage one fp32 operation; TensorTensor: op(a, b) in
    fp32; Memset: the constant's bits;
  * every output cast: fp32 -> dtype by RNE (ml_dtypes), fp8 under the refsim profile saturating
    overflow (and FP32_MIN) to the format's largest finite value (fidelity N2, N19).

Sanity: each kernel's emulated outputs are also checked against float64 (the layer norm, bn_stats
mean / var) or AWS's own golden (max8 / match_replace8 / range_select); see README.md.

Run: /work/main/.venv/bin/python conformance/programs/vector/make_cases.py (any Python with NumPy 2.4.6,
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
from birprog import ap, imm, tile  # noqa: E402

np.seterr(all="raise")
HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64 = np.float32, np.float64
SEED = 20270629  # each case's RNG: np.random.default_rng([SEED, crc32(case name)])

FP32, BF16, FP16, E4, E5 = "float32", "bfloat16", "float16", "float8e4", "float8e5"
I32, U32, U16 = "int32", "uint32", "uint16"
STORE = {FP32: np.float32, BF16: np.uint16, FP16: np.float16, E4: np.uint8, E5: np.uint8,
         I32: np.int32, U32: np.uint32, U16: np.uint16}
SIZE = {FP32: 4, BF16: 2, FP16: 2, E4: 1, E5: 1, I32: 4, U32: 4, U16: 2}
# float8e4 = the legacy IEEE-style E4M3 (max 240, has Inf), float8e5 = E5M2 (as actmath.py / matmult)
ML = {BF16: md.bfloat16, E4: md.float8_e4m3, E5: md.float8_e5m2}
FP32_MIN = F32(np.finfo(F32).min)  # 0xFF7FFFFF, NKI's nl.fp32.min
ALL_ONES = {U32: 0xFFFFFFFF, U16: 0xFFFF}
U = 2.0 ** -24  # fp32 unit roundoff


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def bits(x):
    return np.asarray(x, F32).view(np.uint32)


def f32b(u):
    return np.array(u, np.uint32).view(F32)[()]


QNAN = f32b(0x7FC00000)


def encode(x, dt):
    """fp32 values -> the stored array of dtype dt, as a write narrows under the refsim profile:
    RNE; fp8 saturates overflow and +-Inf to +-max (N2, N19); a NaN into bf16 / fp16 / fp8 is the
    canonical NaN without sign (N3, N4) -- no case here narrows a NaN, asserted."""
    x = np.asarray(x, F32)
    if dt == FP32:
        return x.copy()
    if dt in (I32, U32, U16):
        raise AssertionError(dt)
    assert not np.isnan(x).any(), dt
    if dt == FP16:
        with np.errstate(over="ignore", under="ignore"):
            return x.astype(np.float16)
    with np.errstate(over="ignore", under="ignore"):
        y = x.astype(ML[dt])
    if dt in (E4, E5):
        mx = F32(md.finfo(ML[dt]).max)
        y = np.where(np.isinf(y.astype(F32)), np.where(x < 0, -mx, mx).astype(ML[dt]), y)
    return y.view(STORE[dt])


def widen(raw, dt):
    """Stored values -> fp32 (exact)."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    if dt in (I32, U32, U16):
        return raw.astype(F32)  # int32 -> fp32 RNE (values here are exact)
    return raw.astype(F32)


# N19, as fidelity.md states it (refsim): FP32_MIN -> fp8 saturates, bf16 / fp16 give -Inf
assert int(encode([FP32_MIN], E5)[0]) == 0xFB and int(encode([FP32_MIN], E4)[0]) == 0xF7
assert int(encode([FP32_MIN], BF16)[0]) == 0xFF80 and int(encode([FP32_MIN], FP16).view(np.uint16)[0]) == 0xFC00


# ---------------------------------------------------------------- instruction emulation
def bn_stats(x):
    """BNStats on fp32 rows x [P, n] -> [P, 6 * ceil(n / 512)] fp32 (spec: chunks of 512, even / odd
    halves, count, serial sum from +0, mean = sum / count, serial m2 of fl(d * d), empty half 0, 0, 0)."""
    x = np.asarray(x, F32)
    p, n = x.shape
    out = []
    for c in range(-(-n // 512)):
        ch = x[:, c * 512:(c + 1) * 512]
        for half in (ch[:, 0::2], ch[:, 1::2]):
            cnt = half.shape[1]
            if cnt == 0:
                out += [np.zeros(p, F32)] * 3
                continue
            s = np.zeros(p, F32)
            for j in range(cnt):
                s = (s + half[:, j]).astype(F32)
            mean = (s / F32(cnt)).astype(F32)
            m2 = np.zeros(p, F32)
            for j in range(cnt):
                d = (half[:, j] - mean).astype(F32)
                m2 = (m2 + (d * d).astype(F32)).astype(F32)
            out += [np.full(p, F32(cnt)), mean, m2]
    return np.stack(out, axis=1).astype(F32)


def bn_aggr(st):
    """BNStatsAggregate on [P, 3k] fp32 triples -> [P, 2] (mean, population variance), the spec's order."""
    st = np.asarray(st, F32)
    p, m = st.shape
    assert m % 3 == 0
    trip = [(st[:, 3 * i], st[:, 3 * i + 1], st[:, 3 * i + 2]) for i in range(m // 3)]
    n = np.zeros(p, F32)
    s = np.zeros(p, F32)
    for c, mu, _ in trip:
        use = c != 0
        n = np.where(use, (n + c).astype(F32), n)
        s = np.where(use, (s + (c * mu).astype(F32)).astype(F32), s)
    nz = n != 0
    safe = np.where(nz, n, F32(1))
    mean = np.where(nz, (s / safe).astype(F32), F32(0)).astype(F32)
    q = np.zeros(p, F32)
    for c, mu, m2 in trip:
        use = c != 0
        with np.errstate(over="ignore", invalid="ignore"):  # only on skipped (count 0) triples
            d = (mu - mean).astype(F32)
            t = (m2 + (c * (d * d).astype(F32)).astype(F32)).astype(F32)
        assert np.isfinite(t[use & np.isfinite(mean)]).all() or np.isnan(st).any()
        q = np.where(use, (q + t).astype(F32), q)
    var = np.where(nz, (q / safe).astype(F32), F32(0)).astype(F32)
    return np.stack([mean, var], axis=1).astype(F32)


def max8(x):
    """Max on fp32 rows [P, n] -> [P, 8] fp32: an 8-slot insertion sort, strict > (NaN compares false),
    in element order; L holds positions so the output keeps each element's bits (+-0, NaN)."""
    x = np.asarray(x, F32)
    out = np.empty((x.shape[0], 8), F32)
    for r in range(x.shape[0]):
        row = [float(v) for v in x[r]]
        L = []
        for j, v in enumerate(row):
            p = len(L)
            for k, i in enumerate(L):
                if v > row[i]:
                    p = k
                    break
            if p < 8:
                L.insert(p, j)
                del L[8:]
        assert len(L) == 8
        out[r] = x[r, L]
    return out


def match8(x, vals, reverse):
    """For k in 0..7 (reverse: 7..0): the first position of row x equal (fp32 ==) to vals[k] that no
    earlier-processed k took, else None. Returns ([P, 8] positions or -1, [P, n] taken mask)."""
    x = np.asarray(x, F32)
    vals = np.asarray(vals, F32)
    p, n = x.shape
    idx = np.full((p, 8), -1, np.int64)
    taken = np.zeros((p, n), bool)
    for r in range(p):
        for k in (range(7, -1, -1) if reverse else range(8)):
            m = np.flatnonzero((x[r] == vals[r, k]) & ~taken[r])  # NaN never ==; -0 == +0
            if m.size:
                idx[r, k] = m[0]
                taken[r, m[0]] = True
    return idx, taken


def find_index8(x, vals, dt):
    idx, _ = match8(x, vals, reverse=False)
    return np.where(idx < 0, ALL_ONES[dt], idx).astype(STORE[dt])


def match_replace8(x, vals, imm_value, idx_dt=None):
    """-> (dst fp32 values [P, n], dst_idx [P, 8] of idx_dt or None)."""
    idx, taken = match8(x, vals, reverse=True)
    dst = np.where(taken, F32(imm_value), np.asarray(x, F32)).astype(F32)
    if idx_dt is None:
        return dst, None
    return dst, np.where(idx < 0, ALL_ONES[idx_dt], idx).astype(STORE[idx_dt])


CMP = {"is_equal": np.equal, "is_lt": np.less, "is_le": np.less_equal, "is_gt": np.greater,
       "is_ge": np.greater_equal}
IDENTITY = {"max": F32(-np.inf), "min": F32(np.inf), "add": F32(0.0)}


class Vector:
    """The VectorE's accumulator registers: one fp32 per row (row r = partition r of the data AP)."""

    def __init__(self):
        self.regs = np.zeros(128, F32)

    def range_select(self, x, op0, b0, op1, b1, range_start=0, fill=FP32_MIN, reduce_op="max",
                     acc="ZeroAccumulate"):
        """x fp32 [P, n]; b0 / b1 an fp32 scalar or [P, 1] column. Returns the fp32 result (before the
        cast) and the registers' [P, 1] values after the fold."""
        x = np.asarray(x, F32)
        p, n = x.shape
        idx = (np.int64(range_start) + np.arange(n)).astype(F32)[None, :]
        assert range_start + n <= 2 ** 24
        keep = CMP[op0](idx, F32(b0) if np.ndim(b0) == 0 else b0) & CMP[op1](idx, F32(b1) if np.ndim(b1) == 0 else b1)
        y = np.where(keep, x, F32(fill)).astype(F32)
        r = self.regs[:p].copy()
        if acc == "ZeroAccumulate":
            r[:] = IDENTITY[reduce_op]
        else:
            assert acc == "Accumulate"
        for j in range(n):
            v = y[:, j]
            if reduce_op == "max":
                r = np.maximum(r, v)  # no NaN and no +-0 tie of different signs in these cases (asserted)
            elif reduce_op == "min":
                r = np.minimum(r, v)
            else:
                r = (r + v).astype(F32)
        assert not np.isnan(y).any()
        self.regs[:p] = r
        return y, r.reshape(p, 1).copy()


def nonzero_with_count(x, dst_before, part0, index_offset=0, padding_val=-1):
    """x [P, n] fp32 values (or int32), dst_before [P, n + 1] int32; row r is partition part0 + r."""
    x = np.asarray(x)
    out = np.array(dst_before, np.int32, copy=True)
    p, n = x.shape
    for r in range(p):
        if (part0 + r) % 16:
            continue
        with np.errstate(invalid="ignore"):
            pos = np.flatnonzero(x[r] != 0)  # NaN != 0; -0 == 0
        row = [int(j) + index_offset for j in pos] + [padding_val] * (n - len(pos)) + [len(pos)]
        out[r] = np.array(row, np.int64).astype(np.int32)
    return out


def rsqrt_act(x, scale, bias):
    """Activation Rsqrt (E1-E3): u = fp32(fp32(x * scale) + bias); 1/sqrt(u) in f64, rounded once."""
    u = ((np.asarray(x, F32) * F32(scale)).astype(F32) + bias).astype(F32)
    return (F64(1.0) / np.sqrt(u.astype(F64))).astype(F32)


# ---------------------------------------------------------------- program building
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Activation": "Activation", "Memset": "Pool",
               "NonzeroWithCount": "Pool"}
    DEFAULT_ENGINE = "DVE"

    def col_out(self, src, dt, p, k, c, name, expected):
        """Saves column c of the [p, k] SB tile src as the external output name [p, 1]."""
        self.dram_out(name, dt, (p, 1), expected)
        self.inst("Save", [tile(src, dt, p, 1, offset=c, row=k)], [tile(name, dt, p, 1)])


def col(mem, dt, p, k, c):
    """Column c of a [p, k] SB tile as a [p, 1] AP (one value per partition)."""
    return tile(mem, dt, p, 1, offset=c, row=k)


CASES = {}
SANITY = []  # (case, what, result)
SENS = []  # (case, alternative reading, how many expected values it would change)


def differ(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == F32 or b.dtype == F32:
        a, b = np.asarray(a, F32).view(np.uint32), np.asarray(b, F32).view(np.uint32)
    return int((a != b).sum())


def case(name, g, note, source, choices=()):
    assert name not in CASES, name
    ops = sorted({i["opcode"] for i in g.insts} - {"Load", "Save"})
    # The ASSUMED fidelity rows each new instruction's arithmetic rests on (docs/fidelity.md).
    rows = {"BNStats": "Q3", "BNStatsAggregate": "Q4", "MatchReplace": "Q7",
            "MaxIndexAndMatchReplace": "Q7", "NonzeroWithCount": "Q8", "RangeSelect": "Q9"}
    CASES[name] = (g, note, source, ops, list(choices) + [rows[o] for o in ops if o in rows])


# ---------------------------------------------------------------- sources
AWS = "aws-neuron/aws-neuron-sdk"
SRC_BN = f"{AWS} nki/test/test_nki_isa_bn_stats.py and nki/api/nki/isa/__init__.py (bn_stats, bn_aggr)"
SRC_BN_DOC = f"{AWS} nki/api/nki/isa/__init__.py (bn_stats, bn_aggr); spec29a BNStats / BNStatsAggregate"
SRC_M8 = f"{AWS} nki/test/test_nki_isa_nc_match_replace8.py, nki/test/test_nki_isa_max8.py"
SRC_M8_DOC = f"{AWS} nki/api/nki/isa/__init__.py (max8, nc_find_index8, nc_match_replace8); spec29a"
SRC_RS = f"{AWS} nki/test/test_nki_isa_range_select.py and nki/api/nki/isa/__init__.py (range_select)"
SRC_RS_DOC = f"{AWS} nki/api/nki/isa/__init__.py (range_select); spec29a RangeSelect"
SRC_NZ = f"{AWS} nki/api/nki/isa/__init__.py (nonzero_with_count); spec29a NonzeroWithCount"
SRC_LN = (f"{AWS} nki/api/nki/isa/__init__.py (bn_stats, bn_aggr: 'To get the final mean and variance') "
          "with the layer norm y = (x - mean) * rsqrt(var + eps) * gamma + beta")


# ================================================================ BNStats / BNStatsAggregate
def sens_bn(name, x, st, mv):
    """Alternative readings of BNStats / BNStatsAggregate and how many expected values they change."""
    with np.errstate(over="ignore", invalid="ignore"):
        _sens_bn(name, x, st, mv)


def _sens_bn(name, x, st, mv):
    p, n = x.shape
    alt_pair = []
    for c in range(-(-n // 512)):
        ch = x[:, c * 512:(c + 1) * 512]
        for half in (ch[:, 0::2], ch[:, 1::2]):
            cnt = half.shape[1]
            alt_pair.append(np.zeros(p, F32) if cnt == 0 else (half.sum(axis=1, dtype=F32) / F32(cnt)).astype(F32))
    means = st[:, 1::3]
    got_pair = np.stack(alt_pair, axis=1)
    SENS.append((name, "BNStats half sums by NumPy's pairwise `np.sum` instead of the serial fold",
                 f"{differ(got_pair, means)} of {means.size} stats means"))
    # m2 by the one-pass textbook formula sum(x^2) - count * mean^2 (fp32, serial)
    m2s = []
    for c in range(-(-n // 512)):
        ch = x[:, c * 512:(c + 1) * 512]
        for k, half in enumerate((ch[:, 0::2], ch[:, 1::2])):
            cnt = half.shape[1]
            if cnt == 0:
                m2s.append(np.zeros(p, F32))
                continue
            sq = np.zeros(p, F32)
            for j in range(cnt):
                sq = (sq + (half[:, j] * half[:, j]).astype(F32)).astype(F32)
            mu = st[:, 6 * c + 3 * k + 1]
            m2s.append((sq - (F32(cnt) * (mu * mu).astype(F32)).astype(F32)).astype(F32))
    SENS.append((name, "BNStats m2 as sum(x^2) - count * mean^2 (one pass) instead of sum of (x - mean)^2",
                 f"{differ(np.stack(m2s, axis=1), st[:, 2::3])} of {means.size} stats m2"))
    # aggregate exactly in f64, rounded once
    c64, m64, q64 = (st[:, 0::3].astype(F64), st[:, 1::3].astype(F64), st[:, 2::3].astype(F64))
    nn = c64.sum(axis=1)
    mean64 = (c64 * m64).sum(axis=1) / nn
    var64 = (q64 + c64 * (m64 - mean64[:, None]) ** 2).sum(axis=1) / nn
    alt = np.stack([mean64, var64], axis=1).astype(F32)
    SENS.append((name, "BNStatsAggregate in f64, rounded once, instead of the spec's fp32 order",
                 f"{differ(alt, mv)} of {mv.size} mean / var"))
    # Chan et al.'s pairwise merge, triple after triple (fp32)
    na, ma, qa = st[:, 0].copy(), st[:, 1].copy(), st[:, 2].copy()
    for i in range(1, st.shape[1] // 3):
        nb, mb, qb = st[:, 3 * i], st[:, 3 * i + 1], st[:, 3 * i + 2]
        use = nb != 0
        nab = (na + nb).astype(F32)
        with np.errstate(all="ignore"):
            dl = (mb - ma).astype(F32)
            mnew = (ma + ((dl * nb).astype(F32) / nab).astype(F32)).astype(F32)
            qnew = (((qa + qb).astype(F32) + ((((dl * dl).astype(F32) * na).astype(F32) * nb).astype(F32) / nab).astype(F32))).astype(F32)
        na, ma, qa = np.where(use, nab, na), np.where(use, mnew, ma), np.where(use, qnew, qa)
    with np.errstate(all="ignore"):
        alt = np.stack([ma, (qa / na).astype(F32)], axis=1)
    SENS.append((name, "BNStatsAggregate by Chan's pairwise merge (fp32) instead of the spec's order",
                 f"{differ(alt, mv)} of {mv.size} mean / var"))


def bn_program(name, raw, dt, splits, outs_stats=True):
    """Load x; BNStats per column range of `splits` (each writes 6 * ceil(len / 512) values at its own
    offset of one stats tile); BNStatsAggregate; Save mean, var (and the stats tile)."""
    p, n = raw.shape
    x = widen(raw, dt)
    g = Prog()
    xt = g.tile_in("x", dt, raw)
    k = sum(6 * -(-(b - a) // 512) for a, b in splits)
    g.sb("st", FP32, p, k)
    parts, off = [], 0
    for a, b in splits:
        w = 6 * -(-(b - a) // 512)
        g.inst("BNStats", [tile(xt, dt, p, b - a, offset=a, row=n)], [tile("st", FP32, p, w, offset=off, row=k)])
        parts.append(bn_stats(x[:, a:b]))
        off += w
    st = np.concatenate(parts, axis=1)
    mv = bn_aggr(st)
    g.sb("mv", FP32, p, 2)
    g.inst("BNStatsAggregate", [tile("st", FP32, p, k)], [tile("mv", FP32, p, 2)])
    g.col_out("mv", FP32, p, 2, 0, "mean", mv[:, :1])
    g.col_out("mv", FP32, p, 2, 1, "var", mv[:, 1:])
    if outs_stats:
        g.save("st", "stats", FP32, p, k, st)
    return g, x, st, mv


def bn_aws(name, shape, splits):
    rng = rng_for(name)
    a = (rng.random(shape).astype(F32) * 100).astype(F32)  # AWS: random_sample(...).astype(np.float32) * 100
    g, x, st, mv = bn_program(name, a, FP32, splits)
    # AWS's golden (np.allclose to np.mean / np.var of the fp32 data)
    ok_m = np.allclose(mv[:, :1], np.mean(a, axis=1, keepdims=True))
    ok_v = np.allclose(mv[:, 1:], np.var(a, axis=1, keepdims=True))
    assert ok_m and ok_v, (name, ok_m, ok_v)
    x64 = a.astype(F64)
    em = float(np.max(np.abs(mv[:, 0] - x64.mean(axis=1)) / np.abs(x64.mean(axis=1))))
    ev = float(np.max(np.abs(mv[:, 1] - x64.var(axis=1)) / x64.var(axis=1)))
    SANITY.append((name, "AWS golden: np.allclose(mean, np.mean(a, axis=1)), np.allclose(var, np.var(a, axis=1))",
                   f"both hold; max rel. error vs float64: mean {em:.2e}, var {ev:.2e}"))
    sens_bn(name, x, st, mv)
    return g


g = bn_aws("bn_stats_aws_128x128", (128, 128), [(0, 128)])
case("bn_stats_aws_128x128", g,
     "AWS bn_stats example 1: a [128, 128] fp32 (random * 100); BNStats -> stats [128, 6]; BNStatsAggregate -> "
     "[128, 2]; mean and var Saved from its two columns. Outputs: mean [128,1], var [128,1], stats [128,6]", SRC_BN)
g = bn_aws("bn_stats_aws_128x1024_two_tiles", (128, 1024), [(0, 512), (512, 1024)])
case("bn_stats_aws_128x1024_two_tiles", g,
     "AWS bn_stats example 2: b [128, 1024] fp32 (random * 100); two BNStats on columns 0..512 and 512..1024 write "
     "6 values each at offsets 0 and 6 of one [128, 12] SB tile; BNStatsAggregate over the 4 triples. Outputs: "
     "mean, var, stats [128,12]", SRC_BN)


def bn_edge_513(name):
    rng = rng_for(name)
    raw = rng.normal(0.5, 2.0, (8, 513)).astype(F32)
    # row 0 around 2e19: the skipped count-0 triple's d = 0 - mean has d * d = +Inf, so keeping it would
    # add 0 * Inf = NaN to var
    raw[0] = (F32(2e19) + F32(1e17) * rng.normal(0.0, 1.0, 513).astype(F32)).astype(F32)
    g, x, st, mv = bn_program(name, raw, FP32, [(0, 513)])
    assert st.shape == (8, 12) and (st[:, 9:] == 0).all() and (st[:, 6] == 1).all() and (st[:, 8] == 0).all()
    assert np.isfinite(mv).all()
    sens_bn(name, x, st, mv)
    with np.errstate(over="ignore", invalid="ignore"):
        d = (st[:, 10] - mv[:, 0]).astype(F32)
        keep0 = ((F32(0) * (d * d).astype(F32)).astype(F32) + (mv[:, 1] * F32(1))).astype(F32)  # var + 0 * d^2 ...
    SENS.append((name, "BNStatsAggregate keeping the count-0 triple (its 0 * d^2 term)",
                 f"{int(np.isnan(keep0).sum())} of 8 var become NaN (row 0: d^2 = +Inf)"))
    return g


case("bn_stats_edge_513_two_chunks", bn_edge_513("bn_stats_edge_513_two_chunks"),
     "one BNStats on rows of 513 fp32 elements (8 rows): two chunks, 512 + 1; the last chunk's even half is the "
     "one element (count 1, mean x, m2 0) and its odd half is empty (count 0: 0, 0, 0); output 12 values per row; "
     "BNStatsAggregate skips the count-0 triple (row 0, values around 2e19, would get var NaN from 0 * (0 - mean)^2 "
     "= 0 * Inf if it did not). Outputs: mean, var, stats [8,12]", SRC_BN_DOC)


def bn_edge_7(name):
    rng = rng_for(name)
    raw = rng.normal(-1.0, 3.0, (8, 7)).astype(F32)
    g, x, st, mv = bn_program(name, raw, FP32, [(0, 7)])
    assert (st[:, 0] == 4).all() and (st[:, 3] == 3).all()
    sens_bn(name, x, st, mv)
    return g


case("bn_stats_edge_7", bn_edge_7("bn_stats_edge_7"),
     "BNStats on rows of 7 fp32 elements (8 rows): even half 4 elements (positions 0, 2, 4, 6), odd half 3; "
     "BNStatsAggregate. Outputs: mean, var, stats [8,6]", SRC_BN_DOC)


def bn_bf16(name):
    rng = rng_for(name)
    raw = encode(rng.normal(2.0, 1.5, (128, 512)).astype(F32), BF16)
    g, x, st, mv = bn_program(name, raw, BF16, [(0, 512)])
    sens_bn(name, x, st, mv)
    return g


case("bn_stats_bf16_in_f32_out", bn_bf16("bn_stats_bf16_in_f32_out"),
     "BNStats reading a [128, 512] bfloat16 tile (widened exactly to fp32), writing fp32 stats; BNStatsAggregate "
     "fp32. Outputs: mean, var, stats [128,6]", SRC_BN_DOC)


def bn_nan_negzero(name):
    rng = rng_for(name)
    p, n = 8, 40
    raw = rng.normal(0.0, 1.0, (p, n)).astype(F32)
    raw[0, 4] = QNAN  # even half of row 0
    raw[1, 7] = QNAN  # odd half of row 1
    raw[2, :] = F32(-0.0)  # all -0: mean +0 only if the sum starts at +0
    raw[3, :] = np.where(np.arange(n) % 2 == 0, F32(-0.0), F32(0.0))
    raw[4, 0::2] = F32(-0.0)  # even half all -0, odd half values
    raw[5, ::3] = F32(-0.0)
    raw[6, :] = F32(0.1)  # a constant row: mean may differ from 0.1 by rounding, m2 tiny or 0
    g, x, st, mv = bn_program(name, raw, FP32, [(0, n)])
    assert np.isnan(st[0, 1]) and not np.isnan(st[0, 4]) and np.isnan(st[1, 4]) and not np.isnan(st[1, 1])
    assert bits(st[2, 1]) == 0 and bits(mv[2, 0]) == 0  # +0
    assert (bits(st[np.isnan(st)]) == 0x7FC00000).all() and (bits(mv[np.isnan(mv)]) == 0x7FC00000).all()
    # the -0 reading: a sum started from the first element would give -0 means on the all -0 halves
    alt = st.copy()
    for r, cols in ((2, (1, 4)), (3, (1,)), (4, (1,))):
        for c in cols:
            alt[r, c] = F32(-0.0)
    SENS.append((name, "BNStats sum started from the first element (not +0): an all -0 half gives mean -0",
                 f"{differ(alt, st)} of {st.size} stats"))
    return g


case("bn_stats_nan_negzero", bn_nan_negzero("bn_stats_nan_negzero"),
     "BNStats + BNStatsAggregate on 8 rows of 40 fp32: row 0 a NaN (0x7FC00000) at an even position (even half "
     "mean / m2 NaN, odd half finite, aggregate NaN), row 1 at an odd position; row 2 all -0 (means +0: the sums "
     "start at +0), row 3 alternating -0 / +0, row 4 even half -0, row 5 every third element -0, row 6 constant "
     "0.1. Outputs: mean, var, stats [8,6]", SRC_BN_DOC)


# ================================================================ layer norm
def layer_norm(name, dt, eps=1e-5):
    """x [128, 1024]; gamma, beta [1, 1024] Loaded to all partitions by a partition-step-0 DRAM AP;
    2 x BNStats -> [128, 12]; BNStatsAggregate -> mv [128, 2]; Activation Rsqrt ins [var AP, scale imm 1.0,
    bias imm eps] -> rstd; TensorScalarPtr (x - mean) * rstd (ins [x, mean AP, rstd AP]); TensorTensor
    mult gamma; TensorTensor add beta; Save y, mv, rstd."""
    P, F = 128, 1024
    rng = rng_for(name)
    raw = encode(rng.normal(3.0, 2.0, (P, F)).astype(F32), dt)
    graw = encode((F32(1.0) + F32(0.1) * rng.normal(0.0, 1.0, F).astype(F32)).astype(F32), dt).reshape(1, F)
    braw = encode((F32(0.1) * rng.normal(0.0, 1.0, F).astype(F32)).astype(F32), dt).reshape(1, F)
    eps32 = F32(eps)
    x, gm, bt = widen(raw, dt), widen(graw, dt)[0], widen(braw, dt)[0]

    st = np.concatenate([bn_stats(x[:, :512]), bn_stats(x[:, 512:])], axis=1)
    mv = bn_aggr(st)
    mean, var = mv[:, :1], mv[:, 1:]
    rstd = rsqrt_act(var, 1.0, eps32)
    xn = ((x - mean).astype(F32) * rstd).astype(F32)
    t = (xn * gm[None, :]).astype(F32)
    y = (t + bt[None, :]).astype(F32)
    y_st = encode(y, dt)

    # sanity: float64 layer norm of the same (widened) inputs
    x64 = x.astype(F64)
    m64 = x64.mean(axis=1, keepdims=True)
    v64 = x64.var(axis=1, keepdims=True)
    r64 = 1.0 / np.sqrt(v64 + F64(eps32))
    y64 = (x64 - m64) * r64 * gm.astype(F64) + bt.astype(F64)
    scale = (np.abs(x64) + np.abs(m64)) * r64 * np.abs(gm.astype(F64)) + np.abs(bt.astype(F64))
    err = float(np.max(np.abs(widen(y_st, dt).astype(F64) - y64) / scale))
    tol = (2 * 512 + 16) * U + (2.0 ** -8 if dt == BF16 else 0.0)
    assert err <= tol, (name, err, tol)
    er = float(np.max(np.abs(rstd.astype(F64) - r64) / r64))
    assert er <= (512 + 8) * U, (name, er)
    SANITY.append((name, "float64 layer norm: max |y - y64| / ((|x| + |mean|) * rstd * |gamma| + |beta|); "
                   "rstd relative", f"{err:.2e} (bound {tol:.2e}); rstd {er:.2e}"))
    sens_bn(name, x, st, mv)
    alt = (F32(1.0) / np.sqrt(((var * F32(1.0)).astype(F32) + eps32).astype(F32))).astype(F32)
    SENS.append((name, "rsqrt as fp32 1/sqrtf (two fp32 roundings) instead of f64 1/sqrt rounded once (E3)",
                 f"{differ(alt, rstd)} of {P} rstd"))

    g = Prog()
    xt = g.tile_in("x", dt, raw)
    for nm, rw in (("gamma", graw), ("beta", braw)):
        g.dram_in(nm, dt, rw)
        g.sb(nm + "_t", dt, P, F)
        g.inst("Load", [ap(nm, dt, [[0, P], [1, F]])], [tile(nm + "_t", dt, P, F)])
    g.sb("st", FP32, P, 12)
    for c in range(2):
        g.inst("BNStats", [tile(xt, dt, P, 512, offset=512 * c, row=F)], [tile("st", FP32, P, 6, offset=6 * c, row=12)])
    g.sb("mv_t", FP32, P, 2)
    g.inst("BNStatsAggregate", [tile("st", FP32, P, 12)], [tile("mv_t", FP32, P, 2)])
    g.sb("rstd_t", FP32, P, 1)
    g.inst("Activation", [col("mv_t", FP32, P, 2, 1), imm(1.0), imm(float(eps32))], [tile("rstd_t", FP32, P, 1)],
           func="Rsqrt", scale=1.0, alpha=0.0)
    g.sb("xn", FP32, P, F)
    g.inst("TensorScalarPtr", [tile(xt, dt, P, F), col("mv_t", FP32, P, 2, 0), tile("rstd_t", FP32, P, 1)],
           [tile("xn", FP32, P, F)], op0="subtract", reverse0=False, op1="mult", reverse1=False)
    g.sb("t", FP32, P, F)
    g.inst("TensorTensor", [tile("xn", FP32, P, F), tile("gamma_t", dt, P, F)], [tile("t", FP32, P, F)], op="mult")
    g.sb("y_t", dt, P, F)
    g.inst("TensorTensor", [tile("t", FP32, P, F), tile("beta_t", dt, P, F)], [tile("y_t", dt, P, F)], op="add")
    g.save("y_t", "y", dt, P, F, y_st)
    g.save("mv_t", "mv", FP32, P, 2, mv)
    g.save("rstd_t", "rstd", FP32, P, 1, rstd)
    return g


case("layernorm_f32_128x1024", layer_norm("layernorm_f32_128x1024", FP32),
     "layer norm of a [128, 1024] fp32 tile (x ~ N(3, 2)) with gamma, beta [1, 1024] Loaded to all 128 partitions "
     "by a partition-step-0 DRAM AP [[0,128],[1,1024]]: two BNStats (columns 0..512, 512..1024) into one [128, 12] "
     "tile at offsets 0 and 6; BNStatsAggregate -> mv [128, 2]; Activation Rsqrt ins [mv column 1, scale imm 1.0, "
     "bias imm eps = fp32(1e-5) = 9.999999747378752e-06] -> rstd; TensorScalarPtr ins [x, mv column 0, rstd] op0 "
     "subtract, op1 mult; TensorTensor mult gamma; TensorTensor add beta. Outputs: y [128,1024], mv [128,2], rstd "
     "[128,1]", SRC_LN, ["E1", "E2", "E3"])
case("layernorm_bf16_128x1024", layer_norm("layernorm_bf16_128x1024", BF16),
     "the same layer norm with bfloat16 x, gamma, beta and y: BNStats widens the bf16 data, the stats, mv, rstd and "
     "the normalized tile (TensorScalarPtr reading bf16 x, writing fp32) are fp32; TensorTensor mult reads the "
     "bf16 gamma tile, the add the bf16 beta tile and writes bf16 (RNE). Outputs: y [128,1024] bf16, mv, rstd",
     SRC_LN, ["E1", "E2", "E3"])


# ================================================================ Max / MaxIndex / MatchReplace
def aws_match_and_get_index(data, vals):  # AWS test_nki_isa_nc_match_replace8.py, verbatim
    row = data.copy()
    vlength = vals.shape[-1]

    result = np.zeros(shape=vals.shape, dtype=np.int32)
    idx = 0
    for j in range(vlength):
        matches = np.where(row == vals[j])[0]
        if matches:
            idx = matches[0]
            row[idx] = np.float32("-inf")
            result[j] = idx
    return result


def aws_get_replaced_output_and_max_indices(a, imm=0):  # verbatim
    axis = -1
    a_reshaped = a.reshape(a.shape[0], -1)
    a_sorted = np.sort(a_reshaped, axis=axis)
    a_sorted_last_8 = a_sorted[:, -8:]
    max_vals = np.flip(a_sorted_last_8, axis=-1)

    c = a_reshaped.copy()
    concat_out_golden_max_vals = np.concatenate([c, max_vals], axis=axis)
    c_idx = np.apply_along_axis(
        # get index for first occurence of max_vals along the specified axis
        lambda x: match_and_get_index(x[:-8], x[-8:]),
        axis=axis,
        arr=concat_out_golden_max_vals,
    ).astype(np.uint32)
    np.put_along_axis(c, indices=c_idx, values=imm, axis=axis)
    c = np.reshape(c, a.shape)
    return c, c_idx


match_and_get_index = aws_match_and_get_index


def imm_json(v):
    v = F32(v)
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    return float(v)


def m8_chain(name, raw, dt, imm_value, src_pairs=None, dst_pairs=None, idx_dt=U32, dst_dt=None, find=True):
    """Load data; Max -> vals [P, 8]; MaxIndex (data, vals) -> idx_find; MaxIndexAndMatchReplace (data, vals,
    imm) -> dst, idx; Save all. src_pairs: the data AP's free pairs (default dense)."""
    p, f = raw.shape
    dst_dt = dst_dt or dt
    pairs = src_pairs or [[1, f]]
    flat = birprog.ap_index([[f, p]] + pairs)  # element indices of the data AP, row by row
    x = widen(raw, dt).reshape(-1)[flat.reshape(p, -1)]
    n = x.shape[1]
    vals = max8(x)
    out = {}
    g = Prog()
    xt = g.tile_in("data", dt, raw)
    src = ap(xt, dt, [[f, p]] + pairs)
    g.sb("vals_t", dt, p, 8)
    g.inst("Max", [src], [tile("vals_t", dt, p, 8)])
    vals_st = encode(vals, dt)
    vw = widen(vals_st, dt)
    g.save("vals_t", "vals", dt, p, 8, vals_st)
    if find:
        fi = find_index8(x, vw, idx_dt)
        g.sb("idx_find_t", idx_dt, p, 8)
        g.inst("MaxIndex", [src, tile("vals_t", dt, p, 8)], [tile("idx_find_t", idx_dt, p, 8)])
        g.save("idx_find_t", "idx_find", idx_dt, p, 8, fi)
        out["idx_find"] = fi
    dst, idx = match_replace8(x, vw, imm_value, idx_dt)
    dst_st = encode(dst, dst_dt)
    dpairs = dst_pairs or [[1, n]]
    dn = int(np.prod([q[1] for q in dpairs]))
    assert dn == n
    g.sb("dst_t", dst_dt, p, n)
    g.sb("idx_t", idx_dt, p, 8)
    g.inst("MaxIndexAndMatchReplace", [src, tile("vals_t", dt, p, 8)],
           [ap("dst_t", dst_dt, [[n, p]] + dpairs), tile("idx_t", idx_dt, p, 8)], imm_value=imm_json(imm_value))
    g.save("dst_t", "dst", dst_dt, p, n, dst_st)
    g.save("idx_t", "idx", idx_dt, p, 8, idx)
    out.update(x=x, vals=vals, dst=dst, idx=idx)
    return g, out


def sens_m8(name, out, idx_dt=U32):
    x, vals, idx = out["x"], widen(encode(out["vals"], FP32), FP32), out["idx"]
    fwd, _ = match8(x, vals, reverse=False)
    fwd = np.where(fwd < 0, ALL_ONES[idx_dt], fwd).astype(STORE[idx_dt])
    SENS.append((name, "MaxIndexAndMatchReplace pairing vals in forward order (k = 0..7, AWS's test golden) "
                 "instead of reverse (AWS's docstring)", f"{differ(fwd, idx)} of {idx.size} idx"))


def m8_aws(name):
    np.random.seed(0)  # AWS's test input, exactly
    a = np.random.random_sample([128, 512]).astype(np.float32)
    imm_v = np.float32("-inf")
    g, out = m8_chain(name, a, FP32, imm_v)
    c, c_idx = aws_get_replaced_output_and_max_indices(a, imm_v)
    assert differ(out["dst"], c) == 0 and (out["idx"] == c_idx).all()
    assert (out["vals"] == np.flip(np.sort(a, axis=1)[:, -8:], axis=1)).all()
    assert (out["idx_find"] == out["idx"]).all()  # distinct values: both pairings agree
    SANITY.append((name, "AWS golden get_replaced_output_and_max_indices(a, -inf) (verbatim); vals = the 8 largest "
                   "by np.sort", "dst and idx bit-equal; vals equal; MaxIndex = MaxIndexAndMatchReplace idx"))
    sens_m8(name, out)
    return g


case("max8_aws_match_replace_128x512", m8_aws("max8_aws_match_replace_128x512"),
     "AWS's nc_match_replace8 test (test_nc_match_replace_indices8): a = np.random.seed(0); random_sample([128, 512]) "
     "fp32; Max -> vals [128, 8]; MaxIndex (data, vals) -> idx_find uint32; MaxIndexAndMatchReplace (data, vals, "
     "imm_value \"-inf\") -> dst [128, 512] fp32, idx uint32. Outputs: vals, idx_find, dst, idx", SRC_M8)


def m8_aws_3d(name):
    np.random.seed(0)
    a = np.random.random_sample([128, 4, 4]).astype(np.float32)
    g, out = m8_chain(name, a.reshape(128, 16), FP32, 0.0, src_pairs=[[4, 4], [1, 4]], dst_pairs=[[4, 4], [1, 4]])
    c, c_idx = aws_get_replaced_output_and_max_indices(a, imm=0)
    assert differ(out["dst"], c.reshape(128, 16)) == 0 and (out["idx"] == c_idx).all()
    SANITY.append((name, "AWS golden get_replaced_output_and_max_indices(a, imm=0) (verbatim)", "dst and idx bit-equal"))
    return g


case("max8_aws_3d_128x4x4", m8_aws_3d("max8_aws_3d_128x4x4"),
     "AWS's 3-D test (test_nc_match_replace_indices8_3d): np.random.seed(0); random_sample([128, 4, 4]) fp32 read "
     "through the 3-level AP [[16,128],[4,4],[1,4]]; Max; MaxIndex; MaxIndexAndMatchReplace imm_value 0.0, dst "
     "written through a 3-level AP. Outputs: vals, idx_find, dst [128,16], idx", SRC_M8)


def m8_strided_3d(name):
    rng = rng_for(name)
    raw = rng.normal(0.0, 1.0, (16, 64)).astype(F32)  # a [16, 4, 16] tile; the AP reads every other element
    g, out = m8_chain(name, raw, FP32, 9.5, src_pairs=[[16, 4], [2, 8]], dst_pairs=[[8, 4], [1, 8]])
    # the positions are AP-order positions (0..31), not the elements' offsets in the row (0..63)
    assert out["idx"].max() < 32 and out["idx_find"].max() < 32
    mem = np.asarray(birprog.ap_index([[16, 4], [2, 8]])).reshape(-1)
    alt = mem[out["idx"].astype(np.int64)]
    SENS.append((name, "indices as offsets in the row (the element's memory position) instead of the AP-order "
                 "position", f"{differ(alt.astype(np.uint32), out['idx'])} of {out['idx'].size} idx"))
    return g


case("max8_strided_3d_ap", m8_strided_3d("max8_strided_3d_ap"),
     "a [16, 64] fp32 tile read through the strided 3-level AP [[64,16],[16,4],[2,8]] (32 elements per row: every "
     "other element of each 16-element group); Max; MaxIndex; MaxIndexAndMatchReplace imm_value 9.5 writing dst "
     "[16, 32] through [[32,16],[8,4],[1,8]]. Positions count in AP order (0..31). Outputs: vals, idx_find, dst, idx",
     SRC_M8_DOC)


def m8_ties(name):
    rng = rng_for(name)
    p, f = 6, 64
    raw = rng.normal(0.0, 1.0, (p, f)).astype(F32)
    raw[0, [3, 9, 10, 20, 33, 40, 41, 50, 55, 63]] = F32(5.0)  # ten copies of the max: 8 kept, in order
    raw[1] = -np.abs(raw[1]) - F32(0.5)
    raw[1, [5, 17, 30]] = F32(-0.0)
    raw[1, [8, 40]] = F32(0.0)  # zeros are the row's largest: -0, +0, -0, -0, +0 by position
    raw[2] = np.array([3, 3, 2, 2, 2, 1] * 10 + [0, 0, 0, 0], F32)[rng.permutation(f)]  # < 8 distinct values
    raw[3, ::2] = np.round(raw[3, ::2] * 2) / 2  # many equal halves
    raw[4] = F32(-1.25)  # all equal
    raw[5, [0, 1, 2]] = F32(7.0)
    raw[5, [61, 62, 63]] = F32(7.0)
    g, out = m8_chain(name, raw, FP32, -1.0)
    v = out["vals"]
    assert (bits(v[1, :5]) == np.array([0x80000000, 0x00000000, 0x80000000, 0x80000000, 0x00000000])).all()
    # the alternative: >= insertion (a later equal element goes first)
    vx = out["x"]
    alt = np.empty_like(v)
    for r in range(p):
        order = sorted(range(f), key=lambda j: (-float(vx[r, j]), -j))[:8]
        alt[r] = vx[r, order]
    SENS.append((name, "Max ties: the later equal element first (>= insertion) instead of the earlier (strict >)",
                 f"{differ(alt, v)} of {v.size} vals (the +-0 bits of row 1)"))
    sens_m8(name, out)
    return g


case("max8_ties_duplicates", m8_ties("max8_ties_duplicates"),
     "6 rows of 64 fp32 with ties: row 0 ten copies of the max (vals all 5.0; MaxIndex the first 8 positions "
     "ascending, MaxIndexAndMatchReplace the same positions in reverse slot order); row 1 -0 / +0 as the largest "
     "(vals keep their bits in element order); row 2 only 4 distinct values; row 3 many equal halves; row 4 all "
     "equal; row 5 three 7.0 at each end. imm_value -1.0. Outputs: vals, idx_find, dst, idx", SRC_M8_DOC)


def m8_doc(name):
    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], F32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], F32)
    dst, idx = match_replace8(data, vals, -1.0, U32)
    assert idx.tolist() == [[2, 10, 9, 8, 7, 6, 5, 4]]
    fi = find_index8(data, vals, U32)
    assert fi.tolist() == [[2, 4, 5, 6, 7, 8, 9, 10]]
    g = Prog()
    dt_ = g.tile_in("data", FP32, data)
    vt = g.tile_in("vals", FP32, vals)
    g.sb("idx_find_t", U32, 1, 8)
    g.inst("MaxIndex", [tile(dt_, FP32, 1, 11), tile(vt, FP32, 1, 8)], [tile("idx_find_t", U32, 1, 8)])
    g.sb("dst_t", FP32, 1, 11)
    g.sb("idx_t", U32, 1, 8)
    g.inst("MaxIndexAndMatchReplace", [tile(dt_, FP32, 1, 11), tile(vt, FP32, 1, 8)],
           [tile("dst_t", FP32, 1, 11), tile("idx_t", U32, 1, 8)], imm_value=-1.0)
    g.save("idx_find_t", "idx_find", U32, 1, 8, fi)
    g.save("dst_t", "dst", FP32, 1, 11, dst)
    g.save("idx_t", "idx", U32, 1, 8, idx)
    fwd, _ = match8(data, vals, reverse=False)
    SENS.append((name, "MaxIndexAndMatchReplace in forward order (AWS's test golden)",
                 f"{differ(fwd.astype(np.uint32), idx)} of 8 idx"))
    return g


case("match_replace8_doc_duplicates", m8_doc("match_replace8_doc_duplicates"),
     "AWS's nc_match_replace8 docstring example: data [1,2,3,4,8,8,8,8,8,8,8] (one partition, 11 fp32), vals "
     "[3,8,8,8,8,8,8,8] Loaded; MaxIndexAndMatchReplace imm_value -1.0 -> idx [2,10,9,8,7,6,5,4] (reverse pairing), "
     "dst with positions 2, 4..10 replaced; MaxIndex with the same vals -> [2,4,5,6,7,8,9,10] (ascending). "
     "Outputs: idx_find, dst, idx", SRC_M8_DOC)


def m8_missing(name):
    rng = rng_for(name)
    p, f = 4, 32
    data = rng.normal(0.0, 1.0, (p, f)).astype(F32)
    data[0, 6] = F32(0.0)
    data[0, 12] = F32(-0.0)
    data[1, 3] = QNAN
    data[2, [1, 2, 3]] = F32(2.0)
    vals = np.zeros((p, 8), F32)
    vals[0] = [data[0, 0], 100.0, -0.0, 0.0, 0.0, data[0, 31], data[0, 0], -7.0]  # +-0 match either zero; dup
    vals[1] = [QNAN, data[1, 5], data[1, 5], data[1, 0], 55.0, data[1, 9], data[1, 1], data[1, 2]]
    vals[2] = [2.0, 2.0, 2.0, 2.0, data[2, 20], data[2, 21], 3.5, data[2, 22]]
    vals[3] = data[3, :8][::-1]
    fi32 = find_index8(data, vals, U32)
    fi16 = find_index8(data, vals, U16)
    dst, idx16 = match_replace8(data, vals, 7.5, U16)
    assert fi32[0, 1] == 0xFFFFFFFF and fi16[0, 1] == 0xFFFF and fi32[1, 0] == 0xFFFFFFFF
    assert fi32[0, 2] == 6 and fi32[0, 3] == 12 and fi32[0, 4] == 0xFFFFFFFF  # -0 == +0
    assert fi32[2, 3] == 0xFFFFFFFF  # three 2.0 in the data, four asked
    g = Prog()
    dt_ = g.tile_in("data", FP32, data)
    vt = g.tile_in("vals", FP32, vals)
    for nm, dt, v in (("idx_find32", U32, fi32), ("idx_find16", U16, fi16)):
        g.sb(nm + "_t", dt, p, 8)
        g.inst("MaxIndex", [tile(dt_, FP32, p, f), tile(vt, FP32, p, 8)], [tile(nm + "_t", dt, p, 8)])
    g.sb("dst_t", FP32, p, f)
    g.sb("idx16_t", U16, p, 8)
    g.inst("MaxIndexAndMatchReplace", [tile(dt_, FP32, p, f), tile(vt, FP32, p, 8)],
           [tile("dst_t", FP32, p, f), tile("idx16_t", U16, p, 8)], imm_value=7.5)
    g.save("idx_find32_t", "idx_find32", U32, p, 8, fi32)
    g.save("idx_find16_t", "idx_find16", U16, p, 8, fi16)
    g.save("dst_t", "dst", FP32, p, f, dst)
    g.save("idx16_t", "idx16", U16, p, 8, idx16)
    return g


case("find_index8_missing_uint16", m8_missing("find_index8_missing_uint16"),
     "vals not all in the data (4 rows of 32 fp32, vals Loaded): a missing value -> 0xFFFFFFFF (uint32 output) / "
     "0xFFFF (uint16 output), a NaN in vals (and in data) never matches, -0 in vals matches +0 data and +0 matches "
     "-0, four 2.0 asked of three, duplicates; MaxIndex into uint32 and uint16, MaxIndexAndMatchReplace imm_value 7.5 "
     "with a uint16 dst_idx. Outputs: idx_find32, idx_find16, dst, idx16", SRC_M8_DOC)


def m8_match_replace_bf16(name):
    rng = rng_for(name)
    p, f = 32, 128
    raw = encode(rng.random((p, f)).astype(F32), BF16)  # bf16: many ties among the top values
    x = widen(raw, BF16)
    vals = max8(x)
    vst = encode(vals, BF16)
    dst, _ = match_replace8(x, widen(vst, BF16), 0.0)
    dst_st = encode(dst, BF16)
    ndup = int(sum(len(set(bits(r).tolist())) < 8 for r in vals))
    assert ndup > 0
    g = Prog()
    xt = g.tile_in("data", BF16, raw)
    g.sb("vals_t", BF16, p, 8)
    g.inst("Max", [tile(xt, BF16, p, f)], [tile("vals_t", BF16, p, 8)])
    g.sb("dst_t", BF16, p, f)
    g.inst("MatchReplace", [tile(xt, BF16, p, f), tile("vals_t", BF16, p, 8)], [tile("dst_t", BF16, p, f)],
           imm_value=0.0)
    g.save("vals_t", "vals", BF16, p, 8, vst)
    g.save("dst_t", "dst", BF16, p, f, dst_st)
    SANITY.append((name, "rows whose 8 largest bf16 values hold duplicates", f"{ndup} of {p}"))
    return g


case("match_replace8_bf16_no_index", m8_match_replace_bf16("match_replace8_bf16_no_index"),
     "MatchReplace (90, no index output) on 32 rows of 128 bfloat16 values in [0, 1) (coarse, so most rows' top 8 "
     "hold duplicates): Max -> vals bf16; MatchReplace (data, vals) imm_value 0.0 -> dst bf16: the 8 matched "
     "positions (duplicates take successive positions) become +0. Outputs: vals, dst", SRC_M8_DOC)


def m8_16384(name):
    rng = rng_for(name)
    raw = rng.normal(0.0, 1.0, (4, 16384)).astype(F32)
    raw[1, 16383] = F32(50.0)  # the max at the last position
    raw[2, 0] = F32(50.0)
    g, out = m8_chain(name, raw, FP32, np.float32("-inf"))
    assert out["idx"][1, 0] == 16383 and out["idx"][2, 0] == 0
    return g


case("max8_16384_per_row", m8_16384("max8_16384_per_row"),
     "the largest data row: 4 rows of 16384 fp32 (the maximum element count), the max at the last position of row 1 "
     "and the first of row 2; Max; MaxIndex; MaxIndexAndMatchReplace imm_value \"-inf\". Outputs: vals, idx_find, "
     "dst [4,16384], idx", SRC_M8_DOC)


def m8_nan(name):
    rng = rng_for(name)
    p, f = 4, 32
    raw = rng.normal(0.0, 1.0, (p, f)).astype(F32)
    raw[0, 0] = QNAN  # first element: L = [NaN], never passed (x > NaN is false): stays in slot 0
    raw[1, 3] = QNAN  # L has 3 entries: NaN appended at slot 3, later smaller elements go after it
    raw[2, 20] = QNAN  # L full: p = 8, not inserted
    raw[3, [2, 5]] = QNAN
    x = raw
    vals = max8(x)
    assert np.isnan(vals[0, 0]) and not np.isnan(vals[2]).any()
    fi = find_index8(x, vals, U32)
    assert (fi[np.isnan(vals)] == 0xFFFFFFFF).all()
    g = Prog()
    xt = g.tile_in("data", FP32, raw)
    g.sb("vals_t", FP32, p, 8)
    g.inst("Max", [tile(xt, FP32, p, f)], [tile("vals_t", FP32, p, 8)])
    g.sb("idx_find_t", U32, p, 8)
    g.inst("MaxIndex", [tile(xt, FP32, p, f), tile("vals_t", FP32, p, 8)], [tile("idx_find_t", U32, p, 8)])
    g.save("vals_t", "vals", FP32, p, 8, vals)
    g.save("idx_find_t", "idx_find", U32, p, 8, fi)
    with np.errstate(invalid="ignore"):
        alt = -np.sort(-np.where(np.isnan(x), -np.inf, x), axis=1)[:, :8].astype(F32)
    SENS.append((name, "NaN ignored by Max (the 8 largest non-NaN values)",
                 f"{differ(alt, vals)} of {vals.size} vals"))
    return g


case("max8_nan_strict_insertion", m8_nan("max8_nan_strict_insertion"),
     "the spec's insertion rule with NaN (x > L[k] is false for a NaN on either side, else p = len(L)): row 0 NaN "
     "first (kept in slot 0: nothing is greater than it), row 1 NaN fourth (appended at slot 3, later elements "
     "smaller than the first three go after it), row 2 NaN at position 20 (L full: dropped), row 3 two NaNs; "
     "MaxIndex of those vals: a NaN slot -> 0xFFFFFFFF. Outputs: vals, idx_find", SRC_M8_DOC)


# ================================================================ RangeSelect
def rs_aws(name, dt, reduce_dt=None, acc="ZeroAccumulate", explicit_fill=False):
    """AWS's range_select example: on_true [128, 512] of dt, bound0 = 0, bound1 = 64 per row (APs),
    range_start 32, is_ge / is_lt; dst in dt, reduce_res in reduce_dt (default dt)."""
    P, F = 128, 512
    reduce_dt = reduce_dt or dt
    rng = rng_for(name)
    raw = encode(rng.random((P, F)).astype(F32), dt)
    x = widen(raw, dt)
    b0, b1 = np.zeros((P, 1), F32), np.full((P, 1), 64, F32)
    vec = Vector()
    y, r = vec.range_select(x, "is_ge", b0, "is_lt", b1, range_start=32)
    y_st, r_st = encode(y, dt), encode(r, reduce_dt)
    # AWS's check: the NumPy equivalent of the docstring, cast to the dtype
    indices = np.zeros_like(x, dtype=np.float32)
    indices[:] = 32 + np.arange(F)
    mask = np.greater_equal(indices, b0) & np.less(indices, b1)
    golden = np.where(mask, x, FP32_MIN)
    golden_reduce = np.max(golden, axis=1, keepdims=True)
    if dt in (E4, E5):
        gd = np.where(mask, golden, 0).astype(F32)
        assert (widen(y_st, dt)[mask] == gd[mask]).all()
        ml_fill = np.array([FP32_MIN], F32).astype(ML[dt]).view(np.uint8)[0]  # ml_dtypes: -Inf
        SANITY.append((name, "AWS golden np.where(mask, on_true, fp32.min).astype(dtype)",
                       f"selected elements equal; the fill differs: refsim saturates FP32_MIN to 0x{int(y_st[0, -1]):02X} "
                       f"(N19), AWS's ml_dtypes golden gives -Inf 0x{int(ml_fill):02X}"))
    else:
        with np.errstate(over="ignore"):
            gd = np.asarray(golden, F32).astype(ML.get(dt, STORE[dt])).astype(F32)
        assert np.allclose(widen(y_st, dt), gd, equal_nan=True) and differ(widen(y_st, dt), gd) == 0
        SANITY.append((name, "AWS golden np.where(mask, on_true, fp32.min).astype(dtype)", "bit-equal"))
    assert differ(widen(r_st, reduce_dt), widen(encode(golden_reduce.astype(F32), reduce_dt), reduce_dt)) == 0
    g = Prog()
    xt = g.tile_in("on_true", dt, raw)
    b0t = g.tile_in("bound0", FP32, b0)
    b1t = g.tile_in("bound1", FP32, b1)
    g.sb("dst_t", dt, P, F)
    g.sb("red_t", reduce_dt, P, 1)
    kw = dict(op0="is_ge", op1="is_lt", range_start=32, reduce_op="max")
    if acc is not None:
        kw["acc"] = acc
    if explicit_fill:
        kw["fill_value"] = float(FP32_MIN)
    g.inst("RangeSelect", [tile(xt, dt, P, F), tile(b0t, FP32, P, 1), tile(b1t, FP32, P, 1)],
           [tile("dst_t", dt, P, F), tile("red_t", reduce_dt, P, 1)], **kw)
    g.save("dst_t", "dst", dt, P, F, y_st)
    g.save("red_t", "reduce_res", reduce_dt, P, 1, r_st)
    return g


for _dt, _choices in ((E4, ["E7", "N7"]), (E5, ["E7"]), (BF16, ["E7"]), (FP16, ["E7"]), (FP32, ["E7"])):
    _fill = {E4: "0xF7 (-240, saturated: N19)", E5: "0xFB (-57344, saturated: N19)", BF16: "-Inf 0xFF80",
             FP16: "-Inf 0xFC00", FP32: "FP32_MIN 0xFF7FFFFF"}[_dt]
    _nm = f"range_select_aws_{_dt}"
    case(_nm, rs_aws(_nm, _dt, acc=None if _dt == FP32 else "ZeroAccumulate", explicit_fill=_dt == BF16),
         f"AWS's range_select example for dtype {_dt}: on_true [128, 512] {_dt} (random in [0, 1)), bound0 = 0 and "
         "bound1 = 64 per row as [128, 1] fp32 APs, range_start 32, op0 is_ge, op1 is_lt, reduce_op max, acc "
         + ("absent (= ZeroAccumulate)" if _dt == FP32 else "ZeroAccumulate")
         + (", fill_value given explicitly (FP32_MIN)" if _dt == BF16 else ", fill_value absent (FP32_MIN)")
         + f": columns 0..31 kept, 32..511 filled; dst and reduce_res in {_dt} (the fill narrows to {_fill}). "
         "Outputs: dst, reduce_res", SRC_RS, _choices)


def rs_bf16_f32_reduce(name):
    """bf16 on_true and dst, fp32 reduce_res (AWS's numerical-stability note), per-row bounds, some rows
    selecting nothing (dst all -Inf, reduce_res FP32_MIN: the fold sees the fp32 value before the cast)."""
    P, F = 128, 512
    rng = rng_for(name)
    raw = encode(rng.normal(0.0, 4.0, (P, F)).astype(F32), BF16)
    x = widen(raw, BF16)
    lo = rng.integers(0, F, P).astype(F32)
    wid = rng.integers(1, 64, P).astype(F32)
    b0 = lo.reshape(P, 1)
    b1 = (lo + wid).reshape(P, 1)
    b1[::7] = b0[::7]  # empty ranges: is_ge lo and is_lt lo never both hold
    b0[3], b1[3] = F32(40.5), F32(44.0)  # fractional bound: idx 41, 42, 43
    b0[5], b1[5] = F32(600.0), F32(700.0)  # past the row
    vec = Vector()
    y, r = vec.range_select(x, "is_ge", b0, "is_lt", b1, range_start=0)
    empty = (r[:, 0] == FP32_MIN)
    assert empty.sum() >= 18 and (bits(r[empty]) == 0xFF7FFFFF).all()
    y_st = encode(y, BF16)
    post = np.max(widen(y_st, BF16), axis=1, keepdims=True).astype(F32)
    SENS.append((name, "reduce_res folding the bf16 (post-cast) dst values instead of the fp32 pre-cast ones (E7)",
                 f"{differ(post, r)} of {P} reduce_res (the empty rows: -Inf instead of FP32_MIN)"))
    g = Prog()
    xt = g.tile_in("on_true", BF16, raw)
    b0t = g.tile_in("bound0", FP32, b0)
    b1t = g.tile_in("bound1", FP32, b1)
    g.sb("dst_t", BF16, P, F)
    g.sb("red_t", FP32, P, 1)
    g.inst("RangeSelect", [tile(xt, BF16, P, F), tile(b0t, FP32, P, 1), tile(b1t, FP32, P, 1)],
           [tile("dst_t", BF16, P, F), tile("red_t", FP32, P, 1)], op0="is_ge", op1="is_lt", range_start=0,
           reduce_op="max", acc="ZeroAccumulate")
    g.save("dst_t", "dst", BF16, P, F, y_st)
    g.save("red_t", "reduce_res", FP32, P, 1, r)
    return g


case("range_select_bf16_dst_f32_reduce", rs_bf16_f32_reduce("range_select_bf16_dst_f32_reduce"),
     "AWS's numerical-stability note: bf16 on_true and dst, fp32 reduce_res; per-row bounds (bound0 random, bound1 = "
     "bound0 + 1..63; every 7th row bound1 = bound0, an empty range; row 3 [40.5, 44); row 5 past the row), "
     "range_start 0, is_ge / is_lt: empty rows give dst all -Inf (0xFF80) and reduce_res FP32_MIN (0xFF7FFFFF), "
     "the fold seeing the fp32 value before the cast. Outputs: dst, reduce_res", SRC_RS_DOC, ["E7"])


def rs_chaining(name, spikes=False):
    """AWS's chaining test: reset_reduce (no reduce_res), on_true += 1, reduce (range_start + 128), on_true += 1,
    reduce with reduce_res (range_start + 256)."""
    P, F = 128, 512
    rng = rng_for(name)
    on_true = rng.random((P, F)).astype(F32)
    if spikes:  # a large value only the first RangeSelect keeps (column 250: idx 282 < 350, but 410, 538 are not)
        on_true[::2, 250] = (F32(10.0) + np.arange(0, P, 2).astype(F32)).astype(F32)
    b0, b1 = np.zeros((P, 1), F32), np.full((P, 1), 350, F32)
    vec = Vector()
    cur = on_true.copy()
    y, _ = vec.range_select(cur, "is_ge", b0, "is_lt", b1, range_start=32, acc="ZeroAccumulate")
    ones = np.ones((P, F), F32)
    cur = (cur + ones).astype(F32)
    y, _ = vec.range_select(cur, "is_ge", b0, "is_lt", b1, range_start=32 + 128, acc="Accumulate")
    cur = (cur + ones).astype(F32)
    y, r = vec.range_select(cur, "is_ge", b0, "is_lt", b1, range_start=32 + 256, acc="Accumulate")
    # AWS's golden (verbatim but for names)
    indices = np.zeros_like(on_true)
    golden = on_true.copy()
    golden_max = np.zeros((on_true.shape[0], 1), dtype=on_true.dtype)
    selected = golden_max.copy()
    iteration_step_size = on_true.shape[0]
    for i in range(3):
        indices[:] = 32 + (i * iteration_step_size) + np.arange(on_true.shape[1])
        mask = np.greater_equal(indices, b0) & np.less(indices, b1)
        selected = np.where(mask, golden, FP32_MIN)
        golden_max = np.maximum(golden_max, np.max(selected, axis=1, keepdims=True))
        golden = golden + 1
    assert np.allclose(y, selected) and np.allclose(r, golden_max)
    assert differ(y, selected.astype(F32)) == 0 and differ(r, golden_max.astype(F32)) == 0
    SANITY.append((name, ("with large values in column 250 of the even rows: " if spikes else "") + "AWS golden of test_range_select_chaining (golden_max from 0, not -inf: the same here)",
                   "dst and reduce_res bit-equal"))
    v2 = Vector()
    _, r3 = v2.range_select(cur, "is_ge", b0, "is_lt", b1, range_start=32 + 256, acc="ZeroAccumulate")
    SENS.append((name, "the registers reset by every RangeSelect (no chaining)", f"{differ(r3, r)} of {P} reduce_res"))
    g = Prog()
    xt = g.tile_in("on_true", FP32, on_true)
    b0t = g.tile_in("bound0", FP32, b0)
    b1t = g.tile_in("bound1", FP32, b1)
    g.sb("ones", FP32, P, F)
    g.inst("Memset", [], [tile("ones", FP32, P, F)], mode="Const", constant=int(bits(F32(1.0))))
    g.sb("dst_t", FP32, P, F)
    g.sb("red_t", FP32, P, 1)
    ins = [tile(xt, FP32, P, F), tile(b0t, FP32, P, 1), tile(b1t, FP32, P, 1)]
    kw = dict(op0="is_ge", op1="is_lt", reduce_op="max", fill_value=float(FP32_MIN))
    g.inst("RangeSelect", ins, [tile("dst_t", FP32, P, F)], range_start=32, acc="ZeroAccumulate", **kw)
    for i, last in ((1, False), (2, True)):
        g.inst("TensorTensor", [tile(xt, FP32, P, F), tile("ones", FP32, P, F)], [tile(xt, FP32, P, F)], op="add")
        outs = [tile("dst_t", FP32, P, F)] + ([tile("red_t", FP32, P, 1)] if last else [])
        g.inst("RangeSelect", ins, outs, range_start=32 + 128 * i, acc="Accumulate", **kw)
    g.save("dst_t", "dst", FP32, P, F, y)
    g.save("red_t", "reduce_res", FP32, P, 1, r)
    return g


case("range_select_aws_chaining", rs_chaining("range_select_aws_chaining"),
     "AWS's range_select chaining test: on_true [128, 512] fp32 random, bound0 0, bound1 350 (APs), is_ge / is_lt, "
     "fill_value FP32_MIN given; RangeSelect range_start 32 acc ZeroAccumulate (no reduce_res); TensorTensor add a "
     "Memset ones tile in place; RangeSelect range_start 160 acc Accumulate (no reduce_res); add ones; RangeSelect "
     "range_start 288 acc Accumulate with reduce_res: the VectorE registers carry the max across the three. "
     "Outputs: dst (the last), reduce_res", SRC_RS, ["E7"])


case("range_select_chaining_carries", rs_chaining("range_select_chaining_carries", spikes=True),
     "AWS's chaining test (as range_select_aws_chaining) with 10 + r in column 250 of every even row r: only the "
     "first RangeSelect (range_start 32: idx 282 < 350) keeps it, the later ones (idx 410, 538) do not, so the final "
     "reduce_res of the even rows shows the max carried from the ZeroAccumulate instruction through both Accumulate "
     "ones. Outputs: dst (the last), reduce_res", SRC_RS, ["E7"])


def rs_imm(name):
    P, F = 64, 256
    rng = rng_for(name)
    x = rng.normal(0.0, 3.0, (P, F)).astype(F32)
    vec = Vector()
    y, r = vec.range_select(x, "is_gt", F32(100.0), "is_le", F32(200.5), range_start=50)
    assert (y[:, 51:151] == x[:, 51:151]).all() and (y[:, 151:] == FP32_MIN).all() and (y[:, :51] == FP32_MIN).all()
    g = Prog()
    xt = g.tile_in("on_true", FP32, x)
    g.sb("dst_t", FP32, P, F)
    g.sb("red_t", FP32, P, 1)
    g.inst("RangeSelect", [tile(xt, FP32, P, F), imm(100.0), imm(200.5)], [tile("dst_t", FP32, P, F), tile("red_t", FP32, P, 1)],
           op0="is_gt", op1="is_le", range_start=50, reduce_op="max", acc="ZeroAccumulate")
    g.save("dst_t", "dst", FP32, P, F, y)
    g.save("red_t", "reduce_res", FP32, P, 1, r)
    return g


case("range_select_imm_bounds", rs_imm("range_select_imm_bounds"),
     "bounds as fp32 immediates: bound0 imm 100.0, bound1 imm 200.5, op0 is_gt, op1 is_le, range_start 50 on a "
     "[64, 256] fp32 tile: idx = 50 + j, kept for 100 < idx <= 200.5, i.e. columns 51..150; fill FP32_MIN (default). "
     "Outputs: dst, reduce_res", SRC_RS_DOC, ["E7"])


def rs_add_fill(name):
    P, F = 32, 128
    rng = rng_for(name)
    x = rng.normal(0.0, 1.0, (P, F)).astype(F32)
    lo = rng.integers(0, 64, P).astype(F32).reshape(P, 1)
    vec = Vector()
    y, r = vec.range_select(x, "is_ge", lo, "is_le", F32(100.0), fill=F32(0.0), reduce_op="add", acc="ZeroAccumulate")
    alt = np.where(y != 0, y, 0).astype(F64).sum(axis=1, keepdims=True).astype(F32)
    SENS.append((name, "the add fold in f64 rounded once instead of the serial fp32 fold",
                 f"{differ(alt, r)} of {P} reduce_res"))
    g = Prog()
    xt = g.tile_in("on_true", FP32, x)
    lt = g.tile_in("bound0", FP32, lo)
    g.sb("dst_t", FP32, P, F)
    g.sb("red_t", FP32, P, 1)
    g.inst("RangeSelect", [tile(xt, FP32, P, F), tile(lt, FP32, P, 1), imm(100.0)],
           [tile("dst_t", FP32, P, F), tile("red_t", FP32, P, 1)], op0="is_ge", op1="is_le", fill_value=0.0,
           reduce_op="add")
    g.save("dst_t", "dst", FP32, P, F, y)
    g.save("red_t", "reduce_res", FP32, P, 1, r)
    return g


case("range_select_add_fill_zero", rs_add_fill("range_select_add_fill_zero"),
     "beyond AWS (which supports only max and FP32_MIN): fill_value 0.0, reduce_op add, acc absent (= "
     "ZeroAccumulate: registers reset to 0), bound0 a per-row AP (0..63), bound1 imm 100.0, is_ge / is_le, "
     "range_start absent (0) on [32, 128] fp32: reduce_res = the serial fp32 sum of columns bound0..100. "
     "Outputs: dst, reduce_res", SRC_RS_DOC, ["E7"])


def rs_equal_min(name):
    P, F = 16, 64
    rng = rng_for(name)
    x = rng.random((P, F)).astype(F32)
    at = rng.integers(0, F, P).astype(F32).reshape(P, 1)
    vec = Vector()
    y, r = vec.range_select(x, "is_equal", at, "is_ge", F32(0.0), fill=F32(5.0), reduce_op="min", range_start=0)
    assert (r[:, 0] == x[np.arange(P), at[:, 0].astype(int)]).all()
    g = Prog()
    xt = g.tile_in("on_true", FP32, x)
    at_t = g.tile_in("bound0", FP32, at)
    g.sb("dst_t", FP32, P, F)
    g.sb("red_t", FP32, P, 1)
    g.inst("RangeSelect", [tile(xt, FP32, P, F), tile(at_t, FP32, P, 1), imm(0.0)],
           [tile("dst_t", FP32, P, F), tile("red_t", FP32, P, 1)], op0="is_equal", op1="is_ge", range_start=0,
           fill_value=5.0, reduce_op="min", acc="ZeroAccumulate")
    g.save("dst_t", "dst", FP32, P, F, y)
    g.save("red_t", "reduce_res", FP32, P, 1, r)
    return g


case("range_select_is_equal_min", rs_equal_min("range_select_is_equal_min"),
     "beyond AWS: op0 is_equal (bound0 a per-row AP: one column kept), op1 is_ge imm 0.0 (always true), fill_value "
     "5.0, reduce_op min: reduce_res = the kept element. Outputs: dst, reduce_res", SRC_RS_DOC, ["E7"])


# ================================================================ NonzeroWithCount
def nz_aws(name):
    src = np.array([[0, 1, 1, 0, 0, 1, 0, 0]], np.int32)
    want = nonzero_with_count(src, np.zeros((1, 9), np.int32), 0, 16, -1)
    assert want.tolist() == [[17, 18, 21, -1, -1, -1, -1, -1, 3]]
    g = Prog()
    st = g.tile_in("src", I32, src)
    g.sb("dst_t", I32, 1, 9)
    g.inst("NonzeroWithCount", [tile(st, I32, 1, 8)], [tile("dst_t", I32, 1, 9)], index_offset=16, padding_val=-1)
    g.save("dst_t", "dst", I32, 1, 9, want)
    return g


case("nonzero_with_count_aws_example", nz_aws("nonzero_with_count_aws_example"),
     "AWS's documented example: one partition, int32 [0,1,1,0,0,1,0,0], index_offset 16, padding_val -1 -> "
     "[17,18,21,-1,-1,-1,-1,-1,3]. Output: dst [1,9] int32", SRC_NZ)


def nz_int32(name):
    P, n = 128, 32
    rng = rng_for(name)
    src = np.where(rng.random((P, n)) < 0.7, 0, rng.integers(-3, 4, (P, n))).astype(np.int32)
    src[16] = 0  # a processed row with no nonzero: all padding, count 0
    src[32] = np.arange(1, n + 1)  # all nonzero: no padding
    src[48, :] = 0
    src[48, n - 1] = -5
    init = rng.integers(-2 ** 31, 2 ** 31, (P, n + 1), dtype=np.int64).astype(np.int32)
    want = nonzero_with_count(src, init, 0, 100, -7)
    assert (want[1::16] == init[1::16]).all() and want[16, -1] == 0 and want[32, -1] == n
    g = Prog()
    st = g.tile_in("src", I32, src)
    dt_ = g.tile_in("dst0", I32, init)
    g.inst("NonzeroWithCount", [tile(st, I32, P, n)], [tile(dt_, I32, P, n + 1)], index_offset=100, padding_val=-7)
    g.save(dt_, "dst", I32, P, n + 1, want)
    SENS.append((name, "every row processed (not only partitions 0, 16, ..., 112)",
                 f"{differ(_all_rows(src, init, 100, -7), want)} of {want.size} dst"))
    return g


def _all_rows(src, init, off, pad):
    out = np.array(init, copy=True)
    for r in range(src.shape[0]):
        out[r] = nonzero_with_count(src[r:r + 1], init[r:r + 1], 0, off, pad)[0]
    return out


case("nonzero_with_count_int32_128", nz_int32("nonzero_with_count_int32_128"),
     "int32 src [128, 32] (about 30 % nonzero, values -3..3), dst [128, 33] int32 pre-filled by a Load of random "
     "int32 (input dst0); index_offset 100, padding_val -7: only partitions 0, 16, ..., 112 are written (row 16 "
     "has no nonzero: 32 x -7 and count 0; row 32 all nonzero; row 48 one at the end), the other 120 rows keep "
     "their Loaded values. Output: dst [128,33]", SRC_NZ)


def nz_f32(name):
    P, n = 128, 16
    rng = rng_for(name)
    src = np.where(rng.random((P, n)) < 0.5, F32(0.0), rng.normal(0.0, 1.0, (P, n))).astype(F32)
    src[0] = [0.0, -0.0, QNAN, 1.0, -0.0, f32b(1), 0.0, -np.inf, np.inf, -0.0, 0.0, f32b(0x80000001), -0.0, 0.0, 2.5, -0.0]
    src[16] = F32(-0.0)  # all -0: count 0
    src[32] = QNAN  # all NaN: all nonzero
    src[48, ::2] = F32(-0.0)
    const = 0x12345678
    init = np.full((P, n + 1), const, np.int32)
    want = nonzero_with_count(src, init, 0)
    assert want[0].tolist() == [2, 3, 5, 7, 8, 11, 14] + [-1] * 9 + [7]
    assert want[16, -1] == 0 and want[32, -1] == 16 and (want[1] == const).all()
    g = Prog()
    st = g.tile_in("src", FP32, src)
    g.sb("dst_t", I32, P, n + 1)
    g.inst("Memset", [], [tile("dst_t", I32, P, n + 1)], mode="Const", constant=const)
    g.inst("NonzeroWithCount", [tile(st, FP32, P, n)], [tile("dst_t", I32, P, n + 1)])
    g.save("dst_t", "dst", I32, P, n + 1, want)
    return g


case("nonzero_with_count_f32_nan_negzero", nz_f32("nonzero_with_count_f32_nan_negzero"),
     "float32 src [128, 16]: row 0 mixes +0, -0 (zero), NaN, the subnormals 0x00000001 and 0x80000001, +-Inf "
     "(nonzero); row 16 all -0 (count 0), row 32 all NaN (16 nonzero), row 48 -0 at even positions; fields absent "
     "(index_offset 0, padding_val -1); dst [128, 17] int32 pre-filled by Memset Const 0x12345678, kept on the rows "
     "not processed. Output: dst [128,17]", SRC_NZ)


def nz_offset(name):
    """APs starting at partition 8 of 64-partition tiles, 40 rows: processed are the rows at absolute
    partitions 16 and 32 (AP rows 8 and 24), not AP rows 0, 16, 32."""
    P, n, p0, rows = 64, 16, 8, 40
    rng = rng_for(name)
    src = np.where(rng.random((P, n)) < 0.5, 0, rng.integers(1, 9, (P, n))).astype(np.int32)
    init = rng.integers(-1000, 1000, (P, n + 1)).astype(np.int32)
    want = init.copy()
    want[p0:p0 + rows] = nonzero_with_count(src[p0:p0 + rows], init[p0:p0 + rows], p0, 3, -2)
    assert (want != init).any(axis=1).nonzero()[0].tolist() == [16, 32]
    alt = init.copy()
    alt[p0:p0 + rows] = nonzero_with_count(src[p0:p0 + rows], init[p0:p0 + rows], 0, 3, -2)
    SENS.append((name, "rows chosen by their index in the AP (0, 16, 32) instead of their absolute partition",
                 f"{differ(alt, want)} of {want.size} dst"))
    g = Prog()
    st = g.tile_in("src", I32, src)
    dt_ = g.tile_in("dst0", I32, init)
    g.inst("NonzeroWithCount", [tile(st, I32, rows, n, offset=p0 * n)],
           [tile(dt_, I32, rows, n + 1, offset=p0 * (n + 1))], index_offset=3, padding_val=-2)
    g.save(dt_, "dst", I32, P, n + 1, want)
    return g


case("nonzero_with_count_partition_offset", nz_offset("nonzero_with_count_partition_offset"),
     "src [64, 16] int32 and dst [64, 17] int32 (pre-filled by a Load), both read / written through APs starting at "
     "partition 8 and spanning 40 partitions (8..47); index_offset 3, padding_val -2: the rows processed are those "
     "at absolute SBUF partitions 16 and 32 (AP rows 8 and 24); partitions 0..7 and 48..63 are outside the APs. "
     "Output: the whole dst [64,17]", SRC_NZ)


# ---------------------------------------------------------------- writing
def readme_section():
    out = ["<!-- BEGIN GENERATED by make_cases.py: do not edit by hand -->", "",
           f"### Cases ({len(CASES)})", "", "| case | instructions (besides Load / Save) | choices | follows | what |",
           "|---|---|---|---|---|"]
    for name, (g, note, source, ops, choices) in CASES.items():
        out.append(f"| `{name}` | {', '.join(ops)} | {', '.join(choices) or '-'} | {source} | {note} |")
    out += ["", "### Sanity checks against AWS's goldens / float64", "", "| case | check | result |", "|---|---|---|"]
    for c, what, res in SANITY:
        out.append(f"| `{c}` | {what} | {res} |")
    out += ["", "### What the expected bits distinguish", "",
            "Each row: an alternative reading and how many expected values it would change (computed by the "
            "generator on the case's own data).", "", "| case | alternative | changed |", "|---|---|---|"]
    for c, alt, k in SENS:
        out.append(f"| `{c}` | {alt} | {k} |")
    out += ["", "<!-- END GENERATED -->", ""]
    return "\n".join(out)


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, source, ops, choices) in CASES.items():
        lines = [f"# {note}", f"# follows {source}",
                 "# expected outputs from make_cases.py (NumPy / ml_dtypes emulation of SPEC.md and "
                 "docs/bir-json.md), never from birsim"]
        lines += [f"choice: {c}" for c in sorted(set(choices), key=lambda c: (c[0], int(c[1:])))]
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
