//! Model code: the methods of `torch.nn.Module` subclasses, which run wherever the model was
//! moved. A tensor they make on the CPU (a factory without `device=`, `torch.tensor([...])`,
//! `torch.from_numpy(...)`, a plain tensor attribute set in `__init__`) fails on a GPU when it
//! meets, in one op, a tensor that follows the model: `forward`'s inputs, the module's
//! parameters, buffers and submodules, and what is computed from them (`unplaced_tensor`). On a
//! machine without a GPU both are on the CPU and every test passes.
//!
//! Two facts of the project decide what is model code, after every file is checked and without
//! checking one again (each finding says what it needs, a [`Requirement`]): the class hierarchy
//! (a class whose base is another module's module class, [`ModelCode::classes`]), and what
//! calls hand on (a function that model code hands its tensors, through other such functions:
//! a value carries the parameters it comes from, an
//! [`Origin`](crate::python::analysis::flow::Origin)). A third is what each function returns
//! of tensors ([`TensorReturn`]), asked where model code calls it.
//!
//! Here: what is model code (the file's module classes, their attributes, which functions are
//! model code and what of their parameters follows the model); in `values`, what a value is
//! (made on the CPU, following the model); in `meeting`, where tensors meet and the finding.

use std::ops::Range;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::api::last_part;
use crate::python::checker::Checker;
use crate::python::project::{HandedOn, TensorReturn};
use crate::python::semantic::{dotted, range, string, takes_receiver};
use crate::source::FileRole;

/// What the checker knows of the file's model classes.
#[derive(Debug, Default)]
pub(crate) struct ModelCode {
    /// The file's `nn.Module` subclasses, by qualified name, and the classes whose base is
    /// another module's class (which may be one).
    classes: FxHashMap<String, ModelClass>,
    /// Where a tensor made on the CPU was reported, once each, and whether the finding stands
    /// whatever the project tells (a helper's tensor may meet a parameter's that model code
    /// may hand it, then the model's where model code calls it).
    reported: FxHashMap<usize, bool>,
    /// Whether the file is a test's, where CPU meets CPU.
    in_tests: bool,
    /// Whether model code is walked at all ([`PyContext::model_code`]).
    ///
    /// [`PyContext::model_code`]: crate::python::PyContext::model_code
    enabled: bool,
    /// Where the file hands tensors that follow the model to the project's functions
    /// ([`Summary::fed`]).
    ///
    /// [`Summary::fed`]: crate::python::Summary::fed
    pub(crate) fed: Vec<HandedOn>,
    /// What the file's functions return of tensors ([`Summary::tensor_returns`]).
    ///
    /// [`Summary::tensor_returns`]: crate::python::Summary::tensor_returns
    pub(crate) returns: Vec<(String, TensorReturn)>,
}

impl ModelCode {
    pub(crate) fn new(role: FileRole, enabled: bool) -> ModelCode {
        ModelCode {
            in_tests: role == FileRole::EntryFile,
            enabled,
            ..ModelCode::default()
        }
    }

    /// The file's classes in the project's class hierarchy ([`Summary::classes`]), by dotted
    /// path in `module`.
    ///
    /// [`Summary::classes`]: crate::python::Summary::classes
    pub(crate) fn classes(&self, module: &str) -> Vec<(String, Option<String>)> {
        if module.is_empty() {
            return Vec::new();
        }
        let mut classes: Vec<(String, Option<String>)> = (self.classes.iter())
            .map(|(class, model)| (format!("{module}.{class}"), model.requires.clone()))
            .collect();
        classes.sort_unstable();
        classes
    }

    /// Each of the file's model classes with each of its bases that is the project's class
    /// ([`Summary::parents`]), by dotted path in `module`.
    ///
    /// [`Summary::parents`]: crate::python::Summary::parents
    pub(crate) fn parents(&self, module: &str) -> Vec<(String, String)> {
        if module.is_empty() {
            return Vec::new();
        }
        let mut parents: Vec<(String, String)> = (self.classes.iter())
            .flat_map(|(class, model)| {
                (model.bases.iter()).map(move |base| (format!("{module}.{class}"), base.clone()))
            })
            .collect();
        parents.sort_unstable();
        parents
    }
}

