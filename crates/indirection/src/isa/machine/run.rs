//! Running words on a [`Machine`] (contract §3–4): one file per datapath, each taking its
//! word's operands resolved (addresses to [`OnChip`] / DRAM targets, enums to
//! flags) and checking everything before it writes. Element arithmetic goes through numerics
//! (fp32 decode/encode of every dtype, RNE) with glibc `fmaxf`/`fminf` for MAX/MIN.

pub mod dma_indirect;
pub mod embedding;
pub mod gather;
pub mod indirect_copy;
pub mod pool_load;

pub use dma_indirect::{BoundReg, DmaIndirect, Side, Target};
pub use embedding::Embedding;
pub use gather::Gather;
pub use indirect_copy::IndirectCopy;
pub use pool_load::PoolLoad;

use super::{FaultKind, IsaFault, IsaOptions, Machine, OnChip, TensorRef, fault};
use crate::isa::parts::{Addr4, Addr4Marker, Addr8, Addr8Marker, Addr8Target, MemPattern4D, TensorNd};
use crate::isa::{
    BoundCheckReg, CceOp, DgeComputeOp, DmaIndirect1d, IndexMissBehavior, IsaDtype, PoolBufferLoad,
    PseudoEmbeddingUpdate, S4d4Gt, S4d4Ic, Word, validate,
};

impl Machine {
    /// Runs one word (contract §3): validated for the machine's generation first (any
    /// violation is an `invalid` fault naming the first one's field, all listed), then executed
    /// all-or-nothing. The fault's `word` is 0; [`run`](Self::run) sets it.
    pub fn run_word(&mut self, w: &Word, o: &IsaOptions) -> Result<(), IsaFault> {
        let violations = validate(w, self.generation());
        if let Some(first) = violations.first() {
            let all: Vec<String> = violations.iter().map(ToString::to_string).collect();
            return fault(
                FaultKind::Invalid,
                w.opcode().map_or(w.struct_name(), |op| op.name()),
                first.field,
                format!("{} violation(s): {}", violations.len(), all.join("; ")),
            );
        }
        match w {
            Word::PoolBufferLoad(p) => self.pool_buffer_load(&pool_load(p)?),
            Word::Gather(g) => self.gather(&gather(g)?, o),
            Word::IndirectCopy(ic) => self.indirect_copy(&indirect_copy(ic)?, o),
            Word::DmaIndirect(d) => self.dma_indirect(&dma_indirect(d)?, o),
            Word::EmbeddingUpdate(e) => self.embedding_update(&embedding(e)?, o),
        }
    }

    /// Runs words in order, stopping at the first fault (its `word` is the word's index); the
    /// words before it keep their effects.
    pub fn run(&mut self, words: &[Word], o: &IsaOptions) -> Result<(), IsaFault> {
        for (k, w) in words.iter().enumerate() {
            self.run_word(w, o).map_err(|f| IsaFault { word: k, ..f })?;
        }
        Ok(())
    }

    /// Decodes and runs raw 64-byte words in order (a word that does not decode — an unknown
    /// opcode, one without a wire layout, a bad enum value — is an `invalid` fault).
    pub fn run_raw(&mut self, words: &[[u8; 64]], o: &IsaOptions) -> Result<(), IsaFault> {
        for (k, raw) in words.iter().enumerate() {
            let w = Word::decode(raw).map_err(|e| IsaFault {
                word: k,
                ..IsaFault::new(FaultKind::Invalid, "word", "header.opcode", e.to_string())
            })?;
            self.run_word(&w, o).map_err(|f| IsaFault { word: k, ..f })?;
        }
        Ok(())
    }
}

