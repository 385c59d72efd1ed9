//! The full lint against its floor, a parse-only pass over the same files (read, `syn` parse,
//! drop), in one process, alternating rounds so that both see the same machine load.
//!
//! ```text
//! cargo bench -p cargo-placement --bench lint_vs_parse -- PATH... [--rounds N]
//! ```
//! With no path it lints the bundled demo, which is too small to say much; give it large
//! folders (for example candle and burn checkouts) for a meaningful ratio.
//!
//! Peak memory is compared in two child processes (`--only parse`, `--only lint`), one pass
//! each over the same files after the same discovery, since a process's peak never goes down.
//!
//! Then whole processes, as a user runs them: `cargo-placement PATH... --message-format json`
//! (process start, discovery with `cargo metadata`, the lint, the report) against a process that
//! only reads and parses the same files in parallel (`--only parse-files LIST`), alternating,
//! each round's wall time and peak memory taken from `wait4`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use cargo_placement::discover::{FileUnit, Options};
use cargo_placement::project::discover;
use cargo_placement::source::Language;

// The linter's allocator, so that both sides of each ratio have it.
cargo_placement::global_allocator!();

/// Peak resident memory of this process so far, in MiB (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// CPU time of this process so far (every thread), from `/proc/self/stat` (Linux): less
/// disturbed than wall time by other work on a shared machine.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel reports clock ticks of 1/100 s on Linux.
    Some(Duration::from_millis(ticks * 10))
}

/// Reads and parses every file with its language's parser (`syn`, ruff's for `.py` files).
fn parse_only(units: &[FileUnit]) -> usize {
    units
        .par_iter()
        .map(|unit| parse_file(&unit.path, unit.language))
        .sum()
}

/// Reads and parses one file with its language's parser: 1 when it parses.
fn parse_file(path: &Path, language: Language) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match language {
        Language::Rust => {
            let parsed = syn::parse_file(&text).is_ok() as usize;
            proc_macro2::extra::invalidate_current_thread_spans();
            parsed
        }
        Language::Python => ruff_python_parser::parse_module(&text).is_ok() as usize,
    }
}

/// Lints every folder once: the findings, and the time discovery took.
fn lint_all(inputs: &[(PathBuf, Vec<FileUnit>)]) -> (usize, Duration) {
    let (mut findings, mut discovery) = (0, Duration::ZERO);
    for (path, _) in inputs {
        let discovering = Instant::now();
        let project = discover(std::slice::from_ref(path), &Options::default()).expect("discover");
        discovery += discovering.elapsed();
        let outcome = cargo_placement::project::lint(project, &|| {});
        findings += outcome
            .files
            .iter()
            .map(|file| file.diagnostics.len())
            .sum::<usize>();
    }
    (findings, discovery)
}

/// The peak resident memory of a child process that runs one pass, in MiB.
fn child_peak(pass: &str, paths: &[PathBuf]) -> Option<f64> {
    let output = std::process::Command::new(std::env::current_exe().ok()?)
        .args(["--only", pass])
        .args(paths)
        .output()
        .ok()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("peak resident memory: "))?
        .trim_end_matches(" MiB")
        .parse()
        .ok()
}

fn median<T: Ord>(mut values: Vec<T>) -> T {
    values.sort();
    values.swap_remove(values.len() / 2)
}

/// Runs a command to its end with its output discarded: its wall time and peak resident
/// memory in KiB (Linux's `ru_maxrss`), or why it failed. The command is started by a fresh
/// process of this bench (`--only measure`): a child started straight from this one, which holds
/// every file's text by now, would be charged this process's peak memory.
fn measure(command: &Command) -> Result<(Duration, u64), String> {
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    let output = Command::new(exe)
        .args(["--only", "measure", "--"])
        .arg(command.get_program())
        .args(command.get_args())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| format!("cannot start the measuring process: {err}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut fields = text.split_whitespace();
    match (fields.next(), fields.next()) {
        (Some(nanos), Some(kib)) if output.status.success() => Ok((
            Duration::from_nanos(nanos.parse().map_err(|_| text.to_string())?),
            kib.parse().map_err(|_| text.to_string())?,
        )),
        _ => Err(format!("{command:?} was not measured: {text}")),
    }
}

/// `--only measure -- PROGRAM ARGS...`: runs the program and prints its wall time in
/// nanoseconds and its peak memory in KiB.
fn measure_child(program: &[String]) -> Result<(), String> {
    let mut command = Command::new(program.first().ok_or("no program to measure")?);
    command.args(&program[1..]);
    let start = Instant::now();
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("cannot start {command:?}: {err}"))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|err| err.to_string())?;
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills in; `pid` is our own child, waited once.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals of the right types.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = start.elapsed();
    if waited != pid {
        return Err(format!("wait4 failed for {command:?}"));
    }
    // The linter exits 1 when a finding is at `deny` level: that is a finished run too.
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) > 1 {
        return Err(format!("{command:?} failed (status {status})"));
    }
    println!("{} {}", elapsed.as_nanos(), usage.ru_maxrss);
    Ok(())
}

