/**
 * Qilin's wire protocol for the browser: the event, conversation tree and HTTP API types
 * generated from the `qilin-protocol` crate (`generated.ts`, written by its test), a tolerant reader of event logs, the conversation tree fold (the runtime's own rules)
 * a store that publishes it to views, and the runtime's spill notice (`./notice`).
 */
export type * from './generated';
export { LIVE_HEAD_BYTES, LIVE_TAIL_BYTES, MAX_CHECK_ANNOTATIONS } from './generated';
export { requestOrigin, type RequestOrigin } from './origin';
export { formatSpillNotice, hasSpillNotice, parseSpillNotice, type SpillNotice } from './notice';
export {
  KNOWN_EVENT_TYPES,
  describe,
  readEvent,
  readEventLog,
  type EventLog,
  type EventProblem,
  type EventReading,
  type KnownEventType,
} from './events';
export {
  ConversationFold,
  TurnPageError,
  foldEvents,
  utf8Length,
  type ConversationTree,
  type FoldChange,
  type TreeSeed,
  type TurnPage,
} from './tree';
export {
  ConversationStore,
  type ConversationSnapshot,
  type SessionFacts,
  type SkippedEvent,
} from './store';
