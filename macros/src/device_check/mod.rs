//! `#[device_check]`: parse the options and the function into a small model, validate it, then
//! generate the checks.

mod expand;
mod model;

use proc_macro2::TokenStream;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    match model::CheckedFn::parse(args, item.clone()) {
        Ok(function) => expand::expand(&function),
        // The original item stays, so that one mistake does not hide the rest of the crate.
        Err(error) => {
            let error = error.to_compile_error();
            quote::quote! { #error #item }
        }
    }
}
