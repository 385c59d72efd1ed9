//! What a Python module's names mean: the scopes of the module and of each function (what
//! their imports, definitions and assignments bind), resolution of a name or attribute chain
//! to a library's dotted path through them, and the small readings of syntax every analysis
//! shares (a literal string or integer, a dotted name, the names an assignment binds).

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::hash_map::Entry as Bound;
use std::ops::Range;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::api::Entry;
use crate::python::PyContext;
use crate::python::checker::Checker;

/// The package a file's relative imports start from: its own name for a package's
/// `__init__.py`, its parent's for a module. A module of folders without `__init__.py`
/// (namespace packages) is in the package its importers name it by from the import root
/// (`from . import model_management` in `ldm_patched/modules/sd1_clip.py`).
pub(crate) fn package_of(cx: &PyContext<'_>) -> Vec<String> {
    let in_package = cx.is_init || cx.module.contains('.');
    let name = match cx.rooted.first() {
        Some(rooted) if !in_package => rooted.as_str(),
        _ => cx.module.as_str(),
    };
    let mut package: Vec<String> = name
        .split('.')
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
        .collect();
    if !cx.is_init {
        package.pop();
    }
    package
}

/// Names bound by imports → the dotted path each names.
pub(crate) type Imports = FxHashMap<CompactString, CompactString>;

/// What a name of a scope is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Binding {
    /// A `def` or `class`: it hides imports.
    Definition,
    /// An import, with the dotted path it names.
    Import(CompactString),
    /// Anything else (parameters, assignments, loop targets, relative imports above the top).
    Local,
}

/// The names a scope binds.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// Each name bound → what it means here: a definition hides an import, which hides any
    /// other binding, wherever each is in the body.
    names: FxHashMap<CompactString, Binding>,
    /// Modules whose names a glob import (`from utils import *`) brings.
    pub(crate) globs: Vec<String>,
}

impl Scope {
    /// The bindings of a body, not looking into nested functions and classes; `parameters` are
    /// a function's.
    pub(crate) fn of(
        body: &[Stmt],
        parameters: Option<&ast::Parameters>,
        package: &[String],
        walrus: Walrus,
    ) -> Scope {
        // Most statements of a body bind a name at most: sized once, not grown name by name.
        let parameter_count = parameters.map_or(0, |parameters| parameters.len());
        let mut scope = Scope {
            names: FxHashMap::with_capacity_and_hasher(
                parameter_count + body.len(),
                Default::default(),
            ),
            globs: Vec::new(),
        };
        if let Some(parameters) = parameters {
            for parameter in parameters.iter() {
                scope.bind(parameter.name().as_str(), Binding::Local);
            }
        }
        scope.collect(body, package, walrus);
        // A module's lazy imports (a function's body does not define the proxy's class).
        if parameters.is_none() {
            for (name, module) in lazy_imports(body) {
                scope.bind(name, Binding::Import(module.into()));
            }
        }
        scope
    }

    fn collect(&mut self, body: &[Stmt], package: &[String], walrus: Walrus) {
        for stmt in body {
            match stmt {
                Stmt::Import(_) | Stmt::ImportFrom(_) => self.import(stmt, package),
                Stmt::FunctionDef(def) => self.bind(def.name.as_str(), Binding::Definition),
                Stmt::ClassDef(class) => self.bind(class.name.as_str(), Binding::Definition),
                _ => {
                    assign_names(std::slice::from_ref(stmt), false, walrus, &mut |target| {
                        if let Target::Name(name) = target {
                            self.bind(name, Binding::Local);
                        }
                    });
                    for_each_body(stmt, |body| self.collect_nested(body, package, walrus));
                }
            }
        }
    }

