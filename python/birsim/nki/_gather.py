"""Gathers, scatters and the selection / scan calls of ``birsim.nki`` (issue #31).

Per-partition indirection (``.ap(vector_offset=...)``, ``.vector_select``, an HBM tensor indexed
by a tile) becomes BIR's HW-DGE form: a ``DMACopy`` (Copy mode) whose HBM-side access pattern
carries a ``vector_offset`` (uint16 row indices, one per row of the other side). The within-SBUF
gathers are ``Gather`` (``nc_n_gather``, ``nl.gather_flattened``) and ``IndirectCopy``
(``local_gather``); the rest map one call to one BIR opcode (``Select``, ``CopyPredicated``,
``RangeSelect``, ``TensorScalarCache``, ``Activation is_activate2``, ``NonzeroWithCount``,
``GetSequenceBounds``, ``TensorReduce`` over the partitions, ``DMACopy`` Transpose).
``docs/nki.md`` holds the mapping and its decisions.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from . import _tracer as T
from ._tracer import HBM, PSUM, SBUF, NkiError, Tensor, ap_json, builder, imm, levels_of

U16 = np.dtype(np.uint16)
F32 = np.dtype(np.float32)
# index dtypes a vector offset takes (uint16 as it is, the others narrowed exactly: index_operand)
_INDEX_READ = {np.dtype(t) for t in (np.uint16, np.uint8, np.uint32, np.int32)}
U16_SENTINEL = 65535


class VecOffset:
    """A per-partition runtime offset on dim 0 of an HBM view: row ``i`` of the view is row
    ``index[i]`` of the tensor (``step`` elements apart, ``max_index`` rows). The view keeps a
    step of 0 on dim 0 (its static part is row 0), so bounds checks see one row."""

    __slots__ = ("index", "step", "max_index")

    def __init__(self, index: Tensor, step: int, max_index: int):
        self.index = index
        self.step = int(step)
        self.max_index = int(max_index)


def is_vector(t: Any) -> bool:
    return isinstance(t, Tensor) and isinstance(t._dyn, VecOffset)


def _check_index(call: str, index: Any, rows: Optional[int]) -> Tensor:
    """The index tile of a vector offset: in SBUF; for a copy (``rows`` given) ``(rows, 1)`` of a
    dtype birsim.nki narrows exactly (dma_transpose checks its own 2-D index tiles)."""
    if not isinstance(index, Tensor):
        raise NkiError(f"vector_offset must be an SBUF tile of indices, got {type(index).__name__}", call)
    if index.buffer != SBUF:
        raise NkiError(f"the vector_offset tile must be in SBUF (AWS dma_copy), {index.name} is in {index.buffer.upper()}",
                       call)
    if rows is not None:
        if index.free_size != 1:
            raise NkiError(f"the vector_offset tile {index.shape} must hold one index per partition, shape (P, 1)", call)
        if index.partitions != rows:
            raise NkiError(f"the vector_offset tile has {index.partitions} partitions for {rows} rows", call)
    elif not T.is_int(index.dtype):
        raise NkiError(f"vector_offset indices must be integers, got {index.dtype}", call)
    if rows is not None and np.dtype(index.dtype) not in _INDEX_READ:
        raise NkiError(
            f"vector_offset indices of dtype {index.dtype}: birsim.nki takes uint16, uint8, uint32 or int32 "
            "(birsim's HW-DGE gather reads uint16; see docs/nki.md)", call)
    return index


def _vector_view(base: Tensor, shape, strides, offset: int, index: Tensor, step: int, max_index: int,
                 call: str) -> Tensor:
    if base.on_chip:
        raise NkiError("vector indirection applies to HBM tensors only (AWS vector_select / dma_copy)", call)
    if base._dyn is not None:
        raise NkiError("a view takes one dynamic offset (no chaining; AWS NkiTensor.is_indirect)", call)
    shape = [int(n) for n in shape]
    _check_index(call, index, None)
    strides = [0] + [int(s) for s in strides[1:]]
    v = base._view(shape, strides, offset, None)
    T.check_bounds(v, call)
    v._dyn = VecOffset(index, step, max_index)
    return v


def vector_ap(t: Tensor, pattern, offset, vector_offset, indirect_dim, dtype) -> Tensor:
    """``t.ap(pattern, offset, vector_offset=idx, indirect_dim=0)``: level 0 of the pattern walks
    the rows ``idx`` names, each ``t.strides[indirect_dim]`` elements apart."""
    call = "ap"
    if dtype is not None and T.as_dtype(dtype, call) != t.dtype:
        raise NkiError("reinterpreting the dtype in .ap() is not supported yet", call)
    d = int(indirect_dim) % t.ndim
    if d != 0:
        raise NkiError(f"vector_offset indexes dim 0 (indirect_dim=0), got indirect_dim={indirect_dim}", call)
    pattern = [(int(s), int(n)) for s, n in pattern]
    off = t._offset + (int(offset) if offset is not None else 0)
    return _vector_view(t, [n for _, n in pattern], [s for s, _ in pattern], off, vector_offset,
                        t._strides[d], t.shape[d], call)


def vector_select(t: Tensor, dim: int, vector_offset: Any) -> Tensor:
    """``t.vector_select(0, idx)``: row p of the view is row ``idx[p]`` of ``t``."""
    call = "vector_select"
    if int(dim) % max(1, t.ndim) != 0:
        raise NkiError(f"vector_select takes dim 0 (AWS), got {dim}", call)
    if not isinstance(vector_offset, Tensor):
        raise NkiError("vector_offset must be an SBUF tile of indices", call)
    n = vector_offset.partitions
    return _vector_view(t, [n] + list(t.shape[1:]), t._strides, t._offset, vector_offset, t._strides[0], t.shape[0],
                        call)


def tile_indexed(t: Tensor, key: List[Any]) -> Tensor:
    """An HBM tensor indexed on dim 0 by a tile (the older API's ``data[idx_tile, i_f]``): the
    rows the tile names, the other dims indexed as usual."""
    from ._index import IndexExpr, _advanced, index_tensor

    call = "index"
    idx = key[0]
    if any(isinstance(k, Tensor) for k in key[1:]):
        raise NkiError("only the first dimension can be indexed by a tile (per-partition indirection)", call)
    rest = list(key[1:])
    if any(isinstance(k, IndexExpr) for k in rest):
        if any(isinstance(k, IndexExpr) and any(a == 0 and n > 1 for a, _, n in k.terms) for k in rest):
            raise NkiError("the index expressions of the other dims must not vary along the partition axis", call)
        v = _advanced(t, [0] + rest, strict=True)
    else:
        v = index_tensor(t, tuple([slice(0, 1)] + rest))
    if v.shape[0] != 1:
        raise NkiError(f"indexing by a tile gives the rows first; got {v.shape}", call)
    if not isinstance(idx, Tensor) or not T.is_int(idx.dtype):
        raise NkiError("the index tile must hold integers", call)
    return _vector_view(t, [idx.partitions] + list(v.shape[1:]), [0] + list(v._strides[1:]), v._offset, idx,
                        t._strides[0], t.shape[0], call)


def index_operand(call: str, vo: VecOffset) -> Dict[str, Any]:
    """The uint16 index AP of a vector offset (``narrow_index``)."""
    t = narrow_index(call, vo)
    return ap_json(t, [levels_of(t, call=call)[0], [1, 1]], call=call)


def narrow_index(call: str, vo: VecOffset) -> Tensor:
    """The uint16 index tile of a vector offset. uint16 indices are used as they are. Others are
    narrowed exactly into a fresh uint16 tile: uint8 by one ``TensorScalar min 65535`` (a plain
    widening); uint32 and int32 by ``TensorScalar max -1, min 65535`` into an int32 tile (the fp32
    path: exact for every result in -1..65535, and a value past either end clamps to it), then
    ``TensorScalarPtr bitwise_and 0xFFFF`` (the integer path) into uint16, which turns -1 into
    65535. So 0..65534 keep their value and every other index (negative, or ≥ 65535) becomes
    65535, out of range because the indexed dim then has at most 65535 rows (else an NkiError):
    an out-of-range index still faults (or is skipped), naming 65535 as its value."""
    idx = vo.index
    lv = levels_of(idx, call=call)
    src_levels = [lv[0], [1, 1]]
    dt = np.dtype(idx.dtype)
    if dt == U16:
        return idx
    b = builder(call)
    u16 = b.new_alloc((idx.partitions, 1), U16, SBUF, call)
    ul = [levels_of(u16, call=call)[0], [1, 1]]
    if dt == np.dtype(np.uint8):
        b.emit("TensorScalar", call, "DVE", [ap_json(idx, src_levels, call=call)], [ap_json(u16, ul)], op0="min",
               const0=float(U16_SENTINEL), reverse0=False, op1="bypass", const1=0.0, reverse1=False)
    else:
        if vo.max_index > U16_SENTINEL:
            raise NkiError(
                f"the indexed dim has {vo.max_index} rows: birsim's HW-DGE gather reads uint16 indices, and a "
                f"{idx.dtype} index narrows exactly (an out-of-range value staying out of range) only for at most "
                f"{U16_SENTINEL} rows; pass uint16 indices", call)
        i32 = b.new_alloc((idx.partitions, 1), np.dtype(np.int32), SBUF, call)
        il = [levels_of(i32, call=call)[0], [1, 1]]
        b.emit("TensorScalar", call, "DVE", [ap_json(idx, src_levels, call=call)], [ap_json(i32, il)], op0="max",
               const0=-1.0, reverse0=False, op1="min", const1=float(U16_SENTINEL), reverse1=False)
        b.emit("TensorScalarPtr", call, "DVE", [ap_json(i32, il), {"kind": "imm_value", "dtype": "int32", "value": 0xFFFF}],
               [ap_json(u16, ul)], op0="bitwise_and", reverse0=False, op1="bypass", reverse1=False)
        i32._alloc.written = True
    u16._alloc.written = True
    return u16


def _rows_levels(t: Tensor, call: str) -> List[List[int]]:
    """Levels whose level 0 enumerates the rows (partitions on chip, dim 0 in HBM)."""
    if t.on_chip:
        return levels_of(t, call=call)
    rest = T._merge([[t._strides[d], t.shape[d]] for d in range(1, t.ndim)])
    lv = [[t._strides[0], t.shape[0]]] + (rest or [[1, 1]])
    if len(lv) > 5:
        raise NkiError(f"the view {t.shape} needs {len(lv)} access-pattern levels; BIR has at most 5", call)
    return lv


def emit_vector_dma(call: str, dst: Tensor, src: Tensor, oob_skip: bool = False, add: bool = False) -> None:
    """A gather (vector offset on ``src``) or scatter (on ``dst``): BIR ``DMACopy`` Copy mode with
    ``vector_offset`` on the indexed AP; ``add`` adds into the destination (``cce_op: add``)."""
    if is_vector(dst) and is_vector(src):
        raise NkiError("only one side of a copy can carry a vector offset (BIR reads one offset argument)", call)
    if PSUM in (dst.buffer, src.buffer):
        raise NkiError("dma_copy cannot access PSUM", call)
    gather = is_vector(src)
    ind, dense = (src, dst) if gather else (dst, src)
    vo: VecOffset = ind._dyn
    dl = _rows_levels(dense, call)
    n = ind.shape[0]
    _check_index(call, vo.index, n)
    if dl[0][1] != n:
        raise NkiError(
            f"{'dst' if gather else 'src'} {dense.shape} has {dl[0][1]} rows (partitions), the {n} indices need {n}", call)
    rest = T._merge([[ind._strides[d], ind.shape[d]] for d in range(1, ind.ndim)])
    il = [[vo.step, n]] + (rest or [[1, 1]])
    if len(il) > 5:
        raise NkiError(f"the indexed view needs {len(il)} access-pattern levels; BIR has at most 5", call)
    if T._prod(x for _, x in il[1:]) != T._prod(x for _, x in dl[1:]):
        raise NkiError(f"dst {dst.shape} and src {src.shape} rows hold different numbers of elements", call)
    index = index_operand(call, vo)
    plain = ind._view(ind.shape, ind._strides, ind._offset, None)
    plain._dyn = None
    ij = ap_json(plain, il, call=call)
    ij.update(indirect_dim="W", indirect_dim_max_index=vo.max_index, vector_offset=index)
    dj = ap_json(dense, dl, call=call)
    fields: Dict[str, Any] = {"mode": "Copy", "oob_is_err": not oob_skip}
    if add:
        fields["cce_op"] = "add"
    ins, outs = ([ij], [dj]) if gather else ([dj], [ij])
    builder(call).emit("DMACopy", call, "DMA", ins, outs, **fields)
    dst._alloc.written = True


def dma_copy_indirect(call: str, a: Dict[str, Any], dst: Tensor, src: Tensor, region: Any) -> None:
    """``nisa.dma_copy`` with a vector offset on one side: ``oob_mode.skip`` → ``oob_is_err:
    false``; the older ``dst_rmw_op=np.add`` → ``cce_op: add`` (the scatter-add)."""
    I = _isa()
    if region:
        raise NkiError("a mask on an indirect dma_copy is not supported", call)
    if _cmd_enum(I.dge_mode, a["dge_mode"]) in (I.dge_mode.hwdge, I.dge_mode.none):
        raise NkiError("a gather / scatter (vector_offset) needs dge_mode swdge or unknown (AWS dma_copy: hardware DGE "
                       "and precomputed descriptors take no index list)", call)
    rmw = a["dst_rmw_op"]
    add = False
    if rmw is not None:
        if I.alu_op(rmw, call, "dst_rmw_op") != "add":
            raise NkiError("dst_rmw_op must be np.add (AWS dma_copy)", call)
        if is_vector(src):
            raise NkiError("the read-modify-write add applies to a scatter (the vector offset on dst)", call)
        add = True
    skip = _cmd_enum(I.oob_mode, a["oob_mode"]) == I.oob_mode.skip
    if add and skip:
        raise NkiError("dst_rmw_op needs oob_mode=error (AWS dma_copy)", call)
    emit_vector_dma(call, dst, src, oob_skip=skip, add=add)


def _cmd_enum(E, v):
    if isinstance(v, (int, np.integer)):
        return E(int(v))
    return v


# ---------------------------------------------------------------------------------------------
# within-SBUF gathers


def _isa():
    from . import isa

    return isa


def nc_n_gather(*args, **kw):
    """``dst[p, k] = data_flat[p, indices_flat[p, k]]`` per partition on GpSimd (BIR ``Gather``)."""
    call = "nc_n_gather"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "data", "indices"), ("data", "indices"),
                        {"name": None, "dtype": None, "mask": None})
    data = I._need(a["data"], call, "data", (SBUF,))
    idx = I._need(a["indices"], call, "indices", (SBUF,))
    dst = I._result(call, idx.shape, data.dtype) if legacy else I._need(a["dst"], call, "dst", (SBUF,))
    emit_gather(call, dst, data, idx, (np.dtype(np.uint32),))
    return dst if legacy else None


def emit_gather(call: str, dst: Tensor, data: Tensor, idx: Tensor, idx_dtypes) -> None:
    if np.dtype(idx.dtype) not in idx_dtypes:
        raise NkiError(f"indices must be {' or '.join(str(d) for d in idx_dtypes)}, got {idx.dtype}", call)
    if dst.dtype != data.dtype:
        raise NkiError(f"dst ({dst.dtype}) must have data's dtype ({data.dtype}): a gather does not cast", call)
    if not (data.partitions == idx.partitions == dst.partitions):
        raise NkiError(f"data {data.shape}, indices {idx.shape} and dst {dst.shape} must have the same partitions", call)
    if dst.free_size != idx.free_size:
        raise NkiError(f"dst holds {dst.free_size} elements per partition, indices {idx.free_size}", call)
    builder(call).emit("Gather", call, "Pool",
                       [ap_json(data, levels_of(data, call=call)), ap_json(idx, levels_of(idx, call=call))],
                       [ap_json(dst, levels_of(dst, call=call))])
    dst._alloc.written = True


def gather_flattened(data, indices, axis=0, dtype=None, mask=None, **kw):
    """``np.take_along_axis`` over each partition's flattened free elements (BIR ``Gather``; a
    ``dtype`` other than data's adds a ``TensorCopy`` cast)."""
    call = "gather_flattened"
    I = _isa()
    from ._index import mask_active

    data = I._need(data, call, "data", (SBUF,))
    idx = I._need(indices, call, "indices", (SBUF,))
    b = builder(call)
    out = b.new_alloc(idx.shape, data.dtype, SBUF, call)
    if not mask_active(mask, call):
        return out
    emit_gather(call, out, data, idx, (np.dtype(np.uint32), np.dtype(np.int32), np.dtype(np.uint16),
                                       np.dtype(np.uint8)))
    if dtype is not None and T.as_dtype(dtype, call) != data.dtype:
        cast = b.new_alloc(idx.shape, T.as_dtype(dtype, call), SBUF, call)
        I.emit_copy(call, cast, out)
        return cast
    return out


def local_gather(*args, **kw):
    """Per GpSimd core (16 partitions) the index list partition-first, each index an element
    offset into every partition's own ``src_buffer`` elements, ``num_elem_per_idx`` elements per
    index (BIR ``IndirectCopy``, ``num_valid_indices``)."""
    call = "local_gather"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "src_buffer", "index"), ("src_buffer", "index"),
                        {"num_elem_per_idx": 1, "num_valid_indices": None, "name": None, "mask": None, "dtype": None})
    src = I._need(a["src_buffer"], call, "src_buffer", (SBUF,))
    idx = I._need(a["index"], call, "index", (SBUF,))
    e = int(a["num_elem_per_idx"])
    P = src.partitions
    per_core = 16 * idx.free_size
    if e not in (1, 2, 4, 8, 16, 32):
        raise NkiError(f"num_elem_per_idx must be 1, 2, 4, 8, 16 or 32, got {e}", call)
    if idx.dtype != U16:
        raise NkiError(f"index must be uint16 (AWS local_gather), got {idx.dtype}", call)
    if P != idx.partitions or P % 16:
        raise NkiError(f"src_buffer and index must have the same partition count, a multiple of 16; got {P} and "
                       f"{idx.partitions}", call)
    nvalid = per_core if a["num_valid_indices"] is None else int(a["num_valid_indices"])
    if not 1 <= nvalid <= per_core:
        raise NkiError(f"num_valid_indices {nvalid} must be in 1..{per_core} (the indices of a 16-partition slice)", call)
    if per_core > 4096:
        raise NkiError(f"{per_core} indices per core; at most 4096", call)
    if legacy:
        dst = I._result(call, (P, nvalid, e) if e > 1 else (P, nvalid), src.dtype)
    else:
        dst = I._need(a["dst"], call, "dst", (SBUF,))
    if dst.dtype != src.dtype:
        raise NkiError(f"dst ({dst.dtype}) must have src_buffer's dtype ({src.dtype}): no cast", call)
    if dst.partitions != P:
        raise NkiError(f"dst has {dst.partitions} partitions, src_buffer {P}", call)
    if dst.free_size != nvalid * e:
        raise NkiError(f"dst holds {dst.free_size} elements per partition; {nvalid} indices × {e} elements need "
                       f"{nvalid * e}", call)
    dl = levels_of(dst, call=call)
    if len(dl) != 2 or dl[1][0] != 1:
        raise NkiError("dst's elements per partition must be contiguous", call)
    # birsim: entries are E-element runs of dst in AP order, E = the last level's num
    dl = [dl[0]] + ([[e, nvalid], [1, e]] if e > 1 else [[1, nvalid]])
    il = levels_of(idx, call=call)
    sl = levels_of(src, call=call)
    builder(call).emit("IndirectCopy", call, "Pool", [ap_json(src, sl), ap_json(idx, il)], [ap_json(dst, dl)],
                       num_valid_indices=nvalid)
    dst._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# selection


