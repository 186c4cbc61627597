//! What a server answered, as Qilin's [`LspItem`]s: 1-based positions in Unicode scalar
//! values, the line's text, the workspace-relative path of a file inside the workspace.

use crate::uri::{from_utf16, uri_to_path};
use lsp_types::{
    CallHierarchyItem, Diagnostic, DiagnosticSeverity, DocumentSymbol, DocumentSymbolResponse,
    GotoDefinitionResponse, HoverContents, Location, MarkedString, NumberOrString, OneOf, Range,
    SymbolKind, WorkspaceSymbolResponse,
};
use qilin_protocol::lsp::{LspContextLine, LspItem, LspSeverity};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Lines shown before a definition's line, and after it.
const CONTEXT_BEFORE: u32 = 2;
const CONTEXT_AFTER: u32 = 3;
/// The longest line text kept, in characters.
const MAX_LINE_CHARS: usize = 300;

/// Reads the lines of the workspace's files once per call, for the items' text.
pub(crate) struct Lines {
    root: PathBuf,
    files: HashMap<PathBuf, Option<Vec<String>>>,
}

impl Lines {
    /// Lines of the files under `root` (the canonical workspace root).
    pub fn new(root: &Path) -> Self {
        Lines {
            root: root.to_path_buf(),
            files: HashMap::new(),
        }
    }

    /// Uses `text` as the content of `path` (a version not, or no longer, on disk).
    pub fn with_text(mut self, path: &Path, text: &str) -> Self {
        self.files.insert(
            path.to_path_buf(),
            Some(text.lines().map(String::from).collect()),
        );
        self
    }

    /// The workspace-relative path of `uri`, when it is a file inside the workspace.
    pub fn relative(&self, uri: &str) -> Option<(PathBuf, String)> {
        let path = uri_to_path(uri)?;
        let relative = path
            .strip_prefix(&self.root)
            .ok()?
            .to_string_lossy()
            .into_owned();
        Some((path, relative))
    }

    /// Line `line` (from 0) of the file inside the workspace at `path`.
    fn line(&mut self, path: &Path, line: u32) -> Option<&str> {
        let lines = self.files.entry(path.to_path_buf()).or_insert_with(|| {
            std::fs::read_to_string(path)
                .ok()
                .map(|text| text.lines().map(String::from).collect())
        });
        lines.as_ref()?.get(line as usize).map(String::as_str)
    }

    /// An item at `range` of `uri`, with its path and line text when inside the workspace.
    pub fn item(&mut self, uri: &str, range: Range) -> LspItem {
        let mut item = LspItem {
            uri: uri.to_string(),
            line: range.start.line + 1,
            character: range.start.character + 1,
            end_line: Some(range.end.line + 1),
            end_character: Some(range.end.character + 1),
            ..LspItem::default()
        };
        let Some((path, relative)) = self.relative(uri) else {
            return item;
        };
        item.path = Some(relative);
        if let Some(text) = self.line(&path, range.start.line) {
            item.character = from_utf16(text, range.start.character);
            item.text = Some(shorten(text.trim_end()));
        }
        if let Some(text) = self.line(&path, range.end.line) {
            item.end_character = Some(from_utf16(text, range.end.character));
        }
        item
    }

    /// As [`Lines::item`], with the lines around it as context.
    pub fn definition(&mut self, uri: &str, range: Range) -> LspItem {
        let mut item = self.item(uri, range);
        if let Some((path, _)) = self.relative(uri) {
            let first = range.start.line.saturating_sub(CONTEXT_BEFORE);
            for line in first..=range.start.line + CONTEXT_AFTER {
                if let Some(text) = self.line(&path, line) {
                    item.context.push(LspContextLine {
                        line: line + 1,
                        text: shorten(text.trim_end()),
                    });
                }
            }
        }
        item
    }
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_LINE_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(MAX_LINE_CHARS).collect();
    cut.push('…');
    cut
}

/// The locations of a definition or implementation answer.
pub(crate) fn definitions(
    lines: &mut Lines,
    response: Option<GotoDefinitionResponse>,
) -> Vec<LspItem> {
    match response {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(location)) => {
            vec![lines.definition(location.uri.as_str(), location.range)]
        }
        Some(GotoDefinitionResponse::Array(locations)) => locations
            .into_iter()
            .map(|l| lines.definition(l.uri.as_str(), l.range))
            .collect(),
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .map(|l| lines.definition(l.target_uri.as_str(), l.target_selection_range))
            .collect(),
    }
}

/// The locations of a references answer.
pub(crate) fn locations(lines: &mut Lines, locations: Option<Vec<Location>>) -> Vec<LspItem> {
    locations
        .unwrap_or_default()
        .into_iter()
        .map(|l| lines.item(l.uri.as_str(), l.range))
        .collect()
}

