import { previousCall, type ToolCallShared } from '@qilin-agent/client-ui-tool';
import { useCallback, useSyncExternalStore } from 'react';
import type { ConversationModel } from './model';

/**
 * The tool views' shared hooks over a conversation model, for
 * `<SlotsProvider shared={{ tool: conversationHooks(model) }}>`: create them once per model.
 */
export function conversationHooks(model: ConversationModel): ToolCallShared {
  function useToolCallArgumentsPartial(callId: string): string {
    const subscribe = useCallback(
      (listener: () => void) => model.subscribePreparing(callId, listener),
      [callId],
    );
    const read = useCallback(() => model.preparingArguments(callId) ?? '', [callId]);
    return useSyncExternalStore(subscribe, read, read);
  }
  function usePreviousToolCall(callId: string, toolName: string) {
    const read = useCallback(
      () => previousCall(model.getSnapshot().tree, callId, toolName),
      [callId, toolName],
    );
    return useSyncExternalStore(model.subscribe, read, read);
  }
  return { useToolCallArgumentsPartial, usePreviousToolCall };
}
