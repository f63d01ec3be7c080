"""Random numbers: nl.rand / nl.random_seed / nl.dropout and nisa.rng / rand2 / dropout /
set_rng_seed / rand_set_state / rand_get_state (birsim's Xorwow generators, fidelity R1-R4)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rand_twice(seed):
    """AWS's nl.random_seed example: the same seed gives the same values (a, b), another
    draw after them (c) continues the sequence."""
    a_out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    b_out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    c_out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.load(seed)
    nl.random_seed(s)
    a = nl.rand((128, 64), dtype=nl.float32)
    nl.random_seed(s)
    b = nl.rand((128, 64), dtype=nl.float32)
    c = nl.rand((128, 64), dtype=nl.float32)
    nl.store(a_out, a)
    nl.store(b_out, b)
    nl.store(c_out, c)
    return a_out, b_out, c_out


@nki.jit
def rng_low_bits(seed, engine_name):
    """The same draws written as uint32, uint16 and uint8 (reseeded before each)."""
    eng = nisa.engine.gpsimd if engine_name == "gpsimd" else nisa.engine.vector
    P, F = 32, 48
    outs = []
    s = nl.load(seed)
    for dt in (nl.uint32, nl.uint16, nl.uint8, nl.int32):
        o = nl.ndarray((P, F), dtype=dt, buffer=nl.shared_hbm)
        t = nl.ndarray((P, F), dtype=dt, buffer=nl.sbuf)
        nisa.set_rng_seed(s)
        if engine_name == "gpsimd":
            st = nl.ndarray((P, 6), dtype=nl.uint32, buffer=nl.sbuf)
            nisa.iota(st, [[1, 6]], offset=12345, channel_multiplier=6)
            nisa.rand_set_state(st, engine=eng)
        nisa.rng(t, engine=eng)
        nl.store(o, t)
        outs.append(o)
    return tuple(outs)


@nki.jit
def uniform(lo, hi):
    """nisa.rand2 with scalar bounds, and with one bound per partition."""
    P, F = 64, 96
    o1 = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.rand2(t, -2.0, 3.0)
    nl.store(o1, t)
    lo_t = nl.load(lo)
    hi_t = nl.load(hi)
    u = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.rand2(dst=u, min=lo_t, max=hi_t)
    nl.store(o2, u)
    return o1, o2


@nki.jit
def dropout_mask(x, seed, prob):
    """nisa.dropout of ones and of x from the same seed: the first shows which elements the
    second drops."""
    P, F = x.shape
    m_out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    y_out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.load(seed)
    xt = nl.load(x)
    ones = nl.ones((P, F), dtype=x.dtype)
    m = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.set_rng_seed(s)
    nisa.dropout(m, ones, prob)
    nisa.set_rng_seed(s)
    nisa.dropout(dst=y, data=xt, prob=prob)
    nl.store(m_out, m)
    nl.store(y_out, y)
    return m_out, y_out


@nki.jit
def dropout_per_partition(x, probs):
    """nisa.dropout with one drop probability per partition (a (P, 1) tile)."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    p = nl.load(probs)
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dropout(y, xt, p)
    nl.store(out, y)
    return out


@nki.jit
def nl_dropout(x, seed, rate):
    """nl.dropout twice from one seed (the same elements drop), the second cast to bfloat16."""
    P, F = x.shape
    o1 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    o2 = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    s = nl.load(seed)
    xt = nl.load(x)
    nl.random_seed(s)
    nl.store(o1, nl.dropout(xt, rate))
    nl.random_seed(s)
    nl.store(o2, nl.dropout(xt, rate, dtype=nl.bfloat16))
    return o1, o2


@nki.jit
def state_round_trip(state, engine_name):
    """rand_set_state then rand_get_state (the words come back), a draw, the state restored
    and the same draw again."""
    eng = nisa.engine.gpsimd if engine_name == "gpsimd" else nisa.engine.vector
    P, W = state.shape
    got = nl.ndarray((P, W), dtype=nl.uint32, buffer=nl.shared_hbm)
    d1 = nl.ndarray((P, 40), dtype=nl.uint32, buffer=nl.shared_hbm)
    d2 = nl.ndarray((P, 40), dtype=nl.uint32, buffer=nl.shared_hbm)
    st = nl.load(state)
    nisa.rand_set_state(st, engine=eng)
    g = nl.ndarray((P, W), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.rand_get_state(g, engine=eng)
    nl.store(got, g)
    a = nl.ndarray((P, 40), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.rng(a, engine=eng)
    nl.store(d1, a)
    nisa.rand_set_state(src_seeds=st, engine=eng)
    b = nl.ndarray((P, 40), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.rng(dst=b, engine=eng)
    nl.store(d2, b)
    return got, d1, d2


@nki.jit
def rand2_on_gen3():
    t = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.rand2(t, 0.0, 1.0)  # ERR:rand2_gen
    return None


@nki.jit
def rng_float_dst():
    t = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.rng(t)  # ERR:rng_float
    return None


@nki.jit
def state_wrong_words():
    t = nl.ndarray((8, 7), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.rand_get_state(t)  # ERR:state_words
    return None


@nki.jit
def legacy_dropout(x):
    """The older nisa.dropout(data, prob) returning a new tile: prob 0 keeps, 1 drops all."""
    P, F = x.shape
    keep = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    drop = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    nl.store(keep, nisa.dropout(xt, 0.0))
    nl.store(drop, nisa.dropout(xt, prob=1.0))
    return keep, drop
