#!/usr/bin/env python3
"""Writes the `programs/kernels` conformance suite: two public NKI kernels (softmax over the free axis,
RMSNorm), hand-lowered to BIR JSON, with their .npy inputs and the expected .npy outputs.

The expected values come from an instruction-by-instruction emulation of the documented semantics
(docs/bir-json.md, docs/fidelity.md, seed 000, conformance/programs/activation/README.md E1-E5 and
the accumulator spec E7/E8/E10 of /work/notes/acc-spec.md), in NumPy float32 / float64 with mpmath
for exp, never from birsim: nothing under crates/ was read.

The emulation (one function per instruction kind, below):
  * TensorReduce (seed 000 3.1 applyEngReduce, fidelity S6, N16): per row a left fold from the first
    element, acc = op(acc, x_j) in fp32 (max: x > acc ? x : acc; add: one fp32 add per element);
    `negate` applied to the folded value;
  * Activation (E1-E3): u = fp32(fp32(x * scale) + bias) (two NumPy float32 operations), y = f(f64(u))
    rounded once to fp32 (RNE), dst = y cast to the dst dtype (ml_dtypes RNE). Exp: mpmath,
    correctly rounded to f64 (precision raised until two agree); Square: a*a in f64; Rsqrt:
    1/sqrt(a) in f64 (IEEE sqrt and division, one rounding each), then to fp32;
  * Exponential (E10): d = fp32(fp32(src) - max_value) (one fp32 subtraction), y = as Activation Exp
    on d;
  * the accumulators (E7): per engine ("Activation", "DVE"), one fp32 register per row (row r = data
    partition r); ZeroAccumulate := +0.0 then fold, Accumulate folds onto the current value; the
    fold is serial per row in AP order, R = fp32(R + y) with y the fp32 result BEFORE the output
    cast; ActivationReadAccumulator / DveReadAccumulator (E8) write R[r] to dst row r;
  * Reciprocal (fidelity S22): fp32 1.0 / x;
  * TensorScalar / TensorScalarPtr (seed 000 2.2, S4): out = op1(op0(x, s0), s1), each stage one fp32
    operation, the [P, 1] scalar broadcast along its row; the result cast to the output dtype;
  * TensorTensor (seed 000 2.3): out = op(in0, in1) in fp32;
  * Load / Save (seed 000 5.1 doCopy): element copies through the two APs (a partition-step-0 DRAM
    AP reads the same row for every partition: the weight broadcast).
Inputs that would make a result depend on exp's last f64 bit (the f64 exp moved by +-1 ulp changes
the fp32 result) are redrawn; none were found with these seeds (the count is in README.md).

Sanity (README "Error against float64"): each case's emulated outputs are compared with a plain
float64 NumPy softmax / RMSNorm of the same (widened) inputs; fp32 outputs must be within 1e-6
relative, bf16 outputs (two bf16 roundings) within 2^-7 relative.

Run: /work/main/.venv/bin/python conformance/programs/kernels/make_cases.py
"""
import os
import re
import sys
import zlib

import ml_dtypes as md
import mpmath
import numpy as np
from mpmath.libmp import to_float

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import ap, imm, tile  # noqa: E402

np.seterr(all="raise")
HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64 = np.float32, np.float64
SEED = 20270601  # each case's RNG: np.random.default_rng([SEED, crc32(case name)])
FP32, BF16 = "float32", "bfloat16"

STORE = {FP32: np.float32, BF16: np.uint16}
SIZE = {FP32: 4, BF16: 2}

U32, U16 = 2.0 ** -24, 2.0 ** -8  # unit roundoff of fp32 and bf16 (RNE)


def bound(n_fp32, n_bf16=0):
    """A-priori relative error bound of a kernel output against float64: n_fp32 fp32 roundings (a
    serial fold of n positive terms counts n - 1, Higham's gamma_{n-1}; exp(fl(x - max)) counts |x - max|
    for the subtraction's rounding) and n_bf16 bf16 roundings, first order."""
    return n_fp32 * U32 + n_bf16 * U16


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def encode(x, dt):
    """fp32 values -> stored array of dtype dt (RNE)."""
    x = np.asarray(x, F32)
    return x.astype(md.bfloat16).view(np.uint16) if dt == BF16 else x.copy()


def widen(raw, dt):
    """Stored values -> fp32 (exact)."""
    raw = np.asarray(raw)
    return raw.view(md.bfloat16).astype(F32) if dt == BF16 else raw.astype(F32)


# ---------------------------------------------------------------- exp, correctly rounded to f64
_CR = {}


def cr_exp(x):
    """exp(x) for the f64 x, correctly rounded to f64 (mpmath at 128, 192, 320, ... bits until two
    precisions give the same double; to_float(rnd='n') rounds to nearest)."""
    key = float(x)
    if key in _CR:
        return _CR[key]
    prev = None
    for prec in (128, 192, 320, 640, 1280):
        with mpmath.workprec(prec):
            y = to_float(mpmath.exp(mpmath.mpf(key))._mpf_, rnd="n")
        if prev is not None and y == prev:
            break
        prev = y
    else:
        raise AssertionError(key)
    _CR[key] = y
    return y


