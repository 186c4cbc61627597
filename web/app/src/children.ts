import {
  createToolCallHooks,
  type ChildFeedStatus,
  type ChildSessionFeed,
} from '@qilin-agent/client-ui-tool';
import { ConversationStore } from '@qilin-agent/protocol';
import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { api } from './api';
import { SessionStream, sessionExists, type SessionReader } from './stream';

const noSubscription = () => () => {};
const nothing = () => undefined;

/**
 * The child feed of the `agent` cards (`useChildSession` in the shared tool hooks): a child
 * session followed exactly as the open session is — the server's snapshot of its latest turns,
 * then its event stream from there ([`SessionStream`]) — while a card shows its calls. Given
 * `undefined` it follows nothing; a new id or the card's unmount closes the stream, so the page
 * holds one stream per child shown. `reader` is the server's API unless a test gives another.
 */
export function useChildSession(
  sessionId: string | undefined,
  reader: SessionReader = api,
): ChildSessionFeed | undefined {
  // One store per child followed; a new one when the card follows another child.
  const model = useMemo(
    () => (sessionId === undefined ? undefined : new ConversationStore()),
    [sessionId],
  );
  const [status, setStatus] = useState<{ model: ConversationStore; status: ChildFeedStatus }>();
  useEffect(() => {
    if (sessionId === undefined || model === undefined) return;
    const stream = new SessionStream(
      sessionId,
      model,
      (next) => setStatus({ model, status: next }),
      sessionExists,
      reader,
    );
    stream.start();
    return () => stream.close();
  }, [sessionId, model, reader]);
  const snapshot = useSyncExternalStore(
    model?.subscribe ?? noSubscription,
    model === undefined ? nothing : model.getSnapshot,
  );
  const hooks = useMemo(
    () => (model === undefined ? undefined : createToolCallHooks(model)),
    [model],
  );
  const now = status?.model === model ? status?.status : undefined;
  return useMemo(
    () =>
      snapshot === undefined || hooks === undefined
        ? undefined
        : { status: now ?? 'connecting', tree: snapshot.tree, hooks },
    [snapshot, hooks, now],
  );
}
