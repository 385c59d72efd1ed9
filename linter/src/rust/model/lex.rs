//! A fast lexer for the pre-check of every file, which needs only the shape of the tokens:
//! identifiers, literals, lifetimes, brackets and punctuation, with whitespace and comments
//! (nested block comments included) left out and strings, raw strings, byte and C strings and
//! character literals taken whole, so that a `}` in a string or a comment is no bracket. It
//! agrees with rustc's lexer on where tokens start and end and which are brackets, identifiers
//! and literals (a test holds it to `ra_ap_rustc_lexer` on every fixture and on mutations), and
//! is several times faster: it reads bytes, not characters, and classifies nothing further.

/// What a token is, as far as the summary and the nesting check need to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    /// `r#name`.
    RawIdent,
    Literal,
    /// `'a`, `'static`, a loop label.
    Lifetime,
    OpenParen,
    CloseParen,
    OpenBracket,
    CloseBracket,
    OpenBrace,
    CloseBrace,
    Semi,
    Comma,
    Dot,
    Colon,
    Eq,
    Lt,
    Gt,
    Bang,
    Pound,
    Star,
    Minus,
    And,
    Or,
    Question,
    /// Any other punctuation, or a byte no token starts with.
    Other,
}

/// A token: its kind and its byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: u32,
    pub end: u32,
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

fn is_ident_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte >= 0x80
}

/// The tokens of `text`.
pub(super) fn lex(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::with_capacity(bytes.len() / 5);
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let byte = bytes[at];
        let kind = match byte {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => {
                at += 1;
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = memchr_or_end(b'\n', bytes, at);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = block_comment_end(bytes, at);
                continue;
            }
            b'"' => {
                at = string_end(bytes, at + 1);
                Kind::Literal
            }
            b'\'' => {
                let (end, kind) = quote(bytes, at);
                at = end;
                kind
            }
            b'0'..=b'9' => {
                at = number_end(bytes, at);
                Kind::Literal
            }
            _ if is_ident_start(byte) => {
                let mut end = at + 1;
                while end < bytes.len() && is_ident_byte(bytes[end]) {
                    end += 1;
                }
                let (end, kind) = prefixed(bytes, at, end);
                at = end;
                kind
            }
            _ => {
                at += 1;
                match byte {
                    b'(' => Kind::OpenParen,
                    b')' => Kind::CloseParen,
                    b'[' => Kind::OpenBracket,
                    b']' => Kind::CloseBracket,
                    b'{' => Kind::OpenBrace,
                    b'}' => Kind::CloseBrace,
                    b';' => Kind::Semi,
                    b',' => Kind::Comma,
                    b'.' => Kind::Dot,
                    b':' => Kind::Colon,
                    b'=' => Kind::Eq,
                    b'<' => Kind::Lt,
                    b'>' => Kind::Gt,
                    b'!' => Kind::Bang,
                    b'#' => Kind::Pound,
                    b'*' => Kind::Star,
                    b'-' => Kind::Minus,
                    b'&' => Kind::And,
                    b'|' => Kind::Or,
                    b'?' => Kind::Question,
                    _ => Kind::Other,
                }
            }
        };
        tokens.push(Token {
            kind,
            start: start as u32,
            end: at.min(bytes.len()) as u32,
        });
    }
    tokens
}

fn memchr_or_end(needle: u8, bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == needle)
        .map_or(bytes.len(), |found| from + found)
}

/// After a `/*`: the end of the comment, nested ones included.
fn block_comment_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut at = start;
    while at + 1 < bytes.len() {
        match (bytes[at], bytes[at + 1]) {
            (b'/', b'*') => {
                depth += 1;
                at += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    bytes.len()
}

/// From inside a `"…"` string: the end, after its closing quote.
fn string_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return suffix_end(bytes, at + 1),
            _ => at += 1,
        }
    }
    bytes.len()
}

/// A literal's suffix (`"x"suffix`, `1u32`, `'a'x`): part of the literal, as rustc lexes it.
fn suffix_end(bytes: &[u8], mut at: usize) -> usize {
    if at < bytes.len() && is_ident_start(bytes[at]) {
        while at < bytes.len() && is_ident_byte(bytes[at]) {
            at += 1;
        }
    }
    at
}

