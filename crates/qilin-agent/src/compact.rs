//! Compaction: the model summarises the conversation so far, and the summary stands in for it.
//!
//! The summarising request carries the whole history as one transcript in a user message,
//! under an instruction, with no tools: every provider accepts it (a request holding tool
//! calls but no tools list is refused by some), and the long output of old calls is cut to
//! its head and tail so a history near the context window still fits. The summary is
//! recorded as `context.compacted`; the history fold then restarts from it, so a resumed
//! session rebuilds the same messages.

use crate::Agent;
use futures_util::StreamExt;
use qilin_model::{
    COMPACT_INSTRUCTION, COMPACT_SYSTEM, Message, ModelEvent, ModelRequest, SUMMARY_PREFIX,
    StopReason, ToolCallResult,
};
use qilin_protocol::{ContentBlock, ContextCompactedEvent, EventBody, Usage};
use qilin_tool::DirectDefinition;
use std::collections::HashMap;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// The most characters of one call's result the transcript keeps (its head and tail).
const MAX_RESULT_CHARS: usize = 2_000;

/// The most characters of one call's arguments the transcript keeps (their head).
const MAX_ARGUMENT_CHARS: usize = 1_000;

/// Why a conversation was not compacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// No turn ran since the session began or since its last compaction.
    #[error(
        "there is nothing to compact: no turn has run since the session began or since its last compaction"
    )]
    NothingToCompact,
    /// The compaction was interrupted before the model finished its summary.
    #[error("the compaction was interrupted; the conversation is unchanged")]
    Interrupted,
    /// The model failed, or gave no usable summary.
    #[error("the model gave no summary ({0}); the conversation is unchanged")]
    Model(String),
}

/// The message that stands for the conversation a compaction replaced.
pub(crate) fn summary_message(summary: &str) -> Message {
    Message::user(format!("{SUMMARY_PREFIX}\n\n{summary}"))
}

/// The size of a request, estimated at four bytes a token (the system prompt, the tools list
/// and the messages as JSON).
pub fn estimate_tokens(system: &str, tools: &[DirectDefinition], messages: &[Message]) -> u64 {
    let bytes = system.len()
        + serde_json::to_string(tools).map_or(0, |json| json.len())
        + serde_json::to_string(messages).map_or(0, |json| json.len());
    (bytes as u64).div_ceil(4)
}

/// The history as a transcript the model reads: each message under a heading naming who
/// spoke, calls with their arguments, results with their output (long ones cut to their head
/// and tail, images named but not sent).
pub fn transcript(messages: &[Message]) -> String {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out = String::new();
    for message in messages {
        match message {
            Message::User { text } => {
                out.push_str("## User\n\n");
                out.push_str(text.trim_end());
                out.push_str("\n\n");
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                out.push_str("## Agent\n\n");
                if !text.trim().is_empty() {
                    out.push_str(text.trim_end());
                    out.push_str("\n\n");
                }
                for call in tool_calls {
                    names.insert(&call.id, &call.name);
                    out.push_str(&format!(
                        "Called `{}` with {}\n\n",
                        call.name,
                        head(call.arguments.trim(), MAX_ARGUMENT_CHARS)
                    ));
                }
            }
            Message::ToolResults { results } => {
                for result in results {
                    let name = names
                        .get(result.call_id.as_str())
                        .copied()
                        .unwrap_or("a tool");
                    out.push_str(&format!(
                        "## Result of `{name}`{}\n\n{}\n\n",
                        if result.is_error { " (failed)" } else { "" },
                        result_text(result)
                    ));
                }
            }
        }
    }
    out
}

fn result_text(result: &ToolCallResult) -> String {
    let text: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.trim_end().to_string(),
            ContentBlock::Image { media_type, .. } => format!("[an image, {media_type}]"),
            ContentBlock::Json { value } => value.to_string(),
        })
        .collect();
    head_and_tail(&text.join("\n"), MAX_RESULT_CHARS)
}

/// The first `max` characters of `text`, saying how many were left out.
fn head(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}… [{} more characters]",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

/// `text` cut to about `max` characters: three quarters from its head, a quarter from its
/// tail, with how many were left out between them.
fn head_and_tail(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let keep_head = max * 3 / 4;
    let keep_tail = max - keep_head;
    let head_end = text
        .char_indices()
        .nth(keep_head)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - keep_tail)
        .map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n[… {} characters left out …]\n{}",
        &text[..head_end],
        total - keep_head - keep_tail,
        &text[tail_start..]
    )
}

