//! The `isa` suite (issue 12, docs/isa.md "Files and CLI"): each `conformance/isa/<case>/` holds
//! `words.bin`, `state/STATE.json` with its images, `expect` and `expected/`. The words run
//! through the library (`Machine::run_raw`, the same path as `birsim isa run`), and every image
//! in `expected/` is compared byte for byte with the output state:
//!
//! - `sbuf.npy` / `psum.npy`: `[128, B]`, compared with the first B bytes of each partition; the
//!   rest of the output image must be what the input state held there (zero unless given), so a
//!   stray write shows.
//! - `pool.npy`: the Pool_Buffer `[128, count · esize]` (it must be loaded).
//! - `<name>.npy`: the DRAM region named `<name>` (or whose state file is `<name>.npy`), whole.
//!
//! `expect` holds `choice: X<n>` lines (counted like the program suites' choices), `#` comments
//! and exactly one of `ok` or `fault KIND`. A fault case passes when the run stops with that
//! kind; images in its `expected/` (if any) are compared with the state after the fault.

use super::Outcome;
use indirection::isa::machine::{FaultKind, Machine, PARTITIONS, Space};
use simulator::isa_state::{IsaState, StateLimits, read_state};
use simulator::npy::Npy;
use std::path::{Path, PathBuf};

/// One parsed case.
#[derive(Debug)]
pub struct IsaCase {
    /// The case folder.
    pub dir: PathBuf,
    /// docs/fidelity.md ids the expected values encode.
    pub choices: Vec<String>,
    /// The fault kind the run must stop with, or `None` for `ok`.
    pub fault: Option<FaultKind>,
}

impl IsaCase {
    /// Reads `<case>/expect`.
    pub fn read(expect: &Path) -> Result<IsaCase, String> {
        let text = std::fs::read_to_string(expect).map_err(|e| format!("{}: {e}", expect.display()))?;
        let dir = expect.parent().unwrap_or(Path::new(".")).to_path_buf();
        let (mut choices, mut outcome) = (Vec::new(), None);
        for (k, raw) in text.lines().enumerate() {
            let l = raw.trim();
            let at = || format!("{}:{}", expect.display(), k + 1);
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let this = if let Some(id) = l.strip_prefix("choice:") {
                let id = id.trim();
                if id.is_empty() || id.contains(char::is_whitespace) {
                    return Err(format!("{}: expected `choice: ID`", at()));
                }
                choices.push(id.to_owned());
                continue;
            } else if l == "ok" {
                None
            } else if let Some(kind) = l.strip_prefix("fault ") {
                let kind = kind.split('|').next().unwrap_or("").trim();
                Some(FaultKind::named(kind).ok_or_else(|| {
                    format!(
                        "{}: unknown fault kind `{kind}` (invalid, out-of-bounds, state, dtype, duplicate-index, not-implemented)",
                        at()
                    )
                })?)
            } else {
                return Err(format!(
                    "{}: unknown line `{l}` (expected `choice: ID`, `ok` or `fault KIND`)",
                    at()
                ));
            };
            if outcome.replace(this).is_some() {
                return Err(format!("{}: a case expects exactly one `ok` or `fault KIND`", at()));
            }
        }
        let fault = outcome.ok_or_else(|| format!("{}: no `ok` or `fault KIND` line", expect.display()))?;
        Ok(IsaCase { dir, choices, fault })
    }
}

fn read_npy(path: &Path) -> Result<Npy, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Npy::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads the case's state through the library's reader, files from `state/`.
pub fn load_state(dir: &Path) -> Result<IsaState, String> {
    let sdir = dir.join("state");
    let json = std::fs::read(sdir.join("STATE.json")).map_err(|e| format!("state/STATE.json: {e}"))?;
    let mut open = |name: &str, max: u64| -> Result<Vec<u8>, String> {
        let p = sdir.join(name);
        let len = std::fs::metadata(&p).map_err(|e| e.to_string())?.len();
        if len > max {
            return Err(format!("{len} bytes, more than {max}"));
        }
        std::fs::read(&p).map_err(|e| e.to_string())
    };
    read_state(&json, &mut open, &StateLimits::default()).map_err(|e| format!("state/{e}"))
}

