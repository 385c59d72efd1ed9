//! A project kept after a whole run, to lint one of its files again as an editor changes it:
//! the file's new text is checked alone, with what the other files told it in the whole run
//! (Python's project facts, the Rust workspace model and device choosers), and its findings get
//! the configuration, suppressions and levels a whole run gives them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::api::{Api, Chooser};
use crate::discover::FileUnit;
use crate::rust::parse::Nesting;
use crate::source::{Language, LineIndex};

use super::rust_files::{decide_requirements, lint_rust};
use super::{LintedFile, Run, finish, in_pool, linting, python_files};

/// What a whole run knew, kept, and the texts an editor has not saved.
#[derive(Debug)]
pub struct Kept {
    run: Run,
    /// Each configuration's Rust tables with the device choosers the Rust files told each
    /// other, by the configuration's address (a configuration is shared by its packages).
    apis: HashMap<usize, Api>,
    /// The unsaved texts, by path: they are what the Python files checked again read.
    unsaved: HashMap<PathBuf, String>,
}

/// Why a text was not linted again.
#[derive(Debug, PartialEq, Eq)]
pub enum NotLinted {
    /// The path is no file of the project (excluded, outside it, or not Rust or Python).
    NotInProject,
    /// A bug of ours stopped the lint: the panic's message and where it happened.
    Internal(String),
}

impl Kept {
    pub(super) fn new(run: Run, choosers: HashMap<Chooser, String>) -> Kept {
        let mut apis = HashMap::new();
        for unit in (run.session.files.iter()).filter(|unit| unit.language == Language::Rust) {
            let config = run.session.config(unit);
            apis.entry(std::ptr::from_ref(config).addr())
                .or_insert_with(|| config.api.with_choosers(&choosers));
        }
        Kept {
            run,
            apis,
            unsaved: HashMap::new(),
        }
    }

    /// The project's file at `path`.
    fn unit(&self, path: &Path) -> Option<&FileUnit> {
        self.run.session.files.iter().find(|unit| unit.path == path)
    }

    /// Takes `text` as the project's file at `path` (its text on disk again when `None`) and
    /// lints what that changes: the file itself, and for a Python file whose facts for the
    /// others changed (a device chooser, a module's imports, what a function returns), the files
    /// whose questions the project now answers otherwise. Each file linted, with its
    /// diagnostics (none when it has none). A Rust file's callers are linted again by the next
    /// whole run.
    pub fn update(
        &mut self,
        path: &Path,
        text: Option<String>,
    ) -> Result<Vec<LintedFile>, NotLinted> {
        let unit = self.unit(path).ok_or(NotLinted::NotInProject)?.clone();
        match text {
            Some(text) => self.unsaved.insert(unit.path.clone(), text),
            None => self.unsaved.remove(&unit.path),
        };
        let linted = in_pool(|| {
            linting(|| match unit.language {
                Language::Python => self.python(&unit),
                Language::Rust => self.rust(unit.clone()).into_iter().collect(),
            })
        });
        linted.map_err(NotLinted::Internal)
    }

    /// The Python files `unit`'s text changes, decided again.
    fn python(&mut self, unit: &FileUnit) -> Vec<LintedFile> {
        let run = &mut self.run;
        let checked = python_files::decide_again(
            &run.session,
            &mut run.told,
            &mut run.python,
            &self.unsaved,
            unit,
        );
        let run = &self.run;
        let mut linted = Vec::new();
        for (path, settled) in checked {
            let Some(unit) = self.unit(&path).cloned() else {
                continue;
            };
            let config = run.session.config(&unit);
            let Some(python) = self.text(&unit) else {
                continue;
            };
            let (text, cells) = (python.text, python.cells);
            let result = finish(run, config, unit.clone(), text, cells, settled.findings);
            linted.push(result.file.unwrap_or_else(|| empty(unit)));
        }
        linted
    }

