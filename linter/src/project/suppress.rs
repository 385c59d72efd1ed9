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

use std::collections::HashMap;
use std::ops::Range;

use ra_ap_rustc_lexer::{DocStyle, FrontmatterAllowed, TokenKind, tokenize};

use crate::diagnostic::{Finding, Rule};
use crate::notebook::Cells;
use crate::rules;
use crate::source::LineIndex;

#[derive(Debug, Default)]
pub struct Suppressions {
    directives: Vec<Placed>,
    /// The directives for the whole file.
    file: Vec<usize>,
    /// 0-based line → the directives that apply there.
    lines: HashMap<usize, Vec<usize>>,
    /// Rule names that are not rules: (0-based line, name).
    pub unknown: Vec<(usize, String)>,
}

/// A directive where it was written, with which of its names silenced a finding.
#[derive(Debug)]
struct Placed {
    /// The comment.
    span: Range<usize>,
    names: Vec<String>,
    whole_file: bool,
    used: Vec<bool>,
}

/// A directive of a comment: the rules it names, and whether it is for the whole file.
struct Directive {
    names: Vec<String>,
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
        .fold(Vec::new(), |mut names: Vec<String>, name| {
            if !names.contains(&name) {
                names.push(name);
            }
            names
        });
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
            found.comment(text, &lines, start..offset, body, whole_file, None);
        }
        found
    }

    /// The directives of a Python file's `#` comments; in a notebook's joined code cells
    /// (`cells`), a comment on a cell's last line does not reach the next cell's first.
    pub fn parse_python(text: &str, cells: Option<&Cells>) -> Suppressions {
        let mut found = Suppressions::default();
        if !has_directives(text) {
            return found;
        }
        let lines = LineIndex::new(text);
        for comment in crate::python::comments(text) {
            let body = &text[comment.clone()][1..];
            found.comment(text, &lines, comment, body, false, cells);
        }
        found
    }

    /// Takes the directive of the comment at `span` whose text after `//` or `#` is `body`.
    fn comment(
        &mut self,
        text: &str,
        lines: &LineIndex,
        span: Range<usize>,
        body: &str,
        whole_file: bool,
        cells: Option<&Cells>,
    ) {
        let start = span.start;
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
        let at = self.directives.len();
        self.directives.push(Placed {
            span,
            used: vec![false; names.len()],
            names,
            whole_file,
        });
        if whole_file {
            self.file.push(at);
            return;
        }
        let before = &text[lines.line_start(line).min(start)..start];
        self.lines.entry(line).or_default().push(at);
        if before.trim().is_empty() && !cells.is_some_and(|cells| cells.starts_cell(line + 1)) {
            self.lines.entry(line + 1).or_default().push(at);
        }
    }

    /// Whether the file holds no directive.
    pub fn is_empty(&self) -> bool {
        self.directives.is_empty()
    }

    /// Whether `rule` is allowed at byte `offset`; each directive that allows it is used.
    fn allows(&mut self, rule: &str, offset: usize, lines: &LineIndex) -> bool {
        let on_line = self.lines.get(&lines.line_of(offset)).into_iter().flatten();
        let mut allowed = false;
        for &at in self.file.iter().chain(on_line) {
            let directive = &mut self.directives[at];
            if let Some(name) = directive.names.iter().position(|name| name == rule) {
                directive.used[name] = true;
                allowed = true;
            }
        }
        allowed
    }

    /// A file's findings without those its directives silence, and, when `enabled` says
    /// `unused_allow` is on, a finding for each name of a directive that silenced nothing
    /// (of a rule that is itself on: whether a rule that is off would find something is not
    /// known).
    pub fn apply(
        mut self,
        findings: Vec<Finding>,
        lines: &LineIndex,
        enabled: impl Fn(&'static Rule) -> bool,
    ) -> Vec<Finding> {
        if self.directives.is_empty() {
            return findings;
        }
        let mut kept: Vec<Finding> = findings
            .into_iter()
            .filter(|finding| !self.allows(finding.rule.name, finding.span.start, lines))
            .collect();
        let Some(unused) = rules::find("unused_allow").filter(|rule| enabled(rule)) else {
            return kept;
        };
        let mut silenced_nothing = Vec::new();
        for directive in &self.directives {
            let names: Vec<&str> = (directive.names.iter().zip(&directive.used))
                .filter(|(name, used)| {
                    !**used && rules::find(name).is_some_and(|rule| enabled(rule) && rule != unused)
                })
                .map(|(name, _)| name.as_str())
                .collect();
            if !names.is_empty() {
                silenced_nothing.push(rules::unused_allow(
                    directive.span.clone(),
                    &names,
                    names.len() == directive.names.len(),
                    directive.whole_file,
                ));
            }
        }
        kept.extend(
            silenced_nothing
                .into_iter()
                .filter(|finding| !self.allows(unused.name, finding.span.start, lines)),
        );
        kept
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
        let mut found = Suppressions::parse(text);
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
        let mut found = Suppressions::parse_python(text, None);
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
        let mut found = Suppressions::parse(text);
        let lines = LineIndex::new(text);
        assert!(found.allows("hardcoded_device", lines.line_start(0), &lines));
        assert!(!found.allows("implicit_device", lines.line_start(1), &lines));
        assert!(!found.allows("implicit_device", lines.line_start(2), &lines));
        assert!(found.allows("stray_set_device", lines.line_start(2), &lines));
    }
}
