//! How the driver lints Python files: a first check of every file gives what each tells the
//! others (its device choosers, what its imports bind, whether it runs as a program) and
//! provisional findings, the packages' library modules each as if it were the only file, then
//! the other files (scripts, examples, tests, notebooks) with what the modules told; then the
//! project's [`fixed_point`] checks again each file whose questions to the project are now
//! answered otherwise than when it was last checked, until the answers settle. A file asks
//! nothing of most projects, and is checked once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::analysis::Event;
use crate::config::Config;
use crate::diagnostic::{Finding, Level, Requirement};
use crate::discover::{FileUnit, Session, is_package};
use crate::notebook::{self, Cells};
use crate::python::{self, PyContext};
use crate::rules;
use crate::source::{self, FileRole, Language, Unparsed};

use super::fixed_point::{Exchange, FileKey, fixed_point};

/// The findings of a Python file, as far as the project's fixed point has decided them.
#[derive(Debug)]
pub struct Settled {
    pub findings: Vec<Finding>,
    /// Whether the file has `placement: allow` comments, which are read when its findings are
    /// reported: a settled file with neither is not read again.
    pub allows: bool,
    /// Why the whole file is a program's, when it is (`--verbose`).
    pub program: Option<String>,
}

/// One Python file checked with what `cx.project` knows of the others: its findings, what it
/// tells the others, and what it asked of them.
#[derive(Debug)]
pub struct Checked {
    pub findings: Vec<Finding>,
    pub summary: Arc<python::Summary>,
    pub asked: python::Asked,
    pub program: Option<String>,
}

impl Checked {
    /// Whether this check, made with no other file known, stands in `project`: the project
    /// answers what the file asked as a project of no files does, so a check with it finds the
    /// same.
    pub fn stands_in(&self, project: &python::Project) -> bool {
        project.answer(&self.asked) == python::Project::default().answer(&self.asked)
    }
}

pub fn check(text: &str, cx: &PyContext<'_>) -> Checked {
    let checked = python::check(text, cx);
    Checked {
        findings: word(checked.events),
        summary: Arc::new(checked.summary),
        asked: checked.asked,
        program: checked.program,
    }
}

/// A Python file's text: a `.py` file's, or a notebook's code cells ([`notebook`]).
#[derive(Debug)]
pub struct PyText {
    /// What findings point into and reports show.
    pub text: String,
    /// A notebook's code with IPython's magics blanked, as long as `text`.
    blanked: Option<String>,
    /// Where a notebook's cells start in `text`.
    pub cells: Option<Cells>,
}

impl PyText {
    /// The text to parse and check.
    pub fn linted(&self) -> &str {
        self.blanked.as_deref().unwrap_or(&self.text)
    }
}

/// The text of the Python file `unit` from its bytes; a notebook's code is held to `limit`
/// bytes. Otherwise the text to show and why it is not linted.
pub fn text(unit: &FileUnit, bytes: Vec<u8>, limit: u64) -> Result<PyText, (String, Unparsed)> {
    if !unit.is_notebook() {
        let text = source::decode(bytes, Language::Python)?;
        return Ok(PyText {
            text,
            blanked: None,
            cells: None,
        });
    }
    // Inside `linting`, a panic that the reader catches (one of ruff's parser, on IPython
    // syntax) is not printed.
    let read = super::linting(|| notebook::read(&bytes))
        .and_then(|read| read)
        .map_err(|why| {
            let unparsed = Unparsed {
                span: 0..0,
                message: why,
                label: "not linted".to_owned(),
                help: "save the notebook again from Jupyter (nbformat 4), or exclude it".to_owned(),
            };
            (String::new(), unparsed)
        })?;
    let len = read.code.len() as u64;
    if len > limit {
        return Err((String::new(), super::too_big(len, limit)));
    }
    Ok(PyText {
        text: read.code,
        blanked: Some(read.python),
        cells: Some(read.cells),
    })
}

/// The findings of one Python file, with what `cx.project` knows of the others.
pub fn lint(text: &str, cx: &PyContext<'_>) -> Vec<Finding> {
    check(text, cx).findings
}

