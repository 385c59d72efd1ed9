//! What implicit placement costs and what the fixes buy, measured on our own runtime:
//!
//! 1. **mlp**: the same small MLP forward pass written PyTorch-style (`set_device` once, then
//!    `.cuda()` on every input and weight) and with explicit devices, per device.
//! 2. **switching**: a loop whose body switches the current device on every step (the bug
//!    `stray_set_device` flags) against the same loop with an explicit device, per data size.
//! 3. **transfers**: host→device pageable and pinned, device→host, device→device, 4 KiB to
//!    1 GiB, as GB/s and as a fraction of the best rate of the same run (CUDA only, unless
//!    `--simulated` asks for the simulated path, which is a host memcpy).
//!
//! ```text
//! cargo bench -p placement --bench placement -- [--simulated 24GiB,24GiB] [--only mlp,switching,transfers]
//!     [--json FILE] [--svg FILE] [--compare pytorch.json] [--quick]
//! ```
//! Rounds alternate between the variants compared, so both see the same machine load.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use placement::implicit;
use placement::{Device, Tensor, TransferMode};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
struct Results {
    /// `placement` or `pytorch`.
    source: String,
    /// The GPUs the run used, as `devices()` names them.
    machine: String,
    mlp: Vec<MlpResult>,
    switching: Vec<SwitchResult>,
    transfers: Vec<TransferResult>,
}

#[derive(Debug, Serialize, Deserialize)]
struct MlpResult {
    device: String,
    explicit_us: f64,
    implicit_us: f64,
    /// implicit / explicit.
    ratio: f64,
}

#[derive(Debug, Serialize, Deserialize)]
struct SwitchResult {
    /// The two devices the buggy loop alternates between.
    devices: String,
    bytes: u64,
    explicit_us: f64,
    switching_us: f64,
    ratio: f64,
    /// Bytes moved per second of extra time: near-constant when the cost is in proportion to
    /// the data moved.
    extra_gbps: f64,
}

#[derive(Debug, Serialize, Deserialize)]
struct TransferResult {
    kind: String,
    bytes: u64,
    seconds: f64,
    gbps: f64,
    /// This rate against the best rate of the run.
    of_best: f64,
}

struct Args {
    simulated: Option<String>,
    only: Vec<String>,
    json: Option<PathBuf>,
    svg: Option<PathBuf>,
    compare: Option<PathBuf>,
    quick: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        simulated: None,
        only: Vec::new(),
        json: None,
        svg: None,
        compare: None,
        quick: false,
    };
    let mut raw = std::env::args().skip(1).filter(|arg| arg != "--bench");
    while let Some(arg) = raw.next() {
        let mut value = || raw.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--simulated" => args.simulated = Some(value()),
            "--only" => args.only = value().split(',').map(str::to_owned).collect(),
            "--json" => args.json = Some(value().into()),
            "--svg" => args.svg = Some(value().into()),
            "--compare" => args.compare = Some(value().into()),
            "--quick" => args.quick = true,
            other => panic!("unknown argument {other}; see the file's documentation"),
        }
    }
    args
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// Times `run` alternately with `other`, `rounds` times `calls` calls each; medians per call.
fn alternate(
    rounds: usize,
    calls: u32,
    mut run: impl FnMut(),
    mut other: impl FnMut(),
) -> (Duration, Duration) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    run();
    other();
    for _ in 0..rounds {
        let start = Instant::now();
        (0..calls).for_each(|_| run());
        a.push(start.elapsed() / calls);
        let start = Instant::now();
        (0..calls).for_each(|_| other());
        b.push(start.elapsed() / calls);
    }
    (median(a), median(b))
}

// ---- 1. mlp --------------------------------------------------------------------------------

const BATCH: usize = 64;
const WIDTHS: [usize; 4] = [256, 512, 256, 16];

struct Mlp {
    layers: Vec<(Tensor, Tensor)>,
}

impl Mlp {
    fn new(device: &Device) -> placement::Result<Mlp> {
        let layers = WIDTHS
            .windows(2)
            .enumerate()
            .map(|(i, dims)| {
                Ok((
                    Tensor::randn(&[dims[0], dims[1]], i as u64, device)?,
                    Tensor::randn(&[BATCH, dims[1]], 100 + i as u64, device)?,
                ))
            })
            .collect::<placement::Result<_>>()?;
        Ok(Mlp { layers })
    }

    /// The fix: every tensor is placed on a device the caller names.
    fn forward_explicit(&self, x: &Tensor, device: &Device) -> placement::Result<Tensor> {
        let mut h = x.to_device(device)?;
        for (weight, bias) in &self.layers {
            h = h.matmul(weight)?.add(bias)?.relu()?;
        }
        Ok(h)
    }

    /// PyTorch-style: `.cuda()` on the input and every parameter, wherever the thread's current
    /// device points (a device query per call; no copy when already there).
    fn forward_implicit(&self, x: &Tensor) -> placement::Result<Tensor> {
        let mut h = x.cuda()?;
        for (weight, bias) in &self.layers {
            h = h.matmul(&weight.cuda()?)?.add(&bias.cuda()?)?.relu()?;
        }
        Ok(h)
    }
}

