"""Direct allocation in birsim.nki (nki_kernels/manual_alloc.py): tiles at the addresses the
kernel gives, blocks that share bytes under modulo allocation alias as on the device, tiles
birsim places keep clear of pinned ones, and bad addresses are errors at the kernel line.
Goldens: NumPy from the inputs; the aliasing outcome worked out from the kernel's own order of
loads (AWS nki/test/test_sbuf_modulo_alloc.py gives the modulo rule)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import birsim.nki as bn
from nki_support import KERNELS, markers, rng

from nki_kernels import manual_alloc as K  # noqa: E402

MARK = markers(KERNELS / "manual_alloc.py")


def _locations(text):
    prog = json.loads(text)
    return {a["name"]: a["memorylocations"][0] for a in prog["functions"][0]["allocations"]}


def test_mod_alloc_transpose_matches_numpy_and_keeps_its_addresses():
    a = rng(1).standard_normal((256, 384)).astype(np.float32)
    np.testing.assert_array_equal(K.transpose_mod_alloc(a), a.T)
    locs = _locations(bn.trace_json(K.transpose_mod_alloc, loops="unroll")(a))
    sb = sorted({(loc["addr"], loc["dims"][1]) for loc in locs.values() if loc["type"] == "SB"})
    ps = {loc["addr"] for loc in locs.values() if loc["type"] == "PSUM"}
    assert sb == [(0, 512), (1024, 512), (2048, 512)]  # every iteration's tiles at the same 3 places
    assert ps == {2 * 2048}  # bank 2


def test_mod_alloc_transpose_folded_into_bir_loops():
    a = rng(2).standard_normal((256, 256)).astype(np.float32)
    np.testing.assert_array_equal(bn.simulate(K.transpose_mod_alloc, loops="bir")(a), a.T)


def test_modulo_blocks_alias_as_on_the_device():
    a = rng(3).standard_normal((512, 64)).astype(np.float32)
    band = [a[i * 128:(i + 1) * 128] for i in range(4)]
    # blocks 0 and 2 share bytes, so do 1 and 3; the loads run 0, 1, 2, 3
    want = np.stack([band[2], band[3], band[2], band[3]])
    np.testing.assert_array_equal(K.modulo_blocks(a), want)
    locs = _locations(bn.trace_json(K.modulo_blocks)(a))
    assert sorted(loc["addr"] for loc in locs.values() if loc["type"] == "SB") == [512, 512, 768, 768]


def test_allocation_function_places_each_block():
    a = rng(4).standard_normal((384, 64)).astype(np.float32)
    want = np.stack([2 * a[i * 128:(i + 1) * 128] for i in range(3)])
    np.testing.assert_array_equal(K.blocks_by_function(a), want)
    locs = _locations(bn.trace_json(K.blocks_by_function)(a))
    pinned = sorted(loc["addr"] for name, loc in locs.items() if loc["type"] == "SB" and "_" in name)
    assert {4096, 3072, 2048} <= set(pinned)


def test_address_argument():
    r = rng(5)
    a = r.standard_normal((128, 256)).astype(np.float32)
    b = r.standard_normal((128, 256)).astype(np.float32)
    np.testing.assert_array_equal(K.address_tiles(a, b), a + b)
    text = bn.trace_json(K.address_tiles)(a, b)
    locs = _locations(text)
    insts = json.loads(text)["functions"][0]["blocks"][0]["instructions"]
    loads = [i["outs"][0]["memref"] for i in insts if i["opcode"] == "DMACopy" and i["ins"][0]["memref"] in "ab"]
    assert [locs[m]["addr"] for m in loads] == [0, 1024]
    add = [i for i in insts if i["opcode"] == "TensorTensor"][0]
    assert locs[add["outs"][0]["memref"]]["addr"] == 3 * 2048


def test_placed_tiles_keep_clear_of_a_pinned_tile_used_later():
    r = rng(6)
    a = r.standard_normal((128, 128)).astype(np.float32)
    b = r.standard_normal((128, 128)).astype(np.float32)
    want = (a + np.float32(3.0) * a) + b
    np.testing.assert_array_equal(K.pinned_and_placed(a, b), want)


@pytest.mark.parametrize("kernel, mark, words", [
    (K.psum_off_bank, "off_bank", "bank boundary"),
    (K.odd_partition, "odd_partition", "0, 32, 64 or 96"),
    (K.past_the_end, "past_the_end", "bytes per partition"),
    (K.hbm_address, "hbm_address", "SBUF or PSUM"),
    (K.bad_function, "bad_function", "must return 2 numbers"),
])
def test_bad_addresses_are_errors_at_the_kernel_line(kernel, mark, words):
    a = np.zeros((128, 64), np.float32)
    with pytest.raises(bn.NkiError) as e:
        bn.simulate(kernel)(a)
    assert f"manual_alloc.py:{MARK[mark]}" in str(e.value) and words in str(e.value), str(e.value)
