#!/usr/bin/env python3
"""Writes the `programs/indirect` conformance suite: BIR JSON programs, .npy inputs and expected .npy
outputs for the gather / scatter opcodes (IndirectLoad, IndirectSave, IndirectSaveAccumulate,
GenericIndirectLoad, GenericIndirectSave, IndirectCopy, Gather), computed here with NumPy / ml_dtypes
from the corrected indirect contract (seed 000 §6.1-§6.4, seed 004 §5, re-facts §3/§6/§8, NKI
local_gather), independently of birsim.

The corrected rules (what this oracle implements; README.md "Rules"):
  1. IndirectLoad / IndirectSave / IndirectSaveAccumulate: any table AP shape; entry r = the L
     contiguous table elements `offset + r·S + i` (S = the table AP's final-level step, for
     IndirectSaveAccumulate `entry_step_elements`; L = the dense side's final-level num). Out of bounds
     = an entry element outside the table's memory location (not "r >= the final num").
  2. IndirectSaveAccumulate: the -2^32 of seed §6.2 belongs to the table base, so a uint64 / int64 index
     is its row as-is (a stored -1 is row 2^64 - 1: out of bounds, never a skip); int32 zero-extends.
     IndirectLoad / IndirectSave keep §6.1's decode (64-bit minus 2^32, 2^32 - 1 -> -1 -> skip).
  3. IndirectCopy: an index is an ELEMENT offset in the partition's own src (AP order); E = the dst
     AP's final-level num; entry k copies src elements [idx_k, idx_k + E); idx_k + E > the partition's
     src element count is out of bounds.
  4. GenericIndirectLoad / Save: O_j = sum coef_d·idx_d[j] (64-bit wrapping), O_j == -1 skips; the entry
     is ONE contiguous run of L = (product of the non-indirect nums) table elements from `offset + O_j`;
     bound = the table's location only; IndirectDim letters W 0, Z 1, Y 2, X 3 = the AP level;
     GenericIndirectSave without `op` adds.

The oracle works on flat element arrays: an element e of an AP lives at flat element e of its memory
location (docs/bir-json.md "Access patterns": partition e / pitch, byte (e % pitch)·size; every
location here sits at addr 0 with a dense pitch, so that is the row-major flat index, and the
location's element count is the array's size). Every accumulate is done one entry at a time, in
serial order, widening to fp32, adding in fp32 and rounding back to the table dtype with ml_dtypes at
EVERY step (ints wrap). The duplicate-add cases assert that this differs from one sum followed by one
rounding.

Old vs new: every run / fault case is also evaluated under the previous contract's reading (the
`old` branch of each plan: table levels other than the final one must have num 1, bound r < the final
num, IndirectSaveAccumulate 64-bit indices rebased like the others, IndirectCopy indices = rows of the
src final num, GenericIndirect per-dim bounds, -1 in any dim skips, the other levels walked with their
own steps, letters W..X counted from the innermost level, op absent = bypass). `disc=True` asserts the
old reading gives another outcome (the case discriminates), `disc=False` that it gives the same one.
The script prints every case whose outcome changed.

Cases that depend on an ASSUMED decision carry `choice: I<n>` (docs/fidelity.md IDs; N7 for the legacy
FP8 formats float8e3 / float8e4). Cases run under the skip policy carry `option: oob=skip`.
Run: /work/main/.venv/bin/python conformance/programs/indirect/make_cases.py
"""
import os
import sys
import warnings
from itertools import combinations

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import ap, ap_index, tile  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
RNG = np.random.default_rng(20261211)
TWO32 = 1 << 32
TWO64 = 1 << 64
U64 = TWO64 - 1
SKIP = U64  # the decoded -1 (Load/Save family) / the all-ones combined offset (GenericIndirect)

# ---------------------------------------------------------------- dtypes
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "float8_e4m3fn": np.uint8,
         "float8e5": np.uint8, "float8e4": np.uint8, "float8e3": np.uint8, "int32": np.int32, "uint8": np.uint8,
         "int8": np.int8, "uint32": np.uint32, "uint64": np.uint64, "int16": np.int16, "uint16": np.uint16,
         "int64": np.int64, "float32r": np.uint32}
SIZE = {k: np.dtype(v).itemsize for k, v in STORE.items()}
ML = {"bfloat16": md.bfloat16, "float8_e4m3fn": md.float8_e4m3fn, "float8e5": md.float8_e5m2,
      "float8e4": md.float8_e4m3, "float8e3": md.float8_e3m4}
FLOATS = ("float32", "bfloat16", "float16", "float8e3", "float8e4", "float8e5")
REDUCIBLE = FLOATS + ("int32", "int64")  # re-facts §8: dtypes 3, 4, 7, 12, 13, 15, 16, 19


def widen(raw, dt):
    """Stored values -> float32."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    return raw.astype(F32)


def narrow(x, dt):
    """float32 -> stored values, RNE (ml_dtypes / NumPy). The suite's values never overflow or produce NaN
    (asserted), so the FP8 config (saturate or not) never matters."""
    x = np.asarray(x, F32)
    assert np.all(np.isfinite(x)), x
    if dt == "float32":
        return x.copy()
    if dt == "float16":
        h = x.astype(np.float16)
        assert np.all(np.isfinite(h)), x
        return h
    m = x.astype(ML[dt])
    assert np.all(np.isfinite(m.astype(F32))), (x, dt)
    return m.view(STORE[dt])


class NumericsFault(Exception):
    pass


def acc_add(dst, src, dt):
    """cast_copy_or_accumulate(add) on one entry: floats widen to fp32, add, round back; ints wrap."""
    if dt in FLOATS:
        return narrow(widen(dst, dt) + widen(src, dt), dt)
    if dt == "int32":
        return (dst.astype(np.int64) + src.astype(np.int64)).astype(np.uint64).astype(np.uint32).view(np.int32)
    if dt == "int64":
        return (dst.view(np.uint64) + src.view(np.uint64)).view(np.int64)  # numpy uint64 add wraps
    raise NumericsFault(dt)


def vals(shape, dt, scale=4.0):
    """Random finite values stored in dt."""
    if dt in FLOATS:
        lim = {"float8e3": 3.0, "float8e4": 16.0, "float8e5": 16.0}.get(dt, scale)
        return narrow((RNG.standard_normal(shape) * lim / 2).clip(-lim, lim), dt)
    info = np.iinfo(STORE[dt])
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return RNG.integers(lo, hi, shape, endpoint=True).astype(STORE[dt])


def distinct(n, dt):
    """n stored values, pairwise distinct bit patterns (so a wrong element is visible), finite."""
    k = np.arange(n, dtype=np.int64)
    if dt == "float32":
        return ((k + 0.25) * np.where(k % 2 == 0, 1, -1)).astype(F32)
    if dt == "bfloat16":
        return ((k * 37 + 0x3C00) % 0x7F00).astype(np.uint16)
    if dt == "float16":
        return ((k * 29 + 0x1C00) % 0x7B00).astype(np.uint16).view(np.float16)
    if dt in ("float8e5", "float8e4", "float8e3", "float8_e4m3fn", "uint8", "int8"):
        return ((k * 7 + 3) % 0x70).astype(STORE[dt])
    return (k * 3 + 1).astype(STORE[dt])


# ---------------------------------------------------------------- program building (birprog)
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "TensorScalar": "DVE", "IndirectCopy": "Pool", "Gather": "Pool"}
    DEFAULT_ENGINE = "DMA"


CASES = {}
CHANGED = {}  # case -> True when the old contract's reading of the same program gives another outcome


def case(name, prog, note, choices=(), fault=None, errors=None, options=()):
    assert name not in CASES, name
    if fault is None and errors is None:
        assert prog.outputs, name
    CASES[name] = (prog, note, tuple(dict.fromkeys(choices)), fault, errors, tuple(options))


# ---------------------------------------------------------------- the oracle: shared pieces
class OOB(Exception):
    """An out-of-bounds index: args = (the operand the message must name, or "" when not pinned,)."""


class Invalid(Exception):
    """The program is a validation error under the reading being evaluated (only the old reading)."""


def fault_of(e):
    return ("out-of-bounds", e.args[0])


def evaluate(run, reading, init):
    """run(reading) -> (fault, expected); an out-of-bounds / numerics fault leaves `init` unchanged
    (every index is checked before the first write)."""
    try:
        return run(reading)
    except OOB as e:
        return fault_of(e), init.copy()
    except NumericsFault as e:
        return ("numerics", e.args[0]), init.copy()


def outcome(fault, expected):
    return ("fault" if fault else "ok", fault[0] if fault else None, np.ascontiguousarray(expected).tobytes())


def both(name, run, init, disc):
    """The new reading's (fault, expected); records and (when disc is not None) asserts whether the old
    reading's outcome differs."""
    fault, expected = evaluate(run, "new", init)
    try:
        old = outcome(*evaluate(run, "old", init))
    except Invalid:
        old = ("invalid", None, b"")
    changed = old != outcome(fault, expected)
    CHANGED[name] = changed
    if disc is not None:
        assert changed == disc, f"{name}: the old reading {'differs' if changed else 'agrees'} ({old[0]})"
    return fault, expected


def inside(start, n, count):
    """Whether elements start .. start + n - 1 all lie in a location of `count` elements. Also asserts
    that 64-bit wrapping arithmetic, read signed or unsigned, gives the same verdict, so no case depends
    on how wide the simulator's address arithmetic is."""
    ok = start >= 0 and start + n <= count
    u = start % TWO64
    s = u - TWO64 if u >= 1 << 63 else u
    assert ok == (u + n <= count) == (s >= 0 and s + n <= count), (start, n, count)
    return ok


def assert_ap_inside(pairs, off, count):
    """Every element an AP visits statically lies in its location (so no case trips a static AP check)."""
    e = ap_index(pairs, off)
    assert e.min() >= 0 and e.max() < count, (pairs, off, count)


def decode_ls(raw, dt):
    """Load/Save-family index decode, seed 000 §6.1: int32 zero-extended, uint64/int64 minus 2^32 (wrapping)."""
    raw = np.asarray(raw).reshape(-1)
    if dt == "int32":
        return [int(v) for v in raw.view(np.uint32)]
    if dt in ("uint64", "int64"):
        return [(int(v) - TWO32) & U64 for v in raw.view(np.uint64)]
    raise ValueError(dt)


def decode_plain(raw, dt):
    """IndirectSaveAccumulate's decode (rule 2, seed 000 §6.2: the -2^32 is on the table base): int32
    zero-extended, uint64/int64 as their 64-bit pattern. Also the local forms (uint8/16/32)."""
    raw = np.asarray(raw).reshape(-1)
    if dt == "int32":
        return [int(v) for v in raw.view(np.uint32)]
    if dt in ("uint64", "int64"):
        return [int(v) for v in raw.view(np.uint64)]
    if dt in ("uint16", "uint32", "uint8"):
        return [int(v) for v in raw]
    raise ValueError(dt)


def encode_ls(rows, dt):
    """Decoded values (python ints; -1 = the skip value; any 64-bit value) -> stored values under §6.1's decode."""
    rows = [int(r) for r in rows]
    if dt == "int32":
        assert all(-1 <= r < TWO32 for r in rows), rows
        return np.array([r & 0xFFFFFFFF for r in rows], np.uint64).astype(np.uint32).view(np.int32)
    u = np.array([(r + TWO32) & U64 for r in rows], np.uint64)
    return u if dt == "uint64" else u.view(np.int64)


def encode_plain(rows, dt):
    """Row numbers (python ints, any 64-bit value, -1 = all ones) -> stored values under the as-is decode."""
    rows = [int(r) & (U64 if dt != "int32" else 0xFFFFFFFF) for r in rows]
    if dt == "int32":
        return np.array(rows, np.uint64).astype(np.uint32).view(np.int32)
    u = np.array(rows, np.uint64)
    return u if dt == "uint64" else u.view(np.int64)


