//! EMBEDDING_UPDATE 0xca / raw 0x79 (PSEUDO_EMBEDDING_UPDATE; seed 004 §7d, contract §4): for
//! each of `sequence_length` u32 indices (X23) below `embedding_table_num_entries`, the DRAM row
//! `table_base + index · stride` is reduced element by element with column `i` of the data
//! tensor (`row[j] = row[j] op data(j, i)` in fp32, ADD / MAX / MIN, RNE to the data dtype).
//! Indices at or past the table are skipped (CONFIRMED). Rows are updated serially in `i` order,
//! so duplicate indices accumulate; every row address is checked before the first update.

use super::super::{Buf, FaultKind, IsaFault, IsaOptions, Machine, Space, TensorRef, fault};
use super::{Combine, RowPairs, read_uint_elements, reduce_rows};
use bir_ir::Dtype;

const OP: &str = "EMBEDDING_UPDATE";

/// An EMBEDDING_UPDATE word's operands, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Embedding {
    /// The data (and table) dtype.
    pub dtype: Dtype,
    /// ADD, MAX or MIN.
    pub op: Combine,
    /// The index tensor (TENSOR1D, one partition).
    pub index: TensorRef,
    /// The data tensor (TENSOR2D: dim 0 = element j, dim 1 = index i; one partition).
    pub data: TensorRef,
    /// The table's DRAM address (X10).
    pub table_base: u64,
    /// Elements per row.
    pub entry_elems: usize,
    /// Bytes between rows.
    pub stride: u64,
    /// Indices to apply.
    pub sequence_length: usize,
    /// Rows in the table.
    pub num_entries: u32,
}

