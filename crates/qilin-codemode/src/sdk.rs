//! The `sdk` object inside the sandbox, and the routing of what the code calls.
//!
//! `sdk` is a host object; `sdk.tool` another, whose methods suspend the interpreter:
//! `call(name, args=None, **kwargs)` runs a tool and returns its output, `call_async(...)`
//! returns an awaitable for `asyncio.gather`, and `error(e)` reads a caught tool error.
//! `sdk.skill(name, file=None)` reads a skill through the `skill` tool (a nested call like
//! any other) and returns the text a direct read gives the model.
//! Anything else the code calls that the sandbox does not define (`eval`, `exec`,
//! `__import__`, ...) is answered "not defined"; file, environment and clock access is
//! refused.

use crate::convert::monty_to_json;
use crate::run::RunObserver;
use crate::sandbox::Answer;
use monty_types::{
    DictPairs, ExcType, MontyClassInstance, MontyClassType, MontyException, MontyObject, MontyUuid,
};
use qilin_protocol::ErrorCode;
use qilin_tool::ToolError;
use serde_json::{Map, Value};

const SDK_ID: MontyUuid = MontyUuid::from_u128(0x7169_6c69_6e00_0000_0000_0000_0000_0001);
const TOOLS_ID: MontyUuid = MontyUuid::from_u128(0x7169_6c69_6e00_0000_0000_0000_0000_0002);
const SDK_CLASS_ID: MontyUuid = MontyUuid::from_u128(0x7169_6c69_6e00_0000_0000_0000_0000_0101);
const TOOLS_CLASS_ID: MontyUuid = MontyUuid::from_u128(0x7169_6c69_6e00_0000_0000_0000_0000_0102);

/// The built-in exception type every failed tool call raises. Monty cannot define exception
/// classes, so `ToolError` in the sandbox is this built-in type under another name, bound
/// by a one-line prelude.
pub const TOOL_ERROR_TYPE: ExcType = ExcType::RuntimeError;

/// The line put before the model's code. Monty cannot take an exception type as an input
/// value, so `ToolError` is bound by code; tracebacks are shifted back by
/// [`in_user_lines`] so their line numbers are the model's.
const PRELUDE: &str = "ToolError = RuntimeError\n";

/// The model's code with the prelude in front.
pub(crate) fn with_prelude(code: &str) -> String {
    format!("{PRELUDE}{code}")
}

/// An exception from code run [`with_prelude`], with the model's own line numbers and
/// file name (a worker names its snippet `<python-input-0>`).
pub(crate) fn in_user_lines(exc: MontyException, script_name: &str) -> MontyException {
    let shift = PRELUDE.lines().count() as u32;
    let frames = exc
        .traceback()
        .iter()
        .cloned()
        .map(|mut frame| {
            if frame.filename == script_name || frame.filename.starts_with("<python-input-") {
                frame.filename = script_name.to_string();
                frame.start.line = frame.start.line.saturating_sub(shift).max(1);
                frame.end.line = frame.end.line.saturating_sub(shift).max(1);
            }
            frame
        })
        .collect();
    let message = exc.message().map(str::to_string);
    MontyException::with_traceback(exc.exc_type(), message, frames)
}

/// The globals every run starts with: `sdk` (`ToolError` comes from the prelude).
pub(crate) fn inputs() -> Vec<(String, MontyObject)> {
    let tools = instance("Tools", TOOLS_CLASS_ID, TOOLS_ID, DictPairs::default());
    let sdk_attrs: DictPairs = vec![(MontyObject::String("tool".into()), tools)]
        .into_iter()
        .collect();
    vec![(
        "sdk".to_string(),
        instance("Sdk", SDK_CLASS_ID, SDK_ID, sdk_attrs),
    )]
}

fn instance(class: &str, class_id: MontyUuid, id: MontyUuid, attrs: DictPairs) -> MontyObject {
    MontyObject::ClassInstance(Box::new(MontyClassInstance {
        class_type: MontyClassType {
            name: class.to_string(),
            id: class_id,
            host_defined: true,
            is_dataclass: false,
            attrs: DictPairs::default(),
        },
        instance_id: id,
        attrs,
    }))
}

/// What a function call from the code asks of the host.
#[derive(Debug)]
pub(crate) enum Request {
    /// Run a tool; `asynchronous` for `call_async`; `text` to return the text the model
    /// would read (its content) instead of its output.
    Tool {
        name: String,
        arguments: Value,
        asynchronous: bool,
        text: bool,
    },
    /// Add a section to the run's report (`sdk.report(title, text)`).
    Report {
        /// The section's title.
        title: String,
        /// The section's Markdown.
        text: String,
    },
    /// Answer at once.
    Answer(Answer),
}

