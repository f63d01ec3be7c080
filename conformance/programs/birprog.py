"""The BIR program builder shared by the program conformance generators
(conformance/programs/{core,datamove,dge,dynamic,elementwise,indirect,matmult,activation,accumulate,kernels,gpsimd}/make_cases.py):
memory-location allocations, access patterns and instructions of a one-block BIR JSON program
(docs/bir-json.md), its .npy inputs and expected outputs, and the writing of a case folder (case.json,
in_<k>.npy, expected_<k>.npy, case.expect).

It computes no expected value: each generator keeps its own oracle (dtype tables, narrowing, folds).
What differs between the generators is stated where they use it:
  * `STORE` / `SIZE` (BIR dtype -> NumPy storage dtype / bytes per element) are the generator's own
    tables, set on its subclass (the same dict objects, so entries a generator adds later count);
  * `ENGINES` / `DEFAULT_ENGINE` give the engine of an instruction built without one;
  * `sb` sizes an SB row in elements, `sb_bytes` in bytes (elementwise);
  * `Allocations` holds the allocations and inputs only, for a generator that builds the program body
    itself (dge's node lists); `Prog` adds the instruction list and the expected outputs.

Not a script: each generator puts conformance/programs on sys.path and imports it.
"""
import json
import os
import shutil

import numpy as np


# ---------------------------------------------------------------- access patterns and operands
def ap(mem, dt, pairs, offset=0, **extra):
    """A physical AP on location `mem`: `pairs` = [[step, num], ...] in elements, outermost first;
    `extra` adds fields (indirect_dim, vector_offset, ...)."""
    return dict({"kind": "physical_ap", "memref": mem, "memsetref": mem, "dtype": dt, "offset": offset,
                 "ap": [list(p) for p in pairs]}, **extra)


def imm(v, dt="float32"):
    return {"kind": "imm_value", "dtype": dt, "value": v}


def tile(mem, dt, p, f, offset=0, row=None):
    """p partitions of f elements, rows `row` elements apart (default f: a dense tile)."""
    return ap(mem, dt, [[f if row is None else row, p], [1, f]], offset)


def four_level(n):
    """The dense 4-level AP pairs of a [W, Z, Y, X] = n array."""
    return [[n[1] * n[2] * n[3], n[0]], [n[2] * n[3], n[1]], [n[3], n[2]], [1, n[3]]]


def ap_index(pairs, offset=0):
    """Flat element indices an AP visits, shaped by its nums (AP order)."""
    idx = np.array(offset, np.int64)
    for step, num in pairs:
        idx = idx[..., None] + step * np.arange(num, dtype=np.int64)
    return idx


# DMACopy Transpose codes (docs/bir-json.md): transpose_op k names TNAMES[k]; LET = a letter's source axis
TNAMES = ["None", "WZXY", "WXZY", "WYXZ", "ZWYX", "ZYWX", "ZYXW", "YXWZ", "YXZW", "YWZX", "XWZY", "XZYW", "XYZW", "XYWZ"]
LET = {"W": 0, "Z": 1, "Y": 2, "X": 3}


