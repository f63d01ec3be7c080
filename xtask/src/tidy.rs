//! Tidy checks run by `cargo test -p xtask`: the crate dependency order, module docs, workspace
//! lints, and no `#[should_panic]` / `#[ignore]` (known failures go in the ledger instead).

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The layering, lowest first (ARCHITECTURE.md "Code map").
    const ORDER: [&str; 6] = ["bir-ir", "access-pattern", "numerics", "indirection", "dge", "simulator"];

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The `[dependencies]` section's workspace crate names.
    fn internal_deps(manifest: &str) -> Vec<String> {
        let mut in_deps = false;
        let mut out = Vec::new();
        for line in manifest.lines() {
            let l = line.trim();
            if l.starts_with('[') {
                in_deps = l == "[dependencies]";
                continue;
            }
            if in_deps {
                let name = l.split(['=', '.', ' ']).next().unwrap_or("");
                if ORDER.contains(&name) {
                    out.push(name.to_owned());
                }
            }
        }
        out
    }

    #[test]
    fn crates_depend_only_downward() {
        for (level, name) in ORDER.iter().enumerate() {
            let manifest =
                std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml")).unwrap();
            for dep in internal_deps(&manifest) {
                let dep_level = ORDER.iter().position(|c| *c == dep).unwrap();
                assert!(dep_level < level, "{name} depends on {dep}, which is not below it");
            }
            assert!(manifest.contains("[lints]\nworkspace = true"), "{name} must use the workspace lints");
        }
    }

    #[test]
    fn every_rust_file_has_a_module_doc_and_no_ignored_tests() {
        let mut files = Vec::new();
        rust_files(&root().join("crates"), &mut files);
        rust_files(&root().join("xtask"), &mut files);
        assert!(files.len() > 10);
        let this = file!().rsplit('/').next().unwrap_or_default();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            assert!(first.starts_with("//!"), "{} has no `//!` module doc", f.display());
            if f.ends_with(this) {
                continue;
            }
            for banned in ["#[should_panic", "#[ignore"] {
                assert!(
                    !text.contains(banned),
                    "{} uses {banned}]: list known failures in the ledger",
                    f.display()
                );
            }
        }
    }
}
