#!/usr/bin/env python3
"""Writes the `programs/accumulate` conformance suite: BIR JSON programs exercising the per-engine
accumulator registers (plain Activation with `acc`, activate2, Exponential, and the read-outs
ReadActivationAccumulator / ActivationReadAccumulator / DveReadAccumulator), their .npy inputs and
the expected .npy outputs, computed here with NumPy / ml_dtypes / mpmath (pinned in
oracle/requirements.txt) from the spec E7-E10 (README.md; issue #28 items 4-6) and the Activation
per-element math E1-E5 (programs/activation/README.md), independently of birsim (nothing under
crates/ was read).

The oracle (`Prog`):
  * per-element values: E2/E3 as the activation generator computes them (`affine`: two NumPy float32
    roundings; `CLOSED` closed forms in f64, library calls correctly rounded with mpmath (`cr`);
    result np.float32, RNE). Every element's fp32 result is checked stable under +-1 f64 ulp moves of
    each library call (`evaluate`), as in the activation suite; unstable draws are redrawn;
  * activate2 (E9): v = fp32(data), then op0 / op1 as NumPy float32 operations (reverse swaps the
    operands), y = f(v) as above; no affine step (the `scale` key is ignored);
  * Exponential (E10): d = np.float32(x - max_value) (one fp32 subtraction), y = Exp(d) as above;
  * registers (E7): `Prog.regs[engine]`, 128 np.float32 values per engine ("Activation", "DVE"),
    +0.0 at the program start; Zero / ZeroAccumulate reset the instruction's rows to the reduce op's
    identity, LoadAccumulate (Exponential) loads reduce_init, then every row folds its elements in AP
    order one np.float32 operation at a time (`fold`: serial, one rounding per element), seeing the
    fp32 y before the dst cast;
  * read-outs (E8): dst row r := the engine's register r, cast to the dst dtype (ml_dtypes, RNE).

Run: /work/main/.venv/bin/python conformance/programs/accumulate/make_cases.py
"""
import itertools
import json
import os
import re
import sys
import warnings
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import ap, imm, tile  # noqa: E402

