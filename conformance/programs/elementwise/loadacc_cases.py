"""TensorTensor and TensorReduce with `acc` LoadAccumulate (the `loadacc_*` cases of programs/elementwise),
with Accumulate / ZeroAccumulate / Zero twins for contrast. Registered by make_cases.py
(`add_cases(globals())`), which owns the program builders, the refsim encoders and the fp32 / int32 ALUs
this reuses. Its own RNG, so the cases before it keep their bytes.

Written from the session-16 contract (/work/s16-contract.md L1) and fidelity S5, S6, S16, N17, never
from birsim's code. The rule, as implemented here:

  * L1: a kernel without an initial-value operand (TensorTensor, TensorReduce) loads the accumulator
    from the output: LoadAccumulate = Accumulate = AddAccumulate. Idle / absent, Zero and
    ZeroAccumulate overwrite.
  * S16, the shared accumulate: the instruction's result R is first narrowed to the output dtype as a
    plain write narrows it (refsim: RNE, FP8 saturating, NaN canonical), then out = narrow0(widen(R) +
    widen(out)) with floats in fp32 and the narrowing under FP8 config 0 (RNE, overflow -> +-Inf);
    int32 adds wrap (INT_MAX + 1 = INT_MIN). A non-reducible output dtype (uint8, ...) is a `numerics`
    fault naming the dtype, the output untouched.
  * S5: int32 inputs on both sides take ts_int_ops (saturating add); S6: TensorReduce folds in element
    order (C across partitions, partition 0 first), negate after the fold, then the accumulate; int32
    inputs fold with the saturating ts_int_ops add.

"The output's prior contents" is either a Load of an input into the output tile (most cases) or the
result of an earlier instruction (loadacc_tt_chain_earlier_result, loadacc_reduce_chain_after_tensor_tensor).
"""
import ml_dtypes as md
import numpy as np

F32 = np.float32
RNG = np.random.default_rng(20261217)
I32_MIN, I32_MAX = -2**31, 2**31 - 1


