//! What library calls mean for placement, as data: one TOML table per library, plus the entries
//! a user adds in configuration (same format, under `[[api.item]]` and `[[api.method]]`).

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

/// What a call, value or method means for placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Builds a device from a GPU ordinal (`ordinal` says which argument).
    ExplicitDevice,
    /// Chooses a device without saying which (a default, GPU 0, "best available").
    ImplicitDevice,
    /// Acts on whatever device or context is current for the thread.
    CurrentDeviceUser,
    /// Changes the thread's or process's current device.
    SetCurrentDevice,
    /// Changes the current device for a scope and restores it.
    ScopedGuard,
    /// Builds a value of a known type (`returns`), with no placement meaning of its own.
    Constructor,
    /// Starts a thread; its closure (`closure` says which argument) is an entry point.
    SpawnThread,
    /// Runs a closure with a scope whose `spawn` starts threads.
    ThreadScope,
    /// Sets an environment variable of this process.
    SetEnvVar,
    /// A CPU device value (`Device::Cpu`, burn's `Device::cpu()`).
    CpuDevice,
    /// Builds a tensor on the device given as argument `device`.
    TensorConstructor,
    /// Builds a tensor that is always on the CPU (tch's `Tensor::from_slice`).
    CpuTensor,
    /// Copies its receiver to the device given as argument `device` (or the current one).
    Transfer,
    /// Combines its receiver with the tensor given as first argument, on one device.
    BinaryOp,
    /// Combines the tensors listed in its first argument (`cat`, `stack`).
    Concat,
    /// Returns a tensor on its receiver's device (`relu`, `sum`, `reshape`).
    SameDevice,
}

/// One entry of a table, for a path (function, associated function, variant, constant) or for
/// methods of known receiver types.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// For `[[item]]`: the canonical path.
    #[serde(default)]
    pub path: Option<String>,
    /// For `[[method]]`: the receiver types.
    #[serde(default)]
    pub on: Vec<String>,
    /// For `[[method]]`: the method names.
    #[serde(default)]
    pub names: Vec<String>,
    pub role: Role,
    /// Which argument is the GPU ordinal (explicit device constructors).
    #[serde(default)]
    pub ordinal: Option<usize>,
    /// Which argument is a closure (thread spawns).
    #[serde(default)]
    pub closure: Option<usize>,
    /// Which argument is the device (tensor constructors, transfers).
    #[serde(default)]
    pub device: Option<usize>,
    /// What kind of GPU an explicit ordinal names, for messages (`cuda`, `metal`, `wgpu`).
    #[serde(default = "default_gpu_kind")]
    pub gpu: String,
    /// The device a constant stands for (`FLOAT_CUDA`: `cuda:0`).
    #[serde(default)]
    pub fixed_device: Option<String>,
    /// A device chooser that may quietly return the CPU (`cuda_if_available`).
    #[serde(default)]
    pub may_fall_back: bool,
    /// Also copies its receiver to the current device (the runtime's `.cuda()`).
    #[serde(default)]
    pub transfers: bool,
    /// The type of the result, after `?` or `unwrap()`, for following bindings.
    #[serde(default)]
    pub returns: Option<String>,
    /// What the call does, shown in the finding's label.
    #[serde(default)]
    pub note: Option<String>,
    /// Whether the entry comes from a built-in table (about another crate) rather than from
    /// configuration (about the crate's own wrappers).
    #[serde(skip)]
    pub builtin: bool,
}

fn default_gpu_kind() -> String {
    "cuda".to_owned()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reexport {
    from: String,
    to: String,
}

/// A table file, built in or from configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    #[serde(default)]
    reexport: Vec<Reexport>,
    #[serde(default)]
    item: Vec<Entry>,
    #[serde(default)]
    method: Vec<Entry>,
}

