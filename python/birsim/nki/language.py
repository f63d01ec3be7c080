"""``nki.language`` for birsim: dtypes, buffers, tensor creation, loads and stores, loops,
SPMD program ids, index expressions, and the element-wise / activation / reduction / matmul
calls that AWS documents as one ISA operation, each traced into its BIR instruction(s)
(``docs/nki.md`` has the table). Loops (``affine_range``, ``sequential_range``,
``static_range``, ``dynamic_range`` with int bounds) are Python ranges: the kernel is unrolled
while tracing (``loops="bir"`` folds affine / sequential ranges into BIR ``Loop`` nodes,
``_loops``); ``fori_loop``, ``while_loop`` and ``dynamic_range`` over a register are BIR dynamic
loops (``_control``).
"""

from __future__ import annotations

import builtins
from typing import Optional, Tuple

import ml_dtypes
import numpy as np

from . import _tracer as T
from . import _control
from . import _gather
from . import _random
from . import isa as _isa
from ._index import SKIP, DynSlice, IndexExpr, arange, mask_active, mask_region, mgrid, restrict  # noqa: F401
from ._tracer import HBM, PSUM, SBUF, NkiError, ParDim, Tensor, builder

# ---------------------------------------------------------------------------------------------
# dtypes (NumPy / ml_dtypes dtypes, usable wherever NumPy takes a dtype)

bool_ = np.dtype(np.uint8)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
class _Limits:
    """``nl.fp32`` and friends: the dtype (NumPy takes it wherever a dtype goes, through its
    ``dtype`` attribute) with ``min`` / ``max``, as the older API's ``nl.fp32.min``."""

    def __init__(self, dt):
        self.dtype = np.dtype(dt)
        info = ml_dtypes.finfo(self.dtype)
        self.min = float(info.min)
        self.max = float(info.max)

    def __repr__(self) -> str:
        return f"nl.{self.dtype}"


fp32 = _Limits(np.float32)
fp16 = _Limits(np.float16)
bf16 = _Limits(ml_dtypes.bfloat16)


class _Unsupported:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"nl.{self.name} (not supported by birsim.nki)"


tfloat32 = _Unsupported("tfloat32")
# 4x packed MX dtypes (nc_matmul_mx's data, quantize_mx's output): structured NumPy dtypes over
# their raw container, uint32 (four fp8 lanes) or uint16 (four fp4 lanes); see _tracer.X4
float8_e5m2_x4 = T.X4["float8_e5m2_x4"]
float8_e4m3fn_x4 = T.X4["float8_e4m3fn_x4"]
float4_e2m1fn_x4 = T.X4["float4_e2m1fn_x4"]

# ---------------------------------------------------------------------------------------------
# buffers


class MemoryRegion(str):
    """A buffer name (``nl.sbuf == 'sbuf'``)."""


sbuf = MemoryRegion("sbuf")
psum = MemoryRegion("psum")
hbm = MemoryRegion("hbm")
private_hbm = MemoryRegion("private_hbm")
shared_hbm = MemoryRegion("shared_hbm")


def is_hbm(buffer) -> bool:
    return T.buffer_kind(buffer)[0] == HBM


def is_on_chip(buffer) -> bool:
    return T.buffer_kind(buffer)[0] != HBM


def is_psum(buffer) -> bool:
    return T.buffer_kind(buffer)[0] == PSUM


def is_sbuf(buffer) -> bool:
    return T.buffer_kind(buffer)[0] == SBUF


class _TileSize:
    """Hardware tile-size constants (AWS nki.language.tile_size)."""

    pmax = 128
    psum_fmax = 512
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_num_banks = 8

    @property
    def sbuf_fmax_bytes(self) -> int:
        return T.SB_BYTES[_arch()]

    @property
    def sbuf_fmax(self) -> int:
        return T.SB_BYTES[_arch()] // 4

    @property
    def total_available_sbuf_size(self) -> int:
        return T.SB_BYTES[_arch()]

    @property
    def sbuf_size_bytes(self) -> int:
        return T.SB_BYTES[_arch()] * 128


def _arch() -> str:
    b = getattr(T._current, "builder", None)
    return b.arch if b is not None else T.target_arch()


tile_size = _TileSize()


def static_cast(x, dtype):
    """The older API's host-side cast of a NumPy array (outside kernels): ``x.astype(dtype)``."""
    if isinstance(x, Tensor):
        raise NkiError("nl.static_cast casts host arrays; inside a kernel use nl.copy(x, dtype=...)", "static_cast")
    return np.asarray(x).astype(T.as_dtype(dtype, "static_cast"))


def par_dim(n: int) -> ParDim:
    """Marks the partition dimension of an on-chip shape."""
    return ParDim(int(n))


def ds(start, size) -> DynSlice:
    """The slice ``start:start+size``."""
    return DynSlice(start, size)


# ---------------------------------------------------------------------------------------------
# loops and SPMD


def _range(call: str, start, stop=None, step=1):
    for v in (start, stop, step):
        if isinstance(v, Tensor):
            raise NkiError("loop bounds must be Python integers (a runtime bound is not supported yet)", call)
    if stop is None:
        return builtins.range(int(start))
    return builtins.range(int(start), int(stop), int(step))


