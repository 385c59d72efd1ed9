//! Configuration: `placement.toml` at the workspace root, or `[tool.placement]` of its
//! `pyproject.toml`, or `[workspace.metadata.placement]`, and `[package.metadata.placement]`
//! for one package; then the command line on top.
//!
//! ```toml
//! entry_points = ["my_crate::launch::init_rank"]
//! exclude = ["vendor/**"]
//!
//! [levels]
//! hardcoded_device = "deny"
//!
//! [[api.item]]
//! path = "my_crate::gpu::default_gpu"
//! role = "implicit_device"
//!
//! [[python_api.item]]
//! path = "my_lib.gpu.select"
//! role = "set_current_device"
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::api::{Api, Table};
use crate::diagnostic::{Level, Rule};
use crate::rules;

/// One configuration source, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    levels: BTreeMap<String, Level>,
    #[serde(default)]
    entry_points: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    api: Table,
    /// Entries for Python files, in the same format with Python's dotted names
    /// (`[[python_api.item]] path = "mylib.gpu.pick"`).
    #[serde(default)]
    python_api: Table,
    /// Files larger than this are reported, not linted: `"10MiB"`, `"512KiB"` or bytes.
    #[serde(default)]
    max_file_size: Option<FileSize>,
    /// Rules not reported in the files a glob matches, as ruff's `per-file-ignores`:
    /// `"tests/**" = ["implicit_device"]` (also spelt `per-file-ignores`, as ruff spells it).
    #[serde(default, alias = "per-file-ignores")]
    per_file_ignores: BTreeMap<String, Vec<String>>,
}

/// A size in bytes, written as a number or with a unit (`"10MiB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSize(pub u64);

impl<'de> Deserialize<'de> for FileSize {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Bytes(u64),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Bytes(bytes) => Ok(FileSize(bytes)),
            Written::Text(text) => text
                .parse::<bytesize::ByteSize>()
                .map(|size| FileSize(size.as_u64()))
                .map_err(|_| {
                    serde::de::Error::custom(format!(
                        "`{text}` is not a size; write bytes (`10485760`) or a number with a \
                         unit (`\"10MiB\"`)"
                    ))
                }),
        }
    }
}

/// Files larger than this are reported by name and not linted unless the configuration says
/// otherwise: linting takes about 200 times a file's size in memory, so a generated file of
/// 50 MB would need 10 GB.
pub const DEFAULT_MAX_FILE_SIZE: FileSize = FileSize(10 << 20);

/// A configuration error: which source, and what is wrong with which key.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration in {source_name}: {message}")]
pub struct ConfigError {
    source_name: String,
    message: String,
}

impl ConfigError {
    fn new(source_name: impl Into<String>, message: impl ToString) -> Self {
        ConfigError {
            source_name: source_name.into(),
            message: message.to_string(),
        }
    }
}

impl ConfigFile {
    pub fn from_toml(name: &str, text: &str) -> Result<ConfigFile, ConfigError> {
        toml::from_str(text).map_err(|err| ConfigError::new(name, err.to_string().trim_end()))
    }

    pub fn from_metadata(name: &str, value: &serde_json::Value) -> Result<ConfigFile, ConfigError> {
        serde_json::from_value(value.clone()).map_err(|err| ConfigError::new(name, err))
    }

    /// `max_file_size`, or its default.
    pub fn max_file_size(&self) -> FileSize {
        self.max_file_size.unwrap_or(DEFAULT_MAX_FILE_SIZE)
    }

    /// The `exclude` globs, compiled; a bad glob is an error naming it.
    pub fn exclude_globs(&self, source_name: &str) -> Result<GlobSet, ConfigError> {
        let mut globs = GlobSetBuilder::new();
        add_globs(&mut globs, source_name, &self.exclude)?;
        globs
            .build()
            .map_err(|err| ConfigError::new(source_name, err))
    }
}

fn add_globs(
    globs: &mut GlobSetBuilder,
    source_name: &str,
    patterns: &[String],
) -> Result<(), ConfigError> {
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|err| {
            ConfigError::new(source_name, format!("`exclude` entry {pattern:?}: {err}"))
        })?;
        globs.add(glob);
    }
    Ok(())
}