/// The linter and a parse-only process over the same files, as whole processes, alternating
/// for `rounds` rounds: median wall times and peak memories.
fn whole_processes(paths: &[PathBuf], inputs: &[(PathBuf, Vec<FileUnit>)], rounds: usize) {
    let list = std::env::temp_dir().join(format!("placement-bench-{}.txt", std::process::id()));
    let names: Vec<String> = inputs
        .iter()
        .flat_map(|(_, units)| units.iter().map(|unit| unit.path.display().to_string()))
        .collect();
    std::fs::write(&list, names.join("\n")).expect("the file list");
    let (mut lint, mut parse) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut lint_command = Command::new(env!("CARGO_BIN_EXE_cargo-placement"));
        lint_command.args(paths).args(["--message-format", "json"]);
        let linted = measure(&lint_command);
        let parsed = std::env::current_exe()
            .map_err(|err| err.to_string())
            .and_then(|exe| {
                let mut parse_command = Command::new(exe);
                parse_command.arg("--only").arg("parse-files").arg(&list);
                measure(&parse_command)
            });
        match (linted, parsed) {
            (Ok(linted), Ok(parsed)) => {
                lint.push(linted);
                parse.push(parsed);
            }
            (Err(err), _) | (_, Err(err)) => {
                println!("whole processes: not measured: {err}");
                break;
            }
        }
    }
    let _ = std::fs::remove_file(&list);
    if lint.is_empty() {
        return;
    }
    let n = lint.len();
    let (lint_time, lint_peak) = (
        median(lint.iter().map(|(t, _)| *t).collect()),
        median(lint.iter().map(|(_, m)| *m).collect()),
    );
    let (parse_time, parse_peak) = (
        median(parse.iter().map(|(t, _)| *t).collect()),
        median(parse.iter().map(|(_, m)| *m).collect()),
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "whole processes (median of {n}, alternating): `cargo-placement --message-format json` \
         {:.1} ms, {:.0} MiB peak; parse-only process {:.1} ms, {:.0} MiB peak",
        ms(lint_time),
        mib(lint_peak),
        ms(parse_time),
        mib(parse_peak)
    );
    println!(
        "ratio whole lint process / parse-only process: {:.2} wall, {:.2} peak memory",
        lint_time.as_secs_f64() / parse_time.as_secs_f64(),
        lint_peak as f64 / parse_peak.max(1) as f64
    );
}

