#!/usr/bin/env python3
"""Writes the `programs/elementwise` conformance suite: BIR JSON programs, .npy inputs and the
expected .npy outputs, computed here with NumPy / ml_dtypes (pinned in oracle/requirements.txt)
from the semantics the seed and docs/fidelity.md state, independently of birsim:

  * elementwise math in float32 (IEEE, correctly rounded, as NumPy float32 arrays compute it);
  * sequential folds written as explicit loops (NumPy's own reductions are pairwise);
  * refsim narrowing: fp8 saturates, NaN canonical with the sign dropped (fidelity N2-N4);
  * the ASSUMED choices (comparisons write 1.0/0.0, max/min NaN rule, int32 saturating ALU,
    Pool's 4-lane average) stated as NumPy formulas below. Each case whose expected values depend
    on one of them gets `choice: ID` lines naming the docs/fidelity.md entries (`choices_of`).

The TensorScalarPtr integer-path / scan / scalar-tensor-tensor / apply_transpose / acc cases
(`tsp_i32_*`, `tsp_i64_*`, `tsp_f32_*`, `fault_tsp_*`) live in tspint_cases.py, written from the
`tspint` decisions (fidelity T1-T6); its docstring lists the contract's ambiguities and our readings.
The TensorTensor / TensorReduce LoadAccumulate cases (`loadacc_*`) live in loadacc_cases.py (session-16
contract L1).
The Reciprocal (21) cases (`reciprocal_*`, section R) are 1.0f / x in NumPy float32 (engines.md §2.5),
cross-checked against the float64 quotient; fp32 outputs see only the canonical quiet NaN (see R).

Run: .venv/bin/python conformance/programs/elementwise/make_cases.py
"""
import ctypes
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
RNG = np.random.default_rng(20261130)

# ---------------------------------------------------------------- dtypes and refsim narrowing
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "float8_e4m3fn": np.uint8,
         "float8e5": np.uint8, "float8e4": np.uint8, "int32": np.int32, "uint8": np.uint8, "int8": np.int8,
         "uint32": np.uint32, "uint64": np.uint64, "int16": np.int16, "uint16": np.uint16, "int64": np.int64}
SIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3fn": 1, "float8e5": 1, "float8e4": 1,
        "int32": 4, "uint8": 1, "int8": 1, "uint32": 4, "uint64": 8, "int16": 2, "uint16": 2, "int64": 8}
ML = {"bfloat16": md.bfloat16, "float8_e4m3fn": md.float8_e4m3fn, "float8e5": md.float8_e5m2,
      "float8e4": md.float8_e4m3}
FP8 = {"float8_e4m3fn": (0x7F, 0x7E), "float8e5": (0x7E, 0x7B), "float8e4": (0x7C, 0x77)}


def decode(raw, dt):
    """Stored values -> float32."""
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    return raw.astype(F32)


def encode(x, dt, profile="refsim"):
    """float32 -> stored values under a profile."""
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
    # Integers: round half even, clamp, NaN -> MAX/MIN by sign (unsigned: 0 if negative).
    info = np.iinfo(STORE[dt])
    r = np.rint(np.where(nan, 0, x).astype(np.float64))
    r = np.clip(r, info.min, info.max)
    nanv = np.where(neg, info.min if info.min < 0 else 0, info.max)
    return np.where(nan, nanv, r).astype(STORE[dt])


# ---------------------------------------------------------------- the fp32 ALU (ts_ops)
# pow is the platform libm's powf, as the reference (C++) calls it; NumPy's float32 power may use
# its own SIMD code, which differs in the last bit on some inputs.
_LIBM = ctypes.CDLL("libm.so.6")
_LIBM.powf.argtypes = [ctypes.c_float, ctypes.c_float]
_LIBM.powf.restype = ctypes.c_float


def powf(a, x):
    return np.array([_LIBM.powf(float(u), float(v)) for u, v in zip(a.reshape(-1), x.reshape(-1))],
                    F32).reshape(a.shape)


def truth(b):
    return b.astype(F32)


def fmax(a, x):
    return np.where(np.isnan(a) | (x > a), x, a).astype(F32)


def fmin(a, x):
    return np.where(np.isnan(a) | (x < a), x, a).astype(F32)


TS = {
    "bypass": lambda a, x: a,
    "add": lambda a, x: a + x,
    "subtract": lambda a, x: a - x,
    "mult": lambda a, x: a * x,
    "divide": lambda a, x: a / x,
    "max": fmax,
    "min": fmin,
    "logical_and": lambda a, x: truth((a != 0) & (x != 0)),
    "logical_or": lambda a, x: truth((a != 0) | (x != 0)),
    "logical_xor": lambda a, x: truth((a != 0) != (x != 0)),
    "is_equal": lambda a, x: truth(a == x),
    "not_equal": lambda a, x: truth(a != x),
    "is_gt": lambda a, x: truth(a > x),
    "is_ge": lambda a, x: truth(a >= x),
    "is_lt": lambda a, x: truth(a < x),
    "is_le": lambda a, x: truth(a <= x),
    "pow": powf,
    "rsqrt": lambda a, x: F32(1) / np.sqrt(a),
    "abs": lambda a, x: np.abs(a),
    "abs_max": lambda a, x: fmax(np.abs(a), np.abs(x)),
    "abs_min": lambda a, x: fmin(np.abs(a), np.abs(x)),
}


def ts(op, a, x):
    a, x = np.broadcast_arrays(np.asarray(a, F32), np.asarray(x, F32))
    return np.asarray(TS[op](a, x), F32)


I32 = np.iinfo(np.int32)


def sat32(v):
    return np.clip(v, I32.min, I32.max).astype(np.int32)


def in_width(c, w):
    return (c >= 0) & (c < w)


TS_INT = {
    "bypass": lambda a, x: a,
    "bitwise_not": lambda a, x: ~a,
    "bitwise_and": lambda a, x: a & x,
    "bitwise_or": lambda a, x: a | x,
    "bitwise_xor": lambda a, x: a ^ x,
    "add": lambda a, x: sat32(a.astype(np.int64) + x),
    "subtract": lambda a, x: sat32(a.astype(np.int64) - x),
    "mult": lambda a, x: sat32(a.astype(np.int64) * x),
    "max": lambda a, x: np.maximum(a, x),
    "min": lambda a, x: np.minimum(a, x),
    "arith_shift_left": lambda a, x: np.where(in_width(x, 32), (a.astype(np.int64) << np.clip(x, 0, 31)).astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32), 0).astype(np.int32),
    "arith_shift_right": lambda a, x: (a >> np.where(in_width(x, 32), x, 31)).astype(np.int32),
    "logical_shift_right": lambda a, x: np.where(in_width(x, 32), (a.view(np.uint32) >> np.clip(x, 0, 31).astype(np.uint32)).view(np.int32), 0).astype(np.int32),
}


def ts_int(op, a, x):
    a, x = np.broadcast_arrays(np.asarray(a, np.int32), np.asarray(x, np.int32))
    return np.asarray(TS_INT[op](a, x)).astype(np.int32)


# ---------------------------------------------------------------- program building (birprog)
class Prog(birprog.Prog):
    """SB tiles are sized in bytes here (`sb_bytes`); an instruction built without an engine runs on
    DVE, Load and Save included."""
    STORE, SIZE = STORE, SIZE
    ENGINES = {}
    DEFAULT_ENGINE = "DVE"


