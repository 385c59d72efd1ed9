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

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::ops::Range;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Operator, Stmt};
use ruff_text_size::Ranged;

use crate::analysis::Event;
use crate::api::{Api, Role};
use crate::python::analysis::device_params::{device_params, methods};
use crate::python::analysis::{
    entry::{EntryPoints, FileRun, is_main_guard},
    fallback::said,
    flow::{Choice, Flow, HeldDevice},
    loops::Loop,
    model_code::ModelCode,
};
use crate::python::semantic::{
    Scope, Walrus, assigned_names, collect_names, dotted, imported_modules, integer, package_of,
    range, root, string, string_constants,
};
use crate::python::{Asked, Checked, DeviceParam, Project, PyContext, Slot, Summary};
use crate::source::FileRole;

pub(super) fn check<'a>(module: &ast::ModModule, text: &str, cx: &PyContext<'a>) -> Checked<'a> {
    let base = package_of(cx);
    let walrus = Walrus::of(text);
    let module_scope = Scope::of(&module.body, None, &base, walrus);
    let mut asked = Asked::default();
    let entries = EntryPoints::find(&module.body, text, &module_scope, cx, &mut asked);
    let file = FileRun::of(&module.body, &entries, cx, &mut asked);
    let program = file.program;
    let mut checker = Checker {
        api: cx.api,
        text,
        walrus,
        scopes: vec![module_scope],
        entries,
        program,
        function: FnState {
            in_entry: program,
            ..FnState::default()
        },
        constants: string_constants(&module.body),
        qualname: Vec::new(),
        class_body: None,
        module: cx.module.clone(),
        rooted: cx.rooted.clone(),
        configured: cx.entry_points,
        bound_fallbacks: FxHashSet::default(),
        file_pending: FxHashMap::default(),
        looking: 0,
        scoped: 0,
        checking: 0,
        deferred: 0,
        typing: 0,
        project: cx.project,
        package: base,
        choosers: Vec::new(),
        passing: Vec::new(),
        device_params: device_params(&module.body, &cx.module, text),
        device_modules: Vec::new(),
        asks_driver: Vec::new(),
        instances: Vec::new(),
        adopted: Vec::new(),
        asked: RefCell::new(asked),
        events: Vec::new(),
        chosen_events: FxHashMap::default(),
        model: ModelCode::new(cx.role, cx.model_code),
    };
    for stmt in &module.body {
        checker.visit_stmt(stmt);
    }
    checker.finish_flow(&module.body);
    checker.report_escaped();
    checker.export_held();
    let summary = Summary {
        choosers: std::mem::take(&mut checker.choosers),
        passing: std::mem::take(&mut checker.passing),
        imports: checker.scopes[0].imports().collect(),
        globs: checker.scopes[0].globs.clone(),
        program: file.runs,
        outside: file.outside,
        test: cx.role == FileRole::EntryFile && file.program,
        imported: imported_modules(&module.body, &checker.package),
        device_params: std::mem::take(&mut checker.device_params),
        methods: methods(&module.body),
        launched: std::mem::take(&mut checker.entries.launched_elsewhere),
        device_modules: std::mem::take(&mut checker.device_modules),
        asks_driver: std::mem::take(&mut checker.asks_driver),
        instances: std::mem::take(&mut checker.instances),
        adopted: std::mem::take(&mut checker.adopted),
        classes: checker.model.classes(&checker.module),
        parents: checker.model.parents(&checker.module),
        fed: std::mem::take(&mut checker.model.fed),
        tensor_returns: std::mem::take(&mut checker.model.returns),
    };
    Checked {
        events: Ok(checker.events),
        summary,
        asked: checker.asked.into_inner(),
        program: file.why,
    }
}

