//! Suppression comments: `// placement: allow(rule_a, rule_b)` on the line of a finding or on a
//! comment line just above it, and `//! placement: allow(rule)` or `// placement:
//! allow-file(rule)` for the whole file; in Python, `# placement: allow(rule_a, rule_b)` the same
//! way, and `# placement: allow-file(rule)` for the whole file.
//!
//! A directive is read as people write it: without spaces (`#placement:allow(x)`), in another
//! case (`Allow`), or after another tool's pragma in the same comment (`# type: ignore`, then
//! the directive). Prose that mentions one is not one.
//!
//! Comments are found by each language's own lexer (`ra_ap_rustc_lexer`, ruff's), so `//` or
//! `#` inside a string (`"http://x"`) or a directive written inside a string literal is never
//! taken for one.

use std::collections::{HashMap, HashSet};

use ra_ap_rustc_lexer::{DocStyle, FrontmatterAllowed, TokenKind, tokenize};

use crate::rules;
use crate::source::LineIndex;

#[derive(Debug, Default)]
pub struct Suppressions {
    file: HashSet<String>,
    /// 0-based line → rules allowed there.
    lines: HashMap<usize, HashSet<String>>,
    /// Rule names that are not rules: (0-based line, name).
    pub unknown: Vec<(usize, String)>,
}

/// A directive of a comment: the rules it names, and whether it is for the whole file.
struct Directive {
    names: HashSet<String>,
    whole_file: bool,
}

/// The directive of a comment's body (`placement: allow(a, b)`, `placement: allow-file(a)`), if
/// it holds one: at its start, or after another pragma (`type: ignore # placement: ...`).
fn directive(body: &str) -> Option<Directive> {
    let lower = body.to_ascii_lowercase();
    let at = lower.find("placement")?;
    // At the start, or after another pragma (`type: ignore #`, `noqa;`, `... //`); prose that
    // quotes a directive (in backticks) is not one.
    let before = lower[..at].trim_end();
    let after_pragma = (before.ends_with('#') || before.ends_with(';') || before.ends_with("//"))
        && !before.contains('`');
    if !before.is_empty() && !after_pragma {
        return None;
    }
    let rest = lower[at + "placement".len()..].trim_start();
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    let (whole_file, rest) = match rest.strip_prefix("allow-file") {
        Some(rest) => (true, rest),
        None => (false, rest.strip_prefix("allow")?),
    };
    let list = rest.trim_start().strip_prefix('(')?;
    let end = list.find(')')?;
    // The names as written (rule names are lowercase; one in capitals is not found and said).
    let start = body.len() - list.len();
    let names = body[start..start + end]
        .split(',')
        .map(|name| rules::bare_name(name.trim()))
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    Some(Directive { names, whole_file })
}

/// Whether `text` may hold a `placement: allow(...)` directive, in any of the ways it is
/// written: the word `placement` (not `replacement`), then a colon or `allow`. Most files hold
/// none, and are not lexed for comments again.
pub fn has_directives(text: &str) -> bool {
    let bytes = text.as_bytes();
    let directive_at = |at: usize| {
        // `at` is where `lacement` starts: a `p` before it that no letter precedes.
        let word_start = at > 0
            && bytes[at - 1].eq_ignore_ascii_case(&b'p')
            && (at < 2 || !bytes[at - 2].is_ascii_alphanumeric());
        let rest = text[at + "lacement".len()..].trim_start();
        word_start
            && (rest.starts_with(':')
                || rest
                    .get(..5)
                    .is_some_and(|word| word.eq_ignore_ascii_case("allow")))
    };
    [b"lacement".as_slice(), b"LACEMENT".as_slice()]
        .iter()
        .any(|needle| memchr::memmem::find_iter(bytes, needle).any(directive_at))
}

impl Suppressions {
    pub fn parse(text: &str) -> Suppressions {
        let mut found = Suppressions::default();
        // Most files have no directive: look for one before lexing.
        if !has_directives(text) {
            return found;
        }
        let lines = LineIndex::new(text);
        let mut offset = 0;
        for token in tokenize(text, FrontmatterAllowed::No) {
            let start = offset;
            offset += token.len as usize;
            let TokenKind::LineComment { doc_style } = token.kind else {
                continue;
            };
            let comment = &text[start..offset];
            let (body, whole_file) = match doc_style {
                None => (&comment[2..], false),
                Some(DocStyle::Inner) => (&comment[3..], true),
                // `///` documents the next item; it holds no directives.
                Some(DocStyle::Outer) => continue,
            };
            found.comment(text, &lines, start, body, whole_file);
        }
        found
    }

