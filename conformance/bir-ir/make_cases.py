#!/usr/bin/env python3
"""Writes the `bir-ir` conformance suite: real-shaped programs that must load, validate and
round-trip, and malformed programs, each with the located error it must produce.

Every expectation below is typed in by hand from docs/bir-json.md and the validation rules;
nothing is produced by running birsim. Standard library only. Run from anywhere:
    python3 conformance/bir-ir/make_cases.py
"""
import copy
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
VALID = os.path.join(HERE, "valid")
MALFORMED = os.path.join(HERE, "malformed")


def loc(name, typ, dims, addr=0, base=0, allocated=False):
    return {"Skind": "memory_location", "name": name, "type": typ, "addr": addr, "dims": dims,
            "bank": 0, "base": base, "allocated": allocated}


def alloc(name, kind, dtype, shape, *locs):
    return {"Skind": "memory_location_set", "name": name, "kind": kind, "dtype": dtype,
            "tensor_shape": shape, "partition_dim": 0, "addr_space": "Shared",
            "memorylocations": list(locs)}


def ap(mem, dtype, pairs, offset=0, **extra):
    d = {"kind": "physical_ap", "memref": mem, "memsetref": mem + "_set", "dtype": dtype,
         "offset": offset, "ap": pairs}
    d.update(extra)
    return d


def imm(dtype, value):
    return {"kind": "imm_value", "dtype": dtype, "value": value}


def inst(opcode, name, ins, outs, engine="Unassigned", **fields):
    d = {"opcode": opcode, "name": name, "engine": engine, "ins": ins, "outs": outs}
    d.update(fields)
    return d


def program(allocations, instructions, arch="gen3"):
    return {"arch": arch, "version": 2, "attributes": {"neuron_core_id": 0},
            "functions": [{"name": "sg0000", "attributes": [], "allocations": allocations,
                           "blocks": [{"name": "Block1", "instructions": instructions}]}]}


F32 = "float32"
TILE = [[64, 128], [1, 64]]          # a whole 128 x 64 fp32 tile in a [128, 256]-byte location
ROW = [[64, 128], [1, 1]]            # one element per partition


def base_allocations():
    return [
        alloc("x_set", "ExternalInput", F32, [128, 64], loc("x", "Input", [128, 256])),
        alloc("y_set", "ExternalOutput", F32, [128, 64], loc("y", "Output", [1, 32768])),
        alloc("t0_set", "Internal", F32, [128, 64], loc("t0", "SB", [128, 256], addr=0)),
        alloc("t1_set", "Internal", F32, [128, 64], loc("t1", "SB", [128, 256], addr=256)),
        alloc("t2_set", "Internal", F32, [128, 64], loc("t2", "SB", [128, 256], addr=512)),
        alloc("idx_set", "Internal", "int32", [128, 4], loc("idx", "SB", [128, 16], addr=768)),
        alloc("u16_set", "Internal", "uint16", [128, 4], loc("u16", "SB", [128, 8], addr=784)),
        alloc("pred_set", "Internal", "uint8", [128, 64], loc("pred", "SB", [128, 64], addr=800)),
        alloc("bf_set", "Internal", "bfloat16", [128, 64], loc("bf", "SB", [128, 128], addr=1024)),
        alloc("ps_set", "Internal", F32, [128, 512], loc("ps", "PSUM", [128, 2048])),
        alloc("tab_set", "ExternalInput", F32, [1000, 64], loc("tab", "DRAM", [1, 256000])),
    ]


