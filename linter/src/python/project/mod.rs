//! What the project's Python files tell each other: each file's [`Summary`] (its device
//! choosers, what its imports bind, the modules it imports, the functions that take a device)
//! and what it [`Asked`] of the others while it was checked; and the [`Project`] their summaries
//! make, which answers those questions (the module graph decides which modules outside packages
//! are programs: those that run and that no other file imports).

use std::ops::Range;
use std::sync::Arc;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

use ruff_python_ast as ast;

use crate::api::last_part;
use crate::python::semantic::Imports;

mod model_classes;

/// What other files need to know of this one: its device choosers, and the names its imports
/// bind at the top level (a package's `__init__.py` re-exports its modules' functions).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub choosers: Vec<String>,
    /// The choosers that may return what their caller passed them (`def get_device(device=None):
    /// return device or "cuda"`): a call that passes arguments may pass the device; and the
    /// functions that hand back the device they were given (`def int_to_device(device)`).
    pub passing: Vec<String>,
    pub imports: Imports,
    /// The modules it imports every name of (`from .devices import *`): a name it does not bind
    /// itself may be one of theirs.
    pub globs: Vec<String>,
    /// Whether the file runs as a program (a script, a test) by what it shows itself: a
    /// module outside packages that no file imports is a program when it runs.
    pub program: bool,
    /// Whether the file is a module outside packages, which may be a program's helper.
    pub outside: bool,
    /// Whether it is a test (pytest's conventions): the modules it imports are what it
    /// exercises, no less a program's or a script's for that.
    pub test: bool,
    /// Every module path it imports, wherever the import is: the project's module graph.
    pub imported: Vec<CompactString>,
    /// Its functions that take a device (`def generate(model, params, device)`).
    pub device_params: Vec<DeviceParam>,
    /// The names of the methods its classes define (constructors aside), one for each.
    pub methods: Vec<CompactString>,
    /// Other modules' functions it hands to a process or thread launcher, by dotted path.
    pub launched: Vec<String>,
    /// Its functions that return torch's module of an accelerator (`def get_torch_device():
    /// return getattr(torch, get_device_name())`): their dotted paths, and the module's
    /// (`torch.cuda`), whose device API a call's result then has.
    pub device_modules: Vec<(String, String)>,
    /// Its module-level functions and its classes' methods that ask the GPU driver something
    /// (`torch.cuda.is_available()`) in their bodies: a library module that calls one at its
    /// top level asks it at import.
    pub asks_driver: Vec<String>,
    /// Its module-level names bound to a call of a class or function (`settings =
    /// Settings()`): the name's dotted path and the callee's, so that `settings.DEVICE`
    /// elsewhere names the class's `DEVICE` (a property that chooses a device).
    pub instances: Vec<(String, String)>,
    /// Its classes' members bound by an import in the class body (`class Generator: from
    /// .actions.choose_device import choose_device`): the member's dotted path and the
    /// function's, which becomes the class's method (its first parameter is the instance).
    pub adopted: Vec<(String, String)>,
    /// Its classes (dotted paths) whose base is a `torch.nn.Module` subclass (`None`) or
    /// another module's class (`Some(base)`, its dotted path): the project's class hierarchy,
    /// by which a class of another module that subclasses a module class is model code too.
    pub classes: Vec<(String, Option<String>)>,
    /// Its model classes, each with each of its bases that is the project's class (this file's
    /// or another module's, by dotted path): a method called on `self` is looked up through
    /// them ([`Project::is_fed`]).
    pub parents: Vec<(String, String)>,
    /// Where it hands tensors that follow the model to the project's functions.
    pub fed: Vec<HandedOn>,
    /// What its functions and methods return of tensors, by dotted path (model code's helpers
    /// that compute from their parameters, or make a tensor on the CPU).
    pub tensor_returns: Vec<(String, TensorReturn)>,
}

