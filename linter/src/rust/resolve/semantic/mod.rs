//! What the code of one file means, as far as placement goes, kept apart from what the rules
//! think of it: scopes and bindings ([`scope`]), types of expressions and patterns
//! ([`infer`]), and the devices values are definitely on ([`facts`]). The checker keeps this
//! up to date as it walks; analyses read it.

pub(super) mod facts;
pub(super) mod infer;
pub(super) mod scope;
pub(super) mod syntax;

use std::ops::Range;

use proc_macro2::{LineColumn, Span};
use rustc_hash::{FxHashMap, FxHashSet};
use syn::{Expr, Item, Type, UseTree};

use self::infer::Ty;
use self::scope::{Resolution, Scopes};
use self::syntax::idents;
use super::FileContext;
use crate::api::{Entry, name_hash};
use crate::source::LineIndex;

pub(super) struct Semantic<'c, 'a> {
    pub(super) cx: &'c FileContext<'a>,
    /// The file's text.
    pub(in crate::rust::resolve) text: &'c str,
    /// Where its lines start, as the parser's spans count them ([`Semantic::byte_range`]).
    lines: LineIndex,
    pub(super) scopes: Scopes<'c, 'a>,
    /// Struct (full path) → field → type, for `self.ctx.bind_to_thread()`.
    fields: FxHashMap<String, FxHashMap<String, Ty>>,
    /// Type (full path) → method → the type it returns, for the file's own impls
    /// (`self.device(i).bind_to_thread()` with `fn device(&self, i) -> Arc<CudaDevice>`).
    methods: FxHashMap<String, FxHashMap<String, Ty>>,
    /// The names of this file's structs, whose types are worth resolving.
    structs: FxHashSet<String>,
    /// String constants of the file (`const VAR: &str = "CUDA_VISIBLE_DEVICES"`).
    strings: FxHashMap<String, String>,
    /// The type of `Self` inside an impl.
    pub(super) self_type: Option<Ty>,
    /// The path `Self` stands for inside an impl of a named type (`Self::pick()`).
    pub(super) self_path: Option<Vec<String>>,
    /// Whether the file imports burn, so that `B::Device::default()` means burn's.
    uses_burn: bool,
}

/// Names the walker must resolve even when no table entry ends with them.
const ALWAYS_RESOLVED: &[&str] = &["default", "parse"];

impl<'c, 'a> Semantic<'c, 'a> {
    pub(super) fn new(cx: &'c FileContext<'a>, text: &'c str) -> Self {
        Semantic {
            cx,
            text,
            lines: LineIndex::at_newlines(text),
            scopes: Scopes::new(cx),
            fields: FxHashMap::default(),
            methods: FxHashMap::default(),
            structs: FxHashSet::default(),
            strings: FxHashMap::default(),
            self_type: None,
            self_path: None,
            uses_burn: false,
        }
    }

    /// Whether a path as written may name something a table knows: it ends like a table's item
    /// path (its last name, and the name before it), or something that may stand for another
    /// name is in the way (a renamed import, an alias, a module that re-exports, `crate`,
    /// `self`, `super`). Most paths in real code may not, and are not resolved at all.
    pub(super) fn may_name(&self, path: &syn::Path) -> bool {
        let segments = &path.segments;
        let Some(last) = segments.last() else {
            return false;
        };
        let before = segments.len().checked_sub(2).map(|at| &segments[at].ident);
        self.may_end_path(before, &last.ident)
    }

    /// [`Semantic::may_name`] for a path that ends with `before::last` (or is `last`).
    pub(super) fn may_end_path(
        &self,
        before: Option<&proc_macro2::Ident>,
        last: &proc_macro2::Ident,
    ) -> bool {
        let (model, api) = (self.cx.model, self.cx.api);
        let last_hash = name_hash(last);
        if model.aliases.contains_hashed(last_hash, last) {
            return true;
        }
        if !api.ends_item_hashed(last_hash, last) {
            return false;
        }
        let Some(before) = before else {
            return true;
        };
        let before_hash = name_hash(before);
        api.ends_item_with_hashed(before_hash, last_hash, last)
            || model.aliases.contains_hashed(before_hash, before)
            || model.modules.contains_hashed(before_hash, before)
            || before == "crate"
            || before == "self"
            || before == "super"
            || api.is_reexport_root(&before.to_string())
    }

