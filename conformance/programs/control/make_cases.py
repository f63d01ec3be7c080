#!/usr/bin/env python3
"""Writes the `programs/control` conformance suite: registers and control flow (issue #30) --
RegisterMove (74), RegisterAlu (73), TensorLoad (75), TensorSave (76), register-held `scalar_offset`,
blocks and branches (CompareAndBranch 78, UnconditionalBranch 79, BranchHint 80, Return 81, Exit 82,
Break 83, Halt 17), DoWhile (108), DynamicForLoop (106), counted Loop, and the instruction budget --
as BIR JSON programs with .npy inputs and expected .npy outputs.

The expected values come from two independent emulations of the written spec (SPEC.md in this
directory, docs/bir-json.md for the data instructions and APs), never from birsim (nothing under
crates/ was read):
  * `Machine`: a small step-by-step interpreter of SPEC.md over the program JSON this script writes
    (per-engine register files holding 32-bit patterns, flat element arrays per memory location,
    block lists with branch targets, the loops, the budget). It gives every output, the partial
    state at a fault, and the fault line;
  * per case, a direct NumPy / plain-Python formula of what the program computes (`check=`), which
    the interpreter's outputs must equal (asserted), so a slip in one shows as a mismatch.

The readings taken where SPEC.md leaves room (each is also listed in README.md):
  A1 budget: "reaching it" is read as: N instructions execute, the (N+1)-th faults before it runs.
     The budget cases are built so that the N-th and (N+1)-th executed instructions both write no
     memory (register ops / branches), so the compared partial state is the same under the other
     reading (the N-th faults). The script asserts that.
  A2 budget vs validation (fidelity J35: validation refuses a program whose *static* count exceeds
     the budget): every budget case keeps N above the program's static count with each dynamic loop
     body counted once and counted Loops multiplied out, so only the run-time fault can apply.
  A3 arith_shift_right on a uint32 `a` (SPEC: "sign fill", signedness from ins[0]'s dtype): an
     unsigned value has no sign, so it zero-fills (= logical_shift_right); kept in its own case,
     `register_alu_uint32_arith_shift_right`, so the main ALU case does not depend on it.
  A4 RegisterAlu's `b` (register or immediate) is read with `a`'s signedness (SPEC: "signedness from
     ins[0]'s dtype"), whatever b's own dtype says; shift counts read b's bits as signed int32.
  A5 A DynamicForLoop's `ub_coef = 0` still reads its register: every case writes the register first.
  A6 TensorCopy fp32 -> int32 is only applied to exact integers (no rounding question arises).
  A7 An engine's registers are only reached by instructions on that engine: every case puts the
     loop nodes and all instructions touching a register on one engine, except the engine-separation
     checks that test exactly that.
  A8 Not relied on: whether a not-taken CompareAndBranch whose target is absent ("continue with the
     next block") replaces a branch target set earlier in the same block. No case has such a
     CompareAndBranch after another branch in its block (the interpreter treats it as a fall through).
  A9 Outputs compared after a Return / Exit or a fault are SB allocations (the `trace` tile, `y_t`):
     the Saves to DRAM outputs after them never run.

Run: /work/main/.venv/bin/python conformance/programs/control/make_cases.py
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
SEED = 20300030
M32 = 0xFFFFFFFF
FP32, I8, U8, I16, U16, I32, U32 = "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32"
STORE = {FP32: np.float32, I8: np.int8, U8: np.uint8, I16: np.int16, U16: np.uint16, I32: np.int32,
         U32: np.uint32}
SIZE = {FP32: 4, I8: 1, U8: 1, I16: 2, U16: 2, I32: 4, U32: 4}
INT_DTS = (I8, U8, I16, U16, I32, U32)
LEVEL = {"W": 0, "Z": 1, "Y": 2, "X": 3}


def rng_for(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def s32(x):
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


# ---------------------------------------------------------------- operand / instruction builders
def R(name, dt=I32):
    return {"kind": "register_access", "dtype": dt, "regref": name}


def IMM(v, dt=I32):
    return imm(int(v), dt)


def dyn(a, letter, max_index, reg):
    """AP `a` with a register-held scalar offset on `letter`."""
    a = dict(a)
    a.update({"indirect_dim": letter, "indirect_dim_max_index": max_index, "scalar_offset": reg})
    return a


class Case(birprog.Allocations):
    """One program: allocations and inputs (birprog), a nested body, expected outputs."""
    STORE = STORE
    SIZE = SIZE

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.n = 0
        self.outputs = {}

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

    def bare(self, opcode, eng):
        return self.I(opcode, eng)

    def copy(self, opcode, eng, src, dst, **f):
        return self.I(opcode, eng, [src], [dst], **f)

    def block(self, name, insts):
        return {"name": name, "instructions": list(insts)}

    def loop(self, var, lb, ub, stride, blocks):
        return {"opcode": "Loop", "name": f"loop_{var}", "LoopAxis": {"name": var, "lb": lb, "ub": ub,
                                                                       "stride": stride}, "blocks": blocks}

    def dowhile(self, eng, cond, blocks):
        self.n += 1
        return {"opcode": "DoWhile", "name": f"dw{self.n}", "engine": eng, "ins": [cond], "outs": [],
                "blocks": blocks}

    def dfor(self, eng, var, lb, stride, ub_const, ub_coef, reg, ind, blocks):
        self.n += 1
        return {"opcode": "DynamicForLoop", "name": f"dfl{self.n}", "engine": eng,
                "LoopAxis": {"name": var, "lb": lb, "stride": stride}, "ub_const": ub_const,
                "ub_coef": ub_coef, "ins": [reg], "outs": [] if ind is None else [ind], "blocks": blocks}

    # allocations -------------------------------------------------------------------------------
    def out(self, name, dt, shape):
        self._dram_out(name, dt, list(shape))

    def program(self, body):
        return {"arch": "gen3", "version": 2, "functions": [{"name": self.name, "allocations": self.allocs,
                                                             "blocks": body}]}


# ---------------------------------------------------------------- the SPEC.md interpreter
class Fault(Exception):
    def __init__(self, kind, msg):
        super().__init__(f"{kind} | {msg}")
        self.kind, self.msg = kind, msg


class Finished(Exception):
    pass


def alu_op(op, a, b, signed):
    """RegisterAlu on 32-bit patterns a, b (SPEC.md "RegisterAlu"); returns the result's bits."""
    va, vb = (s32(a), s32(b)) if signed else (a & M32, b & M32)
    if op in ("add",):
        return (a + b) & M32
    if op == "subtract":
        return (a - b) & M32
    if op == "mult":
        return (a * b) & M32
    if op == "bypass":
        return a
    if op == "abs":
        return abs(va) & M32
    if op in ("divide", "mod"):
        if vb == 0:
            raise Fault("numerics", "division by zero")
        q = abs(va) // abs(vb)
        if (va < 0) != (vb < 0):
            q = -q
        return (q if op == "divide" else va - vb * q) & M32
    if op == "max":
        return max(va, vb) & M32
    if op == "min":
        return min(va, vb) & M32
    if op == "bitwise_and":
        return a & b
    if op == "bitwise_or":
        return a | b
    if op == "bitwise_xor":
        return a ^ b
    if op == "bitwise_not":
        return ~a & M32
    if op in ("logical_shift_left", "logical_shift_right", "arith_shift_left", "arith_shift_right"):
        n = s32(b)
        if n < 0 or n >= 32:
            if op == "arith_shift_right" and signed and va < 0:
                return M32
            return 0
        if op in ("logical_shift_left", "arith_shift_left"):
            return (a << n) & M32
        if op == "logical_shift_right" or not signed:  # A3: unsigned a zero-fills
            return a >> n
        return (va >> n) & M32
    cmp = {"is_equal": va == vb, "not_equal": va != vb, "is_gt": va > vb, "is_ge": va >= vb,
           "is_lt": va < vb, "is_le": va <= vb}
    if op in cmp:
        return int(cmp[op])
    if op == "logical_and":
        return int(bool(a) and bool(b))
    if op == "logical_or":
        return int(bool(a) or bool(b))
    if op == "logical_xor":
        return int(bool(a) != bool(b))
    raise ValueError(op)


CAB = {"EQ": lambda x, y: x == y, "NE": lambda x, y: x != y, "LT": lambda x, y: x < y,
       "LE": lambda x, y: x <= y, "GT": lambda x, y: x > y, "GE": lambda x, y: x >= y}


