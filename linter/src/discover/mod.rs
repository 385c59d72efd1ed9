//! Discovery: which files to lint, and for each its workspace, package, target and role.
//!
//! Each given path is linted with the configuration, package roles and API entries of the
//! workspace around it, found upward as cargo finds it (so a subfolder or a single file is
//! linted as part of its workspace). Below the path, every package is linted, also those its
//! workspace does not include (`exclude = [...]`, nested workspaces, several workspaces in one
//! folder, a monorepo root with no manifest), each with its own manifest's roles, unless the
//! configuration's `exclude` names them; files that belong to no package are linted with roles
//! guessed from where they are.
//!
//! Packages and targets come from `cargo metadata --no-deps` (`cargo`), run for each
//! workspace in parallel with the walk. When it fails, the manifests are read directly
//! (`manifest`) and a note on stderr says what was degraded and why. Nothing is built or run.
//!
//! Discovery is data: it names the files, their packages and configurations, and where each
//! Python file is (`python_files`). It runs in two steps ([`start`], [`Started::finish`]) so
//! that the Rust front end can read the Rust files while `cargo metadata` answers; that front
//! end then places each Rust file in its crate (`rust::workspace`).

mod cargo;
mod manifest;
mod python_files;
mod target;
mod walk;

pub(crate) use manifest::normalize;
pub use python_files::is_package;
pub use target::{Target, TargetKind};

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use globset::GlobSet;

use crate::config;
use crate::config::{CliLevels, Config, ConfigFile};
use crate::source::CrateId;
use crate::source::FileRole;
use crate::source::Language;

use walk::Skip;

/// The names a package's code knows its dependencies by, from its manifest.
#[derive(Clone, Debug, Default)]
pub struct CrateContext {
    /// Names a dependency is known by in code → the crate's real name
    /// (`candle` → `candle_core` for `candle = { package = "candle-core" }`).
    pub renames: HashMap<String, String>,
    /// The real names of the dependencies; `None` when there is no manifest to tell.
    pub dependencies: Option<HashSet<String>>,
    /// Names of path dependencies → their folders, to find dependencies that are workspace
    /// packages.
    pub paths: HashMap<String, PathBuf>,
}

/// A package whose files are linted.
#[derive(Debug)]
pub struct Package {
    /// Cargo's package id, or a `path+file://` id for files that belong to no package.
    pub id: String,
    pub name: String,
    pub manifest_path: PathBuf,
    pub root: PathBuf,
    pub targets: Vec<Target>,
    pub krate: CrateContext,
    /// `[package.metadata]`.
    pub metadata: serde_json::Value,
    /// Index of its workspace in [`Session::workspaces`].
    pub workspace: usize,
}

/// A workspace, or a folder without one, and the configuration its files are linted with.
#[derive(Debug)]
pub struct Workspace {
    pub root: PathBuf,
    /// The root's `Cargo.toml`, when there is one.
    pub manifest: Option<PathBuf>,
    pub config: Config,
}

/// One file to lint.
#[derive(Debug, Clone)]
pub struct FileUnit {
    pub path: PathBuf,
    /// Relative to the session's root, with `/` separators.
    pub relative: String,
    /// Index into [`Session::packages`].
    pub package: usize,
    /// Index into the package's targets, when the file belongs to one.
    pub target: Option<usize>,
    pub role: FileRole,
    pub module: Vec<String>,
    pub crate_name: String,
    /// The crate of the workspace model a Rust file is linted as part of; none for a Python
    /// file, which no crate holds. The Rust front end places each Rust file in its crate
    /// (`rust::workspace`), and gives it its target, module, crate name and role.
    pub crate_id: Option<CrateId>,
    /// Whether the Rust front end found the file lintable before it was linted
    /// (`rust::parse::prescan`).
    pub prescanned: bool,
    pub language: Language,
}

impl FileUnit {
    /// Whether the file is a Jupyter notebook, linted as Python.
    pub fn is_notebook(&self) -> bool {
        python_files::is_notebook(&self.path)
    }

