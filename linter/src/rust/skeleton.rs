//! Big files parsed as a skeleton: every function's body is cut out of the tokens and parsed only
//! when the walk comes to it, and dropped after, so that a file's syntax tree is never whole in
//! memory. Generated bindings are what makes a run's peak memory: tch-rs's
//! `tensor_fallible_generated.rs` (1.3 MB, one `impl` of thousands of methods) takes 79 MiB
//! parsed whole. The walk needs every item's imports, fields and signatures before any body,
//! which the skeleton has.
//!
//! A body is found in the tokens, not by the parser: the first brace group of an item that
//! starts (after attributes, visibility and qualifiers) with `fn`; the items of `impl`, `trait`,
//! `mod` and `extern` blocks are looked into the same way. A brace group taken for a body that
//! is none (a const argument `{N}` in a signature) is parsed as a block like any body, and the
//! function's own body then stays in the skeleton: nothing is lost, only memory not saved.

use proc_macro2::{Delimiter, Group, LineColumn, Span, TokenStream, TokenTree};
use rustc_hash::FxHashMap;

/// Files over this size are parsed as a skeleton, where model code is not looked at (which
/// walks functions again, from the whole tree). Every file parsed so gave runs over candle, burn,
/// tch-rs and cudarc no faster and no smaller (medians of nine alternating: 1.76 against 1.80 s,
/// 102 against 98 MiB): the smaller files' trees are not what a run's peak is made of.
pub const SKELETON_FILE: usize = 256 << 10;

/// The bodies cut out of a skeleton, by where their braces start.
#[derive(Debug, Default)]
pub struct Bodies {
    groups: FxHashMap<LineColumn, Group>,
    /// A body did not parse: the file is to be parsed whole, where its error is reported.
    failed: bool,
}

impl Bodies {
    /// The body whose braces are at `braces`, parsed, the first time it is asked for; `None`
    /// for braces that are no cut body (the skeleton's own block), or a body that does not
    /// parse ([`Bodies::all_parse`] says so).
    pub fn take(&mut self, braces: Span) -> Option<syn::Block> {
        let group = self.groups.remove(&braces.start())?;
        match syn::parse2(TokenStream::from(TokenTree::Group(group))) {
            Ok(block) => Some(block),
            Err(_) => {
                self.failed = true;
                None
            }
        }
    }

    /// Whether every body parses: those the walk did not ask for are parsed now.
    pub fn all_parse(self) -> bool {
        !self.failed
            && (self.groups.into_values())
                .all(|group| syn::parse2::<syn::Block>(TokenTree::Group(group).into()).is_ok())
    }
}

/// Parses `text` (as [`super::parse::blank_prelude`] gives it) as a skeleton: the file with
/// every function's body empty, and the bodies.
pub fn parse(text: &str) -> Option<(syn::File, Bodies)> {
    let tokens: TokenStream = text.parse().ok()?;
    let mut bodies = Bodies::default();
    let skeleton = hollow(tokens, &mut bodies);
    let file = syn::parse2(skeleton).ok()?;
    Some((file, bodies))
}

/// What the first brace group of the item being read holds.
#[derive(Clone, Copy, PartialEq)]
enum Braces {
    /// A function's body.
    Body,
    /// Items (`impl`, `trait`, `mod`, `extern` blocks).
    Items,
    /// Anything else (a struct's fields, a `use` tree, a value).
    Other,
}

/// `tokens` with the bodies of the functions among their items cut out into `bodies`: each
/// leaves an empty block with its span.
fn hollow(tokens: TokenStream, bodies: &mut Bodies) -> TokenStream {
    let mut out = Vec::new();
    // At an item's start: only attributes, visibility and qualifiers so far.
    let mut start = true;
    let mut braces = Braces::Other;
    for tree in tokens {
        let kept = match tree {
            // An item's first brace group ends it (a `;` may follow: a value's).
            TokenTree::Group(group) if group.delimiter() == Delimiter::Brace => {
                let span = group.span();
                let inside = match braces {
                    Braces::Body => {
                        bodies.groups.insert(span.start(), group);
                        TokenStream::new()
                    }
                    Braces::Items => hollow(group.stream(), bodies),
                    Braces::Other => {
                        (start, braces) = (true, Braces::Other);
                        out.push(TokenTree::Group(group));
                        continue;
                    }
                };
                let mut kept = Group::new(Delimiter::Brace, inside);
                kept.set_span(span);
                (start, braces) = (true, Braces::Other);
                TokenTree::Group(kept)
            }
            TokenTree::Punct(ref punct) if punct.as_char() == ';' => {
                (start, braces) = (true, Braces::Other);
                tree
            }
            TokenTree::Ident(ref ident) if start => {
                match ident.to_string().as_str() {
                    "fn" => (start, braces) = (false, Braces::Body),
                    "impl" | "trait" | "mod" => (start, braces) = (false, Braces::Items),
                    // `extern "C" { .. }`, or the qualifier of `extern "C" fn`.
                    "extern" => braces = Braces::Items,
                    "pub" | "const" | "async" | "unsafe" | "safe" | "default" | "auto" => {}
                    _ => start = false,
                }
                tree
            }
            // An attribute (`#`, `!`, `[..]`), `pub`'s `(crate)`, an ABI's string.
            TokenTree::Punct(ref punct) if matches!(punct.as_char(), '#' | '!') => tree,
            TokenTree::Group(ref group) if group.delimiter() != Delimiter::None => tree,
            TokenTree::Literal(_) => tree,
            _ => {
                start = false;
                tree
            }
        };
        out.push(kept);
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bodies_of_functions_among_items_are_cut_out() {
        let text = "use tch::Device;
            #[inline] pub(crate) const unsafe extern \"C\" fn a() { Device::Cuda(1); }
            mod m { pub fn b() { x() } }
            trait T { fn c(&self) { x() } fn d(&self); }
            unsafe impl<X> T for Vec<X> where X: Copy { fn d(&self) { x() } }
            extern \"C\" { fn e(); }
            static F: fn() -> u8 = || { 5 }; struct S { f: u8 } macro_rules! m { () => { fn h() {} } }
            fn g() -> S<{ 6 }> { x() }
            const _: () = { fn i() {} };";
        let (file, bodies) = parse(text).expect("a skeleton");
        let mut lines: Vec<usize> = bodies.groups.keys().map(|at| at.line).collect();
        lines.sort_unstable();
        // `g`'s const argument is taken for its body, and its body stays whole.
        assert_eq!(lines, [2, 3, 4, 5, 8]);
        assert_eq!(file.items.len(), 11);
        assert!(bodies.all_parse());
    }
}
