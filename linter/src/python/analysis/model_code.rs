//! Model code: the methods of `torch.nn.Module` subclasses, which run wherever the model was
//! moved. A tensor they make on the CPU (a factory without `device=`, `torch.tensor([...])`,
//! `torch.from_numpy(...)`, a plain tensor attribute set in `__init__`) fails on a GPU when it
//! meets, in one op, a tensor that follows the model: the method's tensor parameters, the
//! module's parameters, buffers and submodules, and what is computed from them
//! (`unplaced_tensor`). On a machine without a GPU both are on the CPU and every test passes.

use std::ops::Range;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::analysis::{Event, MadeOnCpu};
use crate::python::analysis::flow::KEEPS_DEVICE;
use crate::python::checker::Checker;
use crate::python::semantic::{range, string};
use crate::source::FileRole;

/// What the checker knows of the file's model classes.
#[derive(Debug, Default)]
pub(crate) struct ModelCode {
    /// The file's `nn.Module` subclasses, by qualified name.
    classes: FxHashMap<String, ModelClass>,
    /// Where a tensor made on the CPU was reported: once each.
    reported: FxHashSet<usize>,
    /// Whether the file is a test's, where CPU meets CPU.
    in_tests: bool,
}

impl ModelCode {
    pub(crate) fn new(role: FileRole) -> ModelCode {
        ModelCode {
            in_tests: role == FileRole::EntryFile,
            ..ModelCode::default()
        }
    }
}

/// A module class: what of `self` follows the model to its device, and what stays behind.
#[derive(Debug, Default)]
struct ModelClass {
    /// Its parameters, buffers and submodules (`self.linear`, `self.weight`).
    follows: FxHashSet<CompactString>,
    /// Attributes set, once and nowhere else, to a tensor made on the CPU (`self.mask =
    /// torch.ones(n, n).tril()` in `__init__`): the module's `.to()` leaves them there.
    on_cpu: FxHashMap<CompactString, Range<usize>>,
}

/// Tensor methods and attributes whose value is no tensor (a size, a number, a device).
const NOT_TENSORS: &[&str] = &[
    "size",
    "dim",
    "item",
    "tolist",
    "numel",
    "ndimension",
    "nelement",
    "element_size",
    "is_contiguous",
    "data_ptr",
    "stride",
    "get_device",
    "numpy",
    "cpu",
    "is_floating_point",
    "shape",
    "device",
    "dtype",
    "ndim",
    "is_cuda",
    "requires_grad",
    "type",
];

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

/// Methods beyond [`KEEPS_DEVICE`] that give a tensor on the device of the one they are
/// called on.
const ALSO_KEEPS_DEVICE: &[&str] = &["tril", "triu", "t", "flip", "cumsum", "masked_fill"];

