//! `write`: create or overwrite a file, atomically.

use crate::file_access::{FileScope, blocking};
use crate::read::language_of;
use qilin_protocol::lsp::EditDiagnostics;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Create or overwrite a file.
///
/// Writes the whole content of a file in the workspace, creating missing parent folders. The
/// write is atomic: the file is either the old one or the new one, never half written.
#[derive(qilin_tool::Tool)]
#[tool(name = "write", paths = ["path"])]
pub struct Write;

/// Arguments of `write`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file, relative to the workspace root (an absolute path must lie inside it).
    pub path: String,
    /// The file's complete new content.
    pub content: String,
}

/// Whether a write made a new file or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteAction {
    /// The file did not exist before.
    Created,
    /// An existing file's content was replaced.
    Replaced,
}

/// What `write` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WriteOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Bytes written.
    pub bytes_written: usize,
    /// `created` or `replaced`.
    pub action: WriteAction,
    /// The diagnostics the write introduced or resolved in the file, when the agent asks for
    /// them (`lsp: {diagnostics_after_edit: true}`) and a language server handles the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<EditDiagnostics>,
}

impl Tool for Write {
    type Args = WriteArgs;
    type Output = WriteOutput;

    fn prompt_hint(&self) -> &str {
        "Use write to create a new file or to rewrite a file completely. To change part of an \
         existing file use edit instead: it is safer and shows a diff. Read a file before you \
         replace it so that nothing in it is lost. Give the whole content; nothing is appended."
    }

    fn present(&self, args: &WriteArgs) -> CallPresentation {
        CallPresentation::new("Write", &args.path)
    }

    fn before_detail(&self, args: &WriteArgs) -> Option<Detail> {
        Some(Detail::Code {
            language: language_of(&args.path).to_string(),
            code: args.content.clone(),
        })
    }

    fn detail(&self, args: &WriteArgs, result: &ToolResult<WriteOutput>) -> Option<Detail> {
        match result {
            Ok(_) => self.before_detail(args),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, args: WriteArgs, cx: &ToolContext) -> ToolResult<WriteOutput> {
        let baseline = crate::edit_diagnostics::before(cx, &args.path).await;
        let scope = FileScope::of(cx);
        let mut output = blocking(move || {
            let path = scope.writable(&args.path)?;
            let created = path
                .write_atomically(args.content.as_bytes())
                .map_err(|err| {
                    ToolError::failed(format!("`{}` could not be written: {err}", path.relative()))
                })?;
            Ok(WriteOutput {
                path: path.relative().to_string(),
                bytes_written: args.content.len(),
                action: if created {
                    WriteAction::Created
                } else {
                    WriteAction::Replaced
                },
                diagnostics: None,
            })
        })
        .await?;
        output.diagnostics = crate::edit_diagnostics::after(baseline).await;
        Ok(output)
    }

    fn content(&self, output: &WriteOutput) -> Vec<ContentBlock> {
        let verb = match output.action {
            WriteAction::Created => "Created",
            WriteAction::Replaced => "Replaced",
        };
        vec![ContentBlock::text(format!(
            "{verb} `{}` ({} bytes).{}",
            output.path,
            output.bytes_written,
            crate::edit_diagnostics::text(output.diagnostics.as_ref())
        ))]
    }
}
