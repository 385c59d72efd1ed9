//! What one file tells the others (a function that chooses a device for its callers) is decided
//! for each language apart from the other, and before levels and suppressions.

mod common;

use common::{placement, stdout, write_files};

/// A Rust crate with a device chooser, and a Python package in the same folder with one of its
/// own: each file is linted in its own language, and each chooser's callers are flagged.
fn mixed_tree(rust_allow: &str, python_allow: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = format!(
        "pub mod model;\nuse candle_core::Device;\npub fn best_device() -> Device {{\n    \
         Device::new_cuda(0).unwrap(){rust_allow}\n}}\n"
    );
    let pick = format!(
        "import torch\n\n\ndef pick():\n    return torch.device(\"cuda\", 0){python_allow}\n\n\n\
         def make():\n    return torch.ones(2, device=pick())\n"
    );
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("mixed", CANDLE)),
            ("src/lib.rs", &lib),
            (
                "src/model.rs",
                "pub fn load() {\n    let device = crate::best_device();\n    let _ = device;\n}\n",
            ),
            ("pkg/__init__.py", ""),
            (
                "pkg/helpers.py",
                "import torch\n\n\ndef best_device():\n    \
                 return \"cuda\" if torch.cuda.is_available() else \"cpu\"\n\n\n\
                 def load():\n    return torch.zeros(4, device=best_device())\n",
            ),
            ("pkg/pick.py", &pick),
        ],
    );
    dir
}

const CANDLE: &str = "candle-core = \"0.9\"";

/// A package's manifest with one dependency (`candle-core = "0.9"`).
fn package(name: &str, dependency: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\n{dependency}\n"
    )
}

/// Where each warning of a run over `dir` with `args` is, and its rule
/// (`src/lib.rs:4:25: warning[implicit_device]`).
fn rules_found(dir: &tempfile::TempDir, args: &[&str]) -> Vec<String> {
    warnings(dir, args)
        .iter()
        .map(|line| format!("{}]", line.split(']').next().unwrap_or_default()))
        .collect()
}

/// The warning lines of a run over `dir` in the short format, with `args`.
fn warnings(dir: &tempfile::TempDir, args: &[&str]) -> Vec<String> {
    lint(dir, args)
        .lines()
        .filter(|line| line.contains("warning["))
        .map(str::to_owned)
        .collect()
}

fn lint(dir: &tempfile::TempDir, args: &[&str]) -> String {
    let path = dir.path().to_str().expect("a UTF-8 path");
    let mut all = vec![path, "--message-format", "short"];
    all.extend(args);
    stdout(&placement(&all))
}

const RUST_CALLER: &str =
    "src/model.rs:2:18: warning[implicit_device]: `crate::best_device` chooses the device";
const PYTHON_CALLER: &str =
    "pkg/pick.py:9:33: warning[implicit_device]: `pick()` uses whatever device is current";

/// A Python file beside a Rust crate that has a device chooser is never linted as Rust.
#[test]
fn python_files_beside_a_rust_chooser_are_linted_as_python() {
    let dir = mixed_tree("", "");
    let found = lint(&dir, &[]);
    assert!(!found.contains("parse_error"), "{found}");
    for expected in [
        "src/lib.rs:4:22: warning[hardcoded_device]",
        RUST_CALLER,
        "pkg/helpers.py:9:34: warning[implicit_device]: `best_device()`",
        "pkg/pick.py:5:33: warning[hardcoded_device]",
        PYTHON_CALLER,
    ] {
        assert!(found.contains(expected), "no `{expected}` in\n{found}");
    }
}

/// Allowing the rule of a chooser's own choice keeps its callers' `implicit_device`.
#[test]
fn allowing_a_choice_keeps_its_callers_flagged() {
    let dir = mixed_tree("", "");
    let found = lint(&dir, &["-A", "hardcoded_device"]);
    assert!(!found.contains("hardcoded_device"), "{found}");
    assert!(found.contains(RUST_CALLER), "{found}");
    assert!(found.contains(PYTHON_CALLER), "{found}");
}

