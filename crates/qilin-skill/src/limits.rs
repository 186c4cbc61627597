//! The `limits:` section of an agent file.

use serde::{Deserialize, Serialize};

/// How far an agent may go: steps per turn and the code-mode limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct Limits {
    /// The most model steps in one turn; the runtime's default when absent.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// Limits for `run_code`; each absent field keeps the code-mode default.
    #[serde(default)]
    pub code: CodeLimitsConfig,
}

/// The code-mode limits an agent file may set; every field is optional and an absent one
/// keeps the code-mode runtime's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct CodeLimitsConfig {
    /// The longest one `run_code` call may run, in milliseconds.
    #[serde(default)]
    pub wall_time_ms: Option<u64>,
    /// The most memory the sandbox may use, in mebibytes.
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// The deepest Python recursion allowed.
    #[serde(default)]
    pub max_recursion_depth: Option<u32>,
    /// The most `sdk.tool.call`s one `run_code` call may make.
    #[serde(default)]
    pub max_tool_calls: Option<u32>,
    /// The most bytes of printed and returned output kept from one `run_code` call.
    #[serde(default)]
    pub max_output_bytes: Option<u64>,
    /// The most tool calls that may run at once from one `run_code` call.
    #[serde(default)]
    pub max_concurrency: Option<u32>,
}

impl CodeLimitsConfig {
    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == CodeLimitsConfig::default()
    }
}
