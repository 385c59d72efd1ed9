//! Which Python files are library code is decided by the project's module graph: a module is
//! library code when another module imports it (by a bare name from beside it, or by a dotted
//! name from the project's root or a Python project's own root inside it, through folders
//! without `__init__.py`), whatever its top level
//! does; a file that no module imports is a program when it runs, and library code when it only
//! defines things.

mod common;

use common::{placement, stdout, write_files};

/// The findings of a tree, one `path:line: rule` each.
fn findings(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(dir.path(), files);
    let path = dir.path().to_str().expect("a UTF-8 path");
    stdout(&placement(&[path, "--message-format", "short"]))
        .lines()
        .filter_map(|line| {
            // `path:line:column: warning[rule]: message`
            let (place, rest) = line.split_once(": warning[")?;
            let (path_line, _column) = place.rsplit_once(':')?;
            let rule = rest.split(']').next()?;
            Some(format!("{path_line}: {rule}"))
        })
        .collect()
}

const SETS_DEVICE: &str = "import torch\n\n\ndef bind():\n    torch.cuda.set_device(0)\n";

#[test]
fn a_module_of_a_namespace_package_that_library_code_imports_is_library_code() {
    let found = findings(&[
        ("backend/memory/management.py", SETS_DEVICE),
        (
            "backend/routes.py",
            "import backend.memory.management\n\n\ndef serve():\n    \
             backend.memory.management.bind()\n",
        ),
    ]);
    assert_eq!(found, ["backend/memory/management.py:5: stray_set_device"]);
}

#[test]
fn a_module_under_src_is_imported_by_its_name_from_src() {
    let found = findings(&[
        ("src/helpers/devices.py", SETS_DEVICE),
        (
            "src/app.py",
            "from helpers import devices\n\n\ndef start():\n    devices.bind()\n",
        ),
    ]);
    assert_eq!(found, ["src/helpers/devices.py:5: stray_set_device"]);
}

#[test]
fn a_scripts_dotted_import_starts_from_the_scripts_folder() {
    // `python v4/train.py` puts `v4/` first on the import path: `src.model` is `v4/src/model.py`,
    // which works at import and is library code all the same.
    let found = findings(&[
        (
            "v4/src/model.py",
            "import torch\n\nprint(\"building the kernel\")\n\n\ndef bind():\n    \
             torch.cuda.set_device(0)\n",
        ),
        (
            "v4/train.py",
            "from src.model import bind\n\nif __name__ == \"__main__\":\n    bind()\n",
        ),
    ]);
    assert_eq!(found, ["v4/src/model.py:7: stray_set_device"]);
}

#[test]
fn a_module_that_works_at_import_is_library_code_when_library_code_imports_it() {
    // It picks the device when imported; the model code beside it imports what it picked.
    let found = findings(&[
        (
            "devices.py",
            "import torch\n\ntorch.cuda.set_device(0)\ndevice = torch.device(\"cuda\")\n",
        ),
        (
            "model.py",
            "import torch\nfrom devices import device\n\n\n\
             def build():\n    return torch.zeros(1, device=device)\n",
        ),
    ]);
    // And the device it picked is the current one, wherever the model code places with it.
    assert_eq!(
        found,
        [
            "devices.py:3: stray_set_device",
            "model.py:6: implicit_device"
        ]
    );
}

#[test]
fn a_module_of_definitions_that_no_file_imports_is_library_code() {
    // A notebook's helper (`from agent import Agent` in a cell): it exists to be imported.
    let found = findings(&[(
        "agent.py",
        "import torch\n\n\nclass Agent:\n    def act(self, x):\n        return x.cuda()\n",
    )]);
    assert_eq!(found, ["agent.py:6: implicit_device"]);
}

#[test]
fn a_helper_that_only_a_script_imports_is_library_code() {
    // A script that no module imports is a program; the helper beside it is imported by
    // another module, so it is library code, whoever imports it (issue 20's module graph).
    let found = findings(&[
        (
            "train.py",
            "import torch\nfrom utils import bind\n\ntorch.cuda.set_device(0)\nbind()\n",
        ),
        ("utils.py", SETS_DEVICE),
    ]);
    assert_eq!(found, ["utils.py:5: stray_set_device"]);
}

