//! `lsp`: navigate code through the workspace's language servers.

use crate::edits::LspService;
use crate::workspace::{LspError, LspQuery, MAX_ITEMS};
use qilin_protocol::lsp::{LspItem, LspOperation, LspOutput};
use qilin_protocol::{CallPresentation, ContentBlock, Detail, SpillNotice, spill_notice};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// Ask the workspace's language server about code: definitions, references, hover, symbols,
/// implementations, callers and callees, diagnostics.
///
/// A language server knows where a symbol is defined and used where a text search guesses.
/// Positions are 1-based, lines as `read` shows them, characters counted in Unicode
/// characters. Results are locations with their line's text (a few lines around a
/// definition), sorted by path then line, at most 100 (the rest saved to a file). An empty
/// result always says why: no server for the language (and how to install one), the server
/// still starting or indexing, timed out, crashed, or nothing found. The file is read from disk
/// before each request, so a result never describes an older version of it.
#[derive(qilin_tool::Tool)]
#[tool(name = "lsp", read_only, paths = ["path"])]
pub struct Lsp;

/// Arguments of `lsp`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// What to ask: `definition`, `references`, `hover`, `implementation`, `incoming_calls`,
    /// `outgoing_calls` (these need `path`, `line` and `character`), `document_symbols`,
    /// `diagnostics` (these need `path`), or `workspace_symbols` (needs `query`).
    pub operation: LspOperation,
    /// The file, relative to the workspace root (an absolute path must lie inside it). For
    /// `workspace_symbols`, optional: a file of the language to search.
    pub path: Option<String>,
    /// The line, from 1, as `read` shows it.
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// The character in the line, from 1 (a position inside the symbol's name).
    #[schemars(range(min = 1))]
    pub character: Option<u32>,
    /// For `workspace_symbols`: the name, or part of it, to look for.
    pub query: Option<String>,
}

impl Tool for Lsp {
    type Args = LspArgs;
    type Output = LspOutput;

    fn prompt_hint(&self) -> &str {
        "Use lsp to navigate code by meaning: `definition` to find where the symbol at a \
         position is defined, `references` for every use before you change it, `hover` for its \
         type and documentation, `implementation` for the implementations of an interface, \
         `incoming_calls`/`outgoing_calls` for who calls a function and what it calls, \
         `document_symbols` for a file's outline, `workspace_symbols` with `query` to find a \
         symbol by name, `diagnostics` for a file's errors. Give `line` and `character` from \
         1, pointing into the symbol's name as `read` shows it. When the result is empty read \
         `empty`: `starting` or `timed_out` means ask again shortly, `no_server` means use grep \
         instead."
    }

    fn present(&self, args: &LspArgs) -> CallPresentation {
        CallPresentation::new("LSP", remark(args))
    }

    fn before_detail(&self, _args: &LspArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &LspArgs, result: &ToolResult<LspOutput>) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => render(output),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: LspArgs, cx: &ToolContext) -> ToolResult<LspOutput> {
        let service = cx.service::<LspService>().ok_or_else(|| {
            ToolError::failed("language servers are not available in this session")
        })?;
        let query = LspQuery {
            operation: args.operation,
            path: args.path,
            line: args.line,
            character: args.character,
            query: args.query,
        };
        let workspace = Arc::clone(service.workspace());
        let mut output = workspace.run(&query).await.map_err(|err| match err {
            LspError::InvalidArguments(message) => ToolError::invalid_arguments(message),
            LspError::Config(err) => ToolError::failed(err.to_string()),
        })?;
        if output.items.len() > MAX_ITEMS {
            let path = cx.spill_path("lsp");
            let whole = render(&output);
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder).map_err(|err| {
                    ToolError::failed(format!("cannot create {}: {err}", folder.display()))
                })?;
            }
            std::fs::write(&path, &whole).map_err(|err| {
                ToolError::failed(format!("cannot write {}: {err}", path.display()))
            })?;
            output.items.truncate(MAX_ITEMS);
            output.truncated = true;
            output.spill = Some(SpillNotice {
                path: path.display().to_string(),
                total_bytes: whole.len() as u64,
            });
        }
        Ok(output)
    }

    fn content(&self, output: &LspOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(render(output))]
    }
}

