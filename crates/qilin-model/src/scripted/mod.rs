//! The scripted model: answers from a YAML script, offline. The format is in `SCRIPTED.md`.

mod script;

pub use script::{Script, ScriptError, ScriptTurn, ScriptedCall};

use crate::provider::ModelStream;
use crate::{ModelEvent, ModelProvider, ModelRequest, Reasoning, StopReason};
use futures_util::StreamExt;
use qilin_protocol::Usage;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the scripted model says once its turns have run out.
pub const SCRIPT_EXHAUSTED: &str = "(the script has no more turns)";

/// The most bytes of text or argument text in one streamed delta.
pub const CHUNK_BYTES: usize = 12;

/// A model that answers each request with the script's next turn: the turn after the answers
/// the request's conversation already holds (for a compaction's summary request, the turn
/// after the last one played; for a conversation starting from a summary, its answers
/// counted from the turn after the summary's).
///
/// Text and arguments stream in deltas of at most [`CHUNK_BYTES`] bytes, with the script's
/// `chunk_delay_ms` before each event. Once the turns have run out every answer is
/// [`SCRIPT_EXHAUSTED`]. Usage is an estimate: a token per 4 bytes of the request (as JSON)
/// and of the answer.
#[derive(Debug)]
pub struct ScriptedProvider {
    script: Script,
    next_turn: AtomicUsize,
    /// One past the last turn played.
    played: AtomicUsize,
    /// The turn after the one that wrote the latest summary.
    after_summary: AtomicUsize,
}

impl ScriptedProvider {
    /// A provider playing `script` from its first turn.
    pub fn new(script: Script) -> Self {
        ScriptedProvider {
            script,
            next_turn: AtomicUsize::new(0),
            played: AtomicUsize::new(0),
            after_summary: AtomicUsize::new(0),
        }
    }

    /// A provider playing the script at `path`.
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        Script::load(path).map(Self::new)
    }

    /// How many requests have been answered (turns taken, the exhausted answers included).
    pub fn requests_answered(&self) -> usize {
        self.next_turn.load(Ordering::SeqCst)
    }

    fn events(&self, request: &ModelRequest) -> Vec<ModelEvent> {
        self.next_turn.fetch_add(1, Ordering::SeqCst);
        // The turn to play is the number of answers the conversation already holds, so a
        // session resumed in a new process (with a new provider) goes on where it stopped. A
        // compacted conversation no longer holds its earlier answers: a summary request takes
        // the turn after the last one played, and a conversation starting from the summary
        // counts its answers from the turn after that.
        let answers = request
            .messages
            .iter()
            .filter(|message| matches!(message, crate::Message::Assistant { .. }))
            .count();
        let index = if crate::is_summary_request(request) {
            let index = self.played.load(Ordering::SeqCst);
            self.after_summary.store(index + 1, Ordering::SeqCst);
            index
        } else if crate::starts_from_summary(&request.messages) {
            self.after_summary.load(Ordering::SeqCst) + answers
        } else {
            answers
        };
        self.played.store(index + 1, Ordering::SeqCst);
        let exhausted = ScriptTurn {
            think: String::new(),
            say: SCRIPT_EXHAUSTED.to_owned(),
            calls: Vec::new(),
            stop: None,
        };
        let turn = self.script.turns().get(index).unwrap_or(&exhausted);
        let mut events: Vec<ModelEvent> = chunks(&turn.think)
            .map(|piece| ModelEvent::ReasoningDelta(piece.to_owned()))
            .collect();
        if !turn.think.is_empty() {
            events.push(ModelEvent::ReasoningBlock(Reasoning::Text {
                text: turn.think.clone(),
                signature: None,
            }));
        }
        events.extend(chunks(&turn.say).map(|piece| ModelEvent::TextDelta(piece.to_owned())));
        let mut output_bytes = turn.think.len() + turn.say.len();
        for call in &turn.calls {
            output_bytes += call.tool.len() + call.arguments.len();
            events.push(ModelEvent::ToolCallStart {
                id: call.id.clone(),
                name: call.tool.clone(),
            });
            events.extend(
                chunks(&call.arguments).map(|piece| ModelEvent::ToolCallDelta {
                    id: call.id.clone(),
                    arguments_delta: piece.to_owned(),
                }),
            );
            events.push(ModelEvent::ToolCallEnd {
                id: call.id.clone(),
            });
        }
        events.push(ModelEvent::Usage(Usage {
            input_tokens: estimate_tokens(json_len(request)),
            output_tokens: estimate_tokens(output_bytes),
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        }));
        let stop_reason = match &turn.stop {
            Some(stop) => stop.clone(),
            None if turn.calls.is_empty() => StopReason::EndTurn,
            None => StopReason::ToolUse,
        };
        events.push(ModelEvent::Finished { stop_reason });
        events
    }
}

impl ModelProvider for ScriptedProvider {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let events = futures_util::stream::iter(self.events(&request).into_iter().map(Ok));
        let delay = self.script.chunk_delay();
        if delay.is_zero() {
            events.boxed()
        } else {
            events
                .then(move |event| async move {
                    tokio::time::sleep(delay).await;
                    event
                })
                .boxed()
        }
    }
}

/// `text` in pieces of at most [`CHUNK_BYTES`] bytes, cut on character boundaries (a
/// character longer than the limit is a piece of its own).
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = CHUNK_BYTES.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end == 0 {
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// The length of `request` written as JSON, counted without building the text.
fn json_len(request: &ModelRequest) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, request) {
        Ok(()) => counter.0,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_on_character_boundaries() {
        let text = "héllo wörld, ça va? 日本語のテキスト";
        let pieces: Vec<&str> = chunks(text).collect();
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|piece| piece.len() <= CHUNK_BYTES));
        assert!(pieces.len() > 3);
        assert_eq!(chunks("").count(), 0);
    }
}
