//! `Cargo.toml` read without cargo: where a workspace's root is, which packages it has, their
//! targets by cargo's conventions and explicit `[lib]`/`[[bin]]`/... sections, and the names
//! their dependencies are known by in code.
//!
//! `cargo metadata` is the authority when it works; this reader serves when it does not (a
//! missing member, a missing path dependency, no `cargo` on `PATH`, a toolchain file naming a
//! toolchain that is not installed, a root package without targets), and it is how the
//! configuration in `[workspace.metadata.placement]` is read, before cargo has answered.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use toml::{Table, Value};

use super::{Package, Target, TargetKind, crate_ident};
use crate::discover::CrateContext;

/// One `Cargo.toml`, parsed.
#[derive(Debug)]
pub(crate) struct Manifest {
    pub(crate) path: PathBuf,
    pub(crate) dir: PathBuf,
    table: Table,
}

impl Manifest {
    pub(crate) fn read(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        let table: Table = toml::from_str(&text).map_err(|err| {
            format!(
                "{} is not valid TOML: {}",
                path.display(),
                err.message().trim_end()
            )
        })?;
        Ok(Manifest {
            path: path.to_path_buf(),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            table,
        })
    }

    fn section(&self, name: &str) -> Option<&Table> {
        self.table.get(name)?.as_table()
    }

    pub(crate) fn workspace(&self) -> Option<&Table> {
        self.section("workspace")
    }

    pub(crate) fn package(&self) -> Option<&Table> {
        self.section("package")
    }

    /// `[workspace.metadata]`.
    pub(crate) fn workspace_metadata(&self) -> Option<&Value> {
        self.workspace()?.get("metadata")
    }

    /// `[package.metadata]`.
    pub(crate) fn package_metadata(&self) -> Option<&Value> {
        self.package()?.get("metadata")
    }

    /// `package.workspace = "../.."`: the folder of the workspace root, when given.
    fn declared_root(&self) -> Option<PathBuf> {
        let relative = self.package()?.get("workspace")?.as_str()?;
        Some(self.dir.join(relative))
    }

