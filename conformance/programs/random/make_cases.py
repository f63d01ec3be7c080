#!/usr/bin/env python3
"""Writes the `programs/random` conformance suite: the random-number instructions of issue #29's third
batch -- Rand (60), Rand2 (97), Dropout (65), RandSetState (98), RandGetState (99), GetRandState (58) --
and the existing SetRandState (59) reseeding them, on AWS's documented examples and test shapes
re-expressed as BIR JSON and on edge cases, with the .npy inputs and the expected .npy outputs.

The expected values come from a step-by-step emulation of the written spec (SPEC.md in this directory:
the Xorwow generators, their initial and seeded states, and each instruction's use of them) in plain
Python integers (mod 2^32) and NumPy float32 / ml_dtypes, plus docs/bir-json.md (Load, Save, the AP
rules) and docs/fidelity.md (D7: the Pool Xorwow and its seeding; N1-N3, N12: the casts of Rand2's
output), never from birsim: nothing under crates/ was read.

The emulation (SPEC.md's words -> the functions below):
  * `Xorwow.step`: t = s0 ^ (s0 >> 2); (s0..s3) = (s1..s4); s4 = (s4 ^ (s4 << 4)) ^ (t ^ (t << 1)) with
    the old s4; counter += 362437; draw = counter + s4 (the new ones); every word masked to 32 bits;
  * `Engines`: the run's generator state: Pool one Xorwow per row, DVE four lanes per row, indexed by
    the row of the instruction's AP (0-based within the AP), created on first use from the initial
    state (Pool s0..s3 = ~0, s4 = ~0 ^ r, counter 0; DVE every word ~0) or, after a SetRandState(S),
    from the seeded one (Pool s0 = S_lo, s1 = S_hi, s2 = s3 = ~0, s4 = ~0 ^ r, counter 0; DVE lanes
    s0 = S_lo, s1 = S_hi, s2 = s3 = s4 = ~0, counter ~0); kept across instructions;
  * `Engines.draws`: a row's draws in element (AP) order; DVE element e from lane e % 4;
  * Rand: the draw's low 8 / 16 / 32 bits; Rand2: f = bits(0x3F800000 | (r & 0x7FFFFF)) - 1,
    d = fl(max - min), p = fl(d * f), v = fl(min + p), then the cast (RNE; int: RNE then clamp, N12);
    Dropout: u as f, dropped when u < prob (DropRate) / kept when u < prob (KeepRate), a dropped element
    all-zero bits, a kept one its bits; RandSetState: the words in order, a generator whose s0..s4 are
    all zero gets s4 = 1; RandGetState / GetRandState: the words, nothing advanced.

Every case is built by a function of a `Run`; the same function run under an alternative reading of
the spec (`Run(alt=...)`) gives the counts in README.md's "What the expected bits distinguish".
A second, vectorised NumPy uint32 coding of the Xorwow checks the first one (`_self_check`).

Run: /work/main/.venv/bin/python conformance/programs/random/make_cases.py (any Python with NumPy 2.4.6,
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
from birprog import ap, ap_index, imm, tile  # noqa: E402

np.seterr(all="raise")
HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64 = np.float32, np.float64
SEED = 20270714  # each case's data RNG: np.random.default_rng([SEED, crc32(case name)])
M32 = 0xFFFFFFFF
WEYL = 362437

FP32, BF16, FP16 = "float32", "bfloat16", "float16"
I8, U8, I16, U16, I32, U32, U64 = "int8", "uint8", "int16", "uint16", "int32", "uint32", "uint64"
STORE = {FP32: np.float32, BF16: np.uint16, FP16: np.float16, I8: np.int8, U8: np.uint8, I16: np.int16,
         U16: np.uint16, I32: np.int32, U32: np.uint32, U64: np.uint64}
SIZE = {FP32: 4, BF16: 2, FP16: 2, I8: 1, U8: 1, I16: 2, U16: 2, I32: 4, U32: 4, U64: 8}
INTS = (I8, U8, I16, U16, I32, U32)
UNSIGNED_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32}
WORDS = {"Pool": 6, "DVE": 24}


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def bits(x):
    return np.asarray(x, F32).view(np.uint32)


def f32b(u):
    return np.array(u, np.uint32).view(F32)[()]


def imm_f32(v):
    """An fp32 immediate: the JSON number is the fp32 value itself (exact in f64)."""
    return imm(float(F32(v)), FP32)


# ---------------------------------------------------------------- the generators (SPEC.md "The generators")
class Xorwow:
    """One Xorwow: words [s0, s1, s2, s3, s4, counter], plain Python ints < 2^32."""
    __slots__ = ("w", "alt")

    def __init__(self, words, alt=None):
        self.w = [int(x) & M32 for x in words]
        self.alt = alt

    def step(self):
        s0, s1, s2, s3, s4, c = self.w
        t = s0 ^ (s0 >> 2)
        n4 = (s4 ^ ((s4 << 4) & M32)) ^ (t ^ ((t << 1) & M32))  # the new s4 from the OLD s4
        c = (c + WEYL) & M32
        self.w = [s1, s2, s3, s4, n4, c]
        if self.alt == "no_weyl":
            return n4
        return (c + n4) & M32  # the new counter plus the new s4


class Engines:
    """The run's generator state: `pool[r]` one Xorwow, `dve[r]` four (lanes 0..3), r = the AP row;
    a row is created on first use from the initial (or, after SetRandState, the seeded) state.

    `alt` names an alternative reading (for the sensitivity counts only):
      one_lane       DVE: one generator per row (lane 0 serves every element)
      lanes_blocked  DVE: element e of n from lane e * 4 // n (four contiguous quarters), not e % 4
      abs_rows       rows indexed by absolute SBUF partition, not by the row of the AP
      dve_init_pool  DVE lanes start like Pool rows (s4 = ~0 ^ r, counter 0)
      seed_pool_only SetRandState reseeds Pool only, DVE lanes keep their state
      no_zero_fix    RandSetState keeps an all-zero s0..s4 as given
      no_persist     every instruction starts from the initial state (nothing kept across instructions)
      no_weyl        draw = the new s4 (no counter added)
    """

    def __init__(self, alt=None):
        self.alt = alt
        self.pool_seed = self.dve_seed = None  # the last SetRandState's seed (None: never seeded)
        self.pool, self.dve = {}, {}

    def _pool_words(self, r):
        if self.pool_seed is None:
            return [M32, M32, M32, M32, M32 ^ r, 0]
        s = self.pool_seed
        return [s & M32, s >> 32, M32, M32, M32 ^ r, 0]

    def _dve_words(self, r):
        if self.dve_seed is None:
            if self.alt == "dve_init_pool":
                return [M32, M32, M32, M32, M32 ^ r, 0]
            return [M32] * 6
        s = self.dve_seed
        return [s & M32, s >> 32, M32, M32, M32, M32]

    def gens(self, eng, r):
        """Row r's generators (Pool: [one], DVE: [four lanes]), created on first use."""
        x = self.alt
        if eng == "Pool":
            if r not in self.pool:
                self.pool[r] = [Xorwow(self._pool_words(r), x)]
            return self.pool[r]
        assert eng == "DVE", eng
        if r not in self.dve:
            self.dve[r] = [Xorwow(self._dve_words(r), x) for _ in range(4)]
        return self.dve[r]

    def draws(self, eng, rows, n):
        """[len(rows), n] uint32: each row's next n draws in element order (DVE: lane e % 4)."""
        out = np.empty((len(rows), n), np.uint32)
        for i, r in enumerate(rows):
            g = self.gens(eng, r)
            if eng == "Pool" or self.alt == "one_lane":
                out[i] = [g[0].step() for _ in range(n)]
            elif self.alt == "lanes_blocked":
                out[i] = [g[e * 4 // n].step() for e in range(n)]
            else:
                out[i] = [g[e % 4].step() for e in range(n)]
        return out

    def set_rand_state(self, s):
        """SetRandState(S): every Pool row and every DVE lane becomes the seeded state (rows are
        created seeded from here on)."""
        s = int(s)
        assert 0 <= s < 2 ** 64
        self.pool_seed, self.pool = s, {}
        if self.alt != "seed_pool_only":
            self.dve_seed, self.dve = s, {}

    def rand_set_state(self, eng, rows, words):
        """RandSetState: row rows[i] takes words[i] (6 per generator: Pool one, DVE lanes 0..3); a
        generator whose s0..s4 are all zero gets s4 = 1, the counter as given."""
        words = np.asarray(words, np.uint32)
        assert words.shape == (len(rows), WORDS[eng]), words.shape
        for i, r in enumerate(rows):
            gs = []
            for k in range(WORDS[eng] // 6):
                w = [int(v) for v in words[i, 6 * k:6 * k + 6]]
                if w[:5] == [0] * 5 and self.alt != "no_zero_fix":
                    w[4] = 1
                gs.append(Xorwow(w, self.alt))
            (self.pool if eng == "Pool" else self.dve)[r] = gs

    def get_state(self, eng, rows):
        """RandGetState / GetRandState: [len(rows), 6 | 24] uint32, the words in RandSetState's order."""
        return np.array([[w for g in self.gens(eng, r) for w in g.w] for r in rows], np.uint32).reshape(
            len(rows), WORDS[eng])


def _np_xorwow(words, n):
    """A second coding: NumPy uint32 arrays (wrapping), words [G, 6] -> draws [G, n], final words."""
    s = [np.array(words[:, k], np.uint32) for k in range(6)]
    out = np.empty((words.shape[0], n), np.uint32)
    for j in range(n):
        t = s[0] ^ (s[0] >> np.uint32(2))
        n4 = (s[4] ^ (s[4] << np.uint32(4))) ^ (t ^ (t << np.uint32(1)))
        s = [s[1], s[2], s[3], s[4], n4, s[5] + np.uint32(WEYL)]
        out[:, j] = s[5] + s[4]
    return out, np.stack(s, axis=1)


def _self_check():
    # the first draw of Pool row 0 from the all-ones state, by hand
    t = M32 ^ (M32 >> 2)  # 0xC0000000
    s4 = (M32 ^ ((M32 << 4) & M32)) ^ (t ^ ((t << 1) & M32))  # 0x0000000F ^ (0xC0000000 ^ 0x80000000)
    assert t == 0xC0000000 and s4 == 0x4000000F
    assert Xorwow([M32] * 4 + [M32, 0]).step() == (0x4000000F + 362437) & M32 == 0x400587D4
    # DVE all-ones: the counter wraps: 0xFFFFFFFF + 362437 = 362436
    assert Xorwow([M32] * 6).step() == (0x4000000F + 362436) & M32
    # the two codings agree on random states (and an all-zero-but-counter one)
    rng = np.random.default_rng(7)
    w = rng.integers(0, 2 ** 32, (40, 6), dtype=np.uint64).astype(np.uint32)
    w[3, :5] = 0
    w[3, 4] = 1
    d, fin = _np_xorwow(w, 37)
    for i in range(w.shape[0]):
        g = Xorwow(w[i])
        assert [g.step() for _ in range(37)] == d[i].tolist()
        assert g.w == fin[i].tolist()


_self_check()


# ---------------------------------------------------------------- instruction arithmetic
def unit(r):
    """u = fp32 bits (0x3F800000 | (r & 0x7FFFFF)) - 1.0 (exact, in [0, 1))."""
    r = np.asarray(r, np.uint32)
    return (f32b(np.uint32(0x3F800000) | (r & np.uint32(0x7FFFFF))) - F32(1.0)).astype(F32)


def unit_high(r):
    """Alternative: the mantissa from the draw's high 23 bits."""
    r = np.asarray(r, np.uint32)
    return (f32b(np.uint32(0x3F800000) | (r >> np.uint32(9))) - F32(1.0)).astype(F32)


def rand_bits(dr, dt, high=False):
    """Rand: each draw truncated to dt's width, its low bits (or, alternatively, its high bits)."""
    w = SIZE[dt]
    dr = np.asarray(dr, np.uint32)
    lo = (dr >> np.uint32(32 - 8 * w)) if high and w < 4 else dr
    return lo.astype(UNSIGNED_OF[w]).view(STORE[dt])  # astype between unsigned types keeps the low bits


def encode(x, dt, alt=None):
    """fp32 values -> stored dt: floats by RNE (N1, N3: no NaN arises), ints by RNE then clamp (N12);
    `alt` int_trunc / int_half_away: the alternative roundings (sensitivity counts only)."""
    x = np.asarray(x, F32)
    assert not np.isnan(x).any()
    if dt == FP32:
        return x.copy()
    if dt == BF16:
        return x.astype(md.bfloat16).view(np.uint16)
    if dt == FP16:
        with np.errstate(over="ignore"):
            return x.astype(np.float16)
    assert dt in INTS, dt
    info = np.iinfo(STORE[dt])
    y = x.astype(F64)
    if alt == "int_trunc":
        y = np.trunc(y)
    elif alt == "int_half_away":
        y = np.sign(y) * np.floor(np.abs(y) + 0.5)
    else:
        y = np.rint(y)  # round half to even
    return np.clip(y, info.min, info.max).astype(STORE[dt])


def rand2_values(dr, mn, mx, alt=None):
    """Rand2 (fp32, before the cast): f = unit(r); d = fl(max - min); p = fl(d * f); v = fl(min + p);
    mn, mx: [P] fp32 (one per row)."""
    f = unit_high(dr) if alt == "unit_high" else unit(dr)
    mn = np.asarray(mn, F32)[:, None]
    mx = np.asarray(mx, F32)[:, None]
    if alt == "rand2_f64":  # alternative: min + (max - min) * f in f64, rounded once
        return (mn.astype(F64) + (mx.astype(F64) - mn.astype(F64)) * f.astype(F64)).astype(F32)
    if alt == "rand2_lerp":  # alternative: fl(fl(min * fl(1 - f)) + fl(max * f))
        return ((mn * (F32(1) - f).astype(F32)).astype(F32) + (mx * f).astype(F32)).astype(F32)
    d = (mx - mn).astype(F32)
    p = (d * f).astype(F32)
    return (mn + p).astype(F32)


def dropout_values(raw, dr, prob, keep_rate, alt=None):
    """Dropout on stored values raw [P, n]: u = unit(r); DropRate drops u < prob, KeepRate keeps u < prob;
    a dropped element becomes all-zero bits, a kept one keeps its bits."""
    u = unit_high(dr) if alt == "unit_high" else unit(dr)
    pr = np.asarray(prob, F32)[:, None]
    lt = (u <= pr) if alt == "le" else (u < pr)
    drop = ~lt if keep_rate else lt
    out = np.ascontiguousarray(raw).copy()
    out.view(UNSIGNED_OF[out.dtype.itemsize])[drop] = 0
    return out


# ---------------------------------------------------------------- program building and emulation
class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP"}
    DEFAULT_ENGINE = "DVE"


ENGINE_ALTS = {"one_lane", "lanes_blocked", "dve_init_pool", "seed_pool_only", "no_zero_fix", "no_weyl"}


class Run:
    """One case: the BIR program (g) and, in lockstep, the emulated SB tiles and generator state."""

    def __init__(self, alt=None):
        self.alt = alt
        self.g = Prog()
        self.eng = Engines(alt if alt in ENGINE_ALTS else None)
        self.tiles = {}  # name -> [dt, array [parts, row], written mask]

    # tiles
    def sb(self, name, dt, parts, row):
        self.g.sb(name, dt, parts, row)
        self.tiles[name] = [dt, np.zeros((parts, row), STORE[dt]), np.zeros((parts, row), bool)]
        return name

    def load(self, name, dt, raw):
        """DRAM input `name` Loaded into SB tile name_t (as birprog's tile_in)."""
        t = self.g.tile_in(name, dt, raw)
        raw = np.asarray(raw).reshape(np.asarray(raw).shape[0], -1)
        self.tiles[t] = [dt, raw.copy(), np.ones(raw.shape, bool)]
        return t

    def save(self, t, out):
        dt, arr, mask = self.tiles[t]
        assert mask.all(), (t, "saved before every element was written")
        self.g.save(t, out, dt, arr.shape[0], arr.shape[1], arr.copy())

    def _ap(self, t, pairs=None, offset=0):
        dt, arr, _ = self.tiles[t]
        if pairs is None:
            pairs = [[arr.shape[1], arr.shape[0]], [1, arr.shape[1]]]
        idx = ap_index(pairs, offset)
        return ap(t, dt, pairs, offset), idx.reshape(idx.shape[0], -1), arr.shape[1]

    def _rows(self, idx, pitch):
        """The state rows of an AP's partition rows: 0..P-1 (SPEC: the AP's row), or, under the
        alternative abs_rows, the absolute partitions."""
        if self.alt == "abs_rows":
            return [int(i[0]) // pitch for i in idx]
        if self.alt == "no_persist":
            self.eng = Engines()
        return list(range(idx.shape[0]))

    def write(self, t, idx, vals):
        dt, arr, mask = self.tiles[t]
        vals = np.asarray(vals)
        assert vals.dtype == arr.dtype and vals.shape == idx.shape, (vals.dtype, arr.dtype, vals.shape, idx.shape)
        arr.reshape(-1)[idx.reshape(-1)] = vals.reshape(-1)
        mask.reshape(-1)[idx.reshape(-1)] = True

    def read(self, t, idx):
        dt, arr, mask = self.tiles[t]
        assert mask.reshape(-1)[idx.reshape(-1)].all()
        return arr.reshape(-1)[idx]

    def scalar(self, x, P):
        """A min / max / prob operand: an fp32 immediate, or (tile, column) = an AP of one value per row."""
        if isinstance(x, tuple):
            t, c = x
            dt, arr, _ = self.tiles[t]
            assert dt == FP32 and arr.shape[0] == P
            k = arr.shape[1]
            return tile(t, FP32, P, 1, offset=c, row=k), arr[:, c].astype(F32)
        return imm_f32(x), np.full(P, F32(x))

    # instructions
    def rand(self, eng, t, pairs=None, offset=0, opcode="Rand"):
        a, idx, pitch = self._ap(t, pairs, offset)
        dt = self.tiles[t][0]
        rows = self._rows(idx, pitch)
        dr = self.eng.draws(eng, rows, idx.shape[1])
        self.g.inst(opcode, [], [a], engine=eng)
        self.write(t, idx, rand_bits(dr, dt, high=self.alt == "high_bits"))
        return dr

    def rand2(self, eng, t, mn, mx, pairs=None, offset=0):
        a, idx, pitch = self._ap(t, pairs, offset)
        dt = self.tiles[t][0]
        P = idx.shape[0]
        (amn, vmn), (amx, vmx) = self.scalar(mn, P), self.scalar(mx, P)
        rows = self._rows(idx, pitch)
        dr = self.eng.draws(eng, rows, idx.shape[1])
        self.g.inst("Rand2", [amn, amx], [a], engine=eng)
        v = rand2_values(dr, vmn, vmx, self.alt)
        self.write(t, idx, encode(v, dt, self.alt))
        return v

    def dropout(self, eng, src, dst, prob, keep_rate=None, pairs=None, offset=0):
        asrc, isrc, _ = self._ap(src, pairs, offset)
        adst, idst, pitch = self._ap(dst, pairs, offset)
        assert self.tiles[src][0] == self.tiles[dst][0]
        P, n = idst.shape
        aprob, vprob = self.scalar(prob, P)
        raw = self.read(src, isrc)
        if self.alt == "skip_draws" and not isinstance(prob, tuple) and float(prob) in (0.0, 1.0):
            kept = (float(prob) == 0.0) != bool(keep_rate == "KeepRate")
            out = raw.copy() if kept else dropout_values(raw, np.zeros((P, n), np.uint32), np.full(P, 2, F32), False)
        else:
            rows = self._rows(idst, pitch)
            dr = self.eng.draws(eng, rows, n)
            out = dropout_values(raw, dr, vprob, keep_rate == "KeepRate", self.alt)
        kw = {} if keep_rate is None else {"threshold_type": keep_rate}
        self.g.inst("Dropout", [asrc, aprob], [adst], engine=eng, **kw)
        self.write(dst, idst, out)
        return out

    def rand_set_state(self, eng, t, pairs=None, offset=0):
        a, idx, pitch = self._ap(t, pairs, offset)
        assert self.tiles[t][0] == U32
        rows = self._rows(idx, pitch)
        self.eng.rand_set_state(eng, rows, self.read(t, idx))
        self.g.inst("RandSetState", [a], [], engine=eng)

    def rand_get_state(self, eng, t, opcode="RandGetState", pairs=None, offset=0):
        a, idx, pitch = self._ap(t, pairs, offset)
        assert self.tiles[t][0] == U32
        rows = self._rows(idx, pitch)
        st = self.eng.get_state(eng, rows)
        self.g.inst(opcode, [], [a], engine=eng)
        self.write(t, idx, st)
        return st

    def set_rand_state(self, seed, engine="Pool", operand=None):
        """SetRandState(seed): an uint64 immediate, or `operand` (a one-value AP holding it)."""
        self.g.inst("SetRandState", [operand if operand is not None else imm(int(seed), U64)], [], engine=engine)
        self.eng.set_rand_state(seed)


# ---------------------------------------------------------------- cases
CASES = {}
SANITY = []  # (case, what, result)
SENS = []  # (case, alternative reading, how many expected values it would change)
ALTS = {
    "one_lane": "DVE: one generator per row (lane 0 for every element) instead of four lanes",
    "lanes_blocked": "DVE: element e of n from lane e·4 // n (contiguous quarters) instead of e % 4",
    "abs_rows": "state rows indexed by absolute SBUF partition instead of the AP's row",
    "dve_init_pool": "DVE lanes starting like Pool rows (s4 = ~0 ^ r, counter 0) instead of all ones",
    "seed_pool_only": "SetRandState reseeding the Pool rows only (DVE lanes keep their state)",
    "no_zero_fix": "RandSetState keeping an all-zero s0..s4 (no s4 = 1)",
    "no_persist": "no state kept across instructions (each starts from the initial state)",
    "no_weyl": "draw = the new s4 alone (no counter)",
    "high_bits": "Rand narrowing to the draw's high bits instead of its low bits",
    "unit_high": "u / f from the draw's high 23 bits (r >> 9) instead of its low 23",
    "rand2_f64": "Rand2 as min + (max − min)·f in f64, rounded once, instead of three fp32 roundings",
    "rand2_lerp": "Rand2 as fl(fl(min·fl(1 − f)) + fl(max·f)) instead of min + fl(fl(max − min)·f)",
    "le": "Dropout comparing u <= prob instead of u < prob",
    "int_trunc": "Rand2 into an int dtype truncating toward zero instead of RNE",
    "int_half_away": "Rand2 into an int dtype rounding half away from zero instead of half to even",
    "skip_draws": "Dropout with an immediate prob of 0 or 1 drawing nothing",
}

# spec rules (SPEC.md) the cases depend on; README.md's table names them
RULES = {
    "step": "the Xorwow step (re-facts §7)",
    "pool-init": "Pool row r's initial state (s4 = ~0 ^ r)",
    "dve-init": "DVE lanes' initial state (every word ~0)",
    "lanes": "DVE element e from lane e % 4; Pool from its row's one generator; element (AP) order",
    "rows": "state row = the row of the instruction's AP; untouched rows keep their initial state",
    "persist": "each engine's state kept across instructions, the two engines independent",
    "seed": "SetRandState(S) reseeding every Pool row and every DVE lane",
    "set": "RandSetState word order (Pool 6, DVE lane 0..3 × 6)",
    "zero-fix": "RandSetState: all-zero s0..s4 -> s4 = 1, counter as given",
    "get": "RandGetState / GetRandState: the words in RandSetState's order, nothing advanced",
    "rand-bits": "Rand: the draw's low bits",
    "unit": "u / f = bits(0x3F800000 | (r & 0x7FFFFF)) − 1",
    "rand2": "Rand2: d = fl(max − min), p = fl(d·f), v = fl(min + p), then the cast",
    "cast-int": "Rand2 into an int dtype: RNE then clamp (fidelity N12)",
    "dropout": "Dropout: DropRate u < prob drops / KeepRate u < prob keeps; dropped = all-zero bits, kept = bits",
}
AUTO_RULES = {"Rand": ["step", "rand-bits"], "Rand2": ["step", "unit", "rand2"], "Dropout": ["step", "unit", "dropout"],
              "RandSetState": ["set"], "RandGetState": ["get"], "GetRandState": ["get"], "SetRandState": ["seed"]}


def differ(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype.kind == "f":
        a, b = a.view(UNSIGNED_OF[a.dtype.itemsize]), b.view(UNSIGNED_OF[b.dtype.itemsize])
    return int((a != b).sum())


def case(name, build, note, source, alts=(), rules=(), choices=(), not_rules=()):
    """Builds case `name` with build(Run()); for each alternative reading in `alts`, rebuilds it under
    that reading and counts the expected output values that change."""
    assert name not in CASES, name
    R = Run()
    build(R, name)
    g = R.g
    ops = sorted({i["opcode"] for i in g.insts} - {"Load", "Save"})
    engines = {i["engine"] for i in g.insts if i["opcode"] in AUTO_RULES}
    rs = []
    for o in ops:
        rs += AUTO_RULES.get(o, [])
    rs += (["pool-init"] if "Pool" in engines else []) + (["dve-init", "lanes"] if "DVE" in engines else [])
    rs += list(rules)
    rs = [r for r in RULES if r in rs and r not in not_rules]
    # D7 (ASSUMED in part: the Pool rows' initial / seeded state, SetRandState reseeding) where a case
    # depends on the Pool initial state or on SetRandState
    ch = list(choices) + (["D7"] if "pool-init" in rs or "seed" in rs else [])
    # The fidelity rows of the random family (docs/fidelity.md R1-R4, ASSUMED in part): every case
    # draws from or reads the generators (R1); the state instructions rest on R2, Rand and Rand2 on
    # R3, Dropout on R4.
    ch += ["R1"]
    ch += ["R2"] if {"RandSetState", "RandGetState", "GetRandState"} & set(ops) else []
    ch += ["R3"] if {"Rand", "Rand2"} & set(ops) else []
    ch += ["R4"] if "Dropout" in ops else []
    CASES[name] = (g, note, source, ops, sorted(set(ch)), rs)
    for alt in alts:
        A = Run(alt)
        build(A, name)
        n = sum(differ(A.g.outputs[k], v) for k, v in g.outputs.items())
        tot = sum(v.size for v in g.outputs.values())
        SENS.append((name, ALTS[alt], f"{n} of {tot}"))


AWS = "aws-neuron/aws-neuron-sdk"
ISA = f"{AWS} nki/api/nki/isa/__init__.py"
SRC_RNG = f"{ISA} (rng); SPEC.md Rand"
SRC_STATE = f"{ISA} (rand_set_state, rand_get_state); SPEC.md RandSetState / RandGetState"
SRC_SEED = "SPEC.md SetRandState; docs/bir-json.md SetRandState; docs/fidelity.md D7"
SRC_RAND2 = f"{ISA} (rand2); SPEC.md Rand2"
SRC_DROP = f"{ISA} (dropout); SPEC.md Dropout"
SRC_DROP_TEST = f"{AWS} nki/test/test_nki_isa_dropout.py and {ISA} (dropout); SPEC.md Dropout"


def hexrow(a):
    return "[" + ", ".join(f"0x{int(v):08X}" for v in np.asarray(a).reshape(-1)) + "]"


# ================================================================ 1. Rand
def rand_dve_fresh(R, name):
    R.sb("a_t", U32, 4, 16)
    R.sb("b_t", U32, 4, 16)
    da = R.rand("DVE", "a_t")
    db = R.rand("DVE", "b_t")
    if R.alt is None:
        # all lanes and rows start equal: element e is the (e // 4 + 1)-th draw of the all-ones Xorwow
        ref = Xorwow([M32] * 6)
        seq = [ref.step() for _ in range(8)]
        assert da.tolist() == [[seq[e // 4] for e in range(16)]] * 4
        assert db.tolist() == [[seq[4 + e // 4] for e in range(16)]] * 4
        SANITY.append((name, "fresh DVE state: every row and lane is the all-ones Xorwow, so element e of "
                       "the first Rand is its (e // 4 + 1)-th draw and the second Rand continues at the 5th",
                       f"holds; first draws {hexrow(seq[:2])}"))
    R.save("a_t", "a")
    R.save("b_t", "b")


case("rand_dve_uint32_fresh", rand_dve_fresh,
     "Rand on DVE into uint32 [4, 16] from the fresh state (every word of every lane 0xFFFFFFFF: all rows and "
     "lanes equal, element e from lane e % 4 so columns 4k..4k+3 hold the same draw), then a second Rand into "
     "another [4, 16] tile continuing the same state. Outputs: a, b", SRC_RNG,
     alts=["one_lane", "no_persist", "dve_init_pool", "no_weyl"], rules=["persist"])


def rand_pool_fresh(R, name):
    R.sb("a_t", U32, 5, 7)
    R.sb("b_t", U32, 5, 7)
    da = R.rand("Pool", "a_t")
    R.rand("Pool", "b_t")
    if R.alt is None:
        for r in range(5):
            x = Xorwow([M32] * 4 + [M32 ^ r, 0])
            assert da[r].tolist() == [x.step() for _ in range(7)]
        assert len({tuple(v) for v in da.tolist()}) == 5
    R.save("a_t", "a")
    R.save("b_t", "b")


case("rand_pool_uint32_fresh", rand_pool_fresh,
     "Rand on Pool into uint32 [5, 7] from the fresh state (row r: s0..s3 = 0xFFFFFFFF, s4 = 0xFFFFFFFF ^ r, "
     "counter 0: five different rows), then a second Rand [5, 7] continuing each row. Outputs: a, b", SRC_RNG,
     alts=["no_persist", "no_weyl"], rules=["persist"])


NARROW = [I8, U8, I16, U16, I32, U32]


def rand_narrow(eng):
    def build(R, name):
        for dt in NARROW:
            R.sb(f"{dt}_t", dt, 6, 10)
            R.rand(eng, f"{dt}_t")
        for dt in NARROW:
            R.save(f"{dt}_t", dt)
    return build


for _eng in ("DVE", "Pool"):
    case(f"rand_{_eng.lower()}_narrow_dtypes", rand_narrow(_eng),
         f"Rand on {_eng} into [6, 10] tiles of int8, uint8, int16, uint16, int32, uint32 in turn (one state "
         "continuing through the six): each element the low 8 / 16 / 32 bits of its draw (int8 / int16 the "
         "same bits read as two's complement). Outputs: one per dtype", SRC_RNG,
         alts=["high_bits", "no_persist"] + (["one_lane"] if _eng == "DVE" else []), rules=["persist"])


def rand_rows_ap(R, name):
    # tiles of 8 partitions; the first Rands write partitions 2..5 (AP rows 0..3), the second all 8
    init = np.full((8, 6), 0xA5A5A5A5, np.uint32)
    for eng in ("Pool", "DVE"):
        e = eng.lower()
        t1 = R.load(f"{e}_first", U32, init)
        R.rand(eng, t1, pairs=[[6, 4], [1, 6]], offset=12)
        R.sb(f"{e}_second_t", U32, 8, 6)
        R.rand(eng, f"{e}_second_t")
        R.save(t1, f"{e}_first_out")
        R.save(f"{e}_second_t", f"{e}_second")


case("rand_rows_relative_to_ap", rand_rows_ap,
     "Per engine (Pool, then DVE): Rand uint32 through an AP on partitions 2..5 of an [8, 6] tile Loaded with "
     "0xA5A5A5A5 (AP rows 0..3: the state rows 0..3, Pool s4 = ~0 ^ 0..3; partitions 0, 1, 6, 7 keep the fill), "
     "then Rand on a whole [8, 6] tile: rows 0..3 continue, rows 4..7 start fresh. Outputs: pool_first_out, "
     "pool_second, dve_first_out, dve_second", SRC_RNG,
     alts=["abs_rows", "no_persist"], rules=["rows", "persist"])


# ================================================================ 2. RandSetState / RandGetState / GetRandState
def get_state_initial(R, name):
    for eng, P in (("DVE", 128), ("Pool", 128)):
        e = eng.lower()
        R.sb(f"{e}_t", U32, P, WORDS[eng])
        st = R.rand_get_state(eng, f"{e}_t")
        R.sb(f"{e}_again_t", U32, P, WORDS[eng])
        st2 = R.rand_get_state(eng, f"{e}_again_t", opcode="GetRandState")
        if R.alt is None:
            assert (st == st2).all()
            if eng == "DVE":
                assert (st == M32).all()
            else:
                want = np.array([[M32] * 4 + [M32 ^ r, 0] for r in range(P)], np.uint32)
                assert (st == want).all()
    for eng in ("DVE", "Pool"):
        e = eng.lower()
        R.save(f"{e}_t", f"{e}_state")
        R.save(f"{e}_again_t", f"{e}_state_again")


case("rand_get_state_initial", get_state_initial,
     "At the start of the run: RandGetState on DVE into uint32 [128, 24] (every word 0xFFFFFFFF) and "
     "GetRandState (58) on DVE into another [128, 24] (the same: nothing advanced); then RandGetState on Pool "
     "[128, 6] (row r: 0xFFFFFFFF x 4, 0xFFFFFFFF ^ r, 0) and GetRandState on Pool (the same). "
     "Outputs: dve_state, dve_state_again, pool_state, pool_state_again", SRC_STATE,
     alts=["dve_init_pool"], rules=["rows"], not_rules=["lanes"])


def random_words(rng, P, k):
    return rng.integers(0, 2 ** 32, (P, k), dtype=np.uint64).astype(np.uint32)


def set_state_then_rand(eng):
    def build(R, name):
        rng = rng_for(name)
        k = WORDS[eng]
        P = 8
        w = random_words(rng, P, k)
        # row 2: the generator(s) all zero but the counter; row 5 (DVE: lane 2 only) zero s0..s4, counter 0
        if eng == "Pool":
            w[2, :5] = 0
            w[5, :] = 0
        else:
            for l in range(4):
                w[2, 6 * l:6 * l + 5] = 0
            w[5, 12:18] = 0
        src = R.load("seeds", U32, w)
        R.rand_set_state(eng, src)
        R.sb("st0_t", U32, P, k)
        st0 = R.rand_get_state(eng, "st0_t")
        R.sb("x_t", U32, P, 10)
        R.rand(eng, "x_t")
        R.sb("st1_t", U32, P, k)
        st1 = R.rand_get_state(eng, "st1_t", opcode="GetRandState")
        R.sb("rest_t", U32, 12, k)
        R.rand_get_state(eng, "rest_t")  # rows 8..11 never set: their initial state
        if R.alt is None:
            want = w.copy()
            for l in range(k // 6):
                z = (want[:, 6 * l:6 * l + 5] == 0).all(axis=1)
                want[z, 6 * l + 4] = 1
            assert (st0 == want).all()
            # the state after the draws equals the vectorised coding's
            gw = want.reshape(P * (k // 6), 6)
            n_per = np.array([10 if eng == "Pool" else len(range(l, 10, 4)) for _ in range(P) for l in range(k // 6)])
            fin = []
            for i in range(gw.shape[0]):
                _, f = _np_xorwow(gw[i:i + 1], int(n_per[i]))
                fin.append(f[0])
            assert (np.array(fin, np.uint32).reshape(P, k) == st1).all()
            SANITY.append((name, "state after the Rand (GetRandState) = the set state advanced 10 draws (Pool) / "
                           "3, 3, 2, 2 draws (DVE lanes 0..3) by the NumPy uint32 coding", "equal"))
        R.save("st0_t", "state_set")
        R.save("x_t", "x")
        R.save("st1_t", "state_after")
        R.save("rest_t", "state_rows_0_11")
    return build


case("rand_set_state_pool_then_rand", set_state_then_rand("Pool"),
     "RandSetState on Pool from an input uint32 [8, 6] (random words; row 2 s0..s4 = 0 with a random counter, "
     "row 5 all zero: both restored with s4 = 1), RandGetState [8, 6] (the words as set), Rand uint32 [8, 10], "
     "GetRandState (58) [8, 6] (each row advanced 10 steps), RandGetState [12, 6] (rows 8..11 never set: their "
     "initial state). Outputs: state_set, x, state_after, state_rows_0_11", SRC_STATE,
     alts=["no_zero_fix", "no_weyl"], rules=["zero-fix", "rows", "persist"])
case("rand_set_state_dve_then_rand", set_state_then_rand("DVE"),
     "RandSetState on DVE from an input uint32 [8, 24] (random words: lanes 0..3 of a row differ; row 2 every "
     "lane's s0..s4 = 0, row 5 lane 2 all zero: restored with s4 = 1), RandGetState [8, 24], Rand uint32 "
     "[8, 10] (lanes 0, 1 serve 3 elements, lanes 2, 3 two), GetRandState (58) [8, 24], RandGetState [12, 24] "
     "(rows 8..11: all ones). Outputs: state_set, x, state_after, state_rows_0_11", SRC_STATE,
     alts=["no_zero_fix", "one_lane", "lanes_blocked"], rules=["zero-fix", "rows", "persist"])


def dve_lanes_3d(R, name):
    rng = rng_for(name)
    P = 4
    w = random_words(rng, P, 24)
    R.rand_set_state("DVE", R.load("seeds", U32, w))
    # a [4, 12] tile written through [[12, 4], [1, 4], [4, 3]]: AP element e = 3 i + j lands at i + 4 j
    R.sb("x_t", U32, P, 12)
    dr = R.rand("DVE", "x_t", pairs=[[12, P], [1, 4], [4, 3]])
    if R.alt is None:
        x = R.tiles["x_t"][1]
        assert x[0, 1 + 4 * 2] == dr[0, 5]
    R.save("x_t", "x")


case("rand_dve_lanes_3d_ap", dve_lanes_3d,
     "RandSetState DVE (random words: four different lanes per row), then Rand uint32 through the 3-level AP "
     "[[12, 4], [1, 4], [4, 3]] on a [4, 12] tile: AP element e = 3i + j (lane e % 4) lands at column i + 4j, "
     "so the lanes interleave in memory. Output: x", SRC_RNG + "; " + SRC_STATE,
     alts=["lanes_blocked", "one_lane"], rules=["set"], not_rules=["dve-init"])


def zero_rows(R, name):
    P = 4
    wp = np.zeros((P, 6), np.uint32)
    wp[1, 5] = 7  # counter 7, s0..s4 zero
    wp[2, 4] = 5  # not all zero: kept
    wp[3, 0] = 1
    wd = np.zeros((P, 24), np.uint32)
    wd[1, 5::6] = [1, 2, 3, 0xFFFFFFFF]
    wd[2, 6 + 3] = 9  # lane 1 of row 2 not all zero
    for eng, w in (("Pool", wp), ("DVE", wd)):
        e = eng.lower()
        R.rand_set_state(eng, R.load(f"{e}_seeds", U32, w))
        R.sb(f"{e}_st_t", U32, P, WORDS[eng])
        R.rand_get_state(eng, f"{e}_st_t")
        R.sb(f"{e}_x_t", U32, P, 8)
        R.rand(eng, f"{e}_x_t")
    for eng in ("Pool", "DVE"):
        e = eng.lower()
        R.save(f"{e}_st_t", f"{e}_state")
        R.save(f"{e}_x_t", f"{e}_x")


case("rand_set_state_zero_rows", zero_rows,
     "RandSetState of all-zero rows: Pool [4, 6] (row 0 all zero, row 1 counter 7 only, row 2 s4 = 5, row 3 "
     "s0 = 1) and DVE [4, 24] (rows 0, 3 all zero, row 1 counters 1, 2, 3, 0xFFFFFFFF only, row 2 lane 1 "
     "s3 = 9): RandGetState shows s4 = 1 exactly where s0..s4 were all zero, counters as given; Rand uint32 "
     "[4, 8] on each. Outputs: pool_state, pool_x, dve_state, dve_x", SRC_STATE,
     alts=["no_zero_fix"], rules=["zero-fix"], not_rules=["pool-init", "dve-init"])


# ================================================================ 3. SetRandState
SEED_A = 0x0012_3456_89AB_CDEF  # < 2^53: exact in any JSON reader
SEED_B = 0xFEDC_BA98_7654_3210  # > 2^63, given through a uint64 tensor


def seed_imm(R, name):
    R.set_rand_state(SEED_A, engine="Pool")
    R.sb("dve_t", U32, 6, 12)
    R.rand("DVE", "dve_t")
    R.sb("pool_t", U32, 6, 7)
    R.rand("Pool", "pool_t")
    R.sb("dve_st_t", U32, 8, 24)
    st = R.rand_get_state("DVE", "dve_st_t")
    R.sb("pool_st_t", U32, 8, 6)
    R.rand_get_state("Pool", "pool_st_t")
    if R.alt is None:
        assert (st[6:] == [SEED_A & M32, SEED_A >> 32, M32, M32, M32, M32] * 4).all()
    for t in ("dve", "pool", "dve_st", "pool_st"):
        R.save(f"{t}_t", t)


case("set_rand_state_seed_imm", seed_imm,
     f"SetRandState (engine Pool) with an uint64 immediate seed 0x{SEED_A:016X}, then Rand uint32 on DVE [6, 12] "
     "(every lane s0 = S_lo, s1 = S_hi, s2 = s3 = s4 = ~0, counter ~0) and on Pool [6, 7] (row r: S_lo, S_hi, "
     "~0, ~0, ~0 ^ r, 0), then RandGetState DVE [8, 24] and Pool [8, 6] (rows 6, 7 untouched since the seed: "
     "the seeded state). Outputs: dve, pool, dve_st, pool_st", SRC_SEED,
     alts=["seed_pool_only", "no_persist"], rules=["rows"], not_rules=["dve-init"])


def seed_ap(R, name):
    R.sb("a_dve_t", U32, 4, 8)
    R.rand("DVE", "a_dve_t")
    R.sb("a_pool_t", U32, 4, 8)
    R.rand("Pool", "a_pool_t")
    s = R.load("seed", U64, np.array([[SEED_B]], np.uint64))
    R.set_rand_state(SEED_B, engine="DVE", operand=ap(s, U64, [[1, 1], [1, 1]]))
    R.sb("b_dve_t", U32, 4, 8)
    R.rand("DVE", "b_dve_t")
    R.sb("b_pool_t", U32, 4, 8)
    R.rand("Pool", "b_pool_t")
    for t in ("a_dve", "a_pool", "b_dve", "b_pool"):
        R.save(f"{t}_t", t)


case("set_rand_state_seed_ap_after_draws", seed_ap,
     "Rand uint32 [4, 8] on DVE and on Pool from the fresh state, then SetRandState (engine DVE) with its seed "
     f"read from a one-value uint64 tensor AP holding 0x{SEED_B:016X} (S_hi 0xFEDCBA98, S_lo 0x76543210), then "
     "Rand [4, 8] on DVE and on Pool again: both engines restart from the seeded state (the earlier draws "
     "forgotten). Outputs: a_dve, a_pool, b_dve, b_pool", SRC_SEED,
     alts=["seed_pool_only"], rules=["persist"])


# ================================================================ 4. Rand2
def rand2_imm_floats(R, name):
    for dt in (FP32, BF16, FP16):
        R.sb(f"{dt}_t", dt, 16, 64)
        v = R.rand2("DVE", f"{dt}_t", -1.0, 3.0)
        if R.alt is None:
            assert (v >= -1).all() and (v < 3).all()
    for dt in (FP32, BF16, FP16):
        R.save(f"{dt}_t", dt)


case("rand2_dve_imm_float_dtypes", rand2_imm_floats,
     "Rand2 on DVE with immediate min -1.0, max 3.0 (d = 4: v = -1 + 4f exact in fp32) into float32, then "
     "bfloat16, then float16 [16, 64] (one state continuing; the narrow outputs by RNE of the fp32 v). "
     "Outputs: float32, bfloat16, float16", SRC_RAND2,
     alts=["unit_high", "one_lane", "no_persist"], rules=["persist"])


def rand2_ap_bounds(R, name):
    rng = rng_for(name)
    P = 32
    mn = rng.uniform(-50, 50, P).astype(F32)
    mx = (mn + rng.uniform(0.001, 30, P)).astype(F32)
    mn[3], mx[3] = -0.0, 0.0  # an empty range: d = +0, v = -0 + +0 = +0
    mn[4], mx[4] = 7.0, 7.0
    mn[5], mx[5] = F32(1e-3), F32(1e-3 + 2 ** -20)
    b = R.load("bounds", FP32, np.stack([mn, mx], axis=1))
    R.sb("x_t", FP32, P, 40)
    v = R.rand2("DVE", "x_t", (b, 0), (b, 1))
    if R.alt is None:
        assert (v >= mn[:, None]).all() and (v <= mx[:, None]).all()
        assert (bits(v[3]) == 0).all() and (v[4] == 7).all()
        SANITY.append((name, "min <= v <= max on every row", "holds (row 3 min -0, max +0: v = +0 bits; "
                       "row 4 min = max = 7: v = 7)"))
    R.save("x_t", "x")


case("rand2_dve_ap_bounds", rand2_ap_bounds,
     "Rand2 on DVE into float32 [32, 40] with min and max per row: columns 0 and 1 of a [32, 2] fp32 tile "
     "(APs of one value per row, offsets 0 and 1, row step 2): random ranges; row 3 min -0.0, max +0.0 "
     "(v = -0 + +0 = +0); row 4 min = max = 7; row 5 a range of 2^-20 at 1e-3. Output: x", SRC_RAND2,
     alts=["rand2_f64", "rand2_lerp", "unit_high"])


def scramble(R, name, P, eng="DVE"):
    """RandSetState from random words (every row and lane different: under SPEC.md the fresh and the
    SetRandState-seeded DVE states are the same in every row and lane)."""
    R.rand_set_state(eng, R.load("seeds", U32, random_words(rng_for(name + "/seeds"), P, WORDS[eng])))


def rand2_wide(R, name):
    scramble(R, name, 8)
    R.sb("wide_t", FP32, 8, 64)
    R.rand2("DVE", "wide_t", -1e30, 1e30)
    R.sb("narrow_t", FP32, 8, 64)
    R.rand2("DVE", "narrow_t", 0.1, 0.3)
    R.sb("offset_t", FP32, 8, 64)
    R.rand2("DVE", "offset_t", 1000.0, 1000.001)
    for t in ("wide", "narrow", "offset"):
        R.save(f"{t}_t", t)


case("rand2_dve_rounding", rand2_wide,
     "RandSetState DVE from random words (rows and lanes all different), then "
     "Rand2 on DVE into float32 [8, 64] three times: min -1e30, max 1e30 (d = fl(2e30)); min 0.1, max 0.3 (fp32 "
     "immediates: d = fl(0.3 - 0.1), each of the three steps rounds); min 1000, max 1000.001 (v on a grid of "
     "2^-14 near 1000). Outputs: wide, narrow, offset", SRC_RAND2,
     alts=["rand2_f64", "rand2_lerp"], not_rules=["dve-init"])


def rand2_ints(R, name):
    scramble(R, name, 8)
    specs = [(I32, -100.0, 100.0), (I32, 0.5, 4194304.5), (I32, -1e10, 1e10), (I8, -200.0, 200.0),
             (U16, -10.0, 10.0), (U8, 0.0, 3.0)]
    for k, (dt, lo, hi) in enumerate(specs):
        R.sb(f"o{k}_t", dt, 8, 64)
        v = R.rand2("DVE", f"o{k}_t", lo, hi)
        if R.alt is None:
            out = R.tiles[f"o{k}_t"][1]
            if k == 1:
                half = (np.abs(v - np.floor(v)) == 0.5)
                SANITY.append((name, "int32 [0.5, 4194304.5): d = 2^22, v = 0.5 + k/2: ties (a .5 fraction; RNE "
                               "to even)", f"{int(half.sum())} of {v.size}"))
            if k == 2:
                info = np.iinfo(np.int32)
                SANITY.append((name, "int32 [-1e10, 1e10): clamped to INT32_MAX / INT32_MIN (N12)",
                               f"{int((out == info.max).sum())} / {int((out == info.min).sum())} of {out.size}"))
    for k in range(len(specs)):
        R.save(f"o{k}_t", f"o{k}")


case("rand2_dve_int_dtypes", rand2_ints,
     "RandSetState DVE from random words (rows and lanes all different), then "
     "Rand2 on DVE into int dtypes [8, 64] (fidelity N12: RNE, then clamp): int32 [-100, 100), int32 "
     "[0.5, 4194304.5) (d = 2^22: v = 0.5 + k/2, about half the values ties: to even), int32 [-1e10, 1e10) "
     "(most clamp to INT32_MAX / INT32_MIN), int8 [-200, 200) (clamp to -128 / 127), uint16 [-10, 10) "
     "(negatives clamp to 0), uint8 [0, 3). Outputs: o0..o5", SRC_RAND2 + "; docs/fidelity.md N12",
     alts=["int_trunc", "int_half_away", "rand2_f64", "unit_high"], rules=["cast-int"], not_rules=["dve-init"])


def rand2_pool(R, name):
    R.sb("x_t", FP32, 6, 20)
    R.rand2("Pool", "x_t", -2.0, 2.0)
    R.save("x_t", "x")


case("rand2_pool", rand2_pool,
     "Rand2 on Pool (SPEC allows it; AWS documents Rand2 on the Vector engine only) into float32 [6, 20], min -2, "
     "max 2: each row's one Xorwow (s4 = ~0 ^ r) in element order. Output: x", SRC_RAND2,
     alts=["unit_high"])


# ================================================================ 5. Dropout
def aws_dropout_data():
    """AWS test_nki_isa_dropout.py's inputs (its random_sample calls, seeded here with np.random.seed(0))."""
    np.random.seed(0)
    a = np.random.random_sample([128, 512]).astype(np.float32) * 100
    b = np.random.random_sample([128, 1]).astype(np.float32) * 100
    return a.astype(F32), b.astype(F32)


def dropout_aws_tile(R, name):
    a, b = aws_dropout_data()
    at = R.load("a", FP32, a)
    bt = R.load("b", FP32, b)
    R.sb("c_t", FP32, 128, 512)
    c = R.dropout("DVE", at, "c_t", (bt, 0))
    if R.alt is None:
        # AWS's check: assertFalse(np.allclose(c, zeros))
        ok = not np.allclose(c, np.zeros_like(c))
        SANITY.append((name, "AWS: assertFalse(np.allclose(c, c_zeros)); prob = b (per row, random × 100)",
                       f"{'holds' if ok else 'FAILS'}: rows with prob < 1: {int((b < 1).sum())}, elements kept "
                       f"{int((bits(c) != 0).sum())} of {c.size}"))
    R.save("c_t", "c")


case("dropout_aws_prob_tile", dropout_aws_tile,
     "AWS's dropout example 1 and test_dropout's data: a [128, 512] fp32 = random × 100, prob b [128, 1] fp32 = "
     "random × 100 (np.random.seed(0)), Dropout on DVE with prob the per-row AP b: rows with b >= 1 drop "
     "everything (u < 1 always). Output: c", SRC_DROP_TEST,
     alts=["le", "unit_high"])


def dropout_aws_scalar(R, name):
    a, _ = aws_dropout_data()
    at = R.load("a", FP32, a)
    R.sb("b_t", FP32, 128, 512)
    c = R.dropout("DVE", at, "b_t", 0.2)
    if R.alt is None:
        # fresh DVE state: all 128 rows and 4 lanes equal, so element (r, e) uses draw e // 4 of one
        # sequence: 128 independent draws, the same columns dropped in every row, in groups of 4
        drop = bits(c) == 0
        assert (drop == drop[0]).all() and (drop[0].reshape(128, 4) == drop[0, ::4, None]).all()
        frac = float(drop.mean())
        SANITY.append((name, "fresh DVE state: every row drops the same columns, in groups of 4 (e // 4): 128 "
                       "independent draws; dropped fraction (expect 0.2 ± 0.035 ≈ 1 sd)", f"{frac:.4f}; the pattern holds"))
        assert abs(frac - 0.2) < 0.1
        ok = not np.allclose(c, np.zeros_like(c))
        SANITY.append((name, "AWS: assertFalse(np.allclose(b, b_zeros))", "holds" if ok else "FAILS"))
    R.save("b_t", "b")


case("dropout_aws_scalar_0p2", dropout_aws_scalar,
     "AWS's dropout example 2 and test_dropout_scalar's data: a [128, 512] fp32 = random × 100 (np.random.seed(0)), "
     "Dropout on DVE with the immediate prob 0.2 (threshold_type absent: DropRate): an element dropped when "
     "u < fp32(0.2). Output: b", SRC_DROP_TEST,
     alts=["le", "unit_high", "one_lane"])


def dropout_prob_rows(R, name):
    rng = rng_for(name)
    P, n = 64, 48
    x = rng.normal(0, 10, (P, n)).astype(F32)
    # each row's draws, known in advance (fresh DVE state): set some rows' prob to exactly u of an element
    pre = Engines()
    u1 = unit(pre.draws("DVE", list(range(P)), n))  # the DropRate instruction's u
    u2 = unit(pre.draws("DVE", list(range(P)), n))  # the KeepRate one's (continuing)
    prob = rng.uniform(0, 1, P).astype(F32)
    prob[0], prob[1], prob[2] = 0.0, 1.0, F32(0.5)
    for r in range(3, 12):
        prob[r] = u1[r, r]  # u == prob: not dropped by DropRate
    prob[12] = F32(2.0)
    prob[13] = F32(-0.5)
    for r in range(14, 23):
        prob[r] = u2[r, r + 3]  # u == prob: not kept by KeepRate
    pt = R.load("prob", FP32, prob.reshape(P, 1))
    xt = R.load("x", FP32, x)
    R.sb("drop_t", FP32, P, n)
    R.dropout("DVE", xt, "drop_t", (pt, 0), keep_rate="DropRate")
    R.sb("keep_t", FP32, P, n)
    R.dropout("DVE", xt, "keep_t", (pt, 0), keep_rate="KeepRate")
    R.save("drop_t", "drop")
    R.save("keep_t", "keep")


case("dropout_prob_ap_boundaries", dropout_prob_rows,
     "Dropout on DVE, fp32 data [64, 48], prob per row (a [64, 1] fp32 AP): row 0 prob 0, row 1 prob 1, row 2 "
     "0.5, rows 3..11 prob = exactly the DropRate instruction's u of element r (strict u < prob: kept; the "
     "fresh DVE state gives the 4 elements of group r // 4 that u), row 12 prob 2, row 13 prob -0.5, rows "
     "14..22 prob = exactly the KeepRate instruction's u of element r + 3 (not kept), the rest random; first "
     "threshold_type DropRate (given explicitly), then KeepRate on the same data (continuing the state). "
     "Outputs: drop, keep", SRC_DROP,
     alts=["le", "unit_high", "no_persist"])


def dropout_0_1(R, name):
    rng = rng_for(name)
    P, n = 8, 32
    x = rng.normal(0, 1, (P, n)).astype(F32)
    xt = R.load("x", FP32, x)
    for k, (p, kr) in enumerate([(0.0, None), (1.0, None), (0.0, "KeepRate"), (1.0, "KeepRate")]):
        R.sb(f"d{k}_t", FP32, P, n)
        out = R.dropout("DVE", xt, f"d{k}_t", p, keep_rate=kr)
        if R.alt is None:
            kept = (p == 0.0) == (kr is None)
            assert (out == x).all() if kept else (bits(out) == 0).all()
    R.sb("after_t", U32, P, 8)
    R.rand("DVE", "after_t")
    for k in range(4):
        R.save(f"d{k}_t", f"d{k}")
    R.save("after_t", "after")


case("dropout_prob_0_and_1", dropout_0_1,
     "Dropout on DVE, fp32 [8, 32], immediate prob: 0 DropRate (all kept), 1 DropRate (all +0), 0 KeepRate "
     "(all +0), 1 KeepRate (all kept); then Rand uint32 [8, 8]: each Dropout drew one value per element "
     "anyway. Outputs: d0..d3, after", SRC_DROP,
     alts=["skip_draws"], rules=["persist"])


def dropout_dtype(dt):
    def build(R, name):
        rng = rng_for(name)
        P, n = 16, 40
        if dt == BF16:
            raw = rng.normal(0, 4, (P, n)).astype(F32).astype(md.bfloat16).view(np.uint16)
            raw[0, :4] = [0x8000, 0x7FC0, 0xFFC1, 0x7F81]  # -0, NaN, -NaN payload, signalling NaN
        else:
            raw = rng.integers(-2 ** 31, 2 ** 31, (P, n), dtype=np.int64).astype(np.int32)
        xt = R.load("x", dt, raw)
        pt = R.load("prob", FP32, rng.uniform(0.1, 0.9, (P, 1)).astype(F32))
        R.sb("y_t", dt, P, n)
        R.dropout("DVE", xt, "y_t", 0.3)
        R.sb("z_t", dt, P, n)
        R.dropout("DVE", xt, "z_t", (pt, 0), keep_rate="KeepRate")
        R.save("y_t", "y")
        R.save("z_t", "z")
    return build


case("dropout_bf16", dropout_dtype(BF16),
     "Dropout on DVE with bfloat16 data [16, 40] (row 0 starts with -0, NaN 0x7FC0, 0xFFC1, 0x7F81): immediate "
     "prob 0.3 (DropRate), then a per-row fp32 prob AP with KeepRate: kept elements keep their 16 bits, dropped "
     "ones 0x0000. Outputs: y, z", SRC_DROP, alts=["le", "unit_high"])
case("dropout_int32", dropout_dtype(I32),
     "Dropout on DVE with int32 data [16, 40] (random 32-bit patterns): immediate prob 0.3 (DropRate), then a "
     "per-row fp32 prob AP with KeepRate: kept elements keep their bits, dropped ones 0. Outputs: y, z", SRC_DROP,
     alts=["le", "unit_high"])


def dropout_bits(R, name):
    rng = rng_for(name)
    P, n = 8, 64
    pats = np.array([0x80000000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0xFF812345, 0x7F800000,
                     0xFF800000, 0x00000001, 0x80000001, 0x3F800000], np.uint32)
    raw = pats[rng.integers(0, pats.size, (P, n))].view(F32)
    xt = R.load("x", FP32, raw)
    R.sb("y_t", FP32, P, n)
    y = R.dropout("DVE", xt, "y_t", 0.5)
    if R.alt is None:
        yb, xb = bits(y), bits(raw)
        assert ((yb == xb) | (yb == 0)).all()
        SANITY.append((name, "kept elements bit-equal to the input, dropped ones 0x00000000",
                       f"holds: {int(((yb == xb) & (xb != 0)).sum())} kept, {int((yb == 0).sum())} zero"))
    R.save("y_t", "y")


case("dropout_negzero_nan_bits", dropout_bits,
     "Dropout on DVE, fp32 [8, 64] of special patterns (-0, NaN 0x7FC00000, -NaN 0xFFC00000, payload NaNs "
     "0x7FC00001, signalling 0x7F800001, 0xFF812345, +-Inf, +-denormal 1, 1.0), prob 0.5: a kept element keeps "
     "its bits, a dropped one becomes +0 (0x00000000, also for -0 and NaN). Output: y", SRC_DROP,
     alts=["le"])


def dropout_pool(R, name):
    rng = rng_for(name)
    P, n = 16, 48
    x = rng.normal(0, 1, (P, n)).astype(F32)
    xt = R.load("x", FP32, x)
    pt = R.load("prob", FP32, rng.uniform(0, 1, (P, 1)).astype(F32))
    R.sb("y_t", FP32, P, n)
    R.dropout("Pool", xt, "y_t", 0.25)
    R.sb("z_t", FP32, P, n)
    R.dropout("Pool", xt, "z_t", (pt, 0), keep_rate="KeepRate")
    R.save("y_t", "y")
    R.save("z_t", "z")


case("dropout_pool", dropout_pool,
     "Dropout on Pool (SPEC allows it; AWS documents the Vector engine), fp32 [16, 48]: immediate prob 0.25 "
     "(DropRate), then a per-row prob AP with KeepRate: each row's one Xorwow (s4 = ~0 ^ r), continuing. "
     "Outputs: y, z", SRC_DROP, alts=["le", "unit_high", "no_persist"], rules=["persist"])


# ================================================================ 6. engines independent, state persistent
def sequence(R, name):
    rng = rng_for(name)
    P = 16
    x = rng.normal(0, 1, (P, 32)).astype(F32)
    xt = R.load("x", FP32, x)
    R.sb("r1_t", U32, P, 12)
    R.rand("DVE", "r1_t")
    R.sb("p1_t", U32, P, 12)
    R.rand("Pool", "p1_t")
    R.sb("d1_t", FP32, P, 32)
    R.dropout("DVE", xt, "d1_t", 0.5)
    R.sb("u1_t", FP32, P, 20)
    R.rand2("DVE", "u1_t", 0.0, 1.0)
    R.sb("d2_t", FP32, P, 32)
    R.dropout("Pool", xt, "d2_t", 0.5)
    R.sb("sd_t", U32, P, 24)
    R.rand_get_state("DVE", "sd_t")
    R.sb("sp_t", U32, P, 6)
    R.rand_get_state("Pool", "sp_t", opcode="GetRandState")
    R.sb("r2_t", U16, P, 12)
    R.rand("DVE", "r2_t")
    R.sb("p2_t", U16, P, 12)
    R.rand("Pool", "p2_t")
    if R.alt is None:
        # the DVE lanes advanced 3 + 8 + 5 = 16 times each, the Pool rows 12 + 32 = 44 times
        lane = Xorwow([M32] * 6)
        for _ in range(16):
            lane.step()
        assert (R.tiles["sd_t"][1] == np.array(lane.w * 4, np.uint32)).all()
        for r in (0, 9):
            g = Xorwow([M32] * 4 + [M32 ^ r, 0])
            for _ in range(44):
                g.step()
            assert R.tiles["sp_t"][1][r].tolist() == g.w
        SANITY.append((name, "RandGetState: DVE lanes advanced 3 + 8 + 5 = 16 steps, Pool rows 12 + 32 = 44, "
                       "each by its own engine's instructions only", "holds"))
    for t in ("r1", "p1", "d1", "u1", "d2", "sd", "sp", "r2", "p2"):
        R.save(f"{t}_t", t)


case("rng_engines_independent_sequence", sequence,
     "One run mixing engines, P = 16: Rand DVE uint32 [16, 12], Rand Pool uint32 [16, 12], Dropout DVE (prob 0.5) "
     "fp32 [16, 32], Rand2 DVE [0, 1) fp32 [16, 20], Dropout Pool (prob 0.5) [16, 32], RandGetState DVE [16, 24], "
     "GetRandState Pool [16, 6], Rand DVE uint16 [16, 12], Rand Pool uint16 [16, 12]: each engine's state "
     "advances only with its own instructions and persists across them. Outputs: r1, p1, d1, u1, d2, sd, sp, "
     "r2, p2", f"{ISA} (rng, dropout, rand2, rand_get_state); SPEC.md",
     alts=["no_persist", "one_lane", "dve_init_pool"], rules=["persist"])


# ---------------------------------------------------------------- writing
def readme_section():
    out = ["<!-- BEGIN GENERATED by make_cases.py: do not edit by hand -->", "",
           f"### Cases ({len(CASES)})", "",
           "| case | instructions (besides Load / Save) | choices | spec rules | follows | what |",
           "|---|---|---|---|---|---|"]
    for name, (g, note, source, ops, choices, rules) in CASES.items():
        out.append(f"| `{name}` | {', '.join(ops)} | {', '.join(choices) or '-'} | {', '.join(rules)} | {source} | {note} |")
    out += ["", "### Sanity checks", "", "| case | check | result |", "|---|---|---|"]
    for c, what, res in SANITY:
        out.append(f"| `{c}` | {what} | {res} |")
    out += ["", "### What the expected bits distinguish", "",
            "Each row: an alternative reading and how many expected output values it would change (the case "
            "rebuilt by the generator under that reading).", "", "| case | alternative | changed |", "|---|---|---|"]
    for c, alt, k in SENS:
        out.append(f"| `{c}` | {alt} | {k} |")
    out += ["", "<!-- END GENERATED -->", ""]
    return "\n".join(out)


def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, source, ops, choices, rules) in CASES.items():
        lines = [f"# {note}", f"# follows {source}",
                 f"# spec rules (README.md): {', '.join(rules)}",
                 "# expected outputs from make_cases.py (plain-Python Xorwow and NumPy / ml_dtypes emulation of "
                 "SPEC.md, docs/bir-json.md and docs/fidelity.md), never from birsim"]
        lines += [f"choice: {c}" for c in choices]
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
