//! The parsed and validated form of a `#[derive(Placed)]` type.

use proc_macro2::TokenStream;
use syn::{Data, DeriveInput, Expr, Fields, Ident, Member, Path, Token};

use crate::errors::Errors;
use crate::type_params::{Mentions, is_param, type_params};

/// A field to visit: how to reach it, and the name it shows in paths.
pub(super) struct PlacedField {
    pub(super) member: Member,
    pub(super) ty: syn::Type,
    /// Whether its type mentions a type parameter that may hold tensors, so that the impl needs
    /// `ty: Placed`.
    pub(super) needs_bound: bool,
}

pub(super) struct Variant {
    pub(super) ident: Ident,
    /// Every field, with `None` for those not visited, so patterns can bind by position.
    pub(super) fields: Vec<Option<PlacedField>>,
    pub(super) named: bool,
}

pub(super) enum Shape {
    Struct(Vec<PlacedField>),
    Enum(Vec<Variant>),
}

pub(super) struct PlacedType {
    pub(super) input: DeriveInput,
    pub(super) shape: Shape,
    /// Where the runtime is: `::placement`, or `#[placed(crate = "...")]`.
    pub(super) krate: Path,
}

const FIELD_OPTIONS: &str = "the only option on a field is `#[placed(skip)]`";

/// Whether a field carries `#[placed(skip)]`; other `#[placed(...)]` contents are errors.
fn skipped(attrs: &[syn::Attribute], errors: &mut Errors) -> bool {
    let mut skip = false;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("placed")) {
        if let syn::Meta::List(list) = &attr.meta
            && list.tokens.is_empty()
        {
            errors.push(syn::Error::new_spanned(
                attr,
                format!(
                    "empty `#[placed()]`: write `#[placed(skip)]`, or remove it; {FIELD_OPTIONS}"
                ),
            ));
            continue;
        }
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                    return Err(meta.error("`skip` takes no value: write `#[placed(skip)]`"));
                }
                skip = true;
                Ok(())
            } else {
                Err(meta.error(format!("unknown `placed` option; {FIELD_OPTIONS}")))
            }
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    skip
}

/// The `crate` option of `#[placed(...)]` on the type; anything else there is an error.
fn container(attrs: &[syn::Attribute], errors: &mut Errors) -> Option<Path> {
    let mut krate = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("placed")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let value: Expr = meta.value()?.parse()?;
                krate = Some(crate::crate_path::parse(&value)?);
                Ok(())
            } else if meta.path.is_ident("skip") {
                Err(meta.error("`#[placed(skip)]` goes on fields, not on the type"))
            } else {
                Err(meta.error(
                    "unknown `placed` option on a type; the only one is `#[placed(crate = \"path\")]`",
                ))
            }
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    krate
}

fn fields(
    fields: &Fields,
    params: &[(Ident, bool)],
    errors: &mut Errors,
) -> Vec<Option<PlacedField>> {
    fields
        .iter()
        .enumerate()
        .map(|(index, field)| {
            let member = match &field.ident {
                Some(ident) => Member::Named(ident.clone()),
                None => Member::Unnamed(index.into()),
            };
            // A callable (a type parameter bounded by `Fn`) is opaque: there is nothing to visit.
            let callable = params
                .iter()
                .any(|(param, callable)| *callable && is_param(&field.ty, param));
            let skip = skipped(&field.attrs, errors);
            (!skip && !callable).then(|| PlacedField {
                member,
                needs_bound: Mentions::of(&field.ty, params).hides_tensors(params),
                ty: field.ty.clone(),
            })
        })
        .collect()
}

impl PlacedType {
    pub(super) fn parse(input: TokenStream) -> syn::Result<PlacedType> {
        let input: DeriveInput = syn::parse2(input)?;
        let mut errors = Errors::default();
        let krate = container(&input.attrs, &mut errors);
        let params = type_params(&input.generics);
        let shape = match &input.data {
            Data::Struct(data) => Shape::Struct(
                fields(&data.fields, &params, &mut errors)
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
            Data::Enum(data) => Shape::Enum(
                data.variants
                    .iter()
                    .map(|variant| Variant {
                        ident: variant.ident.clone(),
                        fields: fields(&variant.fields, &params, &mut errors),
                        named: matches!(variant.fields, Fields::Named(_)),
                    })
                    .collect(),
            ),
            Data::Union(data) => {
                errors.push(syn::Error::new_spanned(
                    data.union_token,
                    "`Placed` cannot be derived for a union: which field holds the tensor is unknown",
                ));
                Shape::Struct(Vec::new())
            }
        };
        errors.finish()?;
        Ok(PlacedType {
            input,
            shape,
            krate: krate.unwrap_or_else(crate::crate_path::default),
        })
    }
}
