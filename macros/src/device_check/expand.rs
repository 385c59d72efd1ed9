//! The code `#[device_check]` generates: a check before the body (and after it, with `output`)
//! that costs a few comparisons when devices agree; the message is built only on failure.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::model::{CheckedFn, Expected};

fn expected_tokens(expected: &Option<Expected>) -> TokenStream {
    match expected {
        None => quote!(::core::option::Option::None),
        Some(Expected::Cpu) => quote!(::core::option::Option::Some(::placement::Device::Cpu)),
        Some(Expected::Cuda(ordinal)) => {
            quote!(::core::option::Option::Some(::placement::Device::Cuda(#ordinal)))
        }
        Some(Expected::Expr(expr)) => quote!(::placement::__private::expected(#expr)),
    }
}

/// `return <mismatch as the function's return value>`: `Err` where the return type allows,
/// a panic at the caller's location otherwise.
fn fail(function: &CheckedFn, mismatch: &Ident) -> TokenStream {
    match function.nameable_return() {
        Some(ty) => quote! {
            #[allow(unused_imports)]
            use ::placement::__private::{Panics as _, ReturnsError as _};
            return ::placement::__private::Ret::<#ty>::new().fail(#mismatch);
        },
        None => quote!(::placement::__private::panic_mismatch(#mismatch)),
    }
}

/// The function's name in messages: `Type::method` for methods.
fn name_tokens(function: &CheckedFn) -> TokenStream {
    let name = &function.name;
    if function.has_receiver {
        quote!(::placement::__private::method_name::<Self>(#name))
    } else {
        quote!(::std::string::String::from(#name))
    }
}

/// Visits `values` into `checker`, and on disagreement builds the report and fails.
fn check(
    function: &CheckedFn,
    values: &[(TokenStream, String)],
    expected: TokenStream,
    in_result: bool,
) -> TokenStream {
    let checker = format_ident!("__placement_checker");
    let report = format_ident!("__placement_report");
    let mismatch = format_ident!("__placement_mismatch");
    let observe = values.iter().map(|(value, name)| {
        quote! {
            ::placement::__private::Arg(&#value)
                .placement_visit(&::placement::TensorPath::root(#name), &mut |_, device| #checker.observe(device));
        }
    });
    let record = values.iter().map(|(value, name)| {
        quote! {
            #report.argument(#name, |visit| ::placement::__private::Arg(&#value).placement_visit(&::placement::TensorPath::root(#name), visit));
        }
    });
    let arguments = function.checked.iter().map(ToString::to_string);
    let name = name_tokens(function);
    let fail = fail(function, &mismatch);
    quote! {
        #[allow(unused_imports)]
        use ::placement::__private::{ViaOther as _, ViaPlaced as _};
        let mut #checker = ::placement::__private::Checker::new(#expected);
        #(#observe)*
        if !#checker.ok() {
            let mut #report = ::placement::__private::Report::new(#name, &[#(#arguments),*], #expected, #in_result);
            #(#record)*
            let #mismatch = #report.finish();
            if __placement_mode == ::placement::__private::Mode::Warn {
                ::placement::__private::warn_once(#mismatch);
            } else {
                #fail
            }
        }
    }
}

pub(super) fn expand(function: &CheckedFn) -> TokenStream {
    let item = &function.item;
    let (attrs, vis, sig, body) = (&item.attrs, &item.vis, &item.sig, &item.block);
    let values: Vec<(TokenStream, String)> = function
        .checked
        .iter()
        .map(|name| {
            (
                quote!(#name),
                name.to_string().trim_start_matches("r#").to_owned(),
            )
        })
        .collect();
    let expected = format_ident!("__placement_expected");
    let inputs = check(function, &values, quote!(#expected), false);
    let trace = function.trace.then(|| {
        let name = &function.name;
        quote!(let _placement_trace = ::placement::__private::Trace::start(#name);)
    });
    let is_async = sig.asyncness.is_some();
    // The panic of a failed check is reported at the caller's location (not for async
    // functions, whose body runs when the future is polled).
    let track_caller = (!is_async).then(|| quote!(#[track_caller]));

    let body = if function.output {
        let annotation = function.nameable_return().map(|ty| quote!(-> #ty));
        let run = if is_async {
            quote!(async move #body.await)
        } else {
            quote!((move || #annotation #body)())
        };
        let result = quote!(__placement_result);
        let outputs = check(
            function,
            &[(result.clone(), "result".to_owned())],
            quote!(__placement_inputs),
            true,
        );
        quote! {{
            let #result = #run;
            if ::placement::__private::ENABLED && __placement_mode != ::placement::__private::Mode::Off {
                #outputs
            }
            #result
        }}
    } else {
        quote!(#body)
    };

    let expected_value = expected_tokens(&function.expected);
    quote! {
        #(#attrs)*
        #track_caller
        #vis #sig {
            #trace
            let __placement_mode = if ::placement::__private::ENABLED {
                ::placement::__private::mode()
            } else {
                ::placement::__private::Mode::Off
            };
            #[allow(unused_variables, unused_mut)]
            let mut __placement_inputs: ::core::option::Option<::placement::Device> = ::core::option::Option::None;
            if ::placement::__private::ENABLED && __placement_mode != ::placement::__private::Mode::Off {
                let #expected: ::core::option::Option<::placement::Device> = #expected_value;
                #inputs
                __placement_inputs = #expected.or(__placement_checker.device());
            }
            #body
        }
    }
}
