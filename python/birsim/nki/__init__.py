"""``birsim.nki``: trace an unmodified NKI kernel into a BIR program and run it on birsim.

    import numpy as np, birsim.nki
    birsim.nki.install()                 # `import nki`, `nki.language`, `neuronxcc.nki`... → birsim
    import nki, nki.language as nl

    @nki.jit
    def add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.add(nl.load(a), nl.load(b)))
        return out

    a = b = np.ones((128, 512), np.float32)
    c = birsim.nki.simulate(add)(a, b)   # or add(a, b): a jit kernel called on arrays simulates
    prog = birsim.nki.trace(add)(a, b)   # the birsim.Program; trace_json(...) gives its JSON text

The kernel runs as Python on proxy tensors; each ``nki.isa`` call (and each ``nki.language``
call that is one ISA operation) appends BIR instructions named after the kernel line
(``add@kernel.py:5#3``), Python loops and ``nl.*_range`` loops unroll, and SPMD grids
(``kernel[2, 2](...)``) trace every program id into one program. The target generation follows
``NEURON_PLATFORM_TARGET_OVERRIDE`` (trn1 → gen2, trn2 → gen3, trn3 → gen4; gen3 when unset).
A call birsim cannot express, or a kernel AWS's simulator would reject (shapes, buffers,
dtypes, more than 128 partitions), raises ``NkiError`` at the kernel's ``file:line``.
``python -m birsim.nki script.py`` installs the aliases and runs a script. See docs/nki.md.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import inspect
import itertools
import json as _json
import sys
import types
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import Program, last_writers as _last_writers, load as _load, run as _run
from . import _tracer as T
from ._tracer import NkiError, Tensor

__all__ = [
    "Divergence",
    "NkiError",
    "Kernel",
    "jit",
    "simulate",
    "simulate_kernel",
    "trace",
    "trace_json",
    "install",
    "uninstall",
    "language",
    "isa",
    "typing",
]


class Kernel:
    """An ``@nki.jit`` kernel: calling it on NumPy arrays simulates it on birsim;
    ``kernel[grid]`` launches an SPMD grid."""

    def __init__(self, fn, grid: Tuple[int, ...] = (), options: Optional[Dict[str, Any]] = None):
        self.fn = fn
        self.grid = tuple(grid)
        self.options = dict(options or {})
        functools.update_wrapper(self, fn)

    def __getitem__(self, grid) -> "Kernel":
        if not isinstance(grid, tuple):
            grid = (grid,)
        g = []
        for n in grid:
            if hasattr(n, "__index__"):
                g.append(int(n))
            else:
                raise NkiError(f"a launch grid holds integers, got {n!r}", "grid", site=T.source_site())
        if any(n < 1 for n in g):
            raise NkiError(f"launch grid {tuple(g)} has an empty dimension", "grid", site=T.source_site())
        return Kernel(self.fn, tuple(g), self.options)

    def __call__(self, *args, **kwargs):
        return simulate(self)(*args, **kwargs)

    def __repr__(self) -> str:
        g = f"[{', '.join(map(str, self.grid))}]" if self.grid else ""
        return f"<birsim.nki kernel {self.fn.__name__}{g}>"


def jit(func=None, *args, **options):
    """``@nki.jit`` / ``@nki.jit(...)``: wraps a kernel function in a :class:`Kernel`.
    ``platform_target`` (trn1 / trn2 / trn3) picks the generation, over
    ``NEURON_PLATFORM_TARGET_OVERRIDE``; the other options AWS's decorator takes (``mode``,
    compiler flags) are kept and ignored."""
    if func is None or not callable(func):
        return lambda f: Kernel(f, (), options)
    return Kernel(func, (), options)


baremetal = jit


def benchmark(*args, **kwargs):
    """AWS's ``nki.benchmark`` measures hardware latency; birsim has no timing model."""
    raise NkiError("nki.benchmark measures latency on hardware; birsim.nki simulates values only", "benchmark",
                   site=T.source_site())


profile = benchmark


