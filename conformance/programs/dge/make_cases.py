#!/usr/bin/env python3
"""Writes the `programs/dge` conformance suite: BIR JSON programs, .npy inputs and expected .npy outputs
for SW-DGE (DMATrigger -> DMABlock -> DMADescriptor{Copy,CCE,Transpose,Replicate}, the per-trigger
round-robin cursor, ResetQueueInstance / SwitchQueueInstance) and the HW-DGE bridge (DMACopy Copy with a
`vector_offset`: scatter on outs[0], gather on ins[0]), computed here with NumPy / ml_dtypes from the
contract /work/dge-decisions.md §1, §2, §4 (seed 000 §5.1-5.2, §6, §7; re-facts §5; docs/fidelity.md
D1-D4, I2, I12), independently of birsim.

The oracle is a tiny interpreter over flat element arrays (every location sits at addr 0, so AP element
e is flat element e of its location; docs/bir-json.md "Access patterns"). A program is a list of nodes
(instructions, Loops, DMABlocks, DMATriggers, queue resets); the interpreter runs them, keeps one fire
counter per trigger name, and records every data-moving instruction it executes. Each trigger program
gets a twin `<case>_direct`: that record written as plain DMACopy instructions (descriptor kinds mapped
to the DMACopy modes, loops unrolled); the twin is run through the same interpreter and its outputs are
asserted equal. HW-DGE adds widen to fp32, add, and round back to the destination dtype at EVERY step
(ints wrap); the duplicate-add cases assert this differs from one sum rounded once.

Cases that depend on an ASSUMED contract row carry `choice: G<n>` (or D<n> / I<n> of the data-movement
and indirection rows). Run: /work/main/.venv/bin/python conformance/programs/dge/make_cases.py
"""
import copy as pycopy
import os
import sys
import warnings

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import LET, ap, ap_index, four_level, tile  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
RNG = np.random.default_rng(20261301)

# ---------------------------------------------------------------- dtypes (refsim narrowing, as programs/datamove)
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "int32": np.int32, "uint8": np.uint8,
         "int8": np.int8, "int16": np.int16, "uint16": np.uint16, "uint32": np.uint32}
SIZE = {k: np.dtype(v).itemsize for k, v in STORE.items()}
ML = {"bfloat16": md.bfloat16}
FLOATS = ("float32", "bfloat16", "float16")
REDUCIBLE = FLOATS + ("int32",)  # of these dtypes (re-facts §8 reducible set)


def decode(raw, dt):
    """Stored values -> float32."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    return raw.astype(F32)


def encode(x, dt):
    """float32 -> stored values: RNE (ml_dtypes / NumPy); NaN canonical for bf16; ints round and clamp."""
    x = np.asarray(x, F32)
    nan = np.isnan(x)
    if dt == "float32":
        return x.copy()
    if dt == "bfloat16":
        b = x.astype(md.bfloat16).view(np.uint16)
        return np.where(nan, 0x7FC0, b).astype(np.uint16)
    if dt == "float16":
        return x.astype(np.float16)
    assert not nan.any()
    info = np.iinfo(STORE[dt])
    return np.clip(np.rint(x.astype(np.float64)), info.min, info.max).astype(STORE[dt])


def cast(raw, src_dt, dst_dt):
    """The project cast: bit-exact when the dtypes match, else through fp32."""
    if src_dt == dst_dt:
        return np.asarray(raw).astype(STORE[dst_dt]).copy()
    return encode(decode(raw, src_dt), dst_dt)


def acc_add(dst, src, dt):
    """cast_copy_or_accumulate(add), one step: floats widen to fp32, add, round back; int32 wraps."""
    if dt in FLOATS:
        return encode(decode(dst, dt) + decode(src, dt), dt)
    if dt == "int32":
        return (dst.astype(np.int64) + src.astype(np.int64)).astype(np.uint64).astype(np.uint32).view(np.int32)
    raise Fault("numerics", "")


def fmaxf(a, b):
    """glibc fmaxf: a NaN operand yields the other; a ±0 tie returns the first argument (D4)."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b > a, b, a))).astype(F32)


def fminf(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b < a, b, a))).astype(F32)


def fp32_vals(shape, scale=8.0):
    return (RNG.standard_normal(shape) * scale).astype(F32)


def distinct(p, f):
    k = np.arange(p * f, dtype=np.int64).reshape(p, f)
    return ((k + 0.25) * np.where(k % 2 == 0, 1, -1)).astype(F32)


def perm_of(code):
    """docs/bir-json.md DMACopy: perm[k] = the source axis of the code name's k-th letter (D2)."""
    return (0, 1, 2, 3) if code == "None" else tuple(LET[c] for c in code)


# ---------------------------------------------------------------- the oracle interpreter
class Fault(Exception):
    """A guest fault: (kind, text the message must contain)."""


class Prog(birprog.Allocations):
    """Allocations + input data (birprog); the body is a node list given separately. `locs` maps each
    location to (dtype, elements, shape) for the interpreter; `outs` lists the external outputs."""
    STORE, SIZE = STORE, SIZE

    def __init__(self):
        super().__init__()
        self.locs, self.outs, self.pre = {}, [], []

    def _alloc(self, name, kind, dt, shape, *rest):
        assert name not in self.locs, name
        super()._alloc(name, kind, dt, shape, *rest)
        self.locs[name] = (dt, int(np.prod(shape)), tuple(shape))

    def dram_out(self, name, dt, p, f):
        """External output `name` (p x f): its expected values come from the interpreter."""
        self._dram_out(name, dt, (p, f))
        self.outs.append(name)

    def tile_in(self, name, dt, raw):
        """DRAM input `name`_in and SB tile `name`_t; a Load node is queued in self.pre."""
        p, f = self.dram_in(name + "_in", dt, raw)
        self.sb(name + "_t", dt, p, f)
        self.pre.append(load(tile(name + "_in", dt, p, f), tile(name + "_t", dt, p, f)))
        return name + "_t"

    def out_prefilled(self, name, dt, init):
        """External output `name` pre-filled from input `name`0 (a queued Load)."""
        p, f = self.dram_in(name + "0", dt, init)
        self.dram_out(name, dt, p, f)
        self.pre.append(load(tile(name + "0", dt, p, f), tile(name, dt, p, f)))

    def save_all(self, tiles):
        """Save SB tiles (name, dt) to external outputs `name` without the _t; returns the Save nodes."""
        nodes = []
        for t, dt in tiles:
            _, _, (p, f) = self.locs[t]
            o = t[:-2] if t.endswith("_t") else t + "_out"
            self.dram_out(o, dt, p, f)
            nodes.append(save(tile(t, dt, p, f), tile(o, dt, p, f)))
        return nodes


def inst(opcode, ins, outs, engine="DMA", **fields):
    return ("inst", dict({"opcode": opcode, "engine": engine, "ins": ins, "outs": outs}, **fields))


def load(src, dst):
    return inst("Load", [src], [dst], engine="SP")


def save(src, dst):
    return inst("Save", [src], [dst], engine="SP")


def dma(src, dst, **fields):
    return inst("DMACopy", src if isinstance(src, list) else [src], [dst], **dict({"mode": "Copy"}, **fields))


def loop(n_or_range, body):
    lb, ub, st = (0, n_or_range, 1) if isinstance(n_or_range, int) else n_or_range
    return ("loop", lb, ub, st, body)


def block(name, descs):
    return ("block", name, descs)


def trigger(name, blocks, queue=None):
    return ("trigger", name, list(blocks), queue)


def qreset(opcode, queue=None, no_rearm=None):
    return ("qreset", opcode, queue, no_rearm)


def desc(kind, ins, outs, ntd=None, **fields):
    """A DMADescriptor{kind} (fields: op / constants / transpose_op, as docs/bir-json.md)."""
    d = dict({"opcode": "DMADescriptor" + kind, "engine": "DMA", "ins": ins if isinstance(ins, list) else [ins],
              "outs": [outs]}, **fields)
    if ntd is not None:
        d["num_tiling_dimensions"] = ntd
    return d


def desc_as_dmacopy(d):
    """§1: each descriptor runs exactly as its DMACopy twin."""
    kind = d["opcode"][len("DMADescriptor"):]
    out = {"opcode": "DMACopy", "engine": "DMA", "ins": d["ins"], "outs": d["outs"]}
    if kind == "Copy":
        out["mode"] = "Copy"
    elif kind == "CCE":
        out["mode"] = "CCE"
        out["cce_op"] = d["op"]
        if "constants" in d:
            out["constants"] = d["constants"]
    elif kind == "Transpose":
        out["mode"] = "Transpose"
        out["transpose_op"] = d["transpose_op"]
    else:
        out["mode"] = "Replicate"
    return out


