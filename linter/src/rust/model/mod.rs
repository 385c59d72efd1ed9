//! The semantic model of the workspace: every crate (each target of each package, and each
//! file that belongs to none), its module tree as rustc builds it from `mod` declarations
//! (`#[path]` and symbolic links included), the items and `use` declarations of each module,
//! and the crates each crate can name. It is built from the files' [`summary`] before any file
//! is linted, so that a path is resolved to where it is defined wherever it was re-exported:
//! through `pub use` chains, globs, `self`/`super`/`crate` paths, type aliases and other
//! workspace crates that depend on each other by path.

mod lex;
pub mod summary;

use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::api::{Api, NameSet};
use crate::discover::CrateContext;
use crate::discover::{Package, TargetKind};
use crate::source::CrateId;
use summary::{ItemKind, ModuleSummary, Tokens, Use, Visibility};

/// A module path inside its crate, without the crate's name.
pub type ModulePath = Vec<String>;

/// A crate that another crate's code can name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extern {
    /// A crate outside the workspace, by its real name (`candle_core` for `candle`).
    Outside(String),
    /// The library of a workspace package.
    Workspace(CrateId),
}

/// A module's names.
#[derive(Debug, Default)]
pub struct Module {
    /// Items by name (a name may be in both namespaces: `mod x` and `fn x`). The workspace's
    /// names are most of the model's memory (bindings generated for C libraries declare tens
    /// of thousands), so a name and its one item are kept without an allocation of their own.
    items: FxHashMap<CompactString, SmallVec<[(ItemKind, Visibility); 1]>>,
    /// `use` imports by the name they bring in.
    imports: FxHashMap<CompactString, (Vec<String>, Visibility)>,
    globs: Vec<(Vec<String>, Visibility)>,
    /// Inside `#[cfg(test)]`.
    pub cfg_test: bool,
}

impl Module {
    /// Adds the names of `twin`, a module of the same path; a name both import keeps this
    /// module's meaning.
    fn merge(&mut self, twin: Module) {
        for (name, items) in twin.items {
            self.items.entry(name).or_default().extend(items);
        }
        for (name, import) in twin.imports {
            self.imports.entry(name).or_insert(import);
        }
        self.globs.extend(twin.globs);
        self.cfg_test &= twin.cfg_test;
    }
}

/// A crate of the workspace: a target, or a file that no target's module tree reaches.
#[derive(Debug)]
pub struct Crate {
    /// The name its own paths start with (`crate_name::...`).
    pub name: String,
    pub package: usize,
    /// The target's kind; `None` for a file outside every target.
    pub kind: Option<TargetKind>,
    /// The target's index in its package's targets.
    pub target: Option<usize>,
    pub root: PathBuf,
    pub modules: FxHashMap<ModulePath, Module>,
    externs: FxHashMap<String, Extern>,
}

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Def {
    /// Something in a crate outside the workspace, by its path (crate name first).
    Outside(Vec<String>),
    /// A module of a workspace crate.
    Module(CrateId, ModulePath),
    /// An item of a workspace crate (or something inside it: a variant, an associated item):
    /// its full path, crate name first.
    Item(CrateId, Vec<String>, ItemKind),
}

/// The result of resolving a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A path; `local` when it is defined in the crate being resolved from. Paths outside the
    /// workspace are canonical for the API tables (`candle_core::cuda::cudarc::X` →
    /// `cudarc::X`).
    Path {
        path: Vec<String>,
        local: bool,
    },
    Unknown,
}

/// Crates every Rust file can name without declaring them.
const ALWAYS_AVAILABLE: &[&str] = &["std", "core", "alloc"];

/// Names the prelude brings into every module, by what they resolve to.
const PRELUDE: &[(&str, &str)] = &[
    ("Default", "std::default::Default"),
    ("Box", "std::boxed::Box"),
    ("Vec", "std::vec::Vec"),
    ("String", "std::string::String"),
    ("Option", "std::option::Option"),
    ("Result", "std::result::Result"),
    ("Some", "std::option::Option::Some"),
    ("None", "std::option::Option::None"),
    ("Ok", "std::result::Result::Ok"),
    ("Err", "std::result::Result::Err"),
];

