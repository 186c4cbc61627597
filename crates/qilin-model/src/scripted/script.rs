//! The scripted model's YAML format (documented in `SCRIPTED.md`).

use crate::StopReason;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A loaded script: the answers the scripted model gives, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    turns: Vec<ScriptTurn>,
    chunk_delay: Duration,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptTurn {
    /// The reasoning streamed before the answer; empty for none.
    pub think: String,
    /// The answer's text; empty for none.
    pub say: String,
    /// The calls the answer makes, in order.
    pub calls: Vec<ScriptedCall>,
    /// The stop reason the answer ends with; `tool_use` for a turn with calls, `end_turn`
    /// otherwise, when `None`.
    pub stop: Option<StopReason>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    /// The call id: `call_1`, `call_2`, ... numbered across the whole script.
    pub id: String,
    /// The tool's wire name.
    pub tool: String,
    /// The argument text the model streams (compact JSON for `args`, verbatim for `raw`).
    pub arguments: String,
}

/// A script that could not be loaded, with the place that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScriptError {
    /// The script's file.
    pub file: PathBuf,
    /// The line (1-based) when known.
    pub line: Option<usize>,
    /// The column (1-based) when known.
    pub column: Option<usize>,
    /// What is wrong and what is expected.
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(default)]
    chunk_delay_ms: u64,
    turns: Vec<TurnFile>,
}

struct TurnFile {
    think: String,
    say: String,
    calls: Vec<CallFile>,
    stop: Option<StopReason>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTurn {
    think: Option<String>,
    say: Option<String>,
    calls: Option<Vec<CallFile>>,
    stop: Option<String>,
}

/// The stop reasons a turn may name.
const STOP_REASONS: [&str; 5] = [
    "end_turn",
    "tool_use",
    "max_tokens",
    "refusal",
    "content_filter",
];

impl Checked for TurnFile {
    type Raw = RawTurn;
    const EXPECTING: &str = "a turn: a mapping with `say`, `calls` or both";

    fn check(raw: RawTurn) -> Result<Self, String> {
        if raw.say.is_none() && raw.calls.is_none() {
            return Err("a turn needs `say` (text), `calls` (a list of calls) or both".into());
        }
        let stop = match raw.stop {
            None => None,
            Some(name) if STOP_REASONS.contains(&name.as_str()) => Some(StopReason::from(name)),
            Some(name) => {
                return Err(format!(
                    "`stop: {name}` is not a stop reason; write one of {}",
                    STOP_REASONS.join(", ")
                ));
            }
        };
        Ok(TurnFile {
            think: raw.think.unwrap_or_default(),
            say: raw.say.unwrap_or_default(),
            calls: raw.calls.unwrap_or_default(),
            stop,
        })
    }
}

struct CallFile {
    tool: String,
    arguments: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    tool: String,
    args: Option<serde_yaml_ng::Value>,
    raw: Option<String>,
}

impl Checked for CallFile {
    type Raw = RawCall;
    const EXPECTING: &str = "a call: a mapping with `tool` and `args` or `raw`";

    fn check(raw: RawCall) -> Result<Self, String> {
        if raw.tool.trim().is_empty() {
            return Err("`tool` must name a tool, e.g. `tool: read`".into());
        }
        let arguments = match (raw.args, raw.raw) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "call of `{}`: give `args` (a mapping) or `raw` (argument text), not both",
                    raw.tool
                ));
            }
            (None, Some(text)) => text,
            (None, None) => "{}".to_owned(),
            (Some(args), None) => {
                if !args.is_mapping() {
                    return Err(format!(
                        "call of `{}`: `args` must be a mapping of argument names to values \
                         (use `raw` for any other argument text)",
                        raw.tool
                    ));
                }
                serde_json::to_string(&args).map_err(|err| {
                    format!(
                        "call of `{}`: `args` cannot be written as JSON ({err}); argument \
                         names must be strings",
                        raw.tool
                    )
                })?
            }
        };
        Ok(CallFile {
            tool: raw.tool,
            arguments,
        })
    }
}

/// A mapping read into `Raw`, then checked. The check runs while the parser is still inside
/// the mapping, so its error carries the mapping's line and path.
trait Checked: Sized {
    /// The mapping as written.
    type Raw: DeserializeOwned;
    /// What the mapping should be, for type errors.
    const EXPECTING: &str;
    /// The checked value, or what is wrong.
    fn check(raw: Self::Raw) -> Result<Self, String>;
}

struct CheckedVisitor<T>(PhantomData<T>);

impl<'de, T: Checked> Visitor<'de> for CheckedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        let raw = T::Raw::deserialize(MapAccessDeserializer::new(map))?;
        T::check(raw).map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for TurnFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CheckedVisitor(PhantomData))
    }
}

impl<'de> Deserialize<'de> for CallFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CheckedVisitor(PhantomData))
    }
}

impl Script {
    /// Reads and checks the script at `path`.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let source = std::fs::read_to_string(path).map_err(|err| ScriptError {
            file: path.to_owned(),
            line: None,
            column: None,
            message: format!("cannot read the script: {err}"),
        })?;
        Script::parse(&source, path)
    }

    /// Parses a script's text; `file` names it in errors.
    pub fn parse(source: &str, file: &Path) -> Result<Script, ScriptError> {
        let parsed: ScriptFile = serde_yaml_ng::from_str(source).map_err(|err| {
            let location = err.location();
            ScriptError {
                file: file.to_owned(),
                line: location.as_ref().map(|at| at.line()),
                column: location.as_ref().map(|at| at.column()),
                message: without_location(&err.to_string()),
            }
        })?;
        let mut next_id = 0;
        let turns = parsed
            .turns
            .into_iter()
            .map(|turn| ScriptTurn {
                think: turn.think,
                say: turn.say,
                stop: turn.stop,
                calls: turn
                    .calls
                    .into_iter()
                    .map(|call| {
                        next_id += 1;
                        ScriptedCall {
                            id: format!("call_{next_id}"),
                            tool: call.tool,
                            arguments: call.arguments,
                        }
                    })
                    .collect(),
            })
            .collect();
        Ok(Script {
            turns,
            chunk_delay: Duration::from_millis(parsed.chunk_delay_ms),
        })
    }

    /// The turns, in order.
    pub fn turns(&self) -> &[ScriptTurn] {
        &self.turns
    }

    /// The pause before each streamed event (`chunk_delay_ms`; zero by default).
    pub fn chunk_delay(&self) -> Duration {
        self.chunk_delay
    }

    /// The same script with another pause before each streamed event.
    pub fn with_chunk_delay(mut self, delay: Duration) -> Script {
        self.chunk_delay = delay;
        self
    }
}

/// The parser's message without the ` at line L column C` it appends (the error shows the
/// place as `FILE:LINE:COLUMN` instead).
fn without_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => message[..at].to_owned(),
        _ => message.to_owned(),
    }
}
