//! The parsed and validated form of a `#[derive(Placed)]` type.

use proc_macro2::TokenStream;
use syn::{Data, DeriveInput, Fields, Ident, Member};

use crate::errors::Errors;

/// A field to visit: how to reach it, and the name it shows in paths.
pub(super) struct PlacedField {
    pub(super) member: Member,
    /// Its type, to decide which generic parameters need `Placed`.
    pub(super) ty: syn::Type,
}

pub(super) struct Variant {
    pub(super) ident: Ident,
    /// Every field, with `None` for those skipped, so patterns can bind by position.
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
}

/// Whether a field carries `#[placed(skip)]`; other `#[placed(...)]` contents are errors.
fn skipped(attrs: &[syn::Attribute], errors: &mut Errors) -> bool {
    let mut skip = false;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("placed")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta.error("unknown `placed` option; the only one is `#[placed(skip)]`"))
            }
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    skip
}

fn fields(fields: &Fields, errors: &mut Errors) -> Vec<Option<PlacedField>> {
    fields
        .iter()
        .enumerate()
        .map(|(index, field)| {
            let member = match &field.ident {
                Some(ident) => Member::Named(ident.clone()),
                None => Member::Unnamed(index.into()),
            };
            (!skipped(&field.attrs, errors)).then(|| PlacedField {
                member,
                ty: field.ty.clone(),
            })
        })
        .collect()
}

impl PlacedType {
    pub(super) fn parse(input: TokenStream) -> syn::Result<PlacedType> {
        let input: DeriveInput = syn::parse2(input)?;
        let mut errors = Errors::default();
        for attr in input
            .attrs
            .iter()
            .filter(|attr| attr.path().is_ident("placed"))
        {
            errors.push(syn::Error::new_spanned(
                attr,
                "`#[placed(...)]` goes on fields: `#[placed(skip)]`",
            ));
        }
        let shape = match &input.data {
            Data::Struct(data) => Shape::Struct(
                fields(&data.fields, &mut errors)
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
            Data::Enum(data) => Shape::Enum(
                data.variants
                    .iter()
                    .map(|variant| Variant {
                        ident: variant.ident.clone(),
                        fields: fields(&variant.fields, &mut errors),
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
        Ok(PlacedType { input, shape })
    }
}
