//! The cudarc and candle API tables, checked against lists of functions generated from the
//! libraries' own source. The checks are here; the generators in `cudarc.rs` and `candle.rs`, and
//! the groups of cudarc's raw `sys` functions they classify by in `sys_groups.rs`.
//!
//! `src/api/cudarc-0.19.functions` lists every public function of cudarc 0.19.10 (the version
//! the workspace locks) that changes the calling thread's current device or context, acts on
//! whichever one is current, or takes a GPU ordinal; `src/api/candle-0.11-cuda.functions` does the
//! same for candle-core 0.11.1's CUDA device. The ignored `generate_*` tests rewrite the lists from
//! the source, read from the folder an environment variable names (cudarc's list first: candle's
//! generator reads it):
//!
//! ```text
//! CUDARC_SRC=~/.cargo/registry/src/index.crates.io-*/cudarc-0.19.10 \
//!     cargo test -p cargo-placement --test api_tables -- --ignored generate_cudarc
//! CANDLE_SRC=~/.cargo/registry/src/index.crates.io-*/candle-core-0.11.1 \
//!     cargo test -p cargo-placement --test api_tables -- --ignored generate_candle
//! ```
//!
//! The generators are heuristic (the rules are below, next to the names they apply to); the
//! lists they write are reviewed by hand. The other tests fail when `cudarc.toml` or `candle.toml`
//! and its list disagree, naming each difference. They read the tables with the `toml` crate
//! directly, not through the linter's `Api`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::visit::Visit;

const API_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/api");
const CUDARC_LIST: &str = "cudarc-0.19.functions";
const CANDLE_LIST: &str = "candle-0.11-cuda.functions";

/// The three roles the lists hold, in increasing precedence: a function that takes an ordinal
/// and also sets the current device is listed as setting it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    ExplicitDevice,
    CurrentDeviceUser,
    SetCurrentDevice,
}

impl Role {
    const ALL: [Role; 3] = [
        Role::ExplicitDevice,
        Role::CurrentDeviceUser,
        Role::SetCurrentDevice,
    ];

    fn name(self) -> &'static str {
        match self {
            Role::ExplicitDevice => "explicit_device",
            Role::CurrentDeviceUser => "current_device_user",
            Role::SetCurrentDevice => "set_current_device",
        }
    }

    fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.name() == text)
    }
}

/// How a table names a function: `[[item]]` by path, or `[[method]]` by receiver type and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fn,
    Method,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Fn => "fn",
            Kind::Method => "method",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        [Kind::Fn, Kind::Method]
            .into_iter()
            .find(|kind| kind.name() == text)
    }
}

/// What a list or a table says about one path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    kind: Kind,
    role: Role,
    ordinal: Option<usize>,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind.name(), self.role.name())?;
        match self.ordinal {
            Some(ordinal) => write!(f, ", ordinal = {ordinal}"),
            None => Ok(()),
        }
    }
}

type Listing = BTreeMap<String, Entry>;

/// The format of a list file, repeated in each file's header.
const FORMAT: &str = "\
# One function a line: KIND ROLE ORDINAL PATH, then an optional `# comment` saying why.
#   KIND     `fn` (an `[[item]]` of the table, by path) or `method` (a `[[method]]`: the path is
#            the receiver type, then the method name)
#   ROLE     set_current_device, current_device_user or explicit_device
#   ORDINAL  for explicit_device, the index of the argument that is a GPU ordinal (a method's
#            receiver not counted); `-` otherwise
#   PATH     the canonical path, as the table writes it (re-exports resolved)
# Lines starting with `#` are comments. Functions that only report the current context's memory
# (`mem_get_info`, `free_mem`, `cuMemGetInfo`, ...) are left out: they place nothing, as PyTorch's
# `mem_get_info()` places nothing.";

fn parse_list(text: &str) -> (Listing, Vec<String>) {
    let mut listing = Listing::new();
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let parsed = match fields.as_slice() {
            [kind, role, ordinal, path] => (|| {
                let ordinal = match *ordinal {
                    "-" => None,
                    number => Some(number.parse().ok()?),
                };
                let entry = Entry {
                    kind: Kind::parse(kind)?,
                    role: Role::parse(role)?,
                    ordinal,
                };
                Some(((*path).to_owned(), entry))
            })(),
            _ => None,
        };
        match parsed {
            Some((path, entry)) => {
                if listing.insert(path.clone(), entry).is_some() {
                    errors.push(format!("line {}: `{path}` is listed twice", index + 1));
                }
            }
            None => errors.push(format!(
                "line {}: expected `KIND ROLE ORDINAL PATH`, found `{line}`",
                index + 1
            )),
        }
    }
    (listing, errors)
}