/// The state of the function being walked, saved and restored as one value when the walk
/// enters and leaves a function.
#[derive(Debug, Default)]
pub(crate) struct FnState {
    /// Whether the function is where a program starts.
    pub(crate) in_entry: bool,
    /// The class of the method being walked, which `self.f()` and `cls.f()` call into; a
    /// function nested in a method still sees its `self`.
    pub(crate) method_of: Option<String>,
    /// The class of another module that adopts the module-level function being walked as its
    /// method, by an import in its body (its dotted path): what `self` is there.
    pub(crate) adopted_by: Option<String>,
    pub(crate) flow: Flow,
    pub(crate) loops: Vec<Loop>,
    /// Inside a branch that an availability check chose: the check, where it is, and where the
    /// `if` ends (a device it binds falls back if it is used after).
    pub(crate) checked_branch: Option<(String, Range<usize>, usize)>,
    /// Whether an `assert` of an availability check came before: what follows runs only where a
    /// GPU is, as in that check's branch.
    pub(crate) asserted_available: bool,
    /// Whether it returns a device that an availability check chose, without a word: its later
    /// checks (`if torch.xpu.is_available(): return "xpu"`) are one choice with the first.
    pub(crate) returns_fallback: bool,
    /// The function's parameters and the names bound to values read from them: what it may
    /// return of its caller's.
    pub(crate) from_caller: Vec<CompactString>,
    /// Whether it returns something read from its parameters.
    pub(crate) passes_on: bool,
    /// Its device parameters ([`Summary::device_params`]), by name, and whether it looks at
    /// each (compares it, reports it, asserts on it, reads its `.type`), marked as it is walked.
    pub(crate) device_params: Vec<(CompactString, bool)>,
    /// Whether it returns a parameter itself, or a device built from one (`return device`,
    /// `return torch.device(device)`): a conversion that hands back the device it was given.
    pub(crate) forwards: bool,
    /// The name of its `**kwargs` parameter, if it has one.
    pub(crate) keywords: Option<CompactString>,
}

pub(crate) struct Checker<'a, 't> {
    pub(crate) api: &'a Api,
    pub(crate) text: &'t str,
    /// Whether the file's expressions may assign names.
    pub(crate) walrus: Walrus,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) entries: EntryPoints,
    /// The whole file is where a program starts (a script, a test file).
    pub(crate) program: bool,
    /// What belongs to the function being walked (or the module's top level).
    pub(crate) function: FnState,
    /// The module's string constants ([`string_constants`]).
    pub(crate) constants: FxHashMap<String, String>,
    /// The classes and functions around, for configured entry points.
    pub(crate) qualname: Vec<String>,
    /// The class whose body is being walked, as a dotted path below the module.
    pub(crate) class_body: Option<String>,
    pub(crate) module: String,
    /// The module's names from the project's import roots ([`PyContext::rooted`]).
    pub(crate) rooted: Vec<String>,
    pub(crate) configured: &'a [String],
    /// Where the availability checks of choices bound to names start.
    pub(crate) bound_fallbacks: FxHashSet<usize>,
    /// Device strings bound to attributes (`self.map_location = "cuda"`) and module-level
    /// names, which other functions of the file use.
    pub(crate) file_pending: FxHashMap<String, HeldDevice>,
    /// Inside something that looks at a value (a comparison, an assertion, a report).
    pub(crate) looking: usize,
    /// Inside `with torch.cuda.device(i):`, where the current device is the one it names.
    pub(crate) scoped: usize,
    /// Directly inside a comparison (`x.device == torch.device("cuda")`) or a query
    /// (`get_device_capability(...)`), where a device is checked, not used; another call's
    /// arguments are outside it again.
    pub(crate) checking: usize,
    /// Inside a lambda, whose body runs when it is called, not where it is written.
    pub(crate) deferred: usize,
    /// Inside a type expression (an annotation, a subscript's slice: `Union[torch.cuda.BoolTensor,
    /// ...]`, `isinstance`'s arguments), where a tensor type is named, not converted to.
    pub(crate) typing: usize,
    /// The project's device choosers, across its files.
    pub(crate) project: &'a Project,
    /// The package relative imports start from.
    pub(crate) package: Vec<String>,
    /// This file's functions that return a device they chose (`def infer_device(): return
    /// "cuda"`), as dotted paths.
    pub(crate) choosers: Vec<String>,
    /// Those of them that may return what their caller passed, and the file's functions that
    /// hand back the device they were given (`def int_to_device(device)`).
    pub(crate) passing: Vec<String>,
    /// This file's functions that take a device, as [`Summary::device_params`].
    pub(crate) device_params: Vec<DeviceParam>,
    /// This file's functions that return torch's module of an accelerator, as
    /// [`Summary::device_modules`].
    pub(crate) device_modules: Vec<(String, String)>,
    /// This file's module-level functions that ask the GPU driver something, as
    /// [`Summary::asks_driver`].
    pub(crate) asks_driver: Vec<String>,
    /// [`Summary::instances`].
    pub(crate) instances: Vec<(String, String)>,
    /// [`Summary::adopted`].
    pub(crate) adopted: Vec<(String, String)>,
    /// What the file asked of the project (lookups take `&self`).
    pub(crate) asked: RefCell<Asked>,
    pub(crate) events: Vec<Event<'a>>,
    /// The file's model classes ([`ModelCode`]).
    pub(crate) model: ModelCode,
    /// Where each device chosen by a string or ordinal was written → its event, so that it is
    /// reported once and the places it goes are added to it.
    pub(crate) chosen_events: FxHashMap<(usize, usize), usize>,
}