def all_opcodes():
    t = lambda m: ap(m, F32, TILE)
    i4 = ap("idx", "int32", [[4, 128], [1, 4]])
    four_d = [[64, 128], [32, 2], [8, 4], [1, 8]]
    desc = lambda opcode, name, ins, **f: inst(opcode, name, ins, [t("t2")], engine="DMA", **f)
    body = [
        inst("Load", "load_x", [t("x")], [t("t0")], engine="SP", queue="q0", dge_type="None",
             duplicate=False, can_read_uninit=False),
        inst("TensorCopy", "copy", [t("t0")], [t("t1")], engine="DVE"),
        inst("GenericCopy", "gcopy", [t("t0")], [t("t1")]),
        inst("AbstractCopy", "acopy", [t("t0")], [t("t1")], can_read_uninit=True),
        inst("TensorScalar", "ts", [t("t0")], [t("t1")], engine="DVE", op0="mult", const0=2.5,
             reverse0=False, op1="add", const1="-inf", reverse1=True),
        inst("TensorScalarPtr", "tsp", [t("t0"), ap("t2", F32, ROW), imm(F32, 1.5)], [t("t1")],
             op0="subtract", reverse0=True, op1="max", reverse1=False, acc="Idle"),
        inst("TensorScalarCache", "tsc_scan", [t("t0")], [t("t1")], op0="add", reverse0=False,
             op1="bypass", reverse1=False, mode="TensorScan", acc="ZeroAccumulate"),
        inst("TensorScalarCache", "tsc_load", [t("t0"), imm(F32, "nan")], [ap("t1", F32, ROW)],
             op0="mult", op1="add", mode="Reduce", accumulator_cmd="LoadAccumulate"),
        inst("TensorTensor", "tt", [t("t0"), t("t1")], [t("t2")], op="elemwise_mul",
             acc="AddAccumulate"),
        inst("TensorReduce", "tr", [t("t0")], [ap("t1", F32, ROW)], op="average", axis="X",
             negate=True, apply_transpose=False),
        inst("Pool", "pool", [ap("t0", F32, [[64, 128], [16, 4], [1, 16]])],
             [ap("t1", F32, [[64, 128], [1, 4]])], engine="Pool", func="Avg"),
        inst("Iota", "iota", [], [ap("idx", "int32", [[4, 128], [1, 4]])], engine="Pool", base=3,
             pattern=[[1, 4]], channel_multiplier=4),
        inst("TensorScalarAffineSelect", "asel", [t("t0")], [t("t1")], engine="Pool",
             pattern=[[-1, 64]], channel_multiplier=1, compare_op="is_ge", fill_value=-3.4028234663852886e38),
        inst("Memset", "ms", [], [t("t2")], mode="Const", constant=1065353216),
        inst("DMACopy", "dma_copy", [t("t0")], [t("t1")], engine="DMA", mode="Copy", oob_is_err=True),
        inst("DMACopy", "dma_dyn", [ap("t0", F32, ROW)],
             [ap("t1", F32, ROW, indirect_dim="W", indirect_dim_max_index=128,
                 vector_offset=ap("u16", "uint16", [[4, 128], [1, 1]]))],
             engine="DMA", mode="Copy", dge_type="HWDGE", oob_is_err=False, cce_op="add"),
        inst("DMACopy", "dma_cce", [t("t0"), t("t1")], [t("t2")], engine="DMA", mode="CCE",
             cce_op="add", constants=[0.5, 2.0]),
        # WZXY swaps Y and X: [128, 2, 4, 8] -> [128, 2, 8, 4] (dst.num[k] = src.num[perm[k]]).
        inst("DMACopy", "dma_transpose", [ap("t0", F32, four_d)],
             [ap("t1", F32, [[64, 128], [32, 2], [4, 8], [1, 4]])],
             engine="Pool", mode="Transpose", transpose_op="WZXY"),
        inst("DMACopy", "dma_replicate", [ap("t0", F32, [[64, 32], [1, 64]])], [t("t1")],
             engine="DMA", mode="Replicate"),
        inst("StreamShuffle", "shuffle", [t("t0")], [t("t1")],
             mask=[31 - k for k in range(31)] + [255]),
        inst("StreamTranspose", "stranspose", [ap("t0", F32, [[64, 32], [1, 32]])],
             [ap("t1", F32, [[64, 32], [1, 32]])]),
        inst("Select", "select", [ap("pred", "uint8", [[64, 128], [1, 64]]), t("t0"), imm(F32, 0.0)],
             [t("t1")]),
        inst("CopyPredicated", "cpred", [t("t0"), ap("pred", "uint8", [[64, 128], [1, 64]])],
             [t("t1")], reverse_pred=True),
        # IndirectCopy: 1 uint16 index per partition, 16 per core; E = the dst's innermost num 4
        # (num_elem_per_idx) -> 16 x 4 = 64 per partition.
        inst("IndirectCopy", "icopy", [ap("t0", F32, [[64, 128], [4, 16], [1, 4]]), ap("u16", "uint16", [[4, 128], [1, 1]])],
             [ap("t1", F32, [[64, 128], [4, 16], [1, 4]])], engine="Pool", num_valid_indices=12),
        # The table's final level [64, 1000] enumerates 1000 entries of 64 (the dst's final num); 4 indices, 4 rows.
        inst("IndirectLoad", "iload", [ap("tab", F32, [[1, 1], [64, 1000]]), ap("idx", "int32", [[4, 1], [1, 4]])],
             [ap("t1", F32, [[64, 4], [1, 64]])], engine="DMA"),
        inst("IndirectSave", "isave", [ap("t1", F32, [[64, 4], [1, 64]]), ap("idx", "int32", [[4, 1], [1, 4]])],
             [ap("tab", F32, [[1, 1], [64, 1000]])], engine="DMA", wrap={"n": 500, "hi": 500}),
        inst("IndirectSaveAccumulate", "isacc", [ap("t1", F32, [[64, 4], [1, 64]]), ap("idx", "int32", [[4, 1], [1, 4]])],
             [ap("tab", F32, [[1, 1], [64, 1000]])], engine="DMA", num_indices=4,
             entry_step_elements=64, op="add", wrap={"n": 1, "hi": 0}),
        # W and X both indirect: entries of 1 element, 4 of them.
        inst("GenericIndirectLoad", "giload",
             [ap("tab", F32, [[64, 1000], [1, 64]]), ap("idx", "int32", [[4, 1], [1, 4]]), ap("idx", "int32", [[4, 1], [1, 4]])],
             [ap("t1", F32, [[64, 4], [1, 1]])], engine="DMA", indirect_dims=["W", "Z"]),
        inst("GenericIndirectSave", "gisave", [ap("t1", F32, [[64, 4], [1, 64]]), ap("idx", "int32", [[4, 1], [1, 4]])],
             [ap("tab", F32, [[64, 1000], [1, 64]])], engine="DMA", indirect_dims=["W"], op="add",
             wrap={"n": 7, "hi": 7}),
        inst("Gather", "gather", [t("t0"), i4], [ap("t1", F32, [[64, 128], [1, 4]])], engine="Pool"),
        inst("DMABlock", "blk0", [], [], engine="DMA", descriptors=[
            desc("DMADescriptorCopy", "d0", [t("t0")], num_tiling_dimensions=2),
            desc("DMADescriptorCCE", "d1", [t("t0"), t("t1")], op="max", constants=[1.0, "inf"]),
            desc("DMADescriptorTranspose", "d2", [t("t0")], transpose_op="WZXY"),
            desc("DMADescriptorReplicate", "d3", [t("t0")]),
        ]),
        inst("DMATrigger", "trig", [], [], engine="SP", dma_blocks=["blk0"]),
        inst("SwitchQueueInstance", "switch_q", [], [], engine="SP", queue="q0", no_rearm=True),
        inst("ResetQueueInstance", "reset_q", [], [], engine="SP"),
        inst("Matmult", "mm", [ap("t0", F32, [[64, 128], [1, 64]]), ap("t1", F32, [[64, 128], [1, 64]])],
             [ap("ps", F32, [[512, 64], [1, 64]])], engine="PE", start_tensor_calc=True,
             stop_tensor_calc=True, is_transpose=False, tile_size=[128, 128], tile_position=[0, 0],
             perf_mode="None"),
        # The neuronx-cc 2.24 record (engines.md §1.6): 13 always-present keys, no start_tensor_calc.
        inst("Matmult", "mm224", [ap("t0", F32, [[64, 128], [1, 64]]), ap("t1", F32, [[64, 128], [1, 64]])],
             [ap("ps", F32, [[512, 64], [1, 64]])], engine="PE", accumulation_flag=5, psum_zero_region=1,
             replication_resolution=0, replication_shift_amnt=0, replication_num_rows=0, is_transpose=False,
             is_fmap_onezero=False, is_weight_onezero=False, tile_size=[128, 128], tile_position=[0, 0],
             ifmap_quant_offset=0, weights_quant_offset=0, perf_mode="None"),
        inst("Activation", "act", [t("t0"), ap("t2", F32, ROW)], [t("t1")], engine="Activation",
             func="Gelu_apprx_tanh", scale=0.5, alpha=0.0),
        inst("Activation", "act_new", [t("t0")], [t("t1")], engine="Activation", func="SomeNewFunc"),
        inst("SetRandState", "seed", [imm("uint32", 42)], [], engine="Pool"),
        inst("NoOp", "nop", [], []),
        inst("EventSemaphore", "sem", [], [], sync_info={"wait": [1], "update": {"mode": 5}}),
        inst("RegisterMove", "rmov", [imm("int32", -7)], [reg("r0")]),
        inst("RegisterAlu", "ralu", [reg("r0"), imm("int32", 3)], [reg("r1")], op="add"),
        inst("TensorLoad", "tload", [ap("idx", "int32", [[4, 1], [1, 1]])], [reg("r2")]),
        inst("TensorSave", "tsave", [reg("r1")], [ap("idx", "int32", [[4, 1], [1, 1]], offset=1)]),
        inst("TensorCopy", "rap_copy", [{"kind": "register_ap", "memref": "t0", "memsetref": "t0_set", "dtype": F32,
                                         "ap": [[64, 2], [1, 8]], "regref": "r0", "reg_ap_offset": "r2"}],
             [ap("t1", F32, [[64, 2], [1, 8]])]),
        inst("BranchHint", "hint", [], []),
        inst("Break", "brk", [], []),
        inst("Save", "save_y", [t("t1")], [ap("y", F32, TILE)], engine="SP"),
    ]
    p = program(base_allocations(), body)
    # The control-flow opcodes (docs/bir-json.md "Registers and control flow"): a DoWhile and a
    # DynamicForLoop node, branches between the function's blocks, Return and Exit.
    p["functions"][0]["blocks"] += [
        {"opcode": "DoWhile", "name": "dw", "engine": "Unassigned", "ins": [reg("r1")], "blocks": [
            {"name": "dw_body", "instructions": [inst("RegisterAlu", "dec", [reg("r1"), imm("int32", 1)], [reg("r1")],
                                                      op="subtract")]}]},
        {"opcode": "DynamicForLoop", "name": "dfl", "engine": "Unassigned",
         "LoopAxis": {"name": "j", "lb": 0, "stride": {"const": 1, "terms": []}}, "ub_const": 1, "ub_coef": 2,
         "ins": [reg("r2", "uint32")], "outs": [reg("r3")], "blocks": []},
        {"name": "Tail", "instructions": [
            inst("CompareAndBranch", "cab", [reg("r0"), imm("int32", 0)], [], comp_op="IS_LTIMM", on_true="Done"),
            inst("UnconditionalBranch", "jmp", [], [], target="Done")]},
        {"name": "Done", "instructions": [inst("Return", "ret", [], []), inst("Exit", "exit", [], [])]},
    ]
    return p


def reg(name, dtype="int32"):
    return {"kind": "register_access", "dtype": dtype, "regref": name}