/// What a function returns of tensors, from its `return` statements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorReturn {
    /// The places among a call's positional arguments of the parameters whose tensors it
    /// computes its value from (`def db_to_amplitude(snr): return 10 ** (snr / 20)`).
    pub from: Vec<usize>,
    /// Whether it returns what the model computes (a submodule's output).
    pub model: bool,
    /// Where it makes on the CPU a tensor it returns (`return torch.zeros(n).uniform_() < p`),
    /// in its own file.
    pub made: Option<Range<usize>>,
    /// Whether a `return` gives a tensor it moved (`return x.to(torch.device("cuda"))`, in a
    /// project's own `cuda(x)` helper): where the value is, the function chose.
    pub moves: bool,
}

/// A call that hands a tensor that follows the model to a function of the project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandedOn {
    /// The callee, a dotted path as the call names it; `*.name` for a method called on a
    /// module of a container, which may be any module class's ([`Project::is_fed`]).
    pub function: String,
    /// The parameter: its place among the arguments (`#0`), or a keyword's name.
    pub parameter: String,
    /// When the tensor comes from the caller's own parameters: the caller and those
    /// parameters; handed on only if the caller is handed the model's tensors there.
    pub from: Option<(String, Vec<String>)>,
}

/// What a file asked of the project's other files while it was checked. The first pass,
/// before the project is known, answers each question as a project of no files does (no
/// chooser, no name, no program); its findings stand unless the project answers one otherwise.
#[derive(Debug, Default)]
pub struct Asked {
    /// Whether this module outside packages is a program's (`folder`, `module`, and whether it
    /// runs as one when no file imports it).
    pub(crate) programs: Option<(String, String, bool)>,
    /// Names looked up in glob-imported modules (`module`, `name`).
    pub(crate) imported: FxHashSet<(String, String)>,
    /// Paths asked whether they name a device chooser.
    pub(crate) chooses: FxHashSet<String>,
    /// Paths asked whether they name a function that may return what its caller passed.
    pub(crate) forwards: FxHashSet<String>,
    /// Functions asked whether a parameter is a device (path, where the call hands it), and
    /// whether they look at it.
    pub(crate) takes_device: FxHashSet<(String, Slot)>,
    /// Method names asked whether a method of that name of the project's classes takes a
    /// device where a call hands it an argument.
    pub(crate) method_takes_device: FxHashSet<(CompactString, Slot)>,
    /// Functions the main guard calls, and modules of `scripts/` folders, asked whether another
    /// file imports them.
    pub(crate) imported_elsewhere: FxHashSet<String>,
    /// Modules of packages that read their command line at their top level, asked whether the
    /// project knows that no file imports them (a script): a project that does not hold the
    /// whole workspace, the first check's included, answers no, as it does for most of them.
    pub(crate) unimported: FxHashSet<String>,
    /// The module's names asked for its functions that other modules launch.
    pub(crate) launched_in: FxHashSet<String>,
    /// Paths asked whether they name a function that returns torch's module of an accelerator.
    pub(crate) device_modules: FxHashSet<String>,
    /// Paths asked what they return of tensors.
    pub(crate) tensor_returns: FxHashSet<String>,
    /// Paths asked whether they name a function that asks the GPU driver something.
    pub(crate) asks_driver: FxHashSet<String>,
    /// Module-level functions asked which class adopts them as a method.
    pub(crate) adopted: FxHashSet<String>,
}

/// A function's parameter that is a device, by its name or its use (see
/// [`device_params`](crate::python::analysis::device_params::device_params)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceParam {
    /// The function's dotted path (a class's, for its constructor).
    pub function: String,
    /// Its place among a call's positional arguments; none when it is keyword-only.
    pub at: Option<usize>,
    pub name: CompactString,
    /// Whether the function looks at it (compares it, reports it).
    pub looked: bool,
    /// Whether the function is a method called on an instance (`model.to_device(device)`), not
    /// a module's function or a class's constructor.
    pub method: bool,
}

/// Where a call hands a function an argument: by its place among the positional arguments, or
/// by the parameter's name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    At(usize),
    Named(CompactString),
}

