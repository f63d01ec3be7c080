#!/usr/bin/env python3
"""Writes the `programs/calls` conformance suite: Call (84) and ReadVarAddr (41) -- whole programs of
several functions (an entry function and the functions its Calls run), with .npy inputs and expected
.npy outputs (or an expected fault / validation error).

The expected values come from two independent emulations of the written spec (SPEC.md in this
directory, which summarises docs/bir-json.md "Registers and control flow" / `Call` / `ReadVarAddr`,
docs/fidelity.md B7, B9, B14, B15 and docs/dge.md G9), never from birsim (nothing under
crates/simulator was read, and birsim's output was never copied):
  * `Machine`: a small step-by-step interpreter of SPEC.md over the program JSON this script writes
    (functions with their own name -> location maps, locations shared with the entry function by
    name, a callee's own locations kept static, a call stack with its depth limit, per-engine
    register files, block lists with the next-block slot, the loops, the G9 address of a location
    element). It gives every output, the partial state at a fault, and the fault line;
  * per case, a direct NumPy / plain-Python formula of what the program computes (`check=`), which
    the interpreter's outputs must equal (asserted), so a slip in one shows as a mismatch.

Readings taken where the spec leaves room (each is also listed in README.md):
  A1 Call depth: "calls nest at most 64 deep" counts the active Calls (the entry function itself is
     depth 0): 64 nested Calls run, the 65th Call faults before its callee's first instruction.
     `recursion_64_deep` runs exactly 64 nested Calls (no fault), `hostile_endless_recursion` faults
     at the 65th.
  A2 The depth fault's message is only said to name "the functions on the way": the case expects
     the kind `budget` and a message containing the recursing function's name (`dive`).
  A3 The no-progress rule (B9: "a Call counts as control flow") is not relied on: every recursion
     changes state (a TensorSave / register add) between two runs of a Call or branch, so neither
     reading (a Call only "does not count as progress", or a Call running again with nothing changed
     faults like a branch) changes a result. The interpreter checks the strict reading and asserts it
     never fires.
  A4 Location ordinals (G9/B15): the entry function's locations are numbered in the order of its
     `allocations` (one location each here), 0, 1, 2, ...; a called function's own locations follow,
     numbered consecutively in the callee's declaration order, skipping its shared (same-named)
     locations. Only ONE non-entry function of each program has own locations: with several, the
     spec does not say whether they are numbered in program order, first-call order or validation
     order. `read_var_addr_in_callee` declares the callee's own locations before its shared ones (so
     "index in the callee's list" and "consecutive own locations" agree); `read_var_addr_callee_
     interleaved` interleaves them and relies on the consecutive reading (its own case).
  A5 ReadVarAddr writes an address whose value is < 2^63, so the int64 and uint64 outputs hold the
     same bits. Locations have addr 0 and start at partition 0 and are not `allocated` (private
     buffers), so a partitioned location's element e is at (e / pitch) * dims[1] + (e % pitch) * size
     = e * size (the "layout origin" of a private buffer is not in question).
  A6 A callee's allocation for a location it shares with the entry function is written as the
     entry's allocation verbatim (same kind, dtype, type, dims).
  A7 Validation errors: a Call whose `target` names no function is reported as `unresolved-ref`
     (the kind docs/robustness.md gives a DMATrigger naming no DMABlock, and a memref naming no
     location), located at the Call instruction, its message naming the target.
  A8 After an Exit / a fault the SB allocations of the entry function are compared (the later
     Saves to DRAM outputs never run).
  A9 ReadVarAddr reads no element's bytes, only where the first one is; its instructions carry
     `can_read_uninit: true` (one of its DMA fields) so that an uninitialised-read checker (B10)
     cannot take the address read of a never-written location (the outputs, PSUM) for a data read.

Run: /work/main/.venv/bin/python conformance/programs/calls/make_cases.py
"""
import copy
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the shared program builder)
from birprog import ap, ap_index, imm  # noqa: E402

np.seterr(all="raise")
HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20300084
M32 = 0xFFFFFFFF
MAX_CALL_DEPTH = 64
FP32, I16, I32, U32, I64, U64 = "float32", "int16", "int32", "uint32", "int64", "uint64"
STORE = {FP32: np.float32, I16: np.int16, I32: np.int32, U32: np.uint32, I64: np.int64, U64: np.uint64}
SIZE = {FP32: 4, I16: 2, I32: 4, U32: 4, I64: 8, U64: 8}
INT_DTS = (I16, I32, U32)
LEVEL = {"W": 0, "Z": 1, "Y": 2, "X": 3}


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def s32(x):
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def R(name, dt=I32):
    return {"kind": "register_access", "dtype": dt, "regref": name}


def IMM(v, dt=I32):
    return imm(int(v), dt)


def dyn(a, letter, max_index, reg):
    """AP `a` with a register-held scalar offset on `letter`."""
    a = dict(a)
    a.update({"indirect_dim": letter, "indirect_dim_max_index": max_index, "scalar_offset": reg})
    return a


def full(mem, dt, p, f):
    return ap(mem, dt, [[f, p], [1, f]])


def one(mem, dt, k=0, row=1):
    """The one element k of a location (a 2-level one-element AP)."""
    return ap(mem, dt, [[row, 1], [1, 1]], k)


def row_of(mem, dt, f, nrows, reg):
    """Row `reg` (a register) of a [nrows, f] location: partition `reg` of an SB tile."""
    return dyn(ap(mem, dt, [[f, 1], [1, f]]), "W", nrows, reg)


# ---------------------------------------------------------------- program building
class Allocs(birprog.Allocations):
    STORE = STORE
    SIZE = SIZE

    def psum(self, name, dt, parts, row_elems):
        self._alloc(name, "Internal", dt, [parts, row_elems], "PSUM", [parts, row_elems * SIZE[dt]])


