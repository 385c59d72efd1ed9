//! `#[device_check]` and `#[derive(Placed)]`: run-time placement checks that name the culprit.
//!
//! Use them through the runtime, as `placement::device_check` and `placement::Placed`; the
//! expansions call `::placement`.

mod crate_path;
mod device_check;
mod errors;
mod placed;
mod type_params;

use proc_macro::TokenStream;

/// Checks, before the body runs, that every tensor among the function's arguments (`self`
/// included, pattern arguments by their bindings) is on one device, and names the function,
/// each argument and its device when not.
///
/// Options: `expect = "cuda:0"` or `expect = <expression giving a Device>`, `skip(name, …)`
/// (arguments, `self`, or bindings of a pattern argument), `output` (check the returned value
/// too), `trace` (report the call's wall time and memory change per device through `tracing`)
/// and `crate = "path"` (where the runtime is, for a renamed dependency). On a mismatch, a
/// function returning `Result<_, E>` with `E: From<placement::DeviceCheckError>` returns the
/// error; any other panics at the caller's location. `PLACEMENT_DEVICE_CHECK=off|warn|error`
/// chooses at run time.
///
/// Values it cannot look into are compile errors rather than silent skips: a generic argument
/// without a `Placed` bound, tensors behind a lock, a derived type whose impl does not apply,
/// and a function of which nothing can be checked.
#[proc_macro_attribute]
pub fn device_check(args: TokenStream, item: TokenStream) -> TokenStream {
    device_check::expand(args.into(), item.into()).into()
}

/// Implements `placement::Placed` for a struct or enum: every field that holds tensors is
/// visited with its path (`encoder.layers[3].weight`) and moved by `to_device`, all or nothing;
/// other fields are skipped, and `#[placed(skip)]` skips one explicitly. The impl is bounded by
/// what the fields need (`FieldType: Placed` for each field whose type mentions a type
/// parameter), not by every type parameter. `#[placed(crate = "path")]` on the type names a
/// renamed runtime.
#[proc_macro_derive(Placed, attributes(placed))]
pub fn derive_placed(input: TokenStream) -> TokenStream {
    placed::expand(input.into()).into()
}