    /// What an `import` or `from ... import` statement binds.
    fn import(&mut self, stmt: &Stmt, package: &[String]) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let name = alias.name.as_str();
                    match &alias.asname {
                        Some(asname) => self.bind(asname.as_str(), Binding::Import(name.into())),
                        None => {
                            let first = name.split('.').next().unwrap_or(name);
                            self.bind(first, Binding::Import(first.into()));
                        }
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let from = imported_from(import, package);
                for alias in &import.names {
                    if let Some(module) = from.as_ref().filter(|_| alias.name.as_str() == "*") {
                        self.globs.push(module.clone());
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
                    match &from {
                        Some(module) if alias.name.as_str() != "*" && !module.is_empty() => {
                            let path = dotted_join(module, &alias.name);
                            self.bind(bound, Binding::Import(path));
                        }
                        // What a glob brings, or a module above the top: unknown.
                        _ => self.bind(bound, Binding::Local),
                    }
                }
            }
            _ => {}
        }
    }

    /// The imports of a body, wherever they are in it but in nested functions and classes: what
    /// `Scope::of` would give as its imports, without the rest of the scope.
    pub(crate) fn imports_of(body: &[Stmt], package: &[String]) -> Imports {
        fn collect(scope: &mut Scope, body: &[Stmt], package: &[String]) {
            for stmt in body {
                match stmt {
                    Stmt::Import(_) | Stmt::ImportFrom(_) => scope.import(stmt, package),
                    Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                    _ => for_each_body(stmt, |body| collect(scope, body, package)),
                }
            }
        }
        let mut scope = Scope::default();
        collect(&mut scope, body, package);
        scope.imports().collect()
    }

    /// The names its imports bind (and no definition hides), with the dotted paths they name.
    pub(crate) fn imports(&self) -> impl Iterator<Item = (CompactString, CompactString)> + '_ {
        self.names
            .iter()
            .filter_map(|(name, binding)| match binding {
                Binding::Import(path) => Some((name.clone(), path.clone())),
                Binding::Definition | Binding::Local => None,
            })
    }

    /// The imports and definitions of the bodies of a statement whose assigned names are
    /// collected already (`assigned_names` looks into its bodies).
    fn collect_nested(&mut self, body: &[Stmt], package: &[String], walrus: Walrus) {
        for stmt in body {
            match stmt {
                Stmt::Import(_)
                | Stmt::ImportFrom(_)
                | Stmt::FunctionDef(_)
                | Stmt::ClassDef(_) => {
                    self.collect(std::slice::from_ref(stmt), package, walrus);
                }
                _ => for_each_body(stmt, |body| self.collect_nested(body, package, walrus)),
            }
        }
    }

    /// Binds `name`, unless the scope binds it already in a way that hides this one.
    fn bind(&mut self, name: &str, binding: Binding) {
        let rank = |binding: &Binding| match binding {
            Binding::Definition => 2,
            Binding::Import(_) => 1,
            Binding::Local => 0,
        };
        match self.names.entry(name.into()) {
            Bound::Occupied(bound) if rank(bound.get()) > rank(&binding) => {}
            Bound::Occupied(mut bound) => *bound.get_mut() = binding,
            Bound::Vacant(vacant) => {
                vacant.insert(binding);
            }
        }
    }

    /// What `name` means here, when this scope binds it.
    pub(crate) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.names.get(name)
    }
}

/// The module a `from ... import` statement imports from: a relative import names the
/// project's own module, from the file's package (`None` above its top).
fn imported_from(import: &ast::StmtImportFrom, package: &[String]) -> Option<String> {
    match import.level {
        0 => import.module.as_ref().map(|m| m.to_string()),
        level => {
            let up = level as usize - 1;
            (up <= package.len()).then(|| {
                let mut parts = package[..package.len() - up].to_vec();
                parts.extend(import.module.iter().map(|m| m.to_string()));
                parts.join(".")
            })
        }
    }
}

/// Every module path a file imports, wherever the import is (at the top level, in a function,
/// under a condition): `import a.b` gives `a.b`; `from a import b` gives `a` and `a.b`, since `b`
/// may be a module. For the module graph: who imports whom.
pub(crate) fn imported_modules(body: &[Stmt], package: &[String]) -> Vec<CompactString> {
    fn collect(body: &[Stmt], package: &[String], found: &mut Vec<CompactString>) {
        for stmt in body {
            match stmt {
                Stmt::Import(import) => {
                    found.extend(import.names.iter().map(|alias| alias.name.as_str().into()));
                }
                Stmt::ImportFrom(import) => {
                    let Some(from) = imported_from(import, package).filter(|m| !m.is_empty())
                    else {
                        continue;
                    };
                    for alias in import
                        .names
                        .iter()
                        .filter(|alias| alias.name.as_str() != "*")
                    {
                        found.push(dotted_join(&from, &alias.name));
                    }
                    found.push(from.into());
                }
                Stmt::FunctionDef(def) => collect(&def.body, package, found),
                Stmt::ClassDef(class) => collect(&class.body, package, found),
                _ => for_each_body(stmt, |body| collect(body, package, found)),
            }
        }
    }
    let mut found = Vec::new();
    collect(body, package, &mut found);
    found.sort_unstable();
    found.dedup();
    found
}

