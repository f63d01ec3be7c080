//! `birsim isa run WORDS.bin --state STATE.json --out-dir DIR` (docs/isa.md "Files and CLI"):
//! reads the words and the machine state, runs the words in order, and writes the resulting
//! state (`state.json` and its images) into DIR. A guest fault is exit 1 with `fault KIND: …`
//! and DIR is neither created nor changed; a bad file is exit 2. DIR is written as a temporary
//! folder beside it, renamed into place only when whole; an existing DIR must be empty.

use super::{Exit, bad};
use indirection::isa::machine::Machine;
use simulator::isa_state::{StateLimits, read_state, write_state};
use std::path::{Path, PathBuf};

/// Run ISA words on a machine state and write the resulting state
///
/// Reads the words and the machine state (STATE.json naming uint8 .npy images of SBUF, PSUM,
/// DRAM regions and the Pool_Buffer), runs the words in order, and writes the resulting state
/// (state.json and its images) into DIR. A guest fault is exit 1 with `fault KIND: ...` and DIR
/// is neither created nor changed; a bad file is exit 2. DIR is written as a temporary folder
/// beside it, renamed into place only when whole; an existing DIR must be empty.
#[derive(clap::Args, Debug)]
pub struct IsaRunArgs {
    /// 64-byte words back to back
    #[arg(value_name = "WORDS.bin")]
    pub words: PathBuf,
    /// The machine state to start from (its images are read beside it)
    #[arg(long, value_name = "STATE.json")]
    pub state: PathBuf,
    /// The folder the resulting state is written to (new, or empty)
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

/// The most bytes of words read (2^20 words).
const MAX_WORDS_BYTES: u64 = 64 << 20;
/// The most bytes of STATE.json read.
const MAX_STATE_JSON: u64 = 16 << 20;

/// Reads at most `max` bytes of a file; a longer file is an error, not a truncated read.
fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > max {
        return Err(format!("{}: {len} bytes, more than the {max} this file may hold", path.display()));
    }
    let bytes = simulator::alloc::read_all(std::io::Read::take(f, max.saturating_add(1)), len)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!("{}: more than the {max} bytes this file may hold", path.display()));
    }
    Ok(bytes)
}

/// Runs `birsim isa run`.
pub fn run(args: &IsaRunArgs) -> Result<(), Exit> {
    let (words, state, out) = (&args.words, &args.state, &args.out_dir);
    // The output folder is checked before anything runs.
    let out_name = out.file_name().map(|n| n.to_string_lossy().into_owned());
    let Some(out_name) = out_name else {
        return Err(bad(format!("--out-dir {}: not a folder path", out.display())));
    };
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(bad(format!(
            "--out-dir {}: the folder {} does not exist",
            out.display(),
            parent.display()
        )));
    }
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.is_dir() => {
            let empty = std::fs::read_dir(out).map(|mut d| d.next().is_none()).unwrap_or(false);
            if !empty {
                return Err(bad(format!(
                    "--out-dir {}: exists and is not empty (birsim replaces no file it was not asked to write)",
                    out.display()
                )));
            }
        }
        Ok(_) => return Err(bad(format!("--out-dir {}: exists and is not a folder", out.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(bad(format!("--out-dir {}: {e}", out.display()))),
    }

    let bytes = read_capped(words, MAX_WORDS_BYTES).map_err(bad)?;
    if bytes.len() % 64 != 0 {
        return Err(bad(format!(
            "{}: {} bytes is not a whole number of 64-byte words",
            words.display(),
            bytes.len()
        )));
    }
    let raw: Vec<[u8; 64]> = bytes.as_chunks::<64>().0.to_vec();
    let json = read_capped(state, MAX_STATE_JSON).map_err(bad)?;
    let dir = state.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let mut open = |name: &str, max: u64| read_capped(&dir.join(name), max);
    let st = read_state(&json, &mut open, &StateLimits::default())
        .map_err(|e| bad(format!("{}: {e}", dir.join(&e.file).display())))?;
    let mut machine: Machine = st.machine;
    if let Err(f) = machine.run_raw(&raw, &st.options) {
        return Err(Exit(1, format!("fault {}: {f}", f.kind)));
    }
    let files = write_state(&machine, &st.options, &st.names).map_err(|e| bad(e.to_string()))?;

    // A temporary folder beside DIR, renamed over it only when every file is whole.
    let tmp = parent.join(format!(".{out_name}.birsim-{}.tmp", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let write = || -> Result<(), String> {
        std::fs::create_dir(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
        for (name, data) in &files {
            std::fs::write(tmp.join(name), data).map_err(|e| format!("cannot write {name}: {e}"))?;
        }
        std::fs::rename(&tmp, out).map_err(|e| format!("cannot create {}: {e}", out.display()))
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(bad(e));
    }
    eprintln!("birsim: ok: {} word(s) run, {} file(s) written to {}", raw.len(), files.len(), out.display());
    Ok(())
}
