//! Names a checker knows by the part they play in a call rather than as one API each: the
//! `[names]` section of a table (the `torch` table has one). Dotted paths are matched whole;
//! the others by a call's last name, as Python code names them through any import.

use rustc_hash::FxHashSet;

use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallNames {
    /// Checks that pick a device and may quietly answer "no GPU" (dotted paths).
    #[serde(default)]
    pub availability: FxHashSet<String>,
    /// Factories that make a tensor on `device=`, or on the CPU without it.
    #[serde(default)]
    pub factories: FxHashSet<String>,
    /// Functions that combine the tensors they are given.
    #[serde(default)]
    pub combining: FxHashSet<String>,
    /// Functions and tensor methods, beyond `combining`, whose tensors must share a device
    /// (`where`, `einsum`, `maximum`, the index of `index_select`): with `combining`, where a
    /// tensor made on the CPU meets one that follows a model.
    #[serde(default)]
    pub meeting: FxHashSet<String>,
    /// Tensor methods whose result is on the tensor's device: views, copies, other dtypes,
    /// masks, in-place initialisers.
    #[serde(default)]
    pub keeps_device: FxHashSet<String>,
    /// Tensor methods and attributes whose value is no tensor (a size, a number, a device).
    #[serde(default)]
    pub not_tensors: FxHashSet<String>,
    /// Libraries' `torch.nn.Module` subclasses, as `package.Class`: matched by the package and
    /// the class's name, wherever in the package it is defined.
    #[serde(default)]
    pub module_classes: FxHashSet<String>,
    /// Methods a training framework calls with a batch on the model's device (Lightning's
    /// `training_step`): their first parameter follows the model.
    #[serde(default)]
    pub batch_hooks: FxHashSet<String>,
    /// Checks that the model is being exported (`torch.jit.is_tracing`), by last name: a branch
    /// they guard is no model code.
    #[serde(default)]
    pub export_checks: FxHashSet<String>,
    /// Top-level modules of tensor functions (`torch`, `torch_scatter`): a function of theirs
    /// named in `combining` or `meeting` is an op where its tensors meet.
    #[serde(default)]
    pub tensor_libraries: FxHashSet<String>,
    /// `torch.nn` modules without weights (`Dropout`, `ReLU`, `MaxPool2d`), by class name: given a
    /// CPU tensor, one gives it back on the CPU and meets nothing of the model's.
    #[serde(default)]
    pub weightless_layers: FxHashSet<String>,
    /// Tensor methods that may move a tensor to another device: every other tensor method that
    /// gives a tensor gives it on the tensor's device.
    #[serde(default)]
    pub moving: FxHashSet<String>,
    /// Tensor methods that reduce a tensor to a 0-dim tensor when given no dimension.
    #[serde(default)]
    pub reductions: FxHashSet<String>,
    /// Calls whose value is the tensor they are given, on its device (dotted paths):
    /// `torch.nn.Parameter(t)`, `torch.autograd.Variable(t)`.
    #[serde(default)]
    pub wrapping: FxHashSet<String>,
    /// Of `wrapping`, those that a module registers when one is set as its attribute
    /// (`torch.nn.Parameter`, `torch.nn.Buffer`): the tensor then moves with the module.
    #[serde(default)]
    pub registering: FxHashSet<String>,
    /// Traits whose implementors are models (Rust paths: candle's `Module`): their methods are
    /// model code.
    #[serde(default)]
    pub model_traits: FxHashSet<String>,
    /// Tensor types (Rust paths): what a model's methods take and give.
    #[serde(default)]
    pub tensor_types: FxHashSet<String>,
    /// Calls that return a device type without an index (dotted paths): the current device
    /// where a device goes, as `"cuda"` is, and a device type elsewhere.
    #[serde(default)]
    pub current_device_values: FxHashSet<String>,
    /// Calls whose `device=` is a device type (`"cuda"`), not a device.
    #[serde(default)]
    pub device_type_apis: FxHashSet<String>,
    /// Functions that read facts of a device (its properties, its memory) and place nothing:
    /// a device passed to one is asked about, not used.
    #[serde(default)]
    pub queries: FxHashSet<String>,
    /// Wrappers that replicate a module over the GPUs in `device_ids=[...]`.
    #[serde(default)]
    pub data_parallel: FxHashSet<String>,
    /// Calls that report a value to a person: passing the chosen device to one looks at it.
    #[serde(default)]
    pub reporting: FxHashSet<String>,
    /// Calls that declare a class's field and its default (`pydantic.Field(default="cuda")`,
    /// `dataclasses.field(default=...)`), by dotted path.
    #[serde(default)]
    pub fields: FxHashSet<String>,
    /// Calls that stop the function where they are (`sys.exit`, `pytest.skip`), by dotted path
    /// (`exit` and `quit` are builtins).
    #[serde(default)]
    pub stopping: FxHashSet<String>,
    /// Modules whose functions compute (`torch`, `numpy`, `math`): a call resolved into one is
    /// no report, whatever its last name (`torch.log`, `np.format_float_positional`).
    #[serde(default)]
    pub computing: FxHashSet<String>,
    /// Calls that ask the GPU driver something (dotted paths): made while a library module is
    /// imported, they start CUDA before the program could choose its GPUs.
    #[serde(default)]
    pub driver_queries: FxHashSet<String>,
    /// The last names of `availability`'s paths (`is_available`), kept by [`CallNames::extend`]
    /// so that a call can be tried against them before its callee is resolved.
    #[serde(skip)]
    availability_ends: FxHashSet<String>,
}