/// Calls `f` with each body of a compound statement (not of nested functions and classes).
pub(crate) fn for_each_body<'s>(stmt: &'s Stmt, mut f: impl FnMut(&'s [Stmt])) {
    match stmt {
        Stmt::If(s) => {
            f(&s.body);
            for clause in &s.elif_else_clauses {
                f(&clause.body);
            }
        }
        Stmt::For(s) => {
            f(&s.body);
            f(&s.orelse);
        }
        Stmt::While(s) => {
            f(&s.body);
            f(&s.orelse);
        }
        Stmt::With(s) => f(&s.body),
        Stmt::Try(s) => {
            f(&s.body);
            for handler in &s.handlers {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                f(&handler.body);
            }
            f(&s.orelse);
            f(&s.finalbody);
        }
        Stmt::Match(s) => {
            for case in &s.cases {
                f(&case.body);
            }
        }
        _ => {}
    }
}

/// Whether a file's expressions may assign names: only `:=` does, so in a file without it the
/// names a body assigns are found from its statements alone, without walking each expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walrus {
    Absent,
    Possible,
}

impl Walrus {
    pub(crate) fn of(text: &str) -> Walrus {
        match text.contains(":=") {
            true => Walrus::Possible,
            false => Walrus::Absent,
        }
    }
}

/// The names (and dotted attribute targets such as `self.w`) that statements assign, looking
/// into compound statements; into nested functions only when `nested`.
pub(crate) fn assigned_names(
    body: &[Stmt],
    nested: bool,
    walrus: Walrus,
) -> FxHashSet<CompactString> {
    let mut names = FxHashSet::default();
    assign_names(body, nested, walrus, &mut |target| match target {
        Target::Name(name) => {
            names.insert(name.into());
        }
        Target::Attribute(attribute) => {
            if let Some(dotted) = dotted(attribute) {
                names.insert(dotted.into());
            }
        }
    });
    names
}

