//! `birsim diff A.jsonl B.jsonl [--json]` and the file side of `birsim run --expect NAME=FILE.npy
//! [--ulp N]` (docs/trace.md). The comparisons live in `simulator::diff`; this module only reads
//! files and prints.

use super::common::any_path;
use super::{Exit, bad};
use simulator::diff::{ExpectReport, Tolerance, check_expected, compare_expected, diff_traces};
use simulator::npy::Npy;
use simulator::{Simulator, io};
use std::path::{Path, PathBuf};

/// One report on stdout; a closed pipe (`| head`) is not an error.
fn out(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// Reads and parses one trace file (exit 2 naming the file, line and field).
fn read_trace(path: &Path) -> Result<Vec<simulator::trace::TraceRecord>, Exit> {
    let text =
        std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    simulator::trace::parse_trace(&path.display().to_string(), &text).map_err(|e| bad(e.to_string()))
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
}

/// Runs `birsim diff`.
pub fn diff(args: &DiffArgs) -> Result<(), Exit> {
    diff_files(&args.a, &args.b, args.json)
}

/// `birsim diff`: the report on stdout; exit 0 when the traces agree, 1 when they diverge.
fn diff_files(a: &Path, b: &Path, json: bool) -> Result<(), Exit> {
    let (ta, tb) = (read_trace(a)?, read_trace(b)?);
    let report =
        diff_traces(&ta, &tb).map_err(|e| bad(format!("{} and {}: {e}", a.display(), b.display())))?;
    if json {
        out(&report.to_json().to_string());
    } else {
        out(&report.to_string());
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
            let bytes = std::fs::read(path)
                .map_err(|e| bad(format!("--expect {name}: cannot read {}: {e}", path.display())))?;
            let expected =
                Npy::parse(&bytes).map_err(|e| bad(format!("--expect {name}: {}: {e}", path.display())))?;
            check_expected(name, tensor.dtype, &tensor.shape, &expected)
                .map_err(|e| bad(format!("{e} ({})", path.display())))?;
            Ok(Expect { name: name.clone(), tensor, expected })
        })
        .collect()
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
        out(&r.to_string());
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
