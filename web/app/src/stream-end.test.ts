import { ConversationStore } from '@qilin-agent/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { endReason, SessionStream, type StreamStatus } from './stream';

/** An `EventSource` the test drives: it records the URLs opened and dispatches messages. */
class ScriptedSource extends EventTarget {
  static opened: ScriptedSource[] = [];
  static readonly CLOSED = 2;
  readyState = 0;
  onopen: (() => void) | null = null;
  onmessage: ((message: MessageEvent<string>) => void) | null = null;
  onerror: (() => void) | null = null;

  constructor(readonly url: string) {
    super();
    ScriptedSource.opened.push(this);
  }

  close(): void {
    this.readyState = ScriptedSource.CLOSED;
  }

  /** The server's `end` message with `data`. */
  end(data: string): void {
    this.dispatchEvent(new MessageEvent('end', { data }));
  }
}

describe('SessionStream', () => {
  let statuses: StreamStatus[];
  let exists: ReturnType<typeof vi.fn<(id: string) => Promise<boolean | undefined>>>;
  let stream: SessionStream;

  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal('EventSource', ScriptedSource);
    ScriptedSource.opened = [];
    statuses = [];
    exists = vi.fn<(id: string) => Promise<boolean | undefined>>(() => Promise.resolve(true));
    stream = new SessionStream('s1', new ConversationStore(), (s) => statuses.push(s), exists);
    stream.open();
  });

  afterEach(() => {
    stream.close();
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('ends for good when the session was deleted, without asking again', async () => {
    ScriptedSource.opened[0]?.end('{"sessionId":"s1","reason":"deleted"}');
    await vi.runAllTimersAsync();
    expect(statuses.at(-1)).toBe('ended');
    expect(exists).not.toHaveBeenCalled();
    expect(ScriptedSource.opened).toHaveLength(1);
  });

  it('resumes at once from where it is when it was cut for lagging', () => {
    ScriptedSource.opened[0]?.end('{"sessionId":"s1","reason":"lagging"}');
    expect(ScriptedSource.opened).toHaveLength(2);
    expect(ScriptedSource.opened[1]?.url).toBe('/api/sessions/s1/events/stream?after=0');
    expect(exists).not.toHaveBeenCalled();
  });

  it('asks again after a pause when the server is stopping', async () => {
    ScriptedSource.opened[0]?.end('{"sessionId":"s1","reason":"stopping"}');
    expect(statuses.at(-1)).toBe('reconnecting');
    expect(ScriptedSource.opened).toHaveLength(1);
    await vi.runOnlyPendingTimersAsync();
    expect(exists).toHaveBeenCalledWith('s1');
    expect(ScriptedSource.opened).toHaveLength(2);
  });
});

describe('endReason', () => {
  it('reads the reason of an end message, and nothing else', () => {
    expect(endReason('{"sessionId":null,"reason":"stopping"}')).toBe('stopping');
    expect(endReason('{"sessionId":"s"}')).toBeUndefined();
    expect(endReason('{"reason":"bored"}')).toBeUndefined();
    expect(endReason('not json')).toBeUndefined();
    expect(endReason(undefined)).toBeUndefined();
  });
});
