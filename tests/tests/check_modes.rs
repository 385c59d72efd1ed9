//! `PLACEMENT_DEVICE_CHECK=off|warn|error` and the `device-check` feature. The mode is global to
//! the process, so this binary holds one test; `warn` is checked in a child process whose
//! stderr is read.

use placement::{Device, Tensor, device_check};

#[device_check]
fn add(a: &Tensor, b: &Tensor) -> placement::Result<usize> {
    Ok(a.elem_count() + b.elem_count())
}

fn pair() -> (Tensor, Tensor) {
    placement::simulated::configure("1GiB").expect("simulated GPU");
    (
        Tensor::ones(&[2], &Device::Cpu).unwrap(),
        Tensor::ones(&[2], &Device::Cuda(0)).unwrap(),
    )
}

/// Run in the child: three mismatched calls from one site, one from another.
fn child() {
    let (a, b) = pair();
    for _ in 0..3 {
        assert_eq!(add(&a, &b).unwrap(), 4, "warn mode lets the call go on");
    }
    assert_eq!(add(&b, &a).unwrap(), 4);
}

#[test]
fn modes() {
    if std::env::var_os("PLACEMENT_MODES_CHILD").is_some() {
        return child();
    }
    let (a, b) = pair();
    #[cfg(not(feature = "device-check"))]
    {
        const { assert!(!placement::__private::ENABLED) };
        assert_eq!(
            add(&a, &b).unwrap(),
            4,
            "without the feature there is no check"
        );
    }
    #[cfg(feature = "device-check")]
    modes_with_checks(&a, &b);
}

#[cfg(feature = "device-check")]
fn modes_with_checks(a: &Tensor, b: &Tensor) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["modes", "--exact", "--nocapture", "--test-threads=1"])
        .env("PLACEMENT_MODES_CHILD", "1")
        .env("PLACEMENT_DEVICE_CHECK", "warn")
        .output()
        .expect("child test runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("placement: warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "once per call site:\n{stderr}");
    assert!(
        warnings[0].contains("device mismatch in add(a, b): a is on cpu, b is on cuda:0"),
        "{stderr}"
    );
    assert!(
        warnings[0].contains("reported once per call site"),
        "{stderr}"
    );

    placement::set_check_mode(placement::CheckMode::Off);
    assert_eq!(add(a, b).unwrap(), 4);
    placement::set_check_mode(placement::CheckMode::Error);
    assert!(add(a, b).is_err());
}