class Case(Allocs):
    """One program: the entry function's allocations and inputs, its body, the other functions."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.n = 0
        self.funcs = []  # (name, allocations, blocks) of the non-entry functions

    # instructions ------------------------------------------------------------------------------
    def I(self, opcode, eng, ins=(), outs=(), **fields):
        self.n += 1
        return dict({"opcode": opcode, "name": f"{opcode[:1].lower()}{self.n}", "engine": eng,
                     "ins": list(ins), "outs": list(outs)}, **fields)

    def mov(self, eng, dst, src):
        return self.I("RegisterMove", eng, [src], [dst])

    def alu(self, eng, op, dst, a, b):
        return self.I("RegisterAlu", eng, [a, b], [dst], op=op)

    def tload(self, eng, reg, a):
        return self.I("TensorLoad", eng, [a], [reg])

    def tsave(self, eng, reg, a):
        return self.I("TensorSave", eng, [reg], [a])

    def cab(self, eng, op, a, b, on_true=None, on_false=None):
        f = {"comp_op": op}
        if on_true is not None:
            f["on_true"] = on_true
        if on_false is not None:
            f["on_false"] = on_false
        return self.I("CompareAndBranch", eng, [a, b], [], **f)

    def ub(self, eng, target):
        return self.I("UnconditionalBranch", eng, target=target)

    def call(self, eng, target):
        return self.I("Call", eng, target=target)

    def rva(self, src, dst):
        # A9: can_read_uninit, so no uninitialised-read checker can count the address read as a data read
        return self.I("ReadVarAddr", "SP", [src], [dst], can_read_uninit=True)

    def copy(self, opcode, eng, src, dst, **f):
        return self.I(opcode, eng, [src], [dst], **f)

    def block(self, name, insts):
        return {"name": name, "instructions": list(insts)}

    def loop(self, var, lb, ub, stride, blocks):
        return {"opcode": "Loop", "name": f"loop_{var}", "LoopAxis": {"name": var, "lb": lb, "ub": ub,
                                                                       "stride": stride}, "blocks": blocks}

    def dfor(self, eng, var, lb, stride, ub_const, ub_coef, reg, ind, blocks):
        self.n += 1
        return {"opcode": "DynamicForLoop", "name": f"dfl{self.n}", "engine": eng,
                "LoopAxis": {"name": var, "lb": lb, "stride": stride}, "ub_const": ub_const,
                "ub_coef": ub_coef, "ins": [reg], "outs": [] if ind is None else [ind], "blocks": blocks}

    # allocations -------------------------------------------------------------------------------
    def out(self, name, dt, shape):
        self._dram_out(name, dt, list(shape))

    def shared(self, name):
        """The entry function's allocation `name`, verbatim, for a callee (A6)."""
        return copy.deepcopy(next(a for a in self.allocs if a["name"] == name))

    def own(self):
        """A fresh allocation list for a callee's own locations (Allocs.sb / psum / dram on it)."""
        return Allocs()

    def func(self, name, allocs, blocks):
        """A non-entry function: `allocs` a list of allocation dicts (shared() / own().allocs)."""
        self.funcs.append({"name": name, "allocations": allocs, "blocks": blocks})

    def program(self, body):
        return {"arch": "gen3", "version": 2,
                "functions": [{"name": self.name, "allocations": self.allocs, "blocks": body}] + self.funcs}


# ---------------------------------------------------------------- the SPEC.md interpreter
class Fault(Exception):
    def __init__(self, kind, msg):
        super().__init__(f"{kind} | {msg}")
        self.kind, self.msg = kind, msg


class Finished(Exception):
    """Exit (or Return in the entry function): the run ends, finished."""


class Returned(Exception):
    """Return: the running function ends."""


