//! A Python example: is it meant for `run_code` (it calls `sdk.tool.call`), does it compile
//! with Monty (what `run_code` runs) or else parse as CPython, and which `sdk.tool.call` /
//! `sdk.tool.call_async` calls does it make, with which literal arguments.
//!
//! Monty compiles the code exactly as `run_code` would, so its verdict is the one that
//! counts for code meant for `run_code`. Monty does not expose its syntax tree, so the calls
//! are found, and other code parsed, with the parser Monty itself is built on
//! (`ruff_python_parser`, the version Monty pins), which reads current CPython's grammar.

use crate::literal::{self, Literal};
use monty::MontyRun;
use monty_types::CompileOptions;
use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{Expr, ExprCall, ModModule};
use ruff_text_size::Ranged;
use serde_json::Value;

/// The globals a `run_code` script starts with; any other name is looked up at run time.
const SANDBOX_GLOBALS: &[&str] = &["sdk"];

/// A position in the example's own lines and columns, both from 1 (columns in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

/// Why an example does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// Where, when Monty says.
    pub position: Option<Position>,
    /// Monty's message (`SyntaxError: ...`).
    pub message: String,
}

/// One `sdk.tool.call(...)` in an example.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallSite {
    /// `call` or `call_async`.
    pub method: String,
    /// The tool's name when it is a string literal.
    pub name: Option<String>,
    /// Where the call starts.
    pub position: Position,
    /// The arguments as JSON when they can be known; `None` when they come from a non-literal
    /// (a variable, a `**` spread).
    pub arguments: Option<Literal>,
}

/// Compiles `code` with Monty; `Err` when `run_code` would refuse it before running.
pub fn compile(code: &str) -> Result<(), CompileError> {
    let globals = SANDBOX_GLOBALS.iter().map(|s| s.to_string()).collect();
    match MontyRun::new(
        code.to_string(),
        "example.py",
        globals,
        CompileOptions::default(),
    ) {
        Ok(_) => Ok(()),
        Err(exc) => Err(CompileError {
            position: exc.traceback().last().map(|frame| Position {
                line: frame.start.line.max(1) as usize,
                column: frame.start.column.max(1) as usize,
            }),
            message: exc.summary(),
        }),
    }
}

/// Parses `code` with CPython's grammar; `Err` with the parser's message and place when it
/// is not valid Python.
pub fn parse(code: &str) -> Result<(), CompileError> {
    match ruff_python_parser::parse_module(code) {
        Ok(_) => Ok(()),
        Err(error) => Err(CompileError {
            position: Some(LineIndex::new(code).position(error.location.start().to_usize())),
            message: format!("SyntaxError: {}", error.error),
        }),
    }
}

/// Whether `code` is meant for `run_code`: it calls `sdk.tool.call` or `sdk.tool.call_async`
/// (found in its syntax tree, or in its text when it does not parse).
pub fn calls_sdk(code: &str) -> bool {
    match ruff_python_parser::parse_module(code) {
        Ok(parsed) => !calls_in(&parsed.into_syntax(), code).is_empty(),
        Err(_) => code.contains("sdk.tool.call"),
    }
}

/// Every `sdk.tool.call`/`call_async` in `code`, in source order; empty when the code does
/// not parse (its compile error is reported instead).
pub fn tool_calls(code: &str) -> Vec<ToolCallSite> {
    match ruff_python_parser::parse_module(code) {
        Ok(parsed) => calls_in(&parsed.into_syntax(), code),
        Err(_) => Vec::new(),
    }
}

/// The `sdk.tool.call`/`call_async` calls in a parsed module of `code`.
fn calls_in(module: &ModModule, code: &str) -> Vec<ToolCallSite> {
    let lines = LineIndex::new(code);
    let mut finder = CallFinder {
        lines: &lines,
        found: Vec::new(),
    };
    for statement in &module.body {
        finder.visit_stmt(statement);
    }
    finder.found
}

struct LineIndex<'a> {
    code: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(code: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(code.match_indices('\n').map(|(at, _)| at + 1));
        LineIndex { code, starts }
    }

    fn position(&self, offset: usize) -> Position {
        let line = self.starts.partition_point(|start| *start <= offset);
        let start = self.starts[line - 1];
        let column = self
            .code
            .get(start..offset)
            .map_or(1, |text| text.chars().count() + 1);
        Position { line, column }
    }
}

struct CallFinder<'i> {
    lines: &'i LineIndex<'i>,
    found: Vec<ToolCallSite>,
}

fn is_sdk_tool(expr: &Expr) -> bool {
    let Expr::Attribute(tool) = expr else {
        return false;
    };
    matches!(tool.value.as_ref(), Expr::Name(name) if name.id.as_str() == "sdk")
        && tool.attr.id.as_str() == "tool"
}

