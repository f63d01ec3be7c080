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