def where(condition, x, y, dtype=None, mask=None, **kw):
    """``condition ? x : y`` element-wise, the condition 1.0 / 0.0 (BIR ``Select``; numbers as
    fp32 immediates; the chosen value is copied into the result's dtype)."""
    call = "where"
    I = _isa()
    from ._index import mask_active

    cond = I._need(condition, call, "condition")
    tiles = [v for v in (x, y) if isinstance(v, Tensor)]
    out_dt = T.as_dtype(dtype, call) if dtype is not None else (tiles[0].dtype if tiles else F32)
    b = builder(call)
    out = b.new_alloc(cond.shape, out_dt, SBUF, call)
    if not mask_active(mask, call):
        return out
    views = [out, cond] + tiles
    for v in tiles:
        I._need(v, call, "x / y")
        if v.shape != cond.shape:
            raise NkiError(f"x / y {v.shape} must have condition's shape {cond.shape}", call)
    lv = I._levels(call, *views)
    ops = {id(v): ap_json(v, l, call=call) for v, l in zip(views, lv)}

    def operand(v):
        if isinstance(v, Tensor):
            return ops[id(v)]
        return imm(I._number_arg(v, call, "x / y"))

    b.emit("Select", call, "DVE", [ops[id(cond)], operand(x), operand(y)], [ops[id(out)]])
    out._alloc.written = True
    return out