def apply_wrap(v, wrap):
    """I3: v' = (v % n) + hi·(v / n) on the unsigned 64-bit value; a result past 64 bits -> None (out of bounds)."""
    if wrap is None:
        return v
    n, hi = wrap
    r = (v % n) + hi * (v // n)
    return r if r <= U64 else None


def rows_plan(reading, values, tpairs, S, toff, L, count, wrap, oob, minus1_skips):
    """IndirectLoad / IndirectSave / IndirectSaveAccumulate: decoded values in apply order (None = a slot
    skipped before decoding, past num_indices) -> the first table element of each entry (None = skipped).
    new (rule 1): any table AP; entry r = elements offset + r·S + i, i < L; out of bounds = an element
    outside the location. old: every table level but the final one has num 1 (else a validation error);
    r >= V = the final num is out of bounds (naming ins[1]); an entry leaving the location too (the
    message not pinned)."""
    if reading == "old" and any(n != 1 for _, n in tpairs[:-1]):
        raise Invalid()
    V = tpairs[-1][1]
    out = []
    for v in values:
        if v is None or (minus1_skips and v == SKIP):
            out.append(None)
            continue
        w = apply_wrap(v, wrap)
        if reading == "new":
            bad = "ins[1]" if w is None or not inside(toff + w * S, L, count) else None
        else:
            bad = "ins[1]" if w is None or w >= V else ("" if not inside(toff + w * S, L, count) else None)
        if bad is not None:
            if oob == "fault":
                raise OOB(bad)
            out.append(None)
            continue
        out.append(toff + w * S)
    return out


def scatter(table, starts, L, src_rows, op, dt):
    """Serial apply: table[start + i] (op)= src_rows[j][i] for each non-None start, in order."""
    table = table.copy()
    for j, s in enumerate(starts):
        if s is None:
            continue
        where = s + np.arange(L)
        if op == "copy":
            table[where] = src_rows[j]
        else:
            table[where] = acc_add(table[where], src_rows[j], dt)
    return table


def one_sum(tab0, srcs, dt):
    """The wrong model: all contributions summed in float64 once, rounded once."""
    acc = widen(tab0, dt).astype(np.float64)
    for s in srcs:
        acc = acc + widen(s, dt).astype(np.float64)
    return narrow(acc.astype(F32), dt)


# ---------------------------------------------------------------- 1. IndirectLoad
IL = "seed 000 §6.1/§6.2 IndirectLoad; rule 1: entry r = L contiguous elements from offset + r·S"


def indirect_load(dt, tab, tpairs, toff, idx_raw, idx_dt, dpairs, doff, dst_len, dst_init=None, wrap=None,
                  oob="fault", note="", name=None, choices=(), idx_pairs=None, dst_sb=None, tab_sb=None,
                  tab_shape=None, disc=None):
    """IndirectLoad: ins = [table, indices (flat)], outs = [dst (flat output, or an SB tile dst_sb)].
    The table is a DRAM input (shape tab_shape, default one row) or an SB tile of tab_sb partitions."""
    tab = np.asarray(tab).reshape(-1)
    count = tab.size  # the table location's elements
    assert_ap_inside(tpairs, toff, count)
    assert_ap_inside(dpairs, doff, dst_len)
    S = tpairs[-1][0]
    L = dpairs[-1][1]
    rows = ap_index(dpairs, doff).reshape(-1, L)
    if dst_init is None:
        dst_init = distinct(dst_len, dt)[::-1].copy()
    nidx = np.asarray(idx_raw).size
    ipairs = idx_pairs or [[nidx, 1], [1, nidx]]
    decoded = decode_ls(idx_raw, idx_dt)
    decoded = [decoded[k] for k in ap_index(ipairs).reshape(-1)]

    def run(reading):
        starts = rows_plan(reading, decoded, tpairs, S, toff, L, count, wrap, oob, True)
        expected = dst_init.copy()
        for j, s in enumerate(starts):
            if s is not None:
                expected[rows[j]] = tab[s + np.arange(L)]
        return None, expected

    fault, expected = both(name, run, dst_init, disc)
    g = Prog()
    if tab_sb is None:
        g.dram_in("tab", dt, tab.reshape(tab_shape or (1, -1)))
        tname = "tab"
    else:
        g.dram_in("tab", dt, tab.reshape(tab_sb, -1))
        tname = "tab_t"
        g.sb(tname, dt, tab_sb, tab.size // tab_sb)
        g.inst("Load", [tile("tab", dt, tab_sb, tab.size // tab_sb)], [tile(tname, dt, tab_sb, tab.size // tab_sb)])
    g.dram_in("idx", idx_dt, np.asarray(idx_raw).reshape(1, -1))
    fields = {}
    if wrap is not None:
        fields["wrap"] = {"n": wrap[0], "hi": wrap[1]}
    if dst_sb is None:
        g.out_prefilled("y", dt, dst_init.reshape(1, -1), expected)
        dmem = "y"
    else:
        p, f = dst_sb
        g.dram_in("y0", dt, dst_init.reshape(p, f))
        g.sb("yt", dt, p, f)
        g.inst("Load", [tile("y0", dt, p, f)], [tile("yt", dt, p, f)])
        dmem = "yt"
    g.inst("IndirectLoad", [ap(tname, dt, tpairs, toff), ap("idx", idx_dt, ipairs)], [ap(dmem, dt, dpairs, doff)],
           **fields)
    if dst_sb is not None and fault is None:
        g.save("yt", "y", dt, dst_sb[0], dst_sb[1], expected.reshape(dst_sb))
    elif dst_sb is not None:
        g.expect("yt", expected.reshape(dst_sb))
    ch = list(choices)
    if idx_dt in ("uint64", "int64"):
        ch.append("I1")
    if wrap is not None:
        ch.append("I3")
    if fault is not None or oob == "skip":
        ch.append("I2")
    case(name, g, f"IndirectLoad {note} ({IL})", choices=ch, fault=fault,
         options=["oob=skip"] if oob == "skip" else ())
    return expected


V, L = 16, 8
TAB = distinct(V * L, "float32")
# every index dtype, plain in-bounds gather with a -1 skip
ROWS = [3, 0, 15, 7, -1, 7, 12, 1]
for idt in ("int32", "uint64", "int64"):
    rows = [r if r >= 0 or idt != "int32" else 2 for r in ROWS]
    indirect_load("float32", TAB, [[L, 1], [L, V]], 0, encode_ls(rows, idt), idt, [[L, 8], [1, L]], 0, 8 * L,
                  name=f"iload_{idt}_basic", disc=False,
                  note=f"{idt} indices {rows}" + (" (-1 skips: dst row 4 keeps its value)" if idt != "int32" else ""))
# the raw values of the decode: int32 -1 = 0xFFFFFFFF is a row (out of bounds), uint64 2^32 - 1 skips
for idt, raw, tag, what in [
        ("int32", np.array([2, -1, 5], np.int32), "int32_minus1_is_oob", "int32 -1 is row 4294967295 (zero-extended), not a skip -> out of bounds"),
        ("uint64", np.array([TWO32 + 2, TWO32 - 1, TWO32 + 5], np.uint64), "uint64_2p32m1_skips", "uint64 2^32 - 1 rebases to -1 -> skipped; 2^32 + r -> row r"),
        ("int64", np.array([TWO32 + 2, TWO32 - 1, TWO32 + 5], np.uint64).view(np.int64), "int64_2p32m1_skips", "int64 2^32 - 1 rebases to -1 -> skipped"),
        ("uint64", np.array([TWO32 + 2, 5, TWO32 + 5], np.uint64), "uint64_below_2p32_oob", "uint64 5 (< 2^32) rebases to 2^64 - 2^32 + 5 -> out of bounds"),
        ("int64", np.array([TWO32 + 2, TWO32 + 5, 0], np.uint64).view(np.int64), "int64_zero_oob", "int64 0 rebases to 2^64 - 2^32 -> out of bounds"),
        ("int64", np.array([-1, TWO32 + 5, TWO32], np.int64), "int64_minus1_oob", "int64 stored -1 rebases to 2^64 - 2^32 - 1 (not -1) -> out of bounds"),
        ("uint64", np.array([TWO32 + 15, TWO32, TWO32 + 16], np.uint64), "uint64_one_past_end_oob", "uint64 2^32 + 16 = row 16 of a 16-row location -> out of bounds"),
        ("int32", np.array([15, 0, 16], np.int32), "int32_one_past_end_oob", "int32 16 = row 16 of a 16-row location -> out of bounds"),
        ("int32", np.array([15, 0, 15, 0], np.int32), "int32_last_in_bounds", "int32 15 = the last row; duplicates gather twice"),
        ("uint64", np.array([0xFFFFFFFFFFFFFFFF, TWO32 + 3], np.uint64), "uint64_max_oob", "uint64 2^64 - 1 rebases to 2^64 - 2^32 - 1 -> out of bounds")]:
    n = raw.size
    for oob in ("fault", "skip"):
        if oob == "skip" and "oob" not in tag:
            continue
        indirect_load("float32", TAB, [[L, 1], [L, V]], 0, raw, idt, [[L, n], [1, L]], 0, n * L, oob=oob,
                      name=f"iload_{tag}{'_skip' if oob == 'skip' else ''}", disc=False,
                      note=f"{what}{'; under oob=skip the entry is left unchanged' if oob == 'skip' else '; fault, nothing written'}")
# OOB: first index fine, last bad -> nothing written (the check precedes every write)
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([1, 2, 3, 4, 5, 300], np.int32), "int32",
              [[L, 6], [1, L]], 0, 6 * L, name="iload_oob_last_nothing_written", disc=False,
              note="indices 1..5 fine, the 6th (300) outside the 128-element location -> fault; dst rows 0..4 NOT written")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([1, 300, 3, 400, 5, 16], np.int32), "int32",
              [[L, 6], [1, L]], 0, 6 * L, oob="skip", name="iload_mixed_oob_skip", disc=False,
              note="mixed out-of-bounds indices 300, 400, 16 under oob=skip: those rows left unchanged")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([16, 17, 1000], np.int32), "int32",
              [[L, 3], [1, L]], 0, 3 * L, oob="skip", name="iload_all_oob_skip", disc=False,
              note="all indices out of bounds under oob=skip: dst unchanged")
# rule 1: the bound is the location, not the table AP's final num
indirect_load("float32", TAB, [[L, 1], [L, 10]], 0, np.array([9, 10, 15], np.int32), "int32", [[L, 3], [1, L]], 0,
              3 * L, name="iload_past_final_num_runs", choices=["I4"], disc=True,
              note="table AP final level [8, 10] on a 16-row location: indices 10 and 15 are >= the final num but their "
                   "entries (elements 80..87, 120..127) lie inside the location -> gathered (the old bound r < 10 faulted)")
indirect_load("float32", TAB, [[L, 1], [L, 10]], 0, np.array([9, 10, 3, 16], np.int32), "int32", [[L, 4], [1, L]], 0,
              4 * L, oob="skip", name="iload_past_final_num_skip_only_outside", choices=["I4"], disc=True,
              note="table AP final level [8, 10], oob=skip: 10 gathered (inside the location), 16 (elements 128..135) skipped")
# an entry leaving the location: table location of 16*8 - 3 elements
indirect_load("float32", TAB[:V * L - 3], [[L, 1], [L, V]], 0, np.array([0, 15], np.int32), "int32",
              [[L, 2], [1, L]], 0, 2 * L, name="iload_entry_leaves_location_fault", choices=["I4"], disc=False,
              note="row 15's 8 elements (120..127) run 3 past the 125-element table location -> out of bounds naming ins[1]")
indirect_load("float32", TAB[:V * L - 3], [[L, 1], [L, V]], 0, np.array([0, 15, 14], np.int32), "int32",
              [[L, 3], [1, L]], 0, 3 * L, oob="skip", name="iload_entry_leaves_location_skip", choices=["I4"],
              disc=False, note="row 15 leaves the table location: skipped under oob=skip; rows 0 and 14 gathered")
# table AP geometry: S > L (padded rows), S < L (overlapping entries), offset base
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([4, 9, 0, 15], np.int32), "int32", [[5, 4], [1, 5]], 0,
              20, name="iload_entry_shorter_than_stride", disc=False,
              note="entry length L = 5 (dst final num) < stride S = 8: the first 5 elements of each row")
indirect_load("float32", TAB, [[3, 1], [3, 40]], 0, np.array([0, 39, 20, 21], np.int32), "int32", [[8, 4], [1, 8]], 0,
              32, name="iload_overlapping_entries", choices=["I4"], disc=False,
              note="table final level [3, 40], L = 8: entry r = elements 3r .. 3r+7 (entries overlap)")
indirect_load("float32", TAB, [[L, 1], [L, 12]], 21, np.array([0, 11, 5], np.int32), "int32", [[L, 3], [1, L]], 0,
              24, name="iload_table_offset", choices=["I4"], disc=False,
              note="table AP offset 21 (base), final level [8, 12]: entry r starts at element 21 + 8r")
indirect_load("float32", TAB, [[L, 1], [L, 12]], 21, np.array([0, 12, 13], np.int32), "int32", [[L, 3], [1, L]], 0,
              24, oob="skip", name="iload_table_offset_past_final_num", choices=["I4"], disc=True,
              note="table AP offset 21, final level [8, 12], oob=skip: 12 (elements 117..124) gathered although "
                   ">= 12; 13 (125..132) leaves the 128-element location: skipped")
# rule 1: every table AP shape is accepted; S = the final step
indirect_load("float32", TAB, [[64, 2], [8, 8]], 0, np.array([0, 7, 8, 15], np.int32), "int32", [[L, 4], [1, L]], 0,
              32, name="iload_table_outer_level_num_2", choices=["I4"], disc=True,
              note="table AP [[64,2],[8,8]] (an outer level with num 2, once a validation error): entry r = elements "
                   "8r .. 8r+7, r up to 15 inside the location")
indirect_load("float32", TAB, [[32, 2], [16, 4], [4, 10]], 0, np.array([0, 1, 30, 17], np.int32), "int32",
              [[6, 4], [1, 6]], 0, 24, name="iload_table_3level_final_step_4", choices=["I4"], disc=True,
              note="table AP [[32,2],[16,4],[4,10]]: S = 4 (final step), L = 6: entry r = elements 4r .. 4r+5 "
                   "(r = 30: 120..125)")
indirect_load("float32", TAB, [[1, 1], [-8, 4]], 120, np.array([0, 3, 10, 15], np.int32), "int32", [[L, 4], [1, L]],
              0, 32, name="iload_table_negative_step", choices=["I4"], disc=True,
              note="table AP offset 120, final level [-8, 4]: entry r = elements 120 - 8r .. 127 - 8r (r = 10, 15 "
                   "inside the location although >= 4)")
indirect_load("float32", TAB, [[1, 1], [-8, 16]], 120, np.array([2, 16], np.int32), "int32", [[L, 2], [1, L]],
              0, 16, name="iload_table_negative_step_below_zero_fault", choices=["I4"], disc=False,
              note="table AP offset 120, final level [-8, 16]: r = 16 starts at element -8 (< 0) -> out of bounds")
# final step 1: an index counts elements (rule 1; the table AP named in the contract)
BIGV, BIGL = 4096, 128
BIGTAB = (RNG.standard_normal(BIGV * BIGL) * 8).astype(F32)
EL = [0, 5, 6, 1000, 128, 4096 * 128 - 128, 253617, 4094 * 128 + 127, 4094 * 128 + 127, 262143]
indirect_load("float32", BIGTAB, [[BIGL, BIGV], [1, BIGL]], 0, np.array(EL, np.int32), "int32",
              [[BIGL, len(EL)], [1, BIGL]], 0, len(EL) * BIGL, tab_shape=(BIGV, BIGL),
              name="iload_table_4096x128_final_step1_elements", choices=["I4"], disc=True,
              note="4096 x 128 fp32 table, AP [[128,4096],[1,128]]: final step 1, so index v is the 128 elements "
                   "from element v: 5 and 6 overlap, 1000, 253617, 4094*128+127 (twice) are not row-aligned, 4096*128-128 is the last "
                   "that fits (the old contract refused the AP: an outer level with num 4096)")
indirect_load("float32", TAB, [[16, 8], [1, 16]], 0, np.array([0, 112, 113], np.int32), "int32",
              [[16, 3], [1, 16]], 0, 48, name="iload_table_final_step1_leaves_location_fault", choices=["I4"],
              disc=True, note="table AP [[16,8],[1,16]] on 128 elements, L = 16: index 112 is the last that fits, "
                              "113 runs one element past the location -> out of bounds naming ins[1]")
indirect_load("float32", TAB, [[8, 16], [1, 8]], 0, np.array([13, 0, 120, 61], np.int32), "int32",
              [[L, 4], [1, L]], 0, 32, tab_sb=16, name="iload_sb_table_entry_crosses_partitions", choices=["I4"],
              disc=True, note="SB table 16 partitions x 8, AP [[8,16],[1,8]] (final step 1): index 13 reads elements "
                              "13..20 = partition 1 elements 5..7 then partition 2 elements 0..4; 120 = partition 15")
# the rest of the geometry
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([2, 7, 2, 9, 3, 1], np.int32), "int32",
              [[12, 2], [4, 3], [1, 4]], 0, 24, name="iload_dst_3level", disc=False,
              note="dst AP [[12,2],[4,3],[1,4]]: rows enumerated by the two outer levels (6 rows of L = 4)")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([5, 6, 7], np.int32), "int32", [[10, 3], [1, 4]], 3,
              40, name="iload_dst_strided_rows", disc=False,
              note="dst rows of 4 at element 3 + 10j (dst offset 3, row stride 10): the gaps keep their values")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([[1, 2, 3], [4, 5, 6]], np.int32), "int32",
              [[L, 6], [1, L]], 0, 48, idx_pairs=[[1, 3], [3, 2]], name="iload_index_ap_transposed", disc=False,
              note="index AP [[1,3],[3,2]] reads the 2x3 index block column-major: rows 1,4,2,5,3,6")
