//! A file's summary for the workspace model: its modules, the items they define, their `use`
//! declarations and `mod` declarations, read from the file's tokens (`lex`) in one
//! pass, without parsing function bodies. This is what lets every file be resolved against the
//! whole workspace while each file is still parsed only once.
//!
//! Item boundaries are found the way rustc's parser finds them: an item ends at its `;` or at
//! the brace group of its body; bodies are skipped whole. Anything not understood is skipped
//! token by token, so a file with errors still gives what could be read.

mod members;

pub use self::members::Member;
pub use super::lex::{Kind as TokenKind, Token};

/// The file's tokens, with the closing partner of every opening bracket.
#[derive(Debug)]
pub struct Tokens<'t> {
    pub text: &'t str,
    pub tokens: Vec<Token>,
    /// For an opening `(`, `[` or `{` at index `i`, the index of its closing partner (or the
    /// end, when unbalanced).
    close: Vec<u32>,
}

impl<'t> Tokens<'t> {
    pub fn new(text: &'t str) -> Tokens<'t> {
        let tokens = super::lex::lex(text);
        let mut close = vec![u32::MAX; tokens.len()];
        let mut open: Vec<usize> = Vec::new();
        for (index, token) in tokens.iter().enumerate() {
            match token.kind {
                TokenKind::OpenParen | TokenKind::OpenBracket | TokenKind::OpenBrace => {
                    open.push(index)
                }
                TokenKind::CloseParen | TokenKind::CloseBracket | TokenKind::CloseBrace => {
                    if let Some(at) = open.pop() {
                        close[at] = index as u32;
                    }
                }
                _ => {}
            }
        }
        let end = tokens.len() as u32;
        for at in open {
            close[at] = end;
        }
        Tokens {
            text,
            tokens,
            close,
        }
    }

    /// The token's text; empty past the end (`use a as` ends some broken files).
    fn text(&self, index: usize) -> &'t str {
        self.tokens.get(index).map_or("", |token| {
            &self.text[token.start as usize..token.end as usize]
        })
    }

    fn kind(&self, index: usize) -> Option<TokenKind> {
        self.tokens.get(index).map(|token| token.kind)
    }

    fn is(&self, index: usize, word: &str) -> bool {
        self.kind(index) == Some(TokenKind::Ident) && self.text(index) == word
    }

    /// The index after the group that opens at `index`; past the end for an index past it (a
    /// file cut off before the group opens).
    fn after_group(&self, index: usize) -> usize {
        self.close.get(index).map_or(self.close.len(), |close| {
            (*close as usize).saturating_add(1)
        })
    }

    fn is_open(&self, index: usize) -> bool {
        matches!(
            self.kind(index),
            Some(TokenKind::OpenParen | TokenKind::OpenBracket | TokenKind::OpenBrace)
        )
    }

    /// An identifier (a raw one without its `r#`).
    fn ident(&self, index: usize) -> Option<String> {
        match self.kind(index)? {
            TokenKind::Ident => Some(self.text(index).to_owned()),
            TokenKind::RawIdent => Some(self.text(index).trim_start_matches("r#").to_owned()),
            _ => None,
        }
    }
}

/// Who may name an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// `pub`: anyone, also other crates.
    Public,
    /// `pub(crate)`, `pub(super)`, `pub(in …)`: somewhere in the crate.
    Crate,
    /// No `pub`: the module and its descendants.
    Private,
}

/// What an item is, for the namespaces it names things in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemKind {
    Module,
    /// `struct`, `enum`, `union`, `trait`.
    Type,
    /// `type A = path;`: the path, when the right side is one.
    Alias(Option<Vec<String>>),
    /// `fn`, `const`, `static`.
    Value,
    /// A function declared in an `extern` block.
    Foreign,
    /// `macro_rules! name`.
    Macro,
}

impl ItemKind {
    /// Whether the item can start a longer path (`Item::x`): modules and types can, values not.
    pub fn is_type_namespace(&self) -> bool {
        matches!(self, ItemKind::Module | ItemKind::Type | ItemKind::Alias(_))
    }
}

