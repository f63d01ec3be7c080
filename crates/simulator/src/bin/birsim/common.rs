//! What several `birsim` subcommands share: the run limits (`--memory-cap`,
//! `--max-instructions`), the value parser of the simulator options' flags, reading a program
//! file, the problem list, the value parser of `NAME=FILE.npy` pairs, and staged output files
//! (written beside their target, moved into place only when every one is whole).

use super::{Exit, bad};
use bir_ir::{Program, ValidateOptions, json};
use simulator::{OptionError, OptionValues, Options};
use std::path::{Path, PathBuf};

/// The limits validation (and the run) enforce; shared by `run`, `validate` and `dge`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Limits {
    /// The most bytes of memory the program may make birsim allocate, and the largest program
    /// file read [default: 4 GiB]
    ///
    /// A run that needs more stops with a `budget` fault (exit 1), or exit 2 while reading the
    /// program or an input; birsim never aborts (docs/robustness.md).
    #[arg(long, value_name = "BYTES", value_parser = option("memory_cap"), allow_negative_numbers = true)]
    pub memory_cap: Option<String>,
    /// The most instructions a run may execute, loop iterations counted [default: 10^9]
    ///
    /// A program that would execute more is refused before it runs.
    #[arg(long, value_name = "N", value_parser = option("max_instructions"), allow_negative_numbers = true)]
    pub max_instructions: Option<String>,
}

impl Limits {
    /// The run options these limits set, the others at their defaults.
    pub fn options(&self) -> Result<Options, Exit> {
        let mut o = Options::default();
        set(&mut o, "memory_cap", &self.memory_cap)?;
        set(&mut o, "max_instructions", &self.max_instructions)?;
        Ok(o)
    }

    /// The validation options these limits give.
    pub fn validate_options(&self) -> Result<ValidateOptions, Exit> {
        Ok(self.options()?.validate_options())
    }
}

/// Sets simulator option `name` to a flag's value, if the flag was given (its value parser,
/// [`option`], has checked it already).
pub fn set(options: &mut Options, name: &str, value: &Option<String>) -> Result<(), Exit> {
    match value {
        Some(v) => options.set(name, v).map_err(|e| bad(e.to_string())),
        None => Ok(()),
    }
}

/// What a refused option value should have been (`expected fault or skip`): the part of
/// [`OptionError`]'s text after the `name=value` a flag's usage error already shows.
pub fn expected(e: &OptionError) -> String {
    match e {
        OptionError::Value { expected, .. } => format!("expected {expected}"),
        other => other.to_string(),
    }
}

/// The value parser of the flag of simulator option `name` ([`Options::NAMES`]; the flag is
/// the name with dashes). The value stays the string given, applied later with
/// [`Options::set`]; the words --help and the shell completions list, the check, and the error
/// text all come from the options table, so the CLI spells every option as the Python package
/// and the conformance cases do.
pub fn option(name: &'static str) -> OptionValue {
    OptionValue(name)
}

/// [`option`]'s parser.
#[derive(Clone, Debug)]
pub struct OptionValue(&'static str);

impl clap::builder::TypedValueParser for OptionValue {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let name = self.0;
        let check = move |v: &str| -> Result<String, String> {
            Options::default().set(name, v).map_err(|e| expected(&e))?;
            Ok(v.to_owned())
        };
        check.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        match Options::spec(self.0)?.values {
            OptionValues::Words(words) => {
                Some(Box::new(words.iter().map(|w| clap::builder::PossibleValue::new(w.word).help(w.help))))
            }
            OptionValues::Number(_) => None,
        }
    }
}

/// The value parser of `--input`/`--output NAME=FILE.npy`.
pub fn pair(v: &str) -> Result<(String, PathBuf), String> {
    let (n, f) = v.split_once('=').ok_or("expected NAME=FILE.npy")?;
    Ok((n.to_owned(), PathBuf::from(f)))
}