class State:
    def __init__(self, prog, block_run=False):
        self.prog = prog
        self.mem = {}
        for name, (dt, n, _) in prog.locs.items():
            if name in prog.inputs:
                self.mem[name] = prog.inputs[name].reshape(-1).copy()
            else:
                # uninitialised: 0xFF bytes (re-facts §5); the suite never reads them (asserted)
                self.mem[name] = np.full(n * SIZE[dt], 0xFF, np.uint8).view(STORE[dt]).copy()
        self.written = {n: np.zeros(v.size, bool) for n, v in self.mem.items()}
        for n in prog.inputs:
            self.written[n][:] = True
        self.cursor, self.tq, self.blocks = {}, {}, {}
        self.block_run = block_run
        self.trace = []
        self.fires = []  # (trigger, block) in order, for hand checks

    # -- AP access
    def _idx(self, a):
        dt, n, _ = self.prog.locs[a["memref"]]
        assert a["dtype"] == dt, ("an AP's dtype is its memory's", a["memref"])
        e = ap_index(a["ap"], a.get("offset", 0)).reshape(-1)
        assert e.min() >= 0 and e.max() < n, ("static AP inside its location", a)
        return e

    def read(self, a):
        e = self._idx(a)
        assert self.written[a["memref"]][e].all(), ("reads only written memory", a)
        return self.mem[a["memref"]][e].copy()

    def write(self, a, v):
        e = self._idx(a)
        assert len(np.unique(e)) == e.size, "no AP here writes an element twice"
        self.mem[a["memref"]][e] = v
        self.written[a["memref"]][e] = True

    # -- instructions
    def run_inst(self, d):
        op = d["opcode"]
        if op in ("Load", "Save"):
            self.trace.append(d)
            self.write(d["outs"][0], cast(self.read(d["ins"][0]), d["ins"][0]["dtype"], d["outs"][0]["dtype"]))
            return
        assert op == "DMACopy", op
        self.trace.append(d)
        if any("vector_offset" in a for a in d["ins"][:1] + d["outs"]):
            return self.hwdge(d)
        mode = d.get("mode", "Copy")
        src, dst = d["ins"][0], d["outs"][0]
        sdt, ddt = src["dtype"], dst["dtype"]
        if mode == "Copy" or (mode == "Transpose" and d.get("transpose_op", "None") == "None"):
            self.write(dst, cast(self.read(src), sdt, ddt))  # doCopy: read all, then write
        elif mode == "Transpose":
            nums = [p[1] for p in src["ap"]]
            perm = perm_of(d["transpose_op"])
            v = np.transpose(self.read(src).reshape(nums), perm)
            assert [p[1] for p in dst["ap"]] == list(v.shape)
            self.write(dst, cast(v.reshape(-1), sdt, ddt))
        elif mode == "Replicate":
            (_, sp), (_, sf) = src["ap"]
            (_, dp), (_, df) = dst["ap"]
            assert dp % sp == 0 and sf == df
            v = np.tile(self.read(src).reshape(sp, sf), (dp // sp, 1))
            self.write(dst, cast(v.reshape(-1), sdt, ddt))
        elif mode == "CCE":
            vals = [decode(self.read(a), a["dtype"]) for a in d["ins"]]
            consts = d.get("constants")
            cop = d["cce_op"]
            # re-facts §5 (D4): "N inputs cast to fp32, folded into a zeroed fp32 accumulator; add =
            # acc += (constants ? c_i*in_i : in_i), max/min via fmaxf/fminf": every op starts at +0.0,
            # constants scale add only.
            acc = np.zeros_like(vals[0]) + F32(0.0)
            if cop == "add":
                if consts:
                    vals = [(F32(c) * v).astype(F32) for c, v in zip(consts, vals)]
                for v in vals:
                    acc = (acc + v).astype(F32)
            else:
                for v in vals:
                    acc = (fmaxf if cop == "max" else fminf)(acc, v)
            self.write(dst, encode(acc, ddt))
        else:
            raise ValueError(mode)

    def hwdge(self, d):
        """contract §2 (seed 000 §7): scatter (vector_offset on outs[0]) / gather (on ins[0])."""
        src, dst = d["ins"][0], d["outs"][0]
        if "vector_offset" in src and "vector_offset" in dst:
            raise Fault("not-implemented", "")
        if d.get("mode", "Copy") != "Copy":
            raise Fault("not-implemented", "")
        op = d.get("cce_op", "bypass")
        if op not in ("bypass", "add"):
            raise Fault("unsupported-op", "")
        scatter = "vector_offset" in dst
        table, dense = (dst, src) if scatter else (src, dst)
        operand = "outs[0].vector_offset" if scatter else "ins[0].vector_offset"
        n_lv = len(table["ap"])
        letter = table["indirect_dim"]
        # An indirect dim's letter is the AP level index (re-facts §3; fidelity J31).
        lvl = {"W": 0, "Z": 1, "Y": 2, "X": 3}[letter]
        assert lvl < n_lv, "a letter past the last level is a validation error"
        M = table["indirect_dim_max_index"]
        idx = [int(v) for v in self.read(table["vector_offset"]).astype(np.uint16)]
        N = dense["ap"][0][1]
        drows = self._idx(dense).reshape(N, -1)
        assert len(idx) == N, "index count = dense rows (else a validation error)"
        stride = table["ap"][lvl][0]
        tp = [list(p) for p in table["ap"]]
        tp[lvl][1] = 1
        base = ap_index(tp, table.get("offset", 0)).reshape(-1)
        assert base.size == drows.shape[1], "row lengths equal (else a validation error)"
        tdt, tn, _ = self.prog.locs[table["memref"]]
        rows = []
        for i, v in enumerate(idx):
            r = base + v * stride
            bad = None
            if v >= M:
                bad = operand
            elif r.min() < 0 or r.max() >= tn:
                bad = ""  # G8: leaves its location (message not pinned)
            if bad is not None:
                if d.get("oob_is_err", True):
                    raise Fault("out-of-bounds", bad)
                rows.append(None)
            else:
                rows.append(r)
        sdt, ddt = src["dtype"], dst["dtype"]
        if op == "add":
            assert sdt == ddt
            if ddt not in REDUCIBLE:
                raise Fault("numerics", "")
        dmem = self.mem[dst["memref"]]
        smem = self.mem[src["memref"]]
        sw, dw = self.written[src["memref"]], self.written[dst["memref"]]
        for i, r in enumerate(rows):
            if r is None:
                continue
            se, de = (drows[i], r) if scatter else (r, drows[i])
            assert sw[se].all()
            if op == "bypass":
                dmem[de] = cast(smem[se], sdt, ddt)  # last writer wins
            else:
                assert dw[de].all()
                dmem[de] = acc_add(dmem[de], smem[se], ddt)  # serial, rounding at every step
            dw[de] = True

    # -- nodes
    def collect(self, nodes):
        for nd in nodes:
            if nd[0] == "block":
                assert nd[1] not in self.blocks
                self.blocks[nd[1]] = nd[2]
            elif nd[0] == "loop":
                self.collect(nd[4])
            elif nd[0] == "trigger":
                self.tq[nd[1]] = nd[3]

    def run_descs(self, descs):
        for dd in descs:
            self.run_inst(desc_as_dmacopy(dd))

    def run(self, nodes):
        for nd in nodes:
            kind = nd[0]
            if kind == "inst":
                self.run_inst(nd[1])
            elif kind == "loop":
                for _ in range(nd[1], nd[2], nd[3]):
                    self.run(nd[4])
            elif kind == "block":
                if self.block_run:  # G4: option dma_block_in_stream=run
                    self.run_descs(nd[2])
            elif kind == "trigger":
                name, blocks = nd[1], nd[2]
                if not blocks:  # G2
                    continue
                c = self.cursor.get(name, 0)
                b = blocks[c % len(blocks)]  # §1: dma_blocks[c mod len], then c += 1 (G1)
                self.cursor[name] = c + 1
                self.fires.append((name, b))
                self.run_descs(self.blocks[b])
            elif kind == "qreset":
                _, opcode, queue, no_rearm = nd
                if opcode == "SwitchQueueInstance" and no_rearm:
                    continue
                for t in list(self.cursor):
                    if queue is None or self.tq.get(t) == queue:  # G5
                        self.cursor[t] = 0
            else:
                raise ValueError(kind)


def simulate(prog, nodes, block_run=False):
    st = State(prog, block_run)
    st.collect(nodes)
    fault = None
    try:
        st.run(nodes)
    except Fault as e:
        fault = (e.args[0], e.args[1])
    outs = {}
    for o in prog.outs:
        dt, _, shape = prog.locs[o]
        assert st.written[o].all(), ("every output element written", o)
        outs[o] = st.mem[o].reshape(shape).copy()
    return outs, fault, st


# ---------------------------------------------------------------- JSON emission
def emit(prog, nodes):
    counter = {"i": 0, "b": 0, "l": 0}

    def named(d):
        d = pycopy.deepcopy(d)
        if "name" not in d:
            d = dict({"opcode": d["opcode"], "name": f"i{counter['i']}"}, **{k: v for k, v in d.items() if k != "opcode"})
            counter["i"] += 1
        return d

    def entries(ns):
        out, cur = [], []

        def flush():
            if cur:
                out.append({"name": f"B{counter['b']}", "instructions": list(cur)})
                counter["b"] += 1
                cur.clear()
        for nd in ns:
            if nd[0] == "loop":
                flush()
                k = counter["l"]
                counter["l"] += 1
                out.append({"opcode": "Loop", "name": f"L{k}",
                            "LoopAxis": {"name": f"l{k}", "lb": nd[1], "ub": nd[2], "stride": nd[3]},
                            "blocks": entries(nd[4])})
            elif nd[0] == "inst":
                cur.append(named(nd[1]))
            elif nd[0] == "block":
                ds = []
                for j, dd in enumerate(nd[2]):
                    dd = pycopy.deepcopy(dd)
                    ds.append(dict({"opcode": dd.pop("opcode"), "name": f"{nd[1]}_d{j}"}, **dd))
                cur.append({"opcode": "DMABlock", "name": nd[1], "engine": "DMA", "ins": [], "outs": [],
                            "descriptors": ds})
            elif nd[0] == "trigger":
                t = {"opcode": "DMATrigger", "name": nd[1], "engine": "SP", "ins": [], "outs": [], "dma_blocks": nd[2]}
                if nd[3] is not None:
                    t["queue"] = nd[3]
                cur.append(t)
            elif nd[0] == "qreset":
                r = named({"opcode": nd[1], "engine": "SP", "ins": [], "outs": []})
                if nd[2] is not None:
                    r["queue"] = nd[2]
                if nd[3] is not None:
                    r["no_rearm"] = nd[3]
                cur.append(r)
        flush()
        return out

    return {"arch": "gen3", "version": 2,
            "functions": [{"name": "sg0000", "allocations": prog.allocs, "blocks": entries(nodes)}]}


CASES = {}


def case(name, prog, nodes, note, choices=(), fault=None, options=(), block_run=False, errors=None):
    """A run case: expected outputs (and fault) from the oracle; `fault` is what the case intends (asserted)."""
    assert name not in CASES, name
    if errors is not None:
        CASES[name] = (emit(prog, nodes), prog, {}, note, tuple(dict.fromkeys(choices)), None, errors, ())
        return None
    outs, got, st = simulate(prog, nodes, block_run)
    assert got == fault, (name, got, fault)
    CASES[name] = (emit(prog, nodes), prog, outs, note, tuple(dict.fromkeys(choices)), fault, None, tuple(options))
    return outs, st


def trig_case(name, prog, nodes, note, choices=(), options=(), block_run=False, fault=None):
    """A trigger program and its `_direct` twin (the executed record as plain DMACopy instructions; a faulting
    program's twin ends with the faulting instruction and faults the same way)."""
    outs, st = case(name, prog, nodes, note, choices, options=options, block_run=block_run, fault=fault)
    direct = [("inst", d) for d in st.trace]
    assert not any(d["opcode"].startswith("DMADescriptor") for d in st.trace)
    outs2, fault2, _ = simulate(prog, direct)
    assert fault2 == fault
    for k in outs:
        assert outs[k].tobytes() == outs2[k].tobytes(), (name, k)
    case(name + "_direct", prog, direct,
         f"twin of {name}: the same operations as plain DMACopy instructions in the order the triggers fired them "
         f"(loops unrolled; seed 000 §5.2 'descriptors re-fed through the same dispatcher'); outputs equal {name}'s",
         choices, fault=fault)
    return outs, st


# ================================================================ 1. SW-DGE: trigger cursors (contract §1)
SW = "contract §1: a DMATrigger fires dma_blocks[c mod len], c = its own fire count (seed 000 §5.2, re-facts §5)"
P, F = 4, 8


def recorder(g, nblocks, tag="h"):
    """A history tile: block k's descriptor acc = B*acc + (k+1) (CCE add, constants [B, 1]); B = nblocks+1,
    so the final value spells the fired sequence in base B. Returns (acc tile, per-block descriptor maker)."""
    B = float(nblocks + 1)
    a0 = (np.arange(P * F).reshape(P, F) % 3).astype(F32)
    acc = g.tile_in(f"{tag}acc", "float32", a0)
    digits = [g.tile_in(f"{tag}dig{k}", "float32", np.full((P, F), k + 1, F32)) for k in range(nblocks)]

    def mk(k):
        return desc("CCE", [tile(acc, "float32", P, F), tile(digits[k], "float32", P, F)], tile(acc, "float32", P, F),
                    ntd=2, op="add", constants=[B, 1.0])
    return acc, mk, a0


def spelled(a0, seq, B):
    """Hand formula of the history tile: a0*B^n + digits in base B."""
    v = a0.astype(np.float64)
    for k in seq:
        v = v * B + (k + 1)
    return v


def counter(g, nblocks, tag="c"):
    """Per-block fire counters: block k adds 1 to cnt (row k)."""
    cnt = g.tile_in(f"{tag}cnt", "float32", np.zeros((nblocks, F), F32))
    one = g.tile_in(f"{tag}one", "float32", np.ones((1, F), F32))

    def mk(k):
        return desc("CCE", [ap(cnt, "float32", [[F, 1], [1, F]], k * F), tile(one, "float32", 1, F)],
                    ap(cnt, "float32", [[F, 1], [1, F]], k * F), ntd=2, op="add")
    return cnt, mk


def last_writer(g, nblocks, tag="w"):
    """Block k copies its own tile src_k into `last` (last writer wins)."""
    last = f"{tag}last_t"
    g.sb(last, "float32", P, F)
    srcs = [g.tile_in(f"{tag}src{k}", "float32", distinct(P, F) + 100 * k) for k in range(nblocks)]
    g.pre.append(dma(tile(srcs[0], "float32", P, F), tile(last, "float32", P, F)))  # defined before any fire

    def mk(k):
        return desc("Copy", tile(srcs[k], "float32", P, F), tile(last, "float32", P, F), ntd=2)
    return last, mk


def rr_case(name, nblocks, iters, extras=("hist",), note=""):
    g = Prog()
    mks, tiles = [], []
    if "hist" in extras:
        acc, hmk, a0 = recorder(g, nblocks)
        mks.append(hmk)
        tiles.append((acc, "float32"))
    if "count" in extras:
        cnt, cmk = counter(g, nblocks)
        mks.append(cmk)
        tiles.append((cnt, "float32"))
    if "last" in extras:
        last, lmk = last_writer(g, nblocks)
        mks.append(lmk)
        tiles.append((last, "float32"))
    names = [f"blk{k}" for k in range(nblocks)]
    nodes = list(g.pre) + [block(names[k], [m(k) for m in mks]) for k in range(nblocks)]
    nodes += [loop(iters, [trigger("trig", names)])]
    nodes += g.save_all(tiles)
    n_it = len(range(*iters)) if isinstance(iters, tuple) else iters
    seq = [k % nblocks for k in range(n_it)]
    outs, st = trig_case(name, g, nodes, f"{SW}: {nblocks} blocks, a Loop of {n_it} iterations -> blocks {seq} (past "
                         f"the last block it wraps around, G1 CONFIRMED by 'round-robin'); history tile acc = "
                         f"{nblocks + 1}*acc + (k+1) per fired block k{(' (' + ', '.join(extras[1:]) + ' tiles too)') if len(extras) > 1 else ''}. {note}".strip()
                         if "hist" in extras else f"{SW}: {nblocks} blocks, a Loop of {n_it} iterations; per-block fire "
                         f"counters and a last-writer tile. {note}".strip())
    assert [b for _, b in st.fires] == [names[k] for k in seq]
    if "hist" in extras:
        assert np.array_equal(outs["hacc"].astype(np.float64), spelled(a0, seq, nblocks + 1))
    if "count" in extras:
        assert np.array_equal(outs["ccnt"][:, 0], [seq.count(k) for k in range(nblocks)])
    if "last" in extras:
        assert np.array_equal(outs["wlast"], distinct(P, F) + 100 * seq[-1])
    return outs


o = rr_case("trig_rr3_loop7", 3, 7)
# hand check: sequence 0,1,2,0,1,2,0 -> digits 1,2,3,1,2,3,1 in base 4 = 7021; acc0[0,0] = 0, acc0[0,1] = 1
assert o["hacc"][0, 0] == 7021.0 and o["hacc"][0, 1] == 16384.0 + 7021.0
o = rr_case("trig_rr2_loop5", 2, 5, ("hist", "last"))
assert o["hacc"][0, 0] == 1 * 81 + 2 * 27 + 1 * 9 + 2 * 3 + 1 and o["wlast"][0, 0] == F32(0.25)  # blocks 0,1,0,1,0
rr_case("trig_rr4_loop9", 4, 9, ("hist", "count"))
o = rr_case("trig_rr1_loop4", 1, 4, ("hist", "count"))
assert o["ccnt"][0, 0] == 4.0
rr_case("trig_rr3_loop_lb2_ub12_stride3", 3, (2, 12, 3), ("hist", "last"),
        "Loop lb 2, ub 12, stride 3 = 4 iterations.")
rr_case("trig_rr3_loop2_no_wrap", 3, 2, ("hist", "count"), "Fewer iterations than blocks: block 2 never fires.")
o = rr_case("trig_rr3_loop40_counts", 3, 40, ("count", "last"), "40 fires: 14, 13, 13; the last is block 0.")
assert list(o["ccnt"][:, 0]) == [14, 13, 13] and o["wlast"][0, 0] == F32(0.25)

# a block named twice in one list: the cursor walks list positions
g = Prog()
acc, hmk, a0 = recorder(g, 2)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(2)] + [loop(7, [trigger("trig", ["blk0", "blk0", "blk1"])])]
nodes += g.save_all([(acc, "float32")])
outs, st = trig_case("trig_repeated_block_in_list", g, nodes,
                     f"{SW}: dma_blocks [blk0, blk0, blk1] in a Loop of 7: list positions 0,1,2,0,1,2,0 = blocks 0,0,1,0,0,1,0")
assert [int(b[3:]) for _, b in st.fires] == [0, 0, 1, 0, 0, 1, 0]
assert np.array_equal(outs["hacc"].astype(np.float64), spelled(a0, [0, 0, 1, 0, 0, 1, 0], 3))

# a trigger's fire lands where it stands: a plain DMACopy after it in the same Loop body sees it
g = Prog()
acc, hmk, a0 = recorder(g, 2)
tot = g.tile_in("tot", "float32", np.zeros((P, F), F32))
T = lambda n: tile(n, "float32", P, F)  # noqa: E731
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(2)]
nodes += [loop(4, [trigger("trig", ["blk0", "blk1"]), dma([T(tot), T(acc)], T(tot), mode="CCE", cce_op="add")])]
nodes += g.save_all([(acc, "float32"), (tot, "float32")])
outs, st = trig_case("trig_interleaved_with_dmacopy", g, nodes,
                     f"{SW}: Loop of 4 over [trigger (2 blocks), DMACopy CCE tot = tot + acc]: tot sums the history tile "
                     "after each fire, so a trigger whose effect were deferred or reordered would give another tot")
