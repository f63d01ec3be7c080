"""``nki.isa`` for birsim: each call appends the BIR instruction(s) of one NKI ISA operation.

Both API generations are accepted: the current one, where the output tile comes first
(``nisa.tensor_tensor(dst=c, data1=a, data2=b, op=nl.add)``), and the older ``neuronxcc.nki``
one, where the call returns a new tile (``c = nisa.tensor_tensor(a, b, op=np.add)``). The
mapping to BIR opcodes and fields is ``docs/nki.md``. A call birsim cannot express raises
``NkiError`` naming the call and the kernel line.
"""

from __future__ import annotations

import enum
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _tracer as T
from ._tracer import HBM, PSUM, SBUF, NkiError, Tensor, ap_json, builder, imm, joint_levels, levels_of
from . import _gather

# ---------------------------------------------------------------------------------------------
# Enums (AWS names and values)


class engine(enum.Enum):
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6


class reduce_cmd(enum.Enum):
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.Enum):
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.Enum):
    error = 0
    skip = 1


class matmul_perf_mode(enum.Enum):
    none = "none"
    double_row = "double_row"


class nc_version(enum.Enum):
    gen2 = 2
    gen3 = 3
    gen4 = 4


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


def get_nc_version() -> nc_version:
    """The traced generation (``NEURON_PLATFORM_TARGET_OVERRIDE``; gen3 when unset)."""
    b = getattr(T._current, "builder", None)
    arch = b.arch if b is not None else T.target_arch()
    return nc_version[arch]


# ---------------------------------------------------------------------------------------------
# Operator tables

_ALU_NAMES = {
    "add": "add",
    "subtract": "subtract",
    "multiply": "mult",
    "mult": "mult",
    "divide": "divide",
    "true_divide": "divide",
    "maximum": "max",
    "max": "max",
    "minimum": "min",
    "min": "min",
    "equal": "is_equal",
    "not_equal": "not_equal",
    "greater": "is_gt",
    "greater_equal": "is_ge",
    "less": "is_lt",
    "less_equal": "is_le",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "invert": "bitwise_not",
    "left_shift": "logical_shift_left",
    "right_shift": "logical_shift_right",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "power": "pow",
    "abs_max": "abs_max",
    "abs_min": "abs_min",
    "abs": "abs",
    "absolute": "abs",
    "rsqrt": "rsqrt",
    "bypass": "bypass",
    "average": "average",
    "mean": "average",
    "sum": "add",
}
_BITVEC = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_shift_left", "logical_shift_right"}

_ACT_NAMES = {
    "exp": "Exp",
    "log": "Ln",
    "tanh": "Tanh",
    "sigmoid": "Sigmoid",
    "relu": "Relu",
    "rsqrt": "Rsqrt",
    "sqrt": "Sqrt",
    "square": "Square",
    "gelu": "Gelu",
    "gelu_apprx_tanh": "Gelu_apprx_tanh",
    "gelu_apprx_sigmoid": "Gelu_apprx_sigmoid",
    "gelu_dx": "Derivative_Gelu",
    "gelu_apprx_sigmoid_dx": "Derivative_Gelu_apprx_sigmoid",
    "silu": "Silu",
    "silu_dx": "Derivative_silu",
    "softplus": "Softplus",
    "mish": "Mish",
    "erf": "Erf",
    "erf_dx": "Derivative_Erf",
    "sin": "Sin",
    "arctan": "Arctan",
    "sign": "Sign",
    "abs": "Abs",
    "absolute": "Abs",
    "reciprocal": "Reciprocal",
    "copy": "Copy",
    "identity": "Identity",
    "prelu": "Prelu",
    "lrelu": "Lrelu",
}


def _op_name(op: Any) -> Optional[str]:
    if isinstance(op, str):
        return op
    name = getattr(op, "_nki_name", None) or getattr(op, "__name__", None)
    return name


def alu_op(op: Any, call: str, what: str = "op") -> str:
    """The BIR AluOp for an NKI operator (``nl.add``, ``np.add``, ``'add'``...)."""
    if op is None:
        return "bypass"
    name = _op_name(op)
    if name in _ALU_NAMES:
        return _ALU_NAMES[name]
    raise NkiError(f"{what}={op!r} is not an ALU operator birsim runs", call)


def act_func(op: Any, call: str) -> str:
    name = _op_name(op)
    if name in _ACT_NAMES:
        return _ACT_NAMES[name]
    raise NkiError(f"op={op!r} is not an activation function birsim runs", call)


# ---------------------------------------------------------------------------------------------
# Argument binding (both API generations)


def _bind(call: str, args, kw, new: Sequence[str], legacy: Sequence[str], defaults: Dict[str, Any]):
    """Binds a call to the current signature (``dst`` first) or, when that does not fit, the
    older returning one. Returns ``(arguments, legacy?)``."""

    def attempt(params):
        if len(args) > len(params):
            return None
        got = dict(zip(params, args))
        for k, v in kw.items():
            if k in got:
                raise NkiError(f"argument {k!r} given twice", call)
            got[k] = v
        for p in params:
            if p not in got:
                if p in defaults:
                    got[p] = defaults[p]
                else:
                    return None
        for k in got:
            if k not in params and k not in defaults:
                raise NkiError(f"unexpected argument {k!r}", call)
        for k, v in defaults.items():
            got.setdefault(k, v)
        return got

    got = attempt(list(new))
    if got is not None and isinstance(got.get("dst"), Tensor):
        return got, False
    got = attempt(list(legacy))
    if got is None:
        raise NkiError(f"arguments do not match nki.isa.{call}({', '.join(new)}, ...)", call)
    return got, True


def _result(call: str, shape, dtype, buffer=SBUF) -> Tensor:
    return builder(call).new_alloc(tuple(shape), T.as_dtype(dtype, call), buffer, call)


def _dtype_or(d, default):
    return default if d is None else d


def _need(t: Any, call: str, what: str, buffers=(SBUF, PSUM)) -> Tensor:
    if not isinstance(t, Tensor):
        raise NkiError(f"{what} must be a tile, got {type(t).__name__}", call)
    if t.buffer not in buffers:
        names = " or ".join({SBUF: "SBUF", PSUM: "PSUM", HBM: "HBM"}[b] for b in buffers)
        raise NkiError(f"{what} must be in {names}, but {t.name} is in {t.buffer.upper()}", call)
    return t


def _same_layout(call: str, a: Tensor, b: Tensor, an: str, bn: str) -> None:
    if a.partitions != b.partitions or a.free_size != b.free_size:
        raise NkiError(
            f"{an} {a.shape} and {bn} {b.shape} must have the same partition size and elements per partition",
            call,
        )


def _levels(call: str, *views: Tensor) -> List[List[List[int]]]:
    if all(v.shape == views[0].shape for v in views):
        return joint_levels(views, call)
    return [levels_of(v, call=call) for v in views]


def _scalar_operand(x: Any, data: Tensor, call: str, what: str) -> Dict[str, Any]:
    """An fp32 immediate or a per-partition ``(P, 1)`` tile operand."""
    if isinstance(x, Tensor):
        _need(x, call, what)
        if x.partitions != data.partitions or x.free_size != 1:
            raise NkiError(
                f"{what} {x.shape} must be a scalar or a ({data.partitions}, 1) tile (one value per partition)", call
            )
        lv = levels_of(x, call=call)
        return ap_json(x, [lv[0], [1, 1]])
    if isinstance(x, (int, float, np.integer, np.floating)):
        return imm(float(x))
    raise NkiError(f"{what} must be a number or a tile, got {type(x).__name__}", call)


def _engine_name(e: Any, default: str, allowed: Dict[engine, str], call: str) -> str:
    if e is None or e == engine.unknown or e == 0:
        return default
    if isinstance(e, engine) and e in allowed:
        return allowed[e]
    raise NkiError(f"engine={e!r} cannot run this instruction", call)


# ---------------------------------------------------------------------------------------------
# Data movement


def dma_copy(*args, **kw):
    """``dst = src`` through the DMA engines (BIR ``DMACopy``, Copy mode); a dtype change casts
    through fp32. SBUF and HBM on either side, never PSUM (AWS dma_copy)."""
    call = "dma_copy"
    a, legacy = _bind(
        call, args, kw, ("dst", "src"), ("dst", "src"),
        {"priority": None, "oob_mode": oob_mode.error, "dge_mode": dge_mode.unknown, "engine": None, "name": None,
         "mask": None, "dst_rmw_op": None},
    )
    from ._index import SKIP, mask_region, restrict

    region = mask_region(a["mask"], call)
    if region is SKIP:
        return None
    dst = _need(a["dst"], call, "dst", (SBUF, HBM))
    src = _need(a["src"], call, "src", (SBUF, HBM))
    if _gather.is_vector(dst) or _gather.is_vector(src):
        _gather.dma_copy_indirect(call, a, dst, src, region)
        return None
    if a["dst_rmw_op"] is not None:
        raise NkiError("dst_rmw_op applies to an indirect scatter (a vector offset on dst) only", call)
    emit_dma(call, restrict(dst, region, call), restrict(src, region, call))
    return None


def emit_dma(call: str, dst: Tensor, src: Tensor, opcode: str = "DMACopy") -> None:
    if dst.size != src.size:
        raise NkiError(f"dst {dst.shape} and src {src.shape} hold different numbers of elements", call)
    dl, sl = _levels(call, dst, src)
    fields: Dict[str, Any] = {"mode": "Copy"} if opcode == "DMACopy" else {}
    eng = "DMA" if opcode == "DMACopy" else "SP"
    builder(call).emit(opcode, call, eng, [ap_json(src, sl)], [ap_json(dst, dl)], **fields)
    dst._alloc.written = True


