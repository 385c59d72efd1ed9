//! Entry points: where a program chooses its devices, so the rules leave it alone. `main` and
//! the other functions of a program's files (a bin or example target's root and the modules
//! only programs declare), test and bench targets and build scripts, `#[test]`-like and
//! `#[cfg(test)]` code, the closure of a thread's spawn (the per-rank pattern: in library code
//! only for the thread's own current context), and the functions the configuration names.

use super::FnInfo;
use crate::api::Role;
use crate::rust::resolve::semantic::Semantic;
use crate::source::FileRole;

/// What the file's role says.
#[derive(Debug)]
pub(in crate::rust::resolve) struct FileState {
    /// Inside `#[cfg(test)]` or a file that is all entry point.
    pub(in crate::rust::resolve) entry_region: bool,
    /// In a program's files, which have no callers outside the program.
    pub(in crate::rust::resolve) in_program: bool,
    /// A program's start-up code: every function is where the program chooses.
    startup: bool,
}

impl FileState {
    pub(in crate::rust::resolve) fn new(role: FileRole) -> FileState {
        let program = matches!(role, FileRole::BinaryRoot | FileRole::BinaryModule);
        FileState {
            entry_region: role == FileRole::EntryFile,
            in_program: program,
            startup: program,
        }
    }
}

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// Inside an entry point now.
    pub(in crate::rust::resolve) in_entry: bool,
    /// Inside a function that runs when the library is loaded (`#[ctor]`, `#[ctor::ctor]`),
    /// before any caller could choose anything.
    pub(in crate::rust::resolve) at_load: bool,
    /// Inside the closure of a thread that library code spawns: the thread's current context
    /// is its own to bind and use (the per-rank pattern), but a device it chooses (a best
    /// available one, a literal GPU) is still the library's choice for its caller.
    pub(in crate::rust::resolve) library_thread: bool,
}

impl State {
    /// Whether a use of an API with `role` is where the program chooses: in an entry point, or,
    /// in a thread the library spawned, a use or binding of the thread's own current context.
    pub(in crate::rust::resolve) fn chooses(&self, role: &Role) -> bool {
        self.in_entry
            || (self.library_thread
                && matches!(role, Role::CurrentDeviceUser | Role::SetCurrentDevice))
    }
}

impl State {
    /// Outside functions (a `const`'s value): in a program's files, the program's choice as
    /// its functions are.
    pub(in crate::rust::resolve) fn at_file_level(file: &FileState) -> State {
        State {
            in_entry: file.entry_region || file.startup,
            at_load: false,
            library_thread: false,
        }
    }

    pub(in crate::rust::resolve) fn for_function(
        file: &FileState,
        sem: &Semantic<'_, '_>,
        info: &FnInfo<'_>,
    ) -> State {
        let configured = !sem.cx.entry_points.is_empty() && {
            let mut full = sem.scopes.local_path(info.owner.unwrap_or(&info.name));
            if info.owner.is_some() {
                full.push(info.name.clone());
            }
            let full = full.join("::");
            let crate_relative = full.replacen(sem.cx.crate_name, "crate", 1);
            sem.cx
                .entry_points
                .iter()
                .any(|entry| *entry == full || *entry == crate_relative)
        };
        State {
            in_entry: file.entry_region
                || file.startup
                || configured
                || info.attrs.iter().any(is_test_attr)
                || is_cfg_test(info.attrs),
            at_load: info.attrs.iter().any(|attr| {
                attr.path()
                    .segments
                    .last()
                    .is_some_and(|last| last.ident == "ctor")
            }),
            library_thread: false,
        }
    }
}

/// `#[test]`, `#[bench]` and the test attributes of common test crates (`#[tokio::test]`,
/// `#[rstest]`, `#[wasm_bindgen_test]`, which runs natively as a `tokio::test`).
fn is_test_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    let last = path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    matches!(
        last.as_str(),
        "test" | "bench" | "rstest" | "test_case" | "quickcheck" | "wasm_bindgen_test"
    ) && !path.is_ident("cfg")
}

/// `#[cfg(test)]`, or a `cfg` that requires `test` among other conditions
/// (`#[cfg(all(test, feature = "cuda"))]`).
pub(in crate::rust::resolve) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    fn requires_test(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(path) => path.is_ident("test"),
            syn::Meta::List(list) if list.path.is_ident("all") => list
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|conditions| conditions.iter().any(requires_test)),
            _ => false,
        }
    }
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| requires_test(&meta))
    })
}

pub(super) fn enter_region(file: &mut FileState, state: &mut State, region: bool) -> (bool, bool) {
    let outer = (file.entry_region, state.in_entry);
    file.entry_region |= region;
    state.in_entry |= region;
    outer
}

pub(super) fn leave_region(file: &mut FileState, state: &mut State, outer: (bool, bool)) {
    file.entry_region = outer.0;
    state.in_entry = outer.1;
}
