#!/usr/bin/env python3
"""Writes the `programs/activation` conformance suite: BIR JSON programs with one or more Activation
(ScalarE) instructions, their .npy inputs and the expected .npy outputs, computed here with NumPy /
ml_dtypes / mpmath (pinned in oracle/requirements.txt) from the Activation spec E1-E5 (README.md),
independently of birsim (nothing under crates/ was read).

The oracle:
  * E1 operands: ins = [data, scale?, bias?, alpha?]; each optional operand an fp32 imm_value or a
    [P, 1] fp32 AP broadcast along the free elements; a missing scale / alpha operand means the JSON
    key (`scale` default 1.0, `alpha` default 0.0), a missing bias +0.0; an operand beats the key;
  * E2 arithmetic: x = fp32(data) (ml_dtypes widening); t = fp32(x * scale), u = fp32(t + bias) as two
    NumPy float32 operations; y = f(u) in IEEE double (`CLOSED`: every + - * / sqrt a NumPy float64
    operation, every library call exp / log / log1p / tanh / erf / sin / atan correctly rounded to f64
    with mpmath, `cr`); result = np.float32(y) (RNE), then cast to the dst dtype (ml_dtypes, RNE);
  * E3 the closed forms (`CLOSED`); Is_finite / Unknown fault (`fault unsupported-op |`);
  * E4 special values (+-0, +-Inf, the quiet NaN 0x7FC00000 where the result is one NaN whatever
    the operand order, fp32 subnormals, the engines.md 2.4 range edges);
  * stability (README "Stability"): an input is kept only if its fp32 result is the same when each
    library call's result is moved by -1, 0, +1 f64 ulp (every combination);
  * item 6: the correctly rounded fp32 of the true function value (mpmath, 100 digits), compared
    with the closed-form result; the differences are listed in README.md (generated section).

Run: /work/main/.venv/bin/python conformance/programs/activation/make_cases.py
"""
import itertools
import json
import os
import re
import sys
import warnings
import zlib

import mpmath
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import imm, tile  # noqa: E402

warnings.simplefilter("ignore")
np.seterr(all="ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64 = np.float32, np.float64
SEED = 20270420  # each case's RNG: np.random.default_rng([SEED, crc32(case name)])

# ---------------------------------------------------------------- dtypes and correctly rounded library calls
from actmath import SIZE, STORE, Lib, bits32, cr, encode, f32b, widen  # noqa: E402  (conformance/programs/actmath.py)


# ---------------------------------------------------------------- E3: the closed forms in f64
ONE, HALF, ZERO = F64(1.0), F64(0.5), F64(0.0)
SQRT2 = np.sqrt(F64(2.0))
K_TANH = np.sqrt(F64(2.0) / F64(np.pi))  # sqrt(2/pi): the f64 sqrt of the f64 quotient
C_DERF = F64(2.0) / np.sqrt(F64(np.pi))  # 2/sqrt(pi)
SQRT_2PI = np.sqrt(F64(2.0) * F64(np.pi))
C_GELU_T, C_GELU_S, C_LRELU = F64(0.044715), F64(1.702), F64(0.01)


def sig(x, L):
    return ONE / (L("exp", -x) + ONE)


def softplus(a, L):
    return L("log1p", L("exp", -np.abs(a))) + (a if a > 0 else ZERO)  # max(a, 0) (no NaN reaches it)


def _dsilu(a, s):
    return s * (ONE + a * (ONE - s))


def _dgelu_s(a, s):
    return s + C_GELU_S * a * s * (ONE - s)


CLOSED = {  # a: f64(u); al: f64(alpha); L: the library. Python evaluates left to right, as C does.
    "Identity": lambda a, al, L: a,
    "Copy": lambda a, al, L: a,
    "Square": lambda a, al, L: a * a,
    "Relu": lambda a, al, L: a if np.isnan(a) else (a if a > 0 else ZERO),
    "Lrelu": lambda a, al, L: a if np.isnan(a) else (a if a > 0 else C_LRELU * a),
    "Prelu": lambda a, al, L: a if a > 0 else al * a,
    "Sigmoid": lambda a, al, L: sig(a, L),
    "Tanh": lambda a, al, L: L("tanh", a),
    "Exp": lambda a, al, L: L("exp", a),
    "Ln": lambda a, al, L: L("log", a),
    "Erf": lambda a, al, L: L("erf", a),
    "Sin": lambda a, al, L: L("sin", a),
    "Arctan": lambda a, al, L: L("atan", a),
    "Softplus": lambda a, al, L: softplus(a, L),
    "Mish": lambda a, al, L: a * L("tanh", softplus(a, L)),
    "Gelu": lambda a, al, L: HALF * a * (ONE + L("erf", a / SQRT2)),
    "Gelu_apprx_tanh": lambda a, al, L: HALF * a * (ONE + L("tanh", K_TANH * (a + C_GELU_T * a * a * a))),
    "Gelu_apprx_sigmoid": lambda a, al, L: a * sig(C_GELU_S * a, L),
    "Silu": lambda a, al, L: a / (ONE + L("exp", -a)),
    "Sqrt": lambda a, al, L: np.sqrt(a),
    "Rsqrt": lambda a, al, L: ONE / np.sqrt(a),
    "Reciprocal": lambda a, al, L: ONE / a,
    "Abs_reciprocal_sqrt": lambda a, al, L: ONE / np.sqrt(np.abs(a)),
    "Sign": lambda a, al, L: F64(int(a > 0) - int(a < 0)),
    "Abs": lambda a, al, L: np.abs(a),
    "Derivative_Erf": lambda a, al, L: C_DERF * L("exp", (-a) * a),
    "Derivative_Gelu": lambda a, al, L: HALF * (ONE + L("erf", a / SQRT2)) + a * L("exp", (-a) * a / F64(2.0)) / SQRT_2PI,
    "Derivative_silu": lambda a, al, L: _dsilu(a, sig(a, L)),
    "Derivative_Gelu_apprx_sigmoid": lambda a, al, L: _dgelu_s(a, sig(C_GELU_S * a, L)),
}
FUNCS = list(CLOSED)

# A quiet NaN input (0x7FC00000) only where every NaN inside the closed form has one sign, so the
# result does not depend on which NaN operand an x86 instruction (or a compiler's operand order)
# keeps. Excluded: Softplus / Mish (max(NaN, 0)), Gelu_apprx_sigmoid, Silu and every Derivative_*
# (the +NaN argument meets the -NaN of exp(-a) or -a*a in one operation).
NAN_OK = {"Identity", "Copy", "Square", "Relu", "Lrelu", "Prelu", "Sigmoid", "Tanh", "Exp", "Ln", "Erf",
          "Sin", "Arctan", "Gelu", "Gelu_apprx_tanh", "Sqrt", "Rsqrt", "Reciprocal", "Abs_reciprocal_sqrt",
          "Sign", "Abs"}


# ---------------------------------------------------------------- item 6: the true function, fp32 correctly rounded
def _mp_sig(x):
    return 1 / (1 + mpmath.exp(-x))


TRUE = {
    "Identity": lambda u, al: u, "Copy": lambda u, al: u, "Square": lambda u, al: u * u,
    "Relu": lambda u, al: u if u > 0 else mpmath.mpf(0),
    "Lrelu": lambda u, al: u if u > 0 else mpmath.mpf("0.01") * u,
    "Prelu": lambda u, al: u if u > 0 else al * u,
    "Sigmoid": lambda u, al: _mp_sig(u), "Tanh": lambda u, al: mpmath.tanh(u), "Exp": lambda u, al: mpmath.exp(u),
    "Ln": lambda u, al: mpmath.log(u) if u > 0 else None, "Erf": lambda u, al: mpmath.erf(u),
    "Sin": lambda u, al: mpmath.sin(u), "Arctan": lambda u, al: mpmath.atan(u),
    "Softplus": lambda u, al: mpmath.log1p(mpmath.exp(u)),
    "Mish": lambda u, al: u * mpmath.tanh(mpmath.log1p(mpmath.exp(u))),
    "Gelu": lambda u, al: u / 2 * mpmath.erfc(-u / mpmath.sqrt(2)),
    "Gelu_apprx_tanh": lambda u, al: u / (1 + mpmath.exp(-2 * mpmath.sqrt(2 / mpmath.pi) * (u + mpmath.mpf("0.044715") * u ** 3))),
    "Gelu_apprx_sigmoid": lambda u, al: u * _mp_sig(mpmath.mpf("1.702") * u),
    "Silu": lambda u, al: u * _mp_sig(u),
    "Sqrt": lambda u, al: mpmath.sqrt(u) if u >= 0 else None,
    "Rsqrt": lambda u, al: 1 / mpmath.sqrt(u) if u > 0 else None,
    "Reciprocal": lambda u, al: 1 / u if u != 0 else None,
    "Abs_reciprocal_sqrt": lambda u, al: 1 / mpmath.sqrt(abs(u)) if u != 0 else None,
    "Sign": lambda u, al: mpmath.mpf(mpmath.sign(u)), "Abs": lambda u, al: abs(u),
    "Derivative_Erf": lambda u, al: 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-u * u),
    "Derivative_Gelu": lambda u, al: mpmath.erfc(-u / mpmath.sqrt(2)) / 2 + u * mpmath.exp(-u * u / 2) / mpmath.sqrt(2 * mpmath.pi),
    "Derivative_silu": lambda u, al: _mp_sig(u) * (1 + u * _mp_sig(-u)),
    "Derivative_Gelu_apprx_sigmoid": lambda u, al: (_mp_sig(mpmath.mpf("1.702") * u)
                                                    + mpmath.mpf("1.702") * u * _mp_sig(mpmath.mpf("1.702") * u) * _mp_sig(-mpmath.mpf("1.702") * u)),
}