/// An item defined in a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub kind: ItemKind,
    pub visibility: Visibility,
}

/// One name a `use` declaration brings in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Use {
    /// `use a::b::c as d;` (`alias` is `c` without `as`; `_` imports are left out).
    Named {
        path: Vec<String>,
        alias: String,
        visibility: Visibility,
    },
    /// `use a::b::*;`.
    Glob {
        path: Vec<String>,
        visibility: Visibility,
    },
}

/// A `mod` declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModDecl {
    pub name: String,
    pub visibility: Visibility,
    /// `#[path = "..."]`.
    pub path_attr: Option<String>,
    /// `#[cfg(test)]`.
    pub cfg_test: bool,
    /// `mod name { ... }`: the inline module's contents; `None` for `mod name;`.
    pub inline: Option<Box<ModuleSummary>>,
}

/// A module's contents, as far as names go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleSummary {
    pub items: Vec<Item>,
    pub uses: Vec<Use>,
    /// `extern crate a as b;`: (crate, name it is known by).
    pub extern_crates: Vec<(String, String)>,
    pub mods: Vec<ModDecl>,
    /// The fields and methods of the module's types whose types name a type that `wanted`
    /// took ([`summarize`]).
    pub members: Vec<Member>,
    /// The module's functions that take a device, each with the places of its device
    /// parameters (`fn train<B>(config: &Config, device: &B::Device)`: 1).
    pub device_params: Vec<(String, Vec<usize>)>,
}

/// Reads the module-level summary of a file's tokens; `wanted` tells the type names whose
/// members are kept (those the API tables know).
pub fn summarize(tokens: &Tokens<'_>, wanted: &dyn Fn(&str) -> bool) -> ModuleSummary {
    let mut reader = Reader {
        tokens,
        at: 0,
        end: tokens.tokens.len(),
        wanted,
    };
    reader.module()
}

#[derive(Clone, Copy)]
struct Reader<'r, 't> {
    tokens: &'r Tokens<'t>,
    at: usize,
    end: usize,
    wanted: &'r dyn Fn(&str) -> bool,
}

/// What the outer attributes of an item say.
#[derive(Default)]
struct Attributes {
    cfg_test: bool,
    path: Option<String>,
}

impl Reader<'_, '_> {
    fn kind(&self, at: usize) -> Option<TokenKind> {
        (at < self.end).then(|| self.tokens.kind(at)).flatten()
    }

    fn is(&self, at: usize, word: &str) -> bool {
        at < self.end && self.tokens.is(at, word)
    }

    fn module(&mut self) -> ModuleSummary {
        let mut summary = ModuleSummary::default();
        while self.at < self.end {
            let before = self.at;
            self.item(&mut summary);
            if self.at == before {
                self.skip_token();
            }
        }
        summary
    }

    /// Skips one token, or a whole group.
    fn skip_token(&mut self) {
        self.at = if self.tokens.is_open(self.at) {
            self.tokens.after_group(self.at)
        } else {
            self.at + 1
        };
    }

    fn attributes(&mut self) -> Attributes {
        let mut found = Attributes::default();
        while self.kind(self.at) == Some(TokenKind::Pound) {
            let inner = self.kind(self.at + 1) == Some(TokenKind::Bang);
            let open = self.at + 1 + usize::from(inner);
            if self.kind(open) != Some(TokenKind::OpenBracket) {
                break;
            }
            let close = self.tokens.after_group(open) - 1;
            if !inner {
                let words: Vec<&str> = (open + 1..close.min(self.end))
                    .map(|at| self.tokens.text(at))
                    .collect();
                // A `cfg` that requires `test` (`test`, `all(test, ..)`), as the checker's
                // `is_cfg_test` reads it.
                if words.first() == Some(&"cfg")
                    && words.contains(&"test")
                    && !words.contains(&"not")
                    && !words.contains(&"any")
                {
                    found.cfg_test = true;
                }
                if words.first() == Some(&"path") && words.get(1) == Some(&"=") {
                    found.path = words
                        .get(2)
                        .map(|literal| literal.trim_matches('"').to_owned());
                }
            }
            self.at = close + 1;
        }
        found
    }

