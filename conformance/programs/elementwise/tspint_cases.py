"""TensorScalarPtr on the integer paths, the scan / scalar-tensor-tensor / apply_transpose
combinations and every `acc` (issue #10 item 6): the `tsp_i32_*`, `tsp_i64_*`, `tsp_f32_*` and
`fault_tsp_*` cases of programs/elementwise. Registered by make_cases.py (`add_cases(globals())`),
which owns the program builder, the refsim encoders and the fp32 `ts_ops` table this reuses.

Written from the `tspint` semantics contract (/work/tspint-decisions.md, 2026-12-01, its §N cited as
"dec §N") and seed 000 §2.2-§4 only, never from birsim's code. Its rules, as implemented here:

  * domain (dec §2, T1): is_tensor_scalar_addr -> I64 (uint64 words, ta_ops, wrapping, signed
    max/min); else a bit op (bitwise_*, the four shifts) as op0 or op1 -> I32 (ts_int_ops:
    saturating add/subtract/mult, divide toward zero saturating with /0 -> 0, mod with the dividend's
    sign and %0 -> 0); else F32 (ts_ops, make_cases.TS). Shift counts outside 0..width-1 shift
    everything out (arithmetic right: sign fill).
  * conversions in (dec §2): int32 AP -> I32 as is; fp32 AP -> I32 by RNE + saturate (NaN -> MAX/MIN
    by sign); imm -> I32 by RNE + saturate; int64 AP -> I64 through fp32 (RNE to fp32, then to uint64,
    negative -> 0); imm -> I64 as (uint64_t)c (only integral immediates are used here, see A4).
  * conversions out: I32 -> int32 unchanged, -> fp32 RNE; I64 -> int64 through fp32 (RNE of the
    u64 to fp32, then clamp to INT64_MAX); F32 -> out dtype by refsim narrowing (make_cases.encode).
  * apply_transpose (dec §3.2, T2): only ins[0] is transposed, in the domain, 32 x 32 blocks
    (x.reshape(P//32, 32, F//32, 32).transpose(0, 3, 2, 1)); scalars / z / y / init index the
    transposed layout and are not transposed; P, F not multiples of 32 -> `shape` fault.
  * forms (dec §3.3): plain = seed 000 §2.2; STT R = op1(t, z) (reverse1: op1(z, t)); scan per row,
    always forward, u = op0(x, r) (reverse0: op0(r, x)), r = op1(u, y) (reverse1: op1(y, u)), every r
    written, r starts at init (absent -> 0).
  * acc (dec §3.4, T4): absent / Idle / Zero / ZeroAccumulate overwrite (no dtype restriction);
    Accumulate / AddAccumulate / LoadAccumulate: R' = convert(R) as a write, out = prev (+) R' through
    the shared fold (fidelity S16): floats widened to fp32, R' + prev in fp32, narrowed by RNE with FP8
    overflow -> Inf (config 0, i.e. ml_dtypes' non-saturating cast); ints wrap in the out dtype; a
    non-reducible out dtype is a `numerics` fault, output untouched.
  * the one new error (dec §4, T6): is_tensor_tensor_scan with is_scalar_tensor_tensor -> `bad-field`.

Ambiguities in the contract and the reading taken (also in the final report of the oracle session):
  A1 STT with s0 absent: dec §1 puts z at ins[2] with s0 "optional" at ins[1]; with only two
     operands the position of z is unclear. Every STT case here passes s0, so z is always ins[2].
  A2 Fault kinds for operand counts: dec §1/§3 say "a `count` fault", dec §4 "(`shape`/`count`)"
     and "(`shape`, ScalarCount)". Read as kind `shape` (cause Count / ScalarCount); the cases
     expect `fault shape` with no message text. Whether a statically visible z / y / out count
     mismatch is instead a validation error (as fidelity J36 does for the plain form) is not said;
     the cases follow the contract (a fault): fault_tsp_i32_stt_z_count, _scan_y_count,
     _scan_out_count, fault_tsp_i64_scan_init_count, fault_tsp_i32_scalar_count.
  A3 The header names fidelity IDs T1..T7, but §8 lists T1..T6 only; T7 is never cited here.
  A4 I64 immediates: dec §2 says "(uint64_t)c (N18 ...; for integral 0 <= c < 2^24 simply c)" without
     saying how a fractional c rounds (the x86-64 lowering truncates). Only integral immediates are
     used (including -1.0, which wraps to 2^64 - 1 as N18 says).
  A5 The unsupported-op message for ts_int_ops / ta_ops is not given; the cases expect only the
     substring "pow" (the op name).
  A6 Which ops make the domain I32: the contract lists bitwise_not/and/or/xor and the four shifts;
     bypass is read as not a bit op. A bit op decides the domain even when its stage has no scalar.
  A7 ts_int_ops / ta_ops membership beyond what dec §2/§4 name (e.g. comparisons) is not used.
  A8 "I64 (uint64) -> int64 out goes through fp32 (round the u64 to fp32 ...)": read as one RNE of
     the exact 64-bit value (u64_to_f32_int), not via a double; on this corpus's values both agree.
  A9 The T6 fault's operands: the contract does not say which operands such an instruction carries;
     the cases pass [data0, data1 (full tensor), third operand] and expect the fault before any
     operand is read, so the choice lines of those cases are T6 only.
"""
import numpy as np

I32_MIN, I32_MAX = -2**31, 2**31 - 1
I64_MAX = 2**63 - 1
M64 = (1 << 64) - 1
BITOPS = {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "arith_shift_left",
          "arith_shift_right", "logical_shift_left", "logical_shift_right"}
REDUCIBLE = {"float8e3", "float8e4", "float8e5", "bfloat16", "float16", "int32", "float32", "int64"}
RNG = np.random.default_rng(20261201)
F32 = np.float32


# ---------------------------------------------------------------- the integer ALUs (dec §2, N17)
def sat32(v):
    return max(I32_MIN, min(I32_MAX, v))


def wrap32(v):
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31


