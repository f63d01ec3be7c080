//! `birsim isa run WORDS.bin --state STATE.json --out-dir DIR` (docs/isa.md "Files and CLI"):
//! reads the words and the machine state, runs the words in order, and writes the resulting
//! state (`state.json` and its images) into DIR. A guest fault is exit 1 with `fault KIND: …`
//! and DIR is neither created nor changed; a bad file is exit 2. DIR is written as a temporary
//! folder beside it, renamed into place only when whole; an existing DIR must be empty.

use super::{Exit, bad};
use indirection::isa::machine::Machine;
use simulator::isa_state::{StateLimits, read_state, write_state};
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: birsim isa run WORDS.bin --state STATE.json --out-dir DIR";

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

pub fn run(args: &[String]) -> Result<(), Exit> {
    let (mut words, mut state, mut out) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (a.as_str(), None),
        };
        let mut value = || {
            inline.clone().or_else(|| it.next().cloned()).ok_or_else(|| bad(format!("{flag} needs a value")))
        };
        match flag {
            "--state" => state = Some(PathBuf::from(value()?)),
            "--out-dir" => out = Some(PathBuf::from(value()?)),
            f if f.starts_with("--") => return Err(bad(format!("isa run: unknown option `{f}`\n{USAGE}"))),
            _ if words.is_none() => words = Some(PathBuf::from(a)),
            _ => return Err(bad(format!("isa run: unexpected argument `{a}`\n{USAGE}"))),
        }
    }
    let words = words.ok_or_else(|| bad(format!("isa run: missing WORDS.bin\n{USAGE}")))?;
    let state = state.ok_or_else(|| bad(format!("isa run: missing --state STATE.json\n{USAGE}")))?;
    let out = out.ok_or_else(|| bad(format!("isa run: missing --out-dir DIR\n{USAGE}")))?;

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
    match std::fs::symlink_metadata(&out) {
        Ok(m) if m.is_dir() => {
            let empty = std::fs::read_dir(&out).map(|mut d| d.next().is_none()).unwrap_or(false);
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

    let bytes = read_capped(&words, MAX_WORDS_BYTES).map_err(bad)?;
    if bytes.len() % 64 != 0 {
        return Err(bad(format!(
            "{}: {} bytes is not a whole number of 64-byte words",
            words.display(),
            bytes.len()
        )));
    }
    let raw: Vec<[u8; 64]> = bytes.as_chunks::<64>().0.to_vec();
    let json = read_capped(&state, MAX_STATE_JSON).map_err(bad)?;
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
        std::fs::rename(&tmp, &out).map_err(|e| format!("cannot create {}: {e}", out.display()))
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(bad(e));
    }
    eprintln!("birsim: ok: {} word(s) run, {} file(s) written to {}", raw.len(), files.len(), out.display());
    Ok(())
}
