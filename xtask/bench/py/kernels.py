"""In-process NumPy / ml_dtypes peer timings for `cargo xtask bench` (the kernel rows).

usage: kernels.py REPS [--input FILE] [NAME...]   prints `NAME MS` lines (median of REPS after
one warm-up). Each case writes a freshly allocated result, as the Rust side writes a fresh
destination. FILE (raw little-endian fp32, 128 rows) is the data of the cases that need one (the
activation rows': the values birsim's row loads).
"""
import sys
import time

import ml_dtypes
import numpy as np


def median_ms(reps, f):
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append((time.perf_counter() - s) * 1e3)
    t.sort()
    return t[len(t) // 2]


def cases(act):
    n = 16 << 20
    bits = ((np.arange(n, dtype=np.uint64) * 2654435761) >> 7).astype(np.uint8)
    f32 = (np.arange(n, dtype=np.uint32) % 1000).astype(np.float32) * np.float32(0.5)
    tile = f32[: 128 * 65536].reshape(128, 65536)
    w, z, y, x = 128, 4, 64, 64
    src2 = np.arange(2 * w * z * y * x, dtype=np.float32).reshape(w, z, 2 * y, x)
    src = src2[:, :, :y, :].copy()
    a, b = np.float32(1.5), np.float32(0.25)
    bf16 = np.resize(bits, 2 * n).view(ml_dtypes.bfloat16)

    def axpb(dt):
        t = tile.astype(dt)

        def go():
            u = t.astype(np.float32)
            u *= a
            u += b
            return u.astype(dt)

        return go

    def axpb_f32():
        u = tile * a
        u += b
        return u

    cube = np.arange(128 * 64 * 64, dtype=np.float32).reshape(128, 64, 64)
    # The tiled Matmult program's inputs: A (K x M, stationary) and B (K x N, moving), each filled
    # with the bench's data from element 0; C = A.T @ B (float32 BLAS: its own summation order).
    mm_a = f32[: 1024 * 1024].reshape(1024, 1024).copy()
    mm_b = mm_a.copy()
    all_cases = {
        "transpose-210": lambda: cube.transpose(2, 1, 0).copy(),
        "transpose-021": lambda: cube.transpose(0, 2, 1).copy(),
        "transpose-102": lambda: cube.transpose(1, 0, 2).copy(),
        "copy-f32-128x65536": lambda: tile.copy(),
        "strided-y-step-2": lambda: np.ascontiguousarray(src2[:, :, ::2, :]),
        "strided-zy-swap": lambda: np.ascontiguousarray(src.transpose(0, 2, 1, 3)),
        "strided-yx-swap": lambda: np.ascontiguousarray(src.transpose(0, 1, 3, 2)),
        "strided-partition-transpose": lambda: np.ascontiguousarray(src.reshape(-1, w).T),
        "strided-x-step-2": lambda: np.ascontiguousarray(src2[:, :, :, ::2]),
        "axpb-float32": axpb_f32,
        "axpb-bfloat16": axpb(ml_dtypes.bfloat16),
        "axpb-float8_e4m3fn": axpb(ml_dtypes.float8_e4m3fn),
        "sum-free-axis": lambda: tile.sum(axis=1),
        "cast-f32-e4m3fn": lambda: f32.astype(ml_dtypes.float8_e4m3fn),
        "cast-f32-e5m2": lambda: f32.astype(ml_dtypes.float8_e5m2),
        "cast-e4m3fn-f32": lambda: bits.view(ml_dtypes.float8_e4m3fn).astype(np.float32),
        "cast-e5m2-f32": lambda: bits.view(ml_dtypes.float8_e5m2).astype(np.float32),
        "cast-f32-bf16": lambda: f32.astype(ml_dtypes.bfloat16),
        "cast-bf16-f32": lambda: bf16.astype(np.float32),
        "matmul-f32-1024": lambda: mm_a.T @ mm_b,
    }
    if act is not None:
        # Activation Exp as birsim's exact path: f64 exp of each fp32 value, rounded to fp32.
        all_cases["exp-f64"] = lambda: np.exp(act.astype(np.float64)).astype(np.float32)

        def bn_stats():
            # BNStats' six values per 512-element chunk: count, mean, variance * count of the
            # even-, then the odd-indexed elements (fp32 arithmetic, NumPy's own summation order).
            c = act.reshape(act.shape[0], -1, 512)
            out = []
            for h in (c[..., ::2], c[..., 1::2]):
                m = h.mean(axis=-1, dtype=np.float32)
                out += [np.full_like(m, h.shape[-1]), m, ((h - m[..., None]) ** 2).sum(axis=-1)]
            return np.stack(out, axis=-1).reshape(act.shape[0], -1)

        all_cases["bn-stats"] = bn_stats
        # Max: each row's eight largest values, descending.
        all_cases["max8"] = lambda: np.sort(np.partition(act, -8, axis=1)[:, -8:], axis=1)[:, ::-1].copy()
    return all_cases


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    want = sys.argv[2:]
    act = None
    if want[:1] == ["--input"]:
        act = np.fromfile(want[1], dtype="<f4").reshape(128, -1)
        want = want[2:]
    all_cases = cases(act)
    for name, f in all_cases.items():
        if want and name not in want:
            continue
        print(f"{name} {median_ms(reps, f):.6f}", flush=True)


if __name__ == "__main__":
    main()
