//! End-to-end rows: what a user runs. A fresh `birsim run` process (program JSON and `.npy`
//! inputs generated here, outputs written) against a fresh Python process doing the same
//! computation with NumPy / ml_dtypes (`xtask/bench/py/e2e.py`). Both times include process
//! start-up (for Python: the interpreter and the NumPy import, ~0.1 s), reading the inputs and
//! writing the outputs. Runs are paired (birsim and NumPy back to back, the order alternating) and
//! each side's median is shown. Peak RSS: birsim's from `BIRSIM_REPORT_PEAK_RSS` (VmHWM),
//! Python's from VmHWM too (e2e.py explains why not `ru_maxrss`), judged against 1.1 x the bytes
//! of every tensor the program declares (inputs, SB tiles, outputs) + 50 MiB.

use super::program::{self, Prog, tile};
use super::{Ctx, Goal, fact, note, row};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One side's runs.
#[derive(Default)]
struct Side {
    ms: Vec<f64>,
    /// The process floor timed right after each run.
    floor: Vec<f64>,
    peak_kib: u64,
}

impl Side {
    fn median(&self) -> f64 {
        let mut t = self.ms.clone();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// The median of each run's time less the process floor timed beside it.
    fn net(&self) -> Option<f64> {
        let mut t: Vec<f64> = self.ms.iter().zip(&self.floor).map(|(a, b)| a - b).collect();
        if t.len() != self.ms.len() || t.is_empty() {
            return None;
        }
        t.sort_by(f64::total_cmp);
        Some(t[t.len() / 2])
    }
}

/// Runs a process; its wall time in ms and the peak RSS it reported on stderr (KiB).
pub(super) fn run_timed(cmd: &mut Command) -> Result<(f64, u64), String> {
    let s = Instant::now();
    let o = cmd.output().map_err(|e| e.to_string())?;
    let t = s.elapsed().as_secs_f64() * 1e3;
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        let last = err.lines().last().unwrap_or("").trim();
        return Err(format!("exit {}: {last}", o.status.code().unwrap_or(-1)));
    }
    let peak = err.lines().find_map(|l| {
        let v = l.split("VmHWM:").nth(1).or_else(|| l.split("peak_kib").nth(1))?;
        v.split_whitespace().next()?.parse().ok()
    });
    Ok((t, peak.unwrap_or(0)))
}

/// A generated case: its program, one input and one output.
struct Case {
    dir: PathBuf,
    prog: Prog,
    dt: &'static str,
    rows: u64,
    cols: u64,
    /// e2e.py's arguments after IN and OUT's mode (the mode first).
    py: Vec<String>,
}

impl Case {
    fn program(&self) -> PathBuf {
        self.dir.join("program.json")
    }
    fn input(&self) -> PathBuf {
        self.dir.join("x.npy")
    }
    fn out(&self, side: &str) -> PathBuf {
        self.dir.join(format!("y-{side}.npy"))
    }

    fn write(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        std::fs::write(self.program(), self.prog.text()).map_err(|e| e.to_string())?;
        program::write_npy(&self.input(), self.dt, self.rows, self.cols).map_err(|e| e.to_string())
    }

    fn birsim(&self, bin: &Path) -> Command {
        let mut c = Command::new(bin);
        c.arg("run").arg(self.program()).arg("--input").arg(format!("x={}", self.input().display()));
        c.arg("--output").arg(format!("y={}", self.out("birsim").display()));
        c.env("BIRSIM_REPORT_PEAK_RSS", "1");
        c
    }

    fn python(&self, py: &Path) -> Command {
        let mut c = Command::new(py);
        c.arg(super::peers::script("e2e.py")).arg(&self.py[0]).arg(self.input()).arg(self.out("numpy"));
        c.args(&self.py[1..]);
        c
    }

