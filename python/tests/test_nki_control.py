"""birsim.nki's registers and dynamic control flow against NumPy, worked from AWS's documented
semantics (nki/api/nki/isa/__init__.py register_alloc / register_move / register_load /
register_store, VirtualRegister, core_barrier, get_nc_sub_version; nki/api/nki/language/__init__.py
fori_loop, while_loop, dynamic_range)."""

from __future__ import annotations


import numpy as np
import pytest

import birsim
import birsim.nki as bn
from nki_support import KERNELS, markers, rng, traced_nodes

import nki.isa as nisa  # noqa: E402  (the switch is on once nki_support is imported)

from nki_kernels import control as C  # noqa: E402

MARK = markers(KERNELS / "control.py")
X = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)


def i32(v):
    return np.array([[v]], np.int32)


def test_register_alloc_move_load_store():
    got = C.registers(np.array([[-5, -3]], np.int32))
    np.testing.assert_array_equal(got, [[7, -5, -5, -3]])  # int16 -3 sign-extended
    ops = [n["opcode"] for n in traced_nodes(C.registers, np.array([[-5, -3]], np.int32))]
    assert {"RegisterMove", "TensorLoad", "TensorSave"} <= set(ops)


@pytest.mark.parametrize("n", [0, 1, 17, 40])
def test_fori_loop_with_a_register_bound(n):
    got = C.copy_rows(X, i32(n), 0)
    want = np.zeros_like(X)
    want[:n] = X[:n]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("lo,n", [(3, 10), (10, 10), (12, 10)])
def test_fori_loop_with_register_lower_and_upper(lo, n):
    for lower in (lo, i32(lo)):
        got = C.copy_rows(X, i32(n), lower)
        want = np.zeros_like(X)
        want[lo:n] = X[lo:n]
        np.testing.assert_array_equal(got, want)


def test_one_program_runs_with_other_bounds():
    prog = bn.trace(C.copy_rows)(X, i32(0), 0)
    for n in (5, 33):
        out = birsim.run(prog, {"x": X, "n": i32(n)})
        np.testing.assert_array_equal(out["out"][:n], X[:n])
        assert (out["out"][n:] == 0).all()
    loops = [e for e in traced_nodes(C.copy_rows, X, i32(0), 0) if e["opcode"] == "DynamicForLoop"]
    assert len(loops) == 1 and loops[0]["engine"] == "Pool" and loops[0]["LoopAxis"]["lb"] == 0


@pytest.mark.parametrize("n", [0, 1, 7, 10])
def test_fori_loop_step_two_with_select(n):
    y = rng(80).standard_normal((16, 10)).astype(np.float32)
    got = C.every_other_column(y, i32(n))
    want = np.zeros_like(y)
    want[:, 0:n:2] = y[:, 0:n:2] * np.float32(2)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_dynamic_range_over_a_register(n):
    x = rng(81).standard_normal((40, 8)).astype(np.float32)
    acc = np.zeros(8, np.float32)
    for i in range(n):
        acc = acc + x[i]  # fp32 adds in loop order
    np.testing.assert_array_equal(C.sum_first_rows(x, i32(n)), acc[None, :])


@pytest.mark.parametrize("n,m", [(3, 5), (0, 4), (4, 0), (40, 8)])
def test_nested_dynamic_loops(n, m):
    got = C.nested(X, i32(n), i32(m))
    want = np.zeros_like(X)
    want[:n, :m] = X[:n, :m] + 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("count", [0, 1, 4, 9])
def test_while_loop_tests_before_the_body(count):
    acc, reg = C.count_down(i32(count))
    want = np.float32(0)
    for _ in range(count):
        want = np.float32(want + np.float32(2.5))
    np.testing.assert_array_equal(acc, [[want]])
    np.testing.assert_array_equal(reg, [[count]])  # the body's r was a copy (passed by value)
    ops = [e["opcode"] for e in traced_nodes(C.count_down, i32(count))]
    assert "DoWhile" in ops and "CompareAndBranch" in ops


def test_core_barrier_is_synchronisation_only():
    y = rng(82).standard_normal((16, 10)).astype(np.float32)
    np.testing.assert_array_equal(C.barrier(y), y * np.float32(2))
    assert "CoreBarrier" in [e["opcode"] for e in traced_nodes(C.barrier, y)]


def test_core_barrier_needs_gen3(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.raises(bn.NkiError, match="core_barrier: .*NeuronCore-v3"):
        C.barrier(np.zeros((4, 4), np.float32))


def test_get_nc_sub_version_is_the_first_revision():
    assert nisa.get_nc_sub_version() == 0


@pytest.mark.parametrize("kernel,mark,what", [
    (C.register_as_bool, "reg_bool", "no truth value"),
    (C.register_as_int, "reg_int", "not a Python integer"),
    (C.too_many_registers, "reg_many", "register_alloc: more than 64 registers"),
])
def test_register_misuse_names_the_kernel_line(kernel, mark, what):
    with pytest.raises(bn.NkiError, match=rf"control.py:{MARK[mark]}: .*{what}"):
        kernel()


def test_fori_loop_step_must_be_positive():
    with pytest.raises(bn.NkiError, match=rf"control.py:{MARK['bad_step']}: fori_loop: step"):
        C.fori_bad_step(X)


@pytest.mark.parametrize("v", [0, 1, 5, 1000, 2 ** 30])
def test_while_loop_body_returning_another_register(v):
    np.testing.assert_array_equal(C.halve_until_zero(i32(v)), [[int(v).bit_length()]])


def test_loops_reuse_their_own_registers():
    y = rng(83).standard_normal((8, 6)).astype(np.float32)
    want = y.copy()
    for _ in range(40):
        want[:, :4] = want[:, :4] + np.float32(1)
    np.testing.assert_array_equal(C.many_loops(y, i32(4)), want)