impl<'a> Checker<'a, '_> {
    pub(crate) fn function(&mut self, def: &ast::StmtFunctionDef) {
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        self.qualname.push(def.name.as_str().to_owned());
        // A function defined in a class body is its method; functions nested in a method
        // still see its `self`.
        let owner = self.class_body.take();
        let configured = !self.configured.is_empty() && {
            let full = [self.module.as_str(), ".", &self.qualname.join(".")].concat();
            self.configured.iter().any(|entry| entry == &full)
        };
        let state = FnState {
            in_entry: self.function.in_entry
                || configured
                || (self.qualname.len() == 1 && self.entries.functions.contains(def.name.as_str()))
                || (owner.is_some() && self.entries.methods.contains(def.name.as_str()))
                || owner
                    .as_ref()
                    .is_some_and(|class| self.entries.classes.contains(class.as_str())),
            method_of: owner.clone().or_else(|| self.function.method_of.clone()),
            adopted_by: match owner.is_none() && self.qualname.len() == 1 {
                true => self.adopter(def),
                false => self.function.adopted_by.clone(),
            },
            from_caller: def
                .parameters
                .iter()
                .map(|parameter| parameter.name().as_str().into())
                .collect(),
            device_params: self.own_device_params(def),
            keywords: (def.parameters.kwarg.as_ref()).map(|kwarg| kwarg.name.as_str().into()),
            ..FnState::default()
        };
        // Defaults are evaluated where the function is defined, in the flow around it, as the
        // function's own code (its entry point, its class).
        let outer_entry = std::mem::replace(&mut self.function.in_entry, state.in_entry);
        let outer_method = std::mem::replace(&mut self.function.method_of, state.method_of.clone());
        let mut defaulted_fallbacks = Vec::new();
        for parameter in def.parameters.iter_non_variadic_params() {
            // A default device built to be kept is judged where the parameter is used.
            if let Some(default) = &parameter.default {
                // A default chosen by availability is judged by what the function does with
                // its parameter (`if str(device) == "cpu"` looks at it).
                if let Some((shown, span)) = self.fallback(default) {
                    self.bound_fallbacks.insert(span.start);
                    let name = parameter.parameter.name.as_str().to_owned();
                    defaulted_fallbacks.push((name, shown, span, range(&**default).end));
                }
                match self.built_device(default) {
                    true => self.visit_kept(default),
                    false => self.visit_expr(default),
                }
            }
        }
        self.function.in_entry = outer_entry;
        self.function.method_of = outer_method;
        self.scopes.push(Scope::of(
            &def.body,
            Some(&def.parameters),
            &self.package,
            self.walrus,
        ));
        let outer = std::mem::replace(&mut self.function, state);
        self.function.flow.fallbacks.extend(defaulted_fallbacks);
        self.follow_parameters(def, owner.is_some());
        // A default device is the function choosing for callers who pass none.
        for parameter in def.parameters.iter_non_variadic_params() {
            if let Some(default) = &parameter.default {
                let name = parameter.parameter.name.as_str();
                self.bind_device_string(name, default, false);
                if default.is_literal_expr() && self.device_literal(default).is_none() {
                    let literal = &mut self.function.flow.literal_defaults;
                    literal.insert(name.to_owned());
                }
                // `def init(device: int = 0)`, `def load(device_id=0)`, `def train(rank=0)`:
                // GPU 0 for callers who pass none, reported where the parameter reaches a
                // device position (`.to(rank)`, `device_ids=[rank]`).
                if let Some(ordinal) = integer(default) {
                    let shown = self.source(&range(parameter)).to_owned();
                    let choice = Choice::Ordinal(ordinal);
                    self.hold(name, choice, shown, range(&**default), false, false);
                }
                if let Some(held) = self.function.flow.pending.get_mut(name) {
                    held.default = true;
                }
            }
        }
        for stmt in &def.body {
            self.visit_stmt(stmt);
        }
        self.finish_flow(&def.body);
        self.note_tensor_return();
        if self.function.passes_on || self.function.forwards {
            self.note_passing();
        }
        self.note_looked_params(def);
        self.function = outer;
        self.scopes.pop();
        self.class_body = owner;
        self.qualname.pop();
    }
}