def tensor_copy(*args, **kw):
    """``dst = src`` on the Vector (default), Scalar or GpSimd engine (BIR ``TensorCopy``): bits
    kept for one dtype, through fp32 otherwise."""
    call = "tensor_copy"
    a, legacy = _bind(call, args, kw, ("dst", "src"), ("src",), {"engine": None, "name": None, "dtype": None, "mask": None})
    from ._index import SKIP, mask_region, restrict

    region = mask_region(a["mask"], call)
    src = _need(a["src"], call, "src")
    if legacy:
        dst = _result(call, src.shape, _dtype_or(a["dtype"], src.dtype))
    else:
        dst = _need(a["dst"], call, "dst")
    if region is SKIP:
        return dst if legacy else None
    full_dst = dst
    src, dst = restrict(src, region, call), restrict(dst, region, call)
    eng = _engine_name(a["engine"], "DVE", {engine.vector: "DVE", engine.scalar: "Activation", engine.gpsimd: "Pool"}, call)
    if eng == "Pool" and PSUM in (src.buffer, dst.buffer):
        raise NkiError("GpSimd cannot access PSUM", call)
    if eng == "Activation" and builder(call).arch == "gen2":
        raise NkiError("tensor_copy does not run on the Scalar Engine of NeuronCore-v2 (use activation with nl.copy)", call)
    emit_copy(call, dst, src, eng)
    return full_dst if legacy else None


def emit_copy(call: str, dst: Tensor, src: Tensor, eng: str = "DVE") -> None:
    _same_layout(call, dst, src, "dst", "src")
    dl, sl = _levels(call, dst, src)
    builder(call).emit("TensorCopy", call, eng, [ap_json(src, sl)], [ap_json(dst, dl)])
    dst._alloc.written = True


def memset(*args, **kw):
    """Fills ``dst`` with ``value`` (BIR ``Memset``, Const mode: the value's bits in dst's dtype)."""
    call = "memset"
    a, legacy = _bind(call, args, kw, ("dst", "value"), ("shape", "value", "dtype"),
                      {"engine": None, "name": None, "mask": None, "buffer": None})
    if legacy:
        dst = _result(call, a["shape"], a["dtype"])
    else:
        dst = _need(a["dst"], call, "dst", (SBUF, PSUM, HBM))
    emit_memset(call, dst, a["value"])
    return dst if legacy else None


def emit_memset(call: str, dst: Tensor, value: Any, eng: str = "DVE") -> None:
    if isinstance(value, Tensor):
        raise NkiError("memset takes a compile-time constant value, not a tile", call)
    parent = dst._alloc
    if parent.blocks is not None and dst._offset == 0 and dst.shape == parent.shape:
        # a whole (B..., par_dim(P), F...) tensor: one Memset per block
        import itertools

        for idx in itertools.product(*(range(n) for n in parent.shape[: parent.pdim])):
            emit_memset(call, dst[idx], value, eng)
        return
    if T.is_int(dst.dtype) and float(value) != int(value):
        raise NkiError(f"value {value!r} is not an integer but dst is {dst.dtype}", call)
    bits = T.bits_of(value, dst.dtype)
    b = builder(call)
    b.emit("Memset", call, eng, [], [ap_json(dst, levels_of(dst, call=call))], mode="Const", constant=bits)
    dst._alloc.written = True
    if dst.buffer == PSUM:
        st = b.mm_regions.setdefault(dst._alloc.name, set())
        st.clear()
        if float(value) != 0.0:
            st.add("written")


def iota(*args, **kw):
    """Writes ``offset + channel_multiplier·p + Σ step·i`` (BIR ``Iota``; int32 arithmetic, cast
    to dst's dtype). The older form takes an ``nl.arange``/``nl.mgrid`` expression and a dtype."""
    call = "iota"
    a, legacy = _bind(call, args, kw, ("dst", "pattern"), ("expr",),
                      {"offset": 0, "channel_multiplier": 0, "name": None, "dtype": None, "mask": None})
    from ._index import IndexExpr

    if legacy:
        e = a["expr"]
        if not isinstance(e, IndexExpr):
            raise NkiError("expected an nl.arange / nl.mgrid index expression", call)
        shape = list(e.shape)
        while len(shape) < 2:
            shape.append(1)
        dst = _result(call, shape, _dtype_or(a["dtype"], np.int32))
        cm = sum(c for ax, c, n in e.terms if ax == 0)
        pattern = []
        for axis in range(1, len(shape)):
            step = sum(c for ax, c, n in e.terms if ax == axis)
            pattern.append([step, shape[axis]])
        offset = e.const
    else:
        dst = _need(a["dst"], call, "dst", (SBUF,))
        pattern = [[int(s), int(n)] for s, n in a["pattern"]]
        cm = int(a["channel_multiplier"])
        offset = int(a["offset"])
    if T._prod(n for _, n in pattern) != dst.free_size:
        raise NkiError(
            f"the pattern's nums multiply to {T._prod(n for _, n in pattern)}, dst has {dst.free_size} elements per partition",
            call,
        )
    builder(call).emit(
        "Iota", call, "Pool", [], [ap_json(dst, levels_of(dst, call=call))],
        base=offset, pattern=pattern or [[1, 1]], channel_multiplier=cm,
    )
    dst._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# Element-wise


def tensor_tensor(*args, **kw):
    """``dst = op(data1, data2)`` element-wise (BIR ``TensorTensor``), fp32 arithmetic or raw
    bits for bitvec operators. The inputs may not both be in PSUM (AWS tensor_tensor)."""
    call = "tensor_tensor"
    a, legacy = _bind(call, args, kw, ("dst", "data1", "data2", "op"), ("data1", "data2", "op"),
                      {"engine": None, "name": None, "dtype": None, "mask": None})
    from ._index import SKIP, mask_region, restrict

    region = mask_region(a["mask"], call)
    d1 = _need(a["data1"], call, "data1")
    d2 = _need(a["data2"], call, "data2")
    if legacy:
        dst = _result(call, d1.shape, _dtype_or(a["dtype"], d1.dtype))
    else:
        dst = _need(a["dst"], call, "dst")
    if region is not SKIP:
        R = lambda v: restrict(v, region, call)  # noqa: E731
        emit_tensor_tensor(call, R(dst), R(d1), R(d2), alu_op(a["op"], call), a["engine"])
    return dst if legacy else None


def emit_tensor_tensor(call: str, dst: Tensor, d1: Tensor, d2: Tensor, op: str, eng_arg: Any = None) -> None:
    if d1.buffer == PSUM and d2.buffer == PSUM:
        raise NkiError("data1 and data2 cannot both be in PSUM", call)
    _same_layout(call, d1, d2, "data1", "data2")
    _same_layout(call, dst, d1, "dst", "data1")
    if op in _BITVEC and not (T.is_int(d1.dtype) and T.is_int(d2.dtype) and T.is_int(dst.dtype)):
        raise NkiError(f"bitvec operator {op} needs integer tiles, got {d1.dtype}, {d2.dtype} -> {dst.dtype}", call)
    eng = "Pool" if op == "pow" else _engine_name(eng_arg, "DVE", {engine.vector: "DVE", engine.gpsimd: "Pool"}, call)
    if eng == "Pool" and PSUM in (d1.buffer, d2.buffer, dst.buffer):
        raise NkiError("GpSimd (which runs nl.power) cannot access PSUM", call)
    dl, l1, l2 = _levels(call, dst, d1, d2)
    builder(call).emit("TensorTensor", call, eng, [ap_json(d1, l1), ap_json(d2, l2)], [ap_json(dst, dl)], op=op)
    dst._alloc.written = True


def tensor_scalar(*args, **kw):
    """``dst = (data op0 operand0) op1 operand1`` with scalar or per-partition ``(P, 1)``
    operands (BIR ``TensorScalar`` for immediates, ``TensorScalarPtr`` when an operand is a tile)."""
    call = "tensor_scalar"
    a, legacy = _bind(
        call, args, kw, ("dst", "data", "op0", "operand0"), ("data", "op0", "operand0"),
        {"reverse0": False, "op1": None, "operand1": None, "reverse1": False, "engine": None, "name": None,
         "dtype": None, "mask": None},
    )
    from ._index import SKIP, mask_region, restrict

    region = mask_region(a["mask"], call)
    data = _need(a["data"], call, "data")
    if legacy:
        dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype))
    else:
        dst = _need(a["dst"], call, "dst")
    if region is SKIP:
        return dst if legacy else None
    full_dst = dst
    R = lambda v: restrict(v, region, call) if isinstance(v, Tensor) else v  # noqa: E731
    data, dst = R(data), R(dst)
    a["operand0"], a["operand1"] = R(a["operand0"]), R(a["operand1"])
    for k in ("operand0", "operand1"):
        x = a[k]
        if isinstance(x, Tensor) and T.is_float(x.dtype) and x.dtype != np.dtype(np.float32) and not legacy:
            raise NkiError(f"{k} must be float32 (AWS tensor_scalar), got {x.dtype}", call)
    emit_tensor_scalar(
        call, dst, data, alu_op(a["op0"], call, "op0"), a["operand0"], bool(a["reverse0"]),
        alu_op(a["op1"], call, "op1"), a["operand1"], bool(a["reverse1"]), a["engine"],
    )
    return full_dst if legacy else None


