"""The packed `_x4` forms of Select, CopyPredicated, TensorScalarAffineSelect and the casting DMACopy
Transpose (`x4_*` cases), and CopyPredicated's side output under LoadAccumulate (`loadacc_cpred_*`),
of programs/datamove. Registered by make_cases.py (`add_cases(globals())`, after every other case),
which owns the program builder, the refsim encoders (encode / decode / cast), the Iota values and the
side-output fold this reuses. Its own RNG, so the cases before it keep their bytes.

Written from the session-16 contract (/work/s16-contract.md: K1, K2, K3, L1; fidelity N9, D2, D8, D9,
D10, D14, D16, S16), never from birsim's code. The rules, as implemented here:

  * containers (D16, N9): float8_e4m3fn_x4 / float8_e5m2_x4 are uint32 containers of 4 fp8 lanes
    (lane k = byte k, the k-th lowest), float4_e2m1fn_x4 a uint16 container of 4 fp4 lanes (lane k =
    nibble k). APs, allocations and .npy arrays count containers. An x4 operand holds 4 values per
    container, in container order, lanes low to high within one.
  * lane casts: a lane is read as its format (e4m3fn, e5m2 = float8e5, e2m1fn) and written by the
    refsim narrowing of that format (FP8 saturates with the canonical NaN, N2/N4; FP4 saturates to
    6.0 with NaN -> +-0 by sign, N8); equal dtypes copy the lane bits (N1).
  * K1 Select / CopyPredicated: elementwise over values; predicate, on_true / on_false / src all
    hold as many values as the output (a non-x4 operand 4x the x4 output's elements). Select: pred
    read through fp32, exactly 0 or 1 (D8); CopyPredicated: pred converted to uint32, non-zero =
    true, xor reverse_pred (D9), a false lane keeps its bits (byte / nibble merge). A side output
    (D10) folds each row's lane values in lane order.
  * K2 AffineSelect into x4: the affine value per AP element = per container, shared by its 4 lanes.
  * K3 Transpose with an x4 cast: convert in the source's AP order, pack 4 consecutive values along
    the source's X (or unpack to 4X), then dst = numpy.transpose(packed, perm) (D2); X not a multiple
    of 4 when packing -> a fault naming outs[0].
  * L1 LoadAccumulate on CopyPredicated's side output: side = accumulate(side held, fold) through
    the shared accumulate (S16): the fold narrowed to the side dtype as a write, then added in fp32
    to what the side holds and narrowed back (RNE; FP8 config 0), exactly as Accumulate.

Ambiguities in the contract and the reading taken here:
  X1 K3 says "a `dims` fault naming outs[0]"; no fault kind `dims` appears in any suite or doc (the
     run-time dimension / count faults are kind `shape`). The error cases expect `fault shape` with
     the message naming `outs[0]`.
  X2 K1 says a Select fault names the element; for an x4 predicate the index could be a value or a
     container index. The fault cases put the bad value in a non-x4 int32 predicate (element index =
     value index = 13) against an x4 output, so either reading gives 13.
  X3 Transpose code None (0) is doCopy (D2); a casting doCopy into x4 is not part of K3, so only
     codes 1..13 are used.
  X4 K1 says operands holding different value counts get "the existing located count fault"; for
     statically known counts that is today a validation `ap-shape` error at the instruction (as
     cce_count_mismatch_error), so x4_*_count_error are validation-error cases whose operand holds
     as many elements as the x4 output has containers (a quarter of its values).
"""
import ml_dtypes as md
import numpy as np

F32 = np.float32
RNG = np.random.default_rng(20261216)

X4 = {"float8_e4m3fn_x4": ("float8_e4m3fn", 8, np.uint32), "float8_e5m2_x4": ("float8e5", 8, np.uint32),
      "float4_e2m1fn_x4": ("fp4", 4, np.uint16)}