def tdiv(a, b):
    """Division toward zero on Python ints."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def i32op(op, a, b):
    """ts_int_ops on int32 values held as Python ints; acc = a (left operand)."""
    if op == "bypass":
        return a
    if op == "bitwise_not":
        return ~a
    if op == "bitwise_and":
        return a & b
    if op == "bitwise_or":
        return a | b
    if op == "bitwise_xor":
        return a ^ b
    if op == "add":
        return sat32(a + b)
    if op == "subtract":
        return sat32(a - b)
    if op == "mult":
        return sat32(a * b)
    if op == "divide":
        return 0 if b == 0 else sat32(tdiv(a, b))
    if op in ("mod", "mod_int"):
        return 0 if b == 0 else a - b * tdiv(a, b)
    if op == "max":
        return max(a, b)
    if op == "min":
        return min(a, b)
    inr = 0 <= b <= 31
    if op in ("arith_shift_left", "logical_shift_left"):
        return wrap32(a << b) if inr else 0
    if op == "arith_shift_right":
        return a >> b if inr else (-1 if a < 0 else 0)
    if op == "logical_shift_right":
        return wrap32((a & 0xFFFFFFFF) >> b) if inr else 0
    raise KeyError(op)


def s64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def i64op(op, a, b):
    """ta_ops on uint64 words held as Python ints in [0, 2^64); signed max/min."""
    if op == "bypass":
        return a
    if op == "bitwise_not":
        return ~a & M64
    if op == "bitwise_and":
        return a & b
    if op == "bitwise_or":
        return a | b
    if op == "bitwise_xor":
        return a ^ b
    if op == "add":
        return (a + b) & M64
    if op == "subtract":
        return (a - b) & M64
    if op == "mult":
        return (a * b) & M64
    if op == "max":
        return a if s64(a) >= s64(b) else b
    if op == "min":
        return a if s64(a) <= s64(b) else b
    inr = b <= 63
    if op in ("arith_shift_left", "logical_shift_left"):
        return (a << b) & M64 if inr else 0
    if op == "arith_shift_right":
        return (s64(a) >> b) & M64 if inr else (M64 if s64(a) < 0 else 0)
    if op == "logical_shift_right":
        return a >> b if inr else 0
    raise KeyError(op)


def u64_to_f32_int(r):
    """The fp32 value nearest (ties to even) to the unsigned integer r, as an exact Python int."""
    n = r.bit_length()
    if n <= 24:
        return r
    sh = n - 24
    q, rem, half = r >> sh, r & ((1 << sh) - 1), 1 << (sh - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    return q << sh


def f32_to_int_rne_sat(v, lo, hi):
    """Project cast fp32 -> integer (N12): RNE, clamp, NaN -> MAX (sign clear) / MIN (sign set)."""
    v = F32(v)
    if np.isnan(v):
        return lo if np.signbit(v) else hi
    return int(max(lo, min(hi, np.rint(np.float64(v)))))


# ---------------------------------------------------------------- the three domains
class Dom:
    def __init__(self, name):
        self.name = name

    def op(self, op, a, b):
        """Elementwise op over equal-shape arrays (object arrays for I32/I64, fp32 for F32)."""
        if self.name == "F32":
            return self.m["ts"](op, a, b)
        f = i32op if self.name == "I32" else i64op
        a, b = np.broadcast_arrays(a, b)
        out = np.empty(a.shape, object)
        for i in np.ndindex(a.shape):
            out[i] = f(op, int(a[i]), int(b[i]))
        return out

    def from_raw(self, raw, dt):
        """An AP operand of dtype dt into the domain (dec §2)."""
        if self.name == "F32":
            return self.m["decode"](raw, dt).astype(F32)
        out = np.empty(raw.shape, object)
        for i in np.ndindex(raw.shape):
            v = raw[i]
            if self.name == "I32":
                if dt == "int32":
                    out[i] = int(v)
                else:  # through fp32 (N12/N13)
                    out[i] = f32_to_int_rne_sat(self.m["decode"](np.array([v]), dt)[0], I32_MIN, I32_MAX)
            else:
                assert dt == "int64"
                f = u64_to_f32_int(abs(int(v)))  # int64 -> fp32 (RNE, sign-symmetric)
                out[i] = 0 if int(v) < 0 else min(f, M64)
        return out

    def from_imm(self, c):
        if self.name == "F32":
            return F32(c)
        if self.name == "I32":
            return f32_to_int_rne_sat(c, I32_MIN, I32_MAX)
        assert float(c) == int(c) and abs(c) < 2**24, "A4: integral small immediates only"
        return int(c) & M64

    def zero(self):
        return F32(0) if self.name == "F32" else 0

    def to_out(self, r, dt):
        """The domain result into the out dtype as a write converts it (dec §2)."""
        if self.name == "F32":
            return self.m["encode"](np.asarray(r, F32), dt)
        if self.name == "I32":
            if dt == "int32":
                return np.array(r, np.int64).astype(np.int32)
            assert dt == "float32"
            return np.array(r, np.int64).astype(np.float64).astype(F32)  # exact in f64, one RNE
        assert dt == "int64"
        out = np.empty(r.shape, np.int64)
        for i in np.ndindex(r.shape):
            f = u64_to_f32_int(int(r[i]))
            out[i] = I64_MAX if f >= 1 << 63 else f
        return out


def transpose32(x):
    p, f = x.shape
    return x.reshape(p // 32, 32, f // 32, 32).transpose(0, 3, 2, 1).reshape(p, f)


def fold_acc(prev, new, dt, m):
    """The shared accumulate (fidelity S16): prev (+) new, both stored in dt."""
    if dt == "int32":
        return ((prev.astype(np.int64) + new.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)
    if dt == "int64":
        out = np.empty(prev.shape, np.int64)
        for i in np.ndindex(prev.shape):
            out[i] = s64((int(prev[i]) + int(new[i])) & M64)
        return out
    assert dt in REDUCIBLE
    s = (m["decode"](new, dt) + m["decode"](prev, dt)).astype(F32)
    assert not np.isnan(s).any(), "NaN payload rules are not part of the contract"
    return s if dt == "float32" else m["encode"](s, dt, "nki")  # config 0: RNE, overflow -> Inf


def domain_of(fields):
    if fields.get("is_tensor_scalar_addr"):
        return "I64"
    if fields.get("op0") in BITOPS or fields.get("op1", "bypass") in BITOPS:
        return "I32"
    return "F32"


def expand(dom, spec, p, f):
    """A scalar operand spec -> a P x F domain array (fidelity S4: value k covers a run of P*F/count)."""
    if spec is None:
        return None
    kind, v, dt = spec
    if kind == "imm":
        return np.full((p, f), dom.from_imm(v), F32 if dom.name == "F32" else object)
    vals = dom.from_raw(np.asarray(v), dt).reshape(-1)
    assert (p * f) % vals.size == 0
    return np.repeat(vals, p * f // vals.size).reshape(p, f)


def evaluate(fields, x_raw, x_dt, s0, s1, init):
    """The instruction's result R in its domain (dec §3 steps 1-3). s1 is z (STT) or y (scan)."""
    dom = Dom(domain_of(fields))
    x = dom.from_raw(x_raw, x_dt)
    if fields.get("apply_transpose"):
        x = transpose32(x)
    p, f = x.shape
    op0, op1 = fields["op0"], fields.get("op1", "bypass")
    r0, r1 = fields.get("reverse0", False), fields.get("reverse1", False)
    if fields.get("is_tensor_tensor_scan"):
        y = dom.from_raw(s0[1], s0[2])  # ins[1] = data1, a full tensor
        if init is None:
            r = np.full(p, dom.zero(), F32 if dom.name == "F32" else object)
        elif init[0] == "imm":
            r = np.full(p, dom.from_imm(init[1]), F32 if dom.name == "F32" else object)
        else:
            r = dom.from_raw(np.asarray(init[1]), init[2]).reshape(p)
        out = np.empty((p, f), F32 if dom.name == "F32" else object)
        for e in range(f):
            u = dom.op(op0, r, x[:, e]) if r0 else dom.op(op0, x[:, e], r)
            r = dom.op(op1, y[:, e], u) if r1 else dom.op(op1, u, y[:, e])
            out[:, e] = r
        return dom, out
    sa = expand(dom, s0, p, f)
    t = x if sa is None else (dom.op(op0, sa, x) if r0 else dom.op(op0, x, sa))
    if fields.get("is_scalar_tensor_tensor"):
        z = dom.from_raw(s1[1], s1[2])
        return dom, (dom.op(op1, z, t) if r1 else dom.op(op1, t, z))
    sb = expand(dom, s1, p, f)
    return dom, (t if sb is None else (dom.op(op1, sb, t) if r1 else dom.op(op1, t, sb)))


ACCUMULATING = {"Accumulate", "AddAccumulate", "LoadAccumulate"}


def expected_out(fields, x_raw, x_dt, s0, s1, init, out_dt, prev):
    dom, r = evaluate(fields, x_raw, x_dt, s0, s1, init)
    new = dom.to_out(r, out_dt)
    if fields.get("acc") in ACCUMULATING:
        return fold_acc(prev, new, out_dt, dom.m)
    return new