/// What an assignment binds: a name, or an attribute of something.
enum Target<'e> {
    Name(&'e str),
    Attribute(&'e Expr),
}

/// Gives `add` each target that [`assigned_names`] reads.
fn assign_names<'e>(
    body: &'e [Stmt],
    nested: bool,
    walrus: Walrus,
    add: &mut dyn FnMut(Target<'e>),
) {
    struct Assigned<'n, 'e> {
        add: &'n mut dyn FnMut(Target<'e>),
        nested: bool,
    }
    impl<'e> Assigned<'_, 'e> {
        fn target(&mut self, target: &'e Expr) {
            match target {
                Expr::Name(name) => (self.add)(Target::Name(name.id.as_str())),
                Expr::Attribute(_) => (self.add)(Target::Attribute(target)),
                Expr::Tuple(tuple) => tuple.iter().for_each(|e| self.target(e)),
                Expr::List(list) => list.iter().for_each(|e| self.target(e)),
                Expr::Starred(starred) => self.target(&starred.value),
                _ => {}
            }
        }

        /// The names a statement itself assigns; false for a function or class whose body
        /// is not looked into.
        fn statement(&mut self, stmt: &'e Stmt) -> bool {
            match stmt {
                Stmt::Assign(s) => s.targets.iter().for_each(|t| self.target(t)),
                Stmt::AugAssign(s) => self.target(&s.target),
                Stmt::AnnAssign(s) if s.value.is_some() => self.target(&s.target),
                Stmt::For(s) => self.target(&s.target),
                Stmt::With(s) => {
                    for item in &s.items {
                        if let Some(vars) = &item.optional_vars {
                            self.target(vars);
                        }
                    }
                }
                Stmt::Try(s) => {
                    for handler in &s.handlers {
                        let ast::ExceptHandler::ExceptHandler(handler) = handler;
                        if let Some(name) = &handler.name {
                            (self.add)(Target::Name(name.as_str()));
                        }
                    }
                }
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return self.nested,
                _ => {}
            }
            true
        }

        /// Statements only: what a body assigns when no expression can.
        fn statements(&mut self, body: &'e [Stmt]) {
            for stmt in body {
                if !self.statement(stmt) {
                    continue;
                }
                match stmt {
                    Stmt::FunctionDef(def) => self.statements(&def.body),
                    Stmt::ClassDef(class) => self.statements(&class.body),
                    _ => for_each_body(stmt, |body| self.statements(body)),
                }
            }
        }
    }
    impl<'e> Visitor<'e> for Assigned<'_, 'e> {
        fn visit_stmt(&mut self, stmt: &'e Stmt) {
            if self.statement(stmt) {
                visitor::walk_stmt(self, stmt);
            }
        }

        fn visit_expr(&mut self, expr: &'e Expr) {
            match expr {
                Expr::Named(named) => self.target(&named.target),
                Expr::Lambda(_) if !self.nested => return,
                _ => {}
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut assigned = Assigned { add, nested };
    match walrus {
        Walrus::Absent => assigned.statements(body),
        Walrus::Possible => body.iter().for_each(|stmt| assigned.visit_stmt(stmt)),
    }
}

/// `a.b["key"]` for a string key of a dotted name, as a dict literal's keys are bound.
pub(crate) fn keyed(expr: &Expr) -> Option<String> {
    let Expr::Subscript(subscript) = expr else {
        return None;
    };
    Some(keyed_name(
        &dotted(&subscript.value)?,
        string(&subscript.slice)?,
    ))
}

/// `name["key"]`: how a string key of a name is bound, the key written as Rust's `{:?}` writes
/// it. Most keys are plain words, written without the formatting machinery.
pub(crate) fn keyed_name(name: &str, key: &str) -> String {
    let plain =
        |byte: &u8| byte.is_ascii_graphic() && !matches!(byte, b'"' | b'\\') || *byte == b' ';
    match key.as_bytes().iter().all(plain) {
        true => [name, "[\"", key, "\"]"].concat(),
        false => format!("{name}[{key:?}]"),
    }
}

/// `a.b.c` for a chain of attributes on a name.
pub(crate) fn dotted(expr: &Expr) -> Option<String> {
    // Sized first, so that the path is allocated once (resolution makes one per chain).
    fn len(expr: &Expr) -> Option<usize> {
        match expr {
            Expr::Name(name) => Some(name.id.len()),
            Expr::Attribute(attribute) => Some(len(&attribute.value)? + 1 + attribute.attr.len()),
            _ => None,
        }
    }
    fn push(expr: &Expr, path: &mut String) {
        match expr {
            Expr::Name(name) => path.push_str(name.id.as_str()),
            Expr::Attribute(attribute) => {
                push(&attribute.value, path);
                path.push('.');
                path.push_str(attribute.attr.as_str());
            }
            _ => {}
        }
    }
    let mut path = String::with_capacity(len(expr)?);
    push(expr, &mut path);
    Some(path)
}

/// The name a dotted chain starts with.
pub(crate) fn root(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attribute) => root(&attribute.value),
        _ => None,
    }
}

/// `base.name`, built without the formatting machinery (resolution makes one per name it
/// follows).
pub(crate) fn dotted_join(base: &str, name: &str) -> CompactString {
    let mut path = CompactString::with_capacity(base.len() + 1 + name.len());
    path.push_str(base);
    path.push('.');
    path.push_str(name);
    path
}

