//! The runtime on the CPU and on simulated GPUs: every device check, multi-GPU placement,
//! discovery and selection, memory accounting and the implicit API.

mod common;

use placement::implicit::{self, DeviceGuard};
use placement::{Device, Error, Placed, Selection, Tensor, TensorPath};

/// cuda:0 and cuda:1 run the shared suite; cuda:1 is the largest, for selection; cuda:2 is
/// small and touched only by `memory_is_accounted_and_limited`, so its counters are exact, and
/// cuda:3 likewise only by `moves_are_all_or_nothing`.
const SPEC: &str = "1GiB,2GiB,64MiB,48MiB";
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn gpus() {
    placement::simulated::configure(SPEC).expect("simulated GPUs configure");
}

mod cpu {
    use super::*;
    device_suite!(gpus(), Device::Cpu);
}

mod cuda0 {
    use super::*;
    device_suite!(gpus(), Device::Cuda(0));
}

mod cuda1 {
    use super::*;
    device_suite!(gpus(), Device::Cuda(1));
}

#[test]
fn mismatched_devices_are_errors() {
    gpus();
    common::mismatch_is_reported(&Device::Cuda(0), &Device::Cuda(1));
    common::mismatch_is_reported(&Device::Cuda(0), &Device::Cpu);
    common::mismatch_is_reported(&Device::Cpu, &Device::Cuda(1));
    // The mismatch is the point of this test.
    let err = Tensor::ones(&[1], &Device::Cpu)
        .unwrap()
        // placement: allow(device_mismatch)
        .add(&Tensor::ones(&[1], &Device::Cuda(0)).unwrap())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`add` got tensors on different devices: lhs is on cpu, rhs is on cuda:0; \
         move one of them first, for example `rhs.to_device(&Device::Cpu)`"
    );
}

#[test]
fn tensors_move_between_gpus() {
    gpus();
    let a = Tensor::randn(&[3, 4], 9, &Device::Cuda(0)).unwrap();
    let b = a.to_device(&Device::Cuda(1)).unwrap();
    assert_eq!(b.device(), Device::Cuda(1));
    assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap());
    let back = b.to_device(&Device::Cuda(0)).unwrap();
    assert_eq!(back.add(&a).unwrap().device(), Device::Cuda(0));
}

#[test]
fn unknown_gpus_are_errors() {
    gpus();
    let err = Tensor::zeros(&[1], &Device::Cuda(4)).unwrap_err();
    assert_eq!(
        err,
        Error::DeviceOutOfRange {
            device: Device::Cuda(4),
            count: 4
        }
    );
    assert_eq!(
        err.to_string(),
        "cuda:4 does not exist: 4 GPUs are visible (cuda:0 to cuda:3); \
         check CUDA_VISIBLE_DEVICES or list them with `placement::devices()`"
    );
    let cpu = Tensor::ones(&[1], &Device::Cpu).unwrap();
    assert!(matches!(
        cpu.to_device(&Device::Cuda(7)),
        Err(Error::DeviceOutOfRange { .. })
    ));
    assert!(matches!(
        placement::synchronize(&Device::Cuda(4)),
        Err(Error::DeviceOutOfRange { .. })
    ));
    assert!(matches!(
        placement::memory_allocated(&Device::Cuda(4)),
        Err(Error::DeviceOutOfRange { .. })
    ));
}

#[test]
fn reconfiguring_is_refused_once_set_up() {
    gpus();
    placement::simulated::configure(SPEC).expect("the same spec again is fine");
    let err = placement::simulated::configure("8GiB").unwrap_err();
    assert!(matches!(err, Error::AlreadyInitialized { .. }), "{err}");
    assert!(
        err.to_string().contains("\"1GiB,2GiB,64MiB,48MiB\""),
        "{err}"
    );
}

#[test]
fn devices_are_listed_with_their_memory() {
    gpus();
    assert_eq!(placement::device_count().unwrap(), 4);
    let devices = placement::devices().unwrap();
    let listed: Vec<_> = devices
        .iter()
        .map(|d| (d.device, d.name.as_str(), d.total_memory))
        .collect();
    assert_eq!(
        listed,
        vec![
            (Device::Cuda(0), "simulated GPU 0 (1.0 GiB)", GIB),
            (Device::Cuda(1), "simulated GPU 1 (2.0 GiB)", 2 * GIB),
            (Device::Cuda(2), "simulated GPU 2 (64.0 MiB)", 64 * MIB),
            (Device::Cuda(3), "simulated GPU 3 (48.0 MiB)", 48 * MIB),
        ]
    );
    assert!(
        devices
            .iter()
            .all(|d| d.compute_capability.is_none() && d.free_memory <= d.total_memory)
    );
}