def mp_to_f32(v):
    """An mpf -> the nearest fp32 (RNE, subnormals, overflow to Inf), without going through f64."""
    if v == 0:
        return F32(0.0)
    m, e = mpmath.frexp(v)  # v = m * 2^e, 0.5 <= |m| < 1
    q = max(int(e) - 1 - 23, -149)
    n = mpmath.ldexp(v, -q)
    fl = mpmath.floor(n)
    diff = n - fl
    if diff > 0.5 or (diff == 0.5 and int(fl) % 2 == 1):
        fl += 1
    r = mpmath.ldexp(fl, q)
    if abs(r) >= mpmath.mpf(2) ** 128:
        return F32(np.inf) if r > 0 else F32(-np.inf)
    return F32(float(r))


def true_f32(fn, u, al):
    """The correctly rounded fp32 of the true function at fp32 u (None: u or the value not finite)."""
    if not np.isfinite(u):
        return None
    with mpmath.workdps(100):
        v = TRUE[fn](mpmath.mpf(float(u)), mpmath.mpf(float(al)))
        if v is None:
            return None
        return mp_to_f32(v)


# ---------------------------------------------------------------- one element: result, stability, truth
_EV = {}


def evaluate(fn, u, al):
    """(fp32 result, stable, why-unstable, true fp32 or None) for fp32 u and alpha."""
    key = (fn, bits32(u), bits32(al))
    if key in _EV:
        return _EV[key]
    a, alf = F64(F32(u)), F64(F32(al))
    L0 = Lib()
    r0 = F32(CLOSED[fn](a, alf, L0))
    n = L0.k
    why = None
    for deltas in itertools.product((-1, 0, 1), repeat=n):
        if not any(deltas):
            continue
        L = Lib(deltas)
        r = F32(CLOSED[fn](a, alf, L))
        assert L.k == n
        if bits32(r) != bits32(r0):
            why = (deltas, r)
            break
    res = (r0, why is None, why, true_f32(fn, F32(u), F32(al)))
    _EV[key] = res
    return res


