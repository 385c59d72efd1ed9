//! Reading and parsing source files, and mapping byte offsets to lines and columns.

/// Line starts of a source text, to turn byte offsets into 1-based lines and columns.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        LineIndex { starts }
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// Where line `line` (0-based) starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts
            .get(line)
            .copied()
            .unwrap_or_else(|| *self.starts.last().unwrap_or(&0))
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 1-based line and 1-based column in characters, as rustc reports them.
    pub fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let column = text
            .get(start..offset.min(text.len()))
            .map_or(0, |s| s.chars().count());
        (line + 1, column + 1)
    }

    /// The text of 0-based line `line`, without its line break.
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let start = self.line_start(line);
        let end = self.starts.get(line + 1).copied().unwrap_or(text.len());
        text[start..end].trim_end_matches(['\n', '\r'])
    }
}

/// Parses a whole file. Spans of the result carry byte offsets into `text`.
pub fn parse(text: &str) -> syn::Result<syn::File> {
    syn::parse_file(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_characters() {
        let text = "fn a() {}\n  let é = 1;\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 0), (1, 1));
        let at = text.find('=').unwrap();
        assert_eq!(index.position(text, at), (2, 9));
        assert_eq!(index.line_text(text, 1), "  let é = 1;");
        assert_eq!(index.line_count(), 3);
    }
}
