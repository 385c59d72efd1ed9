//! Small readings of syntax that the semantic model, the checker and the analyses share.

use proc_macro2::Span;
use syn::{Expr, Pat};

use placement_device_name::DeviceName;

/// How many layers inference looks through (`&`, `?`, `.clone()`, a method chain, an
/// arithmetic chain): facts are not followed deeper, so that long generated chains are walked in
/// linear time.
pub(in crate::rust::resolve) const INFERENCE_DEPTH: usize = 16;

pub(in crate::rust::resolve) fn idents(path: &syn::Path) -> Vec<String> {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect()
}

pub(in crate::rust::resolve) fn last_name(path: &syn::Path) -> String {
    path.segments
        .last()
        .map(|segment| segment.ident.to_string())
        .unwrap_or_default()
}

/// The name of the type an impl is of (`Attention` in `impl<B> Module for Attention<B>`).
pub(in crate::rust::resolve) fn impl_owner(imp: &syn::ItemImpl) -> Option<String> {
    match &*imp.self_ty {
        syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// How the source names a path (`Device::cuda_if_available`, `::tch::Device`).
pub(in crate::rust::resolve) fn shown(path: &syn::Path) -> String {
    let names = idents(path).join("::");
    if path.leading_colon.is_some() {
        format!("::{names}")
    } else {
        names
    }
}

/// Strips what changes neither a value's device nor its type: `&x`, `(x)`, `x?`, `x.clone()`,
/// `x.unwrap()`, up to [`INFERENCE_DEPTH`] layers.
pub(in crate::rust::resolve) fn peel(mut expr: &Expr) -> &Expr {
    for _ in 0..INFERENCE_DEPTH {
        expr = match expr {
            Expr::Reference(inner) => &inner.expr,
            Expr::Paren(inner) => &inner.expr,
            Expr::Group(inner) => &inner.expr,
            Expr::Try(inner) => &inner.expr,
            // Compared without turning the identifier into a string: this runs for most `let`s.
            Expr::MethodCall(call)
                if call.args.is_empty()
                    && ["clone", "to_owned", "unwrap", "as_ref", "borrow"]
                        .iter()
                        .any(|name| call.method == name) =>
            {
                &call.receiver
            }
            Expr::MethodCall(call) if call.method == "expect" => &call.receiver,
            other => return other,
        };
    }
    expr
}

/// The variable an expression is, through what [`peel`] strips.
pub(in crate::rust::resolve) fn variable(expr: &Expr) -> Option<String> {
    match peel(expr) {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

/// Whether a method hands back its receiver's value, unwrapped or with its error converted
/// (`.ok()`, `.unwrap()`, `.expect(..)`, `.context(..)`, `.with_context(..)`, `.map_err(..)`):
/// what a fallible constructor made, as its caller gets it.
pub(in crate::rust::resolve) fn passes_value(method: &syn::Ident) -> bool {
    [
        "ok",
        "unwrap",
        "expect",
        "context",
        "with_context",
        "map_err",
    ]
    .iter()
    .any(|name| method == name)
}

/// A variant with one field, as a project's own device enum writes a GPU (`Device::Cuda(0)`):
/// whether its name says the kind of GPU `gpu` (`cuda`), and its field.
pub(in crate::rust::resolve) fn device_variant<'e>(
    expr: &'e Expr,
    gpu: &str,
) -> Option<(bool, &'e Expr)> {
    let Expr::Call(variant) = expr else {
        return None;
    };
    let (Expr::Path(name), [field]) = (&*variant.func, &*variant.args.iter().collect::<Vec<_>>())
    else {
        return None;
    };
    let kind = name.path.segments.last()?.ident.to_string();
    Some((kind.to_ascii_lowercase().contains(gpu), *field))
}

/// An integer literal (through parentheses and casts): its value and span
/// ([`Semantic::byte_range`](super::Semantic::byte_range) places it in the text).
pub(in crate::rust::resolve) fn literal_usize(expr: &Expr) -> Option<(u128, Span)> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int
            .base10_parse::<u128>()
            .ok()
            .map(|value| (value, int.span())),
        Expr::Paren(inner) => literal_usize(&inner.expr),
        Expr::Group(inner) => literal_usize(&inner.expr),
        Expr::Cast(cast) => literal_usize(&cast.expr),
        _ => None,
    }
}

/// The GPU a string literal names (`"cuda:1"`), by the repository's device-string grammar.
pub(in crate::rust::resolve) fn device_string(expr: &Expr) -> Option<u128> {
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(text),
        ..
    }) = expr
    else {
        return None;
    };
    match placement_device_name::named(&text.value())? {
        DeviceName::Cuda(ordinal) => Some(ordinal as u128),
        DeviceName::Cpu => None,
    }
}

/// The device string a `.parse()` of `receiver` reads, and where it is written: the receiver
/// itself (`"cuda:1".parse()`), or the default it falls back to when the caller gave none
/// (`name.unwrap_or("cuda:0").parse()`, `unwrap_or_else(|| "cuda:0")`), into whatever type
/// the project parses devices into.
pub(in crate::rust::resolve) fn parsed_device_string(receiver: &Expr) -> Option<(u128, &Expr)> {
    let written = match receiver {
        Expr::MethodCall(call) if call.args.len() == 1 && call.method == "unwrap_or" => {
            &call.args[0]
        }
        Expr::MethodCall(call) if call.args.len() == 1 && call.method == "unwrap_or_else" => {
            match &call.args[0] {
                Expr::Closure(closure) if closure.inputs.is_empty() => &*closure.body,
                _ => return None,
            }
        }
        other => other,
    };
    Some((device_string(written)?, written))
}

pub(in crate::rust::resolve) fn is_arithmetic(op: &syn::BinOp) -> bool {
    matches!(
        op,
        syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_)
    )
}

/// Every identifier a pattern binds.
pub(in crate::rust::resolve) fn pattern_names(pat: &Pat, out: &mut Vec<String>) {
    match pat {
        Pat::Ident(ident) => {
            out.push(ident.ident.to_string());
            if let Some((_, sub)) = &ident.subpat {
                pattern_names(sub, out);
            }
        }
        Pat::Type(typed) => pattern_names(&typed.pat, out),
        Pat::Reference(reference) => pattern_names(&reference.pat, out),
        Pat::Paren(paren) => pattern_names(&paren.pat, out),
        Pat::Tuple(tuple) => tuple.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::TupleStruct(tuple) => tuple.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::Slice(slice) => slice.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::Or(or) => or.cases.iter().for_each(|p| pattern_names(p, out)),
        Pat::Struct(strukt) => strukt
            .fields
            .iter()
            .for_each(|f| pattern_names(&f.pat, out)),
        _ => {}
    }
}

/// A string constant's value, or a literal's.
pub(in crate::rust::resolve) fn string_literal(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) => Some(text.value()),
        Expr::Reference(inner) => string_literal(&inner.expr),
        _ => None,
    }
}
