//! Device choosers in Python: functions and methods that return a device they chose, whose
//! calls choose the device for their callers when they pass none.

use compact_str::CompactString;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr};

use crate::analysis::Event;
use crate::analysis::says_device;
use crate::api::Role;
use crate::python::analysis::flow::Choice;
use crate::python::checker::Checker;
use crate::python::note_asked;
use crate::python::semantic::{dotted, range, string};

impl<'a> Checker<'a, '_> {
    /// Whether a call of the chooser `path` leaves it the choice: it passes no device of its own
    /// (`get_device()`, `get_device("cuda")`, `get_device("auto")`, `pick(use_gpu=True)`,
    /// `pick(use_gpu=use_gpu)`; not `get_device(device=cfg.device)` nor `get_device(args)`,
    /// which may carry one).
    ///
    /// A chooser that never returns what its caller passed it chooses whatever is passed
    /// (`unet_initial_load_device(parameters, dtype)`).
    pub(crate) fn lets_choose(&self, path: &str, call: &ast::ExprCall) -> bool {
        if !self.passing.iter().any(|known| known == path) && !self.project.passes_on(path) {
            return true;
        }
        let arguments = &call.arguments;
        let passed = || {
            (arguments.args.iter().map(|value| (None, value))).chain(
                arguments
                    .keywords
                    .iter()
                    .map(|keyword| (keyword.arg.as_ref().map(|arg| arg.as_str()), &keyword.value)),
            )
        };
        if passed().any(|(_, value)| self.device_literal(value).is_some()) {
            return true;
        }
        // No argument can be a device: a literal, or a flag passed by a keyword that does not
        // say device.
        passed().all(|(keyword, value)| {
            // A parameter passed on whose default is such a literal (`device="auto"`).
            let defaulted = matches!(value, Expr::Name(name)
                if self.function.flow.literal_defaults.contains(name.id.as_str()));
            let literal =
                (value.is_literal_expr() && !matches!(value, Expr::FString(_))) || defaulted;
            let flag = keyword.is_some_and(|keyword| {
                !says_device(keyword)
                    && keyword != "map_location"
                    && dotted(value).is_some_and(|name| !says_device(&name))
            });
            // The function's own `**kwargs` handed on: for its callers who pass no device
            // there, the chooser chooses, as a parameter's default would.
            let forwarded = keyword.is_none()
                && matches!(value, Expr::Name(name)
                    if self.function.keywords.as_deref() == Some(name.id.as_str()));
            literal || flag || forwarded
        })
    }

    /// A `return value`, walked with the events from `before` on: a module's function (or a
    /// class's method: `self.pick_device()`, `cls.default_device()`) that returns a device it
    /// chose chooses for its callers; one that returns it in a tuple (`return device_type,
    /// module`) chooses that element (`module.get_device_info[0]`).
    pub(crate) fn returned(&mut self, value: &Expr, before: usize) {
        // `return getattr(torch, device_name)`: the accelerator's module, for its callers.
        if let Some(module) = self.resolve(value).filter(|path| is_device_module(path))
            && let Some(path) = self.chooser_path()
            && !self.device_modules.iter().any(|(known, _)| *known == path)
        {
            self.device_modules.push((path, module.into()));
        }
        if self.reads_from_caller(value) {
            self.function.passes_on = true;
            self.function.forwards |= match value {
                Expr::Name(_) => true,
                Expr::Call(call) => self.resolves_to(&call.func, "torch.device"),
                _ => false,
            };
        }
        // `return f"cuda:{self.device_id}"`: a GPU by an index held here (a field's default
        // `device_id: int = 0`) is built into a device, where the index goes.
        if let Expr::FString(f) = value
            && f.value.elements().next().is_some_and(|first| {
                matches!(first, ast::InterpolatedStringElement::Literal(text)
                    if text.value.starts_with("cuda:"))
            })
            && self.pending_name_in(value).is_some()
        {
            self.device_argument(value, |_| String::new());
        }
        if let Expr::Tuple(tuple) = value {
            for (at, element) in tuple.elts.iter().enumerate() {
                if self.returns_chosen(element, before) {
                    self.add_chooser(&format!("[{at}]"));
                }
            }
            return;
        }
        let chosen = self.returns_chosen(value, before);
        if chosen {
            self.add_chooser("");
            self.report_returned_held(value);
        }
        // `return "cuda:0" if use_gpu else "cpu"`: each device written in a branch, whether
        // the function chose it or numbered the GPU its caller asked for.
        match value {
            Expr::If(choice) => {
                self.report_returned_literal(&choice.body);
                self.report_returned_literal(&choice.orelse);
            }
            value if chosen => self.report_returned_literal(value),
            _ => {}
        }
    }

    /// `def device(self): return "cuda"`: a function named for the device it gives (not for a
    /// device type) that returns one written here chooses it for every caller, in this project
    /// or not, and is reported where it is written.
    fn report_returned_literal(&mut self, value: &Expr) {
        let named = self.qualname.last().is_some_and(|name| says_device(name));
        if !named || self.function.in_entry {
            return;
        }
        if let Some((choice, shown, span)) = self.device_literal(value)
            && string(value).is_some()
        {
            self.chosen(choice, shown, span, self.function.in_entry);
        }
    }

    /// `device = torch.device(device)` after `device = "cuda"`, then `return device`: a device
    /// built from what the function chose, handed to its callers, is reported where it was
    /// written; so is a device string, by a function named for the device it gives (as
    /// [`Checker::report_returned_literal`] reports one returned as it is written).
    fn report_returned_held(&mut self, value: &Expr) {
        let Some(name) = dotted(value) else {
            return;
        };
        let named = self.qualname.last().is_some_and(|name| says_device(name));
        let Some(held) = self.function.flow.pending.get_mut(&name) else {
            return;
        };
        if !(held.built || named) || !held.written || held.reported {
            return;
        }
        held.reported = true;
        let held = held.clone();
        self.chosen(held.choice, held.shown, held.span, held.in_entry);
    }

    fn returns_chosen(&self, value: &Expr, before: usize) -> bool {
        // `return accelerator or torch.device("cpu")`: what it chose, or the CPU.
        if let Expr::BoolOp(or) = value
            && or.op == ast::BoolOp::Or
        {
            return or
                .values
                .iter()
                .any(|value| self.returns_chosen(value, before));
        }
        self.device_literal(value).is_some()
            || dotted(value).is_some_and(|name| {
                self.function.flow.pending.contains_key(&name)
                    // A module's variable holding a device it chose (`return DEVICE`).
                    || (!name.contains('.') && self.file_pending.contains_key(&name))
            })
            || self.built_from_current(value, before)
            || self.builds_held(value)
            || self.forwards_chosen(value, before)
            || self.gpu_when_available(value)
    }

    /// `if torch.cuda.is_available(): return f"cuda:{local_rank}"`: a GPU the function picked
    /// (its index from the environment, the process group or the free memory, not from its
    /// caller) once it found one available (in the check's branch, or after an `assert` of it);
    /// or a name bound so in such a branch (`device = "cuda:{}".format(rank)`,
    /// then `return torch.device(device)`).
    fn gpu_when_available(&self, value: &Expr) -> bool {
        let held = |value: &Expr| {
            matches!(value, Expr::Name(name)
                if self.function.flow.gpu_names.contains(name.id.as_str()))
        };
        let in_branch = self.function.checked_branch.is_some() || self.function.asserted_available;
        match value {
            Expr::Call(call) if self.resolves_to(&call.func, "torch.device") => call
                .arguments
                .find_argument_value("type", 0)
                .is_some_and(|kind| held(kind) || (in_branch && self.names_gpu(kind))),
            value => held(value) || (in_branch && self.names_gpu(value)),
        }
    }

    /// Whether a value written here names a GPU without taking it from the caller: `"cuda"`,
    /// `f"cuda:{rank}"`, `"cuda:{}".format(rank)`, `"cuda:" + str(rank)`, `"cuda:%d" % rank`,
    /// `torch.device("cuda",
    /// index)`.
    pub(crate) fn names_gpu(&self, value: &Expr) -> bool {
        if self.reads_from_caller(value) {
            return false;
        }
        match value {
            Expr::FString(f) => starts_with_cuda(f),
            // `"cuda:" + str(rank)`, `"cuda" + suffix`, `"cuda:%d" % index`.
            Expr::BinOp(built) if matches!(built.op, ast::Operator::Add | ast::Operator::Mod) => {
                string(&built.left).is_some_and(is_cuda)
            }
            Expr::Call(call) => match &*call.func {
                Expr::Attribute(method) if method.attr.as_str() == "format" => {
                    string(&method.value).is_some_and(is_cuda)
                }
                _ if self.resolves_to(&call.func, "torch.device") => call
                    .arguments
                    .find_argument_value("type", 0)
                    .is_some_and(|kind| self.names_gpu(kind)),
                _ => false,
            },
            other => string(other).is_some_and(is_cuda),
        }
    }

    /// `name = value` in a branch an availability check chose: a GPU the function picked, for
    /// [`Self::gpu_when_available`].
    pub(crate) fn bind_gpu_name(&mut self, name: &str, value: &Expr) {
        // The other branches of the chain (`else: device = "cpu"`) keep it: it may be returned.
        let in_branch = self.function.checked_branch.is_some();
        let picked = in_branch && self.names_gpu(value);
        let names = &mut self.function.flow.gpu_names;
        if picked {
            names.insert(name.into());
        } else if !in_branch && !names.is_empty() {
            names.remove(name);
        }
    }

    /// `return int_to_device(torch.cuda.current_device())`: a function of the project that hands
    /// back the device it was given, called with a device chosen here.
    fn forwards_chosen(&self, value: &Expr, before: usize) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        let [argument] = &*call.arguments.args else {
            return false;
        };
        call.arguments.keywords.is_empty()
            && self.returns_chosen(argument, before)
            && self
                .resolve(&call.func)
                .is_some_and(|path| self.forwards(&path))
    }

    /// The function being walked (or its tuple's element, `suffix` `[0]`) as a chooser.
    fn add_chooser(&mut self, suffix: &str) {
        if let Some(path) = self.chooser_path() {
            self.add_chooser_path([path.as_str(), suffix].concat());
        }
    }

    /// The dotted path the function being walked is called by, when it can be a chooser: a
    /// module's function, or a method of a class of the module.
    pub(crate) fn chooser_path(&self) -> Option<String> {
        let method = self.qualname.len() == 2
            && self.function.method_of.as_deref() == Some(self.qualname[0].as_str());
        ((self.qualname.len() == 1 || method) && !self.module.is_empty())
            .then(|| [self.module.as_str(), ".", &self.qualname.join(".")].concat())
    }

    /// Whether `value` reads the function's parameters, or a name bound from them.
    pub(crate) fn reads_from_caller(&self, value: &Expr) -> bool {
        struct Reads<'n> {
            names: &'n [CompactString],
            found: bool,
        }
        impl<'a> Visitor<'a> for Reads<'_> {
            fn visit_expr(&mut self, expr: &'a Expr) {
                if self.found {
                    return;
                }
                match expr {
                    Expr::Name(name) => {
                        self.found = self.names.iter().any(|known| known == name.id.as_str());
                    }
                    _ => visitor::walk_expr(self, expr),
                }
            }
        }
        if self.function.from_caller.is_empty() {
            return false;
        }
        let mut reads = Reads {
            names: &self.function.from_caller,
            found: false,
        };
        reads.visit_expr(value);
        reads.found
    }

    /// The function being walked, when it is a chooser (or one of its tuple's elements is), as
    /// one that may return what its caller passed; or when it hands back the device it was given.
    pub(crate) fn note_passing(&mut self) {
        if self.choosers.is_empty() && !self.function.forwards {
            return;
        }
        let Some(path) = self.chooser_path() else {
            return;
        };
        let element = format!("{path}[");
        let chooses = self.function.forwards
            || (self.choosers.iter())
                .any(|chooser| *chooser == path || chooser.starts_with(&element));
        if chooses && !self.passing.contains(&path) {
            self.passing.push(path);
        }
    }

    fn add_chooser_path(&mut self, path: String) {
        if !self.choosers.contains(&path) {
            self.choosers.push(path);
        }
    }

    /// `a, b = chooser()` with a chooser that returns a tuple: each name that gets a chosen
    /// element holds that device.
    pub(crate) fn assign_chosen_tuple(&mut self, names: &[Expr], value: &Expr) {
        let Expr::Call(call) = value else {
            return;
        };
        // A function, or a method of the class (`self._device_and_workers(**kwargs)`).
        let Some(path) = (self.resolve(&call.func)).or_else(|| self.own_method(&call.func)) else {
            return;
        };
        if !self.lets_choose(&path, call) {
            return;
        }
        let file = self.qualname.is_empty();
        for (at, name) in names.iter().enumerate() {
            let Some(name) = dotted(name) else {
                continue;
            };
            if self.chooses(&format!("{path}[{at}]")) {
                let span = range(value);
                let shown = self.source(&span).to_owned();
                let file = file || name.contains('.');
                self.hold(&name, Choice::Current, shown, span, false, file);
            }
        }
    }

    /// When the file ends: the module's variables that hold a device it chose (`DEVICE = "cuda"`
    /// after an availability check, `device_type, _ = get_device_info()`) are the project's
    /// choices too, for the modules that import them (`utils.device_type`).
    pub(crate) fn export_held(&mut self) {
        if self.module.is_empty() {
            return;
        }
        let mut held: Vec<String> = self
            .file_pending
            .keys()
            .filter(|name| !name.contains(['.', '[']))
            .map(|name| format!("{}.{name}", self.module))
            .collect();
        held.sort();
        for path in held {
            self.add_chooser_path(path);
        }
    }

    /// Whether a returned value is the current device, asked of the framework: the query itself
    /// (`torch.cuda.current_device()`) or a device built from it (`torch.device("cuda",
    /// torch.cuda.current_device())`, `f"cuda:{torch.cuda.current_device()}"`), by the events
    /// its walk gave since `before`.
    pub(crate) fn built_from_current(&self, value: &Expr, before: usize) -> bool {
        // Whether the value builds a device (around the query) or is the query itself.
        let builds = match value {
            Expr::Call(call) => self.resolves_to(&call.func, "torch.device"),
            // `f"cuda:{torch.cuda.current_device()}"`.
            Expr::FString(f) if starts_with_cuda(f) => true,
            _ => return false,
        };
        let span = range(value);
        self.events[before..].iter().any(|event| match event {
            Event::Api { use_, .. } => {
                matches!(use_.entry.role, Role::ImplicitDevice { .. })
                    && span.start <= use_.span.start
                    && use_.span.end <= span.end
                    && (builds || use_.span.start == span.start)
            }
            _ => false,
        })
    }

    /// Whether `path` names a device chooser: of the project, or of this file above (in the
    /// first pass, before the project knows them, a chooser calling one).
    pub(crate) fn chooses(&self, path: &str) -> bool {
        note_asked(&mut self.asked.borrow_mut().chooses, path);
        self.project.chooses(path) || self.choosers.iter().any(|chooser| chooser == path)
    }

    /// The module of an accelerator (`torch.cuda`) that the function `path` returns: of the
    /// project, or of this file above.
    pub(crate) fn device_module(&self, path: &str) -> Option<String> {
        if let Some((_, module)) = self.device_modules.iter().find(|(known, _)| known == path) {
            return Some(module.clone());
        }
        note_asked(&mut self.asked.borrow_mut().device_modules, path);
        self.project.device_module(path).map(str::to_owned)
    }

    /// Whether `path` names a function that may hand back what its caller passed: of the
    /// project, or of this file above.
    fn forwards(&self, path: &str) -> bool {
        if self.passing.iter().any(|known| known == path) {
            return true;
        }
        note_asked(&mut self.asked.borrow_mut().forwards, path);
        self.project.passes_on(path)
    }
}

/// `"cuda"` or `"cuda:..."`: a CUDA device written out (not `"cudagraph"`).
fn is_cuda(text: &str) -> bool {
    text == "cuda" || text.starts_with("cuda:")
}

/// `f"cuda:{index}"`: an f-string whose first part writes a CUDA device.
fn starts_with_cuda(f: &ast::ExprFString) -> bool {
    f.value.elements().next().is_some_and(|first| {
        matches!(first, ast::InterpolatedStringElement::Literal(text) if is_cuda(&text.value))
    })
}

/// Whether a dotted path is torch's module of an accelerator (`torch.cuda`, `torch.npu`).
fn is_device_module(path: &str) -> bool {
    matches!(
        path,
        "torch.cuda" | "torch.npu" | "torch.xpu" | "torch.mps" | "torch.musa" | "torch.mlu"
    )
}
