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
//! a value carries the parameters it comes from, an [`Origin`]).

use std::ops::Range;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::analysis::{Event, MadeOnCpu};
use crate::diagnostic::Requirement;
use crate::python::analysis::flow::Origin;
use crate::python::checker::Checker;
use crate::python::note_asked;
use crate::python::project::{HandedOn, TensorReturn};
use crate::python::semantic::{range, string, takes_receiver};
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
    /// The project's modules among its attributes (`self.encoder = Encoder(...)`): `None` for a
    /// module class of this file or a container of modules, the class's dotted path for another
    /// module's class, a module if the project says so. Given a CPU tensor as its input, a
    /// submodule meets it with its weights, on the model's device.
    submodules: FxHashMap<CompactString, Option<String>>,
    /// Attributes set to what the constructor is given (`self.net = net`): called, they are
    /// the modules a wrapper runs (`self.net(x)`), whose outputs are on the model's device.
    given: FxHashSet<CompactString>,
    /// For a class whose base is another module's class: that base's dotted path, which must
    /// be a module class for the class to be one.
    requires: Option<String>,
}

/// What an attribute set in a module class is made by.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Made {
    /// `torch.nn`'s layers and parameters; whether a recurrent layer.
    Torch(bool),
    /// The project's modules of this file, and containers of modules.
    Own,
    /// A class of another module (its dotted path): a module if the project says so.
    Other(String),
}

