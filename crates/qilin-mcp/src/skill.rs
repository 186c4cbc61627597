//! The skill Qilin writes for each MCP server: the model's only guide to tools it reaches from
//! code. `SKILL.md` carries the server's own instructions, then a section per tool — what it
//! does, every parameter with its type and description, the shape of its result (from its
//! `outputSchema`, or "unstructured text"), its declared effect, and a Python example of
//! `sdk.tool.call` whose arguments validate against the tool's schema — and
//! `reference/stubs.pyi` holds the tools' Python signatures.

use crate::tools::tool_title;
use crate::{ServerSnapshot, dynamic_tools, tool_wire_name};
use qilin_codemode::python_stubs;
use qilin_skill::{MAX_DESCRIPTION_CHARS, SKILL_FILE, mcp_skill_name};
use qilin_tool::{ToolEffect, ToolRegistry};
use rmcp::model::Tool;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Where the Python stubs of a server's tools are, in its skill.
pub const STUBS_FILE: &str = "reference/stubs.pyi";

/// A generated skill: its name and files (relative path → text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedSkill {
    /// The skill's name (`mcp-SERVER`).
    pub name: String,
    /// `SKILL.md` and `reference/stubs.pyi`.
    pub files: BTreeMap<String, String>,
}

/// The most characters of tool names the catalog description lists before "and N more": the
/// first names tell what the server is for, and the line is in every request.
const NAMES_IN_DESCRIPTION: usize = 50;

/// The skill for the server `snapshot` describes.
pub fn generate_skill(snapshot: &ServerSnapshot) -> GeneratedSkill {
    let name = mcp_skill_name(&snapshot.server);
    let mut files = BTreeMap::new();
    files.insert(SKILL_FILE.to_string(), skill_md(&name, snapshot));
    files.insert(STUBS_FILE.to_string(), stubs(snapshot));
    GeneratedSkill { name, files }
}

fn stubs(snapshot: &ServerSnapshot) -> String {
    let mut registry = ToolRegistry::new();
    for tool in dynamic_tools(snapshot, None, &[]) {
        // A tool whose schema does not compile is not registered, nor described here.
        let _ = registry.register_dynamic(tool);
    }
    without_module_docstring(&python_stubs(registry.list()))
}

/// The stubs without their module docstring: it explains the SDK with calls of built-in tools
/// this skill does not teach (SKILL.md explains calling and errors for the server's own).
fn without_module_docstring(stubs: &str) -> String {
    let Some(rest) = stubs.strip_prefix("\"\"\"") else {
        return stubs.to_string();
    };
    match rest.find("\"\"\"") {
        Some(end) => rest[end + 3..].trim_start().to_string(),
        None => stubs.to_string(),
    }
}

fn description(snapshot: &ServerSnapshot) -> String {
    let server = &snapshot.server;
    let about = snapshot
        .title
        .as_deref()
        .or(snapshot.server_name.as_deref())
        .filter(|about| *about != server)
        .map(|about| format!(" ({about})"))
        .unwrap_or_default();
    let names: Vec<&str> = snapshot
        .tools
        .iter()
        .map(|tool| tool.name.as_ref())
        .collect();
    let mut listed = String::new();
    let mut shown = 0;
    for name in &names {
        let separator = if shown == 0 { "" } else { ", " };
        if shown > 0 && listed.len() + separator.len() + name.len() > NAMES_IN_DESCRIPTION {
            break;
        }
        listed.push_str(separator);
        listed.push_str(name);
        shown += 1;
    }
    if names.len() > shown {
        let _ = write!(listed, " and {} more", names.len() - shown);
    }
    let text = if names.is_empty() {
        format!("MCP server `{server}`{about}: it offers no tools now.")
    } else {
        format!(
            "MCP server `{server}`{about}, {} tools: {listed}.",
            names.len()
        )
    };
    text.chars().take(MAX_DESCRIPTION_CHARS).collect()
}

/// A YAML double-quoted scalar.
fn yaml_quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

