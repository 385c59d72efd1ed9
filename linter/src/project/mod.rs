//! The driver: lints the files of a discovered session in parallel, each on its own (a file
//! that cannot be linted, or a bug of ours that panics on one, is reported and the others are
//! still linted), decides what the files tell each other (the Python project's first pass, the
//! device choosers' fixed point, the requirements on callers) before levels and suppressions
//! ([`suppress`]) are applied last, and keys each finding for baselines ([`locate`]).

pub mod locate;
pub mod python_files;
pub mod suppress;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use rayon::prelude::*;

use crate::analysis::{CallFact, ChooserFact, Event};
use crate::api::{Api, Chooser, NameSet};
use crate::config::Config;
use crate::diagnostic::{Finding, Level, Requirement};
use crate::discover::{self, DiscoverError, FileUnit, Options, Session};
use crate::python;
use crate::rules;
use crate::rust;
use crate::rust::model::Model;
use crate::rust::parse::{self, Nesting, NoTree};
use crate::rust::resolve::{self, FileContext};
use crate::source::{self, CrateId, FileRole, Language, LineIndex, STACK_SIZE, Unparsed};
use suppress::Suppressions;

/// A finding with its level.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub finding: Finding,
    pub level: Level,
}

/// A linted file: its diagnostics, and its text when there is anything to show.
#[derive(Debug)]
pub struct LintedFile {
    pub unit: FileUnit,
    pub text: String,
    pub lines: LineIndex,
    pub diagnostics: Vec<Diagnostic>,
}

impl LintedFile {
    /// The baseline and fingerprint key of each diagnostic, in order.
    pub fn keys(&self) -> Vec<locate::FindingKey> {
        let spans: Vec<(&str, std::ops::Range<usize>)> = self
            .diagnostics
            .iter()
            .map(|d| (d.finding.rule.name, d.finding.span.clone()))
            .collect();
        locate::keys(&self.unit.relative, &self.text, self.unit.language, &spans)
    }
}

/// A bug of ours that stopped one file from being linted.
#[derive(Clone, Debug)]
pub struct InternalError {
    pub unit: FileUnit,
    /// The panic's message and where it happened.
    pub message: String,
}

impl InternalError {
    /// What to print: the file, what happened, and what to do.
    pub fn describe(&self) -> String {
        format!(
            "cargo-placement failed while linting {}: {}; this is a bug in cargo-placement: \
             please report it with the file (the other files were linted)",
            self.unit.relative, self.message
        )
    }
}

/// The result of a run.
#[derive(Debug)]
pub struct Outcome {
    pub session: Session,
    /// Files with diagnostics, in path order.
    pub files: Vec<LintedFile>,
    pub files_linted: usize,
    /// Findings dropped because a baseline accepts them.
    pub baselined: usize,
    /// Problems of the run itself (unknown rule names, unreadable files), for stderr.
    pub warnings: Vec<String>,
    /// Files that a bug of ours stopped.
    pub internal_errors: Vec<InternalError>,
}

impl Outcome {
    pub fn count(&self, level: Level) -> usize {
        self.files
            .iter()
            .flat_map(|file| &file.diagnostics)
            .filter(|d| d.level == level)
            .count()
    }

    /// 2 when a file could not be linted because of a bug of ours, else 1 when something is at
    /// `deny` level, else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.internal_errors.is_empty() {
            2
        } else if self.count(Level::Deny) > 0 {
            1
        } else {
            0
        }
    }
}

