"""Registers and dynamic control flow for ``birsim.nki``: ``nisa.register_alloc`` /
``register_move`` / ``register_load`` / ``register_store``, ``nl.fori_loop``,
``nl.while_loop``, ``nl.dynamic_range`` over a register bound, ``nisa.core_barrier``, and the
loop nodes (BIR ``DynamicForLoop``, ``DoWhile``, counted ``Loop``) the tracer nests
instructions in.

Every register lives in one engine's file (``REG_ENGINE``, GpSimd: BIR's ``Pool``): the loops
that read or write registers run on it too, so a kernel's registers are one file. An
instruction on another engine that takes a register as a runtime offset reads it through a
one-element int32 SBUF tile (``TensorSave``, then BIR's memory-held ``scalar_offset``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from . import _tracer as T
from ._tracer import HBM, NkiError, Tensor, ap_json, builder, levels_of

REG_ENGINE = "Pool"
MAX_REGISTERS = 64  # per engine sequencer (AWS register_alloc: 64 x 32-bit)


class VirtualRegister:
    """``nisa.register_alloc()``: a 32-bit register (signed int32) of the traced program. Its
    value exists only when birsim runs the program."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<nki register {self.name}>"

    def json(self) -> Dict[str, Any]:
        return {"kind": "register_access", "dtype": "int32", "regref": self.name}

    def __bool__(self):
        raise NkiError(
            "a register has no truth value while tracing (its value exists only when birsim runs the "
            "program); use nl.while_loop(reg, body) or nl.fori_loop",
        )

    def __index__(self):
        raise NkiError(
            "a register is not a Python integer while tracing; use it as a loop bound (nl.fori_loop, "
            "nl.dynamic_range) or a runtime offset (nl.ds(reg, n), .ap(scalar_offset=reg))",
        )

    __int__ = __index__

    def as_tile(self, call: str) -> Tensor:
        """The register's value in a fresh (1, 1) int32 SBUF tile (``TensorSave``), for a
        memory-held runtime offset of an instruction on any engine."""
        b = builder(call)
        t = b.new_alloc((1, 1), np.dtype(np.int32), T.SBUF, call, name="reg_" + self.name)
        b.emit("TensorSave", call, REG_ENGINE, [self.json()], [ap_json(t, levels_of(t, call=call), call=call)])
        b.mark_written(t)
        return t


def _new_register(call: str, internal: bool = False) -> VirtualRegister:
    """A new register name; ``internal`` (a loop's bound, counter or condition copy) may reuse
    one an earlier loop released."""
    b = builder(call)
    free = b.__dict__.setdefault("free_registers", [])
    if internal and free:
        return free.pop()
    if len(b.registers) >= MAX_REGISTERS:
        raise NkiError(
            f"more than {MAX_REGISTERS} registers (AWS: 64 x 32-bit registers per engine sequencer)", call
        )
    name = f"r{len(b.registers)}"
    r = VirtualRegister(name)
    b.registers[name] = r
    return r


def _imm(v: int, call: str) -> Dict[str, Any]:
    v = int(v)
    if not -(2 ** 31) <= v < 2 ** 32:
        raise NkiError(f"{v} does not fit a 32-bit register", call)
    return {"kind": "imm_value", "dtype": "int32", "value": v}


def _reg_or_int(x: Any, call: str, what: str) -> Any:
    if isinstance(x, VirtualRegister):
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise NkiError(f"{what} must be an integer or a register (nisa.register_alloc), got {type(x).__name__}", call)
    return int(x)


def _need_reg(x: Any, call: str, what: str) -> VirtualRegister:
    if not isinstance(x, VirtualRegister):
        raise NkiError(f"{what} must be a register (nisa.register_alloc), got {type(x).__name__}", call)
    return x


def _move(call: str, dst: VirtualRegister, src: Any) -> None:
    src = _reg_or_int(src, call, "src")
    op = src.json() if isinstance(src, VirtualRegister) else _imm(src, call)
    builder(call).emit("RegisterMove", call, REG_ENGINE, [op], [dst.json()])


def _alu(call: str, op: str, dst: VirtualRegister, a: VirtualRegister, b: Any) -> None:
    bj = b.json() if isinstance(b, VirtualRegister) else _imm(b, call)
    builder(call).emit("RegisterAlu", call, REG_ENGINE, [a.json(), bj], [dst.json()], op=op)


