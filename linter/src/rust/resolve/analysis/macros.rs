//! Macro bodies as code: what `syn` leaves as tokens is parsed where it is code, so that what
//! macros contain is linted like anything else. A macro body whose text may mention something
//! that can start a finding (`Semantic::may_mention`) is read: the arguments of the
//! standard formatting, assertion and logging macros as expression lists, the body of any other
//! macro as expressions or else as statements; and each rule of a `macro_rules!` definition has
//! its transcriber read as statements or items, with its metavariables (`$x`, `$($x),*`)
//! standing in as plain names.

use proc_macro2::{Delimiter, Group, Ident, Spacing, TokenStream, TokenTree};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Stmt, Token};

use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::syntax::last_name;

/// Macros whose bodies are expression lists.
const EXPRESSION_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "dbg",
    "eprint",
    "eprintln",
    "format",
    "format_args",
    "matches",
    "panic",
    "print",
    "println",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
];

/// The code in a macro call.
pub(in crate::rust::resolve) enum Body {
    Exprs(Vec<Expr>),
    Stmts(Vec<Stmt>),
    None,
}

/// The code in the body of `mac`, when it is code.
pub(in crate::rust::resolve) fn body(sem: &Semantic<'_, '_>, mac: &syn::Macro) -> Body {
    let name = last_name(&mac.path);
    if name == "macro_rules" {
        return Body::None;
    }
    // What names nothing that can start a finding cannot make one: most `format!`s and
    // `assert!`s are left as tokens. Their text tells, without copying their tokens.
    if !sem.may_mention_at(mac.delimiter.span().join()) {
        return Body::None;
    }
    // `matches!(value, Pattern)`: only the value is an expression.
    if name == "matches" {
        let value = mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
            let value: Expr = input.parse()?;
            input.parse::<TokenStream>()?;
            Ok(value)
        });
        return value.map_or(Body::None, |value| Body::Exprs(vec![value]));
    }
    let listed = EXPRESSION_MACROS.contains(&name.as_str());
    let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
    if let Ok(exprs) = mac.parse_body_with(parser) {
        return Body::Exprs(exprs.into_iter().collect());
    }
    if let Ok(repeat) = mac.parse_body::<syn::ExprRepeat>() {
        return Body::Exprs(vec![*repeat.expr, *repeat.len]);
    }
    if let Ok(array) = syn::parse2::<RepeatBody>(mac.tokens.clone()) {
        return Body::Exprs(vec![array.value, array.len]);
    }
    if !listed && let Ok(stmts) = syn::Block::parse_within.parse2(mac.tokens.clone()) {
        return Body::Stmts(stmts);
    }
    Body::None
}

/// A static that `lazy_static!` or `thread_local!` declares: `static ref NAME: Type = expr;`
/// (`thread_local!` without `ref`).
pub(in crate::rust::resolve) struct DeclaredStatic {
    pub(in crate::rust::resolve) attrs: Vec<syn::Attribute>,
    pub(in crate::rust::resolve) ident: syn::Ident,
    pub(in crate::rust::resolve) ty: syn::Type,
    pub(in crate::rust::resolve) expr: Expr,
}

impl syn::parse::Parse for DeclaredStatic {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        input.parse::<syn::Visibility>()?;
        input.parse::<Token![static]>()?;
        if input.peek(Token![ref]) {
            input.parse::<Token![ref]>()?;
        }
        let ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty = input.parse()?;
        input.parse::<Token![=]>()?;
        let expr = input.parse()?;
        Ok(DeclaredStatic {
            attrs,
            ident,
            ty,
            expr,
        })
    }
}

/// The statics `lazy_static! { ... }` or `thread_local! { ... }` declares, when `mac` is one of
/// them and names something that can start a finding.
pub(in crate::rust::resolve) fn statics(
    sem: &Semantic<'_, '_>,
    mac: &syn::Macro,
) -> Option<Vec<DeclaredStatic>> {
    if !matches!(
        last_name(&mac.path).as_str(),
        "lazy_static" | "thread_local"
    ) {
        return None;
    }
    if !sem.may_mention_at(mac.delimiter.span().join()) {
        return Some(Vec::new());
    }
    let parser = Punctuated::<DeclaredStatic, Token![;]>::parse_terminated;
    mac.parse_body_with(parser)
        .ok()
        .map(|statics| statics.into_iter().collect())
}

/// `x; n` as in `vec![x; n]`.
struct RepeatBody {
    value: Expr,
    len: Expr,
}

impl syn::parse::Parse for RepeatBody {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let value = input.parse()?;
        input.parse::<Token![;]>()?;
        Ok(RepeatBody {
            value,
            len: input.parse()?,
        })
    }
}

/// The transcribers of a `macro_rules!` definition that mention a known API, read as
/// statements (items included).
pub(in crate::rust::resolve) fn transcribers(
    sem: &Semantic<'_, '_>,
    mac: &syn::Macro,
) -> Vec<Vec<Stmt>> {
    if !sem.may_mention_at(mac.delimiter.span().join()) {
        return Vec::new();
    }
    // Rules are `(matcher) => {transcriber}` separated by `;`.
    let trees: Vec<TokenTree> = mac.tokens.clone().into_iter().collect();
    let mut bodies = Vec::new();
    for window in trees.windows(3) {
        if let [
            TokenTree::Punct(eq),
            TokenTree::Punct(gt),
            TokenTree::Group(body),
        ] = window
            && eq.as_char() == '='
            && eq.spacing() == Spacing::Joint
            && gt.as_char() == '>'
            && sem.may_mention_at(body.span())
        {
            let code = metavariables_as_names(body.stream());
            if let Ok(stmts) = syn::Block::parse_within.parse2(code) {
                bodies.push(stmts);
            }
        }
    }
    bodies
}

/// A transcriber with `$name` as a plain name (spanned where the `$` was), `$crate` as `crate`,
/// and each repetition `$( … ) sep? *` once.
fn metavariables_as_names(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut trees = tokens.into_iter().peekable();
    while let Some(tree) = trees.next() {
        match tree {
            TokenTree::Punct(dollar) if dollar.as_char() == '$' => match trees.next() {
                Some(TokenTree::Ident(name)) if name == "crate" => {
                    out.push(TokenTree::Ident(Ident::new("crate", name.span())));
                }
                Some(TokenTree::Ident(name)) => {
                    let replacement = format!("__placement_{name}");
                    out.push(TokenTree::Ident(Ident::new(&replacement, name.span())));
                }
                Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Parenthesis => {
                    out.extend(metavariables_as_names(group.stream()));
                    // The separator, if any, then the repetition operator.
                    while let Some(TokenTree::Punct(punct)) = trees.peek() {
                        let operator = matches!(punct.as_char(), '*' | '+' | '?');
                        trees.next();
                        if operator {
                            break;
                        }
                    }
                }
                Some(other) => out.push(other),
                None => {}
            },
            TokenTree::Group(group) => {
                let mut inner =
                    Group::new(group.delimiter(), metavariables_as_names(group.stream()));
                inner.set_span(group.span());
                out.push(TokenTree::Group(inner));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}
