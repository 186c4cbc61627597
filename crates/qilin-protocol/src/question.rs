use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One question for the user.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// A short id, unique within the call, that the answer is paired with.
    pub id: String,
    /// The question as the user reads it; complete on its own.
    pub question: String,
    /// Choices to offer; absent for a free-text answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub options: Option<Vec<String>>,
    /// With `options`: let the user pick several (default false: exactly one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub multi_select: Option<bool>,
}

/// A person's answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The id of the question answered.
    pub id: String,
    /// The answer: the text typed, or the option(s) picked (several only with
    /// `multi_select`).
    pub answer: Vec<String>,
}
