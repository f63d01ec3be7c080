//! The ISA-word row (issue #12 "Performance": decode + validate at least 10 M words/s): 1 M
//! 64-byte words of the five wire kinds (about one in sixteen invalid) decoded and validated
//! for v2, against a plain Rust loop that copies the same words and folds one byte of each, in
//! the same run.

use super::{Ctx, Goal, fact, ms, note, row, time};
use indirection::isa::{
    Addr4, Addr4Marker, Addr8, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs, DmaIndirect1d,
    DmaIndirectFlags, Generation, Header, IndexMissBehavior, Indirect20B, IndirectDim, IndirectMode,
    IsaDtype, MemPattern4D, PoolBufferLoad, PseudoEmbeddingUpdate, S4d4Gt, S4d4Ic, Space, TensorNd, Word,
    validate,
};
use std::hint::black_box;
use test_rng::XorShift64;

const WORDS: usize = 1 << 20;
/// The target rate.
const TARGET_WORDS_PER_S: f64 = 10e6;

fn t4(partition: u8, offset: u32, n: u16) -> TensorNd<4> {
    TensorNd {
        start_addr: Addr4::imm(partition, Space::Sbuf, offset),
        step_elem: [1, 0, 0, 0],
        num_elem: [n, 1, 1, 1],
    }
}

