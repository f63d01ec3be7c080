//! `birsim`: run, validate or list a BIR JSON program from the command line; `birsim isa …`
//! decodes, encodes and validates 64-byte ISA words (module `isa`, docs/isa.md).
//!
//! Exit codes: 0 success, 1 the program faulted while running, 2 bad input or usage,
//! 3 an internal birsim error (a bug; please report it).

use bir_ir::{Function, Node, Operand, Program, TensorKind, ValidateOptions, json, validate};
use numerics::Profile;
use simulator::{Outcome, Simulator, io};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// The `isa` subcommands live in their own file (src/bin/birsim/isa.rs; a plain src/bin/isa.rs
// would be taken by Cargo for a second binary).
#[path = "birsim/diff.rs"]
mod diff;
#[path = "birsim/isa.rs"]
mod isa;
#[path = "birsim/isa_run.rs"]
mod isa_run;

const USAGE: &str = "\
birsim: a bit-exact functional simulator for Neuron BIR

usage:
  birsim run PROGRAM.json [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...
             [--out-dir DIR] [--profile refsim|nki] [--trace FILE.jsonl] [--memory-cap BYTES]
             [--fp8-saturate on|off] [--tsc-reverse direction|operands] [--stats]
             [--threads N] [--allow-uninit-inputs] [--max-instructions N] [--oob fault|skip]
             [--dma-block-in-stream skip|run] [--trace-data] [--expect NAME=FILE.npy]... [--ulp N]
  birsim diff A.jsonl B.jsonl [--json]
  birsim validate PROGRAM.json [--memory-cap BYTES] [--max-instructions N]
  birsim dump PROGRAM.json
  birsim dge PROGRAM.json [--input NAME=FILE.npy]... [--oob fault|skip] [--json]
  birsim isa decode|encode|validate|run … (below)
  birsim --help | --version

NAME is an allocation (memory location set) or memory location name. Tensors are .npy files:
float32 as <f4, float16 as <f2, integers as themselves, and bfloat16, fp8, float32r and the
packed _x4 types as unsigned integers of the same width holding the raw bits. An input's shape
must equal its allocation's tensor_shape. Outputs are written only after the whole program ran,
each atomically; --out-dir writes every output allocation as NAME.npy.

Every Input allocation needs an --input (or --allow-uninit-inputs, to run it as 0xFF bytes).
Outputs must be regular files or new files in existing folders (a symlink is written through to
its target); every output path is checked before the run, and none is replaced unless all are
written. At most 100 problems are printed. A program that would execute more than --max-instructions
(default 10^10, loop iterations counted) is refused before it runs.

--threads N (or BIRSIM_THREADS) caps the threads a kernel uses (default: every core); results
are bit-identical for every count. --stats prints, after the run, the time and bytes written per opcode and the slowest instructions
(the trace records each instruction's elapsed time too).

--fp8-saturate overrides the profile's FP8 overflow rule (refsim: on, the reference
interpreter's libBIR default; off: overflow and FP32_MIN/MAX become +-Inf, as AWS documents for
the hardware). --tsc-reverse picks what TensorScalarCache's reverse flags do: `direction` (the
default) also scans from the last element, `operands` only swaps operands (docs/fidelity.md S14).
--oob picks what an indirect instruction does with an index that is not -1 but lands outside its
table: `fault` (the default: an out-of-bounds fault naming the index, nothing written) or `skip`
(treated like -1, its destination left unchanged; docs/fidelity.md I2). --dma-block-in-stream
picks what a DMABlock met in the instruction stream does: `skip` (the default: a definition, run
only when a DMATrigger fires it) or `run` (its descriptors run once there too; docs/fidelity.md G4).

