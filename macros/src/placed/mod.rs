//! `#[derive(Placed)]`: parse the type into a small model, validate it, then generate the impl.

mod expand;
mod model;

use proc_macro2::TokenStream;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match model::PlacedType::parse(input) {
        Ok(model) => expand::expand(&model),
        Err(error) => error.to_compile_error(),
    }
}
