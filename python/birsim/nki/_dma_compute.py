"""``nisa.dma_compute``: ``dst = srcs[0] + srcs[1] + ...`` computed by the DMA engines in fp32 and
cast once to ``dst``'s dtype (AWS nki/api/nki/isa/__init__.py ``dma_compute``).

- Without a vector offset: one BIR ``DMACopy`` in ``CCE`` mode, ``cce_op: add``, ``ins`` = the
  sources in order: birsim folds them into an fp32 accumulator and narrows the sum once to the
  output dtype (fidelity D4).
- The read-modify-write forms (a ``vector_offset``): the scatter ``dst(HBM)[idx] += src(SBUF)``
  and the gather ``dst(SBUF) += src(HBM)[idx]``. When the HW-DGE bridge's add (``DMACopy`` Copy,
  ``cce_op: add``, which narrows the source to ``dst``'s dtype, then adds in fp32 and narrows
  once more) rounds exactly once (a float ``dst`` birsim accumulates into, the other source of
  the same dtype or ``dst`` float32), it is that one instruction. Otherwise the add goes through
  an fp32 SBUF scratch tile so that only the last copy rounds (see ``_rmw``).

``docs/nki.md`` holds the mapping and its decisions.
"""

from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from . import _tracer as T
from ._gather import VecOffset, _cmd_enum, emit_vector_dma, is_vector, narrow_index
from ._tracer import HBM, SBUF, NkiError, Tensor, ap_json, builder

CALL = "dma_compute"
F32 = np.dtype(np.float32)
MAX_SRCS = 16
# float dtypes the HW-DGE add accumulates into (birsim's reducible dtypes, fidelity J2, minus int32)
_BRIDGE_FLOATS = {"float32", "bfloat16", "float16", "float8e4", "float8e5", "float8e3"}

_FORMS = ("the read-modify-write forms are the scatter dma_compute(dst=t.ap(..., vector_offset=idx), "
          "srcs=[<the same view>, sbuf_tile]) and the gather dma_compute(dst=sbuf_tile, "
          "srcs=[t.ap(..., vector_offset=idx), sbuf_tile]) (AWS dma_compute)")


def dma_compute(*args, **kw):
    """``dst = reduce_op(srcs[0] * scales[0], srcs[1] * scales[1], ...)`` on the DMA engines:
    add only, every scale 1.0, fp32 arithmetic and one cast to ``dst``'s dtype."""
    from . import isa as I

    params = ("dst", "srcs", "reduce_op", "scales", "unique_indices", "oob_mode", "name")
    a, _ = I._bind(CALL, args, kw, params, params,
                   {"scales": None, "unique_indices": True, "oob_mode": I.oob_mode.error, "name": None})
    op, scales = a["reduce_op"], a["scales"]
    if isinstance(op, (list, tuple, np.ndarray)) and not isinstance(scales, (list, tuple, np.ndarray)):
        # NKI 0.2.0's order dma_compute(dst, srcs, scales, reduce_op) (AWS migration guide)
        op, scales = scales, op
    dst = I._need(a["dst"], CALL, "dst", (SBUF, HBM))
    srcs = a["srcs"]
    if isinstance(srcs, Tensor) or not isinstance(srcs, (list, tuple)):
        raise NkiError("srcs must be a list of tensors", CALL)
    srcs = [I._need(s, CALL, f"srcs[{k}]", (SBUF, HBM)) for k, s in enumerate(srcs)]
    if not 1 <= len(srcs) <= MAX_SRCS:
        raise NkiError(f"srcs holds {len(srcs)} tensors; AWS dma_compute takes 1 to {MAX_SRCS}", CALL)
    try:
        name = I.alu_op(op, CALL, "reduce_op")
    except NkiError:
        name = None
    if name != "add":
        raise NkiError(f"reduce_op={op!r}: only nl.add is supported (AWS dma_compute)", CALL)
    _check_scales(scales, len(srcs))
    if len(srcs) == 1:
        # AWS's migration guide: `dma_compute(dst, [src], reduce_op=nl.add)` is `dst += src`
        srcs = [dst, srcs[0]]
    for k, s in enumerate(srcs):
        if s.size != dst.size:
            raise NkiError(f"srcs[{k}] {s.shape} holds {s.size} elements, dst {dst.shape} {dst.size}: the element "
                           "counts must match exactly (AWS dma_compute)", CALL)
    for what, t in [("dst", dst)] + [(f"srcs[{k}]", s) for k, s in enumerate(srcs)]:
        if t._dyn is not None and not isinstance(t._dyn, VecOffset):
            raise NkiError(f"{what} has a runtime (scalar) offset: dma_compute's tensors must have compile-time "
                           "known addresses, a vector_offset aside (AWS dma_compute)", CALL)
    skip = _cmd_enum(I.oob_mode, a["oob_mode"]) == I.oob_mode.skip
    if is_vector(dst) or any(is_vector(s) for s in srcs):
        if not a["unique_indices"]:
            raise NkiError("unique_indices=False: a read-modify-write with a vector_offset needs unique indices "
                           "(AWS dma_compute: non-unique indices are not supported yet)", CALL)
        _rmw(dst, srcs, skip)
        return None
    if skip:
        raise NkiError("oob_mode.skip applies to an indirect access (a vector_offset) only (AWS dma_compute)", CALL)
    emit_cce(dst, srcs)
    return None