/// A module class: what of `self` follows the model to its device, and what stays behind.
#[derive(Debug, Default)]
struct ModelClass {
    /// Its parameters, buffers and submodules (`self.linear`, `self.weight`).
    follows: FxHashSet<CompactString>,
    /// Its layers of `torch.nn` (`self.rnn = nn.GRU(...)`), which use their input as it is (a
    /// module of the project may move what it is given), each with whether it is recurrent
    /// (`nn.GRU`, `nn.LSTMCell`): one that takes its state beside its input.
    layers: FxHashMap<CompactString, bool>,
    /// Attributes set, once and nowhere else, to a tensor made on the CPU (`self.mask =
    /// torch.ones(n, n).tril()` in `__init__`): the module's `.to()` leaves them there.
    on_cpu: FxHashMap<CompactString, Range<usize>>,
    /// The project's modules among its attributes (`self.encoder = Encoder(...)`). Given a CPU
    /// tensor as its input, a submodule meets it with its weights, on the model's device.
    submodules: FxHashMap<CompactString, Submodule>,
    /// Attributes set to what the constructor is given (`self.net = net`): called, they are
    /// the modules a wrapper runs (`self.net(x)`), whose outputs are on the model's device.
    given: FxHashSet<CompactString>,
    /// Methods that only the constructor calls (`self._get_flatten_size()` in `__init__`, to
    /// size a layer with a probe tensor): they run before the module is moved, as it does.
    set_up: FxHashSet<CompactString>,
    /// For a class whose base is another module's class: that base's dotted path, which must
    /// be a module class for the class to be one.
    requires: Option<String>,
    /// Its bases that are the project's classes, by dotted path (this file's by its module's
    /// path): a method that one of them calls on `self` may be this class's, and one this class
    /// calls on `self` may be theirs.
    bases: Vec<String>,
}

impl ModelClass {
    /// Takes what `base` set up of `self`, but the attributes `set_here` (this class's own).
    /// An attribute left on the CPU stays so unless this class registers it.
    fn inherit(&mut self, base: &ModelClass, set_here: impl Fn(&CompactString) -> bool) {
        let kept = |attribute: &&CompactString| !set_here(attribute);
        self.follows
            .extend(base.follows.iter().filter(kept).cloned());
        self.given.extend(base.given.iter().filter(kept).cloned());
        for (attribute, recurrent) in base.layers.iter().filter(|(a, _)| kept(a)) {
            self.layers.entry(attribute.clone()).or_insert(*recurrent);
        }
        for (attribute, submodule) in base.submodules.iter().filter(|(a, _)| kept(a)) {
            (self.submodules.entry(attribute.clone())).or_insert_with(|| submodule.clone());
        }
        for (attribute, made) in base.on_cpu.iter().filter(|(a, _)| kept(a)) {
            if !self.follows.contains(attribute) {
                (self.on_cpu.entry(attribute.clone())).or_insert_with(|| made.clone());
            }
        }
    }
}

/// A module of the project kept in an attribute.
#[derive(Clone, Debug)]
struct Submodule {
    /// Its class, by dotted path, when it is a class's instance (not a container): its methods
    /// are what `self.decoder.init_hidden(n)` calls.
    class: Option<String>,
    /// Whether it is known to be a module: a class of this file, or a container of modules;
    /// another module's class is one if the project says so.
    known: bool,
}

/// What an attribute set in a module class is made by.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Made {
    /// `torch.nn`'s layers and parameters; whether a recurrent layer.
    Torch(bool),
    /// `torch.nn`'s layers without weights (`nn.Dropout`), which give back what they are
    /// given, where it is.
    Weightless,
    /// The project's modules of this file (with its class's dotted path), and containers of
    /// modules.
    Own(Option<String>),
    /// A class of another module (its dotted path): a module if the project says so.
    Other(String),
}

mod meeting;
mod values;

