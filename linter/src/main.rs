//! `cargo placement`: lints device placement in Rust tensor programs.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use cargo_placement::config::CliLevels;
use cargo_placement::report::{self, MessageFormat, human::Style};
use cargo_placement::rules::{self, Level, RULES};

/// Lints device placement in Rust tensor programs (candle, tch, burn, cudarc, placement).
///
/// Exit status: 0 when nothing is at `deny` level, 1 when something is, 2 when the run itself
/// failed (bad arguments, configuration or paths).
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

    /// Workspace folders (with a Cargo.toml) or plain folders and files to lint [default: .]
    paths: Vec<PathBuf>,

    /// How to print findings.
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    message_format: MessageFormat,

    /// Do not report RULE.
    #[arg(short = 'A', long = "allow", value_name = "RULE")]
    allow: Vec<String>,

    /// Report RULE as a warning.
    #[arg(short = 'W', long = "warn", value_name = "RULE")]
    warn: Vec<String>,

    /// Report RULE as an error (exit status 1); `-D warnings` for every rule at `warn`.
    #[arg(short = 'D', long = "deny", value_name = "RULE")]
    deny: Vec<String>,

    /// Configuration file [default: placement.toml or [workspace.metadata.placement]]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// When to use colours in human output.
    #[arg(long, value_enum, default_value_t = Color::Auto, env = "CARGO_TERM_COLOR")]
    color: Color,
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
        ordered.extend(
            indices
                .zip(values)
                .map(|(index, rule)| (index, rule.clone(), level)),
        );
    }
    ordered.sort_by_key(|(index, ..)| *index);
    let deny_warnings = ordered
        .iter()
        .any(|(_, rule, level)| rule == "warnings" && *level == Level::Deny);
    let levels = ordered
        .into_iter()
        .filter(|(_, rule, _)| rule != "warnings")
        .map(|(_, rule, level)| (rule, level))
        .collect();
    CliLevels {
        levels,
        deny_warnings,
    }
}

fn explain(rule: &str) -> ExitCode {
    match rules::find(rule) {
        Some(rule) => {
            println!(
                "# {} (default: {})\n\n{}",
                rule.name,
                rule.default_level,
                rule.documentation().trim_end()
            );
            ExitCode::SUCCESS
        }
        None => {
            let names: Vec<_> = RULES.iter().map(|rule| rule.name).collect();
            eprintln!(
                "error: no rule named `{rule}`; the rules are: {}",
                names.join(", ")
            );
            ExitCode::from(2)
        }
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
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    // As a cargo subcommand, the second argument is the subcommand's own name.
    let mut args: Vec<_> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == "placement") {
        args.remove(1);
    }
    let matches = Cli::command().get_matches_from(args);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    match &cli.command {
        Some(Command::Explain { rule }) => return explain(rule),
        Some(Command::Rules) => return list_rules(),
        None => {}
    }
    let levels = cli_levels(&cli, &matches);
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
    let mut denied = false;
    let stdout = std::io::stdout();
    for path in &paths {
        let outcome = cargo_placement::prepare(path, cli.config.as_deref(), levels.clone())
            .and_then(|(workspace, config)| Ok(cargo_placement::lint(workspace, &config)?));
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(2);
            }
        };
        for warning in &outcome.warnings {
            eprintln!("warning: {warning}");
        }
        let mut out = String::new();
        match cli.message_format {
            MessageFormat::Human => report::human::write(&outcome, style, &mut out),
            MessageFormat::Json => report::json::write(&outcome, false, &mut out),
            MessageFormat::JsonRenderedAnsi => report::json::write(&outcome, true, &mut out),
        }
        if stdout.lock().write_all(out.as_bytes()).is_err() {
            return ExitCode::from(2);
        }
        denied |= outcome.count(Level::Deny) > 0;
    }
    if denied {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
