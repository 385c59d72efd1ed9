//! The walk of one Python module: names resolved through the module's and each function's
//! imports (a local definition hides an import), entry points found first, then every use of a
//! device API, device string, environment write, loop transfer, device choice and op on known
//! devices turned into an [`Event`].
//!
//! Python's receivers are rarely known, so `.cuda(...)` is taken as PyTorch's on any receiver,
//! and `.to(...)` only when its argument is a device (a device string, an integer, a
//! `torch.device(...)` call, or, for loop transfers, a name that says it is a device). A string
//! is a device only where a device goes: `torch.device(...)`, `.to(...)`, `.cuda(...)`, a
//! `device=` or `map_location=` argument, a parameter default or an assignment whose name says
//! it is a device. Elsewhere `"cuda"` is usually a device *type* (`torch.autocast("cuda")`,
//! `device.type == "cuda"`) and never a finding.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Operator, Stmt};
use ruff_text_size::Ranged;

use super::{Project, PyContext};
use crate::analysis::device_string;
use crate::analysis::device_string::Named;
use crate::analysis::{ApiUse, Event, Fact, How};
use crate::api::{Api, Entry, Role};
use crate::source::FileRole;

/// Checks that pick a device and may quietly answer "no GPU".
const AVAILABILITY: &[&str] = &["torch.cuda.is_available", "torch.backends.mps.is_available"];

/// Factory functions that make a tensor on `device=`, or on the CPU without it.
const FACTORIES: &[&str] = &[
    "zeros", "ones", "empty", "rand", "randn", "randint", "full", "arange", "eye", "linspace",
    "logspace",
];

/// Functions of `torch` that combine the tensors they are given.
const COMBINING: &[&str] = &[
    "matmul", "mm", "bmm", "add", "sub", "mul", "div", "dot", "cat", "concat", "stack",
];

/// Calls that return a device type without an index, which means the current device where a
/// device goes (as `"cuda"` does), and a device type elsewhere.
const CURRENT_DEVICE_VALUES: &[&str] = &["torch.accelerator.current_accelerator"];

/// Calls whose `device=` is a device type (`"cuda"`), not a device.
const DEVICE_TYPE_APIS: &[&str] = &["GradScaler", "get_autocast_dtype", "is_autocast_enabled"];

/// Functions of `torch.cuda` that read facts of a device (its properties, its memory) and place
/// nothing: a device passed to one is asked about, not used, so `"cuda"` there is no finding.
const QUERIES: &[&str] = &[
    "get_device_properties",
    "get_device_name",
    "get_device_capability",
    "mem_get_info",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "utilization",
];

/// The wrappers that replicate a module over the GPUs in `device_ids=[...]`.
const DATA_PARALLEL: &[&str] = &["DistributedDataParallel", "DataParallel", "DDP"];

/// Calls that report a value to a person: passing the chosen device to one looks at it.
const REPORTING: &[&str] = &[
    "print",
    "info",
    "debug",
    "warning",
    "warn",
    "error",
    "log",
    "echo",
    "write",
    "format",
    "str",
    "repr",
    "exception",
    "critical",
];

/// What other files need to know of this one: its device choosers, and the names its imports
/// bind at the top level (a package's `__init__.py` re-exports its modules' functions).
#[derive(Debug, Default)]
pub struct Summary {
    pub choosers: Vec<String>,
    pub imports: HashMap<String, String>,
    /// Whether the file is a program (a script, a test) by what it shows itself: what only
    /// programs import is part of them.
    pub program: bool,
    /// Whether the file is a module outside packages, which may be a program's helper.
    pub outside: bool,
}

/// What a file asked of the project's other files while it was checked. The first pass,
/// before the project is known, answers each question as a project of no files does (no
/// chooser, no name, no program); its findings stand unless the project answers one otherwise.
#[derive(Debug, Default)]
pub struct Asked {
    /// Whether this module outside packages is only programs' (`folder`, `module`).
    pub(super) programs: Option<(String, String)>,
    /// Names looked up in glob-imported modules (`module`, `name`).
    pub(super) imported: HashSet<(String, String)>,
    /// Paths asked whether they name a device chooser.
    pub(super) chooses: HashSet<String>,
}

pub(super) fn check<'a>(
    module: &ast::ModModule,
    text: &str,
    cx: &PyContext<'a>,
) -> (Vec<Event<'a>>, Summary, Asked) {
    let base = package_of(cx);
    let module_scope = Scope::of(&module.body, None, &base);
    let entries = EntryPoints::find(&module.body, &module_scope, cx);
    // `hubconf.py` is torch.hub's entry for other people's programs: library code, as what
    // it imports is.
    let outside = !cx.in_package && cx.module != "hubconf";
    // What the file itself shows (the first pass's answer, which other files' summaries
    // carry); then a module outside packages that only programs import is theirs.
    let runs = match cx.role {
        FileRole::BinaryRoot | FileRole::EntryFile => true,
        FileRole::Library | FileRole::BinaryModule => {
            outside && (entries.main_guard || does_work(&module.body))
        }
    };
    // Programs' files run; a module outside packages that does not asks the project.
    let asks_programs = outside && !runs;
    let program =
        runs || (asks_programs && cx.project.only_programs_import(&cx.folder, &cx.module));
    let asked = Asked {
        programs: asks_programs.then(|| (cx.folder.clone(), cx.module.clone())),
        ..Asked::default()
    };
    let mut checker = Checker {
        api: cx.api,
        text,
        scopes: vec![module_scope],
        entries,
        program,
        in_entry: program,
        qualname: Vec::new(),
        class_body: None,
        method_of: None,
        module: cx.module.clone(),
        configured: cx.entry_points,
        flow: Flow::default(),
        loops: Vec::new(),
        bound_fallbacks: HashSet::new(),
        file_pending: HashMap::new(),
        looking: 0,
        scoped: 0,
        checked_branch: None,
        checking: 0,
        project: cx.project,
        package: base,
        choosers: Vec::new(),
        asked: RefCell::new(asked),
        events: Vec::new(),
    };
    for stmt in &module.body {
        checker.visit_stmt(stmt);
    }
    checker.finish_flow(&module.body);
    let summary = Summary {
        choosers: std::mem::take(&mut checker.choosers),
        imports: checker.scopes[0].imports.clone(),
        program: runs,
        outside,
    };
    (checker.events, summary, checker.asked.into_inner())
}

/// The package a file's relative imports start from: its own name for a package's
/// `__init__.py`, its parent's for a module.
fn package_of(cx: &PyContext<'_>) -> Vec<String> {
    let mut package: Vec<String> = cx
        .module
        .split('.')
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
        .collect();
    if !cx.is_init {
        package.pop();
    }
    package
}

/// The names a scope binds.
#[derive(Debug, Default)]
struct Scope {
    /// Names bound by imports → the dotted path they name.
    imports: HashMap<String, String>,
    /// Names a `def` or `class` binds: they hide imports.
    definitions: HashSet<String>,
    /// Names bound otherwise (parameters, assignments, loop targets, relative imports).
    locals: HashSet<String>,
    /// Modules whose names a glob import (`from utils import *`) brings.
    globs: Vec<String>,
}

impl Scope {
    /// The bindings of a body, not looking into nested functions and classes; `parameters` are
    /// a function's.
    fn of(body: &[Stmt], parameters: Option<&ast::Parameters>, package: &[String]) -> Scope {
        let mut scope = Scope::default();
        if let Some(parameters) = parameters {
            for parameter in parameters.iter() {
                scope.locals.insert(parameter.name().to_string());
            }
        }
        scope.collect(body, package);
        scope
    }

    fn collect(&mut self, body: &[Stmt], package: &[String]) {
        for stmt in body {
            match stmt {
                Stmt::Import(import) => {
                    for alias in &import.names {
                        let name = alias.name.as_str();
                        match &alias.asname {
                            Some(asname) => {
                                self.imports.insert(asname.to_string(), name.to_owned());
                            }
                            None => {
                                let first = name.split('.').next().unwrap_or(name);
                                self.imports.insert(first.to_owned(), first.to_owned());
                            }
                        }
                    }
                }
                Stmt::ImportFrom(import) => {
                    // A relative import names the project's own module, from the file's package.
                    let from = match import.level {
                        0 => import.module.as_ref().map(|m| m.to_string()),
                        level => {
                            let up = level as usize - 1;
                            (up <= package.len()).then(|| {
                                let mut parts = package[..package.len() - up].to_vec();
                                parts.extend(import.module.iter().map(|m| m.to_string()));
                                parts.join(".")
                            })
                        }
                    };
                    for alias in &import.names {
                        if let Some(module) = from.as_ref().filter(|_| alias.name.as_str() == "*") {
                            self.globs.push(module.clone());
                            continue;
                        }
                        let bound = alias.asname.as_ref().unwrap_or(&alias.name).to_string();
                        match &from {
                            Some(module) if alias.name.as_str() != "*" && !module.is_empty() => {
                                let path = format!("{module}.{}", alias.name.as_str());
                                self.imports.insert(bound, path);
                            }
                            // What a glob brings, or a module above the top: unknown.
                            _ => {
                                self.locals.insert(bound);
                            }
                        }
                    }
                }
                Stmt::FunctionDef(def) => {
                    self.definitions.insert(def.name.to_string());
                }
                Stmt::ClassDef(class) => {
                    self.definitions.insert(class.name.to_string());
                }
                _ => {
                    for name in assigned_names(std::slice::from_ref(stmt), false) {
                        self.locals.insert(name);
                    }
                    for_each_body(stmt, |body| self.collect(body, package));
                }
            }
        }
    }

