//! Checks written once against `&Device` and run on every device a test binary has: the CPU and
//! simulated GPUs in CI, real GPUs where present (see `cuda.rs`). Results are compared with a
//! float64 reference computed on the host from the same random inputs.

#![allow(dead_code, unreachable_pub)] // each test binary uses the part it needs

use placement::{Device, Error, Tensor, TransferMode};

/// Defines one `#[test]` per check below for `$device`, each running `$setup` first.
#[macro_export]
macro_rules! device_suite {
    ($setup:expr, $device:expr $(, #[$attr:meta])*) => {
        #[test] $(#[$attr])* fn binary_ops_match_f64() { $setup; common::binary_ops_match_f64(&$device) }
        #[test] $(#[$attr])* fn operators_match_methods() { $setup; common::operators_match_methods(&$device) }
        #[test] $(#[$attr])* fn matmul_matches_f64() { $setup; common::matmul_matches_f64(&$device) }
        #[test] $(#[$attr])* fn relu_and_sum_match_f64() { $setup; common::relu_and_sum_match_f64(&$device) }
        #[test] $(#[$attr])* fn constructors_fill_and_check() { $setup; common::constructors_fill_and_check(&$device) }
        #[test] $(#[$attr])* fn shape_errors_name_the_op() { $setup; common::shape_errors_name_the_op(&$device) }
        #[test] $(#[$attr])* fn host_round_trips_keep_data() { $setup; common::host_round_trips_keep_data(&$device) }
        #[test] $(#[$attr])* fn empty_tensors_work() { $setup; common::empty_tensors_work(&$device) }
        #[test] $(#[$attr])* fn events_time_work() { $setup; common::events_time_work(&$device) }
        #[test] $(#[$attr])* fn relu_and_sum_follow_pytorch() { $setup; common::relu_and_sum_follow_pytorch(&$device) }
        #[test] $(#[$attr])* fn huge_shapes_are_errors() { $setup; common::huge_shapes_are_errors(&$device) }
    };
}

/// Random f32 inputs and their f64 copies.
fn random(shape: &[usize], seed: u64, device: &Device) -> (Tensor, Vec<f64>) {
    let tensor = Tensor::randn(shape, seed, device).unwrap();
    let values = tensor
        .to_vec()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    (tensor, values)
}

pub fn assert_close(got: &[f32], want: &[f64], tolerance: f64) {
    assert_eq!(got.len(), want.len(), "lengths differ");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(g) - w).abs();
        assert!(
            err <= tolerance * (1.0 + w.abs()),
            "element {i}: got {g}, want {w} (err {err})"
        );
    }
}

pub fn binary_ops_match_f64(device: &Device) {
    let shape = [7, 13];
    let (a, av) = random(&shape, 1, device);
    let (b, bv) = random(&shape, 2, device);
    let check = |out: placement::Result<Tensor>, reference: fn(f64, f64) -> f64| {
        let out = out.unwrap();
        assert_eq!(out.device(), *device);
        assert_eq!(out.shape(), &shape);
        let want: Vec<f64> = av.iter().zip(&bv).map(|(&x, &y)| reference(x, y)).collect();
        assert_close(&out.to_vec().unwrap(), &want, 1e-6);
    };
    check(a.add(&b), |x, y| x + y);
    check(a.sub(&b), |x, y| x - y);
    check(a.mul(&b), |x, y| x * y);
    check(a.div(&b), |x, y| x / y);
}

pub fn operators_match_methods(device: &Device) {
    let (a, _) = random(&[4, 5], 3, device);
    let (b, _) = random(&[4, 5], 4, device);
    let same = |x: placement::Result<Tensor>, y: placement::Result<Tensor>| {
        assert_eq!(x.unwrap().to_vec().unwrap(), y.unwrap().to_vec().unwrap());
    };
    same(&a + &b, a.add(&b));
    same(&a - &b, a.sub(&b));
    same(&a * &b, a.mul(&b));
    same(&a / &b, a.div(&b));
    same(a.clone() + b.clone(), a.add(&b));
    same(&a * b.clone(), a.mul(&b));
    same(a.clone() - &b, a.sub(&b));
}