    /// The folders of the workspace's members: `members` (with globs), less `exclude`, plus the
    /// root package and path dependencies of members inside the root, as cargo counts them.
    pub(crate) fn members(&self) -> Vec<PathBuf> {
        let Some(workspace) = self.workspace() else {
            return Vec::new();
        };
        let strings = |key: &str| -> Vec<String> {
            workspace
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|value| value.as_str().map(str::to_owned))
                .collect()
        };
        let excluded: Vec<PathBuf> = strings("exclude")
            .iter()
            .map(|path| normalize(&self.dir.join(path)))
            .collect();
        let mut members: Vec<PathBuf> = Vec::new();
        if self.package().is_some() {
            members.push(self.dir.clone());
        }
        for pattern in strings("members") {
            members.extend(expand(&self.dir, &pattern));
        }
        // Path dependencies of members that live under the root are members too.
        let mut index = 0;
        while index < members.len() {
            if let Ok(member) = Manifest::read(&members[index].join("Cargo.toml")) {
                for dependency in member.path_dependencies() {
                    if dependency.starts_with(&self.dir) && !members.contains(&dependency) {
                        members.push(dependency);
                    }
                }
            }
            index += 1;
        }
        members.retain(|member| {
            member.join("Cargo.toml").is_file()
                && !excluded.iter().any(|excluded| member.starts_with(excluded))
        });
        members.sort();
        members.dedup();
        members
    }

    /// The folders of `path = "..."` dependencies.
    fn path_dependencies(&self) -> Vec<PathBuf> {
        self.dependency_tables()
            .flat_map(|table| table.values())
            .filter_map(|value| value.get("path")?.as_str())
            .map(|path| normalize(&self.dir.join(path)))
            .collect()
    }

    /// Every dependency table: `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`,
    /// their `[target.'cfg(..)'.*]` forms and the old underscore spellings.
    fn dependency_tables(&self) -> impl Iterator<Item = &Table> {
        const KINDS: [&str; 5] = [
            "dependencies",
            "dev-dependencies",
            "build-dependencies",
            "dev_dependencies",
            "build_dependencies",
        ];
        let top = KINDS.iter().filter_map(|kind| self.section(kind));
        let targets = self
            .section("target")
            .into_iter()
            .flat_map(|targets| targets.values())
            .filter_map(Value::as_table)
            .flat_map(|target| {
                KINDS
                    .iter()
                    .filter_map(|kind| target.get(*kind)?.as_table())
            });
        top.chain(targets)
    }

    /// The package this manifest describes, with its targets and dependency names, when it has a
    /// `[package]`. `root` is the workspace root's manifest, for inherited fields.
    pub(crate) fn to_package(&self, root: Option<&Manifest>) -> Option<Package> {
        let package = self.package()?;
        let name = package.get("name")?.as_str()?.to_owned();
        let inherited = |key: &str| -> Option<String> {
            match package.get(key)? {
                Value::String(value) => Some(value.clone()),
                Value::Table(table) if table.get("workspace")?.as_bool()? => root?
                    .workspace()?
                    .get("package")?
                    .get(key)?
                    .as_str()
                    .map(str::to_owned),
                _ => None,
            }
        };
        let version = inherited("version").unwrap_or_else(|| "0.0.0".to_owned());
        let edition = inherited("edition").unwrap_or_else(|| "2015".to_owned());
        let workspace_dependencies = root
            .and_then(|root| root.workspace()?.get("dependencies")?.as_table())
            .cloned()
            .unwrap_or_default();
        let mut renames = HashMap::new();
        let mut dependencies = HashSet::new();
        let mut paths = HashMap::new();
        for table in self.dependency_tables() {
            for (key, value) in table {
                let (declared, base) = match value {
                    Value::Table(table)
                        if table.get("workspace").and_then(Value::as_bool) == Some(true) =>
                    {
                        let base = root.map_or(self.dir.as_path(), |root| root.dir.as_path());
                        (workspace_dependencies.get(key).unwrap_or(value), base)
                    }
                    _ => (value, self.dir.as_path()),
                };
                if let Some(path) = declared.get("path").and_then(Value::as_str) {
                    paths.insert(crate_ident(key), normalize(&base.join(path)));
                }
                let real = declared
                    .get("package")
                    .and_then(Value::as_str)
                    .unwrap_or(key);
                let (alias, real) = (crate_ident(key), crate_ident(real));
                if alias != real {
                    renames.insert(alias, real.clone());
                }
                dependencies.insert(real);
            }
        }
        let targets = self.targets(&name, &edition);
        Some(Package {
            id: format!("path+file://{}#{name}@{version}", self.dir.display()),
            name,
            manifest_path: self.path.clone(),
            root: self.dir.clone(),
            targets,
            krate: CrateContext {
                renames,
                dependencies: Some(dependencies),
                paths,
            },
            metadata: self
                .package_metadata()
                .and_then(|value| serde_json::to_value(value).ok())
                .unwrap_or(serde_json::Value::Null),
            workspace: 0,
        })
    }

    /// The targets cargo would build: explicit sections, then what its conventions discover.
    fn targets(&self, package: &str, edition: &str) -> Vec<Target> {
        let package_table = self.package();
        let auto = |key: &str| {
            package_table
                .and_then(|p| p.get(key))
                .and_then(Value::as_bool)
                != Some(false)
        };
        let target = |name: String, kind: TargetKind, src_path: PathBuf| {
            Target::new(name, kind, src_path, edition.to_owned())
        };
        let mut targets = Vec::new();

        // The library: `[lib]`, or `src/lib.rs`.
        let lib = self.section("lib");
        let lib_path = lib
            .and_then(|lib| lib.get("path")?.as_str())
            .map(|path| self.dir.join(path))
            .or_else(|| Some(self.dir.join("src/lib.rs")).filter(|path| path.is_file()));
        if let Some(path) = lib_path {
            let name = lib
                .and_then(|lib| lib.get("name")?.as_str())
                .map_or_else(|| crate_ident(package), str::to_owned);
            let proc_macro = lib
                .and_then(|lib| lib.get("proc-macro").or_else(|| lib.get("proc_macro")))
                .and_then(Value::as_bool)
                == Some(true);
            let kind = if proc_macro {
                TargetKind::ProcMacro
            } else {
                TargetKind::Lib
            };
            targets.push(target(name, kind, path));
        }

        for (section, kind, folder, auto_key) in [
            ("bin", TargetKind::Bin, "src/bin", "autobins"),
            ("example", TargetKind::Example, "examples", "autoexamples"),
            ("test", TargetKind::Test, "tests", "autotests"),
            ("bench", TargetKind::Bench, "benches", "autobenches"),
        ] {
            // Discovered by convention, by name; explicit sections override or add.
            let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
            if auto(auto_key) {
                if kind == TargetKind::Bin && self.dir.join("src/main.rs").is_file() {
                    found.insert(package.to_owned(), self.dir.join("src/main.rs"));
                }
                found.extend(conventional(&self.dir.join(folder)));
            }
            let explicit = self
                .table
                .get(section)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_table);
            for entry in explicit {
                let Some(name) = entry.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let path = match entry.get("path").and_then(Value::as_str) {
                    Some(path) => self.dir.join(path),
                    None if kind == TargetKind::Bin && name == package => {
                        self.dir.join("src/main.rs")
                    }
                    None => {
                        let file = self.dir.join(folder).join(format!("{name}.rs"));
                        if file.is_file() {
                            file
                        } else {
                            self.dir.join(folder).join(name).join("main.rs")
                        }
                    }
                };
                found.insert(name.to_owned(), path);
            }
            for (name, path) in found {
                targets.push(target(name, kind, path));
            }
        }

        // The build script: `package.build`, or `build.rs`.
        let build = package_table.and_then(|p| p.get("build"));
        let script = match build {
            Some(Value::String(path)) => Some(self.dir.join(path)),
            Some(Value::Boolean(false)) => None,
            _ => Some(self.dir.join("build.rs")).filter(|path| path.is_file()),
        };
        if let Some(path) = script {
            targets.push(target(
                "build-script-build".to_owned(),
                TargetKind::CustomBuild,
                path,
            ));
        }
        targets
    }
}

