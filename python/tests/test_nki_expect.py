"""`simulate(kernel, expect=...)` (issue #31 item 5): an output that matches passes; one that
differs raises `Divergence` naming the element, both values, the number of differing elements and
the kernel line of the instruction that last wrote the element (the `dma_copy` storing that
element's tile, whose line the test reads from the kernel file). Expected arrays are NumPy's."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import birsim.nki as bn
from nki_support import rng

from nki_kernels import tensor_add  # noqa: E402


def line_of(fn, text: str) -> int:
    """The file line of the first line of `fn`'s source containing `text`."""
    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return first + next(k for k, l in enumerate(lines) if text in l)


@pytest.fixture(scope="module")
def ab():
    r = rng(11)
    return r.standard_normal((256, 1024)).astype(np.float32), r.standard_normal((256, 1024)).astype(np.float32)


def test_a_matching_output_passes(ab):
    a, b = ab
    got = bn.simulate(tensor_add.add_tiled, expect=a + b)(a, b)
    np.testing.assert_array_equal(got, a + b)


def test_a_differing_element_names_the_line_that_wrote_it(ab):
    a, b = ab
    want = a + b
    want[130, 700] += 1.0
    want[200, 5] = np.nan
    with pytest.raises(bn.Divergence) as e:
        bn.simulate(tensor_add.add_tiled, expect=want)(a, b)
    d = e.value
    store = line_of(tensor_add.add_tiled, "nisa.dma_copy(dst=out[")
    assert d.index == (130, 700) and d.output == 0 and d.mismatches == 2
    assert d.got == (a + b)[130, 700] and d.expected == want[130, 700]
    assert d.site == ("tensor_add.py", store)
    assert d.writer["opcode"] in ("DMACopy", "Save", "Load")
    assert f"last written by dma_copy at tensor_add.py:{store}" in str(d)
    assert "2 of 262144 elements differ exactly" in str(d)


def test_tolerances_follow_isclose(ab):
    a, b = ab
    want = (a + b) * np.float32(1 + 1e-6)
    with pytest.raises(bn.Divergence):
        bn.simulate(tensor_add.add_tiled, expect=want)(a, b)
    bn.simulate(tensor_add.add_tiled, expect=want, rtol=1e-5)(a, b)


def test_an_spmd_kernel_names_the_store_of_the_program_instance(ab):
    a, b = ab
    want = a + b
    want[255, 1023] = 0.0
    with pytest.raises(bn.Divergence) as e:
        bn.simulate(tensor_add.add_spmd[2, 2], expect=want)(a, b)
    assert e.value.site == ("tensor_add.py", line_of(tensor_add.add_spmd, "nl.store(out"))


def test_expect_must_match_the_outputs(ab):
    a, b = ab
    with pytest.raises(ValueError, match="shape"):
        bn.simulate(tensor_add.add_tiled, expect=np.zeros((2, 2), np.float32))(a, b)
    with pytest.raises(TypeError, match="returns 1 tensors, expect holds 2"):
        bn.simulate(tensor_add.add_tiled, expect=[a, b])(a, b)