warnings.simplefilter("ignore")
np.seterr(all="ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64 = np.float32, np.float64
SEED = 20270501  # each case's RNG: np.random.default_rng([SEED, crc32(case name)])

# ---------------------------------------------------------------- dtypes and correctly rounded library calls
from actmath import SIZE, STORE, Lib, bits32, cr, encode, widen  # noqa: E402  (conformance/programs/actmath.py)


ONE, HALF, ZERO = F64(1.0), F64(0.5), F64(0.0)
SQRT2 = np.sqrt(F64(2.0))


def sig(x, L):
    return ONE / (L("exp", -x) + ONE)


CLOSED = {  # E3 (the functions this suite uses), a = f64(u), al = f64(alpha)
    "Identity": lambda a, al, L: a,
    "Copy": lambda a, al, L: a,
    "Square": lambda a, al, L: a * a,
    "Relu": lambda a, al, L: a if np.isnan(a) else (a if a > 0 else ZERO),
    "Prelu": lambda a, al, L: a if a > 0 else al * a,
    "Sigmoid": lambda a, al, L: sig(a, L),
    "Tanh": lambda a, al, L: L("tanh", a),
    "Exp": lambda a, al, L: L("exp", a),
    "Gelu": lambda a, al, L: HALF * a * (ONE + L("erf", a / SQRT2)),
    "Silu": lambda a, al, L: a / (ONE + L("exp", -a)),
    "Abs": lambda a, al, L: np.abs(a),
}
_EV = {}


def evaluate(fn, u, al=F32(0.0)):
    """(fp32 result of f at fp32 u, stable?): stable when every combination of -1/0/+1 f64 ulp
    moves of the library results gives the same fp32 bits."""
    key = (fn, bits32(u), bits32(al))
    if key in _EV:
        return _EV[key]
    a, alf = F64(F32(u)), F64(F32(al))
    L0 = Lib()
    r0 = F32(CLOSED[fn](a, alf, L0))
    ok = True
    for deltas in itertools.product((-1, 0, 1), repeat=L0.k):
        if any(deltas) and bits32(F32(CLOSED[fn](a, alf, Lib(deltas)))) != bits32(r0):
            ok = False
            break
    _EV[key] = (r0, ok)
    return _EV[key]


def affine(x, s, b):
    """E2: u = fp32(fp32(x * s) + b), two NumPy float32 roundings."""
    t = (np.asarray(x, F32) * np.asarray(s, F32)).astype(F32)
    return (t + np.asarray(b, F32)).astype(F32)


def alu(op, a, b):
    """E9: one fp32 operation (subtract is a - b)."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return {"add": a + b, "subtract": a - b, "mult": a * b}[op].astype(F32)


# ---------------------------------------------------------------- E7: the fold
def _fmaxf(acc, x):
    return x if (x > acc or np.isnan(acc)) else acc


def _fminf(acc, x):
    return x if (x < acc or np.isnan(acc)) else acc


OPS = {  # R, y -> new R (np.float32 scalars; each one rounding)
    "add": lambda r, y: F32(r + y),
    "max": _fmaxf,
    "min": _fminf,
    "abs_max": lambda r, y: _fmaxf(F32(abs(r)), F32(abs(y))),
    "abs_min": lambda r, y: _fminf(F32(abs(r)), F32(abs(y))),
}
RESET = {"add": F32(0.0), "max": F32(-np.inf), "min": F32(np.inf), "abs_max": F32(0.0), "abs_min": F32(np.inf)}


def fold(r, ys, op="add"):
    """Serial fold of ys (AP order) onto the fp32 register value r."""
    r = F32(r)
    for y in np.asarray(ys, F32).reshape(-1):
        r = F32(OPS[op](r, F32(y)))
    return r


def pairwise(ys):
    """A pairwise fp32 sum (halves), for the order-pinning assertions."""
    ys = np.asarray(ys, F32)
    if len(ys) == 1:
        return F32(ys[0])
    h = len(ys) // 2
    return F32(pairwise(ys[:h]) + pairwise(ys[h:]))


# ---------------------------------------------------------------- programs
ACT, DVE = "Activation", "DVE"


def as_f32(v):
    return float(F32(v))


class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Activation": ACT, "ActivationReadAccumulator": ACT,
               "ReadActivationAccumulator": ACT, "Exponential": DVE, "DveReadAccumulator": DVE}
    DEFAULT_ENGINE = ACT

    def __init__(self, arch="gen3"):
        super().__init__()
        self.arch = arch
        self.n = 0
        self.regs = {ACT: np.zeros(128, F32), DVE: np.zeros(128, F32)}  # E7: +0.0 at the start

    def program(self):
        d = super().program()
        d["arch"] = self.arch
        return d

    def fresh(self, stem):
        k = self.n
        self.n += 1
        return f"{stem}{k}"

    # ---- operands
    def operand(self, spec, p, stem="op"):
        """('imm', v) or ('ap', [p] values) -> (JSON operand, [p] fp32 values)."""
        kind, v = spec
        if kind == "imm":
            return imm(as_f32(v)), np.full(p, F32(v), F32)
        v = np.asarray(v, F32).reshape(p, 1)
        t = self.tile_in(self.fresh(stem), "float32", v)
        return tile(t, "float32", p, 1), v.reshape(p)

    def data_in(self, raw, dt, part=0, base=False, ap3=None):
        """raw [P, F] loaded into an SB tile; returns (data AP, its fp32 values in AP order [P, F]).
        part: the AP's first partition (base=False: an AP offset of part rows into a part + P
        partition tile; base=True: a location whose `base` is part). ap3 = (A, B): the data AP is
        [[F, P], [1, A], [A, B]] over a dense [P, A*B] tile (AP order = memory column-major)."""
        raw = np.ascontiguousarray(raw, STORE[dt])
        name = self.fresh("data")
        P, F = self.dram_in(name, dt, raw)
        t = name + "_t"
        off = 0
        if base:
            self.sb_bytes(t, dt, P, F * SIZE[dt], base=part)
        else:
            self.sb(t, dt, part + P, F)
            off = part * F
        self.inst("Load", [tile(name, dt, P, F)], [tile(t, dt, P, F, off)])
        x = widen(raw, dt)
        if ap3 is None:
            return tile(t, dt, P, F, off), x
        A, B = ap3
        assert A * B == F
        x = np.stack([x[p].reshape(B, A).T.reshape(-1) for p in range(P)])
        return ap(t, dt, [[F, P], [1, A], [A, B]], off), x

    def dst_out(self, dt, P, F, ap3=None):
        """A fresh SB dst tile [P, F]; returns (its name, the AP written: dense, AP order = memory)."""
        name = self.fresh("dst")
        self.sb(name, dt, P, F)
        if ap3 is None:
            return name, tile(name, dt, P, F)
        A, B = ap3
        return name, ap(name, dt, [[F, P], [B, A], [1, B]])

    def save_tile(self, src, dt, P, F, out, expected, off=0):
        self.dram_out(out, dt, (P, F), expected)
        self.inst("Save", [tile(src, dt, P, F, off)], [tile(out, dt, P, F)])

    # ---- E7 register update
    def accumulate(self, engine, acc, ys, op="add", init=None):
        R = self.regs[engine]
        P = ys.shape[0]
        if acc in (None, "Idle"):
            return
        if acc == "Zero":
            R[:P] = RESET[op]
            return
        if acc == "ZeroAccumulate":
            R[:P] = RESET[op]
        elif acc == "LoadAccumulate":
            R[:P] = np.asarray(init, F32)
        else:
            assert acc in ("Accumulate", "AddAccumulate"), acc
        for r in range(P):
            R[r] = fold(R[r], ys[r], op)

    # ---- Activation (E1-E3 + E7) and activate2 (E9)
    def activation(self, fn, raw, data_dt="float32", ops=(), keys=None, dst_dt="float32", acc=None,
                   a2=None, part=0, base=False, ap3=None, out=None, save=True):
        """Activation(fn) on data raw [P, F] (stored dtype). Plain: ops = (scale, bias, alpha) specs
        (trailing ones omitted), keys = JSON keys (scale, alpha, reduce_op...). activate2 (a2 = dict
        of op0 / op1 / reverse0 / reverse1 / reduce_op, written as given; absent keys = defaults):
        ops = (imm0, imm1, alpha). Returns (expected stored dst, fp32 y)."""
        keys = dict(keys or {})
        data, x = self.data_in(raw, data_dt, part, base, ap3)
        P, F = x.shape
        ins = [data]
        vals = []
        for spec in ops:
            o, v = self.operand(spec, P)
            ins.append(o)
            vals.append(v)
        alpha = vals[2] if len(vals) > 2 else np.full(P, F32(keys.get("alpha", 0.0)), F32)
        fields = {"func": fn}
        if a2 is None:
            scale = vals[0] if len(vals) > 0 else np.full(P, F32(keys.get("scale", 1.0)), F32)
            bias = vals[1] if len(vals) > 1 else np.zeros(P, F32)
            u = affine(x, scale[:, None], bias[:, None])
            op = keys.get("reduce_op", "add")
            assert op == "add"
        else:
            fields["is_activate2"] = True
            op0, op1 = a2.get("op0", "bypass"), a2.get("op1", "bypass")
            u = x.copy()
            if op0 != "bypass":
                i0 = vals[0][:, None]
                u = alu(op0, i0, u) if a2.get("reverse0", False) else alu(op0, u, i0)
            if op1 != "bypass":
                i1 = vals[1][:, None]
                u = alu(op1, i1, u) if a2.get("reverse1", False) else alu(op1, u, i1)
            op = a2.get("reduce_op", "add")
            fields.update(a2)
        y = np.zeros((P, F), F32)
        for i in range(P):
            for j in range(F):
                r0, ok = evaluate(fn, u[i, j], alpha[i])
                assert ok, (fn, u[i, j])
                y[i, j] = r0
        fields.update(keys)
        if acc is not None:
            fields["acc"] = acc
        self.accumulate(ACT, acc, y, op)
        if dst_dt == "bfloat16":
            assert not np.isnan(y).any()
        expected = encode(y, dst_dt)
        dname, dap = self.dst_out(dst_dt, P, F, ap3)
        self.inst("Activation", ins, [dap], engine=ACT, **fields)
        if save:
            self.save_tile(dname, dst_dt, P, F, out or self.fresh("out"), expected)
        return expected, y

    # ---- Exponential (E10)
    def exponential(self, raw, src_dt="float32", maxv=None, init=None, acc=None, dst_dt="float32",
                    out=None, engine=DVE, save=True):
        """Exponential on src raw [P, F]: ins = [src, max_value?, reduce_init?] (specs)."""
        src, x = self.data_in(raw, src_dt)
        P, F = x.shape
        ins = [src]
        m = np.zeros(P, F32)
        if maxv is not None:
            o, m = self.operand(maxv, P, "maxv")
            ins.append(o)
        iv = None
        if init is not None:
            assert maxv is not None
            o, iv = self.operand(init, P, "init")
            ins.append(o)
        d = (x - m[:, None]).astype(F32)  # one fp32 subtraction
        y = np.zeros((P, F), F32)
        for i in range(P):
            for j in range(F):
                r0, ok = evaluate("Exp", d[i, j])
                assert ok, d[i, j]
                y[i, j] = r0
        self.accumulate(engine, acc, y, "add", iv)
        expected = encode(y, dst_dt)
        dname, dap = self.dst_out(dst_dt, P, F)
        fields = {} if acc is None else {"acc": acc}
        self.inst("Exponential", ins, [dap], engine=engine, **fields)
        if save:
            self.save_tile(dname, dst_dt, P, F, out or self.fresh("out"), expected)
        return expected, y, d

    # ---- read-outs (E8)
    def read(self, engine, P, dst_dt="float32", out=None, opcode=None, part=0, prefill=None):
        """Read-out of the engine's registers 0..P-1 into a [P, 1] dst (at partition `part` of a
        part + P partition tile; prefilled by a Load when `prefill` is given), saved to `out`."""
        if opcode is None:
            opcode = "ActivationReadAccumulator" if engine == ACT else "DveReadAccumulator"
        expected = encode(self.regs[engine][:P].reshape(P, 1), dst_dt)
        name = self.fresh("rd")
        self.sb(name, dst_dt, part + P, 1)
        if prefill is not None:
            pre = self.fresh("pre")
            self.dram_in(pre, dst_dt, encode(np.asarray(prefill, F32).reshape(P, 1), dst_dt))
            self.inst("Load", [tile(pre, dst_dt, P, 1)], [tile(name, dst_dt, P, 1, part)])
        self.inst(opcode, [], [tile(name, dst_dt, P, 1, part)], engine=engine)
        self.save_tile(name, dst_dt, P, 1, out or self.fresh("read"), expected, part)
        return expected


CASES = {}


def case(name, g, note, choices, fault=None, error=None):
    assert name not in CASES, name
    CASES[name] = (g, note, tuple(choices), fault, error)


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def draw(rng, fn, P, F, lo, hi, u_of=lambda x, p: x, al=None, dt="float32"):
    """[P, F] fp32 data (representable in dt), uniform in [lo, hi], whose per-element u = u_of(x, p)
    gives a stable fn result (redrawn otherwise)."""
    al = np.zeros(P, F32) if al is None else np.asarray(al, F32)
    rows = []
    for p in range(P):
        got = []
        while len(got) < F:
            x = widen(encode(rng.uniform(lo, hi, 2 * F).astype(F32), dt), dt)
            u = u_of(x, p)
            for xi, ui in zip(x, u):
                if np.isnan(ui) or not evaluate(fn, ui, al[p])[1]:
                    continue
                got.append(xi)
                if len(got) == F:
                    break
        rows.append(got)
    return np.array(rows, F32)


def aff(s, b):
    """u_of for the plain affine step with per-row (or scalar) scale / bias."""
    s, b = np.asarray(s, F32), np.asarray(b, F32)
    return lambda x, p: affine(x, s[p] if s.ndim else s, b[p] if b.ndim else b)


KEYS = {"scale": 1.0, "alpha": 0.0}  # the 2.24 record's required keys, at their defaults
A7, A8, A9, A10 = "E7", "E8", "E9", "E10"

# ================================================================ plain Activation with acc (E7, E8)
name = "act_zeroacc_read_exp"
rng = rng_for(name)
g = Prog()
P, F = 8, 64
x = draw(rng, "Exp", P, F, -6, 4, aff(1.25, -0.375))
g.activation("Exp", x, ops=[("imm", 1.25), ("imm", -0.375)], keys=KEYS, acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
case(name, g, "NKI activation_reduce: Exp (scale imm 1.25, bias imm -0.375) with acc ZeroAccumulate on [8, 64], "
     "then ActivationReadAccumulator into [8, 1]: each row's serial fp32 sum of the fp32 results", (A7, A8, "E2", "E3"))

name = "act_zeroacc_read_square_ap_operands"
rng = rng_for(name)
g = Prog()
P, F = 8, 96
s = rng.uniform(-2, 2, P).astype(F32)
b = rng.uniform(-1, 1, P).astype(F32)
x = draw(rng, "Square", P, F, -3, 3, aff(s, b))
g.activation("Square", x, ops=[("ap", s), ("ap", b)], keys=KEYS, acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
case(name, g, "Square with scale and bias [8, 1] APs, ZeroAccumulate on [8, 96], read-out", (A7, A8, "E1", "E2", "E3"))

name = "act_zeroacc_read_identity_128"
rng = rng_for(name)
g = Prog()
P, F = 128, 32
x = draw(rng, "Identity", P, F, -100, 100)
g.activation("Identity", x, ops=[("imm", 0.75), ("imm", -0.25)], keys=KEYS, acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
case(name, g, "Identity with scale imm 0.75, bias imm -0.25 on all 128 partitions [128, 32], ZeroAccumulate, "
     "read-out of the 128 registers", (A7, A8, "E2"))

name = "act_accumulate_chain"
rng = rng_for(name)
g = Prog()
P = 4
x = draw(rng, "Exp", P, 48, -3, 3)
g.activation("Exp", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=KEYS, acc="ZeroAccumulate", out="dst_a")
g.read(ACT, P, out="sums_a")
x = draw(rng, "Tanh", P, 80, -4, 4, aff(0.5, 0.125))
g.activation("Tanh", x, ops=[("imm", 0.5), ("imm", 0.125)], keys=dict(KEYS, reduce_op="add"), acc="Accumulate",
             out="dst_b")
x = draw(rng, "Identity", P, 16, -50, 50)
g.activation("Identity", x, ops=[("imm", -2.0)], keys=KEYS, acc="Accumulate", out="dst_c")
g.read(ACT, P, out="sums_abc")
case(name, g, "three Activations folding into the same rows: Exp ZeroAccumulate [4, 48] (read 'sums_a'), Tanh "
     "Accumulate [4, 80] with the explicit key reduce_op 'add', Identity Accumulate [4, 16] (scale imm -2, no bias), "
     "read 'sums_abc' = the serial fold across all three", (A7, A8, "E2", "E3"))

name = "act_zero_then_accumulate"
rng = rng_for(name)
g = Prog()
P = 6
x = draw(rng, "Sigmoid", P, 32, -5, 5)
g.activation("Sigmoid", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=KEYS, acc="ZeroAccumulate", out="dst_a")
g.read(ACT, P, out="sums_a")
x = draw(rng, "Exp", P, 32, -2, 2)
g.activation("Exp", x, keys=KEYS, acc="Zero", out="dst_zero")
g.read(ACT, P, out="after_zero", prefill=np.full(P, 7.0))
x = draw(rng, "Gelu", P, 40, -3, 3)
g.activation("Gelu", x, keys=KEYS, acc="Accumulate", out="dst_b")
g.read(ACT, P, out="sums_b")
case(name, g, "Sigmoid ZeroAccumulate (read 'sums_a'); Exp with acc Zero: dst written, registers := +0, no fold "
     "('after_zero' all +0, its dst prefilled with 7.0); Gelu Accumulate from +0 ('sums_b' = Gelu's sums only)",
     (A7, A8, "E2", "E3"))

name = "act_idle_keeps_registers"
rng = rng_for(name)
g = Prog()
P = 8
x = draw(rng, "Exp", P, 24, -3, 2)
g.activation("Exp", x, keys=KEYS, acc="ZeroAccumulate", out="dst_a")
g.read(ACT, P, out="read1")
x = draw(rng, "Identity", P, 24, -10, 10)
g.activation("Identity", x, keys=KEYS, acc="Idle", out="dst_idle")
g.read(ACT, P, out="read2")
x = draw(rng, "Square", P, 24, -10, 10)
g.activation("Square", x, keys=KEYS, out="dst_absent")
g.read(ACT, P, out="read3", opcode="ReadActivationAccumulator")
case(name, g, "Exp ZeroAccumulate, read; Identity with acc Idle, read again; Square with no acc key, read with "
     "ReadActivationAccumulator (5): all three reads equal Exp's sums (Idle / absent and the reads leave the "
     "registers alone)", (A7, A8, "E2", "E3"))

name = "act_registers_start_zero"
rng = rng_for(name)
g = Prog()
pre = rng.uniform(1, 9, 128).astype(F32)
g.read(ACT, 128, out="act_read", prefill=pre)
g.read(ACT, 16, out="act_read5", opcode="ReadActivationAccumulator", prefill=-pre[:16])
g.read(DVE, 128, out="dve_read", prefill=pre[::-1].copy())
case(name, g, "the first instructions are read-outs: ActivationReadAccumulator (128 rows), ReadActivationAccumulator "
     "(16 rows) and DveReadAccumulator (128 rows), each dst prefilled with non-zero values, all read +0.0 (the "
     "registers start at +0)", (A7, A8))

name = "act_add_accumulate_equals_accumulate"
rng = rng_for(name)
g = Prog()
P = 5
xa = draw(rng, "Tanh", P, 40, -3, 3)
xb = draw(rng, "Exp", P, 56, -4, 1)
g.activation("Tanh", xa, keys=KEYS, acc="ZeroAccumulate", out="dst_a1")
g.activation("Exp", xb, keys=KEYS, acc="Accumulate", out="dst_b1")
r1 = g.read(ACT, P, out="with_accumulate")
g.activation("Tanh", xa, keys=KEYS, acc="ZeroAccumulate", out="dst_a2")
g.activation("Exp", xb, keys=KEYS, acc="AddAccumulate", out="dst_b2")
r2 = g.read(ACT, P, out="with_add_accumulate")
assert np.array_equal(r1.view(np.uint32), r2.view(np.uint32))
case(name, g, "the same two Activations twice (Tanh ZeroAccumulate, then Exp Accumulate / AddAccumulate): both "
     "read-outs are equal bit for bit", (A7, A8, "E3"))

name = "act_order_serial_fold"
rng = rng_for(name)
g = Prog()
F = 16
rows = [
    [1e8, 1, 1, 1, 1, 1, 1, 1, 1, -1e8, 0.5, 0.25, 0.125, 1, 1, 1],
    [1, 1e8, -1e8, 1, 2, 3, 1e8, 3, 3, 3, -1e8, 0.5, 0.5, 0.5, 0.5, -4],
    [1e8] + [3] * 15,
    [3e38, 3e38, -3e38, -1, 2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
]
rows += [list(v) for v in np.stack([rng.choice([-1, 1], F) * np.exp2(rng.uniform(-10, 26, F)) for _ in range(4)])]
x = np.array(rows, F32)
_, y = g.activation("Identity", x, ops=[("imm", 1.0), ("imm", -0.0)], keys=KEYS, acc="ZeroAccumulate", out="dst")
serial = [fold(0.0, r) for r in y]
for k in range(4):
    assert bits32(serial[k]) != bits32(F32(np.sum(y[k].astype(F64)))), k  # differs from the f64 sum
assert any(bits32(serial[k]) != bits32(fold(0.0, y[k][::-1])) for k in range(4))
assert any(bits32(serial[k]) != bits32(pairwise(y[k])) for k in range(4))
assert any(bits32(serial[k]) != bits32(F32(np.sum(y[k]))) for k in range(4))
g.read(ACT, 8, out="sums")
case(name, g, "order-pinning rows (Identity, scale 1, bias -0.0): 1e8, 1, ..., -1e8 patterns, 1e8 then 3s, "
     "3e38 + 3e38 (overflows to +Inf in fp32, stays Inf after -3e38), plus 4 rows of mixed magnitudes; the serial "
     "fp32 fold differs from the f64 sum (rows 0-3), the reversed fold, a pairwise sum and NumPy's float32 sum",
     (A7, A8))

name = "act_order_ap_order_3level"
rng = rng_for(name)
g = Prog()
P, A, B = 4, 12, 25  # F = 300
base = rng.choice([-1, 1], (P, A * B)) * np.exp2(rng.uniform(-6, 6, (P, A * B)))
base[:, 0] = 1e8  # memory column 0 = AP element 0
base[:, 1] = -1e8  # memory column 1 = AP element B (second row of the AP)
x = base.astype(F32)
_, y = g.activation("Identity", x, ops=[("imm", 1.0), ("imm", -0.0)], keys=KEYS, acc="ZeroAccumulate",
                    ap3=(A, B), out="dst")
for p in range(P):
    assert bits32(fold(0.0, y[p])) != bits32(fold(0.0, x[p])), p  # AP order != memory order
g.read(ACT, P, out="sums")
case(name, g, "data AP [[300, 4], [1, 12], [12, 25]] over a dense [4, 300] tile (AP order walks memory "
     "column-major), dst dense in AP order; 1e8 / -1e8 at memory columns 0 and 1 (AP positions 0 and 25): the fold "
     "follows AP order (free dims row-major), which differs from memory order in every row", (A7, A8))

name = "act_bf16_dst_fold_sees_fp32"
rng = rng_for(name)
g = Prog()
P, F = 8, 64
x = rng.uniform(1, 2, (P, F)).astype(F32)
_, y = g.activation("Identity", x, ops=[("imm", 1.0), ("imm", -0.0)], keys=KEYS, acc="ZeroAccumulate",
                    dst_dt="bfloat16", out="dst_id")
for p in range(P):
    assert bits32(fold(0.0, y[p])) != bits32(fold(0.0, widen(encode(y[p], "bfloat16"), "bfloat16"))), p
g.read(ACT, P, out="sums_id")
x = draw(rng, "Exp", P, 64, -2, 3)
_, y = g.activation("Exp", x, keys=KEYS, acc="ZeroAccumulate", dst_dt="bfloat16", out="dst_exp")
for p in range(P):
    assert bits32(fold(0.0, y[p])) != bits32(fold(0.0, widen(encode(y[p], "bfloat16"), "bfloat16"))), p
g.read(ACT, P, out="sums_exp")
case(name, g, "bfloat16 dst: Identity of fp32 values in [1, 2) and Exp, ZeroAccumulate; the registers sum the fp32 "
     "results before the bf16 cast (every row's sum differs from the sum of the bf16 values)", (A7, A8, "E3"))

name = "act_read_opcodes_5_and_101"
rng = rng_for(name)
g = Prog()
P = 8
x = draw(rng, "Silu", P, 40, -6, 6)
g.activation("Silu", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=KEYS, acc="ZeroAccumulate", out="dst")
r5 = g.read(ACT, P, out="read5", opcode="ReadActivationAccumulator")
r101 = g.read(ACT, P, out="read101", opcode="ActivationReadAccumulator")
assert np.array_equal(r5.view(np.uint32), r101.view(np.uint32))
case(name, g, "Silu ZeroAccumulate, then ReadActivationAccumulator (5) and ActivationReadAccumulator (101) into "
     "two dsts: identical", (A7, A8, "E3"))

name = "act_read_bf16_dst"
rng = rng_for(name)
g = Prog()
P, F = 8, 4
x = np.array([[1, 2.0 ** -8, 0, 0], [1, 3 * 2.0 ** -8, 0, 0], [1, 2.0 ** -8, 2.0 ** -20, 0],
              [-1, -(2.0 ** -8), 0, 0], [1e8, 1e8, 1, 1], [3e38, 3e38, 0, 0], [2.0 ** -130, 2.0 ** -140, 0, 0],
              [1, 2.0 ** -7, 2.0 ** -23, 2.0 ** -23]], F32)
_, y = g.activation("Identity", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=KEYS, acc="ZeroAccumulate", out="dst")
g.read(ACT, P, dst_dt="bfloat16", out="read_bf16")
g.read(ACT, P, out="read_f32")
case(name, g, "register values 1+2^-8 (bf16 tie to even: 1.0), 1+3*2^-8 (tie, up), 1+2^-8+2^-20 (above the tie: "
     "up), -(1+2^-8), 2e8 (the +1s absorbed), +Inf (3e38+3e38), an fp32 subnormal, 1+2^-7+2^-22, read into a bfloat16 dst (RNE) and "
     "into an fp32 dst", (A7, A8))

name = "act_partition32_rows"
rng = rng_for(name)
g = Prog()
x = draw(rng, "Identity", 8, 16, -4, 4)
g.activation("Identity", x, keys=KEYS, acc="ZeroAccumulate", out="dst_p0")
x = draw(rng, "Exp", 4, 24, -3, 2)
g.activation("Exp", x, keys=KEYS, acc="Accumulate", part=32, out="dst_p32_offset")
x = draw(rng, "Square", 2, 10, -2, 2)
g.activation("Square", x, keys=KEYS, acc="Accumulate", part=32, base=True, out="dst_p32_base")
g.read(ACT, 8, out="read_p0")
g.read(ACT, 8, out="read_p32", part=32)
case(name, g, "registers are indexed by the AP's row, not the partition: Identity ZeroAccumulate on partitions "
     "0-7 (rows 0-7); Exp Accumulate whose data AP starts at partition 32 (offset 32 rows into a 36-partition "
     "tile) adds into rows 0-3; Square Accumulate on a location with base 32 (2 partitions) adds into rows 0-1; "
     "read-outs of rows 0-7 into a dst at partition 0 and into one at partition 32", (A7, A8, "E3"))

name = "act_load_accumulate_not_implemented"
rng = rng_for(name)
g = Prog()
P = 4
x = draw(rng, "Exp", P, 16, -2, 2)
g.activation("Exp", x, keys=KEYS, acc="ZeroAccumulate", out="early_dst")
g.read(ACT, P, out="early_sums")
d, _ = g.data_in(x, "float32")
dname, dap = g.dst_out("float32", P, 16)
g.inst("Activation", [d, imm(1.0), imm(0.0)], [dap], engine=ACT, func="Exp", scale=1.0, alpha=0.0,
       acc="LoadAccumulate")
g.sb("late_rd", "float32", P, 1)
g.inst("ActivationReadAccumulator", [], [tile("late_rd", "float32", P, 1)], engine=ACT)
g._dram_out("late", "float32", (P, 1))
g.inst("Save", [tile("late_rd", "float32", P, 1)], [tile("late", "float32", P, 1)])
case(name, g, "plain Activation with acc LoadAccumulate: not implemented (no source says where its initial value "
     "lives): a run-time fault at that instruction; the earlier ZeroAccumulate's dst and "
     "read-out ('early_*') are intact, 'late' is never written", (A7,), fault="fault not-implemented |")


def error_case(name, note, choices, build):
    g = Prog(build.arch if hasattr(build, "arch") else "gen3")
    k = build(g)
    case(name, g, note, choices, error=f"error bad-field @ instruction #{k} 'i{k}' (Activation) |")


def _bad_reduce_op(g):
    d, _ = g.data_in(np.ones((4, 8), F32), "float32")
    _, dap = g.dst_out("float32", 4, 8)
    return g.inst("Activation", [d, imm(1.0), imm(0.0)], [dap], engine=ACT, func="Identity", scale=1.0, alpha=0.0,
                  acc="ZeroAccumulate", reduce_op="max")


error_case("act_reduce_op_max_error", "plain Activation (no is_activate2) with reduce_op 'max': a validation error "
           "(plain Activation reduces with add only); the program is only loaded and validated", (A7,), _bad_reduce_op)

# ================================================================ activate2 (E9)
A2KEYS = {"scale": 1.0, "alpha": 0.0}


def a2(op0="bypass", op1="bypass", rev0=False, rev1=False, reduce_op="add"):
    return {"op0": op0, "op1": op1, "reverse0": rev0, "reverse1": rev1, "reduce_op": reduce_op}


def a2_u(ops, imm0, imm1, rev=(False, False)):
    """u_of for activate2's two ALU stages (imm0 / imm1 per-row arrays or scalars)."""
    i0, i1 = np.asarray(imm0, F32), np.asarray(imm1, F32)
    i0 = np.full(128, i0, F32) if i0.ndim == 0 else i0
    i1 = np.full(128, i1, F32) if i1.ndim == 0 else i1

    def f(x, p):
        u = np.asarray(x, F32)
        if ops[0] != "bypass":
            u = alu(ops[0], i0[p], u) if rev[0] else alu(ops[0], u, i0[p])
        if ops[1] != "bypass":
            u = alu(ops[1], i1[p], u) if rev[1] else alu(ops[1], u, i1[p])
        return u
    return f


