//! `question`: ask the user, through the host's [`Answerer`], and wait for the answers.

use futures_util::future::BoxFuture;
pub use qilin_protocol::{Answer, Question};
use qilin_protocol::{CallPresentation, ContentBlock, Detail, ErrorCode};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::Arc;

/// Ask the user questions and wait for the answers.
///
/// Questions are free text, or choices among options (one, or several with
/// `multi_select`). Each answer comes back paired with its question's id.
#[derive(qilin_tool::Tool)]
#[tool(name = "question")]
pub struct AskQuestion;

/// Arguments of `question`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionArgs {
    /// The questions, asked in this order.
    pub questions: Vec<Question>,
}

/// A question paired with its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AnsweredQuestion {
    /// The question's id.
    pub id: String,
    /// The question asked.
    pub question: String,
    /// The answer: the text typed, or the option(s) picked.
    pub answer: Vec<String>,
}

/// The answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QuestionOutput {
    /// Every question with its answer, in the order asked.
    pub answers: Vec<AnsweredQuestion>,
}

/// Why the host returned no answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The user dismissed the questions.
    #[error("the user dismissed the questions without answering")]
    Cancelled,
    /// The host could not ask (e.g. no terminal).
    #[error("the questions could not be asked: {0}")]
    Unavailable(String),
}

/// Asks the user on behalf of the `question` tool: the host implements it (the CLI on its
/// terminal, the server through its client).
pub trait Answerer: Send + Sync {
    /// Asks `questions` and resolves with one answer per question.
    fn answer<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> BoxFuture<'a, Result<Vec<Answer>, AnswerError>>;
}

/// The host service that holds the [`Answerer`]. Without it, `question` fails saying that
/// nobody can answer.
#[derive(Clone)]
pub struct QuestionAnswerer(pub Arc<dyn Answerer>);

fn check(questions: &[Question]) -> ToolResult<()> {
    if questions.is_empty() {
        return Err(ToolError::invalid_arguments(
            "`questions` is empty; ask at least one question",
        ));
    }
    let mut seen = HashSet::new();
    for (index, q) in questions.iter().enumerate() {
        if q.id.trim().is_empty() || q.question.trim().is_empty() {
            return Err(ToolError::invalid_arguments(format!(
                "`questions.{index}` needs a non-empty `id` and `question`"
            )));
        }
        if !seen.insert(q.id.as_str()) {
            return Err(ToolError::invalid_arguments(format!(
                "`questions.{index}.id` `{}` is used twice; ids must be unique",
                q.id
            )));
        }
        match &q.options {
            Some(options) if options.is_empty() => {
                return Err(ToolError::invalid_arguments(format!(
                    "`questions.{index}.options` is empty; leave it out for a free-text answer"
                )));
            }
            None if q.multi_select == Some(true) => {
                return Err(ToolError::invalid_arguments(format!(
                    "`questions.{index}.multi_select` needs `options` to pick from"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

fn listed(questions: &[Question]) -> String {
    questions
        .iter()
        .map(|q| format!("- {}: {}", q.id, q.question))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pairs each question with its answer, refusing answers that do not fit the questions.
fn pair(questions: &[Question], answers: Vec<Answer>) -> ToolResult<QuestionOutput> {
    let mut paired = Vec::with_capacity(questions.len());
    for q in questions {
        let answer = answers.iter().find(|a| a.id == q.id).ok_or_else(|| {
            ToolError::failed(format!(
                "the host returned no answer to question `{}`; no answer was invented",
                q.id
            ))
        })?;
        if let Some(options) = &q.options {
            let single = q.multi_select != Some(true);
            let unknown = answer.answer.iter().find(|a| !options.contains(a));
            if (single && answer.answer.len() != 1) || unknown.is_some() {
                return Err(ToolError::failed(format!(
                    "the host's answer to `{}` ({:?}) does not fit its options {:?}",
                    q.id, answer.answer, options
                )));
            }
        }
        paired.push(AnsweredQuestion {
            id: q.id.clone(),
            question: q.question.clone(),
            answer: answer.answer.clone(),
        });
    }
    Ok(QuestionOutput { answers: paired })
}

impl Tool for AskQuestion {
    type Args = QuestionArgs;
    type Output = QuestionOutput;

    fn prompt_hint(&self) -> &str {
        "Use question only when you cannot go on without the user's decision or knowledge \
         (a choice between designs, a missing credential name, an ambiguous request); \
         answer what you can find out yourself by reading the workspace. Ask all you need in \
         one call, each question complete on its own, with `options` when the choices are \
         known. If the call is interrupted the user gave no answer: do not assume one."
    }

    fn present(&self, args: &QuestionArgs) -> CallPresentation {
        let remark = match args.questions.as_slice() {
            [one] => one.question.clone(),
            many => format!("{} questions", many.len()),
        };
        CallPresentation::new("Ask", remark)
    }

    fn before_detail(&self, args: &QuestionArgs) -> Option<Detail> {
        Some(Detail::Markdown {
            markdown: listed(&args.questions),
        })
    }

    fn detail(&self, args: &QuestionArgs, result: &ToolResult<QuestionOutput>) -> Option<Detail> {
        match result {
            Ok(out) => Some(Detail::Markdown {
                markdown: out
                    .answers
                    .iter()
                    .map(|a| format!("- {}: {}", a.question, a.answer.join(", ")))
                    .collect::<Vec<_>>()
                    .join("\n"),
            }),
            Err(_) => self.before_detail(args),
        }
    }

    async fn call(&self, args: QuestionArgs, cx: &ToolContext) -> ToolResult<QuestionOutput> {
        check(&args.questions)?;
        let answerer = cx.service::<QuestionAnswerer>().ok_or_else(|| {
            ToolError::failed(
                "nobody can answer questions in this runtime (it has no answerer, e.g. it is \
                 not interactive); decide yourself and say what you assumed",
            )
        })?;
        let interrupted = || {
            ToolError::new(
                ErrorCode::Interrupted,
                format!(
                    "The user did not answer; no answer was given to:\n{}",
                    listed(&args.questions)
                ),
            )
        };
        let answers = tokio::select! {
            biased;
            () = cx.cancellation().cancelled() => return Err(interrupted()),
            answers = answerer.0.answer(&args.questions) => answers,
        };
        match answers {
            Ok(answers) => pair(&args.questions, answers),
            Err(AnswerError::Cancelled) => Err(interrupted()),
            Err(err @ AnswerError::Unavailable(_)) => Err(ToolError::failed(format!(
                "{err}; decide yourself and say what you assumed"
            ))),
        }
    }

    fn content(&self, output: &QuestionOutput) -> Vec<ContentBlock> {
        let text = output
            .answers
            .iter()
            .map(|a| format!("{} ({}): {}", a.question, a.id, a.answer.join(", ")))
            .collect::<Vec<_>>()
            .join("\n");
        vec![ContentBlock::text(text)]
    }
}