    /// A Rust file of `package`, before the Rust front end places it in its crate.
    pub fn unplaced_rust(path: PathBuf, relative: String, package: usize) -> FileUnit {
        FileUnit {
            path,
            relative,
            package,
            target: None,
            role: FileRole::Library,
            module: Vec::new(),
            crate_name: String::new(),
            crate_id: None,
            prescanned: false,
            language: Language::Rust,
        }
    }

    pub fn is_rust(&self) -> bool {
        self.language == Language::Rust
    }
}

/// Everything one run lints: the workspaces around and below the given paths, their packages
/// and the files to lint.
#[derive(Debug)]
pub struct Session {
    /// What file names are relative to: the workspace root when every path lies in one
    /// workspace, else the folder that holds them all.
    pub root: PathBuf,
    pub workspaces: Vec<Workspace>,
    pub packages: Vec<Package>,
    pub files: Vec<FileUnit>,
    /// What was degraded and why (`cargo metadata` failed, a folder could not be read), for
    /// stderr, once each.
    pub notes: Vec<String>,
    /// Problems of the configuration worth a warning (unknown rule names).
    pub warnings: Vec<String>,
    /// The given paths, canonical.
    pub requested: Vec<PathBuf>,
}

/// How a run is configured on the command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--config FILE`, used for every workspace in place of its own configuration.
    pub config_file: Option<PathBuf>,
    pub cli: CliLevels,
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{0} does not exist")]
    Missing(PathBuf),
    #[error(transparent)]
    Config(#[from] config::ConfigError),
}

/// The name code knows a crate by: its package name with `-` as `_`.
pub fn crate_ident(name: &str) -> String {
    name.replace('-', "_")
}

/// The nearest `Cargo.toml` at or above `dir`.
fn nearest_manifest(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|ancestor| ancestor.join("Cargo.toml"))
        .find(|manifest| manifest.is_file())
}

/// The nearest `placement.toml`, or `pyproject.toml` with a `[tool.placement]` table, at or
/// above `dir`, up to the repository's root: the configuration of files that belong to no
/// workspace (a Python project's, most often).
fn nearest_config(dir: &Path) -> Option<PathBuf> {
    NearestConfigs::default().of(dir)
}

/// [`nearest_config`] of many folders, each folder looked at once: the folders of a tree share
/// their ancestors.
#[derive(Debug, Default)]
struct NearestConfigs(HashMap<PathBuf, Option<PathBuf>>);

impl NearestConfigs {
    fn of(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(known) = self.0.get(dir) {
            return known.clone();
        }
        let candidate = dir.join("placement.toml");
        let pyproject = dir.join("pyproject.toml");
        let found = if candidate.is_file() {
            Some(candidate)
        } else if pyproject.is_file() && config::configures(&pyproject) {
            Some(pyproject)
        } else if dir.join(".git").exists() {
            None
        } else {
            dir.parent().and_then(|parent| self.of(parent))
        };
        self.0.insert(dir.to_path_buf(), found.clone());
        found
    }
}

/// A workspace being discovered: its root manifest as read here, and `cargo metadata`
/// running for it.
struct WorkspaceFound {
    root: PathBuf,
    manifest: Option<manifest::Manifest>,
    /// The folders of its members, as read from the manifests (before cargo answers).
    members: Vec<PathBuf>,
    /// The workspace-level configuration.
    config: Option<(String, ConfigFile)>,
    /// Its `exclude` globs, for the walk.
    exclude: GlobSet,
    packages: FoundPackages,
}

/// Where a workspace's packages come from.
enum FoundPackages {
    /// `cargo metadata`, running.
    Cargo(JoinHandle<Result<cargo::Found, String>>),
    /// The package's own manifest: a package below the given paths that no workspace claims,
    /// which cargo would take as a workspace of one.
    Manifest,
    /// None: a folder without a manifest.
    None,
}

impl WorkspaceFound {
    /// Whether `dir` is this workspace's root or one of its members' folders.
    fn covers(&self, dir: &Path) -> bool {
        self.root == dir || self.members.iter().any(|member| member == dir)
    }