def add_cases(m):
    Prog, ap, tile, imm, case = m["Prog"], m["ap"], m["tile"], m["imm"], m["case"]
    encode, decode, STORE, SIZE = m["encode"], m["decode"], m["STORE"], m["SIZE"]
    iota_values, CMP, fold_rows, four_level = m["iota_values"], m["CMP"], m["fold_rows"], m["four_level"]
    TNAMES, REFACTS = m["TNAMES"], m["REFACTS"]
    for dt, (_, _, cont) in X4.items():
        STORE[dt] = cont
        SIZE[dt] = np.dtype(cont).itemsize

    # ------------------------------------------------------------ lanes (N9)
    def unpack(raw, dt):
        """containers (P, F) -> lane codes (P, 4F), lane k of container c at 4c + k."""
        _, bits, _ = X4[dt]
        raw = np.asarray(raw).astype(np.uint64)
        lanes = np.stack([(raw >> np.uint64(bits * k)) & np.uint64((1 << bits) - 1) for k in range(4)], axis=-1)
        return lanes.astype(np.uint8).reshape(raw.shape[:-1] + (raw.shape[-1] * 4,))

    def pack(lanes, dt):
        """lane codes (..., 4F) -> containers (..., F)."""
        _, bits, cont = X4[dt]
        lanes = np.asarray(lanes).astype(np.uint64)
        lanes = lanes.reshape(lanes.shape[:-1] + (lanes.shape[-1] // 4, 4))
        out = np.zeros(lanes.shape[:-1], np.uint64)
        for k in range(4):
            out |= lanes[..., k] << np.uint64(bits * k)
        return out.astype(cont)

    def lane_decode(codes, dt):
        lane = X4[dt][0]
        codes = np.asarray(codes, np.uint8)
        if lane == "fp4":
            return codes.view(md.float4_e2m1fn).astype(F32)
        return decode(codes, lane)

    def lane_encode(x, dt):
        """fp32 values -> lane codes by the lane format's refsim narrowing."""
        lane = X4[dt][0]
        x = np.asarray(x, F32)
        if lane == "fp4":
            c = x.astype(md.float4_e2m1fn).view(np.uint8) & 0xF  # ml_dtypes saturates FP4 (N8)
            return np.where(np.isnan(x), np.where(np.signbit(x), 0x8, 0x0), c).astype(np.uint8)
        return encode(x, lane)

    def values(raw, dt):
        """An operand's values in fp32, (P, n) with n = elements x lanes."""
        if dt in X4:
            return lane_decode(unpack(raw, dt), dt)
        return decode(raw, dt)

    def units(raw, src_dt, out_dt):
        """An operand converted to the output's units: lane codes (P, 4F) for an x4 output, stored
        values otherwise; equal dtypes copy bits (N1)."""
        if src_dt == out_dt:
            return unpack(raw, out_dt) if out_dt in X4 else np.asarray(raw).copy()
        v = values(raw, src_dt)
        return lane_encode(v, out_dt) if out_dt in X4 else encode(v, out_dt)

    def imm_units(v, shape, out_dt):
        x = np.full(shape, v, F32)
        return lane_encode(x, out_dt) if out_dt in X4 else encode(x, out_dt)

    def finish(u, out_dt):
        return pack(u, out_dt) if out_dt in X4 else np.asarray(u).astype(STORE[out_dt])

    def lanes_per(dt):
        return 4 if dt in X4 else 1

    def x4_random(shape, dt, nan=True):
        """Random containers; fp8 lanes avoid NaN codes unless nan."""
        _, bits, cont = X4[dt]
        lanes = RNG.integers(0, 1 << bits, shape[:-1] + (shape[-1] * 4,)).astype(np.uint8)
        if not nan and bits == 8:
            lanes = np.where(np.isnan(lane_decode(lanes, dt)), lanes & 0x70, lanes).astype(np.uint8)
        return pack(lanes, dt)

    def fp32_vals(shape, scale=8.0):
        return (RNG.standard_normal(shape) * scale).astype(F32)

    def raw_vals(shape, dt, scale=8.0):
        """Data of dtype dt holding shape values (containers for x4)."""
        if dt in X4:
            return x4_random((shape[0], shape[1] // 4), dt, nan=False)
        v = fp32_vals(shape, scale)
        return v if dt == "float32" else encode(v, dt)

    def lane_cite(*dts):
        # N9 (the lane order) is DOCUMENTED by AWS's MX golden since #29: no choice line.
        out = []
        for dt in dts:
            if dt == "float4_e2m1fn_x4":
                out.append("N8")
            if dt in ("float8_e4m3fn_x4", "float8_e4m3fn"):
                out.append("N4")
        return out

    FACT_TEXT = {
        "D16": "CONFIRMED: containers address x4 (re-facts §1); x4 casts unpack to 4 floats (re-facts §4)",
        "N1": "CONFIRMED: casts go src -> fp32 -> dst with RNE; equal dtypes copy bytes (re-facts §4)",
        "N2": "CONFIRMED: refsim FP8 saturates overflow and +-Inf to +-max (re-facts §4)",
        "N3": "CONFIRMED: bf16 / fp16 encode by RNE, refsim NaN codes (re-facts §4)",
        "D2": "CONFIRMED: the TransposeOps table, the name gives the destination axis order (re-facts §3)",
        "D8": "CONFIRMED: Select's predicate is strictly 0 or 1 (seed 000 §5.5)",
        "D9": "SEED-STRONG: CopyPredicated reads its predicate as an integer, non-zero = true (seed 000 §5.5)",
        "D10": "SEED-STRONG: CopyPredicated's doEngineAccumReduce side effect (seed 000 §5.5)",
        "D14": "CONFIRMED: AffineSelect compares the Iota affine value with 0 (seed 000 §5.4)",
        "S16": "CONFIRMED: folds reuse the arithmetic core's per-dtype accumulate (seed 000 §2.3, re-facts §8)",
        "N15": "CONFIRMED: cast_copy_or_accumulate adds for the 8 reducible dtypes under FP8 config 0 (re-facts §8)",
    }

    def facts(*dts, extra=()):
        ids = ["D16", "N1"] if any(d in X4 for d in dts) else ["N1"]
        if any(d in ("float8_e4m3fn_x4", "float8_e5m2_x4", "float8_e4m3fn", "float8e5") for d in dts):
            ids.append("N2")
        if any(d in ("bfloat16", "float16") for d in dts):
            ids.append("N3")
        ids += [e for e in extra if e not in ids]
        return [f"{i} ({FACT_TEXT[i]})" for i in ids]

    # ============================================================ K1 Select
    SEL = ("K1 (s16 contract): Select elementwise over values, an x4 operand = 4 values per container in lane "
           "order N9; T/F converted to the output dtype lane by lane; pred exactly 0/1 through fp32 (D8)")

    def select_x4(name, note, out_dt, pdt, t, f, p=4, fo=6, pred_bits=None, early=False, fault=None):
        """out_dt x4 with fo containers per row (n = 4 fo values), or non-x4 with n elements.
        t / f: ("ap", dt) or ("imm", value)."""
        n = fo * 4
        oel = fo if out_dt in X4 else n
        bits = RNG.integers(0, 2, (p, n)) if pred_bits is None else pred_bits
        if pdt in X4:
            one = lane_encode(np.ones(1, F32), pdt)[0]
            mzero = lane_encode(np.array([-0.0], F32), pdt)[0]
            zero_codes = np.where(RNG.integers(0, 2, (p, n)) == 1, mzero, 0).astype(np.uint8)
            praw = pack(np.where(bits == 1, one, zero_codes).astype(np.uint8), pdt)
        elif pdt == "float32":
            praw = np.where(bits == 1, F32(1), np.where(RNG.integers(0, 2, (p, n)) == 1, F32(-0.0), F32(0))).astype(F32)
            if pred_bits is not None:
                praw = np.asarray(pred_bits, F32)
        elif pdt in ("bfloat16", "float16"):
            praw = encode(bits.astype(F32), pdt)
        else:
            praw = np.asarray(bits).astype(STORE[pdt])
        g = Prog()
        pt = g.tile_in("pred", pdt, praw)
        ins = [tile(pt, pdt, p, praw.shape[1])]
        us = []
        for nm, spec in (("t", t), ("f", f)):
            if spec[0] == "ap":
                dt = spec[1]
                raw = raw_vals((p, n), dt, scale=spec[2] if len(spec) > 2 else 8.0)
                if len(spec) > 3:
                    raw = spec[3]
                ins.append(tile(g.tile_in(nm, dt, raw), dt, p, raw.shape[1]))
                us.append(units(raw, dt, out_dt))
            else:
                ins.append(imm(spec[1]))
                us.append(imm_units(spec[1], (p, n), out_dt))
        prev = x4_random((p, fo), out_dt) if out_dt in X4 else encode(fp32_vals((p, n)), out_dt)
        yt = g.tile_in("prev", out_dt, prev)
        if early:
            g.save(yt, "early", out_dt, p, oel, prev)
        g.inst("Select", ins, [tile(yt, out_dt, p, oel)])
        if fault is None:
            pv = values(praw, pdt)
            assert ((pv == 0) | (pv == 1)).all()
            g.save(yt, "y", out_dt, p, oel, finish(np.where(pv == 1, us[0], us[1]), out_dt))
        chosen = set(lane_cite(out_dt, pdt, *[s[1] for s in (t, f) if s[0] == "ap"]))
        case(name, g, f"{note} ({SEL})", choices=sorted({"K1", "D8"} | chosen), fault=fault,
             facts=facts(out_dt, pdt, *[s[1] for s in (t, f) if s[0] == "ap"], extra=("D8",)))

    select_x4("x4_select_e4m3fn_pred_int32", "Select into float8_e4m3fn_x4 (6 containers per row) with an int32 "
              "predicate of 24 values per row (one per lane), fp32 T/F tensors of 24 values", "float8_e4m3fn_x4",
              "int32", ("ap", "float32"), ("ap", "float32"))
    select_x4("x4_select_e5m2_pred_float32_minus_zero", "Select into float8_e5m2_x4 with a float32 predicate of "
              "1.0 / 0.0 / -0.0 per lane (-0.0 is false), fp32 T/F", "float8_e5m2_x4", "float32",
              ("ap", "float32", 1000.0), ("ap", "float32", 1000.0))
    select_x4("x4_select_fp4_pred_uint8", "Select into float4_e2m1fn_x4 (nibble lanes) with a uint8 predicate per lane, "
              "fp32 T/F (RNE to E2M1, saturating at 6.0)", "float4_e2m1fn_x4", "uint8", ("ap", "float32", 3.0),
              ("ap", "float32", 3.0))
    select_x4("x4_select_e4m3fn_imm_true_imm_false", "Select into float8_e4m3fn_x4, on_true imm 2.75 (0x43 in every "
              "true lane), on_false imm -0.0 (0x80)", "float8_e4m3fn_x4", "int32", ("imm", 2.75), ("imm", -0.0))
    select_x4("x4_select_fp4_imm_rounds_true_ap_false", "Select into float4_e2m1fn_x4, on_true imm 2.75 cast to the "
              "lane dtype (RNE -> 3.0, nibble 0x5), on_false a bf16 tensor of 24 values per row", "float4_e2m1fn_x4",
              "uint8", ("imm", 2.75), ("ap", "bfloat16", 2.0))
    select_x4("x4_select_e5m2_tensor_true_imm_false", "Select into float8_e5m2_x4, on_true an fp32 tensor, on_false "
              "imm 1e6 (saturates to 57344 = 0x7B, refsim FP8, N2)", "float8_e5m2_x4", "uint16",
              ("ap", "float32", 100.0), ("imm", 1e6))
    # T/F already x4 of the output dtype: lane bits copied, NaN lanes included (N1 equal dtypes copy bytes)
    tl = x4_random((4, 6), "float8_e4m3fn_x4")
    tl.reshape(-1)[:3] = [0xFF7F0080, 0x7F7F7F7F, 0x80FF0001]
    select_x4("x4_select_e4m3fn_x4_tensors_bit_exact", "Select float8_e4m3fn_x4 T/F into float8_e4m3fn_x4: true lanes "
              "copy T's lane bits, false lanes F's, NaN lanes 0x7F / 0xFF included (equal dtypes copy bits, N1)",
              "float8_e4m3fn_x4", "int32", ("ap", "float8_e4m3fn_x4", 8.0, tl), ("ap", "float8_e4m3fn_x4"))
    select_x4("x4_select_e4m3fn_x4_tensors_into_e5m2_x4", "Select float8_e4m3fn_x4 T/F into float8_e5m2_x4: each lane "
              "widened to fp32 and narrowed to E5M2 (RNE)", "float8_e5m2_x4", "uint8", ("ap", "float8_e4m3fn_x4"),
              ("ap", "float8_e4m3fn_x4"))
    select_x4("x4_select_x4_tensors_into_float32", "Select float4_e2m1fn_x4 T and float8_e5m2_x4 F (6 containers per "
              "row each) into a float32 output of 24 elements per row: each lane one output value, in lane order",
              "float32", "uint8", ("ap", "float4_e2m1fn_x4"), ("ap", "float8_e5m2_x4"))
    select_x4("x4_select_pred_e4m3fn_x4_out_float32", "Select with a float8_e4m3fn_x4 predicate (lanes 0x38 = 1.0, "
              "0x00 / 0x80 = +-0) read lane by lane, fp32 T/F and output of 24 values per row", "float32",
              "float8_e4m3fn_x4", ("ap", "float32"), ("ap", "float32"))
    select_x4("x4_select_pred_fp4_x4_out_e5m2_x4", "Select with a float4_e2m1fn_x4 predicate (nibbles 0x2 = 1.0, "
              "0x0 / 0x8 = +-0) into float8_e5m2_x4, fp32 T/F", "float8_e5m2_x4", "float4_e2m1fn_x4",
              ("ap", "float32", 50.0), ("ap", "float32", 50.0))
    pb = np.ones((4, 24), np.int64)
    pb[0, 13] = 2
    select_x4("x4_select_pred_int32_2_fault", "Select into float8_e4m3fn_x4 with an int32 predicate holding 2 at "
              "value 13 (container 3, lane 1) -> fault bad-field naming the element 13, before anything is written; "
              "the earlier Save is intact", "float8_e4m3fn_x4", "int32", ("ap", "float32"), ("imm", 0.0),
              pred_bits=pb, early=True, fault=("bad-field", "13"))

    # operands counted in containers instead of values: refused like any count mismatch (X4)
    def count_error(name, note, opcode, out_dt, ins_of, fields):
        g = Prog()
        p, fo = 4, 6
        tiles = []
        for nm, dt, n in ins_of:
            # error cases write no data; zeros keep the module RNG's stream (and the later cases) as they were
            raw = np.zeros((p, n), STORE[dt])
            tiles.append(tile(g.tile_in(nm, dt, raw), dt, p, n))
        g.sb("yt", out_dt, p, fo)
        k = g.inst(opcode, tiles, [tile("yt", out_dt, p, fo)], **fields)
        # one diagnostic per operand whose value count differs from the output's (K1: every operand
        # holds one value per output value)
        lanes = lambda dt: 4 if dt in X4 else 1
        want = fo * lanes(out_dt)
        bad = [j for j, (_, dt, n) in enumerate(ins_of) if n * lanes(dt) != want]
        case(name, g, f"{note}: a count mismatch, refused by validation before the run (K1/K2; x4_cases.py X4)",
             choices=["K1" if opcode != "TensorScalarAffineSelect" else "K2"],
             errors=[("ap-shape", f"({opcode}) › ins[{j}].ap", "") for j in bad])

    count_error("x4_select_pred_counts_containers_error", "Select into float8_e4m3fn_x4 (6 containers = 24 values per "
                "row) with a uint8 predicate and fp32 T/F of 6 elements per row", "Select", "float8_e4m3fn_x4",
                [("pred", "uint8", 6), ("t", "float32", 6), ("f", "float32", 6)], {})
    count_error("x4_cpred_src_counts_containers_error", "CopyPredicated into float4_e2m1fn_x4 (6 containers = 24 "
                "values per row) from an fp32 source of 6 elements per row, uint8 predicate of 24", "CopyPredicated",
                "float4_e2m1fn_x4", [("src", "float32", 6), ("pred", "uint8", 24)], {})
    count_error("x4_asel_input_counts_containers_error", "AffineSelect into float8_e5m2_x4 (6 containers = 24 values "
                "per row) from an fp32 input of 6 elements per row", "TensorScalarAffineSelect", "float8_e5m2_x4",
                [("x", "float32", 6)], dict(base=0, pattern=[[1, 6]], channel_multiplier=0, compare_op="is_ge",
                                            fill_value=0.0))

    # ============================================================ K1 CopyPredicated
    CPR = ("K1 (s16 contract): CopyPredicated elementwise over values, out lane <- pred ? src lane : out lane, a false "
           "lane keeps its stored bits (byte / nibble merge); pred converted to uint32, non-zero = true (D9)")

    def cpred_x4(name, note, out_dt, pdt, src, p=4, fo=6, reverse=None, prev=None, praw=None, side=None,
                 extra=()):
        """src: ("ap", dt[, raw]) or ("imm", v). side: (reduce_op, acc, side_dt) adds outs[1]."""
        n = fo * 4
        oel = fo if out_dt in X4 else n
        if praw is None:
            bits = RNG.integers(0, 2, (p, n))
            if pdt in X4:
                one = lane_encode(np.ones(1, F32), pdt)[0]
                praw = pack(np.where(bits == 1, one, 0).astype(np.uint8), pdt)
            else:
                praw = bits.astype(STORE[pdt])
        g = Prog()
        pt = g.tile_in("pred", pdt, praw)
        if src[0] == "ap":
            sdt = src[1]
            sraw = src[2] if len(src) > 2 else raw_vals((p, n), sdt)
            s_op = tile(g.tile_in("src", sdt, sraw), sdt, p, sraw.shape[1])
            su = units(sraw, sdt, out_dt)
        else:
            s_op = imm(src[1])
            su = imm_units(src[1], (p, n), out_dt)
        if prev is None:
            prev = x4_random((p, fo), out_dt) if out_dt in X4 else encode(fp32_vals((p, n)), out_dt)
        yt = g.tile_in("prev", out_dt, prev)
        outs = [tile(yt, out_dt, p, oel)]
        fields = {} if reverse is None else {"reverse_pred": reverse}
        if side is not None:
            op, acc, sdt2, r0 = side
            rt = g.tile_in("side", sdt2, r0)
            outs.append(tile(rt, sdt2, p, 1))
            fields["reduce_op"] = op
            if acc is not None:
                fields["accumulator_cmd"] = acc
        g.inst("CopyPredicated", [s_op, tile(pt, pdt, p, praw.shape[1])], outs, **fields)
        on = encode(values(praw, pdt), "uint32") != 0
        if reverse:
            on = ~on
        pu = unpack(prev, out_dt) if out_dt in X4 else prev
        y = finish(np.where(on, su, pu), out_dt)
        g.save(yt, "y", out_dt, p, oel, y)
        chosen = {"K1", "D9"} | set(lane_cite(out_dt, pdt, src[1] if src[0] == "ap" else "float32")) | set(extra)
        if side is not None:
            fold = fold_rows(values(y, out_dt), op)
            if acc in ("Accumulate", "AddAccumulate", "LoadAccumulate"):
                want = accumulate(r0, encode(fold, sdt2), sdt2)
                chosen |= {"S16"}
            else:
                want = encode(fold, sdt2)
            g.save(rt, "r", sdt2, p, 1, want)
            chosen |= {"D10"}
        fx = ("D9", "D10", "S16", "N15") if side is not None and acc in ("Accumulate", "AddAccumulate", "LoadAccumulate") \
            else (("D9", "D10") if side is not None else ("D9",))
        case(name, g, f"{note} ({CPR})", choices=sorted(chosen),
             facts=facts(out_dt, pdt, src[1] if src[0] == "ap" else "float32",
                         *([side[2]] if side is not None else []), extra=fx))

    def accumulate(prev_raw, result_raw, dt):
        """The shared accumulate (S16): floats widened to fp32, result + prev in fp32, narrowed back by
        RNE with FP8 config 0 (overflow -> Inf; no case here overflows or holds a NaN)."""
        s = (decode(result_raw, dt) + decode(prev_raw, dt)).astype(F32)
        assert not np.isnan(s).any()
        if dt == "float32":
            return s
        if dt == "bfloat16":
            return s.astype(md.bfloat16).view(np.uint16)
        if dt == "float16":
            return s.astype(np.float16)
        raise ValueError(dt)

    nanprev = x4_random((4, 6), "float8_e4m3fn_x4")
    nanprev.reshape(-1)[:6] = [0xFF7FFF7F, 0x7F7F7F7F, 0xFFFFFFFF, 0x807F00FF, 0x7FFF7FFF, 0x00FF007F]
    cpred_x4("x4_cpred_e4m3fn_false_lanes_keep_nan", "CopyPredicated fp32 src (24 values per row) into a pre-filled "
             "float8_e4m3fn_x4 whose lanes include NaN codes 0x7F / 0xFF, int32 predicate per lane: false lanes keep "
             "their bits exactly (no decode / encode round trip)", "float8_e4m3fn_x4", "int32", ("ap", "float32"),
             prev=nanprev)
    fp4prev = pack(np.tile(np.arange(16, dtype=np.uint8), 6).reshape(4, 24), "float4_e2m1fn_x4")
    cpred_x4("x4_cpred_fp4_nibble_merge", "CopyPredicated fp32 src into a float4_e2m1fn_x4 pre-filled with every "
             "nibble code 0x0..0xF (0x8 = -0), uint8 predicate per lane: true nibbles replaced, false nibbles kept",
             "float4_e2m1fn_x4", "uint8", ("ap", "float32"), prev=fp4prev)
    e5src = x4_random((4, 6), "float8_e5m2_x4")
    e5src.reshape(-1)[:2] = [0x7DFE7F80, 0xFF7E7C00]
    e5prev = x4_random((4, 6), "float8_e5m2_x4")
    e5prev.reshape(-1)[:2] = [0xFD7D7EFF, 0x7F7FFEFE]
    cpred_x4("x4_cpred_e5m2_x4_src_same_dtype_bits", "CopyPredicated float8_e5m2_x4 src into float8_e5m2_x4, both "
             "holding NaN lanes (0x7D..0x7F, 0xFD..0xFF): true lanes take the source lane's bits, false lanes keep "
             "theirs (equal dtypes copy bits, N1)", "float8_e5m2_x4", "uint8", ("ap", "float8_e5m2_x4", e5src),
             prev=e5prev)
    cpred_x4("x4_cpred_fp4_reverse_pred", "CopyPredicated bf16 src into float4_e2m1fn_x4 with reverse_pred true (a "
             "lane is copied where the uint16 predicate is 0)", "float4_e2m1fn_x4", "uint16", ("ap", "bfloat16"),
             reverse=True)
    cpred_x4("x4_cpred_fp4_src_imm_rounds", "CopyPredicated imm 3.5 into float4_e2m1fn_x4: cast to the lane dtype, "
             "a tie between 3 and 4 -> 4.0 (nibble 0x6, even mantissa)", "float4_e2m1fn_x4", "uint8", ("imm", 3.5))
    cpred_x4("x4_cpred_e4m3fn_src_imm", "CopyPredicated imm -3.5 into float8_e4m3fn_x4 (0xC6 in every true lane)",
             "float8_e4m3fn_x4", "int32", ("imm", -3.5))
    # an x4 predicate read lane by lane through the uint32 cast: 0.5 -> 0 (RNE) false, 1.5 -> 2 true,
    # -1 -> 0 (clamped) false, -0 false
    pl = lane_encode(RNG.choice(np.array([0.0, -0.0, 0.5, 1.0, 1.5, -1.0, 2.0, 6.0], F32), (4, 24)), "float4_e2m1fn_x4")
    cpred_x4("x4_cpred_pred_fp4_x4_out_float32", "CopyPredicated fp32 src into fp32 (24 values per row) with a "
             "float4_e2m1fn_x4 predicate read lane by lane through the uint32 cast: 0.5 -> 0 false, 1.5 -> 2 true, "
             "-1 -> 0 false, +-0 false", "float32", "float4_e2m1fn_x4", ("ap", "float32"),
             praw=pack(pl, "float4_e2m1fn_x4"))
    pe = lane_encode(RNG.choice(np.array([0.0, -0.0, 0.25, 0.5, 0.75, 1.0, -2.0, 300.0], F32), (4, 24)), "float8_e4m3fn_x4")
    cpred_x4("x4_cpred_pred_e4m3fn_x4_out_e5m2_x4", "CopyPredicated fp32 src into float8_e5m2_x4 with a "
             "float8_e4m3fn_x4 predicate per lane (0.25 / 0.5 -> 0 false, 0.75 -> 1 true, -2 -> 0 false)",
             "float8_e5m2_x4", "float8_e4m3fn_x4", ("ap", "float32"), praw=pack(pe, "float8_e4m3fn_x4"))

    CPS = "D10 side output; K1: over an x4 outs[0] the fold runs over the row's lane values in lane order"

    def side_case(name, note, out_dt, op, acc, side_dt, extra=()):
        p, fo = 4, 6
        r0 = fp32_vals((p, 1), 100.0)
        r0 = r0 if side_dt == "float32" else encode(r0, side_dt)
        if op == "mult":
            sraw = (1.0 + 0.25 * RNG.standard_normal((p, fo * 4))).astype(F32)
            prev = pack(lane_encode((1.0 + 0.25 * RNG.standard_normal((p, fo * 4))).astype(F32), out_dt), out_dt)
        else:
            sraw = fp32_vals((p, fo * 4), 4.0)
            prev = x4_random((p, fo), out_dt, nan=False)
        cpred_x4(name, f"{note} ({CPS})", out_dt, "uint8", ("ap", "float32", sraw), prev=prev,
                 side=(op, acc, side_dt, r0), extra=extra)

    side_case("x4_cpred_side_add_e4m3fn_x4", "CopyPredicated into float8_e4m3fn_x4 with a side output, reduce_op add, "
              "no acc: side[p] = the fp32 sum of row p's 24 lane values after the copy, written", "float8_e4m3fn_x4",
              "add", None, "float32")
    side_case("x4_cpred_side_max_fp4_x4_accumulate", "CopyPredicated into float4_e2m1fn_x4, side reduce_op max, "
              "Accumulate: the max over the row's lanes added into the side (S16)", "float4_e2m1fn_x4", "max",
              "Accumulate", "float32")
    side_case("x4_cpred_side_mult_e5m2_x4_bfloat16_side", "CopyPredicated into float8_e5m2_x4, side reduce_op mult "
              "in lane order, written into a bf16 side (RNE of the fp32 fold)", "float8_e5m2_x4", "mult", "Zero",
              "bfloat16")
    # L1 on an x4 outs[0]
    side_case("loadacc_cpred_side_add_over_e4m3fn_x4", "CopyPredicated into float8_e4m3fn_x4, side reduce_op add, "
              "LoadAccumulate: the lane-order fold added into what the side holds (L1)", "float8_e4m3fn_x4", "add",
              "LoadAccumulate", "float32", extra=("L1",))

    # ============================================================ K2 AffineSelect
    ASEL = ("K2 (s16 contract): the affine value is computed per AP element = per container; all 4 lanes share "
            "its predicate: out lane k = cmp(v, 0) ? in lane k : fill_value (cast to the lane dtype); D14")

    def asel_x4(name, note, cmp, base, pattern, cm, in_dt, out_dt, fill, parts=6, extra=()):
        v = iota_values(parts, base, pattern, cm)
        fo = v.shape[1]
        n = fo * 4
        if in_dt in X4:
            xin = x4_random((parts, fo), in_dt)
        else:
            xin = raw_vals((parts, n), in_dt, 6.0)
        pred = np.repeat(CMP[cmp](v, 0), 4, axis=1)
        assert pred.any() and not pred.all()
        y = finish(np.where(pred, units(xin, in_dt, out_dt), imm_units(fill, (parts, n), out_dt)), out_dt)
        g = Prog()
        xt = g.tile_in("x", in_dt, xin)
        prev = x4_random((parts, fo), out_dt)
        yt = g.tile_in("prev", out_dt, prev)
        g.inst("TensorScalarAffineSelect", [tile(xt, in_dt, parts, xin.shape[1])], [tile(yt, out_dt, parts, fo)],
               base=base, pattern=pattern, channel_multiplier=cm, compare_op=cmp, fill_value=fill)
        g.save(yt, "y", out_dt, parts, fo, y)
        case(name, g, f"{note} ({ASEL})", choices=sorted({"K2"} | set(lane_cite(out_dt, in_dt)) | set(extra)),
             facts=facts(out_dt, in_dt, extra=("D14",)))

    asel_x4("x4_asel_is_ge_fp32_in_e4m3fn_x4", "AffineSelect is_ge, v = -2 + p - c over 8 containers per row, fp32 "
            "input of 32 values per row (4 consecutive per container) into float8_e4m3fn_x4, fill -3.0 (0xC4)",
            "is_ge", -2, [[-1, 8]], 1, "float32", "float8_e4m3fn_x4", -3.0)
    asel_x4("x4_asel_is_lt_fp4_x4_same_dtype", "AffineSelect is_lt on float4_e2m1fn_x4 in and out (lane bits copied "
            "where kept), fill 1.5 (nibble 0x3)", "is_lt", 3, [[-1, 6]], -1, "float4_e2m1fn_x4", "float4_e2m1fn_x4",
            1.5)
    asel_x4("x4_asel_is_equal_bf16_in_e5m2_x4", "AffineSelect is_equal with a 2-pair pattern [[-2,3],[1,4]] over 12 "
            "containers, cm 1, bf16 input of 48 values per row into float8_e5m2_x4, fill 0.0", "is_equal", -4,
            [[-2, 3], [1, 4]], 1, "bfloat16", "float8_e5m2_x4", 0.0)
    asel_x4("x4_asel_not_equal_e4m3fn_x4_in_e5m2_x4", "AffineSelect not_equal, float8_e4m3fn_x4 input (NaN lanes "
            "included: refsim narrows them to 0x7E) into float8_e5m2_x4, fill -1.5", "not_equal", 0, [[1, 2], [-1, 3]],
            1, "float8_e4m3fn_x4", "float8_e5m2_x4", -1.5, extra=("N4",))
    asel_x4("x4_asel_is_gt_fp32_in_e4m3fn_x4_fill_saturates", "AffineSelect is_gt, fp32 input into float8_e4m3fn_x4, "
            "fill fp32.min saturates (refsim FP8, N2) to -448 (0xFE) in every lane of a dropped container", "is_gt", -10,
            [[3, 2], [-1, 4]], 2, "float32", "float8_e4m3fn_x4", float(np.finfo(F32).min))
    asel_x4("x4_asel_is_le_fp32_in_fp4_x4_fill_rounds", "AffineSelect is_le, fp32 input into float4_e2m1fn_x4, fill "
            "5.0 (RNE tie between 4 and 6 -> 4.0, nibble 0x6)", "is_le", 1, [[1, 5]], -1, "float32",
            "float4_e2m1fn_x4", 5.0)

    # ============================================================ K3 DMACopy Transpose with an x4 cast
    TRX = ("K3 (s16 contract): convert in the source's AP order, pack 4 consecutive values along the source X into "
           "[W,Z,Y,X/4] (or unpack an x4 source to [W,Z,Y,4X]; x4->x4 keeps the shape), then dst = "
           "numpy.transpose(packed, perm) with dst.num[k] = packed.num[perm[k]] (D2)")

    def fp8_grid(shape, dt):
        """fp32 values spread over the lane format's codes (few repeats), some just off a code (RNE back)."""
        lane = X4[dt][0]
        codes = np.arange(16 if lane == "fp4" else 256, dtype=np.uint8)
        vals = lane_decode(codes, dt)
        vals = vals[np.isfinite(vals)]
        v = RNG.permutation(np.resize(RNG.permutation(vals), int(np.prod(shape)))).astype(F32)
        v[::3] = (v[::3] * F32(1 + 2 ** -6)).astype(F32)
        return v.reshape(shape[0], -1)

    def transpose_x4(name, note, code, src_dt, dst_dt, dims, src_raw=None, extra=()):
        perm = REFACTS[code]
        w, z, yy, x = dims
        if src_raw is None:
            if src_dt in X4:
                src_raw = x4_random((w, z * yy * x), src_dt, nan=dst_dt in X4)
            elif dst_dt in X4:
                src_raw = fp8_grid(dims, dst_dt)
                if src_dt != "float32":
                    src_raw = encode(src_raw, src_dt)
            else:
                raise ValueError("one side must be x4")
        if src_dt in X4 and dst_dt in X4:
            packed = finish(units(src_raw, src_dt, dst_dt), dst_dt).reshape(dims)
        elif dst_dt in X4:
            assert x % 4 == 0
            packed = pack(lane_encode(values(src_raw, src_dt), dst_dt), dst_dt).reshape(w, z, yy, x // 4)
        else:
            packed = encode(values(src_raw, src_dt), dst_dt).reshape(w, z, yy, 4 * x)
        d4 = np.transpose(packed, perm)
        dn = d4.shape
        assert dn == tuple(packed.shape[k] for k in perm)
        g = Prog()
        xt = g.tile_in("x", src_dt, src_raw)
        g.sb("yt", dst_dt, dn[0], dn[1] * dn[2] * dn[3])
        g.inst("DMACopy", [ap(xt, src_dt, four_level(dims))], [ap("yt", dst_dt, four_level(dn))], mode="Transpose",
               transpose_op=TNAMES[code], engine="Pool")
        g.save("yt", "y", dst_dt, dn[0], dn[1] * dn[2] * dn[3], d4.reshape(dn[0], -1))
        case(name, g, f"DMACopy Transpose {TNAMES[code]} (code {code}) {src_dt} [W,Z,Y,X] = {dims} -> {dst_dt}, "
             f"packed {tuple(packed.shape)}, dst nums {dn}: {note} ({TRX})",
             choices=sorted({"K3", "D2"} | set(lane_cite(src_dt, dst_dt)) | set(extra)),
             facts=facts(src_dt, dst_dt, extra=("D2",)))

    for code, dims in [(12, (3, 2, 5, 8)), (1, (2, 3, 4, 12)), (5, (4, 3, 2, 8)), (11, (2, 5, 3, 4)), (8, (3, 4, 2, 8))]:
        transpose_x4(f"x4_transpose_{code:02d}_{TNAMES[code].lower()}_fp32_to_e4m3fn_x4",
                     "fp32 values narrowed to E4M3FN lanes (RNE), packed 4 per container along X", code, "float32",
                     "float8_e4m3fn_x4", dims)
    for code, dims in [(12, (3, 2, 5, 2)), (3, (2, 3, 4, 3)), (10, (2, 2, 3, 2))]:
        transpose_x4(f"x4_transpose_{code:02d}_{TNAMES[code].lower()}_e4m3fn_x4_to_fp32",
                     "each container unpacked to 4 fp32 values along X (lane k at 4c + k), then permuted", code,
                     "float8_e4m3fn_x4", "float32", dims)
    for code, dims in [(12, (2, 3, 4, 5)), (7, (3, 2, 4, 3)), (2, (2, 4, 3, 2))]:
        transpose_x4(f"x4_transpose_{code:02d}_{TNAMES[code].lower()}_e4m3fn_x4_to_e5m2_x4",
                     "each lane converted E4M3FN -> E5M2 (RNE; NaN lanes -> 0x7E), shape kept, containers permuted",
                     code, "float8_e4m3fn_x4", "float8_e5m2_x4", dims)
    # saturation and NaN on the way in: refsim FP8 (N2) saturates +-1000 to +-448, NaN -> 0x7F (N4)
    sv = fp8_grid((2, 3, 2, 8), "float8_e4m3fn_x4")
    sv.reshape(-1)[[0, 5, 17, 40, 77]] = [1000.0, -1000.0, np.nan, np.inf, -np.inf]
    transpose_x4("x4_transpose_13_xywz_fp32_to_e4m3fn_x4_saturates", "fp32 +-1000 and +-Inf saturate to 0x7E / 0xFE "
                 "(refsim FP8, N2), NaN -> 0x7F (N4)", 13, "float32", "float8_e4m3fn_x4", (2, 3, 2, 8), src_raw=sv)
    transpose_x4("x4_transpose_12_xyzw_fp32_to_fp4_x4", "fp32 values narrowed to E2M1FN nibbles (RNE), packed 4 per "
                 "uint16 container along X", 12, "float32", "float4_e2m1fn_x4", (2, 3, 4, 8))
    transpose_x4("x4_transpose_11_xzyw_fp4_x4_to_fp32", "each uint16 container unpacked to 4 fp32 values (nibble k at "
                 "4c + k), then permuted", 11, "float4_e2m1fn_x4", "float32", (3, 2, 4, 3))
    transpose_x4("x4_transpose_06_zyxw_bf16_to_e5m2_x4", "bf16 values narrowed to E5M2 lanes, packed along X", 6,
                 "bfloat16", "float8_e5m2_x4", (2, 3, 2, 8))
    transpose_x4("x4_transpose_04_zwyx_e5m2_x4_to_bf16", "E5M2 lanes widened (exactly) into bf16 values along X", 4,
                 "float8_e5m2_x4", "bfloat16", (2, 3, 4, 2))

    # X not a multiple of 4 when packing -> fault naming outs[0]; the earlier Save stays
    for tag, dst_dt, dims, code in [("x6_fp32_to_e4m3fn_x4", "float8_e4m3fn_x4", (2, 3, 4, 6), 12),
                                    ("x10_fp32_to_fp4_x4", "float4_e2m1fn_x4", (2, 2, 3, 10), 1)]:
        w, z, yy, x = dims
        src = fp32_vals((w, z * yy * x))
        packed_nums = (w, z, yy, x // 4 + 1)
        dn = tuple(packed_nums[k] for k in REFACTS[code])
        g = Prog()
        xt = g.tile_in("x", "float32", src)
        prev = x4_random((dn[0], dn[1] * dn[2] * dn[3]), dst_dt)
        yt = g.tile_in("prev", dst_dt, prev)
        g.save(yt, "early", dst_dt, dn[0], dn[1] * dn[2] * dn[3], prev)
        g.inst("DMACopy", [ap(xt, "float32", four_level(dims))], [ap(yt, dst_dt, four_level(dn))], mode="Transpose",
               transpose_op=TNAMES[code], engine="Pool")
        case(f"x4_transpose_{tag}_fault", g,
             f"DMACopy Transpose {TNAMES[code]} fp32 [W,Z,Y,X] = {dims} -> {dst_dt}: X = {x} is not a multiple of 4, "
             f"so the source cannot pack -> a fault naming outs[0] (read as kind shape, see x4_cases.py X1), before "
             f"anything is written; the earlier Save is intact ({TRX})", choices=["K3", "D2"],
             fault=("shape", "outs[0]"), facts=facts("float32", dst_dt, extra=("D2",)))

    # ============================================================ L1 on CopyPredicated's side output
    LCPS = ("L1 (s16 contract): LoadAccumulate on a kernel without an initial-value operand accumulates into what the "
            "output holds through the shared accumulate (S16), exactly as Accumulate; D10 side output")

    def lcp(name, note, op, acc, side_dt, chain=False, r0_scale=100.0):
        p, f = (4 if side_dt == "float32" else 64), 10
        src, prev = fp32_vals((p, f)), fp32_vals((p, f))
        if op == "mult":
            src = (1.0 + 0.25 * RNG.standard_normal((p, f))).astype(F32)
            prev = (1.0 + 0.25 * RNG.standard_normal((p, f))).astype(F32)
        praw = RNG.integers(0, 2, (p, f)).astype(np.uint8)
        r0 = fp32_vals((p, 1), r0_scale)
        r0 = r0 if side_dt == "float32" else encode(r0, side_dt)
        g = Prog()
        pt = g.tile_in("pred", "uint8", praw)
        st = g.tile_in("src", "float32", src)
        yt = g.tile_in("prev", "float32", prev)
        if chain:
            # the side is first written by an earlier CopyPredicated (acc absent), then loaded from
            pt2 = g.tile_in("pred0", "uint8", (1 - praw).astype(np.uint8))
            g.sb("side", side_dt, p, 1)
            rt = "side"
            g.inst("CopyPredicated", [tile(st, "float32", p, f), tile(pt2, "uint8", p, f)],
                   [tile(yt, "float32", p, f), tile(rt, side_dt, p, 1)], reduce_op=op)
            prev = np.where(1 - praw != 0, src, prev).astype(F32)
            r0 = encode(fold_rows(prev, op), side_dt)
            src2 = fp32_vals((p, f))
            st = g.tile_in("src2", "float32", src2)
            src = src2
        else:
            rt = g.tile_in("side", side_dt, r0)
        g.inst("CopyPredicated", [tile(st, "float32", p, f), tile(pt, "uint8", p, f)],
               [tile(yt, "float32", p, f), tile(rt, side_dt, p, 1)], reduce_op=op, accumulator_cmd=acc)
        y = np.where(praw != 0, src, prev).astype(F32)
        fold = fold_rows(y, op)
        if acc in ("Accumulate", "AddAccumulate", "LoadAccumulate"):
            want = accumulate(r0, encode(fold, side_dt), side_dt)
        else:
            want = encode(fold, side_dt)
        if side_dt != "float32" and acc == "LoadAccumulate":
            once = encode(decode(r0, side_dt) + fold, side_dt)
            assert (want != once).any(), "narrowing the fold first must matter somewhere"
        g.save(yt, "y", "float32", p, f, y)
        g.save(rt, "r", side_dt, p, 1, want)
        case(name, g, f"{note} ({LCPS})", choices=sorted({"L1", "D10", "S16"}),
             facts=facts("float32", side_dt, extra=("D9", "D10", "S16", "N15")))

    lcp("loadacc_cpred_side_add_float32", "CopyPredicated side output, add, LoadAccumulate: side = what it held + the "
        "row's fp32 sum", "add", "LoadAccumulate", "float32")
    lcp("loadacc_cpred_side_add_float32_accumulate", "as loadacc_cpred_side_add_float32 with Accumulate (the same rule, "
        "for contrast)", "add", "Accumulate", "float32")
    lcp("loadacc_cpred_side_max_bfloat16_side", "CopyPredicated side output, max, LoadAccumulate into a bf16 side over "
        "a 10-value row: the fold narrowed to bf16 first, then added in fp32 to the held bf16 and narrowed back", "max",
        "LoadAccumulate", "bfloat16")
    lcp("loadacc_cpred_side_mult_float16_side", "CopyPredicated side output, mult, LoadAccumulate into an fp16 side",
        "mult", "LoadAccumulate", "float16", r0_scale=1.0)
    lcp("loadacc_cpred_side_chain_after_write", "a first CopyPredicated writes the side (acc absent), a second one with "
        "LoadAccumulate adds its row sums to that earlier result", "add", "LoadAccumulate", "float32", chain=True)
    lcp("loadacc_cpred_side_zeroaccumulate_overwrites", "CopyPredicated side output, add, ZeroAccumulate: written, the "
        "held side ignored (L1: Zero / ZeroAccumulate overwrite)", "add", "ZeroAccumulate", "float32")
