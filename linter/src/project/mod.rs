//! The driver: lints the files of a discovered session in parallel, each on its own (a file
//! that cannot be linted, or a bug of ours that panics on one, is reported and the others are
//! still linted), decides what the files tell each other in one [`fixed_point`] for both
//! languages (the Python files' choosers, imports and programs; the Rust files' device
//! choosers) and the requirements on callers, before levels and suppressions ([`suppress`]) are
//! applied last, and keys each finding for baselines ([`locate`]).

pub mod fixed_point;
mod kept;
pub use kept::{Kept, NotLinted};
pub mod locate;
pub mod python_files;
pub mod rust_files;
pub mod suppress;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use crate::api::Chooser;
use crate::config::Config;
use crate::diagnostic::{Finding, Level, Rule};
use crate::discover::{self, DiscoverError, FileUnit, Options, Session};
use crate::notebook::Cells;
use crate::python;
use crate::rules;
use crate::rust;
use crate::rust::model::Model;
use crate::rust::parse::Nesting;
use crate::source::{self, Language, LineIndex, STACK_SIZE, Unparsed};
use fixed_point::{FileKey, fixed_point};
pub use rust_files::lint_text;
use rust_files::{ChooserLabels, Choosers, decide_requirements, lint_rust, relint_callers};
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
    /// Where a notebook's cells start in `text`, its code cells joined.
    pub cells: Option<Cells>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Where a byte of a file is, as a person reads it: a 1-based line and column, counted in a
/// notebook's cell when the file is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The notebook's 1-based cell holding the place.
    pub cell: Option<usize>,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Place {
    /// `12:5`, or `cell 4:1:5` in a notebook, as ruff writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(cell) = self.cell {
            write!(f, "cell {cell}:")?;
        }
        write!(f, "{}:{}", self.line, self.column)
    }
}

