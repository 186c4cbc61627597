//! The words of compaction, which every layer that meets a summarising request shares: the
//! agent loop writes them, the scripted model recognises them.

use crate::{Message, ModelRequest};

/// The system prompt of the summarising request.
pub const COMPACT_SYSTEM: &str = "You write hand-off summaries of an agent's working sessions. \
Another agent will carry on the work from your summary alone: it will not see the conversation \
the summary replaces.";

/// The instruction that follows the transcript in the summarising request.
pub const COMPACT_INSTRUCTION: &str = "Summarise the conversation above so the work can go on \
from your summary alone. Use these Markdown sections:

1. **Goal**: what the user wants, with every constraint and preference they stated (in their \
words where the wording matters).
2. **Done**: what was done, the decisions taken and why, what was tried and did not work.
3. **Files**: each file read, created or changed, and what changed in it.
4. **State**: what still matters from commands and tools (failing tests, errors, ids, paths, \
values the work depends on).
5. **Next**: what remains to do, in order, and any question still open for the user.

Be specific and short; leave out what no longer matters. Answer with the summary only.";

/// What the model receives in place of the messages a compaction replaced, before the
/// summary itself.
pub const SUMMARY_PREFIX: &str = "The conversation before this point was summarised to \
free context. The summary below replaces it; carry on from it.";

/// Whether `request` asks for a summary of a conversation (the request compaction sends).
pub fn is_summary_request(request: &ModelRequest) -> bool {
    request.tools.is_empty() && request.system == COMPACT_SYSTEM
}

/// Whether `messages` start from a compaction's summary.
pub fn starts_from_summary(messages: &[Message]) -> bool {
    matches!(messages.first(), Some(Message::User { text }) if text.starts_with(SUMMARY_PREFIX))
}
