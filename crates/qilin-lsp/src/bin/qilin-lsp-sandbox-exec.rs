//! The sandbox helper on its own, for the tests of the language servers (they find it as
//! `CARGO_BIN_EXE_qilin-lsp-sandbox-exec`); the `qilin` binary serves the same helper as
//! `qilin sandbox-exec`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

fn main() -> std::process::ExitCode {
    qilin_sandbox::helper_main(&[])
}
