//! The indirect-op rows (issue "indirection"): IndirectLoad against a C loop that memcpys each
//! row, and the serial IndirectSaveAccumulate (fp32, bf16) against a C loop doing the same
//! in-order adds (the bf16 one rounding at every step). Both sides read the same index file.

use super::kernels::{npy, time_sim};
use super::program::Prog;
use super::{Ctx, Goal, peers, row};
use simulator::npy::Npy;
use test_rng::SplitMix64;

const D: u64 = 128;
const IDS: u64 = 65_536;

/// `n` uniform row ids below `rows` (a SplitMix64 stream is the bench's deterministic source of
/// indices).
fn uniform_ids(n: u64, rows: u64) -> Vec<i32> {
    let mut rng = SplitMix64::new(1);
    (0..n).map(|_| rng.below(rows) as i32).collect()
}

/// `n` Zipf(1.1) row ids below `rows` (rank r has weight 1/(r+1)^1.1), by inverse CDF.
fn zipf_ids(n: u64, rows: u64) -> Vec<i32> {
    let mut cdf = Vec::with_capacity(rows as usize);
    let mut acc = 0.0f64;
    for r in 0..rows {
        acc += 1.0 / ((r + 1) as f64).powf(1.1);
        cdf.push(acc);
    }
    let mut rng = SplitMix64::new(2);
    (0..n)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * acc;
            cdf.partition_point(|&c| c < u).min(rows as usize - 1) as i32
        })
        .collect()
}

/// The ids as an int32 `[1, n]` input and as the C baseline's raw file.
fn ids_input(ctx: &Ctx, name: &str, ids: &[i32]) -> Result<(Npy, String), String> {
    let data: Vec<u8> = ids.iter().flat_map(|v| v.to_le_bytes()).collect();
    let path = ctx.dir.join(format!("{name}.i32"));
    std::fs::write(&path, &data).map_err(|e| format!("{}: {e}", path.display()))?;
    let npy = Npy { descr: "<i4".to_owned(), shape: vec![1, ids.len() as u64], data };
    Ok((npy, path.display().to_string()))
}

/// A physical AP over `mem` from `(step, num)` pairs.
fn ap(mem: &str, dt: &str, pairs: &[(u64, u64)]) -> String {
    let p: Vec<String> = pairs.iter().map(|(s, n)| format!("[{s},{n}]")).collect();
    format!(r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"{dt}","ap":[{}]}}"#, p.join(","))
}

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    if o.want("indirect-load") {
        let rows = 1_000_000;
        let r = ids_input(ctx, "load", &uniform_ids(IDS, rows)).map(|(ids, file)| {
            let mut p = Prog::default();
            p.flat("tab", "ExternalInput", "float32", rows, D);
            p.flat("ids", "ExternalInput", "int32", 1, IDS);
            p.sb("t", "float32", 128, IDS / 128 * D);
            let per = IDS / 128;
            p.push(format!(
                r#"{{"opcode":"IndirectLoad","name":"g","engine":"DMA","ins":[{},{}],"outs":[{}]}}"#,
                ap("tab", "float32", &[(D, rows)]),
                ap("ids", "int32", &[(1, IDS)]),
                ap("t", "float32", &[(per * D, 128), (D, per), (1, D)]),
            ));
            let tab = npy("float32", rows, D);
            let ours = time_sim(&p.text(), &[("tab", &tab), ("ids", &ids)], o.reps());
            (ours, file)
        });
        let (ours, base) = match r {
            Ok((ours, file)) => {
                let c = peers::run_c(&ctx.c, "indirect", &args("gather", rows, &file, o.reps()));
                (ours, peers::pick(&c, "huge"))
            }
            Err(e) => (Err(e.clone()), Err(e)),
        };
        row(
            "indirect-load 65536 random rows x 128 fp32 of 1M into a fresh SB tile",
            ours,
            "C memcpy per row (fresh THP dst)",
            base,
            Goal::Within(1.3),
        );
    }
    for (dt, mode, target) in [("float32", "add32", 2.0), ("bfloat16", "add16", 3.0)] {
        let name = format!("indirect-save-acc {dt} 65536 Zipf rows x 128 into 100k rows");
        if !o.want(&name) {
            continue;
        }
        let rows = 100_000;
        let r = ids_input(ctx, mode, &zipf_ids(IDS, rows)).map(|(ids, file)| {
            let mut p = Prog::default();
            p.flat("tab", "ExternalInput", dt, rows, D);
            p.flat("val", "ExternalInput", dt, IDS, D);
            p.flat("ids", "ExternalInput", "int32", 1, IDS);
            p.push(format!(
                r#"{{"opcode":"IndirectSaveAccumulate","name":"s","engine":"DMA","ins":[{},{}],"outs":[{}],"num_indices":1,"entry_step_elements":{D},"op":"add"}}"#,
                ap("val", dt, &[(D, IDS), (1, D)]),
                ap("ids", "int32", &[(1, IDS)]),
                ap("tab", dt, &[(D, rows)]),
            ));
            let (tab, val) = (npy(dt, rows, D), npy(dt, IDS, D));
            let ours = time_sim(&p.text(), &[("tab", &tab), ("val", &val), ("ids", &ids)], o.reps());
            (ours, file)
        });
        let (ours, base) = match r {
            Ok((ours, file)) => {
                let c = peers::run_c(&ctx.c, "indirect", &args(mode, rows, &file, o.reps()));
                (ours, peers::pick(&c, "warm"))
            }
            Err(e) => (Err(e.clone()), Err(e)),
        };
        let base_name =
            if dt == "float32" { "C serial add loop" } else { "C serial add, bf16 round per step" };
        row(&name, ours, base_name, base, Goal::Within(target));
    }
}

fn args(mode: &str, rows: u64, file: &str, reps: usize) -> Vec<String> {
    vec![mode.to_owned(), rows.to_string(), D.to_string(), file.to_owned(), reps.to_string()]
}
