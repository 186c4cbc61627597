//! Language-server navigation: what the `lsp` tool returns, the diagnostics an edit carries,
//! and the status of a workspace's language servers.
//!
//! Positions on the wire are 1-based (lines as `read` shows them; characters count Unicode
//! scalar values). An [`LspItem`] always has its `uri`; its `path` is set only for a file inside
//! the workspace, so a client can open it. An empty result always says why ([`LspEmpty`]).

use crate::SpillNotice;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the `lsp` tool asks the language server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum LspOperation {
    /// Where the symbol at a position is defined.
    Definition,
    /// Every use of the symbol at a position.
    References,
    /// The type and documentation of the symbol at a position.
    Hover,
    /// The symbols a file declares, nested.
    DocumentSymbols,
    /// The workspace's symbols matching a query.
    WorkspaceSymbols,
    /// The implementations of the interface or abstract member at a position.
    Implementation,
    /// The functions that call the function at a position.
    IncomingCalls,
    /// The functions the function at a position calls.
    OutgoingCalls,
    /// The diagnostics of a file.
    Diagnostics,
}

impl LspOperation {
    /// Every operation, in the order the tool documents them.
    pub const ALL: [LspOperation; 9] = [
        LspOperation::Definition,
        LspOperation::References,
        LspOperation::Hover,
        LspOperation::DocumentSymbols,
        LspOperation::WorkspaceSymbols,
        LspOperation::Implementation,
        LspOperation::IncomingCalls,
        LspOperation::OutgoingCalls,
        LspOperation::Diagnostics,
    ];

    /// The operation's wire name (`definition`, `document_symbols`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LspOperation::Definition => "definition",
            LspOperation::References => "references",
            LspOperation::Hover => "hover",
            LspOperation::DocumentSymbols => "document_symbols",
            LspOperation::WorkspaceSymbols => "workspace_symbols",
            LspOperation::Implementation => "implementation",
            LspOperation::IncomingCalls => "incoming_calls",
            LspOperation::OutgoingCalls => "outgoing_calls",
            LspOperation::Diagnostics => "diagnostics",
        }
    }

    /// Whether the operation needs a `line` and `character`.
    pub fn needs_position(self) -> bool {
        !matches!(
            self,
            LspOperation::DocumentSymbols
                | LspOperation::WorkspaceSymbols
                | LspOperation::Diagnostics
        )
    }
}

/// How serious a diagnostic is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "snake_case")]
pub enum LspSeverity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

impl LspSeverity {
    /// The severity's wire name (`error`, `warning`, `information`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            LspSeverity::Error => "error",
            LspSeverity::Warning => "warning",
            LspSeverity::Information => "information",
            LspSeverity::Hint => "hint",
        }
    }
}

/// One line shown around a definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LspContextLine {
    /// The line's number, from 1.
    pub line: u32,
    /// Its text, trailing whitespace trimmed.
    pub text: String,
}

/// One location, symbol, call or diagnostic a language server returned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LspItem {
    /// Where it is, as the server named it (`file:///…`, or another scheme).
    pub uri: String,
    /// The workspace-relative path; set only for a file inside the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The start line, from 1.
    pub line: u32,
    /// The start character, from 1.
    pub character: u32,
    /// The end line, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub end_line: Option<u32>,
    /// The end character, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub end_character: Option<u32>,
    /// The start line's text, trailing whitespace trimmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// A few lines around a definition (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LspContextLine>>", optional)]
    pub context: Vec<LspContextLine>,
    /// The symbol's name (symbols and call-hierarchy items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    /// The symbol's kind in snake_case: `function`, `class`, `method`, `variable`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kind: Option<String>,
    /// More about the symbol (its signature or container), as the server gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<String>,
    /// How deeply a document symbol is nested (0 = top level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub depth: Option<u32>,
    /// A diagnostic's severity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub severity: Option<LspSeverity>,
    /// A diagnostic's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// What produced a diagnostic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
    /// A diagnostic's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<String>,
}

/// Why a result is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum LspEmptyReason {
    /// No server is configured or known for the language, or its command is not on `PATH`.
    NoServer,
    /// The server is starting or indexing.
    Starting,
    /// The server did not answer in time.
    TimedOut,
    /// The server died during the request; the next call restarts it.
    Crashed,
    /// The server answered: nothing there.
    NotFound,
}

impl LspEmptyReason {
    /// The reason's wire name (`no_server`, `starting`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LspEmptyReason::NoServer => "no_server",
            LspEmptyReason::Starting => "starting",
            LspEmptyReason::TimedOut => "timed_out",
            LspEmptyReason::Crashed => "crashed",
            LspEmptyReason::NotFound => "not_found",
        }
    }
}

