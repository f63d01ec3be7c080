"""The NumPy side of `cargo xtask bench`'s end-to-end rows, run as a fresh process (interpreter
start-up and the NumPy import are included, as `birsim run`'s process start is on its side).

usage: e2e.py MODE IN.npy OUT.npy
  chain-float32   20 chained steps on a [128, 65536] tile: even steps t = t*0.5 + 0.25 (two fp32
                  roundings, TensorScalar mult/add), odd steps t = t + t (TensorTensor add)
  chain-bfloat16  the same with the tile in bfloat16: every step computes in fp32 and narrows to
                  bfloat16 (ml_dtypes, round to nearest even), as the simulator does
  tiny N          N one-element steps alternating between two (1, 1) arrays: b = a + 1
  reduce          y = x.sum(axis=1, keepdims=True) in fp32 (NumPy's pairwise sum: not in order)
  scale           y = x * 2 (one TensorScalar), any size
  noop            nothing (the process floor: interpreter start-up and the NumPy import)
Writes OUT.npy as the simulator writes it (bfloat16 as its raw uint16 bits) and prints
`peak_kib N` on stderr: VmHWM from /proc/self/status, this process image's own peak. (getrusage's
ru_maxrss is not used: Linux carries the pre-exec address space's peak across exec, so a child
spawned by a big parent reports the parent's size.)
"""
import resource
import sys

import numpy as np


def chain(t, narrow):
    for k in range(20):
        if narrow is None:  # fp32: in place, no copies
            if k % 2 == 0:
                t *= np.float32(0.5)
                t += np.float32(0.25)
            else:
                t += t
            continue
        u = t.astype(np.float32)
        if k % 2 == 0:
            u *= np.float32(0.5)
            u += np.float32(0.25)
        else:
            u += u
        t = narrow(u)
    return t


def peak_kib():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main():
    mode = sys.argv[1]
    if mode == "noop":
        return
    src, dst = sys.argv[2], sys.argv[3]
    x = np.load(src)
    if mode == "chain-float32":
        y = chain(x, None)
    elif mode == "chain-bfloat16":
        import ml_dtypes

        bf = ml_dtypes.bfloat16
        y = chain(x.view(bf), lambda u: u.astype(bf)).view(np.uint16)
    elif mode == "tiny":
        n = int(sys.argv[4])
        a, b = x.copy(), np.empty_like(x)
        one = np.float32(1.0)
        for _ in range(n):
            np.add(a, one, out=b)
            a, b = b, a
        y = a
    elif mode == "reduce":
        y = x.sum(axis=1, keepdims=True, dtype=np.float32)
    elif mode == "scale":
        y = x * np.float32(2.0)
    else:
        sys.exit(f"e2e.py: unknown mode {mode}")
    np.save(dst, y)
    print(f"peak_kib {peak_kib()}", file=sys.stderr)


if __name__ == "__main__":
    main()