# ---------------------------------------------------------------- bookkeeping for the README
DROPPED = {fn: {} for fn in FUNCS}  # fn -> {u bits: (u, alpha, result, perturbed result, deltas)}
DIVERGE = {fn: {} for fn in FUNCS}  # fn -> {(u bits, alpha bits): (u, alpha, closed, true)}
NANS = {}  # (fn, u bits) -> result bits, for NaN inputs and NaN results


def affine(x, s, b):
    """E2: u = fp32(fp32(x * s) + b), two NumPy float32 roundings."""
    t = (np.asarray(x, F32) * np.asarray(s, F32)).astype(F32)
    return (t + np.asarray(b, F32)).astype(F32)


def accept(fn, u, al):
    """True if u's result is stable (records the drop otherwise)."""
    r0, ok, why, _ = evaluate(fn, u, al)
    if not ok:
        DROPPED[fn].setdefault(bits32(u), (F32(u), F32(al), r0, why[1], why[0]))
    return ok


# ---------------------------------------------------------------- samplers of u values
FULL = (-149, 128)  # log2 |u| range of the whole fp32 line (2^128 rounds to Inf)
RANGES = {  # fn: (log2|u| lo, hi, uniform lo, hi, signs)
    "Identity": (*FULL, -1e3, 1e3, "both"), "Copy": (*FULL, -1e3, 1e3, "both"),
    "Square": (-80, 70, -100, 100, "both"), "Relu": (*FULL, -10, 10, "both"),
    "Lrelu": (*FULL, -10, 10, "both"), "Prelu": (*FULL, -10, 10, "both"),
    "Sigmoid": (-30, 8, -25, 25, "both"), "Tanh": (-30, 6, -10, 10, "both"),
    "Exp": (-30, 7, -104, 89, "both"), "Ln": (*FULL, 0, 4, "pos"),
    "Erf": (-30, 3, -6, 6, "both"), "Sin": (-30, 40, -7, 7, "both"),
    "Arctan": (-30, 30, -4, 4, "both"), "Softplus": (-30, 7, -30, 30, "both"),
    "Mish": (-30, 7, -30, 30, "both"), "Gelu": (-30, 5, -12, 6, "both"),
    "Gelu_apprx_tanh": (-30, 5, -12, 6, "both"), "Gelu_apprx_sigmoid": (-30, 7, -30, 10, "both"),
    "Silu": (-30, 7, -40, 20, "both"), "Sqrt": (*FULL, 0, 100, "pos"), "Rsqrt": (*FULL, 0, 100, "pos"),
    "Reciprocal": (*FULL, -10, 10, "both"), "Abs_reciprocal_sqrt": (*FULL, -10, 10, "both"),
    "Sign": (*FULL, -2, 2, "both"), "Abs": (*FULL, -10, 10, "both"),
    "Derivative_Erf": (-30, 4, -10, 10, "both"), "Derivative_Gelu": (-30, 4, -12, 12, "both"),
    "Derivative_silu": (-30, 7, -40, 40, "both"), "Derivative_Gelu_apprx_sigmoid": (-30, 7, -30, 30, "both"),
}


def sample_u(fn, rng, n):
    """n target u values: half log-uniform magnitudes, half uniform over the function's interesting
    interval; both signs unless the function's domain is the positive line."""
    elo, ehi, lo, hi, signs = RANGES[fn]
    k = n // 2
    mag = np.exp2(rng.uniform(elo, ehi, k))
    sg = rng.choice([-1.0, 1.0], k) if signs == "both" else np.ones(k)
    uni = rng.uniform(lo, hi, n - k)
    out = np.concatenate([sg * mag, uni]).astype(F32)
    rng.shuffle(out)
    return out


def draw_row(fn, rng, f, s, b, al, dt="float32"):
    """f stored data values of dtype dt whose u = affine(x, s, b) gives stable results."""
    got = []
    while len(got) < f:
        u = sample_u(fn, rng, 2 * f)
        x = ((u.astype(F64) - F64(F32(b))) / F64(F32(s))).astype(F32)
        raw = encode(x, dt)
        xs = widen(raw, dt)
        us = affine(xs, s, b)
        for r, uu in zip(raw, us):
            if np.isnan(uu) or not accept(fn, uu, al):
                continue
            got.append(r)
            if len(got) == f:
                break
    return np.array(got, STORE[dt])


# ---------------------------------------------------------------- special values (E4)
MAXSUB = f32b(0x007FFFFF)
FMAX = np.finfo(F32).max
NAN = f32b(0x7FC00000)


def nbr(v, k=1):
    """v and its k fp32 neighbours on each side."""
    v = F32(v)
    out = [v]
    lo = hi = v
    for _ in range(k):
        lo, hi = np.nextafter(lo, F32(-np.inf)), np.nextafter(hi, F32(np.inf))
        out += [lo, hi]
    return out


def pm(vals):
    return [F32(v) for w in vals for v in (w, -F32(w))]


GENERIC = [F32(0.0), F32(-0.0), F32(np.inf), F32(-np.inf)] + pm(
    [2.0 ** -149, MAXSUB, 2.0 ** -126, 1, 0.5, 2, 3, 0.1, 10, 100, 2.0 ** -20, 2.0 ** 20, FMAX])