#[test]
fn a_function_the_main_guard_calls_is_library_code_when_another_module_imports_it() {
    // `eval/knn.py` runs as a script through its main guard, and a launcher module imports its
    // `main` to call it: `main`, and what only it calls, are library code then.
    let knn = "import torch\n\n\ndef setup():\n    return torch.zeros(1).cuda()\n\n\ndef main():\n    setup()\n\n\nif __name__ == \"__main__\":\n    main()\n";
    let alone = findings(&[("pkg/__init__.py", ""), ("pkg/knn.py", knn)]);
    assert_eq!(alone, Vec::<String>::new());
    let imported = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/knn.py", knn),
        (
            "pkg/run.py",
            "def launch():\n    from pkg.knn import main\n    main()\n",
        ),
    ]);
    assert_eq!(imported, ["pkg/knn.py:5: implicit_device"]);
}

#[test]
fn a_module_of_a_package_that_reads_its_command_line_is_a_script_unless_imported() {
    // `pkg/launch.py`, run as `python -m pkg.launch`: it reads its command line at its top
    // level, and has no importer.
    let launch = "import os\nimport sys\nimport torch\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = sys.argv[1]\nx = torch.zeros(1).cuda()\nprint(x)\n";
    let alone = findings(&[("pkg/__init__.py", ""), ("pkg/launch.py", launch)]);
    assert_eq!(alone, Vec::<String>::new());
    let imported = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/launch.py", launch),
        ("pkg/serve.py", "from pkg import launch\n"),
    ]);
    assert_eq!(
        imported,
        [
            "pkg/launch.py:5: late_visible_devices",
            "pkg/launch.py:6: implicit_device"
        ]
    );
    // A module of the package's API that warns at import (a deprecation shim) is imported by
    // the package's users, not run: library code, though no file of the project imports it.
    let shim =
        "import warnings\nimport torch\n\nwarnings.warn(\"moved\")\nx = torch.zeros(1).cuda()\n";
    let found = findings(&[("pkg/__init__.py", ""), ("pkg/old.py", shim)]);
    assert_eq!(found, ["pkg/old.py:5: implicit_device"]);
    // Linted alone (pre-commit, an editor), the file cannot know that no other file imports
    // it: it stays library code.
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[("pkg/__init__.py", ""), ("pkg/launch.py", launch)],
    );
    let file = dir.path().join("pkg/launch.py");
    let alone = stdout(&placement(&[
        file.to_str().expect("a UTF-8 path"),
        "--message-format",
        "short",
    ]));
    assert_eq!(alone.matches("warning[").count(), 2, "{alone}");
}

#[test]
fn a_helper_in_a_scripts_folder_that_another_module_imports_is_library_code() {
    let helpers = "import torch\n\n\ndef load():\n    return torch.zeros(1).cuda()\n";
    let run = "from helpers import load\n\nload()\n";
    let alone = findings(&[("scripts/helpers.py", helpers)]);
    assert_eq!(alone, Vec::<String>::new());
    let imported = findings(&[("scripts/helpers.py", helpers), ("scripts/run.py", run)]);
    assert_eq!(imported, ["scripts/helpers.py:5: implicit_device"]);
}

#[test]
fn what_the_main_guard_calls_is_library_code_where_another_module_imports_it() {
    // `main` is imported through a namespace package from `src/` (no `__init__.py`); `load`,
    // which only `main` calls here, is imported by a server module.
    let train = "import torch\n\n\ndef load():\n    return torch.zeros(1).cuda()\n\n\n\
                 def main():\n    torch.cuda.set_device(0)\n    load()\n\n\n\
                 if __name__ == \"__main__\":\n    main()\n";
    let by_load = findings(&[
        ("src/kit/train.py", train),
        ("src/kit/serve.py", "from kit.train import load\n"),
    ]);
    assert_eq!(by_load, ["src/kit/train.py:5: implicit_device"]);
    let by_main = findings(&[
        ("src/kit/train.py", train),
        (
            "src/kit/cli.py",
            "def run():\n    from kit.train import main\n\n    main()\n",
        ),
    ]);
    assert_eq!(
        by_main,
        [
            "src/kit/train.py:5: implicit_device",
            "src/kit/train.py:9: stray_set_device"
        ]
    );
}

