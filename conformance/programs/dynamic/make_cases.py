#!/usr/bin/env python3
"""Writes the `programs/dynamic` conformance suite: BIR JSON programs, .npy inputs and expected .npy
outputs for dynamic offsets on access patterns, computed here with NumPy / ml_dtypes from the rules
below (seed 000 §1.3, §3.1, §5.1, §5.2, §6.3, §7; re-facts §3, §5 "DMA execution", §6 DynamicAPINFO;
nki-semantics dma_copy / dma_compute / tensor_copy_dynamic_src/dst and §7 cases 24-27; docs/bir-json.md
"Dynamic offsets", "Dim letters", DMACopy, "The HW-DGE bridge"), never from birsim.

Rules encoded (each case's note names the one it tests):
  R1  scalar offset: the one index value i (read through the project cast to int64, D1/N12: a float
      index rounds to nearest even) shifts the AP's element `offset` by i x (the step of the level the letter names; W 0, Z 1,
      Y 2, X 3 = the AP level index) -- the step, NOT the product of the inner nums.
  R2  scalar offsets run on every op whose AP can carry one (copies, Load/Save, Memset, TensorTensor,
      TensorScalar, TensorReduce, Reciprocal, Iota, Select, CopyPredicated, StreamShuffle, Pool, ...),
      on inputs and outputs.
  R3  out of bounds (i < 0, i >= indirect_dim_max_index, or the shifted AP leaving its memory location)
      on any op other than DMACopy: fault out-of-bounds naming the operand; nothing written.
  R4  TensorReduce with a dynamic offset on its input runs only with axis X; another axis is a
      validation bad-field error (seed 000 §3.1 "Indirection is only allowed for AxisListType::X").
  R5  TensorCopyDynamicSrc / TensorCopyDynamicDst (opcodes 24/25): a TensorCopy whose ins[0] (Src) /
      outs[0] (Dst) carries a scalar offset on a free level (not W); an offset on W or none at all is a
      validation bad-field error.
  R6  DMACopy Transpose / Replicate / CCE run after the scalar offset shifted the AP.
  R7  DMACopy CCE: inputs cast to fp32 and folded into a zeroed fp32 accumulator (+0.0) for add, max and
      min alike; add = acc += (constants ? c_i*in_i : in_i); max/min = fmaxf/fminf (NaN operand -> the
      other), constants ignored; the result cast to the output dtype (RNE).
  R8  HW-DGE bridge (vector_offset): ports of nki-semantics §7 cases 24-27; the add whose rows revisit an
      element applies serially in index order, rounding to the destination dtype at every step; a scalar
      offset on the dense side shifts its AP first, then the vector rows apply; vector offsets on both
      sides are a validation bad-field error.
Faulting cases pre-fill what the faulting instruction writes (from an input) and expect it unchanged.
For every case the data make the rule observable: the script asserts that the wrong reading (stride =
product of inner nums, truncation instead of the project cast's RNE, max from in_0, constants applied, one rounding ...)
gives another result.

Run: /work/main/.venv/bin/python conformance/programs/dynamic/make_cases.py
"""
import os
import sys
import warnings

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the shared program builder)
from birprog import LET, TNAMES, ap, ap_index, four_level, imm, tile  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
RNG = np.random.default_rng(20261203)

# ---------------------------------------------------------------- dtypes (refsim narrowing, RNE)
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "int32": np.int32,
         "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "int64": np.int64}
SIZE = {k: np.dtype(v).itemsize for k, v in STORE.items()}


def decode(raw, dt):
    raw = np.asarray(raw)
    if dt == "bfloat16":
        return raw.view(md.bfloat16).astype(F32)
    return raw.astype(F32)


def encode(x, dt):
    """float32 -> stored values (RNE; NaN canonical for bf16; ints round and clamp)."""
    x = np.asarray(x, F32)
    if dt == "float32":
        return x.copy()
    if dt == "bfloat16":
        return np.where(np.isnan(x), 0x7FC0, x.astype(md.bfloat16).view(np.uint16)).astype(np.uint16)
    if dt == "float16":
        return x.astype(np.float16)
    info = np.iinfo(STORE[dt])
    return np.clip(np.rint(x.astype(np.float64)), info.min, info.max).astype(STORE[dt])


def index_raw(v, dt):
    """The stored form of one index value."""
    return encode(np.array([[v]], F32), dt) if dt in ("float32", "bfloat16") else np.array([[v]], STORE[dt])


def index_value(v, dt):
    """R1: the index as the rule reads it: the stored value through the project cast to int64
    (fidelity D1; N12: a float rounds to nearest even, then clamps)."""
    x = decode(index_raw(v, dt), dt)[0, 0]
    return int(np.rint(np.float64(x)))


class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "DMACopy": "DMA", "Iota": "Pool", "Pool": "Pool"}
    DEFAULT_ENGINE = "DVE"


CASES = {}


def case(name, prog, note, choices=(), fault=None, errors=None):
    assert name not in CASES, name
    CASES[name] = (prog, note, tuple(choices), fault, errors)


def distinct(p, f):
    """Distinct fp32 values that name their element: (k + 0.25) with alternating signs."""
    k = np.arange(p * f, dtype=np.int64).reshape(p, f)
    return ((k + 0.25) * np.where(k % 2 == 0, 1, -1)).astype(F32)


def small_ints(p, f, lo=-40, hi=40):
    return RNG.integers(lo, hi, (p, f)).astype(F32)


def fp32_vals(shape, scale=8.0):
    return (RNG.standard_normal(shape) * scale).astype(F32)


def scalar_dyn(g, name, dt, v, dim, max_index, where="sb"):
    """The dynamic-offset fields of an AP: a one-value index `name` (SB tile or DRAM input) holding v."""
    raw = index_raw(v, dt)
    if where == "sb":
        loc = g.tile_in(name, dt, raw)
    else:
        g.dram_in(name, dt, raw)
        loc = name
    return dict(indirect_dim=dim, indirect_dim_max_index=max_index, scalar_offset=ap(loc, dt, [[1, 1], [1, 1]]))


def gather(flat, pairs, offset):
    """The values an AP reads from a flat array, shaped by its nums (AP order)."""
    return np.asarray(flat).reshape(-1)[ap_index(pairs, offset)]


def scatter(flat, pairs, offset, vals):
    out = np.asarray(flat).copy().reshape(-1)
    out[ap_index(pairs, offset).reshape(-1)] = np.asarray(vals).reshape(-1)
    return out.reshape(np.asarray(flat).shape)


def inner_product(pairs, level):
    return int(np.prod([p[1] for p in pairs[level + 1:]]))


def step_rule(pairs, dim):
    """R1: the step of the level the letter names, asserted to differ from the product of the inner nums
    when the case says so."""
    return pairs[LET[dim]][0]


R1 = "R1: offset += i x step of the level the letter names (W0 Z1 Y2 X3 = level index), i read through the cast to int64 (floats RNE, D1/N12)"
R2 = "R2: scalar offsets run on every op whose AP carries one"
R3 = "R3: out of bounds (i<0, i>=max, or the shifted AP leaving its location) on a non-DMACopy op is a fault naming the operand, nothing written"
R4 = "R4: seed 000 §3.1 'Indirection is only allowed for AxisListType::X'"
R5 = "R5: TensorCopyDynamicSrc/Dst (opcodes 24/25, nki tensor_copy_dynamic_src/dst): a copy whose ins[0]/outs[0] carries a scalar offset on a free level"
R6 = "R6: DMACopy Transpose/Replicate/CCE run after the scalar offset shifted the AP"
R7 = ("R7: re-facts §5 doDMACCE: fp32 inputs folded into a zeroed fp32 accumulator; add acc += c_i*in_i; "
      "max/min fmaxf/fminf from +0.0, constants ignored; cast to the output dtype (RNE)")
R8 = "R8: seed 000 §7 / docs/bir-json.md 'The HW-DGE bridge'"

# ================================================================ A. scalar offsets on every op (R1, R2)
# A1: the brief's example: an (8, 16) fp32 tensor read through [[16, 8]...] 4 of 16 columns, offset on W.
for where in ("sb", "dram"):
    X = distinct(8, 16)
    pairs = [[16, 2], [1, 4]]
    i = 3
    g = Prog()
    if where == "sb":
        src = g.tile_in("x", "float32", X)
        dyn = scalar_dyn(g, "i", "int32", i, "W", 8)
        g.sb("yt", "float32", 2, 4)
        g.inst("TensorCopy", [ap(src, "float32", pairs, 0, **dyn)], [tile("yt", "float32", 2, 4)])
    else:
        g.dram_in("x", "float32", X)
        dyn = scalar_dyn(g, "i", "int32", i, "W", 8, where="dram")
        g.sb("yt", "float32", 2, 4)
        g.inst("Load", [ap("x", "float32", pairs, 0, **dyn)], [tile("yt", "float32", 2, 4)])
    want = gather(X, pairs, i * step_rule(pairs, "W"))
    assert np.array_equal(want, X[3:5, 0:4])
    assert not np.array_equal(want, gather(X, pairs, i * inner_product(pairs, 0)))  # 12 elements: wrong
    g.save("yt", "y", "float32", 2, 4, want)
    op = "TensorCopy from an SB tile" if where == "sb" else "Load from a DRAM input (index in DRAM too)"
    case(f"scalar_{'tensorcopy' if where == 'sb' else 'load'}_in_w_step_not_inner_nums", g,
         f"{op}: (8, 16) fp32 read through [[16, 2], [1, 4]] (4 of 16 columns), int32 index i = 3 on W: the offset "
         f"moves 3 rows = 48 elements (the W step), not 12 (3 x the inner num 4) ({R1}; {R2})")

