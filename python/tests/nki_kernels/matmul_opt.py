"""Matrix multiplication, the optimisation steps of the tutorial's style: operands hoisted out of
the inner loop into (tiles, par_dim, free) SBUF blocks, and a product computed block by block
(several M and N tiles per block, one PSUM tile per output tile) with the result written back
per block. Shapes: lhsT [K, M], rhs [K, N]; K, M multiples of 128, N a multiple of 512."""
import nki
import nki.isa as nisa
import nki.language as nl

TK, TM, TN = 128, 128, 512


@nki.jit
def matmul_hoisted(lhsT, rhs):
    """Each M-tile of lhsT loaded once (all its K-tiles), reused for every N-tile."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        lhs_tiles = nl.ndarray((K // TK, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(K // TK):
            nisa.dma_copy(dst=lhs_tiles[k], src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
        for n in nl.affine_range(N // TN):
            rhs_tiles = nl.ndarray((K // TK, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(K // TK):
                nisa.dma_copy(dst=rhs_tiles[k], src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                nisa.nc_matmul(dst=acc, stationary=lhs_tiles[k], moving=rhs_tiles[k])
            res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)
    return out


@nki.jit
def matmul_blocked(lhsT, rhs, block_m=2, block_n=2):
    """Blocks of `block_m` M-tiles and `block_n` N-tiles: both operand blocks loaded once per
    block pair, every output tile of the block accumulated in its own PSUM tile."""
    K, M = lhsT.shape
    _, N = rhs.shape
    BM, BN = TM * block_m, TN * block_n
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // BM):
        lhs_blk = nl.ndarray((block_m, K // TK, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(block_m):
            for k in nl.affine_range(K // TK):
                m0 = mb * BM + bm * TM
                nisa.dma_copy(dst=lhs_blk[bm, k], src=lhsT[k * TK:(k + 1) * TK, m0:m0 + TM])
        for nb in nl.affine_range(N // BN):
            rhs_blk = nl.ndarray((block_n, K // TK, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(block_n):
                for k in nl.affine_range(K // TK):
                    n0 = nb * BN + bn * TN
                    nisa.dma_copy(dst=rhs_blk[bn, k], src=rhs[k * TK:(k + 1) * TK, n0:n0 + TN])
            for bm in nl.affine_range(block_m):
                for bn in nl.affine_range(block_n):
                    acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TK):
                        nisa.nc_matmul(dst=acc, stationary=lhs_blk[bm, k], moving=rhs_blk[bn, k])
                    res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=acc)
                    m0, n0 = mb * BM + bm * TM, nb * BN + bn * TN
                    nisa.dma_copy(dst=out[m0:m0 + TM, n0:n0 + TN], src=res)
    return out
