#!/usr/bin/env python3
"""Writes the `programs/datamove` conformance suite: BIR JSON programs, .npy inputs and expected .npy
outputs for the data-movement opcodes (DMACopy Copy / dynamic offset / Transpose / Replicate / CCE,
StreamShuffle, StreamTranspose, Iota, TensorScalarAffineSelect, Memset Const / Random (host MT19937-64
and Pool Xorwow), SetRandState, Select, CopyPredicated), computed here with NumPy / ml_dtypes from the
semantics of /work/dm-decisions.md (seed 000 §5, re-facts §3/§7, nki-semantics), independently of birsim.

The host random Memset expectations come from the C++ program rng/mt_draws.cpp (std::mt19937_64 and
std::uniform_int_distribution<uint32_t>), compiled here with g++; its outputs are committed under rng/.
NOTE: libstdc++ >= 11 on a target with __int128 draws uniform_int_distribution<uint32_t> from a 64-bit
engine with Lemire's method ((y * 2^32) >> 64 = y >> 32); the reference simulator's binary carries the
older "fallback (2 divisions)" path (the 0xFFFFFFFF00000000 rejection bound, re-facts §7): redraw while
y >= 0xFFFFFFFF00000000, return y / 0xFFFFFFFF. We compile the same source twice: with the default
flags (rng/uniform_lemire_seed42.txt, for the record) and with -U__SIZEOF_INT128__, which makes the
same libstdc++ header take the fallback path (rng/uniform_seed*.txt, the expectations). The Python
re-implementation of the fallback below is asserted equal to the C++ output.

Cases that depend on an ASSUMED decision carry `choice: D<n>` (dm-decisions.md IDs).
The packed `_x4` forms (`x4_*`) and CopyPredicated's side output under LoadAccumulate (`loadacc_cpred_*`)
live in x4_cases.py (session-16 contract K1-K3, L1), registered at the end with their own RNG.
Run: /work/main/.venv/bin/python conformance/programs/datamove/make_cases.py
"""
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import LET, TNAMES, ap, ap_index, four_level, imm, tile  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
RNGDIR = os.path.join(HERE, "rng")
F32 = np.float32
RNG = np.random.default_rng(20261202)
M32 = 0xFFFFFFFF

# ---------------------------------------------------------------- dtypes and refsim narrowing
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "float8_e4m3fn": np.uint8,
         "float8e5": np.uint8, "float8e4": np.uint8, "float8e3": np.uint8, "int32": np.int32, "uint8": np.uint8,
         "int8": np.int8, "uint32": np.uint32, "uint64": np.uint64, "int16": np.int16, "uint16": np.uint16,
         "int64": np.int64}
SIZE = {k: np.dtype(v).itemsize for k, v in STORE.items()}
ML = {"bfloat16": md.bfloat16, "float8_e4m3fn": md.float8_e4m3fn, "float8e5": md.float8_e5m2,
      "float8e4": md.float8_e4m3, "float8e3": md.float8_e3m4}