impl CallFinder<'_> {
    fn site(&self, call: &ExprCall) -> Option<ToolCallSite> {
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        let method_name = method.attr.id.as_str();
        if !matches!(method_name, "call" | "call_async") || !is_sdk_tool(&method.value) {
            return None;
        }
        let mut positional = call.arguments.args.iter();
        let mut name = positional.next();
        let mut dict = positional.next();
        let mut unknowable = call
            .arguments
            .args
            .iter()
            .any(|arg| matches!(arg, Expr::Starred(_)));
        let mut keywords = Vec::new();
        for keyword in &call.arguments.keywords {
            match keyword.arg.as_ref().map(|arg| arg.id.as_str()) {
                None => unknowable = true,
                Some("name") if name.is_none() => name = Some(&keyword.value),
                Some("args") if dict.is_none() => dict = Some(&keyword.value),
                Some(key) => keywords.push((key, &keyword.value)),
            }
        }
        let name = match name {
            Some(Expr::StringLiteral(literal)) => Some(literal.value.to_str().to_string()),
            _ => None,
        };
        let arguments = if unknowable {
            None
        } else {
            merge(dict, keywords)
        };
        Some(ToolCallSite {
            method: method_name.to_string(),
            name,
            position: self.lines.position(call.start().to_usize()),
            arguments,
        })
    }
}

/// The arguments a call sends: the dict (positional or `args=`), then the keywords.
fn merge(dict: Option<&Expr>, keywords: Vec<(&str, &Expr)>) -> Option<Literal> {
    let from_keywords = literal::keywords_to_json(keywords);
    let Some(dict) = dict else {
        return Some(from_keywords);
    };
    let mut from_dict = literal::to_json(dict)?;
    match (&mut from_dict.value, from_keywords.value) {
        (Value::Null, keywords) => Some(Literal {
            value: keywords,
            skipped: from_keywords.skipped,
        }),
        (Value::Object(object), Value::Object(keywords)) => {
            object.extend(keywords);
            from_dict.skipped.extend(from_keywords.skipped);
            Some(from_dict)
        }
        _ => Some(from_dict),
    }
}

impl<'a> Visitor<'a> for CallFinder<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Some(site) = self.site(call)
        {
            self.found.push(site);
        }
        walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use super::{Position, calls_sdk, compile, parse, tool_calls};
    use serde_json::json;

    #[test]
    fn compile_reports_the_line_and_column_of_a_syntax_error() {
        assert!(compile("x = sdk.tool.call('grep', {'pattern': 'a'})\nprint(x)\n").is_ok());
        let error = compile("x = 1\nif x\n    print(x)\n").expect_err("a missing colon");
        assert_eq!(error.position.map(|p| p.line), Some(2));
        assert!(error.message.contains("SyntaxError"), "{}", error.message);
    }

    #[test]
    fn finds_calls_with_their_names_positions_and_literal_arguments() {
        let code = "import asyncio\nhits = sdk.tool.call(\"grep\", {\"pattern\": \"a\", \"path\": p})\n\
                    r = await sdk.tool.call_async(\"read\", path=\"x\", limit=3)\n\
                    n = sdk.tool.call(name, args)\nsdk.tool.call(\"glob\", **opts)\nother.call(\"grep\")\n";
        let found = tool_calls(code);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(found[0].name.as_deref(), Some("grep"));
        assert_eq!(found[0].position, Position { line: 2, column: 8 });
        let first = found[0].arguments.as_ref().expect("a literal dict");
        assert_eq!(first.value, json!({"pattern": "a", "path": null}));
        assert_eq!(first.skipped, vec!["/path"]);
        assert_eq!(found[1].method, "call_async");
        assert_eq!(
            found[1].arguments.as_ref().map(|a| a.value.clone()),
            Some(json!({"path": "x", "limit": 3}))
        );
        assert_eq!(found[2].name, None);
        assert!(found[2].arguments.is_none());
        assert_eq!(found[3].name.as_deref(), Some("glob"));
        assert!(found[3].arguments.is_none());
    }

    #[test]
    fn cpython_code_parses_and_its_errors_have_a_place() {
        let server = "from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP(\"notes\")\n\n\
                      class Store(dict):\n    async def load(self):\n        async with lock:\n            yield self\n\n\
                      @mcp.tool()\ndef add(text: str) -> str:\n    return text\n";
        assert!(parse(server).is_ok());
        assert!(!calls_sdk(server));
        let error = parse("def f(:\n    pass\n").expect_err("a syntax error");
        assert_eq!(error.position.map(|p| p.line), Some(1));
        assert!(
            error.message.starts_with("SyntaxError: "),
            "{}",
            error.message
        );
        assert!(calls_sdk(
            "x = sdk.tool.call(\"read\", {\"path\": \"a\"})\n"
        ));
        assert!(
            calls_sdk("x = sdk.tool.call(\"read\", {\n"),
            "found in the text"
        );
        assert!(!calls_sdk("print('sdk.tool is documented elsewhere')\n"));
    }

    #[test]
    fn code_that_does_not_parse_has_no_calls() {
        assert!(tool_calls("sdk.tool.call(\"grep\", {\n").is_empty());
    }
}