/// An ADDR4 the functional model runs: the IMM marker (or `also`, the indirect form's own).
fn on_chip(a: &Addr4, op: &'static str, field: &str, also: Option<Addr4Marker>) -> Result<OnChip, IsaFault> {
    if a.marker != Addr4Marker::Imm && Some(a.marker) != also {
        return fault(
            FaultKind::NotImplemented,
            op,
            format!("{field}.marker"),
            format!("ADDR4 marker {} (register or indirect forms do not run functionally)", a.marker),
        );
    }
    Ok(OnChip { partition: a.partition, space: a.space, offset: a.offset })
}

/// A TENSORnD (N ≤ 4) resolved; spare dims step 0, count 1.
fn tensor<const N: usize>(
    t: &TensorNd<N>,
    op: &'static str,
    field: &'static str,
) -> Result<TensorRef, IsaFault> {
    let start = on_chip(&t.start_addr, op, &format!("{field}.start_addr"), None)?;
    let mut step = [0i16; 4];
    let mut num = [1u16; 4];
    let n = N.min(4);
    step[..n].copy_from_slice(&t.step_elem[..n]);
    num[..n].copy_from_slice(&t.num_elem[..n]);
    Ok(TensorRef { field, start, step, num })
}

fn dtype_of(d: IsaDtype, op: &'static str, field: &'static str) -> Result<bir_ir::Dtype, IsaFault> {
    d.to_dtype().ok_or_else(|| {
        IsaFault::new(
            FaultKind::Dtype,
            op,
            field,
            format!("ISA dtype {d} has no element type in the functional model"),
        )
    })
}

fn pool_load(p: &PoolBufferLoad) -> Result<PoolLoad, IsaFault> {
    const OP: &str = "POOL_BUFFER_LOAD";
    Ok(PoolLoad {
        src: tensor(&p.src, OP, "src")?,
        dtype: p.dtype.0,
        channels: usize::from(p.num_active_channels),
        mask: u32::from(p.mask),
        start_index: p.start_index,
    })
}

fn gather(g: &S4d4Gt) -> Result<Gather, IsaFault> {
    const OP: &str = "GATHER";
    let index_bytes = match g.in_dtype {
        IsaDtype::UINT8 => 1,
        IsaDtype::UINT16 => 2,
        IsaDtype::UINT32 => 4,
        other => return fault(FaultKind::Invalid, OP, "in_dtype", format!("index dtype {other}")),
    };
    Ok(Gather {
        src: tensor(&g.src, OP, "src")?,
        index_bytes,
        out_dtype: g.out_dtype.0,
        channels: usize::from(g.num_active_channels),
        skip_write: g.index_miss_behavior == IndexMissBehavior::SkipWrite,
        free_pool_buffer: g.free_pool_buffer != 0,
        immediate: g.immediate,
        dst: tensor(&g.dst, OP, "dst")?,
    })
}

fn indirect_copy(ic: &S4d4Ic) -> Result<IndirectCopy, IsaFault> {
    const OP: &str = "INDIRECT_COPY";
    let (MemPattern4D::Indirect(src), MemPattern4D::Tensor(dst)) = (&ic.src, &ic.dst) else {
        return fault(FaultKind::Invalid, OP, "src", "src must be the indirect form and dst a tensor");
    };
    let esize = ic.in_dtype.size().ok_or_else(|| {
        IsaFault::new(
            FaultKind::Dtype,
            OP,
            "in_dtype",
            format!("ISA dtype {} has no element size", ic.in_dtype),
        )
    })?;
    Ok(IndirectCopy {
        index: on_chip(&src.index_addr, OP, "src.index_addr", Some(Addr4Marker::IndirectImm))?,
        data: on_chip(&src.data_addr, OP, "src.data_addr", Some(Addr4Marker::IndirectImm))?,
        num_elem: usize::from(src.num_elem),
        esize,
        channels: usize::from(ic.num_active_channels),
        elem_per_idx: usize::from(ic.src_num_elem_per_idx),
        src_buffer_size: usize::from(ic.src_buffer_size),
        dst: tensor(dst, OP, "dst")?,
    })
}