/// Routes a suspended function call: only the methods of `sdk.tool` are served.
pub(crate) fn route(
    function_name: &str,
    args: Vec<MontyObject>,
    kwargs: Vec<(MontyObject, MontyObject)>,
    object_id: Option<MontyUuid>,
) -> Request {
    match (object_id, function_name) {
        (Some(TOOLS_ID), "call") => tool_request(args, kwargs, false),
        (Some(TOOLS_ID), "call_async") => tool_request(args, kwargs, true),
        (Some(TOOLS_ID), "error") => Request::Answer(error_info(args)),
        (Some(TOOLS_ID), other) => raise(
            ExcType::AttributeError,
            format!(
                "'sdk.tool' has no method '{other}'; it has call(name, args=None, **kwargs), \
                 call_async(name, args=None, **kwargs) and error(exc)"
            ),
        ),
        (Some(SDK_ID), "skill") => skill_request(args, kwargs),
        (Some(SDK_ID), "report") => report_request(args, kwargs),
        (Some(SDK_ID), other) => raise(
            ExcType::AttributeError,
            format!(
                "'sdk' has no method '{other}'; call tools with sdk.tool.call(name, {{...}}), \
                 read skills with sdk.skill(name) and, in a workflow, add to its report with \
                 sdk.report(title, text)"
            ),
        ),
        _ => Request::Answer(Answer::NotFound),
    }
}

/// The answer to a file, environment or clock request.
pub(crate) fn refuse_os_call(function_name: &str) -> Answer {
    Answer::Raise(MontyException::new(
        ExcType::PermissionError,
        Some(format!(
            "{function_name} is not available: run_code has no file, network, environment or \
             clock access; use tools through sdk.tool.call(name, {{...}})"
        )),
    ))
}

fn raise(exc_type: ExcType, message: String) -> Request {
    Request::Answer(Answer::Raise(MontyException::new(exc_type, Some(message))))
}

fn tool_request(
    args: Vec<MontyObject>,
    kwargs: Vec<(MontyObject, MontyObject)>,
    asynchronous: bool,
) -> Request {
    let method = if asynchronous { "call_async" } else { "call" };
    let usage = format!("sdk.tool.{method}(name, args=None, **kwargs)");
    let mut positional = args.into_iter();
    let mut name = positional.next();
    let mut dict = positional.next();
    if positional.next().is_some() {
        return raise(
            ExcType::TypeError,
            format!(
                "{usage} takes at most 2 positional arguments; pass the rest as a dict or keywords"
            ),
        );
    }
    let mut arguments = Map::new();
    for (key, value) in kwargs {
        let MontyObject::String(key) = key else {
            return raise(
                ExcType::TypeError,
                format!("{usage}: keywords must be strings"),
            );
        };
        match key.as_str() {
            "name" if name.is_none() => name = Some(value),
            "args" if dict.is_none() => dict = Some(value),
            _ => {
                arguments.insert(key, monty_to_json(&value));
            }
        }
    }
    let name = match name {
        Some(MontyObject::String(name)) => name,
        Some(other) => {
            return raise(
                ExcType::TypeError,
                format!(
                    "{usage}: name must be a str (the tool's wire name), got {}",
                    other.type_name()
                ),
            );
        }
        None => {
            return raise(
                ExcType::TypeError,
                format!(
                    "{usage}: missing the tool's name, e.g. sdk.tool.{method}(\"echo\", {{\"text\": \"hi\"}})"
                ),
            );
        }
    };
    match dict {
        None | Some(MontyObject::None) => {}
        Some(MontyObject::Dict(pairs)) => {
            let keywords = std::mem::take(&mut arguments);
            for (key, value) in &pairs {
                let MontyObject::String(key) = key else {
                    return raise(
                        ExcType::TypeError,
                        format!(
                            "{usage}: the keys of args must be strings, got {}",
                            key.type_name()
                        ),
                    );
                };
                arguments.insert(key.clone(), monty_to_json(value));
            }
            for (key, value) in keywords {
                if arguments.contains_key(&key) {
                    return raise(
                        ExcType::TypeError,
                        format!("{usage}: argument '{key}' is given both in args and as a keyword"),
                    );
                }
                arguments.insert(key, value);
            }
        }
        Some(other) => {
            return raise(
                ExcType::TypeError,
                format!(
                    "{usage}: args must be a dict or None, got {}",
                    other.type_name()
                ),
            );
        }
    }
    Request::Tool {
        name,
        arguments: Value::Object(arguments),
        asynchronous,
        text: false,
    }
}

