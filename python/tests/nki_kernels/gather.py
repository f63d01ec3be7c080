"""Gathers, scatters and the selection / scan calls (birsim.nki's _gather module), written as
AWS's docs and tests write them."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def indirect_gather_kernel(data, indices):
    """AWS dma_copy's gather example: row p of the result is data[indices[p]]."""
    P, F = indices.shape[0], data.shape[1]
    output = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 1), dtype=indices.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    dst = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(
        dst=dst,
        src=data.ap(
            pattern=[[F, P], [1, F]],
            vector_offset=idx,
            indirect_dim=0,
        ),
    )
    nisa.dma_copy(dst=output, src=dst)
    return output


@nki.jit
def indirect_scatter_kernel(src_data, indices, output):
    """AWS dma_copy's scatter example: output[indices[p]] = src_data[p] (output is updated in
    place)."""
    P, F = src_data.shape
    src = nl.ndarray((P, F), dtype=src_data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=src_data)
    idx = nl.ndarray((P, 1), dtype=indices.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    nisa.dma_copy(
        dst=output.ap(
            pattern=[[F, P], [1, F]],
            vector_offset=idx,
            indirect_dim=0,
        ),
        src=src,
    )
    return output


@nki.jit
def gather_skip(data, indices, fill):
    """A gather with oob_mode.skip: rows whose index is out of range keep the fill."""
    P, F = indices.shape[0], data.shape[1]
    output = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.load(indices)
    dst = nl.load(fill)
    nisa.dma_copy(dst=dst, src=data.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0),
                  oob_mode=nisa.oob_mode.skip)
    nl.store(output, value=dst)
    return output


@nki.jit
def scatter_add(src_data, indices, output):
    """The older dma_copy(..., dst_rmw_op=np.add): output[indices[p]] += src_data[p]."""
    P, F = src_data.shape
    src = nl.load(src_data)
    idx = nl.load(indices)
    nisa.dma_copy(dst=output.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0), src=src,
                  dst_rmw_op=np.add)
    return output


