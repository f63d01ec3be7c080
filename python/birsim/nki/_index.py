"""Indexing for ``birsim.nki``: NumPy-style basic indexing of tensors (integers, slices,
``nl.ds``, ``...``) and the affine index expressions of the older NKI API (``nl.arange``,
``nl.mgrid``) with their masks. Every index becomes part of a view's offset and strides, so it
ends up in a ``physical_ap``; nothing is gathered at run time.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ._tracer import NkiError, Tensor, check_bounds, unblock


class DynSlice:
    """``nl.ds(start, size)``: the slice ``start:start+size``."""

    __slots__ = ("start", "size", "index")

    def __init__(self, start: Any, size: int):
        if isinstance(size, Tensor):
            raise NkiError("nl.ds takes a compile-time size", "ds")
        # a one-element int tile as the start: a runtime offset (the view starts at 0 and moves)
        self.index = start if isinstance(start, Tensor) or hasattr(start, "as_tile") else None
        self.start = 0 if self.index is not None else int(start)
        self.size = int(size)

    def as_slice(self) -> slice:
        return slice(self.start, self.start + self.size)


class IndexExpr:
    """An affine index ``const + Σ coef·i_axis`` over result axes (``nl.arange(n)[:, None]``,
    ``nl.mgrid``). ``terms`` holds ``(axis, coef, n)``; ``ndim`` is the index's rank."""

    __slots__ = ("const", "terms", "ndim")

    def __init__(self, const: int, terms: Tuple[Tuple[int, int, int], ...], ndim: int):
        self.const = int(const)
        self.terms = tuple(terms)
        self.ndim = ndim

    @property
    def shape(self) -> Tuple[int, ...]:
        s = [1] * self.ndim
        for a, _, n in self.terms:
            s[a] = n
        return tuple(s)

    def lo_hi(self) -> Tuple[int, int]:
        lo = self.const + sum(min(0, c * (n - 1)) for _, c, n in self.terms)
        hi = self.const + sum(max(0, c * (n - 1)) for _, c, n in self.terms)
        return lo, hi

    def __getitem__(self, key) -> "IndexExpr":
        if not isinstance(key, tuple):
            key = (key,)
        if self.ndim != 1:
            raise NkiError("only a 1-D index expression (nl.arange(n)) can be re-shaped with [:, None]", "arange")
        slots = [k for k, x in enumerate(key) if isinstance(x, slice)]
        if len(slots) != 1 or any(x is not None for x in key if not isinstance(x, slice)):
            raise NkiError(f"unsupported index-expression subscript {key!r} (use [:, None] or [None, :])", "arange")
        axis = slots[0]
        return IndexExpr(self.const, tuple((axis, c, n) for _, c, n in self.terms), len(key))

    def _combine(self, other, sign: int) -> "IndexExpr":
        if isinstance(other, (int, np.integer)):
            return IndexExpr(self.const + sign * int(other), self.terms, self.ndim)
        if isinstance(other, IndexExpr):
            terms = list(self.terms)
            for a, c, n in other.terms:
                terms.append((a, sign * c, n))
            return IndexExpr(self.const + sign * other.const, tuple(terms), max(self.ndim, other.ndim))
        return NotImplemented

    def __add__(self, o):
        return self._combine(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._combine(o, -1)

    def __rsub__(self, o):
        neg = IndexExpr(-self.const, tuple((a, -c, n) for a, c, n in self.terms), self.ndim)
        return neg._combine(o, 1)

    def __mul__(self, o):
        if not isinstance(o, (int, np.integer)):
            raise NkiError("index expressions multiply only by integers (they stay affine)", "arange")
        k = int(o)
        return IndexExpr(self.const * k, tuple((a, c * k, n) for a, c, n in self.terms), self.ndim)

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def _cmp(self, o, op: str) -> "Mask":
        if isinstance(o, IndexExpr):
            return (self - o)._cmp(0, op)
        if not isinstance(o, (int, np.integer, float)):
            raise NkiError("a mask compares an index expression with a number or another index expression", "mask")
        lo, hi = self.lo_hi()
        c = o
        table = {
            "<": (hi < c, lo >= c),
            "<=": (hi <= c, lo > c),
            ">": (lo > c, hi <= c),
            ">=": (lo >= c, hi < c),
        }
        all_true, all_false = table[op]
        m = Mask(all_true, all_false, f"index in [{lo}, {hi}] {op} {o}")
        m.affine = (self - o, op)
        axes = {a for a, _, n in self.terms if n > 1}
        if len(axes) == 1 and not all_true and not all_false:
            # one result axis: the elements where the comparison holds are a run of that axis
            axis = axes.pop()
            n = max(n for a, _, n in self.terms if a == axis)
            test = {"<": lambda v: v < c, "<=": lambda v: v <= c, ">": lambda v: v > c, ">=": lambda v: v >= c}[op]
            ks = [k for k in range(n) if test(self.const + sum(cf * k for a, cf, _ in self.terms if a == axis))]
            if ks and ks == list(range(ks[0], ks[-1] + 1)):
                m.ranges = {axis: (ks[0], ks[-1] + 1, n)}
        return m

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    def __repr__(self) -> str:
        return f"IndexExpr({self.const} + {list(self.terms)}, ndim={self.ndim})"


class Mask:
    """A mask over index expressions, known while tracing to be all true, all false or
    partial."""

    __slots__ = ("all_true", "all_false", "why", "affine", "ranges")

    def __init__(self, all_true: bool, all_false: bool, why: str):
        self.all_true = all_true
        self.all_false = all_false
        self.why = why
        # (expression, comparison) for a single affine comparison (an affine_select predicate)
        self.affine: Optional[Tuple["IndexExpr", str]] = None
        # result axis -> (lo, hi, n): the mask is true exactly on lo <= i < hi of that axis
        self.ranges: Optional[dict] = None

    def _span(self) -> Optional[dict]:
        if self.all_true:
            return {}
        return self.ranges

    def __and__(self, o: "Mask") -> "Mask":
        o = as_mask(o)
        m = Mask(self.all_true and o.all_true, self.all_false or o.all_false, f"({self.why}) & ({o.why})")
        a, b = self._span(), o._span()
        if a is not None and b is not None and not m.all_true and not m.all_false:
            r = dict(a)
            for axis, (lo, hi, n) in b.items():
                if axis in r:
                    lo0, hi0, n0 = r[axis]
                    lo, hi, n = builtins_max(lo, lo0), builtins_min(hi, hi0), builtins_max(n, n0)
                    if lo >= hi:
                        return Mask(False, True, m.why)
                r[axis] = (lo, hi, n)
            m.ranges = r
        return m

    __rand__ = __and__

    def __or__(self, o: "Mask") -> "Mask":
        o = as_mask(o)
        return Mask(self.all_true or o.all_true, self.all_false and o.all_false, f"({self.why}) | ({o.why})")

    __ror__ = __or__


def as_mask(m: Any) -> Mask:
    if isinstance(m, Mask):
        return m
    if isinstance(m, (bool, np.bool_)):
        return Mask(bool(m), not bool(m), str(m))
    raise NkiError(f"unsupported mask {m!r}: a mask compares nl.arange/nl.mgrid index expressions with numbers", "mask")


builtins_max = max
builtins_min = min
SKIP = "skip"


def mask_region(mask: Any, call: str) -> Any:
    """``None`` when the mask is absent or all true, ``SKIP`` when it is all false (the call
    writes nothing), else ``{axis: (lo, hi, n)}``: the mask holds on a run of one or more
    result axes, and the call is traced on that sub-region of its operands."""
    if mask is None:
        return None
    m = as_mask(mask)
    if m.all_true:
        return None
    if m.all_false:
        return SKIP
    if m.ranges is None:
        raise NkiError(
            f"a mask true for only some elements ({m.why}) that is not a run of one axis is not supported", call
        )
    return m.ranges


def restrict(view: Tensor, region: Any, call: str) -> Tensor:
    """The part of ``view`` a mask region covers (axes of size 1 broadcast and stay whole)."""
    if not region or region is SKIP:
        return view
    if view._src is not None:
        base, idx = view._src
        return _advanced(base, [_cut(k, region, call) if isinstance(k, IndexExpr) else k for k in idx], strict=True)
    key = [slice(None)] * view.ndim
    for axis, (lo, hi, n) in region.items():
        if axis >= view.ndim or view.shape[axis] == 1:
            continue
        if view.shape[axis] != n:
            raise NkiError(
                f"the mask covers {n} indices of axis {axis}, the operand {view.shape} has {view.shape[axis]}", call
            )
        key[axis] = slice(lo, hi)
    return index_tensor(view, tuple(key))


def _cut(e: IndexExpr, region: Any, call: str) -> IndexExpr:
    """The index expression over the region's runs of its axes."""
    const = e.const
    terms = []
    for a, c, n in e.terms:
        if a in region and n > 1:
            lo, hi, m = region[a]
            if m != n:
                raise NkiError(f"the mask covers {m} indices of axis {a}, the index expression {n}", call)
            const += c * lo
            n = hi - lo
        terms.append((a, c, n))
    return IndexExpr(const, tuple(terms), e.ndim)


def mask_active(mask: Any, call: str) -> bool:
    """False when the mask is all false (the call writes nothing, so it is not traced); an
    error for a mask that is true for only some elements."""
    if mask is None:
        return True
    m = as_mask(mask)
    if m.all_true:
        return True
    if m.all_false:
        return False
    raise NkiError(
        f"a mask true for only some elements ({m.why}) is not supported yet; size the tile to the "
        "valid region instead",
        call,
    )


def arange(start, stop=None, step=1) -> IndexExpr:
    if stop is None:
        start, stop = 0, start
    n = len(range(int(start), int(stop), int(step)))
    if n < 1:
        raise NkiError(f"nl.arange({start}, {stop}, {step}) is empty", "arange")
    return IndexExpr(int(start), ((0, int(step), n),), 1)


class _MGrid:
    """``nl.mgrid[0:128, 0:512]``: one index expression per axis."""

    def __getitem__(self, key) -> Any:
        if not isinstance(key, tuple):
            key = (key,)
        out = []
        for axis, k in enumerate(key):
            if not isinstance(k, slice) or k.stop is None:
                raise NkiError("nl.mgrid takes slices with a stop, e.g. nl.mgrid[0:128, 0:512]", "mgrid")
            start = 0 if k.start is None else int(k.start)
            step = 1 if k.step is None else int(k.step)
            n = len(range(start, int(k.stop), step))
            out.append(IndexExpr(start, ((axis, step, n),), len(key)))
        return Grid(out) if len(out) > 1 else out[0]


class Grid(tuple):
    """What ``nl.mgrid`` returns: a tuple of index expressions, also reachable as ``.p`` (the
    first, the partition axis) and ``.x`` (the last)."""

    @property
    def p(self) -> IndexExpr:
        return self[0]

    @property
    def x(self) -> IndexExpr:
        return self[-1]


mgrid = _MGrid()


def _expand(key, ndim: int) -> List[Any]:
    if not isinstance(key, tuple):
        key = (key,)
    key = list(key)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise NkiError("an index can hold one '...'", "index")
    if n_ell:
        at = key.index(Ellipsis)
        fill = ndim - (len(key) - 1)
        key = key[:at] + [slice(None)] * fill + key[at + 1 :]
    if len(key) > ndim:
        raise NkiError(f"too many indices ({len(key)}) for a {ndim}-D tensor", "index")
    return key + [slice(None)] * (ndim - len(key))


def index_tensor(t: Tensor, key) -> Tensor:
    key = _expand(key, t.ndim)
    if key and isinstance(key[0], Tensor) and not t.on_chip:
        from ._gather import tile_indexed

        return tile_indexed(t, key)
    if t._dyn is not None and not isinstance(t._dyn, tuple) and key and key[0] != slice(None):
        raise NkiError("the indirect dimension of a vector-indexed view cannot be sliced or selected again", "index")
    if any(isinstance(k, IndexExpr) for k in key):
        return _advanced(t, key)
    shape: List[int] = []
    strides: List[int] = []
    offset = t._offset
    pdim: Optional[int] = None
    dyn = None
    for d, k in enumerate(key):
        n, s = t.shape[d], t._strides[d]
        if isinstance(k, DynSlice):
            if k.index is not None:
                if dyn is not None:
                    raise NkiError("one runtime nl.ds per view", "ds")
                if t.on_chip and d == t._pdim:
                    raise NkiError("a runtime nl.ds on the partition dim of an on-chip tensor is not allowed", "ds")
                dyn = (k.index, s, n - k.size + 1)
            k = k.as_slice()
        if isinstance(k, Tensor):
            raise NkiError("indexing with a tensor (a runtime index) is not supported yet", "index")
        if isinstance(k, (int, np.integer)):
            i = int(k)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise NkiError(f"index {int(k)} is out of bounds for dimension {d} of size {n}", "index")
            offset += i * s
            if d == t._pdim:
                pdim = len(shape)
                shape.append(1)
                strides.append(s)
            continue
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise NkiError(f"slice step {step} on dimension {d}: only positive steps are supported", "index")
            start = 0 if start is None else int(start)
            stop = n if stop is None else int(stop)
            if start < 0:
                start += n
            if stop < 0:
                stop += n
            if not (0 <= start < stop <= n):
                raise NkiError(
                    f"slice {start}:{stop} is out of bounds (or empty) for dimension {d} of size {n}", "index"
                )
            m = len(range(start, stop, step))
            offset += start * s
            if d == t._pdim:
                pdim = len(shape)
            shape.append(m)
            strides.append(s * step)
            continue
        if k is None:
            raise NkiError("np.newaxis in a tensor index is not supported; use expand_dim", "index")
        raise NkiError(f"unsupported index {k!r}", "index")
    if t.on_chip:
        while len(shape) < 2:
            shape.append(1)
            strides.append(1)
    elif not shape:
        shape, strides = [1], [1]
    v = t._view(shape, strides, offset, pdim)
    check_bounds(v, "index")
    v = unblock(v, "index")
    if dyn is not None:
        v = v.dynamic(dyn[0], dyn[1], dyn[2], "ds")
    return v


def _advanced(t: Tensor, key: Sequence[Any], strict: bool = False) -> Tensor:
    """NumPy advanced indexing by affine index expressions: a strided view. An expression that
    leaves its dimension is reported when an instruction uses the view (not here), so that a
    call's mask can first cut it back inside, as the older NKI API's ragged tiles do."""
    try:
        return _advanced_view(t, key)
    except NkiError as e:
        if strict or t._oob:
            raise
        v = _advanced_view(t, key, check=False)
        v._oob = e.reason
        v._src = (t, tuple(key))
        return v


def _advanced_view(t: Tensor, key: Sequence[Any], check: bool = True) -> Tensor:
    ndim = max(k.ndim for k in key if isinstance(k, IndexExpr))
    ndim = max(ndim, 2 if t.on_chip else 1)
    sizes = [1] * ndim
    strides = [0] * ndim
    offset = t._offset
    pdim: Optional[int] = None
    for d, k in enumerate(key):
        n, s = t.shape[d], t._strides[d]
        if isinstance(k, (int, np.integer)):
            i = int(k)
            if not 0 <= i < n:
                raise NkiError(f"index {i} is out of bounds for dimension {d} of size {n}", "index")
            offset += i * s
            if d == t._pdim:
                pdim = 0
            continue
        if isinstance(k, slice) and k == slice(None) and n == 1:
            continue
        if not isinstance(k, IndexExpr):
            raise NkiError(
                f"dimension {d}: mixing {k!r} with nl.arange/nl.mgrid index expressions is not supported", "index"
            )
        lo, hi = k.lo_hi()
        if check and (lo < 0 or hi >= n):
            raise NkiError(f"index expression covers [{lo}, {hi}], outside dimension {d} of size {n}", "index")
        offset += k.const * s
        for a, c, m in k.terms:
            if sizes[a] != 1 and sizes[a] != m:
                raise NkiError(f"index expressions disagree on the size of result axis {a}: {sizes[a]} vs {m}", "index")
            sizes[a] = m
            strides[a] += c * s
        if d == t._pdim:
            axes = {a for a, _, m in k.terms if m > 1}
            if axes - {0}:
                raise NkiError("the partition dimension must be indexed along the result's first axis", "index")
            pdim = 0
    if t.on_chip and pdim is None:
        raise NkiError("index the partition dimension too", "index")
    for a in range(ndim):
        if sizes[a] == 1 and strides[a] == 0:
            strides[a] = 1
    if t.on_chip and sizes[0] == 1:
        strides[0] = t._strides[t._pdim]
    v = t._view(sizes, strides, offset, pdim if t.on_chip else None)
    if check:
        check_bounds(v, "index")
        v = unblock(v, "index")
    return v
