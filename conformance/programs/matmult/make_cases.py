#!/usr/bin/env python3
"""Writes the `programs/matmult` conformance suite: BIR JSON programs with Matmult (PE) into PSUM,
.npy inputs and the expected .npy outputs, computed here with NumPy / ml_dtypes (pinned in
oracle/requirements.txt) from the Matmult spec M1-M9 (README.md), independently of birsim.

The oracle (`dot`, `Psum`):
  * M2 operands: ins[0] = moving (K partitions x N free elements, N in AP order), ins[1] =
    stationary (K x M), outs[0] = PSUM fp32 (M partitions x N);
    out[m, n] = sum_k (mov[k, n] - zpI) * (st[k, m] - zpW), zero points for uint8 operands only;
  * M3 arithmetic: operands widened exactly to fp32 (uint8 minus its zero point as an exact integer,
    then fp32), each product one NumPy float32 multiply (mov * st), the sum an explicit loop
    k = 0..K-1 from +0.0 with NumPy float32 adds (acc = acc + p_k): no FMA, no pairwise sum;
  * M4 PSUM: a per-element "written" shadow; START clears 2^psum_zero_region banks (2048 bytes of a
    partition each) on the output's partitions from the bank of its first element (value +0.0,
    shadow clear), then writes through the tracked path; the tracked path copies where the shadow
    is clear, else PSUM = fp32(PSUM + value); neither START nor ACCUMULATE overwrites; every write
    sets the shadow; STOP changes nothing;
  * M6 NaN / Inf: NumPy float32 arithmetic (x86 SSE bits: inf * 0 = 0xFFC00000, a NaN operand's
    payload kept and quieted). No case lets two NaNs meet in one add or product (which NaN wins
    is an operand-order question the spec does not settle);
  * M1 / M5 validation errors as `error KIND @ LOCATION |` lines (kinds are this suite's readings).
  * M7 is_transpose: gen3 / gen4 store the data operand's bits transposed (fp8 as uint16), the data
    chosen by the shapes (NKI: stationary; KLR: moving) or, when both fit, by the run-time identity;
    gen2 runs the ordinary formula (`transpose`);
  * M8 perf_mode DoubleRow: fp8 operands [P, 2, X], pair sums first, then p ascending (`dr_dot`);
  * M9 gen4 bf16 PSUM output: each write rounds to bf16, accumulation widens the bf16 first (`Psum`).
  * M5 on gen4: N * size up to 8 banks, the output may cross banks; START clears the 2^psum_zero_region
    banks from the first element's bank and every bank the output covers (`Psum(wide=True)`).

The PSUM result is read back with TensorCopy (PSUM fp32 -> an SB tile, a cast when the SB tile is
bf16: RNE, fidelity N3) and Save. The fp32 PSUM content a case never wrote is never read back.

Families (README.md lists every case): exact_* (sums exact in fp32, any order), order_* (hand-worked
values where ascending fp32 order, per-product rounding or RNE matters), aws_* (shapes / dtypes of
AWS's nc_matmul test and matrix_multiplication kernels, random data, goldens from M3/M4), psum_*
(START / ACCUMULATE / idle / STOP / psum_zero_region, -0, NaN, Inf), schema_* (the KLR and the
neuronx-cc 2.24 field schemas, same bits), error_* (validation). New families (M7-M9, their own RNG,
drawn after everything above): transpose_*, doublerow_*, gen4_*. Then two whole kernels (RNG 20270315):
aws_matmul_hoist_load_* and aws_matmul_block_free_* re-express AWS's nki_matmul_hoist_load_ and
nki_matmul_block_free_dimension_ as flat programs (every loop unrolled; one [M, N] bf16 result).
Last, gen4_wide_* (RNG 20270420): on gen4 (M5) N up to PSUM's 8 banks, outputs across banks, a START
clearing every bank its output covers (`Psum` with `wide`); gen3 keeps the one-bank error.

Run: /work/main/.venv/bin/python conformance/programs/matmult/make_cases.py
"""
import os
import sys
import warnings

import ml_dtypes as md
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import birprog  # noqa: E402  (conformance/programs/birprog.py: the program builder the generators share)
from birprog import ap, ap_index  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
RNG = np.random.default_rng(20261214)

# ---------------------------------------------------------------- dtypes
STORE = {"float32": np.float32, "bfloat16": np.uint16, "float16": np.float16, "float8e4": np.uint8,
         "float8e5": np.uint8, "uint8": np.uint8, "uint16": np.uint16}
SIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "float8e4": 1, "float8e5": 1, "uint8": 1, "uint16": 2}
# float8e4 = legacy IEEE-style E4M3 (max 240, has Inf; fidelity N7), float8e5 = E5M2
ML = {"bfloat16": md.bfloat16, "float8e4": md.float8_e4m3, "float8e5": md.float8_e5m2}

BANK_BYTES = 2048  # one PSUM bank of a partition
BANK = BANK_BYTES // 4  # 512 fp32
PSUM_BYTES = 8 * BANK_BYTES  # 16 KiB per partition


def bits(x):
    return np.asarray(x, F32).view(np.uint32)


def f32b(u):
    """fp32 from its bit pattern."""
    return np.array(u, np.uint32).view(F32)


def encode(x, dt):
    """Values (exactly representable, or rounded RNE) -> stored raw array of dtype dt."""
    x = np.asarray(x)
    if dt in ML:
        return x.astype(F32).astype(ML[dt]).view(STORE[dt])
    if dt == "uint8":
        assert ((x >= 0) & (x <= 255) & (x == np.round(x))).all()
        return x.astype(np.uint8)
    return x.astype(STORE[dt])


def widen(raw, dt, zp=0):
    """Stored values -> fp32 operand values (M3): exact widening; uint8 minus its zero point first,
    as an exact integer, then converted to fp32 (|difference| <= 255: exact)."""
    raw = np.asarray(raw)
    if dt in ML:
        return raw.view(ML[dt]).astype(F32)
    if dt == "uint8":
        return (raw.astype(np.int64) - zp).astype(F32)
    assert zp == 0
    return raw.astype(F32)


def dot(mov, st):
    """M3: out[m, n] = sum over k ascending from +0.0 of fp32(mov[k, n] * st[k, m]), fp32 RNE adds."""
    mov, st = np.asarray(mov, F32), np.asarray(st, F32)
    K, N = mov.shape
    K2, M = st.shape
    assert K == K2
    acc = np.zeros((M, N), F32)  # +0.0
    for k in range(K):
        p = mov[k][None, :] * st[k][:, None]  # each product one fp32 rounding (moving * stationary)
        acc = acc + p  # one fp32 RNE add per k, no FMA
    assert acc.dtype == F32
    return acc


def exact_dot(mov, st):
    """The float64 product (for asserting that a case's sums are exact in fp32, or that they are not)."""
    return np.asarray(st, np.float64).T @ np.asarray(mov, np.float64)


class Psum:
    """One PSUM memory location: its bytes, a per-byte written shadow, and its byte address in the
    partition. Writes come in the output AP's dtype: float32 (M4), bfloat16 (M9, gen4) or a
    transpose's raw bits (M7, any 2- or 4-byte dtype)."""

    def __init__(self, parts, nbytes, addr, wide=False):
        self.wide = wide  # gen4 (M5): the output may cross banks, N up to PSUM's 8 banks
        self.pitch = nbytes // 4  # fp32 elements per partition
        self.nbytes = nbytes
        self.addr = addr
        self.raw = np.full((parts, nbytes), 0xFF, np.uint8)  # never read unwritten
        self.val = self.raw.view(F32)  # the fp32 view (shares memory)
        self.wb = np.zeros((parts, nbytes), bool)  # written shadow, per byte
        self.tb = np.zeros((parts, nbytes), bool)  # written or cleared (what a case may read)
        self.xb = np.zeros((parts, nbytes), bool)  # last written by a gen3/gen4 transpose (shadow not pinned)

    @property
    def touched(self):
        """Per fp32 element: all 4 bytes written or cleared."""
        return self.tb.reshape(self.tb.shape[0], -1, 4).all(-1)

    def view(self, dt):
        return self.raw.view(STORE[dt])

    def bank(self, col, es=4):
        return (self.addr + col * es) // BANK_BYTES

    def write(self, idx, res, start, accumulate, zero_region, dt="float32", transpose=False):
        """M4 (and M7 / M9): the write of one Matmult. idx = flat element indices [M, N] in units of
        dt (AP order), res = [M, N]: fp32 dot products, or for a transpose the raw bits to store."""
        es = SIZE[dt]
        pe = self.nbytes // es
        rows, cols = idx // pe, idx % pe
        assert len(np.unique(idx)) == idx.size
        banks = np.unique(self.bank(cols, es))
        if self.wide:  # gen4 (M5): N * size <= 8 banks; the output may cross bank boundaries
            assert cols.shape[-1] * es <= 8 * BANK_BYTES
        else:
            assert len(banks) == 1, "the output's free range lies within one bank"
        if start:
            # 2^zero_region banks from the first element's bank, and (gen4, M5) every bank the output
            # covers; for a one-bank output the second set is the first element's bank alone.
            b0 = self.bank(cols.reshape(-1)[0], es)
            clear = sorted(set(range(b0, b0 + (1 << zero_region))) | set(int(b) for b in banks))
            parts = np.unique(rows)
            for b in clear:
                lo = b * BANK_BYTES - self.addr
                hi = lo + BANK_BYTES
                assert 0 <= lo and hi <= self.nbytes, "the cleared banks lie inside the location (a reading)"
                self.raw[parts, lo:hi] = 0
                self.wb[parts, lo:hi] = False
                self.tb[parts, lo:hi] = True
                self.xb[parts, lo:hi] = False
        bidx = (cols * es)[..., None] + np.arange(es)
        r3 = rows[..., None]
        wr3 = self.wb[r3, bidx]
        assert (wr3.all(-1) == wr3.any(-1)).all(), "no element is half written"
        wr = wr3.all(-1)
        view = self.view(dt)
        if transpose:  # M7 gen3 / gen4: the bits overwrite, whatever the flags
            ubits = {4: np.uint32, 2: np.uint16}[es]
            assert res.dtype == ubits
            self.raw.view(ubits)[rows, cols] = res
            self.xb[r3, bidx] = True
        else:
            tracked = start or accumulate
            if tracked:
                assert not (self.xb[r3, bidx].any(-1) & wr).any(), "no tracked write meets transpose output"
            if dt == "float32":
                old = self.val[rows, cols]
                if tracked:  # the tracked path: PSUM + value where written, else copy
                    new = np.where(wr, old + res, res).astype(F32)
                else:  # idle (flag 0) or STOP only (flag 2): overwrite
                    new = res
                self.val[rows, cols] = new
            else:
                assert dt == "bfloat16"  # M9 (gen4): round to bf16; accumulate = bf16 -> fp32, + value, -> bf16
                old = view[rows, cols].view(md.bfloat16).astype(F32)
                if tracked:
                    new = np.where(wr, (old + res).astype(F32), res)
                else:
                    new = res
                view[rows, cols] = np.asarray(new, F32).astype(md.bfloat16).view(np.uint16)
            self.xb[r3, bidx] = False
        self.wb[r3, bidx] = True
        self.tb[r3, bidx] = True


