import { ConversationModel } from '@qilin-agent/ui-conversation';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { EventPage } from './api';
import { SessionStream, type ReadEvents } from './stream';

/** The browser's `EventSource` as far as the stream uses it: the URL it was opened at. */
class RecordedSource {
  static opened: string[] = [];
  static readonly CLOSED = 2;
  readyState = 0;
  onopen: (() => void) | null = null;
  onmessage: ((message: MessageEvent<string>) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(url: string) {
    RecordedSource.opened.push(url);
  }
  addEventListener(): void {}
  close(): void {}
}

beforeEach(() => {
  RecordedSource.opened = [];
  vi.stubGlobal('EventSource', RecordedSource);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A session of `count` events: a turn, then text deltas. */
function storedEvents(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, index) =>
    index === 0
      ? { type: 'turn.started', seq: 1, turnId: 't1', prompt: 'Say it.' }
      : { type: 'step.text.delta', seq: index + 1, turnId: 't1', step: 1, text: 'x' },
  );
}

/** The events page route over `events`, with a hook to change what one page answers. */
function pages(
  events: Record<string, unknown>[],
  change: (after: number, page: EventPage) => EventPage = (_, page) => page,
): { read: ReadEvents; asked: number[] } {
  const asked: number[] = [];
  const read: ReadEvents = (_, after, limit) => {
    asked.push(after);
    const slice = events.slice(after, after + limit);
    const page = { events: slice, headSeq: events.length, more: after + limit < events.length };
    return Promise.resolve(change(after, page));
  };
  return { read, asked };
}

async function started(read: ReadEvents, model: ConversationModel): Promise<SessionStream> {
  const stream = new SessionStream(
    's1',
    model,
    () => {},
    () => Promise.resolve(true),
    read,
  );
  stream.start();
  await vi.waitFor(() => expect(RecordedSource.opened).toHaveLength(1));
  return stream;
}

describe('opening a session', () => {
  test('reads the stored history in pages, folds it in with one snapshot, streams after it', async () => {
    const { read, asked } = pages(storedEvents(3500));
    const model = new ConversationModel();
    const published = vi.fn();
    model.subscribe(published);
    const stream = await started(read, model);
    expect(asked).toEqual([0, 1000, 2000, 3000]);
    expect(published).toHaveBeenCalledTimes(1);
    expect(model.seq).toBe(3500);
    expect(RecordedSource.opened[0]).toBe('/api/sessions/s1/events/stream?after=3500');
    stream.close();
  });

  test('stops at a gap: the stream brings the rest', async () => {
    const { read } = pages(storedEvents(2500), (after, page) =>
      after === 1000 ? { ...page, events: page.events.slice(1) } : page,
    );
    const model = new ConversationModel();
    const stream = await started(read, model);
    expect(model.seq).toBe(1000);
    expect(RecordedSource.opened[0]).toBe('/api/sessions/s1/events/stream?after=1000');
    stream.close();
  });

  test('a page that fails leaves the history to the stream', async () => {
    const model = new ConversationModel();
    const stream = await started(
      () => Promise.reject(new Error('the server did not answer')),
      model,
    );
    expect(model.seq).toBe(0);
    expect(RecordedSource.opened[0]).toBe('/api/sessions/s1/events/stream?after=0');
    stream.close();
  });
});
