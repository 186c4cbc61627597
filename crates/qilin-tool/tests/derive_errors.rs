//! `#[derive(Tool)]` compiled for real: a correct declaration yields its constants, and each
//! mistake an author can make fails to compile with an error naming what is wrong and what is
//! expected (the `.stderr` files beside the cases; `TRYBUILD=overwrite` rewrites them).

#[test]
fn the_derive_accepts_every_attribute_and_names_each_mistake() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/derive/pass/*.rs");
    cases.compile_fail("tests/derive/fail/*.rs");
}