/// How many steps of imports, re-exports and aliases resolution follows before giving up
/// (a cycle in broken code, or absurd chains).
const MAX_STEPS: usize = 24;

/// The whole workspace's names.
#[derive(Debug, Default)]
pub struct Model {
    pub crates: Vec<Crate>,
    /// The modules each file is, in every crate that includes it.
    files: HashMap<PathBuf, Vec<(CrateId, ModulePath)>>,
    /// Names that renamed imports and type aliases give to something else: `use_gpu` in
    /// `use cudarc::runtime::result::device::set as use_gpu`. A walker that skips names no table
    /// mentions must not skip these.
    pub aliases: NameSet,
    /// The names of the workspace's modules, which may stand before anything they re-export.
    pub modules: NameSet,
    /// The workspace's fields and methods whose types name a type of the API tables, by the
    /// name of the type they belong to and their own ([`summary::Member`]).
    members: FxHashMap<CompactString, FxHashMap<CompactString, Vec<MemberOf>>>,
    /// The names of the types that have such members: a type worth resolving where it is held.
    pub member_owners: NameSet,
    /// The places of the device parameters of the workspace's functions, by the functions'
    /// names ([`summary::ModuleSummary::device_params`]).
    device_params: FxHashMap<CompactString, Vec<(CrateId, ModulePath, Vec<usize>)>>,
    /// The names of those functions: a call worth resolving to see what it is handed.
    pub takes_device: NameSet,
}

/// The type of a member of a type, and the module whose names it is written with.
#[derive(Debug)]
struct MemberOf {
    krate: CrateId,
    module: ModulePath,
    ty: String,
}

/// The type names whose members summaries keep ([`ModuleSummary::members`]): those the
/// built-in API tables name. A configuration's own tables type what a file's own structs and
/// impls say, not members defined in other files.
pub fn member_types() -> impl Fn(&str) -> bool {
    let api = Api::new(crate::api::Table::default()).ok();
    move |name| api.as_ref().is_some_and(|api| api.mentions_type(name))
}

/// Reads the summary of a file from disk (for files the walk did not take: a crate root above
/// a linted subfolder, an excluded module file).
fn read_summary(path: &Path) -> Option<ModuleSummary> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(summary::summarize(&Tokens::new(&text), &member_types()))
}

/// Builds the model, crate by crate.
#[derive(Debug)]
pub struct Builder<'a> {
    model: Model,
    /// Summaries already made (by the walk's pre-check), by path.
    summaries: &'a HashMap<PathBuf, Rc<ModuleSummary>>,
    /// Summaries read here.
    read: HashMap<PathBuf, Option<Rc<ModuleSummary>>>,
}