steps = [spelled(a0, [0, 1, 0, 1][:n + 1], 3) for n in range(4)]
assert np.array_equal(outs["tot"].astype(np.float64), sum(steps))
# hand: acc0 = 0 -> 1, 5, 16, 50; tot = 72
assert outs["tot"][0, 0] == 72.0 and outs["hacc"][0, 0] == 50.0

# nested loops: trigger A (3 blocks) in the inner loop, trigger B (2 blocks) in the outer loop's body
g = Prog()
acc, hmk, a0 = recorder(g, 5)
cnt, cmk = counter(g, 5)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k), cmk(k)]) for k in range(5)]
nodes += [loop(3, [loop(2, [trigger("tA", ["blk0", "blk1", "blk2"])]), trigger("tB", ["blk3", "blk4"])])]
nodes += g.save_all([(acc, "float32"), (cnt, "float32")])
outs, st = trig_case("trig_nested_loops", g, nodes,
                     f"{SW}: trigger tA over 3 blocks inside an inner Loop of 2, trigger tB over 2 other blocks in the outer "
                     "Loop (3) after it: tA fires 0,1 | 2,0 | 1,2 across outer iterations, tB 3,4,3 (its own cursor)")
seq = [0, 1, 3, 2, 0, 4, 1, 2, 3]
assert [int(b[3:]) for _, b in st.fires] == seq
assert np.array_equal(outs["hacc"].astype(np.float64), spelled(a0, seq, 6))

# two triggers sharing blocks, independent cursors
g = Prog()
acc, hmk, a0 = recorder(g, 3)
last, lmk = last_writer(g, 3)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k), lmk(k)]) for k in range(3)]
nodes += [loop(5, [trigger("t0", ["blk0", "blk1", "blk2"]), trigger("t1", ["blk2", "blk0"])])]
nodes += g.save_all([(acc, "float32"), (last, "float32")])
outs, st = trig_case("trig_two_triggers_share_blocks", g, nodes,
                     f"{SW}: t0 = [blk0, blk1, blk2] and t1 = [blk2, blk0] in one Loop of 5: each keeps its own count "
                     "(t0: 0,1,2,0,1; t1: 2,0,2,0,2), interleaved t0,t1 per iteration")