_SELECT_PRED = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16)}


def select_reduce(*args, **kw):
    """``dst = where(predicate, on_true, on_false)`` with the optional row max into
    ``reduce_res``. A number as ``on_false``: BIR ``CopyPredicated`` with ``use_false_fill``; a
    ``(P, 1)`` tile: a ``TensorCopy`` of it broadcast along the row into dst, then
    ``CopyPredicated`` of on_true. The max: ``TensorScalarCache`` (Reduce, max) of dst's row in the
    Vector Engine's accumulator registers (reset_reduce loads -inf, reduce continues)."""
    call = "select_reduce"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "predicate", "on_true", "on_false"), ("predicate", "on_true", "on_false"),
                        {"reduce_res": None, "reduce_cmd": I.reduce_cmd.idle, "reduce_op": "maximum",
                         "reverse_pred": False, "name": None, "mask": None, "dtype": None})
    pred = I._need(a["predicate"], call, "predicate")
    on_true = I._need(a["on_true"], call, "on_true")
    dst = I._result(call, on_true.shape, I._dtype_or(a["dtype"], on_true.dtype)) if legacy else I._need(a["dst"], call, "dst")
    if np.dtype(pred.dtype) not in _SELECT_PRED:
        raise NkiError(f"predicate must be int8, uint8, int16 or uint16 (AWS select_reduce), got {pred.dtype}", call)
    if np.dtype(on_true.dtype) in (np.dtype(np.int32), np.dtype(np.uint32)):
        raise NkiError(f"on_true cannot be {on_true.dtype} (AWS select_reduce)", call)
    if pred.buffer == PSUM and on_true.buffer == PSUM:
        raise NkiError("on_true and predicate cannot both be in PSUM", call)
    I._same_layout(call, dst, on_true, "dst", "on_true")
    I._same_layout(call, dst, pred, "dst", "predicate")
    if I.alu_op(a["reduce_op"], call, "reduce_op") != "max":
        raise NkiError("reduce_op must be nl.maximum (AWS select_reduce)", call)
    cmd = _cmd(I, a["reduce_cmd"])
    r = a["reduce_res"]
    if cmd not in (I.reduce_cmd.idle, I.reduce_cmd.reduce, I.reduce_cmd.reset_reduce):
        raise NkiError(f"reduce_cmd={cmd.name}: select_reduce takes idle, reset_reduce or reduce (AWS)", call)
    if r is not None and cmd == I.reduce_cmd.idle:
        raise NkiError("reduce_res needs reduce_cmd reset_reduce or reduce (idle performs no reduction)", call)
    b = builder(call)
    on_false = a["on_false"]
    if on_true.dtype != dst.dtype:
        raise NkiError(f"on_true ({on_true.dtype}) and dst ({dst.dtype}) must have the same dtype in birsim.nki "
                       "(the predicated copy does not cast)", call)
    fields: Dict[str, Any] = {"reverse_pred": bool(a["reverse_pred"])}
    if isinstance(on_false, Tensor):
        I._need(on_false, call, "on_false")
        if on_false.partitions != dst.partitions or on_false.free_size != 1:
            raise NkiError(f"on_false {on_false.shape} must be a number or a ({dst.partitions}, 1) tile", call)
        if on_false._alloc is dst._alloc or on_true._alloc is dst._alloc or pred._alloc is dst._alloc:
            raise NkiError("dst must not share memory with its inputs when on_false is a tile", call)
        fl = levels_of(on_false, call=call)
        dl = levels_of(dst, call=call)
        bl = [fl[0]] + [[0, n] for _, n in dl[1:]]
        b.emit("TensorCopy", call, "DVE", [ap_json(on_false, bl, call=call)], [ap_json(dst, dl, call=call)])
    else:
        fields.update(use_false_fill=True, false_fill=I._f(I._number_arg(on_false, call, "on_false")))
    dl, sl, pl = I._levels(call, dst, on_true, pred)
    b.emit("CopyPredicated", call, "DVE", [ap_json(on_true, sl), ap_json(pred, pl)], [ap_json(dst, dl)], **fields)
    dst._alloc.written = True
    if cmd != I.reduce_cmd.idle:
        # the row max through the Vector Engine's accumulator registers (TensorScalarCache Reduce:
        # c = max(x, c) over the row, the final c written), so reduce continues a reset_reduce
        if r is not None:
            r = I._need(r, call, "reduce_res")
            if r.partitions != dst.partitions or r.free_size != 1 or not T.is_float(r.dtype):
                raise NkiError(f"reduce_res {r.shape} {r.dtype} must be a float ({dst.partitions}, 1) tile", call)
        else:
            r = b.new_alloc((dst.partitions, 1), F32, SBUF, call)
        flat = dst if dst.ndim == 2 else dst.reshape((dst.partitions, dst.free_size))
        ins = [ap_json(flat, levels_of(flat, call=call))]
        if cmd == I.reduce_cmd.reset_reduce:
            ins.append(imm(float("-inf")))
        rl = levels_of(r, call=call)
        b.emit("TensorScalarCache", call, "DVE", ins, [ap_json(r, [rl[0], [1, 1]])], op0="max", reverse0=False,
               op1="bypass", reverse1=False, mode="Reduce",
               acc="LoadAccumulate" if cmd == I.reduce_cmd.reset_reduce else "Accumulate")
        r._alloc.written = True
    return dst if legacy else None