class Machine:
    """Runs a program JSON by SPEC.md. Memory: one flat element array per location (all at addr 0,
    so AP element e is flat element e), NaN-free sentinel bytes where never written (tracked by a
    `written` mask so the interpreter refuses to read them)."""

    def __init__(self, prog, inputs, max_instructions=10**9, uninit_ones=False, fault_at_nth=False):
        f = prog["functions"][0]
        self.body = f["blocks"]
        self.mem, self.dt, self.written = {}, {}, {}
        for a in f["allocations"]:
            loc = a["memorylocations"][0]
            dt = a["dtype"]
            n = loc["dims"][0] * loc["dims"][1] // SIZE[dt]
            arr = np.zeros(n, STORE[dt])
            w = np.zeros(n, bool)
            if a["name"] in inputs:
                arr[:] = np.asarray(inputs[a["name"]]).reshape(-1)
                w[:] = True
            self.mem[loc["name"]], self.dt[loc["name"]], self.written[loc["name"]] = arr, dt, w
        self.regs = {}  # (engine, name) -> bits
        self.count, self.budget = 0, max_instructions
        self.uninit_ones, self.fault_at_nth = uninit_ones, fault_at_nth
        self.loopvars = {}
        self.trace = []  # executed instruction names
        # SPEC.md's endless-cycle rule: `changes` counts instructions other than control flow and
        # loop passes; a branch seen again at the same count would repeat forever.
        self.changes, self.branch_seen = 0, {}

    # registers ---------------------------------------------------------------------------------
    def rd(self, eng, op):
        if op["kind"] == "imm_value":
            return int(op["value"]) & M32
        key = (eng, op["regref"])
        if key not in self.regs:
            if self.uninit_ones:
                return M32
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
        if "scalar_offset" in a:
            reg = a["scalar_offset"]
            assert isinstance(reg, str)
            i = self.val(eng, R(reg, I32))
            if i < 0 or i >= a["indirect_dim_max_index"]:
                raise Fault("out-of-bounds", "scalar_offset")
            off += i * pairs[LEVEL[a["indirect_dim"]]][0]
            ix = ap_index(pairs, off)
            if ix.min() < 0 or ix.max() >= self.mem[a["memref"]].size:
                raise Fault("out-of-bounds", "scalar_offset")
            return ix.reshape(-1)
        ix = ap_index(pairs, off).reshape(-1)
        assert ix.min() >= 0 and ix.max() < self.mem[a["memref"]].size, a
        return ix

    def read(self, eng, a):
        ix = self.idx(eng, a)
        assert a["dtype"] == self.dt[a["memref"]]
        assert self.written[a["memref"]][ix].all(), ("interpreter read of unwritten memory", a)
        return self.mem[a["memref"]][ix].copy()

    def write(self, eng, a, v, ix=None):
        if ix is None:
            ix = self.idx(eng, a)
        dt = self.dt[a["memref"]]
        assert a["dtype"] == dt
        v = np.asarray(v)
        if dt == I32 and v.dtype == np.float32:  # A6: exact integers only
            assert (np.floor(v) == v).all() and (np.abs(v) < 2**31).all()
            v = v.astype(np.int32)
        assert v.dtype == STORE[dt], (v.dtype, dt)
        self.mem[a["memref"]][ix] = v.reshape(-1)
        self.written[a["memref"]][ix] = True

    # execution ---------------------------------------------------------------------------------
    def run(self):
        try:
            self.run_list(self.body)
        except Finished:
            pass

    def affine(self, x):
        if isinstance(x, int):
            return x
        return x["const"] + sum(t["coef"] * self.loopvars[t["var"]] for t in x["terms"])

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
            elif op == "DoWhile":
                while True:
                    before = self.changes
                    self.run_list(e["blocks"])
                    if self.rd(e["engine"], e["ins"][0]) == 0:
                        break
                    if self.changes == before:
                        raise Fault("budget", "would loop forever")
            elif op == "DynamicForLoop":
                ax = e["LoopAxis"]
                ub = e["ub_const"] + e["ub_coef"] * self.val(e["engine"], e["ins"][0])
                i = self.affine(ax["lb"])
                s = self.affine(ax["stride"])
                if s <= 0 and i < ub:
                    raise Fault("bad-field", "stride")
                passes = max(0, -(-(ub - i) // s))
                if passes > self.budget - self.count:
                    raise Fault("budget", f"the loop would run {passes} passes")
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
        limit = self.budget - 1 if self.fault_at_nth else self.budget
        if self.count >= limit:
            raise Fault("budget", f"budget of {self.budget} executed instructions")
        self.count += 1
        self.trace.append(ins["name"])
        op, eng = ins["opcode"], ins["engine"]
        if op in ("CompareAndBranch", "UnconditionalBranch"):
            if self.branch_seen.get(id(ins)) == self.changes:
                raise Fault("budget", "would loop forever")
            self.branch_seen[id(ins)] = self.changes
        elif op not in ("Break", "BranchHint", "Halt"):
            self.changes += 1
        i0 = ins["ins"][0] if ins["ins"] else None
        o0 = ins["outs"][0] if ins["outs"] else None
        if op == "RegisterMove":
            self.wr(eng, o0, self.rd(eng, i0))
        elif op == "RegisterAlu":
            self.wr(eng, o0, alu_op(ins["op"], self.rd(eng, i0), self.rd(eng, ins["ins"][1]),
                                    i0["dtype"] == I32))
        elif op == "TensorLoad":
            v = self.read(eng, i0)
            assert v.size == 1 and i0["dtype"] in INT_DTS
            self.wr(eng, o0, int(v[0]) & M32)  # sign / zero extension by the numpy dtype
        elif op == "TensorSave":
            bits = self.rd(eng, i0)
            dt = o0["dtype"]
            nb = 8 * SIZE[dt]
            low = bits & ((1 << nb) - 1)
            v = np.array([low], {1: np.uint8, 2: np.uint16, 4: np.uint32}[SIZE[dt]]).view(STORE[dt])
            self.write(eng, o0, v)
        elif op == "CompareAndBranch":
            c = ins["comp_op"]
            assert c.startswith("IS_") and c[-3:] in ("IMM", "REG")
            a = self.rd(eng, i0)
            b = self.rd(eng, ins["ins"][1])
            if i0["dtype"] == I32:
                a, b = s32(a), s32(b)
            t = ins.get("on_true") if CAB[c[3:5]](a, b) else ins.get("on_false")
            return t if t is not None else "BREAK"  # an absent target: fall through
        elif op == "UnconditionalBranch":
            return ins["target"]
        elif op == "Break":
            return "BREAK"
        elif op in ("Return", "Exit"):
            raise Finished()
        elif op in ("Halt", "BranchHint"):
            pass
        elif op in ("Load", "Save", "TensorCopy", "DMACopy"):
            v = self.read(eng, i0)
            self.write(eng, o0, v)
        elif op == "Memset":
            ix = self.idx(eng, o0)
            dt = o0["dtype"]
            v = np.full(ix.size, ins["constant"] & ((1 << 8 * SIZE[dt]) - 1), {1: np.uint8, 2: np.uint16, 4: np.uint32}[SIZE[dt]])
            self.write(eng, o0, v.view(STORE[dt]), ix)
        elif op == "TensorTensor":
            x, y = self.read(eng, i0), self.read(eng, ins["ins"][1])
            assert ins["op"] == "add"
            self.write(eng, o0, (x + y).astype(np.float32))
        elif op == "TensorScalar":
            x = self.read(eng, i0)
            assert ins["op0"] == "mult" and ins.get("op1", "bypass") in ("add", "bypass")
            v = x * np.float32(ins["const0"])
            if ins.get("op1") == "add":
                v = v + np.float32(ins["const1"])
            self.write(eng, o0, v.astype(np.float32))
        elif op == "TensorReduce":
            assert ins["op"] == "add" and ins["axis"] == "XYZW"
            x = self.read(eng, i0)
            acc = x[0]
            for v in x[1:]:
                acc = np.float32(acc + v)
            self.write(eng, o0, np.array([acc], np.float32))
        else:
            raise ValueError(op)
        return None


def static_count(entries):
    """Instructions a static count sees: counted Loops multiplied out, dynamic loop bodies once (A2)."""
    n = 0
    for e in entries:
        if "instructions" in e:
            n += len(e["instructions"])
        elif e["opcode"] == "Loop":
            ax = e["LoopAxis"]
            n += len(range(ax["lb"], ax["ub"], ax.get("stride", 1))) * static_count(e["blocks"])
        else:
            n += static_count(e["blocks"])
    return n


# ---------------------------------------------------------------- case registry
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


class Built:
    def __init__(self, c, body, what, outs, fault=None, options=(), check=None, memory_outs=()):
        """`outs`: DRAM outputs / SB allocations compared; `check`: name -> array from the direct
        formula, asserted equal to the interpreter's."""
        self.c, self.body, self.what, self.outs, self.fault, self.options = c, body, what, outs, fault, options
        self.check = check or {}
        self.choices = []  # docs/fidelity.md ASSUMED rows the expected values encode


def run_machine(b, **kw):
    prog = b.c.program(b.body)
    opts = dict(o.split("=") for o in b.options)
    m = Machine(prog, b.c.inputs, max_instructions=int(opts.get("max_instructions", 10**9)),
                uninit_ones=opts.get("uninit_registers") == "ones", **kw)
    fault = None
    try:
        m.run()
    except Fault as f:
        fault = f
    return prog, m, fault


def finish(b):
    prog, m, fault = run_machine(b)
    got = f"{fault.kind} | {fault.msg}" if fault else None
    assert got == b.fault, (b.c.name, got, b.fault)
    outputs = {}
    for name in b.outs:
        assert m.written[name].all(), (b.c.name, name, "not fully written")
        a = next(x for x in prog["functions"][0]["allocations"] if x["name"] == name)
        outputs[name] = m.mem[name].reshape(a["tensor_shape"]).copy()
    for name, want in b.check.items():
        got = outputs[name]
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).reshape(got.shape).view(np.uint8)), (b.c.name, name, got, want)
    if fault and fault.kind == "budget":
        # A1: the other reading (the N-th instruction faults) leaves the same compared state
        _, m2, f2 = run_machine(b, fault_at_nth=True)
        assert f2 is not None and f2.kind == "budget"
        for name in b.outs:
            assert np.array_equal(m2.mem[name].view(np.uint8), m.mem[name].view(np.uint8)), (b.c.name, name)
        limit = dict(o.split("=") for o in b.options).get("max_instructions")
        if limit is not None:
            assert static_count(b.body) < int(limit)
    return prog, outputs, m


