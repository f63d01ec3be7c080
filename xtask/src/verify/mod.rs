//! The conformance runner behind `cargo xtask verify`.
//!
//! **Corpus layout.** `conformance/<suite>/…/<case>.expect`, where a suite is a crate name
//! (`bir-ir`, `access-pattern`, …) or `programs/<name>`. A case is one `.expect` file of
//! directives (see `case.rs`); the files it names sit beside it, by default `<case>.json`.
//! The case id is its path under `conformance/` without `.expect`. The `isa` suite uses case
//! folders instead: `conformance/isa/<case>/expect` (id `isa/<case>`; see `isa.rs`).
//!
//! **Ledger.** `conformance/known-failures.txt` lists case ids (one per line, `#` comments)
//! that are known to fail. A listed failure counts as `known`; a listed case that passes is
//! an *unexpected pass* and fails the run, so the ledger only shrinks. Listing a case that does
//! not exist also fails the run.
//!
//! **Facts and choices.** A case with `choice: ID` lines encodes our own ASSUMED choices
//! (`docs/fidelity.md` entries); every other case tests what the seeds or public docs say. The
//! summary counts both, per suite and in total. A `choice` id that fidelity.md lacks, or whose
//! tag column does not say ASSUMED, fails that case.

mod access_pattern;
mod bir_ir;
mod case;
mod isa;
mod numerics;
mod program;

use case::Case;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Command-line options of `verify`.
pub struct Options {
    jobs: Option<usize>,
    filters: Vec<String>,
    shard: Option<(usize, usize)>,
    list: bool,
}

impl Options {
    /// The options, or `None` for `-h`/`--help`.
    pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
        let mut o = Options { jobs: None, filters: Vec::new(), shard: None, list: false };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |flag: &str| it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
            match a.as_str() {
                "--jobs" | "-j" => {
                    let v = value(a)?;
                    o.jobs = Some(
                        v.parse()
                            .ok()
                            .filter(|n| *n > 0)
                            .ok_or(format!("--jobs {v}: expected a positive number"))?,
                    );
                }
                "--filter" => o.filters.push(value(a)?),
                "--shard" => {
                    let v = value(a)?;
                    o.shard =
                        Some(parse_shard(&v).ok_or(format!("--shard {v}: expected K/N with 1 <= K <= N"))?);
                }
                "--list" => o.list = true,
                "--help" | "-h" => return Ok(None),
                other => return Err(format!("unknown option `{other}`")),
            }
        }
        Ok(Some(o))
    }
}

fn parse_shard(s: &str) -> Option<(usize, usize)> {
    let (k, n) = s.split_once('/')?;
    let (k, n): (usize, usize) = (k.trim().parse().ok()?, n.trim().parse().ok()?);
    (k >= 1 && k <= n).then_some((k, n))
}

/// The result of one case.
#[derive(Debug)]
pub enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

/// The workspace root.
pub fn root() -> PathBuf {
    // xtask lives in <root>/xtask.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn discover(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::path);
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            discover(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "expect") || p.file_name().is_some_and(|n| n == "expect")
        {
            // `<case>.expect`, or a case folder's `expect` file (the `isa` suite).
            out.push(p);
        }
    }
    Ok(())
}

/// The suite a case id belongs to: its first path segment, or `programs/<name>`.
fn suite_of(id: &str) -> String {
    let mut parts = id.split('/');
    match (parts.next(), parts.next()) {
        (Some("programs"), Some(name)) => format!("programs/{name}"),
        (Some(first), _) => first.to_owned(),
        (None, _) => String::new(),
    }
}

/// The `docs/fidelity.md` table rows: `(id, tag column)`.
fn read_fidelity(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(parse_fidelity(&text))
}

/// Table rows `| ID | behaviour | tag | source |` whose ID is a capital letter and digits
/// (`\|` inside a cell is an escaped pipe, as in Markdown).
fn parse_fidelity(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.replace("\\|", "\u{1}");
            let cells: Vec<&str> = l.trim().strip_prefix('|')?.split('|').map(str::trim).collect();
            let id = *cells.first()?;
            let tag = *cells.get(2)?;
            let is_id = id.len() >= 2
                && id.starts_with(|c: char| c.is_ascii_uppercase())
                && id[1..].chars().all(|c| c.is_ascii_digit());
            is_id.then(|| (id.to_owned(), tag.to_owned()))
        })
        .collect()
}