impl Slot {
    /// The arguments a call hands, each with its slot: the positional ones up to the first
    /// `*args` (after it, places are unknown), then those passed by name (not `**kwargs`).
    pub(crate) fn of(arguments: &ast::Arguments) -> impl Iterator<Item = (Slot, &ast::Expr)> {
        let positional = (arguments.args.iter().enumerate())
            .take_while(|(_, argument)| !argument.is_starred_expr())
            .map(|(at, argument)| (Slot::At(at), argument));
        let named = (arguments.keywords.iter()).filter_map(|keyword| {
            Some((
                Slot::Named(keyword.arg.as_ref()?.as_str().into()),
                &keyword.value,
            ))
        });
        positional.chain(named)
    }

    /// Whether the argument in this slot is `param`.
    pub(crate) fn is(&self, param: &DeviceParam) -> bool {
        match self {
            Slot::At(place) => param.at == Some(*place),
            Slot::Named(named) => *named == param.name,
        }
    }
}

/// Notes that a file asked the project about `path` (once, without copying a path already
/// asked).
pub(crate) fn note_asked(asked: &mut FxHashSet<String>, path: &str) {
    if !asked.contains(path) {
        asked.insert(path.to_owned());
    }
}

/// The project's Python files as far as the others need them: the functions that return a
/// device they chose (`def infer_device(): return "cuda" if ... else "cpu"`), what each
/// module's imports bind, so that a chooser re-exported by a package's `__init__.py` is
/// found under that name too, and which modules outside packages are programs' (the module
/// graph).
#[derive(Debug, Default)]
pub struct Project {
    choosers: FxHashSet<String>,
    /// The choosers that may return what their caller passed ([`Summary::passing`]).
    passing: FxHashSet<String>,
    /// The project's functions that take a device, by each name a function has.
    device_params: FxHashMap<String, Vec<DeviceParam>>,
    /// The methods of the project's classes that take a device, by the method's name.
    method_device_params: FxHashMap<CompactString, Vec<DeviceParam>>,
    /// How many methods of each name the project's classes define.
    methods: FxHashMap<CompactString, usize>,
    /// Module → its summary, for the dotted path each of its names was imported from.
    imports: FxHashMap<String, Arc<Summary>>,
    /// The modules outside packages, as `folder|module`, and whether each is a program.
    programs: FxHashMap<String, bool>,
    /// Every path a file imports (`dinov2.eval.knn.main`), wherever the import is, and the
    /// modules above it.
    ///
    /// Kept as the paths' hashes: a project imports thousands of paths (and every module above
    /// each), and most of them are never asked about.
    imported_paths: FxHashMap<u64, bool>,
    /// Module → its functions that other modules hand to a launcher.
    launched: FxHashMap<String, Vec<String>>,
    /// The functions that return torch's module of an accelerator → that module.
    device_modules: FxHashMap<String, String>,
    /// The functions that ask the GPU driver something ([`Summary::asks_driver`]).
    asks_driver: FxHashSet<String>,
    /// The project's `torch.nn.Module` subclasses ([`Summary::classes`]).
    module_classes: FxHashSet<String>,
    /// The project's other classes whose base is another module's class → that base.
    class_bases: FxHashMap<String, String>,
    /// The project's model classes → their bases that are the project's classes
    /// ([`Summary::parents`]).
    parents: FxHashMap<String, Vec<String>>,
    /// The project's classes → the model classes whose base they are, by each path a base's
    /// name reaches through re-exports.
    children: FxHashMap<String, Vec<String>>,
    /// Where model code hands tensors to the project's functions ([`Summary::fed`]).
    fed: Vec<HandedOn>,
    /// What the project's functions return of tensors ([`Summary::tensor_returns`]).
    tensor_returns: FxHashMap<String, TensorReturn>,
    /// Module-level names → the class (or function) whose call they hold
    /// ([`Summary::instances`]).
    instances: FxHashMap<String, String>,
    /// Class members bound by an import in the class body → the function imported
    /// ([`Summary::adopted`]).
    members: FxHashMap<String, String>,
    /// Functions a class adopts as methods → that class (the first by path, when several do).
    adopters: FxHashMap<String, String>,
    /// The last part of every path above and every name a module's imports bind: a name
    /// outside it is re-exported by no module, so that a module's glob imports need not be
    /// followed for it.
    bound: FxHashSet<CompactString>,
    /// The first part of every module's dotted names (`pkg` of `pkg.train`, `train` of a module
    /// outside packages): a path that starts otherwise (`torch.cuda.is_available`) names
    /// nothing of the project, and most paths asked about are such.
    roots: FxHashSet<CompactString>,
    /// Whether the files are all the workspace's: only then does no importer among them mean
    /// that none exists (a run over one file of a package, as pre-commit makes, does not know).
    complete: bool,
}

