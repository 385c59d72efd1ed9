//! Discovery as a new user meets it: workspaces that `cargo metadata` cannot read, packages a
//! workspace leaves out, symbolic links, runs from a subfolder or on one file, several paths,
//! and a folder named like the subcommand. Every run either lints what is there or says why
//! it could not; none passes silently.

mod common;

use std::path::Path;

use cargo_metadata::Message;
use common::{command, placement, stderr, stdout, write_files};

const GPU_ONE: &str =
    "pub fn f() -> candle_core::Device { candle_core::Device::new_cuda(1).unwrap() }\n";
/// A program that chooses GPU 1 itself.
const MAIN_ON_GPU_ONE: &str = "fn main() { let _ = candle_core::Device::new_cuda(1); }\n";

fn package(name: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
}

fn short(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![dir.to_str().unwrap(), "--message-format", "short"];
    args.extend_from_slice(extra);
    placement(&args)
}

/// The `file:line` of each finding in `short` output.
fn places(output: &std::process::Output) -> Vec<String> {
    stdout(output)
        .lines()
        .map(|line| line.split(": ").next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_workspace_cargo_cannot_read_is_linted_from_its_manifests() {
    // The repro: a member folder is missing.
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"a\", \"missing\"]\n",
            ),
            ("a/Cargo.toml", &package("a")),
            ("a/src/lib.rs", GPU_ONE),
        ],
    );
    let output = short(dir.path(), &["-D", "warnings"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(places(&output), ["a/src/lib.rs:1:67"]);
    let err = stderr(&output);
    assert_eq!(
        err.matches("note: `cargo metadata` failed").count(),
        1,
        "said once: {err}"
    );
    assert!(err.contains("read from their manifests"), "{err}");

    // A member's path dependency is missing.
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n"),
            (
                "a/Cargo.toml",
                &(package("a") + "[dependencies]\nghost = { path = \"../ghost\" }\n"),
            ),
        ],
    );
    let output = short(dir.path(), &["-D", "warnings"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(places(&output), ["a/src/lib.rs:1:67"]);

    // A root package without targets next to `[workspace]`.
    write_files(
        dir.path(),
        &[(
            "Cargo.toml",
            &(package("root") + "[workspace]\nmembers = [\"a\"]\n"),
        )],
    );
    std::fs::write(dir.path().join("a/Cargo.toml"), package("a")).unwrap();
    let output = short(dir.path(), &["-D", "warnings"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(places(&output), ["a/src/lib.rs:1:67"]);
}

#[test]
fn no_cargo_and_a_toolchain_file_are_no_reason_to_lint_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n"),
            ("a/Cargo.toml", &package("a")),
            ("a/src/lib.rs", GPU_ONE),
            // Never installed: it is not consulted, as the project's toolchain is not needed.
            (
                "rust-toolchain.toml",
                "[toolchain]\nchannel = \"nightly-1999-01-01\"\n",
            ),
        ],
    );
    let output = command()
        .args([dir.path().to_str().unwrap(), "--message-format", "short"])
        .env("PATH", "")
        .env_remove("CARGO")
        .output()
        .unwrap();
    assert_eq!(
        places(&output),
        ["a/src/lib.rs:1:67"],
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("note: `cargo metadata` failed"));

    let output = command()
        .args([".", "--message-format", "short"])
        .current_dir(dir.path())
        .env_remove("CARGO")
        .output()
        .unwrap();
    assert_eq!(
        places(&output),
        ["a/src/lib.rs:1:67"],
        "{}",
        stderr(&output)
    );
    assert!(
        !stderr(&output).contains("note:"),
        "cargo answered from a neutral folder: {}",
        stderr(&output)
    );
}

