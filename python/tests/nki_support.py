"""Helpers shared by the test_nki_*.py files: the import switch (installed once per session,
so the kernels' `import nki` lines resolve to birsim.nki) and a seeded RNG."""

from __future__ import annotations

import pathlib
import re
from typing import Dict

import numpy as np

import birsim.nki

birsim.nki.install()

KERNELS = pathlib.Path(__file__).resolve().parent / "nki_kernels"


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def markers(path: pathlib.Path) -> Dict[str, int]:
    """`# ERR:<name>` marker -> 1-based line number."""
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"# ERR:(\w+)", line)
        if m:
            out[m.group(1)] = n
    return out
