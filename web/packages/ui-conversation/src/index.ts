/**
 * Qilin's conversation: a session's transcript folded from its events — prompts, the model's
 * text as safe Markdown, every call tree through `@qilin-agent/client-ui-tool`'s
 * `ToolCallTree` (items dispatched through the keyed slot `conversation.chat.node`), pending
 * requests answered in place, and how each turn ended with its token usage.
 */
import './slots';

export {
  Conversation,
  registerConversationNodes,
  type ConversationHost,
  type ConversationProps,
} from './Conversation';
export { CompactionDivider, compactionsAfter } from './Compaction';
export { MarkdownText } from '@qilin-agent/ui-primitives';
export { CallTrajectory, type CallTrajectoryProps } from './Trajectory';
export { findCall, rawText, type CallPlace } from './callPlace';
export { RequestCard, type AnswerRequest } from './Request';
export { REVEALED_CLASS, revealedElement, type RevealTarget } from './reveal';
export { CHAT_NODE_SLOT, type ChatNodeProps } from './slots';