#[test]
fn nothing_linted_is_an_error_that_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (".generated/gpu.rs", GPU_ONE),
            ("placement.toml", "exclude = [\"vendor/**\"]\n"),
            ("vendor/gpu.rs", GPU_ONE),
        ],
    );
    let output = placement(&[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("no Rust files were linted")
            && err.contains("1 in hidden folders")
            && err.contains("1 matching `exclude`"),
        "{err}"
    );
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));

    let empty = tempfile::tempdir().unwrap();
    let output = placement(&[empty.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no Python or Rust files found"));
}

#[test]
fn packages_a_workspace_leaves_out_are_linted_with_their_own_roles() {
    // A monorepo root without a manifest: a workspace that excludes its GPU crate, another
    // workspace with a binary, and loose files.
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "ml/Cargo.toml",
                "[workspace]\nmembers = [\"core\"]\nexclude = [\"gpu\", \"nested\"]\n",
            ),
            ("ml/core/Cargo.toml", &package("core")),
            ("ml/core/src/lib.rs", GPU_ONE),
            ("ml/gpu/Cargo.toml", &package("gpu")),
            ("ml/gpu/src/lib.rs", GPU_ONE),
            (
                "ml/nested/Cargo.toml",
                "[workspace]\nmembers = [\"tool\"]\n",
            ),
            ("ml/nested/tool/Cargo.toml", &package("tool")),
            ("ml/nested/tool/src/main.rs", MAIN_ON_GPU_ONE),
            ("ml/nested/tool/src/lib.rs", GPU_ONE),
            ("serve/Cargo.toml", &package("serve")),
            ("serve/src/main.rs", MAIN_ON_GPU_ONE),
            ("scripts/probe.rs", GPU_ONE),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        places(&output),
        [
            "ml/core/src/lib.rs:1:67",
            "ml/gpu/src/lib.rs:1:67",
            "ml/nested/tool/src/lib.rs:1:67",
            "scripts/probe.rs:1:67",
        ],
        "each `main` is its program's entry point"
    );
    assert!(stdout(&output).lines().count() == 4);

    // Unless the configuration's `exclude` names them.
    write_files(
        dir.path(),
        &[("ml/placement.toml", "exclude = [\"gpu/**\"]\n")],
    );
    let output = short(&dir.path().join("ml"), &[]);
    assert_eq!(
        places(&output),
        ["core/src/lib.rs:1:67", "nested/tool/src/lib.rs:1:67"],
        "{}",
        stderr(&output)
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_linted_as_cargo_builds_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(
        root,
        &[
            ("shared/lib.rs", "pub mod gpu;\npub mod pick;\n"),
            ("shared/gpu/mod.rs", GPU_ONE),
            ("shared/pick.rs", GPU_ONE),
            ("ws/Cargo.toml", &package("ws")),
        ],
    );
    let src = root.join("ws/src");
    std::fs::create_dir_all(&src).unwrap();
    std::os::unix::fs::symlink(root.join("shared/lib.rs"), src.join("lib.rs")).unwrap();
    std::os::unix::fs::symlink(root.join("shared/gpu"), src.join("gpu")).unwrap();
    std::os::unix::fs::symlink(root.join("shared/pick.rs"), src.join("pick.rs")).unwrap();
    // A second name for a file, and a loop.
    std::os::unix::fs::symlink(root.join("shared/pick.rs"), src.join("zz_alias.rs")).unwrap();
    std::os::unix::fs::symlink(&src, src.join("gpu_loop")).unwrap();
    let output = short(&root.join("ws"), &[]);
    assert_eq!(
        places(&output),
        ["src/gpu/mod.rs:1:67", "src/pick.rs:1:67"],
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("symbolic link to its own ancestor"));
    // Reported under the name the walk reached first, and said.
    assert!(
        stderr(&output).contains(
            "note: src/pick.rs is also reached as src/zz_alias.rs (a symbolic link): it is linted \
             once, under the first name"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_subfolder_or_a_file_is_linted_as_part_of_its_workspace() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\"]\n"),
            ("placement.toml", "[levels]\nhardcoded_device = \"deny\"\n"),
            ("a/Cargo.toml", &package("a")),
            ("a/src/lib.rs", "pub mod gpu;\n"),
            ("a/src/gpu.rs", GPU_ONE),
            ("b/Cargo.toml", &package("b")),
            ("b/src/lib.rs", GPU_ONE),
        ],
    );
    let from = |dir: &Path, args: &[&str]| command().args(args).current_dir(dir).output().unwrap();
    // From the root, from a package's `src/` and on one file: the same configuration.
    for (cwd, arg) in [
        (dir.path().to_path_buf(), "."),
        (dir.path().join("a/src"), "."),
        (dir.path().join("a/src"), "gpu.rs"),
    ] {
        let output = from(&cwd, &[arg, "--message-format", "short"]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "from {}: {}",
            cwd.display(),
            stdout(&output)
        );
        assert!(
            stdout(&output).starts_with("a/src/gpu.rs:1:67: error[hardcoded_device]"),
            "named from the workspace root: {}",
            stdout(&output)
        );
    }
    let output = from(
        &dir.path().join("a/src"),
        &["gpu.rs", "--message-format", "json"],
    );
    let message = Message::parse_stream(stdout(&output).as_bytes())
        .find_map(|message| match message.unwrap() {
            Message::CompilerMessage(message) => Some(message),
            _ => None,
        })
        .expect("a finding");
    let line: serde_json::Value =
        serde_json::from_str(stdout(&output).lines().next().unwrap()).unwrap();
    assert_eq!(
        Path::new(line["manifest_path"].as_str().unwrap()),
        dir.path().join("a/Cargo.toml").canonicalize().unwrap()
    );
    assert_eq!(message.target.name, "a");
    assert_eq!(message.message.spans[0].file_name, "a/src/gpu.rs");

    // Several paths: one report, one summary.
    let output = from(dir.path(), &["a/src/gpu.rs", "b", "--color", "never"]);
    let out = stdout(&output);
    assert_eq!(out.matches("hard-coded GPU ordinal").count(), 2, "{out}");
    assert_eq!(out.matches("found ").count(), 1, "{out}");
    assert!(out.ends_with("found 2 errors in 2 of 2 files\n"), "{out}");
}