/// So does an allow comment on the choice, inside the chooser.
#[test]
fn an_allow_comment_on_a_choice_keeps_its_callers_flagged() {
    let dir = mixed_tree(
        " // placement: allow(hardcoded_device)",
        "  # placement: allow(hardcoded_device)",
    );
    let found = lint(&dir, &[]);
    assert!(!found.contains("hardcoded_device"), "{found}");
    assert!(found.contains(RUST_CALLER), "{found}");
    assert!(found.contains(PYTHON_CALLER), "{found}");
}

/// A function that returns what another module's device chooser chose is a chooser too, and
/// so is one that returns its result in turn: the fixed point follows the chain across files,
/// a round for each link, in Python as in Rust.
#[test]
fn choosers_are_followed_across_files_link_by_link() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/a.py",
                "import torch\n\n\ndef pick():\n    \
                 return \"cuda\" if torch.cuda.is_available() else \"cpu\"\n",
            ),
            (
                "pkg/b.py",
                "from pkg.a import pick\n\n\ndef device():\n    return pick()\n",
            ),
            (
                "pkg/c.py",
                "from pkg.b import device\n\n\ndef chosen():\n    return device()\n",
            ),
            (
                "pkg/d.py",
                "import torch\nfrom pkg.c import chosen\n\n\n\
                 def make():\n    return torch.zeros(1, device=chosen())\n",
            ),
        ],
    );
    let found = lint(&dir, &[]);
    assert!(
        found.contains(
            "pkg/d.py:6:34: warning[implicit_device]: `chosen()` uses whatever device is current"
        ),
        "{found}"
    );
}

/// A device string passed positionally to another file's function whose parameter there is a
/// device reaches a device; a number passed to a count does not.
#[test]
fn devices_passed_positionally_to_project_functions_are_followed() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/a.py",
                "def generate(model, params, device):\n    return model.to(device)\n\n\n\
                 def count(model, num_devices):\n    return num_devices\n",
            ),
            (
                "pkg/b.py",
                "from pkg.a import count, generate\n\n\ndef run(model):\n    \
                 generate(model, {}, \"cuda:1\")\n    count(model, 4)\n    \
                 return generate(model, {}, \"cpu\")\n",
            ),
        ],
    );
    let lines = warnings(&dir, &[]);
    assert_eq!(
        lines,
        ["pkg/b.py:5:25: warning[hardcoded_device]: hard-coded GPU ordinal `1` in `\"cuda:1\"`"],
        "{lines:?}"
    );
}

/// A class whose constructor hands a parameter to `set_device`, called with a literal in
/// another module; and a function of the project that asks the driver, called at another
/// library module's top level.
#[test]
fn gpus_and_driver_questions_are_followed_into_other_modules() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/runner.py",
                "import torch\n\n\nclass Runner:\n    def __init__(self, config, rank):\n        \
                 torch.cuda.set_device(rank)\n\n\ndef has_npu():\n    \
                 return not torch.cuda.is_available()\n",
            ),
            (
                "pkg/engine.py",
                "from pkg.runner import Runner, has_npu\n\nNPU = has_npu()\n\n\n\
                 def start(config, layers):\n    return Runner(config, 0), Runner(config, layers)\n",
            ),
        ],
    );
    let lines = warnings(&dir, &[]);
    assert_eq!(
        lines,
        [
            "pkg/engine.py:3:7: warning[cuda_at_import]: `has_npu` asks the GPU driver when the \
             module is imported (in the function's body)",
            "pkg/engine.py:7:27: warning[hardcoded_device]: hard-coded GPU ordinal `0` in \
             `Runner(..., 0)`",
            "pkg/runner.py:6:9: warning[stray_set_device]: `torch.cuda.set_device` changes the \
             current device of the calling thread",
        ],
        "{lines:?}"
    );
}

