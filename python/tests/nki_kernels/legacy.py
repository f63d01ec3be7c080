"""Kernels on the older `neuronxcc.nki` API: nl.mgrid index grids (with .p / .x), average
pooling by advanced indexing with a non-trailing reduce (axis=[2, 4]), `psum[...] +=
nisa.nc_matmul(...)` accumulation over par_dim-blocked tiles, and a tensor_tensor_scan
recurrence (the Mamba tutorial's inner step)."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def avgpool_mgrid(in_tensor, pool):
    C, H, W = in_tensor.shape
    out = nl.ndarray((C, H // pool, W // pool), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    i0, i1, i2, i3, i4 = nl.mgrid[0:C, 0:H // pool, 0:pool, 0:W // pool, 0:pool]
    tile = nl.load(in_tensor)
    pooled = nl.sum(tile[i0, pool * i1 + i2, pool * i3 + i4], axis=[2, 4]) / (pool * pool)
    nl.store(out, value=pooled)
    return out


@nki.jit
def matmul_blocked(lhsT, rhs):
    """K split into blocks of 128 held side by side in one (KT, par_dim(128), M) tensor."""
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 128
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a_blocks = nl.ndarray((KT, nl.par_dim(128), M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b_blocks = nl.ndarray((KT, nl.par_dim(128), N), dtype=rhs.dtype, buffer=nl.sbuf)
    i_a = nl.mgrid[0:128, 0:M]
    i_b = nl.mgrid[0:128, 0:N]
    for k in nl.affine_range(KT):
        a_blocks[k, i_a.p, i_a.x] = nl.load(lhsT[k * 128 + i_a.p, i_a.x])
        b_blocks[k, i_b.p, i_b.x] = nl.load(rhs[k * 128 + i_b.p, i_b.x])
    res = nl.zeros((M, N), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(KT):
        res[...] += nisa.nc_matmul(a_blocks[k, i_a.p, i_a.x], b_blocks[k, i_b.p, i_b.x])
    nl.store(out, value=nl.copy(res, dtype=nl.float32))
    return out


@nki.jit
def scan(a_in, b_in, init_in):
    """g[:, 0] = a[:, 0] * init + b[:, 0]; g[:, i] = a[:, i] * g[:, i-1] + b[:, i]; the second
    half of the row continues from the first half's last column."""
    P, F = a_in.shape
    half = F // 2
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    b = nl.load(b_in)
    init = nl.load(init_in)
    g = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    g[:, 0:half] = nisa.tensor_tensor_scan(a[:, 0:half], b[:, 0:half], init, np.multiply, np.add)
    nisa.tensor_tensor_scan(dst=g[:, half:F], data0=a[:, half:F], data1=b[:, half:F],
                            initial=g[:, half - 1:half], op0=nl.multiply, op1=nl.add)
    nl.store(out, value=g)
    return out


@nki.jit
def causal_mask_expr(s_in):
    """The older affine_select: a predicate of index expressions (keep j < p + 4)."""
    P, F = s_in.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:P, 0:F]
    s = nl.load(s_in)
    m = nisa.affine_select(pred=(i_f < i_p + 4), on_true_tile=s, on_false_value=nl.fp32.min)
    nl.store(out, value=m)
    return out


@nki.jit
def scale_ragged(x_in, factor):
    """x * factor over rows and columns that need not fill the 128 x 256 tiles: the older API's
    masks (`mask=(row < n_rows) & (col < n_cols)`) cut each call to the valid region."""
    R, C = x_in.shape
    out = nl.ndarray((R, C), dtype=x_in.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(256)[None, :]
    for i in nl.affine_range((R + 127) // 128):
        for j in nl.affine_range((C + 255) // 256):
            rows = i * 128 + ip
            cols = j * 256 + jf
            m = (rows < R) & (cols < C)
            t = nl.load(x_in[rows, cols], mask=m)
            y = nl.multiply(t, factor, mask=m)
            nl.store(out[rows, cols], value=y, mask=m)
    return out