def _folded(call: str, r):
    b = getattr(T._current, "builder", None)
    if b is not None and b.loops == "bir":
        from ._loops import bir_range

        return bir_range(call, r)
    return r


def affine_range(start, stop=None, step=1, **hints):
    """A Python range: the loop unrolls while tracing (``loops="bir"``: folded into a BIR
    ``Loop`` where its iterations allow, ``birsim.nki._loops``)."""
    return _folded("affine_range", _range("affine_range", start, stop, step))


def sequential_range(start, stop=None, step=1, **hints):
    """As ``affine_range``."""
    return _folded("sequential_range", _range("sequential_range", start, stop, step))


def static_range(start, stop=None, step=1, **hints):
    """A Python range: the loop unrolls while tracing."""
    return _range("static_range", start, stop, step)


def dynamic_range(start, stop=None, step=1, **hints):
    """With a register bound (``nisa.register_alloc``): a BIR ``DynamicForLoop`` whose body is
    the ``for`` body traced once, the loop variable a register. With int bounds: a Python range
    (the loop unrolls)."""
    if any(isinstance(v, _control.VirtualRegister) for v in (start, stop)):
        return _control.dynamic_range(start, stop, step)
    return _range("dynamic_range", start, stop, step)


fori_loop = _control.fori_loop
while_loop = _control.while_loop


class nc(int):
    """``nl.nc(n)``: n physical NeuronCores in a launch-grid dimension. Where instances run does
    not change what they compute, so it is the integer n (``nl.nc(2) * 2`` is 4)."""


def spmd_dim(*sizes) -> int:
    """A launch-grid dimension split over sub-dimensions (``nl.spmd_dim(nl.nc(2), 2)``): its
    size is their product; program ids run over all of it."""
    n = 1
    for k in sizes:
        n *= int(k)
    return n


def program_id(axis: int = 0) -> int:
    """The SPMD program id along ``axis`` of the instance being traced."""
    b = builder("program_id")
    if not 0 <= int(axis) < len(b.grid):
        raise NkiError(f"axis {axis} is outside the {len(b.grid)}-D launch grid {b.grid}", "program_id")
    return b.program_id[int(axis)]


def num_programs(axes: int = 0) -> int:
    b = builder("num_programs")
    if isinstance(axes, (tuple, list)):
        return int(np.prod([b.grid[int(a)] for a in axes]))
    if not 0 <= int(axes) < len(b.grid):
        raise NkiError(f"axis {axes} is outside the {len(b.grid)}-D launch grid {b.grid}", "num_programs")
    return b.grid[int(axes)]


def program_ndim() -> int:
    return len(builder("program_ndim").grid)


# ---------------------------------------------------------------------------------------------
# creation


def ndarray(shape, dtype, buffer=sbuf, name: str = "", address=None, **kw) -> Tensor:
    """A new tensor (uninitialised) on ``buffer``: SBUF/PSUM tiles get an address in their
    generation's capacity (from its live range); HBM tensors a DRAM location (``shared_hbm`` ones are shared by every
    SPMD program instance)."""
    call = "ndarray"
    kind, shared = T.buffer_kind(buffer, call)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return builder(call).new_alloc(tuple(shape), T.as_dtype(dtype, call), kind, call, name=name, shared=shared,
                                   manual=_manual(buffer), address=address)


def _manual(buffer):
    """The direct allocation a buffer argument carries (``nki.compiler.sbuf.mod_alloc(...)``)."""
    return buffer if isinstance(buffer, T.ManualAlloc) else None


def _filled(call: str, shape, value, dtype, buffer, name) -> Tensor:
    kind, shared = T.buffer_kind(buffer, call)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    t = builder(call).new_alloc(tuple(shape), T.as_dtype(dtype, call), kind, call, name=name, shared=shared,
                                manual=_manual(buffer))
    _isa.emit_memset(call, t, value)
    return t


def zeros(shape, dtype, buffer=sbuf, name: str = "", **kw) -> Tensor:
    """A new tensor filled with 0 (BIR ``Memset``)."""
    return _filled("zeros", shape, 0, dtype, buffer, name)


def ones(shape, dtype, buffer=sbuf, name: str = "", **kw) -> Tensor:
    """A new tensor filled with 1 (BIR ``Memset``)."""
    return _filled("ones", shape, 1, dtype, buffer, name)


def full(shape, fill_value, dtype, buffer=sbuf, name: str = "", **kw) -> Tensor:
    """A new tensor filled with ``fill_value`` (BIR ``Memset`` of its bits in ``dtype``)."""
    return _filled("full", shape, fill_value, dtype, buffer, name)


def _like_buffer(x: Tensor, buffer):
    if buffer is not None:
        return buffer
    return {SBUF: sbuf, PSUM: psum, HBM: shared_hbm}[x.buffer]


def empty_like(x: Tensor, dtype=None, buffer=None, name: str = "") -> Tensor:
    return ndarray(x.shape, x.dtype if dtype is None else dtype, _like_buffer(x, buffer), name)