seq = [0, 2, 1, 0, 2, 2, 0, 0, 1, 2]
assert [int(b[3:]) for _, b in st.fires] == seq
assert np.array_equal(outs["hacc"].astype(np.float64), spelled(a0, seq, 4))

# two triggers with the same list: the second one starts at block 0
g = Prog()
acc, hmk, a0 = recorder(g, 3)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(3)]
nodes += [loop(4, [trigger("t0", ["blk0", "blk1", "blk2"])]), trigger("t1", ["blk0", "blk1", "blk2"]),
          loop(2, [trigger("t0b", ["blk1", "blk2"])])]
nodes += g.save_all([(acc, "float32")])
outs, st = trig_case("trig_same_list_own_cursor", g, nodes,
                     f"{SW}: t0 fires 4 times (0,1,2,0), then t1 with the same list fires once: its own count is 0, so blk0 "
                     "(the cursor is keyed by the trigger's name), then t0b = [blk1, blk2] twice")
assert [int(b[3:]) for _, b in st.fires] == [0, 1, 2, 0, 0, 1, 2]

# straight line: three trigger instructions, each fires once -> its first block
g = Prog()
acc, hmk, a0 = recorder(g, 3)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(3)]
nodes += [trigger("t0", ["blk2", "blk0"]), trigger("t1", ["blk1"]), trigger("t2", ["blk0", "blk1", "blk2"])]
nodes += g.save_all([(acc, "float32")])
outs, st = trig_case("trig_straight_line", g, nodes, f"{SW}: three trigger instructions outside any loop, each fires its "
                     "first block once (2, 1, 0)")
assert [int(b[3:]) for _, b in st.fires] == [2, 1, 0]

# empty dma_blocks fires nothing (G2)
g = Prog()
acc, hmk, a0 = recorder(g, 2)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(2)]
nodes += [loop(3, [trigger("t_empty", []), trigger("t0", ["blk0", "blk1"]), trigger("t_empty2", [])])]
nodes += g.save_all([(acc, "float32")])
outs, st = trig_case("trig_empty_block_list", g, nodes,
                     f"{SW}: triggers with an empty dma_blocks list fire nothing (G2) while t0 fires 0,1,0",
                     choices=["G2"])
assert [int(b[3:]) for _, b in st.fires] == [0, 1, 0]

# ================================================================ 2. every descriptor kind inside blocks
DK = "contract §1: a DMABlock runs its descriptors in list order, each exactly as its DMACopy twin"

