import {
  ConversationStore,
  type EndReason,
  type EventPage,
  type Snapshot,
} from '@qilin-agent/protocol';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ServerError } from './api';

/** Whether a session exists: `undefined` when the server cannot say (it is down). */
export async function sessionExists(sessionId: string): Promise<boolean | undefined> {
  try {
    await api.session(sessionId);
    return true;
  } catch (error) {
    if (error instanceof ServerError && error.status === 404) return false;
    return undefined;
  }
}

/** Where the tab's event stream stands. */
export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'ended';

/** How long to wait before reopening a stream the browser gave up on, growing to the cap. */
const RETRY_MS = [250, 500, 1000, 2000, 4000];

/** How often buffered events are folded in: one render per frame, not one per event. */
const FLUSH_MS = 16;

/**
 * Turns read at once, when a session opens and for each earlier page. A turn is the unit the
 * server's snapshot cuts at, so a page holds whole turns: 20 ordinary turns (a prompt, some text,
 * a few calls each) fill several screens, so the reader has scrolled a while before the next page
 * is needed, and they render in a few milliseconds. A long agent run is one turn however many
 * calls it makes (the 5,000-call benchmark session is one turn of them): any page brings it
 * whole, so a smaller page would not open it sooner, and a larger one would only render turns
 * nobody scrolled to.
 */
export const TURNS_PAGE = 20;

/** How the stream reads what a session has stored (the server's API). */
export interface SessionReader {
  /** The runtime's tree of up to `turns` turns: the latest, or the ones before turn `before`. */
  snapshot(sessionId: string, turns: number, before?: number): Promise<Snapshot>;
  /** Up to `limit` of a session's events after `after`. */
  events(sessionId: string, after: number, limit: number): Promise<EventPage>;
}

/**
 * Loads the page of turns before the first one `model` shows; resolves with how many earlier
 * turns remain, rejects with the server's error (or a `TurnPageError` for a page that is not a
 * tree).
 */
export async function loadEarlierTurns(
  reader: SessionReader,
  sessionId: string,
  model: ConversationStore,
): Promise<number> {
  const before = model.getSnapshot().tree.firstTurn;
  if (before === 0) return 0;
  const page = await reader.snapshot(sessionId, TURNS_PAGE, before);
  return model.prepend(page);
}

/**
 * The reason an `end` message's data (a `StreamEnd`) gives: the session was `deleted`, the
 * server is `stopping`, or this tab read too slowly and was cut (`lagging`: nothing was lost,
 * resume at once); `undefined` when it gives none this page knows.
 */
export function endReason(data: unknown): EndReason | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const end: unknown = JSON.parse(data);
    if (typeof end !== 'object' || end === null || !('reason' in end)) return undefined;
    const { reason } = end;
    return reason === 'deleted' || reason === 'stopping' || reason === 'lagging'
      ? reason
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The one event stream of this tab: a session's events from where `model` stands, folded into
 * it a frame at a time. A model that has nothing yet starts from the server's snapshot of the
 * latest turns (the runtime's own fold, up to its `headSeq`; the session's first event read
 * beside it for the facts the snapshot leaves out), and the stream opens after its `headSeq`:
 * a long session renders its last page of turns at once, with no event replayed, and the turns
 * before it load when the reader asks ([`loadEarlierTurns`]). When the snapshot cannot be read,
 * the stream brings the whole history instead. The browser resumes a dropped stream with
 * `Last-Event-ID`; when it gives up, the stream is opened again after the model's last `seq`.
 * The model drops anything it has already seen, so no event shows twice.
 */
export class SessionStream {
  private source: EventSource | undefined;
  private buffer: unknown[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly sessionId: string,
    private readonly model: ConversationStore,
    private readonly onStatus: (status: StreamStatus) => void,
    private readonly exists: (sessionId: string) => Promise<boolean | undefined>,
    private readonly reader?: SessionReader,
    private readonly onEvents?: (events: readonly unknown[]) => void,
  ) {}

