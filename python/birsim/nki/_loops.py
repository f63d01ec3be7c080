"""``loops="bir"``: ``nl.affine_range`` / ``nl.sequential_range`` loops as BIR counted ``Loop``
nodes instead of unrolled copies of their body.

The kernel's Python loop still runs every iteration (the loop variable is a Python int, so any
kernel code works); each iteration's instructions are recorded. When the loop ends, the
iterations are compared: if they are the same instructions with the same fields, the same
operands (allocations the iteration made itself being renamed in order) and access-pattern
offsets that are affine in the iteration number (``offset₀ + k·d``), they are folded into one
``Loop`` of ``n`` passes over the first iteration's instructions:

- a ``(1, 1)`` int32 SBUF counter is set to 0 (``Memset``) before the loop and incremented at the
  end of the body (``TensorScalar add 1``, exact in int32);
- every operand whose offset moves by ``d ≠ 0`` per iteration takes the counter as a memory-held
  runtime offset (``scalar_offset``, a unit level ``[d, 1]``, ``indirect_dim_max_index = n``).
  birsim's counted ``Loop`` variable does not move access patterns (fidelity S11), hence the
  counter.

If iteration 0 differs from the others (a matmul that overwrites PSUM there and accumulates later,
an identity matrix built on first use) it stays unrolled and iterations 1..n-1 are folded. A loop
whose iterations differ otherwise (non-affine offsets, an operand that already has a runtime
offset, a nested dynamic loop, a register made in the body, access patterns already 5 levels
deep) stays unrolled. The same kernel gives bit-identical outputs either way.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _tracer as T
from ._tracer import NkiError, builder

MODES = ("unroll", "bir")


def loop_mode(loops: Optional[str]) -> str:
    """``loops`` argument, else ``BIRSIM_NKI_LOOPS``, else ``unroll``."""
    v = loops if loops is not None else os.environ.get("BIRSIM_NKI_LOOPS", "") or "unroll"
    v = str(v).strip().lower()
    if v not in MODES:
        raise NkiError(f"loops={v!r}: expected 'unroll' or 'bir'", "simulate", site=("", 0))
    return v


def bir_range(call: str, r: range):
    """The loop's iterations, recorded and folded when the loop ends (see the module doc)."""
    b = builder(call)
    if len(r) < 2:
        yield from r
        return
    site = T.source_site()
    marks: List[Tuple[Any, int, int, int, int]] = []

    def mark():
        return (b.block, len(b.block["instructions"]), len(b.insts), len(b.records), len(b.nest))

    for v in r:
        marks.append(mark())
        yield v
    marks.append(mark())
    if any(m[0] is not marks[0][0] or m[4] != marks[0][4] for m in marks):
        return  # the body opened a block or loop node of its own: stays unrolled
    n = len(r)
    # all iterations; else without the first (it differs: PSUM overwrite, an identity built),
    # without the last (a ragged last tile), without both
    for f, e in ((0, n), (1, n), (0, n - 1), (1, n - 1)):
        if e - f >= 2 and fold(b, call, site, marks, f, e, n):
            return


def _canon(node: Any, local: Dict[str, str], offsets: List[Tuple[Any, ...]], ctx: Any, container: Any = None) -> Any:
    """The node with its own allocations renamed, offsets and names taken out. The AP dicts go
    to ``offsets`` in walk order as ``(ap, inst, list)``: ``inst`` the instruction whose operand
    it is (None for an AP inside another, a scalar_offset) and ``list`` the instruction list
    holding that instruction."""
    if isinstance(node, dict):
        if node.get("kind") == "physical_ap":
            offsets.append((node, ctx, container))
            out = {}
            for k, v in node.items():
                if k == "offset":
                    continue
                if k == "memref":
                    out[k] = local.get(v, v)
                else:
                    out[k] = _canon(v, local, offsets, None)
            return out
        out = {}
        is_inst = "opcode" in node and "blocks" not in node
        for k, v in node.items():
            if k == "name":
                continue
            if k in ("ins", "outs") and is_inst:
                out[k] = [_canon(x, local, offsets, node, container) for x in v]
            elif k == "instructions":
                out[k] = [_canon(x, local, offsets, None, v) for x in v]
            else:
                out[k] = _canon(v, local, offsets, None, container)
        return out
    if isinstance(node, list):
        return [_canon(x, local, offsets, None, container) for x in node]
    return node


