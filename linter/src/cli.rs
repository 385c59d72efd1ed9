//! The command line, shared by the two binaries: `cargo-placement` (run by cargo as `cargo
//! placement`) and `placement` (the same linter under the name Python users install with pip).

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::config::CliLevels;
use crate::diagnostic::Level;
use crate::discover::Options;
use crate::project::discover;
use crate::report;
use crate::report::MessageFormat;
use crate::report::human::Style;
use crate::rules;
use crate::rules::RULES;

/// Lints device placement in tensor programs: PyTorch code (`.py` files and Jupyter notebooks)
/// and Rust (candle, tch, burn, cudarc, placement).
///
/// Exit status: 0 when nothing is at `deny` level, 1 when something is, 2 when the run itself
/// failed (bad arguments, configuration or paths, nothing to lint, or a file that a bug of the
/// linter stopped).
#[derive(Debug, Parser)]
#[command(
    name = "cargo-placement",
    bin_name = "cargo placement",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Folders or files to lint, each with the configuration of the workspace around it
    /// [default: .]
    paths: Vec<PathBuf>,

    /// How to print findings.
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    message_format: MessageFormat,

    /// Do not report RULE (`-A a,b` for two; `-A warnings` for every rule at `warn`).
    #[arg(short = 'A', long = "allow", value_name = "RULE")]
    allow: Vec<String>,

    /// Report RULE as a warning.
    #[arg(short = 'W', long = "warn", value_name = "RULE")]
    warn: Vec<String>,

    /// Report RULE as an error (exit status 1); `-D warnings` for every rule at `warn`.
    #[arg(short = 'D', long = "deny", value_name = "RULE")]
    deny: Vec<String>,

    /// Run only these rules (`--select hardcoded_device,implicit_device`); one that is off by
    /// default is turned on as a warning. `-A/-W/-D` still set their levels.
    #[arg(long, value_name = "RULE,...", value_delimiter = ',')]
    select: Vec<String>,

    /// Configuration file [default: placement.toml or [workspace.metadata.placement]]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// When to use colours in human output.
    #[arg(long, value_enum, default_value_t = Color::Auto, env = "CARGO_TERM_COLOR")]
    color: Color,

    /// Write the report to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Report only findings that the baseline FILE does not record.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,

    /// Record every finding in FILE, to adopt the linter on an existing codebase.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,

    /// Print how many findings each rule made.
    #[arg(long)]
    statistics: bool,

    /// Also say, on stderr, why each Python file that is a program as a whole (a script, a
    /// test) is one, so that its device choices are not flagged.
    #[arg(short, long)]
    verbose: bool,

    /// Run `cargo check` (or clippy) with JSON output first and forward its messages, so that one
    /// command serves rust-analyzer's `check.overrideCommand`. This builds the project.
    #[arg(long, value_enum, value_name = "COMMAND")]
    with_check: Option<CheckCommand>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the documentation of a rule.
    Explain {
        /// The rule, e.g. `stray_set_device`.
        rule: String,
    },
    /// List the rules with their default levels.
    Rules,
    /// Serve editors: the Language Server Protocol over stdin and stdout, with diagnostics as
    /// you type, and code actions that allow or explain a rule.
    Server,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CheckCommand {
    Check,
    Clippy,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

/// `-A/-W/-D` in command-line order, so that later ones win as with rustc.
fn cli_levels(cli: &Cli, matches: &ArgMatches) -> CliLevels {
    let mut ordered = Vec::new();
    for (id, level, values) in [
        ("allow", Level::Allow, &cli.allow),
        ("warn", Level::Warn, &cli.warn),
        ("deny", Level::Deny, &cli.deny),
    ] {
        let indices = matches.indices_of(id).into_iter().flatten();
        // `-A a,b` names two rules; `placement::a` is `a`.
        ordered.extend(indices.zip(values).flat_map(|(index, rules)| {
            rules
                .split(',')
                .map(str::trim)
                .filter(|rule| !rule.is_empty())
                .map(move |rule| (index, rules::bare_name(rule).to_owned(), level))
        }));
    }
    ordered.sort_by_key(|(index, ..)| *index);
    // `--select a,b`: every other rule allowed (but `parse_error`: a file that was not linted is
    // said), and a or b on if it is off by default; before the `-A/-W/-D` levels, which win.
    if !cli.select.is_empty() {
        let selected: Vec<&str> = cli
            .select
            .iter()
            .map(|rule| rules::bare_name(rule.trim()))
            .collect();
        let chosen = RULES.iter().filter_map(|rule| {
            let picked = selected.contains(&rule.name);
            match (picked, rule.default_level) {
                (false, _) if rule.name == "parse_error" => None,
                (false, _) => Some((0, rule.name.to_owned(), Level::Allow)),
                (true, Level::Allow) => Some((0, rule.name.to_owned(), Level::Warn)),
                (true, _) => None,
            }
        });
        // A name that is no rule is kept among the levels, for `unknown_rules` to refuse.
        let unknown = (selected.iter())
            .filter(|name| rules::find(name).is_none())
            .map(|name| (0, (*name).to_owned(), Level::Warn));
        ordered.splice(0..0, chosen.chain(unknown));
    }
    // `-D warnings` and `-A warnings` as rustc reads them; `-W warnings` changes nothing.
    let warnings = ordered
        .iter()
        .filter(|(_, rule, level)| rule == "warnings" && *level != Level::Warn)
        .map(|(_, _, level)| *level)
        .next_back();
    let levels = ordered
        .into_iter()
        .filter(|(_, rule, _)| rule != "warnings")
        .map(|(_, rule, level)| (rule, level))
        .collect();
    CliLevels { levels, warnings }
}

/// The rules named on the command line that do not exist, as an error that lists them all.
fn unknown_rules(levels: &CliLevels) -> Option<String> {
    let unknown: Vec<&str> = (levels.levels.iter())
        .map(|(rule, _)| rule.as_str())
        .filter(|rule| rules::find(rule).is_none())
        .collect();
    (!unknown.is_empty()).then(|| no_rule_named(&unknown))
}

/// `no rule named `a`, `b`; the rules are: ...`.
fn no_rule_named(unknown: &[&str]) -> String {
    let unknown: Vec<String> = unknown.iter().map(|rule| format!("`{rule}`")).collect();
    let names: Vec<&str> = RULES.iter().map(|rule| rule.name).collect();
    format!(
        "no rule named {}; the rules are: {}",
        unknown.join(", "),
        names.join(", ")
    )
}

fn explain(rule: &str) -> ExitCode {
    match rules::find(rule) {
        Some(rule) => {
            println!("{}", rules::explanation(rule));
            ExitCode::SUCCESS
        }
        None => fail(no_rule_named(&[rule])),
    }
}

fn list_rules() -> ExitCode {
    let width = RULES.iter().map(|rule| rule.name.len()).max().unwrap_or(0);
    for rule in RULES {
        println!(
            "{:width$}  {:5}  {}",
            rule.name,
            rule.default_level.to_string(),
            rule.summary()
        );
    }
    println!("\n{}", rules::IN_NOTEBOOKS);
    ExitCode::SUCCESS
}

/// Runs `cargo check` or `cargo clippy` with JSON messages in `dir`, returning its lines (less
/// its `build-finished`) and whether it succeeded.
fn run_check(command: CheckCommand, dir: &std::path::Path) -> Result<(String, bool), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let name = match command {
        CheckCommand::Check => "check",
        CheckCommand::Clippy => "clippy",
    };
    let output = std::process::Command::new(&cargo)
        .args([
            name,
            "--workspace",
            "--all-targets",
            "--message-format=json-diagnostic-rendered-ansi",
        ])
        .current_dir(dir)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|err| format!("cannot run `cargo {name}`: {err}"))?;
    let mut lines = String::new();
    let mut success = output.status.success();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(value) if value["reason"] == "build-finished" => success &= value["success"] == true,
            _ => {
                lines.push_str(line);
                lines.push('\n');
            }
        }
    }
    Ok((lines, success))
}