    /// Paired runs: (birsim, NumPy), each side an error if it ever failed.
    fn pairs(&self, ctx: &Ctx, n: usize) -> (Result<Side, String>, Result<Side, String>) {
        let mut ours: Result<Side, String> = match &ctx.birsim {
            Ok(_) => Ok(Side::default()),
            Err(e) => Err(e.clone()),
        };
        let mut peer: Result<Side, String> = match &ctx.python {
            Ok(_) => Ok(Side::default()),
            Err(e) => Err(e.clone()),
        };
        let record = |side: &mut Result<Side, String>, r: Result<(f64, u64), String>, floor: Command| match (
            side.as_mut(),
            r,
        ) {
            (Ok(s), Ok((t, peak))) => {
                s.ms.push(t);
                s.peak_kib = s.peak_kib.max(peak);
                let mut floor = floor;
                if let Ok((f, _)) = run_timed(&mut floor) {
                    s.floor.push(f);
                }
            }
            (Ok(_), Err(e)) => *side = Err(e),
            (Err(_), _) => {}
        };
        for k in 0..n {
            // Even pairs run birsim first, odd pairs NumPy first.
            for birsim_turn in [k % 2 == 0, k % 2 != 0] {
                // Each timed run writes a new file: the previous run's output is removed, and
                // the dirty pages of earlier runs written out, before the clock starts (for both
                // sides), so no run pays to flush or free (on this `discard`-mounted disk: to
                // discard) what an earlier run wrote.
                let _ = std::fs::remove_file(self.out(if birsim_turn { "birsim" } else { "numpy" }));
                let _ = Command::new("sync").status();
                if birsim_turn {
                    if let (Ok(_), Ok(bin)) = (&ours, &ctx.birsim) {
                        let r = run_timed(&mut self.birsim(bin));
                        record(&mut ours, r, birsim_floor(bin));
                    }
                } else if let (Ok(_), Ok(py)) = (&peer, &ctx.python) {
                    let r = run_timed(&mut self.python(py));
                    record(&mut peer, r, python_floor(py));
                }
            }
        }
        (ours, peer)
    }
}

/// Reports one case: its time row, its memory row and whether both sides wrote the same bits.
/// Returns birsim's median time.
fn report(ctx: &Ctx, case: &Case, name: &str, goal: Goal, bits_note: &str) -> Option<f64> {
    if let Err(e) = case.write() {
        row(name, Err(format!("cannot write the case: {e}")), "NumPy", Err("-".to_owned()), goal);
        return None;
    }
    let (ours, peer) = case.pairs(ctx, ctx.opts.pairs());
    let ours_ms = ours.as_ref().map(Side::median).map_err(Clone::clone);
    row(name, ours_ms.clone(), "NumPy", peer.as_ref().map(Side::median).map_err(Clone::clone), goal);
    if let (Ok(o), Ok(p)) = (&ours, &peer) {
        let mut r: Vec<f64> = o.ms.iter().zip(&p.ms).map(|(a, b)| b / a).collect();
        r.sort_by(f64::total_cmp);
        if let (Some(lo), Some(hi)) = (r.first(), r.last()) {
            note(&format!(
                "{} pairs; NumPy/birsim per pair {lo:.2}x .. {hi:.2}x (each run into a new output file, \
                 after `sync`)",
                r.len()
            ));
        }
        if let (Some(a), Some(b)) = (o.net(), p.net()) {
            let verdict = if a > 0.0 && b > 0.0 {
                format!("speed-up {:.2}x", b / a)
            } else {
                "start-up dominates: the net times are within its noise".to_owned()
            };
            note(&format!(
                "net of process start-up (each run less the floor timed beside it; not a target): \
                 birsim {a:.1} ms, NumPy {b:.1} ms: {verdict}"
            ));
        }
        let same = match npy_data_equal(&case.out("birsim"), &case.out("numpy")) {
            Ok(true) => "outputs: the same bits".to_owned(),
            Ok(false) => format!("outputs: DIFFERENT bits{bits_note}"),
            Err(e) => format!("outputs not compared: {e}"),
        };
        note(&same);
    }
    memory_row(case.prog.tensor_bytes, &ours, &peer);
    let _ = std::fs::remove_dir_all(&case.dir);
    ours_ms.ok()
}

fn mib(bytes: f64) -> f64 {
    bytes / (1u64 << 20) as f64
}