impl Checker<'_, '_> {
    /// Notes a class of the file that subclasses `torch.nn.Module` (also through another
    /// module class of the file, or a Lightning module), or whose base is another module's
    /// class, and what of it follows the model.
    pub(crate) fn note_model_class(&mut self, class: &ast::StmtClassDef) {
        if !self.model.enabled {
            return;
        }
        // Known to be a module class, or a module class if another module's class is one.
        let (mut known, mut inherited, mut other) = (false, None, None);
        let mut bases = Vec::new();
        for base in class.bases() {
            if let Expr::Name(name) = base
                && let Some(own) = self.model.classes.get(name.id.as_str())
            {
                known |= own.requires.is_none();
                inherited = inherited.take().or_else(|| own.requires.clone());
                bases.push([self.module.as_str(), ".", name.id.as_str()].concat());
                continue;
            }
            let Some(path) = self.resolve(base) else {
                continue;
            };
            let name = last_part(&path);
            known |= (path.starts_with("torch.nn.") && name.starts_with(char::is_uppercase))
                || self.api.names.is_module_class(&path);
            if !path.starts_with("torch.") && path.contains('.') {
                bases.push(path.to_string());
                other = other.take().or_else(|| Some(path.to_string()));
            }
        }
        let requires = match known {
            true => None,
            false => inherited.or(other),
        };
        if !known && requires.is_none() {
            return;
        }
        let mut model = ModelClass {
            requires,
            bases,
            set_up: set_up_methods(class),
            ..ModelClass::default()
        };
        let init_parameters: FxHashSet<&str> = (class.body.iter())
            .filter_map(|stmt| match stmt {
                Stmt::FunctionDef(def) if def.name.as_str() == "__init__" => Some(def),
                _ => None,
            })
            .flat_map(|def| def.parameters.iter_non_variadic_params().skip(1))
            .map(|parameter| parameter.parameter.name.as_str())
            .collect();
        // The constructor's parameters annotated as sequences (`levels: list[int]`) are data
        // written out while its assignments are read (`torch.tensor(levels)`).
        let init_sequences = (class.body.iter())
            .filter_map(|stmt| match stmt {
                Stmt::FunctionDef(def) if def.name.as_str() == "__init__" => Some(def),
                _ => None,
            })
            .flat_map(sequence_parameters)
            .collect();
        let outer_sequences = std::mem::replace(&mut self.function.flow.sequences, init_sequences);
        // Each attribute's assignments: a CPU tensor stays behind only if nothing else sets it.
        let mut set: FxHashMap<CompactString, Option<Range<usize>>> = FxHashMap::default();
        let mut pending: Vec<&Stmt> = class.body.iter().collect();
        while let Some(stmt) = pending.pop() {
            match stmt {
                Stmt::FunctionDef(def) => pending.extend(&def.body),
                Stmt::If(s) => {
                    pending.extend(&s.body);
                    (s.elif_else_clauses.iter()).for_each(|c| pending.extend(&c.body));
                }
                Stmt::For(s) => pending.extend(&s.body),
                Stmt::With(s) => pending.extend(&s.body),
                Stmt::Try(s) => pending.extend(&s.body),
                Stmt::Assign(assign) => {
                    for target in &assign.targets {
                        let Some(attribute) = own_attribute(target) else {
                            continue;
                        };
                        if let Expr::Name(given) = &*assign.value
                            && init_parameters.contains(given.id.as_str())
                        {
                            model.given.insert(attribute.into());
                        }
                        match self.makes_module(&assign.value) {
                            Some(Made::Torch(recurrent)) => {
                                model.follows.insert(attribute.into());
                                model.layers.insert(attribute.into(), recurrent);
                            }
                            // No weights: nothing of the model's for a CPU input to meet.
                            Some(Made::Weightless) => {}
                            Some(Made::Own(class)) => {
                                model.follows.insert(attribute.into());
                                let submodule = Submodule { class, known: true };
                                model.submodules.insert(attribute.into(), submodule);
                            }
                            Some(Made::Other(class)) => {
                                let (class, known) = (Some(class), false);
                                model
                                    .submodules
                                    .insert(attribute.into(), Submodule { class, known });
                            }
                            None => {}
                        }
                        // `self.mask = None` in another branch: no tensor, wherever one is.
                        if assign.value.is_none_literal_expr() {
                            continue;
                        }
                        let cpu = self.made_on_cpu(&assign.value).map(|(made, _)| made);
                        let entry = set.entry(attribute.into()).or_insert(cpu.clone());
                        if entry.as_ref() != cpu.as_ref() {
                            *entry = None;
                        }
                    }
                }
                // `self.register_buffer("mask", ...)`: moved with the module.
                Stmt::Expr(expr) => {
                    if let Expr::Call(call) = &*expr.value
                        && let Expr::Attribute(method) = &*call.func
                        && is_self(&method.value)
                        && matches!(
                            method.attr.as_str(),
                            "register_buffer" | "register_parameter" | "add_module"
                        )
                        && let Some(name) = call.arguments.find_positional(0).and_then(string)
                    {
                        model.follows.insert(name.into());
                    }
                }
                _ => {}
            }
        }
        self.function.flow.sequences = outer_sequences;
        // What the file's base classes set up, unless this class sets it itself
        // (`self.transformer` of a base's constructor, used in a subclass's `forward`).
        for base in class.bases() {
            let Expr::Name(name) = base else { continue };
            if let Some(base) = self.model.classes.get(name.id.as_str()) {
                model.inherit(base, |attribute| set.contains_key(attribute));
            }
        }
        for (attribute, cpu) in set {
            if let Some(cpu) = cpu
                && !model.follows.contains(&attribute)
            {
                model.on_cpu.insert(attribute, cpu);
            }
        }
        let name = self.qualname.join(".");
        self.model.classes.insert(name, model);
    }