/// Builtins that take a tensor and give no tensor (`len(x)`, `int(x.sum())`).
const BUILTINS: &[&str] = &[
    "len",
    "int",
    "float",
    "bool",
    "str",
    "list",
    "tuple",
    "isinstance",
    "print",
    "range",
    "enumerate",
    "zip",
    "type",
    "hasattr",
    "getattr",
    "max",
    "min",
    "sum",
    "abs",
    "round",
    "repr",
    "id",
    "sorted",
    "any",
    "all",
    "dict",
    "set",
];

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
        for base in class.bases() {
            if let Expr::Name(name) = base
                && let Some(own) = self.model.classes.get(name.id.as_str())
            {
                known |= own.requires.is_none();
                inherited = inherited.take().or_else(|| own.requires.clone());
                continue;
            }
            let Some(path) = self.resolve(base) else {
                continue;
            };
            let name = path.rsplit('.').next().unwrap_or_default();
            known |= (path.starts_with("torch.nn.") && name.starts_with(char::is_uppercase))
                || self.api.names.is_module_class(&path);
            if !path.starts_with("torch.") && path.contains('.') {
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
                            Some(Made::Own) => {
                                model.follows.insert(attribute.into());
                                model.submodules.insert(attribute.into(), None);
                            }
                            Some(Made::Other(class)) => {
                                model.submodules.insert(attribute.into(), Some(class));
                            }
                            None => {}
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
        if matches!(&*call.func, Expr::Name(name) if self.model.classes.contains_key(name.id.as_str()))
        {
            return Some(Made::Own);
        }
        let path = self.resolve(&call.func)?;
        let Some(torch) = path.strip_prefix("torch.nn.") else {
            let class = path.rsplit('.').next()?;
            let other = !self.api.names.computes(&path) && class.starts_with(char::is_uppercase);
            return other.then(|| Made::Other(path.to_string()));
        };
        let name = torch.rsplit('.').next()?;
        match name {
            // Containers hold what the project puts in them.
            "ModuleList" | "ModuleDict" | "Sequential" => Some(Made::Own),
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
                            Some(Made::Torch(_) | Made::Own)
                        ) =>
                {
                    return true;
                }
                _ => {}
            }
        }
        false
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
    /// ([`Origin`]), as the project decides.
    pub(crate) fn follow_parameters(&mut self, def: &ast::StmtFunctionDef, method: bool) {
        // A constructor, or a function defined in one (`self.qualname` holds the function), or
        // a method that sets up parameters or submodules as one does (`self.token =
        // nn.Parameter(...)` in `finetune(...)`), before the module is moved.
        let in_constructor =
            self.qualname.iter().any(|part| part == "__init__") || (method && self.sets_up(def));
        let model_method = !in_constructor && self.model_class().is_some();
        let module_function = self.model.enabled && self.qualname.len() == 1;
        self.function.flow.in_model = model_method || module_function;
        if !(module_function || method && model_method) {
            return;
        }
        let inputs = method && matches!(def.name.as_str(), "forward" | "__call__");
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
                    || matches!(expr, Expr::Name(name)
                        if matches!(name.id.as_str(), "int" | "float" | "bool" | "str"))
            };
            let plain =
                annotation.is_some_and(plain) || parameter.default.as_deref().is_some_and(plain);
            let name = CompactString::from(parameter.parameter.name.as_str());
            let origin = match (method && (tensor || (inputs && !plain)), plain) {
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
                match self.made_on_cpu(value) {
                    Some(made) => self.function.flow.cpu_made.insert(name.clone(), made),
                    None => self.function.flow.cpu_made.remove(&name),
                };
                match self.follows(value) {
                    Some(origin) => self.function.flow.follows.insert(name, origin),
                    None => self.function.flow.follows.remove(&name),
                };
            }
            // `q, k, v = self.qkv(x).chunk(3, dim=-1)`.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let follows = self.follows(value);
                for name in elts.iter().filter_map(bound_name) {
                    self.function.flow.cpu_made.remove(&name);
                    match follows {
                        Some(origin) => self.function.flow.follows.insert(name, origin),
                        None => self.function.flow.follows.remove(&name),
                    };
                }
            }
            _ => {}
        }
    }

    /// Where and how `value`, a tensor made on the CPU, was made.
    fn made_on_cpu(&self, value: &Expr) -> Option<(Range<usize>, MadeOnCpu)> {
        match value {
            Expr::Name(name) => self.function.flow.cpu_made.get(name.id.as_str()).cloned(),
            Expr::Attribute(attribute) if is_self(&attribute.value) => {
                if let Some(made) =
                    bound_name(value).and_then(|n| self.function.flow.cpu_made.get(&n))
                {
                    return Some(made.clone());
                }
                let name = attribute.attr.as_str();
                let made = self.model_class()?.on_cpu.get(name)?;
                Some((made.clone(), MadeOnCpu::Attribute(name.to_owned())))
            }
            // A part, a comparison or a negation of a CPU tensor is on the CPU (`mask[:n]`,
            // `mask == 0`, `~mask`), and either branch of a conditional.
            Expr::Subscript(item) => self.made_on_cpu(&item.value),
            Expr::Compare(compare) => self.made_on_cpu(&compare.left),
            Expr::UnaryOp(op) => self.made_on_cpu(&op.operand),
            Expr::If(choice) => self
                .made_on_cpu(&choice.body)
                .or_else(|| self.made_on_cpu(&choice.orelse)),
            // Arithmetic with numbers (`torch.arange(n) * -scale`).
            Expr::BinOp(op) if self.follows(value).is_none() => self
                .made_on_cpu(&op.left)
                .or_else(|| self.made_on_cpu(&op.right)),
            Expr::Call(call) => {
                if let Expr::Attribute(method) = &*call.func {
                    let name = method.attr.as_str();
                    // What a method of a CPU tensor gives is on the CPU (a view, a part, a sum,
                    // another dtype), unless it moves it, or reduces it to one number, which
                    // PyTorch takes as a scalar (`lengths.max()`).
                    let moves = self.api.names.moving.contains(name)
                        && !(name == "to" && self.only_dtypes(call));
                    let number = self.api.names.reductions.contains(name)
                        && call.arguments.args.is_empty()
                        && call.arguments.find_keyword("dim").is_none();
                    if number {
                        return None;
                    }
                    if !moves
                        && !self.api.names.not_tensors.contains(name)
                        && let Some(made) = self.made_on_cpu(&method.value)
                    {
                        return Some(made);
                    }
                }
                if call.arguments.find_keyword("device").is_some()
                    || call.arguments.keywords.iter().any(|k| k.arg.is_none())
                {
                    return None;
                }
                // A function of the project: what it makes on the CPU and returns (where it
                // is made, in this file), or what it computes from a CPU tensor it is given.
                if let Some((callee, returned)) = self.tensor_return(call) {
                    let own = (callee.strip_prefix(self.module.as_str()))
                        .is_some_and(|rest| rest.starts_with('.'));
                    if let Some(made) = returned.made.clone().filter(|_| own) {
                        return Some((made, MadeOnCpu::Made));
                    }
                    return (!returned.model)
                        .then(|| {
                            Checker::returned_from(call, &returned)
                                .find_map(|argument| self.made_on_cpu(argument))
                        })
                        .flatten();
                }
                let path = self.resolve(&call.func)?;
                // `nn.Parameter(torch.ones(k))` outside a constructor stays where it was made.
                if self.api.names.wrapping.contains(&*path) {
                    return self.made_on_cpu(call.arguments.find_positional(0)?);
                }
                let function = path.strip_prefix("torch.")?;
                let made = match function {
                    "from_numpy" => true,
                    // Data written out; a number (`torch.tensor(scale)`) makes a 0-dim tensor,
                    // which PyTorch takes as a scalar on any device.
                    "tensor" | "as_tensor" => written_out(call),
                    // A legacy typed tensor of the CPU, of data written out or of its sizes
                    // (`torch.IntTensor(batch, 1)`).
                    legacy if legacy.ends_with("Tensor") && !legacy.contains('.') => {
                        written_out(call) || call.arguments.args.len() > 1
                    }
                    // `torch.zeros(())` is 0-dim too.
                    factory if self.api.names.factories.contains(factory) => {
                        !matches!(call.arguments.find_positional(0),
                            Some(Expr::Tuple(t)) if t.is_empty())
                    }
                    // A function of a CPU tensor and numbers gives a CPU tensor
                    // (`torch.log(torch.tensor([p]))`, `torch.exp(torch.arange(n) * -s)`).
                    function
                        if !function.contains('.') || function.starts_with("nn.functional.") =>
                    {
                        // Its tensors, also in a list (`torch.cat((days, hours))`).
                        let tensors = || {
                            call.arguments
                                .args
                                .iter()
                                .flat_map(|argument| match argument {
                                    Expr::Tuple(tuple) => tuple.elts.iter().collect(),
                                    Expr::List(list) => list.elts.iter().collect(),
                                    other => vec![other],
                                })
                        };
                        return match tensors().any(|argument| self.follows(argument).is_some()) {
                            true => None,
                            false => tensors().find_map(|argument| self.made_on_cpu(argument)),
                        };
                    }
                    _ => false,
                };
                let how = match function {
                    "from_numpy" => MadeOnCpu::Converted,
                    _ => MadeOnCpu::Made,
                };
                made.then(|| (range(value), how))
            }
            _ => None,
        }
    }

    /// `return value` in code that may be model code: what the function returns of tensors.
    pub(crate) fn model_returned(&mut self, value: &Expr) {
        if !self.function.flow.in_model {
            return;
        }
        let origin = self.follows(value);
        let made = self.made_on_cpu(value).map(|(span, _)| span);
        let flow = &mut self.function.flow;
        match (origin, &flow.fed_by) {
            (Some(0), _) => flow.returned.model = true,
            (Some(origin), Some((_, fed))) => {
                for (bit, (at, _)) in fed.iter().enumerate() {
                    if origin & (1 << bit) != 0 && !flow.returned.from.contains(at) {
                        flow.returned.from.push(*at);
                    }
                }
            }
            _ => {}
        }
        // Made on the CPU only if every `return` makes it so: a function that makes it on the
        // CPU in one branch and on a GPU in another places it as its caller asked.
        match made {
            Some(made) if flow.returned.made.is_none() && !flow.returns_placed => {
                flow.returned.made = Some(made);
            }
            Some(_) => {}
            None => {
                flow.returns_placed = true;
                flow.returned.made = None;
            }
        }
    }

    /// At the end of a function: what it returns of tensors, for the file's summary.
    pub(crate) fn note_tensor_return(&mut self) {
        let flow = &mut self.function.flow;
        if let Some((path, _)) = &flow.fed_by
            && flow.returned != TensorReturn::default()
        {
            let returned = std::mem::take(&mut flow.returned);
            self.model.returns.push((path.to_string(), returned));
        }
    }

    /// The project's function or method a call calls, and what it returns of tensors: of this
    /// file above, or of the project.
    fn tensor_return(&self, call: &ast::ExprCall) -> Option<(CompactString, TensorReturn)> {
        let callee = self.own_method(&call.func).or_else(|| {
            let path = self.resolve(&call.func)?;
            (!self.api.names.computes(&path) && path.contains('.')).then_some(path)
        })?;
        if let Some((_, returned)) = self
            .model
            .returns
            .iter()
            .find(|(known, _)| *known == callee)
        {
            return Some((callee, returned.clone()));
        }
        note_asked(&mut self.asked.borrow_mut().tensor_returns, &callee);
        let returned = self.project.tensor_return(&callee)?.clone();
        Some((callee, returned))
    }

    /// The arguments a call gives the parameters its callee's value comes from.
    fn returned_from<'e>(
        call: &'e ast::ExprCall,
        returned: &'e TensorReturn,
    ) -> impl Iterator<Item = &'e Expr> {
        (returned.from.iter()).filter_map(|at| call.arguments.args.get(*at))
    }

    /// Whether `.to(...)` is given only a dtype (`.to(x.dtype)`, `.to(torch.float16)`).
    fn only_dtypes(&self, call: &ast::ExprCall) -> bool {
        let dtype = |expr: &Expr| match expr {
            Expr::Attribute(attribute) if attribute.attr.as_str() == "dtype" => true,
            other => self.resolve(other).is_some_and(|path| {
                path.strip_prefix("torch.").is_some_and(|name| {
                    name.starts_with("float")
                        || name.starts_with("int")
                        || name.starts_with("bfloat")
                        || matches!(name, "long" | "half" | "double" | "bool")
                })
            }),
        };
        !call.arguments.args.is_empty()
            && call.arguments.args.iter().all(dtype)
            && (call.arguments.keywords.iter()).all(|k| k.arg.as_deref() == Some("dtype"))
    }

    /// Whether `value` is a tensor that follows the model to its device, and where from.
    fn follows(&self, value: &Expr) -> Option<Origin> {
        match value {
            Expr::Name(name) => self.function.flow.follows.get(name.id.as_str()).copied(),
            Expr::Attribute(attribute) => match attribute.attr.as_str() {
                "T" | "mT" | "H" | "mH" | "data" | "real" | "imag" | "grad" => {
                    self.follows(&attribute.value)
                }
                name if self.api.names.not_tensors.contains(name) => None,
                // `self.weight`, a submodule's `self.linear.weight`.
                name => match &*attribute.value {
                    owner if is_self(owner) => {
                        let bound = bound_name(value);
                        bound
                            .and_then(|n| self.function.flow.follows.get(&n).copied())
                            .or_else(|| (self.model_class()?.follows.contains(name)).then_some(0))
                    }
                    Expr::Attribute(owner) if is_self(&owner.value) => (self.model_class()?)
                        .follows
                        .contains(owner.attr.as_str())
                        .then_some(0),
                    _ => None,
                },
            },
            Expr::Subscript(item) => self.follows(&item.value),
            Expr::BinOp(op) => merge(self.follows(&op.left), self.follows(&op.right)),
            Expr::UnaryOp(op) => self.follows(&op.operand),
            // A mask (`scores > 0`).
            Expr::Compare(compare) => self.follows(&compare.left),
            Expr::Call(call) => self.call_follows(call),
            _ => None,
        }
    }

    /// Whether a call gives a tensor that follows the model: a submodule's output, a method of
    /// such a tensor (`x.softmax(-1)`), a function of one (`F.relu(x)`, `layer(x)`), or a
    /// factory given its device (`torch.zeros(n, device=x.device)`).
    fn call_follows(&self, call: &ast::ExprCall) -> Option<Origin> {
        let argument_follows = || {
            let keywords = call.arguments.keywords.iter().map(|keyword| &keyword.value);
            (call.arguments.args.iter().chain(keywords))
                .map(|argument| match argument {
                    Expr::List(list) => list.iter().map(|e| self.follows(e)).fold(None, merge),
                    Expr::Tuple(tuple) => tuple.iter().map(|e| self.follows(e)).fold(None, merge),
                    other => self.follows(other),
                })
                .fold(None, merge)
        };
        // Of another function, what it is given first: the others are often sizes and options
        // (`window_partition(mask, h, w)`).
        let first_follows = || {
            let first = (call.arguments.args.first()).or_else(|| {
                call.arguments
                    .keywords
                    .first()
                    .map(|keyword| &keyword.value)
            });
            first.and_then(|first| self.follows(first))
        };
        // A function of the project: the model's, or what it computes from its parameters.
        if let Some((_, returned)) = self.tensor_return(call) {
            return match returned.model {
                true => Some(0),
                false => Checker::returned_from(call, &returned)
                    .map(|argument| self.follows(argument))
                    .fold(None, merge),
            };
        }
        match &*call.func {
            Expr::Name(name) if BUILTINS.contains(&name.id.as_str()) => None,
            // A module the constructor was given, run (`self.net(x)`).
            Expr::Attribute(given)
                if is_self(&given.value)
                    && (self.model_class())
                        .is_some_and(|class| class.given.contains(given.attr.as_str())) =>
            {
                Some(0)
            }
            Expr::Attribute(method) => {
                let name = method.attr.as_str();
                if self.api.names.not_tensors.contains(name)
                    || (name == "to" && !self.only_dtypes(call))
                {
                    return None;
                }
                // On the current GPU, where the model runs (`Variable(t).cuda()`).
                if name == "cuda" {
                    return Some(0);
                }
                if let Some(origin) = merge(self.follows(&call.func), self.follows(&method.value)) {
                    return Some(origin);
                }
                match self.resolve(&call.func) {
                    Some(path) => match path.strip_prefix("torch.") {
                        Some(function) if self.api.names.factories.contains(function) => {
                            let device = call.arguments.find_keyword("device")?;
                            match &device.value {
                                Expr::Attribute(of) if of.attr.as_str() == "device" => {
                                    self.follows(&of.value)
                                }
                                _ => None,
                            }
                        }
                        Some(_) => argument_follows(),
                        None if path.starts_with("numpy.") || path.starts_with("math.") => None,
                        None => first_follows(),
                    },
                    None => first_follows(),
                }
            }
            func => merge(self.follows(func), first_follows()),
        }
    }

    /// A call in model code where tensors meet: a layer of `torch.nn` given a CPU tensor
    /// (`self.rnn(torch.zeros(b, h), hidden)`: its weights are on the model's device), and a
    /// tensor method that combines (`x.masked_fill(mask, value)`, `x.index_select(0, index)`).
    pub(crate) fn model_call(&mut self, call: &ast::ExprCall, path: Option<&str>) {
        if !self.function.flow.in_model {
            return;
        }
        self.hand_on(call, path);
        // A layer of `torch.nn`, and whether recurrent; a module of the project.
        let (layer, submodule) = match &*call.func {
            Expr::Attribute(layer) if is_self(&layer.value) => {
                let name = layer.attr.as_str();
                let class = self.model_class();
                (
                    class.and_then(|class| class.layers.get(name).copied()),
                    class.and_then(|class| class.submodules.get(name).cloned()),
                )
            }
            _ => (None, None),
        };
        let combining = match &*call.func {
            Expr::Attribute(method) if path.is_none() => {
                let name = method.attr.as_str();
                (self.api.names.combining.contains(name) || self.api.names.meeting.contains(name))
                    .then_some(&*method.value)
            }
            _ => None,
        };
        let operands: Vec<&Expr> = match combining {
            Some(receiver) => std::iter::once(receiver)
                .chain(&call.arguments.args)
                .collect(),
            // Its input, the first argument, and a recurrent layer's state: the others may be
            // lengths or options, which a layer takes on the CPU (`nn.CTCLoss`'s lengths).
            None => {
                let inputs = match (layer, &submodule) {
                    (Some(recurrent), _) => 1 + usize::from(recurrent),
                    (None, Some(_)) => 1,
                    (None, None) => return,
                };
                std::iter::once(&*call.func)
                    .chain(call.arguments.args.iter().take(inputs))
                    .collect()
            }
        };
        let needs = submodule
            .flatten()
            .map(|base| Requirement::ModuleClass { base });
        self.meets_needing(range(call), &operands, needs);
    }

    /// Whether `operand` is one of the project's modules among the module's attributes.
    fn is_submodule(&self, operand: &Expr) -> bool {
        matches!(operand, Expr::Attribute(attribute) if is_self(&attribute.value)
            && (self.model_class())
                .is_some_and(|class| class.submodules.contains_key(attribute.attr.as_str())))
    }

    /// A function of torch (or of another library of tensor functions) where the tensors it is
    /// given meet (`torch.cat([a, b])`, `torch.where(mask, x, y)`, `F.conv2d(x, weight=kernel)`,
    /// `scatter_add(ones, index)`), by its last name.
    pub(crate) fn function_meets(&mut self, call: &ast::ExprCall, path: &str) {
        let library = path.split('.').next().unwrap_or(path);
        if !self.function.flow.in_model || !self.api.names.tensor_libraries.contains(library) {
            return;
        }
        let name = path.rsplit('.').next().unwrap_or(path);
        if !self.api.names.combining.contains(name) && !self.api.names.meeting.contains(name) {
            return;
        }
        let keywords = call.arguments.keywords.iter().map(|keyword| &keyword.value);
        let operands: Vec<&Expr> = (call.arguments.args.iter().chain(keywords))
            .flat_map(|argument| match argument {
                Expr::List(list) => list.iter().collect(),
                Expr::Tuple(tuple) => tuple.iter().collect(),
                other => vec![other],
            })
            .collect();
        self.meets(range(call), &operands);
    }

    /// Notes what a call hands the project's functions of tensors that follow the model: a
    /// function of the module (`load(x)`), another module's (`utils.pad(x)`), or a method of
    /// the class (`self.mask(lengths)`), by the arguments' places and keywords.
    fn hand_on(&mut self, call: &ast::ExprCall, path: Option<&str>) {
        if call.arguments.is_empty() {
            return;
        }
        let Some(callee) = self.own_method(&call.func).or_else(|| {
            let path = path?;
            (!path.starts_with("torch.") && path.contains('.')).then(|| path.into())
        }) else {
            return;
        };
        let positional = (call.arguments.args.iter().enumerate())
            .map(|(at, argument)| (format!("#{at}"), argument));
        let keywords = (call.arguments.keywords.iter())
            .filter_map(|keyword| Some((keyword.arg.as_ref()?.to_string(), &keyword.value)));
        for (parameter, argument) in positional.chain(keywords) {
            let Some(origin) = self.follows(argument) else {
                continue;
            };
            let from = match origin {
                0 => None,
                origin => match self.function.flow.fed_by.as_ref() {
                    Some((caller, fed)) => Some((caller.to_string(), parameter_keys(fed, origin))),
                    None => continue,
                },
            };
            self.model.fed.push(HandedOn {
                function: callee.to_string(),
                parameter,
                from,
            });
        }
    }

    /// Whether `self.<name>` is a layer of `torch.nn`.
    fn is_layer(&self, attribute: &ast::ExprAttribute) -> bool {
        is_self(&attribute.value)
            && (self.model_class())
                .is_some_and(|class| class.layers.contains_key(attribute.attr.as_str()))
    }

    /// `positions < lengths`: a comparison of tensors is an op where they meet.
    pub(crate) fn compared(&mut self, expr: &Expr) {
        if let Expr::Compare(compare) = expr
            && self.function.flow.in_model
        {
            let operands: Vec<&Expr> = std::iter::once(&*compare.left)
                .chain(&compare.comparators)
                .collect();
            self.meets(range(compare), &operands);
        }
    }

    /// `cpu[gpu_mask]`: a CPU tensor indexed with a tensor on the model's device fails (the
    /// other way round works: a CPU index is moved to the indexed tensor's device).
    pub(crate) fn indexed(&mut self, item: &ast::ExprSubscript) {
        if self.function.flow.in_model
            && self.follows(&item.slice).is_some()
            && self.follows(&item.value).is_none()
        {
            self.meets(range(item), &[&item.value, &item.slice]);
        }
    }

    /// Operands that meet in one op (`op`): a tensor made on the CPU meeting one that follows
    /// the model is reported where it was made.
    pub(crate) fn meets(&mut self, op: Range<usize>, operands: &[&Expr]) {
        self.meets_needing(op, operands, None);
    }

    /// [`Checker::meets`], where the finding also `needs` the project to say something (that a
    /// submodule's class is a module class).
    fn meets_needing(&mut self, op: Range<usize>, operands: &[&Expr], needs: Option<Requirement>) {
        if !self.function.flow.in_model || self.model.in_tests {
            return;
        }
        let Some((span, how)) = operands
            .iter()
            .find_map(|operand| self.made_on_cpu(operand))
        else {
            return;
        };
        // The operand that certainly follows the model, or else one that may.
        let follows = |operand: &Expr| {
            (self.follows(operand)).or_else(|| self.is_submodule(operand).then_some(0))
        };
        let Some((other, origin)) = (operands.iter())
            .filter_map(|operand| Some((*operand, follows(operand)?)))
            .min_by_key(|(_, origin)| *origin != 0)
        else {
            return;
        };
        let requires = match origin {
            0 => (self.model_class().and_then(|class| class.requires.clone()))
                .map(|base| Requirement::ModuleClass { base }),
            origin => {
                let Some((function, fed)) = self.function.flow.fed_by.as_ref() else {
                    return;
                };
                Some(Requirement::Fed {
                    function: function.to_string(),
                    parameters: parameter_keys(fed, origin),
                })
            }
        };
        let requires = match (requires, needs) {
            (None, needs) => needs,
            (requires, None) => requires,
            // One requirement a finding: two are one too many to be sure.
            (Some(_), Some(_)) => return,
        };
        let certain = requires.is_none();
        match self.model.reported.insert(span.start, certain) {
            Some(true) => return,
            Some(false) if !certain => return,
            Some(false) => self.events.retain(|event| {
                !matches!(event, Event::UnplacedTensor { span: at, .. } if at.start == span.start)
            }),
            None => {}
        }
        let shown = |span: &Range<usize>| {
            let text = (self.source(span).split_whitespace())
                .collect::<Vec<_>>()
                .join(" ");
            (text.len() <= 60).then_some(text)
        };
        // A layer has no `.device`; an expression's device is named by one of its tensors.
        let device_of = match other {
            Expr::Attribute(layer) if self.is_layer(layer) => None,
            Expr::Name(_) | Expr::Attribute(_) => shown(&range(other)),
            _ => None,
        };
        self.events.push(Event::UnplacedTensor {
            shown: shown(&span),
            span,
            how,
            op: shown(&op),
            op_span: op,
            other: shown(&range(other)).unwrap_or_else(|| "the model's tensor".to_owned()),
            device_of,
            requires,
        });
    }
}

