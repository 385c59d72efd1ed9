//! The cost of `#[device_check]`: the same three-tensor function on a small CPU op, checked and
//! unchecked, alternating rounds in one process; with the heap allocations per call, counted by
//! the global allocator, since the check must not allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use placement::{Device, Tensor, device_check};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn unchecked(a: &Tensor, b: &Tensor, c: &Tensor) -> placement::Result<Tensor> {
    a.add(b)?.mul(c)
}

#[device_check]
fn checked(a: &Tensor, b: &Tensor, c: &Tensor) -> placement::Result<Tensor> {
    a.add(b)?.mul(c)
}

type Op = fn(&Tensor, &Tensor, &Tensor) -> placement::Result<Tensor>;

/// Time and allocations per call over `calls` calls.
fn measure(op: Op, args: &(Tensor, Tensor, Tensor), calls: u32) -> (Duration, f64) {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let start = Instant::now();
    for _ in 0..calls {
        black_box(op(black_box(&args.0), black_box(&args.1), black_box(&args.2)).unwrap());
    }
    let elapsed = start.elapsed() / calls;
    let allocations = (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / f64::from(calls);
    (elapsed, allocations)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    let cpu = Device::Cpu;
    let args = (
        Tensor::ones(&[4], &cpu).unwrap(),
        Tensor::ones(&[4], &cpu).unwrap(),
        Tensor::ones(&[4], &cpu).unwrap(),
    );
    let (calls, rounds) = (200_000, 9);
    let (mut plain, mut guarded) = (Vec::new(), Vec::new());
    let (mut plain_allocs, mut guarded_allocs) = (0.0, 0.0);
    measure(unchecked, &args, calls);
    measure(checked, &args, calls);
    for _ in 0..rounds {
        let (time, allocs) = measure(unchecked, &args, calls);
        plain.push(time);
        plain_allocs = allocs;
        let (time, allocs) = measure(checked, &args, calls);
        guarded.push(time);
        guarded_allocs = allocs;
    }
    let (plain, guarded) = (median(plain), median(guarded));
    println!(
        "three 4-element CPU tensors, (a + b) * c, median of {rounds} rounds of {calls} calls"
    );
    println!(
        "unchecked: {:>7.1} ns/call, {plain_allocs:.1} allocations/call",
        plain.as_nanos() as f64
    );
    println!(
        "checked:   {:>7.1} ns/call, {guarded_allocs:.1} allocations/call",
        guarded.as_nanos() as f64
    );
    println!(
        "check cost: {:+.1} ns/call, ratio checked / unchecked: {:.3}",
        guarded.as_nanos() as f64 - plain.as_nanos() as f64,
        guarded.as_secs_f64() / plain.as_secs_f64()
    );
    assert_eq!(plain_allocs, guarded_allocs, "the check must not allocate");
}