pub fn matmul_matches_f64(device: &Device) {
    let (m, k, n) = (37, 53, 29);
    let (a, av) = random(&[m, k], 5, device);
    let (b, bv) = random(&[k, n], 6, device);
    let out = a.matmul(&b).unwrap();
    assert_eq!(out.shape(), &[m, n]);
    assert_eq!(out.device(), *device);
    let mut want = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| av[i * k + p] * bv[p * n + j]).sum();
        }
    }
    assert_close(&out.to_vec().unwrap(), &want, 1e-4);
}

pub fn relu_and_sum_match_f64(device: &Device) {
    let (x, xv) = random(&[100, 101], 7, device);
    let relu = x.relu().unwrap();
    let want: Vec<f64> = xv.iter().map(|&v| v.max(0.0)).collect();
    assert_close(&relu.to_vec().unwrap(), &want, 0.0);

    let sum = x.sum().unwrap();
    assert_eq!(sum.shape(), &[] as &[usize]);
    assert_eq!(sum.device(), *device);
    let want: f64 = xv.iter().sum();
    // f32 accumulation on a GPU may reorder; 1e-6 per element bounds it.
    assert_close(&sum.to_vec().unwrap(), &[want], 1e-6 * xv.len() as f64);
}

pub fn constructors_fill_and_check(device: &Device) {
    assert_eq!(
        Tensor::zeros(&[2, 3], device).unwrap().to_vec().unwrap(),
        vec![0.0; 6]
    );
    assert_eq!(
        Tensor::ones(&[3], device).unwrap().to_vec().unwrap(),
        vec![1.0; 3]
    );
    let data = [1.5, -2.0, 0.25, 8.0];
    let t = Tensor::from_slice(&data, &[2, 2], device).unwrap();
    assert_eq!(t.to_vec().unwrap(), data);
    assert_eq!(t.elem_count(), 4);
    assert_eq!(format!("{t:?}"), format!("Tensor[2, 2] on {device}"));

    // The same seed gives the same values on every device.
    let here = Tensor::randn(&[64], 42, device).unwrap().to_vec().unwrap();
    let cpu = Tensor::randn(&[64], 42, &Device::Cpu)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(here, cpu);
    let other = Tensor::randn(&[64], 43, device).unwrap().to_vec().unwrap();
    assert_ne!(here, other);
    let mean = here.iter().sum::<f32>() / 64.0;
    assert!(mean.abs() < 0.5, "randn mean {mean}");

    let err = Tensor::from_slice(&data, &[3, 2], device).unwrap_err();
    assert_eq!(
        err,
        Error::ElementCount {
            shape: vec![3, 2],
            expected: 6,
            got: 4
        }
    );
    assert_eq!(
        err.to_string(),
        "shape [3, 2] holds 6 elements, but 4 were given"
    );
    let err = Tensor::from_slice(&data, &[1], device).unwrap_err();
    assert_eq!(
        err.to_string(),
        "shape [1] holds 1 element, but 4 were given"
    );
}

pub fn shape_errors_name_the_op(device: &Device) {
    let a = Tensor::zeros(&[2, 3], device).unwrap();
    let b = Tensor::zeros(&[3, 2], device).unwrap();
    let err = a.add(&b).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`add` needs operands of the same shape, got lhs [2, 3] and rhs [3, 2]"
    );
    let err = a.matmul(&a).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`matmul` needs lhs of shape [m, k] and rhs of shape [k, n], got lhs [2, 3] and rhs [2, 3]"
    );
    let v = Tensor::zeros(&[3], device).unwrap();
    assert!(matches!(
        v.matmul(&b).unwrap_err(),
        Error::MatmulShape { .. }
    ));
    assert_eq!(a.matmul(&b).unwrap().shape(), &[2, 2]);
}

