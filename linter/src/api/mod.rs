//! What library calls mean for placement, as data: one TOML table per library, plus the entries
//! a user adds in configuration (same format, under `[[api.item]]` and `[[api.method]]`).
//!
//! Tables are written flat (every field any role uses), and each entry becomes a typed
//! [`Entry`] when loaded, its [`Role`] carrying exactly what the role needs: an entry that
//! lacks it (an `explicit_device` without `ordinal`), or gives what its role does not use, is
//! an error that names the table and the entry.

mod call_names;
mod table;

use std::sync::Arc;

use memchr::memmem;
use rustc_hash::{FxHashMap, FxHashSet};

pub use call_names::CallNames;
pub use table::{RawEntry, RoleName, Table};

/// What a call, value or method means for placement, with what that role needs to be found
/// in a call (which argument is the ordinal, the device, the closure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Builds a device from a GPU ordinal, argument `ordinal`, of a kind of GPU (`cuda`,
    /// `metal`, `wgpu`) for messages.
    ExplicitDevice { ordinal: usize, gpu: String },
    /// Chooses a device without saying which (a default, GPU 0, "best available"); a constant
    /// may stand for a fixed device (`FLOAT_CUDA`: `cuda:0`).
    ImplicitDevice { fixed_device: Option<String> },
    /// Acts on whatever device or context is current for the thread.
    CurrentDeviceUser,
    /// Changes the thread's or process's current device.
    SetCurrentDevice,
    /// Changes the current device for a scope and restores it.
    ScopedGuard,
    /// Builds a value of a known type (`returns`), with no placement meaning of its own.
    Constructor,
    /// Starts a thread; its closure, argument `closure`, is an entry point.
    SpawnThread { closure: usize },
    /// Runs a closure, argument `closure`, with a scope whose `spawn` starts threads.
    ThreadScope { closure: usize },
    /// Sets an environment variable of this process.
    SetEnvVar,
    /// A CPU device value (`Device::Cpu`, burn's `Device::cpu()`).
    CpuDevice,
    /// Builds a tensor on the device given as argument `device`.
    TensorConstructor { device: usize },
    /// Builds a tensor that is always on the CPU (tch's `Tensor::from_slice`).
    CpuTensor,
    /// Copies its receiver to the device given as argument `device`.
    Transfer { device: usize },
    /// Combines its receiver with the tensor given as first argument, on one device.
    BinaryOp,
    /// Combines the tensors listed in its first argument (`cat`, `stack`).
    Concat,
    /// Returns a tensor on its receiver's device (`relu`, `sum`, `reshape`).
    SameDevice,
    /// An enum variant that holds a value of type `payload` (candle's `Device::Cuda(CudaDevice)`),
    /// so that `if let Device::Cuda(cuda) = device` knows what `cuda` is.
    Variant { payload: String },
}

impl Role {
    /// The role's name in tables.
    pub fn name(&self) -> &'static str {
        let kind = match self {
            Role::ExplicitDevice { .. } => RoleName::ExplicitDevice,
            Role::ImplicitDevice { .. } => RoleName::ImplicitDevice,
            Role::CurrentDeviceUser => RoleName::CurrentDeviceUser,
            Role::SetCurrentDevice => RoleName::SetCurrentDevice,
            Role::ScopedGuard => RoleName::ScopedGuard,
            Role::Constructor => RoleName::Constructor,
            Role::SpawnThread { .. } => RoleName::SpawnThread,
            Role::ThreadScope { .. } => RoleName::ThreadScope,
            Role::SetEnvVar => RoleName::SetEnvVar,
            Role::CpuDevice => RoleName::CpuDevice,
            Role::TensorConstructor { .. } => RoleName::TensorConstructor,
            Role::CpuTensor => RoleName::CpuTensor,
            Role::Transfer { .. } => RoleName::Transfer,
            Role::BinaryOp => RoleName::BinaryOp,
            Role::Concat => RoleName::Concat,
            Role::SameDevice => RoleName::SameDevice,
            Role::Variant { .. } => RoleName::Variant,
        };
        kind.as_str()
    }
}