PI32, HALFPI32 = F32(np.pi), F32(np.pi / 2)
EDGES = {  # engines.md 2.4 valid-range edges and each function's own thresholds
    "Ln": nbr(2.0 ** -64) + nbr(2.0 ** 64) + nbr(1.0, 2) + [F32(np.e), F32(-1.0), F32(-2.0 ** -149)],
    "Sin": pm(nbr(PI32) + nbr(HALFPI32) + [2.0 ** 24, 1e6, 1e20, 2.0 ** 100, 710.0]),
    "Arctan": pm(nbr(HALFPI32) + [2.0 ** 30, 2.0 ** 60, 1e-10]),
    "Sqrt": nbr(2.0 ** -116) + nbr(2.0 ** 118) + [F32(-1.0), F32(4.0), F32(2.0)],
    "Rsqrt": nbr(2.0 ** -87) + nbr(2.0 ** 97) + [F32(-1.0), F32(4.0)],
    "Reciprocal": pm(nbr(2.0 ** -42) + nbr(2.0 ** 42) + [2.0 ** 126, 2.0 ** 127, 3.0]),
    "Abs_reciprocal_sqrt": pm(nbr(2.0 ** -87) + nbr(2.0 ** 97) + [4.0]),
    "Exp": pm(nbr(88.72283935546875, 2) + nbr(-87.33654475, 1) + nbr(-103.278929903, 1) + nbr(-103.972077084, 1)),
    "Sigmoid": pm(nbr(16.635532, 1) + nbr(17.3286795, 1) + [88.72284, 103.97208, 1e30]),
    "Tanh": pm(nbr(9.010913, 2) + [2.0 ** -12, 20.0, 1e30]),
    "Erf": pm(nbr(3.9, 1) + [4.0, 6.0, 1e30, 2.0 ** -30]),
    "Softplus": pm([88.72284, 103.97208, 16.635532, 1e30, 40.0]),
    "Mish": pm([88.72284, 103.97208, 16.635532, 1e30, 40.0, 20.0]),
    "Gelu": pm([5.0, 10.0, 20.0, 40.0, 1e5, 1e30]),
    "Gelu_apprx_tanh": pm([5.0, 10.0, 20.0, 40.0, 1e5, 1e13, 1e30]),
    "Gelu_apprx_sigmoid": pm([5.0, 10.0, 40.0, 60.0, 1e5, 1e30]),
    "Silu": pm([88.72284, 103.97208, 16.635532, 40.0, 1e30]),
    "Square": pm(nbr(1.8446743e19, 1) + [2.0 ** -75, 2.0 ** -74.5, 2.0 ** -76]),
    "Derivative_Erf": pm([3.0, 6.0, 9.0, 10.5, 1e30]),
    "Derivative_Gelu": pm([3.0, 6.0, 9.0, 14.0, 1e30]),
    "Derivative_silu": pm([16.635532, 40.0, 88.72284, 1e30]),
    "Derivative_Gelu_apprx_sigmoid": pm([10.0, 40.0, 60.0, 1e30]),
}


def specials(fn):
    vals = list(GENERIC) + list(EDGES.get(fn, []))
    if fn in NAN_OK:
        vals.append(NAN)
    seen, out = set(), []
    for v in vals:
        b = bits32(v)
        if b not in seen:
            seen.add(b)
            out.append(F32(v))
    return out


# ---------------------------------------------------------------- programs
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Activation": "Activation"}
    DEFAULT_ENGINE = "Activation"

    def __init__(self):
        super().__init__()
        self.nact = 0

    def operand(self, name, spec, p):
        """spec ('imm', v) or ('ap', [p] values) -> (JSON operand, [p] fp32 values)."""
        kind, v = spec
        if kind == "imm":
            return imm(float(F32(v))), np.full(p, F32(v), F32)
        v = np.asarray(v, F32).reshape(p, 1)
        t = self.tile_in(name, "float32", v)
        return tile(t, "float32", p, 1), v.reshape(p)

    def activation(self, fn, data_dt, raw, ops=(), keys=None, dst_dt="float32", out=None, save=True):
        """Data [P, F] (stored dtype) loaded into SB; Activation(fn) with operands `ops` (scale, bias,
        alpha specs, trailing ones omitted) and JSON keys `keys`; dst SB tile saved to external output
        `out`. Returns the expected stored dst array; asserts every element is stable."""
        keys = dict(keys or {})
        k = self.nact
        self.nact += 1
        raw = np.ascontiguousarray(raw, STORE[data_dt])
        P, F = raw.shape
        dname = self.tile_in(f"data{k}", data_dt, raw)
        ins = [tile(dname, data_dt, P, F)]
        vals = []
        for j, spec in enumerate(ops):
            op, v = self.operand(f"{('scale', 'bias', 'alpha')[j]}{k}", spec, P)
            ins.append(op)
            vals.append(v)
        scale = vals[0] if len(vals) > 0 else np.full(P, F32(keys.get("scale", 1.0)), F32)
        bias = vals[1] if len(vals) > 1 else np.zeros(P, F32)  # a missing bias is +0.0
        alpha = vals[2] if len(vals) > 2 else np.full(P, F32(keys.get("alpha", 0.0)), F32)
        x = widen(raw, data_dt)
        u = affine(x, scale[:, None], bias[:, None])
        res = np.zeros((P, F), F32)
        for i in range(P):
            for j in range(F):
                r0, ok, why, tv = evaluate(fn, u[i, j], alpha[i])
                assert ok, (fn, u[i, j], why)
                res[i, j] = r0
                if np.isnan(u[i, j]) or np.isnan(r0):
                    NANS[(fn, bits32(u[i, j]))] = bits32(r0)
                if tv is not None and not (np.isnan(r0) and np.isnan(tv)) and r0 != tv:
                    DIVERGE[fn].setdefault((bits32(u[i, j]), bits32(alpha[i])), (u[i, j], alpha[i], r0, tv))
        if dst_dt == "bfloat16":
            assert not np.isnan(res).any(), "no NaN reaches a bf16 dst (refsim's bf16 NaN encoding is N3's)"
        expected = encode(res, dst_dt)
        dst = f"dst{k}"
        self.sb(dst, dst_dt, P, F)
        self.inst("Activation", ins, [tile(dst, dst_dt, P, F)], func=fn, **keys)
        if save:
            self.save(dst, out or f"out{k}", dst_dt, P, F, expected)
        return expected


CASES = {}


def case(name, g, note, choices, fault=None):
    assert name not in CASES, name
    CASES[name] = (g, note, tuple(choices), fault)


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def pad_tile(fn, vals, P, F, rng, s, b, al):
    """P x F fp32 data: the stable ones of `vals` (u = x with the identity affine) first, then stable
    random values."""
    keep = [v for v in vals if accept(fn, affine(v, s, b)[()], al)]
    assert len(keep) <= P * F, (fn, len(keep))
    rest = draw_row(fn, rng, P * F - len(keep), s, b, al) if len(keep) < P * F else np.zeros(0, F32)
    return np.concatenate([np.array(keep, F32), rest]).reshape(P, F)


