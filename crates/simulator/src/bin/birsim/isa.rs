//! `birsim isa …`: the 64-byte ISA words of the indirection engine (seed 004 §3; docs/isa.md
//! "Files and CLI"). `decode` prints WORDS.bin as a JSON array, `encode` writes that JSON back
//! as bytes, `validate` prints every violation for a generation. The words live in
//! `indirection::isa`; this module only reads and writes files.

use super::{Exit, Outputs, Staged, bad};
use indirection::isa::{Generation, IsaError, Word, validate};
use std::path::{Path, PathBuf};

/// Bytes per word.
const WORD: usize = 64;

pub(crate) const USAGE: &str = "\
  birsim isa decode WORDS.bin
  birsim isa encode WORDS.json [-o WORDS.bin]
  birsim isa validate WORDS.bin --gen v2|v3|v4|v5
  birsim isa run WORDS.bin --state STATE.json --out-dir DIR";

/// Dispatches `birsim isa SUBCOMMAND …`.
pub(crate) fn isa(args: &[String]) -> Result<(), Exit> {
    let rest = args.get(1..).unwrap_or(&[]);
    match args.first().map(String::as_str) {
        Some("decode") => decode(rest),
        Some("encode") => encode(rest),
        Some("validate") => validate_cmd(rest),
        Some("run") => super::isa_run::run(rest),
        Some(other) => Err(bad(format!("unknown isa command `{other}`\n\nusage:\n{USAGE}"))),
        None => Err(bad(format!("usage:\n{USAGE}"))),
    }
}

/// The parsed arguments of one isa subcommand.
#[derive(Default)]
struct Args {
    file: Option<PathBuf>,
    gen_name: Option<String>,
    output: Option<PathBuf>,
}

/// One positional file plus the options in `allowed` (each takes a value, `--x V` or `--x=V`).
fn parse(args: &[String], allowed: &[&str], what: &str) -> Result<Args, Exit> {
    let mut a = Args::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        if !flag.starts_with('-') || flag == "-" {
            if a.file.replace(PathBuf::from(arg)).is_some() {
                return Err(bad(format!("unexpected argument `{arg}` (one {what} only)")));
            }
            continue;
        }
        if !allowed.contains(&flag) {
            return Err(bad(format!("unknown option `{flag}`\n\nusage:\n{USAGE}")));
        }
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| bad(format!("{flag} needs a value")))?,
        };
        match flag {
            "--gen" => a.gen_name = Some(value),
            "-o" | "--output" => a.output = Some(PathBuf::from(value)),
            _ => return Err(bad(format!("unknown option `{flag}`"))),
        }
    }
    if a.file.is_none() {
        return Err(bad(format!("missing {what}\n\nusage:\n{USAGE}")));
    }
    Ok(a)
}

/// Reads a file into memory, refusing one larger than 4 GiB (an endless pipe is not read until
/// the machine is full).
fn read(path: &Path) -> Result<Vec<u8>, Exit> {
    const CAP: u64 = 4 << 30;
    let bytes = std::fs::File::open(path)
        .map_err(simulator::alloc::ReadError::Io)
        .and_then(|f| {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            simulator::alloc::read_all(std::io::Read::take(f, CAP.saturating_add(1)), len.min(CAP))
        })
        .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > CAP {
        return Err(bad(format!("{}: larger than {CAP} bytes", path.display())));
    }
    Ok(bytes)
}

/// WORDS.bin as 64-byte words; a length that is not a multiple of 64 is an error.
fn words(path: &Path) -> Result<Vec<[u8; WORD]>, Exit> {
    let bytes = read(path)?;
    let (chunks, tail) = bytes.as_chunks::<WORD>();
    if !tail.is_empty() {
        return Err(bad(format!(
            "{}: {} bytes is not a whole number of 64-byte words ({} word(s) and {} byte(s) left over)",
            path.display(),
            bytes.len(),
            chunks.len(),
            tail.len()
        )));
    }
    Ok(chunks.to_vec())
}

