//! `birsim run PROGRAM.json`: runs a program on `.npy` inputs and writes its outputs as `.npy`
//! (each atomically, only after the whole program ran), optionally with a streamed JSONL trace,
//! `--stats`, and a progress bar on a terminal for runs longer than about two seconds.

use super::common::{
    Limits, Outputs, Staged, any_path, expected, leave_to_exit, load, option, pair, problems, set,
};
use super::{Exit, bad};
use bir_ir::TensorKind;
use numerics::Profile;
use simulator::{Outcome, Simulator, io};
use std::path::PathBuf;

/// Run a program on .npy inputs and write its outputs as .npy
///
/// NAME is an allocation (memory location set) or memory location name. Tensors are .npy files:
/// float32 as <f4, float16 as <f2, integers as themselves, and bfloat16, fp8, float32r and the
/// packed _x4 types as unsigned integers of the same width holding the raw bits. An input's
/// shape must equal its allocation's tensor_shape.
///
/// Every Input allocation needs an --input (or --allow-uninit-inputs, to run it as 0xFF bytes).
/// Outputs are written only after the whole program ran, each atomically but not durably
/// (birsim never fsyncs). Outputs must be regular files or new files in existing folders (a
/// symlink is written through to its target); every output path is checked before the run, and
/// none is replaced unless all are written. At most 100 problems are printed. A program that
/// would execute more than --max-instructions (default 10^9, loop iterations counted) is
/// refused before it runs.
///
/// A run that needs more memory than the host can give stops with a `budget` fault (exit 1), or
/// exit 2 while reading the program or an input; birsim never aborts (docs/robustness.md). A run
/// longer than about two seconds shows a progress bar on stderr when stderr is a terminal (and
/// nothing otherwise).
///
/// Exit codes: 0 ok, 1 the program faulted (the fault names the instruction, operand and
/// values), 2 bad input or usage, 3 internal error.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The BIR JSON program
    #[arg(value_name = "PROGRAM.json")]
    pub program: PathBuf,
    /// Loads tensor NAME from a .npy file before the run; repeatable
    #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = pair)]
    pub inputs: Vec<(String, PathBuf)>,
    /// Writes tensor NAME to a .npy file after the run; repeatable
    #[arg(long = "output", value_name = "NAME=FILE.npy", value_parser = pair)]
    pub outputs: Vec<(String, PathBuf)>,
    /// Writes every output allocation as DIR/NAME.npy
    #[arg(long, value_name = "DIR", value_parser = any_path())]
    pub out_dir: Option<PathBuf>,
    /// The numerics profile [default: refsim]
    ///
    /// refsim is the reference interpreter's numerics; nki is ml_dtypes/NumPy, what the NKI CPU
    /// simulator computes (docs/fidelity.md lists every difference).
    #[arg(long, value_enum, value_name = "PROFILE")]
    pub profile: Option<ProfileName>,
    /// Streams one JSON line per executed instruction to FILE (kept when the program faults)
    ///
    /// Each line has the instruction's index, name, opcode, bytes written, the checksums of what
    /// it wrote, its elapsed time and each output region (location, AP, dtype, checksum;
    /// docs/trace.md).
    #[arg(long, value_name = "FILE.jsonl", value_parser = any_path())]
    pub trace: Option<PathBuf>,
    /// Adds each output region's bytes (hex) to the trace, so `birsim diff` can show values
    #[arg(long, requires = "trace")]
    pub trace_data: bool,
    /// Compares output NAME with a .npy array after the run; repeatable
    ///
    /// Prints `NAME: matches (...)` or the first ten mismatching elements, each with the last
    /// instruction that wrote it (write provenance: found by running the program a second time
    /// only when something mismatches), on stdout. The array's dtype and shape must be NAME's
    /// (as for --input). A mismatch exits 1; the outputs are still written.
    #[arg(long = "expect", value_name = "NAME=FILE.npy", value_parser = pair)]
    pub expects: Vec<(String, PathBuf)>,
    /// With --expect: accept values at most N units in the last place apart in the output's
    /// own dtype [default: exact]
    ///
    /// Floats on their ordered sign-magnitude bits (+0 and -0 are 0 apart), per lane for the _x4
    /// dtypes; two NaNs match, a NaN never matches a number; integers by their difference
    /// (docs/fidelity.md V4-V6).
    #[arg(long, value_name = "N", requires = "expects", value_parser = super::diff::ulp, allow_negative_numbers = true)]
    pub ulp: Option<u64>,
    /// Overrides the profile's FP8 overflow rule [default: refsim on, nki off]
    ///
    /// on: saturate, the reference interpreter's libBIR default; off: overflow and FP32_MIN/MAX
    /// become +-Inf, as AWS documents for the hardware (docs/fidelity.md N19).
    #[arg(long, value_enum, value_name = "ON_OFF")]
    pub fp8_saturate: Option<OnOff>,
    /// What TensorScalarCache's reverse flags do [default: direction]
    ///
    /// direction also scans from the last element; operands only swaps operands
    /// (docs/fidelity.md S14).
    #[arg(long, value_name = "WHAT", value_parser = option("tsc_reverse"))]
    pub tsc_reverse: Option<String>,
    /// Prints on stderr, after the run, the time and bytes written per opcode and the slowest
    /// instructions
    ///
    /// The trace records each instruction's elapsed time too.
    #[arg(long)]
    pub stats: bool,
    /// Caps the threads a kernel uses [default: every core; env: BIRSIM_THREADS]
    ///
    /// Results are bit-identical for every count. Without --threads, the BIRSIM_THREADS
    /// environment variable is used when set.
    #[arg(long, value_name = "N", value_parser = option("threads"), allow_negative_numbers = true)]
    pub threads: Option<String>,
    /// Runs Input allocations without an --input as uninitialised memory (0xFF bytes)
    #[arg(long)]
    pub allow_uninit_inputs: bool,
    /// What an indirect instruction does with an index outside its table [default: fault]
    ///
    /// For an index that is not -1 but lands outside its table: fault (an out-of-bounds fault
    /// naming the index, nothing written) or skip (treated like -1, its destination left
    /// unchanged; docs/fidelity.md I2).
    #[arg(long, value_name = "POLICY", value_parser = option("oob"))]
    pub oob: Option<String>,
    /// What a DMABlock met in the instruction stream does [default: skip]
    ///
    /// skip: a definition, run only when a DMATrigger fires it; run: its descriptors run once
    /// there too (docs/fidelity.md G4).
    #[arg(long, value_name = "WHAT", value_parser = option("dma_block_in_stream"))]
    pub dma_block_in_stream: Option<String>,
    /// How a Matmult sums its products [default: ascending]
    ///
    /// ascending: each product rounded to fp32, added k = 0, 1, ... from +0 with fp32 adds;
    /// fma: the same chain through fused multiply-adds (docs/fidelity.md M3).
    #[arg(long, value_name = "ORDER", value_parser = option("matmul"))]
    pub matmul: Option<String>,
    /// What an Activation input outside its function's valid range does [default: warn]
    ///
    /// warn: computed, and one warning line per instruction after the run (the count and an
    /// example); fault: a numerics fault naming the value, nothing written (docs/fidelity.md E6).
    #[arg(long, value_name = "WHAT", value_parser = option("ranges"))]
    pub ranges: Option<String>,
    /// Short for --ranges fault
    #[arg(long, conflicts_with = "ranges")]
    pub strict_ranges: bool,
    /// What reading a register never written does [default: fault]
    ///
    /// fault: an uninitialized fault naming the register and its engine; ones: it reads
    /// 0xFFFFFFFF, the reference's start value (docs/fidelity.md B2).
    #[arg(long, value_name = "WHAT", value_parser = option("uninit_registers"))]
    pub uninit_registers: Option<String>,
    /// What an instruction reading memory nothing wrote does [default: warn]
    ///
    /// warn: it runs, and one warning line per instruction follows the run (operand, location,
    /// element); fault: an uninitialized fault, nothing written; off: not checked. Instructions
    /// with can_read_uninit are never reported (docs/fidelity.md B10).
    #[arg(long, value_name = "WHAT", value_parser = option("uninit_reads"))]
    pub uninit_reads: Option<String>,
    /// Short for --uninit-reads fault
    #[arg(long, conflicts_with = "uninit_reads")]
    pub strict_uninit: bool,
    /// Reports instructions whose float outputs hold NaN or Inf [default: off]
    ///
    /// warn: one warning line per instruction after the run; fault: a numerics fault at the
    /// instruction (its outputs written); the reference's --check-inst-output-NaN
    /// (docs/fidelity.md B11).
    #[arg(long, value_name = "WHAT", value_parser = option("nan_outputs"))]
    pub nan_outputs: Option<String>,
    #[command(flatten)]
    pub limits: Limits,
}

