#!/usr/bin/env python3
"""Embedding-bag forward + backward-style update on a 4096 x 128 bf16 table, as one BIR program:

  1. IndirectLoad: gather the rows of 1024 Zipf-distributed token ids (int32, 128 partitions x 8)
     from the DRAM table into an SB tile (128 partitions x 8 rows x 128);
  2. TensorScalar: multiply every gathered element by 0.3 in fp32 and round to bf16;
  3. IndirectSaveAccumulate: scatter-add the scaled rows back into a copy of the table (`out`),
     serially, rounding to bf16 after EVERY add (seed 000 §6.3). All contributions to one row are equal,
     so the slot order (entry-major, ind-decisions I6) does not matter here (asserted).

Writes program.json, the inputs table.npy / ids.npy and the expected outputs expected_gathered.npy /
expected_out.npy, computed here with NumPy 2.4.6 / ml_dtypes 0.6.0 (never by birsim). bf16 travels
as uint16 holding the raw bits.
Run: /work/main/.venv/bin/python examples/embedding_bag/make.py   (or .venv/bin/python from the repo root)
"""
import json
import os

import ml_dtypes as md
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
V, D = 4096, 128  # table rows x embedding width
P, E = 128, 8     # token ids: 128 partitions x 8 per partition = 1024
SCALE = np.float32(0.3)
rng = np.random.default_rng(11)

# ---------------------------------------------------------------- inputs
table = (rng.standard_normal((V, D)) * 0.5).astype(np.float32).astype(md.bfloat16)
perm = rng.permutation(V)  # hot ids spread over the table, not just 0, 1, 2, ...
ranks = []
while len(ranks) < P * E:
    r = int(rng.zipf(1.1))
    if r <= V:
        ranks.append(r - 1)
ids = perm[np.array(ranks)].astype(np.int32).reshape(P, E)
flat = ids.reshape(-1)  # token k = p * E + e

# ---------------------------------------------------------------- expected outputs
gathered = table[flat]  # (1024, 128) bf16: row k = table[ids[k]]
scaled = (gathered.astype(np.float32) * SCALE).astype(md.bfloat16)  # fp32 multiply, one RNE to bf16
out = table.copy()
for e in range(E):            # entry-major apply order (ind-decisions I6; here order-independent)
    for p in range(P):
        k = p * E + e
        r = flat[k]
        out[r] = (out[r].astype(np.float32) + scaled[k].astype(np.float32)).astype(md.bfloat16)

# the serial bf16 rounding is observable: one fp32 sum per row rounded once differs
once = table.astype(np.float32)
np.add.at(once, flat, scaled.astype(np.float32))
assert not np.array_equal(once.astype(md.bfloat16).view(np.uint16), out.view(np.uint16))
# Every contribution to row r is the same value (0.3 * table[r] rounded), so the apply order of the
# slots does not change the result: the example depends on the serial per-step rounding (seed 000 §6.3,
# CONFIRMED), not on the ASSUMED entry-major order (I6). Check that claim:
alt = table.copy()
for k in range(P * E):
    alt[flat[k]] = (alt[flat[k]].astype(np.float32) + scaled[k].astype(np.float32)).astype(md.bfloat16)
assert np.array_equal(alt.view(np.uint16), out.view(np.uint16))
counts = np.bincount(flat, minlength=V)


# ---------------------------------------------------------------- the BIR program
def loc_set(name, kind, dtype, shape, typ, dims):
    return {"Skind": "memory_location_set", "name": name, "kind": kind, "dtype": dtype, "tensor_shape": shape,
            "partition_dim": 0, "memorylocations": [{"Skind": "memory_location", "name": name, "type": typ,
                                                     "addr": 0, "dims": dims, "base": 0, "bank": 0,
                                                     "allocated": False}]}


def ap(mem, dtype, pairs, offset=0):
    return {"kind": "physical_ap", "memref": mem, "memsetref": mem, "dtype": dtype, "offset": offset, "ap": pairs}


allocs = [
    loc_set("table", "ExternalInput", "bfloat16", [V, D], "Input", [V, D * 2]),
    loc_set("ids", "ExternalInput", "int32", [P, E], "Input", [P, E * 4]),
    loc_set("ids_t", "Internal", "int32", [P, E], "SB", [P, E * 4]),
    loc_set("g_t", "Internal", "bfloat16", [P, E * D], "SB", [P, E * D * 2]),
    loc_set("s_t", "Internal", "bfloat16", [P, E * D], "SB", [P, E * D * 2]),
    loc_set("gathered", "ExternalOutput", "bfloat16", [P, E * D], "Output", [P, E * D * 2]),
    loc_set("out", "ExternalOutput", "bfloat16", [V, D], "Output", [V, D * 2]),
]
TABLE_AP = [[D, 1], [D, V]]            # final level [step D, num V]: entry r at element r * D
ROWS_AP = [[E * D, P], [D, E], [1, D]]  # 1024 rows of 128 in SB, row k = p * E + e
IDS_AP = [[E, P], [1, E]]
insts = [
    {"opcode": "Load", "name": "load_ids", "engine": "SP", "ins": [ap("ids", "int32", IDS_AP)],
     "outs": [ap("ids_t", "int32", IDS_AP)]},
    {"opcode": "IndirectLoad", "name": "gather", "engine": "DMA",
     "ins": [ap("table", "bfloat16", TABLE_AP), ap("ids_t", "int32", IDS_AP)], "outs": [ap("g_t", "bfloat16", ROWS_AP)]},
    {"opcode": "Save", "name": "save_gathered", "engine": "SP", "ins": [ap("g_t", "bfloat16", [[E * D, P], [1, E * D]])],
     "outs": [ap("gathered", "bfloat16", [[E * D, P], [1, E * D]])]},
    {"opcode": "TensorScalar", "name": "scale", "engine": "DVE", "ins": [ap("g_t", "bfloat16", [[E * D, P], [1, E * D]])],
     "outs": [ap("s_t", "bfloat16", [[E * D, P], [1, E * D]])], "op0": "mult", "const0": float(SCALE)},
    {"opcode": "Load", "name": "copy_table", "engine": "SP", "ins": [ap("table", "bfloat16", [[D, V], [1, D]])],
     "outs": [ap("out", "bfloat16", [[D, V], [1, D]])]},
    {"opcode": "IndirectSaveAccumulate", "name": "scatter_add", "engine": "DMA",
     "ins": [ap("s_t", "bfloat16", ROWS_AP), ap("ids_t", "int32", IDS_AP)], "outs": [ap("out", "bfloat16", TABLE_AP)],
     "num_indices": E, "entry_step_elements": D, "op": "add"},
]
program = {"arch": "gen3", "version": 2,
           "functions": [{"name": "embedding_bag", "allocations": allocs,
                          "blocks": [{"name": "Block1", "instructions": insts}]}]}
with open(os.path.join(HERE, "program.json"), "w") as f:
    json.dump(program, f, indent=1)
np.save(os.path.join(HERE, "table.npy"), table.view(np.uint16))
np.save(os.path.join(HERE, "ids.npy"), ids)
np.save(os.path.join(HERE, "expected_gathered.npy"), gathered.view(np.uint16).reshape(P, E * D))
np.save(os.path.join(HERE, "expected_out.npy"), out.view(np.uint16))
print(f"{P * E} ids, {np.count_nonzero(counts)} distinct, hottest id {counts.argmax()} x {counts.max()}; "
      f"{np.count_nonzero((once.astype(md.bfloat16).view(np.uint16) != out.view(np.uint16)))} elements differ from "
      f"one-sum rounding")
