//! Where a Python program starts: a main guard and what it calls or hands on, the functions
//! handed to process and thread launchers (`torch.multiprocessing.spawn`, `Process(target=)`),
//! scripts that do work at their top level, and configured entry points.

use rustc_hash::{FxHashMap, FxHashSet};

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::api::{Api, Entry, Role, last_part};
use crate::python::semantic::{Imports, Scope, dotted, package_of};
use crate::python::{Asked, PyContext};
use crate::source::FileRole;

/// Whether a module's top level does work when it runs (calls something, loops, binds what
/// one of its own functions returns), as a script without a main guard does, rather than only
/// defining names.
pub(crate) fn does_work(body: &[Stmt]) -> bool {
    let defined: FxHashSet<&str> = body
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(def) => Some(def.name.as_str()),
            _ => None,
        })
        .collect();
    let runs_own = |value: &Expr| {
        matches!(value, Expr::Call(call)
            if matches!(&*call.func, Expr::Name(f) if defined.contains(f.id.as_str())))
    };
    body.iter().any(|stmt| match stmt {
        Stmt::Expr(expr) => !matches!(&*expr.value, Expr::StringLiteral(_)),
        // `model, tokenizer = load()`, with `load` defined above.
        Stmt::Assign(assign) => runs_own(&assign.value),
        Stmt::AnnAssign(assign) => assign.value.as_deref().is_some_and(runs_own),
        Stmt::For(_) | Stmt::While(_) | Stmt::With(_) => true,
        Stmt::If(s) => {
            !is_main_guard(&s.test)
                && (does_work(&s.body) || s.elif_else_clauses.iter().any(|c| does_work(&c.body)))
        }
        Stmt::Try(s) => does_work(&s.body),
        _ => false,
    })
}

/// Whether a whole file is where a program starts, by what it shows and by who imports it in
/// the project's module graph.
#[derive(Debug)]
pub(crate) struct FileRun {
    /// The whole file is a program's (a script, a test file).
    pub(crate) program: bool,
    /// It runs as one by what it shows itself (the summary tells the other files).
    pub(crate) runs: bool,
    /// A module outside packages, placed by who imports it.
    pub(crate) outside: bool,
    /// Why the whole file is a program's, for `--verbose`.
    pub(crate) why: Option<String>,
}