/// Levels given on the command line, in order: later ones win, as with rustc's `-A/-W/-D`.
#[derive(Clone, Debug, Default)]
pub struct CliLevels {
    pub levels: Vec<(String, Level)>,
    /// `-D warnings` (every finding at `warn` raised to `deny`) or `-A warnings` (every one
    /// allowed), whichever came last, as rustc reads them.
    pub warnings: Option<Level>,
}

/// The configuration in force for a run.
#[derive(Debug)]
pub struct Config {
    levels: HashMap<String, Level>,
    package_levels: HashMap<String, HashMap<String, Level>>,
    cli: HashMap<String, Level>,
    /// `-D warnings` or `-A warnings` ([`CliLevels::warnings`]).
    all_warnings: Option<Level>,
    pub entry_points: Vec<String>,
    pub exclude: GlobSet,
    /// `per_file_ignores`: the files a glob matches, and the rules not reported there.
    per_file_ignores: Vec<(globset::GlobMatcher, Vec<String>)>,
    pub api: Arc<Api>,
    /// The tables for Python files, with the configuration's `python_api` entries.
    pub python_api: Arc<Api>,
    pub max_file_size: FileSize,
    /// Where the workspace configuration came from, for messages.
    pub source: Option<String>,
    /// Problems worth a warning (unknown rule names).
    pub warnings: Vec<String>,
}

/// How a warning about a rule name that no rule has starts: the command line then says which
/// command lists the rules (`placement rules` or `cargo placement rules`, as it was run).
pub const UNKNOWN_RULE: &str = "unknown rule";

impl Config {
    /// Builds the configuration from the workspace source, the packages' own sources (by
    /// package name) and the command line.
    pub fn new(
        workspace: Option<(String, ConfigFile)>,
        packages: Vec<(String, String, ConfigFile)>,
        cli: CliLevels,
    ) -> Result<Config, ConfigError> {
        let mut warnings = Vec::new();
        let mut check_names = |source: &str, levels: &BTreeMap<String, Level>| {
            for name in levels.keys() {
                if rules::find(name).is_none() {
                    warnings.push(format!("{UNKNOWN_RULE} `{name}` in the levels of {source}"));
                }
            }
        };
        let (source, mut file) = match workspace {
            Some((source, file)) => (Some(source), file),
            None => (None, ConfigFile::default()),
        };
        if let Some(source) = &source {
            check_names(source, &file.levels);
        }
        let source_name = source
            .clone()
            .unwrap_or_else(|| "the configuration".to_owned());
        let max_file_size = file.max_file_size.unwrap_or(DEFAULT_MAX_FILE_SIZE);
        let mut globs = GlobSetBuilder::new();
        let mut api_table = std::mem::take(&mut file.api);
        let mut python_table = std::mem::take(&mut file.python_api);
        let mut entry_points = std::mem::take(&mut file.entry_points);
        let mut package_levels = HashMap::new();
        add_globs(&mut globs, &source_name, &file.exclude)?;
        for (package, source, package_file) in packages {
            check_names(&source, &package_file.levels);
            api_table.extend(package_file.api);
            python_table.extend(package_file.python_api);
            entry_points.extend(package_file.entry_points);
            add_globs(&mut globs, &source, &package_file.exclude)?;
            package_levels.insert(package, bare_names(package_file.levels));
        }
        let exclude = globs
            .build()
            .map_err(|err| ConfigError::new(&source_name, err))?;
        let per_file_ignores = ignores(&source_name, &file.per_file_ignores, &mut warnings)?;
        let api = Api::new(api_table).map_err(|err| ConfigError::new(&source_name, err))?;
        let python_api =
            Api::python(python_table).map_err(|err| ConfigError::new(&source_name, err))?;
        Ok(Config {
            levels: bare_names(file.levels),
            package_levels,
            cli: cli.levels.into_iter().collect(),
            all_warnings: cli.warnings,
            entry_points,
            exclude,
            per_file_ignores,
            api,
            python_api,
            max_file_size,
            source,
            warnings,
        })
    }