#[test]
fn a_package_under_a_namespace_package_is_imported_by_its_names_from_the_root() {
    // `top/` has no `__init__.py`, `top/dac/` has one: `top/dac/infer.py` is `dac.infer` to
    // its package and `top.dac.infer` to the project's other files. It works at its top level,
    // and a tool imports its `load`.
    let infer = "import torch\n\nprint(\"loading\")\n\n\ndef load(device=\"cuda\"):\n    \
                 return torch.zeros(1).to(device)\n";
    let found = findings(&[
        ("top/dac/__init__.py", ""),
        ("top/dac/infer.py", infer),
        (
            "top/serve.py",
            "from top.dac.infer import load\n\n\ndef run():\n    load()\n",
        ),
    ]);
    assert_eq!(found, ["top/dac/infer.py:6: implicit_device"]);
}

#[test]
fn a_python_project_inside_a_repository_is_an_import_root() {
    // `models/codec/dualcodec/pyproject.toml`: its package is installed and imported as
    // `dualcodec`, not by its path from the repository's root, also where the imported module is
    // in a folder without `__init__.py`. A module with a main guard that its package's
    // command-line module imports is library code.
    let found = findings(&[
        (
            "models/codec/dualcodec/pyproject.toml",
            "[project]\nname = \"dualcodec\"\n",
        ),
        ("models/codec/dualcodec/dualcodec/__init__.py", ""),
        (
            "models/codec/dualcodec/dualcodec/infer/voicebox/utils.py",
            "import torch\n\n\ndef load(path, device=\"cuda\"):\n    \
             return torch.load(path).to(device)\n\n\nif __name__ == \"__main__\":\n    \
             load(\"model.pt\")\n",
        ),
        (
            "models/codec/dualcodec/dualcodec/infer/voicebox/cli.py",
            "def main():\n    from dualcodec.infer.voicebox.utils import load\n\n    \
             load(\"m.pt\", \"cpu\")\n\n\nif __name__ == \"__main__\":\n    main()\n",
        ),
    ]);
    assert_eq!(
        found,
        ["models/codec/dualcodec/dualcodec/infer/voicebox/utils.py:4: implicit_device"]
    );
}

#[test]
fn verbose_says_why_each_program_is_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("train.py", "import torch\n\nprint(torch.zeros(1).cuda())\n"),
            ("scripts/helpers.py", "def h():\n    pass\n"),
            ("scripts/run.py", "from helpers import h\n\nh()\n"),
            ("tests/test_a.py", "def test_a():\n    pass\n"),
        ],
    );
    let path = dir.path().to_str().expect("a UTF-8 path");
    let output = placement(&[path, "--verbose"]);
    let notes: Vec<String> = common::stderr(&output)
        .lines()
        .filter(|line| line.starts_with("note: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        notes,
        [
            "note: scripts/run.py: a program: a file of a `scripts`, `examples`, `tools`, `bin` \
             or `benchmarks` folder, and no other file of the project imports it",
            "note: tests/test_a.py: a test file, by pytest's conventions",
            "note: train.py: a program: it does work at its top level, and no other file of the \
             project imports it",
        ]
    );
}