/// One word of kind `k % 5` with fields varied by `r`.
fn word(k: usize, r: u64) -> [u8; 64] {
    let n = 1 + (r % 512) as u16;
    let p = ((r >> 12) % 4) as u8 * 32;
    let w = match k % 5 {
        0 => Word::Gather(S4d4Gt {
            header: Header::new(0x68),
            events: [0; 8],
            src: t4(p, (r >> 20) as u32 % 4096, n),
            in_dtype: IsaDtype::UINT32,
            out_dtype: IsaDtype::FP32,
            num_active_channels: 32,
            unnamed_35: [0],
            index_miss_behavior: IndexMissBehavior::ImmediateWrite,
            free_pool_buffer: (r & 1) as u8,
            unnamed_38: [0; 2],
            immediate: 0,
            dst: t4(p, 0x8000, n),
        }),
        1 => Word::IndirectCopy(S4d4Ic {
            header: Header::new(0xE7),
            events: [0; 8],
            src: MemPattern4D::Indirect(Indirect20B {
                index_addr: Addr4 {
                    marker: Addr4Marker::IndirectImm,
                    partition: p,
                    space: Space::Sbuf,
                    offset: 0,
                    reserved: 0,
                },
                data_addr: Addr4::imm(p, Space::Sbuf, 0x1000),
                num_elem: 4 * (n % 256 + 1),
                unnamed_10: [0; 10],
            }),
            in_dtype: IsaDtype::BFLOAT16,
            out_dtype: IsaDtype::BFLOAT16,
            num_active_channels: 16,
            src_num_elem_per_idx: 4,
            dst_num_elem_per_idx: 0,
            unnamed_37: [0],
            src_buffer_size: 2048,
            dst_buffer_size: 0,
            unnamed_42: [0; 2],
            dst: MemPattern4D::Tensor(t4(p, 0x4000, 4 * (n % 256 + 1))),
        }),
        2 => Word::DmaIndirect(DmaIndirect1d {
            header: Header::new(0xBB),
            events: [0; 8],
            semaphore: 0,
            sem_increment: 0,
            idx_num_active_channels: 128,
            flags: DmaIndirectFlags {
                indirect_mode: IndirectMode::SrcIndirection,
                idx_bound_is_err: true,
                non_unique_dst_idx: false,
                gather_dim: IndirectDim::X,
                scatter_dim: IndirectDim::X,
            },
            src_start_addr: Addr8::dram(0x1000_0000),
            src_step_elem: 1,
            src_num_elem: n,
            src_elem_size: 512,
            dst_start_addr: Addr8::on_chip(0, Space::Sbuf, 0),
            dst_step_elem: 1,
            dst_num_elem: n,
            dst_elem_size: 512,
            src_idx_start_addr: Addr4::imm(0, Space::Sbuf, 0x100),
            dst_idx_start_addr: Addr4::imm(0, Space::Sbuf, 0),
            in_dtype: IsaDtype::FP32,
            out_dtype: IsaDtype::FP32,
            src_idx_bound_reg: BoundCheckReg {
                bc_reg: 1,
                bc_disable_oob_error_notif: false,
                bc_enabled: true,
            },
            dst_idx_bound_reg: BoundCheckReg::default(),
            compute_op: DgeComputeOp::Add,
            dma_configs: DmaConfigs::default(),
            reserved_62: [0; 2],
        }),
        3 => Word::EmbeddingUpdate(PseudoEmbeddingUpdate {
            header: Header::new(0xCA),
            events: [0; 8],
            data_dtype: IsaDtype::FP32,
            cce_op: CceOp::Add,
            unnamed_14: [0; 2],
            embed_index_in: TensorNd {
                start_addr: Addr4::imm(0, Space::Sbuf, 0),
                step_elem: [1],
                num_elem: [n],
            },
            embed_data_in: TensorNd {
                start_addr: Addr4::imm(1, Space::Sbuf, 0),
                step_elem: [1, 64],
                num_elem: [64, n],
            },
            desc: TensorNd { start_addr: Addr4::imm(2, Space::Sbuf, 0), step_elem: [1], num_elem: [1] },
            embedding_table_base_addr: 0x10_0000,
            embed_entry_num_elements: 64,
            embed_entry_stride_bytes_lo: 256,
            sequence_length: u32::from(n),
            embedding_table_num_entries: 10_000,
            embed_entry_stride_bytes_hi: 0,
            unnamed_62: [0; 2],
        }),
        _ => Word::PoolBufferLoad(PoolBufferLoad {
            header: Header::new(0x67),
            events: [0; 8],
            src: t4(0, 0, n),
            dtype: IsaDtype::FP32,
            unnamed_33: [0],
            num_active_channels: 128,
            unnamed_35: [0],
            mask: 0x1FF,
            unnamed_38: [0; 2],
            start_index: 0,
            unnamed_44: [0; 20],
        }),
    };
    let mut bytes = w.encode();
    if r.is_multiple_of(16) {
        bytes[34] = 0; // channels 0 (GATHER/POOL), or other fields: some words are invalid
    }
    bytes
}

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    let name = "isa-decode-validate 1M words (v2)";
    if !o.want("isa-decode-validate") {
        return;
    }
    // An xorshift64 stream, the row's deterministic variation.
    let mut rng = XorShift64::new(0x2545_F491_4F6C_DD1D);
    let words: Vec<[u8; 64]> = (0..WORDS).map(|k| word(k, rng.next_u64())).collect();
    let mut counts = (0usize, 0usize);
    let ours = time(o.reps(), || {
        let (mut ok, mut bad) = (0, 0);
        for w in black_box(&words) {
            match Word::decode(w) {
                Ok(d) => {
                    let v = validate(&d, Generation::V2);
                    bad += usize::from(!v.is_empty());
                    ok += 1;
                }
                Err(_) => bad += 1,
            }
        }
        counts = black_box((ok, bad));
    });
    let mut out = vec![[0u8; 64]; WORDS];
    let base = time(o.reps(), || {
        let mut acc = 0u64;
        for (d, w) in out.iter_mut().zip(black_box(&words)) {
            *d = *w;
            acc = acc.wrapping_add(u64::from(d[0]));
        }
        black_box(acc);
    });
    row(name, Ok(ms(ours)), "Rust copy loop", Ok(ms(base)), Goal::Info);
    let rate = WORDS as f64 / ours.as_secs_f64();
    fact(
        "isa-decode-validate rate",
        &format!("{:.1} M/s", rate / 1e6),
        &format!("{:.1} M/s", WORDS as f64 / base.as_secs_f64() / 1e6),
        "-",
        ">= 10 M words/s",
        Some(rate >= TARGET_WORDS_PER_S),
    );
    // On a shared machine wall time includes time off the CPU; the thread's own CPU time
    // (/proc/thread-self/stat utime + stime, 100 ticks/s) shows the rate per busy core.
    let cpu_rate = cpu_ticks().and_then(|t0| {
        let reps = 4;
        for _ in 0..reps {
            let ok = black_box(&words)
                .iter()
                .filter(|w| Word::decode(w).is_ok_and(|d| validate(&d, Generation::V2).is_empty()))
                .count();
            black_box(ok);
        }
        let ticks = cpu_ticks()?.saturating_sub(t0).max(1);
        Some((reps * WORDS) as f64 / (ticks as f64 / 100.0))
    });
    let decode_only = time(o.reps(), || {
        let ok = black_box(&words).iter().filter(|w| Word::decode(w).is_ok()).count();
        black_box(ok);
    });
    note(&format!(
        "{} decoded, {} with a decode error or a violation; decode alone {:.2} ms",
        counts.0,
        counts.1,
        ms(decode_only)
    ));
    if let Some(r) = cpu_rate {
        note(&format!("on-CPU rate (thread CPU time, not wall): {:.1} M words/s", r / 1e6));
    }
}

/// This thread's user + system CPU time in clock ticks (fields 14 and 15 of
/// /proc/thread-self/stat), if readable.
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis are
    // space-separated, field 3 first.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}