/// Reads and loads a BIR JSON program.
pub fn load(path: &Path, limits: &Limits) -> Result<Program, Exit> {
    // The file is read into one buffer reserved fallibly (a file larger than memory is exit 2),
    // and never more than the memory cap of it: `/dev/zero` or an endless pipe is refused, not
    // read until the machine is full.
    let cap = limits.options()?.memory_cap;
    let too_big = || {
        bad(format!(
            "{}: the program file is larger than the memory cap of {cap} bytes (raise it with --memory-cap)",
            path.display()
        ))
    };
    let cannot = |e: std::io::Error| bad(format!("cannot read {}: {e}", path.display()));
    // A large program streams through a window, so its text is never held whole beside its IR
    // (issue #9: peak memory). Text with anything to report is read again whole below, where
    // the diagnostics are located.
    let file = std::fs::File::open(path).map_err(cannot)?;
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() >= MAPPED)
        && let Some(program) = json::load_streaming(file, cap).map_err(cannot)?
    {
        return Ok(program);
    }
    let mapped = std::fs::File::open(path).and_then(|f| read_mapped(f, cap)).map_err(cannot)?;
    let heap;
    let bytes: &[u8] = match &mapped {
        Some(m) => m.bytes(),
        None => {
            heap = std::fs::File::open(path)
                .map_err(simulator::alloc::ReadError::Io)
                .and_then(|f| {
                    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                    simulator::alloc::read_all(std::io::Read::take(f, cap.saturating_add(1)), len.min(cap))
                })
                .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
            &heap
        }
    };
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    json::load_slice(bytes).map_err(|e| match e {
        bir_ir::LoadError::Invalid(d) => problems(path, &d),
        e => bad(format!("{}: {e}", path.display())),
    })
}

/// Program files at least this large are read into an anonymous mapping.
const MAPPED: u64 = 4 << 20;
/// The huge-page size the mapping is aligned to (2 MiB on x86-64 and arm64 with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// A large program file's bytes, in an anonymous mapping advised to use huge pages: a 28 MB
/// file costs a few faults of 2 MiB instead of 7,000 of 4 KiB (issue #9; `birsim validate`'s
/// system time is mostly page faults). The mapping is returned to the kernel when dropped.
struct MappedText {
    map: memmap2::MmapMut,
    off: usize,
    len: usize,
}

impl MappedText {
    fn bytes(&self) -> &[u8] {
        self.map.get(self.off..self.off + self.len).unwrap_or_default()
    }
}