/// From a `'`: a character literal (`'x'`, `'\n'`, `'\u{1F980}'`), or a lifetime or label.
fn quote(bytes: &[u8], start: usize) -> (usize, Kind) {
    let at = start + 1;
    match bytes.get(at) {
        Some(b'\\') => {
            // An escape: up to the closing quote.
            let mut end = at + 2;
            while end < bytes.len() && bytes[end] != b'\'' && bytes[end] != b'\n' {
                end += 1;
            }
            if bytes.get(end) == Some(&b'\'') {
                (suffix_end(bytes, end + 1), Kind::Literal)
            } else {
                (end, Kind::Literal)
            }
        }
        Some(&first) => {
            let width = utf8_width(first);
            if bytes.get(at + width) == Some(&b'\'') {
                return (suffix_end(bytes, at + width + 1), Kind::Literal);
            }
            if is_ident_start(first) || first.is_ascii_digit() {
                let mut end = at + 1;
                while end < bytes.len() && is_ident_byte(bytes[end]) {
                    end += 1;
                }
                // `'r#name`.
                if first == b'r' && end == at + 1 && bytes.get(end) == Some(&b'#') {
                    end += 1;
                    while end < bytes.len() && is_ident_byte(bytes[end]) {
                        end += 1;
                    }
                }
                (end, Kind::Lifetime)
            } else {
                (at, Kind::Other)
            }
        }
        None => (at, Kind::Other),
    }
}

fn utf8_width(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// A number literal: digits, letters (`0x1F`, `1u32`, `1e10`), `_`, a `.` followed by a digit,
/// and an exponent's sign.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start;
    while at < bytes.len() {
        let byte = bytes[at];
        let exponent_sign = (byte == b'+' || byte == b'-')
            && matches!(bytes[at - 1], b'e' | b'E')
            && !bytes[start..at].starts_with(b"0x")
            && bytes.get(at + 1).is_some_and(u8::is_ascii_digit);
        // `1.5`, and `2.` before anything but another `.` or a name (`3..4`, `7.max(1)`).
        let fraction = byte == b'.'
            && !bytes[start..at].contains(&b'.')
            && bytes.get(at + 1).is_none_or(|&next| {
                next.is_ascii_digit() || (next != b'.' && !is_ident_start(next))
            });
        if byte.is_ascii_alphanumeric() || byte == b'_' || exponent_sign || fraction {
            at += 1;
        } else {
            break;
        }
    }
    at
}

/// An identifier-like run `bytes[start..end]` that may be a prefix: `r#ident`, raw strings
/// (`r"…"`, `r#"…"#`, `br`, `cr`), byte, C and byte-character literals (`b"…"`, `c"…"`,
/// `b'x'`).
fn prefixed(bytes: &[u8], start: usize, end: usize) -> (usize, Kind) {
    let word = &bytes[start..end];
    let next = bytes.get(end).copied();
    match (word, next) {
        (b"r", Some(b'#')) if bytes.get(end + 1).copied().is_some_and(is_ident_start) => {
            let mut at = end + 2;
            while at < bytes.len() && is_ident_byte(bytes[at]) {
                at += 1;
            }
            (at, Kind::RawIdent)
        }
        (b"r" | b"br" | b"cr", Some(b'"' | b'#')) => match raw_string_end(bytes, end) {
            Some(at) => (at, Kind::Literal),
            None => (end, Kind::Ident),
        },
        (b"b" | b"c", Some(b'"')) => (string_end(bytes, end + 1), Kind::Literal),
        (b"b", Some(b'\'')) => {
            let (at, _) = quote(bytes, end);
            (at, Kind::Literal)
        }
        _ => (end, Kind::Ident),
    }
}