# ---------------------------------------------------------------- helpers shared by cases
def fp_in(c, name, p, f, lo=-4.0, hi=4.0, ints=False):
    r = rng_for(c.name + name)
    if ints:
        x = r.integers(int(lo), int(hi) + 1, size=(p, f)).astype(np.float32)
    else:
        x = r.uniform(lo, hi, size=(p, f)).astype(np.float32)
    c.dram_in(name, FP32, x)
    return x


def sb(c, name, dt, p, f):
    c.sb(name, dt, p, f)
    return name


def full(mem, dt, p, f):
    return ap(mem, dt, [[f, p], [1, f]])


def one(mem, dt, k=0, row=1):
    """The one element k of a location (a 2-level one-element AP)."""
    return ap(mem, dt, [[row, 1], [1, 1]], k)


# ================================================================ 1. sum_rows_until_sentinel
def sum_rows(name, K, F, s, eng="DVE"):
    c = Case(name)
    x = fp_in(c, "x", K, F)
    r = rng_for(name)
    SENT = -1
    flags = r.integers(0, 1000, size=(K, 1)).astype(np.int32)
    flags[s, 0] = SENT
    if s + 3 < K:
        flags[s + 3, 0] = SENT  # a later sentinel, never reached
    flags[0, 0] = SENT if s > 1 else flags[0, 0]  # row 0's flag is never read (the loop reads row k+1)
    c.dram_in("flags", I32, flags)
    sb(c, "x_t", FP32, K, F)
    sb(c, "acc", FP32, 1, F)
    sb(c, "k_t", I32, 1, 1)
    c.out("y", FP32, (1, F))
    c.out("k_out", I32, (1, 1))
    k, f, cond = R("k"), R("flag"), R("cond")
    body = [
        c.block("pre", [
            c.copy("Load", "SP", full("x", FP32, K, F), full("x_t", FP32, K, F)),
            c.I("Memset", eng, [], [full("acc", FP32, 1, F)], mode="Const", constant=0),
            c.mov(eng, k, IMM(0)),
        ]),
        c.dowhile(eng, cond, [c.block("body", [
            c.I("TensorTensor", eng, [full("acc", FP32, 1, F), dyn(ap("x_t", FP32, [[F, 1], [1, F]]), "W", K, "k")],
                [full("acc", FP32, 1, F)], op="add"),
            c.alu(eng, "add", k, k, IMM(1)),
            c.tload(eng, f, dyn(one("flags", I32), "W", K, "k")),
            c.alu(eng, "not_equal", cond, f, IMM(SENT)),
        ])]),
        c.block("post", [
            c.copy("Save", "SP", full("acc", FP32, 1, F), full("y", FP32, 1, F)),
            c.tsave(eng, k, one("k_t", I32)),
            c.copy("Save", "SP", full("k_t", I32, 1, 1), full("k_out", I32, 1, 1)),
        ]),
    ]
    acc = np.zeros(F, np.float32)
    for row in range(s):
        acc = (acc + x[row]).astype(np.float32)
    return Built(c, body, f"DoWhile summing rows 0..{s - 1} of a {K}x{F} fp32 tile into one row (TensorTensor add, "
                 f"ins[1] row k by a register scalar_offset on W), k += 1, flag = TensorLoad(flags[k]) by a register "
                 f"scalar_offset, cond = flag not_equal -1; the sentinel is at row {s} (a later one is never reached"
                 f"{'; row 0 also holds it, never read: the body runs before the first test' if s > 1 else ''}); "
                 f"outputs the sum and the final k = {s}",
                 ["y", "k_out"], check={"y": acc.reshape(1, F), "k_out": np.array([[s]], np.int32)})


@case
def sum_rows_until_sentinel():
    return sum_rows("sum_rows_until_sentinel", 12, 32, 7)


@case
def sum_rows_until_sentinel_first_pass():
    return sum_rows("sum_rows_until_sentinel_first_pass", 8, 16, 1)


# ================================================================ 2. dynamic_bound_tile_loop
def tile_loop(name, bound_val, lb=0, stride=1, ub_const=0, ub_coef=1, save_ind=None, what=""):
    c = Case(name)
    eng = "DVE"
    P, T, F = 16, 6, 8
    x = fp_in(c, "x", P, T * F)
    c.dram_in("bound", I32, np.array([[bound_val]], np.int32))
    sb(c, "x_t", FP32, P, T * F)
    sb(c, "y_t", FP32, P, T * F)
    c.out("y", FP32, (P, T * F))
    n, iv = R("n"), R("i")
    tile_ap = lambda m: dyn(ap(m, FP32, [[T * F, P], [F, 1], [1, F]]), "Z", T, "i")  # noqa: E731
    post = [c.copy("Save", "SP", full("y_t", FP32, P, T * F), full("y", FP32, P, T * F))]
    if save_ind is not None:
        sb(c, "i_t", I32, 1, 1)
        c.out("i_out", I32, (1, 1))
        post += [c.tsave(eng, iv, one("i_t", I32)), c.copy("Save", "SP", full("i_t", I32, 1, 1), full("i_out", I32, 1, 1))]
    body = [
        c.block("pre", [
            c.copy("Load", "SP", full("x", FP32, P, T * F), full("x_t", FP32, P, T * F)),
            c.copy("TensorCopy", eng, full("x_t", FP32, P, T * F), full("y_t", FP32, P, T * F)),
            c.tload(eng, n, one("bound", I32)),
        ]),
        c.dfor(eng, "t", lb, stride, ub_const, ub_coef, n, iv, [c.block("tile", [
            c.I("TensorScalar", eng, [tile_ap("x_t")], [tile_ap("y_t")], op0="mult", const0=2.5, op1="add", const1=-1.0),
        ])]),
        c.block("post", post),
    ]
    ub = ub_const + ub_coef * bound_val
    y = x.copy()
    done = list(range(lb, ub, stride))
    for i in done:
        y[:, i * F:(i + 1) * F] = (x[:, i * F:(i + 1) * F] * np.float32(2.5) + np.float32(-1.0)).astype(np.float32)
    chk = {"y": y}
    outs = ["y"]
    if save_ind is not None:
        assert save_ind == done[-1]
        chk["i_out"] = np.array([[save_ind]], np.int32)
        outs.append("i_out")
    return Built(c, body, f"DynamicForLoop, ub = {ub_const} + {ub_coef} x R with R = TensorLoad(bound) = {bound_val}, "
                 f"lb {lb}, stride {stride}: tiles {done} (of 6 column tiles of 8 in a 16x48 fp32 tile) get "
                 f"x*2.5 + (-1) (TensorScalar, in and out addressed by the induction register as a scalar_offset on Z); "
                 f"the others keep the TensorCopy'd input{what}", outs, check=chk)


@case
def dynamic_bound_tile_loop():
    return tile_loop("dynamic_bound_tile_loop", 3, save_ind=2, what="; the induction register after the loop holds the last pass's i = 2")


@case
def dynamic_bound_tile_loop_zero():
    return tile_loop("dynamic_bound_tile_loop_zero", 0, what="; bound 0: no pass at all")


@case
def dynamic_bound_tile_loop_affine_ub():
    return tile_loop("dynamic_bound_tile_loop_affine_ub", 2, lb=1, stride=2, ub_const=1, ub_coef=2, save_ind=3,
                     what=" (ub = 1 + 2 x 2 = 5: i = 1, 3)")


@case
def dynamic_bound_tile_loop_signed_register():
    return tile_loop("dynamic_bound_tile_loop_signed_register", -1, lb=0, stride=2, ub_const=4, ub_coef=-1, save_ind=4,
                     what=" (R is int32 -1, read signed, 64-bit: ub = 4 - (-1) = 5: i = 0, 2, 4; read as "
                          "uint32 it would give no pass)")


