import { ConversationModel } from '@qilin-agent/ui-conversation';
import { useEffect, useState } from 'react';
import { api, ServerError, type EventPage } from './api';

/** Whether a session exists: `undefined` when the server cannot say (it is down). */
async function sessionExists(sessionId: string): Promise<boolean | undefined> {
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

/** Events read at once while catching up with a session's history (the server's most). */
const HISTORY_PAGE = 1000;

/** History pages read at the same time. */
const HISTORY_PARALLEL = 4;

/** Whether `page` holds the events right after `after`, with no gap. */
function followsOn(page: EventPage, after: number): boolean {
  return page.events.every(
    (event, index) =>
      typeof event === 'object' &&
      event !== null &&
      (event as { seq?: unknown }).seq === after + index + 1,
  );
}

/** Reads a page of a session's events. */
export type ReadEvents = (sessionId: string, after: number, limit: number) => Promise<EventPage>;

/**
 * Why the server ended a stream, the `reason` of its `end` message (`StreamEnd` in the
 * OpenAPI document): the session was `deleted`, the server is `stopping`, or this tab read too
 * slowly and was cut (`lagging`: nothing was lost, resume at once).
 */
export type StreamEndReason = 'deleted' | 'stopping' | 'lagging';

/** The reason an `end` message's data gives; `undefined` when it gives none this page knows. */
export function endReason(data: unknown): StreamEndReason | undefined {
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
 * it a frame at a time. The history stored before the stream opens is read first, in pages a
 * few at a time, and folded in at once: a long session renders once, not a frame at a time
 * while thousands of stored events stream past. What a failed page did not bring, the stream
 * does. The browser resumes a dropped stream with `Last-Event-ID`; when it
 * gives up, the stream is opened again after the model's last `seq`. The model drops anything
 * it has already seen, so no event shows twice.
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
    private readonly model: ConversationModel,
    private readonly onStatus: (status: StreamStatus) => void,
    private readonly exists: (sessionId: string) => Promise<boolean | undefined>,
    private readonly readEvents?: ReadEvents,
  ) {}

  /** Catches up with the stored history, then opens the stream after it. */
  start(): void {
    if (this.readEvents === undefined) {
      this.open();
      return;
    }
    void this.catchUp(this.readEvents).finally(() => this.open());
  }

  private async catchUp(readEvents: ReadEvents): Promise<void> {
    const from = this.model.seq;
    const history: unknown[] = [];
    try {
      // The first page says where the head is; seqs are gapless, so the pages after it are
      // known ranges, read a few at a time.
      const first = await readEvents(this.sessionId, from, HISTORY_PAGE);
      if (this.closed) return;
      let next = from;
      if (followsOn(first, next)) {
        history.push(...first.events);
        next += first.events.length;
      }
      const starts: number[] = [];
      if (first.more && next === from + HISTORY_PAGE) {
        for (let after = next; after < first.headSeq; after += HISTORY_PAGE) starts.push(after);
      }
      for (let at = 0; at < starts.length; at += HISTORY_PARALLEL) {
        const pages = await Promise.all(
          starts
            .slice(at, at + HISTORY_PARALLEL)
            .map((after) => readEvents(this.sessionId, after, HISTORY_PAGE)),
        );
        if (this.closed) return;
        for (const page of pages) {
          // Only what follows on without a gap: the stream brings the rest.
          if (!followsOn(page, next)) break;
          history.push(...page.events);
          next += page.events.length;
        }
        if (next !== (starts[at + HISTORY_PARALLEL] ?? first.headSeq)) break;
      }
    } catch {
      // The stream brings whatever was not read.
    }
    if (!this.closed) this.model.push(history);
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
        else if (found === true) this.open();
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
  }
}

/** A session's conversation model, fed by this tab's stream while the component lives. */
export function useSessionStream(sessionId: string): {
  model: ConversationModel;
  status: StreamStatus;
} {
  const [model] = useState(() => new ConversationModel());
  const [status, setStatus] = useState<StreamStatus>('connecting');
  useEffect(() => {
    const stream = new SessionStream(sessionId, model, setStatus, sessionExists, api.events);
    stream.start();
    return () => stream.close();
  }, [sessionId, model]);
  return { model, status };
}