class _Refused:
    """A namespace of AWS compiler APIs birsim.nki does not model: using any of its callables
    raises NkiError at the kernel line (importing and naming them is fine)."""

    def __init__(self, path: str):
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        path = f"{self._path}.{name}"
        if name in ("sbuf", "psum", "hbm"):
            return _Refused(path)

        def refused(*args, **kwargs):
            raise NkiError(f"{path} (compiler control / manual allocation) is not supported by birsim.nki",
                           path.rsplit(".", 1)[-1], site=T.source_site())

        return refused


def _modulo(base: int, tiles: Tuple[int, ...], scale: int, index: Tuple[int, ...]) -> int:
    """AWS's modulo allocation of one coordinate (nki/test/test_sbuf_modulo_alloc.py): each
    block index taken modulo its tile count, linearised row-major over the tile counts, times
    ``scale``, plus ``base``; no tile counts means one tile (every block at ``base``)."""
    tiles = tuple(int(t) for t in tiles) or (1,) * len(index)
    mod = [int(i) % n for i, n in zip(index, tiles)]
    k = sum(m * int(np.prod(tiles[d + 1:], dtype=np.int64)) for d, m in enumerate(mod))
    return base + k * scale


class _OnChipAlloc(_Refused):
    """``nki.compiler.sbuf`` / ``nki.compiler.psum``: the direct-allocation buffers."""

    def __init__(self, path: str, buffer: str):
        super().__init__(path)
        self._buffer = buffer

    def alloc(self, func):
        """``ncc.sbuf.alloc(func)``: ``func(block index, partitions, bytes per partition of a
        block)`` returns ``(partition, byte address)`` (PSUM: ``(bank, partition, byte address)``)."""
        if not callable(func):
            raise NkiError(f"{self._path}.alloc takes an allocation function, got {func!r}", "alloc",
                           site=T.source_site())
        return T.ManualAlloc(self._buffer, func, f"{self._path}.alloc({getattr(func, '__name__', 'func')})")

    def mod_alloc(self, base_addr: int = 0, *, base_bank: int = 0, num_bank_tiles=(), base_partition: int = 0,
                  num_par_tiles=(), num_free_tiles=()):
        """Modulo allocation: block ``idx`` at partition ``base_partition + m(idx, num_par_tiles) ·
        partitions`` and byte ``base_addr + m(idx, num_free_tiles) · block bytes`` (PSUM: in bank
        ``base_bank + m(idx, num_bank_tiles)``), ``m`` the modulo linearisation (``_modulo``)."""
        psum = self._buffer == T.PSUM
        if not psum and (base_bank or num_bank_tiles):
            raise NkiError("base_bank / num_bank_tiles are PSUM's (nki.compiler.psum.mod_alloc)", "mod_alloc",
                           site=T.source_site())

        def func(idx, pdim_size, fdim_size):
            p = _modulo(int(base_partition), num_par_tiles, pdim_size, idx)
            f = _modulo(int(base_addr), num_free_tiles, fdim_size, idx)
            return (_modulo(int(base_bank), num_bank_tiles, 1, idx), p, f) if psum else (p, f)

        what = (f"{self._path}.mod_alloc(base_addr={base_addr}" + (f", base_bank={base_bank}" if psum else "")
                + (f", num_bank_tiles={tuple(num_bank_tiles)}" if num_bank_tiles else "")
                + (f", num_free_tiles={tuple(num_free_tiles)}" if num_free_tiles else "") + ")")
        return T.ManualAlloc(self._buffer, func, what)


class _Compiler(_Refused):
    """``nki.compiler``: scheduling hints pass through; direct allocation (``sbuf`` / ``psum``
    ``.mod_alloc`` / ``.alloc``) places tiles where the kernel says; other compiler APIs are
    refused when used."""

    sbuf = _OnChipAlloc("nki.compiler.sbuf", T.SBUF)
    psum = _OnChipAlloc("nki.compiler.psum", T.PSUM)

    @staticmethod
    def skip_middle_end_transformations(fn):
        return fn

    @staticmethod
    def no_reorder():
        """A scheduling hint: birsim runs instructions in program order anyway."""
        from .language import no_reorder

        return no_reorder()


compiler = _Compiler("nki.compiler")


def _unwrap(kernel) -> Tuple[Any, Tuple[int, ...]]:
    if isinstance(kernel, Kernel):
        return kernel.fn, kernel.grid
    fn = getattr(kernel, "func", None) or getattr(kernel, "__wrapped__", None)
    if callable(kernel) and not isinstance(kernel, type):
        return (kernel, ()) if fn is None else (fn, ())
    raise TypeError(f"expected an NKI kernel (a function or @nki.jit kernel), got {kernel!r}")