impl FileRun {
    /// Decides it, putting what it asks of the project into `asked`.
    pub(crate) fn of(
        body: &[Stmt],
        entries: &EntryPoints,
        cx: &PyContext<'_>,
        asked: &mut Asked,
    ) -> FileRun {
        // `hubconf.py` is torch.hub's entry for other people's programs: library code, as what
        // it imports is.
        let outside = !cx.in_package && cx.module != "hubconf";
        // A module outside packages is a program's or library code by who imports it (one that
        // no file imports is a program when it runs). A file of `scripts/`, `examples/`,
        // `tools/`, `bin/` or `benchmarks/` is a program by its folder, unless another module
        // imports it (an app's helpers beside its scripts): then it is library code like any
        // imported module. `__main__.py` always runs.
        let by_folder = cx.role == FileRole::BinaryRoot && last_part(&cx.module) != "__main__";
        // `pkg/apis/test.py` is a test by unittest's name pattern, and as often a module of the
        // package's API (`single_gpu_test`, `collect_results`), as `pkg/utils/test_utils.py` is
        // (its package's `__init__.py` imports it): a test file unless a module that is no test
        // imports it. Outside a `tests` package.
        let by_name = cx.role == FileRole::EntryFile
            && cx.in_package
            && cx.module.rsplit_once('.').is_some_and(|(package, name)| {
                (matches!(name, "test" | "tests")
                    || name.starts_with("test_")
                    || name.ends_with("_test"))
                    && !package
                        .split('.')
                        .any(|part| matches!(part, "test" | "tests"))
            });
        let asks_programs =
            outside && (by_folder || matches!(cx.role, FileRole::Library | FileRole::BinaryModule));
        let runs = match cx.role {
            FileRole::BinaryRoot | FileRole::EntryFile => true,
            FileRole::Library | FileRole::BinaryModule => {
                outside && (entries.main_guard || does_work(body))
            }
        };
        // A module of a package that reads its command line at its top level
        // (`launch_all_serve.py`, run as `python -m pkg.launch_all_serve`), or that its folder
        // makes a program, is a script when no file imports it. Other work at the top level
        // (a warning, a registration) is a module of the package's API, which its users
        // import; a main guard alone is the entry point of a module others may import.
        let package_script = !outside
            && !cx.is_init
            && !cx.module.is_empty()
            && (by_folder
                || by_name
                || (cx.role == FileRole::Library && does_work(body) && reads_command_line(body)));
        let program = match (asks_programs, package_script) {
            (true, _) => {
                // Before the module graph is known, a file its folder makes a program's is
                // taken for one when it runs itself; a module of definitions there is most
                // often a helper its scripts import.
                let guess = match by_folder {
                    true => entries.main_guard || does_work(body),
                    false => runs,
                };
                asked.programs = Some((cx.folder.clone(), cx.module.clone(), guess));
                cx.project
                    .is_program(&cx.folder, &cx.module)
                    .unwrap_or(guess)
            }
            // A file its folder makes a program's, unless imported; a module of definitions
            // and work, a program's once no file is known to import it.
            (false, true) if by_folder || by_name => {
                !imported(cx, None, Importers::Code, &mut asked.imported_elsewhere)
            }
            (false, true) => unimported(cx, &mut asked.unimported),
            (false, false) => runs,
        };
        let not_imported = "and no other file of the project imports it";
        let why = program.then(|| match cx.role {
            FileRole::EntryFile => "a test file, by pytest's conventions".to_owned(),
            FileRole::BinaryRoot if !by_folder => "`__main__.py`, what `python -m` runs".to_owned(),
            FileRole::BinaryRoot => format!(
                "a program: a file of a `scripts`, `examples`, `tools`, `bin` or `benchmarks` \
                 folder, {not_imported}"
            ),
            _ if entries.main_guard && outside => {
                format!("a program: it has a main guard, {not_imported}")
            }
            _ if !outside => format!(
                "a program: it reads its command line at its top level (run as `python -m {}`), \
                 {not_imported}",
                cx.module
            ),
            _ => format!("a program: it does work at its top level, {not_imported}"),
        });
        FileRun {
            program,
            runs,
            outside,
            why,
        }
    }
}

/// Whether a module's top level reads its command line (`parser.parse_args()`, `sys.argv`), as
/// a module run with `python -m` does and a module of a package's API, imported by its users,
/// does not (a deprecation shim warns at import, a registry registers).
fn reads_command_line(body: &[Stmt]) -> bool {
    struct Reads(bool);
    impl<'a> Visitor<'a> for Reads {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                visitor::walk_stmt(self, stmt);
            }
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            self.0 |= match expr {
                Expr::Attribute(attribute) => {
                    matches!(attribute.attr.as_str(), "parse_args" | "parse_known_args")
                        || dotted(expr).as_deref() == Some("sys.argv")
                }
                _ => false,
            };
            visitor::walk_expr(self, expr);
        }
    }
    let mut reads = Reads(false);
    visitor::walk_body(&mut reads, body);
    reads.0
}

pub(crate) fn is_main_guard(test: &Expr) -> bool {
    let Expr::Compare(compare) = test else {
        return false;
    };
    let [ast::CmpOp::Eq] = &*compare.ops else {
        return false;
    };
    let [right] = &*compare.comparators else {
        return false;
    };
    let is = |e: &Expr, f: &dyn Fn(&Expr) -> bool| f(e);
    let name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == "__name__");
    let main = |e: &Expr| matches!(e, Expr::StringLiteral(s) if s.value.to_str() == "__main__");
    (is(&compare.left, &name) && is(right, &main)) || (is(&compare.left, &main) && is(right, &name))
}

/// Where the program starts in this module: the main guard, the module's functions it calls
/// (and theirs), the targets handed to process and thread launchers, configured functions.
#[derive(Debug, Default)]
pub(crate) struct EntryPoints {
    pub(crate) main_guard: bool,
    pub(crate) functions: FxHashSet<String>,
    /// Methods of the module's classes handed to a launcher (`Process(target=self._main_loop)`):
    /// where a worker starts.
    pub(crate) methods: FxHashSet<String>,
    /// The module's classes that only a program uses: made or named by the main guard or by
    /// what it reaches (`LunaTrainingApp().main()`), or handed to a launcher
    /// (`Process(target=Worker)`). Their methods are the program's.
    pub(crate) classes: FxHashSet<String>,
    /// Other modules' functions this one hands to a launcher, by dotted path.
    pub(crate) launched_elsewhere: Vec<String>,
}

