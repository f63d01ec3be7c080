"""The birsim.nki switch and its outputs: `birsim.nki.install()` import aliases (nki,
nki.language, nki.isa, neuronxcc.nki...), `python -m birsim.nki script.py`, a traced program
that round-trips through JSON and runs with the `birsim` CLI, and tracing speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import ml_dtypes
import numpy as np
import pytest

import birsim
import birsim.nki as bn
from nki_support import rng

from nki_kernels import matmul, tensor_add  # noqa: E402


def test_import_aliases_resolve_to_birsim():
    import neuronxcc.nki as old_nki
    import neuronxcc.nki.isa as old_nisa
    import neuronxcc.nki.language as old_nl
    import nki
    import nki.isa as nisa
    import nki.language as nl
    from nki import jit
    from nki.typing import tensor

    assert nki is bn and nl is bn.language and nisa is bn.isa
    assert old_nki is bn and old_nl is bn.language and old_nisa is bn.isa
    assert jit is bn.jit and tensor is bn.typing.tensor


def test_unknown_submodule_is_refused():
    with pytest.raises(ImportError, match="birsim.nki provides"):
        __import__("nki.collectives")


SCRIPT = """
import os
import ml_dtypes
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = "trn1"

@nki.jit
def double(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.add(t, t))
    return out

if __name__ == "__main__":
    import sys
    x = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    y = double(x)
    assert (y == 2 * x).all()
    assert nki.isa.get_nc_version() == nki.isa.nc_version.gen2
    print("ok", sys.argv[1:])
"""


def test_python_m_birsim_nki_runs_a_script(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    env.pop("NEURON_PLATFORM_TARGET_OVERRIDE", None)
    r = subprocess.run([sys.executable, "-m", "birsim.nki", str(script), "x", "--y"], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok ['x', '--y']"


UNITTEST = """
import unittest
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.trace  # the older API's decorator spelling (`nki_jit = nki.trace`)
def halve(a, out):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    t[...] = nl.load(a)
    nl.store(out, value=nl.multiply(t, 0.5))


class T(unittest.TestCase):
    def test_halve(self):
        a = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
        out = np.zeros_like(a)
        nki.simulate_kernel(halve, a, out)
        self.assertTrue((out == a / 2).all())
