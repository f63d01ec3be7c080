"""Helpers shared by the test_nki_*.py files: the import switch (installed once per session,
so the kernels' `import nki` lines resolve to birsim.nki) and a seeded RNG."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Dict, List

import numpy as np

import birsim.nki

birsim.nki.install()

KERNELS = pathlib.Path(__file__).resolve().parent / "nki_kernels"


def traced_nodes(kernel, *args, loops: bool = True) -> List[dict]:
    """Every instruction of the kernel's traced program, depth first through loop nodes (the
    loop nodes themselves too, before their bodies, unless ``loops=False``)."""
    prog = json.loads(birsim.nki.trace_json(kernel)(*args))
    out: List[dict] = []

    def walk(entries):
        for e in entries:
            if "instructions" in e:
                walk(e["instructions"])
                continue
            if loops or "blocks" not in e:
                out.append(e)
            if "blocks" in e:
                walk(e["blocks"])

    walk(prog["functions"][0]["blocks"])
    return out


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