impl EntryPoints {
    /// `asked` gets what the project was asked: whether another module imports a function the
    /// main guard calls (`from dinov2.eval.knn import main`: called from library code too, it
    /// is not where a program starts, nor what only it calls), and which of the module's
    /// functions other modules launch.
    pub(crate) fn find(
        body: &[Stmt],
        text: &str,
        scope: &Scope,
        cx: &PyContext<'_>,
        asked: &mut Asked,
    ) -> EntryPoints {
        let defs: FxHashMap<&str, &ast::StmtFunctionDef> = body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::FunctionDef(def) => Some((def.name.as_str(), def)),
                _ => None,
            })
            .collect();
        let classes: FxHashMap<&str, &ast::StmtClassDef> = body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::ClassDef(class) => Some((class.name.as_str(), class)),
                _ => None,
            })
            .collect();
        let defined = |name: &str| defs.contains_key(name) || classes.contains_key(name);
        let mut found = EntryPoints::default();
        // Each function to follow, and which other modules' imports of it make it shared code:
        // for what the main guard calls, those that are no tests (a test runs the program it
        // imports the start of); for what any entry reaches, any (a helper a test imports is a
        // unit others use); none for what a launcher or the configuration names (it starts a
        // program wherever else it is called from).
        let mut pending: Vec<(String, Option<Importers>)> = Vec::new();
        for stmt in body {
            if let Stmt::If(guard) = stmt
                && is_main_guard(&guard.test)
            {
                found.main_guard = true;
                // What it calls, and what it hands on (`fire.Fire(main)`) or calls a method of
                // (`benchmark.run(...)` of a decorated benchmark), unless another module
                // imports it.
                pending.extend(
                    named(&guard.body, defined)
                        .into_iter()
                        .map(|name| (name, Some(Importers::Code))),
                );
            }
        }
        // A launch names its launcher in the file: where it is called, or where the import
        // that renames it is.
        if cx.api.mentions_launcher(text) {
            // Every import of the file, wherever it is, for the launchers' paths.
            let mut imports: Imports = scope.imports().collect();
            let package = package_of(cx);
            for def in defs.values() {
                imports.extend(Scope::imports_of(&def.body, &package));
            }
            let launches = launched(body, &imports, cx.api);
            pending.extend(launches.functions.into_iter().map(|name| (name, None)));
            found.methods.extend(launches.methods);
            found.launched_elsewhere = launches.elsewhere;
        }
        // This module's functions that other modules hand to a launcher.
        for module in module_names(cx) {
            asked.launched_in.insert(module.clone());
            pending.extend(
                cx.project
                    .launched_in(module)
                    .into_iter()
                    .map(|name| (name, None)),
            );
        }
        pending.extend(
            defs.keys()
                .filter(|name| {
                    cx.entry_points.iter().any(|entry| {
                        entry.strip_suffix(**name).and_then(|m| m.strip_suffix('.'))
                            == Some(cx.module.as_str())
                    })
                })
                .map(|name| (name.to_string(), None)),
        );
        // A module that imports pytest is run by it whatever its name (`pytest
        // benchmarking/optimizer_benchmark.py`): its `test_*` functions are tests.
        if scope
            .imports()
            .any(|(_, path)| path == "pytest" || path.starts_with("pytest."))
        {
            pending.extend(
                defs.keys()
                    .filter(|name| name.starts_with("test_"))
                    .map(|name| (name.to_string(), None)),
            );
        }
        // What a launcher, the configuration or pytest names starts a program wherever else it
        // is called from.
        let mut started: FxHashSet<String> = FxHashSet::default();
        // What a function of the program calls or hands on (`ray.remote(get_answers)`, `f =
        // get_answers`) is the program's too. A function or class another module imports
        // (`from dinov2.eval.knn import main`) is called from elsewhere too: neither it nor what
        // it reaches starts a program here, unless a launcher or the configuration names it (a
        // class that an installed command's function makes, and other modules make too, stays
        // library code).
        while let Some((name, shared_by)) = pending.pop() {
            if shared_by.is_none() {
                started.insert(name.clone());
            }
            if found.functions.contains(&name) || found.classes.contains(&name) {
                continue;
            }
            let body = match (defs.get(name.as_str()), classes.get(name.as_str())) {
                (Some(def), _) => &def.body,
                (None, Some(class)) => &class.body,
                (None, None) => continue,
            };
            if let Some(by) = shared_by
                && imported(cx, Some(&name), by, &mut asked.imported_elsewhere)
            {
                continue;
            }
            pending.extend(
                named(body, defined)
                    .into_iter()
                    .map(|reached| (reached, Some(Importers::Any))),
            );
            match defs.contains_key(name.as_str()) {
                true => found.functions.insert(name),
                false => found.classes.insert(name),
            };
        }
        // What the module's other functions reach is shared code: a function the main guard
        // demonstrates (`print(p2o(psf, shape))`) that a library function of the module also
        // calls is no more the program's than that function is.
        if found.functions.is_empty() && found.classes.is_empty() {
            return found;
        }
        let mut shared: Vec<String> = (defs.keys().chain(classes.keys()))
            .filter(|name| !found.functions.contains(**name) && !found.classes.contains(**name))
            .map(|name| name.to_string())
            .collect();
        let mut reached: FxHashSet<String> = shared.iter().cloned().collect();
        while let Some(name) = shared.pop() {
            let body = match (defs.get(name.as_str()), classes.get(name.as_str())) {
                (Some(def), _) => &def.body,
                (None, Some(class)) => &class.body,
                (None, None) => continue,
            };
            for callee in named(body, defined) {
                if !started.contains(&callee) && reached.insert(callee.clone()) {
                    found.functions.remove(&callee);
                    found.classes.remove(&callee);
                    shared.push(callee);
                }
            }
        }
        found
    }
}

