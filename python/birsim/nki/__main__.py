"""``python -m birsim.nki script.py [args...]``: installs the ``nki`` / ``neuronxcc.nki``
import aliases (``birsim.nki.install()``), then runs the script as ``__main__``, so an
unmodified NKI kernel file runs on birsim."""

from __future__ import annotations

import runpy
import sys

from . import install


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m birsim.nki SCRIPT.py [ARGS...]\n\n"
              "Runs SCRIPT.py with `import nki`, `nki.language`, `nki.isa` and `neuronxcc.nki` "
              "resolving to birsim.nki: every @nki.jit kernel is traced into BIR and run on birsim.")
        return 0 if argv else 2
    install()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