/// One Python file as the project's other files see it.
#[derive(Debug)]
pub struct ModuleFile {
    /// Its folder: a module outside packages is imported by bare name from the files beside it.
    pub folder: String,
    /// Its dotted module name through the packages that hold it (`pkg.train`).
    pub module: String,
    /// Its dotted names from the project's import roots: its path from the project's root
    /// (`backend/memory/management.py` → `backend.memory.management`, a namespace package's
    /// module; `fish_speech/models/dac/inference.py`, a package under namespace packages), from
    /// each Python project's own root inside it (a folder with a `pyproject.toml` or `setup.py`),
    /// and without a leading `src`.
    pub rooted: Vec<String>,
    pub summary: Arc<Summary>,
}

impl Project {
    /// Gathers what the files' summaries say.
    ///
    /// A module outside packages is library code when another file of the project imports it
    /// (by its bare name from a file beside it, or by a dotted name from the project's root:
    /// namespace packages), whatever its top level does: a script's helper (`utils.py` beside
    /// `run.py`) is code that the script and any other importer share. One that no file
    /// imports is a program when it runs (a main guard, work at the top level), and library code
    /// when it only defines functions, classes and constants: it exists to be imported (by a
    /// notebook, a configuration file that names it, a plugin registry).
    pub fn new(files: impl IntoIterator<Item = ModuleFile>) -> Project {
        let files: Vec<ModuleFile> = files.into_iter().collect();
        // Three parts apart, side by side: the module graph's programs, every path imported,
        // and what the modules define.
        let ((programs, imported_paths), mut project) = rayon::join(
            || rayon::join(|| programs(&files), || imported_paths(&files)),
            || defined(&files),
        );
        project.programs = programs;
        project.imported_paths = imported_paths;
        project.children = project.children();
        project
    }

    /// Whether `module`, a file of `folder` outside any package, is a program (see
    /// [`Project::new`]); `None` for a file the project does not know.
    pub fn is_program(&self, folder: &str, module: &str) -> Option<bool> {
        self.programs.get(&format!("{folder}|{module}")).copied()
    }

    /// Whether a file of the project imports the dotted `path`: a module's function (`from
    /// dinov2.eval.knn import main`), called from elsewhere than the main guard, or a module
    /// (`import pkg.serve.worker`), which is then no script.
    pub fn is_imported(&self, path: &str) -> bool {
        self.imported_paths.contains_key(&path_hash(path))
    }

    /// Whether a file of the project that is no test imports the dotted `path` (a test runs
    /// what it imports: a program's `main`, imported by its test, still starts the program).
    pub fn is_imported_by_code(&self, path: &str) -> bool {
        self.imported_paths.get(&path_hash(path)) == Some(&true)
    }

    /// The functions of `module` that other modules hand to a process or thread launcher.
    pub fn launched_in(&self, module: &str) -> Vec<String> {
        self.launched.get(module).cloned().unwrap_or_default()
    }

    /// Whether the project knows that no file imports the dotted `path`: it holds every file of
    /// the workspace, and none of them does.
    pub fn unimported(&self, path: &str) -> bool {
        self.complete && !self.is_imported_by_code(path)
    }

    /// The project, told whether its files are all the workspace's ([`Project::unimported`]).
    pub fn complete(mut self, complete: bool) -> Project {
        self.complete = complete;
        self
    }

