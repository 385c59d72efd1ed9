//! Where a finding sits, in terms that survive edits elsewhere in its file: the enclosing item
//! (`Model::forward`) and the finding's own source text. Baselines match on these, and SARIF
//! fingerprints are made of them, so that neither changes when lines above move.

use std::collections::HashMap;
use std::ops::Range;

use syn::spanned::Spanned;
use syn::visit::{self, Visit};

use crate::source::Language;

/// What identifies a finding across edits that do not touch it.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct FindingKey {
    pub rule: String,
    /// Workspace-relative, with `/` separators.
    pub file: String,
    /// The innermost item around the finding: `Model::forward`, `tests::it_works`, or empty.
    pub item: String,
    /// The flagged tokens, whitespace collapsed.
    pub snippet: String,
}

struct Items {
    path: Vec<String>,
    found: Vec<(Range<usize>, String)>,
}

impl Items {
    fn enter(&mut self, name: String, span: proc_macro2::Span, f: impl FnOnce(&mut Self)) {
        self.path.push(name);
        self.found.push((span.byte_range(), self.path.join("::")));
        f(self);
        self.path.pop();
    }
}

impl<'ast> Visit<'ast> for Items {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.enter(item.sig.ident.to_string(), item.span(), |v| {
            visit::visit_item_fn(v, item)
        });
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.enter(item.ident.to_string(), item.span(), |v| {
            visit::visit_item_mod(v, item)
        });
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let name = match &*item.self_ty {
            syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.enter(
            name.unwrap_or_else(|| "impl".to_owned()),
            item.span(),
            |v| visit::visit_item_impl(v, item),
        );
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.enter(item.sig.ident.to_string(), item.span(), |v| {
            visit::visit_impl_item_fn(v, item)
        });
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        self.enter(item.ident.to_string(), item.span(), |v| {
            visit::visit_item_trait(v, item)
        });
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        self.enter(item.sig.ident.to_string(), item.span(), |v| {
            visit::visit_trait_item_fn(v, item)
        });
    }

    fn visit_item_const(&mut self, item: &'ast syn::ItemConst) {
        self.enter(item.ident.to_string(), item.span(), |v| {
            visit::visit_item_const(v, item)
        });
    }

    fn visit_item_static(&mut self, item: &'ast syn::ItemStatic) {
        self.enter(item.ident.to_string(), item.span(), |v| {
            visit::visit_item_static(v, item)
        });
    }
}

/// The key of each span of one file, in order.
pub fn keys(
    file: &str,
    text: &str,
    language: Language,
    findings: &[(&str, Range<usize>)],
) -> Vec<FindingKey> {
    let items = match language {
        Language::Python => crate::python::items(text),
        Language::Rust => rust_items(text),
    };
    findings
        .iter()
        .map(|(rule, span)| {
            let item = items
                .iter()
                .filter(|(range, _)| range.start <= span.start && span.end <= range.end)
                .min_by_key(|(range, _)| range.len())
                .map(|(_, name)| name.clone())
                .unwrap_or_default();
            let snippet = text
                .get(span.clone())
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            FindingKey {
                rule: (*rule).to_owned(),
                file: file.to_owned(),
                item,
                snippet,
            }
        })
        .collect()
}

/// A Rust file's items (`gpu::M::pick`) and their spans.
fn rust_items(text: &str) -> Vec<(Range<usize>, String)> {
    crate::rust::parse::with_syntax_tree(text, crate::rust::parse::Nesting::Unchecked, |tree| {
        match tree {
            Ok(parsed) => {
                let mut items = Items {
                    path: Vec::new(),
                    found: Vec::new(),
                };
                items.visit_file(parsed);
                items.found
            }
            Err(_) => Vec::new(),
        }
    })
}

/// Numbers findings that share a key (`0`, `1`, …) in file order, so that each has an identity.
pub fn occurrences(keys: &[FindingKey]) -> Vec<usize> {
    let mut seen: HashMap<&FindingKey, usize> = HashMap::new();
    keys.iter()
        .map(|key| {
            let count = seen.entry(key).or_default();
            *count += 1;
            *count - 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_enclosing_item_and_ignore_line_moves() {
        let text = "mod gpu {\n    pub struct M;\n    impl M {\n        fn pick(&self) { let d = Device::Cuda( 1 ); }\n    }\n}\n";
        let at = text.find("Device").unwrap();
        let end = text.find(");").unwrap() + 1;
        let keys = keys(
            "src/lib.rs",
            text,
            Language::Rust,
            &[("hardcoded_device", at..end)],
        );
        assert_eq!(keys[0].item, "gpu::M::pick");
        assert_eq!(keys[0].snippet, "Device::Cuda( 1 )");
        let moved = format!("// a new first line\n\n{text}");
        let shift = moved.len() - text.len();
        let again = super::keys(
            "src/lib.rs",
            &moved,
            Language::Rust,
            &[("hardcoded_device", at + shift..end + shift)],
        );
        assert_eq!(keys, again);
        assert_eq!(occurrences(&[keys[0].clone(), keys[0].clone()]), vec![0, 1]);
    }
}