for dt in ("bfloat16", "float16", "float8e5", "int32", "uint8", "int64", "float8_e4m3fn"):
    t = distinct(V * L, dt)
    indirect_load(dt, t, [[L, 1], [L, V]], 0, np.array([3, 3, 15, 0, 7, 8], np.int32), "int32",
                  [[L, 6], [1, L]], 0, 48, name=f"iload_dtype_{dt}", disc=False,
                  note=f"{dt} table (a copy: any dtype, bit-exact), int32 indices 3,3,15,0,7,8")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([15, 0, 3, 3, 9, 1, 2, 7], np.int32), "int32",
              [[L, 8], [1, L]], 0, 64, dst_sb=(8, L), name="iload_dst_sb_rows", disc=False,
              note="dst an SB tile [8 partitions x 8]: dst row j = partition j")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([15, 0, 3, 9], np.int32), "int32",
              [[L, 4], [1, L]], 0, 32, tab_sb=V, name="iload_table_sb_partitions", disc=False,
              note="table in SB, 16 partitions x 8: table AP [[8,1],[8,16]] (final step = the pitch): entry r = partition r")
# apply_wrap (I3): v' = v % n + hi * (v / n), then the location bound
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([0, 5, 17, 35, 100, -1], np.int32), "int32",
              [[L, 6], [1, L]], 0, 48, wrap=(4, 2), oob="skip", name="iload_wrap_n4_hi2_skip", disc=False,
              note="wrap n = 4, hi = 2: v' = v % 4 + 2 (v / 4): 0->0, 5->3, 17->9, 35->19 (outside, skipped), 100->50 skipped, -1 skipped")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([0, 5, 17, 35], np.int32), "int32",
              [[L, 4], [1, L]], 0, 32, wrap=(4, 2), name="iload_wrap_n4_hi2_fault", disc=False,
              note="wrap n = 4, hi = 2: 35 -> 19, elements 152.. outside -> fault (the bound is checked after the wrap)")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, np.array([0, 19, 37, 1000], np.int32), "int32",
              [[L, 4], [1, L]], 0, 32, wrap=(16, 0), name="iload_wrap_modulo", disc=False,
              note="wrap n = 16, hi = 0 is v % 16: 19 -> 3, 37 -> 5, 1000 -> 8")
indirect_load("float32", TAB, [[L, 1], [L, V]], 0, encode_ls([1, 9, 6, 7], "uint64"), "uint64",
              [[L, 4], [1, L]], 0, 32, wrap=(3, 5), name="iload_wrap_uint64_n3_hi5", disc=False,
              note="uint64 indices 2^32 + {1, 9, 6, 7}, wrap n = 3, hi = 5: 1->1, 9->15, 6->10, 7->11")
# larger: 4096 x 128 fp32 table, 512 random ids
ids = RNG.integers(0, BIGV, 512)
ids[[7, 100, 300]] = ids[[1, 50, 299]]
indirect_load("float32", BIGTAB, [[BIGL, 1], [BIGL, BIGV]], 0, encode_ls(ids, "int64"), "int64",
              [[BIGL, 512], [1, BIGL]], 0, 512 * BIGL, name="iload_big_4096x128_int64", disc=False,
              note="4096 x 128 fp32 table, 512 random int64 ids (2^32 + r) incl. duplicates")
ids2 = RNG.integers(0, BIGV, 256)
indirect_load("float32", BIGTAB, [[BIGL, 1], [BIGL, BIGV]], 0, encode_ls(ids2, "int32"), "int32",
              [[BIGL, 128], [BIGL * 2, 2], [1, BIGL]], 0, 256 * BIGL, dst_sb=(128, 2 * BIGL),
              idx_pairs=[[2, 128], [1, 2]], name="iload_big_into_sb_128x2", disc=False,
              note="4096 x 128 fp32 table gathered into an SB tile of 128 partitions x 2 rows (dst AP [[256,128],[128,2],[1,128]])")


# ---------------------------------------------------------------- 2. IndirectSave / IndirectSaveAccumulate
IS = "seed 000 §6.2/§6.3 serial scatter; rule 1 (entries, location bound), rule 2 (IndirectSaveAccumulate decode)"
RNG = np.random.default_rng(20261212)  # each section has its own stream


def scatter_case(kind, dt, table0, tpairs, toff, vals_, vpairs, idx_raw, idx_dt, ipairs=None, op="add",
                 num_indices=None, entry_step=None, wrap=None, oob="fault", name=None, note="", choices=(),
                 check_serial=False, check_order=False, op_field=True, disc=None):
    """IndirectSave (kind 'save') or IndirectSaveAccumulate (kind 'acc') on flat locations.
    table0: the table location's initial contents (flat); vals_: the values location's contents (flat)."""
    table0 = np.asarray(table0).reshape(-1)
    count = table0.size
    vals_ = np.asarray(vals_).reshape(-1)
    assert_ap_inside(tpairs, toff, count)
    assert_ap_inside(vpairs, 0, vals_.size)
    idx_flat = np.asarray(idx_raw).reshape(-1)
    ipairs = ipairs or [[idx_flat.size, 1], [1, idx_flat.size]]
    L = vpairs[-1][1]
    vrows = vals_[ap_index(vpairs).reshape(-1, L)]
    S = entry_step if kind == "acc" else tpairs[-1][0]
    order = ap_index(ipairs).reshape(-1)
    mop = "copy" if (kind == "save" or op == "bypass") else "add"
    plan = {}

    def run(reading):
        if kind == "acc":
            dec_all = (decode_plain if reading == "new" else decode_ls)(idx_flat, idx_dt)
            dec = [dec_all[k] for k in order]
            P = ipairs[0][1]
            E = len(dec) // P
            assert vrows.shape[0] == P * E
            # slots past num_indices are skipped; apply order entry-major (I6)
            seq = [(p * E + e, dec[p * E + e] if e < num_indices else None) for e in range(E) for p in range(P)]
        else:
            dec_all = decode_ls(idx_flat, idx_dt)
            seq = [(j, dec_all[k]) for j, k in enumerate(order)]
        # IndirectSaveAccumulate's index values never mean -1 under rule 2 (only its tail slots are skipped)
        minus1 = kind == "save" or reading == "old"
        starts = rows_plan(reading, [v for _, v in seq], tpairs, S, toff, L, count, wrap, oob, minus1)
        src = np.stack([vrows[k] for k, _ in seq])
        plan[reading] = (seq, starts)
        return None, scatter(table0, starts, L, src, mop, dt)

    fault, expected = both(name, run, table0, disc)
    if check_serial:
        seq, starts = plan["new"]
        contrib = {}
        for (k, _), s in zip(seq, starts):
            if s is not None:
                contrib.setdefault(s, []).append(vrows[k])
        dups = [s for s, c in contrib.items() if len(c) > 1]
        assert dups, name
        wrong = table0.copy()
        for s in dups:
            where = s + np.arange(L)
            wrong[where] = one_sum(table0[where], contrib[s], dt)
        assert not np.array_equal(wrong, expected), f"{name}: serial rounding does not differ from one sum"
    if check_order:
        # the same slots applied in index (partition-major) order must give a different table
        seq, starts = plan["new"]
        alt = sorted(zip(seq, starts), key=lambda t: t[0][0])
        other = scatter(table0, [s for _, s in alt], L, np.stack([vrows[k] for (k, _), _ in alt]), mop, dt)
        assert not np.array_equal(other, expected), f"{name}: entry-major order not observable"
    g = Prog()
    g.dram_in("v", dt, vals_.reshape(1, -1))
    g.dram_in("idx", idx_dt, idx_flat.reshape(1, -1))
    g.out_prefilled("t", dt, table0.reshape(1, -1), expected)
    fields = {}
    if wrap is not None:
        fields["wrap"] = {"n": wrap[0], "hi": wrap[1]}
    ch = list(choices)
    if kind == "acc":
        fields.update(num_indices=num_indices, entry_step_elements=entry_step)
        if op_field:
            fields["op"] = op
        g.inst("IndirectSaveAccumulate", [ap("v", dt, vpairs), ap("idx", idx_dt, ipairs)], [ap("t", dt, tpairs, toff)],
               **fields)
        if ipairs[0][1] > 1 and len(order) // ipairs[0][1] > 1:
            ch.append("I6")
        opname = "IndirectSaveAccumulate"
    else:
        g.inst("IndirectSave", [ap("v", dt, vpairs), ap("idx", idx_dt, ipairs)], [ap("t", dt, tpairs, toff)], **fields)
        opname = "IndirectSave"
    if idx_dt in ("uint64", "int64"):
        ch.append("I1")
    if wrap is not None:
        ch.append("I3")
    if fault is not None and fault[0] == "out-of-bounds" or oob == "skip":
        ch.append("I2")
    if dt in ("float8e3", "float8e4") and mop == "add":
        ch.append("N7")
    case(name, g, f"{opname} {note} ({IS})", choices=ch, fault=fault, options=["oob=skip"] if oob == "skip" else ())
    return expected


# IndirectSave: every index dtype, duplicates -> last writer wins, -1 skip
V2, L2 = 12, 6
T0 = distinct(V2 * L2, "float32")
VV = (np.arange(8 * L2, dtype=F32) + 1000)
for idt in ("int32", "uint64", "int64"):
    scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 8], [1, L2]],
                 encode_ls([4, 0, 11, 4, -1 if idt != "int32" else 9, 7, 4, 0], idt), idt, op=None,
                 name=f"isave_{idt}_dups_last_wins", disc=False,
                 note=f"{idt} indices 4,0,11,4,{'-1' if idt != 'int32' else '9'},7,4,0: row 4 gets values row 6, row 0 gets row 7 (last writer wins)"
                      f"{'; -1 skipped' if idt != 'int32' else ''}")
scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 4], [1, L2]],
             np.array([TWO32 + 3, TWO32 - 1, TWO32 + 3, TWO32 + 11], np.uint64), "uint64", op=None, disc=False,
             name="isave_uint64_2p32m1_skips", note="uint64 2^32+3, 2^32-1 (skip), 2^32+3, 2^32+11")
scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 3], [1, L2]],
             np.array([3, -1, 5], np.int32), "int32", op=None, name="isave_int32_minus1_oob_fault", disc=False,
             note="int32 -1 = row 4294967295 -> fault, nothing written")
scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 3], [1, L2]],
             np.array([3, -1, 5], np.int32), "int32", op=None, oob="skip", name="isave_int32_minus1_oob_skip",
             disc=False, note="int32 -1 = row 4294967295 skipped under oob=skip")
scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 3], [1, L2]],
             np.array([TWO32 + 3, 7, TWO32 + 5], np.uint64), "uint64", op=None, name="isave_uint64_below_2p32_fault",
             disc=False, note="uint64 7 (< 2^32) is out of bounds after the rebase -> fault, nothing written")
scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 4], [1, L2]],
             np.array([1, 2, 3, 12], np.int32), "int32", op=None, name="isave_one_past_end_fault", disc=False,
             note="rows 1, 2, 3 fine, 12 (elements 72..77 of a 72-element location) out of bounds -> fault; rows 1..3 NOT written")
scatter_case("save", "bfloat16", distinct(V2 * L2, "bfloat16"), [[L2, 1], [L2, V2]], 0,
             distinct(8 * 5, "bfloat16")[::-1].copy(), [[1, 8], [8, 5]],
             np.array([0, 11, 3, 3, 6, 9, 0, 2], np.int32), "int32", op=None, name="isave_values_column_major_bfloat16",
             disc=False, note="bf16 values AP [[1,8],[8,5]] (row j = elements j, j+8, ...), L = 5 < S = 6; duplicates 3, 0")
scatter_case("save", "float32", T0, [[L2, 1], [L2, V2]], 0, VV, [[L2, 4], [1, L2]],
             np.array([0, 13, 26, 5], np.int32), "int32", op=None, wrap=(13, 1), name="isave_wrap_n13_hi1", disc=False,
             note="wrap n = 13, hi = 1: 13 -> 1, 26 -> 2, 5 -> 5")
scatter_case("save", "float32", T0, [[L2, 1], [L2, 9]], 4, VV, [[L2, 5], [1, L2]],
             np.array([8, 0, 9, 8, 11], np.int32), "int32", op=None, oob="skip", name="isave_offset_past_final_num",
             choices=["I4"], disc=True,
             note="table AP offset 4, final level [6, 9], oob=skip: 9 (elements 58..63) written although >= 9; "
                  "11 (70..75) leaves the 72-element location: skipped; 8 twice, the last wins")
scatter_case("save", "float32", T0, [[L2, 12], [1, L2]], 0, VV, [[L2, 4], [1, L2]],
             np.array([3, 5, 66, 0], np.int32), "int32", op=None, name="isave_table_final_step1_overlap",
             choices=["I4"], disc=True,
             note="table AP [[6,12],[1,6]] (final step 1: indices count elements): entries 3..8 and 5..10 overlap, the "
                  "later wins on 5..8; 66 is the last that fits (the old contract refused the AP)")
scatter_case("save", "float32", T0, [[L2, 12], [1, L2]], 0, VV, [[L2, 2], [1, L2]],
             np.array([3, 67], np.int32), "int32", op=None, name="isave_table_final_step1_leaves_location_fault",
             choices=["I4"], disc=True, note="table AP [[6,12],[1,6]]: index 67 covers elements 67..72 of 72 -> fault")