"""


def test_python_m_birsim_nki_runs_a_module(tmp_path):
    """`python -m birsim.nki -m unittest MODULE`: a kernel's unittest file, with the older
    spellings (`neuronxcc.nki.compiler`, `@nki.trace`, `simulate_kernel` into an output array)."""
    (tmp_path / "test_halve.py").write_text(UNITTEST)
    r = subprocess.run([sys.executable, "-m", "birsim.nki", "-m", "unittest", "test_halve"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Ran 1 test" in r.stderr and "OK" in r.stderr


def test_target_generation_in_program(monkeypatch):
    a = np.ones((128, 512), np.float32)
    for env, arch in (("trn1", "gen2"), ("trn2", "gen3"), ("trn3", "gen4"), ("gen4", "gen4"), ("", "gen3")):
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", env)
        assert json.loads(bn.trace_json(tensor_add.add_tiled)(a, a))["arch"] == arch
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE")
    assert json.loads(bn.trace_json(tensor_add.add_tiled)(a, a))["arch"] == "gen3"


@pytest.mark.parametrize("env", ["trn1", "trn2", "trn3"])
def test_kernels_run_on_every_generation(monkeypatch, env):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", env)
    r = rng(30)
    lhsT = r.integers(-4, 4, (256, 128)).astype(np.float32)
    rhs = r.integers(-4, 4, (256, 512)).astype(np.float32)
    want = (lhsT.T.astype(np.float64) @ rhs).astype(np.float32)
    np.testing.assert_array_equal(matmul.matmul_tiled(lhsT, rhs), want)


def test_traced_json_runs_with_the_cli(tmp_path, cli):
    r = rng(31)
    a = r.standard_normal((256, 512)).astype(np.float32)
    b = r.standard_normal((256, 512)).astype(np.float32)
    path = tmp_path / "add.json"
    prog = bn.trace(tensor_add.add_tiled, save=str(path))(a, b)
    assert isinstance(prog, birsim.Program)
    assert sorted(prog.input_names()) == ["a_in", "b_in"] and prog.output_names() == ["out"]
    # the saved JSON is the same program: it loads, and runs to the same bits as the Program
    text = path.read_text()
    assert json.loads(text) == json.loads(bn.trace_json(tensor_add.add_tiled)(a, b))
    again = birsim.load(text)
    np.testing.assert_array_equal(birsim.run(again, {"a_in": a, "b_in": b})["out"], a + b)
    np.testing.assert_array_equal(birsim.run(prog, {"a_in": a, "b_in": b})["out"], a + b)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    res = subprocess.run(
        [str(cli), "run", str(path), "--input", f"a_in={tmp_path / 'a.npy'}", "--input", f"b_in={tmp_path / 'b.npy'}",
         "--output", f"out={tmp_path / 'out.npy'}"],
        capture_output=True, text=True,
    )
    assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), a + b)
    chk = subprocess.run([str(cli), "check", str(path)], capture_output=True, text=True)
    assert chk.returncode == 0, chk.stdout
    # the CLI's dump names the kernel line of every instruction
    dump = subprocess.run([str(cli), "dump", str(path)], capture_output=True, text=True)
    assert dump.returncode == 0 and "tensor_tensor@tensor_add.py:" in dump.stdout


def test_tracing_a_64_tile_matmul_is_fast():
    r = rng(32)
    lhsT = r.standard_normal((512, 512)).astype(np.float32)   # K = 4 tiles, M = 4 tiles
    rhs = r.standard_normal((512, 2048)).astype(np.float32)   # N = 4 tiles of 512
    t0 = time.perf_counter()
    prog = bn.trace_json(matmul.matmul_tiled, loops="unroll")(lhsT, rhs)  # counts unrolled instructions
    dt = time.perf_counter() - t0
    n = prog.count('"opcode": "Matmult"')
    print(f"traced a {n}-tile matmul in {dt * 1000:.1f} ms")
    assert n == 64
    assert dt < 5.0


def test_big_matmul_result():
    r = rng(33)
    lhsT = r.integers(-3, 4, (512, 512)).astype(np.float32)
    rhs = r.integers(-3, 4, (512, 2048)).astype(np.float32)
    want = (lhsT.T.astype(np.float64) @ rhs).astype(np.float32)
    np.testing.assert_array_equal(matmul.matmul_tiled(lhsT, rhs), want)


def test_inputs_written_by_the_kernel_update_in_place():
    @bn.jit
    def bump(a):
        nl = bn.language
        t = nl.load(a)
        nl.store(a, value=nl.add(t, 1.0))
        return None

    x = np.zeros((128, 16), np.float32)
    assert bump(x) is None
    np.testing.assert_array_equal(x, np.ones((128, 16), np.float32))


@pytest.mark.parametrize("env", ["trn1", "trn2", "trn3"])
def test_transposes_on_every_generation(monkeypatch, env):
    # gen2's Tensor Engine transpose is a matmul with an identity into float32 PSUM (exact for
    # finite values); gen3+ copy the bits in the data's dtype
    from nki_kernels import transpose2d

    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", env)
    x = rng(34).standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(transpose2d.transpose_pe(x).view(np.uint16), np.ascontiguousarray(x.T).view(np.uint16))
    lhs = rng(35).integers(-4, 4, (64, 128)).astype(ml_dtypes.bfloat16)
    rhs = rng(36).integers(-4, 4, (128, 256)).astype(ml_dtypes.bfloat16)
    want = (lhs.astype(np.float64) @ rhs.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(matmul.matmul_no_transpose(lhs, rhs), want)


def test_fp8_tensor_engine_transpose_is_refused():
    from nki_kernels import transpose2d

    x = np.zeros((128, 64), ml_dtypes.float8_e4m3)
    with pytest.raises(bn.NkiError, match=r"transpose2d.py:\d+: transpose: an fp8 Tensor Engine transpose"):
        transpose2d.transpose_pe(x)


def test_every_tutorial_program_runs_on_birsim():
    # birsim.check: every opcode / mode / dtype combination the traced programs use runs
    from nki_kernels import avgpool, norms, softmax, transpose2d

    r = rng(37)
    a = r.standard_normal((256, 512)).astype(np.float32)
    v = r.standard_normal(512).astype(np.float32)
    cases = [
        (tensor_add.add_tiled, (a, a)),
        (tensor_add.add_spmd[2, 1], (a, a)),
        (transpose2d.transpose_rows, (a[:128].copy(), (16, 32))),
        (transpose2d.transpose_pe, (a[:128, :128].copy(),)),
        (matmul.matmul_k_tiled, (a[:, :128].copy(), a)),
        (matmul.matmul_tiled, (a[:, :128].copy(), a)),
        (softmax.softmax_nl, (a,)),
        (softmax.softmax_isa, (a[:128].copy(),)),
        (norms.rmsnorm, (a, v)),
        (norms.layernorm_nl, (a, 1e-5, v, v)),
        (norms.layernorm_bn, (a, 1e-5, v, v)),
        (avgpool.avgpool2d, (r.standard_normal((8, 8, 8)).astype(np.float32), 2)),
    ]
    for kernel, args in cases:
        report = birsim.check(bn.trace(kernel)(*args))
        assert report["verdict"] == "runs", (kernel, report)


def test_spmd_grid_with_neuroncore_dims():
    nl = bn.language

    @bn.jit
    def copy_blocks(a):
        b = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        j = nl.program_id(1)
        nl.store(b[i, j], nl.load(a[i, j]))
        return b

    src = rng(38).standard_normal((4, 2, 3, 5)).astype(np.float32)
    for grid in ((4, 2), (nl.spmd_dim(nl.nc(2), 2), 2), (nl.nc(2) * 2, 2), (2 * nl.nc(2), 2)):
        np.testing.assert_array_equal(copy_blocks[grid](src), src)


def test_jit_platform_target_picks_the_generation(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    a = np.ones((128, 512), np.float32)
    k1 = bn.jit(tensor_add.add_tiled.fn, platform_target="trn1")
    assert json.loads(bn.trace_json(k1)(a, a))["arch"] == "gen2"
    k3 = bn.jit(platform_target="trn3")(tensor_add.add_tiled.fn)
    assert json.loads(bn.trace_json(k3)(a, a))["arch"] == "gen4"
    assert json.loads(bn.trace_json(k3[1, 1])(a, a))["arch"] == "gen4"  # a grid keeps the options
    assert json.loads(bn.trace_json(tensor_add.add_tiled)(a, a))["arch"] == "gen3"
