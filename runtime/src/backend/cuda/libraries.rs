//! CUDA's libraries, found. cudarc asks the system's loader for NVRTC and cuBLAS by name
//! (`libnvrtc.so.13`, `.so.12`, ...), which finds those of a toolkit on the loader's path. The
//! others users have are found here: a toolkit under `CUDA_HOME` or `/usr/local/cuda*`, the
//! folders of `LD_LIBRARY_PATH` and `PLACEMENT_CUDA_LIBRARY_PATH`, and the `nvidia-*` Python
//! packages that PyTorch installs (`site-packages/nvidia/cu13/lib`, `nvidia/cublas/lib`). One
//! found is loaded by its path, globally, with what it needs beside it (cuBLAS needs cuBLASLt,
//! NVRTC its builtins), so that cudarc's lookup by name finds it loaded. CUDA 13's and 12's
//! libraries both serve.

use std::env;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

/// The major versions whose libraries the runtime loads, newest first.
const VERSIONS: [u32; 2] = [13, 12];

/// The libraries loaded here, kept loaded for the life of the process.
static LOADED: Mutex<Vec<Library>> = Mutex::new(Vec::new());

/// A library cudarc loads by name.
pub(super) struct Wanted {
    /// Its name as users know it (`NVRTC`).
    pub(super) what: &'static str,
    /// Its file's stem (`nvrtc` of `libnvrtc.so.13`).
    pub(super) name: &'static str,
    /// The stems of the libraries to load from the same folder first (`cublasLt`), or whose
    /// files start so (`nvrtc-builtins` of `libnvrtc-builtins.so.13.0`).
    pub(super) beside: &'static [&'static str],
}

pub(super) const NVRTC: Wanted = Wanted {
    what: "NVRTC",
    name: "nvrtc",
    beside: &["nvrtc-builtins"],
};

pub(super) const CUBLAS: Wanted = Wanted {
    what: "cuBLAS",
    name: "cublas",
    beside: &["cublasLt"],
};

/// Makes `wanted` loadable by name: `present` says whether cudarc finds it. Otherwise it is
/// looked for and loaded; `Err` says what was searched.
pub(super) fn ensure(wanted: &Wanted, present: impl Fn() -> bool) -> Result<(), String> {
    if present() {
        return Ok(());
    }
    let folders = folders();
    let found = folders.iter().find_map(|folder| {
        versioned(folder, wanted.name).map(|(file, version)| (folder, file, version))
    });
    if let Some((folder, file, version)) = found {
        for stem in wanted.beside {
            if let Some(companion) = companion(folder, stem, version) {
                // A companion that does not load leaves the library's own load to say why.
                let _ = load(&companion);
            }
        }
        load(&file).map_err(|err| format!("{} could not be loaded: {err}", file.display()))?;
        if present() {
            return Ok(());
        }
    }
    let names: Vec<String> = VERSIONS
        .iter()
        .map(|version| format!("lib{}.so.{version}", wanted.name))
        .collect();
    Err(format!(
        "{} ({}) was not found: the system's loader has none, nor {}; install the CUDA \
         toolkit's libraries (or PyTorch's nvidia-* packages), or name their folder in \
         PLACEMENT_CUDA_LIBRARY_PATH",
        wanted.what,
        names.join(" or "),
        match folders.is_empty() {
            true => "any folder".to_owned(),
            false => folders
                .iter()
                .map(|folder| folder.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    ))
}

fn load(file: &Path) -> Result<(), libloading::Error> {
    // SAFETY: loading a CUDA library runs its initializers, which is what cudarc's own load
    // would do a moment later.
    let library = unsafe { Library::open(Some(file), RTLD_NOW | RTLD_GLOBAL)? };
    LOADED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(library);
    Ok(())
}

/// `folder/lib{name}.so.{13,12}`, the newest there, with its major version.
fn versioned(folder: &Path, name: &str) -> Option<(PathBuf, u32)> {
    VERSIONS.iter().find_map(|&version| {
        let file = folder.join(format!("lib{name}.so.{version}"));
        file.is_file().then_some((file, version))
    })
}

/// The file of `stem` in `folder` for major `version`: `lib{stem}.so.{version}`, or one whose
/// name goes on from there (`libnvrtc-builtins.so.13.0`).
fn companion(folder: &Path, stem: &str, version: u32) -> Option<PathBuf> {
    let prefix = format!("lib{stem}.so.{version}");
    let mut names: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name == prefix || name.starts_with(&format!("{prefix}.")))
        })
        .collect();
    names.sort();
    names.into_iter().next()
}

