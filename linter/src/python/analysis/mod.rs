//! The analyses of the Python checker, one module each, named as the Rust front end's are:
//! entry points, device choosers, environment writes, silent fallbacks, device flow and loop
//! transfers; and what they start from (the library calls, device values, device parameters,
//! assignments). Each adds what it looks at to the
//! [`Checker`](super::checker) as it walks.

pub(crate) mod assign;
pub(crate) mod calls;
pub(crate) mod choosers;
pub(crate) mod device_params;
pub(crate) mod device_values;
pub(crate) mod entry;
pub(crate) mod env;
pub(crate) mod fallback;
pub(crate) mod flow;
pub(crate) mod loops;
pub(crate) mod model_code;
