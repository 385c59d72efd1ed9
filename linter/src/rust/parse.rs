//! Parsing Rust files: the checks that come before `syn` (nesting that fits the stack, and in
//! one pass of the lexer the summary the workspace model is built from), and parsing in the
//! original file's coordinates (a byte order mark or a `#!` line is blanked, not stripped, so
//! that every offset stays where it is in the file).

use std::borrow::Cow;
use std::ops::Range;

use crate::rust::model::summary::{ModuleSummary, TokenKind, Tokens, summarize};
use crate::rust::skeleton::{self, Bodies};
use crate::source::{self, BOM, NESTING_BUDGET, Read, STACK_SIZE, Unparsed};

/// The text `syn` parses: `text` with a leading byte order mark and a `#!` line turned into
/// spaces of the same length, which `syn::parse_file` would strip and so shift every offset.
pub fn blank_prelude(text: &str) -> Cow<'_, str> {
    let bom = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let shebang = ra_ap_rustc_lexer::strip_shebang(&text[bom..]).unwrap_or(0);
    if bom + shebang == 0 {
        return Cow::Borrowed(text);
    }
    let blank = " ".repeat(bom + shebang);
    Cow::Owned(blank + &text[bom + shebang..])
}

/// Conservative stack cost, in bytes, of one level of each construct in an unoptimised build:
/// measured on `syn` and the walker (nested blocks 22 KiB a level, modules 31 KiB, generic types
/// 52 KiB, closures 17 KiB, arrays 15 KiB, prefix operators 4 KiB, a method call 2 KiB), with a
/// margin of about 40%. An optimised build needs a third to a quarter of it.
const PER_GROUP: usize = 40 << 10;
const PER_ANGLE: usize = 72 << 10;
const PER_PREFIX: usize = 12 << 10;
const PER_TOKEN: usize = 2 << 10;

/// Checks, before `syn` recurses into it, that the deepest syntax tree `text` can make fits in
/// [`NESTING_BUDGET`]. Depth comes from nested brackets, and from runs of tokens within one
/// statement (a chain of 5,000 method calls, `a + b + …`, `!!!x`, `Vec<Vec<…>>`): each level
/// takes at least one token. A statement ends at `;`, `,` or a brace group that nothing
/// continues (`else`, `.`, `?`).
pub fn check_nesting(text: &str) -> Result<(), Unparsed> {
    check_tokens(&Tokens::new(text))
}

/// [`check_nesting`] on a file's tokens.
pub fn check_tokens(tokens: &Tokens<'_>) -> Result<(), Unparsed> {
    // For each open group: the cost of the path to it and the run so far.
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    let mut after_brace = false;
    for token in &tokens.tokens {
        let (start, end) = (token.start as usize, token.end as usize);
        let kind = token.kind;
        let (base, run) = stack.last_mut().expect("the file's level stays");
        // A closed brace group ends a statement unless the next token continues it.
        if std::mem::take(&mut after_brace) {
            let continues = matches!(kind, TokenKind::Dot | TokenKind::Question)
                || (kind == TokenKind::Ident && &tokens.text[start..end] == "else");
            if !continues {
                *run = 0;
            }
        }
        let weight = match kind {
            TokenKind::Semi | TokenKind::Comma => {
                *run = 0;
                continue;
            }
            TokenKind::OpenParen | TokenKind::OpenBracket | TokenKind::OpenBrace => {
                let path = *base + *run + PER_GROUP;
                stack.push((path, 0));
                if path > NESTING_BUDGET {
                    return Err(too_deep(start..end));
                }
                continue;
            }
            TokenKind::CloseParen | TokenKind::CloseBracket | TokenKind::CloseBrace => {
                if stack.len() > 1 {
                    stack.pop();
                }
                let (_, run) = stack.last_mut().expect("the file's level stays");
                *run += PER_TOKEN;
                after_brace = kind == TokenKind::CloseBrace;
                continue;
            }
            TokenKind::Lt => PER_ANGLE,
            TokenKind::Bang
            | TokenKind::Minus
            | TokenKind::Star
            | TokenKind::And
            | TokenKind::Or => PER_PREFIX,
            _ => PER_TOKEN,
        };
        *run += weight;
        if *base + *run > NESTING_BUDGET {
            return Err(too_deep(start..end));
        }
    }
    Ok(())
}

fn too_deep(span: Range<usize>) -> Unparsed {
    Unparsed {
        span,
        message: "nesting too deep to lint".to_owned(),
        label: "the syntax tree is too deep from here on".to_owned(),
        help: format!(
            "the file was not linted: its brackets or expression chains nest deeper than the \
             {} MiB of stack the linter gives a file; split the expression, or exclude the \
             file if it is generated",
            NESTING_BUDGET >> 20
        ),
    }
}

/// What discovery learns of a file before it is linted, in one pass of the lexer: whether it is
/// lintable (read, valid UTF-8, within the size limit, nested within [`NESTING_BUDGET`]), so
/// that linting can skip the check, and its summary for the workspace model. A file that failed
/// (or was not checked) is checked again when linted, where its problem is reported.
#[derive(Debug, Default)]
pub struct Prescan {
    pub lintable: bool,
    pub summary: Option<ModuleSummary>,
}

/// `wanted` tells the types whose members the summary keeps ([`summarize`]).
pub fn prescan(path: &std::path::Path, limit: u64, wanted: &dyn Fn(&str) -> bool) -> Prescan {
    let Ok(Read::Bytes(bytes)) = source::read_within(path, limit) else {
        return Prescan::default();
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Prescan::default();
    };
    let tokens = Tokens::new(&text);
    Prescan {
        lintable: check_tokens(&tokens).is_ok(),
        summary: Some(summarize(&tokens, wanted)),
    }
}