# A2: a float index converts by the project cast (fidelity D1 "read through the cast to int64",
# N12: RNE then clamp): fp32 2.75 -> 3 (truncation would read 2); -0.75 -> -1 < 0, out of bounds
# (truncation would read 0, in bounds).
X = distinct(4, 24)
pairs = [[24, 4], [4, 2], [1, 3]]
g = Prog()
src = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "float32", 2.75, "Z", 4)
g.sb("yt", "float32", 4, 6)
g.inst("TensorCopy", [ap(src, "float32", pairs, 0, **dyn)], [ap("yt", "float32", [[6, 4], [3, 2], [1, 3]])])
i = index_value(2.75, "float32")
assert i == 3
want = gather(X, pairs, i * 4).reshape(4, 6)
assert not np.array_equal(want, gather(X, pairs, int(np.trunc(2.75)) * 4).reshape(4, 6))  # truncation reads 2
g.save("yt", "y", "float32", 4, 6, want)
case("scalar_tensorcopy_float_index_rounds_to_nearest", g,
     f"TensorCopy through the 3-level AP {pairs} with a float32 index 2.75 on Z (level 1, step 4): converted to int64 "
     f"by the project cast (RNE, N12) -> i = 3 ({R1})", choices=["D1"])


def b_float_negative(g):
    X = distinct(4, 24)
    src = g.tile_in("x", "float32", X)
    prev = np.full((4, 6), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "float32", -0.75, "Z", 4)
    assert index_value(-0.75, "float32") == -1
    g.inst("TensorCopy", [ap(src, "float32", [[24, 4], [4, 2], [1, 3]], 0, **dyn)], [ap(yt, "float32", [[6, 4], [3, 2], [1, 3]])])
    return yt, prev, "float32"


# A3: the destination carries the offset, bf16 index 5.0
prev = np.full((3, 16), -7.0, F32)
S = distinct(3, 6)
g = Prog()
st = g.tile_in("s", "float32", S)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "bfloat16", 5.0, "Z", 11)
g.inst("TensorCopy", [tile(st, "float32", 3, 6)], [ap(yt, "float32", [[16, 3], [1, 6]], 0, **dyn)], engine="Pool")
want = scatter(prev, [[16, 3], [1, 6]], 5, S)
assert np.array_equal(want[:, 5:11], S)
g.save(yt, "y", "float32", 3, 16, want)
case("scalar_tensorcopy_out_z_bfloat16_index", g,
     f"TensorCopy (Pool engine) into columns 5..10 of a pre-filled (3, 16) tile: outs[0] [[16, 3], [1, 6]] with a bf16 "
     f"index 5.0 on Z (level 1, step 1) ({R1}; {R2})")

# A4: Save into a DRAM output, offset on outs[0] W, fp32 index
S = distinct(2, 8)
prev = np.full((6, 8), -7.0, F32)
g = Prog()
st = g.tile_in("s", "float32", S)
g.out_prefilled("y", "float32", prev, scatter(prev, [[8, 2], [1, 8]], 3 * 8, S))
dyn = scalar_dyn(g, "i", "float32", 3.0, "W", 5)
g.inst("Save", [tile(st, "float32", 2, 8)], [ap("y", "float32", [[8, 2], [1, 8]], 0, **dyn)])
assert np.array_equal(g.outputs["y"][3:5], S)
case("scalar_save_out_w_dram_float32_index", g,
     f"Save a (2, 8) tile into rows 3, 4 of a pre-filled (6, 8) DRAM output: outs[0] [[8, 2], [1, 8]] with an fp32 "
     f"index 3.0 on W (step 8) ({R1}; {R2})")

# A5: Memset const, output shifted on Z with step 2
prev = np.full((4, 12), -7.0, F32)
pairs = [[12, 4], [2, 3]]
g = Prog()
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 3, "Z", 4)
g.inst("Memset", [], [ap(yt, "float32", pairs, 0, **dyn)], mode="Const", constant=int(np.float32(1.5).view(np.uint32)))
want = scatter(prev, pairs, 3 * 2, np.full((4, 3), 1.5, F32))
assert not np.array_equal(want, scatter(prev, pairs, 3 * inner_product(pairs, 1), np.full((4, 3), 1.5, F32)))
g.save(yt, "y", "float32", 4, 12, want)
case("scalar_memset_out_z_step2", g,
     f"Memset Const 1.5 through outs[0] [[12, 4], [2, 3]] with i = 3 on Z (level 1, step 2): elements 6, 8, 10 of each "
     f"row ({R1}; {R2})")

# A6: TensorTensor, ins[1] shifted on W (int32 index)
A = small_ints(4, 8)
B = small_ints(10, 8)
g = Prog()
at = g.tile_in("a", "float32", A)
bt = g.tile_in("b", "float32", B)
dyn = scalar_dyn(g, "i", "int32", 6, "W", 7)
g.sb("yt", "float32", 4, 8)
g.inst("TensorTensor", [tile(at, "float32", 4, 8), ap(bt, "float32", [[8, 4], [1, 8]], 0, **dyn)], [tile("yt", "float32", 4, 8)],
       op="add")
want = (A + B[6:10]).astype(F32)
g.save("yt", "y", "float32", 4, 8, want)
case("scalar_tensortensor_in1_w", g, f"TensorTensor add, ins[1] = rows 6..9 of a 10-row tile via i = 6 on W ({R1}; {R2})")

# A7: TensorTensor, outs[0] shifted on Z
A, B = small_ints(2, 6), small_ints(2, 6)
prev = np.full((2, 20), -7.0, F32)
g = Prog()
at = g.tile_in("a", "float32", A)
bt = g.tile_in("b", "float32", B)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 7, "Z", 15)
g.inst("TensorTensor", [tile(at, "float32", 2, 6), tile(bt, "float32", 2, 6)], [ap(yt, "float32", [[20, 2], [1, 6]], 0, **dyn)],
       op="mult")
want = prev.copy()
want[:, 7:13] = (A * B).astype(F32)
g.save(yt, "y", "float32", 2, 20, want)
case("scalar_tensortensor_out_z", g, f"TensorTensor mult into columns 7..12 of a pre-filled tile via i = 7 on Z of outs[0] ({R1}; {R2})")

# A8: TensorScalar on a 3-level AP, Z (level 1) step 8 != inner num 4
X = distinct(3, 32)
pairs = [[32, 3], [8, 2], [1, 4]]
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "int32", 2, "Z", 3)
g.sb("yt", "float32", 3, 8)
g.inst("TensorScalar", [ap(xt, "float32", pairs, 0, **dyn)], [tile("yt", "float32", 3, 8)], op0="mult", const0=2.0,
       op1="add", const1=1.0)
v = gather(X, pairs, 2 * 8).reshape(3, 8)
assert not np.array_equal(v, gather(X, pairs, 2 * inner_product(pairs, 1)).reshape(3, 8))
want = (v * F32(2.0) + F32(1.0)).astype(F32)
g.save("yt", "y", "float32", 3, 8, want)
case("scalar_tensorscalar_in_z_3level_step8", g,
     f"TensorScalar x*2+1 through ins[0] {pairs}, i = 2 on Z = level 1 (step 8, not the inner num 4): row elements "
     f"16..19, 24..27 ({R1}; {R2})")

# A9: TensorScalar on a 3-level AP, Y (level 2) + output on Activation
X = distinct(3, 16)
pairs = [[16, 3], [5, 2], [1, 4]]
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "uint16", 3, "Y", 4)
g.sb("yt", "float32", 3, 8)
g.inst("TensorScalar", [ap(xt, "float32", pairs, 0, **dyn)], [tile("yt", "float32", 3, 8)], op0="add", const0=-0.5,
       engine="Activation")
v = gather(X, pairs, 3).reshape(3, 8)
want = (v + F32(-0.5)).astype(F32)
g.save("yt", "y", "float32", 3, 8, want)
case("scalar_tensorscalar_in_y_3level", g,
     f"TensorScalar (Activation) x-0.5 through ins[0] {pairs}, uint16 i = 3 on Y = level 2 (step 1): shift by 3 "
     f"elements ({R1}; {R2})")

# A10: TensorReduce add over X with the input shifted on Z
X = small_ints(4, 16)
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "int32", 5, "Z", 9)
g.sb("yt", "float32", 4, 1)
g.inst("TensorReduce", [ap(xt, "float32", [[16, 4], [1, 8]], 0, **dyn)], [tile("yt", "float32", 4, 1)], op="add", axis="X")
want = X[:, 5:13].sum(axis=1, keepdims=True).astype(F32)
assert not np.array_equal(want, X[:, 0:8].sum(axis=1, keepdims=True))
g.save("yt", "y", "float32", 4, 1, want)
case("scalar_tensorreduce_in_z_axis_x", g, f"TensorReduce add axis X over columns 5..12 (i = 5 on Z of ins[0]) ({R1}; {R2}; {R4})")