/// A function of the linted workspace that chooses a device for its callers: it takes no
/// device, returns one, and chooses it itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chooser {
    /// Its full path (`my_lib::best_device`).
    pub path: String,
    /// The crate of the workspace model that defines it: only that crate and the crates that
    /// depend on it can call it.
    pub krate: crate::source::CrateId,
    /// The device type it returns (`candle_core::Device`).
    pub returns: String,
    /// The places of the parameters that take the caller's device as an `Option`
    /// (`fn get_device(device_id: Option<usize>)`): it chooses only for a call that passes
    /// `None` in each of them.
    pub unless_given: Vec<usize>,
    /// Not a chooser but an opener: a function that opens the GPU whose index its caller passes
    /// as this argument (`fn worker(config, rank: usize) { Device::new_cuda(rank) }`), so that a
    /// call with a literal there names that GPU; with the kind of GPU it opens (`cuda`,
    /// `metal`). `returns` is then empty unless it returns a device.
    pub opens: Option<(usize, String)>,
}

/// One entry of a table, typed: for a path (function, associated function, variant, constant)
/// or for methods of known receiver types.
#[derive(Clone, Debug)]
pub struct Entry {
    pub role: Role,
    /// A device chooser that may quietly return the CPU (`cuda_if_available`).
    pub may_fall_back: bool,
    /// Also copies its receiver to the current device (the runtime's `.cuda()`).
    pub transfers: bool,
    /// The type of the result, after `?` or `unwrap()`, for following bindings.
    pub returns: Option<String>,
    /// What the call does, shown in the finding's label.
    pub note: Option<String>,
    /// Whether the entry comes from a built-in table (about another crate) rather than from
    /// configuration (about the crate's own wrappers).
    pub builtin: bool,
    /// Whether the linter made the entry for a function of the linted workspace that chooses
    /// a device for its callers (see [`Api::with_choosers`]).
    pub chooser: bool,
    /// Whether the call also makes the context of the device it is given or opens current on
    /// the calling thread (cudarc's `CudaDevice::new`, `CudaBlas::new`): what the function does
    /// after it runs on that device.
    pub binds_context: bool,
    /// For a chooser's entry, [`Chooser::unless_given`]: the calls that pass a device in
    /// one of these places choose nothing.
    pub unless_given: Vec<usize>,
}

impl Entry {
    /// Whether a use of the entry can start a finding by itself: a device named or chosen, the
    /// current device used or changed, a transfer, an environment variable set. Constructors,
    /// ops and spawns only carry what other uses started (a type, a device), so code that uses
    /// nothing but them can make no finding.
    pub fn triggers(&self) -> bool {
        self.may_fall_back
            || self.transfers
            || matches!(
                self.role,
                Role::ExplicitDevice { .. }
                    | Role::ImplicitDevice { .. }
                    | Role::CurrentDeviceUser
                    | Role::SetCurrentDevice
                    | Role::SetEnvVar
                    | Role::CpuDevice
                    | Role::CpuTensor
                    | Role::Transfer { .. }
            )
    }
}

const BUILT_IN: &[(&str, &str)] = &[
    ("placement", include_str!("placement.toml")),
    ("candle", include_str!("candle.toml")),
    ("tch", include_str!("tch.toml")),
    ("burn", include_str!("burn.toml")),
    ("cudarc", include_str!("cudarc.toml")),
    ("std", include_str!("std.toml")),
];

/// The tables of Python libraries: the same format, Python's dotted names.
const BUILT_IN_PYTHON: &[(&str, &str)] = &[("torch", include_str!("torch.toml"))];

/// Every table, indexed for lookups by canonical path and by (receiver type, method name).
#[derive(Clone, Debug, Default)]
pub struct Api {
    items: FxHashMap<String, Entry>,
    /// Receiver type → method name → entry, looked up without making strings.
    methods: FxHashMap<String, FxHashMap<String, Entry>>,
    /// `from` → `to` prefixes, longest first.
    reexports: Vec<(Vec<String>, Vec<String>)>,
    /// The first segments of the `from` prefixes.
    reexport_roots: FxHashSet<String>,
    /// Last segment of raw `sys` functions → canonical path, for crates that declare them.
    raw: FxHashMap<String, String>,
    /// How item paths end: a path that cannot end like one is not resolved at all.
    items_end: PathEnds,
    /// Every method name: a method call of another name is not looked up.
    method_names: NameSet,
    /// The item and method names whose role can start a finding by itself (a device named or
    /// chosen, the current device used or changed, a transfer, an environment variable set),
    /// as opposed to roles that only carry what is known (a constructor, an op, a spawn).
    trigger_items: NameSet,
    trigger_methods: NameSet,
    /// The last segment of every type a table names (receivers and results), so that types
    /// of no interest (`usize`, `&str`) are never resolved.
    type_names: FxHashSet<String>,
    /// The types devices are (what device constructors and choosers return).
    device_types: FxHashSet<String>,
    /// Every proper prefix of a known path or receiver type (`candle_core`, `candle_core::Device`),
    /// to tell whether a glob import can lead anywhere known.
    prefixes: FxHashSet<String>,
    /// Names known by the part they play in a call.
    pub names: CallNames,
    /// A searcher for the last name of each item that starts a process or a thread (`spawn`,
    /// `Process`).
    launchers: Vec<memmem::Finder<'static>>,
}

