//! Fuzz-style mutations of every rule fixture, Rust and Python, deterministic and quick enough for CI (the
//! coverage-guided fuzzer is `fuzz/`, run by hand). Truncations, random tokens inserted and
//! deleted, deep nesting, byte order marks, shebangs, CRLF and non-ASCII text must never make
//! the linter panic, and every span it reports must lie inside its file, on character
//! boundaries, and render.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use cargo_placement::api::Api;
use cargo_placement::diagnostic::Level;
use cargo_placement::discover::CrateContext;
use cargo_placement::discover::FileUnit;
use cargo_placement::project::python_files;
use cargo_placement::project::suppress::Suppressions;
use cargo_placement::project::{Diagnostic, LintedFile, lint_text, locate};
use cargo_placement::python::PyContext;
use cargo_placement::report::human;
use cargo_placement::report::human::Style;
use cargo_placement::rust::model::Model;
use cargo_placement::rust::resolve::FileContext;
use cargo_placement::source::FileRole;
use cargo_placement::source::Language;
use cargo_placement::source::LineIndex;

/// Mutants made of each fixture.
const MUTANTS: usize = 60;

/// Tokens that real code is made of, and some that break it.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "::",
    ".",
    "?",
    "&",
    "'a",
    "'x'",
    "\"",
    "\"//\"",
    "r#\"",
    "\"#",
    "/*",
    "*/",
    "//",
    "///",
    "//!",
    "#",
    "#!",
    "!",
    "=>",
    "->",
    "<",
    ">",
    "|",
    "fn",
    "let",
    "mut",
    "impl",
    "mod",
    "use",
    "loop",
    "for",
    "in",
    "match",
    "move",
    "async",
    "Device::Cuda(1)",
    "Device::new_cuda(0)",
    "tch::Device::cuda_if_available()",
    "\"cuda:1\".parse()",
    ".to_device(&d)",
    ".bind_to_thread()",
    "set_device",
    "// placement: allow(",
    "hardcoded_device)",
    "é",
    "漢字",
    "🦀",
    "\u{feff}",
    "\u{200b}",
    "\r\n",
    "\n",
    "\t",
    " ",
    "0",
    "18446744073709551616",
    "1e400",
    "b'\\xff'",
    "\\",
];

fn fixtures() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules/fixtures");
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.expect("walk");
        if entry
            .path()
            .extension()
            .is_some_and(|ext| ext == "rs" || ext == "py")
        {
            let text = std::fs::read_to_string(entry.path()).expect("read");
            found.push((entry.into_path(), text));
        }
    }
    assert!(found.len() >= 32, "two fixtures per rule and language");
    found
}