/// The text of a string literal, or of an f-string without a replacement field (`f"cuda"`).
pub(crate) fn string(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str()),
        Expr::FString(f) => {
            let mut elements = f.value.elements();
            match (elements.next(), elements.next(), f.value.literals().next()) {
                (Some(ast::InterpolatedStringElement::Literal(literal)), None, None) => {
                    Some(&literal.value)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A module's string constants: the names its top level binds once, to a string literal
/// (`CUDA_ENVVAR = "CUDA_VISIBLE_DEVICES"`), which its functions read wherever they are.
pub(crate) fn string_constants(body: &[Stmt]) -> FxHashMap<String, String> {
    let mut bound: FxHashMap<&str, Option<&str>> = FxHashMap::default();
    for stmt in body {
        let (name, value) = match stmt {
            Stmt::Assign(assign) => match &assign.targets[..] {
                [Expr::Name(name)] => (name, Some(&*assign.value)),
                _ => continue,
            },
            Stmt::AnnAssign(assign) => match &*assign.target {
                Expr::Name(name) => (name, assign.value.as_deref()),
                _ => continue,
            },
            _ => continue,
        };
        let literal = value.and_then(string);
        bound
            .entry(name.id.as_str())
            .and_modify(|held| *held = None)
            .or_insert(literal);
    }
    bound
        .into_iter()
        .filter_map(|(name, literal)| Some((name.to_owned(), literal?.to_owned())))
        .collect()
}

pub(crate) fn integer(expr: &Expr) -> Option<u64> {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) => int.as_u64(),
        _ => None,
    }
}

pub(crate) fn range(node: &impl Ranged) -> Range<usize> {
    usize::from(node.range().start())..usize::from(node.range().end())
}

/// Whether a call passes on its caller's arguments (`*args`, `**kwargs`).
pub(crate) fn forwards(arguments: &ast::Arguments) -> bool {
    arguments.args.iter().any(Expr::is_starred_expr)
        || arguments
            .keywords
            .iter()
            .any(|keyword| keyword.arg.is_none())
}

/// Whether a method of a class is handed its receiver first (`self`, `cls`): all but a
/// `staticmethod`.
pub(crate) fn takes_receiver(def: &ast::StmtFunctionDef) -> bool {
    !(def.decorator_list.iter()).any(|decorator| last_name(&decorator.expression) == "staticmethod")
}

/// The last name of a name or an attribute chain (`print`, `info` of `logger.info`), or "".
pub(crate) fn last_name(expr: &Expr) -> &str {
    match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        _ => "",
    }
}

/// What a negation (`not x`) negates, or the expression itself.
pub(crate) fn peel_not(expr: &Expr) -> &Expr {
    match expr {
        Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => peel_not(&unary.operand),
        other => other,
    }
}

/// Names bound to an instance of a lazy import's proxy (`torch = _LazyImportTorch()`, whose
/// class's `__getattr__` or `__getattribute__` imports the module and returns `getattr(torch,
/// name)`): each name is the module.
fn lazy_imports(body: &[Stmt]) -> Vec<(&str, &str)> {
    // The module each proxy class of the body imports and hands its attributes from.
    fn proxy(class: &ast::StmtClassDef) -> Option<(&str, &str)> {
        class.body.iter().find_map(|stmt| {
            let Stmt::FunctionDef(def) = stmt else {
                return None;
            };
            if !matches!(def.name.as_str(), "__getattr__" | "__getattribute__") {
                return None;
            }
            let module = def.body.iter().find_map(|stmt| match stmt {
                Stmt::Import(import) if import.names.len() == 1 => {
                    let alias = &import.names[0];
                    Some(alias.asname.as_ref().unwrap_or(&alias.name).as_str())
                }
                _ => None,
            })?;
            let hands_on = def.body.iter().any(|stmt| {
                matches!(stmt, Stmt::Return(ast::StmtReturn { value: Some(value), .. })
                    if matches!(&**value, Expr::Call(call)
                        if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "getattr")
                            && matches!(call.arguments.args.first(),
                                Some(Expr::Name(m)) if m.id.as_str() == module)))
            });
            hands_on.then_some((class.name.as_str(), module))
        })
    }
    let proxies: Vec<(&str, &str)> = body
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::ClassDef(class) => proxy(class),
            _ => None,
        })
        .collect();
    if proxies.is_empty() {
        return Vec::new();
    }
    body.iter()
        .filter_map(|stmt| {
            let Stmt::Assign(assign) = stmt else {
                return None;
            };
            let [Expr::Name(name)] = &*assign.targets else {
                return None;
            };
            let Expr::Call(call) = &*assign.value else {
                return None;
            };
            let Expr::Name(class) = &*call.func else {
                return None;
            };
            let (_, module) = proxies
                .iter()
                .find(|(proxy, _)| *proxy == class.id.as_str())?;
            Some((name.id.as_str(), *module))
        })
        .collect()
}