def emit_tensor_scalar(call, dst, data, op0, x0, rev0=False, op1="bypass", x1=None, rev1=False, eng_arg=None):
    _same_layout(call, dst, data, "dst", "data")
    bit0, bit1 = op0 in _BITVEC, op1 in _BITVEC
    if op1 != "bypass" and bit0 != bit1:
        raise NkiError("op0 and op1 must both be bitvec or both arithmetic operators", call)
    if (bit0 or bit1) and not (T.is_int(data.dtype) and T.is_int(dst.dtype)):
        raise NkiError(f"bitvec operators need integer tiles, got {data.dtype} -> {dst.dtype}", call)
    eng = _engine_name(eng_arg, "DVE", {engine.vector: "DVE", engine.scalar: "Activation", engine.gpsimd: "Pool"}, call)
    dl, sl = _levels(call, dst, data)
    b = builder(call)
    unary = {"abs", "rsqrt", "bypass", "bitwise_not"}
    if isinstance(x0, Tensor) or isinstance(x1, Tensor) or bit0:
        ins = [ap_json(data, sl)]
        if op0 not in unary or x0 is not None:
            ins.append(_scalar_operand(0.0 if x0 is None else x0, data, call, "operand0") if not bit0 or isinstance(x0, Tensor)
                       else {"kind": "imm_value", "dtype": "int32", "value": int(x0)})
        if op1 != "bypass":
            if len(ins) == 1:
                ins.append(imm(0.0))
            ins.append(_scalar_operand(0.0 if x1 is None else x1, data, call, "operand1") if not bit1 or isinstance(x1, Tensor)
                       else {"kind": "imm_value", "dtype": "int32", "value": int(x1)})
        b.emit("TensorScalarPtr", call, eng, ins, [ap_json(dst, dl)], op0=op0, reverse0=rev0, op1=op1, reverse1=rev1)
    else:
        fields = {"op0": op0, "const0": _f(x0), "reverse0": rev0, "op1": op1, "const1": _f(x1), "reverse1": rev1}
        b.emit("TensorScalar", call, eng, [ap_json(data, sl)], [ap_json(dst, dl)], **fields)
    dst._alloc.written = True


def _f(x: Any) -> Any:
    if x is None:
        return 0.0
    v = float(x)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def scalar_tensor_tensor(*args, **kw):
    """``dst = (data op0 operand0) op1 operand1`` with ``operand1`` a full tile (BIR
    ``TensorScalarPtr`` with ``is_scalar_tensor_tensor``)."""
    call = "scalar_tensor_tensor"
    a, legacy = _bind(call, args, kw, ("dst", "data", "op0", "operand0", "op1", "operand1"),
                      ("data", "op0", "operand0", "op1", "operand1"),
                      {"reverse0": False, "reverse1": False, "name": None, "dtype": None, "mask": None})
    data = _need(a["data"], call, "data")
    o1 = _need(a["operand1"], call, "operand1")
    dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype)) if legacy else _need(a["dst"], call, "dst")
    if data.buffer == PSUM and o1.buffer == PSUM:
        raise NkiError("data and operand1 cannot both be in PSUM", call)
    _same_layout(call, dst, data, "dst", "data")
    _same_layout(call, o1, data, "operand1", "data")
    dl, sl, ol = _levels(call, dst, data, o1)
    ins = [ap_json(data, sl), _scalar_operand(a["operand0"], data, call, "operand0"), ap_json(o1, ol)]
    builder(call).emit(
        "TensorScalarPtr", call, "DVE", ins, [ap_json(dst, dl)],
        op0=alu_op(a["op0"], call, "op0"), reverse0=bool(a["reverse0"]), op1=alu_op(a["op1"], call, "op1"),
        reverse1=bool(a["reverse1"]), is_scalar_tensor_tensor=True,
    )
    dst._alloc.written = True
    return dst if legacy else None


def tensor_tensor_scan(*args, **kw):
    """Per partition ``r = initial``, then ``r = op1(op0(data0[i], r), data1[i])`` written for
    every i (BIR ``TensorScalarPtr`` with ``is_tensor_tensor_scan``, ``ins = [data0, data1,
    initial]``; ``reverse0`` makes r op0's left operand, ``reverse1`` data1 op1's)."""
    call = "tensor_tensor_scan"
    a, legacy = _bind(call, args, kw, ("dst", "data0", "data1", "initial", "op0", "op1"),
                      ("data0", "data1", "initial", "op0", "op1"),
                      {"reverse0": False, "reverse1": False, "name": None, "dtype": None, "mask": None})
    d0 = _need(a["data0"], call, "data0")
    d1 = _need(a["data1"], call, "data1")
    dst = _result(call, d0.shape, _dtype_or(a["dtype"], d0.dtype)) if legacy else _need(a["dst"], call, "dst")
    if d0.buffer == PSUM and d1.buffer == PSUM:
        raise NkiError("data0 and data1 cannot both be in PSUM", call)
    _same_layout(call, d0, d1, "data0", "data1")
    _same_layout(call, dst, d0, "dst", "data0")
    ops = (alu_op(a["op0"], call, "op0"), alu_op(a["op1"], call, "op1"))
    for op in ops:
        if op in _BITVEC or op in ("bypass", "abs", "rsqrt"):
            raise NkiError(f"{op} is not a binary arithmetic operator", call)
    dl, l0, l1 = _levels(call, dst, d0, d1)
    ins = [ap_json(d0, l0), ap_json(d1, l1), _scalar_operand(a["initial"], d0, call, "initial")]
    builder(call).emit(
        "TensorScalarPtr", call, "DVE", ins, [ap_json(dst, dl)],
        op0=ops[0], reverse0=bool(a["reverse0"]), op1=ops[1], reverse1=bool(a["reverse1"]),
        is_tensor_tensor_scan=True,
    )
    dst._alloc.written = True
    return dst if legacy else None


_CMP = {"is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le"}
_MASK_CMP = {"<": "is_lt", "<=": "is_le", ">": "is_gt", ">=": "is_ge"}


def affine_select(*args, **kw):
    """``dst = cmp_op(offset + channel_multiplier·p + Σ step·i, 0) ? on_true_tile : on_false_value``
    on GpSimd (BIR ``TensorScalarAffineSelect``: ``base``, ``pattern``, ``channel_multiplier``,
    ``compare_op``, ``fill_value``). The older form takes a predicate of ``nl.arange`` /
    ``nl.mgrid`` expressions (``i_p >= i_f``)."""
    call = "affine_select"
    a, legacy = _bind(call, args, kw, ("dst", "pattern", "channel_multiplier", "on_true_tile", "on_false_value"),
                      ("pred", "on_true_tile", "on_false_value"),
                      {"cmp_op": "equal", "offset": 0, "name": None, "dtype": None, "mask": None})
    src = _need(a["on_true_tile"], call, "on_true_tile", (SBUF,))
    if legacy:
        from ._index import Mask

        pred = a["pred"]
        if not isinstance(pred, Mask) or pred.affine is None:
            raise NkiError("pred must compare nl.arange / nl.mgrid index expressions (e.g. i_p >= i_f)", call)
        expr, op = pred.affine
        cmp = _MASK_CMP[op]
        shape = list(src.shape)
        cm = sum(c for ax, c, n in expr.terms if ax == 0)
        pattern = [[sum(c for ax, c, n in expr.terms if ax == axis), shape[axis]] for axis in range(1, len(shape))]
        base = expr.const
        dst = _result(call, src.shape, _dtype_or(a["dtype"], src.dtype))
    else:
        dst = _need(a["dst"], call, "dst", (SBUF,))
        pattern = [[int(st), int(n)] for st, n in a["pattern"]]
        cm = int(a["channel_multiplier"])
        base = int(a["offset"])
        cmp = alu_op(a["cmp_op"], call, "cmp_op")
        if cmp not in _CMP:
            raise NkiError(f"cmp_op must be a comparison, got {cmp}", call)
    _same_layout(call, dst, src, "dst", "on_true_tile")
    if T._prod(n for _, n in pattern) != dst.free_size:
        raise NkiError(
            f"the pattern's nums multiply to {T._prod(n for _, n in pattern)}, dst has {dst.free_size} elements per partition",
            call,
        )
    dl, sl = _levels(call, dst, src)
    builder(call).emit(
        "TensorScalarAffineSelect", call, "Pool", [ap_json(src, sl)], [ap_json(dst, dl)],
        base=base, pattern=pattern or [[1, 1]], channel_multiplier=cm, compare_op=cmp,
        fill_value=_f(a["on_false_value"]),
    )
    dst._alloc.written = True
    return dst if legacy else None


def tensor_scalar_reduce(*args, **kw):
    """``dst = data op0 operand0`` and ``reduce_res[p] = reduce_op`` over row p of those fp32
    results (optionally negated). Traced as ``TensorScalar`` / ``TensorScalarPtr`` into an fp32
    tile (dst itself when dst is fp32), ``TensorReduce`` of that tile into ``reduce_res``, and a
    ``TensorCopy`` into dst when dst has another dtype. Only ``reduce_cmd=reset_reduce`` (the
    default): chaining through the accumulator registers is not expressed this way."""
    call = "tensor_scalar_reduce"
    a, legacy = _bind(
        call, args, kw, ("dst", "data", "op0", "operand0", "reduce_op"), ("data", "op0", "operand0", "reduce_op"),
        {"reduce_res": None, "reverse0": False, "reduce_cmd": reduce_cmd.reset_reduce, "reduce_init": None,
         "reduce_res_negate": False, "name": None, "mask": None, "dtype": None},
    )
    data = _need(a["data"], call, "data")
    dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype)) if legacy else _need(a["dst"], call, "dst")
    cmd = a["reduce_cmd"]
    if isinstance(cmd, (int, np.integer)):
        cmd = reduce_cmd(int(cmd))
    if cmd != reduce_cmd.reset_reduce:
        raise NkiError(f"reduce_cmd={cmd.name} (chaining the accumulator registers) is not supported yet", call)
    if a["reverse0"]:
        raise NkiError("reverse0 is not supported (AWS: 'not supported yet')", call)
    red = alu_op(a["reduce_op"], call, "reduce_op")
    if red not in ("add", "mult", "max", "min"):
        raise NkiError(f"reduce_op must be add, multiply, max or min, got {red}", call)
    op0 = alu_op(a["op0"], call, "op0")
    if op0 in _BITVEC:
        raise NkiError("op0 must be an arithmetic operator", call)
    b = builder(call)
    f32 = np.dtype(np.float32)
    tmp = dst if dst.dtype == f32 else b.new_alloc(_tile_dims(dst), f32, SBUF, call)
    emit_tensor_scalar(call, tmp, data, op0, a["operand0"])
    if a["reduce_res"] is not None:
        r = _need(a["reduce_res"], call, "reduce_res")
        if r.partitions != data.partitions or r.free_size != 1:
            raise NkiError(f"reduce_res {r.shape} must be ({data.partitions}, 1)", call)
        flat = tmp._view((tmp.partitions, tmp.free_size), [T.pitch_of(tmp) if tmp._pdim is not None else 1, 1],
                         tmp._offset, 0) if tmp.ndim != 2 and tmp._is_contiguous() else tmp
        emit_reduce(call, r, flat, red, list(range(1, flat.ndim)) if flat._pdim == 0 else [1], bool(a["reduce_res_negate"]))
    if tmp is not dst:
        emit_copy(call, dst, tmp)
    return dst if legacy else None