    /// What `name` means here: `Some(path)` for an import, `Some(None)` for another binding,
    /// `None` when this scope does not bind it.
    fn lookup(&self, name: &str) -> Option<Option<&str>> {
        if self.definitions.contains(name) {
            return Some(None);
        }
        if let Some(path) = self.imports.get(name) {
            return Some(Some(path));
        }
        self.locals.contains(name).then_some(None)
    }
}

/// Calls `f` with each body of a compound statement (not of nested functions and classes).
fn for_each_body(stmt: &Stmt, mut f: impl FnMut(&[Stmt])) {
    match stmt {
        Stmt::If(s) => {
            f(&s.body);
            for clause in &s.elif_else_clauses {
                f(&clause.body);
            }
        }
        Stmt::For(s) => {
            f(&s.body);
            f(&s.orelse);
        }
        Stmt::While(s) => {
            f(&s.body);
            f(&s.orelse);
        }
        Stmt::With(s) => f(&s.body),
        Stmt::Try(s) => {
            f(&s.body);
            for handler in &s.handlers {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                f(&handler.body);
            }
            f(&s.orelse);
            f(&s.finalbody);
        }
        Stmt::Match(s) => {
            for case in &s.cases {
                f(&case.body);
            }
        }
        _ => {}
    }
}

/// The names (and dotted attribute targets such as `self.w`) that statements assign, looking
/// into compound statements; into nested functions only when `nested`.
fn assigned_names(body: &[Stmt], nested: bool) -> HashSet<String> {
    struct Assigned {
        names: HashSet<String>,
        nested: bool,
    }
    impl Assigned {
        fn target(&mut self, target: &Expr) {
            match target {
                Expr::Name(name) => {
                    self.names.insert(name.id.to_string());
                }
                Expr::Attribute(_) => {
                    if let Some(dotted) = dotted(target) {
                        self.names.insert(dotted);
                    }
                }
                Expr::Tuple(tuple) => tuple.iter().for_each(|e| self.target(e)),
                Expr::List(list) => list.iter().for_each(|e| self.target(e)),
                Expr::Starred(starred) => self.target(&starred.value),
                _ => {}
            }
        }
    }
    impl<'a> Visitor<'a> for Assigned {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Assign(s) => s.targets.iter().for_each(|t| self.target(t)),
                Stmt::AugAssign(s) => self.target(&s.target),
                Stmt::AnnAssign(s) if s.value.is_some() => self.target(&s.target),
                Stmt::For(s) => self.target(&s.target),
                Stmt::With(s) => {
                    for item in &s.items {
                        if let Some(vars) = &item.optional_vars {
                            self.target(vars);
                        }
                    }
                }
                Stmt::Try(s) => {
                    for handler in &s.handlers {
                        let ast::ExceptHandler::ExceptHandler(handler) = handler;
                        if let Some(name) = &handler.name {
                            self.names.insert(name.to_string());
                        }
                    }
                }
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) if !self.nested => return,
                _ => {}
            }
            visitor::walk_stmt(self, stmt);
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Named(named) => self.target(&named.target),
                Expr::Lambda(_) if !self.nested => return,
                _ => {}
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut assigned = Assigned {
        names: HashSet::new(),
        nested,
    };
    for stmt in body {
        assigned.visit_stmt(stmt);
    }
    assigned.names
}

/// `a.b.c` for a chain of attributes on a name.
fn dotted(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(name) => Some(name.id.to_string()),
        Expr::Attribute(attribute) => Some(format!(
            "{}.{}",
            dotted(&attribute.value)?,
            attribute.attr.as_str()
        )),
        _ => None,
    }
}

/// The name a dotted chain starts with.
fn root(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attribute) => root(&attribute.value),
        _ => None,
    }
}