# A11: TensorReduce max axis X, 3-level input shifted on W
X = fp32_vals((6, 16))
pairs = [[16, 3], [8, 2], [1, 4]]
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "int32", 2, "W", 4)
g.sb("yt", "float32", 3, 2)
g.inst("TensorReduce", [ap(xt, "float32", pairs, 0, **dyn)], [tile("yt", "float32", 3, 2)], op="max", axis="X")
v = gather(X, pairs, 2 * 16)
want = v.max(axis=2).astype(F32)
assert not np.array_equal(want, gather(X, pairs, 0).max(axis=2))
g.save("yt", "y", "float32", 3, 2, want)
case("scalar_tensorreduce_in_w_3level_axis_x", g,
     f"TensorReduce max axis X on {pairs} shifted to rows 2..4 (i = 2 on W, step 16): 2 outputs per row ({R1}; {R2}; {R4})")

# A12: Reciprocal, output shifted on W
X = (2.0 ** RNG.integers(-6, 7, (2, 8))).astype(F32) * np.where(RNG.integers(0, 2, (2, 8)) == 1, 1, -1).astype(F32)
prev = np.full((5, 8), -7.0, F32)
g = Prog()
xt = g.tile_in("x", "float32", X)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 3, "W", 4)
g.inst("Reciprocal", [tile(xt, "float32", 2, 8)], [ap(yt, "float32", [[8, 2], [1, 8]], 0, **dyn)])
want = prev.copy()
want[3:5] = (F32(1.0) / X).astype(F32)
g.save(yt, "y", "float32", 5, 8, want)
case("scalar_reciprocal_out_w", g, f"Reciprocal of +-powers of two into rows 3, 4 of a pre-filled tile (i = 3 on W of outs[0]) ({R1}; {R2})")

# A13: Iota, output shifted on Z
prev = np.full((4, 12), -1, np.int32)
g = Prog()
yt = g.tile_in("prev", "int32", prev)
dyn = scalar_dyn(g, "i", "int32", 6, "Z", 8)
g.inst("Iota", [], [ap(yt, "int32", [[12, 4], [1, 5]], 0, **dyn)], base=3, pattern=[[2, 5]], channel_multiplier=10)
want = prev.copy()
want[:, 6:11] = 3 + 10 * np.arange(4)[:, None] + 2 * np.arange(5)[None, :]
g.save(yt, "y", "int32", 4, 12, want)
case("scalar_iota_out_z", g,
     f"Iota base 3, pattern [[2, 5]], channel_multiplier 10 written into columns 6..10 of a pre-filled int32 tile "
     f"(i = 6 on Z of outs[0]; the values are those of the unshifted iota) ({R1}; {R2})")

# A14: Select, predicate shifted on W
PR = RNG.integers(0, 2, (6, 8)).astype(np.uint8)
PR[2:5] = RNG.integers(0, 2, (3, 8)).astype(np.uint8)
T, Fv = fp32_vals((3, 8)), fp32_vals((3, 8))
g = Prog()
pt = g.tile_in("pred", "uint8", PR)
tt = g.tile_in("t", "float32", T)
ft = g.tile_in("f", "float32", Fv)
dyn = scalar_dyn(g, "i", "int32", 2, "W", 4)
g.sb("yt", "float32", 3, 8)
g.inst("Select", [ap(pt, "uint8", [[8, 3], [1, 8]], 0, **dyn), tile(tt, "float32", 3, 8), tile(ft, "float32", 3, 8)],
       [tile("yt", "float32", 3, 8)])
want = np.where(PR[2:5] != 0, T, Fv).astype(F32)
assert not np.array_equal(want, np.where(PR[0:3] != 0, T, Fv))
g.save("yt", "y", "float32", 3, 8, want)
case("scalar_select_pred_w", g, f"Select with its predicate (ins[0]) = rows 2..4 of a 6-row uint8 tile via i = 2 on W ({R1}; {R2})")

# A15: Select, on_true shifted on Z
PR = RNG.integers(0, 2, (3, 8)).astype(np.uint8)
T, Fv = fp32_vals((3, 20)), fp32_vals((3, 8))
g = Prog()
pt = g.tile_in("pred", "uint8", PR)
tt = g.tile_in("t", "float32", T)
ft = g.tile_in("f", "float32", Fv)
dyn = scalar_dyn(g, "i", "int32", 11, "Z", 13)
g.sb("yt", "float32", 3, 8)
g.inst("Select", [tile(pt, "uint8", 3, 8), ap(tt, "float32", [[20, 3], [1, 8]], 0, **dyn), tile(ft, "float32", 3, 8)],
       [tile("yt", "float32", 3, 8)])
want = np.where(PR != 0, T[:, 11:19], Fv).astype(F32)
g.save("yt", "y", "float32", 3, 8, want)
case("scalar_select_on_true_z", g, f"Select with on_true (ins[1]) = columns 11..18 via i = 11 on Z ({R1}; {R2})")

# A16: CopyPredicated, src shifted on Z
SRC = fp32_vals((4, 20))
PR = RNG.integers(0, 2, (4, 8)).astype(np.uint8)
prev = np.full((4, 8), -99.0, F32)
g = Prog()
st = g.tile_in("src", "float32", SRC)
pt = g.tile_in("pred", "uint8", PR)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 9, "Z", 13)
g.inst("CopyPredicated", [ap(st, "float32", [[20, 4], [1, 8]], 0, **dyn), tile(pt, "uint8", 4, 8)], [tile(yt, "float32", 4, 8)])
want = np.where(PR != 0, SRC[:, 9:17], prev).astype(F32)
g.save(yt, "y", "float32", 4, 8, want)
case("scalar_cpred_src_z", g, f"CopyPredicated with src (ins[0]) = columns 9..16 via i = 9 on Z; false positions keep -99 ({R1}; {R2})")

# A17: CopyPredicated, destination shifted on W
SRC = fp32_vals((2, 8))
PR = RNG.integers(0, 2, (2, 8)).astype(np.uint8)
prev = np.full((6, 8), -99.0, F32)
g = Prog()
st = g.tile_in("src", "float32", SRC)
pt = g.tile_in("pred", "uint8", PR)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 4, "W", 5)
g.inst("CopyPredicated", [tile(st, "float32", 2, 8), tile(pt, "uint8", 2, 8)], [ap(yt, "float32", [[8, 2], [1, 8]], 0, **dyn)])
want = prev.copy()
want[4:6] = np.where(PR != 0, SRC, prev[4:6])
g.save(yt, "y", "float32", 6, 8, want)
case("scalar_cpred_out_w", g, f"CopyPredicated into rows 4, 5 of a pre-filled tile (i = 4 on W of outs[0]) ({R1}; {R2})")

# A18: StreamShuffle, input shifted on Z
SRC = distinct(32, 10)
prev = np.full((32, 4), -7.0, F32)
MASK = [(5 * k + 7) % 32 for k in range(32)]
MASK[3] = MASK[20] = 255
g = Prog()
st = g.tile_in("x", "float32", SRC)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 5, "Z", 7)
g.inst("StreamShuffle", [ap(st, "float32", [[10, 32], [1, 4]], 0, **dyn)], [tile(yt, "float32", 32, 4)], mask=MASK)
want = prev.copy()
for k in range(32):
    if MASK[k] != 255:
        want[k] = SRC[MASK[k], 5:9]
g.save(yt, "y", "float32", 32, 4, want)
case("scalar_shuffle_in_z", g,
     f"StreamShuffle (mask with 255 entries) of columns 5..8 of a 32-partition tile (i = 5 on Z of ins[0]) ({R1}; {R2}; seed 000 §5.3)")

# A19: Pool Max, input shifted on Z
X = fp32_vals((4, 16))
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "int32", 7, "Z", 11)
g.sb("yt", "float32", 4, 1)
g.inst("Pool", [ap(xt, "float32", [[16, 4], [1, 6]], 0, **dyn)], [tile("yt", "float32", 4, 1)], func="Max")
want = X[:, 7:13].max(axis=1, keepdims=True).astype(F32)
assert not np.array_equal(want, X[:, 0:6].max(axis=1, keepdims=True))
g.save("yt", "y", "float32", 4, 1, want)
case("scalar_pool_max_in_z", g, f"Pool Max over columns 7..12 (i = 7 on Z of ins[0]) ({R1}; {R2}; seed 000 §3.2)")

# A20: TensorCopy with a cast, index in DRAM, Activation engine, offset on both sides
X = fp32_vals((6, 10))
prev = encode(np.full((5, 10), -7.0, F32), "bfloat16")
g = Prog()
xt = g.tile_in("x", "float32", X)
yt = g.tile_in("prev", "bfloat16", prev)
dyn_in = scalar_dyn(g, "i", "int32", 4, "W", 5, where="dram")
dyn_out = scalar_dyn(g, "j", "int32", 3, "W", 4)
g.inst("TensorCopy", [ap(xt, "float32", [[10, 2], [1, 10]], 0, **dyn_in)], [ap(yt, "bfloat16", [[10, 2], [1, 10]], 0, **dyn_out)],
       engine="Activation")
want = prev.copy()
want[3:5] = encode(X[4:6], "bfloat16")
g.save(yt, "y", "bfloat16", 5, 10, want)
case("scalar_tensorcopy_both_sides_cast_bfloat16", g,
     f"TensorCopy (Activation) fp32 -> bf16: rows 4, 5 of the source (DRAM-held i = 4 on W of ins[0]) into rows 3, 4 of "
     f"the destination (i = 3 on W of outs[0]), cast RNE ({R1}; {R2})")

