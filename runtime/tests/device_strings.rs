//! `Device` as a string: the runtime reads device strings with the grammar the macros and the
//! linter share (`placement-device-name`, whose tests hold the table of accepted and refused
//! strings), and displays each device in the canonical form that grammar reads back.

use placement::Device;

#[test]
fn devices_display_as_they_parse() {
    for device in [
        Device::Cpu,
        Device::Cuda(0),
        Device::Cuda(7),
        Device::Cuda(2147483647),
    ] {
        assert_eq!(device.to_string().parse::<Device>(), Ok(device), "{device}");
    }
    assert_eq!("cpu:0".parse::<Device>(), Ok(Device::Cpu));
}

#[test]
fn refused_strings_say_why_and_what_to_write() {
    for (text, says) in [
        ("cuda", "whatever GPU is current"),
        ("cuda:01", "write `cuda:1`"),
        ("CUDA:0", "write `cuda:0`"),
        ("cuda:2147483648", "largest GPU ordinal"),
    ] {
        let err = text.parse::<Device>().expect_err(text);
        assert!(err.to_string().contains(says), "{text:?}: {err}");
    }
}
