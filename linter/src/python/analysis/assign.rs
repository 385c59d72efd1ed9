//! What an assignment binds: a device string, a chooser's tuple, an environment variable, a
//! `device_map`, a name's string, alias and facts, and the module's instances that other
//! modules name (`settings = Settings()`).

use compact_str::CompactString;
use ruff_python_ast::{self as ast, Expr, Operator};

use crate::analysis::{says_device, says_gpu_index};
use crate::python::analysis::calls::holds_map;
use crate::python::analysis::flow::Choice;
use crate::python::checker::Checker;
use crate::python::semantic::{dotted, integer, keyed_name, last_name, range, string};

impl Checker<'_, '_> {
    /// `target op= value`, once its expressions are walked.
    pub(crate) fn augmented(&mut self, aug: &ast::StmtAugAssign) {
        // `device += ":0"` binds what `device = device + ":0"` does.
        if aug.op == Operator::Add && says_device(last_name(&aug.target)) {
            let sum = Expr::BinOp(ast::ExprBinOp {
                node_index: ast::AtomicNodeIndex::default(),
                range: aug.range,
                left: aug.target.clone(),
                op: aug.op,
                right: aug.value.clone(),
            });
            self.assign(std::slice::from_ref(&*aug.target), &sum);
        } else {
            self.meets(range(aug), &[&aug.target, &aug.value]);
        }
    }

    pub(crate) fn assign(&mut self, targets: &[Expr], value: &Expr) {
        for target in targets {
            self.bind_model_values(target, value);
            match target {
                // `device, dtype = "cuda", torch.float16`: each name its value.
                Expr::Tuple(names) if matches!(value, Expr::Tuple(values) if values.len() == names.len()) =>
                {
                    let Expr::Tuple(values) = value else { continue };
                    for (name, value) in names.iter().zip(values.iter()) {
                        self.assign(std::slice::from_ref(name), value);
                    }
                }
                // `device_type, device_module = get_device_info()`: a chooser's tuple, each name
                // its element.
                Expr::Tuple(names) if matches!(value, Expr::Call(_)) => {
                    self.assign_chosen_tuple(&names.elts, value);
                }
                Expr::Subscript(subscript) if self.resolves_to(&subscript.value, "os.environ") => {
                    if let Some(variable) = self.string_of(&subscript.slice) {
                        self.set_env(variable.to_owned(), range(target));
                    }
                }
                // `kwargs["device_map"] = {"": get_current_device()}`: as `device_map = {...}`;
                // `kwargs["device_map"] = get_current_device()`: as `device_map=` of the call
                // the keyword arguments are for.
                Expr::Subscript(subscript)
                    if let Some(key) = string(&subscript.slice)
                        && key.ends_with("device_map") =>
                {
                    match holds_map(value) {
                        true => self.device_maps(value),
                        false => {
                            let shown = |ordinal| format!("[\"{key}\"] = {ordinal}");
                            self.device_argument(value, shown);
                        }
                    }
                }
                // `vram_config["computation_device"] = ... or device`: as
                // `computation_device=` of the call the keyword arguments are for.
                Expr::Subscript(subscript) if let Some(key) = string(&subscript.slice) => {
                    self.handed_by_key(key, value);
                }
                // `device_map["vision_model"] = 0`: that module's device.
                Expr::Subscript(subscript)
                    if dotted(&subscript.value).is_some_and(|map| map.ends_with("device_map")) =>
                {
                    self.device_argument(value, |ordinal| format!("device_map[...] = {ordinal}"));
                }
                // `device_map = {"transformer.embedding": 0, ...}`: each module's device, as
                // where the map is passed.
                Expr::Name(_) | Expr::Attribute(_)
                    if holds_map(value) && last_name(target).ends_with("device_map") =>
                {
                    self.device_maps(value);
                }
                Expr::Name(name) => {
                    let name = name.id.as_str().to_owned();
                    let module_level = self.qualname.is_empty();
                    // A class's field whose default is a device (`device: str = "cuda"` in a
                    // dataclass or a config class): the class chooses for every instance whose
                    // maker passes none.
                    if self.class_body.is_some()
                        && says_device(&name)
                        && let Some((choice, shown, span)) =
                            self.device_literal(self.field_default(value).unwrap_or(value))
                    {
                        self.chosen(choice, shown, span, self.function.in_entry);
                    }
                    // A field whose default is a GPU's index (`device_id: int = 0`): what its
                    // instances' methods read as `self.device_id`, held as a parameter's
                    // default is, for where it reaches a device.
                    if self.class_body.is_some()
                        && says_gpu_index(&name)
                        && let default = self.field_default(value).unwrap_or(value)
                        && let Some(ordinal) = integer(default)
                    {
                        let shown = self
                            .source(&(range(target).start..range(value).end))
                            .to_owned();
                        let (choice, span) = (Choice::Ordinal(ordinal), range(default));
                        self.hold(
                            &["self.", name.as_str()].concat(),
                            choice,
                            shown,
                            span,
                            false,
                            true,
                        );
                    }
                    self.bind_device_string(&name, value, module_level);
                    // `settings = Settings()`: an instance that other modules name.
                    if module_level
                        && self.class_body.is_none()
                        && !self.module.is_empty()
                        && let Expr::Call(call) = value
                        && let Some(callee) = self.resolve(&call.func)
                    {
                        self.instances.push((
                            [self.module.as_str(), ".", name.as_str()].concat(),
                            callee.into(),
                        ));
                    }
                    // `params = {"device": "cuda", ...}`: what each key holds, for
                    // `params["device"]`.
                    if let Expr::Dict(map) = value {
                        for item in map.iter() {
                            if let Some(key) = item.key.as_ref().and_then(string) {
                                let keyed = keyed_name(&name, key);
                                self.bind_device_string(&keyed, &item.value, module_level);
                            }
                        }
                    }
                    match (
                        string(value),
                        self.resolve(value).or_else(|| self.either(value)),
                    ) {
                        (Some(text), _) => {
                            self.function
                                .flow
                                .strings
                                .insert(name.clone(), text.to_owned());
                        }
                        (None, Some(path)) => {
                            self.function.flow.aliases.insert(name.clone(), path);
                        }
                        (None, None) => {
                            self.function.flow.strings.remove(&name);
                            self.function.flow.aliases.remove(&name);
                        }
                    }
                    match self.fact_of(value) {
                        Some(fact) => {
                            self.function.flow.facts.insert(name.clone(), fact);
                        }
                        None => {
                            self.function.flow.facts.remove(name.as_str());
                        }
                    }
                    match self.type_of_tensor(value) {
                        Some(tensor) => {
                            self.function.flow.tensor_types.insert(name.clone(), tensor);
                        }
                        None => {
                            self.function.flow.tensor_types.remove(name.as_str());
                        }
                    }
                    if self.reads_from_caller(value) {
                        self.function.from_caller.push(name.as_str().into());
                    }
                    self.bound_availability(&name, value);
                    self.bind_gpu_name(&name, value);
                    self.bound_fallback(name, value);
                }
                Expr::Attribute(_) => {
                    if let Some(name) = dotted(target) {
                        self.bind_device_string(&name, value, true);
                        // `self.use_cuda = torch.cuda.is_available()`: a flag, as a name's.
                        self.bound_availability(&name, value);
                        self.bound_fallback(name, value);
                    }
                }
                _ => {}
            }
        }
    }