/// The last part of a dotted name (`device` of `self.device`). Found by a plain scan: the
/// names are short, and the walkers ask about most names they meet.
pub(crate) fn last_part(dotted: &str) -> &str {
    match dotted.bytes().rposition(|byte| byte == b'.') {
        Some(dot) => &dotted[dot + 1..],
        None => dotted,
    }
}

/// A set of names that can be asked about an identifier without making a string of it: most
/// names in real code are in no such set, and the walker asks for every path and method.
#[derive(Clone, Debug, Default)]
pub struct NameSet {
    names: FxHashSet<String>,
    /// Hashes of `names`, checked first.
    hashes: FxHashSet<u64>,
}

impl NameSet {
    pub fn insert(&mut self, name: &str) {
        self.hashes.insert(name_hash(name));
        self.names.insert(name.to_owned());
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    pub fn contains_ident(&self, ident: &proc_macro2::Ident) -> bool {
        !self.names.is_empty() && self.contains_hashed(name_hash(ident), ident)
    }

    /// [`NameSet::contains_ident`] for an identifier whose [`name_hash`] is known.
    pub fn contains_hashed(&self, hash: u64, ident: &proc_macro2::Ident) -> bool {
        self.hashes.contains(&hash) && self.names.contains(&ident.to_string())
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// What the paths of the tables end with, to tell cheaply whether a path as written may name
/// something a table knows: its last name must end an item's path, and, for a longer path, the
/// name before it must come before that name in some item's path (`device::get`,
/// `CudaContext::new`), unless something else may stand there (see the semantic model).
#[derive(Clone, Debug, Default)]
struct PathEnds {
    last: NameSet,
    /// Hashes of (second-to-last, last) pairs.
    pairs: FxHashSet<u64>,
    /// Last names that any name may stand before: functions of the workspace, which other
    /// crates name by whatever their manifests call the crate.
    after_anything: NameSet,
}

fn pair_hash(before: u64, last: u64) -> u64 {
    before.rotate_left(17) ^ last
}

/// A hash of how a value prints, computed without allocating.
pub fn name_hash(name: impl std::fmt::Display) -> u64 {
    use std::hash::Hasher;
    struct Feed(rustc_hash::FxHasher);
    impl std::fmt::Write for Feed {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut feed = Feed(rustc_hash::FxHasher::default());
    let _ = std::fmt::write(&mut feed, format_args!("{name}"));
    feed.0.finish()
}

fn segments(path: &str) -> Vec<String> {
    path.split("::").map(str::to_owned).collect()
}

impl Api {
    /// The built-in tables plus `extra` (from configuration).
    pub fn new(extra: Table) -> Result<Arc<Api>, String> {
        // Read once per process: every workspace's configuration starts from them.
        static BUILT_IN_API: std::sync::LazyLock<Result<Arc<Api>, String>> =
            std::sync::LazyLock::new(|| Api::built_in(BUILT_IN, |table| table));
        Api::extended(&BUILT_IN_API, extra, "configuration")
    }

    /// The tables for Python files plus `extra` (from configuration), with dotted names stored
    /// as `::` paths (`torch::cuda::set_device`), as the Python checker resolves them.
    pub fn python(extra: Table) -> Result<Arc<Api>, String> {
        fn dotted(mut table: Table) -> Table {
            for entry in table.item.iter_mut().chain(&mut table.method) {
                entry.path = entry.path.as_ref().map(|path| path.replace('.', "::"));
                for ty in &mut entry.on {
                    *ty = ty.replace('.', "::");
                }
            }
            table
        }
        static PYTHON_API: std::sync::LazyLock<Result<Arc<Api>, String>> =
            std::sync::LazyLock::new(|| Api::built_in(BUILT_IN_PYTHON, dotted));
        Api::extended(&PYTHON_API, dotted(extra), "configuration's Python")
    }

    /// The built-in `tables`, each as `prepare` gives it.
    fn built_in(tables: &[(&str, &str)], prepare: fn(Table) -> Table) -> Result<Arc<Api>, String> {
        let mut api = Api::default();
        for (name, text) in tables {
            let table: Table = toml::from_str(text)
                .map_err(|err| format!("built-in API table `{name}` is invalid: {err}"))?;
            api.add(prepare(table), name, true)?;
        }
        api.sort_reexports();
        Ok(Arc::new(api))
    }

    /// The built-in tables plus `extra`: the built-in ones themselves, shared, when a
    /// configuration adds nothing.
    fn extended(
        built_in: &Result<Arc<Api>, String>,
        extra: Table,
        source: &str,
    ) -> Result<Arc<Api>, String> {
        let built_in = built_in.clone()?;
        if extra.is_empty() {
            return Ok(built_in);
        }
        let mut api = Api::clone(&built_in);
        api.add(extra, source, false)?;
        api.sort_reexports();
        Ok(Arc::new(api))
    }

    /// Longest `from` prefixes first, so that the most specific re-export applies.
    fn sort_reexports(&mut self) {
        self.reexports
            .sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    }

    /// Adds a table's entries, each checked against what its role needs; a bad entry is an
    /// error that names the table (`source`) and the entry.
    fn add(&mut self, table: Table, source: &str, builtin: bool) -> Result<(), String> {
        let invalid = |message: String| format!("the {source} API table: {message}");
        self.names.extend(table.names);
        for reexport in table.reexport {
            self.add_prefixes(&format!("{}::_", reexport.from));
            let from = segments(&reexport.from);
            self.reexport_roots.insert(from[0].clone());
            self.reexports.push((from, segments(&reexport.to)));
        }
        for raw in table.item {
            let Some(path) = raw.path.clone() else {
                return Err(invalid(format!(
                    "an `item` entry ({}) has no `path`",
                    raw.role.as_str()
                )));
            };
            if !raw.on.is_empty() || !raw.names.is_empty() {
                return Err(invalid(format!(
                    "the `item` entry `{path}` gives `on` or `names`, which only `method` entries use"
                )));
            }
            let entry = raw.typed(builtin).map_err(invalid)?;
            self.add_item(path, entry);
        }
        for raw in table.method {
            if raw.on.is_empty() || raw.names.is_empty() || raw.path.is_some() {
                return Err(invalid(format!(
                    "a `method` entry ({}) needs `on` and `names`, and no `path`",
                    raw.label()
                )));
            }
            let (on, names) = (raw.on.clone(), raw.names.clone());
            let entry = raw.typed(builtin).map_err(invalid)?;
            for ty in &on {
                self.add_prefixes(&format!("{ty}::_"));
                self.add_type_name(Some(ty));
                for name in &names {
                    self.method_names.insert(name);
                    if entry.triggers() {
                        self.trigger_methods.insert(name);
                    }
                    self.methods
                        .entry(ty.clone())
                        .or_default()
                        .insert(name.clone(), entry.clone());
                }
            }
        }
        Ok(())
    }

    fn add_item(&mut self, path: String, entry: Entry) {
        if path.contains("::sys::") {
            let name = path.rsplit("::").next().unwrap_or_default().to_owned();
            self.raw.insert(name, path.clone());
        }
        self.add_prefixes(&path);
        self.add_item_end(&path);
        if entry.triggers() {
            self.trigger_items
                .insert(path.rsplit("::").next().unwrap_or_default());
        }
        if let Role::SpawnThread { .. } = entry.role {
            let last = path.rsplit("::").next().unwrap_or_default();
            if !self
                .launchers
                .iter()
                .any(|known| known.needle() == last.as_bytes())
            {
                self.launchers.push(memmem::Finder::new(last).into_owned());
            }
        }
        self.add_type_name(entry.returns.as_deref());
        if let Role::Variant { payload } = &entry.role {
            self.add_type_name(Some(payload));
        }
        let device = matches!(
            entry.role,
            Role::ExplicitDevice { .. } | Role::ImplicitDevice { .. } | Role::CpuDevice
        );
        if let Some(returns) = entry.returns.as_ref().filter(|_| device) {
            self.device_types.insert(returns.clone());
        }
        self.items.insert(path, entry);
    }

    /// These tables plus an entry for each function of the workspace that chooses a device for
    /// its callers, with what it chooses (the label of findings at its calls): calling one
    /// chooses the device implicitly.
    pub fn with_choosers<'c>(
        &self,
        choosers: impl IntoIterator<Item = (&'c Chooser, &'c String)>,
    ) -> Api {
        let mut api = self.clone();
        // Facts about one function, in an order that does not depend on how they were
        // gathered: the one added last stands, so an opener of a CUDA GPU outranks an opener
        // of another kind (a function that opens `new_cuda(ordinal)` or else
        // `new_metal(ordinal)`), and a choice made for the caller outranks both.
        let mut choosers: Vec<(&Chooser, &String)> = choosers.into_iter().collect();
        choosers.sort_by_key(|(chooser, chooses)| {
            let rank = match &chooser.opens {
                Some((_, gpu)) if gpu != "cuda" => 0,
                Some(_) => 1,
                None => 2,
            };
            (
                &chooser.path,
                rank,
                chooser.opens.as_ref().map(|(at, _)| *at),
                *chooses,
            )
        });
        for (chooser, chooses) in choosers {
            let role = match &chooser.opens {
                Some((ordinal, gpu)) => Role::ExplicitDevice {
                    ordinal: *ordinal,
                    gpu: gpu.clone(),
                },
                None => Role::ImplicitDevice { fixed_device: None },
            };
            let entry = Entry {
                role,
                may_fall_back: false,
                transfers: false,
                returns: (!chooser.returns.is_empty()).then(|| chooser.returns.clone()),
                note: Some(chooses.clone()),
                builtin: false,
                chooser: chooser.opens.is_none(),
                binds_context: false,
                unless_given: chooser.unless_given.clone(),
            };
            let name = chooser.path.rsplit("::").next().unwrap_or_default();
            api.items_end.after_anything.insert(name);
            api.add_item(chooser.path.clone(), entry);
        }
        api
    }

    /// What a device picked by hand the way `cuda_if_available` picks it means (a GPU when one
    /// opens, the CPU otherwise: `Device::new_cuda(0).unwrap_or(Device::Cpu)`): an implicit
    /// choice that may fall back.
    pub fn best_available(&self) -> &'static Entry {
        static BEST_AVAILABLE: std::sync::LazyLock<Entry> =
            std::sync::LazyLock::new(best_available_entry);
        &BEST_AVAILABLE
    }

    /// The "best available" choice that a call falling back by itself makes besides the GPU
    /// it names (candle's `Device::cuda_if_available(0)`: GPU 0 when it opens, else the CPU),
    /// as [`Api::best_available`] is for the same choice written by hand; its fallback is
    /// the call's own, not a second one.
    pub fn best_available_choice() -> &'static Entry {
        static CHOICE: std::sync::LazyLock<Entry> = std::sync::LazyLock::new(|| Entry {
            may_fall_back: false,
            ..best_available_entry()
        });
        &CHOICE
    }

    /// Whether values of the type `ty` (a canonical path) are devices.
    pub fn is_device_type(&self, ty: &str) -> bool {
        self.device_types.contains(ty)
    }

    fn add_item_end(&mut self, path: &str) {
        let mut segments = path.rsplit("::");
        let last = segments.next().unwrap_or_default();
        self.items_end.last.insert(last);
        if let Some(before) = segments.next() {
            self.items_end
                .pairs
                .insert(pair_hash(name_hash(before), name_hash(last)));
        }
    }

    fn add_type_name(&mut self, ty: Option<&str>) {
        if let Some(last) = ty.and_then(|ty| ty.rsplit("::").next()) {
            self.type_names.insert(last.to_owned());
        }
    }

    /// Whether a table names a type whose last segment is `name`.
    pub fn mentions_type(&self, name: &str) -> bool {
        self.type_names.contains(name)
    }

    fn add_prefixes(&mut self, path: &str) {
        let mut end = 0;
        while let Some(at) = path[end..].find("::") {
            end += at;
            self.prefixes.insert(path[..end].to_owned());
            end += 2;
        }
    }

    /// Rewrites re-exported paths to the defining path (`candle_core::cuda::cudarc::X` →
    /// `cudarc::X`).
    pub fn canonical(&self, mut path: Vec<String>) -> Vec<String> {
        if path
            .first()
            .is_none_or(|first| !self.reexport_roots.contains(first))
        {
            return path;
        }
        for _ in 0..4 {
            let Some((from, to)) = self
                .reexports
                .iter()
                .find(|(from, _)| path.starts_with(from))
            else {
                break;
            };
            path = to
                .iter()
                .cloned()
                .chain(path[from.len()..].iter().cloned())
                .collect();
        }
        path
    }

    /// Whether paths that start with `name` are re-exports that [`Api::canonical`] rewrites
    /// (`cuda_runtime_sys::cudaSetDevice`).
    pub fn is_reexport_root(&self, name: &str) -> bool {
        self.reexport_roots.contains(name)
    }

    pub fn item(&self, path: &str) -> Option<&Entry> {
        self.items.get(path)
    }

    /// The entry of a Python-style dotted path (`torch.cuda.set_device`): most paths a file
    /// names are no table's, and are told apart by their last name before a key is built.
    pub fn dotted_item(&self, path: &str) -> Option<&Entry> {
        if !self.items_end.last.contains(last_part(path)) {
            return None;
        }
        self.items.get(&path.replace('.', "::"))
    }

    pub fn method(&self, receiver: &str, name: &str) -> Option<&Entry> {
        self.methods.get(receiver)?.get(name)
    }

    /// The canonical path of a raw CUDA function that a crate declares itself.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.raw.get(name).map(String::as_str)
    }

