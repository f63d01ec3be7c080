"""birsim: a bit-exact functional simulator for Neuron BIR, on NumPy arrays.

    import numpy as np, birsim
    a = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    out = birsim.run("examples/sub_one/program.json", {"a": a})   # {"b_set": ...}
    assert (out["b_set"] == a - 1).all()

``run`` takes a program (a path, a JSON string, a dict or a ``Program``) and a dict mapping
allocation or memory-location names to NumPy arrays, and returns every output allocation as an
array of its ``tensor_shape``. Dtypes (the rule of the CLI's ``.npy`` files, plus ml_dtypes):

* float32, float16 and the integer dtypes are themselves;
* bfloat16, float8e3 (E3M4), float8e4 (E4M3), float8_e4m3fn, float8e5 (E5M2) and
  float8_e8m0fnu are the ml_dtypes types ``bfloat16``, ``float8_e3m4``, ``float8_e4m3``,
  ``float8_e4m3fn``, ``float8_e5m2``, ``float8_e8m0fnu``; an unsigned integer array of the same
  width holding the raw bits is accepted too;
* float32r is ``float32`` (or raw ``uint32`` bits); the packed ``_x4`` dtypes travel as raw
  unsigned integers of their container width only (``uint16`` for float4_e2m1fn_x4,
  ``uint32`` for float8_e4m3fn_x4 / float8_e5m2_x4), shaped in containers.

Arrays must be C-contiguous and in native (little-endian) byte order; anything else is an
``InputError`` naming the tensor (docs/fidelity.md P3). Faults raise ``Fault``; programs that do
not load or validate raise ``ProgramError``; birsim bugs raise ``InternalError``. The GIL is
released while the program runs.
"""

from __future__ import annotations

import json
import operator
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import ml_dtypes
import numpy as np

from . import _native
from ._native import Fault, InputError, InternalError, Program, ProgramError

__all__ = [
    "Fault",
    "InputError",
    "InternalError",
    "Outputs",
    "Program",
    "ProgramError",
    "check",
    "last_writers",
    "load",
    "ops",
    "run",
    "trace",
    "DTYPES",
]

__version__ = "0.1.0"

# BIR dtype name -> (the NumPy/ml_dtypes dtype inputs and outputs use, or None for raw bits only;
#                    the raw-bit dtype: simulator::npy::descr_for of that BIR dtype).
DTYPES: Dict[str, Tuple[Optional[np.dtype], np.dtype]] = {
    "float32": (np.dtype("<f4"), np.dtype("<f4")),
    "float16": (np.dtype("<f2"), np.dtype("<f2")),
    "int8": (np.dtype("i1"), np.dtype("i1")),
    "int16": (np.dtype("<i2"), np.dtype("<i2")),
    "int32": (np.dtype("<i4"), np.dtype("<i4")),
    "int64": (np.dtype("<i8"), np.dtype("<i8")),
    "uint8": (np.dtype("u1"), np.dtype("u1")),
    "uint16": (np.dtype("<u2"), np.dtype("<u2")),
    "uint32": (np.dtype("<u4"), np.dtype("<u4")),
    "uint64": (np.dtype("<u8"), np.dtype("<u8")),
    "bfloat16": (np.dtype(ml_dtypes.bfloat16), np.dtype("<u2")),
    "float8e3": (np.dtype(ml_dtypes.float8_e3m4), np.dtype("u1")),
    "float8e4": (np.dtype(ml_dtypes.float8_e4m3), np.dtype("u1")),
    "float8_e4m3fn": (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype("u1")),
    "float8e5": (np.dtype(ml_dtypes.float8_e5m2), np.dtype("u1")),
    "float8_e8m0fnu": (np.dtype(ml_dtypes.float8_e8m0fnu), np.dtype("u1")),
    "float32r": (np.dtype("<f4"), np.dtype("<u4")),
    "float4_e2m1fn_x4": (None, np.dtype("<u2")),
    "float8_e4m3fn_x4": (None, np.dtype("<u4")),
    "float8_e5m2_x4": (None, np.dtype("<u4")),
}

