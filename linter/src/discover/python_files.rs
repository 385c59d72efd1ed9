//! Where each Python file is: the package whose configuration it takes, its role by the
//! conventions of pytest and of projects' layouts, and its dotted module name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{FileUnit, Session};
use crate::source::{FileRole, Language};

impl Session {
    /// Gives each Python file its package (for its configuration: the innermost Rust package
    /// that holds it, or the files of its workspace that belong to none), drops what the
    /// configuration excludes, and gives each a role and module name from where it is.
    pub(super) fn assign_python(&mut self, files: Vec<(PathBuf, usize)>) {
        let roots = self.package_roots();
        let mut packages = Packages::default();
        for (path, around) in files {
            let Some(package) = self.package_of(&roots, &path, around) else {
                continue;
            };
            let root = &self.workspaces[self.packages[package].workspace].root;
            let inside = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            let module = python_module(&path, &mut packages);
            self.files.push(FileUnit {
                relative: self.relative(&path),
                role: python_role(&inside),
                crate_name: module.join("."),
                module,
                package,
                target: None,
                crate_id: None,
                prescanned: false,
                language: Language::Python,
                path,
            });
        }
        self.files.sort_by(|a, b| a.relative.cmp(&b.relative));
    }
}

/// The role of a Python file, by the conventions of pytest and of projects' layouts, from its
/// path inside its workspace: test files (`test_*.py`, `*_test.py`, `tests.py`, `test.py`, files
/// under `tests/`) and `conftest.py` are entry files; `__main__.py` and
/// the files of `scripts/`, `examples/`, `tools/`, `bin/` and `benchmarks/` are programs.
/// Other files with a main guard are programs too when they are not in a package (decided
/// when the file is read). A notebook is a program: its cells run top to bottom, like a
/// script's top level.
fn python_role(inside: &Path) -> FileRole {
    if is_notebook(inside) {
        return FileRole::BinaryRoot;
    }
    let dirs: Vec<&str> = inside
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    let name = inside
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name.strip_suffix(".py").unwrap_or(name);
    let in_dir = |names: &[&str]| dirs.iter().any(|dir| names.contains(dir));
    if stem.starts_with("test_")
        || stem.ends_with("_test")
        || matches!(stem, "conftest" | "tests" | "test")
        || in_dir(&["tests", "test"])
    {
        FileRole::EntryFile
    } else if stem == "__main__" || in_dir(&["scripts", "examples", "tools", "bin", "benchmarks"]) {
        FileRole::BinaryRoot
    } else {
        FileRole::Library
    }
}

/// A Python file's module name, as Python imports it: the file's stem after the chain of
/// package folders (with an `__init__.py`) that hold it (`src/pkg/train.py` → `pkg.train`,
/// `pkg/__init__.py` → `pkg`), for configured entry points. A notebook, which no module
/// imports, keeps its file name (`pkg.explore.ipynb`), so that it names no module beside it.
fn python_module(path: &Path, packages: &mut Packages) -> Vec<String> {
    let mut module = path
        .parent()
        .map(|dir| packages.of(dir))
        .unwrap_or_default();
    let stem = match is_notebook(path) {
        true => path.file_name(),
        false => path.file_stem(),
    };
    let stem = stem.and_then(|s| s.to_str()).unwrap_or_default();
    if stem != "__init__" {
        module.push(stem.to_owned());
    }
    module
}

/// Whether a Python file is a Jupyter notebook (`.ipynb`).
pub(super) fn is_notebook(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "ipynb")
}

/// Whether the folder `dir` is a Python package: it holds `__init__.py`.
pub fn is_package(dir: &Path) -> bool {
    dir.join("__init__.py").is_file()
}

/// The dotted path of each folder as a package (`["pkg", "sub"]`: it and the folders above it
/// hold `__init__.py`, or it is a folder without one inside a package: a namespace package,
/// PEP 420), empty for a folder that is no package; each folder is looked at once.
#[derive(Debug, Default)]
struct Packages(HashMap<PathBuf, Vec<String>>);

impl Packages {
    fn of(&mut self, dir: &Path) -> Vec<String> {
        if let Some(known) = self.0.get(dir) {
            return known.clone();
        }
        let mut path = dir
            .parent()
            .map(|parent| self.of(parent))
            .unwrap_or_default();
        if !path.is_empty() || is_package(dir) {
            path.extend(dir.file_name().and_then(|n| n.to_str()).map(str::to_owned));
        }
        self.0.insert(dir.to_path_buf(), path.clone());
        path
    }
}