/// `definition src/app.py:12:5`, `workspace_symbols "Order"`.
fn remark(args: &LspArgs) -> String {
    let mut remark = args.operation.as_str().to_string();
    if let Some(path) = &args.path {
        remark.push(' ');
        remark.push_str(path);
        if let Some(line) = args.line {
            remark.push_str(&format!(":{line}"));
            if let Some(character) = args.character {
                remark.push_str(&format!(":{character}"));
            }
        }
    }
    if let Some(query) = &args.query {
        remark.push_str(&format!(" \"{query}\""));
    }
    remark
}

/// What one result counts: `1 location`, `3 symbols`.
pub fn result_summary(output: &LspOutput) -> String {
    if output.hover.is_some() {
        return "hover".to_string();
    }
    if let Some(empty) = &output.empty {
        return format!("empty: {}", empty.reason.as_str());
    }
    let noun = match output.operation {
        LspOperation::DocumentSymbols | LspOperation::WorkspaceSymbols => "symbol",
        LspOperation::IncomingCalls => "caller",
        LspOperation::OutgoingCalls => "callee",
        LspOperation::Diagnostics => "diagnostic",
        _ => "location",
    };
    let plural = if output.total == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", output.total)
}

fn item_line(item: &LspItem) -> String {
    let place = format!(
        "{}:{}:{}",
        item.path.as_deref().unwrap_or(&item.uri),
        item.line,
        item.character
    );
    let mut line = String::new();
    if let Some(depth) = item.depth {
        line.push_str(&"  ".repeat(depth as usize));
    }
    if let Some(severity) = item.severity {
        line.push_str(&format!("{} ", severity.as_str()));
    }
    if let (Some(kind), Some(name)) = (&item.kind, &item.name) {
        line.push_str(&format!("{kind} {name} "));
    }
    line.push_str(&place);
    if let Some(message) = &item.message {
        line.push_str(&format!(": {message}"));
        if let Some(code) = &item.code {
            line.push_str(&format!(" [{code}]"));
        }
    }
    if let Some(detail) = &item.detail {
        line.push_str(&format!(" — {detail}"));
    }
    if item.context.is_empty()
        && let Some(text) = &item.text
    {
        line.push_str(&format!("  | {}", text.trim()));
    }
    line.push('\n');
    for context in &item.context {
        let mark = if context.line == item.line { '>' } else { ' ' };
        line.push_str(&format!("  {mark}{:>5} | {}\n", context.line, context.text));
    }
    line
}

/// What the model reads of a result.
pub fn render(output: &LspOutput) -> String {
    let mut text = output.operation.as_str().to_string();
    if let Some(path) = &output.path {
        text.push_str(&format!(" {path}"));
        if let (Some(line), Some(character)) = (output.line, output.character) {
            text.push_str(&format!(":{line}:{character}"));
        }
    }
    if let Some(query) = &output.query {
        text.push_str(&format!(" \"{query}\""));
    }
    if let Some(server) = &output.server {
        text.push_str(&format!(" ({server})"));
    }
    text.push_str(&format!(": {}\n", result_summary(output)));
    if let Some(hover) = &output.hover {
        text.push_str(hover);
        text.push('\n');
    }
    if let Some(empty) = &output.empty {
        text.push_str(&format!(
            "No result ({}): {}",
            empty.reason.as_str(),
            empty.message
        ));
        if let Some(hint) = &empty.hint {
            text.push_str(&format!(" — {hint}"));
        }
        text.push('\n');
    }
    for item in &output.items {
        text.push_str(&item_line(item));
    }
    if output.truncated {
        text.push_str(&format!(
            "[showing {} of {}]\n",
            output.items.len(),
            output.total
        ));
        if let Some(spill) = &output.spill {
            text.push_str(&spill_notice(&spill.path, spill.total_bytes));
            text.push('\n');
        }
    }
    text
}

/// What the model reads of the diagnostics an edit changed.
pub fn render_edit_diagnostics(diagnostics: &qilin_protocol::lsp::EditDiagnostics) -> String {
    let mut text = format!(
        "Diagnostics ({}): {} introduced, {} resolved, {} in the file now.\n",
        diagnostics.server,
        diagnostics.introduced.len(),
        diagnostics.resolved.len(),
        diagnostics.remaining
    );
    for (mark, items) in [("+", &diagnostics.introduced), ("-", &diagnostics.resolved)] {
        for item in items {
            text.push_str(&format!("{mark} {}", item_line(item)));
        }
    }
    if let Some(note) = &diagnostics.note {
        text.push_str(&format!("({note})\n"));
    }
    text
}
