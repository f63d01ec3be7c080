#!/usr/bin/env python3
"""Independent NumPy oracle for the `isa` conformance suite (issue #12).

Written from /work/isa-decisions.md (the contract), seed 004 and re-facts §8 only — never from the
Rust implementation. Every 64-byte word is assembled here with struct.pack_into at the contract's
byte offsets; the expected state is computed by the straightforward serial models below.

Run:  /work/main/.venv/bin/python conformance/isa/make_cases.py
It deletes every case directory it owns (names with a known prefix) and rewrites them.
See README.md next to this file for the layout and every reading of the contract made here.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
PREFIXES = ("gt_", "ic_", "dma_", "emb_", "bad_", "seq_")

# ---------------------------------------------------------------------------------------------
# dtypes: BIR JSON name -> (ISA code, numpy dtype, is float)   (re-facts §1 ISA table)
# ---------------------------------------------------------------------------------------------
BF16 = np.dtype(ml_dtypes.bfloat16)
DT = {
    "float32": (0xA, np.dtype("<f4"), True),
    "bfloat16": (0x6, BF16, True),
    "float16": (0x7, np.dtype("<f2"), True),
    "int32": (0x8, np.dtype("<i4"), False),
    "uint8": (0x3, np.dtype("u1"), False),
    "uint16": (0x5, np.dtype("<u2"), False),
    "uint32": (0x9, np.dtype("<u4"), False),
    "int8": (0x2, np.dtype("i1"), False),
    "int16": (0x4, np.dtype("<i2"), False),
    "int64": (0xC, np.dtype("<i8"), False),
    "uint64": (0x1, np.dtype("<u8"), False),
}
CODE2NAME = {v[0]: k for k, v in DT.items()}


def esz(name: str) -> int:
    return DT[name][1].itemsize


def code(name: str) -> int:
    return DT[name][0]


SBUF_BYTES = {"v2": 192 * 1024, "v3": 224 * 1024, "v4": 256 * 1024, "v5": 256 * 1024}
PSUM_BYTES = 16 * 1024
SBUF, PSUM = 0, 1

OP_GATHER, OP_IC, OP_DMA, OP_EMB, OP_EMB_RAW, OP_PBL = 0x68, 0xE7, 0xBB, 0xCA, 0x79, 0x67
M_IMM, M_INDIRECT_IMM, M_ADDR_REG = 0x00, 0x20, 0x80


class Fault(Exception):
    def __init__(self, kind: str, msg: str = ""):
        super().__init__(f"{kind}: {msg}")
        self.kind = kind


# ---------------------------------------------------------------------------------------------
# fp32 datapath helpers (contract §4: ops in fp32, RNE to the destination dtype)
# ---------------------------------------------------------------------------------------------
def widen(raw: bytes, dt: str) -> np.ndarray:
    return np.frombuffer(raw, dtype=DT[dt][1]).astype(np.float32)


def narrow(vals: np.ndarray, dt: str) -> bytes:
    return np.asarray(vals, dtype=np.float32).astype(DT[dt][1]).tobytes()


def fmaxf(d: np.float32, s: np.float32) -> np.float32:
    """glibc fmaxf with dst first: NaN yields the other operand; a ±0 / equal tie keeps dst."""
    if math.isnan(s):
        return d
    if math.isnan(d):
        return s
    if d == s:
        return d
    return d if d > s else s


def fminf(d: np.float32, s: np.float32) -> np.float32:
    if math.isnan(s):
        return d
    if math.isnan(d):
        return s
    if d == s:
        return d
    return d if d < s else s


def reduce_vals(dst: np.ndarray, src: np.ndarray, op: str) -> np.ndarray:
    """dst op src elementwise, fp32 in, fp32 out (numpy float32 arithmetic is IEEE RNE)."""
    out = np.empty_like(dst)
    for i in range(len(dst)):
        d, s = np.float32(dst[i]), np.float32(src[i])
        if op == "ADD":
            out[i] = np.float32(d + s)
        elif op == "MULTIPLY":
            out[i] = np.float32(d * s)
        elif op == "MAX":
            out[i] = fmaxf(d, s)
        elif op == "MIN":
            out[i] = fminf(d, s)
        else:
            raise ValueError(op)
    return out


def int_reduce(draw: bytes, sraw: bytes, dt: str, op: str) -> bytes:
    """X14: integer dst op src at the dtype's width, in Python ints (no NumPy overflow rules):
    ADD / MULTIPLY modulo 2^bits (re-facts §8 "Int add wraps"; MULTIPLY alike, ASSUMED), MAX / MIN
    on the values as the dtype reads them: signed for intN (re-facts §8 "min/max are signed"),
    unsigned for uintN (ASSUMED)."""
    npdt = DT[dt][1]
    bits, signed = 8 * npdt.itemsize, npdt.kind == "i"
    out = []
    for d, s in zip(np.frombuffer(draw, npdt).tolist(), np.frombuffer(sraw, npdt).tolist()):
        r = {"ADD": lambda: d + s, "MULTIPLY": lambda: d * s, "MAX": lambda: max(d, s), "MIN": lambda: min(d, s)}[op]()
        r %= 1 << bits
        if signed and r >= 1 << (bits - 1):
            r -= 1 << bits
        out.append(r)
    return np.array(out, dtype=npdt).tobytes()


# ---------------------------------------------------------------------------------------------
# word assembly (contract §0-§1 offsets)
# ---------------------------------------------------------------------------------------------
def addr4(part: int, off: int, space: int = SBUF, marker: int = M_IMM) -> int:
    """X3: marker bits 29..31; the partition where re-facts §6 puts it, part << 18 (SBUF) or
    part << 15 (PSUM); space bit 25 (PSUM); the offset below the partition."""
    shift = 18 if space == SBUF else 15
    assert 0 <= part < 128 and 0 <= off < (1 << shift)
    return (marker << 24) | (space << 25) | (part << shift) | off


@dataclass
class T:
    """A TENSORnD operand: ADDR4 start + N steps (i16) + N counts (u16), dim 0 = X."""

    space: int
    part: int
    off: int
    steps: list
    counts: list
    marker: int = M_IMM
    raw_or: int = 0  # bits OR-ed into the ADDR4 (X3 reserved bits: invalid cases)

    def pack(self, buf: bytearray, at: int) -> None:
        n = len(self.steps)
        struct.pack_into("<I", buf, at, addr4(self.part, self.off, self.space, self.marker) | self.raw_or)
        struct.pack_into(f"<{n}h", buf, at + 4, *self.steps)
        struct.pack_into(f"<{n}H", buf, at + 4 + 2 * n, *self.counts)

    def nelem(self) -> int:
        return int(np.prod(self.counts))

    def elem_offsets(self) -> list:
        """Element offsets (in elements) of elements k = 0.. with X fastest (X6)."""
        out = []
        for idx in np.ndindex(*reversed(self.counts)):
            i = idx[::-1]
            out.append(sum(s * x for s, x in zip(self.steps, i)))
        return out


def new_word(opcode: int, inst_flags: int = 0) -> bytearray:
    w = bytearray(64)
    w[0] = opcode  # X1
    w[1] = inst_flags
    return w


@dataclass
class Gather:
    src: T
    dst: T
    in_dt: str
    out_dt: str
    ch: int
    miss: int  # 0 IMMEDIATE_WRITE, 1 SKIP_WRITE
    imm: int = 0
    free: int = 0
    inst_flags: int = 0
    in_code: int | None = None  # override (invalid cases)

    def pack(self) -> bytes:
        w = new_word(OP_GATHER, self.inst_flags)
        self.src.pack(w, 12)
        w[32] = self.in_code if self.in_code is not None else code(self.in_dt)
        w[33] = code(self.out_dt)
        w[34] = self.ch
        w[36] = self.miss
        w[37] = self.free
        struct.pack_into("<I", w, 40, self.imm)
        self.dst.pack(w, 44)
        return bytes(w)


@dataclass
class PoolLoad:
    """POOL_BUFFER_LOAD 0x67, the birsim form (X11)."""

    src: T
    dt: str
    ch: int
    mask: int
    start: int

    def pack(self) -> bytes:
        w = new_word(OP_PBL)
        self.src.pack(w, 12)
        w[32] = code(self.dt)
        w[34] = self.ch
        struct.pack_into("<H", w, 36, self.mask)
        struct.pack_into("<I", w, 40, self.start)
        return bytes(w)


@dataclass
class IndirectCopy:
    idx_part: int
    idx_off: int
    data_part: int
    data_off: int
    num_elem: int
    dt: str
    ch: int
    epi: int  # src_num_elem_per_idx
    sbs: int  # src_buffer_size (elements per partition, X19)
    dst: T
    dst_epi: int = 0
    dst_bs: int = 0
    out_dt: str | None = None
    idx_marker: int = M_INDIRECT_IMM

    def pack(self) -> bytes:
        w = new_word(OP_IC)
        struct.pack_into("<I", w, 12, addr4(self.idx_part, self.idx_off, SBUF, self.idx_marker))
        struct.pack_into("<I", w, 16, addr4(self.data_part, self.data_off, SBUF, M_IMM))
        struct.pack_into("<H", w, 20, self.num_elem)
        w[32] = code(self.dt)
        w[33] = code(self.out_dt or self.dt)
        w[34] = self.ch
        w[35] = self.epi
        w[36] = self.dst_epi
        struct.pack_into("<H", w, 38, self.sbs)
        struct.pack_into("<H", w, 40, self.dst_bs)
        self.dst.pack(w, 44)
        return bytes(w)


COMPUTE = {"NONE": 0, "ADD": 1, "MULTIPLY": 2, "MAX": 3, "MIN": 4}


def bound_reg(enabled: int, reg: int = 0, notif_off: int = 0) -> int:
    return (reg & 0x3F) | (notif_off << 6) | (enabled << 7)


@dataclass
class DmaIndirect:
    mode: int  # 0 gather, 1 scatter, 2 both
    src: int  # ADDR8 (DRAM byte address, marker IMM)
    src_step: int
    src_num: int
    src_es: int
    dst: int
    dst_step: int
    dst_num: int
    dst_es: int
    sidx_off: int
    didx_off: int
    in_dt: str
    out_dt: str
    sbr: int  # src_idx_bound_reg byte
    dbr: int
    op: str = "NONE"
    is_err: int = 0
    nonuniq: int = 0
    gdim: int = 0
    sdim: int = 0
    chans: int = 128
    sidx_part: int = 0
    sidx_marker: int = M_IMM

    def flags(self) -> int:
        return self.mode | (self.is_err << 2) | (self.nonuniq << 3) | (self.gdim << 4) | (self.sdim << 6)

    def pack(self) -> bytes:
        w = new_word(OP_DMA)
        w[12] = 0
        w[13] = 0
        w[14] = self.chans
        w[15] = self.flags()
        struct.pack_into("<QiHH", w, 16, self.src, self.src_step, self.src_num, self.src_es)
        struct.pack_into("<QiHH", w, 32, self.dst, self.dst_step, self.dst_num, self.dst_es)
        struct.pack_into("<I", w, 48, addr4(self.sidx_part, self.sidx_off, SBUF, self.sidx_marker))
        struct.pack_into("<I", w, 52, addr4(0, self.didx_off, SBUF))
        w[56] = code(self.in_dt)
        w[57] = code(self.out_dt)
        w[58] = self.sbr
        w[59] = self.dbr
        w[60] = COMPUTE[self.op]
        w[61] = 0
        return bytes(w)


CCE = {"ADD": 0, "MAX": 2, "MIN": 3, "MULT": 1}


@dataclass
class Embedding:
    dt: str
    op: str
    idx: T  # TENSOR1D
    data: T  # TENSOR2D
    desc: T  # TENSOR1D
    base: int
    entry_elems: int
    stride: int
    seq: int
    entries: int
    opcode: int = OP_EMB

    def pack(self) -> bytes:
        w = new_word(self.opcode)
        w[12] = code(self.dt)
        w[13] = CCE[self.op]
        self.idx.pack(w, 16)
        self.data.pack(w, 24)
        self.desc.pack(w, 36)
        struct.pack_into("<I", w, 44, self.base)
        struct.pack_into("<H", w, 48, self.entry_elems)
        struct.pack_into("<H", w, 50, self.stride & 0xFFFF)
        struct.pack_into("<I", w, 52, self.seq)
        struct.pack_into("<I", w, 56, self.entries)
        struct.pack_into("<H", w, 60, self.stride >> 16)
        return bytes(w)


@dataclass
class RawWord:
    raw: bytes

    def pack(self) -> bytes:
        assert len(self.raw) == 64
        return self.raw


# ---------------------------------------------------------------------------------------------
# machine model (contract §3)
# ---------------------------------------------------------------------------------------------
@dataclass
class Pool:
    dt: str
    count: int
    start: int
    mask: int
    data: np.ndarray  # uint8 [128, count*esize]


class Machine:
    def __init__(self, gen: str, options: dict):
        self.gen = gen
        self.opt = options
        self.sbuf = np.zeros((128, SBUF_BYTES[gen]), np.uint8)
        self.psum = np.zeros((128, PSUM_BYTES), np.uint8)
        self.dram: list = []  # [name, base, np.uint8 array]
        self.regs = [0] * 64
        self.pool: Pool | None = None
        self.given: dict | None = None  # widths of the state images (X15 tracking)
        self.read_fresh = False

    def mem(self, space: int) -> np.ndarray:
        return self.sbuf if space == SBUF else self.psum

    def chk(self, space: int, part: int, off: int, n: int, what: str) -> None:
        m = self.mem(space)
        if not (0 <= part < 128 and off >= 0 and off + n <= m.shape[1]):
            raise Fault("out-of-bounds", f"{what}: partition {part} bytes [{off}, {off + n})")

    def rd(self, space, part, off, n, what) -> bytes:
        self.chk(space, part, off, n, what)
        if self.given is not None and off + n > self.given[space]:
            self.read_fresh = True  # depends on X15 (bytes the state file does not give read as 0)
        return self.mem(space)[part, off : off + n].tobytes()

    def wr(self, space, part, off, data: bytes, what) -> None:
        self.chk(space, part, off, len(data), what)
        self.mem(space)[part, off : off + len(data)] = np.frombuffer(data, np.uint8)

    def region(self, addr: int, n: int, what: str):
        for r in self.dram:
            if r[1] <= addr and addr + n <= r[1] + len(r[2]):
                return r[2], addr - r[1]
        raise Fault("out-of-bounds", f"{what}: DRAM [{addr:#x}, {addr + n:#x}) in no region")

    def drd(self, addr, n, what) -> bytes:
        a, o = self.region(addr, n, what)
        return a[o : o + n].tobytes()

    def dwr(self, addr, data: bytes, what) -> None:
        a, o = self.region(addr, len(data), what)
        a[o : o + len(data)] = np.frombuffer(data, np.uint8)


def run_pbl(m: Machine, w: PoolLoad) -> None:
    e = esz(w.dt)
    offs = w.src.elem_offsets()
    data = np.zeros((128, len(offs) * e), np.uint8)
    for c in range(w.ch):
        p = w.src.part + c
        for j, eo in enumerate(offs):
            data[c, j * e : (j + 1) * e] = np.frombuffer(
                m.rd(w.src.space, p, w.src.off + e * eo, e, "src"), np.uint8
            )
    m.pool = Pool(w.dt, len(offs), w.start, w.mask, data)


def run_gather(m: Machine, w: Gather) -> None:
    if m.pool is None:
        raise Fault("state", "GATHER with no Pool_Buffer loaded")
    if w.out_dt != m.pool.dt:
        raise Fault("dtype", "out_dtype differs from the Pool_Buffer dtype")
    pb = m.pool
    ie, oe = esz(w.in_dt), esz(w.out_dt)
    soffs, doffs = w.src.elem_offsets(), w.dst.elem_offsets()
    nki = m.opt["profile"] == "nki"
    imm = (0 if nki else w.imm).to_bytes(4, "little")[:oe]  # X17: low size(out) bytes
    for c in range(w.ch):
        ps, pd = w.src.part + c, w.dst.part + c
        for k in range(len(soffs)):
            raw = m.rd(w.src.space, ps, w.src.off + ie * soffs[k], ie, "src")
            index = int.from_bytes(raw, "little")
            dbyte = w.dst.off + oe * doffs[k]
            m.chk(w.dst.space, pd, dbyte, oe, "dst")
            hit = (index & ~pb.mask & 0xFFFFFFFF) == pb.start and (index & pb.mask) < pb.count  # X16
            if hit:
                o = index & pb.mask
                m.wr(w.dst.space, pd, dbyte, pb.data[c, o * oe : (o + 1) * oe].tobytes(), "dst")
            elif w.miss == 0:
                m.wr(w.dst.space, pd, dbyte, imm, "dst")
    if w.free:
        m.pool = None


def run_ic(m: Machine, w: IndirectCopy) -> None:
    E, e = w.epi, esz(w.dt)
    n = w.num_elem // E
    doffs = w.dst.elem_offsets()
    nki = m.opt["profile"] == "nki"
    pol = "zero-lanes" if nki else m.opt["ic_oob"]
    for b in range(w.ch // 16):
        lst = []
        for j in range(n):
            p = w.idx_part + 16 * b + (j % 16)
            lst.append(int.from_bytes(m.rd(SBUF, p, w.idx_off + 2 * (j // 16), 2, "index"), "little"))
        for t in range(16):
            q_data = w.data_part + 16 * b + t
            q_dst = w.dst.part + 16 * b + t
            if nki:  # pre-zero the whole dst pattern of the partition
                for k in range(len(doffs)):
                    m.wr(w.dst.space, q_dst, w.dst.off + e * doffs[k], bytes(e), "dst")
            for j, r in enumerate(lst):
                start = r if nki else r * E  # X18 (device: rows) / DOCUMENTED (nki: elements)
                elems = list(range(start, start + E))
                out = [x >= w.sbs for x in elems]  # X19: src_buffer_size in elements
                if any(out) and pol == "fault":
                    raise Fault("out-of-bounds", f"core {b} index {j} = {r}")
                if any(out) and pol == "skip-row":
                    continue
                for i, x in enumerate(elems):
                    val = bytes(e) if out[i] else m.rd(SBUF, q_data, w.data_off + e * x, e, "data")
                    m.wr(w.dst.space, q_dst, w.dst.off + e * doffs[j * E + i], val, "dst")


def bound_applies(m: Machine, reg: int, is_err: int) -> bool:
    en, nd = (reg >> 7) & 1, (reg >> 6) & 1
    if m.opt["bound_rule"] == "seed":
        return bool(en)
    return bool(en) and bool(is_err or not nd)


def run_dma(m: Machine, w: DmaIndirect) -> None:
    gather, scatter = w.mode != 1, w.mode != 0
    n = w.src_num if gather else w.dst_num
    ine, oute = esz(w.in_dt), esz(w.out_dt)
    L = w.dst_es // oute
    assert w.src_es // ine == L

    def idx(off, k):
        return int.from_bytes(m.rd(SBUF, 0, off + 4 * k, 4, "index"), "little")

    sidx = [idx(w.sidx_off, k) for k in range(n)] if gather else None
    didx = [idx(w.didx_off, k) for k in range(n)] if scatter else None
    applied = []
    for k in range(n):  # all bound checks before any write
        skip = False
        for side, lst, reg in (("src", sidx, w.sbr), ("dst", didx, w.dbr)):
            if lst is None:
                continue
            if bound_applies(m, reg, w.is_err) and lst[k] >= m.regs[reg & 0x3F]:  # X21
                if w.is_err and not ((reg >> 6) & 1):
                    raise Fault("out-of-bounds", f"{side} index {k} = {lst[k]}")
                skip = True
        if not skip:
            applied.append(k)
    if scatter and not w.nonuniq and m.opt["dup"] == "fault":  # X22
        seen = {}
        for k in applied:
            if didx[k] in seen:
                raise Fault("duplicate-index", f"positions {seen[didx[k]]} and {k}")
            seen[didx[k]] = k
    # address checks before writing (all-or-nothing)
    plan = []
    for k in applied:
        sa = w.src + (sidx[k] * w.src_es if gather else k * w.src_step * w.src_es)
        da = w.dst + (didx[k] * w.dst_es if scatter else k * w.dst_step * w.dst_es)
        m.region(sa, w.src_es, "src")
        m.region(da, w.dst_es, "dst")
        plan.append((sa, da))
    for sa, da in plan:
        sraw = m.drd(sa, w.src_es, "src")
        if w.op == "NONE":
            if w.in_dt == w.out_dt:
                out = sraw
            else:
                out = narrow(widen(sraw, w.in_dt), w.out_dt)
        else:
            draw = m.drd(da, w.dst_es, "dst")
            if not DT[w.out_dt][2]:  # integer destination (X14)
                assert w.in_dt == w.out_dt, "the oracle models integer compute between equal dtypes only"
                out = int_reduce(draw, sraw, w.out_dt, w.op)
            else:
                out = narrow(reduce_vals(widen(draw, w.out_dt), widen(sraw, w.in_dt), w.op), w.out_dt)
        m.dwr(da, out, "dst")


def run_emb(m: Machine, w: Embedding) -> None:
    e = esz(w.dt)
    ioffs = w.idx.elem_offsets()
    doffs = w.data.elem_offsets()  # (j fastest, then i)
    E = w.entry_elems
    for i in range(w.seq):
        index = int.from_bytes(m.rd(w.idx.space, w.idx.part, w.idx.off + 4 * ioffs[i], 4, "index"), "little")
        if index >= w.entries:
            continue
        row = w.base + index * w.stride
        a = b"".join(m.rd(w.data.space, w.data.part, w.data.off + e * doffs[i * E + j], e, "data") for j in range(E))
        cur = m.drd(row, E * e, "table row")
        m.dwr(row, narrow(reduce_vals(widen(cur, w.dt), widen(a, w.dt), w.op), w.dt), "table row")


def run(m: Machine, words: list) -> None:
    for w in words:
        if isinstance(w, PoolLoad):
            run_pbl(m, w)
        elif isinstance(w, Gather):
            run_gather(m, w)
        elif isinstance(w, IndirectCopy):
            run_ic(m, w)
        elif isinstance(w, DmaIndirect):
            run_dma(m, w)
        elif isinstance(w, Embedding):
            run_emb(m, w)
        else:
            raise ValueError(w)


# ---------------------------------------------------------------------------------------------
# a light validator (contract §2) — a self-check that the "ok" cases are valid words
# ---------------------------------------------------------------------------------------------
def tensor_viol(t: T, gen: str, name: str, esize_: int) -> list:
    v = []
    if any(c < 1 for c in t.counts):
        v.append(f"{name}.num_elem")
    size = SBUF_BYTES[gen] if t.space == SBUF else PSUM_BYTES
    if t.off >= size:
        v.append(f"{name}.start")
    if t.marker in (0x60, 0xE0):
        v.append(f"{name}.start marker (decode error)")
    if t.raw_or & (0x1DC00000 if t.space == PSUM else 0x1C000000):
        v.append(f"{name}.start reserved bits (X3)")
    return v


def violations(w, gen: str) -> list:
    v = []
    if isinstance(w, Gather):
        v += tensor_viol(w.src, gen, "src", 1) + tensor_viol(w.dst, gen, "dst", 1)
        if (w.in_code if w.in_code is not None else code(w.in_dt)) not in (3, 5, 9):
            v.append("in_dtype")
        if not 1 <= w.ch <= 128 or w.src.part + w.ch > 128 or w.dst.part + w.ch > 128:
            v.append("num_active_channels")
        if w.src.nelem() != w.dst.nelem():
            v.append("dst.num_elem")
        if w.src.nelem() > 4096:
            v.append("src.num_elem")
        if w.free not in (0, 1):
            v.append("free_pool_buffer")
        if gen == "v5" and (w.src.space == PSUM or w.dst.space == PSUM):
            v.append("psum-on-v5")
        if gen == "v5" and (w.inst_flags & 1):
            for p in (w.src.part, w.dst.part):
                if p // 32 != (p + w.ch - 1) // 32:
                    v.append("tile")
    elif isinstance(w, PoolLoad):
        v += tensor_viol(w.src, gen, "src", 1)
        if w.src.nelem() > 512 or not 1 <= w.ch <= 128 or w.src.part + w.ch > 128:
            v.append("src.num_elem / num_active_channels")
    elif isinstance(w, IndirectCopy):
        v += tensor_viol(w.dst, gen, "dst", 1)
        if w.idx_marker not in (M_INDIRECT_IMM, 0xA0):
            v.append("src form")
        if w.out_dt not in (None, w.dt):
            v.append("out_dtype")
        if w.ch % 16 or not 16 <= w.ch <= 128:
            v.append("num_active_channels")
        for p in (w.idx_part, w.data_part, w.dst.part):
            if p not in (0, 32, 64, 96) or p + w.ch > 128:
                v.append("start partition")
        if w.epi not in (1, 2, 4, 8, 16, 32):
            v.append("src_num_elem_per_idx")
        elif w.num_elem % w.epi or w.num_elem // w.epi > 4096:
            v.append("num_elem")
        if w.dst_epi or w.dst_bs:
            v.append("scatter-not-implemented")
        if w.dst.nelem() != w.num_elem or w.dst.nelem() > 1024:
            v.append("dst.num_elem")
    elif isinstance(w, DmaIndirect):
        if w.chans != 128:
            v.append("idx_num_active_channels")
        if w.sidx_part != 0:
            v.append("src_idx_start_addr")
        if w.gdim or w.sdim:
            v.append("gather_dim")
        for r in (w.sbr, w.dbr):
            if r and not r & 0x80:
                v.append("bound reg")
        if w.src_es <= 0 or w.dst_es <= 0 or w.src_es % esz(w.in_dt) or w.dst_es % esz(w.out_dt):
            v.append("elem_size")
        if w.mode == 2 and w.src_num != w.dst_num:
            v.append("dst_num_elem")
        if (w.src_num if w.mode != 1 else w.dst_num) > 4096:
            v.append("num_elem")
    elif isinstance(w, Embedding):
        if w.op not in ("ADD", "MAX", "MIN"):
            v.append("cce_op")
        if w.idx.nelem() < w.seq:
            v.append("embed_index_in")
        if w.data.counts != [w.entry_elems, w.seq]:
            v.append("embed_data_in")
        if not DT[w.dt][2]:
            v.append("data_dtype")
        if w.seq > 4096:
            v.append("sequence_length")
    return v


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------
DEFAULT_OPT = {"profile": "device", "ic_oob": "zero-lanes", "bound_rule": "seed", "dup": "fault"}
BASE_CHOICES = ["X1", "X2", "X3"]


@dataclass
class Case:
    name: str
    gen: str = "v2"
    options: dict = field(default_factory=lambda: dict(DEFAULT_OPT))
    sbuf: np.ndarray | None = None
    psum: np.ndarray | None = None
    dram: list = field(default_factory=list)  # [(name, base, np.uint8 1-D)]
    regs: list | None = None
    pool: Pool | None = None
    words: list = field(default_factory=list)
    choices: list = field(default_factory=list)
    expect_fault: str | None = None  # for invalid / decode-error words (not modelled)
    check: tuple = ()  # which images go to expected/: "sbuf", "psum", "pool", DRAM names


CASES: list[Case] = []


def add(c: Case) -> Case:
    assert c.name.startswith(PREFIXES), c.name
    assert all(x.name != c.name for x in CASES), c.name
    CASES.append(c)
    return c


def img(rng, width: int, fill: str = "rand") -> np.ndarray:
    if fill == "zero":
        return np.zeros((128, width), np.uint8)
    return rng.integers(0, 256, size=(128, width), dtype=np.uint8)


def vals(rng, dt: str, n: int) -> bytes:
    """Random finite normal values (no NaN, no subnormals) of dtype dt, as bytes."""
    if DT[dt][2]:
        x = rng.uniform(0.25, 4.0, n) * rng.choice([-1.0, 1.0], n)
        x = np.round(x * 64) / 64  # exact in every float dtype used here
        return x.astype(np.float32).astype(DT[dt][1]).tobytes()
    if DT[dt][1].itemsize == 8:  # the whole 64-bit range: random bytes
        return rng.integers(0, 256, 8 * n, dtype=np.uint8).tobytes()
    info = np.iinfo(DT[dt][1])
    return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(DT[dt][1]).tobytes()


def val_sets(W: int, K: int, rng, big: int) -> dict:
    """The VAL sweep index sets over the valid range [0, W) (re-facts §8 "VAL sweep")."""
    return {
        "seq": [k % W for k in range(K)],
        "same": [W // 3] * K,
        "rev": [(W - 1 - k) % W for k in range(K)],
        "alloob": [[W, W + 1, big, big - 1, 2 * W + 3][k % 5] for k in range(K)],
        "mixoob": [(k * 7) % W if k % 3 else [W, big, W + 5][(k // 3) % 3] for k in range(K)],
        "zero": [0] * K,
        "last": [W - 1] * K,
        "onepast": [W] * K,
        "pairs": [(k // 2 * 5) % W for k in range(K)],
        "allcoll": [(W * 2) // 3] * K,
        "rand": [int(x) for x in rng.integers(0, W + W // 4 + 1, K)],
    }


SETS = ["seq", "same", "rev", "alloob", "mixoob", "zero", "last", "onepast", "pairs", "allcoll", "rand"]
OOB_SETS = ["seq", "alloob", "mixoob", "onepast", "rand"]  # policies differ only on these (seq: control)
DUP_SETS = ["seq", "same", "mixoob", "pairs", "allcoll", "rand"]


def put(image: np.ndarray, part: int, off: int, data: bytes) -> None:
    image[part, off : off + len(data)] = np.frombuffer(data, np.uint8)


# ----- GATHER ---------------------------------------------------------------------------------
def gather_case(
    name,
    sets_per_ch,  # list over channels of index lists (length K)
    *,
    gen="v2",
    profile="device",
    dt="bfloat16",
    idx_dt="uint16",
    W=32,
    count=None,
    mask=None,
    start=0,
    miss=0,
    imm=0xDEADBEEF,
    ch=128,
    pb_part=0,
    src_part=0,
    dst_part=0,
    space=PSUM,
    dst_shape=None,
    free=0,
    seed=0,
    choices=(),
    pool_in_state=False,
):
    rng = np.random.default_rng(seed)
    count = W if count is None else count
    mask = (W - 1) if mask is None else mask
    K = len(sets_per_ch[0])
    e, ie = esz(dt), esz(idx_dt)
    c = Case(name, gen)
    c.options["profile"] = profile
    # SBUF: the table rows (count elements per partition) at offset 0
    tab_w = count * e
    words = []
    on_sbuf = space == SBUF
    idx_off = tab_w if on_sbuf else 0
    idx_w = -(-K * ie // 4) * 4
    dst_off = idx_off + idx_w
    width_idx = dst_off + K * e
    sb = img(rng, tab_w + (width_idx - tab_w if on_sbuf else 0))
    ps = None if on_sbuf else img(rng, width_idx)
    target = sb if on_sbuf else ps
    for ci, lst in enumerate(sets_per_ch):
        put(target, src_part + ci, idx_off, np.array(lst, dtype=np.int64).astype(DT[idx_dt][1]).tobytes())
    for p in range(128):
        put(sb, p, 0, vals(rng, dt, count))
    src = T(space, src_part, idx_off, [1, 1, 1, 1], [K, 1, 1, 1])
    if K % 8 == 0:
        src = T(space, src_part, idx_off, [1, 8, 1, 1], [8, K // 8, 1, 1])
    if dst_shape == "transposed":  # element (i0, i1) at i0*(K//8) + i1
        dst = T(space, dst_part, dst_off, [K // 8, 1, 1, 1], [8, K // 8, 1, 1])
    elif dst_shape == "step0":  # K//8 rows all onto the same 8 elements: the last k (in X-fastest order) wins
        dst = T(space, dst_part, dst_off, [1, 0, 1, 1], [8, K // 8, 1, 1])
    elif dst_shape == "reversed":
        dst = T(space, dst_part, dst_off + (K - 1) * e, [-1, 1, 1, 1], [K, 1, 1, 1])
    else:
        dst = T(space, dst_part, dst_off, [1, 4, 1, 1], [4, K // 4, 1, 1]) if K % 4 == 0 else T(
            space, dst_part, dst_off, [1, 1, 1, 1], [K, 1, 1, 1]
        )
    if pool_in_state:
        data = np.zeros((128, count * e), np.uint8)
        data[:ch] = sb[pb_part : pb_part + ch, :tab_w]
        c.pool = Pool(dt, count, start, mask, data)
    else:
        words.append(PoolLoad(T(SBUF, pb_part, 0, [1, 1, 1, 1], [count, 1, 1, 1]), dt, ch, mask, start))
    words.append(Gather(src, dst, idx_dt, dt, ch, miss, imm, free))
    c.sbuf, c.psum, c.words = sb, ps, words
    c.check = ("sbuf",) if on_sbuf else ("psum",)
    ch_ = list(BASE_CHOICES) + ["X6"] + ([] if pool_in_state else ["X11"]) + list(choices)
    if gen == "v5":
        ch_.append("X12")
    c.choices = ch_
    return add(c)


def gather_idx_matrix(lst, ch, rot=True):
    K = len(lst)
    return [[lst[(k + (ci if rot else 0)) % K] for k in range(K)] for ci in range(ch)]


def make_gather_cases():
    rng = np.random.default_rng(68)
    W = 32
    sets = val_sets(W, 24, rng, 0xFFFF)
    for si, sname in enumerate(SETS):
        lst = sets[sname]
        has_miss = any(x >= W for x in lst)
        for pol in ("imm", "skip", "nki"):
            if pol == "nki" and sname not in OOB_SETS:
                continue
            miss = 1 if pol == "skip" else 0
            ch = [128, 64, 32][si % 3]
            mat = gather_idx_matrix(lst, ch)
            if sname == "rand":
                r = np.random.default_rng(1000 + si)
                mat = [[int(x) for x in r.integers(0, W + W // 4 + 1, 40)] for _ in range(ch)]
            part = [0, 32, 96][si % 3]
            extra = ["X17"] if (pol == "imm" and has_miss) else []
            gather_case(
                f"gt_{sname}_{pol}",
                mat,
                profile="nki" if pol == "nki" else "device",
                miss=miss,
                ch=ch,
                src_part=part,
                dst_part=(part + 32) % 128 if ch <= 64 else 0,
                pb_part=part,
                dst_shape=["plain", "transposed", "reversed"][si % 3],
                seed=si * 10 + miss,
                choices=extra,
            )
    # a dst pattern with a step-0 dim: k order decides which write survives (SKIP keeps older ones)
    for pol, miss in (("skip", 1), ("imm", 0)):
        gather_case(f"gt_dst_step0_{pol}", gather_idx_matrix(sets["mixoob"], 128), miss=miss, dst_shape="step0",
                    seed=43, choices=["X17"] if miss == 0 else [])
    # index tensor and dst in SBUF on v2
    gather_case("gt_sbuf_v2", gather_idx_matrix(sets["mixoob"], 128), space=SBUF, seed=40, choices=["X17"])
    # nki profile with SKIP_WRITE: the same as the device profile
    gather_case("gt_mixoob_nki_skip", gather_idx_matrix(sets["mixoob"], 64), profile="nki", miss=1, ch=64,
                src_part=32, dst_part=64, pb_part=32, seed=41)
    # the Pool_Buffer loaded from a strided SBUF pattern (TENSOR order, X fastest), checked as pool.npy
    c = gather_case("gt_pool_strided_load", gather_idx_matrix(sets["rand"], 128), W=16, count=16, mask=15,
                    dt="float32", seed=42, choices=["X17"])
    c.words[0].src = T(SBUF, 0, 0, [4, 1, 1, 1], [4, 4, 1, 1])  # element (i0, i1) at 4*i0 + i1
    c.check = ("psum", "pool")
    # index widths
    for idx_dt, big in (("uint8", 0xFF), ("uint16", 0xFFFF), ("uint32", 0xFFFFFFFF)):
        lst = [1, 5, W - 1, W, big, 0, 17, 64] * 5
        gather_case(f"gt_width_{idx_dt}", gather_idx_matrix(lst, 128), idx_dt=idx_dt, choices=["X17"], seed=3)
    # dtypes (fp32 output: the whole immediate; uint8: its low byte; int32)
    for dt in ("float32", "float16", "int32", "uint8"):
        lst = val_sets(W, 40, np.random.default_rng(9), 0xFFFF)["mixoob"]
        gather_case(f"gt_dtype_{dt}", gather_idx_matrix(lst, 128), dt=dt, imm=0x3F80ABCD, choices=["X17"], seed=4)
    # the mask window: start_index 64, mask 0x3F; count < window (X16), u32 indices
    lst = [64, 65, 64 + 19, 64 + 20, 64 + 63, 0, 3, 128, 127, 64 + 10] * 4
    gather_case("gt_window_start64", gather_idx_matrix(lst, 128), idx_dt="uint32", W=64, count=20, mask=0x3F,
                start=64, choices=["X16", "X17"], seed=5)
    gather_case("gt_window_count_skip", gather_idx_matrix(lst, 128), idx_dt="uint32", W=64, count=20, mask=0x3F,
                start=64, miss=1, choices=["X16"], seed=6)
    # Pool_Buffer given in the state file; generations v3 / v4 / v5 (SBUF only)
    lst = sets["rand"]
    gather_case("gt_pool_in_state", gather_idx_matrix(lst, 128), pool_in_state=True, choices=["X17"], seed=7)
    gather_case("gt_gen_v3", gather_idx_matrix(lst, 96), gen="v3", ch=96, src_part=32, dst_part=0,
                pb_part=32, choices=["X17"], seed=8)
    gather_case("gt_gen_v4_free", gather_idx_matrix(lst, 128), gen="v4", miss=1, free=1, seed=9)
    gather_case("gt_gen_v5_sbuf", gather_idx_matrix(lst, 32), gen="v5", space=SBUF, ch=32, src_part=64,
                dst_part=64, pb_part=64, choices=["X17"], seed=10)
    # the NKI lowering of one nc_n_gather over F = 1024 elements: two 512-element windows
    F, K = 1024, 40
    r2 = np.random.default_rng(11)
    sb = img(r2, F * 2)
    for p in range(128):
        put(sb, p, 0, vals(r2, "bfloat16", F))
    ps = img(r2, 4 * K + 2 * K)
    idx = np.zeros((128, K), np.int64)
    for p in range(128):
        idx[p] = r2.integers(0, F, K)
        idx[p, ::9] = [1024, 0xFFFFFFFF, 511, 512, 1023][: len(idx[p, ::9])]
        put(ps, p, 0, idx[p].astype("<u4").tobytes())
    srcT = T(PSUM, 0, 0, [1, 1, 1, 1], [K, 1, 1, 1])
    dstT = T(PSUM, 0, 4 * K, [1, 1, 1, 1], [K, 1, 1, 1])
    words = [
        PoolLoad(T(SBUF, 0, 0, [1, 1, 1, 1], [512, 1, 1, 1]), "bfloat16", 128, 0x1FF, 0),
        Gather(srcT, dstT, "uint32", "bfloat16", 128, 0, 0),
        PoolLoad(T(SBUF, 0, 1024, [1, 1, 1, 1], [512, 1, 1, 1]), "bfloat16", 128, 0x1FF, 512),
        Gather(srcT, dstT, "uint32", "bfloat16", 128, 1, 0, free=1),
    ]
    c = add(Case("seq_gt_two_windows", sbuf=sb, psum=ps, words=words, check=("psum",),
                 choices=BASE_CHOICES + ["X6", "X11"]))
    # hand check: the result is take_along_axis with zero for indices >= F
    c.hand = ("two_windows", idx)
    # free then gather again -> fault state; no pool -> fault state; dtype mismatch -> fault dtype
    lst = sets["seq"]
    cf = gather_case("gt_fault_after_free", gather_idx_matrix(lst, 128), free=1, seed=12)
    cf.words.append(copy.deepcopy(cf.words[1]))
    cn = gather_case("gt_fault_no_pool", gather_idx_matrix(lst, 128), seed=13)
    cn.words = cn.words[1:]
    cd = gather_case("gt_fault_dtype", gather_idx_matrix(lst, 128), seed=14)
    cd.words[1].out_dt = "float16"
    # an index tensor that leaves the partition (negative offset) -> out-of-bounds
    co = gather_case("gt_fault_oob_tensor", gather_idx_matrix(lst, 128), seed=15)
    co.words[1].src.steps = [1, -16, 1, 1]
    co.words[1].src.counts = [8, 3, 1, 1]
    # a 2-word GATHER pair sharing one load (SKIP then IMMEDIATE onto the same dst), PSUM on v2
    c2 = gather_case("gt_two_gathers", gather_idx_matrix(sets["mixoob"], 128), miss=1, seed=16, choices=["X17"])
    g2 = copy.deepcopy(c2.words[1])
    g2.miss, g2.imm = 0, 0x00007FC1
    c2.words.append(g2)


# ----- INDIRECT_COPY --------------------------------------------------------------------------
def ic_case(
    name,
    lists,  # per core: list of n u16 indices
    *,
    gen="v2",
    profile="device",
    ic_oob="zero-lanes",
    dt="uint8",
    E=2,
    rows=20,
    sbs=None,
    ch=128,
    p_idx=0,
    p_data=0,
    p_dst=0,
    dst_shape="plain",
    seed=0,
    choices=(),
):
    rng = np.random.default_rng(seed)
    n = len(lists[0])
    e = esz(dt)
    sbs = rows * E if sbs is None else sbs
    per_part = -(-n // 16)  # u16 indices per partition (column-major list)
    idx_w = -(-(2 * per_part) // 8) * 8
    data_off = idx_w
    data_elems = max(sbs, rows * E) + 2 * E  # garbage past the bound: never read
    dst_off = data_off + data_elems * e
    dst_off = -(-dst_off // 4) * 4
    width = dst_off + n * E * e
    sb = img(rng, width)
    for b, lst in enumerate(lists):
        for j, r in enumerate(lst):
            put(sb, p_idx + 16 * b + j % 16, 2 * (j // 16), int(r).to_bytes(2, "little"))
    for p in range(128):
        put(sb, p, data_off, vals(rng, dt, data_elems))
    if dst_shape == "plain":
        dst = T(SBUF, p_dst, dst_off, [1, E, 1, 1], [E, n, 1, 1])
    elif dst_shape == "flat":
        dst = T(SBUF, p_dst, dst_off, [1, 1, 1, 1], [n * E, 1, 1, 1])
    else:  # "split": n = a*b index rows laid out by a 3-D pattern
        a = 4 if n % 4 == 0 else 1
        dst = T(SBUF, p_dst, dst_off, [1, E, E * (n // a), 1], [E, n // a, a, 1])
    w = IndirectCopy(p_idx, 0, p_data, data_off, n * E, dt, ch, E, sbs, dst)
    c = Case(name, gen, sbuf=sb, words=[w], check=("sbuf",))
    c.options.update(profile=profile, ic_oob=ic_oob)
    # X18 (device: an index counts rows) is tagged CONFIRMED-seed in the contract: not a choice line
    c.choices = BASE_CHOICES + ["X6", "X8", "X19"] + list(choices)
    if gen == "v5":
        c.choices.append("X12")
    return add(c)


def make_ic_cases():
    rng = np.random.default_rng(0xE7)
    rows, E, n = 20, 2, 24
    sets = val_sets(rows, n, rng, 0xFFFF)
    for si, sname in enumerate(SETS):
        lst = sets[sname]
        has_oob = any(x >= rows for x in lst)
        cores = [8, 2, 4][si % 3]
        ch = 16 * cores
        part = [0, 64, 32][si % 3]
        per_core = [[lst[(j + b) % n] for j in range(n)] for b in range(cores)]
        if sname == "rand":  # every core its own seeded random list
            r = np.random.default_rng(2000 + si)
            per_core = [[int(x) for x in r.integers(0, rows + rows // 4 + 1, 40)] for _ in range(cores)]
        for pol in ("zero-lanes", "skip-row", "fault"):
            if pol != "zero-lanes" and sname not in OOB_SETS:
                continue
            extra = ["X20"] if (pol == "zero-lanes" and has_oob) else []
            ic_case(f"ic_{sname}_{pol.replace('-', '')}", per_core, ic_oob=pol, ch=ch, p_idx=part,
                    p_data=(part + 32) % 128 if cores <= 2 else 0, p_dst=part, rows=rows, E=E,
                    dst_shape=["plain", "flat", "split"][si % 3], seed=si, choices=extra)
        # nki profile: element offsets (row * E) — the NKI test passes index*num_elem_per_idx;
        # "onepast" / "mixoob" include runs that overrun the buffer edge by one element
        if sname not in OOB_SETS + ["pairs"]:
            continue
        nki_lst = [min(x * E, 0xFFFF) for x in lst]
        if sname == "mixoob":
            nki_lst = [v if k % 4 else rows * E - 1 for k, v in enumerate(nki_lst)]
        per_core = [[nki_lst[(j + b) % n] for j in range(n)] for b in range(cores)]
        if sname == "rand":
            r = np.random.default_rng(3000 + si)
            per_core = [[int(x) for x in r.integers(0, rows * E + 8, 40)] for _ in range(cores)]
        ic_case(f"ic_{sname}_nki", per_core, profile="nki", ch=ch, p_idx=part,
                p_data=(part + 32) % 128 if cores <= 2 else 0, p_dst=part, rows=rows, E=E, seed=100 + si)
    # each src_num_elem_per_idx with 16 / 32 / 128 channels at different start partitions
    cfgs = [(1, 16, 96, 32, 0), (2, 32, 64, 0, 96), (4, 128, 0, 0, 0), (8, 16, 32, 64, 96), (16, 32, 0, 96, 32),
            (32, 128, 0, 0, 0)]
    for E_, ch, pi, pd, pt in cfgs:
        n_ = min(24, 128 // E_)
        rows_ = 12 if E_ <= 8 else 6
        r = np.random.default_rng(E_)
        lists = [[int(x) for x in r.integers(0, rows_ + 2, n_)] for _ in range(ch // 16)]
        ic_case(f"ic_epi{E_}_ch{ch}", lists, E=E_, rows=rows_, ch=ch, p_idx=pi, p_data=pd, p_dst=pt,
                dt="bfloat16" if E_ <= 8 else "uint8", seed=E_, choices=["X20"])
    # dtypes
    for dt in ("float32", "float16", "int32", "bfloat16"):
        r = np.random.default_rng(len(dt))
        lists = [[int(x) for x in r.integers(0, 12, 16)] for _ in range(2)]
        ic_case(f"ic_dtype_{dt}", lists, dt=dt, E=2, rows=10, ch=32, p_idx=32, p_data=32, p_dst=96,
                seed=7, choices=["X20"])
    # a partially-out row: src_buffer_size not a multiple of E (row rows-1 has its last element out)
    lst = [[19, 3, 19, 0, 20, 18, 19, 1] * 2]
    for pol in ("zero-lanes", "skip-row", "fault"):
        ic_case(f"ic_partial_row_{pol.replace('-', '')}", lst, ic_oob=pol, E=4, rows=20, sbs=79, ch=16,
                p_idx=0, p_data=32, p_dst=64, dt="bfloat16", seed=21, choices=["X20"] if pol == "zero-lanes" else [])
    # more than 16 indices per core: the column-major list wraps to element 1, 2 of each partition
    r = np.random.default_rng(99)
    lists = [[int(x) for x in r.integers(0, 16, 48)] for _ in range(8)]
    ic_case("ic_colmajor_48", lists, E=1, rows=16, dt="bfloat16", seed=22)
    ic_case("ic_gen_v5", lists, gen="v5", E=1, rows=16, dt="bfloat16", seed=23)


# ----- DMA_INDIRECT ---------------------------------------------------------------------------
SRC_BASE, DST_BASE = 0x1000_0000, 0x2000_0000


def dma_case(
    name,
    *,
    mode=0,
    sidx=None,
    didx=None,
    rows=24,  # rows the bound register admits (table rows)
    slack=0,  # rows of the table region past the bound
    L=4,
    in_dt="float32",
    out_dt=None,
    op="NONE",
    sbr=None,
    dbr=None,
    is_err=0,
    nonuniq=0,
    bound_rule="seed",
    dup="fault",
    gen="v2",
    seed=0,
    choices=(),
    special=None,  # {"src_vals": bytes, "dst_vals": bytes} to override table contents
):
    rng = np.random.default_rng(seed)
    out_dt = out_dt or in_dt
    gather, scatter = mode != 1, mode != 0
    n = len(sidx) if gather else len(didx)
    ies, oes = L * esz(in_dt), L * esz(out_dt)
    src_rows = rows + slack if gather else n
    dst_rows = rows + slack if scatter else n
    sb = img(rng, 8 * n if mode == 2 else 4 * n)
    if gather:
        put(sb, 0, 0, np.array(sidx, dtype=np.int64).astype("<u4").tobytes())
    if scatter:
        put(sb, 0, 4 * n if mode == 2 else 0, np.array(didx, dtype=np.int64).astype("<u4").tobytes())
    srcb = np.frombuffer(vals(rng, in_dt, src_rows * L), np.uint8).copy()
    dstb = np.frombuffer(vals(rng, out_dt, dst_rows * L), np.uint8).copy()
    if special:
        s, d = special.get("src"), special.get("dst")
        if s is not None:
            srcb[: len(s)] = np.frombuffer(s, np.uint8)
        if d is not None:
            dstb[: len(d)] = np.frombuffer(d, np.uint8)
    regs = [0] * 64
    regs[5], regs[6], regs[9] = rows, rows, 3
    sbr = bound_reg(1, 5) if sbr is None else sbr
    dbr = bound_reg(1, 6) if dbr is None else dbr
    if not gather:
        sbr = 0
    if not scatter:
        dbr = 0
    w = DmaIndirect(mode, SRC_BASE, 1, n, ies, DST_BASE, 1, n, oes, 0, 4 * n if mode == 2 else 0, in_dt, out_dt,
                    sbr, dbr, op, is_err, nonuniq)
    c = Case(name, gen, sbuf=sb, dram=[("src", SRC_BASE, srcb), ("dst", DST_BASE, dstb)], regs=regs, words=[w],
             check=("src", "dst"))
    c.options.update(bound_rule=bound_rule, dup=dup)
    c.choices = ["X1", "X3", "X4", "X5"] + (["X21"] if (sbr | dbr) & 0x80 else []) + list(choices)
    return add(c)


def has_dup(lst):
    return len(set(lst)) != len(lst)


def make_dma_cases():
    rng = np.random.default_rng(0xBB)
    rows, n = 24, 24
    sets = val_sets(rows, n, rng, 0xFFFFFFFF)
    for si, sname in enumerate(SETS):
        lst = sets[sname]
        # gather: soft skip (bound enabled, not an error) and hard error
        dma_case(f"dma_g_{sname}_skip", mode=0, sidx=lst, seed=si)
        if sname in OOB_SETS:
            dma_case(f"dma_g_{sname}_err", mode=0, sidx=lst, is_err=1, seed=si)
        # scatter, duplicates allowed: last writer wins; and without non_unique_dst_idx (fault)
        dma_case(f"dma_s_{sname}_nonuniq", mode=1, didx=lst, nonuniq=1, seed=50 + si, L=2, in_dt="bfloat16")
        if sname in DUP_SETS:
            dma_case(f"dma_s_{sname}_dupfault", mode=1, didx=lst, seed=50 + si, L=2, in_dt="bfloat16",
                     choices=["X22"] if has_dup([x for x in lst if x < rows]) else [])
        # scatter-add with non_unique_dst_idx (accumulates in k order)
        if sname in DUP_SETS:
            dma_case(f"dma_s_{sname}_add", mode=1, didx=lst, nonuniq=1, op="ADD", seed=70 + si)
    # the bound-check grid on one mixed index set (slack rows: OOB-by-bound indices that are
    # still inside the table region get copied where no check applies)
    lst = [3, 25, 7, 24, 30, 1, 26, 0, 23, 29] * 2
    for en in (0, 1):
        for err in (0, 1):
            for nd in (0, 1):
                if not en and nd:
                    continue  # a disabled BOUND_CHECK_REG with other bits is invalid (see bad_)
                for rule in ("seed", "refacts"):
                    dma_case(f"dma_bound_en{en}_err{err}_nd{nd}_{rule}", mode=0, sidx=lst,
                             slack=8, sbr=bound_reg(en, 5, nd) if en else 0, is_err=err,
                             bound_rule="seed" if rule == "seed" else "re-facts", seed=200 + en * 4 + err * 2 + nd)
    # re-facts rule, enabled + not an error + notification off: no check, so a huge index is a
    # wild address -> out-of-bounds; under the seed rule the same word soft-skips it
    big = [3, 0xFFFFFFFF, 5]
    dma_case("dma_bound_big_nd1_refacts", mode=0, sidx=big, slack=8, sbr=bound_reg(1, 5, 1),
             bound_rule="re-facts", seed=208)
    dma_case("dma_bound_big_nd1_seed", mode=0, sidx=big, slack=8, sbr=bound_reg(1, 5, 1), seed=208)
    # disabled bound check and an index past the region -> out-of-bounds (never a wild access)
    dma_case("dma_nobound_past_region", mode=0, sidx=[1, 2, 40, 3], slack=8, sbr=0, seed=210)
    # compute ops x dtypes, scatter with colliding pairs (non_unique_dst_idx)
    pairs = [(k // 2 * 5) % rows for k in range(16)]
    for op in ("NONE", "ADD", "MULTIPLY", "MAX", "MIN"):
        for dt in ("float32", "bfloat16", "float16"):
            if dt == "float16" and op in ("NONE", "MIN"):
                continue
            dma_case(f"dma_op_{op.lower()}_{dt}", mode=1, didx=pairs, nonuniq=1, op=op, in_dt=dt, seed=300)
    # X14: the compute ops on integer dtypes (seed 004 §3c gives no dtype limit): wrapping
    # ADD / MULTIPLY, MAX / MIN signed for intN and unsigned for uintN
    for op, dt in (("ADD", "int32"), ("MULTIPLY", "int32"), ("MAX", "int32"), ("MIN", "int32"),
                   ("ADD", "uint32"), ("MAX", "uint32"), ("MIN", "uint32"), ("ADD", "int8"), ("MIN", "int8"),
                   ("MAX", "uint8"), ("MULTIPLY", "int16"), ("MIN", "uint16"), ("ADD", "int64"),
                   ("MAX", "int64"), ("MIN", "uint64"), ("MULTIPLY", "uint64")):
        dma_case(f"dma_op_{op.lower()}_{dt}", mode=1, didx=pairs, nonuniq=1, op=op, in_dt=dt, seed=340,
                 choices=["X14"])
    dma_case("dma_g_op_max_int32", mode=0, sidx=sets["rand"], op="MAX", in_dt="int32", seed=341, choices=["X14"])
    # gather-mode compute (dst = dst op src[sidx[k]])
    for op in ("ADD", "MAX"):
        dma_case(f"dma_g_op_{op.lower()}", mode=0, sidx=sets["rand"], op=op, seed=310)
    # max / min with NaN and -0 (fp32 and bf16): NaN -> the other operand, +-0 tie keeps dst
    for dt in ("float32", "bfloat16"):
        L = 8
        nan = np.float32("nan")
        d = np.array([nan, 1.0, -0.0, 0.0, -0.0, 2.0, nan, -3.0], np.float32)
        s = np.array([1.5, nan, 0.0, -0.0, -0.0, -2.0, -1.0, -3.0], np.float32)
        for op in ("MAX", "MIN"):
            dma_case(f"dma_nan_{op.lower()}_{dt}", mode=1, didx=[2, 0], L=L, in_dt=dt, op=op,
                     seed=320, special={"src": narrow(np.concatenate([s, s]), dt),
                                        "dst": narrow(np.concatenate([d, d, d]), dt)})
    # dtype copies: int32, uint8 (raw), cast bf16 -> fp32 and fp32 -> bf16 (RNE)
    dma_case("dma_copy_int32", mode=0, sidx=sets["rand"], in_dt="int32", seed=330)
    dma_case("dma_copy_uint8", mode=0, sidx=sets["rand"], in_dt="uint8", L=12, seed=331)
    dma_case("dma_cast_bf16_fp32", mode=0, sidx=sets["seq"], in_dt="bfloat16", out_dt="float32", seed=332)
    rne = np.array([1 + 2**-8, 1 + 3 * 2**-9, -(1 + 2**-8 + 2**-20), 3.0], np.float32)
    dma_case("dma_cast_fp32_bf16", mode=0, sidx=[0, 1, 2, 3, 0], in_dt="float32", out_dt="bfloat16", seed=333,
             special={"src": rne.tobytes()})
    dma_case("dma_add_bf16_to_fp32", mode=1, didx=pairs, nonuniq=1, op="ADD", in_dt="bfloat16",
             out_dt="float32", seed=334)
    # both: gather from sidx, scatter to didx
    for si, sname in enumerate(("seq", "mixoob", "pairs", "rand")):
        s = sets[sname]
        d = sets[["rev", "seq", "rand", "mixoob"][si]]
        dma_case(f"dma_both_{sname}", mode=2, sidx=s, didx=d, nonuniq=1, seed=400 + si)
    dma_case("dma_both_add", mode=2, sidx=sets["rand"], didx=sets["pairs"], nonuniq=1, op="ADD", seed=410)
    dma_case("dma_both_dst_err", mode=2, sidx=sets["seq"], didx=sets["mixoob"], nonuniq=1, is_err=1, seed=411)
    # duplicates without non_unique_dst_idx: dup=serial (X22 option) and dup fault in mode both
    dma_case("dma_s_pairs_serial", mode=1, didx=sets["pairs"], dup="serial", op="ADD", seed=420, choices=["X22"])
    dma_case("dma_s_allcoll_serial", mode=1, didx=sets["allcoll"], dup="serial", seed=421, choices=["X22"])
    dma_case("dma_both_dupfault", mode=2, sidx=sets["seq"], didx=sets["pairs"], seed=422, choices=["X22"])
    # duplicates only among skipped indices are no duplicates ("among applied k")
    dma_case("dma_s_dup_only_oob", mode=1, didx=[1, 30, 2, 30, 3, 31, 31], seed=423, choices=["X22"])
    # generations
    for gen in ("v3", "v4", "v5"):
        dma_case(f"dma_gen_{gen}", gen=gen, mode=1, didx=sets["rand"], nonuniq=1, op="ADD", seed=430,
                 choices=["X12"] if gen == "v5" else [])


# ----- EMBEDDING_UPDATE -----------------------------------------------------------------------
EMB_BASE = 0x0010_0000


def emb_case(name, idx, *, dt="bfloat16", op="ADD", E=4, entries=24, region_rows=None, stride=None,
             layout="rowmajor", opcode=OP_EMB, gen="v2", seed=0, choices=(), special=None):
    rng = np.random.default_rng(seed)
    seq = len(idx)
    e = esz(dt)
    stride = stride if stride is not None else E * e + 4
    region_rows = entries if region_rows is None else region_rows
    width = max(4 * seq, seq * E * e)
    sb = img(rng, width)
    put(sb, 0, 0, np.array(idx, dtype=np.int64).astype("<u4").tobytes())
    data = vals(rng, dt, seq * E)
    if special and "data" in special:
        data = special["data"]
    arr = np.frombuffer(data, DT[dt][1])  # logical (i, j) = arr[i*E + j]
    if layout == "rowmajor":  # element (j, i) at i*E + j
        dT = T(SBUF, 1, 0, [1, E], [E, seq])
        put(sb, 1, 0, arr.tobytes())
    else:  # column-major: (j, i) at j*seq + i
        dT = T(SBUF, 1, 0, [seq, 1], [E, seq])
        put(sb, 1, 0, arr.reshape(seq, E).T.copy().tobytes())
    table = np.frombuffer(
        b"".join(vals(rng, dt, E) + rng.integers(0, 256, stride - E * e, dtype=np.uint8).tobytes()
                 for _ in range(region_rows)), np.uint8).copy()
    if special and "table" in special:
        t = special["table"]
        for r, row in enumerate(t):
            table[r * stride : r * stride + E * e] = np.frombuffer(row, np.uint8)
    w = Embedding(dt, op, T(SBUF, 0, 0, [1], [seq]), dT, T(SBUF, 2, 0, [1], [1]), EMB_BASE, E, stride, seq, entries,
                  opcode)
    if stride > 4096:  # a wide stride: one small DRAM region per row (regions need not touch)
        rb = E * e + 4
        dram = [(f"table{r}", EMB_BASE + r * stride,
                 np.frombuffer(vals(rng, dt, E) + bytes(4), np.uint8).copy()) for r in range(region_rows)]
        assert rb == len(dram[0][2])
    else:
        dram = [("table", EMB_BASE, table)]
    c = Case(name, gen, sbuf=sb, dram=dram, words=[w], check=tuple(x[0] for x in dram))
    c.choices = BASE_CHOICES + ["X6", "X7", "X9", "X10", "X23"] + list(choices)
    return add(c)


def make_emb_cases():
    rng = np.random.default_rng(0xCA)
    entries, seq = 24, 24
    sets = val_sets(entries, seq, rng, 0xFFFFFFFF)
    for si, sname in enumerate(SETS):
        emb_case(f"emb_{sname}_add", sets[sname], dt="float32" if si % 2 else "bfloat16",
                 layout="rowmajor" if si % 3 else "colmajor", seed=si)
    for op in ("MAX", "MIN"):
        for sname in ("pairs", "mixoob", "rand"):
            emb_case(f"emb_{sname}_{op.lower()}", sets[sname], op=op, dt="float16", seed=20)
    # NaN and -0 under MAX / MIN
    nan = np.float32("nan")
    tab = np.array([[nan, 1.0, -0.0, 0.0], [-0.0, 2.0, nan, -3.0]], np.float32)
    dat = np.array([[1.5, nan, 0.0, -0.0], [-0.0, -2.0, -1.0, -3.0], [2.5, 0.5, -0.0, 1.0]], np.float32)
    for dt in ("float32", "bfloat16"):
        for op in ("MAX", "MIN"):
            emb_case(f"emb_nan_{op.lower()}_{dt}", [0, 1, 0], dt=dt, op=op, seed=21,
                     special={"table": [narrow(r, dt) for r in tab], "data": narrow(dat.reshape(-1), dt)})
    emb_case("emb_raw_opcode_0x79", sets["rand"], opcode=OP_EMB_RAW, seed=22)
    emb_case("emb_wide_stride", [0, 1, 2, 1, 5, 0, 2], stride=0x10008, entries=3, dt="float32", E=2,
             seed=23)  # the stride's high half at +60 is used
    emb_case("emb_gen_v5", sets["rand"], gen="v5", seed=24, choices=["X12"])
    # an in-range index (< num_entries) whose row lies past the DRAM region -> out-of-bounds
    emb_case("emb_fault_row_past_region", [1, 2, 20], entries=24, region_rows=16, seed=25)


# ----- several random index sets, one word each (the VAL "fuzz" cases for DMA / EMBEDDING) ------
def make_multi_cases():
    nw, n, rows, L = 8, 24, 24, 4
    es = 4 * L
    r = np.random.default_rng(0x5EED)
    sets = [[int(x) for x in r.integers(0, rows + rows // 4 + 1, n)] for _ in range(nw)]
    regs = [0] * 64
    regs[5] = regs[6] = rows
    # gather, soft skip: word w gathers into its own block of dst rows
    sb = img(r, nw * 4 * n)
    for w_, lst in enumerate(sets):
        put(sb, 0, 4 * n * w_, np.array(lst, "<u4").tobytes())
    srcb = np.frombuffer(vals(r, "float32", (rows + 8) * L), np.uint8).copy()
    dstb = np.frombuffer(vals(r, "float32", nw * n * L), np.uint8).copy()
    words = [DmaIndirect(0, SRC_BASE, 1, n, es, DST_BASE + w_ * n * es, 1, n, es, 4 * n * w_, 0, "float32",
                         "float32", bound_reg(1, 5), 0) for w_ in range(nw)]
    add(Case("dma_g_rand8_words", sbuf=sb, dram=[("src", SRC_BASE, srcb), ("dst", DST_BASE, dstb)], regs=regs,
             words=words, check=("dst",), choices=["X1", "X3", "X4", "X5", "X21"]))
    # scatter-add: all words accumulate into one table (duplicates allowed)
    srcb = np.frombuffer(vals(r, "float32", nw * n * L), np.uint8).copy()
    dstb = np.frombuffer(vals(r, "float32", rows * L), np.uint8).copy()
    words = [DmaIndirect(1, SRC_BASE + w_ * n * es, 1, n, es, DST_BASE, 1, n, es, 0, 4 * n * w_, "float32",
                         "float32", 0, bound_reg(1, 6), "ADD", 0, 1) for w_ in range(nw)]
    add(Case("dma_s_rand8_words_add", sbuf=sb.copy(), dram=[("src", SRC_BASE, srcb), ("dst", DST_BASE, dstb)],
             regs=regs, words=words, check=("dst",), choices=["X1", "X3", "X4", "X5", "X21"]))
    # EMBEDDING ADD, 8 words: word w's indices in partition 16 + w, its data in partition 1 + w
    E, dt, entries = 4, "bfloat16", 24
    e = esz(dt)
    stride = E * e + 4
    sb = img(r, n * E * e)
    words = []
    for w_, lst in enumerate(sets):
        put(sb, 16 + w_, 0, np.array(lst, "<u4").tobytes())
        put(sb, 1 + w_, 0, vals(r, dt, n * E))
        words.append(Embedding(dt, "ADD", T(SBUF, 16 + w_, 0, [1], [n]), T(SBUF, 1 + w_, 0, [1, E], [E, n]),
                               T(SBUF, 40, 0, [1], [1]), EMB_BASE, E, stride, n, entries))
    table = np.frombuffer(b"".join(vals(r, dt, E) + bytes(4) for _ in range(entries)), np.uint8).copy()
    add(Case("emb_rand8_words_add", sbuf=sb, dram=[("table", EMB_BASE, table)], words=words, check=("table",),
             choices=BASE_CHOICES + ["X6", "X7", "X9", "X10", "X23"]))


def make_dma_overlap_case():
    """Serial k order (seed §7c): src and dst in ONE region, dst rows 8.. are read back later."""
    r = np.random.default_rng(0x0E)
    n, L = 24, 4
    es = 4 * L
    sb = img(r, 4 * n)
    put(sb, 0, 0, np.arange(n, dtype="<u4").tobytes())  # k reads row k; row k+8 was written at k
    tab = np.frombuffer(vals(r, "float32", 40 * L), np.uint8).copy()
    w = DmaIndirect(0, SRC_BASE, 1, n, es, SRC_BASE + 8 * es, 1, n, es, 0, 0, "float32", "float32", 0, 0)
    c = add(Case("dma_serial_overlap", sbuf=sb, dram=[("tab", SRC_BASE, tab)], words=[w], check=("tab",),
                 choices=["X1", "X3", "X4", "X5"]))
    c.hand = ("overlap", tab.copy())


# ----- invalid / decode-error words ---------------------------------------------------------------
def make_bad_cases():
    sets = val_sets(32, 24, np.random.default_rng(1), 0xFFFF)
    lst = gather_idx_matrix(sets["seq"], 128)

    def bad(c, fault="invalid", *extra):
        c.expect_fault = fault
        c.choices += list(extra)
        return c

    # GATHER on PSUM is invalid on v5 (and fine on v2: gt_* cases)
    bad(gather_case("bad_gt_psum_v5", lst, gen="v5", seed=1))
    bad(gather_case("bad_gt_in_int32", lst, seed=2))
    CASES[-1].words[1].in_code = code("int32")
    c = bad(gather_case("bad_gt_v5_tile", gather_idx_matrix(sets["seq"], 32), gen="v5", space=SBUF, ch=32,
                        src_part=16, dst_part=16, pb_part=16, seed=3), "invalid", "X13")
    c.words[1].inst_flags = 1
    # the same channel range without the tile flag is valid on v5
    gather_case("gt_v5_notile", gather_idx_matrix(sets["seq"], 32), gen="v5", space=SBUF, ch=32, src_part=16,
                dst_part=16, pb_part=16, seed=3, choices=["X13"])
    c = bad(gather_case("bad_gt_count_mismatch", lst, seed=4))
    c.words[1].dst.counts = [4, 9, 1, 1]
    c = bad(gather_case("bad_gt_count_zero", lst, seed=5))
    c.words[1].dst.counts = [4, 10, 0, 1]
    c = bad(gather_case("bad_gt_channels_over", lst, seed=6))
    c.words[1].src.part = 32  # 32 + 128 > 128
    c = bad(gather_case("bad_gt_dst_marker_reg", lst, seed=7), "not-implemented")
    c.words[1].dst.marker = M_ADDR_REG
    # INDIRECT_COPY
    base = [[1, 2, 3, 4] * 4]

    def icb(name, **kw):
        return bad(ic_case(name, base, ch=16, E=2, rows=8, seed=8))

    c = icb("bad_ic_dst_epi")
    c.words[0].dst_epi = 1
    c = icb("bad_ic_dst_buffer_size")
    c.words[0].dst_bs = 64
    c = icb("bad_ic_epi3")
    c.words[0].epi = 3
    c = icb("bad_ic_channels24")
    c.words[0].ch = 24
    c = icb("bad_ic_start16")
    c.words[0].dst.part = 16
    c = icb("bad_ic_dtype_mismatch")
    c.words[0].out_dt = "uint16"
    c = icb("bad_ic_tensor_form")
    c.words[0].idx_marker = M_IMM
    c = icb("bad_ic_dst_count")
    c.words[0].dst.counts = [2, 8, 1, 1]
    # DMA_INDIRECT
    c = bad(dma_case("bad_dma_channels64", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].chans = 64
    c = bad(dma_case("bad_dma_idx_partition1", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].sidx_part = 1
    c = bad(dma_case("bad_dma_gather_dim_y", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].gdim = 1
    c = bad(dma_case("bad_dma_bound_reg_disabled_bits", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].sbr = 0x05
    c = bad(dma_case("bad_dma_both_counts", mode=2, sidx=[1, 2, 3], didx=[4, 5, 6], nonuniq=1, seed=9))
    c.words[0].dst_num = 2
    c = bad(dma_case("bad_dma_elem_size", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].src_es = 6
    c.words[0].dst_es = 6
    c = bad(dma_case("bad_dma_count_4097", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].src_num = c.words[0].dst_num = 4097
    c = bad(dma_case("bad_dma_idx_addr_reg", mode=0, sidx=[1, 2, 3], seed=9), "not-implemented")
    c.words[0].sidx_marker = M_ADDR_REG
    # EMBEDDING
    c = bad(emb_case("bad_emb_int32", [1, 2], dt="int32", seed=10))
    c = bad(emb_case("bad_emb_data_counts", [1, 2], seed=10))
    c.words[0].data.counts = [4, 3]
    c = bad(emb_case("bad_emb_index_short", [1, 2], seed=10))
    c.words[0].idx.counts = [1]
    # decode errors and words with no wire layout
    c = bad(emb_case("bad_emb_cce_mult", [1, 2], seed=10))
    c.words[0].op = "MULT"
    w = bytearray(64)
    w[0] = 0xB8
    add(Case("bad_no_wire_layout_0xb8", words=[RawWord(bytes(w))], expect_fault="invalid", choices=["X1"]))
    add(Case("bad_unknown_opcode_0x00", words=[RawWord(bytes(64))], expect_fault="invalid", choices=["X1"]))
    c = bad(dma_case("bad_dma_mode3", mode=0, sidx=[1, 2, 3], seed=9))
    c.words[0].mode = 3
    c = bad(gather_case("bad_gt_miss2", lst, seed=11))
    c.words[1].miss = 2
    c = bad(dma_case("bad_dma_compute5", mode=1, didx=[1, 2, 3], seed=9))
    c.words[0] = RawWord(c.words[0].pack()[:60] + bytes([5]) + c.words[0].pack()[61:])
    # more rejects: index counts > 4096, a free_pool_buffer of 2, a 513-element Pool_Buffer load,
    # an ADDR4 marker 0x60 (decode error), an SBUF offset past the v2 partition (192 KiB)
    c = bad(gather_case("bad_gt_count_4097", lst, seed=13))
    c.words[1].src.counts = [4097, 1, 1, 1]
    c.words[1].src.steps = [1, 1, 1, 1]
    c.words[1].dst.counts = [4097, 1, 1, 1]
    c = bad(gather_case("bad_gt_free2", lst, seed=14))
    c.words[1].free = 2
    c = bad(gather_case("bad_pbl_513", lst, seed=15), "invalid", "X11")
    c.words[0].src.counts = [513, 1, 1, 1]
    c = bad(gather_case("bad_gt_marker_0x60", lst, seed=16))
    c.words[1].dst.marker = 0x60
    # X3: the ADDR4 bits the layout leaves unnamed must be 0 (SBUF 26..28; PSUM 22..24, 26..28)
    c = bad(gather_case("bad_gt_addr4_reserved_sbuf", lst, space=SBUF, seed=19), "invalid", "X3")
    c.words[1].src.raw_or = 1 << 26
    c = bad(gather_case("bad_gt_addr4_reserved_psum", lst, space=PSUM, seed=19), "invalid", "X3")
    c.words[1].dst.raw_or = 1 << 22
    c = bad(gather_case("bad_gt_offset_v2", lst, space=SBUF, seed=17))
    c.words[1].dst.off = 192 * 1024
    # v3 (224 KiB): a start offset that is valid on v3 but whose elements leave the partition
    c = gather_case("bad_gt_v3_elements_leave", lst, gen="v3", space=SBUF, seed=18)
    c.words[1].dst.off = 224 * 1024 - 8
    # IC with the INDIRECT_REG marker: indirect form, but a register address -> not-implemented
    c = bad(ic_case("bad_ic_indirect_reg", base, ch=16, E=2, rows=8, seed=8), "not-implemented")
    c.words[0].idx_marker = 0xA0
    # DMA: a register-marked ADDR8 (not-implemented) and priority_class 5 (invalid)
    c = bad(dma_case("bad_dma_addr8_reg", mode=0, sidx=[1, 2, 3], seed=9), "not-implemented")
    c.words[0].src = (0x80 << 56) | SRC_BASE
    c = bad(dma_case("bad_dma_priority5", mode=0, sidx=[1, 2, 3], seed=9))
    raw = bytearray(c.words[0].pack())
    raw[61] = 5
    c.words[0] = RawWord(bytes(raw))
    c = bad(emb_case("bad_emb_seq_4097", [1, 2], seed=10))
    c.words[0].seq = 4097
    c.words[0].idx.counts = [4097]
    c.words[0].data.counts = [4, 4097]
    # a valid first word followed by an invalid one: the run faults, nothing is written
    c = bad(gather_case("bad_second_word", lst, seed=12))
    g = copy.deepcopy(c.words[1])
    g.in_code = code("float32")
    c.words.append(g)


# ---------------------------------------------------------------------------------------------
# hand-worked checks of the oracle itself
# ---------------------------------------------------------------------------------------------
def hand_checks():
    # 0. X14 integer compute, worked by hand: int32 (2^31 - 1) + 1 wraps to -2^31; (2^31 - 1) * 5 =
    #    10737418235 = 2 * 2^32 + 2147483643; uint32 MAX(0xFFFFFFFB, 3) keeps 0xFFFFFFFB (unsigned)
    #    where int32 MAX(-5, 3) = 3; int8 MIN(200 = -56, 3) = -56, uint8 MIN(200, 3) = 3
    i32 = lambda *v: np.array(v, "<i4").tobytes()  # noqa: E731
    assert int_reduce(i32(2**31 - 1), i32(1), "int32", "ADD") == i32(-(2**31))
    assert int_reduce(i32(2**31 - 1), i32(5), "int32", "MULTIPLY") == i32(2147483643)
    assert int_reduce(i32(-5), i32(3), "uint32", "MAX") == i32(-5)
    assert int_reduce(i32(-5), i32(3), "int32", "MAX") == i32(3)
    assert int_reduce(bytes([200]), bytes([3]), "int8", "MIN") == bytes([200])
    assert int_reduce(bytes([200]), bytes([3]), "uint8", "MIN") == bytes([3])
    # 1. a GATHER word typed byte by byte (contract §1 offsets)
    g = Gather(T(SBUF, 1, 0x10, [1, 2, 3, 4], [5, 6, 7, 8]), T(PSUM, 2, 0x20, [-1, 0, 0, 0], [1, 1, 1, 210]),
               "uint16", "float32", 3, 1, 0xDEADBEEF, 1)
    expect = bytes.fromhex(
        "68000000" "0000000000000000"  # opcode, inst_flags, 2 unnamed, events
        "10000400" "0100020003000400" "0500060007000800"  # src: partition 1 (1 << 18) | offset 0x10
        "05" "0a" "03" "00" "01" "01" "0000" "efbeadde"  # in u16, out fp32, 3 ch, skip, free, imm
        "20000102" "ffff000000000000" "010001000100d200"  # dst: PSUM (1 << 25) | 2 << 15 | 0x20 = 0x02010020
    )
    got = g.pack()
    assert got == expect, (got.hex(), expect.hex())
    # 2. DMA_INDIRECT: flags scatter | is_err | nonuniq | gather_dim 0 = 0b00001101; bound reg en, reg 5
    d = DmaIndirect(1, 0x2000_0000, 1, 3, 16, 0x3000_0000, 1, 3, 16, 0, 0x40, "float32", "float32",
                    bound_reg(1, 5, 0), bound_reg(1, 6, 1), "ADD", 1, 1)
    b = d.pack()
    assert b[0] == 0xBB and b[14] == 128 and b[15] == 0x0D
    assert b[16:24] == bytes.fromhex("0000002000000000") and b[24:28] == bytes.fromhex("01000000")
    assert b[28:32] == bytes.fromhex("03001000") and b[52:56] == bytes.fromhex("40000000")
    assert b[56:62] == bytes.fromhex("0a0a85c60100")
    # 3. a 4-index GATHER worked by hand: PB fp32 [10, 20, 30, 40], mask 3, start 4, count 4
    m = Machine("v2", dict(DEFAULT_OPT))
    m.pool = Pool("float32", 4, 4, 3, np.zeros((128, 16), np.uint8))
    m.pool.data[0] = np.frombuffer(np.array([10, 20, 30, 40], "<f4").tobytes(), np.uint8)
    m.psum[0, 0:16] = np.frombuffer(np.array([6, 4, 3, 9], "<u4").tobytes(), np.uint8)  # hit, hit, miss, miss
    m.psum[0, 16:32] = 0x11
    run_gather(m, Gather(T(PSUM, 0, 0, [1, 1, 1, 1], [4, 1, 1, 1]), T(PSUM, 0, 16, [1, 1, 1, 1], [4, 1, 1, 1]),
                         "uint32", "float32", 1, 0, 0x01020304))
    assert m.psum[0, 16:32].tobytes() == bytes.fromhex("0000f041" "00002041" "04030201" "04030201"), m.psum[0, 16:32]
    # 4. IC by hand: core 0, 16 partitions, list = [2, 0] (column-major: partition 0 elem 0, partition 1 elem 0)
    m = Machine("v2", dict(DEFAULT_OPT))
    m.sbuf[0, 0:2] = [2, 0]
    m.sbuf[1, 0:2] = [0, 0]
    for p in range(16):
        m.sbuf[p, 16:24] = np.arange(8, dtype=np.uint8) + 10 * p
    run_ic(m, IndirectCopy(0, 0, 0, 16, 4, "uint8", 16, 2, 5, T(SBUF, 0, 64, [1, 1, 1, 1], [4, 1, 1, 1])))
    assert m.sbuf[3, 64:68].tolist() == [34, 0, 30, 31]  # row 2 = elems 4,5 -> 4 in, 5 >= 5 zeroed
    # 5. fmax / fmin readings and bf16 RNE
    assert fmaxf(np.float32(-0.0), np.float32(0.0)).tobytes() == np.float32(-0.0).tobytes()
    assert fminf(np.float32(0.0), np.float32(-0.0)).tobytes() == np.float32(0.0).tobytes()
    assert fmaxf(np.float32("nan"), np.float32(2.0)) == 2.0 and fminf(np.float32(3.0), np.float32("nan")) == 3.0
    assert narrow(np.array([1 + 2**-8, 1 + 3 * 2**-9], np.float32), "bfloat16") == bytes.fromhex("803f" "813f")
    # 6. a scatter-add by hand: dst rows [1,1] [2,2] fp32, didx [1, 1], src [0.5,0.5] [0.25,0.25]
    m = Machine("v2", dict(DEFAULT_OPT))
    m.dram = [["s", 0x1000, np.frombuffer(np.array([0.5, 0.5, 0.25, 0.25], "<f4").tobytes(), np.uint8).copy()],
              ["d", 0x2000, np.frombuffer(np.array([1, 1, 2, 2], "<f4").tobytes(), np.uint8).copy()]]
    m.sbuf[0, 0:8] = np.frombuffer(np.array([1, 1], "<u4").tobytes(), np.uint8)
    run_dma(m, DmaIndirect(1, 0x1000, 1, 2, 8, 0x2000, 1, 2, 8, 0, 0, "float32", "float32", 0, 0, "ADD", 0, 1))
    assert np.frombuffer(m.dram[1][2].tobytes(), "<f4").tolist() == [1, 1, 2.75, 2.75]
    # 7. EMBEDDING ADD by hand: rows [1,2] [3,4] (stride 12: 4 pad bytes), indices [1, 5, 1], entries 2
    m = Machine("v2", dict(DEFAULT_OPT))
    tab = np.array([1, 2, 0, 3, 4, 0], "<f4").tobytes()
    m.dram = [["t", 0x100000, np.frombuffer(tab, np.uint8).copy()]]
    m.sbuf[0, 0:12] = np.frombuffer(np.array([1, 5, 1], "<u4").tobytes(), np.uint8)
    m.sbuf[1, 0:24] = np.frombuffer(np.array([0.5, 0.5, 9, 9, 0.25, 1], "<f4").tobytes(), np.uint8)
    run_emb(m, Embedding("float32", "ADD", T(SBUF, 0, 0, [1], [3]), T(SBUF, 1, 0, [1, 2], [2, 3]),
                         T(SBUF, 2, 0, [1], [1]), 0x100000, 2, 12, 3, 2))
    assert np.frombuffer(m.dram[0][2].tobytes(), "<f4").tolist() == [1, 2, 0, 3.75, 5.5, 0]
    # 8. bf16 accumulation rounds after every add: 1 + 2^-8 + 2^-8 = 1 in bf16 steps (not 1 + 2^-7)
    one = narrow(np.array([1.0], np.float32), "bfloat16")
    step = narrow(np.array([2.0**-8], np.float32), "bfloat16")
    acc = widen(one, "bfloat16")
    for _ in range(2):
        acc = widen(narrow(reduce_vals(acc, widen(step, "bfloat16"), "ADD"), "bfloat16"), "bfloat16")
    assert acc.tolist() == [1.0]


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------
def save_npy(path: Path, a: np.ndarray) -> None:
    np.save(path, np.ascontiguousarray(a, dtype=np.uint8), allow_pickle=False)


def machine_from(c: Case) -> Machine:
    m = Machine(c.gen, c.options)
    if c.sbuf is not None:
        m.sbuf[:, : c.sbuf.shape[1]] = c.sbuf
    if c.psum is not None:
        m.psum[:, : c.psum.shape[1]] = c.psum
    m.dram = [[n, b, a.copy()] for n, b, a in c.dram]
    if c.regs:
        m.regs = list(c.regs)
    if c.pool is not None:
        m.pool = copy.deepcopy(c.pool)
    m.given = {SBUF: 0 if c.sbuf is None else c.sbuf.shape[1], PSUM: 0 if c.psum is None else c.psum.shape[1]}
    return m


def write_case(c: Case) -> int:
    d = HERE / c.name
    st = d / "state"
    st.mkdir(parents=True)
    (d / "words.bin").write_bytes(b"".join(w.pack() for w in c.words))
    state = {"gen": c.gen, "options": c.options}
    if c.sbuf is not None:
        save_npy(st / "sbuf.npy", c.sbuf)
        state["sbuf"] = "sbuf.npy"
    if c.psum is not None:
        save_npy(st / "psum.npy", c.psum)
        state["psum"] = "psum.npy"
    if c.dram:
        state["dram"] = [{"name": n, "base": hex(b), "file": f"{n}.npy"} for n, b, _ in c.dram]
        for n, _, a in c.dram:
            save_npy(st / f"{n}.npy", a)
    if c.regs:
        state["registers"] = c.regs
    if c.pool is not None:
        p = c.pool
        state["pool_buffer"] = {"dtype": p.dt, "count": p.count, "start_index": p.start, "mask": p.mask,
                                "file": "pool.npy"}
        save_npy(st / "pool.npy", p.data)
    else:
        state["pool_buffer"] = None
    (st / "STATE.json").write_text(json.dumps(state, indent=1) + "\n")

    viol = []
    for w in c.words:
        if not isinstance(w, RawWord):
            viol += violations(w, c.gen)
    result = None
    if c.expect_fault is not None:
        if c.expect_fault == "invalid" and not any(isinstance(w, RawWord) for w in c.words):
            assert viol or any(getattr(w, "miss", 0) == 2 or getattr(w, "mode", 0) == 3 or
                               getattr(w, "op", "") == "MULT" for w in c.words), c.name
        result = f"fault {c.expect_fault}"
    else:
        assert not viol, (c.name, viol)
        m = machine_from(c)
        try:
            run(m, c.words)
        except Fault as f:
            result = f"fault {f.kind}"
        else:
            result = "ok"
            ex = d / "expected"
            ex.mkdir()
            for what in c.check:
                if what in ("sbuf", "psum"):
                    full = m.sbuf if what == "sbuf" else m.psum
                    width = (c.sbuf if what == "sbuf" else c.psum).shape[1]
                    assert not full[:, width:].any(), (c.name, "write past the image prefix")
                    save_npy(ex / f"{what}.npy", full[:, :width])
                elif what == "pool":
                    save_npy(ex / "pool.npy", m.pool.data)
                else:
                    arr = next(r[2] for r in m.dram if r[0] == what)
                    save_npy(ex / f"{what}.npy", arr)
            if hasattr(c, "hand"):
                hand_case_check(c, m)
        if m.read_fresh:
            c.choices.append("X15")
    lines = [f"choice: {x}" for x in dict.fromkeys(c.choices)] + [result]
    (d / "expect").write_text("\n".join(lines) + "\n")
    return sum(f.stat().st_size for f in d.rglob("*") if f.is_file())


def hand_case_check(c: Case, m: Machine) -> None:
    kind, idx = c.hand
    if kind == "overlap":  # rows 8.. become copies of rows 0..7 repeated (serial propagation)
        rows = idx.view("<f4").reshape(40, 4)
        got = m.dram[0][2].view("<f4").reshape(40, 4)
        want = rows.copy()
        for k in range(24):
            want[k + 8] = want[k]
        assert np.array_equal(got, want) and np.array_equal(got[8:32], np.tile(rows[0:8], (3, 1))), c.name
        return
    if kind == "two_windows":
        data = c.sbuf[:, :2048].copy().view(BF16)  # [128, 1024]
        clipped = np.clip(idx, 0, 1023)
        want = np.take_along_axis(data, clipped, axis=1)
        want[idx >= 1024] = 0  # NKI: clip + zero-fill (== first window IMMEDIATE_WRITE 0)
        got = m.psum[:, 160:240].copy().view(BF16)
        assert want.tobytes() == got.tobytes(), c.name


def main() -> int:
    hand_checks()
    for p in HERE.iterdir():
        if p.is_dir() and p.name.startswith(PREFIXES):
            shutil.rmtree(p)
    make_gather_cases()
    make_ic_cases()
    make_dma_cases()
    make_emb_cases()
    make_multi_cases()
    make_dma_overlap_case()
    make_bad_cases()
    total = 0
    results = {}
    for c in CASES:
        total += write_case(c)
        r = (HERE / c.name / "expect").read_text().splitlines()[-1]
        results[r] = results.get(r, 0) + 1
    print(f"{len(CASES)} cases, {total / 1e6:.2f} MB; results: {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
