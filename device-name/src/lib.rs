//! Device strings, read with the one grammar of this repository: the runtime's
//! `"cuda:0".parse::<placement::Device>()`, `#[device_check(expect = "cuda:0")]` and the linter's
//! reading of string literals all call [`parse`] (or [`named`], which only answers whether a
//! string names a device), so a string means the same to each of them and
//! a refused one reads the same at compile time, at run time and in a finding.
//!
//! The grammar, close to PyTorch's `torch.device` strings (`tests/data/device-strings.toml`
//! lists what is accepted and what is refused, and why):
//!
//! ```text
//! device  = "cpu" | "cpu:0" | "cuda:" ordinal
//! ordinal = "0" | a digit 1-9 followed by digits 0-9, at most 2147483647
//! ```
//!
//! Lowercase ASCII only; no whitespace, sign or leading zero. A bare `cuda` is refused on
//! purpose: it means "whatever GPU is current".

use std::fmt;

/// A device named by a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceName {
    Cpu,
    Cuda(usize),
}

/// `cpu` or `cuda:N`, the canonical form.
impl fmt::Display for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceName::Cpu => f.write_str("cpu"),
            DeviceName::Cuda(ordinal) => write!(f, "cuda:{ordinal}"),
        }
    }
}

/// The largest GPU ordinal a device string can name: the CUDA driver numbers devices with a C
/// `int`, and PyTorch's parser stops at the same bound.
pub const MAX_ORDINAL: usize = i32::MAX as usize;

/// The device `text` names; otherwise why it names none, and what to write instead.
pub fn parse(text: &str) -> Result<DeviceName, String> {
    match text {
        "cpu" | "cpu:0" => return Ok(DeviceName::Cpu),
        "cuda" => {
            return Err(
                "`cuda` does not name a device: it means whatever GPU is current; \
                        write the ordinal, for example `cuda:0`"
                    .to_owned(),
            );
        }
        "" => {
            return Err(
                "an empty string is not a device; write `cpu` or `cuda:N`, for example `cuda:0`"
                    .to_owned(),
            );
        }
        _ => {}
    }
    let trimmed = text.trim();
    if trimmed != text && parse(trimmed).is_ok() {
        return Err(format!(
            "{text:?} has whitespace around it; write `{trimmed}`"
        ));
    }
    if let Some(ordinal) = text.strip_prefix("cuda:") {
        return parse_ordinal(text, ordinal).map(DeviceName::Cuda);
    }
    let lowercase = text.to_ascii_lowercase();
    if lowercase != text && parse(&lowercase).is_ok() {
        return Err(format!(
            "`{text}`: device names are lowercase; write `{lowercase}`"
        ));
    }
    if text.starts_with("cpu:") {
        return Err(format!(
            "`{text}`: there is one CPU device, `cpu` (also written `cpu:0`)"
        ));
    }
    Err(format!(
        "`{text}` is not a device; write `cpu` or `cuda:N`, for example `cuda:0`"
    ))
}

/// The device `text` names, if it names one: [`parse`] without the reason a refused string is
/// refused, which takes a formatted message to say, for callers that only ask (the linter reads
/// every string literal of a file).
pub fn named(text: &str) -> Option<DeviceName> {
    match text {
        "cpu" | "cpu:0" => Some(DeviceName::Cpu),
        _ => parse_ordinal(text, text.strip_prefix("cuda:")?)
            .ok()
            .map(DeviceName::Cuda),
    }
}

fn parse_ordinal(text: &str, digits: &str) -> Result<usize, String> {
    if digits.is_empty() {
        return Err(format!(
            "`{text}` has no GPU ordinal after `cuda:`; write one, for example `cuda:0`"
        ));
    }
    if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!(
            "`{text}`: write the GPU ordinal in plain decimal digits, for example `cuda:0`"
        ));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        let significant = digits.trim_start_matches('0');
        let ordinal = if significant.is_empty() {
            "0"
        } else {
            significant
        };
        return Err(format!(
            "`{text}` has a leading zero; write `cuda:{ordinal}`"
        ));
    }
    match digits.parse::<usize>() {
        Ok(ordinal) if ordinal <= MAX_ORDINAL => Ok(ordinal),
        _ => Err(format!(
            "`{text}` is past {MAX_ORDINAL}, the largest GPU ordinal the CUDA driver can number"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of accepted and refused strings.
    fn table() -> toml::Table {
        include_str!("../../tests/data/device-strings.toml")
            .parse()
            .expect("the table is TOML")
    }

    fn entries<'a>(table: &'a toml::Table, kind: &str, second: &str) -> Vec<(&'a str, &'a str)> {
        table[kind]
            .as_array()
            .expect("an array of tables")
            .iter()
            .map(|entry| {
                let field = |name: &str| entry[name].as_str().expect("a string field");
                (field("text"), field(second))
            })
            .collect()
    }

    #[test]
    fn accepted_strings_name_their_device() {
        let table = table();
        let accepted = entries(&table, "accept", "device");
        assert!(accepted.len() >= 5, "the table lists the accepted forms");
        for (text, device) in accepted {
            let parsed = parse(text).unwrap_or_else(|err| panic!("{text:?} is refused: {err}"));
            assert_eq!(parsed.to_string(), device, "{text:?}");
        }
    }

    #[test]
    fn named_is_parse_without_the_reason() {
        let table = table();
        let texts = (entries(&table, "accept", "device").into_iter())
            .chain(entries(&table, "reject", "reason"))
            .map(|(text, _)| text);
        for text in texts.chain(["cuda", "cuda:", "cuda:00", "cuda: 1", "CPU", "cpu:1", "mps"]) {
            assert_eq!(named(text), parse(text).ok(), "{text:?}");
        }
    }

    #[test]
    fn rejected_strings_say_why() {
        let table = table();
        let rejected = entries(&table, "reject", "reason");
        assert!(rejected.len() >= 10, "the table lists the rejected forms");
        for (text, reason) in rejected {
            match parse(text) {
                Ok(device) => panic!("{text:?} is accepted as {device:?}"),
                Err(err) => assert!(
                    err.contains(reason),
                    "{text:?}: {err:?} does not say {reason:?}"
                ),
            }
        }
    }
}
