//! Scopes inside a file: the module being walked (whose names the workspace model knows), and
//! the blocks, functions, impls and closures inside it with their own items, imports, generic
//! parameters and variables.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::infer::Ty;
use crate::analysis::Fact;
use crate::rust::model::Resolved;
use crate::rust::resolve::FileContext;

/// A variable: its type, and what is known about its device.
#[derive(Clone, Debug, Default)]
pub(in crate::rust::resolve) struct Var {
    pub(in crate::rust::resolve) ty: Option<Ty>,
    /// For a device value: the device it names.
    pub(in crate::rust::resolve) names: Option<Fact>,
    /// For a tensor: the device it is on.
    pub(in crate::rust::resolve) on: Option<Fact>,
}

impl Var {
    pub(in crate::rust::resolve) fn of_type(ty: Option<Ty>) -> Var {
        Var {
            ty,
            ..Var::default()
        }
    }
}

/// What a name in a block scope stands for. Module-level names are the model's.
#[derive(Clone, Debug)]
enum Binding {
    /// `use a::b as c;` in a block: resolved when used, from the scope it is in.
    Import { target: Vec<String>, scope: usize },
    /// An item defined in a block, by its full path (crate name first). `value` for
    /// functions, constants and statics, which cannot start a longer path.
    Local { path: Vec<String>, value: bool },
    /// A generic type parameter (`B` in `fn f<B: Backend>`).
    Generic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::rust::resolve) enum ScopeKind {
    /// A module: its names are the model's; names from enclosing scopes are not visible.
    Module,
    /// A function body: variables from enclosing functions are not visible through it.
    Function,
    /// A block, impl or closure.
    Block,
}

#[derive(Debug)]
struct Scope {
    kind: ScopeKind,
    /// For module scopes, the module path (without the crate name).
    module: Option<Vec<String>>,
    names: FxHashMap<String, Binding>,
    globs: Vec<Vec<String>>,
    /// Variables and what is known of them (nothing known still shadows outer ones).
    vars: FxHashMap<String, Var>,
    /// For module scopes: what paths resolved to through the model, asked again and again
    /// (`Tensor`, `Device`) in a file.
    resolved: RefCell<FxHashMap<Vec<String>, Resolution>>,
}

/// What a path as written resolves to, from a scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::rust::resolve) enum Resolution {
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

impl From<Resolved> for Resolution {
    fn from(resolved: Resolved) -> Resolution {
        match resolved {
            Resolved::Path { path, local } => Resolution::Path { path, local },
            Resolved::Unknown => Resolution::Unknown,
        }
    }
}

pub(in crate::rust::resolve) struct Scopes<'c, 'a> {
    cx: &'c FileContext<'a>,
    stack: Vec<Scope>,
}

impl<'c, 'a> Scopes<'c, 'a> {
    pub(in crate::rust::resolve) fn new(cx: &'c FileContext<'a>) -> Self {
        Scopes {
            cx,
            stack: Vec::new(),
        }
    }

    pub(in crate::rust::resolve) fn push(&mut self, kind: ScopeKind, module: Option<Vec<String>>) {
        self.stack.push(Scope {
            kind,
            module,
            names: FxHashMap::default(),
            globs: Vec::new(),
            vars: FxHashMap::default(),
            resolved: RefCell::new(FxHashMap::default()),
        });
    }

    pub(in crate::rust::resolve) fn pop(&mut self) {
        self.stack.pop();
    }

    /// Whether the innermost scope is a module's (an item here is named by its module path).
    pub(in crate::rust::resolve) fn at_module_level(&self) -> bool {
        self.stack
            .last()
            .is_some_and(|scope| scope.kind == ScopeKind::Module)
    }

    /// Whether the innermost scope is an `impl`'s directly inside a module (its associated
    /// functions are named by the type's path there).
    pub(in crate::rust::resolve) fn at_impl_level(&self) -> bool {
        let kinds = self.stack.iter().rev().take(2).map(|scope| scope.kind);
        kinds.eq([ScopeKind::Block, ScopeKind::Module])
    }

