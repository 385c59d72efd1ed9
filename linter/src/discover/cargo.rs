//! `cargo metadata --no-deps`: the packages, targets and dependency renames of a workspace, as
//! cargo sees them. It reads manifests only: no build script, proc macro or rustc runs.
//!
//! It runs from a neutral folder, not the linted one, so that a `rust-toolchain.toml` of the
//! linted project (which may name a toolchain to install, or a `path` to a toolchain of its own,
//! which would run the project's binaries) is never read: the cargo that ran `cargo placement`
//! (`$CARGO`), or the default toolchain's, answers.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use cargo_metadata::MetadataCommand;

use super::{Package, Target, TargetKind, crate_ident};
use crate::discover::CrateContext;

/// What `cargo metadata` said of a workspace.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) root: PathBuf,
    pub(crate) packages: Vec<Package>,
}

/// Runs `cargo metadata` for the workspace of `manifest`; the error is its first line of
/// complaint, for the note that says why discovery fell back to reading manifests.
pub(crate) fn metadata(manifest: &Path) -> Result<Found, String> {
    let mut command = MetadataCommand::new();
    command
        .manifest_path(manifest)
        .no_deps()
        .current_dir(std::env::temp_dir());
    if let Some(cargo) = std::env::var_os("CARGO") {
        command.cargo_path(cargo);
    }
    let metadata = command.exec().map_err(|err| {
        let text = err.to_string();
        let reason = text
            .lines()
            .map(str::trim)
            .find(|line| line.starts_with("error:") || line.starts_with("Caused by:"))
            .or_else(|| text.lines().next())
            .unwrap_or("no reason given")
            .trim_start_matches("error: ")
            .to_owned();
        // The interesting part of `Caused by:` is on the next line.
        if reason == "Caused by:" {
            text.lines()
                .skip_while(|line| line.trim() != "Caused by:")
                .nth(1)
                .unwrap_or_default()
                .trim()
                .to_owned()
        } else {
            reason
        }
    })?;
    let members: HashSet<_> = metadata.workspace_members.iter().collect();
    let packages = metadata
        .packages
        .iter()
        .filter(|package| members.contains(&package.id))
        .map(convert)
        .collect();
    Ok(Found {
        root: metadata.workspace_root.clone().into(),
        packages,
    })
}

fn convert(package: &cargo_metadata::Package) -> Package {
    let renames: HashMap<String, String> = package
        .dependencies
        .iter()
        .filter_map(|dep| Some((crate_ident(dep.rename.as_ref()?), crate_ident(&dep.name))))
        .collect();
    let dependencies = package
        .dependencies
        .iter()
        .map(|dep| crate_ident(&dep.name))
        .collect();
    let paths = package
        .dependencies
        .iter()
        .filter_map(|dep| {
            let alias = dep.rename.as_deref().unwrap_or(&dep.name);
            Some((crate_ident(alias), dep.path.clone()?.into()))
        })
        .collect();
    let manifest_path: PathBuf = package.manifest_path.clone().into();
    let targets = package
        .targets
        .iter()
        .map(|target| {
            let cargo_kinds: Vec<String> = target.kind.iter().map(ToString::to_string).collect();
            let kind = TargetKind::from_cargo(&cargo_kinds);
            Target {
                name: target.name.clone(),
                kind,
                cargo_kinds,
                crate_types: target.crate_types.iter().map(ToString::to_string).collect(),
                src_path: target.src_path.clone().into(),
                edition: target.edition.to_string(),
            }
        })
        .collect();
    Package {
        id: package.id.repr.clone(),
        name: package.name.to_string(),
        root: manifest_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        manifest_path,
        targets,
        krate: CrateContext {
            renames,
            dependencies: Some(dependencies),
            paths,
        },
        metadata: package.metadata.clone(),
        workspace: 0,
    }
}