/// Lints one file's text: checks, parses, resolves and applies the rules. Offsets of the
/// findings are in `text`, whatever its byte order mark or `#!` line. Runs on a stack big
/// enough for [`source::NESTING_BUDGET`], growing the caller's when it is smaller.
/// The text is linted as a crate of its own: requirements on callers are decided by its own
/// calls.
pub fn lint_text(text: &str, cx: &FileContext<'_>) -> Vec<Finding> {
    let mut walked = lint_source(text, Nesting::Unchecked, cx);
    let lines = LineIndex::new(text);
    let mut choosers = HashMap::new();
    for _ in 0..CHOOSER_ROUNDS {
        let place = |offset| format!("line {}", lines.line_of(offset) + 1);
        let found = new_choosers(&choosers, chooser_labels(&walked.choosers, place).iter());
        if found.is_empty() {
            break;
        }
        choosers.extend(found);
        let api = cx.api.with_choosers(&choosers);
        let cx = FileContext {
            api: &api,
            module: cx.module.clone(),
            ..*cx
        };
        walked = lint_source(text, Nesting::Unchecked, &cx);
    }
    let mut findings = walked.findings;
    let helpers = required_helpers(findings.iter());
    if !helpers.is_empty() {
        let cx = FileContext {
            calls_to: Some(&helpers),
            module: cx.module.clone(),
            ..*cx
        };
        let covered = covered_helpers(&lint_source(text, Nesting::Unchecked, &cx).calls);
        findings.retain(|finding| stands(finding, &covered));
    }
    findings
}

/// How many times device choosers are followed into the functions that return what a chooser
/// they call chose (each round finds the callers of the last round's choosers).
const CHOOSER_ROUNDS: usize = 4;

/// Each chooser of `facts` with the label of findings at its calls; `place` words where an
/// offset of the facts' file is.
fn chooser_labels(facts: &[ChooserFact], place: impl Fn(usize) -> String) -> ChooserLabels {
    facts
        .iter()
        .map(|fact| {
            let label = format!(
                "returns a device it chose itself: {} ({})",
                fact.choice,
                place(fact.offset)
            );
            (fact.chooser.clone(), label)
        })
        .collect()
}

/// Device choosers, each with the label of findings at its calls, in the order their files
/// and choices come.
type ChooserLabels = Vec<(Chooser, String)>;

/// The device choosers of `labels` that are not in `known` yet, each with its first label.
fn new_choosers<'l>(
    known: &HashMap<Chooser, String>,
    labels: impl Iterator<Item = &'l (Chooser, String)>,
) -> HashMap<Chooser, String> {
    let mut found = HashMap::new();
    for (chooser, label) in labels {
        if !known.contains_key(chooser) {
            found
                .entry(chooser.clone())
                .or_insert_with(|| label.clone());
        }
    }
    found
}

/// Device choosers, decided now that every file is linted: each function that returns a
/// device it chose itself to callers who pass none becomes an API entry that chooses the
/// device implicitly, and the library files that can call it, and mention it, are linted
/// again with those entries, which flags its calls outside entry points. A chooser's callers
/// that return what it chose are choosers in turn, up to [`CHOOSER_ROUNDS`] deep.
fn decide_choosers(
    run: &Run,
    files: &mut Vec<LintedFile>,
    mut facts: BTreeMap<FileKey, ChooserLabels>,
) {
    let mut choosers: HashMap<Chooser, String> = HashMap::new();
    for _ in 0..CHOOSER_ROUNDS {
        let found = new_choosers(&choosers, facts.values().flatten());
        if found.is_empty() {
            return;
        }
        choosers.extend(found);
        let mut names = NameSet::default();
        for chooser in choosers.keys() {
            names.insert(chooser.path.rsplit("::").next().unwrap_or_default());
        }
        let callers = |unit: &FileUnit| {
            unit.role == FileRole::Library
                && unit.crate_id.is_some_and(|crate_id| {
                    choosers
                        .keys()
                        .any(|chooser| run.model.can_name(crate_id, chooser.krate))
                })
        };
        // One extended API per configuration (a configuration is shared by its packages).
        let mut apis: HashMap<usize, Api> = HashMap::new();
        for unit in run.session.files.iter().filter(|unit| callers(unit)) {
            let config = run.session.config(unit);
            apis.entry(std::ptr::from_ref(config).addr())
                .or_insert_with(|| config.api.with_choosers(&choosers));
        }
        let relinted: Vec<(FileUnit, UnitResult)> = run
            .session
            .files
            .par_iter()
            .filter(|unit| callers(unit))
            .filter_map(|unit| {
                let text = std::fs::read_to_string(&unit.path).ok()?;
                if !mentions(&text, &names) {
                    return None;
                }
                let api = &apis[&std::ptr::from_ref(run.session.config(unit)).addr()];
                let lint = || lint_rust(run, unit.clone(), text, Nesting::Unchecked, api);
                Some((unit.clone(), linting(lint).ok()?))
            })
            .collect();
        for (unit, result) in relinted {
            let key = FileKey::of(&unit);
            files.retain(|linted| FileKey::of(&linted.unit) != key);
            files.extend(result.file);
            facts.insert(key, result.choosers);
        }
        files.sort_by(|a, b| a.unit.relative.cmp(&b.unit.relative));
    }
}

