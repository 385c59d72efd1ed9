//! Any text given to the Python checker must lint without a panic, in both of a run's checks
//! (the project summary, then the findings), the first check's findings, where they stand, must
//! be those the second finds, and every span it reports must lie inside the text
//! on character boundaries. The seed corpus is the rules' Python fixtures
//! (`fuzz/corpus/lint_python`, made by `fuzz/seed.sh`).

#![no_main]

use std::sync::{Arc, LazyLock};

use cargo_placement::api::Api;
use cargo_placement::project::python_files;
use cargo_placement::python::{ModuleFile, Project, PyContext};
use cargo_placement::source::FileRole;
use libfuzzer_sys::fuzz_target;

static API: LazyLock<Arc<Api>> = LazyLock::new(|| Api::python(Default::default()).expect("tables"));

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let empty = Project::default();
    for (role, in_package) in [(FileRole::Library, true), (FileRole::Library, false)] {
        let mut cx = PyContext {
            api: &API,
            role,
            in_package,
            module: "pkg.fuzzed".to_owned(),
            entry_points: &[],
            is_init: false,
            project: &empty,
            folder: String::new(),
            rooted: Vec::new(),
            // Every analysis, the model code's too.
            model_code: true,
        };
        let first = python_files::check(text, &cx);
        let summary = first.summary.clone();
        let project = Project::new([ModuleFile {
            folder: String::new(),
            module: cx.module.clone(),
            rooted: Vec::new(),
            summary,
        }]);
        cx.project = &project;
        let findings = python_files::lint(text, &cx);
        // The first check's findings stand only where the second check finds the same.
        if first.stands_in(&project) {
            assert_eq!(first.findings, findings);
        }
        for finding in findings {
            let span = finding.span;
            assert!(span.start <= span.end && span.end <= text.len());
            assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        }
    }
});