/// Reads and parses the files named in `list`, one path a line, in parallel: the floor of a
/// whole linter process.
fn parse_files(list: &Path) {
    let text = std::fs::read_to_string(list).expect("the file list");
    let parsed: usize = text
        .lines()
        .collect::<Vec<_>>()
        .par_iter()
        .map(|path| {
            let language = match path.ends_with(".py") {
                true => Language::Python,
                false => Language::Rust,
            };
            parse_file(Path::new(path), language)
        })
        .sum();
    assert!(parsed > 0 || text.is_empty());
}

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| arg != "--bench")
        .collect();
    let mut rounds = 5;
    if let Some(at) = args.iter().position(|arg| arg == "--rounds") {
        rounds = args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .expect("--rounds N");
        args.drain(at..at + 2);
    }
    let mut only = None;
    if let Some(at) = args.iter().position(|arg| arg == "--only") {
        only = Some(
            args.get(at + 1)
                .cloned()
                .expect("--only parse|lint|parse-files"),
        );
        args.drain(at..at + 2);
    }
    if only.as_deref() == Some("measure") {
        let program: Vec<String> = args.into_iter().skip_while(|arg| arg == "--").collect();
        if let Err(err) = measure_child(&program) {
            eprintln!("{err}");
            std::process::exit(1);
        }
        return;
    }
    if only.as_deref() == Some("parse-files") {
        return parse_files(Path::new(args.first().expect("--only parse-files LIST")));
    }
    let paths: Vec<PathBuf> = if args.is_empty() {
        vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/demo")]
    } else {
        args.iter().map(PathBuf::from).collect()
    };

    let mut inputs = Vec::new();
    let (mut files, mut lines, mut bytes) = (0, 0, 0);
    for path in &paths {
        let project = discover(std::slice::from_ref(path), &Options::default()).expect("discover");
        let units = project.session.files;
        for unit in &units {
            let text = std::fs::read_to_string(&unit.path).unwrap_or_default();
            lines += text.lines().count();
            bytes += text.len();
        }
        files += units.len();
        inputs.push((path.clone(), units));
    }
    if let Some(pass) = only {
        match pass.as_str() {
            "parse" => {
                inputs
                    .iter()
                    .map(|(_, units)| parse_only(units))
                    .sum::<usize>();
            }
            "lint" => {
                lint_all(&inputs);
            }
            other => panic!("--only {other}: expected `parse` or `lint`"),
        }
        println!(
            "peak resident memory: {:.0} MiB",
            peak_rss_mib().unwrap_or(0.0)
        );
        return;
    }
    println!(
        "{files} files, {lines} lines, {:.1} MiB of Rust and Python in {} folder(s)",
        bytes as f64 / (1 << 20) as f64,
        paths.len()
    );

    let (mut parse_times, mut lint_times, mut discovery_times) =
        (Vec::new(), Vec::new(), Vec::new());
    let (mut parse_cpu, mut lint_cpu) = (Duration::ZERO, Duration::ZERO);
    let mut findings = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let cpu = cpu_time();
        let parsed: usize = inputs.iter().map(|(_, units)| parse_only(units)).sum();
        parse_times.push(start.elapsed());
        parse_cpu += cpu_time()
            .zip(cpu)
            .map_or(Duration::ZERO, |(end, start)| end - start);
        assert!(parsed > 0 || files == 0);

        let start = Instant::now();
        let cpu = cpu_time();
        let discovery;
        (findings, discovery) = lint_all(&inputs);
        lint_times.push(start.elapsed());
        lint_cpu += cpu_time()
            .zip(cpu)
            .map_or(Duration::ZERO, |(end, start)| end - start);
        discovery_times.push(discovery);
    }
    let (parse, lint, discovery) = (
        median(parse_times),
        median(lint_times),
        median(discovery_times),
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "parse only:  {:>8.1} ms  (read and parse every file; median of {rounds})",
        ms(parse)
    );
    println!(
        "full lint:   {:>8.1} ms  ({findings} findings; of which {:.1} ms discovery: walking, `cargo metadata`, configuration and the files' pre-check, overlapped)",
        ms(lint),
        ms(discovery)
    );
    println!(
        "ratio full lint / parse: {:.2}",
        lint.as_secs_f64() / parse.as_secs_f64()
    );
    println!(
        "ratio lint after discovery / parse: {:.2}",
        (lint - discovery).as_secs_f64() / parse.as_secs_f64()
    );
    if !parse_cpu.is_zero() {
        println!(
            "ratio of CPU time, full lint / parse: {:.2} ({:.0} / {:.0} ms over {rounds} rounds)",
            lint_cpu.as_secs_f64() / parse_cpu.as_secs_f64(),
            ms(lint_cpu),
            ms(parse_cpu)
        );
    }
    println!(
        "files per second (full lint): {:.0}",
        files as f64 / lint.as_secs_f64()
    );
    if let (Some(parse), Some(lint)) = (child_peak("parse", &paths), child_peak("lint", &paths)) {
        println!(
            "peak resident memory: parse only {parse:.0} MiB, full lint {lint:.0} MiB, ratio {:.2}",
            lint / parse
        );
    }
    whole_processes(&paths, &inputs, rounds.max(7));
}
