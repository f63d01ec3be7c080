#!/usr/bin/env python3
"""Writes the `programs/matmult` conformance suite: BIR JSON programs with Matmult (PE) into PSUM,
.npy inputs and the expected .npy outputs, computed here with NumPy / ml_dtypes (pinned in
oracle/requirements.txt) from the Matmult spec M1-M6 (README.md), independently of birsim.

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

The PSUM result is read back with TensorCopy (PSUM fp32 -> an SB tile, a cast when the SB tile is
bf16: RNE, fidelity N3) and Save. The fp32 PSUM content a case never wrote is never read back.

Families (README.md lists every case): exact_* (sums exact in fp32, any order), order_* (hand-worked
values where ascending fp32 order, per-product rounding or RNE matters), aws_* (shapes / dtypes of
AWS's nc_matmul test and matrix_multiplication kernels, random data, goldens from M3/M4), psum_*
(START / ACCUMULATE / idle / STOP / psum_zero_region, -0, NaN, Inf), schema_* (the KLR and the
neuronx-cc 2.24 field schemas, same bits), error_* (validation).

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

    def __init__(self, parts, nbytes, addr):
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
        assert len(banks) == 1, "the output's free range lies within one bank"
        if start:
            b0 = self.bank(cols.reshape(-1)[0], es)
            lo = b0 * BANK_BYTES - self.addr
            hi = lo + (1 << zero_region) * BANK_BYTES
            assert 0 <= lo and hi <= self.nbytes, "the cleared banks lie inside the location (a reading)"
            parts = np.unique(rows)
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
            view[rows, cols] = res
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
        self.ps[name] = Psum(parts, nbytes, addr)

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


# ---------------------------------------------------------------- writing
def write_all():
    birprog.clear_cases(HERE)
    for name, (g, note, choices, errors) in CASES.items():
        lines = [f"# {note}", "# expected outputs from make_cases.py (NumPy / ml_dtypes, the M1-M6 spec), never from birsim"]
        lines += [f"choice: {c}" for c in sorted(set(choices))]
        if errors:
            lines += [f"error {k} @ {loc} | {msg}".rstrip() for k, loc, msg in errors]
            birprog.write_case(os.path.join(HERE, name), g.program(), lines)
            continue
        lines.append(f"profile: {g.profile}")
        birprog.write_case(os.path.join(HERE, name), g.program(), lines, g.inputs, g.outputs)
    print(f"{len(CASES)} cases")


write_all()
