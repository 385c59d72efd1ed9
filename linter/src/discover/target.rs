//! Cargo's targets: what each is for placement (which code in it may choose devices), and how
//! it is named in cargo's JSON messages.

use std::path::PathBuf;

use serde::Serialize;

/// What a target is, for placement: which code in it may choose devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    Lib,
    ProcMacro,
    Bin,
    Example,
    Test,
    Bench,
    CustomBuild,
}

impl TargetKind {
    /// The kind of a target that cargo describes by its kinds (`["cdylib", "rlib"]`).
    pub(super) fn from_cargo(kinds: &[String]) -> TargetKind {
        let has = |name: &str| kinds.iter().any(|kind| kind == name);
        if has("custom-build") {
            TargetKind::CustomBuild
        } else if has("test") {
            TargetKind::Test
        } else if has("bench") {
            TargetKind::Bench
        } else if has("example") {
            TargetKind::Example
        } else if has("bin") {
            TargetKind::Bin
        } else if has("proc-macro") {
            TargetKind::ProcMacro
        } else {
            TargetKind::Lib
        }
    }

    fn cargo_name(self) -> &'static str {
        match self {
            TargetKind::Lib => "lib",
            TargetKind::ProcMacro => "proc-macro",
            TargetKind::Bin => "bin",
            TargetKind::Example => "example",
            TargetKind::Test => "test",
            TargetKind::Bench => "bench",
            TargetKind::CustomBuild => "custom-build",
        }
    }
}

/// A target of a package, serialized as cargo does in its JSON messages.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub name: String,
    #[serde(skip)]
    pub kind: TargetKind,
    #[serde(rename = "kind")]
    pub cargo_kinds: Vec<String>,
    pub crate_types: Vec<String>,
    pub src_path: PathBuf,
    pub edition: String,
}

impl Target {
    pub(crate) fn new(
        name: String,
        kind: TargetKind,
        src_path: PathBuf,
        edition: String,
    ) -> Target {
        let crate_type = match kind {
            TargetKind::Lib => "lib",
            TargetKind::ProcMacro => "proc-macro",
            _ => "bin",
        };
        Target {
            name,
            kind,
            cargo_kinds: vec![kind.cargo_name().to_owned()],
            crate_types: vec![crate_type.to_owned()],
            src_path,
            edition,
        }
    }
}
