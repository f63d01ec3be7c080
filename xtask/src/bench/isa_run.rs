//! The ISA datapath rows (issue #12 "Performance": each datapath at 4096 indices × 32 elements
//! within 1.5x of a plain Rust loop doing the same copies). Each row runs one word through
//! `Machine::run_word` (validation included) and times a plain loop over `Vec<u8>` buffers that
//! does the same reads, row copies or adds, in the same run:
//!
//! - GATHER: 32 channels × 4096 u32 indices into a 512-element fp32 Pool_Buffer (a miss every
//!   eighth index, IMMEDIATE_WRITE).
//! - INDIRECT_COPY: 128 partitions × 32 u16 indices × 32 fp32 elements (4096 row copies); the
//!   loop copies between the same offsets of an SBUF-shaped buffer.
//! - DMA_INDIRECT: gather 4096 rows of 32 fp32 by u32 index from a 65536-row DRAM table.
//! - EMBEDDING_UPDATE: 4096 rows × 32 bf16 (v4: the data fills one 256 KiB partition), ADD,
//!   into a 65536-row DRAM table.

use super::{Ctx, Goal, ms, row, time};
use indirection::isa::machine::{IsaOptions, Machine};
use indirection::isa::{
    Addr4, Addr4Marker, Addr8, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs, DmaIndirect1d,
    DmaIndirectFlags, Generation, Header, IndexMissBehavior, Indirect20B, IndirectDim, IndirectMode,
    IsaDtype, MemPattern4D, PseudoEmbeddingUpdate, S4d4Gt, S4d4Ic, Space, TensorNd, Word,
};
use std::hint::black_box;
use test_rng::XorShift64;

const N: usize = 4096;
const E: usize = 32;
const ROWS: usize = 65_536;
const TARGET: f64 = 1.5;
const TABLE: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;

fn t4(partition: u8, offset: u32, n: u16) -> TensorNd<4> {
    TensorNd {
        start_addr: Addr4::imm(partition, Space::Sbuf, offset),
        step_elem: [1, 0, 0, 0],
        num_elem: [n, 1, 1, 1],
    }
}

fn time_word(ctx: &Ctx, m: &mut Machine, w: &Word) -> Result<f64, String> {
    let o = IsaOptions::default();
    m.run_word(w, &o).map_err(|e| e.to_string())?;
    Ok(ms(time(ctx.opts.reps(), || {
        let _ = black_box(m.run_word(black_box(w), &o));
    })))
}

fn sb() -> usize {
    Generation::V2.sbuf_partition_bytes() as usize
}

fn gather(ctx: &Ctx) {
    let name = "isa-gather 32 ch x 4096 u32 idx, fp32 Pool_Buffer";
    if !ctx.opts.want(name) {
        return;
    }
    let (ch, pbn) = (32usize, 512usize);
    let mut rng = XorShift64::new(7);
    let idx: Vec<u32> = (0..ch * N)
        .map(|k| if k % 8 == 7 { 600 + rng.below(100) as u32 } else { rng.below(pbn as u64) as u32 })
        .collect();
    let pb: Vec<u8> = (0..128 * pbn * 4).map(|_| rng.next_u64() as u8).collect();
    let mut m = Machine::new(Generation::V2);
    let p = sb();
    for c in 0..ch {
        let row: Vec<u8> = idx[c * N..(c + 1) * N].iter().flat_map(|v| v.to_le_bytes()).collect();
        m.sbuf_mut()[c * p..c * p + 4 * N].copy_from_slice(&row);
    }
    let _ = m.set_pool_buffer(bir_ir::Dtype::Float32, pbn, 0, 511, pb.clone());
    let w = Word::Gather(S4d4Gt {
        header: Header::new(0x68),
        events: [0; 8],
        src: t4(0, 0, N as u16),
        in_dtype: IsaDtype::UINT32,
        out_dtype: IsaDtype::FP32,
        num_active_channels: ch as u8,
        unnamed_35: [0],
        index_miss_behavior: IndexMissBehavior::ImmediateWrite,
        free_pool_buffer: 0,
        unnamed_38: [0; 2],
        immediate: 0x7FC0_0000,
        dst: t4(0, 0x8000, N as u16),
    });
    let ours = time_word(ctx, &mut m, &w);
    // The plain loop: the same index reads, hit test and 4-byte copies over Vec<u8>.
    let src: Vec<u8> = m.sbuf().to_vec();
    let mut dst = vec![0u8; 128 * p];
    let base = time(ctx.opts.reps(), || {
        for c in 0..ch {
            let ids = &src[c * p..c * p + 4 * N];
            let out = &mut dst[c * p + 0x8000..c * p + 0x8000 + 4 * N];
            let table = &pb[c * pbn * 4..(c + 1) * pbn * 4];
            for (o, i) in out.chunks_exact_mut(4).zip(ids.chunks_exact(4)) {
                let i = u32::from_le_bytes([i[0], i[1], i[2], i[3]]);
                let off = (i & 511) as usize;
                if i & !511 == 0 {
                    o.copy_from_slice(&table[off * 4..off * 4 + 4]);
                } else {
                    o.copy_from_slice(&0x7FC0_0000u32.to_le_bytes());
                }
            }
        }
        black_box(&dst);
    });
    row(name, ours, "Rust loop over Vec<u8>", Ok(ms(base)), Goal::Within(TARGET));
}