impl Checker<'_, '_> {
    /// Notes a class of the file that subclasses `torch.nn.Module` (also through another
    /// module class of the file, or a Lightning module), and what of it follows the model.
    pub(crate) fn note_model_class(&mut self, class: &ast::StmtClassDef) {
        let is_model = class.bases().iter().any(|base| {
            let own = matches!(base, Expr::Name(name) if self.model.classes.contains_key(name.id.as_str()));
            own || self.resolve(base).is_some_and(|path| {
                let name = path.rsplit('.').next().unwrap_or_default();
                (path.starts_with("torch.nn.") && name.starts_with(char::is_uppercase))
                    || name == "LightningModule"
            })
        });
        if !is_model {
            return;
        }
        let mut model = ModelClass::default();
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
                        if self.makes_module(&assign.value) {
                            model.follows.insert(attribute.into());
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

    /// Whether `value` makes a module or a parameter (`nn.Linear(...)`, `nn.Parameter(...)`,
    /// a module class of the file).
    fn makes_module(&self, value: &Expr) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        let own = matches!(&*call.func, Expr::Name(name) if self.model.classes.contains_key(name.id.as_str()));
        own || self.resolve(&call.func).is_some_and(|path| {
            path.starts_with("torch.nn.")
                && path
                    .rsplit('.')
                    .next()
                    .unwrap_or_default()
                    .starts_with(char::is_uppercase)
        })
    }

    /// The module class whose method is being walked.
    fn model_class(&self) -> Option<&ModelClass> {
        (self.function.method_of.as_deref()).and_then(|class| self.model.classes.get(class))
    }

    /// A method of a module class takes tensors that follow the model: each parameter but its
    /// receiver, unless a number, a string or a flag by its annotation or default.
    pub(crate) fn follow_parameters(&mut self, def: &ast::StmtFunctionDef, method: bool) {
        self.function.flow.in_model = self.model_class().is_some();
        if !method || !self.function.flow.in_model {
            return;
        }
        let parameters = (def.parameters.posonlyargs.iter())
            .chain(&def.parameters.args)
            .chain(&def.parameters.kwonlyargs)
            .skip(1);
        for parameter in parameters {
            let plain = |expr: &Expr| {
                expr.is_number_literal_expr()
                    || expr.is_string_literal_expr()
                    || expr.is_boolean_literal_expr()
                    || matches!(expr, Expr::Name(name)
                        if matches!(name.id.as_str(), "int" | "float" | "bool" | "str"))
            };
            let annotated = parameter.parameter.annotation.as_deref().is_some_and(plain);
            if !annotated && !parameter.default.as_deref().is_some_and(plain) {
                let name = parameter.parameter.name.as_str();
                self.function.flow.follows.insert(name.into());
            }
        }
    }

    /// What an assignment tells of the names it binds: whether each follows the model, and
    /// where a tensor it holds was made on the CPU.
    pub(crate) fn bind_model_values(&mut self, target: &Expr, value: &Expr) {
        if !self.function.flow.in_model {
            return;
        }
        match target {
            Expr::Name(name) => {
                let name = CompactString::from(name.id.as_str());
                match self.made_on_cpu(value) {
                    Some(made) => self.function.flow.cpu_made.insert(name.clone(), made),
                    None => self.function.flow.cpu_made.remove(&name),
                };
                match self.follows(value) {
                    true => self.function.flow.follows.insert(name),
                    false => self.function.flow.follows.remove(&name),
                };
            }
            // `q, k, v = self.qkv(x).chunk(3, dim=-1)`.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let follows = self.follows(value);
                for name in elts.iter().filter_map(Expr::as_name_expr) {
                    let name = CompactString::from(name.id.as_str());
                    self.function.flow.cpu_made.remove(&name);
                    match follows {
                        true => self.function.flow.follows.insert(name),
                        false => self.function.flow.follows.remove(&name),
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
                let name = attribute.attr.as_str();
                let made = self.model_class()?.on_cpu.get(name)?;
                Some((made.clone(), MadeOnCpu::Attribute(name.to_owned())))
            }
            // A part, a comparison or a negation of a CPU tensor is on the CPU (`mask[:n]`,
            // `mask == 0`, `~mask`).
            Expr::Subscript(item) => self.made_on_cpu(&item.value),
            Expr::Compare(compare) => self.made_on_cpu(&compare.left),
            Expr::UnaryOp(op) => self.made_on_cpu(&op.operand),
            Expr::Call(call) => {
                if let Expr::Attribute(method) = &*call.func {
                    let name = method.attr.as_str();
                    // A view, a part or another dtype of a CPU tensor is on the CPU.
                    let keeps = KEEPS_DEVICE.contains(&name)
                        || ALSO_KEEPS_DEVICE.contains(&name)
                        || (name == "to" && self.only_dtypes(call));
                    if keeps {
                        return self.made_on_cpu(&method.value);
                    }
                }
                if call.arguments.find_keyword("device").is_some()
                    || call.arguments.keywords.iter().any(|k| k.arg.is_none())
                {
                    return None;
                }
                let path = self.resolve(&call.func)?;
                let function = path.strip_prefix("torch.")?;
                let made = match function {
                    "from_numpy" => true,
                    // Data written out; a number (`torch.tensor(scale)`) makes a 0-dim tensor,
                    // which PyTorch takes as a scalar on any device.
                    "tensor" | "as_tensor" | "Tensor" | "LongTensor" | "FloatTensor"
                    | "BoolTensor" => matches!(
                        call.arguments.find_positional(0),
                        Some(Expr::List(_) | Expr::Tuple(_) | Expr::ListComp(_))
                    ),
                    // `torch.zeros(())` is 0-dim too.
                    factory => {
                        self.api.names.factories.contains(factory)
                            && !matches!(call.arguments.find_positional(0),
                                Some(Expr::Tuple(t)) if t.is_empty())
                    }
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

    /// Whether `value` is a tensor that follows the model to its device.
    fn follows(&self, value: &Expr) -> bool {
        match value {
            Expr::Name(name) => self.function.flow.follows.contains(name.id.as_str()),
            Expr::Attribute(attribute) => match attribute.attr.as_str() {
                "T" | "mT" | "H" | "mH" | "data" | "real" | "imag" | "grad" => {
                    self.follows(&attribute.value)
                }
                name if NOT_TENSORS.contains(&name) => false,
                // `self.weight`, a submodule's `self.linear.weight`.
                name => match &*attribute.value {
                    value if is_self(value) => self
                        .model_class()
                        .is_some_and(|class| class.follows.contains(name)),
                    Expr::Attribute(owner) if is_self(&owner.value) => self
                        .model_class()
                        .is_some_and(|class| class.follows.contains(owner.attr.as_str())),
                    _ => false,
                },
            },
            Expr::Subscript(item) => self.follows(&item.value),
            Expr::BinOp(op) => self.follows(&op.left) || self.follows(&op.right),
            Expr::UnaryOp(op) => self.follows(&op.operand),
            Expr::Call(call) => self.call_follows(call),
            _ => false,
        }
    }

    /// Whether a call gives a tensor that follows the model: a submodule's output, a method of
    /// such a tensor (`x.softmax(-1)`), or a function of one (`F.relu(x)`, `layer(x)`).
    fn call_follows(&self, call: &ast::ExprCall) -> bool {
        let argument_follows = || {
            call.arguments.args.iter().any(|argument| match argument {
                Expr::List(list) => list.iter().any(|e| self.follows(e)),
                Expr::Tuple(tuple) => tuple.iter().any(|e| self.follows(e)),
                other => self.follows(other),
            })
        };
        match &*call.func {
            Expr::Name(name) if BUILTINS.contains(&name.id.as_str()) => false,
            Expr::Attribute(method) => {
                let name = method.attr.as_str();
                if NOT_TENSORS.contains(&name) || (name == "to" && !self.only_dtypes(call)) {
                    return false;
                }
                if self.follows(&call.func) || self.follows(&method.value) {
                    return true;
                }
                match self.resolve(&call.func) {
                    Some(path) => match path.strip_prefix("torch.") {
                        Some(function) => {
                            !self.api.names.factories.contains(function) && argument_follows()
                        }
                        None => {
                            !path.starts_with("numpy.")
                                && !path.starts_with("math.")
                                && argument_follows()
                        }
                    },
                    None => argument_follows(),
                }
            }
            func => self.follows(func) || argument_follows(),
        }
    }

    /// Operands that meet in one op (`op`): a tensor made on the CPU meeting one that follows
    /// the model is reported where it was made.
    pub(crate) fn meets(&mut self, op: Range<usize>, operands: &[&Expr]) {
        if !self.function.flow.in_model || self.model.in_tests {
            return;
        }
        let Some((span, how)) = operands
            .iter()
            .find_map(|operand| self.made_on_cpu(operand))
        else {
            return;
        };
        let Some(other) = operands.iter().find(|operand| self.follows(operand)) else {
            return;
        };
        if !self.model.reported.insert(span.start) {
            return;
        }
        let shown = |span: &Range<usize>| {
            let text = self
                .source(span)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            match text.len() > 60 {
                true => None,
                false => Some(text),
            }
        };
        self.events.push(Event::UnplacedTensor {
            shown: shown(&span),
            span,
            how,
            op: shown(&op),
            op_span: op,
            other: shown(&range(other)).unwrap_or_else(|| "the model's tensor".to_owned()),
        });
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