/// The rules' findings of a file's events, or its `parse_error`.
fn word(events: Result<Vec<Event<'_>>, Unparsed>) -> Vec<Finding> {
    match events {
        Ok(events) => rules::check(&events, Language::Python),
        Err(unparsed) => vec![rules::unlinted(unparsed)],
    }
}

/// What a Python file tells the others, and what it asked of them when it was last checked.
#[derive(Debug)]
pub(super) struct PyFacts {
    folder: String,
    module: String,
    /// Its dotted names from the project's import roots ([`python::ModuleFile::rooted`]).
    rooted: Vec<String>,
    summary: Arc<python::Summary>,
    asked: python::Asked,
    /// What the project it was checked with answered.
    answers: python::Answers,
}

/// The project's Python files, as they exchange what they define.
struct PythonFiles<'s> {
    session: &'s Session,
    units: BTreeMap<FileKey, &'s FileUnit>,
    /// Whether the run lints whole workspaces (every path given is a workspace's root), so that
    /// the files it holds are all that could import one another.
    complete: bool,
    /// Texts to check in place of the files' on disk (an editor's unsaved buffers).
    overlay: &'s HashMap<PathBuf, String>,
    /// Whether each folder of the files is a package (holds `__init__.py`), looked at once.
    packages: HashMap<&'s Path, bool>,
    /// Whether each folder of the files and those above them in their workspace is a Python
    /// project's root ([`is_project_root`]), looked at once.
    project_roots: HashMap<&'s Path, bool>,
}

impl<'s> PythonFiles<'s> {
    fn new(session: &'s Session, overlay: &'s HashMap<PathBuf, String>) -> PythonFiles<'s> {
        let folders: HashSet<&Path> = (session.files.iter())
            .filter(|unit| unit.language == Language::Python)
            .filter_map(|unit| unit.path.parent())
            .collect();
        let mut project_roots = HashMap::new();
        for unit in (session.files.iter()).filter(|unit| unit.language == Language::Python) {
            let root = &session.workspaces[session.packages[unit.package].workspace].root;
            for dir in (unit.path.ancestors().skip(1)).take_while(|dir| dir.starts_with(root)) {
                if project_roots.contains_key(dir) {
                    break;
                }
                project_roots.insert(dir, is_project_root(dir));
            }
        }
        let packages = (folders.into_iter())
            .map(|dir| (dir, is_package(dir)))
            .collect();
        PythonFiles {
            packages,
            project_roots,
            complete: session
                .requested
                .iter()
                .all(|path| session.workspaces.iter().any(|w| w.root == *path)),
            session,
            units: session
                .files
                .iter()
                .filter(|unit| unit.language == Language::Python)
                .map(|unit| (FileKey::of(unit), unit))
                .collect(),
            overlay,
        }
    }
}

