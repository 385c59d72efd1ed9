//! The parsed and validated form of a `#[device_check]` function.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    AttrStyle, Attribute, Expr, FnArg, Ident, ItemFn, Lit, Meta, Pat, Path, ReturnType, Token,
    TraitItemFn, Type,
};

use crate::errors::Errors;
use crate::type_params::{Mentions, type_params};
use placement_device_name::{self as device_string, DeviceName};

/// The device the `expect` option asks for.
pub(super) enum Expected {
    /// `expect = "cpu"` or `expect = "cuda:N"`.
    Name(DeviceName),
    /// `expect = <expression>`, evaluated at each call.
    Expr(Expr),
}

/// A name the function binds from its arguments: `self`, `x` in `x: &Tensor`, or `a` and `b` in
/// `(a, b): (Tensor, Tensor)`.
pub(super) struct Binding {
    pub(super) ident: Ident,
}

impl Binding {
    /// The name as messages show it (`r#type` as `type`).
    pub(super) fn name(&self) -> String {
        self.ident.unraw().to_string()
    }
}

pub(super) struct CheckedFn {
    pub(super) item: ItemFn,
    /// `#![...]` attributes of the body, which stay inside it.
    pub(super) inner_attrs: Vec<Attribute>,
    /// The name used in messages.
    pub(super) name: String,
    /// Whether the function takes `self`, so that messages name `Type::method`.
    pub(super) has_receiver: bool,
    /// The bindings to check, in order (`self` first where present).
    pub(super) checked: Vec<Binding>,
    /// Arguments whose type is generic or `impl Trait`: checked only through a `Placed` bound,
    /// which the expansion asserts.
    pub(super) generic: Vec<Binding>,
    pub(super) expected: Option<Expected>,
    pub(super) output: bool,
    pub(super) trace: bool,
    /// Where the runtime is: `::placement`, or the `crate` option.
    pub(super) krate: Path,
    /// Whether a failed check may report the caller's location (`#[track_caller]`).
    pub(super) track_caller: bool,
}

const OPTIONS: &str = "expected `expect = \"cuda:0\"`, `expect = <expression>`, `skip(arg, ...)`, `output`, `trace` or `crate = \"path\"`";

/// The function, or why `#[device_check]` cannot be put on this item.
fn function(item: TokenStream) -> syn::Result<ItemFn> {
    match syn::parse2::<syn::Item>(item.clone())? {
        syn::Item::Fn(function) => Ok(function),
        syn::Item::Verbatim(_) => match syn::parse2::<TraitItemFn>(item) {
            Ok(method) => Err(syn::Error::new_spanned(
                method.sig.fn_token,
                format!(
                    "`#[device_check]` checks a function as it runs, and `{}` has no body here; \
                     put it on the methods that implement `{}`",
                    method.sig.ident, method.sig.ident
                ),
            )),
            Err(_) => Err(syn::Error::new(
                Span::call_site(),
                "`#[device_check]` applies to functions and methods, not to this item",
            )),
        },
        other => {
            let what = match &other {
                syn::Item::Struct(_) => "a struct",
                syn::Item::Enum(_) => "an enum",
                syn::Item::Impl(_) => "an impl block (put it on each method)",
                syn::Item::Trait(_) => "a trait (put it on the methods that implement it)",
                syn::Item::Mod(_) => "a module",
                syn::Item::Const(_) | syn::Item::Static(_) => "a constant",
                _ => "this item",
            };
            Err(syn::Error::new(
                other.span(),
                format!("`#[device_check]` applies to functions and methods, not to {what}"),
            ))
        }
    }
}

/// Every name `pat` binds, in order.
fn bindings(pat: &Pat, out: &mut Vec<Binding>) {
    match pat {
        Pat::Ident(ident) => {
            out.push(Binding {
                ident: ident.ident.clone(),
            });
            if let Some((_, sub)) = &ident.subpat {
                bindings(sub, out);
            }
        }
        Pat::Tuple(tuple) => tuple.elems.iter().for_each(|pat| bindings(pat, out)),
        Pat::TupleStruct(tuple) => tuple.elems.iter().for_each(|pat| bindings(pat, out)),
        Pat::Struct(fields) => fields
            .fields
            .iter()
            .for_each(|field| bindings(&field.pat, out)),
        Pat::Slice(slice) => slice.elems.iter().for_each(|pat| bindings(pat, out)),
        Pat::Reference(reference) => bindings(&reference.pat, out),
        Pat::Paren(paren) => bindings(&paren.pat, out),
        Pat::Type(typed) => bindings(&typed.pat, out),
        _ => {}
    }
}

