//! The workspace model on small workspaces written to disk: module trees from `mod`
//! declarations, re-exports through modules and crates, globs, aliases, cycles.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::*;
use crate::discover::{Package, Target};

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A package with a library at `dir/src/lib.rs` that depends on `deps` (by name) and on
/// workspace packages by path (`paths`: name → folder).
fn package(root: &Path, dir: &str, name: &str, deps: &[&str], paths: &[(&str, &str)]) -> Package {
    let dir = root.join(dir);
    Package {
        id: name.to_owned(),
        name: name.to_owned(),
        manifest_path: dir.join("Cargo.toml"),
        root: dir.clone(),
        targets: vec![Target::new(
            name.to_owned(),
            TargetKind::Lib,
            dir.join("src/lib.rs"),
            "2021".to_owned(),
        )],
        krate: CrateContext {
            renames: HashMap::new(),
            dependencies: Some(deps.iter().map(|d| (*d).to_owned()).collect::<HashSet<_>>()),
            paths: paths
                .iter()
                .map(|(name, folder)| ((*name).to_owned(), root.join(folder)))
                .collect(),
        },
        metadata: serde_json::Value::Null,
        workspace: 0,
    }
}

fn build(packages: &[Package]) -> Model {
    let summaries = HashMap::new();
    let mut builder = Builder::new(&summaries);
    builder.add_packages(packages);
    builder.finish()
}

fn resolve(model: &Model, krate: CrateId, module: &[&str], path: &str) -> Resolved {
    let api = Api::new(Default::default()).expect("tables");
    let module: Vec<String> = module.iter().map(|m| (*m).to_owned()).collect();
    let segments: Vec<String> = path.split("::").map(str::to_owned).collect();
    model.resolve(&api, krate, &module, &segments)
}

fn outside(path: &str) -> Resolved {
    Resolved::Path {
        path: path.split("::").map(str::to_owned).collect(),
        local: false,
    }
}

#[test]
fn module_trees_follow_mod_declarations() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "a/src/lib.rs",
                "pub mod gpu;\nmod util { pub mod deep; }\n#[path = \"other/place.rs\"] mod moved;\n#[cfg(test)] mod tests;",
            ),
            ("a/src/gpu/mod.rs", "pub mod pick;"),
            ("a/src/gpu/pick.rs", ""),
            ("a/src/util/deep.rs", ""),
            ("a/src/other/place.rs", ""),
            ("a/src/tests.rs", ""),
            ("a/src/orphan.rs", ""),
        ],
    );
    let model = build(&[package(root, "a", "a", &[], &[])]);
    let module_of = |file: &str| {
        model
            .modules_of(&root.join(file))
            .iter()
            .map(|(_, module)| module.join("::"))
            .collect::<Vec<_>>()
    };
    assert_eq!(module_of("a/src/gpu/pick.rs"), ["gpu::pick"]);
    assert_eq!(module_of("a/src/util/deep.rs"), ["util::deep"]);
    assert_eq!(module_of("a/src/other/place.rs"), ["moved"]);
    assert_eq!(module_of("a/src/lib.rs"), ["", "util"]);
    assert!(model.modules_of(&root.join("a/src/orphan.rs")).is_empty());
    assert!(model.crates[0].modules[&vec!["tests".to_owned()]].cfg_test);
}

#[test]
fn re_exports_through_modules_globs_aliases_and_crates() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "app/src/lib.rs",
                "use candle_core::Device;\n\
                 mod nccl { pub use cudarc::nccl::Comm; }\n\
                 pub mod agent { use super::*; }\n\
                 pub mod outer { pub mod inner { pub use crate::nccl::Comm as C; } }\n\
                 type Ctx = cudarc::driver::CudaContext;\n\
                 mod cycle_a { pub use super::cycle_b::*; }\n\
                 mod cycle_b { pub use super::cycle_a::*; }\n",
            ),
            ("gpu/src/lib.rs", "mod ctx;\npub use ctx::*;\n"),
            (
                "gpu/src/ctx.rs",
                "pub use cudarc::driver::CudaContext as Context;\npub fn helper() {}\n",
            ),
        ],
    );
    let model = build(&[
        package(
            root,
            "app",
            "app",
            &["candle_core", "cudarc", "gpu"],
            &[("gpu", "gpu")],
        ),
        package(root, "gpu", "gpu", &["cudarc"], &[]),
    ]);
    assert_eq!(
        resolve(&model, 0, &[], "nccl::Comm::from_rank"),
        outside("cudarc::nccl::Comm::from_rank")
    );
    assert_eq!(
        resolve(&model, 0, &["agent"], "Device::new_cuda"),
        outside("candle_core::Device::new_cuda")
    );
    assert_eq!(
        resolve(&model, 0, &[], "outer::inner::C::from_rank"),
        outside("cudarc::nccl::Comm::from_rank")
    );
    assert_eq!(
        resolve(&model, 0, &["outer", "inner"], "super::super::nccl::Comm"),
        outside("cudarc::nccl::Comm")
    );
    assert_eq!(
        resolve(&model, 0, &[], "Ctx::new"),
        outside("cudarc::driver::CudaContext::new")
    );
    // Another crate of the workspace, through its glob re-export.
    assert_eq!(
        resolve(&model, 0, &[], "gpu::Context::new"),
        outside("cudarc::driver::CudaContext::new")
    );
    assert_eq!(
        resolve(&model, 0, &[], "gpu::helper"),
        Resolved::Path {
            path: vec!["gpu".into(), "ctx".into(), "helper".into()],
            local: false
        }
    );
    // An alias stands for its target; a crate's own items are local; a cycle of globs ends.
    assert_eq!(
        resolve(&model, 0, &[], "crate::Ctx"),
        outside("cudarc::driver::CudaContext")
    );
    assert_eq!(
        resolve(&model, 0, &[], "crate::nccl"),
        Resolved::Path {
            path: vec!["app".into(), "nccl".into()],
            local: true
        }
    );
    assert_eq!(
        resolve(&model, 0, &[], "cycle_a::Nothing"),
        Resolved::Unknown
    );
}

/// Preludes that re-export each other by globs: each module re-exports every one before it,
/// so there are hundreds of millions of ways through them. Each module is searched once per
/// name (a search down every way would not end in any test run).
#[test]
fn globs_that_fan_out_and_meet_again_are_searched_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut lib = String::from("pub mod m0 { pub use cudarc::driver::CudaContext; }\n");
    for level in 1..=30 {
        let globs: String = (0..level)
            .rev()
            .map(|before| format!("pub use super::m{before}::*; "))
            .collect();
        lib.push_str(&format!("pub mod m{level} {{ {globs}}}\n"));
    }
    write(root, &[("a/src/lib.rs", &lib)]);
    let model = build(&[package(root, "a", "a", &["cudarc"], &[])]);
    assert_eq!(
        resolve(&model, 0, &[], "m30::CudaContext"),
        outside("cudarc::driver::CudaContext")
    );
    assert_eq!(resolve(&model, 0, &[], "m30::Missing"), Resolved::Unknown);
}