    /// What `value` makes: a module or a parameter of `torch.nn` (`nn.Linear(...)`,
    /// `nn.Parameter(...)`), or a module class of the file.
    fn makes_module(&self, value: &Expr) -> Option<Made> {
        let call = match value {
            Expr::Call(call) => call,
            // `nn.Parameter(...) if scale > 0 else None`.
            Expr::If(choice) => {
                return (self.makes_module(&choice.body))
                    .or_else(|| self.makes_module(&choice.orelse));
            }
            _ => return None,
        };
        if let Expr::Name(name) = &*call.func
            && self.model.classes.contains_key(name.id.as_str())
        {
            return Some(Made::Own(Some(format!("{}.{}", self.module, name.id))));
        }
        let path = self.resolve(&call.func)?;
        let Some(torch) = path.strip_prefix("torch.nn.") else {
            let class = last_part(&path);
            let other = !self.api.names.computes(&path) && class.starts_with(char::is_uppercase);
            return other.then(|| Made::Other(path.to_string()));
        };
        let name = last_part(torch);
        match name {
            // Containers hold what the project puts in them.
            "ModuleList" | "ModuleDict" | "Sequential" => Some(Made::Own(None)),
            _ if self.api.names.weightless_layers.contains(name) => Some(Made::Weightless),
            _ if name.starts_with(char::is_uppercase) => Some(Made::Torch(
                ["RNN", "GRU", "LSTM"]
                    .iter()
                    .any(|kind| name.contains(kind)),
            )),
            _ => None,
        }
    }

    /// Whether a method sets an attribute of `self` to a parameter or a module it makes.
    fn sets_up(&self, def: &ast::StmtFunctionDef) -> bool {
        let mut pending: Vec<&Stmt> = def.body.iter().collect();
        while let Some(stmt) = pending.pop() {
            match stmt {
                Stmt::If(s) => {
                    pending.extend(&s.body);
                    (s.elif_else_clauses.iter()).for_each(|c| pending.extend(&c.body));
                }
                Stmt::For(s) => pending.extend(&s.body),
                Stmt::With(s) => pending.extend(&s.body),
                Stmt::Assign(assign)
                    if assign.targets.iter().any(|t| own_attribute(t).is_some())
                        && matches!(
                            self.makes_module(&assign.value),
                            Some(Made::Torch(_) | Made::Weightless | Made::Own(_))
                        ) =>
                {
                    return true;
                }
                _ => {}
            }
        }
        false
    }

