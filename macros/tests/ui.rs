//! Every misuse of the macros is a compile error on the exact tokens, several at once where
//! there are several; the expected messages are pinned in `ui/*.stderr`. Functions that compiled
//! without `#[device_check]` compile with it, warnings denied (`pass/*.rs`).

#[test]
fn misuse_is_a_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

#[test]
fn checked_functions_compile_as_they_did() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/pass/*.rs");
}