name = "a2_mult_add_imm"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 64
x = draw(rng, "Exp", P, F, -4, 4, a2_u(("mult", "add"), 1.5, -0.75))
g.activation("Exp", x, ops=[("imm", 1.5), ("imm", -0.75)], keys=A2KEYS, a2=a2("mult", "add"), acc="ZeroAccumulate",
             out="dst")
g.read(ACT, P, out="sums")
case(name, g, "activate2 (mult, add), imm0 1.5, imm1 -0.75 immediates: y = Exp(fp32(fp32(x*1.5) + -0.75)); "
     "ZeroAccumulate reduce_op add, read-out", (A7, A8, A9, "E3"))

name = "a2_mult_add_ap"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 48
i0 = rng.uniform(-2, 2, P).astype(F32)
i1 = rng.uniform(-1, 1, P).astype(F32)
x = draw(rng, "Tanh", P, F, -3, 3, a2_u(("mult", "add"), i0, i1))
g.activation("Tanh", x, ops=[("ap", i0), ("ap", i1)], keys=A2KEYS, a2=a2("mult", "add"), acc="ZeroAccumulate",
             out="dst")
g.read(ACT, P, out="sums")
case(name, g, "activate2 (mult, add) with imm0 and imm1 [8, 1] APs (one value per partition), Tanh, "
     "ZeroAccumulate add, read-out", (A7, A8, A9, "E3"))