/// A hover's Markdown; `None` when it says nothing.
pub(crate) fn hover(contents: HoverContents) -> Option<String> {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(code) => {
            format!("```{}\n{}\n```", code.language, code.value)
        }
    };
    let text = match contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(items) => items
            .into_iter()
            .map(marked)
            .collect::<Vec<_>>()
            .join("\n\n"),
        HoverContents::Markup(markup) => markup.value,
    };
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// A symbol kind in snake_case.
pub(crate) fn kind_name(kind: SymbolKind) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum_member",
        "struct",
        "event",
        "operator",
        "type_parameter",
    ];
    let code = serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_u64())
        .unwrap_or(0) as usize;
    code.checked_sub(1)
        .and_then(|index| NAMES.get(index))
        .copied()
        .unwrap_or("symbol")
}

/// The symbols of a document answer, nested symbols flattened with their depth.
pub(crate) fn document_symbols(
    lines: &mut Lines,
    uri: &str,
    response: Option<DocumentSymbolResponse>,
) -> Vec<LspItem> {
    fn walk(
        lines: &mut Lines,
        uri: &str,
        symbols: Vec<DocumentSymbol>,
        depth: u32,
        out: &mut Vec<LspItem>,
    ) {
        for symbol in symbols {
            let mut item = lines.item(uri, symbol.selection_range);
            item.name = Some(symbol.name);
            item.kind = Some(kind_name(symbol.kind).to_string());
            item.detail = symbol.detail.filter(|d| !d.is_empty());
            item.depth = Some(depth);
            out.push(item);
            if let Some(children) = symbol.children {
                walk(lines, uri, children, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    match response {
        None => {}
        Some(DocumentSymbolResponse::Nested(symbols)) => walk(lines, uri, symbols, 0, &mut out),
        Some(DocumentSymbolResponse::Flat(symbols)) => {
            for symbol in symbols {
                let mut item = lines.item(symbol.location.uri.as_str(), symbol.location.range);
                item.name = Some(symbol.name);
                item.kind = Some(kind_name(symbol.kind).to_string());
                item.detail = symbol.container_name.filter(|d| !d.is_empty());
                item.depth = Some(0);
                out.push(item);
            }
        }
    }
    out
}

/// The symbols of a workspace-symbol answer.
pub(crate) fn workspace_symbols(
    lines: &mut Lines,
    response: Option<WorkspaceSymbolResponse>,
) -> Vec<LspItem> {
    let mut out = Vec::new();
    match response {
        None => {}
        Some(WorkspaceSymbolResponse::Flat(symbols)) => {
            for symbol in symbols {
                let mut item = lines.item(symbol.location.uri.as_str(), symbol.location.range);
                item.name = Some(symbol.name);
                item.kind = Some(kind_name(symbol.kind).to_string());
                item.detail = symbol.container_name.filter(|d| !d.is_empty());
                out.push(item);
            }
        }
        Some(WorkspaceSymbolResponse::Nested(symbols)) => {
            for symbol in symbols {
                let mut item = match symbol.location {
                    OneOf::Left(location) => lines.item(location.uri.as_str(), location.range),
                    OneOf::Right(location) => LspItem {
                        uri: location.uri.as_str().to_string(),
                        path: lines.relative(location.uri.as_str()).map(|(_, r)| r),
                        line: 1,
                        character: 1,
                        ..LspItem::default()
                    },
                };
                item.name = Some(symbol.name);
                item.kind = Some(kind_name(symbol.kind).to_string());
                item.detail = symbol.container_name.filter(|d| !d.is_empty());
                out.push(item);
            }
        }
    }
    out
}

/// A call-hierarchy item at `range` of its file (its name, kind and detail).
pub(crate) fn call_item(lines: &mut Lines, item: &CallHierarchyItem, range: Range) -> LspItem {
    let mut out = lines.item(item.uri.as_str(), range);
    out.name = Some(item.name.clone());
    out.kind = Some(kind_name(item.kind).to_string());
    out.detail = item.detail.clone().filter(|d| !d.is_empty());
    out
}

/// A diagnostic of the file at `uri`.
pub(crate) fn diagnostic(lines: &mut Lines, uri: &str, diagnostic: &Diagnostic) -> LspItem {
    let mut item = lines.item(uri, diagnostic.range);
    item.severity = Some(match diagnostic.severity {
        Some(DiagnosticSeverity::WARNING) => LspSeverity::Warning,
        Some(DiagnosticSeverity::INFORMATION) => LspSeverity::Information,
        Some(DiagnosticSeverity::HINT) => LspSeverity::Hint,
        _ => LspSeverity::Error,
    });
    item.message = Some(diagnostic.message.clone());
    item.source = diagnostic.source.clone();
    item.code = diagnostic.code.as_ref().map(|code| match code {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.clone(),
    });
    item
}

/// Sorts items by path (or URI), then line and character; stable, so document symbols keep
/// their nesting order on one line.
pub(crate) fn sort(items: &mut [LspItem]) {
    items.sort_by(|a, b| {
        let key = |i: &LspItem| {
            (
                i.path.clone().unwrap_or_else(|| i.uri.clone()),
                i.line,
                i.character,
            )
        };
        key(a).cmp(&key(b))
    });
}
