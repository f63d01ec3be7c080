#!/usr/bin/env python3
"""Second, byte-level check of the generated `isa` cases (run after make_cases.py).

make_cases.py models each word from the Python values it packs. This script instead DECODES every
words.bin from its bytes at the contract's offsets (isa-decisions.md §0-§1), loads state/ as a
runner would, recomputes each `ok` case with separate (mostly vectorised NumPy) code and compares
with expected/. It catches a packing offset that disagrees with the model, a wrong expected file,
and state files that do not load. Fault cases are only checked for having no expected/ dir.

    /work/main/.venv/bin/python conformance/isa/check_cases.py
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
NP = {0x3: np.uint8, 0x5: np.uint16, 0x6: ml_dtypes.bfloat16, 0x7: np.float16, 0x8: np.int32, 0x9: np.uint32,
      0xA: np.float32, 0x2: np.int8, 0x4: np.int16, 0xC: np.int64, 0x1: np.uint64}
NAME = {"float32": 0xA, "bfloat16": 0x6, "float16": 0x7, "int32": 0x8, "uint8": 0x3}
SB = {"v2": 192 << 10, "v3": 224 << 10, "v4": 256 << 10, "v5": 256 << 10}


def a4(v):
    # X3: space bit 25; partition at bit 18 (SBUF) / 15 (PSUM); offset below; reserved bits 0
    psum = (v >> 25) & 1
    shift = 15 if psum else 18
    assert v & (0x1DC00000 if psum else 0x1C000000) == 0, hex(v)
    return (v >> shift) & 127, psum, v & ((1 << shift) - 1)


def tensor(w, at, n):
    addr = struct.unpack_from("<I", w, at)[0]
    steps = struct.unpack_from(f"<{n}h", w, at + 4)
    counts = struct.unpack_from(f"<{n}H", w, at + 4 + 2 * n)
    grids = np.meshgrid(*[np.arange(c) for c in counts], indexing="ij")  # dim 0 = X
    offs = sum(s * g for s, g in zip(steps, grids))
    # element k with X fastest: transpose so that dim 0 varies fastest in C order
    offs = np.transpose(offs, list(range(n))[::-1]).reshape(-1)
    return a4(addr), offs


class St:
    def __init__(self, d: Path):
        s = json.loads((d / "state" / "STATE.json").read_text())
        self.opt = s["options"]
        self.mem = [np.zeros((128, SB[s["gen"]]), np.uint8), np.zeros((128, 16384), np.uint8)]
        self.width = {}
        for i, k in enumerate(("sbuf", "psum")):
            if s.get(k):
                a = np.load(d / "state" / s[k])
                self.mem[i][:, : a.shape[1]] = a
                self.width[k] = a.shape[1]
        self.dram = {r["name"]: [int(r["base"], 16), np.load(d / "state" / r["file"]).copy()] for r in s.get("dram") or []}
        self.regs = s.get("registers") or [0] * 64
        self.pool = None
        if s.get("pool_buffer"):
            p = s["pool_buffer"]
            self.pool = [NAME[p["dtype"]], p["count"], p["start_index"], p["mask"], np.load(d / "state" / p["file"])]

    def dram_at(self, addr, n):
        for base, a in self.dram.values():
            if base <= addr and addr + n <= base + len(a):
                return a, addr - base
        raise LookupError(hex(addr))


def gather_bytes(mem, part, off, offs, es):
    """[len(offs), es] bytes of one partition."""
    idx = off + es * offs[:, None] + np.arange(es)[None, :]
    return mem[part][idx]


def do_pbl(st, w):
    (p, sp, off), offs = tensor(w, 12, 4)
    dt, ch = w[32], w[34]
    mask, start = struct.unpack_from("<HxxI", w, 36)
    es = np.dtype(NP[dt]).itemsize
    data = np.zeros((128, len(offs) * es), np.uint8)
    for c in range(ch):
        data[c] = gather_bytes(st.mem[sp], p + c, off, offs, es).reshape(-1)
    st.pool = [dt, len(offs), start, mask, data]


def do_gather(st, w):
    (ps, ss, so), soffs = tensor(w, 12, 4)
    (pd, sd, do), doffs = tensor(w, 44, 4)
    idt, odt, ch, miss, free = w[32], w[33], w[34], w[36], w[37]
    imm = struct.unpack_from("<I", w, 40)[0]
    dt, count, start, mask, data = st.pool
    assert dt == odt
    ie, oe = np.dtype(NP[idt]).itemsize, np.dtype(NP[odt]).itemsize
    fill = np.frombuffer((0 if st.opt["profile"] == "nki" else imm).to_bytes(4, "little")[:oe], np.uint8)
    for c in range(ch):
        ix = gather_bytes(st.mem[ss], ps + c, so, soffs, ie).copy().view(NP[idt]).reshape(-1).astype(np.int64)
        hit = ((ix & ~mask & 0xFFFFFFFF) == start) & ((ix & mask) < count)
        rows = data[c].reshape(count, oe)[np.where(hit, ix & mask, 0)]
        new = np.where(hit[:, None], rows, fill[None, :])
        write = hit | (miss == 0)  # SKIP_WRITE misses write nothing (a later k may share an element)
        tgt = do + oe * doffs[:, None] + np.arange(oe)[None, :]
        st.mem[sd][pd + c][tgt[write]] = new[write]  # repeated targets: NumPy keeps the last (k order)
    if free:
        st.pool = None


def do_ic(st, w):
    ia, da, ne = struct.unpack_from("<IIH", w, 12)
    (pi, _, io), (pdt, _, dof) = a4(ia), a4(da)
    dt, ch, E = w[32], w[34], w[35]
    sbs = struct.unpack_from("<H", w, 38)[0]
    (pt, st_, to), doffs = tensor(w, 44, 4)
    es = np.dtype(NP[dt]).itemsize
    n = ne // E
    nki = st.opt["profile"] == "nki"
    pol = "zero-lanes" if nki else st.opt["ic_oob"]
    m = -(-n // 16)
    for b in range(ch // 16):
        ind = np.stack([st.mem[0][pi + 16 * b + t, io : io + 2 * m].view("<u2") for t in range(16)])
        lst = ind.flatten(order="F")[:n].astype(np.int64)
        el = (lst if nki else lst * E)[:, None] + np.arange(E)[None, :]  # [n, E] element offsets
        inb = el < sbs
        assert not (pol == "fault" and not inb.all())
        for t in range(16):
            src = st.mem[0][pdt + 16 * b + t]
            vals = src[dof + es * np.where(inb, el, 0)[..., None] + np.arange(es)]  # [n, E, es]
            vals = np.where(inb[..., None], vals, 0)
            tgt = to + es * doffs.reshape(n, E)[..., None] + np.arange(es)
            keep = inb.all(axis=1) if pol == "skip-row" else np.ones(n, bool)
            st.mem[st_][pt + 16 * b + t][tgt[keep]] = vals[keep]


def fmax(d, s, op):
    pick = np.maximum(d, s) if op == 3 else np.minimum(d, s)
    pick = np.where(d == s, d, pick)
    pick = np.where(np.isnan(d), s, pick)
    return np.where(np.isnan(s), d, pick)


def do_dma(st, w):
    fl = w[15]
    mode, err, nu = fl & 3, (fl >> 2) & 1, (fl >> 3) & 1
    sa, sstep, sn, ses = struct.unpack_from("<QiHH", w, 16)
    da, dstep, dn, des = struct.unpack_from("<QiHH", w, 32)
    si, di = struct.unpack_from("<II", w, 48)
    idt, odt, sbr, dbr, op = w[56:61]
    g, s = mode != 1, mode != 0
    n = sn if g else dn
    sidx = st.mem[0][0, a4(si)[2] :].view("<u4")[:n] if g else None
    didx = st.mem[0][0, a4(di)[2] :].view("<u4")[:n] if s else None
    rule = st.opt["bound_rule"]
    ok = np.ones(n, bool)
    for lst, r in ((sidx, sbr), (didx, dbr)):
        if lst is not None and r >> 7 and (rule == "seed" or err or not (r >> 6) & 1):
            bad = lst >= st.regs[r & 63]
            assert not (bad.any() and err and not (r >> 6) & 1)
            ok &= ~bad
    for k in np.nonzero(ok)[0]:
        sarr, so = st.dram_at(sa + (int(sidx[k]) * ses if g else k * sstep * ses), ses)
        darr, do = st.dram_at(da + (int(didx[k]) * des if s else k * dstep * des), des)
        sv = sarr[so : so + ses].copy().view(NP[idt]).astype(np.float32)
        if op == 0:
            out = sarr[so : so + ses].copy() if idt == odt else sv.astype(NP[odt]).view(np.uint8)
        elif np.issubdtype(NP[odt], np.integer):
            # X14: integer compute, vectorised in NumPy's own integer types (their +, * wrap
            # modulo 2^bits; maximum / minimum compare as the dtype reads: signed or unsigned)
            assert idt == odt
            dv = darr[do : do + des].copy().view(NP[odt])
            si_ = sarr[so : so + ses].copy().view(NP[idt])
            with np.errstate(over="ignore"):
                r_ = {1: np.add, 2: np.multiply, 3: np.maximum, 4: np.minimum}[op](dv, si_)
            out = r_.astype(NP[odt]).view(np.uint8)
        else:
            dv = darr[do : do + des].copy().view(NP[odt]).astype(np.float32)
            r_ = {1: lambda: dv + sv, 2: lambda: dv * sv}.get(op, lambda: fmax(dv, sv, op))()
            out = r_.astype(np.float32).astype(NP[odt]).view(np.uint8)
        darr[do : do + des] = out


def do_emb(st, w):
    dt, op = w[12], w[13]
    (pi, si_, io), ioffs = tensor(w, 16, 1)
    (pd, sd, do), doffs = tensor(w, 24, 2)
    base, E, slo, seq, ent, shi = struct.unpack_from("<IHHIIH", w, 44)
    stride = slo | (shi << 16)
    es = np.dtype(NP[dt]).itemsize
    idx = gather_bytes(st.mem[si_], pi, io, ioffs[:seq], 4).copy().view("<u4").reshape(-1)
    data = gather_bytes(st.mem[sd], pd, do, doffs, es).copy().view(NP[dt]).reshape(seq, E).astype(np.float32)
    for i in range(seq):
        if idx[i] >= ent:
            continue
        arr, o = st.dram_at(base + int(idx[i]) * stride, E * es)
        cur = arr[o : o + E * es].copy().view(NP[dt]).astype(np.float32)
        r_ = cur + data[i] if op == 0 else fmax(cur, data[i], 3 if op == 2 else 4)
        arr[o : o + E * es] = r_.astype(np.float32).astype(NP[dt]).view(np.uint8)


RUN = {0x67: do_pbl, 0x68: do_gather, 0xE7: do_ic, 0xBB: do_dma, 0xCA: do_emb, 0x79: do_emb}


def main() -> int:
    checked, faults, bad = 0, 0, []
    for d in sorted(p for p in HERE.iterdir() if p.is_dir()):
        res = (d / "expect").read_text().split("\n")[-2]
        if res != "ok":
            faults += 1
            if (d / "expected").exists():
                bad.append(f"{d.name}: fault case with expected/")
            continue
        st = St(d)
        raw = (d / "words.bin").read_bytes()
        try:
            assert len(raw) % 64 == 0
            for i in range(0, len(raw), 64):
                w = raw[i : i + 64]
                RUN[w[0]](st, w)
        except (AssertionError, LookupError, IndexError, KeyError) as e:
            bad.append(f"{d.name}: re-run failed ({type(e).__name__} {e})")
            continue
        for f in sorted((d / "expected").iterdir()):
            got = np.load(f)
            key = f.stem
            if key in ("sbuf", "psum"):
                mine = st.mem[0 if key == "sbuf" else 1][:, : got.shape[1]]
                if got.shape[1] != st.width[key]:
                    bad.append(f"{d.name}: {key} width")
            elif key == "pool":
                mine = st.pool[4]
            else:
                mine = st.dram[key][1]
            if mine.shape != got.shape or not np.array_equal(mine, got):
                bad.append(f"{d.name}: {f.name} differs")
        checked += 1
    print(f"{checked} ok cases re-computed from their bytes, {faults} fault cases; {len(bad)} problems")
    for b in bad:
        print("  ", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
