//! Tables as they are written: flat entries (every field any role uses), checked against their
//! role when they become typed [`Entry`]s, and the table files that hold them.

use serde::Deserialize;

use super::{CallNames, Entry, Role};

/// The role names a table may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleName {
    ExplicitDevice,
    ImplicitDevice,
    CurrentDeviceUser,
    SetCurrentDevice,
    ScopedGuard,
    Constructor,
    SpawnThread,
    ThreadScope,
    SetEnvVar,
    CpuDevice,
    TensorConstructor,
    CpuTensor,
    Transfer,
    BinaryOp,
    Concat,
    SameDevice,
    Variant,
}

/// An entry as written in a table: every field any role uses, checked when it becomes an
/// [`Entry`].
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEntry {
    /// For `[[item]]`: the canonical path.
    #[serde(default)]
    pub(super) path: Option<String>,
    /// For `[[method]]`: the receiver types.
    #[serde(default)]
    pub(super) on: Vec<String>,
    /// For `[[method]]`: the method names.
    #[serde(default)]
    pub(super) names: Vec<String>,
    pub(super) role: RoleName,
    /// Which argument is the GPU ordinal (explicit device constructors).
    #[serde(default)]
    pub(super) ordinal: Option<usize>,
    /// Which argument is a closure (thread spawns).
    #[serde(default)]
    pub(super) closure: Option<usize>,
    /// Which argument is the device (tensor constructors, transfers).
    #[serde(default)]
    pub(super) device: Option<usize>,
    /// What kind of GPU an explicit ordinal names, for messages (`cuda`, `metal`, `wgpu`).
    #[serde(default)]
    pub(super) gpu: Option<String>,
    /// The device a constant stands for (`FLOAT_CUDA`: `cuda:0`).
    #[serde(default)]
    pub(super) fixed_device: Option<String>,
    /// The type a variant holds.
    #[serde(default)]
    pub(super) payload: Option<String>,
    #[serde(default)]
    pub(super) may_fall_back: bool,
    #[serde(default)]
    pub(super) transfers: bool,
    #[serde(default)]
    pub(super) binds_context: bool,
    #[serde(default)]
    pub(super) returns: Option<String>,
    #[serde(default)]
    pub(super) note: Option<String>,
}

impl RawEntry {
    /// How the entry is named in messages: its path, or `Type::{a, b}` for methods.
    pub(super) fn label(&self) -> String {
        match &self.path {
            Some(path) => path.clone(),
            None => format!("{}::{{{}}}", self.on.join(" | "), self.names.join(", ")),
        }
    }

