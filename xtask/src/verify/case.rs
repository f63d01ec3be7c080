//! The `.expect` case format shared by every suite.
//!
//! One directive per line; `#` starts a comment line; blank lines are ignored.
//!
//! | directive | meaning |
//! |---|---|
//! | `program: FILE` | the BIR JSON program (default: `<case>.json` beside the `.expect`) |
//! | `expect: ok` | the program loads, validates and round-trips |
//! | `expect: oracle` | the results match the oracle data stored in the case file (suites whose vectors come from an oracle script) |
//! | `skip: REASON` | the case is counted as skipped (for cases that need something CI lacks) |
//! | `error KIND @ LOCATION | MESSAGE` | loading or validation reports exactly these errors: one diagnostic per line, of that kind, whose location contains LOCATION and whose message contains MESSAGE (in program suites too: the program is then only loaded and validated) |
//! | `input NAME = FILE.npy` | program cases: load allocation (or location) NAME from FILE before running |
//! | `output NAME = FILE.npy` | program cases: after running, NAME must equal FILE bit for bit |
//! | `profile: refsim` or `profile: nki` | program cases: the numerics fidelity profile (default refsim) |
//! | `option: NAME=VALUE` | program cases: a simulator option, spelled as `birsim run --NAME VALUE` (dashes for underscores) and the Python package's `NAME=VALUE`, checked when read by the parser they share (`simulator::Options::set`, names in `Options::NAMES`); may repeat. E.g. `option: oob=skip`: an indirect instruction skips an out-of-bounds index instead of faulting (docs/fidelity.md I2); `option: dma_block_in_stream=run`: a DMABlock met in the instruction stream runs there (G4). `BIRSIM_THREADS` overrides a `threads` line |
//! | `fault KIND | MESSAGE` | program cases: the run stops with a guest fault whose kind name (`FaultKind::name`, e.g. `out-of-bounds`) is KIND and whose text contains MESSAGE; `output` lines beside it are compared after the fault (what was written before the faulting instruction) |
//! | `choice: ID` | the expected values encode our own ASSUMED choice `ID` of `docs/fidelity.md` (e.g. `choice: S5`); may repeat. `verify` counts such cases apart from those testing seed or documented facts and fails the case if ID is missing from fidelity.md or its tag column has no ASSUMED part |
//!
//! A program case is a BIR JSON file + input tensors + expected output tensors (raw bit patterns
//! in `.npy`; failures print both values in hex). The expected files come from oracle scripts
//! committed next to the suite, never from birsim. Every suite reads this one format.

use std::path::{Path, PathBuf};

/// An expected diagnostic.
#[derive(Debug, Clone)]
pub struct ExpectedError {
    pub line: usize,
    pub kind: String,
    pub location: String,
    pub message: String,
}

