//! How the driver lints Rust files: each file is walked with its crate's model and its
//! configuration's API tables; the device choosers the walks find are followed into the library
//! files that can call them, in the project's [`fixed_point`]; and findings that depend on a
//! private helper's callers (the requirements) are decided from the calls of its crate.

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;

use crate::analysis::{CallFact, ChooserFact, Event};
use crate::api::{Api, Chooser, NameSet};
use crate::diagnostic::{Finding, Level, Requirement};
use crate::discover::FileUnit;
use crate::rules;
use crate::rust::parse::{self, Nesting, NoTree};
use crate::rust::resolve::{self, FileContext};
use crate::rust::skeleton;
use crate::source::{CrateId, FileRole, Language, LineIndex};

use super::fixed_point::{Exchange, FileKey, fixed_point};
use super::{LintedFile, Run, UnitResult, finish, linting};

/// Lints one file's text: checks, parses, resolves and applies the rules. Offsets of the
/// findings are in `text`, whatever its byte order mark or `#!` line. Runs on a stack big
/// enough for [`source::NESTING_BUDGET`], growing the caller's when it is smaller.
/// The text is linted as a crate of its own: requirements on callers are decided by its own
/// calls.
pub fn lint_text(text: &str, cx: &FileContext<'_>) -> Vec<Finding> {
    let lines = LineIndex::new(text);
    let labels = |walked: &Walked| {
        chooser_labels(&walked.choosers, |offset| {
            format!("line {}", lines.line_of(offset) + 1)
        })
    };
    // Its device choosers are followed into the functions of the same text that return what
    // they chose.
    let again = |known: &HashMap<Chooser, String>| {
        let api = cx.api.with_choosers(known);
        let cx = FileContext {
            api: &api,
            module: cx.module.clone(),
            ..*cx
        };
        let walked = lint_source(text, Nesting::Unchecked, &cx);
        let labels = labels(&walked);
        vec![(FileKey::default(), walked, labels)]
    };
    let mut walked = lint_source(text, Nesting::Unchecked, cx);
    let mut facts = BTreeMap::from([(FileKey::default(), labels(&walked))]);
    fixed_point(&Choosers(again), &mut facts, |_, relinted| {
        walked = relinted
    });
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

/// Each chooser of `facts` with the label of findings at its calls; `place` words where an
/// offset of the facts' file is.
fn chooser_labels(facts: &[ChooserFact], place: impl Fn(usize) -> String) -> ChooserLabels {
    facts
        .iter()
        .map(|fact| {
            let label = match fact.chooser.opens {
                Some(_) => format!("{} ({})", fact.choice, place(fact.offset)),
                None => format!(
                    "returns a device it chose itself: {} ({})",
                    fact.choice,
                    place(fact.offset)
                ),
            };
            (fact.chooser.clone(), label)
        })
        .collect()
}

/// Device choosers, each with the label of findings at its calls, in the order their files
/// and choices come.
pub(super) type ChooserLabels = Vec<(Chooser, String)>;

/// The device choosers that `facts` add to `known`, with those of `known` (each with the
/// label of its first finding, in the order the files and choices come); `None` when they add
/// none.
fn more_choosers(
    facts: &BTreeMap<FileKey, ChooserLabels>,
    known: Option<&HashMap<Chooser, String>>,
) -> Option<HashMap<Chooser, String>> {
    let mut all = known.cloned().unwrap_or_default();
    let before = all.len();
    for (chooser, label) in facts.values().flatten() {
        all.entry(chooser.clone()).or_insert_with(|| label.clone());
    }
    (all.len() > before).then_some(all)
}

/// Rust's device choosers, exchanged between the files that define them and the files that
/// call them: a function that returns a device it chose itself to callers who pass none becomes
/// an API entry that chooses the device implicitly, and the files that may call it are linted
/// again (with `F`) with those entries, which flags its calls outside entry points.
pub(super) struct Choosers<F>(pub(super) F);

impl<L, F> Exchange for Choosers<F>
where
    F: Fn(&HashMap<Chooser, String>) -> Vec<(FileKey, L, ChooserLabels)>,
{
    type Facts = ChooserLabels;
    type Known = HashMap<Chooser, String>;
    type Linted = L;

    fn decide(
        &self,
        facts: &BTreeMap<FileKey, ChooserLabels>,
        known: Option<&HashMap<Chooser, String>>,
    ) -> Option<HashMap<Chooser, String>> {
        more_choosers(facts, known)
    }

    fn tells_more(&self, old: &ChooserLabels, new: &ChooserLabels) -> bool {
        old != new
    }

    fn relint(
        &self,
        known: &HashMap<Chooser, String>,
        _: &BTreeMap<FileKey, ChooserLabels>,
    ) -> Vec<(FileKey, L, ChooserLabels)> {
        (self.0)(known)
    }
}

/// The library files of a run that can call one of `choosers` and mention it, linted again
/// with them.
pub(super) fn relint_callers(
    run: &Run,
    choosers: &HashMap<Chooser, String>,
) -> Vec<(FileKey, Option<LintedFile>, ChooserLabels)> {
    // The names of each crate's choosers: a file is linted again when it mentions one of a
    // crate it can name (a name as common as `device` is only looked for there). A type's
    // associated function is called through its type (`CudaDevice::new(0)`, `Self::new(0)` in
    // its `impl`), so the type's name is what a caller mentions: `new` and `from` are in most
    // files.
    let mut names: HashMap<CrateId, NameSet> = HashMap::new();
    for chooser in choosers.keys() {
        let mut segments = chooser.path.rsplit("::");
        let name = segments.next().unwrap_or_default();
        let owner = segments
            .next()
            .filter(|owner| owner.starts_with(char::is_uppercase));
        names
            .entry(chooser.krate)
            .or_default()
            .insert(owner.unwrap_or(name));
    }
    let nameable = |unit: &FileUnit| -> Vec<&NameSet> {
        match (unit.role, unit.crate_id) {
            (FileRole::Library, Some(crate_id)) => (names.iter())
                .filter(|(krate, _)| run.model.can_name(crate_id, **krate))
                .map(|(_, names)| names)
                .collect(),
            _ => Vec::new(),
        }
    };
    let callers = |unit: &FileUnit| !nameable(unit).is_empty();
    // One extended API per configuration (a configuration is shared by its packages).
    let mut apis: HashMap<usize, Api> = HashMap::new();
    for unit in run.session.files.iter().filter(|unit| callers(unit)) {
        let config = run.session.config(unit);
        apis.entry(std::ptr::from_ref(config).addr())
            .or_insert_with(|| config.api.with_choosers(choosers));
    }
    run.session
        .files
        .par_iter()
        .filter(|unit| callers(unit))
        .filter_map(|unit| {
            let text = std::fs::read_to_string(&unit.path).ok()?;
            if !nameable(unit).iter().any(|names| mentions(&text, names)) {
                return None;
            }
            let api = &apis[&std::ptr::from_ref(run.session.config(unit)).addr()];
            let lint = || lint_rust(run, unit.clone(), text, Nesting::Unchecked, api);
            let result = linting(lint).ok()?;
            Some((FileKey::of(unit), result.file, result.choosers))
        })
        .collect()
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

/// Walks a Rust file: its findings, and what it tells the rest of its crate. A big file is
/// walked from its skeleton, one function's body parsed at a time ([`skeleton`]), where model
/// code is not looked at.
fn lint_source(text: &str, nesting: Nesting, cx: &FileContext<'_>) -> Walked {
    if text.len() > skeleton::SKELETON_FILE && !cx.model_code {
        let events = parse::with_skeleton(text, nesting, |file, bodies| {
            resolve::walk_skeleton(file, bodies, text, cx)
        });
        if let Some(events) = events {
            return word(events);
        }
    }
    parse::with_syntax_tree(text, nesting, |tree| match tree {
        Ok(file) => word(resolve::walk(file, text, cx)),
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

/// The findings of a file's events, and what they tell the rest of its crate.
fn word(events: Vec<Event<'_>>) -> Walked {
    let mut walked = Walked::default();
    for event in events {
        let first = walked.findings.len();
        walked
            .findings
            .extend(rules::check_event(&event, Language::Rust));
        // The choice's own finding words it (`hardcoded_device`, `implicit_device`); a
        // GPU opened from a parameter has none.
        if let Some(chooser) = event.chooser() {
            let choice = match (walked.findings.get(first), &chooser.opens) {
                (_, Some((at, _))) => match &event {
                    Event::Api { use_, .. } => Some((
                        format!("opens the GPU its argument {} names", at + 1),
                        use_.span.start,
                    )),
                    _ => None,
                },
                (Some(finding), None) => Some((finding.message.clone(), finding.span.start)),
                (None, None) => None,
            };
            if let Some((choice, offset)) = choice {
                walked.choosers.push(ChooserFact {
                    chooser: chooser.clone(),
                    choice,
                    offset,
                });
            }
        }
        if let Event::Call(call) = event {
            walked.calls.push(call);
        }
    }
    walked
}

/// Lints a Rust file's text with `api`: its findings with their levels, and its choosers.
pub(super) fn lint_rust(
    run: &Run,
    unit: FileUnit,
    text: String,
    nesting: Nesting,
    api: &Api,
) -> UnitResult {
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
        ..finish(
            run,
            run.session.config(&unit),
            unit,
            text,
            None,
            walked.findings,
        )
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
        // A Python finding's condition; none on Rust's.
        Some(Requirement::ModuleClass { .. } | Requirement::Fed { .. }) | None => true,
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
        model_code: rules::find("unplaced_tensor").is_some_and(|rule| {
            config.level(rule, &run.session.packages[unit.package].name) != Level::Allow
        }),
    }
}

/// Findings that depend on the rest of their crate (uses of the current context in private
/// helpers), decided now that every file is linted: the crate's files that mention such a
/// helper are walked again, recording each call of it, and a helper whose every caller made a
/// context current first has its findings dropped.
pub(super) fn decide_requirements(run: &Run, files: &mut Vec<LintedFile>) {
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