/// An ADDR8 the functional model runs: the IMM marker without offset registers (X5 target).
fn target(a: &Addr8, field: &'static str) -> Result<Target, IsaFault> {
    const OP: &str = "DMA_INDIRECT";
    if a.marker != Addr8Marker::Imm || a.offset_reg || a.offset_wide {
        return fault(
            FaultKind::NotImplemented,
            OP,
            format!("{field}.marker"),
            format!("ADDR8 marker byte {:#04x} (only IMM runs functionally)", a.marker_byte()),
        );
    }
    match a.target() {
        Ok(Addr8Target::Dram(x)) => Ok(Target::Dram(x)),
        Ok(Addr8Target::OnChip { partition, space, offset }) => {
            Ok(Target::OnChip(OnChip { partition, space, offset }))
        }
        Err(e) => fault(FaultKind::Invalid, OP, field, e.to_string()),
    }
}

fn bound(b: &BoundCheckReg) -> BoundReg {
    BoundReg { reg: b.bc_reg, disable_notif: b.bc_disable_oob_error_notif, enabled: b.bc_enabled }
}

fn dma_indirect(d: &DmaIndirect1d) -> Result<DmaIndirect, IsaFault> {
    const OP: &str = "DMA_INDIRECT";
    let side = |start: &Addr8,
                step: i32,
                num: u16,
                size: u16,
                idx: &Addr4,
                b: &BoundCheckReg,
                dt: IsaDtype,
                names: [&'static str; 3]|
     -> Result<Side, IsaFault> {
        Ok(Side {
            start: target(start, names[0])?,
            step_elem: step,
            num_elem: usize::from(num),
            elem_size: usize::from(size),
            idx: on_chip(idx, OP, names[1], None)?,
            bound: bound(b),
            dtype: dtype_of(dt, OP, names[2])?,
        })
    };
    let f = d.flags;
    let (gather, scatter) = (f.indirect_mode.gathers(), f.indirect_mode.scatters());
    // An index ADDR4 on a side without indices is never read: only its marker matters there.
    let src = side(
        &d.src_start_addr,
        d.src_step_elem,
        d.src_num_elem,
        d.src_elem_size,
        if gather { &d.src_idx_start_addr } else { &IMM0 },
        &d.src_idx_bound_reg,
        d.in_dtype,
        ["src_start_addr", "src_idx_start_addr", "in_dtype"],
    )?;
    let dst = side(
        &d.dst_start_addr,
        d.dst_step_elem,
        d.dst_num_elem,
        d.dst_elem_size,
        if scatter { &d.dst_idx_start_addr } else { &IMM0 },
        &d.dst_idx_bound_reg,
        d.out_dtype,
        ["dst_start_addr", "dst_idx_start_addr", "out_dtype"],
    )?;
    let op = match d.compute_op {
        DgeComputeOp::None => None,
        DgeComputeOp::Add => Some(Combine::Add),
        DgeComputeOp::Multiply => Some(Combine::Multiply),
        DgeComputeOp::Max => Some(Combine::Max),
        DgeComputeOp::Min => Some(Combine::Min),
    };
    Ok(DmaIndirect {
        gather,
        scatter,
        idx_bound_is_err: f.idx_bound_is_err,
        non_unique_dst_idx: f.non_unique_dst_idx,
        src,
        dst,
        op,
    })
}

/// The placeholder index address of a side that has no indices.
const IMM0: Addr4 = Addr4::imm(0, crate::isa::Space::Sbuf, 0);

fn embedding(e: &PseudoEmbeddingUpdate) -> Result<Embedding, IsaFault> {
    const OP: &str = "EMBEDDING_UPDATE";
    Ok(Embedding {
        dtype: dtype_of(e.data_dtype, OP, "data_dtype")?,
        op: match e.cce_op {
            CceOp::Add => Combine::Add,
            CceOp::Max => Combine::Max,
            CceOp::Min => Combine::Min,
        },
        index: tensor(&e.embed_index_in, OP, "embed_index_in")?,
        data: tensor(&e.embed_data_in, OP, "embed_data_in")?,
        table_base: u64::from(e.embedding_table_base_addr),
        entry_elems: usize::from(e.embed_entry_num_elements),
        stride: u64::from(e.embed_entry_stride_bytes()),
        sequence_length: e.sequence_length as usize,
        num_entries: e.embedding_table_num_entries,
    })
}

/// An element-wise reduce `dst = dst op src` (DGE_COMPUTE_OP ADD/MULTIPLY/MAX/MIN,
/// CCE_OP ADD/MAX/MIN): in fp32 for a float destination, at the integer width for an integer
/// one ([`numerics::alu::int_combine`], DMA_INDIRECT only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// `dst + src`.
    Add,
    /// `dst · src`.
    Multiply,
    /// glibc `fmaxf(dst, src)`.
    Max,
    /// glibc `fminf(dst, src)`.
    Min,
}

