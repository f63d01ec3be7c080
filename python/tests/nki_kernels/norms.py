"""RMSNorm and LayerNorm over the free axis of 128-row tiles, tutorial style (older
nki.language API: nl.arange index expressions, masks, broadcast_to along partitions)."""
import math

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rmsnorm(a_tensor, g_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    assert a_tensor.shape[1] == g_tensor.shape[0]
    ix = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(a_tensor.shape[1])[None, :]
    num_rows = a_tensor.shape[0]
    g_tile = nl.load(g_tensor.reshape((1, g_tensor.shape[0]))[iw, iy])
    for i in nl.affine_range(math.ceil(a_tensor.shape[0] / 128)):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy], mask=(i * 128 + ix < num_rows))
        sq = nl.square(a_tile)
        sq_sum = nl.sum(sq, axis=[1])
        mean = sq_sum / a_tensor.shape[1]
        inv_rms = nl.rsqrt(mean)
        out_tile = nl.multiply(a_tile, inv_rms)
        g_b = g_tile.broadcast_to((128, g_tensor.shape[0]))
        out_tile[...] = nl.multiply(out_tile, g_b, mask=(i * 128 + ix < num_rows))
        nl.store(out_tensor[i * 128 + ix, iy], value=out_tile, mask=(i * 128 + ix < num_rows))
    return out_tensor


@nki.jit
def layernorm_nl(x_hbm, epsilon, gamma, beta):
    out = nl.ndarray(x_hbm.shape, dtype=x_hbm.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(x_hbm.shape[1])[None, :]
    i_1 = nl.arange(1)[:, None]
    g = nl.load(gamma.reshape((1, gamma.shape[0]))[i_1, i_f]).broadcast_to((P, gamma.shape[0]))
    b = nl.load(beta.reshape((1, beta.shape[0]))[i_1, i_f]).broadcast_to((P, beta.shape[0]))
    for t in nl.affine_range(x_hbm.shape[0] // P):
        x = nl.load(x_hbm[t * P + i_p, i_f])
        mean = nl.mean(x, axis=1)
        var = nl.mean(nl.square(x), axis=1) - mean * mean
        y = (x - mean) * nl.rsqrt(var + epsilon)
        nl.store(out[t * P + i_p, i_f], value=y * g + b)
    return out


@nki.jit
def layernorm_bn(x_hbm, epsilon, gamma, beta):
    """Mean and variance from nisa.bn_stats / bn_aggr, shift and scale in one tensor_scalar."""
    out = nl.ndarray(x_hbm.shape, dtype=x_hbm.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    F = x_hbm.shape[1]
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(F)[None, :]
    i_1 = nl.arange(1)[:, None]
    g = nl.load(gamma.reshape((1, F))[i_1, i_f]).broadcast_to((P, F))
    b = nl.load(beta.reshape((1, F))[i_1, i_f]).broadcast_to((P, F))
    chunk = nl.tile_size.bn_stats_fmax
    n_chunks = math.ceil(F / chunk)
    for t in nl.affine_range(x_hbm.shape[0] // P):
        x = nl.load(x_hbm[t * P + i_p, i_f])
        stats = nl.ndarray((P, 6 * n_chunks), dtype=np.float32)
        i_c = nl.arange(chunk)[None, :]
        i_s = nl.arange(6)[None, :]
        for j in nl.affine_range(n_chunks):
            stats[i_p, j * 6 + i_s] = nisa.bn_stats(x[i_p, j * chunk + i_c], mask=(j * chunk + i_c < F),
                                                    dtype=np.float32)
        mv = nisa.bn_aggr(stats)
        mean = mv[i_p, 0]
        var = mv[i_p, 1]
        inv_std = nl.rsqrt(var + epsilon)
        y = nisa.tensor_scalar(data=x, op0=np.subtract, operand0=mean, op1=np.multiply, operand1=inv_std)
        nl.store(out[t * P + i_p, i_f], value=y * g + b)
    return out