# ================================================================ B. out of bounds on non-DMACopy ops (R3)


def oob_case(name, opcode, note, operand, build):
    """build(g) -> (the SB tile the faulting op writes, its pre-filled values, dtype): expected unchanged."""
    g = Prog()
    keep, prev, dt = build(g)
    g.expect(keep, prev)
    case(name, g, f"{note} -> fault out-of-bounds naming {operand}; {opcode} writes nothing (the pre-filled destination "
         f"is unchanged) ({R3})", fault=("out-of-bounds", operand))


def b_copy(g):
    X = distinct(8, 16)
    src = g.tile_in("x", "float32", X)
    prev = np.full((2, 4), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", 5, "W", 5)  # i = max, rows 5, 6 still inside the 8-row tile
    g.inst("TensorCopy", [ap(src, "float32", [[16, 2], [1, 4]], 0, **dyn)], [tile(yt, "float32", 2, 4)])
    return yt, prev, "float32"


oob_case("oob_tensorcopy_float_index_rounds_to_minus1_fault", "TensorCopy",
         "TensorCopy, a float32 index -0.75 on Z: the project cast rounds it to -1 (RNE, N12; truncation would give 0, "
         "in bounds)", "ins[0]", b_float_negative)
oob_case("oob_tensorcopy_in_index_equals_max_fault", "TensorCopy",
         "TensorCopy, i = 5 = indirect_dim_max_index on W of ins[0] (the shifted AP would still be inside its location)",
         "ins[0]", b_copy)


def b_tt(g):
    A, B = small_ints(4, 8), small_ints(10, 8)
    at = g.tile_in("a", "float32", A)
    bt = g.tile_in("b", "float32", B)
    prev = np.full((4, 8), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", -1, "W", 7)
    g.inst("TensorTensor", [tile(at, "float32", 4, 8), ap(bt, "float32", [[8, 4], [1, 8]], 8, **dyn)], [tile(yt, "float32", 4, 8)],
           op="add")
    return yt, prev, "float32"


oob_case("oob_tensortensor_in1_negative_fault", "TensorTensor",
         "TensorTensor, i = -1 on W of ins[1] (static offset 8, so the shifted AP = rows 0..3 would be inside its location)",
         "ins[1]", b_tt)


def b_reduce(g):
    X = small_ints(4, 16)
    xt = g.tile_in("x", "float32", X)
    prev = np.full((4, 1), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", 10, "Z", 12)  # i < max, but columns 10..17 leave row 3's end (element 64+)
    g.inst("TensorReduce", [ap(xt, "float32", [[16, 4], [1, 8]], 0, **dyn)], [tile(yt, "float32", 4, 1)], op="add", axis="X")
    return yt, prev, "float32"


oob_case("oob_tensorreduce_in_leaves_location_fault", "TensorReduce",
         "TensorReduce axis X, i = 10 < max 12 on Z of ins[0]: the last row's elements 58..65 leave the 64-element tile",
         "ins[0]", b_reduce)


def b_memset(g):
    prev = np.full((4, 12), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", 4, "Z", 4)
    g.inst("Memset", [], [ap(yt, "float32", [[12, 4], [2, 3]], 0, **dyn)], mode="Const", constant=int(np.float32(1.5).view(np.uint32)))
    return yt, prev, "float32"


oob_case("oob_memset_out_index_equals_max_fault", "Memset", "Memset Const, i = 4 = max on Z of outs[0]", "outs[0]", b_memset)


def b_iota(g):
    prev = np.full((4, 12), -1, np.int32)
    yt = g.tile_in("prev", "int32", prev)
    dyn = scalar_dyn(g, "i", "int32", -2, "Z", 8)
    g.inst("Iota", [], [ap(yt, "int32", [[12, 4], [1, 5]], 4, **dyn)], base=3, pattern=[[2, 5]], channel_multiplier=10)
    return yt, prev, "int32"


oob_case("oob_iota_out_negative_fault", "Iota", "Iota, i = -2 on Z of outs[0] (static offset 4: the shifted AP would be inside)",
         "outs[0]", b_iota)


def b_cpred(g):
    SRC = fp32_vals((4, 20))
    st = g.tile_in("src", "float32", SRC)
    pt = g.tile_in("pred", "uint8", np.ones((4, 8), np.uint8))
    prev = np.full((4, 8), -99.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", 13, "Z", 13)
    g.inst("CopyPredicated", [ap(st, "float32", [[20, 4], [1, 8]], 0, **dyn), tile(pt, "uint8", 4, 8)], [tile(yt, "float32", 4, 8)])
    return yt, prev, "float32"


oob_case("oob_cpred_src_index_equals_max_fault", "CopyPredicated", "CopyPredicated, i = 13 = max on Z of ins[0]", "ins[0]", b_cpred)


def b_select(g):
    PR = np.ones((6, 8), np.uint8)
    pt = g.tile_in("pred", "uint8", PR)
    tt = g.tile_in("t", "float32", fp32_vals((3, 8)))
    prev = np.full((3, 8), -99.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", 4, "W", 6)  # rows 4..6 of a 6-row tile: row 6 is past the end
    g.inst("Select", [ap(pt, "uint8", [[8, 3], [1, 8]], 0, **dyn), tile(tt, "float32", 3, 8), imm(0.0)], [tile(yt, "float32", 3, 8)])
    return yt, prev, "float32"


oob_case("oob_select_pred_leaves_location_fault", "Select", "Select, i = 4 < max 6 on W of the predicate ins[0]: rows 4..6 of a 6-row tile",
         "ins[0]", b_select)

# Load / Save through DRAM: a faulting Save writes nothing into the pre-filled external output
S = distinct(2, 8)
prev = np.full((6, 8), -7.0, F32)
g = Prog()
st = g.tile_in("s", "float32", S)
g.out_prefilled("y", "float32", prev, prev)
dyn = scalar_dyn(g, "i", "int32", 5, "W", 6)  # rows 5, 6 of a 6-row output: row 6 is past the end
g.inst("Save", [tile(st, "float32", 2, 8)], [ap("y", "float32", [[8, 2], [1, 8]], 0, **dyn)])
case("oob_save_out_leaves_location_fault", g,
     f"Save into rows 5, 6 of a pre-filled 6-row DRAM output (i = 5 < max 6 on W of outs[0]): the shifted AP leaves the "
     f"location -> fault out-of-bounds naming outs[0]; the output keeps its pre-filled values, row 5 included ({R3})",
     fault=("out-of-bounds", "outs[0]"))
g = Prog()
g.dram_in("x", "float32", distinct(8, 16))
prev = np.full((2, 4), -7.0, F32)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", -3, "W", 8, where="dram")
g.inst("Load", [ap("x", "float32", [[16, 2], [1, 4]], 0, **dyn)], [tile(yt, "float32", 2, 4)])
g.expect(yt, prev)
case("oob_load_in_negative_fault", g,
     f"Load from a DRAM input with i = -3 on W of ins[0] (index held in DRAM) -> fault out-of-bounds naming ins[0]; the "
     f"destination tile is unchanged ({R3})", fault=("out-of-bounds", "ins[0]"))

# ================================================================ C. TensorReduce axis rule (R4)
for axis in ("XY", "XYZW"):
    g = Prog()
    xt = g.tile_in("x", "float32", small_ints(4, 16))
    dyn = scalar_dyn(g, "i", "int32", 1, "Z", 2)
    g.sb("yt", "float32", 4 if axis == "XY" else 1, 1)
    k = g.inst("TensorReduce", [ap(xt, "float32", [[16, 4], [4, 2], [1, 4]], 0, **dyn)],
               [tile("yt", "float32", 4 if axis == "XY" else 1, 1)], op="add", axis=axis)
    case(f"reduce_dynamic_axis_{axis.lower()}_error", g,
         f"TensorReduce axis {axis} with a scalar offset on ins[0] (Z): validation bad-field ({R4})",
         errors=[("bad-field", f"instruction #{k}", "")])

# ================================================================ D. TensorCopyDynamicSrc / Dst (R5)
# D1: AWS legacy test_nki_isa_tensor_copy_dynamic.py example 0: src (128, 512), offsets 4 + arange(64) on axis 1
SRC = (RNG.random((128, 512)) * 100).astype(F32)
offs = (4 + np.arange(64)).astype(np.int32)
g = Prog()
st = g.tile_in("src", "float32", SRC)
ot = g.tile_in("offsets", "int32", offs.reshape(1, 64))
g.sb("ot_sb", "float32", 128, 64)
for b in range(64):
    g.inst("TensorCopyDynamicSrc",
           [ap(st, "float32", [[512, 128], [1, 1]], 0, indirect_dim="Z", indirect_dim_max_index=512,
               scalar_offset=ap(ot, "int32", [[64, 1], [1, 1]], b))],
           [ap("ot_sb", "float32", [[64, 128], [1, 1]], b)])
want = np.take(SRC, offs, axis=1)
g.save("ot_sb", "out", "float32", 128, 64, want)
case("tcds_src_nki_example0", g,
     f"AWS test_nki_isa_tensor_copy_dynamic.py example 0 (legacy tensor_copy_dynamic_src): src (128, 512) fp32, offsets "
     f"4 + arange(64) in an int32 SB tile; 64 TensorCopyDynamicSrc, each copies column offsets[b] ([[512, 128], [1, 1]], "
     f"Z offset) into column b; golden np.take(src, offsets, axis=1) ({R5})")

# D2: example 1: src (128, 512, 4) reduced to (128, 16, 4); offsets 4 + arange(8) on axis 1 (level 1, step 4)
SRC = (RNG.random((128, 16, 4)) * 100).astype(F32)
offs = (4 + np.arange(8)).astype(np.int32)
g = Prog()
st = g.tile_in("src", "float32", SRC.reshape(128, 64))
ot = g.tile_in("offsets", "int32", offs.reshape(1, 8))
g.sb("ot_sb", "float32", 128, 32)
for b in range(8):
    g.inst("TensorCopyDynamicSrc",
           [ap(st, "float32", [[64, 128], [4, 1], [1, 4]], 0, indirect_dim="Z", indirect_dim_max_index=16,
               scalar_offset=ap(ot, "int32", [[8, 1], [1, 1]], b))],
           [ap("ot_sb", "float32", [[32, 128], [4, 1], [1, 4]], 4 * b)], engine="Pool")
want = np.take(SRC, offs, axis=1).reshape(128, 32)
g.save("ot_sb", "out", "float32", 128, 32, want)
case("tcds_src_nki_example1_3level", g,
     f"AWS test_nki_isa_tensor_copy_dynamic.py example 1, axis 1 of (128, 512, 4) reduced to (128, 16, 4): 8 "
     f"TensorCopyDynamicSrc (Pool) through [[64, 128], [4, 1], [1, 4]] with offsets 4 + arange(8) on Z (level 1, step 4); "
     f"golden np.take(src, offsets, axis=1) ({R5})")

# D3: DynamicDst: scatter the columns of a (16, 8) tile to dynamic columns of a pre-filled (16, 40) tile
SRC = distinct(16, 8)
dcols = np.array([37, 2, 19, 11, 30, 5, 24, 0], np.int32)
prev = np.full((16, 40), -7.0, F32)
g = Prog()
st = g.tile_in("src", "float32", SRC)
ot = g.tile_in("offsets", "int32", dcols.reshape(1, 8))
yt = g.tile_in("prev", "float32", prev)
for b in range(8):
    g.inst("TensorCopyDynamicDst", [ap(st, "float32", [[8, 16], [1, 1]], b)],
           [ap(yt, "float32", [[40, 16], [1, 1]], 0, indirect_dim="Z", indirect_dim_max_index=40,
               scalar_offset=ap(ot, "int32", [[8, 1], [1, 1]], b))], engine="Activation")
want = prev.copy()
want[:, dcols] = SRC
g.save(yt, "y", "float32", 16, 40, want)
case("tcdd_dst_columns", g,
     f"8 TensorCopyDynamicDst (Activation): column b of a (16, 8) tile into column offsets[b] = {dcols.tolist()} of a "
     f"pre-filled (16, 40) tile (Z offset on outs[0]) ({R5})")

# D4: DynamicSrc with a cast and a 3-level AP, offset on Y, Z step != inner nums
X = fp32_vals((4, 30))
pairs = [[30, 4], [10, 2], [1, 5]]
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "int32", 4, "Y", 6)
g.sb("yt", "bfloat16", 4, 10)
g.inst("TensorCopyDynamicSrc", [ap(xt, "float32", pairs, 0, **dyn)], [tile("yt", "bfloat16", 4, 10)])
want = encode(gather(X, pairs, 4).reshape(4, 10), "bfloat16")
g.save("yt", "y", "bfloat16", 4, 10, want)
case("tcds_src_y_3level_cast_bfloat16", g,
     f"TensorCopyDynamicSrc fp32 -> bf16 through {pairs} with i = 4 on Y (level 2, step 1) ({R5}; {R1})")

# D5: DynamicDst on a 3-level AP, Z step 6 (inner nums 3), bf16 index
S = distinct(2, 6)
prev = np.full((2, 24), -7.0, F32)
pairs = [[24, 2], [6, 2], [1, 3]]
g = Prog()
st = g.tile_in("s", "float32", S)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "bfloat16", 2.0, "Z", 3)
g.inst("TensorCopyDynamicDst", [tile(st, "float32", 2, 6)], [ap(yt, "float32", pairs, 0, **dyn)], engine="Pool")
want = scatter(prev, pairs, 2 * 6, S)
assert not np.array_equal(want, scatter(prev, pairs, 2 * 3, S))
g.save(yt, "y", "float32", 2, 24, want)
case("tcdd_dst_z_3level_step6_bfloat16_index", g,
     f"TensorCopyDynamicDst (Pool) into {pairs} with bf16 i = 2.0 on Z (level 1, step 6, not the inner num 3) ({R5}; {R1})")

# D6: validation errors
for opcode, side in (("TensorCopyDynamicSrc", "ins"), ("TensorCopyDynamicDst", "outs")):
    short = "tcds" if side == "ins" else "tcdd"
    for tag in ("offset_on_w", "missing_offset"):
        g = Prog()
        xt = g.tile_in("x", "float32", distinct(6, 8))
        g.sb("yt", "float32", 6, 8)
        it = g.tile_in("i", "int32", np.array([[1]], np.int32))
        dim = "W" if tag == "offset_on_w" else "Z"
        dyn = dict(indirect_dim=dim, indirect_dim_max_index=2, scalar_offset=ap(it, "int32", [[1, 1], [1, 1]]))
        dyn_src = dyn if side == "ins" and tag == "offset_on_w" else {}
        dyn_dst = dyn if side == "outs" and tag == "offset_on_w" else {}
        k = g.inst(opcode, [ap(xt, "float32", [[8, 4], [1, 4]], 0, **dyn_src)], [ap("yt", "float32", [[8, 4], [1, 4]], 0, **dyn_dst)])
        what = {"offset_on_w": f"{side}[0] carries its scalar offset on W (the partition dim)",
                "missing_offset": "neither AP carries an offset"}[tag]
        case(f"{short}_{tag}_error", g, f"{opcode}: {what} -> validation bad-field ({R5})",
             errors=[("bad-field", f"instruction #{k}", "")])

# D7: out-of-bounds faults
for opcode, side in (("TensorCopyDynamicSrc", "ins"), ("TensorCopyDynamicDst", "outs")):
    short = "tcds" if side == "ins" else "tcdd"
    g = Prog()
    xt = g.tile_in("x", "float32", distinct(4, 12))
    prev = np.full((4, 12), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    dyn = scalar_dyn(g, "i", "int32", 9, "Z", 9)
    s_ap = ap(xt, "float32", [[12, 4], [1, 3]], 0, **(dyn if side == "ins" else {}))
    d_ap = ap(yt, "float32", [[12, 4], [1, 3]], 0, **(dyn if side == "outs" else {}))
    g.inst(opcode, [s_ap], [d_ap])
    g.expect(yt, prev)
    case(f"{short}_index_equals_max_fault", g,
         f"{opcode} with i = 9 = indirect_dim_max_index on Z of {side}[0] (the shifted AP would be inside its location) -> "
         f"fault out-of-bounds naming {side}[0]; the destination is unchanged ({R3}; {R5})",
         fault=("out-of-bounds", f"{side}[0]"))

# ================================================================ E. DMACopy modes after a scalar offset (R6)
# E1: Transpose XZYW, source shifted on W (W step 50 != inner nums 42)
X = distinct(8, 50)
dims = (2, 3, 7, 2)
pairs = [[50, 2], [14, 3], [2, 7], [1, 2]]
code = 11
perm = tuple(LET[c] for c in TNAMES[code])
g = Prog()
xt = g.tile_in("x", "float32", X)
dyn = scalar_dyn(g, "i", "int32", 5, "W", 7)
src4 = gather(X, pairs, 5 * 50)
assert not np.array_equal(src4, gather(X, pairs, 5 * inner_product(pairs, 0)))
d4 = np.transpose(src4, perm)
dn = d4.shape
g.sb("yt", "float32", dn[0], dn[1] * dn[2] * dn[3])
g.inst("DMACopy", [ap(xt, "float32", pairs, 0, **dyn)], [ap("yt", "float32", four_level(dn))], mode="Transpose",
       transpose_op=TNAMES[code], engine="Pool")
g.save("yt", "y", "float32", dn[0], dn[1] * dn[2] * dn[3], d4.reshape(dn[0], -1))
case("dma_transpose_xzyw_scalar_in_w", g,
     f"DMACopy Transpose XZYW of the 4-level source {pairs} shifted to partitions 5, 6 (i = 5 on W, step 50, not the "
     f"inner nums' 42): dst = numpy.transpose(shifted src, {perm}) ({R6}; {R1})", choices=["D2"])

# E2: Transpose XYZW, destination shifted on Y
X = distinct(2, 60)
dims = (2, 3, 4, 5)
code = 12
perm = tuple(LET[c] for c in TNAMES[code])
d4 = np.transpose(X.reshape(dims), perm)
dn = d4.shape  # (5, 4, 3, 2)
dpairs = [[40, 5], [6, 4], [2, 3], [1, 2]]
prev = np.full((5, 40), -7.0, F32)
g = Prog()
xt = g.tile_in("x", "float32", X)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 7, "Y", 9)
g.inst("DMACopy", [ap(xt, "float32", four_level(dims))], [ap(yt, "float32", dpairs, 0, **dyn)], mode="Transpose",
       transpose_op=TNAMES[code], engine="Pool")
want = scatter(prev, dpairs, 7 * 2, d4)
g.save(yt, "y", "float32", 5, 40, want)
case("dma_transpose_xyzw_scalar_out_y", g,
     f"DMACopy Transpose XYZW of a [2, 3, 4, 5] source into the destination {dpairs} shifted by i = 7 on Y (level 2, "
     f"step 2): elements 14.. of each row ({R6}; {R1})", choices=["D2"])

# E3: Replicate, source row chosen by a W offset
T = distinct(6, 9)
g = Prog()
xt = g.tile_in("x", "float32", T)
dyn = scalar_dyn(g, "i", "int32", 4, "W", 6)
g.sb("yt", "float32", 4, 9)
g.inst("DMACopy", [ap(xt, "float32", [[9, 1], [1, 9]], 0, **dyn)], [tile("yt", "float32", 4, 9)], mode="Replicate")
g.save("yt", "y", "float32", 4, 9, np.tile(T[4:5], (4, 1)))
case("dma_replicate_scalar_in_w", g, f"DMACopy Replicate of source row 4 (i = 4 on W of ins[0]) onto 4 partitions ({R6}; {R1})",
     choices=["D3"])

# E4: Replicate from a DRAM source (2 rows) with the destination shifted on W
T = distinct(2, 9)
prev = np.full((10, 9), -7.0, F32)
g = Prog()
g.dram_in("x", "float32", T)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "float32", 3.0, "W", 5)
g.inst("DMACopy", [tile("x", "float32", 2, 9)], [ap(yt, "float32", [[9, 6], [1, 9]], 0, **dyn)], mode="Replicate")
want = prev.copy()
want[3:9] = np.tile(T, (3, 1))
g.save(yt, "y", "float32", 10, 9, want)
case("dma_replicate_scalar_out_w", g,
     f"DMACopy Replicate of a 2-row DRAM source x 3 into partitions 3..8 of a pre-filled tile (fp32 i = 3.0 on W of "
     f"outs[0]) ({R6}; {R1})", choices=["D3"])

# E5: CCE add with ins[1] shifted on Z
A = fp32_vals((4, 8))
B = fp32_vals((4, 20))
g = Prog()
at = g.tile_in("a", "float32", A)
bt = g.tile_in("b", "float32", B)
dyn = scalar_dyn(g, "i", "int32", 9, "Z", 13)
g.sb("yt", "float32", 4, 8)
g.inst("DMACopy", [tile(at, "float32", 4, 8), ap(bt, "float32", [[20, 4], [1, 8]], 0, **dyn)], [tile("yt", "float32", 4, 8)],
       mode="CCE", cce_op="add", constants=[2.0, -0.5])
want = ((F32(0.0) + (F32(2.0) * A).astype(F32)).astype(F32) + (F32(-0.5) * B[:, 9:17]).astype(F32)).astype(F32)
g.save("yt", "y", "float32", 4, 8, want)
case("dma_cce_add_constants_scalar_in1_z", g,
     f"DMACopy CCE add with constants (2, -0.5), ins[1] = columns 9..16 via i = 9 on Z ({R6}; {R7})", choices=["D4"])

# E6: CCE max with the output shifted on W
A, B = fp32_vals((2, 8)), fp32_vals((2, 8))
prev = np.full((5, 8), -7.0, F32)
g = Prog()
at = g.tile_in("a", "float32", A)
bt = g.tile_in("b", "float32", B)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 2, "W", 4)
g.inst("DMACopy", [tile(at, "float32", 2, 8), tile(bt, "float32", 2, 8)], [ap(yt, "float32", [[8, 2], [1, 8]], 0, **dyn)],
       mode="CCE", cce_op="max")
want = prev.copy()
want[2:4] = np.maximum(np.maximum(F32(0.0), A), B)
g.save(yt, "y", "float32", 5, 8, want)
case("dma_cce_max_scalar_out_w", g, f"DMACopy CCE max (from +0.0) into rows 2, 3 of a pre-filled tile (i = 2 on W of outs[0]) ({R6}; {R7})",
     choices=["D4"])

# E7: a mode other than Copy out of bounds (default oob_is_err): fault, nothing written
T = distinct(6, 9)
g = Prog()
xt = g.tile_in("x", "float32", T)
prev = np.full((4, 9), -7.0, F32)
yt = g.tile_in("prev", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 6, "W", 6)
g.inst("DMACopy", [ap(xt, "float32", [[9, 1], [1, 9]], 0, **dyn)], [tile(yt, "float32", 4, 9)], mode="Replicate")
g.expect(yt, prev)
case("dma_replicate_scalar_oob_fault", g,
     f"DMACopy Replicate with i = 6 = max on W of ins[0], oob_is_err default (true) -> fault out-of-bounds; nothing "
     f"written ({R6}; D1 fault arm)", fault=("out-of-bounds", ""))

# ================================================================ F. CCE initial value, constants, NaN (R7)


def fmaxf(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b > a, b, a))).astype(F32)