class _Traced:
    """One trace: the JSON program, the output views, the input arrays by allocation."""

    def __init__(self, program: Dict[str, Any], ret: Any, inputs: Dict[str, np.ndarray], arrays: Dict[str, np.ndarray],
                 written_inputs: List[str]):
        self.program = program
        self.ret = ret
        self.inputs = inputs
        self.arrays = arrays
        self.written_inputs = written_inputs


def _contiguous(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    if a.ndim == 0:
        a = a.reshape(1)
    return np.ascontiguousarray(a)


def _do_trace(kernel, args, kwargs, loops: Optional[str] = None) -> _Traced:
    fn, grid = _unwrap(kernel)
    target = kernel.options.get("platform_target") if isinstance(kernel, Kernel) else None
    if target is not None:
        key = str(getattr(target, "name", target)).strip().lower()
        if key not in T.ARCHES:
            raise NkiError(f"platform_target={target!r}: expected trn1, trn2, trn3, gen2, gen3 or gen4", "jit",
                           site=(fn.__code__.co_filename, fn.__code__.co_firstlineno))
        arch = T.ARCHES[key]
    else:
        arch = T.target_arch()
    b = T.Builder(arch, getattr(fn, "__name__", "kernel"))
    b.grid = grid or (1,)
    from ._loops import loop_mode

    b.loops = loop_mode(loops)
    try:
        sig = inspect.signature(fn)
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{getattr(fn, '__name__', 'kernel')}: {e}") from None
    inputs: Dict[str, np.ndarray] = {}
    originals: Dict[str, np.ndarray] = {}
    proxies: Dict[str, Any] = {}
    k = 0
    prev = getattr(T._current, "builder", None)
    if prev is not None:
        raise NkiError("a kernel cannot be traced from inside another kernel's trace", "simulate")
    T._current.builder = b
    try:
        for pname, value in bound.arguments.items():
            param = sig.parameters[pname]
            if isinstance(value, np.ndarray) and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                arr = _contiguous(value)
                t = b.input_alloc(pname, arr, k)
                k += 1
                # an x4 array (a uint array .view(nl.float8_e4m3fn_x4)) goes to birsim as its containers
                inputs[t._alloc.name] = arr.view(T.container(arr.dtype)) if T.is_x4(arr.dtype) else arr
                originals[t._alloc.name] = value
                proxies[pname] = t
            else:
                proxies[pname] = value
        call_args = []
        call_kwargs = {}
        skipped = False  # a parameter left at its default: the ones after it go by keyword
        for pname, param in sig.parameters.items():
            if pname not in proxies:
                skipped = True
                continue
            v = proxies[pname]
            if param.kind == param.VAR_POSITIONAL:
                call_args.extend(v)
            elif param.kind == param.VAR_KEYWORD:
                call_kwargs.update(v)
            elif param.kind == param.KEYWORD_ONLY or skipped:
                call_kwargs[pname] = v
            else:
                call_args.append(v)
        first = None
        for n, pid in enumerate(itertools.product(*(range(g) for g in b.grid))):
            b.program_id = pid
            b.instance = n
            b.shared_cursor = 0
            ret = fn(*call_args, **call_kwargs)
            if n == 0:
                first = ret
        outs = _flatten(first)
        for t in outs:
            if t.buffer != T.HBM:
                raise NkiError(
                    f"the kernel returns {t.name}, a tile in {t.buffer.upper()}; a kernel returns HBM tensors "
                    "(nl.ndarray(..., buffer=nl.shared_hbm))",
                    "return",
                    site=(fn.__code__.co_filename, fn.__code__.co_firstlineno),
                )
        program = b.program([t._alloc for t in outs])
        written = [name for name, (a, _) in _input_records(b).items() if a.written and name not in b.constants]
        inputs.update(b.constants)
        for name, (a, _) in _input_records(b).items():
            if a.used_as is not None and a.used_as != a.dtype and name in inputs:
                # read as another dtype (.ap(dtype=...)): the allocation is declared so, the
                # array goes over as the same bytes in that dtype's host form
                inputs[name] = T.host_view(inputs[name], a.dtype, a.used_as)
    finally:
        T._current.builder = None
    return _Traced(program, first, inputs, originals, written)


def _input_records(b: T.Builder) -> Dict[str, Tuple[T.Alloc, Dict[str, Any]]]:
    return {a.name: (a, j) for a, j in b.records if a is not None and a.input_index is not None}


def _flatten(ret: Any) -> List[Tensor]:
    if ret is None:
        return []
    if isinstance(ret, Tensor):
        return [ret]
    if isinstance(ret, (tuple, list)):
        out: List[Tensor] = []
        for r in ret:
            out.extend(_flatten(r))
        return out
    if isinstance(ret, dict):
        out = []
        for r in ret.values():
            out.extend(_flatten(r))
        return out
    raise NkiError(f"the kernel returns {type(ret).__name__}; expected HBM tensors", "return", site=("", 0))


def _to_array(t: Tensor, full: np.ndarray) -> np.ndarray:
    flat = full.reshape(-1)
    want = T.container(t.dtype)
    if flat.dtype != want:
        # the view and its allocation differ in dtype (.ap(dtype=), .view): the same bytes in
        # the view's host dtype (an x4 dtype as its raw containers, as birsim.run returns them)
        flat = np.ascontiguousarray(flat).view(np.uint8).view(want)
    if flat.size == t.size and t._offset == 0 and t._is_contiguous():
        return np.array(flat.reshape(t.shape))
    item = flat.dtype.itemsize
    # as_strided goes through the array interface, which ml_dtypes' fp8 types lack: walk the
    # raw bits, then view them back
    raw = flat.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item])
    view = np.lib.stride_tricks.as_strided(
        raw[t._offset:], shape=t.shape, strides=tuple(s * item for s in t._strides), writeable=False
    )
    return np.array(view).view(flat.dtype)