fn indirect_copy(ctx: &Ctx) {
    let name = "isa-indirect-copy 128 part x 32 u16 idx x 32 fp32";
    if !ctx.opts.want(name) {
        return;
    }
    let n = 32usize;
    let sbs = 256 * E; // 256 rows in the source buffer
    let mut rng = XorShift64::new(11);
    let mut m = Machine::new(Generation::V2);
    let p = sb();
    let data: Vec<u8> = (0..128 * sbs * 4).map(|_| rng.next_u64() as u8).collect();
    let mut lists = vec![0u16; 8 * n];
    for q in 0..128 {
        m.sbuf_mut()[q * p + 0x1000..q * p + 0x1000 + sbs * 4]
            .copy_from_slice(&data[q * sbs * 4..(q + 1) * sbs * 4]);
    }
    for b in 0..8 {
        for j in 0..n {
            let r = rng.below(256) as u16;
            lists[b * n + j] = r;
            let at = (16 * b + j % 16) * p + 2 * (j / 16);
            m.sbuf_mut()[at..at + 2].copy_from_slice(&r.to_le_bytes());
        }
    }
    let w = Word::IndirectCopy(S4d4Ic {
        header: Header::new(0xE7),
        events: [0; 8],
        src: MemPattern4D::Indirect(Indirect20B {
            index_addr: Addr4 {
                marker: Addr4Marker::IndirectImm,
                partition: 0,
                space: Space::Sbuf,
                offset: 0,
                reserved: 0,
            },
            data_addr: Addr4::imm(0, Space::Sbuf, 0x1000),
            num_elem: (n * E) as u16,
            unnamed_10: [0; 10],
        }),
        in_dtype: IsaDtype::FP32,
        out_dtype: IsaDtype::FP32,
        num_active_channels: 128,
        src_num_elem_per_idx: E as u8,
        dst_num_elem_per_idx: 0,
        unnamed_37: [0],
        src_buffer_size: sbs as u16,
        dst_buffer_size: 0,
        unnamed_42: [0; 2],
        dst: MemPattern4D::Tensor(t4(0, 0x10000, (n * E) as u16)),
    });
    let ours = time_word(ctx, &mut m, &w);
    // The same copies: between the same byte offsets of a buffer shaped like the SBUF (128
    // partitions of 192 KiB), since the partition stride (a multiple of 64 KiB) maps every
    // partition's rows onto the same cache sets; a packed buffer would time other copies.
    let mut mem = m.sbuf().to_vec();
    let row_b = E * 4;
    let base = time(ctx.opts.reps(), || {
        for q in 0..128 {
            let (a, b) = mem[q * p..(q + 1) * p].split_at_mut(0x10000);
            let src = &a[0x1000..0x1000 + sbs * 4];
            let out = &mut b[..n * row_b];
            for (j, o) in out.chunks_exact_mut(row_b).enumerate() {
                let r = usize::from(lists[(q / 16) * n + j]);
                o.copy_from_slice(&src[r * row_b..(r + 1) * row_b]);
            }
        }
        black_box(&mem);
    });
    row(name, ours, "Rust loop over Vec<u8>", Ok(ms(base)), Goal::Within(TARGET));
}

