"""Row softmax over the free axis, twice: with nki.language calls (max, subtract of a (P, 1)
column, exp, sum, reciprocal, multiply), and with nki.isa calls (tensor_reduce, activation with a
per-partition bias and the accumulator add-reduce, tensor_scalar)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_nl(x_in):
    out = nl.ndarray(x_in.shape, dtype=x_in.dtype, buffer=nl.shared_hbm)
    rows, cols = x_in.shape
    for i in nl.affine_range(rows // 128):
        x = nl.load(x_in[i * 128:(i + 1) * 128, :])
        row_max = nl.max(x, axis=1)
        shifted = nl.subtract(x, row_max)
        e = nl.exp(shifted)
        total = nl.sum(e, axis=1)
        inv = nl.reciprocal(total)
        y = nl.multiply(e, inv)
        nl.store(out[i * 128:(i + 1) * 128, :], value=y)
    return out


@nki.jit
def softmax_isa(x_in):
    out = nl.ndarray(x_in.shape, dtype=x_in.dtype, buffer=nl.shared_hbm)
    P, F = x_in.shape
    x = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=x_in)
    neg_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x, axis=(1,), negate=True)
    e = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    sums = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=x, bias=neg_max, scale=1.0,
                    reduce_op=nl.add, reduce_res=sums, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=sums)
    y = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=y)
    return out
