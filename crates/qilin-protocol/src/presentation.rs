use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a call introduces itself before it runs: a friendly action and a short remark.
///
/// `bash` presents as action "Run command" with the command's first line as remark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CallPresentation {
    /// What the call does, as a short verb phrase ("Read", "Search files").
    pub action: String,
    /// The object of the action (a path, a pattern, a command's first line).
    pub remark: String,
}

impl CallPresentation {
    /// A presentation from an action and a remark.
    pub fn new(action: impl Into<String>, remark: impl Into<String>) -> Self {
        CallPresentation {
            action: action.into(),
            remark: remark.into(),
        }
    }
}

/// A detail panel of a call card, shown before the call runs or after it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Detail {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Markdown to render.
    Markdown {
        /// The Markdown source.
        markdown: String,
    },
    /// Source code with a language for highlighting.
    Code {
        /// Language name for the highlighter (`python`, `bash`, `rust`, ...).
        language: String,
        /// The code.
        code: String,
    },
    /// A unified diff of one file.
    Diff {
        /// The file's path relative to the workspace.
        path: String,
        /// The unified diff text.
        diff: String,
        /// Lines added.
        added: u32,
        /// Lines removed.
        removed: u32,
    },
    /// A shell command and what it printed.
    #[serde(rename_all = "camelCase")]
    Shell {
        /// The command line.
        command: String,
        /// Combined output (possibly cut to head and tail).
        output: String,
        /// Exit code, when the process exited.
        exit_code: Option<i32>,
    },
    /// A structured value.
    Json {
        /// The value.
        #[ts(type = "unknown")]
        value: serde_json::Value,
    },
}