/// A device a module chose at import, kept in a variable (also through a chooser's tuple), is
/// flagged where other modules place with it, and a folder without `__init__.py` inside a
/// package is that package's (a namespace package).
#[test]
fn devices_kept_in_module_variables_are_followed_into_their_importers() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/tools/utils.py",
                "import torch\n\n\ndef get_device_info():\n    \
                 device_type = torch._utils._get_available_device_type() or \"cuda\"\n    \
                 return device_type, torch.cuda\n\n\n\
                 device_type, device_module = get_device_info()\n",
            ),
            (
                "pkg/validate.py",
                "import torch\nfrom pkg.tools import utils\n\n\ndef count():\n    \
                 return torch.zeros((), device=utils.device_type)\n",
            ),
            (
                "pkg/device.py",
                "import torch\n\nDEVICE = \"cpu\"\nif torch.cuda.is_available():\n    \
                 DEVICE = \"cuda\"\n\n\ndef get_device():\n    return DEVICE\n",
            ),
            (
                "pkg/runner.py",
                "from pkg.device import DEVICE, get_device\n\n\ndef wrap(model):\n    \
                 return model.to(get_device())\n\n\ndef place(model):\n    \
                 return model.to(DEVICE)\n",
            ),
        ],
    );
    let lines = warnings(&dir, &[]);
    assert_eq!(
        lines,
        [
            // The module asks the driver as it is imported.
            "pkg/device.py:4:4: warning[cuda_at_import]: `torch.cuda.is_available` asks the GPU driver when the module is imported",
            "pkg/runner.py:5:21: warning[implicit_device]: `get_device()` uses whatever device is current",
            "pkg/runner.py:9:21: warning[implicit_device]: `DEVICE` uses whatever device is current",
            "pkg/validate.py:6:35: warning[implicit_device]: `utils.device_type` uses whatever device is current",
        ],
        "{lines:?}"
    );
}

/// A settings object made at a module's top level (`settings = Settings()`) whose class's
/// property chooses a device: other modules that place with `settings.DEVICE` use the device it
/// chose, and read as a default argument it asks the driver when they are imported.
#[test]
fn properties_of_module_instances_are_followed_into_their_importers() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/settings.py",
                "import torch\n\n\nclass Settings:\n    @property\n    def DEVICE(self):\n        \
                 if torch.cuda.is_available():\n            return \"cuda\"\n        \
                 return \"cpu\"\n\n\nsettings = Settings()\n",
            ),
            (
                "pkg/loader.py",
                "from pkg.settings import settings\n\n\n\
                 def load(model, device=settings.DEVICE):\n    return model.to(device)\n\n\n\
                 def place(model):\n    return model.to(settings.DEVICE)\n",
            ),
        ],
    );
    let lines = warnings(&dir, &[]);
    assert_eq!(
        lines,
        [
            "pkg/loader.py:4:24: warning[cuda_at_import]: `settings.DEVICE` asks the GPU driver \
             when the module is imported (in the property's body)",
            // The default reaches a device position.
            "pkg/loader.py:4:24: warning[implicit_device]: `settings.DEVICE` uses whatever device \
             is current",
            "pkg/loader.py:9:21: warning[implicit_device]: `settings.DEVICE` uses whatever device \
             is current",
            "pkg/settings.py:8:20: warning[implicit_device]: `\"cuda\"` uses whatever device is \
             current",
        ],
        "{lines:?}"
    );
}

/// A chooser that a package's `__init__.py` brings in with `from .devices import *` is followed
/// where other modules import it from the package: a glob brings every name its module defines.
#[test]
fn choosers_brought_in_by_a_glob_import_are_followed() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", "from .devices import *\n"),
            (
                "pkg/devices.py",
                "import torch\n\n\ndef best():\n    \
                 return \"cuda\" if torch.cuda.is_available() else \"cpu\"\n",
            ),
            (
                "pkg/model.py",
                "from pkg import best\n\n\ndef load(m):\n    return m.to(best())\n",
            ),
        ],
    );
    let lines = warnings(&dir, &[]);
    assert_eq!(
        lines,
        ["pkg/model.py:5:17: warning[implicit_device]: `best()` uses whatever device is current"],
        "{lines:?}"
    );
}