# ---------------------------------------------------------------- program building
def add_cases(m):
    Dom.m = m
    Prog, ap, tile, imm, case, SIZE = m["Prog"], m["ap"], m["tile"], m["imm"], m["case"], m["SIZE"]

    def operand(g, name, spec, p):
        kind, v, dt = spec
        if kind == "imm":
            return imm(float(v) if not isinstance(v, str) else v)
        v = np.ascontiguousarray(v)
        vp = v.shape[0]
        vf = v.size // vp
        g.dram_in(name, dt, v)
        g.sb_bytes(f"{name}t", dt, vp, vf * SIZE[dt])
        g.inst("Load", [tile(name, dt, vp, vf)], [tile(f"{name}t", dt, vp, vf)])
        return tile(f"{name}t", dt, vp, vf)

    def build(x_raw, x_dt, s0, s1, init, out_dt, prev, fields, expected, direct_out=False):
        """Load the operands into SB tiles, (Load prev into the output,) run TensorScalarPtr, Save.
        direct_out: the instruction writes straight into the DRAM output pre-filled from prev (the
        fault cases: that output must stay as it was)."""
        g = Prog()
        p, f = x_raw.shape
        g.dram_in("x", x_dt, x_raw)
        g.sb_bytes("xt", x_dt, p, f * SIZE[x_dt])
        g.inst("Load", [tile("x", x_dt, p, f)], [tile("xt", x_dt, p, f)])
        ins = [tile("xt", x_dt, p, f)]
        names = ("data1", "s1") if fields.get("is_tensor_tensor_scan") else (
            ("s0", "z") if fields.get("is_scalar_tensor_tensor") else ("s0", "s1"))
        for nm, spec in zip(names, (s0, s1)):
            if spec is not None:
                ins.append(operand(g, nm, spec, p))
        if init is not None:
            if s1 is None and not fields.get("is_tensor_tensor_scan"):
                raise ValueError("init only with scan")
            ins.append(operand(g, "init", init, p))
        op_, of = expected.shape
        if direct_out:
            g.dram_in("prev", out_dt, prev)
            g.dram_out("y", out_dt, (op_, of), expected)
            g.inst("Load", [tile("prev", out_dt, op_, of)], [tile("y", out_dt, op_, of)])
            g.inst("TensorScalarPtr", ins, [tile("y", out_dt, op_, of)], **fields)
            return g
        g.sb_bytes("yt", out_dt, op_, of * SIZE[out_dt])
        if prev is not None:
            g.dram_in("prev", out_dt, prev)
            g.inst("Load", [tile("prev", out_dt, op_, of)], [tile("yt", out_dt, op_, of)])
        g.inst("TensorScalarPtr", ins, [tile("yt", out_dt, op_, of)], **fields)
        g.dram_out("y", out_dt, (op_, of), expected)
        g.inst("Save", [tile("yt", out_dt, op_, of)], [tile("y", out_dt, op_, of)])
        return g

    def cites(fields, s0, s1, extra=()):
        dom = domain_of(fields)
        c = set(extra)
        if fields.get("is_scalar_tensor_tensor") and fields.get("is_tensor_tensor_scan"):
            return sorted(c | {"T6"})  # refused before any form, domain or operand rule applies
        if dom != "F32":
            c |= {"T1", "S3", "N17"}
        if dom == "I64":
            c |= {"N12", "N18"}
        if fields.get("apply_transpose"):
            c.add("T2")
        if fields.get("is_scalar_tensor_tensor") and dom != "F32":
            c.add("T3")
        if fields.get("is_tensor_tensor_scan") and (dom != "F32" or fields.get("apply_transpose")):
            c.add("T5")
        if "acc" in fields:
            c.add("T4")
        if fields.get("acc") in ACCUMULATING:
            c.add("S16")
        scalars = [s0] if fields.get("is_scalar_tensor_tensor") else ([] if fields.get("is_tensor_tensor_scan") else [s0, s1])
        for s in scalars:
            if s is not None and s[0] == "ap" and np.asarray(s[1]).shape[1] != 1:
                c.add("S4")
        return sorted(c)

    def tsp(name, note, x_raw, x_dt, fields, s0=None, s1=None, init=None, out_dt=None, prev=None,
            check=None, extra=()):
        out_dt = out_dt or x_dt
        y = expected_out(fields, x_raw, x_dt, s0, s1, init, out_dt, prev)
        if check is not None:
            assert np.array_equal(np.asarray(y), np.asarray(check, y.dtype)), (name, y, check)
        g = build(x_raw, x_dt, s0, s1, init, out_dt, prev, fields, y)
        case(name, g, f"{note} (tspint decisions)", choices=cites(fields, s0, s1, extra))
        return y

    def tsp_fault(name, note, x_raw, x_dt, fields, fault, s0=None, s1=None, init=None, out_dt=None,
                  prev=None, extra=()):
        out_dt = out_dt or x_dt
        p, f = x_raw.shape
        if prev is None:
            prev = np.zeros((p, f), m["STORE"][out_dt])
        g = build(x_raw, x_dt, s0, s1, init, out_dt, prev, fields, prev.copy(), direct_out=True)
        case(name, g, f"{note}; the output, pre-filled, stays untouched (tspint decisions)", fault=fault,
             choices=cites(fields, s0, s1, extra))

    P_, F_ = 32, 16
    EDGES32 = [I32_MIN, I32_MAX, -1, 0, 1, I32_MIN + 1, I32_MAX - 1, -2, 2**24 + 1, -(2**24 + 1)]

    def i32data(shape, lo=I32_MIN, hi=I32_MAX, edges=True):
        x = RNG.integers(lo, hi, shape, dtype=np.int64, endpoint=True).astype(np.int32)
        if edges:
            x.reshape(-1)[:len(EDGES32)] = EDGES32
        return x

    def i32col(p, vals=(I32_MIN, I32_MAX, -1, 0, 1, 7, -7)):
        s = RNG.integers(I32_MIN, I32_MAX, (p, 1), dtype=np.int64, endpoint=True).astype(np.int32)
        s[:len(vals), 0] = vals
        return s

    def ap_(v, dt):
        return ("ap", np.asarray(v), dt)

    def im(c):
        return ("imm", c, None)

    # ================================================================ I32 plain (dec §3.3 plain, §2 conversions)
    x = i32data((P_, F_))
    tsp("tsp_i32_and_add_imm_saturates", "I32: (x & imm 2147483647.0 -> saturates to INT32_MAX) + imm 1e9, "
        "saturating add", x, "int32", dict(op0="bitwise_and", reverse0=False, op1="add", reverse1=False),
        s0=im(2147483647.0), s1=im(1e9))
    tsp("tsp_i32_xor_subtract_ptr", "I32: (x ^ s0) - s1, s0/s1 per-partition int32 APs holding INT32_MIN/MAX, "
        "saturating subtract", x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="subtract", reverse1=False),
        s0=ap_(i32col(P_), "int32"), s1=ap_(i32col(P_, (I32_MAX, I32_MIN, 1, -1)), "int32"))
    tsp("tsp_i32_reverse0_subtract_or", "I32: (s0 - x) | imm 4 with reverse0, s0 per partition, saturating",
        x, "int32", dict(op0="subtract", reverse0=True, op1="bitwise_or", reverse1=False),
        s0=ap_(i32col(P_), "int32"), s1=im(4.0))
    xs = i32data((P_, F_), 0, 63, edges=False)
    tsp("tsp_i32_reverse1_shift_scalar_by_data", "I32: s1 << (x & 63) with reverse1 (the data is the count; "
        "counts >= 32 give 0)", xs, "int32", dict(op0="bitwise_and", reverse0=False, op1="logical_shift_left",
        reverse1=True), s0=im(63.0), s1=ap_(i32col(P_, (1, -1, I32_MIN, I32_MAX, 3)), "int32"))
    counts = RNG.integers(-3, 40, (P_, F_), dtype=np.int64).astype(np.int32)
    counts.reshape(-1)[:12] = [-1, 0, 1, 31, 32, 33, 40, 63, 64, I32_MAX, I32_MIN, 30]
    for op in ("arith_shift_left", "arith_shift_right", "logical_shift_right", "logical_shift_left"):
        tsp(f"tsp_i32_{op}_counts_per_element", f"I32: x {op} c with one int32 count per element "
            "(-1, 0, 31, 32, 33, 64, INT32_MIN, ...; outside 0..31 everything shifts out)",
            x, "int32", dict(op0=op, reverse0=False, op1="bypass", reverse1=False), s0=ap_(counts, "int32"))
    dv = i32col(P_, (0, -1, 1, 7, -7, I32_MIN, I32_MAX, 2, -2))
    for op in ("divide", "mod"):
        tsp(f"tsp_i32_{op}_ptr", f"I32: (x | 0) {op} s1 per partition: toward zero, INT32_MIN / -1 saturates, "
            "by 0 gives 0, mod takes the dividend's sign", x, "int32",
            dict(op0="bitwise_or", reverse0=False, op1=op, reverse1=False), s0=im(0.0), s1=ap_(dv, "int32"))
    tsp("tsp_i32_not_mult_saturates", "I32: (~x) * s1 per partition, saturating mult",
        x, "int32", dict(op0="bitwise_not", reverse0=False, op1="mult", reverse1=False), s0=im(0.0),
        s1=ap_(i32col(P_, (2, -2, 0, 1, -1, 65536, I32_MIN)), "int32"))
    tsp("tsp_i32_max_min_ptr", "I32: min(max(x, s0), s1) signed, s0/s1 per partition, then reverse1",
        x, "int32", dict(op0="max", reverse0=False, op1="min", reverse1=True),
        s0=ap_(i32col(P_), "int32"), s1=ap_(i32col(P_), "int32"), extra=())
    tsp("tsp_i32_imm_rne", "I32: (x + imm 2.5 -> 2) ^ imm -3.5 -> -4 (immediates convert by RNE)",
        x, "int32", dict(op0="add", reverse0=False, op1="bitwise_xor", reverse1=False), s0=im(2.5), s1=im(-3.5))
    sf = np.array([2.5, -2.5, 3.5, -3.5, 1e10, -1e10, np.nan, -np.nan, 0.5, 1.5, -0.0, 2147483520.0]
                  + list(RNG.standard_normal(P_ - 12) * 1e6), F32).reshape(P_, 1)
    tsp("tsp_i32_fp32_scalar_ap_converts", "I32: x ^ s0 with s0 an fp32 per-partition AP: RNE, saturate, "
        "NaN -> MAX / -NaN -> MIN", x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="bypass", reverse1=False),
        s0=ap_(sf, "float32"), extra=("N12",))
    xn = i32data((P_, F_), I32_MAX - 100, I32_MAX, edges=False)
    tsp("tsp_i32_domain_from_op1_missing_s1", "I32 chosen by op1 = bitwise_and though s1 is absent: x + s0 "
        "saturates in int32 (the fp32 path would round), the second stage passes through",
        xn, "int32", dict(op0="add", reverse0=False, op1="bitwise_and", reverse1=False),
        s0=ap_(i32col(P_, (1, 50, 100, 2**24 + 1)), "int32"))
    tsp("tsp_i32_to_fp32_out", "I32 result written to an fp32 output: RNE of the int32 to fp32",
        x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="bypass", reverse1=False), s0=im(5.0),
        out_dt="float32")
    tsp("tsp_i32_half_row_scalars", "I32: x & s0 with 2 values per partition (each covers half a row), "
        "then >> imm 1", x, "int32", dict(op0="bitwise_and", reverse0=False, op1="arith_shift_right",
        reverse1=False), s0=ap_(i32data((P_, 2)), "int32"), s1=im(1.0))

    # ================================================================ I32 apply_transpose (T2)
    for (p, f), (op0, op1) in zip([(32, 32), (64, 32), (32, 64), (128, 128)],
                                  [("bitwise_and", "add"), ("bitwise_xor", "subtract"),
                                   ("logical_shift_left", "bitwise_or"), ("arith_shift_right", "max")]):
        xt = i32data((p, f))
        s0 = ap_(i32data((p, 1), 0, 40) if "shift" in op0 else i32col(p), "int32")
        tsp(f"tsp_i32_tr{p}x{f}_{op0}_{op1}", f"I32 apply_transpose {p}x{f}: the int32 words 32x32-block "
            f"transposed (no fp32 cast), then {op0} s0 (per partition of the transposed layout), {op1} imm",
            xt, "int32", dict(op0=op0, reverse0=False, op1=op1, reverse1=(p == 64), apply_transpose=True),
            s0=s0, s1=im(6.0 if op1 == "bitwise_or" else -7.0))
    # E3-like check of the mapping itself on int32: x[p][e] = 32p + e, bypass through an or with 0
    xe = (np.arange(64)[:, None] * 32 + np.arange(32)[None, :]).astype(np.int32)
    want = transpose32(xe.astype(object)).astype(np.int32)
    assert want[1, 0] == 1 and want[0, 1] == 32 and want[33, 2] == (32 + 2) * 32 + 1
    tsp("tsp_i32_tr64x32_mapping", "I32 apply_transpose 64x32 of x[p][e] = 32p + e: out[32b + a][e] = "
        "x[32b + e][a] (pure permutation through bitwise_or 0)", xe, "int32",
        dict(op0="bitwise_or", reverse0=False, op1="bypass", reverse1=False, apply_transpose=True), s0=im(0.0),
        check=want)

    # ================================================================ I32 scalar-tensor-tensor (T3)
    e1x = np.array([[5, 12], [-1, 255]], np.int32)
    e1z = np.array([[1, 2], [2147483647, -10]], np.int32)
    tsp("tsp_i32_stt_e1", "I32 STT (dec E1): (x & 6) + z, 6 + 2147483647 saturates", e1x, "int32",
        dict(op0="bitwise_and", reverse0=False, op1="add", reverse1=False, is_scalar_tensor_tensor=True),
        s0=im(6.0), s1=ap_(e1z, "int32"), check=[[5, 6], [2147483647, -4]])
    tsp("tsp_i32_stt_e1_reverse1_subtract", "I32 STT (dec E1): z - (x & 6) with reverse1", e1x, "int32",
        dict(op0="bitwise_and", reverse0=False, op1="subtract", reverse1=True, is_scalar_tensor_tensor=True),
        s0=im(6.0), s1=ap_(e1z, "int32"), check=[[-3, -2], [2147483641, -16]])
    xs2 = i32data((P_, F_), -5, 45, edges=False)
    xs2.reshape(-1)[:3] = [I32_MIN, I32_MAX, -1]
    s0s = i32data((P_, 1), 0, 40, edges=False)
    s0s[:4, 0] = [0, 31, 32, I32_MIN]
    for r0, r1 in [(False, False), (True, False), (False, True), (True, True)]:
        tag = f"{int(r0)}{int(r1)}"
        tsp(f"tsp_i32_stt_rev{tag}", f"I32 STT reverse0={r0} reverse1={r1}: t = x - s0 (s0 - x), s0 per "
            "partition, saturating; R = t >> z (z >> t), counts outside 0..31 sign-fill", xs2, "int32",
            dict(op0="subtract", reverse0=r0, op1="arith_shift_right", reverse1=r1, is_scalar_tensor_tensor=True),
            s0=ap_(s0s, "int32"),
            s1=ap_(i32data((P_, F_), -2, 40, edges=False) if not r1 else i32data((P_, F_)), "int32"))
    xt = i32data((64, 32))
    tsp("tsp_i32_stt_tr64x32", "I32 STT + apply_transpose 64x32: z + (T(x) >> imm 3) with reverse1, "
        "z not transposed, saturating add", xt, "int32",
        dict(op0="arith_shift_right", reverse0=False, op1="add", reverse1=True, is_scalar_tensor_tensor=True,
             apply_transpose=True), s0=im(3.0), s1=ap_(i32data((64, 32)), "int32"))

    # ================================================================ I32 scan (T5)
    e4x, e4y = np.array([[1, 2, 4]], np.int32), np.array([[8, 0, 16]], np.int32)
    scan = dict(op0="bitwise_xor", reverse0=False, op1="bitwise_or", reverse1=False, is_tensor_tensor_scan=True)
    tsp("tsp_i32_scan_e4", "I32 scan (dec E4): r = (x ^ r) | y from 0", e4x, "int32", scan,
        s0=ap_(e4y, "int32"), check=[[9, 11, 31]])
    tsp("tsp_i32_scan_e4_init_imm1", "I32 scan (dec E4): r = (x ^ r) | y from imm 1.0", e4x, "int32", scan,
        s0=ap_(e4y, "int32"), init=im(1.0), check=[[8, 10, 30]])
    xsm = i32data((P_, F_), -1000, 1000, edges=False)
    xcnt = i32data((P_, F_), 0, 2, edges=False)
    outs = {}
    for r0, r1, op0, op1, xd, yd, note in [
            (False, False, "subtract", "bitwise_and", xsm, i32data((P_, F_)), "r = (x - r) & y"),
            (True, False, "subtract", "bitwise_and", xsm, i32data((P_, F_)), "r = (r - x) & y"),
            (False, True, "bitwise_xor", "subtract", xsm, i32data((P_, F_), -5000, 5000), "r = y - (x ^ r)"),
            (True, True, "arith_shift_left", "subtract", xcnt, i32data((P_, F_), -5000, 5000),
             "r = y - (r << x), saturating")]:
        tag = f"{int(r0)}{int(r1)}"
        outs[tag] = tsp(f"tsp_i32_scan_rev{tag}", f"I32 scan reverse0={r0} reverse1={r1}: {note}, always "
                        "forward, init per partition", xd, "int32",
                        dict(op0=op0, reverse0=r0, op1=op1, reverse1=r1, is_tensor_tensor_scan=True),
                        s0=ap_(yd, "int32"), init=ap_(i32col(P_, (0, 1, -1, 100, -100)), "int32"))
    assert len({v.tobytes() for v in outs.values()}) == 4
    xb = i32data((P_, F_), 2**28, 2**30, edges=False)
    tsp("tsp_i32_scan_add_saturates", "I32 scan: r = (x + r) | y saturates at INT32_MAX and stays there",
        xb, "int32", dict(op0="add", reverse0=False, op1="bitwise_or", reverse1=False, is_tensor_tensor_scan=True),
        s0=ap_(i32data((P_, F_), 0, 15, edges=False), "int32"))
    tsp("tsp_i32_scan_negative_saturates_min", "I32 scan with reverse0: r = (r - x) ^ y from imm -2e9 runs "
        "down to INT32_MIN", i32data((P_, F_), 2**28, 2**30, edges=False), "int32",
        dict(op0="subtract", reverse0=True, op1="bitwise_xor", reverse1=False, is_tensor_tensor_scan=True),
        s0=ap_(i32data((P_, F_), 0, 3, edges=False), "int32"), init=im(-2e9))
    tsp("tsp_i32_scan_tr32x64", "I32 scan + apply_transpose 32x64: data0 transposed, data1 not: "
        "r = (T(x) ^ r) + y", i32data((32, 64), -10**6, 10**6), "int32",
        dict(op0="bitwise_xor", reverse0=False, op1="add", reverse1=False, is_tensor_tensor_scan=True,
             apply_transpose=True), s0=ap_(i32data((32, 64), -10**6, 10**6), "int32"), init=im(3.0))

    # ================================================================ I32 acc (T4, S16)
    e2x = np.array([[3], [2147483647]], np.int32)
    e2prev = np.array([[10], [1]], np.int32)
    plain_or = dict(op0="bitwise_or", reverse0=False, op1="bypass", reverse1=False)
    for acc in ("Accumulate", "AddAccumulate", "LoadAccumulate"):
        tsp(f"tsp_i32_acc_e2_{acc.lower()}", f"I32 plain + acc {acc} (dec E2): out = prev + (x | 0), the fold "
            "wraps (INT32_MAX + 1 = INT32_MIN)", e2x, "int32", dict(plain_or, acc=acc), s0=im(0.0), prev=e2prev,
            check=[[13], [-2147483648]])
    for acc in ("ZeroAccumulate", "Zero", "Idle"):
        tsp(f"tsp_i32_acc_e2_{acc.lower()}", f"I32 plain + acc {acc} (dec E2): overwrite, the output is not read",
            e2x, "int32", dict(plain_or, acc=acc), s0=im(0.0), prev=e2prev, check=[[3], [2147483647]])
    tsp("tsp_i32_acc_wraps_both_ways", "I32 (x ^ s0) + acc Accumulate into prev holding INT32_MIN/MAX: "
        "wrapping fold", x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="bypass", reverse1=False,
                                          acc="Accumulate"),
        s0=ap_(i32col(P_), "int32"), prev=i32data((P_, F_)))
    tsp("tsp_i32_stt_addaccumulate", "I32 STT (x << imm 4) - z, then AddAccumulate into prev (wraps)",
        x, "int32", dict(op0="arith_shift_left", reverse0=False, op1="subtract", reverse1=False,
                         is_scalar_tensor_tensor=True, acc="AddAccumulate"),
        s0=im(4.0), s1=ap_(i32data((P_, F_)), "int32"), prev=i32data((P_, F_)))
    tsp("tsp_i32_scan_loadaccumulate", "I32 scan r = (x & r) + y from init AP, then LoadAccumulate into prev "
        "(the accumulator loaded from the output)", x, "int32",
        dict(op0="bitwise_and", reverse0=False, op1="add", reverse1=False, is_tensor_tensor_scan=True,
             acc="LoadAccumulate"), s0=ap_(i32data((P_, F_)), "int32"), init=ap_(i32col(P_), "int32"),
        prev=i32data((P_, F_)))
    tsp("tsp_i32_scan_zeroaccumulate", "I32 scan r = (x | r) - y with ZeroAccumulate: overwrite",
        x, "int32", dict(op0="bitwise_or", reverse0=False, op1="subtract", reverse1=False, is_tensor_tensor_scan=True,
                         acc="ZeroAccumulate"), s0=ap_(i32data((P_, F_)), "int32"), prev=i32data((P_, F_)))
    tsp("tsp_i32_tr32x32_accumulate", "I32 apply_transpose 32x32, T(x) ^ imm -1, Accumulate into prev",
        i32data((32, 32)), "int32", dict(op0="bitwise_xor", reverse0=False, op1="bypass", reverse1=False,
                                         apply_transpose=True, acc="Accumulate"), s0=im(-1.0),
        prev=i32data((32, 32)))

    # ================================================================ I64 (is_tensor_scalar_addr)
    def i64data(shape, lo=0, hi=2**24 - 1):
        return RNG.integers(lo, hi, shape, dtype=np.int64, endpoint=True)

    A = dict(is_tensor_scalar_addr=True)
    e3 = (np.arange(32)[:, None] * 32 + np.arange(32)[None, :]).astype(np.int64)
    want = (np.arange(32)[None, :] * 32 + np.arange(32)[:, None] + 1).astype(np.int64)
    assert want[0, 1] == 33 and want[1, 0] == 2 and want[31, 31] == 1024 and want[3, 5] == 164
    tsp("tsp_i64_tr32x32_e3", "I64 apply_transpose (dec E3): out[p][e] = x[e][p] + 1 for x[p][e] = 32p + e",
        e3, "int64", dict(A, op0="add", reverse0=False, op1="bypass", reverse1=False, apply_transpose=True),
        s0=im(1.0), check=want)
    tsp("tsp_i64_tr128x128_xor_shift", "I64 apply_transpose 128x128: (T(x) ^ s0) << imm 3, s0 per partition "
        "(int64 AP) of the transposed layout", i64data((128, 128)), "int64",
        dict(A, op0="bitwise_xor", reverse0=False, op1="logical_shift_left", reverse1=False, apply_transpose=True),
        s0=ap_(i64data((128, 1)), "int64"), s1=im(3.0))
    tsp("tsp_i64_tr32x64_subtract_reverse0", "I64 apply_transpose 32x64: s0 - T(x) with reverse0 (negative "
        "differences wrap to 2^64 - d, signed negative for max), then max imm 5",
        i64data((32, 64), 0, 2000), "int64",
        dict(A, op0="subtract", reverse0=True, op1="max", reverse1=False, apply_transpose=True),
        s0=ap_(i64data((32, 1), 0, 2000), "int64"), s1=im(5.0))
    x64 = i64data((P_, F_))
    big = np.array([2**24 + 1, 2**24 + 3, 2**25 + 1, 2**25 + 2, 2**25 + 3, 2**24 - 1], np.int64)
    x64b = x64.copy()
    x64b.reshape(-1)[:6] = big
    xt64 = i64data((32, 32))
    xt64.reshape(-1)[:6] = big
    tsp("tsp_i64_tr32x32_data_above_2p24", "I64 apply_transpose with int64 data above 2^24: each value "
        "rounds through fp32 on the way in (16777217 -> 16777216), then + imm 1, written through fp32",
        xt64, "int64", dict(A, op0="add", reverse0=False, op1="bypass", reverse1=False, apply_transpose=True),
        s0=im(1.0))  # N13 (int -> int through fp32) is CONFIRMED: a fact, not a choice
    tsp("tsp_i64_imm_minus1_wraps", "I64: x + imm -1.0 ((uint64_t)-1 = 2^64 - 1, wrapping: x - 1; "
        "x = 0 gives 2^64 - 1, written as INT64_MAX), then min with s1 (signed)",
        np.where(np.arange(P_ * F_).reshape(P_, F_) % 5 == 0, 0, x64), "int64",
        dict(A, op0="add", reverse0=False, op1="min", reverse1=False), s0=im(-1.0),
        s1=ap_(i64data((P_, 1)), "int64"))
    c64 = RNG.integers(0, 70, (P_, F_), dtype=np.int64)
    c64.reshape(-1)[:8] = [0, 1, 39, 40, 63, 64, 65, 100]
    c64r = c64 % 26
    c64r.reshape(-1)[:8] = [0, 1, 23, 24, 63, 64, 65, 100]
    for op in ("logical_shift_left", "logical_shift_right", "arith_shift_right"):
        tsp(f"tsp_i64_{op}_counts_per_element", f"I64: x {op} c, one int64 count per element (0..100; "
            "64 and above shift everything out), results written through fp32",
            x64, "int64", dict(A, op0=op, reverse0=False, op1="bypass", reverse1=False),
            s0=ap_(c64 if op == "logical_shift_left" else c64r, "int64"))
    tsp("tsp_i64_stt_mult_add", "I64 STT: (x * s0) + z, s0 per partition, products past 2^24 round on the "
        "fp32 write", x64, "int64", dict(A, op0="mult", reverse0=False, op1="add", reverse1=False,
                                         is_scalar_tensor_tensor=True),
        s0=ap_(i64data((P_, 1), 0, 300), "int64"), s1=ap_(i64data((P_, F_)), "int64"))
    tsp("tsp_i64_stt_reverse1_subtract_wraps", "I64 STT with reverse1: z - (x & imm 4095), negative "
        "results wrap and write as INT64_MAX", x64, "int64",
        dict(A, op0="bitwise_and", reverse0=False, op1="subtract", reverse1=True, is_scalar_tensor_tensor=True),
        s0=im(4095.0), s1=ap_(i64data((P_, F_), 0, 8191), "int64"))
    tsp("tsp_i64_stt_tr32x32_accumulate", "I64 STT + apply_transpose + Accumulate: prev + ((T(x) | imm 1) "
        "max z)", xt64 % 2**20, "int64",
        dict(A, op0="bitwise_or", reverse0=False, op1="max", reverse1=False, is_scalar_tensor_tensor=True,
             apply_transpose=True, acc="Accumulate"), s0=im(1.0), s1=ap_(i64data((32, 32)), "int64"),
        prev=i64data((32, 32)))
    e7x = np.array([[1, 2], [3, 4]], np.int64)
    e7y = np.array([[10, 20], [30, 40]], np.int64)
    tsp("tsp_i64_scan_e7_addaccumulate", "I64 scan (dec E7): r = x * r + y from an int64 init AP "
        "[100, 1000], AddAccumulate into ones", e7x, "int64",
        dict(A, op0="mult", reverse0=False, op1="add", reverse1=False, is_tensor_tensor_scan=True,
             acc="AddAccumulate"), s0=ap_(e7y, "int64"), init=ap_(np.array([[100], [1000]], np.int64), "int64"),
        prev=np.ones((2, 2), np.int64), check=[[111, 241], [3031, 12161]])
    for r0, r1, op1, note in [(True, False, "add", "r = (r - x) + y"), (False, True, "subtract", "r = y - (x - r)"),
                              (True, True, "subtract", "r = y - (r - x)")]:
        tag = f"{int(r0)}{int(r1)}"
        tsp(f"tsp_i64_scan_rev{tag}", f"I64 scan reverse0={r0} reverse1={r1}: {note}, wrapping (a negative "
            "r writes as INT64_MAX through fp32), from imm 7", i64data((P_, F_), 0, 1000), "int64",
            dict(A, op0="subtract", reverse0=r0, op1=op1, reverse1=r1, is_tensor_tensor_scan=True),
            s0=ap_(i64data((P_, F_), 0, 1000), "int64"), init=im(7.0))
    tsp("tsp_i64_scan_tr64x32_max", "I64 scan + apply_transpose 64x32: r = (T(x) ^ r) max y",
        i64data((64, 32)), "int64", dict(A, op0="bitwise_xor", reverse0=False, op1="max", reverse1=False,
                                         is_tensor_tensor_scan=True, apply_transpose=True),
        s0=ap_(i64data((64, 32)), "int64"))
    nearmax = np.full((P_, F_), I64_MAX - 20, np.int64)
    nearmax.reshape(-1)[::3] = 5
    tsp("tsp_i64_accumulate_wraps_int64", "I64 x + imm 16, Accumulate into prev near INT64_MAX: the int64 "
        "fold wraps to negative", i64data((P_, F_), 0, 100), "int64",
        dict(A, op0="add", reverse0=False, op1="bypass", reverse1=False, acc="Accumulate"), s0=im(16.0),
        prev=nearmax)
    for acc in ("ZeroAccumulate", "Zero", "Idle"):
        tsp(f"tsp_i64_{acc.lower()}_overwrites", f"I64 x | s0 with {acc}: overwrite, the output is not read",
            x64, "int64", dict(A, op0="bitwise_or", reverse0=False, op1="bypass", reverse1=False, acc=acc),
            s0=ap_(i64data((P_, 1)), "int64"), prev=i64data((P_, F_)))
    tsp("tsp_i64_loadaccumulate", "I64 (x ^ s0) + s1 with LoadAccumulate: prev + R' in int64",
        x64, "int64", dict(A, op0="bitwise_xor", reverse0=False, op1="add", reverse1=False, acc="LoadAccumulate"),
        s0=ap_(i64data((P_, 1)), "int64"), s1=im(3.0), prev=i64data((P_, F_)))

    # ================================================================ F32 (the new F32 rows of dec §4)
    def f32data(shape, scale=10.0):
        return (RNG.standard_normal(shape) * scale).astype(F32)

    e5x = np.repeat(np.arange(32, dtype=F32)[:, None], 32, axis=1)
    e5y = (100 * e5x).astype(F32)
    ee = np.arange(32)
    want = (ee[None, :] * (ee[None, :] + 1) / 2 + 100 * ee[:, None] * (ee[None, :] + 1)).astype(F32)
    assert want[0, 31] == 496 and want[1, 0] == 100 and want[1, 1] == 201 and want[2, 3] == 806
    tsp("tsp_f32_scan_tr32x32_e5", "F32 scan + apply_transpose (dec E5): T(x)[p][e] = e, "
        "r = (e + r) + 100p, y not transposed", e5x, "float32",
        dict(op0="add", reverse0=False, op1="add", reverse1=False, is_tensor_tensor_scan=True, apply_transpose=True),
        s0=ap_(e5y, "float32"), check=want)
    tsp("tsp_f32_scan_tr64x32_reversed", "F32 scan + apply_transpose 64x32 with both reverse flags: "
        "u = r - T(x), r = y * u, from an fp32 init AP", f32data((64, 32), 1.0), "float32",
        dict(op0="subtract", reverse0=True, op1="mult", reverse1=True, is_tensor_tensor_scan=True,
             apply_transpose=True), s0=ap_(f32data((64, 32), 0.5), "float32"),
        init=ap_(f32data((64, 1)), "float32"))
    e6x = np.array([[1, 2]], F32)
    e6prev = np.array([[10, 20]], F32)
    for acc, want in [("LoadAccumulate", [[12, 23]]), ("Accumulate", [[12, 23]]), ("AddAccumulate", [[12, 23]]),
                      ("ZeroAccumulate", [[2, 3]]), ("Zero", [[2, 3]]), ("Idle", [[2, 3]])]:
        tsp(f"tsp_f32_e6_{acc.lower()}", f"F32 plain x + imm 1 with acc {acc} (dec E6)", e6x, "float32",
            dict(op0="add", reverse0=False, op1="bypass", reverse1=False, acc=acc), s0=im(1.0), prev=e6prev,
            check=want)
    tsp("tsp_f32_e6_zeroaccumulate_uint8", "F32 x + imm 1 into uint8 with ZeroAccumulate (dec E6): "
        "overwrite, no reducible-dtype check", e6x, "float32",
        dict(op0="add", reverse0=False, op1="bypass", reverse1=False, acc="ZeroAccumulate"), s0=im(1.0),
        out_dt="uint8", prev=np.array([[10, 20]], np.uint8), check=[[2, 3]])
    xf = f32data((P_, F_))
    tsp("tsp_f32_plain_loadaccumulate_ptr", "F32 (x * s0) - s1 per-partition, LoadAccumulate into prev",
        xf, "float32", dict(op0="mult", reverse0=False, op1="subtract", reverse1=True, acc="LoadAccumulate"),
        s0=ap_(f32data((P_, 1), 1.0), "float32"), s1=ap_(f32data((P_, 1)), "float32"), prev=f32data((P_, F_)))
    tsp("tsp_f32_stt_loadaccumulate_bf16", "F32 STT (x * imm 3) + z into bf16 with LoadAccumulate: the "
        "result rounds to bf16, then prev + it in fp32 rounds again", xf, "float32",
        dict(op0="mult", reverse0=False, op1="add", reverse1=False, is_scalar_tensor_tensor=True,
             acc="LoadAccumulate"), s0=im(3.0), s1=ap_(f32data((P_, F_)), "float32"), out_dt="bfloat16",
        prev=m["encode"](f32data((P_, F_), 100.0), "bfloat16"))
    big8 = f32data((P_, F_), 3e4)
    big8.reshape(-1)[:4] = [1e6, -1e6, 40000.0, -40000.0]
    prev8 = m["encode"](f32data((P_, F_), 3e4), "float8e5")
    prev8.reshape(-1)[:4] = [0x7B, 0xFB, 0x7B, 0xFB]  # +-57344
    tsp("tsp_f32_scan_loadaccumulate_float8e5", "F32 scan r = max(x, r) + 0 (y zeros: a running max) into float8e5 "
        "with LoadAccumulate: the result saturates as a write (refsim), the fold overflows to +-Inf",
        big8, "float32", dict(op0="max", reverse0=False, op1="add", reverse1=False, is_tensor_tensor_scan=True,
                              acc="LoadAccumulate"),
        s0=ap_(np.zeros((P_, F_), F32), "float32"), out_dt="float8e5", prev=prev8)  # N2 is CONFIRMED: a fact
    tsp("tsp_f32_scan_zeroaccumulate", "F32 scan r = (x + r) * y with ZeroAccumulate: overwrite",
        f32data((P_, F_), 1.0), "float32",
        dict(op0="add", reverse0=False, op1="mult", reverse1=False, is_tensor_tensor_scan=True, acc="ZeroAccumulate"),
        s0=ap_(f32data((P_, F_), 0.5), "float32"), prev=f32data((P_, F_)))
    tsp("tsp_f32_stt_tr32x64_accumulate_int32", "F32 STT + apply_transpose 32x64: (T(x) - imm 0.5) * z into "
        "int32 (RNE) with Accumulate (int32 fold wraps)", f32data((32, 64), 1000.0), "float32",
        dict(op0="subtract", reverse0=False, op1="mult", reverse1=False, is_scalar_tensor_tensor=True,
             apply_transpose=True, acc="Accumulate"), s0=im(0.5), s1=ap_(f32data((32, 64), 3.0), "float32"),
        out_dt="int32", prev=np.where(np.arange(32 * 64).reshape(32, 64) % 7 == 0, I32_MAX,
                                      i32data((32, 64), -10**6, 10**6, edges=False)).astype(np.int32),
        extra=("N12",))

    # ================================================================ more conversions (dec §2) and the -0.0 rule (dec §3.4)
    zf = (RNG.standard_normal((P_, F_)) * 1e3).astype(F32)
    zf.reshape(-1)[:10] = [2.5, -2.5, 3.5, -3.5, 1e10, -1e10, np.nan, -np.nan, -0.0, 0.5]
    tsp("tsp_i32_stt_fp32_z_converts", "I32 STT: (x & imm 255) + z with z an fp32 tensor: z converts by RNE + "
        "saturate (NaN -> MAX, -NaN -> MIN), then the saturating add", x, "int32",
        dict(op0="bitwise_and", reverse0=False, op1="add", reverse1=False, is_scalar_tensor_tensor=True),
        s0=im(255.0), s1=ap_(zf, "float32"), extra=("N12",))
    initf = np.array([2.5, -2.5, 3.5, 1e10, -1e10, np.nan, -np.nan, 0.49] + list(RNG.standard_normal(P_ - 8) * 100),
                     F32).reshape(P_, 1)
    tsp("tsp_i32_scan_fp32_init_ap_converts", "I32 scan r = (x | r) ^ y from an fp32 init AP (2.5 -> 2, 1e10 -> "
        "INT32_MAX, NaN -> MAX, ...)", i32data((P_, F_), -100, 100, edges=False), "int32",
        dict(op0="bitwise_or", reverse0=False, op1="bitwise_xor", reverse1=False, is_tensor_tensor_scan=True),
        s0=ap_(i32data((P_, F_), 0, 1000, edges=False), "int32"), init=ap_(initf, "float32"), extra=("N12",))
    tsp("tsp_i32_to_fp32_out_accumulate", "I32 x ^ imm 5 into fp32 with Accumulate: R rounds to fp32 (RNE), "
        "then prev + R in fp32", x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="bypass", reverse1=False,
                                                  acc="Accumulate"), s0=im(5.0), out_dt="float32",
        prev=f32data((P_, F_), 1e8))
    xz = f32data((P_, F_))
    xz.reshape(-1)[::2] = 0.0
    for acc in ("ZeroAccumulate", "Zero"):
        tsp(f"tsp_f32_{acc.lower()}_keeps_minus_zero", f"F32 x * imm -1 with {acc}: overwrite, so -0.0 "
            "(from +0 * -1) stays -0.0 (an add into a zeroed accumulator would give +0.0)", xz, "float32",
            dict(op0="mult", reverse0=False, op1="bypass", reverse1=False, acc=acc), s0=im(-1.0),
            prev=f32data((P_, F_)))

    # ================================================================ faults (output untouched)
    T6MSG = "is_scalar_tensor_tensor: cannot be combined with is_tensor_tensor_scan"
    both = dict(is_scalar_tensor_tensor=True, is_tensor_tensor_scan=True)
    tsp_fault("fault_tsp_i32_scan_and_stt", "I32 with is_tensor_tensor_scan and is_scalar_tensor_tensor: "
              "bad-field (dec §4)", x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="add", reverse1=False,
                                                     **both), ("bad-field", T6MSG),
              s0=ap_(i32data((P_, F_)), "int32"), init=im(1.0), prev=i32data((P_, F_)), extra=("T6",))
    tsp_fault("fault_tsp_i64_scan_and_stt", "I64 with both scan and STT flags: bad-field", x64, "int64",
              dict(A, op0="add", reverse0=False, op1="add", reverse1=False, **both), ("bad-field", T6MSG),
              s0=ap_(i64data((P_, F_)), "int64"), init=ap_(i64data((P_, 1)), "int64"), prev=i64data((P_, F_)),
              extra=("T6",))
    tsp_fault("fault_tsp_f32_scan_and_stt", "F32 with both scan and STT flags: bad-field", xf, "float32",
              dict(op0="add", reverse0=False, op1="mult", reverse1=False, **both), ("bad-field", T6MSG),
              s0=ap_(f32data((P_, F_)), "float32"), init=ap_(f32data((P_, F_)), "float32"),
              prev=f32data((P_, F_)), extra=("T6",))
    TRMSG = "apply_transpose needs partitions and free size that are multiples of 32"
    tsp_fault("fault_tsp_i32_transpose_free_48", "I32 apply_transpose on 32 x 48: shape fault", i32data((32, 48)),
              "int32", dict(op0="bitwise_and", reverse0=False, op1="bypass", reverse1=False, apply_transpose=True),
              ("shape", TRMSG), s0=im(255.0), prev=i32data((32, 48)))
    tsp_fault("fault_tsp_i64_transpose_partitions_48", "I64 apply_transpose on 48 x 32: shape fault",
              i64data((48, 32)), "int64", dict(A, op0="add", reverse0=False, op1="bypass", reverse1=False,
                                               apply_transpose=True), ("shape", TRMSG), s0=im(1.0),
              prev=i64data((48, 32)))
    tsp_fault("fault_tsp_f32_scan_transpose_16", "F32 scan + apply_transpose on 16 x 32: shape fault",
              f32data((16, 32)), "float32", dict(op0="add", reverse0=False, op1="add", reverse1=False,
                                                 is_tensor_tensor_scan=True, apply_transpose=True),
              ("shape", TRMSG), s0=ap_(f32data((16, 32)), "float32"), prev=f32data((16, 32)))
    tsp_fault("fault_tsp_f32_e6_loadaccumulate_uint8", "F32 x + imm 1 into uint8 with LoadAccumulate "
              "(dec E6): numerics fault, uint8 is not reducible", e6x, "float32",
              dict(op0="add", reverse0=False, op1="bypass", reverse1=False, acc="LoadAccumulate"),
              ("numerics", "uint8"), s0=im(1.0), out_dt="uint8", prev=np.array([[10, 20]], np.uint8),
              extra=("S16",))
    tsp_fault("fault_tsp_i32_accumulate_int16", "I32 x & imm 255 into int16 with Accumulate: numerics fault",
              x, "int32", dict(op0="bitwise_and", reverse0=False, op1="bypass", reverse1=False, acc="Accumulate"),
              ("numerics", "int16"), s0=im(255.0), out_dt="int16",
              prev=RNG.integers(-1000, 1000, (P_, F_)).astype(np.int16), extra=("S16",))
    tsp_fault("fault_tsp_i64_addaccumulate_uint64", "I64 x + imm 1 into uint64 with AddAccumulate: numerics "
              "fault", x64, "int64", dict(A, op0="add", reverse0=False, op1="bypass", reverse1=False,
                                          acc="AddAccumulate"), ("numerics", "uint64"), s0=im(1.0),
              out_dt="uint64", prev=i64data((P_, F_)).astype(np.uint64), extra=("S16",))
    tsp_fault("fault_tsp_i32_stt_accumulate_e4m3fn", "I32 STT into float8_e4m3fn with Accumulate: numerics "
              "fault", x, "int32", dict(op0="bitwise_and", reverse0=False, op1="add", reverse1=False,
                                        is_scalar_tensor_tensor=True, acc="Accumulate"),
              ("numerics", "float8_e4m3fn"), s0=im(7.0), s1=ap_(i32data((P_, F_), 0, 7), "int32"),
              out_dt="float8_e4m3fn", prev=np.full((P_, F_), 0x38, np.uint8), extra=("S16",))
    tsp_fault("fault_tsp_i32_pow_unsupported", "I32 (bitwise_and chose ts_int_ops) with op1 pow: pow is not in "
              "ts_int_ops, unsupported-op", x, "int32",
              dict(op0="bitwise_and", reverse0=False, op1="pow", reverse1=False), ("unsupported-op", "pow"),
              s0=im(15.0), s1=im(2.0), prev=i32data((P_, F_)), extra=())
    tsp_fault("fault_tsp_i64_scan_pow_unsupported", "I64 scan with op1 pow: pow is not in ta_ops, unsupported-op",
              x64, "int64", dict(A, op0="add", reverse0=False, op1="pow", reverse1=False, is_tensor_tensor_scan=True),
              ("unsupported-op", "pow"), s0=ap_(i64data((P_, F_)), "int64"), prev=i64data((P_, F_)))
    tsp_fault("fault_tsp_i32_stt_z_count", "I32 STT with z holding P x (F - 1) values: shape (count) fault",
              x, "int32", dict(op0="bitwise_and", reverse0=False, op1="add", reverse1=False,
                               is_scalar_tensor_tensor=True), ("shape", ""), s0=im(7.0),
              s1=ap_(i32data((P_, F_ - 1)), "int32"), prev=i32data((P_, F_)))
    tsp_fault("fault_tsp_i32_scan_y_count", "I32 scan with data1 holding P x 2F values: shape (count) fault",
              x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="add", reverse1=False,
                               is_tensor_tensor_scan=True), ("shape", ""),
              s0=ap_(i32data((P_, 2 * F_)), "int32"), prev=i32data((P_, F_)))
    tsp_fault("fault_tsp_i64_scan_init_count", "I64 scan with an init AP of 2 values per partition: shape fault",
              x64, "int64", dict(A, op0="add", reverse0=False, op1="add", reverse1=False, is_tensor_tensor_scan=True),
              ("shape", ""), s0=ap_(i64data((P_, F_)), "int64"), init=ap_(i64data((P_, 2)), "int64"),
              prev=i64data((P_, F_)))
    tsp_fault("fault_tsp_i32_scan_out_count", "I32 scan writing an output of P x (F - 2) values: shape (count) "
              "fault", x, "int32", dict(op0="bitwise_xor", reverse0=False, op1="add", reverse1=False,
                                        is_tensor_tensor_scan=True), ("shape", ""),
              s0=ap_(i32data((P_, F_)), "int32"), prev=i32data((P_, F_ - 2)))
    tsp_fault("fault_tsp_i32_scalar_count", "I32 x & s0 with s0 holding 3 values per partition (96 does not "
              "divide 512): shape (ScalarCount) fault", x, "int32",
              dict(op0="bitwise_and", reverse0=False, op1="bypass", reverse1=False), ("shape", ""),
              s0=ap_(i32data((P_, 3)), "int32"), prev=i32data((P_, F_)), extra=("S4",))