scatter_case("save", "int8", distinct(V2 * L2, "int8"), [[L2, 1], [L2, V2]], 0, vals((6 * L2,), "int8"),
             [[L2, 6], [1, L2]], np.array([5, 5, 5, 1, 2, 5], np.int32), "int32", op=None, disc=False,
             name="isave_int8_copy_any_dtype", note="int8 (a copy works for any dtype): row 5 written 4 times, the last wins")


# IndirectSaveAccumulate
# duplicates with serial rounding in every float dtype: dst0 near 1, many small contributions
def dup_add(dt, tag, n_dup, small, base=1.0, P=1, extra=None):
    L3, V3 = 4, 6
    t0 = narrow(np.full(V3 * L3, base, F32) + np.arange(V3 * L3, dtype=F32) * 0, dt)
    E = n_dup
    v = np.full((P * E, L3), small, F32)
    v[:, 1] *= 3
    v[:, 2] = -small * 1.5
    v[:, 3] = RNG.standard_normal(P * E) * small * 4
    v = narrow(v, dt)
    rows = [2] * (P * E)
    if extra is not None:
        rows[-1] = extra
    scatter_case("acc", dt, t0, [[L3, 1], [L3, V3]], 0, v, [[L3, P * E], [1, L3]], encode_plain(rows, "int32"), "int32",
                 ipairs=[[E, P], [1, E]], num_indices=E, entry_step=L3, name=f"isacc_dup_serial_{dt}{tag}", disc=False,
                 note=f"{dt}: {P * E} contributions of about {small} into row 2 (= {base}): rounding to {dt} after every add "
                      f"keeps what one fp32 sum + one rounding would not (asserted in make_cases.py)", check_serial=True)


dup_add("float32", "", 8, 2.0 ** -24)
dup_add("bfloat16", "", 8, 2.0 ** -8)
dup_add("float16", "", 8, 2.0 ** -11)
dup_add("float8e5", "", 6, 0.125)
dup_add("float8e4", "", 6, 0.0625)
dup_add("float8e3", "", 6, 0.03125)
dup_add("bfloat16", "_4partitions", 4, 2.0 ** -8, P=4, extra=5)
# random duplicates with all rounding visible, larger; plain uint64 rows (rule 2); the last 2 slots of each
# partition are past num_indices and hold garbage (2^32 + r, 2^64 - 1) that is never checked
for dt in ("float32", "bfloat16", "float16", "float8e5", "float8e4"):
    P, E, L3, V3 = 4, 16, 16, 8
    t0 = vals((V3 * L3,), dt)
    v = vals((P * E * L3,), dt)
    rows = [int(r) for r in RNG.integers(0, V3, P * E)]
    for p in range(P):
        rows[p * E + E - 2] = TWO32 + rows[p * E]
        rows[p * E + E - 1] = U64
    scatter_case("acc", dt, t0, [[L3, 1], [L3, V3]], 0, v, [[L3, P * E], [1, L3]], encode_plain(rows, "uint64"), "uint64",
                 ipairs=[[E, P], [1, E]], num_indices=E - 2, entry_step=L3, name=f"isacc_random_dups_{dt}", disc=True,
                 note=f"{dt}: 4 partitions x 14 random plain uint64 rows of 8 (many collisions; rule 2: the value is the row), "
                      f"2 garbage tail slots per partition past num_indices; applied entry-major; serial rounding differs "
                      f"from one sum and from index order (asserted)", check_serial=True, check_order=True)
# entry-major order observable with copy (bypass): last writer in entry-major order
P, E, L3, V3 = 3, 2, 4, 5
t0 = distinct(V3 * L3, "float32")
v = (np.arange(P * E * L3, dtype=F32) + 500)
scatter_case("acc", "float32", t0, [[L3, 1], [L3, V3]], 0, v, [[L3, P * E], [1, L3]],
             encode_plain([1, 3, 1, 4, 3, 2], "int32"), "int32", ipairs=[[E, P], [1, E]], op="bypass", num_indices=E,
             entry_step=L3, name="isacc_bypass_entry_major_last_wins", check_order=True, disc=False,
             note="op bypass: slots (p,e) p=0..2, e=0..1 rows [[1,3],[1,4],[3,2]]: apply order (0,0),(1,0),(2,0),(0,1),(1,1),(2,1) "
                  "so row 3 ends as slot (0,1) = values row 1 (index order would leave values row 4 there) (I6)")
# fp32 in-order vs entry-major with adds: observable (asserted)
P, E, L3, V3 = 4, 4, 8, 3
t0 = vals((V3 * L3,), "float32")
v = (RNG.standard_normal(P * E * L3) * np.repeat(10.0 ** RNG.integers(-3, 4, P * E), L3)).astype(F32)
scatter_case("acc", "float32", t0, [[L3, 1], [L3, V3]], 0, v, [[L3, P * E], [1, L3]],
             encode_plain(RNG.integers(0, V3, P * E), "int32"), "int32", ipairs=[[E, P], [1, E]], num_indices=E,
             entry_step=L3, name="isacc_float32_entry_major_order", check_order=True, check_serial=True, disc=False,
             note="fp32 contributions of mixed magnitudes (1e-3 .. 1e3), 4 partitions x 4: entry-major order gives a different fp32 result than index order (asserted)")
# index dtypes (rule 2: 64-bit values are rows as-is)
for idt in ("int32", "uint64", "int64"):
    P, E, L3, V3 = 2, 4, 4, 6
    t0 = vals((V3 * L3,), "float32")
    v = vals((P * E * L3,), "float32")
    scatter_case("acc", "float32", t0, [[L3, 1], [L3, V3]], 0, v, [[L3, P * E], [1, L3]],
                 encode_plain([5, 4, 0, 5, 2, 2, 1, 0], idt), idt, ipairs=[[E, P], [1, E]], num_indices=E,
                 entry_step=L3, name=f"isacc_{idt}_indices", disc=idt != "int32",
                 note=f"{idt} indices 5,4,0,5 | 2,2,1,0 stored as plain values, fp32 add"
                      + (" (rule 2: the -2^32 of seed §6.2 is on the table base, so a 64-bit index is its row as-is; "
                         "the old contract rebased it to row 5 - 2^32: out of bounds)" if idt != "int32" else ""))
scatter_case("acc", "float32", vals((24,), "float32"), [[4, 1], [4, 6]], 0, vals((12,), "float32"), [[4, 3], [1, 4]],
             np.array([2, -1, 3], np.int32), "int32", ipairs=[[3, 1], [1, 3]], num_indices=3, entry_step=4, disc=False,
             name="isacc_int32_minus1_oob_fault", note="int32 -1 is row 4294967295: out of bounds -> fault, nothing added")
for oob in ("fault", "skip"):
    scatter_case("acc", "float32", vals((24,), "float32"), [[4, 1], [4, 6]], 0, vals((12,), "float32"),
                 [[4, 3], [1, 4]], np.array([TWO32 + 2, TWO32 - 1, TWO32 + 3], np.uint64), "uint64",
                 ipairs=[[3, 1], [1, 3]], num_indices=3, entry_step=4, oob=oob, disc=True,
                 name=f"isacc_uint64_no_rebase_{oob}",
                 note="uint64 2^32+2, 2^32-1, 2^32+3 are rows 4294967298, 4294967295, 4294967299 (rule 2): all out of "
                      "bounds, 2^32-1 is no skip -> " + ("fault, nothing added" if oob == "fault" else
                                                         "all skipped under oob=skip, table unchanged")
                      + " (the old contract rebased them to rows 2, -1 = skip, 3)")
for oob in ("fault", "skip"):
    scatter_case("acc", "float32", vals((24,), "float32"), [[4, 1], [4, 6]], 0, vals((12,), "float32"),
                 [[4, 3], [1, 4]], np.array([1, -1, 2], np.int64), "int64", ipairs=[[3, 1], [1, 3]], num_indices=3,
                 entry_step=4, oob=oob, disc=oob == "skip", name=f"isacc_int64_minus1_is_a_row_{oob}",
                 note="int64 1, -1, 2: a stored -1 is row 2^64 - 1 (rule 2), out of bounds, not a skip -> "
                      + ("fault, nothing added" if oob == "fault" else "skipped under oob=skip; rows 1 and 2 added"))
scatter_case("acc", "bfloat16", vals((24,), "bfloat16"), [[4, 1], [4, 6]], 0, vals((16,), "bfloat16"), [[4, 4], [1, 4]],
             np.array([1, 2, 6, 1], np.int32), "int32", ipairs=[[4, 1], [1, 4]], num_indices=4, entry_step=4, disc=False,
             name="isacc_one_past_end_fault", note="bf16: rows 1, 2 fine, 6 (elements 24..27 of 24) out of bounds -> fault; rows 1, 2 NOT added")
# num_indices tails: slots e >= num_indices skipped even when their index is garbage / out of bounds
for P, E, ni in [(2, 4, 1), (2, 4, 3), (4, 3, 2), (3, 5, 5), (2, 4, 0)]:
    L3, V3 = 4, 6
    t0 = vals((V3 * L3,), "bfloat16")
    v = vals((P * E * L3,), "bfloat16")
    rows = RNG.integers(0, V3, P * E)
    for p in range(P):
        for e in range(ni, E):
            rows[p * E + e] = 1000 + p  # out of bounds, never read
    rows[0] = rows[E] if ni > 0 else rows[0]
    scatter_case("acc", "bfloat16", t0, [[L3, 1], [L3, V3]], 0, v, [[L3, P * E], [1, L3]], encode_plain(rows, "int32"),
                 "int32", ipairs=[[E, P], [1, E]], num_indices=ni, entry_step=L3, name=f"isacc_tail_P{P}_E{E}_n{ni}",
                 disc=False, note=f"bf16, {P} partitions x {E} slots, num_indices {ni}: slots e >= {ni} are skipped (their "
                                  f"out-of-bounds garbage is never checked), the rest added entry-major")
# entry_step_elements different from the entry length, table offset, values strided
P, E, L3 = 2, 3, 3
t0 = vals((40,), "float32")
v = vals((P * E * 5,), "float32")
scatter_case("acc", "float32", t0, [[5, 1], [5, 7]], 2, v, [[5, P * E], [2, L3]],
             encode_plain([6, 0, 6, 3, 3, 1], "int32"), "int32", ipairs=[[E, P], [1, E]], num_indices=E, entry_step=5,
             name="isacc_entry_step_offset_strided_values", choices=["I4"], disc=False,
             note="table offset 2, entry_step_elements 5, entry L = 3 (values final level [2, 3], strided): "
                  "entry r = elements 2 + 5r .. 2 + 5r + 2")
scatter_case("acc", "float32", vals((40,), "float32"), [[5, 1], [5, 7]], 2, vals((12,), "float32"), [[3, 4], [1, 3]],
             encode_plain([6, 7, 0, 1], "int32"), "int32", ipairs=[[4, 1], [1, 4]], num_indices=4, entry_step=5,
             name="isacc_past_final_num_runs", choices=["I4"], disc=True,
             note="table AP offset 2, final level [5, 7] on 40 elements: 7 (elements 37..39) is >= the final num but "
                  "inside the location -> added (the old bound r < 7 faulted)")
scatter_case("acc", "float32", vals((40,), "float32"), [[4, 1], [4, 10]], 0, vals((12,), "float32"), [[4, 3], [1, 4]],
             encode_plain([9, 0, 1], "int32"), "int32", ipairs=[[3, 1], [1, 3]], num_indices=3, entry_step=5,
             name="isacc_entry_leaves_location_fault", disc=False,
             note="entry_step_elements 5 on a 40-element table: row 9 spans elements 45..48 -> out of bounds naming ins[1]")
scatter_case("acc", "float32", vals((24,), "float32"), [[4, 3], [7, 2]], 0, vals((12,), "float32"), [[4, 3], [1, 4]],
             encode_plain([5, 0, 5], "int32"), "int32", ipairs=[[3, 1], [1, 3]], num_indices=3, entry_step=4,
             name="isacc_table_ap_any_shape", choices=["I4"], disc=True,
             note="table AP [[4,3],[7,2]] (outer num 3, final [7, 2]): ignored but for its offset; S = entry_step_elements 4, "
                  "row 5 = elements 20..23 (the old contract refused the AP)")
# int32 / int64 add wraps
t0 = np.array([2 ** 31 - 3, -2 ** 31 + 1, 100, -5] * 3, np.int32)
v = np.array([2, 5, -2 ** 31, 7, 1, -3, 2 ** 31 - 1, -2 ** 31], np.int32)
scatter_case("acc", "int32", t0, [[4, 1], [4, 3]], 0, v, [[4, 2], [1, 4]], encode_plain([1, 1], "int32"), "int32",
             ipairs=[[2, 1], [1, 2]], num_indices=2, entry_step=4, name="isacc_int32_add_wraps", disc=False,
             note="int32 add wraps: 2^31-3 + 2 + 1 wraps to INT_MIN; -2^31+1 + 5 - 3; 100 - 2^31 + 2^31-1 = 99; -5 + 7 - 2^31")
t0 = np.array([2 ** 63 - 1, -2 ** 63, 5, 0], np.int64)
v = np.array([1, -1, -6, 2 ** 62, 2, 3, 4, 2 ** 62], np.int64)
scatter_case("acc", "int64", t0, [[4, 1], [4, 1]], 0, v, [[4, 2], [1, 4]], encode_plain([0, 0], "uint64"), "uint64",
             ipairs=[[2, 1], [1, 2]], num_indices=2, entry_step=4, name="isacc_int64_add_wraps", disc=True,
             note="int64 add wraps: INT64_MAX + 1 + 2 wraps to INT64_MIN + 2; INT64_MIN - 1 wraps (uint64 index 0 = row 0, rule 2)")
# non-reducible dtypes under add -> numerics fault
for dt in ("uint8", "int8", "int16", "uint32", "float8_e4m3fn", "float32r"):
    t0 = distinct(12, dt)
    v = distinct(8, dt)
    scatter_case("acc", dt, t0, [[4, 1], [4, 3]], 0, v, [[4, 2], [1, 4]], encode_plain([1, 2], "int32"), "int32",
                 ipairs=[[2, 1], [1, 2]], num_indices=2, entry_step=4, name=f"isacc_add_{dt}_numerics_fault", disc=False,
                 note=f"add into a {dt} table: not a reducible dtype -> fault numerics, nothing written (re-facts §8)")