fn mlp(devices: &[Device], quick: bool) -> Vec<MlpResult> {
    let (rounds, calls) = if quick { (3, 5) } else { (9, 20) };
    devices
        .iter()
        .map(|device| {
            let model = Mlp::new(device).expect("model");
            let x = Tensor::randn(&[BATCH, WIDTHS[0]], 7, &Device::Cpu).expect("input");
            implicit::set_device(*device).expect("current device");
            let (explicit, implicit) = alternate(
                rounds,
                calls,
                || drop(model.forward_explicit(&x, device).expect("forward")),
                || drop(model.forward_implicit(&x).expect("forward")),
            );
            MlpResult {
                device: device.to_string(),
                explicit_us: micros(explicit),
                implicit_us: micros(implicit),
                ratio: implicit.as_secs_f64() / explicit.as_secs_f64(),
            }
        })
        .collect()
}

// ---- 2. switching --------------------------------------------------------------------------

fn switching(pair: (Device, Device), quick: bool) -> Vec<SwitchResult> {
    let sizes: &[u64] = if quick {
        &[1 << 18, 1 << 22]
    } else {
        &[1 << 18, 1 << 22, 1 << 26]
    };
    let (home, away) = pair;
    sizes
        .iter()
        .map(|&bytes| {
            let x = Tensor::randn(&[bytes as usize / 4], 1, &home).expect("tensor");
            let steps = if quick { 4 } else { 16 };
            // The bug: a library call in the loop switches the current device, and `.cuda()`
            // follows it, so the data crosses over on every step.
            let switching = || {
                let mut t = x.clone();
                for step in 0..steps {
                    implicit::set_device(if step % 2 == 0 { away } else { home }).expect("switch");
                    t = t.cuda().expect("move").relu().expect("op");
                }
            };
            let explicit = || {
                let mut t = x.clone();
                for _ in 0..steps {
                    t = t.to_device(&home).expect("no move").relu().expect("op");
                }
            };
            let (explicit_time, switching_time) =
                alternate(if quick { 3 } else { 5 }, 1, explicit, switching);
            let per_step = |d: Duration| d / steps;
            let extra = switching_time.saturating_sub(explicit_time).as_secs_f64();
            SwitchResult {
                devices: format!("{home} <-> {away}"),
                bytes,
                explicit_us: micros(per_step(explicit_time)),
                switching_us: micros(per_step(switching_time)),
                ratio: switching_time.as_secs_f64() / explicit_time.as_secs_f64(),
                extra_gbps: (bytes as f64 * f64::from(steps)) / extra.max(1e-12) / 1e9,
            }
        })
        .collect()
}

// ---- 3. transfers --------------------------------------------------------------------------

fn transfers(gpus: usize, quick: bool) -> Vec<TransferResult> {
    let gpu = Device::Cuda(0);
    let top = if quick { 24 } else { 30 };
    let mut out = Vec::new();
    for exponent in (12..=top).step_by(2) {
        let bytes = 1u64 << exponent;
        let host = Tensor::zeros(&[bytes as usize / 4], &Device::Cpu).expect("host tensor");
        let on_gpu = host.to_device(&gpu).expect("device tensor");
        let reps = (64 >> (exponent / 4)).max(3);
        let time = |f: &dyn Fn()| {
            f();
            placement::synchronize(&gpu).expect("sync");
            let runs: Vec<Duration> = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    f();
                    placement::synchronize(&gpu).expect("sync");
                    start.elapsed()
                })
                .collect();
            median(runs)
        };
        let mut kinds: Vec<(&str, Duration)> = vec![
            (
                "host to device, pageable",
                time(&|| {
                    drop(
                        host.to_device_with(&gpu, TransferMode::Pageable)
                            .expect("h2d"),
                    )
                }),
            ),
            (
                "host to device, pinned",
                time(&|| {
                    drop(
                        host.to_device_with(&gpu, TransferMode::Pinned)
                            .expect("h2d"),
                    )
                }),
            ),
            (
                "device to host, pageable",
                time(&|| {
                    drop(
                        on_gpu
                            .to_device_with(&Device::Cpu, TransferMode::Pageable)
                            .expect("d2h"),
                    )
                }),
            ),
            (
                "device to host, pinned",
                time(&|| {
                    drop(
                        on_gpu
                            .to_device_with(&Device::Cpu, TransferMode::Pinned)
                            .expect("d2h"),
                    )
                }),
            ),
        ];
        if gpus > 1 {
            kinds.push((
                "device to device",
                time(&|| drop(on_gpu.to_device(&Device::Cuda(1)).expect("d2d"))),
            ));
        }
        for (kind, seconds) in kinds {
            let seconds = seconds.as_secs_f64();
            out.push(TransferResult {
                kind: kind.to_owned(),
                bytes,
                seconds,
                gbps: bytes as f64 / seconds / 1e9,
                of_best: 0.0,
            });
        }
    }
    let best = out.iter().map(|t| t.gbps).fold(0.0, f64::max);
    for result in &mut out {
        result.of_best = result.gbps / best;
    }
    out
}