    /// Whether source text may mention something that can start a finding, as far as its words
    /// tell: a triggering method's name after `.`, a triggering item's name (or an alias, or
    /// `default`/`parse`) where an item can be (after `::`, called, or a capitalized constant or
    /// variant), or a function whose calls are asked for (see [`crate::api::Entry::triggers`]).
    /// Text that does not can make no event. Words in strings and comments count too, which only
    /// errs on the side of looking.
    pub(super) fn may_mention(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        let (api, model) = (self.cx.api, self.cx.model);
        let word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        let mut at = 0;
        while at < bytes.len() {
            if !word_byte(bytes[at]) {
                at += 1;
                continue;
            }
            let start = at;
            while at < bytes.len() && word_byte(bytes[at]) {
                at += 1;
            }
            let word = &text[start..at];
            let before = text[..start].trim_end();
            let after = text[at..].trim_start();
            let method = before.ends_with('.') && !before.ends_with("..");
            // Items are called (`f(`, `m!`) or named by path (`a::f`); constants and variants
            // (`FLOAT_CUDA`, `Cpu`), and functions passed as values, may stand alone.
            let item = !method
                && (before.ends_with("::")
                    || after.starts_with('(')
                    || after.starts_with('!')
                    || word.starts_with(|c: char| c.is_ascii_uppercase())
                    || before.ends_with('(')
                    || before.ends_with(','));
            // A device string (`"cuda:1".parse()`) starts a finding on its own.
            let device_string = word == "cuda" && before.ends_with('"');
            let found = device_string
                || (method && api.triggering_method(word))
                || (item
                    && (api.triggering_item(word)
                        || model.aliases.contains(word)
                        || ALWAYS_RESOLVED.contains(&word)
                        || self.cx.calls_to.is_some_and(|names| names.contains(word))));
            if found {
                return true;
            }
        }
        false
    }

    /// [`Semantic::may_mention`] for the text a span covers (all of it when the span is not in
    /// the file).
    pub(super) fn may_mention_at(&self, span: Span) -> bool {
        self.text
            .get(self.byte_range(span))
            .is_none_or(|text| self.may_mention(text))
    }

    /// The bytes of the text that `span` covers, from its lines and columns. `Span::byte_range`
    /// counts characters from the offset it found last, which for the body of every function
    /// walks the whole file (about 2% of the instructions of a run over candle, burn, tch-rs
    /// and cudarc); a line and a column are found at once.
    /// The first line is left to it: a byte order mark or `#!` line there was blanked for the
    /// parser, and its columns count the blanks.
    pub(super) fn byte_range(&self, span: Span) -> Range<usize> {
        let offset = |at: LineColumn| {
            if at.line < 2 || at.line > self.lines.line_count() {
                return None;
            }
            let start = self.lines.line_start(at.line - 1);
            let line = self.text.get(start..)?;
            Some(
                start
                    + line
                        .char_indices()
                        .nth(at.column)
                        .map_or(line.len(), |(at, _)| at),
            )
        };
        match (offset(span.start()), offset(span.end())) {
            (Some(start), Some(end)) => start..end,
            _ => span.byte_range(),
        }
    }

    /// Whether a call's callee is worth resolving.
    pub(super) fn resolves_call(&self, path: &syn::Path) -> bool {
        self.may_name(path)
            || path
                .segments
                .last()
                .is_some_and(|last| ALWAYS_RESOLVED.iter().any(|name| last.ident == name))
    }

    pub(super) fn resolve(&self, path: &syn::Path) -> Resolution {
        let mut idents = idents(path);
        if let Some(self_path) = &self.self_path
            && idents.len() > 1
            && idents[0] == "Self"
        {
            idents.splice(0..1, self_path.iter().cloned());
        }
        self.scopes.resolve(&idents)
    }

    /// The entry a resolved path names. Built-in tables describe other crates: inside the
    /// crate that defines an API, its own uses of it are the implementation, not findings.
    pub(super) fn lookup_path(&self, path: &syn::Path) -> Option<(String, &'a Entry)> {
        let Resolution::Path { path, local } = self.resolve(path) else {
            return None;
        };
        let path = path.join("::");
        let entry = self.cx.api.item(&path)?;
        (!local || !entry.builtin).then_some((path, entry))
    }

