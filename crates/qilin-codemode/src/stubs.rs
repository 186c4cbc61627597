//! The Python API description of the tools: stubs the model reads (in a skill or a prompt)
//! and the type checker checks code against.
//!
//! Every tool becomes one typed signature of `sdk.tool.call` (and `call_async`) with a
//! `TypedDict` for its arguments and one for its output, from its JSON Schemas, and its
//! description as the docstring.

use qilin_tool::RegisteredTool;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

/// What every stub file starts with: how to call tools, how errors look, what reaches the
/// model.
const HEADER: &str = r#""""Qilin code mode: the `sdk` object and the tools the code can call.

Call a tool with `sdk.tool.call(name, args=None, **kwargs)`: `args` is a dict of the tool's
arguments (keywords are merged into it) and the call returns the tool's output as Python
values (dict, list, str, int, float, bool, None). `sdk.tool.call_async(...)` takes the same
arguments and returns an awaitable, so `await asyncio.gather(*calls)` runs calls concurrently.

A failed call raises `ToolError` (the built-in `RuntimeError` under another name: the sandbox
cannot define exception classes). Its message is "CODE: message", the code being one of
UNKNOWN_TOOL, INVALID_ARGUMENTS, CODE_MODE_ONLY, AUTO_REVIEW_DENIED, TIMEOUT, INTERRUPTED,
TOOL_FAILED. `sdk.tool.error(e)` returns {"code": ..., "message": ...} for a caught tool error
and None for any other exception:

    try:
        out = sdk.tool.call("read", {"path": "notes.md"})
    except ToolError as e:
        err = sdk.tool.error(e)
        print(err["code"], err["message"])

`sdk.skill(name, file=None)` reads a skill (a call of the `skill` tool) and returns its text.