/// The names an expression reads.
pub(crate) fn collect_names(expr: &Expr, names: &mut Vec<String>) {
    struct Names<'n>(&'n mut Vec<String>);
    impl<'a> Visitor<'a> for Names<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr {
                self.0.push(name.id.as_str().to_owned());
            }
            if let Some(dotted) = dotted(expr).filter(|_| matches!(expr, Expr::Attribute(_))) {
                self.0.push(dotted);
            }
            visitor::walk_expr(self, expr);
        }
    }
    Names(names).visit_expr(expr);
}

/// A module under the calls that return it (`m.eval()`, `m.train()`, `m.half()`).
pub(crate) fn peel(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(call) => match &*call.func {
            Expr::Attribute(method)
                if matches!(
                    method.attr.as_str(),
                    "eval" | "train" | "float" | "half" | "double" | "bfloat16" | "requires_grad_"
                ) =>
            {
                peel(&method.value)
            }
            _ => expr,
        },
        _ => expr,
    }
}

/// What a bare name names ([`Checker::meaning`]).
enum Meaning<'s> {
    /// A dotted path, as a table holds it.
    Path(&'s str),
    /// A definition at this module's top level: the module's path and the name.
    Own,
}

impl<'a> Checker<'a, '_> {
    /// Whether `expr` resolves to the dotted `path`: an attribute chain is matched from its
    /// last name back, so that most chains are told apart without being resolved.
    pub(crate) fn resolves_to(&self, expr: &Expr, path: &str) -> bool {
        match expr {
            Expr::Attribute(attribute) => path
                .strip_suffix(attribute.attr.as_str())
                .and_then(|base| base.strip_suffix('.'))
                .is_some_and(|base| self.resolves_to(&attribute.value, base)),
            Expr::Name(name) => match self.meaning(name.id.as_str()) {
                Some(Meaning::Path(named)) => named == path,
                Some(Meaning::Own) => path
                    .strip_prefix(self.module.as_str())
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(|rest| rest == name.id.as_str()),
                None => false,
            },
            other => self.resolve(other).as_deref() == Some(path),
        }
    }

    /// The dotted path a bare name names here, borrowed from the table that holds it: an
    /// alias of the function's flow, an import of an enclosing scope, a definition of this
    /// module, or what a glob import of the project's module brings.
    fn meaning(&self, id: &str) -> Option<Meaning<'_>> {
        if let Some(alias) = self.function.flow.aliases.get(id) {
            return Some(Meaning::Path(alias));
        }
        let Some((depth, found)) = self
            .scopes
            .iter()
            .enumerate()
            .rev()
            .find_map(|(depth, scope)| Some((depth, scope.lookup(id)?)))
        else {
            // What a glob import of the project's module brings: what that module imported
            // (`from utils import *` after `import torch` in utils).
            return self.scopes[0]
                .globs
                .iter()
                .rev()
                .find_map(|module| {
                    let key = (module.clone(), id.to_owned());
                    self.asked.borrow_mut().imported.insert(key);
                    self.project.imported(module, id)
                })
                .map(Meaning::Path);
        };
        match found {
            Binding::Import(path) => Some(Meaning::Path(path)),
            // A function of this module, named as other modules name it.
            Binding::Definition if depth == 0 && !self.module.is_empty() => Some(Meaning::Own),
            Binding::Definition | Binding::Local => None,
        }
    }

    /// The string an expression holds: a literal, a name the function bound to one, or the
    /// module's constant (`os.environ[CUDA_ENVVAR]`).
    pub(crate) fn string_of<'e>(&'e self, expr: &'e Expr) -> Option<&'e str> {
        let Expr::Name(name) = expr else {
            return string(expr);
        };
        let id = name.id.as_str();
        if let Some(text) = self.function.flow.strings.get(id) {
            return Some(text);
        }
        // The module's when no scope inside it binds the name.
        let bound_inside = self.scopes[1..]
            .iter()
            .any(|scope| scope.lookup(id).is_some());
        match bound_inside {
            true => None,
            false => self.constants.get(id).map(String::as_str),
        }
    }

    /// The dotted path an expression names through imports, when it names a library's item.
    /// Resolving is cheaper than keeping what was resolved: a chain is a few lookups.
    pub(crate) fn resolve(&self, expr: &Expr) -> Option<CompactString> {
        match expr {
            Expr::Name(name) => match self.meaning(name.id.as_str())? {
                Meaning::Path(path) => Some(path.into()),
                Meaning::Own => Some(dotted_join(&self.module, &name.id)),
            },
            // `getattr(torch, "cuda")`, also with the name in a local string.
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "getattr")
                    && call.arguments.args.len() == 2 =>
            {
                let base = self.resolve(&call.arguments.args[0])?;
                let named = self.string_of(&call.arguments.args[1]).map(str::to_owned);
                let attribute = match named {
                    Some(text) => text,
                    // `getattr(torch, device_type)`: whichever accelerator's module it is,
                    // each has `torch.cuda`'s device API (`current_device`, `set_device`).
                    None if base == "torch" => "cuda".to_owned(),
                    None => return None,
                };
                Some(dotted_join(&base, &attribute))
            }
            Expr::Attribute(attribute) => {
                let mut path = match &*attribute.value {
                    // `get_torch_device().current_device`, of a project function that returns
                    // `getattr(torch, name)`: the accelerator's module, whose device API its
                    // result has.
                    Expr::Call(call) if call.arguments.is_empty() => {
                        let function = self.resolve(&call.func)?;
                        self.device_module(&function)?.into()
                    }
                    base => self.resolve(base)?,
                };
                path.push('.');
                path.push_str(attribute.attr.as_str());
                Some(path)
            }
            _ => None,
        }
    }

    /// The dotted path of a method of the class being walked, called on `self` or `cls`.
    pub(crate) fn own_method(&self, func: &Expr) -> Option<CompactString> {
        let Expr::Attribute(attribute) = func else {
            return None;
        };
        let Expr::Name(receiver) = &*attribute.value else {
            return None;
        };
        if !matches!(receiver.id.as_str(), "self" | "cls") || self.module.is_empty() {
            return None;
        }
        let method = attribute.attr.as_str();
        match (&self.function.method_of, &self.function.adopted_by) {
            (Some(class), _) => {
                let mut path = dotted_join(&self.module, class);
                path.push('.');
                path.push_str(method);
                Some(path)
            }
            (None, Some(class)) => Some(dotted_join(class, method)),
            (None, None) => None,
        }
    }

    /// The class of another module that adopts `def`, a module-level function whose first
    /// parameter is `self`, as its method (an import in the class's body), asked of the project
    /// by each of the function's names.
    pub(crate) fn adopter(&self, def: &ast::StmtFunctionDef) -> Option<String> {
        let first = def
            .parameters
            .posonlyargs
            .iter()
            .chain(&def.parameters.args)
            .next()?;
        if first.parameter.name.as_str() != "self" || self.module.is_empty() {
            return None;
        }
        std::iter::once(&self.module)
            .chain(&self.rooted)
            .find_map(|module| {
                let path = format!("{module}.{}", def.name.as_str());
                let adopter = self.project.adopter(&path).map(str::to_owned);
                self.asked.borrow_mut().adopted.insert(path);
                adopter
            })
    }

    /// The members a class's body binds by imports ([`Summary::adopted`]).
    pub(crate) fn note_adopted(&mut self, body: &[Stmt]) {
        if self.module.is_empty() {
            return;
        }
        let class = self.qualname.join(".");
        for (name, function) in Scope::imports_of(body, &self.package) {
            let member = format!("{}.{class}.{name}", self.module);
            self.adopted.push((member, function.to_string()));
        }
    }

    pub(crate) fn item(&self, path: &str) -> Option<&'a Entry> {
        self.api.dotted_item(path)
    }

    pub(crate) fn source(&self, span: &Range<usize>) -> &str {
        self.text.get(span.clone()).unwrap_or_default()
    }
}