impl Agent {
    /// Asks the model for a summary of the conversation so far and records it as
    /// `context.compacted`: from then on the model receives the system prompt, the summary,
    /// then what follows. Call it between turns (the session handle makes sure); refused when
    /// no turn ran since the last compaction. Cancelling `cancel` stops it, changing nothing.
    pub async fn compact(
        &self,
        cancel: CancellationToken,
    ) -> Result<ContextCompactedEvent, CompactionError> {
        let span = tracing::info_span!("compact", session = %self.executor().session().id());
        self.summarise(cancel).instrument(span).await
    }

    async fn summarise(
        &self,
        cancel: CancellationToken,
    ) -> Result<ContextCompactedEvent, CompactionError> {
        let (messages, replaces_through_seq) = {
            let mut history = self.lock_history();
            let fold = history.catch_up();
            if fold.turns_since_compaction() == 0 || fold.messages().is_empty() {
                return Err(CompactionError::NothingToCompact);
            }
            let head = self.executor().session().events().head();
            (fold.messages().to_vec(), head)
        };
        let prompt = self.prompt();
        let request = ModelRequest {
            model: self.settings.model.clone(),
            system: COMPACT_SYSTEM.to_string(),
            tools: Vec::new(),
            messages: vec![Message::user(format!(
                "<conversation>\n\n{}</conversation>\n\n{COMPACT_INSTRUCTION}",
                transcript(&messages)
            ))],
            max_tokens: self.settings.max_tokens,
            reasoning: self.settings.reasoning,
        };
        let mut stream = self.provider.stream(request);
        let mut summary = String::new();
        let mut usage = Usage::default();
        let stop = loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(CompactionError::Interrupted),
                next = stream.next() => next,
            };
            match next {
                Some(Ok(ModelEvent::TextDelta(delta))) => summary.push_str(&delta),
                Some(Ok(ModelEvent::Usage(reported))) => usage = reported,
                Some(Ok(ModelEvent::Finished { stop_reason })) => break stop_reason,
                // No tools were offered; reasoning is not part of the summary.
                Some(Ok(_)) => {}
                Some(Err(err)) => return Err(CompactionError::Model(format!("it failed: {err}"))),
                None => {
                    return Err(CompactionError::Model(
                        "its answer ended without finishing".to_string(),
                    ));
                }
            }
        };
        match stop {
            StopReason::MaxTokens => {
                return Err(CompactionError::Model(
                    "the summary reached the model's token limit and was cut".to_string(),
                ));
            }
            StopReason::Refusal | StopReason::ContentFilter => {
                return Err(CompactionError::Model("it refused".to_string()));
            }
            StopReason::EndTurn | StopReason::ToolUse | StopReason::Other(_) => {}
        }
        let summary = summary.trim().to_string();
        if summary.is_empty() {
            return Err(CompactionError::Model("its answer was empty".to_string()));
        }
        let compacted = ContextCompactedEvent {
            estimated_tokens_before: estimate_tokens(&prompt.system, &prompt.tools, &messages),
            estimated_tokens_after: estimate_tokens(
                &prompt.system,
                &prompt.tools,
                &[summary_message(&summary)],
            ),
            summary,
            replaces_through_seq,
            usage,
        };
        self.emit(EventBody::ContextCompacted(compacted.clone()));
        Ok(compacted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_model::AssistantToolCall;

    #[test]
    fn the_transcript_names_calls_and_cuts_long_results_to_head_and_tail() {
        let long = format!("{}{}", "a".repeat(3_000), "z".repeat(10));
        let messages = vec![
            Message::user("Fix the typo."),
            Message::assistant(
                "Reading.",
                vec![AssistantToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: r#"{"path":"a.txt"}"#.into(),
                }],
            ),
            Message::tool_results(vec![ToolCallResult {
                call_id: "c1".into(),
                content: vec![ContentBlock::text(long)],
                is_error: false,
            }]),
        ];
        let text = transcript(&messages);
        assert!(text.contains("## User\n\nFix the typo."), "{text}");
        assert!(
            text.contains(r#"Called `read` with {"path":"a.txt"}"#),
            "{text}"
        );
        assert!(text.contains("## Result of `read`"), "{text}");
        assert!(text.contains("[… 1010 characters left out …]"), "{text}");
        assert!(text.ends_with("zzzzzzzzzz\n\n"), "{text}");
        assert!(text.len() < 2_300, "{}", text.len());
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let text = "é".repeat(30);
        assert_eq!(
            head(&text, 5),
            format!("{}… [25 more characters]", "é".repeat(5))
        );
        let cut = head_and_tail(&text, 8);
        assert!(
            cut.starts_with("éééééé\n[… 22 characters left out …]\néé"),
            "{cut}"
        );
    }
}
