//! The runtime's device-string parser against the table every parser of this repository follows
//! (`tests/data/device-strings.toml`, also read by the macros' and the linter's tests).

use placement::Device;

fn table() -> toml::Table {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/device-strings.toml"
    );
    let text = std::fs::read_to_string(path).expect("the device-string table");
    text.parse().expect("the table is TOML")
}

fn entries<'a>(table: &'a toml::Table, kind: &str) -> Vec<(&'a str, &'a str)> {
    let second = if kind == "accept" { "device" } else { "reason" };
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
    let accepted = entries(&table, "accept");
    assert!(accepted.len() >= 5, "the table lists the accepted forms");
    for (text, canonical) in accepted {
        let device: Device = text
            .parse()
            .unwrap_or_else(|err| panic!("{text:?} is refused: {err}"));
        assert_eq!(device.to_string(), canonical, "{text:?}");
        assert_eq!(canonical.parse::<Device>(), Ok(device), "{canonical:?}");
    }
}

#[test]
fn rejected_strings_say_why() {
    let table = table();
    let rejected = entries(&table, "reject");
    assert!(rejected.len() >= 10, "the table lists the rejected forms");
    for (text, reason) in rejected {
        match text.parse::<Device>() {
            Ok(device) => panic!("{text:?} is accepted as {device}"),
            Err(err) => assert!(
                err.to_string().contains(reason),
                "{text:?}: {err:?} does not say {reason:?}"
            ),
        }
    }
}