/// Peak RSS against 1.1 x the tensor bytes + 50 MiB (birsim judged; NumPy shown).
fn memory_row(tensor_bytes: u64, ours: &Result<Side, String>, peer: &Result<Side, String>) {
    let limit = 1.1 * mib(tensor_bytes as f64) + 50.0;
    let show = |s: &Result<Side, String>| match s {
        Ok(s) if s.peak_kib > 0 => format!("{:.0} MiB", s.peak_kib as f64 / 1024.0),
        _ => "-".to_owned(),
    };
    let (ratio, verdict) = match ours {
        Ok(s) if s.peak_kib > 0 => {
            let r = s.peak_kib as f64 / 1024.0 / limit;
            (format!("{r:.2}x"), Some(r <= 1.0))
        }
        _ => ("-".to_owned(), None),
    };
    let label = format!("  peak RSS ({:.0} MiB of tensors)", mib(tensor_bytes as f64));
    fact(
        &label,
        &show(ours),
        &show(peer),
        &ratio,
        &format!("birsim <= 1.1x tensors + 50 = {limit:.0} MiB"),
        verdict,
    );
}

/// The data offset of an `.npy` file (after its header).
fn npy_data_offset(head: &[u8]) -> Option<usize> {
    if head.len() < 12 || &head[..6] != b"\x93NUMPY" {
        return None;
    }
    match head[6] {
        1 => Some(10 + u16::from_le_bytes([head[8], head[9]]) as usize),
        _ => Some(12 + u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize),
    }
}