# ================================================================ 3. branch_on_reduced_value
def branch_reduced(name, want_sum, thr=5):
    c = Case(name)
    eng = "DVE"
    P, F = 8, 16
    r = rng_for(name)
    x = r.integers(-3, 4, size=(P, F)).astype(np.float32)
    x[0, 0] += np.float32(want_sum - x.sum())  # the exact sum wanted (small integers: every partial sum exact)
    assert abs(x[0, 0]) < 100 and int(x.astype(np.int64).sum()) == want_sum
    c.dram_in("x", FP32, x)
    sb(c, "x_t", FP32, P, F)
    sb(c, "y_t", FP32, P, F)
    sb(c, "s_f", FP32, 1, 1)
    sb(c, "s_i", I32, 1, 1)
    sb(c, "s_t", I32, 1, 1)
    c.out("y", FP32, (P, F))
    c.out("s_out", I32, (1, 1))
    s = R("s")
    body = [
        c.block("entry", [
            c.copy("Load", "SP", full("x", FP32, P, F), full("x_t", FP32, P, F)),
            c.I("TensorReduce", eng, [full("x_t", FP32, P, F)], [full("s_f", FP32, 1, 1)], op="add", axis="XYZW"),
            c.copy("TensorCopy", eng, full("s_f", FP32, 1, 1), full("s_i", I32, 1, 1)),
            c.tload(eng, s, one("s_i", I32)),
            c.cab(eng, "IS_GTIMM", s, IMM(thr), on_true="pos", on_false="neg"),
        ]),
        c.block("pos", [
            c.I("TensorScalar", eng, [full("x_t", FP32, P, F)], [full("y_t", FP32, P, F)], op0="mult", const0=2.0),
            c.ub(eng, "end"),
        ]),
        c.block("neg", [
            c.I("TensorScalar", eng, [full("x_t", FP32, P, F)], [full("y_t", FP32, P, F)], op0="mult", const0=-1.0),
            c.ub(eng, "end"),
        ]),
        c.block("end", [
            c.copy("Save", "SP", full("y_t", FP32, P, F), full("y", FP32, P, F)),
            c.tsave(eng, s, one("s_t", I32)),
            c.copy("Save", "SP", full("s_t", I32, 1, 1), full("s_out", I32, 1, 1)),
        ]),
    ]
    y = (x * np.float32(2.0 if want_sum > thr else -1.0)).astype(np.float32)
    side = "true: block pos, y = 2x" if want_sum > thr else "false: block neg, y = -x"
    return Built(c, body, f"TensorReduce add (XYZW) of an 8x16 fp32 tile of small integers (sum {want_sum}, exact), "
                 f"TensorCopy to int32 (exact integer, A6), TensorLoad into a register, CompareAndBranch IS_GTIMM {thr} -> "
                 f"{side}; both branches UnconditionalBranch to block end (Save y, TensorSave the sum)",
                 ["y", "s_out"], check={"y": y, "s_out": np.array([[want_sum]], np.int32)})


@case
def branch_on_reduced_value_true():
    return branch_reduced("branch_on_reduced_value_true", 23)


@case
def branch_on_reduced_value_false_at_threshold():
    return branch_reduced("branch_on_reduced_value_false_at_threshold", 5)


# ================================================================ 4. register_offset_dma_gather
def dma_gather(name, idx, col0=0, ncol=16):
    c = Case(name)
    eng = "Pool"
    Rws, F = 20, 16
    n = len(idx)
    tab = fp_in(c, "tab", Rws, F)
    c.dram_in("idx", I32, np.array([idx], np.int32))
    c.out("g", FP32, (n, ncol))
    j, row, cnt = R("j"), R("row"), R("cnt")
    body = [
        c.block("pre", [c.mov(eng, cnt, IMM(n))]),
        c.dfor(eng, "jj", 0, 1, 0, 1, cnt, j, [c.block("gather", [
            c.tload(eng, row, dyn(one("idx", I32), "Z", n, "j")),
            c.I("DMACopy", eng, [dyn(ap("tab", FP32, [[F, 1], [1, ncol]], col0), "W", Rws, "row")],
                [dyn(ap("g", FP32, [[ncol, 1], [1, ncol]]), "W", n, "j")], mode="Copy"),
        ])]),
    ]
    g = tab[np.array(idx), col0:col0 + ncol]
    win = "" if ncol == F else (f"; the source AP is a window (columns {col0}..{col0 + ncol - 1} of 16) so the "
                                f"offset moves by row x 16 (the W step), not row x {ncol}")
    return Built(c, body, f"DynamicForLoop j over 0..{n} (ub from a RegisterMove'd register): row = TensorLoad(idx[j]) "
                 f"(register scalar_offset on Z), DMACopy Copy of table row `row` (register scalar_offset on W of the "
                 f"DRAM table, 20x16 fp32) into output row j (register scalar_offset on W); indices {idx}{win}",
                 ["g"], check={"g": g})


@case
def register_offset_dma_gather():
    return dma_gather("register_offset_dma_gather", [7, 0, 19, 7, 3, 12])


@case
def register_offset_dma_gather_window():
    b = dma_gather("register_offset_dma_gather_window", [2, 19, 5, 5], col0=4, ncol=8)
    b.choices.append("D1")  # the offset scales by the indexed level's step (16), not the AP's inner nums (8)
    # the other reading would gather other rows: assert it differs
    tab = b.c.inputs["tab"].reshape(-1)
    alt = np.stack([tab[4 + r * 8:4 + r * 8 + 8] for r in [2, 19, 5, 5]])
    assert not np.array_equal(alt, b.check["g"])
    return b


# ================================================================ 5. nested_loops
def nested(name):
    c = Case(name)
    eng = "Pool"
    P, B, W = 8, 8, 4  # 8 column blocks of 4
    x = fp_in(c, "x", P, B * W)
    y0 = fp_in(c, "y0", P, B * W)
    c.dram_in("n", I32, np.array([[7]], np.int32))
    sb(c, "x_t", FP32, P, B * W)
    sb(c, "y_t", FP32, P, B * W)
    sb(c, "regs_t", I32, 1, 3)
    blk = lambda m, reg: dyn(ap(m, FP32, [[B * W, P], [W, 1], [1, W]]), "Z", B, reg)  # noqa: E731
    k, lim, n, jr, cond = R("k"), R("lim"), R("n"), R("j"), R("cond")
    body = [
        c.block("pre", [
            c.copy("Load", "SP", full("x", FP32, P, B * W), full("x_t", FP32, P, B * W)),
            c.copy("Load", "SP", full("y0", FP32, P, B * W), full("y_t", FP32, P, B * W)),
            c.tload(eng, n, one("n", I32)),
            c.mov(eng, lim, IMM(2)),
        ]),
        c.loop("c", 0, 2, 1, [
            c.block("c_head", [c.mov(eng, k, IMM(0))]),
            c.dowhile(eng, cond, [
                c.dfor(eng, "jj", {"const": 0, "terms": [{"var": "c", "coef": 1}]},
                       {"const": 1, "terms": [{"var": "c", "coef": 1}]}, 0, 1, n, jr, [c.block("inner", [
                           c.I("TensorTensor", eng, [blk("y_t", "j"), blk("x_t", "k")], [blk("y_t", "j")], op="add"),
                       ])]),
                c.block("dw_tail", [
                    c.alu(eng, "add", k, k, IMM(1)),
                    c.alu(eng, "is_lt", cond, k, lim),
                ]),
            ]),
            c.block("c_tail", [c.alu(eng, "add", lim, lim, IMM(1))]),
        ]),
        c.block("post", [
            c.tsave(eng, k, one("regs_t", I32, 0, 3)),
            c.tsave(eng, lim, one("regs_t", I32, 1, 3)),
            c.tsave(eng, jr, one("regs_t", I32, 2, 3)),
        ]),
    ]
    # direct formula: outer c = 0, 1; k = 0 .. c+1; j = c, c + (1 + c), ... < 7
    y = y0.copy()
    events = []
    for cc in range(2):
        for kk in range(cc + 2):
            for jj in range(cc, 7, 1 + cc):
                events.append((jj, kk))
    blocks_of = lambda a, i: a[:, i * W:(i + 1) * W]  # noqa: E731
    for jj, kk in events:
        y[:, jj * W:(jj + 1) * W] = (blocks_of(y, jj) + blocks_of(x, kk)).astype(np.float32)
    return Built(c, body, "counted Loop c in 0..2 > DoWhile (k = 0..lim-1, lim = 2 then 3) > DynamicForLoop j with "
                     "lb = c and stride = 1 + c (affine terms over the Loop axis c), ub = TensorLoad(n) = 7: each pass "
                     "y block j += x block k (TensorTensor, register scalar_offsets on Z); then the final k, lim, j",
                     ["y_t", "regs_t"], check={"y_t": y, "regs_t": np.array([[3, 4, 5]], np.int32)})


