//! The bash sandbox's helper on its own, for the tests and benchmarks of the built-in tools
//! (they find it as `CARGO_BIN_EXE_qilin-sandbox-exec`); the `qilin` binary serves the same
//! helper as `qilin sandbox-exec`.

fn main() -> std::process::ExitCode {
    qilin_sandbox::helper_main(&[])
}