    /// The level of `rule` for a file of `package`.
    pub fn level(&self, rule: &Rule, package: &str) -> Level {
        let name = rule.name;
        let level = self
            .cli
            .get(name)
            .or_else(|| {
                self.package_levels
                    .get(package)
                    .and_then(|levels| levels.get(name))
            })
            .or_else(|| self.levels.get(name))
            .copied()
            .unwrap_or(rule.default_level);
        match (level, self.all_warnings) {
            (Level::Warn, Some(warnings)) => warnings,
            (level, _) => level,
        }
    }

    /// Whether `rule` is not reported in the file at `relative` (workspace-relative) by
    /// `per_file_ignores`.
    pub fn ignores(&self, relative: &Path, rule: &str) -> bool {
        self.per_file_ignores
            .iter()
            .any(|(glob, rules)| rules.iter().any(|name| name == rule) && glob.is_match(relative))
    }

    /// Whether a workspace-relative path is excluded.
    pub fn excluded(&self, relative: &Path) -> bool {
        self.exclude.is_match(relative)
    }
}

/// The `per_file_ignores` of a configuration: each glob, and the rules by their bare names (an
/// unknown rule is said, as in `levels`).
fn ignores(
    source: &str,
    written: &BTreeMap<String, Vec<String>>,
    warnings: &mut Vec<String>,
) -> Result<Vec<(globset::GlobMatcher, Vec<String>)>, ConfigError> {
    let mut ignores = Vec::new();
    for (pattern, names) in written {
        let glob = Glob::new(pattern).map_err(|err| {
            ConfigError::new(
                source,
                format!("`per_file_ignores` entry {pattern:?}: {err}"),
            )
        })?;
        let names: Vec<String> = names
            .iter()
            .map(|name| rules::bare_name(name).to_owned())
            .collect();
        for name in names.iter().filter(|name| rules::find(name).is_none()) {
            warnings.push(format!(
                "{UNKNOWN_RULE} `{name}` in `per_file_ignores` of {source}"
            ));
        }
        ignores.push((glob.compile_matcher(), names));
    }
    Ok(ignores)
}

/// Levels by the rules' bare names (`placement::implicit_device` is `implicit_device`).
fn bare_names(levels: BTreeMap<String, Level>) -> HashMap<String, Level> {
    levels
        .into_iter()
        .map(|(name, level)| (rules::bare_name(&name).to_owned(), level))
        .collect()
}

/// The `[tool.placement]` table of a `pyproject.toml`, if it has one.
fn tool_table(path: &Path, text: &str) -> Result<Option<toml::Value>, ConfigError> {
    let name = path.display().to_string();
    let document: toml::Table =
        toml::from_str(text).map_err(|err| ConfigError::new(&name, err.to_string().trim_end()))?;
    Ok(document
        .get("tool")
        .and_then(|tool| tool.get("placement"))
        .cloned())
}

/// The functions a Python project installs as commands: `[project.scripts]` and
/// `[project.gui-scripts]` of the `pyproject.toml` in `root` (also poetry's
/// `[tool.poetry.scripts]`), as dotted names (`pkg.cli:main` → `pkg.cli.main`). Each is where a
/// program starts, as a main guard is. A file that cannot be read or parsed names none (its own
/// `[tool.placement]`, if any, reports why).
pub fn console_scripts(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join("pyproject.toml")) else {
        return Vec::new();
    };
    if !text.contains("scripts") {
        return Vec::new();
    }
    let Ok(document) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let project = document.get("project");
    let poetry = document.get("tool").and_then(|tool| tool.get("poetry"));
    let tables = [
        project.and_then(|project| project.get("scripts")),
        project.and_then(|project| project.get("gui-scripts")),
        poetry.and_then(|poetry| poetry.get("scripts")),
    ];
    let targets = tables
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
        .flat_map(|table| table.values())
        .filter_map(|target| match target {
            toml::Value::String(target) => Some(target.as_str()),
            // poetry's `{ callable = "pkg.cli:main" }`.
            toml::Value::Table(table) => table.get("callable")?.as_str(),
            _ => None,
        });
    targets
        .filter_map(|target| {
            let (module, function) = target.split_once(':')?;
            // `pkg.cli:App.run` names a method: its class's code starts the program.
            let function = function.split('.').next()?.trim();
            Some(format!("{}.{function}", module.trim()))
        })
        .collect()
}