    /// `for flow in self.flows:` (also `reversed(...)`, `enumerate(...)`'s second name) over a
    /// container of modules: `flow` is one of them, of whatever module class.
    pub(crate) fn bind_elements(&mut self, target: &Expr, iter: &Expr) {
        if !self.function.flow.in_model {
            return;
        }
        let (iter, target) = match (iter, target) {
            (Expr::Call(call), Expr::Tuple(pair))
                if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "enumerate")
                    && pair.len() == 2 =>
            {
                (call.arguments.find_positional(0), &pair.elts[1])
            }
            (Expr::Call(call), target) if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "reversed") => {
                (call.arguments.find_positional(0), target)
            }
            (iter, target) => (Some(iter), target),
        };
        let container = iter.is_some_and(|iter| self.is_module_container(iter));
        if let (true, Expr::Name(name)) = (container, target) {
            self.function.flow.elements.insert(name.id.as_str().into());
        }
    }

    /// Whether `value` is one of the module's containers of modules (`self.flows` of
    /// `self.flows = nn.ModuleList(flows)`).
    fn is_module_container(&self, value: &Expr) -> bool {
        own_attribute(value).is_some_and(|attribute| {
            (self.model_class()).is_some_and(|class| {
                matches!(
                    class.submodules.get(attribute),
                    Some(Submodule {
                        class: None,
                        known: true
                    })
                )
            })
        })
    }

    /// The project's function or method a call calls, by dotted path: a method of the class
    /// (`self.mask(x)`), of a submodule's class (`self.decoder.init_hidden(n)`), or a function
    /// of the project's (`utils.pad(x)`), as `path` resolved it.
    fn project_callee(&self, call: &ast::ExprCall, path: Option<&str>) -> Option<CompactString> {
        if let Some(own) = self.own_method(&call.func) {
            return Some(own);
        }
        // A method of a container's module (`flow.inverse(z)` in a loop over `self.flows`,
        // `self.flows[i].inverse(z)`): any module class's of that name.
        if let Expr::Attribute(method) = &*call.func
            && match &*method.value {
                Expr::Name(element) => self.function.flow.elements.contains(element.id.as_str()),
                Expr::Subscript(element) => self.is_module_container(&element.value),
                _ => false,
            }
        {
            return Some(["*.", method.attr.as_str()].concat().into());
        }
        if let Expr::Attribute(method) = &*call.func
            && let Some(submodule) = own_attribute(&method.value)
            && let Some(class) = (self.model_class())
                .and_then(|class| class.submodules.get(submodule)?.class.as_ref())
        {
            return Some(compact_str::format_compact!("{class}.{}", method.attr));
        }
        let path = path?;
        (!self.api.names.computes(path) && path.contains('.')).then(|| path.into())
    }

    /// Entering the body of a branch on `test`: one taken only while the model is exported
    /// (`if torch.jit.is_tracing():`), which export scripts run with the model on the CPU, is
    /// no model code. Returns whether the code around it is, to restore after the body.
    pub(crate) fn enter_export_branch(&mut self, test: Option<&Expr>) -> bool {
        let model = self.function.flow.in_model;
        let exports = matches!(test, Some(Expr::Call(call))
        if dotted(&call.func).is_some_and(|callee| {
            let name = last_part(&callee);
            self.api.names.export_checks.contains(name)
        }));
        if exports {
            self.function.flow.in_model = false;
        }
        model
    }

    /// The module class whose method is being walked.
    fn model_class(&self) -> Option<&ModelClass> {
        (self.function.method_of.as_deref()).and_then(|class| self.model.classes.get(class))
    }

    /// Model code is a module class's methods but its constructor, which runs where the module
    /// is made, on the CPU, before the module is moved (and what they define inside). The
    /// inputs of `forward` follow the model, unless a number, a string, a flag or a container
    /// by annotation or default, and so do another method's parameters annotated as tensors.
    /// A module-level function, and another method's other parameters, may be model code: what
    /// comes from their parameters follows the model if model code hands them its tensors
    /// ([`Origin`](crate::python::analysis::flow::Origin)), as the project decides.
    pub(crate) fn follow_parameters(&mut self, def: &ast::StmtFunctionDef, method: bool) {
        // A constructor, or a function defined in one (`self.qualname` holds the function), or
        // a method that sets up parameters or submodules as one does (`self.token =
        // nn.Parameter(...)` in `finetune(...)`), before the module is moved.
        let in_constructor = self.qualname.iter().any(|part| part == "__init__")
            || (method && self.sets_up(def))
            || (method
                && (self.model_class())
                    .is_some_and(|class| class.set_up.contains(def.name.as_str())));
        let model_method = !in_constructor && self.model_class().is_some();
        let module_function = self.model.enabled && self.qualname.len() == 1;
        self.function.flow.in_model = model_method || module_function;
        if self.function.flow.in_model {
            self.function
                .flow
                .sequences
                .extend(sequence_parameters(def));
        }
        if !(module_function || method && model_method) {
            return;
        }
        let inputs = method && matches!(def.name.as_str(), "forward" | "__call__");
        // A training framework's step, given a batch it moved to the model's device.
        let batch = method && self.api.names.batch_hooks.contains(def.name.as_str());
        let receiver = usize::from(method && takes_receiver(def));
        let parameters = (def.parameters.posonlyargs.iter())
            .chain(&def.parameters.args)
            .chain(&def.parameters.kwonlyargs)
            .skip(receiver);
        let mut fed = Vec::new();
        for (at, parameter) in parameters.enumerate() {
            let annotation = parameter.parameter.annotation.as_deref();
            let tensor = annotation.is_some_and(|a| self.source(&range(a)).contains("Tensor"));
            let plain = |expr: &Expr| {
                expr.is_number_literal_expr()
                    || expr.is_string_literal_expr()
                    || expr.is_boolean_literal_expr()
                    || matches!(expr, Expr::List(_) | Expr::Tuple(_) | Expr::Dict(_))
            };
            let plain = annotation.is_some_and(|a| plain(a) || plain_type(a))
                || parameter.default.as_deref().is_some_and(plain);
            let name = CompactString::from(parameter.parameter.name.as_str());
            let moved_batch = batch && at == 0;
            let origin = match (
                method && (tensor || moved_batch || (inputs && !plain)),
                plain,
            ) {
                (true, _) => 0,
                (false, true) => continue,
                (false, false) if fed.len() < 63 => {
                    fed.push((at, name.clone()));
                    1 << (fed.len() - 1)
                }
                (false, false) => continue,
            };
            self.function.flow.follows.insert(name, origin);
        }
        let path = format!("{}.{}", self.module, self.qualname.join("."));
        self.function.flow.fed_by = (!self.module.is_empty()).then(|| (path.into(), fed));
    }

    /// What an assignment tells of the names it binds: whether each follows the model, and
    /// where a tensor it holds was made on the CPU. `self.beams = ...` binds `self.beams` for
    /// the rest of the method, as a name.
    pub(crate) fn bind_model_values(&mut self, target: &Expr, value: &Expr) {
        if !self.function.flow.in_model {
            return;
        }
        match target {
            Expr::Name(_) | Expr::Attribute(_) => {
                let Some(name) = bound_name(target) else {
                    return;
                };
                // A name bound to a tensor's device (`device = x.device`) places what is made
                // on it where the tensor is.
                let value = values::device_of(value).unwrap_or(value);
                // A tensor made on the CPU follows nothing, whatever it was computed with.
                let made = self.made_on_cpu(value);
                let follows = made.is_none().then(|| self.follows(value)).flatten();
                match made {
                    Some(made) => self.function.flow.cpu_made.insert(name.clone(), made),
                    None => self.function.flow.cpu_made.remove(&name),
                };
                match self.is_sequence(value) {
                    true => self.function.flow.sequences.insert(name.clone()),
                    false => self.function.flow.sequences.remove(&name),
                };
                match follows {
                    Some(origin) => self.function.flow.follows.insert(name, origin),
                    None => self.function.flow.follows.remove(&name),
                };
            }
            // `q, k, v = self.qkv(x).chunk(3, dim=-1)`.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let follows = self.follows(value);
                for name in elts.iter().filter_map(bound_name) {
                    self.function.flow.cpu_made.remove(&name);
                    self.function.flow.sequences.remove(&name);
                    match follows {
                        Some(origin) => self.function.flow.follows.insert(name, origin),
                        None => self.function.flow.follows.remove(&name),
                    };
                }
            }
            _ => {}
        }
    }
}