/// The options, parsed; misuse goes to `errors`.
struct Options {
    expected: Option<Expected>,
    skip: Vec<Ident>,
    /// The `skip(...)` list, for a message about what it leaves.
    skip_tokens: Option<TokenStream>,
    output: bool,
    trace: bool,
    krate: Option<Path>,
}

fn options(args: TokenStream, errors: &mut Errors) -> Options {
    let mut options = Options {
        expected: None,
        skip: Vec::new(),
        skip_tokens: None,
        output: false,
        trace: false,
        krate: None,
    };
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args) {
        Ok(metas) => metas,
        Err(error) => {
            errors.push(syn::Error::new(error.span(), format!("{error}; {OPTIONS}")));
            return options;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
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
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(literal),
                    ..
                }) => match device_string::parse(&literal.value()) {
                    Ok(device) => options.expected = Some(Expected::Name(device)),
                    Err(reason) => errors.push(syn::Error::new_spanned(literal, reason)),
                },
                Expr::Lit(literal) => errors.push(syn::Error::new_spanned(
                    literal,
                    "`expect` takes a device name such as \"cuda:0\", or an expression giving a `Device`",
                )),
                value => options.expected = Some(Expected::Expr(value.clone())),
            },
            ("skip", Meta::List(list)) => {
                match list.parse_args_with(|input: syn::parse::ParseStream<'_>| {
                    Punctuated::<Ident, Token![,]>::parse_terminated_with(input, Ident::parse_any)
                }) {
                    Ok(names) => options.skip.extend(names),
                    Err(error) => errors.push(syn::Error::new(
                        error.span(),
                        "`skip` takes the names of arguments (`self` included) or of the bindings of a pattern argument, separated by commas",
                    )),
                }
                options.skip_tokens = Some(quote::quote!(#meta));
            }
            ("output", Meta::Path(_)) => options.output = true,
            ("trace", Meta::Path(_)) => options.trace = true,
            ("crate", Meta::NameValue(pair)) => match crate::crate_path::parse(&pair.value) {
                Ok(path) => options.krate = Some(path),
                Err(error) => errors.push(error),
            },
            ("expect" | "skip" | "output" | "trace" | "crate", _) => {
                errors.push(syn::Error::new_spanned(
                    &meta,
                    format!("malformed `{key}`; {OPTIONS}"),
                ));
            }
            _ => {
                let path = meta.path();
                errors.push(syn::Error::new_spanned(
                    path,
                    format!("unknown option `{}`; {OPTIONS}", quote::quote!(#path)),
                ));
            }
        }
    }
    options
}

/// Replaces every `impl Trait` by `_`, so that a return type can be named inside the body.
fn infer_impl_trait(ty: &Type) -> Type {
    struct Replace;
    impl VisitMut for Replace {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::ImplTrait(_) = ty {
                *ty = Type::Infer(syn::TypeInfer {
                    underscore_token: Default::default(),
                });
            } else {
                syn::visit_mut::visit_type_mut(self, ty);
            }
        }
    }
    let mut ty = ty.clone();
    Replace.visit_type_mut(&mut ty);
    ty
}