scatter_case("acc", "uint8", distinct(12, "uint8"), [[4, 1], [4, 3]], 0, distinct(8, "uint8"), [[4, 2], [1, 4]],
             encode_plain([1, 1], "int32"), "int32", ipairs=[[2, 1], [1, 2]], op="bypass", num_indices=2, entry_step=4,
             name="isacc_bypass_uint8_copies", disc=False, note="op bypass on uint8: a copy, fine for any dtype; last writer wins")
scatter_case("acc", "float32", vals((24,), "float32"), [[4, 1], [4, 6]], 0, vals((16,), "float32"), [[4, 4], [1, 4]],
             encode_plain([1, 1, 5, 2], "int32"), "int32", ipairs=[[4, 1], [1, 4]], num_indices=4, entry_step=4,
             op_field=False, name="isacc_op_absent_is_add", disc=False, note="no op field: add (docs/bir-json.md op? default add)")
scatter_case("acc", "float32", vals((24,), "float32"), [[4, 1], [4, 6]], 0, vals((16,), "float32"), [[4, 4], [1, 4]],
             encode_plain([1, 9, 13, 2], "int32"), "int32", ipairs=[[4, 1], [1, 4]], num_indices=4, entry_step=4,
             wrap=(6, 0), name="isacc_wrap_modulo6", disc=False,
             note="wrap n = 6, hi = 0: 9 -> 3, 13 -> 1 (accumulates twice into row 1)")
# large: 4096 x 128 bf16 table, 1024 Zipf ids as plain int64 (rule 2), entry-major over 128 partitions x 8
BV, BL, BP, BE = 4096, 128, 128, 8
bt0 = vals((BV * BL,), "bfloat16")
bv = vals((BP * BE * BL,), "bfloat16")
zipf = (RNG.zipf(1.3, BP * BE) - 1) % BV
scatter_case("acc", "bfloat16", bt0, [[BL, 1], [BL, BV]], 0, bv, [[BL, BP * BE], [1, BL]], encode_plain(zipf, "int64"),
             "int64", ipairs=[[BE, BP], [1, BE]], num_indices=BE, entry_step=BL, name="isacc_big_4096x128_bfloat16_zipf",
             check_serial=True, check_order=True, disc=True,
             note="4096 x 128 bf16 table, 1024 Zipf(1.3) plain int64 ids (rule 2) over 128 partitions x 8, serial bf16 rounding, entry-major")


# ---------------------------------------------------------------- 3. GenericIndirectLoad / Save
GI = "seed 000 §6.2 coef_d = product of the inboard nums, §6.3 -1 tested on the final offset, one memcpy per entry; rule 4"
RNG = np.random.default_rng(20261213)  # each section has its own stream
# rule 4 (re-facts §3 IndirectDim W 0, Z 1, Y 2, X 3 = the AP level): on 5 levels level 4 has no letter
NEW_LETTERS = {n: ["W", "Z", "Y", "X", None][:n] for n in range(1, 6)}
# the old contract counted X from the innermost level (docs/bir-json.md "Dim letters" before rule 4)
OLD_LETTERS = {1: ["W"], 2: ["W", "X"], 3: ["W", "Y", "X"], 4: ["W", "Z", "Y", "X"], 5: ["W", None, "Z", "Y", "X"]}


def prod(xs):
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