def loop_program():
    t = lambda m: ap(m, F32, TILE)
    p = program(base_allocations(), [inst("Load", "load_x", [t("x")], [t("t0")])])
    p["functions"][0]["blocks"].append(
        {"opcode": "Loop", "name": "loop0", "LoopAxis": {"name": "i", "lb": 0, "ub": 4, "stride": 1},
         "blocks": [{"name": "body", "instructions": [
             inst("TensorScalar", "inc", [t("t0")], [t("t0")], op0="add", const0=1.0, op1="bypass",
                  const1=0.0, reverse0=False, reverse1=False)]},
             {"opcode": "Loop", "name": "inner", "LoopAxis": {"name": "j", "lb": 8, "ub": 0, "stride": -3},
              "blocks": []}]})
    p["functions"][0]["blocks"].append(
        {"name": "Exit", "instructions": [inst("Save", "save_y", [t("t0")], [ap("y", F32, TILE)])]})
    return p


def post_allocation():
    """Allocated SBUF locations that overlap, numeric memory types, object pairs, a partition slice."""
    allocs = [
        alloc("in_set", "Input", "bfloat16", [64, 128], loc("in", 2, [64, 256])),
        alloc("a_set", "Internal", "bfloat16", [64, 128], loc("a", 16, [64, 256], base=64, addr=4096, allocated=True)),
        alloc("b_set", "Internal", "bfloat16", [64, 128], loc("b", "SB", [64, 256], base=64, addr=4096, allocated=True)),
        alloc("out_set", "Output", "bfloat16", [64, 128], loc("out", 4, [1, 16384])),
    ]
    pr = [{"step": 128, "num": 64}, {"step": 1, "num": 128}]
    body = [
        inst("Load", "i0", [ap("in", "bfloat16", pr)], [ap("a", "bfloat16", pr)], engine="SP",
             sema_group=3, dependencies=["x"], debug={"line": 7}),
        inst("TensorScalar", "i1", [ap("a", "bfloat16", pr)], [ap("b", "bfloat16", pr)], op0="pow",
             const0="inf", reverse0=False, op1="is_lt", const1=1e-38, reverse1=False),
        inst("Save", "i2", [ap("b", "bfloat16", pr)], [ap("out", "bfloat16", pr)], engine="SP"),
    ]
    return program(allocs, body, arch="gen4")


def gen2_fp8():
    """Every dtype spelling on one allocation each, and broadcast / negative-step / unit-dim APs."""
    dts = ["uint8", "int8", "float4_e2m1fn_x4", "float8e3", "float8e4", "float8_e4m3fn",
           "float8_e8m0fnu", "float8e5", "float8_e4m3fn_x4", "float8_e5m2_x4", "uint16", "int16",
           "bfloat16", "float16", "uint32", "int32", "float32", "float32r", "uint64", "int64",
           "float8_e3m4", "float8_e4m3", "float8_e5m2", "bool"]
    allocs = [alloc("src_set", "Input", F32, [32, 8], loc("src", "DRAM", [32, 32]))]
    body = []
    for k, d in enumerate(dts):
        allocs.append(alloc(f"d{k}_set", "Internal", d, [32, 8], loc(f"d{k}", "SB", [32, 64], addr=64 * k)))
        # 8 values per partition: 8 elements, or 2 containers of a 4-lane (_x4) dtype.
        per = 2 if d.endswith("_x4") else 8
        body.append(inst("TensorCopy", f"c{k}", [ap("src", F32, [[8, 32], [1, 8]])],
                         [ap(f"d{k}", d, [[0, 32], [1, 1], [1, per]])]))
    body.append(inst("TensorCopy", "neg", [ap("src", F32, [[8, 32], [-1, 8]], offset=7)],
                     [ap("d16", F32, [[16, 32], [1, 1], [1, 8]])]))
    return program(allocs, body, arch="gen2")


def letters_and_indices():
    """The dim-letter rule (docs/bir-json.md "Dim letters"), the index dtypes of the Load/Save
    family, and TensorScalarCache instances chained on the running cache."""
    t = lambda m: ap(m, F32, TILE)
    allocs = base_allocations() + [
        alloc("i64_set", "Internal", "int64", [128, 2], loc("i64", "SB", [128, 16], addr=1152)),
    ]
    three_d = [[64, 128], [16, 4], [1, 16]]
    four_d = [[64, 128], [32, 2], [8, 4], [1, 8]]
    cache = lambda name, acc, mode="Reduce": inst(
        "TensorScalarCache", name, [t("t0")], [ap("t1", F32, ROW)], engine="DVE", op0="add",
        reverse0=False, op1="bypass", reverse1=False, mode=mode, acc=acc)
    body = [
        # XY on [P, F] folds the F of each partition (Y is padded): 128 outputs.
        inst("TensorReduce", "tr_xy_2", [t("t0")], [ap("t1", F32, ROW)], op="add", axis="XY"),
        inst("TensorReduce", "tr_xy_3", [ap("t0", F32, three_d)], [ap("t1", F32, ROW)], op="max", axis="XY"),
        inst("TensorReduce", "tr_x_3", [ap("t0", F32, three_d)], [ap("t1", F32, [[64, 128], [1, 4]])],
             op="add", axis="X"),
        inst("TensorReduce", "tr_xyz_4", [ap("t0", F32, four_d)], [ap("t1", F32, ROW)], op="add", axis="XYZ"),
        # An indirect dim is the AP level index (re-facts §3): Z on a 2-level AP is its level 1.
        inst("TensorCopy", "dyn_x", [ap("t0", F32, TILE, indirect_dim="Z", indirect_dim_max_index=64,
                                        scalar_offset="r0")], [t("t1")]),
        inst("GenericIndirectLoad", "gil_x_i64",
             [ap("tab", F32, [[64, 1], [1, 64]]), ap("i64", "int64", [[2, 128], [1, 1]])],
             [ap("t1", F32, [[64, 128], [1, 1]])], engine="DMA", indirect_dims=["Z"]),
        inst("GenericIndirectSave", "gis_w_u64",
             [ap("t1", F32, [[64, 4], [1, 64]]), ap("i64", "uint64", [[2, 4], [1, 1]])],
             [ap("tab", F32, [[64, 1], [1, 64]])], engine="DMA", indirect_dims=["W"], op="add"),
        # reset_reduce then reduce (NKI): ZeroAccumulate, then Accumulate on the running cache.
        cache("tsc_reset", "ZeroAccumulate"),
        cache("tsc_accumulate", "Accumulate"),
        cache("tsc_idle", "Idle", mode="Cumulative"),
        cache("tsc_zero", "Zero", mode="TensorScan"),
    ]
    return program(allocs, body)