#[test]
fn selection_picks_by_free_memory_or_preference() {
    gpus();
    assert_eq!(
        placement::select_device(&Selection::MostFreeMemory).unwrap(),
        Device::Cuda(1)
    );
    let roomy = Selection::MinFreeMemory(GIB + GIB / 2);
    assert_eq!(placement::select_device(&roomy).unwrap(), Device::Cuda(1));
    let preferred = Selection::Preferred(vec![5, 2, 0]);
    assert_eq!(
        placement::select_device(&preferred).unwrap(),
        Device::Cuda(2)
    );

    let err = placement::select_device(&Selection::MinFreeMemory(4 * GIB)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("no device meets the selection at least 4.0 GiB free: cuda:0 has "),
        "{msg}"
    );
    assert!(
        msg.contains("of 2.0 GiB free") && msg.contains("of 64.0 MiB free"),
        "{msg}"
    );
    let err = placement::select_device(&Selection::Preferred(vec![7, 8])).unwrap_err();
    assert!(
        err.to_string().contains("first of [cuda:7, cuda:8]"),
        "{err}"
    );
}

#[test]
fn memory_is_accounted_and_limited() {
    gpus();
    let gpu = Device::Cuda(2);
    let start = placement::memory_allocated(&gpu).unwrap();
    assert_eq!(start, 0);
    {
        let a = Tensor::zeros(&[1024, 1024], &gpu).unwrap(); // 4 MiB
        let b = Tensor::ones(&[1024, 1024], &gpu).unwrap();
        assert_eq!(placement::memory_allocated(&gpu).unwrap(), 8 * MIB);
        let c = a.add(&b).unwrap();
        assert_eq!(placement::memory_allocated(&gpu).unwrap(), 12 * MIB);
        drop(c);
        assert_eq!(placement::mem_get_info(&gpu).unwrap(), (56 * MIB, 64 * MIB));
        assert_eq!(placement::max_memory_allocated(&gpu).unwrap(), 12 * MIB);
        placement::reset_peak_memory_stats(&gpu).unwrap();
        assert_eq!(placement::max_memory_allocated(&gpu).unwrap(), 8 * MIB);

        // Out of memory is an error value that names the device, the request and what is free.
        let err = Tensor::zeros(&[16, 1024, 1024], &gpu).unwrap_err();
        assert_eq!(
            err,
            Error::OutOfMemory {
                device: gpu,
                requested: 64 * MIB,
                free: Some(56 * MIB),
                total: Some(64 * MIB)
            }
        );
        assert_eq!(
            err.to_string(),
            "out of memory on cuda:2: tried to allocate 64.0 MiB, but only 56.0 MiB of 64.0 MiB \
             are free; free tensors you no longer need or choose a device with `select_device`"
        );
        // Moves and results fail the same way, and leave the counters as they were.
        let big = Tensor::zeros(&[15, 1024, 1024], &Device::Cpu).unwrap();
        assert!(matches!(
            big.to_device(&gpu),
            Err(Error::OutOfMemory { .. })
        ));
        assert_eq!(placement::memory_allocated(&gpu).unwrap(), 8 * MIB);
    }
    // Everything is given back when the tensors drop.
    assert_eq!(placement::memory_allocated(&gpu).unwrap(), start);
    assert_eq!(placement::mem_get_info(&gpu).unwrap(), (64 * MIB, 64 * MIB));
    assert!(matches!(
        placement::mem_get_info(&Device::Cpu),
        Err(Error::NotAGpu { .. })
    ));
}

#[test]
fn constructors_check_the_limit_before_building_data() {
    gpus();
    // 4 TiB on a 64 MiB GPU: refused by the limit, before any host buffer is built.
    let huge = [1 << 40];
    for result in [
        Tensor::zeros(&huge, &Device::Cuda(2)),
        Tensor::ones(&huge, &Device::Cuda(2)),
        Tensor::randn(&huge, 0, &Device::Cuda(2)),
    ] {
        match result.unwrap_err() {
            Error::OutOfMemory {
                device,
                requested,
                free,
                total,
            } => {
                assert_eq!(
                    (device, requested, total),
                    (Device::Cuda(2), 4 << 40, Some(64 * MIB))
                );
                assert!(free.is_some_and(|free| free <= 64 * MIB));
            }
            other => panic!("{other}"),
        }
    }
    // In release builds 2^62 elements' bytes would wrap to 0 and pass the limit.
    assert_eq!(
        Tensor::zeros(&[1 << 62], &Device::Cuda(2)).unwrap_err(),
        Error::ShapeOverflow {
            shape: vec![1 << 62]
        }
    );
}