CASES = {}


FACTS = {}


def case(name, prog, note, fault=None, choices=(), errors=None, facts=()):
    """fault = (KIND, MESSAGE): the run must stop with that guest fault (the outputs hold what was
    written before it). choices: extra docs/fidelity.md IDs (besides `choices_of`). errors = a list
    of (KIND, LOCATION, MESSAGE): the validator must refuse the program with those diagnostics."""
    assert name not in CASES, name
    if facts:
        # the CONFIRMED / DOCUMENTED docs/fidelity.md rows the case relies on, written as
        # `# fact: ID` comment lines (the runner has no fact directive)
        FACTS[name] = tuple(facts)
    CASES[name] = (prog, note, fault, tuple(choices), errors)


def data(shape, kind="normal", specials=True):
    if kind == "positive":
        x = RNG.uniform(0.01, 100, shape)
    elif kind == "small_int":
        x = RNG.integers(-4, 5, shape)
    elif kind == "int":
        x = RNG.integers(-1000, 1000, shape)
    else:
        x = RNG.standard_normal(shape) * 10
    x = x.astype(F32)
    if specials and kind == "normal":
        flat = x.reshape(-1)
        flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, F32(3.4e38)]
    return x


def unary_program(dt_in, dt_out, x_raw, p, f, opcode, expected, **fields):
    """Load x into SB, run one instruction tile -> tile, save."""
    g = Prog()
    g.dram_in("x", dt_in, x_raw)
    g.sb_bytes("xt", dt_in, p, f * SIZE[dt_in])
    g.sb_bytes("yt", dt_out, p, f * SIZE[dt_out])
    g.inst("Load", [tile("x", dt_in, p, f)], [tile("xt", dt_in, p, f)])
    g.inst(opcode, [tile("xt", dt_in, p, f)] + fields.pop("extra_ins", []), [fields.pop("out_ap", tile("yt", dt_out, p, f))], **fields)
    out_shape = expected.shape
    g.dram_out("y", dt_out, out_shape, expected)
    n = int(np.prod(out_shape))
    op_ = out_shape[0]
    g.inst("Save", [ap("yt", dt_out, [[n // op_ * 0 + f, op_], [1, n // op_]])], [tile("y", dt_out, op_, n // op_)])
    return g


def fix_save(g, dt_out, p_out, f_out, f_row):
    g.insts[-1]["ins"] = [ap("yt", dt_out, [[f_row, p_out], [1, f_out]])]


# ---------------------------------------------------------------- A: every ts_ops op on fp32
P, F = 32, 16
for op in TS:
    kind = {"rsqrt": "positive", "pow": "small_int"}.get(op, "normal")
    x = data((P, F), kind)
    c = {"pow": 3.0, "divide": -2.5, "rsqrt": 0.0}.get(op, 1.5)
    y = ts(op, x, F32(c))
    g = unary_program("float32", "float32", x, P, F, "TensorScalar", y, op0=op, const0=c, reverse0=False,
                      op1="bypass", const1=0.0, reverse1=False)
    case(f"ts_{op}_fp32", g, f"TensorScalar {op} on fp32 (ts_ops)")

# ---------------------------------------------------------------- B: other float dtypes
for dt, profile in [("bfloat16", "refsim"), ("float16", "refsim"), ("float8_e4m3fn", "refsim"),
                    ("float8e5", "nki"), ("float8e4", "refsim"), ("bfloat16", "nki")]:
    for op, c, rev in [("mult", 3.0, False), ("subtract", 2.0, True), ("max", -1.0, False)]:
        x32 = data((P, F)) * F32(20)
        raw = encode(x32, dt, profile)
        xd = decode(raw, dt)
        y = encode(ts(op, F32(c), xd) if rev else ts(op, xd, F32(c)), dt, profile)
        g = unary_program(dt, dt, raw, P, F, "TensorScalar", y, op0=op, const0=c, reverse0=rev,
                          op1="bypass", const1=0.0, reverse1=False)
        g.profile = profile
        case(f"ts_{op}_{dt}_{profile}", g, f"TensorScalar {op} (reverse={rev}) on {dt}, {profile} narrowing")

# every ts_ops op on bf16, fp16 and fp8 data too (refsim narrowing of the fp32 result)
for dt in ("bfloat16", "float16", "float8_e4m3fn"):
    for op in TS:
        kind = {"rsqrt": "positive", "pow": "small_int"}.get(op, "normal")
        raw = encode(data((P, F), kind), dt)
        xd = decode(raw, dt)
        c = {"pow": 2.0, "divide": -2.5, "rsqrt": 0.0}.get(op, 1.5)
        g = unary_program(dt, dt, raw, P, F, "TensorScalar", encode(ts(op, xd, F32(c)), dt), op0=op, const0=c,
                          reverse0=False, op1="bypass", const1=0.0, reverse1=False)
        case(f"ts_{op}_{dt}", g, f"TensorScalar {op} on {dt} (ts_ops, refsim narrowing)")

# ---------------------------------------------------------------- C: bitvec ops -> ts_int_ops on int32
for op, c in [("bitwise_and", 0xF0F), ("bitwise_or", 0x1010), ("bitwise_xor", -1), ("bitwise_not", 0),
              ("arith_shift_left", 3), ("arith_shift_right", 2), ("logical_shift_right", 28), ("arith_shift_left", 40)]:
    x = RNG.integers(-2**31, 2**31, (P, F), dtype=np.int64).astype(np.int32)
    y = ts_int(op, x, np.int32(c))
    g = unary_program("int32", "int32", x, P, F, "TensorScalar", y, op0=op, const0=float(c), reverse0=False,
                      op1="bypass", const1=0.0, reverse1=False)
    case(f"ts_int_{op}_{c}".replace("-", "m"), g, f"bitvec TensorScalar {op} {c} on int32 (ts_int_ops)")

# int32 data with an arithmetic op runs in fp32 (exact only below 2^24) and narrows by RNE + saturate.
x = np.array(RNG.integers(-2**31, 2**31, (P, F), dtype=np.int64), np.int32)
y = encode(ts("add", x.astype(F32), F32(0.5)), "int32")
case("ts_add_int32_via_fp32", unary_program("int32", "int32", x, P, F, "TensorScalar", y, op0="add", const0=0.5,
     reverse0=False, op1="bypass", const1=0.0, reverse1=False), "int32 data, arithmetic op: fp32 path")

# ---------------------------------------------------------------- two stages and NKI doc examples
x = data((P, F))
case("nki_a_minus_1", unary_program("float32", "float32", x, P, F, "TensorScalar", ts("subtract", x, F32(1)),
     op0="subtract", const0=1.0, reverse0=False, op1="bypass", const1=0.0, reverse1=False), "NKI doc: a - 1")
case("nki_1_minus_c", unary_program("float32", "float32", x, P, F, "TensorScalar", ts("subtract", F32(1), x),
     op0="subtract", const0=1.0, reverse0=True, op1="bypass", const1=0.0, reverse1=False), "NKI doc: 1 - c (reverse0)")
case("nki_e_mult_f_plus_2_5", unary_program("float32", "float32", x, P, F, "TensorScalar",
     ts("add", ts("mult", x, F32(-3.0)), F32(2.5)), op0="mult", const0=-3.0, reverse0=False, op1="add", const1=2.5,
     reverse1=False), "NKI doc: e*f + 2.5 (two stages)")
case("ts_two_stage_reverse1", unary_program("float32", "float32", x, P, F, "TensorScalar",
     ts("divide", F32(8), ts("add", x, F32(1))), op0="add", const0=1.0, reverse0=False, op1="divide", const1=8.0,
     reverse1=True), "stage 1 reversed: 8 / (x + 1)")
case("ts_bypass_reversed_gives_scalar", unary_program("float32", "float32", x, P, F, "TensorScalar",
     ts("bypass", F32(7), x), op0="bypass", const0=7.0, reverse0=True, op1="bypass", const1=0.0, reverse1=False),
     "bypass with reverse0 returns the scalar (seed pseudocode)")


# ---------------------------------------------------------------- D: TensorTensor
def binary_program(dt_a, dt_b, dt_out, a_raw, b_raw, p, f, expected, profile="refsim", prev=None, **fields):
    g = Prog(profile)
    g.dram_in("a", dt_a, a_raw)
    g.dram_in("b", dt_b, b_raw)
    for n, d in (("at", dt_a), ("bt", dt_b), ("yt", dt_out)):
        g.sb_bytes(n, d, p, f * SIZE[d])
    g.inst("Load", [tile("a", dt_a, p, f)], [tile("at", dt_a, p, f)])
    g.inst("Load", [tile("b", dt_b, p, f)], [tile("bt", dt_b, p, f)])
    if prev is not None:
        g.dram_in("prev", dt_out, prev)
        g.inst("Load", [tile("prev", dt_out, p, f)], [tile("yt", dt_out, p, f)])
    g.inst("TensorTensor", [tile("at", dt_a, p, f), tile("bt", dt_b, p, f)], [tile("yt", dt_out, p, f)], **fields)
    g.dram_out("y", dt_out, (p, f), expected)
    g.inst("Save", [tile("yt", dt_out, p, f)], [tile("y", dt_out, p, f)])
    return g


for op in ["add", "subtract", "mult", "divide", "max", "min", "is_ge", "not_equal", "pow"]:
    kind = "small_int" if op == "pow" else "normal"
    a, b = data((P, F), kind), data((P, F), kind, specials=False)
    if op == "pow":
        a = np.abs(a) + F32(1)
    case(f"tt_{op}_fp32", binary_program("float32", "float32", "float32", a, b, P, F, ts(op, a, b), op=op),
         f"TensorTensor {op} fp32")
a, b = data((P, F)), data((P, F))
ab, bb = encode(a, "bfloat16"), encode(b, "bfloat16")
case("nki_a_plus_b_bf16", binary_program("bfloat16", "bfloat16", "bfloat16", ab, bb, P, F,
     encode(ts("add", decode(ab, "bfloat16"), decode(bb, "bfloat16")), "bfloat16"), op="add"), "NKI doc: a + b in bf16")
case("tt_mixed_f16_f32_to_bf16", binary_program("float16", "float32", "bfloat16", a.astype(np.float16), b, P, F,
     encode(ts("mult", a.astype(np.float16).astype(F32), b), "bfloat16"), op="mult"), "mixed input dtypes, cast on write")
ia = RNG.integers(-2**31, 2**31, (P, F), dtype=np.int64).astype(np.int32)
ib = RNG.integers(-2**31, 2**31, (P, F), dtype=np.int64).astype(np.int32)
for op in ["add", "subtract", "mult", "max", "bitwise_and"]:
    case(f"tt_{op}_int32", binary_program("int32", "int32", "int32", ia, ib, P, F, ts_int(op, ia, ib), op=op),
         f"TensorTensor {op} on int32 (ts_int_ops, saturating)")
# every ts_int_ops member on int32 TensorTensor data (ASSUMED semantics, fidelity N17)
def int_div(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    q = np.where(b64 == 0, 0, np.abs(a64) // np.where(b64 == 0, 1, np.abs(b64)) * np.sign(a64) * np.sign(b64))
    return sat32(q)


def int_mod(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    r = np.where(b64 == 0, 0, np.fmod(a64, np.where(b64 == 0, 1, b64)))
    return r.astype(np.int32)


TS_INT.update({
    "divide": int_div,
    "mod": int_mod,
    "mod_int": int_mod,
    "logical_shift_left": lambda a, x: np.where(in_width(x, 32), (a.view(np.uint32).astype(np.uint64) << np.clip(x, 0, 31).astype(np.uint64)).astype(np.uint32).view(np.int32), 0).astype(np.int32),
})
sa = RNG.integers(-2**31, 2**31, (P, F), dtype=np.int64).astype(np.int32)
sb = RNG.integers(-40, 40, (P, F), dtype=np.int64).astype(np.int32)
sb[0, :4] = [0, -1, 31, 32]
for op in sorted(TS_INT):
    if f"tt_{op}_int32" in CASES:
        continue
    case(f"tt_{op}_int32", binary_program("int32", "int32", "int32", sa, sb, P, F, ts_int(op, sa, sb), op=op),
         f"TensorTensor {op} on int32 (ts_int_ops)")

prev = data((P, F), specials=False)
case("tt_add_accumulate", binary_program("float32", "float32", "float32", a, b, P, F,
     ts("add", ts("mult", a, b), prev), prev=prev, op="mult", acc="AddAccumulate"), "TensorTensor accumulate into out")


# ---------------------------------------------------------------- E: TensorScalarPtr
def ptr_program(x, s0, s1, expected, p, f, dt="float32", out_dt="float32", **fields):
    g = Prog()
    g.dram_in("x", dt, x)
    g.sb_bytes("xt", dt, p, f * SIZE[dt])
    g.sb_bytes("yt", out_dt, p, f * SIZE[out_dt])
    ins = [tile("xt", dt, p, f)]
    g.inst("Load", [tile("x", dt, p, f)], [tile("xt", dt, p, f)])
    for k, s in enumerate((s0, s1)):
        if s is None:
            continue
        if isinstance(s, float):
            ins.append(imm(s))
            continue
        g.dram_in(f"s{k}", "float32", s.reshape(p, -1))
        g.sb_bytes(f"s{k}t", "float32", p, s.size // p * 4)
        g.inst("Load", [tile(f"s{k}", "float32", p, s.size // p)], [tile(f"s{k}t", "float32", p, s.size // p)])
        ins.append(tile(f"s{k}t", "float32", p, s.size // p))
    g.inst("TensorScalarPtr", ins, [tile("yt", out_dt, p, f)], **fields)
    g.dram_out("y", out_dt, (p, f), expected)
    g.inst("Save", [tile("yt", out_dt, p, f)], [tile("y", out_dt, p, f)])
    return g


x = data((P, F))
s0 = data((P, 1), specials=False)
s1 = data((P, 1), specials=False)
case("tsp_per_partition_mult_add", ptr_program(x, s0, s1, ts("add", ts("mult", x, s0), s1), P, F, op0="mult",
     reverse0=False, op1="add", reverse1=False), "TensorScalarPtr: one scalar per partition, x*s0+s1")
case("tsp_reverse_divide_imm", ptr_program(x, s0, 4.0, ts("subtract", F32(4), ts("divide", s0, x)), P, F,
     op0="divide", reverse0=True, op1="subtract", reverse1=True), "TensorScalarPtr: reversed stages, AP and imm scalars")
case("tsp_one_scalar_missing_second", ptr_program(x, s0, None, ts("max", x, s0), P, F, op0="max", reverse0=False,
     op1="add", reverse1=False), "TensorScalarPtr: a missing second scalar passes the value through")
# every ta_ops member: the 64-bit address path (is_tensor_scalar_addr), on non-negative int64 data
# below 2^24 so refsim's int -> int casts through fp32 are exact; 64-bit ops wrap (fidelity N17/N18).
MASK64 = (1 << 64) - 1
TA = {
    "bypass": lambda a, x: a, "bitwise_not": lambda a, x: ~a, "add": lambda a, x: a + x,
    "subtract": lambda a, x: a - x, "mult": lambda a, x: a * x, "max": max, "min": min,
    "bitwise_and": lambda a, x: a & x, "bitwise_or": lambda a, x: a | x, "bitwise_xor": lambda a, x: a ^ x,
    "arith_shift_left": lambda a, x: a << x, "arith_shift_right": lambda a, x: a >> x,
    "logical_shift_left": lambda a, x: a << x, "logical_shift_right": lambda a, x: (a & MASK64) >> x,
}
xa = RNG.integers(0, 1 << 20, (P, F), dtype=np.int64)
for op, f in TA.items():
    c = 3
    def wrap(v):
        v &= MASK64
        return v - (1 << 64) if v >= 1 << 63 else v
    raw = [wrap(f(int(v), c)) for v in xa.reshape(-1)]
    # The u64 result narrows to int64 through fp32 (refsim): round to fp32, then clamp to int64.
    y = []
    for r in raw:
        f32v = float(np.float32(float(r & MASK64)))
        y.append(int(f32v) if f32v < 2**63 else 2**63 - 1)
    y = np.array(y, np.int64).reshape(P, F)
    g = Prog()
    g.dram_in("x", "int64", xa)
    g.sb_bytes("xt", "int64", P, F * 8)
    g.sb_bytes("yt", "int64", P, F * 8)
    g.inst("Load", [tile("x", "int64", P, F)], [tile("xt", "int64", P, F)])
    g.inst("TensorScalarPtr", [tile("xt", "int64", P, F), imm(float(c))], [tile("yt", "int64", P, F)], op0=op,
           reverse0=False, op1="bypass", reverse1=False, is_tensor_scalar_addr=True)
    g.dram_out("y", "int64", (P, F), y)
    g.inst("Save", [tile("yt", "int64", P, F)], [tile("y", "int64", P, F)])
    case(f"tsp_addr_{op}", g, f"TensorScalarPtr {op} on the 64-bit address path (ta_ops)")

se = data((P, F), specials=False)
case("tsp_per_element_scalars", ptr_program(x, se, None, ts("is_lt", x, se), P, F, op0="is_lt", reverse0=False,
     op1="bypass", reverse1=False), "TensorScalarPtr: one scalar per element")


# ---------------------------------------------------------------- F: TensorReduce
def reduce_program(x_raw, dt, pairs_in, pairs_out, out_shape, expected, out_dt="float32", prev=None, **fields):
    g = Prog()
    p = x_raw.shape[0]
    row = x_raw.nbytes // p
    g.dram_in("x", dt, x_raw)
    g.sb_bytes("xt", dt, p, row)
    flat_pairs = [[row // SIZE[dt], p], [1, row // SIZE[dt]]]
    g.inst("Load", [ap("x", dt, flat_pairs)], [ap("xt", dt, flat_pairs)])
    op_, of = out_shape
    g.sb_bytes("yt", out_dt, max(op_, 1), max(of, 1) * SIZE[out_dt])
    if prev is not None:
        g.dram_in("prev", out_dt, prev.reshape(out_shape))
        g.inst("Load", [tile("prev", out_dt, op_, of)], [tile("yt", out_dt, op_, of)])
    g.inst("TensorReduce", [ap("xt", dt, pairs_in)], [ap("yt", out_dt, pairs_out)], **fields)
    g.dram_out("y", out_dt, out_shape, expected)
    g.inst("Save", [tile("yt", out_dt, op_, of)], [tile("y", out_dt, op_, of)])
    return g


def fold(x, axis_sizes, op):
    """Sequential fold of the trailing axes of x (shape [..., K]) in row-major order."""
    k = x.shape[-1]
    acc = x[..., 0].astype(F32)
    for j in range(1, k):
        acc = TS[op](acc, x[..., j]).astype(F32)
    return acc


W, Z, Y, X = 8, 2, 3, 4
x4 = data((W, Z, Y, X))
pairs4 = [[Z * Y * X, W], [Y * X, Z], [X, Y], [1, X]]
for axis, keep in [("X", 3), ("XY", 2), ("XYZ", 1)]:
    kept = x4.shape[:keep]
    for op in (["add", "max"] if axis == "X" else ["add", "min"]):
        src = x4.reshape(int(np.prod(kept)), -1)
        y = fold(src, None, op).reshape(W, -1)
        case(f"reduce_{op}_{axis}", reduce_program(x4.reshape(W, -1), "float32", pairs4,
             [[y.shape[1], W], [1, y.shape[1]]], y.shape, y, op=op, axis=axis), f"TensorReduce {op} over {axis}")
y = fold(x4.reshape(1, -1), None, "add").reshape(1, 1)
case("reduce_add_XYZW", reduce_program(x4.reshape(W, -1), "float32", pairs4, [[1, 1], [1, 1]], (1, 1), y, op="add",
     axis="XYZW"), "TensorReduce add over XYZW (the partition dim too)")
x2 = data((P, F), specials=False)
yc = fold(x2.T.copy(), None, "add").reshape(1, F)
case("reduce_add_C", reduce_program(x2, "float32", [[F, P], [1, F]], [[F, 1], [1, F]], (1, F), yc, op="add",
     axis="C"), "TensorReduce add across partitions (C)")
yw = fold(x2.reshape(1, -1), None, "max").reshape(1, 1)
case("reduce_max_XYZWC", reduce_program(x2, "float32", [[F, P], [1, F]], [[1, 1], [1, 1]], (1, 1), yw, op="max",
     axis="XYZWC"), "TensorReduce max over everything (XYZWC)")
# N = 12, not a power of two, so divide-first and sum-then-divide disagree (checked below).
n = 12
xa = data((P, n), specials=False)
avg = xa[:, 0] / F32(n)
inv = F32(1) / F32(n)
for j in range(1, n):
    avg = (avg + inv * xa[:, j]).astype(F32)
assert (avg != (fold(xa, None, "add") / F32(n)).astype(F32)).any(), "divide-first must differ somewhere"
case("reduce_average_X", reduce_program(xa, "float32", [[n, P], [1, n]], [[1, P], [1, 1]], (P, 1),
     avg.reshape(P, 1), op="average", axis="X"), "TensorReduce average over 12: divide first, running mean")
case("nki_sum_axis_1_negate", reduce_program(x2, "float32", [[F, P], [1, F]], [[1, P], [1, 1]], (P, 1),
     (-fold(x2, None, "add")).reshape(P, 1), op="add", axis="X", negate=True), "NKI doc: sum along axis 1, negated")
case("reduce_mult_X", reduce_program(x2 / F32(8), "float32", [[F, P], [1, F]], [[1, P], [1, 1]], (P, 1),
     fold(x2 / F32(8), None, "mult").reshape(P, 1), op="mult", axis="X"), "TensorReduce mult")
prev = data((P, 1), specials=False)
case("reduce_add_accumulate", reduce_program(x2, "float32", [[F, P], [1, F]], [[1, P], [1, 1]], (P, 1),
     (-fold(x2, None, "add") + prev[:, 0]).reshape(P, 1), prev=prev, op="add", axis="X", negate=True,
     acc="AddAccumulate"), "TensorReduce: negate after the fold, then accumulate")
xi = RNG.integers(-2**30, 2**30, (P, F), dtype=np.int64).astype(np.int32)
acc_i = xi[:, 0].astype(np.int64)
for j in range(1, F):
    acc_i = np.clip(acc_i + xi[:, j], I32.min, I32.max)
case("reduce_add_int32", reduce_program(xi, "int32", [[F, P], [1, F]], [[1, P], [1, 1]], (P, 1),
     acc_i.astype(np.int32).reshape(P, 1), out_dt="int32", op="add", axis="X"), "TensorReduce add on int32 (saturating)")
xb = encode(x2, "bfloat16")
case("reduce_max_bf16_to_fp32", reduce_program(xb, "bfloat16", [[F, P], [1, F]], [[1, P], [1, 1]], (P, 1),
     fold(decode(xb, "bfloat16"), None, "max").reshape(P, 1), op="max", axis="X"), "TensorReduce max, bf16 in, fp32 out")


# apply_transpose: fp32, then each 32 x 32 block transposed in place (StreamTranspose's mapping).
for n in (32, 64):
    xt = data((n, n), specials=False)
    tr = xt.reshape(n // 32, 32, n // 32, 32).transpose(0, 3, 2, 1).reshape(n, n)
    case(f"reduce_add_apply_transpose_{n}", reduce_program(xt, "float32", [[n, n], [1, n]], [[1, n], [1, 1]], (n, 1),
         fold(tr, None, "add").reshape(n, 1), op="add", axis="X", apply_transpose=True),
         f"TensorReduce with apply_transpose on {n}x{n}: 32x32 blocks transposed, then reduced")


# ---------------------------------------------------------------- G: Pool
def pool_expect(x, func, wy, wx):
    win = x.reshape(x.shape[0], -1, wy * wx)
    if func == "Max":
        acc = np.full(win.shape[:2], -np.finfo(F32).max, F32)
        for j in range(win.shape[2]):
            v = win[..., j]
            acc = np.where(np.isnan(v), acc, np.where(np.isnan(acc) | (v >= acc), v, acc)).astype(F32)
        return acc
    n = wy * wx
    body = n // 4 * 4
    lanes = np.zeros(win.shape[:2] + (4,), F32)
    for j in range(0, body, 4):
        lanes = (lanes + win[..., j:j + 4]).astype(F32)
    s = ((lanes[..., 0] + lanes[..., 1]) + (lanes[..., 2] + lanes[..., 3])).astype(F32)
    for j in range(body, n):
        s = (s + win[..., j]).astype(F32)
    return (s.astype(np.float64) * (1.0 / n)).astype(F32)


for func, wy, wx in [("Max", 2, 3), ("Avg", 3, 5), ("Avg", 4, 4)]:
    nw = 3
    xp = data((P, nw * wy * wx), specials=(func == "Max"))
    y = pool_expect(xp, func, wy, wx)
    g = reduce_program(xp, "float32", [[nw * wy * wx, P], [wy * wx, nw], [wx, wy], [1, wx]], [[nw, P], [1, nw]],
                       (P, nw), y, func=func)
    g.insts[-2]["opcode"] = "Pool"
    g.insts[-2]["engine"] = "Pool"
    case(f"pool_{func.lower()}_{wy}x{wx}", g, f"Pool {func} over a {wy}x{wx} window")


# ---------------------------------------------------------------- H: TensorScalarCache
def cache_expect(x, op0, op1, rev0, rev1, init, every):
    """A set reverse flag swaps its stage's operands (seed 000 §4 pseudocode) and, either one, runs
    the scan from the last element to the first (the seed's prose; docs/fidelity.md S14). Each
    value is written at its own element's position."""
    c = np.array(init, F32)
    outs = [None] * x.shape[1]
    order = range(x.shape[1] - 1, -1, -1) if (rev0 or rev1) else range(x.shape[1])
    for j in order:
        a = ts(op0, c, x[:, j]) if rev0 else ts(op0, x[:, j], c)
        b = ts(op1, c, a) if rev1 else ts(op1, a, c)
        c = b
        outs[j] = b
    return np.stack(outs, axis=1) if every else c.reshape(-1, 1)


xs = data((P, F), specials=False) / F32(4)
for mode, op0, op1, init, rev, note in [
        ("Reduce", "add", "bypass", None, False, "Reduce: sum with a zero-initialised cache"),
        ("Cumulative", "add", "bypass", None, False, "NKI doc: cumulative sum"),
        ("TensorScan", "mult", "add", 0.5, False, "NKI doc: scan recurrence c = x*c + c from a loaded 0.5"),
        ("TensorScan", "subtract", "max", -1.0, True, "TensorScan with both stages reversed")]:
    init_v = np.full(P, init if init is not None else 0.0, F32)
    every = mode != "Reduce"
    y = cache_expect(xs, op0, op1, rev, rev, init_v, every)
    fields = {"op0": op0, "reverse0": rev, "op1": op1, "reverse1": rev, "mode": mode,
              "acc": "LoadAccumulate" if init is not None else "ZeroAccumulate"}
    extra = [imm(init)] if init is not None else []
    out_f = F if every else 1
    g = unary_program("float32", "float32", xs, P, F, "TensorScalarCache", y, extra_ins=extra,
                      out_ap=ap("yt", "float32", [[F, P], [1, out_f]]), **fields)
    fix_save(g, "float32", P, out_f, F)
    case(f"cache_{mode.lower()}_{op0}_{op1}", g, f"TensorScalarCache {note}")


# ---------------------------------------------------------------- I/J: partition slices, strided and broadcast APs
for start in (32, 64, 96):
    x = data((128, F))
    pitch = F
    g = Prog()
    g.dram_in("x", "float32", x)
    g.sb_bytes("xt", "float32", 128, F * 4)
    g.sb_bytes("yt", "float32", 128, F * 4)
    g.inst("Load", [tile("x", "float32", 128, F)], [tile("xt", "float32", 128, F)])
    g.inst("Memset", [], [tile("yt", "float32", 128, F)], mode="Const", constant=0)
    g.inst("TensorScalar", [tile("xt", "float32", 32, F, start * pitch)], [tile("yt", "float32", 32, F, start * pitch)],
           op0="mult", const0=2.0, reverse0=False, op1="add", const1=-1.0, reverse1=False)
    y = np.zeros((128, F), F32)
    y[start:start + 32] = ts("add", ts("mult", x[start:start + 32], F32(2)), F32(-1))
    g.dram_out("y", "float32", (128, F), y)
    g.inst("Save", [tile("yt", "float32", 128, F)], [tile("y", "float32", 128, F)])
    case(f"partition_slice_{start}", g, f"TensorScalar on partitions {start}..{start + 32}, the rest Memset 0")

x = data((P, 2 * F))
g = Prog()
g.dram_in("x", "float32", x)
g.sb_bytes("xt", "float32", P, 2 * F * 4)
g.sb_bytes("yt", "float32", P, F * 4)
g.inst("Load", [tile("x", "float32", P, 2 * F)], [tile("xt", "float32", P, 2 * F)])
g.inst("TensorScalar", [ap("xt", "float32", [[2 * F, P], [2, F]], 1)], [tile("yt", "float32", P, F)], op0="add",
       const0=1.0, reverse0=False, op1="bypass", const1=0.0, reverse1=False)
g.dram_out("y", "float32", (P, F), ts("add", x[:, 1::2], F32(1)))
g.inst("Save", [tile("yt", "float32", P, F)], [tile("y", "float32", P, F)])
case("strided_odd_columns", g, "strided input AP: every other column from offset 1")

g = Prog()
g.dram_in("x", "float32", x)
g.sb_bytes("xt", "float32", P, 2 * F * 4)
g.sb_bytes("yt", "float32", P, F * 4)
g.inst("Load", [tile("x", "float32", P, 2 * F)], [tile("xt", "float32", P, 2 * F)])
g.inst("TensorTensor", [ap("xt", "float32", [[2 * F, P], [0, F]], 3), ap("xt", "float32", [[2 * F, P], [-1, F]], 2 * F - 1)],
       [tile("yt", "float32", P, F)], op="subtract")
g.dram_out("y", "float32", (P, F), ts("subtract", np.repeat(x[:, 3:4], F, axis=1), x[:, ::-1][:, :F]))
g.inst("Save", [tile("yt", "float32", P, F)], [tile("y", "float32", P, F)])
case("broadcast_minus_reversed", g, "broadcast (step 0) minus a reversed (step -1) row")

# ---------------------------------------------------------------- L: copies with casts
for src_dt, dst_dt in [("float32", "bfloat16"), ("bfloat16", "float32"), ("float32", "float8_e4m3fn"),
                       ("float32", "int8"), ("float16", "float8e5")]:
    x32 = data((P, F)) * F32(50)
    raw = encode(x32, src_dt)
    y = encode(decode(raw, src_dt), dst_dt)
    g = unary_program(src_dt, dst_dt, raw, P, F, "TensorCopy", y)
    case(f"copy_{src_dt}_to_{dst_dt}", g, f"TensorCopy casting {src_dt} to {dst_dt} (refsim)")


# ---------------------------------------------------------------- M: an AP dtype other than the memory's
# Elements are addressed in the memory's dtype and converted (fidelity S2).
x = data((P, F)) * F32(3)
g = Prog()
g.dram_in("x", "float32", x)
g.sb_bytes("xt", "float32", P, F * 4)
g.sb_bytes("yt", "bfloat16", P, F * 2)
g.inst("Load", [tile("x", "float32", P, F)], [tile("xt", "float32", P, F)])
g.inst("TensorCopy", [tile("xt", "bfloat16", P, F)], [tile("yt", "bfloat16", P, F)])
g.dram_out("y", "bfloat16", (P, F), encode(x, "bfloat16"))
g.inst("Save", [tile("yt", "bfloat16", P, F)], [tile("y", "bfloat16", P, F)])
case("ap_dtype_bf16_reads_fp32_memory", g, "a bf16 AP over fp32 memory reads each element cast to bf16")

g = Prog()
g.dram_in("x", "float32", x)
g.sb_bytes("xt", "float32", P, F * 4)
g.sb_bytes("yt", "float32", P, F * 4)
g.inst("Load", [tile("x", "float32", P, F)], [tile("xt", "float32", P, F)])
g.inst("TensorScalar", [tile("xt", "float32", P, F)], [tile("yt", "float16", P, F)], op0="mult", const0=2.0,
       reverse0=False, op1="bypass", const1=0.0, reverse1=False)
g.dram_out("y", "float32", (P, F), encode(ts("mult", x, F32(2)), "float16").astype(F32))
g.inst("Save", [tile("yt", "float32", P, F)], [tile("y", "float32", P, F)])
case("ap_dtype_fp16_writes_fp32_memory", g, "an fp16 output AP over fp32 memory: the value narrows to fp16, then widens")


# ---------------------------------------------------------------- R: Reciprocal (21)
# engines.md §2.5 (RE): the dedicated Reciprocal opcode bypasses the activation PWP tables and is
# exactly 1.0f / x; engines.md §2.7: no fields. Each element is read through the input AP's dtype to
# fp32 (decode), divided as IEEE single (NumPy float32: round to nearest even, no FTZ/DAZ, re-facts
# §4; 1/±0 = ±Inf, 1/±Inf = ±0), and narrowed to the output AP's dtype (encode, refsim). Own RNG, so
# the cases above keep their data.
#
# NaN: the runner compares outputs bit for bit. 1.0f / NaN has one NaN operand, whose quieted bits
# x86 `divss` returns (docs/fidelity.md N20: exact with one NaN operand), but Rust does not promise
# a NaN's sign or payload; so the fp32-output cases hold only the canonical quiet NaN 0x7FC00000,
# whose result is 0x7FC00000 under any reading. The narrowing cases (bf16 / fp8 / fp16 out) also
# hold -NaN, signalling and payload NaNs: refsim writes every NaN as the format's canonical NaN with
# the sign dropped (N3, N4), so their expected bits do not depend on which NaN the division returns.
REC_RNG = np.random.default_rng(20260121)
QNAN = 0x7FC00000


def recip(x):
    """1.0f / x in IEEE single, cross-checked against the correctly rounded float64 quotient
    (53 >= 2*24 + 2 bits, so rounding the double quotient to float32 is the single quotient)."""
    x = np.asarray(x, F32)
    y = (F32(1) / x).astype(F32)
    via64 = (1.0 / x.astype(np.float64)).astype(F32)
    nan = np.isnan(x)
    assert (np.isnan(y) == nan).all()
    assert (y[~nan].view(np.uint32) == via64[~nan].view(np.uint32)).all()
    return y


def f32_bits(bits):
    return np.asarray(bits, np.int64).astype(np.uint32).view(F32)


def random_finite_f32(n):
    """n fp32 values with uniformly random bits, Inf/NaN codes redrawn: every exponent, subnormals."""
    b = REC_RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    while True:
        bad = (b & 0x7F800000) == 0x7F800000
        if not bad.any():
            return b.view(F32)
        b[bad] = REC_RNG.integers(0, 2**32, int(bad.sum()), dtype=np.uint64).astype(np.uint32)


def fill_shuffled(special_bits, n):
    """The special fp32 bit patterns (each kept), then random finite values, shuffled, n in all."""
    s = f32_bits(special_bits)
    assert len(s) <= n, len(s)
    x = np.concatenate([s, random_finite_f32(n - len(s))])
    return x[REC_RNG.permutation(n)]


def signed(bits):
    return list(bits) + [b | 0x80000000 for b in bits]


# fp32 results overflow to Inf exactly for |x| <= 2^-128 = 2^21 * 2^-149 (the subnormal code 2^21);
# results of |x| in [2^126, FLT_MAX] are fp32 subnormals (exactly rounded, no flush to zero).
POW2 = [(k + 127) << 23 if k >= -126 else 1 << (k + 149) for k in range(-149, 128)]
F32_SPECIALS = signed(
    [0x00000000, 0x7F800000, 0x3F800000, 0x40400000, 0x3DCCCCCD, 0x3F7FFFFF, 0x3F800001, 0x3FFFFFFF]
    + POW2
    + [0x00000001, 0x00000002, 0x00000003, 0x00000007, 0x00400000, 0x00400001, 0x007FFFFF, 0x007FFFFE]
    + [(1 << 21) + d for d in (-2, -1, 0, 1, 2, 3)]  # the overflow edge: 2^21 -> Inf, 2^21 + 1 finite
    + [0x00800000, 0x00800001, 0x00FFFFFF, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x7F000001, 0x7EFFFFFF]
    + list(REC_RNG.integers(0x7E800000, 0x7F800000, 64))  # |x| in [2^126, FLT_MAX]: subnormal results
    + list(REC_RNG.integers(1, 1 << 21, 32))  # subnormal x whose reciprocal overflows
    + list(REC_RNG.integers(1 << 21, 1 << 23, 32))  # subnormal x with a finite reciprocal
) + [QNAN]

x = fill_shuffled(F32_SPECIALS, 128 * 64).reshape(128, 64)
y = recip(x)
assert (y.view(np.uint32)[np.isnan(y)] == QNAN).all()
assert np.isinf(y).sum() > 100 and ((y != 0) & (np.abs(y) < np.finfo(F32).tiny)).sum() > 100
case("reciprocal_float32", unary_program("float32", "float32", x, 128, 64, "Reciprocal", y),
     "Reciprocal (21) fp32 -> fp32: 1.0f/x on 128x64 holding +-0, +-Inf, the canonical qNaN, +-1, every "
     "power of two 2^-149..2^127, subnormals, the 2^-128 overflow edge, |x| near FLT_MAX (subnormal results) "
     "and random bits (engines.md 2.5: exactly 1.0f/x)")

# bf16 in, fp32 out: every bf16 code (element k holds code k), NaN codes replaced by 0x7FC0.
raw = np.arange(65536, dtype=np.uint32).astype(np.uint16)
is_nan = ((raw & 0x7F80) == 0x7F80) & ((raw & 0x007F) != 0)
raw[is_nan] = 0x7FC0
xd = decode(raw, "bfloat16")
y = recip(xd)
assert (y.view(np.uint32)[np.isnan(y)] == QNAN).all() and np.isnan(y).sum() == is_nan.sum()
case("reciprocal_bfloat16_in", unary_program("bfloat16", "float32", raw.reshape(128, 512), 128, 512, "Reciprocal",
     y.reshape(128, 512)),
     "Reciprocal bf16 -> fp32: every bf16 code (element k = code k; NaN codes as the canonical 0x7FC0), "
     "widened exactly (<< 16), 1.0f/x in fp32", facts=("N14 (DOCUMENTED: bf16 decodes as << 16)",))


# fp32 in, bf16 out: the fp32 quotient, then RNE to bf16 (N1, N3). Holds quotients that are exact
# bf16 ties (low half 0x8000), where rounding the exact 1/x straight to bf16 would differ half the
# time (asserted), and the bf16 Inf edge: quotients in [0x7F7F8000, FLT_MAX] round to bf16 Inf.
def bf16_tie_inputs(lo, hi, n_even, n_odd):
    """fp32 x in [lo, hi) (bit range) whose fp32 reciprocal's low 16 bits are exactly 0x8000."""
    got_even, got_odd = [], []
    while len(got_even) < n_even or len(got_odd) < n_odd:
        b = REC_RNG.integers(lo, hi, 1 << 20, dtype=np.int64).astype(np.uint32)
        q = (F32(1) / b.view(F32)).astype(F32).view(np.uint32)
        tie = (q & 0xFFFF) == 0x8000
        got_even += list(b[tie & ((q & 0x10000) == 0)])
        got_odd += list(b[tie & ((q & 0x10000) != 0)])
    return got_even[:n_even] + got_odd[:n_odd]


TIES = (bf16_tie_inputs(0x3F800000, 0x40000000, 24, 24)  # x in [1, 2)
        + bf16_tie_inputs(0x00800000, 0x7F000000, 24, 24)  # every normal exponent
        + bf16_tie_inputs(0x7E800000, 0x7F800000, 8, 8))  # subnormal quotients
BF16_EDGE = [(1 << 21) + 4096 + d for d in range(-4, 16)]  # quotients around 0x7F7F8000
NANS = [0xFFC00000, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FC12345, 0xFFFFFFFF]
x = fill_shuffled(signed(TIES[::2] + BF16_EDGE) + TIES[1::2] + F32_SPECIALS[:40] + [QNAN] + NANS,
                  128 * 64).reshape(128, 64)
q = recip(x)
y = encode(q, "bfloat16")
xs64 = 1.0 / x.astype(np.float64)
qb = q.view(np.uint32).astype(np.int64)
tie = ~np.isnan(q) & ((qb & 0xFFFF) == 0x8000)
assert tie.sum() >= 150
# exact 1/x is never the tie itself, so one rounding would go toward it: up in magnitude iff |1/x| > |q|
up = np.abs(xs64[tie]) > np.abs(q[tie].astype(np.float64))
assert (np.abs(xs64[tie]) != np.abs(q[tie].astype(np.float64))).all()
direct = np.where(up, (qb[tie] >> 16) + 1, qb[tie] >> 16).astype(np.uint16)
assert (direct != y[tie]).sum() >= 50  # the two roundings are visible
assert (y[np.isnan(q)] == 0x7FC0).all() and np.isnan(q).sum() == 1 + len(NANS)
assert (y[np.isfinite(q)] & 0x7FFF == 0x7F80).sum() >= 20  # finite quotients rounded to bf16 Inf
case("reciprocal_float32_to_bfloat16", unary_program("float32", "bfloat16", x, 128, 64, "Reciprocal", y),
     "Reciprocal fp32 -> bf16: the fp32 quotient narrowed by RNE (two roundings: quotients that are exact "
     "bf16 ties), the bf16 Inf edge, and qNaN / -NaN / sNaN / payload NaNs all written as 0x7FC0 (refsim)",
     facts=("N1 (CONFIRMED: casts go src -> fp32 -> dst with RNE (re-facts §4))",
            "N3 (CONFIRMED: bf16 encode by RNE, no saturation; NaN -> 0x7FC0 with the sign dropped (refsim))"))

# float8e4 (legacy E4M3: max 240, has Inf) in and out: every code in a 16x16 tile. refsim's FP8
# config saturates: 1/±0 = ±Inf and quotients above 240 (codes 0x01, 0x02) write ±max (0x77 / 0xF7);
# NaN writes 0x7C.
raw = np.arange(256, dtype=np.uint32).astype(np.uint8)
y = encode(recip(decode(raw, "float8e4")), "float8e4")
assert y[0] == 0x77 and y[0x80] == 0xF7 and y[0x7F] == 0x7C
case("reciprocal_float8e4", unary_program("float8e4", "float8e4", raw.reshape(16, 16), 16, 16, "Reciprocal",
     y.reshape(16, 16)),
     "Reciprocal float8e4 -> float8e4: all 256 codes (element k = code k); overflow and 1/+-0 saturate to "
     "+-max, 1/+-Inf = +-0, every NaN code writes 0x7C (refsim)", choices=("N4",),
     facts=("N2 (CONFIRMED: refsim FP8 config saturates overflow and +-Inf to +-max)",))

# An odd shape: 3 partitions x 37, fp16 in and out. fp16 subnormals k*2^-24 with k <= 256 overflow
# fp16 (1/x >= 65520 -> Inf, no saturation); 1/65504 is an fp16 subnormal; NaNs write 0x7E00 (refsim).
F16_SPECIALS = [0x7E00, 0xFE00, 0x7C01, 0xFD55, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x3C00, 0xBC00, 0x0001, 0x8001,
                0x00FF, 0x0100, 0x0101, 0x0102, 0x8100, 0x8101, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7800, 0x3BFF,
                0x3C01, 0x4200]
n_rand = 111 - len(F16_SPECIALS)
f16 = REC_RNG.integers(0, 0x7C00, n_rand, dtype=np.int64) | (REC_RNG.integers(0, 2, n_rand) << 15)  # finite, either sign
raw = np.concatenate([np.array(F16_SPECIALS, np.int64), f16]).astype(np.uint16)[REC_RNG.permutation(111)]
raw = raw.view(np.float16).reshape(3, 37)
q = recip(raw.astype(F32))
y = encode(q, "float16")
assert (y.view(np.uint16)[np.isnan(q)] == 0x7E00).all() and np.isnan(q).sum() == 4
case("reciprocal_float16_3x37", unary_program("float16", "float16", raw, 3, 37, "Reciprocal", y),
     "Reciprocal fp16 -> fp16 on an odd 3x37 tile: fp16 subnormals whose reciprocal overflows to Inf "
     "(k*2^-24, k <= 256), subnormal quotients, +-0, +-Inf, NaNs written as 0x7E00 (refsim)",
     facts=("N3 (CONFIRMED: fp16 encode by RNE, overflow -> Inf; NaN -> 0x7E00 (refsim))",))


# ---------------------------------------------------------------- which cases encode ASSUMED choices
# The docs/fidelity.md entries (their ASSUMED parts) each case's expected values depend on.
# Data from data(..., specials=True) holds NaN and +-0, so max/min there exercise N16's NaN rule.
CMP_LOGIC = ("is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le", "logical_and", "logical_or",
             "logical_xor")
NAN_RULE = ("max", "min", "abs_max", "abs_min")


def choices_of(name):
    out = []
    if name.startswith("ts_int_"):
        out += ["S3", "N17"]  # the bitvec predicate picks int32; ts_int_ops semantics
    elif name == "ts_add_int32_via_fp32":
        out += ["S3"]  # an arithmetic op on int32 data is not "bitvec": the fp32 path
    elif name.startswith("ts_") or name.startswith("tt_") and name.endswith("_fp32"):
        op = name.split("_", 1)[1]
        if any(op.startswith(c + "_") for c in CMP_LOGIC):
            out += ["N16"]  # comparisons and logical ops write 1.0 / 0.0
        if any(op.startswith(m + "_") for m in NAN_RULE):
            out += ["N16"]  # max/min with a NaN operand
        if op.startswith("rsqrt_"):
            out += ["N16"]  # rsqrt = 1 / sqrtf, two roundings
        if op.startswith("pow_"):
            out += ["N16", "S10"]  # pow = the platform powf
    if name.startswith("reciprocal_"):
        out += ["S22"]  # exactly one fp32 division (engines.md 2.5, an RE claim)
    if name.startswith("tt_") and name.endswith("_int32"):
        out += ["S5", "N17"]  # both inputs integer -> ts_int_ops; its semantics
    if name == "tt_add_accumulate":
        out += ["S5"]  # AddAccumulate adds to what the output holds
    if name.startswith("tsp_addr_"):
        out += ["N17", "N12"]  # ta_ops wrap; the 64-bit result narrows to int64 through fp32
    if name == "tsp_per_element_scalars":
        out += ["S4", "N16"]  # one scalar per element; is_lt writes 1.0 / 0.0
    if name == "tsp_one_scalar_missing_second":
        out += ["N16"]  # max
    if name in ("reduce_max_X", "reduce_min_XY", "reduce_min_XYZ"):
        out += ["N16"]  # max/min folds over data holding NaN
    if name in ("reduce_max_XYZWC", "reduce_average_X", "reduce_add_accumulate") or "apply_transpose" in name:
        out += ["S6"]  # XYZWC scope, 1/N in fp32, accumulate = add, the transpose mapping
    if name == "reduce_add_int32":
        out += ["S6", "N17"]  # integer inputs fold in int32 with saturating ts_int_ops add
    if name == "cache_tensorscan_subtract_max":
        out += ["S14"]  # the reverse flags also reverse the scan direction
    if name.startswith("pool_"):
        out += ["S7"]  # Avg: the lane combination order; Max: the +-0 tie
    if name.startswith("ap_dtype_"):
        out += ["S2"]  # element-for-element addressing of an AP dtype other than the memory's
    if "float8_e4m3fn" in name and "nki" not in name:
        out += ["N4"]  # refsim's e4m3fn NaN code
    if "float8e4" in name and "nki" not in name:
        out += ["N7"]  # legacy E4M3 follows the FP8 config
    return sorted(set(out))


# ---------------------------------------------------------------- N: guest faults
# An op outside the table the instruction selects raises "op ... is not supported yet" (re-facts §2,
# a lookup miss; mod is not a ts_ops member). What was saved before the fault stays written.
for op, dt in [("mod", "float32"), ("average", "float32")]:
    a, b = data((P, F)), data((P, F), specials=False)
    g = Prog()
    g.dram_in("a", dt, a)
    g.dram_in("b", dt, b)
    for n_ in ("at", "bt", "yt"):
        g.sb_bytes(n_, dt, P, F * 4)
    g.inst("Load", [tile("a", dt, P, F)], [tile("at", dt, P, F)])
    g.inst("Load", [tile("b", dt, P, F)], [tile("bt", dt, P, F)])
    g.dram_out("before", dt, (P, F), a)
    g.inst("Save", [tile("at", dt, P, F)], [tile("before", dt, P, F)])
    g.inst("TensorTensor", [tile("at", dt, P, F), tile("bt", dt, P, F)], [tile("yt", dt, P, F)], op=op)
    case(f"fault_tt_{op}_fp32", g, f"TensorTensor {op} on fp32: {op} is not a ts_ops member, a guest fault",
         fault=("unsupported-op", f"op {op} is not supported yet in ts_ops"))


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, fault, choices, errors) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes)"]
        lines += [f"# fact: {x}" for x in FACTS.get(name, ())]
        if errors:
            # A program the validator must refuse: the runner loads and validates it and compares
            # the located diagnostics (as programs/datamove's *_error cases).
            lines += [f"choice: {c}" for c in sorted(set(choices_of(name)) | set(choices))]
            lines += [f"error {k} @ {loc} | {msg}".rstrip() for k, loc, msg in errors]
            birprog.write_case(os.path.join(HERE, name), g.program(), lines)
            continue
        lines.append(f"profile: {g.profile}")
        lines += [f"choice: {c}" for c in sorted(set(choices_of(name)) | set(choices))]
        if fault is not None:
            lines.append(f"fault {fault[0]} | {fault[1]}")
        birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    print(f"{len(CASES)} cases")


# ---------------------------------------------------------------- T: TensorScalarPtr integer paths (tspint_cases.py)
import tspint_cases  # noqa: E402  (its own module, own RNG; it registers through case() above)

tspint_cases.add_cases(globals())

# ---------------------------------------------------------------- L: TensorTensor / TensorReduce LoadAccumulate (loadacc_cases.py)
import loadacc_cases  # noqa: E402  (its own module, own RNG; it registers through case() above)

loadacc_cases.add_cases(globals())

write_all()