def zeros_like(x: Tensor, dtype=None, buffer=None, name: str = "") -> Tensor:
    return _filled("zeros_like", x.shape, 0, x.dtype if dtype is None else dtype, _like_buffer(x, buffer), name)


def ones_like(x: Tensor, dtype=None, buffer=None, name: str = "") -> Tensor:
    return _filled("ones_like", x.shape, 1, x.dtype if dtype is None else dtype, _like_buffer(x, buffer), name)


def full_like(x: Tensor, fill_value, dtype=None, buffer=None, name: str = "") -> Tensor:
    return _filled("full_like", x.shape, fill_value, x.dtype if dtype is None else dtype, _like_buffer(x, buffer), name)


# ---------------------------------------------------------------------------------------------
# loads and stores


def load(src: Tensor, dtype=None, mask=None, **kw) -> Optional[Tensor]:
    """Copies an HBM view into a new SBUF tile of its shape (BIR ``Load``; a dtype change casts
    through fp32)."""
    call = "load"
    region = mask_region(mask, call)
    if not isinstance(src, Tensor) or src.buffer != HBM:
        raise NkiError(f"src must be an HBM tensor, got {src!r}", call)
    dt = src.dtype if dtype is None else T.as_dtype(dtype, call)
    dst = builder(call).new_alloc(src.shape, dt, SBUF, call)
    if _gather.is_vector(src):
        if region:
            raise NkiError("a mask on an indirect (tile-indexed) load is not supported", call)
        if region is not SKIP:
            _gather.emit_vector_dma(call, dst, src)
        return dst
    if region is not SKIP:
        _isa.emit_dma(call, restrict(dst, region, call), restrict(src, region, call), "Load")
    return _produced(dst, region)


def store(dst: Tensor, value: Tensor, mask=None, **kw) -> None:
    """Copies an SBUF tile into an HBM view (BIR ``Save``); a PSUM tile is first copied to SBUF
    (``TensorCopy``), as the older nl.store documents."""
    call = "store"
    region = mask_region(mask, call)
    if region is SKIP:
        return None
    if not isinstance(dst, Tensor) or dst.buffer != HBM:
        raise NkiError(f"dst must be an HBM tensor, got {dst!r}", call)
    if isinstance(value, (int, float)):
        raise NkiError("value must be a tile", call)
    if not isinstance(value, Tensor) or value.buffer == HBM:
        raise NkiError(f"value must be an SBUF or PSUM tile, got {value!r}", call)
    if _gather.is_vector(dst):
        if region:
            raise NkiError("a mask on an indirect (tile-indexed) store is not supported", call)
    else:
        dst, value = restrict(dst, region, call), restrict(value, region, call)
    if value.buffer == PSUM:
        # the older nl.store documents "an extra copy" from PSUM to SBUF first
        sb = builder(call).new_alloc(_tile_shape(value), value.dtype, SBUF, call)
        _isa.emit_copy(call, sb, value)
        value = sb
    if value.size != dst.size:
        raise NkiError(f"dst {dst.shape} and value {value.shape} hold different numbers of elements", call)
    if _gather.is_vector(dst):
        _gather.emit_vector_dma(call, dst, value)
        return None
    _isa.emit_dma(call, dst, value, "Save")
    return None


def load_transpose2d(src: Tensor, dtype=None, mask=None) -> Optional[Tensor]:
    """Loads the transpose of a 2-D HBM view (a ``Load`` whose source AP walks columns first)."""
    call = "load_transpose2d"
    if not mask_active(mask, call):
        return None
    if not isinstance(src, Tensor) or src.buffer != HBM or src.ndim != 2:
        raise NkiError("src must be a 2-D HBM tensor", call)
    return load(src.permute((1, 0)), dtype=dtype)


# ---------------------------------------------------------------------------------------------
# element-wise