def fminf(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b < a, b, a))).astype(F32)


def cce_rule(ins, op, consts=None):
    """R7: acc = +0.0; add: acc + (c_i * in_i) (product rounded to fp32, then the sum); max/min: fmaxf/fminf,
    constants ignored."""
    acc = np.zeros_like(ins[0], dtype=F32)
    for k, x in enumerate(ins):
        x = np.asarray(x, F32)
        if op == "add":
            acc = (acc + ((F32(consts[k]) * x).astype(F32) if consts is not None else x)).astype(F32)
        else:
            acc = (fmaxf if op == "max" else fminf)(acc, x)
    return acc


def cce_old(ins, op, consts=None):
    """The superseded reading (max/min from c_0*in_0, constants applied): asserted to differ."""
    vals = [np.asarray(x, F32) if consts is None else (F32(c) * np.asarray(x, F32)).astype(F32) for c, x in zip(consts or [1] * len(ins), ins)]
    acc = vals[0]
    for v in vals[1:]:
        acc = (fmaxf if op == "max" else fminf)(acc, v)
    return acc


def bits_differ(a, b):
    return not np.array_equal(np.asarray(a, F32).view(np.uint32), np.asarray(b, F32).view(np.uint32))


def cce_program(ins_raw, op, consts=None, in_dt="float32", out_dt="float32"):
    g = Prog()
    p, f = ins_raw[0].shape
    names = [g.tile_in(f"x{k}", in_dt, raw) for k, raw in enumerate(ins_raw)]
    g.sb("yt", out_dt, p, f)
    fields = dict(mode="CCE", cce_op=op)
    if consts is not None:
        fields["constants"] = [float(c) for c in consts]
    g.inst("DMACopy", [tile(n, in_dt, p, f) for n in names], [tile("yt", out_dt, p, f)], **fields)
    want32 = cce_rule([decode(x, in_dt) for x in ins_raw], op, consts)
    g.save("yt", "y", out_dt, p, f, encode(want32, out_dt))
    return g, want32