fn dma_word(mode: IndirectMode, op: DgeComputeOp, src: Addr8, dst: Addr8) -> Word {
    Word::DmaIndirect(DmaIndirect1d {
        header: Header::new(0xBB),
        events: [0; 8],
        semaphore: 0,
        sem_increment: 0,
        idx_num_active_channels: 128,
        flags: DmaIndirectFlags {
            indirect_mode: mode,
            idx_bound_is_err: false,
            non_unique_dst_idx: true,
            gather_dim: IndirectDim::X,
            scatter_dim: IndirectDim::X,
        },
        src_start_addr: src,
        src_step_elem: 1,
        src_num_elem: N as u16,
        src_elem_size: (E * 4) as u16,
        dst_start_addr: dst,
        dst_step_elem: 1,
        dst_num_elem: N as u16,
        dst_elem_size: (E * 4) as u16,
        src_idx_start_addr: Addr4::imm(0, Space::Sbuf, 0),
        dst_idx_start_addr: Addr4::imm(0, Space::Sbuf, 0),
        in_dtype: IsaDtype::FP32,
        out_dtype: IsaDtype::FP32,
        src_idx_bound_reg: BoundCheckReg::default(),
        dst_idx_bound_reg: BoundCheckReg::default(),
        compute_op: op,
        dma_configs: DmaConfigs::default(),
        reserved_62: [0; 2],
    })
}

/// A machine with a 65536-row fp32 table in DRAM, a 4096-row output region and 4096 random
/// u32 row indices in SBUF partition 0.
fn dram_machine(seed: u64) -> (Machine, Vec<u8>, Vec<u32>) {
    let mut rng = XorShift64::new(seed);
    let mut m = Machine::new(Generation::V2);
    let table: Vec<u8> = (0..ROWS * E).flat_map(|_| (rng.below(1000) as f32 / 8.0).to_le_bytes()).collect();
    let _ = m.add_dram("table", TABLE, table.clone());
    let _ = m.add_dram("out", OUT, vec![0; N * E * 4]);
    let idx: Vec<u32> = (0..N).map(|_| rng.below(ROWS as u64) as u32).collect();
    let bytes: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
    m.sbuf_mut()[..4 * N].copy_from_slice(&bytes);
    (m, table, idx)
}

fn dma(ctx: &Ctx) {
    let name = "isa-dma-indirect gather 4096 rows x 32 fp32 DRAM";
    if ctx.opts.want(name) {
        let (mut m, table, idx) = dram_machine(13);
        let w =
            dma_word(IndirectMode::SrcIndirection, DgeComputeOp::None, Addr8::dram(TABLE), Addr8::dram(OUT));
        let ours = time_word(ctx, &mut m, &w);
        let mut out = vec![0u8; N * E * 4];
        let rb = E * 4;
        let base = time(ctx.opts.reps(), || {
            for (o, &i) in out.chunks_exact_mut(rb).zip(&idx) {
                let i = i as usize;
                o.copy_from_slice(&table[i * rb..(i + 1) * rb]);
            }
            black_box(&out);
        });
        row(name, ours, "Rust loop over Vec<u8>", Ok(ms(base)), Goal::Within(TARGET));
    }
    let name = "isa-dma-indirect scatter-add 4096 rows x 32 fp32 DRAM";
    if ctx.opts.want(name) {
        let (mut m, _, idx) = dram_machine(17);
        let w =
            dma_word(IndirectMode::DstIndirection, DgeComputeOp::Add, Addr8::dram(OUT), Addr8::dram(TABLE));
        let ours = time_word(ctx, &mut m, &w);
        let src: Vec<u8> = (0..N * E).flat_map(|k| (k as f32).to_le_bytes()).collect();
        let mut table = m.dram()[0].bytes.clone();
        let rb = E * 4;
        let base = time(ctx.opts.reps(), || {
            for (k, &i) in idx.iter().enumerate() {
                let i = i as usize;
                let d = &mut table[i * rb..(i + 1) * rb];
                for (dv, sv) in d.chunks_exact_mut(4).zip(src[k * rb..(k + 1) * rb].chunks_exact(4)) {
                    let x = f32::from_le_bytes([dv[0], dv[1], dv[2], dv[3]])
                        + f32::from_le_bytes([sv[0], sv[1], sv[2], sv[3]]);
                    dv.copy_from_slice(&x.to_le_bytes());
                }
            }
            black_box(&table);
        });
        row(name, ours, "Rust add loop over Vec<u8>", Ok(ms(base)), Goal::Within(TARGET));
    }
}