_FLOAT_RANK = {
    np.dtype(np.float32): 4,
    np.dtype(np.float16): 2,
    np.dtype(ml_dtypes.bfloat16): 2,
}


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """NKI's documented type promotion for ``nki.language`` element-wise calls."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    fa, fb = T.is_float(a), T.is_float(b)
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if not fa and not fb:
        if {a, b} == {np.dtype(np.int32), np.dtype(np.uint32)}:
            return float32
        return np.promote_types(a, b)
    if float32 in (a, b):
        return float32
    if {a, b} == {float16, bfloat16}:
        return float32
    if a.itemsize == 1 and b.itemsize == 1:
        return bfloat16
    return a if a.itemsize > b.itemsize else b


def _out_dtype(call: str, dtype, *xs) -> np.dtype:
    if dtype is not None:
        return T.as_dtype(dtype, call)
    tiles = [x for x in xs if isinstance(x, Tensor)]
    dt = tiles[0].dtype
    for t in tiles[1:]:
        dt = _promote(dt, t.dtype)
    if T.is_int(dt) and any(isinstance(x, (float, np.floating)) for x in xs):
        dt = float32
    return dt


def _onchip(x: Tensor, call: str) -> Tensor:
    if x.buffer == HBM:
        raise NkiError(f"{x.name} is in HBM; load it into SBUF first (nl.load)", call)
    return x


def _partition_broadcast(call: str, x: Tensor, parts: int) -> Tensor:
    """A ``(1, ...)`` tile copied to ``parts`` partitions by a DMA whose source partition step
    is 0 (compute engines read their own partition only)."""
    shape = (parts,) + tuple(n for d, n in enumerate(x.shape) if d != x._pdim)
    out = builder(call).new_alloc(shape, x.dtype, SBUF, call)
    rest = [d for d in range(x.ndim) if d != x._pdim]
    src = x._view([parts] + [x.shape[d] for d in rest], [0] + [x._strides[d] for d in rest], x._offset, 0)
    _isa.emit_dma(call, out, src)
    return out


def _binary(call: str, op: str, x, y, dtype=None, mask=None):
    region = mask_region(mask, call)
    tx, ty = isinstance(x, Tensor), isinstance(y, Tensor)
    if not tx and not ty:
        raise NkiError("at least one operand must be a tile", call)
    out_dt = _out_dtype(call, dtype, x, y)
    if call in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal") and dtype is None:
        out_dt = bool_
    b = builder(call)
    R = lambda v: restrict(v, region, call)  # noqa: E731
    if tx and not ty:
        _onchip(x, call)
        out = b.new_alloc(_tile_shape(x), out_dt, SBUF, call)
        if region is not SKIP:
            _isa.emit_tensor_scalar(call, R(out), R(x), op, _number(y, call))
        return _produced(out, region)
    if ty and not tx:
        _onchip(y, call)
        out = b.new_alloc(_tile_shape(y), out_dt, SBUF, call)
        if region is not SKIP:
            _isa.emit_tensor_scalar(call, R(out), R(y), op, _number(x, call), rev0=True)
        return _produced(out, region)
    x, y = _onchip(x, call), _onchip(y, call)
    px, py = x.partitions, y.partitions
    if px != py:
        if px == 1:
            x = _partition_broadcast(call, x, py)
        elif py == 1:
            y = _partition_broadcast(call, y, px)
        else:
            raise NkiError(f"partition sizes {px} ({x.shape}) and {py} ({y.shape}) do not broadcast", call)
    if x.free_size != 1 and y.free_size == 1:
        out = b.new_alloc(_tile_shape(x), out_dt, SBUF, call)
        if region is not SKIP:
            _isa.emit_tensor_scalar(call, R(out), R(x), op, R(y))
        return _produced(out, region)
    if x.free_size == 1 and y.free_size != 1:
        out = b.new_alloc(_tile_shape(y), out_dt, SBUF, call)
        if region is not SKIP:
            _isa.emit_tensor_scalar(call, R(out), R(y), op, R(x), rev0=True)
        return _produced(out, region)
    xs, ys = x.shape, y.shape
    if xs != ys:
        try:
            shape = tuple(np.broadcast_shapes(xs, ys))
        except ValueError:
            raise NkiError(f"shapes {xs} and {ys} do not broadcast", call) from None
        x, y = _bview(x, shape, call), _bview(y, shape, call)
    out = b.new_alloc(x.shape if x._pdim == 0 else _tile_shape(x), out_dt, SBUF, call)
    if region is not SKIP:
        _isa.emit_tensor_tensor(call, R(out), R(x), R(y), op)
    return _produced(out, region)


def _produced(out: Tensor, region) -> Tensor:
    if isinstance(region, dict) and region:
        out._alloc.region = region
    return out


def _tile_shape(x: Tensor) -> Tuple[int, ...]:
    if x._pdim in (0, None):
        return x.shape
    return (x.shape[x._pdim],) + tuple(n for d, n in enumerate(x.shape) if d != x._pdim)


def _bview(x: Tensor, shape, call: str) -> Tensor:
    """A free-dim broadcast view (step 0 along the broadcast dims)."""
    pad = len(shape) - x.ndim
    if pad and x.on_chip:
        raise NkiError(f"cannot broadcast {x.shape} to {shape}: on-chip tiles keep the partition dim first", call)
    xs = (1,) * pad + x.shape
    st = (0,) * pad + x._strides
    strides = [0 if (n == 1 and m != 1) else s for n, m, s in zip(xs, shape, st)]
    pdim = None if x._pdim is None else x._pdim + pad
    return x._view(shape, strides, x._offset, pdim)


def _number(v, call: str) -> float:
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise NkiError(f"expected a tile or a number, got {type(v).__name__}", call)


def _make_binary(name: str, op: str):
    def f(x, y, dtype=None, mask=None, **kw):
        return _binary(name, op, x, y, dtype, mask)

    f.__name__ = name
    f._nki_name = name
    f.__doc__ = (
        f"``{name}(x, y)`` element-wise: BIR ``TensorTensor op={op}`` for two tiles, ``TensorScalar`` "
        f"for a tile and a number, ``TensorScalarPtr`` for a tile and a (P, 1) tile."
    )
    return f


add = _make_binary("add", "add")
subtract = _make_binary("subtract", "subtract")
multiply = _make_binary("multiply", "mult")
divide = _make_binary("divide", "divide")
maximum = _make_binary("maximum", "max")
minimum = _make_binary("minimum", "min")
power = _make_binary("power", "pow")
equal = _make_binary("equal", "is_equal")
not_equal = _make_binary("not_equal", "not_equal")
less = _make_binary("less", "is_lt")
less_equal = _make_binary("less_equal", "is_le")
greater = _make_binary("greater", "is_gt")
greater_equal = _make_binary("greater_equal", "is_ge")
bitwise_and = _make_binary("bitwise_and", "bitwise_and")
bitwise_or = _make_binary("bitwise_or", "bitwise_or")
bitwise_xor = _make_binary("bitwise_xor", "bitwise_xor")
left_shift = _make_binary("left_shift", "logical_shift_left")
right_shift = _make_binary("right_shift", "logical_shift_right")
logical_and = _make_binary("logical_and", "logical_and")
logical_or = _make_binary("logical_or", "logical_or")
logical_xor = _make_binary("logical_xor", "logical_xor")
abs_max = _make_binary("abs_max", "abs_max")
abs_min = _make_binary("abs_min", "abs_min")


def _unary_act(call: str, func: str, x, dtype=None, mask=None, **kw):
    region = mask_region(mask, call)
    if not isinstance(x, Tensor):
        raise NkiError("x must be a tile", call)
    _onchip(x, call)
    out = builder(call).new_alloc(_tile_shape(x), _out_dtype(call, dtype, x), SBUF, call)
    if region is not SKIP:
        _isa.emit_activation(call, restrict(out, region, call), func, restrict(x, region, call))
    return _produced(out, region)


def _make_act(name: str, func: str):
    def f(x, dtype=None, mask=None, **kw):
        return _unary_act(name, func, x, dtype, mask)

    f.__name__ = name
    f._nki_name = name
    f.__doc__ = f"``{name}(x)`` element-wise on the Scalar Engine (BIR ``Activation func={func}``)."
    return f


exp = _make_act("exp", "Exp")
log = _make_act("log", "Ln")
tanh = _make_act("tanh", "Tanh")
sigmoid = _make_act("sigmoid", "Sigmoid")
relu = _make_act("relu", "Relu")
rsqrt = _make_act("rsqrt", "Rsqrt")
sqrt = _make_act("sqrt", "Sqrt")
square = _make_act("square", "Square")
gelu = _make_act("gelu", "Gelu")
gelu_apprx_tanh = _make_act("gelu_apprx_tanh", "Gelu_apprx_tanh")
gelu_apprx_sigmoid = _make_act("gelu_apprx_sigmoid", "Gelu_apprx_sigmoid")
gelu_dx = _make_act("gelu_dx", "Derivative_Gelu")
gelu_apprx_sigmoid_dx = _make_act("gelu_apprx_sigmoid_dx", "Derivative_Gelu_apprx_sigmoid")
silu = _make_act("silu", "Silu")
silu_dx = _make_act("silu_dx", "Derivative_silu")
softplus = _make_act("softplus", "Softplus")
mish = _make_act("mish", "Mish")
erf = _make_act("erf", "Erf")
erf_dx = _make_act("erf_dx", "Derivative_Erf")
sin = _make_act("sin", "Sin")
arctan = _make_act("arctan", "Arctan")
sign = _make_act("sign", "Sign")
abs = _make_act("abs", "Abs")  # noqa: A001


def reciprocal(x, dtype=None, mask=None, **kw):
    """``1 / x`` in fp32 on the Vector Engine (BIR ``Reciprocal``)."""
    call = "reciprocal"
    region = mask_region(mask, call)
    _onchip(x, call)
    out = builder(call).new_alloc(_tile_shape(x), _out_dtype(call, dtype, x), SBUF, call)
    if region is not SKIP:
        _isa.emit_unary_op(call, "Reciprocal", restrict(out, region, call), restrict(x, region, call))
    return out


reciprocal._nki_name = "reciprocal"


def negative(x, dtype=None, mask=None, **kw):
    """``-x`` (BIR ``TensorScalar mult -1.0``)."""
    call = "negative"
    region = mask_region(mask, call)
    _onchip(x, call)
    out = builder(call).new_alloc(_tile_shape(x), _out_dtype(call, dtype, x), SBUF, call)
    if region is not SKIP:
        _isa.emit_tensor_scalar(call, restrict(out, region, call), restrict(x, region, call), "mult", -1.0)
    return _produced(out, region)


def copy(x, dtype=None, mask=None, **kw):
    """A copy of an SBUF/PSUM tile in a new SBUF tile (BIR ``TensorCopy``; a dtype change casts
    through fp32)."""
    call = "copy"
    region = mask_region(mask, call)
    if not isinstance(x, Tensor):
        raise NkiError("x must be a tile", call)
    _onchip(x, call)
    out = builder(call).new_alloc(_tile_shape(x), _out_dtype(call, dtype, x), SBUF, call)
    if region is not SKIP:
        _isa.emit_copy(call, restrict(out, region, call), restrict(x, region, call))
    return _produced(out, region)


copy._nki_name = "copy"


# ---------------------------------------------------------------------------------------------
# reductions


def _reduce(call: str, op: str, x, axis, dtype=None, keepdims=False, mask=None):
    region = mask_region(mask, call)
    if region not in (None, SKIP) and set(region) != {0}:
        raise NkiError("a mask on a reduction may only limit the partition axis", call)
    if not isinstance(x, Tensor):
        raise NkiError("x must be a tile", call)
    _onchip(x, call)
    x, axis = _reduced_last(x, axis, call)
    axes = _isa.reduce_axes(x, axis, call)
    out = builder(call).new_alloc(_isa.reduced_shape(x, axes, keepdims), _out_dtype(call, dtype, x), SBUF, call)
    if region is not SKIP:
        _isa.emit_reduce(call, restrict(out, region, call), restrict(x, region, call), op, axes)
    return _produced(out, region)


def _reduced_last(x: Tensor, axis, call: str):
    """The view with the reduced free axes moved last (a view only: the access pattern walks
    any order), so ``nl.sum(t, axis=[2, 4])`` reduces what NumPy would."""
    if isinstance(axis, (int, np.integer)):
        axis = [int(axis)]
    axes = sorted({int(a) % x.ndim for a in axis})
    if x._pdim in axes:
        return x, axis
    kept = [d for d in range(x.ndim) if d not in axes]
    if kept[0] != x._pdim:
        return x, axis
    order = kept + axes
    if order == list(range(x.ndim)):
        return x, axes
    v = x._view([x.shape[d] for d in order], [x._strides[d] for d in order], x._offset, 0)
    return v, list(range(len(kept), x.ndim))


def sum(x, axis, dtype=None, keepdims=False, mask=None, **kw):  # noqa: A001
    """Sum along trailing free axes (BIR ``TensorReduce op=add``)."""
    return _reduce("sum", "add", x, axis, dtype, keepdims, mask)


def max(x, axis, dtype=None, keepdims=False, mask=None, **kw):  # noqa: A001
    """Maximum along trailing free axes (BIR ``TensorReduce op=max``)."""
    return _reduce("max", "max", x, axis, dtype, keepdims, mask)


def min(x, axis, dtype=None, keepdims=False, mask=None, **kw):  # noqa: A001
    """Minimum along trailing free axes (BIR ``TensorReduce op=min``)."""
    return _reduce("min", "min", x, axis, dtype, keepdims, mask)


def mean(x, axis, dtype=None, keepdims=False, mask=None, **kw):
    """Mean along trailing free axes (BIR ``TensorReduce op=average``)."""
    return _reduce("mean", "average", x, axis, dtype, keepdims, mask)


def prod(x, axis, dtype=None, keepdims=False, mask=None, **kw):
    """Product along trailing free axes (BIR ``TensorReduce op=mult``)."""
    return _reduce("prod", "mult", x, axis, dtype, keepdims, mask)


sum._nki_name = "add"
max._nki_name = "max"
min._nki_name = "min"
mean._nki_name = "average"

# ---------------------------------------------------------------------------------------------
# matmul and transpose


def matmul(x, y, transpose_x: bool = False, mask=None, **kw):
    """``x @ y`` (or ``x.T @ y`` with ``transpose_x``) into a new fp32 PSUM tile (BIR
    ``Matmult``, x stationary, y moving). Without ``transpose_x`` the Tensor Engine first
    transposes x (``Matmult is_transpose`` into PSUM, then ``TensorCopy`` to SBUF)."""
    call = "matmul"
    if not mask_active(mask, call):
        return None
    for t, what in ((x, "x"), (y, "y")):
        if not isinstance(t, Tensor) or t.buffer == HBM:
            raise NkiError(f"{what} must be an SBUF tile, got {t!r}", call)
    b = builder(call)
    # a PSUM operand (an earlier nl.matmul / nl.transpose result) is first copied to SBUF,
    # where the Tensor Engine reads (ASSUMED: the older API lets language calls take any tile)
    x = copy(x) if x.buffer == PSUM else x
    y = copy(y) if y.buffer == PSUM else y
    st = x
    if not transpose_x and (x.partitions > 128 or x.free_size > 128):
        raise NkiError(f"x {x.shape} is transposed on the Tensor Engine first, which takes at most 128 × 128", call)
    if not transpose_x:
        tp = b.new_alloc((x.free_size, x.partitions), _isa.pe_transpose_dtype(x.dtype), PSUM, call)
        _isa.emit_pe_transpose(call, tp, x)
        st = b.new_alloc((x.free_size, x.partitions), x.dtype, SBUF, call)
        _isa.emit_copy(call, st, tp)
        del tp
    out = b.new_alloc((st.free_size, y.free_size), float32, PSUM, call)
    inst = _isa.emit_matmul(call, out, st, y, None)
    b.last_matmul = (inst, T.weakref.ref(out._alloc))
    return out


def _accumulate(acc: Tensor, other) -> Tensor:
    """``acc += other``: a fresh ``nl.matmul`` result accumulates straight into a PSUM ``acc``
    (the Matmult is retargeted: ACCUMULATE once the region holds a matmul result, overwrite for
    the first matmul into a fresh or zero-filled region); anything else is an element-wise add
    into ``acc``."""
    call = "add"
    b = builder(call)
    if (
        isinstance(other, Tensor)
        and acc.buffer == PSUM
        and b.last_matmul is not None
        and b.last_matmul[1]() is other._alloc
        and b.insts
        and b.insts[-1] is b.last_matmul[0]
    ):
        inst = b.last_matmul[0]
        if acc.partitions != other.partitions or acc.free_size != other.free_size:
            raise NkiError(f"cannot accumulate a {other.shape} matmul result into {acc.shape}", call)
        if acc.dtype != other.dtype:
            raise NkiError(f"the PSUM accumulator is {acc.dtype}, the matmul result {other.dtype}", call)
        dl = T.levels_of(acc, call=call)
        if len(dl) > 2:
            raise NkiError("the PSUM accumulator must have one contiguous free dimension", call)
        key = (acc._offset, tuple(map(tuple, dl)))
        regions = b.mm_regions.setdefault(acc._alloc.name, set())
        if key in regions:
            flag = 4
        elif "written" in regions:
            raise NkiError(
                "accumulating a matmul onto PSUM values another instruction wrote (undefined on "
                "NeuronCore-v2/v3, AWS nc_matmul; not supported by birsim.nki)",
                call,
            )
        else:
            # the first matmul into this region overwrites (zero-filled or fresh), as AWS's
            # accumulate=None inference does
            flag = 0
        regions.add(key)
        b.retarget(inst, [T.ap_json(acc, dl)])
        inst["accumulation_flag"] = flag | 2
        acc._alloc.written = True
        b.last_matmul = None
        return acc
    if isinstance(other, Tensor):
        _onchip(acc, call)
        _onchip(other, call)
        if other.free_size == 1 and acc.free_size != 1:
            _isa.emit_tensor_scalar(call, acc, acc, "add", other)
        else:
            o = other if other.shape == acc.shape else _bview(other, acc.shape, call)
            _isa.emit_tensor_tensor(call, acc, acc, o, "add")
        return acc
    _isa.emit_tensor_scalar(call, acc, _onchip(acc, call), "add", _number(other, call))
    return acc


def transpose(x, dtype=None, mask=None, **kw):
    """The partition ⇄ free transpose of a 2-D SBUF tile into a new PSUM tile on the Tensor
    Engine (BIR ``Matmult is_transpose``)."""
    call = "transpose"
    if not mask_active(mask, call):
        return None
    if not isinstance(x, Tensor):
        raise NkiError("x must be a tile", call)
    out_dt = _isa.pe_transpose_dtype(x.dtype)
    if dtype is not None and T.as_dtype(dtype, call) != out_dt:
        raise NkiError(f"the Tensor Engine transpose writes {out_dt}, not {T.as_dtype(dtype, call)}", call)
    if x.partitions > 128 or x.free_size > 128:
        raise NkiError(f"the Tensor Engine transposes at most 128 × 128, got {x.shape}", call)
    out = builder(call).new_alloc((x.free_size, x.partitions), out_dt, PSUM, call)
    _isa.emit_pe_transpose(call, out, x)
    return out


def broadcast_to(x, shape, dtype=None) -> Tensor:
    """``x`` broadcast to ``shape``: along free dims a step-0 view (no copy); along the
    partition dim (from 1 partition) a DMA copy whose source partition step is 0."""
    call = "broadcast_to"
    shape = tuple(int(n) for n in shape)
    if not isinstance(x, Tensor):
        raise NkiError("x must be a tile", call)
    if x.shape == shape and dtype is None:
        return x
    if len(shape) != x.ndim:
        raise NkiError(f"broadcast_to keeps the rank: {x.shape} -> {shape}", call)
    for n, m in zip(x.shape, shape):
        if n != m and n != 1:
            raise NkiError(f"{x.shape} does not broadcast to {shape}", call)
    v = _bview(x, shape, call)
    if x.on_chip and x.partitions == 1 and shape[x._pdim] != 1:
        pd = x._pdim
        st = list(v._strides)
        st[pd] = 0
        v = x._view(shape, st, x._offset, pd)
        out = builder(call).new_alloc(shape, x.dtype if dtype is None else T.as_dtype(dtype, call), SBUF, call)
        _isa.emit_dma(call, out, v)
        return out
    if dtype is not None and T.as_dtype(dtype, call) != x.dtype:
        return copy(v, dtype=dtype)
    return v


def expand_dims(x, axis):
    return x.expand_dim(axis)


# ---------------------------------------------------------------------------------------------
# assignment (``tile[...] = value``)


def _assign(view: Tensor, value, unheld: bool = False) -> None:
    call = "assign"
    if isinstance(value, Tensor):
        if value is view or (
            value._alloc is view._alloc
            and value._offset == view._offset
            and value.shape == view.shape
            and value._strides == view._strides
        ):
            return  # `t[...] += x` stores the accumulated view back onto itself
        if unheld and _write_in_place(view, value):
            return
        region = value._alloc.region
        if region and value._offset == 0 and value.shape == value._alloc.shape:
            # a masked call wrote only part of this fresh tile: copy that part
            view, value = restrict(view, region, call), restrict(value, region, call)
        if view.buffer == HBM or value.buffer == HBM:
            if PSUM in (view.buffer, value.buffer):
                raise NkiError("a DMA cannot access PSUM", call)
            _isa.emit_dma(call, view, value)
        else:
            _isa.emit_copy(call, view, value)
        return
    if isinstance(value, (int, float, np.integer, np.floating)):
        _isa.emit_memset(call, view, value)
        return
    raise NkiError(f"cannot assign {type(value).__name__} to a tensor", call)


def _write_in_place(view: Tensor, value: Tensor) -> bool:
    """``t[...] = nisa.call(...)`` where nothing else holds the call's fresh result: the call's
    instruction writes ``t[...]`` itself instead of a scratch tile plus a copy, as NKI's
    compiler does (``qk[i] = nisa.nc_matmul(...)`` keeps one PSUM bank per block, not two).
    The values are the same either way (the copy is exact: same dtype, same buffer); only
    when every condition below holds, else the copy is emitted."""
    b = builder("assign")
    a = value._alloc
    r = b.onchip.get(a.name)
    if (
        r is None
        or not b.insts
        or r.first != r.last
        or r.last != len(b.insts) - 1
        or a.region is not None
        or a.blocks is not None
        or value._offset != 0
        or value.shape != a.shape
        or view.buffer != value.buffer
        or view.shape != value.shape
        or view.dtype != value.dtype
        or view._pdim != value._pdim
        or view._dyn is not None
        or view._oob is not None
        or view._alloc.name not in b.onchip
    ):
        return False
    inst = b.insts[-1]
    if len(inst["outs"]) != 1 or inst["outs"][0].get("memref") != a.name:
        return False
    if any(o.get("memref") == view._alloc.name for o in T.operand_refs(dict(inst, outs=[]))):
        return False  # the instruction reads the tile it would now write
    old = inst["outs"][0]
    try:
        dl = T.levels_of(view, call="assign")
    except NkiError:
        return False
    if [n for _, n in dl] != [n for _, n in old["ap"]]:
        return False
    if inst["opcode"] == "Matmult":
        try:
            _isa.check_one_bank("assign", view)
        except NkiError:
            return False
        key = (view._offset, tuple(map(tuple, dl)))
        b.mm_regions.setdefault(view._alloc.name, set()).add(key)
        inst["accumulation_flag"] = 2  # an assignment overwrites
    elif view.buffer == PSUM and inst["opcode"] != "Memset":
        b.mm_regions.setdefault(view._alloc.name, set()).add("written")
    new = T.ap_json(view, dl, call="assign")
    b.retarget(inst, [dict(old, memref=new["memref"], offset=new["offset"], ap=new["ap"])])
    view._alloc.written = True
    # should anything still hold the result, it now reads the destination, which holds it
    value._alloc, value._offset, value._strides = view._alloc, view._offset, view._strides
    return True


# ---------------------------------------------------------------------------------------------
# constants


def shared_constant(constant, dtype=None, **kw) -> Tensor:
    """An HBM tensor holding a host array (cast to ``dtype``). birsim has no constant data in
    BIR, so it is one more input of the program (``const``, ``const_1``, ...), fed by
    ``simulate``; a traced program lists it among its inputs."""
    call = "shared_constant"
    arr = np.asarray(constant)
    dt = T.as_dtype(arr.dtype if dtype is None else dtype, call)
    return builder(call).constant(np.ascontiguousarray(arr.astype(dt)), call)


def shared_identity_matrix(n, dtype=uint8, dst=None, **kw) -> Tensor:
    """An ``n × n`` identity in HBM (``shared_constant(np.identity(n), dtype)``)."""
    if dst is not None:
        raise NkiError("shared_identity_matrix(dst=...) is not supported yet", "shared_identity_matrix")
    return shared_constant(np.identity(int(n)), dtype=dtype)


# ---------------------------------------------------------------------------------------------
# documented calls birsim.nki does not trace (no single ISA operation, or not yet)


def _unsupported(name: str, why: str):
    def f(*args, **kw):
        raise NkiError(why, name)

    f.__name__ = name
    f._nki_name = name
    f.__doc__ = f"Not supported by birsim.nki: {why}"
    return f


for _n in ("cos", "tan", "ceil", "floor", "trunc", "fmod", "mod", "var", "all", "softmax", "rms_norm",
           "logical_not", "invert"):
    globals()[_n] = _unsupported(_n, f"nl.{_n} is not one ISA operation birsim.nki traces yet; write it with nki.isa calls")
del _n
random_seed = _random.random_seed
rand = _random.rand
dropout = _random.nl_dropout
device_print = _unsupported("device_print", "nl.device_print cannot print while tracing (values exist only when birsim runs)")


class no_reorder:
    """A no-op context manager (birsim runs instructions in program order)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


bypass = "bypass"
average = "average"
prelu = "prelu"


from ._gather import gather_flattened, where  # noqa: E402,F401