    /// A Python file's text as the editor has it, or as it is on disk.
    fn text(&self, unit: &FileUnit) -> Option<python_files::PyText> {
        let limit = self.run.session.config(unit).max_file_size.0;
        let bytes = match self.unsaved.get(&unit.path) {
            Some(text) => text.clone().into_bytes(),
            None => std::fs::read(&unit.path).ok()?,
        };
        python_files::text(unit, bytes, limit).ok()
    }

    /// A Rust file's text linted with what the whole run learnt of the others.
    fn rust(&self, unit: FileUnit) -> Option<LintedFile> {
        let run = &self.run;
        let text = match self.unsaved.get(&unit.path) {
            Some(text) => text.clone(),
            None => std::fs::read_to_string(&unit.path).ok()?,
        };
        let api = &self.apis[&std::ptr::from_ref(run.session.config(&unit)).addr()];
        let result = lint_rust(run, unit.clone(), text, Nesting::Unchecked, api);
        // Findings that depend on the callers of a private helper, decided with the crate's
        // files as they are on disk.
        let mut files: Vec<LintedFile> = result.file.into_iter().collect();
        decide_requirements(run, &mut files);
        Some(files.pop().unwrap_or_else(|| empty(unit)))
    }
}

/// A file linted without diagnostics, to clear what an editor shows of it: no position points
/// into it, so its text is not kept.
fn empty(unit: FileUnit) -> LintedFile {
    LintedFile {
        unit,
        lines: LineIndex::new(""),
        text: String::new(),
        cells: None,
        diagnostics: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Options;

    #[test]
    fn a_changed_text_is_linted_with_what_the_other_files_told() {
        let dir = tempfile::tempdir().unwrap();
        let chooser = "import torch\n\n\ndef pick():\n    return \"cuda\" if torch.cuda.is_available() else \"cpu\"\n";
        let files = [
            ("pkg/__init__.py", "from .devices import pick\n"),
            ("pkg/devices.py", chooser),
            ("pkg/model.py", "import torch\n"),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let project =
            super::super::discover(&[dir.path().to_path_buf()], &Options::default()).unwrap();
        let (outcome, mut kept) = super::super::lint_and_keep(project, &|| {});
        assert!(
            outcome
                .files
                .iter()
                .all(|file| !file.unit.relative.ends_with("model.py"))
        );
        let rules = |files: &[LintedFile]| -> Vec<(String, Vec<&str>)> {
            (files.iter())
                .map(|file| {
                    let rules = file.diagnostics.iter().map(|d| d.finding.rule.name);
                    (file.unit.relative.clone(), rules.collect())
                })
                .collect()
        };
        // The chooser of another module, through its package's re-export.
        let model = dir.path().join("pkg/model.py");
        let calls = "import torch\n\nfrom pkg import pick\n\n\ndef load():\n    return torch.zeros(2, device=pick())\n";
        let linted = kept.update(&model, Some(calls.to_owned())).unwrap();
        assert_eq!(
            rules(&linted),
            [("pkg/model.py".to_owned(), vec!["implicit_device"])]
        );
        // The chooser's module changed, unsaved: it no longer chooses, and its caller, which
        // asked about it, is checked again.
        let devices = dir.path().join("pkg/devices.py");
        let takes = "def pick(device):\n    return device\n";
        let linted = kept.update(&devices, Some(takes.to_owned())).unwrap();
        assert_eq!(
            rules(&linted),
            [
                ("pkg/devices.py".to_owned(), vec![]),
                ("pkg/model.py".to_owned(), vec![])
            ]
        );
        // Closed without saving: as on disk again.
        let linted = kept.update(&devices, None).unwrap();
        assert!(rules(&linted).contains(&("pkg/model.py".to_owned(), vec!["implicit_device"])));
        assert_eq!(
            kept.update(&dir.path().join("elsewhere.py"), None)
                .unwrap_err(),
            NotLinted::NotInProject
        );
    }
}