class Loc:
    def __init__(self, ordinal, alloc):
        loc = alloc["memorylocations"][0]
        self.ordinal, self.name, self.dt, self.type = ordinal, loc["name"], alloc["dtype"], loc["type"]
        self.dims = list(loc["dims"])
        assert loc.get("addr", 0) == 0 and loc.get("base", 0) == 0 and not loc.get("allocated", False)  # A5
        n = self.dims[0] * self.dims[1] // SIZE[self.dt]
        self.arr = np.zeros(n, STORE[self.dt])
        self.written = np.zeros(n, bool)
        self.partitioned = self.type in ("SB", "PSUM")

    def address(self, e):
        """docs/dge.md G9: base (k + 1) << 40 plus element e's byte offset in the location's buffer."""
        base = (self.ordinal + 1) << 40
        size = SIZE[self.dt]
        if self.partitioned:
            pitch = self.dims[1] // size
            return base + (e // pitch) * self.dims[1] + (e % pitch) * size
        return base + e * size


class Machine:
    """Runs a program JSON by SPEC.md. Memory: one flat element array per location (AP element e is
    flat element e); reads of never-written elements are refused (the cases never rely on 0xFF)."""

    def __init__(self, prog, inputs):
        funcs = prog["functions"]
        self.entry = funcs[0]
        self.funcs = {f["name"]: f for f in funcs}
        self.locs = []  # by ordinal
        self.scope = {}  # function name -> {location name: Loc}
        entry_scope = {}
        for a in self.entry["allocations"]:
            loc = Loc(len(self.locs), a)
            self.locs.append(loc)
            entry_scope[loc.name] = loc
            if a["name"] in inputs:
                loc.arr[:] = np.asarray(inputs[a["name"]]).reshape(-1)
                loc.written[:] = True
        self.scope[self.entry["name"]] = entry_scope
        with_own = 0
        for f in funcs[1:]:
            sc = {}
            own = 0
            for a in f["allocations"]:
                name = a["memorylocations"][0]["name"]
                if name in entry_scope:  # B14: named like an entry location: that location
                    e = entry_scope[name]
                    assert (a["memorylocations"][0]["type"], a["memorylocations"][0]["dims"]) == (e.type, e.dims)
                    sc[name] = e
                else:  # its own, static; ordinals after the entry's (A4)
                    loc = Loc(len(self.locs), a)
                    self.locs.append(loc)
                    sc[name] = loc
                    own += 1
            with_own += own > 0
            self.scope[f["name"]] = sc
        assert with_own <= 1, "A4: at most one non-entry function with own locations"
        self.regs = {}
        self.count = 0
        self.stack = [self.entry["name"]]
        self.loopvars = {}
        self.changes, self.branch_seen = 0, {}
        self.max_depth = 0

    def loc(self, a):
        return self.scope[self.stack[-1]][a["memref"]]

    # registers ---------------------------------------------------------------------------------
    def rd(self, eng, op):
        if op["kind"] == "imm_value":
            return int(op["value"]) & M32
        key = (eng, op["regref"])
        if key not in self.regs:
            raise Fault("uninitialized", f"register '{op['regref']}'")
        return self.regs[key]

    def wr(self, eng, op, bits):
        self.regs[(eng, op["regref"])] = bits & M32

    def val(self, eng, op):
        b = self.rd(eng, op)
        return s32(b) if op["dtype"] == I32 else b

    # memory ------------------------------------------------------------------------------------
    def idx(self, eng, a):
        off = a.get("offset", 0)
        pairs = a["ap"]
        loc = self.loc(a)
        if "scalar_offset" in a:
            i = self.val(eng, R(a["scalar_offset"], I32))
            if i < 0 or i >= a["indirect_dim_max_index"]:
                raise Fault("out-of-bounds", "scalar_offset")
            off += i * pairs[LEVEL[a["indirect_dim"]]][0]
        ix = ap_index(pairs, off).reshape(-1)
        assert ix.min() >= 0 and ix.max() < loc.arr.size, a
        return ix

    def read(self, eng, a):
        ix = self.idx(eng, a)
        loc = self.loc(a)
        assert a["dtype"] == loc.dt
        assert loc.written[ix].all(), ("interpreter read of unwritten memory", a)
        return loc.arr[ix].copy()

    def write(self, eng, a, v, ix=None):
        if ix is None:
            ix = self.idx(eng, a)
        loc = self.loc(a)
        assert a["dtype"] == loc.dt
        v = np.asarray(v)
        assert v.dtype == STORE[loc.dt], (v.dtype, loc.dt)
        loc.arr[ix] = v.reshape(-1)
        loc.written[ix] = True

    # execution ---------------------------------------------------------------------------------
    def run(self):
        try:
            self.run_list(self.entry["blocks"])
        except (Finished, Returned):  # a Return in the entry function ends the run
            pass

    def run_list(self, entries):
        names = {e["name"]: k for k, e in enumerate(entries) if "instructions" in e}
        k = 0
        while k < len(entries):
            e = entries[k]
            if "instructions" in e:
                target = None
                for ins in e["instructions"]:
                    t = self.exec(ins)
                    if t == "BREAK":
                        target = None
                    elif t is not None:
                        assert t in names, t
                        target = t
                k = names[target] if target is not None else k + 1
                continue
            op = e["opcode"]
            if op == "Loop":
                ax = e["LoopAxis"]
                for i in range(ax["lb"], ax["ub"], ax.get("stride", 1)):
                    self.loopvars[ax["name"]] = i
                    self.changes += 1
                    self.run_list(e["blocks"])
            elif op == "DynamicForLoop":
                ax = e["LoopAxis"]
                ub = e["ub_const"] + e["ub_coef"] * self.val(e["engine"], e["ins"][0])
                i, s = ax["lb"], ax["stride"]
                assert isinstance(i, int) and isinstance(s, int) and s > 0
                while i < ub:
                    self.loopvars[ax["name"]] = i
                    self.changes += 1
                    if e["outs"]:
                        self.wr(e["engine"], e["outs"][0], i)
                    self.run_list(e["blocks"])
                    i += s
            else:
                raise ValueError(op)
            k += 1

    def exec(self, ins):
        self.count += 1
        op, eng = ins["opcode"], ins["engine"]
        if op in ("CompareAndBranch", "UnconditionalBranch", "Call"):
            # A3: the strict reading of the no-progress rule (a Call like a branch) must never fire
            assert self.branch_seen.get(id(ins)) != self.changes, ("no-progress rule would fire", ins["name"])
            self.branch_seen[id(ins)] = self.changes
        elif op not in ("Break", "BranchHint", "Halt", "Return", "Exit"):
            self.changes += 1
        i0 = ins["ins"][0] if ins["ins"] else None
        o0 = ins["outs"][0] if ins["outs"] else None
        if op == "RegisterMove":
            self.wr(eng, o0, self.rd(eng, i0))
        elif op == "RegisterAlu":
            a, b = self.rd(eng, i0), self.rd(eng, ins["ins"][1])
            assert ins["op"] in ("add", "subtract")
            self.wr(eng, o0, (a + b) if ins["op"] == "add" else (a - b))
        elif op == "TensorLoad":
            v = self.read(eng, i0)
            assert v.size == 1 and i0["dtype"] in INT_DTS
            self.wr(eng, o0, int(v[0]) & M32)
        elif op == "TensorSave":
            bits = self.rd(eng, i0)
            assert o0["dtype"] in (I32, U32)
            self.write(eng, o0, np.array([bits], np.uint32).view(STORE[o0["dtype"]]))
        elif op == "CompareAndBranch":
            c = ins["comp_op"]
            a, b = self.rd(eng, i0), self.rd(eng, ins["ins"][1])
            if i0["dtype"] == I32:
                a, b = s32(a), s32(b)
            res = {"EQ": a == b, "NE": a != b, "LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b}[c[3:5]]
            t = ins.get("on_true") if res else ins.get("on_false")
            return t if t is not None else "BREAK"
        elif op == "UnconditionalBranch":
            return ins["target"]
        elif op == "Break":
            return "BREAK"
        elif op == "Return":
            raise Returned()
        elif op == "Exit":
            raise Finished()
        elif op in ("Halt", "BranchHint"):
            pass
        elif op == "Call":
            target = ins["target"]
            if len(self.stack) - 1 >= MAX_CALL_DEPTH:  # A1: the 65th nested Call faults
                raise Fault("budget", " > ".join(self.stack + [target]))
            self.stack.append(target)
            self.max_depth = max(self.max_depth, len(self.stack) - 1)
            saved = self.loopvars
            self.loopvars = {}
            try:
                self.run_list(self.funcs[target]["blocks"])
            except Returned:
                pass
            self.loopvars = saved
            self.stack.pop()
        elif op == "ReadVarAddr":
            ix = self.idx(eng, i0)
            loc = self.loc(i0)
            assert i0["dtype"] == loc.dt
            addr = loc.address(int(ix[0]))
            assert addr < 2**63  # A5
            assert o0["dtype"] in (I64, U64) and self.idx(eng, o0).size == 1
            self.write(eng, o0, np.array([addr], STORE[o0["dtype"]]))
        elif op in ("Load", "Save", "TensorCopy"):
            self.write(eng, o0, self.read(eng, i0))
        elif op == "Memset":
            ix = self.idx(eng, o0)
            dt = o0["dtype"]
            v = np.full(ix.size, ins["constant"] & ((1 << 8 * SIZE[dt]) - 1), {4: np.uint32}[SIZE[dt]])
            self.write(eng, o0, v.view(STORE[dt]), ix)
        elif op == "TensorTensor":
            x, y = self.read(eng, i0), self.read(eng, ins["ins"][1])
            assert ins["op"] == "add"
            self.write(eng, o0, (x + y).astype(np.float32))
        elif op == "TensorScalar":
            x = self.read(eng, i0)
            assert ins["op0"] == "mult" and ins.get("op1", "bypass") in ("add", "bypass")
            v = (x * np.float32(ins["const0"])).astype(np.float32)
            if ins.get("op1") == "add":
                v = (v + np.float32(ins["const1"])).astype(np.float32)
            self.write(eng, o0, v)
        else:
            raise ValueError(op)
        return None


# ---------------------------------------------------------------- case registry
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


class Built:
    def __init__(self, c, body, what, outs, fault=None, check=None, choices=(), errors=(), readings=()):
        """`outs`: entry allocations compared (DRAM outputs / SB tiles); `check`: name -> array from the
        direct formula, asserted equal to the interpreter's; `errors`: expected validation lines
        (the program is then only loaded and validated)."""
        self.c, self.body, self.what, self.outs, self.fault = c, body, what, outs, fault
        self.check = check or {}
        self.choices = list(choices)
        self.errors = list(errors)
        self.readings = list(readings)


def finish(b):
    prog = b.c.program(b.body)
    if b.errors:
        return prog, {}, None
    m = Machine(prog, b.c.inputs)
    fault = None
    try:
        m.run()
    except Fault as f:
        fault = f
    got = f"{fault.kind} | {fault.msg}" if fault else None
    if b.fault is None:
        assert got is None, (b.c.name, got)
    else:
        assert got is not None and got.startswith(b.fault.split(" | ")[0]) and b.fault.split(" | ")[1] in got, \
            (b.c.name, got, b.fault)
    outputs = {}
    entry = m.scope[prog["functions"][0]["name"]]
    for name in b.outs:
        loc = entry[name]
        assert loc.written.all(), (b.c.name, name, "not fully written")
        a = next(x for x in prog["functions"][0]["allocations"] if x["name"] == name)
        outputs[name] = loc.arr.reshape(a["tensor_shape"]).copy()
    assert set(b.check) == set(b.outs), (b.c.name, set(b.check), b.outs)
    for name, want in b.check.items():
        got = outputs[name]
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).reshape(got.shape).view(np.uint8)), (b.c.name, name, got, want)
    return prog, outputs, m


# ---------------------------------------------------------------- helpers shared by cases
def fp_in(c, name, p, f, lo=-4.0, hi=4.0):
    x = rng_for(c.name + name).uniform(lo, hi, size=(p, f)).astype(np.float32)
    c.dram_in(name, FP32, x)
    return x


TRACE_N = 48


def tracer(c, eng="Pool"):
    """A `trace` SB int32 [1, TRACE_N] tile (Memset -1) and a `cnt` register; mark(v) appends v (an int or a
    register name) at trace[cnt]. Returns (pre, mark)."""
    c.sb("trace", I32, 1, TRACE_N)
    pre = [c.I("Memset", eng, [], [full("trace", I32, 1, TRACE_N)], mode="Const", constant=M32),
           c.mov(eng, R("cnt"), IMM(0))]

    def mark(v):
        src = R(v) if isinstance(v, str) else R("t")
        ins = [] if isinstance(v, str) else [c.mov(eng, R("t"), IMM(v))]
        return ins + [c.tsave(eng, src, dyn(ap("trace", I32, [[TRACE_N, 1], [1, 1]]), "Z", TRACE_N, "cnt")),
                      c.alu(eng, "add", R("cnt"), R("cnt"), IMM(1))]
    return pre, mark