impl Checker<'_, '_> {
    /// The module-level function `def`'s device parameters, as the file's summary lists them.
    fn own_device_params(&self, def: &ast::StmtFunctionDef) -> Vec<(CompactString, bool)> {
        if self.qualname.len() != 1 || self.device_params.is_empty() {
            return Vec::new();
        }
        let path = [self.module.as_str(), ".", def.name.as_str()].concat();
        (self.device_params.iter())
            .filter(|param| param.function == path)
            .map(|param| (param.name.clone(), false))
            .collect()
    }

    /// A device parameter of the function, or a flag bound to an availability check, read
    /// where a value is looked at (`print(f"USE_CUDA SET TO: {use_cuda}")`).
    fn look_at_param(&mut self, expr: &Expr) {
        let Expr::Name(name) = expr else {
            return;
        };
        if let Some(param) =
            (self.function.device_params.iter_mut()).find(|(param, _)| param == name.id.as_str())
        {
            param.1 = true;
        }
        if let Some(flag) = self
            .function
            .flow
            .availability_flags
            .get_mut(name.id.as_str())
        {
            flag.2 = true;
        }
    }

    /// When the module-level function `def` ends: the device parameters it looked at, in the
    /// file's summary.
    fn note_looked_params(&mut self, def: &ast::StmtFunctionDef) {
        let looked: Vec<&CompactString> = (self.function.device_params.iter())
            .filter(|(_, seen)| *seen)
            .map(|(name, _)| name)
            .collect();
        if looked.is_empty() {
            return;
        }
        let path = [self.module.as_str(), ".", def.name.as_str()].concat();
        for param in &mut self.device_params {
            param.looked |= param.function == path && looked.contains(&&param.name);
        }
    }
}

impl<'v> Visitor<'v> for Checker<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'v Stmt) {
        self.stmt(stmt);
    }

    fn visit_expr(&mut self, expr: &'v Expr) {
        self.expr(expr);
    }

    fn visit_annotation(&mut self, expr: &'v Expr) {
        self.typing += 1;
        self.expr(expr);
        self.typing -= 1;
    }
}

