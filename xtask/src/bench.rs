//! `cargo xtask bench [--quick] [--large] [--no-python] [PATTERN...]`: every speed target as a ratio against a
//! baseline measured in the same run, never a stored figure (DEVELOPERS.md: never timed unit tests).
//!
//! - Practical limits: C loops under `xtask/bench/c/`, compiled now with `cc -O3 -march=native
//!   -ffp-contract=off` into a temporary folder (no FMA contraction: the same roundings as ours).
//! - Peers: NumPy / ml_dtypes through the pinned oracle environment (`.venv/bin/python` at the
//!   repository root, or at the main worktree's root when this is a linked worktree), running the
//!   scripts under `xtask/bench/py/`. Without it those rows say "peer not measured".
//! - ISA words: decode + validate of 1 M 64-byte words against a Rust copy loop, as words/s.
//! - Matmult (`matmul ...` rows): one 128 x 128 x 512 product in fp32 against a C loop summing in
//!   the same order (bits compared) and in bfloat16 against the fp32 row; a tiled 1024^3 program
//!   (DRAM in, PSUM accumulation, DRAM out) beside NumPy's `A.T @ B`, at 1 vs 2 threads, and its
//!   peak RSS as a fresh `birsim run`.
//! - Activation (`activation ...` rows): one Exp over a 128 x 65536 fp32 SB tile against a C loop
//!   calling glibc's exp in double and rounding to float (the libm crate's exp in C beside it,
//!   bits compared) and against NumPy's f64 exp; Gelu and Silu against their C twins; 1 vs 2
//!   threads.
//! - End to end: a fresh `birsim run` process (the release binary, built first) against the same
//!   computation as a fresh NumPy process, paired runs, programs and inputs generated here.
//!
//! `--quick`: fewer repetitions, no 256 MiB row. `--large`: also the 1 GiB row (about a minute
//! and 3 GiB of temporary files). `--no-python`: as on a machine without the oracle environment.
//! A PATTERN keeps the rows whose names contain it.
//!
//! Rows print birsim's time, the baseline's, the ratio, the target and whether it is met. The bench
//! never fails: it is a report, not a gate (it is not run in CI).

mod activation;
mod dge;
mod dispatch;
mod e2e;
mod indirect;
mod isa_run;
mod isa_words;
mod kernels;
mod matmul;
mod nki;
mod peers;
mod program;
mod vector;

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What the command line asked for.
pub struct Opts {
    /// Fewer repetitions and no 256 MiB end-to-end row.
    pub quick: bool,
    /// Also the 1 GiB end-to-end row (and the 1 GiB vs 256 MiB scaling target).
    pub large: bool,
    /// Behave as without the oracle environment (every peer row: "not measured").
    no_python: bool,
    patterns: Vec<String>,
}

impl Opts {
    /// Whether a row named `name` was asked for.
    pub fn want(&self, name: &str) -> bool {
        self.patterns.is_empty() || self.patterns.iter().any(|p| name.contains(p.as_str()))
    }

    /// Repetitions of an in-process kernel.
    pub fn reps(&self) -> usize {
        if self.quick { 3 } else { 7 }
    }

    /// Paired end-to-end runs.
    pub fn pairs(&self) -> usize {
        if self.quick { 3 } else { 5 }
    }
}

/// The tools the rows use, found or built once.
pub struct Ctx {
    pub opts: Opts,
    /// A temporary folder, removed when the bench ends.
    pub dir: PathBuf,
    /// The compiled C baselines' folder, or why there is none.
    pub c: Result<PathBuf, String>,
    /// The oracle environment's interpreter (with NumPy and ml_dtypes), or why there is none.
    pub python: Result<PathBuf, String>,
    /// The release `birsim` binary, or why there is none.
    pub birsim: Result<PathBuf, String>,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Opts {
    /// The options, or `None` for `-h`/`--help`; an unknown `-`option is an error.
    pub fn parse(args: &[String]) -> Result<Option<Opts>, String> {
        let mut opts = Opts { quick: false, large: false, no_python: false, patterns: Vec::new() };
        for a in args {
            match a.as_str() {
                "--quick" => opts.quick = true,
                "--large" => opts.large = true,
                "--no-python" => opts.no_python = true,
                "--help" | "-h" => return Ok(None),
                o if o.starts_with('-') => return Err(format!("unknown option `{o}`")),
                _ => opts.patterns.push(a.clone()),
            }
        }
        Ok(Some(opts))
    }
}

/// Runs the rows `opts` ask for.
pub fn run(opts: Opts) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("birsim-bench-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(format!("cannot create {}: {e}", dir.display()));
    }
    let c = peers::compile_c(&dir.join("c"));
    let python = if opts.no_python { Err("--no-python".to_owned()) } else { peers::find_python() };
    let birsim = peers::build_birsim();
    let ctx = Ctx { opts, dir, c, python, birsim };
    ctx.describe();
    header();
    kernels::run(&ctx);
    matmul::run(&ctx);
    activation::run(&ctx);
    vector::run(&ctx);
    dispatch::run(&ctx);
    dispatch::run_register_loop(&ctx);
    indirect::run(&ctx);
    dge::run(&ctx);
    isa_words::run(&ctx);
    isa_run::run(&ctx);
    e2e::run(&ctx);
    nki::run(&ctx);
    Ok(())
}