def generic(kind, dt, tab0, tpairs, toff, dims, idx_rows, idx_dt="int32", other=None, op="bypass", oob="fault",
            wrap=None, name=None, note="", choices=(), tab_sb=None, check_serial=False, op_field=True, disc=None):
    """GenericIndirectLoad (kind 'load') / GenericIndirectSave (kind 'save').
    idx_rows: one list of DECODED index values per dim (python ints; -1 or any 64-bit value), stored with
    §6.1's encoding for idx_dt."""
    tab0 = np.asarray(tab0).reshape(-1)
    count = tab0.size
    assert_ap_inside(tpairs, toff, count)
    n = len(tpairs)
    nums = [p[1] for p in tpairs]
    lv = [NEW_LETTERS[n].index(d) for d in dims]
    L = prod([nums[l] for l in range(n) if l not in lv])
    K = len(idx_rows[0])
    dec = [decode_ls(encode_ls(r, idx_dt), idx_dt) for r in idx_rows]
    operand = "ins[1]" if len(dims) == 1 else ""  # which operand a combined offset names is not pinned
    plans = {}

    def plan(reading):
        starts = []
        if reading == "new":
            coef = [prod(nums[d + 1:]) for d in lv]
            for j in range(K):
                o = sum(c * dec[k][j] for k, c in enumerate(coef)) % TWO64  # 64-bit wrapping
                if o == SKIP:  # the combined offset is -1
                    starts.append(None)
                    continue
                w = apply_wrap(o, wrap)
                if w is None or not inside(toff + w, L, count):
                    if oob == "fault":
                        raise OOB(operand)
                    starts.append(None)
                    continue
                starts.append(toff + w + np.arange(L))  # one contiguous run
        else:
            if any(d not in OLD_LETTERS[n] for d in dims):
                raise Invalid()  # a padded letter
            olv = [OLD_LETTERS[n].index(d) for d in dims]
            direct = [tpairs[l] for l in range(n) if l not in olv]
            eoff = ap_index(direct).reshape(-1) if direct else np.zeros(1, np.int64)
            if eoff.size != L:
                raise Invalid()  # the dense side's count
            coef = [prod(nums[d + 1:]) for d in olv]
            for j in range(K):
                vs = [dec[k][j] for k in range(len(dims))]
                if any(v == SKIP for v in vs):
                    starts.append(None)
                    continue
                bad = [k for k, v in enumerate(vs) if v >= nums[olv[k]]]
                w = apply_wrap(sum(c * v for c, v in zip(coef, vs)), wrap)
                if bad or w is None or not (toff + w + eoff.max() < count):
                    if oob == "fault":
                        raise OOB(f"ins[{bad[0] + 1}]" if bad else "")
                    starts.append(None)
                    continue
                starts.append(toff + w + eoff)  # the other levels walked with their own steps
        plans[reading] = starts
        return starts

    g = Prog()
    ch = list(choices)
    if any(v != SKIP and v >= nums[lv[k]] for k, r in enumerate(dec) for v in r):
        ch.append("I7")  # an index >= its level's num: no per-dim bound any more
    coef_new = [prod(nums[d + 1:]) for d in lv]
    if any(SKIP in r for r in dec) or any(sum(c * dec[k][j] for k, c in enumerate(coef_new)) % TWO64 == SKIP
                                          for j in range(K)):
        ch.append("I8")  # a -1 in a dim or a combined offset of -1
    if kind == "load":
        dst0 = distinct(K * L, dt)[::-1].copy() if other is None else other

        def run(reading):
            expected = dst0.copy()
            for j, s in enumerate(plan(reading)):
                if s is not None:
                    expected[j * L:(j + 1) * L] = tab0[s]
            return None, expected

        fault, expected = both(name, run, dst0, disc)
        g.dram_in("tab", dt, tab0.reshape(1, -1))
        tname = "tab"
        if tab_sb is not None:
            tname = "tab_t"
            g.sb(tname, dt, tab_sb, tab0.size // tab_sb)
            g.inst("Load", [tile("tab", dt, tab_sb, tab0.size // tab_sb)], [tile(tname, dt, tab_sb, tab0.size // tab_sb)])
        for k in range(len(dims)):
            g.dram_in(f"idx{k}", idx_dt, encode_ls(idx_rows[k], idx_dt).reshape(1, -1))
        g.out_prefilled("y", dt, dst0.reshape(1, -1), expected)
        ins = [ap(tname, dt, tpairs, toff)] + [ap(f"idx{k}", idx_dt, [[K, 1], [1, K]]) for k in range(len(dims))]
        fields = {"indirect_dims": list(dims)}
        if wrap is not None:
            fields["wrap"] = {"n": wrap[0], "hi": wrap[1]}
        g.inst("GenericIndirectLoad", ins, [ap("y", dt, [[L, K], [1, L]])], **fields)
        opname = "GenericIndirectLoad"
        eff_op = None
    else:
        vals_ = other
        assert vals_.size == K * L, name

        def run(reading):
            # rule 4: op absent = add (the old contract: bypass)
            mop = op if op_field else ("add" if reading == "new" else "bypass")
            expected = tab0.copy()
            for j, s in enumerate(plan(reading)):
                if s is None:
                    continue
                src = vals_[j * L:(j + 1) * L]
                expected[s] = src if mop == "bypass" else acc_add(expected[s], src, dt)
            return None, expected

        fault, expected = both(name, run, tab0, disc)
        eff_op = op if op_field else "add"
        if check_serial:
            contrib = {}
            for j, s in enumerate(plans["new"]):
                if s is not None:
                    contrib.setdefault(int(s[0]), []).append(vals_[j * L:(j + 1) * L])
            wrong = tab0.copy()
            for s, c in contrib.items():
                wrong[s + np.arange(L)] = one_sum(tab0[s + np.arange(L)], c, dt)
            assert not np.array_equal(wrong, expected), name
        g.dram_in("v", dt, vals_.reshape(1, -1))
        for k in range(len(dims)):
            g.dram_in(f"idx{k}", idx_dt, encode_ls(idx_rows[k], idx_dt).reshape(1, -1))
        g.out_prefilled("t", dt, tab0.reshape(1, -1), expected)
        ins = [ap("v", dt, [[L, K], [1, L]])] + [ap(f"idx{k}", idx_dt, [[K, 1], [1, K]]) for k in range(len(dims))]
        fields = {"indirect_dims": list(dims)}
        if op_field:
            fields["op"] = op
        if wrap is not None:
            fields["wrap"] = {"n": wrap[0], "hi": wrap[1]}
        g.inst("GenericIndirectSave", ins, [ap("t", dt, tpairs, toff)], **fields)
        opname = "GenericIndirectSave"
    if idx_dt in ("uint64", "int64"):
        ch.append("I1")
    if wrap is not None:
        ch.append("I3")
    if fault is not None and fault[0] == "out-of-bounds" or oob == "skip":
        ch.append("I2")
    if dt in ("float8e3", "float8e4") and eff_op == "add":
        ch.append("N7")
    case(name, g, f"{opname} {note} ({GI})", choices=ch, fault=fault, options=["oob=skip"] if oob == "skip" else ())


def dense(nums):
    steps = [prod(nums[l + 1:]) for l in range(len(nums))]
    return [[s, n] for s, n in zip(steps, nums)]


def rand_idx(nums, lv, K):
    return [list(RNG.integers(0, nums[l], K)) for l in lv]


# every combination of indirect dims on 2-, 3- and 4-level tables (letters = levels: W Z | W Z Y | W Z Y X)
for nums in ([5, 6], [3, 4, 5], [2, 3, 4, 5]):
    n = len(nums)
    tp = dense(nums)
    tab0 = distinct(prod(nums), "float32")
    letters = NEW_LETTERS[n]
    for r in range(1, n + 1):
        for combo in combinations(range(n), r):
            dims = [letters[l] for l in combo]
            K = 5
            idx = rand_idx(nums, combo, K)
            tag = "".join(dims)
            prefix = combo == tuple(range(r))
            # an outer prefix of the levels reads the same run under the old walk (when its letters existed)
            generic("load", "float32", tab0, tp, 0, dims, idx, name=f"giload_{n}level_{tag}",
                    disc=None if prefix else True,
                    note=f"table {nums} (dense), indirect dims {dims} (levels {list(combo)}): O = sum coef_d idx_d, "
                         f"entry = the {prod([nums[l] for l in range(n) if l not in combo])} contiguous elements from O"
                         f"{' (1-element entries)' if r == n else ''}")
# 5 levels: W Z Y X name levels 0..3; level 4 has no letter
generic("load", "float32", distinct(48, "float32"), dense([2, 2, 3, 2, 2]), 0, ["Z", "X"],
        [[1, 0, 1, 1], [1, 1, 0, 0]], name="giload_5level_ZX", disc=True,
        note="5-level table [2,2,3,2,2]: Z = level 1 (coef 12), X = level 3 (coef 2); entry = 2*3*2 = 12 contiguous "
             "elements from 12z + 2x (the old contract read Z as level 2, X as level 4)")
generic("load", "float32", distinct(48, "float32"), dense([2, 2, 3, 2, 2]), 0, ["W", "Y"],
        [[1, 0, 1, 0], [2, 1, 0, 2]], name="giload_5level_WY", disc=True,
        note="5-level table [2,2,3,2,2]: W = level 0 (coef 24), Y = level 2 (coef 4); entry = 2*2*2 = 8 contiguous "
             "elements from 24w + 4y")
# dims given out of level order; uint64 / int64 indices
generic("load", "float32", distinct(60, "float32"), dense([3, 4, 5]), 0, ["Y", "W"],
        [[4, 0, 2, 1], [2, 1, 0, 2]], name="giload_3level_YW_order", disc=True,
        note="indirect_dims [Y, W] (not level order) on [3,4,5]: idx0 drives Y (level 2, coef 1), idx1 W (coef 20); "
             "entry = 4 contiguous elements")
for idt in ("uint64", "int64"):
    generic("load", "float32", distinct(120, "float32"), dense([2, 3, 4, 5]), 0, ["Z", "X"],
            [[2, 0, 1, 0, 2], [4, 4, 0, 1, 3]], idx_dt=idt, name=f"giload_4level_ZX_{idt}", disc=True,
            note=f"{idt} indices (stored 2^32 + v), dims [Z, X] on [2,3,4,5]: O = 20z + x, entry = 8 contiguous elements")
# -1 is tested on the combined offset (rule 4)
generic("load", "float32", distinct(30, "float32"), dense([5, 6]), 0, ["W", "Z"], [[1, -1, 2], [3, 2, 0]],
        idx_dt="int64", name="giload_minus1_one_dim_is_oob_fault", disc=True,
        note="dims [W, Z] on [5,6], int64: entry 1 has W = -1 (stored 2^32 - 1) and Z = 2: O = -6 + 2 = -4, not -1 -> "
             "no skip but out of bounds -> fault, nothing written (the old contract skipped it)")
generic("load", "float32", distinct(30, "float32"), dense([5, 6]), 0, ["W", "Z"],
        [[1, 2, 4, 0], [TWO64 - 7, 1, 5, 4]], idx_dt="int64", name="giload_minus1_sum_skips", disc=True,
        note="dims [W, Z] on [5,6], int64: entry 0 has W = 1, Z = 2^64 - 7 (neither is -1): O = 6 - 7 = -1 -> skipped "
             "(the old contract faulted on Z >= 6)")
generic("load", "float32", distinct(120, "float32"), dense([2, 3, 4, 5]), 0, ["W", "Z", "Y", "X"],
        [[0, 1, 0], [0, 2, 1], [0, 3, 2], [-1, 4, 3]], idx_dt="uint64", name="giload_minus1_innermost_zero_sum_skips",
        disc=False, note="dims [W, Z, Y, X] on [2,3,4,5] (1-element entries), uint64: entry 0 has W = Z = Y = 0, X = -1: "
                         "O = -1 -> skipped (as under the old contract)")
generic("load", "float32", distinct(30, "float32"), dense([5, 6]), 0, ["W", "Z"], [[1, 0, 4], [-1, 3, 5]],
        idx_dt="int64", name="giload_minus1_one_dim_wraps_into_range", disc=True,
        note="dims [W, Z] on [5,6], int64: entry 0 has W = 1, Z = -1: O = 6 - 1 = 5 in 64-bit wrapping arithmetic -> "
             "element 5 is read (the old contract skipped it)")
generic("load", "bfloat16", distinct(120, "bfloat16"), dense([2, 3, 4, 5]), 0, ["W", "Y"],
        [[1, -1, 0, 1, 0], [3, 0, 3, 2, -1]], idx_dt="int64", oob="skip", name="giload_4level_WY_minus1_bfloat16_skip",
        disc=True, note="bf16, dims [W, Y] on [2,3,4,5] (coef 60, 5; entry = 15 contiguous), int64, oob=skip: "
                        "W = -1 gives O = -60 (out of bounds, skipped), Y = -1 gives O = -5 (skipped); the rest read")
# direct levels are not walked: one contiguous run (seed §6.3 memcpy of entrySize bytes)
generic("load", "float32", distinct(64, "float32"), [[16, 4], [2, 5]], 0, ["W"], [[0, 3, 1, 2]],
        name="giload_direct_level_strided_reads_run", disc=True,
        note="table AP [[16,4],[2,5]], dim W: coef_W = 5 (the num of level 1, not the step 16); entry = the 5 "
             "contiguous elements 5v .. 5v+4 (the old contract walked step 2: 5v + 2i)")
generic("load", "float32", distinct(8 * 12, "float32"), [[12, 8], [1, 6]], 0, ["W"], [[0, 1, 7, 3]], tab_sb=8,
        name="giload_sb_partition_pitch_not_dense", disc=False,
        note="SB table 8 partitions x 12 (pitch 12), AP [[12,8],[1,6]], dim W: O = 6v (coef from nums, the seed's formula "
             "indexes as if dense), so v = 1 reads partition 0 elements 6..11")
generic("load", "float32", distinct(200, "float32"), [[40, 2], [8, 3], [1, 4]], 7, ["Z"], [[2, 0, 1, 5]],
        name="giload_table_offset_padded", disc=True,
        note="table offset 7, AP [[40,2],[8,3],[1,4]], dim Z (level 1): coef_Z = 4, L = 2*4 = 8: entry = elements "
             "7 + 4v .. 7 + 4v + 7 (v = 5 >= 3 is inside the location)")
# the bound is the location only (no per-dim bound)
generic("load", "float32", distinct(60, "float32"), dense([3, 4, 5]), 0, ["Y"], [[5, 9, 48, 0]],
        name="giload_dim_past_num_in_location", disc=True,
        note="dim Y (level 2, num 5, coef 1) on [3,4,5], L = 12: Y = 5, 9, 48 are >= 5 but their runs end inside the "
             "60-element location -> read (the old per-dim bound faulted)")
generic("load", "float32", distinct(60, "float32"), dense([3, 4, 5]), 0, ["W", "Y"], [[1, 2, 2], [4, 16, 17]],
        name="giload_oob_location_fault", disc=True,
        note="dims [W, Y] on [3,4,5] (coef 20, 1; L = 4): entry 1 O = 56 (Y = 16 >= 5, run 56..59 inside), entry 2 "
             "O = 57 runs to element 60 of 60 -> out of bounds, fault, nothing written")
generic("load", "float32", distinct(60, "float32"), dense([3, 4, 5]), 0, ["Y"], [[1, 5, 49, 48, 1000]], oob="skip",
        name="giload_oob_location_skip", disc=True,
        note="dim Y on [3,4,5] (L = 12), oob=skip: 5 and 48 read (inside the location), 49 (49..60) and 1000 skipped")
generic("load", "float32", distinct(30, "float32"), dense([5, 6]), 0, ["W", "Z"], [[4, 2, 0, 4, 1], [5, 3, 1, 4, 0]],
        wrap=(7, 4), name="giload_wrap_combined_offset", disc=True,
        note="dims [W, Z] on [5,6], wrap n 7 hi 4 on the combined O = 6w + z: 29 -> 17, 15 -> 9, 1 -> 1, 28 -> 16, 6 -> 4")
generic("load", "float32", distinct(30, "float32"), dense([5, 6]), 0, ["W", "Z"], [[4, 2, 3], [5, 3, 1]],
        wrap=(7, 8), oob="skip", name="giload_wrap_leaves_location_skip", disc=True,
        note="dims [W, Z] on [5,6], wrap n 7 hi 8: O 29 -> 33, 15 -> 17, 19 -> 21: 33 leaves the 30-element table, skipped under oob=skip")
# GenericIndirectSave: bypass and add, duplicates, every dtype family
for nums, dims in (([5, 6], ["W"]), ([3, 4, 5], ["Z"]), ([2, 3, 4, 5], ["W", "Y"]), ([2, 3, 4, 5], ["Z", "Y", "X"]),
                   ([3, 4, 5], ["W", "Z", "Y"]), ([5, 6], ["Z"])):
    tp = dense(nums)
    lv = [NEW_LETTERS[len(nums)].index(d) for d in dims]
    K = 6
    idx = rand_idx(nums, lv, K)
    for k in range(len(dims)):
        idx[k][4] = idx[k][1]  # a duplicate entry
    L = prod([nums[l] for l in range(len(nums)) if l not in lv])
    tag = "".join(dims)
    generic("save", "float32", distinct(prod(nums), "float32"), tp, 0, dims, idx,
            other=(np.arange(K * L, dtype=F32) + 900), op="bypass", name=f"gisave_{len(nums)}level_{tag}_bypass",
            note=f"table {nums}, dims {dims}, op bypass: entries of {L} contiguous elements; entry 4 repeats entry 1, last writer wins")
    generic("save", "float32", vals((prod(nums),), "float32"), tp, 0, dims, idx,
            other=vals((K * L,), "float32"), op="add", name=f"gisave_{len(nums)}level_{tag}_add",
            note=f"table {nums}, dims {dims}, op add in fp32, entry 4 accumulates onto entry 1's result")
for dt, small in (("bfloat16", 2.0 ** -8), ("float16", 2.0 ** -11), ("float8e5", 0.125), ("float8e4", 0.0625),
                  ("float32", 2.0 ** -24)):
    K, L = 8, 3
    t0 = narrow(np.ones(4 * 3 * L, F32), dt)
    v = narrow(np.tile(np.array([small, 3 * small, -1.5 * small], F32), K), dt)
    generic("save", dt, t0, dense([4, 3, L]), 0, ["W", "Z"], [[2] * K, [1] * K], other=v, op="add",
            check_serial=True, name=f"gisave_dup_serial_{dt}",
            note=f"{dt}: dims [W, Z] on [4,3,3], 8 adds of ~{small} into one entry of ones: per-step rounding differs from one sum (asserted)")
generic("save", "int32", np.array([2 ** 31 - 2, 5, -2 ** 31] * 4, np.int32), dense([4, 3]), 0, ["W"], [[1, 1, 3]],
        other=np.array([1, 1, -1, 2, 0, 0, 5, 5, 5], np.int32), op="add", name="gisave_int32_add_wraps", disc=False,
        note="int32 add wraps: 2^31-2 + 1 + 2 wraps to INT_MIN + 1; -2^31 - 1 wraps to INT_MAX")
generic("save", "float32", vals((12,), "float32"), dense([4, 3]), 0, ["W"], [[1, 2, 1]],
        other=vals((9,), "float32"), op="add", op_field=False, name="gisave_op_absent_is_add", disc=True,
        note="no op field: add (rule 4: the schema's op? (add); re-facts §6: a non-unique-index accumulate DMA becomes "
             "GenericIndirectSave with op add): row 1 accumulates twice (the old contract copied)")
generic("save", "uint16", distinct(12, "uint16"), dense([4, 3]), 0, ["W"], [[1, 2]],
        other=distinct(6, "uint16"), op="add", name="gisave_add_uint16_numerics_fault", disc=False,
        note="op add on a uint16 table: not reducible -> fault numerics, nothing written")
generic("save", "float32", distinct(60, "float32"), dense([3, 4, 5]), 0, ["W", "Z"], [[2, 0, 2], [3, 1, 4]],
        other=np.arange(15, dtype=F32), op="bypass", name="gisave_oob_fault", disc=True,
        note="dims [W, Z] on [3,4,5] (coef 20, 5; L = 5): entry 2 O = 40 + 20 = 60 -> elements 60..64 of 60: out of bounds, "
             "fault, nothing written")
generic("save", "float32", distinct(60, "float32"), dense([3, 4, 5]), 0, ["W", "Z"], [[2, 0, 2, -1], [3, 4, 1, 0]],
        other=np.arange(20, dtype=F32), op="add", oob="skip", idx_dt="uint64", name="gisave_oob_skip", disc=True,
        note="dims [W, Z] add, oob=skip: Z = 4 (>= 4) gives O = 20, inside -> added; W = -1 gives O = -20: out of bounds, skipped")
generic("save", "float32", distinct(30, "float32"), dense([10, 3]), 0, ["W"], [[1, 12, 25, 4, 200]],
        other=np.arange(15, dtype=F32), op="bypass", wrap=(9, 1), oob="skip", name="gisave_wrap_skip", disc=True,
        note="dim W on [10, 3] (L = 3), wrap n 9 hi 1 on O = 3w: 3 -> 3, 36 -> 4, 75 -> 11, 12 -> 4, 600 -> 72 (outside: skipped)")
generic("save", "float32", vals((30,), "float32"), dense([5, 6]), 0, ["W", "Z"], [[1, 2, 1], [TWO64 - 7, 1, 0]],
        other=vals((3,), "float32"), op="add", idx_dt="uint64", name="gisave_minus1_sum_skips", disc=True,
        note="dims [W, Z] on [5,6] add, uint64: entry 0 W = 1, Z = 2^64 - 7: O = -1 -> skipped; entries 1, 2 added "
             "(the old contract faulted on Z >= 6)")


# ---------------------------------------------------------------- 4. IndirectCopy
IC = ("seed 000 §6.2 IndirectCopy 16-partition blocks; NKI local_gather: column-major index list, element-offset "
      "indices, num_elem_per_idx = the dst AP's final num (rule 3)")
RNG = np.random.default_rng(20261214)  # each section has its own stream


def icopy_case(dt, P, src_free, src_row, dst_free, J, idx_dt, nvi, idx, src=None, oob="fault", name=None, note="",
               choices=(), disc=None, aws=None):
    """IndirectCopy on SB tiles: src P x src_row with per-partition AP `src_free` (its elements in AP order are
    the partition's src elements); dst per-partition AP `dst_free` (final num E); idx P x J element offsets."""
    s_order = ap_index(src_free).reshape(-1)  # partition p's src element f lives at src[p, s_order[f]]
    F = s_order.size
    assert s_order.max() < src_row
    if src is None:
        src = distinct(P * src_row, dt).reshape(P, src_row)
    d_order = ap_index(dst_free).reshape(-1)
    E = dst_free[-1][1]
    K = 16 * J
    assert d_order.size == K * E, name
    idx = np.asarray(idx).reshape(P, J)
    dst_row = int(d_order.max()) + 1
    dst0 = distinct(P * dst_row, dt)[::-1].copy().reshape(P, dst_row)
    uidx = idx.astype(np.int64) & 0xFFFFFFFF  # zero-extended, no -1 sentinel

    def run(reading):
        if reading == "new":
            n, span = E, E  # entry = E elements from element offset idx
        else:
            n = src_free[-1][1]  # old: entry = src row idx of the src final num
            span = n
            if d_order.size != K * n:
                raise Invalid()
        todo = []
        for c in range(P // 16):
            flat = uidx[16 * c:16 * c + 16].flatten(order="F")  # k = j*16 + q
            for k in range(min(K, nvi)):
                o = int(flat[k]) * (1 if reading == "new" else n)
                if o + span > F:
                    if oob == "fault":
                        raise OOB("ins[1]")
                    continue
                todo.append((c, k, o))
        expected = dst0.copy()
        for c, k, o in todo:
            for p in range(16 * c, 16 * c + 16):
                expected[p, d_order[k * n:(k + 1) * n]] = src[p, s_order[o:o + n]]
        return None, expected

    fault, expected = both(name, run, dst0, disc)
    if aws is not None:
        assert np.array_equal(aws(src), expected), f"{name}: differs from AWS's numpy"
    g = Prog()
    st = g.tile_in("src", dt, src)
    it = g.tile_in("idx", idx_dt, idx.astype(STORE[idx_dt]))
    yt = g.tile_in("y0", dt, dst0)
    g.inst("IndirectCopy", [ap(st, dt, [[src_row, P]] + src_free), ap(it, idx_dt, [[J, P], [1, J]])],
           [ap(yt, dt, [[dst_row, P]] + dst_free)], num_valid_indices=nvi)
    if fault is None:
        g.save(yt, "y", dt, P, dst_row, expected)
    else:
        g.expect(yt, dst0)  # the run stops at the fault: the SB tile must be as loaded
    ch = ["I10"] + list(choices)
    if idx_dt != "uint16":
        ch.append("I9")
    if fault is not None or oob == "skip":
        ch.append("I2")
    case(name, g, f"IndirectCopy {note} ({IC})", choices=ch, fault=fault, options=["oob=skip"] if oob == "skip" else ())


def rows_dst(K, E):
    """The per-partition dst AP of K entries of E: [[E, K], [1, E]] (E = the final num)."""
    return [[E, K], [1, E]]


def offsets(P, J, hi, step=1):
    """Random element offsets in [0, hi], multiples of `step`."""
    return RNG.integers(0, hi // step + 1, (P, J)) * step


# rows of E (offsets multiples of E): the local_gather usage (the test passes index * num_elem_per_idx)
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint16", 32, offsets(16, 2, 20, 4),
           name="icopy_16p_all_valid", disc=True,
           note="16 partitions, src 24 elements per partition, 2 uint16 element offsets (multiples of E = 4) per partition: "
                "K = 32 entries flattened column-major (k = j*16 + q); each partition gathers its own elements")
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint16", 20, offsets(16, 2, 20, 4),
           name="icopy_16p_nvi_20", disc=True,
           note="num_valid_indices 20 of 32: entries k >= 20 (partitions 4..15's second index) skipped, dst keeps those values")
icopy_case("float32", 32, [[3, 5], [1, 3]], 15, rows_dst(48, 2), 3, "uint16", 40, offsets(32, 3, 13),
           name="icopy_32p_two_blocks_nvi_40", disc=True,
           note="32 partitions = 2 blocks of 16, each with its own 48-entry list; E = 2 (dst final num) from any element "
                "offset 0..13 of 15; num_valid_indices 40")
icopy_case("bfloat16", 64, [[2, 8], [1, 2]], 16, rows_dst(16, 2), 1, "uint16", 7, offsets(64, 1, 14),
           name="icopy_64p_bfloat16_nvi_7", disc=True,
           note="64 partitions (4 blocks), 1 index per partition, num_valid_indices 7: entries 0..6 per block, E = 2")
icopy_case("bfloat16", 128, [[8, 10], [1, 8]], 80, rows_dst(32, 8), 2, "uint16", 23, offsets(128, 2, 72),
           name="icopy_128p_8blocks_bfloat16", disc=True,
           note="128 partitions = 8 blocks, 80 bf16 per partition, E = 8 from offsets 0..72, 2 indices per partition, "
                "num_valid_indices 23")
icopy_case("float32", 16, [[1, 4], [1, 1]], 4, [[1, 64], [1, 1]], 4, "uint16", 64, offsets(16, 4, 3),
           name="icopy_entry_len1_dst3level", disc=False,
           note="E = 1 (dst AP [[64,16],[1,64],[1,1]]): an element offset and a row of 1 are the same thing")
icopy_case("float32", 16, [[4, 4], [1, 4]], 16, rows_dst(16, 4), 1, "uint16", 0, offsets(16, 1, 12),
           name="icopy_nvi_0", disc=False, note="num_valid_indices 0: nothing copied")
icopy_case("float32", 16, [[4, 4], [1, 4]], 16, rows_dst(16, 4), 1, "uint16", 1000, offsets(16, 1, 12, 4),
           name="icopy_nvi_past_k", disc=True, note="num_valid_indices 1000 > K = 16: all 16 entries")
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "int32", 32, offsets(16, 2, 20),
           name="icopy_int32_indices", disc=True, note="int32 element offsets (zero-extended, I9)")
icopy_case("float16", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint32", 32, offsets(16, 2, 20),
           name="icopy_uint32_indices_float16", disc=True, note="uint32 element offsets (I9), fp16 data")
icopy_case("float32", 16, [[4, 6], [1, 4]], 29, rows_dst(32, 4), 2, "uint16", 32, offsets(16, 2, 20),
           name="icopy_src_padded_partitions", disc=True,
           note="src partitions of 29 elements (pitch 29) of which the AP covers 24: offsets count the AP's elements")
# rule 3: element offsets that are no multiples of E, overlapping entries, E != the src final num
ov = np.array([[0, 1, 2, 3, 5, 6, 7, 17, 18, 19, 20, 9, 10, 11, 12, 13],
               [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 20, 0, 2, 4, 6, 8]]).T
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint16", 32, ov, name="icopy_unaligned_overlapping",
           disc=True, note="element offsets 0, 1, 2, 3, 5, ... (not multiples of E = 4): entries overlap in the source "
                           "(offset 1 = elements 1..4, offset 2 = 2..5); 20 = the last offset that fits 24")
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(16, 8), 1, "uint16", 16, offsets(16, 1, 16),
           name="icopy_E_is_dst_final_num", disc=True,
           note="src final num 4 but dst AP final num 8: E = 8 (num_elem_per_idx is the dst's), offsets 0..16 of 24")
icopy_case("float32", 16, [[1, 4], [4, 6]], 24, rows_dst(16, 4), 1, "uint16", 16, offsets(16, 1, 20),
           name="icopy_src_ap_order", disc=True,
           note="src AP [[1,4],[4,6]] per partition (the 4 x 6 block read column-major): element offset f is the f-th "
                "element in AP order, i.e. memory element 4*(f % 6) + f / 6")
bad = offsets(16, 2, 20)
bad[9, 1] = 21
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint16", 32, bad, name="icopy_oob_fault",
           disc=False, note="partition 9's second offset 21: elements 21..24 run one past the partition's 24 -> fault, "
                           "nothing written")
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint16", 25, bad, name="icopy_oob_past_nvi_not_checked",
           disc=True, note="the same out-of-bounds offset at k = 1*16 + 9 = 25 >= num_valid_indices 25: skipped, never checked")