/// Whether a module's top level does work when it runs (calls something, loops, binds what
/// one of its own functions returns), as a script without a main guard does, rather than only
/// defining names.
fn does_work(body: &[Stmt]) -> bool {
    let defined: HashSet<&str> = body
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

fn is_main_guard(test: &Expr) -> bool {
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

/// The text of a string literal, or of an f-string without a replacement field (`f"cuda"`).
fn string(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str()),
        Expr::FString(f) => {
            let mut elements = f.value.elements();
            match (elements.next(), elements.next(), f.value.literals().next()) {
                (Some(ast::InterpolatedStringElement::Literal(literal)), None, None) => {
                    Some(&literal.value)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn integer(expr: &Expr) -> Option<u64> {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) => int.as_u64(),
        _ => None,
    }
}

fn range(node: &impl Ranged) -> Range<usize> {
    usize::from(node.range().start())..usize::from(node.range().end())
}

/// Where the program starts in this module: the main guard, the module's functions it calls
/// (and theirs), the targets handed to process and thread launchers, configured functions.
#[derive(Debug, Default)]
struct EntryPoints {
    main_guard: bool,
    functions: HashSet<String>,
}

impl EntryPoints {
    fn find(body: &[Stmt], scope: &Scope, cx: &PyContext<'_>) -> EntryPoints {
        let defs: HashMap<&str, &ast::StmtFunctionDef> = body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::FunctionDef(def) => Some((def.name.as_str(), def)),
                _ => None,
            })
            .collect();
        let mut found = EntryPoints::default();
        let mut pending: Vec<String> = Vec::new();
        for stmt in body {
            if let Stmt::If(guard) = stmt
                && is_main_guard(&guard.test)
            {
                found.main_guard = true;
                // What it calls, and what it hands on (`fire.Fire(main)`) or calls a method of
                // (`benchmark.run(...)` of a decorated benchmark).
                pending.extend(named(&guard.body));
            }
        }
        // Every import of the file, wherever it is, for the launchers' paths.
        let mut imports = scope.imports.clone();
        for def in defs.values() {
            imports.extend(Scope::of(&def.body, None, &package_of(cx)).imports);
        }
        pending.extend(launched(body, &imports, cx.api));
        pending.extend(
            defs.keys()
                .filter(|name| {
                    let full = format!("{}.{name}", cx.module);
                    cx.entry_points.iter().any(|entry| entry == &full)
                })
                .map(|name| name.to_string()),
        );
        while let Some(name) = pending.pop() {
            if let Some(def) = defs.get(name.as_str())
                && found.functions.insert(name)
            {
                pending.extend(called_names(&def.body));
            }
        }
        found
    }
}

/// The plain names a body calls (`main()`, `train(args)`), nested functions included.
fn called_names(body: &[Stmt]) -> Vec<String> {
    struct Calls(Vec<String>);
    impl<'a> Visitor<'a> for Calls {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Name(name) = &*call.func
            {
                self.0.push(name.id.to_string());
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut calls = Calls(Vec::new());
    visitor::walk_body(&mut calls, body);
    calls.0
}

/// Whether a body reports something to a person (a print, a log, a warning), not looking into
/// nested functions.
fn reports(body: &[Stmt]) -> bool {
    struct Reports(bool);
    impl<'a> Visitor<'a> for Reports {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                visitor::walk_stmt(self, stmt);
            }
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr {
                let callee = last_name(&call.func);
                // A person reads these; `str` or `format` alone reports nothing.
                self.0 |= REPORTING.contains(&callee)
                    && !matches!(callee, "str" | "repr" | "format" | "write");
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut found = Reports(false);
    visitor::walk_body(&mut found, body);
    found.0
}

/// The names a body reads.
fn named(body: &[Stmt]) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'a> Visitor<'a> for Names {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr {
                self.0.push(name.id.to_string());
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut names = Names(Vec::new());
    visitor::walk_body(&mut names, body);
    names.0
}

/// The functions handed, by name, to a process or thread launcher anywhere in the module.
fn launched(body: &[Stmt], imports: &HashMap<String, String>, api: &Api) -> Vec<String> {
    struct Launches<'i> {
        imports: &'i HashMap<String, String>,
        api: &'i Api,
        targets: Vec<String>,
    }
    impl<'a> Visitor<'a> for Launches<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            let launcher = |call: &ast::ExprCall| -> Option<Option<usize>> {
                let path = dotted(&call.func).and_then(|d| {
                    let (first, rest) = d.split_once('.').unwrap_or((&d, ""));
                    let base = self.imports.get(first)?;
                    Some(if rest.is_empty() {
                        base.clone()
                    } else {
                        format!("{base}.{rest}")
                    })
                });
                if let Some(Entry {
                    role: Role::SpawnThread { closure },
                    ..
                }) = path.and_then(|path| self.api.item(&path.replace('.', "::")))
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
                if let Some(Expr::Name(name)) = target {
                    self.targets.push(name.id.to_string());
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut launches = Launches {
        imports,
        api,
        targets: Vec::new(),
    };
    visitor::walk_body(&mut launches, body);
    launches.targets
}

/// What one function (or the module's top level) has shown so far.
#[derive(Debug, Default)]
struct Flow {
    /// The first use of a GPU, for `CUDA_VISIBLE_DEVICES` set after it.
    first_device_use: Option<Range<usize>>,
    /// Tensors and devices whose device is known: name → device.
    facts: HashMap<String, Fact>,
    /// Names bound to a device chosen by an availability check, with that check.
    fallbacks: Vec<(String, String, Range<usize>)>,
    /// Names bound to a device string whose meaning depends on its use (`device = "cuda"` is a
    /// device in `.to(device)`, a device type in `getattr(torch, device)`).
    pending: HashMap<String, Pending>,
    /// Names bound to a string literal, for `getattr(torch, name)`.
    strings: HashMap<String, String>,
    /// Names bound to a library's item (`device_module = getattr(torch, "cuda")`).
    aliases: HashMap<String, String>,
}

/// A device string bound to a name, reported where it first reaches a device position.
#[derive(Clone, Debug)]
struct Pending {
    choice: Choice,
    shown: String,
    span: Range<usize>,
    in_entry: bool,
    reported: bool,
    /// The current device asked for (`torch.cuda.current_device()`), not a string that may be
    /// a device type: passed to any call but a query or a report, it is used as a device.
    asked: bool,
}

/// What a device string chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// `"cuda"`: whatever device is current when it is used.
    Current,
    /// `"cuda:N"`.
    Ordinal(u64),
}

/// A loop being walked.
#[derive(Debug)]
struct Loop {
    keyword: Range<usize>,
    /// What the loop assigns, its targets included.
    assigned: HashSet<String>,
    /// Receivers moved by more than one call in the loop (`m.cpu()` then `m.to(d)`): their
    /// transfers cannot be hoisted.
    moved_twice: HashSet<String>,
}

struct Checker<'a, 't> {
    api: &'a Api,
    text: &'t str,
    scopes: Vec<Scope>,
    entries: EntryPoints,
    /// The whole file is where a program starts (a script, a test file).
    program: bool,
    in_entry: bool,
    /// The classes and functions around, for configured entry points.
    qualname: Vec<String>,
    /// The class whose body is being walked, as a dotted path below the module.
    class_body: Option<String>,
    /// The class of the method being walked, which `self.f()` and `cls.f()` call into.
    method_of: Option<String>,
    module: String,
    configured: &'a [String],
    flow: Flow,
    loops: Vec<Loop>,
    /// Where the availability checks of choices bound to names start.
    bound_fallbacks: HashSet<usize>,
    /// Device strings bound to attributes (`self.map_location = "cuda"`) and module-level
    /// names, which other functions of the file use.
    file_pending: HashMap<String, Pending>,
    /// Inside something that looks at a value (a comparison, an assertion, a report).
    looking: usize,
    /// Inside `with torch.cuda.device(i):`, where the current device is the one it names.
    scoped: usize,
    /// Inside a branch that an availability check chose, with that check.
    checked_branch: Option<(String, Range<usize>)>,
    /// Directly inside a comparison (`x.device == torch.device("cuda")`) or a query
    /// (`get_device_capability(...)`), where a device is checked, not used; another call's
    /// arguments are outside it again.
    checking: usize,
    /// The project's device choosers, across its files.
    project: &'a Project,
    /// The package relative imports start from.
    package: Vec<String>,
    /// This file's functions that return a device they chose (`def infer_device(): return
    /// "cuda"`), as dotted paths.
    choosers: Vec<String>,
    /// What the file asked of the project (lookups take `&self`).
    asked: RefCell<Asked>,
    events: Vec<Event<'a>>,
}

impl<'a> Checker<'a, '_> {
    /// The dotted path an expression names through imports, when it names a library's item.
    fn resolve(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Name(name) if self.flow.aliases.contains_key(name.id.as_str()) => {
                self.flow.aliases.get(name.id.as_str()).cloned()
            }
            Expr::Name(name) => {
                let id = name.id.as_str();
                let Some((depth, found)) = self
                    .scopes
                    .iter()
                    .enumerate()
                    .rev()
                    .find_map(|(depth, scope)| Some((depth, scope.lookup(id)?)))
                else {
                    // What a glob import of the project's module brings: what that module
                    // imported (`from utils import *` after `import torch` in utils).
                    return self.scopes[0]
                        .globs
                        .iter()
                        .rev()
                        .find_map(|module| {
                            let key = (module.clone(), id.to_owned());
                            self.asked.borrow_mut().imported.insert(key);
                            self.project.imported(module, id)
                        })
                        .map(str::to_owned);
                };
                match found {
                    Some(path) => Some(path.to_owned()),
                    // A function of this module, named as other modules name it.
                    None if depth == 0
                        && self.scopes[0].definitions.contains(id)
                        && !self.module.is_empty() =>
                    {
                        Some(format!("{}.{id}", self.module))
                    }
                    None => None,
                }
            }
            // `getattr(torch, "cuda")`, also with the name in a local string.
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "getattr")
                    && call.arguments.args.len() == 2 =>
            {
                let base = self.resolve(&call.arguments.args[0])?;
                let named = match &call.arguments.args[1] {
                    Expr::Name(name) => self.flow.strings.get(name.id.as_str()).cloned(),
                    other => string(other).map(str::to_owned),
                };
                let attribute = match named {
                    Some(text) => text,
                    // `getattr(torch, device_type)`: whichever accelerator's module it is,
                    // each has `torch.cuda`'s device API (`current_device`, `set_device`).
                    None if base == "torch" => "cuda".to_owned(),
                    None => return None,
                };
                Some(format!("{base}.{attribute}"))
            }
            Expr::Attribute(attribute) => Some(format!(
                "{}.{}",
                self.resolve(&attribute.value)?,
                attribute.attr.as_str()
            )),
            _ => None,
        }
    }

    /// Whether `value` is a call asking for the current device (`torch.cuda.current_device()`)
    /// with nothing to walk in it.
    fn asks_current(&self, value: &Expr) -> bool {
        matches!(value, Expr::Call(call)
        if call.arguments.is_empty()
            && self.resolve(&call.func).is_some_and(|path| {
                self.item(&path).is_some()
                    && (path.ends_with(".current_device")
                        || path.ends_with(".current_device_index"))
            }))
    }

    /// Whether a call only reads facts of a device (`torch.cuda.get_device_properties(...)`).
    fn is_query(&self, call: &ast::ExprCall) -> bool {
        self.resolve(&call.func).is_some_and(|path| {
            path.strip_prefix("torch.cuda.")
                .is_some_and(|name| QUERIES.contains(&name))
        })
    }

    /// Whether a chooser's call leaves it the choice: it passes no device of its own
    /// (`get_device()`, `get_device("cuda")`, not `get_device(device=cfg.device)`).
    fn lets_choose(&self, call: &ast::ExprCall) -> bool {
        let mut passed = call
            .arguments
            .args
            .iter()
            .chain(call.arguments.keywords.iter().map(|keyword| &keyword.value));
        call.arguments.is_empty() || passed.any(|value| self.device_literal(value).is_some())
    }

    /// Whether `path` names a device chooser: of the project, or of this file above (in the
    /// first pass, before the project knows them, a chooser calling one).
    fn chooses(&self, path: &str) -> bool {
        {
            let asked = &mut self.asked.borrow_mut().chooses;
            if !asked.contains(path) {
                asked.insert(path.to_owned());
            }
        }
        self.project.chooses(path) || self.choosers.iter().any(|chooser| chooser == path)
    }

    /// The dotted path of a method of the class being walked, called on `self` or `cls`.
    fn own_method(&self, func: &Expr) -> Option<String> {
        let Expr::Attribute(attribute) = func else {
            return None;
        };
        let Expr::Name(receiver) = &*attribute.value else {
            return None;
        };
        if !matches!(receiver.id.as_str(), "self" | "cls") || self.module.is_empty() {
            return None;
        }
        let class = self.method_of.as_deref()?;
        Some(format!(
            "{}.{class}.{}",
            self.module,
            attribute.attr.as_str()
        ))
    }

    fn item(&self, path: &str) -> Option<&'a Entry> {
        self.api.item(&path.replace('.', "::"))
    }

    fn source(&self, span: &Range<usize>) -> &str {
        self.text.get(span.clone()).unwrap_or_default()
    }

    fn device_use(&mut self, span: Range<usize>) {
        self.flow.first_device_use.get_or_insert(span);
    }

    fn api_event(&mut self, entry: &'a Entry, path: &str, span: Range<usize>, as_value: bool) {
        let shown = self.source(&span).to_owned();
        self.events.push(Event::Api {
            use_: ApiUse {
                entry,
                path: path.replace('.', "::"),
                shown,
                span,
                as_value,
                literal_ordinal: None,
                after_bind: false,
                helper: None,
                chooser: None,
            },
            in_entry_point: self.in_entry,
            in_program: self.program,
        });
    }

    /// Reports a device chosen by a string or an ordinal, from where it was written.
    fn chosen(&mut self, choice: Choice, shown: String, span: Range<usize>, in_entry: bool) {
        self.device_use(span.clone());
        if choice == Choice::Current && self.scoped > 0 {
            return;
        }
        let event = match choice {
            Choice::Current => Event::CurrentDevice {
                shown,
                span,
                in_entry_point: in_entry,
                in_program: self.program,
            },
            Choice::Ordinal(ordinal) => Event::DeviceString {
                ordinal: u128::from(ordinal),
                shown,
                span,
                in_entry_point: in_entry,
                chooser: None,
            },
        };
        self.events.push(event);
    }

    /// The device string a literal, or a conditional with one in a branch
    /// (`"cuda" if torch.cuda.is_available() else "cpu"`), or a `getattr` default, chooses.
    fn device_literal(&self, value: &Expr) -> Option<(Choice, String, Range<usize>)> {
        if let Some(text) = string(value) {
            let choice = match text {
                "cuda" => Choice::Current,
                _ => match device_string::parse(text)? {
                    Named::Cuda(ordinal) => Choice::Ordinal(u64::from(ordinal)),
                    Named::Cpu => return None,
                },
            };
            return Some((choice, format!("\"{text}\""), range(value)));
        }
        match value {
            Expr::If(choice) => self
                .device_literal(&choice.body)
                .or_else(|| self.device_literal(&choice.orelse)),
            // `torch.device("cuda")`, `torch.device("cuda", 1)`, `torch.device("cuda:1")`.
            Expr::Call(call) if self.built_device(value) => {
                let kind = call.arguments.find_argument_value("type", 0)?;
                match call.arguments.find_argument_value("index", 1) {
                    Some(index) if string(kind) == Some("cuda") => {
                        let shown = self.source(&range(value)).split_whitespace().collect();
                        Some((Choice::Ordinal(integer(index)?), shown, range(index)))
                    }
                    Some(_) => None,
                    None => self.device_literal(kind),
                }
            }
            // A device type without an index, like `"cuda"`; or a function of the project that
            // returns a device it chose.
            Expr::Call(call)
                if self
                    .resolve(&call.func)
                    .or_else(|| self.own_method(&call.func))
                    .is_some_and(|path| {
                        CURRENT_DEVICE_VALUES.contains(&path.as_str())
                            || (self.chooses(&path) && self.lets_choose(call))
                    }) =>
            {
                Some((
                    Choice::Current,
                    self.source(&range(value)).to_owned(),
                    range(value),
                ))
            }
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "getattr")
                    && call.arguments.args.len() == 3 =>
            {
                self.device_literal(&call.arguments.args[2])
            }
            // `kwargs.get("device", "cuda")`, `options.pop("onload_device", "cuda")`.
            Expr::Call(call)
                if matches!(&*call.func, Expr::Attribute(method)
                    if matches!(method.attr.as_str(), "get" | "pop" | "setdefault"))
                    && call.arguments.args.len() == 2
                    && string(&call.arguments.args[0]).is_some_and(says_device) =>
            {
                self.device_literal(&call.arguments.args[1])
            }
            // `self.device or "cuda"`: the caller's device, or one chosen here.
            Expr::BoolOp(choice) if choice.op == ast::BoolOp::Or => choice.values[1..]
                .iter()
                .find_map(|value| self.device_literal(value)),
            _ => None,
        }
    }

    /// Whether `value` is a `torch.device(...)` of a literal device, or a conditional with one
    /// in a branch (`torch.device("cpu") if on_cpu else torch.device("cuda")`).
    fn built_device(&self, value: &Expr) -> bool {
        match value {
            // Also of a name holding a device string (`torch.device(self.device)`).
            Expr::Call(call) => {
                self.resolve(&call.func).as_deref() == Some("torch.device")
                    && call
                        .arguments
                        .find_argument_value("type", 0)
                        .is_some_and(|kind| {
                            string(kind).is_some()
                                || matches!(kind, Expr::If(_))
                                || self.pending_of(kind).is_some()
                        })
            }
            Expr::If(choice) => {
                self.built_device(&choice.body) || self.built_device(&choice.orelse)
            }
            _ => false,
        }
    }

    /// The device string a name holds until it reaches a device position, also a name inside
    /// an f-string (`f"cuda:{index}"` with `index = torch.cuda.current_device()`).
    fn pending_of(&self, expr: &Expr) -> Option<&Pending> {
        let name = dotted(expr).or_else(|| self.pending_name_in(expr))?;
        self.flow
            .pending
            .get(&name)
            .or_else(|| self.file_pending.get(&name))
    }

    /// The first name an f-string interpolates that holds a device string.
    fn pending_name_in(&self, expr: &Expr) -> Option<String> {
        let Expr::FString(f) = expr else {
            return None;
        };
        f.value.elements().find_map(|element| {
            let ast::InterpolatedStringElement::Interpolation(field) = element else {
                return None;
            };
            let name = dotted(&field.expression)?;
            (self.flow.pending.contains_key(&name) || self.file_pending.contains_key(&name))
                .then_some(name)
        })
    }

    /// Walks what a device built to be kept is made of, but not the device itself, which is
    /// judged where it is used (`torch.device("cuda", torch.cuda.current_device())` still uses
    /// the current device).
    fn visit_kept(&mut self, value: &Expr) {
        match value {
            Expr::Call(call) if self.built_device(value) => self.visit_arguments(&call.arguments),
            Expr::If(choice) => {
                self.visit_expr(&choice.test);
                self.visit_kept(&choice.body);
                self.visit_kept(&choice.orelse);
            }
            other => self.visit_expr(other),
        }
    }

    /// A value where a device goes (`.to(...)`, `device=`, `map_location=`, `device_map=`,
    /// `torch.device(...)`): a device string, a conditional or default holding one, an integer
    /// ordinal, or a name bound to a device string earlier. What it names, if anything is known.
    fn device_argument(
        &mut self,
        value: &Expr,
        shown_int: impl FnOnce(u64) -> String,
    ) -> Option<String> {
        if let Some((choice, shown, span)) = self.device_literal(value) {
            // A `torch.device(...)` here, also as the branch of a conditional that chose, is
            // reported where it is built, as the call is walked.
            let mut chosen = value;
            while let Expr::If(choice) = chosen {
                chosen = match self.device_literal(&choice.body) {
                    Some(_) => &choice.body,
                    None => &choice.orelse,
                };
            }
            if !matches!(chosen, Expr::Call(_)) || !self.built_device(chosen) {
                self.chosen(choice, shown, span, self.in_entry);
            }
            return Some(match choice {
                Choice::Current => "cuda".to_owned(),
                Choice::Ordinal(ordinal) => format!("cuda:{ordinal}"),
            });
        }
        // A name holding a device string, also inside an f-string (`f"cuda:{index}"`).
        if let Some(name) = dotted(value).or_else(|| self.pending_name_in(value)) {
            let pending = match self.flow.pending.get_mut(&name) {
                Some(pending) => Some(pending),
                None => self.file_pending.get_mut(&name),
            };
            if let Some(pending) = pending.filter(|p| !p.reported) {
                pending.reported = true;
                let pending = pending.clone();
                self.chosen(
                    pending.choice,
                    pending.shown,
                    pending.span,
                    pending.in_entry,
                );
            }
            return None;
        }
        if let Expr::BooleanLiteral(_) = value {
            return None;
        }
        let ordinal = integer(value)?;
        let span = range(value);
        self.chosen(
            Choice::Ordinal(ordinal),
            shown_int(ordinal),
            span,
            self.in_entry,
        );
        Some(format!("cuda:{ordinal}"))
    }

    /// The device a value names or a tensor is on, when the function has made it known.
    fn device_of(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Name(name) => self
                .flow
                .facts
                .get(name.id.as_str())
                .map(|f| f.device.clone()),
            Expr::StringLiteral(_) | Expr::FString(_) => match string(expr)? {
                "cuda" => Some("cuda".to_owned()),
                text => device_string::parse(text).map(|named| named.to_string()),
            },
            Expr::NumberLiteral(_) => integer(expr).map(|ordinal| format!("cuda:{ordinal}")),
            Expr::Call(call) if self.resolve(&call.func).as_deref() == Some("torch.device") => {
                let kind = call.arguments.find_argument_value("type", 0)?;
                match call.arguments.find_argument_value("index", 1) {
                    Some(index) => Some(format!("{}:{}", string(kind)?, integer(index)?)),
                    None => self.device_of(kind),
                }
            }
            _ => None,
        }
    }

    /// What a call tells about where its result is: a factory with or without `device=`, a
    /// move, `.cpu()`.
    fn fact_of(&self, value: &Expr) -> Option<Fact> {
        let Expr::Call(call) = value else {
            return match value {
                Expr::Name(name) => self.flow.facts.get(name.id.as_str()).cloned(),
                _ => None,
            };
        };
        let origin = range(value);
        if let Some(path) = self.resolve(&call.func) {
            if path == "torch.device" {
                return Some(Fact {
                    device: self.device_of(value)?,
                    origin,
                    how: How::Named,
                });
            }
            let factory = path
                .strip_prefix("torch.")
                .is_some_and(|name| FACTORIES.contains(&name));
            if !factory {
                return None;
            }
            let device = match call.arguments.find_keyword("device") {
                Some(keyword) => self.device_of(&keyword.value)?,
                None => "cpu".to_owned(),
            };
            return Some(Fact {
                device,
                origin,
                how: How::Created,
            });
        }
        let Expr::Attribute(method) = &*call.func else {
            return None;
        };
        let device = match method.attr.as_str() {
            "cpu" => "cpu".to_owned(),
            "cuda" => match call.arguments.find_argument_value("device", 0) {
                None => "cuda".to_owned(),
                Some(device) => self.device_of(device)?,
            },
            "to" => self.device_of(call.arguments.find_argument_value("device", 0)?)?,
            _ => return None,
        };
        Some(Fact {
            device,
            origin,
            how: How::Moved,
        })
    }

    /// Whether two known devices are certainly different (`cuda` is some GPU, so only the CPU
    /// differs from it for sure).
    fn differ(a: &str, b: &str) -> bool {
        a != b && (a == "cpu" || b == "cpu" || (a != "cuda" && b != "cuda"))
    }

    fn combine(&mut self, op: Range<usize>, operands: &[&Expr]) {
        let facts: Vec<Fact> = operands
            .iter()
            .filter_map(|operand| match operand {
                Expr::Name(name) => self.flow.facts.get(name.id.as_str()).cloned(),
                _ => None,
            })
            .collect();
        let pair = facts.iter().enumerate().find_map(|(i, lhs)| {
            facts[i + 1..]
                .iter()
                .find(|rhs| Self::differ(&lhs.device, &rhs.device))
                .map(|rhs| (lhs.clone(), rhs.clone()))
        });
        if let Some((lhs, rhs)) = pair {
            let shown = self.source(&op).to_owned();
            let shown = if shown.len() > 60 {
                "this op".to_owned()
            } else {
                format!("`{shown}`")
            };
            self.events.push(Event::Mismatch {
                op: shown,
                span: op,
                lhs,
                rhs,
            });
        }
    }

    fn call(&mut self, call: &ast::ExprCall) {
        let span = range(call);
        let path = self.resolve(&call.func);
        if let Some(path) = &path {
            if let Some(method) = path.strip_prefix("os.environ.") {
                self.environ_call(call, method);
                return;
            }
            if path.starts_with("torch.cuda.") {
                self.device_use(span.clone());
            }
            if path == "torch.device" {
                self.torch_device(call);
                return;
            } else if let Some(entry) = self.item(path) {
                match entry.role {
                    Role::SetCurrentDevice
                    | Role::ImplicitDevice { .. }
                    | Role::CurrentDeviceUser => {
                        self.device_use(span.clone());
                        // Under a scoped guard the current device is the guard's; in a
                        // comparison it is only checked (`assert current_device() == rank`).
                        let asks = path.ends_with(".current_device")
                            || path.ends_with(".current_device_index");
                        let scoped =
                            self.scoped > 0 && (entry.role == Role::CurrentDeviceUser || asks);
                        let checked = asks && self.checking > 0;
                        if !scoped && !checked {
                            self.api_event(entry, path, range(&*call.func), false);
                        }
                    }
                    // A configured constructor of a device from an ordinal.
                    Role::ExplicitDevice { ordinal, .. } => {
                        if let Some(value) = call.arguments.find_positional(ordinal)
                            && let Some(number) = integer(value)
                        {
                            let shown = self.source(&span).to_owned();
                            self.chosen(
                                Choice::Ordinal(number),
                                shown,
                                range(value),
                                self.in_entry,
                            );
                        }
                    }
                    Role::SetEnvVar => {
                        if let Some(variable) = call.arguments.find_positional(0).and_then(string) {
                            self.set_env(variable.to_owned(), span.clone());
                        }
                    }
                    _ => {}
                }
            }
            if let Some(name) = path.strip_prefix("torch.")
                && COMBINING.contains(&name)
            {
                // `torch.cat([a, b])` takes its tensors in a list or a tuple.
                let operands: Vec<&Expr> = match call.arguments.args.first() {
                    Some(Expr::List(list)) => list.iter().collect(),
                    Some(Expr::Tuple(tuple)) => tuple.iter().collect(),
                    _ => call.arguments.args.iter().collect(),
                };
                self.combine(span.clone(), &operands);
            }
        }
        if let Expr::Attribute(method) = &*call.func
            && path.is_none()
        {
            self.method_call(call, method);
        }
        // `torch.amp.GradScaler(device="cuda")` and the like take a device type, not a device.
        let callee = last_name(&call.func);
        if DEVICE_TYPE_APIS.contains(&callee) {
            return;
        }
        for keyword in &call.arguments.keywords {
            let Some(name) = &keyword.arg else { continue };
            match (name.as_str(), &keyword.value) {
                ("device" | "map_location" | "device_map" | "output_device", value)
                    if !value.is_dict_expr() =>
                {
                    let shown = |ordinal| format!("{}={ordinal}", name.as_str());
                    self.device_argument(value, shown);
                }
                // Other libraries' devices (`onload_device=`, `offload_device=`); a number there
                // may be a count.
                (name, value) if name.ends_with("_device") && integer(value).is_none() => {
                    self.device_argument(value, |ordinal| format!("{name}={ordinal}"));
                }
                // `DistributedDataParallel(model, device_ids=[0])` (not `dist.barrier`'s, which
                // names the rank's own GPU, as `device_ids=[0]` under `if rank == 0`).
                ("device_ids", Expr::List(ast::ExprList { elts, .. }))
                | ("device_ids", Expr::Tuple(ast::ExprTuple { elts, .. }))
                    if DATA_PARALLEL.contains(&callee) =>
                {
                    for element in elts {
                        self.device_argument(element, |ordinal| format!("device_ids=[{ordinal}]"));
                    }
                }
                // `device_map={"": 0}` (transformers, accelerate): each module's device.
                ("device_map", Expr::Dict(map)) => {
                    for item in map.iter() {
                        let shown = |ordinal| format!("device_map={{...: {ordinal}}}");
                        self.device_argument(&item.value, shown);
                    }
                }
                _ => {}
            }
        }
    }

    /// `torch.device("cuda", 1)`, `torch.device("cuda:1")`, `torch.device(1)`,
    /// `torch.device(type="cuda", index=1)`.
    fn torch_device(&mut self, call: &ast::ExprCall) {
        if self.checking > 0 {
            return;
        }
        let span = range(call);
        let shown = self.source(&span).to_owned();
        let kind = call.arguments.find_argument_value("type", 0);
        match call.arguments.find_argument_value("index", 1) {
            Some(index) => {
                if let (Some("cuda"), Some(ordinal)) = (kind.and_then(string), integer(index)) {
                    self.chosen(Choice::Ordinal(ordinal), shown, range(index), self.in_entry);
                }
            }
            None => {
                if let Some(kind) = kind {
                    if string(kind) == Some("cuda") {
                        self.chosen(Choice::Current, shown, span, self.in_entry);
                    } else {
                        self.device_argument(kind, |_| shown);
                    }
                }
            }
        }
    }

    /// `os.environ.setdefault(...)`, `os.environ.update(...)`.
    fn environ_call(&mut self, call: &ast::ExprCall, method: &str) {
        match method {
            "setdefault" | "__setitem__" => {
                if let Some(variable) = call.arguments.find_positional(0).and_then(string) {
                    self.set_env(variable.to_owned(), range(call));
                }
            }
            "update" => {
                let mut variables: Vec<String> = call
                    .arguments
                    .keywords
                    .iter()
                    .filter_map(|keyword| keyword.arg.as_ref().map(|arg| arg.to_string()))
                    .collect();
                if let Some(Expr::Dict(dict)) = call.arguments.find_positional(0) {
                    variables.extend(
                        dict.iter()
                            .filter_map(|item| item.key.as_ref().and_then(string))
                            .map(str::to_owned),
                    );
                }
                for variable in variables {
                    self.set_env(variable, range(call));
                }
            }
            _ => {}
        }
    }

    /// `.cuda(...)` and `.to(...)` on a receiver that is no library's item.
    fn method_call(&mut self, call: &ast::ExprCall, method: &ast::ExprAttribute) {
        let receiver = &*method.value;
        let from_dot = usize::from(receiver.range().end())..usize::from(call.range().end());
        let name = method.attr.as_str();
        let transfer = match name {
            // `super().cuda(*args, **kwargs)` passes on its caller's device.
            "cuda" if forwards(&call.arguments) => true,
            "cuda" => {
                let shown = self.source(&from_dot).trim_start().to_owned();
                match call.arguments.find_argument_value("device", 0) {
                    None => {
                        self.chosen(Choice::Current, shown, from_dot.clone(), self.in_entry);
                    }
                    Some(device) => {
                        self.device_argument(device, |_| shown);
                    }
                }
                true
            }
            "to" => {
                let device = call.arguments.find_argument_value("device", 0);
                // `.to(device=...)` is handled with the other keywords.
                if let Some(device) =
                    device.filter(|_| call.arguments.find_keyword("device").is_none())
                {
                    let shown = self.source(&from_dot).trim_start().to_owned();
                    self.device_argument(device, |_| shown);
                }
                device.is_some_and(|device| self.is_device(device))
            }
            _ => false,
        };
        if transfer {
            self.loop_transfer(call, receiver, from_dot);
        }
    }

    /// Whether an argument of `.to(...)` is a device rather than a dtype or a tensor.
    fn is_device(&self, expr: &Expr) -> bool {
        if string(expr).is_some_and(|s| s == "cuda" || s == "cpu" || s.starts_with("cuda:")) {
            return true;
        }
        if integer(expr).is_some() {
            return true;
        }
        if let Expr::Call(call) = expr {
            return self.resolve(&call.func).as_deref() == Some("torch.device");
        }
        let last = last_name(expr).to_ascii_lowercase();
        (last.contains("device") || last == "dev") && !last.contains("type")
    }

    fn loop_transfer(&mut self, call: &ast::ExprCall, receiver: &Expr, from_dot: Range<usize>) {
        let Some(frame) = self.loops.last() else {
            return;
        };
        let Some(receiver_name) = dotted(receiver) else {
            return;
        };
        let invariant = |expr: &Expr| -> bool {
            let mut names = Vec::new();
            collect_names(expr, &mut names);
            names.iter().all(|name| !frame.assigned.contains(name))
        };
        let receiver_root = root(receiver).unwrap_or_default();
        if frame.assigned.contains(&receiver_name)
            || frame.assigned.contains(receiver_root)
            || frame.moved_twice.contains(&receiver_name)
            || !call.arguments.args.iter().all(&invariant)
            || !call.arguments.keywords.iter().all(|k| invariant(&k.value))
        {
            return;
        }
        let keyword = frame.keyword.clone();
        let shown = self.source(&from_dot).trim_start().to_owned();
        let span =
            usize::from(receiver.range().end()) + (from_dot.len() - shown.len())..from_dot.end;
        self.events.push(Event::LoopTransfer {
            shown,
            span,
            receiver: receiver_name,
            keyword,
        });
    }

    fn set_env(&mut self, variable: String, span: Range<usize>) {
        self.events.push(Event::SetEnvVar {
            variable,
            span,
            in_entry_point: self.in_entry,
            after_device_use: self.flow.first_device_use.clone(),
        });
    }

    /// A device string bound to a name (an assignment or a parameter's default): a GPU
    /// with its ordinal (`DEVICE = "cuda:1"`) is reported at once when the name says it is a
    /// device; otherwise the string is reported where the name reaches a device position
    /// (`device = "cuda"` then `.to(device)`), since the same string is also a device type
    /// (`getattr(torch, device)`, `torch.device(device, index)`). `file` keeps it for the
    /// file's other functions (attributes, module-level names).
    fn bind_device_string(&mut self, name: &str, value: &Expr, file: bool) {
        // `self.device = device`, `device = torch.device(device)`: the name holds what the
        // other held (read before the name's old value goes).
        let from = match value {
            Expr::Call(call) if self.built_device(value) => {
                call.arguments.find_argument_value("type", 0)
            }
            other => Some(other),
        };
        let held = from.and_then(|from| self.pending_of(from)).cloned();
        // A new value replaces what the name held, wherever it was kept; an attribute set in
        // several methods (`self.device = torch.device("cuda")` in one, `"cpu"` in another)
        // may hold either.
        if !(file && name.contains('.')) || held.is_some() {
            self.flow.pending.remove(name);
            self.file_pending.remove(name);
        }
        let Some((choice, shown, span)) = self.device_literal(value) else {
            if let Some(pending) = held {
                match file {
                    true => self.file_pending.insert(name.to_owned(), pending),
                    false => self.flow.pending.insert(name.to_owned(), pending),
                };
            }
            return;
        };
        // A GPU with its ordinal is a device whatever its use when it is built as one, or
        // bound to a name that says so.
        let named_gpu = (says_device(name) && string(value).is_some()) || self.built_device(value);
        if named_gpu && matches!(choice, Choice::Ordinal(_)) {
            self.chosen(choice, shown, span, self.in_entry);
            return;
        }
        self.hold(name, choice, shown, span, false, file);
    }

    /// Binds `name` to a device chosen at `span`, to be reported where it reaches a device
    /// position; `file` keeps it for the file's other functions, `asked` marks the current
    /// device asked for (see [`Pending::asked`]).
    fn hold(
        &mut self,
        name: &str,
        choice: Choice,
        shown: String,
        span: Range<usize>,
        asked: bool,
        file: bool,
    ) {
        let pending = Pending {
            choice,
            shown,
            span,
            in_entry: self.in_entry,
            reported: false,
            asked,
        };
        match file {
            true => self.file_pending.insert(name.to_owned(), pending),
            false => self.flow.pending.insert(name.to_owned(), pending),
        };
    }

    /// `"cuda" if torch.cuda.is_available() else "cpu"`: the availability check, when this is
    /// one.
    fn fallback(&self, expr: &Expr) -> Option<(String, Range<usize>)> {
        let expr = match expr {
            Expr::Call(call) if self.resolve(&call.func).as_deref() == Some("torch.device") => {
                call.arguments.find_positional(0)?
            }
            other => other,
        };
        let Expr::If(choice) = expr else {
            return None;
        };
        let check = self.availability_check(&choice.test)?;
        let cpu = |e: &Expr| self.device_of(e).as_deref() == Some("cpu");
        // `map_location="cpu" if not torch.cuda.is_available() else None` only lets a
        // checkpoint load without a GPU: no GPU is chosen.
        let none = |e: &Expr| e.is_none_literal_expr();
        let chooses = (cpu(&choice.body) && !none(&choice.orelse))
            || (cpu(&choice.orelse) && !none(&choice.body));
        chooses.then_some(check)
    }

    /// The availability check in a condition, shown, and where it is. It may be one of several
    /// conditions (`use_gpu and torch.cuda.is_available()`), or negated (`"cpu" if not
    /// torch.cuda.is_available() else "cuda"`).
    fn availability_check(&self, test: &Expr) -> Option<(String, Range<usize>)> {
        let tests: Vec<&Expr> = match test {
            Expr::BoolOp(conditions) => conditions.values.iter().collect(),
            test => vec![test],
        };
        tests.into_iter().find_map(|test| match peel_not(test) {
            Expr::Call(call)
                if self
                    .resolve(&call.func)
                    .is_some_and(|path| AVAILABILITY.contains(&path.as_str())) =>
            {
                Some((
                    format!("{}()", self.source(&range(&*call.func))),
                    range(call),
                ))
            }
            _ => None,
        })
    }

    /// A device bound to `name` in a branch an availability check chose
    /// (`if torch.cuda.is_available(): device = "cuda"`): a fallback, as the conditional
    /// expression is.
    fn branch_fallback(&mut self, name: &str, value: &Expr) {
        let Some((shown, span)) = self.checked_branch.clone() else {
            return;
        };
        let known = self
            .flow
            .fallbacks
            .iter()
            .any(|(held, _, at)| held == name && *at == span);
        // A device string or a `torch.device(...)`, not a number or a name.
        let device = match value {
            Expr::Call(call) => self.resolve(&call.func).as_deref() == Some("torch.device"),
            other => string(other).is_some(),
        } && self.device_of(value).is_some();
        if !known && device && self.fallback(value).is_none() {
            self.flow.fallbacks.push((name.to_owned(), shown, span));
        }
    }

    /// Ends a function's flow: each fallback nothing looked at is a finding.
    fn finish_flow(&mut self, body: &[Stmt]) {
        let fallbacks = std::mem::take(&mut self.flow.fallbacks);
        for (name, shown, span) in fallbacks {
            // An attribute (`self.device`) is read by other functions: only a plain name that
            // nothing reads chose nothing.
            let report = match fate(body, &name, span.end) {
                Fate::LookedAt => false,
                Fate::Unused => name.contains('.'),
                Fate::Unchecked => true,
            };
            if report {
                self.events.push(Event::SilentFallback { shown, span });
            }
        }
    }

    fn assign(&mut self, targets: &[Expr], value: &Expr) {
        for target in targets {
            match target {
                // `device, dtype = "cuda", torch.float16`: each name its value.
                Expr::Tuple(names) if matches!(value, Expr::Tuple(values) if values.len() == names.len()) =>
                {
                    let Expr::Tuple(values) = value else { continue };
                    for (name, value) in names.iter().zip(values.iter()) {
                        self.assign(std::slice::from_ref(name), value);
                    }
                }
                Expr::Subscript(subscript)
                    if self.resolve(&subscript.value).as_deref() == Some("os.environ") =>
                {
                    if let Some(variable) = string(&subscript.slice) {
                        self.set_env(variable.to_owned(), range(target));
                    }
                }
                // `device_map["vision_model"] = 0`: that module's device.
                Expr::Subscript(subscript)
                    if dotted(&subscript.value).is_some_and(|map| map.ends_with("device_map")) =>
                {
                    self.device_argument(value, |ordinal| format!("device_map[...] = {ordinal}"));
                }
                Expr::Name(name) => {
                    let name = name.id.to_string();
                    let module_level = self.qualname.is_empty();
                    self.bind_device_string(&name, value, module_level);
                    match (string(value), self.resolve(value)) {
                        (Some(text), _) => {
                            self.flow.strings.insert(name.clone(), text.to_owned());
                        }
                        (None, Some(path)) => {
                            self.flow.aliases.insert(name.clone(), path);
                        }
                        (None, None) => {
                            self.flow.strings.remove(&name);
                            self.flow.aliases.remove(&name);
                        }
                    }
                    match self.fact_of(value) {
                        Some(fact) => {
                            self.flow.facts.insert(name.clone(), fact);
                        }
                        None => {
                            self.flow.facts.remove(&name);
                        }
                    }
                    self.branch_fallback(&name, value);
                    if let Some((shown, span)) = self.fallback(value) {
                        self.flow.fallbacks.push((name, shown, span));
                    }
                }
                Expr::Attribute(_) => {
                    if let Some(name) = dotted(target) {
                        self.bind_device_string(&name, value, true);
                        self.branch_fallback(&name, value);
                        if let Some((shown, span)) = self.fallback(value) {
                            self.flow.fallbacks.push((name, shown, span));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn function(&mut self, def: &ast::StmtFunctionDef) {
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        self.qualname.push(def.name.to_string());
        // A function defined in a class body is its method; functions nested in a method
        // still see its `self`.
        let owner = self.class_body.take();
        let saved_method = self.method_of.clone();
        if owner.is_some() {
            self.method_of.clone_from(&owner);
        }
        let configured = {
            let full = format!("{}.{}", self.module, self.qualname.join("."));
            self.configured.iter().any(|entry| entry == &full)
        };
        let entry = self.in_entry
            || configured
            || (self.qualname.len() == 1 && self.entries.functions.contains(def.name.as_str()));
        let saved_entry = std::mem::replace(&mut self.in_entry, entry);
        for parameter in def.parameters.iter_non_variadic_params() {
            // A default device built to be kept is judged where the parameter is used.
            if let Some(default) = &parameter.default {
                match self.built_device(default) {
                    true => self.visit_kept(default),
                    false => self.visit_expr(default),
                }
            }
        }
        self.scopes
            .push(Scope::of(&def.body, Some(&def.parameters), &self.package));
        let saved_flow = std::mem::take(&mut self.flow);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_branch = self.checked_branch.take();
        // A default device is the function choosing for callers who pass none.
        for parameter in def.parameters.iter_non_variadic_params() {
            if let Some(default) = &parameter.default {
                let name = parameter.parameter.name.as_str();
                self.bind_device_string(name, default, false);
                // `def init(device: int = 0)`: GPU 0 for callers who pass none, reported where
                // the parameter reaches a device position.
                if let Some(ordinal) = integer(default).filter(|_| says_device(name)) {
                    let shown = self.source(&range(parameter)).to_owned();
                    let choice = Choice::Ordinal(ordinal);
                    self.hold(name, choice, shown, range(&**default), false, false);
                }
            }
        }
        for stmt in &def.body {
            self.visit_stmt(stmt);
        }
        self.finish_flow(&def.body);
        self.flow = saved_flow;
        self.loops = saved_loops;
        self.checked_branch = saved_branch;
        self.scopes.pop();
        self.in_entry = saved_entry;
        self.class_body = owner;
        self.method_of = saved_method;
        self.qualname.pop();
    }

    /// A `for` (its `target`) or `while` (its `test`, evaluated in every iteration) loop.
    fn a_loop<'v>(
        &mut self,
        keyword: Range<usize>,
        target: Option<&Expr>,
        test: Option<&'v Expr>,
        body: &'v [Stmt],
    ) {
        let mut assigned = assigned_names(body, true);
        if let Some(target) = target {
            let mut names = Vec::new();
            collect_names(target, &mut names);
            assigned.extend(names);
        }
        let moved_twice = moved_twice(body);
        self.loops.push(Loop {
            keyword,
            assigned: assigned.clone(),
            moved_twice,
        });
        if let Some(test) = test {
            self.visit_expr(test);
        }
        for stmt in body {
            self.visit_stmt(stmt);
        }
        self.loops.pop();
        // What the loop assigned is unknown after it.
        for name in assigned {
            self.flow.facts.remove(&name);
        }
    }
}

/// Whether a call passes on its caller's arguments (`*args`, `**kwargs`).
fn forwards(arguments: &ast::Arguments) -> bool {
    arguments.args.iter().any(Expr::is_starred_expr)
        || arguments
            .keywords
            .iter()
            .any(|keyword| keyword.arg.is_none())
}

/// The last name of a name or an attribute chain (`print`, `info` of `logger.info`), or "".
fn last_name(expr: &Expr) -> &str {
    match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        _ => "",
    }
}

/// What a negation (`not x`) negates, or the expression itself.
fn peel_not(expr: &Expr) -> &Expr {
    match expr {
        Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => peel_not(&unary.operand),
        other => other,
    }
}

/// Whether the last part of a dotted name says it holds a device (`device`, `self.device_id`),
/// not a device type (`device_type`).
fn says_device(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    last.contains("device") && !last.contains("type")
}

/// The names an expression reads.
fn collect_names(expr: &Expr, names: &mut Vec<String>) {
    struct Names<'n>(&'n mut Vec<String>);
    impl<'a> Visitor<'a> for Names<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr {
                self.0.push(name.id.to_string());
            }
            if let Some(dotted) = dotted(expr).filter(|_| matches!(expr, Expr::Attribute(_))) {
                self.0.push(dotted);
            }
            visitor::walk_expr(self, expr);
        }
    }
    Names(names).visit_expr(expr);
}