ProgramLike = Union[str, "os.PathLike[str]", bytes, Mapping[str, Any], Program]


def load(program: ProgramLike) -> Program:
    """Loads a program: a ``Program`` (returned as is), a dict (BIR JSON as Python objects),
    ``bytes`` or a ``str`` holding JSON text (a string whose first non-blank character is ``{``),
    or a path (``str`` or ``os.PathLike``). Raises ``ProgramError`` listing every located
    problem, or naming the file when it cannot be read (missing, a folder, no permission; the
    ``OSError`` is its ``__cause__``)."""
    if isinstance(program, Program):
        return program
    if isinstance(program, Mapping):
        text = json.dumps(program).encode()
    elif isinstance(program, (bytes, bytearray, memoryview)):
        text = bytes(program)
    elif isinstance(program, str) and program.lstrip().startswith("{"):
        text = program.encode()
    elif isinstance(program, (str, os.PathLike)):
        try:
            with open(program, "rb") as f:
                text = f.read()
        except OSError as e:
            # A mistyped or unreadable path is bad input, as on the CLI (exit 2): ProgramError
            # (an InputError, a ValueError) naming the file, the OSError as its cause.
            err = ProgramError(f"cannot read {os.fspath(program)!s}: {e.strerror or e}")
            err.diagnostics = []
            err.filename = os.fspath(program)
            raise err from e
    else:
        raise TypeError(
            f"program: expected a path, a JSON string, a dict or a birsim.Program, got {type(program).__name__}"
        )
    return Program(text)


def _accepted(bir: str) -> List[np.dtype]:
    """The array dtypes an input of BIR dtype ``bir`` may have."""
    natural, raw = DTYPES[bir]
    if natural is None:
        return [raw]
    return [natural] if natural == raw else [natural, raw]


def _error(tensor: Optional[str], message: str) -> InputError:
    e = InputError(message)
    e.tensor = tensor
    return e


def _shape_str(shape: Iterable[int]) -> str:
    s = tuple(int(d) for d in shape)
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def _pack(prog: Program, name: Any, array: Any) -> Tuple[str, str, List[int], bytes]:
    if not isinstance(name, str):
        raise _error(None, f"input names must be strings, got {name!r}")
    bir, shape, _kind = prog.tensor(name)
    if not isinstance(array, np.ndarray):
        raise _error(name, f"'{name}': expected a numpy.ndarray, got {type(array).__name__}")
    accepted = _accepted(bir)
    if not any(array.dtype == d for d in accepted):
        want = " or ".join(f"{d} ({d.str})" for d in accepted)
        raise _error(
            name,
            f"'{name}' is {bir} and needs dtype {want}, but the array has dtype {array.dtype} ({array.dtype.str})",
        )
    if tuple(array.shape) != tuple(shape):
        raise _error(
            name,
            f"'{name}' has tensor_shape {_shape_str(shape)}, but the array has shape {_shape_str(array.shape)}",
        )
    if not array.flags.c_contiguous:
        raise _error(
            name,
            f"'{name}': the array is not C-contiguous (a strided view, a transpose or Fortran order); "
            "pass numpy.ascontiguousarray(array)",
        )
    # The bytes go over as the raw-bit dtype of the CLI's .npy rule; the native side checks
    # this descr against simulator::npy::descr_for, so DTYPES cannot drift from it.
    descr = DTYPES[bir][1].str
    return (name, descr, [int(d) for d in shape], array.tobytes())


def _unpack(bir: str, shape: List[int], data: bytearray) -> np.ndarray:
    natural, raw = DTYPES[bir]
    array = np.frombuffer(data, dtype=raw).reshape(tuple(shape))
    return array.view(natural) if natural is not None and natural != raw else array