def _rebuild(ret: Any, arrays: Dict[str, np.ndarray]) -> Any:
    if ret is None:
        return None
    if isinstance(ret, Tensor):
        return _to_array(ret, arrays[ret._alloc.name])
    if isinstance(ret, tuple):
        return tuple(_rebuild(r, arrays) for r in ret)
    if isinstance(ret, list):
        return [_rebuild(r, arrays) for r in ret]
    if isinstance(ret, dict):
        return {k: _rebuild(v, arrays) for k, v in ret.items()}
    return ret


class Divergence(AssertionError):
    """``simulate(kernel, expect=...)`` found an output element that differs from the expected
    array. The message names the element, both values, how many elements differ, and the kernel
    line of the instruction that last wrote the element (birsim's write provenance,
    ``birsim.last_writers``). Attributes: ``output`` (its position among the kernel's outputs),
    ``index`` (the element's coordinates), ``got``, ``expected``, ``mismatches``, ``writer``
    (``{"index", "name", "opcode"}`` or None when nothing wrote it), ``site`` (``(file, line)``
    of the writing call, or None)."""

    def __init__(self, message: str, **fields: Any):
        super().__init__(message)
        self.output = fields.get("output")
        self.index = fields.get("index")
        self.got = fields.get("got")
        self.expected = fields.get("expected")
        self.mismatches = fields.get("mismatches")
        self.writer = fields.get("writer")
        self.site = fields.get("site")


def _expected_leaves(expect: Any, count: int) -> List[Optional[np.ndarray]]:
    """The expected arrays in the order of the kernel's outputs (``_flatten``'s order): one
    array for a kernel returning one tensor, else the same tuple / list / dict shape (None skips
    an output)."""
    if count == 1 and not isinstance(expect, (tuple, list, dict)):
        return [expect]
    if isinstance(expect, dict):
        leaves = list(expect.values())
    elif isinstance(expect, (tuple, list)):
        leaves = list(expect)
    else:
        leaves = [expect]
    if len(leaves) != count:
        raise TypeError(f"expect: the kernel returns {count} tensors, expect holds {len(leaves)}")
    return leaves