impl LintedFile {
    /// Where byte `offset` of the file's text is: in its cell, for a notebook.
    pub fn place(&self, offset: usize) -> Place {
        let (line, column) = self.lines.position(&self.text, offset);
        match &self.cells {
            Some(cells) => {
                let (cell, inside) = cells.locate(line - 1);
                Place {
                    cell: Some(cell),
                    line: inside + 1,
                    column,
                }
            }
            None => Place {
                cell: None,
                line,
                column,
            },
        }
    }

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
    pub session: Arc<Session>,
    /// Files with diagnostics, in path order.
    pub files: Vec<LintedFile>,
    pub files_linted: usize,
    /// Findings dropped because a baseline accepts them.
    pub baselined: usize,
    /// Problems of the run itself (unknown rule names, unreadable files), for stderr.
    pub warnings: Vec<String>,
    /// Files that a bug of ours stopped.
    pub internal_errors: Vec<InternalError>,
    /// Why each Python file that is a program's as a whole is one (`path: why`), for
    /// `--verbose`.
    pub programs: Vec<String>,
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

/// What every file's lint reads: the project, and the Python files' findings as the fixed point
/// decided them.
#[derive(Debug)]
struct Run {
    session: Arc<Session>,
    model: Model,
    /// What the Python files define for each other, as the fixed point last decided it: for a
    /// Python file the fixed point could not read, checked when it is linted.
    python: python::Project,
    /// The findings of the Python files, decided in [`python_files::decide`].
    settled: HashMap<PathBuf, python_files::Settled>,
    /// What the Python files told each other, to decide again when one changes ([`Kept`]).
    told: python_files::Told,
}

impl Run {
    fn new(project: Project) -> Run {
        capture_panics();
        let (python, settled, told) = python_files::decide(&project.session);
        Run {
            session: Arc::new(project.session),
            model: project.model,
            python,
            settled,
            told,
        }
    }
}

/// Lints the files of a project in parallel, calling `on_file` as each is done.
pub fn lint(project: Project, on_file: &(dyn Fn() + Sync)) -> Outcome {
    lint_and_keep(project, on_file).0
}

/// Lints the files of a project as [`lint`] does, and keeps what the files told each other, to
/// lint one of them again as an editor changes it ([`Kept`]).
pub fn lint_and_keep(project: Project, on_file: &(dyn Fn() + Sync)) -> (Outcome, Kept) {
    let units = project.session.files.clone();
    let run = in_pool(|| Run::new(project));
    let (outcome, choosers) = lint_units(&run, units, &lint_unit, on_file);
    (outcome, Kept::new(run, choosers))
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

/// Files over this size are linted a few at a time, beside the others: a syntax tree takes about
/// 25 times its file's size, so that bindings generated for C libraries (cudarc's are 1-2 MB
/// each, and there are a dozen) parsed side by side would be most of a run's peak memory.
const BIG_FILE: u64 = 64 << 10;

/// Maps `f` over the files in parallel, in their order, with at most one big file (over
/// [`BIG_FILE`]) for every four threads in flight at once: on two cores, whole runs over candle,
/// burn, tch-rs and cudarc peaked at 115-121 MiB so, against 141-146 MiB with every file alike,
/// in the same wall time (with 128 KiB or 256 KiB as the bound, within the same spread).
///
/// `size` gives what a file weighs here (its size on disk, or nothing for a file whose work is
/// done).
fn big_files_apart<T: Send>(
    units: Vec<FileUnit>,
    size: impl Fn(&FileUnit) -> u64,
    f: impl Fn(FileUnit) -> T + Sync,
) -> Vec<T> {
    let (mut big, small): (Vec<_>, Vec<_>) = units
        .into_iter()
        .enumerate()
        .map(|(at, unit)| (size(&unit), at, unit))
        .partition(|(size, ..)| *size > BIG_FILE);
    // The biggest first, each to the lane with the fewest bytes so far.
    big.sort_by_key(|(size, at, _)| (std::cmp::Reverse(*size), *at));
    let mut lanes: Vec<(u64, Vec<(usize, FileUnit)>)> = (0..rayon::current_num_threads()
        .div_ceil(4))
        .map(|_| (0, Vec::new()))
        .collect();
    for (size, at, unit) in big {
        if let Some(lane) = lanes.iter_mut().min_by_key(|(bytes, _)| *bytes) {
            lane.0 += size;
            lane.1.push((at, unit));
        }
    }
    let f = &f;
    let (mut done, rest) = rayon::join(
        || {
            lanes
                .into_par_iter()
                .flat_map_iter(|(_, lane)| lane.into_iter().map(|(at, unit)| (at, f(unit))))
                .collect::<Vec<_>>()
        },
        || {
            small
                .into_par_iter()
                .map(|(_, at, unit)| (at, f(unit)))
                .collect::<Vec<_>>()
        },
    );
    done.extend(rest);
    done.sort_unstable_by_key(|(at, _)| *at);
    done.into_iter().map(|(_, result)| result).collect()
}

fn size_on_disk(unit: &FileUnit) -> u64 {
    std::fs::metadata(&unit.path).map_or(0, |meta| meta.len())
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

/// The outcome of linting `units`, and the device choosers the Rust files told each other.
fn lint_units(
    run: &Run,
    units: Vec<FileUnit>,
    lint_one: &(dyn Fn(&Run, FileUnit) -> UnitResult + Sync),
    on_file: &(dyn Fn() + Sync),
) -> (Outcome, HashMap<Chooser, String>) {
    capture_panics();
    let files_linted = units.len();
    let lint = |unit: FileUnit| {
        let key = FileKey::of(&unit);
        let result = linting(|| lint_one(run, unit.clone()))
            .map(|result| (key, result))
            .map_err(|message| Box::new(InternalError { unit, message }));
        on_file();
        result
    };
    let mut programs: Vec<String> = units
        .iter()
        .filter_map(|unit| {
            let why = run.settled.get(&unit.path)?.program.as_ref()?;
            Some(format!("{}: {why}", unit.relative))
        })
        .collect();
    programs.sort();
    // A Python file the fixed point settled is only worded here.
    let size = |unit: &FileUnit| match run.settled.contains_key(&unit.path) {
        true => 0,
        false => size_on_disk(unit),
    };
    let results = in_pool(|| big_files_apart(units, size, lint));
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
    let again = |known: &HashMap<_, _>| relint_callers(run, known);
    let choosers = fixed_point(&Choosers(again), &mut choosers, |key, file| {
        files.retain(|linted| FileKey::of(&linted.unit) != *key);
        files.extend(file);
    });
    files.sort_by(|a, b| a.unit.relative.cmp(&b.unit.relative));
    decide_requirements(run, &mut files);
    let outcome = Outcome {
        session: run.session.clone(),
        files,
        files_linted,
        baselined: 0,
        warnings,
        internal_errors,
        programs,
    };
    (outcome, choosers.unwrap_or_default())
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
    let bytes = match read_unit(&unit, limit) {
        Ok(source::Read::Bytes(bytes)) => bytes,
        Ok(source::Read::TooBig(len)) => {
            let finding = rules::unlinted(too_big(len, limit));
            return finish(run, config, unit, String::new(), None, vec![finding]);
        }
        // A file that cannot be read is not linted, and the run says so as it says of a file that
        // cannot be parsed: a strict run fails.
        Err(err) => {
            let finding = rules::unlinted(Unparsed {
                span: 0..0,
                message: format!("cannot read the file: {}", source::io_reason(&err)),
                label: "not read".to_owned(),
                help: "check that the file exists and can be read, or exclude it".to_owned(),
            });
            return finish(run, config, unit, String::new(), None, vec![finding]);
        }
    };
    if unit.language == Language::Python {
        let (text, cells, findings) = match python_files::text(&unit, bytes, limit) {
            Ok(python) => {
                let findings = match run.settled.get(&unit.path) {
                    Some(settled) => settled.findings.clone(),
                    None => {
                        let package = &run.session.packages[unit.package].name;
                        let in_package = (unit.path.parent()).is_some_and(discover::is_package);
                        let cx =
                            python_files::context(&unit, config, &run.python, package, in_package);
                        let mut findings = python_files::lint(python.linted(), &cx);
                        python_files::keep_standing(&mut findings, &run.python, &run.python.fed());
                        findings
                    }
                };
                (python.text, python.cells, findings)
            }
            Err((shown, unparsed)) => (shown, None, vec![rules::unlinted(unparsed)]),
        };
        return finish(run, config, unit, text, cells, findings);
    }
    match source::decode(bytes, unit.language) {
        Ok(text) => {
            let nesting = match unit.prescanned {
                true => Nesting::Checked,
                false => Nesting::Unchecked,
            };
            lint_rust(run, unit, text, nesting, &config.api)
        }
        Err((shown, unparsed)) => finish(
            run,
            config,
            unit,
            shown,
            None,
            vec![rules::unlinted(unparsed)],
        ),
    }
}

/// Reads a file to lint unless it is over `limit` bytes. A notebook is read whatever its size:
/// its outputs (images, tables) are skipped as it is read, and the limit is its code's.
fn read_unit(unit: &FileUnit, limit: u64) -> std::io::Result<source::Read> {
    let limit = if unit.is_notebook() { u64::MAX } else { limit };
    source::read_within(&unit.path, limit)
}

/// What a file over the size limit is told: it is `len` bytes long.
fn too_big(len: u64, limit: u64) -> Unparsed {
    Unparsed {
        span: 0..0,
        message: format!(
            "file is too large to lint ({}, over the limit of {})",
            bytesize::ByteSize(len).display().iec(),
            bytesize::ByteSize(limit).display().iec()
        ),
        label: "not linted".to_owned(),
        help: "raise `max_file_size` in placement.toml if it is hand-written, or exclude it if it \
               is generated"
            .to_owned(),
    }
}

/// Applies suppressions and levels to a file's findings.
fn finish(
    run: &Run,
    config: &Config,
    unit: FileUnit,
    text: String,
    cells: Option<Cells>,
    findings: Vec<Finding>,
) -> UnitResult {
    let suppressions = match unit.language {
        Language::Rust => Suppressions::parse(&text),
        Language::Python => Suppressions::parse_python(&text, cells.as_ref()),
    };
    let warnings = suppressions
        .unknown
        .iter()
        .map(|(line, name)| {
            format!(
                "{} `{name}` in a `placement: allow` comment at {}:{}",
                crate::config::UNKNOWN_RULE,
                unit.relative,
                line + 1
            )
        })
        .collect();
    if findings.is_empty() && suppressions.is_empty() {
        return UnitResult {
            warnings,
            ..UnitResult::default()
        };
    }
    let package = &run.session.packages[unit.package];
    let root = &run.session.workspaces[package.workspace].root;
    let inside = unit.path.strip_prefix(root).unwrap_or(&unit.path);
    let lines = LineIndex::new(&text);
    let enabled = |rule: &'static Rule| config.level(rule, &package.name) != Level::Allow;
    let mut diagnostics: Vec<Diagnostic> = suppressions
        .apply(findings, &lines, enabled)
        .into_iter()
        .filter(|finding| !config.ignores(inside, finding.rule.name))
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
    // One rule says one thing at one place: a device chooser's call that is also the GPU of a
    // fallback written by hand (`if let Ok(d) = pick()`) is one implicit choice, not two.
    diagnostics.dedup_by(|a, b| {
        a.finding.rule.name == b.finding.rule.name && a.finding.span == b.finding.span
    });
    UnitResult {
        file: Some(LintedFile {
            unit,
            text,
            lines,
            cells,
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
    use crate::rust::resolve::FileContext;
    use crate::source::FileRole;

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
        let (outcome, _) = lint_units(&Run::new(project), units, &lint_one, &|| {});
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

    /// Big files are linted a few at a time, beside the others, and the results keep the
    /// files' order.
    #[test]
    fn big_files_are_linted_a_few_at_a_time_in_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let units: Vec<FileUnit> = (0..40)
            .map(|at| {
                let path = dir.path().join(format!("f{at}.rs"));
                let size = if at % 3 == 0 {
                    BIG_FILE as usize + 1
                } else {
                    10
                };
                std::fs::write(&path, " ".repeat(size)).unwrap();
                FileUnit::unplaced_rust(path, format!("f{at}.rs"), 0)
            })
            .collect();
        let (in_flight, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(8)
            .build()
            .unwrap();
        let names = pool.install(|| {
            big_files_apart(units, size_on_disk, |unit| {
                let big = std::fs::metadata(&unit.path).unwrap().len() > BIG_FILE;
                if big {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                }
                unit.relative
            })
        });
        let expected: Vec<String> = (0..40).map(|at| format!("f{at}.rs")).collect();
        assert_eq!(names, expected);
        // Eight threads: two big files at most at once.
        assert!(most.load(Ordering::SeqCst) <= 2, "{most:?}");
        assert!(most.load(Ordering::SeqCst) >= 1);
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
                model_code: false,
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