/// An expected guest fault (program cases).
#[derive(Debug, Clone)]
pub struct ExpectedFault {
    pub kind: String,
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
    /// Compare against the oracle data in the case file.
    pub expect_oracle: bool,
    pub errors: Vec<ExpectedError>,
    /// `(name, file)` tensors to load before running.
    pub inputs: Vec<(String, PathBuf)>,
    /// `(name, file)` tensors the run must produce.
    pub outputs: Vec<(String, PathBuf)>,
    /// The fidelity profile name, if given.
    pub profile: Option<String>,
    /// The simulator options: the defaults with the `option: NAME=VALUE` lines applied.
    pub options: simulator::Options,
    /// The guest fault the run must stop with.
    pub fault: Option<ExpectedFault>,
    /// docs/fidelity.md ids of the ASSUMED choices the expected values encode.
    pub choices: Vec<String>,
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
            expect_oracle: false,
            errors: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            profile: None,
            options: simulator::Options::default(),
            fault: None,
            choices: Vec::new(),
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
                    "oracle" => case.expect_oracle = true,
                    other => {
                        return Err(format!(
                            "{}: unknown expectation `{other}` (expected `ok` or `oracle`)",
                            at()
                        ));
                    }
                }
            } else if let Some(rest) = l.strip_prefix("profile:") {
                match rest.trim() {
                    p @ ("refsim" | "nki") => case.profile = Some(p.to_owned()),
                    other => {
                        return Err(format!("{}: unknown profile `{other}` (expected refsim or nki)", at()));
                    }
                }
            } else if let Some((list, rest)) = l
                .strip_prefix("input ")
                .map(|r| (&mut case.inputs, r))
                .or_else(|| l.strip_prefix("output ").map(|r| (&mut case.outputs, r)))
            {
                let (name, file) = rest
                    .split_once('=')
                    .ok_or_else(|| format!("{}: expected `input|output NAME = FILE.npy`", at()))?;
                list.push((name.trim().to_owned(), dir.join(file.trim())));
            } else if let Some(rest) = l.strip_prefix("option:") {
                let (key, value) = rest
                    .trim()
                    .split_once('=')
                    .ok_or_else(|| format!("{}: expected `option: KEY=VALUE`", at()))?;
                // The parser `birsim run` and the Python package use, with its error text
                // (`oob=clamp: expected fault or skip`).
                case.options.set(key.trim(), value.trim()).map_err(|e| format!("{}: {e}", at()))?;
            } else if let Some(rest) = l.strip_prefix("choice:") {
                let id = rest.trim();
                if id.is_empty() || id.contains(char::is_whitespace) {
                    return Err(format!("{}: expected `choice: ID` (one docs/fidelity.md id)", at()));
                }
                case.choices.push(id.to_owned());
            } else if let Some(rest) = l.strip_prefix("fault ") {
                if case.fault.is_some() {
                    return Err(format!("{}: a case expects at most one `fault`", at()));
                }
                let (kind, message) = rest
                    .split_once(" |")
                    .ok_or_else(|| format!("{}: expected `fault KIND | MESSAGE`", at()))?;
                let kind = kind.trim();
                if kind.is_empty() || kind.contains(char::is_whitespace) {
                    return Err(format!("{}: expected `fault KIND | MESSAGE`", at()));
                }
                case.fault =
                    Some(ExpectedFault { kind: kind.to_owned(), message: message.trim().to_owned() });
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
        let expectations = usize::from(case.expect_ok)
            + usize::from(case.expect_oracle)
            + usize::from(!case.errors.is_empty())
            + usize::from(!case.outputs.is_empty() || case.fault.is_some());
        if case.skip.is_none() && expectations != 1 {
            return Err(format!(
                "{}: a case expects exactly one of `expect: ok`, `expect: oracle`, `error` lines, or a `fault` and/or `output` tensors",
                path.display()
            ));
        }
        Ok(case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> Result<Case, String> {
        let dir = std::env::temp_dir().join(format!("xtask-case-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let path = dir.join(format!("{name}.expect"));
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        let case = Case::read("programs/t", &path);
        let _ = std::fs::remove_file(&path);
        case
    }

    #[test]
    fn fault_and_choice_lines() {
        let c = parse("a", "fault out-of-bounds | past the end\nchoice: S5\nchoice: N17\n").unwrap();
        let f = c.fault.unwrap();
        assert_eq!((f.kind.as_str(), f.message.as_str()), ("out-of-bounds", "past the end"));
        assert_eq!(c.choices, ["S5", "N17"]);
        assert!(c.outputs.is_empty());
    }

    #[test]
    fn a_fault_may_come_with_outputs_but_not_with_another_expectation() {
        let c = parse("b", "fault shape |\noutput y = y.npy\n").unwrap();
        assert_eq!(c.fault.map(|f| f.message), Some(String::new()));
        assert_eq!(c.outputs.len(), 1);
        assert!(parse("c", "fault shape | x\nexpect: ok\n").is_err());
        assert!(parse("d", "fault shape | x\nfault numerics | y\n").is_err());
        assert!(parse("e", "fault shape x\n").is_err(), "the ` |` separator is required");
        assert!(parse("f", "fault | x\n").is_err(), "KIND is required");
    }

    #[test]
    fn a_choice_is_one_id() {
        assert!(parse("g", "choice:\nexpect: ok\n").is_err());
        assert!(parse("h", "choice: S5 N17\nexpect: ok\n").is_err());
    }

    #[test]
    fn option_lines_go_through_options_set() {
        let c = parse("m", "option: dma_block_in_stream=run\noutput y = y.npy\n").unwrap();
        assert_eq!(c.options.dma_block_in_stream, simulator::DmaBlockInStream::Run);
        let e = parse("n", "option: dma_block_in_stream=twice\noutput y = y.npy\n").unwrap_err();
        assert!(e.ends_with(":1: dma_block_in_stream=twice: expected skip or run"), "{e}");
        // The old spelling is gone: one name per option.
        let e = parse("o", "option: dma_block=run\noutput y = y.npy\n").unwrap_err();
        assert!(e.contains("unknown option `dma_block` (options: "), "{e}");
        let c = parse("p", "option: tsc_reverse=operands\noption: max_instructions=7\noutput y = y.npy\n")
            .unwrap();
        assert!(!c.options.reverse_flags_reverse_scan);
        assert_eq!(c.options.max_instructions, 7);
        assert_eq!(parse("q", "output y = y.npy\n").unwrap().options, simulator::Options::default());
    }

    #[test]
    fn oob_option_lines() {
        let c = parse("i", "option: oob=skip\noutput y = y.npy\n").unwrap();
        assert_eq!(c.options.indirect_oob, simulator::IndirectOob::Skip);
        let c = parse("j", "option: oob = fault\noutput y = y.npy\n").unwrap();
        assert_eq!(c.options.indirect_oob, simulator::IndirectOob::Fault);
        let e = parse("k", "option: oob=clamp\noutput y = y.npy\n").unwrap_err();
        assert!(e.ends_with(":1: oob=clamp: expected fault or skip"), "{e}");
        let e = parse("l", "option: speed=11\noutput y = y.npy\n").unwrap_err();
        assert!(e.contains("unknown option `speed`"), "{e}");
        let e = parse("r", "option: oob\noutput y = y.npy\n").unwrap_err();
        assert!(e.contains("expected `option: KEY=VALUE`"), "{e}");
    }
}
