//! A tour of the runtime: discovery, explicit placement, the mismatch error, the implicit API's
//! hazard, memory statistics and timing.
//!
//! Run it on simulated GPUs anywhere:
//!     PLACEMENT_SIMULATED_GPUS=24GiB,24GiB cargo run -p placement --example tour
//! or on real GPUs with the CUDA driver installed:
//!     cargo run --release -p placement --example tour

use placement::implicit::{self, DeviceGuard};
use placement::timing::Event;
use placement::{Device, Selection, Tensor, TransferMode};

fn main() -> placement::Result<()> {
    println!("GPUs:");
    for info in placement::devices()? {
        println!(
            "  {}: {} ({} of {} MiB free, compute capability {:?})",
            info.device,
            info.name,
            info.free_memory >> 20,
            info.total_memory >> 20,
            info.compute_capability
        );
    }
    let gpu = match placement::select_device(&Selection::MostFreeMemory) {
        Ok(gpu) => gpu,
        Err(err) => {
            println!("{err}\nset PLACEMENT_SIMULATED_GPUS=24GiB,24GiB to simulate two GPUs");
            Device::Cpu
        }
    };
    println!("selected {gpu} (most free memory)\n");

    // Explicit placement: every tensor says where it lives, and a mismatch names both devices.
    let x = Tensor::randn(&[4, 8], 0, &Device::Cpu)?;
    let w = Tensor::randn(&[8, 2], 1, &gpu)?;
    match x.matmul(&w) {
        Ok(_) => println!("x and w share {gpu}"),
        Err(err) => println!("error: {err}"),
    }
    let y = x.to_device(&gpu)?.matmul(&w)?.relu()?;
    println!(
        "fixed: {:?} = relu(x.to_device(&{}) · w)\n",
        y,
        gpu.to_rust()
    );

    // The implicit API: `.cuda()` goes wherever the thread's current device points, so a
    // library call that changes it moves its caller's later tensors too.
    fn library_call_that_switches_devices(count: usize) -> placement::Result<()> {
        implicit::set_device(Device::Cuda(count - 1))
    }
    let count = placement::device_count()?;
    if count > 0 {
        println!("current device: {}", implicit::current_device()?);
        println!("x.cuda() lands on {}", x.cuda()?.device());
        library_call_that_switches_devices(count)?;
        println!(
            "after a library's set_device, x.cuda() lands on {}",
            x.cuda()?.device()
        );
        {
            let _scoped = DeviceGuard::new(Device::Cuda(0))?;
            println!("inside a DeviceGuard: {}", implicit::current_device()?);
        }
        println!("after the guard: {}\n", implicit::current_device()?);
    }

    // Memory statistics and timing on the selected device.
    placement::reset_peak_memory_stats(&gpu)?;
    let host = Tensor::randn(&[16 << 20], 2, &Device::Cpu)?; // 64 MiB
    for mode in [TransferMode::Pageable, TransferMode::Pinned] {
        drop(host.to_device_with(&gpu, mode)?); // warm-up: first-touch and staging allocation
        let start = Event::record(&gpu)?;
        let moved = host.to_device_with(&gpu, mode)?;
        let end = Event::record(&gpu)?;
        println!(
            "64 MiB to {gpu}, {mode:?}: {:.2} ms",
            start.elapsed_ms(&end)?
        );
        drop(moved);
    }
    let a = Tensor::randn(&[1024, 1024], 3, &gpu)?;
    let start = Event::record(&gpu)?;
    let product = a.matmul(&a)?;
    let end = Event::record(&gpu)?;
    let ms = start.elapsed_ms(&end)?;
    println!(
        "1024³ matmul on {gpu}: {ms:.2} ms ({:.1} GFLOP/s)",
        2.0 * 1024f64.powi(3) / (f64::from(ms) * 1e6)
    );
    println!(
        "memory on {gpu}: {} MiB allocated, peak {} MiB",
        placement::memory_allocated(&gpu)? >> 20,
        placement::max_memory_allocated(&gpu)? >> 20
    );
    drop((a, product));
    println!(
        "after dropping the tensors: {} MiB allocated",
        placement::memory_allocated(&gpu)? >> 20
    );
    Ok(())
}