/// A module under the calls that return it (`m.eval()`, `m.train()`, `m.half()`).
fn peel(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(call) => match &*call.func {
            Expr::Attribute(method)
                if matches!(
                    method.attr.as_str(),
                    "eval" | "train" | "float" | "half" | "double" | "bfloat16" | "requires_grad_"
                ) =>
            {
                peel(&method.value)
            }
            _ => expr,
        },
        _ => expr,
    }
}

/// Receivers of more than one of `.cpu()`, `.cuda(...)` and `.to(...)` in a loop's body.
fn moved_twice(body: &[Stmt]) -> HashSet<String> {
    struct Moves(HashMap<String, usize>);
    impl<'a> Visitor<'a> for Moves {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = &*call.func
                && matches!(method.attr.as_str(), "cpu" | "cuda" | "to")
                && let Some(receiver) = dotted(peel(&method.value))
            {
                *self.0.entry(receiver).or_default() += 1;
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut moves = Moves(HashMap::new());
    visitor::walk_body(&mut moves, body);
    moves
        .0
        .into_iter()
        .filter(|(_, count)| *count > 1)
        .map(|(name, _)| name)
        .collect()
}

/// What a body does with the device bound to `name` after `after`.
#[derive(Debug, PartialEq, Eq)]
enum Fate {
    /// Nothing reads it: no device is used, so nothing can fall back.
    Unused,
    /// It is used, and nothing looks at which device it is.
    Unchecked,
    /// Something compares it, asserts on it, reports it (`print`, logging, an f-string), or
    /// reads its `.type`.
    LookedAt,
}

fn fate(body: &[Stmt], name: &str, after: usize) -> Fate {
    struct Looks<'n> {
        name: &'n str,
        /// Where the choice was made: what is looked at before it is the caller's value.
        after: usize,
        /// Inside something that looks at what it contains.
        looking: usize,
        found: bool,
        used: bool,
    }
    impl<'a> Visitor<'a> for Looks<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::Assert(_) | Stmt::Raise(_) = stmt {
                self.looking += 1;
                visitor::walk_stmt(self, stmt);
                self.looking -= 1;
            } else {
                visitor::walk_stmt(self, stmt);
            }
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            let is_name = dotted(expr).as_deref() == Some(self.name)
                && usize::from(expr.range().start()) >= self.after;
            self.used |= is_name;
            if is_name && self.looking > 0 {
                self.found = true;
                return;
            }
            let looks = match expr {
                Expr::Compare(_) | Expr::FString(_) => true,
                // `device.type`, `device.index`.
                Expr::Attribute(attribute) => {
                    if matches!(attribute.attr.as_str(), "type" | "index")
                        && dotted(&attribute.value).as_deref() == Some(self.name)
                        && usize::from(expr.range().start()) >= self.after
                    {
                        self.found = true;
                        return;
                    }
                    false
                }
                Expr::Call(call) => REPORTING.contains(&last_name(&call.func)),
                _ => false,
            };
            self.looking += usize::from(looks);
            visitor::walk_expr(self, expr);
            self.looking -= usize::from(looks);
        }
    }
    let mut looks = Looks {
        name,
        after,
        looking: 0,
        found: false,
        used: false,
    };
    visitor::walk_body(&mut looks, body);
    match (looks.found, looks.used) {
        (true, _) => Fate::LookedAt,
        (false, true) => Fate::Unchecked,
        (false, false) => Fate::Unused,
    }
}