/// The folders searched, in order.
fn folders() -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for variable in ["PLACEMENT_CUDA_LIBRARY_PATH", "LD_LIBRARY_PATH"] {
        if let Some(paths) = env::var_os(variable) {
            folders.extend(env::split_paths(&paths).filter(|path| !path.as_os_str().is_empty()));
        }
    }
    for variable in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(root) = env::var_os(variable) {
            folders.push(Path::new(&root).join("lib64"));
            folders.push(Path::new(&root).join("lib"));
        }
    }
    folders.push(PathBuf::from("/usr/local/cuda/lib64"));
    folders.extend(
        children(Path::new("/usr/local"), |name| name.starts_with("cuda-"))
            .map(|cuda| cuda.join("lib64")),
    );
    for site in site_packages() {
        // `nvidia/cu13/lib` (CUDA 13's wheels), `nvidia/cublas/lib` (CUDA 12's).
        folders.extend(children(&site.join("nvidia"), |_| true).map(|package| package.join("lib")));
    }
    let mut seen = std::collections::HashSet::new();
    folders.retain(|folder| folder.is_dir() && seen.insert(folder.clone()));
    folders
}

/// The folders Python installs packages into, for the interpreters a user may have: a virtual
/// or conda environment's, the `python3` on `PATH`, pyenv's, the user's and the system's.
fn site_packages() -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for variable in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        prefixes.extend(env::var_os(variable).map(PathBuf::from));
    }
    if let Some(paths) = env::var_os("PATH") {
        prefixes.extend(
            env::split_paths(&paths)
                .filter(|dir| dir.join("python3").is_file())
                .filter_map(|dir| dir.parent().map(Path::to_path_buf)),
        );
    }
    if let Some(home) = env::var_os("HOME").map(PathBuf::from) {
        prefixes.extend(children(&home.join(".pyenv/versions"), |_| true));
        prefixes.push(home.join(".local"));
    }
    prefixes.extend(["/usr/local", "/usr", "/opt/conda"].map(PathBuf::from));
    let mut sites: Vec<PathBuf> = Vec::new();
    for prefix in prefixes {
        for python in children(&prefix.join("lib"), |name| name.starts_with("python3")) {
            sites.push(python.join("site-packages"));
            sites.push(python.join("dist-packages"));
        }
    }
    sites.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    if let Some(paths) = env::var_os("PYTHONPATH") {
        sites.extend(env::split_paths(&paths));
    }
    sites.retain(|site| site.join("nvidia").is_dir());
    sites
}

/// The folders in `parent` whose names `keep` accepts, sorted by name.
fn children(parent: &Path, keep: impl Fn(&str) -> bool) -> impl Iterator<Item = PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(&keep))
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    found.sort();
    found.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_companion_is_found_by_its_versioned_name() {
        let dir = std::env::temp_dir().join(format!("placement-libraries-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "libnvrtc.so.13",
            "libnvrtc-builtins.so.13.0",
            "libcublasLt.so.12",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        assert_eq!(
            versioned(&dir, "nvrtc"),
            Some((dir.join("libnvrtc.so.13"), 13))
        );
        assert_eq!(versioned(&dir, "cublas"), None);
        assert_eq!(
            companion(&dir, "nvrtc-builtins", 13),
            Some(dir.join("libnvrtc-builtins.so.13.0"))
        );
        assert_eq!(
            companion(&dir, "cublasLt", 12),
            Some(dir.join("libcublasLt.so.12"))
        );
        assert_eq!(companion(&dir, "cublasLt", 13), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_library_found_nowhere_is_an_error_that_names_what_was_searched() {
        let missing = Wanted {
            what: "NoSuchLib",
            name: "placement-no-such-lib",
            beside: &[],
        };
        let err = ensure(&missing, || false).unwrap_err();
        assert!(err.starts_with("NoSuchLib (libplacement-no-such-lib.so.13 or libplacement-no-such-lib.so.12) was not found"), "{err}");
        assert!(err.contains("PLACEMENT_CUDA_LIBRARY_PATH"), "{err}");
    }
}
