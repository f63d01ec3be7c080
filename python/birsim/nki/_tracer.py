"""The tracing core of ``birsim.nki``: proxy tensors, allocations, access patterns and the
BIR program under construction.

A kernel runs as ordinary Python while a :class:`Builder` is current. Every tensor the kernel
sees is a :class:`Tensor`: a view (shape, element strides, element offset, dtype) over an
:class:`Alloc` (one BIR allocation with one memory location). On-chip allocations (SBUF, PSUM)
get real addresses when the trace ends, from each tile's live range (its first to its last
instruction), within the generation's capacity, so a tile allocated inside an unrolled loop
reuses the space of the iterations before. ``nki.language`` and ``nki.isa`` calls turn views into ``physical_ap``
operands (partition level first) and append BIR instructions; each instruction's ``name`` holds
the kernel source line that made it (``add@my_kernel.py:14#7``).

Nothing here computes values: birsim runs the finished program (``birsim.run``).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_THIS_FILES = (_PKG_DIR + os.sep,)

# ---------------------------------------------------------------------------------------------
# Errors and source lines


class NkiError(ValueError):
    """A kernel that birsim cannot trace: an invalid shape, buffer, dtype or partition count, or
    a call birsim cannot express as BIR. The message starts with ``file:line:`` of the kernel
    source line and names the call; ``filename``, ``lineno`` and ``call`` hold them."""

    def __init__(self, message: str, call: Optional[str] = None, site: Optional[Tuple[str, int]] = None):
        if site is None:
            site = source_site()
        self.filename, self.lineno = site
        self.call = call
        self.reason = message
        where = f"{self.filename}:{self.lineno}: " if self.filename else ""
        what = f"{call}: " if call else ""
        super().__init__(f"{where}{what}{message}")


NkiError.__module__ = "birsim.nki"


def source_site() -> Tuple[str, int]:
    """The innermost stack frame outside ``birsim.nki``: the kernel line being traced."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_THIS_FILES):
            return fn, f.f_lineno
        f = f.f_back
    return "", 0


# ---------------------------------------------------------------------------------------------
# Dtypes

_BIR_OF: Dict[np.dtype, str] = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float16): "float16",
    np.dtype(ml_dtypes.bfloat16): "bfloat16",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.uint32): "uint32",
    np.dtype(ml_dtypes.float8_e4m3): "float8e4",
    np.dtype(ml_dtypes.float8_e5m2): "float8e5",
    np.dtype(ml_dtypes.float8_e4m3fn): "float8_e4m3fn",
    np.dtype(ml_dtypes.float8_e8m0fnu): "float8_e8m0fnu",
}

# The packed MX dtypes (AWS nl.float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4) have no NumPy
# type: each is a one-field structured dtype over its container (uint32 for four fp8 lanes,
# uint16 for four fp4 lanes), so it has the container's itemsize, compares unequal to every
# other dtype and to the plain container, and is neither a float nor an int. Host arrays of
# these tensors are the raw containers (lane k in the k-th lowest byte / nibble, fidelity N9),
# as birsim.run takes and returns them.
X4: Dict[str, np.dtype] = {
    "float8_e4m3fn_x4": np.dtype([("float8_e4m3fn_x4", "<u4")]),
    "float8_e5m2_x4": np.dtype([("float8_e5m2_x4", "<u4")]),
    "float4_e2m1fn_x4": np.dtype([("float4_e2m1fn_x4", "<u2")]),
}
for _name, _dt in X4.items():
    _BIR_OF[_dt] = _name
del _name, _dt


def is_x4(dt: Any) -> bool:
    return isinstance(dt, np.dtype) and dt in _X4_SET


_X4_SET = frozenset(X4.values())


def dtype_name(dt: Any) -> str:
    """A dtype as NKI spells it (``float8_e4m3fn_x4``, ``bfloat16``, ``float32``)."""
    dt = np.dtype(dt)
    return dt.names[0] if is_x4(dt) else str(dt)


def container(dt: np.dtype) -> np.dtype:
    """The NumPy dtype a host array of ``dt`` has: itself, or an x4 dtype's raw container."""
    dt = np.dtype(dt)
    return dt.fields[dt.names[0]][0] if is_x4(dt) else dt


def as_dtype(d: Any, call: Optional[str] = None) -> np.dtype:
    """An NKI dtype (``nl.float32``, a NumPy dtype or type, ``'bfloat16'``...) as a NumPy dtype
    that birsim has (NKI's ``bool_`` is a byte, uint8)."""
    if d is None:
        raise NkiError("a dtype is required", call)
    if d is bool or d is np.bool_:
        return np.dtype(np.uint8)
    if type(d).__name__ == "_Unsupported":
        raise NkiError(f"{d.name} has no dtype birsim.nki runs yet", call)
    try:
        if isinstance(d, str) and d in X4:
            dt = X4[d]
        elif isinstance(d, str) and hasattr(ml_dtypes, d):
            dt = np.dtype(getattr(ml_dtypes, d))
        else:
            dt = np.dtype(d)
    except TypeError:
        raise NkiError(f"{d!r} is not a dtype", call) from None
    if dt == np.dtype(np.bool_):
        return np.dtype(np.uint8)
    if dt not in _BIR_OF:
        raise NkiError(
            f"dtype {dt} has no BIR equivalent birsim runs (float32, float16, bfloat16, "
            "float8_e4m3, float8_e5m2, float8_e4m3fn, float8_e8m0fnu, float8_e4m3fn_x4, float8_e5m2_x4, "
            "float4_e2m1fn_x4, int8/16/32, uint8/16/32)",
            call,
        )
    return dt


def bir_dtype(dt: np.dtype) -> str:
    return _BIR_OF[np.dtype(dt)]


def is_float(dt: np.dtype) -> bool:
    return np.dtype(dt).kind == "f" or np.dtype(dt) in (
        np.dtype(ml_dtypes.bfloat16),
        np.dtype(ml_dtypes.float8_e4m3),
        np.dtype(ml_dtypes.float8_e5m2),
        np.dtype(ml_dtypes.float8_e4m3fn),
        np.dtype(ml_dtypes.float8_e8m0fnu),
    )


def is_int(dt: np.dtype) -> bool:
    return np.dtype(dt).kind in "iu"


def bits_of(value: float, dt: np.dtype) -> int:
    """The low ``itemsize`` bytes of ``value`` stored as ``dt``, as an unsigned integer
    (a Memset ``constant``)."""
    dt = np.dtype(dt)
    if is_x4(dt):
        raise NkiError(f"a {dtype_name(dt)} tile cannot be filled with a value (its lanes are packed MX data)")
    if is_int(dt):
        v = int(value)
        info = np.iinfo(dt)
        if v < info.min or v > info.max:
            raise NkiError(f"value {value!r} does not fit {dt}")
        arr = np.array([v], dtype=dt)
    else:
        arr = np.array([value], dtype=np.float32).astype(dt)
    return int(arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[dt.itemsize])[0])


# ---------------------------------------------------------------------------------------------
# Generations

ARCHES = {"trn1": "gen2", "gen2": "gen2", "trn2": "gen3", "gen3": "gen3", "trn3": "gen4", "gen4": "gen4"}
DEFAULT_ARCH = "gen3"
SB_BYTES = {"gen2": 192 * 1024, "gen3": 224 * 1024, "gen4": 256 * 1024}
PSUM_BYTES = 16 * 1024
PSUM_BANK = 2 * 1024
PMAX = 128
SB_ALIGN = 64


