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
/// (its terminal closed); returns the status to exit with (128 + the signal's number). A signal
/// the process was started ignoring (SIGHUP under `nohup`) stays ignored; one that cannot be
/// listened to is never received.
pub async fn terminated() -> i32 {
    tokio::select! {
        code = received(Signal::TERM) => code,
        code = received(Signal::HUP) => code,
    }
}

/// Returns the exit status for `wanted` once it is received; never when it is ignored or
/// cannot be listened to.
async fn received(wanted: Signal) -> i32 {
    if ignored(wanted) {
        return std::future::pending().await;
    }
    match signal(SignalKind::from_raw(wanted.as_raw())) {
        Ok(mut stream) => {
            stream.recv().await;
            status(wanted)
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

/// True when this process ignores `signal`, as `/proc/self/status` says (`SigIgn`, a mask in
/// hexadecimal whose bit N-1 stands for signal N).
fn ignored(signal: Signal) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal.as_raw() - 1)) != 0)
}

/// The exit status of a process ended by `signal`, as a shell reports it.
fn status(signal: Signal) -> i32 {
    128 + signal.as_raw()
}