#[test]
fn only_the_name_cargo_inserts_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("placement/gpu.rs", GPU_ONE)]);
    // Run directly: `placement` is the folder to lint.
    let output = command()
        .args(["placement", "--message-format", "short"])
        .current_dir(dir.path())
        .env_remove("CARGO")
        .output()
        .unwrap();
    assert_eq!(
        places(&output),
        ["placement/gpu.rs:1:67"],
        "{}",
        stderr(&output)
    );
    // Run by cargo (which sets `$CARGO`): `cargo placement placement` lints it too.
    let output = command()
        .args(["placement", "placement", "--message-format", "short"])
        .current_dir(dir.path())
        .env("CARGO", "cargo")
        .output()
        .unwrap();
    assert_eq!(
        places(&output),
        ["placement/gpu.rs:1:67"],
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_module_only_a_program_declares_is_part_of_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let setup = "pub(crate) fn device(cpu: bool) -> candle_core::Result<candle_core::Device> {\n    \
                 if cpu { Ok(candle_core::Device::Cpu) } else { candle_core::Device::new_cuda(0) }\n}\n";
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("tool")),
            (
                "src/main.rs",
                "mod setup;\nfn main() { let _ = setup::device(false); }\n",
            ),
            ("src/setup.rs", setup),
            // The same function in a module the library declares is library code.
            ("src/lib.rs", "pub mod shared;\n"),
            ("src/shared.rs", setup),
            // A module file nothing declares is linted with the role its place suggests.
            ("src/stray.rs", setup),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(
        places(&output),
        ["src/shared.rs:2:82", "src/stray.rs:2:82"],
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_programs_constants_are_its_own_choice() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "Cargo.toml",
                &(package("tool") + "[dependencies]\ntch = \"0.17\"\n"),
            ),
            (
                "src/main.rs",
                "mod setup;\nconst DEVICE: tch::Device = tch::Device::Cuda(0);\n\
                 fn main() { let _ = (DEVICE, setup::GPU); }\n",
            ),
            (
                "src/setup.rs",
                "pub(crate) const GPU: tch::Device = tch::Device::Cuda(1);\n",
            ),
            // The library's constant chooses for every caller.
            (
                "src/lib.rs",
                "pub const GPU: tch::Device = tch::Device::Cuda(1);\n",
            ),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(places(&output), ["src/lib.rs:1:48"], "{}", stdout(&output));
}

