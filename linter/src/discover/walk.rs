//! Walking folders for source files and manifests, as cargo would find them: symbolic links are
//! followed (a linked file, module folder or crate root is built like any other), loops are
//! detected, and each file is taken once however many links lead to it. Build outputs
//! (`target/`), hidden folders and configured excludes are skipped, and the reason a file was
//! skipped can be told when nothing is left.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};

use walkdir::{DirEntry, WalkDir};

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// `.rs` files, in path order.
    pub(crate) files: Vec<PathBuf>,
    /// `Cargo.toml` files, in path order (shallow folders first within a parent).
    pub(crate) manifests: Vec<PathBuf>,
    /// Problems worth a line on stderr: unreadable folders, symbolic link loops.
    pub(crate) notes: Vec<String>,
}

/// Why a walk does not enter a folder or take a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    Hidden,
    BuildOutput,
    Excluded,
}

fn is_hidden(entry: &DirEntry) -> bool {
    entry
        .file_name()
        .to_str()
        .is_some_and(|name| name.starts_with('.') && name != "." && name != "..")
}

/// cargo's output folder: `target` next to a manifest, or any folder cargo tagged as a cache.
fn is_build_output(entry: &DirEntry) -> bool {
    let path = entry.path();
    entry.file_name() == "target"
        && (path.join("CACHEDIR.TAG").exists()
            || path
                .parent()
                .is_some_and(|parent| parent.join("Cargo.toml").is_file()))
}

/// Why `entry` (below the walk's root) is skipped, if it is.
fn skip(entry: &DirEntry, excluded: &dyn Fn(&Path) -> bool) -> Option<Skip> {
    if entry.depth() == 0 {
        return None;
    }
    if is_hidden(entry) {
        Some(Skip::Hidden)
    } else if excluded(entry.path()) {
        Some(Skip::Excluded)
    } else if entry.file_type().is_dir() && is_build_output(entry) {
        Some(Skip::BuildOutput)
    } else {
        None
    }
}

/// What makes two paths the same file: its device and inode where there are such (one `stat`),
/// else its canonical path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum FileId {
    Inode(u64, u64),
    Path(PathBuf),
}

/// The files the walks of a run took, by identity, each with the name it was taken under (the
/// first the walks reached), and the other names it was reached by.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    taken: HashMap<FileId, PathBuf>,
    /// The files' other names, each with its file.
    aliases: Vec<(PathBuf, FileId)>,
}

impl Seen {
    /// Whether `path` is a file not taken yet, taking it; a file taken under another name is
    /// remembered as reached again.
    fn take(&mut self, path: &Path) -> bool {
        match self.taken.entry(file_id(path)) {
            Entry::Vacant(vacant) => {
                vacant.insert(path.to_owned());
                true
            }
            Entry::Occupied(taken) => {
                if taken.get() != path {
                    self.aliases.push((path.to_owned(), taken.key().clone()));
                }
                false
            }
        }
    }

    /// The name the file at `path` was taken under, if it was.
    fn name_of(&self, path: &Path) -> Option<&PathBuf> {
        self.taken.get(&file_id(path))
    }

    /// Takes `path`, a second name of a file taken as `taken`, in its place: the file is
    /// linted under the name it has where it is, not under a symbolic link's.
    fn rename(&mut self, taken: &Path, path: &Path) {
        let id = file_id(path);
        if let Some(name) = self.taken.get_mut(&id) {
            *name = path.to_owned();
            self.aliases.push((taken.to_owned(), id));
        }
    }

    /// A line for stderr on the files reached under a second name (symbolic links), if any,
    /// with paths shown by `name`.
    pub(crate) fn note(&self, name: impl Fn(&Path) -> String) -> Option<String> {
        // Each other name with the name its file is linted under.
        let aliases: Vec<(&PathBuf, &PathBuf)> = (self.aliases.iter())
            .filter_map(|(alias, id)| Some((alias, self.taken.get(id)?)))
            .filter(|(alias, name)| alias != name)
            .collect();
        let (alias, first) = aliases.first()?;
        let more = match aliases.len() - 1 {
            0 => String::new(),
            1 => "; so was 1 other file".to_owned(),
            n => format!("; so were {n} other files"),
        };
        Some(format!(
            "{} is also reached as {} (a symbolic link): it is linted once, under the first name \
             (for a Python file, the one that goes through no link){more}",
            name(first),
            name(alias)
        ))
    }
}

fn file_id(path: &Path) -> FileId {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        return FileId::Inode(meta.dev(), meta.ino());
    }
    FileId::Path(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()))
}