/// A character boundary of `text`, at random.
fn boundary(text: &str, rng: &mut ChaCha8Rng) -> usize {
    let mut at = rng.random_range(0..=text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut text = text.to_owned();
    // Several edits at once, each of one kind.
    for _ in 0..rng.random_range(1..4) {
        match rng.random_range(0..8) {
            0 => {
                let at = boundary(&text, rng);
                text.truncate(at);
            }
            1 | 2 => {
                let at = boundary(&text, rng);
                let token = TOKENS[rng.random_range(0..TOKENS.len())];
                text.insert_str(at, token);
            }
            3 => {
                let from = boundary(&text, rng);
                let to = boundary(&text, rng);
                let (from, to) = (from.min(to), from.max(to));
                let to = (from + (to - from).min(40)).min(text.len());
                let to = (to..=text.len())
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap_or(text.len());
                text.replace_range(from..to, "");
            }
            4 => {
                let depth = rng.random_range(1..3_000);
                let (open, close) = ["{}", "()", "[]"][rng.random_range(0..3)].split_at(1);
                let at = boundary(&text, rng);
                let inner = format!("{}x{}", open.repeat(depth), close.repeat(depth));
                text.insert_str(at, &inner);
            }
            5 => text.insert_str(
                0,
                ["\u{feff}", "#!/usr/bin/env rust-script\n", "\u{feff}#!x\n"]
                    [rng.random_range(0..3)],
            ),
            6 => text = text.replace('\n', "\r\n"),
            _ => {
                let at = boundary(&text, rng);
                text.insert_str(
                    at,
                    ["é", "漢", "🦀", "\u{301}", "\u{feff}"][rng.random_range(0..5)],
                );
            }
        }
    }
    text
}

/// Lints `text` in `language` and checks what comes back; the message names the mutant on
/// failure.
fn check(text: &str, api: &Api, language: Language, what: &str) {
    let krate = CrateContext::default();
    let linted = catch_unwind(AssertUnwindSafe(|| {
        if language == Language::Python {
            let api = Api::python(Default::default()).expect("tables");
            let cx = PyContext {
                api: &api,
                role: FileRole::Library,
                in_package: true,
                module: "fuzzed".to_owned(),
                entry_points: &[],
                is_init: false,
                project: &Default::default(),
                folder: String::new(),
                rooted: Vec::new(),
                model_code: true,
            };
            return python_files::lint(text, &cx);
        }
        // The summary of the workspace model reads the text too.
        let model = Model::single_file(text, "fuzzed", &krate);
        let cx = FileContext {
            api,
            model: &model,
            crate_id: 0,
            krate: &krate,
            crate_name: "fuzzed",
            role: FileRole::Library,
            module: Vec::new(),
            entry_points: &[],
            calls_to: None,
            model_code: true,
        };
        lint_text(text, &cx)
    }));
    let findings = linted.unwrap_or_else(|_| panic!("lint_text panicked on {what}:\n{text:?}"));
    for finding in &findings {
        let span = &finding.span;
        assert!(
            span.start <= span.end
                && span.end <= text.len()
                && text.is_char_boundary(span.start)
                && text.is_char_boundary(span.end),
            "{what}: span {span:?} of `{}` is not inside the text on character boundaries:\n{text:?}",
            finding.rule
        );
    }
    // Everything downstream of a finding must take any text too.
    let rendered = catch_unwind(AssertUnwindSafe(|| {
        let lines = LineIndex::new(text);
        let suppressions = match language {
            Language::Rust => Suppressions::parse(text),
            Language::Python => Suppressions::parse_python(text, None),
        };
        // What stands once the comments are applied, with every rule on (`unused_allow` too).
        let findings = suppressions.apply(findings.to_vec(), &lines, |_| true);
        let file = LintedFile {
            unit: FileUnit {
                path: PathBuf::from("fuzzed.rs"),
                relative: "fuzzed.rs".to_owned(),
                package: 0,
                target: None,
                role: FileRole::Library,
                module: Vec::new(),
                crate_name: "fuzzed".to_owned(),
                crate_id: (language == Language::Rust).then_some(0),
                prescanned: false,
                language,
            },
            text: text.to_owned(),
            lines: lines.clone(),
            cells: None,
            diagnostics: findings
                .iter()
                .cloned()
                .map(|finding| Diagnostic {
                    finding,
                    level: Level::Warn,
                })
                .collect(),
        };
        for diagnostic in &file.diagnostics {
            lines.position(text, diagnostic.finding.span.end);
            human::render(&file, diagnostic, Style::PLAIN);
        }
        locate::keys(
            "fuzzed.rs",
            text,
            language,
            &findings
                .iter()
                .map(|f| (f.rule.name, f.span.clone()))
                .collect::<Vec<_>>(),
        );
    }));
    assert!(rendered.is_ok(), "{what}: reporting panicked on:\n{text:?}");
}

#[test]
fn mutated_fixtures_never_panic_and_spans_stay_inside() {
    let api = Api::new(Default::default()).expect("tables");
    let mut rng = ChaCha8Rng::seed_from_u64(0x91ace);
    for (path, text) in fixtures() {
        let name = path.display().to_string();
        let language = match path.extension().is_some_and(|ext| ext == "py") {
            true => Language::Python,
            false => Language::Rust,
        };
        check(&text, &api, language, &name);
        for index in 0..MUTANTS {
            let mutant = mutate(&text, &mut rng);
            check(
                &mutant,
                &api,
                language,
                &format!("mutant {index} of {name}"),
            );
        }
    }
}