/// The parameters of `def` annotated as sequences (`levels: list[int]`, `sizes: Tuple[int,
/// ...]`, `Sequence[float]`): a tensor made of one has a dimension.
fn sequence_parameters(def: &ast::StmtFunctionDef) -> impl Iterator<Item = CompactString> + '_ {
    def.parameters
        .iter_non_variadic_params()
        .filter_map(|parameter| {
            let annotation = parameter.parameter.annotation.as_deref()?;
            let container = match annotation {
                Expr::Subscript(generic) => &*generic.value,
                bare => bare,
            };
            let name = match container {
                Expr::Name(name) => name.id.as_str(),
                Expr::Attribute(attribute) => attribute.attr.as_str(),
                _ => return None,
            };
            matches!(name, "list" | "List" | "tuple" | "Tuple" | "Sequence")
                .then(|| parameter.parameter.name.as_str().into())
        })
}

/// Whether a type annotation holds no tensor: numbers, strings and containers of them
/// (`int`, `Tuple[int, int]`, `Optional[List[str]]`, `int | None`).
fn plain_type(annotation: &Expr) -> bool {
    match annotation {
        Expr::Name(name) => matches!(name.id.as_str(), "int" | "float" | "bool" | "str" | "bytes"),
        Expr::NoneLiteral(_) => true,
        Expr::Subscript(generic) => {
            let container = match &*generic.value {
                Expr::Name(name) => name.id.as_str(),
                Expr::Attribute(attribute)
                    if matches!(&*attribute.value,
                    Expr::Name(module) if module.id.as_str() == "typing") =>
                {
                    attribute.attr.as_str()
                }
                _ => return false,
            };
            let arguments: &[Expr] = match &*generic.slice {
                Expr::Tuple(tuple) => &tuple.elts,
                other => std::slice::from_ref(other),
            };
            matches!(
                container,
                "Tuple"
                    | "tuple"
                    | "List"
                    | "list"
                    | "Optional"
                    | "Union"
                    | "Sequence"
                    | "Set"
                    | "set"
                    | "Dict"
                    | "dict"
                    | "Mapping"
            ) && arguments
                .iter()
                .all(|argument| plain_type(argument) || argument.is_ellipsis_literal_expr())
        }
        Expr::BinOp(union) if union.op == ast::Operator::BitOr => {
            plain_type(&union.left) && plain_type(&union.right)
        }
        _ => false,
    }
}

