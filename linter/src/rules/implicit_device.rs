use super::declare_rule;
use crate::analysis::Event;
use crate::api::Role;
use crate::diagnostic::{Finding, Requirement};
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags code outside entry points that lets something other than its caller choose the
    /// device: a default or "best available" device (tch `Device::cuda_if_available()`, also
    /// passed as a function value, `FLOAT_CUDA`-style constants, burn's `Device::default()`,
    /// `B::Device::default()`, `Default::default()` where a burn device goes (a tensor's, a
    /// device parameter of the workspace's own functions, directly or through a name bound to
    /// it, a `DispatchDevice` variant; not for a backend that has only the CPU) and
    /// `WgpuDevice::DefaultDevice`), or a call that acts on whatever device is current (the
    /// runtime's `implicit::current_device()` and `Tensor::cuda()`, cudarc calls that allocate,
    /// load or synchronize in the current context, unless the function made a context current
    /// before: `bind_to_thread`, or a call that binds the device it opens or is given,
    /// `CudaContext::new(i)`, `CudaBlas::new(device)`). A call that only reports the current
    /// context's memory (`mem_get_info`) places nothing and is not flagged.
    ///
    /// ## Why is this bad?
    /// A library that picks its own device puts every job on GPU 0, or follows whatever some
    /// other code last made current on this thread. Callers cannot place the work, and the
    /// placement changes when unrelated code runs first.
    ///
    /// ## Example
    /// ```rust,ignore
    /// pub fn load(path: &Path) -> Result<Model> {
    ///     let device = tch::Device::cuda_if_available();
    ///     Model::load(path, device)
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// pub fn load(path: &Path, device: tch::Device) -> Result<Model> {
    ///     Model::load(path, device)
    /// }
    /// // in `main`: let device = tch::Device::cuda_if_available();
    /// ```
    ///
    /// candle's `Device::cuda_if_available(0)` with a literal GPU is such a choice too (and a
    /// hard-coded GPU); given the caller's GPU (`cuda_if_available(ordinal)`), or in a function
    /// that takes the caller's device (`fn device_from_name(device: &str)`), it is the caller's.
    ///
    /// `cuda_if_available` written by hand is the same "best available" choice:
    /// `Device::new_cuda(0).unwrap_or(Device::Cpu)`, a `match` or `if let` on opening a GPU
    /// that goes on to the CPU when it fails (also keeping either in a place: `Ok(dev) =>
    /// state.device = dev`, `Err(_) => state.device = Device::Cpu`), and `if
    /// tch::Cuda::is_available() { Device::Cuda(0) } else { Device::Cpu }`. Metal's device 0,
    /// or the CPU without it, is no choice among GPUs (the Mac's one GPU).
    ///
    /// A `Default` whose value is a device defines a default (`impl Default for Dispatch {
    /// fn default() -> Self { Dispatch(WgpuDevice::default()) } }`); one that fills a device
    /// field among others (`Self { device: B::Device::default(), epochs: 10 }` of a training
    /// configuration) chooses for every user of the type, and is flagged.
    ///
    /// A function of the workspace that returns a device it chose itself to callers who pass
    /// none (`fn best_device() -> Result<Device>` around `Device::new_cuda(0)` or
    /// `cuda_if_available`, also in a tuple, `-> (Device, DType)`; one that takes a device, by
    /// its type or a parameter named for one, is its caller's choice) is such a chooser too: its
    /// calls are flagged, and so are the calls of functions that return what it chose, up to
    /// four calls deep. One that takes the caller's device as an `Option`
    /// (`fn get_device(device_id: Option<usize>)`, also of the workspace's own type named for a
    /// device, `pref: Option<DevicePreference>`) chooses for the calls that pass `None`. So does
    /// a module's static whose initializer chose a device (`static ref DEVICE: Device =
    /// Device::cuda_if_available();` in `lazy_static!`, a `Lazy<Device>`): its reads (`*DEVICE`)
    /// are flagged, except inside a macro that only shows it (`println!`, `log::info!`).
    ///
    /// ## In Python
    /// `.cuda()` without an index, `"cuda"` or `torch.device("cuda")` where a device
    /// goes (`.to(...)`, `device=`, `map_location=`, a device parameter of the project's
    /// functions by position or by name, a dict's key that says device: `{"rand_device":
    /// device}`), also as a branch of a conditional
    /// (`"cuda" if torch.cuda.is_available() else "cpu"`) or through a name, parameter default
    /// (also one that a branch replaces on one path only) or attribute bound to it;
    /// `torch.cuda.current_device()`, `torch.set_default_device(...)`,
    /// `torch.accelerator.current_accelerator()`, ColossalAI's `get_current_device()` and the
    /// legacy `torch.cuda.FloatTensor`, outside entry points:
    /// ```python
    /// class Encoder(nn.Module):
    ///     def __init__(self):
    ///         super().__init__()
    ///         self.proj = nn.Linear(64, 64).cuda()
    /// ```
    /// Use instead:
    /// ```python
    /// class Encoder(nn.Module):
    ///     def __init__(self, device):
    ///         super().__init__()
    ///         self.proj = nn.Linear(64, 64, device=device)
    /// ```
    /// `"cuda"` as a device *type* (`torch.autocast("cuda")`, `device.type == "cuda"`) is not a
    /// device and is not flagged, nor is a device only asked about
    /// (`torch.cuda.get_device_properties("cuda")`, `mem_get_info`), where nothing is placed.
    /// A method of the class that returns a device it chose (`self.pick_device()`) is followed
    /// like a function; so is `getattr(torch, device_type).current_device()`, also through a
    /// function of the project that returns the accelerator's module (`get_torch_device()
    /// .current_device()`, `def get_torch_device(): return getattr(torch, name)`), a GPU returned once
    /// an availability check found one (`return f"cuda:{local_rank}"`, `return
    /// torch.device("cuda" + suffix if torch.cuda.is_available() else "cpu")` with the index
    /// added on only when the caller gave one), a conversion that hands
    /// back the device it is given (`int_to_device(torch.cuda.current_device())`), a device a
    /// chooser writes and builds (`device = "cuda"`, then `return torch.device(device)`, flagged
    /// where it is written), a function or property named for the device it gives that returns
    /// `"cuda"` (`def device(self): return "cuda"`, flagged at its return and, for a property,
    /// where `self.device` goes, and where other modules read it from a module's instance:
    /// `settings.TORCH_DEVICE` of `settings = Settings()`), and a class field whose default is
    /// a device (`device: str = "cuda"` in a dataclass, `Field(default="cuda")` in a pydantic
    /// model). Assigning to an API's attribute (`torch.cuda.current_device = ...`, a
    /// monkeypatch) uses nothing.
    ///
    /// `cpu_tensor.type_as(x)` is a current-device use too: a tensor made on the CPU (a factory
    /// without `device=`, `torch.tensor(...)`, `torch.from_numpy(...)`, `.cpu()`) given the type
    /// of a tensor that may be on a GPU goes to the *current* GPU, since a GPU tensor's type
    /// (`torch.cuda.FloatTensor`) names no index: on every rank but 0 it is on another GPU than
    /// `x`. So does `cpu_tensor.type(x.type())`, also through a name (`dtype = x.type()`).
    /// ```python
    /// def forward(self, x):
    ///     causal = torch.ones(x.size(1), x.size(1)).type_as(x)
    /// ```
    /// Use instead `.to(x)` (dtype and device) or `torch.ones(..., device=x.device, dtype=x.dtype)`.
    ///
    /// ## Known limits
    /// Only calls the resolver can tie to a known API, or to such a function, are seen: in Rust,
    /// a method that chooses a device (its device may come from its receiver) is not followed,
    /// unless it is added to the configuration's API table; in Python, a device a library picks
    /// through data (a registry of device specs) is not resolved. Entry points (`main` and the rest of
    /// a binary's root file, tests, benches, build scripts, a program's thread closures, configured
    /// functions) may choose devices freely, and so may every file of a bin or example target:
    /// a program has no callers to take the device from. A thread that library code spawns binds
    /// and uses its own context freely, but a device it picks is the library's choice.
    pub(crate) static IMPLICIT_DEVICE = ("implicit_device", Warn, Some(check));
}

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let use_ = match event {
        Event::Api {
            use_,
            in_entry_point: false,
            in_program: false,
        } => use_,
        Event::CurrentDevice {
            shown,
            span,
            reaches,
            in_entry_point: false,
            in_program: false,
        } => {
            return Some(Finding {
                related: super::goes_to(reaches),
                ..Finding::new(
                    &IMPLICIT_DEVICE,
                    span.clone(),
                    format!("`{shown}` uses whatever device is current"),
                    "the current CUDA device: GPU 0 unless other code changed it",
                    "take the device from the caller (a `device` argument), and choose it once \
                     where the program starts",
                )
            });
        }
        Event::TypeAsCurrent {
            shown,
            span,
            other,
            made,
            in_entry_point: false,
            in_program: false,
        } => {
            return Some(Finding {
                related: vec![(made.clone(), "made on the CPU here".to_owned())],
                ..Finding::new(
                    &IMPLICIT_DEVICE,
                    span.clone(),
                    format!("`{shown}` moves a CPU tensor to the current GPU, not to `{other}`'s"),
                    "a GPU tensor's type names no index: this goes to the current device",
                    format!(
                        "use `.to({other})` (its dtype and device), or make the tensor with \
                         `device={other}.device`"
                    ),
                )
            });
        }
        _ => return None,
    };
    let (message, default_label, help) = match use_.entry.role {
        Role::ImplicitDevice { .. } => (
            if use_.entry.chooser {
                format!("`{}` chooses the device for its caller", use_.shown)
            } else {
                format!("`{}` chooses the device implicitly", use_.shown)
            },
            "a device the caller did not choose",
            language.pick(
                "take the device from the caller, and choose it once where the program starts \
                 (`main`, a test, or a thread's closure)",
                "take the device from the caller (a `device` argument), and choose it once where \
                 the program starts",
            ),
        ),
        // The function made a context current itself: the device is its own choice.
        Role::CurrentDeviceUser if use_.after_bind => return None,
        Role::CurrentDeviceUser => (
            format!("`{}` uses whatever device is current", use_.shown),
            "depends on what ran before on this thread",
            language.pick(
                "pass the device explicitly (for example `to_device(&device)`), or make the \
                 intended context current in the same function",
                "place it on the caller's device instead of the current one \
                 (`torch.zeros(..., device=device)`, `.to(device)`, `x.new_zeros(...)`)",
            ),
        ),
        _ => return None,
    };
    let label = use_
        .entry
        .note
        .clone()
        .unwrap_or_else(|| default_label.to_owned());
    let finding = Finding::new(&IMPLICIT_DEVICE, use_.span.clone(), message, label, help);
    // In a private helper: right when every caller made a context current first.
    let requires = use_
        .helper
        .clone()
        .map(|helper| Requirement::SomeCallerDoesNotBind { helper });
    Some(Finding {
        requires,
        ..finding
    })
}