pub fn host_round_trips_keep_data(device: &Device) {
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 100.0).collect();
    let host = Tensor::from_slice(&data, &[10, 100], &Device::Cpu).unwrap();
    for mode in [TransferMode::Pageable, TransferMode::Pinned] {
        let there = host.to_device_with(device, mode).unwrap();
        assert_eq!(there.device(), *device);
        assert_eq!(there.shape(), &[10, 100]);
        let back = there.to_device_with(&Device::Cpu, mode).unwrap();
        assert_eq!(back.device(), Device::Cpu);
        assert_eq!(back.to_vec().unwrap(), data, "{mode:?}");
    }
    // Moving to the device a tensor is already on is free and keeps it there.
    let there = host.to_device(device).unwrap();
    assert_eq!(there.to_device(device).unwrap().device(), *device);
}

pub fn empty_tensors_work(device: &Device) {
    let empty = Tensor::zeros(&[0, 4], device).unwrap();
    assert_eq!(empty.to_vec().unwrap(), Vec::<f32>::new());
    assert_eq!(empty.add(&empty).unwrap().shape(), &[0, 4]);
    let sum = empty.sum().unwrap().to_vec().unwrap();
    assert_eq!(sum[0].to_bits(), 0.0f32.to_bits(), "an empty sum is +0.0");
    let b = Tensor::zeros(&[4, 3], device).unwrap();
    assert_eq!(empty.matmul(&b).unwrap().shape(), &[0, 3]);
    let k0 = Tensor::zeros(&[2, 0], device)
        .unwrap()
        .matmul(&Tensor::zeros(&[0, 3], device).unwrap());
    assert_eq!(k0.unwrap().to_vec().unwrap(), vec![0.0; 6]);
}

pub fn events_time_work(device: &Device) {
    let start = placement::timing::Event::record(device).unwrap();
    let (a, _) = random(&[64, 64], 8, device);
    let _ = a.matmul(&a).unwrap();
    let end = placement::timing::Event::record(device).unwrap();
    let ms = start.elapsed_ms(&end).unwrap();
    assert!(ms >= 0.0, "{ms}");
    assert_eq!(end.device(), *device);
    placement::synchronize(device).unwrap();

    // Events of two devices have their own error, not a tensor op's.
    let other = if device.is_cuda() {
        Device::Cpu
    } else {
        Device::Cuda(0)
    };
    if let Ok(elsewhere) = placement::timing::Event::record(&other) {
        let err = start.elapsed_ms(&elsewhere).unwrap_err();
        assert_eq!(
            err,
            Error::EventDevices {
                start: *device,
                end: other
            }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "the events mark different devices: the start is on {device}, the end on \
                 {other}; record both events on the device whose work you time"
            )
        );
    }
}

/// Bit patterns, so that `-0.0` and `+0.0` differ and NaN equals NaN.
fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|value| value.to_bits()).collect()
}

/// NaN, signed zeros and empty sums as PyTorch computes them: `relu` is `clamp_min(x, 0)`,
/// which keeps NaN and `-0.0`, and a sum starts from `+0.0`.
pub fn relu_and_sum_follow_pytorch(device: &Device) {
    let nan = f32::NAN;
    let x = Tensor::from_slice(
        &[nan, -0.0, 0.0, -1.5, 2.5, f32::NEG_INFINITY, f32::INFINITY],
        &[7],
        device,
    )
    .unwrap();
    assert_eq!(
        bits(&x.relu().unwrap().to_vec().unwrap()),
        bits(&[nan, -0.0, 0.0, 0.0, 2.5, 0.0, f32::INFINITY])
    );
    let sum = |values: &[f32]| {
        let t = Tensor::from_slice(values, &[values.len()], device).unwrap();
        t.sum().unwrap().to_vec().unwrap()[0]
    };
    assert_eq!(sum(&[]).to_bits(), 0.0f32.to_bits(), "empty");
    assert_eq!(sum(&[-0.0, -0.0]).to_bits(), 0.0f32.to_bits(), "-0.0s");
    assert!(sum(&[1.0, nan, 2.0]).is_nan());
    assert_eq!(sum(&[f32::INFINITY, 1.0]), f32::INFINITY);
}

