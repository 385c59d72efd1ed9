//! The Python (PyTorch) front end, linted by the same rules as Rust: a file is parsed once and
//! walked into the same [`Event`]s, and everything from there on (the rules' wording, levels,
//! suppressions, baselines, reports) is shared.
//!
//! The parts, kept apart as the Rust front end's are:
//! - this module: the parser's entry ([`check`]) and the nesting weighed from the parser's
//!   tokens;
//! - `project`: what the project's files tell each other ([`Summary`], [`Asked`]) and the
//!   [`Project`] that answers (device choosers, what imports bind, the module graph; in
//!   `project/model_classes`, the class hierarchy and what model code hands on);
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
mod project;
mod semantic;

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
    /// Its dotted names from the project's import roots ([`ModuleFile::rooted`]): others
    /// import it by these too.
    pub rooted: Vec<String>,
    /// Whether model code is walked for tensors left on the CPU: `unplaced_tensor`, the one
    /// rule that needs it, is on for the file.
    pub model_code: bool,
}

pub(crate) use project::note_asked;
pub use project::{Answers, Asked, DeviceParam, ModuleFile, Project, Slot, Summary, TensorReturn};

/// One Python file checked: its events, or why it could not be; what the other files need of
/// it (its device choosers and its top-level imports); and what it asked of them.
#[derive(Debug)]
pub struct Checked<'a> {
    pub events: Result<Vec<Event<'a>>, Unparsed>,
    pub summary: Summary,
    pub asked: Asked,
    /// Why the whole file is a program's (a script, a test file), when it is.
    pub program: Option<String>,
}

/// Checks one file with what `cx.project` knows of the others. Runs on a stack big enough for
/// [`NESTING_BUDGET`], growing the caller's when it is smaller; a file nested deeper, or with a
/// syntax error, has no events but what could not be parsed.
pub fn check<'a>(text: &str, cx: &PyContext<'a>) -> Checked<'a> {
    with_module(text, |module, _| match module {
        Ok(module) => checker::check(module, text, cx),
        Err(unparsed) => Checked {
            events: Err(unparsed),
            summary: Summary::default(),
            asked: Asked::default(),
            program: None,
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