impl<'a> Builder<'a> {
    pub fn new(summaries: &'a HashMap<PathBuf, Rc<ModuleSummary>>) -> Builder<'a> {
        Builder {
            model: Model::default(),
            summaries,
            read: HashMap::new(),
        }
    }

    fn summary(&mut self, path: &Path) -> Option<Rc<ModuleSummary>> {
        if let Some(summary) = self.summaries.get(path) {
            return Some(Rc::clone(summary));
        }
        self.read
            .entry(path.to_path_buf())
            .or_insert_with(|| read_summary(path).map(Rc::new))
            .clone()
    }

    /// Adds every target of `packages` as a crate, with the crates each can name.
    pub fn add_packages(&mut self, packages: &[Package]) {
        // First every crate, so that dependencies between them can be found.
        let mut libraries: HashMap<PathBuf, CrateId> = HashMap::new();
        let mut first_of_package = Vec::new();
        for (index, package) in packages.iter().enumerate() {
            first_of_package.push(self.model.crates.len());
            for (position, target) in package.targets.iter().enumerate() {
                let id = self.add_crate(
                    target.name.replace('-', "_"),
                    index,
                    Some(target.kind),
                    Some(position),
                    &target.src_path,
                );
                if matches!(target.kind, TargetKind::Lib | TargetKind::ProcMacro) {
                    libraries.insert(package.root.clone(), id);
                }
            }
        }
        for (index, package) in packages.iter().enumerate() {
            let own_library = libraries.get(&package.root).copied();
            let end = first_of_package
                .get(index + 1)
                .copied()
                .unwrap_or(self.model.crates.len());
            for id in first_of_package[index]..end {
                self.set_dependencies(id, &package.krate);
                let krate = &mut self.model.crates[id];
                for (alias, dir) in &package.krate.paths {
                    if let Some(&library) = libraries.get(dir) {
                        krate
                            .externs
                            .insert(alias.clone(), Extern::Workspace(library));
                    }
                }
                // Every other target of a package can name its library.
                if let Some(library) = own_library
                    && library != id
                {
                    let name = self.model.crates[library].name.clone();
                    self.model.crates[id]
                        .externs
                        .insert(name, Extern::Workspace(library));
                }
            }
        }
    }

    /// The crates a crate's manifest says it can name.
    pub fn set_dependencies(&mut self, id: CrateId, context: &CrateContext) {
        let krate = &mut self.model.crates[id];
        for real in context.dependencies.iter().flatten() {
            krate
                .externs
                .insert(real.clone(), Extern::Outside(real.clone()));
        }
        for (alias, real) in &context.renames {
            krate
                .externs
                .insert(alias.clone(), Extern::Outside(real.clone()));
        }
    }

    /// Adds a crate rooted at `root` (a file no target reaches is a crate of its own).
    pub fn add_crate(
        &mut self,
        name: String,
        package: usize,
        kind: Option<TargetKind>,
        target: Option<usize>,
        root: &Path,
    ) -> CrateId {
        let id = self.model.crates.len();
        self.model.crates.push(Crate {
            name,
            package,
            kind,
            target,
            root: root.to_path_buf(),
            modules: FxHashMap::default(),
            externs: FxHashMap::default(),
        });
        if let Some(summary) = self.summary(root) {
            let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
            let mut files = vec![root.to_path_buf()];
            self.add_module(id, Vec::new(), &summary, root, &dir, false, &mut files);
        }
        id
    }

    /// Adds a module and, through its `mod` declarations, its descendants. `dir` is where its
    /// `mod x;` files are; `stack` the files being added, against a file including itself.
    #[allow(clippy::too_many_arguments)]
    fn add_module(
        &mut self,
        krate: CrateId,
        path: ModulePath,
        summary: &ModuleSummary,
        file: &Path,
        dir: &Path,
        cfg_test: bool,
        stack: &mut Vec<PathBuf>,
    ) {
        let mut module = Module {
            cfg_test,
            ..Module::default()
        };
        for item in &summary.items {
            module
                .items
                .entry(CompactString::from(&item.name))
                .or_default()
                .push((item.kind.clone(), item.visibility));
            if matches!(item.kind, ItemKind::Alias(Some(_))) {
                self.model.aliases.insert(&item.name);
            }
        }
        for declared in &summary.uses {
            match declared {
                Use::Named {
                    path: target,
                    alias,
                    visibility,
                } => {
                    if target.last() != Some(alias) {
                        self.model.aliases.insert(alias);
                    }
                    module
                        .imports
                        .insert(CompactString::from(alias), (target.clone(), *visibility));
                }
                Use::Glob {
                    path: target,
                    visibility,
                } => module.globs.push((target.clone(), *visibility)),
            }
        }
        for (krate_name, alias) in &summary.extern_crates {
            let target = vec![krate_name.clone()];
            if path.is_empty() {
                // At the root, `extern crate a as b;` adds `b` to every module's names.
                let known = self.model.crates[krate]
                    .externs
                    .get(krate_name)
                    .cloned()
                    .unwrap_or_else(|| Extern::Outside(krate_name.clone()));
                self.model.crates[krate]
                    .externs
                    .insert(alias.clone(), known);
            }
            module
                .imports
                .insert(CompactString::from(alias), (target, Visibility::Private));
        }
        for member in &summary.members {
            self.model.member_owners.insert(&member.owner);
            self.model
                .members
                .entry(CompactString::from(&member.owner))
                .or_default()
                .entry(CompactString::from(&member.name))
                .or_default()
                .push(MemberOf {
                    krate,
                    module: path.clone(),
                    ty: member.ty.clone(),
                });
        }
        for (function, places) in &summary.device_params {
            self.model.takes_device.insert(function);
            self.model
                .device_params
                .entry(CompactString::from(function))
                .or_default()
                .push((krate, path.clone(), places.clone()));
        }
        self.model
            .files
            .entry(file.to_path_buf())
            .or_default()
            .push((krate, path.clone()));
        for declared in &summary.mods {
            self.model.modules.insert(&declared.name);
            let mut child = path.clone();
            child.push(declared.name.clone());
            let cfg_test = cfg_test || declared.cfg_test;
            match &declared.inline {
                Some(inline) => {
                    let child_dir = dir.join(&declared.name);
                    self.add_module(krate, child, inline, file, &child_dir, cfg_test, stack);
                }
                None => {
                    let Some(child_file) = module_file(file, dir, declared) else {
                        self.model.crates[krate]
                            .modules
                            .insert(child, Module::default());
                        continue;
                    };
                    if stack.contains(&child_file) {
                        continue;
                    }
                    let Some(child_summary) = self.summary(&child_file) else {
                        continue;
                    };
                    let child_dir = children_dir(&child_file);
                    stack.push(child_file.clone());
                    self.add_module(
                        krate,
                        child,
                        &child_summary,
                        &child_file,
                        &child_dir,
                        cfg_test,
                        stack,
                    );
                    stack.pop();
                }
            }
        }
        // Twins of one name under opposite `cfg`s (`#[cfg(feature = "cuda")] mod imp` and
        // `#[cfg(not(feature = "cuda"))] mod imp`) are one module of both their names: each is
        // linted, with what it imports.
        match self.model.crates[krate].modules.entry(path) {
            Entry::Occupied(mut twin) => twin.get_mut().merge(module),
            Entry::Vacant(vacant) => {
                vacant.insert(module);
            }
        }
    }

    /// Whether a file is a module of some crate.
    pub fn includes(&self, file: &Path) -> bool {
        self.model.files.contains_key(file)
    }

    pub fn finish(self) -> Model {
        self.model
    }
}

impl Model {
    /// A model of one text as a crate of its own (crate 0), for linting a text alone: tests,
    /// fixtures, the fuzzer.
    pub fn single_file(text: &str, crate_name: &str, context: &CrateContext) -> Model {
        let summaries = HashMap::from([(
            PathBuf::new(),
            Rc::new(summary::summarize(&Tokens::new(text), &member_types())),
        )]);
        let mut builder = Builder::new(&summaries);
        let id = builder.add_crate(crate_name.to_owned(), 0, None, None, Path::new(""));
        builder.set_dependencies(id, context);
        builder.finish()
    }
}

/// The file of `mod name;` declared in `file`, whose `mod` files are in `dir`: `#[path]`
/// (relative to the declaring file's folder), `dir/name.rs` or `dir/name/mod.rs`. A text
/// linted alone (no file) has none.
fn module_file(file: &Path, dir: &Path, declared: &summary::ModDecl) -> Option<PathBuf> {
    if file.as_os_str().is_empty() {
        return None;
    }
    if let Some(path) = &declared.path_attr {
        let base = file.parent().unwrap_or(dir);
        let candidate = crate::discover::normalize(&base.join(path));
        return candidate.is_file().then_some(candidate);
    }
    [
        dir.join(format!("{}.rs", declared.name)),
        dir.join(&declared.name).join("mod.rs"),
    ]
    .into_iter()
    .find(|candidate| candidate.is_file())
}

/// Where the `mod x;` files of a module file are: beside `mod.rs`, in `name/` for `name.rs`.
fn children_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new(""));
    match file.file_stem().and_then(|stem| stem.to_str()) {
        Some("mod") | None => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
    }
}

