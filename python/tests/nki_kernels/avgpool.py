"""2-D average pooling, tutorial style: a 5-D access-pattern view of the input tile whose two
innermost dims are the pool window, nl.sum over them, and a scale by 1/pool^2."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def avgpool2d(in_tensor, pool):
    C, H, W = in_tensor.shape
    Ho, Wo = H // pool, W // pool
    out_tensor = nl.ndarray((C, Ho, Wo), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    in_tile = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=in_tensor)
    windows = in_tile.ap([
        [H * W, C],
        [pool * W, Ho],
        [pool, Wo],
        [W, pool],
        [1, pool],
    ])
    sums = nl.sum(windows, axis=[3, 4])
    out_tile = nl.ndarray(sums.shape, dtype=sums.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=out_tile, data=sums, op0=nl.multiply, operand0=1.0 / (pool * pool))
    nisa.dma_copy(dst=out_tensor, src=out_tile)
    return out_tensor
