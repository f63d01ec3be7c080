//! No input makes the loader or validator panic: every truncation of real dumps, and thousands of
//! random mutations of their JSON trees, come back as `Ok` or a located error. A program that
//! loads and validates after mutation must still round-trip.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use bir_ir::{ErrorKind, ValidateOptions, json, validate};
use serde_json::Value;
// SplitMix64: failures reproduce from the printed seed.
use test_rng::SplitMix64;

fn corpus() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/bir-ir/valid");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
        }
    }
    out.sort();
    assert!(out.len() >= 5);
    out
}

/// Loads, validates and (when valid) round-trips; panics only on a real bug.
fn exercise(bytes: &[u8]) -> bool {
    match json::load_slice(bytes) {
        Ok(p) => {
            if validate(&p, &ValidateOptions::default()).is_ok() {
                let q = json::load_str(&json::to_json_string(&p)).expect("written JSON loads");
                assert_eq!(q, p, "round trip after mutation");
            }
            true
        }
        Err(e) => {
            let d = e.diagnostics();
            assert!(!d.is_empty(), "an error carries at least one diagnostic");
            assert!(d.iter().all(|x| !x.message.is_empty()));
            false
        }
    }
}

#[test]
fn every_truncation_is_a_syntax_error() {
    for (name, text) in corpus() {
        // Every proper prefix that drops part of the JSON (trailing whitespace is not JSON).
        let end = text.trim_end().len();
        let step = (end / 2000).max(1);
        for cut in (0..end).step_by(step) {
            let r = json::load_slice(&text.as_bytes()[..cut]);
            let err = r.err().unwrap_or_else(|| panic!("{name} cut at {cut} loaded"));
            assert_eq!(err.diagnostics().0[0].kind, ErrorKind::Syntax, "{name} cut at {cut}");
        }
    }
}

fn random_value(rng: &mut SplitMix64) -> Value {
    match rng.below_usize(14) {
        0 => Value::Null,
        1 => Value::Bool(rng.below_usize(2) == 0),
        2 => (-1).into(),
        3 => 0.into(),
        4 => (1i64 << 62).into(),
        5 => u64::MAX.into(),
        6 => 1e308.into(),
        7 => (-0.5).into(),
        8 => "nan".into(),
        9 => "".into(),
        10 => Value::Array(vec![]),
        11 => Value::Array(vec![(-3).into(), 0.into()]),
        12 => Value::Object(Default::default()),
        _ => "SB".into(),
    }
}

/// Replaces, removes or duplicates one random node of the tree.
fn mutate(v: &mut Value, rng: &mut SplitMix64, depth: usize) {
    let stop = depth > 0 && rng.below_usize(4) == 0;
    match v {
        Value::Object(map) if !map.is_empty() && !stop => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let k = &keys[rng.below_usize(keys.len())];
            match rng.below_usize(8) {
                0 => {
                    map.remove(k);
                }
                1 => {
                    map.insert(k.clone(), random_value(rng));
                }
                _ => mutate(map.get_mut(k).unwrap(), rng, depth + 1),
            }
        }
        Value::Array(items) if !items.is_empty() && !stop => {
            let i = rng.below_usize(items.len());
            match rng.below_usize(8) {
                0 => {
                    items.remove(i);
                }
                1 => {
                    let dup = items[i].clone();
                    items.push(dup);
                }
                _ => mutate(&mut items[i], rng, depth + 1),
            }
        }
        _ => *v = random_value(rng),
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut rng = SplitMix64::new(0x5EED);
    let mut loaded = 0;
    let mut rejected = 0;
    for (name, text) in corpus() {
        let tree: Value = serde_json::from_str(&text).unwrap();
        for round in 0..600 {
            let mut t = tree.clone();
            for _ in 0..=rng.below_usize(3) {
                mutate(&mut t, &mut rng, 0);
            }
            let bytes = serde_json::to_vec(&t).unwrap();
            let r = std::panic::catch_unwind(|| exercise(&bytes));
            match r {
                Ok(true) => loaded += 1,
                Ok(false) => rejected += 1,
                Err(_) => panic!(
                    "{name}: mutation round {round} panicked; input:\n{}",
                    String::from_utf8_lossy(&bytes)
                ),
            }
        }
    }
    // Both outcomes must occur, or the mutator is not exercising anything.
    assert!(loaded > 100 && rejected > 100, "loaded {loaded}, rejected {rejected}");
}

#[test]
fn random_byte_edits_never_panic() {
    let mut rng = SplitMix64::new(42);
    for (_, text) in corpus() {
        let bytes = text.as_bytes();
        for _ in 0..300 {
            let mut b = bytes.to_vec();
            let i = rng.below_usize(b.len());
            let alphabet = b"{}[],:\"0-9e.nx \\";
            b[i] = alphabet[rng.below_usize(alphabet.len())];
            let _ = exercise(&b);
        }
    }
}
