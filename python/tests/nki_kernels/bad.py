"""Kernels that AWS's simulator rejects (and one birsim.nki cannot express). Each offending line
carries a `# ERR:<name>` marker; the tests check that the error names that file:line."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def too_many_partitions(a):
    t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:partitions
    nisa.dma_copy(dst=t, src=a)
    return a


@nki.jit
def matmul_into_sbuf(a, b):
    x = nl.load(a)
    y = nl.load(b)
    res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.nc_matmul(dst=res, stationary=x, moving=y)  # ERR:matmul_sbuf
    return a


@nki.jit
def matmul_mixed_fp32(a, b):
    x = nl.load(a)
    y = nl.load(b, dtype=nl.bfloat16)
    res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=res, stationary=x, moving=y)  # ERR:matmul_dtype
    return a


@nki.jit
def bitwise_on_floats(a, b):
    x = nl.load(a)
    y = nl.load(b)
    z = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.bitwise_and)  # ERR:bitvec_dtype
    return a


@nki.jit
def shape_mismatch(a, b):
    x = nl.load(a)
    y = nl.load(b[:, 0:256])
    z = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)  # ERR:shape
    return a


@nki.jit
def both_inputs_in_psum(a, b):
    x = nl.load(a[:, 0:128])
    p1 = nl.transpose(x)
    p2 = nl.transpose(x)
    z = nl.ndarray(p1.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=p1, data2=p2, op=nl.add)  # ERR:psum_psum
    return a


@nki.jit
def slice_out_of_bounds(a, b):
    x = nl.load(a[0:128, 0:600])  # ERR:bounds
    return a


@nki.jit
def sbuf_overflow(a, b):
    big = nl.ndarray((128, 60 * 1024), dtype=nl.float32, buffer=nl.sbuf)  # ERR:sbuf_full
    return a


@nki.jit
def psum_overflow(a, b):
    # nine one-bank PSUM tiles live at once (all filled, then all read): eight banks hold eight
    tiles = []
    for i in range(9):
        tiles.append(nl.zeros((128, 512), nl.float32, buffer=nl.psum))  # ERR:psum_full
    for t in tiles:
        nl.copy(t)
    return a


@nki.jit
def reduce_partitions(a, b):
    x = nl.load(a)
    s = nl.sum(x, axis=0)  # ERR:reduce_axis
    return a


@nki.jit
def dma_into_psum(a, b):
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.dma_copy(dst=p, src=a)  # ERR:dma_psum
    return a


@nki.jit
def not_expressible(a, b):
    x = nl.load(a)
    y = nl.softmax(x, axis=1)  # ERR:unsupported
    return a


@nki.jit
def partial_mask(a, b):
    ix = nl.arange(128)[:, None]
    iy = nl.arange(512)[None, :]
    x = nl.load(a[ix, iy], mask=(ix < iy))  # ERR:mask
    return a


@nki.jit
def matmul_moving_too_wide(a, b):
    x = nl.load(a[:, 0:128])
    y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=y, value=1.0)
    res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)  # ERR:psum_tile_big_ok
    nisa.nc_matmul(dst=res, stationary=x, moving=y)  # ERR:matmul_n
    return a


@nki.jit
def matmul_across_banks(a, b):
    x = nl.load(a[:, 0:128])
    y = nl.load(a[:, 0:256])
    res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=res[:, 384:640], stationary=x, moving=y)  # ERR:matmul_bank
    return a


@nki.jit
def log_of_negatives(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.log(t))  # ERR:log_range
    return out


@nki.jit
def across_blocks(a, b):
    t = nl.zeros((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t)  # ERR:blocks
    return a
