//! `birsim validate PROGRAM.json`: loads and validates a program and prints every problem with
//! its location (at most 100, then a count), or `ok` with its size.

use super::common::{Limits, leave_to_exit, load, problems};
use super::{Exit, emit};
use std::path::PathBuf;

/// Check a program: every problem with its location, or `ok`
///
/// Loads PROGRAM.json and validates it (placement, operand signatures, dtype rules, access
/// pattern bounds, the memory cap and the instruction budget). Prints `PROGRAM.json: ok (F
/// function(s), N instruction(s))`, or every problem with its location on stderr (at most 100,
/// then how many more) and exits 2.
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// The BIR JSON program
    #[arg(value_name = "PROGRAM.json")]
    pub program: PathBuf,
    #[command(flatten)]
    pub limits: Limits,
}

/// Runs `birsim validate`.
pub fn validate(args: &ValidateArgs) -> Result<(), Exit> {
    let p = load(&args.program, &args.limits)?;
    match bir_ir::validate(&p, &args.limits.validate_options()?) {
        Ok(_) => {
            let mut n = 0;
            p.functions.iter().for_each(|f| f.for_each_instruction(&mut |_| n += 1));
            emit(&format!(
                "{}: ok ({} function(s), {n} instruction(s))\n",
                args.program.display(),
                p.functions.len()
            ))?;
            leave_to_exit(p);
            Ok(())
        }
        Err(d) => Err(problems(&args.program, &d)),
    }
}
