//! Discovery: which files to lint, and for each the package, target and role it has.
//!
//! With a `Cargo.toml`, `cargo metadata --no-deps` names the packages, their targets and their
//! dependency renames; nothing is built or run. Without one, the given paths are walked as
//! plain files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use cargo_metadata::{MetadataCommand, Target, TargetKind};
use walkdir::WalkDir;

use crate::resolve::{CrateContext, FileRole};

/// A package whose files are linted.
#[derive(Debug)]
pub struct Package {
    /// Cargo's package id, or a `path+file://` id for a folder without a manifest.
    pub id: String,
    pub name: String,
    pub manifest_path: PathBuf,
    pub root: PathBuf,
    pub targets: Vec<Target>,
    pub krate: CrateContext,
    /// `[package.metadata]`.
    pub metadata: serde_json::Value,
}

/// One file to lint.
#[derive(Debug, Clone)]
pub struct FileUnit {
    pub path: PathBuf,
    /// Relative to the workspace root, with `/` separators.
    pub relative: String,
    pub package: usize,
    /// Index into the package's targets, when the file belongs to one.
    pub target: Option<usize>,
    pub role: FileRole,
    pub module: Vec<String>,
    pub crate_name: String,
}

/// What was found at the given paths.
#[derive(Debug)]
pub struct Workspace {
    pub root: PathBuf,
    pub packages: Vec<Package>,
    /// `[workspace.metadata]`, when there is a manifest.
    pub metadata: Option<serde_json::Value>,
    /// Plain folders and files given without a manifest.
    plain: Vec<PathBuf>,
    /// Set when `cargo metadata` failed and the folder is walked as plain files.
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{0} does not exist")]
    Missing(PathBuf),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn crate_ident(name: &str) -> String {
    name.replace('-', "_")
}

/// Finds the workspace at `path`: a folder with a `Cargo.toml`, or plain files.
pub fn locate(path: &Path) -> Result<Workspace, DiscoverError> {
    let path = path
        .canonicalize()
        .map_err(|_| DiscoverError::Missing(path.to_path_buf()))?;
    let manifest = path.join("Cargo.toml");
    if !manifest.is_file() {
        return Ok(plain(path, Vec::new()));
    }
    let mut command = MetadataCommand::new();
    command.manifest_path(&manifest).no_deps();
    // Never let a toolchain file of the linted project ask rustup for a download.
    if let Ok(cargo) = std::env::var("CARGO") {
        command.cargo_path(cargo);
    }
    let metadata = match command.exec() {
        Ok(metadata) => metadata,
        Err(err) => {
            let reason = err.to_string();
            let warning = format!(
                "`cargo metadata` failed for {}; linting its files without package information: {}",
                manifest.display(),
                reason.lines().next().unwrap_or_default()
            );
            return Ok(plain(path, vec![warning]));
        }
    };
    let root: PathBuf = metadata.workspace_root.clone().into();
    let members: HashSet<_> = metadata.workspace_members.iter().collect();
    let packages = metadata
        .packages
        .iter()
        .filter(|package| members.contains(&package.id))
        .map(|package| {
            let renames = package
                .dependencies
                .iter()
                .filter_map(|dep| Some((crate_ident(dep.rename.as_ref()?), crate_ident(&dep.name))))
                .collect::<HashMap<_, _>>();
            let dependencies = package
                .dependencies
                .iter()
                .map(|dep| crate_ident(&dep.name))
                .collect();
            let manifest_path: PathBuf = package.manifest_path.clone().into();
            Package {
                id: package.id.repr.clone(),
                name: package.name.to_string(),
                root: manifest_path
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                manifest_path,
                targets: package.targets.clone(),
                krate: CrateContext {
                    renames,
                    dependencies: Some(dependencies),
                },
                metadata: package.metadata.clone(),
            }
        })
        .filter(|package| package.root.starts_with(&path) || path == root)
        .collect();
    let metadata = Some(metadata.workspace_metadata.clone());
    Ok(Workspace {
        root,
        packages,
        metadata,
        plain: Vec::new(),
        warnings: Vec::new(),
    })
}

fn plain(path: PathBuf, warnings: Vec<String>) -> Workspace {
    let root = if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.clone()
    };
    Workspace {
        root,
        packages: Vec::new(),
        metadata: None,
        plain: vec![path],
        warnings,
    }
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|name| name.starts_with('.') && name != "." && name != "..")
}

impl Workspace {
    /// The files to lint, in a stable order, skipping `target/`, hidden folders, nested packages
    /// and `excluded` paths (relative to the workspace root).
    pub fn files(
        &mut self,
        excluded: impl Fn(&Path) -> bool,
    ) -> Result<Vec<FileUnit>, DiscoverError> {
        let mut units = Vec::new();
        for index in 0..self.packages.len() {
            let root = self.packages[index].root.clone();
            for path in self.walk(&root, &excluded)? {
                units.push(self.classify(index, path));
            }
        }
        for path in std::mem::take(&mut self.plain) {
            let name = path
                .file_stem()
                .and_then(|n| n.to_str())
                .unwrap_or("files")
                .to_owned();
            let package = self.packages.len();
            self.packages.push(Package {
                id: format!("path+file://{}#{}", path.display(), crate_ident(&name)),
                name: name.clone(),
                manifest_path: path.join("Cargo.toml"),
                root: path.clone(),
                targets: Vec::new(),
                krate: CrateContext::default(),
                metadata: serde_json::Value::Null,
            });
            for file in self.walk(&path, &excluded)? {
                let role = guess_role(&file);
                let relative = self.relative(&file);
                units.push(FileUnit {
                    path: file,
                    relative,
                    package,
                    target: None,
                    role,
                    module: Vec::new(),
                    crate_name: crate_ident(&name),
                });
            }
        }
        units.sort_by(|a, b| a.relative.cmp(&b.relative));
        units.dedup_by(|a, b| a.path == b.path);
        Ok(units)
    }