@case
def nested_loops():
    return nested("nested_loops")


@case
def nested_loops_budget():
    b = nested("nested_loops_budget")
    # Find N: run the full program, pick a point inside the inner loop of the second outer pass where
    # instruction N is a register op (dw_tail's add) and N+1 too (dw_tail's is_lt) -- A1.
    _, m, _ = run_machine(b)
    names = m.trace
    first = {}
    insts = {}

    def walk(es):
        for e in es:
            if "instructions" in e:
                for i in e["instructions"]:
                    insts[i["name"]] = i
            else:
                walk(e["blocks"])
    walk(b.body)
    # the dw_tail adds executed, in order; pick the 4th (c = 1, k = 0 -> its DoWhile's first tail)
    adds = [k for k, nm in enumerate(names) if insts[nm]["opcode"] == "RegisterAlu" and insts[nm]["op"] == "add"
            and insts[nm]["outs"][0]["regref"] == "k"]
    pos = adds[2]  # 0-based trace index of the tail add of (c = 1, k = 0)
    N = pos + 1  # N instructions executed: up to and including that add; the next (is_lt) faults (A1)
    assert insts[names[N]]["opcode"] == "RegisterAlu"
    b.options = [f"max_instructions={N}"]
    b.fault = f"budget | budget of {N} executed instructions"
    # the partial state by the direct formula: every TT event before the (c = 1, k = 0) tail done
    c_, x = b.c, b.c.inputs["x"]
    y = b.c.inputs["y0"].copy()
    W = 4
    for cc in range(2):
        for kk in range(cc + 2):
            if (cc, kk) == (1, 1):
                break
            for jj in range(cc, 7, 1 + cc):
                y[:, jj * W:(jj + 1) * W] = (y[:, jj * W:(jj + 1) * W] + x[:, kk * W:(kk + 1) * W]).astype(np.float32)
        else:
            continue
        break
    # executed count by hand: pre 4; c=0: head 1 + (7 TT + 2) x 2; c=0 tail 1; c=1: head 1 + 3 TT + 1 (the add)
    assert N == 4 + 1 + 9 * 2 + 1 + 1 + 3 + 1, N
    b.what = (f"nested_loops with option max_instructions={N}: the run stops inside the second outer pass's DoWhile "
              f"(after its first inner DynamicForLoop, at dw_tail's is_lt): executed = pre 4 + c0 (1 + 2 x (7 + 2) + 1) "
              f"+ c1 (1 + 3 + 1) = {N}; y_t holds the first 17 block adds (7 + 7 + 3) (A1: instructions N and N+1 write no memory)")
    b.outs = ["y_t"]
    b.check = {"y_t": y}
    del c_
    return b


# ================================================================ 6. register ALU semantics
def binop(op, a, b, adt=I32, bdt=I32, b_reg=False):
    """Instructions: a -> ra (RegisterMove imm), b as imm or a register, r = a op b."""
    def mk(c):
        eng = "Pool"
        tag = f"r{c.n}"
        out = [c.mov(eng, R("ra", adt), IMM(a, adt))]
        if b_reg:
            out.append(c.mov(eng, R("rb", bdt), IMM(b, bdt)))
            bop = R("rb", bdt)
        else:
            bop = IMM(b, bdt)
        out.append(c.alu(eng, op, R(tag, adt), R("ra", adt), bop))
        mk.reg = tag
        return out
    return mk


def alu_row(op, a, b, adt=I32, bdt=None, b_reg=False, out_dt=None):
    bdt = bdt or adt
    mk0 = binop(op, a, b, adt, bdt, b_reg)
    bits = alu_op(op, a & M32, b & M32, adt == I32)
    holder = {}

    def mk(c):
        r = mk0(c)
        holder["reg"] = mk0.reg
        return r
    label = f"{op}({a}:{adt}, {b}:{bdt}{' reg' if b_reg else ''}) = {s32(bits) if adt == I32 else bits}"
    return [label, out_dt or adt, mk, holder, bits]


INT_MIN, INT_MAX = -2**31, 2**31 - 1


def alu_rows_signed():
    S = []
    a = S.append
    a(alu_row("add", INT_MAX, 1))                  # wrap to INT_MIN
    a(alu_row("add", -5, 3, b_reg=True))
    a(alu_row("subtract", INT_MIN, 1))             # wrap to INT_MAX
    a(alu_row("subtract", 3, 10, b_reg=True))
    a(alu_row("mult", 65536, 65536))               # 2^32 wraps to 0
    a(alu_row("mult", 123456789, 1000))            # wraps
    a(alu_row("mult", -7, 3, b_reg=True))
    a(alu_row("bypass", -12345, 99))
    a(alu_row("abs", -5, 0))
    a(alu_row("abs", INT_MIN, 0))                  # |-2^31| = -2^31
    a(alu_row("divide", -7, 2))                    # toward zero: -3
    a(alu_row("divide", 7, -2, b_reg=True))        # -3
    a(alu_row("divide", INT_MIN, -1))              # -2^31
    a(alu_row("divide", -1, 2))                    # 0 (unsigned would be 0x7FFFFFFF)
    a(alu_row("mod", -7, 3))                       # -1 (sign of a)
    a(alu_row("mod", 7, -3, b_reg=True))           # 1
    a(alu_row("mod", INT_MIN, -1))                 # 0
    a(alu_row("mod", -1, 10))                      # -1 (unsigned would be 5)
    a(alu_row("max", -1, 1))                       # 1
    a(alu_row("min", -1, 1, b_reg=True))           # -1
    a(alu_row("max", -2, 1, bdt=U32, b_reg=True))  # A4: b read signed (a's dtype) -> 1
    a(alu_row("bitwise_and", 0x0F0F0F0F, -256))
    a(alu_row("bitwise_or", 0x12340000, 0x5678, b_reg=True))
    a(alu_row("bitwise_xor", -1, 0x55555555))
    a(alu_row("bitwise_not", 0x0000FFFF, 7))       # b ignored
    a(alu_row("logical_shift_left", 1, 31))        # 0x80000000
    a(alu_row("logical_shift_left", 0x1234, 0))
    a(alu_row("logical_shift_left", 1, 32))        # 0
    a(alu_row("logical_shift_left", 1, -1))        # 0
    a(alu_row("logical_shift_right", -1, 31))      # 1 (zero fill)
    a(alu_row("logical_shift_right", -16, 0))
    a(alu_row("logical_shift_right", -1, 32, b_reg=True))  # 0
    a(alu_row("logical_shift_right", -1, -1))      # 0
    a(alu_row("arith_shift_left", 3, 30))          # 0xC0000000
    a(alu_row("arith_shift_left", 3, 32))          # 0
    a(alu_row("arith_shift_right", -8, 1))         # -4
    a(alu_row("arith_shift_right", -1, 31))        # -1
    a(alu_row("arith_shift_right", INT_MIN, 31))   # -1
    a(alu_row("arith_shift_right", INT_MAX, 31))   # 0
    a(alu_row("arith_shift_right", -5, 32))        # -1 (all ones by a's sign)
    a(alu_row("arith_shift_right", 5, 32))         # 0
    a(alu_row("arith_shift_right", -5, -1, b_reg=True))  # -1
    a(alu_row("arith_shift_right", 5, -1))         # 0
    a(alu_row("arith_shift_right", 0x40000000, 0))  # shift by 0
    a(alu_row("logical_shift_left", 1, 2**32 - 1, bdt=U32))  # count 0xFFFFFFFF read signed = -1: 0
    a(alu_row("is_equal", 5, 5))
    a(alu_row("is_equal", -1, 2**32 - 1, bdt=U32))  # the immediate's 32 bits: equal
    a(alu_row("not_equal", 5, 5, b_reg=True))
    a(alu_row("is_gt", INT_MIN, 1))                # signed: 0 (unsigned would be 1)
    a(alu_row("is_ge", -1, -1, b_reg=True))
    a(alu_row("is_lt", -1, 1))                     # 1 (unsigned would be 0)
    a(alu_row("is_le", 2, -3, b_reg=True))         # 0
    a(alu_row("logical_and", 5, 0))
    a(alu_row("logical_and", -1, 2, b_reg=True))
    a(alu_row("logical_or", 0, 0))
    a(alu_row("logical_or", 0, INT_MIN))
    a(alu_row("logical_xor", 5, 7))
    a(alu_row("logical_xor", 0, -3, b_reg=True))
    return S


