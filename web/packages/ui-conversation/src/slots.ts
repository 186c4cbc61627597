import type { TurnItem } from '@qilin-agent/protocol';
import type { RequestState } from './model';

/** The slot each transcript node is dispatched through, keyed by the item's type. */
export const CHAT_NODE_SLOT = 'conversation.chat.node';

/** What a node view gets: the item, and the requests of the calls it holds. */
export interface ChatNodeProps {
  /** The item: a step's text or a root call with its nested calls. */
  readonly item: TurnItem;
  /** The requests of this item's calls (empty for text), in the order opened. */
  readonly requests: readonly RequestState[];
}

declare module '@qilin-agent/slots' {
  interface SlotPropsMap {
    'conversation.chat.node': ChatNodeProps;
  }
}