/// Reads a file whose size is at least [`MAPPED`] and at most `cap` into a [`MappedText`];
/// `None` for any other file, when no mapping can be made, or when the file turns out longer
/// than its size said (the caller then reads it into the heap as before).
fn read_mapped(mut f: std::fs::File, cap: u64) -> std::io::Result<Option<MappedText>> {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len < MAPPED || len > cap {
        return Ok(None);
    }
    let Ok(n) = usize::try_from(len) else { return Ok(None) };
    // One byte more than the size, to see a file that grew; one huge page more, to align.
    let Some(padded) = n.checked_add(1 + HUGE_PAGE) else { return Ok(None) };
    let Ok(mut map) = memmap2::MmapMut::map_anon(padded) else { return Ok(None) };
    let off = (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage); // a hint; without it pages are 4 KiB
    let Some(buf) = map.get_mut(off..off + n + 1) else { return Ok(None) };
    let mut got = 0;
    while let Some(rest) = buf.get_mut(got..)
        && !rest.is_empty()
    {
        match std::io::Read::read(&mut f, rest) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if got > n {
        return Ok(None);
    }
    Ok(Some(MappedText { map, off, len: got }))
}

/// Ends the life of what a subcommand built without freeing it: the process is about to exit
/// and the kernel takes its memory back at once, where dropping a program of 100,000
/// instructions walks and frees some 300,000 allocations (issue #9: a tenth of `birsim
/// validate`'s time on such a program).
pub fn leave_to_exit<T>(value: T) {
    std::mem::forget(value);
}

/// At most this many diagnostics are printed; the rest are counted.
const MAX_DIAGNOSTICS: usize = 100;

/// A problem list for the terminal: the first [`MAX_DIAGNOSTICS`] problems, each line cut at
/// 300 characters with a count of the rest ([`bir_ir::clip`]), then how many more there were.
/// Only the printed problems are formatted.
pub fn problems(path: &Path, d: &bir_ir::Diagnostics) -> Exit {
    let mut text = String::new();
    for diagnostic in d.iter().take(MAX_DIAGNOSTICS) {
        for line in diagnostic.to_string().lines() {
            text.push_str(&bir_ir::clip(line, bir_ir::ECHO_CHARS));
            text.push('\n');
        }
    }
    if d.len() > MAX_DIAGNOSTICS {
        text.push_str(&format!("… and {} more problem(s)\n", d.len() - MAX_DIAGNOSTICS));
    }
    bad(format!("{}: {} problem(s):\n{}", path.display(), d.len(), text.trim_end()))
}

/// An output file being written: everything goes to a temporary file beside its target, and
/// the targets are replaced only once every output is whole.
pub struct Staged {
    /// The file to replace (a symlink's target, resolved), or to create.
    pub target: PathBuf,
    /// The temporary file beside it that receives the bytes.
    pub tmp: PathBuf,
}

impl Staged {
    /// Checks that `path` can be written as an output and creates its (empty) temporary file.
    /// A symlink is written through to its target; anything but a regular file (a FIFO, a
    /// device, a directory) is refused, and so is a folder that does not exist.
    pub fn prepare(path: &Path, what: &str) -> Result<Staged, Exit> {
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
    pub fn write(
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

/// Every staged output of one run: removed if the run fails, moved over their targets if not.
#[derive(Default)]
pub struct Outputs(pub Vec<Staged>);

impl Outputs {
    /// Puts every temporary file in place of its target, in order. Each replacement is atomic
    /// (the target's name always names a whole file, the old one or the new one); none is
    /// durable (birsim never fsyncs, docs/robustness.md "Output files"). If one fails, the
    /// temporary files not yet moved are removed (by `Drop`) and the error names its target.
    pub fn commit(mut self) -> Result<(), Exit> {
        let mut rest = std::mem::take(&mut self.0).into_iter();
        while let Some(s) = rest.next() {
            if let Err(e) = replace(&s.tmp, &s.target) {
                let _ = std::fs::remove_file(&s.tmp);
                self.0 = rest.collect();
                return Err(bad(format!("cannot write {}: {e}", s.target.display())));
            }
        }
        Ok(())
    }
}

/// Moves `tmp` over `target`: an exchange where Linux offers one, else a rename.
fn replace(tmp: &Path, target: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if exchange(tmp, target) {
        return Ok(());
    }
    std::fs::rename(tmp, target)
}

/// Replaces an existing `target` by swapping the two names (`renameat2(RENAME_EXCHANGE)`) and
/// then removing `tmp`, which names the old file after the swap; true if it did.
///
/// Why not a rename: ext4 (mounted with its default `auto_da_alloc`) writes a file's delayed
/// data to disk inside a `rename` that replaces an existing file, which took 0.7-3.6 s for a
/// 1 GiB output (a run of 1.2 s); the exchange path has no such flush. False (nothing changed,
/// the caller renames as before) when the exchange is refused: no target (`ENOENT`), a file
/// system or kernel without exchange (`EINVAL`, `ENOSYS`, `EOPNOTSUPP`), or any other error.
/// A target that became a folder while the program ran is swapped back, so that the rename
/// refuses it as it always did. If the old file cannot be removed, the output is in place all
/// the same: a warning names the leftover file and the run still succeeds.
#[cfg(target_os = "linux")]
fn exchange(tmp: &Path, target: &Path) -> bool {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    if renameat_with(CWD, tmp, CWD, target, RenameFlags::EXCHANGE).is_err() {
        return false;
    }
    if std::fs::symlink_metadata(tmp).is_ok_and(|m| m.is_dir()) {
        // Swapping back leaves both names as they were. If even that fails, the new file is
        // in place and the folder keeps the temporary name, which the warning gives.
        if renameat_with(CWD, tmp, CWD, target, RenameFlags::EXCHANGE).is_ok() {
            return false;
        }
        eprintln!("birsim: warning: the folder {} was moved to {}", target.display(), tmp.display());
        return true;
    }
    if let Err(e) = std::fs::remove_file(tmp) {
        eprintln!(
            "birsim: warning: {} is written, but its old contents could not be removed from {} ({e})",
            target.display(),
            tmp.display()
        );
    }
    true
}

impl Drop for Outputs {
    fn drop(&mut self) {
        for s in &self.0 {
            let _ = std::fs::remove_file(&s.tmp);
        }
    }
}

/// A path flag's value parser that accepts an empty value (clap's own refuses it as missing),
/// so `--trace ""` gets birsim's "not a file path" like any path that names no file.
pub fn any_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(PathBuf::from)
}
