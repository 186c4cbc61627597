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

/// Checks that `answers` answer `questions`: one answer for each question, none for a question
/// not asked, each choice among its question's options (exactly one unless `multi_select`).
/// The error says what does not fit, for the person answering.
pub fn check_answers(questions: &[Question], answers: &[Answer]) -> Result<(), String> {
    if let Some(stray) = answers
        .iter()
        .find(|answer| !questions.iter().any(|q| q.id == answer.id))
    {
        return Err(format!("no question has the id `{}`", stray.id));
    }
    for question in questions {
        let mut given = answers.iter().filter(|answer| answer.id == question.id);
        let (Some(answer), None) = (given.next(), given.next()) else {
            return Err(format!(
                "question `{}` needs exactly one answer",
                question.id
            ));
        };
        if let Some(options) = &question.options {
            let single = question.multi_select != Some(true);
            if single && answer.answer.len() != 1 {
                return Err(format!(
                    "question `{}` takes exactly one of its options",
                    question.id
                ));
            }
            if let Some(unknown) = answer.answer.iter().find(|a| !options.contains(a)) {
                return Err(format!(
                    "`{unknown}` is not an option of question `{}` (options: {})",
                    question.id,
                    options.join(", ")
                ));
            }
        }
    }
    Ok(())
}