def exp_f32(u):
    """fp32 u -> (fp32 exp(u) = RNE(cr_f64(exp(u))), mask of unstable elements: moving the f64 result
    by -1 or +1 ulp changes the fp32 bits)."""
    u = np.asarray(u, F32)
    uniq, inv = np.unique(u, return_inverse=True)
    y64 = np.array([cr_exp(F64(v)) for v in uniq], F64)
    y32 = y64.astype(F32)
    lo, hi = np.nextafter(y64, -np.inf).astype(F32), np.nextafter(y64, np.inf).astype(F32)
    bad = (lo.view(np.uint32) != y32.view(np.uint32)) | (hi.view(np.uint32) != y32.view(np.uint32))
    bad &= y64 != 1.0  # exp(0) = 1 exactly (never moved)
    inv = inv.reshape(u.shape)
    return y32[inv], bad[inv]


# ---------------------------------------------------------------- instruction emulation
class Machine:
    """Engine accumulator registers (E7): one fp32 per row, +0.0 at program start."""

    def __init__(self):
        self.regs = {"Activation": np.zeros(128, F32), "DVE": np.zeros(128, F32)}
        self.unstable = 0

    def fold(self, engine, acc, y):
        """E7: acc None/Idle: nothing; ZeroAccumulate: := +0 then fold; Accumulate: fold. Serial per row,
        elements in AP order (row-major), one fp32 add each, y = the fp32 pre-cast result."""
        if acc in (None, "Idle"):
            return
        p = y.shape[0]
        r = self.regs[engine]
        if acc == "ZeroAccumulate":
            r[:p] = F32(0.0)
        else:
            assert acc == "Accumulate"
        y = y.reshape(p, -1)
        cur = r[:p].copy()
        for j in range(y.shape[1]):
            cur = (cur + y[:, j]).astype(F32)
        r[:p] = cur

    def read_acc(self, engine, p):
        """E8: dst row r := R[r]."""
        return self.regs[engine][:p].reshape(p, 1).copy()

    def activation(self, func, x, scale, bias, acc=None, engine="Activation"):
        """E1-E3 on fp32 x [P, F]; scale / bias an fp32 scalar or [P, 1] column. Returns fp32 y (pre-cast)."""
        t = (x * scale).astype(F32)
        u = (t + bias).astype(F32)
        if func == "Exp":
            y, bad = exp_f32(u)
            self.unstable += int(bad.sum())
            self.last_bad = bad
        elif func == "Square":
            a = u.astype(F64)
            y = (a * a).astype(F32)
        elif func == "Rsqrt":
            a = u.astype(F64)
            y = (F64(1.0) / np.sqrt(a)).astype(F32)
        else:
            raise AssertionError(func)
        self.fold(engine, acc, y)
        return y

    def exponential(self, src, max_value, acc=None):
        """E10: d = fp32(src - max_value); y = exp as Activation Exp; fold on DVE."""
        d = (src - max_value).astype(F32)
        y, bad = exp_f32(d)
        self.unstable += int(bad.sum())
        self.last_bad = bad
        self.fold("DVE", acc, y)
        return y


def reduce_x(x, op, negate=False):
    """TensorReduce axis X on [P, F]: left fold from the first element (seed 000 3.1), fp32."""
    acc = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        v = x[:, j]
        if op == "max":
            acc = np.where(v > acc, v, acc)  # N16: tie (and a NaN x, none here) keeps acc
        elif op == "add":
            acc = (acc + v).astype(F32)
        else:
            raise AssertionError(op)
    if negate:
        acc = -acc
    return acc.reshape(-1, 1).astype(F32)


ALU = {"mult": lambda a, b: a * b, "add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
       "divide": lambda a, b: a / b}


def stage(v, op, s):
    return v if op in (None, "bypass") else ALU[op](v, s).astype(F32)


def tensor_scalar(x, op0, s0, op1=None, s1=None):
    """out = op1(op0(x, s0), s1), each stage one fp32 operation (s an fp32 scalar or [P, 1] column)."""
    return stage(stage(x.astype(F32), op0, s0), op1, s1)


def reciprocal(x):
    return (F32(1.0) / x).astype(F32)


# ---------------------------------------------------------------- program building
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Activation": "Activation", "ActivationReadAccumulator": "Activation",
               "Memset": "Pool"}
    DEFAULT_ENGINE = "DVE"

    def __init__(self, arch="gen3"):
        super().__init__()
        self.arch = arch

    def program(self):
        d = super().program()
        d["arch"] = self.arch
        return d

    def col(self, name, p=128):
        """A [p, 1] fp32 SB column (one value per partition)."""
        self.sb(name, FP32, p, 1)
        return tile(name, FP32, p, 1)


