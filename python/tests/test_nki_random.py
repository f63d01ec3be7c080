"""birsim.nki's random numbers against what AWS documents (nki/api/nki/isa/__init__.py rng,
rand2, dropout, set_rng_seed, rand_set_state, rand_get_state; nki/api/nki/language/__init__.py
rand, random_seed, dropout): ranges, dtypes, the low bits of one 32-bit draw, zeros exactly
where the drop mask says, reproducibility from a seed or a saved state, the state round trip.
Bit patterns of the draws are birsim's Xorwow (fidelity R1-R4) and are not checked here."""

from __future__ import annotations


import ml_dtypes
import numpy as np
import pytest

import birsim.nki as bn
from nki_support import KERNELS, markers, rng, traced_nodes

from nki_kernels import random_ops as R  # noqa: E402

SEED = np.array([[1234]], np.int32)
MARK = markers(KERNELS / "random_ops.py")


@pytest.fixture
def gen4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


def test_nl_rand_same_seed_same_values_in_0_1():
    a, b, c = R.rand_twice(SEED)
    assert a.dtype == np.float32 and a.shape == (128, 64)
    np.testing.assert_array_equal(a, b)  # AWS's random_seed example: assert nl.equal(a, b)
    for v in (a, c):
        assert (v >= 0).all() and (v < 1).all()
    assert not np.array_equal(b, c)  # the sequence goes on
    a2, _, _ = R.rand_twice(np.array([[1235]], np.int32))
    assert not np.array_equal(a, a2)
    assert len(np.unique(a)) > 1000  # GpSimd: one generator per partition
    ops = {o["opcode"] for o in traced_nodes(R.rand_twice, SEED)}
    assert {"SetRandState", "Rand2"} <= ops


@pytest.mark.parametrize("engine", ["vector", "gpsimd"])
def test_rng_writes_the_low_bits_of_one_32_bit_draw(engine):
    u32, u16, u8, i32 = R.rng_low_bits(SEED, engine)
    assert (u32.dtype, u16.dtype, u8.dtype, i32.dtype) == (np.uint32, np.uint16, np.uint8, np.int32)
    np.testing.assert_array_equal(u16, (u32 & 0xFFFF).astype(np.uint16))
    np.testing.assert_array_equal(u8, (u32 & 0xFF).astype(np.uint8))
    np.testing.assert_array_equal(i32.view(np.uint32), u32)
    assert len(np.unique(u32)) > 1
    eng = {"vector": "DVE", "gpsimd": "Pool"}[engine]
    assert {o["engine"] for o in traced_nodes(R.rng_low_bits, SEED, engine) if o["opcode"] == "Rand"} == {eng}


def test_rand2_is_uniform_in_min_max(gen4):
    r = rng(70)
    lo = r.uniform(-5, 0, (64, 1)).astype(np.float32)
    hi = (lo + r.uniform(0.5, 3, (64, 1))).astype(np.float32)
    o1, o2 = R.uniform(lo, hi)
    assert (o1 >= -2).all() and (o1 <= 3).all() and len(np.unique(o1)) > 1
    assert ((o2 >= lo) & (o2 <= hi)).all()


def test_rand2_needs_gen4():
    with pytest.raises(bn.NkiError, match=rf"random_ops.py:{MARK['rand2_gen']}: rand2: .*NeuronCore-v4"):
        R.rand2_on_gen3()


@pytest.mark.parametrize("prob", [0.3, 0.0, 1.0])
def test_dropout_zeroes_exactly_where_the_mask_says(prob):
    x = rng(71).standard_normal((128, 256)).astype(np.float32)
    m, y = R.dropout_mask(x, SEED, prob)
    assert set(np.unique(m)) <= {0.0, 1.0}
    np.testing.assert_array_equal(y, np.where(m == 1, x, np.float32(0)))  # kept bit for bit, no rescale
    if prob == 0.0:
        assert (m == 1).all()  # AWS: 0.0 keeps every element
    elif prob == 1.0:
        assert (m == 0).all()  # AWS: 1.0 zeroes every element
    else:
        assert 0 < (m == 0).mean() < 1


def test_dropout_with_one_probability_per_partition():
    x = rng(72).standard_normal((128, 64)).astype(np.float32)
    p = (np.arange(128) % 2).astype(np.float32).reshape(128, 1)
    y = R.dropout_per_partition(x, p)
    np.testing.assert_array_equal(y[0::2], x[0::2])
    assert (y[1::2] == 0).all()


def test_nl_dropout_same_seed_same_mask_and_dtype():
    x = rng(73).standard_normal((128, 64)).astype(np.float32)
    o1, o2 = R.nl_dropout(x, SEED, 0.5)
    assert o2.dtype == ml_dtypes.bfloat16
    kept = o1 != 0
    np.testing.assert_array_equal(o1, np.where(kept, x, np.float32(0)))
    np.testing.assert_array_equal(o2, np.where(kept, x, np.float32(0)).astype(ml_dtypes.bfloat16))
    assert 0 < kept.mean() < 1


@pytest.mark.parametrize("engine,words", [("gpsimd", 6), ("vector", 24)])
def test_rand_state_round_trip_and_replay(engine, words, monkeypatch):
    if engine == "vector":
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")  # AWS: Vector state on v4+
    state = rng(74).integers(1, 2 ** 32, size=(16, words), dtype=np.uint32)
    got, d1, d2 = R.state_round_trip(state, engine)
    np.testing.assert_array_equal(got, state)
    np.testing.assert_array_equal(d1, d2)
    assert len(np.unique(d1)) > 1


def test_errors_name_the_kernel_line():
    with pytest.raises(bn.NkiError, match=rf"random_ops.py:{MARK['rng_float']}: rng: dst must be int8"):
        R.rng_float_dst()
    with pytest.raises(bn.NkiError, match=rf"random_ops.py:{MARK['state_words']}: rand_get_state: .*6 words"):
        R.state_wrong_words()


def test_vector_state_needs_gen4():
    with pytest.raises(bn.NkiError, match="engine=vector needs gen4"):
        R.state_round_trip(np.ones((4, 24), np.uint32), "vector")


def test_older_dropout_returns_a_tile():
    x = rng(75).standard_normal((32, 16)).astype(np.float32)
    keep, drop = R.legacy_dropout(x)
    np.testing.assert_array_equal(keep, x)
    assert (drop == 0).all()
