//! Library calls as the checker meets them: what a call of an API the tables know does for
//! placement (the current device used or changed, a device built, an environment variable
//! written), and the methods recognised on any receiver (`.cuda(...)`, `.to(...)`).

use compact_str::CompactString;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;
use std::ops::Range;

use crate::analysis::{Event, says_device, says_gpu_index};
use crate::api::Role;
use crate::python::analysis::flow::{Callee, Choice};
use crate::python::checker::Checker;
use crate::python::note_asked;
use crate::python::semantic::{forwards, integer, last_name, range, string};

impl<'a> Checker<'a, '_> {
    /// A call, and the path its callee resolves to.
    pub(crate) fn call(&mut self, call: &ast::ExprCall, path: Option<CompactString>) {
        let span = range(call);
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
                                self.function.in_entry,
                            );
                        }
                    }
                    Role::SetEnvVar => {
                        if let Some(variable) =
                            (call.arguments.find_positional(0)).and_then(|key| self.string_of(key))
                        {
                            self.set_env(variable.to_owned(), span.clone());
                        }
                    }
                    _ => {}
                }
            }
            self.device_arguments(call, Callee::Function(path));
            if let Some(name) = path.strip_prefix("torch.")
                && self.api.names.combining.contains(name)
            {
                // `torch.cat([a, b])` takes its tensors in a list or a tuple.
                let operands: Vec<&Expr> = match call.arguments.args.first() {
                    Some(Expr::List(list)) => list.iter().collect(),
                    Some(Expr::Tuple(tuple)) => tuple.iter().collect(),
                    _ => call.arguments.args.iter().collect(),
                };
                self.combine(span.clone(), &operands);
            }
            self.function_meets(call, path);
        }
        self.model_call(call, path.as_deref());
        if let Expr::Attribute(method) = &*call.func
            && path.is_none()
        {
            // A method of the class being walked (`self.load(path, device)`).
            match self.own_method(&call.func) {
                Some(own) => self.device_arguments(call, Callee::Function(&own)),
                // A method of one of the project's classes, on an instance of another class
                // or none known (`model.to_device(device)`).
                None => self.device_arguments(call, Callee::Method(method.attr.as_str())),
            }
            self.method_call(call, method);
        }
        // `torch.amp.GradScaler(device="cuda")` and the like take a device type, not a device.
        let callee = last_name(&call.func);
        if self.api.names.device_type_apis.contains(callee) {
            return;
        }
        // A GPU named with its index (`"cuda:1"`) is a device wherever it is handed, also to a
        // function no table knows (`TorchDevice("cuda:0")`), unless shown to a person or asked
        // about.
        if !self.api.names.reporting.contains(callee) && !self.api.names.queries.contains(callee) {
            for arg in &call.arguments.args {
                if string(arg).is_some_and(|text| text.starts_with("cuda:") && names_a_gpu(text)) {
                    self.device_argument(arg, |_| String::new());
                }
                // So is a device built here (`device=torch.device("cuda")` as a parameter's
                // default) handed on by position, also to a callee nothing here knows
                // (`super().__init__(plans, device)`): it can be nothing but a device.
                else if self.pending_of(arg).is_some_and(|held| held.built) {
                    self.device_argument(arg, |_| String::new());
                }
            }
        }
        for keyword in &call.arguments.keywords {
            let Some(name) = &keyword.arg else { continue };
            match (name.as_str(), &keyword.value) {
                ("device" | "map_location" | "device_map" | "output_device", value)
                    if !holds_map(value) =>
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
                    if self.api.names.data_parallel.contains(callee) =>
                {
                    for element in elts {
                        self.device_argument(element, |ordinal| format!("device_ids=[{ordinal}]"));
                    }
                }
                // `device_map={"": 0}` (transformers, accelerate): each module's device.
                ("device_map", value) => self.device_maps(value),
                // A GPU's index by a keyword that says so (`gpu_id=0` of diffusers' offloading,
                // `device_index=1`), also a name holding one (`device_index=device_index` of a
                // default `device_index: int = 0`).
                (name, value)
                    if (integer(value).is_some()
                        || (matches!(value, Expr::Name(_) | Expr::Attribute(_))
                            && (self.pending_of(value)).is_some_and(|held| {
                                matches!(held.choice, Choice::Ordinal(_))
                            })))
                        && says_gpu_index(name) =>
                {
                    self.device_argument(value, |ordinal| format!("{name}={ordinal}"));
                }
                // GPUs listed by index (`devices=[0]`, `gpu_ids=[0, 1]`).
                ("devices" | "gpus" | "gpu_ids", Expr::List(ast::ExprList { elts, .. }))
                | ("devices" | "gpus" | "gpu_ids", Expr::Tuple(ast::ExprTuple { elts, .. })) => {
                    for element in elts.iter().filter(|element| integer(element).is_some()) {
                        self.device_argument(element, |ordinal| format!("{name}=[{ordinal}]"));
                    }
                }
                _ => {}
            }
        }
    }

    /// A call that asks the GPU driver something, made when a library module is imported: at
    /// its top level, in a class body or a default argument (outside any function body or
    /// lambda), and not in a program's file or its main guard.
    ///
    /// A function of the project that asks the driver in its body, called there, asks it
    /// too (`TORCH_NPU_AVAILABLE = is_torch_npu_available()` around `torch.cuda.is_available()`).
    pub(crate) fn driver_query(&mut self, call: &ast::ExprCall, path: Option<&str>) {
        let Some(path) = path else { return };
        let asks = self.api.names.driver_queries.contains(path);
        let at_import = self.scopes.len() == 1 && self.deferred == 0;
        if asks
            && !at_import
            && let Some(function) = self.chooser_path()
            && !self.asks_driver.contains(&function)
        {
            self.asks_driver.push(function);
        }
        if !at_import || self.function.in_entry || self.program {
            return;
        }
        let (asks, when) = if asks {
            (true, "when the module is imported")
        } else {
            let own = self.asks_driver.iter().any(|function| function == path);
            (
                own || self.project_asks_driver(path),
                "when the module is imported (in the function's body)",
            )
        };
        if asks {
            let func = range(&*call.func);
            self.events.push(Event::CudaAtImport {
                shown: self.source(&func).to_owned(),
                span: func,
                when,
            });
        }
    }

    /// `settings.TORCH_DEVICE` read when a library module is imported (at its top level, in a
    /// class body or a default argument), of a module's instance whose class's property asks
    /// the GPU driver (`if torch.cuda.is_available(): return "cuda"`).
    pub(crate) fn driver_property(&mut self, value: &Expr) {
        let Expr::Attribute(attribute) = value else {
            return;
        };
        let at_import = self.scopes.len() == 1 && self.deferred == 0;
        if !at_import
            || self.function.in_entry
            || self.program
            || !says_device(attribute.attr.as_str())
        {
            return;
        }
        if self
            .resolve(value)
            .is_some_and(|path| self.project_asks_driver(&path))
        {
            let span = range(value);
            self.events.push(Event::CudaAtImport {
                shown: self.source(&span).to_owned(),
                span,
                when: "when the module is imported (in the property's body)",
            });
        }
    }

    /// Whether `path` names a function of the project that asks the GPU driver something.
    fn project_asks_driver(&self, path: &str) -> bool {
        note_asked(&mut self.asked.borrow_mut().asks_driver, path);
        self.project.asks_driver(path)
    }

    /// The `device_map` dicts a value may be: itself, or a conditional's branches
    /// (`{"": gpu_id} if gpu_id >= 0 else {"": "cuda"}`).
    pub(crate) fn device_maps(&mut self, value: &Expr) {
        match value {
            Expr::Dict(map) => self.device_map(map),
            Expr::If(choice) => {
                self.device_maps(&choice.body);
                self.device_maps(&choice.orelse);
            }
            _ => {}
        }
    }

    /// A `device_map` dict (transformers, accelerate): each value is a module's device.
    fn device_map(&mut self, map: &ast::ExprDict) {
        // Keyed by devices (`{"cuda": "cuda", "npu": "dlinfer"}`), it maps devices to something
        // else: no module's placement.
        let by_device = map.iter().any(|item| {
            item.key.as_ref().and_then(string).is_some_and(|key| {
                key == "cuda" || key == "cpu" || placement_device_name::named(key).is_some()
            })
        });
        if by_device {
            return;
        }
        for item in map.iter() {
            let shown = |ordinal| format!("device_map={{...: {ordinal}}}");
            self.device_argument(&item.value, shown);
        }
    }

    /// `torch.device("cuda", 1)`, `torch.device("cuda:1")`, `torch.device(1)`,
    /// `torch.device(type="cuda", index=1)`.
    pub(crate) fn torch_device(&mut self, call: &ast::ExprCall) {
        if self.checking > 0 {
            return;
        }
        let span = range(call);
        let shown = self.source(&span).to_owned();
        let kind = call.arguments.find_argument_value("type", 0);
        match call.arguments.find_argument_value("index", 1) {
            Some(index) => match (kind.and_then(string), integer(index)) {
                (Some("cuda"), Some(ordinal)) => {
                    self.chosen(
                        Choice::Ordinal(ordinal),
                        shown,
                        range(index),
                        self.function.in_entry,
                    );
                }
                // `torch.device("cuda", device_id)` with a name holding a GPU's index (a
                // parameter's default `device_id=0`, `opt.gpu = 0`).
                (Some("cuda"), None) => {
                    self.device_argument(index, |_| shown);
                }
                _ => {}
            },
            None => {
                if let Some(kind) = kind {
                    if string(kind) == Some("cuda") {
                        self.chosen(Choice::Current, shown, span, self.function.in_entry);
                    } else {
                        self.device_argument(kind, |_| shown);
                    }
                }
            }
        }
    }

    /// `.cuda(...)` and `.to(...)` on a receiver that is no library's item.
    pub(crate) fn method_call(&mut self, call: &ast::ExprCall, method: &ast::ExprAttribute) {
        let receiver = &*method.value;
        // From the dot before the method's name, on the method's line however the call is
        // broken (`(x  # move\n .cuda())`, a backslash, `x.\n cuda()`): what a finding quotes and
        // where an `allow` comment applies.
        let (after, name_start) = (
            usize::from(receiver.range().end()),
            usize::from(method.attr.range().start()),
        );
        let dot = (self.text.get(after..name_start))
            .and_then(|between| between.rfind('.'))
            .map_or(after, |at| after + at);
        let from_dot = dot..usize::from(call.range().end());
        let name = method.attr.as_str();
        let transfer = match name {
            // `super().cuda(*args, **kwargs)` passes on its caller's device.
            "cuda" if forwards(&call.arguments) => true,
            "cuda" => {
                let shown = self.source(&from_dot).trim_start().to_owned();
                match call.arguments.find_argument_value("device", 0) {
                    None => {
                        self.chosen(
                            Choice::Current,
                            shown,
                            from_dot.clone(),
                            self.function.in_entry,
                        );
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
            "type_as" => {
                if let Some(other) = call.arguments.find_argument_value("other", 0) {
                    let other = self.tensor(other);
                    self.type_as(receiver, other, from_dot.clone());
                }
                false
            }
            // `t.type(x.type())`, or through a name (`dtype = x.type()`): `x`'s type.
            "type" => {
                if let Some(other) = call.arguments.find_argument_value("dtype", 0)
                    && let Some(other) = self.type_of_tensor(other)
                {
                    self.type_as(receiver, other, from_dot.clone());
                }
                false
            }
            _ => false,
        };
        if transfer {
            self.loop_transfer(call, receiver, from_dot);
        }
    }

    /// `t.type_as(other)` (or `t.type(other.type())`) with `t` known to be on the CPU and
    /// `other` not: the CUDA type of a tensor on any GPU moves `t` to the current one.
    fn type_as(&mut self, receiver: &Expr, other: Tensor, from_dot: Range<usize>) {
        // Made on the CPU: a factory without `device=` (also through a name), `.cpu()`, or
        // `torch.tensor(...)` and `torch.from_numpy(...)`, which always make one there, also
        // through a view of it (`torch.tensor([0.5, 0.5]).view(1, 2)`).
        let mut made = receiver;
        while let Expr::Call(call) = made
            && let Expr::Attribute(method) = &*call.func
            && self.api.names.keeps_device.contains(method.attr.as_str())
        {
            made = &method.value;
        }
        let made = match made {
            Expr::Call(made)
                if made.arguments.find_keyword("device").is_none()
                    && (self.resolves_to(&made.func, "torch.tensor")
                        || self.resolves_to(&made.func, "torch.from_numpy")) =>
            {
                range(receiver)
            }
            _ => match self.fact_of(receiver) {
                Some(fact) if fact.device == "cpu" => fact.origin,
                _ => return,
            },
        };
        if other.on_cpu || self.scoped > 0 {
            return;
        }
        self.device_use(from_dot.clone());
        self.events.push(Event::TypeAsCurrent {
            shown: self.source(&from_dot).trim_start().to_owned(),
            span: from_dot,
            other: other.shown,
            made,
            in_entry_point: self.function.in_entry,
            in_program: self.program,
        });
    }

    /// A tensor as `type_as` needs it.
    fn tensor(&self, tensor: &Expr) -> Tensor {
        Tensor {
            shown: self.source(&range(tensor)).to_owned(),
            on_cpu: self
                .fact_of(tensor)
                .is_some_and(|fact| fact.device == "cpu"),
        }
    }

    /// The tensor whose type `value` is: `x.type()` (also `x.data.type()`), or a name bound to
    /// one.
    pub(crate) fn type_of_tensor(&self, value: &Expr) -> Option<Tensor> {
        match value {
            Expr::Name(name) => self
                .function
                .flow
                .tensor_types
                .get(name.id.as_str())
                .cloned(),
            Expr::Call(call) if call.arguments.is_empty() => match &*call.func {
                Expr::Attribute(method) if method.attr.as_str() == "type" => {
                    Some(self.tensor(peel_data(&method.value)))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// The tensor whose type `t.type_as(x)` or `t.type(x.type())` gives `t`: shown, and whether it
/// is known to be on the CPU.
#[derive(Clone, Debug)]
pub(crate) struct Tensor {
    shown: String,
    on_cpu: bool,
}

/// `x.data` is `x`'s storage, on its device.
fn peel_data(value: &Expr) -> &Expr {
    match value {
        Expr::Attribute(attribute) if attribute.attr.as_str() == "data" => &attribute.value,
        other => other,
    }
}

/// Whether a string names one GPU by its index (`"cuda:1"`).
fn names_a_gpu(text: &str) -> bool {
    matches!(
        placement_device_name::parse(text),
        Ok(placement_device_name::DeviceName::Cuda(_))
    )
}

/// Whether `value` is a dict, or a conditional with one in a branch: a `device_map` of
/// modules' devices rather than one device.
pub(crate) fn holds_map(value: &Expr) -> bool {
    match value {
        Expr::Dict(_) => true,
        Expr::If(choice) => holds_map(&choice.body) || holds_map(&choice.orelse),
        _ => false,
    }
}