    /// Whether a method named `name` can start a finding (see [`Entry::triggers`]).
    pub fn triggering_method(&self, name: &str) -> bool {
        self.trigger_methods.contains(name)
    }

    /// Whether an item whose path ends with `name` can start a finding.
    pub fn triggering_item(&self, name: &str) -> bool {
        self.trigger_items.contains(name)
    }

    /// Whether `text` holds the last name of an item that starts a process or a thread.
    pub fn mentions_launcher(&self, text: &str) -> bool {
        self.launchers
            .iter()
            .any(|word| word.find(text.as_bytes()).is_some())
    }

    /// Whether some item path of a table ends with this name.
    pub fn ends_an_item(&self, name: &str) -> bool {
        self.items_end.last.contains(name)
    }

    /// Whether some method of a table has this name.
    pub fn mentions_method(&self, ident: &proc_macro2::Ident) -> bool {
        self.method_names.contains_ident(ident)
    }

    /// Whether some item path of a table ends with this name, for an identifier whose
    /// [`name_hash`] is known.
    pub fn ends_item_hashed(&self, hash: u64, ident: &proc_macro2::Ident) -> bool {
        self.items_end.last.contains_hashed(hash, ident)
    }

    /// Whether some item path of a table ends with `before::last`, by their [`name_hash`]es
    /// (`last`'s identifier given too, for names that anything may stand before).
    pub fn ends_item_with_hashed(
        &self,
        before: u64,
        last_hash: u64,
        last: &proc_macro2::Ident,
    ) -> bool {
        self.items_end.pairs.contains(&pair_hash(before, last_hash))
            || self
                .items_end
                .after_anything
                .contains_hashed(last_hash, last)
    }

    /// Whether `path` leads somewhere a table knows: it is an entry or a prefix of one.
    pub fn knows(&self, path: &[String]) -> bool {
        let joined = path.join("::");
        self.prefixes.contains(&joined) || self.items.contains_key(&joined)
    }

    /// Whether `path`, or a start of it longer than a crate's name, is something a table knows
    /// (`candle_core::Device::x` is: `candle_core::Device` is a known type).
    pub fn knows_prefix_of(&self, path: &[String]) -> bool {
        (2..=path.len()).rev().any(|len| self.knows(&path[..len]))
    }
}

#[cfg(test)]
mod tests;

/// The entry of a device picked the way `cuda_if_available` picks it.
fn best_available_entry() -> Entry {
    Entry {
        role: Role::ImplicitDevice { fixed_device: None },
        may_fall_back: true,
        transfers: false,
        returns: None,
        note: Some("a GPU when one opens, else the CPU: the best available device".to_owned()),
        builtin: true,
        chooser: false,
        binds_context: false,
        unless_given: Vec::new(),
    }
}