def _tile_dims(t: Tensor) -> Tuple[int, int]:
    return (t.partitions, t.free_size)


def reciprocal(*args, **kw):
    """``dst = 1 / data`` in fp32 on the Vector Engine (BIR ``Reciprocal``)."""
    call = "reciprocal"
    a, legacy = _bind(call, args, kw, ("dst", "data"), ("data",), {"name": None, "dtype": None, "mask": None})
    data = _need(a["data"], call, "data")
    dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype)) if legacy else _need(a["dst"], call, "dst")
    emit_unary_op(call, "Reciprocal", dst, data)
    return dst if legacy else None


def emit_unary_op(call: str, opcode: str, dst: Tensor, data: Tensor) -> None:
    _same_layout(call, dst, data, "dst", "data")
    dl, sl = _levels(call, dst, data)
    builder(call).emit(opcode, call, "DVE", [ap_json(data, sl)], [ap_json(dst, dl)])
    dst._alloc.written = True


# ---------------------------------------------------------------------------------------------
# Reductions


def reduce_axes(t: Tensor, axis: Any, call: str) -> List[int]:
    if isinstance(axis, (int, np.integer)):
        axis = [int(axis)]
    axes = sorted({int(x) % t.ndim for x in axis})
    if not axes:
        raise NkiError("axis is empty", call)
    pd = t._pdim if t._pdim is not None else -1
    if pd in axes:
        raise NkiError("the partition dimension cannot be reduced (tensor_reduce reduces free axes)", call)
    free = [d for d in range(t.ndim) if d != pd]
    if axes != free[len(free) - len(axes):]:
        raise NkiError(
            f"axis {list(axis)} must be the last contiguous free dimension(s) of the {t.ndim}-D tile", call
        )
    return axes


def reduced_shape(t: Tensor, axes: Sequence[int], keepdims: bool) -> Tuple[int, ...]:
    if keepdims:
        shape = [1 if d in axes else n for d, n in enumerate(t.shape)]
    else:
        shape = [n for d, n in enumerate(t.shape) if d not in axes]
    while len(shape) < 2:
        shape.append(1)
    return tuple(shape)


def emit_reduce(call: str, dst: Tensor, data: Tensor, op: str, axes: Sequence[int], negate: bool = False) -> None:
    if data.partitions != dst.partitions:
        raise NkiError(f"dst {dst.shape} and data {data.shape} must have the same partition size", call)
    p = data._pdim
    kept = [[data._strides[d], data.shape[d]] for d in range(data.ndim) if d != p and d not in axes]
    red = [[data._strides[d], data.shape[d]] for d in axes]
    kept_l = T._merge(kept)
    red_l = T._merge(red) or [[1, 1]]
    if len(red_l) > 3:
        raise NkiError(f"the reduced dims need {len(red_l)} access-pattern levels; a reduce folds at most 3", call)
    first = levels_of(data, call=call)[0]
    lv = [first] + kept_l + red_l
    if len(lv) > 5:
        raise NkiError(f"the reduce needs {len(lv)} access-pattern levels; BIR access patterns have at most 5", call)
    n_out = T._prod(n for _, n in kept_l)
    if dst.free_size != n_out:
        raise NkiError(f"dst {dst.shape} must hold {n_out} elements per partition for this reduction", call)
    axis = {1: "X", 2: "XY", 3: "XYZ"}[len(red_l)]
    builder(call).emit(
        "TensorReduce", call, "DVE", [ap_json(data, lv)], [ap_json(dst, levels_of(dst, call=call))],
        op=op, axis=axis, negate=bool(negate),
    )
    dst._alloc.written = True


def tensor_reduce(*args, **kw):
    """Reduces the trailing free axes of ``data`` (BIR ``TensorReduce`` with the axis letters of
    the reduced levels), fp32 arithmetic, optionally negated."""
    call = "tensor_reduce"
    a, legacy = _bind(call, args, kw, ("dst", "op", "data", "axis"), ("op", "data", "axis"),
                      {"negate": False, "keepdims": False, "name": None, "dtype": None, "mask": None})
    data = _need(a["data"], call, "data")
    axes = reduce_axes(data, a["axis"], call)
    op = alu_op(a["op"], call)
    if op not in {"add", "subtract", "mult", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor",
                  "logical_and", "logical_or", "logical_xor", "average", "abs_max", "abs_min"}:
        raise NkiError(f"{op} is not a reduction operator", call)
    if legacy:
        dst = _result(call, reduced_shape(data, axes, bool(a["keepdims"])), _dtype_or(a["dtype"], data.dtype))
    else:
        dst = _need(a["dst"], call, "dst")
    emit_reduce(call, dst, data, op, axes, bool(a["negate"]))
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# Activation


_REDUCE_CMD = {reduce_cmd.idle: "Idle", reduce_cmd.reset: "Zero", reduce_cmd.reduce: "Accumulate",
               reduce_cmd.reset_reduce: "ZeroAccumulate"}


def activation(*args, **kw):
    """``dst = op(data·scale + bias)`` on the Scalar Engine (BIR ``Activation``; scale and bias
    immediates or ``(P, 1)`` tiles), with the optional add-reduce into the engine's accumulator
    registers (``acc``) read out into ``reduce_res`` (``ActivationReadAccumulator``)."""
    call = "activation"
    a, legacy = _bind(
        call, args, kw, ("dst", "op", "data"), ("op", "data"),
        {"bias": None, "scale": 1.0, "reduce_op": None, "reduce_res": None, "reduce_cmd": reduce_cmd.idle,
         "name": None, "dtype": None, "mask": None},
    )
    from ._index import SKIP, mask_region, restrict

    region = mask_region(a["mask"], call)
    data = _need(a["data"], call, "data")
    dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype)) if legacy else _need(a["dst"], call, "dst")
    if region is SKIP:
        return dst if legacy else None
    R = lambda v: restrict(v, region, call) if isinstance(v, Tensor) else v  # noqa: E731
    emit_activation(call, R(dst), act_func(a["op"], call), R(data), R(a["bias"]), R(a["scale"]), a["reduce_op"],
                    R(a["reduce_res"]), a["reduce_cmd"])
    return dst if legacy else None


def activation_reduce(*args, **kw):
    """``activation`` with ``reduce_cmd=reset_reduce`` and the read-out into ``reduce_res``."""
    call = "activation_reduce"
    a, legacy = _bind(call, args, kw, ("dst", "op", "data", "reduce_op", "reduce_res"), ("op", "data", "reduce_op", "reduce_res"),
                      {"bias": None, "scale": 1.0, "name": None, "dtype": None, "mask": None})
    data = _need(a["data"], call, "data")
    dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype)) if legacy else _need(a["dst"], call, "dst")
    emit_activation(call, dst, act_func(a["op"], call), data, a["bias"], a["scale"], a["reduce_op"], a["reduce_res"],
                    reduce_cmd.reset_reduce)
    return dst if legacy else None


def emit_activation(call, dst, func, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, cmd=reduce_cmd.idle):
    _same_layout(call, dst, data, "dst", "data")
    b = builder(call)
    if isinstance(cmd, (int, np.integer)):
        cmd = reduce_cmd(int(cmd))
    if cmd == reduce_cmd.load_reduce:
        raise NkiError("reduce_cmd=load_reduce is not supported by birsim's Activation", call)
    if reduce_op is not None and alu_op(reduce_op, call, "reduce_op") != "add":
        raise NkiError("reduce_op must be nl.add", call)
    if reduce_res is not None and reduce_op is None:
        raise NkiError("reduce_res needs reduce_op=nl.add", call)
    if bias is not None and not isinstance(bias, Tensor) and b.arch == "gen2" and float(bias) != 0.0:
        raise NkiError("on NeuronCore-v2 the bias must be a (P, 1) tile, not a scalar", call)
    if isinstance(scale, Tensor) and scale.dtype != np.dtype(np.float32):
        raise NkiError(f"scale must be float32, got {scale.dtype}", call)
    dl, sl = _levels(call, dst, data)
    ins = [ap_json(data, sl)]
    fields: Dict[str, Any] = {"func": func, "scale": 1.0, "alpha": 0.0}
    if isinstance(scale, Tensor) or bias is not None:
        ins.append(_scalar_operand(scale, data, call, "scale"))
        if bias is not None:
            ins.append(_scalar_operand(bias, data, call, "bias"))
    else:
        fields["scale"] = _f(scale)
    # AWS's pseudo-code: idle leaves the registers alone (reduce_res then reads them as they
    # are), reset zeroes them, reduce adds this instruction's row sums, reset_reduce does both.
    fields["acc"] = _REDUCE_CMD[cmd]
    b.emit("Activation", call, "Activation", ins, [ap_json(dst, dl)], **fields)
    dst._alloc.written = True
    if reduce_res is not None:
        r = _need(reduce_res, call, "reduce_res")
        if r.partitions != data.partitions or r.free_size != 1:
            raise NkiError(f"reduce_res {r.shape} must be ({data.partitions}, 1)", call)
        b.emit("ActivationReadAccumulator", call, "Activation", [], [ap_json(r, levels_of(r, call=call))])
        r._alloc.written = True