# ---------- choice lines: cases whose expectation exists only because of an ASSUMED entry ----------
# docs/fidelity.md J1-J33. A case testing a CONFIRMED or DOCUMENTED fact gets none. The bir-ir suite
# only loads, validates and round-trips, so only what the loader and validator decide counts here
# (e.g. reduce axes are not checked against the AP, so J29 marks no reduce instruction).
CHOICES = {
    # valid programs
    "dtypes": ["J15"],                      # the `bool` allocation loads as uint8
    "all_opcodes": [
        "J17",                              # act_new: an unknown activation name is kept verbatim
        "J19",                              # Select/CopyPredicated/indirect ops: which ins is the index/predicate
        "J20",                              # dma_dyn: the indirect_dim / vector_offset AP keys
        "J21",                              # blk0 `descriptors`, trig `dma_blocks`
        "J25",                              # dma_dyn: its dynamic range (W up to 128) is not checked statically
        "J29", "J31",                       # giload indirect_dims X on a 2-level table AP is its level 1
        "I3", "I4", "I9", "I10", "I11",     # wrap objects, table/row shapes, local-gather index dtypes
    ],
    "letters_and_indices": [
        "J19",                              # gil_x_i64 / gis_w_u64: the index is ins[1]
        "J20",                              # dyn_x: indirect_dim + scalar_offset keys
        "J25",                              # dyn_x: its dynamic range is not checked statically
        "J31",                              # dyn_x, gil_x_i64: Z on a 2-level AP is its level 1
        "J33",                              # tsc_idle / tsc_zero: acc Idle and Zero are accepted
    ],
    "post_allocation": ["J23"],             # const1 1e-38 is read rounded to the nearest fp32
    # malformed programs
    "allocation_no_name": ["J27"],          # every problem reported (the second is the dangling ref)
    "duplicate_allocation": ["J27"],
    "duplicate_location": ["J27"],
    "location_bad_type": ["J27"],           # a location that failed to load: its refs add no error
    "location_type_not_flag": ["J27"],
    "location_dims_three": ["J27"],
    "location_dims_negative": ["J27"],
    "sb_base_16": ["J27"],
    "memory_cap": ["J26"],
    "dims_overflow": ["J26", "J27"],
    "reverse0_string": ["J23"],             # flags are true/false or 0/1 only
    "ap_step_string": ["J23"],              # integer fields need JSON integers
    "ap_dram_past_end": ["J24"],            # a flat location holds exactly dims[0]*dims[1] bytes from element 0
    "indirect_load_float_index": ["J19"],   # the index operand is ins[1]
    "indirect_load_out_step": ["J19"],      # ins [table, int32 index] is accepted in that order
    "scatter_acc_max": ["J19"],
    "generic_indirect_dims_mismatch": ["J19"],  # index operands = ins[1..]
    "generic_indirect_load_uint8_index": ["J19"],
    "generic_indirect_save_float_index": ["J19"],
    "indirect_load_rows_mismatch": ["I4"],
    "indirect_save_rows_mismatch": ["I4"],
    "scatter_acc_insufficient_indices": ["I5"],
    "indirect_wrap_n_zero": ["I3"],
    "indirect_wrap_not_object": ["I3"],
    "generic_indirect_dense_size": ["I7"],
    "indirect_copy_uint8_index": ["I9"],
    "indirect_copy_dst_size": ["I10"],
    "gather_int64_index": ["I11"],
    "gather_partition_mismatch": ["I11"],
    "gather_dst_size": ["I11"],
    "cache_int_init": ["J19"],              # the initial value is ins[1]
    "cache_accumulate_with_init": ["J19"],  # [data, init] is accepted in that order; only acc is wrong
    "cache_add_accumulate": ["J33"],        # AddAccumulate refused
    "loop_too_long": ["J26"],
    "trigger_unknown_block": ["J18", "J21"],     # no `engine` (default Unassigned); `dma_blocks`
    "dma_block_bad_descriptor": ["J18", "J21"],  # no `engine`; `descriptors`
    "dynamic_without_source": ["J20"],
    "dynamic_both_sources": ["J20"],
    "dynamic_padded_dim": ["J20", "J25", "J31"],  # max_index 4 on a size-1 dim not checked
    "generic_indirect_padded_dim": ["J31"],
    "vector_offset_bad_dtype": ["J20", "J25", "J32", "G56"],    # uint16 rule on a non-DMA instruction
    "tensor_copy_dynamic_src_without_offset": ["D20"],
    "tensor_copy_dynamic_dst_offset_on_w": ["D20"],
    "tensor_reduce_indirect_axis_xy": ["D19"],
    "vector_offset_in_replicate": ["G56"],
    "three_errors_at_once": ["J27"],
    "hw_dge_index_count": ["G50"],          # one index per dense row
    "hw_dge_row_length": ["G50"],           # equal row lengths
    "hw_dge_gather_index_count": ["G6", "G50"],
    "reset_queue_no_rearm": ["G5"],
    "switch_queue_empty_name": ["G5"],
}


def choice_lines(name):
    return "".join(f"choice: {c}\n" for c in CHOICES.get(name, []))


def write_valid():
    cases = {
        "all_opcodes": (all_opcodes(), "every modelled opcode, DMA blocks, dynamic offsets, raw opcodes"),
        "loops": (loop_program(), "nested Loop entries, a zero-trip loop with negative stride"),
        "post_allocation": (post_allocation(), "shared allocated SBUF, numeric memory types, {step,num} pairs, nan/inf"),
        "dtypes": (gen2_fp8(), "every dtype spelling, broadcast, negative step, unit dims"),
        "letters_and_indices": (letters_and_indices(),
                                "dim letters on 2/3/4-level APs, int64/uint64 indices, chained TensorScalarCache"),
    }
    for name, (prog, what) in cases.items():
        with open(os.path.join(VALID, name + ".json"), "w") as f:
            json.dump(prog, f, indent=1)
        with open(os.path.join(VALID, name + ".expect"), "w") as f:
            f.write(f"# {what}\nexpect: ok\n" + choice_lines(name))


# ---------- malformed cases: (name, mutate(program) -> program or text, [(kind, location, message)]) ----------

def sub_one():
    with open(os.path.join(HERE, "..", "..", "crates", "bir-ir", "tests", "data", "sub_one.json")) as f:
        return json.load(f)


def fn(p):
    return p["functions"][0]


def insts(p):
    return fn(p)["blocks"][0]["instructions"]


def allocs_of(p):
    return fn(p)["allocations"]


def L(p, k):
    return allocs_of(p)[k]["memorylocations"][0]


def mut(f):
    def go(p):
        f(p)
        return p
    return go


I1 = "instruction #1 'i1' (TensorScalar)"
ROWS128 = [[512, 128], [1, 1]]  # one element per partition of a_tile: 128 values


def a0(p):
    """The sub_one instruction's data operand (a_tile, 128 x 512 fp32)."""
    return insts(p)[1]["ins"][0]


def idx32(p):
    """128 int32 indices read from a_tile (one per partition)."""
    return dict(a0(p), dtype="int32", ap=ROWS128)


def table(p):
    """a_tile as a table of 128 entries of 512 elements: final level [512, 128]."""
    return dict(a0(p), ap=[[1, 1], [512, 128]])
I0 = "instruction #0 'i0' (Load)"


def set_ap(p, k, key, value, which="ins"):
    insts(p)[k][which][0][key] = value


def dge_copy(src_pairs=None, idx_pairs=None, gather=False):
    """A DMACopy scatter with a uint16 vector offset on outs[0] (the HW-DGE bridge), or with
    `gather` the same offset on ins[0]."""
    src = {"kind": "physical_ap", "memref": "a_tile", "dtype": "float32", "offset": 0,
           "ap": src_pairs or [[512, 128], [1, 512]]}
    idx = {"kind": "physical_ap", "memref": "a_tile", "dtype": "uint16", "offset": 0,
           "ap": idx_pairs or [[512, 128], [1, 1]]}
    dst = {"kind": "physical_ap", "memref": "a_tile", "dtype": "float32", "offset": 0,
           "ap": [[512, 128], [1, 512]], "indirect_dim": "W", "indirect_dim_max_index": 128,
           "vector_offset": idx}
    if gather:
        src, dst = dict(dst, ap=src["ap"]), dict(src, ap=dst["ap"])
        src["ap"], dst["ap"] = [[512, 128], [1, 512]], src_pairs or [[512, 128], [1, 512]]
    return {"opcode": "DMACopy", "name": "dge", "engine": "DMA", "ins": [src], "outs": [dst],
            "mode": "Copy"}


