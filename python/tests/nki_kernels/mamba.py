"""A fused Mamba-v1 selective-scan layer, written for birsim from the facts of AWS's "Fused
Mamba" tutorial (nki/guides/tutorials/fused_mamba.rst, the PyTorch reference
nki/examples/fused_mamba/mamba_torch.py):

    deltaA   = exp(delta[:, :, None, :] * A[None, :, :, None])          [batch, channels, state, seq]
    deltaB_u = delta[:, :, None, :] * B[:, None, :, :] * u[:, :, None, :]
    h[..., t] = deltaA[..., t] * h[..., t - 1] + deltaB_u[..., t]          (h[..., -1] = 0)
    out      = (C[:, None, :, :] * h).sum(state)                         [batch, channels, seq]

Layout as the tutorial chooses: channels on partitions (tiles of 128), seq_len on the free
dimension; exp(delta * A) as one activation with A's column as the per-partition scale; B and C
rows broadcast across partitions; the scan as nisa.tensor_tensor_scan (multiply, then add).
"""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def mamba_layer(delta, u, A, B, C):
    batch, channels, seq_len = delta.shape
    _, state_size = A.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((batch, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        for ct in nl.affine_range(channels // P):
            rows = slice(ct * P, (ct + 1) * P)
            d = nl.load(delta[b, rows, :])
            uu = nl.load(u[b, rows, :])
            a = nl.load(A[rows, :])
            du = nl.ndarray((P, seq_len), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=du, data1=d, data2=uu, op=nl.multiply)
            acc = nl.zeros((P, seq_len), dtype=nl.float32)
            for s in nl.sequential_range(state_size):
                # steps 1 and 2: exp(delta * A[:, s]) in one activation (scale = A's column)
                dA = nl.ndarray((P, seq_len), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=dA, op=nl.exp, data=d, scale=a[:, s:s + 1])
                # step 3: delta * u * B[s], B's row broadcast over the partitions
                b_row = nl.load(B[b, s:s + 1, :].broadcast(0, P))
                dBu = nl.ndarray((P, seq_len), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=dBu, data1=du, data2=b_row, op=nl.multiply)
                # step 4: h[t] = dA[t] * h[t-1] + dBu[t]
                h = nl.ndarray((P, seq_len), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor_scan(dst=h, data0=dA, data1=dBu, initial=0.0, op0=nl.multiply, op1=nl.add)
                # steps 5 and 6: C[s] * h, summed over the states
                c_row = nl.load(C[b, s:s + 1, :].broadcast(0, P))
                y = nl.ndarray((P, seq_len), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=y, data1=h, data2=c_row, op=nl.multiply)
                nisa.tensor_tensor(dst=acc, data1=acc, data2=y, op=nl.add)
            nl.store(out[b, rows, :], value=acc)
    return out
