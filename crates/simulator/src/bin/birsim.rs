//! `birsim`: run, validate or list a BIR JSON program from the command line; `birsim isa …`
//! decodes, encodes, validates and runs 64-byte ISA words (docs/isa.md). The arguments are
//! parsed by clap (derive): [`Cli`] and [`Cmd`] here, each subcommand's arguments and handler in
//! its own file under `src/bin/birsim/`. The binary needs the simulator crate's `cli` feature
//! (on by default); library users build without it and get no CLI dependency.
//!
//! Exit codes: 0 success (and `--help`, `--version`), 1 the program faulted while running,
//! 2 bad input or usage (clap's usage errors included), 3 an internal birsim error (a bug;
//! please report it).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

// The subcommands live in their own files (src/bin/birsim/*.rs; a plain src/bin/run.rs would be
// taken by Cargo for a second binary).
#[path = "birsim/check.rs"]
mod check;
#[path = "birsim/common.rs"]
mod common;
#[path = "birsim/completions.rs"]
mod completions;
#[path = "birsim/dge.rs"]
mod dge;
#[path = "birsim/diff.rs"]
mod diff;
#[path = "birsim/dump.rs"]
mod dump;
#[path = "birsim/exit.rs"]
mod exit;
#[path = "birsim/isa.rs"]
mod isa;
#[path = "birsim/isa_run.rs"]
mod isa_run;
#[path = "birsim/run.rs"]
mod run;
#[path = "birsim/validate.rs"]
mod validate;

pub use exit::{Exit, bad, emit};

/// birsim: a bit-exact functional simulator for Neuron BIR
///
/// Runs a lowered kernel in BIR JSON on .npy input tensors and writes, bit for bit, the output
/// tensors the reference BIR simulator computes (docs/fidelity.md lists every choice). `birsim
/// help COMMAND` (or `birsim COMMAND --help`) explains each command and its flags.
#[derive(Parser, Debug)]
#[command(
    name = "birsim",
    version,
    arg_required_else_help = true,
    max_term_width = 100,
    after_help = "Exit codes: 0 ok, 1 the program faulted (check: something does not run; dge: a \
                  DMA cannot become descriptors; isa validate: a word is invalid), 2 bad input or \
                  usage, 3 internal error (a birsim bug). A closed pipe (`birsim ops | head`) ends \
                  the output quietly."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The subcommands; each one's arguments and handler are in `src/bin/birsim/NAME.rs`.
#[derive(Subcommand, Debug)]
#[expect(clippy::large_enum_variant, reason = "parsed once per process; boxing buys nothing")]
enum Cmd {
    Run(run::RunArgs),
    Validate(validate::ValidateArgs),
    Dump(dump::DumpArgs),
    Dge(dge::DgeArgs),
    Diff(diff::DiffArgs),
    Check(check::CheckArgs),
    Ops(check::OpsArgs),
    Isa(isa::IsaArgs),
    Completions(completions::CompletionsArgs),
}

fn main() -> ExitCode {
    // Any remaining bug is exit 3 with a one-line report, not Rust's 101 and a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("birsim: internal error (please report): panic{at}: {what}");
        std::process::exit(3);
    }));
    // Debug builds only: a deliberate panic, so a test can see the hook's exit 3 (release
    // binaries have no such switch).
    #[cfg(debug_assertions)]
    if std::env::var_os("BIRSIM_TEST_PANIC").is_some() {
        #[expect(clippy::panic, reason = "the test hook for the panic handler")]
        {
            panic!("BIRSIM_TEST_PANIC is set");
        }
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help, --version and `help` print to stdout and succeed; every usage error
            // (bare `birsim` included) prints to stderr and is exit 2.
            let code = if e.use_stderr() { 2 } else { 0 };
            // clap repeats a refused value whole: a long one is cut, with a count (issue 26).
            let text = e.render().to_string();
            if e.use_stderr() && text.lines().any(|l| l.len() > bir_ir::DIAGNOSTIC_CHARS) {
                eprint!("{}", clip_lines(&text));
            } else {
                let _ = e.print();
            }
            return ExitCode::from(code);
        }
    };
    match dispatch(&cli.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Exit(code, msg)) => {
            eprintln!("birsim: {}", clip_lines(&msg).trim_end());
            ExitCode::from(code)
        }
    }
}

/// `text` with every line cut to [`bir_ir::DIAGNOSTIC_CHARS`] characters and the rest counted
/// ([`bir_ir::clip`]): whatever a message repeats (a shape of a million dimensions, an option's
/// value), no line birsim prints is longer than a screenful.
fn clip_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(1 << 16));
    for line in text.lines() {
        out.push_str(&bir_ir::clip(line, bir_ir::DIAGNOSTIC_CHARS));
        out.push('\n');
    }
    out
}

fn dispatch(cmd: &Cmd) -> Result<(), Exit> {
    match cmd {
        Cmd::Run(a) => run::run(a),
        Cmd::Validate(a) => validate::validate(a),
        Cmd::Dump(a) => dump::dump(a),
        Cmd::Dge(a) => dge::dge(a),
        Cmd::Diff(a) => diff::diff(a),
        Cmd::Isa(a) => isa::isa(a),
        Cmd::Completions(a) => completions::completions(a),
        Cmd::Check(a) => check::check(a),
        Cmd::Ops(a) => check::ops(a),
    }
}