impl Checker<'_, '_> {
    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => self.function(def),
            Stmt::Expr(expression) => {
                visitor::walk_stmt(self, stmt);
                self.moved_in_branch(&expression.value);
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                self.qualname.push(class.name.as_str().to_owned());
                let saved = self.class_body.replace(self.qualname.join("."));
                self.note_adopted(&class.body);
                self.note_model_class(class);
                for stmt in &class.body {
                    self.visit_stmt(stmt);
                }
                self.class_body = saved;
                self.qualname.pop();
            }
            Stmt::If(guard) if self.qualname.is_empty() && is_main_guard(&guard.test) => {
                let saved = std::mem::replace(&mut self.function.in_entry, true);
                visitor::walk_stmt(self, stmt);
                self.function.in_entry = saved;
            }
            Stmt::For(for_) => {
                self.visit_expr(&for_.iter);
                self.bind_elements(&for_.target, &for_.iter);
                // `for device in devices:` with the caller's `devices`: the loop's names.
                if self.reads_from_caller(&for_.iter) {
                    let mut names = Vec::new();
                    collect_names(&for_.target, &mut names);
                    self.function
                        .from_caller
                        .extend(names.iter().map(CompactString::from));
                }
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
                    && assign.targets.iter().all(|t| root(t).is_some())
                {
                    self.bound_fallbacks.insert(span.start);
                }
                // A device built to be kept (`device = torch.device("cuda")`) is judged where it
                // is used, as a device string bound to a name is.
                let named = assign.targets.iter().all(|t| root(t).is_some());
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
                    match target {
                        Expr::Name(_) => {}
                        // `torch.cuda.current_device = torch.xpu.current_device` replaces the
                        // attribute (a monkeypatch): only what it is set on is read.
                        Expr::Attribute(attribute) => self.visit_expr(&attribute.value),
                        other => self.visit_expr(other),
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
                    match root(&assign.target).is_some() && self.built_device(value) {
                        true => self.visit_kept(value),
                        false => self.visit_expr(value),
                    }
                    self.assign(std::slice::from_ref(&*assign.target), value);
                }
            }
            Stmt::Return(ret) => {
                let before = self.events.len();
                visitor::walk_stmt(self, stmt);
                if let Some(value) = ret.value.as_deref() {
                    self.returned(value, before);
                    self.returned_in_branch(value);
                    self.model_returned(value);
                }
            }
            Stmt::Assert(assert) => {
                self.looking += 1;
                visitor::walk_stmt(self, stmt);
                self.looking -= 1;
                self.function.asserted_available |= self.mentions_availability(&assert.test);
            }
            // Each branch starts from what held before it; afterwards a device string bound in
            // any branch may be what the name holds (`arg = "cuda:0"` in one branch, `"cpu"` in
            // another: the function may choose GPU 0).
            Stmt::If(branch) => {
                self.visit_expr(&branch.test);
                // A chain with an availability check in a condition chooses by it, unless a
                // branch says what it chose (`print("using CPU, this will be slow")`) or stops
                // (`raise RuntimeError("a GPU is needed")`). One that says in words what happens
                // without a GPU (`else: logging.warning("No GPU, using the CPU")`) also reports
                // what the function's later choices by availability do.
                let check = std::iter::once(&*branch.test)
                    .chain(
                        branch
                            .elif_else_clauses
                            .iter()
                            .filter_map(|c| c.test.as_ref()),
                    )
                    .find_map(|test| self.availability_check(test));
                let check = check.filter(|_| {
                    let bodies = std::iter::once(&branch.body)
                        .chain(branch.elif_else_clauses.iter().map(|c| &c.body));
                    let mut says = false;
                    for body in bodies {
                        let told = said(body, &self.api.names.reporting);
                        self.function.flow.said_without_gpu |= told.without_gpu;
                        says |= told.reports || body.iter().any(|s| self.stops(s));
                    }
                    !says
                });
                let saved_check = match check {
                    Some((shown, span)) => {
                        let end = range(stmt).end;
                        self.function.checked_branch.replace((shown, span, end))
                    }
                    None => self.function.checked_branch.clone(),
                };
                let before = self.held();
                let has_else = branch.elif_else_clauses.iter().any(|c| c.test.is_none());
                let mut outcomes = Vec::new();
                let bodies = std::iter::once((None, &branch.body)).chain(
                    branch
                        .elif_else_clauses
                        .iter()
                        .map(|clause| (clause.test.as_ref(), &clause.body)),
                );
                // `if i == 0:` of the loop's counter runs in one iteration.
                let first_only = self.first_iteration(&branch.test);
                for (at, (test, body)) in bodies.enumerate() {
                    self.restore_held(before.clone());
                    if let Some(test) = test {
                        self.visit_expr(test);
                    }
                    let once = at == 0 && first_only;
                    self.once_in_loop(once, 1);
                    let test = if at == 0 { Some(&*branch.test) } else { test };
                    let model = self.enter_export_branch(test);
                    for stmt in body {
                        self.visit_stmt(stmt);
                    }
                    self.function.flow.in_model = model;
                    self.once_in_loop(once, -1);
                    outcomes.push(self.take_held());
                }
                if !has_else {
                    outcomes.push(before);
                }
                self.merge_outcomes(outcomes);
                self.forget_facts_assigned_in(stmt);
                self.function.checked_branch = saved_check;
                self.branched_on(&branch.test);
                for clause in &branch.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.branched_on(test);
                    }
                }
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
                self.forget_facts_assigned_in(stmt);
            }
            // The body (and its `else`) and each handler are branches: a handler starts from
            // what held before the `try` (`device = torch.device("cpu")` in `except:` does not
            // undo the body's choice, which stands when nothing was raised).
            Stmt::Try(block) => {
                let before = (!block.handlers.is_empty()).then(|| self.held());
                for stmt in block.body.iter().chain(&block.orelse) {
                    self.visit_stmt(stmt);
                }
                if let Some(before) = before {
                    let mut outcomes = vec![self.take_held()];
                    for handler in &block.handlers {
                        self.restore_held(before.clone());
                        self.visit_except_handler(handler);
                        outcomes.push(self.take_held());
                    }
                    self.merge_outcomes(outcomes);
                }
                for stmt in &block.finalbody {
                    self.visit_stmt(stmt);
                }
                self.forget_facts_assigned_in(stmt);
            }
            Stmt::Match(_) => {
                visitor::walk_stmt(self, stmt);
                // Facts that a branch changed are unknown after it.
                self.forget_facts_assigned_in(stmt);
            }
            // `device += ":0"` binds what `device = device + ":0"` does.
            Stmt::AugAssign(aug) => {
                visitor::walk_stmt(self, stmt);
                self.augmented(aug);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    /// Forgets what was known of the names that `stmt` (a compound statement) assigns.
    fn forget_facts_assigned_in(&mut self, stmt: &Stmt) {
        if self.function.flow.facts.is_empty() {
            return;
        }
        for name in assigned_names(std::slice::from_ref(stmt), false, self.walrus) {
            self.function.flow.facts.remove(name.as_str());
        }
    }

    /// A call: its callee resolved once for every analysis that asks.
    fn call_expr(&mut self, call: &ast::ExprCall) {
        let path = self.resolve(&call.func);
        self.driver_query(call, path.as_deref());
        // A device asked about is not used: only what builds it is walked.
        if self.is_query_of(call, path.as_deref()) {
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
            return;
        }
        // What is passed to `print` or a logger is looked at.
        let reports = usize::from(self.reports_value(call, path.as_deref()));
        // A device built where it is compared (`x.device != torch.device(f"cuda:{current}")`)
        // is compared too.
        let builds_device = path.as_deref() == Some("torch.device");
        // A choice by availability handed to a function of the project that looks at its device
        // (`select_device("0" if torch.cuda.is_available() else "cpu")`, by position or by the
        // parameter's name) is looked at: such arguments.
        let handed_choice = (call.arguments.args.iter())
            .chain(call.arguments.keywords.iter().map(|keyword| &keyword.value))
            .any(|value| matches!(value, Expr::If(_)));
        let looked_at: Vec<&Expr> = match path.as_deref() {
            Some(path) if handed_choice => Slot::of(&call.arguments)
                .filter(|(slot, value)| {
                    self.fallback(value).is_some() && self.looks_at_device(path, slot)
                })
                .map(|(_, value)| value)
                .collect(),
            _ => Vec::new(),
        };
        self.call(call, path);
        // The callee's own chain is resolved whole; what it is called on is walked.
        match &*call.func {
            Expr::Attribute(attribute) => self.visit_expr(&attribute.value),
            Expr::Name(_) => {}
            other => self.visit_expr(other),
        }
        self.looking += reports;
        // A type only checked against (`isinstance(x, torch.cuda.FloatTensor)`) places
        // nothing.
        let type_check = usize::from(matches!(&*call.func, Expr::Name(f)
            if matches!(f.id.as_str(), "isinstance" | "issubclass")));
        let checking = match builds_device {
            true => self.checking,
            false => std::mem::take(&mut self.checking),
        };
        self.typing += type_check;
        let arguments = (call.arguments.args.iter())
            .chain(call.arguments.keywords.iter().map(|keyword| &keyword.value));
        for value in arguments {
            let looked = usize::from(looked_at.iter().any(|choice| std::ptr::eq(*choice, value)));
            self.looking += looked;
            self.visit_expr(value);
            self.looking -= looked;
        }
        self.typing -= type_check;
        self.checking = checking;
        self.looking -= reports;
        // The current device asked for and handed on (`ToDevice(current)`) is used.
        let asked = |held: &FxHashMap<String, HeldDevice>| held.values().any(|p| p.asked);
        if reports == 0
            && self.checking == 0
            && (asked(&self.function.flow.pending) || asked(&self.file_pending))
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

    fn expr(&mut self, expr: &Expr) {
        if self.looking > 0 {
            self.look_at_param(expr);
        }
        match expr {
            Expr::Call(call) => self.call_expr(call),
            Expr::Attribute(attribute) => {
                // `device.type`: the function looks at the device its caller passed.
                if matches!(attribute.attr.as_str(), "type" | "index")
                    && !self.function.device_params.is_empty()
                {
                    self.look_at_param(&attribute.value);
                }
                // An API used as a value (`fn = torch.cuda.set_device`, the legacy tensor type
                // converted to: `imgs.type(torch.cuda.HalfTensor)`). Most attributes end no
                // table's path, and are told apart by their last name before being resolved.
                if self.api.ends_an_item(attribute.attr.as_str())
                    && let Some(path) = self.resolve(expr)
                    && let Some(entry) = self.item(&path)
                    && match entry.role {
                        Role::SetCurrentDevice | Role::ImplicitDevice { .. } => true,
                        Role::CurrentDeviceUser => self.checking == 0 && self.typing == 0,
                        _ => false,
                    }
                {
                    self.api_event(entry, &path, range(expr), true);
                    return;
                }
                self.driver_property(expr);
                visitor::walk_expr(self, expr);
            }
            // `(torch.BoolTensor, torch.cuda.BoolTensor)`: a tuple of types only an `isinstance`
            // can use, named, not converted to.
            Expr::Tuple(tuple)
                if tuple.len() > 1 && tuple.iter().all(|e| matches!(e, Expr::Attribute(_))) =>
            {
                self.typing += 1;
                visitor::walk_expr(self, expr);
                self.typing -= 1;
            }
            // `{"device_map": {"": get_current_device()}, ...}` (keyword arguments to be).
            Expr::Dict(dict) => {
                for item in dict.iter() {
                    let Some(key) = item.key.as_ref().and_then(string) else {
                        continue;
                    };
                    match &item.value {
                        value if key.ends_with("device_map") => self.device_maps(value),
                        value => self.handed_by_key(key, value),
                    }
                }
                visitor::walk_expr(self, expr);
            }
            Expr::Subscript(subscript) => {
                self.visit_expr(&subscript.value);
                self.typing += 1;
                self.visit_expr(&subscript.slice);
                self.typing -= 1;
                self.indexed(subscript);
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
                self.meets(range(expr), &[&binary.left, &binary.right]);
            }
            Expr::If(_) => {
                // Chosen and used at once (`model.to("cuda" if ... else "cpu")`): nothing can
                // look at it later. A choice bound to a name is judged when its function ends.
                if let Some((shown, span)) = self.fallback(expr)
                    && self.looking == 0
                    && !self.bound_fallbacks.contains(&span.start)
                    && !self.function.flow.said_without_gpu
                {
                    self.events.push(Event::SilentFallback { shown, span });
                }
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(_) => {
                let saved = std::mem::take(&mut self.function.loops);
                self.deferred += 1;
                visitor::walk_expr(self, expr);
                self.deferred -= 1;
                self.function.loops = saved;
            }
            // What a comparison or an f-string holds is looked at.
            Expr::Compare(_) | Expr::FString(_) => {
                let compares = usize::from(matches!(expr, Expr::Compare(_)));
                self.looking += 1;
                self.checking += compares;
                visitor::walk_expr(self, expr);
                self.checking -= compares;
                self.looking -= 1;
                self.compared(expr);
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
                let added: Vec<String> = match self.function.loops.last_mut() {
                    Some(frame) => targets
                        .into_iter()
                        .filter(|name| frame.assigned.insert(name.as_str().into()))
                        .collect(),
                    None => Vec::new(),
                };
                visitor::walk_expr(self, expr);
                if let Some(frame) = self.function.loops.last_mut() {
                    for name in added {
                        frame.assigned.remove(name.as_str());
                    }
                }
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}
