//! `birsim isa …`: the 64-byte ISA words of the indirection engine (seed 004 §3; docs/isa.md
//! "Files and CLI"). `decode` prints WORDS.bin as a JSON array, `encode` writes that JSON back
//! as bytes, `validate` prints every violation for a generation. The words live in
//! `indirection::isa`; this module only reads and writes files.

use super::common::{Outputs, Staged};
use super::{Exit, bad, emit};
use indirection::isa::{Generation, IsaError, Word, validate};
use std::path::{Path, PathBuf};

/// Bytes per word.
const WORD: usize = 64;

/// Decode, encode, validate and run 64-byte ISA words
///
/// The GpSimd indirection engine's ISA words below BIR (GATHER, INDIRECT_COPY, DMA_INDIRECT,
/// EMBEDDING_UPDATE, POOL_BUFFER_LOAD; docs/isa.md). WORDS.bin is 64-byte words back to back,
/// WORDS.json a JSON array of them with the header's field names.
///
/// Exit codes: 0 ok, 1 a word is invalid (validate) or faulted (run), 2 bad input or usage,
/// 3 internal error.
#[derive(clap::Args, Debug)]
pub struct IsaArgs {
    #[command(subcommand)]
    pub cmd: IsaCmd,
}

/// The `isa` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum IsaCmd {
    Decode(DecodeArgs),
    Encode(EncodeArgs),
    Validate(IsaValidateArgs),
    Run(super::isa_run::IsaRunArgs),
}

/// Print WORDS.bin as a JSON array of words (the header's field names)
///
/// Every word that cannot be decoded is named as `word K: FIELD: message` (exit 2).
#[derive(clap::Args, Debug)]
pub struct DecodeArgs {
    /// 64-byte words back to back
    #[arg(value_name = "WORDS.bin")]
    pub file: PathBuf,
}

/// Write a JSON array of words back as 64-byte words
///
/// Writes the bytes to -o (atomically), else to stdout. Every word that cannot be encoded is
/// named as `word K: message` (exit 2) and nothing is written.
#[derive(clap::Args, Debug)]
pub struct EncodeArgs {
    /// A JSON array of words, as `isa decode` prints them
    #[arg(value_name = "WORDS.json")]
    pub file: PathBuf,
    /// Writes the words to this file instead of stdout
    #[arg(short = 'o', long = "output", value_name = "WORDS.bin")]
    pub output: Option<PathBuf>,
}

/// Check every word against one hardware generation's rules
///
/// Prints each violation as `word K: FIELD: message [rule]` and exits 1 if there is any.
#[derive(clap::Args, Debug)]
pub struct IsaValidateArgs {
    /// 64-byte words back to back
    #[arg(value_name = "WORDS.bin")]
    pub file: PathBuf,
    /// The hardware generation whose rules apply
    #[arg(long = "gen", value_name = "GEN", value_parser = ["v2", "v3", "v4", "v5"])]
    pub gen_name: String,
}

/// Runs `birsim isa SUBCOMMAND …`.
pub fn isa(args: &IsaArgs) -> Result<(), Exit> {
    match &args.cmd {
        IsaCmd::Decode(a) => decode(a),
        IsaCmd::Encode(a) => encode(a),
        IsaCmd::Validate(a) => validate_cmd(a),
        IsaCmd::Run(a) => super::isa_run::run(a),
    }
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

fn decode(a: &DecodeArgs) -> Result<(), Exit> {
    let path = &a.file;
    let mut decoded = Vec::new();
    let mut errors = Vec::new();
    for (k, w) in words(path)?.iter().enumerate() {
        match Word::decode(w) {
            Ok(d) => decoded.push(d),
            Err(e) => errors.push(format!("word {k}: {}: {e}", error_field(&e))),
        }
    }
    if !errors.is_empty() {
        return Err(word_errors(path, "cannot be decoded", &errors));
    }
    let text = serde_json::to_string_pretty(&decoded).map_err(|e| Exit(3, e.to_string()))?;
    emit(&format!("{text}\n"))
}

/// At most 100 lines of per-word errors, then a count.
fn word_errors(path: &Path, what: &str, errors: &[String]) -> Exit {
    let mut text: Vec<String> = errors.iter().take(100).cloned().collect();
    if errors.len() > 100 {
        text.push(format!("… and {} more", errors.len() - 100));
    }
    bad(format!("{}: {} word(s) {what}:\n{}", path.display(), errors.len(), text.join("\n")))
}

fn encode(a: &EncodeArgs) -> Result<(), Exit> {
    let path = &a.file;
    let text = read(path)?;
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
        return Err(word_errors(path, "cannot be encoded", &errors));
    }
    match &a.output {
        Some(out) => {
            let staged = Staged::prepare(out, "-o")?;
            staged.write(|w| std::io::Write::write_all(w, &bytes).map_err(|e| e.to_string()))?;
            Outputs(vec![staged]).commit()
        }
        None => super::exit::emit_bytes(&bytes),
    }
}

fn validate_cmd(a: &IsaValidateArgs) -> Result<(), Exit> {
    let path = &a.file;
    let name = &a.gen_name;
    let g =
        Generation::from_name(name).ok_or_else(|| bad(format!("--gen {name}: expected v2, v3, v4 or v5")))?;
    let words = words(path)?;
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
    let mut text = String::new();
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    emit(&text)?;
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