/// The `.rs` files and manifests under `root` (a folder or a file) that `excluded` (given
/// absolute paths) lets through. `seen` holds the files already taken by earlier walks of the
/// run, so that a file reached twice is linted once.
pub(crate) fn walk(root: &Path, excluded: &dyn Fn(&Path) -> bool, seen: &mut Seen) -> Walked {
    let mut walked = Walked::default();
    let entries = WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| skip(entry, excluded).is_none());
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                // A source file that cannot be opened (a dangling link, no permission) is linted
                // all the same, so that the run reports it as a file it could not read.
                if let Some(path) = err.path().filter(|path| is_source(path, "rs"))
                    && err.loop_ancestor().is_none()
                {
                    if seen.take(path) {
                        walked.files.push(path.to_owned());
                    }
                    continue;
                }
                // Another language's file (a `.py`) is its own walk's to report.
                if err
                    .path()
                    .is_some_and(|path| path.extension().is_some() && err.loop_ancestor().is_none())
                {
                    continue;
                }
                let at = err.path().unwrap_or(root).display().to_string();
                let note = match err.loop_ancestor() {
                    Some(ancestor) => format!(
                        "{at} is a symbolic link to its own ancestor {}; not followed",
                        ancestor.display()
                    ),
                    None => format!("cannot read {at}: {err}; skipped"),
                };
                walked.notes.push(note);
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let kind = if path.extension().is_some_and(|ext| ext == "rs") {
            &mut walked.files
        } else if entry.file_name() == "Cargo.toml" {
            &mut walked.manifests
        } else {
            continue;
        };
        // Two links to one file, or a file given twice: the first name found wins.
        if seen.take(entry.path()) {
            kind.push(entry.into_path());
        }
    }
    walked
}

/// Folders that hold no project's Python: virtual environments (a `pyvenv.cfg` at their top,
/// with a copy of every installed library), installed packages, caches and build outputs. A
/// `build` or `dist` folder that is a package (`mmengine/dist/__init__.py`) is the project's.
fn is_python_output(entry: &ignore::DirEntry) -> bool {
    let name = entry.file_name();
    let outputs = ["build", "dist", "target"];
    entry.file_type().is_some_and(|kind| kind.is_dir())
        && ((["site-packages", "__pycache__", "node_modules"]
            .iter()
            .any(|skipped| name == *skipped))
            || (outputs.iter().any(|skipped| name == *skipped)
                && !entry.path().join("__init__.py").is_file())
            || entry.path().join("pyvenv.cfg").is_file())
}

/// The `.py` files and notebooks (`.ipynb`) under `root` (a folder or a file), as Python tools
/// find them (`.ipynb_checkpoints` is hidden): what
/// `.gitignore` and `.ignore` files exclude (in a git repository or not), hidden folders,
/// virtual environments, installed packages and build outputs are skipped, and so is what
/// `excluded` names. A file given by name is taken whatever the ignore files say.
pub(crate) fn python(root: &Path, excluded: &dyn Fn(&Path) -> bool, seen: &mut Seen) -> Walked {
    let mut walked = Walked::default();
    let mut renamed = false;
    let entries = ignore::WalkBuilder::new(root)
        .follow_links(true)
        .require_git(false)
        .git_global(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.depth() == 0 || !is_python_output(entry))
        .build();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                match unreadable(&err) {
                    Some(path) if is_source(path, "py") || is_source(path, "ipynb") => {
                        if seen.take(path) {
                            walked.files.push(path.to_owned());
                        }
                        continue;
                    }
                    // Another language's file (a `.rs`) is its own walk's to report.
                    Some(path) if path.extension().is_some() => continue,
                    _ => {}
                }
                walked.notes.push(format!("{err}; skipped"));
                continue;
            }
        };
        let path = entry.path();
        let is_python = entry.file_type().is_some_and(|kind| kind.is_file())
            && path
                .extension()
                .is_some_and(|ext| ext == "py" || ext == "ipynb");
        let excluded = || {
            path.ancestors()
                .take_while(|dir| dir.starts_with(root) && *dir != root)
                .any(excluded)
        };
        if !is_python || excluded() {
            continue;
        }
        if seen.take(path) {
            walked.files.push(entry.into_path());
            continue;
        }
        // A module is named by where it is: a package that a benchmark links to
        // (`benchmarks/a/pkg -> ../../pkg`) is linted as the package, not as the benchmark's.
        if !through_link(path, root)
            && let Some(taken) = (seen.name_of(path)).filter(|taken| through_link(taken, root))
            && let Some(slot) = walked.files.iter_mut().find(|file| *file == taken)
        {
            let taken = taken.to_owned();
            seen.rename(&taken, path);
            *slot = entry.into_path();
            renamed = true;
        }
    }
    if renamed {
        walked.files.sort();
    }
    walked
}

/// Whether `path`, below `root`, is reached through a symbolic link (to itself or a folder).
fn through_link(path: &Path, root: &Path) -> bool {
    path.ancestors()
        .take_while(|at| *at != root && at.starts_with(root))
        .any(Path::is_symlink)
}

/// Whether a path names a source file of the language of `extension` (`rs`, `py`), as far as
/// its name says: what a failed walk entry is.
fn is_source(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|ext| ext == extension)
}

/// The path of an entry the walk could not open (not a loop of links).
fn unreadable(err: &ignore::Error) -> Option<&Path> {
    fn is_io(err: &ignore::Error) -> bool {
        match err {
            ignore::Error::Io(_) => true,
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithPath { err, .. } => {
                is_io(err)
            }
            _ => false,
        }
    }
    match err {
        ignore::Error::WithPath { path, err } if is_io(err) => Some(path),
        ignore::Error::WithDepth { err, .. } => unreadable(err),
        _ => None,
    }
}

