//! How the driver lints Python files, in two passes: a first check of every file as if it were
//! the only one gives what each tells the others (its device choosers, what its imports bind,
//! whether it runs as a program) and provisional findings; those stand unless the project
//! answers what the file asked of it otherwise than a project of no files would, and only such
//! a file is checked again.

use std::collections::HashMap;
use std::path::PathBuf;

use rayon::prelude::*;

use crate::analysis::Event;
use crate::config::Config;
use crate::diagnostic::Finding;
use crate::discover::{FileUnit, Session};
use crate::python::{self, PyContext};
use crate::rules;
use crate::source::{self, Language, Unparsed};

/// One file's first pass over the project's files, checked as if it were the only file.
#[derive(Debug)]
pub struct FirstPass {
    /// What the other files need of it: its device choosers and its top-level imports.
    pub summary: python::Summary,
    /// Its findings, final unless the project changes them ([`Provisional::confirm`]).
    pub provisional: Provisional,
}

/// A file's findings from the first pass, and what it asked of the project to reach them.
#[derive(Debug)]
pub struct Provisional {
    settled: Settled,
    asked: python::Asked,
}

/// The findings of a file that the first pass settled.
#[derive(Debug)]
pub struct Settled {
    pub findings: Vec<Finding>,
    /// Whether the file has `placement: allow` comments, which are read when its findings are
    /// reported: a settled file with neither is not read again.
    pub allows: bool,
}

impl Provisional {
    /// The findings, when they stand: the project answers everything the file asked of it as
    /// a project of no files does. Otherwise the file is checked again with [`lint`].
    pub fn confirm(self, project: &python::Project) -> Option<Settled> {
        project.answers_as_none(&self.asked).then_some(self.settled)
    }
}

/// The first pass over one file, with no other file known (`cx.project` is empty): the file is
/// checked once, and most files are not checked again (see [`Provisional::confirm`]).
pub fn first_pass(text: &str, cx: &PyContext<'_>) -> FirstPass {
    let checked = python::check(text, cx);
    FirstPass {
        summary: checked.summary,
        provisional: Provisional {
            settled: Settled {
                findings: word(checked.events),
                allows: super::suppress::has_directives(text),
            },
            asked: checked.asked,
        },
    }
}

/// The findings of one Python file, with what `cx.project` knows of the others.
pub fn lint(text: &str, cx: &PyContext<'_>) -> Vec<Finding> {
    word(python::check(text, cx).events)
}

/// The rules' findings of a file's events, or its `parse_error`.
fn word(events: Result<Vec<Event<'_>>, Unparsed>) -> Vec<Finding> {
    match events {
        Ok(events) => rules::check(&events, Language::Python),
        Err(unparsed) => vec![rules::unlinted(unparsed)],
    }
}

/// The first pass over the Python files: what each tells the others (its device choosers,
/// what its imports bind), and the findings of the files whose check the others do not change.
/// A file that cannot be read here is reported by the second pass.
pub(super) fn first_pass_over(session: &Session) -> (python::Project, HashMap<PathBuf, Settled>) {
    let empty = python::Project::default();
    let (summaries, provisional): (Vec<_>, Vec<_>) = session
        .files
        .par_iter()
        .filter(|unit| unit.language == Language::Python)
        .filter_map(|unit| {
            let config = session.config(unit);
            let len = std::fs::metadata(&unit.path).ok()?.len();
            if len > config.max_file_size.0 {
                return None;
            }
            let text = source::decode(std::fs::read(&unit.path).ok()?).ok()?;
            let cx = context(unit, config, &empty);
            let pass = super::linting(|| first_pass(&text, &cx)).ok()?;
            let FirstPass {
                summary,
                provisional,
            } = pass;
            Some((
                (cx.folder, cx.module, summary),
                (unit.path.clone(), provisional),
            ))
        })
        .unzip();
    let project = python::Project::new(summaries);
    let settled = provisional
        .into_iter()
        .filter_map(|(path, provisional)| Some((path, provisional.confirm(&project)?)))
        .collect();
    (project, settled)
}

/// What the Python checker needs of a file and its configuration.
pub fn context<'a>(
    unit: &FileUnit,
    config: &'a Config,
    project: &'a python::Project,
) -> python::PyContext<'a> {
    let dir = unit.path.parent();
    let is_init = unit
        .path
        .file_name()
        .is_some_and(|name| name == "__init__.py");
    python::PyContext {
        api: &config.python_api,
        role: unit.role,
        in_package: dir.is_some_and(|dir| dir.join("__init__.py").is_file()),
        module: unit.module.join("."),
        entry_points: &config.entry_points,
        is_init,
        project,
        folder: dir.map(|dir| dir.display().to_string()).unwrap_or_default(),
    }
}