/// glibc `fmaxf(dst, src)` / `fminf`: a NaN operand yields the other; a tie (±0) keeps `dst`
/// (contract §4) — numerics' one definition.
pub use numerics::alu::{fmaxf, fminf};

impl Combine {
    /// The ALU op of the same combine (what [`numerics::alu::int_combine`] takes).
    pub fn alu(self) -> bir_ir::AluOp {
        match self {
            Combine::Add => bir_ir::AluOp::Add,
            Combine::Multiply => bir_ir::AluOp::Mult,
            Combine::Max => bir_ir::AluOp::Max,
            Combine::Min => bir_ir::AluOp::Min,
        }
    }

    /// `dst[k] = dst[k] op src[k]`, one dispatch per call.
    pub fn apply(self, dst: &mut [f32], src: &[f32]) {
        fn go(dst: &mut [f32], src: &[f32], f: impl Fn(f32, f32) -> f32) {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = f(*d, *s);
            }
        }
        match self {
            Combine::Add => go(dst, src, |a, b| a + b),
            Combine::Multiply => go(dst, src, |a, b| a * b),
            Combine::Max => go(dst, src, fmaxf),
            Combine::Min => go(dst, src, fminf),
        }
    }
}

/// Reads unsigned little-endian integers of `width` bytes (1, 2, 4) at `offs` of `part` into
/// `out` (zero-extended); one dispatch on the width. Offsets come from a checked tensor walk.
pub(crate) fn read_uint_elements(part: &[u8], offs: &[usize], width: usize, out: &mut [u32]) {
    fn go<const W: usize>(part: &[u8], offs: &[usize], out: &mut [u32]) {
        for (v, &o) in out.iter_mut().zip(offs) {
            let mut b = [0u8; 4];
            if let Some(s) = part.get(o..o + W) {
                b[..W].copy_from_slice(s);
            }
            *v = u32::from_le_bytes(b);
        }
    }
    match width {
        1 => go::<1>(part, offs, out),
        2 => go::<2>(part, offs, out),
        _ => go::<4>(part, offs, out),
    }
}

/// `dst = dst op src` element by element over whole elements of `dtype`, straight on the bytes,
/// for the dtypes with an inline codec (float32 and bfloat16, narrowed as numerics does under
/// `profile`); `false` (nothing done) for every other dtype, which then goes through
/// numerics' slice decode/encode. One dispatch per call (a move or a row), none per element.
pub(crate) fn reduce_slice(
    dtype: bir_ir::Dtype,
    profile: &numerics::Profile,
    op: Combine,
    dst: &mut [u8],
    src: &[u8],
) -> bool {
    reduce_rows(dtype, profile, op, &mut OnePair(dst, src))
}

/// A sequence of `(dst, src)` byte-slice pairs that [`reduce_rows`] reduces, visited by a
/// closure the compiler inlines (one dispatch for all the pairs, none per pair).
pub(crate) trait RowPairs {
    /// Calls `f(dst, src)` for every pair, in order.
    fn each(&mut self, f: impl FnMut(&mut [u8], &[u8]));
}