/// `--profile`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ProfileName {
    /// The reference interpreter's numerics
    Refsim,
    /// ml_dtypes/NumPy, as the NKI CPU simulator computes
    Nki,
}

/// `--fp8-saturate`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum OnOff {
    /// Saturate FP8 overflow
    On,
    /// FP8 overflow becomes +-Inf
    Off,
}

/// Runs `birsim run`.
pub fn run(o: &RunArgs) -> Result<(), Exit> {
    let mut profile = match o.profile {
        None | Some(ProfileName::Refsim) => Profile::refsim(),
        Some(ProfileName::Nki) => Profile::nki(),
    };
    if let Some(sat) = o.fp8_saturate {
        profile.fp8_saturate = matches!(sat, OnOff::On);
    }
    // The simulator options, each flag's value through Options::set (simulator::Options::NAMES).
    let mut options = o.limits.options()?;
    if o.threads.is_none()
        && let Ok(v) = std::env::var("BIRSIM_THREADS")
    {
        options.set("threads", &v).map_err(|e| bad(format!("BIRSIM_THREADS {v}: {}", expected(&e))))?;
    }
    set(&mut options, "threads", &o.threads)?;
    set(&mut options, "tsc_reverse", &o.tsc_reverse)?;
    set(&mut options, "oob", &o.oob)?;
    set(&mut options, "dma_block_in_stream", &o.dma_block_in_stream)?;
    set(&mut options, "matmul", &o.matmul)?;
    set(&mut options, "ranges", &o.ranges)?;
    if o.strict_ranges {
        set(&mut options, "ranges", &Some("fault".to_owned()))?;
    }
    set(&mut options, "uninit_registers", &o.uninit_registers)?;
    set(&mut options, "uninit_reads", &o.uninit_reads)?;
    if o.strict_uninit {
        set(&mut options, "uninit_reads", &Some("fault".to_owned()))?;
    }
    set(&mut options, "nan_outputs", &o.nan_outputs)?;
    let program = load(&o.program, &o.limits)?;
    let valid =
        bir_ir::validate(&program, &options.validate_options()).map_err(|d| problems(&o.program, &d))?;
    let f = &program.functions[0];

    // Resolve every name and read every input header before running anything.
    let mut inputs = Vec::new();
    let mut given = Vec::new();
    for (name, path) in &o.inputs {
        let mut open = || -> Result<_, String> {
            given.push(io::resolve(f, name)?.loc);
            let file =
                std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            io::open_input(f, name, std::io::BufReader::new(file), len)
                .map_err(|e| format!("{}: {e}", path.display()))
        };
        inputs.push(open().map_err(|e| bad(format!("--input {name}: {e}")))?);
    }
    // An input allocation nobody loaded would run on the uninitialised marker: name it.
    let missing: Vec<&str> = f
        .allocations
        .iter()
        .filter(|a| {
            matches!(
                a.kind,
                TensorKind::ExternalInput | TensorKind::ExternalInputParameter | TensorKind::Input
            ) && !a.locations.iter().any(|l| given.contains(l))
        })
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() && !o.allow_uninit_inputs {
        return Err(bad(format!(
            "no --input for {} (pass --allow-uninit-inputs to run them as uninitialised memory, 0xFF bytes)",
            missing.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
        )));
    }
    let resolve =
        |name: &str, flag: &str| io::resolve(f, name).map_err(|e| bad(format!("{flag} {name}: {e}")));
    let mut outputs: Vec<(io::Tensor, PathBuf, &str)> = Vec::new();
    for (name, path) in &o.outputs {
        outputs.push((resolve(name, "--output")?, path.clone(), "--output"));
    }
    if let Some(dir) = &o.out_dir {
        if !dir.is_dir() {
            return Err(bad(format!("--out-dir {}: not a directory", dir.display())));
        }
        for a in f.allocations.iter().filter(|a| a.kind.is_output()) {
            outputs.push((resolve(&a.name, "--out-dir")?, dir.join(format!("{}.npy", a.name)), "--out-dir"));
        }
    }
    // Every expected array is read and checked against its output before the run.
    let expects = super::diff::open_expects(f, &o.expects)?;
    // Every output path is checked, and its temporary file created, before the run.
    let mut staged = Outputs::default();
    for (_, path, flag) in &outputs {
        staged.0.push(Staged::prepare(path, flag)?);
    }
    let trace = match &o.trace {
        Some(path) => Some(Outputs(vec![Staged::prepare(path, "--trace")?])),
        None => None,
    };

    let mut sim = Simulator::new(valid, profile);
    // Only the outputs are read back: every other location is freed after its last use.
    let keep: Vec<bir_ir::LocId> =
        outputs.iter().map(|(t, _, _)| t.loc).chain(expects.iter().map(super::diff::Expect::loc)).collect();
    sim.free_dead_locations(&keep);
    sim.set_options(options);
    if o.trace_data {
        sim.enable_trace_data();
    }
    // The trace streams to its temporary file as instructions complete (bounded memory).
    type Sink = std::rc::Rc<std::cell::RefCell<(std::io::BufWriter<std::fs::File>, Option<String>)>>;
    let sink: Option<Sink> = match &trace {
        Some(t) => {
            let t = &t.0[0];
            let file = std::fs::File::create(&t.tmp)
                .map_err(|e| bad(format!("cannot write {}: {e}", t.target.display())))?;
            Some(std::rc::Rc::new(std::cell::RefCell::new((std::io::BufWriter::new(file), None))))
        }
        None => None,
    };
    if let Some(sink) = &sink {
        use std::io::Write;
        let sink = sink.clone();
        sim.enable_trace_sink(move |e| {
            let line = simulator::trace::TraceRecord::from(e).to_json();
            let mut s = sink.borrow_mut();
            if let Err(x) = writeln!(s.0, "{line}") {
                s.1.get_or_insert(x.to_string());
            }
        });
    }
    if o.stats {
        sim.enable_stats();
    }
    for input in inputs {
        io::load_input(&mut sim, input).map_err(bad)?;
    }
    let bar = progress_bar(&mut sim);
    let outcome = sim.run();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let outcome = outcome.map_err(|e| Exit(3, e.to_string()))?;
    let executed = sim.executed();
    if let Some(stats) = sim.stats() {
        print_stats(stats);
    }
    // One line per instruction whose inputs left the hardware's valid range (fidelity E6), or
    // that a checker reported (B10, B11).
    for w in sim.warnings() {
        eprintln!("birsim: warning: {w}");
    }
    if let (Some(sink), Some(t)) = (&sink, trace) {
        use std::io::Write;
        let mut s = sink.borrow_mut();
        let flushed = s.0.flush().map_err(|e| e.to_string());
        if let Some(e) = s.1.clone().or(flushed.err()) {
            return Err(bad(format!("cannot write the trace {}: {e}", t.0[0].target.display())));
        }
        drop(s);
        // The trace is kept even when the program faulted: it shows what ran.
        t.commit()?;
    }
    if let Outcome::Faulted(fault) = outcome {
        return Err(Exit(1, format!("the program faulted after {executed} instruction(s): {fault}")));
    }
    // Each output streams from memory into its temporary file; all are renamed into place only
    // when every one is whole.
    for ((t, _, _), s) in outputs.iter().zip(&staged.0) {
        s.write(|w| io::save(&mut sim, t, w))?;
    }
    staged.commit()?;
    if !expects.is_empty() {
        use super::diff;
        let tolerance = o.ulp.map_or(simulator::diff::Tolerance::Exact, simulator::diff::Tolerance::Ulp);
        let mut reports = diff::compare(&mut sim, &expects, tolerance, &profile)?;
        if reports.iter().any(|r| !r.matches()) {
            // Write provenance: the same run again (runs are deterministic), watching only the
            // listed mismatching elements' bytes.
            let mut again = Simulator::new(valid, profile);
            again.set_options(options);
            again.free_dead_locations(&keep);
            diff::load_inputs(&mut again, &o.inputs)?;
            let watch = diff::watch_list(&again, &expects, &reports);
            again.watch(watch);
            again.run().map_err(|e| Exit(3, e.to_string()))?;
            diff::attach(&mut reports, again.writers());
        }
        diff::finish(&reports)?;
    }
    eprintln!("birsim: ok: {executed} instruction(s) executed, {} output(s) written", outputs.len());
    if std::env::var_os("BIRSIM_REPORT_PEAK_RSS").is_some() {
        // For `cargo xtask bench`: the peak resident set, from the kernel's own accounting.
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
            eprintln!("birsim: peak {line}");
        }
    }
    // The process exits next: no need to walk the memories and the program to free them.
    leave_to_exit(sim);
    leave_to_exit(program);
    Ok(())
}