/// A module that only tests compile (`#[cfg(test)] mod tests;` in a library's root) is test
/// code: its calls of another crate's device chooser are the tests' own.
#[test]
fn a_test_module_file_calls_choosers_as_tests_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"pick\", \"render\"]\nresolver = \"2\"\n",
            ),
            ("pick/Cargo.toml", &package("pick", "burn = \"0.16\"")),
            (
                "pick/src/lib.rs",
                "use burn::backend::wgpu::WgpuDevice;\n\npub fn test_device() -> WgpuDevice {\n    \
                 WgpuDevice::DefaultDevice\n}\n",
            ),
            (
                "render/Cargo.toml",
                &package("render", "pick = { path = \"../pick\" }"),
            ),
            (
                "render/src/lib.rs",
                "pub fn draw() {\n    let _ = pick::test_device();\n}\n\n#[cfg(test)]\nmod tests;\n",
            ),
            (
                "render/src/tests/mod.rs",
                "fn helper() {\n    let _ = pick::test_device();\n}\n",
            ),
        ],
    );
    let found: Vec<String> = warnings(&dir, &[])
        .iter()
        .map(|line| {
            line.split(": warning")
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(found, ["pick/src/lib.rs:4:5", "render/src/lib.rs:2:13"]);
}

#[test]
fn members_of_types_defined_in_other_files_type_what_holds_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("pool", "cudarc = \"0.19\"")),
            ("src/lib.rs", "pub mod devices;\npub mod worker;\n"),
            (
                "src/devices.rs",
                "use std::sync::Arc;\nuse cudarc::driver::CudaDevice;\n\n\
                 pub struct DeviceManager {\n    pub first: Arc<CudaDevice>,\n    \
                 devices: Vec<Arc<CudaDevice>>,\n    count: usize,\n}\n\n\
                 impl<'a> DeviceManager {\n    pub fn device(&self, index: usize) -> Arc<CudaDevice> {\n        \
                 self.devices[index].clone()\n    }\n\n    pub fn len(&self) -> usize {\n        \
                 self.count\n    }\n}\n",
            ),
            (
                "src/worker.rs",
                "use std::sync::Arc;\nuse crate::devices::DeviceManager;\n\n\
                 pub struct Worker {\n    manager: Arc<DeviceManager>,\n}\n\n\
                 impl Worker {\n    pub fn run(&self, i: usize) {\n        \
                 self.manager.device(i).bind_to_thread().unwrap();\n        \
                 self.manager.first.bind_to_thread().unwrap();\n        \
                 let _ = self.manager.len();\n    }\n}\n",
            ),
        ],
    );
    let found: Vec<String> = warnings(&dir, &[])
        .iter()
        .map(|line| line.split(": `").next().unwrap_or_default().to_owned())
        .collect();
    // The method's and the field's types come from `devices.rs`, written with its imports.
    assert_eq!(
        found,
        [
            "src/worker.rs:10:32: warning[stray_set_device]",
            "src/worker.rs:11:28: warning[stray_set_device]"
        ]
    );
}

#[test]
fn a_chooser_that_returns_nothing_of_its_callers_chooses_whatever_they_pass() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/devices.py",
                "import torch\n\n\ndef current():\n    return torch.device(torch.cuda.current_device())\n\n\n\
                 def load_device(parameters, dtype):\n    dev = current()\n    size = parameters * 2\n    \
                 if size > 3:\n        return torch.device(\"cpu\")\n    return dev\n\n\n\
                 def pick(cfg):\n    chosen = cfg.device or current()\n    return chosen\n\n\n\
                 def first(devices):\n    for device in devices:\n        return device\n    return current()\n",
            ),
            (
                "pkg/model.py",
                "from pkg import devices\n\n\ndef place(x, n, dtype, args, known):\n    \
                 x = x.to(devices.load_device(n, dtype))\n    x = x.to(devices.pick(args))\n    \
                 x = x.to(devices.first(known))\n    return x.to(devices.first(None))\n",
            ),
        ],
    );
    let found: Vec<String> = warnings(&dir, &[])
        .iter()
        .filter(|line| line.starts_with("pkg/model.py"))
        .map(|line| line.split(": `").next().unwrap_or_default().to_owned())
        .collect();
    // `load_device` returns its own choice whatever it is passed; `pick` and `first` may return
    // what their callers passed (`cfg.device`, an element of `devices`), so only `first(None)`,
    // passing nothing that could be a device, leaves them the choice.
    assert_eq!(
        found,
        [
            "pkg/model.py:5:14: warning[implicit_device]",
            "pkg/model.py:8:17: warning[implicit_device]"
        ]
    );
}