/// `rule: count`, most first.
fn statistics(outcome: &crate::project::Outcome) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for diagnostic in outcome.files.iter().flat_map(|file| &file.diagnostics) {
        match counts
            .iter_mut()
            .find(|(rule, _)| *rule == diagnostic.finding.rule.name)
        {
            Some((_, count)) => *count += 1,
            None => counts.push((diagnostic.finding.rule.name, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
        .iter()
        .map(|(rule, count)| format!("{count:>6}  {rule}\n"))
        .collect()
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// The arguments, less the subcommand name that cargo inserts when it runs us as `cargo
/// placement` (it sets `$CARGO` for its subcommands, as for `cargo run`): run directly,
/// `cargo-placement placement` lints a folder named `placement`.
fn arguments(subcommand: bool) -> Vec<std::ffi::OsString> {
    let mut args: Vec<_> = std::env::args_os().collect();
    let by_cargo = subcommand && std::env::var_os("CARGO").is_some();
    if by_cargo && args.get(1).is_some_and(|arg| arg == "placement") {
        args.remove(1);
    }
    // `cargo placement -- -D warnings`, as with clippy: levels after `--` are levels.
    if let Some(at) = args.iter().position(|arg| arg == "--")
        && levels_only(&args[at + 1..])
    {
        args.remove(at);
    }
    args
}

/// Whether arguments are only `-A/-W/-D` levels (`-D warnings`, `-Dwarnings`, `--deny=x`).
fn levels_only(args: &[std::ffi::OsString]) -> bool {
    let mut expects_value = false;
    !args.is_empty()
        && args.iter().all(|arg| {
            let arg = arg.to_string_lossy();
            if std::mem::take(&mut expects_value) {
                return !arg.starts_with('-');
            }
            let flag = ["-A", "-W", "-D", "--allow", "--warn", "--deny"]
                .into_iter()
                .find(|flag| arg.starts_with(flag));
            match flag {
                Some(flag) if arg.len() == flag.len() => {
                    expects_value = true;
                    true
                }
                Some(flag) => flag.len() == 2 || arg[flag.len()..].starts_with('='),
                None => false,
            }
        })
        && !expects_value
}

/// Runs the linter as `cargo placement` (`subcommand`, run by cargo) or as `placement`.
pub fn main(subcommand: bool) -> ExitCode {
    // The binary's own name, in `--version`, help and SARIF's tool.
    let (bin_name, tool) = match subcommand {
        true => ("cargo placement", "cargo-placement"),
        false => ("placement", "placement"),
    };
    let matches = Cli::command()
        .name(tool)
        .bin_name(bin_name)
        .get_matches_from(arguments(subcommand));
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    match &cli.command {
        Some(Command::Explain { rule }) => return explain(rule),
        Some(Command::Rules) => return list_rules(),
        Some(Command::Server) => {
            return match crate::server::run() {
                Ok(()) => ExitCode::SUCCESS,
                Err(why) => fail(why),
            };
        }
        None => {}
    }
    let terminal = std::io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let style = Style {
        color: match cli.color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => terminal && !no_color,
        },
        links: terminal,
        width: 100,
    };
    let paths = if cli.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        cli.paths.clone()
    };
    let json = matches!(
        cli.message_format,
        MessageFormat::Json | MessageFormat::JsonRenderedAnsi
    );
    if cli.with_check.is_some() && !json {
        return fail(
            "--with-check forwards cargo's JSON messages: use it with --message-format json",
        );
    }
    let levels = cli_levels(&cli, &matches);
    if let Some(unknown) = unknown_rules(&levels) {
        return fail(unknown);
    }
    let options = Options {
        config_file: cli.config.clone(),
        cli: levels,
    };
    let project = match discover(&paths, &options) {
        Ok(project) => project,
        Err(err) => return fail(err),
    };
    for note in &project.session.notes {
        eprintln!("note: {note}");
    }
    if project.session.files.is_empty() {
        return fail(project.session.why_empty());
    }
    // What `--with-check`'s `cargo check` printed, put before the findings.
    let mut checked = String::new();
    let mut check_ok = true;
    if let Some(command) = cli.with_check {
        match run_check(command, &project.session.root) {
            Ok((lines, ok)) => {
                checked = lines;
                check_ok = ok;
            }
            Err(err) => return fail(err),
        }
    }
    let progress = if std::io::stderr().is_terminal() && project.session.files.len() > 200 {
        indicatif::ProgressBar::new(project.session.files.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    progress.set_style(
        indicatif::ProgressStyle::with_template("{spinner} linting {pos}/{len} files {wide_bar}")
            .expect("a valid template"),
    );
    let mut outcome = crate::project::lint(project, &|| progress.inc(1));
    progress.finish_and_clear();
    if let Some(file) = &cli.baseline {
        match crate::baseline::Baseline::load(file) {
            Ok(baseline) => outcome.baselined = baseline.apply(&mut outcome),
            Err(err) => return fail(err),
        }
    }
    for warning in &outcome.warnings {
        eprintln!("warning: {warning}");
    }
    if (outcome.warnings.iter()).any(|warning| warning.starts_with(crate::config::UNKNOWN_RULE)) {
        eprintln!("note: `{bin_name} rules` lists the rules");
    }
    if cli.verbose {
        for program in &outcome.programs {
            eprintln!("note: {program}");
        }
    }
    let mut code = outcome.exit_code();
    let success = check_ok && code == 0;
    // Recording a baseline is how a codebase adopts the linter: it succeeds whatever it
    // recorded, and says what that was.
    if let Some(file) = &cli.write_baseline {
        match crate::baseline::write(&outcome, file) {
            Ok(count) => {
                eprintln!(
                    "recorded {count} finding(s) in the baseline {}; later runs with \
                     `--baseline {}` report only new ones",
                    file.display(),
                    file.display()
                );
                if outcome.internal_errors.is_empty() {
                    code = 0;
                }
            }
            Err(err) => return fail(err),
        }
    }
    let statistics = cli.statistics.then(|| statistics(&outcome));
    let mut sink = match &cli.output {
        Some(file) => match report::sink::Sink::file(file) {
            Ok(sink) => sink,
            Err(err) => return fail(err),
        },
        None => report::sink::Sink::stdout(),
    };
    // Each message is written as it is rendered; a write that fails stops the report, and
    // `finish` says why (the file named by `--output` is then left as it was).
    let _ = (|| -> std::fmt::Result {
        sink.write_str(&checked)?;
        match cli.message_format {
            MessageFormat::Human => report::human::write(&outcome, style, &mut sink)?,
            MessageFormat::Json => report::json::write(&outcome, false, &mut sink)?,
            MessageFormat::JsonRenderedAnsi => report::json::write(&outcome, true, &mut sink)?,
            MessageFormat::Short => report::short::write(&outcome, &mut sink)?,
            MessageFormat::Github => report::github::write(&outcome, &mut sink)?,
            MessageFormat::Sarif => report::sarif::write(&outcome, tool, &mut sink)?,
        }
        if json {
            sink.write_str(&report::json::finished(success))?;
        }
        match &statistics {
            Some(counts) if !cli.message_format.is_machine() && cli.output.is_none() => {
                sink.write_str(counts)
            }
            Some(counts) => {
                eprint!("{counts}");
                Ok(())
            }
            None => Ok(()),
        }
    })();
    if let Err(err) = sink.finish() {
        return fail(err);
    }
    ExitCode::from(code)
}