def target_arch() -> str:
    """The BIR ``arch`` for ``NEURON_PLATFORM_TARGET_OVERRIDE`` (trn1/gen2 → gen2, trn2/gen3 →
    gen3, trn3/gen4 → gen4); unset or empty → gen3 (birsim's choice; AWS's simulator
    auto-detects and otherwise uses trn3)."""
    v = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "").strip().lower()
    if not v:
        return DEFAULT_ARCH
    if v not in ARCHES:
        raise NkiError(
            f"NEURON_PLATFORM_TARGET_OVERRIDE={v!r}: expected trn1, trn2, trn3, gen2, gen3 or gen4",
            site=("", 0),
        )
    return ARCHES[v]


# ---------------------------------------------------------------------------------------------
# On-chip address allocation


def operand_refs(inst: Dict[str, Any]):
    """Every memory operand an instruction names: its ins and outs, and the index tiles they
    carry (``scalar_offset``, ``vector_offset``), so live ranges cover the reads of indices."""
    for op in inst.get("ins", []) + inst.get("outs", []):
        if isinstance(op, dict):
            yield op
            for key in ("scalar_offset", "vector_offset"):
                o = op.get(key)
                if isinstance(o, dict):
                    yield o


class OnChip:
    """An SBUF / PSUM tile's placement record: its memory location, size, live range
    (instruction indices) and where the kernel allocated it."""

    __slots__ = ("loc", "buffer", "nbytes", "what", "call", "site", "first", "last", "addr", "pinned")

    def __init__(self, loc: Dict[str, Any], buffer: str, nbytes: int, what: Any, call: str, site: Tuple[str, int]):
        self.loc = loc
        self.buffer = buffer
        self.nbytes = nbytes
        self.what = what
        self.call = call
        self.site = site
        self.first: Optional[int] = None
        self.last: Optional[int] = None
        self.addr = 0
        # a byte address the kernel chose (direct allocation), kept as given
        self.pinned = False


# ---------------------------------------------------------------------------------------------
# Allocations and views

SBUF, PSUM, HBM = "sbuf", "psum", "hbm"
_BUFFERS = {
    "sbuf": SBUF,
    "psum": PSUM,
    "hbm": HBM,
    "private_hbm": HBM,
    "shared_hbm": HBM,
}


class ManualAlloc:
    """A buffer argument that places the tensor itself (NKI's direct allocation,
    ``nki.compiler.sbuf/psum.mod_alloc`` or ``.alloc(func)``): ``func(block index, partitions,
    bytes per partition of a block)`` gives ``(partition, byte address)`` in SBUF or ``(bank,
    partition, byte address in the bank)`` in PSUM."""

    __slots__ = ("buffer", "func", "what")

    def __init__(self, buffer: str, func: Any, what: str):
        self.buffer = buffer
        self.func = func
        self.what = what

    def __repr__(self) -> str:
        return self.what


def buffer_kind(buffer: Any, call: Optional[str] = None) -> Tuple[str, bool]:
    """(sbuf | psum | hbm, shared?) for an NKI buffer argument."""
    if isinstance(buffer, ManualAlloc):
        return buffer.buffer, False
    name = getattr(buffer, "value", buffer)
    name = getattr(name, "name", name) if not isinstance(name, str) else name
    if not isinstance(name, str) or name not in _BUFFERS:
        raise NkiError(f"unknown buffer {buffer!r} (expected nl.sbuf, nl.psum, nl.hbm or nl.shared_hbm)", call)
    return _BUFFERS[name], name == "shared_hbm"


class Alloc:
    """One BIR allocation (one memory location). ``json`` is its allocation record; ``kind``
    is decided when the trace ends (inputs, outputs, internal)."""

    __slots__ = ("name", "buffer", "dtype", "shape", "pdim", "json", "written", "input_index", "region", "blocks",
                 "origin", "manual", "used_as", "__weakref__")

    def __init__(self, name: str, buffer: str, dtype: np.dtype, shape: Tuple[int, ...], pdim: Optional[int]):
        self.name = name
        self.buffer = buffer
        self.dtype = dtype
        self.shape = shape
        self.pdim = pdim
        self.json: Dict[str, Any] = {}
        self.written = False
        self.input_index: Optional[int] = None
        # the mask region a masked call wrote this (fresh) tile over, so `t[...] = tile` copies
        # only what was written
        self.region: Any = None
        # a tensor whose partition dim is not first, (B..., par_dim(P), F...): each block is its
        # own allocation, made when first indexed (block index -> Alloc); origin: (call, site)
        self.blocks: Optional[Dict[Tuple[int, ...], "Alloc"]] = None
        self.origin: Any = None
        # a blocked tensor's direct allocation (ManualAlloc), applied to each block
        self.manual: Optional[ManualAlloc] = None
        # the dtype instructions read and write it as (ap_json): its own, or the one a
        # reinterpreting view (.ap(dtype=), .view) gave; the program declares the allocation so
        # (BIR memory holds its allocation's dtype, and an AP of another dtype casts: fidelity S2)
        self.used_as: Optional[np.dtype] = None


class _RefProbe:
    """Measures how many references ``sys.getrefcount`` sees for a fresh temporary inside
    ``__setitem__`` (``t[k] = f()``) on this interpreter, the same shape as
    ``Tensor.__setitem__``: the count differs between CPython versions (borrowed stack refs)."""

    def __setitem__(self, key, value) -> None:
        self.refs = sys.getrefcount(value)


def _unheld_refs() -> int:
    probe = _RefProbe()
    probe[0] = object()
    return probe.refs


_UNHELD_REFS = _unheld_refs()


class ParDim(int):
    """``nl.par_dim(n)``: marks the partition dimension in a shape."""


def _prod(xs: Sequence[int]) -> int:
    p = 1
    for x in xs:
        p *= int(x)
    return p