/// Whether a `pyproject.toml` configures the linter (`[tool.placement]`); one that mentions it
/// but does not parse counts too, so that its error is reported rather than the file skipped.
pub fn configures(pyproject: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(pyproject) else {
        return false;
    };
    text.contains("placement") && tool_table(pyproject, &text).map_or(true, |table| table.is_some())
}

/// Reads a configuration file: a `placement.toml` (or any file given with `--config`), or the
/// `[tool.placement]` table of a `pyproject.toml`.
pub fn read_file(path: &Path) -> Result<Option<(String, ConfigFile)>, ConfigError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|err| ConfigError::new(&name, format!("cannot read it: {err}")))?;
    if path
        .file_name()
        .is_some_and(|file| file == "pyproject.toml")
    {
        let name = format!("[tool.placement] of {name}");
        return match tool_table(path, &text)? {
            Some(table) => ConfigFile::deserialize(table)
                .map(|file| Some((name.clone(), file)))
                .map_err(|err| ConfigError::new(&name, err.to_string().trim_end())),
            None => Ok(None),
        };
    }
    ConfigFile::from_toml(&name, &text).map(|file| Some((name, file)))
}

/// The workspace configuration source: `--config FILE`, else `placement.toml` in `root`, else
/// `[tool.placement]` of its `pyproject.toml`, else `[workspace.metadata.placement]` of the
/// root's manifest (`metadata` is its `[workspace.metadata]`).
pub fn load_workspace(
    explicit: Option<&Path>,
    root: &Path,
    metadata: Option<&toml::Value>,
) -> Result<Option<(String, ConfigFile)>, ConfigError> {
    if let Some(path) = explicit {
        return read_file(path);
    }
    let default = root.join("placement.toml");
    if default.is_file() {
        return read_file(&default);
    }
    let pyproject = root.join("pyproject.toml");
    if pyproject.is_file()
        && let Some(found) = read_file(&pyproject)?
    {
        return Ok(Some(found));
    }
    match metadata.and_then(|value| value.get("placement")) {
        Some(value) => {
            let name = format!(
                "[workspace.metadata.placement] of {}",
                root.join("Cargo.toml").display()
            );
            ConfigFile::deserialize(value.clone())
                .map(|file| Some((name.clone(), file)))
                .map_err(|err| ConfigError::new(&name, err.to_string().trim_end()))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_levels_are_named() {
        let err = ConfigFile::from_toml("placement.toml", "entry_point = []")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("placement.toml") && err.contains("entry_point"),
            "{err}"
        );
        let err = ConfigFile::from_toml("placement.toml", "[levels]\nimplicit_device = \"loud\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("loud") && err.contains("implicit_device"),
            "{err}"
        );
    }

    #[test]
    fn command_line_beats_package_beats_workspace() {
        let workspace =
            ConfigFile::from_toml("w", "[levels]\nimplicit_device = \"deny\"\nnope = \"warn\"")
                .unwrap();
        let package = ConfigFile::from_toml("p", "[levels]\nhardcoded_device = \"allow\"").unwrap();
        let cli = CliLevels {
            levels: vec![("stray_set_device".into(), Level::Allow)],
            warnings: Some(Level::Deny),
        };
        let config = Config::new(
            Some(("w".into(), workspace)),
            vec![("pkg".into(), "p".into(), package)],
            cli,
        )
        .unwrap();
        let level = |rule: &str, package: &str| config.level(rules::find(rule).unwrap(), package);
        assert_eq!(level("implicit_device", "pkg"), Level::Deny);
        assert_eq!(level("hardcoded_device", "pkg"), Level::Allow);
        assert_eq!(level("hardcoded_device", "other"), Level::Deny); // warn, raised by -D warnings
        assert_eq!(level("stray_set_device", "pkg"), Level::Allow);
        assert_eq!(config.warnings.len(), 1);
        assert!(config.warnings[0].contains("`nope`"));
    }
}