    /// The workspace root's path inside its git repository (`crates/ml/` or empty), so that
    /// formats read by GitHub name files from the repository root.
    pub fn repository_prefix(&self) -> String {
        let Some(repo) = self.root.ancestors().find(|dir| dir.join(".git").exists()) else {
            return String::new();
        };
        let inside = self.root.strip_prefix(repo).unwrap_or(Path::new(""));
        let prefix = inside.to_string_lossy().replace('\\', "/");
        if prefix.is_empty() {
            prefix
        } else {
            format!("{prefix}/")
        }
    }

    pub fn relative(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        relative.to_string_lossy().replace('\\', "/")
    }

    fn walk(
        &self,
        root: &Path,
        excluded: &impl Fn(&Path) -> bool,
    ) -> Result<Vec<PathBuf>, DiscoverError> {
        if root.is_file() {
            return Ok(vec![root.to_path_buf()]);
        }
        let mut files = Vec::new();
        let walker = WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                if entry.depth() == 0 {
                    return true;
                }
                let relative = entry
                    .path()
                    .strip_prefix(&self.root)
                    .unwrap_or(entry.path());
                if is_hidden(entry.file_name()) || excluded(relative) {
                    return false;
                }
                if entry.file_type().is_dir() {
                    let is_target = entry.file_name() == "target"
                        && (entry.depth() == 1 || entry.path().join("CACHEDIR.TAG").exists());
                    let nested_package = entry.path().join("Cargo.toml").is_file();
                    return !is_target && !nested_package;
                }
                true
            });
        for entry in walker {
            let entry = entry.map_err(|err| DiscoverError::Io {
                path: err.path().unwrap_or(root).to_path_buf(),
                source: err.into(),
            })?;
            if entry.file_type().is_file()
                && entry.path().extension().is_some_and(|ext| ext == "rs")
            {
                files.push(entry.into_path());
            }
        }
        Ok(files)
    }

    /// The target a file of a package belongs to, its role and its module path.
    fn classify(&self, package: usize, path: PathBuf) -> FileUnit {
        let pkg = &self.packages[package];
        let relative = self.relative(&path);
        let exact = pkg
            .targets
            .iter()
            .position(|target| target.src_path.as_std_path() == path);
        // Otherwise the target whose source folder holds the file, preferring the deepest folder
        // and the library; build scripts only own themselves.
        let owner = exact.or_else(|| {
            pkg.targets
                .iter()
                .enumerate()
                .filter(|(_, target)| !target.is_custom_build())
                .filter_map(|(index, target)| {
                    let dir = target.src_path.parent()?.as_std_path();
                    path.starts_with(dir).then_some((
                        index,
                        dir.components().count(),
                        target.is_lib(),
                    ))
                })
                .max_by_key(|&(_, depth, is_lib)| (depth, is_lib))
                .map(|(index, _, _)| index)
        });
        let Some(index) = owner else {
            return FileUnit {
                role: guess_role(&path),
                path,
                relative,
                package,
                target: None,
                module: Vec::new(),
                crate_name: crate_ident(&pkg.name),
            };
        };
        let target = &pkg.targets[index];
        let kinds = &target.kind;
        let role = if kinds.iter().any(|k| {
            matches!(
                k,
                TargetKind::Test | TargetKind::Bench | TargetKind::CustomBuild
            )
        }) {
            FileRole::EntryFile
        } else if kinds
            .iter()
            .any(|k| matches!(k, TargetKind::Bin | TargetKind::Example))
        {
            if exact.is_some() {
                FileRole::BinaryRoot
            } else {
                FileRole::BinaryModule
            }
        } else {
            FileRole::Library
        };
        let module = match (exact, target.src_path.parent()) {
            (None, Some(dir)) => module_path(path.strip_prefix(dir.as_std_path()).unwrap_or(&path)),
            _ => Vec::new(),
        };
        FileUnit {
            path,
            relative,
            package,
            target: Some(index),
            role,
            module,
            crate_name: crate_ident(&target.name),
        }
    }
}

/// `gpu/mod.rs` → `[gpu]`, `gpu/pick.rs` → `[gpu, pick]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" && stem != "main" {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// The role of a file with no target to say: by where it is.
fn guess_role(path: &Path) -> FileRole {
    let in_dir = |name: &str| path.components().any(|c| c.as_os_str() == name);
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if in_dir("tests") || in_dir("benches") || file_name == "build.rs" {
        FileRole::EntryFile
    } else if file_name == "main.rs" || in_dir("bin") || in_dir("examples") {
        FileRole::BinaryRoot
    } else {
        FileRole::Library
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_the_file_tree() {
        assert_eq!(module_path(Path::new("gpu/mod.rs")), vec!["gpu"]);
        assert_eq!(module_path(Path::new("gpu/pick.rs")), vec!["gpu", "pick"]);
        assert_eq!(module_path(Path::new("lib.rs")), Vec::<String>::new());
    }

    #[test]
    fn roles_are_guessed_from_the_path_without_a_manifest() {
        assert_eq!(guess_role(Path::new("x/tests/it.rs")), FileRole::EntryFile);
        assert_eq!(guess_role(Path::new("x/build.rs")), FileRole::EntryFile);
        assert_eq!(guess_role(Path::new("x/src/main.rs")), FileRole::BinaryRoot);
        assert_eq!(guess_role(Path::new("x/src/gpu.rs")), FileRole::Library);
    }
}