    /// What a name bound to one of two callables may call, for placement: the one the tables
    /// know (`context = NullContext if n_gpus != 1 else torch.device`, then `with
    /// context(device):`).
    fn either(&self, value: &Expr) -> Option<CompactString> {
        let Expr::If(choice) = value else {
            return None;
        };
        [&*choice.body, &*choice.orelse]
            .into_iter()
            .find_map(|branch| {
                (self.resolve(branch))
                    .filter(|path| path == "torch.device" || self.item(path).is_some())
            })
    }

    /// The default a field declaration gives (`Field(default="cuda", description=...)`,
    /// `dataclasses.field(default="cuda")`), for a class's field.
    fn field_default<'v>(&self, value: &'v Expr) -> Option<&'v Expr> {
        let Expr::Call(call) = value else {
            return None;
        };
        let path = self.resolve(&call.func)?;
        self.api
            .names
            .fields
            .contains(path.as_str())
            .then_some(())?;
        call.arguments.find_argument_value("default", 0)
    }
}

impl Checker<'_, '_> {
    /// A value kept under a key that says device (`{"rand_device": rand_device}`,
    /// `config["computation_device"] = config["computation_device"] or device`): keyword
    /// arguments to be, so a device held by a name or chosen by a call (either side of an `or`)
    /// goes where the keyword would. A literal there is held for where the dict's item is read
    /// (`params["device"]`).
    pub(crate) fn handed_by_key(&mut self, key: &str, value: &Expr) {
        if key != "device" && !key.ends_with("_device") {
            return;
        }
        match value {
            // `config["computation_device"] or device`: either.
            Expr::BoolOp(either) => {
                for value in &either.values {
                    self.handed_by_key(key, value);
                }
            }
            Expr::Name(_) | Expr::Call(_) => {
                self.device_argument(value, |ordinal| format!("[\"{key}\"] = {ordinal}"));
            }
            _ => {}
        }
    }
}
