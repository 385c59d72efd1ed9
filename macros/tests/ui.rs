//! Every misuse of the macros is a compile error on the exact tokens, several at once where
//! there are several; the expected messages are pinned in `ui/*.stderr`.

#[test]
fn misuse_is_a_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
