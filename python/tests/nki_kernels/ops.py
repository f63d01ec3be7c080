"""Small kernels exercising one NKI call each (the op picked by a string argument), for the
per-call tests in test_nki_ops.py."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def binary_tiles(a_in, b_in, op_name):
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    b = nl.load(b_in)
    c = getattr(nl, op_name)(a, b, dtype=nl.float32)
    nl.store(out, value=c)
    return out


@nki.jit
def binary_column(a_in, col_in, op_name, column_first):
    """A (P, F) tile with a (P, 1) column: TensorScalarPtr."""
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    c = nl.load(col_in)
    f = getattr(nl, op_name)
    r = f(c, a) if column_first else f(a, c)
    nl.store(out, value=r)
    return out


@nki.jit
def binary_scalar(a_in, value, op_name, scalar_first):
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    f = getattr(nl, op_name)
    r = f(value, a) if scalar_first else f(a, value)
    nl.store(out, value=r)
    return out


@nki.jit
def unary(a_in, op_name):
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    nl.store(out, value=getattr(nl, op_name)(a))
    return out


@nki.jit
def reduce(a_in, op_name, axis):
    a = nl.load(a_in)
    r = getattr(nl, op_name)(a, axis=axis)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def activation_scaled(a_in, scale_in, bias_in):
    """nisa.activation with a (P, 1) scale tile and a (P, 1) bias tile; and an immediate scale."""
    P, F = a_in.shape
    out1 = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    s = nl.load(scale_in)
    b = nl.load(bias_in)
    r1 = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=r1, op=nl.tanh, data=a, bias=b, scale=s)
    r2 = nisa.activation(op=nl.exp, data=a, scale=0.5)
    nl.store(out1, value=r1)
    nl.store(out2, value=r2)
    return out1, out2


@nki.jit
def two_op_tensor_scalar(a_in, col_in):
    """(a - col) * 0.25 with col a (P, 1) tile, then max(..., 0) with reverse0."""
    P, F = a_in.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    c = nl.load(col_in)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=t, data=a, op0=nl.subtract, operand0=c, op1=nl.multiply, operand1=0.25)
    u = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.subtract, operand0=1.0, reverse0=True, op1=nl.maximum, operand1=0.0)
    nl.store(out, value=u)
    return out


@nki.jit
def stt(a_in, b_in):
    """scalar_tensor_tensor: (a * 2) + b."""
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    b = nl.load(b_in)
    r = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=r, data=a, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=b)
    nl.store(out, value=r)
    return out


@nki.jit
def iota_and_fill(dummy):
    out1 = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    out3 = nl.ndarray((64, 32), dtype=nl.int16, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.sbuf)
    nisa.iota(dst=t, pattern=[[1, 64]], offset=5, channel_multiplier=100)
    nl.store(out1, value=t)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    f = nisa.iota(2 * i_f - i_p, dtype=nl.float32)
    nl.store(out2, value=f)
    nl.store(out3, value=nl.full((64, 32), -7, dtype=nl.int16))
    return out1, out2, out3


@nki.jit
def vector_transpose(a_in):
    out = nl.ndarray((32, 32), dtype=a_in.dtype, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    t = nl.ndarray((32, 32), dtype=a_in.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=t, data=a, engine=nisa.engine.vector)
    nl.store(out, value=t)
    return out


@nki.jit
def blocked_tiles(a_in):
    """A (4, par_dim(128), 64) SBUF tensor: four 128 x 64 tiles side by side in each partition,
    loaded by block, doubled, stored back."""
    B, P, F = a_in.shape
    out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
    blocks = nl.ndarray((B, nl.par_dim(P), F), dtype=a_in.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(B):
        blocks[i] = nl.load(a_in[i])
    doubled = nl.zeros((B, nl.par_dim(P), F), dtype=a_in.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(B):
        nisa.tensor_scalar(dst=doubled[i], data=blocks[i], op0=nl.multiply, operand0=2.0)
    for i in nl.affine_range(B):
        nl.store(out[i], value=doubled[i])
    return out


@nki.jit
def cast_load_store(a_in):
    """float32 HBM -> bfloat16 tile (a DMA cast), back to float32 via a TensorCopy cast."""
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a_in, dtype=nl.bfloat16)
    f = nl.copy(t, dtype=nl.float32)
    nl.store(out, value=f)
    return out


@nki.jit
def uninitialised_read(a_in):
    out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.sbuf)
    u = nl.exp(t)  # reads t, never written
    nl.store(out, value=u)
    return out


@nki.jit
def causal_mask(s_in):
    """Keep scores where column <= row (nisa.affine_select with p - j >= 0), else -9984."""
    P, F = s_in.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.load(s_in)
    m = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.affine_select(dst=m, pattern=[[-1, F]], channel_multiplier=1, on_true_tile=s,
                       on_false_value=-9984.0, cmp_op=nl.greater_equal)
    nl.store(out, value=m)
    return out


@nki.jit
def predicated(a_in, b_in):
    """where(a > 0, a, b) with nisa.tensor_copy_predicated over a copy of b."""
    out = nl.ndarray(a_in.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    d = nl.load(b_in)
    pred = nl.greater(a, 0.0)
    nisa.tensor_copy_predicated(dst=d, src=a, predicate=pred)
    nl.store(out, value=d)
    return out


@nki.jit
def shuffle(a_in):
    """Each 32-partition quadrant rotated down by one partition; partition 5 of each quadrant
    keeps what dst held (zeros)."""
    out = nl.ndarray(a_in.shape, dtype=a_in.dtype, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    d = nl.zeros(a_in.shape, dtype=a_in.dtype)
    m = [(i - 1) % 32 for i in range(32)]
    m[5] = 255
    nisa.nc_stream_shuffle(dst=d, src=a, shuffle_mask=m)
    nl.store(out, value=d)
    return out


@nki.jit
def top8(a_in):
    P, F = a_in.shape
    vals_out = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    idx_out = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    rep_out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    v = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.max8(dst=v, src=a)
    i = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=i, data=a, vals=v)
    r = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.nc_match_replace8(dst=r, data=a, vals=v, imm=-1e9)
    nl.store(vals_out, value=v)
    nl.store(idx_out, value=i)
    nl.store(rep_out, value=r)
    return vals_out, idx_out, rep_out


@nki.jit
def exp_sum(a_in, m_in):
    """gen4's nisa.exponential: exp(a - m) and its row sums."""
    P, F = a_in.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    sums_out = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    m = nl.load(m_in)
    e = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    s = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.exponential(dst=e, src=a, max_value=m, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nl.store(out, value=e)
    nl.store(sums_out, value=s)
    return out, sums_out


@nki.jit
def scale_and_row_max(a_in):
    """nisa.tensor_scalar_reduce: dst = a * 0.5 (bfloat16), the row maxima of the fp32 products."""
    P, F = a_in.shape
    out = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    mx_out = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(a_in)
    d = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf)
    mx = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(dst=d, data=a, op0=nl.multiply, operand0=0.5, reduce_op=nl.maximum, reduce_res=mx)
    nl.store(out, value=d)
    nl.store(mx_out, value=mx)
    return out, mx_out