    fn excluded(&self, path: &Path) -> bool {
        path.strip_prefix(&self.root)
            .is_ok_and(|relative| self.exclude.is_match(relative))
    }
}

struct Discovery<'o> {
    options: &'o Options,
    pending: Vec<WorkspaceFound>,
    notes: Vec<String>,
    members: manifest::Members,
}

impl Discovery<'_> {
    /// The workspace of the package or workspace whose manifest is `path`, started if new.
    /// `nested`: found below a given path rather than around it.
    fn workspace_of(&mut self, path: &Path, nested: bool) -> Result<usize, DiscoverError> {
        let read = manifest::Manifest::read(path);
        let root = match &read {
            Ok(manifest) => manifest::find_root(manifest, &mut self.members),
            Err(_) => path.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        if let Some(index) = self.pending.iter().position(|p| p.root == root) {
            return Ok(index);
        }
        let root_manifest = if root.join("Cargo.toml") == path {
            read.ok()
        } else {
            manifest::Manifest::read(&root.join("Cargo.toml")).ok()
        };
        let members = match &root_manifest {
            Some(manifest) => manifest::members_of(manifest, &mut self.members).to_vec(),
            None => Vec::new(),
        };
        let config = config::load_workspace(
            self.options.config_file.as_deref(),
            &root,
            root_manifest
                .as_ref()
                .and_then(manifest::Manifest::workspace_metadata),
        )?;
        let exclude = exclude_globs(&config)?;
        let standalone = root_manifest
            .as_ref()
            .is_some_and(|m| m.workspace().is_none() && m.package().is_some());
        let packages = if nested && standalone {
            FoundPackages::Manifest
        } else {
            let manifest_path = root.join("Cargo.toml");
            FoundPackages::Cargo(std::thread::spawn(move || cargo::metadata(&manifest_path)))
        };
        self.pending.push(WorkspaceFound {
            root,
            manifest: root_manifest,
            members,
            config,
            exclude,
            packages,
        });
        Ok(self.pending.len() - 1)
    }

    /// A folder without a workspace: its configuration is the nearest `placement.toml` or
    /// configuring `pyproject.toml`, whose folder is the root (as a Python project's root is
    /// where its `pyproject.toml` is); without one, the folder is its own root.
    fn plain(&mut self, dir: &Path) -> Result<usize, DiscoverError> {
        let found = match &self.options.config_file {
            Some(_) => None,
            None => nearest_config(dir),
        };
        let root = found
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(dir)
            .to_path_buf();
        if let Some(index) = self.pending.iter().position(|p| p.root == root) {
            return Ok(index);
        }
        let config = match (&self.options.config_file, &found) {
            (Some(file), _) | (None, Some(file)) => {
                config::load_workspace(Some(file), &root, None)?
            }
            (None, None) => None,
        };
        let exclude = exclude_globs(&config)?;
        self.pending.push(WorkspaceFound {
            root,
            manifest: None,
            members: Vec::new(),
            config,
            exclude,
            packages: FoundPackages::None,
        });
        Ok(self.pending.len() - 1)
    }
}

fn exclude_globs(config: &Option<(String, ConfigFile)>) -> Result<GlobSet, DiscoverError> {
    Ok(match config {
        Some((name, file)) => file.exclude_globs(name)?,
        None => GlobSet::empty(),
    })
}