/// A file as the chooser fixed point tells its facts apart: a file that two crates include is
/// linted once as part of each.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct FileKey {
    relative: String,
    crate_id: Option<CrateId>,
}

impl FileKey {
    fn of(unit: &FileUnit) -> FileKey {
        FileKey {
            relative: unit.relative.clone(),
            crate_id: unit.crate_id,
        }
    }
}

/// The helpers whose callers decide whether some of `findings` stand.
fn required_helpers<'f>(findings: impl Iterator<Item = &'f Finding>) -> NameSet {
    let mut helpers = NameSet::default();
    for finding in findings {
        if let Some(Requirement::SomeCallerDoesNotBind { helper }) = &finding.requires {
            helpers.insert(helper);
        }
    }
    helpers
}

/// What the walk of a Rust file gave.
#[derive(Debug, Default)]
struct Walked {
    findings: Vec<Finding>,
    /// The calls of its crate's non-public functions it makes, where they were asked for.
    calls: Vec<CallFact>,
    /// Its functions that choose a device for their callers.
    choosers: Vec<ChooserFact>,
}

/// Walks a Rust file: its findings, and what it tells the rest of its crate.
fn lint_source(text: &str, nesting: Nesting, cx: &FileContext<'_>) -> Walked {
    parse::with_syntax_tree(text, nesting, |tree| match tree {
        Ok(file) => {
            let mut walked = Walked::default();
            for event in resolve::walk(file, text, cx) {
                let first = walked.findings.len();
                walked
                    .findings
                    .extend(rules::check_event(&event, Language::Rust));
                // The choice's own finding words it (`hardcoded_device`, `implicit_device`).
                if let Some(chooser) = event.chooser()
                    && let Some(finding) = walked.findings.get(first)
                {
                    walked.choosers.push(ChooserFact {
                        chooser: chooser.clone(),
                        choice: finding.message.clone(),
                        offset: finding.span.start,
                    });
                }
                if let Event::Call(call) = event {
                    walked.calls.push(call);
                }
            }
            walked
        }
        Err(NoTree::Syntax(error)) => Walked {
            findings: vec![rules::parse_error(&error)],
            ..Walked::default()
        },
        Err(NoTree::Unparsed(unparsed)) => Walked {
            findings: vec![rules::unlinted(unparsed)],
            ..Walked::default()
        },
    })
}

/// Lints a Rust file's text with `api`: its findings with their levels, and its choosers.
fn lint_rust(run: &Run, unit: FileUnit, text: String, nesting: Nesting, api: &Api) -> UnitResult {
    let cx = FileContext {
        api,
        ..rust_context(run, &unit, None)
    };
    let walked = lint_source(&text, nesting, &cx);
    let choosers = match walked.choosers.is_empty() {
        true => Vec::new(),
        false => {
            let lines = LineIndex::new(&text);
            let place = |offset| format!("{}:{}", unit.relative, lines.line_of(offset) + 1);
            chooser_labels(&walked.choosers, place)
        }
    };
    UnitResult {
        choosers,
        ..finish(run, run.session.config(&unit), unit, text, walked.findings)
    }
}