def trace_expect(seq):
    t = np.full((1, TRACE_N), -1, np.int32)
    t[0, :len(seq)] = seq
    return t


# ================================================================ 1. a helper called twice
@case
def helper_called_twice():
    c = Case("helper_called_twice")
    P, F = 16, 24
    a = fp_in(c, "a", P, F)
    b = fp_in(c, "b", P, F)
    c.sb("w", FP32, P, F)
    c.sb("z_t", FP32, P, F)
    c.out("y", FP32, (2 * P, F))  # the helper Saves its result into rows row0 .. row0 + P - 1 of y
    c.out("z", FP32, (P, F))      # the caller's own use of the helper's first result
    e = "Pool"
    # scale: w = w * 1.5 + 0.25 (in place), then Save w into rows row0 .. row0 + P - 1 of y
    scale_allocs = [c.shared("w"), c.shared("y")]
    c.func("scale", scale_allocs, [c.block("body", [
        c.I("TensorScalar", "DVE", [full("w", FP32, P, F)], [full("w", FP32, P, F)], op0="mult", const0=1.5,
            op1="add", const1=0.25),
        c.copy("Save", "SP", full("w", FP32, P, F), dyn(full("y", FP32, P, F), "W", 2 * P, "row0")),
    ])])
    body = [
        c.block("first", [
            c.copy("Load", "SP", full("a", FP32, P, F), full("w", FP32, P, F)),
            c.mov("SP", R("row0"), IMM(0)),
            c.call(e, "scale"),
            # the caller continues: copies the helper's result (w, shared) and loads the second input
            c.I("TensorScalar", "DVE", [full("w", FP32, P, F)], [full("z_t", FP32, P, F)], op0="mult", const0=-2.0),
            c.copy("Load", "SP", full("b", FP32, P, F), full("w", FP32, P, F)),
            c.mov("SP", R("row0"), IMM(P)),
            c.call(e, "scale"),
        ]),
        c.block("after", [c.copy("Save", "SP", full("z_t", FP32, P, F), full("z", FP32, P, F))]),
    ]
    f = lambda x: ((x * np.float32(1.5)).astype(np.float32) + np.float32(0.25)).astype(np.float32)  # noqa: E731
    y = np.concatenate([f(a), f(b)])
    z = (f(a) * np.float32(-2.0)).astype(np.float32)
    return Built(c, body, "the entry function Loads input a into SB tile w and Calls `scale` (its allocations: w and "
                 "the DRAM output y, both named like the entry's, so the entry's locations): w = w*1.5 + 0.25 "
                 "(TensorScalar, in place) and Save w into rows row0 .. row0+15 of y (a scalar_offset on W by register row0 of SP, "
                 "the Save's engine, set by the caller); "
                 "the caller continues after the Call (z = -2 x the helper's w), Loads input b into w, Calls scale again "
                 "with row0 = 16, then Saves z: y = [f(a); f(b)], z = -2 f(a)",
                 ["y", "z"], check={"y": y, "z": z}, choices=["B14"])


# ================================================================ 2. Return inside the callee
@case
def return_mid_callee():
    c = Case("return_mid_callee")
    pre, mark = tracer(c)
    e = "Pool"
    P, F = 8, 16
    x = fp_in(c, "x", P, F)
    c.sb("w", FP32, P, F)
    c.out("y", FP32, (P, F))
    c.out("tr", I32, (1, TRACE_N))
    c.func("g", [c.shared("trace"), c.shared("w")], [
        c.block("g0", mark(10) + [
            c.I("TensorScalar", "DVE", [full("w", FP32, P, F)], [full("w", FP32, P, F)], op0="mult", const0=3.0)]
            + mark(11) + [c.I("Return", e)] + mark(12) + [
            c.I("TensorScalar", "DVE", [full("w", FP32, P, F)], [full("w", FP32, P, F)], op0="mult", const0=100.0)]),
        c.block("g1", mark(13)),
    ])
    body = [
        c.block("pre", pre + [c.copy("Load", "SP", full("x", FP32, P, F), full("w", FP32, P, F))] + mark(1)
                + [c.call(e, "g")] + mark(2) + [c.call(e, "g")] + mark(3)),
        c.block("post", [c.copy("Save", "SP", full("w", FP32, P, F), full("y", FP32, P, F)),
                         c.copy("Save", "SP", full("trace", I32, 1, TRACE_N), full("tr", I32, 1, TRACE_N))]),
    ]
    y = ((x * np.float32(3.0)).astype(np.float32) * np.float32(3.0)).astype(np.float32)
    return Built(c, body, "the callee g marks 10, scales the shared tile w by 3, marks 11, Returns, then would mark 12, "
                 "scale by 100 and fall into a block marking 13 (none of which runs); the caller marks 1, Calls g, marks "
                 "2, Calls g again, marks 3, then Saves: trace = 1 10 11 2 10 11 3, y = x*3*3",
                 ["y", "tr"], check={"y": y, "tr": trace_expect([1, 10, 11, 2, 10, 11, 3])}, choices=["B14"])


@case
def return_from_loop_in_callee():
    c = Case("return_from_loop_in_callee")
    pre, mark = tracer(c)
    e = "Pool"
    c.out("tr", I32, (1, TRACE_N))
    c.func("walk", [c.shared("trace")], [
        c.block("w0", [c.mov(e, R("n"), IMM(6))]),
        c.dfor(e, "jj", 0, 1, 0, 1, R("n"), R("j"), [
            c.block("mk", mark("j") + [c.cab(e, "IS_EQREG", R("j"), R("stop"), on_true="ret")]),
            c.block("go", [c.ub(e, "end")]),
            c.block("ret", [c.I("Return", e)] + mark(77)),
            c.block("end", [c.I("Halt", e)]),
        ]),
        c.block("w1", mark(88)),
    ])
    body = [
        c.block("pre", pre + [c.mov(e, R("stop"), IMM(2))] + mark(100) + [c.call(e, "walk")] + mark(101)
                + [c.mov(e, R("stop"), IMM(4)), c.call(e, "walk")] + mark(102)),
        c.block("post", [c.copy("Save", "SP", full("trace", I32, 1, TRACE_N), full("tr", I32, 1, TRACE_N))]),
    ]
    seq = [100, 0, 1, 2, 101, 0, 1, 2, 3, 4, 102]
    return Built(c, body, "the callee walk runs a DynamicForLoop j in 0..6 marking j and Returns from inside the loop "
                 "when j equals register stop (a Return ends the callee, its loop included: no mark 77, no later pass, "
                 "no mark 88 after the loop); the caller marks 100, Calls with stop = 2, marks 101, Calls with stop = 4, "
                 "marks 102 (the second call's loop starts again at 0): trace = 100 0 1 2 101 0 1 2 3 4 102",
                 ["tr"], check={"tr": trace_expect(seq)}, choices=["B14"])


