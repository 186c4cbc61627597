//! The worker side of the pool: a process that runs the interpreter for one host over framed
//! messages on stdin and stdout. The `qilin` binary serves it as `qilin subprocess`.
//!
//! For the memory cap to hold in a worker, the binary must install
//! `monty_alloc::LimitedAllocator` as its global allocator.

use monty_proto::worker::{Child, EventSink, HandleOutcome, protocol_violation};
use monty_proto::{FrameError, FrameReader, pb, write_frame};
use std::process::ExitCode;

/// Exit status when the host sent something that is not the protocol.
const EXIT_PROTOCOL: u8 = 76;
/// Exit status when the host's pipe broke.
const EXIT_IO: u8 = 3;
/// Exit status when the worker hit a fatal state.
const EXIT_FATAL: u8 = 4;

struct StdoutSink;

impl EventSink for StdoutSink {
    fn send(&mut self, event: &pb::ChildEvent) -> Result<(), FrameError> {
        write_frame(&mut std::io::stdout(), event)
    }
}

/// Serves interpreter requests from stdin until the host closes it or asks to shut down.
///
/// `arm_memory_limit` is called after every request with the session's memory cap (bytes)
/// and whether type checking is on; a binary with `monty_alloc::LimitedAllocator` passes
/// `monty_alloc::set_limit` so the cap is enforced by the allocator.
pub fn serve_stdio(mut arm_memory_limit: impl FnMut(Option<usize>, bool)) -> ExitCode {
    let mut reader = FrameReader::new(std::io::stdin().lock());
    let mut child = Child::default();
    let mut sink = StdoutSink;
    loop {
        match reader.read::<pb::ParentRequest>() {
            Ok(Some(request)) => {
                let outcome = child.handle(request, &mut sink);
                let budget = child.session_budget();
                arm_memory_limit(budget.max_memory, budget.type_check);
                match outcome {
                    Ok(HandleOutcome::Continue) => {}
                    Ok(HandleOutcome::Shutdown) => return ExitCode::SUCCESS,
                    Ok(HandleOutcome::Fatal) => return ExitCode::from(EXIT_FATAL),
                    Err(FrameError::FrameTooLarge { len, max }) => {
                        let reason = format!("response frame of {len} bytes exceeds {max}");
                        // The host may be gone already; the exit status tells it the rest.
                        let _ = sink.send(&child.fatal_event(&reason));
                        return ExitCode::from(EXIT_PROTOCOL);
                    }
                    Err(_) => return ExitCode::from(EXIT_IO),
                }
            }
            Ok(None) => return ExitCode::SUCCESS,
            Err(FrameError::Decode(err)) => {
                let violation = protocol_violation(&format!("malformed request: {err}"));
                if sink.send(&violation).is_err() {
                    return ExitCode::from(EXIT_IO);
                }
            }
            Err(err) => {
                let reason = format!("malformed request frame: {err}");
                // As above: the exit status is the report when the pipe is gone.
                let _ = sink.send(&child.fatal_event(&reason));
                return ExitCode::from(EXIT_PROTOCOL);
            }
        }
    }
}