    /// The dotted path `name` was imported from at the top level of the project's `module`.
    pub fn imported(&self, module: &str, name: &str) -> Option<&str> {
        self.imports
            .get(module)?
            .imports
            .get(name)
            .map(CompactString::as_str)
    }

    /// Whether the dotted `path` names a device chooser of the project, through re-exports.
    pub fn chooses(&self, path: &str) -> bool {
        self.names(path, |path| self.choosers.contains(path))
    }

    /// The class that adopts the module-level function `path` as its method, by an import in
    /// its body: what the function's `self` is.
    pub fn adopter(&self, path: &str) -> Option<&str> {
        self.adopters.get(path).map(String::as_str)
    }

    /// Whether `path` names a function that asks the GPU driver something, through re-exports.
    pub fn asks_driver(&self, path: &str) -> bool {
        self.names(path, |path| self.asks_driver.contains(path))
    }

    /// The module of an accelerator (`torch.cuda`) that the function `path` returns, through
    /// re-exports.
    pub fn device_module(&self, path: &str) -> Option<&str> {
        let mut found = None;
        self.names(path, |path| {
            found = self.device_modules.get(path).map(String::as_str);
            found.is_some()
        });
        found
    }

    /// What the function `path` returns of tensors, through re-exports.
    pub fn tensor_return(&self, path: &str) -> Option<&TensorReturn> {
        let mut found = None;
        self.names(path, |path| {
            found = self.tensor_returns.get(path);
            found.is_some()
        });
        found
    }

    /// Whether the function `path` may return what its caller passed it.
    pub fn passes_on(&self, path: &str) -> bool {
        self.names(path, |path| self.passing.contains(path))
    }

    /// Whether the dotted `path` names a function of the project whose parameter in `slot` is a
    /// device, through re-exports.
    pub fn takes_device(&self, path: &str, slot: &Slot) -> bool {
        self.names(path, |path| self.device_param(path, slot).is_some())
    }

    /// Whether every method named `method` of the project's classes takes a device in `slot`:
    /// what a call of it on an instance of no known class hands there (`model.to_device(...)`).
    /// A name that classes define with other parameters there (`process(self, pipe, height,
    /// width, seed, rand_device)` beside `process(self, pipe, height, width, num_frames)`) says
    /// nothing of the call.
    pub fn method_takes_device(&self, method: &str, slot: &Slot) -> bool {
        // A slot is at most one parameter of each method.
        let taking = (self.method_device_params.get(method)).map_or(0, |params| {
            params.iter().filter(|param| slot.is(param)).count()
        });
        taking > 0 && self.methods.get(method) == Some(&taking)
    }

    /// Whether the function `path` looks at the device it takes in `slot`.
    pub fn looks_at_device(&self, path: &str, slot: &Slot) -> bool {
        self.names(path, |path| self.device_param(path, slot) == Some(true))
    }

    /// Whether the function `path` takes a device in `slot`: whether it looks at it, if so.
    fn device_param(&self, path: &str, slot: &Slot) -> Option<bool> {
        let params = self.device_params.get(path)?;
        (params.iter().find(|param| slot.is(param))).map(|param| param.looked)
    }

    /// Whether `found` holds for `path` or for what it re-exports, followed through the
    /// modules' imports.
    fn names(&self, path: &str, mut found: impl FnMut(&str) -> bool) -> bool {
        let root = path.split_once('.').map_or(path, |(root, _)| root);
        if !self.roots.contains(root) {
            return false;
        }
        if self.reexported(path, &mut found) {
            return true;
        }
        // `settings.DEVICE` of a module-level `settings = Settings()`: the class's `DEVICE`.
        let Some((object, member)) = path.rsplit_once('.') else {
            return false;
        };
        let mut class = None;
        self.reexported(object, |object| {
            class = self.instances.get(object);
            class.is_some()
        });
        class.is_some_and(|class| self.reexported(&format!("{class}.{member}"), &mut found))
    }