#[test]
fn relative_imports_in_namespace_packages_start_from_the_import_root() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            (
                "vendored/modules/management.py",
                "import torch\n\n\ndef get_device():\n    return torch.device(torch.cuda.current_device())\n",
            ),
            (
                "vendored/modules/encoder.py",
                "from . import management\n\n\ndef encode(x):\n    return x.to(management.get_device())\n",
            ),
            ("app.py", "import vendored.modules.encoder\n"),
        ],
    );
    let found = warnings(&dir, &[]);
    assert!(
        found
            .iter()
            .any(|line| line
                .starts_with("vendored/modules/encoder.py:5:17: warning[implicit_device]")),
        "{found:?}"
    );
}

/// A fallback written by hand around the project's own chooser (`if let Ok(d) = open()`, a
/// function that opens GPU 0) is a fallback as one around `Device::new_cuda(0)` is, and one
/// implicit choice, not two; one whose failure is said is no silent fallback.
#[test]
fn fallbacks_around_a_project_chooser_are_fallbacks() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("pick", CANDLE)),
            (
                "src/lib.rs",
                "use candle_core::Device;\n\n\
                 pub fn runtime_device() -> Device {\n    \
                 if let Ok(device) = open_accelerator() {\n        return device;\n    }\n    \
                 Device::Cpu\n}\n\n\
                 pub fn told() -> Device {\n    match open_accelerator() {\n        \
                 Ok(device) => device,\n        Err(error) => {\n            \
                 eprintln!(\"no GPU ({error}): on the CPU\");\n            Device::Cpu\n        }\n    \
                 }\n}\n\n\
                 fn open_accelerator() -> candle_core::Result<Device> {\n    Device::new_cuda(0)\n}\n",
            ),
        ],
    );
    let found = rules_found(&dir, &["-W", "silent_cpu_fallback"]);
    assert_eq!(
        found,
        [
            "src/lib.rs:4:25: warning[implicit_device]",
            "src/lib.rs:4:25: warning[silent_cpu_fallback]",
            "src/lib.rs:11:11: warning[implicit_device]",
            "src/lib.rs:21:22: warning[hardcoded_device]",
        ]
    );
}