/// One pair.
struct OnePair<'a>(&'a mut [u8], &'a [u8]);

impl RowPairs for OnePair<'_> {
    fn each(&mut self, mut f: impl FnMut(&mut [u8], &[u8])) {
        f(self.0, self.1);
    }
}

/// [`reduce_slice`] over every pair of `rows`, dispatched once on dtype and op: `false`
/// (nothing done) for a dtype without an inline codec.
pub(crate) fn reduce_rows(
    dtype: bir_ir::Dtype,
    profile: &numerics::Profile,
    op: Combine,
    rows: &mut impl RowPairs,
) -> bool {
    use numerics::codec::{Bf16, Codec, Slot};
    #[inline(always)]
    fn go<const W: usize, K: Codec<C = [u8; W]>>(k: K, op: Combine, rows: &mut impl RowPairs) {
        #[inline(always)]
        fn each<const W: usize, K: Codec<C = [u8; W]>>(
            k: K,
            rows: &mut impl RowPairs,
            f: impl Fn(f32, f32) -> f32,
        ) {
            rows.each(|dst, src| {
                for (d, s) in dst.as_chunks_mut::<W>().0.iter_mut().zip(src.as_chunks::<W>().0) {
                    *d = k.encode(f(k.decode(*d), k.decode(*s)));
                }
            });
        }
        match op {
            Combine::Add => each(k, rows, |a, b| a + b),
            Combine::Multiply => each(k, rows, |a, b| a * b),
            Combine::Max => each(k, rows, fmaxf),
            Combine::Min => each(k, rows, fminf),
        }
    }
    match dtype {
        bir_ir::Dtype::Float32 => go(Slot::<[u8; 4]>::new(), op, rows),
        bir_ir::Dtype::Bfloat16 => go(Bf16(profile.nan_sign), op, rows),
        _ => return false,
    }
    true
}

/// Reads consecutive unsigned little-endian integers of `width` bytes from `run` into `out`.
pub(crate) fn read_uint_run(run: &[u8], width: usize, out: &mut [u32]) {
    fn go<const W: usize>(run: &[u8], out: &mut [u32]) {
        for (v, b) in out.iter_mut().zip(run.as_chunks::<W>().0) {
            let mut a = [0u8; 4];
            a[..W].copy_from_slice(b);
            *v = u32::from_le_bytes(a);
        }
    }
    match width {
        1 => go::<1>(run, out),
        2 => go::<2>(run, out),
        _ => go::<4>(run, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc: fmaxf(NaN, 1) = 1, fmaxf(1, NaN) = 1, fmaxf(-0, +0) = -0 (the first), fmaxf(+0, -0)
    /// = +0; fminf the same way.
    #[test]
    fn fmaxf_fminf_follow_glibc() {
        assert_eq!(fmaxf(f32::NAN, 1.0), 1.0);
        assert_eq!(fmaxf(1.0, f32::NAN), 1.0);
        assert_eq!(fmaxf(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(fmaxf(0.0, -0.0).to_bits(), 0);
        assert_eq!(fminf(f32::NAN, -3.0), -3.0);
        assert_eq!(fminf(0.0, -0.0).to_bits(), 0);
        assert_eq!(fminf(2.0, -1.0), -1.0);
        assert_eq!(fmaxf(2.0, -1.0), 2.0);
    }

    #[test]
    fn uint_elements_zero_extend() {
        let part = [0xFFu8, 0x01, 0x02, 0x03, 0x04];
        let mut out = [0u32; 2];
        read_uint_elements(&part, &[0, 1], 1, &mut out);
        assert_eq!(out, [0xFF, 0x01]);
        read_uint_elements(&part, &[0, 1], 2, &mut out);
        assert_eq!(out, [0x01FF, 0x0201]);
        read_uint_elements(&part, &[1], 4, &mut out[..1]);
        assert_eq!(out[0], 0x0403_0201);
    }
}