impl Ctx {
    fn describe(&self) {
        let show = |what: &str, r: &Result<PathBuf, String>| match r {
            Ok(p) => println!("{what}: {}", p.display()),
            Err(e) => println!("{what}: none ({e})"),
        };
        show("C baselines (cc -O3 -march=native -ffp-contract=off)", &self.c);
        show("peer interpreter (NumPy / ml_dtypes)", &self.python);
        if let Some(v) = self.python.as_deref().ok().and_then(peers::python_versions) {
            println!("  {v}");
        }
        show("birsim (release)", &self.birsim);
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        if let Some(l1) = load.split_whitespace().next() {
            let busy = l1.parse::<f64>().is_ok_and(|l| l > cores as f64 * 0.75);
            let warn = if busy { " (busy machine: expect noisy ratios)" } else { "" };
            println!("load average {l1} on {cores} core(s){warn}");
        }
        println!(
            "mode: {}{}; times are medians (end to end: of paired fresh-process runs)",
            if self.opts.quick { "--quick" } else { "full" },
            if self.opts.large { " --large" } else { " (1 GiB row skipped: pass --large)" }
        );
    }
}

/// Median time of `reps` runs of `f` (after one warm-up run).
pub fn time(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    median((0..reps.max(1)).map(|_| {
        let s = Instant::now();
        f();
        s.elapsed()
    }))
}

/// The median of some durations (the upper one of an even count).
pub fn median(d: impl Iterator<Item = Duration>) -> Duration {
    let mut t: Vec<Duration> = d.collect();
    t.sort();
    t.get(t.len() / 2).copied().unwrap_or_default()
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A row's target: how its ratio is formed and the bound it must meet.
#[derive(Clone, Copy)]
pub enum Goal {
    /// Speed-up = baseline time / birsim time, at least this.
    Faster(f64),
    /// Time ratio = birsim time / baseline time, at most this.
    Within(f64),
    /// No target (information only): shows the speed-up, baseline time / birsim time.
    Info,
}

fn header() {
    println!(
        "{:<50} {:>11} {:>11} {:>8}  {:<40} verdict",
        "case", "birsim", "baseline", "ratio", "target (ratio is ...)"
    );
}

/// Prints one timed row. `base` is the baseline's name (`C memcpy`, `NumPy`, ...) and its time
/// in ms, or why it was not measured; `ours` is birsim's time in ms, or why it failed.
pub fn row(case: &str, ours: Result<f64, String>, base_name: &str, base: Result<f64, String>, goal: Goal) {
    let ours_s = ours.as_ref().map_or_else(|_| "-".to_owned(), |t| format!("{t:.2} ms"));
    let base_s = base.as_ref().map_or_else(|_| "-".to_owned(), |t| format!("{t:.2} ms"));
    let target = match goal {
        Goal::Faster(x) => format!("speed-up vs {base_name} >= {x}x"),
        Goal::Within(x) => format!("time / {base_name} <= {x}x"),
        Goal::Info => format!("speed-up vs {base_name} (no target)"),
    };
    let (ratio, verdict) = match (&ours, &base) {
        (Err(e), _) => ("-".to_owned(), format!("FAILED: {e}")),
        (Ok(_), Err(e)) => ("-".to_owned(), format!("peer not measured ({e})")),
        (Ok(o), Ok(b)) => match goal {
            Goal::Faster(x) => (format!("{:.2}x", b / o), met(b / o >= x)),
            Goal::Within(x) => (format!("{:.2}x", o / b), met(o / b <= x)),
            Goal::Info => (format!("{:.2}x", b / o), String::new()),
        },
    };
    println!("{case:<50} {ours_s:>11} {base_s:>11} {ratio:>8}  {target:<40} {verdict}");
}

/// Prints a row about something other than time (memory, a rate), already judged.
pub fn fact(case: &str, ours: &str, base: &str, ratio: &str, target: &str, verdict: Option<bool>) {
    let v = verdict.map(met).unwrap_or_default();
    println!("{case:<50} {ours:>11} {base:>11} {ratio:>8}  {target:<40} {v}");
}

/// A note under the row above it.
pub fn note(text: &str) {
    println!("    {text}");
}

fn met(ok: bool) -> String {
    if ok { "met".to_owned() } else { "NOT MET".to_owned() }
}
