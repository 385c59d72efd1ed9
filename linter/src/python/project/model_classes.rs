//! The project's model classes: its class hierarchy (which classes are `torch.nn.Module`
//! subclasses, through other modules' bases; which classes' methods a call on `self` may
//! reach), and the parameters of its functions that model code hands its tensors.

use rustc_hash::{FxHashMap, FxHashSet};

use super::Project;

impl Project {
    /// The parameters of the project's functions that model code hands its tensors, directly
    /// or through functions handed them (eight steps at most): each function by every path
    /// the call's name reaches through re-exports, and the parameter as the call names it.
    pub fn fed(&self) -> FxHashSet<(String, String)> {
        let mut fed: FxHashSet<(String, String)> = FxHashSet::default();
        let hand = |fed: &mut FxHashSet<(String, String)>, function: &str, parameter: &str| {
            // A method of any module class (`*.inverse`) names no path to follow.
            if function.starts_with("*.") {
                return fed.insert((function.to_owned(), parameter.to_owned()));
            }
            let mut added = false;
            self.names(function, |path| {
                added |= fed.insert((path.to_owned(), parameter.to_owned()));
                false
            });
            added
        };
        for handed in self.fed.iter().filter(|handed| handed.from.is_none()) {
            hand(&mut fed, &handed.function, &handed.parameter);
        }
        for _ in 0..8 {
            let mut added = false;
            for handed in &self.fed {
                if let Some((caller, parameters)) = &handed.from
                    && self.is_fed(&fed, caller, parameters)
                {
                    added |= hand(&mut fed, &handed.function, &handed.parameter);
                }
            }
            if !added {
                break;
            }
        }
        fed
    }

    /// Whether `fed` ([`Project::fed`]) holds one of `parameters` of `function`, a dotted path.
    /// A method is fed where a call on `self` in a class above or below its own in the
    /// project's class hierarchy is (eight classes each way at most): `self` may be an
    /// instance of a subclass, whose method overrides the base's (`self._format_outputs(x)`
    /// in a base's `forward`), or the method is inherited (`self.helper(x)` in a subclass's);
    /// and a module class's method is fed where one of that name is called on a module of a
    /// container.
    pub fn is_fed(
        &self,
        fed: &FxHashSet<(String, String)>,
        function: &str,
        parameters: &[String],
    ) -> bool {
        let holds = |function: &str| {
            (parameters.iter())
                .any(|parameter| fed.contains(&(function.to_owned(), parameter.clone())))
        };
        if holds(function) {
            return true;
        }
        let Some((class, method)) = function.rsplit_once('.') else {
            return false;
        };
        // Called on a module of one of a module's containers (`flow.inverse(z)` for `flow` of
        // `self.flows`): the method of that name of any module class.
        if holds(&["*.", method].concat()) && self.is_module_class(class) {
            return true;
        }
        let related = |edges: &FxHashMap<String, Vec<String>>| {
            let mut seen: FxHashSet<&str> = FxHashSet::default();
            let mut pending: Vec<&str> = vec![class];
            for _ in 0..8 {
                let Some(next) = pending.pop() else {
                    return false;
                };
                for other in edges.get(next).into_iter().flatten() {
                    if !seen.insert(other) {
                        continue;
                    }
                    let inherited = [other.as_str(), ".", method].concat();
                    // `fed` holds only the paths `names` reaches, as `fed` puts them there.
                    if self.names(&inherited, |path| holds(path)) {
                        return true;
                    }
                    pending.push(other);
                }
            }
            false
        };
        related(&self.parents) || related(&self.children)
    }

    /// Whether `path` names a `torch.nn.Module` subclass of the project, through re-exports
    /// and the bases of its classes (a chain of eight at most).
    pub fn is_module_class(&self, path: &str) -> bool {
        let mut path = path.to_owned();
        for _ in 0..8 {
            let mut base = None;
            let module = self.names(&path, |named| {
                base = base.take().or_else(|| self.class_bases.get(named).cloned());
                self.module_classes.contains(named)
            });
            match (module, base) {
                (true, _) => return true,
                (false, Some(next)) => path = next,
                (false, None) => return false,
            }
        }
        false
    }

    /// Each base of the project's model classes, under every path its name reaches through
    /// re-exports (where a method of it is defined) → those classes.
    pub(super) fn children(&self) -> FxHashMap<String, Vec<String>> {
        let mut children: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (class, bases) in &self.parents {
            for base in bases {
                self.names(base, |named| {
                    children
                        .entry(named.to_owned())
                        .or_default()
                        .push(class.clone());
                    false
                });
            }
        }
        children
    }
}