pub fn run(case: &IsaCase) -> Outcome {
    match check(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(case: &IsaCase) -> Result<(), String> {
    let bytes = std::fs::read(case.dir.join("words.bin")).map_err(|e| format!("words.bin: {e}"))?;
    if bytes.len() % 64 != 0 {
        return Err(format!("words.bin: {} bytes is not a whole number of 64-byte words", bytes.len()));
    }
    let words = bytes.as_chunks::<64>().0;
    let st = load_state(&case.dir)?;
    let before = st.machine.clone();
    let mut m = st.machine.clone();
    let got = m.run_raw(words, &st.options).err();
    match (&got, case.fault) {
        (None, None) => {}
        (Some(f), None) => return Err(format!("expected ok, the run faulted: fault {}: {f}", f.kind)),
        (None, Some(k)) => return Err(format!("expected a `{k}` fault, but the run finished")),
        (Some(f), Some(k)) if f.kind != k => {
            return Err(format!("expected a `{k}` fault, got fault {}: {f}", f.kind));
        }
        (Some(_), Some(_)) => {}
    }
    let exp = case.dir.join("expected");
    if !exp.is_dir() {
        return Ok(());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&exp)
        .map_err(|e| format!("expected/: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "npy"))
        .collect();
    files.sort();
    let mut problems = Vec::new();
    for f in &files {
        if let Err(e) = compare(f, &m, &before, &st) {
            problems.push(e);
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

/// Compares one expected image with the machine after the run.
fn compare(path: &Path, m: &Machine, before: &Machine, st: &IsaState) -> Result<(), String> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.trim_end_matches(".npy");
    let want = read_npy(path)?;
    if want.descr != "|u1" {
        return Err(format!("expected/{name}: dtype {}, expected uint8", want.descr));
    }
    match stem {
        "sbuf" | "psum" => {
            let space = if stem == "sbuf" { Space::Sbuf } else { Space::Psum };
            let pb = m.partition_bytes(space);
            let [rows, b] = want.shape[..] else {
                return Err(format!("expected/{name}: shape {:?}, expected [128, B]", want.shape));
            };
            if rows != PARTITIONS as u64 || b > pb as u64 {
                return Err(format!("expected/{name}: shape [{rows}, {b}], expected [128, B <= {pb}]"));
            }
            let b = b as usize;
            let (got, old) = (m.space(space), before.space(space));
            for p in 0..PARTITIONS {
                let row = &got[p * pb..(p + 1) * pb];
                let w = &want.data[p * b..(p + 1) * b];
                if let Some(off) = first_diff(&row[..b], w) {
                    return Err(format!("expected/{name}: {}", show(p, off, &row[..b], w)));
                }
                let rest_old = &old[p * pb + b..(p + 1) * pb];
                if let Some(off) = first_diff(&row[b..], rest_old) {
                    return Err(format!(
                        "{stem}: a write past the expected image's {b} bytes: {}",
                        show(p, b + off, row, &[&old[p * pb..p * pb + b], rest_old].concat())
                    ));
                }
            }
            Ok(())
        }
        "pool" => {
            let pool = &m.pool_buffer;
            if !pool.loaded {
                return Err("expected/pool.npy: the Pool_Buffer is not loaded after the run".into());
            }
            let row = pool.count * pool.dtype.size();
            if want.shape != [PARTITIONS as u64, row as u64] {
                return Err(format!("expected/pool.npy: shape {:?}, birsim holds [128, {row}]", want.shape));
            }
            match first_diff(&pool.data, &want.data) {
                Some(off) => Err(format!(
                    "expected/pool.npy: {}",
                    show(
                        off / row.max(1),
                        off % row.max(1),
                        &pool.data[off / row.max(1) * row..],
                        &want.data[off / row.max(1) * row..]
                    )
                )),
                None => Ok(()),
            }
        }
        _ => {
            let k = m
                .dram()
                .iter()
                .position(|r| r.name == stem)
                .or_else(|| st.names.dram.iter().position(|f| *f == name))
                .ok_or_else(|| format!("expected/{name}: no DRAM region named `{stem}` in the state"))?;
            let got = &m.dram()[k].bytes;
            if want.data.len() != got.len() {
                return Err(format!(
                    "expected/{name}: {} bytes, the region holds {}",
                    want.data.len(),
                    got.len()
                ));
            }
            match first_diff(got, &want.data) {
                Some(off) => Err(format!(
                    "expected/{name} (DRAM region `{stem}`): {}",
                    show_flat(off, got, &want.data)
                )),
                None => Ok(()),
            }
        }
    }
}

fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then_some(a.len().min(b.len())))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect::<Vec<_>>().join(" ")
}

/// The first difference in partition `p` at byte `off` of the row, with 16 bytes from there.
fn show(p: usize, off: usize, got: &[u8], want: &[u8]) -> String {
    let end = |s: &[u8]| (off + 16).min(s.len());
    format!(
        "partition {p} byte {off} differs:\n    expected {}\n    birsim   {}",
        hex(want.get(off..end(want)).unwrap_or(&[])),
        hex(got.get(off..end(got)).unwrap_or(&[]))
    )
}

fn show_flat(off: usize, got: &[u8], want: &[u8]) -> String {
    let end = |s: &[u8]| (off + 16).min(s.len());
    format!(
        "byte {off} differs:\n    expected {}\n    birsim   {}",
        hex(want.get(off..end(want)).unwrap_or(&[])),
        hex(got.get(off..end(got)).unwrap_or(&[]))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<IsaCase, String> {
        let dir = std::env::temp_dir().join(format!("xtask-isa-{}-{}", std::process::id(), text.len()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let p = dir.join("expect");
        std::fs::write(&p, text).map_err(|e| e.to_string())?;
        let c = IsaCase::read(&p);
        let _ = std::fs::remove_dir_all(&dir);
        c
    }

    #[test]
    fn expect_files() {
        let c = parse("# a comment\nchoice: X20\nchoice: X3\nok\n").unwrap();
        assert_eq!((c.choices.len(), c.fault), (2, None));
        let c = parse("fault out-of-bounds\n").unwrap();
        assert_eq!(c.fault, Some(FaultKind::OutOfBounds));
        assert!(parse("choice: X1\n").is_err(), "an outcome is required");
        assert!(parse("ok\nfault state\n").is_err(), "exactly one outcome");
        assert!(parse("fault sideways\n").is_err());
        assert!(parse("choice: X1 X2\nok\n").is_err());
    }

    #[test]
    fn differences_name_partition_and_byte() {
        let s = show(3, 1, &[0, 0xAB, 2], &[0, 0xCD, 2]);
        assert!(s.contains("partition 3 byte 1") && s.contains("CD 02") && s.contains("AB 02"), "{s}");
        assert_eq!(first_diff(&[1, 2], &[1, 2]), None);
        assert_eq!(first_diff(&[1, 2], &[1]), Some(1));
    }
}
