//! Resolution, entry points and limits of the Python checker, on small modules.

use super::*;
use crate::diagnostic::Finding;
use crate::project::python_files::{self, Checked, lint};
use crate::source::FileRole;

/// A file's context with no other files in the project.
fn context<'a>(
    api: &'a Api,
    role: FileRole,
    in_package: bool,
    module: &str,
    entry_points: &'a [String],
) -> PyContext<'a> {
    static NO_PROJECT: std::sync::LazyLock<Project> = std::sync::LazyLock::new(Project::default);
    PyContext {
        api,
        role,
        in_package,
        module: module.to_owned(),
        entry_points,
        is_init: false,
        project: &NO_PROJECT,
        folder: String::new(),
        rooted: Vec::new(),
        model_code: true,
    }
}

/// `rule:line` of each finding of `source`, linted as a module of a package.
fn findings_with(source: &str, role: FileRole, entry_points: &[String]) -> Vec<String> {
    let api = Api::python(Default::default()).expect("tables");
    let cx = context(&api, role, true, "pkg.mod", entry_points);
    lint(source, &cx)
        .iter()
        .map(|f| {
            let line = source[..f.span.start].matches('\n').count() + 1;
            format!("{}:{line}", f.rule.name)
        })
        .collect()
}

fn findings(source: &str) -> Vec<String> {
    findings_with(source, FileRole::Library, &[])
}

#[test]
fn imports_are_followed_in_all_their_forms() {
    let source = "\
import torch as T
from torch import cuda
from torch.cuda import set_device as use
import torch.cuda

def a(): T.cuda.set_device(1)
def b(): cuda.set_device(1)
def c(): use(1)
def d(): torch.cuda.set_device(1)
def e():
    import torch.cuda as tc
    tc.set_device(1)
";
    assert_eq!(
        findings(source),
        [
            "stray_set_device:6",
            "stray_set_device:7",
            "stray_set_device:8",
            "stray_set_device:9",
            "stray_set_device:12"
        ]
    );
}

#[test]
fn what_a_library_function_calls_is_shared_though_the_main_guard_calls_it_too() {
    let source = "\
import torch


def to_otf(psf):
    return torch.zeros(4).type_as(psf)


def deblur(img, psf):
    return img * to_otf(psf)


def demo():
    return torch.zeros(4).type_as(torch.ones(4).cuda())


if __name__ == '__main__':
    print(to_otf(torch.ones(4)))
    demo()
";
    // `demo` is the program's alone; `to_otf` is `deblur`'s too.
    assert_eq!(findings(source), ["implicit_device:5"]);
}

#[test]
fn a_lazy_import_proxy_is_the_module_it_imports() {
    let source = "\
class _LazyTorch:
    @staticmethod
    def __getattribute__(name):
        import torch
        return getattr(torch, name)


torch = _LazyTorch()


def pin():
    torch.cuda.set_device(1)
";
    assert_eq!(findings(source), ["stray_set_device:12"]);
}

#[test]
fn the_projects_own_names_hide_the_librarys() {
    let source = "\
from torch.cuda import set_device
from .dist import current_device

def set_device(model, device):
    return model.to(device)

def a(m): set_device(m, 'cpu')
def b(): return current_device()
def c(torch): torch.cuda.set_device(0)
";
    assert_eq!(findings(source), Vec::<String>::new());
}

#[test]
fn launched_configured_and_main_guarded_functions_are_entry_points() {
    let source = "\
import multiprocessing
import torch
import torch.multiprocessing as mp

def worker(rank): torch.cuda.set_device(rank)
def thread_worker(rank): torch.cuda.set_device(rank)
def configured(rank): torch.cuda.set_device(rank)
def helper(): torch.cuda.set_device(0)
def library(): torch.cuda.set_device(0)
def benchmark(size): torch.cuda.set_device(0)
def cli(): torch.cuda.set_device(0)
def main():
    helper()
    mp.spawn(worker, nprocs=2)
    multiprocessing.Process(target=thread_worker).start()

if __name__ == '__main__':
    main()
    benchmark.run(print_data=True)
    fire.Fire(cli)
";
    let configured = ["pkg.mod.configured".to_owned()];
    assert_eq!(
        findings_with(source, FileRole::Library, &configured),
        ["stray_set_device:9"]
    );
}

#[test]
fn scripts_and_tests_choose_their_devices() {
    let source = "import torch\n\ndef f():\n    torch.cuda.set_device(1)\n    return torch.zeros(1, device='cuda:1')\n";
    assert_eq!(findings(source).len(), 2);
    for role in [FileRole::BinaryRoot, FileRole::EntryFile] {
        assert_eq!(findings_with(source, role, &[]), Vec::<String>::new());
    }
    // A module with a main guard outside any package is a script.
    let script = format!("{source}\nif __name__ == '__main__':\n    f()\n");
    let api = Api::python(Default::default()).expect("tables");
    let cx = context(&api, FileRole::Library, false, "train", &[]);
    assert!(lint(&script, &cx).is_empty());
}

