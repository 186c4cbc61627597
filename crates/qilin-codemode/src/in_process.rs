//! The interpreter in this process: fastest, for embedding and benchmarks. A crash of the
//! interpreter (a native stack overflow) takes the process down; untrusted code belongs in
//! worker processes ([`crate::WorkerPool`]).

use crate::output::PrintedOutput;
use crate::sandbox::{Answer, SandboxError, SandboxSession, Suspension};
use monty::{MontyRun, RunProgress};
use monty_types::{
    CompileOptions, ExcType, ExtFunctionResult, MontyException, MontyObject, NameLookupResult,
    PrintWriter, PrintWriterCallback, ResourceLimits, ResourceTracker,
};
use std::borrow::Cow;

/// A run in this process.
pub(crate) struct InProcessSession {
    script_name: String,
    limits: ResourceLimits,
    state: Option<RunProgress>,
}

impl InProcessSession {
    /// A session that will run its code under `limits`, naming it `script_name` in tracebacks.
    pub(crate) fn new(script_name: &str, limits: ResourceLimits) -> Self {
        InProcessSession {
            script_name: script_name.to_string(),
            limits,
            state: None,
        }
    }

    fn suspend(
        &mut self,
        progress: Result<RunProgress, MontyException>,
    ) -> Result<Suspension, SandboxError> {
        let mut progress = progress.map_err(SandboxError::Python)?;
        let suspension = match &mut progress {
            RunProgress::Complete(value) => {
                return Ok(Suspension::Complete(std::mem::replace(
                    value,
                    MontyObject::None,
                )));
            }
            RunProgress::FunctionCall(call) => Suspension::Call {
                call_id: call.call_id,
                function_name: call.function_name.clone(),
                args: std::mem::take(&mut call.args),
                kwargs: std::mem::take(&mut call.kwargs),
                object_id: call.object_id,
            },
            RunProgress::OsCall(call) => Suspension::OsCall {
                function_name: call.function_call.name().to_string(),
            },
            RunProgress::NameLookup(_) => Suspension::NameLookup,
            RunProgress::ResolveFutures(futures) => Suspension::ResolveFutures {
                pending: futures.pending_call_ids().to_vec(),
            },
        };
        self.state = Some(progress);
        Ok(suspension)
    }
}

impl SandboxSession for InProcessSession {
    async fn start(
        &mut self,
        code: &str,
        inputs: Vec<(String, MontyObject)>,
        out: &mut PrintedOutput,
    ) -> Result<Suspension, SandboxError> {
        let (names, values): (Vec<String>, Vec<MontyObject>) = inputs.into_iter().unzip();
        let runner = MontyRun::new(
            code.to_string(),
            &self.script_name,
            names,
            CompileOptions::default(),
        )
        .map_err(SandboxError::Python)?;
        let tracker = ResourceTracker::new(self.limits.clone());
        let progress = runner.start(values, tracker, PrintWriter::Callback(&mut Printer(out)));
        self.suspend(progress)
    }

    async fn answer(
        &mut self,
        answer: Answer,
        out: &mut PrintedOutput,
    ) -> Result<Suspension, SandboxError> {
        let Some(state) = self.state.take() else {
            return Err(SandboxError::Broken(
                "an answer was given with no suspended run".into(),
            ));
        };
        let print = PrintWriter::Callback(&mut Printer(out));
        let progress = match (state, answer) {
            (RunProgress::FunctionCall(call), Answer::Return(value)) => call.resume(value, print),
            (RunProgress::FunctionCall(call), Answer::Raise(exc)) => call.resume(exc, print),
            (RunProgress::FunctionCall(call), Answer::Pending) => call.resume_pending(print),
            (RunProgress::FunctionCall(call), Answer::NotFound) => {
                let name = call.function_name.clone();
                call.resume(ExtFunctionResult::NotFound(name), print)
            }
            (RunProgress::OsCall(call), Answer::Raise(exc)) => call.resume(exc, print),
            (RunProgress::NameLookup(lookup), Answer::Lookup(value)) => {
                let result = value.map_or(NameLookupResult::Undefined, NameLookupResult::Value);
                lookup.resume(result, print)
            }
            (RunProgress::ResolveFutures(futures), Answer::Resolve(results)) => {
                let results = results
                    .into_iter()
                    .map(|(id, result)| {
                        let result = match result {
                            Ok(value) => ExtFunctionResult::Return(value),
                            Err(exc) => ExtFunctionResult::Error(exc),
                        };
                        (id, result)
                    })
                    .collect();
                futures.resume(results, print)
            }
            (_, answer) => {
                return Err(SandboxError::Broken(format!(
                    "the answer {answer:?} does not fit the suspension"
                )));
            }
        };
        self.suspend(progress)
    }

    async fn finish(self) {}
}

/// Print output into a [`PrintedOutput`]; past its cap, `print` raises `MemoryError`.
struct Printer<'a>(&'a mut PrintedOutput);

impl Printer<'_> {
    fn write(&mut self, text: &str) -> Result<(), MontyException> {
        if self.0.push(text) {
            Ok(())
        } else {
            Err(MontyException::new(
                ExcType::MemoryError,
                Some("printed output limit exceeded".into()),
            ))
        }
    }
}

impl PrintWriterCallback for Printer<'_> {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        self.write(&output)
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        let mut buf = [0u8; 4];
        self.write(end.encode_utf8(&mut buf))
    }
}
