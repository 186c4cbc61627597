//! Worker processes for the interpreter (`monty-pool`): a crash kills one worker, never the
//! runtime. The worker is a binary that serves `worker::serve_stdio` (the `worker` feature) when started
//! with the argument `subprocess` — the `qilin` binary itself.

use crate::error::CodeError;
use crate::output::PrintedOutput;
use crate::sandbox::{Answer, SandboxError, SandboxSession, Suspension};
use monty_pool::{
    Checkout, Pool, PoolConfig, PoolError, ReplConfig, ResumeValue, TurnEvent, on_print_sync,
};
use monty_types::{MontyObject, OOM_EXIT_CODE};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

/// How the worker pool is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolOptions {
    /// The worker binary, started as `<binary> subprocess`.
    pub binary: PathBuf,
    /// Workers kept ready.
    pub min_workers: usize,
    /// Most workers at once (concurrent runs beyond it wait).
    pub max_workers: usize,
    /// How long one step of the interpreter may go without answering before its worker is
    /// killed; a backstop for code the interpreter's own time limit cannot stop.
    pub request_timeout: Duration,
}

impl PoolOptions {
    /// Options for `binary` with one ready worker, up to four, and a 120 s backstop.
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        PoolOptions {
            binary: binary.into(),
            min_workers: 1,
            max_workers: 4,
            request_timeout: Duration::from_secs(120),
        }
    }
}

/// A pool of interpreter worker processes, started on first use. Cheap to clone.
#[derive(Clone)]
pub struct WorkerPool {
    options: Arc<PoolOptions>,
    pool: Arc<OnceCell<Pool>>,
}

impl WorkerPool {
    /// A pool that starts its workers on the first run.
    pub fn new(options: PoolOptions) -> Self {
        WorkerPool {
            options: Arc::new(options),
            pool: Arc::new(OnceCell::new()),
        }
    }

    /// The pool's options.
    pub fn options(&self) -> &PoolOptions {
        &self.options
    }

    /// Starts the workers now (the first run does it otherwise).
    pub async fn start(&self) -> Result<(), CodeError> {
        self.get().await.map(|_| ())
    }

    async fn get(&self) -> Result<&Pool, CodeError> {
        self.pool
            .get_or_try_init(|| async {
                let mut config = PoolConfig::subprocess(&self.options.binary);
                config.min_processes = self.options.min_workers.min(self.options.max_workers);
                config.max_processes = self.options.max_workers.max(1);
                config.request_timeout = Some(self.options.request_timeout);
                Pool::new(config).await.map_err(|err| {
                    CodeError::Sandbox(format!(
                        "could not start worker processes from {}: {err}",
                        self.options.binary.display()
                    ))
                })
            })
            .await
    }

    /// A session on a fresh checkout: its own time, memory and suspension budget.
    pub(crate) async fn session(&self, repl: ReplConfig) -> Result<PooledSession, CodeError> {
        let pool = self.get().await?;
        let checkout = pool
            .checkout(&repl)
            .await
            .map_err(|err| CodeError::Sandbox(format!("no worker process is available: {err}")))?;
        Ok(PooledSession { checkout })
    }
}

/// One run on one checked-out worker.
pub(crate) struct PooledSession {
    checkout: Checkout,
}

fn suspension(event: Result<TurnEvent, PoolError>) -> Result<Suspension, SandboxError> {
    match event {
        Ok(TurnEvent::Complete(value)) => Ok(Suspension::Complete(value)),
        Ok(TurnEvent::FunctionCall {
            function_name,
            args,
            kwargs,
            call_id,
            object_id,
        }) => Ok(Suspension::Call {
            call_id,
            function_name,
            args,
            kwargs,
            object_id,
        }),
        Ok(TurnEvent::OsCall { function_name, .. }) => Ok(Suspension::OsCall { function_name }),
        Ok(TurnEvent::NameLookup { .. }) => Ok(Suspension::NameLookup),
        Ok(TurnEvent::ResolveFutures { pending_call_ids }) => Ok(Suspension::ResolveFutures {
            pending: pending_call_ids,
        }),
        Err(PoolError::Runtime(exc)) => Err(SandboxError::Python(exc)),
        Err(PoolError::Timeout { timeout }) => Err(SandboxError::Unresponsive(timeout)),
        Err(PoolError::Crashed { status, .. })
            if status.and_then(|s| s.code()) == Some(OOM_EXIT_CODE) =>
        {
            Err(SandboxError::OutOfMemory)
        }
        Err(err @ PoolError::Crashed { .. }) => Err(SandboxError::Crashed(err.to_string())),
        Err(err) => Err(SandboxError::Broken(err.to_string())),
    }
}

impl SandboxSession for PooledSession {
    async fn start(
        &mut self,
        code: &str,
        inputs: Vec<(String, MontyObject)>,
        out: &mut PrintedOutput,
    ) -> Result<Suspension, SandboxError> {
        let mut on_print = on_print_sync(|_stream, text| {
            out.push(text);
        });
        let event = self
            .checkout
            .feed(code, inputs, Vec::new(), true, &mut on_print)
            .await;
        suspension(event)
    }

    async fn answer(
        &mut self,
        answer: Answer,
        out: &mut PrintedOutput,
    ) -> Result<Suspension, SandboxError> {
        let mut on_print = on_print_sync(|_stream, text| {
            out.push(text);
        });
        let checkout = &mut self.checkout;
        let event = match answer {
            Answer::Return(value) => checkout.resume(ResumeValue::Return(value), &mut on_print),
            Answer::Raise(exc) => checkout.resume(ResumeValue::Error(exc), &mut on_print),
            Answer::Pending => checkout.resume(ResumeValue::Future, &mut on_print),
            Answer::NotFound => checkout.resume(ResumeValue::NotFound, &mut on_print),
            Answer::Lookup(value) => {
                return suspension(checkout.resume_name_lookup(value, &mut on_print).await);
            }
            Answer::Resolve(results) => {
                let results = results
                    .into_iter()
                    .map(|(id, result)| {
                        let value = match result {
                            Ok(value) => ResumeValue::Return(value),
                            Err(exc) => ResumeValue::Error(exc),
                        };
                        (id, value)
                    })
                    .collect();
                return suspension(checkout.resume_futures(results, &mut on_print).await);
            }
        }
        .await;
        suspension(event)
    }

    async fn finish(self) {
        // A worker that cannot be returned is discarded by the pool; nothing to report.
        let _ = self.checkout.finish().await;
    }
}