    fn visibility(&mut self) -> Visibility {
        if !self.is(self.at, "pub") {
            return Visibility::Private;
        }
        self.at += 1;
        if self.kind(self.at) == Some(TokenKind::OpenParen) {
            self.at = self.tokens.after_group(self.at);
            Visibility::Crate
        } else {
            Visibility::Public
        }
    }

    /// The item at the current token, if it names anything.
    fn item(&mut self, summary: &mut ModuleSummary) {
        let attributes = self.attributes();
        let visibility = self.visibility();
        // Qualifiers that may come before the item's keyword.
        loop {
            let word =
                (self.kind(self.at) == Some(TokenKind::Ident)).then(|| self.tokens.text(self.at));
            match word {
                Some("unsafe" | "async" | "default" | "auto") => self.at += 1,
                Some("const") if self.is_qualifier_const() => self.at += 1,
                Some("extern")
                    if !self.is(self.at + 1, "crate")
                        && self.kind(self.at + 1) != Some(TokenKind::OpenBrace)
                        && !self.is_abi_block() =>
                {
                    self.at += 1;
                    if matches!(self.kind(self.at), Some(TokenKind::Literal)) {
                        self.at += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(keyword) =
            (self.kind(self.at) == Some(TokenKind::Ident)).then(|| self.tokens.text(self.at))
        else {
            return;
        };
        let name_at = self.at + 1;
        let named = |kind: ItemKind, reader: &Self| {
            reader.tokens.ident(name_at).map(|name| Item {
                name,
                kind,
                visibility,
            })
        };
        match keyword {
            "use" => {
                self.at += 1;
                let end = self.statement_end();
                let mut prefix = Vec::new();
                self.use_tree(self.at, end, &mut prefix, visibility, &mut summary.uses);
                self.at = end + 1;
            }
            "mod" => {
                let Some(name) = self.tokens.ident(name_at) else {
                    self.at += 1;
                    return;
                };
                self.at = name_at + 1;
                let inline = if self.kind(self.at) == Some(TokenKind::OpenBrace) {
                    let close = self.tokens.after_group(self.at) - 1;
                    let mut inner = Reader {
                        tokens: self.tokens,
                        at: self.at + 1,
                        end: close.min(self.end),
                        wanted: self.wanted,
                    };
                    let module = inner.module();
                    self.at = close + 1;
                    Some(Box::new(module))
                } else {
                    self.at += 1; // `;`
                    None
                };
                summary.items.push(Item {
                    name: name.clone(),
                    kind: ItemKind::Module,
                    visibility,
                });
                summary.mods.push(ModDecl {
                    name,
                    visibility,
                    path_attr: attributes.path,
                    cfg_test: attributes.cfg_test,
                    inline,
                });
            }
            "fn" | "const" | "static" => {
                let name_at = if keyword == "static" && self.is(name_at, "mut") {
                    name_at + 1
                } else {
                    name_at
                };
                if let Some(name) = self.tokens.ident(name_at) {
                    let places = match keyword {
                        "fn" => self.device_parameters(name_at),
                        _ => Vec::new(),
                    };
                    if !places.is_empty() {
                        summary.device_params.push((name.clone(), places));
                    }
                    summary.items.push(Item {
                        name,
                        kind: ItemKind::Value,
                        visibility,
                    });
                }
                self.at = name_at;
                self.skip_item_body();
            }
            "struct" | "enum" | "union" | "trait" => {
                // `union` is a keyword only before a name.
                if keyword == "union" && self.tokens.ident(name_at).is_none() {
                    return;
                }
                summary.items.extend(named(ItemKind::Type, self));
                if keyword == "struct"
                    && let Some(name) = self.tokens.ident(name_at)
                {
                    self.fields(&name, name_at, &mut summary.members);
                }
                self.at = name_at;
                self.skip_item_body();
            }
            "type" => {
                let target = self.alias_target(name_at + 1);
                summary.items.extend(named(ItemKind::Alias(target), self));
                self.at = name_at;
                self.skip_item_body();
            }
            "impl" => {
                self.at = self.methods(self.at + 1, &mut summary.members);
            }
            "extern" if self.is(self.at + 1, "crate") => {
                let krate = self.tokens.ident(self.at + 2);
                let alias = if self.is(self.at + 3, "as") {
                    self.tokens.ident(self.at + 4)
                } else {
                    krate.clone()
                };
                if let (Some(krate), Some(alias)) = (krate, alias) {
                    summary.extern_crates.push((krate, alias));
                }
                self.at += 2;
                self.at = self.statement_end() + 1;
            }
            "extern" => {
                // `extern "C" { fn ...; }`: foreign functions.
                self.at += 1;
                if matches!(self.kind(self.at), Some(TokenKind::Literal)) {
                    self.at += 1;
                }
                if self.kind(self.at) == Some(TokenKind::OpenBrace) {
                    let close = self.tokens.after_group(self.at) - 1;
                    let mut at = self.at + 1;
                    while at < close.min(self.end) {
                        if self.tokens.is(at, "fn")
                            && let Some(name) = self.tokens.ident(at + 1)
                        {
                            summary.items.push(Item {
                                name,
                                kind: ItemKind::Foreign,
                                visibility: Visibility::Public,
                            });
                        }
                        at = if self.tokens.is_open(at) {
                            self.tokens.after_group(at)
                        } else {
                            at + 1
                        };
                    }
                    self.at = close + 1;
                }
            }
            // `lazy_static! { pub static ref DEVICE: Device = ...; }` (also called by its
            // path) and `thread_local!`: the statics they declare are the module's values.
            "lazy_static" | "thread_local" => self.declared_statics(keyword, summary),
            "macro_rules" if self.kind(self.at + 1) == Some(TokenKind::Bang) => {
                if let Some(name) = self.tokens.ident(self.at + 2) {
                    summary.items.push(Item {
                        name,
                        kind: ItemKind::Macro,
                        visibility,
                    });
                }
                self.at += 3;
                if self.tokens.is_open(self.at) {
                    self.at = self.tokens.after_group(self.at);
                }
            }
            _ => {}
        }
    }

    /// The statics of a `lazy_static!` or `thread_local!` call at the current token (`macro`,
    /// its name), as values of the module; then past the call.
    fn declared_statics(&mut self, macro_name: &str, summary: &mut ModuleSummary) {
        let mut bang = self.at + 1;
        if self.kind(bang) == Some(TokenKind::Colon) && self.is(bang + 2, macro_name) {
            bang += 3;
        }
        if self.kind(bang) != Some(TokenKind::Bang) || !self.tokens.is_open(bang + 1) {
            self.at += 1;
            return;
        }
        let close = self.tokens.after_group(bang + 1) - 1;
        let inner_end = close.min(self.end);
        let outer_end = std::mem::replace(&mut self.end, inner_end);
        self.at = bang + 2;
        while self.at < self.end {
            self.attributes();
            let visibility = self.visibility();
            if self.is(self.at, "static") {
                let name_at = self.at + 1 + usize::from(self.is(self.at + 1, "ref"));
                if let Some(name) = self.tokens.ident(name_at) {
                    summary.items.push(Item {
                        name,
                        kind: ItemKind::Value,
                        visibility,
                    });
                }
            }
            self.at = self.statement_end() + 1;
        }
        self.end = outer_end;
        self.at = close + 1;
    }

    /// `const fn`, `const unsafe fn`: `const` qualifies a function, not a constant.
    fn is_qualifier_const(&self) -> bool {
        self.is(self.at + 1, "fn")
            || self.is(self.at + 1, "unsafe")
            || self.is(self.at + 1, "async")
            || self.is(self.at + 1, "extern")
    }

    /// `extern "C" { ... }` or `unsafe extern "C" { ... }`: a block of foreign items.
    fn is_abi_block(&self) -> bool {
        let mut at = self.at + 1;
        if matches!(self.kind(at), Some(TokenKind::Literal)) {
            at += 1;
        }
        self.kind(at) == Some(TokenKind::OpenBrace)
    }

    /// The `;` that ends the statement starting here, stepping over groups.
    fn statement_end(&self) -> usize {
        let mut at = self.at;
        while at < self.end && self.kind(at) != Some(TokenKind::Semi) {
            at = if self.tokens.is_open(at) {
                self.tokens.after_group(at)
            } else {
                at + 1
            };
        }
        at
    }

    /// Skips to the end of an item: its `;`, or its body's brace group (a tuple struct's
    /// parentheses are followed by `;`).
    fn skip_item_body(&mut self) {
        while self.at < self.end {
            match self.kind(self.at) {
                Some(TokenKind::Semi) => {
                    self.at += 1;
                    return;
                }
                Some(TokenKind::OpenBrace) => {
                    self.at = self.tokens.after_group(self.at);
                    return;
                }
                _ => self.skip_token(),
            }
        }
    }

    /// The path on the right of `type A<..> = path;`, when it is a plain path.
    fn alias_target(&self, mut at: usize) -> Option<Vec<String>> {
        // Generics of the alias itself.
        if self.kind(at) == Some(TokenKind::Lt) {
            let mut depth = 0;
            while at < self.end {
                match self.kind(at) {
                    Some(TokenKind::Lt) => depth += 1,
                    Some(TokenKind::Gt) => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
            at += 1;
        }
        if self.kind(at) != Some(TokenKind::Eq) {
            return None;
        }
        at += 1;
        let mut path = Vec::new();
        if self.kind(at) == Some(TokenKind::Colon) && self.kind(at + 1) == Some(TokenKind::Colon) {
            at += 2;
        }
        loop {
            path.push(self.tokens.ident(at)?);
            at += 1;
            if self.kind(at) == Some(TokenKind::Colon)
                && self.kind(at + 1) == Some(TokenKind::Colon)
            {
                at += 2;
            } else {
                break;
            }
        }
        // Generic arguments of the target are fine (`Arc<X>` aliases `Arc`).
        matches!(self.kind(at), Some(TokenKind::Semi | TokenKind::Lt)).then_some(path)
    }

    /// A `use` tree between `at` and `end`: `a::b::{c, d as e, f::*}`.
    fn use_tree(
        &self,
        mut at: usize,
        end: usize,
        prefix: &mut Vec<String>,
        visibility: Visibility,
        out: &mut Vec<Use>,
    ) {
        let depth = prefix.len();
        // A leading `::` names a crate.
        if self.kind(at) == Some(TokenKind::Colon) && self.kind(at + 1) == Some(TokenKind::Colon) {
            at += 2;
        }
        while at < end {
            match self.kind(at) {
                Some(TokenKind::Star) => {
                    out.push(Use::Glob {
                        path: prefix.clone(),
                        visibility,
                    });
                    at += 1;
                }
                Some(TokenKind::OpenBrace) => {
                    let close = self.tokens.after_group(at) - 1;
                    let mut item = at + 1;
                    while item < close {
                        let mut stop = item;
                        while stop < close && self.kind(stop) != Some(TokenKind::Comma) {
                            stop = if self.tokens.is_open(stop) {
                                self.tokens.after_group(stop)
                            } else {
                                stop + 1
                            };
                        }
                        self.use_tree(item, stop, prefix, visibility, out);
                        item = stop + 1;
                    }
                    at = close + 1;
                }
                Some(TokenKind::Ident | TokenKind::RawIdent) => {
                    let name = self.tokens.ident(at).unwrap_or_default();
                    let separator = self.kind(at + 1) == Some(TokenKind::Colon)
                        && self.kind(at + 2) == Some(TokenKind::Colon);
                    if separator {
                        prefix.push(name);
                        at += 3;
                        continue;
                    }
                    let alias = if self.is(at + 1, "as") {
                        self.tokens
                            .ident(at + 2)
                            .or_else(|| (self.tokens.text(at + 2) == "_").then(|| "_".to_owned()))
                    } else {
                        Some(name.clone())
                    };
                    // `use a::{self}` names `a`.
                    let (path, alias) = if name == "self" {
                        let alias = match alias.as_deref() {
                            Some("self") | None => prefix.last().cloned(),
                            _ => alias,
                        };
                        (prefix.clone(), alias)
                    } else {
                        let mut path = prefix.clone();
                        path.push(name);
                        (path, alias)
                    };
                    if let Some(alias) = alias.filter(|alias| alias != "_")
                        && !path.is_empty()
                    {
                        out.push(Use::Named {
                            path,
                            alias,
                            visibility,
                        });
                    }
                    break;
                }
                _ => at += 1,
            }
        }
        prefix.truncate(depth);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> ModuleSummary {
        summarize(&Tokens::new(text), &|name| name == "CudaDevice")
    }

    fn named(path: &str, alias: &str, visibility: Visibility) -> Use {
        Use::Named {
            path: path.split("::").map(str::to_owned).collect(),
            alias: alias.to_owned(),
            visibility,
        }
    }

    #[test]
    fn uses_in_all_their_forms() {
        let found = summary(
            "use a::b::{self, c as d, e::*, _f as _};\npub use ::g::h;\npub(crate) use i::{j::{k}, l};\nuse m as n;",
        );
        assert_eq!(
            found.uses,
            vec![
                named("a::b", "b", Visibility::Private),
                named("a::b::c", "d", Visibility::Private),
                Use::Glob {
                    path: vec!["a".into(), "b".into(), "e".into()],
                    visibility: Visibility::Private
                },
                named("g::h", "h", Visibility::Public),
                named("i::j::k", "k", Visibility::Crate),
                named("i::l", "l", Visibility::Crate),
                named("m", "n", Visibility::Private),
            ]
        );
    }

    /// Found by the fuzzer: a file that ends inside `use a as` (an unterminated comment after
    /// it) read past its last token.
    /// Found by the fuzzer: a method cut off before its parameters (`fn f` at the end of an
    /// `impl`) looked for the group after them past the last token.
    #[test]
    fn a_method_cut_off_before_its_parameters_is_read_to_its_end() {
        for text in [
            "impl A { fn f",
            "impl A { fn f /* never closed",
            "struct A; impl A { fn",
        ] {
            summary(text);
        }
    }

    #[test]
    fn a_use_cut_off_after_as_is_read_to_its_end() {
        for text in [
            "use tch::e as",
            "use tch::e as /* never closed",
            "use a::{b as",
        ] {
            let found = summary(text);
            assert!(found.uses.len() <= 1, "{text}: {:?}", found.uses);
        }
    }

    #[test]
    fn items_modules_and_what_bodies_hide() {
        let found = summary(
            r#"
            //! docs
            #![allow(dead_code)]
            pub struct A { x: fn() -> u8 }
            struct B(u8, String);
            pub(crate) enum C { D, E(u8) }
            pub const fn f<T: Into<u8>>(t: T) -> u8 where T: Copy { mod hidden {} 0 }
            const G: u8 = { struct Hidden; 1 };
            static mut H: u8 = 0;
            pub type Ctx = cudarc::driver::CudaContext;
            type Boxed<T> = Box<T>;
            impl A { fn method(&self) {} }
            unsafe impl Send for A {}
            pub unsafe trait T {}
            union U { a: u8 }
            let union = 1;
            macro_rules! gpu { () => { 0 } }
            extern crate tch as torch;
            extern "C" { fn cuCtxSetCurrent(ctx: *mut u8) -> i32; }
            #[cfg(test)] mod tests { use super::*; fn t() {} }
            #[path = "other.rs"] pub mod gpu;
            some_macro! { struct NotSeen; }
            lazy_static::lazy_static! {
                #[doc = "x"] pub static ref DEVICE: Device = pick();
                pub(crate) static ref POOL: Pool = Pool::new(); static ref SEEN: u8 = { 1 };
            }
            thread_local! { static CURRENT: Cell<u8> = Cell::new(0) }
            "#,
        );
        let names: Vec<(&str, &ItemKind, Visibility)> = found
            .items
            .iter()
            .map(|item| (item.name.as_str(), &item.kind, item.visibility))
            .collect();
        let path = |p: &str| Some(p.split("::").map(str::to_owned).collect());
        assert_eq!(
            names,
            vec![
                ("A", &ItemKind::Type, Visibility::Public),
                ("B", &ItemKind::Type, Visibility::Private),
                ("C", &ItemKind::Type, Visibility::Crate),
                ("f", &ItemKind::Value, Visibility::Public),
                ("G", &ItemKind::Value, Visibility::Private),
                ("H", &ItemKind::Value, Visibility::Private),
                (
                    "Ctx",
                    &ItemKind::Alias(path("cudarc::driver::CudaContext")),
                    Visibility::Public
                ),
                ("Boxed", &ItemKind::Alias(path("Box")), Visibility::Private),
                ("T", &ItemKind::Type, Visibility::Public),
                ("U", &ItemKind::Type, Visibility::Private),
                ("gpu", &ItemKind::Macro, Visibility::Private),
                ("cuCtxSetCurrent", &ItemKind::Foreign, Visibility::Public),
                ("tests", &ItemKind::Module, Visibility::Private),
                ("gpu", &ItemKind::Module, Visibility::Public),
                ("DEVICE", &ItemKind::Value, Visibility::Public),
                ("POOL", &ItemKind::Value, Visibility::Crate),
                ("SEEN", &ItemKind::Value, Visibility::Private),
                ("CURRENT", &ItemKind::Value, Visibility::Private),
            ]
        );
        assert_eq!(
            found.extern_crates,
            vec![("tch".to_owned(), "torch".to_owned())]
        );
        let tests = &found.mods[0];
        assert!(tests.cfg_test);
        assert_eq!(tests.inline.as_ref().unwrap().items.len(), 1);
        assert_eq!(found.mods[1].path_attr.as_deref(), Some("other.rs"));
        assert!(found.mods[1].inline.is_none());
    }

    #[test]
    fn broken_and_strange_text_gives_what_it_can() {
        for text in [
            "use",
            "mod",
            "pub(",
            "fn f(",
            "use a::{b",
            "extern",
            "type A =",
            "}}}{{{",
        ] {
            summary(text);
        }
        let found = summary("fn broken( { } pub fn ok() {}");
        assert!(found.items.iter().any(|item| item.name == "broken"));
        for text in [
            "struct A { x: ",
            "impl<T",
            "impl A { fn f() -> ",
            "impl A for",
        ] {
            summary(text);
        }
    }

    #[test]
    fn members_whose_types_name_a_wanted_type() {
        let found = summary(
            "pub struct Pool<T: Into<u8>> {\n    #[doc = \"x\"]\n    pub(crate) map: HashMap<u8, Arc<CudaDevice>>,\n    \
             n: usize,\n    first: CudaDevice,\n}\n\
             struct Tuple(CudaDevice);\n\
             impl<B: Backend> Pool<B> where B: Clone {\n    const N: usize = { 1 };\n    \
             pub fn get(&self, i: usize) -> Option<&CudaDevice> where Self: Sized { todo!() }\n    \
             fn count(&self) -> usize { 0 }\n    async unsafe fn raw(&self) -> *const CudaDevice;\n}\n\
             impl fmt::Debug for crate::a::Other<'_> {\n    fn dev(&self) -> impl Fn() -> CudaDevice { todo!() }\n}\n",
        );
        let members: Vec<(&str, &str, &str)> = found
            .members
            .iter()
            .map(|m| (m.owner.as_str(), m.name.as_str(), m.ty.as_str()))
            .collect();
        assert_eq!(
            members,
            [
                ("Pool", "map", "HashMap<u8, Arc<CudaDevice>>"),
                ("Pool", "first", "CudaDevice"),
                ("Pool", "get", "Option<&CudaDevice>"),
                ("Pool", "raw", "*const CudaDevice"),
                ("Other", "dev", "impl Fn() -> CudaDevice"),
            ]
        );
        // The items are read as before.
        assert!(found.items.iter().any(|item| item.name == "Tuple"));
    }
}
