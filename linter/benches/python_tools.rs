//! `placement` on Python code against ruff (the fastest Python linter, with its default rules)
//! and TorchFix (PyTorch's own linter), on the same trees, as wall-time ratios measured in one
//! run with the tools' rounds alternating:
//! ```sh
//! pip install ruff torchfix
//! cargo bench -p cargo-placement --bench python_tools -- PATH...
//! ```
//! Each run is a fresh process, start-up included, as a user or CI runs the tools. ruff runs
//! `check --isolated --no-cache`; TorchFix, which takes minutes on a large tree, runs once
//! unless `--torchfix-rounds N` says otherwise. `RUFF` and `TORCHFIX` name the executables
//! when they are not on `PATH`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The wall time of one run of `program` with `args`, or why it could not run.
fn time(program: &str, args: &[String]) -> Result<Duration, String> {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|err| format!("cannot run `{program}`: {err}; install it (`pip install ruff torchfix`) or name it in RUFF / TORCHFIX"))?;
    // Linters exit non-zero when they find something; only a crash is a failure.
    if status.code().is_none() {
        return Err(format!("`{program}` was killed: {status}"));
    }
    Ok(start.elapsed())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn option(args: &mut Vec<String>, name: &str) -> Option<String> {
    let at = args.iter().position(|arg| arg == name)?;
    let value = args.get(at + 1).cloned();
    args.drain(at..(at + 2).min(args.len()));
    value
}

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let rounds: usize = option(&mut args, "--rounds").map_or(5, |n| n.parse().expect("--rounds N"));
    let torchfix_rounds: usize = option(&mut args, "--torchfix-rounds")
        .map_or(1, |n| n.parse().expect("--torchfix-rounds N"));
    let paths: Vec<String> = if args.is_empty() {
        vec![
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/demo/python")
                .display()
                .to_string(),
        ]
    } else {
        args
    };
    let ruff = std::env::var("RUFF").unwrap_or_else(|_| "ruff".to_owned());
    let torchfix = std::env::var("TORCHFIX").unwrap_or_else(|_| "torchfix".to_owned());
    let placement = env!("CARGO_BIN_EXE_placement");

    let files: usize = paths
        .iter()
        .flat_map(|path| walkdir::WalkDir::new(path).into_iter().flatten())
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "py"))
        .count();
    println!("{files} .py files under {} path(s)", paths.len());

    let mut ours_args = paths.clone();
    ours_args.extend(["--message-format".to_owned(), "short".to_owned()]);
    let mut ruff_args: Vec<String> = ["check", "--isolated", "--no-cache", "--exit-zero", "-q"]
        .map(str::to_owned)
        .to_vec();
    ruff_args.extend(paths.iter().cloned());

    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(time(placement, &ours_args).expect("placement runs"));
        match time(&ruff, &ruff_args) {
            Ok(took) => theirs.push(took),
            Err(err) => {
                eprintln!("{err}");
                std::process::exit(2);
            }
        }
    }
    let (ours, ruff_time) = (median(ours), median(theirs));
    println!(
        "placement:  {:>9.1} ms (median of {rounds})",
        ours.as_secs_f64() * 1e3
    );
    println!(
        "ruff check: {:>9.1} ms (median of {rounds}, default rules)",
        ruff_time.as_secs_f64() * 1e3
    );
    println!(
        "ratio placement / ruff: {:.2}",
        ours.as_secs_f64() / ruff_time.as_secs_f64()
    );

    if torchfix_rounds == 0 {
        return;
    }
    let mut torchfix_times = Vec::new();
    for _ in 0..torchfix_rounds {
        match time(&torchfix, &paths) {
            Ok(took) => torchfix_times.push(took),
            Err(err) => {
                eprintln!("{err}");
                std::process::exit(2);
            }
        }
    }
    let torchfix_time = median(torchfix_times);
    println!(
        "torchfix:   {:>9.1} ms (median of {torchfix_rounds})",
        torchfix_time.as_secs_f64() * 1e3
    );
    println!(
        "ratio torchfix / placement: {:.0}",
        torchfix_time.as_secs_f64() / ours.as_secs_f64()
    );
}