# ---------------------------------------------------------------- per-function cases
SHAPES = [(128, 8), (16, 64), (4, 256), (32, 32), (8, 128), (64, 16)]
FULL_RANGE = {"Identity", "Copy", "Relu", "Lrelu", "Prelu", "Reciprocal", "Abs_reciprocal_sqrt", "Sign", "Abs"}
POS = {"Ln", "Sqrt", "Rsqrt"}


def fn_affine(fn, i):
    """The scale / bias immediates of function fn's random instruction."""
    if fn in POS:
        return (0.75, 0.0) if i % 2 else (1.5, 0.0)
    if fn in FULL_RANGE or fn == "Square":
        return (-1.5, 0.0) if i % 2 else (0.75, -0.0)
    return [(1.25, -0.375), (0.5, 0.25), (-0.75, 0.125), (2.0, -0.5)][i % 4]


for i, fn in enumerate(FUNCS):
    name = f"fn_{fn}"
    rng = rng_for(name)
    g = Prog()
    al = F32(0.25) if fn == "Prelu" else F32(0.0)
    sp = specials(fn)
    F = 16 if len(sp) <= 64 else 32
    data = pad_tile(fn, sp, 4, F, rng, F32(1.0), F32(-0.0), al)
    keys = {"scale": 1.0, "alpha": float(al)}
    # specials: scale imm 1.0 and bias imm -0.0 (u = x exactly, -0 kept); alpha from the key
    g.activation(fn, "float32", data, [("imm", 1.0), ("imm", -0.0)], keys, out="specials")
    s, b = fn_affine(fn, i)
    P, F2 = SHAPES[i % len(SHAPES)]
    ops = [("imm", s), ("imm", b)]
    keys2 = {"scale": 1.0, "alpha": 0.0}
    al2 = F32(0.0)
    if fn == "Prelu":
        al2 = F32(-0.375)
        ops.append(("imm", al2))
    rows = np.stack([draw_row(fn, rng, F2, F32(s), F32(b), al2) for _ in range(P)])
    g.activation(fn, "float32", rows, ops, keys2, out="random")
    n_sp = sum(1 for v in sp if bits32(v) in {bits32(w) for w in data.reshape(-1)})
    case(name, g, f"{fn}: {n_sp} special values / range edges (scale imm 1.0, bias imm -0.0, u = x) padded to "
         f"[4, {F}] with stable random values; then [{P}, {F2}] random values, scale imm {s}, bias imm {b}"
         + (f", alpha imm {float(al2)} (specials: alpha key 0.25)" if fn == "Prelu" else ""),
         ("E1", "E2", "E3", "E4"))


# ---------------------------------------------------------------- operands as [P, 1] APs (E1)
def ap_case(name, fn, P, F, scale_ap, bias_ap, note, s_imm=1.0, b_imm=0.0):
    rng = rng_for(name)
    g = Prog()
    s = (np.exp2(rng.uniform(-3, 3, P)) * rng.choice([-1, 1], P)).astype(F32) if scale_ap else np.full(P, F32(s_imm))
    b = rng.uniform(-2, 2, P).astype(F32) if bias_ap else np.full(P, F32(b_imm))
    if bias_ap:
        b[0], b[1] = F32(-0.0), F32(0.0)
    rows = np.stack([draw_row(fn, rng, F, s[p], b[p], F32(0.0)) for p in range(P)])
    ops = [("ap", s) if scale_ap else ("imm", s_imm), ("ap", b) if bias_ap else ("imm", b_imm)]
    g.activation(fn, "float32", rows, ops, {"scale": 1.0, "alpha": 0.0})
    case(name, g, note, ("E1", "E2", "E3"))


ap_case("operands_scale_ap_bias_ap_Gelu", "Gelu", 64, 32, True, True,
        "Gelu, scale and bias both [64, 1] fp32 APs (one value per partition, both signs; bias -0.0 / +0.0 on partitions 0 / 1)")
ap_case("operands_scale_ap_bias_ap_Exp", "Exp", 128, 16, True, True, "Exp, scale and bias [128, 1] APs")
ap_case("operands_scale_ap_bias_imm_Sigmoid", "Sigmoid", 32, 64, True, False,
        "Sigmoid, scale a [32, 1] AP, bias imm 0.5", b_imm=0.5)
ap_case("operands_scale_imm_bias_ap_Tanh", "Tanh", 16, 128, False, True,
        "Tanh, scale imm -0.625, bias a [16, 1] AP", s_imm=-0.625)

# ---------------------------------------------------------------- Prelu's alpha (E1)
name = "prelu_alpha_ap_operand"
rng = rng_for(name)
g = Prog()
P, F = 32, 32
s = rng.uniform(0.5, 2, P).astype(F32)
b = rng.uniform(-1, 1, P).astype(F32)
alph = np.concatenate([[0.0, -0.0, -1.0, 1.0], rng.uniform(-3, 3, P - 4)]).astype(F32)
rows = np.stack([draw_row("Prelu", rng, F, s[p], b[p], alph[p]) for p in range(P)])
g.activation("Prelu", "float32", rows, [("ap", s), ("ap", b), ("ap", alph)], {"scale": 1.0, "alpha": 0.5})
case(name, g, "Prelu with scale, bias and alpha all [32, 1] APs (alpha 0, -0, -1, 1, random per partition); "
     "the alpha key 0.5 loses to the operand", ("E1", "E2", "E3"))

name = "prelu_alpha_key"
rng = rng_for(name)
g = Prog()
data = pad_tile("Prelu", specials("Prelu"), 8, 16, rng, F32(1.0), F32(-0.0), F32(-0.2))
g.activation("Prelu", "float32", data, [("imm", 1.0), ("imm", -0.0)], {"scale": 1.0, "alpha": -0.2})
case(name, g, "Prelu, alpha only as the JSON key (-0.2; no alpha operand); special values", ("E1", "E2", "E3", "E4"))

