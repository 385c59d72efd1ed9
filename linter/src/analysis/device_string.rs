//! Devices named by string literals (`"cuda:1".parse()`), read with the grammar every parser of
//! this repository follows (`tests/data/device-strings.toml`, close to PyTorch's `torch.device`
//! strings): `cpu`, `cpu:0` or `cuda:N`, lowercase, no whitespace, sign or leading zero, `N` at
//! most 2147483647. A bare `cuda` names no device.

/// What a device string names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    Cpu,
    Cuda(u32),
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Named::Cpu => f.write_str("cpu"),
            Named::Cuda(ordinal) => write!(f, "cuda:{ordinal}"),
        }
    }
}

/// The device `text` names, if it is a device string.
pub fn parse(text: &str) -> Option<Named> {
    if text == "cpu" || text == "cpu:0" {
        return Some(Named::Cpu);
    }
    let digits = text.strip_prefix("cuda:")?;
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    let ordinal: u32 = digits.parse().ok().filter(|_| plain)?;
    (ordinal <= i32::MAX as u32).then_some(Named::Cuda(ordinal))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table the runtime's and the macros' parsers are tested against too.
    #[test]
    fn the_repository_grammar() {
        let text = include_str!("../../../tests/data/device-strings.toml");
        let table: toml::Table = text.parse().expect("TOML");
        let entries = |kind: &str| table[kind].as_array().expect("entries").clone();
        let accepted = entries("accept");
        assert!(accepted.len() >= 5);
        for entry in accepted {
            let (text, device) = (
                entry["text"].as_str().unwrap(),
                entry["device"].as_str().unwrap(),
            );
            assert_eq!(
                parse(text).map(|d| d.to_string()).as_deref(),
                Some(device),
                "{text:?}"
            );
        }
        let rejected = entries("reject");
        assert!(rejected.len() >= 10);
        for entry in rejected {
            let text = entry["text"].as_str().unwrap();
            assert_eq!(parse(text), None, "{text:?} must be rejected");
        }
    }
}