def alu_rows_unsigned():
    U = []
    a = U.append
    M = 2**32 - 1
    a(alu_row("add", M, 1, adt=U32))                # 0
    a(alu_row("subtract", 0, 1, adt=U32, b_reg=True))  # 0xFFFFFFFF
    a(alu_row("mult", M, M, adt=U32))               # 1
    a(alu_row("mult", 0x80000001, 2, adt=U32))      # 2
    a(alu_row("abs", 0x80000000, 0, adt=U32))       # unsigned: a
    a(alu_row("abs", M, 0, adt=U32))
    a(alu_row("divide", M, 2, adt=U32))             # 0x7FFFFFFF
    a(alu_row("divide", 0x80000000, M, adt=U32, b_reg=True))  # 0
    a(alu_row("mod", M, 10, adt=U32))               # 5
    a(alu_row("mod", 0x80000000, 3, adt=U32, b_reg=True))   # 2147483648 % 3 = 2
    a(alu_row("max", M, 1, adt=U32))                # M (signed would be 1)
    a(alu_row("min", M, 1, adt=U32, b_reg=True))    # 1
    a(alu_row("max", 5, -1, adt=U32, bdt=I32))      # A4: the immediate -1 read unsigned: 0xFFFFFFFF
    a(alu_row("is_gt", 0x80000000, 1, adt=U32))     # 1 (signed 0)
    a(alu_row("is_lt", M, 1, adt=U32, b_reg=True))  # 0 (signed 1)
    a(alu_row("is_ge", 1, M, adt=U32))              # 0
    a(alu_row("is_le", 1, M, adt=U32, b_reg=True))  # 1
    a(alu_row("is_equal", M, -1, adt=U32, bdt=I32))  # imm -1 stored as its low 32 bits: 1
    a(alu_row("not_equal", 0, 0x80000000, adt=U32))
    a(alu_row("bitwise_not", 0, 0, adt=U32))
    a(alu_row("bitwise_and", M, 0x00FF00FF, adt=U32, b_reg=True))
    a(alu_row("logical_shift_right", 0x80000000, 31, adt=U32))  # 1
    a(alu_row("logical_shift_left", 0xFFFFFFFF, 4, adt=U32))   # 0xFFFFFFF0
    a(alu_row("logical_shift_right", M, 32, adt=U32))          # 0
    a(alu_row("logical_shift_right", M, -1, adt=U32, bdt=I32))  # 0
    a(alu_row("arith_shift_left", M, 31, adt=U32))             # 0x80000000
    a(alu_row("logical_and", 0x80000000, 1, adt=U32))
    a(alu_row("logical_or", 0, 0, adt=U32, b_reg=True))
    a(alu_row("logical_xor", M, 0, adt=U32))
    a(alu_row("bypass", M, 0, adt=U32))
    return U


def alu_case2(name, rows, what, extra_inputs=None, moves=()):
    c = Case(name)
    eng = "Pool"
    for k, v in (extra_inputs or {}).items():
        c.dram_in(k, v[0], v[1])
    n_by = {}
    for r in rows:
        n_by[r[1]] = n_by.get(r[1], 0) + 1
    for dt, n in n_by.items():
        sb(c, f"res_{dt}", dt, 1, n)
        c.out(f"out_{dt}", dt, (1, n))
    insts = [c.I("Memset", eng, [], [full(f"res_{dt}", dt, 1, n)], mode="Const", constant=0xA5A5A5A5)
             for dt, n in n_by.items()]
    pos = {dt: 0 for dt in n_by}
    exp = {dt: [] for dt in n_by}
    labels = {dt: [] for dt in n_by}
    for label, dt, mk, h, bits in rows:
        insts += mk(c)
        if isinstance(h, dict):
            seng, reg = "Pool", h["reg"]
        else:
            seng, reg = h
        sdt = dt if dt in (I32, U32) else I32
        insts.append(c.tsave(seng, R(reg, sdt), one(f"res_{dt}", dt, pos[dt], n_by[dt])))
        pos[dt] += 1
        nb = 8 * SIZE[dt]
        exp[dt].append(np.array([bits & ((1 << nb) - 1)], {1: np.uint8, 2: np.uint16, 4: np.uint32}[SIZE[dt]]).view(STORE[dt])[0])
        labels[dt].append(label)
    for dt, n in n_by.items():
        insts.append(c.copy("Save", "SP", full(f"res_{dt}", dt, 1, n), full(f"out_{dt}", dt, 1, n)))
    chk = {f"out_{dt}": np.array([exp[dt]], STORE[dt]) for dt in n_by}
    b = Built(c, [c.block("main", insts)], what, [f"out_{dt}" for dt in n_by], check=chk)
    b.listing = [f"out_{dt}[{k}]: {lab}" for dt in n_by for k, lab in enumerate(labels[dt])]
    return b


@case
def register_alu_int32():
    return alu_case2("register_alu_int32", alu_rows_signed(),
                     "RegisterAlu on int32 operands, every op of SPEC.md (wrap, -2^31/-1, negative divide/mod, "
                     "shifts by 0/31/32/-1, signed comparisons, logical ops, b as imm and as register), each result "
                     "TensorSaved into one element of an int32 tile, Saved to out_int32")


@case
def register_alu_uint32():
    return alu_case2("register_alu_uint32", alu_rows_unsigned(),
                     "RegisterAlu on uint32 operands (wrap, unsigned divide/mod/max/min/comparisons where the signed "
                     "order differs, shifts, b immediates of the other dtype read unsigned (A4)), each result "
                     "TensorSaved into one element of a uint32 tile, Saved to out_uint32")


@case
def register_alu_uint32_arith_shift_right():
    M = 2**32 - 1
    rows = [alu_row("arith_shift_right", 0x80000000, 4, adt=U32),
            alu_row("arith_shift_right", M, 31, adt=U32),
            alu_row("arith_shift_right", M, 32, adt=U32),
            alu_row("arith_shift_right", 0x80000000, -1, adt=U32, bdt=I32)]
    return alu_case2("register_alu_uint32_arith_shift_right", rows,
                     "arith_shift_right with a uint32 `a` (A3: an unsigned value has no sign, so it zero-fills; "
                     "count 32 and -1 give 0)")


def mv_row(label, dt, eng, dst, src_fn, bits):
    def mk(c):
        return src_fn(c)
    return (label, dt, mk, (eng, dst), bits)


@case
def register_move_and_tensor_load_save():
    """RegisterMove of immediates / registers, engine separation, TensorLoad extension, TensorSave low bits."""
    vals = {"i8": (I8, np.array([[-100]], np.int8)), "u8": (U8, np.array([[200]], np.uint8)),
            "i16": (I16, np.array([[-30000]], np.int16)), "u16": (U16, np.array([[60000]], np.uint16)),
            "i32": (I32, np.array([[-123456789]], np.int32)), "u32": (U32, np.array([[4000000000]], np.uint32))}
    P, D = "Pool", "DVE"
    rows = [
        mv_row("RegisterMove imm int32 -5", I32, P, "m1", lambda c: [c.mov(P, R("m1"), IMM(-5))], -5),
        mv_row("RegisterMove imm uint32 4294967295", U32, P, "m2", lambda c: [c.mov(P, R("m2", U32), IMM(2**32 - 1, U32))], M32),
        mv_row("RegisterMove imm int32 value 3000000000 (low 32 bits)", I32, P, "m3",
               lambda c: [c.mov(P, R("m3"), IMM(3000000000))], 3000000000),
        mv_row("RegisterMove imm uint32 value -2 (low 32 bits)", U32, P, "m4",
               lambda c: [c.mov(P, R("m4", U32), IMM(-2, U32))], (-2) & M32),
        mv_row("RegisterMove register m1 -> m5 (int32 -> uint32 operand: same bits)", U32, P, "m5",
               lambda c: [c.mov(P, R("m5", U32), R("m1"))], (-5) & M32),
        mv_row("same name 'e' on Pool = 111", I32, P, "e",
               lambda c: [c.mov(P, R("e"), IMM(111)), c.mov(D, R("e"), IMM(222))], 111),
        mv_row("same name 'e' on DVE = 222 (own file)", I32, D, "e", lambda c: [], 222),
        mv_row("Pool e + 1 after DVE wrote its own e", I32, P, "e2",
               lambda c: [c.mov(D, R("e"), IMM(-1)), c.alu(P, "add", R("e2"), R("e"), IMM(1))], 112),
        mv_row("TensorLoad int8 -100 (sign-extended)", I32, P, "l8", lambda c: [c.tload(P, R("l8"), one("i8", I8))], (-100) & M32),
        mv_row("TensorLoad uint8 200 (zero-extended)", I32, P, "lu8", lambda c: [c.tload(P, R("lu8"), one("u8", U8))], 200),
        mv_row("TensorLoad int16 -30000", I32, P, "l16", lambda c: [c.tload(P, R("l16"), one("i16", I16))], (-30000) & M32),
        mv_row("TensorLoad uint16 60000", I32, P, "lu16", lambda c: [c.tload(P, R("lu16"), one("u16", U16))], 60000),
        mv_row("TensorLoad int32 -123456789", I32, P, "l32", lambda c: [c.tload(P, R("l32"), one("i32", I32))], (-123456789) & M32),
        mv_row("TensorLoad uint32 4000000000", U32, P, "lu32", lambda c: [c.tload(P, R("lu32", U32), one("u32", U32))], 4000000000),
        mv_row("TensorSave int32 -100000 into int16: low 16 bits", I16, P, "s1",
               lambda c: [c.mov(P, R("s1"), IMM(-100000))], (-100000) & 0xFFFF),
        mv_row("TensorSave 0x12345678 into int16: 0x5678", I16, P, "s2", lambda c: [c.mov(P, R("s2"), IMM(0x12345678))], 0x5678),
        mv_row("TensorSave 0x1FF into uint8: 0xFF", U8, P, "s3", lambda c: [c.mov(P, R("s3"), IMM(0x1FF))], 0xFF),
        mv_row("TensorSave -129 into int8: 0x7F", I8, P, "s4", lambda c: [c.mov(P, R("s4"), IMM(-129))], 0x7F),
        mv_row("TensorSave 70000 into uint16: 4464", U16, P, "s5", lambda c: [c.mov(P, R("s5"), IMM(70000))], 70000 & 0xFFFF),
    ]
    return alu_case2("register_move_and_tensor_load_save", rows,
                     "RegisterMove of int32/uint32 immediates (values outside the dtype's range stored as their low "
                     "32 bits) and of a register; one register name on two engines (Pool, DVE) is two registers; "
                     "TensorLoad from int8/uint8/int16/uint16/int32/uint32 one-element inputs (sign / zero extension "
                     "by the AP dtype); TensorSave into int8/uint8/int16/uint16 elements (the low bits)",
                     extra_inputs=vals)