    /// Whether `found` holds for `path` or for what it names through re-exports.
    fn reexported(&self, path: &str, mut found: impl FnMut(&str) -> bool) -> bool {
        // Most paths asked about name nothing of the project, and need no copy.
        if found(path) {
            return true;
        }
        if !self.bound.contains(last_part(path)) {
            return false;
        }
        // What a module's name is bound to: its import of it, or else the same name in each
        // module it imports every name of (`from .devices import *`).
        let next = |path: &str| -> Vec<String> {
            // A class's member that its body imports.
            if let Some(function) = self.members.get(path) {
                return vec![function.clone()];
            }
            let Some((module, name)) = path.rsplit_once('.') else {
                return Vec::new();
            };
            let Some(summary) = self.imports.get(module) else {
                return Vec::new();
            };
            match summary.imports.get(name) {
                Some(target) if target.as_str() != path => vec![target.to_string()],
                Some(_) => Vec::new(),
                None => (summary.globs.iter())
                    .map(|glob| format!("{glob}.{name}"))
                    .collect(),
            }
        };
        // Re-exports chain; a cycle of them ends here (eight paths tried in all).
        let mut pending = next(path);
        for _ in 0..8 {
            let Some(path) = pending.pop() else {
                return false;
            };
            if found(&path) {
                return true;
            }
            pending.extend(next(&path));
        }
        false
    }

    /// What the project answers to what a file asked of it: a file whose questions are
    /// answered alike is checked alike.
    pub fn answer(&self, asked: &Asked) -> Answers {
        Answers {
            programs: asked
                .programs
                .as_ref()
                .map(|(folder, module, runs)| self.is_program(folder, module).unwrap_or(*runs)),
            imported: asked
                .imported
                .iter()
                .map(|(module, name)| self.imported(module, name).map(str::to_owned))
                .collect(),
            chooses: asked
                .chooses
                .iter()
                .map(|path| {
                    let chooses = self.chooses(path);
                    (chooses, chooses && self.passes_on(path))
                })
                .collect(),
            forwards: (asked.forwards.iter())
                .map(|path| self.passes_on(path))
                .collect(),
            takes_device: asked
                .takes_device
                .iter()
                .map(|(path, slot)| {
                    (
                        self.takes_device(path, slot),
                        self.looks_at_device(path, slot),
                    )
                })
                .collect(),
            method_takes_device: (asked.method_takes_device.iter())
                .map(|(method, slot)| self.method_takes_device(method, slot))
                .collect(),
            imported_elsewhere: asked
                .imported_elsewhere
                .iter()
                .map(|path| (self.is_imported(path), self.is_imported_by_code(path)))
                .collect(),
            unimported: asked
                .unimported
                .iter()
                .map(|path| self.unimported(path))
                .collect(),
            launched_in: asked
                .launched_in
                .iter()
                .map(|module| self.launched_in(module))
                .collect(),
            device_modules: (asked.device_modules.iter())
                .map(|path| self.device_module(path).map(str::to_owned))
                .collect(),
            tensor_returns: (asked.tensor_returns.iter())
                .map(|path| self.tensor_return(path).cloned())
                .collect(),
            asks_driver: (asked.asks_driver.iter())
                .map(|path| self.asks_driver(path))
                .collect(),
            adopted: (asked.adopted.iter())
                .map(|path| self.adopter(path).map(str::to_owned))
                .collect(),
        }
    }
}

