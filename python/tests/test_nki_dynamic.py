"""birsim.nki's runtime offsets (BIR scalar dynamic offsets): rows and columns picked by an
index that only exists when birsim runs the program, against NumPy indexing; an index out of
range is birsim's fault, naming the kernel line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import birsim
import birsim.nki as bn
from nki_support import KERNELS, rng

from nki_kernels import dynamic  # noqa: E402

TABLE = rng(60).standard_normal((64, 32)).astype(np.float32)


@pytest.mark.parametrize("i", [0, 17, 63])
def test_nl_ds_with_a_tile_start(i):
    got = dynamic.gather_row(TABLE, np.array([[i]], np.int32))
    np.testing.assert_array_equal(got, TABLE[i:i + 1])


def test_the_program_reads_the_index_at_run_time():
    prog = bn.trace(dynamic.gather_row)(TABLE, np.array([[0]], np.int32))
    for i in (3, 40):
        out = birsim.run(prog, {"table": TABLE, "idx": np.array([[i]], np.int32)})
        np.testing.assert_array_equal(out["out"], TABLE[i:i + 1])
    text = bn.trace_json(dynamic.gather_row)(TABLE, np.array([[0]], np.int32))
    load = next(x for x in json.loads(text)["functions"][0]["blocks"][0]["instructions"]
                if x["opcode"] == "Load" and x["ins"][0]["memref"] == "table")
    assert load["ins"][0]["indirect_dim"] == "W" and load["ins"][0]["indirect_dim_max_index"] == 64


@pytest.mark.parametrize("i", [0, 30, 60])
def test_ap_with_scalar_offset(i):
    got = dynamic.gather_rows_ap(TABLE, np.array([[i]], np.int32))
    np.testing.assert_array_equal(got, TABLE[i:i + 4])


@pytest.mark.parametrize("i", [0, 5, 31])
def test_select_on_a_free_dim(i):
    x = rng(61).standard_normal((128, 32)).astype(np.float32)
    np.testing.assert_array_equal(dynamic.pick_column(x, np.array([[i]], np.int32)), x[:, i:i + 1])


def test_index_out_of_range_is_a_fault_at_the_kernel_line():
    line = next(n for n, s in enumerate((KERNELS / "dynamic.py").read_text().splitlines(), 1)
                if "nl.load(table[nl.ds(i, 1), :])" in s)
    with pytest.raises(birsim.Fault, match=rf"load@dynamic.py:{line}#"):
        dynamic.gather_row(TABLE, np.array([[64]], np.int32))