name = "a2_mult_subtract_reverse"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 40
x = draw(rng, "Square", P, F, -4, 4)
g.activation("Square", x, ops=[("imm", 0.375), ("imm", 1.25)], keys=A2KEYS, a2=a2("mult", "subtract"),
             acc="ZeroAccumulate", out="dst_sub")
g.read(ACT, P, out="sums_sub")
i1 = rng.uniform(-3, 3, P).astype(F32)
g.activation("Identity", x, ops=[("imm", 0.375), ("ap", i1)], keys=A2KEYS,
             a2=a2("mult", "subtract", rev0=True, rev1=True), acc="ZeroAccumulate", out="dst_rsub")
g.read(ACT, P, out="sums_rsub")
case(name, g, "activate2 (mult, subtract): Square(fp32(x*0.375) - 1.25); then reverse0 and reverse1: "
     "Identity(imm1 - fp32(0.375*x)) with imm1 a [4, 1] AP; each ZeroAccumulate add and read", (A7, A8, A9))

name = "a2_mult_bypass"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 32
i0 = np.exp2(rng.uniform(-2, 2, P)).astype(F32) * rng.choice([-1, 1], P).astype(F32)
x = draw(rng, "Sigmoid", P, F, -6, 6, a2_u(("mult", "bypass"), i0, 0))
g.activation("Sigmoid", x, ops=[("ap", i0)], keys=A2KEYS, a2=a2("mult", "bypass"), acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
x2 = draw(rng, "Sigmoid", P, F, -6, 6, a2_u(("mult", "bypass"), -0.625, 0))
g.activation("Sigmoid", x2, ops=[("imm", -0.625)], keys=A2KEYS, a2=a2("mult", "bypass", rev0=True), acc="Accumulate",
             out="dst_rev")
g.read(ACT, P, out="sums2")
case(name, g, "activate2 (mult, bypass), ins = [data, imm0]: Sigmoid(x*imm0) with imm0 a [8, 1] AP (ZeroAccumulate), "
     "then with imm0 imm -0.625 and reverse0 (imm0*x, the same product) Accumulate", (A7, A8, A9, "E3"))

name = "a2_add_bypass"
rng = rng_for(name)
g = Prog("gen4")
P, F = 6, 50
i0 = rng.uniform(-2, 2, P).astype(F32)
x = draw(rng, "Gelu", P, F, -3, 3, a2_u(("add", "bypass"), i0, 0))
g.activation("Gelu", x, ops=[("ap", i0)], keys=A2KEYS, a2=a2("add", "bypass"), acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
case(name, g, "activate2 (add, bypass): Gelu(fp32(x + imm0)), imm0 a [6, 1] AP; ZeroAccumulate add, read",
     (A7, A8, A9, "E3"))

name = "a2_subtract_bypass_reverse0"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 32
x = draw(rng, "Exp", P, F, -3, 3, a2_u(("subtract", "bypass"), 0.7, 0))
g.activation("Exp", x, ops=[("imm", 0.7)], keys=A2KEYS, a2=a2("subtract", "bypass"), acc="ZeroAccumulate",
             out="dst_sub")
g.read(ACT, P, out="sums_sub")
g.activation("Exp", x, ops=[("imm", 0.7)], keys=A2KEYS, a2=a2("subtract", "bypass", rev0=True), acc="ZeroAccumulate",
             out="dst_rsub")
g.read(ACT, P, out="sums_rsub")
case(name, g, "activate2 (subtract, bypass), imm0 0.7: Exp(fp32(x - 0.7)), then with reverse0 Exp(fp32(0.7 - x)) "
     "on the same data; ZeroAccumulate add and read each", (A7, A8, A9, "E3"))

name = "a2_bypass_bypass_defaults"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 32
x = draw(rng, "Relu", P, F, -5, 5)
x[0, :4] = [-0.0, 0.0, -1.0, 2.5]
_, y = g.activation("Relu", x, keys={}, a2={}, acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
x2 = draw(rng, "Abs", P, F, -5, 5)
g.activation("Abs", x2, keys=A2KEYS, a2=a2(), acc="Accumulate", out="dst2")
g.read(ACT, P, out="sums2")
case(name, g, "activate2 with none of op0 / op1 / reverse0 / reverse1 / reduce_op / scale / alpha keys (bypass, "
     "bypass, false, false, add) and ins = [data]: Relu(x), ZeroAccumulate; then the same keys written out "
     "explicitly, Abs, Accumulate", (A7, A8, A9))

name = "a2_scale_key_ignored"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 32
x = draw(rng, "Square", P, F, -3, 3)
g.activation("Square", x, ops=[("imm", 0.5), ("imm", 1.0)], keys={"scale": 3.0, "alpha": 0.0},
             a2=a2("mult", "add"), acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="sums")
x = draw(rng, "Identity", P, F, -3, 3)
g.activation("Identity", x, keys={"scale": -2.0, "alpha": 0.0}, a2=a2(), acc="Accumulate", out="dst2")
g.read(ACT, P, out="sums2")
case(name, g, "activate2 ignores the scale key: (mult, add) Square(fp32(x*0.5) + 1.0) with key scale 3.0; then "
     "(bypass, bypass) Identity with key scale -2.0 (dst = x)", (A7, A8, A9))

name = "a2_reduce_max_all_negative"
rng = rng_for(name)
g = Prog("gen4")
P, F = 6, 24
x = -np.exp2(rng.uniform(-8, 8, (P, F))).astype(F32)
x[1, :3] = [-0.0, 0.0, -0.0]  # with the rest negative: max is the -0 met first (+0 ties keep it)
x[1, 3:] = -np.exp2(rng.uniform(-8, 8, F - 3)).astype(F32)
x[2, 0] = np.nan  # a NaN y first: ignored (R stays -inf)
x[2, 7] = np.nan
x[2, F - 1] = np.nan
x[3, :] = -(2.0 ** 100)  # all equal
x[4, :] = -np.inf
x[4, 5] = -(2.0 ** -149)
x = x.astype(F32)
_, y = g.activation("Identity", x, ops=[("imm", 1.0), ("imm", -0.0)], keys=A2KEYS, a2=a2("mult", "add", reduce_op="max"),
                    acc="ZeroAccumulate", out="dst")
R = [fold(F32(-np.inf), y[p], "max") for p in range(P)]
assert all(r < 0 or (r == 0 and np.signbit(r)) for r in R)
assert bits32(R[1]) == 0x80000000
g.read(ACT, P, out="maxes")
case(name, g, "activate2 (mult, add) imm0 1.0, imm1 -0.0, Identity, reduce_op max with ZeroAccumulate over all-"
     "negative rows: the reset is -inf, so each row's max is negative (a +0 reset would give +0); row 1: -0, +0, -0, "
     "negatives -> -0 (fmaxf keeps R on a tie); row 2: NaN y (first, middle, last) ignored; row 4: -inf and one "
     "-2^-149", (A7, A8, A9))

name = "a2_reduce_min_all_positive"
rng = rng_for(name)
g = Prog("gen4")
P, F = 6, 40
x = draw(rng, "Exp", P, F, -5, 5, a2_u(("mult", "bypass"), 0.8, 0))
x[1, 0] = np.nan
x[1, 10] = np.nan
x[2, :] = 200.0  # exp(160) = +Inf everywhere: min is +Inf
x[3, 3] = -200.0  # exp(-160) = 0: min 0
_, y = g.activation("Exp", x, ops=[("imm", 0.8)], keys=A2KEYS, a2=a2("mult", "bypass", reduce_op="min"),
                    acc="ZeroAccumulate", out="dst")
R = [fold(F32(np.inf), y[p], "min") for p in range(P)]
assert all(r > 0 for k, r in enumerate(R) if k != 3)
g.read(ACT, P, out="mins")
case(name, g, "activate2 (mult, bypass) imm0 0.8, Exp, reduce_op min with ZeroAccumulate: positive results, so the "
     "+inf reset shows (a +0 reset would give 0); row 1 has NaN y (ignored); row 2 all +Inf (min +Inf); row 3 "
     "one exp(-160) = +0", (A7, A8, A9, "E3"))

name = "a2_reduce_abs_max"
rng = rng_for(name)
g = Prog("gen4")
P, F = 6, 32
x = (rng.choice([-1, 1], (P, F)) * np.exp2(rng.uniform(-6, 6, (P, F)))).astype(F32)
x[0, 7] = -1000.0  # the largest magnitude is negative
x[1, :] = -np.abs(x[1, :])  # all negative
x[2, 4] = np.nan  # ignored
_, y = g.activation("Identity", x, ops=[("imm", 2.0)], keys=A2KEYS, a2=a2("add", "bypass", reduce_op="abs_max"),
                    acc="ZeroAccumulate", out="dst")
g.read(ACT, P, out="abs_maxes")
case(name, g, "activate2 (add, bypass) imm0 2.0, Identity, reduce_op abs_max with ZeroAccumulate (reset +0): each "
     "register is the largest |y| (row 0's is |-998|, row 1 all negative: still positive; a NaN y ignored)",
     (A7, A8, A9))

name = "a2_reduce_abs_min"
rng = rng_for(name)
g = Prog("gen4")
P, F = 6, 32
x = (rng.choice([-1, 1], (P, F)) * np.exp2(rng.uniform(3, 8, (P, F)))).astype(F32)
x[0, 9] = 5.5  # 3 - 5.5 = -2.5: the smallest magnitude comes from a negative y
x[1, :] = 2.0 ** 20
x[2, 3] = np.nan
_, y = g.activation("Identity", x, ops=[("imm", 3.0)], keys=A2KEYS,
                    a2=a2("subtract", "bypass", rev0=True, reduce_op="abs_min"), acc="ZeroAccumulate", out="dst")
R = [fold(F32(np.inf), y[p], "abs_min") for p in range(P)]
assert all(r >= 2 for r in R)
g.read(ACT, P, out="abs_mins")
case(name, g, "activate2 (subtract, bypass) reverse0, imm0 3.0: y = 3 - x, every |y| >= 2, reduce_op abs_min with "
     "ZeroAccumulate: the +inf reset shows (a +0 reset would give 0); row 0's smallest |y| is from y = -2.5; a NaN "
     "y ignored", (A7, A8, A9))

name = "a2_zero_sets_identity"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 16
x = draw(rng, "Identity", P, F, -5, 5)
g.activation("Identity", x, keys=A2KEYS, a2=a2(), acc="ZeroAccumulate", out="dst0")
g.read(ACT, P, out="r_add")
for k, op in enumerate(["max", "min", "abs_max", "add", "abs_min"]):
    x = draw(rng, "Square", P, F, -5, 5)
    g.activation("Square", x, keys=A2KEYS, a2=a2(reduce_op=op), acc="Zero", out=f"dst_zero_{op}")
    g.read(ACT, P, out=f"r_zero_{op}")
case(name, g, "activate2 acc Zero writes its dst and sets its rows to the reduce op's identity without folding: "
     "after an add ZeroAccumulate, Zero with max -> -inf, min -> +inf, abs_max -> +0, add -> +0, abs_min -> +inf "
     "(a read after each)", (A7, A8, A9))

name = "a2_accumulate_chain_max"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 20
x = draw(rng, "Tanh", P, F, -3, 3)
g.activation("Tanh", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=A2KEYS, a2=a2("mult", "add", reduce_op="max"),
             acc="ZeroAccumulate", out="dst_a")
g.read(ACT, P, out="max_a")
x = draw(rng, "Tanh", P, F, -3, 3)
g.activation("Tanh", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=A2KEYS, a2=a2("mult", "add", reduce_op="max"),
             acc="Idle", out="dst_idle")
x = draw(rng, "Tanh", P, F, -3, 3)
g.activation("Tanh", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=A2KEYS, a2=a2("mult", "add", reduce_op="max"),
             acc="Accumulate", out="dst_b")
g.read(ACT, P, out="max_ab")
x = draw(rng, "Tanh", P, F, -3, 3)
g.activation("Tanh", x, ops=[("imm", 1.0), ("imm", 0.0)], keys=A2KEYS, a2=a2("mult", "add", reduce_op="min"),
             acc="AddAccumulate", out="dst_c")
g.read(ACT, P, out="then_min")
case(name, g, "activate2 Tanh chain: max ZeroAccumulate (read), max Idle (no fold), max Accumulate (read: max over "
     "both folded instructions), then min AddAccumulate continuing from that max (read)", (A7, A8, A9, "E3"))

name = "a2_prelu_alpha"
rng = rng_for(name)
g = Prog("gen4")
P, F = 6, 32
x = draw(rng, "Prelu", P, F, -4, 4, a2_u(("mult", "add"), 1.5, -0.25), al=np.full(P, -0.3))
g.activation("Prelu", x, ops=[("imm", 1.5), ("imm", -0.25), ("imm", -0.3)], keys={"scale": 1.0, "alpha": 0.7},
             a2=a2("mult", "add"), acc="ZeroAccumulate", out="dst_imm")
g.read(ACT, P, out="sums_imm")
al = rng.uniform(-2, 2, P).astype(F32)
i0 = rng.uniform(0.5, 2, P).astype(F32)
i1 = rng.uniform(-1, 1, P).astype(F32)
x = draw(rng, "Prelu", P, F, -4, 4, a2_u(("mult", "add"), i0, i1), al=al)
g.activation("Prelu", x, ops=[("ap", i0), ("ap", i1), ("ap", al)], keys={"scale": 1.0, "alpha": 0.7},
             a2=a2("mult", "add"), acc="Accumulate", out="dst_ap")
g.read(ACT, P, out="sums_ap")
x = draw(rng, "Prelu", P, F, -4, 4, al=np.full(P, 0.2))
g.activation("Prelu", x, ops=[("imm", 1.0)], keys={"scale": 1.0, "alpha": 0.2}, a2=a2("mult", "bypass"),
             acc="Accumulate", out="dst_key")
g.read(ACT, P, out="sums_key")
case(name, g, "activate2 Prelu: (mult, add) with alpha imm -0.3 as ins[3] (beats the key alpha 0.7); (mult, add) "
     "with imm0, imm1, alpha all [6, 1] APs; (mult, bypass) ins = [data, imm0 1.0] with alpha from the key 0.2; "
     "add folds chained (ZeroAccumulate, Accumulate, Accumulate)", (A7, A8, A9, "E1"))


def _forbidden(op0, op1):
    def build(g):
        d, _ = g.data_in(np.ones((4, 8), F32), "float32")
        _, dap = g.dst_out("float32", 4, 8)
        return g.inst("Activation", [d, imm(1.0), imm(2.0)], [dap], engine=ACT, func="Identity", scale=1.0,
                      alpha=0.0, is_activate2=True, op0=op0, op1=op1, reverse0=False, reverse1=False,
                      reduce_op="add", acc="ZeroAccumulate")
    build.arch = "gen4"
    return build


for op0, op1 in [("add", "add"), ("bypass", "add"), ("mult", "mult")]:
    error_case(f"a2_forbidden_pair_{op0}_{op1}",
               f"activate2 with (op0, op1) = ({op0}, {op1}), not one of the six allowed pairs: a validation error "
               "(the program is only loaded and validated)", (A9,), _forbidden(op0, op1))

# ================================================================ Exponential (E10)
name = "exp_max_imm_zeroacc_read"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 64
x = draw(rng, "Exp", P, F, -6, 6, lambda x, p: (x - F32(1.5)).astype(F32))
g.exponential(x, maxv=("imm", 1.5), acc="ZeroAccumulate", out="dst")
g.read(DVE, P, out="sums")
case(name, g, "Exponential (103, DVE) max_value imm 1.5, ZeroAccumulate, DveReadAccumulator (102): "
     "y = fp32(exp(fp32(x - 1.5))), each row's serial fp32 sum", (A7, A8, A10))

name = "exp_softmax_max_ap_128"
rng = rng_for(name)
g = Prog("gen4")
P, F = 128, 24
x = rng.uniform(-8, 8, (P, F)).astype(F32)
m = x.max(axis=1)
for p in range(P):  # redraw unstable elements below the row max (the max itself: exp(0) = 1, exact)
    for j in range(F):
        while not evaluate("Exp", F32(x[p, j] - m[p]))[1]:
            x[p, j] = F32(rng.uniform(-8, float(m[p])))
g.exponential(x, maxv=("ap", m), acc="ZeroAccumulate", out="dst")
g.read(DVE, P, out="sums")
case(name, g, "softmax numerator on 128 partitions: max_value a [128, 1] AP holding each row's max, "
     "ZeroAccumulate, read-out of the 128 DVE registers (each sum >= 1)", (A7, A8, A10))

name = "exp_max_absent_acc_absent"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 32
x = draw(rng, "Exp", P, F, -5, 5)
g.exponential(x, maxv=("imm", -0.5), acc="ZeroAccumulate", out="dst_a")
x = draw(rng, "Exp", P, F, -5, 5)
x[0, :3] = [-0.0, 0.0, -np.inf]
g.exponential(x, out="dst_plain")
g.read(DVE, P, out="sums")
case(name, g, "Exponential max_value imm -0.5 with ZeroAccumulate; then ins = [src] (max_value absent = 0.0: "
     "exp(x - 0), -0 and +0 give 1, -inf gives 0) and no acc key: registers untouched, the read shows the first "
     "instruction's sums", (A7, A8, A10))

name = "exp_load_accumulate_imm"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 32
x = draw(rng, "Exp", P, F, -4, 2, lambda x, p: (x - F32(0.25)).astype(F32))
g.exponential(x, maxv=("imm", 0.25), init=("imm", 100.5), acc="LoadAccumulate", out="dst_a")
g.read(DVE, P, out="r_load")
g.exponential(x, maxv=("imm", 0.25), init=("imm", -1e9), acc="LoadAccumulate", out="dst_b")
g.read(DVE, P, out="r_load_big")
g.exponential(x, maxv=("imm", 0.25), init=("imm", 7.0), acc="ZeroAccumulate", out="dst_c")
g.read(DVE, P, out="r_zero_ignores_init")
case(name, g, "Exponential LoadAccumulate with reduce_init imm 100.5 (R := 100.5, then the fold), again with "
     "reduce_init -1e9 (the small terms are absorbed: -1e9), then ZeroAccumulate with a reduce_init imm 7.0 "
     "present but ignored", (A7, A8, A10))

name = "exp_load_accumulate_ap"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 40
mx = rng.uniform(-1, 1, P).astype(F32)
x = draw(rng, "Exp", P, F, -3, 3, lambda x, p: (x - mx[p]).astype(F32))
init = np.array([0.0, -0.0, 1.0, -5.0, 1e7, 3.25, -1e-3, 2.0 ** 24], F32)
g.exponential(x, maxv=("ap", mx), init=("ap", init), acc="LoadAccumulate", out="dst")
g.read(DVE, P, out="sums")
case(name, g, "Exponential LoadAccumulate with max_value and reduce_init both [8, 1] APs; reduce_init 0, -0, 1, "
     "-5, 1e7, 3.25, -1e-3, 2^24 per row (the fold starts from each)", (A7, A8, A10))

name = "exp_accumulate_chain"
rng = rng_for(name)
g = Prog("gen4")
P = 6
x = draw(rng, "Exp", P, 30, -4, 3)
g.exponential(x, maxv=("imm", 0.0), acc="ZeroAccumulate", out="dst_a")
g.read(DVE, P, out="r1")
x = draw(rng, "Exp", P, 50, -4, 3, lambda x, p: (x - F32(2.0)).astype(F32))
g.exponential(x, maxv=("imm", 2.0), acc="Accumulate", out="dst_b")
g.read(DVE, P, out="r2")
x = draw(rng, "Exp", P, 20, -4, 3, lambda x, p: (x + F32(1.0)).astype(F32))
g.exponential(x, maxv=("imm", -1.0), acc="AddAccumulate", out="dst_c")
g.read(DVE, P, out="r3")
x = draw(rng, "Exp", P, 20, -4, 3)
g.exponential(x, maxv=("imm", 0.0), acc="Idle", out="dst_idle")
g.read(DVE, P, out="r4")
case(name, g, "Exponential chain on DVE: ZeroAccumulate, Accumulate, AddAccumulate, Idle, a read after each",
     (A7, A8, A10))

name = "exp_zero_then_accumulate"
rng = rng_for(name)
g = Prog("gen4")
P = 4
x = draw(rng, "Exp", P, 16, -2, 2)
g.exponential(x, maxv=("imm", 0.0), acc="ZeroAccumulate", out="dst_a")
x = draw(rng, "Exp", P, 16, -2, 2)
g.exponential(x, maxv=("imm", 0.0), acc="Zero", out="dst_zero")
g.read(DVE, P, out="after_zero", prefill=np.full(P, 3.0))
x = draw(rng, "Exp", P, 16, -2, 2)
g.exponential(x, maxv=("imm", 0.0), acc="Accumulate", out="dst_b")
g.read(DVE, P, out="sums_b")
case(name, g, "Exponential ZeroAccumulate, then Zero (dst written, registers +0: the read shows +0 over a 3.0 "
     "prefill), then Accumulate from +0", (A7, A8, A10))

name = "exp_bf16_dst"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 48
x = draw(rng, "Exp", P, F, -3, 3, lambda x, p: (x - F32(0.5)).astype(F32))
_, y, _ = g.exponential(x, maxv=("imm", 0.5), acc="ZeroAccumulate", dst_dt="bfloat16", out="dst")
for p in range(P):
    assert bits32(fold(0.0, y[p])) != bits32(fold(0.0, widen(encode(y[p], "bfloat16"), "bfloat16"))), p
g.read(DVE, P, out="sums")
g.read(DVE, P, dst_dt="bfloat16", out="sums_bf16")
case(name, g, "Exponential with a bfloat16 dst (RNE of the fp32 y); the registers fold the fp32 y (every row's sum "
     "differs from the sum of the bf16 values); read-out into fp32 and into bf16", (A7, A8, A10))

name = "exp_subtraction_rounds"
rng = rng_for(name)
g = Prog("gen4")
P, F = 8, 64
mv = F32(0.1)
x = draw(rng, "Exp", P, F, -3, 3, lambda x, p: (x - mv).astype(F32))
_, y, d = g.exponential(x, maxv=("imm", float(mv)), acc="ZeroAccumulate", out="dst")
inexact = (d.astype(F64) != x.astype(F64) - F64(mv))
direct = np.array([[F32(cr("exp", F64(xx) - F64(mv))[0]) for xx in row] for row in x])
differ = (direct.view(np.uint32) != y.view(np.uint32))
assert inexact.sum() > P * F // 2 and differ.sum() >= 20, (inexact.sum(), differ.sum())
g.read(DVE, P, out="sums")
NOTE_SUB = (f"Exponential max_value imm fp32(0.1): x - max rounds in fp32 for {int(inexact.sum())} of {P * F} "
            f"elements, and for {int(differ.sum())} the result differs from exp of the exact (f64) difference; "
            "ZeroAccumulate, read")
case(name, g, NOTE_SUB, (A7, A8, A10))

name = "exp_large_negative_subnormal"
rng = rng_for(name)
g = Prog("gen4")
P, F = 4, 32
cand = np.concatenate([[-87.0, -87.33654475, -88.0, -90.0, -95.0, -100.0, -103.0, -103.278929903, -103.5,
                        -103.972077084, -104.0, -110.0, -150.0, -1e30, -np.inf, -0.0],
                       rng.uniform(-104.5, -87.5, 400)]).astype(F32)
keep = [v for v in cand if evaluate("Exp", v)[1]]
x = np.array(keep[: P * F], F32).reshape(P, F)
_, y, _ = g.exponential(x, maxv=("imm", 0.0), acc="ZeroAccumulate", out="dst")
sub = (y != 0) & (np.abs(y) < np.finfo(F32).tiny)
assert sub.sum() >= 20 and (y == 0).sum() >= 5, (sub.sum(), (y == 0).sum())
g.read(DVE, P, out="sums")
case(name, g, f"Exponential of large negatives (x - 0 from -87 to -1e30 and -inf): {int(sub.sum())} fp32 "
     f"subnormal results and {int((y == 0).sum())} zeros (exp correctly rounded to f64, then RNE to fp32, no flush), "
     "-0 gives 1 (row 0); rows 1-3 hold only subnormal or zero results, summed in fp32 without flushing", (A7, A8, A10))

# ================================================================ engine separation (E7)
name = "engines_have_separate_registers"
rng = rng_for(name)
g = Prog("gen4")
P = 8
xa = draw(rng, "Exp", P, 32, -3, 3)
g.activation("Exp", xa, keys=KEYS, acc="ZeroAccumulate", out="act_dst")
xe = draw(rng, "Exp", P, 32, -3, 3, lambda x, p: (x - F32(1.0)).astype(F32))
g.exponential(xe, maxv=("imm", 1.0), acc="ZeroAccumulate", out="exp_dst")
g.read(ACT, P, out="act_sums")
g.read(DVE, P, out="dve_sums")
xa2 = draw(rng, "Identity", P, 8, -3, 3)
g.activation("Identity", xa2, keys=KEYS, acc="Accumulate", out="act_dst2")
g.read(DVE, P, out="dve_sums_again")
g.read(ACT, P, out="act_sums2")
case(name, g, "an Activation (engine Activation) ZeroAccumulate and an Exponential (engine DVE) ZeroAccumulate on "
     "the same 8 rows, then both reads: each sees only its own engine's sums; a further Activation Accumulate "
     "leaves the DVE registers unchanged", (A7, A8, A10, "E3"))


# ---------------------------------------------------------------- writing
def report():
    L = ["<!-- BEGIN GENERATED by make_cases.py: do not edit by hand -->", "", f"### Cases ({len(CASES)})",
         "| case | arch | expects | what |", "|---|---|---|---|"]
    for n, (g, note, ch, fault, error) in CASES.items():
        kind = "error" if error else ("fault" if fault else "outputs")
        L.append(f"| `{n}` | {g.arch} | {kind} | {note.replace('|', '/')} |")
    L += ["", "<!-- END GENERATED -->"]
    return "\n".join(L)


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, choices, fault, error) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes / mpmath, the acc-spec E7-E10 "
                 "and activation E1-E5), never from birsim"]
        lines += [f"choice: {c}" for c in sorted(set(choices), key=lambda c: int(c[1:]))]
        lines.append(f"profile: {g.profile}")
        if fault:
            lines.append(fault)
        if error:
            lines.append(error)
            birprog.write_case(os.path.join(HERE, name), g.program(), lines)
        else:
            birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    readme = os.path.join(HERE, "README.md")
    text = open(readme).read() if os.path.exists(readme) else ""
    pat = re.compile(r"<!-- BEGIN GENERATED.*?<!-- END GENERATED -->", re.S)
    gen = report()
    text = pat.sub(lambda m: gen, text) if pat.search(text) else text + "\n" + gen + "\n"
    with open(readme, "w") as f:
        f.write(text)
    check()
    print(f"{len(CASES)} cases")


def check():
    """Every folder: valid JSON, case.expect, its input / output files present."""
    for name, (g, note, choices, fault, error) in CASES.items():
        d = os.path.join(HERE, name)
        with open(os.path.join(d, "case.json")) as f:
            json.load(f)
        lines = open(os.path.join(d, "case.expect")).read().splitlines()
        ins = [l for l in lines if l.startswith("input ")]
        outs = [l for l in lines if l.startswith("output ")]
        errs = [l for l in lines if l.startswith("error ")]
        if error:
            assert errs and not ins and not outs, name
        else:
            assert ins and outs, name
        for l in ins + outs:
            assert os.path.exists(os.path.join(d, l.split("=")[1].strip())), (name, l)


write_all()