name = "prelu_alpha_default_zero"
rng = rng_for(name)
g = Prog()
data = pad_tile("Prelu", specials("Prelu"), 8, 16, rng, F32(1.0), F32(0.0), F32(0.0))
g.activation("Prelu", "float32", data, [], {})
case(name, g, "Prelu with no operands and no keys: scale 1.0, bias +0.0, alpha 0.0 (negatives give -0.0, "
     "-Inf gives 0 * -Inf = NaN 0xFFC00000, -0 data becomes +0 through the +0.0 bias)", ("E1", "E2", "E3", "E4"))

# ---------------------------------------------------------------- key versus operand, defaults (E1)
name = "key_vs_operand"
rng = rng_for(name)
g = Prog()
rows = np.stack([draw_row("Tanh", rng, 64, F32(0.5), F32(0.0), F32(0.0)) for _ in range(8)])
g.activation("Tanh", "float32", rows, [("imm", 0.5)], {"scale": 3.0, "alpha": 0.0})
s = rng.uniform(0.25, 4, 8).astype(F32)
rows = np.stack([draw_row("Exp", rng, 64, s[p], F32(0.0), F32(0.0)) for p in range(8)])
g.activation("Exp", "float32", rows, [("ap", s)], {"scale": -2.0})
rows = np.stack([draw_row("Prelu", rng, 64, F32(1.0), F32(0.0), F32(-1.5)) for _ in range(8)])
g.activation("Prelu", "float32", rows, [("imm", 1.0), ("imm", 0.0), ("imm", -1.5)], {"scale": 2.0, "alpha": 0.75})
case(name, g, "the operand beats the key: Tanh with key scale 3.0 and scale imm 0.5; Exp with key scale -2.0 and "
     "a [8, 1] scale AP (no bias operand: +0.0); Prelu with keys scale 2.0 / alpha 0.75 and operands 1.0 / 0.0 / -1.5",
     ("E1", "E2", "E3"))

name = "defaults_no_operands"
rng = rng_for(name)
g = Prog()
sp = [v for v in GENERIC if not np.isnan(v)]
for fn in ("Identity", "Lrelu", "Sin"):
    data = pad_tile(fn, sp, 4, 16, rng, F32(1.0), F32(0.0), F32(0.0))
    g.activation(fn, "float32", data, [], {})
case(name, g, "Identity, Lrelu, Sin with ins = [data] and no scale / alpha keys: scale 1.0, bias +0.0, so -0 data "
     "gives u = -0 + +0 = +0 (Lrelu(-0) and Sin(-0) are +0 here, -0 in fn_*)", ("E1", "E2", "E3", "E4"))

name = "scale_key_only"
rng = rng_for(name)
g = Prog()
rows = np.stack([draw_row("Exp", rng, 64, F32(-0.5), F32(0.0), F32(0.0)) for _ in range(16)])
g.activation("Exp", "float32", rows, [], {"scale": -0.5, "alpha": 0.0})
case(name, g, "Exp with ins = [data] and the key scale -0.5: u = fp32(x * -0.5) + 0.0", ("E1", "E2", "E3"))

name = "load_act_func_set_then_Exp"
rng = rng_for(name)
g = Prog()
g.inst("LoadActFuncSet", [], [], engine="Activation", act_func_set_id=3)
rows = np.stack([draw_row("Exp", rng, 64, F32(1.0), F32(0.0), F32(0.0)) for _ in range(4)])
g.activation("Exp", "float32", rows, [], {})
case(name, g, "LoadActFuncSet (6) first: it selects the hardware's table set and changes no value (engines.md "
     "2.5: a no-op gate in the reference simulator); then Exp with ins = [data]", ("E1", "E2", "E3"))

# ---------------------------------------------------------------- the affine step (E2)
name = "affine_two_roundings_no_fma"
rng = rng_for(name)
g = Prog()
one_u = F32(1 + 2.0 ** -23)
s = np.array([one_u, 2.0 ** -10, 2.0 ** 100, -1.0], F32)
b = np.array([-(1 + 2.0 ** -22), 0.0, -1.0, -0.0], F32)
hand = [[one_u, F32(1.0), F32(1 + 2.0 ** -22)],
        [F32(2.0 ** -120), F32(3 * 2.0 ** -140), F32(2.0 ** -139), F32(-5 * 2.0 ** -140)],
        [F32(2.0 ** 30), F32(2.0 ** 27), F32(-(2.0 ** 29))],
        [F32(0.0), F32(-0.0), F32(2.0 ** -149), F32(np.inf)]]
rows = []
for p in range(4):
    rest = draw_row("Identity", rng, 16 - len(hand[p]), s[p], b[p], F32(0.0))
    rows.append(np.concatenate([np.array(hand[p], F32), rest]))
rows = np.stack(rows)
exp_u = affine(rows, s[:, None], b[:, None])
assert bits32(exp_u[0, 0]) == 0  # (1+2^-23)^2 -> 1+2^-22, + -(1+2^-22) = +0 (an FMA gives 2^-46)
assert bits32(exp_u[1, 1]) == bits32(F32(2.0 ** -148))  # 1.5 * 2^-149 ties to even: 2^-148, no FTZ
g.activation("Identity", "float32", rows, [("ap", s), ("ap", b)], {"scale": 1.0, "alpha": 0.0})
case(name, g, "Identity through the affine step, scale / bias [4, 1] APs: (1+2^-23)*(1+2^-23) rounds to 1+2^-22 "
     "before the bias -(1+2^-22) is added (+0; an FMA gives 2^-46); scale 2^-10 into fp32 subnormals (RNE, no "
     "flush: 3*2^-150 -> 2^-148); scale 2^100 overflows to Inf; scale -1, bias -0.0 keeps -0 for +0 data",
     ("E1", "E2", "E3", "E4"))

