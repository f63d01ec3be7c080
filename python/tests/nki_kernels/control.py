"""Registers and dynamic control flow: nisa.register_*, nl.fori_loop, nl.while_loop,
nl.dynamic_range over a register bound (BIR RegisterMove / RegisterAlu / TensorLoad /
TensorSave, DynamicForLoop, DoWhile, CompareAndBranch), nisa.core_barrier."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def registers(v):
    """[7, v, v, v16] through register_alloc(7), register_load of v (int32 and int16 views),
    register_move and register_store."""
    out = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.sbuf)
    a = nisa.register_alloc(7)
    nisa.register_store(t[0:1, 0:1], a)
    b = nisa.register_alloc()
    vt = nl.load(v)
    nisa.register_load(b, vt[0:1, 0:1])
    nisa.register_store(t[0:1, 1:2], b)
    c = nisa.register_alloc()
    nisa.register_move(c, b)
    nisa.register_store(t[0:1, 2:3], c)
    h = nl.ndarray((1, 1), dtype=nl.int16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=h, src=vt[0:1, 1:2])
    nisa.register_load(c, h)
    nisa.register_store(t[0:1, 3:4], c)
    nl.store(out, t)
    return out


@nki.jit
def copy_rows(x, n, lower):
    """AWS's fori_loop example over rows: out[i] = x[i] for lower <= i < n (n, lower read
    at run time when lower is an array, else lower an int), the rest zero."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.zeros((R, C), dtype=x.dtype))
    nsb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=nsb, src=n)
    ub = nisa.register_alloc()
    nisa.register_load(ub, nsb)
    if isinstance(lower, int):
        lb = lower
    else:
        lsb = nl.load(lower)
        lb = nisa.register_alloc()
        nisa.register_load(lb, lsb)
    t = nl.ndarray((1, C), dtype=x.dtype, buffer=nl.sbuf)

    def body(i):
        nisa.dma_copy(dst=t, src=x.ap([[C, 1], [1, C]], scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out.ap([[C, 1], [1, C]], scalar_offset=i, indirect_dim=0), src=t)

    nl.fori_loop(lb, ub, body)
    return out


@nki.jit
def every_other_column(x, n):
    """out[:, j] = 2 x[:, j] for j in range(0, n, 2) (fori_loop with step 2, the column picked by
    .select on the free dim of an SBUF tile)."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    o = nl.zeros((P, F), dtype=x.dtype)
    r = nisa.register_alloc()
    nisa.register_load(r, nl.load(n))

    def body(j):
        col = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=col, data=xt.select(1, j), op0=nl.multiply, operand0=2.0)
        nisa.tensor_copy(dst=o.select(1, j), src=col)

    nl.fori_loop(0, r, body, step=2)
    nl.store(out, o)
    return out


@nki.jit
def sum_first_rows(x, n):
    """Σ x[i] over i < n with `for i in nl.dynamic_range(reg)` and nl.ds(i, 1)."""
    R, C = x.shape
    out = nl.ndarray((1, C), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((1, C), dtype=nl.float32)
    reg = nisa.register_alloc()
    nisa.register_load(reg, nl.load(n))
    for i in nl.dynamic_range(reg):
        row = nl.load(x[nl.ds(i, 1), :])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=row, op=nl.add)
    nl.store(out, acc)
    return out


@nki.jit
def nested(x, n, m):
    """out[i, j] = x[i, j] + 1 for i < n, j < m (a fori_loop inside a dynamic_range)."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.zeros((R, C), dtype=x.dtype))
    rn = nisa.register_alloc()
    nisa.register_load(rn, nl.load(n))
    rm = nisa.register_alloc()
    nisa.register_load(rm, nl.load(m))
    for i in nl.dynamic_range(rn):
        row = nl.load(x[nl.ds(i, 1), :])
        orow = nl.zeros((1, C), dtype=x.dtype)

        def body(j):
            nisa.tensor_scalar(dst=orow.select(1, j), data=row.select(1, j), op0=nl.add, operand0=1.0)

        nl.fori_loop(0, rm, body)
        nl.store(out[nl.ds(i, 1), :], orow)
    return out


@nki.jit
def count_down(count):
    """AWS's while_loop example: acc += val while the counter (decremented in the body) is
    non-zero; a zero counter runs no pass."""
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    steps = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    c = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=c, src=count)
    one = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=one, value=1)
    reg = nisa.register_alloc()
    nisa.register_load(reg, c)

    def body(r):
        nisa.tensor_scalar(dst=acc, data=acc, op0=nl.add, operand0=2.5)
        nisa.tensor_tensor(dst=c, data1=c, data2=one, op=nl.subtract)
        nisa.register_load(r, c)
        return r

    nl.while_loop(reg, body)
    s = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_store(s, reg)  # the loop took a copy: reg keeps its first value
    nl.store(steps, s)
    nl.store(out, acc)
    return out, steps


