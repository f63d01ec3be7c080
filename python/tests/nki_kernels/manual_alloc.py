"""Direct allocation: tiles the kernel places itself, with NKI 0.1's `nki.compiler` buffers
(`sbuf.mod_alloc`, `psum.mod_alloc`, `.alloc(func)`) and NKI 0.2's `nl.ndarray(address=...)`,
written as AWS's allocation tests and migration guide describe them."""
import numpy as np

import nki
import nki.compiler as ncc
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose_mod_alloc(a):
    """Blocks of 128 × 128 transposed on the Tensor Engine (a matmul against the identity), every
    tile of every iteration at the same addresses: inputs at SBUF byte 1024, the identity at 0,
    the PSUM product in bank 2, the copy at 2048."""
    N, M = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    ident = nl.shared_constant(np.identity(128, dtype=np.float32), dtype=a.dtype)
    for n0 in nl.affine_range(N // 128):
        for m0 in nl.affine_range(M // 128):
            x = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
            x[...] = nl.load(a[n0 * 128:(n0 + 1) * 128, m0 * 128:(m0 + 1) * 128])
            eye = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
            eye[...] = nl.load(ident)
            xt = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=2))
            xt[...] = nisa.nc_matmul(x, eye)
            y = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=2048))
            y[...] = nl.copy(xt)
            nl.store(out[m0 * 128:(m0 + 1) * 128, n0 * 128:(n0 + 1) * 128], value=y)
    return out


@nki.jit
def modulo_blocks(a):
    """Four blocks on two buffers (`num_free_tiles=(2,)`): block 2 takes block 0's bytes, block 3
    block 1's. Each block is loaded with its row band of `a`, blocks 0 and 1 first, then 2 and 3;
    then every block is stored: blocks 0 and 1 now read what 2 and 3 wrote, as on the device."""
    out = nl.ndarray((4, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((4, nl.par_dim(128), 64), dtype=a.dtype,
                   buffer=ncc.sbuf.mod_alloc(base_addr=512, num_free_tiles=(2,)))
    for i in range(4):
        t[i] = nl.load(a[i * 128:(i + 1) * 128, :])
    for i in range(4):
        nl.store(out[i], value=t[i])
    return out


@nki.jit
def blocks_by_function(a):
    """`ncc.sbuf.alloc(func)` with the kernel's own function: block i at byte 4096 − 1024·i."""

    def place(idx, pdim_size, fdim_size):
        return 0, 4096 - 1024 * idx[0]

    out = nl.ndarray((3, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((3, nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.alloc(place))
    for i in range(3):
        t[i] = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i], value=nl.multiply(t[i], 2.0))
    return out


@nki.jit
def address_tiles(a, b):
    """NKI 0.2's `address=(partition, byte)`: a at byte 0, b at 1024, the sum in PSUM bank 3
    (AWS's migration guide: `address=(0, bank_id * PSUM_BANK_SIZE)`)."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf, address=(0, 0))
    y = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf, address=(0, 1024))
    s = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    nisa.tensor_tensor(dst=s, data1=x, data2=y, op=nl.add)
    r = nl.copy(s)
    nl.store(out, value=r)
    return out


@nki.jit
def pinned_and_placed(a, b):
    """A tile pinned at byte 0 is first written late, while tiles birsim places are live: they
    must keep away from it (else the pinned load would overwrite them)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)                      # placed by birsim, live to the end
    y = nl.multiply(x, 3.0)             # placed by birsim
    p = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf, address=(0, 0))
    p[...] = nl.load(b)                 # pinned at 0, first used here
    z = nl.add(nl.add(x, y), p)         # a + 3a + b
    nl.store(out, value=z)
    return out


@nki.jit
def psum_off_bank(a):
    s = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum, address=(0, 1024))  # ERR:off_bank
    return a


@nki.jit
def odd_partition(a):
    x = nl.ndarray((64, 64), dtype=a.dtype, buffer=nl.sbuf, address=(5, 0))  # ERR:odd_partition
    return a


@nki.jit
def past_the_end(a):
    x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, address=(0, 1 << 20))  # ERR:past_the_end
    return a


@nki.jit
def hbm_address(a):
    x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm, address=(0, 0))  # ERR:hbm_address
    return a


@nki.jit
def bad_function(a):
    t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.alloc(lambda i, p, f: (0,)))  # ERR:bad_function
    t[0] = nl.load(a)
    return a