bad2 = bad.copy()
bad2[3, 0] = 0xFFFF
icopy_case("float32", 16, [[4, 6], [1, 4]], 24, rows_dst(32, 4), 2, "uint16", 32, bad2, oob="skip", name="icopy_oob_skip",
           disc=True, note="0xFFFF (no -1 sentinel: just out of bounds) and 21 skipped under oob=skip")
# the AWS local_gather test (nki/test/test_nki_isa_local_gather.py, NUMPY_SEMANTICS; nki-semantics §7 case 22)
LG = np.random.default_rng(22)
lg_src = (LG.random((128, 512, 4)) * 100).astype(F32)
lg_index = np.tile(LG.integers(0, 512, (16, 4)).astype(np.uint16), (8, 1))  # replicate for 8 GpSimd cores
lg_hw = (lg_index * 4).astype(np.uint16)  # index_hw = index * num_elem_per_idx


def aws_local_gather(src2d):
    """AWS's NumPy reference, on the (128, 512, 4) view, reshaped to (128, 4, 16, 4) and then to the dst rows."""
    src3 = src2d.reshape(128, 512, 4)
    out = np.ndarray((128, 64, 4), F32)
    for c in range(8):
        ind = lg_index[16 * c:16 * c + 16].flatten(order="F")[0:64]
        out[16 * c:16 * c + 16] = np.take(src3[16 * c:16 * c + 16], ind, axis=1)
    return out.reshape(128, 4, 16, 4).reshape(128, 256)


assert np.any(lg_hw >= 512)  # the old contract's rows of 4 would be out of bounds
icopy_case("float32", 128, [[4, 512], [1, 4]], 2048, [[64, 4], [4, 16], [1, 4]], 4, "uint16", 64, lg_hw,
           src=lg_src.reshape(128, 2048), name="icopy_aws_local_gather", disc=True, aws=aws_local_gather,
           note="the AWS local_gather test: src (128,512,4) fp32, index (16,4) uint16 in [0,512) tiled to (128,4) and "
                "passed as index*4, num_elem_per_idx 4 (dst (128,4,16,4): final num 4), num_valid_indices 64; expected "
                "= AWS's np.take per core, asserted equal to this oracle")


# ---------------------------------------------------------------- 5. Gather
GA = "seed 004 nc_n_gather: within-partition gather, dst[p, k] = src[p, idx[p, k]]; I11"
RNG = np.random.default_rng(20261215)  # each section has its own stream


def gather_case(dt, P, F, Kp, idx_dt, idx=None, oob="fault", name=None, note="", src_ap=None, dst_ap=None):
    src = distinct(P * F, dt).reshape(P, F)
    if idx is None:
        idx = RNG.integers(0, F, (P, Kp))
    idx = np.asarray(idx).reshape(P, Kp)
    dst0 = distinct(P * Kp, dt)[::-1].copy().reshape(P, Kp)
    expected = dst0.copy()
    fault = None
    # partition p's src / dst elements in AP order (the free levels' offsets inside the partition)
    s_order = ap_index((src_ap or [[F, P], [1, F]])[1:]).reshape(-1)
    d_order = ap_index((dst_ap or [[Kp, P], [1, Kp]])[1:]).reshape(-1)
    assert s_order.size == F and d_order.size == Kp
    # int32 indices are read as their uint32 bit pattern (I11): -1 is 0xFFFFFFFF, not "the last one"
    uidx = idx.astype(np.int64) & 0xFFFFFFFF
    for p in range(P):
        for k in range(Kp):
            if int(uidx[p, k]) >= F:
                if oob == "fault":
                    fault = ("out-of-bounds", "ins[1]")
                continue
            expected[p, d_order[k]] = src[p, s_order[int(uidx[p, k])]]
    g = Prog()
    st = g.tile_in("src", dt, src)
    it = g.tile_in("idx", idx_dt, idx.astype(STORE[idx_dt]))
    yt = g.tile_in("y0", dt, dst0)
    g.inst("Gather", [ap(st, dt, src_ap or [[F, P], [1, F]]), ap(it, idx_dt, [[Kp, P], [1, Kp]])],
           [ap(yt, dt, dst_ap or [[Kp, P], [1, Kp]])])
    if fault is None:
        g.save(yt, "y", dt, P, Kp, expected)
    else:
        g.expect(yt, dst0)
    ch = ["I11"] + (["I2"] if fault is not None or oob == "skip" else [])
    case(name, g, f"Gather {note} ({GA})", choices=ch, fault=fault, options=["oob=skip"] if oob == "skip" else ())


for idt in ("uint8", "uint16", "uint32", "int32"):
    gather_case("float32", 4, 20, 12, idt, name=f"gather_{idt}", note=f"{idt} indices, 4 partitions x 20 src, 12 per partition (repeats allowed)")
gather_case("bfloat16", 32, 64, 48, "uint16", name="gather_bfloat16_32p", note="bf16, 32 partitions, 48 gathered of 64")
gather_case("int32", 128, 16, 8, "uint32", name="gather_int32_128p", note="int32 data, 128 partitions")
gather_case("float32", 4, 20, 12, "uint16", src_ap=[[20, 4], [1, 5], [5, 4]], dst_ap=[[12, 4], [1, 3], [3, 4]],
            name="gather_src_dst_ap_order", note="src AP [[20,4],[1,5],[5,4]] (partition p's src_flat in AP order is the "
            "4 x 5 block read column-major) and dst AP [[12,4],[1,3],[3,4]]: indices address AP order, not memory order")
gi = RNG.integers(0, 20, (4, 12))
gi[2, 5] = 20
gather_case("float32", 4, 20, 12, "uint32", idx=gi, name="gather_oob_fault", note="index 20 >= 20 -> fault, nothing written")
gi[0, 0] = 255
gather_case("float32", 4, 20, 12, "uint8", idx=gi, oob="skip", name="gather_oob_skip", note="indices 20 and 255 skipped under oob=skip")
gi2 = RNG.integers(0, 20, (4, 12)).astype(np.int64)
gi2[1, 3] = 0xFFFFFFFF
gather_case("float32", 4, 20, 12, "int32", idx=gi2.astype(np.uint32).view(np.int32), name="gather_int32_minus1_oob_fault",
            note="int32 -1 read as uint32 0xFFFFFFFF -> out of bounds (no -1 sentinel) -> fault")


# ---------------------------------------------------------------- 6. validation errors
def err_prog(opcode, ins, outs, allocs, **fields):
    """A program with flat Input locations `allocs` = {name: (dt, n)} and one instruction."""
    g = Prog()
    for nm, (dt, n) in allocs.items():
        g.dram_in(nm, dt, np.zeros((1, n), STORE[dt]))
    g.inst(opcode, ins, outs, **fields)
    return g


def err_case(name, g, note, kind, loc, msg, choices=()):
    case(name, g, note + " (validation error)", errors=[(kind, loc, msg)], choices=choices)


A = {"tab": ("float32", 128), "idx": ("int32", 8), "y": ("float32", 64)}
T = ap("tab", "float32", [[8, 1], [8, 16]])
for op in ("min", "max", "mult"):
    g = err_prog("IndirectSaveAccumulate", [ap("y", "float32", [[8, 8], [1, 8]]), ap("idx", "int32", [[8, 1], [1, 8]])],
                 [T], A, num_indices=8, entry_step_elements=8, op=op)
    err_case(f"err_isacc_op_{op}", g, f"IndirectSaveAccumulate op {op}: only bypass / add (seed 000 §6.4, J13)",
             "bad-field", "(IndirectSaveAccumulate) › op", "supports only bypass (copy) and add")
    g = err_prog("GenericIndirectSave", [ap("y", "float32", [[8, 8], [1, 8]]), ap("idx", "int32", [[8, 1], [1, 8]])],
                 [ap("tab", "float32", [[8, 16], [1, 8]])], A, indirect_dims=["W"], op=op)
    err_case(f"err_gisave_op_{op}", g, f"GenericIndirectSave op {op}: only bypass / add (seed 000 §6.4, J13)",
             "bad-field", "(GenericIndirectSave) › op", "supports only bypass (copy) and add")
for opc in ("IndirectLoad", "IndirectSave", "IndirectSaveAccumulate"):
    for bdt in ("uint32", "uint16", "float32", "int16"):
        A2 = dict(A, idx=(bdt, 8))
        ia = ap("idx", bdt, [[8, 1], [1, 8]])
        rows = ap("y", "float32", [[8, 8], [1, 8]])
        fields = {"num_indices": 8, "entry_step_elements": 8} if opc == "IndirectSaveAccumulate" else {}
        g = err_prog(opc, [T, ia] if opc == "IndirectLoad" else [rows, ia], [rows] if opc == "IndirectLoad" else [T],
                     A2, **fields)
        err_case(f"err_{opc.lower()}_index_{bdt}", g, f"{opc} with {bdt} indices (seed 000 §6.1: int32 / uint64 / int64)",
                 "dtype", f"({opc}) › ins[1].dtype", "index dtype must be int32, uint64 or int64")
# (the error cases name only letters that mean the same level under both letter readings: W, and Z / Y / X on 4 levels)
T4 = ap("tab", "float32", [[64, 2], [32, 2], [8, 4], [1, 8]])
g = err_prog("GenericIndirectLoad", [T4, ap("idx", "int32", [[8, 1], [1, 8]]), ap("i8", "uint8", [[8, 1], [1, 8]])],
             [ap("y", "float32", [[8, 8], [1, 8]])], dict(A, i8=("uint8", 8)), indirect_dims=["W", "X"])
err_case("err_giload_second_index_uint8", g, "GenericIndirectLoad whose second index AP is uint8 (J32)",
         "dtype", "(GenericIndirectLoad) › ins[2].dtype", "index dtype must be int32, uint64 or int64")
