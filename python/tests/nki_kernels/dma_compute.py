"""nisa.dma_compute kernels (birsim.nki's _dma_compute module), written the way AWS's
dma_compute docstring and NKI 0.3.0 migration guide describe the call: a plain sum of sources,
the scatter read-modify-write (dst in HBM with a vector_offset, one source the same view) and the
gather read-modify-write (dst in SBUF, one source in HBM with a vector_offset)."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def sum2(a, b, out_dtype):
    """out = a + b: a read straight from HBM, b from an SBUF tile; dst in SBUF."""
    P, F = a.shape
    b_sb = nl.ndarray((P, F), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_sb, src=b)
    acc = nl.ndarray((P, F), dtype=out_dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=acc, srcs=[a, b_sb], reduce_op=nl.add)
    out = nl.ndarray((P, F), dtype=out_dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def sum3(a, b, c, out_dtype):
    """out = a + b + c, every operand in HBM, scales given as 1.0."""
    out = nl.ndarray(a.shape, dtype=out_dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(out, [a, b, c], nl.add, scales=[1.0, 1.0, 1.0])
    return out


@nki.jit
def one_source(acc, a):
    """One source, as AWS's migration guide writes `dst += src`:
    `dma_compute(dst, [src], reduce_op=nl.add)`."""
    out = nl.ndarray(acc.shape, dtype=acc.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    nisa.dma_compute(dst=out, srcs=[a], reduce_op=nl.add)
    return out


@nki.jit
def one_source_scatter(table, src_data, indices):
    """The one-source read-modify-write: table[indices[p]] += src_data[p]."""
    P, F = src_data.shape
    src = nl.ndarray((P, F), dtype=src_data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=src_data)
    idx = nl.ndarray((P, 1), dtype=indices.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    nisa.dma_compute(dst=table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0), srcs=[src],
                     reduce_op=nl.add)
    return table


@nki.jit
def sum_older_order(a, b):
    """NKI 0.2.0's argument order dma_compute(dst, srcs, scales, reduce_op)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(out, [a, b], [1.0, 1.0], nl.add)
    return out


@nki.jit
def sum_reshaped(a, b):
    """Element counts match, shapes differ: a (P, F) plus b (P, F/2, 2) into a (P·F,) HBM tensor."""
    P, F = a.shape
    out = nl.ndarray((P * F,), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(dst=out, srcs=[a, b], reduce_op=nl.add)
    return out


@nki.jit
def accumulate_in_place(a, b):
    """acc = acc + x twice, acc an SBUF tile that is also a source."""
    P, F = a.shape
    acc = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=acc, src=a)
    for _ in nl.affine_range(2):
        nisa.dma_compute(dst=acc[:, :], srcs=[acc[:, :], b], reduce_op=nl.add)
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def scatter_rmw(table, indices, data, skip):
    """table[indices[p]] += data[p] (table updated in place)."""
    P, F = data.shape
    idx = nl.ndarray((P, 1), dtype=indices.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    d = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=d, src=data)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=rows, srcs=[rows, d], reduce_op=nl.add,
                     oob_mode=nisa.oob_mode.skip if skip else nisa.oob_mode.error)
    return table


@nki.jit
def gather_rmw(table, indices, init, skip):
    """acc = init; acc += table[indices[p]] (the migration guide's accumulation step)."""
    P, F = init.shape
    idx = nl.ndarray((P, 1), dtype=indices.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    acc = nl.ndarray((P, F), dtype=init.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=acc, src=init)
    nisa.dma_compute(
        dst=acc[:, :],
        srcs=[table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0), acc[:, :]],
        reduce_op=nl.add,
        unique_indices=True,
        oob_mode=nisa.oob_mode.skip if skip else nisa.oob_mode.error,
    )
    out = nl.ndarray((P, F), dtype=init.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


# --- errors (each at a marked line)


@nki.jit
def bad_reduce_op(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(dst=out, srcs=[a, b], reduce_op=nl.multiply)  # ERR:reduce_op
    return out


@nki.jit
def bad_scales(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(dst=out, srcs=[a, b], reduce_op=nl.add, scales=[1.0, 2.0])  # ERR:scales
    return out


@nki.jit
def bad_psum(a):
    P, F = a.shape
    ps = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.psum)
    nisa.dma_compute(dst=ps, srcs=[a], reduce_op=nl.add)  # ERR:psum
    return a


@nki.jit
def bad_skip_without_indices(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(dst=out, srcs=[a, b], reduce_op=nl.add, oob_mode=nisa.oob_mode.skip)  # ERR:skip
    return out


@nki.jit
def bad_sizes(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(dst=out, srcs=[a, b[0:1, :]], reduce_op=nl.add)  # ERR:sizes
    return out


@nki.jit
def bad_not_unique(table, indices, data):
    P, F = data.shape
    idx = nl.load(indices)
    d = nl.load(data)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=rows, srcs=[rows, d], reduce_op=nl.add, unique_indices=False)  # ERR:unique
    return table


@nki.jit
def bad_scatter_src_in_hbm(table, indices, data):
    """The scatter's data source in HBM (AWS: the other source is data in SBUF)."""
    P, F = data.shape
    idx = nl.load(indices)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=rows, srcs=[rows, data], reduce_op=nl.add)  # ERR:scatter_hbm
    return table


@nki.jit
def bad_gather_dst_in_hbm(table, indices, init):
    """An indirect source with dst in HBM (AWS: the gather's dst is in SBUF)."""
    P, F = init.shape
    idx = nl.load(indices)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=init, srcs=[rows, init], reduce_op=nl.add)  # ERR:gather_hbm
    return init


@nki.jit
def bad_gather_other_not_dst(table, indices, init):
    """The gather's second source must be dst itself."""
    P, F = init.shape
    idx = nl.load(indices)
    acc = nl.load(init)
    other = nl.load(init)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=acc, srcs=[rows, other], reduce_op=nl.add)  # ERR:gather_other
    out = nl.ndarray((P, F), dtype=init.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=acc)
    return out


@nki.jit
def bad_three_with_indices(table, indices, data):
    P, F = data.shape
    idx = nl.load(indices)
    d = nl.load(data)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=rows, srcs=[rows, d, d], reduce_op=nl.add)  # ERR:three
    return table


@nki.jit
def bad_int32_gather_skip(table, indices, init):
    P, F = init.shape
    idx = nl.load(indices)
    acc = nl.load(init)
    rows = table.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=acc, srcs=[rows, acc], reduce_op=nl.add, oob_mode=nisa.oob_mode.skip)  # ERR:int_skip
    out = nl.ndarray((P, F), dtype=init.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=acc)
    return out