/// `sdk.skill(name, file=None)`: a call of the `skill` tool whose answer is its text.
fn skill_request(args: Vec<MontyObject>, kwargs: Vec<(MontyObject, MontyObject)>) -> Request {
    const USAGE: &str = "sdk.skill(name, file=None)";
    let mut positional = args.into_iter();
    let mut name = positional.next();
    let mut file = positional.next();
    if positional.next().is_some() {
        return raise(
            ExcType::TypeError,
            format!("{USAGE} takes at most 2 arguments: the skill's name and one of its files"),
        );
    }
    for (key, value) in kwargs {
        match key {
            MontyObject::String(key) if key == "name" && name.is_none() => name = Some(value),
            MontyObject::String(key) if key == "file" && file.is_none() => file = Some(value),
            MontyObject::String(key) => {
                return raise(
                    ExcType::TypeError,
                    format!("{USAGE} got an unexpected or repeated argument '{key}'"),
                );
            }
            _ => {
                return raise(
                    ExcType::TypeError,
                    format!("{USAGE}: keywords must be strings"),
                );
            }
        }
    }
    let mut arguments = Map::new();
    match name {
        Some(MontyObject::String(name)) => {
            arguments.insert("name".into(), Value::String(name));
        }
        Some(other) => {
            return raise(
                ExcType::TypeError,
                format!(
                    "{USAGE}: name must be a str (a skill's name in the catalog), got {}",
                    other.type_name()
                ),
            );
        }
        None => {
            return raise(
                ExcType::TypeError,
                format!("{USAGE}: missing the skill's name, e.g. sdk.skill(\"mcp-github\")"),
            );
        }
    }
    match file {
        None | Some(MontyObject::None) => {}
        Some(MontyObject::String(file)) => {
            arguments.insert("file".into(), Value::String(file));
        }
        Some(other) => {
            return raise(
                ExcType::TypeError,
                format!(
                    "{USAGE}: file must be a str (a path the skill lists), got {}",
                    other.type_name()
                ),
            );
        }
    }
    Request::Tool {
        name: "skill".into(),
        arguments: Value::Object(arguments),
        asynchronous: false,
        text: true,
    }
}

/// `sdk.report(title, text)`: both strings, given by position or by name.
fn report_request(args: Vec<MontyObject>, kwargs: Vec<(MontyObject, MontyObject)>) -> Request {
    const USAGE: &str = "sdk.report(title, text)";
    let mut positional = args.into_iter();
    let mut title = positional.next();
    let mut text = positional.next();
    if positional.next().is_some() {
        return raise(
            ExcType::TypeError,
            format!("{USAGE} takes 2 arguments: the section's title and its Markdown"),
        );
    }
    for (key, value) in kwargs {
        match key {
            MontyObject::String(key) if key == "title" && title.is_none() => title = Some(value),
            MontyObject::String(key) if key == "text" && text.is_none() => text = Some(value),
            MontyObject::String(key) => {
                return raise(
                    ExcType::TypeError,
                    format!("{USAGE} got an unexpected or repeated argument '{key}'"),
                );
            }
            _ => {
                return raise(
                    ExcType::TypeError,
                    format!("{USAGE}: keywords must be strings"),
                );
            }
        }
    }
    match (title, text) {
        (Some(MontyObject::String(title)), Some(MontyObject::String(text))) => {
            Request::Report { title, text }
        }
        (Some(title), Some(text)) => {
            let wrong = match title {
                MontyObject::String(_) => text,
                other => other,
            };
            raise(
                ExcType::TypeError,
                format!(
                    "{USAGE}: the title and the text must be str, got {}",
                    wrong.type_name()
                ),
            )
        }
        _ => raise(
            ExcType::TypeError,
            format!(
                "{USAGE}: missing the title or the text, e.g. sdk.report(\"Findings\", summary)"
            ),
        ),
    }
}

/// The answer to `sdk.report`: handed to the run's observer, or refused where there is none
/// (a `run_code` call has no report).
pub(crate) fn report(observer: Option<&dyn RunObserver>, title: String, text: String) -> Answer {
    match observer {
        Some(observer) => {
            observer.report(title, text);
            Answer::Return(MontyObject::None)
        }
        None => Answer::Raise(MontyException::new(
            ExcType::AttributeError,
            Some(
                "sdk.report(title, text) is available only in a workflow (workflow_run); \
                 in run_code, print what you want to show"
                    .into(),
            ),
        )),
    }
}