/// Where a tensor that follows the model comes from, of two: certainly the model's if either
/// is, else from the parameters of both.
fn merge(a: Option<Origin>, b: Option<Origin>) -> Option<Origin> {
    match (a, b) {
        (None, origin) | (origin, None) => origin,
        (Some(0), _) | (_, Some(0)) => Some(0),
        (Some(a), Some(b)) => Some(a | b),
    }
}

/// The parameters an origin names, each by its place among a call's arguments (`#1`) and by
/// its name, as calls hand them on.
fn parameter_keys(fed: &[(usize, CompactString)], origin: Origin) -> Vec<String> {
    (fed.iter().enumerate())
        .filter(|(bit, _)| origin & (1 << bit) != 0)
        .flat_map(|(_, (at, name))| [format!("#{at}"), name.to_string()])
        .collect()
}

/// Whether a tensor's data is written out in the call (`torch.tensor([1.0, 2.0])`).
fn written_out(call: &ast::ExprCall) -> bool {
    matches!(
        call.arguments.find_positional(0),
        Some(Expr::List(_) | Expr::Tuple(_) | Expr::ListComp(_))
    )
}

/// The name a value is bound to for the rest of a method: a name, or `self.<attribute>`.
fn bound_name(target: &Expr) -> Option<CompactString> {
    match target {
        Expr::Name(name) => Some(name.id.as_str().into()),
        Expr::Attribute(attribute) if is_self(&attribute.value) => {
            Some(compact_str::format_compact!("self.{}", attribute.attr))
        }
        _ => None,
    }
}

/// `x` of `self.x`.
fn own_attribute(target: &Expr) -> Option<&str> {
    match target {
        Expr::Attribute(attribute) if is_self(&attribute.value) => Some(attribute.attr.as_str()),
        _ => None,
    }
}

fn is_self(value: &Expr) -> bool {
    matches!(value, Expr::Name(name) if name.id.as_str() == "self")
}
