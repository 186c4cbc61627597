import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { ConversationStore, type EventPage, type Snapshot } from '@qilin-agent/protocol';
import { SessionStream, TURNS_PAGE, loadEarlierTurns, type SessionReader } from './stream';

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

const TIME = '2026-11-30T17:05:16.123Z';

/** The log of a session of `turns` turns: its `session.started`, then each turn's events. */
function storedEvents(turns: number): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [
    {
      type: 'session.started',
      seq: 1,
      time: TIME,
      sessionId: 's1',
      agent: { name: 'qilin', description: 'd' },
      model: 'scripted:s',
      workspace: '/w',
      protocolVersion: 1,
    },
  ];
  for (let turn = 0; turn < turns; turn += 1) {
    const turnId = `t${turn}`;
    const seq = () => events.length + 1;
    events.push({ type: 'turn.started', seq: seq(), time: TIME, turnId, prompt: `prompt ${turn}` });
    events.push({ type: 'step.text.delta', seq: seq(), time: TIME, turnId, step: 1, text: 'x' });
    events.push({ type: 'turn.finished', seq: seq(), time: TIME, turnId, reason: 'completed' });
  }
  return events;
}

/** The server over `events`: the snapshot the runtime folds, and the events route. */
function server(events: Record<string, unknown>[], failSnapshot = false) {
  const asked: string[] = [];
  const whole = new ConversationStore();
  whole.push(events);
  const reader: SessionReader = {
    snapshot: (_, turns, before) => {
      asked.push(`snapshot ${turns} ${before ?? 'latest'}`);
      if (failSnapshot) return Promise.reject(new Error('the server did not answer'));
      const tree = whole.getSnapshot().tree;
      const end = before ?? tree.turns.length;
      const from = Math.max(0, end - turns);
      return Promise.resolve({
        headSeq: events.length,
        totalTurns: tree.turns.length,
        firstTurn: from,
        turns: JSON.parse(JSON.stringify(tree.turns.slice(from, end))) as Snapshot['turns'],
        compactions: [],
        preparingArguments: {},
        activeTurn: null,
      });
    },
    events: (_, after, limit): Promise<EventPage> => {
      asked.push(`events ${after} ${limit}`);
      return Promise.resolve({
        // Raw JSON as the server sends it: the model reads each event before folding it.
        events: events.slice(after, after + limit) as unknown as EventPage['events'],
        headSeq: events.length,
        more: after + limit < events.length,
      });
    },
  };
  return { reader, asked, whole };
}

async function started(reader: SessionReader, model: ConversationStore): Promise<SessionStream> {
  const stream = new SessionStream(
    's1',
    model,
    () => {},
    () => Promise.resolve(true),
    reader,
  );
  stream.start();
  await vi.waitFor(() => expect(RecordedSource.opened).toHaveLength(1));
  return stream;
}

describe('opening a session', () => {
  test('starts from the snapshot of the latest turns, with one snapshot, streams after it', async () => {
    const events = storedEvents(50);
    const { reader, asked } = server(events);
    const model = new ConversationStore();
    const published = vi.fn();
    model.subscribe(published);
    const stream = await started(reader, model);
    expect(asked).toEqual([`snapshot ${TURNS_PAGE} latest`, 'events 0 1']);
    expect(published).toHaveBeenCalledTimes(1);
    expect(model.seq).toBe(events.length);
    const snapshot = model.getSnapshot();
    expect(snapshot.tree.turns).toHaveLength(TURNS_PAGE);
    expect(snapshot.tree.firstTurn).toBe(50 - TURNS_PAGE);
    expect(snapshot.session?.model).toBe('scripted:s');
    expect(RecordedSource.opened[0]).toBe(`/api/sessions/s1/events/stream?after=${events.length}`);
    stream.close();
  });

  test('loads the earlier turns a page at a time until none remain', async () => {
    const events = storedEvents(50);
    const { reader, asked, whole } = server(events);
    const model = new ConversationStore();
    const stream = await started(reader, model);
    const shown = model.getSnapshot().tree.turns;
    expect(await loadEarlierTurns(reader, 's1', model)).toBe(50 - 2 * TURNS_PAGE);
    expect(await loadEarlierTurns(reader, 's1', model)).toBe(0);
    expect(await loadEarlierTurns(reader, 's1', model)).toBe(0);
    expect(asked.slice(2)).toEqual([
      `snapshot ${TURNS_PAGE} ${50 - TURNS_PAGE}`,
      `snapshot ${TURNS_PAGE} ${50 - 2 * TURNS_PAGE}`,
    ]);
    const tree = model.getSnapshot().tree;
    expect(tree.turns.slice(50 - TURNS_PAGE)).toEqual(shown);
    expect(tree.turns.map((turn) => turn.turnId)).toEqual(
      whole.getSnapshot().tree.turns.map((turn) => turn.turnId),
    );
    stream.close();
  });

  test('a snapshot that fails leaves the history to the stream', async () => {
    const { reader } = server(storedEvents(3), true);
    const model = new ConversationStore();
    const stream = await started(reader, model);
    expect(model.seq).toBe(0);
    expect(RecordedSource.opened[0]).toBe('/api/sessions/s1/events/stream?after=0');
    stream.close();
  });
});
