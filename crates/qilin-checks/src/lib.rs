//! Qilin's declared checks: commands declared once that verify the work (tests, linters, type
//! checkers), and `checks_run`, which runs them and returns results shaped like CI check runs.
//!
//! Checks are declared in an agent file's `checks:` and the workspace's `.qilin/checks.yaml`
//! ([`qilin_skill::CheckDeclaration`]; an agent's check replaces the workspace's of the same
//! id). The runtime gives a session that has any a [`CheckService`] (a host service on the
//! [`ToolContext`]); `checks_run` and the runtime's goals run them through it:
//!
//! - each check runs with `bash -c` in the workspace root, in the session's sandbox, like a
//!   foreground `bash` call ([`qilin_tools::run_command`]), with its own timeout, after which
//!   its process group is killed and the run is `timed_out` — a failure, never a success;
//! - checks run concurrently, but a check waits for the checks it `depends_on` (when they run
//!   in the same call), and an `exclusive` one runs with no other;
//! - its parser ([`qilin_skill::CheckParser`]) reads its output into annotations and a
//!   one-line summary; it passes when it exits 0 and its parser found nothing failing;
//! - an unchanged tree reuses the last run (`cached: true`; see the cache module).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cache;
pub mod parse;
mod runner;
mod tool;

pub use runner::{CHECK_OUTPUT_CAP, MAX_PARSED_BYTES};
pub use tool::{ChecksRun, ChecksRunArgs, output_text};

use cache::RunCache;
use qilin_protocol::checks::ChecksRunOutput;
use qilin_skill::{CHECKS_WORKSPACE_FILE, CheckDeclaration};
use qilin_tool::{RegistryError, ToolContext, ToolError, ToolRegistry, ToolResult};
use std::sync::Arc;

/// Registers `checks_run`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(ChecksRun)
}

/// The checks declared for a session (the agent file's `checks:` over the workspace's
/// `.qilin/checks.yaml`), with the cache of their runs: a host service on the
/// [`ToolContext`], installed by the runtime when the session has checks.
#[derive(Debug)]
pub struct CheckService {
    checks: Vec<CheckDeclaration>,
    cache: RunCache,
}

impl CheckService {
    /// A service running `checks` (in their declared order), with an empty cache.
    pub fn new(checks: Vec<CheckDeclaration>) -> Self {
        CheckService {
            checks,
            cache: RunCache::default(),
        }
    }

    /// The service of the call's session, or an error saying where checks are declared.
    pub fn of(cx: &ToolContext) -> ToolResult<Arc<CheckService>> {
        cx.service::<CheckService>()
            .filter(|service| !service.checks.is_empty())
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "no checks are declared for this session: declare them in the workspace's \
                     `{CHECKS_WORKSPACE_FILE}` (a `checks:` list, each with `id` and `command`) \
                     or in the agent file's `checks:`; `qilin check` reports a checks file that \
                     could not be read"
                ))
            })
    }

    /// The declared ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.checks.iter().map(|check| check.id.clone()).collect()
    }

    /// The declarations, in order.
    pub fn declarations(&self) -> &[CheckDeclaration] {
        &self.checks
    }

    /// Runs the checks `ids` names (every declared check when `None`), in declaration order
    /// whatever the order of `ids`. An id that is not declared is refused, naming the declared
    /// ones.
    pub async fn run(
        &self,
        cx: &ToolContext,
        ids: Option<&[String]>,
    ) -> ToolResult<ChecksRunOutput> {
        let selected: Vec<CheckDeclaration> = match ids {
            None => self.checks.clone(),
            Some(ids) => {
                let unknown: Vec<&str> = ids
                    .iter()
                    .map(String::as_str)
                    .filter(|id| !self.checks.iter().any(|check| check.id == *id))
                    .collect();
                if !unknown.is_empty() {
                    return Err(ToolError::invalid_arguments(format!(
                        "no check is declared with the id{} {}; the declared checks are {}",
                        if unknown.len() == 1 { "" } else { "s" },
                        quoted(&unknown),
                        quoted(
                            &self
                                .checks
                                .iter()
                                .map(|c| c.id.as_str())
                                .collect::<Vec<_>>()
                        )
                    )));
                }
                if ids.is_empty() {
                    return Err(ToolError::invalid_arguments(format!(
                        "`ids` is empty; name checks to run ({}), or leave `ids` out to run \
                         them all",
                        quoted(
                            &self
                                .checks
                                .iter()
                                .map(|c| c.id.as_str())
                                .collect::<Vec<_>>()
                        )
                    )));
                }
                self.checks
                    .iter()
                    .filter(|check| ids.contains(&check.id))
                    .cloned()
                    .collect()
            }
        };
        let runs = runner::run_checks(&selected, &self.cache, cx).await?;
        Ok(ChecksRunOutput::from_runs(runs))
    }
}

/// `` `a`, `b` ``.
fn quoted(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
