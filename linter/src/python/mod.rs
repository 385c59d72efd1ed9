//! The Python (PyTorch) front end, linted by the same rules as Rust: a file is parsed once and
//! walked into the same [`Event`]s, and everything from there on (the rules' wording, levels,
//! suppressions, baselines, reports) is shared.
//!
//! The parts, kept apart as the Rust front end's are:
//! - this module: the parser's entry ([`check`]), the nesting weighed from the parser's tokens,
//!   and [`Project`], what the project's files tell each other (device choosers, what imports
//!   bind, which modules only programs import);
//! - `semantic`: what names mean: the scopes of a module and of each function, resolution of a
//!   name or attribute chain through them;
//! - `checker`: the traversal, with the state of the function being walked as one value;
//! - `analysis/`: one module per analysis (entry points, choosers, environment writes, silent
//!   fallbacks, device flow, loop transfers), named as the Rust front end's are.
//!
//! ## The parser
//! Candidates, compared on what a linter needs:
//!
//! | crate | current syntax (3.8–3.14: `match`, walrus, f-strings of 3.12, type parameters) | errors | speed | maintenance |
//! |---|---|---|---|---|
//! | `ruff_python_parser` | all of it, version-specific syntax reported apart | recovers and reports every error with its range | the fastest (a hand-written recursive descent parser, the one ruff and ty run) | released with every ruff release |
//! | `rustpython-parser` 0.4 | up to 3.11 or so; no PEP 695 or 3.12 f-strings | stops at the first error | a LALRPOP grammar, several times slower | last release 2024: RustPython moved to ruff's parser |
//! | `tree-sitter-python` | most of it, as a concrete syntax tree | error nodes, good for editors | fast, but a C library and an untyped tree to map by node kinds | maintained |
//!
//! `ruff_python_parser` is chosen. Astral publishes it as an internal component with no stable
//! API, so it is pinned to an exact version (`=0.0.10`, the last whose minimum Rust fits this
//! repository's toolchain) and upgraded on purpose. A file with a syntax error is one
//! `parse_error` finding at the error's range, and the other files are linted.

mod analysis;
mod checker;
mod semantic;

use std::sync::Arc;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

use ruff_python_ast::ModModule;
use ruff_python_ast::token::{Token, TokenKind};
use ruff_python_parser::{Mode, ParseErrorType, ParseOptions};
use ruff_text_size::Ranged;

use crate::analysis::Event;
use crate::api::Api;
use crate::source::{FileRole, NESTING_BUDGET, STACK_SIZE, Unparsed};

/// Everything the check of one Python file needs.
#[derive(Debug)]
pub struct PyContext<'a> {
    pub api: &'a Api,
    /// Library code; a program (a script: every function is where it starts); or a test file.
    pub role: FileRole,
    /// Whether the file's folder is a package (`__init__.py`): a main guard there is a module's
    /// demonstration, not the start of a script.
    pub in_package: bool,
    /// The file's dotted module name (`pkg.launch`), for configured entry points.
    pub module: String,
    /// Configured entry points, as dotted names (`pkg.launch.init_rank`).
    pub entry_points: &'a [String],
    /// Whether the file is a package's `__init__.py`, where relative imports start.
    pub is_init: bool,
    /// What the project's other files define.
    pub project: &'a Project,
    /// The file's folder: a module outside any package is imported by bare name from the
    /// scripts beside it.
    pub folder: String,
}

/// The project's Python files as far as the others need them: the functions that return a
/// device they chose (`def infer_device(): return "cuda" if ... else "cpu"`), what each
/// module's imports bind, so that a chooser re-exported by a package's `__init__.py` is
/// found under that name too, and which modules outside packages are programs' (the module
/// graph).
#[derive(Debug, Default)]
pub struct Project {
    choosers: FxHashSet<String>,
    /// The project's functions that take a device positionally: path → the parameters' places.
    device_params: FxHashMap<String, Vec<usize>>,
    /// Module → its summary, for the dotted path each of its names was imported from.
    imports: FxHashMap<String, Arc<Summary>>,
    /// The modules outside packages, as `folder|module`, and whether each is part of programs.
    programs: FxHashMap<String, bool>,
}

/// One Python file as the project's other files see it.
#[derive(Debug)]
pub struct ModuleFile {
    /// Its folder: a module outside packages is imported by bare name from the files beside it.
    pub folder: String,
    /// Its dotted module name through the packages that hold it (`pkg.train`).
    pub module: String,
    /// Its dotted names from the project's import roots, for a module outside packages: its
    /// path from the project's root (`backend/memory/management.py` →
    /// `backend.memory.management`, a namespace package's module), and without a leading `src`.
    pub rooted: Vec<String>,
    pub summary: Arc<Summary>,
}