/// A name looked up in a module: where, what, in the type namespace only, from inside.
type LookupKey = (*const Module, String, bool, bool);

impl Model {
    /// Whether code of crate `from` can name items of crate `to`: it is that crate, or depends
    /// on it.
    pub fn can_name(&self, from: CrateId, to: CrateId) -> bool {
        from == to
            || self.crates.get(from).is_some_and(|krate| {
                krate
                    .externs
                    .values()
                    .any(|named| *named == Extern::Workspace(to))
            })
    }

    /// The type written for the member `name` of the workspace's type `owner` (its full path,
    /// crate name first), with the crate and module it is written in.
    pub fn member(&self, owner: &str, name: &str) -> Option<(&str, CrateId, &[String])> {
        let (module, last) = owner.rsplit_once("::")?;
        let member = (self.members.get(last)?.get(name)?.iter())
            .find(|member| self.names_module(module, member.krate, &member.module))?;
        Some((member.ty.as_str(), member.krate, member.module.as_slice()))
    }

    /// The places of the device parameters of the workspace's function `path` (its full path,
    /// crate name first); none for a function that takes no device or is no workspace's.
    pub fn device_params(&self, path: &str) -> &[usize] {
        let Some((module, name)) = path.rsplit_once("::") else {
            return &[];
        };
        (self.device_params.get(name).into_iter().flatten())
            .find(|(krate, at, _)| self.names_module(module, *krate, at))
            .map_or(&[], |(_, _, places)| places.as_slice())
    }