# ---------------------------------------------------------------- program building
class Allocations:
    """The allocations of a program and its input data."""

    STORE = None  # BIR dtype -> NumPy storage dtype: set by the generator's subclass
    SIZE = None  # BIR dtype -> bytes per element: set by the generator's subclass

    def __init__(self):
        self.allocs, self.inputs = [], {}

    def _alloc(self, name, kind, dt, shape, typ, dims, addr=0, base=0):
        self.allocs.append({"Skind": "memory_location_set", "name": name, "kind": kind, "dtype": dt,
                            "tensor_shape": list(shape), "partition_dim": 0,
                            "memorylocations": [{"Skind": "memory_location", "name": name, "type": typ,
                                                 "addr": addr, "dims": dims, "base": base, "bank": 0,
                                                 "allocated": False}]})

    def dram_in(self, name, dt, raw):
        """External input `name` holding `raw` (stored dtype, made 2-D: rows = partitions); returns its shape."""
        raw = np.ascontiguousarray(raw)
        if raw.ndim == 1:
            raw = raw.reshape(1, -1)
        raw = raw.reshape(raw.shape[0], -1)
        assert raw.dtype == self.STORE[dt], (name, raw.dtype, dt)
        p = raw.shape[0]
        self._alloc(name, "ExternalInput", dt, raw.shape, "Input", [p, raw.nbytes // p])
        self.inputs[name] = raw
        return raw.shape

    def _dram_out(self, name, dt, shape):
        p = shape[0]
        n = int(np.prod(shape))
        self._alloc(name, "ExternalOutput", dt, shape, "Output", [p, n * self.SIZE[dt] // p])

    def dram(self, name, dt, n):
        """An internal flat DRAM location of n elements."""
        self._alloc(name, "Internal", dt, [1, n], "DRAM", [1, n * self.SIZE[dt]])

    def sb(self, name, dt, parts, row_elems):
        """An SB tile of `parts` partitions of `row_elems` elements."""
        self._alloc(name, "Internal", dt, [parts, row_elems], "SB", [parts, row_elems * self.SIZE[dt]])

    def sb_bytes(self, name, dt, parts, row_bytes, base=0):
        """An SB tile of `parts` partitions of `row_bytes` bytes (row_bytes // size elements), at `base`."""
        self._alloc(name, "Internal", dt, [parts, row_bytes // self.SIZE[dt]], "SB", [parts, row_bytes], 0, base)


class Prog(Allocations):
    """A one-block program: allocations, inputs, instructions and the expected outputs."""

    ENGINES = {"Load": "SP", "Save": "SP"}  # opcode -> engine of an instruction built without one
    DEFAULT_ENGINE = "DVE"  # any other opcode's

    def __init__(self, profile="refsim"):
        super().__init__()
        self.insts, self.outputs = [], {}
        self.profile = profile

    def dram_out(self, name, dt, shape, expected):
        """External output `name`, expected to hold `expected` (stored dtype) after the run."""
        self._dram_out(name, dt, shape)
        expected = np.ascontiguousarray(expected).reshape(shape)
        assert expected.dtype == self.STORE[dt], (name, expected.dtype, dt)
        self.outputs[name] = expected

    def expect(self, name, expected):
        """Compare allocation `name` (e.g. an SB tile) after the run / fault."""
        self.outputs[name] = np.ascontiguousarray(expected)

    def inst(self, opcode, ins, outs, engine=None, **fields):
        """Appends instruction i<k> (fields after ins / outs); returns k."""
        if engine is None:
            engine = self.ENGINES.get(opcode, self.DEFAULT_ENGINE)
        self.insts.append(dict({"opcode": opcode, "name": f"i{len(self.insts)}", "engine": engine,
                                "ins": ins, "outs": outs}, **fields))
        return len(self.insts) - 1

    def load(self, src, dst, dt, p, f):
        """Load tile src -> tile dst (p x f)."""
        self.inst("Load", [tile(src, dt, p, f)], [tile(dst, dt, p, f)])

    def save(self, src, dst, dt, p, f, expected):
        """Save tile src into a new external output dst (p x f) expected to hold `expected`."""
        self.dram_out(dst, dt, (p, f), expected)
        self.inst("Save", [tile(src, dt, p, f)], [tile(dst, dt, p, f)])

    def tile_in(self, name, dt, raw):
        """DRAM input `name` loaded into SB tile `name`_t; returns the tile name."""
        p, f = self.dram_in(name, dt, raw)
        self.sb(name + "_t", dt, p, f)
        self.load(name, name + "_t", dt, p, f)
        return name + "_t"

    def out_prefilled(self, name, dt, init, expected):
        """External output `name` holding `init` (a Load from input `name`0) before the op runs."""
        init = np.ascontiguousarray(init)
        init2 = init.reshape(init.shape[0], -1) if init.ndim > 1 else init.reshape(1, -1)
        p, f = self.dram_in(name + "0", dt, init2)
        self.dram_out(name, dt, (p, f), np.asarray(expected).reshape(p, f))
        self.load(name + "0", name, dt, p, f)

    def program(self):
        return {"arch": "gen3", "version": 2, "functions": [{"name": "sg0000", "allocations": self.allocs,
                "blocks": [{"name": "Block1", "instructions": self.insts}]}]}


# ---------------------------------------------------------------- case folders
def clear_cases(here, keep=()):
    """Removes every folder under `here` (the cases a generator wrote last time) but those in `keep`."""
    for d in os.listdir(here):
        if os.path.isdir(os.path.join(here, d)) and d not in keep:
            shutil.rmtree(os.path.join(here, d))


def write_case(d, program, lines, inputs=None, outputs=None, compact=False):
    """Writes case folder `d`: case.json (indent 1, or without whitespace when `compact`), each input
    as in_<k>.npy and each expected output as expected_<k>.npy, and case.expect = `lines` followed by
    their `input` / `output` lines. Returns the bytes of the tensors written."""
    os.makedirs(d)
    with open(os.path.join(d, "case.json"), "w") as f:
        if compact:
            json.dump(program, f, separators=(",", ":"))
        else:
            json.dump(program, f, indent=1)
    lines = list(lines)
    total = 0
    for k, v in (inputs or {}).items():
        np.save(os.path.join(d, f"in_{k}.npy"), v)
        total += v.nbytes
        lines.append(f"input {k} = in_{k}.npy")
    for k, v in (outputs or {}).items():
        np.save(os.path.join(d, f"expected_{k}.npy"), v)
        total += v.nbytes
        lines.append(f"output {k} = expected_{k}.npy")
    with open(os.path.join(d, "case.expect"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return total