class Outputs(Dict[str, np.ndarray]):
    """What ``run`` returns: ``{name: array}``. Its keys are the names asked for in ``outputs``,
    else the output allocations' names; an output allocation's memory location name (the name
    the CLI's ``--output`` and ``--expect`` examples use, ``b`` for allocation ``b_set``) finds the
    same array: ``out["b"] is out["b_set"]``, ``"b" in out``, ``out.get("b")``."""

    def __init__(self, items: Mapping[str, np.ndarray], aliases: Mapping[str, str]):
        super().__init__(items)
        has = lambda k: dict.__contains__(self, k)  # noqa: E731
        self._aliases = {k: v for k, v in aliases.items() if not has(k) and has(v)}

    def _alias(self, key: Any) -> Optional[str]:
        # getattr: a copy or unpickled Outputs is filled before its attributes are restored.
        return getattr(self, "_aliases", {}).get(key) if isinstance(key, str) else None

    def __missing__(self, key: Any) -> np.ndarray:
        alias = self._alias(key)
        if alias is not None:
            return dict.__getitem__(self, alias)
        raise KeyError(key)

    def __contains__(self, key: Any) -> bool:
        return dict.__contains__(self, key) or self._alias(key) is not None

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


def _outputs(prog: Program, items: List[Tuple[str, str, List[int], bytearray]]) -> Outputs:
    arrays = {name: _unpack(bir, shape, data) for name, bir, shape, data in items}
    return Outputs(arrays, dict(prog.output_aliases()))


def run(
    program: ProgramLike,
    inputs: Optional[Mapping[str, np.ndarray]] = None,
    profile: str = "refsim",
    threads: Optional[int] = None,
    *,
    trace: bool = False,
    outputs: Optional[Iterable[str]] = None,
    **options: Any,
) -> Union[Dict[str, np.ndarray], Tuple[Dict[str, np.ndarray], List[Dict[str, Any]]]]:
    """Runs a program on NumPy inputs and returns ``{name: array}`` for every output allocation
    (or for the names in ``outputs``: allocations or memory locations, each returned under the
    name given). Every name, in ``inputs``, ``outputs`` and the result, may be an allocation or
    its memory location (``b_set`` or ``b``): the result (``Outputs``) is keyed by allocation
    and answers to an output's location name too.

    ``profile`` is ``"refsim"`` (the reference interpreter's numerics) or ``"nki"`` (ml_dtypes /
    NumPy); ``threads`` caps the threads a kernel uses (None: every core; results are
    bit-identical for every count). With ``trace=True`` it returns ``(outputs, trace)``, the trace
    a list of dicts with the keys of ``birsim run --trace`` lines.

    ``options`` are the CLI's switches: ``fp8_saturate`` (bool), ``tsc_reverse``
    (``"direction"``/``"operands"``), ``oob`` (``"fault"``/``"skip"``), ``dma_block_in_stream``
    (``"skip"``/``"run"``), ``matmul`` (``"ascending"``/``"fma"``), ``ranges``
    (``"warn"``/``"fault"``: an Activation input outside its function's valid range is a
    ``RuntimeWarning`` per instruction, or a ``Fault``), ``max_instructions``, ``memory_cap`` (bytes) and
    ``allow_uninit_inputs`` (bool; else every input allocation needs an array). ``threads`` and
    the switches from ``tsc_reverse`` to ``memory_cap`` are spelled and checked by the parser the
    CLI uses (``simulator::Options::set``), with its messages (``oob=ignore: expected fault or
    skip``).

    Raises ``Fault`` when the program faults (its ``outputs`` attribute holds the outputs as
    memory held them then, its ``trace`` the trace so far when ``trace=True``), ``InputError``
    for bad inputs or options, ``ProgramError`` for a program that does not load or validate.
    """
    prog = load(program)
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, Mapping):
        raise TypeError(f"inputs: expected a dict of name -> numpy.ndarray, got {type(inputs).__name__}")
    packed = [_pack(prog, name, array) for name, array in inputs.items()]
    if outputs is not None:
        if isinstance(outputs, str):
            outputs = [outputs]
        outputs = list(outputs)
        for name in outputs:
            if not isinstance(name, str):
                raise _error(None, f"output names must be strings, got {name!r}")
    opts = dict(options, profile=profile, threads=threads, trace=bool(trace))
    try:
        items, tr, _ = _native.run(prog, packed, outputs, opts)
    except Fault as f:
        f.outputs = _outputs(prog, f.outputs)
        raise
    result = _outputs(prog, items)
    return (result, tr) if trace else result


