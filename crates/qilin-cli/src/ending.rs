//! Ending the process on every path: what the sessions' sandboxes leave on disk (their private
//! temp folders in the shared temp folder) goes first, whether the command returns, exits
//! early or is stopped by a signal.

use rustix::process::Signal;
use tokio::signal::unix::{SignalKind, signal};

/// Removes the private temp folders of the sandboxes still live, then exits with `code`.
pub fn exit(code: i32) -> ! {
    qilin_sandbox::remove_temp_folders();
    std::process::exit(code)
}

/// Waits until the process is asked to stop by SIGTERM (a service manager, `kill`) or SIGHUP
/// (its terminal closed); returns the status to exit with (128 + the signal's number). Waits
/// forever when the signals cannot be listened to.
pub async fn terminated() -> i32 {
    tokio::select! {
        code = received(SignalKind::terminate(), status(Signal::TERM)) => code,
        code = received(SignalKind::hangup(), status(Signal::HUP)) => code,
    }
}

/// Returns `code` once `kind` is received; never when it cannot be listened to.
async fn received(kind: SignalKind, code: i32) -> i32 {
    match signal(kind) {
        Ok(mut stream) => {
            stream.recv().await;
            code
        }
        Err(_) => std::future::pending().await,
    }
}

/// Waits until the process is asked to stop by SIGINT (Ctrl-C), SIGTERM or SIGHUP; returns
/// the status to exit with.
pub async fn stop_requested() -> i32 {
    tokio::select! {
        Ok(()) = tokio::signal::ctrl_c() => status(Signal::INT),
        code = terminated() => code,
    }
}

/// The exit status of a process ended by `signal`, as a shell reports it.
fn status(signal: Signal) -> i32 {
    128 + signal.as_raw()
}
