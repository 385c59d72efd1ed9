//! Device flow in Python: device strings and `torch.device(...)` values bound to names,
//! attributes and defaults, reported where they reach a device position (and not where they
//! are a device type); the devices tensors are known to be on, and ops whose operands differ.

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::hash_map;
use std::ops::Range;

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr};

use crate::analysis::{ApiUse, Event, Fact, How, MadeOnCpu, says_device, says_gpu_index};
use crate::api::Entry;
use crate::python::analysis::calls::Tensor;
use crate::python::analysis::device_params::gpu_index_in;
use crate::python::analysis::device_values::{defaulted_ordinal, device_lookup, ordinal_or_cpu};
use crate::python::checker::Checker;
use crate::python::project::{Slot, TensorReturn};
use crate::python::semantic::{dotted, integer, keyed, last_name, range, string};

/// What one function (or the module's top level) has shown so far.
#[derive(Debug, Default)]
pub(crate) struct Flow {
    /// The first use of a GPU, for `CUDA_VISIBLE_DEVICES` set after it.
    pub(crate) first_device_use: Option<Range<usize>>,
    /// Tensors and devices whose device is known: name → device.
    pub(crate) facts: FxHashMap<String, Fact>,
    /// Names bound to a device chosen by an availability check, with that check and where its
    /// uses start to count (after the conditional, or after the `if` whose branch bound it).
    pub(crate) fallbacks: Vec<(String, String, Range<usize>, usize)>,
    /// Names bound to a device string whose meaning depends on its use (`device = "cuda"` is a
    /// device in `.to(device)`, a device type in `getattr(torch, device)`).
    pub(crate) pending: FxHashMap<String, HeldDevice>,
    /// Names bound to an availability check (`use_cuda = not no_cuda and
    /// torch.cuda.is_available()`): the check, shown, where it is, and whether an `if` has
    /// branched on it already (the program handles the machine without a GPU, so a device
    /// chosen by it after is no silent fallback).
    pub(crate) availability_flags: FxHashMap<String, (String, Range<usize>, bool)>,
    /// Names bound, in a branch an availability check chose, to a GPU the function picked
    /// (`device = "cuda:{}".format(local_rank)`).
    pub(crate) gpu_names: FxHashSet<CompactString>,
    /// Names bound to a string literal, for `getattr(torch, name)`.
    pub(crate) strings: FxHashMap<String, String>,
    /// Names bound to a library's item (`device_module = getattr(torch, "cuda")`).
    pub(crate) aliases: FxHashMap<String, CompactString>,
    /// Names bound to a tensor's type (`dtype = x.type()`): name → the tensor. The type of a
    /// tensor on a GPU is a CUDA type, which `t.type(dtype)` moves to the current GPU.
    pub(crate) tensor_types: FxHashMap<String, Tensor>,
    /// Whether a branch of an availability check said what happens without a GPU (`else:
    /// logging.warning("No accessible GPU, device set to CPU")`): the function's later choices
    /// by availability are no silent fallback.
    pub(crate) said_without_gpu: bool,
    /// Parameters whose default is a literal that is not a device (`device="auto"`,
    /// `device=None`): passed on, they pass no device for callers who pass none.
    pub(crate) literal_defaults: FxHashSet<String>,
    /// Whether the function is model code (a method of a module class, or a function in one),
    /// or may be (a module-level function, model code if model code hands it its tensors).
    pub(crate) in_model: bool,
    /// Names bound to tensors that follow the model to its device, each with the parameters
    /// it comes from ([`Origin`]).
    pub(crate) follows: FxHashMap<CompactString, Origin>,
    /// The function's dotted path and the parameters an [`Origin`] names, by bit: each as its
    /// place among a call's arguments and its name.
    pub(crate) fed_by: Option<(CompactString, Vec<(usize, CompactString)>)>,
    /// In model code, names bound to tensors made on the CPU: where each was made.
    pub(crate) cpu_made: FxHashMap<CompactString, (Range<usize>, MadeOnCpu)>,
    /// In model code, names bound to data written out (`weights = [1.0, 2.0]`): a tensor made
    /// of one has a dimension, and is no scalar.
    pub(crate) sequences: FxHashSet<CompactString>,
    /// In model code, names a loop binds to the modules of one of the module's containers
    /// (`for flow in self.flows:`): a method called on one may be any module class's.
    pub(crate) elements: FxHashSet<CompactString>,
    /// What the function returns of tensors, so far ([`TensorReturn`]).
    pub(crate) returned: TensorReturn,
    /// Whether a `return` of the function gives what is not a tensor made on the CPU.
    pub(crate) returns_placed: bool,
}