@nki.jit
def vector_select_rows(table, indices):
    """table.vector_select(0, idx): a (P, A, B) gather of (A, B) blocks."""
    R, A, B = table.shape
    P = indices.shape[0]
    out = nl.ndarray((P, A, B), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.load(indices)
    t = nl.ndarray((P, A, B), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=table.vector_select(0, idx))
    nl.store(out, value=t)
    return out


@nki.jit
def example_indirect_load_1(data_tensor, idx_tensor):
    """AWS test_nki_nl_load_store_indirect.py, example 1 (the older API)."""
    out_tensor = nl.ndarray([64, 512], dtype=data_tensor.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(64)[:, None]
    i_f = nl.arange(512)[None, :]
    idx_tile = nl.load(idx_tensor[i_p])  # indices have to be in SBUF
    data_tile = nl.load(data_tensor[idx_tile[i_p, 0], i_f])
    nl.store(out_tensor, value=data_tile)
    return out_tensor


@nki.jit
def example_indirect_load_2(data_tensor):
    """AWS example 2: the indices made by iota."""
    out_tensor = nl.ndarray([64, 512], dtype=data_tensor.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(512)[None, :]
    idx_expr = 2 * nl.arange(64)[:, None]
    idx_tile = nisa.iota(idx_expr, dtype=np.int32)
    data_tile = nl.load(data_tensor[idx_tile, i_f])
    nl.store(out_tensor, value=data_tile)
    return out_tensor


@nki.jit
def example_indirect_save_1(in_tensor, idx_tensor, data_tensor):
    """AWS example 16: data_tensor[idx] = in_tensor (data_tensor is updated in place)."""
    data_tile = nl.load(in_tensor)
    i_p = nl.arange(64)[:, None]
    i_f = nl.arange(512)[None, :]
    idx_tile = nl.load(idx_tensor[i_p])  # indices have to be in SB
    nl.store(data_tensor[idx_tile[i_p, 0], i_f], value=data_tile[0:64, 0:512])
    return data_tensor


@nki.jit
def embedding_lookup(table, token_ids):
    """A tutorial-style embedding lookup: for every tile of 128 token ids, the rows of the
    embedding table they name, gathered by one indirect DMA."""
    V, D = table.shape
    (N,) = token_ids.shape
    out = nl.ndarray((N, D), dtype=table.dtype, buffer=nl.shared_hbm)
    ids = token_ids.reshape((N // 128, 128, 1))
    for t in nl.affine_range(N // 128):
        ids_tile = nl.load(ids[t])
        rows = nl.load(table[ids_tile, :])
        nl.store(out[t * 128:(t + 1) * 128, :], value=rows)
    return out


@nki.jit
def n_gather(data, indices):
    P, F = data.shape
    out = nl.ndarray(indices.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    d = nl.load(data)
    i = nl.load(indices)
    g = nl.ndarray(indices.shape, dtype=data.dtype, buffer=nl.sbuf)
    nisa.nc_n_gather(dst=g, data=d, indices=i)
    nl.store(out, value=g)
    return out


@nki.jit
def gather_flat(data, indices):
    out = nl.ndarray(indices.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    d = nl.load(data)
    i = nl.load(indices)
    nl.store(out, value=nl.gather_flattened(data=d, indices=i))
    return out


@nki.jit
def local_gather_kernel(src, index, num_valid):
    """AWS test_nki_isa_local_gather.py: every core gathers 4-element rows of its own 16
    partitions (index values are element offsets: index * 4)."""
    P, R, E = src.shape
    out = nl.ndarray((P, num_valid, E), dtype=src.dtype, buffer=nl.shared_hbm)
    s = nl.load(src)
    ix = nl.load(index)
    g = nl.ndarray((P, num_valid, E), dtype=src.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=g, src_buffer=s, index=ix, num_elem_per_idx=E, num_valid_indices=num_valid)
    nl.store(out, value=g)
    return out


@nki.jit
def where_kernel(cond, x, y):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.where(nl.load(cond), nl.load(x), nl.load(y)))
    return out


@nki.jit
def select_reduce_kernel(pred, on_true, on_false, reverse):
    P, F = on_true.shape
    out = nl.ndarray((P, F), dtype=on_true.dtype, buffer=nl.shared_hbm)
    mx = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nl.load(pred)
    t = nl.load(on_true)
    f = nl.load(on_false) if not isinstance(on_false, float) else on_false
    d = nl.ndarray((P, F), dtype=on_true.dtype, buffer=nl.sbuf)
    r = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=p, on_true=t, on_false=f, reduce_res=r,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=nl.maximum, reverse_pred=reverse)
    nl.store(out, value=d)
    nl.store(mx, value=r)
    return out, mx


@nki.jit
def range_select_kernel(x, bound0, bound1, range_start):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    mx = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    b0 = nl.load(bound0)
    b1 = nl.load(bound1)
    d = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.range_select(dst=d, on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=b0, bound1=b1,
                      reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=r, reduce_op=nl.maximum,
                      range_start=range_start, on_false_value=nl.fp32.min)
    nl.store(out, value=d)
    nl.store(mx, value=r)
    return out, mx


@nki.jit
def partition_reduce(x, op):
    P, A, B = x.shape
    out = nl.ndarray((1, A, B), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    r = nl.ndarray((1, A, B), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_partition_reduce(dst=r, op=op, data=t)
    nl.store(out, value=r)
    return out


@nki.jit
def cumulative(x, op1, imm0, imm1, chain):
    """tensor_scalar_cumulative; `chain` continues a second call with reduce_cmd.reduce."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    d = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    cmd = nisa.reduce_cmd.reset_reduce if imm1 is None else nisa.reduce_cmd.load_reduce
    nisa.tensor_scalar_cumulative(dst=d, src=t, op0=nl.add, op1=op1, imm0=imm0, imm1=imm1, reduce_cmd=cmd)
    nl.store(out, value=d)
    d2 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    if chain:
        nisa.tensor_scalar_cumulative(dst=d2, src=t, op0=nl.add, op1=op1, imm0=imm0, reduce_cmd=nisa.reduce_cmd.reduce)
    else:
        nisa.memset(dst=d2, value=0.0)
    nl.store(out2, value=d2)
    return out, out2


@nki.jit
def activate2_kernel(x, imm0, imm1):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    mx = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    d = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activate2(dst=d, op=nl.relu, data=t, imm0=imm0, imm1=imm1, op0=nl.multiply, op1=nl.subtract,
                   reduce_op=nl.maximum, reduce_res=r, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nl.store(out, value=d)
    nl.store(mx, value=r)
    return out, mx


@nki.jit
def nonzero(x, index_offset):
    P, F = x.shape
    out = nl.ndarray((P, F + 1), dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.load(x)
    d = nl.ndarray((P, F + 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=d, value=7)
    nisa.nonzero_with_count(dst=d, src=t, index_offset=index_offset, padding_val=-1)
    nl.store(out, value=d)
    return out


@nki.jit
def seq_bounds(ids):
    P, N = ids.shape
    out = nl.ndarray((P, 2, N), dtype=ids.dtype, buffer=nl.shared_hbm)
    t = nl.load(ids)
    d = nl.ndarray((P, 2, N), dtype=ids.dtype, buffer=nl.sbuf)
    nisa.sequence_bounds(dst=d, segment_ids=t)
    nl.store(out, value=d)
    return out


@nki.jit
def dma_transpose_kernel(x):
    """dst = np.transpose(x, axes) of an HBM tensor into SBUF, axes by rank."""
    axes = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[len(x.shape)]
    shape = tuple(x.shape[k] for k in axes)
    out = nl.ndarray(shape, dtype=x.dtype, buffer=nl.shared_hbm)
    d = nl.ndarray(shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=d, src=x, axes=axes)
    nisa.dma_copy(dst=out, src=d)
    return out


# --- errors (each at a marked line)


@nki.jit
def bad_index_dtype(data, indices):
    P, F = indices.shape[0], data.shape[1]
    idx = nl.load(indices)
    dst = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=dst, src=data.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0))  # ERR:idx_dtype
    return data


@nki.jit
def bad_hwdge(data, indices):
    P, F = indices.shape[0], data.shape[1]
    idx = nl.load(indices)
    dst = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=dst, src=data.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0),  # ERR:hwdge
                  dge_mode=nisa.dge_mode.hwdge)
    return data


@nki.jit
def bad_n_gather_dtype(data, indices):
    d = nl.load(data)
    i = nl.load(indices)
    g = nl.ndarray(indices.shape, dtype=data.dtype, buffer=nl.sbuf)
    nisa.nc_n_gather(dst=g, data=d, indices=i)  # ERR:n_gather_dtype
    return data


@nki.jit
def bad_local_gather_elems(src, index):
    s = nl.load(src)
    ix = nl.load(index)
    g = nl.ndarray((128, 64, 3), dtype=src.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=g, src_buffer=s, index=ix, num_elem_per_idx=3)  # ERR:elems
    return src


@nki.jit
def bad_range_select_fill(x, bound0, bound1):
    t = nl.load(x)
    b0 = nl.load(bound0)
    b1 = nl.load(bound1)
    d = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.range_select(dst=d, on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=b0,  # ERR:fill
                      bound1=b1, on_false_value=0.0)
    return x


@nki.jit
def bad_select_pred(pred, on_true):
    p = nl.load(pred)
    t = nl.load(on_true)
    d = nl.ndarray(on_true.shape, dtype=on_true.dtype, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=p, on_true=t, on_false=0.0)  # ERR:pred
    return on_true


@nki.jit
def bad_quantize(x):
    t = nl.load(x)
    nisa.quantize_mx(dst=t, src=t, dst_scale=t)  # ERR:mx
    return x


@nki.jit
def bad_vector_on_chip(x, indices):
    t = nl.load(x)
    idx = nl.load(indices)
    t.vector_select(0, idx)  # ERR:on_chip
    return x


@nki.jit
def gather_hbm_to_hbm(data, indices):
    """A gather straight into an HBM tensor (both sides of the DMA in HBM)."""
    P, F = indices.shape[0], data.shape[1]
    out = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.load(indices)
    nisa.dma_copy(dst=out, src=data.vector_select(0, idx))
    return out


@nki.jit
def select_only(pred, on_true):
    """select_reduce with the default reduce_cmd (idle) and no reduce_res: a plain select."""
    out = nl.ndarray(on_true.shape, dtype=on_true.dtype, buffer=nl.shared_hbm)
    p = nl.load(pred)
    t = nl.load(on_true)
    d = nl.ndarray(on_true.shape, dtype=on_true.dtype, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=p, on_true=t, on_false=2.5)
    nl.store(out, value=d)
    return out


@nki.jit
def gather_transpose(src_hbm, idx_hbm, skip):
    """AWS dma_transpose's indirect examples (1-D and 2-D indices)."""
    _, N = idx_hbm.shape
    P, F = 128, 128 * N
    output = nl.ndarray((P, F), dtype=src_hbm.dtype, buffer=nl.shared_hbm)
    idx_sb = nl.load(idx_hbm)
    dst_sb = nl.ndarray((P, F), dtype=src_hbm.dtype, buffer=nl.sbuf)
    nisa.memset(dst=dst_sb, value=0)
    src_ap = src_hbm.ap(
        pattern=[[P, F], [1, P]],
        vector_offset=idx_sb,
        indirect_dim=0,
    )
    nisa.dma_transpose(dst=dst_sb, src=src_ap, axes=(1, 0),
                       oob_mode=nisa.oob_mode.skip if skip else nisa.oob_mode.error)
    nisa.dma_copy(dst=output, src=dst_sb)
    return output


@nki.jit
def range_select_chain(x, y):
    """Two range_selects folding one running max (reset_reduce, then reduce into reduce_res)."""
    P, F = x.shape
    out = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    d = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.range_select(dst=d, on_true_tile=a, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=0.0, bound1=16.0,
                      reduce_cmd=nisa.reduce_cmd.reset_reduce, range_start=0)
    nisa.range_select(dst=d, on_true_tile=b, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=0.0, bound1=16.0,
                      reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=r, range_start=0)
    nl.store(out, value=r)
    return out


@nki.jit
def select_reduce_chain(pred, x, y):
    """Two select_reduce calls folding one running max (reset_reduce without reduce_res, then
    reduce into reduce_res), as AWS's reduce_res doc describes."""
    P, F = x.shape
    out = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nl.load(pred)
    a = nl.load(x)
    b = nl.load(y)
    d = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    d2 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=p, on_true=a, on_false=-100.0, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.select_reduce(dst=d2, predicate=p, on_true=b, on_false=-100.0, reduce_res=r,
                       reduce_cmd=nisa.reduce_cmd.reduce)
    nl.store(out, value=r)
    return out