/// The non-public functions of a crate whose every call comes after the caller made a context
/// current, or from such a function: their own uses of the current context are right.
fn covered_helpers(calls: &[CallFact]) -> HashSet<String> {
    let mut by_callee: HashMap<&str, Vec<&CallFact>> = HashMap::new();
    for call in calls {
        by_callee.entry(&call.callee).or_default().push(call);
    }
    let mut covered: HashSet<String> = HashSet::new();
    loop {
        let before = covered.len();
        for (callee, calls) in &by_callee {
            if covered.contains(*callee) {
                continue;
            }
            let all_bind = calls.iter().all(|call| {
                call.binds
                    || call
                        .caller
                        .as_ref()
                        .is_some_and(|caller| covered.contains(caller) && caller != callee)
            });
            if all_bind {
                covered.insert((*callee).to_owned());
            }
        }
        if covered.len() == before {
            return covered;
        }
    }
}

/// Whether a finding stands, given the helpers its crate covers.
fn stands(finding: &Finding, covered: &HashSet<String>) -> bool {
    match &finding.requires {
        Some(Requirement::SomeCallerDoesNotBind { helper }) => !covered.contains(helper),
        None => true,
    }
}

/// A discovered project: its files, and the workspace model of its Rust crates.
#[derive(Debug)]
pub struct Project {
    pub session: Session,
    pub model: Model,
}

/// Finds what the paths hold ([`discover`](mod@crate::discover)), reading the Rust files while
/// `cargo metadata` answers, and places each Rust file in the workspace model.
pub fn discover(paths: &[PathBuf], options: &Options) -> Result<Project, DiscoverError> {
    let started = discover::start(paths, options)?;
    let prescans = in_pool(|| rust::workspace::prescan(&started));
    let mut session = started.finish()?;
    let model = rust::workspace::place(&mut session, prescans);
    Ok(Project { session, model })
}

/// What every file's lint reads: the project, and what the Python files' first pass found.
#[derive(Debug)]
struct Run {
    session: Session,
    model: Model,
    /// What the Python files define for each other.
    python: python::Project,
    /// The findings of the Python files that the first pass settled (see
    /// [`python::Project::confirm`]); the others are checked again.
    settled: HashMap<PathBuf, python_files::Settled>,
}

impl Run {
    fn new(project: Project) -> Run {
        let (python, settled) = python_files::first_pass_over(&project.session);
        Run {
            session: project.session,
            model: project.model,
            python,
            settled,
        }
    }
}

/// Lints the files of a project in parallel, calling `on_file` as each is done.
pub fn lint(project: Project, on_file: &(dyn Fn() + Sync)) -> Outcome {
    let units = project.session.files.clone();
    let run = in_pool(|| Run::new(project));
    lint_units(run, units, &lint_unit, on_file)
}

/// Runs `work` on the linter's threads: each has [`STACK_SIZE`] of stack, and every pass runs
/// on the same threads, so that memory one pass frees is reused by the next rather than kept
/// by another thread's allocator arena. Without such a pool (a system that refuses big stacks),
/// `work` runs on rayon's global pool, and each file's walk grows its own stack.
fn in_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static POOL: std::sync::LazyLock<Option<rayon::ThreadPool>> = std::sync::LazyLock::new(|| {
        rayon::ThreadPoolBuilder::new()
            .stack_size(STACK_SIZE)
            .thread_name(|index| format!("placement-lint-{index}"))
            .build()
            .ok()
    });
    match &*POOL {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// What the Rust walk needs of a file, its crate and its configuration; `calls_to` as
/// [`FileContext::calls_to`].
fn rust_context<'a>(
    run: &'a Run,
    unit: &'a FileUnit,
    calls_to: Option<&'a NameSet>,
) -> FileContext<'a> {
    let config = run.session.config(unit);
    FileContext {
        api: &config.api,
        model: &run.model,
        crate_id: unit
            .crate_id
            .expect("discovery gives every Rust file its crate"),
        krate: &run.session.packages[unit.package].krate,
        crate_name: &unit.crate_name,
        role: unit.role,
        module: unit.module.clone(),
        entry_points: &config.entry_points,
        calls_to,
    }
}

