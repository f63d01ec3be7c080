"""Transposes: the tutorial's element-copy transpose of flattened 2-D rows (nl.ds views and
nisa.tensor_copy), and the Tensor Engine transpose of a tile (nl.transpose / nisa.nc_transpose)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose_rows(in_tensor, shape2d):
    out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    parts, _ = in_tensor.shape
    f1, f2 = shape2d
    in_tile = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=in_tensor)
    out_tile = nl.ndarray((parts, f1 * f2), dtype=in_tensor.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(f1):
        for j in nl.affine_range(f2):
            nisa.tensor_copy(dst=out_tile[:, nl.ds(j * f1 + i, 1)], src=in_tile[:, nl.ds(i * f2 + j, 1)])
    nisa.dma_copy(dst=out_tensor, src=out_tile)
    return out_tensor


@nki.jit
def transpose_pe(x_in):
    """nl.transpose into PSUM, then nl.copy back to SBUF."""
    rows, cols = x_in.shape
    out = nl.ndarray((cols, rows), dtype=x_in.dtype, buffer=nl.shared_hbm)
    x = nl.load(x_in)
    xt_psum = nl.transpose(x)
    xt = nl.copy(xt_psum)
    nl.store(out, value=xt)
    return out


@nki.jit
def transpose_isa(x_in):
    """nisa.nc_transpose on the Tensor Engine (dst in PSUM)."""
    rows, cols = x_in.shape
    out = nl.ndarray((cols, rows), dtype=x_in.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((rows, cols), dtype=x_in.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=x_in)
    t_ps = nl.ndarray((cols, rows), dtype=x_in.dtype, buffer=nl.psum)
    nisa.nc_transpose(dst=t_ps, data=x)
    t_sb = nl.ndarray((cols, rows), dtype=x_in.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t_sb, src=t_ps)
    nisa.dma_copy(dst=out, src=t_sb)
    return out


@nki.jit
def transpose_store_psum(x_in):
    """nl.store straight from the PSUM transpose (the older API copies it to SBUF first)."""
    rows, cols = x_in.shape
    out = nl.ndarray((cols, rows), dtype=x_in.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.transpose(nl.load(x_in)))
    return out