    /// Whether the full path `module` (crate name first) names the module `at` of `krate`.
    fn names_module(&self, module: &str, krate: CrateId, at: &[String]) -> bool {
        let Some(inside) = module.strip_prefix(self.crates[krate].name.as_str()) else {
            return false;
        };
        match inside.strip_prefix("::") {
            Some(rest) => rest.split("::").eq(at.iter().map(String::as_str)),
            None => inside.is_empty() && at.is_empty(),
        }
    }

    /// The crates and module paths that include `file`.
    pub fn modules_of(&self, file: &Path) -> &[(CrateId, ModulePath)] {
        self.files.get(file).map_or(&[], Vec::as_slice)
    }

    /// Resolves a path as written in module `module` of crate `krate`. Names that block scopes
    /// define are the caller's business: this starts at the module.
    pub fn resolve(
        &self,
        api: &Api,
        krate: CrateId,
        module: &[String],
        segments: &[String],
    ) -> Resolved {
        let resolver = Resolver {
            model: self,
            api,
            krate,
            looked_up: RefCell::default(),
        };
        match resolver.resolve_from(krate, module, segments, 0) {
            Some(Def::Outside(path)) => Resolved::Path {
                path: api.canonical(path),
                local: false,
            },
            Some(Def::Item(owner, path, _)) => Resolved::Path {
                path,
                local: owner == krate,
            },
            Some(Def::Module(owner, path)) => {
                let mut full = vec![self.crates[owner].name.clone()];
                full.extend(path);
                Resolved::Path {
                    path: full,
                    local: owner == krate,
                }
            }
            None => Resolved::Unknown,
        }
    }

    /// An item's full path: the crate's name, then its module path and name.
    fn full(&self, krate: CrateId, path: ModulePath) -> Vec<String> {
        let mut full = vec![self.crates[krate].name.clone()];
        full.extend(path);
        full
    }
}

/// One resolution: the model, the tables, the crate whose code asks, and the names looked up so
/// far. Resolution follows imports from wherever they are, but `local` is said of the crate the
/// path was written in.
struct Resolver<'m> {
    model: &'m Model,
    api: &'m Api,
    krate: CrateId,
    /// The names looked up so far, by module: a name met again is a cycle of globs or imports,
    /// or another way to the same module through globs (preludes re-exporting each other), where
    /// it was not found the first time. Each is looked up once: chains of globs that fan out
    /// and meet again cost their size, not the number of ways through them.
    looked_up: RefCell<FxHashSet<LookupKey>>,
}

/// A name looked up in a module of a crate: in the type namespace only (`wants_type`), and
/// whether the module's own code is asking (`inside`: private names count; otherwise, from
/// another crate, only public ones).
#[derive(Clone, Copy)]
struct Lookup<'q> {
    krate: CrateId,
    path: &'q [String],
    name: &'q str,
    wants_type: bool,
    inside: bool,
}

