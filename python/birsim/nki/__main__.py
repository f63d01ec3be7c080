"""``python -m birsim.nki script.py [args...]`` (or ``-m module [args...]``, e.g. ``-m pytest
test_kernel.py``): installs the ``nki`` / ``neuronxcc.nki`` import aliases
(``birsim.nki.install()``), then runs the script or module as ``__main__``, so an unmodified NKI
kernel file or its tests run on birsim."""

from __future__ import annotations

import runpy
import sys

from . import install


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m birsim.nki SCRIPT.py [ARGS...]\n"
              "       python -m birsim.nki -m MODULE [ARGS...]\n\n"
              "Runs SCRIPT.py (or MODULE, e.g. unittest or pytest) with `import nki`, `nki.language`, "
              "`nki.isa` and `neuronxcc.nki` resolving to birsim.nki: every @nki.jit kernel is traced "
              "into BIR and run on birsim.")
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m birsim.nki -m: a module name is needed", file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        sys.path.insert(0, "")
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