fn skill_md(name: &str, snapshot: &ServerSnapshot) -> String {
    let server = &snapshot.server;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "---\nname: {name}\ndescription: {}\n---\n",
        yaml_quoted(&description(snapshot))
    );
    let _ = writeln!(out, "# MCP server `{server}`\n");
    let identity = [snapshot.server_name.as_deref(), snapshot.version.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    if !identity.is_empty() {
        let _ = writeln!(out, "The server calls itself {identity}.\n");
    }
    if let Some(instructions) = snapshot
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
    {
        let _ = writeln!(
            out,
            "## What the server says about itself\n\n{instructions}\n"
        );
    }
    out.push_str("## Calling its tools\n\n");
    let _ = writeln!(
        out,
        "These tools are reached from code: inside `run_code`, call \
         `sdk.tool.call(\"NAME\", {{...}})` with a tool's name below (each is the server's name, \
         `__`, and the tool's own name). Each call goes through Qilin's review and is shown as a \
         card of its own. `sdk.tool.call_async` with `asyncio.gather` runs several at once.\n"
    );
    out.push_str(
        "A call returns the tool's result as Python values: its structured result (a dict) \
         when the tool declares a result shape, otherwise its text — parsed when the text is \
         JSON, else a `str`. A failed call (the server reports an error, rejects the arguments, \
         or has stopped) raises `ToolError`; `sdk.tool.error(e)` gives its `code` and \
         `message`. `reference/stubs.pyi` has every tool's Python signature.\n\n",
    );
    if let Some(first) = snapshot.tools.first() {
        let wire = tool_wire_name(server, &first.name);
        let _ = writeln!(
            out,
            "```python\ntry:\n    result = sdk.tool.call(\"{wire}\", {})\n    print(result)\nexcept ToolError as e:\n    print(\"failed:\", sdk.tool.error(e)[\"message\"])\n```\n",
            python_literal(&example_arguments(&Value::Object(
                (*first.input_schema).clone()
            )))
        );
    }
    for tool in &snapshot.tools {
        tool_section(&mut out, server, tool);
    }
    out
}

fn tool_section(out: &mut String, server: &str, tool: &Tool) {
    let wire = tool_wire_name(server, &tool.name);
    let title = tool_title(tool);
    if title == tool.name.as_ref() {
        let _ = writeln!(out, "## `{wire}`\n");
    } else {
        let _ = writeln!(out, "## `{wire}` — {title}\n");
    }
    // The description opens the section, as its statement of purpose; without one the
    // section says so after the parameters, so no sentence stands in for a purpose it lacks.
    let description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|description| !description.is_empty());
    if let Some(description) = description {
        let _ = writeln!(out, "{description}\n");
    }
    let schema = Value::Object((*tool.input_schema).clone());
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = required_names(&schema);
    match properties {
        Some(properties) if !properties.is_empty() => {
            out.push_str("Parameters:\n\n");
            for (name, property) in properties {
                let needed = if required.contains(&name.as_str()) {
                    "required"
                } else {
                    "optional"
                };
                let _ = write!(out, "- `{name}` ({}, {needed})", type_text(property));
                if let Some(text) = property.get("description").and_then(Value::as_str) {
                    let _ = write!(out, ": {}", one_line(text));
                }
                if let Some(default) = property.get("default") {
                    let _ = write!(out, " Default: `{default}`.");
                }
                out.push('\n');
            }
            out.push('\n');
        }
        _ => out.push_str("It takes no parameters.\n\n"),
    }
    match tool.output_schema.as_deref() {
        Some(output) => {
            let output = Value::Object(output.clone());
            let fields = output.get("properties").and_then(Value::as_object);
            match fields {
                Some(fields) if !fields.is_empty() => {
                    out.push_str("Returns a dict (its declared result shape):\n\n");
                    let required = required_names(&output);
                    for (name, field) in fields {
                        let always = if required.contains(&name.as_str()) {
                            ""
                        } else {
                            ", may be absent"
                        };
                        let _ = write!(out, "- `{name}` ({}{always})", type_text(field));
                        if let Some(text) = field.get("description").and_then(Value::as_str) {
                            let _ = write!(out, ": {}", one_line(text));
                        }
                        out.push('\n');
                    }
                    out.push('\n');
                }
                _ => {
                    let _ = writeln!(out, "Returns {}.\n", type_text(&output));
                }
            }
        }
        None => out.push_str(
            "Returns unstructured text: a `str`, or the parsed value when the text is JSON.\n\n",
        ),
    }
    let annotations = tool.annotations.as_ref();
    let effect = ToolEffect::from_hints(
        annotations.and_then(|a| a.read_only_hint),
        annotations.and_then(|a| a.destructive_hint),
    );
    let _ = writeln!(
        out,
        "Effect, as the server declares it: {}.\n",
        match effect {
            ToolEffect::ReadOnly => "read-only",
            ToolEffect::Additive => "changes things, but only adds",
            ToolEffect::Destructive => "may change or delete things (destructive)",
        }
    );
    let _ = writeln!(out, "Limits: {}\n", limits(&schema));
    let _ = writeln!(
        out,
        "Errors: a failed call raises `ToolError`. `INVALID_ARGUMENTS` when the arguments do not \
         fit the parameters above (Qilin checks them before the server sees them); `TOOL_FAILED` \
         when the server reports that the call failed (its error text is the message) or has \
         stopped; `TIMEOUT` when it does not answer within the call's time limit.\n"
    );
    if description.is_none() {
        let _ = writeln!(out, "The server gives no description of this tool.\n");
    }
    let _ = writeln!(
        out,
        "```python\nresult = sdk.tool.call(\"{wire}\", {})\nprint(result)\n```\n",
        python_literal(&example_arguments(&schema))
    );
}