impl Resolver<'_> {
    fn resolve_from(
        &self,
        krate: CrateId,
        module: &[String],
        segments: &[String],
        steps: usize,
    ) -> Option<Def> {
        let (first, rest) = segments.split_first()?;
        if steps > MAX_STEPS {
            return None;
        }
        let mut rest = rest;
        let mut def = match first.as_str() {
            "crate" | "$crate" => Def::Module(krate, Vec::new()),
            "self" => Def::Module(krate, module.to_vec()),
            "super" => {
                let supers = segments.iter().take_while(|s| *s == "super").count();
                rest = &segments[supers..];
                let keep = module.len().saturating_sub(supers);
                Def::Module(krate, module[..keep].to_vec())
            }
            name => {
                let wants_type = !rest.is_empty();
                match self.lookup(
                    &Lookup {
                        krate,
                        path: module,
                        name,
                        wants_type,
                        inside: true,
                    },
                    steps + 1,
                ) {
                    Some(def) => def,
                    None => {
                        let (def, public) = self.outer(krate, name)?;
                        // A workspace crate named from outside: its public path, when a table
                        // describes it, is what the tables know it by.
                        if let Some(public) = public {
                            let mut path = vec![public];
                            path.extend(rest.iter().cloned());
                            let canonical = self.api.canonical(path);
                            if self.api.knows_prefix_of(&canonical) {
                                return Some(Def::Outside(canonical));
                            }
                        }
                        def
                    }
                }
            }
        };
        for (index, segment) in rest.iter().enumerate() {
            let wants_type = index + 1 < rest.len();
            def = match def {
                Def::Outside(mut path) => {
                    path.push(segment.clone());
                    Def::Outside(path)
                }
                Def::Module(owner, path) => self.lookup(
                    &Lookup {
                        krate: owner,
                        path: &path,
                        name: segment,
                        wants_type,
                        inside: false,
                    },
                    steps + 1,
                )?,
                Def::Item(owner, path, ItemKind::Alias(Some(target))) => {
                    // `type Ctx = cudarc::driver::CudaContext;` then `Ctx::new`.
                    let home = &path[1..path.len() - 1];
                    let mut through = target.clone();
                    through.push(segment.clone());
                    self.resolve_from(owner, home, &through, steps + 1)?
                }
                Def::Item(owner, mut path, kind) if kind.is_type_namespace() => {
                    path.push(segment.clone());
                    Def::Item(owner, path, ItemKind::Type)
                }
                Def::Item(..) => return None,
            };
        }
        // A type alias stands for its target.
        if let Def::Item(owner, path, ItemKind::Alias(Some(target))) = &def {
            let home = &path[1..path.len() - 1];
            return self.resolve_from(*owner, home, target, steps + 1);
        }
        Some(def)
    }

    /// A name outside the crate's modules: a crate it can name, or the prelude. The second
    /// value is the crate's real name when it is a workspace crate.
    fn outer(&self, krate: CrateId, name: &str) -> Option<(Def, Option<String>)> {
        let this = self.model.crates.get(krate)?;
        match this.externs.get(name) {
            Some(Extern::Outside(real)) => return Some((Def::Outside(vec![real.clone()]), None)),
            Some(Extern::Workspace(id)) => {
                let real = self.model.crates[*id].name.clone();
                return Some((Def::Module(*id, Vec::new()), Some(real)));
            }
            None => {}
        }
        if name == this.name {
            return Some((Def::Module(krate, Vec::new()), None));
        }
        // A crate a table describes is taken as named even when the manifest does not list it
        // (a dependency of a dependency, renamed through `extern crate`, or no manifest).
        if ALWAYS_AVAILABLE.contains(&name) || self.api.knows(&[name.to_owned()]) {
            return Some((Def::Outside(vec![name.to_owned()]), None));
        }
        let (_, path) = PRELUDE.iter().find(|(prelude, _)| *prelude == name)?;
        Some((
            Def::Outside(path.split("::").map(str::to_owned).collect()),
            None,
        ))
    }

    /// `name` in module `path` of `krate`: its items, then its named imports, then its globs.
    /// `inside`: the module's own code is asking (private names count; otherwise, from another
    /// crate, only public ones).
    fn lookup(&self, query: &Lookup<'_>, steps: usize) -> Option<Def> {
        if steps > MAX_STEPS {
            return None;
        }
        let this = self.model.crates.get(query.krate)?;
        let module = this.modules.get(query.path)?;
        let key = (
            module as *const Module,
            query.name.to_owned(),
            query.wants_type,
            query.inside,
        );
        if !self.looked_up.borrow_mut().insert(key) {
            return None;
        }
        self.lookup_in(query, module, steps)
    }

    fn lookup_in(&self, query: &Lookup<'_>, module: &Module, steps: usize) -> Option<Def> {
        let Lookup {
            krate, path, name, ..
        } = *query;
        let visible = |visibility: Visibility| {
            query.inside || krate == self.krate || visibility == Visibility::Public
        };
        let item = || self.local_item(query, module, &visible);
        let import = || {
            let (target, visibility) = module.imports.get(name)?;
            if !visible(*visibility) {
                return None;
            }
            // `use foo::foo;` names the crate `foo`, not itself.
            if target.first().is_some_and(|first| first == name) && target.len() > 1 {
                let (def, _) = self.outer(krate, name)?;
                return self.extend(def, &target[1..], steps);
            }
            if target.len() == 1 && target[0] == name {
                return self.outer(krate, name).map(|(def, _)| def);
            }
            self.resolve_from(krate, path, target, steps + 1)
        };
        // A name both defined and imported is one of alternatives under `#[cfg]`
        // (`#[cfg(feature = "nccl")] pub use cudarc::nccl::Comm;` beside a stand-in
        // `#[cfg(not(..))] pub struct Comm;`): the library's, when a table knows it, is the one
        // whose uses matter.
        if module.items.contains_key(name) && module.imports.contains_key(name) {
            if let Some(Def::Outside(outside)) = import()
                && self.api.knows(&self.api.canonical(outside.clone()))
            {
                return Some(Def::Outside(outside));
            }
            return item();
        }
        if let Some(found) = item() {
            return Some(found);
        }
        if module.imports.contains_key(name) {
            return import();
        }
        for (glob, visibility) in &module.globs {
            if !visible(*visibility) {
                continue;
            }
            let found = match self.resolve_from(krate, path, glob, steps + 1) {
                Some(Def::Module(owner, inner)) => self.lookup(
                    &Lookup {
                        krate: owner,
                        path: &inner,
                        name,
                        wants_type: query.wants_type,
                        inside: owner == krate,
                    },
                    steps + 1,
                ),
                Some(Def::Outside(mut outside)) => {
                    outside.push(name.to_owned());
                    let canonical = self.api.canonical(outside);
                    self.api
                        .knows(&canonical)
                        .then_some(Def::Outside(canonical))
                }
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// `name` among the items a module defines.
    fn local_item(
        &self,
        query: &Lookup<'_>,
        module: &Module,
        visible: &dyn Fn(Visibility) -> bool,
    ) -> Option<Def> {
        let Lookup {
            krate, path, name, ..
        } = *query;
        let (kind, _) = module
            .items
            .get(name)?
            .iter()
            .filter(|(_, visibility)| visible(*visibility))
            .find(|(kind, _)| !query.wants_type || kind.is_type_namespace())?;
        let mut full = path.to_vec();
        full.push(name.to_owned());
        Some(match kind {
            ItemKind::Module => Def::Module(krate, full),
            ItemKind::Foreign => {
                // A raw CUDA function a crate declares itself is the CUDA API's, unless the
                // crate is the one whose table lists it there (cudarc's own `sys`).
                let full = self.model.full(krate, full);
                let own = self.api.item(&full.join("::")).is_some();
                match self.api.raw(name).filter(|_| !own) {
                    Some(raw) => Def::Outside(raw.split("::").map(str::to_owned).collect()),
                    None => Def::Item(krate, full, kind.clone()),
                }
            }
            kind => Def::Item(krate, self.model.full(krate, full), kind.clone()),
        })
    }

    /// `def` followed by more segments.
    fn extend(&self, def: Def, rest: &[String], steps: usize) -> Option<Def> {
        match def {
            Def::Outside(mut path) => {
                path.extend(rest.iter().cloned());
                Some(Def::Outside(path))
            }
            Def::Module(owner, path) => {
                let mut through = vec!["crate".to_owned()];
                through.extend(path);
                through.extend(rest.iter().cloned());
                self.resolve_from(owner, &[], &through, steps + 1)
            }
            Def::Item(..) => None,
        }
    }
}

#[cfg(test)]
mod tests;