class Tensor:
    """A kernel-visible tensor: a view over an allocation. Behaves like NKI's ``NkiTensor``
    for shapes, slicing and arithmetic operators; every operation is traced."""

    __slots__ = ("_alloc", "shape", "_strides", "_offset", "dtype", "_pdim", "_oob", "_src", "_dyn", "__weakref__")
    __array_priority__ = 1000  # so `np.float32(2) * tile` reaches Tensor.__rmul__

    def __init__(self, alloc: Alloc, shape, strides, offset: int, dtype: np.dtype, pdim: Optional[int]):
        self._alloc = alloc
        self.shape = tuple(int(s) for s in shape)
        self._strides = tuple(int(s) for s in strides)
        self._offset = int(offset)
        self.dtype = dtype
        self._pdim = pdim
        # an index-expression view that leaves its tensor: an error when an instruction uses it,
        # unless a mask cuts it back inside (_src: the tensor and index to redo that from)
        self._oob: Optional[str] = None
        self._src: Any = None
        # a runtime offset: (index tile, element step, max index): the view starts
        # index · step elements further, read from the tile when the instruction runs
        self._dyn: Optional[Tuple["Tensor", int, int]] = None

    def __class_getitem__(cls, item):
        # `tensor[shape, dtype]` annotations (nki.typing) evaluate to the class itself
        return cls

    # -- NkiTensor attributes
    @property
    def buffer(self) -> str:
        return self._alloc.buffer

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return _prod(self.shape)

    @property
    def name(self) -> str:
        return self._alloc.name

    @property
    def address(self) -> Optional[Tuple[int, int]]:
        """``(partition offset, byte offset)`` of a tile the kernel placed itself (``address=``,
        ``mod_alloc``), else None (birsim places the others when the trace ends)."""
        b = getattr(_current, "builder", None)
        r = b.onchip.get(self._alloc.name) if b is not None else None
        if r is None or not r.pinned:
            return None
        return int(r.loc.get("base", 0)), int(r.addr)

    @property
    def strides(self) -> Tuple[int, ...]:
        return self._strides

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def on_chip(self) -> bool:
        return self._alloc.buffer != HBM

    @property
    def partitions(self) -> int:
        return self.shape[self._pdim] if self._pdim is not None else 1

    @property
    def free_size(self) -> int:
        """Elements per partition."""
        return self.size // max(1, self.partitions) if self._pdim is not None else self.size

    def __repr__(self) -> str:
        return f"<nki tensor {self._alloc.name} {self.shape} {self.dtype} in {self._alloc.buffer}>"

    def __len__(self) -> int:
        return self.shape[0]

    def __bool__(self) -> bool:
        raise NkiError(
            "a tensor has no truth value while tracing (its values exist only when birsim runs the "
            "program); use Python values for control flow"
        )

    def __iter__(self):
        raise NkiError("iterating over a tensor is not supported while tracing; index it instead")

    def _view(self, shape, strides, offset, pdim) -> "Tensor":
        t = Tensor(self._alloc, shape, strides, offset, self.dtype, pdim)
        t._oob = self._oob
        t._dyn = self._dyn
        return t

    # -- indexing
    def __getitem__(self, key) -> "Tensor":
        from ._index import index_tensor

        return index_tensor(self, key)

    def __setitem__(self, key, value) -> None:
        from . import language as _nl

        # as many references as a fresh temporary has here (_UNHELD_REFS, measured on this
        # interpreter): nothing else holds the value; more means a kernel variable does (then it
        # is copied, never written in place)
        unheld = sys.getrefcount(value) <= _UNHELD_REFS
        _nl._assign(self[key], value, unheld=unheld)

    # -- views
    def reshape(self, *shape) -> "Tensor":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = _prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if _prod(shape) != self.size:
            raise NkiError(f"cannot reshape {self.shape} into {shape}", "reshape")
        if self.on_chip:
            if shape[0] != self.shape[self._pdim] or self._pdim != 0:
                raise NkiError(
                    f"an on-chip reshape keeps the partition dimension first: {self.shape} -> {shape}", "reshape"
                )
            base = self._contiguous_free("reshape")
            strides = [self._strides[0]] + _row_major(shape[1:], base)
            return self._view(shape, strides, self._offset, 0)
        if not self._is_contiguous():
            raise NkiError(f"reshape needs a contiguous view, {self.shape} with strides {self._strides} is not", "reshape")
        return self._view(shape, _row_major(shape, 1), self._offset, None)

    def _is_contiguous(self) -> bool:
        expect = 1
        for n, s in reversed(list(zip(self.shape, self._strides))):
            if n != 1 and s != expect:
                return False
            expect *= n
        return True

    def _contiguous_free(self, call: str) -> int:
        expect = 1
        dims = [(n, s) for d, (n, s) in enumerate(zip(self.shape, self._strides)) if d != self._pdim]
        for n, s in reversed(dims):
            if n != 1 and s != expect:
                raise NkiError(f"the free dimensions of {self.shape} are not contiguous", call)
            expect *= n
        return 1

    def broadcast_to(self, shape) -> "Tensor":
        from . import language as _nl

        return _nl.broadcast_to(self, shape)

    def broadcast(self, dim: int, size: int) -> "Tensor":
        if self.shape[dim] != 1:
            raise NkiError(f"dimension {dim} has size {self.shape[dim]}, not 1", "broadcast")
        if dim == self._pdim:
            raise NkiError("cannot broadcast the partition dimension of an on-chip view", "broadcast")
        shape = list(self.shape)
        strides = list(self._strides)
        shape[dim] = size
        strides[dim] = 0
        return self._view(shape, strides, self._offset, self._pdim)

    def expand_dim(self, dim: int) -> "Tensor":
        if self.on_chip and dim == 0:
            raise NkiError("cannot insert a dimension before the partition dimension", "expand_dim")
        shape = list(self.shape)
        strides = list(self._strides)
        shape.insert(dim, 1)
        strides.insert(dim, 0)
        pdim = self._pdim if self._pdim is None or dim > self._pdim else self._pdim + 1
        return self._view(shape, strides, self._offset, pdim)

    def permute(self, dims) -> "Tensor":
        dims = tuple(dims)
        if sorted(dims) != list(range(self.ndim)):
            raise NkiError(f"{dims} is not a permutation of the {self.ndim} dimensions", "permute")
        if self.on_chip and dims[0] != self._pdim:
            raise NkiError("an on-chip permute keeps the partition dimension first", "permute")
        pdim = None if self._pdim is None else dims.index(self._pdim)
        return self._view([self.shape[d] for d in dims], [self._strides[d] for d in dims], self._offset, pdim)

    @property
    def T(self) -> "Tensor":
        if self.on_chip:
            raise NkiError(
                "an on-chip tile cannot be transposed by a view (partitions are separate memories); "
                "use nl.transpose or nisa.nc_transpose",
                "T",
            )
        return self.permute(tuple(reversed(range(self.ndim))))

    def ap(self, pattern, offset: Optional[int] = None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
        if vector_offset is not None:
            if scalar_offset is not None:
                raise NkiError("vector_offset and scalar_offset are mutually exclusive", "ap")
            from ._gather import vector_ap

            return vector_ap(self, pattern, offset, vector_offset, indirect_dim, dtype)
        if scalar_offset is not None:
            d = int(indirect_dim) % self.ndim
            if self.on_chip and d == self._pdim:
                raise NkiError("a dynamic offset on the partition dim of an on-chip tensor is not allowed", "ap")
            t = self.ap(pattern, offset, dtype=dtype)
            step = self._strides[d] * self.dtype.itemsize
            if step % t.dtype.itemsize:
                raise NkiError(f"dimension {d}'s step of {step} bytes is not a whole number of {dtype_name(t.dtype)} elements", "ap")
            return t.dynamic(scalar_offset, step // t.dtype.itemsize, self.shape[d], "ap")
        pattern = [(int(s), int(n)) for s, n in pattern]
        base = self
        if dtype is not None and as_dtype(dtype, "ap") != self.dtype:
            base = self._reinterpret(as_dtype(dtype, "ap"), "ap")
        off = base._offset + (int(offset) if offset is not None else 0)
        shape = [n for _, n in pattern]
        strides = [s for s, _ in pattern]
        pdim = 0 if self.on_chip else None
        t = base._view(shape, strides, off, pdim)
        if self.on_chip:
            pitch = pitch_of(base)
            if strides[0] % pitch != 0 and shape[0] != 1:
                raise NkiError(
                    f"the first (partition) step {strides[0]} is not a multiple of the tile's "
                    f"{pitch} elements per partition",
                    "ap",
                )
        check_bounds(t, "ap")
        return t

    def _reinterpret(self, dtype: np.dtype, call: str) -> "Tensor":
        """This view's storage read as ``dtype`` (no copy): the same bytes, its offset and
        strides counted in ``dtype``'s elements (each must land on a whole element)."""
        if self._dyn is not None:
            raise NkiError("a view with a runtime offset cannot be reinterpreted as another dtype", call)
        if self._alloc.blocks is not None:
            raise NkiError("index one block of a (B..., par_dim(P), ...) tensor before reinterpreting its dtype", call)
        old, new = self.dtype.itemsize, dtype.itemsize
        nbytes = _prod(self._alloc.shape) * self._alloc.dtype.itemsize
        if not self.on_chip and nbytes % new:
            raise NkiError(f"{self._alloc.name} holds {nbytes} bytes, not a whole number of {dtype_name(dtype)} "
                           f"elements ({new} bytes)", call)
        if (self._offset * old) % new:
            raise NkiError(
                f"the view starts at byte {self._offset * old} of {self._alloc.name}, not on a whole "
                f"{dtype_name(dtype)} element ({new} bytes)",
                call,
            )
        if self.on_chip and (_pitch(self._alloc) * self._alloc.dtype.itemsize) % new:
            raise NkiError(
                f"a partition of {self._alloc.name} holds {_pitch(self._alloc) * self._alloc.dtype.itemsize} bytes, "
                f"not a whole number of {dtype_name(dtype)} elements ({new} bytes)",
                call,
            )
        t = Tensor(self._alloc, self.shape, self._strides, self._offset * old // new, dtype, self._pdim)
        t._oob = self._oob
        return t

    def view(self, dtype: Any) -> "Tensor":
        """``t.view(dtype)``: the same bytes as another dtype, the last dim scaled by the ratio
        of the sizes (AWS NkiTensor.view: the last dim contiguous, divisible when it shrinks)."""
        call = "view"
        dt = as_dtype(dtype, call)
        if dt == self.dtype:
            return self
        old, new = self.dtype.itemsize, dt.itemsize
        last = self.ndim - 1
        if self.on_chip and last == self._pdim:
            raise NkiError("the last dimension of an on-chip view must be a free dimension to reinterpret it", call)
        if self.shape[last] != 1 and self._strides[last] != 1:
            raise NkiError(f"the last dimension of {self.shape} is not contiguous (stride {self._strides[last]})", call)
        if (self.shape[last] * old) % new:
            raise NkiError(
                f"the last dimension ({self.shape[last]} × {old} bytes) is not a whole number of "
                f"{dtype_name(dt)} elements ({new} bytes)",
                call,
            )
        strides = []
        for d, st in enumerate(self._strides):
            if d == last:
                strides.append(1)
            elif (st * old) % new:
                raise NkiError(f"dimension {d}'s step of {st * old} bytes is not a whole number of {dtype_name(dt)} elements", call)
            else:
                strides.append(st * old // new)
        t = self._reinterpret(dt, call)
        shape = list(self.shape)
        shape[last] = self.shape[last] * old // new
        v = Tensor(self._alloc, shape, strides, t._offset, dt, self._pdim)
        v._oob = self._oob
        check_bounds(v, call)
        return v

    def dynamic(self, index: Any, step: int, max_index: int, call: str) -> "Tensor":
        """This view moved at run time by ``index`` (a one-element int tile) × ``step``
        elements; an index outside ``0 .. max_index-1`` faults when birsim runs it."""
        if hasattr(index, "as_tile"):
            # a VirtualRegister (birsim.nki._control): stored to a one-element tile first
            index = index.as_tile(call)
        if not isinstance(index, Tensor):
            raise NkiError(f"a runtime index is a one-element tile, got {type(index).__name__}", call)
        if self._dyn is not None:
            raise NkiError("a view takes one dynamic offset (no chaining)", call)
        if index.size != 1 or not is_int(index.dtype):
            raise NkiError(f"the index tile {index.shape} {index.dtype} must hold one integer", call)
        if index.buffer == HBM:
            raise NkiError("the index tile must be in SBUF or PSUM", call)
        t = self._view(self.shape, self._strides, self._offset, self._pdim)
        t._dyn = (index, int(step), int(max_index))
        return t

    def vector_select(self, dim: int, vector_offset: Any) -> "Tensor":
        """``t.vector_select(0, idx)``: row p of the view is row ``idx[p]`` of this HBM tensor."""
        from ._gather import vector_select

        return vector_select(self, dim, vector_offset)

    def is_indirect(self) -> bool:
        return self._dyn is not None

    def indirect(self, index: Any, num_elem: Optional[int] = None) -> "Tensor":
        """NeuronCore-v4 Tensor Indirection: refused (BIR carries a vector offset on a DMACopy
        only; on a compute-engine operand birsim's validation rejects it)."""
        raise NkiError(
            "Tensor Indirection (.indirect) is not expressible: birsim's BIR takes a per-partition (vector) offset "
            "on DMACopy only, and rejects it on compute-engine operands", "indirect")

    def select(self, dim: int, index: Any) -> "Tensor":
        """``t.select(dim, i)``: the view with dim ``dim`` fixed at ``i`` (an int, or a
        one-element int tile read when the instruction runs) and removed."""
        d = int(dim) % self.ndim
        if isinstance(index, Tensor) or hasattr(index, "as_tile"):
            if self.on_chip and d == self._pdim:
                raise NkiError("a dynamic select on the partition dim of an on-chip tensor is not allowed", "select")
            key = [slice(None)] * self.ndim
            key[d] = 0
            v = self[tuple(key)]
            return v.dynamic(index, self._strides[d], self.shape[d], "select")
        key = [slice(None)] * self.ndim
        key[d] = int(index)
        return self[tuple(key)]

    # -- arithmetic operators (nki.language element-wise calls)
    def __add__(self, o):
        from . import language as nl

        return nl.add(self, o)

    def __radd__(self, o):
        from . import language as nl

        return nl.add(o, self)

    def __sub__(self, o):
        from . import language as nl

        return nl.subtract(self, o)

    def __rsub__(self, o):
        from . import language as nl

        return nl.subtract(o, self)

    def __mul__(self, o):
        from . import language as nl

        return nl.multiply(self, o)

    def __rmul__(self, o):
        from . import language as nl

        return nl.multiply(o, self)

    def __truediv__(self, o):
        from . import language as nl

        return nl.divide(self, o)

    def __rtruediv__(self, o):
        from . import language as nl

        return nl.divide(o, self)

    def __neg__(self):
        from . import language as nl

        return nl.negative(self)

    def __pow__(self, o):
        from . import language as nl

        return nl.power(self, o)

    def __lt__(self, o):
        from . import language as nl

        return nl.less(self, o)

    def __le__(self, o):
        from . import language as nl

        return nl.less_equal(self, o)

    def __gt__(self, o):
        from . import language as nl

        return nl.greater(self, o)

    def __ge__(self, o):
        from . import language as nl

        return nl.greater_equal(self, o)

    def __and__(self, o):
        from . import language as nl

        return nl.bitwise_and(self, o)

    def __or__(self, o):
        from . import language as nl

        return nl.bitwise_or(self, o)

    def __xor__(self, o):
        from . import language as nl

        return nl.bitwise_xor(self, o)

    def __iadd__(self, o):
        from . import language as nl

        return nl._accumulate(self, o)

    __hash__ = object.__hash__


def _row_major(shape: Sequence[int], inner: int = 1) -> List[int]:
    strides = []
    acc = inner
    for n in reversed(shape):
        strides.append(acc)
        acc *= int(n)
    return list(reversed(strides))


def _pitch(alloc: Alloc) -> int:
    """Elements per partition of an on-chip allocation (the partition step of a whole view)."""
    return _prod(n for d, n in enumerate(alloc.shape) if d != alloc.pdim)


def pitch_of(t: Tensor) -> int:
    """Elements of ``t``'s dtype per partition of its on-chip allocation (``_pitch`` counted in
    the view's dtype, which a reinterpreting ``.ap(dtype=)`` / ``.view`` may have changed)."""
    if t.dtype == t._alloc.dtype:
        return _pitch(t._alloc)
    return _pitch(t._alloc) * t._alloc.dtype.itemsize // t.dtype.itemsize


def elements_of(t: Tensor) -> int:
    """Elements of ``t``'s dtype its whole allocation holds."""
    if t.dtype == t._alloc.dtype:
        return _prod(t._alloc.shape)
    return _prod(t._alloc.shape) * t._alloc.dtype.itemsize // t.dtype.itemsize


def check_bounds(t: Tensor, call: str) -> None:
    """Every element of the view lies inside its allocation (and, on chip, inside its
    partitions)."""
    lo = t._offset + sum(min(0, s * (n - 1)) for s, n in zip(t._strides, t.shape))
    hi = t._offset + sum(max(0, s * (n - 1)) for s, n in zip(t._strides, t.shape))
    total = elements_of(t)
    if lo < 0 or hi >= total:
        raise NkiError(
            f"the view {t.shape} (element offset {t._offset}, strides {list(t._strides)}) leaves "
            f"{t._alloc.name} {t._alloc.shape} (elements {lo}..{hi} of {total})",
            call,
        )


# ---------------------------------------------------------------------------------------------
# Access patterns


def _merge(dims: List[List[int]]) -> List[List[int]]:
    """Drops size-1 dims and fuses adjacent contiguous ones (``[[s, n]...]`` outer → inner)."""
    out: List[List[int]] = []
    for s, n in dims:
        if n == 1:
            continue
        if out and out[-1][0] == s * n:
            out[-1] = [s, out[-1][1] * n]
        else:
            out.append([s, n])
    return out


_BLOCKED = (
    "a view across the blocks of a (B..., par_dim(P), ...) tensor: birsim.nki allocates each block "
    "separately; index the block dims with integers (t[i, j]) to get one block's tile"
)


def unblock(v: Tensor, call: str) -> Tensor:
    """A view of a blocked tensor whose block dims are all indexed away (partition dim first):
    the same view over that block's own allocation."""
    parent = v._alloc
    if parent.blocks is None or v._pdim != 0:
        return v
    pd = parent.pdim
    pitch = _prod(n for d, n in enumerate(parent.shape) if d != pd)
    block_strides = _row_major(parent.shape[pd + 1:])
    inner = _prod(parent.shape[pd + 1:])
    bstr = []
    acc = inner
    for n in reversed(parent.shape[:pd]):
        bstr.append(acc)
        acc *= n
    bstr.reverse()
    p0, rem = divmod(v._offset, pitch)
    idx = []
    for st in bstr:
        q, rem = divmod(rem, st)
        idx.append(q)
    span = sum(s * (n - 1) for d, (s, n) in enumerate(zip(v._strides, v.shape)) if d != 0)
    if any(s >= inner for d, s in enumerate(v._strides) if d != 0 and v.shape[d] > 1) or rem + span >= inner:
        raise NkiError(_BLOCKED, call)
    if v.shape[0] > 1 and v._strides[0] % pitch:
        raise NkiError(_BLOCKED, call)
    child = builder(call).block_of(parent, tuple(idx))
    pstep = v._strides[0] // pitch if v.shape[0] > 1 else 1
    del block_strides
    t = Tensor(child, v.shape, [pstep * inner] + list(v._strides[1:]), p0 * inner + rem, v.dtype, 0)
    t._oob = v._oob
    return t


def levels_of(t: Tensor, merge: bool = True, call: str = "") -> List[List[int]]:
    """The ``[[step, num], ...]`` of a view: the partition level first for on-chip views."""
    if t._oob:
        raise NkiError(t._oob, call or None)
    if t._alloc.blocks is not None:
        raise NkiError(_BLOCKED, call or None)
    if t.on_chip:
        p = t._pdim
        first = [t._strides[p] if t.shape[p] != 1 else pitch_of(t), t.shape[p]]
        rest = [[t._strides[d], t.shape[d]] for d in range(t.ndim) if d != p]
        rest = _merge(rest) if merge else rest
        lv = [first] + (rest or [[1, 1]])
    else:
        dims = [[t._strides[d], t.shape[d]] for d in range(t.ndim)]
        lv = _merge(dims) if merge else dims
        lv = lv or [[1, 1]]
    if len(lv) > 5:
        raise NkiError(
            f"the view {t.shape} needs {len(lv)} access-pattern levels; BIR access patterns have at most 5", call
        )
    return lv


def joint_levels(views: Sequence[Tensor], call: str) -> List[List[List[int]]]:
    """Access patterns for views of one logical shape that an instruction walks element by
    element together: the dims reordered so the on-chip partition dim comes first, then fused
    only where every view allows it, so the levels stay aligned."""
    for v in views:
        if v._oob:
            raise NkiError(v._oob, call)
        if v._alloc.blocks is not None:
            raise NkiError(_BLOCKED, call)
    shape = views[0].shape
    order = list(range(len(shape)))
    pd = None
    for v in views:
        if v.on_chip:
            if pd is None:
                pd = v._pdim
            elif v._pdim != pd:
                raise NkiError("the operands' partition dimensions differ", call)
    if pd is not None and pd != 0:
        order = [pd] + [d for d in order if d != pd]
    per = [[[v._strides[d], v.shape[d]] for d in order] for v in views]
    # partition level stays separate for on-chip views
    head = 1 if pd is not None else 0
    out = [[] for _ in views]
    for k in range(head):
        for j, v in enumerate(views):
            s, n = per[j][k]
            if v.on_chip and n == 1:
                s = pitch_of(v)
            out[j].append([s, n])
    for k in range(head, len(order)):
        n = per[0][k][1]
        if n == 1:
            continue
        fuse = len(out[0]) > head and all(out[j][-1][0] == per[j][k][0] * n for j in range(len(views)))
        for j in range(len(views)):
            s = per[j][k][0]
            if fuse:
                out[j][-1] = [s, out[j][-1][1] * n]
            else:
                out[j].append([s, n])
    for j, v in enumerate(views):
        if len(out[j]) == head:
            out[j].append([1, 1])
        if not v.on_chip and head:
            # an HBM view next to on-chip ones: its partition-aligned level is an ordinary level
            pass
        if len(out[j]) > 5:
            raise NkiError(
                f"the view {v.shape} needs {len(out[j])} access-pattern levels; BIR access patterns have at most 5",
                call,
            )
    return out


def ap_json(t: Tensor, levels: Optional[List[List[int]]] = None, dtype: Optional[np.dtype] = None, call: str = "") -> Dict[str, Any]:
    if t._oob:
        raise NkiError(t._oob, call)
    if t._alloc.blocks is not None:
        raise NkiError(_BLOCKED, call or None)
    if levels is None:
        levels = levels_of(t, call=call)
    dt = np.dtype(dtype if dtype is not None else t.dtype)
    out = {
        "kind": "physical_ap",
        "memref": t._alloc.name,
        "dtype": bir_dtype(dt),
        "offset": t._offset,
        "ap": [list(x) for x in levels],
    }
    if t._dyn is not None and not isinstance(t._dyn, tuple):
        raise NkiError("a per-partition (vector) indirect view is an operand of dma_copy, nl.load or nl.store only",
                       call or None)
    if t._dyn is not None:
        # birsim moves the offset by index × the step of the level the letter names: a unit
        # level carrying the step goes in at level 1 (on chip, after the partitions) or 0
        index, step, max_index = t._dyn
        at = 1 if t.on_chip else 0
        out["ap"].insert(at, [step, 1])
        if len(out["ap"]) > 5:
            raise NkiError("a dynamic view needs one more access-pattern level than the 5 BIR has", call)
        il = levels_of(index, call=call)
        out["indirect_dim"] = "WZYX"[at]
        out["indirect_dim_max_index"] = max_index
        out["scalar_offset"] = ap_json(index, [il[0], [1, 1]] if index.on_chip else [[1, 1]], call=call)
    return out


_NP_OF: Dict[str, np.dtype] = {v: k for k, v in _BIR_OF.items()}


def use_as(alloc: Alloc, dt: np.dtype, call: str = "", site: Optional[Tuple[str, int]] = None) -> None:
    """Records that an instruction addresses ``alloc`` as ``dt``. BIR memory holds one dtype
    per allocation (an AP of another dtype converts values, fidelity S2), so an allocation a
    reinterpreting view reads as another dtype is declared as that dtype, and every instruction
    must then use it so: two dtypes on one allocation are an NkiError."""
    used = alloc.used_as
    if used is None:
        alloc.used_as = dt
    elif used != dt:
        raise NkiError(
            f"{alloc.name} is used as {dtype_name(used)} and as {dtype_name(dt)}: a BIR allocation holds one dtype "
            "(birsim converts values, not bits, between an access pattern's dtype and its memory's), so a "
            "reinterpreting view (.ap(dtype=...), .view) must be the only way instructions use the tensor; "
            "copy the data into a tensor of the other dtype instead",
            call or None,
            site=site,
        )


def retyped_shape(shape: Sequence[int], old: np.dtype, new: np.dtype) -> List[int]:
    """The ``tensor_shape`` of an allocation of ``shape`` × ``old`` read as ``new``: the last dim
    scaled (NumPy's ``view``), or one flat dim when it does not divide."""
    shape = [int(n) for n in shape]
    if (shape[-1] * old.itemsize) % new.itemsize == 0:
        return shape[:-1] + [shape[-1] * old.itemsize // new.itemsize]
    return [_prod(shape) * old.itemsize // new.itemsize]


def host_view(arr: np.ndarray, old: np.dtype, new: np.dtype) -> np.ndarray:
    """A host array of an allocation retyped from ``old`` to ``new``: the same bytes as
    ``new``'s host dtype (an x4 dtype's raw container), shaped by ``retyped_shape``."""
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    return raw.view(container(new)).reshape(retyped_shape(arr.shape or (1,), old, new))


def imm(value: float, dtype: str = "float32") -> Dict[str, Any]:
    v = float(value)
    if math.isnan(v):
        val: Any = "nan"
    elif math.isinf(v):
        val = "inf" if v > 0 else "-inf"
    else:
        val = v
    return {"kind": "imm_value", "dtype": dtype, "value": val}


# ---------------------------------------------------------------------------------------------
# The program under construction

_current = threading.local()


def builder(call: Optional[str] = None) -> "Builder":
    b = getattr(_current, "builder", None)
    if b is None:
        raise NkiError(
            "NKI calls run only inside a traced kernel (birsim.nki.simulate(kernel)(...), "
            "birsim.nki.trace(kernel)(...), or calling an @nki.jit kernel)",
            call,
        )
    return b


_X4_BIR = frozenset(X4)
# opcodes that move packed MX data as whole containers, and the two MX instructions
_X4_MOVES = {"DMACopy": "dma_copy", "Load": "nl.load", "Save": "nl.store", "TensorCopy": "tensor_copy"}


def _check_x4(inst: Dict[str, Any], call: str, site: Tuple[str, int]) -> None:
    """Packed ``_x4`` tiles are operands of the MX instructions, and of copies that move them
    whole (same x4 dtype on both sides): anything else would compute on the containers, which
    AWS defines only for nc_matmul_mx (and quantize_mx's output)."""
    ops = [op for op in inst["ins"] + inst["outs"] if isinstance(op, dict) and "dtype" in op and "memref" in op]
    x4 = [op["dtype"] for op in ops if op["dtype"] in _X4_BIR]
    if not x4 or inst["opcode"] in ("QuantizeMx", "MatmultMx"):
        return
    opcode = inst["opcode"]
    if opcode in _X4_MOVES and inst.get("mode", "Copy") == "Copy":
        if len(set(op["dtype"] for op in ops)) == 1:
            return
        raise NkiError(
            f"copies packed {x4[0]} data only into or from {x4[0]} (got {' and '.join(sorted(set(op['dtype'] for op in ops)))}); "
            "to read raw containers, view the bytes with .ap(dtype=...) or .view(dtype)",
            call,
            site=site,
        )
    raise NkiError(
        f"a packed {x4[0]} tile is an operand of nc_matmul_mx, quantize_mx (its output) and whole-container copies "
        f"(dma_copy, tensor_copy, nl.load, nl.store) only; {opcode} would compute on its containers",
        call,
        site=site,
    )


class Builder:
    """A BIR function being traced: allocations, instructions, the on-chip tiles' live ranges, the SPMD
    program id and matmul accumulation state."""

    def __init__(self, arch: str, name: str):
        self.arch = arch
        self.name = name
        # (Alloc, allocation record) in creation order
        self.records: List[Tuple[Optional[Alloc], Dict[str, Any]]] = []
        self.by_name: Dict[str, Alloc] = {}
        self.insts: List[Dict[str, Any]] = []
        self.used_names: Dict[str, int] = {}
        self.onchip: Dict[str, "OnChip"] = {}
        self.program_id: Tuple[int, ...] = (0,)
        self.grid: Tuple[int, ...] = (1,)
        self.shared: List[Alloc] = []
        self.shared_cursor = 0
        self.instance = 0
        self.identity: Dict[Tuple[int, str], Tensor] = {}
        self.mm_regions: Dict[str, set] = {}
        self.last_matmul: Optional[Tuple[Dict[str, Any], "weakref.ref[Alloc]"]] = None
        self.constants: Dict[str, np.ndarray] = {}
        self.counter = 0
        # the function body: blocks and loop nodes; emit appends to self.block (see _control)
        self.body: List[Dict[str, Any]] = []
        self.block: Dict[str, Any] = {"name": "main", "instructions": []}
        self.body.append(self.block)
        self.nest: List[Any] = []
        self.registers: Dict[str, Any] = {}
        # loops="bir": affine_range / sequential_range folded into BIR Loop nodes (_loops);
        # spans: (first, last instruction, tiles before) of every loop, for live ranges;
        # folded_away: allocations of the iterations a fold dropped
        self.loops = "unroll"
        self.spans: List[Any] = []
        self.folded_away: set = set()
        self.loop_counters: set = set()

    # -- names
    def unique(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "t"
        n = self.used_names.get(base)
        if n is None:
            self.used_names[base] = 1
            return base
        while True:
            cand = f"{base}_{n}"
            n += 1
            if cand not in self.used_names:
                self.used_names[base] = n
                self.used_names[cand] = 1
                return cand

    # -- allocations
    def new_alloc(
        self,
        shape: Sequence[int],
        dtype: np.dtype,
        buffer: str,
        call: str,
        name: str = "",
        shared: bool = False,
        manual: Optional[ManualAlloc] = None,
        address: Any = None,
    ) -> Tensor:
        """A new tensor. On chip, ``manual`` (a direct-allocation buffer) or ``address``
        (``(partition, byte address)``, NKI 0.2's ``nl.ndarray(address=...)``) pins it where the
        kernel says; otherwise it is placed by live range when the trace ends (``place``)."""
        shape = tuple(shape)
        for n in shape:
            if not isinstance(n, (int, np.integer)) or int(n) < 1:
                raise NkiError(f"shape {shape}: every dimension must be a positive integer", call)
        if (manual is not None or address is not None) and buffer == HBM:
            raise NkiError("a direct allocation (address= / mod_alloc) places SBUF or PSUM tensors only", call)
        pdim: Optional[int] = None
        if buffer != HBM:
            if len(shape) < 1:
                raise NkiError("an on-chip tensor needs a partition dimension", call)
            marks = [d for d, n in enumerate(shape) if isinstance(n, ParDim)]
            if len(marks) > 1:
                raise NkiError(f"shape {shape} marks more than one nl.par_dim", call)
            pdim = marks[0] if marks else 0
            if len(shape) < 2:
                shape = shape + (1,)
        shape = tuple(int(n) for n in shape)
        if shared and buffer == HBM and self.instance > 0:
            # SPMD: every program instance sees the same shared_hbm tensors, in creation order.
            if self.shared_cursor >= len(self.shared):
                raise NkiError(
                    "program instance creates more shared_hbm tensors than the first one did", call
                )
            a = self.shared[self.shared_cursor]
            self.shared_cursor += 1
            if a.shape != shape or a.dtype != dtype:
                raise NkiError(
                    f"shared_hbm tensor {a.name}: this program instance asks for {shape} {dtype}, "
                    f"the first asked for {a.shape} {a.dtype}",
                    call,
                )
            return Tensor(a, shape, _row_major(shape), 0, dtype, None)
        size = dtype.itemsize
        if buffer == HBM:
            prefix = name or ("hbm" if not shared else "out")
            aname = self.unique(prefix)
            a = Alloc(aname, HBM, dtype, shape, None)
            loc = {"name": aname, "type": "DRAM", "dims": [1, _prod(shape) * size]}
            a.json = {
                "name": aname,
                "kind": "Internal",
                "dtype": bir_dtype(dtype),
                "tensor_shape": list(shape),
                "memorylocations": [loc],
            }
            self.records.append((a, a.json))
            self.by_name[a.name] = a
            if shared:
                self.shared.append(a)
                self.shared_cursor += 1
            return Tensor(a, shape, _row_major(shape), 0, dtype, None)
        parts = shape[pdim]
        if parts > PMAX:
            raise NkiError(
                f"partition dimension {parts} of shape {shape} exceeds the maximum {PMAX}", call
            )
        if pdim > 0:
            # block dims before the partition dim: one allocation per block, made when the kernel
            # first indexes it (block_of), each placed for its own live range
            aname = self.unique(name or ("sb" if buffer == SBUF else "ps"))
            a = Alloc(aname, buffer, dtype, shape, pdim)
            a.blocks = {}
            a.origin = (call, source_site())
            a.manual = manual
            if address is not None:
                raise NkiError("address= places one tile; a tensor of blocks (dims before nl.par_dim) "
                               "takes a direct-allocation buffer (mod_alloc) instead", call)
            self._block_bytes_ok(shape[pdim:], dtype, buffer, call)
            strides = [0] * len(shape)
            acc = 1
            for d in reversed(range(len(shape))):
                if d == pdim:
                    continue
                strides[d] = acc
                acc *= shape[d]
            strides[pdim] = acc
            return Tensor(a, shape, strides, 0, dtype, pdim)
        free = _prod(n for d, n in enumerate(shape) if d != pdim)
        nbytes = free * size
        what, cap = ("SBUF", SB_BYTES[self.arch]) if buffer == SBUF else ("PSUM", PSUM_BYTES)
        if nbytes > cap:
            raise NkiError(
                f"{what} is full: a {shape} {dtype} tile needs {nbytes} bytes per partition, more than the "
                f"{cap} bytes per partition of {self.arch}",
                call,
            )
        prefix = name or ("sb" if buffer == SBUF else "ps")
        aname = self.unique(prefix)
        a = Alloc(aname, buffer, dtype, shape, pdim)
        loc = {
            "name": aname,
            "type": "SB" if buffer == SBUF else "PSUM",
            "dims": [parts, nbytes],
            "addr": 0,
            "allocated": True,
        }
        a.json = {
            "name": aname,
            "kind": "Internal",
            "dtype": bir_dtype(dtype),
            "tensor_shape": [parts, free],
            "memorylocations": [loc],
        }
        self.records.append((a, a.json))
        self.by_name[a.name] = a
        # the address comes when the trace ends, from the tile's live range (first to last
        # instruction that names it), as the compiler allocates
        self.onchip[aname] = OnChip(loc, buffer, nbytes, (shape, dtype), call, source_site())
        if manual is not None:
            address = self._manual_address(manual, (), parts, nbytes, call)
        if address is not None:
            self._pin(self.onchip[aname], address, parts, dtype, call)
        # strides: the partition dim steps by whole partitions (the pitch)
        strides = [0] * len(shape)
        acc = 1
        for d in reversed(range(len(shape))):
            if d == pdim:
                continue
            strides[d] = acc
            acc *= shape[d]
        strides[pdim] = free
        return Tensor(a, shape, strides, 0, dtype, pdim)

    def _manual_address(self, manual: ManualAlloc, index: Tuple[int, ...], parts: int, nbytes: int, call: str,
                        site=None) -> Tuple[int, int]:
        """(partition, byte address) of one tile (block ``index``) from a direct-allocation
        function (AWS nki/test/test_{sbuf,psum}_modulo_alloc.py: ``func(idx, pdim_size,
        fdim_size)``; PSUM's answer ``(bank, partition, address)`` is bank · 2 KiB + address)."""
        try:
            got = tuple(int(x) for x in manual.func(tuple(index), parts, nbytes))
        except NkiError:
            raise
        except Exception as e:  # the kernel's own allocation function failed
            raise NkiError(f"{manual!r}: the allocation function failed for block {tuple(index)}: {e}", call,
                           site=site)
        want = 3 if manual.buffer == PSUM else 2
        if len(got) != want:
            raise NkiError(f"{manual!r}: the allocation function must return {want} numbers "
                           f"({'bank, partition, address' if want == 3 else 'partition, address'}), got {got}",
                           call, site=site)
        if want == 3:
            return got[1], got[0] * PSUM_BANK + got[2]
        return got[0], got[1]

    def _pin(self, r: OnChip, address: Any, parts: int, dtype: np.dtype, call: str, site=None) -> None:
        """Places ``r`` where the kernel says: partition 0/32/64/96 (BIR's start partitions),
        inside the generation's capacity, PSUM tiles on a bank boundary (AWS: "The allocation
        for PSUM tensors must start at the beginning of each bank")."""
        try:
            p, f = (int(x) for x in address)
        except (TypeError, ValueError):
            raise NkiError(f"address={address!r}: expected (partition offset, byte offset)", call, site=site)
        what, cap = ("SBUF", SB_BYTES[self.arch]) if r.buffer == SBUF else ("PSUM", PSUM_BYTES)
        if p not in (0, 32, 64, 96) or p + parts > PMAX:
            raise NkiError(f"address partition {p}: a tile of {parts} partitions starts at partition 0, 32, 64 or 96 "
                           f"and ends by partition {PMAX}", call, site=site)
        if f < 0 or f + r.nbytes > cap:
            raise NkiError(f"address {f}: a tile of {r.nbytes} bytes per partition there leaves {what}'s {cap} bytes "
                           f"per partition ({self.arch})", call, site=site)
        if r.buffer == PSUM and f % PSUM_BANK:
            raise NkiError(f"address {f}: a PSUM tile starts at a bank boundary (a multiple of {PSUM_BANK})", call,
                           site=site)
        if f % dtype.itemsize:
            raise NkiError(f"address {f}: not a multiple of the {dtype} element size", call, site=site)
        r.pinned = True
        r.addr = f
        r.loc["addr"] = f
        if p:
            r.loc["base"] = p

    def _block_bytes_ok(self, shape, dtype, buffer, call) -> None:
        nbytes = _prod(shape[1:]) * dtype.itemsize
        what, cap = ("SBUF", SB_BYTES[self.arch]) if buffer == SBUF else ("PSUM", PSUM_BYTES)
        if nbytes > cap:
            raise NkiError(
                f"{what} is full: a {tuple(shape)} {dtype} block needs {nbytes} bytes per partition, more than "
                f"the {cap} bytes per partition of {self.arch}",
                call,
            )

    def block_of(self, parent: Alloc, index: Tuple[int, ...]) -> Alloc:
        """The allocation of one block of a blocked tensor (made on first use)."""
        a = parent.blocks.get(index)
        if a is None:
            call, site = parent.origin
            pd = parent.pdim
            shape = parent.shape[pd:]
            parts, free = shape[0], _prod(shape[1:])
            nbytes = free * parent.dtype.itemsize
            aname = self.unique(parent.name + "_" + "_".join(map(str, index)))
            a = Alloc(aname, parent.buffer, parent.dtype, shape, 0)
            loc = {"name": aname, "type": "SB" if parent.buffer == SBUF else "PSUM", "dims": [parts, nbytes],
                   "addr": 0, "allocated": True}
            a.json = {"name": aname, "kind": "Internal", "dtype": bir_dtype(parent.dtype),
                      "tensor_shape": [parts, free], "memorylocations": [loc]}
            self.records.append((a, a.json))
            self.by_name[a.name] = a
            self.onchip[aname] = OnChip(loc, parent.buffer, nbytes, (shape, parent.dtype), call, site)
            if parent.manual is not None:
                address = self._manual_address(parent.manual, index, parts, nbytes, call, site)
                self._pin(self.onchip[aname], address, parts, parent.dtype, call, site)
            parent.blocks[index] = a
            a.origin = "block"  # a block of a blocked tensor (birsim.nki._loops keeps it whole)
        return a

    def input_alloc(self, pname: str, arr: np.ndarray, index: int) -> Tensor:
        dtype = as_dtype(arr.dtype, "input")
        shape = tuple(int(n) for n in arr.shape) or (1,)
        aname = self.unique(pname)
        a = Alloc(aname, HBM, dtype, shape, None)
        a.input_index = index
        a.json = {
            "name": aname,
            "kind": "ExternalInput",
            "dtype": bir_dtype(dtype),
            "tensor_shape": list(shape),
            "memorylocations": [{"name": aname, "type": "Input", "dims": [1, _prod(shape) * dtype.itemsize]}],
        }
        self.records.append((a, a.json))
        self.by_name[a.name] = a
        return Tensor(a, shape, _row_major(shape), 0, dtype, None)

    def constant(self, arr: np.ndarray, call: str) -> Tensor:
        """A host array as one more input allocation (``const``...), fed by ``simulate``."""
        dt = as_dtype(arr.dtype, call)
        t = self.input_alloc("const", arr, -1)
        t._alloc.json["kind"] = "ExternalInput"
        self.constants[t._alloc.name] = arr
        return Tensor(t._alloc, t.shape, t._strides, 0, dt, None)

    # -- instructions
    def emit(self, opcode: str, call: str, engine: str, ins, outs, site=None, **fields) -> Dict[str, Any]:
        if site is None:
            site = source_site()
        fn, line = site
        self.counter += 1
        name = f"{call}@{os.path.basename(fn)}:{line}#{self.counter}"
        inst: Dict[str, Any] = {"opcode": opcode, "name": name, "engine": engine, "ins": list(ins), "outs": list(outs)}
        inst.update(fields)
        if self.folded_away:
            for op in inst["ins"] + inst["outs"]:
                if isinstance(op, dict) and op.get("memref") in self.folded_away:
                    raise NkiError(
                        f"{op['memref']} was made by an iteration of a loop folded into a BIR Loop (loops='bir') "
                        "and is used after it; trace with loops='unroll'",
                        call,
                        site=site,
                    )
        _check_x4(inst, call, site)
        for op in operand_refs(inst):
            a = self.by_name.get(op.get("memref"))
            if a is not None and op.get("dtype") in _NP_OF:
                use_as(a, _NP_OF[op["dtype"]], call, site)
        k = len(self.insts)
        self.insts.append(inst)
        self.block["instructions"].append(inst)
        for o in operand_refs(inst):
            r = self.onchip.get(o.get("memref"))
            if r is not None:
                if r.first is None:
                    r.first = k
                r.last = k
        if opcode not in ("Matmult", "MatmultMx", "Memset"):
            for op in inst["outs"]:
                r = self.onchip.get(op.get("memref")) if isinstance(op, dict) else None
                if r is not None and r.buffer == PSUM:
                    # PSUM values that are not matmul results (see language._accumulate)
                    self.mm_regions.setdefault(op["memref"], set()).add("written")
        return inst

    def retarget(self, inst: Dict[str, Any], outs: List[Dict[str, Any]]) -> None:
        """Replaces an emitted instruction's outputs, keeping the live ranges right: the new
        output's tile is live at that instruction; an old output tile no other instruction
        named gives its space back."""
        k = self.insts.index(inst)
        for op in inst["outs"]:
            r = self.onchip.get(op.get("memref")) if isinstance(op, dict) else None
            if r is not None and r.first == r.last == k:
                r.first = r.last = None
        inst["outs"] = outs
        for op in outs:
            a = self.by_name.get(op.get("memref"))
            if a is not None and op.get("dtype") in _NP_OF:
                use_as(a, _NP_OF[op["dtype"]], inst["name"].partition("@")[0])
            r = self.onchip.get(op.get("memref"))
            if r is not None:
                r.first = k if r.first is None else min(r.first, k)
                r.last = k if r.last is None else max(r.last, k)

    def mark_written(self, *views: Tensor) -> None:
        for v in views:
            v._alloc.written = True

    # -- the finished program
    def place(self) -> None:
        """Gives every SBUF / PSUM tile an address: first fit over the tiles live at its first
        use (live = from the first to the last instruction naming it), 64-byte aligned in SBUF,
        whole 2 KiB banks in PSUM. A tile that does not fit is an NkiError at its allocation."""
        for buffer, what, cap, align in ((SBUF, "SBUF", SB_BYTES[self.arch], SB_ALIGN), (PSUM, "PSUM", PSUM_BYTES, PSUM_BANK)):
            tiles = sorted((r for r in self.onchip.values() if r.buffer == buffer and r.first is not None),
                           key=lambda r: (r.first, r.last))
            pinned = [r for r in tiles if r.pinned]
            live: List[OnChip] = []
            for r in tiles:
                live = [x for x in live if x.last >= r.first]
                if r.pinned:
                    # where the kernel put it (tiles it pins over each other alias, as on the device)
                    live.append(r)
                    continue
                size = -(-r.nbytes // align) * align
                # around the tiles live now, and the pinned tiles live at any time during this one
                near = live + [x for x in pinned if x.first > r.first and x.first <= r.last]
                taken = sorted((x.addr, x.addr + -(-x.nbytes // align) * align) for x in near)
                at = 0
                for lo, hi in taken:
                    if at + size <= lo:
                        break
                    at = max(at, hi)
                if at + size > cap:
                    held = sum(-(-x.nbytes // align) * align for x in live)
                    shape, dtype = r.what
                    raise NkiError(
                        f"{what} is full: a {shape} {dtype} tile needs {r.nbytes} bytes per partition while "
                        f"{len(live)} other tile(s) live at the same time hold {held} of {cap} ({self.arch})",
                        r.call,
                        site=r.site,
                    )
                r.addr = at
                r.loc["addr"] = at
                live.append(r)

    def program(self, outputs: Sequence[Alloc]) -> Dict[str, Any]:
        self.place()
        outs = {id(a) for a in outputs}
        allocs = []
        for a, j in self.records:
            r = self.onchip.get(j["name"])
            if r is not None and r.first is None:
                continue  # an on-chip tile no instruction names (e.g. a scratch tile retargeted away)
            j = dict(j)
            if a is not None and a.used_as is not None and a.used_as != a.dtype:
                j["dtype"] = bir_dtype(a.used_as)
                j["tensor_shape"] = retyped_shape(j["tensor_shape"], a.dtype, a.used_as)
            if a is not None and id(a) in outs and a.input_index is None:
                j["kind"] = "ExternalOutput"
                j["memorylocations"] = [dict(j["memorylocations"][0], type="Output")]
            allocs.append(j)
        return {
            "arch": self.arch,
            "version": 2,
            "functions": [
                {
                    "name": self.name,
                    "allocations": allocs,
                    "blocks": self.body,
                }
            ],
        }