impl Project {
    /// Gathers what the files' summaries say.
    ///
    /// A module outside packages is library code when a file of the project that is not a
    /// program imports it (by its bare name from a file beside it, or by a dotted name from the
    /// project's root: namespace packages), whatever its top level does. It is part of
    /// programs when only programs import it: a script's helper (`utils.py` beside `run.py`),
    /// and its helpers in turn, as a module only a binary declares is in Rust. One that no file
    /// imports is a program when it runs (a main guard, work at the top level), and library code
    /// when it only defines functions, classes and constants: it exists to be imported (by a
    /// notebook, a configuration file that names it, a plugin registry).
    pub fn new(files: impl IntoIterator<Item = ModuleFile>) -> Project {
        let files: Vec<ModuleFile> = files.into_iter().collect();
        // The modules outside packages, by folder and bare name, and by their rooted names.
        let mut beside: FxHashMap<(&str, &str), usize> = FxHashMap::default();
        let mut rooted: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (at, file) in files.iter().enumerate().filter(|(_, f)| f.summary.outside) {
            beside.insert((&file.folder, &file.module), at);
            for name in &file.rooted {
                rooted.entry(name).or_default().push(at);
            }
        }
        // The files that import each module outside packages (by its name, or by a path that
        // it starts).
        let mut importers: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
        if !beside.is_empty() {
            for (by, file) in files.iter().enumerate() {
                let mut imported = FxHashSet::default();
                for path in &file.summary.imported {
                    // A module beside the file is named by the path's first segment; a rooted
                    // name by a longer prefix of it.
                    let mut ends = path.match_indices('.').map(|(end, _)| end);
                    let first = ends.next().unwrap_or(path.len());
                    imported.extend(beside.get(&(file.folder.as_str(), &path[..first])).copied());
                    if !rooted.is_empty() && first < path.len() {
                        for end in ends.chain([path.len()]) {
                            imported
                                .extend(rooted.get(&path[..end]).into_iter().flatten().copied());
                        }
                    }
                }
                imported.remove(&by);
                for at in imported {
                    importers[at].push(by);
                }
            }
        }
        // Programs: what runs and is not imported; then, to the fixed point, what only programs
        // import (a helper of a helper of a script is the script's too).
        let mut program: Vec<bool> = files
            .iter()
            .zip(&importers)
            .map(|(file, importers)| {
                file.summary.program && (!file.summary.outside || importers.is_empty())
            })
            .collect();
        loop {
            let joined: Vec<usize> = beside
                .values()
                .copied()
                .filter(|&at| {
                    !program[at]
                        && !importers[at].is_empty()
                        && importers[at].iter().all(|&by| program[by])
                })
                .collect();
            if joined.is_empty() {
                break;
            }
            for at in joined {
                program[at] = true;
            }
        }
        let mut project = Project::default();
        for (file, program) in files.into_iter().zip(program) {
            project
                .choosers
                .extend(file.summary.choosers.iter().cloned());
            for (function, at) in &file.summary.device_params {
                let places = project.device_params.entry(function.clone()).or_default();
                places.push(*at);
            }
            if file.summary.outside {
                let key = format!("{}|{}", file.folder, file.module);
                project.programs.insert(key, program);
            }
            project.imports.insert(file.module, file.summary);
        }
        project
    }

    /// Whether `module`, a file of `folder` outside any package, is part of programs (see
    /// [`Project::new`]); `None` for a file the project does not know.
    pub fn is_program(&self, folder: &str, module: &str) -> Option<bool> {
        self.programs.get(&format!("{folder}|{module}")).copied()
    }

    /// The dotted path `name` was imported from at the top level of the project's `module`.
    pub fn imported(&self, module: &str, name: &str) -> Option<&str> {
        self.imports
            .get(module)?
            .imports
            .get(name)
            .map(CompactString::as_str)
    }

    /// Whether the dotted `path` names a device chooser of the project, through re-exports.
    pub fn chooses(&self, path: &str) -> bool {
        self.names(path, |path| self.choosers.contains(path))
    }

    /// Whether the dotted `path` names a function of the project whose parameter `at` (counted
    /// among the positional arguments of a call) is a device, through re-exports.
    pub fn takes_device(&self, path: &str, at: usize) -> bool {
        self.names(path, |path| {
            self.device_params
                .get(path)
                .is_some_and(|places| places.contains(&at))
        })
    }

