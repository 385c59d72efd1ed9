//! Where each Rust file is in its workspace: every file is read once by the lexer (while `cargo
//! metadata` answers), which tells whether it can be linted and summarises its items; the
//! workspace model is built from the summaries (every target's module tree; a file that none
//! reaches is a crate of its own), and each file is given its crate, module and role from it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rayon::prelude::*;

use crate::discover::{self, Session, Started, TargetKind};
use crate::rust::model::summary::{ItemKind, ModuleSummary};
use crate::rust::model::{Builder, Model};
use crate::rust::parse::{self, Prescan};
use crate::source::{CrateId, FileRole};

/// Reads every Rust file that discovery found, in parallel, while `cargo metadata` answers.
pub fn prescan(started: &Started<'_>) -> HashMap<PathBuf, Prescan> {
    let files: Vec<(&Path, u64)> = started.rust_files().collect();
    let wanted = crate::rust::model::member_types();
    files
        .into_par_iter()
        .map(|(path, limit)| (path.to_path_buf(), parse::prescan(path, limit, &wanted)))
        .collect()
}

/// Builds the workspace model of the session's Rust files, and places each file in it.
pub fn place(session: &mut Session, prescans: HashMap<PathBuf, Prescan>) -> Model {
    let mut summaries = HashMap::new();
    let mut lintable = HashMap::new();
    for (path, prescan) in prescans {
        if let Some(summary) = prescan.summary {
            summaries.insert(path.clone(), Rc::new(summary));
        }
        lintable.insert(path, prescan.lintable);
    }
    let mut builder = Builder::new(&summaries);
    builder.add_packages(&session.packages);
    for unit in session.files.iter().filter(|unit| unit.is_rust()) {
        if !builder.includes(&unit.path) {
            let package = &session.packages[unit.package];
            let id = builder.add_crate(
                discover::crate_ident(&package.name),
                unit.package,
                None,
                None,
                &unit.path,
            );
            builder.set_dependencies(id, &package.krate);
        }
    }
    let model = builder.finish();
    for unit in session.files.iter_mut().filter(|unit| unit.is_rust()) {
        let (crate_id, module) = crate_of(&model, &unit.path);
        let krate = &model.crates[crate_id];
        // A module only tests compile (`#[cfg(test)] mod tests;`) is test code, whatever the
        // target that declares it.
        let cfg_test = krate.modules.get(&module).is_some_and(|m| m.cfg_test);
        unit.role = match krate.kind {
            _ if cfg_test => FileRole::EntryFile,
            Some(TargetKind::Lib | TargetKind::ProcMacro) => FileRole::Library,
            Some(TargetKind::Bin | TargetKind::Example) if krate.root == unit.path => {
                FileRole::BinaryRoot
            }
            Some(TargetKind::Bin | TargetKind::Example) => FileRole::BinaryModule,
            Some(_) => FileRole::EntryFile,
            None => loose_role(
                &unit.path,
                &krate.root,
                defines_main(&summaries, &krate.root),
            ),
        };
        unit.target = krate.target;
        unit.module = module;
        unit.crate_name = krate.name.clone();
        unit.crate_id = Some(crate_id);
        unit.prescanned = lintable.get(&unit.path).copied().unwrap_or(false);
    }
    model
}

/// The crate a file is linted as part of, and its module there, from the crates whose module
/// trees include it: a library's module is library code; a module only programs (bin and
/// example targets) declare is part of the program, like its root file; test and bench targets
/// and build scripts are entry points.
fn crate_of(model: &Model, path: &Path) -> (CrateId, Vec<String>) {
    let rank = |kind: Option<TargetKind>| match kind {
        Some(TargetKind::Lib | TargetKind::ProcMacro) => 0,
        Some(TargetKind::Bin | TargetKind::Example) => 1,
        Some(_) => 2,
        None => 3,
    };
    model
        .modules_of(path)
        .iter()
        .min_by_key(|(id, _)| rank(model.crates[*id].kind))
        .cloned()
        .unwrap_or_default()
}

/// Whether the file at `path` defines `fn main` (or a `main` value) at its top level.
fn defines_main(summaries: &HashMap<PathBuf, Rc<ModuleSummary>>, path: &Path) -> bool {
    summaries.get(path).is_some_and(|summary| {
        (summary.items.iter()).any(|item| item.name == "main" && item.kind == ItemKind::Value)
    })
}

/// The role of a file that no target compiles, in the crate whose root is `root`: a program's
/// when that root defines `fn main` (a program built by hand, `rustc bench.rs`, wherever it
/// lies), otherwise by where it is.
fn loose_role(path: &Path, root: &Path, root_defines_main: bool) -> FileRole {
    match (root_defines_main, path == root) {
        (true, true) => FileRole::BinaryRoot,
        (true, false) => FileRole::BinaryModule,
        (false, _) => guess_role(path),
    }
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
    fn roles_are_guessed_from_the_path_without_a_manifest() {
        assert_eq!(guess_role(Path::new("x/tests/it.rs")), FileRole::EntryFile);
        assert_eq!(guess_role(Path::new("x/build.rs")), FileRole::EntryFile);
        assert_eq!(guess_role(Path::new("x/src/main.rs")), FileRole::BinaryRoot);
        assert_eq!(guess_role(Path::new("x/src/gpu.rs")), FileRole::Library);
    }

    #[test]
    fn a_file_no_target_compiles_is_a_program_when_its_root_defines_main() {
        let bench = Path::new("bench/scripts/batch_bench.rs");
        assert_eq!(loose_role(bench, bench, true), FileRole::BinaryRoot);
        let helper = Path::new("bench/scripts/helper.rs");
        assert_eq!(loose_role(helper, bench, true), FileRole::BinaryModule);
        assert_eq!(loose_role(bench, bench, false), FileRole::Library);
    }
}