def trace(
    program: ProgramLike,
    inputs: Optional[Mapping[str, np.ndarray]] = None,
    profile: str = "refsim",
    threads: Optional[int] = None,
    **options: Any,
) -> List[Dict[str, Any]]:
    """Runs a program and returns its trace only: one dict per executed instruction with the
    keys of ``birsim run --trace`` lines (``index``, ``name``, ``opcode``, ``bytes_written``,
    ``checksums``, ``elapsed_ns``). Same arguments and exceptions as ``run``."""
    options.pop("trace", None)
    _, tr = run(program, inputs, profile, threads, trace=True, outputs=[], **options)
    return tr


def last_writers(
    program: ProgramLike,
    inputs: Optional[Mapping[str, np.ndarray]],
    elements: Mapping[str, Iterable[int]],
    profile: str = "refsim",
    threads: Optional[int] = None,
    **options: Any,
) -> Dict[str, List[Optional[Dict[str, Any]]]]:
    """Runs a program and returns, for each tensor named in ``elements`` (an allocation or memory
    location, like ``run``'s names) and each of its listed elements (C-order flat indices into its
    ``tensor_shape``), the instruction that last wrote the element: ``{"index", "name",
    "opcode"}`` (``index`` counts executed instructions from 0, loop iterations included), or
    None when nothing wrote it (it holds what was loaded, or the uninitialised marker). The rule
    is ``birsim run --expect``'s (docs/fidelity.md V3): an instruction whose static output AP
    covers one of the element's bytes, or after which its bytes changed. Same other arguments
    and exceptions as ``run``; a fault raises ``Fault`` as there."""
    prog = load(program)
    if not isinstance(elements, Mapping):
        raise TypeError(f"elements: expected a dict of name -> flat indices, got {type(elements).__name__}")
    watch = []
    for name, indices in elements.items():
        if not isinstance(name, str):
            raise _error(None, f"tensor names must be strings, got {name!r}")
        flat = [int(operator.index(k)) for k in indices]
        if any(k < 0 for k in flat):
            raise _error(name, f"'{name}': element indices must not be negative")
        watch.append((name, flat))
    packed = [_pack(prog, name, array) for name, array in (inputs or {}).items()]
    opts = dict(options, profile=profile, threads=threads, watch=watch)
    _, _, found = _native.run(prog, packed, [], opts)
    result: Dict[str, List[Optional[Dict[str, Any]]]] = {}
    for name, flat in watch:
        result[name], found = found[: len(flat)], found[len(flat) :]
    return result


def check(program: ProgramLike) -> Dict[str, Any]:
    """The support report of a program (what ``birsim check --json`` prints): ``{"verdict",
    "entries", "problems", "ranges"}``, each entry an opcode, mode and dtype combination the program uses
    with its ``status`` (``runs`` / ``not_implemented`` / ``rejected``), ``reason`` and the
    ``instructions`` using it (``simulator::support::CheckReport::to_json``); ``ranges`` lists
    the Activations whose immediates already put every argument outside the function's valid
    range (``instruction``, ``func``, ``range``, ``argument``). A program that
    does not load raises ``ProgramError``; one that loads but does not validate is reported,
    its instructions ``rejected``."""
    return json.loads(_native.check(load(program)))


def ops() -> Dict[str, Any]:
    """The whole support matrix (what ``birsim ops --json`` prints), from the same classifier
    the executor dispatches on (``simulator::support::matrix``)."""
    return json.loads(_native.ops())