--trace-data adds each output region's bytes (hex) to the trace. --expect NAME=FILE.npy compares
output NAME with the array after the run (exact, or within --ulp N units in the last place of
NAME's dtype) and prints `NAME: matches (...)` or the first mismatching elements with the last
instruction that wrote each (on stdout); a mismatch exits 1. `diff` compares two traces of one
program: the first instruction whose written bytes differ, what differs, how many later
instructions diverge (exit 0 same, 1 divergent, 2 bad input; docs/trace.md).

`dge` lists, per DMA instruction (DMACopy, the descriptors of each DMABlock, IndirectLoad,
IndirectSave, IndirectSaveAccumulate), the DMA descriptors it becomes: count, bytes each, addresses in birsim's
per-location address space (docs/dge.md), and a warning when some move fewer than 512 bytes.
An indirect op's descriptors are listed when its index operand's tensor is given as --input
(the values as given, before the program runs); else a note says they depend on run-time data.
--json prints the same as one JSON object.

A run that needs more memory than the host can give stops with a `budget` fault (exit 1), or exit 2
while reading the program or an input; birsim never aborts (docs/robustness.md).

ISA words (docs/isa.md): WORDS.bin is 64-byte words back to back, WORDS.json a JSON array of
them with the header's field names. `decode` prints the JSON, `encode` writes the bytes (to -o,
else stdout), `validate` prints each violation as `word K: FIELD: message [rule]` (exit 1 if any):
  birsim isa decode WORDS.bin
  birsim isa encode WORDS.json [-o WORDS.bin]
  birsim isa validate WORDS.bin --gen v2|v3|v4|v5

exit codes: 0 ok, 1 the program faulted (isa validate: a word is invalid), 2 bad input or usage,
3 internal error";

/// A user-facing failure: message and exit code.
struct Exit(u8, String);

fn bad(msg: impl Into<String>) -> Exit {
    Exit(2, msg.into())
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Exit(code, msg)) => {
            eprintln!("birsim: {msg}");
            ExitCode::from(code)
        }
    }
}