def _mismatches(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """The mask of elements of ``got`` that differ from ``want``: exact (equal values, or NaN
    against NaN) when both tolerances are 0, else ``np.isclose``'s rule (NaNs equal)."""
    if got.dtype.kind in "iub" and want.dtype.kind in "iub" and rtol == 0 and atol == 0:
        return got.astype(np.int64) != want.astype(np.int64)
    g = got.astype(np.float64)
    w = np.asarray(want).astype(np.float64)
    if rtol == 0 and atol == 0:
        return ~((g == w) | (np.isnan(g) & np.isnan(w)))
    return ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def _site(name: str) -> Optional[Tuple[str, int]]:
    """The kernel ``(file, line)`` in a traced instruction's name (``call@file.py:LINE#N``)."""
    head, _, _ = name.rpartition("#")
    _, _, where = head.partition("@")
    file, _, line = where.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else None


def _check_expect(tr: "_Traced", prog: Program, results: List[np.ndarray], expect: Any, rtol: float,
                  atol: float, profile: str, options: Dict[str, Any]) -> None:
    outs = _flatten(tr.ret)
    for k, (t, got, want) in enumerate(zip(outs, results, _expected_leaves(expect, len(outs)))):
        if want is None:
            continue
        want = np.asarray(want)
        if want.shape != got.shape:
            raise ValueError(f"expect: output {k} has shape {got.shape}, the expected array {want.shape}")
        bad = _mismatches(got, want, rtol, atol)
        if not bad.any():
            continue
        coords = tuple(int(c) for c in np.argwhere(bad)[0])
        flat = t._offset + sum(c * s for c, s in zip(coords, t._strides))
        stored = t._alloc.used_as if t._alloc.used_as is not None else t._alloc.dtype
        flat = flat * t.dtype.itemsize // stored.itemsize  # birsim counts elements of the stored dtype
        name = t._alloc.name
        writer = _last_writers(prog, tr.inputs, {name: [flat]}, profile, **options)[name][0]
        site = _site(writer["name"]) if writer else None
        if writer is None:
            by = "no instruction wrote it (it holds its initial bytes)"
        else:
            call = writer["name"].partition("@")[0]
            at = f"{site[0]}:{site[1]}" if site else "an unknown line"
            by = f"last written by {call} at {at} (instruction #{writer['index']} '{writer['name']}', {writer['opcode']})"
        tol = "exactly" if rtol == 0 and atol == 0 else f"within rtol={rtol}, atol={atol}"
        raise Divergence(
            f"output {k} ('{name}') differs from expect at {list(coords)}: got {got[coords]!r}, expected "
            f"{want[coords]!r} ({int(bad.sum())} of {bad.size} elements differ {tol}); {by}",
            output=k, index=coords, got=got[coords], expected=want[coords], mismatches=int(bad.sum()),
            writer=writer, site=site,
        )


def simulate(kernel, trace: bool = False, profile: str = "refsim", *, expect: Any = None, rtol: float = 0.0,
             atol: float = 0.0, loops: Optional[str] = None, **options):
    """``simulate(kernel)(*arrays, **kwargs)``: traces the kernel on the arrays (NumPy /
    ml_dtypes; other arguments pass through), runs the program on birsim and returns the
    kernel's outputs as arrays, shaped as the kernel returned them (one array, or a tuple...).
    Input arrays the kernel wrote are updated in place. With ``trace=True`` it returns
    ``(outputs, birsim_trace)``. ``profile`` and ``options`` go to ``birsim.run``.

    ``expect`` (an array, or one per output in the kernel's return shape; None skips one)
    compares each output, exactly or within ``rtol`` / ``atol`` (``np.isclose``; NaN matches
    NaN): the first differing element raises ``Divergence`` naming it and the kernel line of the
    instruction that last wrote it.

    ``loops="bir"`` (or ``BIRSIM_NKI_LOOPS=bir``) folds ``nl.affine_range`` /
    ``sequential_range`` loops whose iterations differ only by access-pattern offsets affine in
    the loop variable into BIR counted ``Loop`` nodes; ``"unroll"`` (the default) unrolls."""

    def run(*args, **kwargs):
        tr = _do_trace(kernel, args, kwargs, loops)
        prog = _load(tr.program)
        names = [t._alloc.name for t in _flatten(tr.ret)]
        want = list(dict.fromkeys(names + tr.written_inputs))
        res = _run(prog, tr.inputs, profile, trace=trace, outputs=want, **options)
        outs, records = res if trace else (res, None)
        for name in tr.written_inputs:
            orig = tr.arrays[name]
            if orig.flags.writeable:
                np.copyto(orig, np.frombuffer(np.ascontiguousarray(outs[name]).tobytes(), dtype=orig.dtype).reshape(orig.shape))
        result = _rebuild(tr.ret, dict(outs))
        if expect is not None:
            arrays = [_to_array(t, outs[t._alloc.name]) for t in _flatten(tr.ret)]
            _check_expect(tr, prog, arrays, expect, rtol, atol, profile, options)
        return (result, records) if trace else result

    return run


def simulate_kernel(kernel, *args, **kwargs):
    """The older ``nki.simulate_kernel(kernel[grid], *arrays)`` spelling of ``simulate``."""
    return simulate(kernel)(*args, **kwargs)


def trace(kernel, save: Optional[str] = None, loops: Optional[str] = None):
    """``trace(kernel)(*arrays)``: the kernel's BIR program as a ``birsim.Program`` (inputs
    named after the kernel's parameters, outputs ``out``, ``out_1``...; run it with
    ``birsim.run``). ``save="kernel.json"`` also writes its BIR JSON there, for
    ``birsim run kernel.json --input a_input=a.npy ...`` (``trace_json`` returns the text)."""

    def run(*args, **kwargs) -> Program:
        program = _do_trace(kernel, args, kwargs, loops).program
        if save is not None:
            with open(save, "w") as f:
                _json.dump(program, f, indent=1)
        return _load(program)

    # AWS's older API also spells `nki.trace` as a kernel decorator (`nki_jit = nki.trace`):
    # simulate / simulate_kernel of the decorated function run the kernel itself (_unwrap)
    run.__wrapped__ = kernel
    return run


def trace_json(kernel, indent: Optional[int] = None, loops: Optional[str] = None):
    """``trace_json(kernel)(*arrays)``: the traced program's BIR JSON text."""

    def run(*args, **kwargs) -> str:
        return _json.dumps(_do_trace(kernel, args, kwargs, loops).program, indent=indent)

    return run


# ---------------------------------------------------------------------------------------------
# The import switch

_ALIASES = ("nki", "neuronxcc.nki")
_SUBMODULES = ("language", "isa", "typing")


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Answers imports of ``nki.*`` / ``neuronxcc.nki.*`` submodules birsim does not provide
    with an ImportError that says so (the known ones are already in ``sys.modules``)."""

    def find_spec(self, fullname, path=None, target=None):
        for alias in _ALIASES:
            if fullname.startswith(alias + "."):
                raise ImportError(
                    f"{fullname}: birsim.nki provides {', '.join(alias + '.' + s for s in _SUBMODULES)} only",
                    name=fullname,
                )
        return None


_finder = _AliasFinder()
_saved: Dict[str, Any] = {}


def install() -> None:
    """Makes ``import nki``, ``nki.language``, ``nki.isa``, ``nki.typing``, ``nki.compiler`` and the older
    ``neuronxcc.nki`` spellings resolve to ``birsim.nki`` (entries in ``sys.modules`` plus a
    meta-path finder that refuses other ``nki.*`` submodules). Idempotent; ``uninstall()``
    restores what was there."""
    me = sys.modules[__name__]
    subs = {s: importlib.import_module(f"{__name__}.{s}") for s in _SUBMODULES}
    neuronxcc = sys.modules.get("neuronxcc")
    if neuronxcc is None or not getattr(neuronxcc, "_birsim_alias", False):
        neuronxcc = types.ModuleType("neuronxcc", "birsim's stand-in for neuronxcc (nki only)")
        neuronxcc._birsim_alias = True
        neuronxcc.__path__ = []
    neuronxcc.nki = me
    table = {"neuronxcc": neuronxcc}
    for alias in _ALIASES:
        table[alias] = me
        for s, m in subs.items():
            table[f"{alias}.{s}"] = m
        table[f"{alias}.compiler"] = compiler  # `import nki.compiler as ncc`
    for name, mod in table.items():
        if name not in _saved:
            _saved[name] = sys.modules.get(name)
        sys.modules[name] = mod
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Undoes ``install()``."""
    for name, mod in _saved.items():
        if mod is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = mod
    _saved.clear()
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


from . import isa, language, typing  # noqa: E402

