//! The members of a module's types whose types name a type the API tables know: named fields
//! of structs and the return types of methods in impls, as written in the module
//! (`devices: Vec<Arc<CudaDevice>>`, `fn device(&self, i: usize) -> Arc<CudaDevice>`); and the
//! associated types of impls, whatever they name (`type Context = CudaState;`). Another
//! file that holds such a type learns from them what `self.devices.device(i)` is, though it
//! parses only itself. Also which parameters of a module's functions are devices, so that
//! another file knows what it hands them. They are read from the tokens, as the rest of the
//! summary is.

use super::{Reader, TokenKind};

/// A field or method of a type, whose type names a type of the API tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The type's name (`DeviceManager` of `impl<T> DeviceManager<T>`).
    pub owner: String,
    /// The field's or method's name.
    pub name: String,
    /// The field's type, or what the method returns, as written (`Arc<CudaDevice>`).
    pub ty: String,
}

impl Reader<'_, '_> {
    /// The index of the first token from `at` that is one of `stops` outside angle brackets
    /// (groups are stepped over, `->` is no closing bracket), or the end.
    fn until(&self, mut at: usize, stops: &[TokenKind], stop_words: &[&str]) -> usize {
        let mut angles = 0usize;
        while at < self.end {
            let kind = self.kind(at);
            if angles == 0
                && (kind.is_some_and(|kind| stops.contains(&kind))
                    || stop_words.iter().any(|word| self.is(at, word)))
            {
                return at;
            }
            match kind {
                Some(TokenKind::Lt) => angles += 1,
                Some(TokenKind::Gt) if self.kind(at.wrapping_sub(1)) != Some(TokenKind::Minus) => {
                    angles = angles.saturating_sub(1);
                }
                _ => {}
            }
            at = if self.tokens.is_open(at) {
                self.tokens.after_group(at)
            } else {
                at + 1
            };
        }
        self.end
    }

    /// The type written between `start` and `end`, when a name in it (inside brackets too) is
    /// one `wanted` takes.
    fn wanted_type(&self, start: usize, end: usize) -> Option<String> {
        let end = end.min(self.end);
        let wanted = (start..end).any(|at| {
            self.kind(at) == Some(TokenKind::Ident) && (self.wanted)(self.tokens.text(at))
        });
        (wanted && start < end).then(|| {
            let from = self.tokens.tokens[start].start as usize;
            let to = self.tokens.tokens[end - 1].end as usize;
            self.tokens.text[from..to].to_owned()
        })
    }

    /// The places of the device parameters of the `fn` whose name is at `name_at`: those whose
    /// type is a path that a name ending in `Device` ends (`&B::Device`, `WgpuDevice`,
    /// `<B as Backend>::Device`), not a type that holds one (`Option<Device>`). A receiver
    /// (`&self`) takes no place.
    pub(super) fn device_parameters(&self, name_at: usize) -> Vec<usize> {
        let open = self.until(name_at + 1, &[TokenKind::OpenParen], &[]);
        if self.kind(open) != Some(TokenKind::OpenParen) {
            return Vec::new();
        }
        let close = (self.tokens.after_group(open) - 1).min(self.end);
        let (mut places, mut place, mut at) = (Vec::new(), 0, open + 1);
        while at < close {
            let end = self.until(at, &[TokenKind::Comma], &[]).min(close);
            let typed = (at..end).any(|index| self.kind(index) == Some(TokenKind::Colon));
            if typed {
                let last = end - 1;
                if self.kind(last) == Some(TokenKind::Ident)
                    && self.tokens.text(last).ends_with("Device")
                {
                    places.push(place);
                }
                place += 1;
            }
            at = end + 1;
        }
        places
    }

    /// Steps over outer attributes and a visibility at `at`, as an item's are read.
    fn member_start(&self, at: usize) -> usize {
        let mut reader = Reader { at, ..*self };
        reader.attributes();
        reader.visibility();
        reader.at
    }