/// Whether two `.npy` files hold the same data bytes (headers may differ in padding).
fn npy_data_equal(a: &Path, b: &Path) -> Result<bool, String> {
    let open = |p: &Path| -> Result<std::io::BufReader<std::fs::File>, String> {
        let mut f =
            std::io::BufReader::new(std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?);
        let mut head = [0u8; 12];
        f.read_exact(&mut head).map_err(|e| e.to_string())?;
        let off = npy_data_offset(&head).ok_or_else(|| format!("{}: not an .npy file", p.display()))?;
        std::io::copy(&mut (&mut f).take(off as u64 - 12), &mut std::io::sink())
            .map_err(|e| e.to_string())?;
        Ok(f)
    };
    let (mut fa, mut fb) = (open(a)?, open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let na = read_full(&mut fa, &mut ba)?;
        let nb = read_full(&mut fb, &mut bb)?;
        if na != nb || ba[..na] != bb[..nb] {
            return Ok(false);
        }
        if na == 0 {
            return Ok(true);
        }
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(n)
}

const PARTS: u64 = 128;
const FREE: u64 = 65536;

pub fn run(ctx: &Ctx) {
    let o = &ctx.opts;
    if !["e2e-chain", "e2e-tiny", "e2e-reduce", "e2e-scale"].iter().any(|n| o.want(n)) {
        return;
    }
    floors(ctx);
    for dt in ["float32", "bfloat16"] {
        let name = format!("e2e-chain {dt} Load, 20 steps, Save 128x65536");
        if o.want(&name) {
            chain(ctx, dt, &name);
        }
    }
    let name = "e2e-tiny 100,000 one-element instructions";
    if o.want(name) {
        tiny(ctx, name);
    }
    let name = "e2e-reduce Load, TensorReduce add X, Save 128x65536";
    if o.want(name) {
        reduce(ctx, name);
    }
    scale_rows(ctx);
}

/// Measures and prints what starting a process costs each side (`birsim --version`; the Python
/// interpreter with the NumPy import), so the small rows can be read.
fn floors(ctx: &Ctx) {
    let median_of = |mut make: Box<dyn FnMut() -> Command>| -> Result<f64, String> {
        let mut t = Vec::new();
        for _ in 0..ctx.opts.pairs() {
            t.push(run_timed(&mut make())?.0);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    };
    let ours = ctx.birsim.clone().and_then(|b| median_of(Box::new(move || birsim_floor(&b))));
    let peer = ctx.python.clone().and_then(|p| median_of(Box::new(move || python_floor(&p))));
    let show = |r: &Result<f64, String>| {
        r.as_ref().map_or_else(|e| format!("not measured ({e})"), |t| format!("{t:.1} ms"))
    };
    println!(
        "end to end (fresh processes; start-up included on both sides): process floor birsim --version {}, \
         python e2e.py noop (interpreter + import numpy) {}",
        show(&ours),
        show(&peer)
    );
    note("each pair also times both floors, for the net figures below");
}

fn birsim_floor(bin: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--version");
    c
}

fn python_floor(py: &Path) -> Command {
    let mut c = Command::new(py);
    c.arg(super::peers::script("e2e.py")).arg("noop");
    c
}

/// (a), (b): Load, 20 chained TensorScalar / TensorTensor steps in place on one SB tile, Save.
fn chain(ctx: &Ctx, dt: &'static str, name: &str) {
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("t", dt, PARTS, FREE);
    p.flat("y", "ExternalOutput", dt, PARTS, FREE);
    let t = tile("t", dt, 0, PARTS, FREE);
    p.push(program::copy("Load", "ld", &tile("x", dt, 0, PARTS, FREE), &t));
    for k in 0..20 {
        p.push(if k % 2 == 0 {
            program::tensor_scalar(&format!("s{k}"), "mult", 0.5, "add", 0.25, &t, &t)
        } else {
            program::tensor_tensor(&format!("s{k}"), "add", &t, &t, &t)
        });
    }
    p.push(program::copy("Save", "sv", &t, &tile("y", dt, 0, PARTS, FREE)));
    let case = Case {
        dir: ctx.dir.join(format!("chain-{dt}")),
        prog: p,
        dt,
        rows: PARTS,
        cols: FREE,
        py: vec![format!("chain-{dt}")],
    };
    report(ctx, &case, name, Goal::Faster(1.5), "");
}

/// (c): 100,000 flat one-element TensorScalars between two SB tiles (the program is ~30 MB of
/// JSON), against a Python loop of the same NumPy ops; and the JSON load rate of `birsim validate`.
fn tiny(ctx: &Ctx, name: &str) {
    const N: usize = 100_000;
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, 1, 1);
    p.sb("a", dt, 1, 1);
    p.sb("b", dt, 1, 1);
    p.flat("y", "ExternalOutput", dt, 1, 1);
    let (a, b) = (tile("a", dt, 0, 1, 1), tile("b", dt, 0, 1, 1));
    p.push(program::copy("Load", "ld", &tile("x", dt, 0, 1, 1), &a));
    for k in 0..N {
        let (src, dst) = if k % 2 == 0 { (&a, &b) } else { (&b, &a) };
        p.push(program::tensor_scalar(&format!("i{k}"), "add", 1.0, "bypass", 0.0, src, dst));
    }
    let last = if N.is_multiple_of(2) { &a } else { &b };
    p.push(program::copy("Save", "sv", last, &tile("y", dt, 0, 1, 1)));
    let case = Case {
        dir: ctx.dir.join("tiny"),
        prog: p,
        dt,
        rows: 1,
        cols: 1,
        py: vec!["tiny".to_owned(), N.to_string()],
    };
    if case.write().is_err() {
        row(name, Err("cannot write the case".to_owned()), "NumPy", Err("-".to_owned()), Goal::Faster(1.5));
        return;
    }
    // JSON load: `birsim validate` as a process (read, parse, validate; process start included).
    let insts = (N + 2) as f64;
    let validate = ctx.birsim.clone().and_then(|bin| {
        let mut t = Vec::new();
        for _ in 0..ctx.opts.pairs() {
            t.push(run_timed(Command::new(&bin).arg("validate").arg(case.program()))?.0);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    });
    let bytes = std::fs::metadata(case.program()).map_or(0, |m| m.len());
    let text = std::fs::read(case.program()).unwrap_or_default();
    report(ctx, &case, &format!("{name} (Python loop)"), Goal::Faster(1.5), "");
    let (ours, rate, verdict) = match validate {
        Ok(t) => {
            (format!("{t:.2} ms"), format!("{:.2e}/s", insts / (t / 1e3)), Some(insts / (t / 1e3) >= 1e6))
        }
        Err(e) => ("-".to_owned(), format!("FAILED: {e}"), None),
    };
    fact(
        &format!("  JSON load: birsim validate ({:.0} MB)", bytes as f64 / 1e6),
        &ours,
        "-",
        &rate,
        "instructions/s >= 1e6",
        verdict,
    );
    let s = Instant::now();
    let parsed = bir_ir::json::load_slice(&text);
    let t = s.elapsed().as_secs_f64();
    if parsed.is_ok() {
        note(&format!(
            "in process, bir_ir::json::load_slice alone: {:.1} ms = {:.2e} instructions/s",
            t * 1e3,
            insts / t
        ));
    }
}

/// (d): Load, TensorReduce add over the free axis, Save; NumPy's np.sum is pairwise (not in order).
fn reduce(ctx: &Ctx, name: &str) {
    let dt = "float32";
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, PARTS, FREE);
    p.sb("t", dt, PARTS, FREE);
    p.sb("s", dt, PARTS, 1);
    p.flat("y", "ExternalOutput", dt, PARTS, 1);
    p.push(program::copy("Load", "ld", &tile("x", dt, 0, PARTS, FREE), &tile("t", dt, 0, PARTS, FREE)));
    p.push(program::reduce_add_x("r", &tile("t", dt, 0, PARTS, FREE), &tile("s", dt, 0, PARTS, 1)));
    p.push(program::copy("Save", "sv", &tile("s", dt, 0, PARTS, 1), &tile("y", dt, 0, PARTS, 1)));
    let case = Case {
        dir: ctx.dir.join("reduce"),
        prog: p,
        dt,
        rows: PARTS,
        cols: FREE,
        py: vec!["reduce".to_owned()],
    };
    report(ctx, &case, name, Goal::Faster(1.5), " (expected: np.sum is pairwise, birsim folds in order)");
}

/// (e): Load, TensorScalar x*2 in place, Save, over 32 MiB tiles (128 x 65536 fp32, the gen4 SB)
/// or one smaller tile, at 1 MiB, 16 MiB, 256 MiB and (with --large) 1 GiB.
fn scale_rows(ctx: &Ctx) {
    let o = &ctx.opts;
    let mut sizes: Vec<u64> = vec![1, 16];
    if !o.quick {
        sizes.push(256);
    }
    if o.large {
        sizes.push(1024);
    }
    let mut times = Vec::new();
    for &size in &sizes {
        let name = format!("e2e-scale {size} MiB fp32 Load, TensorScalar, Save");
        if !o.want(&name) {
            continue;
        }
        if let Some(t) = scale(ctx, size, &name) {
            times.push((size, t));
        }
    }
    let name = "e2e-scale 1 GiB vs 4 x 256 MiB (birsim)";
    if !o.want(name) {
        return;
    }
    let at = |s: u64| times.iter().find(|(k, _)| *k == s).map(|(_, t)| *t);
    match (at(256), at(1024)) {
        (Some(a), Some(b)) => row(name, Ok(b), "4 x 256 MiB run", Ok(4.0 * a), Goal::Within(1.3)),
        _ => fact(name, "-", "-", "-", "time / (4 x 256 MiB) <= 1.3x", None),
    }
    if !o.large {
        note("not measured: the 1 GiB row runs only with --large (and the 256 MiB row not with --quick)");
    }
}

fn scale(ctx: &Ctx, mib: u64, name: &str) -> Option<f64> {
    let dt = "float32";
    let elems = (mib << 20) / 4;
    let free = (elems / PARTS).min(FREE);
    let tiles = elems / (PARTS * free);
    let rows = PARTS * tiles;
    let mut p = Prog::default();
    p.flat("x", "ExternalInput", dt, rows, free);
    p.sb("t", dt, PARTS, free);
    p.flat("y", "ExternalOutput", dt, rows, free);
    let t = tile("t", dt, 0, PARTS, free);
    for k in 0..tiles {
        let at = k * PARTS * free;
        p.push(program::copy("Load", &format!("ld{k}"), &tile("x", dt, at, PARTS, free), &t));
        p.push(program::tensor_scalar(&format!("ts{k}"), "mult", 2.0, "bypass", 0.0, &t, &t));
        p.push(program::copy("Save", &format!("sv{k}"), &t, &tile("y", dt, at, PARTS, free)));
    }
    let case = Case {
        dir: ctx.dir.join(format!("scale-{mib}")),
        prog: p,
        dt,
        rows,
        cols: free,
        py: vec!["scale".to_owned()],
    };
    report(ctx, &case, name, Goal::Info, "")
}