# ---------------------------------------------------------------------------------------------
# Tensor Engine


_MM_DTYPES = {"float32", "float32r", "bfloat16", "float16", "float8e4", "float8e5", "float8_e4m3fn"}


def nc_matmul(*args, **kw):
    """``dst = stationary.T @ moving`` on the Tensor Engine into PSUM (BIR ``Matmult``,
    ``ins = [moving, stationary]``; ``accumulate`` False → overwrite, True → ACCUMULATE,
    None → overwrite the first time this PSUM region is a matmul target, then accumulate)."""
    call = "nc_matmul"
    a, legacy = _bind(
        call, args, kw, ("dst", "stationary", "moving"), ("stationary", "moving"),
        {"is_stationary_onezero": False, "is_moving_onezero": False, "is_transpose": False, "accumulate": None,
         "tile_position": (), "tile_size": (), "perf_mode": matmul_perf_mode.none, "name": None, "mask": None,
         "dtype": None},
    )
    st = _need(a["stationary"], call, "stationary", (SBUF,))
    mv = _need(a["moving"], call, "moving", (SBUF,))
    double_row = _perf_mode(call, a["perf_mode"])
    tiles = _pe_tile(call, a["tile_position"], a["tile_size"], double_row)
    if legacy:
        dt = pe_transpose_dtype(st.dtype) if a["is_transpose"] else np.float32
        m_free, n_free = (st.free_size // 2, mv.free_size // 2) if double_row else (st.free_size, mv.free_size)
        dst = _result(call, (m_free, n_free), _dtype_or(a["dtype"], dt), PSUM)
    else:
        dst = _need(a["dst"], call, "dst", (PSUM,))
    if a["is_transpose"]:
        if double_row or tiles:
            raise NkiError("a Tensor Engine transpose takes no perf_mode and no PE tile here", call)
        # the kernel's own moving operand (its identity) goes in as written
        emit_pe_transpose(call, dst, st, mv)
    else:
        inst = emit_matmul(call, dst, st, mv, a["accumulate"], tiles=tiles, double_row=double_row)
        if legacy:
            # `psum[...] += nisa.nc_matmul(a, b)`: the older API's accumulation idiom
            builder(call).last_matmul = (inst, T.weakref.ref(dst._alloc))
    return dst if legacy else None


def _perf_mode(call: str, mode: Any) -> bool:
    """``perf_mode``: none, or ``double_row`` (NeuronCore-v3+, AWS nc_matmul "Performance mode")."""
    name = getattr(mode, "value", mode)
    if name in (None, "none", ""):
        return False
    if name != "double_row":
        raise NkiError(f"perf_mode={mode!r}: expected matmul_perf_mode.none or double_row", call)
    if builder(call).arch == "gen2":
        raise NkiError("perf_mode double_row needs NeuronCore-v3 or newer (AWS nc_matmul)", call)
    return True


def _pe_tile(call: str, position: Any, size: Any, double_row: bool) -> Optional[Dict[str, List[int]]]:
    """``tile_position`` / ``tile_size`` (AWS nc_matmul "Tiling mode"): both or neither; sizes 128,
    64 or (NeuronCore-v3+) 32; each start a multiple of its size inside the 128 × 128 array; no
    column tiling with double_row. BIR Matmult's ``tile_position`` / ``tile_size`` fields, which
    birsim checks against the operands (fidelity M5: the tile does not change the math)."""
    if not position and not size:
        return None
    if not position or not size:
        raise NkiError("tile_position and tile_size must both be set to use a PE tile (AWS nc_matmul)", call)
    try:
        (r0, c0), (rs, cs) = ((int(x) for x in position), (int(x) for x in size))
    except (TypeError, ValueError):
        raise NkiError(f"tile_position {position!r} / tile_size {size!r}: expected two integers each", call)
    sizes = (64, 128) if builder(call).arch == "gen2" else (32, 64, 128)
    for what, start, n in (("row", r0, rs), ("column", c0, cs)):
        if n not in sizes:
            raise NkiError(f"tile_size {what} size {n}: one of {sizes} on {builder(call).arch} (AWS nc_matmul)", call)
        if start < 0 or start % n or start + n > 128:
            raise NkiError(f"tile_position {what} start {start}: a multiple of {n} inside the 128 × 128 array", call)
    if double_row and cs != 128:
        raise NkiError("perf_mode double_row cannot be combined with column tiling (AWS nc_matmul)", call)
    return {"tile_position": [r0, c0], "tile_size": [rs, cs]}


def _double_row_levels(call: str, t: Tensor, what: str) -> List[List[int]]:
    """A double_row operand ``[P, 2, X]``: the contraction over the partitions and the size-2
    first free dim (AWS nc_matmul "Layout"), as BIR's DoubleRow reads it (fidelity M8)."""
    if t.ndim != 3 or t._pdim != 0 or t.shape[1] != 2:
        raise NkiError(f"{what} {t.shape}: a double_row operand is [partitions, 2, free] (AWS nc_matmul)", call)
    lv = levels_of(t, merge=False, call=call)
    if lv[2][0] != 1:
        raise NkiError(f"{what} {t.shape}: the last dim must be contiguous", call)
    return lv


_FP8 = {"float8e4", "float8e5", "float8_e4m3fn"}


def emit_matmul(call: str, dst: Tensor, st: Tensor, mv: Tensor, accumulate: Any, tiles=None,
                double_row: bool = False) -> Dict[str, Any]:
    b = builder(call)
    if dst.buffer != PSUM:
        raise NkiError(f"the matmul output must be in PSUM, but {dst.name} is in {dst.buffer.upper()}", call)
    for t, what in ((st, "stationary"), (mv, "moving")):
        if t.buffer != SBUF:
            raise NkiError(f"{what} must be in SBUF, but {t.name} is in {t.buffer.upper()}", call)
        if T.bir_dtype(t.dtype) not in _MM_DTYPES:
            raise NkiError(f"{what} has dtype {t.dtype}; the Tensor Engine takes fp8, bfloat16, float16 or float32", call)
    f32 = np.dtype(np.float32)
    if (st.dtype == f32) != (mv.dtype == f32):
        raise NkiError(f"a float32 operand needs a float32 partner: stationary {st.dtype}, moving {mv.dtype}", call)
    K, M, N = st.partitions, st.free_size, mv.free_size
    if double_row:
        for t, what in ((st, "stationary"), (mv, "moving")):
            if T.bir_dtype(t.dtype) not in _FP8:
                raise NkiError(f"perf_mode double_row takes fp8 operands; {what} is {t.dtype} (AWS nc_matmul)", call)
        M, N = M // 2, N // 2
    if tiles is not None:
        rs, cs = tiles["tile_size"]
        if K > rs or M > cs:
            raise NkiError(f"the PE tile {rs} × {cs} does not hold stationary's {K} rows × {M} columns "
                           "(AWS nc_matmul: the stationary tile size must not exceed tile_size)", call)
    if mv.partitions != K:
        raise NkiError(
            f"the contraction (partition) dims differ: stationary {st.shape} has {K}, moving {mv.shape} has {mv.partitions}",
            call,
        )
    if M > 128:
        raise NkiError(f"stationary free size {M} exceeds 128 (gemm_stationary_fmax)", call)
    # gemm_moving_fmax on NeuronCore-v2/v3; from v4 up to all 8 PSUM banks (AWS nc_matmul "Tile size")
    nmax = 512 if b.arch != "gen4" else (4096 if dst.dtype == np.dtype(np.float32) else 8192)
    if N > nmax:
        raise NkiError(f"moving free size {N} exceeds {nmax} ("
                       + ("gemm_moving_fmax" if b.arch != "gen4" else f"all of PSUM for a {dst.dtype} dst on gen4")
                       + ")", call)
    if dst.partitions != M or dst.free_size != N:
        raise NkiError(f"dst {dst.shape} must be ({M}, {N}) for stationary {st.shape} and moving {mv.shape}", call)
    ok = {f32} if b.arch != "gen4" else {f32, np.dtype(T.ml_dtypes.bfloat16)}
    if dst.dtype not in ok:
        raise NkiError(f"the matmul output must be {' or '.join(str(d) for d in ok)} on {b.arch}, got {dst.dtype}", call)
    if double_row:
        stl, mvl = _double_row_levels(call, st, "stationary"), _double_row_levels(call, mv, "moving")
    else:
        stl, mvl = levels_of(st, call=call), levels_of(mv, call=call)
    dl = levels_of(dst, call=call)
    for lv, t, what in ((stl, st, "stationary"), (mvl, mv, "moving"), (dl, dst, "dst")):
        if len(lv) > (3 if double_row and t is not dst else 2):
            raise NkiError(f"{what} {t.shape} must have one contiguous free dimension", call)
    check_one_bank(call, dst)
    key = (dst._offset, tuple(map(tuple, dl)))
    regions = b.mm_regions.setdefault(dst._alloc.name, set())
    if accumulate is None:
        flag = 4 if key in regions else 0
    else:
        flag = 4 if accumulate else 0
    regions.add(key)
    extra: Dict[str, Any] = dict(tiles or {})
    if double_row:
        extra["perf_mode"] = "DoubleRow"
    inst = b.emit("Matmult", call, "PE", [ap_json(mv, mvl), ap_json(st, stl)], [ap_json(dst, dl)],
                  accumulation_flag=flag | 2, is_transpose=False, **extra)
    dst._alloc.written = True
    return inst


def check_one_bank(call: str, dst: Tensor) -> None:
    """Before NeuronCore-v4 a Tensor Engine output stays inside one 2 KiB PSUM bank of each
    partition (psum_bank_fmax: 512 fp32); from v4 on it may span all 8 (AWS nc_matmul "Tile
    size"; birsim's gen4 Matmult, fidelity M5)."""
    if builder(call).arch == "gen4":
        return
    # PSUM tiles start on a bank boundary (Builder.place), so the bank follows from the offset
    pitch = T.pitch_of(dst)
    size = dst.dtype.itemsize
    lo = hi = dst._offset % pitch
    for d, (s, n) in enumerate(zip(dst._strides, dst.shape)):
        if d == dst._pdim:
            continue
        lo += min(0, s * (n - 1))
        hi += max(0, s * (n - 1))
    first, last = lo * size // T.PSUM_BANK, (hi * size + size - 1) // T.PSUM_BANK
    if first != last:
        raise NkiError(
            f"the output {dst.shape} spans PSUM banks {first}..{last}; before NeuronCore-v4 a Tensor Engine output "
            "stays inside one 2 KiB bank (psum_bank_fmax: 512 fp32 per partition)",
            call,
        )


def identity(call: str, n: int, dtype: np.dtype) -> Tensor:
    """An ``n × n`` identity tile in SBUF, built once per trace: ``Iota`` of ``p − j`` then
    ``TensorScalar is_equal 0`` into ``dtype``."""
    b = builder(call)
    key = (n, str(dtype))
    if key not in b.identity:
        t = b.new_alloc((n, n), np.dtype(np.int32), SBUF, call, name="iota")
        b.emit("Iota", call, "Pool", [], [ap_json(t, levels_of(t))], base=0, pattern=[[-1, n]], channel_multiplier=1)
        eye = b.new_alloc((n, n), dtype, SBUF, call, name="identity")
        dl, sl = joint_levels([eye, t], call)
        b.emit("TensorScalar", call, "DVE", [ap_json(t, sl)], [ap_json(eye, dl)], op0="is_equal", const0=0.0,
               reverse0=False, op1="bypass", const1=0.0, reverse1=False)
        b.identity[key] = eye
    return b.identity[key]


def pe_transpose_dtype(dt: np.dtype) -> np.dtype:
    """The PSUM dtype of a Tensor Engine transpose: the data's (gen3+), float32 on gen2 (a matmul)."""
    return np.dtype(np.float32) if builder().arch == "gen2" else dt


def emit_pe_transpose(call: str, dst: Tensor, data: Tensor, moving: Optional[Tensor] = None) -> None:
    """The Tensor Engine transpose: ``Matmult is_transpose`` with ``data`` stationary and a
    ``P × P`` identity moving (AWS nc_transpose / nc_matmul is_transpose)."""
    b = builder(call)
    if data.buffer != SBUF:
        raise NkiError(f"the Tensor Engine transpose reads SBUF, but {data.name} is in {data.buffer.upper()}", call)
    if dst.buffer != PSUM:
        raise NkiError(f"the Tensor Engine transpose writes PSUM, but {dst.name} is in {dst.buffer.upper()}", call)
    P, F = data.partitions, data.free_size
    if P > 128 or F > 128:
        raise NkiError(f"the Tensor Engine transposes at most 128 × 128, got {data.shape}", call)
    if dst.partitions != F or dst.free_size != P:
        raise NkiError(f"dst {dst.shape} must be ({F}, {P}) to hold the transpose of {data.shape}", call)
    if T.bir_dtype(data.dtype) not in _MM_DTYPES:
        raise NkiError(f"the Tensor Engine cannot read {data.dtype}", call)
    if data.dtype.itemsize == 1:
        raise NkiError(
            "an fp8 Tensor Engine transpose writes 16-bit PSUM elements (AWS nc_transpose); not supported by birsim.nki yet",
            call,
        )
    if b.arch == "gen2":
        if dst.dtype != np.dtype(np.float32):
            raise NkiError(
                "on NeuronCore-v2 the Tensor Engine transpose is a matmul with an identity (AWS nc_transpose) and "
                f"writes float32 PSUM, not {dst.dtype}",
                call,
            )
    elif dst.dtype != data.dtype:
        raise NkiError(f"dst dtype {dst.dtype} must equal data dtype {data.dtype}", call)
    check_one_bank(call, dst)
    if moving is None:
        eye = identity(call, P, data.dtype)
    else:
        eye = moving
        if eye.partitions != P or eye.free_size != P or eye.buffer != SBUF:
            raise NkiError(f"the transpose's moving operand must be a ({P}, {P}) SBUF identity, got {eye.shape}", call)
    dl = levels_of(dst, call=call)
    sl = levels_of(data, call=call)
    if len(sl) > 2 or len(dl) > 2:
        raise NkiError("the transposed tiles must each have one contiguous free dimension", call)
    b.emit("Matmult", call, "PE", [ap_json(eye, levels_of(eye)), ap_json(data, sl)], [ap_json(dst, dl)],
           accumulation_flag=2, is_transpose=True)
    b.mm_regions.setdefault(dst._alloc.name, set()).add((dst._offset, tuple(map(tuple, dl))))
    dst._alloc.written = True


def nc_transpose(*args, **kw):
    """Transposes partition and free axes: on the Tensor Engine (SBUF → PSUM, ≤ 128 × 128;
    ``Matmult is_transpose``) or the Vector Engine (32 × 32 blocks; ``StreamTranspose``)."""
    call = "nc_transpose"
    a, legacy = _bind(call, args, kw, ("dst", "data"), ("data",), {"engine": None, "name": None, "mask": None, "dtype": None})
    data = _need(a["data"], call, "data")
    e = a["engine"]
    if legacy:
        # the older call returns a new tile: the Tensor Engine's (in PSUM) unless engine=vector
        on_pe = e != engine.vector
        dst = _result(call, (data.free_size, data.partitions), pe_transpose_dtype(data.dtype) if on_pe else data.dtype,
                      PSUM if on_pe else SBUF)
    else:
        dst = _need(a["dst"], call, "dst")
    if e == engine.vector or (e in (None, engine.unknown) and dst.buffer == SBUF):
        if data.partitions != 32 or data.free_size != 32 or dst.partitions != 32 or dst.free_size != 32:
            raise NkiError(
                f"the Vector Engine transpose is birsim's StreamTranspose, which swaps exactly 32 × 32; got {data.shape}",
                call,
            )
        if dst.dtype != data.dtype:
            raise NkiError(f"dst dtype {dst.dtype} must equal data dtype {data.dtype}", call)
        emit_unary_op(call, "StreamTranspose", dst, data)
    else:
        emit_pe_transpose(call, dst, data)
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# Statistics


def bn_stats(*args, **kw):
    """Per partition (count, mean, variance·count) of the even- and odd-indexed elements
    (BIR ``BNStats``; at most 512 elements per partition)."""
    call = "bn_stats"
    a, legacy = _bind(call, args, kw, ("dst", "data"), ("data",), {"name": None, "dtype": None, "mask": None})
    from ._index import SKIP, mask_region, restrict

    region = mask_region(a["mask"], call)
    data = _need(a["data"], call, "data")
    if data.free_size > 512:
        raise NkiError(f"bn_stats takes at most 512 elements per partition (bn_stats_fmax), got {data.free_size}", call)
    dst = _result(call, (data.partitions, 6), _dtype_or(a["dtype"], np.float32)) if legacy else _need(a["dst"], call, "dst")
    if region is SKIP:
        return dst if legacy else None
    full_dst = dst
    if region:
        # the mask limits the statistics' elements; dst keeps its 6 values (rows as the mask says)
        data = restrict(data, region, call)
        dst = restrict(dst, {k: v for k, v in region.items() if k == 0}, call)
    if dst.partitions != data.partitions or dst.free_size != 6:
        raise NkiError(f"dst {dst.shape} must be ({data.partitions}, 6)", call)
    builder(call).emit("BNStats", call, "DVE", [ap_json(data, levels_of(data, call=call))], [ap_json(dst, levels_of(dst, call=call))])
    dst._alloc.written = True
    return full_dst if legacy else None


def bn_aggr(*args, **kw):
    """Merges bn_stats triples into (mean, variance) per partition (BIR ``BNStatsAggregate``)."""
    call = "bn_aggr"
    a, legacy = _bind(call, args, kw, ("dst", "data"), ("data",), {"name": None, "dtype": None, "mask": None})
    data = _need(a["data"], call, "data")
    if data.free_size % 3:
        raise NkiError(f"data holds {data.free_size} elements per partition, not a multiple of 3", call)
    dst = _result(call, (data.partitions, 2), _dtype_or(a["dtype"], np.float32)) if legacy else _need(a["dst"], call, "dst")
    if dst.partitions != data.partitions or dst.free_size != 2:
        raise NkiError(f"dst {dst.shape} must be ({data.partitions}, 2)", call)
    builder(call).emit("BNStatsAggregate", call, "DVE", [ap_json(data, levels_of(data, call=call))],
                       [ap_json(dst, levels_of(dst, call=call))])
    dst._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# Selection, shuffles, top-8, exponential


def tensor_copy_predicated(*args, **kw):
    """``dst = predicate ? src : dst`` element-wise (BIR ``CopyPredicated``; ``reverse_pred``
    flips the predicate; a number as ``src`` is an fp32 immediate)."""
    call = "tensor_copy_predicated"
    a, legacy = _bind(call, args, kw, ("dst", "src", "predicate"), ("src", "predicate", "dst"),
                      {"reverse_pred": False, "name": None, "mask": None, "dtype": None})
    dst = _need(a["dst"], call, "dst")
    pred = _need(a["predicate"], call, "predicate")
    src = a["src"]
    _same_layout(call, dst, pred, "dst", "predicate")
    if isinstance(src, Tensor):
        _need(src, call, "src")
        _same_layout(call, dst, src, "dst", "src")
        if src.buffer == PSUM and pred.buffer == PSUM:
            raise NkiError("src and predicate cannot both be in PSUM", call)
        if src.dtype != dst.dtype:
            raise NkiError(f"src ({src.dtype}) and dst ({dst.dtype}) must have the same dtype", call)
        dl, sl, pl = _levels(call, dst, src, pred)
        ins = [ap_json(src, sl), ap_json(pred, pl)]
    else:
        dl, pl = _levels(call, dst, pred)
        ins = [imm(_number_arg(src, call, "src")), ap_json(pred, pl)]
    builder(call).emit("CopyPredicated", call, "DVE", ins, [ap_json(dst, dl)], reverse_pred=bool(a["reverse_pred"]))
    dst._alloc.written = True
    return dst if legacy else None


def _number_arg(x: Any, call: str, what: str) -> float:
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    raise NkiError(f"{what} must be a tile or a number, got {type(x).__name__}", call)


def nc_stream_shuffle(*args, **kw):
    """``dst[32q + i] = src[32q + mask[i]]`` per 32-partition quadrant, 255 leaving the
    partition alone (BIR ``StreamShuffle``)."""
    call = "nc_stream_shuffle"
    a, legacy = _bind(call, args, kw, ("dst", "src", "shuffle_mask"), ("src", "shuffle_mask"),
                      {"name": None, "mask": None, "dtype": None})
    src = _need(a["src"], call, "src")
    dst = _result(call, src.shape, src.dtype) if legacy else _need(a["dst"], call, "dst")
    m = [int(v) for v in a["shuffle_mask"]]
    if len(m) != 32 or any(not (0 <= v < 32 or v == 255) for v in m):
        raise NkiError("shuffle_mask holds 32 entries, each in 0..31 or 255", call)
    if src.dtype != dst.dtype or src.free_size != dst.free_size:
        raise NkiError("src and dst must have the same dtype and elements per partition", call)
    dl, sl = levels_of(dst, call=call), levels_of(src, call=call)
    builder(call).emit("StreamShuffle", call, "DVE", [ap_json(src, sl)], [ap_json(dst, dl)], mask=m)
    dst._alloc.written = True
    return dst if legacy else None


def max8(*args, **kw):
    """The 8 largest values of each partition, descending (BIR ``Max``)."""
    call = "max8"
    a, legacy = _bind(call, args, kw, ("dst", "src"), ("src",), {"name": None, "mask": None, "dtype": None})
    src = _need(a["src"], call, "src")
    if not 8 <= src.free_size <= 16384:
        raise NkiError(f"src holds {src.free_size} elements per partition; max8 takes 8 to 16384", call)
    dst = _result(call, (src.partitions, 8), _dtype_or(a["dtype"], src.dtype)) if legacy else _need(a["dst"], call, "dst")
    if dst.partitions != src.partitions or dst.free_size != 8:
        raise NkiError(f"dst {dst.shape} must be ({src.partitions}, 8)", call)
    builder(call).emit("Max", call, "DVE", [ap_json(src, levels_of(src, call=call))], [ap_json(dst, levels_of(dst, call=call))])
    dst._alloc.written = True
    return dst if legacy else None


def nc_find_index8(*args, **kw):
    """For each of 8 values per partition, the index of its first unused match in ``data``
    (BIR ``MaxIndex``; uint32 or uint16 indices, all ones when absent)."""
    call = "nc_find_index8"
    a, legacy = _bind(call, args, kw, ("dst", "data", "vals"), ("data", "vals"), {"name": None, "mask": None, "dtype": None})
    data = _need(a["data"], call, "data")
    vals = _need(a["vals"], call, "vals")
    dst = _result(call, (data.partitions, 8), _dtype_or(a["dtype"], np.uint32)) if legacy else _need(a["dst"], call, "dst")
    if dst.dtype not in (np.dtype(np.uint32), np.dtype(np.uint16)):
        raise NkiError(f"dst must be uint32 or uint16, got {dst.dtype}", call)
    if vals.free_size != 8 or dst.free_size != 8:
        raise NkiError("vals and dst hold 8 values per partition", call)
    builder(call).emit("MaxIndex", call, "DVE", [ap_json(data, levels_of(data, call=call)), ap_json(vals, levels_of(vals, call=call))],
                       [ap_json(dst, levels_of(dst, call=call))])
    dst._alloc.written = True
    return dst if legacy else None


def nc_match_replace8(*args, **kw):
    """``data`` with the first unused match of each of 8 values replaced by ``imm`` (BIR
    ``MatchReplace``; ``MaxIndexAndMatchReplace`` when ``dst_idx`` also takes the positions)."""
    call = "nc_match_replace8"
    a, legacy = _bind(call, args, kw, ("dst", "data", "vals", "imm"), ("data", "vals", "imm"),
                      {"dst_idx": None, "name": None, "mask": None, "dtype": None})
    data = _need(a["data"], call, "data")
    vals = _need(a["vals"], call, "vals")
    dst = _result(call, data.shape, _dtype_or(a["dtype"], data.dtype)) if legacy else _need(a["dst"], call, "dst")
    _same_layout(call, dst, data, "dst", "data")
    if vals.free_size != 8:
        raise NkiError("vals holds 8 values per partition", call)
    dl, sl = _levels(call, dst, data)
    outs = [ap_json(dst, dl)]
    op = "MatchReplace"
    if a["dst_idx"] is not None:
        idx = _need(a["dst_idx"], call, "dst_idx")
        if idx.free_size != 8 or idx.dtype not in (np.dtype(np.uint32), np.dtype(np.uint16)):
            raise NkiError("dst_idx holds 8 uint32 or uint16 values per partition", call)
        outs.append(ap_json(idx, levels_of(idx, call=call)))
        op = "MaxIndexAndMatchReplace"
        idx._alloc.written = True
    builder(call).emit(op, call, "DVE", [ap_json(data, sl), ap_json(vals, levels_of(vals, call=call))], outs,
                       imm_value=_f(a["imm"]))
    dst._alloc.written = True
    return dst if legacy else None


def exponential(*args, **kw):
    """``dst = exp(src - max_value)`` on the Vector Engine, optionally summed per partition into
    the accumulator registers and read into ``reduce_res`` (BIR ``Exponential`` +
    ``DveReadAccumulator``). NeuronCore-v4 only (AWS exponential)."""
    call = "exponential"
    a, legacy = _bind(call, args, kw, ("dst", "src"), ("src",),
                      {"max_value": 0.0, "reduce_res": None, "reduce_cmd": reduce_cmd.idle, "reduce_init": 0.0,
                       "name": None, "mask": None, "dtype": None})
    b = builder(call)
    if b.arch != "gen4":
        raise NkiError(f"nisa.exponential runs on NeuronCore-v4 (trn3) only; the target is {b.arch}", call)
    src = _need(a["src"], call, "src")
    dst = _result(call, src.shape, _dtype_or(a["dtype"], src.dtype)) if legacy else _need(a["dst"], call, "dst")
    _same_layout(call, dst, src, "dst", "src")
    cmd = a["reduce_cmd"]
    if isinstance(cmd, (int, np.integer)):
        cmd = reduce_cmd(int(cmd))
    dl, sl = _levels(call, dst, src)
    ins = [ap_json(src, sl), _scalar_operand(a["max_value"], src, call, "max_value")]
    acc = {reduce_cmd.load_reduce: "LoadAccumulate"}.get(cmd, _REDUCE_CMD.get(cmd))
    if cmd == reduce_cmd.load_reduce:
        ins.append(_scalar_operand(a["reduce_init"], src, call, "reduce_init"))
    b.emit("Exponential", call, "DVE", ins, [ap_json(dst, dl)], acc=acc)
    dst._alloc.written = True
    if a["reduce_res"] is not None:
        r = _need(a["reduce_res"], call, "reduce_res")
        if r.partitions != src.partitions or r.free_size != 1:
            raise NkiError(f"reduce_res {r.shape} must be ({src.partitions}, 1)", call)
        b.emit("DveReadAccumulator", call, "DVE", [], [ap_json(r, levels_of(r, call=call))])
        r._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# Documented calls birsim.nki does not trace yet


def _unsupported(name: str):
    def f(*args, **kw):
        raise NkiError(f"nki.isa.{name} is not supported by birsim.nki yet", name)

    f.__name__ = name
    f.__doc__ = "Not supported by birsim.nki yet: raises NkiError naming the kernel line."
    return f


for _n in (
    "sendrecv", "topk",
):
    globals()[_n] = _unsupported(_n)
del _n


# ---------------------------------------------------------------------------------------------
# MX (microscaling): quantize_mx on the Vector Engine, nc_matmul_mx on the Tensor Engine

_MX_DATA = ("float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4")
_MX_SCALE = (np.dtype(np.uint8), np.dtype(T.ml_dtypes.float8_e8m0fnu))


def _mx_gen4(call: str) -> None:
    arch = builder(call).arch
    if arch != "gen4":
        raise NkiError(
            f"nki.isa.{call} is available only on NeuronCore-v4 (trn3); this kernel is traced for {arch} "
            "(set platform_target='trn3' or NEURON_PLATFORM_TARGET_OVERRIDE=trn3)",
            call,
        )


def _mx_rows(call: str, t: Tensor, what: str) -> int:
    """The first partition of an MX operand, whose partitions must be consecutive."""
    pitch = T.pitch_of(t)
    if t.partitions > 1 and t._strides[t._pdim] != pitch:
        raise NkiError(f"{what} {t.shape} must cover consecutive partitions (partition step {t._strides[t._pdim]}, "
                       f"a partition holds {pitch})", call)
    return t._offset // pitch


def _mx_data(call: str, t: Tensor, what: str) -> int:
    """An x4 data tile (or quantize_mx's source): SBUF, consecutive partitions from a quadrant
    boundary, a multiple of 32 of them. Returns its first partition."""
    first = _mx_rows(call, t, what)
    if t.partitions % 32:
        raise NkiError(f"the partition size of {what} {t.shape} must be a multiple of 32 (at most 128)", call)
    if first % 32:
        raise NkiError(f"{what} starts at partition {first}; MX tiles start on a quadrant boundary (0, 32, 64, 96), "
                       "where their scales' quadrants begin", call)
    return first


def _mx_scale(call: str, scale: Any, data: Tensor, first: int, what: str, data_what: str) -> Tensor:
    """An MX scale tile for ``data`` (first partition ``first``): uint8 / float8_e8m0fnu in
    SBUF, one column per x4 column; the block of partitions 8b..8b+7 has its scales in partition
    32·(b // 4) + b % 4 counted from the tile's first partition, which is the data's first plus
    0, 4, 8 or 12 (AWS quantize_mx, the MX deep dive's scale layout and scale packing)."""
    scale = _need(scale, call, what, (SBUF,))
    if scale.dtype not in _MX_SCALE:
        raise NkiError(f"{what} must be float8_e8m0fnu or uint8, got {T.dtype_name(scale.dtype)}", call)
    if scale.free_size != data.free_size:
        raise NkiError(f"{what} {scale.shape} must hold one scale column per {data_what} column: "
                       f"{data.free_size} per partition, got {scale.free_size}", call)
    s0 = _mx_rows(call, scale, what)
    if s0 - first not in (0, 4, 8, 12):
        raise NkiError(f"{what} starts at partition {s0}; the scales of {data_what} (from partition {first}) go at "
                       f"offset 0, 4, 8 or 12 of its quadrants: partition {first}, {first + 4}, {first + 8} or "
                       f"{first + 12}", call)
    blocks = data.partitions // 8
    need = 32 * ((blocks - 1) // 4) + (blocks - 1) % 4 + 1
    if scale.partitions < need:
        if data.partitions > 32:
            raise NkiError(f"{what} {scale.shape} is too short: the scales of a {data.partitions}-partition "
                           f"{data_what} spread over its quadrants (the first 4 partitions of each), so it needs "
                           f"{need} partitions from its first, got {scale.partitions}", call)
        raise NkiError(f"{what} {scale.shape} needs {need} partitions (one per block of 8 partitions of "
                       f"{data_what}), got {scale.partitions}", call)
    return scale


def _mx_levels(call: str, t: Tensor, what: str) -> List[List[int]]:
    lv = levels_of(t, call=call)
    if len(lv) > 2:
        raise NkiError(f"{what} {t.shape} must have one contiguous free dimension", call)
    return lv


def quantize_mx(*args, **kw):
    """MXFP8 quantization on the Vector Engine (BIR ``QuantizeMx``, NeuronCore-v4): each block of
    8 partitions × 4 consecutive values of ``src`` (fp16 / bf16) gets the scale byte
    ``⌊log₂ amax⌋ − (Emax − 1) + 127`` in ``dst_scale`` and its values, divided by the scale,
    packed four to an ``_x4`` container of ``dst`` (AWS quantize_mx)."""
    call = "quantize_mx"
    a, _ = _bind(call, args, kw, ("dst", "src", "dst_scale"), ("dst", "src", "dst_scale"), {"name": None})
    _mx_gen4(call)
    dst = _need(a["dst"], call, "dst", (SBUF,))
    src = _need(a["src"], call, "src", (SBUF,))
    if src.dtype not in (np.dtype(np.float16), np.dtype(T.ml_dtypes.bfloat16)):
        raise NkiError(f"src must be float16 or bfloat16, got {T.dtype_name(src.dtype)}", call)
    dn = T.dtype_name(dst.dtype)
    if dn == "float4_e2m1fn_x4":
        raise NkiError("quantize_mx writes MXFP8 only (float8_e5m2_x4 or float8_e4m3fn_x4), not float4_e2m1fn_x4: "
                       "quantize to FP4 on the host; nc_matmul_mx reads FP4", call)
    if dn not in _MX_DATA:
        raise NkiError(f"dst must be float8_e5m2_x4 or float8_e4m3fn_x4, got {dn}", call)
    first = _mx_data(call, src, "src")
    if _mx_rows(call, dst, "dst") != first:
        raise NkiError(f"dst starts at partition {_mx_rows(call, dst, 'dst')}, src at {first}: quantize_mx keeps "
                       "the partitions", call)
    if src.free_size % 4:
        raise NkiError(f"the free size of src {src.shape} must be a multiple of 4", call)
    if dst.partitions != src.partitions or dst.free_size * 4 != src.free_size:
        raise NkiError(f"dst {dst.shape} must have src's {src.partitions} partitions and a quarter of its "
                       f"{src.free_size} elements per partition ({src.free_size // 4} {dn})", call)
    scale = _mx_scale(call, a["dst_scale"], dst, first, "dst_scale", "dst")
    sl, dl, cl = levels_of(src, call=call), levels_of(dst, call=call), levels_of(scale, call=call)
    builder(call).emit("QuantizeMx", call, "DVE", [ap_json(src, sl)], [ap_json(dst, dl), ap_json(scale, cl)])
    dst._alloc.written = True
    scale._alloc.written = True
    return None


def nc_matmul_mx(*args, **kw):
    """MXFP8 / MXFP4 matrix multiplication on the Tensor Engine (BIR ``MatmultMx``,
    NeuronCore-v4): ``dst = dequant(stationary).T @ dequant(moving)`` over the partitions and the
    four lanes of each ``_x4`` element, each value scaled by 2^(scale − 127) of its 8 × 4 block
    (AWS nc_matmul_mx). ``accumulate`` as nc_matmul's."""
    call = "nc_matmul_mx"
    params = ("dst", "stationary", "moving", "stationary_scale", "moving_scale")
    a, _ = _bind(call, args, kw, params, params, {"tile_position": None, "tile_size": None, "accumulate": None,
                                                   "name": None})
    _mx_gen4(call)
    tiles = _pe_tile(call, a["tile_position"], a["tile_size"], False)
    if tiles is not None and (tiles["tile_size"][1] != 128 or tiles["tile_position"][1] != 0):
        raise NkiError("nc_matmul_mx tiles rows only: tile_size (rows, 128) at tile_position (start, 0) "
                       "(AWS nc_matmul_mx)", call)
    dst = _need(a["dst"], call, "dst", (PSUM,))
    st = _need(a["stationary"], call, "stationary", (SBUF,))
    mv = _need(a["moving"], call, "moving", (SBUF,))
    for t, what in ((st, "stationary"), (mv, "moving")):
        if T.dtype_name(t.dtype) not in _MX_DATA:
            raise NkiError(f"{what} must be float8_e5m2_x4, float8_e4m3fn_x4 or float4_e2m1fn_x4, got "
                           f"{T.dtype_name(t.dtype)}", call)
    f32, bf16 = np.dtype(np.float32), np.dtype(T.ml_dtypes.bfloat16)
    if dst.dtype not in (f32, bf16):
        raise NkiError(f"dst must be float32 or bfloat16, got {T.dtype_name(dst.dtype)}", call)
    K, M, N = st.partitions, st.free_size, mv.free_size
    if mv.partitions != K:
        raise NkiError(f"the contraction (partition) dims differ: stationary {st.shape} has {K}, moving {mv.shape} "
                       f"has {mv.partitions}", call)
    s0 = _mx_data(call, st, "stationary")
    m0 = _mx_data(call, mv, "moving")
    if M % 2 or M > 128:
        raise NkiError(f"the free size of stationary {st.shape} must be even and at most 128, got {M}", call)
    nmax = 4096 if dst.dtype == f32 else 8192
    if N > nmax:
        raise NkiError(f"the free size of moving {mv.shape} exceeds {nmax} (all of PSUM for a "
                       f"{T.dtype_name(dst.dtype)} dst)", call)
    if dst.partitions != M or dst.free_size != N:
        raise NkiError(f"dst {dst.shape} must be ({M}, {N}) for stationary {st.shape} and moving {mv.shape}", call)
    if tiles is not None and K > tiles["tile_size"][0]:
        raise NkiError(f"the PE tile of {tiles['tile_size'][0]} rows does not hold stationary's {K} partitions "
                       "(AWS nc_matmul_mx: the stationary tile size must not exceed tile_size)", call)
    st_scale = _mx_scale(call, a["stationary_scale"], st, s0, "stationary_scale", "stationary")
    mv_scale = _mx_scale(call, a["moving_scale"], mv, m0, "moving_scale", "moving")
    stl, mvl, dl = _mx_levels(call, st, "stationary"), _mx_levels(call, mv, "moving"), _mx_levels(call, dst, "dst")
    # AWS allows all 8 banks (moving free size up to 4096 / 8192), as birsim's gen4 MatmultMx does
    b = builder(call)
    key = (dst._offset, tuple(map(tuple, dl)))
    regions = b.mm_regions.setdefault(dst._alloc.name, set())
    if a["accumulate"] is None:
        flag = 4 if key in regions else 0
    else:
        flag = 4 if a["accumulate"] else 0
    regions.add(key)
    ins = [ap_json(mv, mvl), ap_json(st, stl), ap_json(mv_scale, levels_of(mv_scale, call=call)),
           ap_json(st_scale, levels_of(st_scale, call=call))]
    b.emit("MatmultMx", call, "PE", ins, [ap_json(dst, dl)], accumulation_flag=flag | 2, **(tiles or {}))
    dst._alloc.written = True
    return None


from ._gather import (  # noqa: E402
    activate2, dma_transpose, local_gather, nc_n_gather, nonzero_with_count, range_select, select_reduce,
    sequence_bounds, tensor_partition_reduce, tensor_scalar_cumulative,
)

from ._dma_compute import dma_compute  # noqa: E402,F401

# Random numbers (_random), registers, core_barrier, sub-version (_control)
from ._control import (  # noqa: E402,F401
    VirtualRegister, core_barrier, get_nc_sub_version, register_alloc, register_load, register_move, register_store,
)
from ._random import dropout, rand2, rand_get_state, rand_set_state, rng, set_rng_seed  # noqa: E402,F401