def _cmd(I, cmd):
    if isinstance(cmd, (int, np.integer)):
        cmd = I.reduce_cmd(int(cmd))
    return cmd


_ACC = {"idle": "Idle", "reset": "Zero", "reduce": "Accumulate", "reset_reduce": "ZeroAccumulate"}
_FP32_MIN = float(np.finfo(np.float32).min)


def range_select(*args, **kw):
    """``dst[p, j] = on_true[p, j]`` where ``comp_op0(range_start + j, bound0)`` and
    ``comp_op1(..., bound1)``, else ``on_false_value``; the kept values' max into the Vector
    Engine's accumulator registers and ``reduce_res`` (BIR ``RangeSelect``)."""
    call = "range_select"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1"),
                        ("on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1"),
                        {"reduce_cmd": I.reduce_cmd.reset_reduce, "reduce_res": None, "reduce_op": "maximum",
                         "range_start": 0, "on_false_value": _FP32_MIN, "name": None, "mask": None, "dtype": None})
    b = builder(call)
    if b.arch == "gen2":
        raise NkiError("nisa.range_select runs on NeuronCore-v3 and newer (AWS); the target is gen2", call)
    src = I._need(a["on_true_tile"], call, "on_true_tile")
    dst = I._result(call, src.shape, I._dtype_or(a["dtype"], src.dtype)) if legacy else I._need(a["dst"], call, "dst")
    I._same_layout(call, dst, src, "dst", "on_true_tile")
    if not T.is_float(src.dtype):
        raise NkiError(f"on_true_tile must be a float tile (AWS range_select), got {src.dtype}", call)
    ops = []
    for k in ("comp_op0", "comp_op1"):
        op = I.alu_op(a[k], call, k)
        if op not in ("is_equal", "is_lt", "is_le", "is_gt", "is_ge"):
            raise NkiError(f"{k} must be a comparison (equal, less, less_equal, greater, greater_equal), got {op}", call)
        ops.append(op)
    red = I.alu_op(a["reduce_op"], call, "reduce_op")
    if red != "max":
        raise NkiError("reduce_op must be nl.maximum (AWS range_select)", call)
    fill = a["on_false_value"]
    if fill is Ellipsis or fill is None:
        fill = _FP32_MIN
    if float(np.float32(fill)) != _FP32_MIN:
        raise NkiError(f"on_false_value must be FP32_MIN (-3.4028235e+38; AWS range_select), got {fill!r}", call)
    bounds = []
    for k in ("bound0", "bound1"):
        v = a[k]
        if isinstance(v, Tensor) and v.dtype != F32:
            raise NkiError(f"{k} must be float32 (AWS range_select), got {v.dtype}", call)
        bounds.append(I._scalar_operand(v, src, call, k))
    cmd = _cmd(I, a["reduce_cmd"])
    if cmd not in (I.reduce_cmd.idle, I.reduce_cmd.reset, I.reduce_cmd.reduce, I.reduce_cmd.reset_reduce):
        raise NkiError(f"reduce_cmd={cmd.name} is not one RangeSelect takes", call)
    dl, sl = I._levels(call, dst, src)
    outs = [ap_json(dst, dl)]
    r = a["reduce_res"]
    if r is not None:
        r = I._need(r, call, "reduce_res")
        if r.partitions != src.partitions or r.free_size != 1:
            raise NkiError(f"reduce_res {r.shape} must be ({src.partitions}, 1)", call)
        rl = levels_of(r, call=call)
        outs.append(ap_json(r, [rl[0], [1, 1]]))
        r._alloc.written = True
    b.emit("RangeSelect", call, "DVE", [ap_json(src, sl)] + bounds, outs, op0=ops[0], op1=ops[1],
           range_start=int(a["range_start"]), fill_value=_FP32_MIN, reduce_op="max", acc=_ACC[cmd.name])
    dst._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# reductions and scans