#[test]
fn a_chooser_of_a_namespace_package_is_known_by_the_name_its_importers_use() {
    // `modules/` has no `__init__.py`: `modules/torch_utils.py` is `torch_utils` to the files
    // beside it and `modules.torch_utils` to `from modules.torch_utils import get_device`.
    let utils = "import torch\n\n\ndef get_device():\n    if torch.cuda.is_available():\n        \
                 return torch.device(\"cuda\")\n    return torch.device(\"cpu\")\n";
    let found = findings(&[
        ("modules/torch_utils.py", utils),
        (
            "modules/text.py",
            "from modules.torch_utils import get_device\n\n\ndef encode(ids):\n    \
             return ids.to(get_device())\n",
        ),
    ]);
    assert_eq!(
        found,
        [
            "modules/text.py:5: implicit_device",
            "modules/torch_utils.py:6: implicit_device"
        ]
    );
}

#[test]
fn the_test_functions_of_a_module_that_imports_pytest_are_tests() {
    // `pytest benchmarking/optimizer_benchmark.py`: a test file by its use, not its name.
    let bench = "import pytest\nimport torch\n\n\n@pytest.mark.benchmark\ndef test_step():\n    \
                 return torch.zeros(1).cuda()\n\n\ndef helper():\n    return torch.ones(1).cuda()\n";
    let found = findings(&[("benchmarking/optimizer_benchmark.py", bench)]);
    assert_eq!(
        found,
        ["benchmarking/optimizer_benchmark.py:11: implicit_device"]
    );
}

#[test]
fn a_function_another_module_launches_is_where_a_process_starts() {
    // `misc.launch_job` hands `mpu.run` to `torch.multiprocessing.spawn`: each process starts
    // in `run`, which sets its own device.
    let mp = "import torch\n\n\ndef run(rank):\n    torch.cuda.set_device(rank)\n";
    let misc = "import torch\nimport pkg.mp as mpu\n\n\ndef launch_job():\n    \
                torch.multiprocessing.spawn(mpu.run, nprocs=2)\n";
    let alone = findings(&[("pkg/__init__.py", ""), ("pkg/mp.py", mp)]);
    assert_eq!(alone, ["pkg/mp.py:5: stray_set_device"]);
    let launched = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/mp.py", mp),
        ("pkg/misc.py", misc),
    ]);
    assert_eq!(launched, Vec::<String>::new());
}

#[test]
fn what_a_packages_main_module_imports_to_run_still_starts_the_program() {
    // `python -m pkg` runs `__main__.py`, which imports the CLI's main to call it: the main is
    // the program, as its own main guard says, not library code another module calls.
    let cli = "import torch\nfrom fire import Fire\n\n\ndef main(device=\"cuda\"):\n    \
               return torch.zeros(1, device=device)\n\n\nif __name__ == \"__main__\":\n    \
               Fire(main)\n";
    let found = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/cli.py", cli),
        ("pkg/__main__.py", "from .cli import main\n\nmain()\n"),
    ]);
    assert!(found.is_empty(), "{found:?}");
    // Imported by a module of the package, the same function is library code.
    let found = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/cli.py", cli),
        (
            "pkg/api.py",
            "from .cli import main\n\n\ndef run():\n    return main()\n",
        ),
    ]);
    assert_eq!(found, ["pkg/cli.py:5: implicit_device"]);
}