# ---------------------------------------------------------------- program building (birprog)
class Prog(birprog.Prog):
    """Load / Save on SP, Matmult on PE, TensorCopy on DVE; SB tiles and PSUM locations modelled
    here (what was loaded, the PSUM state) so each Matmult's expected result is computed as it is
    emitted."""
    STORE, SIZE = STORE, SIZE
    ENGINES = {"Load": "SP", "Save": "SP", "Matmult": "PE", "TensorCopy": "DVE"}
    DEFAULT_ENGINE = "DVE"

    def __init__(self, arch="gen3"):
        super().__init__()
        self.arch = arch  # the program's top-level `arch` (M7, M9)
        self.sbm = {}  # SB tile name -> (dtype, stored array [parts, row])
        self.ps = {}  # PSUM location name -> Psum
        self.nload = 0

    def sb_tile(self, name, dt, parts, row, base=0):
        self._alloc(name, "Internal", dt, [parts, row], "SB", [parts, row * SIZE[dt]], 0, base)
        fill = np.zeros((parts, row), STORE[dt])
        fill.view(np.uint8)[...] = 0xFF  # unloaded bytes (never read by an operand)
        self.sbm[name] = (dt, fill)

    def psum(self, name, parts=128, nbytes=PSUM_BYTES, addr=0, base=0, dt="float32"):
        assert addr % BANK_BYTES == 0 and addr + nbytes <= PSUM_BYTES
        self._alloc(name, "Internal", dt, [parts, nbytes // SIZE[dt]], "PSUM", [parts, nbytes], addr, base)
        self.ps[name] = Psum(parts, nbytes, addr, wide=self.arch == "gen4")

    def put(self, tile_name, raw, p0=0, c0=0):
        """A new DRAM input holding raw [p, f], loaded into SB tile `tile_name` at partition p0
        (relative to the location), column c0."""
        dt, mem = self.sbm[tile_name]
        raw = np.ascontiguousarray(raw)
        name = f"{tile_name}_in{self.nload}" if self.nload else f"{tile_name}_in"
        self.nload += 1
        p, f = self.dram_in(name, dt, raw)
        row = mem.shape[1]
        self.inst("Load", [birprog.tile(name, dt, p, f)], [ap(tile_name, dt, [[row, p], [1, f]], p0 * row + c0)])
        mem[p0:p0 + p, c0:c0 + f] = raw

    def load_from(self, dram, tile_name, r0, c0, p, f):
        """Loads rows r0..r0+p, columns c0..c0+f of the (already declared) DRAM input `dram` into the
        whole SB tile `tile_name` (p x f)."""
        dt, mem = self.sbm[tile_name]
        full = self.inputs[dram]
        self.inst("Load", [ap(dram, dt, [[full.shape[1], p], [1, f]], r0 * full.shape[1] + c0)],
                  [birprog.tile(tile_name, dt, p, f)])
        mem[...] = full[r0:r0 + p, c0:c0 + f]

    def read(self, op):
        """The operand an SB AP reads: [partitions, free elements in AP order] (stored dtype)."""
        dt, mem = self.sbm[op["memref"]]
        idx = ap_index(op["ap"], op["offset"])
        return mem.reshape(-1)[idx.reshape(idx.shape[0], -1)]

    def program(self):
        d = super().program()
        d["arch"] = self.arch
        return d

    def read3(self, op):
        """The values an SB AP reads, shaped by its nums (AP order, stored dtype)."""
        dt, mem = self.sbm[op["memref"]]
        return mem.reshape(-1)[ap_index(op["ap"], op["offset"])]

    def matmult(self, mov, st, out, flags, oracle=True, **extra):
        """Appends a Matmult; with `oracle`, computes its result (M2, M3) and writes it to the PSUM
        model (M4). `flags` from cc224() or klr()."""
        fields = dict(flags)
        fields.update(extra)
        k = self.inst("Matmult", [mov, st], [out], **fields)
        if not oracle:
            return k
        zpI, zpW = fields.get("ifmap_quant_offset", 0), fields.get("weights_quant_offset", 0)
        mv = widen(self.read(mov), mov["dtype"], zpI if mov["dtype"] == "uint8" else 0)
        sv = widen(self.read(st), st["dtype"], zpW if st["dtype"] == "uint8" else 0)
        res = dot(mv, sv)
        start, accumulate, zr = mode_of(fields)
        p = self.ps[out["memref"]]
        idx = ap_index(out["ap"], out["offset"])
        idx = idx.reshape(idx.shape[0], -1)
        assert idx.shape == res.shape, (idx.shape, res.shape)
        p.write(idx, res, start, accumulate, zr, out["dtype"])
        return k

    def copy_out(self, psname, out, p0, c0, m, n, dt="float32"):
        """TensorCopy PSUM [p0:p0+m, c0:c0+n] -> a new SB tile (dtype dt: fp32 copies, bf16 casts
        RNE), then Save to external output `out`."""
        p = self.ps[psname]
        assert p.touched[p0:p0 + m, c0:c0 + n].all(), "reads only what the case wrote or cleared"
        vals = p.val[p0:p0 + m, c0:c0 + n]
        self.sb_tile(out + "_sb", dt, m, n)
        self.inst("TensorCopy", [ap(psname, "float32", [[p.pitch, m], [1, n]], p0 * p.pitch + c0)],
                  [birprog.tile(out + "_sb", dt, m, n)])
        if dt == "float32":
            expected = vals.copy()
        else:
            assert dt == "bfloat16" and not np.isnan(vals).any()
            expected = vals.astype(md.bfloat16).view(np.uint16)
        self.save(out + "_sb", out, dt, m, n, expected)
        return expected


def mode_of(fields):
    """(START, ACCUMULATE, psum_zero_region) of a Matmult record (M4)."""
    if "accumulation_flag" in fields:
        f = fields["accumulation_flag"]
        return bool(f & 1), bool(f & 4), fields["psum_zero_region"]
    return bool(fields["start_tensor_calc"]), not fields["start_tensor_calc"], 0


def cc224(flag, zero_region=0, zpI=0, zpW=0):
    """The neuronx-cc 2.24 schema: its 13 always-present keys."""
    return {"accumulation_flag": flag, "psum_zero_region": zero_region, "replication_resolution": 0,
            "replication_shift_amnt": 0, "replication_num_rows": 0, "is_transpose": False,
            "is_fmap_onezero": False, "is_weight_onezero": False, "tile_size": [128, 128],
            "tile_position": [0, 0], "ifmap_quant_offset": zpI, "weights_quant_offset": zpW,
            "perf_mode": "None"}


def klr(start, stop, zpI=None, zpW=None):
    """The KLR-era schema: start_tensor_calc (true = START, false = ACCUMULATE), stop_tensor_calc."""
    f = {"start_tensor_calc": start, "stop_tensor_calc": stop, "is_transpose": False,
         "tile_size": [128, 128], "tile_position": [0, 0], "perf_mode": "None"}
    if zpI is not None:
        f["ifmap_quant_offset"] = zpI
    if zpW is not None:
        f["weights_quant_offset"] = zpW
    return f


START, STOP, ACC = 1, 2, 4
WHOLE = START | STOP  # a one-instruction group


def sbap(tile_name, dt, row, k, n, p0=0, c0=0):
    """A [K, N] SB operand at partition p0, column c0 of a tile with `row` elements per partition."""
    return ap(tile_name, dt, [[row, k], [1, n]], p0 * row + c0)


def psap(g, psname, m, n, p0=0, c0=0):
    """An [M, N] fp32 PSUM output at partition p0, column c0 of location psname."""
    pitch = g.ps[psname].pitch
    return ap(psname, "float32", [[pitch, m], [1, n]], p0 * pitch + c0)


CASES = {}


def case(name, g, note, choices=(), errors=None):
    """errors = [(KIND, LOCATION, MESSAGE)]: the validator must refuse the program with exactly those."""
    assert name not in CASES, name
    CASES[name] = (g, note, tuple(choices), errors)


def simple(mov_dt, st_dt, mov_raw, st_raw, flags=None, out_dt="float32", zp=(0, 0)):
    """Load moving [K, N] and stationary [K, M] into their own SB tiles, one whole-group Matmult
    into PSUM bank 0, copy [M, N] out. Returns (prog, expected)."""
    K, N = mov_raw.shape
    K2, M = st_raw.shape
    g = Prog()
    g.sb_tile("mov", mov_dt, K, N)
    g.sb_tile("st", st_dt, K2, M)
    g.put("mov", mov_raw)
    g.put("st", st_raw)
    g.psum("ps")
    g.matmult(sbap("mov", mov_dt, N, K, N), sbap("st", st_dt, M, K2, M), psap(g, "ps", M, N),
              flags if flags is not None else cc224(WHOLE, zpI=zp[0], zpW=zp[1]))
    y = g.copy_out("ps", "y", 0, 0, M, N, out_dt)
    return g, y


def assert_exact(g, mov_dt, st_dt, mov_raw, st_raw, y, zp=(0, 0)):
    """The case's sums are exact in fp32: the float64 product equals the result."""
    ref = exact_dot(widen(mov_raw, mov_dt, zp[0]), widen(st_raw, st_dt, zp[1]))
    assert (ref == y.astype(np.float64)).all()


# ================================================================ E: exact sums (any order gives these bits)
def exact(name, mov_dt, st_dt, mov_vals, st_vals, note, zp=(0, 0)):
    mov_raw, st_raw = encode(mov_vals, mov_dt), encode(st_vals, st_dt)
    assert (widen(mov_raw, mov_dt) == np.asarray(mov_vals, F32)).all() or mov_dt == "uint8"
    g, y = simple(mov_dt, st_dt, mov_raw, st_raw, zp=zp)
    assert_exact(g, mov_dt, st_dt, mov_raw, st_raw, y, zp)
    case(name, g, note, ("M2", "M4", "M5"))


def ints(lo, hi, shape):
    return RNG.integers(lo, hi + 1, shape).astype(F32)


def pow2(shape, emin, emax):
    return (RNG.choice([-1, 1], shape) * np.exp2(RNG.integers(emin, emax + 1, shape))).astype(F32)


exact("exact_fp32_1x1x1", "float32", "float32", np.array([[3.0]]), np.array([[5.0]]),
      "K=M=N=1 fp32: 3 x 5 = 15")
exact("exact_fp32_ints_K8_M4_N16", "float32", "float32", ints(-9, 9, (8, 16)), ints(-9, 9, (8, 4)),
      "fp32 small integers, K=8 M=4 N=16: out[m, n] = sum_k mov[k, n] * st[k, m] (roles of ins[0] / ins[1])")
exact("exact_fp32_ints_K128_M128_N512", "float32", "float32", ints(-50, 50, (128, 512)), ints(-50, 50, (128, 128)),
      "fp32 integers |x| <= 50, full size K=128 M=128 N=512 (|sum| < 2^24)")
exact("exact_bfloat16_pow2_K128_M128_N512", "bfloat16", "bfloat16", pow2((128, 512), -4, 4), pow2((128, 128), -4, 4),
      "bf16 +-2^e, e in -4..4, full size: products in [2^-8, 2^8], sums multiples of 2^-8 below 2^15 (exact)")
exact("exact_float16_ints_K64_M32_N128", "float16", "float16", ints(-30, 30, (64, 128)), ints(-30, 30, (64, 32)),
      "fp16 integers |x| <= 30, K=64 M=32 N=128")
FP8_SMALL = np.array([0, 0.5, 1, 1.5, 2, 3, 4, -0.5, -1, -1.5, -2, -3, -4], F32)
exact("exact_float8e4_K32_M16_N64", "float8e4", "float8e4", RNG.choice(FP8_SMALL, (32, 64)), RNG.choice(FP8_SMALL, (32, 16)),
      "float8e4 (legacy E4M3) values in {0, +-0.5, +-1, +-1.5, +-2, +-3, +-4}, K=32 M=16 N=64")
exact("exact_float8e5_K32_M16_N64", "float8e5", "float8e5", RNG.choice(FP8_SMALL, (32, 64)), RNG.choice(FP8_SMALL, (32, 16)),
      "float8e5 (E5M2) values in {0, +-0.5, +-1, +-1.5, +-2, +-3, +-4}, K=32 M=16 N=64")
exact("exact_mixed_bfloat16_float8e4_K48_M24_N80", "bfloat16", "float8e4", ints(-100, 100, (48, 80)),
      RNG.choice(FP8_SMALL, (48, 24)), "moving bf16 integers, stationary float8e4: a mixed non-fp32 pair (M5 allows it)")
exact("exact_mixed_float16_float8e5_K16_M8_N32", "float16", "float8e5", ints(-100, 100, (16, 32)),
      RNG.choice(FP8_SMALL, (16, 8)), "moving fp16 integers, stationary float8e5: a mixed non-fp32 pair")
exact("exact_uint8_no_zero_point_K128_M64_N128", "uint8", "uint8", ints(0, 255, (128, 128)), ints(0, 255, (128, 64)),
      "uint8, zero points 0: sums <= 128 x 255^2 < 2^24 (exact)")
exact("exact_uint8_zero_points_K64_M32_N64", "uint8", "uint8", ints(0, 255, (64, 64)), ints(0, 255, (64, 32)),
      "uint8 with ifmap_quant_offset 128 (moving) and weights_quant_offset 3 (stationary): "
      "(mov - 128) * (st - 3), differences exact integers in -255..255", zp=(128, 3))
# the zero points exchanged: which field belongs to which operand shows
exact("exact_uint8_zero_points_swapped_K64_M32_N64", "uint8", "uint8", ints(0, 255, (64, 64)), ints(0, 255, (64, 32)),
      "uint8 with ifmap_quant_offset 3 (moving) and weights_quant_offset 200 (stationary)", zp=(3, 200))
exact("exact_bfloat16_nonsquare_K96_M40_N200", "bfloat16", "bfloat16", ints(-60, 60, (96, 200)), ints(-60, 60, (96, 40)),
      "bf16 integers, non-square K=96 M=40 N=200")

# operands inside bigger SB tiles, at partition and column offsets; output at a partition offset,
# a column offset inside bank 3
K, M, N = 24, 20, 48
g = Prog()
g.sb_tile("big", "float32", 128, 100)  # moving at partitions 32..55, columns 7..54
g.sb_tile("wts", "float32", 64, 64, base=64)  # a location starting at partition 64; stationary at its partitions 8..31, columns 30..49
g.put("big", ints(-99, 99, (128, 100)))  # the whole tile holds other values around the operand
g.put("wts", ints(-99, 99, (64, 64)))
mov_raw, st_raw = ints(-20, 20, (K, N)), ints(-20, 20, (K, M))
g.put("big", mov_raw, 32, 7)
g.put("wts", st_raw, 8, 30)
g.psum("ps")
g.matmult(sbap("big", "float32", 100, K, N, 32, 7), sbap("wts", "float32", 64, K, M, 8, 30),
          psap(g, "ps", M, N, 16, 3 * BANK + 100), cc224(WHOLE))
y = g.copy_out("ps", "y", 16, 3 * BANK + 100, M, N)
assert (exact_dot(mov_raw, st_raw) == y).all()
case("exact_offsets_partitions_columns_banks", g,
     "moving at partitions 32..55 / columns 7..54 of a 128x100 fp32 tile, stationary at partitions 8..31 / "
     "columns 30..49 of a 64x64 tile whose location starts at partition 64, output at PSUM partitions 16..35, "
     "bank 3 columns 100..147", ("M2", "M4", "M5"))

# moving through a 3-level AP: N = 4 x 16 elements in AP order (groups of 16 at a stride of 32)
K, M = 40, 12
g = Prog()
g.sb_tile("mov", "bfloat16", K, 128)
g.sb_tile("st", "bfloat16", K, M)
mov_full = ints(-40, 40, (K, 128))
g.put("mov", encode(mov_full, "bfloat16"))
g.put("st", encode(ints(-40, 40, (K, M)), "bfloat16"))
g.psum("ps")
mov_ap = ap("mov", "bfloat16", [[128, K], [32, 4], [1, 16]], 5)
g.matmult(mov_ap, sbap("st", "bfloat16", M, K, M), psap(g, "ps", M, 64), cc224(WHOLE))
y = g.copy_out("ps", "y", 0, 0, M, 64)
sel = (5 + 32 * np.arange(4)[:, None] + np.arange(16)[None, :]).reshape(-1)
assert (exact_dot(mov_full[:, sel], widen(g.sbm["st"][1], "bfloat16")) == y).all()
case("exact_moving_3level_ap_bfloat16", g,
     "moving AP [[128, 40], [32, 4], [1, 16]] offset 5: N = 64 elements in AP order (columns 5..20, 37..52, ...), "
     "bf16 integers", ("M2", "M4", "M5"))

# ================================================================ O: order pinning (hand-worked)
T24 = F32(2.0 ** 24)

# order_fp32_K3_cancellation: stationary = 1 (M = 1), so out[0, n] = sum_k mov[k, n], k ascending.
#   col 0  [2^24, 1, -2^24]: 0 + 2^24 = 2^24; 2^24 + 1 = 16777217 is a tie between 2^24 and
#          2^24 + 2 -> even 2^24; 2^24 - 2^24 = 0.           -> +0   (any order with 1 last: 1)
#   col 1  [-2^24, 2^24, 1]: 0, then 0 + 1 = 1.               -> 1
#   col 2  [2^24, 3, -2^24]: 2^24 + 3 = 16777219, a tie between 2^24 + 2 (odd significand) and
#          2^24 + 4 (even) -> 2^24 + 4; minus 2^24 -> 4.     -> 4    (truncation would give 2)
#   col 3  [2^24, 1, 1]: 2^24 + 1 -> 2^24 (tie, even), again -> 2^24.  -> 2^24 (1 + 1 first: 2^24 + 2)
#   col 4  [1, 2^-24, 2^-24]: 1 + 2^-24 is a tie between 1 and 1 + 2^-23 -> 1; again 1.  -> 1
#          (2^-24 + 2^-24 first: 1 + 2^-23)
#   col 5  [1, 2^-24, 2^-24, 2^-24] needs K = 4: the other rows are 0 for cols 0..4 and col 5 has
#          k = 3 = 2^-24: sequential gives 1; a pairwise (1 + 2^-24) + (2^-24 + 2^-24) gives 1 + 2^-23.
#   col 6  [2^127, 2^127, -2^127, 0]: 2^127 + 2^127 = 2^128 overflows to +Inf; Inf - 2^127 = Inf.
#          -> +Inf (2^127 - 2^127 + 2^127 = 2^127 in another order)
#   col 7  [0.1f, 0.2f, 0.3f, 0.4f] (fp32 nearest): 0.1f + 0.2f = 0x3E99999A (0.3000000119);
#          + 0.3f (0x3E99999A) = 0x3F19999A (0.6000000238); + 0.4f (0x3ECCCCCD) = 0x3F800000 (1.0) exactly?
#          computed below and asserted against the explicit step-by-step fp32 adds.
E24 = F32(2.0 ** -24)
H = F32(2.0 ** 127)
cols = np.array([
    [T24, -T24, T24, T24, 1, 1, H, F32(0.1)],
    [1, T24, 3, 1, E24, E24, H, F32(0.2)],
    [-T24, 1, -T24, 1, E24, E24, -H, F32(0.3)],
    [0, 0, 0, 0, 0, E24, 0, F32(0.4)],
], F32)
g, y = simple("float32", "float32", cols, np.ones((4, 1), F32))
want = np.array([0.0, 1.0, 4.0, T24, 1.0, 1.0, np.inf], F32)
assert (bits(y[0, :7]) == bits(want)).all(), y
step = F32(0)
for k in range(4):
    step = F32(step + cols[k, 7])
assert bits(y[0, 7]) == bits(step)
case("order_fp32_ascending_k_rne", g,
     "fp32 column sums with stationary 1 whose bits depend on the order (k ascending from +0), on RNE ties "
     "(2^24 + 1 -> 2^24, 2^24 + 3 -> 2^24 + 4), on sequential vs pairwise (1 + 3 x 2^-24 -> 1) and on a "
     "mid-sum overflow (2^127 + 2^127 -> Inf); hand arithmetic in make_cases.py", ("M2", "M3", "M4"))

# order_fp32_products_round_no_fma: K = 2, M = 1, stationary [1, A] with A = 1 + u, u = 2^-23:
#   col 0  mov [-(1 + 2u) (0xBF800002), A]: p0 = -(1 + 2u) exact; p1 = A x A = 1 + 2u + u^2 rounds to
#          1 + 2u (u^2 = 2^-46 is far below half an ulp); -(1 + 2u) + (1 + 2u) = +0.
#          An FMA of p1 into the running sum would give the exact u^2 = 2^-46 instead.
#   col 1  mov [1, A]: 1 + (1 + 2u) = 2 + 2u, exact (2u = 2^-22 is one ulp of 2).          -> 2 + 2^-22
#   col 2  mov [3, -A]: 3 - (1 + 2u) = 2 - 2u = 2 - 2^-22, exact in [1, 2) (ulp u).        -> 0x3FFFFFFE
#   col 3  mov [2^-30, 0x3F800003 = 1 + 3u]: p1 = (1 + 3u)(1 + u) = 1 + 4u + 3u^2 -> 1 + 4u = 1 + 2^-21;
#          2^-30 + (1 + 2^-21) -> 1 + 2^-21 (2^-30 is below half an ulp, 2^-24).
A = f32b(0x3F800001)  # 1 + 2^-23
cols = np.array([[f32b(0xBF800002), 1, 3, F32(2.0 ** -30)], [A, A, -A, f32b(0x3F800003)]], F32)
st = np.array([[1], [A]], F32)
g, y = simple("float32", "float32", cols, st)
want = np.array([0.0, 2 + 2.0 ** -22, 2 - 2.0 ** -22, 1 + 2.0 ** -21], np.float64).astype(F32)
assert (bits(y[0]) == bits(want)).all(), (y, want)
assert bits(y[0, 2]) == 0x3FFFFFFE
fma0 = np.float64(-(1 + 2.0 ** -22)) + np.float64(A) * np.float64(A)  # exact in float64
assert fma0 == 2.0 ** -46 and F32(fma0) != 0  # what an FMA would keep
case("order_fp32_products_round_no_fma", g,
     "fp32 products that round ((1 + 2^-23)^2 -> 1 + 2^-22) before the add: -(1 + 2^-22) + round(p) = +0, where an "
     "FMA would give 2^-46; hand arithmetic in make_cases.py", ("M2", "M3", "M4"))

# order_bfloat16_random_K128: bf16 products are exact in fp32, the 128-term sums round; the golden
# is the ascending fp32 loop. Asserted: some elements differ from the float64 sum rounded once.
mov = encode(RNG.standard_normal((128, 256)) * 8, "bfloat16")
st = encode(RNG.standard_normal((128, 64)) * 8, "bfloat16")
g, y = simple("bfloat16", "bfloat16", mov, st)
ref = exact_dot(widen(mov, "bfloat16"), widen(st, "bfloat16")).astype(F32)
assert (y != ref).sum() > 100
case("order_bfloat16_random_K128_M64_N256", g,
     "bf16 normal data (sd 8): exact products, 128-term fp32 sums in ascending k that round "
     f"({int((y != ref).sum())} of {y.size} elements differ from the float64 sum rounded once)", ("M2", "M3", "M4"))

mov = (RNG.standard_normal((100, 96)) * 3).astype(F32)
st = (RNG.standard_normal((100, 33)) * 3).astype(F32)
g, y = simple("float32", "float32", mov, st)
ref = exact_dot(mov, st).astype(F32)
assert (y != ref).sum() > 100
case("order_fp32_random_K100_M33_N96", g,
     "fp32 normal data: rounded products and sums in ascending k "
     f"({int((y != ref).sum())} of {y.size} elements differ from the float64 product rounded once)", ("M2", "M3", "M4"))

# fp16 inputs whose products exceed fp16 range but not fp32, and whose sum needs fp32 precision:
# 60000 x 60000 = 3.6e9 exact in fp32? 60000 = 0x7530 -> 60000^2 = 3.6e9 needs 32 bits of
# significand minus trailing zeros: 60000 = 2^5 x 1875, 1875^2 = 3515625 (22 bits) -> exact.
# column sums [60000^2, 1, -60000^2] -> (3.6e9 + 1 rounds back to 3.6e9) - 3.6e9 = 0.
mov = np.array([[60000, 60000, 2], [1, 3, 1], [-60000, -60000, 0.5]], F32)
st = np.array([[60000], [1], [60000]], F32)
g, y = simple("float16", "float16", encode(mov, "float16"), encode(st, "float16"))
# col 0: 3.6e9 + 1 = 3.6e9 (ulp 256), - 3.6e9 = 0. col 1: 3.6e9 + 3 = 3.6e9, -> 0. col 2: 120000 + 1 + 30000 = 150001
assert (bits(y[0]) == bits(np.array([0, 0, 150001], F32))).all(), y
case("order_float16_wide_products_K3", g,
     "fp16 operands 60000 x 60000 = 3.6e9 (exact in fp32, far past fp16's range): the product is not narrowed to "
     "fp16, and 3.6e9 + 1 - 3.6e9 = 0 in ascending fp32 order", ("M2", "M3", "M4"))

# ================================================================ A: AWS-style (nc_matmul test, matrix_multiplication kernels)
# test_nki_isa_nc_matmul example 1: a [128, 128] (stationary) and b [128, 512] (moving), both
# random_sample * 100 in fp32; golden a.T @ b (AWS: allclose; here the M3 bits).
a = (RNG.random((128, 128)) * 100).astype(F32)
b = (RNG.random((128, 512)) * 100).astype(F32)
g, y = simple("float32", "float32", b, a)
assert np.allclose(y, a.T.astype(np.float64) @ b)
case("aws_nc_matmul_fp32_128x128x512", g,
     "AWS nc_matmul example 1: stationary a [128,128], moving b [128,512], fp32 random_sample x 100, dst = a.T @ b",
     ("M2", "M3", "M4"))

# example 2: d [256, 128], e [256, 512]: two k-tiles accumulated in one PSUM tile (START, then ACC|STOP)
d = (RNG.random((256, 128)) * 100).astype(F32)
e = (RNG.random((256, 512)) * 100).astype(F32)
g = Prog()
g.psum("ps")
g.dram_in("d", "float32", d)
g.dram_in("e", "float32", e)
for kt in range(2):
    g.sb_tile(f"d{kt}", "float32", 128, 128)
    g.sb_tile(f"e{kt}", "float32", 128, 512)
    g.load_from("d", f"d{kt}", kt * 128, 0, 128, 128)
    g.load_from("e", f"e{kt}", kt * 128, 0, 128, 512)
    g.matmult(sbap(f"e{kt}", "float32", 512, 128, 512), sbap(f"d{kt}", "float32", 128, 128, 128),
              psap(g, "ps", 128, 512), cc224(START if kt == 0 else ACC | STOP))
y = g.copy_out("ps", "f", 0, 0, 128, 512)
assert (bits(y) == bits(dot(e[:128], d[:128]) + dot(e[128:], d[128:]))).all()
assert np.allclose(y, d.T.astype(np.float64) @ e)
case("aws_nc_matmul_fp32_psum_accumulate_K256", g,
     "AWS nc_matmul example 2: d [256,128], e [256,512] fp32, two 128-row k-tiles: START then ACC|STOP into one "
     "PSUM tile: P0 + P1, each its own ascending fp32 dot", ("M2", "M3", "M4"))

# example 3 (4 of its 16 batches): g [64, 64], h [64, 512] per batch with tile_size (64, 64) and the
# tile positions (0,0), (0,64), (64,0), (64,64); each batch into its own PSUM bank. Tiling does not
# change the math (the fields are accepted and ignored: a reading, engines.md 1.2 [OURS]).
gg = (RNG.random((4, 64, 64)) * 100).astype(F32)
hh = (RNG.random((4, 64, 512)) * 100).astype(F32)
g = Prog()
g.psum("ps")
for bi in range(4):
    g.sb_tile(f"g{bi}", "float32", 64, 64)
    g.sb_tile(f"h{bi}", "float32", 64, 512)
    g.put(f"g{bi}", gg[bi])
    g.put(f"h{bi}", hh[bi])
    fl = cc224(WHOLE)
    fl["tile_size"] = [64, 64]
    fl["tile_position"] = [(bi // 2) * 64, (bi % 2) * 64]
    g.matmult(sbap(f"h{bi}", "float32", 512, 64, 512), sbap(f"g{bi}", "float32", 64, 64, 64),
              psap(g, "ps", 64, 512, 0, bi * BANK), fl)
for bi in range(4):
    g.copy_out("ps", f"i{bi}", 0, bi * BANK, 64, 512)
case("aws_nc_matmul_fp32_batched_tile_position_64", g,
     "AWS nc_matmul example 3 (4 batches): K=64 M=64 N=512 fp32 with tile_size [64,64] and tile_position (0,0), "
     "(0,64), (64,0), (64,64), each into its own bank; the tiling fields change nothing", ("M2", "M3", "M4"))

# matrix_multiplication nki_matmul_basic_: lhsT [128, 64] bf16 (stationary), rhs [128, 512] bf16
# (moving), result copied to a bf16 SB tile (RNE cast) and stored.
lhsT = encode(RNG.random((128, 64)), "bfloat16")
rhs = encode(RNG.random((128, 512)), "bfloat16")
g, y = simple("bfloat16", "bfloat16", rhs, lhsT, out_dt="bfloat16")
case("aws_matmul_basic_bfloat16_64x128x512", g,
     "AWS matrix_multiplication nki_matmul_basic_: lhsT [128,64], rhs [128,512] bf16 torch.rand-like, fp32 PSUM "
     "copied to a bf16 SB tile (RNE) and saved", ("M2", "M3", "M4"))

# nki_matmul_tiled_: K = 256, M = 256, N = 1024 in tiles of 128 x 128 x 512: 2 x 2 PSUM tiles, each
# 2 k-tiles (START, ACC|STOP), each result copied to bf16 and stored.
Kt, Mt, Nt = 256, 256, 1024
lhsT = encode(RNG.random((Kt, Mt)), "bfloat16")
rhs = encode(RNG.random((Kt, Nt)), "bfloat16")
g = Prog()
g.psum("ps")
g.dram_in("lhsT", "bfloat16", lhsT)
g.dram_in("rhs", "bfloat16", rhs)
for m in range(2):
    for n in range(2):
        bank = m * 2 + n
        for kt in range(2):
            lt, rt = f"l_m{m}_k{kt}_n{n}", f"r_m{m}_k{kt}_n{n}"
            g.sb_tile(lt, "bfloat16", 128, 128)
            g.sb_tile(rt, "bfloat16", 128, 512)
            g.load_from("lhsT", lt, kt * 128, m * 128, 128, 128)
            g.load_from("rhs", rt, kt * 128, n * 512, 128, 512)
            g.matmult(sbap(rt, "bfloat16", 512, 128, 512), sbap(lt, "bfloat16", 128, 128, 128),
                      psap(g, "ps", 128, 512, 0, bank * BANK), cc224(START if kt == 0 else ACC | STOP))
        g.copy_out("ps", f"res_m{m}_n{n}", 0, bank * BANK, 128, 512, "bfloat16")
case("aws_matmul_tiled_bfloat16_K256_M256_N1024", g,
     "AWS matrix_multiplication nki_matmul_tiled_: K=256 M=256 N=1024 bf16 in 128x128x512 tiles, 2x2 PSUM "
     "tiles in banks 0..3, each START then ACC|STOP over 2 k-tiles, copied to bf16 and saved per tile",
     ("M2", "M3", "M4"))

# test_double_row_gen3's data in the normal mode: ones (128, 1) x ones (128, 512) in float8e5
g, y = simple("float8e5", "float8e5", encode(np.ones((128, 512)), "float8e5"), encode(np.ones((128, 1)), "float8e5"))
assert (y == 128).all()
case("aws_float8e5_ones_K128_M1_N512", g,
     "AWS test_double_row_gen3's data (ones, float8e5) in perf_mode None: K=128 M=1 N=512 -> 128.0 everywhere",
     ("M2", "M4", "M5"))

# ================================================================ P: PSUM semantics (M4)
def randf(shape, scale=4.0):
    return (RNG.standard_normal(shape) * scale).astype(F32)


# a group of 4 k-tiles: START, ACC, ACC, ACC|STOP -> ((P0 + P1) + P2) + P3
K, M, N = 32, 16, 64
g = Prog()
g.psum("ps")
parts = []
for kt, flag in enumerate([START, ACC, ACC, ACC | STOP]):
    mv, sv = randf((K, N)), randf((K, M))
    parts.append(dot(mv, sv))
    g.sb_tile(f"m{kt}", "float32", K, N)
    g.sb_tile(f"s{kt}", "float32", K, M)
    g.put(f"m{kt}", mv)
    g.put(f"s{kt}", sv)
    g.matmult(sbap(f"m{kt}", "float32", N, K, N), sbap(f"s{kt}", "float32", M, K, M), psap(g, "ps", M, N), cc224(flag))
y = g.copy_out("ps", "y", 0, 0, M, N)
assert (bits(y) == bits(((parts[0] + parts[1]) + parts[2]) + parts[3])).all()
case("psum_group_4_ktiles_start_acc_acc_acc", g,
     "4 k-tiles (K=32 each, fp32 random) into one PSUM tile with accumulation_flag 1, 4, 4, 6: "
     "((P0 + P1) + P2) + P3, each Pi its own fp32 dot", ("M3", "M4"))

# a group in the middle of bank 2 at partitions 8..: the same with the flags START|ACC (5) first and
# a KLR schema twin is in S below. Restart: START into a bank holding an accumulated result.
# Group 1: M1 = 32 x N1 = 128 at bank 1 col 0 (START, ACC). Group 2: START with M2 = 16, N2 = 64 at the
# same place: on partitions 0..15 bank 1 is cleared (cols 64..511 read 0, cols 0..63 hold P2 alone);
# partitions 16..31 are not the output's: they keep group 1's sum.
g = Prog()
g.psum("ps")
m1a, s1a, m1b, s1b = randf((16, 128)), randf((16, 32)), randf((16, 128)), randf((16, 32))
m2, s2 = randf((16, 64)), randf((16, 16))
for nm, arr in [("m1a", m1a), ("s1a", s1a), ("m1b", m1b), ("s1b", s1b), ("m2", m2), ("s2", s2)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
g.matmult(sbap("m1a", "float32", 128, 16, 128), sbap("s1a", "float32", 32, 16, 32), psap(g, "ps", 32, 128, 0, BANK), cc224(START))
g.matmult(sbap("m1b", "float32", 128, 16, 128), sbap("s1b", "float32", 32, 16, 32), psap(g, "ps", 32, 128, 0, BANK), cc224(ACC | STOP))
g.matmult(sbap("m2", "float32", 64, 16, 64), sbap("s2", "float32", 16, 16, 16), psap(g, "ps", 16, 64, 0, BANK), cc224(WHOLE))
y = g.copy_out("ps", "y", 0, BANK, 32, 128)
g1 = dot(m1a, s1a) + dot(m1b, s1b)
assert (bits(y[:16, :64]) == bits(dot(m2, s2))).all() and (bits(y[:16, 64:]) == 0).all()
assert (bits(y[16:]) == bits(g1[16:])).all()
case("psum_restart_into_accumulated_bank", g,
     "a START (flag 3) into bank 1 holding an accumulated 32x128 result: on the output's partitions 0..15 the bank "
     "is cleared (columns 64..127 read +0, columns 0..63 hold the new product alone, no add); partitions 16..31 "
     "keep the old sum", ("M4",))

# idle (flag 0) over accumulated data overwrites; an ACC after it adds to the idle value (shadow set)
K, M, N = 16, 8, 32
g = Prog()
g.psum("ps")
arrs = [(randf((K, N)), randf((K, M))) for _ in range(4)]
for i, (mv, sv) in enumerate(arrs):
    g.sb_tile(f"m{i}", "float32", K, N)
    g.sb_tile(f"s{i}", "float32", K, M)
    g.put(f"m{i}", mv)
    g.put(f"s{i}", sv)
P = [dot(mv, sv) for mv, sv in arrs]
for i, flag in enumerate([START, ACC, 0]):
    g.matmult(sbap(f"m{i}", "float32", N, K, N), sbap(f"s{i}", "float32", M, K, M), psap(g, "ps", M, N, 0, 2 * BANK), cc224(flag))
g.copy_out("ps", "after_idle", 0, 2 * BANK, M, N)
g.matmult(sbap("m3", "float32", N, K, N), sbap("s3", "float32", M, K, M), psap(g, "ps", M, N, 0, 2 * BANK), cc224(ACC | STOP))
y = g.copy_out("ps", "y", 0, 2 * BANK, M, N)
assert (bits(g.outputs["after_idle"]) == bits(P[2])).all() and (bits(y) == bits(P[2] + P[3])).all()
case("psum_idle_overwrites_accumulated", g,
     "START, ACC, then accumulation_flag 0 (idle) into the same tile: the idle write overwrites (after_idle = P2); "
     "an ACC|STOP after it adds to it (y = P2 + P3)", ("M4",))

# STOP alone (flag 2) overwrites like idle; and flag 6 (ACC|STOP) adds
g = Prog()
g.psum("ps")
for i, (mv, sv) in enumerate(arrs):
    g.sb_tile(f"m{i}", "float32", K, N)
    g.sb_tile(f"s{i}", "float32", K, M)
    g.put(f"m{i}", mv)
    g.put(f"s{i}", sv)
for i, flag in enumerate([START, ACC, STOP]):
    g.matmult(sbap(f"m{i}", "float32", N, K, N), sbap(f"s{i}", "float32", M, K, M), psap(g, "ps", M, N, 0, 5 * BANK + 200), cc224(flag))
y = g.copy_out("ps", "y", 0, 5 * BANK + 200, M, N)
assert (bits(y) == bits(P[2])).all()
case("psum_stop_alone_overwrites", g,
     "START, ACC, then accumulation_flag 2 (STOP without START or ACCUMULATE) into bank 5 columns 200..231: "
     "an overwrite, y = P2", ("M4",))

# ACC as the very first write copies (the shadow is clear; fresh PSUM bytes are never added to)
g, y = simple("float32", "float32", randf((16, 24)), randf((16, 8)), flags=cc224(ACC))
case("psum_accumulate_first_write_copies", g,
     "accumulation_flag 4 (ACCUMULATE, no START) into never-written PSUM: the shadow is clear, so the value is copied",
     ("M3", "M4"))

# START variants 1, 3, 5, 7 each into a bank that an idle write filled first: all copy after the clear
g = Prog()
g.psum("ps")
old_m, old_s = randf((K, N)), randf((K, M))
new_m, new_s = randf((K, N)), randf((K, M))
for nm, arr in [("om", old_m), ("os", old_s), ("nm", new_m), ("ns", new_s)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
for i, flag in enumerate([1, 3, 5, 7]):
    g.matmult(sbap("om", "float32", N, K, N), sbap("os", "float32", M, K, M), psap(g, "ps", M, N, 0, i * BANK), cc224(0))
    g.matmult(sbap("nm", "float32", N, K, N), sbap("ns", "float32", M, K, M), psap(g, "ps", M, N, 0, i * BANK), cc224(flag))
for i in range(4):
    y = g.copy_out("ps", f"y_flag{[1, 3, 5, 7][i]}", 0, i * BANK, M, N)
    assert (bits(y) == bits(dot(new_m, new_s))).all()
case("psum_start_flag_variants_1_3_5_7", g,
     "accumulation_flag 1, 3, 5 and 7 (START with any of STOP / ACCUMULATE) each into a bank an idle write filled: "
     "START clears first, so each output holds the new product alone", ("M4",))

# psum_zero_region 1: a START clears two banks. Banks 0, 1, 2 filled on partitions 0..15 by idle
# writes of 16 x 512; then a START with psum_zero_region 1, output 8 x 64 at bank 0 column 0: on
# partitions 0..7 bank 0 columns 64..511 and all of bank 1 read 0; bank 2 and partitions 8..15 keep
# the idle data.
g = Prog()
g.psum("ps")
fm, fs = randf((8, 512)), randf((8, 16))
nm_, ns_ = randf((8, 64)), randf((8, 8))
for nm, arr in [("fm", fm), ("fs", fs), ("nm", nm_), ("ns", ns_)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
for b_ in range(3):
    g.matmult(sbap("fm", "float32", 512, 8, 512), sbap("fs", "float32", 16, 8, 16), psap(g, "ps", 16, 512, 0, b_ * BANK), cc224(0))
g.matmult(sbap("nm", "float32", 64, 8, 64), sbap("ns", "float32", 8, 8, 8), psap(g, "ps", 8, 64), cc224(WHOLE, zero_region=1))
y = g.copy_out("ps", "banks012", 0, 0, 16, 3 * BANK)
F = dot(fm, fs)
assert (bits(y[:8, :64]) == bits(dot(nm_, ns_))).all() and (bits(y[:8, 64:2 * BANK]) == 0).all()
assert (bits(y[:8, 2 * BANK:]) == bits(F[:8])).all() and (bits(y[8:, :BANK]) == bits(F[8:])).all()
case("psum_zero_region_1_clears_two_banks", g,
     "START with psum_zero_region 1 (output 8x64 at bank 0): on partitions 0..7, bank 0 beyond the output and all of "
     "bank 1 read +0 (uncovered elements of the second bank included); bank 2 and partitions 8..15 keep the earlier "
     "idle writes", ("M4",))

# psum_zero_region 0 with the output in bank 4: only bank 4 is cleared, bank 5 keeps its data; and a
# zero region starting mid-location: psum_zero_region 2 from bank 4 clears banks 4..7.
g = Prog()
g.psum("ps")
for nm, arr in [("fm", fm), ("fs", fs), ("nm", nm_), ("ns", ns_)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
for b_ in range(8):
    g.matmult(sbap("fm", "float32", 512, 8, 512), sbap("fs", "float32", 16, 8, 16), psap(g, "ps", 16, 512, 0, b_ * BANK), cc224(0))
g.matmult(sbap("nm", "float32", 64, 8, 64), sbap("ns", "float32", 8, 8, 8), psap(g, "ps", 8, 64, 0, 1 * BANK + 300), cc224(START))
g.matmult(sbap("nm", "float32", 64, 8, 64), sbap("ns", "float32", 8, 8, 8), psap(g, "ps", 8, 64, 4, 4 * BANK + 448), cc224(WHOLE, zero_region=2))
y = g.copy_out("ps", "all_banks", 0, 0, 16, 8 * BANK)
Pn = dot(nm_, ns_)
assert (bits(y[:8, BANK + 300:BANK + 364]) == bits(Pn)).all()
assert (bits(y[:8, BANK:BANK + 300]) == 0).all() and (bits(y[:8, 2 * BANK:4 * BANK]) == bits(np.tile(F[:8], 2))).all()
assert (bits(y[4:12, 4 * BANK + 448:4 * BANK + 512]) == bits(Pn)).all() and (bits(y[12:, 4 * BANK:]) == bits(np.tile(F[12:], 4))).all()
case("psum_zero_region_0_and_2_from_mid_bank", g,
     "8 banks filled by idle writes; START (psum_zero_region 0) with an output at bank 1 column 300 clears only bank 1 "
     "(partitions 0..7); a START with psum_zero_region 2 whose output starts at bank 4 column 448 (partitions 4..11) "
     "clears banks 4..7 of those partitions; the rest keeps its data", ("M4",))

# -0: every product of a column -0 (mov -0 x positive, or +0 x negative) sums to +0 from the +0 start
mov = np.array([[-0.0, 0.0, -0.0, 1.0], [-0.0, 0.0, 0.0, -1.0], [-0.0, 0.0, -0.0, 1.0]], F32)
st = np.array([[2.0, -3.0], [5.0, -1.0], [7.0, -0.5]], F32)
# col 0 (mov -0): products -0 x (2, 5, 7) = -0 each  -> +0 + -0 = +0      (both m)
#   m = 1: -0 x (-3) = +0
# col 1 (mov +0): m = 0: +0; m = 1: +0 x -3 = -0 each -> +0
# col 2: mixed -> +0; col 3: [1, -1, 1] x [2, 5, 7] = 2 - 5 + 7 = 4; x [-3, -1, -0.5] = -3 + 1 - 0.5 = -2.5
g, y = simple("float32", "float32", mov, st)
assert (bits(y[:, :3]) == 0).all() and (y[:, 3] == [4, -2.5]).all()
case("psum_negative_zero_products_sum_to_plus_zero", g,
     "columns whose products are all -0 (and mixed +-0) sum to +0 (the sum starts from +0.0); written by a START",
     ("M3", "M4"))

# NaN / Inf in fp32 inputs (M6). K = 4, M = 3, N = 6; the stationary holds no NaN, the moving data
# one NaN per column at most, so no add or product ever sees two NaNs. st[:, m] columns:
# m0 = [2, 1, 1, 0.5], m1 = [-1, 3, 1, 0.25], m2 = [0, 5, 1, 2].
#   n0: mov [qNaN 0x7FC01234, 1, 2, 0]: NaN x st keeps the NaN's bits (x86: the NaN operand, sign
#       untouched even times -1), then NaN + finite = that NaN            -> 0x7FC01234 for every m
#   n1: mov [+Inf, 1, 0, 0]: m0 Inf x 2 = +Inf (+ finite) -> +Inf; m1 Inf x -1 = -Inf -> -Inf;
#       m2 Inf x 0 = the default NaN 0xFFC00000, + 5 -> 0xFFC00000
#   n2: mov [+Inf, -Inf, 0, 0]: m0 +Inf + -Inf = 0xFFC00000; m1 -Inf + -3 x Inf = -Inf;
#       m2 Inf x 0 = 0xFFC00000, then + (-Inf x 5) = NaN + -Inf -> 0xFFC00000
#   n3: mov [3e38, 3e38, -3e38, 0]: products 3e38 x 2 = 6e38 and 3e38 x 3 overflow to +Inf in fp32;
#       m0: +Inf + 3e38 - 3e38 = +Inf; m1: -3e38 + Inf - 3e38 = +Inf; m2: 0 + Inf - 3e38 = +Inf
#   n4: mov [1, 2, 3, 4]: finite sums 2+2+3+2 = 9, -1+6+3+1 = 9, 0+10+3+8 = 21
#   n5: mov [1, -qNaN 0xFFC05678, 1, 1]: finite + NaN = that NaN, sign and payload kept -> 0xFFC05678
st = np.array([[2.0, -1.0, 0.0], [1.0, 3.0, 5.0], [1.0, 1.0, 1.0], [0.5, 0.25, 2.0]], F32)
nan1 = f32b(0x7FC01234)
nan2 = f32b(0xFFC05678)
inf = F32(np.inf)
mov = np.array([
    [nan1, inf, inf, F32(3e38), 1, 1],
    [1, 1, -inf, F32(3e38), 2, nan2],
    [2, 0, 0, F32(-3e38), 3, 1],
    [0, 0, 0, 0, 4, 1],
], F32)
g, y = simple("float32", "float32", mov, st)
yb = bits(y)
assert (yb[:, 0] == 0x7FC01234).all() and (yb[:, 5] == 0xFFC05678).all()
assert (yb[0, 1] == bits(inf)) and (yb[1, 1] == bits(-inf)) and (yb[2, 1] == 0xFFC00000)
assert (yb[0, 2] == 0xFFC00000) and (yb[1, 2] == bits(-inf)) and (yb[2, 2] == 0xFFC00000)
assert (yb[:, 3] == bits(inf)).all() and (y[:, 4] == [9, 9, 21]).all()
case("psum_nan_inf_fp32", g,
     "fp32 NaN / Inf through the products and the sum (one NaN per sum at most): a NaN's payload and sign kept "
     "(0x7FC01234, 0xFFC05678), Inf x 0 and Inf - Inf give the x86 default NaN 0xFFC00000, an fp32 product "
     "overflow (3e38 x 2) gives Inf", ("M3", "M6", "M4"))

# bf16 NaN / Inf inputs: bf16 0x7FC1 widens to fp32 0x7FC10000 (payload kept), bf16 -Inf
st = encode(np.array([[1.0, 2.0], [1.0, -1.0]], F32), "bfloat16")
mov = np.array([[0x7FC1, 0xFF80, 0x3F80], [0x3F80, 0x3F80, 0x7F80]], np.uint16)  # [NaN, -Inf, 1], [1, 1, +Inf]
g, y = simple("bfloat16", "bfloat16", mov, st)
yb = bits(y)
assert (yb[:, 0] == 0x7FC10000).all() and yb[0, 1] == bits(-inf) and yb[1, 1] == bits(-inf)
assert yb[0, 2] == bits(inf) and yb[1, 2] == bits(-inf)
case("psum_nan_inf_bfloat16", g,
     "bf16 inputs: NaN 0x7FC1 widens exactly to 0x7FC10000 and keeps its payload through products and sums; "
     "+-Inf x finite", ("M3", "M6", "M4"))

# NaN and Inf across instructions: PSUM = PSUM + value with one NaN or two Infs
#   tile A: P0 = NaN 0x7FC0ABCD (mov NaN x 1), P1 finite 5 -> NaN 0x7FC0ABCD kept
#   tile B: P0 = 5, P1 = -NaN 0xFFC00042 -> that NaN
#   tile C: P0 = +Inf, P1 = -Inf -> default NaN 0xFFC00000
g = Prog()
g.psum("ps")
m0 = np.array([[f32b(0x7FC0ABCD), 5.0, inf]], F32)
m1 = np.array([[5.0, f32b(0xFFC00042), -inf]], F32)
for nm, arr in [("m0", m0), ("m1", m1), ("one", np.ones((1, 1), F32))]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
g.matmult(sbap("m0", "float32", 3, 1, 3), sbap("one", "float32", 1, 1, 1), psap(g, "ps", 1, 3, 0, 7 * BANK), cc224(START))
g.matmult(sbap("m1", "float32", 3, 1, 3), sbap("one", "float32", 1, 1, 1), psap(g, "ps", 1, 3, 0, 7 * BANK), cc224(ACC | STOP))
y = g.copy_out("ps", "y", 0, 7 * BANK, 1, 3)
assert (bits(y[0]) == [0x7FC0ABCD, 0xFFC00042, 0xFFC00000]).all()
case("psum_nan_inf_accumulate_across_instructions", g,
     "a PSUM NaN plus a finite value keeps the NaN (0x7FC0ABCD), a finite PSUM plus a NaN value gives that NaN "
     "(0xFFC00042), +Inf then -Inf gives the default NaN 0xFFC00000 (bank 7)", ("M4", "M6"))

# ================================================================ S: the two field schemas, the same bits
K, M, N = 32, 24, 96
grp = [(randf((K, N)), randf((K, M))) for _ in range(3)]
for schema in ("klr", "cc224"):
    g = Prog()
    g.psum("ps")
    for i, (mv, sv) in enumerate(grp):
        g.sb_tile(f"m{i}", "float32", K, N)
        g.sb_tile(f"s{i}", "float32", K, M)
        g.put(f"m{i}", mv)
        g.put(f"s{i}", sv)
    for i in range(3):
        if schema == "klr":
            fl = klr(i == 0, i == 2)
        else:
            fl = cc224([START, ACC, ACC | STOP][i])
        g.matmult(sbap(f"m{i}", "float32", N, K, N), sbap(f"s{i}", "float32", M, K, M), psap(g, "ps", M, N, 0, 6 * BANK), fl)
    y = g.copy_out("ps", "y", 0, 6 * BANK, M, N)
    want = (dot(*grp[0]) + dot(*grp[1])) + dot(*grp[2])
    assert (bits(y) == bits(want)).all()
    case(f"schema_{schema}_group_start_acc_acc", g,
         f"the same 3-instruction group (START, ACC, ACC+STOP) in the {'KLR-era schema (start_tensor_calc true / false, stop_tensor_calc)' if schema == 'klr' else 'neuronx-cc 2.24 schema (accumulation_flag 1, 4, 6 and the 13 keys)'}: "
         "both cases expect the same bits", ("M3", "M4"))

# uint8 with zero points in the KLR schema (optional quant offsets)
mov_raw, st_raw = ints(0, 255, (32, 40)).astype(np.uint8), ints(0, 255, (32, 16)).astype(np.uint8)
g, y = simple("uint8", "uint8", mov_raw, st_raw, flags=klr(True, True, zpI=100, zpW=17))
assert (exact_dot(widen(mov_raw, "uint8", 100), widen(st_raw, "uint8", 17)) == y).all()
case("schema_klr_uint8_quant_offsets", g,
     "KLR-era schema with the optional ifmap_quant_offset 100 / weights_quant_offset 17 on uint8 operands (exact sums)",
     ("M2", "M4", "M5"))


# ================================================================ V: validation errors (M1, M5)
def err_prog(mov_dt, st_dt, K1, N, K2, M, out_m, out_n, flags, out_dt="float32", out_c0=0, st_row=None):
    g = Prog()
    g.sb_tile("mov", mov_dt, K1, N)
    g.sb_tile("st", st_dt, K2, st_row or M)
    g.psum("ps", dt=out_dt)
    pitch = PSUM_BYTES // SIZE[out_dt]
    out = ap("ps", out_dt, [[pitch, out_m], [1, out_n]], out_c0)
    g.matmult(sbap("mov", mov_dt, N, K1, N), sbap("st", st_dt, st_row or M, K2, M), out, flags, oracle=False)
    return g


LOC = "instruction #0 'i0' (Matmult)"


def err_case(name, g, note, kind, choice, extra=()):
    case(name, g, note, (choice,), [(kind, LOC, "")] + list(extra))


fl = cc224(WHOLE)
fl["start_tensor_calc"] = True
err_case("error_both_start_tensor_calc_and_accumulation_flag", err_prog("float32", "float32", 8, 16, 8, 4, 4, 16, fl),
         "a record with both start_tensor_calc and accumulation_flag", "bad-field", "M1")
fl = cc224(WHOLE)
del fl["accumulation_flag"]
err_case("error_neither_start_tensor_calc_nor_accumulation_flag", err_prog("float32", "float32", 8, 16, 8, 4, 4, 16, fl),
         "a record with neither start_tensor_calc nor accumulation_flag (start_tensor_calc is required in the KLR schema)",
         "missing-field", "M1")
err_case("error_k_mismatch", err_prog("bfloat16", "bfloat16", 64, 32, 32, 16, 16, 32, cc224(WHOLE)),
         "moving K = 64 partitions, stationary K = 32", "ap-shape", "M5")
err_case("error_m_over_128", err_prog("bfloat16", "bfloat16", 32, 16, 32, 129, 129, 16, cc224(WHOLE)),
         "stationary M = 129 free elements and a 129-partition PSUM output (which also leaves the 128-partition "
         "PSUM location: out-of-bounds)", "ap-shape", "M5", extra=[("out-of-bounds", LOC + " › outs[0]", "")])
err_case("error_n_over_bank_513", err_prog("float32", "float32", 8, 513, 8, 4, 4, 513, cc224(WHOLE)),
         "N = 513: 2052 bytes per partition, more than one 2 KiB PSUM bank", "ap-shape", "M5")
err_case("error_output_crosses_bank", err_prog("float32", "float32", 8, 256, 8, 4, 4, 256, cc224(WHOLE), out_c0=BANK - 128),
         "N = 256 (fits a bank) but the output starts at column 384 of bank 0 and runs into bank 1", "ap-shape", "M5")
err_case("error_output_partitions_not_m", err_prog("float32", "float32", 8, 16, 8, 4, 8, 16, cc224(WHOLE)),
         "stationary M = 4 but the output has 8 partitions", "ap-shape", "M5")
err_case("error_output_free_not_n", err_prog("float32", "float32", 8, 16, 8, 4, 4, 32, cc224(WHOLE)),
         "moving N = 16 but the output has 32 free elements", "ap-shape", "M5")
err_case("error_output_dtype_bfloat16", err_prog("bfloat16", "bfloat16", 8, 16, 8, 4, 4, 16, cc224(WHOLE), out_dt="bfloat16"),
         "a bf16 PSUM output (the output must be float32)", "dtype", "M5")
err_case("error_fp32_with_bfloat16", err_prog("float32", "bfloat16", 8, 16, 8, 4, 4, 16, cc224(WHOLE)),
         "moving float32 with stationary bfloat16 (fp32 pairs only with fp32)", "dtype", "M5")


# ================================================================ new families: M7 (is_transpose), M8 (DoubleRow), M9 (gen4 bf16 PSUM)
# Their own RNG, after every earlier case, so the cases above keep their bytes.
RNG2 = np.random.default_rng(20270101)
UBITS = {4: np.uint32, 2: np.uint16, 1: np.uint8}


def apshape(op):
    """(partitions, free elements) of an AP."""
    return op["ap"][0][1], int(np.prod([n for _, n in op["ap"][1:]]))


def is_identity(vals):
    """M7: an exact identity matrix at run time (values compared in fp32: 1 on the diagonal, 0 elsewhere)."""
    p, f = vals.shape
    return p == f and bool((vals == np.eye(p, dtype=F32)).all())


def flags(flag=WHOLE, zero_region=0, **kw):
    f = cc224(flag, zero_region)
    f.update(kw)
    return f


def klr_t(start=True, stop=True):
    f = klr(start, stop)
    f["is_transpose"] = True
    return f


def psap_dt(g, psname, m, n, p0=0, c0=0, dt="float32"):
    """An [M, N] PSUM AP in dtype dt at partition p0, element column c0 (in dt elements)."""
    pe = g.ps[psname].nbytes // SIZE[dt]
    return ap(psname, dt, [[pe, m], [1, n]], p0 * pe + c0)


def copy_raw(g, psname, out, p0, c0, m, n, dt):
    """TensorCopy PSUM [p0:p0+m, c0:c0+n] (dtype dt) -> an SB tile of the same dtype (equal dtypes copy
    bytes: fidelity N1), then Save to external output `out`. Returns the expected stored array."""
    p = g.ps[psname]
    es = SIZE[dt]
    pe = p.nbytes // es
    assert p.tb[p0:p0 + m, c0 * es:(c0 + n) * es].all(), "reads only what the case wrote or cleared"
    expected = np.ascontiguousarray(p.raw[p0:p0 + m, c0 * es:(c0 + n) * es]).view(STORE[dt])
    g.sb_tile(out + "_sb", dt, m, n)
    g.inst("TensorCopy", [ap(psname, dt, [[pe, m], [1, n]], p0 * pe + c0)], [birprog.tile(out + "_sb", dt, m, n)])
    g.save(out + "_sb", out, dt, m, n, expected)
    return expected


def transpose(g, mov, st, out, fields):
    """M7. gen2: the ordinary Matmult (M2-M4). gen3 / gen4: the data operand's bits, transposed, overwrite
    the output (after START's clear). Returns which operand was the data ("mov" / "st")."""
    assert fields["is_transpose"] is True
    if g.arch == "gen2":
        g.matmult(mov, st, out, fields)
        return "st"  # the NKI reading's data, through the formula
    g.inst("Matmult", [mov, st], [out], **fields)
    Km, Nm = apshape(mov)
    Ks, Ms = apshape(st)
    Po, Fo = apshape(out)
    fits_a = Km == Nm == Ks and (Po, Fo) == (Ms, Km)  # NKI: identity moving P x P, data stationary P x F
    fits_b = Ks == Ms == Nm and (Po, Fo) == (Nm, Km)  # KLR: data moving P x F, identity stationary F x F
    assert fits_a or fits_b, "a shape error case is built with err_new"
    if fits_a and fits_b:  # square: the data is the operand that is not an identity; stationary by default
        mv = widen(g.read(mov), mov["dtype"])
        sv = widen(g.read(st), st["dtype"])
        which = "mov" if (is_identity(sv) and not is_identity(mv)) else "st"
    else:
        which = "st" if fits_a else "mov"
    data = mov if which == "mov" else st
    dt = data["dtype"]
    raw = np.ascontiguousarray(g.read(data)).view(UBITS[SIZE[dt]])  # [P, F] bits
    res = np.ascontiguousarray(raw.T)  # [F, P]: out[f, p] = data[p, f]
    if SIZE[dt] == 1:  # fp8: a uint16 output, the byte in the low byte
        assert out["dtype"] == "uint16"
        res = res.astype(np.uint16)
    else:
        assert out["dtype"] == dt
    start, _, zr = mode_of(fields)
    idx = ap_index(out["ap"], out["offset"])
    idx = idx.reshape(idx.shape[0], -1)
    g.ps[out["memref"]].write(idx, res, start, False, zr, out["dtype"], transpose=True)
    return which


def out_dt_of(dt, arch):
    if arch == "gen2":
        return "float32"
    return "uint16" if SIZE[dt] == 1 else dt


def raw_bits(dt, shape):
    """Random bit patterns of dtype dt (every NaN, Inf, -0 and subnormal possible)."""
    es = SIZE[dt]
    return RNG2.integers(0, 1 << (8 * es), shape, dtype=np.uint64).astype(UBITS[es]).view(STORE[dt])


def rand_vals(dt, shape, scale=8.0):
    x = RNG2.standard_normal(shape) * scale
    if dt == "float8e4":
        x = np.clip(x, -200, 200)
    return encode(x, dt)


def tr_prog(dt, P, F, reading, arch="gen3", data=None, ident=None, fl=None, out_at=(0, 0)):
    """One transpose: reading "nki" (identity moving P x P, data stationary P x F) or "klr" (data moving
    P x F, identity stationary F x F); output F x P in PSUM at partition out_at[0], column out_at[1].
    Returns (prog, data raw, expected read back)."""
    g = Prog(arch)
    data = rand_vals(dt, (P, F)) if data is None else data
    n = P if reading == "nki" else F
    ident = encode(np.eye(n), dt) if ident is None else ident
    mov_raw, st_raw = (ident, data) if reading == "nki" else (data, ident)
    g.sb_tile("mov", dt, *mov_raw.shape)
    g.sb_tile("st", dt, *st_raw.shape)
    g.put("mov", mov_raw)
    g.put("st", st_raw)
    odt = out_dt_of(dt, arch)
    g.psum("ps", dt=odt)
    fl = fl if fl is not None else (flags(WHOLE, is_transpose=True) if reading == "nki" else klr_t())
    which = transpose(g, sbap("mov", dt, mov_raw.shape[1], *mov_raw.shape), sbap("st", dt, st_raw.shape[1], *st_raw.shape),
                      psap_dt(g, "ps", F, P, out_at[0], out_at[1], odt), fl)
    if arch == "gen2":
        y = g.copy_out("ps", "y", out_at[0], out_at[1], F, P)
    else:
        assert which == ("st" if reading == "nki" else "mov")
        y = copy_raw(g, "ps", "y", out_at[0], out_at[1], F, P, odt)
    return g, data, y


def expect_transposed(y, data, dt):
    """gen3 / gen4: y holds data.T bit for bit (fp8: the byte in a uint16)."""
    b = np.ascontiguousarray(data).view(UBITS[SIZE[dt]]).T
    if SIZE[dt] == 1:
        b = b.astype(np.uint16)
    assert (np.ascontiguousarray(y).view(b.dtype) == b).all()


TR = ("M7",)
TRP = ("M4", "M7")  # the cases that START-clear a bank (all read back only what the transpose wrote, unless said)

# ---- T1: each dtype in both readings, non-square (the shapes decide), gen3
for dt, (P, F) in [("float32", (48, 20)), ("bfloat16", (64, 40)), ("float16", (24, 72)), ("float8e4", (32, 8)), ("float8e5", (96, 128))]:
    for reading in ("nki", "klr"):
        Pr, Fr = (P, F) if reading == "nki" else (F, P)
        data = None
        if SIZE[dt] == 1 and Pr * Fr == 256:  # every fp8 byte once (NaNs, Infs, -0 included)
            data = RNG2.permutation(256).astype(np.uint8).reshape(Pr, Fr)
        out_at = (0, 0) if reading == "nki" else (8, 2 * BANK_BYTES // SIZE[out_dt_of(dt, "gen3")] + 40)
        g, data, y = tr_prog(dt, Pr, Fr, reading, data=data, out_at=out_at)
        expect_transposed(y, data, dt)
        if reading == "nki":
            what = (f"NKI reading: identity moving {Pr}x{Pr}, data stationary {Pr}x{Fr} (2.24 schema, flag 3) -> "
                    f"output {Fr}x{Pr} at PSUM partition 0, bank 0")
        else:
            what = (f"KLR reading: data moving {Pr}x{Fr}, identity stationary {Fr}x{Fr} (KLR schema, start/stop true) "
                    f"-> output {Fr}x{Pr} at PSUM partitions 8.., bank 2 element 40")
        outd = "uint16 (the fp8 byte in the low byte, 0 above)" if SIZE[dt] == 1 else dt
        extra = " (all 256 byte values)" if data.size == 256 and SIZE[dt] == 1 else ""
        case(f"transpose_gen3_{dt}_{reading}_P{Pr}_F{Fr}", g,
             f"gen3 is_transpose, {dt} data{extra}: {what}; out[f, p] = data[p, f] bit for bit, output dtype {outd}",
             TRP)

# ---- T2: bits: NaN payloads (quiet and signalling, both signs), -0, Inf, subnormals kept (gen3)
for dt, reading, (P, F) in [("float32", "nki", (40, 24)), ("bfloat16", "klr", (24, 56)), ("float16", "nki", (16, 48))]:
    data = raw_bits(dt, (P, F))
    u = data.view(UBITS[SIZE[dt]])
    specials = {"float32": [0x7FC01234, 0xFFC05678, 0x7F800001, 0xFF812345, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000],
                "bfloat16": [0x7FC1, 0xFFC2, 0x7F81, 0xFF85, 0x8000, 0x0001, 0x7F80, 0xFF80],
                "float16": [0x7E01, 0xFE02, 0x7C01, 0xFD55, 0x8000, 0x0001, 0x7C00, 0xFC00]}[dt]
    u[0, :len(specials)] = specials
    u[:len(specials), 1] = specials
    g, data, y = tr_prog(dt, P, F, reading, data=data)
    expect_transposed(y, data, dt)
    case(f"transpose_gen3_{dt}_bits_{reading}_P{P}_F{F}", g,
         f"gen3 is_transpose ({reading.upper()} reading), {dt} data of random bit patterns plus quiet / signalling NaNs "
         f"of both signs with payloads, -0, +-Inf and the smallest subnormal ({', '.join(hex(v) for v in specials)}): "
         "every bit copied, no arithmetic, no quieting", TRP)

# ---- T3: square P == F: the run-time identity decides
SQ = 24


def sq_case(name, mov_raw, st_raw, want_data, note, dt="float32"):
    g = Prog("gen3")
    g.sb_tile("mov", dt, SQ, SQ)
    g.sb_tile("st", dt, SQ, SQ)
    g.put("mov", mov_raw)
    g.put("st", st_raw)
    odt = out_dt_of(dt, "gen3")
    g.psum("ps", dt=odt)
    which = transpose(g, sbap("mov", dt, SQ, SQ, SQ), sbap("st", dt, SQ, SQ, SQ), psap_dt(g, "ps", SQ, SQ, 0, 0, odt),
                      flags(WHOLE, is_transpose=True))
    assert which == want_data
    y = copy_raw(g, "ps", "y", 0, 0, SQ, SQ, odt)
    expect_transposed(y, mov_raw if which == "mov" else st_raw, dt)
    case(name, g, note, TRP)


I32 = encode(np.eye(SQ), "float32")
A_ = rand_vals("float32", (SQ, SQ))
B_ = rand_vals("float32", (SQ, SQ))
sq_case("transpose_gen3_square_moving_identity", I32, A_, "st",
        f"gen3 is_transpose {SQ}x{SQ} fp32 (both readings fit): moving is the identity, stationary random -> "
        "the stationary is the data, out = st.T")
sq_case("transpose_gen3_square_stationary_identity", A_, I32, "mov",
        f"gen3 is_transpose {SQ}x{SQ} fp32: stationary is the identity, moving random -> the moving is the data, "
        "out = mov.T")
sq_case("transpose_gen3_square_neither_identity", A_, B_, "st",
        f"gen3 is_transpose {SQ}x{SQ} fp32: neither operand an identity -> the stationary is the data, out = st.T")
sq_case("transpose_gen3_square_both_identity", I32, I32, "st",
        f"gen3 is_transpose {SQ}x{SQ} fp32: both identities -> out = the identity (either reading)")
near = I32.copy()
near[3, 17] = F32(2.0 ** -20)  # one off-diagonal element not 0: not an exact identity
sq_case("transpose_gen3_square_near_identity_moving", near, I32, "mov",
        f"gen3 is_transpose {SQ}x{SQ} fp32: moving = identity except element [3, 17] = 2^-20, stationary the exact "
        "identity -> the moving is the data: out = mov.T (out[17, 3] = 2^-20)")
near2 = I32.copy()
near2[5, 5] = F32(1.0 + 2.0 ** -23)  # a diagonal element one ulp above 1
sq_case("transpose_gen3_square_near_identity_diagonal", A_, near2, "st",
        f"gen3 is_transpose {SQ}x{SQ} fp32: stationary = identity except [5, 5] = 1 + 2^-23, moving random -> neither "
        "is an exact identity, so the stationary is the data: out = st.T")
E4I = encode(np.eye(SQ), "float8e4")  # 1.0 = 0x38
E4A = RNG2.integers(0, 256, (SQ, SQ)).astype(np.uint8)
sq_case("transpose_gen3_square_float8e4_stationary_identity", E4A, E4I, "mov",
        f"gen3 is_transpose {SQ}x{SQ} float8e4: stationary the identity (0x38 on the diagonal), moving random bytes "
        "-> out = mov.T as uint16 (byte in the low byte)", "float8e4")

# ---- T4: the identity operand's values are not used when the shapes decide (gen3)
g = Prog("gen3")
d1, d2 = rand_vals("float32", (16, 40)), rand_vals("float32", (40, 16))
junk1 = raw_bits("float32", (16, 16))  # NaNs, Infs, anything: in the identity's place
junk2 = raw_bits("float32", (16, 16))
for nm, arr in [("j1", junk1), ("d1", d1), ("d2", d2), ("j2", junk2)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
g.psum("ps")
assert transpose(g, sbap("j1", "float32", 16, 16, 16), sbap("d1", "float32", 40, 16, 40), psap(g, "ps", 40, 16), flags(WHOLE, is_transpose=True)) == "st"
assert transpose(g, sbap("d2", "float32", 16, 40, 16), sbap("j2", "float32", 16, 16, 16), psap(g, "ps", 16, 40, 0, BANK), klr_t()) == "mov"
y1 = copy_raw(g, "ps", "y_nki", 0, 0, 40, 16, "float32")
y2 = copy_raw(g, "ps", "y_klr", 0, BANK, 16, 40, "float32")
expect_transposed(y1, d1, "float32")
expect_transposed(y2, d2, "float32")
case("transpose_gen3_identity_operand_ignored", g,
     "gen3 is_transpose, fp32, shapes decide: NKI reading with a 16x16 'identity' moving of random bits (NaN, Inf "
     "possible) and data stationary 16x40 -> bank 0; KLR reading with data moving 40x16 and a random-bit 16x16 "
     "stationary -> bank 1: both outputs are the data transposed, the identity's values unused", TRP)

# ---- T5: flags. The transpose overwrites, whatever the flags; START clears first.
# Banks 0, 1, 2 hold an ordinary fp32 product (START) at the transpose's place; transposes with
# accumulation_flag 4 (ACC), 6 (ACC|STOP) and 0 then overwrite: each output is data.T, no add.
P, F = 32, 16
g = Prog("gen3")
d = rand_vals("float32", (P, F))
pm, ps_ = rand_vals("float32", (8, P)), rand_vals("float32", (8, F))
for nm, arr in [("idn", encode(np.eye(P), "float32")), ("d", d), ("pm", pm), ("ps_", ps_)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
g.psum("ps")
for i, fl in enumerate([ACC, ACC | STOP, 0]):
    g.matmult(sbap("pm", "float32", P, 8, P), sbap("ps_", "float32", F, 8, F), psap(g, "ps", F, P, 0, i * BANK), cc224(START))
    transpose(g, sbap("idn", "float32", P, P, P), sbap("d", "float32", F, P, F), psap(g, "ps", F, P, 0, i * BANK), flags(fl, is_transpose=True))
for i, fl in enumerate([ACC, ACC | STOP, 0]):
    y = copy_raw(g, "ps", f"y_flag{fl}", 0, i * BANK, F, P, "float32")
    expect_transposed(y, d, "float32")
case("transpose_gen3_accumulate_flags_overwrite", g,
     "gen3 is_transpose fp32 (NKI reading, 32x16 data) with accumulation_flag 4, 6 and 0 into banks 0..2, each "
     "holding an ordinary START product at the same place first: the transpose overwrites (out = data.T, no add)",
     ("M4", "M7"))

# A bank filled on partitions 0..15 by idle ordinary writes (16 x 512 fp32, banks 0..2); a transpose
# with START (flag 3) and psum_zero_region 1, output 8 x 32 at bank 0 column 64 (partitions 0..7):
# partitions 0..7 read +0 in banks 0 and 1 outside the output, the output is data.T, bank 2 and
# partitions 8..15 keep the idle data.
g = Prog("gen3")
fm, fs = randf((8, 512)), randf((8, 16))
d = rand_vals("float32", (32, 8))
for nm, arr in [("fm", fm), ("fs", fs), ("idn", encode(np.eye(32), "float32")), ("d", d)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
g.psum("ps")
for b_ in range(3):
    g.matmult(sbap("fm", "float32", 512, 8, 512), sbap("fs", "float32", 16, 8, 16), psap(g, "ps", 16, 512, 0, b_ * BANK), cc224(0))
transpose(g, sbap("idn", "float32", 32, 32, 32), sbap("d", "float32", 8, 32, 8), psap(g, "ps", 8, 32, 0, 64),
          flags(WHOLE, zero_region=1, is_transpose=True))
y = copy_raw(g, "ps", "banks012", 0, 0, 16, 3 * BANK, "float32")
Fv = dot(fm, fs)
yb = y.view(np.uint32)
expect_transposed(y[:8, 64:96], d, "float32")
assert (yb[:8, :64] == 0).all() and (yb[:8, 96:2 * BANK] == 0).all()
assert (yb[:8, 2 * BANK:] == bits(Fv[:8])).all() and (yb[8:, :BANK] == bits(Fv[8:])).all()
case("transpose_gen3_start_clears_banks", g,
     "gen3 is_transpose fp32 with START (flag 3) and psum_zero_region 1, output 8x32 at bank 0 column 64, into banks "
     "0..2 filled on partitions 0..15 by idle ordinary writes: on partitions 0..7 banks 0 and 1 read +0 outside the "
     "output, the output holds data.T; bank 2 and partitions 8..15 keep the idle data", ("M4", "M7"))

# ---- T6: AWS shapes (gen3)
a = (RNG2.random((128, 64)) * 100).astype(F32)
g, _, y = tr_prog("float32", 128, 64, "nki", data=a)
assert (y == a.T).all()
case("transpose_gen3_aws_float32_128x64", g,
     "AWS test_nki_isa_nc_transpose example 1: a (128, 64) fp32 random_sample x 100 through PE (NKI reading: "
     "identity moving 128x128, a stationary) -> aT (64, 128) = a.T exactly (AWS: allclose)", TRP)
sq = (RNG2.random((128, 128)) * 100).astype(F32)
g = Prog("gen3")
for nm, arr in [("idn", encode(np.eye(128), "float32")), ("d", sq)]:
    g.sb_tile(nm, "float32", 128, 128)
    g.put(nm, arr)
g.psum("ps")
assert transpose(g, sbap("idn", "float32", 128, 128, 128), sbap("d", "float32", 128, 128, 128), psap(g, "ps", 128, 128),
                 flags(WHOLE, is_transpose=True)) == "st"
y = copy_raw(g, "ps", "y", 0, 0, 128, 128, "float32")
assert (y == sq.T).all()
case("transpose_gen3_float32_128x128_full", g,
     "gen3 is_transpose at full size: identity moving 128x128, data stationary 128x128 fp32 (square: the moving is "
     "the identity, so the stationary is the data) -> out = data.T", TRP)
sqb = rand_vals("bfloat16", (128, 128))
g = Prog("gen3")
for nm, arr in [("d", sqb), ("idn", encode(np.eye(128), "bfloat16"))]:
    g.sb_tile(nm, "bfloat16", 128, 128)
    g.put(nm, arr)
g.psum("ps", dt="bfloat16")
assert transpose(g, sbap("d", "bfloat16", 128, 128, 128), sbap("idn", "bfloat16", 128, 128, 128),
                 psap_dt(g, "ps", 128, 128, 0, 0, "bfloat16"), klr_t()) == "mov"
y = copy_raw(g, "ps", "y", 0, 0, 128, 128, "bfloat16")
expect_transposed(y, sqb, "bfloat16")
case("transpose_gen3_bfloat16_128x128_klr_stationary_identity", g,
     "gen3 is_transpose at full size in the KLR schema: data moving 128x128 bf16, identity stationary 128x128 "
     "(square: the stationary is the identity, so the moving is the data) -> out = data.T in bf16", TRP)

# ---- T7: gen4 behaves as gen3
for dt, reading, (P, F) in [("bfloat16", "nki", (64, 96)), ("float8e5", "klr", (40, 72))]:
    g, data, y = tr_prog(dt, P, F, reading, arch="gen4")
    expect_transposed(y, data, dt)
    case(f"transpose_gen4_{dt}_{reading}_P{P}_F{F}", g,
         f"arch gen4 is_transpose ({reading.upper()} reading), {dt} data {P}x{F}: as on gen3, out = data.T bit for bit "
         f"({'uint16 output' if SIZE[dt] == 1 else 'bf16 output'})", TRP)

# ---- T8: gen2: is_transpose ignored, the ordinary fp32 formula
# transpose_gen2_float32_nan_inf: identity moving 6x6, data stationary 6x5 (NKI reading), output 5x6 fp32:
# out[f, p] = sum_k I[k, p] * data[k, f] in ascending k from +0 (M3).
#   f0 = [-0, 1.5, -2, 3e-39 (subnormal), 7, -0]: out[0, p] = data[p, 0] except -0 -> +0 (+0 + -0 = +0; the other
#        products are +-0); the subnormal 3e-39 survives (x87/SSE: no flush in NumPy)
#   f1 = qNaN 0x7FC01234 at k = 2: every p has the term I[2, p] * NaN = NaN (1 * NaN and 0 * NaN keep the payload),
#        so the whole row 1 is 0x7FC01234
#   f2 = +Inf at k = 1: p = 1: 1 * Inf = +Inf plus finite terms -> +Inf; p != 1: 0 * Inf = 0xFFC00000 -> that NaN
#   f3 = -Inf at k = 4: p = 4: -Inf; the others 0xFFC00000
#   f4 = finite [1, 2, 3, 4, 5, 6]: out[4] = f4
d = np.zeros((6, 5), F32)
d[:, 0] = [-0.0, 1.5, -2.0, F32(3e-39), 7.0, -0.0]
d[:, 1] = [1, 2, f32b(0x7FC01234), 4, 5, 6]
d[:, 2] = [1, np.inf, 3, 4, 5, 6]
d[:, 3] = [1, 2, 3, 4, -np.inf, 6]
d[:, 4] = [1, 2, 3, 4, 5, 6]
g, _, y = tr_prog("float32", 6, 5, "nki", arch="gen2", data=d)
yb = bits(y)
r0 = d[:, 0].copy()
r0[r0 == 0] = 0.0  # -0 -> +0
assert (yb[0] == bits(r0)).all() and bits(r0)[0] == 0 and yb[0, 3] == bits(F32(3e-39))
assert (yb[1] == 0x7FC01234).all()
assert yb[2, 1] == bits(F32(np.inf)) and (np.delete(yb[2], 1) == 0xFFC00000).all()
assert yb[3, 4] == bits(F32(-np.inf)) and (np.delete(yb[3], 4) == 0xFFC00000).all()
assert (y[4] == d[:, 4]).all()
case("transpose_gen2_float32_nan_inf_spread", g,
     "arch gen2: is_transpose is ignored, the ordinary fp32 Matmult runs (identity moving 6x6, data stationary 6x5, "
     "output 5x6): -0 becomes +0, a NaN (0x7FC01234) fills its whole output row (NaN x 0 = NaN), +Inf / -Inf stay "
     "at their place and give 0xFFC00000 (Inf x 0) elsewhere in the row; hand-worked in make_cases.py",
     ("M2", "M3", "M4", "M6", "M7"))
db = rand_vals("bfloat16", (64, 40))
g, _, y = tr_prog("bfloat16", 64, 40, "nki", arch="gen2", data=db)
assert (y == widen(db, "bfloat16").T).all()
case("transpose_gen2_bfloat16_fp32_output", g,
     "arch gen2 is_transpose, bf16 identity moving 64x64, bf16 data stationary 64x40, fp32 PSUM output 40x64 = the "
     "data widened and transposed (the sums x + zeros are exact)", ("M2", "M3", "M4", "M7"))
# gen2 with a non-identity 'identity' and accumulation: the formula and the tracked path apply
g = Prog("gen2")
P, F = 32, 24
mv0, st0 = rand_vals("float32", (P, P)), rand_vals("float32", (P, F))
mv1, st1 = encode(np.eye(P), "float32"), rand_vals("float32", (P, F))
for nm, arr in [("m0", mv0), ("s0", st0), ("m1", mv1), ("s1", st1)]:
    g.sb_tile(nm, "float32", *arr.shape)
    g.put(nm, arr)
g.psum("ps")
transpose(g, sbap("m0", "float32", P, P, P), sbap("s0", "float32", F, P, F), psap(g, "ps", F, P, 0, 3 * BANK), flags(START, is_transpose=True))
transpose(g, sbap("m1", "float32", P, P, P), sbap("s1", "float32", F, P, F), psap(g, "ps", F, P, 0, 3 * BANK), flags(ACC | STOP, is_transpose=True))
y = g.copy_out("ps", "y", 0, 3 * BANK, F, P)
assert (bits(y) == bits(dot(mv0, st0) + dot(mv1, st1))).all()
case("transpose_gen2_formula_and_accumulation", g,
     "arch gen2 is_transpose fp32: a START with a random (non-identity) moving 32x32 and stationary 32x24 gives the "
     "ordinary product, then an ACC|STOP with an identity moving adds st1.T in fp32 (tracked path)",
     ("M2", "M3", "M4", "M7"))


# ---- T9: validation errors
def err_new(arch, mov_dt, mov_pairs, mov_tile, st_dt, st_pairs, st_tile, out_dt, out_pairs, fields):
    """A one-instruction program (the Matmult is instruction #0); tiles [parts, row] hold the APs."""
    g = Prog(arch)
    g.sb_tile("mov", mov_dt, *mov_tile)
    g.sb_tile("st", st_dt, *st_tile)
    g.psum("ps", dt=out_dt)
    g.matmult(ap("mov", mov_dt, mov_pairs), ap("st", st_dt, st_pairs), ap("ps", out_dt, out_pairs), fields, oracle=False)
    return g


def pitch_of(dt):
    return PSUM_BYTES // SIZE[dt]


err_case("transpose_error_shape_fits_neither",
         err_new("gen3", "float32", [[16, 16], [1, 16]], (16, 16), "float32", [[8, 16], [1, 8]], (16, 8),
                 "float32", [[pitch_of("float32"), 16], [1, 16]], flags(WHOLE, is_transpose=True)),
         "gen3 is_transpose: moving 16x16, stationary 16x8, output 16x16 (the NKI reading wants 8x16, the KLR reading "
         "a square stationary)", "ap-shape", "M7")
err_case("transpose_error_output_dtype_not_data",
         err_new("gen3", "bfloat16", [[32, 32], [1, 32]], (32, 32), "bfloat16", [[16, 32], [1, 16]], (32, 16),
                 "float32", [[pitch_of("float32"), 16], [1, 32]], flags(WHOLE, is_transpose=True)),
         "gen3 is_transpose: bf16 data (NKI reading, 32x16) with a float32 output: the output must be the data's dtype",
         "dtype", "M7")
err_case("transpose_error_float8_output_not_uint16",
         err_new("gen3", "float8e4", [[32, 32], [1, 32]], (32, 32), "float8e4", [[16, 32], [1, 16]], (32, 16),
                 "bfloat16", [[pitch_of("bfloat16"), 16], [1, 32]], flags(WHOLE, is_transpose=True)),
         "gen3 is_transpose: float8e4 data with a bfloat16 output: fp8 data writes a 2-byte integer output (uint16)",
         "dtype", "M7")
err_case("transpose_error_gen2_output_in_data_dtype",
         err_new("gen2", "bfloat16", [[32, 32], [1, 32]], (32, 32), "bfloat16", [[16, 32], [1, 16]], (32, 16),
                 "bfloat16", [[pitch_of("bfloat16"), 16], [1, 32]], flags(WHOLE, is_transpose=True)),
         "arch gen2 is_transpose: is_transpose is ignored, so a bf16 output is the ordinary rule's error",
         "dtype", "M7")


# ================================================================ M8: perf_mode DoubleRow
def dr_dot(mv3, sv3):
    """M8: mv3 [P, 2, N], sv3 [P, 2, M] fp32 -> [M, N]: per p the two products (exact) added in fp32 first,
    those pair sums added over p ascending from +0.0 (fp32 RNE)."""
    P_, two, N_ = mv3.shape
    assert two == 2 and sv3.shape[:2] == (P_, 2)
    acc = np.zeros((sv3.shape[2], N_), F32)
    for p in range(P_):
        q0 = mv3[p, 0][None, :] * sv3[p, 0][:, None]
        q1 = mv3[p, 1][None, :] * sv3[p, 1][:, None]
        assert (q0.astype(np.float64) == mv3[p, 0][None, :].astype(np.float64) * sv3[p, 0][:, None]).all()
        assert (q1.astype(np.float64) == mv3[p, 1][None, :].astype(np.float64) * sv3[p, 1][:, None]).all()
        acc = acc + (q0 + q1)
    return acc


def doublerow(g, mov, st, out, fields):
    assert fields["perf_mode"] == "DoubleRow"
    g.inst("Matmult", [mov, st], [out], **fields)
    mv3 = widen(g.read3(mov), mov["dtype"])
    sv3 = widen(g.read3(st), st["dtype"])
    res = dr_dot(mv3, sv3)
    start, accumulate, zr = mode_of(fields)
    idx = ap_index(out["ap"], out["offset"])
    idx = idx.reshape(idx.shape[0], -1)
    g.ps[out["memref"]].write(idx, res, start, accumulate, zr, out["dtype"])
    return res


def dr3(name, dt, raw3, s=None, c0=0, row=None):
    """A [P, 2, X] operand AP [[row, P], [s, 2], [1, X]] on SB tile `name` (created and loaded here)."""
    P_, _, X = raw3.shape
    s = X if s is None else s
    row = row or (s + c0 + X)
    return ap(name, dt, [[row, P_], [s, 2], [1, X]], c0), row


def dr_simple(dt, mov3, st3, fl=None, s_m=None, s_s=None, c_m=0, c_s=0, st_row=None, bank=0):
    """One DoubleRow Matmult of mov3 [P, 2, N] and st3 [P, 2, M] into PSUM [M, N]. Returns (prog, y, res)."""
    g = Prog()
    P_, _, N_ = mov3.shape
    M_ = st3.shape[2]
    for nm, arr, s_, c_, rw in [("mov", mov3, s_m, c_m, None), ("st", st3, s_s, c_s, st_row)]:
        op, row = dr3(nm, dt, arr, s_, c_, rw)
        g.sb_tile(nm, dt, P_, row)
        full = np.zeros((P_, row), STORE[dt])
        sel = ap_index(op["ap"][1:], c_)  # [2, X] columns within a row
        full[:, sel.reshape(-1)] = arr.reshape(P_, -1)
        g.put(nm, full)
        if nm == "mov":
            mov_op = op
        else:
            st_op = op
    g.psum("ps")
    res = doublerow(g, mov_op, st_op, psap(g, "ps", M_, N_, 0, bank * BANK), fl or flags(WHOLE, perf_mode="DoubleRow"))
    y = g.copy_out("ps", "y", 0, bank * BANK, M_, N_)
    return g, y, res


DR = ("M2", "M4", "M8")

# doublerow_float8e4_pair_sums_first: P = 2 (K = 4), M = 2, N = 2, float8e4 (legacy E4M3: max 240, subnormals to 2^-9).
#   stationary m0 = (p0h0, p0h1, p1h0, p1h1) = (240, 2^-9, 240, 2^-9);  m1 = (128, 2^-5, 2^-5, 2^-5)
#   moving     n0 = (240, 2^-9, -240, 2^-9);                          n1 = (128, 2^-5, 2^-5, 2^-5)
#   out[0, 0]: pair p0 = 57600 + 2^-18 -> 57600 (ulp of 57600 is 2^-8); pair p1 = -57600 + 2^-18 -> -57600;
#              0 + 57600 - 57600 = +0.
#              (k = 0..3 one by one: 57600, 57600, 0, 2^-18 -> 2^-18; h-major p0h0, p1h0, p0h1, p1h1: 57600, 0,
#               2^-18, 2^-17 -> 2^-17: the three orders give three answers)
#   out[1, 1]: pair p0 = 2^14 + 2^-10: half an ulp of 2^14 (ulp 2^-9), a tie -> even 2^14; pair p1 = 2^-10 + 2^-10
#              = 2^-9 exact; 2^14 + 2^-9 = 16384.001953125 (exact).   (one by one, or h-major: 2^14)
#   out[0, 1]: p0 = 240*128 + 2^-9*2^-5 = 30720 + 2^-14 -> 30720; p1 = 240*2^-5 + 2^-14 = 7.5 + 2^-14 (exact);
#              30720 + 7.5 + 2^-14 -> 30727.5
#   out[1, 0]: p0 = 128*240 + 2^-5*2^-9 -> 30720; p1 = 2^-5*(-240) + 2^-14 = -7.5 + 2^-14; -> 30712.5
e9, e5 = 2.0 ** -9, 2.0 ** -5
st3 = np.zeros((2, 2, 2))
st3[:, :, 0] = [[240, e9], [240, e9]]
st3[:, :, 1] = [[128, e5], [e5, e5]]
mv3 = np.zeros((2, 2, 2))
mv3[:, :, 0] = [[240, e9], [-240, e9]]
mv3[:, :, 1] = [[128, e5], [e5, e5]]
g, y, res = dr_simple("float8e4", encode(mv3, "float8e4"), encode(st3, "float8e4"))
assert (widen(encode(mv3, "float8e4"), "float8e4") == mv3).all() and (widen(encode(st3, "float8e4"), "float8e4") == st3).all()
assert bits(y[0, 0]) == 0 and y[1, 1] == F32(2.0 ** 14 + 2.0 ** -9) and y[0, 1] == 30727.5 and y[1, 0] == 30712.5
case("doublerow_float8e4_pair_sums_first", g,
     "perf_mode DoubleRow, float8e4, P = 2 (K = 4), M = N = 2: each partition's two products are added first "
     "(57600 + 2^-18 -> 57600; 2^14 + 2^-10 ties to 2^14), then the pair sums over p: out = [[+0, 30727.5], "
     "[30712.5, 2^14 + 2^-9]] (one-by-one k order: 2^-18 and 2^14; h-major: 2^-17); hand-worked in make_cases.py",
     ("M2", "M3", "M4", "M8"))

# doublerow_float8e5_small_exact: P = 4, M = 3, N = 8 in {0, +-0.5, ..., +-4}: exact sums. E.g. element [m, n]
# = sum_p (mov[p,0,n] st[p,0,m] + mov[p,1,n] st[p,1,m]); the float64 sum equals the result (asserted).
mv3 = RNG2.choice(FP8_SMALL, (4, 2, 8))
st3 = RNG2.choice(FP8_SMALL, (4, 2, 3))
g, y, res = dr_simple("float8e5", encode(mv3, "float8e5"), encode(st3, "float8e5"))
assert (np.einsum("phm,phn->mn", st3.astype(np.float64), mv3.astype(np.float64)) == y).all()
m_, n_ = 1, 5
terms = " + ".join(f"({mv3[p, 0, n_]:g}*{st3[p, 0, m_]:g} + {mv3[p, 1, n_]:g}*{st3[p, 1, m_]:g})" for p in range(4))
case("doublerow_float8e5_small_exact_P4_M3_N8", g,
     f"perf_mode DoubleRow, float8e5 values in {{0, +-0.5, ..., +-4}}, P = 4, M = 3, N = 8 (exact sums): e.g. "
     f"out[1, 5] = {terms} = {y[m_, n_]:g}; the element mov[p, h, n] / st[p, h, m] layout shows", DR)

# doublerow_aws_float8e5_ones: AWS test_double_row_gen3: a = ones (128, 2, 1) stationary in a (128, 2, 16) SB tile
# (AP [[32, 128], [16, 2], [1, 1]]), b = ones (128, 2, 512) moving -> c (1, 512) = 256 everywhere.
ones_s = encode(np.ones((128, 2, 1)), "float8e5")
ones_m = encode(np.ones((128, 2, 512)), "float8e5")
g, y, res = dr_simple("float8e5", ones_m, ones_s, s_s=16, st_row=32)
assert (y == 256).all()
case("doublerow_aws_float8e5_ones_P128_M1_N512", g,
     "AWS test_double_row_gen3 (perf_mode double_row_gen3): stationary ones (128, 2, 1) in a (128, 2, 16) tile "
     "(AP [[32, 128], [16, 2], [1, 1]]), moving ones (128, 2, 512): K = 256, out (1, 512) = 256.0 everywhere", DR)

# random full-size shapes
for dt, (P_, M_, N_), sc in [("float8e4", (128, 128, 512), 16.0), ("float8e5", (64, 96, 200), 64.0)]:
    mv3 = rand_vals(dt, (P_, 2, N_), sc)
    st3 = rand_vals(dt, (P_, 2, M_), sc)
    g, y, res = dr_simple(dt, mv3, st3)
    ref = np.einsum("phm,phn->mn", widen(st3, dt).astype(np.float64), widen(mv3, dt).astype(np.float64)).astype(F32)
    flat = dot(widen(mv3, dt).reshape(2 * P_, N_), widen(st3, dt).reshape(2 * P_, M_))  # one-by-one k order
    case(f"doublerow_{dt}_random_P{P_}_M{M_}_N{N_}", g,
         f"perf_mode DoubleRow, {dt} normal data (sd {sc:g}), P = {P_} (K = {2 * P_}), M = {M_}, N = {N_}: pair sums "
         f"then the ascending p fold ({int((y != ref).sum())} of {y.size} elements differ from the float64 sum "
         f"rounded once, {int((bits(y) != bits(flat)).sum())} from the one-by-one k order)", ("M2", "M3", "M4", "M8"))

# a DoubleRow group: START then ACC|STOP into bank 3, the size-2 level not adjacent to X (moving rows of 200
# elements: h step 96 from column 8; stationary h step 40), P = 96, M = 32, N = 80
g = Prog()
P_, M_, N_ = 96, 32, 80
g.psum("ps")
parts = []
for t in range(2):
    mv3 = rand_vals("float8e4", (P_, 2, N_), 8.0)
    st3 = rand_vals("float8e4", (P_, 2, M_), 8.0)
    for nm, arr, s_, c_, rw in [(f"m{t}", mv3, 96, 8, 200), (f"s{t}", st3, 40, 0, 80)]:
        op, row = dr3(nm, "float8e4", arr, s_, c_, rw)
        g.sb_tile(nm, "float8e4", P_, row)
        full = RNG2.integers(0, 256, (P_, row)).astype(np.uint8)  # other bytes around the operand
        full[:, ap_index(op["ap"][1:], c_).reshape(-1)] = arr.reshape(P_, -1)
        g.put(nm, full)
        if nm.startswith("m"):
            mop = op
        else:
            sop = op
    parts.append(doublerow(g, mop, sop, psap(g, "ps", M_, N_, 0, 3 * BANK), flags(START if t == 0 else ACC | STOP, perf_mode="DoubleRow")))
y = g.copy_out("ps", "y", 0, 3 * BANK, M_, N_)
assert (bits(y) == bits(parts[0] + parts[1])).all()
case("doublerow_float8e4_group_start_acc_strided", g,
     "perf_mode DoubleRow float8e4, P = 96, M = 32, N = 80, two instructions (START, ACC|STOP) into bank 3: "
     "P0 + P1; the moving's size-2 level has step 96 from column 8 of 200-element rows, the stationary's step 40 "
     "in 80-element rows (random bytes around them)", ("M2", "M3", "M4", "M8"))

DRF = flags(WHOLE, perf_mode="DoubleRow")
err_case("doublerow_error_bfloat16_operands",
         err_new("gen3", "bfloat16", [[64, 16], [32, 2], [1, 32]], (16, 64), "bfloat16", [[16, 16], [8, 2], [1, 8]], (16, 16),
                 "float32", [[pitch_of("float32"), 8], [1, 32]], DRF),
         "perf_mode DoubleRow with bf16 operands (DoubleRow takes fp8 only)", "dtype", "M8")
err_case("doublerow_error_float8e4_with_bfloat16",
         err_new("gen3", "float8e4", [[64, 16], [32, 2], [1, 32]], (16, 64), "bfloat16", [[16, 16], [8, 2], [1, 8]], (16, 16),
                 "float32", [[pitch_of("float32"), 8], [1, 32]], DRF),
         "perf_mode DoubleRow with moving float8e4, stationary bf16", "dtype", "M8")
err_case("doublerow_error_second_level_not_2",
         err_new("gen3", "float8e5", [[96, 16], [32, 3], [1, 32]], (16, 96), "float8e5", [[16, 16], [8, 2], [1, 8]], (16, 16),
                 "float32", [[pitch_of("float32"), 8], [1, 32]], DRF),
         "perf_mode DoubleRow, float8e5: the moving AP [[96, 16], [32, 3], [1, 32]] has a second level of 3, not 2",
         "ap-shape", "M8")
err_case("doublerow_error_two_level_ap",
         err_new("gen3", "float8e5", [[64, 16], [1, 64]], (16, 64), "float8e5", [[16, 16], [8, 2], [1, 8]], (16, 16),
                 "float32", [[pitch_of("float32"), 8], [1, 64]], DRF),
         "perf_mode DoubleRow, float8e5: the moving AP has two levels ([[64, 16], [1, 64]]), no size-2 level",
         "ap-shape", "M8")


# ================================================================ M9: gen4 bf16 PSUM output
def g4_simple(mov_raw_list, st_raw_list, flag_list, dt="bfloat16", out_dt="bfloat16", arch="gen4", bank=0):
    """A group of Matmults (one per k-tile) into one PSUM tile of dtype out_dt at `bank`; returns (prog, y, dots)."""
    g = Prog(arch)
    g.psum("ps", dt=out_dt)
    K_, N_ = mov_raw_list[0].shape
    M_ = st_raw_list[0].shape[1]
    dots = []
    for t, (mr, sr, fl) in enumerate(zip(mov_raw_list, st_raw_list, flag_list)):
        g.sb_tile(f"m{t}", dt, K_, N_)
        g.sb_tile(f"s{t}", dt, K_, M_)
        g.put(f"m{t}", mr)
        g.put(f"s{t}", sr)
        dots.append(dot(widen(mr, dt), widen(sr, dt)))
        col = bank * BANK_BYTES // SIZE[out_dt]
        g.matmult(sbap(f"m{t}", dt, N_, K_, N_), sbap(f"s{t}", dt, M_, K_, M_), psap_dt(g, "ps", M_, N_, 0, col, out_dt), cc224(fl))
    y = copy_raw(g, "ps", "y", 0, bank * BANK_BYTES // SIZE[out_dt], M_, N_, out_dt)
    return g, y, dots


def to_bf(x):
    return np.asarray(x, F32).astype(md.bfloat16).view(np.uint16)


def bf_to_f(u):
    return np.asarray(u, np.uint16).view(md.bfloat16).astype(F32)


G4 = ("M3", "M4", "M9")

# gen4_bfloat16_output_start: one START|STOP, bf16 operands K = 128, M = 64, N = 256 -> bf16(fp32 dot), RNE
mr, sr = rand_vals("bfloat16", (128, 256)), rand_vals("bfloat16", (128, 64))
g, y, dots = g4_simple([mr], [sr], [WHOLE], bank=2)
assert (y == to_bf(dots[0])).all()
trunc = (dots[0].view(np.uint32) >> 16).astype(np.uint16)
case("gen4_bfloat16_output_start_K128_M64_N256", g,
     "arch gen4, bf16 operands K = 128, M = 64, N = 256, one START|STOP into a bf16 PSUM output at bank 2: the fp32 "
     f"dot product (M3) rounded to bf16 RNE ({int((y != trunc).sum())} of {y.size} elements differ from truncation)", G4)

# gen4_bfloat16_output_group_3_hand: K = 2 per tile, M = 1 (stationary [1, 1]), N = 4; tile t's product for
# column n is mov_t[0, n] + mov_t[1, n] (exact). Flags START, ACC, ACC|STOP. bf16 keeps 8 significant bits.
#   col 0: P = 1, 2^-8, 2^-8. PSUM 1.0 (0x3F80); 1 + 2^-8 is half an ulp (2^-7) of 1: a tie -> even 1.0; again 1.0.
#          -> 0x3F80 (the fp32 sum 1 + 2^-7 rounded once would be 0x3F81)
#   col 1: P = 1 + 2^-7 (0x3F81), 2^-8, 0. 1 + 2^-7 + 2^-8 = 1 + 3*2^-8 lies halfway between 0x3F81 and 0x3F82:
#          tie -> even 0x3F82 (1.015625); + 0 -> 0x3F82
#   col 2: P = 256 + 1, -256, 0.5. bf16(257): 256 and 258 are the neighbours (ulp 2), a tie -> even 256 (0x4380);
#          256 - 256 = +0 (0x0000); 0 + 0.5 = 0.5 -> 0x3F00 (the fp32 sum 1.5 rounded once: 0x3FC0)
#   col 3: P = 1 + 2^-9, 1 + 2^-9, 2^-7. bf16(1 + 2^-9) = 1.0 (below half an ulp); 1 + (1 + 2^-9) = 2 + 2^-9 -> 2.0
#          (ulp 2^-6); 2 + 2^-7 is half an ulp: tie -> even 2.0 -> 0x4000 (the fp32 sum 2 + 2^-8 + 2^-7 -> 0x4001)
m_t = [np.array([[1, 1, 256, 1], [0, 2.0 ** -7, 1, 2.0 ** -9]]),
       np.array([[2.0 ** -8, 2.0 ** -8, -256, 1], [0, 0, 0, 2.0 ** -9]]),
       np.array([[2.0 ** -8, 0, 0.5, 2.0 ** -7], [0, 0, 0, 0]])]
mrs = [encode(x, "bfloat16") for x in m_t]
assert all((bf_to_f(r) == x).all() for r, x in zip(mrs, m_t))
one = encode(np.ones((2, 1)), "bfloat16")
g, y, dots = g4_simple(mrs, [one] * 3, [START, ACC, ACC | STOP], bank=5)
assert (y[0] == [0x3F80, 0x3F82, 0x3F00, 0x4000]).all(), [hex(v) for v in y[0]]
once = to_bf(dots[0] + dots[1] + dots[2])
assert (once[0] == [0x3F81, 0x3F82, 0x3FC0, 0x4001]).all()
case("gen4_bfloat16_output_group_3_hand", g,
     "arch gen4, a bf16 PSUM output (bank 5) accumulated over 3 k-tiles (START, ACC, ACC|STOP), K = 2 each, M = 1, "
     "N = 4: each step rounds to bf16 (RNE), so y = [0x3F80, 0x3F82, 0x3F00, 0x4000] where one rounding of the fp32 "
     "sum gives [0x3F81, 0x3F82, 0x3FC0, 0x4001]; hand-worked in make_cases.py", G4)

# a random group: START, ACC, ACC|STOP
mrs = [rand_vals("bfloat16", (64, 128)) for _ in range(3)]
srs = [rand_vals("bfloat16", (64, 32)) for _ in range(3)]
g, y, dots = g4_simple(mrs, srs, [START, ACC, ACC | STOP])
want = to_bf(bf_to_f(to_bf(bf_to_f(to_bf(dots[0])) + dots[1])) + dots[2])
assert (y == want).all()
once = to_bf((dots[0] + dots[1]) + dots[2])
assert (y != once).sum() > 0
case("gen4_bfloat16_output_group_3_random", g,
     "arch gen4, bf16 PSUM output, 3 k-tiles (K = 64, M = 32, N = 128, bf16 normal data) with START, ACC, ACC|STOP: "
     f"bf16(fp32(bf16(fp32(bf16(P0)) + P1)) + P2) ({int((y != once).sum())} of {y.size} elements differ from the fp32 "
     "group sum rounded once)", G4)

# ACC as the first write copies (rounded), idle overwrites (rounded), an ACC|STOP then adds
mrs = [rand_vals("bfloat16", (32, 64)) for _ in range(3)]
srs = [rand_vals("bfloat16", (32, 16)) for _ in range(3)]
g, y, dots = g4_simple(mrs, srs, [ACC, 0, ACC | STOP], bank=7)
assert (y == to_bf(bf_to_f(to_bf(dots[1])) + dots[2])).all()
case("gen4_bfloat16_output_acc_first_idle_acc", g,
     "arch gen4, bf16 PSUM output (bank 7): ACCUMULATE into never-written PSUM copies bf16(P0); an idle write "
     "(flag 0) overwrites with bf16(P1); ACC|STOP gives bf16(fp32(bf16(P1)) + P2)", G4)

# gen4 fp32 output is the ordinary one
mr, sr = rand_vals("bfloat16", (48, 96)), rand_vals("bfloat16", (48, 40))
g, y, dots = g4_simple([mr], [sr], [WHOLE], out_dt="float32")
assert (bits(y) == bits(dots[0])).all()
case("gen4_float32_output_unchanged", g,
     "arch gen4 with an fp32 PSUM output: the ordinary Matmult (bf16 K = 48, M = 40, N = 96)", ("M2", "M3", "M4", "M9"))

for arch in ("gen3", "gen2"):
    err_case(f"gen4_error_bfloat16_output_on_{arch}",
             err_new(arch, "bfloat16", [[16, 8], [1, 16]], (8, 16), "bfloat16", [[4, 8], [1, 4]], (8, 4),
                     "bfloat16", [[pitch_of("bfloat16"), 4], [1, 16]], cc224(WHOLE)),
             f"arch {arch}: a bf16 PSUM output (only gen4 allows one)", "dtype", "M9")
err_case("gen4_error_float16_output_on_gen4",
         err_new("gen4", "bfloat16", [[16, 8], [1, 16]], (8, 16), "bfloat16", [[4, 8], [1, 4]], (8, 4),
                 "float16", [[pitch_of("float16"), 4], [1, 16]], cc224(WHOLE)),
         "arch gen4: an fp16 PSUM output (gen4 adds bf16 only)", "dtype", "M9")


# ================================================================ AWS whole kernels (hoist_load, block_free)
# Their own RNG, drawn after every earlier case, so the cases above keep their bytes.
RNG3 = np.random.default_rng(20270315)
SDK = "aws-neuron/aws-neuron-sdk@81ce03ae"
KSRC = "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py"
TK, TM, TN = 128, 128, 512  # pmax, gemm_stationary_fmax, gemm_moving_fmax


def evict(g, psname, bank, sb_name, sb_dt, out, out_dt, N, r0, c0, vals_out):
    """A finished [TM, TN] PSUM tile (bank `bank`, partitions 0..127) -> TensorCopy into SB tile
    `sb_name` (dtype sb_dt: fp32 copies, bf16 casts RNE) -> Save into rows r0.., columns c0.. of the
    external output `out` ([M, N] of dtype out_dt: a bf16 destination of an fp32 tile casts RNE,
    fidelity N1 / N3). Writes what the output then holds into vals_out (stored dtype)."""
    p = g.ps[psname]
    c = bank * BANK
    assert p.touched[:TM, c:c + TN].all(), "reads only what the case wrote or cleared"
    vals = p.val[:TM, c:c + TN].copy()
    assert not np.isnan(vals).any()
    g.sb_tile(sb_name, sb_dt, TM, TN)
    g.inst("TensorCopy", [ap(psname, "float32", [[p.pitch, TM], [1, TN]], c)], [birprog.tile(sb_name, sb_dt, TM, TN)])
    sbv = vals if sb_dt == "float32" else vals.astype(md.bfloat16).view(np.uint16)
    g.sbm[sb_name] = (sb_dt, sbv)
    g.inst("Save", [birprog.tile(sb_name, sb_dt, TM, TN)], [ap(out, out_dt, [[N, TM], [1, TN]], r0 * N + c0)])
    f = widen(sbv, sb_dt) if sb_dt != "float32" else sbv
    vals_out[r0:r0 + TM, c0:c0 + TN] = f.astype(md.bfloat16).view(np.uint16) if out_dt == "bfloat16" else f


def ref_tile(lhsT, rhs, m_tile, n_tile, K):
    """The group of one [TM, TN] result tile, k-tiles ascending: P0, then PSUM + P_k (one fp32 add
    per Matmult), each P_k the M3 dot of its 128-row k-tile (written out apart from Psum)."""
    acc = None
    for kt in range(K // TK):
        mv = widen(rhs[kt * TK:(kt + 1) * TK, n_tile * TN:(n_tile + 1) * TN], "bfloat16")
        sv = widen(lhsT[kt * TK:(kt + 1) * TK, m_tile * TM:(m_tile + 1) * TM], "bfloat16")
        pk = dot(mv, sv)
        acc = pk if acc is None else (acc + pk).astype(F32)
    return acc


# nki_matmul_hoist_load_ (NKI_EXAMPLE_19): for m: load the K/128 lhsT tiles of column block m once
# (hoisted out of the n loop); for n: load the K/128 rhs tiles of (k, n), K/128 Matmults into one
# PSUM tile (START, ACC, ..., ACC|STOP), TensorCopy to an **fp32** SB tile (res_sb is nl.float32 in
# the kernel), Save into the bf16 result (result dtype = lhsT.dtype: the Save casts fp32 -> bf16 RNE).
# The driver's lhs (4096, 1024) / rhs (1024, 2048) bf16 torch.rand shrunk to K = 384, M = 256, N = 1024.
K, M, N = 384, 256, 1024
KT, MT, NT = K // TK, M // TM, N // TN
lhsT = encode(RNG3.random((K, M)), "bfloat16")
rhs = encode(RNG3.random((K, N)), "bfloat16")
g = Prog()
g.dram_in("lhsT", "bfloat16", lhsT)
g.dram_in("rhs", "bfloat16", rhs)
g.psum("ps")
res = np.zeros((M, N), np.uint16)
for m in range(MT):
    lt = [f"lhsT_m{m}_k{kt}" for kt in range(KT)]
    for kt in range(KT):  # hoisted: once per m, reused by every n
        g.sb_tile(lt[kt], "bfloat16", TK, TM)
        g.load_from("lhsT", lt[kt], kt * TK, m * TM, TK, TM)
    for n in range(NT):
        rt = [f"rhs_m{m}_n{n}_k{kt}" for kt in range(KT)]
        for kt in range(KT):
            g.sb_tile(rt[kt], "bfloat16", TK, TN)
            g.load_from("rhs", rt[kt], kt * TK, n * TN, TK, TN)
        bank = m * NT + n
        for kt in range(KT):
            fl = START if kt == 0 else (ACC | STOP if kt == KT - 1 else ACC)
            g.matmult(sbap(rt[kt], "bfloat16", TN, TK, TN), sbap(lt[kt], "bfloat16", TM, TK, TM),
                      psap(g, "ps", TM, TN, 0, bank * BANK), cc224(fl))
        evict(g, "ps", bank, f"res_sb_m{m}_n{n}", "float32", "result", "bfloat16", N, m * TM, n * TN, res)
        want = ref_tile(lhsT, rhs, m, n, K)
        assert (res[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN] == to_bf(want)).all()
g.dram_out("result", "bfloat16", (M, N), res)
ref = widen(lhsT, "bfloat16").astype(np.float64).T @ widen(rhs, "bfloat16").astype(np.float64)
assert np.allclose(bf_to_f(res), ref, atol=1e-4, rtol=1e-2)  # AWS's check against torch.matmul
# the last fp32 SB tile is compared too: it pins the fp32 group sums (M3 / M4 bits) the bf16 result hides
last = f"res_sb_m{MT - 1}_n{NT - 1}"
last_f32 = g.sbm[last][1]
assert (bits(last_f32) == bits(ref_tile(lhsT, rhs, MT - 1, NT - 1, K))).all()
g.expect(last, last_f32)
n_once = int((last_f32 != ref[(MT - 1) * TM:, (NT - 1) * TN:].astype(F32)).sum())
n_bf = int((res != to_bf(ref)).sum())
assert sum(i["opcode"] == "Load" for i in g.insts) == MT * KT + MT * NT * KT
case(f"aws_matmul_hoist_load_bfloat16_K{K}_M{M}_N{N}", g,
     f"AWS nki_matmul_hoist_load_ ({SDK} {KSRC}): K={K} M={M} N={N} bf16; per m the {KT} lhsT k-tiles loaded once "
     f"and reused for all {NT} n; per (m, n) {KT} rhs k-tiles, START / ACC / ACC|STOP into PSUM bank m*{NT}+n, "
     "TensorCopy to an fp32 SB tile, Save casting fp32 -> bf16 (RNE) into the [M, N] result; the last fp32 SB tile "
     f"({last}) is compared too ({n_once} of {last_f32.size} of its elements differ from the float64 sum rounded once; "
     f"{n_bf} of {res.size} in the bf16 result)", ("M2", "M3", "M4"))

# nki_matmul_block_free_dimension_ (NKI_EXAMPLE_20): TILES_IN_BLOCK_M = TILES_IN_BLOCK_N = 2
# (BLOCK_M = 256, BLOCK_N = 1024). For each m block: load its 2 x K/128 lhsT tiles once; for each n
# block: load its 2 x K/128 rhs tiles, then for bm, bn: K/128 Matmults into one PSUM tile, TensorCopy
# to a **bf16** SB tile (result.dtype: the copy casts fp32 -> bf16 RNE), Save into the bf16 result.
# Flags in the KLR schema (start_tensor_calc true on the first k-tile, false after; stop on the last).
# PSUM banks: n block b uses banks 4*(b % 2) + 2*bm + bn (the two n blocks in banks 0..3 and 4..7).
# K = 256, M = 256 (one m block), N = 2048 (two n blocks: the m block's lhsT tiles serve both).
K, M, N = 256, 256, 2048
KT = K // TK
BM, BN = 2, 2
lhsT = encode(RNG3.random((K, M)), "bfloat16")
rhs = encode(RNG3.random((K, N)), "bfloat16")
g = Prog()
g.dram_in("lhsT", "bfloat16", lhsT)
g.dram_in("rhs", "bfloat16", rhs)
g.psum("ps")
res = np.zeros((M, N), np.uint16)
for m in range(M // (TM * BM)):
    lt = [[f"lhsT_m{m}_bm{bm}_k{kt}" for kt in range(KT)] for bm in range(BM)]
    for bm in range(BM):
        for kt in range(KT):
            g.sb_tile(lt[bm][kt], "bfloat16", TK, TM)
            g.load_from("lhsT", lt[bm][kt], kt * TK, (m * BM + bm) * TM, TK, TM)
    for n in range(N // (TN * BN)):
        rt = [[f"rhs_m{m}_n{n}_bn{bn}_k{kt}" for kt in range(KT)] for bn in range(BN)]
        for bn in range(BN):
            for kt in range(KT):
                g.sb_tile(rt[bn][kt], "bfloat16", TK, TN)
                g.load_from("rhs", rt[bn][kt], kt * TK, (n * BN + bn) * TN, TK, TN)
        for bm in range(BM):
            for bn in range(BN):
                bank = 4 * (n % 2) + 2 * bm + bn
                for kt in range(KT):
                    g.matmult(sbap(rt[bn][kt], "bfloat16", TN, TK, TN), sbap(lt[bm][kt], "bfloat16", TM, TK, TM),
                              psap(g, "ps", TM, TN, 0, bank * BANK), klr(kt == 0, kt == KT - 1))
                r0, c0 = (m * BM + bm) * TM, (n * BN + bn) * TN
                evict(g, "ps", bank, f"result_tmp_m{m}_n{n}_bm{bm}_bn{bn}", "bfloat16", "result", "bfloat16", N,
                      r0, c0, res)
                want = ref_tile(lhsT, rhs, m * BM + bm, n * BN + bn, K)
                assert (res[r0:r0 + TM, c0:c0 + TN] == to_bf(want)).all()
g.dram_out("result", "bfloat16", (M, N), res)
ref = widen(lhsT, "bfloat16").astype(np.float64).T @ widen(rhs, "bfloat16").astype(np.float64)
assert np.allclose(bf_to_f(res), ref, atol=1e-4, rtol=1e-2)
n_bf = int((res != to_bf(ref)).sum())
assert sum(i["opcode"] == "Load" for i in g.insts) == (M // TM) * KT + (M // (TM * BM)) * (N // TN) * KT
case(f"aws_matmul_block_free_bfloat16_K{K}_M{M}_N{N}", g,
     f"AWS nki_matmul_block_free_dimension_ ({SDK} {KSRC}): K={K} M={M} N={N} bf16, TILES_IN_BLOCK_M = "
     f"TILES_IN_BLOCK_N = 2; the m block's {BM}x{KT} lhsT tiles loaded once for both n blocks, each n block's "
     f"{BN}x{KT} rhs tiles once for its 2x2 result tiles; KLR flags (start_tensor_calc on k-tile 0, stop on the "
     "last), n block b in PSUM banks 4*(b%2)+2*bm+bn; TensorCopy to a bf16 SB tile (RNE), Save into the [M, N] result "
     f"({n_bf} of {res.size} elements differ from the float64 product rounded once to bf16)",
     ("M1", "M2", "M3", "M4"))


# ================================================================ gen4 wide outputs (M5: N up to PSUM's 8 banks)
# Their own RNG, drawn after every earlier case, so the cases above keep their bytes.
# On arch gen4 a Matmult's N may fill PSUM's 8 banks (4096 fp32, 8192 bf16; AWS nc_matmul "Tile size")
# and the output may cross 2 KiB bank boundaries; a START clears 2^psum_zero_region banks from the first
# element's bank and at least every bank the output covers (`Psum.write` with `wide`). gen2 / gen3 keep
# the one-bank rule (an ap-shape error at the Matmult's outs[0].ap).
RNG4 = np.random.default_rng(20270420)
WIDE = ("M2", "M3", "M4", "M5")


def randw(shape, scale=4.0):
    """fp32 normal data (as `randf`), from RNG4."""
    return (RNG4.standard_normal(shape) * scale).astype(F32)


def wide_fp32(arch, mov, st, c0, fl):
    """Load moving [K, N] and stationary [K, M], one Matmult into fp32 PSUM at column c0 of partition 0,
    TensorCopy the [M, N] output to an SB tile, Save it. On gen4 returns (prog, y); on gen2 / gen3 the
    same instructions without an oracle (a validation error case: no output is compared)."""
    K, N = mov.shape
    M = st.shape[1]
    g = Prog(arch)
    g.sb_tile("mov", "float32", K, N)
    g.sb_tile("st", "float32", K, M)
    g.put("mov", mov)
    g.put("st", st)
    g.psum("ps")
    oracle = arch == "gen4"
    g.matmult(sbap("mov", "float32", N, K, N), sbap("st", "float32", M, K, M), psap(g, "ps", M, N, 0, c0), fl,
              oracle=oracle)
    if oracle:
        return g, g.copy_out("ps", "y", 0, c0, M, N)
    g.sb_tile("y_sb", "float32", M, N)
    g.inst("TensorCopy", [ap("ps", "float32", [[g.ps["ps"].pitch, M], [1, N]], c0)], [birprog.tile("y_sb", "float32", M, N)])
    g.save("y_sb", "y", "float32", M, N, np.zeros((M, N), F32))  # never compared (error case)
    return g, None


def n_once(y, mov, st):
    return int((y != exact_dot(mov, st).astype(F32)).sum())


# gen4, fp32, K = 128, M = 128, N = 1024 at bank 2: the output fills banks 2 and 3
mov1, st1 = randw((128, 1024)), randw((128, 128))
g, y = wide_fp32("gen4", mov1, st1, 2 * BANK, cc224(WHOLE))
assert (bits(y) == bits(dot(mov1, st1))).all()
case("gen4_wide_float32_start_K128_M128_N1024_banks_2_3", g,
     "arch gen4, fp32 normal data (sd 4), K = 128, M = 128, N = 1024 (4096 bytes per partition: two PSUM banks), "
     "one START|STOP (flag 3, psum_zero_region 0) into PSUM at bank 2 column 0, so the output fills banks 2 and 3: "
     f"the M3 dot on every element ({n_once(y, mov1, st1)} of {y.size} differ from the float64 sum rounded once)", WIDE)

# gen4, fp32, K = 64, M = 32, N = 4096: all 8 banks
mov, st = randw((64, 4096)), randw((64, 32))
g, y = wide_fp32("gen4", mov, st, 0, cc224(WHOLE))
assert (bits(y) == bits(dot(mov, st))).all()
case("gen4_wide_float32_start_K64_M32_N4096_all_banks", g,
     "arch gen4, fp32 normal data (sd 4), K = 64, M = 32, N = 4096 (the largest fp32 N: all 8 PSUM banks of a "
     "partition), one START|STOP from bank 0 column 0: the M3 dot on every element "
     f"({n_once(y, mov, st)} of {y.size} differ from the float64 sum rounded once)", WIDE)

# gen4, bf16 PSUM output, N = 2048 (4096 bytes: banks 3 and 4), START then ACC|STOP of a second product:
# bf16(fp32(bf16(P0)) + P1) (M9)
K, M, N = 128, 64, 2048
g = Prog("gen4")
g.psum("ps", dt="bfloat16")
c0 = 3 * BANK_BYTES // SIZE["bfloat16"]
dots = []
for t, fl in enumerate([START, ACC | STOP]):
    mr = encode(RNG4.standard_normal((K, N)) * 8, "bfloat16")
    sr = encode(RNG4.standard_normal((K, M)) * 8, "bfloat16")
    g.sb_tile(f"m{t}", "bfloat16", K, N)
    g.sb_tile(f"s{t}", "bfloat16", K, M)
    g.put(f"m{t}", mr)
    g.put(f"s{t}", sr)
    dots.append(dot(widen(mr, "bfloat16"), widen(sr, "bfloat16")))
    g.matmult(sbap(f"m{t}", "bfloat16", N, K, N), sbap(f"s{t}", "bfloat16", M, K, M),
              psap_dt(g, "ps", M, N, 0, c0, "bfloat16"), cc224(fl))
y = copy_raw(g, "ps", "y", 0, c0, M, N, "bfloat16")
assert (y == to_bf(bf_to_f(to_bf(dots[0])) + dots[1])).all()
once = to_bf(dots[0] + dots[1])
assert (y != once).sum() > 0
case(f"gen4_wide_bfloat16_output_start_acc_K{K}_M{M}_N{N}_banks_3_4", g,
     f"arch gen4, bf16 operands (normal, sd 8) K = {K}, M = {M}, a bf16 PSUM output N = {N} (4096 bytes per "
     "partition: banks 3 and 4): START (flag 1) then ACC|STOP (flag 6) of a second product into the same output: "
     f"bf16(fp32(bf16(P0)) + P1) (M9) on every element, across the bank boundary ({int((y != once).sum())} of "
     f"{y.size} differ from the fp32 sum P0 + P1 rounded once)", ("M3", "M4", "M5", "M9"))

# gen4, a START whose output covers banks 0..2 from mid-bank 0, psum_zero_region 0: it clears banks 0..2
# (every covered bank, more than the region's one bank) on the output's partitions only.
# Fill: banks 0..3 of partitions 0..47, one ACCUMULATE (flag 4: first write copies, shadow set) per bank,
# K = 16, M = 48, N = 512. Then START|STOP: K = 32, M = 32, N = 1024 at partitions 8..39, column 300
# (elements 300..1323: bank 0 from 300, all of bank 1, bank 2 up to 1323).
g = Prog("gen4")
g.psum("ps")
fill = np.zeros((48, 4 * BANK), F32)
for b in range(4):
    mv, sv = randw((16, BANK)), randw((16, 48))
    g.sb_tile(f"fm{b}", "float32", 16, BANK)
    g.sb_tile(f"fs{b}", "float32", 16, 48)
    g.put(f"fm{b}", mv)
    g.put(f"fs{b}", sv)
    g.matmult(sbap(f"fm{b}", "float32", BANK, 16, BANK), sbap(f"fs{b}", "float32", 48, 16, 48),
              psap(g, "ps", 48, BANK, 0, b * BANK), cc224(ACC))
    fill[:, b * BANK:(b + 1) * BANK] = dot(mv, sv)
assert (fill != 0).all()
mv, sv = randw((32, 1024)), randw((32, 32))
g.sb_tile("mv", "float32", 32, 1024)
g.sb_tile("sv", "float32", 32, 32)
g.put("mv", mv)
g.put("sv", sv)
g.matmult(sbap("mv", "float32", 1024, 32, 1024), sbap("sv", "float32", 32, 32, 32), psap(g, "ps", 32, 1024, 8, 300),
          cc224(WHOLE, zero_region=0))
y = g.copy_out("ps", "y", 0, 0, 48, 4 * BANK)
want = fill.copy()
want[8:40, :3 * BANK] = 0.0
want[8:40, 300:1324] = dot(mv, sv)
assert (bits(y) == bits(want)).all()
assert (bits(y[8:40, 300:1324]) != bits(fill[8:40, 300:1324] + dot(mv, sv))).any()
case("gen4_wide_start_clears_every_covered_bank", g,
     "arch gen4, PSUM banks 0..3 of partitions 0..47 first written by ACCUMULATE (flag 4) Matmults (one per bank); "
     "then a START|STOP with psum_zero_region 0 (one bank) whose output (K = 32, M = 32, N = 1024) lies at "
     "partitions 8..39, elements 300..1323 (mid-bank 0 to bank 2): the START clears every bank the output covers "
     "(0..2), not just the region's bank 0. Partitions 8..39: the product alone on the output (no add to the old "
     "values, in banks 1 and 2 too), +0.0 on elements 0..299 and 1324..1535, bank 3 unchanged; partitions 0..7 "
     "and 40..47 keep the old values in every bank", ("M4", "M5"))

# gen3: case 1's program (same instructions and operands) is a validation error: N = 1024 fp32 needs two banks
g, _ = wide_fp32("gen3", mov1, st1, 2 * BANK, cc224(WHOLE))
g1 = CASES["gen4_wide_float32_start_K128_M128_N1024_banks_2_3"][0]
assert g.insts == g1.insts and g.allocs == g1.allocs and g.inputs.keys() == g1.inputs.keys()
assert [i["opcode"] for i in g.insts].index("Matmult") == 2
case("gen4_wide_error_float32_N1024_on_gen3", g,
     "arch gen3, the program of gen4_wide_float32_start_K128_M128_N1024_banks_2_3 unchanged: N = 1024 fp32 (4096 "
     "bytes) exceeds one 2 KiB PSUM bank, which gen2 / gen3 still require", ("M5",),
     [("ap-shape", "instruction #2 'i2' (Matmult) › outs[0].ap", "")])


# ---------------------------------------------------------------- writing
def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, choices, errors) in CASES.items():
        spec = "M1-M9" if name.startswith(("transpose_", "doublerow_", "gen4_")) else "M1-M6"
        lines = [f"# {note}", f"# expected outputs from make_cases.py (NumPy / ml_dtypes, the {spec} spec), never from birsim"]
        lines += [f"choice: {c}" for c in sorted(set(choices))]
        if errors:
            lines += [f"error {k} @ {loc} | {msg}".rstrip() for k, loc, msg in errors]
            birprog.write_case(os.path.join(HERE, name), g.program(), lines)
            continue
        lines.append(f"profile: {g.profile}")
        birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    print(f"{len(CASES)} cases")


write_all()
