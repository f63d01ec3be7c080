"""Tensor addition, tutorial style: a tiled kernel on the current nki.isa API, and an SPMD
kernel (one 128 x 512 tile per program id) on the older nki.language API."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def add_tiled(a_in, b_in):
    out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
    rows, cols = a_in.shape
    TP, TF = 128, 512
    for i in nl.affine_range(rows // TP):
        for j in nl.affine_range(cols // TF):
            a_t = nl.ndarray((TP, TF), dtype=a_in.dtype, buffer=nl.sbuf)
            b_t = nl.ndarray((TP, TF), dtype=b_in.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_t, src=a_in[i * TP:(i + 1) * TP, j * TF:(j + 1) * TF])
            nisa.dma_copy(dst=b_t, src=b_in[i * TP:(i + 1) * TP, j * TF:(j + 1) * TF])
            c_t = nl.ndarray((TP, TF), dtype=a_in.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=c_t, data1=a_t, data2=b_t, op=nl.add)
            nisa.dma_copy(dst=out[i * TP:(i + 1) * TP, j * TF:(j + 1) * TF], src=c_t)
    return out


@nki.jit
def add_spmd(a_in, b_in):
    out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
    row0 = nl.program_id(0) * 128
    col0 = nl.program_id(1) * 512
    ix = row0 + nl.arange(128)[:, None]
    iy = col0 + nl.arange(512)[None, :]
    a_t = nl.load(a_in[ix, iy])
    b_t = nl.load(b_in[ix, iy])
    c_t = a_t + b_t
    nl.store(out[ix, iy], value=c_t)
    return out


def add_grid(a, b):
    """The caller of the SPMD kernel: one program per 128 x 512 tile."""
    return add_spmd[a.shape[0] // 128, a.shape[1] // 512](a, b)


@nki.jit
def scale_shift(x_in, factor):
    """(x * factor + 1) - x with scalars: TensorScalar chains and a reversed subtract."""
    out = nl.ndarray(x_in.shape, dtype=x_in.dtype, buffer=nl.shared_hbm)
    x = nl.load(x_in)
    y = x * factor + 1.0
    z = 2.0 - y
    nl.store(out, value=z)
    return out


@nki.jit
def add_scaled(a_in, b_in, scale=1.0, offset=0.0):
    """a + b·scale + offset: defaults a caller may skip (offset given, scale left out)."""
    out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
    a_t = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.sbuf)
    b_t = nl.ndarray(b_in.shape, dtype=b_in.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_t, src=a_in)
    nisa.dma_copy(dst=b_t, src=b_in)
    c_t = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=c_t, data=b_t, op0=nl.multiply, operand0=scale, op1=nl.add, operand1=a_t)
    nisa.tensor_scalar(dst=c_t, data=c_t, op0=nl.add, operand0=offset)
    nisa.dma_copy(dst=out, src=c_t)
    return out