#[test]
fn a_test_module_of_a_packages_api_is_library_code() {
    // `pkg/apis/test.py` is a test by unittest's name pattern, and here a module of the
    // package's API that its `__init__.py` re-exports.
    let helper = "import torch\n\n\ndef collect_results(parts):\n    \
                  return torch.tensor(parts, device=\"cuda\")\n";
    let found = findings(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/apis/__init__.py",
            "from .test import collect_results\n",
        ),
        ("pkg/apis/test.py", helper),
    ]);
    assert_eq!(found, ["pkg/apis/test.py:5: implicit_device"]);
    // Not imported, it is a test file.
    let found = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/apis/__init__.py", ""),
        ("pkg/apis/test.py", helper),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_test_utilities_module_that_its_package_imports_is_library_code() {
    // `pkg/utils/test_utils.py` is a test by pytest's name pattern; its package's `__init__.py`
    // imports it, so every import of the package runs its top level.
    let helper = "import torch\n\nskip_if_not_gpu = torch.cuda.is_available()\n";
    let found = findings(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/utils/__init__.py",
            "from .test_utils import skip_if_not_gpu\n",
        ),
        ("pkg/utils/test_utils.py", helper),
    ]);
    assert_eq!(found, ["pkg/utils/test_utils.py:3: cuda_at_import"]);
    // Imported only by tests, it is theirs.
    let found = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/utils/__init__.py", ""),
        ("pkg/utils/test_utils.py", helper),
        (
            "tests/test_model.py",
            "from pkg.utils.test_utils import skip_if_not_gpu\n",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_program_that_only_its_test_imports_is_still_a_program() {
    // An example's `main`, handed to a launcher from its main guard; its test imports it to run
    // it, which makes it no library code.
    let example = "import torch\nfrom torch.distributed import launcher\n\n\n\
                   def main(argv):\n    torch.cuda.set_device(0)\n\n\n\
                   if __name__ == \"__main__\":\n    launcher.elastic_launch(entrypoint=main)([])\n";
    let test = "from ..main import main\n\n\ndef test_main():\n    main([])\n";
    let found = findings(&[
        ("examples/torchrec/main.py", example),
        ("examples/torchrec/tests/__init__.py", ""),
        ("examples/torchrec/tests/test_example.py", test),
    ]);
    assert!(found.is_empty(), "{found:?}");
    // A helper that the main guard's function calls, and that a test imports on its own, is a
    // unit that other code uses: library code.
    let sample = "import torch\n\n\ndef pick():\n    torch.cuda.set_device(0)\n\n\n\
                   def main():\n    pick()\n\n\nif __name__ == \"__main__\":\n    main()\n";
    let found = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/sample.py", sample),
        ("tests/test_sample.py", "from pkg.sample import pick\n"),
    ]);
    assert_eq!(found, ["pkg/sample.py:5: stray_set_device"]);
    let found = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/sample.py", sample),
        ("tests/test_sample.py", "from pkg.sample import main\n"),
    ]);
    assert!(found.is_empty(), "{found:?}");
    // Imported by a module that is no test, its `main` is library code.
    let found = findings(&[
        ("examples/torchrec/main.py", example),
        (
            "examples/torchrec/run_all.py",
            "from main import main\n\n\ndef run():\n    main([])\n",
        ),
    ]);
    assert_eq!(found, ["examples/torchrec/main.py:6: stray_set_device"]);
}

/// A function that `pyproject.toml` installs as a command (`[project.scripts]`, poetry's
/// `[tool.poetry.scripts]`) starts a program, as a main guard does; a class it makes that other
/// modules make too stays library code.
#[test]
fn an_installed_command_starts_a_program() {
    let cli = "import torch\nfrom pkg.predictor import Predictor\n\n\n\
               def predict():\n    device = torch.device(\"cuda\")\n    \
               return Predictor(device=device)\n\n\n\
               def helper(model):\n    return model.to(torch.device(\"cuda\"))\n";
    let predictor = "import torch\n\n\nclass Predictor:\n    \
                     def __init__(self, device=torch.device(\"cuda\")):\n        \
                     self.model = torch.nn.Linear(2, 2).to(device)\n";
    for scripts in [
        "[project.scripts]\npkg-predict = \"pkg.cli:predict\"\n",
        "[tool.poetry.scripts]\npkg-predict = { callable = \"pkg.cli:predict\" }\n",
    ] {
        let found = findings(&[
            ("pyproject.toml", scripts),
            ("pkg/__init__.py", ""),
            ("pkg/cli.py", cli),
            ("pkg/predictor.py", predictor),
            (
                "pkg/serve.py",
                "from pkg.predictor import Predictor\n\nPREDICTOR = None\n",
            ),
        ]);
        assert_eq!(
            found,
            [
                "pkg/cli.py:11: implicit_device",
                "pkg/predictor.py:5: implicit_device"
            ],
            "{scripts}"
        );
    }
}