/// Whether [`check_nesting`] has to run before a text is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// Not known: check it.
    Unchecked,
    /// [`prescan`] found it within the budget.
    Checked,
}

/// Why a text has no syntax tree.
#[derive(Debug)]
pub enum NoTree {
    /// `syn` rejected it.
    Syntax(syn::Error),
    /// It was not parsed (too deep).
    Unparsed(Unparsed),
}

/// Runs `f` on the syntax tree of `text`, safely for any input: nesting is checked first, and
/// parsing, `f` and dropping the tree (which recurses as deep as it) run on a stack big enough
/// for [`NESTING_BUDGET`], the caller's own when it is. Spans carry byte offsets into `text`
/// (a byte order mark or `#!` line is blanked, not stripped).
pub fn with_syntax_tree<T>(
    text: &str,
    nesting: Nesting,
    f: impl FnOnce(Result<&syn::File, NoTree>) -> T,
) -> T {
    on_parse_stack(text, nesting, |checked| match checked {
        Err(unparsed) => f(Err(NoTree::Unparsed(unparsed))),
        Ok(()) => match parse(&blank_prelude(text)) {
            Ok(file) => f(Ok(&file)),
            Err(error) => f(Err(NoTree::Syntax(error))),
        },
    })
}

/// [`with_syntax_tree`] for a big file: `f` is given its skeleton ([`skeleton`]). `None` when
/// the text is nested too deep or its skeleton does not parse (parse it whole: that says why).
pub fn with_skeleton<T>(
    text: &str,
    nesting: Nesting,
    f: impl FnOnce(&syn::File, Bodies) -> Option<T>,
) -> Option<T> {
    on_parse_stack(text, nesting, |checked| {
        let (file, bodies) = checked
            .ok()
            .and_then(|()| skeleton::parse(&blank_prelude(text)))?;
        f(&file, bodies)
    })
}

/// Runs `f`, told whether `text`'s nesting fits, on a stack big enough for [`NESTING_BUDGET`]
/// (the caller's own when it is), then lets go of the spans of `text`.
fn on_parse_stack<T>(text: &str, nesting: Nesting, f: impl FnOnce(Result<(), Unparsed>) -> T) -> T {
    stacker::maybe_grow(NESTING_BUDGET + (16 << 20), STACK_SIZE, || {
        let checked = match nesting {
            Nesting::Checked => Ok(()),
            Nesting::Unchecked => check_nesting(text),
        };
        let result = f(checked);
        // Spans are offsets into a per-thread source map that only grows; every span of this
        // text has been used, so the map can start afresh and memory stays bounded.
        proc_macro2::extra::invalidate_current_thread_spans();
        result
    })
}

/// Parses a whole file (after [`blank_prelude`]). Spans of the result carry byte offsets into
/// `text`. A tokenizing error points where the tokenizer stopped. Deep input can exhaust the
/// stack: use [`with_syntax_tree`] unless [`check_nesting`] passed on a big enough stack.
pub fn parse(text: &str) -> syn::Result<syn::File> {
    let tokens: proc_macro2::TokenStream = text.parse().map_err(|err: proc_macro2::LexError| {
        syn::Error::new(err.span(), "unbalanced delimiters or an invalid token")
    })?;
    syn::parse2(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_and_a_shebang_keep_their_bytes() {
        let text = "\u{feff}#!/usr/bin/env run-cargo-script\nfn main() {}\n";
        let blanked = blank_prelude(text);
        assert_eq!(blanked.len(), text.len());
        assert!(blanked.trim_start().starts_with("fn main"));
        let file = parse(&blanked).expect("parses");
        let syn::Item::Fn(main) = &file.items[0] else {
            panic!("a function")
        };
        let at = text.find("main").unwrap();
        assert_eq!(main.sig.ident.span().byte_range().start, at);
        // Columns count from after the mark, as an editor shows the line.
        let text = "\u{feff}fn f() {}";
        assert_eq!(
            crate::source::LineIndex::new(text).position(text, 3),
            (1, 1)
        );
        // `#![...]` is an inner attribute, not a shebang.
        assert_eq!(blank_prelude("#![allow(x)]\n"), "#![allow(x)]\n");
    }

    #[test]
    fn nesting_is_checked_before_parsing() {
        let blocks = |n: usize| format!("fn f() {{{}{}}}", "{".repeat(n), "}".repeat(n));
        assert!(check_nesting(&blocks(450)).is_ok());
        let chain = format!("fn f() {{ x{}; }}", ".a()".repeat(5_000));
        assert!(check_nesting(&chain).is_ok());
        let parens = format!("fn f() {{ {}1{} }}", "(".repeat(1_024), ")".repeat(1_024));
        assert!(check_nesting(&parens).is_ok());
        let err = check_nesting(&blocks(20_000)).unwrap_err();
        assert_eq!(err.message, "nesting too deep to lint");
        // Many items, statements and match arms at one level are not depth.
        let items = "fn a() {}\n".repeat(100_000);
        assert!(check_nesting(&items).is_ok());
        let arms = format!(
            "fn f(x: u32) {{ match x {{ {} _ => {{}} }} }}",
            "1 => {} ".repeat(100_000)
        );
        assert!(check_nesting(&arms).is_ok());
        // Brackets in strings and comments are not nesting.
        assert!(
            check_nesting(&format!(
                "// {}\nconst S: &str = \"{}\";",
                "{".repeat(50_000),
                "(".repeat(50_000)
            ))
            .is_ok()
        );
    }
}
