//! Fixtures beside each rule (`rules/fixtures/<rule>/{fail,pass}.{rs,py}`): the failing file's
//! rendered findings of the rule are pinned as a snapshot, and the passing file must have none.
//!
//! Its `placement: allow` comments apply, with every rule on.
//!
//! A fixture is linted as library code (for Python, a module of a package) unless its first
//! line says `// role: entry-file` or `// role: binary-root` (`# role: ...` in Python).

use std::path::PathBuf;

use crate::diagnostic::{Level, Rule};
use crate::discover::CrateContext;
use crate::discover::FileUnit;
use crate::project::suppress::Suppressions;
use crate::project::{Diagnostic, LintedFile};
use crate::report::human;
use crate::report::human::Style;
use crate::rust::resolve::FileContext;
use crate::source::FileRole;
use crate::source::LineIndex;

fn lint_fixture(path: &std::path::Path) -> (String, Vec<Diagnostic>) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let first = text.lines().next().unwrap_or_default().trim();
    let role = match first.split_once("role: ").map(|(_, role)| role) {
        Some("entry-file") => FileRole::EntryFile,
        Some("binary-root") => FileRole::BinaryRoot,
        _ => FileRole::Library,
    };
    if path.extension().is_some_and(|ext| ext == "py") {
        let api = crate::api::Api::python(Default::default()).expect("built-in tables");
        let empty = crate::python::Project::default();
        let mut cx = crate::python::PyContext {
            api: &api,
            role,
            in_package: true,
            module: "fixture".to_owned(),
            entry_points: &[],
            is_init: false,
            project: &empty,
            folder: String::new(),
            rooted: Vec::new(),
            model_code: true,
        };
        // Two checks, as a run makes: the file's own device choosers are known in the second,
        // and the first check's findings stand where the project answers it as no project does.
        let first = crate::project::python_files::check(&text, &cx);
        let summary = first.summary.clone();
        let project = crate::python::Project::new([crate::python::ModuleFile {
            folder: String::new(),
            module: cx.module.clone(),
            rooted: Vec::new(),
            summary,
        }]);
        cx.project = &project;
        // What stands of each check is decided once, with the project, as a run decides it.
        let standing = |mut findings: Vec<crate::diagnostic::Finding>| {
            crate::project::python_files::keep_standing(&mut findings, &project, &project.fed());
            findings
        };
        let checked = standing(crate::project::python_files::lint(&text, &cx));
        if first.stands_in(&project) {
            assert_eq!(
                standing(first.findings.clone()),
                checked,
                "{}: the first check settled otherwise",
                path.display()
            );
        }
        let checked =
            Suppressions::parse_python(&text, None)
                .apply(checked, &LineIndex::new(&text), |_| true);
        return (text, at_default_levels(checked));
    }
    let api = crate::api::Api::new(Default::default()).expect("built-in tables");
    let krate = CrateContext::default();
    let model = crate::rust::model::Model::single_file(&text, "fixture", &krate);
    let cx = FileContext {
        api: &api,
        model: &model,
        crate_id: 0,
        krate: &krate,
        crate_name: "fixture",
        role,
        module: Vec::new(),
        entry_points: &[],
        calls_to: None,
        model_code: true,
    };
    let findings = crate::project::lint_text(&text, &cx);
    let findings = Suppressions::parse(&text).apply(findings, &LineIndex::new(&text), |_| true);
    (text, at_default_levels(findings))
}

/// Rendered at the rule's default level; `allow` rules as warnings.
fn at_default_levels(findings: Vec<crate::diagnostic::Finding>) -> Vec<Diagnostic> {
    findings
        .into_iter()
        .map(|finding| {
            let level = finding.rule.default_level;
            Diagnostic {
                finding,
                level: level.max(Level::Warn),
            }
        })
        .collect()
}

fn render(relative: &str, text: String, diagnostics: Vec<Diagnostic>) -> String {
    let file = LintedFile {
        unit: FileUnit {
            path: PathBuf::from(relative),
            relative: relative.to_owned(),
            package: 0,
            target: None,
            role: FileRole::Library,
            module: Vec::new(),
            crate_name: "fixture".to_owned(),
            crate_id: Some(0),
            prescanned: false,
            language: crate::source::Language::Rust,
        },
        lines: LineIndex::new(&text),
        text,
        cells: None,
        diagnostics,
    };
    file.diagnostics
        .iter()
        .map(|d| human::render(&file, d, Style::PLAIN))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks the fixtures of `rule`, in Rust and in Python: both, but for the rules that
/// [`PYTHON_ONLY`] names.
pub(crate) fn check_rule(rule: &'static Rule) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/rules/fixtures")
        .join(rule.name);
    let python_only = PYTHON_ONLY.contains(&rule.name);
    assert_eq!(
        dir.join("fail.rs").exists(),
        !python_only,
        "`{rule}` has Rust fixtures if and only if it looks at Rust"
    );
    if !python_only {
        check_fixtures(rule, &dir, "rs", "fail");
    }
    check_fixtures(rule, &dir, "py", "fail_py");
}

/// The rules that look at Python code only, so far (their `explain` text says so).
const PYTHON_ONLY: &[&str] = &[];

/// Checks `fail.EXT` against the snapshot `snapshot` and `pass.EXT`.
fn check_fixtures(rule: &'static Rule, dir: &std::path::Path, ext: &str, snapshot: &str) {
    // Each fixture exercises one rule; other rules' findings in it are not this test's business.
    let (text, diagnostics) = lint_fixture(&dir.join(format!("fail.{ext}")));
    let own: Vec<_> = diagnostics
        .into_iter()
        .filter(|d| d.finding.rule == rule)
        .collect();
    assert!(
        !own.is_empty(),
        "fail.{ext} of `{rule}` has no `{rule}` finding"
    );
    let rendered = render(&format!("{rule}/fail.{ext}"), text, own);
    insta::with_settings!({ snapshot_path => dir, prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(snapshot, rendered);
    });

    let (_, diagnostics) = lint_fixture(&dir.join(format!("pass.{ext}")));
    let own: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.finding.rule == rule)
        .collect();
    assert!(
        own.is_empty(),
        "pass.{ext} of `{rule}` has `{rule}` findings: {own:#?}"
    );
}
