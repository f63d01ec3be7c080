//! Tidy checks run by `cargo test -p xtask`: the crate dependency order, the light crates'
//! dependency trees, module docs, workspace lints, and no `#[should_panic]` / `#[ignore]` (known
//! failures go in the ledger instead).

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The layering, lowest first (ARCHITECTURE.md "Code map"): folder names under crates/,
    /// which are also the dependency keys.
    const ORDER: [&str; 6] = ["bir-ir", "access-pattern", "numerics", "indirection", "dge", "simulator"];

    /// A layered crate's package name (what `-p` and a registry take): `birsim-` + its folder,
    /// except the simulator (library + CLI), the `birsim` package.
    fn package(folder: &str) -> String {
        if folder == "simulator" { "birsim".to_owned() } else { format!("birsim-{folder}") }
    }

    /// Crates outside the layering that only tests and benches use (ARCHITECTURE.md "Code map").
    const DEV_ONLY: [&str; 1] = ["test-rng"];

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

    /// Every dependency name of the sections a library build resolves: `[dependencies]` and the
    /// `[target.'…'.dependencies]` ones (not dev- or build-dependencies).
    fn build_deps(manifest: &str) -> Vec<String> {
        let mut in_deps = false;
        let mut out = Vec::new();
        for line in manifest.lines() {
            let l = line.trim();
            if l.starts_with('[') {
                in_deps =
                    l == "[dependencies]" || (l.starts_with("[target.") && l.ends_with(".dependencies]"));
                continue;
            }
            let name = l.split(['=', '.', ' ']).next().unwrap_or("");
            if in_deps && !name.is_empty() && !name.starts_with('#') {
                out.push(name.to_owned());
            }
        }
        out
    }

    /// Every crate under crates/ is either in the layering or a dev-only helper, so the checks
    /// below see all of them.
    #[test]
    fn every_crate_is_layered_or_dev_only() {
        let entries = std::fs::read_dir(root().join("crates")).unwrap();
        let mut seen = 0;
        for e in entries.flatten() {
            if !e.path().join("Cargo.toml").exists() {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                ORDER.contains(&name.as_str()) || DEV_ONLY.contains(&name.as_str()),
                "crates/{name} is neither in the layering (ORDER) nor dev-only (DEV_ONLY)"
            );
            seen += 1;
        }
        assert_eq!(seen, ORDER.len() + DEV_ONLY.len(), "a listed crate is missing from crates/");
    }

    /// Dev-only crates depend on nothing, are never published, use the workspace lints, and
    /// the layered crates name them only under `[dev-dependencies]` (xtask's benches may use
    /// them as ordinary dependencies).
    #[test]
    fn dev_only_crates_stay_out_of_libraries() {
        for name in DEV_ONLY {
            let manifest =
                std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml")).unwrap();
            assert_eq!(build_deps(&manifest), Vec::<String>::new(), "{name} must depend on nothing");
            assert!(manifest.contains("\npublish = false\n"), "{name} must not be published");
            assert!(manifest.contains("[lints]\nworkspace = true"), "{name} must use the workspace lints");
        }
        for name in ORDER {
            let manifest =
                std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml")).unwrap();
            for dep in build_deps(&manifest) {
                assert!(!DEV_ONLY.contains(&dep.as_str()), "{name} depends on the dev-only {dep}");
            }
        }
    }

    /// CLI dependencies stay out of library builds (ARCHITECTURE.md, the `birsim` CLI): only the
    /// simulator crate names them, each `optional` and enabled by its `cli` feature, and the
    /// workspace's simulator dependency turns default features off.
    #[test]
    fn cli_dependencies_stay_out_of_libraries() {
        const CLI: [&str; 4] = ["clap", "clap_complete", "indicatif", "rustix"];
        for name in ORDER {
            let manifest =
                std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml")).unwrap();
            for line in manifest.lines() {
                let dep = line.split(['=', '.', ' ']).next().unwrap_or("");
                if CLI.contains(&dep) {
                    assert!(name == "simulator" && line.contains("optional = true"), "{name}: {line}");
                    assert!(
                        manifest.contains(&format!("\"dep:{dep}\"")),
                        "{name}: the cli feature lacks {dep}"
                    );
                }
            }
        }
        let simulator = std::fs::read_to_string(root().join("crates/simulator/Cargo.toml")).unwrap();
        assert!(simulator.contains("required-features = [\"cli\"]"), "the birsim binary must require `cli`");
        let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
        assert!(
            workspace
                .lines()
                .any(|l| l.starts_with("simulator = ") && l.contains("default-features = false")),
            "the workspace's simulator dependency must turn default features (the CLI) off"
        );
    }

    /// numerics and access-pattern (and bir-ir without its `json` feature), which other compilers
    /// take one at a time, build no serde and no proc macro (ARCHITECTURE.md "API boundaries"):
    /// bir-ir's JSON layer is its `json` feature, which the workspace dependency turns off, and
    /// none of the three derives its errors. Checked on the resolved tree, for every target
    /// platform.
    #[test]
    fn light_crates_build_no_serde_and_no_proc_macro() {
        const HEAVY: [&str; 5] = ["serde", "serde_json", "serde_derive", "syn", "proc-macro2"];
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        for folder in ["numerics", "access-pattern", "bir-ir"] {
            let krate = package(folder);
            let krate = krate.as_str();
            let out = std::process::Command::new(&cargo)
                .current_dir(root())
                .args([
                    "tree",
                    "-e",
                    "normal",
                    "--no-default-features",
                    "--target",
                    "all",
                    "--prefix",
                    "none",
                ])
                .args(["--format", "{p}", "-p", krate])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "cargo tree -p {krate}: {}", String::from_utf8_lossy(&out.stderr));
            let names: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
            assert!(names.first() == Some(&krate), "cargo tree -p {krate} printed:\n{text}");
            let heavy: std::collections::BTreeSet<&str> =
                names.iter().copied().filter(|n| HEAVY.contains(n)).collect();
            assert!(heavy.is_empty(), "{krate} depends on {heavy:?}:\n{text}");
        }
    }

    /// Every layered crate can go to a registry (issue #26 item 6): its package name is the
    /// prefixed one, it inherits license, readme, repository, keywords and categories from the
    /// workspace (which sets them, with a LICENSE file at the root), keeps its lib name, is not
    /// `publish = false`, and every workspace dependency on a layered crate carries a version.
    #[test]
    fn library_crates_are_publishable() {
        let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
        for key in ["license = ", "readme = ", "repository = ", "keywords = ", "categories = "] {
            assert!(workspace.contains(&format!("\n{key}")), "[workspace.package] lacks {key}");
        }
        assert!(root().join("LICENSE").exists(), "no LICENSE file at the root");
        for name in ORDER {
            let manifest =
                std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml")).unwrap();
            assert!(manifest.contains(&format!("\nname = \"{}\"\n", package(name))), "{name}: package name");
            let lib = name.replace('-', "_");
            assert!(manifest.contains("[lib]\n# The crate's name in code"), "{name}: [lib] comment");
            assert!(manifest.contains(&format!("\nname = \"{lib}\"\n")), "{name}: lib name {lib}");
            assert!(manifest.contains("\ndescription = "), "{name}: description");
            for key in ["license", "readme", "repository", "keywords", "categories", "version"] {
                assert!(manifest.contains(&format!("\n{key}.workspace = true\n")), "{name}: {key}");
            }
            assert!(!manifest.contains("publish = false"), "{name} must be publishable");
            let dep = workspace.lines().find(|l| l.starts_with(&format!("{name} = "))).unwrap_or_default();
            assert!(
                dep.contains(&format!("package = \"{}\"", package(name))) && dep.contains("version = "),
                "the workspace dependency on {name} needs its package name and a version: {dep}"
            );
        }
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
        // The Python extension's sources (not python/target, which holds generated code).
        rust_files(&root().join("python").join("src"), &mut files);
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

    /// Every test docs/robustness.md cites exists (issue 14: each catalogue row names a real
    /// test): `module::fn` names a `fn`, `table::case_NN_name` the NN-th `#[case::name]` of the
    /// rstest `fn table`, and a `conformance/...` path a case on disk.
    #[test]
    fn robustness_catalogue_cites_real_tests() {
        let root = root();
        let doc = std::fs::read_to_string(root.join("docs/robustness.md")).unwrap();
        let mut files = Vec::new();
        rust_files(&root.join("crates"), &mut files);
        // fn name -> the rstest case names written above it, in order.
        let mut fns: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let mut cases = Vec::new();
            for line in text.lines().map(str::trim) {
                if let Some(rest) = line.strip_prefix("#[case::") {
                    cases.push(rest.split('(').next().unwrap_or("").to_owned());
                } else if let Some(rest) = line.strip_prefix("fn ").or_else(|| line.strip_prefix("pub fn ")) {
                    let name = rest.split(['(', '<']).next().unwrap_or("").to_owned();
                    fns.entry(name).or_default().extend(std::mem::take(&mut cases));
                }
            }
        }
        let mut cited = 0;
        for token in doc.split('`').skip(1).step_by(2) {
            for t in token.split([',', ' ']).filter(|t| !t.is_empty() && *t != "…") {
                if let Some(path) = t.strip_prefix("conformance/") {
                    let base = root.join("conformance").join(path);
                    let found = base.exists() || base.with_extension("json").exists();
                    assert!(found, "docs/robustness.md cites {t}, which does not exist");
                    cited += 1;
                    continue;
                }
                let parts: Vec<&str> = t.split("::").collect();
                if parts.len() < 2
                    || !parts[0].starts_with(|c: char| c.is_ascii_lowercase())
                    || !parts
                        .iter()
                        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                {
                    continue;
                }
                let last = parts[parts.len() - 1];
                if let Some(case) = last.strip_prefix("case_") {
                    let (nn, name) = case.split_once('_').unwrap_or(("", ""));
                    let table = parts[parts.len() - 2];
                    let cases = fns.get(table).unwrap_or_else(|| panic!("{t}: no rstest fn {table}"));
                    let k: usize = nn.parse().unwrap_or(0);
                    assert!(
                        k >= 1 && cases.get(k - 1).is_some_and(|c| c == name),
                        "docs/robustness.md cites {t}, but case {k} of {table} is {:?}",
                        cases.get(k.wrapping_sub(1))
                    );
                } else if last.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()) {
                    assert!(
                        fns.contains_key(last),
                        "docs/robustness.md cites {t}, but no test fn {last} exists"
                    );
                } else {
                    continue;
                }
                cited += 1;
            }
        }
        assert!(cited >= 150, "only {cited} citations found");
    }
}