@case
def branch_set_before_call_waits():
    c = Case("branch_set_before_call_waits")
    pre, mark = tracer(c)
    e = "Pool"
    c.out("tr", I32, (1, TRACE_N))
    c.func("g", [c.shared("trace")], [
        c.block("a", mark(20) + [c.ub(e, "c")]),
        c.block("b", mark(21)),
        c.block("c", mark(22) + [c.ub(e, "a"), c.I("Break", e)]),  # the Break cancels the branch: falls to d
        c.block("d", mark(23)),
    ])
    body = [
        c.block("p", pre + mark(1) + [c.ub(e, "r"), c.call(e, "g")] + mark(2)),
        c.block("q", mark(3)),
        c.block("r", mark(4)),
        c.block("s", [c.copy("Save", "SP", full("trace", I32, 1, TRACE_N), full("tr", I32, 1, TRACE_N))]),
    ]
    seq = [1, 20, 22, 23, 2, 4]
    return Built(c, body, "the caller's block p marks 1, branches to r, then Calls g (whose blocks branch a -> c and "
                 "cancel a branch by Break -> d: marks 20 22 23) and marks 2: the target set before the Call waits for "
                 "p's end, so q (mark 3) is skipped and r marks 4: trace = 1 20 22 23 2 4",
                 ["tr"], check={"tr": trace_expect(seq)}, choices=["B14"])


# ================================================================ 3. Exit inside a callee, in a counted Loop
@case
def exit_in_callee_inside_loop():
    c = Case("exit_in_callee_inside_loop")
    pre, mark = tracer(c)
    e = "Pool"
    P, F = 4, 8
    x = fp_in(c, "x", P, F)
    c.sb("w", FP32, P, F)
    c.out("y", FP32, (P, F))
    c.out("tr", I32, (1, TRACE_N))
    c.func("step", [c.shared("trace"), c.shared("w")], [
        c.block("s0", mark(200) + [
            c.I("TensorScalar", "DVE", [full("w", FP32, P, F)], [full("w", FP32, P, F)], op0="mult", const0=2.0),
            c.cab(e, "IS_EQIMM", R("i"), IMM(2), on_true="bye")]),
        c.block("s1", mark(201) + [c.ub(e, "s3")]),
        c.block("bye", mark(202) + [c.I("Exit", e)] + mark(203)),
        c.block("s3", [c.I("Halt", e)]),
    ])
    body = [
        c.block("pre", pre + [c.copy("Load", "SP", full("x", FP32, P, F), full("w", FP32, P, F)),
                              c.mov(e, R("i"), IMM(0))]),
        c.loop("c", 0, 5, 1, [c.block("it", mark("i") + [c.call(e, "step")] + mark(300)
                                      + [c.alu(e, "add", R("i"), R("i"), IMM(1))])]),
        c.block("post", mark(400) + [c.copy("Save", "SP", full("w", FP32, P, F), full("y", FP32, P, F)),
                                     c.copy("Save", "SP", full("trace", I32, 1, TRACE_N), full("tr", I32, 1, TRACE_N))]),
    ]
    seq = [0, 200, 201, 300, 1, 200, 201, 300, 2, 200, 202]
    w = x
    for _ in range(3):
        w = (w * np.float32(2.0)).astype(np.float32)
    return Built(c, body, "a counted Loop c in 0..5 of the entry marks register i, Calls step, marks 300 and adds 1 to "
                 "i; step doubles the shared SB tile w and marks 200, then 201 (i != 2) or, at i = 2, 202 and Exit: the "
                 "run ends there (no mark 203, no 300 of that pass, no later pass, no post block: the DRAM outputs are "
                 "never written, so the SB tiles trace and w are compared): trace = 0 200 201 300 1 200 201 300 2 200 "
                 "202, w = x * 2^3",
                 ["trace", "w"], check={"trace": trace_expect(seq), "w": w}, choices=["B14"])


# ================================================================ 4. bounded recursion
@case
def bounded_recursion_row_sum():
    c = Case("bounded_recursion_row_sum")
    pre, mark = tracer(c)
    e = "Pool"
    N, F = 5, 16
    x = fp_in(c, "x", N, F)
    c.sb("x_t", FP32, N, F)
    c.sb("acc", FP32, 1, F)
    c.out("y", FP32, (1, F))
    c.out("tr", I32, (1, TRACE_N))
    n, m, p = R("n"), R("m"), R("p")
    c.func("down", [c.shared("trace"), c.shared("x_t"), c.shared("acc")], [
        c.block("test", [c.cab(e, "IS_EQIMM", n, IMM(0), on_true="base")]),
        c.block("rec", [
            c.alu(e, "subtract", m, n, IMM(1)),
            c.I("TensorTensor", "Pool", [full("acc", FP32, 1, F), row_of("x_t", FP32, F, N, "m")],
                [full("acc", FP32, 1, F)], op="add"),
        ] + mark("n") + [
            c.mov(e, n, m),
            c.call(e, "down"),           # itself
            c.alu(e, "add", n, n, IMM(1)),
            c.alu(e, "add", p, n, IMM(100)),
        ] + mark("p") + [c.ub(e, "end")]),
        c.block("base", mark(0) + [c.I("Return", e)] + mark(-5)),
        c.block("end", [c.I("Halt", e)]),
    ])
    body = [
        c.block("pre", pre + [
            c.copy("Load", "SP", full("x", FP32, N, F), full("x_t", FP32, N, F)),
            c.I("Memset", "Pool", [], [full("acc", FP32, 1, F)], mode="Const", constant=0),
            c.mov(e, n, IMM(N)),
            c.call(e, "down"),
        ] + mark(999)),
        c.block("post", [c.copy("Save", "SP", full("acc", FP32, 1, F), full("y", FP32, 1, F)),
                         c.copy("Save", "SP", full("trace", I32, 1, TRACE_N), full("tr", I32, 1, TRACE_N))]),
    ]
    acc = np.zeros(F, np.float32)
    for r in range(N - 1, -1, -1):
        acc = (acc + x[r]).astype(np.float32)
    seq = list(range(N, 0, -1)) + [0] + [100 + k for k in range(1, N + 1)] + [999]
    return Built(c, body, f"down calls itself while register n != 0 (CompareAndBranch IS_EQIMM 0 -> a block that marks 0 "
                 f"and Returns): each level adds row n-1 of x to the shared acc (TensorTensor, register scalar_offset), "
                 f"marks n, sets n = n-1, Calls down, then (after the nested call returns) n += 1 and marks 100 + n; "
                 f"entry n = {N}: {N} nested calls + the base: acc = x[4] + x[3] + x[2] + x[1] + x[0] (in that order), "
                 f"trace = {' '.join(map(str, seq))}",
                 ["y", "tr"], check={"y": acc.reshape(1, F), "tr": trace_expect(seq)}, choices=["B14"])


def depth_case(name, n0, fault):
    c = Case(name)
    c.sb("depth", I32, 1, 80)
    e = "Pool"
    d = R("d")
    c.func("dive", [c.shared("depth")], [
        c.block("b0", [c.alu(e, "add", d, d, IMM(1)),
                       c.tsave(e, d, dyn(ap("depth", I32, [[80, 1], [1, 1]]), "Z", 80, "d")),
                       c.cab(e, "IS_EQREG", d, R("lim"), on_true="done")]),
        c.block("more", [c.call(e, "dive")]),
        c.block("done", [c.I("Halt", e)]),
    ])
    body = [c.block("pre", [
        c.I("Memset", e, [], [full("depth", I32, 1, 80)], mode="Const", constant=M32),
        c.mov(e, d, IMM(0)), c.mov(e, R("lim"), IMM(n0)),
        c.call(e, "dive"),
        c.tsave(e, d, one("depth", I32, 0, 80)),
    ])]
    runs = MAX_CALL_DEPTH if fault else n0
    t = np.full((1, 80), -1, np.int32)
    t[0, 1:runs + 1] = np.arange(1, runs + 1)
    if not fault:
        t[0, 0] = n0
    return c, body, t