impl PythonFiles<'_> {
    /// Checks one file with what `project` knows of the others: its findings and its facts. A
    /// file that cannot be read here is reported when the run reports it.
    fn check(&self, unit: &FileUnit, project: &python::Project) -> Option<(Settled, PyFacts)> {
        let config = self.session.config(unit);
        let limit = config.max_file_size.0;
        let bytes = match self.overlay.get(&unit.path) {
            Some(text) => text.clone().into_bytes(),
            None => match super::read_unit(unit, limit).ok()? {
                source::Read::Bytes(bytes) => bytes,
                source::Read::TooBig(_) => return None,
            },
        };
        let text = text(unit, bytes, limit).ok()?;
        let package = &self.session.packages[unit.package].name;
        let mut cx = context(unit, config, project, package, self.in_package(unit));
        cx.rooted = self.rooted(unit);
        let checked = super::linting(|| check(text.linted(), &cx)).ok()?;
        let settled = Settled {
            findings: checked.findings,
            allows: super::suppress::has_directives(&text.text),
            program: checked.program,
        };
        let facts = PyFacts {
            folder: cx.folder,
            module: cx.module,
            rooted: cx.rooted,
            summary: checked.summary,
            answers: project.answer(&checked.asked),
            asked: checked.asked,
        };
        Some((settled, facts))
    }

    /// Whether the file's folder is a Python package (holds `__init__.py`).
    fn in_package(&self, unit: &FileUnit) -> bool {
        (unit.path.parent())
            .is_some_and(|dir| (self.packages.get(dir).copied()).unwrap_or_else(|| is_package(dir)))
    }

    /// A file's dotted names from the import roots: its path from its workspace's root and from
    /// each folder between that holds a Python project's own `pyproject.toml` or `setup.py` (a
    /// package in a monorepo, `models/codec/dualcodec/dualcodec/...` imported as `dualcodec...`),
    /// and from a root's `src/` when it is there; none for a notebook, which no module imports.
    fn rooted(&self, unit: &FileUnit) -> Vec<String> {
        if unit.is_notebook() {
            return Vec::new();
        }
        let root = &self.session.workspaces[self.session.packages[unit.package].workspace].root;
        let path = unit.path.with_extension("");
        let roots = (path.ancestors().skip(1))
            .take_while(|dir| dir.starts_with(root))
            .filter(|dir| *dir == root || self.project_roots.get(*dir) == Some(&true));
        // The workspace's root first, then the roots within it.
        let mut groups = Vec::new();
        for root in roots {
            let Some(parts) = path
                .strip_prefix(root)
                .ok()
                .and_then(|inside| {
                    inside
                        .iter()
                        .map(|part| part.to_str())
                        .collect::<Option<Vec<_>>>()
                })
                .filter(|parts| parts.len() > 1)
            else {
                continue;
            };
            let mut names = vec![parts.join(".")];
            if parts[0] == "src" {
                names.push(parts[1..].join("."));
            }
            groups.push(names);
        }
        groups.into_iter().rev().flatten().collect()
    }
}

/// Whether the folder `dir` holds a Python project of its own (`pyproject.toml`, `setup.py`),
/// whose packages are imported by their path from it.
fn is_project_root(dir: &Path) -> bool {
    dir.join("pyproject.toml").is_file() || dir.join("setup.py").is_file()
}

impl Exchange for PythonFiles<'_> {
    type Facts = PyFacts;
    type Known = python::Project;
    type Linted = Settled;

    fn decide(
        &self,
        facts: &BTreeMap<FileKey, PyFacts>,
        _: Option<&python::Project>,
    ) -> Option<python::Project> {
        let files = facts.values().map(|file| python::ModuleFile {
            folder: file.folder.clone(),
            module: file.module.clone(),
            rooted: file.rooted.clone(),
            summary: file.summary.clone(),
        });
        Some(python::Project::new(files).complete(self.complete))
    }

    fn tells_more(&self, old: &PyFacts, new: &PyFacts) -> bool {
        old.summary != new.summary
    }

    fn relint(
        &self,
        project: &python::Project,
        facts: &BTreeMap<FileKey, PyFacts>,
    ) -> Vec<(FileKey, Settled, PyFacts)> {
        facts
            .par_iter()
            .filter(|(_, file)| project.answer(&file.asked) != file.answers)
            .filter_map(|(key, _)| {
                let (settled, facts) = self.check(self.units[key], project)?;
                Some((key.clone(), settled, facts))
            })
            .collect()
    }
}

/// What the Python files told each other in a run, kept to decide again when one changes.
#[derive(Debug, Default)]
pub(super) struct Told(BTreeMap<FileKey, PyFacts>);