def add_cases(m):
    Prog, ap, tile, SIZE = m["Prog"], m["ap"], m["tile"], m["SIZE"]
    FACT_TEXT = {
        "S16": "CONFIRMED: folds reuse the arithmetic core's per-dtype accumulate (seed 000 §2.3, re-facts §8)",
        "N15": "CONFIRMED: cast_copy_or_accumulate adds for the 8 reducible dtypes, ints wrap, FP8 config 0 (re-facts §8)",
        "S5": "CONFIRMED: TensorTensor's op tables (seed 000 §2.3)",
        "S6": "CONFIRMED: TensorReduce's folds, negate after the fold (seed 000 §3.1)",
        "N1": "CONFIRMED: casts go src -> fp32 -> dst with RNE (re-facts §4)",
        "N2": "CONFIRMED: refsim FP8 saturates overflow to +-max on a write (re-facts §4)",
        "N3": "CONFIRMED: bf16 / fp16 encode by RNE (re-facts §4)",
    }

    def case(name, g, note, choices=(), fault=None):
        ids = ["S16", "N15"] + [c for c in ("S5", "S6") if c in choices] + ["N1"]
        if "float8e5" in name:
            ids.append("N2")
        if "bfloat16" in name or "float16" in name:
            ids.append("N3")
        m["case"](name, g, note, fault=fault, choices=choices, facts=[f"{i} ({FACT_TEXT[i]})" for i in ids])
    encode, decode, ts, ts_int, fold = m["encode"], m["decode"], m["ts"], m["ts_int"], m["fold"]
    binary_program, reduce_program = m["binary_program"], m["reduce_program"]

    def accumulate(prev_raw, r_raw, dt):
        """S16: out = narrow0(widen(R) + widen(out)); ints wrap."""
        if dt == "int32":
            s = prev_raw.astype(np.int64) + r_raw.astype(np.int64)
            return (((s - I32_MIN) % 2**32) + I32_MIN).astype(np.int32)
        s = (decode(r_raw, dt) + decode(prev_raw, dt)).astype(F32)
        assert not np.isnan(s).any()
        if dt == "float32":
            return s
        if dt == "bfloat16":
            return s.astype(md.bfloat16).view(np.uint16)
        if dt == "float16":
            return s.astype(np.float16)
        if dt == "float8e5":
            return s.astype(md.float8_e5m2).view(np.uint8)  # config 0: overflow -> Inf, no saturation
        raise ValueError(dt)

    def vals(shape, scale=10.0):
        return (RNG.standard_normal(shape) * scale).astype(F32)

    LA = ("L1 (s16 contract): LoadAccumulate on a kernel without an initial-value operand loads the accumulator "
          "from the output: out = accumulate(out held, R) through the shared accumulate (S16: R narrowed to the "
          "output dtype first, then added in fp32 and narrowed back), exactly as Accumulate")
    P, F = 16, 12

    # ------------------------------------------------------------ TensorTensor (S5)
    a, b, prev = vals((P, F)), vals((P, F)), vals((P, F), 100.0)
    r = ts("add", a, b)
    for acc, want, tag, note in [("LoadAccumulate", accumulate(prev, r, "float32"), "", "prev + (a + b) in fp32"),
                                 ("Accumulate", accumulate(prev, r, "float32"), "_accumulate",
                                  "the same data with Accumulate: the same result (contrast)"),
                                 ("ZeroAccumulate", r, "_zeroaccumulate",
                                  "the same data with ZeroAccumulate: overwritten with a + b (L1: ZeroAccumulate overwrites)")]:
        case(f"loadacc_tt_add_float32{tag}", binary_program("float32", "float32", "float32", a, b, P, F, want,
             prev=prev, op="add", acc=acc), f"TensorTensor add fp32, acc {acc}: {note} ({LA})",
             choices=["L1", "S5", "S16"])

    # bf16 output: R = bf16(a * b), then bf16(fp32(R) + fp32(prev)); differs from one rounding
    a, b = vals((32, F), 4.0), vals((32, F), 4.0)
    prev = encode(vals((32, F), 30.0), "bfloat16")
    rb = encode(ts("mult", a, b), "bfloat16")
    want = accumulate(prev, rb, "bfloat16")
    assert (want != encode(decode(prev, "bfloat16") + ts("mult", a, b), "bfloat16")).any()
    case("loadacc_tt_mult_bfloat16_double_rounding", binary_program("float32", "float32", "bfloat16", a, b, 32, F,
         want, prev=prev, op="mult", acc="LoadAccumulate"),
         f"TensorTensor mult fp32 inputs into bf16, LoadAccumulate: the product narrowed to bf16 first, then added to "
         f"the held bf16 in fp32 and narrowed again (differs from one rounding somewhere) ({LA})",
         choices=["L1", "S5", "S16"])
    # fp16 output from bf16 inputs, subtract
    ab, bb = encode(vals((P, F), 20.0), "bfloat16"), encode(vals((P, F), 20.0), "bfloat16")
    prev = encode(vals((P, F), 50.0), "float16")
    rh = encode(ts("subtract", decode(ab, "bfloat16"), decode(bb, "bfloat16")), "float16")
    case("loadacc_tt_subtract_bfloat16_in_float16_out", binary_program("bfloat16", "bfloat16", "float16", ab, bb, P, F,
         accumulate(prev, rh, "float16"), prev=prev, op="subtract", acc="LoadAccumulate"),
         f"TensorTensor subtract on bf16 inputs into fp16, LoadAccumulate ({LA})", choices=["L1", "S5", "S16"])
    # int32: the ALU add saturates (ts_int_ops), the accumulate wraps
    ia = RNG.integers(-2**20, 2**20, (P, F)).astype(np.int32)
    ib = RNG.integers(-2**20, 2**20, (P, F)).astype(np.int32)
    ip = RNG.integers(-2**20, 2**20, (P, F)).astype(np.int32)
    ia[0, :4] = [I32_MAX, I32_MIN, I32_MAX, 5]
    ib[0, :4] = [1, -1, 0, -7]
    ip[0, :4] = [1, -1, 1, I32_MIN]
    ri = ts_int("add", ia, ib)
    assert ri[0, 0] == I32_MAX and ri[0, 1] == I32_MIN
    wi = accumulate(ip, ri, "int32")
    assert wi[0, 0] == I32_MIN and wi[0, 1] == I32_MAX and wi[0, 2] == I32_MIN
    for acc, tag in [("LoadAccumulate", ""), ("AddAccumulate", "_addaccumulate")]:
        case(f"loadacc_tt_add_int32_wraps{tag}", binary_program("int32", "int32", "int32", ia, ib, P, F, wi, prev=ip,
             op="add", acc=acc),
             f"TensorTensor add int32, acc {acc}: the ts_int_ops add saturates (INT_MAX + 1 -> INT_MAX), then the "
             f"accumulate wraps (INT_MAX + 1 -> INT_MIN) ({LA})", choices=["L1", "S5", "S16", "N17"])
    # FP8 e5m2: the result saturates as a write (refsim), the accumulate overflows to +-Inf (config 0)
    a8, b8 = vals((4, 8), 4.0), vals((4, 8), 4.0)
    a8[0, :4] = [1e4, -1e4, 300.0, 2.0]
    b8[0, :4] = [100.0, 100.0, 100.0, 3.0]
    prev8 = encode(vals((4, 8), 20.0), "float8e5")
    prev8[0, :4] = [0x7B, 0xFB, 0x7A, 0x40]
    r8 = encode(ts("mult", a8, b8), "float8e5")
    w8 = accumulate(prev8, r8, "float8e5")
    assert r8[0, 0] == 0x7B and r8[0, 1] == 0xFB and w8[0, 0] == 0x7C and w8[0, 1] == 0xFC
    case("loadacc_tt_mult_float8e5_overflow_to_inf", binary_program("float32", "float32", "float8e5", a8, b8, 4, 8, w8,
         prev=prev8, op="mult", acc="LoadAccumulate"),
         f"TensorTensor mult into float8e5, LoadAccumulate: 1e6 narrows (refsim write) to 57344 = 0x7B, 57344 + 57344 "
         f"narrows under FP8 config 0 to +Inf 0x7C (and -Inf 0xFC) ({LA})", choices=["L1", "S5", "S16"])
    # the output's prior contents = an earlier instruction's result
    a, b, c = vals((P, F)), vals((P, F)), vals((P, F))
    g = Prog()
    for nm, v in (("a", a), ("b", b), ("c", c)):
        g.dram_in(nm, "float32", v)
        g.sb_bytes(nm + "t", "float32", P, F * 4)
        g.inst("Load", [tile(nm, "float32", P, F)], [tile(nm + "t", "float32", P, F)])
    g.sb_bytes("yt", "float32", P, F * 4)
    g.inst("TensorTensor", [tile("at", "float32", P, F), tile("bt", "float32", P, F)], [tile("yt", "float32", P, F)],
           op="mult")
    g.inst("TensorTensor", [tile("bt", "float32", P, F), tile("ct", "float32", P, F)], [tile("yt", "float32", P, F)],
           op="subtract", acc="LoadAccumulate")
    g.dram_out("y", "float32", (P, F), accumulate(ts("mult", a, b), ts("subtract", b, c), "float32"))
    g.inst("Save", [tile("yt", "float32", P, F)], [tile("y", "float32", P, F)])
    case("loadacc_tt_chain_earlier_result", g,
         f"TensorTensor a*b writes y, then TensorTensor b-c with LoadAccumulate adds into it: y = a*b + (b-c) ({LA})",
         choices=["L1", "S5", "S16"])
    # a non-reducible output dtype faults, the (pre-filled external) output untouched
    ua = RNG.integers(0, 100, (4, 8)).astype(np.uint8)
    ub = RNG.integers(0, 100, (4, 8)).astype(np.uint8)
    up = RNG.integers(0, 50, (4, 8)).astype(np.uint8)
    g = Prog()
    for nm, v in (("a", ua), ("b", ub)):
        g.dram_in(nm, "uint8", v)
        g.sb_bytes(nm + "t", "uint8", 4, 8)
        g.inst("Load", [tile(nm, "uint8", 4, 8)], [tile(nm + "t", "uint8", 4, 8)])
    g.dram_in("prev", "uint8", up)
    g.dram_out("y", "uint8", (4, 8), up)
    g.inst("Load", [tile("prev", "uint8", 4, 8)], [tile("y", "uint8", 4, 8)])
    g.inst("TensorTensor", [tile("at", "uint8", 4, 8), tile("bt", "uint8", 4, 8)], [tile("y", "uint8", 4, 8)],
           op="add", acc="LoadAccumulate")
    case("loadacc_tt_uint8_output_faults", g,
         f"TensorTensor add into a uint8 output with LoadAccumulate: uint8 is not reducible, so the accumulate is a "
         f"numerics fault naming uint8 and the pre-filled external output keeps its values ({LA})",
         fault=("numerics", "uint8"), choices=["L1", "S5", "S16"])

    # ------------------------------------------------------------ TensorReduce (S6)
    x = vals((P, F))
    prev = vals((P, 1), 100.0)
    rx = fold(x, None, "add").reshape(P, 1)
    for acc, want, tag, note in [("LoadAccumulate", accumulate(prev, rx, "float32"), "", "prev + the row sum"),
                                 ("Accumulate", accumulate(prev, rx, "float32"), "_accumulate",
                                  "the same data with Accumulate: the same result (contrast)"),
                                 ("Zero", rx, "_zero", "the same data with Zero: overwritten with the row sum")]:
        case(f"loadacc_reduce_add_X_float32{tag}", reduce_program(x, "float32", [[F, P], [1, F]], [[1, P], [1, 1]],
             (P, 1), want, prev=prev, op="add", axis="X", acc=acc),
             f"TensorReduce add over X (free axis), acc {acc}: {note} ({LA})", choices=["L1", "S6", "S16"])
    # max, negate, bf16 output
    xb = vals((64, F))
    prevb = encode(vals((64, 1), 40.0), "bfloat16")
    rb = encode(-fold(xb, None, "max"), "bfloat16").reshape(64, 1)
    want = accumulate(prevb, rb, "bfloat16")
    assert (want != encode(decode(prevb, "bfloat16") - fold(xb, None, "max").reshape(64, 1), "bfloat16")).any()
    case("loadacc_reduce_max_X_negate_bfloat16_out", reduce_program(xb, "float32", [[F, 64], [1, F]], [[1, 64], [1, 1]],
         (64, 1), want, out_dt="bfloat16", prev=prevb, op="max", axis="X", negate=True, acc="LoadAccumulate"),
         f"TensorReduce max over X, negate, into bf16 with LoadAccumulate: -max narrowed to bf16, then added to the "
         f"held bf16 in fp32 and narrowed again ({LA})", choices=["L1", "S6", "S16"])
    # 3-level AP, X folds the innermost level: (P, Y) outputs
    Y, X = 3, 5
    x3 = vals((P, Y * X))
    prev3 = vals((P, Y), 50.0)
    r3 = fold(x3.reshape(P, Y, X), None, "add")
    case("loadacc_reduce_add_X_3level_float32", reduce_program(x3, "float32", [[Y * X, P], [X, Y], [1, X]],
         [[Y, P], [1, Y]], (P, Y), accumulate(prev3, r3, "float32"), prev=prev3, op="add", axis="X",
         acc="LoadAccumulate"),
         f"TensorReduce add over X of [[15,16],[5,3],[1,5]]: 3 sums per partition, each added into the held output "
         f"({LA})", choices=["L1", "S6", "S16"])
    # C: across partitions (partition 0 first)
    xc = vals((P, F))
    prevc = vals((1, F), 100.0)
    rc = fold(xc.T.copy(), None, "add").reshape(1, F)
    case("loadacc_reduce_add_C_float32", reduce_program(xc, "float32", [[F, P], [1, F]], [[F, 1], [1, F]], (1, F),
         accumulate(prevc, rc, "float32"), prev=prevc, op="add", axis="C", acc="LoadAccumulate"),
         f"TensorReduce add across partitions (C), LoadAccumulate: each column's sum (partition 0 first) added into "
         f"the held 1 x 12 output ({LA})", choices=["L1", "S6", "S16"])
    xcb = encode(vals((32, F)), "bfloat16")
    prevcb = encode(vals((1, F), 10.0), "bfloat16")
    rcb = encode(fold(decode(xcb, "bfloat16").T.copy(), None, "max"), "bfloat16").reshape(1, F)
    case("loadacc_reduce_max_C_bfloat16", reduce_program(xcb, "bfloat16", [[F, 32], [1, F]], [[F, 1], [1, F]], (1, F),
         accumulate(prevcb, rcb, "bfloat16"), out_dt="bfloat16", prev=prevcb, op="max", axis="C",
         acc="LoadAccumulate"),
         f"TensorReduce max across 32 partitions (C) on bf16 into bf16, LoadAccumulate: held + column max ({LA})",
         choices=["L1", "S6", "S16"])
    # int32: saturating fold, wrapping accumulate
    xi = RNG.integers(-2**30, 2**30, (P, F)).astype(np.int32)
    xi[0] = 2**30  # the row sum saturates at INT_MAX
    acc_i = xi[:, 0].astype(np.int64)
    for j in range(1, F):
        acc_i = np.clip(acc_i + xi[:, j], I32_MIN, I32_MAX)
    ri = acc_i.astype(np.int32).reshape(P, 1)
    assert ri[0, 0] == I32_MAX
    pi = RNG.integers(-2**30, 2**30, (P, 1)).astype(np.int32)
    pi[0, 0] = 5
    wi = accumulate(pi, ri, "int32")
    assert wi[0, 0] == I32_MIN + 4
    case("loadacc_reduce_add_X_int32_wraps", reduce_program(xi, "int32", [[F, P], [1, F]], [[1, P], [1, 1]], (P, 1), wi,
         out_dt="int32", prev=pi, op="add", axis="X", acc="LoadAccumulate"),
         f"TensorReduce add over X on int32, LoadAccumulate: the fold saturates (ts_int_ops), then INT_MAX + 5 wraps to "
         f"INT_MIN + 4 in the accumulate ({LA})", choices=["L1", "S6", "S16", "N17"])
    # the output's prior contents = an earlier TensorTensor's result
    a, b = vals((P, 1)), vals((P, 1))
    xr = vals((P, F))
    g = Prog()
    for nm, v in (("a", a), ("b", b), ("x", xr)):
        g.dram_in(nm, "float32", v)
        g.sb_bytes(nm + "t", "float32", P, v.shape[1] * 4)
        g.inst("Load", [tile(nm, "float32", P, v.shape[1])], [tile(nm + "t", "float32", P, v.shape[1])])
    g.sb_bytes("yt", "float32", P, 4)
    g.inst("TensorTensor", [tile("at", "float32", P, 1), tile("bt", "float32", P, 1)], [tile("yt", "float32", P, 1)],
           op="max")
    g.inst("TensorReduce", [tile("xt", "float32", P, F)], [tile("yt", "float32", P, 1)], op="add", axis="X",
           acc="LoadAccumulate")
    g.dram_out("y", "float32", (P, 1), accumulate(ts("max", a, b), fold(xr, None, "add").reshape(P, 1), "float32"))
    g.inst("Save", [tile("yt", "float32", P, 1)], [tile("y", "float32", P, 1)])
    case("loadacc_reduce_chain_after_tensor_tensor", g,
         f"TensorTensor max(a, b) writes y (one value per partition), then TensorReduce add over X with LoadAccumulate "
         f"adds each row sum into it ({LA})", choices=["L1", "S5", "S6", "S16"])