# ---------------------------------------------------------------- data and dst dtypes (E1, E2)
name = "dtype_bfloat16_data_Gelu"
rng = rng_for(name)
g = Prog()
P, F = 32, 64
s, b = F32(1.0), F32(-0.0)
cand = np.concatenate([np.array(specials("Gelu"), F32), sample_u("Gelu", rng, 4 * P * F)])
raw = encode(cand, "bfloat16")
raw[: len(specials("Gelu"))][np.isnan(cand[: len(specials("Gelu"))])] = 0x7FC0
keep = [r for r, x in zip(raw, widen(raw, "bfloat16")) if accept("Gelu", affine(x, s, b)[()], F32(0.0))]
data = np.array(keep[: P * F], np.uint16).reshape(P, F)
g.activation("Gelu", "bfloat16", data, [("imm", 1.0), ("imm", -0.0)], {"scale": 1.0, "alpha": 0.0})
case(name, g, "Gelu on bfloat16 data (special values incl. NaN 0x7FC0 -> 0x7FC00000, then random bf16), widened "
     "exactly to fp32; fp32 dst", ("E1", "E2", "E3", "E4"))

name = "dtype_float16_data_Silu"
rng = rng_for(name)
g = Prog()
P, F = 16, 32
codes = np.concatenate([np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00],
                                 np.uint16), rng.integers(0, 0x10000, 4 * P * F).astype(np.uint16)])
vals = codes.view(np.float16)
codes = codes[~np.isnan(vals)]
s, b = F32(0.75), F32(-0.25)
keep = [c for c in codes if accept("Silu", affine(widen(np.uint16(c).view(np.float16), "float16"), s, b)[()], F32(0.0))]
data = np.array(keep[: P * F], np.uint16).view(np.float16).reshape(P, F)
g.activation("Silu", "float16", data, [("imm", 0.75), ("imm", -0.25)], {"scale": 1.0, "alpha": 0.0})
case(name, g, "Silu on float16 data (zeros, subnormals, max, Inf, random codes; no NaN), scale 0.75, bias -0.25",
     ("E1", "E2", "E3", "E4"))


def fp8_case(name, dt, fn, s, b, note):
    g = Prog()
    codes = np.arange(256, dtype=np.uint8)
    vals = widen(codes, dt)
    codes = codes[~np.isnan(vals)]
    keep = [c for c in codes if accept(fn, affine(widen(np.uint8(c), dt), F32(s), F32(b))[()], F32(0.0))]
    data = np.resize(np.array(keep, np.uint8), 256).reshape(4, 64)
    g.activation(fn, dt, data, [("imm", s), ("imm", b)], {"scale": 1.0, "alpha": 0.0})
    case(name, g, note + f" ({len(keep)} stable codes, repeated to fill [4, 64])", ("E1", "E2", "E3", "E4"))


fp8_case("dtype_float8e4_data_Sigmoid", "float8e4", "Sigmoid", 1.0, -0.0,
         "Sigmoid on every non-NaN float8e4 (legacy E4M3, max 240, Inf) code, scale 1.0, bias -0.0")
fp8_case("dtype_float8e5_data_Tanh", "float8e5", "Tanh", 0.0625, 0.125,
         "Tanh on every non-NaN float8e5 (E5M2) code, scale 0.0625, bias 0.125")
fp8_case("dtype_float8e4_data_Exp", "float8e4", "Exp", -0.5, 1.0,
         "Exp on every non-NaN float8e4 code, scale -0.5, bias 1.0")


def dst_case(name, fn, data_dt, P, F, s, b, note):
    rng = rng_for(name)
    g = Prog()
    rows = []
    for _ in range(P):
        row = draw_row(fn, rng, 4 * F, F32(s), F32(b), F32(0.0), data_dt)
        res = [evaluate(fn, affine(widen(r, data_dt), F32(s), F32(b))[()], F32(0.0))[0] for r in row]
        ok = [r for r, y in zip(row, res) if not np.isnan(y)]
        rows.append(np.array(ok[:F], STORE[data_dt]))
    g.activation(fn, data_dt, np.stack(rows), [("imm", s), ("imm", b)], {"scale": 1.0, "alpha": 0.0}, dst_dt="bfloat16")
    case(name, g, note, ("E1", "E2", "E3"))


dst_case("dst_bfloat16_Exp", "Exp", "float32", 32, 64, 1.0, 0.0,
         "Exp of fp32 data into a bfloat16 dst: fp32 result, then RNE to bf16 (overflow to Inf kept)")
dst_case("dst_bfloat16_Gelu_apprx_tanh", "Gelu_apprx_tanh", "float32", 16, 128, 0.5, -0.125,
         "Gelu_apprx_tanh into a bfloat16 dst, scale 0.5, bias -0.125")
dst_case("dtype_bfloat16_in_out_Sigmoid", "Sigmoid", "bfloat16", 64, 32, 1.5, 0.0,
         "Sigmoid, bfloat16 data and bfloat16 dst, scale 1.5, bias 0.0")

# ---------------------------------------------------------------- AWS activation test (re-expressed from engines.md 3 #2)
name = "aws_activation_exp_128x512"
rng = rng_for(name)
g = Prog()
data = rng.random((128, 512)).astype(F32)
assert all(accept("Exp", v, F32(0.0)) for v in np.unique(data))
g.activation("Exp", "float32", data, [], {"scale": 1.0, "alpha": 0.0})
case(name, g, "after AWS test_nki_isa_activation (engines.md 3 #2, 'activation exp'): Exp of a [128, 512] fp32 tile "
     "of np.random.random_sample values, no scale / bias operands", ("E1", "E2", "E3"))

name = "aws_activation_square_2b_plus_c_bf16"
rng = rng_for(name)
g = Prog()
bdat = rng.random((128, 512)).astype(F32)
cdat = rng.random(128).astype(F32)
g.activation("Square", "float32", bdat, [("imm", 2.0), ("ap", cdat)], {"scale": 2.0, "alpha": 0.0}, dst_dt="bfloat16")
case(name, g, "after AWS test_nki_isa_activation (engines.md 3 #2, 'square(2b+c) with a bias tile and bf16 out'): "
     "Square with scale imm 2.0, bias c a [128, 1] AP, bf16 dst", ("E1", "E2", "E3"))

