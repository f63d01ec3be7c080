//! `birsim dge PROGRAM.json`: the DMA descriptors every DMA instruction becomes
//! (simulator::dge_cli, docs/dge.md), as text or one JSON object.

use super::common::{Limits, load, option, pair, problems, set};
use super::{Exit, bad, emit};
use numerics::Profile;
use simulator::{Simulator, io};
use std::path::PathBuf;

/// List the DMA descriptors of every DMA instruction
///
/// Lists, per DMA instruction (DMACopy, the descriptors of each DMABlock, IndirectLoad,
/// IndirectSave, IndirectSaveAccumulate), the DMA descriptors it becomes: count, bytes each,
/// addresses in birsim's per-location address space (docs/dge.md), and a warning when some move
/// fewer than 512 bytes. An indirect op's descriptors are listed when its index operand's tensor
/// is given as --input (the values as given, before the program runs); else a note says they
/// depend on run-time data.
///
/// Exit codes: 0 every DMA became descriptors (or a note), 1 some DMA cannot (its `error:`
/// line: a cast, CCE, an out-of-bounds index under --oob fault), 2 bad input or usage.
#[derive(clap::Args, Debug)]
pub struct DgeArgs {
    /// The BIR JSON program
    #[arg(value_name = "PROGRAM.json")]
    pub program: PathBuf,
    /// Loads tensor NAME (an allocation or memory location name) from a .npy file; repeatable
    ///
    /// Used for the index operands of indirect ops (their values as given, before the program
    /// runs).
    #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = pair)]
    pub inputs: Vec<(String, PathBuf)>,
    /// What an indirect op does with an index outside its table [default: fault]
    #[arg(long, value_name = "POLICY", value_parser = option("oob"))]
    pub oob: Option<String>,
    /// Prints the same as one JSON object
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: Limits,
}

/// Runs `birsim dge`.
pub fn dge(args: &DgeArgs) -> Result<(), Exit> {
    let mut options = args.limits.options()?;
    set(&mut options, "oob", &args.oob)?;
    let program = load(&args.program, &args.limits)?;
    let valid =
        bir_ir::validate(&program, &options.validate_options()).map_err(|d| problems(&args.program, &d))?;
    let f = &program.functions[0];
    let mut sim = Simulator::new(valid, Profile::refsim());
    let mut given = Vec::new();
    for (name, path) in &args.inputs {
        let mut open = || -> Result<(), String> {
            given.push(io::resolve(f, name)?.loc);
            let file =
                std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            let input = io::open_input(f, name, std::io::BufReader::new(file), len)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            io::load_input(&mut sim, input).map_err(|e| format!("{}: {e}", path.display()))
        };
        open().map_err(|e| bad(format!("--input {name}: {e}")))?;
    }
    let entries = simulator::dge_cli::plan_program(f, sim.memory_mut(), &given, options.indirect_oob);
    if args.json {
        emit(&format!("{}\n", simulator::dge_cli::render_json(f, &entries)))?;
    } else {
        emit(&simulator::dge_cli::render_text(f, &entries))?;
    }
    // An `error:` entry (a DMA that cannot become descriptors) is exit 1, as `birsim check`'s
    // "does not run": the report is complete, the program's DMAs are not all expressible.
    let errors =
        entries.iter().filter(|e| matches!(e.outcome, simulator::dge_cli::Outcome::Error(_))).count();
    if errors > 0 {
        return Err(Exit(
            1,
            format!("{}: {errors} DMA instruction(s) cannot become descriptors", args.program.display()),
        ));
    }
    Ok(())
}