/// What linting one file gave.
#[derive(Debug, Default)]
struct UnitResult {
    /// The file with its diagnostics, when it has any.
    file: Option<LintedFile>,
    warnings: Vec<String>,
    /// Its functions that choose a device for their callers, whatever their findings' levels.
    choosers: ChooserLabels,
}

fn lint_units(
    run: Run,
    units: Vec<FileUnit>,
    lint_one: &(dyn Fn(&Run, FileUnit) -> UnitResult + Sync),
    on_file: &(dyn Fn() + Sync),
) -> Outcome {
    capture_panics();
    let files_linted = units.len();
    let lint_all = || {
        units
            .into_par_iter()
            .map(|unit| {
                let key = FileKey::of(&unit);
                let result = linting(|| lint_one(&run, unit.clone()))
                    .map(|result| (key, result))
                    .map_err(|message| Box::new(InternalError { unit, message }));
                on_file();
                result
            })
            .collect::<Vec<_>>()
    };
    let results = in_pool(lint_all);
    let mut warnings = run.session.warnings.clone();
    let mut files = Vec::new();
    let mut choosers = BTreeMap::new();
    let mut internal_errors = Vec::new();
    for result in results {
        match result {
            Ok((key, result)) => {
                warnings.extend(result.warnings);
                files.extend(result.file);
                if !result.choosers.is_empty() {
                    choosers.insert(key, result.choosers);
                }
            }
            Err(error) => internal_errors.push(*error),
        }
    }
    decide_choosers(&run, &mut files, choosers);
    decide_requirements(&run, &mut files);
    Outcome {
        session: run.session,
        files,
        files_linted,
        baselined: 0,
        warnings,
        internal_errors,
    }
}

/// Findings that depend on the rest of their crate (uses of the current context in private
/// helpers), decided now that every file is linted: the crate's files that mention such a
/// helper are walked again, recording each call of it, and a helper whose every caller made a
/// context current first has its findings dropped.
fn decide_requirements(run: &Run, files: &mut Vec<LintedFile>) {
    let mut helpers: HashMap<CrateId, NameSet> = HashMap::new();
    for file in files.iter() {
        let required = required_helpers(file.diagnostics.iter().map(|d| &d.finding));
        if let Some(crate_id) = file.unit.crate_id
            && !required.is_empty()
        {
            let names = helpers.entry(crate_id).or_default();
            for finding in file.diagnostics.iter().map(|d| &d.finding) {
                if let Some(Requirement::SomeCallerDoesNotBind { helper }) = &finding.requires {
                    names.insert(helper);
                }
            }
        }
    }
    if helpers.is_empty() {
        return;
    }
    let covered: HashMap<CrateId, HashSet<String>> = helpers
        .iter()
        .map(|(crate_id, names)| {
            let calls: Vec<CallFact> = run
                .session
                .files
                .par_iter()
                .filter(|unit| unit.crate_id == Some(*crate_id))
                .flat_map_iter(|unit| calls_in(run, unit, names))
                .collect();
            (*crate_id, covered_helpers(&calls))
        })
        .collect();
    let none = HashSet::new();
    for file in files.iter_mut() {
        let covered = file
            .unit
            .crate_id
            .and_then(|crate_id| covered.get(&crate_id))
            .unwrap_or(&none);
        file.diagnostics
            .retain(|diagnostic| stands(&diagnostic.finding, covered));
    }
    files.retain(|file| !file.diagnostics.is_empty());
}

/// Whether `text` has one of `names` as a word: a file that names none of the functions the
/// crate asks about cannot call them.
fn mentions(text: &str, names: &NameSet) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| names.contains(word))
}

/// The calls of `names` in a file (none when its text mentions none of them).
fn calls_in(run: &Run, unit: &FileUnit, names: &NameSet) -> Vec<CallFact> {
    let Ok(text) = std::fs::read_to_string(&unit.path) else {
        return Vec::new();
    };
    if !mentions(&text, names) {
        return Vec::new();
    }
    let cx = rust_context(run, unit, Some(names));
    linting(|| lint_source(&text, Nesting::Unchecked, &cx).calls).unwrap_or_default()
}