MALFORMED_CASES = [
    ("syntax_truncated", lambda p: json.dumps(p)[:200], [("syntax", "line 1", "")]),
    ("syntax_trailing_comma", lambda p: json.dumps(p)[:-1] + ",}", [("syntax", "line 1", "")]),
    ("top_is_array", lambda p: [p], [("wrong-type", "", "expected an object")]),
    ("no_functions", mut(lambda p: p.pop("functions")), [("missing-field", "functions", "required field `functions`")]),
    ("functions_not_array", mut(lambda p: p.update(functions={})), [("wrong-type", "functions", "expected an array")]),
    ("functions_empty", mut(lambda p: p.update(functions=[])), [("structure", "functions", "at least one function")]),
    ("unknown_arch", mut(lambda p: p.update(arch="gen9")), [("unknown-enum", "arch", "unknown arch \"gen9\"")]),
    ("no_allocations", mut(lambda p: fn(p).pop("allocations")), [("missing-field", "function 'sg0000' › allocations", "")]),
    ("allocation_no_name", mut(lambda p: allocs_of(p)[0].pop("name")),
     [("missing-field", "function 'sg0000' › allocations[0].name", ""),
      ("unresolved-ref", I0 + " › ins[0].memsetref", "memsetref 'a_set' names no allocation")]),
    ("allocation_bad_dtype", mut(lambda p: allocs_of(p)[1].update(dtype="float64")),
     [("unknown-enum", "allocation 'a_tile_set' › dtype", "unknown dtype \"float64\"")]),
    ("duplicate_allocation", mut(lambda p: allocs_of(p)[1].update(name="a_set")),
     [("duplicate-name", "function 'sg0000' › allocations[1].name", "'a_set' is used twice"),
      ("unresolved-ref", I0 + " › outs[0].memsetref", "memsetref 'a_tile_set'"),
      ("unresolved-ref", I1 + " › ins[0].memsetref", "memsetref 'a_tile_set'")]),
    ("duplicate_location", mut(lambda p: L(p, 2).update(name="a_tile")),
     [("duplicate-name", "allocation 'b_tile_set' › memorylocations[0].name", "'a_tile' is used twice"),
      ("unresolved-ref", I1 + " › outs[0].memref", "memref 'b_tile'"),
      ("unresolved-ref", "instruction #2 'i2' (Save) › ins[0].memref", "memref 'b_tile'")]),
    ("location_bad_type", mut(lambda p: L(p, 1).update(type="L2")),
     [("unknown-enum", "memorylocations[0].type", "unknown memory type \"L2\"")]),
    ("location_type_not_flag", mut(lambda p: L(p, 1).update(type=3)),
     [("unknown-enum", "memorylocations[0].type", "unknown memory type 3")]),
    ("location_dims_three", mut(lambda p: L(p, 1).update(dims=[128, 2048, 1])),
     [("wrong-type", "memorylocations[0].dims", "found 3 numbers")]),
    ("location_dims_negative", mut(lambda p: L(p, 1).update(dims=[-128, 2048])),
     [("out-of-range", "memorylocations[0].dims[0]", "non-negative")]),
    ("sb_base_16", mut(lambda p: L(p, 1).update(base=16, dims=[64, 2048])),
     [("placement", "memory location 'a_tile' › base", "0, 32, 64 or 96"),
      ("out-of-bounds", "allocation 'a_tile_set' › tensor_shape", "needs 262144 bytes, but memory location 'a_tile' holds 131072"),
      ("out-of-bounds", I0 + " › outs[0].ap", "leave memory location 'a_tile'"),
      ("out-of-bounds", I1 + " › ins[0].ap", "leave memory location 'a_tile'")]),
    ("tensor_shape_overflow", mut(lambda p: allocs_of(p)[0].update(tensor_shape=[4294967296, 4294967296])),
     [("overflow", "allocation 'a_set' › tensor_shape", "multiplies past 64 bits")]),
    ("tensor_shape_past_location", mut(lambda p: allocs_of(p)[0].update(tensor_shape=[128, 513])),
     [("out-of-bounds", "allocation 'a_set' › tensor_shape", "needs 262656 bytes, but memory location 'a' holds 262144")]),
    ("sb_too_many_partitions", mut(lambda p: L(p, 1).update(dims=[129, 2048])),
     [("placement", "memory location 'a_tile' › dims[0]", "leave the 128 partitions")]),
    ("sb_beyond_gen3_partition", mut(lambda p: L(p, 2).update(addr=224 * 1024 - 1024)),
     [("placement", "memory location 'b_tile' › dims[1]", "229376 bytes per partition (gen3)")]),
    ("psum_beyond_16k", mut(lambda p: L(p, 1).update(type="PSUM", addr=15000)),
     [("placement", "memory location 'a_tile' › dims[1]", "16384 bytes per partition")]),
    ("memory_cap", mut(lambda p: L(p, 0).update(dims=[1, 1 << 40])),
     [("memory-cap", "function 'sg0000' › allocations", "above the cap")]),
    ("dims_overflow", mut(lambda p: L(p, 0).update(dims=[1 << 40, 1 << 40])),
     [("overflow", "memory location 'a' › dims", "overflows"),
      ("memory-cap", "allocations", "above the cap")]),
    ("unknown_opcode", mut(lambda p: insts(p)[1].update(opcode="TensorFrobnicate")),
     [("unknown-opcode", "instruction #1 'i1' (TensorFrobnicate) › opcode", "unknown opcode \"TensorFrobnicate\"")]),
    ("opcode_number", mut(lambda p: insts(p)[1].update(opcode=28)),
     [("wrong-type", "instruction #1 'i1' (?) › opcode", "expected an opcode name")]),
    ("memref_unresolved", mut(lambda p: set_ap(p, 1, "memref", "nope")),
     [("unresolved-ref", I1 + " › ins[0].memref", "memref 'nope' names no memory location")]),
    ("memsetref_unresolved", mut(lambda p: set_ap(p, 1, "memsetref", "nope_set")),
     [("unresolved-ref", I1 + " › ins[0].memsetref", "memsetref 'nope_set'")]),
    ("memsetref_mismatch", mut(lambda p: set_ap(p, 1, "memsetref", "b_set")),
     [("ref-mismatch", I1 + " › ins[0].memsetref", "does not belong to allocation 'b_set'")]),
    ("ap_no_dtype", mut(lambda p: insts(p)[1]["ins"][0].pop("dtype")),
     [("missing-field", I1 + " › ins[0].dtype", "")]),
    ("ap_bad_dtype", mut(lambda p: set_ap(p, 1, "dtype", "fp32")),
     [("unknown-enum", I1 + " › ins[0].dtype", "unknown dtype \"fp32\"")]),
    ("ap_pair_three", mut(lambda p: set_ap(p, 1, "ap", [[512, 128, 1], [1, 512]])),
     [("wrong-type", I1 + " › ins[0].ap[0]", "array of 3 elements")]),
    ("ap_step_string", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], ["1", 512]])),
     [("wrong-type", I1 + " › ins[0].ap[1][0]", "expected an integer")]),
    ("ap_pair_object_no_num", mut(lambda p: set_ap(p, 1, "ap", [{"step": 512, "num": 128}, {"step": 1}])),
     [("missing-field", I1 + " › ins[0].ap[1].num", "")]),
    ("ap_num_zero", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], [1, 0]])),
     [("ap-shape", I1 + " › ins[0].ap[1][1]", "num must be at least 1")]),
    ("ap_negative_partition_step", mut(lambda p: set_ap(p, 1, "ap", [[-512, 128], [1, 512]])),
     [("ap-shape", I1 + " › ins[0].ap[0][0]", "must not be negative")]),
    ("ap_rank_zero", mut(lambda p: set_ap(p, 1, "ap", [])),
     [("ap-rank", I1 + " › ins[0].ap", "found 0")]),
    ("ap_rank_six", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], [1, 2], [1, 2], [1, 2], [1, 2], [1, 2]])),
     [("ap-rank", I1 + " › ins[0].ap", "found 6")]),
    ("ap_num_huge", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], [1 << 40, 1 << 40]])),
     [("overflow", I1 + " › ins[0].ap[1]", "overflows 64 bits"),
      ("ap-shape", I1 + " › ins[0].ap", "holds 140737488355328 values but outs[0] holds 65536")]),
    ("ap_num_2_62", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], [1, 1 << 62]])),
     [("out-of-bounds", I1 + " › ins[0].ap", "leave memory location 'a_tile'")]),
    ("ap_offset_past_end", mut(lambda p: set_ap(p, 1, "offset", 1)),
     [("out-of-bounds", I1 + " › ins[0].ap", "elements 1..=65536")]),
    ("ap_negative_step_below_zero", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], [-1, 512]])),
     [("out-of-bounds", I1 + " › ins[0].ap", "elements -511..=65024")]),
    ("static_shape_mismatch", mut(lambda p: set_ap(p, 1, "ap", [[512, 128], [1, 256]], which="outs")),
     [("ap-shape", I1 + " › ins[0].ap", "holds 65536 values but outs[0] holds 32768")]),
    ("ap_dram_past_end", mut(lambda p: set_ap(p, 2, "ap", [[512, 128], [1, 513]], which="outs")),
     [("out-of-bounds", "instruction #2 'i2' (Save) › outs[0].ap", "memory location 'b'"),
      ("ap-shape", "instruction #2 'i2' (Save) › ins[0].ap", "holds 65536 values but outs[0] holds 65664")]),
    ("op0_unknown", mut(lambda p: insts(p)[1].update(op0="frobnicate")),
     [("unknown-enum", I1 + " › op0", "unknown ALU op \"frobnicate\"")]),
    ("op0_missing", mut(lambda p: insts(p)[1].pop("op0")),
     [("missing-field", I1 + " › op0", "")]),
    ("const0_string", mut(lambda p: insts(p)[1].update(const0="banana")),
     [("wrong-type", I1 + " › const0", "\"banana\"")]),
    ("reverse0_string", mut(lambda p: insts(p)[1].update(reverse0="yes")),
     [("wrong-type", I1 + " › reverse0", "expected true or false")]),
    ("tensor_tensor_one_input", mut(lambda p: insts(p)[1].update(opcode="TensorTensor", op="add")),
     [("operand-count", "instruction #1 'i1' (TensorTensor) › ins", "exactly 2")]),
    ("tensor_scalar_imm_input", mut(lambda p: insts(p)[1].update(ins=[{"kind": "imm_value", "dtype": "float32", "value": 1}])),
     [("operand-kind", I1 + " › ins[0].kind", "found imm_value")]),
    ("operand_no_kind", mut(lambda p: insts(p)[1]["ins"][0].pop("kind")),
     [("missing-field", I1 + " › ins[0].kind", "")]),
    ("reduce_bad_axis", mut(lambda p: insts(p)[1].update(opcode="TensorReduce", op="add", axis="Q")),
     [("unknown-enum", "instruction #1 'i1' (TensorReduce) › axis", "unknown axis list \"Q\"")]),
    ("shuffle_mask_short", mut(lambda p: insts(p)[1].update(opcode="StreamShuffle", mask=list(range(31)))),
     [("bad-field", "(StreamShuffle) › mask", "32 entries, found 31")]),
    ("shuffle_mask_entry_40", mut(lambda p: insts(p)[1].update(opcode="StreamShuffle", mask=[40] + list(range(1, 32)))),
     [("bad-field", "(StreamShuffle) › mask[0]", "< 32 or 255, found 40")]),
    ("shuffle_mask_entry_300", mut(lambda p: insts(p)[1].update(opcode="StreamShuffle", mask=[300] + list(range(1, 32)))),
     [("out-of-range", "(StreamShuffle) › mask[0]", "above the maximum 255")]),
    ("stream_transpose_cast", mut(lambda p: (insts(p)[1].update(opcode="StreamTranspose"),
                                           insts(p)[1]["outs"][0].update(dtype="int32"))),
     [("dtype", "(StreamTranspose) › outs[0].dtype", "does not support cast")]),
    ("indirect_load_float_index", mut(lambda p: insts(p)[1].update(
        opcode="IndirectLoad", ins=[table(p), dict(a0(p), ap=ROWS128)])),
     [("dtype", "(IndirectLoad) › ins[1].dtype", "must be int32, uint64 or int64")]),
    ("indirect_load_out_step", mut(lambda p: insts(p)[1].update(
        opcode="IndirectLoad", ins=[dict(table(p), ap=[[1, 1], [512, 64]]), idx32(p)],
        outs=[dict(insts(p)[1]["outs"][0], ap=[[512, 128], [2, 256]])])),
     [("ap-shape", "(IndirectLoad) › outs[0].ap", "step 1 in the final dim")]),
    ("scatter_acc_max", mut(lambda p: insts(p)[1].update(
        opcode="IndirectSaveAccumulate", num_indices=1, entry_step_elements=1, op="max",
        ins=[a0(p), idx32(p)], outs=[table(p)])),
     [("bad-field", "(IndirectSaveAccumulate) › op", "only bypass (copy) and add, found max")]),
    ("generic_indirect_dims_mismatch", mut(lambda p: insts(p)[1].update(
        opcode="GenericIndirectLoad", indirect_dims=["W", "Z"],
        ins=[a0(p), idx32(p)])),
     [("bad-field", "(GenericIndirectLoad) › indirect_dims", "number of indirect dims (2) must match")]),
    # new rules of issue #11 (docs/fidelity.md I3-I11)
    ("indirect_load_cast", mut(lambda p: insts(p)[1].update(
        opcode="IndirectLoad", ins=[table(p), idx32(p)],
        outs=[dict(insts(p)[1]["outs"][0], dtype="int32")])),
     [("dtype", "(IndirectLoad) › outs[0].dtype", "does not cast: ins[0] is float32, outs[0] is int32")]),
    ("indirect_load_rows_mismatch", mut(lambda p: insts(p)[1].update(
        opcode="IndirectLoad", ins=[table(p), dict(idx32(p), ap=[[512, 64], [1, 1]])])),
     [("ap-shape", "(IndirectLoad) › outs[0].ap", "outs[0] has 128 rows (its levels before the final one) but ins[1] holds 64 indices")]),
    ("indirect_save_rows_mismatch", mut(lambda p: insts(p)[1].update(
        opcode="IndirectSave", ins=[a0(p), dict(idx32(p), ap=[[512, 2], [1, 1]])], outs=[table(p)])),
     [("ap-shape", "(IndirectSave) › ins[0].ap", "ins[0] has 128 rows (its levels before the final one) but ins[1] holds 2 indices")]),
    ("scatter_acc_insufficient_indices", mut(lambda p: insts(p)[1].update(
        opcode="IndirectSaveAccumulate", num_indices=2, entry_step_elements=512, op="add",
        ins=[a0(p), idx32(p)], outs=[table(p)])),
     [("ap-shape", "(IndirectSaveAccumulate) › num_indices", "insufficient indices: num_indices is 2 but ins[1] holds 1 per partition")]),
    ("indirect_wrap_n_zero", mut(lambda p: insts(p)[1].update(
        opcode="IndirectLoad", ins=[table(p), idx32(p)], wrap={"n": 0, "hi": 3})),
     [("bad-field", "(IndirectLoad) › wrap.n", "must be at least 1, found 0")]),
    ("indirect_wrap_not_object", mut(lambda p: insts(p)[1].update(
        opcode="IndirectLoad", ins=[table(p), idx32(p)], wrap=5)),
     [("wrong-type", "(IndirectLoad) › wrap", "expected an object")]),
    ("generic_indirect_index_counts", mut(lambda p: insts(p)[1].update(
        opcode="GenericIndirectLoad", indirect_dims=["W", "Z"],
        ins=[dict(a0(p), ap=[[512, 128], [1, 512]]), idx32(p), dict(idx32(p), ap=[[512, 64], [1, 1]])],
        outs=[dict(insts(p)[1]["outs"][0], ap=[[512, 128], [1, 1]])])),
     [("ap-shape", "(GenericIndirectLoad) › ins[2].ap", "ins[1] holds 128, ins[2] holds 64")]),
    ("generic_indirect_dense_size", mut(lambda p: insts(p)[1].update(
        opcode="GenericIndirectLoad", indirect_dims=["W"],
        ins=[dict(a0(p), ap=[[512, 128], [1, 512]]), dict(idx32(p), ap=[[512, 4], [1, 1]])])),
     [("ap-shape", "(GenericIndirectLoad) › outs[0].ap", "outs[0] holds 65536 elements but 4 entries of 512 elements")]),
    ("indirect_copy_uint8_index", mut(lambda p: insts(p)[1].update(
        opcode="IndirectCopy", num_valid_indices=16, engine="Pool",
        ins=[dict(a0(p), ap=[[512, 128], [32, 16], [1, 32]]), dict(idx32(p), dtype="uint8")],
        outs=[dict(insts(p)[1]["outs"][0], ap=[[512, 128], [32, 16], [1, 32]])])),
     [("dtype", "(IndirectCopy) › ins[1].dtype", "must be uint16, int32 or uint32")]),
    ("indirect_copy_partitions", mut(lambda p: insts(p)[1].update(
        opcode="IndirectCopy", num_valid_indices=16, engine="Pool",
        ins=[dict(a0(p), ap=[[512, 8], [32, 16], [1, 32]]), dict(idx32(p), ap=[[512, 8], [1, 1]])],
        outs=[dict(insts(p)[1]["outs"][0], ap=[[512, 8], [1, 512]])])),
     [("ap-shape", "(IndirectCopy) › ins[0].ap", "multiple of 16, found 8")]),
    ("indirect_copy_dst_size", mut(lambda p: insts(p)[1].update(
        opcode="IndirectCopy", num_valid_indices=16, engine="Pool",
        ins=[dict(a0(p), ap=[[512, 128], [16, 32], [1, 16]]), idx32(p)],
        outs=[dict(insts(p)[1]["outs"][0], ap=[[512, 128], [16, 32], [1, 16]])])),
     [("ap-shape", "(IndirectCopy) › outs[0].ap", "outs[0] holds 512 elements per partition but IndirectCopy needs 256")]),
    ("gather_int64_index", mut(lambda p: insts(p)[1].update(
        opcode="Gather", engine="Pool", ins=[a0(p), dict(idx32(p), dtype="int64", ap=[[256, 128], [1, 512]])])),
     [("dtype", "(Gather) › ins[1].dtype", "must be uint8, uint16, uint32 or int32, found int64")]),
    ("gather_partition_mismatch", mut(lambda p: insts(p)[1].update(
        opcode="Gather", engine="Pool", ins=[a0(p), dict(idx32(p), ap=[[512, 64], [1, 512]])])),
     [("ap-shape", "(Gather) › ins[1].ap", "ins[0] has 128, ins[1] has 64")]),
    ("gather_dst_size", mut(lambda p: insts(p)[1].update(
        opcode="Gather", engine="Pool", ins=[a0(p), dict(idx32(p), ap=[[512, 128], [1, 4]])])),
     [("ap-shape", "(Gather) › outs[0].ap", "outs[0] holds 512 elements per partition but Gather needs 4 (one per index)")]),
    ("cache_load_without_init", mut(lambda p: insts(p)[1].update(
        opcode="TensorScalarCache", mode="Cumulative", acc="LoadAccumulate")),
     [("bad-field", "(TensorScalarCache) › acc", "3-argument")]),
    ("cache_int_init", mut(lambda p: insts(p)[1].update(
        opcode="TensorScalarCache", mode="Reduce", acc="LoadAccumulate",
        ins=[insts(p)[1]["ins"][0], {"kind": "imm_value", "dtype": "int32", "value": 3}])),
     [("dtype", "(TensorScalarCache) › ins[1].dtype", "must be float32")]),
    ("cache_accumulate_with_init", mut(lambda p: insts(p)[1].update(
        opcode="TensorScalarCache", mode="Reduce", acc="Accumulate",
        ins=[insts(p)[1]["ins"][0], {"kind": "imm_value", "dtype": "float32", "value": 3}])),
     [("bad-field", "(TensorScalarCache) › acc", "3-argument")]),
    ("cache_add_accumulate", mut(lambda p: insts(p)[1].update(
        opcode="TensorScalarCache", mode="Reduce", acc="AddAccumulate")),
     [("bad-field", "(TensorScalarCache) › acc", "Idle, Zero, Accumulate, ZeroAccumulate or LoadAccumulate, found AddAccumulate")]),
    ("cache_bad_mode", mut(lambda p: insts(p)[1].update(opcode="TensorScalarCache", mode="Scan")),
     [("unknown-enum", "(TensorScalarCache) › mode", "unknown TensorScalarCache mode \"Scan\"")]),
    ("loop_zero_stride", mut(lambda p: fn(p)["blocks"].append(
        {"opcode": "Loop", "name": "L", "LoopAxis": {"name": "i", "lb": 0, "ub": 4, "stride": 0}, "blocks": []})),
     [("loop", "loop #1 'L' › LoopAxis.stride", "must not be 0")]),
    ("loop_no_axis", mut(lambda p: fn(p)["blocks"].append({"opcode": "Loop", "name": "L", "blocks": []})),
     [("missing-field", "loop #1 'L' › LoopAxis", "")]),
    ("loop_too_long", mut(lambda p: fn(p)["blocks"].append(
        {"opcode": "Loop", "name": "L", "LoopAxis": {"name": "i", "lb": 0, "ub": 1 << 40}, "blocks": []})),
     [("loop", "loop #1 'L' › LoopAxis", "above the limit")]),
    ("block_entry_unknown", mut(lambda p: fn(p)["blocks"].append({"name": "x"})),
     [("structure", "blocks[1]", "expected a block")]),
    ("trigger_unknown_block", mut(lambda p: insts(p).append(
        {"opcode": "DMATrigger", "name": "t", "ins": [], "outs": [], "dma_blocks": ["nope"]})),
     [("unresolved-ref", "instruction #3 't' (DMATrigger) › dma_blocks[0]", "no DMABlock instruction is named 'nope'")]),
    ("dma_block_bad_descriptor", mut(lambda p: insts(p).append(
        {"opcode": "DMABlock", "name": "b", "ins": [], "outs": [], "descriptors": [insts(p)[0]]})),
     [("bad-field", "instruction #3 'b' (DMABlock) › descriptors[0].opcode", "found Load")]),
    ("memset_constant_too_big", mut(lambda p: insts(p)[1].update(opcode="Memset", constant=1 << 33, ins=[])),
     [("out-of-range", "(Memset) › constant", "above the maximum 4294967295")]),
    ("imm_value_string", mut(lambda p: insts(p)[1].update(
        opcode="TensorScalarPtr", ins=[insts(p)[1]["ins"][0], {"kind": "imm_value", "dtype": "float32", "value": "abc"}])),
     [("wrong-type", "(TensorScalarPtr) › ins[1].value", "found the string \"abc\"")]),
    ("dynamic_without_source", mut(lambda p: insts(p)[1]["ins"][0].update(indirect_dim="W", indirect_dim_max_index=4)),
     [("missing-field", I1 + " › ins[0].vector_offset", "exactly one of")]),
    ("dynamic_both_sources", mut(lambda p: insts(p)[1]["ins"][0].update(
        indirect_dim="W", indirect_dim_max_index=4, scalar_offset="r0",
        vector_offset=dict(insts(p)[1]["ins"][0], dtype="uint16"))),
     [("bad-field", I1 + " › ins[0].scalar_offset", "not both")]),
    # Dim letters (docs/bir-json.md "Dim letters"): an indirect dim is the AP level index, so Z
    # is accepted on a 2-level AP (valid/letters_and_indices); Y and X are past its last level.
    ("dynamic_padded_dim", mut(lambda p: insts(p)[1]["ins"][0].update(
        indirect_dim="X", indirect_dim_max_index=4, scalar_offset="r0")),
     [("bad-field", I1 + " › ins[0].indirect_dim", "indirect dim X is level 3 (an indirect dim's letter is its AP level index: W 0, Z 1, Y 2, X 3) but the access pattern has 2 levels, named W, Z")]),
    ("generic_indirect_padded_dim", mut(lambda p: insts(p)[1].update(
        opcode="GenericIndirectLoad", indirect_dims=["Y"],
        ins=[insts(p)[1]["ins"][0], dict(insts(p)[1]["ins"][0], dtype="int32")])),
     [("bad-field", "(GenericIndirectLoad) › indirect_dims[0]", "indirect dim Y is level 2")]),
    # Index dtypes: Load/Save family int32/uint64/int64 (seed 000 §6.1), HW-DGE vector offset uint16 (§7).
    ("generic_indirect_load_uint8_index", mut(lambda p: insts(p)[1].update(
        opcode="GenericIndirectLoad", indirect_dims=["W"],
        ins=[a0(p), dict(a0(p), dtype="uint8", ap=ROWS128)])),
     [("dtype", "(GenericIndirectLoad) › ins[1].dtype", "must be int32, uint64 or int64 (seed 000 §6.1), found uint8")]),
    ("generic_indirect_save_float_index", mut(lambda p: insts(p)[1].update(
        opcode="GenericIndirectSave", indirect_dims=["W", "Z"],
        ins=[dict(a0(p), ap=ROWS128), idx32(p), dict(a0(p), ap=ROWS128)])),
     [("dtype", "(GenericIndirectSave) › ins[2].dtype", "must be int32, uint64 or int64 (seed 000 §6.1), found float32")]),
    ("vector_offset_bad_dtype", mut(lambda p: insts(p)[1]["ins"][0].update(
        indirect_dim="W", indirect_dim_max_index=4, vector_offset=dict(insts(p)[1]["ins"][0], dtype="int32"))),
     [("dtype", I1 + " › ins[0].vector_offset.dtype", "must be uint16 (seed 000 §7), found int32"),
      ("bad-field", I1 + " › ins[0].vector_offset", "the HW-DGE form, only on ins[0] or outs[0] of a DMACopy")]),
    # Where dynamic offsets may sit (issue #25; docs/bir-json.md "Dynamic offsets"; fidelity D19, D20, G56).
    ("tensor_copy_dynamic_src_without_offset", mut(lambda p: insts(p)[1].update(opcode="TensorCopyDynamicSrc")),
     [("bad-field", "instruction #1 'i1' (TensorCopyDynamicSrc) › ins[0].scalar_offset", "must carry a scalar dynamic offset")]),
    ("tensor_copy_dynamic_dst_offset_on_w", mut(lambda p: (insts(p)[1].update(opcode="TensorCopyDynamicDst"),
                                                           insts(p)[1]["outs"][0].update(indirect_dim="W", indirect_dim_max_index=4,
                                                                                         scalar_offset="r0"))),
     [("bad-field", "instruction #1 'i1' (TensorCopyDynamicDst) › outs[0].indirect_dim", "never the partition dim W")]),
    ("tensor_reduce_indirect_axis_xy", mut(lambda p: (insts(p)[1].update(opcode="TensorReduce", op="add", axis="XY"),
                                                      insts(p)[1]["outs"][0].update(ap=[[512, 128], [1, 1]]),
                                                      insts(p)[1]["ins"][0].update(indirect_dim="Z", indirect_dim_max_index=4,
                                                                                   scalar_offset="r0"))),
     [("bad-field", "instruction #1 'i1' (TensorReduce) › axis", "Indirection is only allowed for AxisListType::X")]),
    ("vector_offset_in_replicate", mut(lambda p: (insts(p)[1].update(opcode="DMACopy", engine="DMA", mode="Replicate"),
                                                  insts(p)[1]["outs"][0].update(indirect_dim="W", indirect_dim_max_index=128,
                                                                                vector_offset=dict(idx32(p), dtype="uint16")))),
     [("bad-field", "instruction #1 'i1' (DMACopy) › outs[0].vector_offset", "routes only Copy mode to the vector-indirect")]),
    # HW-DGE bridge (docs/fidelity.md G50): a scatter of a_tile's 128 rows of 512 into a_tile
    # rows picked by a uint16 vector offset on the destination's W level.
    ("hw_dge_index_count", mut(lambda p: insts(p).append(dge_copy(idx_pairs=[[512, 1], [1, 64]]))),
     [("ap-shape", "instruction #3 'dge' (DMACopy) › outs[0].vector_offset.ap",
       "one index per row of ins[0] (128 rows, its level-0 num), found 64 elements")]),
    ("hw_dge_row_length", mut(lambda p: insts(p).append(dge_copy(src_pairs=[[512, 128], [1, 256]]))),
     [("ap-shape", "instruction #3 'dge' (DMACopy) › outs[0].ap",
       "holds 512 elements, but a row of ins[0] (one level-0 index) holds 256")]),
    ("hw_dge_gather_index_count", mut(lambda p: insts(p).append(
        dge_copy(src_pairs=[[512, 32], [1, 512]], gather=True))),
     [("ap-shape", "instruction #3 'dge' (DMACopy) › ins[0].vector_offset.ap",
       "one index per row of outs[0] (32 rows, its level-0 num), found 128 elements")]),
    ("reset_queue_no_rearm", mut(lambda p: insts(p).append(
        {"opcode": "ResetQueueInstance", "name": "r", "ins": [], "outs": [], "no_rearm": True})),
     [("bad-field", "instruction #3 'r' (ResetQueueInstance) › no_rearm", "no_rearm belongs to SwitchQueueInstance")]),
    ("switch_queue_empty_name", mut(lambda p: insts(p).append(
        {"opcode": "SwitchQueueInstance", "name": "s", "ins": [], "outs": [], "queue": ""})),
     [("bad-field", "instruction #3 's' (SwitchQueueInstance) › queue", "must not be empty")]),
    ("switch_queue_with_operand", mut(lambda p: insts(p).append(
        {"opcode": "SwitchQueueInstance", "name": "s", "ins": [a0(p)], "outs": []})),
     [("operand-count", "instruction #3 's' (SwitchQueueInstance)", "")]),
    ("three_errors_at_once", mut(lambda p: (insts(p)[0].update(engine="GPU"), insts(p)[1].update(op1="nope"),
                                           set_ap(p, 2, "memref", "gone"))),
     [("unknown-enum", I0 + " › engine", "unknown engine \"GPU\""),
      ("unknown-enum", I1 + " › op1", "unknown ALU op \"nope\""),
      ("unresolved-ref", "instruction #2 'i2' (Save) › ins[0].memref", "memref 'gone'")]),
]


