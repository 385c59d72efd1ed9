//! Any text given to `lint_text` must lint without a panic, and every span it reports must lie
//! inside the text on character boundaries. The seed corpus is the rules' fixtures
//! (`fuzz/corpus/lint_text`, made by `fuzz/seed.sh`).

#![no_main]

use std::sync::{Arc, LazyLock};

use cargo_placement::api::Api;
use cargo_placement::discover::CrateContext;
use cargo_placement::project::lint_text;
use cargo_placement::rust::model::Model;
use cargo_placement::rust::resolve::FileContext;
use cargo_placement::source::FileRole;
use libfuzzer_sys::fuzz_target;

static API: LazyLock<Arc<Api>> = LazyLock::new(|| Api::new(Default::default()).expect("tables"));

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let krate = CrateContext::default();
    let model = Model::single_file(text, "fuzzed", &krate);
    for role in [FileRole::Library, FileRole::BinaryRoot] {
        let cx = FileContext {
            api: &API,
            model: &model,
            crate_id: 0,
            krate: &krate,
            crate_name: "fuzzed",
            role,
            module: Vec::new(),
            entry_points: &[],
            calls_to: None,
            model_code: true,
        };
        for finding in lint_text(text, &cx) {
            let span = finding.span;
            assert!(span.start <= span.end && span.end <= text.len());
            assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        }
    }
});