fn embedding(ctx: &Ctx) {
    // 4096 x 32 data elements fill one partition only as bf16 on v4 (256 KiB; X7: the data
    // tensor covers one partition), so this row is bf16, rounding at every add.
    let name = "isa-embedding-update add 4096 rows x 32 bf16 DRAM (v4)";
    if !ctx.opts.want(name) {
        return;
    }
    let mut rng = XorShift64::new(19);
    let mut m = Machine::new(Generation::V4);
    let bf = |x: f32| -> [u8; 2] { ((x.to_bits() >> 16) as u16).to_le_bytes() };
    let table: Vec<u8> = (0..ROWS * E).flat_map(|_| bf(rng.below(1000) as f32 / 8.0)).collect();
    let _ = m.add_dram("table", TABLE, table.clone());
    let idx: Vec<u32> = (0..N).map(|_| rng.below(ROWS as u64) as u32).collect();
    let ib: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
    m.sbuf_mut()[..4 * N].copy_from_slice(&ib);
    let data: Vec<u8> = (0..N * E).flat_map(|k| bf((k % 97) as f32 / 4.0)).collect();
    let p = Generation::V4.sbuf_partition_bytes() as usize;
    m.sbuf_mut()[p..p + N * E * 2].copy_from_slice(&data);
    let w = Word::EmbeddingUpdate(PseudoEmbeddingUpdate {
        header: Header::new(0xCA),
        events: [0; 8],
        data_dtype: IsaDtype::BFLOAT16,
        cce_op: CceOp::Add,
        unnamed_14: [0; 2],
        embed_index_in: TensorNd {
            start_addr: Addr4::imm(0, Space::Sbuf, 0),
            step_elem: [1],
            num_elem: [N as u16],
        },
        embed_data_in: TensorNd {
            start_addr: Addr4::imm(1, Space::Sbuf, 0),
            step_elem: [1, E as i16],
            num_elem: [E as u16, N as u16],
        },
        desc: TensorNd { start_addr: Addr4::imm(2, Space::Sbuf, 0), step_elem: [1], num_elem: [1] },
        embedding_table_base_addr: TABLE as u32,
        embed_entry_num_elements: E as u16,
        embed_entry_stride_bytes_lo: (E * 2) as u16,
        sequence_length: N as u32,
        embedding_table_num_entries: ROWS as u32,
        embed_entry_stride_bytes_hi: 0,
        unnamed_62: [0; 2],
    });
    let ours = time_word(ctx, &mut m, &w);
    let mut table = table;
    let rb = E * 2;
    // bf16 RNE narrowing, a NaN becoming 0x7FC0 as the device profile writes it (the data
    // is finite, but the loop must compute what the datapath computes for any input).
    let round = |f: f32| -> u16 {
        let b = f.to_bits();
        if f.is_nan() { 0x7FC0 } else { ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16 }
    };
    let base = time(ctx.opts.reps(), || {
        for (i, &x) in idx.iter().enumerate() {
            let x = x as usize;
            let d = &mut table[x * rb..(x + 1) * rb];
            for (dv, sv) in d.chunks_exact_mut(2).zip(data[i * rb..(i + 1) * rb].chunks_exact(2)) {
                let a = f32::from_bits(u32::from(u16::from_le_bytes([dv[0], dv[1]])) << 16);
                let b = f32::from_bits(u32::from(u16::from_le_bytes([sv[0], sv[1]])) << 16);
                dv.copy_from_slice(&round(a + b).to_le_bytes());
            }
        }
        black_box(&table);
    });
    row(name, ours, "Rust bf16 add loop over Vec<u8>", Ok(ms(base)), Goal::Within(TARGET));
}

pub fn run(ctx: &Ctx) {
    gather(ctx);
    indirect_copy(ctx);
    dma(ctx);
    embedding(ctx);
}