def _local_names(b: T.Builder, r0: int, r1: int) -> List[str]:
    """The allocations an iteration made for itself (not the blocks of a blocked tensor made
    before the loop: those are the tensor's, whichever iteration first indexed them)."""
    return [j["name"] for a, j in b.records[r0:r1] if a is None or a.origin != "block"]


def fold(b: T.Builder, call: str, site, marks, f: int, e: int, n: int) -> bool:
    """Folds iterations f..e-1 (marks[k] .. marks[k+1]) of n into a Loop, if they match."""
    m = e - f
    if m < 2:
        return False
    blk = marks[0][0]["instructions"]
    canon = []
    offs: List[List[Tuple[Dict[str, Any], bool]]] = []
    for k in range(f, e):
        p0, p1 = marks[k][1], marks[k + 1][1]
        if p1 == p0:
            return False
        names = _local_names(b, marks[k][3], marks[k + 1][3])
        local = {nm: f"#{i}" for i, nm in enumerate(names)}
        o: List[Tuple[Any, ...]] = []
        seg = blk[p0:p1]
        canon.append([_canon(x, local, o, None, blk) for x in seg])
        offs.append(o)
    if any(c != canon[0] for c in canon[1:]) or any(len(o) != len(offs[0]) for o in offs):
        return False
    moves: List[Tuple[Dict[str, Any], int]] = []
    derived: List[Tuple[Dict[str, Any], int, Dict[str, Any], List[Any]]] = []
    for p, (ap0, inst, container) in enumerate(offs[0]):
        o0 = int(ap0.get("offset", 0))
        d = int(offs[1][p][0].get("offset", 0)) - o0
        for k in range(m):
            if int(offs[k][p][0].get("offset", 0)) != o0 + k * d:
                return False
        if d == 0:
            continue
        if inst is None:
            return False
        if "scalar_offset" in ap0:
            # moved by an inner folded loop's counter already: the index becomes
            # inner + q · this loop's counter (q = d / the inner step)
            so = ap0["scalar_offset"]
            level = {"W": 0, "Z": 1, "Y": 2, "X": 3}[ap0["indirect_dim"]]
            step = ap0["ap"][level][0]
            if so.get("memref") not in b.loop_counters or step == 0:
                return False
            derived.append((ap0, level, step, d, inst, container))
        else:
            if "indirect_dim" in ap0 or len(ap0["ap"]) >= 5:
                return False
            moves.append((ap0, d))
    if e < n:
        # the iterations left after the loop must not name what the folded ones made
        made = set(_local_names(b, marks[f + 1][3], marks[e][3]))
        for inst in b.insts[marks[e][2]:marks[n][2]]:
            for o in T.operand_refs(inst):
                if o.get("memref") in made:
                    return False
    # fold: the counter, the Loop node in place of iterations f..e-1
    counter = b.new_alloc((1, 1), np.dtype(np.int32), T.SBUF, call, name="loop_counter")
    b.loop_counters.add(counter._alloc.name)
    cap = {"kind": "physical_ap", "memref": counter._alloc.name, "dtype": "int32", "offset": 0,
           "ap": [[1, 1], [1, 1]]}
    where = f"{os.path.basename(site[0])}:{site[1]}"
    b.counter += 1
    zero = {"opcode": "Memset", "name": f"{call}_counter@{where}#{b.counter}", "engine": "DVE", "ins": [],
            "outs": [dict(cap)], "mode": "Const", "constant": 0}
    b.counter += 1
    inc = {"opcode": "TensorScalar", "name": f"{call}_next@{where}#{b.counter}", "engine": "DVE",
           "op0": "add", "const0": 1.0, "ins": [dict(cap)], "outs": [dict(cap)]}
    for ap, d in moves:
        at = 1 if ap["memref"] in b.onchip else 0
        ap["ap"].insert(at, [d, 1])
        ap["indirect_dim"] = "WZYX"[at]
        ap["indirect_dim_max_index"] = m
        ap["scalar_offset"] = dict(cap)
    blk_extra = flat_extra = 0
    for ap, level, step, d, inst, container in derived:
        # the step becomes g = gcd(step, d) and the index inner · step/g + counter · d/g, worked
        # out just before the instruction (int32, exact)
        g = math.gcd(step, d)
        a, q = step // g, d // g
        idx = {"kind": "physical_ap", "dtype": "int32", "offset": 0, "ap": [[1, 1], [1, 1]]}
        y = b.new_alloc((1, 1), np.dtype(np.int32), T.SBUF, call, name="loop_index")
        b.loop_counters.add(y._alloc.name)
        yap = dict(idx, memref=y._alloc.name)
        new = []
        b.counter += 1
        new.append({"opcode": "TensorScalar", "name": f"{call}_index@{where}#{b.counter}", "engine": "DVE",
                    "op0": "mult", "const0": float(q), "ins": [dict(cap)], "outs": [dict(yap)]})
        inner = dict(ap["scalar_offset"])
        if a != 1:
            z = b.new_alloc((1, 1), np.dtype(np.int32), T.SBUF, call, name="loop_index")
            zap = dict(idx, memref=z._alloc.name)
            b.counter += 1
            new.append({"opcode": "TensorScalar", "name": f"{call}_index@{where}#{b.counter}", "engine": "DVE",
                        "op0": "mult", "const0": float(a), "ins": [inner], "outs": [dict(zap)]})
            inner = dict(zap)
        b.counter += 1
        new.append({"opcode": "TensorTensor", "name": f"{call}_index@{where}#{b.counter}", "engine": "DVE",
                    "op": "add", "ins": [dict(yap), inner], "outs": [dict(yap)]})
        at = next(i for i, x in enumerate(container) if x is inst)
        container[at:at] = new
        if container is blk:
            blk_extra += len(new)
        k = next(i for i in range(marks[f][2], len(b.insts)) if b.insts[i] is inst)
        b.insts[k:k] = new
        flat_extra += len(new)
        ap["ap"][level][0] = g
        ap["scalar_offset"] = dict(yap)
        ap["indirect_dim_max_index"] = (int(ap["indirect_dim_max_index"]) - 1) * a + q * (m - 1) + 1
    p0, p1, pn = marks[f][1], marks[f + 1][1] + blk_extra, marks[e][1] + blk_extra
    body = blk[p0:p1] + [inc]
    b.counter += 1
    node = {"opcode": "Loop", "name": f"{call}@{where}#{b.counter}",
            "LoopAxis": {"name": b.unique("i"), "lb": 0, "ub": m, "stride": 1},
            "blocks": [{"name": b.unique("loop_body"), "instructions": body}]}
    blk[p0:pn] = [zero, node]
    q0, q1, qn = marks[f][2], marks[f + 1][2] + flat_extra, marks[e][2] + flat_extra
    flat = b.insts[q0:q1]
    b.insts[q0:qn] = [zero] + flat + [inc]
    # the other iterations' allocations go
    gone = set(_local_names(b, marks[f + 1][3], marks[e][3]))
    b.records[marks[f + 1][3]:marks[e][3]] = []
    for nm in gone:
        b.onchip.pop(nm, None)
    b.folded_away |= gone
    before = {j["name"] for _a, j in b.records[:marks[f][3]]} | {counter._alloc.name}
    b.spans.append((zero, inc, before))
    relive(b)
    return True


def relive(b: T.Builder) -> None:
    """Every on-chip tile's live range again from the instruction list, then widened over each
    loop whose body names a tile that existed before it (the body runs again)."""
    for r in b.onchip.values():
        r.first = r.last = None
    index = {}
    for k, inst in enumerate(b.insts):
        index[id(inst)] = k
        for o in T.operand_refs(inst):
            r = b.onchip.get(o.get("memref"))
            if r is not None:
                if r.first is None:
                    r.first = k
                r.last = k
    for first, last, before in b.spans:
        k0, k1 = index.get(id(first)), index.get(id(last))
        if k0 is None or k1 is None:
            continue
        for name in before:
            r = b.onchip.get(name)
            if r is not None and r.last is not None and r.last >= k0 and r.first <= k1:
                r.first = min(r.first, k0)
                r.last = max(r.last, k1)