/// The modules outside packages, as `folder|module`, and whether each is a program: what runs
/// and no other file imports (see [`Project::new`]).
fn programs(files: &[ModuleFile]) -> FxHashMap<String, bool> {
    // The modules outside packages, by folder then bare name, and by their rooted names.
    let mut beside: FxHashMap<&str, FxHashMap<&str, usize>> = FxHashMap::default();
    let mut bare: FxHashSet<&str> = FxHashSet::default();
    let mut rooted: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (at, file) in files.iter().enumerate().filter(|(_, f)| f.summary.outside) {
        (beside.entry(&file.folder).or_default()).insert(&file.module, at);
        bare.insert(&file.module);
        for name in &file.rooted {
            rooted.entry(name).or_default().push(at);
        }
    }
    // The files that import each module outside packages (by its name, or by a path that it
    // starts).
    let mut imported_by: Vec<bool> = vec![false; files.len()];
    if !beside.is_empty() {
        for (by, file) in files.iter().enumerate().filter(|(_, f)| !f.summary.test) {
            let here = beside.get(file.folder.as_str());
            for path in &file.summary.imported {
                // A module beside the file is named by the path's first segment; a rooted name
                // by a longer prefix of it.
                let mut ends = path.match_indices('.').map(|(end, _)| end);
                let first = ends.next().unwrap_or(path.len());
                let mut mark = |at: usize| {
                    if at != by {
                        imported_by[at] = true;
                    }
                };
                here.and_then(|modules| modules.get(&path[..first]))
                    .copied()
                    .into_iter()
                    .for_each(&mut mark);
                // A dotted path from the importer's own folder, which is where a script's
                // imports start (`from src.model import GPT` in `RWKV-v4/train.py` names
                // `RWKV-v4/src/model.py`, through a namespace package).
                if let Some((folders, module)) = path.rsplit_once('.')
                    && bare.contains(module)
                {
                    let folders = folders.replace('.', "/");
                    let folder = match file.folder.as_str() {
                        "" => folders,
                        beside => format!("{beside}/{folders}"),
                    };
                    (beside.get(folder.as_str()))
                        .and_then(|modules| modules.get(module))
                        .copied()
                        .into_iter()
                        .for_each(&mut mark);
                }
                if !rooted.is_empty() && first < path.len() {
                    for end in ends.chain([path.len()]) {
                        rooted
                            .get(&path[..end])
                            .into_iter()
                            .flatten()
                            .copied()
                            .for_each(&mut mark);
                    }
                }
            }
        }
    }
    files
        .iter()
        .zip(imported_by)
        .filter(|(file, _)| file.summary.outside)
        .map(|(file, imported)| {
            let key = format!("{}|{}", file.folder, file.module);
            (key, file.summary.program && !imported)
        })
        .collect()
}

/// Every path a file imports and the modules above it (`import pkg.a.b` imports `pkg.a` too),
/// as their hashes, each with whether a file that is no test imports it. A package's
/// `__main__.py` is its program: what it imports to run (`from .cli import main`) still starts
/// the program where it is defined.
fn imported_paths(files: &[ModuleFile]) -> FxHashMap<u64, bool> {
    let mut paths: FxHashMap<u64, bool> = FxHashMap::default();
    for file in files {
        if file.module == "__main__" || file.module.ends_with(".__main__") {
            continue;
        }
        let by_code = !file.summary.test;
        for path in &file.summary.imported {
            let ends = path.match_indices('.').map(|(end, _)| end);
            for end in ends.chain([path.len()]) {
                *paths.entry(path_hash(&path[..end])).or_default() |= by_code;
            }
        }
    }
    paths
}