/// How long a run goes before its progress bar appears: 2 s (debug builds: the test switch
/// `BIRSIM_TEST_PROGRESS_AFTER_MS`, so a test can see the bar, or its absence, on a short run).
fn progress_after() -> std::time::Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("BIRSIM_TEST_PROGRESS_AFTER_MS").ok().and_then(|v| v.parse().ok()) {
        return std::time::Duration::from_millis(ms);
    }
    std::time::Duration::from_secs(2)
}

/// A progress bar on stderr for a run longer than [`progress_after`], only when stderr is a
/// terminal (nothing at all is drawn, or even hooked into the run, otherwise). The caller
/// clears it when the run ends.
fn progress_bar(sim: &mut Simulator<'_>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::hidden());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "birsim: {bar:40} {human_pos}/{human_len} instructions, {elapsed} (eta {eta})",
    ) {
        bar.set_style(style);
    }
    let (start, after) = (std::time::Instant::now(), progress_after());
    let shown = bar.clone();
    let mut visible = false;
    sim.set_progress(move |executed, total| {
        if !visible {
            if start.elapsed() < after {
                return;
            }
            visible = true;
            shown.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        shown.set_length(total);
        shown.set_position(executed);
    });
    Some(bar)
}

/// `--stats`: per opcode and the slowest instructions, on stderr.
fn print_stats(s: &simulator::Stats) {
    let ms = |ns: u64| ns as f64 / 1e6;
    eprintln!("birsim: stats: {:<28} {:>10} {:>12} {:>14}", "opcode", "count", "ms", "bytes written");
    let mut rows = s.per_opcode.clone();
    rows.sort_by_key(|r| std::cmp::Reverse(r.2));
    for (op, n, ns, bytes) in rows {
        eprintln!("birsim: stats: {op:<28} {n:>10} {:>12.3} {bytes:>14}", ms(ns));
    }
    eprintln!("birsim: stats: slowest instructions:");
    for (ns, index, name, op) in &s.slowest {
        eprintln!("birsim: stats:   #{index} '{name}' ({op}) {:.3} ms", ms(*ns));
    }
}
