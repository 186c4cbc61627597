import { act, renderHook } from '@testing-library/react';
import { ConversationStore, type EventPage, type Snapshot } from '@qilin-agent/protocol';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { useChildSession } from './children';
import type { SessionReader } from './stream';

/** The browser's `EventSource` as far as the stream uses it: opened, fed, closed. */
class FakeSource {
  static all: FakeSource[] = [];
  static readonly CLOSED = 2;
  readyState = 0;
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((message: MessageEvent<string>) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSource.all.push(this);
  }
  addEventListener(): void {}
  close(): void {
    this.closed = true;
  }
  /** The server sends `event`. */
  send(event: unknown): void {
    this.onmessage?.({ data: JSON.stringify(event) } as MessageEvent<string>);
  }
}

/** Streams not closed yet. */
const openStreams = () => FakeSource.all.filter((source) => !source.closed);

beforeEach(() => {
  FakeSource.all = [];
  vi.stubGlobal('EventSource', FakeSource);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const TIME = '2026-12-02T08:30:00.000Z';
const CHILD = 'ses_child1';

/** The child's log so far: started, a turn, one call running. */
const EVENTS = [
  {
    type: 'session.started',
    seq: 1,
    time: TIME,
    sessionId: CHILD,
    agent: { name: 'explore', description: 'Reads, never writes' },
    model: 'scripted:child',
    workspace: '/w',
    protocolVersion: 2,
  },
  { type: 'turn.started', seq: 2, time: TIME, turnId: 't1', prompt: 'Find the retry logic' },
  { type: 'step.started', seq: 3, time: TIME, turnId: 't1', step: 1 },
  {
    type: 'tool.start',
    seq: 4,
    time: TIME,
    callId: 'c1',
    toolName: 'read',
    caller: 'direct',
    arguments: { path: 'src/upload.rs' },
    presentation: { action: 'Read', remark: 'src/upload.rs' },
  },
];

/** The server over the child's log, and what was asked of it. */
function server() {
  const asked: string[] = [];
  const whole = new ConversationStore(EVENTS);
  const reader: SessionReader = {
    snapshot: (sessionId, turns) => {
      asked.push(`snapshot ${sessionId} ${turns}`);
      const tree = whole.getSnapshot().tree;
      return Promise.resolve({
        headSeq: EVENTS.length,
        totalTurns: tree.turns.length,
        firstTurn: 0,
        turns: JSON.parse(JSON.stringify(tree.turns)) as Snapshot['turns'],
        compactions: [],
        preparingArguments: {},
        activeTurn: null,
      });
    },
    events: (sessionId, after, limit): Promise<EventPage> => {
      asked.push(`events ${sessionId} ${after} ${limit}`);
      return Promise.resolve({
        events: EVENTS.slice(after, after + limit) as unknown as EventPage['events'],
        headSeq: EVENTS.length,
        more: after + limit < EVENTS.length,
      });
    },
  };
  return { reader, asked };
}

const callIds = (feed: ReturnType<typeof useChildSession>) =>
  feed?.tree.turns.flatMap((turn) =>
    turn.items.flatMap((item) => (item.type === 'tool' ? [item.node.callId] : [])),
  );

describe('following a child session for its agent card', () => {
  test('nothing is followed without an id', () => {
    const { reader, asked } = server();
    const { result } = renderHook(() => useChildSession(undefined, reader));
    expect(result.current).toBeUndefined();
    expect(asked).toEqual([]);
    expect(FakeSource.all).toEqual([]);
  });

  test('the snapshot, then the live events after it; closed when the card stops', async () => {
    const { reader, asked } = server();
    const { result, rerender, unmount } = renderHook(
      ({ id }: { id: string | undefined }) => useChildSession(id, reader),
      { initialProps: { id: CHILD as string | undefined } },
    );
    expect(result.current?.status).toBe('connecting');
    await vi.waitFor(() => expect(FakeSource.all).toHaveLength(1));
    expect(asked).toEqual([`snapshot ${CHILD} 20`, `events ${CHILD} 0 1`]);
    const source = FakeSource.all[0] as FakeSource;
    expect(source.url).toBe(`/api/sessions/${CHILD}/events/stream?after=${EVENTS.length}`);
    await vi.waitFor(() => expect(callIds(result.current)).toEqual(['c1']));
    act(() => source.onopen?.());
    expect(result.current?.status).toBe('live');
    // A second call starts in the child: the card's tree has it within a frame.
    act(() => {
      source.send({
        type: 'tool.start',
        seq: 5,
        time: TIME,
        callId: 'c2',
        toolName: 'grep',
        caller: 'direct',
        arguments: { pattern: 'retry' },
        presentation: { action: 'Grep', remark: 'retry' },
      });
    });
    await vi.waitFor(() => expect(callIds(result.current)).toEqual(['c1', 'c2']));
    // The child's cards get hooks over the child's own store.
    expect(typeof result.current?.hooks.usePreviousToolCall).toBe('function');
    rerender({ id: undefined });
    expect(result.current).toBeUndefined();
    expect(openStreams()).toEqual([]);
    rerender({ id: CHILD });
    await vi.waitFor(() => expect(openStreams()).toHaveLength(1));
    unmount();
    expect(openStreams()).toEqual([]);
  });
});