@nki.jit
def barrier(x):
    """core_barrier on a shared HBM tensor between two copies (synchronisation only)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    nisa.core_barrier(out, (0, 1))
    t = nl.load(out)
    nl.store(out, nl.multiply(t, 2.0))
    return out


@nki.jit
def register_as_bool():
    r = nisa.register_alloc(1)
    while r:  # ERR:reg_bool
        pass
    return None


@nki.jit
def register_as_int():
    r = nisa.register_alloc(1)
    return range(r)  # ERR:reg_int


@nki.jit
def too_many_registers():
    for _ in range(65):
        nisa.register_alloc(0)  # ERR:reg_many
    return None


@nki.jit
def fori_bad_step(x):
    r = nisa.register_alloc(3)
    nl.fori_loop(0, r, lambda i: None, step=0)  # ERR:bad_step
    return None


@nki.jit
def prefix_rows(x):
    """out[i] = x[0] + ... + x[i] over 128-row tiles, a running SBUF sum carried by
    nl.sequential_range (folds into a BIR Loop with loops="bir")."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, C), dtype=nl.float32)
    for i in nl.sequential_range(R // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
        nl.store(out[i * 128:(i + 1) * 128, :], value=acc)
    return out


@nki.jit
def squares_of_columns(x):
    """out[:, i] = x[:, i * i] * 2 (an offset that is not affine in i: the loop stays unrolled
    with loops="bir")."""
    P, F = x.shape
    n = int(F ** 0.5)
    out = nl.ndarray((P, n), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    o = nl.ndarray((P, n), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        nisa.tensor_scalar(dst=o[:, i:i + 1], data=xt[:, i * i:i * i + 1], op0=nl.multiply, operand0=2.0)
    nl.store(out, o)
    return out


@nki.jit
def tiles_kept_after_loop(x):
    """Tiles loaded in an affine_range loop, kept in a list and stored after it (fine unrolled;
    with loops="bir" the folded iterations' tiles do not exist, an NkiError)."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    kept = []
    for j in nl.affine_range(F // 128):
        kept.append(nl.multiply(nl.load(x[:, j * 128:(j + 1) * 128]), 2.0))
    for j in range(F // 128):
        nl.store(out[:, j * 128:(j + 1) * 128], value=kept[j])
    return out


@nki.jit
def halve_until_zero(v):
    """while r != 0: r = r >> 1 (the body returns another register), counting the passes in
    SBUF: the number of significant bits of v."""
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    x = nl.load(v)
    cnt = nl.zeros((1, 1), dtype=nl.int32)
    r = nisa.register_alloc()
    nisa.register_load(r, x)

    def body(cur):
        nisa.tensor_scalar(dst=x, data=x, op0=nl.right_shift, operand0=1)
        nisa.tensor_scalar(dst=cnt, data=cnt, op0=nl.add, operand0=1)
        nxt = nisa.register_alloc()
        nisa.register_load(nxt, x)
        return nxt

    nl.while_loop(r, body)
    nl.store(out, cnt)
    return out


@nki.jit
def many_loops(x, n):
    """40 fori_loops one after another (unrolled by Python): each loop's own registers are
    reused, so the 64-register file is enough. out = x + 40 on the first n columns."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    r = nisa.register_alloc()
    nisa.register_load(r, nl.load(n))
    for _ in range(40):
        nl.fori_loop(0, r, lambda j: nisa.tensor_scalar(dst=t.select(1, j), data=t.select(1, j), op0=nl.add,
                                                        operand0=1.0))
    nl.store(out, t)
    return out
