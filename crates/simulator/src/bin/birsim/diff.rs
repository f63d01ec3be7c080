//! `birsim diff A.jsonl B.jsonl [--json]` and the file side of `birsim run --expect NAME=FILE.npy
//! [--ulp N]` (docs/trace.md). The comparisons live in `simulator::diff`; this module only reads
//! files and prints.

use super::common::any_path;
use super::{Exit, bad, emit};
use simulator::diff::{ExpectReport, Tolerance, TraceDiff, check_expected, compare_expected};
use simulator::npy::Npy;
use simulator::trace::TraceReader;
use simulator::{Simulator, io};
use std::path::{Path, PathBuf};

/// One report on stdout; a closed pipe (`| head`) is not an error.
fn out(text: &str) -> Result<(), Exit> {
    emit(&format!("{text}\n"))
}

/// Opens one trace file for reading a line at a time (exit 2 naming the file).
fn open_trace(path: &Path, max_line: u64) -> Result<TraceReader<std::io::BufReader<std::fs::File>>, Exit> {
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    Ok(TraceReader::new(&path.display().to_string(), std::io::BufReader::new(file), max_line))
}

/// Compare two traces of one program: the first instruction whose written bytes differ
///
/// A.jsonl and B.jsonl are `birsim run --trace` files of one program (two profiles, two
/// compilers' outputs of one kernel, a run and a device dump converted to the same form). Prints
/// the first instruction whose written bytes differ (execution index, name, opcode), what
/// differs (location, element [partition, free index], both values in hex and as numbers; run
/// both with --trace-data to get the values), and how many later instructions diverge
/// (docs/trace.md).
///
/// Exit codes: 0 the traces agree, 1 they diverge or differ in length, 2 bad input (an unreadable or malformed file,
/// named by line and field; traces of different programs, named by the first position where
/// they part).
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// Trace A
    #[arg(value_name = "A.jsonl", value_parser = any_path())]
    pub a: PathBuf,
    /// Trace B
    #[arg(value_name = "B.jsonl", value_parser = any_path())]
    pub b: PathBuf,
    /// Prints the report as one JSON object
    #[arg(long)]
    pub json: bool,
    /// The longest trace line read, in bytes (256 MiB by default: a line holding 128 MiB
    /// of `--trace-data`); a longer line, or a file with no line end, is an error
    #[arg(long, value_name = "BYTES", default_value_t = simulator::trace::MAX_LINE, value_parser = max_line)]
    pub max_line: u64,
}

/// A `--max-line` value (its value parser).
fn max_line(value: &str) -> Result<u64, String> {
    value.parse().ok().filter(|n| *n > 0).ok_or_else(|| "expected a number of bytes (1 or more)".to_owned())
}

/// Runs `birsim diff`.
pub fn diff(args: &DiffArgs) -> Result<(), Exit> {
    diff_files(&args.a, &args.b, args.json, args.max_line)
}

/// `birsim diff`: the report on stdout; exit 0 when the traces agree, 1 when they diverge. Both
/// files are read side by side, one line of each at a time, so memory stays within two lines
/// whatever their length in lines; a line is at most `max_line` bytes.
fn diff_files(a: &Path, b: &Path, json: bool, max_line: u64) -> Result<(), Exit> {
    let (mut ra, mut rb) = (open_trace(a, max_line)?, open_trace(b, max_line)?);
    let mut d = TraceDiff::new(numerics::Profile::refsim());
    let mut lengths = [0u64; 2];
    let parted = |e: simulator::diff::DiffError| bad(format!("{} and {}: {e}", a.display(), b.display()));
    loop {
        let (x, y) = (ra.next().transpose(), rb.next().transpose());
        let (x, y) = (x.map_err(|e| bad(e.to_string()))?, y.map_err(|e| bad(e.to_string()))?);
        lengths[0] += u64::from(x.is_some());
        lengths[1] += u64::from(y.is_some());
        match (x, y) {
            (Some(x), Some(y)) => d.push(&x, &y).map_err(parted)?,
            // The longer trace is read to its end: every line is checked and counted.
            (Some(_), None) => {
                for r in ra.by_ref() {
                    r.map_err(|e| bad(e.to_string()))?;
                    lengths[0] += 1;
                }
            }
            (None, Some(_)) => {
                for r in rb.by_ref() {
                    r.map_err(|e| bad(e.to_string()))?;
                    lengths[1] += 1;
                }
            }
            (None, None) => break,
        }
    }
    let report = d.finish(lengths);
    if json {
        out(&report.to_json().to_string())?;
    } else {
        out(&report.to_string())?;
    }
    if report.same() { Ok(()) } else { Err(Exit(1, "the traces diverge".into())) }
}

