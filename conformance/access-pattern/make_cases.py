#!/usr/bin/env python3
"""Writes the `access-pattern` conformance suite: element byte addresses computed by NumPy from
the address rule of shared/reference/bir-json.md, independently of birsim:

    element e = offset + sum_k i_k * step_k          (row-major over the [step, num] levels)
    partitioned: byte = origin + (e // pitch) * row_stride + (e % pitch) * size,
                 pitch = partition_bytes // size, valid when 0 <= e < partitions * pitch
    flat:        byte = origin + e * size, valid when 0 <= e and (e + 1) * size <= bytes

Cases whose addresses depend on an ASSUMED choice of docs/fidelity.md get `choice:` lines
(`choices_of`): A8 for flat locations, A5 for rows that are not a whole number of elements, A6
for locations placed in a shared arena.

Pinned versions: oracle/requirements.txt. Run: .venv/bin/python conformance/access-pattern/make_cases.py
"""
import json
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")


def elements(ap, offset):
    nums = [n for _, n in ap]
    steps = np.array([s for s, _ in ap], dtype=np.int64)
    idx = np.indices(nums, dtype=np.int64).reshape(len(nums), -1)  # row-major order
    return offset + (steps[:, None] * idx).sum(axis=0)


def addresses(ap, offset, size, layout):
    e = elements(ap, offset)
    if layout["kind"] == "flat":
        ok = (e >= 0) & ((e + 1) * size <= layout["bytes"])
        addr = layout["origin"] + e * size
    else:
        pitch = layout["partition_bytes"] // size
        ok = (e >= 0) & (e < layout["partitions"] * pitch)
        addr = layout["origin"] + (e // pitch) * layout["row_stride"] + (e % pitch) * size
    if not ok.all():
        return None
    return addr.tolist()


def private(partitions, partition_bytes):
    return {"kind": "partitioned", "origin": 0, "partitions": partitions,
            "partition_bytes": partition_bytes, "row_stride": partition_bytes}


def arena(base, addr, partitions, partition_bytes, arena_row=229376):
    return {"kind": "partitioned", "origin": base * arena_row + addr, "partitions": partitions,
            "partition_bytes": partition_bytes, "row_stride": arena_row}


def flat(nbytes, origin=0):
    return {"kind": "flat", "origin": origin, "bytes": nbytes}


# A [16 partitions][4][8][8] fp32 location: pitch 256 elements.
P16 = private(16, 1024)
CASES = {
    "whole_tile": ([[512, 8], [1, 512]], 0, 4, private(8, 2048)),
    "partition_slice_32": ([[64, 32], [1, 64]], 32 * 64, 4, private(128, 256)),
    "partition_slice_64": ([[64, 16], [1, 64]], 64 * 64, 4, private(128, 256)),
    "partition_slice_96": ([[64, 32], [1, 64]], 96 * 64, 4, private(128, 256)),
    "slice_96_past_end": ([[64, 33], [1, 64]], 96 * 64, 4, private(128, 256)),
    "z_y_swap": ([[256, 16], [8, 8], [64, 4], [1, 8]], 0, 4, P16),
    "y_x_swap": ([[256, 16], [64, 4], [1, 8], [8, 8]], 0, 4, P16),
    "y_step_2": ([[256, 16], [64, 4], [16, 4], [1, 8]], 0, 4, P16),
    "partition_transpose": ([[1, 16], [16, 16]], 0, 4, private(16, 64)),
    "broadcast": ([[64, 16], [0, 64]], 5, 4, private(16, 256)),
    "broadcast_partition": ([[0, 16], [1, 64]], 0, 4, private(16, 256)),
    "negative_step": ([[64, 16], [-1, 64]], 63, 4, private(16, 256)),
    "negative_middle": ([[256, 16], [-64, 4], [1, 64]], 192, 4, P16),
    "unit_dims_middle": ([[64, 16], [7, 1], [3, 1], [1, 64]], 0, 4, private(16, 256)),
    "five_dims": ([[128, 4], [32, 2], [8, 4], [2, 2], [1, 2]], 1, 2, private(4, 256)),
    "bf16_tile": ([[128, 16], [1, 128]], 0, 2, private(16, 256)),
    "u8_rows": ([[256, 8], [2, 100]], 3, 1, private(8, 256)),
    "int64_column": ([[32, 16], [0, 2], [1, 1]], 31, 8, private(16, 256)),
    "arena_slice": ([[512, 32], [1, 512]], 0, 4, arena(32, 4096, 32, 2048)),
    "arena_crossing_run": ([[1, 3000]], 100, 4, arena(0, 0, 4, 2048)),
    "arena_strided": ([[1, 4], [512, 8]], 0, 4, arena(64, 8, 8, 2048)),
    "dram_flat": ([[64, 16], [1, 64]], 0, 4, flat(4096)),
    "dram_flat_origin": ([[8, 4], [-1, 8]], 7, 2, flat(64, origin=100)),
    "dram_past_end": ([[64, 16], [1, 65]], 0, 4, flat(4096)),
    "offset_negative": ([[64, 2], [1, 4]], -1, 4, private(16, 256)),
    "odd_row_bytes": ([[1, 7]], 0, 4, private(3, 10)),
}


def random_cases(rng, n):
    out = {}
    for k in range(n):
        size = int(rng.choice([1, 2, 4, 8]))
        partitions = int(rng.integers(1, 9))
        pitch = int(rng.integers(1, 40))
        kind = rng.integers(0, 3)
        pb = pitch * size
        if kind == 0:
            layout = flat(partitions * pb, origin=int(rng.integers(0, 9)))
            cap = partitions * pitch
        elif kind == 1:
            layout = private(partitions, pb)
            cap = partitions * pitch
        else:
            layout = arena(int(rng.integers(0, 3)), int(rng.integers(0, 64)), partitions, pb, arena_row=pb + int(rng.integers(1, 64)))
            cap = partitions * pitch
        dims = int(rng.integers(1, 6))
        ap = []
        for d in range(dims):
            num = int(rng.integers(1, 6))
            r = rng.integers(0, 6)
            step = 0 if r == 0 else 1 if r == 1 else -int(rng.integers(1, 4)) if r == 2 else int(rng.integers(1, max(2, cap // 12)))
            ap.append([abs(step) if d == 0 else step, num])
        offset = int(rng.integers(0, max(1, cap // 3)))
        out[f"random_{k:02d}"] = (ap, offset, size, layout)
    return out


def choices_of(size, layout):
    out = []
    if layout["kind"] == "flat":
        out.append("A8")  # a flat location's element e is at byte e * size of its own buffer
    else:
        if layout["partition_bytes"] % size:
            out.append("A5")  # the pitch is floor(dims[1] / size); the tail bytes are unused
        if layout["row_stride"] != layout["partition_bytes"]:
            out.append("A6")  # the arena placement (rows base + p of the shared arena)
    return out


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    cases = dict(CASES)
    cases.update(random_cases(np.random.default_rng(20261129), 60))
    n_err = 0
    for name, (ap, offset, size, layout) in cases.items():
        addrs = addresses(ap, offset, size, layout)
        expect = {"addresses": addrs} if addrs is not None else {"error": "out-of-bounds"}
        n_err += addrs is None
        case = {"pattern": {"ap": ap, "offset": offset, "elem_size": size}, "layout": layout, "expect": expect}
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(case, f)
        with open(os.path.join(OUT, name + ".expect"), "w") as f:
            choices = "".join(f"choice: {c}\n" for c in choices_of(size, layout))
            f.write("# addresses from make_cases.py (NumPy, explicit address formula)\n" + choices + "expect: oracle\n")
    print(f"{len(cases)} cases, {n_err} out of bounds")


if __name__ == "__main__":
    main()