/// The field a decode error concerns, for `word K: FIELD: …` lines.
fn error_field(e: &IsaError) -> &'static str {
    match e {
        IsaError::BadEnum { field, .. } => field,
        IsaError::WrongOpcode { .. } | IsaError::UnknownOpcode { .. } | IsaError::NoWireLayout { .. } => {
            "header.opcode"
        }
    }
}

fn decode(args: &[String]) -> Result<(), Exit> {
    let a = parse(args, &[], "WORDS.bin")?;
    let path = a.file.unwrap_or_default();
    let mut decoded = Vec::new();
    let mut errors = Vec::new();
    for (k, w) in words(&path)?.iter().enumerate() {
        match Word::decode(w) {
            Ok(d) => decoded.push(d),
            Err(e) => errors.push(format!("word {k}: {}: {e}", error_field(&e))),
        }
    }
    if !errors.is_empty() {
        return Err(word_errors(&path, "cannot be decoded", &errors));
    }
    let text = serde_json::to_string_pretty(&decoded).map_err(|e| Exit(3, e.to_string()))?;
    println!("{text}");
    Ok(())
}

/// At most 100 lines of per-word errors, then a count.
fn word_errors(path: &Path, what: &str, errors: &[String]) -> Exit {
    let mut text: Vec<String> = errors.iter().take(100).cloned().collect();
    if errors.len() > 100 {
        text.push(format!("… and {} more", errors.len() - 100));
    }
    bad(format!("{}: {} word(s) {what}:\n{}", path.display(), errors.len(), text.join("\n")))
}

fn encode(args: &[String]) -> Result<(), Exit> {
    let a = parse(args, &["-o", "--output"], "WORDS.json")?;
    let path = a.file.unwrap_or_default();
    let text = read(&path)?;
    let values: Vec<serde_json::Value> = serde_json::from_slice(&text)
        .map_err(|e| bad(format!("{}: {e} (expected a JSON array of words)", path.display())))?;
    let mut bytes = Vec::with_capacity(values.len().saturating_mul(WORD));
    let mut errors = Vec::new();
    for (k, v) in values.into_iter().enumerate() {
        match serde_json::from_value::<Word>(v) {
            Ok(w) => bytes.extend_from_slice(&w.encode()),
            Err(e) => errors.push(format!("word {k}: {e}")),
        }
    }
    if !errors.is_empty() {
        return Err(word_errors(&path, "cannot be encoded", &errors));
    }
    match a.output {
        Some(out) => {
            let staged = Staged::prepare(&out, "-o")?;
            staged.write(|w| std::io::Write::write_all(w, &bytes).map_err(|e| e.to_string()))?;
            Outputs(vec![staged]).commit()
        }
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&bytes)
                .and_then(|()| stdout.flush())
                .map_err(|e| bad(format!("cannot write stdout: {e}")))
        }
    }
}

fn validate_cmd(args: &[String]) -> Result<(), Exit> {
    let a = parse(args, &["--gen"], "WORDS.bin")?;
    let path = a.file.unwrap_or_default();
    let name = a.gen_name.ok_or_else(|| bad("isa validate needs --gen v2|v3|v4|v5"))?;
    let g = Generation::from_name(&name)
        .ok_or_else(|| bad(format!("--gen {name}: expected v2, v3, v4 or v5")))?;
    let words = words(&path)?;
    let mut lines = Vec::new();
    let mut bad_words = 0;
    for (k, w) in words.iter().enumerate() {
        let before = lines.len();
        match Word::decode(w) {
            Ok(d) => lines.extend(validate(&d, g).iter().map(|v| format!("word {k}: {v}"))),
            Err(e) => lines.push(format!("word {k}: {}: {e} [decode]", error_field(&e))),
        }
        bad_words += usize::from(lines.len() > before);
    }
    for l in &lines {
        println!("{l}");
    }
    if lines.is_empty() {
        eprintln!("birsim: {}: ok ({} word(s) valid on {g})", path.display(), words.len());
        Ok(())
    } else {
        Err(Exit(
            1,
            format!(
                "{}: {} violation(s) in {bad_words} of {} word(s) on {g}",
                path.display(),
                lines.len(),
                words.len()
            ),
        ))
    }
}