    /// The directives of a Python file's `#` comments.
    pub fn parse_python(text: &str) -> Suppressions {
        let mut found = Suppressions::default();
        if !has_directives(text) {
            return found;
        }
        let lines = LineIndex::new(text);
        for comment in crate::python::comments(text) {
            let start = comment.start;
            found.comment(text, &lines, start, &text[comment][1..], false);
        }
        found
    }

    /// Takes the directive of the comment at `start` whose text after `//` or `#` is `body`.
    fn comment(
        &mut self,
        text: &str,
        lines: &LineIndex,
        start: usize,
        body: &str,
        whole_file: bool,
    ) {
        let Some(Directive {
            names,
            whole_file: said_whole_file,
        }) = directive(body)
        else {
            return;
        };
        let whole_file = whole_file || said_whole_file;
        let line = lines.line_of(start);
        for name in &names {
            if rules::find(name).is_none() {
                self.unknown.push((line, name.clone()));
            }
        }
        if whole_file {
            self.file.extend(names);
            return;
        }
        let before = &text[lines.line_start(line).min(start)..start];
        let comment_only = before.trim().is_empty();
        self.lines
            .entry(line)
            .or_default()
            .extend(names.iter().cloned());
        if comment_only {
            self.lines.entry(line + 1).or_default().extend(names);
        }
    }

    /// Whether `rule` is allowed at byte `offset`.
    pub fn allows(&self, rule: &str, offset: usize, lines: &LineIndex) -> bool {
        self.file.contains(rule)
            || self
                .lines
                .get(&lines.line_of(offset))
                .is_some_and(|allowed| allowed.contains(rule))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_apply_to_their_line_the_next_or_the_file() {
        // Split so that linting this repository does not read a directive in the literal.
        let text = concat!(
            "//! placement: allow(parse_error)\n",
            "let a = 1; // placement: allow(implicit_device, ",
            "nonsense)\n",
            "// placement: allow(hardcoded_device)\n",
            "let b = 2;\n",
            "let c = 3;\n",
            "/// Prose mentioning `// placement: allow(stray_set_device)` is no directive.\n",
        );
        let found = Suppressions::parse(text);
        let lines = LineIndex::new(text);
        let at = |line: usize| lines.line_start(line);
        assert!(found.allows("parse_error", at(4), &lines));
        assert!(found.allows("implicit_device", at(1), &lines));
        assert!(!found.allows("implicit_device", at(2), &lines));
        assert!(found.allows("hardcoded_device", at(3), &lines));
        assert!(!found.allows("hardcoded_device", at(4), &lines));
        assert_eq!(found.unknown, vec![(1, "nonsense".to_owned())]);
        assert!(!found.allows("stray_set_device", at(5), &lines));
        assert!(!found.allows("stray_set_device", at(6), &lines));
    }

    #[test]
    fn directives_are_read_as_people_write_them() {
        // Split so that linting this repository does not read a directive in the literal.
        let text = concat!(
            "x = 1  #placement:",
            "allow(implicit_device)\n",
            "x = 2  # Placement: ",
            "Allow(hardcoded_device)\n",
            "x = 3  # type: ignore # placement: ",
            "allow(stray_set_device)\n",
            "x = 4  # to silence it, write placement: ",
            "allow(transfer_in_loop)\n",
            "# placement: ",
            "allow-file(device_mismatch)\n",
        );
        let found = Suppressions::parse_python(text);
        let lines = LineIndex::new(text);
        let at = |line: usize| lines.line_start(line);
        assert!(found.allows("implicit_device", at(0), &lines));
        assert!(found.allows("hardcoded_device", at(1), &lines));
        assert!(found.allows("stray_set_device", at(2), &lines));
        assert!(
            !found.allows("transfer_in_loop", at(3), &lines),
            "prose is no directive"
        );
        assert!(
            found.allows("device_mismatch", at(0), &lines),
            "for the whole file"
        );
    }

    #[test]
    fn comments_are_found_by_the_lexer_not_by_searching_for_slashes() {
        let text = concat!(
            "let u = \"http://x\"; // placement: ",
            "allow(hardcoded_device)\n",
            "let s = \"// placement: ",
            "allow(implicit_device)\";\n",
            "let r = r#\"\"# ; /* // */ let d = 1; // placement: ",
            "allow(stray_set_device)\n",
        );
        let found = Suppressions::parse(text);
        let lines = LineIndex::new(text);
        assert!(found.allows("hardcoded_device", lines.line_start(0), &lines));
        assert!(!found.allows("implicit_device", lines.line_start(1), &lines));
        assert!(!found.allows("implicit_device", lines.line_start(2), &lines));
        assert!(found.allows("stray_set_device", lines.line_start(2), &lines));
    }
}