def tensor_partition_reduce(*args, **kw):
    """``dst[0, ...] = op`` over the partitions of ``data`` (BIR ``TensorReduce`` with
    ``axis: C``, which folds the partition level, on GpSimd)."""
    call = "tensor_partition_reduce"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "op", "data"), ("op", "data"),
                        {"name": None, "mask": None, "dtype": None})
    data = I._need(a["data"], call, "data", (SBUF,))
    op = I.alu_op(a["op"], call)
    if op not in ("add", "average", "max", "bitwise_or", "bitwise_and"):
        raise NkiError(f"op must be add, average, maximum, bitwise_or or bitwise_and, got {op}", call)
    if op.startswith("bitwise") and not T.is_int(data.dtype):
        raise NkiError(f"{op} needs an integer tile, got {data.dtype}", call)
    shape = (1,) + tuple(data.shape[1:]) if data._pdim == 0 else None
    if shape is None:
        raise NkiError("data must have its partition dim first", call)
    dst = I._result(call, shape, I._dtype_or(a["dtype"], data.dtype)) if legacy else I._need(a["dst"], call, "dst", (SBUF,))
    if dst.partitions != 1 or dst.free_size != data.free_size:
        raise NkiError(f"dst {dst.shape} must be one partition of {data.free_size} elements", call)
    sl = levels_of(data, call=call)
    dl = levels_of(dst, call=call)
    if len(sl) != len(dl) or [n for _, n in sl[1:]] != [n for _, n in dl[1:]]:
        dl, sl = [dl[0]] + T._merge([[1, dst.free_size]]), [sl[0]] + T._merge([[1, data.free_size]])
        if len(levels_of(data, call=call)) != 2 or len(levels_of(dst, call=call)) != 2:
            raise NkiError("data and dst must have contiguous free dims", call)
    builder(call).emit("TensorReduce", call, "Pool", [ap_json(data, sl)], [ap_json(dst, dl)], op=op, axis="C",
                       negate=False)
    dst._alloc.written = True
    return dst if legacy else None


