//! `birsim check PROGRAM.json` and `birsim ops`: what a kernel uses and whether birsim runs it,
//! and the whole support matrix, both from `simulator::support` — the classifier the executor
//! itself asks before every instruction (issue #15 item 3).

use super::common::{Limits, load};
use super::{Exit, emit};
use simulator::support::{self, Status};
use std::path::PathBuf;

/// Say whether birsim runs a program: every opcode, mode and dtype combination it uses
///
/// Loads PROGRAM.json and lists each combination its instructions use (DMABlock descriptors
/// included) as `runs`, `not_implemented` or `rejected` (by bir-ir validation, or a typed
/// fault the kernel raises), with the reason and the instructions using it (the first five and
/// a count), then the verdict. Exit 0 when everything runs, 1 when something is not
/// implemented or rejected, 2 when the file cannot be read or loaded.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The BIR JSON program
    #[arg(value_name = "PROGRAM.json")]
    pub program: PathBuf,
    /// Print one JSON object ({verdict, entries, problems}), pretty-printed, instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: Limits,
}

/// Pretty-printed JSON (serialising a `Value` cannot fail; if it did, it is a bug: exit 3).
fn pretty(v: &serde_json::Value) -> Result<String, Exit> {
    serde_json::to_string_pretty(v).map_err(|e| Exit(3, format!("internal error (please report): {e}")))
}

/// Runs `birsim check`.
pub fn check(args: &CheckArgs) -> Result<(), Exit> {
    let p = load(&args.program, &args.limits)?;
    let report = support::check_with(&p, &args.limits.validate_options()?);
    if args.json {
        emit(&format!("{}\n", pretty(&report.to_json())?))?;
    } else {
        emit(&report.to_string())?;
    }
    match report.verdict {
        Status::Runs => Ok(()),
        s => Err(Exit(1, format!("{}: {s}", args.program.display()))),
    }
}

/// Print the support matrix: every combination the executor distinguishes
///
/// One line per combination of opcode, deciding mode/flag facts and dtype facts ("any" where
/// none decides), with its status (`runs`, `not_implemented`, `rejected`) and reason. The
/// matrix is enumerated from the classifier the executor runs, never kept by hand.
#[derive(clap::Args, Debug)]
pub struct OpsArgs {
    /// Print one JSON object ({counts, entries}), pretty-printed, instead of text
    #[arg(long)]
    pub json: bool,
}

/// Runs `birsim ops`.
pub fn ops(args: &OpsArgs) -> Result<(), Exit> {
    let m = support::matrix();
    if args.json {
        emit(&format!("{}\n", pretty(&m.to_json())?))?;
    } else {
        emit(&m.to_string())?;
    }
    Ok(())
}