@case
def recursion_64_deep():
    c, body, t = depth_case("recursion_64_deep", 64, False)
    return Built(c, body, "dive adds 1 to register d, TensorSaves d at depth[d] and Calls itself unless d = lim = 64: "
                 "exactly 64 nested Calls (the limit, A1) run, no fault; after the outermost returns the entry saves "
                 "d = 64 at depth[0]: depth = 64 1 2 ... 64 then -1",
                 ["depth"], check={"depth": t}, choices=["B14"])


@case
def hostile_endless_recursion():
    c, body, t = depth_case("hostile_endless_recursion", -1, True)
    return Built(c, body, "dive adds 1 to register d, TensorSaves d at depth[d] and Calls itself unless d = lim = -1 "
                 "(never): each level changes state (A3), so only the depth limit stops it: 64 nested Calls run "
                 "(depth[1..64] = 1..64), the 65th Call is a budget fault (A1) naming the functions on the way (A2), "
                 "and the entry's TensorSave at depth[0] never runs",
                 ["depth"], fault="budget | dive", check={"depth": t}, choices=["B14"])


# ================================================================ 5. a callee's own static location
@case
def callee_static_accumulator():
    c = Case("callee_static_accumulator")
    P, F = 8, 16
    x1 = fp_in(c, "x1", P, F)
    x2 = fp_in(c, "x2", P, F)
    x3 = fp_in(c, "x3", P, F)
    c.sb("x_t", FP32, P, F)
    c.sb("s_t", FP32, P, F)
    for k in (1, 2, 3):
        c.out(f"s{k}", FP32, (P, F))
    e = "Pool"
    own = c.own()
    own.sb("acc", FP32, P, F)  # accum's own: not in the entry; static (B14)
    c.func("accum", [c.shared("x_t")] + own.allocs + [c.shared("s_t")], [
        c.block("a0", [c.cab(e, "IS_EQIMM", R("first"), IMM(0), on_true="add")]),
        c.block("init", [c.I("Memset", "Pool", [], [full("acc", FP32, P, F)], mode="Const", constant=0),
                         c.mov(e, R("first"), IMM(0))]),
        c.block("add", [c.I("TensorTensor", "DVE", [full("acc", FP32, P, F), full("x_t", FP32, P, F)],
                             [full("acc", FP32, P, F)], op="add"),
                        c.copy("TensorCopy", "DVE", full("acc", FP32, P, F), full("s_t", FP32, P, F))]),
    ])
    body = [c.block("pre", [c.mov(e, R("first"), IMM(1))])]
    for k in (1, 2, 3):
        body.append(c.block(f"call{k}", [
            c.copy("Load", "SP", full(f"x{k}", FP32, P, F), full("x_t", FP32, P, F)),
            c.call(e, "accum"),
            c.copy("Save", "SP", full("s_t", FP32, P, F), full(f"s{k}", FP32, P, F))]))
    s1 = (np.zeros((P, F), np.float32) + x1).astype(np.float32)
    s2 = (s1 + x2).astype(np.float32)
    s3 = (s2 + x3).astype(np.float32)
    return Built(c, body, "accum has an SB location acc of its own (not in the entry function; declared between its "
                 "two shared ones): on the first call (register first = 1) it Memsets acc to 0 and clears first; every "
                 "call adds the shared tile x_t into acc and copies acc to the shared tile s_t; the entry Calls it three "
                 "times on inputs x1, x2, x3, Saving s_t after each: acc keeps its bytes between calls (static): "
                 "s1 = x1, s2 = x1 + x2, s3 = x1 + x2 + x3",
                 ["s1", "s2", "s3"], check={"s1": s1, "s2": s2, "s3": s3}, choices=["B14"])


@case
def recursion_shares_static_location():
    c = Case("recursion_shares_static_location")
    N, F = 4, 8
    x = fp_in(c, "x", N, F)
    c.sb("x_t", FP32, N, F)
    c.sb("pre_t", FP32, N, F)
    c.sb("post_t", FP32, N, F)
    c.out("pre_o", FP32, (N, F))
    c.out("post_o", FP32, (N, F))
    e = "Pool"
    n, m = R("n"), R("m")
    own = c.own()
    own.sb("run", FP32, 1, F)
    c.func("lvl", own.allocs + [c.shared("x_t"), c.shared("pre_t"), c.shared("post_t")], [
        c.block("l0", [c.cab(e, "IS_EQIMM", n, IMM(N), on_false="body")]),
        c.block("init", [c.I("Memset", "Pool", [], [full("run", FP32, 1, F)], mode="Const", constant=0)]),
        c.block("body", [
            c.alu(e, "subtract", m, n, IMM(1)),
            c.I("TensorTensor", "Pool", [full("run", FP32, 1, F), row_of("x_t", FP32, F, N, "m")],
                [full("run", FP32, 1, F)], op="add"),
            c.copy("TensorCopy", "Pool", full("run", FP32, 1, F), row_of("pre_t", FP32, F, N, "m")),
            c.mov(e, n, m),
            c.cab(e, "IS_EQIMM", n, IMM(0), on_true="tail"),
        ]),
        c.block("deeper", [c.call(e, "lvl")]),
        c.block("tail", [
            c.alu(e, "add", n, n, IMM(1)),
            c.alu(e, "subtract", m, n, IMM(1)),
            c.copy("TensorCopy", "Pool", full("run", FP32, 1, F), row_of("post_t", FP32, F, N, "m")),
        ]),
    ])
    body = [
        c.block("pre", [c.copy("Load", "SP", full("x", FP32, N, F), full("x_t", FP32, N, F)),
                        c.mov(e, n, IMM(N)), c.call(e, "lvl")]),
        c.block("post", [c.copy("Save", "SP", full("pre_t", FP32, N, F), full("pre_o", FP32, N, F)),
                         c.copy("Save", "SP", full("post_t", FP32, N, F), full("post_o", FP32, N, F))]),
    ]
    run = np.zeros(F, np.float32)
    pre_o = np.zeros((N, F), np.float32)
    for r in range(N - 1, -1, -1):
        run = (run + x[r]).astype(np.float32)
        pre_o[r] = run
    post_o = np.tile(run, (N, 1))
    return Built(c, body, f"lvl (entered with n = {N}) has its own 1x{F} SB location run (zeroed by the outermost "
                 f"level, n = {N}); each level adds row n-1 of x into run, copies run into row n-1 of pre_t, sets "
                 f"n = n-1 and, while n != 0, Calls itself; after the nested call (or at n = 0) it restores n and "
                 f"copies run into row n-1 of post_t. run is static, one for every activation (B14), so each level's "
                 f"post copy sees the whole sum: pre row r = x[{N - 1}] + ... + x[r] (partial sums), every post row = "
                 f"the full sum",
                 ["pre_o", "post_o"], check={"pre_o": pre_o, "post_o": post_o}, choices=["B14"])


# ================================================================ 7. ReadVarAddr
def base(k):
    return (k + 1) << 40