fn dispatch(args: &[String]) -> Result<(), Exit> {
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("validate") => validate_cmd(&args[1..]),
        Some("dump") => dump(&args[1..]),
        Some("dge") => dge_cmd(&args[1..]),
        Some("diff") => diff_cmd(&args[1..]),
        Some("isa") => isa::isa(&args[1..]),
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some("--version" | "-V") => {
            println!("birsim {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Some(other) => Err(bad(format!("unknown command `{other}`\n\n{USAGE}"))),
        None => Err(bad(USAGE)),
    }
}

/// Options after the program path.
#[derive(Default)]
struct RunOptions {
    program: PathBuf,
    inputs: Vec<(String, PathBuf)>,
    outputs: Vec<(String, PathBuf)>,
    out_dir: Option<PathBuf>,
    profile: Option<String>,
    trace: Option<PathBuf>,
    memory_cap: Option<u64>,
    max_instructions: Option<u64>,
    fp8_saturate: Option<bool>,
    tsc_reverse: Option<bool>,
    oob: Option<simulator::IndirectOob>,
    dma_block_in_stream: Option<simulator::DmaBlockInStream>,
    stats: bool,
    json: bool,
    threads: Option<usize>,
    allow_uninit_inputs: bool,
    trace_data: bool,
    expects: Vec<(String, PathBuf)>,
    ulp: Option<u64>,
}

fn parse(args: &[String], allowed: &[&str]) -> Result<RunOptions, Exit> {
    let mut o = RunOptions::default();
    let mut program = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (a.as_str(), None),
        };
        if !flag.starts_with("--") {
            if program.replace(PathBuf::from(a)).is_some() {
                return Err(bad(format!("unexpected argument `{a}` (one PROGRAM.json only)")));
            }
            continue;
        }
        if !allowed.contains(&flag) {
            return Err(bad(format!("unknown option `{flag}`\n\n{USAGE}")));
        }
        if flag == "--stats" || flag == "--allow-uninit-inputs" || flag == "--json" || flag == "--trace-data"
        {
            if inline.is_some() {
                return Err(bad(format!("{flag} takes no value")));
            }
            match flag {
                "--stats" => o.stats = true,
                "--json" => o.json = true,
                "--trace-data" => o.trace_data = true,
                _ => o.allow_uninit_inputs = true,
            }
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| bad(format!("{flag} needs a value")))?,
        };
        let pair = |v: &str| -> Result<(String, PathBuf), Exit> {
            let (n, f) =
                v.split_once('=').ok_or_else(|| bad(format!("{flag} {v}: expected NAME=FILE.npy")))?;
            Ok((n.to_owned(), PathBuf::from(f)))
        };
        match flag {
            "--input" => o.inputs.push(pair(&value)?),
            "--output" => o.outputs.push(pair(&value)?),
            "--expect" => o.expects.push(pair(&value)?),
            "--ulp" => o.ulp = Some(diff::ulp(&value)?),
            "--out-dir" => o.out_dir = Some(PathBuf::from(value)),
            "--profile" => o.profile = Some(value),
            "--fp8-saturate" => {
                o.fp8_saturate = Some(match value.as_str() {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad(format!("--fp8-saturate {value}: expected on or off"))),
                })
            }
            "--threads" => {
                o.threads = Some(threads(&value, "--threads")?);
            }
            "--tsc-reverse" => {
                o.tsc_reverse = Some(match value.as_str() {
                    "direction" => true,
                    "operands" => false,
                    _ => return Err(bad(format!("--tsc-reverse {value}: expected direction or operands"))),
                })
            }
            "--oob" => {
                o.oob = Some(match value.as_str() {
                    "fault" => simulator::IndirectOob::Fault,
                    "skip" => simulator::IndirectOob::Skip,
                    _ => return Err(bad(format!("--oob {value}: expected fault or skip"))),
                })
            }
            "--dma-block-in-stream" => {
                o.dma_block_in_stream = Some(
                    simulator::DmaBlockInStream::from_name(&value)
                        .ok_or_else(|| bad(format!("--dma-block-in-stream {value}: expected skip or run")))?,
                )
            }
            "--trace" => o.trace = Some(PathBuf::from(value)),
            "--max-instructions" => {
                o.max_instructions = Some(
                    value
                        .parse()
                        .map_err(|_| bad(format!("--max-instructions {value}: expected a number")))?,
                )
            }
            "--memory-cap" => {
                o.memory_cap = Some(
                    value
                        .parse()
                        .map_err(|_| bad(format!("--memory-cap {value}: expected a number of bytes")))?,
                )
            }
            _ => return Err(bad(format!("unknown option `{flag}`"))),
        }
    }
    if o.threads.is_none()
        && let Ok(v) = std::env::var("BIRSIM_THREADS")
    {
        o.threads = Some(threads(&v, "BIRSIM_THREADS")?);
    }
    o.program = program.ok_or_else(|| bad(format!("missing PROGRAM.json\n\n{USAGE}")))?;
    Ok(o)
}

/// A thread count: 1 or more.
fn threads(value: &str, what: &str) -> Result<usize, Exit> {
    match value.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(bad(format!("{what} {value}: expected a number of threads (1 or more)"))),
    }
}

fn load(path: &Path, o: &RunOptions) -> Result<Program, Exit> {
    // The file is read into one buffer reserved fallibly (a file larger than memory is exit 2),
    // and never more than the memory cap of it: `/dev/zero` or an endless pipe is refused, not
    // read until the machine is full.
    let cap = o.memory_cap.unwrap_or(ValidateOptions::default().memory_cap_bytes);
    let too_big = || {
        bad(format!(
            "{}: the program file is larger than the memory cap of {cap} bytes (raise it with --memory-cap)",
            path.display()
        ))
    };
    let bytes = std::fs::File::open(path)
        .map_err(simulator::alloc::ReadError::Io)
        .and_then(|f| {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            simulator::alloc::read_all(std::io::Read::take(f, cap.saturating_add(1)), len.min(cap))
        })
        .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    json::load_slice(&bytes).map_err(|e| match e {
        bir_ir::LoadError::Invalid(d) => problems(path, &d),
        e => bad(format!("{}: {e}", path.display())),
    })
}