def write_malformed():
    for name, mutate, errors in MALFORMED_CASES:
        out = mutate(copy.deepcopy(sub_one()))
        text = out if isinstance(out, str) else json.dumps(out, indent=1)
        with open(os.path.join(MALFORMED, name + ".json"), "w") as f:
            f.write(text)
        with open(os.path.join(MALFORMED, name + ".expect"), "w") as f:
            f.write("# generated by make_cases.py; expectations typed in by hand there\n")
            for kind, location, message in errors:
                f.write(f"error {kind} @ {location} | {message}\n")
            f.write(choice_lines(name))


def main():
    known = {n for n, _, _ in MALFORMED_CASES} | {"all_opcodes", "loops", "post_allocation", "dtypes",
                                                  "letters_and_indices", "sub_one"}
    assert set(CHOICES) <= known, set(CHOICES) - known
    for d in (VALID, MALFORMED):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    write_valid()
    shutil.copy(os.path.join(HERE, "..", "..", "crates", "bir-ir", "tests", "data", "sub_one.json"),
                os.path.join(VALID, "sub_one.json"))
    with open(os.path.join(VALID, "sub_one.expect"), "w") as f:
        f.write("# the b = a - 1.0 example of shared/reference/bir-json.md, spelled out\nexpect: ok\n")
    write_malformed()
    print(f"{len(MALFORMED_CASES)} malformed cases, 6 valid programs")


if __name__ == "__main__":
    main()
