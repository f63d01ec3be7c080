"""Writes the three hand-worked `isa` cases (hand_*): words packed at the contract's byte
offsets (docs/isa.md "Word layouts"), expected bytes typed in from seed 004 §7 worked by hand.
Run: /work/main/.venv/bin/python conformance/isa/hand_cases.py"""
import json, os, struct
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE = {"profile": "device", "ic_oob": "zero-lanes", "bound_rule": "seed", "dup": "fault"}


def addr4(p, off, psum=0):
    # X3: SBUF partition << 18 / PSUM bit 25 | partition << 15 (re-facts §6), offset below
    return (1 << 25 | p << 15 | off) if psum else (p << 18 | off)


def tensor4(w, at, addr, steps, nums):
    struct.pack_into("<I4h4H", w, at, addr, *steps, *nums)


def case(name, words, state, images, expect, expected, note):
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "state"), exist_ok=True)
    with open(os.path.join(d, "words.bin"), "wb") as f:
        f.write(b"".join(bytes(w) for w in words))
    with open(os.path.join(d, "state", "STATE.json"), "w") as f:
        json.dump(state, f, indent=1)
    for fn, a in images.items():
        np.save(os.path.join(d, "state", fn), a)
    with open(os.path.join(d, "expect"), "w") as f:
        f.write(expect)
    if expected:
        os.makedirs(os.path.join(d, "expected"), exist_ok=True)
        for fn, a in expected.items():
            np.save(os.path.join(d, "expected", fn), a)
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(note + "\n")


def f32(v):
    return np.array(v, dtype="<f4").view(np.uint8)


# 1. GATHER in two Pool_Buffer windows (the NKI lowering of one nc_n_gather over 8 elements):
# load [1,2,3,4] (start 0, mask 3), gather IMMEDIATE_WRITE 0; load [5,6,7,8] (start 4), gather
# SKIP_WRITE. Indices [7,0,4,9,3,5] -> [8,1,5,0,4,6] (9 is in neither window: 0 from the first).
sb = np.zeros((128, 1056), np.uint8)
sb[0, 0:24] = np.array([7, 0, 4, 9, 3, 5], "<u4").view(np.uint8)
sb[0, 256:280] = f32([-1.0] * 6)
sb[0, 1024:1056] = f32([1, 2, 3, 4, 5, 6, 7, 8])
words = []
for start, off, skip in [(0, 1024, 0), (4, 1040, 1)]:
    load = bytearray(64)
    load[0] = 0x67
    tensor4(load, 12, addr4(0, off), (1, 0, 0, 0), (4, 1, 1, 1))
    load[32], load[34] = 0x0A, 1
    struct.pack_into("<H", load, 36, 3)
    struct.pack_into("<I", load, 40, start)
    g = bytearray(64)
    g[0] = 0x68
    tensor4(g, 12, addr4(0, 0), (1, 0, 0, 0), (6, 1, 1, 1))
    g[32], g[33], g[34], g[36], g[37] = 0x09, 0x0A, 1, skip, skip
    tensor4(g, 44, addr4(0, 256), (1, 0, 0, 0), (6, 1, 1, 1))
    words += [load, g]
want = sb.copy()
want[0, 256:280] = f32([8, 1, 5, 0, 4, 6])
case("hand_gather_two_window", words, {"gen": "v2", "options": PRELUDE, "sbuf": "sbuf.npy", "pool_buffer": None},
     {"sbuf.npy": sb}, "choice: X1\nchoice: X2\nchoice: X3\nchoice: X6\nchoice: X11\nok\n", {"sbuf.npy": want},
     "Hand-worked (seed 004 §7a): two POOL_BUFFER_LOAD/GATHER windows; result bytes typed in hand_cases.py.")

# 2. INDIRECT_COPY, 16 channels of uint8, E = 2, 3 indices per core (column-major: partitions
# 0,1,2 element 0 = [2, 0, 5]), src_buffer_size 11: rows [4,5], [0,1], [10, 11->0 (zero-lanes)].
sb = np.zeros((128, 1032), np.uint8)
for q in range(16):
    sb[q, 512:528] = (q * 16 + np.arange(16)) % 256
    sb[q, 1024:1032] = 0xEE
sb[0:3, 0:2] = np.array([[2, 0], [0, 0], [5, 0]], np.uint8)
ic = bytearray(64)
ic[0] = 0xe7
struct.pack_into("<IIH", ic, 12, 0x20 << 24 | addr4(0, 0), addr4(0, 512), 6)
ic[32], ic[33], ic[34], ic[35] = 0x03, 0x03, 16, 2
struct.pack_into("<H", ic, 38, 11)
tensor4(ic, 44, addr4(0, 1024), (1, 0, 0, 0), (6, 1, 1, 1))
want = sb.copy()
for q in range(16):
    b = q * 16
    want[q, 1024:1030] = [b + 4, b + 5, b + 0, b + 1, b + 10, 0]
case("hand_ic_zero_lanes", [ic], {"gen": "v2", "options": PRELUDE, "sbuf": "sbuf.npy"}, {"sbuf.npy": sb},
     "choice: X1\nchoice: X2\nchoice: X3\nchoice: X6\nchoice: X8\nchoice: X19\nchoice: X20\nok\n", {"sbuf.npy": want},
     "Hand-worked (seed 004 §5/§7b): one INDIRECT_COPY, the last row half past src_buffer_size (zero-lanes).")

# 3. DMA_INDIRECT scatter of 3 rows to DRAM indices [2, 0, 2] without non_unique_dst_idx:
# fault duplicate-index (X22), nothing written.
sb = np.zeros((128, 32), np.uint8)
sb[0, 0:12] = np.array([2, 0, 2], "<u4").view(np.uint8)
sb[1, 0:24] = f32([1, 2, 3, 4, 5, 6])
d = bytearray(64)
d[0], d[14], d[15] = 0xbb, 128, 1  # flags: DST_INDIRECTION
struct.pack_into("<QiHH", d, 16, 1 << 55 | addr4(1, 0), 1, 3, 8)
struct.pack_into("<QiHH", d, 32, 0x100000, 1, 3, 8)
struct.pack_into("<II", d, 48, addr4(0, 0), addr4(0, 0))
d[56], d[57] = 0x0A, 0x0A
case("hand_dma_scatter_dup_fault", [d],
     {"gen": "v2", "options": PRELUDE, "sbuf": "sbuf.npy", "dram": [{"name": "table", "base": "0x100000", "file": "table.npy"}]},
     {"sbuf.npy": sb, "table.npy": np.zeros(32, np.uint8)},
     "choice: X1\nchoice: X3\nchoice: X4\nchoice: X5\nchoice: X22\nfault duplicate-index\n", None,
     "Hand-worked (seed 004 §7c): a scatter hitting row 2 twice without non_unique_dst_idx.")
