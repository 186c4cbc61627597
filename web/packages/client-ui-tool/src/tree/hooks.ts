import type { ConversationStore, ConversationTree, ToolNode } from '@qilin-agent/protocol';
import { useCallback, useSyncExternalStore } from 'react';
import type { LoopBook, LoopRow } from '../models/loops';
import type { ToolCallShared, UseLoop } from '../slots';

/** Every call of a tree in order: each root call, then the calls its code made. */
function callsInOrder(tree: ConversationTree): ToolNode[] {
  const out: ToolNode[] = [];
  const visit = (node: ToolNode) => {
    out.push(node);
    node.subCalls.forEach(visit);
  };
  for (const turn of tree.turns) {
    for (const item of turn.items) if (item.type === 'tool') visit(item.node);
  }
  return out;
}

const orderCache = new WeakMap<ConversationTree, ToolNode[]>();

/** The last call of `toolName` before `callId` that ended `ok`, in the tree's order. */
export function previousCall(
  tree: ConversationTree,
  callId: string,
  toolName: string,
): ToolNode | undefined {
  let calls = orderCache.get(tree);
  if (calls === undefined) {
    calls = callsInOrder(tree);
    orderCache.set(tree, calls);
  }
  const at = calls.findIndex((node) => node.callId === callId);
  for (let index = at - 1; index >= 0; index -= 1) {
    const node = calls[index] as ToolNode;
    if (node.toolName === toolName && node.outcome?.status === 'ok') return node;
  }
  return undefined;
}

/**
 * The shared tool hooks over a conversation store, for `<SlotsProvider shared={{ tool }}>`.
 * Create them once per store: a view calls them as hooks.
 */
export function createToolCallHooks(store: ConversationStore): ToolCallShared {
  function useToolCallArgumentsPartial(callId: string): string {
    const subscribe = useCallback(
      (listener: () => void) => store.subscribePreparing(callId, listener),
      [callId],
    );
    const read = useCallback(() => store.preparingArguments(callId) ?? '', [callId]);
    return useSyncExternalStore(subscribe, read, read);
  }
  function usePreviousToolCall(callId: string, toolName: string): ToolNode | undefined {
    const read = useCallback(
      () => previousCall(store.getSnapshot().tree, callId, toolName),
      [callId, toolName],
    );
    return useSyncExternalStore(store.subscribe, read, read);
  }
  return { useToolCallArgumentsPartial, usePreviousToolCall };
}

/**
 * The `useLoop` hook over a session's [`LoopBook`], for the shared tool hooks: a card re-renders
 * only when its own loop changed. Create it once per book: a view calls it as a hook.
 */
export function createLoopHook(book: LoopBook): UseLoop {
  return function useLoop(known: LoopRow) {
    const loopId = known.loopId;
    const subscribe = useCallback(
      (listener: () => void) => book.subscribe(loopId, listener),
      [loopId],
    );
    const read = useCallback(() => book.view(known), [known]);
    return useSyncExternalStore(subscribe, read, read);
  };
}
