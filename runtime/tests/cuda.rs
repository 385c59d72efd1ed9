//! The shared device suite and the cross-device checks on real GPUs. Ignored in CI, which has no
//! GPU; the GPU bundle (`runtime/gpu-bundle.sh`, then its `run.sh`) runs them where there is one.

mod common;

use placement::{Device, Error, Tensor, TransferMode};

/// Fails loudly when asked to run without a GPU, instead of passing vacuously.
fn gpu() {
    let count = placement::device_count().expect("GPU discovery");
    assert!(
        count > 0,
        "these tests need a CUDA GPU; run them from the GPU bundle (runtime/gpu-bundle.sh)"
    );
}

mod cuda0 {
    use super::*;
    device_suite!(gpu(), Device::Cuda(0), #[ignore = "needs a CUDA GPU"]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn devices_report_real_properties() {
    gpu();
    for info in placement::devices().unwrap() {
        println!("{info:?}");
        assert!(!info.name.is_empty());
        assert!(info.total_memory > 0 && info.free_memory <= info.total_memory);
        assert!(info.compute_capability.is_some());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cpu_and_gpu_mismatch_is_reported() {
    gpu();
    common::mismatch_is_reported(&Device::Cuda(0), &Device::Cpu);
    common::mismatch_is_reported(&Device::Cpu, &Device::Cuda(0));
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_gpus_mismatch_and_move() {
    gpu();
    if placement::device_count().unwrap() < 2 {
        eprintln!("only one GPU: skipping the cuda:0/cuda:1 checks");
        return;
    }
    common::mismatch_is_reported(&Device::Cuda(0), &Device::Cuda(1));
    let a = Tensor::randn(&[256, 256], 1, &Device::Cuda(0)).unwrap();
    let b = a.to_device(&Device::Cuda(1)).unwrap();
    assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn large_transfers_and_ops_are_exact() {
    gpu();
    let gpu = Device::Cuda(0);
    let n = 1 << 24; // 64 MiB: many blocks per kernel, several grid-stride rounds.
    let host = Tensor::randn(&[n], 3, &Device::Cpu).unwrap();
    for mode in [TransferMode::Pageable, TransferMode::Pinned] {
        let there = host.to_device_with(&gpu, mode).unwrap();
        let doubled = there
            .add(&there)
            .unwrap()
            .to_device_with(&Device::Cpu, mode)
            .unwrap();
        let want = host.add(&host).unwrap();
        assert_eq!(
            doubled.to_vec().unwrap(),
            want.to_vec().unwrap(),
            "{mode:?}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn memory_is_accounted_and_out_of_memory_is_an_error() {
    gpu();
    let gpu = Device::Cuda(0);
    let start = placement::memory_allocated(&gpu).unwrap();
    {
        let _a = Tensor::zeros(&[1 << 20], &gpu).unwrap();
        assert_eq!(
            placement::memory_allocated(&gpu).unwrap(),
            start + (4 << 20)
        );
        assert!(placement::max_memory_allocated(&gpu).unwrap() >= start + (4 << 20));
    }
    assert_eq!(placement::memory_allocated(&gpu).unwrap(), start);

    let (_, total) = placement::mem_get_info(&gpu).unwrap();
    let too_many = (total / 4 + (1 << 30)) as usize;
    let err = Tensor::zeros(&[too_many], &gpu).unwrap_err();
    assert!(
        matches!(
            err,
            Error::OutOfMemory {
                device: Device::Cuda(0),
                ..
            }
        ),
        "{err}"
    );
    println!("{err}");
    assert_eq!(placement::memory_allocated(&gpu).unwrap(), start);
    // The device still works after a failed allocation.
    assert_eq!(
        Tensor::ones(&[3], &gpu)
            .unwrap()
            .sum()
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![3.0]
    );
}
