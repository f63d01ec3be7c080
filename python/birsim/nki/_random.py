"""Random numbers for ``birsim.nki``: ``nisa.rng``, ``rand2``, ``dropout``, ``set_rng_seed``,
``rand_set_state``, ``rand_get_state`` and ``nl.random_seed``, ``nl.rand``, ``nl.dropout``,
each traced into birsim's random family (``Rand``, ``Rand2``, ``Dropout``, ``SetRandState``,
``RandSetState``, ``RandGetState``; docs/fidelity.md R1–R4).

The generators are birsim's: Xorwow, one per partition row on GpSimd (``Pool``), four lanes per
row on the Vector Engine (``DVE``), every DVE word all-ones until seeded (docs/fidelity.md R1).
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from . import _tracer as T
from ._tracer import HBM, PSUM, SBUF, NkiError, Tensor, ap_json, builder, levels_of

_INTS = tuple(np.dtype(d) for d in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32))


def _isa():
    from . import isa

    return isa


def _bind(call: str, args, kw, names, defaults: Dict[str, Any]) -> Dict[str, Any]:
    if len(args) > len(names):
        raise NkiError(f"too many arguments for {call}({', '.join(names)})", call)
    got = dict(zip(names, args))
    for k, v in kw.items():
        if k not in names:
            raise NkiError(f"unexpected argument {k!r}", call)
        if k in got:
            raise NkiError(f"argument {k!r} given twice", call)
        got[k] = v
    for k, v in defaults.items():
        got.setdefault(k, v)
    missing = [n for n in names if n not in got]
    if missing:
        raise NkiError(f"missing argument(s) {', '.join(missing)}", call)
    return got


def _out(t: Tensor, call: str) -> Dict[str, Any]:
    return ap_json(t, levels_of(t, call=call), call=call)


def _engine(e: Any, call: str, gpsimd_from: str, vector_from: str) -> str:
    """``engine.vector`` → DVE, ``engine.gpsimd`` → Pool, each from the generation AWS names."""
    isa = _isa()
    eng = isa._engine_name(e, "", {isa.engine.vector: "DVE", isa.engine.gpsimd: "Pool"}, call)
    arch = builder(call).arch
    order = {"gen2": 2, "gen3": 3, "gen4": 4}
    if eng == "Pool" and order[arch] < order[gpsimd_from]:
        raise NkiError(f"engine=gpsimd needs {gpsimd_from} or newer ({arch} traced)", call)
    if eng == "DVE" and order[arch] < order[vector_from]:
        raise NkiError(f"engine=vector needs {vector_from} or newer ({arch} traced)", call)
    return eng


def _prob(x: Any, data: Tensor, call: str, what: str) -> Dict[str, Any]:
    """A number (fp32 immediate) or a (P, 1) tile of one value per partition."""
    if isinstance(x, Tensor):
        isa = _isa()
        isa._need(x, call, what)
        if not T.is_float(x.dtype) and not T.is_int(x.dtype):
            raise NkiError(f"{what} {x.dtype} is not numeric", call)
        if x.partitions != data.partitions or x.free_size != 1:
            raise NkiError(f"{what} {x.shape} must be a number or a ({data.partitions}, 1) tile", call)
        lv = levels_of(x, call=call)
        return ap_json(x, [lv[0], [1, 1]], call=call)
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
        return T.imm(float(x))
    raise NkiError(f"{what} must be a number or a tile, got {type(x).__name__}", call)


# ---------------------------------------------------------------------------------------------
# nki.isa


def rng(*args, **kw) -> None:
    """``nisa.rng(dst, engine=vector)``: ``Rand`` — each element the low bits of a 32-bit
    draw (int8..uint32 dst; Vector, or GpSimd on NeuronCore-v3+ into SBUF)."""
    call = "rng"
    a = _bind(call, args, kw, ("dst", "engine", "name"), {"engine": None, "name": None})
    isa = _isa()
    dst = isa._need(a["dst"], call, "dst")
    if dst.dtype not in _INTS:
        raise NkiError(f"dst must be int8, int16, int32, uint8, uint16 or uint32, not {dst.dtype}", call)
    eng = _engine(a["engine"], call, "gen3", "gen2")
    if eng == "Pool" and dst.buffer == PSUM:
        raise NkiError("the GpSimd Engine cannot write PSUM: dst must be in SBUF", call)
    b = builder(call)
    b.emit("Rand", call, eng, [], [_out(dst, call)])
    b.mark_written(dst)


def rand2(*args, **kw) -> None:
    """``nisa.rand2(dst, min, max)``: ``Rand2`` on the Vector Engine — per element
    ``min + (max − min)·u``, u uniform in [0, 1) (NeuronCore-v4+)."""
    call = "rand2"
    a = _bind(call, args, kw, ("dst", "min", "max", "name"), {"name": None})
    isa = _isa()
    dst = isa._need(a["dst"], call, "dst")
    b = builder(call)
    if b.arch != "gen4":
        raise NkiError(f"rand2 is available only on NeuronCore-v4 and newer ({b.arch} traced)", call)
    emit_rand2(call, dst, a["min"], a["max"])


def emit_rand2(call: str, dst: Tensor, lo: Any, hi: Any, eng: str = "DVE") -> None:
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and not float(lo) < float(hi):
        raise NkiError(f"min {lo} must be below max {hi}", call)
    b = builder(call)
    b.emit("Rand2", call, eng, [_prob(lo, dst, call, "min"), _prob(hi, dst, call, "max")], [_out(dst, call)])
    b.mark_written(dst)


def dropout(*args, **kw):
    """``nisa.dropout(dst, data, prob)``: ``Dropout`` (DropRate) on the Vector Engine — each
    element zeroed with probability ``prob`` (a number or one value per partition), the rest
    copied unchanged (no rescale). The older form ``dropout(data, prob)`` returns a new tile."""
    call = "dropout"
    isa = _isa()
    if len(args) >= 3 or "dst" in kw or ("data" in kw and len(args) == 1):
        a = _bind(call, args, kw, ("dst", "data", "prob", "name"), {"name": None})
        dst = isa._need(a["dst"], call, "dst")
        data = isa._need(a["data"], call, "data")
        if dst.dtype != data.dtype:
            raise NkiError(f"dst {dst.dtype} must have data's dtype {data.dtype}", call)
        emit_dropout(call, dst, data, a["prob"])
        return None
    a = _bind(call, args, kw, ("data", "prob", "dtype", "mask", "name"), {"dtype": None, "mask": None, "name": None})
    data = isa._need(a["data"], call, "data")
    out = builder(call).new_alloc(data.shape, data.dtype, SBUF, call)
    emit_dropout(call, out, data, a["prob"])
    return out


def emit_dropout(call: str, dst: Tensor, data: Tensor, prob: Any, eng: str = "DVE") -> None:
    isa = _isa()
    isa._same_layout(call, dst, data, "dst", "data")
    if isinstance(prob, (int, float)) and not 0.0 <= float(prob) <= 1.0:
        raise NkiError(f"prob {prob} is not a probability in [0, 1]", call)
    dl, sl = isa._levels(call, dst, data)
    b = builder(call)
    b.emit("Dropout", call, eng, [ap_json(data, sl, call=call), _prob(prob, data, call, "prob")],
           [ap_json(dst, dl, call=call)], threshold_type="DropRate")
    b.mark_written(dst)


def set_rng_seed(*args, **kw) -> None:
    """``nisa.set_rng_seed(src_seeds)``: ``SetRandState`` with the (1, 1) 32-bit tile as the
    seed — reseeds the Vector Engine's generators (and birsim's GpSimd rows, R1)."""
    call = "set_rng_seed"
    a = _bind(call, args, kw, ("src_seeds", "name"), {"name": None})
    emit_seed(call, a["src_seeds"])


def emit_seed(call: str, seed: Any) -> None:
    isa = _isa()
    t = isa._need(seed, call, "src_seeds")
    if t.size != 1 or t.dtype.itemsize != 4:
        raise NkiError(f"the seed must be a [1, 1] tensor of one 32-bit value, got {t.shape} {t.dtype}", call)
    builder(call).emit("SetRandState", call, "DVE", [_out(t, call)], [])


def _state_tile(t: Any, call: str, what: str, eng: str, buffers) -> Tensor:
    isa = _isa()
    t = isa._need(t, call, what, buffers)
    if t.dtype != np.dtype(np.uint32):
        raise NkiError(f"{what} must be uint32, not {t.dtype}", call)
    words = 6 if eng == "Pool" else 24
    if t.free_size != words:
        raise NkiError(
            f"{what} {t.shape} must hold {words} words per partition (XORWOW state on "
            f"{'GpSimd' if eng == 'Pool' else 'the Vector Engine'})",
            call,
        )
    return t


def rand_set_state(*args, **kw) -> None:
    """``nisa.rand_set_state(src_seeds, engine=gpsimd)``: ``RandSetState`` — each partition's
    generator state ``[s0, s1, s2, s3, s4, counter]`` (×4 lanes on the Vector Engine)."""
    call = "rand_set_state"
    a = _bind(call, args, kw, ("src_seeds", "engine", "name"), {"engine": None, "name": None})
    eng = _engine(a["engine"] if a["engine"] is not None else _isa().engine.gpsimd, call, "gen3", "gen4")
    t = _state_tile(a["src_seeds"], call, "src_seeds", eng, (SBUF,))
    builder(call).emit("RandSetState", call, eng, [_out(t, call)], [])


def rand_get_state(*args, **kw) -> None:
    """``nisa.rand_get_state(dst, engine=gpsimd)``: ``RandGetState`` — the state words
    ``rand_set_state`` takes; nothing advances."""
    call = "rand_get_state"
    a = _bind(call, args, kw, ("dst", "engine", "name"), {"engine": None, "name": None})
    eng = _engine(a["engine"] if a["engine"] is not None else _isa().engine.gpsimd, call, "gen3", "gen4")
    buffers = (SBUF,) if eng == "Pool" or builder(call).arch == "gen3" else (SBUF, PSUM)
    t = _state_tile(a["dst"], call, "dst", eng, buffers)
    b = builder(call)
    b.emit("RandGetState", call, eng, [], [_out(t, call)])
    b.mark_written(t)


# ---------------------------------------------------------------------------------------------
# nki.language


def nl_dropout(x, rate, dtype=None, mask=None, **kw) -> Tensor:
    """``nl.dropout(x, rate, dtype)``: a new SBUF tile, ``Dropout`` of ``x`` (then a
    ``TensorCopy`` cast when ``dtype`` differs from x's)."""
    call = "dropout"
    isa = _isa()
    from ._index import mask_region

    if mask_region(mask, call) is not None:
        raise NkiError("a mask on nl.dropout is not supported", call)
    data = isa._need(x, call, "x")
    b = builder(call)
    out = b.new_alloc(data.shape, data.dtype, SBUF, call)
    # as nl.rand: GpSimd's per-partition generators where AWS's rng allows GpSimd
    eng = "Pool" if b.arch != "gen2" and data.buffer == SBUF else "DVE"
    emit_dropout(call, out, data, rate, eng)
    if dtype is not None and T.as_dtype(dtype, call) != data.dtype:
        cast = b.new_alloc(data.shape, T.as_dtype(dtype, call), SBUF, call)
        isa.emit_copy(call, cast, out)
        return cast
    return out


def random_seed(seed) -> None:
    """``nl.random_seed(seed)``: as ``nisa.set_rng_seed`` (``SetRandState``)."""
    emit_seed("random_seed", seed)


def rand(shape, dtype, buffer=SBUF, name: str = "", **kw) -> Tensor:
    """``nl.rand(shape, dtype)``: a new on-chip tile of uniform values in [0, 1): ``Rand2`` with
    min 0, max 1 (u itself, exact in fp32; other dtypes take birsim's cast of it, which may round
    up to 1.0), on GpSimd for an SBUF tile on NeuronCore-v3+, else on the Vector Engine."""
    call = "rand"
    b = builder(call)
    kind, _ = T.buffer_kind(buffer, call)
    if kind == HBM:
        raise NkiError("nl.rand into HBM is not supported yet: make an SBUF tile and store it", call)
    t = b.new_alloc(tuple(shape), T.as_dtype(dtype, call), kind, call, name=name)
    # GpSimd (one generator per partition: rows differ) where AWS's rng allows it (v3+) and
    # the tile is in SBUF; else the Vector Engine
    eng = "Pool" if b.arch != "gen2" and kind == SBUF else "DVE"
    emit_rand2(call, t, 0.0, 1.0, eng)
    return t
