//! What the host loop needs from an interpreter, whether it runs in this process or in a
//! worker: start the code, answer each suspension, finish.

use crate::output::PrintedOutput;
use monty_types::{MontyException, MontyObject, MontyUuid};
use std::future::Future;
use std::time::Duration;

/// Where the code paused, or how it ended.
#[derive(Debug)]
pub(crate) enum Suspension {
    /// The code called a function the sandbox does not define, or a method of a host object.
    Call {
        call_id: u32,
        function_name: String,
        args: Vec<MontyObject>,
        kwargs: Vec<(MontyObject, MontyObject)>,
        object_id: Option<MontyUuid>,
    },
    /// The code asked for file, environment or clock access.
    OsCall { function_name: String },
    /// The code read an undefined name or an attribute of a host object.
    NameLookup,
    /// Every task waits on host futures; these are still pending.
    ResolveFutures { pending: Vec<u32> },
    /// The code finished with the value of its last expression.
    Complete(MontyObject),
}

/// The host's answer to a [`Suspension`].
#[derive(Debug)]
pub(crate) enum Answer {
    /// The call returned this value.
    Return(MontyObject),
    /// The call raised this exception.
    Raise(MontyException),
    /// The call is a future, resolved later.
    Pending,
    /// No such function: `NameError`.
    NotFound,
    /// A name lookup's value, or `None` for undefined.
    Lookup(Option<MontyObject>),
    /// Results of some pending futures.
    Resolve(Vec<(u32, Result<MontyObject, MontyException>)>),
}

/// Why the interpreter stopped without a value.
#[derive(Debug)]
pub(crate) enum SandboxError {
    /// An uncaught Python exception, including the interpreter's own limit errors.
    Python(MontyException),
    /// The worker process died.
    Crashed(String),
    /// The worker ran past its memory cap and was stopped.
    OutOfMemory,
    /// The worker did not answer within the pool's request timeout and was killed.
    Unresponsive(Duration),
    /// The sandbox could not be reached or misbehaved.
    Broken(String),
}

/// One run of code in an interpreter. Dropping a session mid-run abandons the run (a
/// worker is killed rather than reused).
pub(crate) trait SandboxSession: Send {
    /// Starts `code` with the named global values.
    fn start(
        &mut self,
        code: &str,
        inputs: Vec<(String, MontyObject)>,
        out: &mut PrintedOutput,
    ) -> impl Future<Output = Result<Suspension, SandboxError>> + Send;

    /// Answers the last suspension.
    fn answer(
        &mut self,
        answer: Answer,
        out: &mut PrintedOutput,
    ) -> impl Future<Output = Result<Suspension, SandboxError>> + Send;

    /// Releases the interpreter after a run that ended normally or with a Python error.
    fn finish(self) -> impl Future<Output = ()> + Send;
}
