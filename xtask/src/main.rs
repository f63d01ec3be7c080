//! birsim automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! - `verify`: the conformance corpus under `conformance/` (the project's main job).
//! - `help`: usage.
//!
//! Only xtask and the CLI touch files; the library crates stay free of I/O policy.

mod tidy;
mod verify;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  verify [--jobs N] [--filter PATTERN] [--shard K/N] [--list]
      Run the conformance corpus under conformance/. Threads: --jobs, else $BIRSIM_JOBS,
      else all cores. --filter keeps cases whose id contains PATTERN (repeatable: any
      matches). --shard K/N runs the K-th of N slices (1-based). --list prints case ids.
  help
      This text.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    match command.as_str() {
        "verify" => match verify::Options::parse(rest) {
            Ok(opts) => verify::run(&opts),
            Err(e) => {
                eprintln!("xtask verify: {e}\n\n{USAGE}");
                ExitCode::from(2)
            }
        },
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("xtask: unknown command `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