/// What the modules define for the others: choosers, functions that pass a device on or take
/// one, accelerator modules returned, launched functions, and each module's imports.
fn defined(files: &[ModuleFile]) -> Project {
    let mut project = Project::default();
    for file in files {
        // What the module defines, by its dotted name and by its names from the import roots
        // (`modules/torch_utils.py`, a namespace package's module, is `torch_utils` beside it
        // and `modules.torch_utils` from the root).
        let names = |path: &str| -> Vec<String> {
            let rest = path
                .strip_prefix(file.module.as_str())
                .filter(|rest| rest.starts_with('.') || rest.starts_with('['));
            let mut names = vec![path.to_owned()];
            if let Some(rest) = rest {
                names.extend(
                    file.rooted
                        .iter()
                        .map(|root| [root.as_str(), rest].concat()),
                );
            }
            names
        };
        for chooser in &file.summary.choosers {
            project.choosers.extend(names(chooser));
        }
        for chooser in &file.summary.passing {
            project.passing.extend(names(chooser));
        }
        for function in &file.summary.asks_driver {
            project.asks_driver.extend(names(function));
        }
        project.fed.extend(file.summary.fed.iter().cloned());
        for (class, base) in &file.summary.parents {
            for class in names(class) {
                project.parents.entry(class).or_default().push(base.clone());
            }
        }
        for (class, base) in &file.summary.classes {
            for class in names(class) {
                match base {
                    None => project.module_classes.insert(class),
                    Some(base) => project.class_bases.insert(class, base.clone()).is_none(),
                };
            }
        }
        for (function, module) in &file.summary.device_modules {
            for name in names(function) {
                project.device_modules.insert(name, module.clone());
            }
        }
        for (function, returned) in &file.summary.tensor_returns {
            for name in names(function) {
                project.tensor_returns.insert(name, returned.clone());
            }
        }
        for method in &file.summary.methods {
            *project.methods.entry(method.clone()).or_default() += 1;
        }
        for param in &file.summary.device_params {
            if param.method
                && let Some((_, method)) = param.function.rsplit_once('.')
            {
                (project
                    .method_device_params
                    .entry(method.into())
                    .or_default())
                .push(param.clone());
            }
            for name in names(&param.function) {
                project
                    .device_params
                    .entry(name)
                    .or_default()
                    .push(param.clone());
            }
        }
        for (name, callee) in &file.summary.instances {
            for name in names(name) {
                project.instances.insert(name, callee.clone());
            }
        }
        for (member, function) in &file.summary.adopted {
            for member in names(member) {
                if let Some((class, _)) = member.rsplit_once('.') {
                    let adopter = project.adopters.entry(function.clone()).or_default();
                    if adopter.is_empty() || class < adopter.as_str() {
                        *adopter = class.to_owned();
                    }
                }
                project.members.insert(member, function.clone());
            }
        }
        for path in &file.summary.launched {
            if let Some((module, function)) = path.rsplit_once('.') {
                let functions = project.launched.entry(module.to_owned()).or_default();
                if !functions.iter().any(|known| known == function) {
                    functions.push(function.to_owned());
                }
            }
        }
        for root in &file.rooted {
            if *root != file.module {
                project.imports.insert(root.clone(), file.summary.clone());
            }
        }
        project
            .imports
            .insert(file.module.clone(), file.summary.clone());
        project.bound.extend(file.summary.imports.keys().cloned());
    }
    let roots = (project.imports.keys()).map(|module| {
        module
            .split_once('.')
            .map_or(module.as_str(), |(root, _)| root)
            .into()
    });
    project.roots = roots.collect();
    let paths = (project.choosers.iter())
        .chain(&project.passing)
        .chain(&project.asks_driver)
        .chain(&project.module_classes)
        .chain(project.class_bases.keys())
        .chain(project.device_modules.keys())
        .chain(project.tensor_returns.keys())
        .chain(project.device_params.keys())
        .chain(project.instances.keys())
        .chain(project.members.keys());
    let lasts: Vec<CompactString> = paths
        .map(|path| {
            path.rsplit_once('.')
                .map_or(path.as_str(), |(_, name)| name)
                .into()
        })
        .collect();
    project.bound.extend(lasts);
    project
}

/// The hash a dotted path is kept by in [`Project::imported_paths`].
fn path_hash(path: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(path)
}

/// The project's answers to the questions of one file ([`Asked`]), in the order asked.
#[derive(Debug, PartialEq, Eq)]
pub struct Answers {
    programs: Option<bool>,
    imported: Vec<Option<String>>,
    chooses: Vec<(bool, bool)>,
    forwards: Vec<bool>,
    takes_device: Vec<(bool, bool)>,
    method_takes_device: Vec<bool>,
    imported_elsewhere: Vec<(bool, bool)>,
    unimported: Vec<bool>,
    launched_in: Vec<Vec<String>>,
    device_modules: Vec<Option<String>>,
    tensor_returns: Vec<Option<TensorReturn>>,
    asks_driver: Vec<bool>,
    adopted: Vec<Option<String>>,
}