FP8 = {"float8_e4m3fn": (0x7F, 0x7E), "float8e5": (0x7E, 0x7B), "float8e4": (0x7C, 0x77), "float8e3": (0x78, 0x6F)}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def decode(raw, dt):
    """Stored values -> float32 (the project's widening)."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    return raw.astype(F32)


def encode(x, dt):
    """float32 -> stored values, refsim narrowing (RNE; FP8 saturates, NaN canonical; ints round and clamp)."""
    x = np.asarray(x, F32)
    nan = np.isnan(x)
    neg = np.signbit(x)
    if dt == "float32":
        return x.copy()
    if dt == "bfloat16":
        b = x.astype(md.bfloat16).view(np.uint16)
        return np.where(nan, 0x7FC0, b).astype(np.uint16)
    if dt == "float16":
        h = x.astype(np.float16)
        return np.where(nan, np.uint16(0x7E00).view(np.float16), h).astype(np.float16)
    if dt in FP8:
        ml = x.astype(ML[dt]).view(np.uint8)
        nan_code, max_code = FP8[dt]
        over = ~nan & ~np.isfinite(ml.view(ML[dt]).astype(F32))
        sat = np.where(over, np.where(neg, 0x80 | max_code, max_code), ml)
        return np.where(nan, nan_code, sat).astype(np.uint8)
    info = np.iinfo(STORE[dt])
    r = np.rint(np.where(nan, 0, x).astype(np.float64))
    r = np.clip(r, info.min, info.max)
    nanv = np.where(neg, info.min if info.min < 0 else 0, info.max)
    return np.where(nan, nanv, r).astype(STORE[dt])


def cast(raw, src_dt, dst_dt):
    """The project cast: through fp32 (bit-exact when the dtypes match)."""
    if src_dt == dst_dt:
        return np.asarray(raw).astype(STORE[dst_dt]).copy()
    return encode(decode(raw, src_dt), dst_dt)


def int_to(v, dt):
    """int32 values -> dt through the project cast (int32 -> fp32 RNE -> dt)."""
    v = np.asarray(v, np.int32)
    if dt == "int32":
        return v.copy()
    return encode(v.astype(F32), dt)


# ---------------------------------------------------------------- program building (birprog)
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "DMACopy": "DMA", "Iota": "Pool", "TensorScalarAffineSelect": "Pool"}
    DEFAULT_ENGINE = "DVE"


CASES = {}


FACTS = {}


def case(name, prog, note, choices=(), fault=None, errors=None, facts=()):
    """facts: the CONFIRMED / DOCUMENTED docs/fidelity.md rows the case relies on, written as
    `# fact: ID` comment lines (the runner has no fact directive)."""
    assert name not in CASES, name
    if facts:
        FACTS[name] = tuple(facts)
    CASES[name] = (prog, note, tuple(choices), fault, errors)


def fp32_vals(shape, scale=8.0):
    return (RNG.standard_normal(shape) * scale).astype(F32)


def distinct(p, f, dt="float32"):
    """Distinct values that name their element, exactly representable in dt."""
    k = np.arange(p * f, dtype=np.int64).reshape(p, f)
    if dt == "float32":
        return ((k + 0.25) * np.where(k % 2 == 0, 1, -1)).astype(F32)
    if dt == "bfloat16":  # raw bit patterns, avoiding NaN codes
        return ((k * 37 + 0x3C00) % 0x7F00).astype(np.uint16)
    if dt == "uint8":
        return ((k * 7 + 3) % 256).astype(np.uint8)
    raise ValueError(dt)


SEED51 = "seed 000 §5.1 doCopy: read the whole source, then write (cast-on-copy, any strides)"

# ================================================================ 1. DMACopy Copy
P, F = 8, 20
CAST_VALS = np.array([0.0, -0.0, 1.0, -1.5, 2.5, 3.5, -2.5, 127.4, 127.6, -128.6, 300.0, -300.0,
                      1 + 2 ** -8, 1 + 3 * 2 ** -9, 65504.0, 65520.0, 1e-8, -1e-8, 240.0, 250.0, 448.0,
                      500.0, 57344.0, 1e6, -1e6, 2 ** 31, -2 ** 31 - 1e3, 1e10, -1e10, np.inf, -np.inf,
                      np.nan, 0.1, 0.3333333, 15.5, 16.0, -17.25, 2.0 ** -14, 2.0 ** -24, 6e-5], F32)
for dt in ("bfloat16", "float16", "float8e4", "float8e5", "float8_e4m3fn", "float8e3", "int8", "int32",
           "uint8", "int16"):
    vals = CAST_VALS.copy()
    if dt in ("int8", "int32", "uint8", "int16"):
        vals = vals[~np.isnan(vals)]
    n = vals.size
    x = np.concatenate([vals, fp32_vals(2 * 40 - n, 50.0)]).reshape(2, 40)
    y = encode(x, dt)
    back = decode(y, dt) if dt in ML or dt == "float16" else y.astype(F32)
    g = Prog()
    xt = g.tile_in("x", "float32", x)
    g.sb("yt", dt, 2, 40)
    g.sb("zt", "float32", 2, 40)
    g.inst("DMACopy", [tile(xt, "float32", 2, 40)], [tile("yt", dt, 2, 40)], mode="Copy")
    g.inst("DMACopy", [tile("yt", dt, 2, 40)], [tile("zt", "float32", 2, 40)], mode="Copy")
    g.save("yt", "y", dt, 2, 40, y)
    g.save("zt", "z", "float32", 2, 40, back.astype(F32))
    case(f"copy_cast_float32_{dt}_and_back", g,
         f"DMACopy Copy fp32 -> {dt} (refsim narrowing: RNE, FP8 saturates, ints round/clamp) and {dt} -> fp32 "
         f"({SEED51})", choices=["N7"] if dt in ("float8e4", "float8e3") else ())

x = fp32_vals((P, F))
# strided source, 3-level destination
g = Prog()
xt = g.tile_in("x", "float32", x)
g.sb("yt", "float32", P, 10)
g.inst("DMACopy", [ap(xt, "float32", [[F, P], [2, 10]], 1)], [ap("yt", "float32", [[10, P], [5, 2], [1, 5]])], mode="Copy")
g.save("yt", "y", "float32", P, 10, x[:, 1::2])
case("copy_strided_step2_into_3level", g, f"DMACopy Copy, source every 2nd element from 1, destination a 3-level AP ({SEED51})")
# partition-broadcast (step 0) and free broadcast
g = Prog()
xt = g.tile_in("x", "float32", x)
g.sb("yt", "float32", P, F)
g.inst("DMACopy", [ap(xt, "float32", [[0, P], [1, F]], 3 * F)], [tile("yt", "float32", P, F)], mode="Copy")
g.save("yt", "y", "float32", P, F, np.tile(x[3], (P, 1)))
case("copy_broadcast_partition_step0", g, f"DMACopy Copy from a partition-step-0 AP (row 3 to every row) ({SEED51})")
g = Prog()
xt = g.tile_in("x", "float32", x)
g.sb("yt", "float32", P, F)
g.inst("DMACopy", [ap(xt, "float32", [[F, P], [0, 4], [1, 5]], 2)], [ap("yt", "float32", [[F, P], [5, 4], [1, 5]])], mode="Copy")
g.save("yt", "y", "float32", P, F, np.tile(x[:, 2:7], (1, 4)))
case("copy_broadcast_free_step0", g, f"DMACopy Copy, a free-dim step 0 repeats elements 2..6 of each row 4 times ({SEED51})")
g = Prog()
xt = g.tile_in("x", "float32", x)
g.sb("yt", "float32", P, F)
g.inst("DMACopy", [ap(xt, "float32", [[F, P], [-1, F]], F - 1)], [tile("yt", "float32", P, F)], mode="Copy")
g.save("yt", "y", "float32", P, F, x[:, ::-1])
case("copy_negative_step_reverse_rows", g, f"DMACopy Copy, source free step -1 from the row end: each row reversed ({SEED51})")
g = Prog()
xt = g.tile_in("x", "float32", x)
yt = g.tile_in("z0", "float32", np.zeros((P, F), F32))
g.inst("DMACopy", [ap(xt, "float32", [[F, P], [-2, 10]], F - 1)], [ap(yt, "float32", [[F, P], [1, 10]], 10)], mode="Copy")
y = np.zeros((P, F), F32)
y[:, 10:] = x[:, F - 1::-2]
g.save(yt, "y", "float32", P, F, y)
case("copy_negative_step2_into_zeroed", g, f"DMACopy Copy, source step -2 from the row end into elements 10.. of a zeroed tile ({SEED51})")
# negative step with a cast
g = Prog()
xt = g.tile_in("x", "float32", x)
g.sb("yt", "bfloat16", P, F)
g.inst("DMACopy", [ap(xt, "float32", [[F, P], [-1, F]], F - 1)], [tile("yt", "bfloat16", P, F)], mode="Copy")
g.save("yt", "y", "bfloat16", P, F, encode(x[:, ::-1], "bfloat16"))
case("copy_negative_step_cast_bfloat16", g, f"DMACopy Copy fp32 -> bf16 with a reversed source ({SEED51})")
# overlap within one tile, both directions (partitions and free)
OX = distinct(32, 48)
for name, s, d in [("partitions_down", 0, 8), ("partitions_up", 8, 0)]:
    y = OX.copy()
    y[d:d + 24] = OX[s:s + 24]
    g = Prog()
    xt = g.tile_in("x", "float32", OX)
    g.inst("DMACopy", [tile(xt, "float32", 24, 48, s * 48)], [tile(xt, "float32", 24, 48, d * 48)], mode="Copy")
    g.save(xt, "y", "float32", 32, 48, y)
    case(f"copy_overlap_{name}", g, f"DMACopy Copy within one tile, partitions {s}.. -> {d}.. (overlapping; {SEED51})")
for name, s, d in [("free_right", 0, 5), ("free_left", 5, 0)]:
    y = OX.copy()
    y[:, d:d + 43] = OX[:, s:s + 43]
    g = Prog()
    xt = g.tile_in("x", "float32", OX)
    g.inst("DMACopy", [ap(xt, "float32", [[48, 32], [1, 43]], s)], [ap(xt, "float32", [[48, 32], [1, 43]], d)], mode="Copy")
    g.save(xt, "y", "float32", 32, 48, y)
    case(f"copy_overlap_{name}", g, f"DMACopy Copy within one tile, free elements {s}.. -> {d}.. of every row ({SEED51})")
# flat DRAM -> DRAM copy with a cast
g = Prog()
xf = fp32_vals((1, 300))
g.dram_in("x", "float32", xf)
g.dram_out("y", "float16", (1, 300), encode(xf, "float16"))
g.inst("DMACopy", [tile("x", "float32", 1, 300)], [tile("y", "float16", 1, 300)], mode="Copy")
case("copy_dram_to_dram_cast_float16", g, f"DMACopy Copy DRAM -> DRAM fp32 -> fp16 ({SEED51})")

# ================================================================ 2. DMACopy Copy with a scalar dynamic offset
DYN = "dm-decisions DMACopy: offset += i x step of the indirect_dim level; OOB when i<0, i>=indirect_dim_max_index or the shifted AP leaves its location"
NR, RF = 10, 12
TAB = distinct(NR, RF)


def dyn_program(i, idx_dt, src_pairs, src_off, dim, max_index, dst_rows, oob_is_err=None, pre_save=False,
                on_dst=False, reg=False):
    """Table TAB (NR x RF) in SB; copy through a dynamic-offset AP into a pre-filled destination."""
    g = Prog()
    tt = g.tile_in("tab", "float32", TAB)
    it = g.tile_in("idx", idx_dt, np.array([[i]], STORE[idx_dt]))
    prev = np.full((dst_rows if not on_dst else NR, RF), -7.0, F32)
    yt = g.tile_in("prev", "float32", prev)
    if pre_save:
        g.save(yt, "early", "float32", prev.shape[0], RF, prev)
    dyn = dict(indirect_dim=dim, indirect_dim_max_index=max_index,
               scalar_offset="r0" if reg else ap(it, idx_dt, [[1, 1], [1, 1]]))
    fields = dict(mode="Copy")
    if oob_is_err is not None:
        fields["oob_is_err"] = oob_is_err
    if not on_dst:
        g.inst("DMACopy", [ap(tt, "float32", src_pairs, src_off, **dyn)], [tile(yt, "float32", dst_rows, RF)], **fields)
    else:
        g.inst("DMACopy", [tile(tt, "float32", dst_rows, RF)], [ap(yt, "float32", src_pairs, src_off, **dyn)], **fields)
    return g, prev, yt


def dyn_expect(src_pairs, src_off, step, i, prev, dst_idx=None, src_n=NR * RF, on_dst=False):
    """D1: element pairs copied only when both addresses are inside their locations."""
    sidx = ap_index(src_pairs, src_off + i * step).reshape(-1)
    out = prev.copy().reshape(-1)
    if not on_dst:
        didx = np.arange(sidx.size)
        for s, d in zip(sidx, didx):
            if 0 <= s < src_n:
                out[d] = TAB.reshape(-1)[s]
    else:
        for k, d in enumerate(sidx):
            if 0 <= d < out.size:
                out[d] = TAB.reshape(-1)[k]
    return out.reshape(prev.shape)


# in bounds: row i of the table (W dim)
for i, idx_dt in [(3, "int32"), (0, "int32"), (9, "int32"), (6, "float32"), (2, "uint16")]:
    pairs = [[RF, 1], [1, RF]]
    g, prev, yt = dyn_program(i, idx_dt, pairs, 0, "W", NR, 1)
    g.save(yt, "y", "float32", 1, RF, dyn_expect(pairs, 0, RF, i, prev))
    case(f"dyn_scalar_w_row{i}_{idx_dt}", g, f"DMACopy Copy, source row i = {i} ({idx_dt} scalar AP) of a {NR}-row table via indirect_dim W ({DYN})")
# level 1 (Z on a 2-level AP: an indirect dim is the level index, J31): shift within a row, 2 rows
pairs = [[RF, 2], [1, 5]]
g, prev, yt = dyn_program(4, "int32", pairs, RF, "Z", 8, 2)
g.insts[-1]["outs"] = [ap(yt, "float32", [[RF, 2], [1, 5]])]
y = prev.copy()
y[:, :5] = TAB[1:3, 4:9]
g.save(yt, "y", "float32", 2, RF, y)
case("dyn_scalar_z_shift4", g, f"DMACopy Copy, source AP [[12,2],[1,5]] from row 1 shifted by i = 4 along Z = level 1 (step 1) ({DYN})")
# destination carries the dynamic offset (scatter one row into row i)
pairs = [[RF, 1], [1, RF]]
g, prev, yt = dyn_program(5, "int32", pairs, 0, "W", NR, 1, on_dst=True)
g.save(yt, "y", "float32", NR, RF, dyn_expect(pairs, 0, RF, 5, prev, on_dst=True))
case("dyn_scalar_dst_w_row5", g, f"DMACopy Copy, destination row i = 5 via a dynamic offset on the destination AP ({DYN})")
# out of bounds, fault (default oob_is_err and explicit true); an earlier Save is checked
for i, mx, rows, tag in [(10, NR, 1, "index_past_max"), (-1, NR, 1, "negative"), (9, NR, 2, "leaves_location"),
                         (8, 6, 1, "index_past_max_inside_location")]:
    for err in (None, True):
        pairs = [[RF, rows], [1, RF]]
        g, prev, yt = dyn_program(i, "int32", pairs, 0, "W", mx, rows, oob_is_err=err, pre_save=True)
        g.save(yt, "y", "float32", rows, RF, prev)  # not reached
        del g.outputs["y"]
        case(f"dyn_oob_{tag}_fault{'_default' if err is None else ''}", g,
             f"DMACopy Copy, dynamic row i = {i} with max index {mx}, {rows} row(s): out of bounds with oob_is_err "
             f"{'default (true)' if err is None else 'true'} -> fault; the earlier Save is intact ({DYN})",
             fault=("out-of-bounds", ""))
# out of bounds, tolerated (D1)
for i, mx, rows, tag in [(10, NR, 1, "index_past_end"), (-1, NR, 2, "negative_half"), (9, NR, 2, "leaves_location_half"),
                         (8, 6, 1, "index_past_max_inside_location"), (-3, NR, 1, "negative_all")]:
    pairs = [[RF, rows], [1, RF]]
    g, prev, yt = dyn_program(i, "int32", pairs, 0, "W", mx, rows, oob_is_err=False)
    g.save(yt, "y", "float32", rows, RF, dyn_expect(pairs, 0, RF, i, prev))
    case(f"dyn_oob_{tag}_tolerated", g,
         f"DMACopy Copy, dynamic row i = {i}, max index {mx}, {rows} row(s), oob_is_err false: only element pairs whose "
         f"addresses are both inside their locations are copied, the rest of the pre-filled destination stays ({DYN})",
         choices=["D1"])
# tolerated on the destination side
pairs = [[RF, 2], [1, RF]]
g, prev, yt = dyn_program(9, "int32", pairs, 0, "W", NR, 2, oob_is_err=False, on_dst=True)
g.save(yt, "y", "float32", NR, RF, dyn_expect(pairs, 0, RF, 9, prev, on_dst=True))
case("dyn_oob_dst_leaves_location_tolerated", g,
     f"DMACopy Copy, destination rows 9, 10 of a 10-row tile (i = 9), oob_is_err false: row 9 written, row 10 skipped ({DYN})",
     choices=["D1"])
# the letter is the level index (J31): Y on a 3-level AP is level 2, Z / Y on a 4-level AP are levels 1 / 2
for tag, pairs, dim, step, i in [("y_3level", [[RF, 1], [3, 2], [1, 3]], "Y", 1, 2),
                                 ("z_4level", [[RF, 1], [6, 2], [2, 3], [1, 2]], "Z", 6, 3),
                                 ("y_4level", [[RF, 1], [6, 2], [2, 3], [1, 2]], "Y", 2, 5)]:
    n = int(np.prod([q[1] for q in pairs]))
    g = Prog()
    tt = g.tile_in("tab", "float32", TAB)
    it = g.tile_in("idx", "int32", np.array([[i]], np.int32))
    g.sb("yt", "float32", 1, n)
    g.inst("DMACopy", [ap(tt, "float32", pairs, 0, indirect_dim=dim, indirect_dim_max_index=8,
                          scalar_offset=ap(it, "int32", [[1, 1], [1, 1]]))], [tile("yt", "float32", 1, n)], mode="Copy")
    g.save("yt", "y", "float32", 1, n, TAB.reshape(-1)[ap_index(pairs, i * step).reshape(1, -1)])
    case(f"dyn_scalar_{tag}", g, f"DMACopy Copy, indirect_dim {dim} on the AP {pairs}: offset += i = {i} x step {step} of the level {dim} names "
         f"(docs/bir-json.md dim letters, J31; {DYN})")
# a faulting DMACopy writes straight into the pre-filled external output: it must stay as it was
for i, err in [(10, None), (-1, True)]:
    g = Prog()
    tt = g.tile_in("tab", "float32", TAB)
    it = g.tile_in("idx", "int32", np.array([[i]], np.int32))
    prev = np.full((1, RF), -7.0, F32)
    g.dram_in("prev", "float32", prev)
    g.dram_out("y", "float32", (1, RF), prev)
    g.inst("Load", [tile("prev", "float32", 1, RF)], [tile("y", "float32", 1, RF)])
    fields = {"mode": "Copy"} if err is None else {"mode": "Copy", "oob_is_err": True}
    g.inst("DMACopy", [ap(tt, "float32", [[RF, 1], [1, RF]], 0, indirect_dim="W", indirect_dim_max_index=NR,
                          scalar_offset=ap(it, "int32", [[1, 1], [1, 1]]))], [tile("y", "float32", 1, RF)], **fields)
    case(f"dyn_oob_fault_output_untouched_i{i}".replace("-", "m"), g,
         f"DMACopy Copy into the external output (pre-filled by a Load), dynamic row i = {i} out of bounds, oob_is_err "
         f"{'default' if err is None else 'true'} -> fault out-of-bounds; the output keeps the pre-filled values ({DYN})",
         fault=("out-of-bounds", ""))
# register offset
pairs = [[RF, 1], [1, RF]]
g, prev, yt = dyn_program(0, "int32", pairs, 0, "W", NR, 1, reg=True, pre_save=True)
case("dyn_register_offset_uninitialized", g,
     "DMACopy Copy with scalar_offset a register name no instruction wrote -> fault uninitialized naming it "
     "(docs/bir-json.md \"Registers and control flow\"); the earlier Save is intact",
     fault=("uninitialized", "register 'r0'"))

# TensorCopyDynamicSrc / Dst (24/25): doCopy after the scalar offset resolves. AWS's legacy NKI test
# test_nki_isa_tensor_copy_dynamic.py: np.take(src, 4 + arange(n), axis=1) (nki-semantics.md).
TCD = ("nki-semantics tensor_copy_dynamic_src/dst: a runtime start along a free dim; legacy test "
       "np.take(src, 4 + arange(n), axis=1); the offset scales by the indexed level's step (D1)")
n = 6
g = Prog()
tt = g.tile_in("tab", "float32", TAB)
it = g.tile_in("idx", "int32", np.array([[4]], np.int32))
g.sb("yt", "float32", NR, n)
g.inst("TensorCopyDynamicSrc", [ap(tt, "float32", [[RF, NR], [1, n]], 0, indirect_dim="Z", indirect_dim_max_index=RF - n + 1,
                                   scalar_offset=ap(it, "int32", [[1, 1], [1, 1]]))], [tile("yt", "float32", NR, n)])
g.save("yt", "y", "float32", NR, n, np.take(TAB, 4 + np.arange(n), axis=1))
case("tensor_copy_dynamic_src_take_axis1", g, f"TensorCopyDynamicSrc: y = np.take(tab, 4 + arange(6), axis=1) ({TCD})", choices=["D1"])
g = Prog()
st = g.tile_in("src", "float32", TAB[:, :n].copy())
it = g.tile_in("idx", "int32", np.array([[3]], np.int32))
prev = np.full((NR, RF), -7.0, F32)
yt = g.tile_in("prev", "float32", prev)
g.inst("TensorCopyDynamicDst", [tile(st, "float32", NR, n)], [ap(yt, "float32", [[RF, NR], [1, n]], 0, indirect_dim="Z",
                                   indirect_dim_max_index=RF - n + 1, scalar_offset=ap(it, "int32", [[1, 1], [1, 1]]))])
y = prev.copy()
y[:, 3 + np.arange(n)] = TAB[:, :n]
g.save(yt, "y", "float32", NR, RF, y)
case("tensor_copy_dynamic_dst_columns_3_to_8", g, f"TensorCopyDynamicDst: y[:, 3 + arange(6)] = src over a pre-filled tile ({TCD})", choices=["D1"])
# A TensorCopy window of 4 of the table's 12 columns, rows moved by index 2 on W: the step of the indexed level is the
# base tensor's row stride (12), so rows 2..4 (not elements 2*4.. as the AP's own inner nums would say).
g = Prog()
tt = g.tile_in("tab", "float32", TAB)
it = g.tile_in("idx", "int32", np.array([[2]], np.int32))
g.sb("yt", "float32", 3, 4)
g.inst("TensorCopy", [ap(tt, "float32", [[RF, 3], [1, 4]], 0, indirect_dim="W", indirect_dim_max_index=NR - 2,
                         scalar_offset=ap(it, "int32", [[1, 1], [1, 1]]))], [tile("yt", "float32", 3, 4)])
g.save("yt", "y", "float32", 3, 4, TAB[2:5, 0:4])
case("tensor_copy_scalar_offset_window_rows", g, "TensorCopy of a 3x4 window of a 10x12 table, scalar index 2 on W: rows 2..4 "
     "(index x the indexed level's step = the base tensor's row stride, re-facts §5 dst += dtype_size*stride*index; "
     "AWS scalar_offset idx*prod(base.shape[d+1:]))", choices=["D1"])

# ================================================================ 3. DMACopy Transpose (re-facts §3)
TSRC = {0: 0, 1: 1, 2: 2, 3: 3}  # (TNAMES, LET: birprog)
REFACTS = {0: (0, 1, 2, 3), 1: (0, 1, 3, 2), 2: (0, 3, 1, 2), 3: (0, 2, 3, 1), 4: (1, 0, 2, 3), 5: (1, 2, 0, 3),
           6: (1, 2, 3, 0), 7: (2, 3, 0, 1), 8: (2, 3, 1, 0), 9: (2, 0, 1, 3), 10: (3, 0, 1, 2), 11: (3, 1, 2, 0),
           12: (3, 2, 1, 0), 13: (3, 2, 0, 1)}
DIMS = (5, 3, 7, 6)  # W, Z, Y, X: distinct, non-power-of-two


def transpose_case(code, src_dt="float32", dst_dt="float32", dims=DIMS):
    perm = tuple(LET[c] for c in TNAMES[code]) if code else (0, 1, 2, 3)
    assert perm == REFACTS[code], (code, perm)
    src_raw = distinct(dims[0], dims[1] * dims[2] * dims[3])
    s4 = src_raw.reshape(dims)
    d4 = np.transpose(s4, perm)
    dn = d4.shape
    g = Prog()
    xt = g.tile_in("x", src_dt, src_raw)
    g.sb("yt", dst_dt, dn[0], dn[1] * dn[2] * dn[3])
    g.inst("DMACopy", [ap(xt, src_dt, four_level(dims))], [ap("yt", dst_dt, four_level(dn))], mode="Transpose",
           transpose_op=TNAMES[code], engine="Pool")
    g.save("yt", "y", dst_dt, dn[0], dn[1] * dn[2] * dn[3], cast(d4.reshape(dn[0], -1), src_dt, dst_dt))
    return g, perm, dn


for code in range(14):
    g, perm, dn = transpose_case(code)
    case(f"transpose_{code:02d}_{TNAMES[code].lower()}", g,
         f"DMACopy Transpose code {code} {TNAMES[code]}: source [W,Z,Y,X] = {DIMS}, destination nums {dn}, "
         f"dst = numpy.transpose(src, {perm}) (re-facts §3 TransposeOps; dm-decisions D2)", choices=["D2"] if code else ())
g, perm, dn = transpose_case(11, "float32", "bfloat16")
case("transpose_11_xzyw_cast_bfloat16", g, "DMACopy Transpose XZYW with fp32 -> bf16 cast (cast allowed as in Copy; D2)", choices=["D2"])
g, perm, dn = transpose_case(12, dims=(7, 2, 9, 3))
case("transpose_12_xyzw_other_dims", g, "DMACopy Transpose XYZW (full reversal) on [W,Z,Y,X] = (7,2,9,3) (D2)", choices=["D2"])
# validation errors
g = Prog()
xt = g.tile_in("x", "float32", distinct(5, 42))
g.sb("yt", "float32", 6, 35)
k = g.inst("DMACopy", [ap(xt, "float32", [[42, 5], [6, 7], [1, 6]])], [ap("yt", "float32", four_level((6, 1, 7, 5)))],
           mode="Transpose", transpose_op="WXZY", engine="Pool")
case("transpose_3level_error", g, "DMACopy Transpose needs 4-level APs: a 3-level source (4-level destination) is one validation error (dm-decisions)",
     errors=[("ap-rank", f"instruction #{k}", "")])
g = Prog()
xt = g.tile_in("x", "float32", distinct(5, 126))
g.sb("yt", "float32", 5, 126)
k = g.inst("DMACopy", [ap(xt, "float32", four_level(DIMS))], [ap("yt", "float32", four_level(DIMS))],
           mode="Transpose", transpose_op="XYZW", engine="Pool")
case("transpose_nums_mismatch_error", g, "DMACopy Transpose XYZW with dst nums = src nums (not permuted): validation error (dm-decisions)",
     errors=[("ap-shape", f"instruction #{k}", "")])

# strided, offset 4-level source APs: the permutation acts on AP coordinates (D2)
for code, dims, steps, off in [(11, (5, 3, 7, 2), (200, 60, 8, 3), 4), (5, (3, 4, 5, 6), (200, 45, 9, 1), 7),
                               (8, (6, 5, 3, 7), (200, 30, 10, 1), 2)]:
    perm = REFACTS[code]
    base = distinct(dims[0], 200)
    pairs = [[st, n] for st, n in zip(steps, dims)]
    idx = ap_index(pairs, off)
    assert idx.max() < base.size
    d4 = np.transpose(base.reshape(-1)[idx], perm)
    dn = d4.shape
    g = Prog()
    xt = g.tile_in("x", "float32", base)
    g.sb("yt", "float32", dn[0], dn[1] * dn[2] * dn[3])
    g.inst("DMACopy", [ap(xt, "float32", pairs, off)], [ap("yt", "float32", four_level(dn))], mode="Transpose",
           transpose_op=TNAMES[code], engine="Pool")
    g.save("yt", "y", "float32", dn[0], dn[1] * dn[2] * dn[3], d4.reshape(dn[0], -1))
    case(f"transpose_{code:02d}_{TNAMES[code].lower()}_strided_source", g,
         f"DMACopy Transpose {TNAMES[code]} from the strided source AP {pairs} offset {off}: dst = numpy.transpose(gathered src, {perm}) (D2)",
         choices=["D2"])

# ================================================================ 4. DMACopy Replicate
REP = "dm-decisions Replicate: replCount = dst partitions / src partitions, dst = numpy.tile(src, (replCount, 1))"
RFREE = 9
for sp, factors in [(1, (1, 2, 3, 4, 8, 16, 32, 64, 128)), (2, (3, 16, 64)), (4, (8, 32)), (3, (5,)), (32, (4,))]:
    for r in factors:
        src = distinct(sp, RFREE)
        g = Prog()
        xt = g.tile_in("x", "float32", src)
        g.sb("yt", "float32", sp * r, RFREE)
        g.inst("DMACopy", [tile(xt, "float32", sp, RFREE)], [tile("yt", "float32", sp * r, RFREE)], mode="Replicate")
        g.save("yt", "y", "float32", sp * r, RFREE, np.tile(src, (r, 1)))
        case(f"replicate_src{sp}p_x{r}", g, f"DMACopy Replicate of a {sp}-partition source x {r} -> {sp * r} partitions ({REP})",
             choices=["D3"] if sp > 1 else ())
# from a DRAM source
src = distinct(2, RFREE)
g = Prog()
g.dram_in("x", "float32", src)
g.sb("yt", "float32", 6, RFREE)
g.inst("DMACopy", [tile("x", "float32", 2, RFREE)], [tile("yt", "float32", 6, RFREE)], mode="Replicate")
g.save("yt", "y", "float32", 6, RFREE, np.tile(src, (3, 1)))
case("replicate_dram_src2p_x3", g, f"DMACopy Replicate of a 2-row DRAM source x 3 into SB ({REP})", choices=["D3"])
# with a cast
src = fp32_vals((2, RFREE))
g = Prog()
xt = g.tile_in("x", "float32", src)
g.sb("yt", "bfloat16", 8, RFREE)
g.inst("DMACopy", [tile(xt, "float32", 2, RFREE)], [tile("yt", "bfloat16", 8, RFREE)], mode="Replicate")
g.save("yt", "y", "bfloat16", 8, RFREE, encode(np.tile(src, (4, 1)), "bfloat16"))
case("replicate_src2p_x4_cast_bfloat16", g, f"DMACopy Replicate 2 -> 8 partitions with fp32 -> bf16 ({REP})", choices=["D3"])
for tag, sp, dp, sf, df, lv, kind in [("not_dividing", 3, 8, RFREE, RFREE, 2, "ap-shape"), ("free_mismatch", 1, 4, RFREE, RFREE + 1, 2, "ap-shape"),
                                      ("3level", 1, 4, RFREE, RFREE, 3, "ap-rank")]:
    g = Prog()
    xt = g.tile_in("x", "float32", distinct(sp, sf))
    g.sb("yt", "float32", dp, df)
    sap = tile(xt, "float32", sp, sf) if lv == 2 else ap(xt, "float32", [[sf, sp], [3, 3], [1, 3]])
    k = g.inst("DMACopy", [sap], [tile("yt", "float32", dp, df)], mode="Replicate")
    case(f"replicate_{tag}_error", g, f"DMACopy Replicate {sp} -> {dp} partitions, free {sf} -> {df}, {lv}-level source: validation error ({REP})",
         errors=[(kind, f"instruction #{k}", "")])

# ================================================================ 5. DMACopy CCE
CCE = ("seed 000 §5.2 doDMACCE, re-facts §5 'N inputs cast to fp32, folded into a zeroed fp32 accumulator': add acc = +0.0 "
       "then acc + c_i*in_i in input order; max/min fmaxf/fminf from +0.0 too; constants scale add only")


def fmaxf(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b > a, b, a)))
    return r.astype(F32)


def fminf(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b < a, b, a)))
    return r.astype(F32)


def cce_expect(ins, op, consts=None):
    """re-facts §5: every op folds into a zeroed fp32 accumulator (+0.0); constants scale add only."""
    vals = [x.astype(F32) for x in ins]
    acc = np.zeros_like(vals[0]) + F32(0.0)
    if op == "add":
        if consts is not None:
            vals = [(F32(c) * v).astype(F32) for c, v in zip(consts, vals)]
        for v in vals:
            acc = (acc + v).astype(F32)
        return acc
    for v in vals:
        acc = (fmaxf if op == "max" else fminf)(acc, v)
    return acc


def cce_program(ins, op, consts=None, in_dt="float32", out_dt="float32", shape=None):
    g = Prog()
    p, f = ins[0].shape
    names = [g.tile_in(f"x{k}", in_dt, raw) for k, raw in enumerate(ins)]
    g.sb("yt", out_dt, p, f)
    fields = dict(mode="CCE", cce_op=op)
    if consts is not None:
        fields["constants"] = [float(c) for c in consts]
    g.inst("DMACopy", [tile(n, in_dt, p, f) for n in names], [tile("yt", out_dt, p, f)], **fields)
    exp = cce_expect([decode(x, in_dt) for x in ins], op, consts)
    g.save("yt", "y", out_dt, p, f, encode(exp, out_dt))
    return g


for n in range(2, 9):
    ins = [fp32_vals((4, 16)) for _ in range(n)]
    case(f"cce_add_{n}_inputs", cce_program(ins, "add"), f"DMACopy CCE add of {n} inputs ({CCE})", choices=["D4"])
for n in (2, 5, 8):
    ins = [fp32_vals((4, 16)) for _ in range(n)]
    consts = [float(F32(c)) for c in RNG.uniform(-3, 3, n)]
    case(f"cce_add_{n}_inputs_constants", cce_program(ins, "add", consts),
         f"DMACopy CCE add of {n} inputs with constants {consts} (each product rounded to fp32, then summed in order; {CCE})", choices=["D4"])
for op in ("max", "min"):
    for n in (2, 3, 8):
        ins = [fp32_vals((4, 16)) for _ in range(n)]
        case(f"cce_{op}_{n}_inputs", cce_program(ins, op), f"DMACopy CCE {op} of {n} inputs ({CCE})", choices=["D4"])
    # NaN and +-0: a NaN operand yields the other, a +-0 tie keeps the FIRST argument (acc)
    a = np.array([np.nan, 1.0, np.nan, 0.0, -0.0, 0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -0.0, 0.0, 3.0, np.nan], F32).reshape(1, 16)
    b = np.array([1.0, np.nan, np.nan, -0.0, 0.0, 0.0, -0.0, -0.0, np.nan, 5.0, -np.inf, 2.0, -0.0, -0.0, -3.0, 0.0], F32).reshape(1, 16)
    c = np.array([2.0, 0.5, np.nan, 0.0, -0.0, -0.0, 0.0, np.nan, 1.0, np.nan, np.nan, -2.0, 0.0, -0.0, np.nan, -0.0], F32).reshape(1, 16)
    y = cce_expect([a, b, c], op)
    case(f"cce_{op}_nan_and_signed_zero", cce_program([a, b, c], op),
         f"DMACopy CCE {op} over 3 inputs with NaN, +-inf and +-0: glibc {op == 'max' and 'fmaxf' or 'fminf'} (NaN -> the other operand; "
         f"equal +-0 -> the first argument, acc) ({CCE})", choices=["D4"])
    case(f"cce_{op}_constants_negate", cce_program([fp32_vals((2, 16)) for _ in range(3)], op, [-1.0, 2.0, 0.5]),
         f"DMACopy CCE {op} with constants (-1, 2, 0.5), which scale add only: acc = +0.0, then {op} with each in_i ({CCE})", choices=["D4"])
# fp32 accumulation order matters for add
a = np.array([1e8, 1.0, -1e8, 3.0, 2 ** 24, 1.0, 1e-8, 1.0] * 2, F32).reshape(1, 16)
b = np.array([1.0, 1e8, 1e8, 2 ** 24, 1.0, 2 ** 24, 1.0, 2 ** -24] * 2, F32).reshape(1, 16)
c = np.array([-1e8, -1e8, 1.0, -2 ** 24, 1.0, 1.0, -1.0, 2 ** -24] * 2, F32).reshape(1, 16)
d = np.array([0.5, 0.5, 0.5, 0.5, 1.0, -2 ** 24, 1e-8, 2 ** -24] * 2, F32).reshape(1, 16)
y = cce_expect([a, b, c, d], "add")
f64 = (a.astype(np.float64) + b + c + d).astype(F32)
rev = cce_expect([d, c, b, a], "add")
assert (y != f64).any() and (y != rev).any()
case("cce_add_order_matters", cce_program([a, b, c, d], "add"),
     f"DMACopy CCE add of 4 inputs where the fp32 left-to-right order differs from an fp64 sum and from the reverse order ({CCE})",
     choices=["D4"])
a2 = np.array([-0.0] * 16, F32).reshape(1, 16)
case("cce_add_negative_zeros", cce_program([a2, a2.copy()], "add"),
     f"DMACopy CCE add of -0 + -0: acc starts at +0.0, so +0 + -0 + -0 = +0 ({CCE})", choices=["D4"])
ins = [fp32_vals((4, 16)) for _ in range(3)]
case("cce_add_3_inputs_out_bfloat16", cce_program(ins, "add", out_dt="bfloat16"),
     f"DMACopy CCE add of 3 fp32 inputs, the fp32 sum narrowed (RNE) to a bf16 output ({CCE})", choices=["D4"])
insb = [encode(fp32_vals((4, 16)), "bfloat16") for _ in range(3)]
case("cce_max_bfloat16_inputs", cce_program(insb, "max", in_dt="bfloat16", out_dt="bfloat16"),
     f"DMACopy CCE max of 3 bf16 inputs (widened to fp32) into bf16 ({CCE})", choices=["D4"])
# DRAM operands: inputs and output in flat DRAM (the DMA's usual place)
ins = [fp32_vals((3, 11)) for _ in range(3)]
g = Prog()
for k2, raw in enumerate(ins):
    g.dram_in(f"x{k2}", "float32", raw)
exp = cce_expect(ins, "add", [0.5, -1.0, 3.0])
g.dram_out("y", "float32", (3, 11), exp)
g.inst("DMACopy", [tile(f"x{k2}", "float32", 3, 11) for k2 in range(3)], [tile("y", "float32", 3, 11)], mode="CCE", cce_op="add",
       constants=[0.5, -1.0, 3.0])
case("cce_add_dram_operands_constants", g, f"DMACopy CCE add with constants (0.5, -1, 3), inputs and output in DRAM ({CCE})", choices=["D4"])
# validation errors
g = Prog()
x0 = g.tile_in("x0", "float32", fp32_vals((4, 16)))
x1 = g.tile_in("x1", "float32", fp32_vals((4, 12)))
g.sb("yt", "float32", 4, 16)
k = g.inst("DMACopy", [tile(x0, "float32", 4, 16), tile(x1, "float32", 4, 12)], [tile("yt", "float32", 4, 16)], mode="CCE", cce_op="add")
case("cce_count_mismatch_error", g, "DMACopy CCE with an input of 48 elements for a 64-element output: validation error (dm-decisions)",
     errors=[("ap-shape", f"instruction #{k}", "")])
g = Prog()
x0 = g.tile_in("x0", "float32", fp32_vals((4, 16)))
x1 = g.tile_in("x1", "float32", fp32_vals((4, 16)))
g.sb("yt", "float32", 4, 16)
k = g.inst("DMACopy", [tile(x0, "float32", 4, 16), tile(x1, "float32", 4, 16)], [tile("yt", "float32", 4, 16)], mode="CCE", cce_op="mult")
case("cce_op_mult_error", g, "DMACopy CCE with cce_op mult: validation error (add, max or min only)",
     errors=[("bad-field", f"instruction #{k}", "CCE reduces with add, max or min")])
g = Prog()
x0 = g.tile_in("x0", "float32", fp32_vals((4, 16)))
x1 = g.tile_in("x1", "float32", fp32_vals((4, 16)))
g.sb("yt", "float32", 4, 16)
k = g.inst("DMACopy", [tile(x0, "float32", 4, 16), tile(x1, "float32", 4, 16)], [tile("yt", "float32", 4, 16)], mode="CCE",
           cce_op="add", constants=[1.0, 2.0, 3.0])
case("cce_constants_count_error", g, "DMACopy CCE with 3 constants for 2 inputs: validation error",
     errors=[("bad-field", f"instruction #{k}", "one constant per input")])

# ================================================================ 6. StreamShuffle (seed 000 §5.3)
SHUF = "seed 000 §5.3 doStreamShuffle: per 32-partition block, out[blk+i] = in[blk+mask[i]], 255 leaves the row"


def shuffle_expect(src, prev, mask, out_parts):
    out = prev.copy()
    for blk in range(0, out_parts, 32):
        for i in range(32):
            if blk + i >= out_parts:
                break
            m = mask[i]
            if m == 255:
                continue
            out[blk + i] = src[blk + m]
    return out


MASK_A = [(7 * i + 3) % 32 for i in range(32)]
MASK_A[4] = MASK_A[9] = MASK_A[31] = 255
MASK_A[10] = MASK_A[11] = MASK_A[12] = 5  # repeated sources
for parts, dt in [(32, "float32"), (64, "float32"), (96, "bfloat16"), (128, "uint8")]:
    src = distinct(parts, 6, dt)
    prev = (distinct(parts, 6, dt)[::-1]).copy()
    g = Prog()
    xt = g.tile_in("x", dt, src)
    yt = g.tile_in("prev", dt, prev)
    g.inst("StreamShuffle", [tile(xt, dt, parts, 6)], [tile(yt, dt, parts, 6)], mask=MASK_A)
    g.save(yt, "y", dt, parts, 6, shuffle_expect(src, prev, MASK_A, parts))
    case(f"shuffle_{parts}p_{dt}", g, f"StreamShuffle on {parts} partitions ({dt}), mask with 255 entries and repeated sources, "
         f"the same mask for every 32-block; the output pre-filled so untouched rows show ({SHUF})")
# in place: a rotation
MASK_R = [(i + 1) % 32 for i in range(32)]
MASK_R[17] = 255
src = distinct(64, 5)
g = Prog()
xt = g.tile_in("x", "float32", src)
g.inst("StreamShuffle", [tile(xt, "float32", 64, 5)], [tile(xt, "float32", 64, 5)], mask=MASK_R)
g.save(xt, "y", "float32", 64, 5, shuffle_expect(src, src, MASK_R, 64))
case("shuffle_in_place_rotate_64p", g, f"StreamShuffle in place (same AP), mask[i] = i+1 mod 32, mask[17] = 255: all source rows read first ({SHUF})")
# reverse mask, in place, 128 partitions
MASK_V = [31 - i for i in range(32)]
src = distinct(128, 4)
g = Prog()
xt = g.tile_in("x", "float32", src)
g.inst("StreamShuffle", [tile(xt, "float32", 128, 4)], [tile(xt, "float32", 128, 4)], mask=MASK_V)
g.save(xt, "y", "float32", 128, 4, shuffle_expect(src, src, MASK_V, 128))
case("shuffle_in_place_reverse_128p", g, f"StreamShuffle in place, mask reverses each 32-block ({SHUF})")
# 1-partition source broadcast with an all-zero mask
src = distinct(1, 8)
prev = np.zeros((32, 8), F32)
g = Prog()
xt = g.tile_in("x", "float32", src)
yt = g.tile_in("prev", "float32", prev)
g.inst("StreamShuffle", [tile(xt, "float32", 1, 8)], [tile(yt, "float32", 32, 8)], mask=[0] * 32)
g.save(yt, "y", "float32", 32, 8, np.tile(src, (32, 1)))
case("shuffle_broadcast_1p_zero_mask", g, f"StreamShuffle of a 1-partition source onto 32 partitions with an all-zero mask (nki nc_stream_shuffle broadcast; {SHUF})")
# source partition past the source AP -> fault shape, earlier Save intact
src = distinct(1, 8)
prev = np.zeros((64, 8), F32)
g = Prog()
xt = g.tile_in("x", "float32", src)
yt = g.tile_in("prev", "float32", prev)
g.save(yt, "early", "float32", 64, 8, prev)
g.inst("StreamShuffle", [tile(xt, "float32", 1, 8)], [tile(yt, "float32", 64, 8)], mask=[0] * 32)
case("shuffle_source_partition_past_end_fault", g,
     "StreamShuffle of a 1-partition source onto 64 partitions: block 32 reads source partition 32 -> fault shape; the earlier Save is intact (dm-decisions)",
     fault=("shape", ""))
# validation errors
g = Prog()
xt = g.tile_in("x", "float32", distinct(32, 4))
g.sb("yt", "float32", 32, 4)
bad = list(MASK_V)
bad[3] = 40
k = g.inst("StreamShuffle", [tile(xt, "float32", 32, 4)], [tile("yt", "float32", 32, 4)], mask=bad)
case("shuffle_mask_entry_40_error", g, "StreamShuffle mask entry 40 (not < 32, not 255): validation error",
     errors=[("bad-field", f"instruction #{k}", "mask entries must be < 32 or 255")])
g = Prog()
xt = g.tile_in("x", "float32", distinct(32, 4))
g.sb("yt", "bfloat16", 32, 4)
k = g.inst("StreamShuffle", [tile(xt, "float32", 32, 4)], [tile("yt", "bfloat16", 32, 4)], mask=MASK_V)
case("shuffle_cast_error", g, "StreamShuffle fp32 -> bf16: validation error (no cast)",
     errors=[("dtype", f"instruction #{k}", "StreamShuffle does not support cast")])

# ================================================================ 7. StreamTranspose (seed 000 §5.3)
STR = "seed 000 §5.3: dstIdx = (pLow | eBlk) + outElem * (pBlk | eLow) in the destination's flat AP order"


def stranspose_expect(src, prev_flat, out_elem):
    out = prev_flat.copy().reshape(-1)
    P_, E_ = src.shape
    for p in range(P_):
        for e in range(E_):
            di = ((p & 31) | (e & ~31)) + out_elem * ((p & ~31) | (e & 31))
            out[di] = src[p, e]
    return out


for (pp, ee) in [(32, 32), (64, 64), (96, 96), (128, 128), (64, 96), (32, 128), (128, 32), (96, 64)]:
    for dt in ("uint8", "bfloat16", "float32"):
        if (pp, ee) in ((32, 128), (128, 32), (96, 64)) and dt != "float32":
            continue
        src = distinct(pp, ee, dt)
        prev = np.zeros((pp, ee), STORE[dt])
        g = Prog()
        xt = g.tile_in("x", dt, src)
        yt = g.tile_in("prev", dt, prev)
        g.inst("StreamTranspose", [tile(xt, dt, pp, ee)], [tile(yt, dt, pp, ee)])
        y = stranspose_expect(src, prev, ee).reshape(pp, ee)
        # every aligned 32x32 tile transposed in place when the shapes match
        tiles = src.reshape(pp // 32, 32, ee // 32, 32).transpose(0, 3, 2, 1).reshape(pp, ee)
        assert (y == tiles).all()
        g.save(yt, "y", dt, pp, ee, y)
        case(f"stranspose_{pp}x{ee}_{dt}", g, f"StreamTranspose of {pp} partitions x {ee} elements ({dt}): every aligned 32x32 tile "
             f"transposed in place ({STR})")
# dstIdx outside the destination -> fault shape
src = distinct(64, 64)
prev = np.zeros((32, 64), F32)
g = Prog()
xt = g.tile_in("x", "float32", src)
yt = g.tile_in("prev", "float32", prev)
g.save(yt, "early", "float32", 32, 64, prev)
g.inst("StreamTranspose", [tile(xt, "float32", 64, 64)], [tile(yt, "float32", 32, 64)])
case("stranspose_dst_too_small_fault", g, f"StreamTranspose 64 x 64 into 32 x 64: dstIdx past the destination -> fault shape; the earlier Save is intact ({STR})",
     fault=("shape", ""))
g = Prog()
xt = g.tile_in("x", "float32", distinct(32, 32))
g.sb("yt", "float16", 32, 32)
k = g.inst("StreamTranspose", [tile(xt, "float32", 32, 32)], [tile("yt", "float16", 32, 32)])
case("stranspose_cast_error", g, "StreamTranspose fp32 -> fp16: validation error (no cast)",
     errors=[("dtype", f"instruction #{k}", "StreamTranspose does not support cast")])

# ================================================================ 8. Iota and AffineSelect (seed 000 §5.4)
IOTA = ("seed 000 §5.4 doIota: int32(base + cm*p + sW*w + sZ*z + sY*y + sX*x), flat = ((w*nY + y)*nZ + z)*nX + x "
        "(y outer of z), pattern pairs the innermost dims")


def iota_values(parts, base, pattern, cm):
    pat = [[0, 1]] * (4 - len(pattern)) + [list(p) for p in pattern]  # W, Z, Y, X
    (sw, nw), (sz, nz), (sy, ny), (sx, nx) = pat
    F_ = nw * nz * ny * nx
    f = np.arange(F_, dtype=np.int64)
    x = f % nx
    z = (f // nx) % nz
    y = (f // (nx * nz)) % ny
    w = f // (nx * nz * ny)
    p = np.arange(parts, dtype=np.int64)[:, None]
    v = base + cm * p + sw * w + sz * z + sy * y + sx * x
    v = ((v + 2 ** 31) % 2 ** 32) - 2 ** 31  # D5: wrap to int32
    return v.astype(np.int32)


# a worked check of the y-outer-of-z order: pattern [[100,2],[10,3],[1,2]] (Z, Y, X)
_v = iota_values(1, 0, [[100, 2], [10, 3], [1, 2]], 0)[0]
assert list(_v[:6]) == [0, 1, 100, 101, 10, 11], _v

IOTA_SET = [
    ("1pair_cm0", 0, [[1, 24]], 0, "int32"),
    ("1pair_cm1_base5", 5, [[1, 24]], 1, "int32"),
    ("1pair_cm2_neg_step", 100, [[-3, 24]], 2, "int32"),
    ("2pair_cm_neg1", 7, [[10, 4], [1, 6]], -1, "int32"),
    ("3pair_z_y_order", 0, [[100, 2], [10, 3], [1, 4]], 1000, "int32"),
    ("4pair_all_levels", -50, [[1000, 2], [100, 2], [-10, 3], [1, 2]], 7, "int32"),
    ("3pair_float32", -3, [[7, 3], [-2, 2], [1, 4]], 2, "float32"),
    ("2pair_bfloat16", 1, [[300, 3], [1, 8]], 16, "bfloat16"),
    ("1pair_float32_large_rounds", 16777215, [[1, 24]], 3, "float32"),
    ("2pair_float16", -40, [[9, 4], [-1, 6]], 1, "float16"),
    ("wrap_int32", 2 ** 31 - 5, [[1, 24]], 1, "int32"),
    ("wrap_negative_int32", -2 ** 31 + 3, [[-1, 24]], -1, "int32"),
]
for tag, base, pattern, cm, dt in IOTA_SET:
    parts = 6
    v = iota_values(parts, base, pattern, cm)
    F_ = v.shape[1]
    g = Prog()
    g.sb("yt", dt, parts, F_)
    g.inst("Iota", [], [tile("yt", dt, parts, F_)], base=base, pattern=pattern, channel_multiplier=cm)
    g.save("yt", "y", dt, parts, F_, int_to(v, dt))
    wraps = tag.startswith("wrap")
    case(f"iota_{tag}", g, f"Iota base {base}, pattern {pattern}, channel_multiplier {cm} into {dt} ({IOTA}; "
         f"channel_multiplier: nki iota{'; D5 wraps to int32' if wraps else ''})", choices=["D5"] if wraps else ())
# output AP with a transposed layout: the flat element order is the AP order
v = iota_values(4, 0, [[1, 12]], 100)
g = Prog()
g.sb("yt", "int32", 4, 12)
g.inst("Iota", [], [ap("yt", "int32", [[12, 4], [1, 3], [3, 4]])], base=0, pattern=[[1, 12]], channel_multiplier=100)
y = np.zeros((4, 12), np.int32)
idx = ap_index([[12, 4], [1, 3], [3, 4]]).reshape(4, 12)
y.reshape(-1)[idx.reshape(-1)] = v.reshape(-1)
g.save("yt", "y", "int32", 4, 12, y)
case("iota_output_ap_transposed_layout", g, f"Iota into a 3-level output AP [[12,4],[1,3],[3,4]]: values follow the AP's element order ({IOTA})")
g = Prog()
g.sb("yt", "int32", 4, 12)
k = g.inst("Iota", [], [tile("yt", "int32", 4, 12)], base=0, pattern=[[1, 5], [1, 2]], channel_multiplier=0)
case("iota_pattern_count_mismatch_error", g, "Iota with pattern nums 5*2 = 10 for 12 elements per partition: validation error (dm-decisions)",
     errors=[("bad-field", f"instruction #{k}", "the pattern's nums multiply to 10")])

CMP = {"is_equal": np.equal, "not_equal": np.not_equal, "is_gt": np.greater, "is_ge": np.greater_equal,
       "is_lt": np.less, "is_le": np.less_equal}
ASEL = "seed 000 §5.4 / nki affine_select: out = cmp(v, 0) ? in : fill_value (v the Iota value, signed int32)"
FMIN = float(np.finfo(F32).min)


def asel_case(cmp, base, pattern, cm, in_dt, out_dt, fill, parts=8):
    v = iota_values(parts, base, pattern, cm)
    F_ = v.shape[1]
    xin = distinct(parts, F_) if in_dt == "float32" else encode(fp32_vals((parts, F_)), in_dt)
    pred = CMP[cmp](v, 0)
    y = np.where(pred, cast(xin, in_dt, out_dt), encode(np.full(v.shape, fill, F32), out_dt)).astype(STORE[out_dt])
    g = Prog()
    xt = g.tile_in("x", in_dt, xin)
    g.sb("yt", out_dt, parts, F_)
    g.inst("TensorScalarAffineSelect", [tile(xt, in_dt, parts, F_)], [tile("yt", out_dt, parts, F_)], base=base,
           pattern=pattern, channel_multiplier=cm, compare_op=cmp, fill_value=fill)
    g.save("yt", "y", out_dt, parts, F_, y)
    return g


for cmp in CMP:
    case(f"asel_{cmp}_float32", asel_case(cmp, -3, [[-1, 12]], 1, "float32", "float32", FMIN),
         f"AffineSelect compare_op {cmp}, v = -3 + p - x, fill fp32.min, float32 ({ASEL})")
    case(f"asel_{cmp}_bfloat16", asel_case(cmp, 4, [[-2, 3], [1, 4]], -1, "bfloat16", "bfloat16", FMIN),
         f"AffineSelect {cmp} on bf16, fill fp32.min -> bf16 -inf (RNE overflow), 2-pair pattern, cm -1 ({ASEL})")
for cmp in CMP:
    case(f"asel_{cmp}_float8e4", asel_case(cmp, 0, [[1, 2], [-1, 3], [2, 2]], 1, "float32", "float8e4", FMIN),
         f"AffineSelect {cmp} fp32 in -> float8e4 out, fill fp32.min saturates (refsim) to -max ({ASEL})", choices=["N7"])
case("asel_is_gt_4pair_float32", asel_case("is_gt", -20, [[5, 2], [3, 2], [-1, 3], [1, 2]], 2, "float32", "float32", -1.5),
     f"AffineSelect is_gt with a 4-pair pattern (flat y outer of z), cm 2, fill -1.5 ({ASEL})")
case("asel_is_equal_cm0_float32_to_bfloat16", asel_case("is_equal", -5, [[1, 10]], 0, "float32", "bfloat16", 7.25),
     f"AffineSelect is_equal, cm 0 (only x = 5 kept), fp32 in -> bf16 out, fill 7.25 ({ASEL})")

# ================================================================ 9. Memset
MEMC = "seed 000 §5.4 visitInstMemset Const: every element gets the low dtype-size bytes of `constant`"
CONST = 0xC1A2B3D4
for dt in ("uint8", "int8", "uint16", "int16", "bfloat16", "float16", "uint32", "int32", "float32", "float8e3", "float8e4",
           "float8e5", "float8_e4m3fn", "uint64", "int64"):
    sz = SIZE[dt]
    bits = np.full((3, 10), CONST & ((1 << (8 * min(sz, 4))) - 1), np.uint64).astype(UINT[sz])
    g = Prog()
    g.sb("yt", dt, 3, 10)
    g.inst("Memset", [], [tile("yt", dt, 3, 10)], mode="Const", constant=CONST)
    g.save("yt", "y", dt, 3, 10, bits.view(STORE[dt]))
    case(f"memset_const_{dt}", g, f"Memset Const 0x{CONST:08X} into {dt} ({MEMC}; an 8-byte element gets the uint32 constant "
         f"zero-extended)")
g = Prog()
g.sb("yt", "float32", 3, 10)
g.inst("Memset", [], [tile("yt", "float32", 3, 10)], mode="Const", constant=0x3F800000)
g.save("yt", "y", "float32", 3, 10, np.ones((3, 10), F32))
case("memset_const_float32_one", g, f"Memset Const 0x3F800000 into float32 = 1.0 ({MEMC})")
g = Prog()
yt = g.tile_in("prev", "float32", distinct(4, 10))
g.inst("Memset", [], [ap(yt, "float32", [[10, 4], [2, 5]], 1)], mode="Const", constant=0x7FC00000)
y = distinct(4, 10)
y[:, 1::2] = np.uint32(0x7FC00000).view(F32)
g.save(yt, "y", "float32", 4, 10, y)
case("memset_const_strided_nan_bits", g, f"Memset Const 0x7FC00000 (a NaN code) into every 2nd element from 1; the others stay ({MEMC})")


# ---------------------------------------------------------------- RNG vectors (C++) and the Python fallback check
def build_rng():
    src = os.path.join(RNGDIR, "mt_draws.cpp")
    tmp = tempfile.mkdtemp()
    exe = {"default": os.path.join(tmp, "mt_default"), "legacy": os.path.join(tmp, "mt_legacy")}
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", exe["default"], src], check=True)
    subprocess.run(["g++", "-O2", "-std=c++17", "-U__SIZEOF_INT128__", "-o", exe["legacy"], src], check=True,
                   stderr=subprocess.DEVNULL)

    def run(which, mode, seed, n, fname):
        out = subprocess.run([exe[which], mode, str(seed), str(n)], check=True, capture_output=True, text=True).stdout
        with open(os.path.join(RNGDIR, fname), "w") as f:
            f.write(out)
        return [int(v) for v in out.split()]

    raw = run("default", "raw", 42, 12000, "raw_seed42.txt")
    lemire = run("default", "uniform", 42, 12000, "uniform_lemire_seed42.txt")
    draws = {42: run("legacy", "uniform", 42, 12000, "uniform_seed42.txt")}
    for s in RESEEDS:
        draws[s] = run("legacy", "uniform", s, 4000, f"uniform_seed{s}.txt")
    shutil.rmtree(tmp)
    # the libstdc++ fallback ("2 divisions") path, re-implemented on the raw outputs
    py, it = [], iter(raw)
    while len(py) < len(draws[42]):
        y = next(it)
        while y >= 0xFFFFFFFF00000000:
            y = next(it)
        py.append(y // 0xFFFFFFFF)
    assert py == draws[42], "the Python libstdc++ fallback differs from the C++ output"
    # the default (Lemire, __int128) path of this g++ is y >> 32, a different stream (recorded, unused)
    assert lemire == [y >> 32 for y in raw[:len(lemire)]]
    assert lemire != draws[42]
    return draws


RESEEDS = (7, 12345, 2 ** 40 + 99, 3000000000)
DRAWS = build_rng()


class HostRng:
    def __init__(self):
        self.seed(42)

    def seed(self, s):
        self.stream, self.pos = DRAWS[s], 0

    def take(self, n):
        assert self.pos + n <= len(self.stream)
        v = self.stream[self.pos:self.pos + n]
        self.pos += n
        return v


def fill_bits(draw_fn, dt, n):
    """D6: one draw per <= 4-byte element (its low bytes), two for an 8-byte element (low word first)."""
    sz = SIZE[dt]
    if sz <= 4:
        v = np.array(draw_fn(n), np.uint64) & np.uint64((1 << (8 * sz)) - 1)
        return v.astype(UINT[sz]).view(STORE[dt])
    d = np.array(draw_fn(2 * n), np.uint64).reshape(n, 2)
    return (d[:, 0] | (d[:, 1] << np.uint64(32))).astype(np.uint64).view(STORE[dt])


def host_expect(rng, dt, pairs, prev):
    idx = ap_index(pairs).reshape(-1)
    out = prev.copy().reshape(-1)
    out[idx] = fill_bits(rng.take, dt, idx.size)
    return out.reshape(prev.shape)


MEMR = ("re-facts §7 host MT19937-64 seeded 42 per run, libstdc++ uniform_int_distribution<uint32_t> (fallback path), "
        "expected draws from rng/mt_draws.cpp; D6 element bits")
for dt, p, f in [("uint8", 4, 24), ("int8", 2, 16), ("bfloat16", 4, 16), ("int16", 3, 8), ("float16", 2, 8),
                 ("uint32", 4, 12), ("float32", 4, 12), ("int32", 2, 10), ("int64", 4, 6), ("uint64", 2, 5)]:
    rng = HostRng()
    g = Prog()
    g.sb("yt", dt, p, f)
    g.inst("Memset", [], [tile("yt", dt, p, f)], mode="Random")
    g.save("yt", "y", dt, p, f, host_expect(rng, dt, [[f, p], [1, f]], np.zeros((p, f), STORE[dt])))
    case(f"memset_random_host_{dt}", g, f"Memset Random on DVE into {dt} [{p} x {f}]: the host generator's first draws ({MEMR})",
         choices=["D6"])
# two consecutive Memsets continue the stream, on different non-Pool engines
rng = HostRng()
g = Prog()
g.sb("at", "uint32", 4, 8)
g.sb("bt", "uint16", 4, 8)
g.inst("Memset", [], [tile("at", "uint32", 4, 8)], mode="Random")
g.inst("Memset", [], [tile("bt", "uint16", 4, 8)], mode="Random", engine="Activation")
ya = host_expect(rng, "uint32", [[8, 4], [1, 8]], np.zeros((4, 8), np.uint32))
yb = host_expect(rng, "uint16", [[8, 4], [1, 8]], np.zeros((4, 8), np.uint16))
g.save("at", "a", "uint32", 4, 8, ya)
g.save("bt", "b", "uint16", 4, 8, yb)
case("memset_random_host_two_consecutive", g, f"two Random Memsets (DVE then Activation): one host stream per run, the second continues ({MEMR})",
     choices=["D6"])
# output AP order: a reversed, strided AP
rng = HostRng()
g = Prog()
yt = g.tile_in("prev", "uint32", np.full((3, 10), 0xAAAAAAAA, np.uint32))
pairs = [[10, 3], [-2, 5]]
g.inst("Memset", [], [ap(yt, "uint32", pairs, 9)], mode="Random")
idx = ap_index(pairs, 9).reshape(-1)
y = np.full((3, 10), 0xAAAAAAAA, np.uint32).reshape(-1)
y[idx] = fill_bits(rng.take, "uint32", idx.size)
g.save(yt, "y", "uint32", 3, 10, y.reshape(3, 10))
case("memset_random_host_reversed_strided_ap", g, f"Random Memset through AP [[10,3],[-2,5]] from element 9: draws land in AP order; the other elements stay ({MEMR})",
     choices=["D6"])
# SetRandState then Memset (immediate and scalar AP seeds), and Memset's own seed field
for tag, seed_op, s in [("imm", lambda g: imm(7, "uint32"), 7), ("imm_uint64", lambda g: imm(2 ** 40 + 99, "uint64"), 2 ** 40 + 99),
                        ("scalar_ap", lambda g: ap(g.tile_in("s", "int32", np.array([[12345]], np.int32)), "int32", [[1, 1], [1, 1]]), 12345)]:
    rng = HostRng()
    g = Prog()
    g.sb("at", "uint32", 2, 8)
    g.sb("bt", "uint32", 2, 8)
    g.inst("Memset", [], [tile("at", "uint32", 2, 8)], mode="Random")
    ya = host_expect(rng, "uint32", [[8, 2], [1, 8]], np.zeros((2, 8), np.uint32))
    g.inst("SetRandState", [seed_op(g)], [], engine="DVE")
    rng.seed(s)
    g.inst("Memset", [], [tile("bt", "uint32", 2, 8)], mode="Random")
    yb = host_expect(rng, "uint32", [[8, 2], [1, 8]], np.zeros((2, 8), np.uint32))
    g.save("at", "a", "uint32", 2, 8, ya)
    g.save("bt", "b", "uint32", 2, 8, yb)
    case(f"memset_random_host_setrandstate_{tag}", g,
         f"Random Memset, then SetRandState({s}) ({tag}) on DVE, then Random Memset: the second starts the mt19937_64({s}) stream ({MEMR})",
         choices=["D6"])
rng = HostRng()
g = Prog()
g.sb("at", "float32", 2, 8)
g.sb("bt", "float32", 2, 8)
g.inst("Memset", [], [tile("at", "float32", 2, 8)], mode="Random", seed=3000000000)
rng.seed(3000000000)
ya = host_expect(rng, "float32", [[8, 2], [1, 8]], np.zeros((2, 8), F32))
g.inst("Memset", [], [tile("bt", "float32", 2, 8)], mode="Random")
yb = host_expect(rng, "float32", [[8, 2], [1, 8]], np.zeros((2, 8), F32))
g.save("at", "a", "float32", 2, 8, ya)
g.save("bt", "b", "float32", 2, 8, yb)
case("memset_random_host_seed_field", g, f"Random Memset with seed 3000000000 (our JSON extension J22: reseeds before the fill), then one without: it continues ({MEMR})",
     choices=["D6"])


# ---------------------------------------------------------------- Pool Xorwow (D7)
class Xorwow:
    def __init__(self):
        self.rows, self.seed_val = {}, None

    def reset(self, s):
        self.rows, self.seed_val = {}, s

    def _row(self, r):
        if r not in self.rows:
            if self.seed_val is None:
                st = [M32, M32, M32, M32, M32 ^ r, 0]
            else:
                st = [self.seed_val & M32, (self.seed_val >> 32) & M32, M32, M32, M32 ^ r, 0]
            self.rows[r] = st
        return self.rows[r]

    def draw(self, r):
        s = self._row(r)
        t = (s[0] ^ (s[0] >> 2)) & M32
        s[0], s[1], s[2], s[3] = s[1], s[2], s[3], s[4]
        s[4] = ((s[4] ^ ((s[4] << 4) & M32)) ^ (t ^ ((t << 1) & M32))) & M32
        s[5] = (s[5] + 362437) & M32
        return (s[5] + s[4]) & M32

    def take(self, r, n):
        return [self.draw(r) for _ in range(n)]


def pool_expect(xw, dt, pairs, prev):
    idx = ap_index(pairs)
    out = prev.copy().reshape(-1)
    for r in range(idx.shape[0]):
        ri = idx[r].reshape(-1)
        out[ri] = fill_bits(lambda n: xw.take(r, n), dt, ri.size)
    return out.reshape(prev.shape)


# a hand check of the first draw of row 0 from the all-ones state
_x = Xorwow()
_t = M32 ^ (M32 >> 2)
assert _x.draw(0) == (362437 + (((M32 ^ ((M32 << 4) & M32)) ^ (_t ^ ((_t << 1) & M32))) & M32)) & M32
POOLR = "re-facts §7 per-partition Xorwow; D7 seeding (row r: s0..s3 = 0xFFFFFFFF, s4 = 0xFFFFFFFF ^ r, counter 0); D6 element bits"
for dt, p, f in [("uint8", 4, 16), ("bfloat16", 4, 8), ("float32", 8, 6), ("uint32", 3, 5), ("int64", 4, 3), ("int16", 16, 4)]:
    xw = Xorwow()
    g = Prog()
    g.sb("yt", dt, p, f)
    g.inst("Memset", [], [tile("yt", dt, p, f)], mode="Random", engine="Pool")
    g.save("yt", "y", dt, p, f, pool_expect(xw, dt, [[f, p], [1, f]], np.zeros((p, f), STORE[dt])))
    case(f"memset_random_pool_{dt}", g, f"Memset Random on Pool into {dt} [{p} x {f}] ({POOLR})", choices=["D6", "D7"])
xw = Xorwow()
g = Prog()
g.sb("at", "uint32", 4, 5)
g.sb("bt", "uint32", 2, 7)
g.inst("Memset", [], [tile("at", "uint32", 4, 5)], mode="Random", engine="Pool")
g.inst("Memset", [], [tile("bt", "uint32", 2, 7)], mode="Random", engine="Pool")
ya = pool_expect(xw, "uint32", [[5, 4], [1, 5]], np.zeros((4, 5), np.uint32))
yb = pool_expect(xw, "uint32", [[7, 2], [1, 7]], np.zeros((2, 7), np.uint32))
g.save("at", "a", "uint32", 4, 5, ya)
g.save("bt", "b", "uint32", 2, 7, yb)
case("memset_random_pool_two_consecutive", g, f"two Pool Random Memsets: rows 0, 1 continue their state, rows 2, 3 are untouched by the second ({POOLR})",
     choices=["D6", "D7"])
xw = Xorwow()
g = Prog()
g.sb("at", "uint32", 4, 5)
g.sb("bt", "uint32", 4, 5)
g.inst("Memset", [], [tile("at", "uint32", 4, 5)], mode="Random", engine="Pool")
ya = pool_expect(xw, "uint32", [[5, 4], [1, 5]], np.zeros((4, 5), np.uint32))
S = 0x0000001234567890
g.inst("SetRandState", [imm(S, "uint64")], [], engine="Pool")
xw.reset(S)
g.inst("Memset", [], [tile("bt", "uint32", 4, 5)], mode="Random", engine="Pool")
yb = pool_expect(xw, "uint32", [[5, 4], [1, 5]], np.zeros((4, 5), np.uint32))
g.save("at", "a", "uint32", 4, 5, ya)
g.save("bt", "b", "uint32", 4, 5, yb)
case("memset_random_pool_setrandstate", g,
     f"Pool Random Memset, SetRandState(0x{S:X}) on Pool, Pool Random Memset: row r restarts from s0 = S_lo32, s1 = S_hi32, "
     f"s2 = s3 = 0xFFFFFFFF, s4 = 0xFFFFFFFF ^ r ({POOLR})", choices=["D6", "D7"])
# the Pool row index is the output AP's partition row, not the physical partition (D7)
xw = Xorwow()
g = Prog()
g.sb("at", "uint32", 8, 4)
g.inst("Memset", [], [tile("at", "uint32", 3, 4, offset=4 * 4)], mode="Random", engine="Pool")
z = np.zeros((8, 4), np.uint32)
ya = z.copy()
ya[4:7] = pool_expect(xw, "uint32", [[4, 3], [1, 4]], np.zeros((3, 4), np.uint32))
g.inst("Memset", [], [tile("at", "uint32", 2, 4)], mode="Random", engine="Pool")
ya[0:2] = pool_expect(xw, "uint32", [[4, 2], [1, 4]], np.zeros((2, 4), np.uint32))
g.dram_in("zero", "uint32", z)
g.insts.insert(0, {"opcode": "Load", "name": "zero_at", "engine": "SP", "ins": [tile("zero", "uint32", 8, 4)],
                   "outs": [tile("at", "uint32", 8, 4)]})
g.save("at", "a", "uint32", 8, 4, ya)
case("memset_random_pool_rows_relative_to_ap", g,
     f"Pool Random Memset on partitions 4..6 (AP rows 0..2), then on partitions 0..1 (AP rows 0..1): rows 0, 1 continue their "
     f"state although the partitions differ ({POOLR})", choices=["D6", "D7"])
# host and Pool streams are independent
rng, xw = HostRng(), Xorwow()
g = Prog()
g.sb("at", "uint32", 2, 6)
g.sb("bt", "uint32", 2, 6)
g.sb("ct", "uint32", 2, 6)
g.inst("Memset", [], [tile("at", "uint32", 2, 6)], mode="Random")
g.inst("Memset", [], [tile("bt", "uint32", 2, 6)], mode="Random", engine="Pool")
g.inst("Memset", [], [tile("ct", "uint32", 2, 6)], mode="Random", engine="SP")
z = np.zeros((2, 6), np.uint32)
g.save("at", "a", "uint32", 2, 6, host_expect(rng, "uint32", [[6, 2], [1, 6]], z))
g.save("bt", "b", "uint32", 2, 6, pool_expect(xw, "uint32", [[6, 2], [1, 6]], z))
g.save("ct", "c", "uint32", 2, 6, host_expect(rng, "uint32", [[6, 2], [1, 6]], z))
case("memset_random_host_pool_interleaved", g, f"host (DVE), Pool, host (SP) Random Memsets: the Pool fill does not consume host draws ({MEMR}; {POOLR})",
     choices=["D6", "D7"])

# ================================================================ 10. Select (re-facts §7)
SEL = "re-facts §7 Select: out = pred ? T : F, pred exactly 0 or 1 (read through fp32, D8), T/F tensors or imm_values"


def pred_raw(bits, dt):
    return encode(bits.astype(F32), dt) if dt != "uint8" else bits.astype(np.uint8)


def select_case(pdt, t_kind="ap", f_kind="ap", out_dt="float32", pred=None, tf_dt="float32", early=False, p=4, f=10):
    bits = RNG.integers(0, 2, (p, f)) if pred is None else pred
    praw = pred_raw(bits, pdt) if pred is None or pdt != "float32" else np.asarray(pred, F32)
    T = fp32_vals((p, f)) if tf_dt == "float32" else encode(fp32_vals((p, f)), tf_dt)
    Fv = fp32_vals((p, f)) if tf_dt == "float32" else encode(fp32_vals((p, f)), tf_dt)
    g = Prog()
    pt = g.tile_in("pred", pdt, praw)
    ins = [tile(pt, pdt, p, f)]
    if t_kind == "ap":
        ins.append(tile(g.tile_in("t", tf_dt, T), tf_dt, p, f))
        tv = cast(T, tf_dt, out_dt)
    else:
        ins.append(imm(2.75))
        tv = encode(np.full((p, f), 2.75, F32), out_dt)
    if f_kind == "ap":
        ins.append(tile(g.tile_in("f", tf_dt, Fv), tf_dt, p, f))
        fv = cast(Fv, tf_dt, out_dt)
    else:
        ins.append(imm(-0.0))
        fv = encode(np.full((p, f), -0.0, F32), out_dt)
    prev = np.zeros((p, f), STORE[out_dt])
    yt = g.tile_in("prev", out_dt, prev)
    if early:
        g.save(yt, "early", out_dt, p, f, prev)
    g.inst("Select", ins, [tile(yt, out_dt, p, f)])
    pv = decode(praw, pdt)
    return g, yt, np.where(pv != 0, tv, fv).astype(STORE[out_dt]), pv


for pdt in ("uint8", "int32", "float32", "bfloat16", "int8", "uint16", "float16"):
    g, yt, y, _ = select_case(pdt)
    g.save(yt, "y", "float32", 4, 10, y)
    case(f"select_pred_{pdt}", g, f"Select with a {pdt} predicate of 0/1, T and F tensors ({SEL})", choices=["D8"] if pdt not in ("uint8",) else ())
for tk, fk in [("imm", "ap"), ("ap", "imm"), ("imm", "imm")]:
    g, yt, y, _ = select_case("uint8", tk, fk)
    g.save(yt, "y", "float32", 4, 10, y)
    case(f"select_true_{tk}_false_{fk}", g, f"Select, on_true {tk}{' 2.75' if tk == 'imm' else ''}, on_false {fk}{' -0.0' if fk == 'imm' else ''} ({SEL})")
g, yt, y, _ = select_case("uint8", "ap", "imm", out_dt="bfloat16")
g.save(yt, "y", "bfloat16", 4, 10, y)
case("select_fp32_tensors_into_bfloat16", g, f"Select with fp32 T / imm F into a bf16 output: values converted (RNE) ({SEL})")
g, yt, y, _ = select_case("uint8", "ap", "ap", out_dt="bfloat16", tf_dt="bfloat16")
g.save(yt, "y", "bfloat16", 4, 10, y)
case("select_bfloat16_bit_exact", g, f"Select bf16 T/F into bf16: bit-exact ({SEL})")
pz = np.array([[0.0, -0.0, 1.0, -0.0, 0.0, 1.0, 1.0, -0.0, 0.0, 1.0]] * 2, F32)
g, yt, y, _ = select_case("float32", pred=pz, p=2)
g.save(yt, "y", "float32", 2, 10, y)
case("select_pred_negative_zero_is_false", g, f"Select with a float32 predicate holding -0.0: counts as 0 ({SEL})", choices=["D8"])
for tag, pdt, bad_val in [("uint8_2", "uint8", 2), ("int32_minus1", "int32", -1), ("float32_half", "float32", 0.5)]:
    pb = np.ones((4, 10), np.float64)
    pb[1, 3] = bad_val
    praw = pb.astype(STORE[pdt]) if pdt != "float32" else pb.astype(F32)
    g, yt, _, _ = select_case(pdt, pred=praw, early=True)
    case(f"select_pred_{tag}_fault", g, f"Select with a predicate value {bad_val} at element 13 -> fault bad-field naming the element; "
         f"the earlier Save is intact; the message names the flat element index 13 ({SEL})", fault=("bad-field", "13"),
         choices=["D8"] if pdt == "float32" else ())

# a faulting Select writes straight into the pre-filled external output: it must stay as it was
g = Prog()
pb = np.ones((2, 8), np.uint8)
pb[1, 5] = 2
pt = g.tile_in("pred", "uint8", pb)
tt = g.tile_in("t", "float32", fp32_vals((2, 8)))
prev = np.full((2, 8), 5.5, F32)
g.dram_in("prev", "float32", prev)
g.dram_out("y", "float32", (2, 8), prev)
g.inst("Load", [tile("prev", "float32", 2, 8)], [tile("y", "float32", 2, 8)])
g.inst("Select", [tile(pt, "uint8", 2, 8), tile(tt, "float32", 2, 8), imm(0.0)], [tile("y", "float32", 2, 8)])
case("select_pred_2_fault_output_untouched", g,
     f"Select into the external output (pre-filled by a Load) with a predicate value 2 at element 13 -> fault bad-field; "
     f"no element is written (inputs are read and checked before any write) ({SEL})", fault=("bad-field", "13"))

# ================================================================ 11. CopyPredicated (re-facts §7, nki tensor_copy_predicated)
CPR = "re-facts §7 CopyPredicated / nki tensor_copy_predicated: out <- (pred != 0) xor reverse_pred ? src : out (pre-filled by a Load)"


def cpred_case(pdt, praw, reverse=None, src_dt="float32", out_dt="float32", src_imm=None, p=4, f=10):
    src = fp32_vals((p, f)) if src_dt == "float32" else encode(fp32_vals((p, f)), src_dt)
    prev = encode(np.full((p, f), -99.0, F32), out_dt)
    g = Prog()
    pt = g.tile_in("pred", pdt, praw)
    if src_imm is None:
        s_op = tile(g.tile_in("src", src_dt, src), src_dt, p, f)
        sv = cast(src, src_dt, out_dt)
    else:
        s_op = imm(src_imm)
        sv = encode(np.full((p, f), src_imm, F32), out_dt)
    yt = g.tile_in("prev", out_dt, prev)
    fields = {} if reverse is None else {"reverse_pred": reverse}
    g.inst("CopyPredicated", [s_op, tile(pt, pdt, p, f)], [tile(yt, out_dt, p, f)], **fields)
    # D9: the predicate goes through the project cast to uint32 (through fp32, RNE, clamped), so
    # 0.5 -> 0 and a negative value -> 0 are false.
    on = encode(decode(praw, pdt), "uint32") != 0
    if reverse:
        on = ~on
    g.save(yt, "y", out_dt, p, f, np.where(on, sv, prev).astype(STORE[out_dt]))
    return g


for pdt in ("uint8", "uint16", "uint32", "int32", "int8", "int16"):
    info = np.iinfo(STORE[pdt])
    vals = np.array([0, 1, 2, info.max, info.max // 2, 0, 7, 0, 255 if info.max >= 255 else 3, 0], np.int64)
    praw = np.tile(vals, (4, 1)).astype(STORE[pdt])
    praw[1::2] = RNG.integers(0, 2, (2, 10)).astype(STORE[pdt])
    case(f"cpred_pred_{pdt}", cpred_case(pdt, praw), f"CopyPredicated with a {pdt} predicate (0, 1, 2, max, max//2, ...: non-zero = true; no negative values, see cpred_pred_int32_negative_cast) ({CPR})")
pf = np.array([[0.0, 0.5, 1.0, -0.0, 0.49, 0.51, 1.5, 2.5, -1.0, 1e9]] * 4, F32)
case("cpred_pred_float32_half_is_false", cpred_case("float32", pf), f"CopyPredicated with a float32 predicate: converted by the project cast (0.5 -> 0 RNE is false, 0.51 -> 1, -1.0 -> 0 clamped) ({CPR})",
     choices=["D9"])
pb = encode(pf, "bfloat16")
case("cpred_pred_bfloat16", cpred_case("bfloat16", pb), f"CopyPredicated with a bf16 predicate (D9 cast) ({CPR})", choices=["D9"])
praw = RNG.integers(0, 2, (4, 10)).astype(np.uint8)
case("cpred_reverse_pred_true", cpred_case("uint8", praw, reverse=True), f"CopyPredicated with reverse_pred true ({CPR})")
case("cpred_reverse_pred_false", cpred_case("uint8", praw, reverse=False), f"CopyPredicated with reverse_pred false (explicit) ({CPR})")
case("cpred_reverse_pred_uint32", cpred_case("uint32", (RNG.integers(0, 3, (4, 10)) * 0x10000).astype(np.uint32), reverse=True),
     f"CopyPredicated, uint32 predicate 0 / 0x10000 / 0x20000 with reverse_pred ({CPR})")
case("cpred_src_imm", cpred_case("uint8", praw, src_imm=3.5), f"CopyPredicated with an imm_value source 3.5 ({CPR})")
case("cpred_cast_fp32_to_bfloat16", cpred_case("uint8", praw, out_dt="bfloat16"), f"CopyPredicated fp32 source into a bf16 destination (converted) ({CPR})")
case("cpred_bfloat16_data_uint16_pred", cpred_case("uint16", praw.astype(np.uint16), src_dt="bfloat16", out_dt="bfloat16"),
     f"CopyPredicated bf16 -> bf16 (bit-exact), uint16 predicate ({CPR})")
case("cpred_int32_data", cpred_case("uint8", praw, src_dt="int32", out_dt="int32"), f"CopyPredicated int32 -> int32, uint8 predicate ({CPR})")
pn = np.tile(np.array([0, 1, -1, -2 ** 31, 5, -7, 0, 2 ** 31 - 1, -100, 3], np.int64), (4, 1)).astype(np.int32)
case("cpred_pred_int32_negative_cast", cpred_case("int32", pn),
     f"CopyPredicated with negative int32 predicate values: read converted to uint32 by the project cast (through fp32, "
     f"clamped), so a negative value is 0 = false ({CPR}; D9 as worded)", choices=["D9"])
# ---------------------------------------------------------------- CopyPredicated side output (D10)
CPS = ("seed 000 §5.5 CopyPredicated 'followed by a doEngineAccumReduce accumulator side-effect', re-facts §7 "
       "reduce_op / accumulator_cmd; D10: side[p] = in-order fp32 fold of reduce_op over dst row p after the copy, "
       "written (acc absent/Idle/Zero/ZeroAccumulate) or added in (Accumulate/AddAccumulate)")


def fold_rows(y, op):
    """The sequential fp32 fold of each row (D10), one float32 operation at a time."""
    out = np.empty((y.shape[0], 1), F32)
    for r in range(y.shape[0]):
        a = F32(y[r, 0])
        for x in y[r, 1:]:
            x = F32(x)
            if op == "add":
                a = F32(a + x)
            elif op == "mult":
                a = F32(a * x)
            elif op == "max":
                a = x if x > a else a  # glibc fmaxf, no NaNs or ties in these data
            else:
                a = x if x < a else a
        out[r, 0] = a
    return out


def cpred_side_case(op, acc=None, reverse=None, side_dt="float32", p=4, f=10, fault=False):
    if op == "mult":
        src = (1.0 + 0.25 * RNG.standard_normal((p, f))).astype(F32)
        prev = (1.0 + 0.25 * RNG.standard_normal((p, f))).astype(F32)
    else:
        src, prev = fp32_vals((p, f)), fp32_vals((p, f))
    praw = RNG.integers(0, 2, (p, f)).astype(np.uint8)
    r0 = fp32_vals((p, 1), scale=100.0)
    r0_raw = r0 if side_dt == "float32" else encode(r0, side_dt)
    g = Prog()
    pt = g.tile_in("pred", "uint8", praw)
    st = g.tile_in("src", "float32", src)
    yt = g.tile_in("prev", "float32", prev)
    rt = g.tile_in("side", side_dt, r0_raw)
    fields = {}
    if op is not None:
        fields["reduce_op"] = op
    if acc is not None:
        fields["accumulator_cmd"] = acc
    if reverse is not None:
        fields["reverse_pred"] = reverse
    g.inst("CopyPredicated", [tile(st, "float32", p, f), tile(pt, "uint8", p, f)],
           [tile(yt, "float32", p, f), tile(rt, side_dt, p, 1)], **fields)
    on = praw != 0
    if reverse:
        on = ~on
    y = np.where(on, src, prev).astype(F32)
    if fault:
        # The run stops at the fault, so no Save follows it.
        return g
    fold = fold_rows(y, op)
    if acc in ("Accumulate", "AddAccumulate"):
        assert side_dt == "float32"
        want = (r0 + fold).astype(F32)
    else:
        want = fold if side_dt == "float32" else encode(fold, side_dt)
    g.save(yt, "y", "float32", p, f, y)
    g.save(rt, "r", side_dt, p, 1, want)
    return g


case("cpred_side_add_write", cpred_side_case("add"), f"CopyPredicated side output, add, no acc: written ({CPS})", choices=["D10"])
case("cpred_side_add_addaccumulate", cpred_side_case("add", "AddAccumulate"), f"CopyPredicated side output, add, AddAccumulate: added in ({CPS})", choices=["D10"])
case("cpred_side_max_zeroaccumulate", cpred_side_case("max", "ZeroAccumulate"), f"CopyPredicated side output, max, ZeroAccumulate: written ({CPS})", choices=["D10"])
case("cpred_side_min_idle_reverse", cpred_side_case("min", "Idle", reverse=True), f"CopyPredicated side output, min, Idle, reverse_pred: written ({CPS})", choices=["D10"])
case("cpred_side_mult_accumulate", cpred_side_case("mult", "Accumulate"), f"CopyPredicated side output, mult, Accumulate: added in ({CPS})", choices=["D10"])
case("cpred_side_add_bfloat16_side", cpred_side_case("add", "Zero", side_dt="bfloat16", f=33),
     f"CopyPredicated side output, add over 33 values, written into a bf16 side (RNE of the fp32 fold) ({CPS})", choices=["D10"])
case("cpred_side_no_reduce_op_faults", cpred_side_case(None, fault=True),
     f"CopyPredicated with outs[1] but no reduce_op: a bad-field fault before anything is written ({CPS})", choices=["D10"],
     fault=("bad-field", "reduce_op"))


# ================================================================ 12. x4 forms and CopyPredicated LoadAccumulate (x4_cases.py)
import x4_cases  # noqa: E402  (its own module, own RNG; it registers through case() above)

x4_cases.add_cases(globals())


# ================================================================ write
def write_all():
    birprog.clear_cases(HERE, keep=("rng",))
    total = 0
    for name, (g, note, choices, fault, errors) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes, rng/ C++ draws), never from birsim"]
        lines += [f"# fact: {x}" for x in FACTS.get(name, ())]
        lines += [f"choice: {c}" for c in choices]
        if errors:
            # A program the validator must refuse: the runner loads and validates it and compares
            # the located diagnostics.
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