/// The constraints a tool's input schema declares, in words: what the server refuses.
fn limits(schema: &Value) -> String {
    let mut said = Vec::new();
    let required = required_names(schema);
    if !required.is_empty() {
        let names: Vec<String> = required.iter().map(|name| format!("`{name}`")).collect();
        said.push(format!("{} must be given", names.join(", ")));
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let bounds = property_bounds(property);
            if !bounds.is_empty() {
                said.push(format!("`{name}` {}", bounds.join(", ")));
            }
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        said.push("other keys are refused".to_string());
    }
    if said.is_empty() {
        "the server declares none beyond the parameters' types.".to_string()
    } else {
        format!("{}.", said.join("; "))
    }
}

/// The bounds one property's schema sets: ranges, lengths, counts, a pattern, a format.
fn property_bounds(property: &Value) -> Vec<String> {
    const BOUNDS: [(&str, &str); 10] = [
        ("minimum", "at least"),
        ("exclusiveMinimum", "more than"),
        ("maximum", "at most"),
        ("exclusiveMaximum", "less than"),
        ("minLength", "at least this many characters:"),
        ("maxLength", "at most this many characters:"),
        ("minItems", "at least this many items:"),
        ("maxItems", "at most this many items:"),
        ("pattern", "matching the pattern"),
        ("format", "in the format"),
    ];
    BOUNDS
        .iter()
        .filter_map(|(key, words)| {
            property.get(*key).map(|value| match value {
                Value::String(text) => format!("{words} `{text}`"),
                other => format!("{words} {other}"),
            })
        })
        .collect()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A schema's type in words: `string`, `array of integer`, `one of "a", "b"`, `object`.
fn type_text(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", listed.join(", "));
    }
    if let Some(constant) = schema.get("const") {
        return format!("always {constant}");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let kinds: Vec<String> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .map(type_text)
                .collect();
            if !kinds.is_empty() {
                return kinds.join(" or ");
            }
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|kind| *kind != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ if schema.get("properties").is_some() => "object".to_string(),
        _ => "any value".to_string(),
    };
    match kind.as_str() {
        "array" => match schema.get("items") {
            Some(items) => format!("array of {}", type_text(items)),
            None => "array".to_string(),
        },
        _ => kind,
    }
}

/// Arguments that validate against `schema`: every required property with an example value
/// (the schema's own example, default or first allowed value when it gives one), or the first
/// property when none is required.
pub fn example_arguments(schema: &Value) -> Value {
    example_value(schema, "", 0)
}