/// Finds what to lint at `paths`: the workspaces around and below them, their packages and
/// files, each with the configuration that applies to it.
pub fn start<'o>(paths: &[PathBuf], options: &'o Options) -> Result<Started<'o>, DiscoverError> {
    let mut discovery = Discovery {
        options,
        pending: Vec::new(),
        notes: Vec::new(),
        members: manifest::Members::new(),
    };
    let mut requested = Vec::new();
    // The workspace around each path, as cargo finds it from there.
    let mut around = Vec::new();
    for path in paths {
        let path = path
            .canonicalize()
            .map_err(|_| DiscoverError::Missing(path.clone()))?;
        let dir = if path.is_file() {
            path.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            path.clone()
        };
        let index = match nearest_manifest(&dir) {
            Some(manifest) => discovery.workspace_of(&manifest, false)?,
            None => discovery.plain(&dir)?,
        };
        around.push(index);
        requested.push(path);
    }

    // Walk each path with the excludes of its workspace; a path the configuration excludes is
    // still linted when asked for by name, as ruff does.
    // The Rust walk and the Python walk (which reads ignore files) run side by side.
    let (mut seen, mut seen_python) = (walk::Seen::default(), walk::Seen::default());
    let mut files = Vec::new();
    let mut python = Vec::new();
    let mut manifests = Vec::new();
    for (path, &index) in requested.iter().zip(&around) {
        let workspace = &discovery.pending[index];
        let asked_for_excluded = workspace.excluded(path);
        let excluded = |entry: &Path| !asked_for_excluded && workspace.excluded(entry);
        let (walked, walked_python) = std::thread::scope(|scope| {
            let python = scope.spawn(|| walk::python(path, &excluded, &mut seen_python));
            let rust = walk::walk(path, &excluded, &mut seen);
            (rust, python.join())
        });
        discovery.notes.extend(walked.notes);
        files.extend(walked.files.into_iter().map(|file| (file, index)));
        manifests.extend(walked.manifests);
        // A panic while walking is a bug of ours; the Python files are then not linted, as said.
        match walked_python {
            Ok(walked) => {
                discovery.notes.extend(walked.notes);
                python.extend(walked.files.into_iter().map(|file| (file, index)));
            }
            Err(_) => discovery.notes.push(format!(
                "the walk for Python files under {} failed (a bug: please report it); they \
                 were not linted",
                path.display()
            )),
        }
    }

    // A Python project inside a Cargo workspace (a `pyproject.toml` with `[tool.placement]`,
    // or a `placement.toml`, in a folder below the workspace's root) is configured by its own
    // file, as ruff and cargo take the nearest: its files are linted as that project's.
    if options.config_file.is_none() {
        let mut nearest: HashMap<PathBuf, Option<usize>> = HashMap::new();
        let mut configs = NearestConfigs::default();
        for (file, index) in &mut python {
            let Some(dir) = file.parent() else { continue };
            let own = match nearest.get(dir) {
                Some(own) => *own,
                None => {
                    let root = &discovery.pending[*index].root;
                    let own = match configs
                        .of(dir)
                        .and_then(|config| config.parent().map(Path::to_path_buf))
                    {
                        Some(folder) if folder != *root && folder.starts_with(root) => {
                            Some(discovery.plain(&folder)?)
                        }
                        _ => None,
                    };
                    nearest.insert(dir.to_path_buf(), own);
                    own
                }
            };
            if let Some(own) = own {
                *index = own;
            }
        }
    }

    // Manifests below the paths that no known workspace covers: excluded members, nested
    // workspaces, several workspaces under one folder.
    for manifest in &manifests {
        let dir = manifest.parent().unwrap_or(Path::new(""));
        if !discovery.pending.iter().any(|p| p.covers(dir)) {
            discovery.workspace_of(manifest, true)?;
        }
    }
    Ok(Started {
        discovery,
        around,
        requested,
        files,
        python,
        manifests,
        seen: [seen, seen_python],
    })
}

/// Discovery under way: the files are found, and `cargo metadata` may still be answering.
pub struct Started<'o> {
    discovery: Discovery<'o>,
    /// The workspace around each requested path.
    around: Vec<usize>,
    requested: Vec<PathBuf>,
    /// Rust and Python files, each with the workspace it was found in.
    files: Vec<(PathBuf, usize)>,
    python: Vec<(PathBuf, usize)>,
    manifests: Vec<PathBuf>,
    /// What the Rust and the Python walks took, under which names.
    seen: [walk::Seen; 2],
}

impl std::fmt::Debug for Started<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("requested", &self.requested)
            .field("files", &self.files.len())
            .field("python", &self.python.len())
            .finish_non_exhaustive()
    }
}

