//! What a value is in model code: a tensor made on the CPU, and where; a tensor that follows
//! the model, and from which parameters; what the project's functions return of tensors.

use std::ops::Range;

use compact_str::CompactString;

use ruff_python_ast::{self as ast, Expr};

use super::{bound_name, given, given_tensors, is_self, own_attribute};
use crate::analysis::MadeOnCpu;
use crate::python::analysis::flow::Origin;
use crate::python::checker::Checker;
use crate::python::note_asked;
use crate::python::project::TensorReturn;
use crate::python::semantic::range;

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
    /// Where and how `value`, a tensor made on the CPU, was made.
    pub(super) fn made_on_cpu(&self, value: &Expr) -> Option<(Range<usize>, MadeOnCpu)> {
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
            // Arithmetic with numbers (`torch.arange(n) * -scale`), or with a parameter that
            // may be given a tensor (`torch.arange(w) * img_w`): given one on the model's device,
            // the arithmetic is where they meet; given a number, the result is on the CPU.
            Expr::BinOp(op) if self.follows(value) != Some(0) => self
                .made_on_cpu(&op.left)
                .or_else(|| self.made_on_cpu(&op.right)),
            Expr::Call(call) => {
                if let Expr::Attribute(method) = &*call.func {
                    let name = method.attr.as_str();
                    // What a method of a CPU tensor gives is on the CPU (a view, a part, a sum,
                    // another dtype), unless it moves it, or reduces it to one number, which
                    // PyTorch takes as a scalar (`lengths.max()`).
                    let moves = self.moves(call);
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
                if let Some(device) = call.arguments.find_keyword("device") {
                    // On the device of a tensor made on the CPU (`device=k12.device`, or a name
                    // bound to it): the CPU.
                    return match &device.value {
                        Expr::Attribute(of) if of.attr.as_str() == "device" => {
                            self.made_on_cpu(&of.value)
                        }
                        name @ Expr::Name(_) => self.made_on_cpu(name),
                        _ => None,
                    };
                }
                if call.arguments.keywords.iter().any(|k| k.arg.is_none()) {
                    return None;
                }
                // A function of the project: what it makes on the CPU and returns (where it
                // is made, in this file), or what it computes from a CPU tensor it is given.
                let cpu_argument = || given(call).any(|value| self.made_on_cpu(value).is_some());
                if let Some((callee, returned)) = self.tensor_return(call, cpu_argument) {
                    // Where it is made is a place in this file only for this module's function.
                    if let Some(made) = returned.made.clone().filter(|_| self.defines(&callee)) {
                        return Some((made, MadeOnCpu::Made));
                    }
                    // What it computes from its arguments, unless it moves what it returns.
                    return (!returned.model && !returned.moves)
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
                    "tensor" | "as_tensor" => self.written_out(call),
                    // A legacy typed tensor of the CPU, of data written out or of its sizes
                    // (`torch.IntTensor(batch, 1)`).
                    legacy if legacy.ends_with("Tensor") && !legacy.contains('.') => {
                        self.written_out(call) || call.arguments.args.len() > 1
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
                        return match given_tensors(call).any(|value| self.follows(value).is_some())
                        {
                            true => None,
                            false => given_tensors(call).find_map(|value| self.made_on_cpu(value)),
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

    /// Whether a tensor's data is written out in the call (`torch.tensor([1.0, 2.0])`), or is a
    /// name the function bound to data written out (`torch.tensor(weights)` after `weights =
    /// [1.0, 2.0]`): a tensor of one dimension or more, which no op takes as a scalar.
    fn written_out(&self, call: &ast::ExprCall) -> bool {
        (call.arguments.find_positional(0)).is_some_and(|data| self.is_sequence(data))
    }

    /// Whether `value` is data written out: a list, a tuple or a comprehension, one made by
    /// the builtin `list` or `tuple` (`list(range(n))`), a name the function bound to one, or a
    /// choice between such (`cb1 if inverse else cb0`).
    pub(super) fn is_sequence(&self, value: &Expr) -> bool {
        match value {
            Expr::List(_) | Expr::Tuple(_) | Expr::ListComp(_) => true,
            Expr::Name(name) => self.function.flow.sequences.contains(name.id.as_str()),
            Expr::If(choice) => self.is_sequence(&choice.body) && self.is_sequence(&choice.orelse),
            Expr::Call(call) => {
                matches!(&*call.func, Expr::Name(f) if matches!(f.id.as_str(), "list" | "tuple"))
                    && self.resolve(&call.func).is_none()
            }
            _ => false,
        }
    }

    /// Whether `call` is a tensor method that moves the tensor (`x.to(device)`, `x.cuda()`; not
    /// `x.to(torch.float16)`).
    fn moves(&self, call: &ast::ExprCall) -> bool {
        let Expr::Attribute(method) = &*call.func else {
            return false;
        };
        let name = method.attr.as_str();
        self.api.names.moving.contains(name) && !(name == "to" && self.only_dtypes(call))
    }

    /// `return value` in code that may be model code: what the function returns of tensors.
    pub(crate) fn model_returned(&mut self, value: &Expr) {
        if !self.function.flow.in_model {
            return;
        }
        if let Expr::Call(call) = value
            && self.moves(call)
        {
            self.function.flow.returned.moves = true;
        }
        let origin = self.follows(value);
        // `return nn.Parameter(w)`: made to be set as a module's attribute, registered there
        // and moved with the module (a positional encoding made by a module-level function).
        let registered = matches!(value, Expr::Call(call)
            if self.resolve(&call.func)
                .is_some_and(|path| self.api.names.registering.contains(path.as_str())));
        let made = (!registered)
            .then(|| self.made_on_cpu(value).map(|(span, _)| span))
            .flatten();
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
    ///
    /// Another module's function is asked of the project only when `given` says the call gives
    /// it what its summary could carry through (a CPU tensor, a tensor of the model's): every
    /// question the first check asks that the project answers otherwise checks the file again.
    pub(super) fn tensor_return(
        &self,
        call: &ast::ExprCall,
        given: impl FnOnce() -> bool,
    ) -> Option<(CompactString, TensorReturn)> {
        let path = self.resolve(&call.func);
        let callee = self.project_callee(call, path.as_deref())?;
        // A method called on `self` may be one the class inherits (`self.causal_mask(n)` that
        // a base defines): its own path first, then each of its project bases'.
        let inherited = match &*call.func {
            Expr::Attribute(method) if is_self(&method.value) => (self.model_class())
                .map(|class| {
                    (class.bases.iter())
                        .map(|base| CompactString::from([base, ".", &method.attr].concat()))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let candidates = || std::iter::once(&callee).chain(&inherited);
        for candidate in candidates() {
            if let Some((_, returned)) =
                (self.model.returns.iter()).find(|(known, _)| known == candidate)
            {
                return Some((candidate.clone(), returned.clone()));
            }
        }
        // A function of this module, or a method of the module or of one of its submodules.
        let own = self.defines(&callee)
            || matches!(&*call.func, Expr::Attribute(method)
                if is_self(&method.value) || own_attribute(&method.value).is_some());
        if !own && !given() {
            return None;
        }
        candidates().find_map(|candidate| {
            note_asked(&mut self.asked.borrow_mut().tensor_returns, candidate);
            let returned = self.project.tensor_return(candidate)?.clone();
            Some((candidate.clone(), returned))
        })
    }

    /// Whether the dotted `path` is of this module (`pkg.m.helper` in `pkg.m`).
    fn defines(&self, path: &str) -> bool {
        (path.strip_prefix(self.module.as_str())).is_some_and(|rest| rest.starts_with('.'))
    }

    /// The arguments a call gives the parameters its callee's value comes from.
    pub(super) fn returned_from<'e>(
        call: &'e ast::ExprCall,
        returned: &'e TensorReturn,
    ) -> impl Iterator<Item = &'e Expr> {
        (returned.from.iter()).filter_map(|at| call.arguments.args.get(*at))
    }

    /// Whether `.to(...)` is given only a dtype (`.to(x.dtype)`, `.to(torch.float16)`).
    pub(super) fn only_dtypes(&self, call: &ast::ExprCall) -> bool {
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
    pub(super) fn follows(&self, value: &Expr) -> Option<Origin> {
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
    pub(super) fn call_follows(&self, call: &ast::ExprCall) -> Option<Origin> {
        let argument_follows = || {
            given_tensors(call)
                .map(|value| self.follows(value))
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
        let following_argument = || given(call).any(|value| self.follows(value).is_some());
        if let Some((_, returned)) = self.tensor_return(call, following_argument) {
            return match returned.model {
                true => Some(0),
                false => Checker::returned_from(call, &returned)
                    .map(|argument| self.follows(argument))
                    .fold(None, merge),
            };
        }
        match &*call.func {
            Expr::Name(name) if BUILTINS.contains(&name.id.as_str()) => None,
            // The module run on its input (`self(x)`).
            Expr::Name(name) if name.id.as_str() == "self" && self.model_class().is_some() => {
                Some(0)
            }
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
                            // On the device of a tensor that follows, or a device the function
                            // was handed (`device=device`, `device = x.device` above).
                            let device = call.arguments.find_keyword("device")?;
                            match &device.value {
                                Expr::Attribute(of) if of.attr.as_str() == "device" => {
                                    self.follows(&of.value)
                                }
                                name @ Expr::Name(_) => self.follows(name),
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
}

/// Where a tensor that follows the model comes from, of two: certainly the model's if either
/// is, else from the parameters of both.
pub(super) fn merge(a: Option<Origin>, b: Option<Origin>) -> Option<Origin> {
    match (a, b) {
        (None, origin) | (origin, None) => origin,
        (Some(0), _) | (_, Some(0)) => Some(0),
        (Some(a), Some(b)) => Some(a | b),
    }
}

/// The tensor whose device `value` is (`x` of `x.device`).
pub(super) fn device_of(value: &Expr) -> Option<&Expr> {
    match value {
        Expr::Attribute(of) if of.attr.as_str() == "device" => Some(&of.value),
        _ => None,
    }
}