fn example_value(schema: &Value, name: &str, depth: usize) -> Value {
    if let Some(example) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|examples| examples.first())
    {
        return example.clone();
    }
    for key in ["default", "const"] {
        if let Some(value) = schema.get(key) {
            return value.clone();
        }
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(branch) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|branches| {
                branches
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
            })
        {
            return example_value(branch, name, depth + 1);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("string"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    let number = |integer: bool| {
        let low = schema
            .get("minimum")
            .and_then(Value::as_f64)
            .or_else(|| {
                let exclusive = schema.get("exclusiveMinimum").and_then(Value::as_f64)?;
                Some(exclusive + 1.0)
            })
            .unwrap_or(1.0);
        let high = schema
            .get("maximum")
            .and_then(Value::as_f64)
            .unwrap_or(f64::MAX);
        let chosen = low.min(high);
        if integer {
            Value::from(chosen.ceil() as i64)
        } else {
            Value::from(chosen)
        }
    };
    match kind {
        "object" if depth < 6 => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let required = required_names(schema);
            let mut out = Map::new();
            if let Some(properties) = properties {
                for (key, property) in properties {
                    if required.contains(&key.as_str()) {
                        out.insert(key.clone(), example_value(property, key, depth + 1));
                    }
                }
                if out.is_empty()
                    && depth == 0
                    && let Some((key, property)) = properties.iter().next()
                {
                    out.insert(key.clone(), example_value(property, key, depth + 1));
                }
            }
            Value::Object(out)
        }
        "object" => Value::Object(Map::new()),
        "array" => {
            let count = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1);
            let item = schema
                .get("items")
                .map_or(Value::String("text".into()), |items| {
                    example_value(items, name, depth + 1)
                });
            Value::Array(vec![item; usize::try_from(count.min(3)).unwrap_or(1)])
        }
        "integer" => number(true),
        "number" => number(false),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => Value::String(example_string(schema, name)),
    }
}

fn example_string(schema: &Value, name: &str) -> String {
    let by_format = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2025-01-01T12:00:00Z"),
        Some("date") => Some("2025-01-01"),
        Some("time") => Some("12:00:00"),
        Some("email") => Some("someone@example.com"),
        Some("uri" | "url") => Some("https://example.com/"),
        Some("uuid") => Some("123e4567-e89b-12d3-a456-426614174000"),
        _ => None,
    };
    let lower = name.to_ascii_lowercase();
    let mut text = by_format.map(str::to_string).unwrap_or_else(|| {
        if lower.contains("path") || lower.contains("file") {
            "notes.txt".to_string()
        } else if lower.contains("dir") || lower.contains("folder") {
            ".".to_string()
        } else if lower.contains("url") || lower.contains("uri") {
            "https://example.com/".to_string()
        } else {
            "text".to_string()
        }
    });
    let minimum = schema
        .get("minLength")
        .and_then(Value::as_u64)
        .and_then(|m| usize::try_from(m).ok())
        .unwrap_or(0);
    while text.chars().count() < minimum {
        text.push('x');
    }
    if let Some(maximum) = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .and_then(|m| usize::try_from(m).ok())
    {
        text = text.chars().take(maximum).collect();
    }
    text
}

/// A JSON value written as a Python literal.
fn python_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into()),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, value)| format!(
                    "{}: {}",
                    serde_json::to_string(key).unwrap_or_default(),
                    python_literal(value)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn example_arguments_validate_against_their_schema() {
        let schemas = [
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 12}, "mode": {"enum": ["r", "w"]}}, "required": ["path", "mode"]}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 9}, "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2}}, "required": ["n", "tags"]}),
            json!({"type": "object", "properties": {"opt": {"type": "boolean"}}}),
            json!({"type": "object", "properties": {"when": {"anyOf": [{"type": "null"}, {"type": "string", "format": "date"}]}}, "required": ["when"]}),
        ];
        for schema in schemas {
            let example = example_arguments(&schema);
            let validator = jsonschema::validator_for(&schema).unwrap();
            assert!(validator.is_valid(&example), "{example} against {schema}");
        }
        assert_eq!(
            python_literal(&json!({"a": [true, null, 1.5, "x\"y"]})),
            r#"{"a": [True, None, 1.5, "x\"y"]}"#
        );
    }

    #[test]
    fn limits_state_what_the_schema_refuses() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "pattern": "^/"},
                "n": {"type": "integer", "minimum": 5, "maximum": 9},
                "tags": {"type": "array", "maxItems": 3}
            },
            "required": ["path"],
            "additionalProperties": false
        });
        assert_eq!(
            limits(&schema),
            "`path` must be given; `n` at least 5, at most 9; `path` at least this many \
             characters: 1, matching the pattern `^/`; `tags` at most this many items: 3; other \
             keys are refused."
        );
        assert_eq!(
            limits(&json!({"type": "object", "properties": {"x": {"type": "string"}}})),
            "the server declares none beyond the parameters' types."
        );
    }
}