# F1/F2: max over all-negative elements is +0.0; min over all-positive elements is +0.0
for op, sign in (("max", -1), ("min", 1)):
    ins = [np.abs(fp32_vals((4, 16))) + F32(0.5) for _ in range(3)]
    mixed = RNG.integers(0, 2, (4, 16)).astype(bool)  # elsewhere one input takes the other sign
    ins = [(sign * x).astype(F32) for x in ins]
    ins[1] = np.where(mixed, -ins[1], ins[1]).astype(F32)
    g, want = cce_program(ins, op)
    assert (want[~mixed] == 0).all() and not np.signbit(want[~mixed]).any() and (want[mixed] != 0).all()
    assert bits_differ(want, cce_old(ins, op))
    tag = "all_negative" if op == "max" else "all_positive"
    case(f"cce_{op}_{tag}_is_zero", g,
         f"DMACopy CCE {op} of 3 inputs: where every input is {'negative' if op == 'max' else 'positive'} the result is "
         f"+0.0 (the zeroed accumulator), elsewhere the {op} ({R7})", choices=["D4"])

# F3/F4: constants scale only the add form
for op in ("max", "min"):
    ins = [fp32_vals((4, 16)) for _ in range(3)]
    consts = [-1.0, 2.0, 0.5]
    g, want = cce_program(ins, op, consts)
    assert bits_differ(want, cce_old(ins, op, consts))  # max/min from c_0*in_0 with constants applied
    scaled = [(F32(c) * x).astype(F32) for c, x in zip(consts, ins)]
    assert bits_differ(want, cce_rule(scaled, op))  # constants applied, from +0.0
    case(f"cce_{op}_constants_ignored", g,
         f"DMACopy CCE {op} with constants (-1, 2, 0.5): the constants are ignored, acc = {op}(+0.0, in_0, in_1, in_2) ({R7})",
         choices=["D4"])