/// `dir/*.rs` and `dir/*/main.rs`, by target name.
fn conventional(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            let main = path.join("main.rs");
            if main.is_file() {
                found.push((name, main));
            }
        } else if let Some(stem) = name.strip_suffix(".rs") {
            found.push((stem.to_owned(), path));
        }
    }
    found
}

/// The folders a `members` entry names: literal components are joined, glob components (`*`,
/// `?`, `[..]`) are matched against the entries of the folder so far.
fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut current = vec![root.to_path_buf()];
    for component in pattern.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if !component.contains(['*', '?', '[']) {
            current = current.iter().map(|dir| dir.join(component)).collect();
            continue;
        }
        let Ok(glob) = GlobBuilder::new(component)
            .literal_separator(true)
            .build()
            .map(|glob| glob.compile_matcher())
        else {
            return Vec::new();
        };
        let mut next = Vec::new();
        for dir in &current {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if entry.path().is_dir() && glob.is_match(&name) {
                    next.push(entry.path());
                }
            }
        }
        next.sort();
        current = next;
    }
    current.iter().map(|path| normalize(path)).collect()
}

/// `a/./b/../c` → `a/c`, without touching the file system (the path may not exist).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The members of workspace roots already read, by root folder.
pub(crate) type Members = HashMap<PathBuf, Vec<PathBuf>>;

/// [`Manifest::members`], read once per root.
pub(crate) fn members_of<'m>(root: &Manifest, known: &'m mut Members) -> &'m [PathBuf] {
    known
        .entry(root.dir.clone())
        .or_insert_with(|| root.members())
}

