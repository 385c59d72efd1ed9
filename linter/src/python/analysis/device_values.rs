//! The device a written value names or chooses: device strings (`"cuda"`, `"cuda:1"`),
//! `torch.device(...)`, a conditional with one in a branch, a field's or a lookup's default, a
//! project chooser's call; and whether an argument is a device at all.

use std::ops::Range;

use ruff_python_ast::{self as ast, Expr};

use crate::analysis::{says_device, says_gpu_index};
use crate::python::analysis::flow::Choice;
use crate::python::checker::Checker;
use crate::python::semantic::{integer, last_name, range, string};
use placement_device_name::DeviceName;

impl Checker<'_, '_> {
    /// The device string a literal, or a conditional with one in a branch
    /// (`"cuda" if torch.cuda.is_available() else "cpu"`), or a `getattr` default, chooses.
    pub(crate) fn device_literal(&self, value: &Expr) -> Option<(Choice, String, Range<usize>)> {
        if let Some(text) = string(value) {
            let choice = match text {
                "cuda" => Choice::Current,
                _ => match placement_device_name::named(text)? {
                    DeviceName::Cuda(ordinal) => Choice::Ordinal(ordinal as u64),
                    DeviceName::Cpu => return None,
                },
            };
            return Some((choice, format!("\"{text}\""), range(value)));
        }
        // `f"cuda:{spec.get('cuda_id', 0)}"`: the GPU a lookup falls back to, for callers whose
        // settings name none.
        if let Expr::FString(f) = value
            && let Some((ordinal, at)) = looked_up_ordinal(f)
        {
            let shown = self.source(&range(value)).to_owned();
            return Some((Choice::Ordinal(ordinal), shown, at));
        }
        // The current device, written as `value` is.
        let current = || {
            let shown = self.source(&range(value)).to_owned();
            Some((Choice::Current, shown, range(value)))
        };
        match value {
            Expr::If(choice) => self
                .device_literal(&choice.body)
                .or_else(|| self.device_literal(&choice.orelse)),
            // `torch.device("cuda")`, `torch.device("cuda", 1)`, `torch.device("cuda:1")`.
            Expr::Call(call) if self.built_device(value) => {
                let kind = call.arguments.find_argument_value("type", 0)?;
                match call.arguments.find_argument_value("index", 1) {
                    Some(index) if string(kind) == Some("cuda") => match integer(index) {
                        Some(ordinal) => {
                            let shown = self.source(&range(value)).split_whitespace().collect();
                            Some((Choice::Ordinal(ordinal), shown, range(index)))
                        }
                        // `torch.device("cuda", rank)` of a name holding a GPU's index (a
                        // parameter's default `rank=0`): that index, where it was chosen.
                        None => {
                            let held = self.pending_of(index)?;
                            matches!(held.choice, Choice::Ordinal(_))
                                .then(|| (held.choice, held.shown.clone(), held.span.clone()))
                        }
                    },
                    Some(_) => None,
                    None => self.device_literal(kind),
                }
            }
            // `f"{get_device_type()}:{get_current_device()}"`: a device built from what the
            // project's choosers chose.
            Expr::FString(f)
                if f.value.elements().any(|element| {
                    matches!(element, ast::InterpolatedStringElement::Interpolation(field)
                        if self.chooser_call(&field.expression))
                }) =>
            {
                current()
            }
            // A device type without an index, like `"cuda"`; or a function of the project that
            // returns a device it chose.
            Expr::Call(call)
                if self
                    .resolve(&call.func)
                    .or_else(|| self.own_method(&call.func))
                    .is_some_and(|path| {
                        self.api.names.current_device_values.contains(path.as_str())
                            || (self.chooses(&path) && self.lets_choose(&path, call))
                    }) =>
            {
                current()
            }
            value if self.current_type(value) => current(),
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "getattr")
                    && call.arguments.args.len() == 3 =>
            {
                self.device_literal(&call.arguments.args[2])
            }
            // `kwargs.get("device", "cuda")`, `options.pop("onload_device", "cuda")`.
            Expr::Call(call) if device_lookup(call) => self.device_literal(&call.arguments.args[1]),
            // `self.device` of a property of the class that returns a device it chose.
            Expr::Attribute(_) if self.chooser_call(value) => current(),
            // `"cuda" + suffix`: a GPU with an index added on, or none (`suffix = ""` when the
            // caller passed no index); `"cuda:" + str(index)` unless the index is the caller's.
            Expr::BinOp(sum)
                if sum.op == ast::Operator::Add
                    && string(&sum.left).is_some_and(|kind| {
                        kind == "cuda" || (kind == "cuda:" && !self.reads_from_caller(&sum.right))
                    }) =>
            {
                current()
            }
            // `device + ":0"`: the caller's device type, on a GPU this code numbered.
            Expr::BinOp(sum)
                if sum.op == ast::Operator::Add && says_device(last_name(&sum.left)) =>
            {
                let ordinal = string(&sum.right)?.strip_prefix(':')?.parse().ok()?;
                Some((
                    Choice::Ordinal(ordinal),
                    self.source(&range(value)).to_owned(),
                    range(&*sum.right),
                ))
            }
            // `self.device or "cuda"`: the caller's device, or one chosen here.
            Expr::BoolOp(choice) if choice.op == ast::BoolOp::Or => choice.values[1..]
                .iter()
                .find_map(|value| self.device_literal(value)),
            _ => None,
        }
    }

    /// `torch.accelerator.current_accelerator().type`: the type of the current device
    /// (`"cuda"`), which is the current device where a device goes.
    pub(crate) fn current_type(&self, value: &Expr) -> bool {
        matches!(value, Expr::Attribute(attribute)
        if attribute.attr.as_str() == "type"
            && matches!(&*attribute.value, Expr::Call(call)
                if self.resolve(&call.func).is_some_and(|path| {
                    self.api.names.current_device_values.contains(path.as_str())
                })))
    }

    /// Whether `value` calls a device chooser of the project that is left the choice, also as
    /// an attribute that says it is a device: a property of the class (`self.device` of
    /// `@property def device(self): return get_default_device()`), or of a module's instance of
    /// such a class (`settings.TORCH_DEVICE`).
    pub(crate) fn chooser_call(&self, value: &Expr) -> bool {
        let call = match value {
            Expr::Call(call) => call,
            Expr::Attribute(attribute) => {
                return says_device(attribute.attr.as_str())
                    && (self.own_method(value).or_else(|| self.resolve(value)))
                        .is_some_and(|path| self.chooses(&path));
            }
            _ => return false,
        };
        self.resolve(&call.func)
            .or_else(|| self.own_method(&call.func))
            .is_some_and(|path| self.chooses(&path) && self.lets_choose(&path, call))
    }

    /// Whether `value` is a `torch.device(...)` of a literal device, or a conditional with one
    /// in a branch (`torch.device("cpu") if on_cpu else torch.device("cuda")`).
    pub(crate) fn built_device(&self, value: &Expr) -> bool {
        match value {
            // Also of a name holding a device string (`torch.device(self.device)`).
            Expr::Call(call) => {
                self.resolves_to(&call.func, "torch.device")
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

    /// The device a value names or a tensor is on, when the function has made it known.
    pub(crate) fn device_of(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Name(name) => self
                .function
                .flow
                .facts
                .get(name.id.as_str())
                .map(|f| f.device.clone()),
            Expr::StringLiteral(_) | Expr::FString(_) => match string(expr)? {
                "cuda" => Some("cuda".to_owned()),
                text => placement_device_name::named(text).map(|named| named.to_string()),
            },
            Expr::NumberLiteral(_) => integer(expr).map(|ordinal| format!("cuda:{ordinal}")),
            Expr::Call(call) if self.resolves_to(&call.func, "torch.device") => {
                let kind = call.arguments.find_argument_value("type", 0)?;
                match call.arguments.find_argument_value("index", 1) {
                    Some(index) => Some(format!("{}:{}", string(kind)?, integer(index)?)),
                    None => self.device_of(kind),
                }
            }
            _ => None,
        }
    }

    /// Whether an argument of `.to(...)` is a device rather than a dtype or a tensor.
    pub(crate) fn is_device(&self, expr: &Expr) -> bool {
        if string(expr).is_some_and(|s| s == "cuda" || s == "cpu" || s.starts_with("cuda:")) {
            return true;
        }
        if integer(expr).is_some() {
            return true;
        }
        if let Expr::Call(call) = expr {
            return self.resolves_to(&call.func, "torch.device");
        }
        let last = last_name(expr).to_ascii_lowercase();
        (last.contains("device") || last == "dev") && !last.contains("type")
    }
}

/// A lookup of a device by a key that says so, with a default (`kwargs.get("device",
/// "cuda")`, `options.pop("onload_device", default_device)`).
pub(crate) fn device_lookup(call: &ast::ExprCall) -> bool {
    matches!(&*call.func, Expr::Attribute(method)
        if matches!(method.attr.as_str(), "get" | "pop" | "setdefault"))
        && call.arguments.args.len() == 2
        && string(&call.arguments.args[0]).is_some_and(says_device)
}

/// The GPU index a lookup falls back to (`kwargs.get("device_id", 0)`): GPU 0 for callers who
/// pass none.
pub(crate) fn defaulted_ordinal(value: &Expr) -> Option<u64> {
    let Expr::Call(call) = value else {
        return None;
    };
    let Expr::Attribute(method) = &*call.func else {
        return None;
    };
    let [key, default] = &*call.arguments.args else {
        return None;
    };
    (matches!(method.attr.as_str(), "get" | "pop" | "setdefault")
        && string(key).is_some_and(|key| says_device(key) || says_gpu_index(key)))
    .then(|| integer(default))
    .flatten()
}

/// The GPU index a choice between it and the CPU names (`0 if torch.cuda.device_count() > 0
/// else "cpu"`): GPU 0 wherever a GPU is.
pub(crate) fn ordinal_or_cpu(value: &Expr) -> Option<u64> {
    let Expr::If(choice) = value else {
        return None;
    };
    let cpu = |branch: &Expr| string(branch) == Some("cpu");
    match (integer(&choice.body), integer(&choice.orelse)) {
        (Some(ordinal), None) if cpu(&choice.orelse) => Some(ordinal),
        (None, Some(ordinal)) if cpu(&choice.body) => Some(ordinal),
        _ => None,
    }
}

/// The GPU index an f-string that starts `cuda:` takes from a lookup's default
/// (`f"cuda:{spec.get('cuda_id', 0)}"`), whatever the key, and where that default is written.
fn looked_up_ordinal(f: &ast::ExprFString) -> Option<(u64, Range<usize>)> {
    let mut elements = f.value.elements();
    let ast::InterpolatedStringElement::Literal(text) = elements.next()? else {
        return None;
    };
    let ast::InterpolatedStringElement::Interpolation(field) = elements.next()? else {
        return None;
    };
    if &*text.value != "cuda:" || elements.next().is_some() {
        return None;
    }
    let Expr::Call(call) = &*field.expression else {
        return None;
    };
    let Expr::Attribute(method) = &*call.func else {
        return None;
    };
    let [_, default] = &*call.arguments.args else {
        return None;
    };
    matches!(method.attr.as_str(), "get" | "pop" | "setdefault")
        .then(|| Some((integer(default)?, range(default))))
        .flatten()
}