/// Three 16 MiB tensors cannot all fit a 48 MiB GPU beside another 1 MiB.
#[test]
fn moves_are_all_or_nothing() {
    gpus();
    let gpu = Device::Cuda(3);
    let _resident = Tensor::zeros(&[256 * 1024], &gpu).unwrap();
    let before = placement::memory_allocated(&gpu).unwrap();
    let big = || Tensor::zeros(&[4 * 1024 * 1024], &Device::Cpu).unwrap();
    let mut weights = vec![big(), big(), big()];
    let err = weights
        .move_tensors(&TensorPath::root("weights"), &gpu)
        .unwrap_err();
    let Error::Move {
        path,
        device,
        source,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!((path.as_str(), *device), ("weights[2]", gpu));
    assert!(matches!(**source, Error::OutOfMemory { .. }), "{source}");
    assert!(
        err.to_string().starts_with(
            "cannot move `weights[2]` to cuda:3, so nothing was moved: out of memory on cuda:3"
        ),
        "{err}"
    );
    assert_eq!(
        weights.device("weights"),
        Ok(Some(Device::Cpu)),
        "nothing moved"
    );
    assert_eq!(
        placement::memory_allocated(&gpu).unwrap(),
        before,
        "copies freed"
    );

    let err = weights[..2]
        .to_vec()
        .to_device(&Device::Cuda(9))
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "cannot move `self[0]` to cuda:9, so nothing was moved: cuda:9 does not exist"
        ),
        "{err}"
    );
    weights.truncate(2);
    weights
        .move_tensors(&TensorPath::root("weights"), &gpu)
        .unwrap();
    assert_eq!(weights.device("weights"), Ok(Some(gpu)));
}

/// Runs `body` on a fresh thread, so that thread-local state starts clean.
fn on_new_thread(body: impl FnOnce() + Send + 'static) {
    std::thread::spawn(body)
        .join()
        .expect("test thread panicked");
}

#[test]
fn current_device_is_per_thread() {
    gpus();
    on_new_thread(|| {
        assert_eq!(implicit::default_device(), Ok(Device::Cuda(0)));
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(0));
        implicit::set_device(Device::Cuda(1)).unwrap();
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(1));
        // A new thread starts at the default, not at its parent's device.
        let child = std::thread::spawn(implicit::current_device)
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(child, Device::Cuda(0));
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(1));
    });
}

#[test]
fn set_device_rejects_missing_gpus() {
    gpus();
    on_new_thread(|| {
        let err = implicit::set_device(Device::Cuda(9)).unwrap_err();
        assert!(matches!(err, Error::DeviceOutOfRange { .. }), "{err}");
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(0));
        assert!(DeviceGuard::new(Device::Cuda(9)).is_err());
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(0));
    });
}

#[test]
fn guards_restore_the_previous_device() {
    gpus();
    on_new_thread(|| {
        implicit::set_device(Device::Cuda(1)).unwrap();
        {
            let _outer = DeviceGuard::new(Device::Cpu).unwrap();
            assert_eq!(implicit::current_device().unwrap(), Device::Cpu);
            {
                let _inner = DeviceGuard::new(Device::Cuda(2)).unwrap();
                assert_eq!(implicit::current_device().unwrap(), Device::Cuda(2));
            }
            assert_eq!(implicit::current_device().unwrap(), Device::Cpu);
        }
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(1));
    });
}

#[test]
fn guards_restore_on_panic() {
    gpus();
    on_new_thread(|| {
        let unwound = std::panic::catch_unwind(|| {
            let _guard = DeviceGuard::new(Device::Cuda(1)).unwrap();
            assert_eq!(implicit::current_device().unwrap(), Device::Cuda(1));
            panic!("fails while cuda:1 is current");
        });
        assert!(unwound.is_err());
        assert_eq!(implicit::current_device().unwrap(), Device::Cuda(0));
    });
}

#[test]
fn cuda_follows_set_device() {
    gpus();
    on_new_thread(|| {
        let x = Tensor::from_slice(&[1.0, 2.0], &[2], &Device::Cpu).unwrap();
        assert_eq!(x.cuda().unwrap().device(), Device::Cuda(0));
        implicit::set_device(Device::Cuda(1)).unwrap();
        let moved = x.cuda().unwrap();
        assert_eq!(moved.device(), Device::Cuda(1));
        assert_eq!(moved.to_vec().unwrap(), vec![1.0, 2.0]);
        let _guard = DeviceGuard::new(Device::Cuda(0)).unwrap();
        assert_eq!(moved.cuda().unwrap().device(), Device::Cuda(0));
    });
}