#[test]
fn re_exports_are_followed_across_the_workspace_crates() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"gpu\", \"app\"]\n"),
            (
                "gpu/Cargo.toml",
                &(package("gpu") + "[dependencies]\ncudarc = \"0.19\"\n"),
            ),
            ("gpu/src/lib.rs", "mod ctx;\npub use ctx::*;\n"),
            (
                "gpu/src/ctx.rs",
                "pub use cudarc::driver::CudaContext as Context;\n",
            ),
            (
                "app/Cargo.toml",
                &(package("app")
                    + "[dependencies]\nkernels = { package = \"gpu\", path = \"../gpu\" }\n"),
            ),
            (
                "app/src/lib.rs",
                "pub fn start() { let _ = kernels::Context::new(1); }\n",
            ),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(
        places(&output),
        ["app/src/lib.rs:1:48"],
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("`kernels::Context::new`"));
}

#[test]
fn a_device_chooser_is_flagged_where_other_crates_call_it() {
    let dir = tempfile::tempdir().unwrap();
    let chooser = "pub fn best_device() -> candle_core::Result<candle_core::Device> {\n    \
                   candle_core::Device::new_cuda(0)\n}\n";
    write_files(
        dir.path(),
        &[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"common\", \"model\"]\n",
            ),
            (
                "common/Cargo.toml",
                &(package("common") + "[dependencies]\ncandle-core = \"0.11\"\n"),
            ),
            ("common/src/lib.rs", chooser),
            (
                "model/Cargo.toml",
                &(package("model")
                    + "[dependencies]\ncandle-core = \"0.11\"\n\
                       shared = { package = \"common\", path = \"../common\" }\n"),
            ),
            (
                "model/src/lib.rs",
                "pub fn load() -> candle_core::Result<candle_core::Device> {\n    \
                 let device = shared::best_device()?;\n    Ok(device)\n}\n\
                 pub fn run() {\n    let _ = load();\n}\n",
            ),
            (
                "model/src/main.rs",
                "fn main() {\n    let _ = shared::best_device();\n}\n",
            ),
        ],
    );
    let output = short(dir.path(), &[]);
    // The choice itself, its caller in a library, and that caller's caller (which returns
    // what the chooser chose); `main` may choose.
    assert_eq!(
        places(&output),
        [
            "common/src/lib.rs:2:35",
            "model/src/lib.rs:2:18",
            "model/src/lib.rs:6:13"
        ],
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(stdout(&output).contains("`shared::best_device` chooses the device for its caller"));
}

#[test]
fn python_projects_are_linted_as_python_tools_find_their_files() {
    const STRAY: &str = "import torch\n\ndef f():\n    torch.cuda.set_device(1)\n";
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("src/pkg/__init__.py", ""),
            ("src/pkg/launch.py", STRAY),
            ("src/pkg/init.py", STRAY),
            // Ignored by git, a virtual environment, a cache, a hidden folder.
            (".gitignore", "generated/\n"),
            ("generated/__init__.py", ""),
            ("generated/gen.py", STRAY),
            ("env/pyvenv.cfg", "home = /usr/bin\n"),
            ("env/lib/python3.12/site-packages/torch/cuda.py", STRAY),
            ("src/pkg/__pycache__/launch.py", STRAY),
            (".tox/py/t.py", STRAY),
            // Programs and tests choose their devices.
            ("scripts/train.py", STRAY),
            ("tests/test_launch.py", STRAY),
            (
                "run.py",
                &format!("{STRAY}\nif __name__ == '__main__':\n    f()\n"),
            ),
            (
                "pyproject.toml",
                "[project]\nname = \"pkg\"\n\n[tool.placement]\nentry_points = [\"pkg.init.f\"]\n\n[tool.placement.levels]\nstray_set_device = \"deny\"\n",
            ),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(
        places(&output),
        ["src/pkg/launch.py:4:5"],
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("error[stray_set_device]"));
    assert_eq!(output.status.code(), Some(1));
    // Named on the command line, an ignored file is linted, as part of its project.
    let output = short(&dir.path().join("generated/gen.py"), &[]);
    assert_eq!(
        places(&output),
        ["generated/gen.py:4:5"],
        "{}",
        stderr(&output)
    );
    let output = short(&dir.path().join("src/pkg"), &[]);
    assert_eq!(
        places(&output),
        ["src/pkg/launch.py:4:5"],
        "{}",
        stderr(&output)
    );

    // A bad key is an error that names the table and the key.
    let pyproject = dir.path().join("pyproject.toml");
    std::fs::write(&pyproject, "[tool.placement]\nentry_point = []\n").unwrap();
    let output = short(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("[tool.placement] of") && err.contains("entry_point"),
        "{err}"
    );
}