/// From the `#`s or `"` after `r`: the end of a raw string, or `None` when it is none.
fn raw_string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start;
    let mut hashes = 0;
    while bytes.get(at) == Some(&b'#') {
        hashes += 1;
        at += 1;
    }
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    at += 1;
    while at < bytes.len() {
        if bytes[at] == b'"'
            && bytes[at + 1..]
                .iter()
                .take(hashes)
                .filter(|&&b| b == b'#')
                .count()
                == hashes
        {
            return Some(suffix_end(bytes, at + 1 + hashes));
        }
        at += 1;
    }
    Some(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    use ra_ap_rustc_lexer::{FrontmatterAllowed, TokenKind, tokenize};

    /// rustc's lexer, in this lexer's terms.
    fn reference(text: &str) -> Vec<Token> {
        let mut tokens = Vec::new();
        let mut offset = 0u32;
        for token in tokenize(text, FrontmatterAllowed::No) {
            let start = offset;
            offset += token.len;
            let kind = match token.kind {
                TokenKind::Whitespace
                | TokenKind::LineComment { .. }
                | TokenKind::BlockComment { .. } => continue,
                TokenKind::Ident | TokenKind::InvalidIdent | TokenKind::UnknownPrefix => {
                    Kind::Ident
                }
                TokenKind::RawIdent => Kind::RawIdent,
                TokenKind::Literal { .. } => Kind::Literal,
                TokenKind::Lifetime { .. } | TokenKind::RawLifetime => Kind::Lifetime,
                TokenKind::OpenParen => Kind::OpenParen,
                TokenKind::CloseParen => Kind::CloseParen,
                TokenKind::OpenBracket => Kind::OpenBracket,
                TokenKind::CloseBracket => Kind::CloseBracket,
                TokenKind::OpenBrace => Kind::OpenBrace,
                TokenKind::CloseBrace => Kind::CloseBrace,
                TokenKind::Semi => Kind::Semi,
                TokenKind::Comma => Kind::Comma,
                TokenKind::Dot => Kind::Dot,
                TokenKind::Colon => Kind::Colon,
                TokenKind::Eq => Kind::Eq,
                TokenKind::Lt => Kind::Lt,
                TokenKind::Gt => Kind::Gt,
                TokenKind::Bang => Kind::Bang,
                TokenKind::Pound => Kind::Pound,
                TokenKind::Star => Kind::Star,
                TokenKind::Minus => Kind::Minus,
                TokenKind::And => Kind::And,
                TokenKind::Or => Kind::Or,
                TokenKind::Question => Kind::Question,
                _ => Kind::Other,
            };
            tokens.push(Token {
                kind,
                start,
                end: offset,
            });
        }
        tokens
    }

    /// Where the two lexers part, if they do.
    pub(crate) fn disagreement(text: &str) -> Option<String> {
        let (ours, theirs) = (lex(text), reference(text));
        let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        match at {
            Some(at) => Some(format!(
                "token {at}: ours {:?} {:?}, rustc's {:?} {:?}",
                ours[at],
                &text[ours[at].start as usize..ours[at].end as usize],
                theirs[at],
                &text[theirs[at].start as usize..theirs[at].end as usize],
            )),
            None if ours.len() != theirs.len() => Some(format!(
                "{} tokens against rustc's {}",
                ours.len(),
                theirs.len()
            )),
            None => None,
        }
    }

    #[test]
    fn agrees_with_rustc_on_the_hard_cases() {
        let text = r###"
            fn f<'a>(x: &'a str) -> char { 'x' } // comment with } and "
            /* block /* nested } */ still comment */
            let s = "a \" } b"; let r = r#"raw " } "#; let b = b"bytes"; let c = c"c";
            let br = br##"x"# y"##; let ch = b'\''; let e = '\u{1F980}'; let n = '\n';
            let label = 'outer: loop { break 'outer; };
            let num = 1_000u32 + 0x1F + 1.5e-3 + 2. + 3..4 + 1.0f64 + 0b1010 + 7.method();
            let raw_ident = r#type; let lifetime_raw = 'r#a;
            let unicode = "é"; let é = 'é'; let s2 = "x"suffix;
            a::b::<c>(); x.y?; #[attr] !&*-|=;
        "###;
        assert_eq!(disagreement(text), None);
    }

    #[test]
    fn agrees_with_rustc_on_every_fixture() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for entry in walkdir::WalkDir::new(root) {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                assert_eq!(disagreement(&text), None, "{}", entry.path().display());
            }
        }
    }
}