/// The Python files' findings, decided with what the files tell each other, the project they
/// were decided with, and what the files told. A file missing from the findings could not be
/// read or checked here; the run reports it.
pub(super) fn decide(session: &Session) -> (python::Project, HashMap<PathBuf, Settled>, Told) {
    let overlay = HashMap::new();
    let files = PythonFiles::new(session, &overlay);
    // The packages' library modules first, each as if it were the only file; then the other
    // files (scripts, examples, tests, notebooks, modules outside packages), which mostly ask
    // about the packages' modules, with what those told. The fixed point then checks again any
    // file whose answers changed, as it would from any start.
    let (modules, others): (Vec<_>, Vec<_>) = (files.units.iter())
        .partition(|(_, unit)| unit.role == FileRole::Library && files.in_package(unit));
    let check_all = |wave: Vec<(&FileKey, &&FileUnit)>, project: &python::Project| {
        wave.par_iter()
            .filter_map(|(key, unit)| {
                let (settled, facts) = files.check(unit, project)?;
                Some(((*key).clone(), settled, facts))
            })
            .collect::<Vec<(FileKey, Settled, PyFacts)>>()
    };
    let mut settled = HashMap::new();
    let mut facts = BTreeMap::new();
    let mut record = |checked: Vec<(FileKey, Settled, PyFacts)>, facts: &mut BTreeMap<_, _>| {
        for (key, first, fact) in checked {
            settled.insert(files.units[&key].path.clone(), first);
            facts.insert(key, fact);
        }
    };
    record(check_all(modules, &python::Project::default()), &mut facts);
    let told_by_modules = files.decide(&facts, None).unwrap_or_default();
    record(check_all(others, &told_by_modules), &mut facts);
    let project = fixed_point(&files, &mut facts, |key, again| {
        settled.insert(files.units[key].path.clone(), again);
    })
    .unwrap_or_default();
    // A finding in a class whose base is another module's class stands if the project's class
    // hierarchy makes that base a module class, and one in a function that may be model code if
    // model code hands it its tensors: decided once, with no file checked again.
    let fed = project.fed();
    for file in settled.values_mut() {
        keep_standing(&mut file.findings, &project, &fed);
    }
    (project, settled, Told(facts))
}

/// Decides again once `unit`'s text is `overlay`'s (or its file's, when the overlay has none):
/// the file is checked with `project`; when what it tells the others changed, the project is
/// decided again and the files whose questions it now answers otherwise are checked again, as
/// in a whole run. The files checked, with their findings; `project` and `told` are updated.
pub(super) fn decide_again(
    session: &Session,
    told: &mut Told,
    project: &mut python::Project,
    overlay: &HashMap<PathBuf, String>,
    unit: &FileUnit,
) -> BTreeMap<PathBuf, Settled> {
    let files = PythonFiles::new(session, overlay);
    let key = FileKey::of(unit);
    let Some((settled, facts)) = files.check(unit, project) else {
        return BTreeMap::new();
    };
    // A file checked twice is what its last check found.
    let mut checked = BTreeMap::from([(unit.path.clone(), settled)]);
    let same = (told.0.get(&key)).is_some_and(|old| !files.tells_more(old, &facts));
    told.0.insert(key, facts);
    if !same {
        let decided = fixed_point(&files, &mut told.0, |key, again| {
            checked.insert(files.units[key].path.clone(), again);
        });
        if let Some(decided) = decided {
            *project = decided;
        }
    }
    let fed = project.fed();
    for file in checked.values_mut() {
        keep_standing(&mut file.findings, project, &fed);
    }
    checked
}

/// Keeps the findings whose requirement the project meets ([`Requirement`]); `fed` is
/// [`python::Project::fed`].
pub fn keep_standing(
    findings: &mut Vec<Finding>,
    project: &python::Project,
    fed: &rustc_hash::FxHashSet<(String, String)>,
) {
    findings.retain(|finding| match &finding.requires {
        Some(Requirement::ModuleClass { base }) => project.is_module_class(base),
        Some(Requirement::Fed {
            function,
            parameters,
        }) => project.is_fed(fed, function, parameters),
        _ => true,
    });
}

/// What the Python checker needs of a file, its configuration, the name of its package and
/// whether its folder is a Python package ([`is_package`]).
pub fn context<'a>(
    unit: &FileUnit,
    config: &'a Config,
    project: &'a python::Project,
    package: &str,
    in_package: bool,
) -> python::PyContext<'a> {
    let dir = unit.path.parent();
    let is_init = unit
        .path
        .file_name()
        .is_some_and(|name| name == "__init__.py");
    python::PyContext {
        api: &config.python_api,
        role: unit.role,
        in_package,
        module: unit.module.join("."),
        entry_points: &config.entry_points,
        is_init,
        project,
        folder: dir.map(|dir| dir.display().to_string()).unwrap_or_default(),
        rooted: Vec::new(),
        model_code: rules::find("unplaced_tensor")
            .is_some_and(|rule| config.level(rule, package) != Level::Allow),
    }
}