def _scalar_view(t: Any, call: str, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise NkiError(f"{what} must be a tensor, got {type(t).__name__}", call)
    if t.size != 1:
        raise NkiError(f"{what} {t.shape} must hold exactly one element", call)
    if not T.is_int(t.dtype) or t.dtype.itemsize > 4:
        raise NkiError(f"{what} must be an 8-, 16- or 32-bit integer tensor, not {t.dtype}", call)
    return t


# ---------------------------------------------------------------------------------------------
# nki.isa register calls


def register_alloc(x: Optional[int] = None) -> VirtualRegister:
    """A new register; ``x`` an int → ``RegisterMove`` of it (``None``: uninitialised, and
    birsim faults on a read before a write)."""
    call = "register_alloc"
    r = _new_register(call)
    if x is not None:
        _move(call, r, x)
    return r


def register_move(dst, src) -> None:
    """``dst = src`` (an int or a register): ``RegisterMove``."""
    call = "register_move"
    _move(call, _need_reg(dst, call, "dst"), src)


def register_load(dst, src) -> None:
    """``dst = src[0]`` (one int8..uint32 element of SBUF, PSUM or HBM, sign- or zero-extended):
    ``TensorLoad``."""
    call = "register_load"
    r = _need_reg(dst, call, "dst")
    t = _scalar_view(src, call, "src")
    builder(call).emit("TensorLoad", call, REG_ENGINE, [ap_json(t, levels_of(t, call=call), call=call)], [r.json()])


def register_store(dst, src) -> None:
    """``dst[0] = src`` (the register's low bits): ``TensorSave``."""
    call = "register_store"
    t = _scalar_view(dst, call, "dst")
    r = _need_reg(src, call, "src")
    b = builder(call)
    b.emit("TensorSave", call, REG_ENGINE, [r.json()], [ap_json(t, levels_of(t, call=call), call=call)])
    b.mark_written(t)


# ---------------------------------------------------------------------------------------------
# Loop nodes


def open_node(call: str, node: Dict[str, Any]) -> None:
    """Appends a loop node (``blocks`` empty) where the trace is and makes its body current."""
    b = builder(call)
    container = b.nest[-1][1] if b.nest else b.body
    container.append(node)
    b.nest.append((node, node["blocks"], b.block, len(b.insts), set(b.onchip)))
    b.block = {"name": b.unique("body"), "instructions": []}
    node["blocks"].append(b.block)


def close_node(call: str) -> None:
    """Ends the current loop node's body. A tile that existed before the loop and is named in
    the body stays live for the whole loop (the body runs again)."""
    b = builder(call)
    node, _blocks, outer_block, k0, before = b.nest.pop()
    k1 = len(b.insts) - 1
    if k1 >= k0:
        b.spans.append((b.insts[k0], b.insts[k1], set(before)))
        for name in before:
            r = b.onchip.get(name)
            if r is not None and r.last is not None and r.last >= k0:
                r.first = min(r.first, k0)
                r.last = max(r.last, k1)
    container = b.nest[-1][1] if b.nest else b.body
    b.block = {"name": b.unique("after"), "instructions": []}
    container.append(b.block)


def _release(call: str, regs) -> None:
    builder(call).__dict__.setdefault("free_registers", []).extend(regs)


def _dyn_for(call: str, lower: Any, upper: Any, step: Any):
    """Opens a ``DynamicForLoop`` running ``for i in range(lower, upper, step)`` and returns the
    register holding ``i`` in the body and the loop's own registers (free once it is closed)."""
    if not isinstance(step, (int, np.integer)) or isinstance(step, bool) or int(step) <= 0:
        raise NkiError(f"step must be a compile-time positive integer, got {step!r}", call)
    lower = _reg_or_int(lower, call, "lower")
    upper = _reg_or_int(upper, call, "upper")
    b = builder(call)
    ub = _new_register(call, True)
    if isinstance(lower, VirtualRegister):
        # ub = upper - lower counts from 0; the body's i = k + lower (lower copied first: the
        # body may change the register)
        lo = _new_register(call, True)
        _move(call, lo, lower)
        if isinstance(upper, VirtualRegister):
            _alu(call, "subtract", ub, upper, lo)
        else:
            _move(call, ub, upper)
            _alu(call, "subtract", ub, ub, lo)
        lb = 0
    else:
        lo = None
        _move(call, ub, upper)
        lb = lower
    k = _new_register(call, True)
    node = {
        "opcode": "DynamicForLoop",
        "name": "",
        "engine": REG_ENGINE,
        "LoopAxis": {"name": b.unique("i"), "lb": lb, "stride": int(step)},
        "ub_const": 0,
        "ub_coef": 1,
        "ins": [ub.json()],
        "outs": [k.json()],
        "blocks": [],
    }
    site = T.source_site()
    node["name"] = f"{call}@{site[0].rsplit('/', 1)[-1]}:{site[1]}#{b.counter + 1}"
    b.counter += 1
    open_node(call, node)
    if lo is None:
        return k, [ub, k]
    i = _new_register(call, True)
    _alu(call, "add", i, k, lo)
    return i, [ub, lo, k, i]


def fori_loop(lower, upper, body_fun: Callable[[VirtualRegister], Any], step=1) -> None:
    """``for i in range(lower, upper, step): body_fun(i)`` with ``upper`` (and ``lower``) ints or
    registers read once on entry: a BIR ``DynamicForLoop`` whose body is ``body_fun`` traced once,
    ``i`` a register."""
    call = "fori_loop"
    i, regs = _dyn_for(call, lower, upper, step)
    try:
        body_fun(i)
    finally:
        close_node(call)
    _release(call, regs)


def dynamic_range(start, stop=None, step=1, **hints):
    """``nl.dynamic_range``: with a register bound, one pass of a Python ``for`` traces the body
    of a ``DynamicForLoop`` and yields the induction register; with int bounds, a Python range
    (the loop unrolls)."""
    if stop is None:
        start, stop = 0, start
    if not isinstance(start, VirtualRegister) and not isinstance(stop, VirtualRegister):
        return range(int(start), int(stop), int(step))
    return _dynamic_gen(start, stop, step)


def _dynamic_gen(start, stop, step):
    call = "dynamic_range"
    i, regs = _dyn_for(call, start, stop, step)
    try:
        yield i
    finally:
        close_node(call)
    _release(call, regs)


def while_loop(init, body_fun: Callable[[VirtualRegister], Any]) -> None:
    """``r = init; while r != 0: r = body_fun(r)``, tested before each pass: a BIR ``DoWhile`` on
    a copy ``c`` of ``init`` whose body starts with ``CompareAndBranch c == 0`` to an empty last
    block (so a zero ``init`` runs no body instruction and leaves the loop) and ends with
    ``c = `` the register ``body_fun`` returned."""
    call = "while_loop"
    init = _need_reg(init, call, "init")
    b = builder(call)
    c = _new_register(call, True)
    _move(call, c, init)
    site = T.source_site()
    b.counter += 1
    node = {
        "opcode": "DoWhile",
        "name": f"{call}@{site[0].rsplit('/', 1)[-1]}:{site[1]}#{b.counter}",
        "engine": REG_ENGINE,
        "ins": [c.json()],
        "blocks": [],
    }
    open_node(call, node)
    end = b.unique("while_end")
    b.emit("CompareAndBranch", call, REG_ENGINE, [c.json(), _imm(0, call)], [], comp_op="IS_EQIMM", on_true=end)
    # the body in its own block, after the test
    b.block = {"name": b.unique("while_body"), "instructions": []}
    node["blocks"].append(b.block)
    try:
        ret = body_fun(c)
        if not isinstance(ret, VirtualRegister):
            raise NkiError(f"the body returns {type(ret).__name__}; it must return the next condition register", call)
        if ret is not c:
            _move(call, c, ret)
    finally:
        # the branch target: the last block of the DoWhile's body (empty)
        b.block = {"name": end, "instructions": []}
        node["blocks"].append(b.block)
        close_node(call)
    _release(call, [c])


# ---------------------------------------------------------------------------------------------
# Synchronisation and versions


def core_barrier(*args, **kw) -> None:
    """``nisa.core_barrier(data, cores, engine)``: BIR ``CoreBarrier``, synchronisation only (one
    NeuronCore is simulated; birsim runs it as a no-op)."""
    call = "core_barrier"
    names = ("data", "cores", "engine", "name")
    a = dict(zip(names, args))
    for k, v in kw.items():
        if k not in names:
            raise NkiError(f"unexpected argument {k!r}", call)
        a[k] = v
    b = builder(call)
    if b.arch == "gen2":
        raise NkiError("core_barrier needs NeuronCore-v3 or newer (AWS core_barrier)", call)
    data = a.get("data")
    if not isinstance(data, Tensor) or data.buffer != HBM:
        raise NkiError("data must be a tensor in shared HBM", call)
    cores = tuple(a.get("cores", ()))
    if cores != (0, 1):
        raise NkiError(f"cores={cores!r}: only (0, 1) is supported (AWS core_barrier)", call)
    from .isa import _engine_name, engine

    eng = _engine_name(a.get("engine"), "Pool", {engine.gpsimd: "Pool", engine.vector: "DVE",
                                                   engine.scalar: "Activation", engine.tensor: "PE",
                                                   engine.sync: "SP"}, call)
    b.emit("CoreBarrier", call, eng, [], [])


def get_nc_sub_version() -> int:
    """The silicon revision within the generation: 0, the first (AWS: ``0`` is the default)."""
    return 0
