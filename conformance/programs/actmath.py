"""The numerics both ScalarE oracles share (conformance/programs/activation and accumulate make_cases.py):
the stored dtypes (fp32 and the narrow formats through ml_dtypes), fp32 bit helpers, and the
library calls of the closed forms correctly rounded to f64 with mpmath (`cr`), with `Lib`, the
perturbed calls the activation generator uses to find results that depend on the last f64 bit.

Not a script: each generator puts conformance/programs on sys.path and imports it.
"""
import mpmath
import ml_dtypes as md
import numpy as np
from mpmath.libmp import to_float

F32, F64 = np.float32, np.float64

# ---------------------------------------------------------------- dtypes
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "float8e4": np.uint8,
         "float8e5": np.uint8}
SIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "float8e4": 1, "float8e5": 1}
# float8e4 = legacy IEEE-style E4M3 (max 240, has Inf), float8e5 = E5M2, as the matmult suite reads them
ML = {"bfloat16": md.bfloat16, "float8e4": md.float8_e4m3, "float8e5": md.float8_e5m2}


def bits32(v):
    return int(np.asarray(v, F32).view(np.uint32))


def f32b(u):
    """fp32 scalar from its bit pattern."""
    return np.array(u, np.uint32).view(F32)[()]


def encode(x, dt):
    """fp32 values -> stored raw array of dtype dt (RNE)."""
    x = np.asarray(x, F32)
    if dt in ML:
        return x.astype(ML[dt]).view(STORE[dt])
    return x.astype(STORE[dt])


def widen(raw, dt):
    """Stored values -> fp32 (exact, as ml_dtypes / NumPy widen)."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    return raw.astype(F32)


# ---------------------------------------------------------------- correctly rounded f64 library calls
MPFN = {"exp": mpmath.exp, "log": mpmath.log, "log1p": mpmath.log1p, "tanh": mpmath.tanh,
        "erf": mpmath.erf, "sin": mpmath.sin, "atan": mpmath.atan}
_CR = {}


def _special(name, x):
    """Arguments whose result is fixed by IEEE / C99 Annex F (exact: never perturbed), or None.
    NaN arguments return themselves (sign and payload kept, as libm returns x, x + x or x - x);
    domain errors return NumPy's float64 result (the x86 default NaN 0xFFF8000000000000)."""
    if np.isnan(x):
        return x
    if x == 0:
        return {"exp": F64(1.0), "log": F64(-np.inf)}.get(name, x)  # odd functions and log1p keep +-0
    if np.isinf(x):
        pos = x > 0
        if name == "atan":
            return None  # +-pi/2 rounded: the mpmath path
        return {"exp": F64(np.inf) if pos else F64(0.0),
                "log": F64(np.inf) if pos else np.log(x),
                "log1p": F64(np.inf) if pos else np.log1p(x),
                "tanh": F64(1.0) if pos else F64(-1.0),
                "erf": F64(1.0) if pos else F64(-1.0),
                "sin": np.sin(x)}[name]
    if name == "log" and x < 0:
        return np.log(x)
    if name == "log1p" and x <= -1:
        return np.log1p(x)
    return None


def cr(name, x):
    """The correctly rounded f64 value of library function `name` at f64 x: (y, exact, sign of the
    true value). mpmath at 128, 192, 320, ... bits until two precisions give the same double (rounded
    to nearest by mpmath's to_float(rnd='n')). `exact`: the true value is a double (within 2^-prec)."""
    x = F64(x)
    key = (name, int(x.view(np.uint64)))
    if key in _CR:
        return _CR[key]
    s = _special(name, x)
    if s is not None:
        res = (F64(s), True, 0)
    else:
        prev = None
        for prec in (128, 192, 320, 640, 1280, 2560):
            with mpmath.workprec(prec):
                v = MPFN[name](mpmath.mpf(float(x)))
                y = to_float(v._mpf_, rnd="n")
                exact = bool(np.isfinite(y) and v == mpmath.mpf(y))
                sgn = int(mpmath.sign(v))
            if prev is not None and y == prev:
                break
            prev = y
        else:
            raise AssertionError((name, x))
        res = (F64(y), exact, sgn)
    _CR[key] = res
    return res


class Lib:
    """The library calls of one closed-form evaluation: call k's correctly rounded result moved by
    deltas[k] f64 ulp (np.nextafter), except exact results, NaNs, and a move that would give the
    result the opposite sign of the true value (a libm never returns a negative exp)."""

    def __init__(self, deltas=()):
        self.d, self.k = deltas, 0

    def __call__(self, name, x):
        y, exact, sgn = cr(name, x)
        d = self.d[self.k] if self.k < len(self.d) else 0
        self.k += 1
        if d == 0 or exact or np.isnan(y):
            return y
        z = np.nextafter(y, F64(np.inf) if d > 0 else F64(-np.inf))
        if (z > 0 and sgn < 0) or (z < 0 and sgn > 0):
            return y
        return z
