//! The DGE rows (issue #13 "Performance"): descriptor generation against the 10 M descriptors/s
//! target (an IndirectLoad plan of 1M indices, one INDIRECT1D each; a DMA_INDIRECT1D-shaped
//! request of 1M indices; a direct copy split at 1M partition-row crossings), and executing a
//! DIRECT2D list of 4 KiB descriptors against `memcpy` of the same bytes in the same run.

use super::{Ctx, Goal, fact, median, ms, row, time};
use access_pattern::Layout;
use bir_ir::{ApPair, Dtype};
use dge::generate::{self, Direction, Indirect1d, IndirectMode, Operand};
use dge::{ComputeOp, Descriptor, DgeKind, FlatMemory};
use std::time::Instant;
use test_rng::SplitMix64;

const N: usize = 1 << 20;
const TARGET: f64 = 10e6;

/// Times `f` (which returns the descriptor count) and prints its rate against the target.
fn rate(ctx: &Ctx, name: &str, mut f: impl FnMut() -> Result<usize, String>) {
    let mut count = Ok(0);
    let t = time(ctx.opts.reps(), || count = f());
    match count {
        Ok(n) => {
            let r = n as f64 / t.as_secs_f64();
            fact(
                name,
                &format!("{:.1} M/s", r / 1e6),
                &format!("{:.0} M/s", TARGET / 1e6),
                &format!("{:.2}x", r / TARGET),
                "descriptors/s >= 10 M/s",
                Some(r >= TARGET),
            );
        }
        Err(e) => {
            fact(name, "-", "-", "-", "descriptors/s >= 10 M/s", None);
            super::note(&format!("FAILED: {e}"));
        }
    }
}

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    if o.want("dge-generate") {
        // IndirectLoad: a 1M-row table of 32 fp32, 1M uniform indices (int32 decoded to u64).
        let mut rng = SplitMix64::new(7);
        let idx: Vec<u64> = (0..N).map(|_| rng.below(N as u64)).collect();
        let table_pairs = [ApPair::new(1, 1), ApPair::new(32, N as i64)];
        let dense_pairs = [ApPair::new(32, N as i64), ApPair::new(1, 32)];
        let bytes = (N * 32 * 4) as u64;
        let table = Operand {
            name: "ins[0]",
            base: 1 << 40,
            layout: Layout::flat(0, bytes),
            pairs: &table_pairs,
            offset: 0,
        };
        let dense = Operand {
            name: "outs[0]",
            base: 2 << 40,
            layout: Layout::flat(0, bytes),
            pairs: &dense_pairs,
            offset: 0,
        };
        let mut out: Vec<Descriptor> = Vec::with_capacity(N);
        rate(ctx, "dge-generate IndirectLoad plan, 1M indices", || {
            out.clear();
            generate::indirect_rows(
                Direction::Gather,
                &table,
                &idx,
                &dense,
                None,
                indirection::Oob::Skip,
                1,
                Dtype::Float32,
                &mut out,
            )
            .map_err(|e| e.to_string())?;
            Ok(out.len())
        });
        let ids: Vec<u32> = idx.iter().map(|&v| v as u32).collect();
        let req = Indirect1d {
            mode: IndirectMode::Src,
            src: 1 << 40,
            src_step: 128,
            dst: 2 << 40,
            dst_step: 128,
            elem_size: 128,
            srx_idx_max: (N - N / 16) as u64,
            dst_idx_max: 0,
            compute_op: ComputeOp::None,
            dtype: Dtype::Float32,
        };
        rate(ctx, "dge-generate DMA_INDIRECT1D, 1M indices (6% OOB)", || {
            out.clear();
            generate::indirect1d(&req, &ids, &[], &mut out).map_err(|e| e.to_string())?;
            Ok(out.len())
        });
        // A contiguous run of 2M fp32 over arena rows of 2 elements (8 bytes, 64 apart): one
        // descriptor per row crossing.
        let run = [ApPair::new(1, 2 * N as i64)];
        let arena = Layout::partitioned(0, N as u64, 8, 64);
        let src = Operand { name: "ins[0]", base: 1 << 40, layout: arena, pairs: &run, offset: 0 };
        let dst = Operand {
            name: "outs[0]",
            base: 2 << 40,
            layout: Layout::flat(0, 8 * N as u64),
            pairs: &run,
            offset: 0,
        };
        rate(ctx, "dge-generate direct copy split at 1M row crossings", || {
            out.clear();
            generate::direct(DgeKind::Direct2D, &src, &dst, Dtype::Float32, &mut out)
                .map_err(|e| e.to_string())?;
            Ok(out.len())
        });
    }
    if o.want("dge-exec-direct2d") {
        const BYTES: usize = 64 << 20;
        const DESC: usize = 4096;
        let (sb, db) = (1u64 << 40, 2u64 << 40);
        let mut m = FlatMemory::new();
        let fill: Vec<u8> = (0..BYTES).map(|i| (i * 31 + 7) as u8).collect();
        let ok = m.map(sb, fill.clone()) && m.map(db, vec![0u8; BYTES]);
        let list: Result<Vec<Descriptor>, String> = (0..BYTES / DESC)
            .map(|k| {
                let off = (k * DESC) as u64;
                Descriptor::new(
                    DgeKind::Direct2D,
                    sb + off,
                    db + off,
                    DESC as u32,
                    &[],
                    ComputeOp::None,
                    Dtype::Uint8,
                )
                .map_err(|e| e.to_string())
            })
            .collect();
        // Paired: each repetition times the list, then the memcpy, so load drift on a shared
        // machine hits both sides alike; medians of each.
        let mut dst = vec![0u8; BYTES];
        let mut base_t = Vec::new();
        let ours = match (ok, list) {
            (true, Ok(list)) => {
                let mut r = Ok(());
                let mut ours_t = Vec::new();
                for _ in 0..=o.reps() {
                    let t = Instant::now();
                    r = r.and(dge::execute(&list, &mut m).map_err(|e| e.to_string()));
                    ours_t.push(t.elapsed());
                    let t = Instant::now();
                    dst.copy_from_slice(std::hint::black_box(&fill));
                    base_t.push(t.elapsed());
                }
                r.map(|()| ms(median(ours_t.into_iter().skip(1))))
            }
            (false, _) => Err("cannot map the regions".to_owned()),
            (_, Err(e)) => Err(e),
        };
        let correct = m.region(db) == Some(fill.as_slice()) && std::hint::black_box(&dst) == &fill;
        let base = if base_t.is_empty() {
            ms(time(o.reps(), || dst.copy_from_slice(std::hint::black_box(&fill))))
        } else {
            ms(median(base_t.into_iter().skip(1)))
        };
        row(
            "dge-exec-direct2d 16384 x 4 KiB descriptors (64 MiB)",
            if correct { ours } else { Err("the descriptors did not copy the bytes".into()) },
            "memcpy of the same 64 MiB",
            Ok(base),
            Goal::Within(1.3),
        );
        // The same descriptors in a shuffled order: nothing coalesces, one 4 KiB copy each
        // (information: how much of the row above is the coalescing).
        let mut order: Vec<u64> = (0..(BYTES / DESC) as u64).collect();
        let mut rng = SplitMix64::new(11);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below_usize(i + 1));
        }
        let shuffled: Result<Vec<Descriptor>, String> = order
            .iter()
            .map(|&k| {
                let off = k * DESC as u64;
                Descriptor::new(
                    DgeKind::Direct2D,
                    sb + off,
                    db + off,
                    DESC as u32,
                    &[],
                    ComputeOp::None,
                    Dtype::Uint8,
                )
                .map_err(|e| e.to_string())
            })
            .collect();
        let ours = shuffled.and_then(|list| {
            let mut r = Ok(());
            let t = time(o.reps(), || r = dge::execute(&list, &mut m).map_err(|e| e.to_string()));
            r.map(|()| ms(t))
        });
        row(
            "dge-exec-direct2d the same, shuffled (no coalescing)",
            ours,
            "memcpy of the same 64 MiB",
            Ok(base),
            Goal::Info,
        );
    }
}