impl Started<'_> {
    /// The Rust files found, each with the size limit of its workspace's configuration.
    pub fn rust_files(&self) -> impl Iterator<Item = (&Path, u64)> {
        self.files.iter().map(|(path, around)| {
            let limit = self.discovery.pending[*around]
                .config
                .as_ref()
                .map_or(config::DEFAULT_MAX_FILE_SIZE, |(_, file)| {
                    file.max_file_size()
                });
            (path.as_path(), limit.0)
        })
    }

    /// Waits for `cargo metadata`, reads the configurations, and gives each file its package.
    pub fn finish(self) -> Result<Session, DiscoverError> {
        let Started {
            mut discovery,
            around,
            requested,
            files,
            python,
            manifests,
            seen,
        } = self;
        let options = discovery.options;
        let mut session = Session {
            root: session_root(&around, &discovery.pending),
            workspaces: Vec::new(),
            packages: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
            warnings: Vec::new(),
            requested,
        };
        for pending in std::mem::take(&mut discovery.pending) {
            session.add_workspace(pending, options, &mut discovery.notes)?;
        }
        // A member that neither cargo nor the root's manifest counted (cargo failed on the
        // workspace, but the package's own manifest is fine): read on its own.
        for manifest in &manifests {
            let dir = manifest.parent().unwrap_or(Path::new(""));
            if session.packages.iter().any(|package| package.root == dir) {
                continue;
            }
            if let Ok(read) = manifest::Manifest::read(manifest)
                && let Some(mut package) = read.to_package(None)
                && let Some(index) = session.workspace_holding(dir)
            {
                package.workspace = index;
                session.packages.push(package);
            }
        }
        session.notes = discovery.notes;
        let notes: Vec<String> = (seen.iter())
            .filter_map(|seen| seen.note(|path| session.relative(path)))
            .collect();
        session.notes.extend(notes);
        session.assign(files);
        session.assign_python(python);
        Ok(session)
    }
}

/// The root that file names are relative to: the workspaces' common folder; or, for folders
/// that no Cargo workspace or configuration claims (whose root would be a guess), the current
/// folder when it holds them, so that a terminal or editor opens the names printed, as ruff
/// prints them.
fn session_root(around: &[usize], pending: &[WorkspaceFound]) -> PathBuf {
    let root = common_root(around, pending);
    let unclaimed = around
        .iter()
        .all(|&i| pending[i].manifest.is_none() && pending[i].config.is_none());
    match std::env::current_dir().and_then(|cwd| cwd.canonicalize()) {
        Ok(cwd) if unclaimed && !around.is_empty() && root.starts_with(&cwd) => cwd,
        _ => root,
    }
}

/// The common folder of the workspaces' roots.
fn common_root(around: &[usize], pending: &[WorkspaceFound]) -> PathBuf {
    let bases: Vec<&Path> = around.iter().map(|&i| pending[i].root.as_path()).collect();
    let Some(first) = bases.first() else {
        return PathBuf::from(".");
    };
    let mut root = first.to_path_buf();
    for base in &bases[1..] {
        while !base.starts_with(&root) {
            if !root.pop() {
                break;
            }
        }
    }
    root
}