    /// [`Semantic::lookup_path`], skipped at once for paths that cannot name a table's item.
    pub(super) fn known_path(&self, path: &syn::Path) -> Option<(String, &'a Entry)> {
        if !self.may_name(path) {
            return None;
        }
        self.lookup_path(path)
    }

    /// The table entry of a method on a receiver of type `ty`, unless the type is this crate's
    /// own and the entry built in (the implementation of an API, not a use of it).
    pub(super) fn method(&self, ty: &str, method: &str) -> Option<&'a Entry> {
        let own_type = ty
            .strip_prefix(self.cx.crate_name)
            .is_some_and(|rest| rest.starts_with("::"));
        self.cx
            .api
            .method(ty, method)
            .filter(|entry| !(entry.builtin && own_type))
    }

    /// The table entry of a method call, when its receiver's type is known.
    pub(super) fn method_entry(&self, call: &syn::ExprMethodCall) -> Option<&'a Entry> {
        if !self.cx.api.mentions_method(&call.method) {
            return None;
        }
        let receiver = self.infer(&call.receiver)?;
        self.method(receiver.named()?, &call.method.to_string())
    }

    /// A string constant or literal's value.
    pub(super) fn string_value(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Path(path) => self
                .strings
                .get(&path.path.segments.last()?.ident.to_string())
                .cloned(),
            Expr::Reference(inner) => self.string_value(&inner.expr),
            other => syntax::string_literal(other),
        }
    }

    // ---- items ------------------------------------------------------------------------------

    /// Takes in the items of a module (`module_level`: the model knows their names already) or
    /// a block (their names are bound here), before anything in them is walked: order does not
    /// matter for items.
    pub(super) fn collect_items<'i>(
        &mut self,
        items: impl IntoIterator<Item = &'i Item> + Clone,
        module_level: bool,
    ) {
        for item in items.clone() {
            if !module_level {
                self.bind_block_item(item);
            }
            if let Item::Use(item_use) = item {
                self.note_use(&item_use.tree, Vec::new(), module_level);
            }
            if let Item::Const(constant) = item
                && let Some(text) = syntax::string_literal(&constant.expr)
            {
                self.strings.insert(constant.ident.to_string(), text);
            }
        }
        // Field types resolve with the module's imports in place.
        for item in items.clone() {
            if let Item::Struct(strukt) = item {
                self.structs.insert(strukt.ident.to_string());
                let key = self.scopes.local_path(&strukt.ident.to_string()).join("::");
                let fields: FxHashMap<String, Ty> = strukt
                    .fields
                    .iter()
                    .filter_map(|field| {
                        Some((field.ident.as_ref()?.to_string(), self.type_of(&field.ty)?))
                    })
                    .collect();
                if !fields.is_empty() {
                    self.fields.insert(key, fields);
                }
            }
        }
        // Methods' return types, with the structs known.
        for item in items {
            if let Item::Impl(imp) = item
                && let Some(Ty::Named(owner)) = self.type_of(&imp.self_ty)
            {
                for member in &imp.items {
                    if let syn::ImplItem::Fn(method) = member
                        && let syn::ReturnType::Type(_, returns) = &method.sig.output
                        && let Some(ty) = self.type_of(returns)
                    {
                        self.methods
                            .entry(owner.clone())
                            .or_default()
                            .insert(method.sig.ident.to_string(), ty);
                    }
                }
            }
        }
    }

    /// The type a method of one of the file's own impls returns.
    pub(super) fn own_method(&self, owner: &str, name: &str) -> Option<&Ty> {
        self.methods.get(owner)?.get(name)
    }

    /// The type of a struct's field.
    pub(super) fn field(&self, owner: &str, name: &str) -> Option<&Ty> {
        self.fields.get(owner)?.get(name)
    }

    fn bind_block_item(&mut self, item: &Item) {
        let name = match item {
            Item::Const(i) => Some(&i.ident),
            Item::Enum(i) => Some(&i.ident),
            Item::Fn(i) => Some(&i.sig.ident),
            Item::Mod(i) => Some(&i.ident),
            Item::Static(i) => Some(&i.ident),
            Item::Struct(i) => Some(&i.ident),
            Item::Trait(i) => Some(&i.ident),
            Item::Type(i) => Some(&i.ident),
            Item::Union(i) => Some(&i.ident),
            Item::Macro(i) => i.ident.as_ref(),
            _ => None,
        };
        if let Some(name) = name {
            let value = matches!(item, Item::Fn(_) | Item::Const(_) | Item::Static(_));
            self.scopes.add_item(&name.to_string(), value);
        }
        match item {
            Item::ExternCrate(krate) => {
                let target = vec![krate.ident.to_string()];
                let alias = krate
                    .rename
                    .as_ref()
                    .map_or(&krate.ident, |(_, alias)| alias);
                self.scopes.add_import(&alias.to_string(), target);
            }
            Item::ForeignMod(foreign) => {
                for item in &foreign.items {
                    if let syn::ForeignItem::Fn(function) = item {
                        self.scopes.add_item(&function.sig.ident.to_string(), true);
                    }
                }
            }
            _ => {}
        }
    }

    /// A `use` tree: in a block, its names are bound; anywhere, a burn import is noted.
    fn note_use(&mut self, tree: &UseTree, prefix: Vec<String>, module_level: bool) {
        let with = |name: &syn::Ident| [prefix.clone(), vec![name.to_string()]].concat();
        if prefix
            .first()
            .is_some_and(|first| first.starts_with("burn"))
        {
            self.uses_burn = true;
        }
        match tree {
            UseTree::Path(path) => self.note_use(&path.tree, with(&path.ident), module_level),
            UseTree::Group(group) => group
                .items
                .iter()
                .for_each(|tree| self.note_use(tree, prefix.clone(), module_level)),
            _ if module_level => {}
            UseTree::Name(name) if name.ident == "self" => {
                if let Some(last) = prefix.last() {
                    self.scopes.add_import(&last.clone(), prefix.clone());
                }
            }
            UseTree::Name(name) => self
                .scopes
                .add_import(&name.ident.to_string(), with(&name.ident)),
            UseTree::Rename(rename) => {
                let target = if rename.ident == "self" {
                    prefix.clone()
                } else {
                    with(&rename.ident)
                };
                if rename.rename != "_" {
                    self.scopes.add_import(&rename.rename.to_string(), target);
                }
            }
            UseTree::Glob(_) => self.scopes.add_glob(prefix.clone()),
        }
    }

    pub(super) fn add_generics(&mut self, generics: &syn::Generics) {
        for param in generics.type_params() {
            self.scopes.add_generic(&param.ident.to_string());
        }
    }

    // ---- burn's generic backends -----------------------------------------------------------

    fn uses_burn(&self) -> bool {
        self.uses_burn
            || self
                .cx
                .krate
                .dependencies
                .as_ref()
                .is_some_and(|deps| deps.iter().any(|n| n.starts_with("burn")))
    }

    /// The entry for a generic burn backend's `B::Device::default()`.
    pub(super) fn burn_default(&self) -> Option<(String, &'a Entry)> {
        let path = "burn::Backend::Device::default".to_owned();
        let entry = self.cx.api.item(&path)?;
        self.uses_burn().then_some((path, entry))
    }

    /// `B::Device::default()` or `<B as Backend>::Device::default()` on a generic backend, and
    /// `<MyBackend as Backend>::Device::default()` on any (a project's alias of one:
    /// `type MyBackend = Autodiff<Wgpu>`).
    pub(super) fn burn_generic_default(&self, path: &syn::ExprPath) -> Option<(String, &'a Entry)> {
        let generic_head = match &path.qself {
            Some(qself) => {
                let backend_trait = (path.path.segments.iter().take(qself.position).last())
                    .is_some_and(|name| name.ident.to_string().ends_with("Backend"));
                backend_trait
                    || matches!(&*qself.ty, Type::Path(p) if matches!(self.resolve(&p.path), Resolution::Generic { .. }))
            }
            None => matches!(self.resolve(&path.path), Resolution::Generic { .. }),
        };
        let names = idents(&path.path);
        let tail: Vec<&str> = names.iter().rev().take(2).map(String::as_str).collect();
        if generic_head && tail == ["default", "Device"] {
            self.burn_default()
        } else {
            None
        }
    }
}