fn strings(entry: &toml::Table, key: &str) -> Vec<String> {
    entry
        .get(key)
        .and_then(toml::Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(|value| value.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of a table file with one of the three roles, for which `keep` holds.
fn table_entries(text: &str, keep: impl Fn(&toml::Table) -> bool) -> (Listing, Vec<String>) {
    let mut listing = Listing::new();
    let mut errors = Vec::new();
    let table: toml::Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(err) => return (listing, vec![format!("the table does not parse: {err}")]),
    };
    for (section, kind) in [("item", Kind::Fn), ("method", Kind::Method)] {
        let entries = table
            .get(section)
            .and_then(toml::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for entry in entries.iter().filter_map(toml::Value::as_table) {
            let Some(role) = entry
                .get("role")
                .and_then(toml::Value::as_str)
                .and_then(Role::parse)
            else {
                continue;
            };
            if !keep(entry) {
                continue;
            }
            let ordinal = entry
                .get("ordinal")
                .and_then(toml::Value::as_integer)
                .and_then(|ordinal| usize::try_from(ordinal).ok());
            let paths = match kind {
                Kind::Fn => entry
                    .get("path")
                    .and_then(toml::Value::as_str)
                    .map(|path| vec![path.to_owned()])
                    .unwrap_or_default(),
                Kind::Method => {
                    let names = strings(entry, "names");
                    strings(entry, "on")
                        .iter()
                        .flat_map(|ty| names.iter().map(move |name| format!("{ty}::{name}")))
                        .collect()
                }
            };
            if paths.is_empty() {
                errors.push(format!(
                    "a `[[{section}]]` entry names no function: {entry}"
                ));
            }
            for path in paths {
                let entry = Entry {
                    kind,
                    role,
                    ordinal,
                };
                if let Some(previous) = listing.insert(path.clone(), entry.clone()) {
                    errors.push(format!(
                        "`{path}` has two entries in the table ({previous}; {entry})"
                    ));
                }
            }
        }
    }
    (listing, errors)
}

fn differences(list: &Listing, list_name: &str, table: &Listing, table_name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (path, listed) in list {
        match table.get(path) {
            None => found.push(format!(
                "`{path}` ({listed}) is in {list_name} but not in {table_name}"
            )),
            Some(entry) if entry != listed => found.push(format!(
                "`{path}` is {listed} in {list_name} but {entry} in {table_name}"
            )),
            Some(_) => {}
        }
    }
    for (path, entry) in table {
        if !list.contains_key(path) {
            found.push(format!(
                "`{path}` ({entry}) is in {table_name} but not in {list_name}"
            ));
        }
    }
    found
}

fn read_api_file(name: &str) -> String {
    let path = Path::new(API_DIR).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn check(table_name: &str, list_name: &str, keep: impl Fn(&toml::Table) -> bool) {
    let (list, mut problems) = parse_list(&read_api_file(list_name));
    let (table, table_problems) = table_entries(&read_api_file(table_name), keep);
    problems.extend(table_problems);
    problems.extend(differences(&list, list_name, &table, table_name));
    assert!(
        problems.is_empty(),
        "{table_name} and {list_name} disagree ({} differences); fix the table, or regenerate the \
         list as its header says and review it:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn cudarc_table_matches_the_function_list() {
    check("cudarc.toml", CUDARC_LIST, |_| true);
}

#[test]
fn candle_table_matches_the_cuda_function_list() {
    // Metal devices (`gpu = "metal"`) are candle's too, but not CUDA's.
    check("candle.toml", CANDLE_LIST, |entry| {
        entry
            .get("gpu")
            .and_then(toml::Value::as_str)
            .is_none_or(|gpu| gpu == "cuda")
    });
}

#[test]
fn the_list_format_reads_what_it_writes() {
    let (list, errors) = parse_list(
        "# comment\n\
         fn explicit_device 1 a::b  # why\n\
         method set_current_device - a::T::m\n\
         fn current_device_user x a::c\n\
         fn explicit_device 0 a::b\n",
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        list.get("a::b"),
        Some(&Entry {
            kind: Kind::Fn,
            role: Role::ExplicitDevice,
            ordinal: Some(0)
        })
    );
    let (table, errors) = table_entries(
        "[[item]]\npath = \"a::b\"\nrole = \"explicit_device\"\nordinal = 1\n\
         [[method]]\non = [\"a::T\", \"a::U\"]\nnames = [\"m\"]\nrole = \"set_current_device\"\n\
         [[item]]\npath = \"a::d\"\nrole = \"tensor_constructor\"\n",
        |_| true,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let found = differences(&list, "list", &table, "table");
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("`a::b` is fn explicit_device, ordinal = 0 in list but fn explicit_device, ordinal = 1 in table"), "{found:?}");
    assert!(found[1].contains("`a::U::m`"), "{found:?}");
}

mod candle;
mod cudarc;
mod sys_groups;
