//! The parsed and validated form of a `#[device_check]` function.

use proc_macro2::TokenStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, Lit, Meta, Pat, ReturnType, Token, Type};

use crate::errors::Errors;

/// The device the `expect` option asks for.
pub(super) enum Expected {
    /// `expect = "cpu"`.
    Cpu,
    /// `expect = "cuda:N"`.
    Cuda(usize),
    /// `expect = <expression>`, evaluated at each call.
    Expr(Expr),
}

pub(super) struct CheckedFn {
    pub(super) item: ItemFn,
    /// The name used in messages.
    pub(super) name: String,
    /// Whether the function takes `self`, so that messages name `Type::method`.
    pub(super) has_receiver: bool,
    /// The arguments to check, by name, in order (`self` first where present).
    pub(super) checked: Vec<Ident>,
    pub(super) expected: Option<Expected>,
    pub(super) output: bool,
    pub(super) trace: bool,
}

const OPTIONS: &str = "expected `expect = \"cuda:0\"`, `expect = <expression>`, `skip(arg, ...)`, `output` or `trace`";

/// `"cpu"` or `"cuda:N"`, validated when the macro expands.
fn parse_device(literal: &syn::LitStr) -> syn::Result<Expected> {
    let text = literal.value();
    match text.as_str() {
        "cpu" => return Ok(Expected::Cpu),
        "cuda" => {
            return Err(syn::Error::new_spanned(
                literal,
                "`cuda` does not name a device: it means whatever GPU is current; write the ordinal, for example \"cuda:0\"",
            ));
        }
        _ => {}
    }
    text.strip_prefix("cuda:")
        .and_then(|ordinal| ordinal.parse().ok())
        .map(Expected::Cuda)
        .ok_or_else(|| {
            syn::Error::new_spanned(
                literal,
                format!(
                    "`{text}` is not a device; write \"cpu\" or \"cuda:N\", for example \"cuda:0\""
                ),
            )
        })
}

fn arg_name(arg: &FnArg) -> Option<Ident> {
    match arg {
        FnArg::Receiver(receiver) => Some(Ident::new("self", receiver.self_token.span)),
        FnArg::Typed(typed) => match &*typed.pat {
            Pat::Ident(ident) => Some(ident.ident.clone()),
            _ => None,
        },
    }
}

impl CheckedFn {
    pub(super) fn parse(args: TokenStream, item: TokenStream) -> syn::Result<CheckedFn> {
        let item: syn::Item = syn::parse2(item)?;
        let mut errors = Errors::default();
        let options =
            syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, args);
        let item = match item {
            syn::Item::Fn(function) => function,
            other => {
                let what = match &other {
                    syn::Item::Struct(_) => "a struct",
                    syn::Item::Enum(_) => "an enum",
                    syn::Item::Impl(_) => "an impl block (put it on each method)",
                    syn::Item::Trait(_) => "a trait",
                    syn::Item::Mod(_) => "a module",
                    syn::Item::Const(_) | syn::Item::Static(_) => "a constant",
                    _ => "this item",
                };
                errors.push(syn::Error::new(
                    other.span(),
                    format!("`#[device_check]` applies to functions and methods, not to {what}"),
                ));
                if let Err(error) = options {
                    errors.push(error);
                }
                errors.finish()?;
                unreachable!("an error was pushed");
            }
        };
        if let Some(constness) = &item.sig.constness {
            errors.push(syn::Error::new_spanned(
                constness,
                "`#[device_check]` runs at run time and cannot check a `const fn`",
            ));
        }
        let arguments: Vec<Ident> = item.sig.inputs.iter().filter_map(arg_name).collect();

        let mut expected = None;
        let mut skip: Vec<Ident> = Vec::new();
        let (mut output, mut trace) = (false, false);
        let mut seen: Vec<String> = Vec::new();
        for meta in
            options.map_err(|error| syn::Error::new(error.span(), format!("{error}; {OPTIONS}")))?
        {
            let key = meta
                .path()
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if seen.contains(&key) {
                errors.push(syn::Error::new_spanned(
                    meta.path(),
                    format!("`{key}` is given twice"),
                ));
                continue;
            }
            seen.push(key.clone());
            match (key.as_str(), &meta) {
                ("expect", Meta::NameValue(pair)) => match &pair.value {
                    Expr::Lit(syn::ExprLit { lit: Lit::Str(literal), .. }) => match parse_device(literal) {
                        Ok(device) => expected = Some(device),
                        Err(error) => errors.push(error),
                    },
                    Expr::Lit(literal) => errors.push(syn::Error::new_spanned(
                        literal,
                        "`expect` takes a device name such as \"cuda:0\", or an expression giving a `Device`",
                    )),
                    value => expected = Some(Expected::Expr(value.clone())),
                },
                ("skip", Meta::List(list)) => {
                    let names = list.parse_args_with(Punctuated::<Ident, Token![,]>::parse_terminated);
                    match names {
                        Ok(names) => {
                            for name in names {
                                if arguments.contains(&name) {
                                    skip.push(name);
                                } else {
                                    let known: Vec<String> = arguments.iter().map(ToString::to_string).collect();
                                    errors.push(syn::Error::new_spanned(
                                        &name,
                                        format!("`skip` names `{name}`, which is not an argument of `{}` (its arguments: {})", item.sig.ident, known.join(", ")),
                                    ));
                                }
                            }
                        }
                        Err(error) => errors.push(error),
                    }
                }
                ("output", Meta::Path(_)) => output = true,
                ("trace", Meta::Path(_)) => trace = true,
                ("expect" | "skip" | "output" | "trace", _) => {
                    errors.push(syn::Error::new_spanned(&meta, format!("malformed `{key}`; {OPTIONS}")));
                }
                _ => {
                    let path = meta.path();
                    errors.push(syn::Error::new_spanned(path, format!("unknown option `{}`; {OPTIONS}", quote::quote!(#path))));
                }
            }
        }
        errors.finish()?;
        let has_receiver = item.sig.receiver().is_some();
        let checked = arguments
            .into_iter()
            .filter(|name| !skip.contains(name))
            .collect();
        Ok(CheckedFn {
            name: item.sig.ident.to_string(),
            has_receiver,
            checked,
            expected,
            output,
            trace,
            item,
        })
    }

    /// The return type when the body can name it (not `impl Trait`).
    pub(super) fn nameable_return(&self) -> Option<&Type> {
        match &self.item.sig.output {
            ReturnType::Type(_, ty) if !matches!(**ty, Type::ImplTrait(_)) => Some(ty),
            _ => None,
        }
    }
}