CASES = {}
REPORT = []  # (case, output, dtype, max relative error, tolerance)
SENS = []  # (case, alternative reading, how many expected values it would change)


def differ(a, b):
    """How many elements differ in bits."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return int((a.view(np.uint32) != b.view(np.uint32)).sum())


def check(case, out, dt, emu, ref, tol):
    """emu (fp32 values of what the case expects) against the float64 kernel `ref`: within `tol`
    relative (the a-priori bound) for every element."""
    rel = float(np.max(np.abs(emu.astype(F64) - ref) / np.abs(ref)))
    assert rel <= tol, (case, out, rel, tol)
    REPORT.append((case, out, dt, rel, tol))


def case(name, g, m, note, source, instrs, choices):
    assert name not in CASES
    ops = [i["opcode"] for i in g.insts]
    assert set(ops) == set(instrs) | {"Load", "Save"}, (name, sorted(set(ops)), instrs)
    CASES[name] = (g, note, source, instrs, choices, m.unstable)


# ---------------------------------------------------------------- sources
SAMPLES = "aws-neuron/nki-samples@8370e11"
SDK_SOFTMAX = f"{SAMPLES} src/nki_samples/tutorials/softmax/softmax_nki_kernels.py (nki_softmax_kernel)"
SDK_RMS_QKV = f"{SAMPLES} src/nki_samples/reference/allocated_fused_linear.py (allocated_fused_rms_norm_qkv, its RMSNorm part)"
KLR_RMS = "leanprover/KLR@7ccd18c interop/test/examples/rmsnorm.py (nki_rmsnorm_kernel)"


def softmax64(x, scale=1.0):
    x = x.astype(F64) * F64(scale)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    s = e.sum(axis=1, keepdims=True)
    return e / s, s


def draw_logits(rng, shape, dt, sd=2.0):
    return encode(rng.normal(0.0, sd, shape).astype(F32), dt)


def redraw(rng, raw, bad, dt, sd=2.0):
    """Replaces the inputs flagged unstable by new draws (deterministic)."""
    raw = raw.copy()
    n = int(bad.sum())
    raw[bad] = encode(rng.normal(0.0, sd, n).astype(F32), dt)
    return raw


# ---------------------------------------------------------------- softmax, fused (accumulators)
def softmax_fused(name, F, in_dt, exp_dt, out_dt, use_exponential, note_extra, arch="gen3"):
    """TensorReduce max (negated for Activation), exp with its accumulator ZeroAccumulate, the
    accumulator read-out (row sums), Reciprocal, TensorScalarPtr multiply by the [P, 1] reciprocal."""
    P = 128
    rng = rng_for(name)
    raw = draw_logits(rng, (P, F), in_dt)
    while True:
        m = Machine()
        x = widen(raw, in_dt)
        if use_exponential:
            mx = reduce_x(x, "max")
            y = m.exponential(x, mx, acc="ZeroAccumulate")
            s = m.read_acc("DVE", P)
        else:
            nmx = reduce_x(x, "max", negate=True)
            y = m.activation("Exp", x, F32(1.0), nmx, acc="ZeroAccumulate")
            s = m.read_acc("Activation", P)
        if not m.last_bad.any():
            break
        raw = redraw(rng, raw, m.last_bad, in_dt)
    e_stored = encode(y, exp_dt)
    r = reciprocal(s)
    out = tensor_scalar(widen(e_stored, exp_dt), "mult", r)
    out_stored = encode(out, out_dt)
    n = f"{P} x 1"
    SENS.append((name, "row sums by NumPy's pairwise `np.sum` instead of the serial fold (E7)",
                 f"{differ(y.sum(axis=1, dtype=F32, keepdims=True), s)} of {n} rowsum"))
    if exp_dt == BF16:
        post = reduce_x(np.concatenate([np.zeros((P, 1), F32), widen(e_stored, exp_dt)], axis=1), "add")
        SENS.append((name, "accumulator folding the bf16 (post-cast) exp values instead of the fp32 pre-cast ones (E7)",
                     f"{differ(post, s)} of {n} rowsum"))
    if out_dt == FP32:
        SENS.append((name, "TensorScalarPtr divide by the row sum instead of Reciprocal then mult",
                     f"{differ(tensor_scalar(y, 'divide', s), out)} of {P} x {F} y"))
        y_np = np.exp((x + nmx if not use_exponential else x - mx).astype(F32).astype(F64)).astype(F32)
        SENS.append((name, "exp by NumPy / the platform libm (f64) instead of correctly rounded",
                     f"{differ(y_np, y)} of {P} x {F} exp values"))

    ref, ref_s = softmax64(x)
    dmax = float(np.max(x.max(axis=1, keepdims=True) - x))  # |x - max| rounds with error <= dmax * u
    check(name, "y", out_dt, widen(out_stored, out_dt), ref,
          bound(F + 4 + dmax, (exp_dt == BF16) + (out_dt == BF16)))
    check(name, "rowsum", FP32, s, ref_s, bound(F + 1 + dmax))

    g = Prog(arch)
    g.tile_in("x", in_dt, raw)
    g.sb("e", exp_dt, P, F)
    g.sb("y_t", out_dt, P, F)
    if use_exponential:
        mxap = g.col("mx")
        g.inst("TensorReduce", [tile("x_t", in_dt, P, F)], [mxap], op="max", axis="X", negate=False)
        g.inst("Exponential", [tile("x_t", in_dt, P, F), mxap], [tile("e", exp_dt, P, F)], engine="DVE",
               acc="ZeroAccumulate")
        sap = g.col("rowsum_t")
        g.inst("DveReadAccumulator", [], [sap], engine="DVE")
        instrs = ["TensorReduce", "Exponential", "DveReadAccumulator", "Reciprocal", "TensorScalarPtr"]
        choices = ["J29", "E2", "E3", "E7", "E8", "E10", "S22"]
    else:
        nap = g.col("negmax")
        g.inst("TensorReduce", [tile("x_t", in_dt, P, F)], [nap], op="max", axis="X", negate=True)
        g.inst("Activation", [tile("x_t", in_dt, P, F), imm(1.0), nap], [tile("e", exp_dt, P, F)],
               func="Exp", scale=1.0, alpha=0.0, acc="ZeroAccumulate")
        sap = g.col("rowsum_t")
        g.inst("ActivationReadAccumulator", [], [sap])
        instrs = ["TensorReduce", "Activation", "ActivationReadAccumulator", "Reciprocal", "TensorScalarPtr"]
        choices = ["J29", "E1", "E2", "E3", "E7", "E8", "S22"]
    rap = g.col("rsum")
    g.inst("Reciprocal", [sap], [rap])
    g.inst("TensorScalarPtr", [tile("e", exp_dt, P, F), rap], [tile("y_t", out_dt, P, F)], op0="mult",
           reverse0=False, op1="bypass", reverse1=False)
    g.save("y_t", "y", out_dt, P, F, out_stored)
    g.save("rowsum_t", "rowsum", FP32, P, 1, s)
    case(name, g, m,
         f"softmax over the free axis of a [{P}, {F}] {in_dt} tile (fused lowering): " + note_extra,
         SDK_SOFTMAX, instrs, choices)


softmax_fused("softmax_f32_activation_acc", 512, FP32, FP32, FP32, False,
              "TensorReduce max negate -> -max [P,1]; Activation Exp ins [x, scale imm 1.0, bias -max AP], "
              "acc ZeroAccumulate (ScalarE registers sum exp per row); ActivationReadAccumulator -> row sums; "
              "Reciprocal; TensorScalarPtr mult by the [P,1] reciprocal. Outputs: y [128,512] fp32, rowsum [128,1] fp32")
softmax_fused("softmax_bf16_activation_acc", 512, BF16, BF16, BF16, False,
              "bf16 input widened by every reader; Activation Exp writes a bf16 exp tile while its accumulator "
              "folds the fp32 pre-cast values (E7); TensorScalarPtr reads the bf16 exp tile and writes bf16 "
              "(the sample's out_tensor dtype = input dtype). Outputs: y [128,512] bf16, rowsum [128,1] fp32")
softmax_fused("softmax_f32_exponential_dve", 512, FP32, FP32, FP32, True,
              "TensorReduce max -> max [P,1]; Exponential (DVE) ins [x, max_value AP], acc ZeroAccumulate "
              "(VectorE registers); DveReadAccumulator -> row sums; Reciprocal; TensorScalarPtr mult. arch gen4. "
              "Outputs: y [128,512] fp32, rowsum [128,1] fp32", arch="gen4")
softmax_fused("softmax_bf16_exponential_dve", 512, BF16, FP32, BF16, True,
              "bf16 input; Exponential (DVE) with max_value AP into an fp32 exp tile, acc ZeroAccumulate; "
              "DveReadAccumulator; Reciprocal; TensorScalarPtr mult writing bf16. arch gen4. "
              "Outputs: y [128,512] bf16, rowsum [128,1] fp32", arch="gen4")


# ---------------------------------------------------------------- softmax, scaled, two exp chunks
def softmax_scaled_split(name, F=1024, chunk=512, head_dim=96):
    """Attention-style softmax(s*x) with s = fp32(1/sqrt(head_dim)): TensorReduce max; TensorScalar mult
    by -s -> bias; two Activation Exp instructions over column chunks (scale operand s, bias AP), the first
    acc ZeroAccumulate, the second Accumulate (the registers persist, E7); ActivationReadAccumulator;
    Reciprocal; TensorScalarPtr mult."""
    P = 128
    s32 = F32(1.0 / np.sqrt(head_dim))
    rng = rng_for(name)
    raw = draw_logits(rng, (P, F), FP32, sd=6.0)
    while True:
        m = Machine()
        x = widen(raw, FP32)
        mx = reduce_x(x, "max")
        nb = tensor_scalar(mx, "mult", -s32)
        ys, bads = [], []
        for c in range(F // chunk):
            ys.append(m.activation("Exp", x[:, c * chunk:(c + 1) * chunk], s32, nb,
                                   acc="ZeroAccumulate" if c == 0 else "Accumulate"))
            bads.append(m.last_bad)
        bad = np.concatenate(bads, axis=1)
        if not bad.any():
            break
        raw = redraw(rng, raw, bad, FP32, sd=6.0)
    y = np.concatenate(ys, axis=1)
    s = m.read_acc("Activation", P)
    r = reciprocal(s)
    out = tensor_scalar(y, "mult", r)
    ref, ref_s = softmax64(x, F64(s32))
    # u = fl(fl(x*s) + fl(-max*s)): absolute error <= (|x s| + |max s| + |u|) * u32
    amax = float(np.max(np.abs(x * F64(s32)) + np.abs(mx * F64(s32)) + np.abs(x - mx) * F64(s32)))
    check(name, "y", FP32, out, ref, bound(F + 5 + amax))
    check(name, "rowsum", FP32, s, ref_s, bound(F + 2 + amax))

    g = Prog()
    g.tile_in("x", FP32, raw)
    g.sb("e", FP32, P, F)
    g.sb("y_t", FP32, P, F)
    mxap = g.col("mx")
    nbap = g.col("nbias")
    g.inst("TensorReduce", [tile("x_t", FP32, P, F)], [mxap], op="max", axis="X", negate=False)
    g.inst("TensorScalar", [mxap], [nbap], op0="mult", const0=float(-s32), reverse0=False, op1="bypass",
           const1=0.0, reverse1=False)
    for c in range(F // chunk):
        g.inst("Activation", [tile("x_t", FP32, P, chunk, offset=c * chunk, row=F), imm(float(s32)), nbap],
               [tile("e", FP32, P, chunk, offset=c * chunk, row=F)], func="Exp", scale=float(s32), alpha=0.0,
               acc="ZeroAccumulate" if c == 0 else "Accumulate")
    sap = g.col("rowsum_t")
    g.inst("ActivationReadAccumulator", [], [sap])
    rap = g.col("rsum")
    g.inst("Reciprocal", [sap], [rap])
    g.inst("TensorScalarPtr", [tile("e", FP32, P, F), rap], [tile("y_t", FP32, P, F)], op0="mult",
           reverse0=False, op1="bypass", reverse1=False)
    g.save("y_t", "y", FP32, P, F, out)
    g.save("rowsum_t", "rowsum", FP32, P, 1, s)
    case(name, g, m,
         f"attention-style softmax(s*x) over the free axis of a [{P}, {F}] fp32 tile, s = fp32(1/sqrt({head_dim})) = "
         f"{float(s32)!r}: TensorReduce max; TensorScalar mult by -s -> bias [P,1]; Activation Exp on columns 0..{chunk} "
         f"(scale operand imm s, bias AP, acc ZeroAccumulate) then on columns {chunk}..{F} (acc Accumulate: the "
         "ScalarE registers persist across instructions); ActivationReadAccumulator; Reciprocal; TensorScalarPtr mult. "
         "Outputs: y, rowsum",
         SDK_SOFTMAX + " with attention's 1/sqrt(d) scale (engines.md section 3 #6, #7)",
         ["TensorReduce", "TensorScalar", "Activation", "ActivationReadAccumulator", "Reciprocal", "TensorScalarPtr"],
         ["J29", "E1", "E2", "E3", "E7", "E8", "S22"])


softmax_scaled_split("softmax_f32_scaled_two_chunks")


# ---------------------------------------------------------------- softmax, the sample's unfused form
def softmax_unfused(name, F=512):
    """The sample op for op: nl.max -> TensorReduce max; nl.subtract -> TensorScalarPtr subtract [P,1];
    nl.exp -> Activation Exp (no accumulator); nl.sum -> TensorReduce add; divide -> TensorScalarPtr divide."""
    P = 128
    rng = rng_for(name)
    raw = draw_logits(rng, (P, F), FP32)
    while True:
        m = Machine()
        x = widen(raw, FP32)
        mx = reduce_x(x, "max")
        sh = tensor_scalar(x, "subtract", mx)
        y = m.activation("Exp", sh, F32(1.0), F32(0.0))
        if not m.last_bad.any():
            break
        raw = redraw(rng, raw, m.last_bad, FP32)
    s = reduce_x(y, "add")
    out = tensor_scalar(y, "divide", s)
    ref, ref_s = softmax64(x)
    dmax = float(np.max(mx - x))
    check(name, "y", FP32, out, ref, bound(F + 3 + dmax))
    check(name, "rowsum", FP32, s, ref_s, bound(F + 1 + dmax))

    g = Prog()
    g.tile_in("x", FP32, raw)
    for t in ("sh", "e", "y_t"):
        g.sb(t, FP32, P, F)
    mxap = g.col("mx")
    g.inst("TensorReduce", [tile("x_t", FP32, P, F)], [mxap], op="max", axis="X", negate=False)
    g.inst("TensorScalarPtr", [tile("x_t", FP32, P, F), mxap], [tile("sh", FP32, P, F)], op0="subtract",
           reverse0=False, op1="bypass", reverse1=False)
    g.inst("Activation", [tile("sh", FP32, P, F)], [tile("e", FP32, P, F)], func="Exp", scale=1.0, alpha=0.0)
    sap = g.col("rowsum_t")
    g.inst("TensorReduce", [tile("e", FP32, P, F)], [sap], op="add", axis="X", negate=False)
    g.inst("TensorScalarPtr", [tile("e", FP32, P, F), sap], [tile("y_t", FP32, P, F)], op0="divide",
           reverse0=False, op1="bypass", reverse1=False)
    g.save("y_t", "y", FP32, P, F, out)
    g.save("rowsum_t", "rowsum", FP32, P, 1, s)
    case(name, g, m,
         f"softmax over the free axis of a [{P}, {F}] fp32 tile, the sample op for op (no accumulators): TensorReduce "
         "max; TensorScalarPtr subtract the [P,1] max; Activation Exp (ins [data] only: scale key 1.0, bias +0); "
         "TensorReduce add (left fold from the first element); TensorScalarPtr divide by the [P,1] sum. Outputs: y, rowsum",
         SDK_SOFTMAX, ["TensorReduce", "TensorScalarPtr", "Activation"], ["J29", "E1", "E2", "E3"])


softmax_unfused("softmax_f32_unfused")


# ---------------------------------------------------------------- RMSNorm
def rms64(x, eps, g=None):
    x = x.astype(F64)
    ms = (x * x).mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(ms + eps)
    y = x * rstd
    return (y if g is None else y * g.astype(F64)), rstd


def rmsnorm_acc(name, F, in_dt, out_dt, eps, weight, source, note):
    """Memset a zero [P,1] bias (the sample's bias_placeholder); Activation Square (bias AP) with acc
    ZeroAccumulate into an fp32 squares tile; ActivationReadAccumulator -> sum of squares; TensorScalar
    mult 1/F, add eps; Activation Rsqrt (bias AP); TensorScalarPtr mult x by the [P,1] rstd; optionally
    TensorTensor mult by the weight row, loaded to every partition by a partition-step-0 DRAM AP."""
    P = 128
    rng = rng_for(name)
    raw = encode(rng.normal(0.0, 1.0, (P, F)).astype(F32) * F32(1.5), in_dt)
    graw = (F32(1.0) + F32(0.1) * rng.normal(0.0, 1.0, F).astype(F32)).astype(F32) if weight else None
    inv_f = F32(1.0 / F)
    eps32 = F32(eps)

    m = Machine()
    x = widen(raw, in_dt)
    zero = np.zeros((P, 1), F32)
    sq = m.activation("Square", x, F32(1.0), zero, acc="ZeroAccumulate")
    ss = m.read_acc("Activation", P)
    ms = tensor_scalar(ss, "mult", inv_f, "add", eps32)
    rstd = m.activation("Rsqrt", ms, F32(1.0), zero)
    yn = tensor_scalar(x, "mult", rstd)
    SENS.append((name, "Rsqrt as fp32 1/sqrtf (two fp32 roundings) instead of f64 1/sqrt rounded once (E3)",
                 f"{differ(F32(1.0) / np.sqrt(ms), rstd)} of {P} x 1 rstd"))
    SENS.append((name, "squares summed in f64 and rounded once instead of the serial fp32 fold (E7)",
                 f"{differ(sq.astype(F64).sum(axis=1, keepdims=True).astype(F32), ss)} of {P} x 1 sums of squares"))
    if weight:
        out = (yn * graw[None, :]).astype(F32)
    else:
        out = yn
    out_stored = encode(out, out_dt)
    ref, ref_rstd = rms64(x, F64(eps32), graw)
    # squares (1) + fold (F - 1) + 1/F (2) + eps (1) -> ms; rsqrt halves it and rounds once (+1); then 1-2 mults
    check(name, "y", out_dt, widen(out_stored, out_dt), ref, bound(F / 2 + 6, out_dt == BF16))
    check(name, "rstd", FP32, rstd, ref_rstd, bound(F / 2 + 4))

    g = Prog()
    g.tile_in("x", in_dt, raw)
    g.sb("sq", FP32, P, F)
    g.sb("yn", out_dt if not weight else FP32, P, F)
    zap = g.col("zero_bias")
    g.inst("Memset", [], [zap], mode="Const", constant=0)
    g.inst("Activation", [tile("x_t", in_dt, P, F), imm(1.0), zap], [tile("sq", FP32, P, F)], func="Square",
           scale=1.0, alpha=0.0, acc="ZeroAccumulate")
    sap = g.col("sumsq")
    g.inst("ActivationReadAccumulator", [], [sap])
    map_ = g.col("ms")
    g.inst("TensorScalar", [sap], [map_], op0="mult", const0=float(1.0 / F), reverse0=False, op1="add",
           const1=float(eps), reverse1=False)
    rap = g.col("rstd_t")
    g.inst("Activation", [map_, imm(1.0), zap], [rap], func="Rsqrt", scale=1.0, alpha=0.0)
    ydt = FP32 if weight else out_dt
    g.inst("TensorScalarPtr", [tile("x_t", in_dt, P, F), rap], [tile("yn", ydt, P, F)], op0="mult",
           reverse0=False, op1="bypass", reverse1=False)
    instrs = ["Memset", "Activation", "ActivationReadAccumulator", "TensorScalar", "TensorScalarPtr"]
    if weight:
        g.dram_in("w", FP32, graw.reshape(1, F))
        g.sb("w_t", FP32, P, F)
        g.inst("Load", [ap("w", FP32, [[0, P], [1, F]])], [tile("w_t", FP32, P, F)])
        g.sb("y_t", out_dt, P, F)
        g.inst("TensorTensor", [tile("yn", FP32, P, F), tile("w_t", FP32, P, F)], [tile("y_t", out_dt, P, F)],
               op="mult")
        instrs.append("TensorTensor")
        g.save("y_t", "y", out_dt, P, F, out_stored)
    else:
        g.save("yn", "y", out_dt, P, F, out_stored)
    g.save("rstd_t", "rstd", FP32, P, 1, rstd)
    case(name, g, m, note + f" Constants: 1/F = {1.0 / F!r} (fp32 {float(inv_f)!r}), eps = {eps!r} (fp32 {float(eps32)!r}).",
         source, instrs, ["E1", "E2", "E3", "E7", "E8"])


rmsnorm_acc("rmsnorm_f32_weight", 512, FP32, FP32, 1e-6, True,
            KLR_RMS + " with the eps and activation_reduce lowering of " + SDK_RMS_QKV,
            "RMSNorm of a [128, 512] fp32 tile with eps and a weight row: Memset zero bias [P,1]; Activation Square "
            "(ins [x, scale imm 1.0, bias AP]) acc ZeroAccumulate; ActivationReadAccumulator -> sum of squares; "
            "TensorScalar mult 1/F then add eps; Activation Rsqrt; TensorScalarPtr mult by the [P,1] rstd; weight [1, 512] "
            "Loaded to all 128 partitions through a partition-step-0 DRAM AP [[0,128],[1,512]]; TensorTensor mult. "
            "Outputs: y [128,512] fp32, rstd [128,1] fp32.")
rmsnorm_acc("rmsnorm_bf16_qkv_norm", 640, BF16, BF16, 1e-6, False, SDK_RMS_QKV,
            "The RMSNorm half of allocated_fused_rms_norm_qkv on a [128, 640] bf16 hidden tile (gamma is folded into "
            "wQKV there, so no weight multiply): Memset zero bias; Activation Square of the bf16 data into an fp32 "
            "tile, acc ZeroAccumulate; ActivationReadAccumulator; TensorScalar mult 1/dim, add eps; Activation Rsqrt; "
            "TensorScalarPtr mult of the bf16 data by the fp32 rstd, written bf16. Outputs: y [128,640] bf16, rstd [128,1] fp32.")


def rmsnorm_klr(name, N=200, F=768):
    """KLR's nki_rmsnorm_kernel unrolled over its two 128-row tiles (200 rows: 128 + 72, the mask):
    weight Loaded once to every partition; per tile Load, Activation Square, TensorReduce add, TensorScalar
    divide by F, Activation Rsqrt, TensorScalarPtr mult, TensorTensor mult, Save."""
    rng = rng_for(name)
    raw = rng.normal(0.0, 1.0, (N, F)).astype(F32)
    graw = (F32(1.0) + F32(0.1) * rng.normal(0.0, 1.0, F).astype(F32)).astype(F32)
    m = Machine()
    g = Prog()
    g.dram_in("a", FP32, raw)
    g.dram_in("w", FP32, graw.reshape(1, F))
    g.sb("w_t", FP32, 128, F)
    g.inst("Load", [ap("w", FP32, [[0, 128], [1, F]])], [tile("w_t", FP32, 128, F)])
    outs, rstds = [], []
    for i in range(-(-N // 128)):
        r0, P = 128 * i, min(128, N - 128 * i)
        x = raw[r0:r0 + P]
        sq = m.activation("Square", x, F32(1.0), F32(0.0))
        ss = reduce_x(sq, "add")
        ms = tensor_scalar(ss, "divide", F32(F))
        rstd = m.activation("Rsqrt", ms, F32(1.0), F32(0.0))
        yn = tensor_scalar(x, "mult", rstd)
        outs.append((yn * graw[None, :]).astype(F32))
        rstds.append(rstd)
        t = f"_{i}"
        for n in ("a_t", "sq", "yn", "y_t"):
            g.sb(n + t, FP32, P, F)
        g.inst("Load", [ap("a", FP32, [[F, P], [1, F]], offset=r0 * F)], [tile("a_t" + t, FP32, P, F)])
        g.inst("Activation", [tile("a_t" + t, FP32, P, F)], [tile("sq" + t, FP32, P, F)], func="Square",
               scale=1.0, alpha=0.0)
        sap = g.col("sumsq" + t, P)
        g.inst("TensorReduce", [tile("sq" + t, FP32, P, F)], [sap], op="add", axis="X", negate=False)
        map_ = g.col("ms" + t, P)
        g.inst("TensorScalar", [sap], [map_], op0="divide", const0=float(F), reverse0=False, op1="bypass",
               const1=0.0, reverse1=False)
        rap = g.col("rstd" + t, P)
        g.inst("Activation", [map_], [rap], func="Rsqrt", scale=1.0, alpha=0.0)
        g.inst("TensorScalarPtr", [tile("a_t" + t, FP32, P, F), rap], [tile("yn" + t, FP32, P, F)], op0="mult",
               reverse0=False, op1="bypass", reverse1=False)
        g.inst("TensorTensor", [tile("yn" + t, FP32, P, F), tile("w_t", FP32, P, F)], [tile("y_t" + t, FP32, P, F)],
               op="mult")
    out = np.concatenate(outs, axis=0)
    rstd = np.concatenate(rstds, axis=0)
    g.dram_out("out", FP32, (N, F), out)
    g.dram_out("rstd", FP32, (N, 1), rstd)
    for i in range(-(-N // 128)):
        r0, P = 128 * i, min(128, N - 128 * i)
        t = f"_{i}"
        g.inst("Save", [tile("y_t" + t, FP32, P, F)], [ap("out", FP32, [[F, P], [1, F]], offset=r0 * F)])
        g.inst("Save", [tile("rstd" + t, FP32, P, 1)], [ap("rstd", FP32, [[1, P], [1, 1]], offset=r0)])
    ref, ref_rstd = rms64(raw, 0.0, graw)
    check(name, "out", FP32, out, ref, bound(F / 2 + 6))
    check(name, "rstd", FP32, rstd, ref_rstd, bound(F / 2 + 4))
    case(name, g, m,
         f"KLR's RMSNorm (no eps) of a [{N}, {F}] fp32 tensor with a [{F}] weight, its affine_range loop unrolled: "
         f"tiles of 128 and {N - 128} rows (the mask: the second tile's APs span {N - 128} partitions); the weight "
         f"Loaded once to 128 partitions by a partition-step-0 DRAM AP; per tile Load, Activation Square (ins [data]: "
         "no accumulator), TensorReduce add (axis X), TensorScalar divide by F, Activation Rsqrt, TensorScalarPtr "
         "mult by the [P,1] rstd, TensorTensor mult by the weight tile, Save. Outputs: out [200,768], rstd [200,1]",
         KLR_RMS, ["Activation", "TensorReduce", "TensorScalar", "TensorScalarPtr", "TensorTensor"],
         ["J29", "E1", "E2", "E3"])


rmsnorm_klr("rmsnorm_klr_f32_200x768")


# ---------------------------------------------------------------- writing
def readme_section():
    out = ["<!-- BEGIN GENERATED by make_cases.py: do not edit by hand -->", "",
           f"### Cases ({len(CASES)})", "", "| case | instructions (besides Load / Save) | follows | what |",
           "|---|---|---|---|"]
    for name, (g, note, source, instrs, choices, unstable) in CASES.items():
        out.append(f"| `{name}` | {', '.join(instrs)} | {source} | {note} |")
    out += ["", "### Error against float64", "",
            "Max over every element of `|emulated − float64| / |float64|` (the float64 kernel of the same widened inputs).",
            "", "| case | output | dtype | max rel. error | bound |", "|---|---|---|---|---|"]
    for c, o, dt, rel, tol in REPORT:
        out.append(f"| `{c}` | {o} | {dt} | {rel:.3e} | {tol:.3g} |")
    tot = sum(v[5] for v in CASES.values())
    out += ["", "### What the expected bits distinguish", "",
            "Each row: an alternative reading of the spec and how many expected values it would change (computed by "
            "the generator on the case's own data).", "", "| case | alternative | changed |", "|---|---|---|"]
    for c, alt, k in SENS:
        out.append(f"| `{c}` | {alt} | {k} |")
    out += ["", f"Unstable exp inputs redrawn (the fp32 result changes when the f64 exp moves by 1 ulp): {tot}.", "",
            "<!-- END GENERATED -->", ""]
    return "\n".join(out)


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, source, instrs, choices, unstable) in CASES.items():
        lines = [f"# {note}", f"# follows {source}",
                 "# expected outputs from make_cases.py (NumPy / ml_dtypes / mpmath emulation of the documented "
                 "semantics), never from birsim"]
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
    for c, o, dt, rel, tol in REPORT:
        print(f"{c:34s} {o:7s} {dt:9s} max rel err {rel:.3e} (bound {tol:.3g})")
    print(f"{len(CASES)} cases")


write_all()