def _check_scales(scales: Any, n: int) -> None:
    if scales is None:
        return
    vals = list(np.ravel(np.asarray(scales, dtype=object))) if not np.isscalar(scales) else None
    if vals is None or len(vals) != n:
        raise NkiError(f"scales must be a list of {n} numbers, one per source, got {scales!r}", CALL)
    for v in vals:
        if isinstance(v, Tensor) or not isinstance(v, (int, float, np.integer, np.floating)) or float(v) != 1.0:
            raise NkiError(f"scales={scales!r}: every scale must be 1.0 (AWS dma_compute)", CALL)


def emit_cce(dst: Tensor, srcs: Sequence[Tensor]) -> None:
    """One ``DMACopy`` CCE: the sources cast to fp32, added in order, the sum narrowed once."""
    views = [dst] + list(srcs)
    if all(v.shape == dst.shape for v in views):
        lv = T.joint_levels(views, CALL)
    else:
        lv = [T.levels_of(v, call=CALL) for v in views]
    ins = [ap_json(s, l, call=CALL) for s, l in zip(srcs, lv[1:])]
    builder(CALL).emit("DMACopy", CALL, "DMA", ins, [ap_json(dst, lv[0], call=CALL)], mode="CCE", cce_op="add")
    dst._alloc.written = True


def _same_view(a: Tensor, b: Tensor) -> bool:
    """The same elements of the same tensor (for a vector view: by the same index tile)."""
    if a._alloc is not b._alloc or a.shape != b.shape or a._strides != b._strides or a._offset != b._offset:
        return False
    if a.dtype != b.dtype or type(a._dyn) is not type(b._dyn):
        return False
    if isinstance(a._dyn, VecOffset):
        x, y = a._dyn, b._dyn
        return (x.step, x.max_index) == (y.step, y.max_index) and _same_view(x.index, y.index)
    return a._dyn is None


def _rmw(dst: Tensor, srcs: List[Tensor], skip: bool) -> None:
    if len(srcs) != 2:
        raise NkiError(f"a read-modify-write with a vector_offset takes exactly 2 sources, got {len(srcs)}; {_FORMS}",
                       CALL)
    scatter = is_vector(dst)
    if scatter:
        match = [k for k, s in enumerate(srcs) if _same_view(s, dst)]
        if not match:
            raise NkiError(f"dst has a vector_offset but no source is the same view of it; {_FORMS}", CALL)
        other = srcs[1 - match[0]]
        if other.buffer != SBUF or is_vector(other):
            raise NkiError(f"the scatter's data source must be an SBUF tile, {other.name} is "
                           f"{'indirect' if is_vector(other) else 'in ' + other.buffer.upper()}; {_FORMS}", CALL)
    else:
        if dst.buffer != SBUF:
            raise NkiError(f"a source has a vector_offset, so dst must be an SBUF tile (the gather form), "
                           f"{dst.name} is in {dst.buffer.upper()}; {_FORMS}", CALL)
        vec = [k for k, s in enumerate(srcs) if is_vector(s)]
        if len(vec) != 1 or not _same_view(srcs[1 - vec[0]], dst):
            raise NkiError(f"the gather form needs one indirect HBM source and one source that is dst itself; {_FORMS}",
                           CALL)
        other = srcs[vec[0]]
    d, o = T.bir_dtype(dst.dtype), T.bir_dtype(other.dtype)
    if d in _BRIDGE_FLOATS and (o == d or d == "float32"):
        # the bridge narrows `other` to dst's dtype (exact: the same dtype, or a widening into
        # fp32), adds in fp32 and narrows once
        emit_vector_dma(CALL, dst, other, oob_skip=skip, add=True)
        return
    b = builder(CALL)
    if scatter:
        # gather dst's rows into fp32, add the data in fp32 (CCE), scatter the sums back (their
        # one cast); a skipped row is skipped by both DMAs, so it stays as it was
        vo: VecOffset = dst._dyn
        rows = dst._view(dst.shape, dst._strides, dst._offset, dst._pdim)
        rows._dyn = VecOffset(narrow_index(CALL, vo), vo.step, vo.max_index)  # narrowed once for both DMAs
        dst = rows
        acc = b.new_alloc((other.partitions, other.free_size), F32, SBUF, CALL)
        emit_vector_dma(CALL, acc, dst, oob_skip=skip)
        emit_cce(acc, [acc if s is not other else other for s in srcs])
        emit_vector_dma(CALL, dst, acc, oob_skip=skip)
        return
    if skip and T.is_int(dst.dtype) and dst.dtype.itemsize == 4:
        raise NkiError(
            f"a gather read-modify-write into {dst.dtype} with oob_mode.skip: birsim's exact lowering passes dst "
            "through fp32 (the add's operand cast, AWS dma_compute), which would change a skipped row's values "
            "beyond 2**24; use oob_mode.error or a float dst", CALL)
    # dst widened into fp32, the gathered rows added there by the bridge (exact widening, one fp32
    # rounding), the sums narrowed back once
    from .isa import emit_dma

    acc = b.new_alloc((dst.partitions, dst.free_size), F32, SBUF, CALL)
    emit_dma(CALL, acc, dst)
    emit_vector_dma(CALL, acc, other, oob_skip=skip, add=True)
    emit_dma(CALL, dst, acc)
