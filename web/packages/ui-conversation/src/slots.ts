import type { TurnItem } from '@qilin-agent/protocol';

/** The slot each transcript node is dispatched through, keyed by the item's type. */
export const CHAT_NODE_SLOT = 'conversation.chat.node';

/** What a node view gets: the item (a call's requests are on its node, `ToolNode.requests`). */
export interface ChatNodeProps {
  /** The item: a step's text or a root call with its nested calls. */
  readonly item: TurnItem;
}

declare module '@qilin-agent/slots' {
  interface SlotPropsMap {
    'conversation.chat.node': ChatNodeProps;
  }
}