_CUM_INIT = {"add": 0.0, "subtract": 0.0, "mult": 1.0, "max": float("-inf"), "min": float("inf")}


def tensor_scalar_cumulative(*args, **kw):
    """Per partition ``reg = op1(op0(x[i], imm0), reg)``, every ``reg`` written (AWS
    tensor_scalar_cumulative). BIR: ``TensorScalar`` / ``TensorScalarPtr`` of ``op0`` into an
    fp32 tile, then ``TensorScalarCache`` (``mode: Cumulative``, its op0 = NKI's op1, op1
    bypass), whose cache is the Vector Engine's accumulator registers: reset_reduce loads the
    operator's identity (0, 1, -inf, +inf), load_reduce loads ``imm1``, reduce continues."""
    call = "tensor_scalar_cumulative"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "src", "op0", "op1", "imm0"), ("src", "op0", "op1", "imm0"),
                        {"imm1": None, "reduce_cmd": I.reduce_cmd.reset_reduce, "name": None, "mask": None,
                         "dtype": None})
    src = I._need(a["src"], call, "src")
    dst = I._result(call, src.shape, I._dtype_or(a["dtype"], src.dtype)) if legacy else I._need(a["dst"], call, "dst")
    for t, what in ((src, "src"), (dst, "dst")):
        if np.dtype(t.dtype) in (np.dtype(np.int32), np.dtype(np.uint32)):
            raise NkiError(f"{what} cannot be {t.dtype} (AWS tensor_scalar_cumulative: no 32-bit integers)", call)
    I._same_layout(call, dst, src, "dst", "src")
    op0 = I.alu_op(a["op0"], call, "op0")
    op1 = I.alu_op(a["op1"], call, "op1")
    if op1 not in _CUM_INIT:
        raise NkiError(f"op1 must be add, subtract, multiply, maximum or minimum, got {op1}", call)
    if op0 in I._BITVEC:
        raise NkiError("op0 must be an arithmetic operator", call)
    cmd = _cmd(I, a["reduce_cmd"])
    b = builder(call)
    tmp = b.new_alloc((src.partitions, src.free_size), F32, SBUF, call)
    flat = src if src.ndim == 2 else src.reshape((src.partitions, src.free_size))
    I.emit_tensor_scalar(call, tmp, flat, op0, a["imm0"])
    ins = [ap_json(tmp, levels_of(tmp, call=call))]
    if cmd == I.reduce_cmd.load_reduce:
        if a["imm1"] is None:
            raise NkiError("reduce_cmd=load_reduce needs imm1 (the initial value)", call)
        acc = "LoadAccumulate"
        ins.append(I._scalar_operand(a["imm1"], src, call, "imm1"))
    elif cmd == I.reduce_cmd.reset_reduce:
        acc = "LoadAccumulate"
        ins.append(imm(_CUM_INIT[op1]))
    elif cmd == I.reduce_cmd.reduce:
        acc = "Accumulate"
    else:
        raise NkiError(f"reduce_cmd={cmd.name}: tensor_scalar_cumulative takes reset_reduce, reduce or load_reduce", call)
    dflat = dst if dst.ndim == 2 else dst.reshape((dst.partitions, dst.free_size))
    b.emit("TensorScalarCache", call, "DVE", ins, [ap_json(dflat, levels_of(dflat, call=call))], op0=op1,
           reverse0=False, op1="bypass", reverse1=False, mode="Cumulative", acc=acc)
    dst._alloc.written = True
    return dst if legacy else None


_ACT2_PAIRS = {("mult", "add"), ("mult", "subtract"), ("mult", "bypass"), ("add", "bypass"), ("subtract", "bypass"),
               ("bypass", "bypass")}


