//! The cap on a command's output: Qilin's one head-and-tail cap with its spill file
//! ([`qilin_tool::OutputCapture`]), with the budget `bash` and `job_output` show the model.

pub use qilin_tool::OutputCapture;

/// Bytes of output the model sees at most from one command (head and tail together).
pub const DEFAULT_OUTPUT_CAP: usize = 24_000;
