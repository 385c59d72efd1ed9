//! A project kept after a whole run, to lint one of its files again as an editor changes it:
//! the file's new text is checked alone, with what the other files told it in the whole run
//! (Python's project facts, the Rust workspace model and device choosers), and its findings get
//! the configuration, suppressions and levels a whole run gives them.

use std::collections::HashMap;
use std::path::Path;

use crate::api::{Api, Chooser};
use crate::discover::{FileUnit, Session};
use crate::rust::parse::Nesting;
use crate::source::{Language, LineIndex};

use super::rust_files::{decide_requirements, lint_rust};
use super::{LintedFile, Run, UnitResult, finish, in_pool, linting, python_files};

/// What a whole run knew, kept.
#[derive(Debug)]
pub struct Kept {
    run: Run,
    /// Each configuration's Rust tables with the device choosers the Rust files told each
    /// other, by the configuration's address (a configuration is shared by its packages).
    apis: HashMap<usize, Api>,
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
        Kept { run, apis }
    }

    /// The session of the whole run.
    pub fn session(&self) -> &Session {
        &self.run.session
    }

    /// The project's file at `path`.
    pub fn unit(&self, path: &Path) -> Option<&FileUnit> {
        self.run.session.files.iter().find(|unit| unit.path == path)
    }

    /// Lints `text` as the text of the project's file at `path`: the file with its
    /// diagnostics (none when it has none).
    pub fn lint_text(&self, path: &Path, text: String) -> Result<LintedFile, NotLinted> {
        let unit = self.unit(path).ok_or(NotLinted::NotInProject)?.clone();
        let shown = unit.clone();
        let result = in_pool(|| linting(|| self.lint_unit_text(unit, text.clone())))
            .map_err(NotLinted::Internal)?;
        Ok(result.file.unwrap_or_else(|| {
            let (text, cells) = match shown.language {
                Language::Python => {
                    let limit = self.run.session.config(&shown).max_file_size.0;
                    match python_files::text(&shown, text.into_bytes(), limit) {
                        Ok(python) => (python.text, python.cells),
                        Err((shown, _)) => (shown, None),
                    }
                }
                Language::Rust => (text, None),
            };
            LintedFile {
                unit: shown,
                lines: LineIndex::new(&text),
                text,
                cells,
                diagnostics: Vec::new(),
            }
        }))
    }

    fn lint_unit_text(&self, unit: FileUnit, text: String) -> UnitResult {
        let run = &self.run;
        let config = run.session.config(&unit);
        if unit.language == Language::Python {
            let limit = config.max_file_size.0;
            let (text, cells, findings) = match python_files::text(&unit, text.into_bytes(), limit)
            {
                Ok(python) => {
                    let package = &run.session.packages[unit.package].name;
                    let cx = python_files::context(&unit, config, &run.python, package);
                    let mut findings = python_files::lint(python.linted(), &cx);
                    python_files::keep_standing(&mut findings, &run.python, &run.python.fed());
                    (python.text, python.cells, findings)
                }
                Err((shown, unparsed)) => (shown, None, vec![crate::rules::unlinted(unparsed)]),
            };
            return finish(run, config, unit, text, cells, findings);
        }
        let api = &self.apis[&std::ptr::from_ref(config).addr()];
        let mut result = lint_rust(run, unit, text, Nesting::Unchecked, api);
        // Findings that depend on the callers of a private helper, decided with the crate's
        // files as they are on disk.
        if let Some(file) = result.file.take() {
            let mut files = vec![file];
            decide_requirements(run, &mut files);
            result.file = files.pop();
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Options;

    #[test]
    fn a_changed_text_is_linted_with_what_the_other_files_told() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("pkg/__init__.py", "from .devices import pick\n"),
            (
                "pkg/devices.py",
                "import torch\n\n\ndef pick():\n    return \"cuda\" if torch.cuda.is_available() else \"cpu\"\n",
            ),
            ("pkg/model.py", "import torch\n"),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let project =
            super::super::discover(&[dir.path().to_path_buf()], &Options::default()).unwrap();
        let (outcome, kept) = super::super::lint_and_keep(project, &|| {});
        assert!(
            outcome
                .files
                .iter()
                .all(|file| !file.unit.relative.ends_with("model.py"))
        );
        let model = dir.path().join("pkg/model.py");
        // The chooser of another module, through its package's re-export.
        let text = "import torch\n\nfrom pkg import pick\n\n\ndef load():\n    return torch.zeros(2, device=pick())\n";
        let linted = kept.lint_text(&model, text.to_owned()).unwrap();
        let rules: Vec<&str> = (linted.diagnostics.iter())
            .map(|d| d.finding.rule.name)
            .collect();
        assert_eq!(rules, ["implicit_device"]);
        // Fixed: nothing.
        let fixed =
            "import torch\n\n\ndef load(device):\n    return torch.zeros(2, device=device)\n";
        let linted = kept.lint_text(&model, fixed.to_owned()).unwrap();
        assert!(linted.diagnostics.is_empty());
        assert_eq!(
            kept.lint_text(&dir.path().join("elsewhere.py"), String::new())
                .unwrap_err(),
            NotLinted::NotInProject
        );
    }
}