impl Table {
    /// Adds the entries of `other`.
    pub fn extend(&mut self, other: Table) {
        self.reexport.extend(other.reexport);
        self.item.extend(other.item);
        self.method.extend(other.method);
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

/// Every table, indexed for lookups by canonical path and by (receiver type, method name).
#[derive(Debug, Default)]
pub struct Api {
    items: HashMap<String, Entry>,
    methods: HashMap<(String, String), Entry>,
    /// `from` → `to` prefixes, longest first.
    reexports: Vec<(Vec<String>, Vec<String>)>,
    /// The first segments of the `from` prefixes.
    reexport_roots: HashSet<String>,
    /// Last segment of raw `sys` functions → canonical path, for crates that declare them.
    raw: HashMap<String, String>,
    /// The last segment of every item path and every method name: a path or method call whose
    /// last name is not here cannot be a known API, and is not resolved at all.
    names: HashSet<String>,
    /// Hashes of `names`, checked first.
    name_hashes: HashSet<u64>,
    /// The last segment of every type a table names (receivers and results), so that types
    /// of no interest (`usize`, `&str`) are never resolved.
    type_names: HashSet<String>,
    /// Every proper prefix of a known path or receiver type (`candle_core`, `candle_core::Device`),
    /// to tell whether a glob import can lead anywhere known.
    prefixes: HashSet<String>,
}

/// A hash of how a value prints, computed without allocating.
fn name_hash(name: impl std::fmt::Display) -> u64 {
    use std::hash::Hasher;
    struct Feed(std::hash::DefaultHasher);
    impl std::fmt::Write for Feed {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut feed = Feed(std::hash::DefaultHasher::new());
    let _ = std::fmt::write(&mut feed, format_args!("{name}"));
    feed.0.finish()
}

fn segments(path: &str) -> Vec<String> {
    path.split("::").map(str::to_owned).collect()
}

impl Api {
    /// The built-in tables plus `extra` (from configuration).
    pub fn new(extra: Table) -> Result<Api, String> {
        let mut api = Api::default();
        for (name, text) in BUILT_IN {
            let table: Table = toml::from_str(text)
                .map_err(|err| format!("built-in API table `{name}` is invalid: {err}"))?;
            api.add(table, name, true)?;
        }
        api.add(extra, "configuration", false)?;
        api.reexports
            .sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Ok(api)
    }

    fn add(&mut self, table: Table, source: &str, builtin: bool) -> Result<(), String> {
        for reexport in table.reexport {
            self.add_prefixes(&format!("{}::_", reexport.from));
            let from = segments(&reexport.from);
            self.reexport_roots.insert(from[0].clone());
            self.reexports.push((from, segments(&reexport.to)));
        }
        for mut entry in table.item {
            entry.builtin = builtin;
            let Some(path) = entry.path.clone() else {
                return Err(format!(
                    "an `item` entry of the {source} API table has no `path`"
                ));
            };
            if path.contains("::sys::") {
                let name = path.rsplit("::").next().unwrap_or_default().to_owned();
                self.raw.insert(name, path.clone());
            }
            self.add_prefixes(&path);
            self.add_name(path.rsplit("::").next().unwrap_or_default());
            self.add_type_name(entry.returns.as_deref());
            self.items.insert(path, entry);
        }
        for mut entry in table.method {
            entry.builtin = builtin;
            if entry.on.is_empty() || entry.names.is_empty() {
                return Err(format!(
                    "a `method` entry of the {source} API table needs `on` and `names`"
                ));
            }
            for ty in &entry.on {
                self.add_prefixes(&format!("{ty}::_"));
                self.add_type_name(Some(ty));
                for name in &entry.names {
                    self.add_name(name);
                    self.methods
                        .insert((ty.clone(), name.clone()), entry.clone());
                }
            }
        }
        Ok(())
    }

    fn add_name(&mut self, name: &str) {
        self.name_hashes.insert(name_hash(name));
        self.names.insert(name.to_owned());
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

    pub fn item(&self, path: &str) -> Option<&Entry> {
        self.items.get(path)
    }

    pub fn method(&self, receiver: &str, name: &str) -> Option<&Entry> {
        self.methods.get(&(receiver.to_owned(), name.to_owned()))
    }

    /// The canonical path of a raw CUDA function that a crate declares itself.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.raw.get(name).map(String::as_str)
    }

    /// Whether an item or method of some table has this last name.
    pub fn mentions(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// [`Api::mentions`] for an identifier, without allocating a string for it: most names in
    /// real code are no API's, and the walker asks for every path and method it meets.
    pub fn mentions_ident(&self, ident: &proc_macro2::Ident) -> bool {
        self.name_hashes.contains(&name_hash(ident)) && self.mentions(&ident.to_string())
    }

    /// Whether `path` leads somewhere a table knows: it is an entry or a prefix of one.
    pub fn knows(&self, path: &[String]) -> bool {
        let joined = path.join("::");
        self.prefixes.contains(&joined) || self.items.contains_key(&joined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_tables_load_and_canonicalise() {
        let api = Api::new(Table::default()).unwrap();
        let path = |s: &str| segments(s);
        assert_eq!(
            api.canonical(path("candle_core::cuda::cudarc::driver::safe::CudaContext")),
            path("cudarc::driver::CudaContext")
        );
        assert_eq!(
            api.canonical(path("burn_tensor::Device::default")),
            path("burn::tensor::Device::default")
        );
        assert!(api.item("tch::Device::cuda_if_available").is_some());
        assert!(
            api.method("cudarc::driver::CudaContext", "bind_to_thread")
                .is_some()
        );
        assert_eq!(
            api.raw("cudaSetDevice"),
            Some("cudarc::runtime::sys::cudaSetDevice")
        );
        let knows = |s: &str| api.knows(&path(s));
        assert!(knows("burn_core") && knows("tch") && knows("tch::Device") && !knows("serde"));
        assert!(knows("cudarc::driver::CudaContext") && knows("tch::Device::cuda_if_available"));
    }
}
