//! Resolution: each file is walked once with its module scopes, imports and local items, and
//! every use of a known API (resolved by path, never by name alone) becomes an [`Event`] that
//! the rules look at.

mod scope;
mod walker;

use std::collections::{HashMap, HashSet};
use std::ops::Range;

pub use walker::walk;

use crate::api::{Api, Entry};

/// What the resolver knows about the package a file belongs to.
#[derive(Clone, Debug, Default)]
pub struct CrateContext {
    /// Names a dependency is known by in code → the crate's real name
    /// (`candle` → `candle_core` for `candle = { package = "candle-core" }`).
    pub renames: HashMap<String, String>,
    /// The real names of the dependencies; `None` when there is no manifest to tell.
    pub dependencies: Option<HashSet<String>>,
}

/// How a file takes part in its target, which decides where entry points are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileRole {
    /// Library code: only `#[test]`, `#[cfg(test)]`, thread closures and configured functions
    /// are entry points.
    Library,
    /// The root file of a bin or example target: `main` and the other functions of the file are
    /// the program's start-up code, so they are entry points too.
    BinaryRoot,
    /// Another file of a bin or example target: library-like, but its code has no callers
    /// outside the program.
    BinaryModule,
    /// A file of a test or bench target, or a build script: all of it is an entry point.
    EntryFile,
}

/// Everything the walk of one file needs.
#[derive(Debug)]
pub struct FileContext<'a> {
    pub api: &'a Api,
    pub krate: &'a CrateContext,
    /// The name of the crate (target) the file is compiled into, as its own paths start with it.
    pub crate_name: &'a str,
    pub role: FileRole,
    /// The file's module path inside its crate, without the crate name (`["launch"]`).
    pub module: Vec<String>,
    /// Configured entry points, as full paths (`my_lib::launch::init_rank`).
    pub entry_points: &'a [String],
}

/// A use of a known API.
#[derive(Debug)]
pub struct ApiUse<'a> {
    pub entry: &'a Entry,
    /// The canonical path, or `Type::method` for methods.
    pub path: String,
    /// How the source names it (`Device::cuda_if_available`, `.bind_to_thread()`).
    pub shown: String,
    /// The tokens to point at: the path, or the method name.
    pub span: Range<usize>,
    /// Whether the item is used as a value (`unwrap_or_else(Device::cuda_if_available)`)
    /// rather than called.
    pub as_value: bool,
    /// The GPU-ordinal argument when it is an integer literal: its value and span.
    pub literal_ordinal: Option<(u128, Range<usize>)>,
}

/// What the rules see, in source order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A use of a known API.
    Api {
        use_: ApiUse<'a>,
        in_entry_point: bool,
        /// In a bin or example target, whose code has no callers outside the program.
        in_program: bool,
    },
    /// `"cuda:N".parse()`: a device named by a string literal.
    DeviceString {
        ordinal: u128,
        span: Range<usize>,
        in_entry_point: bool,
    },
    /// `std::env::set_var` of a variable named by a literal or a constant.
    SetEnvVar {
        variable: String,
        span: Range<usize>,
        in_entry_point: bool,
        /// The first device use earlier in the same function, if any.
        after_device_use: Option<Range<usize>>,
    },
}