# F5: add with constants, bf16 output RNE
ins = [fp32_vals((4, 16)) for _ in range(3)]
consts = [0.75, -1.5, 3.0]
g, want = cce_program(ins, "add", consts, out_dt="bfloat16")
assert bits_differ(decode(encode(want, "bfloat16"), "bfloat16"), cce_rule(ins, "add"))
case("cce_add_constants_out_bfloat16", g,
     f"DMACopy CCE add with constants (0.75, -1.5, 3): acc = +0.0 + c_i*in_i in fp32, narrowed RNE to a bf16 output ({R7})",
     choices=["D4"])

# F6/F7: NaN operands are ignored (fmaxf/fminf return the other)
nan = np.nan
for op, a, b in (("max", [nan, 5.0, nan, nan, -2.0, 3.0, nan, 7.5], [5.0, nan, nan, -2.0, nan, -4.0, 1.25, nan]),
                 ("min", [nan, -5.0, nan, nan, 2.0, -3.0, nan, -7.5], [-5.0, nan, nan, 2.0, nan, 4.0, -1.25, nan])):
    A = np.array([a, a[::-1]], F32)
    B = np.array([b, b[::-1]], F32)
    g, want = cce_program([A, B], op)
    assert not np.isnan(want).any() and (want == 0).sum() >= 4
    case(f"cce_{op}_nan_ignored", g,
         f"DMACopy CCE {op} of 2 inputs holding NaNs: a NaN operand yields the other (fmaxf/fminf), so NaN with NaN gives "
         f"the accumulator's +0.0 and NaN with {'-2 gives 0' if op == 'max' else '2 gives 0'} ({R7})", choices=["D4"])

# F8: max into bf16 (RNE ties) and from bf16 inputs
a = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -9, -1.0, 3 + 2 ** -7, -5.0, 0.1, 2.0 ** -20, 1e30] * 2, F32).reshape(2, 8)
b = np.array([-1.0, -2.0, -3.0, 3.0, -6.0, 0.05, -1.0, 1e31] * 2, F32).reshape(2, 8)
g, want = cce_program([a, b], "max", out_dt="bfloat16")
got = encode(want, "bfloat16")
assert got[0, 0] == 0x3F80 and got[0, 1] == 0x3F81 and got[0, 3] == 0x4040 and got[0, 2] == 0 and got[0, 4] == 0
case("cce_max_out_bfloat16_rne", g,
     f"DMACopy CCE max of 2 fp32 inputs into bf16: 1+2^-8 -> 0x3F80, 1+3*2^-9 -> 0x3F81, 3+2^-7 -> 0x4040 (RNE), all-negative elements -> "
     f"+0 ({R7})", choices=["D4"])
ins_b = [encode(fp32_vals((4, 16)), "bfloat16") for _ in range(3)]
ins_b[0] = encode(np.abs(decode(ins_b[0], "bfloat16")) + 1, "bfloat16")
g, want = cce_program(ins_b, "min", in_dt="bfloat16", out_dt="bfloat16")
case("cce_min_bfloat16_inputs", g, f"DMACopy CCE min of 3 bf16 inputs (widened to fp32, from +0.0) into bf16 ({R7})",
     choices=["D4"])

# ================================================================ G. HW-DGE bridge (R8)
HW = R8


def idx_sb(g, idx, name="idx"):
    """A uint16 index AP: an SB tile of N partitions x 1 (the NKI (P, 1) index tile)."""
    idx = np.asarray(idx, np.uint16)
    t = g.tile_in(name, "uint16", idx.reshape(-1, 1))
    return ap(t, "uint16", [[1, idx.size], [1, 1]])


def acc_add(dst, src, dt):
    """One step of the scatter add: widen both to fp32, add, round to the destination dtype."""
    return encode((decode(dst, dt) + decode(src, dt)).astype(F32), dt)


FN = 32  # free size of the nki ports (the SDK tests use 512)
# G1: case 24, gather src[2p]
SRC = fp32_vals((128, FN))
idx = 2 * np.arange(64)
g = Prog()
g.dram_in("src", "float32", SRC)
vo = idx_sb(g, idx)
g.sb("dt", "float32", 64, FN)
g.inst("DMACopy", [ap("src", "float32", [[FN, 64], [1, FN]], 0, indirect_dim="W", indirect_dim_max_index=128, vector_offset=vo)],
       [tile("dt", "float32", 64, FN)])
g.save("dt", "y", "float32", 64, FN, SRC[idx])
case("hw_nki24_gather_2p", g,
     f"nki-semantics §7 case 24 (test_nki_isa_dma_copy.py gather, free size 512 -> {FN}): DRAM src (128, {FN}), "
     f"vector_offset (64, 1) uint16 = 2p on ins[0] W -> dst[p] = src[2p] ({HW}; G6)", choices=["G6"])

# G2/G3: case 25, gather idx 3p, dst pre-filled -1: skip / fault
idx = 3 * np.arange(64)
for err in (False, None):
    g = Prog()
    g.dram_in("src", "float32", SRC)
    vo = idx_sb(g, idx)
    prev = np.full((64, FN), -1.0, F32)
    dtile = g.tile_in("d", "float32", prev)
    fields = {} if err is None else {"oob_is_err": err}
    g.inst("DMACopy", [ap("src", "float32", [[FN, 64], [1, FN]], 0, indirect_dim="W", indirect_dim_max_index=128, vector_offset=vo)],
           [tile(dtile, "float32", 64, FN)], **fields)
    if err is False:
        want = prev.copy()
        want[:43] = SRC[idx[:43]]
        assert (idx[:43] < 128).all() and (idx[43:] >= 128).all()
        g.save(dtile, "y", "float32", 64, FN, want)
        case("hw_nki25_gather_3p_skip", g,
             f"nki-semantics §7 case 25 (skip mode = oob_is_err false): idx = 3p over 64 rows of a 128-row table, dst "
             f"pre-filled -1 -> rows 0..42 = src[3p], rows 43..63 stay -1 ({HW}; G6)", choices=["G6"])
    else:
        g.expect(dtile, prev)
        case("hw_nki25_gather_3p_fault", g,
             f"nki-semantics §7 case 25 (error mode = oob_is_err default): idx = 3p, index 129 >= 128 -> fault "
             f"out-of-bounds naming ins[0].vector_offset; every index is checked first, nothing written ({HW}; G6)",
             choices=["G6"], fault=("out-of-bounds", "ins[0].vector_offset"))

# G4: case 26, scatter skip: dst (128, FN) = -1, src (64, FN), idx 3p
S64 = fp32_vals((64, FN))
g = Prog()
st = g.tile_in("s", "float32", S64)
vo = idx_sb(g, idx)
prev = np.full((128, FN), -1.0, F32)
want = prev.copy()
for k in range(43):
    want[3 * k] = S64[k]
g.out_prefilled("y", "float32", prev, want)
g.inst("DMACopy", [tile(st, "float32", 64, FN)],
       [ap("y", "float32", [[FN, 64], [1, FN]], 0, indirect_dim="W", indirect_dim_max_index=128, vector_offset=vo)], oob_is_err=False)
case("hw_nki26_scatter_3p_skip", g,
     f"nki-semantics §7 case 26: dst (128, {FN}) = -1, src (64, {FN}), idx 3p, oob_is_err false -> dst[3k] = src[k] for "
     f"k <= 42, the rest stays -1 ({HW})")

# G5: case 27, RMW scatter-add dst[2k] += src[k] with dst = 1
idx = 2 * np.arange(64)
g = Prog()
st = g.tile_in("s", "float32", S64)
vo = idx_sb(g, idx)
prev = np.ones((128, FN), F32)
want = prev.copy()
want[idx] = (prev[idx] + S64).astype(F32)
g.out_prefilled("y", "float32", prev, want)
g.inst("DMACopy", [tile(st, "float32", 64, FN)],
       [ap("y", "float32", [[FN, 64], [1, FN]], 0, indirect_dim="W", indirect_dim_max_index=128, vector_offset=vo)], cce_op="add")
case("hw_nki27_scatter_add_2p", g,
     f"nki-semantics §7 case 27 (legacy dst_rmw_op=np.add / dma_compute): dst (128, {FN}) = 1, idx 2p, src (64, {FN}) "
     f"-> dst[2k] += src[k] in fp32 ({HW})")