# ================================================================ 7. Return / Exit / Break / Halt / BranchHint
def trace_case(name):
    """A case with a `trace` SB int32 [1, 32] tile (Memset -1) and a `cnt` register; mark(v) appends v."""
    c = Case(name)
    eng = "Pool"
    sb(c, "trace", I32, 1, 32)
    pre = [c.I("Memset", eng, [], [full("trace", I32, 1, 32)], mode="Const", constant=M32),
           c.mov(eng, R("cnt"), IMM(0))]

    def mark(v):
        src = R(v) if isinstance(v, str) else R("t")
        ins = [] if isinstance(v, str) else [c.mov(eng, R("t"), IMM(v))]
        return ins + [c.tsave(eng, src, dyn(ap("trace", I32, [[32, 1], [1, 1]]), "Z", 32, "cnt")),
                      c.alu(eng, "add", R("cnt"), R("cnt"), IMM(1))]
    return c, eng, pre, mark


def trace_expect(seq):
    t = np.full((1, 32), -1, np.int32)
    t[0, :len(seq)] = seq
    return t


@case
def branch_break_halt_return():
    c, e, pre, mark = trace_case("branch_break_halt_return")
    cnt = R("cnt")
    body = [
        c.block("init", pre + [c.ub(e, "C"), c.I("Break", e)]),                      # Break cancels -> A
        c.block("A", [c.ub(e, "D")] + mark(1) + [c.ub(e, "C")]),                      # after-branch marks run; C replaces D
        c.block("B", mark(2)),                                                         # skipped
        c.block("C", mark(3) + [c.cab(e, "IS_EQIMM", cnt, IMM(2), on_true="F"), c.I("Break", e)]),  # true, then Break -> D
        c.block("D", mark(4) + [c.cab(e, "IS_GTIMM", cnt, IMM(100), on_true="B")]),   # false, on_false absent -> E
        c.block("E", mark(5) + [c.I("Halt", e), c.I("BranchHint", e), c.cab(e, "IS_LTREG", R("t"), cnt, on_true="G", on_false="F")]),
        c.block("F", mark(6)),                                                         # reached: E's 5 < 4 is false -> F
        c.block("G", mark(7) + [c.I("Return", e)] + mark(8)),                         # Return: 8 never written
        c.block("H", mark(9)),
    ]
    # E: t = 5, cnt = 4 after mark(5): IS_LTREG 5 < 4 false -> on_false F; F falls through to G
    seq = [1, 3, 4, 5, 6, 7]
    return Built(c, body, "blocks init..H; each executed block appends its id to a trace tile (TensorSave at a "
                 "register scalar_offset): init's UnconditionalBranch is cancelled by Break (falls to A); A branches "
                 "to D then to C (the later target wins; the marks after the branch still run); C's taken "
                 "CompareAndBranch IS_EQIMM is cancelled by Break (-> D); D's IS_GTIMM is false with no on_false (-> E); "
                 "E runs Halt and BranchHint (no effect) and IS_LTREG t < cnt (5 < 4) false -> F; F falls to G; G's Return ends "
                 "the run (its mark after Return and block H never run): trace = 1 3 4 5 6 7",
                 ["trace"], check={"trace": trace_expect(seq)})


@case
def exit_inside_loop():
    c, e, pre, mark = trace_case("exit_inside_loop")
    body = [
        c.block("pre", pre + [c.mov(e, R("n"), IMM(6))]),
        c.dfor(e, "jj", 0, 1, 0, 1, R("n"), R("j"), [
            c.block("w", mark("j") + [c.cab(e, "IS_EQIMM", R("j"), IMM(3), on_true="x", on_false="y")]),
            c.block("x", [c.I("Exit", e)] + mark(77)),
            c.block("y", [c.I("BranchHint", e)]),
        ]),
        c.block("post", mark(99)),
    ]
    return Built(c, body, "DynamicForLoop j in 0..6 appending j to a trace tile; at j = 3 a CompareAndBranch goes to "
                 "a block holding Exit: the run ends there (no mark 77, no later pass, no post block's 99): trace = 0 1 2 3",
                 ["trace"], check={"trace": trace_expect([0, 1, 2, 3])})


@case
def return_inside_dowhile():
    c, e, pre, mark = trace_case("return_inside_dowhile")
    k = R("k")
    body = [
        c.block("pre", pre + [c.mov(e, k, IMM(10))]),
        c.dowhile(e, R("cond"), [
            c.block("b", mark("k") + [c.alu(e, "add", k, k, IMM(10)),
                                      c.alu(e, "is_lt", R("cond"), k, IMM(1000)),
                                      c.cab(e, "IS_GEIMM", k, IMM(40), on_true="r")]),
            c.block("more", mark(5) + [c.ub(e, "end")]),
            c.block("r", [c.I("Return", e)] + mark(66)),
            c.block("end", [c.I("Halt", e)]),
        ]),
        c.block("post", mark(99)),
    ]
    # k = 10: mark 10, k = 20, GE 40? no -> more (mark 5, branch over r) -> end.  k = 20: 20, 5; k = 30: mark 30,
    # k = 40 -> r: Return (its mark 66 never runs).
    return Built(c, body, "DoWhile (cond = k < 1000, never false before) whose body marks k, adds 10, and once k >= 40 "
                 "branches to a block whose Return ends the run (a mark after the Return never runs); before that it "
                 "marks 5 and skips the Return block by an UnconditionalBranch to the last block: trace = 10 5 20 5 30, nothing after",
                 ["trace"], check={"trace": trace_expect([10, 5, 20, 5, 30])})


# ================================================================ 8. hostile
def hostile(name, body_fn, fault, what, options=()):
    c = Case(name)
    body = body_fn(c)
    return Built(c, body, what, [], fault=fault, options=list(options))


@case
def hostile_dynamic_loop_bound_int_max():
    def body(c):
        e = "Pool"
        return [c.block("pre", [c.mov(e, R("n"), IMM(2**31 - 1))]),
                c.dfor(e, "jj", 0, 1, 0, 1, R("n"), R("j"), [c.block("b", [c.alu(e, "add", R("s"), R("j"), IMM(1))])])]
    return hostile("hostile_dynamic_loop_bound_int_max", body, "budget | the loop would run 2147483647 passes",
                   "a DynamicForLoop whose bound register holds 2^31 - 1, under the default budget (10^9): its "
                   "2^31 - 1 passes cannot fit what is left of the budget, so it faults on entry (SPEC.md)")


@case
def hostile_dynamic_loop_budget_midway():
    def body(c):
        e = "Pool"
        return [c.block("pre", [c.mov(e, R("n"), IMM(45))]),
                c.dfor(e, "jj", 0, 1, 0, 1, R("n"), R("j"), [c.block("b", [c.alu(e, "add", R("s"), R("j"), IMM(1)),
                                                                          c.alu(e, "add", R("t"), R("j"), IMM(2))])])]
    return hostile("hostile_dynamic_loop_budget_midway", body, "budget | budget of 50 executed instructions",
                   "a DynamicForLoop of 45 passes (they fit the 49 instructions left) of two instructions each, under "
                   "max_instructions=50: the budget fault after 50 executed instructions", ["max_instructions=50"])


