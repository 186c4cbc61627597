//! The bash sandbox's helper on its own, for the tests of the checks (they find it as
//! `CARGO_BIN_EXE_qilin-checks-sandbox-exec`); the `qilin` binary serves the same helper as
//! `qilin sandbox-exec`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

fn main() -> std::process::ExitCode {
    qilin_sandbox::helper_main(&[])
}
