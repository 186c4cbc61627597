//! The diagnostics an edit changed, when the session asks for them (the agent file's
//! `lsp: {diagnostics_after_edit: true}`) and a language server handles the file.

use qilin_lsp::{EditBaseline, LspService};
use qilin_protocol::lsp::EditDiagnostics;
use qilin_tool::ToolContext;

/// The edited file's diagnostics before the edit of `path` (as the call gave it).
pub(crate) async fn before(cx: &ToolContext, path: &str) -> Option<EditBaseline> {
    let service = cx.service::<LspService>()?;
    if !service.diagnostics_after_edit() {
        return None;
    }
    service.before_edit(&cx.workspace().join(path)).await
}

/// What the edit changed, once it is written.
pub(crate) async fn after(baseline: Option<EditBaseline>) -> Option<EditDiagnostics> {
    match baseline {
        Some(baseline) => Some(baseline.after_edit().await),
        None => None,
    }
}

/// The text the model reads after an edit's own: what it changed in the diagnostics.
pub(crate) fn text(diagnostics: Option<&EditDiagnostics>) -> String {
    diagnostics
        .map(|d| format!("\n{}", qilin_lsp::render_edit_diagnostics(d)))
        .unwrap_or_default()
}