def activate2(*args, **kw):
    """``dst = op((data op0 imm0) op1 imm1)`` with an optional fold into the Scalar Engine's
    accumulator registers read into ``reduce_res`` (BIR ``Activation`` with ``is_activate2`` +
    ``ActivationReadAccumulator``); NeuronCore-v4."""
    call = "activate2"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "op", "data", "imm0", "imm1", "op0", "op1"),
                        ("op", "data", "imm0", "imm1", "op0", "op1"),
                        {"relu_param": 0.0, "reverse0": False, "reverse1": False, "reduce_op": None,
                         "reduce_res": None, "reduce_cmd": I.reduce_cmd.idle, "name": None, "mask": None,
                         "dtype": None})
    b = builder(call)
    if b.arch != "gen4":
        raise NkiError(f"nisa.activate2 runs on NeuronCore-v4 (trn3) only; the target is {b.arch}", call)
    data = I._need(a["data"], call, "data")
    dst = I._result(call, data.shape, I._dtype_or(a["dtype"], data.dtype)) if legacy else I._need(a["dst"], call, "dst")
    I._same_layout(call, dst, data, "dst", "data")
    func = I.act_func(a["op"], call)
    op0 = I.alu_op(a["op0"], call, "op0")
    op1 = I.alu_op(a["op1"], call, "op1")
    if (op0, op1) not in _ACT2_PAIRS:
        raise NkiError(f"(op0, op1) = ({op0}, {op1}) is not one activate2 runs: (multiply, add), (multiply, subtract), "
                       "(multiply, bypass), (add, bypass), (subtract, bypass), (bypass, bypass)", call)
    ins = [None]
    ins.append(I._scalar_operand(a["imm0"], data, call, "imm0") if op0 != "bypass" else imm(0.0))
    ins.append(I._scalar_operand(a["imm1"], data, call, "imm1") if op1 != "bypass" else imm(0.0))
    ins.append(I._scalar_operand(a["relu_param"], data, call, "relu_param"))
    cmd = _cmd(I, a["reduce_cmd"])
    if cmd == I.reduce_cmd.load_reduce:
        raise NkiError("reduce_cmd=load_reduce is not one activate2 takes", call)
    fields: Dict[str, Any] = {"func": func, "scale": 1.0, "alpha": 0.0, "is_activate2": True, "op0": op0, "op1": op1,
                              "reverse0": bool(a["reverse0"]), "reverse1": bool(a["reverse1"]), "acc": _ACC[cmd.name]}
    if a["reduce_op"] is not None:
        red = I.alu_op(a["reduce_op"], call, "reduce_op")
        if red not in ("add", "max", "min", "abs_max", "abs_min"):
            raise NkiError(f"reduce_op must be add, maximum, minimum, abs_max or abs_min, got {red}", call)
        fields["reduce_op"] = red
    elif cmd in (I.reduce_cmd.reduce, I.reduce_cmd.reset_reduce):
        raise NkiError("a reduction (reduce_cmd reduce / reset_reduce) needs reduce_op", call)
    dl, sl = I._levels(call, dst, data)
    ins[0] = ap_json(data, sl)
    b.emit("Activation", call, "Activation", ins, [ap_json(dst, dl)], **fields)
    dst._alloc.written = True
    if a["reduce_res"] is not None:
        r = I._need(a["reduce_res"], call, "reduce_res")
        if r.partitions != data.partitions or r.free_size != 1:
            raise NkiError(f"reduce_res {r.shape} must be ({data.partitions}, 1)", call)
        b.emit("ActivationReadAccumulator", call, "Activation", [], [ap_json(r, levels_of(r, call=call))])
        r._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# GpSimd index calls


def nonzero_with_count(*args, **kw):
    """Per GpSimd core's first partition (0, 16, ..., 112): the positions of the nonzero
    elements plus ``index_offset``, ``padding_val`` up to n, then the count (BIR
    ``NonzeroWithCount``); NeuronCore-v3 and newer."""
    call = "nonzero_with_count"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "src"), ("src",),
                        {"index_offset": 0, "padding_val": -1, "name": None, "mask": None, "dtype": None})
    b = builder(call)
    if b.arch == "gen2":
        raise NkiError("nisa.nonzero_with_count runs on NeuronCore-v3 and newer (AWS); the target is gen2", call)
    src = I._need(a["src"], call, "src", (SBUF,))
    if src.dtype not in (F32, np.dtype(np.int32)):
        raise NkiError(f"src must be float32 or int32, got {src.dtype}", call)
    n = src.free_size
    dst = I._result(call, (src.partitions, n + 1), np.int32) if legacy else I._need(a["dst"], call, "dst", (SBUF,))
    if dst.dtype != np.dtype(np.int32):
        raise NkiError(f"dst must be int32, got {dst.dtype}", call)
    if dst.partitions != src.partitions or dst.free_size != n + 1:
        raise NkiError(f"dst {dst.shape} must be ({src.partitions}, {n + 1}): n indices and the count", call)
    b.emit("NonzeroWithCount", call, "Pool", [ap_json(src, levels_of(src, call=call))],
           [ap_json(dst, levels_of(dst, call=call))], index_offset=int(a["index_offset"]),
           padding_val=int(a["padding_val"]))
    dst._alloc.written = True
    return dst if legacy else None


def sequence_bounds(*args, **kw):
    """For each segment id the start of its run and one past its end, id 0 being padding
    (start n, end -1); dst ``(1, 2, n)`` holds the starts then the ends (BIR
    ``GetSequenceBounds``)."""
    call = "sequence_bounds"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "segment_ids"), ("segment_ids",),
                        {"name": None, "mask": None, "dtype": None})
    ids = I._need(a["segment_ids"], call, "segment_ids", (SBUF,))
    if ids.dtype not in (F32, np.dtype(np.int32)):
        raise NkiError(f"segment_ids must be float32 or int32 in birsim, got {ids.dtype}", call)
    n = ids.free_size
    dst = I._result(call, (ids.partitions, 2, n), I._dtype_or(a["dtype"], ids.dtype)) if legacy else I._need(
        a["dst"], call, "dst", (SBUF,))
    if dst.partitions != ids.partitions or dst.free_size != 2 * n:
        raise NkiError(f"dst {dst.shape} must hold 2 × {n} values per partition (starts, then ends)", call)
    builder(call).emit("GetSequenceBounds", call, "Pool", [ap_json(ids, levels_of(ids, call=call))],
                       [ap_json(dst, levels_of(dst, call=call))])
    dst._alloc.written = True
    return dst if legacy else None


# ---------------------------------------------------------------------------------------------
# DMA transpose

# the source's 4 BIR levels [W, Z, Y, X] for a 2-, 3-, 4-D source, and the transpose code
_DT_FORMS = {
    2: ((1, 0), lambda s: (1, 1, s[0], s[1]), "WZXY"),
    3: ((2, 1, 0), lambda s: (s[0], 1, s[1], s[2]), "XZYW"),
    4: ((3, 1, 2, 0), lambda s: tuple(s), "XZYW"),
}


