//! The caps on one `run_code` run: declared once, here, where both the agent file (which sets
//! them) and code mode (which enforces them) can see them.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The deepest Python recursion a run may reach. Monty keeps Python frames on the heap, but
/// unwinding a very deep stack recurses natively; above this a worker can overflow its stack.
pub const MAX_SAFE_RECURSION_DEPTH: usize = 2_000;

/// The caps on one `run_code` run, configurable per agent (`limits.code` in an agent file,
/// each field absent there keeping its default). Each cap, when reached, ends the run with an
/// error that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct CodeLimits {
    /// Wall time of the code itself in milliseconds; time spent inside tool calls is not
    /// counted (each tool call has the execution layer's own timeout). Default 10 000.
    pub wall_time_ms: u64,
    /// Memory the interpreter may allocate, in MiB. Default 256. Enforced exactly in worker
    /// processes; in-process only the size of single large allocations is checked.
    pub memory_mb: u64,
    /// Deepest Python recursion. Default 500, clamped to [`MAX_SAFE_RECURSION_DEPTH`].
    pub max_recursion_depth: usize,
    /// Tool calls per run. Default 1 000.
    pub max_tool_calls: usize,
    /// Printed output the model sees, in bytes; the whole output beyond it is saved to a file
    /// named by a notice. Default 20 000. A run printing more than
    /// [`CodeLimits::max_spilled_bytes`] is stopped.
    pub max_output_bytes: usize,
    /// Tool calls from `call_async` running at once (for `asyncio.gather`). Default 8.
    pub max_concurrency: usize,
}

impl Default for CodeLimits {
    fn default() -> Self {
        CodeLimits {
            wall_time_ms: 10_000,
            memory_mb: 256,
            max_recursion_depth: 500,
            max_tool_calls: 1_000,
            max_output_bytes: 20_000,
            max_concurrency: 8,
        }
    }
}

impl CodeLimits {
    /// The code's own wall time as a duration.
    pub fn wall_time(&self) -> Duration {
        Duration::from_millis(self.wall_time_ms.max(1))
    }

    /// The memory cap in bytes.
    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mb.max(1).saturating_mul(1 << 20)).unwrap_or(usize::MAX)
    }

    /// The recursion cap, clamped to what the interpreter's native stack can unwind.
    pub fn recursion_depth(&self) -> usize {
        self.max_recursion_depth.clamp(10, MAX_SAFE_RECURSION_DEPTH)
    }

    /// The most printed bytes kept in the spill file: 500 times the visible output, at
    /// least 1 MiB. Printing more ends the run.
    pub fn max_spilled_bytes(&self) -> usize {
        self.max_output_bytes.saturating_mul(500).max(1 << 20)
    }

    /// The concurrency of `call_async`, at least 1.
    pub fn concurrency(&self) -> usize {
        self.max_concurrency.max(1)
    }

    /// These limits with the wall time cut to `timeout_ms` when that is shorter.
    pub fn with_timeout(mut self, timeout_ms: Option<u64>) -> Self {
        if let Some(timeout) = timeout_ms {
            self.wall_time_ms = self.wall_time_ms.min(timeout.max(1));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_file_may_set_any_subset_in_snake_case() {
        let limits: CodeLimits =
            serde_json::from_str(r#"{"wall_time_ms": 500, "max_concurrency": 2}"#).unwrap();
        assert_eq!(limits.wall_time_ms, 500);
        assert_eq!(limits.max_concurrency, 2);
        assert_eq!(limits.max_tool_calls, CodeLimits::default().max_tool_calls);
        // An unknown key is left to the agent file's loader, which warns about it by name.
        let unknown = serde_json::from_str::<CodeLimits>(r#"{"wall_time": 5}"#).unwrap();
        assert_eq!(unknown, CodeLimits::default());
    }

    #[test]
    fn recursion_is_clamped_and_a_timeout_only_shortens() {
        let limits = CodeLimits {
            max_recursion_depth: 1_000_000,
            ..CodeLimits::default()
        };
        assert_eq!(limits.recursion_depth(), MAX_SAFE_RECURSION_DEPTH);
        assert_eq!(limits.with_timeout(Some(50)).wall_time_ms, 50);
        assert_eq!(limits.with_timeout(Some(50_000)).wall_time_ms, 10_000);
        assert_eq!(limits.with_timeout(None).wall_time_ms, 10_000);
    }
}