fn plot(results: &Results, file: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let root = SVGBackend::new(file, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let max_gbps = results.transfers.iter().map(|t| t.gbps).fold(1.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("to_device rates, {}", results.machine),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((12u32..30u32).into_segmented(), 0.0..max_gbps)?;
    chart
        .configure_mesh()
        .x_desc("transfer size (log2 bytes: 12 = 4 KiB, 20 = 1 MiB, 30 = 1 GiB)")
        .y_desc("GB/s")
        .draw()?;
    let kinds: Vec<&str> =
        results
            .transfers
            .iter()
            .map(|t| t.kind.as_str())
            .fold(Vec::new(), |mut kinds, kind| {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
                kinds
            });
    for (index, kind) in kinds.iter().enumerate() {
        let color = Palette99::pick(index).to_rgba();
        let points = results
            .transfers
            .iter()
            .filter(|t| t.kind == *kind)
            .map(|t| (SegmentValue::CenterOf(t.bytes.trailing_zeros()), t.gbps));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(*kind)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

fn print(results: &Results, compare: Option<&Results>) {
    let theirs = |found: Option<String>| {
        found
            .map(|s| format!("   | pytorch: {s}"))
            .unwrap_or_default()
    };
    println!("{} on {}", results.source, results.machine);
    for m in &results.mlp {
        let other = compare.and_then(|c| c.mlp.iter().find(|t| t.device == m.device));
        let other = theirs(other.map(|t| {
            format!(
                "{:.1} / {:.1} us = {:.3}",
                t.implicit_us, t.explicit_us, t.ratio
            )
        }));
        println!(
            "mlp forward on {:<7} explicit {:>9.1} us, implicit {:>9.1} us, implicit/explicit {:.3}{other}",
            m.device, m.explicit_us, m.implicit_us, m.ratio
        );
    }
    for s in &results.switching {
        let other = compare.and_then(|c| {
            c.switching
                .iter()
                .find(|t| t.bytes == s.bytes && t.devices == s.devices)
        });
        let other =
            theirs(other.map(|t| format!("{:.1} us/step, {:.2}x", t.switching_us, t.ratio)));
        println!(
            "switching {} {:>7}: explicit {:>9.1} us/step, switching {:>9.1} us/step ({:.2}x; extra time moves {:.2} GB/s){other}",
            s.devices,
            size(s.bytes),
            s.explicit_us,
            s.switching_us,
            s.ratio,
            s.extra_gbps
        );
    }
    for t in &results.transfers {
        let other = compare.and_then(|c| {
            c.transfers
                .iter()
                .find(|o| o.kind == t.kind && o.bytes == t.bytes)
        });
        let other = theirs(other.map(|o| format!("{:.2} GB/s", o.gbps)));
        println!(
            "{:<26} {:>7}: {:>8.2} GB/s ({:>5.1}% of best){other}",
            t.kind,
            size(t.bytes),
            t.gbps,
            100.0 * t.of_best
        );
    }
}

fn main() {
    let args = parse_args();
    if let Some(spec) = &args.simulated {
        placement::simulated::configure(spec).expect("simulated GPUs");
    }
    let gpus = placement::devices().expect("GPU discovery");
    let machine = match gpus.first() {
        Some(first) => format!("{} x {}", gpus.len(), first.name),
        None => "cpu only".to_owned(),
    };
    let wants = |section: &str| args.only.is_empty() || args.only.iter().any(|s| s == section);
    let mut devices = vec![Device::Cpu];
    devices.extend(gpus.first().map(|info| info.device));
    let mut results = Results {
        source: "placement".to_owned(),
        machine,
        ..Results::default()
    };
    if wants("mlp") {
        results.mlp = mlp(&devices, args.quick);
    }
    if wants("switching") && !gpus.is_empty() {
        let pair = if gpus.len() > 1 {
            (Device::Cuda(0), Device::Cuda(1))
        } else {
            (Device::Cuda(0), Device::Cpu)
        };
        results.switching = switching(pair, args.quick);
    }
    let real_gpu = gpus
        .first()
        .is_some_and(|info| info.compute_capability.is_some());
    if wants("transfers") && !gpus.is_empty() && (real_gpu || !args.only.is_empty()) {
        results.transfers = transfers(gpus.len(), args.quick);
    }
    let compare: Option<Results> = args.compare.as_ref().and_then(|file| {
        let text = std::fs::read_to_string(file)
            .map_err(|err| eprintln!("no comparison: {}: {err}", file.display()))
            .ok()?;
        serde_json::from_str(&text)
            .map_err(|err| eprintln!("no comparison: {}: {err}", file.display()))
            .ok()
    });
    print(&results, compare.as_ref());
    if let Some(file) = &args.json {
        std::fs::write(file, serde_json::to_string_pretty(&results).expect("JSON"))
            .expect("write the JSON");
    }
    if let (Some(file), false) = (&args.svg, results.transfers.is_empty()) {
        plot(&results, file).expect("plot");
        println!("transfer curve: {}", file.display());
    }
}
