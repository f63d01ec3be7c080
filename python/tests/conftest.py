"""Shared helpers for the birsim Python tests: repository paths, the conformance case reader,
small program builders, and the `birsim` CLI binary (built with cargo once per session)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from typing import Dict, List, Optional, Tuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance" / "programs"


class Case:
    """One `conformance/programs/**/case.expect` (the format xtask's program runner reads)."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.name = str(folder.relative_to(CONFORMANCE))
        self.program = folder / "case.json"
        self.profile = "refsim"
        self.inputs: List[Tuple[str, pathlib.Path]] = []
        self.outputs: List[Tuple[str, pathlib.Path]] = []
        self.options: Dict[str, str] = {}  # `option: NAME=VALUE` lines
        self.fault: Optional[Tuple[str, str]] = None
        self.errors = False
        for line in (folder / "case.expect").read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if word == "profile:":
                self.profile = rest
            elif word == "program:":
                self.program = (folder / rest).resolve()
            elif word == "option:":
                k, _, v = rest.partition("=")
                self.options[k.strip()] = v.strip()
            elif word in ("input", "output"):
                name, _, file = rest.partition("=")
                entry = (name.strip(), folder / file.strip())
                (self.inputs if word == "input" else self.outputs).append(entry)
            elif word == "fault":
                kind, _, message = rest.partition("|")
                self.fault = (kind.strip(), message.strip())
            elif word == "error":
                self.errors = True

    def run_options(self) -> Dict[str, str]:
        """The case's options as `birsim.run` keyword arguments: the same names (one spelling,
        `simulator::Options::NAMES`), a number as an int."""
        return {k: int(v) if v.isdigit() else v for k, v in self.options.items()}

    def cli_flags(self) -> List[str]:
        """The same options as `birsim run` flags: each name with dashes (`--dma-block-in-stream`)."""
        out = ["--profile", self.profile]
        for k, v in self.options.items():
            out += ["--" + k.replace("_", "-"), v]
        return out


def all_cases() -> List[Case]:
    return [Case(p.parent) for p in sorted(CONFORMANCE.glob("**/case.expect"))]


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The `birsim` binary of this checkout: `$BIRSIM_CLI` if set, else built with cargo (debug;
    a no-op when `cargo test` already built it)."""
    given = os.environ.get("BIRSIM_CLI")
    if given:
        return pathlib.Path(given)
    subprocess.run(
        ["cargo", "build", "--quiet", "-p", "birsim", "--bin", "birsim"], cwd=ROOT, check=True
    )
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return pathlib.Path(json.loads(meta.stdout)["target_directory"]) / "debug" / "birsim"


def location(name: str, kind: str, mem: str, rows: int, row_bytes: int) -> dict:
    return {
        "Skind": "memory_location",
        "name": name,
        "type": mem,
        "addr": 0,
        "dims": [rows, row_bytes],
        "base": 0,
        "bank": 0,
        "allocated": False,
    }


def allocation(name: str, kind: str, dtype: str, shape: List[int], mem: str, size: int) -> dict:
    rows, cols = shape
    return {
        "Skind": "memory_location_set",
        "name": name,
        "kind": kind,
        "dtype": dtype,
        "tensor_shape": shape,
        "partition_dim": 0,
        "memorylocations": [location(name, kind, mem, rows, cols * size)],
    }


def ap(name: str, dtype: str, rows: int, cols: int) -> dict:
    return {
        "kind": "physical_ap",
        "memref": name,
        "memsetref": name,
        "dtype": dtype,
        "offset": 0,
        "ap": [[cols, rows], [1, cols]],
    }


def copy_program(dtype: str, size: int, rows: int, cols: int) -> dict:
    """`y = x` for one dtype: Load x (DRAM) -> xt (SBUF), Save xt -> y (DRAM), no cast."""
    inst = lambda op, n, src, dst: {  # noqa: E731
        "opcode": op,
        "name": n,
        "engine": "SP",
        "ins": [ap(src, dtype, rows, cols)],
        "outs": [ap(dst, dtype, rows, cols)],
    }
    return {
        "arch": "gen3",
        "version": 2,
        "functions": [
            {
                "name": "copy",
                "allocations": [
                    allocation("x", "ExternalInput", dtype, [rows, cols], "Input", size),
                    allocation("xt", "Internal", dtype, [rows, cols], "SB", size),
                    allocation("y", "ExternalOutput", dtype, [rows, cols], "Output", size),
                ],
                "blocks": [
                    {"name": "b", "instructions": [inst("Load", "load", "x", "xt"), inst("Save", "save", "xt", "y")]}
                ],
            }
        ],
    }