/// Why an `lsp` result holds nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LspEmpty {
    /// The reason.
    pub reason: LspEmptyReason,
    /// What happened, in a sentence (with the server's progress while it indexes).
    pub message: String,
    /// What to do about it, e.g. how to install the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hint: Option<String>,
}

/// What the `lsp` tool returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LspOutput {
    /// The operation asked.
    pub operation: LspOperation,
    /// The file's language (`python`, `typescript`, `rust`, …), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub language: Option<String>,
    /// The server's command name, e.g. `pyright-langserver`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server: Option<String>,
    /// The target file, workspace-relative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The asked line, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<u32>,
    /// The asked character, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub character: Option<u32>,
    /// The workspace-symbol query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub query: Option<String>,
    /// What the server returned, sorted by path then line, at most the cap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LspItem>>", optional)]
    pub items: Vec<LspItem>,
    /// The hover's Markdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hover: Option<String>,
    /// Why the result is empty, when `items` is empty and there is no hover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub empty: Option<LspEmpty>,
    /// How many items there were before the cap.
    pub total: u32,
    /// Whether items were cut at the cap.
    pub truncated: bool,
    /// Where the whole list was saved, when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub spill: Option<SpillNotice>,
}

/// The diagnostics an edit changed in the edited file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct EditDiagnostics {
    /// The server's command name.
    pub server: String,
    /// Diagnostics new since before the edit, errors first, bounded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LspItem>>", optional)]
    pub introduced: Vec<LspItem>,
    /// Diagnostics gone since before the edit, bounded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LspItem>>", optional)]
    pub resolved: Vec<LspItem>,
    /// How many diagnostics the file has after the edit, all severities.
    pub remaining: u32,
    /// A remark, e.g. that the server did not report in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// Where a language server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum LspServerState {
    /// Its command is not on `PATH`.
    NotInstalled,
    /// Not running (never started, or shut down).
    Stopped,
    /// Started, not yet initialized.
    Starting,
    /// Initialized, reporting indexing progress.
    Indexing,
    /// Answering requests.
    Ready,
    /// It died; the next request restarts it.
    Crashed,
}

impl LspServerState {
    /// The state's wire name (`not_installed`, `ready`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LspServerState::NotInstalled => "not_installed",
            LspServerState::Stopped => "stopped",
            LspServerState::Starting => "starting",
            LspServerState::Indexing => "indexing",
            LspServerState::Ready => "ready",
            LspServerState::Crashed => "crashed",
        }
    }
}

/// One language server of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LspServerStatus {
    /// The language it serves.
    pub language: String,
    /// Its command.
    pub server: String,
    /// Where it stands.
    pub state: LspServerState,
    /// Its process id while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pid: Option<u32>,
    /// How many times it was restarted after a crash.
    pub restarts: u32,
    /// Whether it runs (or will run) inside the sandbox: the workspace read-only to it, its
    /// writes only in a private temp folder. `false` when the user turned the sandbox off.
    #[serde(default)]
    pub sandboxed: bool,
    /// Whether it may reach the network: `network: true` in `.qilin/lsp.yaml`, or not
    /// sandboxed.
    #[serde(default)]
    pub network: bool,
    /// Its last progress message while indexing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub progress: Option<String>,
    /// The last error it met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error: Option<String>,
    /// How to install it, when not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hint: Option<String>,
}

/// The language servers of a workspace (`qilin lsp status`, `GET /api/lsp`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LspStatusResponse {
    /// The workspace's root.
    pub workspace: String,
    /// Its servers, by language.
    pub servers: Vec<LspServerStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_skips_what_it_does_not_have() {
        let item = LspItem {
            uri: "file:///w/a.py".into(),
            path: Some("a.py".into()),
            line: 3,
            character: 5,
            ..LspItem::default()
        };
        let json = serde_json::to_value(&item).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"uri": "file:///w/a.py", "path": "a.py", "line": 3, "character": 5})
        );
        let back: LspItem = serde_json::from_value(json).unwrap();
        assert_eq!(back, item);
    }

    #[test]
    fn wire_names_are_snake_case() {
        for op in LspOperation::ALL {
            assert_eq!(
                serde_json::to_value(op).unwrap(),
                serde_json::Value::from(op.as_str())
            );
        }
        assert_eq!(
            serde_json::to_value(LspServerState::NotInstalled).unwrap(),
            "not_installed"
        );
        assert_eq!(
            serde_json::to_value(LspEmptyReason::TimedOut).unwrap(),
            "timed_out"
        );
    }
}