    /// The current module path, without the crate name.
    pub(in crate::rust::resolve) fn module(&self) -> &[String] {
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
    pub(in crate::rust::resolve) fn local_path(&self, name: &str) -> Vec<String> {
        let mut path = vec![self.cx.crate_name.to_owned()];
        path.extend(self.module().iter().cloned());
        path.push(name.to_owned());
        path
    }

    /// An item defined in a block.
    pub(in crate::rust::resolve) fn add_item(&mut self, name: &str, value: bool) {
        let path = self.local_path(name);
        self.top()
            .names
            .insert(name.to_owned(), Binding::Local { path, value });
    }

    /// A `use` in a block.
    pub(in crate::rust::resolve) fn add_import(&mut self, alias: &str, target: Vec<String>) {
        let scope = self.stack.len() - 1;
        self.top()
            .names
            .insert(alias.to_owned(), Binding::Import { target, scope });
    }

    pub(in crate::rust::resolve) fn add_glob(&mut self, target: Vec<String>) {
        self.top().globs.push(target);
    }

    pub(in crate::rust::resolve) fn add_generic(&mut self, name: &str) {
        self.top().names.insert(name.to_owned(), Binding::Generic);
    }

    pub(in crate::rust::resolve) fn bind_var(&mut self, name: &str, var: Var) {
        self.top().vars.insert(name.to_owned(), var);
    }

    /// Binds a variable of which nothing is known, shadowing outer ones.
    pub(in crate::rust::resolve) fn bind_unknown(&mut self, name: &str) {
        self.bind_var(name, Var::default());
    }

    /// The variable and the depth of the scope that defines it, looking out to the enclosing
    /// function.
    pub(in crate::rust::resolve) fn var(&self, name: &str) -> Option<(&Var, usize)> {
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

    /// The current scope depth.
    pub(in crate::rust::resolve) fn depth(&self) -> usize {
        self.stack.len()
    }

    /// `name = value;`: in the scope that defines `name`, the new value is known from here on;
    /// from an inner (possibly conditional) scope, it is known there, and unknown after it.
    pub(in crate::rust::resolve) fn assign(
        &mut self,
        name: &str,
        names: Option<Fact>,
        on: Option<Fact>,
    ) {
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
    pub(in crate::rust::resolve) fn forget(&mut self, name: &str) {
        if let Some((_, depth)) = self.var(name) {
            let var = self.stack[depth].vars.get_mut(name).expect("found above");
            var.names = None;
            var.on = None;
        }
    }

    /// Resolves a path as written (`Device::new_cuda`, `super::gpu::pick`, `candle::Device`):
    /// through the block scopes out to the module, then through the workspace model.
    pub(in crate::rust::resolve) fn resolve(&self, segments: &[String]) -> Resolution {
        self.resolve_from(self.stack.len().saturating_sub(1), segments, None, 0)
    }

    fn resolve_from(
        &self,
        scope: usize,
        segments: &[String],
        skip: Option<&str>,
        depth: usize,
    ) -> Resolution {
        let Some(first) = segments.first() else {
            return Resolution::Unknown;
        };
        if depth > 8 {
            return Resolution::Unknown;
        }
        let rest = &segments[1..];
        let keyword = matches!(first.as_str(), "crate" | "self" | "super" | "$crate");
        // Block scopes out to the nearest module.
        let top = scope.min(self.stack.len().saturating_sub(1));
        for index in (0..=top).rev() {
            let Some(frame) = self.stack.get(index) else {
                break;
            };
            if frame.kind == ScopeKind::Module {
                break;
            }
            if keyword || (skip == Some(first.as_str()) && index == scope) {
                continue;
            }
            match frame.names.get(first) {
                Some(Binding::Import { target, scope }) => {
                    // `use foo::foo;` names the crate `foo`, not itself.
                    let skip = (target.first() == Some(first)).then_some(first.as_str());
                    return match self.resolve_from(*scope, target, skip, depth + 1) {
                        Resolution::Path { mut path, local } => {
                            path.extend(rest.iter().cloned());
                            let path = if local {
                                path
                            } else {
                                self.cx.api.canonical(path)
                            };
                            Resolution::Path { path, local }
                        }
                        Resolution::Generic { rest: mut inner } => {
                            inner.extend(rest.iter().cloned());
                            Resolution::Generic { rest: inner }
                        }
                        Resolution::Unknown => Resolution::Unknown,
                    };
                }
                Some(Binding::Local { value: true, .. }) if !rest.is_empty() => {}
                Some(Binding::Local { path, .. }) => {
                    return Resolution::Path {
                        path: [path.clone(), rest.to_vec()].concat(),
                        local: true,
                    };
                }
                Some(Binding::Generic) => {
                    return Resolution::Generic {
                        rest: rest.to_vec(),
                    };
                }
                None => {}
            }
            // Glob imports in blocks, where they lead somewhere a table knows.
            for glob in &frame.globs {
                if let Resolution::Path { path, local: false } =
                    self.resolve_from(index, glob, None, depth + 1)
                {
                    let candidate = self.cx.api.canonical([path, segments.to_vec()].concat());
                    if self.cx.api.knows(&candidate) {
                        return Resolution::Path {
                            path: candidate,
                            local: false,
                        };
                    }
                }
            }
        }
        // The module's names are the model's, the same for every path of the module.
        let frame = (0..=top)
            .rev()
            .find(|&index| self.stack[index].kind == ScopeKind::Module);
        let cache = frame.map(|index| &self.stack[index].resolved);
        if let Some(found) = cache.and_then(|cache| cache.borrow().get(segments).cloned()) {
            return found;
        }
        let module = self.module_at(scope);
        let found: Resolution = self
            .cx
            .model
            .resolve(self.cx.api, self.cx.crate_id, module, segments)
            .into();
        if let Some(cache) = cache {
            cache.borrow_mut().insert(segments.to_vec(), found.clone());
        }
        found
    }
}