/// Where a tensor that follows the model comes from: `0`, certainly the model's (a
/// `forward` input, a parameter, a submodule's output); otherwise the parameters of the
/// function (bits of [`Flow::fed_by`]) whose tensors it follows, which are the model's if model
/// code hands them its tensors.
pub(crate) type Origin = u64;

/// A device string bound to a name, reported where it first reaches a device position.
#[derive(Clone, Debug)]
pub(crate) struct HeldDevice {
    pub(crate) choice: Choice,
    pub(crate) shown: String,
    pub(crate) span: Range<usize>,
    pub(crate) in_entry: bool,
    pub(crate) reported: bool,
    /// The current device asked for (`torch.cuda.current_device()`), not a string that may be
    /// a device type: passed to any call but a query or a report, it is used as a device.
    pub(crate) asked: bool,
    /// Built as a device (`torch.device("cuda")`, a chooser's call) and kept in an attribute
    /// that says device (`self.device`): other modules place with it (`config.device`), so it
    /// is reported when the file ends if nothing in the file did.
    pub(crate) escapes: bool,
    /// Built as a device (`torch.device("cuda")`, `torch.device(device)` of a name holding
    /// `"cuda"`): no longer a string that may be a device type, so returned from a chooser it
    /// is reported where it was written, as `return torch.device("cuda")` is.
    pub(crate) built: bool,
    /// Chosen by a literal written in this function (`device = "cuda"`), not by a call of a
    /// chooser (whose callers are reported).
    pub(crate) written: bool,
    /// A parameter's default: what callers who pass none get.
    pub(crate) default: bool,
    /// The parameter's default when a branch chose another device for the name (`if use_usp:
    /// device = get_device_name()` after `device=get_device_type()`): callers who pass none
    /// and take the other branch still get the default, reported where the name is used, as
    /// this one is.
    pub(crate) or: Vec<HeldDevice>,
}

impl HeldDevice {
    /// What the name holds after branches, one of which held `other`: a default that a branch
    /// replaced stays possible.
    fn may_also_be(&mut self, mut other: HeldDevice) {
        for other in std::mem::take(&mut other.or).into_iter().chain([other]) {
            if other.default
                && other.span != self.span
                && self.or.iter().all(|known| known.span != other.span)
            {
                self.or.push(other);
            }
        }
    }
}

/// What a device string chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// `"cuda"`: whatever device is current when it is used.
    Current,
    /// `"cuda:N"`.
    Ordinal(u64),
}