impl CheckedFn {
    pub(super) fn parse(args: TokenStream, item: TokenStream) -> syn::Result<CheckedFn> {
        let mut errors = Errors::default();
        let options = options(args, &mut errors);
        let mut item = match function(item) {
            Ok(item) => item,
            Err(error) => return Err(errors.fail(error)),
        };
        let sig = &item.sig;
        if let Some(constness) = &sig.constness {
            errors.push(syn::Error::new_spanned(
                constness,
                "`#[device_check]` runs at run time and cannot check a `const fn`",
            ));
        }
        if let Some(abi) = sig.abi.as_ref().filter(|abi| {
            abi.name.as_ref().is_some_and(|name| name.value() != "Rust") || abi.name.is_none()
        }) {
            let name = abi
                .name
                .as_ref()
                .map_or_else(|| "C".to_owned(), syn::LitStr::value);
            errors.push(syn::Error::new_spanned(
                abi,
                format!(
                    "`#[device_check]` cannot check an `extern \"{name}\"` function: it reports a \
                     mismatch at the caller's location, which only Rust functions can \
                     (`#[track_caller]`), and its panic cannot unwind out of a foreign function; \
                     check in a Rust function that this one calls"
                ),
            ));
        }

        let params = type_params(&sig.generics);
        let mut arguments: Vec<Binding> = Vec::new();
        let mut generic: Vec<Binding> = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(receiver) => arguments.push(Binding {
                    ident: Ident::new("self", receiver.self_token.span),
                }),
                FnArg::Typed(typed) => {
                    let mut bound = Vec::new();
                    bindings(&typed.pat, &mut bound);
                    if Mentions::of(&typed.ty, &params).hides_tensors(&params) {
                        generic.extend(bound.iter().map(|binding| Binding {
                            ident: binding.ident.clone(),
                        }));
                    }
                    arguments.extend(bound);
                }
            }
        }

        for name in &options.skip {
            if !arguments.iter().any(|binding| binding.ident == *name) {
                let known: Vec<String> = arguments.iter().map(Binding::name).collect();
                let known = if known.is_empty() {
                    "it takes no arguments".to_owned()
                } else {
                    format!("it takes {}", known.join(", "))
                };
                errors.push(syn::Error::new_spanned(
                    name,
                    format!(
                        "`skip` names `{}`, which `{}` does not take ({known})",
                        name.unraw(),
                        sig.ident
                    ),
                ));
            }
        }
        let checked: Vec<Binding> = arguments
            .into_iter()
            .filter(|binding| !options.skip.contains(&binding.ident))
            .collect();
        generic.retain(|binding| !options.skip.contains(&binding.ident));

        let is_main = sig.ident == "main" && sig.inputs.is_empty();
        if checked.is_empty() && !options.output {
            let why = if is_main {
                "`#[device_check]` on `fn main` has nothing to check: `main` takes no arguments; \
                 put it on the functions that take tensors"
                    .to_owned()
            } else if sig.inputs.is_empty() {
                format!(
                    "`#[device_check]` has nothing to check: `{}` takes no arguments; check what \
                     it returns with `#[device_check(output)]`, or put it on a function that \
                     takes tensors",
                    sig.ident
                )
            } else if options.skip_tokens.is_some() {
                format!(
                    "`#[device_check]` has nothing to check: `skip` leaves no argument of `{}`",
                    sig.ident
                )
            } else {
                format!(
                    "`#[device_check]` has nothing to check: no argument of `{}` is bound to a name",
                    sig.ident
                )
            };
            match &options.skip_tokens {
                Some(skip) if !sig.inputs.is_empty() => {
                    errors.push(syn::Error::new_spanned(skip, why))
                }
                _ => errors.push(syn::Error::new_spanned(&sig.ident, why)),
            }
        }
        errors.finish()?;

        let (inner_attrs, outer_attrs): (Vec<Attribute>, Vec<Attribute>) = item
            .attrs
            .drain(..)
            .partition(|attr| matches!(attr.style, AttrStyle::Inner(_)));
        item.attrs = outer_attrs;
        let has_receiver = item.sig.receiver().is_some();
        let track_caller = item.sig.asyncness.is_none() && !is_main;
        Ok(CheckedFn {
            name: item.sig.ident.unraw().to_string(),
            has_receiver,
            checked,
            generic,
            expected: options.expected,
            output: options.output,
            trace: options.trace,
            krate: options.krate.unwrap_or_else(crate::crate_path::default),
            track_caller,
            inner_attrs,
            item,
        })
    }

    /// The return type as the body can name it: `impl Trait` inside it inferred (`_`), and
    /// `None` when the whole type is an `impl Trait` or `()`.
    pub(super) fn nameable_return(&self) -> Option<Type> {
        match &self.item.sig.output {
            ReturnType::Type(_, ty) if !matches!(**ty, Type::ImplTrait(_)) => {
                Some(infer_impl_trait(ty))
            }
            _ => None,
        }
    }
}