#[test]
fn a_projects_own_device_chooser_is_followed_across_its_python_files() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("src/lib/__init__.py", "from .utils import infer_device\n"),
            (
                "src/lib/utils/__init__.py",
                "from .other import infer_device\n",
            ),
            (
                "src/lib/utils/other.py",
                "import torch\n\ndef infer_device():\n    if torch.cuda.is_available():\n        return \"cuda\"\n    return \"cpu\"\n",
            ),
            (
                "src/lib/load.py",
                "import torch\nfrom lib import infer_device\nfrom .utils.other import infer_device as pick\n\n\
                 def load(path, device=None):\n    if device is None:\n        device = infer_device()\n    return torch.load(path, map_location=device)\n\n\
                 def cast(x):\n    with torch.autocast(pick()):\n        return x * 2\n\n\
                 def place(x):\n    return x.to(pick())\n",
            ),
        ],
    );
    let output = short(dir.path(), &[]);
    // The chooser's own `return "cuda"`, and each of its calls where a device goes.
    assert_eq!(
        places(&output),
        [
            "src/lib/load.py:7:18",
            "src/lib/load.py:15:17",
            "src/lib/utils/other.py:5:16"
        ],
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("`infer_device()` uses whatever device is current"));
}

#[test]
fn what_a_glob_import_of_the_projects_module_brings_is_resolved() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            ("pkg/utils.py", "import torch\nimport torch.cuda as tc\n"),
            (
                "pkg/model.py",
                "from .utils import *\n\ndef pin():\n    torch.cuda.set_device(0)\n\ndef also():\n    tc.set_device(1)\n",
            ),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(
        places(&output),
        ["pkg/model.py:4:5", "pkg/model.py:7:5"],
        "{}",
        stdout(&output)
    );
}

/// A Python project inside a Cargo workspace is configured by its own `pyproject.toml`, the
/// nearest configuration of its files, whether it is linted alone or with the workspace.
#[test]
fn a_python_project_in_a_cargo_workspace_takes_its_own_configuration() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"outer\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", ""),
            (
                "py/pyproject.toml",
                "[tool.placement.levels]\nimplicit_device = \"deny\"\n",
            ),
            ("py/pkg/__init__.py", ""),
            (
                "py/pkg/m.py",
                "import torch\n\n\ndef f(x):\n    return x.cuda()\n",
            ),
        ],
    );
    for path in [dir.path().join("py"), dir.path().to_path_buf()] {
        let output = placement(&[path.to_str().unwrap(), "--message-format", "short"]);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(
            stdout(&output).contains("m.py:5:13: error[implicit_device]"),
            "{}",
            stdout(&output)
        );
    }
}

#[test]
fn a_file_no_target_compiles_is_a_program_when_it_defines_main() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("a")),
            ("src/lib.rs", GPU_ONE),
            // Built by hand (`rustc`), outside every target: its own choice, as a bin's is.
            ("bench/scripts/batch_bench.rs", MAIN_ON_GPU_ONE),
            // Outside every target with no `main`: library code, as before.
            ("bench/scripts/shared.rs", GPU_ONE),
        ],
    );
    let output = short(dir.path(), &[]);
    assert_eq!(
        places(&output),
        ["bench/scripts/shared.rs:1:67", "src/lib.rs:1:67"],
        "{}",
        stderr(&output)
    );
}