    /// The typed entry; an entry missing what its role needs, or giving what its role does not
    /// use, is an error that names the entry.
    pub(super) fn typed(self, builtin: bool) -> Result<Entry, String> {
        let label = self.label();
        let missing = |field: &str, what: &str| {
            format!(
                "`{label}` has role `{}` but no `{field}` ({what})",
                self.role.as_str()
            )
        };
        let role = match self.role {
            RoleName::ExplicitDevice => Role::ExplicitDevice {
                ordinal: self.ordinal.ok_or_else(|| {
                    missing(
                        "ordinal",
                        "the index of the argument that is the GPU ordinal",
                    )
                })?,
                gpu: self.gpu.clone().unwrap_or_else(|| "cuda".to_owned()),
            },
            RoleName::ImplicitDevice => Role::ImplicitDevice {
                fixed_device: self.fixed_device.clone(),
            },
            RoleName::CurrentDeviceUser => Role::CurrentDeviceUser,
            RoleName::SetCurrentDevice => Role::SetCurrentDevice,
            RoleName::ScopedGuard => Role::ScopedGuard,
            RoleName::Constructor => Role::Constructor,
            RoleName::SpawnThread => Role::SpawnThread {
                closure: self.closure.ok_or_else(|| {
                    missing(
                        "closure",
                        "the index of the argument that is the thread's closure",
                    )
                })?,
            },
            RoleName::ThreadScope => Role::ThreadScope {
                closure: self.closure.ok_or_else(|| {
                    missing(
                        "closure",
                        "the index of the argument that is the scope's closure",
                    )
                })?,
            },
            RoleName::SetEnvVar => Role::SetEnvVar,
            RoleName::CpuDevice => Role::CpuDevice,
            RoleName::TensorConstructor => Role::TensorConstructor {
                device: self.device.ok_or_else(|| {
                    missing("device", "the index of the argument that is the device")
                })?,
            },
            RoleName::CpuTensor => Role::CpuTensor,
            RoleName::Transfer => Role::Transfer {
                device: self.device.ok_or_else(|| {
                    missing(
                        "device",
                        "the index of the argument that is the target device",
                    )
                })?,
            },
            RoleName::BinaryOp => Role::BinaryOp,
            RoleName::Concat => Role::Concat,
            RoleName::SameDevice => Role::SameDevice,
            RoleName::Variant => Role::Variant {
                payload: self
                    .payload
                    .clone()
                    .ok_or_else(|| missing("payload", "the type the variant holds"))?,
            },
        };
        // What the role does not use is a mistake worth naming, not something to ignore.
        let given = [
            (
                "ordinal",
                self.ordinal.is_some(),
                matches!(role, Role::ExplicitDevice { .. }),
            ),
            (
                "gpu",
                self.gpu.is_some(),
                matches!(role, Role::ExplicitDevice { .. }),
            ),
            (
                "closure",
                self.closure.is_some(),
                matches!(role, Role::SpawnThread { .. } | Role::ThreadScope { .. }),
            ),
            (
                "device",
                self.device.is_some(),
                matches!(role, Role::TensorConstructor { .. } | Role::Transfer { .. }),
            ),
            (
                "fixed_device",
                self.fixed_device.is_some(),
                matches!(role, Role::ImplicitDevice { .. }),
            ),
            (
                "payload",
                self.payload.is_some(),
                matches!(role, Role::Variant { .. }),
            ),
            (
                "may_fall_back",
                self.may_fall_back,
                matches!(
                    role,
                    Role::ExplicitDevice { .. } | Role::ImplicitDevice { .. }
                ),
            ),
            ("transfers", self.transfers, role == Role::CurrentDeviceUser),
            (
                "binds_context",
                self.binds_context,
                matches!(role, Role::ExplicitDevice { .. } | Role::Constructor),
            ),
        ];
        if let Some((field, ..)) = given.iter().find(|(_, given, used)| *given && !used) {
            return Err(format!(
                "`{label}` gives `{field}`, which role `{}` does not use",
                role.name()
            ));
        }
        Ok(Entry {
            role,
            may_fall_back: self.may_fall_back,
            transfers: self.transfers,
            returns: self.returns,
            note: self.note,
            builtin,
            chooser: false,
            binds_context: self.binds_context,
            unless_given: Vec::new(),
        })
    }
}

impl RoleName {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            RoleName::ExplicitDevice => "explicit_device",
            RoleName::ImplicitDevice => "implicit_device",
            RoleName::CurrentDeviceUser => "current_device_user",
            RoleName::SetCurrentDevice => "set_current_device",
            RoleName::ScopedGuard => "scoped_guard",
            RoleName::Constructor => "constructor",
            RoleName::SpawnThread => "spawn_thread",
            RoleName::ThreadScope => "thread_scope",
            RoleName::SetEnvVar => "set_env_var",
            RoleName::CpuDevice => "cpu_device",
            RoleName::TensorConstructor => "tensor_constructor",
            RoleName::CpuTensor => "cpu_tensor",
            RoleName::Transfer => "transfer",
            RoleName::BinaryOp => "binary_op",
            RoleName::Concat => "concat",
            RoleName::SameDevice => "same_device",
            RoleName::Variant => "variant",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Reexport {
    pub(super) from: String,
    pub(super) to: String,
}

/// A table file, built in or from configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    #[serde(default)]
    pub(super) reexport: Vec<Reexport>,
    #[serde(default)]
    pub(super) item: Vec<RawEntry>,
    #[serde(default)]
    pub(super) method: Vec<RawEntry>,
    #[serde(default)]
    pub(super) names: CallNames,
}

impl Table {
    /// Whether the table adds nothing (a configuration without `[[api.*]]` entries).
    pub(super) fn is_empty(&self) -> bool {
        self.reexport.is_empty()
            && self.item.is_empty()
            && self.method.is_empty()
            && self.names == CallNames::default()
    }

    /// Adds the entries of `other`.
    pub fn extend(&mut self, other: Table) {
        self.reexport.extend(other.reexport);
        self.item.extend(other.item);
        self.method.extend(other.method);
        self.names.extend(other.names);
    }
}