/// What a call calls, for the devices it hands on ([`Checker::device_arguments`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Callee<'a> {
    /// A function or class of the project, by its dotted path.
    Function(&'a str),
    /// A method of some class of the project, by its name, called on an instance of no known
    /// class.
    Method(&'a str),
}

impl<'a> Checker<'a, '_> {
    /// Whether `value` is a call asking for the current device (`torch.cuda.current_device()`)
    /// with nothing to walk in it.
    pub(crate) fn asks_current(&self, value: &Expr) -> bool {
        matches!(value, Expr::Call(call)
        if call.arguments.is_empty()
            && self.resolve(&call.func).is_some_and(|path| {
                self.item(&path).is_some()
                    && (path.ends_with(".current_device")
                        || path.ends_with(".current_device_index"))
            }))
    }

    /// Whether a call only reads facts of a device: `torch.cuda.get_device_properties(...)`,
    /// or another library's query of the same name
    /// (`triton.runtime.driver.active.utils.get_device_properties(index)`).
    pub(crate) fn is_query(&self, call: &ast::ExprCall) -> bool {
        self.is_query_of(call, self.resolve(&call.func).as_deref())
    }

    /// Whether `call`, whose callee resolves to `path`, asks about devices.
    pub(crate) fn is_query_of(&self, call: &ast::ExprCall, path: Option<&str>) -> bool {
        match path {
            Some(path) if path.starts_with("torch.") => path
                .strip_prefix("torch.cuda.")
                .is_some_and(|name| self.api.names.queries.contains(name)),
            _ => self.api.names.queries.contains(last_name(&call.func)),
        }
    }

    pub(crate) fn device_use(&mut self, span: Range<usize>) {
        self.function.flow.first_device_use.get_or_insert(span);
    }

    pub(crate) fn api_event(
        &mut self,
        entry: &'a Entry,
        path: &str,
        span: Range<usize>,
        as_value: bool,
    ) {
        let shown = self.source(&span).to_owned();
        self.events.push(Event::Api {
            use_: ApiUse {
                entry,
                path: path.replace('.', "::"),
                shown,
                span,
                as_value,
                literal_ordinal: None,
                ordinal_from: None,
                after_bind: false,
                helper: None,
                chooser: None,
            },
            in_entry_point: self.function.in_entry,
            in_program: self.program,
        });
    }

    /// Reports a device chosen by a string or an ordinal, from where it was written.
    pub(crate) fn chosen(
        &mut self,
        choice: Choice,
        shown: String,
        span: Range<usize>,
        in_entry: bool,
    ) {
        self.device_use(span.clone());
        if choice == Choice::Current && self.scoped > 0 {
            return;
        }
        // Reported once where it is written (a parameter default reached in two methods).
        let key = (span.start, span.end);
        if self.chosen_events.contains_key(&key) {
            return;
        }
        self.chosen_events.insert(key, self.events.len());
        let event = match choice {
            Choice::Current => Event::CurrentDevice {
                shown,
                span,
                reaches: Vec::new(),
                in_entry_point: in_entry,
                in_program: self.program,
            },
            Choice::Ordinal(ordinal) => Event::DeviceString {
                ordinal: u128::from(ordinal),
                shown,
                span,
                reaches: Vec::new(),
                in_entry_point: in_entry,
                chooser: None,
            },
        };
        self.events.push(event);
    }

    /// Records that the device chosen at `chosen` (held by a name or attribute) reaches a
    /// device position at `at`, on the event that reported it.
    fn reaches(&mut self, chosen: &Range<usize>, at: Range<usize>) {
        let Some(&index) = self.chosen_events.get(&(chosen.start, chosen.end)) else {
            return;
        };
        if let Some(Event::CurrentDevice { reaches, .. } | Event::DeviceString { reaches, .. }) =
            self.events.get_mut(index)
            && !reaches.contains(&at)
        {
            reaches.push(at);
        }
    }

    /// The device string a name holds until it reaches a device position, also a name inside
    /// an f-string (`f"cuda:{index}"` with `index = torch.cuda.current_device()`).
    pub(crate) fn pending_of(&self, expr: &Expr) -> Option<&HeldDevice> {
        if self.function.flow.pending.is_empty() && self.file_pending.is_empty() {
            return None;
        }
        let held = |name: &str| {
            (self.function.flow.pending.get(name)).or_else(|| self.file_pending.get(name))
        };
        match expr {
            // Most values asked about are plain names: looked up as written.
            Expr::Name(name) => held(name.id.as_str()),
            _ => held(&dotted(expr).or_else(|| self.pending_name_in(expr))?),
        }
    }

    /// Whether `value` is `torch.device(name)` of a name holding a device chosen here, without
    /// an index (`return torch.device(device)` after `device = "cuda"`).
    pub(crate) fn builds_held(&self, value: &Expr) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        self.resolves_to(&call.func, "torch.device")
            && call.arguments.find_argument_value("index", 1).is_none()
            && call
                .arguments
                .find_argument_value("type", 0)
                .is_some_and(|kind| self.pending_of(kind).is_some())
    }

    /// The first name holding a device string that a string built from it interpolates
    /// (`f"cuda:{gpu_id}"`, `"cuda:" + str(gpu_id)`, `"cuda:{}".format(gpu_id)`, `"cuda:%d" %
    /// gpu_id`), or that a branch of a conditional is or builds (`"cpu" if device == "mps" else
    /// device`, `"cuda:" + str(gpu_id) if gpu else "cpu"`).
    pub(crate) fn pending_name_in(&self, expr: &Expr) -> Option<String> {
        let held = |expr: &Expr| {
            let name = dotted(expr)?;
            (self.function.flow.pending.contains_key(&name)
                || self.file_pending.contains_key(&name))
            .then_some(name)
        };
        match expr {
            Expr::FString(f) => f.value.elements().find_map(|element| match element {
                ast::InterpolatedStringElement::Interpolation(field) => held(&field.expression),
                ast::InterpolatedStringElement::Literal(_) => None,
            }),
            Expr::If(choice) => [&choice.body, &choice.orelse]
                .into_iter()
                .find_map(|branch| held(branch).or_else(|| self.pending_name_in(branch))),
            other => gpu_index_in(other).and_then(held),
        }
    }

    /// Walks what a device built to be kept is made of, but not the device itself, which is
    /// judged where it is used (`torch.device("cuda", torch.cuda.current_device())` still uses
    /// the current device).
    pub(crate) fn visit_kept(&mut self, value: &Expr) {
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

    /// A device passed to a function of the project whose parameter there is a device, by
    /// position (`generate_stream(model, tokenizer, params, "cuda")`) or by the parameter's name
    /// (`init_workers(cfg, local_rank=0)`), or to a method that the project's classes define
    /// with a device there, called on an instance of no known class (`model.to_device(device
    /// or default_device())`): it reaches a device. (`device=` and `..._device=` reach one
    /// whatever the callee.)
    pub(crate) fn device_arguments(&mut self, call: &ast::ExprCall, callee: Callee<'_>) {
        let handed = Slot::of(&call.arguments).filter(|(slot, _)| match slot {
            Slot::At(_) => true,
            Slot::Named(name) => name != "device" && !name.ends_with("_device"),
        });
        for (slot, argument) in handed {
            // A device string, a GPU's index (`get_device(0)`), a name holding a device string
            // (`device` of `def __init__(self, device="cuda")`), or, by position, a call of the
            // project's chooser (`move_to_device(batch, get_default_device())`).
            if !self.handed_device(argument, &slot) {
                continue;
            }
            // This file's functions, before the project knows them; a method by its name only
            // from the project, which knows every class that defines one of that name.
            let own = (self.device_params.iter()).any(|param| {
                matches!(callee, Callee::Function(path) if param.function == path) && slot.is(param)
            });
            if own || self.takes_device(callee, &slot) {
                let callee = self.source(&range(&*call.func)).to_owned();
                let shown = |ordinal| match &slot {
                    Slot::At(_) => format!("{callee}(..., {ordinal})"),
                    Slot::Named(name) => format!("{callee}(..., {name}={ordinal})"),
                };
                self.device_argument(argument, shown);
            }
        }
    }

    /// Whether `argument`, handed in `slot`, is a device: a device string, a GPU's index
    /// (`get_device(0)`), a name holding a device string (`device` of `def __init__(self,
    /// device="cuda")`), by position a call of the project's chooser
    /// (`move_to_device(batch, get_default_device())`), or a choice between such values
    /// (`device if device is not None else get_default_device()`).
    fn handed_device(&self, argument: &Expr, slot: &Slot) -> bool {
        match argument {
            Expr::If(choice) => [&choice.body, &choice.orelse]
                .iter()
                .any(|branch| self.handed_device(branch, slot)),
            Expr::BoolOp(either) if either.op == ast::BoolOp::Or => {
                (either.values.iter()).any(|value| self.handed_device(value, slot))
            }
            _ => {
                integer(argument).is_some()
                    || (string(argument).is_some() && self.device_of(argument).is_some())
                    || self.pending_of(argument).is_some()
                    || (matches!(slot, Slot::At(_)) && self.chooser_call(argument))
            }
        }
    }

    /// Whether the project's function, or a method of its classes, takes a device in `slot`.
    fn takes_device(&self, callee: Callee<'_>, slot: &Slot) -> bool {
        match callee {
            Callee::Function(path) => {
                self.ask_device_param(path, slot);
                self.project.takes_device(path, slot)
            }
            Callee::Method(name) => {
                let asked = &mut self.asked.borrow_mut().method_takes_device;
                asked.insert((name.into(), slot.clone()));
                self.project.method_takes_device(name, slot)
            }
        }
    }

    /// Whether a function of this file or the project looks at the device it takes in `slot`
    /// (`select_device(...)` logs what it selects).
    pub(crate) fn looks_at_device(&self, path: &str, slot: &Slot) -> bool {
        let own = (self.device_params.iter())
            .any(|param| param.function == path && slot.is(param) && param.looked);
        own || {
            self.ask_device_param(path, slot);
            self.project.looks_at_device(path, slot)
        }
    }

    fn ask_device_param(&self, path: &str, slot: &Slot) {
        let asked = &mut self.asked.borrow_mut().takes_device;
        asked.insert((path.to_owned(), slot.clone()));
    }

    /// A value where a device goes (`.to(...)`, `device=`, `map_location=`, `device_map=`,
    /// `torch.device(...)`): a device string, a conditional or default holding one, an integer
    /// ordinal, or a name bound to a device string earlier. What it names, if anything is known.
    pub(crate) fn device_argument(
        &mut self,
        value: &Expr,
        shown_int: impl FnOnce(u64) -> String,
    ) -> Option<String> {
        // `device=str(device)` (for an API that takes only strings): the same device.
        if let Expr::Call(call) = value
            && matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "str")
            && let [inner] = &*call.arguments.args
            && call.arguments.keywords.is_empty()
        {
            return self.device_argument(inner, shown_int);
        }
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
                self.chosen(choice, shown, span, self.function.in_entry);
            }
            return Some(match choice {
                Choice::Current => "cuda".to_owned(),
                Choice::Ordinal(ordinal) => format!("cuda:{ordinal}"),
            });
        }
        // A module's variable that holds a device it chose, imported (`utils.device_type`):
        // asked of the project only here, where a device goes.
        if matches!(value, Expr::Name(_) | Expr::Attribute(_))
            && self.resolve(value).is_some_and(|path| self.chooses(&path))
        {
            let span = range(value);
            let shown = self.source(&span).to_owned();
            self.chosen(Choice::Current, shown, span, self.function.in_entry);
            return Some("cuda".to_owned());
        }
        // A name holding a device string, also inside an f-string (`f"cuda:{index}"`).
        if let Some(name) = dotted(value)
            .or_else(|| keyed(value))
            .or_else(|| self.pending_name_in(value))
        {
            let scoped = self.scoped > 0;
            let pending = match self.function.flow.pending.get_mut(&name) {
                Some(pending) => Some(pending),
                None => self.file_pending.get_mut(&name),
            };
            if let Some(pending) = pending {
                // Under a scoped guard the current device is the guard's: nothing is chosen
                // here, and a use after the guard still chooses.
                if scoped && pending.choice == Choice::Current {
                    return None;
                }
                // Reported where it is first used, with what a branch chose instead.
                let first = !std::mem::replace(&mut pending.reported, true);
                let mut newly = Vec::new();
                for other in pending.or.iter_mut().filter(|other| !other.reported) {
                    other.reported = true;
                    newly.push(other.clone());
                }
                let pending = pending.clone();
                for (held, new) in std::iter::once((pending, first))
                    .chain(newly.into_iter().map(|other| (other, true)))
                {
                    if new {
                        self.chosen(held.choice, held.shown, held.span.clone(), held.in_entry);
                    }
                    self.reaches(&held.span, range(value));
                }
            }
            return None;
        }
        if let Expr::BooleanLiteral(_) = value {
            return None;
        }
        // `device=0 if device == "cuda" else -1`: a GPU by its index in one branch.
        if let Expr::If(choice) = value
            && let Some(branch) = [&*choice.body, &*choice.orelse]
                .into_iter()
                .find(|branch| integer(branch).is_some())
        {
            return self.device_argument(branch, shown_int);
        }
        let ordinal = integer(value)?;
        let span = range(value);
        self.chosen(
            Choice::Ordinal(ordinal),
            shown_int(ordinal),
            span,
            self.function.in_entry,
        );
        Some(format!("cuda:{ordinal}"))
    }

    /// What a call tells about where its result is: a factory with or without `device=`, a
    /// move, `.cpu()`.
    pub(crate) fn fact_of(&self, value: &Expr) -> Option<Fact> {
        let Expr::Call(call) = value else {
            return match value {
                Expr::Name(name) => self.function.flow.facts.get(name.id.as_str()).cloned(),
                // `xx * 2 - 1`, `xx / (n - 1)`: a tensor with what has no device known (a number)
                // or with a tensor on the same device stays where it is; with a tensor elsewhere
                // the op fails (`device_mismatch`).
                Expr::BinOp(op) => match (self.fact_of(&op.left), self.fact_of(&op.right)) {
                    (Some(fact), None) | (None, Some(fact)) => Some(fact),
                    (Some(left), Some(right)) if left.device == right.device => Some(left),
                    _ => None,
                },
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
                .is_some_and(|name| self.api.names.factories.contains(name));
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
            // A view, a copy or another dtype of a tensor is where the tensor is
            // (`torch.arange(n).repeat(b, 1).transpose(0, 1)`).
            name if self.api.names.keeps_device.contains(name) => {
                return self.fact_of(&method.value);
            }
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
    pub(crate) fn differ(a: &str, b: &str) -> bool {
        a != b && (a == "cpu" || b == "cpu" || (a != "cuda" && b != "cuda"))
    }

    pub(crate) fn combine(&mut self, op: Range<usize>, operands: &[&Expr]) {
        let facts: Vec<Fact> = operands
            .iter()
            .filter_map(|operand| match operand {
                Expr::Name(name) => self.function.flow.facts.get(name.id.as_str()).cloned(),
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

    /// A device string bound to a name (an assignment or a parameter's default): a GPU
    /// with its ordinal (`DEVICE = "cuda:1"`) is reported at once when the name says it is a
    /// device; otherwise the string is reported where the name reaches a device position
    /// (`device = "cuda"` then `.to(device)`), since the same string is also a device type
    /// (`getattr(torch, device)`, `torch.device(device, index)`). `file` keeps it for the
    /// file's other functions (attributes, module-level names).
    pub(crate) fn bind_device_string(&mut self, name: &str, value: &Expr, file: bool) {
        // `self.device = device`, `device = torch.device(device)`: the name holds what the
        // other held (read before the name's old value goes).
        let built = self.built_device(value);
        let from = match value {
            // With an index (`torch.device(device, local_rank)`) it is no longer the current
            // device the name held.
            Expr::Call(call) if built => match call.arguments.find_argument_value("index", 1) {
                Some(_) => None,
                None => call.arguments.find_argument_value("type", 0),
            },
            // `kwargs.get("device", default_device)`: what the default held, for callers who
            // pass no device.
            Expr::Call(call) if device_lookup(call) => call.arguments.args.get(1),
            other => Some(other),
        };
        let held = from.and_then(|from| self.pending_of(from)).cloned();
        // Read before the name's old value goes (`device = torch.device(device)`).
        let built_from_held = held.is_some() && built;
        // Kept in an attribute that says device, for other modules to place with.
        let escapes = file
            && name.contains('.')
            && says_device(name)
            && (matches!(value, Expr::Call(_))
                || built_from_held
                || built
                || self.current_type(value));
        // A new value replaces what the name held, wherever it was kept; an attribute set in
        // several methods (`self.device = torch.device("cuda")` in one, `"cpu"` in another)
        // may hold either. What an attribute held for other modules is reported before it goes.
        if let Some(old) = self.file_pending.get(name)
            && old.escapes
            && !old.reported
        {
            let old = old.clone();
            self.chosen(old.choice, old.shown, old.span, old.in_entry);
        }
        if !(file && name.contains('.')) || held.is_some() {
            self.function.flow.pending.remove(name);
            self.file_pending.remove(name);
        }
        let Some((choice, shown, span)) = self.device_literal(value) else {
            // `cuda_device = 0` when the caller passed none: GPU 0 wherever it goes, as a
            // parameter's default of 0 is.
            if let Some(ordinal) = integer(value)
                .or_else(|| defaulted_ordinal(value))
                .or_else(|| ordinal_or_cpu(value))
                .filter(|_| says_device(name) || says_gpu_index(name))
            {
                let shown = format!("{name} = {}", self.source(&range(value)));
                self.hold(
                    name,
                    Choice::Ordinal(ordinal),
                    shown,
                    range(value),
                    false,
                    file,
                );
                return;
            }
            if let Some(mut pending) = held {
                // A GPU by its index built into a device (`torch.device(f"cuda:{gpu_id}")` with
                // `gpu_id=0`, or the string bound to a name that says device) is that GPU
                // whatever its use, as `"cuda:0"` is.
                let builds_gpu = self.built_device(value)
                    || (says_device(name) && matches!(value, Expr::FString(_)));
                if builds_gpu && matches!(pending.choice, Choice::Ordinal(_)) && !pending.reported {
                    let (shown, span) = (pending.shown.clone(), pending.span.clone());
                    self.chosen(pending.choice, shown, span, pending.in_entry);
                    // Kept, to say where the device then goes.
                    pending.reported = true;
                }
                // Through a name as it is (`torch.device(device)`), not a string built from it
                // (`f"{accelerator}:{local_rank}"`, which adds an index).
                pending.escapes |= escapes && from.and_then(dotted).is_some();
                pending.built |= built_from_held;
                match file {
                    true => self.file_pending.insert(name.to_owned(), pending),
                    false => self.function.flow.pending.insert(name.to_owned(), pending),
                };
            }
            return;
        };
        // A GPU with its ordinal is a device whatever its use when it is built as one, or
        // bound to a name that says so.
        let written = string(value).is_some() || matches!(value, Expr::FString(_));
        let named_gpu = (says_device(name) && written) || self.built_device(value);
        if named_gpu && matches!(choice, Choice::Ordinal(_)) {
            self.chosen(choice, shown, span, self.function.in_entry);
            return;
        }
        self.hold(name, choice, shown, span, false, file);
        let built = self.built_device(value);
        let held = match file {
            true => self.file_pending.get_mut(name),
            false => self.function.flow.pending.get_mut(name),
        };
        if let Some(held) = held {
            held.escapes |= escapes;
            held.built = built;
            held.written = built || !matches!(value, Expr::Call(_));
        }
    }

    /// Keeps what `name` held in one branch of an `if`, after another branch's: the first
    /// branch's stays, and a device another branch kept for other modules
    /// ([`HeldDevice::escapes`]) is reported, since it goes otherwise.
    pub(crate) fn merge_held(&mut self, name: String, held: HeldDevice) {
        match self.file_pending.get(&name) {
            None => {
                self.file_pending.insert(name, held);
            }
            Some(kept) if held.escapes && !held.reported && kept.span != held.span => {
                self.chosen(held.choice, held.shown, held.span, held.in_entry);
            }
            Some(_) => {}
        }
    }

    /// When the file ends: the devices kept in attributes for other modules
    /// ([`HeldDevice::escapes`]) that nothing in the file placed with.
    pub(crate) fn report_escaped(&mut self) {
        let mut escaped: Vec<HeldDevice> = self
            .file_pending
            .values()
            .filter(|held| held.escapes && !held.reported)
            .cloned()
            .collect();
        escaped.sort_by_key(|held| held.span.start);
        for held in escaped {
            self.chosen(held.choice, held.shown, held.span, held.in_entry);
        }
    }

    /// Binds `name` to a device chosen at `span`, to be reported where it reaches a device
    /// position; `file` keeps it for the file's other functions, `asked` marks the current
    /// device asked for (see [`HeldDevice::asked`]).
    pub(crate) fn hold(
        &mut self,
        name: &str,
        choice: Choice,
        shown: String,
        span: Range<usize>,
        asked: bool,
        file: bool,
    ) {
        let pending = HeldDevice {
            choice,
            shown,
            span,
            in_entry: self.function.in_entry,
            reported: false,
            asked,
            escapes: false,
            built: false,
            written: false,
            default: false,
            or: Vec::new(),
        };
        match file {
            true => self.file_pending.insert(name.to_owned(), pending),
            false => self.function.flow.pending.insert(name.to_owned(), pending),
        };
    }
}

/// The device strings names hold: the function's pending ones and the file's.
pub(crate) type Held = (FxHashMap<String, HeldDevice>, FxHashMap<String, HeldDevice>);

impl Checker<'_, '_> {
    /// The device strings the names hold now: the function's and the file's.
    pub(crate) fn held(&self) -> Held {
        (
            self.function.flow.pending.clone(),
            self.file_pending.clone(),
        )
    }

    pub(crate) fn take_held(&mut self) -> Held {
        (
            std::mem::take(&mut self.function.flow.pending),
            std::mem::take(&mut self.file_pending),
        )
    }

    pub(crate) fn restore_held(&mut self, held: Held) {
        (self.function.flow.pending, self.file_pending) = held;
    }

    /// What the names hold after branches, from what each branch left ([`Checker::held`]): the
    /// first branch's binding of a name stays.
    pub(crate) fn merge_outcomes(&mut self, outcomes: Vec<Held>) {
        for (pending, file_pending) in outcomes {
            for (name, held) in pending {
                match self.function.flow.pending.entry(name) {
                    hash_map::Entry::Vacant(entry) => {
                        entry.insert(held);
                    }
                    hash_map::Entry::Occupied(mut entry) => entry.get_mut().may_also_be(held),
                }
            }
            for (name, held) in file_pending {
                self.merge_held(name, held);
            }
        }
    }
}