/// Whether another file of the project imports this module (`name: None`) or its function
/// `name`, by the module's dotted name or by its names from the import roots (a package under a
/// namespace package: `fish_speech/models/dac/inference.py` is `dac.inference` and
/// `fish_speech.models.dac.inference`); the paths asked go into `asked`.
fn imported(
    cx: &PyContext<'_>,
    name: Option<&str>,
    by: Importers,
    asked: &mut FxHashSet<String>,
) -> bool {
    let mut found = false;
    for module in module_names(cx) {
        let path = match name {
            Some(name) => [module.as_str(), ".", name].concat(),
            None => module.clone(),
        };
        found |= match by {
            Importers::Any => cx.project.is_imported(&path),
            Importers::Code => cx.project.is_imported_by_code(&path),
        };
        asked.insert(path);
    }
    found
}

/// Which importers make a module or function shared code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Importers {
    /// Any file of the project: a helper a test imports is a unit others use.
    Any,
    /// Files that are no tests: a test runs the program whose `main` it imports.
    Code,
}

/// Whether the project knows that no other file imports this module, by any of its names
/// (see [`imported`]).
fn unimported(cx: &PyContext<'_>, asked: &mut FxHashSet<String>) -> bool {
    asked.extend(module_names(cx).cloned());
    module_names(cx).next().is_some() && module_names(cx).all(|name| cx.project.unimported(name))
}

/// The module's dotted name and its names from the import roots, by which others import it.
fn module_names<'c>(cx: &'c PyContext<'_>) -> impl Iterator<Item = &'c String> {
    std::iter::once(&cx.module)
        .chain(&cx.rooted)
        .filter(|module| !module.is_empty())
}

