"""Conformance cases for GetSequenceBounds (64) and the synchronisation-only instructions
(GroupResetSemaphores 14, Drain 16, Halt 17, CoreBarrier 87, TensorCompletion 94): issue #29 items 5
and 7, docs/fidelity.md Q1, Q2.

Expected values:
  * GetSequenceBounds: AWS's own golden, `compute_sequence_bounds` from
    aws-neuron/aws-neuron-sdk nki/test/test_nki_isa_sequence_bounds.py, copied verbatim below, on
    AWS's test input (np.random.seed(0); sorted randint(0, 32, 32) as fp32, shape (1, 32)) and on
    the documented example ([0, 1, 1, 2, 2, 2, 0, 3, 3] as int32: starts [9, 1, 1, 3, 3, 3, 9, 7, 7],
    ends [-1, 3, 3, 6, 6, 6, -1, 9, 9]); a 4-row case applies it to each row (Q1, ASSUMED: AWS
    requires one partition).
  * The sync instructions change no value (re-facts "Sync state": their bodies are empty, CONFIRMED):
    a tile written by a Memset, then every sync instruction, then Saved, holds the Memset's value.

Run: .venv/bin/python conformance/programs/gpsimd/make_cases.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402
from birprog import tile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STORE = {"float32": np.float32, "int32": np.int32}
SIZE = {"float32": 4, "int32": 4}


class Prog(birprog.Prog):
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Memset": "Pool", "GetSequenceBounds": "Pool"}


# ---------------------------------------------------------------- AWS's golden, verbatim
def compute_sequence_bounds(sequence):
    n = len(sequence)

    min_bounds = np.zeros(n, dtype=sequence.dtype)
    max_bounds = np.zeros(n, dtype=sequence.dtype)

    min_bound_pad = n
    max_bound_pad = -1

    min_bounds[0] = 0 if sequence[0] != 0 else min_bound_pad
    for i in range(1, n):
        if sequence[i] == 0:
            min_bounds[i] = min_bound_pad
        elif sequence[i] == sequence[i - 1]:
            min_bounds[i] = min_bounds[i - 1]
        else:
            min_bounds[i] = i

    max_bounds[-1] = n if sequence[-1] != 0 else max_bound_pad
    for i in range(n - 2, -1, -1):
        if sequence[i] == 0:
            max_bounds[i] = max_bound_pad
        elif sequence[i] == sequence[i + 1]:
            max_bounds[i] = max_bounds[i + 1]
        else:
            max_bounds[i] = i + 1

    return np.vstack((min_bounds, max_bounds))


SOURCE = "aws-neuron/aws-neuron-sdk nki/test/test_nki_isa_sequence_bounds.py"


def bounds_case(ids, dt, note, choices=()):
    """ids (P x n, stored dtype dt) -> GetSequenceBounds into a P x 2n tile, Saved."""
    p, n = ids.shape
    want = np.stack([compute_sequence_bounds(row).reshape(2 * n) for row in ids]).astype(STORE[dt])
    g = Prog()
    t = g.tile_in("ids", dt, ids)
    g.sb("b", dt, p, 2 * n)
    g.inst("GetSequenceBounds", [tile(t, dt, p, n)], [tile("b", dt, p, 2 * n)])
    g.save("b", "bounds", dt, p, 2 * n, want)
    lines = [f"# {note}", f"# expected: {SOURCE} compute_sequence_bounds (AWS's golden), never birsim"]
    lines += [f"choice: {c}" for c in choices] + ["profile: refsim"]
    return g, lines


def main():
    birprog.clear_cases(HERE)
    cases = {}
    np.random.seed(0)
    m, n = 1, 32
    seg = np.sort(np.random.randint(low=0, high=m * n, size=n)).reshape((m, n), order="F").astype(np.float32)
    cases["aws_sequence_bounds_1x32_fp32"] = bounds_case(
        seg, "float32", "AWS's test: sorted random segment ids (np.random.seed(0)), fp32, one partition")
    doc = np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]], np.int32)
    cases["aws_sequence_bounds_doc_example_int32"] = bounds_case(
        doc, "int32", "AWS's documented example [0,1,1,2,2,2,0,3,3] as int32")
    rows = np.array([[1, 1, 0, 2], [0, 0, 0, 0], [5, 5, 5, 5], [3, 0, 3, 3]], np.float32)
    cases["sequence_bounds_per_row_4x4"] = bounds_case(
        rows, "float32", "four rows, each its own sequence (padding rows, one run, a run split by padding)",
        choices=["Q1"])
    # The sync-only instructions: a Memset value survives them all.
    g = Prog()
    p, f = 4, 8
    g.sb("t", "float32", p, f)
    g.inst("Memset", [], [tile("t", "float32", p, f)], mode="Const", constant=int(np.float32(2.5).view(np.uint32)))
    for op, eng in [("GroupResetSemaphores", "Pool"), ("Drain", "SP"), ("CoreBarrier", "Pool"),
                    ("TensorCompletion", "DVE"), ("Halt", "SP")]:
        ins = [tile("t", "float32", p, f)] if op == "CoreBarrier" else []
        g.inst(op, ins, [], engine=eng)
    g.save("t", "out", "float32", p, f, np.full((p, f), 2.5, np.float32))
    cases["sync_instructions_change_nothing"] = (g, [
        "# Memset 2.5, then GroupResetSemaphores, Drain, CoreBarrier (on the tile), TensorCompletion, Halt: the tile "
        "still holds 2.5 (re-facts: their bodies are empty)", "choice: Q2", "profile: refsim"])
    for name, (g, lines) in cases.items():
        birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