# G6: add whose rows revisit an element (duplicate indices), bf16, serial per-step rounding
M, Fr = 6, 8
idx = [3, 3, 1, 3, 3, 0, 3, 1, 3]
t0 = encode(fp32_vals((M, Fr)), "bfloat16")
t0[3] = encode(np.full(Fr, 2.0, F32), "bfloat16")
t0[3, Fr // 2:] = encode(np.full(Fr // 2, 256.0, F32), "bfloat16")
sv = encode(fp32_vals((len(idx), Fr)), "bfloat16")
for r, k in enumerate(idx):
    if k == 3:
        sv[r, :Fr // 2] = encode(np.full(Fr // 2, 2.0 ** -7, F32), "bfloat16")  # each a tie at 2.0: stays 2.0
        sv[r, Fr // 2:] = encode(np.full(Fr // 2, 1.0, F32), "bfloat16")  # 256 + 1 ties to 256 each step
want = t0.copy()
for r, k in enumerate(idx):
    want[k] = acc_add(want[k], sv[r], "bfloat16")
acc64 = decode(t0, "bfloat16").astype(np.float64)
for r, k in enumerate(idx):
    acc64[k] += decode(sv[r], "bfloat16").astype(np.float64)
once = encode(acc64.astype(F32), "bfloat16")
assert not np.array_equal(want[3], once[3]) and want[3, 0] == 0x4000 and want[3, -1] == 0x4380
assert once[3, 0] == 0x4003 and once[3, -1] == 0x4383
g = Prog()
st = g.tile_in("s", "bfloat16", sv)
vo = idx_sb(g, idx)
g.out_prefilled("y", "bfloat16", t0, want)
g.inst("DMACopy", [tile(st, "bfloat16", len(idx), Fr)],
       [ap("y", "bfloat16", [[Fr, len(idx)], [1, Fr]], 0, indirect_dim="W", indirect_dim_max_index=M, vector_offset=vo)],
       cce_op="add")
case("hw_scatter_add_duplicates_serial_bfloat16", g,
     f"HW-DGE scatter add into a bf16 DRAM table, indices {idx} (row 3 six times, row 1 twice): rows apply in index order, "
     f"each add widened to fp32 and rounded to bf16 (row 3: 2.0 + six 2^-7 stays 2.0, 256 + six 1.0 stays 256; one sum "
     f"rounded once would give 2.046875 / 262) ({HW})")

# G7: rows that overlap (W step 2 < row length 4): distinct indices revisit elements
T = 30
M = 14  # rows k cover elements 2k..2k+3, k < 14 -> up to 29
idx = [5, 6, 4, 5, 0, 13]
N, L = len(idx), 4
t0 = encode(np.full((1, T), 1.0, F32), "bfloat16")
t0[0, 20:] = encode(fp32_vals((1, T - 20)), "bfloat16")
sv = encode(np.full((N, L), 2.0 ** -8, F32), "bfloat16")  # half an ulp of 1.0: each add ties back to 1.0
sv[-1] = encode(fp32_vals((1, L)), "bfloat16")
want = t0.copy().reshape(-1)
acc64 = decode(t0, "bfloat16").astype(np.float64).reshape(-1)
for r, k in enumerate(idx):
    for e in range(L):
        want[2 * k + e] = acc_add(want[2 * k + e], sv[r, e], "bfloat16")
        acc64[2 * k + e] += decode(sv[r, e], "bfloat16")
once = encode(acc64.astype(F32), "bfloat16")
assert not np.array_equal(want, once.reshape(-1)) and want[10] == 0x3F80 and once.reshape(-1)[10] != 0x3F80
g = Prog()
st = g.tile_in("s", "bfloat16", sv)
vo = idx_sb(g, idx)
g.out_prefilled("y", "bfloat16", t0, want.reshape(1, T))
g.inst("DMACopy", [tile(st, "bfloat16", N, L)],
       [ap("y", "bfloat16", [[2, N], [1, L]], 0, indirect_dim="W", indirect_dim_max_index=M, vector_offset=vo)], cce_op="add")
case("hw_scatter_add_overlapping_rows_bfloat16", g,
     f"HW-DGE scatter add into a flat bf16 DRAM table through [[2, N], [1, 4]] (row k = elements 2k..2k+3, so rows "
     f"overlap), indices {idx}: elements revisited by several rows accumulate serially in index order, rounded to bf16 "
     f"at every step (the script asserts one rounding would differ) ({HW})")

# G8: gather (vector on ins[0]) with a scalar offset on the dense destination
TAB = fp32_vals((10, 6))
idx = [7, 0, 9, 7]
prev = np.full((8, 6), -7.0, F32)
g = Prog()
g.dram_in("tab", "float32", TAB)
vo = idx_sb(g, idx)
dtile = g.tile_in("d", "float32", prev)
dyn = scalar_dyn(g, "i", "int32", 3, "W", 5)
g.inst("DMACopy", [ap("tab", "float32", [[6, 4], [1, 6]], 0, indirect_dim="W", indirect_dim_max_index=10, vector_offset=vo)],
       [ap(dtile, "float32", [[6, 4], [1, 6]], 0, **dyn)])
want = prev.copy()
want[3:7] = TAB[idx]
g.save(dtile, "y", "float32", 8, 6, want)
case("hw_gather_dense_dst_scalar_w", g,
     f"HW-DGE gather of table rows {idx} (vector_offset on ins[0]) into a destination whose AP carries a scalar offset "
     f"i = 3 on W: the scalar shifts the dense AP first (rows 3..6), then row r <- table[idx[r]] ({HW}; {R1})",
     choices=["G6"])

# G9: scatter (vector on outs[0]) with a scalar offset on the dense source (Z level, step 1)
SRCT = distinct(3, 12)
idx = [4, 1, 6]
tab0 = np.full((8, 5), -1.0, F32)
g = Prog()
st = g.tile_in("s", "float32", SRCT)
vo = idx_sb(g, idx)
dyn = scalar_dyn(g, "i", "int32", 6, "Z", 8)
want = tab0.copy()
for r, k in enumerate(idx):
    want[k] = SRCT[r, 6:11]
g.out_prefilled("y", "float32", tab0, want)
g.inst("DMACopy", [ap(st, "float32", [[12, 3], [1, 5]], 0, **dyn)],
       [ap("y", "float32", [[5, 3], [1, 5]], 0, indirect_dim="W", indirect_dim_max_index=8, vector_offset=vo)])
case("hw_scatter_dense_src_scalar_z", g,
     f"HW-DGE scatter into rows {idx} of a pre-filled table (vector_offset on outs[0]) from a source AP [[12, 3], [1, 5]] "
     f"carrying i = 6 on Z: dense row r = source columns 6..10 of row r ({HW}; {R1})")

# G10: scatter add with the dense source shifted on W, bf16 DRAM table
SRCT = encode(fp32_vals((6, 4)), "bfloat16")
idx = [2, 0, 2]
tab0 = encode(fp32_vals((4, 4)), "bfloat16")
g = Prog()
st = g.tile_in("s", "bfloat16", SRCT)
vo = idx_sb(g, idx)
dyn = scalar_dyn(g, "i", "int32", 2, "W", 4)
want = tab0.copy()
for r, k in enumerate(idx):
    want[k] = acc_add(want[k], SRCT[2 + r], "bfloat16")
g.out_prefilled("y", "bfloat16", tab0, want)
g.inst("DMACopy", [ap(st, "bfloat16", [[4, 3], [1, 4]], 0, **dyn)],
       [ap("y", "bfloat16", [[4, 3], [1, 4]], 0, indirect_dim="W", indirect_dim_max_index=4, vector_offset=vo)], cce_op="add")
case("hw_scatter_add_dense_src_scalar_w", g,
     f"HW-DGE scatter add (bf16) of source rows 2..4 (i = 2 on W of ins[0]) into table rows {idx}: row 2 receives two adds, "
     f"rounded at each ({HW}; {R1})")

# G11: the scalar side out of bounds (default oob_is_err) -> fault, nothing written
tab0 = np.full((8, 5), -1.0, F32)
g = Prog()
st = g.tile_in("s", "float32", distinct(3, 12))
vo = idx_sb(g, [4, 1, 6])
dyn = scalar_dyn(g, "i", "int32", 8, "Z", 8)
g.out_prefilled("y", "float32", tab0, tab0)
g.inst("DMACopy", [ap(st, "float32", [[12, 3], [1, 5]], 0, **dyn)],
       [ap("y", "float32", [[5, 3], [1, 5]], 0, indirect_dim="W", indirect_dim_max_index=8, vector_offset=vo)])
case("hw_scatter_dense_src_scalar_oob_fault", g,
     f"HW-DGE scatter whose dense source carries i = 8 = max on Z, oob_is_err default -> fault out-of-bounds; the "
     f"pre-filled table is unchanged ({HW}; {R1})", fault=("out-of-bounds", ""))

# G12: vector offsets on both sides: validation error
g = Prog()
g.out_prefilled("y", "float32", distinct(6, 4), distinct(6, 4))
g.dram_in("tab", "float32", fp32_vals((6, 4)))
vo = idx_sb(g, [1, 2])
vo2 = idx_sb(g, [3, 0], name="idx2")
k = g.inst("DMACopy", [ap("tab", "float32", [[4, 2], [1, 4]], indirect_dim="W", indirect_dim_max_index=6, vector_offset=vo)],
           [ap("y", "float32", [[4, 2], [1, 4]], indirect_dim="W", indirect_dim_max_index=6, vector_offset=vo2)])
case("hw_vector_offset_both_sides_error", g,
     f"DMACopy with a vector_offset on ins[0] and on outs[0]: validation bad-field (the reference reads one offset "
     f"argument) ({HW})", errors=[("bad-field", f"instruction #{k}", "")])


# ================================================================ write
def write_all():
    birprog.clear_cases(HERE)
    total = 0
    for name, (g, note, choices, fault, errors) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes), never from birsim"]
        lines += [f"choice: {c}" for c in choices]
        if errors:
            for kind, loc, msg in errors:
                lines.append(f"error {kind} @ {loc} | {msg}".rstrip())
            inputs, outputs = {}, {}
        else:
            lines.append("profile: refsim")
            if fault is not None:
                lines.append(f"fault {fault[0]} | {fault[1]}".rstrip())
            inputs, outputs = g.inputs, g.outputs
        total += birprog.write_case(os.path.join(HERE, name), g.program(), lines, inputs, outputs)
    print(f"{len(CASES)} cases, {total / 2**20:.2f} MiB of tensors")


write_all()