@case
def read_var_addr_entry():
    c = Case("read_var_addr_entry")
    x = fp_in(c, "x", 6, 20)                                                                    # ordinal 0
    c.dram_in("ix", I16, rng_for("ix").integers(-50, 50, (3, 10)).astype(np.int16))             # 1
    c.sb("t", FP32, 16, 32)                                                                     # 2
    c.psum("ps", FP32, 8, 64)                                                                   # 3
    c.sb("t16", I16, 4, 48)                                                                     # 4
    c.out("addrs", U64, (1, 8))                                                                 # 5
    c.out("addrs_i", I64, (1, 2))                                                               # 6
    del x
    A = lambda k: ap("addrs", U64, [[8, 1], [1, 1]], k)  # noqa: E731
    body = [c.block("b", [
        c.rva(ap("x", FP32, [[20, 1], [1, 1]], 0), A(0)),                    # x[0]
        c.rva(ap("x", FP32, [[20, 2], [1, 3]], 37), A(1)),                   # x flat element 37
        c.rva(ap("ix", I16, [[10, 1], [1, 5]], 13), A(2)),                  # ix element 13 (2-byte elements)
        c.rva(ap("t", FP32, [[32, 4], [1, 8]], 5 * 32 + 7), A(3)),           # t partition 5, element 7
        c.rva(ap("t16", I16, [[48, 1], [1, 1]], 3 * 48 + 47), A(4)),        # t16's last element (partition 3)
        c.rva(ap("t16", I16, [[48, 1], [2, 4]], 2 * 48 + 9), A(5)),          # t16 partition 2, element 9
        c.rva(ap("addrs", U64, [[8, 1], [1, 1]], 6), A(6)),                  # the output itself, element 6
        c.rva(ap("addrs_i", I64, [[2, 1], [1, 1]], 1), A(7)),                # the int64 output's element 1
        c.rva(ap("t", FP32, [[32, 1], [1, 1]], 15 * 32 + 31), ap("addrs_i", I64, [[2, 1], [1, 1]], 0)),  # t's last
        c.rva(ap("ix", I16, [[10, 1], [1, 1]], 29), ap("addrs_i", I64, [[2, 1], [1, 1]], 1)),  # ix's last element
    ])]
    want = np.array([[base(0), base(0) + 37 * 4, base(1) + 13 * 2, base(2) + 5 * 128 + 7 * 4,
                      base(4) + 3 * 96 + 47 * 2, base(4) + 2 * 96 + 9 * 2, base(5) + 6 * 8, base(6) + 1 * 8]],
                    np.uint64)
    want_i = np.array([[base(2) + 15 * 128 + 31 * 4, base(1) + 29 * 2]], np.int64)
    return Built(c, body, "ReadVarAddr in the entry function (G9: ordinal k at (k+1) << 40 plus the first element's "
                 "byte offset): the fp32 DRAM input x (ordinal 0) at elements 0 and 37 (the first element of a "
                 "2x3 window at offset 37), the int16 input ix (1) at element 13 (2-byte elements), the SB tile t "
                 "(2, 16 partitions of 128 bytes) at partition 5 element 7, the int16 SB tile t16 (4, 96 bytes a "
                 "partition; after the PSUM location ps, 3, which is not read here: read_var_addr_psum) at its last "
                 "element (partition 3 element 47) and at partition 2 element 9, the uint64 output addrs (5) at its own element 6, the int64 output addrs_i (6) at "
                 "element 1; then into addrs_i (int64): t's last element and ix's last element (the earlier value of "
                 "addrs_i[1] is overwritten)",
                 ["addrs", "addrs_i"], check={"addrs": want, "addrs_i": want_i}, choices=["B15", "G9"])


def rva_callee(name, interleaved):
    c = Case(name)
    c.dram_in("x", FP32, rng_for(name).uniform(-1, 1, (4, 8)).astype(np.float32))  # ordinal 0
    c.sb("t", FP32, 8, 16)                                                            # 1
    c.psum("ps", FP32, 4, 32)                                                         # 2
    c.out("addrs", U64, (1, 6))                                                       # 3
    c.out("addrs_i", I64, (1, 2))                                                     # 4
    L = 5
    own = c.own()
    own.sb("mine", FP32, 4, 24)       # own ordinal L
    own.dram("scratch", I32, 40)      # own ordinal L + 1
    if interleaved:
        allocs = [c.shared("addrs"), own.allocs[0], c.shared("t"), own.allocs[1], c.shared("addrs_i")]
    else:
        allocs = own.allocs + [c.shared("t"), c.shared("addrs"), c.shared("addrs_i")]
    A = lambda k: ap("addrs", U64, [[6, 1], [1, 1]], k)  # noqa: E731
    c.func("where", allocs, [c.block("w", [
        c.rva(ap("t", FP32, [[16, 1], [1, 1]], 6 * 16 + 3), A(1)),           # shared: the entry's ordinal 1
        c.rva(ap("mine", FP32, [[24, 2], [1, 8]], 2 * 24 + 5), A(2)),       # own: L
        c.rva(ap("scratch", I32, [[40, 1], [1, 1]], 17), A(3)),              # own: L + 1
        c.rva(ap("addrs", U64, [[6, 1], [1, 1]], 5), ap("addrs_i", I64, [[2, 1], [1, 1]], 0)),  # shared output
    ])])
    body = [c.block("b", [
        c.rva(ap("t", FP32, [[16, 1], [1, 1]], 7 * 16 + 15), A(0)),
        c.call("Pool", "where"),
        c.rva(ap("x", FP32, [[8, 1], [1, 1]], 9), A(4)),
        c.rva(ap("addrs_i", I64, [[2, 1], [1, 1]], 1), A(5)),
        c.rva(ap("x", FP32, [[8, 1], [1, 1]], 31), ap("addrs_i", I64, [[2, 1], [1, 1]], 1)),
    ])]
    want = np.array([[base(1) + 7 * 64 + 15 * 4, base(1) + 6 * 64 + 3 * 4, base(L) + 2 * 96 + 5 * 4,
                      base(L + 1) + 17 * 4, base(0) + 9 * 4, base(4) + 8]], np.uint64)
    want_i = np.array([[base(3) + 5 * 8, base(0) + 31 * 4]], np.int64)
    order = ("its allocations interleave own and shared locations: addrs (shared), mine (own), t (shared), scratch "
             "(own), addrs_i (shared); the own ones are numbered consecutively, skipping the shared (A4)"
             if interleaved else
             "its allocations list its own locations first (mine, scratch), then the shared t, addrs, addrs_i")
    return Built(c, body, f"ReadVarAddr inside a called function `where` ({order}): the shared SB tile t has the "
                 f"entry's ordinal 1 (partition 6 element 3), the callee's own SB location mine the first ordinal after "
                 f"the entry's {L} locations ({L}; partition 2 element 5, 96 bytes a partition) and its own flat DRAM "
                 f"location scratch the next ({L + 1}; int32 element 17); the shared output addrs (ordinal 3) at element "
                 f"5 into addrs_i[0]; the entry reads t before the call and x and addrs_i after it, so the call "
                 f"returns and its writes stay (the PSUM location ps, ordinal 2, is counted but not read here)",
                 ["addrs", "addrs_i"], check={"addrs": want, "addrs_i": want_i}, choices=["B15", "G9", "B14"])


@case
def read_var_addr_in_callee():
    return rva_callee("read_var_addr_in_callee", False)


