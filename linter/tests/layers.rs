//! The linter's structure, checked: its top-level modules are layers that only use the layers
//! below them (so they form no cycle), the two front ends do not use each other, and no source
//! file is longer than a reader can hold in their head.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module of `linter/src` and its layer: a module may use only modules of lower
/// layers. The front ends share a layer, so neither uses the other.
const LAYERS: &[(&str, u32)] = &[
    ("source", 0),
    ("notebook", 1),
    ("diagnostic", 1),
    ("api", 2),
    ("analysis", 3),
    ("rules", 4),
    ("config", 5),
    ("discover", 6),
    ("python", 7),
    ("rust", 7),
    ("project", 8),
    ("baseline", 9),
    ("report", 9),
    ("server", 10),
    ("cli", 11),
];

/// The longest source file allowed, in lines.
const MAX_LINES: usize = 900;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The Rust files of a top-level module: `name.rs`, or everything under `name/`.
fn files_of(module: &str) -> Vec<PathBuf> {
    let file = src().join(format!("{module}.rs"));
    if file.is_file() {
        return vec![file];
    }
    walkdir::WalkDir::new(src().join(module))
        .into_iter()
        .map(|entry| entry.expect("a readable source tree").into_path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect()
}

/// The code of a file without its unit tests (`tests.rs` files, and what follows
/// `#[cfg(test)] mod tests`), which may use any layer; the rules' fixtures are code to lint.
fn code_of(path: &Path) -> String {
    let fixture = path.components().any(|part| part.as_os_str() == "fixtures");
    if fixture || path.file_name().is_some_and(|name| name == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).expect("a readable source file");
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The top-level modules a file's code names through `crate::`.
fn uses(code: &str) -> BTreeSet<String> {
    let modules: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    let mut used = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            // `use crate::{a, b::c};`
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(|item| item.trim().split("::").next().unwrap_or_default())
                .collect(),
            None => vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or_default(),
            ],
        };
        used.extend(
            names
                .into_iter()
                .filter(|name| modules.contains(name))
                .map(str::to_owned),
        );
    }
    used
}

#[test]
fn every_top_level_module_has_a_layer() {
    let mut found: Vec<String> = std::fs::read_dir(src())
        .expect("linter/src")
        .map(|entry| entry.expect("an entry").path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?;
            let module = name.strip_suffix(".rs").unwrap_or(name);
            // The crate root, the binaries and the fixtures' test harness are not layers.
            (!matches!(module, "lib" | "main" | "bin" | "fixtures")).then(|| module.to_owned())
        })
        .collect();
    found.sort();
    let mut listed: Vec<String> = LAYERS.iter().map(|(name, _)| name.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "give each top-level module its layer in LAYERS"
    );
}

#[test]
fn layers_only_use_the_layers_below_them() {
    let layer = |name: &str| LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l);
    let mut wrong = Vec::new();
    for (module, level) in LAYERS {
        for file in files_of(module) {
            for used in uses(&code_of(&file)) {
                let used_level = layer(&used).expect("a listed module");
                if used != *module && used_level >= *level {
                    wrong.push(format!(
                        "{} (layer {level}) uses `{used}` (layer {used_level})",
                        file.strip_prefix(src()).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_source_file_is_too_long_to_read() {
    let long: Vec<String> = walkdir::WalkDir::new(src())
        .into_iter()
        .map(|entry| entry.expect("a readable source tree").into_path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{}: {lines} lines", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these files:\n{}", long.join("\n"));
}
