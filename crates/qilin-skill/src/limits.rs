//! The `limits:` section of an agent file.

use qilin_tool::CodeLimits;
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
    pub code: CodeLimits,
}
