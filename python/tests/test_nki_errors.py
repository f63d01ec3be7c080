"""birsim.nki's promised errors: each invalid kernel raises NkiError at the offending kernel
line (file:line in the message, `filename`/`lineno` attributes), naming the call."""

from __future__ import annotations

import numpy as np
import pytest

import birsim.nki as bn
from nki_support import KERNELS, markers

from nki_kernels import bad  # noqa: E402

LINES = markers(KERNELS / "bad.py")
A = np.ones((128, 512), np.float32)
B = np.ones((128, 128), np.float32)

CASES = [
    ("too_many_partitions", (np.ones((256, 512), np.float32),), "partitions", "ndarray", "exceeds the maximum 128"),
    ("matmul_into_sbuf", (B, B), "matmul_sbuf", "nc_matmul", "must be in PSUM"),
    ("matmul_mixed_fp32", (B, B), "matmul_dtype", "nc_matmul", "float32 partner"),
    ("bitwise_on_floats", (A, A), "bitvec_dtype", "tensor_tensor", "needs integer tiles"),
    ("shape_mismatch", (A, A), "shape", "tensor_tensor", "same partition size and elements per partition"),
    ("both_inputs_in_psum", (A, B), "psum_psum", "tensor_tensor", "cannot both be in PSUM"),
    ("slice_out_of_bounds", (A, B), "bounds", "index", "out of bounds"),
    ("sbuf_overflow", (A, B), "sbuf_full", "ndarray", "SBUF is full"),
    ("psum_overflow", (A, B), "psum_full", "zeros", "PSUM is full"),
    ("reduce_partitions", (A, B), "reduce_axis", "sum", "partition dimension cannot be reduced"),
    ("dma_into_psum", (A, B), "dma_psum", "dma_copy", "dst must be in SBUF or HBM"),
    ("not_expressible", (A, B), "unsupported", "softmax", "not one ISA operation"),
    ("partial_mask", (A, B), "mask", "load", "true for only some elements"),
    ("matmul_moving_too_wide", (A, B), "matmul_n", "nc_matmul", "exceeds 512"),
    ("matmul_across_banks", (A, B), "matmul_bank", "nc_matmul", "spans PSUM banks 0..1"),
    ("across_blocks", (A, B), "blocks", "tensor_copy", "allocates each block separately"),
]


@pytest.mark.parametrize("kernel,args,marker,call,why", CASES, ids=[c[0] for c in CASES])
def test_error_at_kernel_line(kernel, args, marker, call, why):
    with pytest.raises(bn.NkiError) as info:
        getattr(bad, kernel)(*args)
    e = info.value
    line = LINES[marker]
    assert f"bad.py:{line}: {call}: " in str(e), str(e)
    assert why in str(e)
    assert e.filename.endswith("bad.py") and e.lineno == line and e.call == call


def test_nki_error_is_a_value_error():
    assert issubclass(bn.NkiError, ValueError)


def test_gen2_has_less_sbuf(monkeypatch):
    # 200 KiB per partition fits gen3 (224 KiB) but not gen2 (192 KiB)
    @bn.jit
    def big(a):
        t = bn.language.ndarray((128, 50 * 1024), dtype=np.float32, buffer=bn.language.sbuf)
        bn.isa.memset(dst=t, value=0.0)
        return a

    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    assert '"arch": "gen3"' in bn.trace_json(big)(A)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.raises(bn.NkiError, match=r"SBUF is full.*of gen2"):
        bn.trace_json(big)(A)


def test_bad_target_is_named(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn9")
    with pytest.raises(bn.NkiError, match="NEURON_PLATFORM_TARGET_OVERRIDE"):
        bad.not_expressible(A, B)


def test_tiles_with_disjoint_live_ranges_share_space():
    # eight 100 KiB tiles allocated in a loop, each live only for its memset: gen3's 224 KiB
    # suffices because a tile's space is reused once its last instruction has run
    @bn.jit
    def loop(a):
        nl = bn.language
        for _ in nl.affine_range(8):
            t = nl.ndarray((128, 25 * 1024), dtype=np.float32, buffer=nl.sbuf)
            bn.isa.memset(dst=t, value=1.0)
        return a

    loop(A)


def test_calls_outside_a_kernel_say_so():
    with pytest.raises(bn.NkiError, match="inside a traced kernel"):
        bn.language.ndarray((128, 4), dtype=np.float32)


def test_runtime_fault_names_the_kernel_line():
    # birsim's Activation range check (ranges="fault"): Ln of negative numbers faults, and the
    # fault names the instruction, hence the kernel line
    import birsim

    line = LINES["log_range"]
    with pytest.raises(birsim.Fault, match=rf"log@bad.py:{line}#"):
        bn.simulate(bad.log_of_negatives, ranges="fault")(-A, B)
    with pytest.warns(RuntimeWarning, match=rf"log@bad.py:{line}#"):
        out = bad.log_of_negatives(-A, B)
    assert out.shape == A.shape


def test_live_tiles_overlapping_in_time_do_not_fit():
    # two 120 KiB tiles both live (written, then both read) exceed gen3's 224 KiB per partition
    @bn.jit
    def two(a):
        nl = bn.language
        x = nl.ndarray((128, 30 * 1024), dtype=np.float32, buffer=nl.sbuf)
        y = nl.ndarray((128, 30 * 1024), dtype=np.float32, buffer=nl.sbuf)
        bn.isa.memset(dst=x, value=1.0)
        bn.isa.memset(dst=y, value=2.0)
        bn.isa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        return a

    with pytest.raises(bn.NkiError, match=r"test_nki_errors.py:\d+: ndarray: SBUF is full: .* 1 other tile\(s\) live"):
        two(A)