#[test]
fn arguments_that_are_no_device_are_not_read_as_one() {
    let source = "\
import torch

def f(x, df, model):
    x.to(torch.float16)
    x.to('cpu')
    df.to_csv('a.csv')
    with torch.autocast('cuda'):
        pass
    if x.device.type == 'cuda':
        pass
    model.to(x)
    return torch.zeros(2, dtype=torch.float32, device='cpu')
";
    assert_eq!(findings(source), Vec::<String>::new());
}

#[test]
fn files_nested_beyond_the_stack_are_reported_not_walked() {
    let deep = format!("x = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(findings(&deep), ["parse_error:1"]);
    let fine = format!("x = {}1{}\n", "(".repeat(1_000), ")".repeat(1_000));
    assert!(findings(&fine).is_empty());
}

#[test]
fn configured_python_entries_are_followed_like_torchs() {
    let extra = toml::from_str(
        "[[item]]\npath = \"mylib.gpu.select\"\nrole = \"set_current_device\"\n\n\
         [[item]]\npath = \"mylib.gpu.Device\"\nrole = \"explicit_device\"\nordinal = 0\n\n\
         [[item]]\npath = \"mylib.launch.run\"\nrole = \"spawn_thread\"\nclosure = 0\n",
    )
    .expect("table");
    let api = Api::python(extra).expect("tables");
    let cx = context(&api, FileRole::Library, true, "pkg.mod", &[]);
    let source = "\
from mylib import gpu
from mylib.launch import run

def a(): gpu.select(1)
def b(): return gpu.Device(2)
def worker(rank): gpu.select(rank)
def main(): run(worker)
";
    let found: Vec<String> = lint(source, &cx)
        .iter()
        .map(|f| format!("{}:{}", f.rule.name, &source[f.span.clone()]))
        .collect();
    assert_eq!(found, ["stray_set_device:gpu.select", "hardcoded_device:2"]);
    // An entry without what its role needs names the table and the entry.
    let bad = toml::from_str("[[item]]\npath = \"mylib.gpu.Device\"\nrole = \"explicit_device\"\n")
        .expect("table");
    let err = Api::python(bad).expect_err("no ordinal");
    assert!(
        err.contains("Python") && err.contains("mylib::gpu::Device") && err.contains("ordinal"),
        "{err}"
    );
}

#[test]
fn a_module_outside_packages_that_does_work_is_a_script() {
    let api = Api::python(Default::default()).expect("tables");
    let lint_outside = |source: &str| {
        let cx = context(&api, FileRole::Library, false, "train", &[]);
        lint(source, &cx).len()
    };
    // nanoGPT's train.py: configuration, then work at the top level, no main guard.
    let script = "import torch\ndevice = 'cuda'\ntorch.manual_seed(1337)\nx = torch.zeros(1, device=device)\ntorch.cuda.set_device(0)\n";
    assert_eq!(lint_outside(script), 0);
    // A chat app run by a framework (`chainlit run app.py`): it loads its model at import.
    let app =
        "import torch\n\ndef load():\n    return torch.zeros(1, device='cuda')\n\nmodel = load()\n";
    assert_eq!(lint_outside(app), 0);
    // A module of definitions outside packages: library code when another module imports it,
    // a script included, or when no file does (it exists to be imported: by a notebook, a
    // registry).
    let module = "import torch\n\ndef pick():\n    torch.cuda.set_device(0)\n";
    let importing = |name: &str, path: &str, program: bool| {
        let summary = Summary {
            imports: [(name.into(), path.into())].into_iter().collect(),
            imported: vec![path.into()],
            program,
            outside: name != "hubconf",
            ..Summary::default()
        };
        ModuleFile {
            folder: String::new(),
            module: name.to_owned(),
            rooted: Vec::new(),
            summary: std::sync::Arc::new(summary),
        }
    };
    let findings_in = |files: Vec<ModuleFile>| {
        let project = Project::new(files);
        let mut cx = context(&api, FileRole::Library, false, "train", &[]);
        cx.project = &project;
        lint(module, &cx).len()
    };
    let this = importing("train", "torch", false);
    assert_eq!(findings_in(vec![this]), 1);
    // `hubconf.py` (torch.hub's entry, for others' programs) → `serve` → `train`.
    let chain = vec![
        importing("train", "torch", false),
        importing("serve", "train.pick", false),
        importing("hubconf", "serve", false),
        importing("run", "serve", true),
    ];
    assert_eq!(findings_in(chain), 1);
    // `run.py` → `helper` → `train`: a script's helpers are library code too.
    let chain = vec![
        importing("train", "torch", false),
        importing("helper", "train.pick", false),
        importing("run", "helper", true),
    ];
    assert_eq!(findings_in(chain), 1);
}

#[test]
fn the_first_pass_stands_unless_the_project_answers_otherwise() {
    let api = Api::python(Default::default()).expect("tables");
    let chooser =
        "import torch\n\ndef pick():\n    return 'cuda' if torch.cuda.is_available() else 'cpu'\n";
    let user = "import torch\nfrom .util import pick\n\ndef build():\n    return torch.zeros(1, device=pick())\n";
    let other = "import torch\n\ndef build():\n    return torch.zeros(1, device='cuda:1')\n";
    let files = [
        ("pkg.util", chooser),
        ("pkg.user", user),
        ("pkg.other", other),
    ];
    let firsts: Vec<Checked> = files
        .iter()
        .map(|(module, text)| {
            python_files::check(text, &context(&api, FileRole::Library, true, module, &[]))
        })
        .collect();
    let summaries = files
        .iter()
        .zip(&firsts)
        .map(|((module, _), first)| ModuleFile {
            folder: String::new(),
            module: module.to_string(),
            rooted: Vec::new(),
            summary: first.summary.clone(),
        });
    let project = Project::new(summaries);
    let rules = |findings: &[Finding]| findings.iter().map(|f| f.rule.name).collect::<Vec<_>>();
    let mut settled = Vec::new();
    for ((module, text), first) in files.iter().zip(&firsts) {
        let mut cx = context(&api, FileRole::Library, true, module, &[]);
        cx.project = &project;
        let checked = lint(text, &cx);
        let stands = first.stands_in(&project);
        if stands {
            assert_eq!(first.findings, checked, "{module}");
        }
        settled.push((*module, stands, rules(&checked)));
    }
    // `user` calls the project's chooser: checked again, the call is an implicit choice. The
    // chooser's own file, and a file that asks nothing of the project, stand.
    assert_eq!(
        settled,
        [
            ("pkg.util", true, vec!["silent_cpu_fallback"]),
            ("pkg.user", false, vec!["implicit_device"]),
            ("pkg.other", true, vec!["hardcoded_device"]),
        ]
    );
}

#[test]
fn configured_names_are_known_like_torchs() {
    let source = "\
import torch
from mylib import gpu

def pick():
    return \"cuda\" if gpu.has_gpu() else \"cpu\"

def report():
    device = \"cuda\" if torch.cuda.is_available() else \"cpu\"
    emit(device)
    return device
";
    let rules = |extra: &str| {
        let api = Api::python(toml::from_str(extra).expect("table")).expect("tables");
        let cx = context(&api, FileRole::Library, true, "pkg.mod", &[]);
        lint(source, &cx)
            .iter()
            .map(|f| {
                let line = source[..f.span.start].matches('\n').count() + 1;
                format!("{}:{line}", f.rule.name)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rules(""), ["silent_cpu_fallback:8"]);
    // A project's own availability check chooses as torch's does, and its own way of telling
    // a person what was chosen reports the choice as `print` does.
    let configured = "[names]\navailability = [\"mylib.gpu.has_gpu\"]\nreporting = [\"emit\"]\n";
    assert_eq!(rules(configured), ["silent_cpu_fallback:5"]);
}

/// Without `:=`, the names a body assigns come from its statements alone, and they are the
/// names the walk of every expression finds; with it, the walk finds the walrus's too.
#[test]
fn assigned_names_from_statements_are_those_of_the_full_walk() {
    use semantic::{Walrus, assigned_names};
    let source = "\
for i, (a, *b) in pairs:
    with open(p) as f, lock() as (g, h):
        self.w = x = y[0] = 1
    try:
        z += 1
    except E as err:
        k: int = 2
    def inner():
        hidden = 1
    class C:
        attr = 2
    if c:
        m.n.o = [lambda q: q]
    while d:
        match v:
            case _:
                last = 3
";
    let parsed = ruff_python_parser::parse_module(source).expect("valid Python");
    let body = &parsed.syntax().body;
    for nested in [false, true] {
        let walked = assigned_names(body, nested, Walrus::Possible);
        assert_eq!(assigned_names(body, nested, Walrus::Absent), walked);
        assert_eq!(walked.contains("hidden"), nested);
        assert_eq!(walked.contains("attr"), nested);
        for name in [
            "i", "a", "b", "f", "g", "h", "self.w", "x", "z", "err", "k", "m.n.o",
        ] {
            assert!(walked.contains(name), "{name} in {walked:?}");
        }
    }
    let walrus = "if (n := len(xs)) > 2:\n    pass\n";
    assert_eq!(Walrus::of(walrus), Walrus::Possible);
    let parsed = ruff_python_parser::parse_module(walrus).expect("valid Python");
    let names = assigned_names(&parsed.syntax().body, false, Walrus::Possible);
    assert!(names.contains("n"), "{names:?}");
}

#[test]
fn a_keyed_name_writes_its_key_as_debug_formatting_does() {
    for key in [
        "device",
        "device map",
        "it's",
        "a\"b",
        "back\\slash",
        "tab\t",
        "é",
        "",
    ] {
        assert_eq!(
            semantic::keyed_name("params", key),
            format!("params[{key:?}]"),
            "{key}"
        );
    }
}