    /// The named fields of the struct `owner` whose name is at `name_at`.
    pub(super) fn fields(&self, owner: &str, name_at: usize, out: &mut Vec<Member>) {
        let body = self.until(
            name_at + 1,
            &[TokenKind::OpenBrace, TokenKind::OpenParen, TokenKind::Semi],
            &[],
        );
        if self.kind(body) != Some(TokenKind::OpenBrace) {
            return;
        }
        let close = (self.tokens.after_group(body) - 1).min(self.end);
        let mut at = body + 1;
        while at < close {
            at = self.member_start(at);
            let end = self.until(at, &[TokenKind::Comma], &[]).min(close);
            if let Some(name) = self.tokens.ident(at)
                && self.kind(at + 1) == Some(TokenKind::Colon)
                && let Some(ty) = self.wanted_type(at + 2, end)
            {
                out.push(Member {
                    owner: owner.to_owned(),
                    name,
                    ty,
                });
            }
            at = end + 1;
        }
    }

    /// The methods of the impl whose header starts at `at` (after `impl`), and the index after
    /// its body.
    pub(super) fn methods(&self, at: usize, out: &mut Vec<Member>) -> usize {
        // The impl's own generics.
        let mut at = at;
        if self.kind(at) == Some(TokenKind::Lt) {
            at = self.until(at + 1, &[TokenKind::Gt], &[]) + 1;
        }
        let header = self.until(at, &[TokenKind::OpenBrace, TokenKind::Semi], &["where"]);
        let body = match self.kind(header) {
            Some(TokenKind::OpenBrace | TokenKind::Semi) => header,
            _ => self.until(header, &[TokenKind::OpenBrace, TokenKind::Semi], &[]),
        };
        // The implementing type: after `for` when there is one, its last name before its
        // generic arguments.
        let mut owner = None;
        let mut angles = 0usize;
        for index in at..header {
            match self.kind(index) {
                Some(TokenKind::Lt) => angles += 1,
                Some(TokenKind::Gt) => angles = angles.saturating_sub(1),
                Some(TokenKind::Ident) if angles == 0 => {
                    owner = match self.tokens.text(index) {
                        "for" => None,
                        "dyn" => owner,
                        _ => self.tokens.ident(index),
                    };
                }
                _ => {}
            }
        }
        if self.kind(body) != Some(TokenKind::OpenBrace) {
            return body + 1;
        }
        let after = self.tokens.after_group(body);
        let Some(owner) = owner else {
            return after;
        };
        let close = (after - 1).min(self.end);
        let mut at = body + 1;
        while at < close {
            at = self.member_start(at);
            while matches!(
                self.tokens.text(at),
                "const" | "async" | "unsafe" | "default" | "extern"
            ) || self.kind(at) == Some(TokenKind::Literal)
            {
                at += 1;
            }
            let end = self.until(at, &[TokenKind::OpenBrace, TokenKind::Semi], &[]);
            // `type Context = CudaState;`: what `Self::Context` names, whatever it is (its own
            // members say whether it holds a type of the tables).
            if self.is(at, "type")
                && let Some(name) = self.tokens.ident(at + 1)
                && self.kind(at + 2) == Some(TokenKind::Eq)
                && at + 3 < end
            {
                let from = self.tokens.tokens[at + 3].start as usize;
                let to = self.tokens.tokens[end - 1].end as usize;
                out.push(Member {
                    owner: owner.clone(),
                    name,
                    ty: self.tokens.text[from..to].to_owned(),
                });
            }
            if self.is(at, "fn")
                && let Some(name) = self.tokens.ident(at + 1)
            {
                let parameters = self.until(at + 2, &[TokenKind::OpenParen], &[]);
                let arrow = self.tokens.after_group(parameters);
                if self.kind(arrow) == Some(TokenKind::Minus)
                    && self.kind(arrow + 1) == Some(TokenKind::Gt)
                {
                    let returns_end = self
                        .until(
                            arrow + 2,
                            &[TokenKind::OpenBrace, TokenKind::Semi],
                            &["where"],
                        )
                        .min(end);
                    if let Some(ty) = self.wanted_type(arrow + 2, returns_end) {
                        out.push(Member {
                            owner: owner.clone(),
                            name,
                            ty,
                        });
                    }
                }
            }
            at = match self.kind(end) {
                Some(TokenKind::OpenBrace) => self.tokens.after_group(end),
                _ => end + 1,
            };
        }
        after
    }
}