impl Session {
    fn add_workspace(
        &mut self,
        mut pending: WorkspaceFound,
        options: &Options,
        notes: &mut Vec<String>,
    ) -> Result<(), DiscoverError> {
        let index = self.workspaces.len();
        let packages = match std::mem::replace(&mut pending.packages, FoundPackages::None) {
            FoundPackages::None => Vec::new(),
            FoundPackages::Manifest => from_manifests(&pending),
            FoundPackages::Cargo(handle) => {
                let found = handle
                    .join()
                    .unwrap_or_else(|_| Err("`cargo metadata` could not be run".to_owned()));
                match found {
                    Ok(found) => {
                        if found.root != pending.root {
                            notes.push(format!(
                                "cargo places the workspace of {} at {}; its configuration is \
                                 read from {}",
                                pending.root.display(),
                                found.root.display(),
                                pending.root.display()
                            ));
                        }
                        found.packages
                    }
                    Err(reason) => {
                        let packages = from_manifests(&pending);
                        notes.push(format!(
                            "`cargo metadata` failed for {}: {reason}; its {} package(s) were \
                             read from their manifests instead (targets by cargo's conventions)",
                            pending.root.join("Cargo.toml").display(),
                            packages.len()
                        ));
                        packages
                    }
                }
            }
        };
        let mut sources = Vec::new();
        for package in &packages {
            if let Some(value) = package.metadata.get("placement") {
                let name = format!(
                    "[package.metadata.placement] of {}",
                    package.manifest_path.display()
                );
                let file = ConfigFile::from_metadata(&name, value)?;
                sources.push((package.name.clone(), name, file));
            }
        }
        let mut config = Config::new(pending.config, sources, options.cli.clone())?;
        self.warnings.extend(config.warnings.iter().cloned());
        // The commands a Python project installs start programs, as configured entry points do.
        (config.entry_points).extend(config::console_scripts(&pending.root));
        for mut package in packages {
            package.workspace = index;
            self.packages.push(package);
        }
        self.workspaces.push(Workspace {
            root: pending.root,
            manifest: pending.manifest.map(|manifest| manifest.path),
            config,
        });
        Ok(())
    }

    /// The innermost workspace whose root holds `dir`.
    fn workspace_holding(&self, dir: &Path) -> Option<usize> {
        self.workspaces
            .iter()
            .enumerate()
            .filter(|(_, workspace)| dir.starts_with(&workspace.root))
            .max_by_key(|(_, workspace)| workspace.root.components().count())
            .map(|(index, _)| index)
    }

    /// Gives each Rust file its package (the innermost that holds it) and drops files that the
    /// configuration of their workspace excludes; the Rust front end places each in its crate.
    fn assign(&mut self, files: Vec<(PathBuf, usize)>) {
        let roots = self.package_roots();
        for (path, around) in files {
            if let Some(package) = self.package_of(&roots, &path, around) {
                let relative = self.relative(&path);
                self.files
                    .push(FileUnit::unplaced_rust(path, relative, package));
            }
        }
    }

    /// Each package's folder → the package.
    fn package_roots(&self) -> HashMap<PathBuf, usize> {
        self.packages
            .iter()
            .enumerate()
            .map(|(index, package)| (package.root.clone(), index))
            .collect()
    }

    /// The package a file is linted as part of: the innermost that holds it, or the files of
    /// its workspace (`around` when no workspace holds it) that belong to none; `None` when
    /// that workspace's configuration excludes it.
    fn package_of(
        &mut self,
        roots: &HashMap<PathBuf, usize>,
        path: &Path,
        around: usize,
    ) -> Option<usize> {
        // The innermost Rust package that holds the file; or, nearer, the root of the project it
        // was found in (a Python project configured inside a Cargo workspace).
        let around_root = self.workspaces[around].root.clone();
        let package = match path.ancestors().skip(1).find_map(|dir| {
            roots
                .get(dir)
                .copied()
                .map(Some)
                .or_else(|| (dir == around_root).then_some(None))
        }) {
            Some(Some(index)) => index,
            Some(None) => self.loose_package(around),
            None => {
                let workspace = self.workspace_holding(path).unwrap_or(around);
                self.loose_package(workspace)
            }
        };
        (!self.excluded(package, path)).then_some(package)
    }

    /// Whether the configuration of a package's workspace excludes `path`, unless the path
    /// asked for on the command line that holds it is itself excluded (asked for by name).
    fn excluded(&self, package: usize, path: &Path) -> bool {
        let workspace = &self.workspaces[self.packages[package].workspace];
        let is_excluded = |path: &Path| {
            path.strip_prefix(&workspace.root)
                .is_ok_and(|relative| workspace.config.excluded(relative))
        };
        let asked_by_name = self
            .requested
            .iter()
            .any(|asked| path.starts_with(asked) && is_excluded(asked));
        is_excluded(path) && !asked_by_name
    }

