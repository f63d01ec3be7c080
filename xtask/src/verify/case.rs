//! The `.expect` case format shared by every suite.
//!
//! One directive per line; `#` starts a comment line; blank lines are ignored.
//!
//! | directive | meaning |
//! |---|---|
//! | `program: FILE` | the BIR JSON program (default: `<case>.json` beside the `.expect`) |
//! | `expect: ok` | the program loads, validates and round-trips |
//! | `skip: REASON` | the case is counted as skipped (for cases that need something CI lacks) |
//! | `error KIND @ LOCATION | MESSAGE` | loading or validation reports exactly these errors: one diagnostic per line, of that kind, whose location contains LOCATION and whose message contains MESSAGE |
//!
//! Later suites add their directives here (inputs, expected outputs, profile), so every suite
//! reads one format.

use std::path::{Path, PathBuf};

/// An expected diagnostic.
#[derive(Debug, Clone)]
pub struct ExpectedError {
    pub line: usize,
    pub kind: String,
    pub location: String,
    pub message: String,
}

/// One parsed case.
#[derive(Debug)]
pub struct Case {
    pub suite: String,
    pub skip: Option<String>,
    pub expect_file: PathBuf,
    pub program: PathBuf,
    pub expect_ok: bool,
    pub errors: Vec<ExpectedError>,
}

impl Case {
    pub fn read(suite: &str, path: &Path) -> Result<Case, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut case = Case {
            suite: suite.to_owned(),
            skip: None,
            expect_file: path.to_path_buf(),
            program: dir.join(format!("{stem}.json")),
            expect_ok: false,
            errors: Vec::new(),
        };
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let at = || format!("{}:{line}", path.display());
            if let Some(rest) = l.strip_prefix("skip:") {
                case.skip = Some(rest.trim().to_owned());
            } else if let Some(rest) = l.strip_prefix("program:") {
                case.program = dir.join(rest.trim());
            } else if let Some(rest) = l.strip_prefix("expect:") {
                match rest.trim() {
                    "ok" => case.expect_ok = true,
                    other => return Err(format!("{}: unknown expectation `{other}` (expected `ok`)", at())),
                }
            } else if let Some(rest) = l.strip_prefix("error ") {
                let (kind, rest) = rest
                    .split_once(" @ ")
                    .ok_or_else(|| format!("{}: expected `error KIND @ LOCATION | MESSAGE`", at()))?;
                let (location, message) = rest.split_once(" |").unwrap_or((rest, ""));
                case.errors.push(ExpectedError {
                    line,
                    kind: kind.trim().to_owned(),
                    location: location.trim().to_owned(),
                    message: message.trim().to_owned(),
                });
            } else {
                return Err(format!("{}: unknown directive `{l}`", at()));
            }
        }
        if case.skip.is_none() && case.expect_ok != case.errors.is_empty() {
            return Err(format!(
                "{}: a case expects either `expect: ok` or one or more `error` lines",
                path.display()
            ));
        }
        Ok(case)
    }
}