impl CallNames {
    /// Adds the names of `other`.
    pub fn extend(&mut self, other: CallNames) {
        let CallNames {
            availability,
            factories,
            combining,
            meeting,
            keeps_device,
            not_tensors,
            module_classes,
            batch_hooks,
            export_checks,
            tensor_libraries,
            weightless_layers,
            moving,
            reductions,
            wrapping,
            registering,
            model_traits,
            tensor_types,
            current_device_values,
            device_type_apis,
            queries,
            data_parallel,
            reporting,
            fields,
            stopping,
            computing,
            driver_queries,
            availability_ends: _,
        } = other;
        (self.availability_ends).extend(availability.iter().map(|path| last_name(path).to_owned()));
        self.availability.extend(availability);
        self.factories.extend(factories);
        self.combining.extend(combining);
        self.meeting.extend(meeting);
        self.keeps_device.extend(keeps_device);
        self.not_tensors.extend(not_tensors);
        self.module_classes.extend(module_classes);
        self.batch_hooks.extend(batch_hooks);
        self.export_checks.extend(export_checks);
        self.tensor_libraries.extend(tensor_libraries);
        self.weightless_layers.extend(weightless_layers);
        self.moving.extend(moving);
        self.reductions.extend(reductions);
        self.wrapping.extend(wrapping);
        self.registering.extend(registering);
        self.model_traits.extend(model_traits);
        self.tensor_types.extend(tensor_types);
        self.current_device_values.extend(current_device_values);
        self.device_type_apis.extend(device_type_apis);
        self.queries.extend(queries);
        self.data_parallel.extend(data_parallel);
        self.reporting.extend(reporting);
        self.fields.extend(fields);
        self.stopping.extend(stopping);
        self.computing.extend(computing);
        self.driver_queries.extend(driver_queries);
    }

    /// Whether the dotted `path` is in a module of [`CallNames::computing`].
    pub fn computes(&self, path: &str) -> bool {
        let mut ends = path.match_indices('.').map(|(end, _)| end);
        ends.any(|end| self.computing.contains(&path[..end]))
    }

    /// Whether the dotted `path` names one of [`CallNames::module_classes`].
    pub fn is_module_class(&self, path: &str) -> bool {
        let (package, class) = (path.split('.').next(), Some(super::last_part(path)));
        (package.zip(class)).is_some_and(|(package, class)| {
            path.contains('.') && self.module_classes.contains(&format!("{package}.{class}"))
        })
    }

    /// Whether some availability check's path ends with `name`.
    pub fn ends_availability(&self, name: &str) -> bool {
        self.availability_ends.contains(name)
    }
}

/// The last name of a dotted (Python) or `::` (Rust) path.
fn last_name(path: &str) -> &str {
    path.rsplit(['.', ':']).next().unwrap_or(path)
}
