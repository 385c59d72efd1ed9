//! Fixtures beside each rule (`rules/fixtures/<rule>/{fail,pass}.rs`): the failing file's
//! rendered findings of the rule are pinned as a snapshot, and the passing file must have none.
//!
//! A fixture is linted as library code unless its first line says `// role: entry-file` or
//! `// role: binary-root`.

use std::path::PathBuf;

use crate::discover::FileUnit;
use crate::parse::LineIndex;
use crate::report::human::{self, Style};
use crate::resolve::{CrateContext, FileContext, FileRole};
use crate::rules::{Level, Rule};
use crate::{Diagnostic, LintedFile};

fn lint_fixture(path: &std::path::Path) -> (String, Vec<Diagnostic>) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let role = match text.lines().next().unwrap_or_default().trim() {
        "// role: entry-file" => FileRole::EntryFile,
        "// role: binary-root" => FileRole::BinaryRoot,
        _ => FileRole::Library,
    };
    let api = crate::api::Api::new(Default::default()).expect("built-in tables");
    let krate = CrateContext::default();
    let model = crate::model::Model::single_file(&text, "fixture", &krate);
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
    };
    let diagnostics = crate::lint_text(&text, &cx)
        .into_iter()
        .map(|finding| {
            // Rendered at the rule's default level; `allow` rules as warnings.
            let level = finding.rule.default_level;
            Diagnostic {
                finding,
                level: level.max(Level::Warn),
            }
        })
        .collect();
    (text, diagnostics)
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
            crate_id: 0,
            prescanned: false,
        },
        lines: LineIndex::new(&text),
        text,
        diagnostics,
    };
    file.diagnostics
        .iter()
        .map(|d| human::render(&file, d, Style::PLAIN))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks both fixtures of `rule`.
pub(crate) fn check_rule(rule: &'static Rule) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/rules/fixtures")
        .join(rule.name);

    // Each fixture exercises one rule; other rules' findings in it are not this test's business.
    let (text, diagnostics) = lint_fixture(&dir.join("fail.rs"));
    let own: Vec<_> = diagnostics
        .into_iter()
        .filter(|d| d.finding.rule == rule)
        .collect();
    assert!(
        !own.is_empty(),
        "fail.rs of `{rule}` has no `{rule}` finding"
    );
    let rendered = render(&format!("{rule}/fail.rs"), text, own);
    insta::with_settings!({ snapshot_path => dir.clone(), prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!("fail", rendered);
    });

    let (_, diagnostics) = lint_fixture(&dir.join("pass.rs"));
    let own: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.finding.rule == rule)
        .collect();
    assert!(
        own.is_empty(),
        "pass.rs of `{rule}` has `{rule}` findings: {own:#?}"
    );
}