@case
def hostile_branch_cycle():
    def body(c):
        e = "Pool"
        return [c.block("spin", [c.ub(e, "spin")]), c.block("never", [c.mov(e, R("x"), IMM(1))])]
    return hostile("hostile_branch_cycle", body, "budget | would loop forever",
                   "a block whose UnconditionalBranch names itself, nothing changing between its runs: an endless "
                   "cycle, found on the branch's second run (SPEC.md), under the default budget")


@case
def hostile_branch_cycle_with_progress():
    def body(c):
        e = "Pool"
        return [c.block("pre", [c.mov(e, R("x"), IMM(0))]),
                c.block("spin", [c.alu(e, "add", R("x"), R("x"), IMM(1)), c.ub(e, "spin")])]
    return hostile("hostile_branch_cycle_with_progress", body, "budget | budget of 100 executed instructions",
                   "a block that increments a register and branches to itself: it changes state every cycle, so "
                   "only max_instructions=100 stops it", ["max_instructions=100"])


@case
def hostile_uninitialized_register():
    def body(c):
        e = "Pool"
        return [c.block("b", [c.mov(e, R("a"), IMM(1)), c.alu(e, "add", R("d"), R("a"), R("ghost"))])]
    return hostile("hostile_uninitialized_register", body, "uninitialized | register 'ghost'",
                   "RegisterAlu reading register 'ghost', never written: fault uninitialized")


@case
def hostile_register_of_other_engine():
    def body(c):
        return [c.block("b", [c.mov("Pool", R("v"), IMM(7)), c.alu("DVE", "add", R("d"), R("v"), IMM(1))])]
    return hostile("hostile_register_of_other_engine", body, "uninitialized | register 'v'",
                   "register 'v' written on Pool, read by a DVE RegisterAlu: DVE's own 'v' was never written")


@case
def uninit_registers_ones_option():
    c = Case("uninit_registers_ones_option")
    e = "Pool"
    sb(c, "r_t", U32, 1, 2)
    c.out("r", U32, (1, 2))
    body = [c.block("b", [
        c.alu(e, "add", R("d", U32), R("ghost", U32), IMM(2, U32)),
        c.tsave(e, R("ghost", U32), one("r_t", U32, 0, 2)),
        c.tsave(e, R("d", U32), one("r_t", U32, 1, 2)),
        c.copy("Save", "SP", full("r_t", U32, 1, 2), full("r", U32, 1, 2)),
    ])]
    return Built(c, body, "option uninit_registers=ones: a never-written register reads 0xFFFFFFFF (ghost + 2 = 1)",
                 ["r"], options=["uninit_registers=ones"], check={"r": np.array([[M32, 1]], np.uint32)})


@case
def hostile_divide_by_zero():
    def body(c):
        e = "Pool"
        return [c.block("b", [c.mov(e, R("a"), IMM(7)), c.alu(e, "divide", R("d"), R("a"), IMM(0))])]
    return hostile("hostile_divide_by_zero", body, "numerics | division by zero", "RegisterAlu divide by the immediate 0")


@case
def hostile_mod_by_zero_register():
    def body(c):
        e = "Pool"
        return [c.block("b", [c.mov(e, R("a", U32), IMM(7, U32)), c.mov(e, R("z", U32), IMM(0, U32)),
                              c.alu(e, "mod", R("d", U32), R("a", U32), R("z", U32))])]
    return hostile("hostile_mod_by_zero_register", body, "numerics | division by zero",
                   "RegisterAlu mod (uint32) by a register holding 0")


def oob_case(name, i, what, max_index=8, rows=10, aprows=1):
    def body(c):
        e = "DVE"
        c.dram_in("x", FP32, rng_for(name).uniform(-1, 1, (rows, 8)).astype(np.float32))
        sb(c, "x_t", FP32, rows, 8)
        sb(c, "y_t", FP32, aprows, 8)
        return [c.block("b", [
            c.copy("Load", "SP", full("x", FP32, rows, 8), full("x_t", FP32, rows, 8)),
            c.mov(e, R("i"), IMM(i)),
            c.copy("TensorCopy", e, dyn(ap("x_t", FP32, [[8, aprows], [1, 8]]), "W", max_index, "i"), full("y_t", FP32, aprows, 8)),
        ])]
    return hostile(name, body, "out-of-bounds | scalar_offset", what)


@case
def hostile_scalar_offset_equals_max():
    return oob_case("hostile_scalar_offset_equals_max", 8, "TensorCopy whose ins[0] register scalar_offset "
                    "holds 8 = indirect_dim_max_index (the row exists: 10 rows): fault out-of-bounds")


@case
def hostile_scalar_offset_negative():
    return oob_case("hostile_scalar_offset_negative", -1, "TensorCopy whose register scalar_offset holds -1 (read "
                    "as signed int32): fault out-of-bounds")


@case
def hostile_scalar_offset_leaves_location():
    return oob_case("hostile_scalar_offset_leaves_location", 7, "TensorCopy of 4 rows from row i = 7 < max 16 of a "
                    "10-row tile: the moved AP leaves its location: fault out-of-bounds", max_index=16, aprows=4)


@case
def hostile_zero_stride():
    # the stride is an affine term over an enclosing counted Loop (0 - c at c = 0), so it is only known when the
    # loop is entered: SPEC's run-time `fault bad-field | stride` (S <= 0 while LB < ub)
    def body(c):
        e = "Pool"
        return [c.block("pre", [c.mov(e, R("n"), IMM(4))]),
                c.loop("c", 0, 1, 1, [
                    c.dfor(e, "jj", 0, {"const": 0, "terms": [{"var": "c", "coef": -1}]}, 0, 1, R("n"), R("j"),
                           [c.block("b", [c.alu(e, "add", R("s"), R("j"), IMM(1))])])])]
    return hostile("hostile_zero_stride", body, "bad-field | stride",
                   "a DynamicForLoop whose stride is 0 - c = 0 (affine term over the enclosing Loop c = 0) while "
                   "lb 0 < ub 4: fault bad-field")


# ---------------------------------------------------------------- writing
def main():
    birprog.clear_cases(HERE)
    readme = []
    for fn in CASES:
        b = fn()
        name = b.c.name
        assert name == fn.__name__, (name, fn.__name__)
        prog, outputs, m = finish(b)
        lines = [f"# {b.what}"]
        for l in getattr(b, "listing", []):
            lines.append(f"#   {l}")
        lines += ["# expected outputs from conformance/programs/control/make_cases.py: a Python interpreter of SPEC.md "
                  "(+ docs/bir-json.md for the data instructions), cross-checked against a direct NumPy formula; "
                  "never from birsim",
                  f"# executed instructions by the interpreter: {m.count}",
                  "profile: refsim"]
        choices = list(b.choices)
        if b.fault and b.fault.startswith("budget"):
            choices.append("J35")  # the instruction budget and its fault are birsim's own (fidelity J35, ASSUMED)
        lines += [f"choice: {ch}" for ch in choices]
        lines += [f"option: {o}" for o in b.options]
        if b.fault:
            lines.append(f"fault {b.fault}")
        birprog.write_case(os.path.join(HERE, name), prog, lines, b.c.inputs, outputs)
        readme.append(f"- `{name}`: {b.what}")
    with open(os.path.join(HERE, "README.md"), "w") as f:
        f.write("# programs/control — registers and control flow (issue #30)\n\n"
                "`make_cases.py` writes every case here from SPEC.md (this folder) and docs/bir-json.md, by a small "
                "Python interpreter of SPEC.md cross-checked against per-case NumPy formulas; never from birsim. Run:\n\n"
                "```sh\n/work/main/.venv/bin/python conformance/programs/control/make_cases.py\n"
                "cargo xtask verify --filter programs/control\n```\n\n"
                "Readings taken where SPEC.md leaves room (A1-A9 in make_cases.py's docstring):\n"
                "- A1: the budget fault comes after N executed instructions (the (N+1)-th faults); the budget cases are "
                "built so that the other reading (the N-th faults) gives the same compared state;\n"
                "- A2: each budget case's N exceeds its static count (dynamic loop bodies once, counted Loops "
                "multiplied out), so validation's static budget check (fidelity J35) cannot refuse it;\n"
                "- A3: arith_shift_right on a uint32 `a` zero-fills (its own case);\n"
                "- A4: RegisterAlu's `b` is read with `a`'s signedness; a shift count is b's bits as signed int32;\n"
                "- A5: a DynamicForLoop's register is always written first (even where ub_coef would not need it);\n"
                "- A6: TensorCopy fp32 -> int32 only on exact integers;\n"
                "- A7: registers and loop nodes of a case live on one engine (except the engine-separation checks);\n"
                "- A8: no case depends on whether a not-taken CompareAndBranch without a target cancels an earlier "
                "branch in its block;\n"
                "- A9: after Return / Exit / a fault, SB allocations are compared (later Saves never run).\n\n"
                f"## Cases ({len(readme)})\n" + "\n".join(readme) + "\n")
    print(f"{len(readme)} cases")


if __name__ == "__main__":
    main()