def dma_transpose(*args, **kw):
    """``dst = np.transpose(src, axes)`` through a DMA engine, axes (1, 0), (2, 1, 0) or
    (3, 1, 2, 0) by the source's rank (BIR ``DMACopy`` Transpose mode, ``transpose_op`` WZXY or
    XZYW over 4-level access patterns)."""
    call = "dma_transpose"
    I = _isa()
    a, legacy = I._bind(call, args, kw, ("dst", "src"), ("src",),
                        {"axes": None, "priority": None, "dge_mode": I.dge_mode.unknown,
                         "oob_mode": I.oob_mode.error, "name": None, "mask": None, "dtype": None})
    src = a["src"]
    if is_vector(src):
        return _indirect_transpose(call, I, a, legacy, src)
    src = I._need(src, call, "src", (SBUF, HBM))
    nd = src.ndim
    if nd not in _DT_FORMS:
        raise NkiError(f"src must be 2-, 3- or 4-D, got {src.shape}", call)
    axes, four, code = _DT_FORMS[nd]
    if a["axes"] is not None and tuple(int(x) for x in a["axes"]) != axes:
        raise NkiError(f"axes for a {nd}-D source must be {axes} (AWS dma_transpose), got {tuple(a['axes'])}", call)
    oshape = tuple(src.shape[k] for k in axes)
    dst = I._result(call, oshape, src.dtype) if legacy else I._need(a["dst"], call, "dst", (SBUF,))
    if dst.buffer != SBUF:
        raise NkiError("dst must be an SBUF tile (AWS dma_transpose)", call)
    if dst.dtype != src.dtype:
        raise NkiError(f"dst ({dst.dtype}) must have src's dtype ({src.dtype})", call)
    if tuple(dst.shape) != oshape:
        raise NkiError(f"dst {dst.shape} must be {oshape}, the transpose of src {src.shape}", call)
    if src._dyn is not None or dst._dyn is not None:
        raise NkiError("dynamic offsets on a dma_transpose are not supported yet", call)
    _emit_transpose(call, dst, src)
    return dst if legacy else None


def _emit_transpose(call: str, dst: Tensor, src: Tensor) -> None:
    nd = src.ndim
    axes, four, code = _DT_FORMS[nd]
    perm = [{"W": 0, "Z": 1, "Y": 2, "X": 3}[c] for c in code]
    sdims = four(src.shape)
    sstr = _four_strides(src, nd)
    ddims = [sdims[p] for p in perm]
    dstr = _four_strides(dst, nd)
    sl = [[sstr[k], sdims[k]] for k in range(4)]
    dl = [[dstr[k], ddims[k]] for k in range(4)]
    builder(call).emit("DMACopy", call, "DMA", [ap_json(src, sl, call=call)], [ap_json(dst, dl, call=call)],
                       mode="Transpose", transpose_op=code)
    dst._alloc.written = True


def _indirect_transpose(call: str, I, a: Dict[str, Any], legacy: bool, src: Tensor):
    """AWS's indirect (gather) transpose, ``dst = src[indices.T.flatten()[:F]].T`` for a 2-level
    source pattern ``[[P, F], [1, P]]`` (F rows of P elements): birsim's DMACopy takes a vector
    offset in Copy mode only, so it is traced as the gather and the transpose it is: one HW-DGE
    gather ``DMACopy`` per index column (rows j·Pi.. of an HBM scratch tensor, exact copies),
    then the ``DMACopy`` Transpose of that scratch into dst."""
    b = builder(call)
    if b.arch == "gen2":
        raise NkiError("an indirect dma_transpose runs on NeuronCore-v3 and newer (AWS: TRN2+)", call)
    if _cmd_enum(I.dge_mode, a["dge_mode"]) not in (I.dge_mode.unknown, I.dge_mode.swdge):
        raise NkiError("an indirect dma_transpose needs dge_mode swdge or unknown (AWS)", call)
    if src.ndim != 2:
        raise NkiError(f"an indirect dma_transpose of a {src.ndim}-D source pattern is not supported yet (2-D only)",
                       call)
    if a["axes"] is not None and tuple(int(x) for x in a["axes"]) != (1, 0):
        raise NkiError(f"axes for a 2-D source must be (1, 0), got {tuple(a['axes'])}", call)
    vo: VecOffset = src._dyn
    idx = vo.index
    F, P = src.shape
    if src.dtype.itemsize != 2:
        raise NkiError(f"src must be a 2-byte dtype (AWS indirect dma_transpose), got {src.dtype}", call)
    if P > 128:
        raise NkiError(f"src.shape[-1] = {P} exceeds 128", call)
    if F % 16:
        raise NkiError(f"src.shape[0] = {F} must be divisible by 16", call)
    if idx.ndim != 2 or idx.dtype != np.dtype(np.uint32):
        raise NkiError(f"indices must be a 2-D uint32 SBUF tile, got {idx.shape} {idx.dtype}", call)
    Pi, N = idx.shape
    if not (16 <= Pi <= 128 and Pi % 16 == 0) or (N > 1 and Pi != 128):
        raise NkiError(f"indices {idx.shape}: the partitions must be 16..128 and a multiple of 16, exactly 128 when "
                       "there is more than one column", call)
    if Pi * N < F:
        raise NkiError(f"indices hold {Pi * N} values, fewer than the {F} rows of src", call)
    dst = I._result(call, (P, F), src.dtype) if legacy else I._need(a["dst"], call, "dst", (SBUF,))
    if dst.dtype != src.dtype or tuple(dst.shape) != (P, F):
        raise NkiError(f"dst {dst.shape} {dst.dtype} must be ({P}, {F}) {src.dtype}", call)
    skip = _cmd_enum(I.oob_mode, a["oob_mode"]) == I.oob_mode.skip
    scratch = b.new_alloc((F, P), src.dtype, HBM, call)
    if skip:
        # a skipped row leaves dst's column as it was: the scratch starts as dst transposed back
        _emit_transpose(call, scratch, dst)
    for j in range(N):
        lo = j * Pi
        rows = min(Pi, F - lo)
        if rows <= 0:
            break
        col = idx[0:rows, j:j + 1]
        v = src._view([rows, P], [0, src._strides[1]], src._offset, None)
        v._dyn = VecOffset(col, vo.step, vo.max_index)
        emit_vector_dma(call, scratch[lo:lo + rows, :], v, oob_skip=skip)
    _emit_transpose(call, dst, scratch)
    return dst if legacy else None


def _four_strides(t: Tensor, nd: int) -> List[int]:
    """Element steps of ``t``'s dims arranged as the 4 BIR levels its form uses (unit levels get
    the whole tensor's span, a harmless step)."""
    s = list(t._strides)
    if t.on_chip:
        s[t._pdim] = t._strides[t._pdim] if t.shape[t._pdim] > 1 else T.pitch_of(t)
    unit = T.elements_of(t)
    if nd == 2:
        return [unit, unit, s[0], s[1]]
    if nd == 3:
        # [a, 1, b, c] for the source (a, b, c); [c, 1, b, a] for the destination (c, b, a)
        return [s[0], unit, s[1], s[2]]
    return s
