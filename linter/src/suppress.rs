//! Suppression comments: `// placement: allow(rule_a, rule_b)` on the line of a finding or on a
//! comment line just above it, and `//! placement: allow(rule)` for the whole file.

use std::collections::{HashMap, HashSet};

use crate::parse::LineIndex;
use crate::rules;

#[derive(Debug, Default)]
pub struct Suppressions {
    file: HashSet<String>,
    /// 0-based line → rules allowed there.
    lines: HashMap<usize, HashSet<String>>,
    /// Rule names that are not rules: (0-based line, name).
    pub unknown: Vec<(usize, String)>,
}

const MARKER: &str = "placement: allow(";

impl Suppressions {
    pub fn parse(text: &str) -> Suppressions {
        let mut found = Suppressions::default();
        for (line, content) in text.lines().enumerate() {
            let Some(comment_at) = content.find("//") else {
                continue;
            };
            let comment = &content[comment_at..];
            // A directive is a comment that starts with it; prose that mentions one is not.
            let body = comment.trim_start_matches(['/', '!']).trim_start();
            let Some(list) = body.strip_prefix(MARKER) else {
                continue;
            };
            let Some(end) = list.find(')') else { continue };
            let names: HashSet<String> = list[..end]
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
                .collect();
            for name in &names {
                if rules::find(name).is_none() {
                    found.unknown.push((line, name.clone()));
                }
            }
            if comment.starts_with("//!") {
                found.file.extend(names);
            } else {
                let comment_only = content[..comment_at].trim().is_empty();
                found
                    .lines
                    .entry(line)
                    .or_default()
                    .extend(names.iter().cloned());
                if comment_only {
                    found.lines.entry(line + 1).or_default().extend(names);
                }
            }
        }
        found
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
}