  /** Starts from the server's snapshot (unless the model has events), then opens the stream. */
  start(): void {
    void this.connect();
  }

  /** Seeds a model that has nothing from the snapshot, then opens the stream after it. */
  private async connect(): Promise<void> {
    if (this.reader !== undefined && this.model.seq === 0) {
      try {
        const [snapshot, first] = await Promise.all([
          this.reader.snapshot(this.sessionId, TURNS_PAGE),
          // The session's facts are in its first event, which the snapshot leaves out.
          this.reader.events(this.sessionId, 0, 1).then(
            (page) => page.events[0],
            () => undefined,
          ),
        ]);
        if (this.closed) return;
        this.model.seed(snapshot, first);
      } catch {
        // The stream brings the whole history instead.
      }
    }
    this.open();
  }

  /** Opens the stream. */
  open(): void {
    if (this.closed) return;
    this.flush();
    const url = `/api/sessions/${encodeURIComponent(this.sessionId)}/events/stream?after=${this.model.seq}`;
    const source = new EventSource(url, { withCredentials: true });
    this.source = source;
    source.onopen = () => {
      this.failures = 0;
      this.onStatus('live');
    };
    source.onmessage = (message: MessageEvent<string>) => {
      try {
        this.buffer.push(JSON.parse(message.data));
      } catch {
        // Not JSON: nothing this page can fold; the model's `seq` check skips nothing for it.
        return;
      }
      this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
    };
    // The server says why it ends a stream: a deleted session is over, a lagging tab resumes
    // at once after what it has, a stopping server is asked again after a pause.
    source.addEventListener('end', (message) => {
      source.close();
      const reason = endReason((message as MessageEvent<unknown>).data);
      if (reason === 'deleted') {
        this.flush();
        this.onStatus('ended');
      } else if (reason === 'lagging') {
        this.open();
      } else {
        this.retry();
      }
    });
    source.onerror = () => {
      if (this.closed) return;
      this.onStatus('reconnecting');
      // The browser retries by itself (with `Last-Event-ID`) unless the answer was an HTTP
      // error; then this page opens a new stream after what it has.
      if (source.readyState === EventSource.CLOSED) this.retry();
    };
  }

  /** Opens the stream again after a pause, unless the session is gone. */
  private retry(): void {
    this.flush();
    this.onStatus('reconnecting');
    const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)] ?? 4000;
    this.failures += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      void this.exists(this.sessionId).then((found) => {
        if (this.closed) return;
        if (found === false) this.onStatus('ended');
        else if (found === true) void this.connect();
        else this.retry();
      });
    }, delay);
  }

  /** Closes the stream for good. */
  close(): void {
    this.closed = true;
    this.source?.close();
    clearTimeout(this.retryTimer);
    this.flush();
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.model.push(batch);
    this.onEvents?.(batch);
  }
}

/**
 * A session's conversation model, fed by this tab's stream while the component lives, and the
 * loader of its earlier turns; `onEvents` sees each batch of live events as it is folded in
 * (the goal banner reads its events there).
 */
export function useSessionStream(
  sessionId: string,
  onEvents?: (events: readonly unknown[]) => void,
): {
  model: ConversationStore;
  status: StreamStatus;
  loadEarlier: () => Promise<void>;
} {
  const [model] = useState(() => new ConversationStore());
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const listener = useRef(onEvents);
  useEffect(() => {
    listener.current = onEvents;
  }, [onEvents]);
  useEffect(() => {
    const stream = new SessionStream(sessionId, model, setStatus, sessionExists, api, (events) =>
      listener.current?.(events),
    );
    stream.start();
    return () => stream.close();
  }, [sessionId, model]);
  const loadEarlier = useCallback(async () => {
    await loadEarlierTurns(api, sessionId, model);
  }, [sessionId, model]);
  return { model, status, loadEarlier };
}