/// An `--expect NAME=FILE.npy`, read and checked against NAME before the run.
pub(crate) struct Expect {
    name: String,
    tensor: io::Tensor,
    expected: Npy,
}

impl Expect {
    /// The output's location (to keep it alive through the run).
    pub(crate) fn loc(&self) -> bir_ir::LocId {
        self.tensor.loc
    }
}

/// A `--ulp` value (its value parser).
pub fn ulp(value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| "expected a number of ULP (0 or more)".to_owned())
}

/// Reads every `--expect` array and checks its dtype and shape against NAME (exit 2 naming the
/// tensor), before anything runs.
pub(crate) fn open_expects(f: &bir_ir::Function, list: &[(String, PathBuf)]) -> Result<Vec<Expect>, Exit> {
    list.iter()
        .map(|(name, path)| {
            let tensor = io::resolve(f, name).map_err(|e| bad(format!("--expect {name}: {e}")))?;
            // The header first: its dtype and shape must be the output's (so the data to read
            // is bounded by the memory cap), then exactly that much data (an endless file such
            // as /dev/zero is refused at once, as for --input).
            let file = std::fs::File::open(path)
                .map_err(|e| bad(format!("--expect {name}: cannot read {}: {e}", path.display())))?;
            let expected = Npy::read(std::io::BufReader::new(file), |h| {
                let header = Npy { descr: h.descr.clone(), shape: h.shape.clone(), data: Vec::new() };
                check_expected(name, tensor.dtype, &tensor.shape, &header)
                    .map_err(|e| Read::Refused(bad(format!("{e} ({})", path.display()))))
            })
            .map_err(|e| match e {
                Read::Npy(e) => bad(format!("--expect {name}: {}: {e}", path.display())),
                Read::Refused(e) => e,
            })?;
            Ok(Expect { name: name.clone(), tensor, expected })
        })
        .collect()
}

/// Why an `--expect` file was not read: the file, or the check of its header.
enum Read {
    Npy(simulator::npy::NpyError),
    Refused(Exit),
}

impl From<simulator::npy::NpyError> for Read {
    fn from(e: simulator::npy::NpyError) -> Self {
        Read::Npy(e)
    }
}

/// Compares every expected output after a run; the reports, in `--expect` order.
pub(crate) fn compare(
    sim: &mut Simulator<'_>,
    expects: &[Expect],
    tolerance: Tolerance,
    profile: &numerics::Profile,
) -> Result<Vec<ExpectReport>, Exit> {
    expects
        .iter()
        .map(|x| {
            let got = io::read(sim, &x.tensor).map_err(|e| bad(format!("--expect {}: {e}", x.name)))?;
            compare_expected(&x.name, x.tensor.dtype, &got, &x.expected, tolerance, profile)
                .map_err(|e| bad(e.to_string()))
        })
        .collect()
}

/// The byte ranges a provenance re-run watches: every listed mismatch of every report.
pub(crate) fn watch_list(
    sim: &Simulator<'_>,
    expects: &[Expect],
    reports: &[ExpectReport],
) -> Vec<(bir_ir::LocId, std::ops::Range<usize>)> {
    expects.iter().zip(reports).flat_map(|(x, r)| r.watch_ranges(sim, &x.tensor)).collect()
}

/// Hands the re-run's writers back to the reports, in [`watch_list`] order.
pub(crate) fn attach(reports: &mut [ExpectReport], writers: &[Option<simulator::Writer>]) {
    let mut rest = writers;
    for r in reports {
        let n = r.first.len().min(rest.len());
        r.attach_writers(&rest[..n]);
        rest = &rest[n..];
    }
}

/// Prints the reports on stdout; exit 1 when any mismatches.
pub(crate) fn finish(reports: &[ExpectReport]) -> Result<(), Exit> {
    for r in reports {
        out(&r.to_string())?;
    }
    let bad: Vec<&str> = reports.iter().filter(|r| !r.matches()).map(|r| r.name.as_str()).collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Exit(1, format!("--expect: {} differ(s) from the expected array", bad.join(", "))))
    }
}

/// Loads every `--input` into `sim` again (the provenance re-run; the files were checked for the
/// first run).
pub(crate) fn load_inputs(sim: &mut Simulator<'_>, inputs: &[(String, PathBuf)]) -> Result<(), Exit> {
    for (name, path) in inputs {
        let f = sim.function();
        let mut open = || -> Result<(), String> {
            let file =
                std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            let input = io::open_input(f, name, std::io::BufReader::new(file), len)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            io::load_input(sim, input).map_err(|e| format!("{}: {e}", path.display()))
        };
        open().map_err(|e| bad(format!("--input {name}: {e}")))?;
    }
    Ok(())
}
