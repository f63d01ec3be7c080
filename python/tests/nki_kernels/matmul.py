"""Matrix multiplication, tutorial style: a single tile with nl.matmul, a K-tiled product
accumulating in PSUM with `+=`, and a fully tiled M x N x K product on nisa.nc_matmul."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tile(lhsT, rhs):
    """[K, M]^T @ [K, N] for K, M <= 128, N <= 512."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    res_psum = nl.matmul(a, b, transpose_x=True)
    res = nl.copy(res_psum, dtype=out.dtype)
    nl.store(out, value=res)
    return out


@nki.jit
def matmul_no_transpose(lhs, rhs):
    """[M, K] @ [K, N]: nl.matmul transposes lhs on the Tensor Engine first."""
    M, K = lhs.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    res = nl.copy(nl.matmul(nl.load(lhs), nl.load(rhs)))
    nl.store(out, value=res)
    return out


@nki.jit
def matmul_k_tiled(lhsT, rhs):
    """K tiled by 128, accumulating into one PSUM tile with `+=`."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nl.matmul(a, b, transpose_x=True)
    res = nl.copy(acc, dtype=nl.float32)
    nl.store(out, value=res)
    return out


@nki.jit
def matmul_tiled(lhsT, rhs):
    """M, N and K tiled (128, 512, 128) on nisa.nc_matmul with explicit PSUM tiles."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TM, TN, TK = 128, 512, 128
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                a = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                nisa.dma_copy(dst=b, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                nisa.nc_matmul(dst=ps, stationary=a, moving=b, accumulate=(k > 0))
            res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=ps)
            nisa.dma_copy(dst=out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)
    return out


@nki.jit
def matmul_psum_blocks(lhsT, rhs):
    """Twelve [128, 512] products in one (12, par_dim(128), 512) PSUM tensor (24 KiB per
    partition, more than PSUM's 16 KiB): each block is its own allocation, live from its matmul
    to its copy out, so they fit."""
    K, M = lhsT.shape
    _, N = rhs.shape
    nb = N // 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    ps = nl.ndarray((nb, nl.par_dim(M), 512), dtype=nl.float32, buffer=nl.psum)
    for j in nl.affine_range(nb):
        b = nl.load(rhs[:, j * 512:(j + 1) * 512])
        nisa.nc_matmul(dst=ps[j], stationary=a, moving=b)
        res = nl.copy(ps[j])
        nl.store(out[:, j * 512:(j + 1) * 512], value=res)
    return out


@nki.jit
def matmul_assigned_blocks(lhsT, rhs, keep=False):
    """All of PSUM as one (8, par_dim(128), 512) tensor, every block filled by assigning a matmul
    result (`ps[j] = nisa.nc_matmul(...)`), all eight live together, then copied out. With
    `keep`, the kernel also holds each result in a variable and reads it after the
    assignment."""
    K, M = lhsT.shape
    _, N = rhs.shape
    nb = N // 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    ps = nl.ndarray((nb, nl.par_dim(M), 512), dtype=nl.float32, buffer=nl.psum)
    kept = []
    for j in nl.affine_range(nb):
        if keep:
            t = nisa.nc_matmul(stationary=a, moving=b[:, j * 512:(j + 1) * 512])
            ps[j] = t
            kept.append(nl.copy(t))
        else:
            ps[j] = nisa.nc_matmul(stationary=a, moving=b[:, j * 512:(j + 1) * 512])
    for j in nl.affine_range(nb):
        res = nl.copy(ps[j]) if not keep else nl.add(nl.copy(ps[j]), kept[j])
        nl.store(out[:, j * 512:(j + 1) * 512], value=res)
    return out



@nki.jit
def matmul_pe_tile(lhsT, rhs, position=(), size=()):
    """One nc_matmul of the whole operands, on a PE tile when `position` / `size` are given
    (AWS nc_matmul "Tiling mode": the tile does not change the math); N = rhs's width (up to 4096
    fp32 on NeuronCore-v4: the output spans PSUM banks)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    ps = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=a, moving=b, tile_position=position, tile_size=size)
    nl.store(out, value=nl.copy(ps))
    return out


@nki.jit
def matmul_double_row(st_in, mv_in):
    """fp8 double_row: stationary [128, 2, M], moving [128, 2, N], K = 256 split over the
    partitions and the size-2 first free dim (AWS nc_matmul "Layout")."""
    P, _, M = st_in.shape
    _, _, N = mv_in.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    st = nl.load(st_in)
    mv = nl.load(mv_in)
    ps = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=st, moving=mv, perf_mode=nisa.matmul_perf_mode.double_row)
    nl.store(out, value=nl.copy(ps))
    return out