    /// Whether `found` holds for `path` or for what it re-exports, followed through the
    /// modules' imports.
    fn names(&self, path: &str, found: impl Fn(&str) -> bool) -> bool {
        let mut path = path.to_owned();
        // Re-exports chain; a cycle of them ends here.
        for _ in 0..8 {
            if found(&path) {
                return true;
            }
            let Some((module, name)) = path.rsplit_once('.') else {
                return false;
            };
            match self
                .imports
                .get(module)
                .and_then(|summary| summary.imports.get(name))
            {
                Some(target) if *target != path => path = target.to_string(),
                _ => return false,
            }
        }
        false
    }

    /// What the project answers to what a file asked of it: a file whose questions are
    /// answered alike is checked alike.
    pub fn answer(&self, asked: &Asked) -> Answers {
        Answers {
            programs: asked
                .programs
                .as_ref()
                .map(|(folder, module, runs)| self.is_program(folder, module).unwrap_or(*runs)),
            imported: asked
                .imported
                .iter()
                .map(|(module, name)| self.imported(module, name).map(str::to_owned))
                .collect(),
            chooses: asked
                .chooses
                .iter()
                .map(|path| self.chooses(path))
                .collect(),
            takes_device: asked
                .takes_device
                .iter()
                .map(|(path, at)| self.takes_device(path, *at))
                .collect(),
        }
    }
}

/// The project's answers to the questions of one file ([`Asked`]), in the order asked.
#[derive(Debug, PartialEq, Eq)]
pub struct Answers {
    programs: Option<bool>,
    imported: Vec<Option<String>>,
    chooses: Vec<bool>,
    takes_device: Vec<bool>,
}

pub use checker::{Asked, Summary};

/// One Python file checked: its events, or why it could not be; what the other files need of
/// it (its device choosers and its top-level imports); and what it asked of them.
#[derive(Debug)]
pub struct Checked<'a> {
    pub events: Result<Vec<Event<'a>>, Unparsed>,
    pub summary: Summary,
    pub asked: Asked,
}

/// Checks one file with what `cx.project` knows of the others. Runs on a stack big enough for
/// [`NESTING_BUDGET`], growing the caller's when it is smaller; a file nested deeper, or with a
/// syntax error, has no events but what could not be parsed.
pub fn check<'a>(text: &str, cx: &PyContext<'a>) -> Checked<'a> {
    with_module(text, |module, _| match module {
        Ok(module) => {
            let (events, summary, asked) = checker::check(module, text, cx);
            Checked {
                events: Ok(events),
                summary,
                asked,
            }
        }
        Err(unparsed) => Checked {
            events: Err(unparsed),
            summary: Summary::default(),
            asked: Asked::default(),
        },
    })
}

/// Runs `f` on the syntax tree of `text` and its tokens, safely for any input. The parser grows
/// its own stack; the walks of the tree and its drop recurse as deep as it, so its depth is
/// weighed from the parser's tokens first ([`weigh`]), and `f` and the drop run on a stack big
/// enough for [`NESTING_BUDGET`]. A file nested deeper, or with a syntax error, is given to `f`
/// as what could not be parsed; a tree too deep to drop is leaked (a file no one writes by
/// hand: the run goes on).
fn with_module<T>(text: &str, f: impl FnOnce(Result<&ModModule, Unparsed>, &[Token]) -> T) -> T {
    stacker::maybe_grow(NESTING_BUDGET + (16 << 20), STACK_SIZE, || {
        let parsed = ruff_python_parser::parse_unchecked(text, ParseOptions::from(Mode::Module))
            .try_into_module()
            .expect("module mode parses a module");
        match weigh(parsed.tokens()) {
            Ok(()) => {
                let tree = match parsed.errors().first() {
                    Some(error) => Err(unparsed(error)),
                    None => Ok(parsed.syntax()),
                };
                f(tree, parsed.tokens())
            }
            Err(too_deep) => {
                let result = f(Err(too_deep), parsed.tokens());
                std::mem::forget(parsed);
                result
            }
        }
    })
}

/// The `#` comments of a Python file, as ranges of `text`.
pub fn comments(text: &str) -> Vec<std::ops::Range<usize>> {
    with_module(text, |_, tokens| {
        tokens
            .iter()
            .filter(|token| token.kind() == TokenKind::Comment)
            .map(|token| usize::from(token.start())..usize::from(token.end()))
            .collect()
    })
}