fn options(o: &RunOptions) -> ValidateOptions {
    let mut v = ValidateOptions::default();
    if let Some(cap) = o.memory_cap {
        v.memory_cap_bytes = cap;
    }
    if let Some(n) = o.max_instructions {
        v.max_instructions = n;
    }
    v
}

fn validate_cmd(args: &[String]) -> Result<(), Exit> {
    let o = parse(args, &["--memory-cap", "--max-instructions"])?;
    let p = load(&o.program, &o)?;
    match validate(&p, &options(&o)) {
        Ok(_) => {
            let mut n = 0;
            p.functions.iter().for_each(|f| f.for_each_instruction(&mut |_| n += 1));
            println!("{}: ok ({} function(s), {n} instruction(s))", o.program.display(), p.functions.len());
            Ok(())
        }
        Err(d) => Err(problems(&o.program, &d)),
    }
}

/// `birsim dge`: the descriptors of every DMA instruction (simulator::dge_cli).
fn dge_cmd(args: &[String]) -> Result<(), Exit> {
    let o = parse(args, &["--input", "--oob", "--json", "--memory-cap", "--max-instructions"])?;
    let program = load(&o.program, &o)?;
    let valid = validate(&program, &options(&o)).map_err(|d| problems(&o.program, &d))?;
    let f = &program.functions[0];
    let mut sim = Simulator::new(valid, Profile::refsim());
    let mut given = Vec::new();
    for (name, path) in &o.inputs {
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
    let oob = match o.oob {
        Some(simulator::IndirectOob::Skip) => indirection::Oob::Skip,
        _ => indirection::Oob::Fault,
    };
    let entries = simulator::dge_cli::plan_program(f, &mut sim.memory, &given, oob);
    if o.json {
        println!("{}", simulator::dge_cli::render_json(f, &entries));
    } else {
        print!("{}", simulator::dge_cli::render_text(f, &entries));
    }
    Ok(())
}

fn shape_str(s: &[u64]) -> String {
    format!("({})", s.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

/// An output file being written: everything goes to a temporary file beside its target, and
/// the targets are replaced only once every output is whole.
struct Staged {
    /// The file to replace (a symlink's target, resolved), or to create.
    target: PathBuf,
    tmp: PathBuf,
}

impl Staged {
    /// Checks that `path` can be written as an output and creates its (empty) temporary file.
    /// A symlink is written through to its target; anything but a regular file (a FIFO, a
    /// device, a directory) is refused, and so is a folder that does not exist.
    fn prepare(path: &Path, what: &str) -> Result<Staged, Exit> {
        let refuse = |why: String| bad(format!("{what} {}: {why}", path.display()));
        // An empty path, `/`, `.` or `dir/..` names no file: refused before the run (it used
        // to run the whole program and fail at the final rename).
        if path.file_name().is_none() {
            return Err(refuse("not a file path".into()));
        }
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
                .map_err(|e| refuse(format!("a symlink whose target cannot be resolved ({e})")))?,
            Ok(_) => path.to_path_buf(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
            Err(e) => return Err(refuse(e.to_string())),
        };
        match std::fs::metadata(&target) {
            Ok(m) if !m.is_file() => {
                return Err(refuse("not a regular file (birsim replaces only regular files)".into()));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(refuse(e.to_string())),
        }
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(refuse(format!("the folder {} does not exist", dir.display())));
        }
        let file = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dir.join(format!(".{file}.birsim-{}.tmp", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| refuse(format!("cannot create a file in {}: {e}", dir.display())))?;
        Ok(Staged { target, tmp })
    }

    /// Writes the temporary file.
    fn write(
        &self,
        write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), String>,
    ) -> Result<(), Exit> {
        use std::io::Write;
        let r = std::fs::File::create(&self.tmp).map_err(|e| e.to_string()).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            write(&mut w)?;
            w.flush().map_err(|e| e.to_string())
        });
        r.map_err(|e| bad(format!("cannot write {}: {e}", self.target.display())))
    }
}

/// Every staged output of one run: removed if the run fails, renamed over their targets if not.
#[derive(Default)]
struct Outputs(Vec<Staged>);

impl Outputs {
    fn commit(mut self) -> Result<(), Exit> {
        for s in std::mem::take(&mut self.0) {
            if let Err(e) = std::fs::rename(&s.tmp, &s.target) {
                let _ = std::fs::remove_file(&s.tmp);
                return Err(bad(format!("cannot write {}: {e}", s.target.display())));
            }
        }
        Ok(())
    }
}

impl Drop for Outputs {
    fn drop(&mut self) {
        for s in &self.0 {
            let _ = std::fs::remove_file(&s.tmp);
        }
    }
}

/// At most this many diagnostics are printed; the rest are counted.
const MAX_DIAGNOSTICS: usize = 100;

/// A problem list for the terminal: the first [`MAX_DIAGNOSTICS`] lines, each at most 300
/// characters (names inside messages can be long), then how many more there were.
fn problems(path: &Path, d: &bir_ir::Diagnostics) -> Exit {
    let mut text = String::new();
    for line in d.to_string().lines().take(MAX_DIAGNOSTICS) {
        let mut l: String = line.chars().take(300).collect();
        if l.len() < line.len() {
            l.push('…');
        }
        text.push_str(&l);
        text.push('\n');
    }
    if d.len() > MAX_DIAGNOSTICS {
        text.push_str(&format!("… and {} more problem(s)\n", d.len() - MAX_DIAGNOSTICS));
    }
    bad(format!("{}: {} problem(s):\n{}", path.display(), d.len(), text.trim_end()))
}

fn run(args: &[String]) -> Result<(), Exit> {
    let o = parse(
        args,
        &[
            "--input",
            "--output",
            "--out-dir",
            "--profile",
            "--trace",
            "--memory-cap",
            "--fp8-saturate",
            "--tsc-reverse",
            "--stats",
            "--threads",
            "--allow-uninit-inputs",
            "--max-instructions",
            "--oob",
            "--dma-block-in-stream",
            "--trace-data",
            "--expect",
            "--ulp",
        ],
    )?;
    if o.ulp.is_some() && o.expects.is_empty() {
        return Err(bad("--ulp needs an --expect"));
    }
    if o.trace_data && o.trace.is_none() {
        return Err(bad("--trace-data needs a --trace"));
    }
    let mut profile = match o.profile.as_deref() {
        None => Profile::refsim(),
        Some(p) => Profile::named(p).ok_or_else(|| bad(format!("--profile {p}: expected refsim or nki")))?,
    };
    if let Some(sat) = o.fp8_saturate {
        profile.fp8_saturate = sat;
    }
    let program = load(&o.program, &o)?;
    let valid = validate(&program, &options(&o)).map_err(|d| problems(&o.program, &d))?;
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
    let expects = diff::open_expects(f, &o.expects)?;
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
        outputs.iter().map(|(t, _, _)| t.loc).chain(expects.iter().map(diff::Expect::loc)).collect();
    sim.free_dead_locations(&keep);
    let mut options = simulator::Options::default();
    if let Some(n) = o.threads {
        options.parallelism.threads = n;
    }
    if let Some(n) = o.max_instructions {
        options.max_instructions = n;
    }
    if let Some(cap) = o.memory_cap {
        options.memory_cap = cap;
    }
    if let Some(direction) = o.tsc_reverse {
        options.reverse_flags_reverse_scan = direction;
    }
    if let Some(oob) = o.oob {
        options.indirect_oob = oob;
    }
    if let Some(b) = o.dma_block_in_stream {
        options.dma_block_in_stream = b;
    }
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
    let outcome = sim.run().map_err(|e| Exit(3, e.to_string()))?;
    let executed = sim.executed();
    if let Some(stats) = sim.stats() {
        print_stats(stats);
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
        let tolerance = o.ulp.map_or(simulator::diff::Tolerance::Exact, simulator::diff::Tolerance::Ulp);
        let mut reports = diff::compare(&mut sim, &expects, tolerance, &profile)?;
        if reports.iter().any(|r| !r.matches()) {
            // Write provenance: the same run again, watching only the mismatching elements.
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
    Ok(())
}

/// `birsim diff A.jsonl B.jsonl [--json]` (module `diff`, docs/trace.md).
fn diff_cmd(args: &[String]) -> Result<(), Exit> {
    let mut files = Vec::new();
    let mut json = false;
    for a in args {
        match a.as_str() {
            "--json" => json = true,
            f if f.starts_with("--") => return Err(bad(format!("unknown option `{f}`\n\n{USAGE}"))),
            f => files.push(PathBuf::from(f)),
        }
    }
    match files.as_slice() {
        [a, b] => diff::diff_files(a, b, json),
        _ => Err(bad(format!("diff needs two trace files (A.jsonl B.jsonl)\n\n{USAGE}"))),
    }
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

fn dump(args: &[String]) -> Result<(), Exit> {
    let o = parse(args, &[])?;
    let p = load(&o.program, &o)?;
    println!("arch {} · version {}", p.arch, p.version);
    for f in &p.functions {
        println!("\nfunction {}", f.name);
        println!("  allocations:");
        for a in &f.allocations {
            println!("    {} {} {} {}", a.name, a.kind, a.dtype, shape_str(&a.tensor_shape));
            for l in a.locations.iter().filter_map(|id| f.location(*id)) {
                println!(
                    "      {} {} dims [{}, {}] base {} addr {}{}",
                    l.name,
                    l.mem_type,
                    l.partitions,
                    l.bytes_per_partition,
                    l.base,
                    l.addr,
                    if l.allocated { " allocated" } else { "" }
                );
            }
        }
        println!("  body:");
        list(f, &f.body, 4);
    }
    Ok(())
}

fn operand(f: &Function, a: &Operand) -> String {
    match a {
        Operand::Ap(ap) => {
            let name = f.location(ap.loc).map_or("?", |l| l.name.as_str());
            let pairs: Vec<String> = ap.pairs.iter().map(|p| format!("[{},{}]", p.step, p.num)).collect();
            let dynamic = if ap.dynamic.is_some() { " +dyn" } else { "" };
            format!("{name}:{}@{}{}{dynamic}", ap.dtype, ap.offset, pairs.join(""))
        }
        Operand::Imm { dtype, value } => format!("imm {dtype} {value:?}"),
        other => other.kind_name().to_owned(),
    }
}

fn list(f: &Function, nodes: &[Node], indent: usize) {
    let pad = " ".repeat(indent);
    for (k, n) in nodes.iter().enumerate() {
        match n {
            Node::Block(b) => {
                println!("{pad}block {}", b.name);
                list(f, &b.body, indent + 2);
            }
            Node::Loop(l) => {
                println!("{pad}loop {} for {} in {}..{} step {}", l.name, l.var, l.lb, l.ub, l.stride);
                list(f, &l.body, indent + 2);
            }
            Node::Inst(i) => {
                let ins: Vec<String> = i.ins.iter().map(|a| operand(f, a)).collect();
                let outs: Vec<String> = i.outs.iter().map(|a| operand(f, a)).collect();
                println!(
                    "{pad}#{k} {} {} [{}] {} <- {}",
                    i.name,
                    i.opcode(),
                    i.engine.name(),
                    outs.join(", "),
                    ins.join(", ")
                );
            }
        }
    }
}