/// The exception a failed tool call raises: `ToolError("CODE: message")`.
pub(crate) fn tool_exception(error: &ToolError) -> MontyException {
    MontyException::new(
        TOOL_ERROR_TYPE,
        Some(format!("{}: {}", error.code, error.message)),
    )
}

/// Reads a tool error's code and message back from its exception message.
pub fn parse_tool_error(message: &str) -> Option<(ErrorCode, &str)> {
    let (code, rest) = message.split_once(": ")?;
    let code: ErrorCode = serde_json::from_value(Value::String(code.to_string())).ok()?;
    Some((code, rest))
}

fn error_info(args: Vec<MontyObject>) -> Answer {
    let value = match args.as_slice() {
        [MontyObject::Exception { exc_type, arg }] if *exc_type == TOOL_ERROR_TYPE => arg
            .as_deref()
            .and_then(parse_tool_error)
            .map_or(MontyObject::None, |(code, message)| {
                let pairs: DictPairs = vec![
                    (
                        MontyObject::String("code".into()),
                        MontyObject::String(code.to_string()),
                    ),
                    (
                        MontyObject::String("message".into()),
                        MontyObject::String(message.to_string()),
                    ),
                ]
                .into_iter()
                .collect();
                MontyObject::Dict(pairs)
            }),
        [MontyObject::Exception { .. }] => MontyObject::None,
        _ => {
            return Answer::Raise(MontyException::new(
                ExcType::TypeError,
                Some("sdk.tool.error(exc) takes one caught exception".into()),
            ));
        }
    };
    Answer::Return(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> MontyObject {
        MontyObject::String(text.into())
    }

    #[test]
    fn a_call_merges_the_args_dict_with_keywords() {
        let dict: DictPairs = vec![(s("a"), MontyObject::Int(1))].into_iter().collect();
        let request = route(
            "call",
            vec![s("echo"), MontyObject::Dict(dict)],
            vec![(s("b"), MontyObject::Bool(true))],
            Some(TOOLS_ID),
        );
        match request {
            Request::Tool {
                name,
                arguments,
                asynchronous,
                ..
            } => {
                assert_eq!(name, "echo");
                assert_eq!(arguments, serde_json::json!({"a": 1, "b": true}));
                assert!(!asynchronous);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn wrong_arguments_and_unknown_functions_are_refused() {
        let bad = route("call", vec![MontyObject::Int(3)], vec![], Some(TOOLS_ID));
        assert!(
            matches!(bad, Request::Answer(Answer::Raise(e)) if e.message().unwrap().contains("name must be a str"))
        );
        let eval = route("eval", vec![s("1")], vec![], None);
        assert!(matches!(eval, Request::Answer(Answer::NotFound)));
    }

    #[test]
    fn sdk_skill_reads_through_the_skill_tool_as_text() {
        let request = route(
            "skill",
            vec![s("mcp-files")],
            vec![(s("file"), s("reference/stubs.pyi"))],
            Some(SDK_ID),
        );
        match request {
            Request::Tool {
                name,
                arguments,
                asynchronous,
                text,
            } => {
                assert_eq!(name, "skill");
                assert_eq!(
                    arguments,
                    serde_json::json!({"name": "mcp-files", "file": "reference/stubs.pyi"})
                );
                assert!(!asynchronous && text);
            }
            other => panic!("{other:?}"),
        }
        let repeated = route(
            "skill",
            vec![s("a")],
            vec![(s("name"), s("b"))],
            Some(SDK_ID),
        );
        assert!(
            matches!(repeated, Request::Answer(Answer::Raise(e)) if e.message().unwrap().contains("unexpected or repeated argument 'name'"))
        );
        let bad_file = route(
            "skill",
            vec![s("a"), MontyObject::Int(1)],
            vec![],
            Some(SDK_ID),
        );
        assert!(
            matches!(bad_file, Request::Answer(Answer::Raise(e)) if e.message().unwrap().contains("file must be a str"))
        );
    }

    #[test]
    fn a_tool_error_message_parses_back_to_its_code() {
        let exc = tool_exception(&ToolError::new(ErrorCode::UnknownTool, "Unknown tool `x`."));
        let (code, message) = parse_tool_error(exc.message().unwrap()).unwrap();
        assert_eq!(code, ErrorCode::UnknownTool);
        assert_eq!(message, "Unknown tool `x`.");
        assert_eq!(parse_tool_error("Internal error: boom"), None);
    }
}