    /// The package of the files of a workspace that belong to none of its packages.
    fn loose_package(&mut self, workspace: usize) -> usize {
        let root = self.workspaces[workspace].root.clone();
        if let Some(index) = self
            .packages
            .iter()
            .position(|p| p.workspace == workspace && p.targets.is_empty() && p.root == root)
        {
            return index;
        }
        let name = root
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("files")
            .to_owned();
        // The manifest there is, for tools that read cargo's messages: a Cargo workspace's, a
        // Python project's `pyproject.toml`, or else the folder itself (never a file that does not
        // exist).
        let manifest_path = ["Cargo.toml", "pyproject.toml"]
            .iter()
            .map(|name| root.join(name))
            .find(|path| path.is_file())
            .unwrap_or_else(|| root.clone());
        self.packages.push(Package {
            id: format!("path+file://{}#{}", root.display(), crate_ident(&name)),
            name,
            manifest_path,
            root,
            targets: Vec::new(),
            krate: CrateContext::default(),
            metadata: serde_json::Value::Null,
            workspace,
        });
        self.packages.len() - 1
    }

    /// `path` relative to the session's root, with `/` separators.
    pub fn relative(&self, path: &Path) -> String {
        crate::source::path_name(path.strip_prefix(&self.root).unwrap_or(path))
    }

    /// The workspace root's path inside its git repository (`crates/ml/` or empty), so that
    /// formats read by GitHub name files from the repository root.
    pub fn repository_prefix(&self) -> String {
        let Some(repo) = self.repository_root() else {
            return String::new();
        };
        let inside = self.root.strip_prefix(repo).unwrap_or(Path::new(""));
        let prefix = crate::source::path_name(inside);
        if prefix.is_empty() {
            prefix
        } else {
            format!("{prefix}/")
        }
    }

    /// The root of the git repository that holds the session's root.
    pub fn repository_root(&self) -> Option<&Path> {
        self.root.ancestors().find(|dir| dir.join(".git").exists())
    }

    /// The configuration a file is linted with.
    pub fn config(&self, unit: &FileUnit) -> &Config {
        &self.workspaces[self.packages[unit.package].workspace].config
    }

    /// Explains a run that found nothing to lint: how many `.rs` files each reason skipped.
    pub fn why_empty(&self) -> String {
        let mut counts: Vec<(Skip, usize)> = Vec::new();
        for path in &self.requested {
            let workspace = self.workspace_holding(path).map(|i| &self.workspaces[i]);
            let excluded = |entry: &Path| {
                workspace.is_some_and(|w| {
                    entry
                        .strip_prefix(&w.root)
                        .is_ok_and(|relative| w.config.excluded(relative))
                })
            };
            for (reason, count) in walk::skipped(path, &excluded) {
                match counts.iter_mut().find(|(r, _)| *r == reason) {
                    Some((_, total)) => *total += count,
                    None => counts.push((reason, count)),
                }
            }
        }
        let paths: Vec<String> = self
            .requested
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        if counts.is_empty() {
            return format!("no Python or Rust files found in {}", paths.join(", "));
        }
        let reasons: Vec<String> = counts
            .iter()
            .map(|(reason, count)| {
                let why = match reason {
                    Skip::Hidden => "in hidden folders",
                    Skip::BuildOutput => "in cargo's `target` folders",
                    Skip::Excluded => "matching `exclude` in the configuration",
                };
                format!("{count} {why}")
            })
            .collect();
        format!(
            "no Rust files were linted in {}: its .rs files were skipped ({}); give such a \
             folder as the path to lint it, or change `exclude`",
            paths.join(", "),
            reasons.join(", ")
        )
    }
}

/// The packages of a workspace as its manifests describe them, when cargo could not say.
fn from_manifests(pending: &WorkspaceFound) -> Vec<Package> {
    let root = pending.manifest.as_ref();
    let mut dirs = pending.members.clone();
    if dirs.is_empty() && root.is_some_and(|r| r.package().is_some()) {
        dirs.push(pending.root.clone());
    }
    dirs.iter()
        .filter_map(|dir| {
            let manifest = manifest::Manifest::read(&dir.join("Cargo.toml")).ok()?;
            manifest.to_package(root)
        })
        .collect()
}