/// The names a body reads that `keep` keeps (the module's functions and classes): most names a
/// body reads are its own, and are neither copied nor kept.
fn named(body: &[Stmt], keep: impl Fn(&str) -> bool) -> Vec<String> {
    struct Names<K> {
        keep: K,
        kept: Vec<String>,
    }
    impl<'a, K: Fn(&str) -> bool> Visitor<'a> for Names<K> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr
                && (self.keep)(name.id.as_str())
            {
                self.kept.push(name.id.as_str().to_owned());
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut names = Names {
        keep,
        kept: Vec::new(),
    };
    visitor::walk_body(&mut names, body);
    names.kept
}

/// The dotted path a name or attribute chain stands for through the module's imports
/// (`mpu.run` of `import slowfast.utils.multiprocessing as mpu`).
fn through_imports(imports: &Imports, expr: &Expr) -> Option<compact_str::CompactString> {
    let written = dotted(expr)?;
    let (first, rest) = written.split_once('.').unwrap_or((&written, ""));
    let base = imports.get(first)?;
    Some(match rest.is_empty() {
        true => base.clone(),
        false => compact_str::format_compact!("{base}.{rest}"),
    })
}

/// The functions handed to a process or thread launcher anywhere in the module: this module's,
/// by name, and other modules' (`mpu.run`), by their dotted paths.
pub(crate) fn launched(body: &[Stmt], imports: &Imports, api: &Api) -> Launched {
    struct Launches<'i> {
        imports: &'i Imports,
        api: &'i Api,
        targets: Vec<String>,
        methods: Vec<String>,
        elsewhere: Vec<String>,
    }
    impl<'a> Visitor<'a> for Launches<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            let launcher = |call: &ast::ExprCall| -> Option<Option<usize>> {
                // Most calls launch nothing: only a name that ends a table's item, or a
                // `Process` or `Thread`, is resolved.
                let last = match &*call.func {
                    Expr::Name(name) => self
                        .imports
                        .get(name.id.as_str())
                        .map_or(name.id.as_str(), |path| last_part(path)),
                    Expr::Attribute(attribute) => attribute.attr.as_str(),
                    _ => return None,
                };
                if !matches!(last, "Process" | "Thread") && !self.api.ends_an_item(last) {
                    return None;
                }
                let path = through_imports(self.imports, &call.func);
                if let Some(Entry {
                    role: Role::SpawnThread { closure },
                    ..
                }) = path.and_then(|path| self.api.dotted_item(&path))
                {
                    return Some(Some(*closure));
                }
                // A launcher reached through an attribute (`self._mp_ctx.Process(target=...)`,
                // a multiprocessing context): known by its name and its `target=`.
                let name = match &*call.func {
                    Expr::Attribute(attribute) => attribute.attr.as_str(),
                    _ => return None,
                };
                (matches!(name, "Process" | "Thread")
                    && call.arguments.find_keyword("target").is_some())
                .then_some(None)
            };
            if let Expr::Call(call) = expr
                && let Some(closure) = launcher(call)
            {
                let target = call
                    .arguments
                    .find_keyword("target")
                    .or_else(|| call.arguments.find_keyword("fn"))
                    .map(|keyword| &keyword.value)
                    .or_else(|| {
                        closure.and_then(|closure| call.arguments.find_positional(closure))
                    });
                match target {
                    Some(Expr::Name(name)) => self.targets.push(name.id.as_str().to_owned()),
                    // A method of the instance (`target=self._main_loop`).
                    Some(Expr::Attribute(method))
                        if matches!(&*method.value, Expr::Name(owner)
                            if matches!(owner.id.as_str(), "self" | "cls")) =>
                    {
                        self.methods.push(method.attr.as_str().to_owned());
                    }
                    // Another module's function (`mpu.run` of `import slowfast.utils.
                    // multiprocessing as mpu`): that module's entry point.
                    Some(other) => {
                        if let Some(path) = through_imports(self.imports, other) {
                            self.elsewhere.push(path.to_string());
                        }
                    }
                    None => {}
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut launches = Launches {
        imports,
        api,
        targets: Vec::new(),
        methods: Vec::new(),
        elsewhere: Vec::new(),
    };
    visitor::walk_body(&mut launches, body);
    Launched {
        functions: launches.targets,
        methods: launches.methods,
        elsewhere: launches.elsewhere,
    }
}

/// What a module hands to process and thread launchers ([`launched`]).
pub(crate) struct Launched {
    /// Its own functions, by name.
    pub(crate) functions: Vec<String>,
    /// Methods of its classes, by name (`self._main_loop`).
    pub(crate) methods: Vec<String>,
    /// Other modules' functions, by dotted path.
    pub(crate) elsewhere: Vec<String>,
}
