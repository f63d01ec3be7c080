"""Runtime offsets: views moved by an index read from a one-element tile when the instruction
runs (nl.ds with a tile start, .ap(scalar_offset=...), .select(dim, tile))."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gather_row(table, idx):
    """table[idx] for a runtime idx (a (1, 1) int32 input)."""
    R, C = table.shape
    out = nl.ndarray((1, C), dtype=table.dtype, buffer=nl.shared_hbm)
    i = nl.load(idx)
    row = nl.load(table[nl.ds(i, 1), :])
    nl.store(out, value=row)
    return out


@nki.jit
def gather_rows_ap(table, idx):
    """table[idx : idx + 4] through .ap(..., scalar_offset=i, indirect_dim=0)."""
    R, C = table.shape
    out = nl.ndarray((4, C), dtype=table.dtype, buffer=nl.shared_hbm)
    i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    t = nl.ndarray((4, C), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=table.ap([[C, 4], [1, C]], offset=0, scalar_offset=i, indirect_dim=0))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def pick_column(x, idx):
    """x[:, idx] of an SBUF tile, the column picked at run time (.select on a free dim)."""
    P, F = x.shape
    out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    i = nl.load(idx)
    col = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=col, src=t.select(1, i))
    nl.store(out, value=col)
    return out