impl<'v> Visitor<'v> for Checker<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'v Stmt) {
        self.stmt(stmt);
    }

    fn visit_expr(&mut self, expr: &'v Expr) {
        self.expr(expr);
    }
}

impl Checker<'_, '_> {
    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => self.function(def),
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                self.qualname.push(class.name.to_string());
                let saved = self.class_body.replace(self.qualname.join("."));
                for stmt in &class.body {
                    self.visit_stmt(stmt);
                }
                self.class_body = saved;
                self.qualname.pop();
            }
            Stmt::If(guard) if self.qualname.is_empty() && is_main_guard(&guard.test) => {
                let saved = std::mem::replace(&mut self.in_entry, true);
                visitor::walk_stmt(self, stmt);
                self.in_entry = saved;
            }
            Stmt::For(for_) => {
                self.visit_expr(&for_.iter);
                let start = usize::from(for_.range().start());
                let keyword = if for_.is_async {
                    start..start + 5
                } else {
                    start..start + 3
                };
                self.a_loop(keyword, Some(&for_.target), None, &for_.body);
                for stmt in &for_.orelse {
                    self.visit_stmt(stmt);
                }
            }
            Stmt::While(while_) => {
                let start = usize::from(while_.range().start());
                self.a_loop(start..start + 5, None, Some(&while_.test), &while_.body);
                for stmt in &while_.orelse {
                    self.visit_stmt(stmt);
                }
            }
            Stmt::Assign(assign) => {
                // A choice bound to a name or attribute is judged by what the function does
                // with it, not where it is made.
                if let Some((_, span)) = self.fallback(&assign.value)
                    && assign.targets.iter().all(|t| dotted(t).is_some())
                {
                    self.bound_fallbacks.insert(span.start);
                }
                // A device built to be kept (`device = torch.device("cuda")`) is judged where it
                // is used, as a device string bound to a name is.
                let named = assign.targets.iter().all(|t| dotted(t).is_some());
                let kept = named && self.built_device(&assign.value);
                // So is the current device kept (`current = torch.cuda.current_device()`), which
                // is often only asked about (`get_device_capability(current)`).
                let current = named && self.asks_current(&assign.value);
                match (kept, current) {
                    (true, _) => self.visit_kept(&assign.value),
                    (false, true) => self.device_use(range(&*assign.value)),
                    (false, false) => self.visit_expr(&assign.value),
                }
                for target in &assign.targets {
                    if !matches!(target, Expr::Name(_)) {
                        self.visit_expr(target);
                    }
                }
                self.assign(&assign.targets, &assign.value);
                if current {
                    let span = range(&*assign.value);
                    let shown = self.source(&span).to_owned();
                    for target in assign.targets.iter().filter_map(dotted) {
                        let file = target.contains('.') || self.qualname.is_empty();
                        let (shown, span) = (shown.clone(), span.clone());
                        self.hold(&target, Choice::Current, shown, span, true, file);
                    }
                }
            }
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    if let Some((_, span)) = self.fallback(value) {
                        self.bound_fallbacks.insert(span.start);
                    }
                    match dotted(&assign.target).is_some() && self.built_device(value) {
                        true => self.visit_kept(value),
                        false => self.visit_expr(value),
                    }
                    self.assign(std::slice::from_ref(&*assign.target), value);
                }
            }
            Stmt::Return(ret) => {
                visitor::walk_stmt(self, stmt);
                // A module's function that returns a device it chose chooses for its callers.
                let chosen = ret.value.as_deref().is_some_and(|value| {
                    self.device_literal(value).is_some()
                        || dotted(value).is_some_and(|name| self.flow.pending.contains_key(&name))
                });
                // A method is a chooser too (`self.pick_device()`, `cls.default_device()`).
                let method = self.qualname.len() == 2
                    && self.method_of.as_deref() == Some(self.qualname[0].as_str());
                if chosen && (self.qualname.len() == 1 || method) && !self.module.is_empty() {
                    let path = format!("{}.{}", self.module, self.qualname.join("."));
                    if !self.choosers.contains(&path) {
                        self.choosers.push(path);
                    }
                }
            }
            Stmt::Assert(_) => {
                self.looking += 1;
                visitor::walk_stmt(self, stmt);
                self.looking -= 1;
            }
            // Each branch starts from what held before it; afterwards a device string bound in
            // any branch may be what the name holds (`arg = "cuda:0"` in one branch, `"cpu"` in
            // another: the function may choose GPU 0).
            Stmt::If(branch) => {
                self.visit_expr(&branch.test);
                // A chain with an availability check in a condition chooses by it, unless a
                // branch says what it chose (`print("using CPU, this will be slow")`).
                let says = || {
                    std::iter::once(&branch.body)
                        .chain(branch.elif_else_clauses.iter().map(|c| &c.body))
                        .any(|body| reports(body))
                };
                let check = std::iter::once(&*branch.test)
                    .chain(
                        branch
                            .elif_else_clauses
                            .iter()
                            .filter_map(|c| c.test.as_ref()),
                    )
                    .find_map(|test| self.availability_check(test))
                    .filter(|_| !says());
                let saved_check = match check {
                    Some(check) => self.checked_branch.replace(check),
                    None => self.checked_branch.clone(),
                };
                let before = (self.flow.pending.clone(), self.file_pending.clone());
                let has_else = branch.elif_else_clauses.iter().any(|c| c.test.is_none());
                let mut outcomes = Vec::new();
                let bodies = std::iter::once((None, &branch.body)).chain(
                    branch
                        .elif_else_clauses
                        .iter()
                        .map(|clause| (clause.test.as_ref(), &clause.body)),
                );
                for (test, body) in bodies {
                    (self.flow.pending, self.file_pending) = before.clone();
                    if let Some(test) = test {
                        self.visit_expr(test);
                    }
                    for stmt in body {
                        self.visit_stmt(stmt);
                    }
                    outcomes.push((
                        std::mem::take(&mut self.flow.pending),
                        std::mem::take(&mut self.file_pending),
                    ));
                }
                if !has_else {
                    outcomes.push(before);
                }
                for (pending, file_pending) in outcomes {
                    for (name, held) in pending {
                        self.flow.pending.entry(name).or_insert(held);
                    }
                    for (name, held) in file_pending {
                        self.file_pending.entry(name).or_insert(held);
                    }
                }
                for name in assigned_names(std::slice::from_ref(stmt), false) {
                    self.flow.facts.remove(&name);
                }
                self.checked_branch = saved_check;
            }
            Stmt::With(with) => {
                let guard = with.items.iter().any(|item| {
                    matches!(&item.context_expr, Expr::Call(call)
                        if self.resolve(&call.func).and_then(|path| self.item(&path))
                            .is_some_and(|entry| entry.role == Role::ScopedGuard))
                });
                self.scoped += usize::from(guard);
                visitor::walk_stmt(self, stmt);
                self.scoped -= usize::from(guard);
                for name in assigned_names(std::slice::from_ref(stmt), false) {
                    self.flow.facts.remove(&name);
                }
            }
            Stmt::Try(_) | Stmt::Match(_) => {
                visitor::walk_stmt(self, stmt);
                // Facts that a branch changed are unknown after it.
                for name in assigned_names(std::slice::from_ref(stmt), false) {
                    self.flow.facts.remove(&name);
                }
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match expr {
            // A device asked about is not used: only what builds it is walked.
            Expr::Call(call) if self.is_query(call) => {
                self.device_use(range(call));
                // `get_device_capability(torch.cuda.current_device())` asks about it too.
                self.checking += 1;
                for value in &call.arguments.args {
                    self.visit_kept(value);
                }
                for keyword in &call.arguments.keywords {
                    self.visit_kept(&keyword.value);
                }
                self.checking -= 1;
            }
            Expr::Call(call) => {
                self.call(call);
                // The callee's own chain is resolved whole; what it is called on is walked.
                match &*call.func {
                    Expr::Attribute(attribute) => self.visit_expr(&attribute.value),
                    Expr::Name(_) => {}
                    other => self.visit_expr(other),
                }
                // What is passed to `print` or a logger is looked at.
                let reports = usize::from(REPORTING.contains(&last_name(&call.func)));
                self.looking += reports;
                let checking = std::mem::take(&mut self.checking);
                self.visit_arguments(&call.arguments);
                self.checking = checking;
                self.looking -= reports;
                // The current device asked for and handed on (`ToDevice(current)`) is used.
                let asked = |held: &HashMap<String, Pending>| held.values().any(|p| p.asked);
                if reports == 0
                    && self.checking == 0
                    && (asked(&self.flow.pending) || asked(&self.file_pending))
                {
                    let passed: Vec<&Expr> = call
                        .arguments
                        .args
                        .iter()
                        .chain(call.arguments.keywords.iter().map(|keyword| &keyword.value))
                        .filter(|value| self.pending_of(value).is_some_and(|p| p.asked))
                        .collect();
                    for value in passed {
                        self.device_argument(value, |_| String::new());
                    }
                }
            }
            Expr::Attribute(_) => {
                // An API used as a value (`fn = torch.cuda.set_device`).
                if let Some(path) = self.resolve(expr)
                    && let Some(entry) = self.item(&path)
                    && matches!(
                        entry.role,
                        Role::SetCurrentDevice | Role::ImplicitDevice { .. }
                    )
                {
                    self.api_event(entry, &path, range(expr), true);
                    return;
                }
                visitor::walk_expr(self, expr);
            }
            Expr::BinOp(binary) => {
                visitor::walk_expr(self, expr);
                let combines = matches!(
                    binary.op,
                    Operator::Add
                        | Operator::Sub
                        | Operator::Mult
                        | Operator::Div
                        | Operator::MatMult
                        | Operator::FloorDiv
                        | Operator::Mod
                        | Operator::Pow
                );
                if combines {
                    self.combine(range(expr), &[&binary.left, &binary.right]);
                }
            }
            Expr::If(_) => {
                // Chosen and used at once (`model.to("cuda" if ... else "cpu")`): nothing can
                // look at it later. A choice bound to a name is judged when its function ends.
                if let Some((shown, span)) = self.fallback(expr)
                    && self.looking == 0
                    && !self.bound_fallbacks.contains(&span.start)
                {
                    self.events.push(Event::SilentFallback { shown, span });
                }
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(_) => {
                let saved = std::mem::take(&mut self.loops);
                visitor::walk_expr(self, expr);
                self.loops = saved;
            }
            // What a comparison or an f-string holds is looked at.
            Expr::Compare(_) | Expr::FString(_) => {
                let compares = usize::from(matches!(expr, Expr::Compare(_)));
                self.looking += 1;
                self.checking += compares;
                visitor::walk_expr(self, expr);
                self.checking -= compares;
                self.looking -= 1;
            }
            // A comprehension's targets change with every element: transfers of them in a
            // loop are not of loop-invariant values.
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                let mut targets = Vec::new();
                for generator in generators {
                    collect_names(&generator.target, &mut targets);
                }
                let added: Vec<String> = match self.loops.last_mut() {
                    Some(frame) => targets
                        .into_iter()
                        .filter(|name| frame.assigned.insert(name.clone()))
                        .collect(),
                    None => Vec::new(),
                };
                visitor::walk_expr(self, expr);
                if let Some(frame) = self.loops.last_mut() {
                    for name in added {
                        frame.assigned.remove(&name);
                    }
                }
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}