thread_local! {
    /// Inside [`linting`]: where the last panic happened, recorded by the panic hook.
    static PANIC: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Installs, once, a panic hook that records where a panic inside [`linting`] happened instead
/// of printing it, and leaves every other panic to the hook that was there.
fn capture_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let captured = PANIC.with(|slot| {
                let mut slot = slot.borrow_mut();
                match slot.as_mut() {
                    Some(location) => {
                        *location = info.location().map(ToString::to_string);
                        true
                    }
                    None => false,
                }
            });
            if !captured {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into its message and location.
fn linting<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    PANIC.with(|slot| *slot.borrow_mut() = Some(None));
    let result = catch_unwind(AssertUnwindSafe(f));
    let location = PANIC.with(|slot| slot.borrow_mut().take()).flatten();
    result.map_err(|payload| {
        // A panic leaves the thread's span map as it was: start it afresh.
        proc_macro2::extra::invalidate_current_thread_spans();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        match location {
            Some(location) => format!("panicked at {location}: {message}"),
            None => format!("panicked: {message}"),
        }
    })
}

/// Reads and lints one file. A file over the size limit or not valid UTF-8 gets a
/// `parse_error` finding and is not linted.
fn lint_unit(run: &Run, unit: FileUnit) -> UnitResult {
    if let Some(settled) = run.settled.get(&unit.path)
        && settled.findings.is_empty()
        && !settled.allows
    {
        return UnitResult::default();
    }
    let config = run.session.config(&unit);
    let limit = config.max_file_size.0;
    let too_big = std::fs::metadata(&unit.path)
        .ok()
        .map(|meta| meta.len())
        .filter(|&len| len > limit);
    if let Some(len) = too_big {
        let finding = rules::unlinted(Unparsed {
            span: 0..0,
            message: format!(
                "file is too large to lint ({}, over the limit of {})",
                bytesize::ByteSize(len).display().iec(),
                bytesize::ByteSize(limit).display().iec()
            ),
            label: "not linted".to_owned(),
            help: "raise `max_file_size` in placement.toml if it is hand-written, or exclude \
                   it if it is generated"
                .to_owned(),
        });
        return finish(run, config, unit, String::new(), vec![finding]);
    }
    let bytes = match std::fs::read(&unit.path) {
        Ok(bytes) => bytes,
        Err(err) => {
            let warning = format!("cannot read {}: {err}; skipped", unit.relative);
            return UnitResult {
                warnings: vec![warning],
                ..UnitResult::default()
            };
        }
    };
    let (text, findings) = match source::decode(bytes) {
        Ok(text) if unit.language == Language::Python => {
            let findings = match run.settled.get(&unit.path) {
                Some(settled) => settled.findings.clone(),
                None => {
                    python_files::lint(&text, &python_files::context(&unit, config, &run.python))
                }
            };
            (text, findings)
        }
        Ok(text) => {
            let nesting = match unit.prescanned {
                true => Nesting::Checked,
                false => Nesting::Unchecked,
            };
            return lint_rust(run, unit, text, nesting, &config.api);
        }
        Err((shown, unparsed)) => (shown, vec![rules::unlinted(unparsed)]),
    };
    finish(run, config, unit, text, findings)
}

/// Applies suppressions and levels to a file's findings.
fn finish(
    run: &Run,
    config: &Config,
    unit: FileUnit,
    text: String,
    findings: Vec<Finding>,
) -> UnitResult {
    let suppressions = match unit.language {
        Language::Rust => Suppressions::parse(&text),
        Language::Python => Suppressions::parse_python(&text),
    };
    let warnings = suppressions
        .unknown
        .iter()
        .map(|(line, name)| {
            format!(
                "unknown rule `{name}` in a `placement: allow` comment at {}:{}",
                unit.relative,
                line + 1
            )
        })
        .collect();
    if findings.is_empty() {
        return UnitResult {
            warnings,
            ..UnitResult::default()
        };
    }
    let package = &run.session.packages[unit.package];
    let lines = LineIndex::new(&text);
    let mut diagnostics: Vec<Diagnostic> = findings
        .into_iter()
        .filter(|finding| !suppressions.allows(finding.rule.name, finding.span.start, &lines))
        .map(|finding| {
            let level = config.level(finding.rule, &package.name);
            Diagnostic { finding, level }
        })
        .filter(|diagnostic| diagnostic.level != Level::Allow)
        .collect();
    if diagnostics.is_empty() {
        return UnitResult {
            warnings,
            ..UnitResult::default()
        };
    }
    diagnostics.sort_by(|a, b| {
        (a.finding.span.start, a.finding.rule.name)
            .cmp(&(b.finding.span.start, b.finding.rule.name))
    });
    diagnostics.dedup_by(|a, b| a.finding == b.finding);
    UnitResult {
        file: Some(LintedFile {
            unit,
            text,
            lines,
            diagnostics,
        }),
        warnings,
        choosers: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Options;

    /// A panic while linting one file is that file's internal error; the others are linted.
    #[test]
    fn a_panic_in_one_file_is_reported_and_the_rest_linted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.rs", "b.rs", "c.rs"] {
            std::fs::write(
                dir.path().join(name),
                "pub fn f() -> tch::Device { tch::Device::Cuda(1) }\n",
            )
            .unwrap();
        }
        let project = discover(&[dir.path().to_path_buf()], &Options::default()).unwrap();
        let units = project.session.files.clone();
        let lint_one = |run: &Run, unit: FileUnit| {
            if unit.relative == "b.rs" {
                panic!("a bug of ours");
            }
            lint_unit(run, unit)
        };
        let outcome = lint_units(Run::new(project), units, &lint_one, &|| {});
        let linted: Vec<&str> = outcome
            .files
            .iter()
            .map(|file| file.unit.relative.as_str())
            .collect();
        assert_eq!(linted, ["a.rs", "c.rs"]);
        assert_eq!(outcome.internal_errors.len(), 1);
        let error = &outcome.internal_errors[0];
        assert_eq!(error.unit.relative, "b.rs");
        assert!(
            error.message.contains("a bug of ours") && error.message.contains("mod.rs:"),
            "{}",
            error.message
        );
        assert!(error.describe().contains("please report it"));
        assert_eq!(outcome.exit_code(), 2);
    }

    #[test]
    fn deep_nesting_lints_or_is_reported_never_overflows() {
        let api = crate::api::Api::new(Default::default()).unwrap();
        let krate = crate::discover::CrateContext::default();
        let gpu = "tch::Device::Cuda(1)";
        let cases = [
            format!(
                "pub fn f() {{{}{gpu};{}}}",
                "{".repeat(450),
                "}".repeat(450)
            ),
            format!(
                "pub fn f() {{ let _ = {}{gpu}{}; }}",
                "(".repeat(1_024),
                ")".repeat(1_024)
            ),
            format!("pub fn f() {{ {gpu}{}; }}", ".clone()".repeat(5_000)),
        ];
        let lint = |text: &str| {
            let model = crate::rust::model::Model::single_file(text, "deep", &krate);
            let cx = FileContext {
                api: &api,
                model: &model,
                crate_id: 0,
                krate: &krate,
                crate_name: "deep",
                role: FileRole::Library,
                module: Vec::new(),
                entry_points: &[],
                calls_to: None,
            };
            lint_text(text, &cx)
        };
        for case in &cases {
            let findings = lint(case);
            assert!(
                findings.iter().any(|f| f.rule.name == "hardcoded_device"),
                "{findings:?}"
            );
        }
        let deeper = format!(
            "pub fn f() {{{}{}}}",
            "{".repeat(100_000),
            "}".repeat(100_000)
        );
        let findings = lint(&deeper);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].rule.name, "parse_error");
        assert_eq!(findings[0].message, "nesting too deep to lint");
    }
}