/// A project type made from an opened GPU alone (`Self::try_new(dev)`, `Self::new(Arc::new(gpu))`)
/// is that GPU in another form: the functions that return it choose for their callers, through
/// locals and the arms of a `match`, and so does a `Default` impl that returns one. A type made
/// from the device and other things (a model) is no device: its maker's callers choose nothing;
/// and a function that takes its caller's device preference calls a chooser where asked to.
#[test]
fn a_type_made_from_an_opened_gpu_alone_is_a_device_its_makers_choose() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("dev", "cudarc = \"0.19\"")),
            (
                "src/lib.rs",
                "use std::sync::Arc;\n\nuse cudarc::driver::CudaDevice;\n\n\
                 pub struct Gpu {\n    dev: Arc<CudaDevice>,\n}\n\n\
                 impl Gpu {\n    pub fn try_default() -> Result<Gpu, String> {\n        \
                 let dev = CudaDevice::new(0);\n        match dev {\n            \
                 Ok(dev) => Self::try_new(dev),\n            _ => Err(\"no GPU\".into()),\n        \
                 }\n    }\n\n    \
                 fn try_new(dev: Arc<CudaDevice>) -> Result<Gpu, String> {\n        \
                 Ok(Gpu { dev })\n    }\n}\n\n\
                 pub struct Device {\n    gpu: Arc<Gpu>,\n}\n\n\
                 impl Device {\n    pub fn cuda() -> Result<Self, String> {\n        \
                 match Gpu::try_default() {\n            \
                 Ok(gpu) => Ok(Self::new(Arc::new(gpu))),\n            \
                 Err(error) => Err(error),\n        }\n    }\n\n    \
                 fn new(gpu: Arc<Gpu>) -> Self {\n        Device { gpu }\n    }\n}\n\n\
                 pub struct Model {\n    device: Device,\n    layers: usize,\n}\n\n\
                 impl Model {\n    pub fn load(layers: usize) -> Result<Model, String> {\n        \
                 let device = Device::cuda()?;\n        Ok(Model { device, layers })\n    }\n}\n\n\
                 pub fn serve() -> Result<usize, String> {\n    \
                 let model = Model::load(2)?;\n    Ok(model.layers)\n}\n\n\
                 pub enum DevicePreference {\n    Auto,\n    Cpu,\n}\n\n\
                 pub fn resolve(preference: DevicePreference) -> Result<Device, String> {\n    \
                 match preference {\n        DevicePreference::Auto => Device::cuda(),\n        \
                 DevicePreference::Cpu => Err(\"no CPU device here\".into()),\n    }\n}\n",
            ),
        ],
    );
    let found = rules_found(&dir, &[]);
    assert_eq!(
        found,
        [
            "src/lib.rs:11:35: warning[hardcoded_device]",
            "src/lib.rs:29:15: warning[implicit_device]",
            "src/lib.rs:47:22: warning[implicit_device]",
        ]
    );
}

/// A class that imports module-level functions into its body adopts them as methods: in each,
/// `self` is an instance of that class, and `self.choose_device()` calls the chooser the class
/// imported from yet another module.
#[test]
fn functions_a_class_body_imports_are_its_methods() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            (
                "gen/__init__.py",
                "class Generator:\n    from .actions.choose import choose_device\n    \
                 from .actions.render import render\n",
            ),
            (
                "gen/actions/choose.py",
                "import torch\n\n\ndef choose_device(self, options):\n    \
                 if options.cpu_only:\n        return \"cpu\"\n    \
                 if torch.cuda.is_available():\n        return \"cuda\"\n    return \"cpu\"\n",
            ),
            (
                "gen/actions/render.py",
                "import torch\n\n\ndef render(self, options, seed):\n    \
                 device = self.choose_device(options)\n    \
                 return torch.Generator(device=\"cpu\" if device == \"mps\" else device)\n",
            ),
        ],
    );
    let lines = warnings(&dir, &[]);
    assert_eq!(
        lines,
        [
            "gen/actions/choose.py:8:16: warning[implicit_device]: `\"cuda\"` uses whatever \
             device is current",
            "gen/actions/render.py:5:14: warning[implicit_device]: \
             `self.choose_device(options)` uses whatever device is current",
        ],
        "{lines:?}"
    );
}