# ---------------------------------------------------------------- faults (E3)
for fn in ("Is_finite", "Unknown"):
    name = f"fault_{fn}"
    rng = rng_for(name)
    g = Prog()
    rows = np.stack([draw_row("Identity", rng, 32, F32(1.0), F32(0.0), F32(0.0)) for _ in range(8)])
    g.activation("Identity", "float32", rows, [], {"scale": 1.0, "alpha": 0.0}, out="early")
    k = g.nact
    g.nact += 1
    d = g.tile_in(f"data{k}", "float32", rows)
    g.sb(f"dst{k}", "float32", 8, 32)
    g.inst("Activation", [tile(d, "float32", 8, 32)], [tile(f"dst{k}", "float32", 8, 32)], func=fn,
           scale=1.0, alpha=0.0)
    g._dram_out("late", "float32", (8, 32))
    g.inst("Save", [tile(f"dst{k}", "float32", 8, 32)], [tile("late", "float32", 8, 32)])
    case(name, g, f"Activation func {fn}: the run faults at the second Activation (not in the function table, "
         "engines.md 2.3: 'Unsupported activation function'); the earlier Identity's Save ('early') is intact, "
         "'late' is never written", ("E3",), fault="fault unsupported-op |")


# ---------------------------------------------------------------- writing
def hexf(v):
    return f"0x{bits32(v):08X} ({float(v):.9g})"


def report():
    """The README's generated section."""
    L = ["<!-- BEGIN GENERATED by make_cases.py: do not edit by hand -->", ""]
    L.append(f"### Cases ({len(CASES)})")
    L.append("| case | what |")
    L.append("|---|---|")
    for n, (g, note, ch, fault) in CASES.items():
        L.append(f"| `{n}` | {note.replace('|', '/')} |")
    L += ["", "### Inputs excluded as unstable (item 5)",
          "Each row: u (the fp32 argument after the affine step) whose fp32 result changes when the library "
          "results move by one f64 ulp; `deltas` = the ulp moves of the calls in evaluation order, the first "
          "combination found that changes the result.", "",
          "| function | dropped | examples: u -> result / perturbed result (deltas) |", "|---|---|---|"]
    tot = 0
    for fn in FUNCS:
        d = DROPPED[fn]
        tot += len(d)
        ex = sorted(d.values(), key=lambda t: float(t[0]))
        pick = ex if len(ex) <= 6 else [ex[k * (len(ex) - 1) // 5] for k in range(6)]
        exs = "; ".join(f"{hexf(u)} -> {hexf(r)} / {hexf(p)} {tuple(dl)}" for u, al, r, p, dl in pick)
        L.append(f"| {fn} | {len(d)} | {exs or '-'} |")
    L.append(f"\nTotal distinct dropped inputs: {tot}.")
    L += ["", "### Closed form versus the correctly rounded true value (item 6)",
          "Accepted (finite) inputs whose E2/E3 fp32 result differs from the true function value rounded once "
          "to fp32 (mpmath, 100 digits). Full list: `divergences.txt`.", "",
          "| function | inputs | examples: u -> closed form / correctly rounded |", "|---|---|---|"]
    full = []
    for fn in FUNCS:
        d = DIVERGE[fn]
        ex = sorted(d.values(), key=lambda t: (float(t[0]), float(t[1])))
        for u, al, r, t in ex:
            full.append(f"{fn}\tu={hexf(u)}\talpha={hexf(al)}\tclosed={hexf(r)}\ttrue={hexf(t)}")
        pick = ex if len(ex) <= 5 else [ex[k * (len(ex) - 1) // 4] for k in range(5)]
        exs = "; ".join(f"{hexf(u)} -> {hexf(r)} / {hexf(t)}" for u, al, r, t in pick)
        L.append(f"| {fn} | {len(d)} | {exs or '-'} |")
    L += ["", "### NaN inputs and NaN results in the cases",
          "Inputs 0x7FC00000 (quiet NaN) and every input whose expected result is a NaN (all from NumPy float64 "
          "arithmetic on x86: a NaN operand keeps its sign, an invalid operation gives the default NaN "
          "0xFFF8000000000000 -> fp32 0xFFC00000).", "", "| function | u -> result bits |", "|---|---|"]
    for fn in FUNCS:
        items = sorted((u, r) for (f, u), r in NANS.items() if f == fn)
        if items:
            L.append(f"| {fn} | " + "; ".join(f"{hexf(f32b(u))} -> 0x{r:08X}" for u, r in items) + " |")
    L += ["", "<!-- END GENERATED -->"]
    return "\n".join(L), "\n".join(full) + "\n"


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, choices, fault) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes / mpmath, the E1-E5 spec), never from birsim"]
        lines += [f"choice: {c}" for c in sorted(set(choices))]
        lines.append(f"profile: {g.profile}")
        if fault:
            lines.append(fault)
        birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    gen, full = report()
    readme = os.path.join(HERE, "README.md")
    text = open(readme).read() if os.path.exists(readme) else ""
    pat = re.compile(r"<!-- BEGIN GENERATED.*?<!-- END GENERATED -->", re.S)
    text = pat.sub(lambda m: gen, text) if pat.search(text) else text + "\n" + gen + "\n"
    with open(readme, "w") as f:
        f.write(text)
    with open(os.path.join(HERE, "divergences.txt"), "w") as f:
        f.write(full)
    check()
    print(f"{len(CASES)} cases")


def check():
    """Every folder: valid JSON, case.expect, its input / output files present."""
    for name in CASES:
        d = os.path.join(HERE, name)
        with open(os.path.join(d, "case.json")) as f:
            json.load(f)
        lines = open(os.path.join(d, "case.expect")).read().splitlines()
        ins = [l for l in lines if l.startswith("input ")]
        outs = [l for l in lines if l.startswith("output ")]
        assert ins and outs, name
        for l in ins + outs:
            assert os.path.exists(os.path.join(d, l.split("=")[1].strip())), (name, l)


write_all()