@case
def read_var_addr_callee_interleaved():
    return rva_callee("read_var_addr_callee_interleaved", True)


@case
def read_var_addr_psum():
    c = Case("read_var_addr_psum")
    c.sb("t", FP32, 4, 16)                                                            # ordinal 0
    c.psum("ps", FP32, 8, 64)                                                         # 1
    c.psum("ps2", I32, 4, 8)                                                          # 2
    c.out("addrs", U64, (1, 3))                                                       # 3
    A = lambda k: ap("addrs", U64, [[3, 1], [1, 1]], k)  # noqa: E731
    body = [c.block("b", [
        c.rva(ap("ps", FP32, [[64, 2], [1, 4]], 3 * 64 + 10), A(0)),        # ps partition 3, element 10
        c.rva(ap("ps2", I32, [[8, 1], [1, 1]], 0), A(1)),                    # ps2's first element
        c.rva(ap("t", FP32, [[16, 1], [1, 1]], 2 * 16 + 1), A(2)),           # t partition 2, element 1
    ])]
    want = np.array([[base(1) + 3 * 256 + 10 * 4, base(2), base(0) + 2 * 64 + 4]], np.uint64)
    return Built(c, body, "ReadVarAddr of PSUM locations (B15: \"PSUM and SB locations have addresses too (G9 covers "
                 "every location)\"; docs/bir-json.md: ins[0] on \"any location\"): ps (ordinal 1, 8 partitions of 256 "
                 "bytes) at partition 3 element 10, ps2 (2) at its first element; then the SB tile t (0) at "
                 "partition 2 element 1",
                 ["addrs"], check={"addrs": want}, choices=["B15", "G9"])


# ================================================================ 8. validation
@case
def error_call_unknown_function():
    c = Case("error_call_unknown_function")
    c.sb("w", FP32, 1, 4)
    c.func("helper", [c.shared("w")], [c.block("h", [c.I("Memset", "Pool", [], [full("w", FP32, 1, 4)],
                                                            mode="Const", constant=0)])])
    body = [c.block("b", [c.call("Pool", "helper"), c.call("Pool", "nowhere_fn")])]
    return Built(c, body, "a Call whose target `nowhere_fn` names no function of the program (a second Call names "
                 "`helper`, which exists): one validation error, unresolved-ref at the Call (A7)", [],
                 errors=["error unresolved-ref @ (Call) | nowhere_fn"])


# ---------------------------------------------------------------- writing
def main():
    birprog.clear_cases(HERE)
    readme = []
    for fn in CASES:
        b = fn()
        name = b.c.name
        assert name == fn.__name__, (name, fn.__name__)
        prog, outputs, m = finish(b)
        lines = [f"# {b.what}",
                 "# expected outputs from conformance/programs/calls/make_cases.py: a Python interpreter of SPEC.md "
                 "(+ docs/bir-json.md for the data instructions), cross-checked against a direct NumPy formula; "
                 "never from birsim"]
        if m is not None:
            lines += [f"# executed instructions by the interpreter: {m.count}; deepest call nesting: {m.max_depth}",
                      "profile: refsim"]
        lines += [f"choice: {ch}" for ch in b.choices]
        if b.fault:
            lines.append(f"fault {b.fault}")
        lines += b.errors
        inputs = b.c.inputs if not b.errors else {}
        birprog.write_case(os.path.join(HERE, name), prog, lines, inputs, outputs)
        readme.append(f"- `{name}`: {b.what}")
    with open(os.path.join(HERE, "README.md"), "w") as f:
        f.write(README_HEAD + f"## Cases ({len(readme)})\n" + "\n".join(readme) + "\n")
    print(f"{len(readme)} cases")


README_HEAD = """# programs/calls — Call (84) and ReadVarAddr (41)

`make_cases.py` writes every case here from SPEC.md (this folder; a summary of docs/bir-json.md's `Call`,
`ReadVarAddr`, "Registers and control flow", docs/fidelity.md B7, B9, B14, B15 and docs/dge.md G9), by a
small Python interpreter of SPEC.md cross-checked against per-case NumPy formulas; never from birsim
(crates/simulator was not read). Each program has an entry function (the first) and one or more
functions its Calls run. Run:

```sh
/work/main/.venv/bin/python conformance/programs/calls/make_cases.py
cargo xtask verify --filter programs/calls
```

Readings taken where the spec leaves room (A1-A9, also in make_cases.py's docstring):
- A1: "calls nest at most 64 deep" counts active Calls (the entry function is depth 0): 64 nested Calls
  run (`recursion_64_deep`), the 65th faults before its callee runs (`hostile_endless_recursion`);
- A2: the depth fault is expected as `fault budget | dive`: the kind is the spec's, the message is only
  said to name "the functions on the way", so the case asks for the recursing function's name only;
- A3: no case depends on whether a Call that runs again with nothing changed faults like a branch (B9:
  "a Call counts as control flow"): every recursion level changes state first (the generator checks
  the strict reading never fires);
- A4: location ordinals: the entry's locations in `allocations` order; a called function's own locations
  after them, numbered consecutively in its declaration order, skipping its shared (same-named) ones.
  Only one non-entry function per program has own locations: with several, docs/dge.md G9 ("a called
  function's own locations come after those") and B15 do not say how two callees' own locations are
  ordered among themselves (program order? first-call order?) — **ambiguous, not tested**.
  `read_var_addr_in_callee` lists the callee's own locations first (no room for another reading);
  `read_var_addr_callee_interleaved` interleaves own and shared ones and relies on "consecutive, shared
  ones skipped" (the alternative "entry count + the index in the callee's list" would give 5 + 1 and
  5 + 3 instead of 5 and 6);
- A5: every location has addr 0, starts at partition 0 and is not `allocated` (a private buffer), so a
  partitioned location's element e is at (e / pitch) * dims[1] + (e % pitch) * size past its base; all
  addresses are < 2^63, so int64 and uint64 outputs hold the same bits;
- A6: a callee's allocation for a location it shares with the entry is the entry's allocation verbatim
  (same kind, dtype, type and dims);
- A7: a Call naming no function is a validation error of kind `unresolved-ref` (the kind
  docs/robustness.md gives a DMATrigger naming no DMABlock and a memref naming no location), located at
  the Call, its message naming the target. Not written: a callee location named like an entry location
  with other dims (validation "same type and dims", B14): the spec gives no error kind for it (it could
  be `bad-field`, `placement`, `duplicate-name`, ...), and an `error` line must name one;
- A8: after an Exit or a fault the entry's SB tiles are compared (the later Saves never run).
- A9: ReadVarAddr reads no data, only an address; its instructions carry `can_read_uninit: true` so an
  uninitialised-read checker (B10, `--uninit-reads fault`) cannot count the address read of a
  never-written location (outputs, PSUM) as a read of its bytes.

Disagreement with birsim (commit 84153f95, 2026-12-04): `read_var_addr_psum` fails validation there
(`ins[0].memref: a PSUM location has no device address ReadVarAddr can read (SB and DRAM do; fidelity
B15) [bad-field]`), while docs/fidelity.md B15 says "PSUM and SB locations have addresses too (G9 covers
every location)" and docs/bir-json.md gives ReadVarAddr's `ins[0]` on "any location". The case keeps
the documented behaviour; the other ReadVarAddr cases read no PSUM location (their PSUM locations
still take ordinals).

"""


if __name__ == "__main__":
    main()