/// A project's own device enum, opened by a function that matches on it (`Device::Cuda(n) =>
/// new_cuda(n)`): the GPU a variant names where the function is called (`Device::Cuda(0)`), a
/// choice by availability between its variants, and the calls of that choice.
#[test]
fn gpus_named_by_a_projects_own_device_enum_are_followed() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("pipe", CANDLE)),
            ("src/lib.rs", "pub mod config;\npub mod pipeline;\n"),
            (
                "src/config.rs",
                "use candle_core::Device as CandleDevice;\n\n\
                 pub enum Device {\n    Cpu,\n    Cuda(usize),\n    Metal(usize),\n}\n\n\
                 pub struct Config {\n    pub device: CandleDevice,\n}\n\n\
                 impl Config {\n    pub fn autodetect() -> Self {\n        \
                 if candle_core::utils::cuda_is_available() {\n            \
                 Self::new(Device::Cuda(0))\n        \
                 } else if candle_core::utils::metal_is_available() {\n            \
                 Self::new(Device::Metal(0))\n        } else {\n            \
                 Self::new(Device::Cpu)\n        }\n    }\n\n    \
                 pub fn new(device: Device) -> Self {\n        let device = match device {\n            \
                 Device::Cpu => CandleDevice::Cpu,\n            \
                 Device::Cuda(n) => CandleDevice::new_cuda(n).unwrap(),\n            \
                 Device::Metal(n) => CandleDevice::new_metal(n).unwrap(),\n        };\n        \
                 Self { device }\n    }\n}\n",
            ),
            (
                "src/pipeline.rs",
                "use crate::config::Config;\n\npub fn start() -> Config {\n    Config::autodetect()\n}\n",
            ),
        ],
    );
    let lines = warnings(&dir, &["-W", "silent_cpu_fallback"]);
    assert_eq!(
        lines,
        [
            "src/config.rs:16:13: warning[implicit_device]: `if cuda_is_available() { new(..) } \
             else { Cpu }` chooses the device implicitly",
            "src/config.rs:16:13: warning[silent_cpu_fallback]: `if cuda_is_available() { \
             new(..) } else { Cpu }` may quietly return the CPU, and nothing checks",
            // Metal's device 0 is the Mac's one GPU.
            "src/config.rs:16:36: warning[hardcoded_device]: hard-coded GPU ordinal `0` in \
             `Self::new`",
            "src/pipeline.rs:4:5: warning[implicit_device]: `Config::autodetect` chooses the \
             device for its caller",
        ],
        "{lines:?}"
    );
}

/// Model code through the project's class hierarchy: a module class whose base is another
/// module's class that subclasses a third's `nn.Module` subclass is model code, decided after
/// every file is checked; a class whose base is no module class is not.
#[test]
fn module_classes_are_known_through_other_modules_bases() {
    let dir = tempfile::tempdir().expect("temp dir");
    let forward = "    def forward(self, x):\n        \
                   return x + torch.arange(x.shape[-1])\n";
    let leaf = format!("import torch\nfrom pkg.mid import Mid\n\n\nclass Leaf(Mid):\n{forward}");
    let plain = format!(
        "import torch\nfrom pkg.config import Settings\n\n\nclass Plain(Settings):\n{forward}"
    );
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/base.py",
                "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n",
            ),
            (
                "pkg/mid.py",
                "from pkg.base import Base\n\n\nclass Mid(Base):\n    pass\n",
            ),
            ("pkg/config.py", "class Settings:\n    pass\n"),
            ("pkg/leaf.py", &leaf),
            ("pkg/plain.py", &plain),
        ],
    );
    let lines = warnings(&dir, &["-W", "unplaced_tensor"]);
    assert_eq!(
        lines,
        [
            "pkg/leaf.py:7:20: warning[unplaced_tensor]: `torch.arange(x.shape[-1])` is made on \
          the CPU and meets `x`, which is on the model's device"
        ],
        "{lines:?}"
    );
}

/// Rust model code through a whole run: a candle `Module`'s mask made on the CPU is found with
/// `-W unplaced_tensor` (the level reaches the walk), and not reported at the default level.
#[test]
fn rust_model_code_is_checked_where_the_rule_is_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("Cargo.toml", &package("attend", CANDLE)),
            (
                "src/lib.rs",
                "use candle_core::{DType, Device, Module, Result, Tensor};\n\
                 pub struct Mask;\n\
                 impl Module for Mask {\n    \
                     fn forward(&self, xs: &Tensor) -> Result<Tensor> {\n        \
                         let mask = Tensor::tril2(xs.dim(1)?, DType::F32, &Device::Cpu)?;\n        \
                         xs.broadcast_mul(&mask)\n    \
                     }\n\
                 }\n",
            ),
        ],
    );
    assert_eq!(warnings(&dir, &[]), Vec::<String>::new());
    assert_eq!(
        warnings(&dir, &["-W", "unplaced_tensor"]),
        [
            "src/lib.rs:5:20: warning[unplaced_tensor]: `Tensor::tril2(xs.dim(1)?, DType::F32, \
             &Device::Cpu)` is made on the CPU and meets `xs`, which is on the model's device"
        ]
    );
}
