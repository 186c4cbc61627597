import { ConversationModel } from '@qilin-agent/ui-conversation';
import { useEffect, useState } from 'react';
import { api, ServerError } from './api';

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

/**
 * The one event stream of this tab: a session's events from where `model` stands, folded into
 * it a frame at a time. The browser resumes a dropped stream with `Last-Event-ID`; when it
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
  ) {}

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
    // The server ends a stream when the session is deleted or when it stops: ask which.
    source.addEventListener('end', () => {
      source.close();
      this.retry();
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
    const stream = new SessionStream(sessionId, model, setStatus, sessionExists);
    stream.open();
    return () => stream.close();
  }, [sessionId, model]);
  return { model, status };
}
