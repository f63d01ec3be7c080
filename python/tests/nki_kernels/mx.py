"""MX (microscaling) kernels: quantize_mx, nc_matmul_mx and the packed _x4 dtypes, in the shape
of AWS's MXFP matmul tutorial (nki/deep-dives/mxfp-matmul.rst): x4 data arriving from the host as
raw unsigned integers and viewed as x4 with `.ap(dtype=...)`, scales arriving packed (one row per
block of 8 partitions) and spread over the SBUF quadrants, PSUM results in bfloat16 or float32."""
import nki
import nki.isa as nisa
import nki.language as nl


def scales_to_quadrants(data_sb, scale_hbm):
    """SBUF scales for `data_sb` from packed (P // 8, F) HBM scales: rows 4q..4q+3 go to the first
    four partitions of quadrant q (a (P // 8, F) tile when P <= 32)."""
    P = data_sb.shape[0]
    rows, F = scale_hbm.shape
    if P <= 32:
        sb = nl.ndarray((rows, F), dtype=scale_hbm.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=sb, src=scale_hbm)
        return sb
    sb = nl.ndarray((P, F), dtype=scale_hbm.dtype, buffer=nl.sbuf)
    nisa.memset(dst=sb, value=0)
    for q in range(rows // 4):
        nisa.dma_copy(dst=sb[32 * q:32 * q + 4, :], src=scale_hbm[4 * q:4 * q + 4, :])
    return sb


def scales_from_quadrants(scale_sb, P, out):
    """The reverse: the first four partitions of each quadrant into packed HBM rows."""
    if P <= 32:
        nisa.dma_copy(dst=out, src=scale_sb[0:P // 8, :])
        return
    for q in range(P // 32):
        nisa.dma_copy(dst=out[4 * q:4 * q + 4, :], src=scale_sb[32 * q:32 * q + 4, :])


def mx_tiles(P, F, mx_dtype, scale_dtype=nl.uint8):
    """Quantized data (P, F // 4) and scales for an unquantized (P, F) tile: (P // 8, F // 4)
    when P <= 32, else (P, F // 4) spread over the quadrants."""
    data = nl.ndarray((P, F // 4), dtype=mx_dtype, buffer=nl.sbuf)
    scale = nl.ndarray((P // 8 if P <= 32 else P, F // 4), dtype=scale_dtype, buffer=nl.sbuf)
    return data, scale


@nki.jit(platform_target="trn3")
def quantize_kernel(x, mx_dtype, scale_dtype=nl.uint8, raw_data=False):
    """quantize_mx of an HBM (P, F) fp16 / bf16 tensor: returns (x4 data, packed scales). With
    raw_data the data goes out through a uint32 tensor viewed as x4 (the host sees the same
    containers either way)."""
    P, F = x.shape
    x_sb = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)
    data, scale = mx_tiles(P, F, mx_dtype, scale_dtype)
    nisa.quantize_mx(dst=data, src=x_sb, dst_scale=scale)
    scale_out = nl.ndarray((P // 8, F // 4), dtype=scale_dtype, buffer=nl.shared_hbm)
    scales_from_quadrants(scale, P, scale_out)
    if raw_data:
        data_out = nl.ndarray((P, F // 4), dtype=nl.uint32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=data_out.ap(pattern=[[F // 4, P], [1, F // 4]], offset=0, dtype=mx_dtype), src=data)
    else:
        data_out = nl.ndarray((P, F // 4), dtype=mx_dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=data_out, src=data)
    return data_out, scale_out


@nki.jit(platform_target="trn3")
def matmul_offline_kernel(st_data, st_scale, mv_data, mv_scale, st_dtype, mv_dtype, out_dtype=nl.bfloat16,
                          tile_position=None, tile_size=None):
    """nc_matmul_mx of host-quantized operands: data as raw uint32 (fp8) or uint8 (fp4, two
    values a byte) viewed as x4, packed scales spread over the quadrants (on a PE row tile when
    `tile_position` / `tile_size` are given)."""
    K, M = st_scale.shape[0] * 8, st_scale.shape[1]
    N = mv_scale.shape[1]
    st_x4 = st_data.ap(dtype=st_dtype, pattern=[[M, K], [1, M]], offset=0)
    mv_x4 = mv_data.ap(dtype=mv_dtype, pattern=[[N, K], [1, N]], offset=0)
    st_sb = nl.ndarray((K, M), dtype=st_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=st_sb, src=st_x4)
    mv_sb = nl.ndarray((K, N), dtype=mv_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mv_sb, src=mv_x4)
    st_s = scales_to_quadrants(st_sb, st_scale)
    mv_s = scales_to_quadrants(mv_sb, mv_scale)
    res = nl.ndarray((M, N), dtype=out_dtype, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=res, stationary=st_sb, moving=mv_sb, stationary_scale=st_s, moving_scale=mv_s,
                      tile_position=tile_position, tile_size=tile_size)
    res_sb = nl.ndarray((M, N), dtype=out_dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res_sb, src=res)
    out = nl.ndarray((M, N), dtype=out_dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res_sb)
    return out


@nki.jit(platform_target="trn3")
def matmul_view_kernel(st_data, st_scale, mv_data, mv_scale, mx_dtype):
    """The same with `.view(dtype)` in place of `.ap(dtype=...)` and a float32 PSUM result."""
    K, M = st_scale.shape[0] * 8, st_scale.shape[1]
    N = mv_scale.shape[1]
    st_sb = nl.ndarray((K, M), dtype=mx_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=st_sb, src=st_data.view(mx_dtype))
    mv_sb = nl.ndarray((K, N), dtype=mx_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mv_sb, src=mv_data.view(mx_dtype))
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=res, stationary=st_sb, moving=mv_sb, stationary_scale=scales_to_quadrants(st_sb, st_scale),
                      moving_scale=scales_to_quadrants(mv_sb, mv_scale))
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=_to_sbuf(res))
    return out


def _to_sbuf(t):
    sb = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=t)
    return sb


@nki.jit(platform_target="trn3")
def matmul_k_tiles_kernel(st_data, st_scale, mv_data, mv_scale, mx_dtype):
    """Two K tiles of 128 partitions accumulated into one float32 PSUM tile (accumulate=None:
    the first overwrites, the second adds); N = 1024 spans two PSUM banks (AWS: moving free size
    up to 4096 for a float32 dst)."""
    K, M = st_scale.shape[0] * 8, st_scale.shape[1]
    N = mv_scale.shape[1]
    st_x4 = st_data.ap(dtype=mx_dtype, pattern=[[M, K], [1, M]], offset=0)
    mv_x4 = mv_data.ap(dtype=mx_dtype, pattern=[[N, K], [1, N]], offset=0)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        st_sb = nl.ndarray((128, M), dtype=mx_dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=st_sb, src=st_x4[k * 128:(k + 1) * 128, :])
        mv_sb = nl.ndarray((128, N), dtype=mx_dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=mv_sb, src=mv_x4[k * 128:(k + 1) * 128, :])
        st_s = scales_to_quadrants(st_sb, st_scale[k * 16:(k + 1) * 16, :])
        mv_s = scales_to_quadrants(mv_sb, mv_scale[k * 16:(k + 1) * 16, :])
        nisa.nc_matmul_mx(dst=res, stationary=st_sb, moving=mv_sb, stationary_scale=st_s, moving_scale=mv_s)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=_to_sbuf(res))
    return out


@nki.jit(platform_target="trn3")
def quantize_matmul_kernel(st_data, st_scale, mv, st_dtype, mv_dtype):
    """The tutorial's on-device pipeline: the stationary operand quantized on the host, the
    moving one (bf16, already interleaved) quantized on the device, then nc_matmul_mx. Returns
    the bf16 result and the device's moving scales (packed)."""
    K, M = st_scale.shape[0] * 8, st_scale.shape[1]
    N = mv.shape[1] // 4
    st_sb = nl.ndarray((K, M), dtype=st_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=st_sb, src=st_data.ap(dtype=st_dtype, pattern=[[M, K], [1, M]], offset=0))
    st_s = scales_to_quadrants(st_sb, st_scale)
    mv_sb = nl.ndarray(mv.shape, dtype=mv.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mv_sb, src=mv)
    mv_x4, mv_s = mx_tiles(K, 4 * N, mv_dtype)
    nisa.quantize_mx(dst=mv_x4, src=mv_sb, dst_scale=mv_s)
    res = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=res, stationary=st_sb, moving=mv_x4, stationary_scale=st_s, moving_scale=mv_s)
    out = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=_to_sbuf(res))
    scales = nl.ndarray((K // 8, N), dtype=nl.uint8, buffer=nl.shared_hbm)
    scales_from_quadrants(mv_s, K, scales)
    return out, scales


@nki.jit(platform_target="trn3")
def quantize_both_packed_kernel(st, mv, mx_dtype):
    """Both operands quantized on the device, their scales packed into one tile: stationary's at
    offset 0 of each quadrant, moving's at offset 4 (the deep dive's "Packing Scale Values")."""
    K, M = st.shape[0], st.shape[1] // 4
    N = mv.shape[1] // 4
    st_sb = nl.ndarray(st.shape, dtype=st.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=st_sb, src=st)
    mv_sb = nl.ndarray(mv.shape, dtype=mv.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mv_sb, src=mv)
    st_x4 = nl.ndarray((K, M), dtype=mx_dtype, buffer=nl.sbuf)
    mv_x4 = nl.ndarray((K, N), dtype=mx_dtype, buffer=nl.sbuf)
    packed = nl.ndarray((K, N), dtype=nl.uint8, buffer=nl.sbuf)
    st_s = packed[0:, :M]
    mv_s = packed[4:, :]
    nisa.quantize_mx(dst=st_x4, src=st_sb, dst_scale=st_s)
    nisa.quantize_mx(dst=mv_x4, src=mv_sb, dst_scale=mv_s)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=res, stationary=st_x4, moving=mv_x4, stationary_scale=st_s, moving_scale=mv_s)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=_to_sbuf(res))
    return out


# ---------------------------------------------------------------------------------------------
# errors (each `# ERR:<name>` line is where the NkiError must point)


@nki.jit
def bad_generation(x):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    d, s = mx_tiles(x.shape[0], x.shape[1], nl.float8_e4m3fn_x4)
    nisa.quantize_mx(dst=d, src=t, dst_scale=s)  # ERR:gen
    return x


@nki.jit
def bad_matmul_generation(x):
    d = nl.ndarray((32, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s = nl.ndarray((4, 8), dtype=nl.uint8, buffer=nl.sbuf)
    r = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=r, stationary=d, moving=d, stationary_scale=s, moving_scale=s)  # ERR:mmgen
    return x


@nki.jit(platform_target="trn3")
def bad_quantize(x, mx_dtype=nl.float8_e4m3fn_x4, scale_rows=None, scale_cols=None, scale_at=0, dst_cols=None,
                 src_buffer=nl.sbuf):
    """quantize_mx with one thing wrong, chosen by the arguments."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=src_buffer)
    if src_buffer == nl.sbuf:
        nisa.dma_copy(dst=t, src=x)
    d = nl.ndarray((P, dst_cols or F // 4), dtype=mx_dtype, buffer=nl.sbuf)
    rows = scale_rows or (P // 8 if P <= 32 else P)
    s = nl.ndarray((min(128, rows + scale_at), scale_cols or F // 4), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=d, src=t, dst_scale=s[scale_at:, :])  # ERR:quantize
    return x


@nki.jit(platform_target="trn3")
def bad_matmul(x, st_dtype=nl.float8_e4m3fn_x4, K=128, M=128, N=512, mv_K=None, out_dtype=nl.float32,
               out_buffer=nl.psum, tile_size=None, st_scale_rows=None, tile_position=None):
    """nc_matmul_mx with one thing wrong, chosen by the arguments."""
    st = nl.ndarray((K, M), dtype=st_dtype, buffer=nl.sbuf)
    mv = nl.ndarray((mv_K or K, N), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    sts = nl.ndarray((st_scale_rows or K, M), dtype=nl.uint8, buffer=nl.sbuf)
    mvs = nl.ndarray((mv_K or K, N), dtype=nl.uint8, buffer=nl.sbuf)
    r = nl.ndarray((M, N), dtype=out_dtype, buffer=out_buffer)
    nisa.nc_matmul_mx(dst=r, stationary=st, moving=mv, stationary_scale=sts, moving_scale=mvs,  # ERR:matmul
                      tile_size=tile_size, tile_position=tile_position)
    return x


@nki.jit(platform_target="trn3")
def bad_x4_arithmetic(x):
    t = nl.ndarray((32, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap(dtype=nl.float8_e4m3fn_x4, pattern=[[8, 32], [1, 8]], offset=0))
    u = nl.ndarray((32, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=u, data1=t, data2=t, op=nl.add)  # ERR:arith
    return x


@nki.jit(platform_target="trn3")
def bad_x4_cast(x):
    t = nl.ndarray((32, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)  # ERR:cast
    return x


@nki.jit(platform_target="trn3")
def bad_two_dtypes(x):
    t = nl.ndarray((32, 8), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    u = nl.ndarray((32, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=x.ap(dtype=nl.float8_e4m3fn_x4, pattern=[[8, 32], [1, 8]], offset=0))  # ERR:twice
    return x


@nki.jit(platform_target="trn3")
def copy_x4_kernel(x, engine=None):
    """An x4 HBM tensor (a host array .view(nl.float8_e5m2_x4)) through SBUF and a tensor_copy:
    whole containers, whatever their lanes hold."""
    P, F = x.shape
    a = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    b = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=b, src=a, engine=engine)
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=b)
    return out
