"""Single-tile attention in the style of the attention tutorial's first version: nki.language
calls only (matmul of PSUM results, softmax along the free axis, a Tensor Engine transpose), and
a variant that transposes with the kernel's own identity matrix (nl.shared_identity_matrix)."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def attention_tile(q, k, v):
    """softmax(q.T @ k) @ v.T for q, k, v of shape (d_head, seqlen) = (128, 128)."""
    d, s = q.shape
    out = nl.ndarray((s, d), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb = nl.load(q)
    k_sb = nl.load(k)
    v_sb = nl.load(v)
    qk = nl.matmul(q_sb, k_sb, transpose_x=True)
    row_max = nl.max(qk, axis=1)
    e = nl.exp(nl.subtract(qk, row_max))
    total = nl.sum(e, axis=1)
    scores = nl.divide(e, total)
    v_t = nl.transpose(v_sb)
    res = nl.matmul(scores, v_t, transpose_x=False)
    nl.store(out, value=res)
    return out


@nki.jit
def transpose_with_identity(x):
    """x.T through nisa.nc_matmul(x, identity, is_transpose=True), the identity a shared
    constant loaded from HBM."""
    P, F = x.shape
    out = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.shared_hbm)
    eye_hbm = nl.shared_identity_matrix(P, dtype=x.dtype)
    eye = nl.load(eye_hbm)
    xt = nisa.nc_matmul(nl.load(x), eye, is_transpose=True)
    nl.store(out, value=xt)
    return out


@nki.jit
def attention_fwd(q, k, v):
    """softmax(q.T @ k) @ v.T for q, k, v of shape (d_head, seqlen) = (128, S), S a multiple of
    128 up to 512, one 128-row query tile at a time on the current nki.isa API: the scores in one
    PSUM bank, exp(x - rowmax) on the Scalar Engine with the row sums in its accumulator, the
    probabilities and v transposed per 128-key block on the Tensor Engine, the product accumulated
    over the key blocks in PSUM, then scaled by 1 / rowsum."""
    d, s = q.shape
    out = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.shared_hbm)
    blocks = s // 128
    q_sb = nl.ndarray((d, s), dtype=q.dtype, buffer=nl.sbuf)
    k_sb = nl.ndarray((d, s), dtype=k.dtype, buffer=nl.sbuf)
    v_sb = nl.ndarray((d, s), dtype=v.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=q_sb, src=q)
    nisa.dma_copy(dst=k_sb, src=k)
    nisa.dma_copy(dst=v_sb, src=v)
    # v.T per key block: (keys, d)
    v_t = nl.ndarray((blocks, nl.par_dim(128), d), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(blocks):
        v_ps = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=v_ps, data=v_sb[:, j * 128:(j + 1) * 128])
        nisa.tensor_copy(dst=v_t[j], src=v_ps)
    for i in nl.affine_range(blocks):
        qk = nl.ndarray((128, s), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=qk, stationary=q_sb[:, i * 128:(i + 1) * 128], moving=k_sb)
        row_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=row_max, op=nl.maximum, data=qk, axis=1)
        neg_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=neg_max, data=row_max, op0=nl.multiply, operand0=-1.0)
        probs = nl.ndarray((128, s), dtype=nl.float32, buffer=nl.sbuf)
        row_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=probs, op=nl.exp, data=qk, bias=neg_max, scale=1.0, reduce_op=nl.add,
                        reduce_res=row_sum, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        acc = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(blocks):
            p_ps = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=p_ps, data=probs[:, j * 128:(j + 1) * 128])
            p_t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=p_t, src=p_ps)
            nisa.nc_matmul(dst=acc, stationary=p_t, moving=v_t[j])
        inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=row_sum)
        res = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=acc, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=res)
    return out


@nki.jit
def attention_fused(q, k, v):
    """The attention tutorial's fused form (its fourth version's structure) on the older
    return-value API: per 128-query tile, the scores against all S keys as
    S/512 blocks of one PSUM bank each (`qk[j] = nisa.nc_matmul(...)`; at S = 4096 that is all 8
    banks at once), row max over the blocks, exp(x − max), row sums, 1/sum, the probabilities
    transposed per 128-key block and multiplied by v.T accumulated in PSUM."""
    d, s = q.shape
    out = nl.ndarray((s, d), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb = nl.load(q)
    k_sb = nl.load(k)
    v_sb = nl.load(v)
    kb = s // 128
    v_t = nl.ndarray((nl.par_dim(128), kb, d), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(kb):
        v_t[:, j, :] = nisa.tensor_copy(nisa.nc_transpose(v_sb[:, nl.ds(j * 128, 128)]), dtype=nl.float32)
    for i in nl.affine_range(s // 128):
        qk = nl.ndarray((s // 512, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(s // 512):
            qk[j, :, :] = nisa.nc_matmul(stationary=q_sb[:, nl.ds(i * 128, 128)], moving=k_sb[:, nl.ds(j * 512, 512)])
        part_max = nl.ndarray((nl.par_dim(128), s // 512), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(s // 512):
            part_max[:, j] = nisa.tensor_reduce(op=nl.max, data=qk[j], axis=1)
        row_max = nisa.tensor_reduce(op=nl.max, data=part_max, axis=1)
        e = nl.ndarray((nl.par_dim(128), s), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(s // 512):
            shifted = nisa.tensor_scalar(data=qk[j], op0=nl.subtract, operand0=row_max, engine=nisa.vector_engine)
            e[:, nl.ds(j * 512, 512)] = nisa.activation(op=nl.exp, data=shifted)
        total = nisa.tensor_reduce(op=nl.add, data=e, axis=1)
        inv = nisa.reciprocal(data=total)
        p = nisa.tensor_scalar(data=e, op0=nl.multiply, operand0=inv, engine=nisa.vector_engine)
        p_t = nl.ndarray((nl.par_dim(128), kb, 128), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(kb):
            p_t[:, j, :] = nisa.tensor_copy(nisa.nc_transpose(p[:, nl.ds(j * 128, 128)]), dtype=nl.float32)
        acc = nl.zeros((128, d), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(kb):
            acc += nisa.nc_matmul(stationary=p_t[:, j, :], moving=v_t[:, j, :])
        res = nisa.tensor_copy(acc)
        nl.store(out[nl.ds(i * 128, 128), :], value=res)
    return out