/// The methods of `class` that its constructor calls on `self` and no other method does.
fn set_up_methods(class: &ast::StmtClassDef) -> FxHashSet<CompactString> {
    use ruff_python_ast::visitor::{self, Visitor};
    #[derive(Default)]
    struct SelfCalls<'a>(FxHashSet<&'a str>);
    impl<'a> Visitor<'a> for SelfCalls<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = &*call.func
                && is_self(&method.value)
            {
                self.0.insert(method.attr.as_str());
            }
            visitor::walk_expr(self, expr);
        }
    }
    let (mut constructor, mut others) = (SelfCalls::default(), SelfCalls::default());
    for stmt in &class.body {
        if let Stmt::FunctionDef(def) = stmt {
            match def.name.as_str() {
                "__init__" => constructor.visit_body(&def.body),
                _ => others.visit_body(&def.body),
            }
        }
    }
    (constructor.0.into_iter())
        .filter(|name| !others.0.contains(name) && !matches!(*name, "forward" | "__call__"))
        .map(CompactString::from)
        .collect()
}

/// The name a value is bound to for the rest of a method: a name, or `self.<attribute>`.
pub(super) fn bound_name(target: &Expr) -> Option<CompactString> {
    match target {
        Expr::Name(name) => Some(name.id.as_str().into()),
        Expr::Attribute(attribute) if is_self(&attribute.value) => {
            Some(compact_str::format_compact!("self.{}", attribute.attr))
        }
        _ => None,
    }
}

/// The values a call is given, positional and by keyword.
pub(super) fn given(call: &ast::ExprCall) -> impl Iterator<Item = &Expr> {
    let keywords = call.arguments.keywords.iter().map(|keyword| &keyword.value);
    call.arguments.args.iter().chain(keywords)
}

/// The tensors a call is given: [`given`], with a list's or a tuple's elements in its place
/// (`torch.cat((days, hours))`).
pub(super) fn given_tensors(call: &ast::ExprCall) -> impl Iterator<Item = &Expr> {
    given(call).flat_map(|value| match value {
        Expr::List(list) => list.elts.iter().collect(),
        Expr::Tuple(tuple) => tuple.elts.iter().collect(),
        other => vec![other],
    })
}

/// `x` of `self.x`.
pub(super) fn own_attribute(target: &Expr) -> Option<&str> {
    match target {
        Expr::Attribute(attribute) if is_self(&attribute.value) => Some(attribute.attr.as_str()),
        _ => None,
    }
}

pub(super) fn is_self(value: &Expr) -> bool {
    matches!(value, Expr::Name(name) if name.id.as_str() == "self")
}