impl Machine {
    /// Runs an EMBEDDING_UPDATE (all-or-nothing up to the first row; then serial).
    pub fn embedding_update(&mut self, e: &Embedding, o: &IsaOptions) -> Result<(), IsaFault> {
        let esize = e.dtype.size();
        let (seq, m) = (e.sequence_length, e.entry_elems);
        if e.index.count() < seq {
            return fault(
                FaultKind::Invalid,
                OP,
                "embed_index_in.num_elem",
                format!("the index tensor holds {} elements, sequence_length is {seq}", e.index.count()),
            );
        }
        if e.data.count() < seq * m {
            return fault(
                FaultKind::Invalid,
                OP,
                "embed_data_in.num_elem",
                format!("the data tensor holds {} elements, {seq} x {m} are needed", e.data.count()),
            );
        }
        let mut ioffs = Vec::new();
        let ipb = self.partition_bytes(e.index.start.space);
        e.index.offsets(OP, 4, 1, ipb, &mut ioffs)?;
        ioffs.truncate(seq);
        let dpb = self.partition_bytes(e.data.start.space);
        // Columns of consecutive elements (step 1 along j, the data tensor's X) need no offset
        // list: column i starts at `offset + esize · step[1] · i` (in bounds by the span check).
        let contiguous = e.data.step[0] == 1 && e.data.num[0] as usize == m;
        let mut doffs = Vec::new();
        if contiguous {
            e.data.check(OP, esize, 1, dpb)?;
        } else {
            e.data.offsets(OP, esize, 1, dpb, &mut doffs)?;
        }
        let col_start = |i: usize| {
            e.data.start.offset as usize + (esize as i64 * i64::from(e.data.step[1]) * i as i64) as usize
        };
        let ip = usize::from(e.index.start.partition);
        let ipart = self.space(e.index.start.space).get(ip * ipb..(ip + 1) * ipb).unwrap_or(&[]);
        let mut idx = vec![0u32; seq];
        read_uint_elements(ipart, &ioffs, 4, &mut idx);
        // Every row checked first.
        let row_bytes = m * esize;
        let mut rows = Vec::with_capacity(seq);
        let mut cache: Option<(usize, u64, u64)> = None;
        for (i, &x) in idx.iter().enumerate() {
            if x >= e.num_entries {
                continue;
            }
            let addr = u64::from(x).checked_mul(e.stride).and_then(|d| d.checked_add(e.table_base));
            // The previous row's region first (a table is one region).
            let cached = match (addr, cache) {
                (Some(a), Some((r, lo, hi)))
                    if a >= lo && a.checked_add(row_bytes as u64).is_some_and(|z| z <= hi) =>
                {
                    Some((r, (a - lo) as usize))
                }
                _ => None,
            };
            let found = cached.or_else(|| {
                let (r, off) = self.find_dram(addr?, row_bytes)?;
                let reg = self.dram().get(r)?;
                cache = Some((r, reg.base, reg.base + reg.bytes.len() as u64));
                Some((r, off))
            });
            match found {
                Some((r, off)) => rows.push((i, r, off)),
                None => {
                    return fault(
                        FaultKind::OutOfBounds,
                        OP,
                        "embedding_table_base_addr",
                        format!(
                            "index {i} = {x}: row {:#x} + {x} x {} ({row_bytes} bytes) lies in no DRAM region",
                            e.table_base, e.stride
                        ),
                    );
                }
            }
        }
        // The data column i, gathered into one contiguous buffer and decoded per row.
        let dp = usize::from(e.data.start.partition);
        let numerics = o.numerics();
        // Contiguous data columns and a fast dtype: every row straight between the two
        // buffers, dispatched once.
        if contiguous {
            let Machine { sbuf, psum, dram, .. } = &mut *self;
            let src_mem: &[u8] = match e.data.start.space {
                Space::Sbuf => sbuf,
                Space::Psum => psum,
            };
            let mut pairs = Columns {
                src: src_mem.get(dp * dpb..(dp + 1) * dpb).unwrap_or(&[]),
                dram,
                rows: &rows,
                col: e.data.start.offset as usize,
                col_step: (esize as i64 * i64::from(e.data.step[1])) as usize,
                row_bytes,
            };
            if reduce_rows(e.dtype, &numerics, e.op, &mut pairs) {
                return Ok(());
            }
        }
        let mut col = vec![0u8; row_bytes];
        let mut a = vec![0f32; m];
        let mut v = vec![0f32; m];
        for (i, r, off) in rows {
            {
                let dpart = self.space(e.data.start.space).get(dp * dpb..(dp + 1) * dpb).unwrap_or(&[]);
                if contiguous {
                    let o = col_start(i);
                    if let Some(s) = dpart.get(o..o + row_bytes) {
                        col.copy_from_slice(s);
                    }
                } else {
                    let offs = doffs.get(i * m..(i + 1) * m).unwrap_or(&[]);
                    for (c, &o) in col.chunks_exact_mut(esize.max(1)).zip(offs) {
                        if let Some(s) = dpart.get(o..o + esize) {
                            c.copy_from_slice(s);
                        }
                    }
                }
            }
            let Some(row) = self.buf_mut(Buf::Dram(r)).get_mut(off..off + row_bytes) else { continue };
            let _ = numerics::decode_to_f32(e.dtype, &col, &mut a, &numerics);
            let _ = numerics::decode_to_f32(e.dtype, row, &mut v, &numerics);
            e.op.apply(&mut v, &a);
            let _ = numerics::encode_from_f32(e.dtype, &v, row, &numerics);
        }
        Ok(())
    }
}

/// The contiguous fast path's `(table row, data column)` pairs: row `k` of `rows` is
/// `(i, region, offset)`; column `i` starts at `col + col_step · i` of the data partition.
struct Columns<'a> {
    src: &'a [u8],
    dram: &'a mut [super::super::DramRegion],
    rows: &'a [(usize, usize, usize)],
    col: usize,
    col_step: usize,
    row_bytes: usize,
}

impl RowPairs for Columns<'_> {
    fn each(&mut self, mut f: impl FnMut(&mut [u8], &[u8])) {
        let rb = self.row_bytes;
        for &(i, r, off) in self.rows {
            let o = self.col.wrapping_add(self.col_step.wrapping_mul(i));
            let src = self.src.get(o..o.wrapping_add(rb));
            let dst = self.dram.get_mut(r).and_then(|x| x.bytes.get_mut(off..off + rb));
            if let (Some(src), Some(dst)) = (src, dst) {
                f(dst, src);
            }
        }
    }
}