# Copy with casts: fp32 -> bf16 (RNE ties), int32 -> fp32 (rounding above 2^24), strided fp32 copy
g = Prog()
acc, hmk, a0 = recorder(g, 3)
xb = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 1 + 2 ** -8 + 2 ** -20, 3.0, -0.0, 65504.0, 1e-3] * 4, F32).reshape(P, F)
xb[2:] = fp32_vals((2, F))
xf = g.tile_in("xf", "float32", xb)
yb = "yb_t"
g.sb(yb, "bfloat16", P, F)
xi_raw = np.array([16777217, 16777219, -16777217, 2 ** 31 - 1, -2 ** 31, 7, -3, 33554435] * 4, np.int32).reshape(P, F)
xi = g.tile_in("xi", "int32", xi_raw)
zf = "zf_t"
g.sb(zf, "float32", P, F)
ws = "ws_t"
g.sb(ws, "float32", P, F // 2)
blocks = [
    [hmk(0), desc("Copy", tile(xf, "float32", P, F), tile(yb, "bfloat16", P, F), ntd=2)],
    [hmk(1), desc("Copy", tile(xi, "int32", P, F), tile(zf, "float32", P, F), ntd=2)],
    [hmk(2), desc("Copy", ap(xf, "float32", [[F, P], [2, F // 2]], 1), tile(ws, "float32", P, F // 2), ntd=2)],
]
nodes = list(g.pre) + [block(f"blk{k}", b) for k, b in enumerate(blocks)] + [loop(4, [trigger("trig", ["blk0", "blk1", "blk2"])])]
nodes += g.save_all([(acc, "float32"), (yb, "bfloat16"), (zf, "float32"), (ws, "float32")])
outs, st = trig_case("desc_copy_cast", g, nodes,
                     f"{DK}: DMADescriptorCopy fp32 -> bf16 (RNE: 1+2^-8 -> 1.0, 1+3*2^-8 -> 1+2^-6), int32 -> fp32 "
                     "(RNE above 2^24: 16777217 -> 16777216, 16777219 -> 16777220), a strided fp32 copy (odd columns); "
                     "3 blocks fired 0,1,2,0 by a Loop of 4")
assert list(outs["yb"][0, :4]) == [0x3F80, 0x3F82, 0xBF80, 0x3F81]
assert list(outs["zf"][0, :3]) == [16777216.0, 16777220.0, -16777216.0] and outs["zf"][0, 7] == 33554436.0
assert np.array_equal(outs["ws"], xb[:, 1::2])

# CCE: add with constants, max / min with NaN and ±0 ties (D4), add of -0 + -0 = +0
g = Prog()
acc, hmk, a0 = recorder(g, 4)
na = np.array([np.nan, 1.0, np.nan, 0.0, -0.0, 0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -0.0, 0.0, 3.0, np.nan], F32)
nb = np.array([1.0, np.nan, np.nan, -0.0, 0.0, 0.0, -0.0, -0.0, np.nan, 5.0, -np.inf, 2.0, -0.0, -0.0, -3.0, 0.0], F32)
nc = np.array([2.0, 0.5, np.nan, 0.0, -0.0, -0.0, 0.0, np.nan, 1.0, np.nan, np.nan, -2.0, 0.0, -0.0, np.nan, -0.0], F32)
A = g.tile_in("na", "float32", np.tile(na, (2, 1)).reshape(P, F))
Bt = g.tile_in("nb", "float32", np.tile(nb, (2, 1)).reshape(P, F))
C = g.tile_in("nc", "float32", np.tile(nc, (2, 1)).reshape(P, F))
r1, r2, r3 = (g.tile_in(f"r{k}", "float32", fp32_vals((P, F))) for k in range(3))
mz = g.tile_in("mz", "float32", np.full((P, F), -0.0, F32))
outs_t = {}
for nm in ("cadd", "cmax", "cmin", "cmaxk", "czero"):
    g.sb(nm + "_t", "float32", P, F)
T = lambda n: tile(n, "float32", P, F)  # noqa: E731
blocks = [
    [hmk(0), desc("CCE", [T(r1), T(r2), T(r3)], T("cadd_t"), ntd=2, op="add", constants=[1.5, -0.75, 3.0])],
    [hmk(1), desc("CCE", [T(A), T(Bt), T(C)], T("cmax_t"), ntd=2, op="max"),
     desc("CCE", [T(r1), T(r2), T(r3)], T("cmaxk_t"), ntd=2, op="max", constants=[-1.0, 2.0, 0.5])],
    [hmk(2), desc("CCE", [T(A), T(Bt), T(C)], T("cmin_t"), ntd=2, op="min")],
    [hmk(3), desc("CCE", [T(mz), T(mz)], T("czero_t"), ntd=2, op="add")],
]
nodes = list(g.pre) + [block(f"blk{k}", b) for k, b in enumerate(blocks)] + [loop(5, [trigger("trig", [f"blk{k}" for k in range(4)])])]
nodes += g.save_all([(acc, "float32")] + [(n + "_t", "float32") for n in ("cadd", "cmax", "cmin", "cmaxk", "czero")])
outs, st = trig_case("desc_cce_add_max_min", g, nodes,
                     f"{DK}: DMADescriptorCCE add with constants (1.5, -0.75, 3), max and min over NaN / ±inf / ±0 (fmaxf / "
                     "fminf from the zeroed accumulator +0.0: NaN -> the other operand, a ±0 tie keeps the accumulator), max with "
                     "constants (-1, 2, 0.5), which scale add only, add of -0 + -0 from +0.0 = +0 (re-facts §5, D4); 4 blocks, "
                     "a Loop of 5 (0,1,2,3,0)", choices=["D4"])
bits = lambda x: np.asarray(x, F32).view(np.uint32)  # noqa: E731
# hand-typed: fmaxf / fminf folded over (a, b, c) per element from the zeroed accumulator +0.0 (re-facts §5)
want_max = np.array([2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, np.inf, 5.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0], F32)
want_min = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, -np.inf, -np.inf, -2.0, 0.0, 0.0, -3.0, 0.0], F32)
assert np.array_equal(bits(outs["cmax"].reshape(-1)[:16]), bits(want_max)), outs["cmax"]
assert np.array_equal(bits(outs["cmin"].reshape(-1)[:16]), bits(want_min)), outs["cmin"]
assert np.all(bits(outs["czero"]) == 0)

# Transpose codes (D2) in blocks, one with a cast, one code None (= copy)
g = Prog()
acc, hmk, a0 = recorder(g, 4)
dims = (2, 3, 4, 5)
src = np.arange(120, dtype=F32).reshape(2, 60)  # element value = flat index 60w + 20z + 5y + x
xs = g.tile_in("tx", "float32", src)
blocks, tiles = [], [(acc, "float32")]
for k, (code, ddt) in enumerate([("WZXY", "float32"), ("XYZW", "float32"), ("ZYXW", "bfloat16"), ("None", "float32")]):
    dn = tuple(dims[p] for p in perm_of(code))
    tn = f"tr{k}_t"
    g.sb(tn, ddt, dn[0], int(np.prod(dn[1:])))
    blocks.append([hmk(k), desc("Transpose", ap(xs, "float32", four_level(dims)), ap(tn, ddt, four_level(dn)), ntd=4,
                                transpose_op=code)])
    tiles.append((tn, ddt))
nodes = list(g.pre) + [block(f"blk{k}", b) for k, b in enumerate(blocks)] + [loop(6, [trigger("trig", [f"blk{k}" for k in range(4)])])]
nodes += g.save_all(tiles)
outs, st = trig_case("desc_transpose_codes", g, nodes,
                     f"{DK}: DMADescriptorTranspose WZXY, XYZW, ZYXW (into bf16) and None (= copy) of a [2,3,4,5] source "
                     "holding its flat indices: dst = numpy.transpose(src, perm), perm from the code's letters (D2); Loop of 6",
                     choices=["D2"])
# hand check (docs/bir-json.md worked table): XYZW: first four 0, 60, 20, 80; src[1,0,2,3] = 73 at dst flat 85
assert list(outs["tr1"].reshape(-1)[:4]) == [0, 60, 20, 80] and outs["tr1"].reshape(-1)[85] == 73
assert list(outs["tr0"].reshape(-1)[:4]) == [0, 5, 10, 15] and outs["tr0"].reshape(-1)[74] == 73
assert list(decode(outs["tr2"].reshape(-1)[:4], "bfloat16")) == [0, 60, 1, 61]

# Replicate (D3)
g = Prog()
acc, hmk, a0 = recorder(g, 2)
s1 = g.tile_in("rs1", "float32", distinct(1, 9))
s2 = g.tile_in("rs2", "float32", fp32_vals((2, 9)))
g.sb("rep4_t", "float32", 4, 9)
g.sb("rep6_t", "bfloat16", 6, 9)
blocks = [[hmk(0), desc("Replicate", tile(s1, "float32", 1, 9), tile("rep4_t", "float32", 4, 9), ntd=2)],
          [hmk(1), desc("Replicate", tile(s2, "float32", 2, 9), tile("rep6_t", "bfloat16", 6, 9), ntd=2)]]
nodes = list(g.pre) + [block(f"blk{k}", b) for k, b in enumerate(blocks)] + [loop(3, [trigger("trig", ["blk0", "blk1"])])]
nodes += g.save_all([(acc, "float32"), ("rep4_t", "float32"), ("rep6_t", "bfloat16")])
outs, st = trig_case("desc_replicate", g, nodes,
                     f"{DK}: DMADescriptorReplicate 1 -> 4 partitions and 2 -> 6 partitions with fp32 -> bf16 "
                     "(numpy.tile(src, (dst/src partitions, 1)), D3); Loop of 3", choices=["D3"])
assert np.array_equal(outs["rep4"], np.tile(distinct(1, 9), (4, 1)))

# descriptor order inside one block matters; num_tiling_dimensions values that match nothing (G3)
g = Prog()
a_ = g.tile_in("oa", "float32", fp32_vals((P, F)))
b_ = g.tile_in("ob", "float32", fp32_vals((P, F)))
c_ = g.tile_in("oc", "float32", fp32_vals((P, F)))
for nm in ("ot", "o1", "o2"):
    g.sb(nm + "_t", "float32", P, F)
T = lambda n: tile(n, "float32", P, F)  # noqa: E731
ds = [desc("Copy", T(a_), T("ot_t"), ntd=1),
      desc("CCE", [T("ot_t"), T(b_)], T("ot_t"), ntd=5, op="add"),
      desc("Copy", T("ot_t"), T("o1_t")),
      desc("Copy", T(c_), T("ot_t"), ntd=3),
      desc("CCE", [T("o1_t"), T("ot_t")], T("o2_t"), ntd=2, op="min")]
nodes = list(g.pre) + [block("blk0", ds), loop(2, [trigger("trig", ["blk0"])])]
nodes += g.save_all([("ot_t", "float32"), ("o1_t", "float32"), ("o2_t", "float32")])
outs, st = trig_case("desc_order_in_block", g, nodes,
                     f"{DK}: five descriptors whose result depends on list order (t = a; t = t + b; o1 = t; t = c; "
                     "o2 = min(+0, o1, t): CCE min folds from a zeroed accumulator, re-facts §5), num_tiling_dimensions 1 / 5 / 3 / "
                     "absent / 2 (no effect, G3); fired twice",
                     choices=["G3", "D4"])
ia, ib, ic = (g.inputs[k + "_in"] for k in ("oa", "ob", "oc"))
assert np.array_equal(outs["o1"], (ia + ib).astype(F32)) and np.array_equal(outs["ot"], ic)
assert np.array_equal(outs["o2"], fminf(fminf(np.zeros_like(ic), (ia + ib).astype(F32)), ic))

# ================================================================ 3. a DMABlock met in the stream (G4)
def stream_program():
    g = Prog()
    acc, hmk, a0 = recorder(g, 3)
    cnt, cmk = counter(g, 3)
    nodes = list(g.pre) + [block("blk0", [hmk(0), cmk(0)])]
    nodes += [loop(3, [block("blk1", [hmk(1), cmk(1)]), trigger("trig", ["blk0", "blk1", "blk2"])])]
    nodes += [block("blk2", [hmk(2), cmk(2)])]
    nodes += g.save_all([(acc, "float32"), (cnt, "float32")])
    return g, nodes, a0


g, nodes, a0 = stream_program()
outs, st = trig_case("stream_block_skip", g, nodes,
                     "contract §1: DMABlocks placed in the stream (blk0 before the Loop, blk1 inside the Loop body before the "
                     "trigger, blk2 after the Loop) run nothing by themselves (G4, default dma-block-in-stream=skip); the "
                     "trigger fires 0,1,2", choices=["G4"])
assert np.array_equal(outs["hacc"].astype(np.float64), spelled(a0, [0, 1, 2], 4))
g, nodes, a0 = stream_program()
outs, st = trig_case("stream_block_run", g, nodes,
                     "contract §1: the stream_block_skip program with option dma_block_in_stream=run: a block met in the stream runs "
                     "its descriptors once where it stands (blk0; blk1 once per Loop iteration; blk2 at the end) AND still "
                     "runs when fired, cursors untouched: 0, (1, 0), (1, 1), (1, 2), 2", choices=["G4"],
                     options=["dma_block_in_stream=run"], block_run=True)
assert np.array_equal(outs["hacc"].astype(np.float64), spelled(a0, [0, 1, 0, 1, 1, 1, 2, 2], 4))
assert list(outs["ccnt"][:, 0]) == [2, 4, 2]

# ================================================================ 4. ResetQueueInstance / SwitchQueueInstance
RQ = ("contract §1 (re-facts §5): ResetQueueInstance erases the trigger cursors; SwitchQueueInstance too unless "
      "no_rearm: true; semaphores are not modelled (G5)")


def reset_prog(mid, queues=(None, None)):
    """t0 = [blk0, blk1, blk2] and t1 = [blk3, blk4, blk5] in an inner Loop of 2, `mid` after it, an outer Loop of 2."""
    g = Prog()
    acc, hmk, a0 = recorder(g, 6)
    nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(6)]
    trig = [trigger("t0", ["blk0", "blk1", "blk2"], queues[0]), trigger("t1", ["blk3", "blk4", "blk5"], queues[1])]
    nodes += [loop(2, [loop(2, trig)] + mid)]
    nodes += g.save_all([(acc, "float32")])
    return g, nodes, a0


ERASED, KEPT = [0, 3, 1, 4, 0, 3, 1, 4], [0, 3, 1, 4, 2, 5, 0, 3]
SHAPE = ("t0 = [blk0, blk1, blk2], t1 = [blk3, blk4, blk5]; an outer Loop of 2 around [an inner Loop of 2 over t0, t1; "
         "the reset]")
for name, mid, note, seq in [
    ("reset_erases_cursors", [qreset("ResetQueueInstance")], "ResetQueueInstance: both cursors restart", ERASED),
    ("switch_erases_cursors", [qreset("SwitchQueueInstance")], "SwitchQueueInstance (no no_rearm field) erases them", ERASED),
    ("switch_no_rearm_false_erases", [qreset("SwitchQueueInstance", no_rearm=False)],
     "SwitchQueueInstance with no_rearm: false erases them", ERASED),
    ("switch_no_rearm_keeps_cursors", [qreset("SwitchQueueInstance", no_rearm=True)],
     "SwitchQueueInstance with no_rearm: true keeps them: the second pass continues", KEPT),
    ("no_reset_baseline", [], "no reset instruction: the cursors run on", KEPT),
    # no_rearm on ResetQueueInstance is a validation error (bir-ir malformed/reset_queue_no_rearm).
]:
    g, nodes, a0 = reset_prog(mid)
    outs, st = trig_case(name, g, nodes, f"{RQ}: {SHAPE}: {note}; fired {seq}", choices=["G5"] if mid else ())
    assert [int(b[3:]) for _, b in st.fires] == seq, (name, st.fires)
assert np.array_equal(CASES["no_reset_baseline"][2]["hacc"].astype(np.float64), spelled(
    (np.arange(P * F).reshape(P, F) % 3).astype(F32), KEPT, 7))

# a reset inside a loop, every iteration
g = Prog()
acc, hmk, a0 = recorder(g, 3)
nodes = list(g.pre) + [block(f"blk{k}", [hmk(k)]) for k in range(3)]
nodes += [loop(3, [trigger("t0", ["blk0", "blk1", "blk2"]), trigger("t0b", ["blk2", "blk1"]), qreset("ResetQueueInstance")])]
nodes += g.save_all([(acc, "float32")])
outs, st = trig_case("reset_every_iteration", g, nodes, f"{RQ}: t0 and t0b then ResetQueueInstance in each of 3 "
                     "iterations: every fire is each trigger's first block (0, 2, 0, 2, 0, 2)", choices=["G5"])
assert [int(b[3:]) for _, b in st.fires] == [0, 2, 0, 2, 0, 2]

# queue-scoped resets (G5): t0 on queue q0, t1 on queue q1
for name, mid, seq, note in [
    ("reset_queue_q0_only", [qreset("ResetQueueInstance", queue="q0")], [0, 3, 1, 4, 0, 5, 1, 3],
     "ResetQueueInstance with queue q0 erases t0's cursor only: t1 continues 5, 3"),
    ("switch_queue_q1_only", [qreset("SwitchQueueInstance", queue="q1")], [0, 3, 1, 4, 2, 3, 0, 4],
     "SwitchQueueInstance with queue q1 erases t1's cursor only: t0 continues 2, 0"),
    ("reset_other_queue_keeps", [qreset("ResetQueueInstance", queue="q7")], KEPT,
     "ResetQueueInstance with queue q7 (no trigger on it) erases nothing"),
    ("reset_no_queue_erases_all", [qreset("ResetQueueInstance")], ERASED,
     "ResetQueueInstance without a queue field erases the cursors of the triggers on every queue"),
    ("switch_no_rearm_queue_q0_keeps", [qreset("SwitchQueueInstance", queue="q0", no_rearm=True)], KEPT,
     "SwitchQueueInstance queue q0 with no_rearm: true erases nothing"),
]:
    g, nodes, a0 = reset_prog(mid, queues=("q0", "q1"))
    outs, st = trig_case(name, g, nodes, f"{RQ}; a queue field on the reset limits it to the triggers whose queue field "
                         f"equals it (G5): t0 on queue q0, t1 on queue q1; {SHAPE}: {note}; fired {seq}", choices=["G5"])
    assert [int(b[3:]) for _, b in st.fires] == seq, (name, st.fires)

# ================================================================ 5. HW-DGE bridge (contract §2)
HW = ("contract §2 (seed 000 §7): DMACopy Copy with a uint16 vector_offset; row i of the source (level-0 coordinate "
      "i) moves to the destination AP with its indirect level's num 1 and offset + index[i]*stride; index >= "
      "indirect_dim_max_index skipped when oob_is_err is false, else a fault; all checked before any write")


def idx_tile(g, idx, where="sb", order="fwd"):
    """A uint16 index AP over N values (SB [N, 1] partitions, or a DRAM row); order 'rev' walks it backwards."""
    idx = np.asarray(idx, np.uint16)
    n = idx.size
    if where == "sb":
        if order == "fwd":
            t = g.tile_in("idx", "uint16", idx.reshape(n, 1))
            return ap(t, "uint16", [[1, n], [1, 1]])
        t = g.tile_in("idx", "uint16", idx[::-1].copy().reshape(1, n))
        return ap(t, "uint16", [[n, 1], [-1, n]], n - 1)
    g.dram_in("idx", "uint16", idx.reshape(1, n))
    return ap("idx", "uint16", [[n, 1], [1, n]])


def scatter_case(name, dt, M, Frow, idx, op=None, oob_is_err=None, table_rows=None, note="", choices=(), fault=None,
                 src_vals=None, tab_vals=None, dst_levels=None, src_dt=None, idx_where="sb", idx_order="fwd",
                 extra=None):
    """HW-DGE scatter into a pre-filled DRAM output table of `table_rows` rows x Frow (default M rows)."""
    g = Prog()
    N = len(idx)
    rows = M if table_rows is None else table_rows
    src_dt = src_dt or dt
    tab0 = tab_vals if tab_vals is not None else encode(fp32_vals((rows, Frow)), dt) if dt in FLOATS else \
        RNG.integers(-50, 50, (rows, Frow)).astype(STORE[dt])
    sv = src_vals if src_vals is not None else encode(fp32_vals((N, Frow)), src_dt) if src_dt in FLOATS else \
        RNG.integers(-50, 50, (N, Frow)).astype(STORE[src_dt])
    g.out_prefilled("y", dt, tab0)
    s = g.tile_in("x", src_dt, sv)
    vo = idx_tile(g, idx, idx_where, idx_order)
    dpairs = dst_levels or [[Frow, N], [1, Frow]]
    dyn = {"indirect_dim": "W", "indirect_dim_max_index": M, "vector_offset": vo}
    if extra:
        dyn.update(extra.pop("dyn", {}))
    dst = ap("y", dt, dpairs, (extra or {}).pop("offset", 0), **dyn)
    fields = {}
    if op is not None:
        fields["cce_op"] = op
    if oob_is_err is not None:
        fields["oob_is_err"] = oob_is_err
    nodes = list(g.pre) + [dma(tile(s, src_dt, N, Frow), dst, **fields)]
    outs, st = case(name, g, nodes, f"{HW}: {note}", choices, fault=fault)
    return g, outs, tab0, sv


def one_sum(tab0, sv, idx, dt, M):
    """The WRONG model: all contributions per row summed in fp32 (exactly, in float64), rounded once."""
    acc = decode(tab0, dt).astype(np.float64)
    for i, r in enumerate(idx):
        if r < M:
            acc[r] += decode(sv[i], dt).astype(np.float64)
    return encode(acc.astype(F32), dt)


# copy, distinct indices
g, o, t0, sv = scatter_case("hw_scatter_copy_fp32", "float32", 12, 6, [3, 0, 11, 7, 5], note="5 rows into a 12-row "
                            "fp32 table (index 11 = M - 1 kept)")
want = t0.copy()
for i, r in enumerate([3, 0, 11, 7, 5]):
    want[r] = sv[i]
assert np.array_equal(o["y"], want)
# duplicates: last writer wins
g, o, t0, sv = scatter_case("hw_scatter_copy_duplicates_last_wins", "float32", 8, 5, [2, 6, 2, 1, 6, 2],
                            note="6 rows with duplicates (2 x3, 6 x2): the last writer wins (serial copy)")
assert np.array_equal(o["y"][2], sv[5]) and np.array_equal(o["y"][6], sv[4])
scatter_case("hw_scatter_bypass_duplicates", "bfloat16", 6, 7, [5, 5, 0, 5], op="bypass",
             note="cce_op bypass = copy, bf16, duplicates: last writer wins")
# add with duplicates: fp32 (rounding at every step)
M, Fr = 6, 8
idx = [1, 4, 1, 1, 4, 0, 1, 3]
t0 = np.ones((M, Fr), F32)
t0[4] = 1e8
sv = fp32_vals((len(idx), Fr))
sv[[0, 2, 3, 6]] = np.float32(2 ** -24)  # four 2^-24 into 1.0 (row 1): each step ties back to 1.0; one sum = 1 + 2^-22
sv[[1, 4]] = np.array([[3.0, -1e8, 1.0, 5.0, 0.5, 7.0, 1e-3, 2.0], [3.0, 1e8, 1.0, 5.0, 0.5, 7.0, 1e-3, 2.0]], F32)
g, o, t0, sv = scatter_case("hw_scatter_add_duplicates_fp32", "float32", M, Fr, idx, op="add", tab_vals=t0, src_vals=sv,
                            note="cce_op add with duplicates in fp32: widen, add, round at every step in index order "
                            "(I12; isDstReduceDGE)")
assert o["y"][1, 0] == 1.0 and one_sum(t0, sv, idx, "float32", M)[1, 0] == np.float32(1 + 2 ** -22)
assert not np.array_equal(o["y"], one_sum(t0, sv, idx, "float32", M))
# add with duplicates: bf16
t0b = encode(np.ones((M, Fr), F32) * np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0], F32)[:, None], "bfloat16")
svb = encode(fp32_vals((len(idx), Fr), 0.5), "bfloat16")
svb[[0, 2, 3, 6], 0] = encode(np.float32(2 ** -7), "bfloat16")  # 4 x 2^-7 into 2.0 (row 1): each a tie -> 2.0; once -> 2 + 2^-5
g, o, t0b, svb = scatter_case("hw_scatter_add_duplicates_bf16", "bfloat16", M, Fr, idx, op="add", tab_vals=t0b, src_vals=svb,
                              note="cce_op add with duplicates in bf16: rounded to bf16 at every step (I12)")
assert o["y"][1, 0] == 0x4000 and one_sum(t0b, svb, idx, "bfloat16", M)[1, 0] == 0x4002
assert not np.array_equal(o["y"], one_sum(t0b, svb, idx, "bfloat16", M))
# int32 add wraps
ti = np.full((4, 4), 2 ** 31 - 10, np.int32)
si = np.array([[7, 1, -5, 0], [7, 2, 0, 0], [-1, 3, 0, 0]], np.int32)
g, o, _, _ = scatter_case("hw_scatter_add_int32_wraps", "int32", 4, 4, [2, 2, 2], op="add", tab_vals=ti, src_vals=si,
                          note="cce_op add on int32 with a duplicate row: wraps (cast_copy_or_accumulate)")
assert int(o["y"][2, 0]) == (2 ** 31 - 10 + 13 + 2 ** 31) % 2 ** 32 - 2 ** 31
# add on uint8 -> numerics fault, table unchanged
g, o, t0, _ = scatter_case("hw_scatter_add_uint8_numerics", "uint8", 4, 4, [1, 2], op="add",
                           tab_vals=np.arange(16, dtype=np.uint8).reshape(4, 4), src_vals=np.ones((2, 4), np.uint8),
                           note="cce_op add into uint8 (not reducible): fault numerics before any write", fault=("numerics", ""))
assert np.array_equal(o["y"], np.arange(16, dtype=np.uint8).reshape(4, 4))
# unsupported cce ops
for op in ("max", "mult"):
    g, o, t0, _ = scatter_case(f"hw_scatter_cce_{op}_unsupported", "float32", 6, 4, [1, 2, 3], op=op,
                               note=f"cce_op {op}: only copy / add reach the DGE reduce (seed 000 §6.4/§7) -> fault "
                               "unsupported-op, table unchanged", fault=("unsupported-op", ""))
    assert np.array_equal(o["y"], t0)
# copy with a cast fp32 -> bf16
g, o, t0, sv = scatter_case("hw_scatter_copy_cast_fp32_to_bf16", "bfloat16", 5, 6, [4, 1, 3], src_dt="float32",
                            note="fp32 rows into a bf16 table: cast per element like doCopy (RNE)")
assert np.array_equal(o["y"][1], encode(sv[1], "bfloat16"))
# bounds
g, o, t0, sv = scatter_case("hw_scatter_index_m_minus_1_kept", "float32", 7, 4, [6, 0, 6], note="index M - 1 = 6 is "
                            "in bounds (the last row), twice")
assert np.array_equal(o["y"][6], sv[2])
g, o, t0, sv = scatter_case("hw_scatter_index_m_skipped", "float32", 7, 4, [2, 7, 5, 7], oob_is_err=False,
                            tab_vals=distinct(8, 4), table_rows=8,
                            note="index M = 7 with oob_is_err false: that row skipped (the -1 sentinel, G7 CONFIRMED) even "
                            "though the 8-row table holds a row 7; the others written")
assert np.array_equal(o["y"][7], distinct(8, 4)[7]) and np.array_equal(o["y"][5], sv[2])
g, o, t0, _ = scatter_case("hw_scatter_index_m_fault", "float32", 7, 4, [2, 7, 5], table_rows=8,
                           note="index M = 7, oob_is_err default true: fault out-of-bounds naming outs[0].vector_offset; "
                           "the pre-filled table is unchanged (row 2 not written either)",
                           fault=("out-of-bounds", "outs[0].vector_offset"))
assert np.array_equal(o["y"], t0)
g, o, t0, _ = scatter_case("hw_scatter_index_m_fault_explicit", "float32", 7, 4, [2, 5, 9], oob_is_err=True,
                           note="index 9 > M with oob_is_err true: fault out-of-bounds, nothing written",
                           fault=("out-of-bounds", "outs[0].vector_offset"))
assert np.array_equal(o["y"], t0)
g, o, t0, sv = scatter_case("hw_scatter_index_65535_skipped_add", "float32", 7, 4, [65535, 3, 3], op="add",
                            oob_is_err=False, note="index 0xFFFF skipped (oob_is_err false), add of the others")
g, o, t0, _ = scatter_case("hw_scatter_row_leaves_location_fault", "float32", 10, 4, [1, 8, 2], table_rows=6,
                           note="M = 10 but the table holds 6 rows: index 8 < M leaves the location -> out of bounds "
                           "(G8), fault, nothing written", choices=["G8"], fault=("out-of-bounds", ""))
assert np.array_equal(o["y"], t0)
g, o, t0, sv = scatter_case("hw_scatter_row_leaves_location_skipped", "float32", 10, 4, [1, 8, 5, 6], table_rows=6,
                            oob_is_err=False, note="as the _fault case with oob_is_err false: rows 8 and 6 leave the "
                            "6-row location and are skipped (G8), 1 and 5 written", choices=["G8"])
assert np.array_equal(o["y"][5], sv[2]) and np.array_equal(o["y"][0], t0[0])
g, o, t0, sv = scatter_case("hw_scatter_row_partly_leaves_skipped", "float32", 6, 4, [5, 0, 3], table_rows=6,
                            oob_is_err=False, extra={"offset": 2},
                            note="destination offset 2 on a 6 x 4 table: row 5 would cover elements 22..25, past the 24 of "
                            "the location -> the whole row skipped (G8), rows 0 and 3 written at offset 2", choices=["G8"])
assert np.array_equal(o["y"].reshape(-1)[2:6], sv[1]) and np.array_equal(o["y"].reshape(-1)[20:24], t0.reshape(-1)[20:24])
# many random duplicates, bf16 add
M, Fr, N = 8, 16, 64
idx = [int(v) for v in RNG.integers(0, M, N)]
g, o, t0, sv = scatter_case("hw_scatter_add_random_dups_bf16", "bfloat16", M, Fr, idx, op="add",
                            src_vals=encode(fp32_vals((N, Fr), 1.0), "bfloat16"),
                            note="64 rows with random indices into 8 rows, bf16 add: each row sums ~8 contributions, rounded "
                            "to bf16 after each one in index order (I12)")
assert not np.array_equal(o["y"], one_sum(t0, sv, idx, "bfloat16", M))
# other geometries
g, o, t0, sv = scatter_case("hw_scatter_offset_stride_interleaved", "float32", 5, 3, [4, 0, 2], table_rows=10,
                            dst_levels=[[6, 3], [1, 3]], extra={"offset": 3},
                            note="destination AP [[6, N], [1, 3]] offset 3 on a 10 x 3 table: stride 6 = every other row, "
                            "row i lands at element 3 + 6*index[i] (odd rows)")
want = t0.copy().reshape(-1)
for i, r in enumerate([4, 0, 2]):
    want[3 + 6 * r + np.arange(3)] = sv[i]
assert np.array_equal(o["y"].reshape(-1), want)
scatter_case("hw_scatter_index_in_dram", "float32", 9, 5, [8, 1, 4, 1], idx_where="dram",
             note="the index AP in DRAM (one row), duplicates")
g, o, t0, sv = scatter_case("hw_scatter_index_ap_reversed", "float32", 9, 5, [3, 8, 0, 6], idx_order="rev",
                            note="the index AP walks its SB tile backwards (free step -1): index[i] = the AP's i-th element")
assert np.array_equal(o["y"][8], sv[1])
# 3-level destination, indirect_dim Z (level 1; J31): each row spans 2 planes
M, Fr, N = 5, 3, 3
g = Prog()
tab0 = distinct(2, M * Fr)
g.out_prefilled("y", "float32", tab0)
sv = fp32_vals((N, 2 * Fr))
s = g.tile_in("x", "float32", sv)
vo = idx_tile(g, [4, 0, 2])
dst = ap("y", "float32", [[M * Fr, 2], [Fr, N], [1, Fr]], indirect_dim="Z", indirect_dim_max_index=M, vector_offset=vo)
outs, st = case("hw_scatter_3level_indirect_z", g, list(g.pre) + [dma(tile(s, "float32", N, 2 * Fr), dst)],
                f"{HW}: a 3-level destination [[15, 2], [3, N], [1, 3]] with indirect_dim Z (level 1, stride 3): row i = "
                "both planes' row index[i] (6 elements), source row i = partition i (letters: J31)", choices=["J31"])
want = tab0.copy().reshape(2, M, Fr)
for i, r in enumerate([4, 0, 2]):
    want[:, r, :] = sv[i].reshape(2, Fr)
assert np.array_equal(outs["y"], want.reshape(2, -1))
# indirect_dim Z (level 1) on an SB destination: column scatter
Pp, M, N = 4, 10, 3
g = Prog()
d0 = distinct(Pp, M)
dtile = g.tile_in("d", "float32", d0)
sv = fp32_vals((N, Pp))
s = g.tile_in("x", "float32", sv)
vo = idx_tile(g, [9, 2, 5])
dst = ap(dtile, "float32", [[M, Pp], [1, N]], indirect_dim="Z", indirect_dim_max_index=M, vector_offset=vo)
nodes = list(g.pre) + [dma(tile(s, "float32", N, Pp), dst)] + g.save_all([(dtile, "float32")])
outs, st = case("hw_scatter_sb_columns_indirect_z", g, nodes,
                f"{HW}: an SB destination [[10, 4], [1, N]] with indirect_dim Z (stride 1): row i = column index[i] of "
                "the 4 partitions; source row i = its partition i (4 elements; Z on a 2-level AP = level 1: J31)",
                choices=["J31"])
want = d0.copy()
for i, c in enumerate([9, 2, 5]):
    want[:, c] = sv[i]
assert np.array_equal(outs["d"], want)
# both APs with a vector offset: the reference reads one offset argument (seed 000 §7 getIndirectArgId) -> a
# validation error (G56)
g = Prog()
g.out_prefilled("y", "float32", distinct(6, 4))
g.dram_in("tab", "float32", fp32_vals((6, 4)))
vo = idx_tile(g, [1, 2])
srcap = ap("tab", "float32", [[4, 2], [1, 4]], indirect_dim="W", indirect_dim_max_index=6, vector_offset=vo)
dst = ap("y", "float32", [[4, 2], [1, 4]], indirect_dim="W", indirect_dim_max_index=6, vector_offset=pycopy.deepcopy(vo))
case("err_hw_vector_offset_both_sides", g, list(g.pre) + [dma(srcap, dst)],
     f"{HW}: a vector offset on ins[0] and outs[0] at once: seed 000 §7's getIndirectArgId finds one offset argument, "
     "so validation refuses it (G56)",
     errors=[("bad-field", "(DMACopy) › outs[0].vector_offset", "getIndirectArgId")])


# gathers (G6)
def gather_case(name, dt, M, Frow, idx, op=None, oob_is_err=None, note="", fault=None, choices=("G6",), table_rows=None):
    g = Prog()
    N = len(idx)
    rows = M if table_rows is None else table_rows
    tab = encode(fp32_vals((rows, Frow)), dt)
    g.dram_in("tab", dt, tab)
    d0 = encode(fp32_vals((N, Frow)), dt)
    dt_ = g.tile_in("d", dt, d0)
    vo = idx_tile(g, idx)
    srcap = ap("tab", dt, [[Frow, N], [1, Frow]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=vo)
    fields = {}
    if op is not None:
        fields["cce_op"] = op
    if oob_is_err is not None:
        fields["oob_is_err"] = oob_is_err
    nodes = list(g.pre) + [dma(srcap, tile(dt_, dt, N, Frow), **fields)] + g.save_all([(dt_, dt)])
    if fault is not None:  # the Save never runs: compare the SB tile itself
        nodes = nodes[:-1]
        g.outs.remove("d")
        g.outs.append(dt_)
    outs, st = case(name, g, nodes, f"{HW}; gather = the same with the roles swapped (G6): {note}", choices, fault=fault)
    return outs, tab, d0


o, tab, d0 = gather_case("hw_gather_copy_fp32", "float32", 10, 6, [7, 0, 9, 7, 3], note="5 rows of a 10-row DRAM table "
                         "(7 twice, 9 = M - 1) into an SB tile")
assert np.array_equal(o["d"], tab[[7, 0, 9, 7, 3]])
o, tab, d0 = gather_case("hw_gather_index_m_skipped", "bfloat16", 6, 5, [5, 6, 1], oob_is_err=False,
                         note="bf16, index M = 6 with oob_is_err false: destination row 1 keeps its value")
assert np.array_equal(o["d"][1], d0[1]) and np.array_equal(o["d"][0], tab[5])
o, tab, d0 = gather_case("hw_gather_index_m_fault", "float32", 6, 5, [5, 6, 1],
                         note="index M = 6, oob_is_err default: fault out-of-bounds naming ins[0].vector_offset; the SB "
                         "destination unchanged", fault=("out-of-bounds", "ins[0].vector_offset"))
assert np.array_equal(o["d_t"], d0)
o, tab, d0 = gather_case("hw_gather_add_bf16", "bfloat16", 6, 5, [2, 2, 4], op="add",
                         note="cce_op add on a gather: destination row i += table row index[i], rounded to bf16 (dma_compute "
                         "RMW gather)")
assert np.array_equal(o["d"][0], acc_add(d0[0], tab[2], "bfloat16"))
o, tab, d0 = gather_case("hw_gather_row_leaves_location_skipped", "float32", 9, 4, [3, 7, 8, 0], oob_is_err=False,
                         table_rows=7, note="M = 9 but the table holds 7 rows: indices 7 and 8 leave it and are skipped (G8)",
                         choices=("G6", "G8"))
assert np.array_equal(o["d"][1], d0[1]) and np.array_equal(o["d"][3], tab[0])



# more geometries: an SB table (rows = partitions), add; a 2-D index tile read in AP order
M, Fr, N = 8, 6, 5
g = Prog()
t0 = encode(fp32_vals((M, Fr)), "float32")
tt = g.tile_in("tab", "float32", t0)
sv = fp32_vals((N, Fr))
g.dram_in("x", "float32", sv)
vo = idx_tile(g, [7, 3, 3, 0, 7])
dst = ap(tt, "float32", [[Fr, N], [1, Fr]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=vo)
nodes = list(g.pre) + [dma(tile("x", "float32", N, Fr), dst, cce_op="add")] + g.save_all([(tt, "float32")])
outs, st = case("hw_scatter_add_dram_to_sb_partitions", g, nodes,
                f"{HW}: DRAM rows added into an 8-partition SB table (indirect_dim W, stride = the partition pitch), "
                "duplicates 7 and 3 accumulate in index order (I12)")
want = t0.copy()
for i, r in enumerate([7, 3, 3, 0, 7]):
    want[r] = (want[r] + sv[i]).astype(F32)
assert np.array_equal(outs["tab"], want)
M, Fr = 9, 4
idx2 = np.array([[8, 2, 5], [0, 2, 7]], np.uint16)  # AP order: 8, 2, 5, 0, 2, 7
g = Prog()
t0 = distinct(M, Fr)
g.out_prefilled("y", "float32", t0)
sv = fp32_vals((6, Fr))
s_ = g.tile_in("x", "float32", sv)
it = g.tile_in("idx", "uint16", idx2)
vo = ap(it, "uint16", [[3, 2], [1, 3]])
dst = ap("y", "float32", [[Fr, 6], [1, Fr]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=vo)
outs, st = case("hw_scatter_index_2d_tile", g, list(g.pre) + [dma(tile(s_, "float32", 6, Fr), dst)],
                f"{HW}: the 6 indices come from a [2, 3] uint16 SB tile, index[i] = its i-th element in AP order "
                "(8, 2, 5, 0, 2, 7: row 2 written twice, the later wins)")
want = t0.copy()
for i, r in enumerate([8, 2, 5, 0, 2, 7]):
    want[r] = sv[i]
assert np.array_equal(outs["y"], want)

# ================================================================ 5b. HW-DGE through descriptors fired by a trigger
DH = ("contract §1 + §2: a DMADescriptorCopy whose outs[0] carries a vector_offset runs exactly as its DMACopy twin, "
      "the HW-DGE scatter (descriptors have no oob_is_err field: true)")
M, Fr = 10, 4
g = Prog()
acc, hmk, a0 = recorder(g, 2)
t0 = distinct(M, Fr)
g.out_prefilled("y", "float32", t0)
svA, svB = fp32_vals((3, Fr)), fp32_vals((2, Fr))
sA, sB = g.tile_in("xa", "float32", svA), g.tile_in("xb", "float32", svB)
iA = g.tile_in("ia", "uint16", np.array([[1], [9], [4]], np.uint16))
iB = g.tile_in("ib", "uint16", np.array([[4], [0]], np.uint16))
dA = ap("y", "float32", [[Fr, 3], [1, Fr]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=ap(iA, "uint16", [[1, 3], [1, 1]]))
dB = ap("y", "float32", [[Fr, 2], [1, Fr]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=ap(iB, "uint16", [[1, 2], [1, 1]]))
blocks = [[hmk(0), desc("Copy", tile(sA, "float32", 3, Fr), dA, ntd=2)], [hmk(1), desc("Copy", tile(sB, "float32", 2, Fr), dB, ntd=2)]]
nodes = list(g.pre) + [block(f"blk{k}", b) for k, b in enumerate(blocks)] + [loop(3, [trigger("trig", ["blk0", "blk1"])])]
nodes += g.save_all([(acc, "float32")])
outs, st = trig_case("desc_hw_scatter_copy", g, nodes, f"{DH}: blk0 scatters 3 rows to (1, 9, 4), blk1 2 rows to (4, 0); "
                     "fired 0, 1, 0: row 4 ends with blk0's second fire")
want = t0.copy()
for sv_, ix in ((svA, [1, 9, 4]), (svB, [4, 0]), (svA, [1, 9, 4])):
    for i, r in enumerate(ix):
        want[r] = sv_[i]
assert np.array_equal(outs["y"], want)

# a descriptor fault mid-loop: earlier fires (and the earlier descriptors of the faulting block) stay written
g = Prog()
acc, hmk, a0 = recorder(g, 2)
t0 = distinct(M, Fr)
g.out_prefilled("y", "float32", t0)
sA, sB = g.tile_in("xa", "float32", svA), g.tile_in("xb", "float32", svB)
iA = g.tile_in("ia", "uint16", np.array([[1], [9], [4]], np.uint16))
iB = g.tile_in("ib", "uint16", np.array([[3], [10]], np.uint16))
dA = ap("y", "float32", [[Fr, 3], [1, Fr]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=ap(iA, "uint16", [[1, 3], [1, 1]]))
dB = ap("y", "float32", [[Fr, 2], [1, Fr]], indirect_dim="W", indirect_dim_max_index=M, vector_offset=ap(iB, "uint16", [[1, 2], [1, 1]]))
blocks = [[hmk(0), desc("Copy", tile(sA, "float32", 3, Fr), dA, ntd=2)], [hmk(1), desc("Copy", tile(sB, "float32", 2, Fr), dB, ntd=2)]]
nodes = list(g.pre) + [block(f"blk{k}", b) for k, b in enumerate(blocks)] + [loop(3, [trigger("trig", ["blk0", "blk1"])])]
g.outs.append(acc)  # compared in SB: the run stops before any Save
outs, st = trig_case("desc_hw_scatter_oob_fault", g, nodes,
                     f"{DH}: fired 0 then 1; blk1's scatter holds index 10 = M -> fault out-of-bounds (oob_is_err true) "
                     "after blk1's history descriptor ran; blk0's rows and both history steps stay, blk1's row 3 is "
                     "not written (all-or-nothing per descriptor)", fault=("out-of-bounds", "outs[0].vector_offset"))
want = t0.copy()
for i, r in enumerate([1, 9, 4]):
    want[r] = svA[i]
assert np.array_equal(outs["y"], want) and np.array_equal(outs["hacc_t"].astype(np.float64), spelled(a0, [0, 1], 3))

# ================================================================ 6. validation errors
def err_prog(body, allocs):
    g = Prog()
    for name, (dt, p, f) in allocs.items():
        g.sb(name, dt, p, f)
    return g


EA = {"a": ("float32", 4, 8), "b": ("float32", 4, 8), "t": ("float32", 8, 8), "ix": ("uint16", 4, 1), "ix5": ("uint16", 5, 1),
      "ixi": ("int32", 4, 1)}
g = err_prog([], EA)
TA = tile("a", "float32", 4, 8)
TB = tile("b", "float32", 4, 8)
nodes = [block("blk0", [desc("Copy", TA, TB)]), trigger("trig", ["blk0", "nope"])]
case("err_trigger_unknown_block", g, nodes, "a DMATrigger naming no DMABlock (J21)",
     errors=[("unresolved-ref", "'trig' (DMATrigger) › dma_blocks[1]", "no DMABlock instruction is named 'nope'")])
nodes = [block("blk0", [desc("Copy", TA, TB)]), block("blk0", [desc("Copy", TB, TA)]), trigger("trig", ["blk0"])]
case("err_trigger_duplicate_block_name", g, nodes, "two DMABlocks named blk0: the trigger's reference is ambiguous (J21)",
     errors=[("duplicate-name", "'trig' (DMATrigger) › dma_blocks[0]", "2 DMABlock instructions are named 'blk0'")])
nodes = [block("blk0", [{"opcode": "DMACopy", "engine": "DMA", "ins": [TA], "outs": [TB], "mode": "Copy"}]), trigger("trig", ["blk0"])]
case("err_block_holds_dmacopy", g, nodes, "a DMABlock holding a DMACopy instead of a DMADescriptor* (J21)",
     errors=[("bad-field", "'blk0' (DMABlock) › descriptors[0].opcode", "found DMACopy")])
ixap = ap("ix5", "uint16", [[1, 5], [1, 1]])
nodes = [dma(tile("a", "float32", 4, 8), ap("t", "float32", [[8, 4], [1, 8]], indirect_dim="W", indirect_dim_max_index=8,
                                             vector_offset=ixap))]
case("err_hw_index_count", g, nodes, "HW-DGE scatter with 4 source rows and 5 indices: validation shape error (contract §2)",
     errors=[("ap-shape", "(DMACopy)", "")])
ixap = ap("ix", "uint16", [[1, 4], [1, 1]])
nodes = [dma(ap("a", "float32", [[8, 4], [1, 6]]), ap("t", "float32", [[8, 3], [1, 8]], indirect_dim="W", indirect_dim_max_index=8,
                                                       vector_offset=ixap))]
case("err_hw_row_lengths_differ", g, nodes, "HW-DGE scatter with 4 source rows of 6 elements (24) into destination rows of 8 "
     "(the AP [[8, 3], [1, 8]] also holds 24, so only the row lengths differ): validation shape error (contract §2)",
     errors=[("ap-shape", "(DMACopy)", "")])
ixap = ap("ixi", "int32", [[1, 4], [1, 1]])
nodes = [dma(tile("a", "float32", 4, 8), ap("t", "float32", [[8, 4], [1, 8]], indirect_dim="W", indirect_dim_max_index=8,
                                             vector_offset=ixap))]
case("err_hw_index_int32", g, nodes, "a vector_offset AP of int32: must be uint16 (J32)",
     errors=[("dtype", "(DMACopy) › outs[0].vector_offset.dtype", "must be uint16")])


# ================================================================ write
def write_all():
    birprog.clear_cases(HERE)
    total = 0
    for name, (prog_json, g, outs, note, choices, fault, errors, options) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes oracle of /work/dge-decisions.md), "
                 "never from birsim"]
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
            inputs, outputs = g.inputs, outs
        total += birprog.write_case(os.path.join(HERE, name), prog_json, lines, inputs, outputs, compact=True)
    errs = sum(1 for c in CASES.values() if c[6])
    trig = sum(1 for n in CASES if n.endswith("_direct"))
    print(f"{len(CASES)} cases ({len(CASES) - errs} run: {trig} trigger programs + their {trig} _direct twins, "
          f"{len(CASES) - errs - 2 * trig} HW-DGE; {errs} validation errors), {total / 2**20:.2f} MiB of tensors")


write_all()