/// Conservative stack cost, in bytes, of one level of each construct in an unoptimised build
/// (parsing grows its own stack; the syntax tree's walks and its drop recurse as deep as it):
/// a bracket or an indented block, a prefix operator, and any other token of a statement.
const PER_GROUP: usize = 40 << 10;
const PER_PREFIX: usize = 12 << 10;
const PER_TOKEN: usize = 2 << 10;
// `weigh`'s shortcut: no token costs more than a group.
const _: () = assert!(PER_GROUP >= PER_PREFIX && PER_GROUP >= PER_TOKEN);

/// Checks from a file's tokens, before anything recurses into its syntax tree, that the tree
/// fits in [`NESTING_BUDGET`]: depth comes from brackets and indented blocks, and from runs of
/// tokens within one statement (`a + b + …`, `not not … x`). No token costs more than a group,
/// so a file of few enough tokens fits whatever they are, and they are not looked at.
fn weigh(tokens: &[Token]) -> Result<(), Unparsed> {
    if tokens.len().saturating_mul(PER_GROUP) <= NESTING_BUDGET {
        return Ok(());
    }
    weigh_kinds(tokens.iter().map(Token::kind))
}

fn weigh_kinds(kinds: impl Iterator<Item = TokenKind>) -> Result<(), Unparsed> {
    // For each open group: the cost of the path to it and the run so far.
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    for kind in kinds {
        let (base, run) = stack.last_mut().expect("the file's level stays");
        let weight = match kind {
            TokenKind::EndOfFile => return Ok(()),
            TokenKind::Newline | TokenKind::Comma | TokenKind::Semi => {
                *run = 0;
                continue;
            }
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace | TokenKind::Indent => {
                let path = *base + *run + PER_GROUP;
                if path > NESTING_BUDGET {
                    return Err(too_deep());
                }
                stack.push((path, 0));
                continue;
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace | TokenKind::Dedent => {
                if stack.len() > 1 {
                    stack.pop();
                }
                let (_, run) = stack.last_mut().expect("the file's level stays");
                *run += PER_TOKEN;
                continue;
            }
            TokenKind::Not
            | TokenKind::Minus
            | TokenKind::Plus
            | TokenKind::Tilde
            | TokenKind::Await
            | TokenKind::Lambda
            | TokenKind::Star
            | TokenKind::DoubleStar => PER_PREFIX,
            _ => PER_TOKEN,
        };
        *run += weight;
        if *base + *run > NESTING_BUDGET {
            return Err(too_deep());
        }
    }
    Ok(())
}

/// A file nested deeper than [`NESTING_BUDGET`]: the whole file is what could not be linted.
fn too_deep() -> Unparsed {
    Unparsed {
        span: 0..0,
        message: "nesting too deep to lint".to_owned(),
        label: "the syntax tree of this file is too deep".to_owned(),
        help: format!(
            "the file was not linted: its brackets, blocks or expression chains nest deeper \
             than the {} MiB of stack the linter gives a file; split the expression, or \
             exclude the file if it is generated",
            NESTING_BUDGET >> 20
        ),
    }
}

/// A syntax error, as a `parse_error` finding gives it.
fn unparsed(error: &ruff_python_parser::ParseError) -> Unparsed {
    let (start, end) = (
        usize::from(error.location.start()),
        usize::from(error.location.end()),
    );
    let label = match error.error {
        ParseErrorType::Lexical(_) => "invalid token",
        _ => "invalid syntax",
    };
    Unparsed {
        span: start..end.max(start),
        message: format!("could not parse the file as Python: {}", error.error),
        label: label.to_owned(),
        help: "fix the syntax error; until then nothing in this file is checked".to_owned(),
    }
}

/// A Python file's classes and functions (`Encoder.forward`) and their spans, for the keys of
/// baselines and fingerprints; none when the file does not parse.
pub fn items(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    use ruff_python_ast::Stmt;
    use ruff_python_ast::statement_visitor::{self, StatementVisitor};

    #[derive(Default)]
    struct Items {
        path: Vec<String>,
        found: Vec<(std::ops::Range<usize>, String)>,
    }
    impl<'a> StatementVisitor<'a> for Items {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            let name = match stmt {
                Stmt::FunctionDef(def) => def.name.as_str(),
                Stmt::ClassDef(class) => class.name.as_str(),
                _ => return statement_visitor::walk_stmt(self, stmt),
            };
            self.path.push(name.to_owned());
            let range = usize::from(stmt.start())..usize::from(stmt.end());
            self.found.push((range, self.path.join(".")));
            statement_visitor::walk_stmt(self, stmt);
            self.path.pop();
        }
    }
    with_module(text, |module, _| {
        let mut items = Items::default();
        if let Ok(module) = module {
            items.visit_body(&module.body);
        }
        items.found
    })
}

#[cfg(test)]
mod tests;
