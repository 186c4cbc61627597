//! Qilin's code mode: the `run_code` tool runs Python on the Monty sandbox, and every
//! `sdk.tool.call` in it goes through the execution layer like a direct call, recorded as a
//! child of the `run_code` call.
//!
//! Every nested call's result is journaled in the session's log, so a run left unfinished
//! by a restart can be replayed from its start ([`CallJournal`], [`Journals`]).
//!
//! Code runs in worker processes ([`WorkerPool`], the `qilin` binary serving
//! `worker::serve_stdio`) or, for embedding and benchmarks, in this process. Each run is
//! capped by [`CodeLimits`]. [`python_stubs`] describes the tools as Python for the model and
//! for the type checker (`type_check`).
//!
//! Features: `type-check` compiles the type checker (`type_check`,
//! [`CodeMode::with_type_check`]); `worker` the worker side (`worker::serve_stdio`), for a
//! binary that serves the pool's workers. Both are off by default: a host of code mode needs
//! neither.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod calls;
mod convert;
mod error;
mod in_process;
mod journal;
mod output;
mod pool;
mod run;
mod run_code;
mod sandbox;
mod sdk;
mod stubs;
#[cfg(feature = "type-check")]
mod typecheck;
#[cfg(feature = "worker")]
pub mod worker;

pub use convert::{json_to_monty, monty_to_json};
pub use error::CodeError;
pub use journal::{CallJournal, JournaledCall, JournaledResult, Journals};
pub use pool::{PoolOptions, WorkerPool};
pub use qilin_tool::{CodeLimits, MAX_SAFE_RECURSION_DEPTH};
pub use run::{
    CodeFailure, CodeMode, RunCodeOutput, RunObserver, RunOptions, SCRIPT_NAME, Sandbox,
    TypeCheckUnavailable,
};
pub use run_code::{RunCode, RunCodeArgs};
pub use sdk::{TOOL_ERROR_TYPE, parse_tool_error};
pub use stubs::{StubExtras, python_stubs, python_stubs_with};
#[cfg(feature = "type-check")]
pub use typecheck::type_check;