/// Shapes too large to address are `ShapeOverflow` whatever the order of their dimensions, and
/// allocations the device cannot hold are `OutOfMemory`: never an abort or a panic.
pub fn huge_shapes_are_errors(device: &Device) {
    let overflow = |shape: &[usize]| Error::ShapeOverflow {
        shape: shape.to_vec(),
    };
    for shape in [
        &[usize::MAX / 2][..],
        &[1 << 62],
        &[usize::MAX, 2],
        &[2, usize::MAX],
    ] {
        assert_eq!(Tensor::zeros(shape, device).unwrap_err(), overflow(shape));
        assert_eq!(Tensor::ones(shape, device).unwrap_err(), overflow(shape));
        assert_eq!(
            Tensor::randn(shape, 0, device).unwrap_err(),
            overflow(shape)
        );
        assert_eq!(
            Tensor::from_slice(&[1.0], shape, device).unwrap_err(),
            overflow(shape)
        );
    }
    // A zero dimension holds nothing, in any order.
    for shape in [&[0, usize::MAX, 2][..], &[usize::MAX, 2, 0]] {
        let empty = Tensor::zeros(shape, device).unwrap();
        assert_eq!((empty.elem_count(), empty.shape()), (0, shape));
    }
    // The product's size is checked too.
    let wide = Tensor::zeros(&[usize::MAX, 0], device).unwrap();
    let tall = Tensor::zeros(&[0, 2], device).unwrap();
    assert_eq!(wide.matmul(&tall).unwrap_err(), overflow(&[usize::MAX, 2]));
    // 4 EiB fits the address arithmetic, and no allocator grants it.
    let huge = [1 << 60];
    type Constructor = fn(&[usize], &Device) -> placement::Result<Tensor>;
    let constructors: [(&str, Constructor); 3] = [
        ("zeros", Tensor::zeros),
        ("ones", Tensor::ones),
        ("randn", |shape, device| Tensor::randn(shape, 0, device)),
    ];
    for (name, constructor) in constructors {
        match constructor(&huge, device).unwrap_err() {
            Error::OutOfMemory {
                device: at,
                requested,
                ..
            } => assert_eq!((at, requested), (*device, 1 << 62), "{name}"),
            other => panic!("{name}: {other}"),
        }
    }
}

/// Operands on two different devices fail, naming the op and both devices, for every op.
pub fn mismatch_is_reported(lhs: &Device, rhs: &Device) {
    let a = Tensor::ones(&[2, 2], lhs).unwrap();
    let b = Tensor::ones(&[2, 2], rhs).unwrap();
    let results = [
        ("add", a.add(&b)),
        ("sub", a.sub(&b)),
        ("mul", &a * &b),
        ("div", a.div(&b)),
        ("matmul", a.matmul(&b)),
    ];
    for (op, result) in results {
        let err = result.unwrap_err();
        assert_eq!(
            err,
            Error::DeviceMismatch {
                op,
                lhs: *lhs,
                rhs: *rhs
            }
        );
        let msg = err.to_string();
        assert!(msg.contains(&format!("`{op}`")), "{msg}");
        assert!(
            msg.contains(&format!("lhs is on {lhs}, rhs is on {rhs}")),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("rhs.to_device(&{})", lhs.to_rust())),
            "{msg}"
        );
    }
    // Moving one operand fixes it.
    let fixed = a.add(&b.to_device(lhs).unwrap()).unwrap();
    assert_eq!(fixed.to_vec().unwrap(), vec![2.0; 4]);
}