# dims-count mismatch
A3 = {"tab": ("float32", 30), "i0": ("int32", 3), "i1": ("int32", 3), "y": ("float32", 18)}
g = err_prog("GenericIndirectLoad", [ap("tab", "float32", [[6, 5], [1, 6]]), ap("i0", "int32", [[3, 1], [1, 3]]),
                                     ap("i1", "int32", [[3, 1], [1, 3]])], [ap("y", "float32", [[6, 3], [1, 6]])], A3,
             indirect_dims=["W"])
err_case("err_giload_dims_count_mismatch", g, "GenericIndirectLoad with 2 index operands and 1 indirect dim (seed 000 §6.2)",
         "bad-field", "(GenericIndirectLoad) › indirect_dims", "number of indirect dims")
g = err_prog("GenericIndirectSave", [ap("y", "float32", [[6, 3], [1, 6]]), ap("i0", "int32", [[3, 1], [1, 3]]),
                                     ap("i1", "int32", [[3, 1], [1, 3]])], [ap("tab", "float32", [[6, 5], [1, 6]])], A3,
             indirect_dims=["W"], op="add")
err_case("err_gisave_dims_count_mismatch", g, "GenericIndirectSave with 2 index operands and 1 indirect dim (seed 000 §6.2)",
         "bad-field", "(GenericIndirectSave) › indirect_dims", "number of indirect dims")
# rule 4: the letters are the AP levels (W 0, Z 1, Y 2, X 3); a letter past the table's levels is an error
for opc, letter in (("GenericIndirectLoad", "X"), ("GenericIndirectSave", "Y")):
    t = ap("tab", "float32", [[6, 5], [1, 6]])
    i0 = ap("i0", "int32", [[3, 1], [1, 3]])
    dense_ap = ap("y", "float32", [[5, 3], [1, 5]])  # sized for the old reading (X = the last level: L = 5)
    g = err_prog(opc, [t, i0] if opc == "GenericIndirectLoad" else [dense_ap, i0],
                 [dense_ap] if opc == "GenericIndirectLoad" else [t], A3, indirect_dims=[letter],
                 **({} if opc == "GenericIndirectLoad" else {"op": "add"}))
    err_case(f"err_{'giload' if opc == 'GenericIndirectLoad' else 'gisave'}_letter_{letter}_on_2level", g,
             f"{opc} indirect_dims [{letter}] on a 2-level table: only W (level 0) and Z (level 1) exist (rule 4, "
             f"re-facts §3; the old contract read X as the last level)", "bad-field", f"({opc}) › indirect_dims[0]", "")
A5 = {"tab": ("float32", 60), "i0": ("int32", 3), "i1": ("int32", 3), "y": ("float32", 12)}
g = err_prog("GenericIndirectLoad", [ap("tab", "float32", [[20, 3], [5, 4], [1, 5]]), ap("i0", "int32", [[3, 1], [1, 3]]),
                                     ap("i1", "int32", [[3, 1], [1, 3]])], [ap("y", "float32", [[4, 3], [1, 4]])], A5,
             indirect_dims=["W", "X"])
err_case("err_giload_letter_X_on_3level", g, "GenericIndirectLoad indirect_dims [W, X] on a 3-level table: X is level 3, "
         "which it lacks (rule 4; the old contract read X as level 2)", "bad-field", "(GenericIndirectLoad) › indirect_dims[1]", "")
# insufficient indices: num_indices > E (I5)
A4 = {"tab": ("float32", 128), "idx": ("int32", 8), "y": ("float32", 64)}
g = err_prog("IndirectSaveAccumulate", [ap("y", "float32", [[8, 8], [1, 8]]), ap("idx", "int32", [[4, 2], [1, 4]])],
             [T], A4, num_indices=5, entry_step_elements=8, op="add")
err_case("err_isacc_insufficient_indices", g,
         "IndirectSaveAccumulate num_indices 5 > 4 index slots per partition (2 partitions x 4): insufficient indices (seed 000 §6.2, I5)",
         "ap-shape", "(IndirectSaveAccumulate) › num_indices", "insufficient indices", choices=["I5"])
g = err_prog("IndirectSaveAccumulate", [ap("y", "float32", [[8, 8], [1, 8]]), ap("idx", "int32", [[1, 8], [1, 1]])],
             [T], A4, num_indices=2, entry_step_elements=8, op="add")
err_case("err_isacc_insufficient_indices_one_per_partition", g,
         "IndirectSaveAccumulate with 8 partitions x 1 index slot and num_indices 2: insufficient indices (I5)",
         "ap-shape", "(IndirectSaveAccumulate) › num_indices", "insufficient indices", choices=["I5"])
# shape errors (ind-decisions)
g = err_prog("IndirectLoad", [T, ap("idx", "int32", [[8, 1], [1, 8]])], [ap("y", "float32", [[8, 7], [1, 8]])], A)
err_case("err_iload_rows_ne_indices", g, "IndirectLoad with 7 dst rows for 8 indices", "ap-shape", "(IndirectLoad)", "")
g = err_prog("IndirectLoad", [T, ap("idx", "int32", [[8, 1], [1, 8]])], [ap("yb", "bfloat16", [[8, 8], [1, 8]])],
             dict(A, yb=("bfloat16", 64)))
err_case("err_iload_dtype_mismatch", g, "IndirectLoad fp32 table into a bf16 dst (no cast)", "dtype", "(IndirectLoad)", "")
g = err_prog("IndirectSave", [ap("y", "float32", [[8, 6], [1, 8]]), ap("idx", "int32", [[8, 1], [1, 8]])], [T], A)
err_case("err_isave_rows_ne_indices", g, "IndirectSave with 6 value rows for 8 indices", "ap-shape", "(IndirectSave)", "")
g = err_prog("IndirectSaveAccumulate", [ap("y", "float32", [[8, 6], [1, 8]]), ap("idx", "int32", [[4, 2], [1, 4]])],
             [T], A, num_indices=4, entry_step_elements=8, op="add")
err_case("err_isacc_rows_ne_slots", g, "IndirectSaveAccumulate with 6 value rows for 2 x 4 slots", "ap-shape",
         "(IndirectSaveAccumulate)", "")
g = err_prog("IndirectSaveAccumulate", [ap("yb", "bfloat16", [[8, 8], [1, 8]]), ap("idx", "int32", [[4, 2], [1, 4]])],
             [T], dict(A, yb=("bfloat16", 64)), num_indices=4, entry_step_elements=8, op="add")
err_case("err_isacc_dtype_mismatch", g, "IndirectSaveAccumulate bf16 values into an fp32 table", "dtype",
         "(IndirectSaveAccumulate)", "")
g = err_prog("GenericIndirectLoad", [ap("tab", "float32", [[6, 5], [6, 1], [6, 1], [1, 6]]),
                                     ap("i0", "int32", [[3, 1], [1, 3]]), ap("i1", "int32", [[2, 1], [1, 2]])],
             [ap("y", "float32", [[1, 3], [1, 1]])], A3, indirect_dims=["W", "X"])
err_case("err_giload_index_counts_differ", g, "GenericIndirectLoad index APs of 3 and 2 elements", "ap-shape",
         "(GenericIndirectLoad)", "")
g = err_prog("GenericIndirectLoad", [ap("tab", "float32", [[6, 5], [1, 6]]), ap("i0", "int32", [[3, 1], [1, 3]])],
             [ap("y", "float32", [[6, 2], [1, 6]])], A3, indirect_dims=["W"])
err_case("err_giload_dst_count", g, "GenericIndirectLoad dims [W] on [5,6] with 3 indices: dst needs 3 x 6, has 12",
         "ap-shape", "(GenericIndirectLoad)", "")
g = err_prog("GenericIndirectSave", [ap("y", "float32", [[5, 3], [1, 5]]), ap("i0", "int32", [[3, 1], [1, 3]])],
             [ap("tab", "float32", [[6, 5], [1, 6]])], A3, indirect_dims=["W"], op="bypass")
err_case("err_gisave_values_count", g, "GenericIndirectSave dims [W] on [5,6] (L = 6) with 3 indices: values need 18, has 15",
         "ap-shape", "(GenericIndirectSave)", "")
g = err_prog("IndirectLoad", [T, ap("idx", "int32", [[8, 1], [1, 8]])], [ap("y", "float32", [[8, 8], [1, 8]])], A,
             wrap={"n": 0, "hi": 1})
err_case("err_iload_wrap_n0", g, "IndirectLoad wrap n = 0 (I3)", "bad-field", "wrap.n", "", choices=["I3"])
AC = {"s": ("float32", 16 * 8), "ix": ("uint16", 16), "d": ("float32", 16 * 4 * 16)}
AC8 = {"s": ("float32", 8 * 8), "ix": ("uint16", 8), "d": ("float32", 8 * 64)}
g = err_prog("IndirectCopy", [ap("s", "float32", [[8, 8], [4, 2], [1, 4]]), ap("ix", "uint16", [[1, 8], [1, 1]])],
             [ap("d", "float32", [[64, 8], [4, 16], [1, 4]])], AC8, num_valid_indices=4)
err_case("err_icopy_partitions_not_16", g, "IndirectCopy on 8 partitions (a multiple of 16 needed, NKI)", "ap-shape",
         "(IndirectCopy)", "")
for bdt in ("int64", "int8", "uint8"):
    g = err_prog("IndirectCopy", [ap("s", "float32", [[8, 16], [4, 2], [1, 4]]), ap("ix", bdt, [[1, 16], [1, 1]])],
                 [ap("d", "float32", [[64, 16], [4, 16], [1, 4]])], dict(AC, ix=(bdt, 16)), num_valid_indices=4)
    err_case(f"err_icopy_index_{bdt}", g, f"IndirectCopy with {bdt} indices (uint16, I9: int32 / uint32)", "dtype",
             "(IndirectCopy) › ins[1]", bdt, choices=["I9"])
g = err_prog("IndirectCopy", [ap("s", "float32", [[8, 16], [4, 2], [1, 4]]), ap("ix", "uint16", [[1, 16], [1, 1]])],
             [ap("d", "float32", [[32, 16], [1, 32]])], AC, num_valid_indices=4)
err_case("err_icopy_dst_too_small", g, "IndirectCopy dst [[32,16],[1,32]]: E = 32 (its final num), 16 entries of 32 need 512 elements per partition, it has 32", "ap-shape",
         "(IndirectCopy)", "")
g = err_prog("IndirectCopy", [ap("s", "float32", [[8, 16], [4, 2], [1, 4]]), ap("ix", "uint16", [[1, 16], [1, 1]])],
             [ap("db", "bfloat16", [[64, 16], [4, 16], [1, 4]])], dict(AC, db=("bfloat16", 1024)), num_valid_indices=4)
err_case("err_icopy_dtype_mismatch", g, "IndirectCopy fp32 src into a bf16 dst", "dtype", "(IndirectCopy)", "")
AG = {"s": ("float32", 80), "ix": ("uint32", 48), "d": ("float32", 48)}
for bdt in ("int64", "int16", "int8"):
    g = err_prog("Gather", [ap("s", "float32", [[20, 4], [1, 20]]), ap("ix", bdt, [[12, 4], [1, 12]])],
                 [ap("d", "float32", [[12, 4], [1, 12]])], dict(AG, ix=(bdt, 48)))
    err_case(f"err_gather_index_{bdt}", g, f"Gather with {bdt} indices (uint8/16/32, int32: I11)", "dtype",
             "(Gather) › ins[1]", bdt, choices=["I11"])
g = err_prog("Gather", [ap("s", "float32", [[20, 4], [1, 20]]), ap("ix", "uint32", [[12, 4], [1, 12]])],
             [ap("d", "float32", [[10, 4], [1, 10]])], AG)
err_case("err_gather_dst_count", g, "Gather dst 10 per partition for 12 indices per partition", "ap-shape", "(Gather)", "")
g = err_prog("Gather", [ap("s", "float32", [[20, 4], [1, 20]]), ap("ix", "uint32", [[12, 2], [1, 12]])],
             [ap("d", "float32", [[12, 4], [1, 12]])], AG)
err_case("err_gather_partitions_differ", g, "Gather with 4 src partitions and 2 index partitions", "ap-shape", "(Gather)", "")




# ================================================================ write
def write_all():
    birprog.clear_cases(HERE)
    total = 0
    for name, (g, note, choices, fault, errors, options) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes), never from birsim"]
        lines += [f"choice: {c}" for c in choices]
        if errors:
            for kind, loc, msg in errors:
                lines.append(f"error {kind} @ {loc} | {msg}".rstrip())
            inputs, outputs = {}, {}
        else:
            lines.append("profile: refsim")
            lines += [f"option: {o}" for o in options]
            if fault is not None:
                lines.append(f"fault {fault[0]} | {fault[1]}".rstrip())
            inputs, outputs = g.inputs, g.outputs
        total += birprog.write_case(os.path.join(HERE, name), g.program(), lines, inputs, outputs, compact=True)
    # the worked example (examples/embedding_bag/make.py writes its program and data) as a case
    d = os.path.join(HERE, "embedding_bag_example")
    os.makedirs(d)
    ex = "../../../../examples/embedding_bag/"
    with open(os.path.join(d, "case.expect"), "w") as f:
        f.write("# examples/embedding_bag: IndirectLoad of 1024 Zipf ids from a 4096 x 128 bf16 table, TensorScalar x 0.3, "
                "serial bf16 IndirectSaveAccumulate back into a copy of the table (seed 000 §6.3)\n"
                "# expected outputs from examples/embedding_bag/make.py (NumPy / ml_dtypes), never from birsim\n"
                f"program: {ex}program.json\nprofile: refsim\ninput table = {ex}table.npy\ninput ids = {ex}ids.npy\n"
                f"output gathered = {ex}expected_gathered.npy\noutput out = {ex}expected_out.npy\n")
    runs = sum(1 for c in CASES.values() if not c[4])
    faults = sum(1 for c in CASES.values() if c[3] is not None)
    skips = sum(1 for c in CASES.values() if "oob=skip" in c[5])
    print(f"{len(CASES)} cases ({runs} run: {faults} expect a fault, {skips} under oob=skip; {len(CASES) - runs} "
          f"validation errors), {total / 2**20:.2f} MiB of tensors")
    changed = [n for n, c in CHANGED.items() if c]
    print(f"{len(changed)} of the {len(CHANGED)} run cases have another outcome under the old contract's reading:")
    for n in changed:
        print("  " + n)


write_all()
