//! Scopes and path resolution: what a name means where it is used.

use std::collections::HashMap;
use std::ops::Range;

use super::FileContext;

/// What is definitely known about where a value is, from the code seen so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// `cpu`, `cuda:1`, `metal:0`.
    pub device: String,
    /// Where the value got that device.
    pub origin: Range<usize>,
    pub how: How,
}

/// How a value got its device, for the labels of findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A device value named here.
    Named,
    /// A tensor created here.
    Created,
    /// A tensor moved here.
    Moved,
}

/// A variable: its type, and what is known about its device.
#[derive(Clone, Debug, Default)]
pub(super) struct Var {
    pub(super) ty: Option<String>,
    /// For a device value: the device it names.
    pub(super) names: Option<Fact>,
    /// For a tensor: the device it is on.
    pub(super) on: Option<Fact>,
}

/// What a name in a scope stands for.
#[derive(Clone, Debug)]
enum Binding {
    /// `use a::b as c;` or `extern crate a as c;`: resolved when used, from the scope it is in.
    Import { target: Vec<String>, scope: usize },
    /// An item defined in this crate, by its full path (crate name first).
    /// `value` for functions, constants and statics, which cannot start a longer path (Rust
    /// keeps them in another namespace than modules and types).
    Local { path: Vec<String>, value: bool },
    /// A path that is already canonical (a raw CUDA function declared in an `extern` block).
    Known(Vec<String>),
    /// A generic type parameter (`B` in `fn f<B: Backend>`).
    Generic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ScopeKind {
    /// A module: names from enclosing scopes are not visible through it.
    Module,
    /// A function body: variables from enclosing functions are not visible through it.
    Function,
    /// A block, impl or closure.
    Block,
}

#[derive(Debug)]
struct Scope {
    kind: ScopeKind,
    /// For module scopes, the module path (without the crate name) that `self::` and
    /// `super::` start from; other scopes use their module's.
    module: Option<Vec<String>>,
    names: HashMap<String, Binding>,
    globs: Vec<Vec<String>>,
    /// Variables and what is known of them (nothing known still shadows outer ones).
    vars: HashMap<String, Var>,
}

/// The result of resolving a path.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    /// A path; `local` when it points into the crate being linted.
    Path {
        path: Vec<String>,
        local: bool,
    },
    /// A path that starts with a generic type parameter: the rest of it.
    Generic {
        rest: Vec<String>,
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
];

pub(super) struct Scopes<'c, 'a> {
    cx: &'c FileContext<'a>,
    stack: Vec<Scope>,
}

impl<'c, 'a> Scopes<'c, 'a> {
    pub(super) fn new(cx: &'c FileContext<'a>) -> Self {
        Scopes {
            cx,
            stack: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, kind: ScopeKind, module: Option<Vec<String>>) {
        self.stack.push(Scope {
            kind,
            module,
            names: HashMap::new(),
            globs: Vec::new(),
            vars: HashMap::new(),
        });
    }

    pub(super) fn pop(&mut self) {
        self.stack.pop();
    }

    /// The current module path, without the crate name.
    pub(super) fn module(&self) -> &[String] {
        self.module_at(self.stack.len().saturating_sub(1))
    }

    /// The module path in force at scope `index`.
    fn module_at(&self, index: usize) -> &[String] {
        self.stack
            .iter()
            .take(index + 1)
            .rev()
            .find_map(|scope| scope.module.as_deref())
            .unwrap_or(&self.cx.module)
    }

    fn top(&mut self) -> &mut Scope {
        self.stack
            .last_mut()
            .expect("a scope is pushed before anything is bound")
    }

    /// The full path of an item named `name` defined in the current module.
    pub(super) fn local_path(&self, name: &str) -> Vec<String> {
        let mut path = vec![self.cx.crate_name.to_owned()];
        path.extend(self.module().iter().cloned());
        path.push(name.to_owned());
        path
    }

    pub(super) fn add_item(&mut self, name: &str, value: bool) {
        let path = self.local_path(name);
        self.top()
            .names
            .insert(name.to_owned(), Binding::Local { path, value });
    }

    pub(super) fn add_known(&mut self, name: &str, path: &str) {
        let path = path.split("::").map(str::to_owned).collect();
        self.top()
            .names
            .insert(name.to_owned(), Binding::Known(path));
    }

    pub(super) fn add_import(&mut self, alias: &str, target: Vec<String>) {
        let scope = self.stack.len() - 1;
        self.top()
            .names
            .insert(alias.to_owned(), Binding::Import { target, scope });
    }

    pub(super) fn add_glob(&mut self, target: Vec<String>) {
        self.top().globs.push(target);
    }

    pub(super) fn add_generic(&mut self, name: &str) {
        self.top().names.insert(name.to_owned(), Binding::Generic);
    }

    pub(super) fn bind_var(&mut self, name: &str, var: Var) {
        self.top().vars.insert(name.to_owned(), var);
    }

    /// Binds a variable of which nothing is known, shadowing outer ones.
    pub(super) fn bind_unknown(&mut self, name: &str) {
        self.bind_var(name, Var::default());
    }

    /// The variable and the depth of the scope that defines it, looking out to the enclosing
    /// function.
    pub(super) fn var(&self, name: &str) -> Option<(&Var, usize)> {
        for (depth, scope) in self.stack.iter().enumerate().rev() {
            if let Some(var) = scope.vars.get(name) {
                return Some((var, depth));
            }
            if scope.kind != ScopeKind::Block {
                break;
            }
        }
        None
    }

    /// The known type of a variable.
    pub(super) fn var_type(&self, name: &str) -> Option<&str> {
        self.var(name).and_then(|(var, _)| var.ty.as_deref())
    }

    /// The current scope depth.
    pub(super) fn depth(&self) -> usize {
        self.stack.len()
    }

    /// `name = value;`: in the scope that defines `name`, the new value is known from here on;
    /// from an inner (possibly conditional) scope, it is known there, and unknown after it.
    pub(super) fn assign(&mut self, name: &str, names: Option<Fact>, on: Option<Fact>) {
        let Some((_, depth)) = self.var(name) else {
            return;
        };
        let innermost = depth + 1 == self.stack.len();
        let var = self.stack[depth].vars.get_mut(name).expect("found above");
        if innermost {
            var.names = names;
            var.on = on;
        } else {
            let ty = var.ty.clone();
            var.names = None;
            var.on = None;
            self.bind_var(name, Var { ty, names, on });
        }
    }

    /// Forgets what is known of `name`'s device where it is defined (assigned in a loop).
    pub(super) fn forget(&mut self, name: &str) {
        if let Some((_, depth)) = self.var(name) {
            let var = self.stack[depth].vars.get_mut(name).expect("found above");
            var.names = None;
            var.on = None;
        }
    }

    /// Resolves a path as written (`Device::new_cuda`, `super::gpu::pick`, `candle::Device`).
    pub(super) fn resolve(&self, segments: &[String]) -> Resolved {
        self.resolve_from(self.stack.len().saturating_sub(1), segments, None, 0)
    }

    fn resolve_from(
        &self,
        scope: usize,
        segments: &[String],
        skip: Option<&str>,
        depth: usize,
    ) -> Resolved {
        let Some(first) = segments.first() else {
            return Resolved::Unknown;
        };
        if depth > 8 {
            return Resolved::Unknown;
        }
        let rest = &segments[1..];
        let crate_root = || vec![self.cx.crate_name.to_owned()];
        let module = self.module_at(scope);
        match first.as_str() {
            "crate" => return local(crate_root(), rest),
            "self" => return local([crate_root(), module.to_vec()].concat(), rest),
            "super" => {
                let supers = segments.iter().take_while(|s| *s == "super").count();
                let keep = module.len().saturating_sub(supers);
                let base = [crate_root(), module[..keep].to_vec()].concat();
                return local(base, &segments[supers..]);
            }
            _ => {}
        }
        // Scopes out to the nearest module.
        for index in (0..=scope.min(self.stack.len().saturating_sub(1))).rev() {
            let Some(frame) = self.stack.get(index) else {
                break;
            };
            if skip != Some(first.as_str()) || index != scope {
                match frame.names.get(first) {
                    Some(Binding::Import { target, scope }) => {
                        // `use foo::foo;` names the crate `foo`, not itself.
                        let skip = (target.first() == Some(first)).then_some(first.as_str());
                        return match self.resolve_from(*scope, target, skip, depth + 1) {
                            Resolved::Path { path, local } => self.finish(path, rest, local),
                            Resolved::Generic { rest: mut inner } => {
                                inner.extend(rest.iter().cloned());
                                Resolved::Generic { rest: inner }
                            }
                            Resolved::Unknown => Resolved::Unknown,
                        };
                    }
                    Some(Binding::Local { value: true, .. }) if !rest.is_empty() => {}
                    Some(Binding::Local { path, .. }) => return local(path.clone(), rest),
                    Some(Binding::Known(path)) => return self.finish(path.clone(), rest, false),
                    Some(Binding::Generic) => {
                        return Resolved::Generic {
                            rest: rest.to_vec(),
                        };
                    }
                    None => {}
                }
            }
            if frame.kind == ScopeKind::Module {
                break;
            }
        }
        // Crates: renamed dependencies, the crate itself, always-available and known ones.
        if let Some(real) = self.cx.krate.renames.get(first) {
            return self.finish(vec![real.clone()], rest, false);
        }
        if first == self.cx.crate_name {
            return local(crate_root(), rest);
        }
        let is_dependency = self
            .cx
            .krate
            .dependencies
            .as_ref()
            .is_some_and(|deps| deps.contains(first));
        if ALWAYS_AVAILABLE.contains(&first.as_str())
            || is_dependency
            || self.cx.api.knows(std::slice::from_ref(first))
        {
            return self.finish(vec![first.clone()], rest, false);
        }
        // Glob imports, innermost first, where they lead somewhere known.
        for frame in self.stack[..=scope.min(self.stack.len().saturating_sub(1))]
            .iter()
            .rev()
        {
            for glob in &frame.globs {
                if let Resolved::Path { path, local: false } =
                    self.resolve_from(scope, glob, None, depth + 1)
                {
                    let candidate = [path, segments.to_vec()].concat();
                    if self.cx.api.knows(&self.cx.api.canonical(candidate.clone())) {
                        return self.finish(candidate, &[], false);
                    }
                }
            }
            if frame.kind == ScopeKind::Module {
                break;
            }
        }
        if let Some((_, path)) = PRELUDE.iter().find(|(name, _)| name == first) {
            let path = path.split("::").map(str::to_owned).collect();
            return self.finish(path, rest, false);
        }
        Resolved::Unknown
    }

    fn finish(&self, base: Vec<String>, rest: &[String], is_local: bool) -> Resolved {
        if is_local {
            return local(base, rest);
        }
        let path = [base, rest.to_vec()].concat();
        Resolved::Path {
            path: self.cx.api.canonical(path),
            local: false,
        }
    }
}

fn local(base: Vec<String>, rest: &[String]) -> Resolved {
    Resolved::Path {
        path: [base, rest.to_vec()].concat(),
        local: true,
    }
}
