//! Resolution: each file is walked once, resolved against the workspace model, and every use
//! of a known API (resolved by path, never by name alone) and every fact the analyses draw
//! becomes an [`Event`](crate::analysis::Event) that the rules word as findings.
//!
//! The parts, kept apart as ruff keeps its semantic model, its checker and its rules:
//! - `semantic`: what the code means: scopes and bindings (`scope`), types of expressions
//!   and patterns (`infer`), the devices values are on (`facts`);
//! - `checker`: the traversal, which keeps the semantic model up to date and calls the
//!   analyses' hooks;
//! - `analysis`: one module per analysis (entry points, the current context, defaults,
//!   silent fallbacks, loop invariance, device flow, environment variables, macro bodies),
//!   each with its own per-function state.

mod analysis;
mod checker;
mod semantic;

pub use checker::{walk, walk_skeleton};

use crate::api::Api;
use crate::discover::CrateContext;
use crate::rust::model::Model;
use crate::source::{CrateId, FileRole};

/// Everything the walk of one file needs.
#[derive(Debug)]
pub struct FileContext<'a> {
    pub api: &'a Api,
    /// The workspace's names.
    pub model: &'a Model,
    /// The crate of the model that the file is walked as part of.
    pub crate_id: CrateId,
    pub krate: &'a CrateContext,
    /// The name of the crate (target) the file is compiled into, as its own paths start with it.
    pub crate_name: &'a str,
    pub role: FileRole,
    /// The file's module path inside its crate, without the crate name (`["launch"]`).
    pub module: Vec<String>,
    /// Configured entry points, as full paths (`my_lib::launch::init_rank`).
    pub entry_points: &'a [String],
    /// The functions whose calls the walk records ([`Event::Call`](crate::analysis::Event::Call)), by name: asked for only
    /// when findings depend on who calls those functions.
    pub calls_to: Option<&'a crate::api::NameSet>,
    /// Whether model code is looked at (`unplaced_tensor` is on for the file's package).
    pub model_code: bool,
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::analysis::Event;

    /// The canonical paths of the API uses found in `source`, linted as library code of a crate
    /// that renames `candle-core` to `candle`.
    fn uses(source: &str) -> Vec<String> {
        uses_with(source, "")
    }

    /// As [`uses`], with extra API entries in the configuration's format.
    fn uses_with(source: &str, extra: &str) -> Vec<String> {
        in_context(source, extra, |cx| {
            let file = syn::parse_file(source).expect("parses");
            walk(&file, source, cx)
                .into_iter()
                .filter_map(|event| match event {
                    Event::Api { use_, .. } => Some(use_.path),
                    _ => None,
                })
                .collect()
        })
    }

    /// Runs `f` with the context of `source` linted as library code of a crate that renames
    /// `candle-core` to `candle`, with `extra` API entries.
    fn in_context<T>(source: &str, extra: &str, f: impl FnOnce(&FileContext<'_>) -> T) -> T {
        let api = Api::new(toml::from_str(extra).expect("extra table")).expect("tables");
        let krate = CrateContext {
            renames: HashMap::from([("candle".to_owned(), "candle_core".to_owned())]),
            dependencies: Some(HashSet::from(["candle_core".to_owned(), "tch".to_owned()])),
            paths: HashMap::new(),
        };
        let model = Model::single_file(source, "demo", &krate);
        f(&FileContext {
            api: &api,
            model: &model,
            crate_id: 0,
            krate: &krate,
            crate_name: "demo",
            role: FileRole::Library,
            module: Vec::new(),
            entry_points: &[],
            calls_to: None,
            model_code: false,
        })
    }

    /// A file walked from its skeleton, each function's body parsed as the walk comes to it,
    /// gives the events of the whole tree: on every Rust fixture and on items of every kind
    /// that holds functions.
    #[test]
    fn a_skeleton_walks_as_the_whole_tree() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules/fixtures");
        let mut sources: Vec<String> = std::fs::read_dir(fixtures)
            .expect("fixtures")
            .flat_map(|rule| std::fs::read_dir(rule.expect("a rule").path()).expect("a rule"))
            .map(|file| file.expect("a fixture").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
            .map(|path| std::fs::read_to_string(path).expect("a fixture"))
            .collect();
        sources.push(
            "use tch::Device;
            pub(crate) const unsafe extern \"C\" fn a() { Device::Cuda(1); }
            mod m { pub fn b() { tch::Device::Cuda(2); } }
            trait T { fn c(&self) { tch::Device::Cuda(3); } fn d(&self); }
            impl T for u8 { fn d(&self) { tch::Device::Cuda(4); } }
            extern \"C\" { fn e(); }
            static F: fn() -> u8 = || { 5 };
            struct S<const N: usize>; fn g() -> S<{ 6 }> { tch::Device::Cuda(6); S }"
                .to_owned(),
        );
        assert!(sources.len() > 10, "{} sources", sources.len());
        for source in &sources {
            in_context(source, "", |cx| {
                let parsed = crate::rust::parse::blank_prelude(source);
                let hollow = crate::rust::skeleton::parse(&parsed)
                    .and_then(|(file, bodies)| walk_skeleton(&file, bodies, source, cx));
                match syn::parse_file(&parsed) {
                    Ok(file) => assert_eq!(
                        format!("{:?}", hollow.expect("every body parses")),
                        format!("{:?}", walk(&file, source, cx)),
                        "{source}"
                    ),
                    // The `parse_error` fixture: parsed whole, where the error is reported.
                    Err(_) => assert!(hollow.is_none(), "{source}"),
                }
                proc_macro2::extra::invalidate_current_thread_spans();
            });
        }
        // A body that does not parse is the whole file's to report.
        let broken = "fn a() { let = ; } fn b() {}";
        in_context(broken, "", |cx| {
            let (file, bodies) = crate::rust::skeleton::parse(broken).expect("a skeleton");
            assert!(walk_skeleton(&file, bodies, broken, cx).is_none());
        });
    }

    /// Every token's bytes, found from its line and column, are those the parser's own span
    /// gives, whatever the characters before it on its line, the line breaks, or a blanked byte
    /// order mark and `#!` line.
    #[test]
    fn spans_are_placed_by_line_and_column_as_the_parser_places_them() {
        fn spans(stream: proc_macro2::TokenStream, out: &mut Vec<proc_macro2::Span>) {
            for tree in stream {
                out.push(tree.span());
                if let proc_macro2::TokenTree::Group(group) = tree {
                    out.push(group.span_open());
                    out.push(group.span_close());
                    spans(group.stream(), out);
                }
            }
        }
        let sources = [
            "fn f() {\n    let é = \"ü🚀\"; g(é);\n}\n// ❤ x\nfn h() { k() }",
            "\u{feff}#!/usr/bin/env run-cargo-script\r\nfn main() {\r\n  let s = \"aé\"; f(s)\r\n}",
            "\u{feff}fn f() { g(\"é\", 1) }\nfn h() { k() }",
            "/* ünïcode\n */ fn a() {}\n\n\nconst X: &str = \"🚀🚀\"; fn b() { c(\"\n\") }",
        ];
        for source in sources {
            in_context(source, "", |cx| {
                let parsed = crate::rust::parse::blank_prelude(source);
                let stream: proc_macro2::TokenStream = parsed.parse().expect("lexes");
                let mut all = Vec::new();
                spans(stream, &mut all);
                let sem = semantic::Semantic::new(cx, source);
                for span in all {
                    assert_eq!(sem.byte_range(span), span.byte_range(), "{source:?}");
                }
                proc_macro2::extra::invalidate_current_thread_spans();
            });
        }
    }

    #[test]
    fn imports_renames_and_globs_resolve() {
        assert_eq!(
            uses("use candle::Device; fn f() { Device::new_cuda(1); }"),
            ["candle_core::Device::new_cuda"]
        );
        assert_eq!(
            uses("use candle_core as c; fn f() { c::Device::new_cuda(1); }"),
            ["candle_core::Device::new_cuda"]
        );
        assert_eq!(
            uses("extern crate tch as torch; fn f() { torch::Device::Cuda(1); }"),
            ["tch::Device::Cuda"]
        );
        assert_eq!(
            uses("use tch::*; fn f() { Device::Cuda(1); }"),
            ["tch::Device::Cuda"]
        );
        assert_eq!(
            uses("use tch::{self, Device as D}; fn f() { D::Cuda(1); tch::Device::Cuda(2); }"),
            ["tch::Device::Cuda", "tch::Device::Cuda"]
        );
        assert_eq!(
            uses("fn f() { use tch::Device; Device::Cuda(1); }"),
            ["tch::Device::Cuda"]
        );
        assert_eq!(
            uses("use candle::cuda::cudarc::driver::CudaContext; fn f() { CudaContext::new(0); }"),
            ["cudarc::driver::CudaContext::new"]
        );
    }

    #[test]
    fn local_items_and_module_boundaries_shadow_library_names() {
        assert!(
            uses("enum Device { Cuda(usize) } use tch::*; fn f() { Device::Cuda(1); }").is_empty()
        );
        assert!(uses("use tch::Device; mod inner { fn f() { Device::Cuda(1); } }").is_empty());
        assert!(
            uses("fn f() { Device::Cuda(1); }").is_empty(),
            "unimported names are unknown"
        );
        assert!(
            uses("mod tch { pub enum Device { Cuda(usize) } } fn f() { tch::Device::Cuda(1); }")
                .is_empty()
        );
    }

    #[test]
    fn methods_need_a_receiver_of_known_type() {
        let source = "use std::sync::Arc; use cudarc::driver::CudaContext;
            struct S { ctx: Arc<CudaContext> }
            impl S { fn a(&self) { self.ctx.bind_to_thread(); } }
            fn b(ctx: &CudaContext) { ctx.bind_to_thread(); }
            fn c() { let ctx = CudaContext::new(0).unwrap(); ctx.bind_to_thread(); }
            fn d(other: &Other) { other.bind_to_thread(); }
            fn e() { let ctx = CudaContext::new(0).unwrap(); let ctx = other(); ctx.bind_to_thread(); }";
        let found = uses(source);
        let binds = found
            .iter()
            .filter(|path| path.ends_with("::bind_to_thread"))
            .count();
        assert_eq!(binds, 3, "{found:?}");
    }

    #[test]
    fn configured_methods_are_followed_through_variants_and_conversions() {
        let extra = "[[method]]\non = [\"candle_core::CudaDevice\"]\nnames = [\"bind_to_thread\"]\nrole = \"set_current_device\"\n";
        let source = "use candle_core::Device;
            fn a(device: &Device) { if let Device::Cuda(cuda) = device { cuda.bind_to_thread(); } }
            fn b(device: &Device) { match device { Device::Cuda(c) => { c.bind_to_thread(); } _ => {} } }
            fn c(device: &Device) { device.as_cuda_device().unwrap().bind_to_thread(); }
            fn d(device: &Device) -> candle_core::Result<()> { let cuda = device.as_cuda_device()?; cuda.bind_to_thread(); Ok(()) }
            fn e(device: &Device, other: &Other) { if let Device::Cpu = device { other.bind_to_thread(); } }";
        let found = uses_with(source, extra);
        let binds = found
            .iter()
            .filter(|path| *path == "candle_core::CudaDevice::bind_to_thread")
            .count();
        assert_eq!(binds, 4, "{found:?}");
    }

    #[test]
    fn configured_wrappers_are_known_inside_their_own_crate() {
        let extra = "[[item]]\npath = \"demo::gpu::default_gpu\"\nrole = \"implicit_device\"\n";
        let source = "mod gpu { pub fn default_gpu() {} } fn f() { gpu::default_gpu(); crate::gpu::default_gpu(); }";
        assert_eq!(
            uses_with(source, extra),
            ["demo::gpu::default_gpu", "demo::gpu::default_gpu"]
        );
        // Built-in entries describe other crates: a crate's own paths never match them.
        assert!(uses("mod tch { pub mod kind { pub const FLOAT_CUDA: u8 = 0; } } fn f() { crate::tch::kind::FLOAT_CUDA; }").is_empty());
    }
}