/// Checks a case's `choice` ids against fidelity.md: each must exist and be tagged ASSUMED.
fn check_choices(case: &Case, fidelity: &Result<Vec<(String, String)>, String>) -> Result<(), String> {
    check_choice_ids(&case.choices, &["ASSUMED"], fidelity)
}

/// Checks `choice` ids against fidelity.md: each must exist with a tag containing one of `tags`.
fn check_choice_ids(
    choices: &[String],
    tags: &[&str],
    fidelity: &Result<Vec<(String, String)>, String>,
) -> Result<(), String> {
    if choices.is_empty() {
        return Ok(());
    }
    let rows = fidelity.as_ref().map_err(Clone::clone)?;
    let mut problems = Vec::new();
    for id in choices {
        match rows.iter().find(|(r, _)| r == id) {
            None => problems.push(format!("choice {id}: no such entry in docs/fidelity.md")),
            Some((_, tag)) if !tags.iter().any(|t| tag.contains(t)) => problems.push(format!(
                "choice {id}: docs/fidelity.md tags it `{tag}`, not {}; drop the `choice` line or fix the tag",
                tags.join(" or ")
            )),
            Some(_) => {}
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

/// An `isa` case: its `expect` file read, its choices checked (the contract tags a reading
/// INFERRED or ASSUMED; cases cite both, docs/isa.md), then run.
fn run_isa_case(path: &Path, fidelity: &Result<Vec<(String, String)>, String>) -> (bool, Outcome) {
    match isa::IsaCase::read(path) {
        Ok(case) => {
            let choice = !case.choices.is_empty();
            match check_choice_ids(&case.choices, &["ASSUMED", "INFERRED"], fidelity) {
                Ok(()) => (choice, isa::run(&case)),
                Err(e) => (choice, Outcome::Fail(e)),
            }
        }
        Err(e) => (false, Outcome::Fail(e)),
    }
}

fn run_case(case: &Case, fidelity: &Result<Vec<(String, String)>, String>) -> Outcome {
    if let Err(e) = check_choices(case, fidelity) {
        return Outcome::Fail(e);
    }
    if let Some(reason) = &case.skip {
        return Outcome::Skip(reason.clone());
    }
    if case.fault.is_some() && !case.suite.starts_with("programs/") {
        return Outcome::Fail("`fault` lines belong to program cases only".into());
    }
    match case.suite.as_str() {
        "bir-ir" => bir_ir::run(case),
        "access-pattern" => access_pattern::run(case),
        "numerics" => numerics::run(case),
        s if s.starts_with("programs/") => program::run(case),
        other => Outcome::Fail(format!("no runner for suite `{other}`")),
    }
}

#[derive(Default, Clone)]
struct Tally {
    pass: usize,
    fail: usize,
    known: usize,
    skip: usize,
    unexpected_pass: usize,
    /// Cases (run or skipped) that test seed or documented facts.
    facts: usize,
    /// Cases that encode our ASSUMED choices (`choice:` lines).
    choices: usize,
}

pub fn run(opts: &Options) -> ExitCode {
    let root = root();
    let corpus = root.join("conformance");
    let mut files = Vec::new();
    if let Err(e) = discover(&corpus, &mut files) {
        eprintln!("xtask verify: cannot read {}: {e}", corpus.display());
        return ExitCode::from(2);
    }
    let ledger_path = corpus.join("known-failures.txt");
    let ledger = match read_ledger(&ledger_path) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("xtask verify: {}: {e}", ledger_path.display());
            return ExitCode::from(2);
        }
    };
    let mut ids: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&corpus).ok()?;
            // A case folder's `expect` names the folder; a `<case>.expect` file its stem.
            let rel = if rel.file_name().is_some_and(|n| n == "expect") {
                rel.parent()?.to_path_buf()
            } else {
                rel.with_extension("")
            };
            Some((rel.to_string_lossy().replace('\\', "/"), p))
        })
        .collect();
    ids.sort();
    let all_ids: Vec<String> = ids.iter().map(|(id, _)| id.clone()).collect();
    let stale: Vec<&String> = ledger.iter().filter(|l| !all_ids.contains(l)).collect();

    let selected: Vec<(String, PathBuf)> = ids
        .into_iter()
        .filter(|(id, _)| opts.filters.is_empty() || opts.filters.iter().any(|f| id.contains(f.as_str())))
        .enumerate()
        .filter(|(k, _)| opts.shard.is_none_or(|(s, n)| k % n == s - 1))
        .map(|(_, c)| c)
        .collect();

    if opts.list {
        for (id, _) in &selected {
            println!("{id}");
        }
        return ExitCode::SUCCESS;
    }

    let jobs = opts
        .jobs
        .or_else(|| std::env::var("BIRSIM_JOBS").ok().and_then(|v| v.parse().ok()).filter(|n: &usize| *n > 0))
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1);

    let fidelity = read_fidelity(&root.join("docs/fidelity.md"));
    let start = Instant::now();
    let results: Mutex<Vec<(String, String, bool, Outcome)>> = Mutex::new(Vec::with_capacity(selected.len()));
    let next = AtomicUsize::new(0);
    // A progress bar on stderr when it is a terminal and the run lasts past 2 s (indicatif).
    let progress = std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(selected.len() as u64),
        indicatif::ProgressDrawTarget::hidden(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template("verify {bar:40} {pos}/{len} cases, {elapsed}")
    {
        bar.set_style(style);
    }
    let shown = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(selected.len().max(1)) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some((id, path)) = selected.get(k) else { break };
                    let suite = suite_of(id);
                    let (choice, outcome) = if suite == "isa" {
                        run_isa_case(path, &fidelity)
                    } else {
                        match Case::read(&suite, path) {
                            Ok(case) => (!case.choices.is_empty(), run_case(&case, &fidelity)),
                            Err(e) => (false, Outcome::Fail(e)),
                        }
                    };
                    if let Ok(mut r) = results.lock() {
                        r.push((suite, id.clone(), choice, outcome));
                    }
                    bar.inc(1);
                    if progress
                        && start.elapsed() >= Duration::from_secs(2)
                        && !shown.swap(true, Ordering::Relaxed)
                    {
                        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    }
                }
            });
        }
    });
    bar.finish_and_clear();
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by(|a, b| a.1.cmp(&b.1));

    let mut suites: Vec<(String, Tally)> = Vec::new();
    let mut failures = Vec::new();
    let mut unexpected = Vec::new();
    let mut skipped = Vec::new();
    for (suite, id, choice, outcome) in &results {
        if !suites.iter().any(|(s, _)| s == suite) {
            suites.push((suite.clone(), Tally::default()));
        }
        let Some((_, tally)) = suites.iter_mut().find(|(s, _)| s == suite) else { continue };
        if *choice {
            tally.choices += 1;
        } else {
            tally.facts += 1;
        }
        let listed = ledger.contains(id);
        match (outcome, listed) {
            (Outcome::Pass, false) => tally.pass += 1,
            (Outcome::Pass, true) => {
                tally.unexpected_pass += 1;
                unexpected.push(id.clone());
            }
            (Outcome::Fail(_), true) => tally.known += 1,
            (Outcome::Fail(msg), false) => {
                tally.fail += 1;
                failures.push((id.clone(), msg.clone()));
            }
            (Outcome::Skip(reason), _) => {
                tally.skip += 1;
                skipped.push((id.clone(), reason.clone()));
            }
        }
    }

    for (id, msg) in &failures {
        println!("FAIL {id}\n{}\n", indent(msg));
    }
    for (id, reason) in &skipped {
        println!("SKIP {id}: {reason}");
    }
    print_table(&suites);
    println!("{} case(s) on {jobs} thread(s) in {:.2?}", results.len(), start.elapsed());

    let mut bad = !failures.is_empty();
    for id in &unexpected {
        println!("UNEXPECTED PASS {id}: it passes now; remove it from conformance/known-failures.txt");
        bad = true;
    }
    for id in &stale {
        println!("STALE LEDGER ENTRY {id}: no such case; remove it from conformance/known-failures.txt");
        bad = true;
    }
    if bad {
        println!("verify: FAILED");
        ExitCode::FAILURE
    } else {
        println!("verify: ok");
        ExitCode::SUCCESS
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

fn print_table(suites: &[(String, Tally)]) {
    let w = suites.iter().map(|(s, _)| s.len()).max().unwrap_or(5).max(5);
    println!(
        "{:w$}  {:>6} {:>6} {:>6} {:>6} {:>11}  {:>6} {:>8}",
        "suite", "pass", "fail", "known", "skip", "unexp.pass", "facts", "choices"
    );
    let mut total = Tally::default();
    for (s, t) in suites {
        println!(
            "{s:w$}  {:>6} {:>6} {:>6} {:>6} {:>11}  {:>6} {:>8}",
            t.pass, t.fail, t.known, t.skip, t.unexpected_pass, t.facts, t.choices
        );
        total.pass += t.pass;
        total.fail += t.fail;
        total.known += t.known;
        total.skip += t.skip;
        total.unexpected_pass += t.unexpected_pass;
        total.facts += t.facts;
        total.choices += t.choices;
    }
    println!(
        "{:w$}  {:>6} {:>6} {:>6} {:>6} {:>11}  {:>6} {:>8}",
        "total",
        total.pass,
        total.fail,
        total.known,
        total.skip,
        total.unexpected_pass,
        total.facts,
        total.choices
    );
    println!(
        "{} case(s) test seed or documented facts, {} test our ASSUMED choices (`choice:` lines, docs/fidelity.md)",
        total.facts, total.choices
    );
    // The plain closing line CI log readers look for.
    println!("{} passed, {} failed, {} skipped", total.pass, total.fail + total.unexpected_pass, total.skip);
}

fn read_ledger(path: &Path) -> Result<Vec<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIDELITY: &str = "| # | behaviour | tag | source |\n|---|---|---|---|\n\
        | S5 | int tables | CONFIRMED (tables) / ASSUMED (predicate) | t |\n\
        | N1 | casts | CONFIRMED | t |\n\
        | N5 | 464 < \\|x\\| < 512 | ASSUMED | t |\n";

    fn case_with(choices: &[&str]) -> Case {
        let dir = std::env::temp_dir().join(format!("xtask-choice-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("c{}.expect", choices.join("_")));
        let lines: Vec<String> = choices.iter().map(|c| format!("choice: {c}")).collect();
        std::fs::write(&path, format!("{}\nexpect: ok\n", lines.join("\n"))).unwrap();
        let case = Case::read("bir-ir", &path).unwrap();
        std::fs::remove_file(&path).unwrap();
        case
    }

    #[test]
    fn fidelity_rows_are_id_and_tag() {
        let rows = parse_fidelity(FIDELITY);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2], ("N5".to_owned(), "ASSUMED".to_owned()), "an escaped pipe stays in its cell");
        assert_eq!(rows[0], ("S5".to_owned(), "CONFIRMED (tables) / ASSUMED (predicate)".to_owned()));
        assert_eq!(rows[1], ("N1".to_owned(), "CONFIRMED".to_owned()));
    }

    #[test]
    fn a_choice_must_name_an_assumed_entry() {
        let rows = Ok(parse_fidelity(FIDELITY));
        assert!(check_choices(&case_with(&[]), &rows).is_ok());
        assert!(check_choices(&case_with(&["S5"]), &rows).is_ok());
        let e = check_choices(&case_with(&["N1"]), &rows).unwrap_err();
        assert!(e.contains("not ASSUMED"), "{e}");
        let e = check_choices(&case_with(&["S5", "X9"]), &rows).unwrap_err();
        assert!(e.contains("X9: no such entry"), "{e}");
        assert!(check_choices(&case_with(&["S5"]), &Err("no fidelity.md".into())).is_err());
    }

    #[test]
    fn the_real_fidelity_md_parses() {
        let rows = read_fidelity(&root().join("docs/fidelity.md")).unwrap();
        assert!(rows.iter().any(|(id, _)| id == "A1"), "{rows:?}");
        assert!(rows.iter().any(|(id, tag)| id == "S5" && tag.contains("ASSUMED")));
    }
}
