//! What the files of a project tell each other, decided in one fixed point for both languages.
//!
//! A front end's first lint of every file gives each file's facts ([`Exchange::Facts`]: the
//! device choosers it defines; for Python also what its imports bind and whether it runs as a
//! program). The facts of all files decide what every file may know ([`Exchange::Known`]); the
//! files whose lint depends on what is now known otherwise are linted again, which may give new
//! facts, and so on until nothing changes or [`ROUNDS`] rounds have run. Facts come from events,
//! before levels and suppressions: an allowed finding still tells what it knows.

use std::collections::BTreeMap;

use crate::discover::FileUnit;
use crate::source::CrateId;

/// How many times the files that depend on new facts are linted again: a device chooser that
/// returns what another chooser chose is found in the round after that chooser.
pub(crate) const ROUNDS: usize = 4;

/// A file as the fixed point tells its facts apart: a Rust file that two crates include is
/// linted once as part of each. The default key is a text linted alone.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FileKey {
    relative: String,
    crate_id: Option<CrateId>,
}

impl FileKey {
    pub(crate) fn of(unit: &FileUnit) -> FileKey {
        FileKey {
            relative: unit.relative.clone(),
            crate_id: unit.crate_id,
        }
    }
}

/// How one front end's files tell each other what they know.
pub(crate) trait Exchange {
    /// What one file tells the others.
    type Facts;
    /// What the facts of every file decide.
    type Known;
    /// A file linted again.
    type Linted;

    /// What `facts` decide, or `None` when they decide nothing that `known` (the last round's
    /// decision, if any) did not.
    fn decide(
        &self,
        facts: &BTreeMap<FileKey, Self::Facts>,
        known: Option<&Self::Known>,
    ) -> Option<Self::Known>;

    /// Whether a file linted again tells the others something its facts did not: when no file
    /// does, the next round would decide what this one did, and the rounds end.
    fn tells_more(&self, old: &Self::Facts, new: &Self::Facts) -> bool;

    /// Lints again, with `known`, each file whose lint may change with it: each with its facts.
    fn relint(
        &self,
        known: &Self::Known,
        facts: &BTreeMap<FileKey, Self::Facts>,
    ) -> Vec<(FileKey, Self::Linted, Self::Facts)>;
}

/// Runs the rounds from the first lint's `facts`, giving each file linted again to `apply`;
/// returns the last decision, if any was made, and leaves in `facts` the files' last facts.
pub(crate) fn fixed_point<E: Exchange>(
    exchange: &E,
    facts: &mut BTreeMap<FileKey, E::Facts>,
    mut apply: impl FnMut(&FileKey, E::Linted),
) -> Option<E::Known> {
    let mut known = None;
    for _ in 0..ROUNDS {
        let Some(next) = exchange.decide(facts, known.as_ref()) else {
            break;
        };
        let mut told = false;
        for (key, linted, new) in exchange.relint(&next, facts) {
            apply(&key, linted);
            told |= facts
                .get(&key)
                .is_none_or(|old| exchange.tells_more(old, &new));
            facts.insert(key, new);
        }
        known = Some(next);
        if !told {
            break;
        }
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files that name which file they follow: a file knows it is "reached" once the file it
    /// follows is, so a chain of `n` files settles in `n` rounds.
    struct Chain {
        follows: BTreeMap<FileKey, Option<FileKey>>,
    }

    fn key(name: &str) -> FileKey {
        FileKey {
            relative: name.to_owned(),
            crate_id: None,
        }
    }

    impl Exchange for Chain {
        type Facts = bool;
        type Known = Vec<FileKey>;
        type Linted = ();

        fn decide(
            &self,
            facts: &BTreeMap<FileKey, bool>,
            known: Option<&Vec<FileKey>>,
        ) -> Option<Vec<FileKey>> {
            let reached: Vec<FileKey> = facts
                .iter()
                .filter(|(_, reached)| **reached)
                .map(|(key, _)| key.clone())
                .collect();
            (known != Some(&reached)).then_some(reached)
        }

        fn tells_more(&self, old: &bool, new: &bool) -> bool {
            old != new
        }

        fn relint(
            &self,
            known: &Vec<FileKey>,
            facts: &BTreeMap<FileKey, bool>,
        ) -> Vec<(FileKey, (), bool)> {
            self.follows
                .iter()
                .filter(|(file, follows)| {
                    !facts[*file] && follows.as_ref().is_some_and(|f| known.contains(f))
                })
                .map(|(file, _)| (file.clone(), (), true))
                .collect()
        }
    }

    #[test]
    fn chains_settle_round_by_round_up_to_the_limit() {
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let follows = names
            .iter()
            .enumerate()
            .map(|(at, name)| (key(name), at.checked_sub(1).map(|i| key(names[i]))))
            .collect();
        let mut facts = names.iter().map(|name| (key(name), *name == "a")).collect();
        let mut relinted = Vec::new();
        let known = fixed_point(&Chain { follows }, &mut facts, |key, ()| {
            relinted.push(key.clone())
        });
        // Each round reaches one more file: four rounds reach b, c, d and e.
        assert_eq!(relinted, ["b", "c", "d", "e"].map(key));
        assert_eq!(known.unwrap(), ["a", "b", "c", "d"].map(key));
    }

    #[test]
    fn a_decision_nothing_depends_on_relints_nothing() {
        let chain = Chain {
            follows: BTreeMap::new(),
        };
        let mut facts: BTreeMap<FileKey, bool> = [(key("a"), false)].into_iter().collect();
        let mut relinted = 0;
        let known = fixed_point(&chain, &mut facts, |_, ()| relinted += 1);
        // The first decision (nothing reached) is made; nothing depends on it.
        assert_eq!(known, Some(Vec::new()));
        assert_eq!(relinted, 0);
    }
}