/// The workspace root of the package or workspace whose manifest is `manifest`, as cargo finds
/// it: `package.workspace` when given, else the nearest enclosing `[workspace]` that counts the
/// package as a member; a package that no workspace claims is its own root.
pub(crate) fn find_root(manifest: &Manifest, known: &mut Members) -> PathBuf {
    if manifest.workspace().is_some() {
        return manifest.dir.clone();
    }
    if let Some(declared) = manifest.declared_root() {
        return normalize(&declared);
    }
    for ancestor in manifest.dir.ancestors().skip(1) {
        let candidate = ancestor.join("Cargo.toml");
        if !candidate.is_file() {
            continue;
        }
        let Ok(root) = Manifest::read(&candidate) else {
            continue;
        };
        if root.workspace().is_none() {
            continue;
        }
        // The nearest workspace decides: a member belongs to it, anything else stands alone.
        return if members_of(&root, known).contains(&manifest.dir) {
            root.dir
        } else {
            manifest.dir.clone()
        };
    }
    manifest.dir.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn members_globs_excludes_and_path_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(
            &root,
            &[
                (
                    "Cargo.toml",
                    "[workspace]\nmembers = [\"crates/*\", \"missing\"]\nexclude = [\"crates/gpu\"]\n",
                ),
                (
                    "crates/a/Cargo.toml",
                    "[package]\nname = \"a\"\n[dependencies]\nb = { path = \"../../libs/b\" }\n",
                ),
                ("crates/gpu/Cargo.toml", "[package]\nname = \"gpu\"\n"),
                ("crates/notes/README.md", "no manifest"),
                ("libs/b/Cargo.toml", "[package]\nname = \"b\"\n"),
            ],
        );
        let manifest = Manifest::read(&root.join("Cargo.toml")).unwrap();
        assert_eq!(
            manifest.members(),
            vec![root.join("crates/a"), root.join("libs/b")]
        );
        let gpu = Manifest::read(&root.join("crates/gpu/Cargo.toml")).unwrap();
        let mut known = Members::new();
        assert_eq!(
            find_root(&gpu, &mut known),
            root.join("crates/gpu"),
            "excluded"
        );
        let b = Manifest::read(&root.join("libs/b/Cargo.toml")).unwrap();
        assert_eq!(
            find_root(&b, &mut known),
            root,
            "a path dependency of a member"
        );
    }

    #[test]
    fn targets_by_convention_and_by_section() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(
            &root,
            &[
                (
                    "Cargo.toml",
                    "[package]\nname = \"gpu-tools\"\nedition = \"2021\"\n\
                     [lib]\npath = \"lib/root.rs\"\n\
                     [[bin]]\nname = \"launch\"\npath = \"tools/launch.rs\"\n\
                     [[example]]\nname = \"demo\"\n\
                     [dependencies]\ncandle = { package = \"candle-core\", version = \"0.11\" }\n\
                     tch = { workspace = true }\n",
                ),
                ("lib/root.rs", ""),
                ("src/main.rs", ""),
                ("src/bin/probe/main.rs", ""),
                ("examples/demo/main.rs", ""),
                ("tests/it.rs", ""),
                ("build.rs", ""),
            ],
        );
        let package = Manifest::read(&root.join("Cargo.toml"))
            .unwrap()
            .to_package(None)
            .unwrap();
        let targets: Vec<(String, TargetKind, String)> = package
            .targets
            .iter()
            .map(|t| {
                let path = t.src_path.strip_prefix(&root).unwrap();
                (t.name.clone(), t.kind, path.display().to_string())
            })
            .collect();
        let expected = [
            ("gpu_tools", TargetKind::Lib, "lib/root.rs"),
            ("gpu-tools", TargetKind::Bin, "src/main.rs"),
            ("launch", TargetKind::Bin, "tools/launch.rs"),
            ("probe", TargetKind::Bin, "src/bin/probe/main.rs"),
            ("demo", TargetKind::Example, "examples/demo/main.rs"),
            ("it", TargetKind::Test, "tests/it.rs"),
            ("build-script-build", TargetKind::CustomBuild, "build.rs"),
        ];
        let expected: Vec<(String, TargetKind, String)> = expected
            .iter()
            .map(|(n, k, p)| (n.to_string(), *k, p.to_string()))
            .collect();
        assert_eq!(targets, expected);
        assert_eq!(
            package.krate.renames.get("candle").map(String::as_str),
            Some("candle_core")
        );
        assert!(package.krate.dependencies.unwrap().contains("tch"));
    }
}