Only what the code prints and the value of its last expression reach the model. There is no
file, network or environment access except through tools; time, memory, recursion, the number
of tool calls and the printed output are limited.
"""

from typing import Any, Literal, NotRequired, TypedDict, overload

ToolError = RuntimeError

class ToolErrorInfo(TypedDict):
    """A caught tool error, from `sdk.tool.error(e)`."""

    code: str
    """The error code, e.g. "INVALID_ARGUMENTS"."""
    message: str
    """What went wrong and what would work instead."""
"#;

/// What a run's code has beside `sdk.tool` and `sdk.skill`, for its stubs: a workflow's
/// `args` and `sdk.report`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StubExtras<'a> {
    /// More globals the code starts with, by name, typed after their values.
    pub globals: &'a [(String, Value)],
    /// `sdk.report(title, text)` is served (a workflow).
    pub report: bool,
}

/// Python stubs for `tools`: argument and output `TypedDict`s and one signature of
/// `sdk.tool.call` / `sdk.tool.call_async` per tool, with the descriptions as docstrings.
pub fn python_stubs<'a>(tools: impl IntoIterator<Item = &'a RegisteredTool>) -> String {
    python_stubs_with(tools, StubExtras::default())
}

/// [`python_stubs`] with what `extras` adds: `sdk.report` in the `Sdk` class, and each
/// global declared with the type of its value.
pub fn python_stubs_with<'a>(
    tools: impl IntoIterator<Item = &'a RegisteredTool>,
    extras: StubExtras<'_>,
) -> String {
    let mut classes = Classes::default();
    let mut signatures = Vec::new();
    for tool in tools {
        let base = pascal(tool.name());
        let args = classes.object_type(tool.parameters(), &format!("{base}Args"), &Map::new());
        let output_schema = tool.output_schema();
        let defs = output_schema
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let output = classes.py_type(output_schema, &format!("{base}Output"), &defs);
        signatures.push(Signature {
            name: tool.name().to_string(),
            args,
            output,
            doc: tool.description().trim().to_string(),
        });
    }
    let mut out = String::from(HEADER);
    for class in &classes.rendered {
        out.push_str("\n\n");
        out.push_str(class);
    }
    out.push_str("\n\nclass Tools:\n    \"\"\"`sdk.tool`: the tools the code can call.\"\"\"\n");
    for asynchronous in [false, true] {
        if signatures.is_empty() {
            let (def, method) = def_and_method(asynchronous);
            let _ = write!(
                out,
                "\n    {def} {method}(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any) -> Any: ...\n"
            );
        }
        for signature in &signatures {
            out.push('\n');
            if signatures.len() > 1 {
                out.push_str("    @overload\n");
            }
            let (def, method) = def_and_method(asynchronous);
            let _ = writeln!(
                out,
                "    {def} {method}(self, name: Literal[{name:?}], args: {args} | None = None, **kwargs: Any) -> {output}:",
                name = signature.name,
                args = signature.args,
                output = signature.output,
            );
            out.push_str(&docstring(&signature.doc, 8));
            out.push_str("        ...\n");
        }
    }
    out.push_str(
        "\n    def error(self, exc: BaseException) -> ToolErrorInfo | None:\n        \
         \"\"\"The code and message of a caught tool error; None for any other exception.\"\"\"\n        ...\n",
    );
    out.push_str(
        "\n\nclass Sdk:\n    \"\"\"The `sdk` object every run starts with.\"\"\"\n\n    tool: Tools\n\n    \
         def skill(self, name: str, file: str | None = None) -> str:\n        \
         \"\"\"A skill's text as the `skill` tool gives it: its instructions and the list of its \
         files, or the one file named.\"\"\"\n        ...\n",
    );
    if extras.report {
        out.push_str(
            "\n    def report(self, title: str, text: str) -> None:\n        \
             \"\"\"Adds a section (Markdown) to the workflow run's report.\"\"\"\n        ...\n",
        );
    }
    out.push_str("\n\nsdk: Sdk\n");
    for (name, value) in extras.globals {
        let _ = writeln!(out, "{name}: {}", value_type(value));
    }
    out
}

/// The Python type of a global's value.
fn value_type(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "dict[str, Any]",
        Value::Array(_) => "list[Any]",
        Value::String(_) => "str",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::Null => "Any",
    }
}

fn def_and_method(asynchronous: bool) -> (&'static str, &'static str) {
    if asynchronous {
        ("async def", "call_async")
    } else {
        ("def", "call")
    }
}

struct Signature {
    name: String,
    args: String,
    output: String,
    doc: String,
}

/// The `TypedDict` classes written so far, by name.
#[derive(Default)]
struct Classes {
    names: BTreeSet<String>,
    rendered: Vec<String>,
}

impl Classes {
    /// The Python type of `schema`; objects with properties become classes named `hint`.
    fn py_type(&mut self, schema: &Value, hint: &str, defs: &Map<String, Value>) -> String {
        let Some(object) = schema.as_object() else {
            return "Any".into();
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            return match defs.get(name) {
                Some(target) => self.py_type(target, &pascal(name), defs),
                None => "Any".into(),
            };
        }
        if let Some(constant) = object.get("const") {
            return literal(std::slice::from_ref(constant)).unwrap_or_else(|| "Any".into());
        }
        if let Some(options) = object.get("enum").and_then(Value::as_array) {
            return literal(options).unwrap_or_else(|| "Any".into());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = object.get(key).and_then(Value::as_array) {
                let types: Vec<String> = options
                    .iter()
                    .enumerate()
                    .map(|(i, option)| {
                        let hint = if i == 0 {
                            hint.to_string()
                        } else {
                            format!("{hint}{}", i + 1)
                        };
                        self.py_type(option, &hint, defs)
                    })
                    .collect();
                return union(types);
            }
        }
        let types: Vec<&str> = match object.get("type") {
            Some(Value::String(kind)) => vec![kind.as_str()],
            Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
            _ if object.contains_key("properties") => vec!["object"],
            _ => return "Any".into(),
        };
        let types = types
            .into_iter()
            .map(|kind| match kind {
                "string" => "str".to_string(),
                "integer" => "int".to_string(),
                "number" => "float".to_string(),
                "boolean" => "bool".to_string(),
                "null" => "None".to_string(),
                "array" => {
                    let item = object.get("items").map_or_else(
                        || "Any".into(),
                        |items| self.py_type(items, &format!("{hint}Item"), defs),
                    );
                    format!("list[{item}]")
                }
                "object" => self.object_type(schema, hint, defs),
                _ => "Any".to_string(),
            })
            .collect();
        union(types)
    }

    /// An object schema: a `TypedDict` named `hint` when it has properties, else a dict.
    fn object_type(&mut self, schema: &Value, hint: &str, defs: &Map<String, Value>) -> String {
        let properties = schema.get("properties").and_then(Value::as_object);
        let Some(properties) = properties.filter(|p| !p.is_empty()) else {
            return match schema.get("additionalProperties") {
                Some(values @ Value::Object(_)) => {
                    format!(
                        "dict[str, {}]",
                        self.py_type(values, &format!("{hint}Value"), defs)
                    )
                }
                _ => "dict[str, Any]".into(),
            };
        };
        let name = self.unique(hint);
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        for (field, field_schema) in properties {
            let ty = self.py_type(field_schema, &format!("{name}{}", pascal(field)), defs);
            let ty = if required.contains(field.as_str()) {
                ty
            } else {
                format!("NotRequired[{ty}]")
            };
            let doc = field_schema
                .get("description")
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default()
                .to_string();
            fields.push((field.clone(), ty, doc));
        }
        let description = schema
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|d| !d.is_empty());
        let mut class = String::new();
        if fields.iter().all(|(field, ..)| is_identifier(field)) {
            let _ = writeln!(class, "class {name}(TypedDict):");
            if let Some(description) = description {
                class.push_str(&docstring(description, 4));
            }
            for (field, ty, doc) in &fields {
                let _ = writeln!(class, "    {field}: {ty}");
                if !doc.is_empty() {
                    class.push_str(&docstring(doc, 4));
                }
            }
        } else {
            let entries: Vec<String> = fields
                .iter()
                .map(|(field, ty, _)| format!("{field:?}: {ty}"))
                .collect();
            let _ = writeln!(
                class,
                "{name} = TypedDict({name:?}, {{{}}})",
                entries.join(", ")
            );
        }
        self.rendered.push(class);
        name
    }

    fn unique(&mut self, hint: &str) -> String {
        let mut name = hint.to_string();
        let mut n = 2;
        while !self.names.insert(name.clone()) {
            name = format!("{hint}{n}");
            n += 1;
        }
        name
    }
}

fn literal(options: &[Value]) -> Option<String> {
    let items: Option<Vec<String>> = options
        .iter()
        .map(|option| match option {
            Value::String(s) => Some(format!("{s:?}")),
            Value::Bool(true) => Some("True".into()),
            Value::Bool(false) => Some("False".into()),
            Value::Number(n) if n.is_i64() => Some(n.to_string()),
            Value::Null => Some("None".into()),
            _ => None,
        })
        .collect();
    items
        .filter(|i| !i.is_empty())
        .map(|items| format!("Literal[{}]", items.join(", ")))
}

fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for ty in types {
        if !unique.contains(&ty) {
            unique.push(ty);
        }
    }
    if unique.iter().any(|t| t == "Any") || unique.is_empty() {
        return "Any".into();
    }
    unique.join(" | ")
}

/// `read_file` → `ReadFile`.
fn pascal(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn is_identifier(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
        "try", "while", "with", "yield",
    ];
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
}

fn docstring(text: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let text = text.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"");
    let mut lines = text.lines();
    let mut out = format!("{pad}\"\"\"{}", lines.next().unwrap_or_default());
    let rest: Vec<&str> = lines.collect();
    if rest.is_empty() {
        out.push_str("\"\"\"\n");
        return out;
    }
    out.push('\n');
    for line in rest {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{pad}{line}");
        }
    }
    let _ = writeln!(out, "{pad}\"\"\"");
    out
}