/// Counts the `.rs` files under `root` by why a walk skipped them, to explain a run that
/// linted nothing.
pub(crate) fn skipped(root: &Path, excluded: &dyn Fn(&Path) -> bool) -> Vec<(Skip, usize)> {
    let mut counts: Vec<(Skip, usize)> = Vec::new();
    let mut entries = WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    let mut reasons: Vec<(usize, Skip)> = Vec::new();
    while let Some(Ok(entry)) = entries.next() {
        reasons.retain(|(depth, _)| *depth < entry.depth());
        if let Some(reason) = skip(&entry, excluded) {
            reasons.push((entry.depth(), reason));
        }
        let is_source =
            entry.file_type().is_file() && entry.path().extension().is_some_and(|ext| ext == "rs");
        if let (true, Some((_, reason))) = (is_source, reasons.first()) {
            match counts.iter_mut().find(|(skip, _)| skip == reason) {
                Some((_, count)) => *count += 1,
                None => counts.push((*reason, 1)),
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_are_followed_loops_detected_and_each_file_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let shared = root.join("shared");
        std::fs::create_dir_all(shared.join("gpu")).unwrap();
        std::fs::write(shared.join("gpu/pick.rs"), "").unwrap();
        std::fs::write(shared.join("lib.rs"), "").unwrap();
        let src = root.join("crate/src");
        std::fs::create_dir_all(&src).unwrap();
        std::os::unix::fs::symlink(shared.join("lib.rs"), src.join("lib.rs")).unwrap();
        std::os::unix::fs::symlink(shared.join("gpu"), src.join("gpu")).unwrap();
        std::os::unix::fs::symlink(&root, src.join("again")).unwrap();
        std::fs::create_dir_all(root.join("crate/target/debug")).unwrap();
        std::fs::write(root.join("crate/Cargo.toml"), "").unwrap();
        std::fs::write(root.join("crate/target/debug/out.rs"), "").unwrap();

        let mut seen = Seen::default();
        let walked = walk(&root.join("crate"), &|_| false, &mut seen);
        let names: Vec<_> = walked
            .files
            .iter()
            .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["crate/src/gpu/pick.rs", "crate/src/lib.rs"]);
        assert_eq!(walked.manifests, [root.join("crate/Cargo.toml")]);
        assert!(
            walked.notes.iter().any(|note| note.contains("again")),
            "{:?}",
            walked.notes
        );
        // The same files reached again through their real folder are not taken twice.
        let again = walk(&shared, &|_| false, &mut seen);
        assert!(again.files.is_empty(), "{:?}", again.files);
    }

    #[test]
    fn skipped_files_are_counted_by_reason() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in ["a/.hidden/x.rs", "a/vendor/y.rs", "a/vendor/z.rs"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let excluded = |path: &Path| path.ends_with("vendor");
        let counts = skipped(&root.join("a"), &excluded);
        assert_eq!(counts, [(Skip::Hidden, 1), (Skip::Excluded, 2)]);
        assert!(
            walk(&root.join("a"), &excluded, &mut Seen::default())
                .files
                .is_empty()
        );
    }

    /// A `dist` or `build` folder is a build output unless it is a package of the project.
    #[test]
    fn build_outputs_are_skipped_and_packages_of_those_names_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "dist/lib/mod.py",
            "build/lib/mod.py",
            "pkg/__init__.py",
            "pkg/dist/__init__.py",
            "pkg/dist/utils.py",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let walked = python(root, &|_| false, &mut Seen::default());
        let mut found: Vec<String> = walked
            .files
            .iter()
            .map(|path| path.strip_prefix(root).unwrap().display().to_string())
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                "pkg/__init__.py",
                "pkg/dist/__init__.py",
                "pkg/dist/utils.py"
            ]
        );
    }

    /// A package that a benchmark links to is linted where it is, whichever name the walk
    /// reaches first.
    #[cfg(unix)]
    #[test]
    fn python_files_are_named_where_they_are_not_by_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
        std::fs::write(root.join("pkg/worker.py"), "").unwrap();
        std::fs::create_dir_all(root.join("benchmarks/speed")).unwrap();
        std::os::unix::fs::symlink("../../pkg", root.join("benchmarks/speed/pkg")).unwrap();
        let mut seen = Seen::default();
        let walked = python(&root, &|_| false, &mut seen);
        let found: Vec<String> = (walked.files.iter())
            .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(found, ["pkg/__init__.py", "pkg/worker.py"]);
        let note = seen.note(|path| path.strip_prefix(&root).unwrap().display().to_string());
        assert_eq!(
            note.as_deref(),
            Some(
                "pkg/__init__.py is also reached as benchmarks/speed/pkg/__init__.py (a symbolic \
                 link): it is linted once, under the first name (for a Python file, the one that \
                 goes through no link); so was 1 other file"
            )
        );
    }
}
