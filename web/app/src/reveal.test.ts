import { ConversationStore, type EventPage, type Snapshot } from '@qilin-agent/protocol';
import { describe, expect, test } from 'vitest';
import { anchorOfEvent, loadUntilHeld, type EventReader } from './reveal';

const TIME = '2026-12-02T05:00:00.000Z';

/** A stored session of `turns` turns, each a prompt, some text and one `read` call. */
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
      protocolVersion: 2,
    },
  ];
  const add = (event: Record<string, unknown>) =>
    events.push({ ...event, seq: events.length + 1, time: TIME });
  for (let turn = 0; turn < turns; turn += 1) {
    const turnId = `t${turn}`;
    const callId = `call_${turn}`;
    add({ type: 'turn.started', turnId, prompt: `prompt ${turn}` });
    add({ type: 'step.started', turnId, step: 1 });
    add({ type: 'step.text.delta', turnId, step: 1, text: `text ${turn}` });
    add({
      type: 'tool.start',
      callId,
      toolName: 'read',
      caller: 'direct',
      arguments: { path: `f${turn}.txt` },
      presentation: { action: 'Read', remark: `f${turn}.txt` },
    });
    add({
      type: 'tool.result',
      callId,
      toolName: 'read',
      caller: 'direct',
      status: 'ok',
      content: [{ type: 'text', text: 'x' }],
      durationMs: 1,
    });
    add({
      type: 'step.finished',
      turnId,
      step: 1,
      stopReason: 'end_turn',
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 },
    });
    add({ type: 'turn.finished', turnId, reason: 'completed' });
  }
  return events;
}

/** The server of a stored session: its snapshots a page of turns at a time, and its events. */
function server(events: Record<string, unknown>[]) {
  const asked: string[] = [];
  const whole = new ConversationStore();
  whole.push(events);
  const snapshot = (turns: number, before?: number): Snapshot => {
    const tree = whole.getSnapshot().tree;
    const end = before ?? tree.turns.length;
    const from = Math.max(0, end - turns);
    return {
      headSeq: events.length,
      totalTurns: tree.turns.length,
      firstTurn: from,
      turns: JSON.parse(JSON.stringify(tree.turns.slice(from, end))) as Snapshot['turns'],
      compactions: [],
      preparingArguments: {},
      activeTurn: null,
    };
  };
  const reader: EventReader = {
    events: (_, after, limit): Promise<EventPage> => {
      asked.push(`events ${after} ${limit}`);
      return Promise.resolve({
        events: events.slice(after, after + limit) as unknown as EventPage['events'],
        headSeq: events.length,
        more: after + limit < events.length,
      });
    },
  };
  /** A conversation opened at its latest 20 turns, and its loader of earlier pages. */
  const opened = () => {
    const model = new ConversationStore();
    model.seed(snapshot(20), events[0]);
    const loadEarlier = async () => {
      const before = model.getSnapshot().tree.firstTurn;
      asked.push(`snapshot before ${before}`);
      model.prepend(snapshot(20, before));
    };
    return { model, loadEarlier };
  };
  return { reader, asked, opened };
}

describe('finding the place a link opened', () => {
  test('a call in an earlier turn: the pages before are loaded until it is there, once each', async () => {
    const { asked, opened } = server(storedEvents(45));
    const { model, loadEarlier } = opened();
    expect(model.call('call_3')).toBeUndefined();
    expect(await loadUntilHeld(model, { kind: 'call', callId: 'call_3' }, loadEarlier)).toBe(true);
    expect(model.call('call_3')?.toolName).toBe('read');
    // Turns 25–44 were shown; 5–24, then 0–4 were loaded, and no more.
    expect(asked).toEqual(['snapshot before 25', 'snapshot before 5']);
    expect(model.getSnapshot().tree.firstTurn).toBe(0);
  });

  test('a call already shown loads nothing; one the session lacks loads every page, then says so', async () => {
    const { asked, opened } = server(storedEvents(45));
    const { model, loadEarlier } = opened();
    expect(await loadUntilHeld(model, { kind: 'call', callId: 'call_44' }, loadEarlier)).toBe(true);
    expect(asked).toEqual([]);
    expect(await loadUntilHeld(model, { kind: 'call', callId: 'call_99' }, loadEarlier)).toBe(
      false,
    );
    expect(asked).toEqual(['snapshot before 25', 'snapshot before 5']);
  });

  test('a reveal given up (the page closed) loads no further', async () => {
    const { asked, opened } = server(storedEvents(45));
    const { model, loadEarlier } = opened();
    let closed = false;
    const load = async () => {
      await loadEarlier();
      closed = true;
    };
    expect(await loadUntilHeld(model, { kind: 'call', callId: 'call_0' }, load, () => closed)).toBe(
      false,
    );
    expect(asked).toEqual(['snapshot before 25']);
  });

  test('an event opens at its call, else at its turn; a seq the session lacks at nothing', async () => {
    const events = storedEvents(3);
    const { reader, asked } = server(events);
    const seqOf = (match: (event: Record<string, unknown>) => boolean) =>
      events.find(match)?.seq as number;
    const text = seqOf((event) => event.type === 'step.text.delta' && event.turnId === 't1');
    expect(await anchorOfEvent(reader, 's1', text)).toEqual({ kind: 'turn', turnId: 't1' });
    expect(asked).toEqual([`events ${text - 1} 1`]);
    const result = seqOf((event) => event.type === 'tool.result' && event.callId === 'call_2');
    expect(await anchorOfEvent(reader, 's1', result)).toEqual({ kind: 'call', callId: 'call_2' });
    expect(await anchorOfEvent(reader, 's1', 1)).toBeUndefined();
    expect(await anchorOfEvent(reader, 's1', events.length + 5)).toBeUndefined();
  });

  test('a turn in an earlier page is loaded like a call', async () => {
    const { opened } = server(storedEvents(30));
    const { model, loadEarlier } = opened();
    expect(await loadUntilHeld(model, { kind: 'turn', turnId: 't2' }, loadEarlier)).toBe(true);
    expect(model.getSnapshot().tree.turns.some((turn) => turn.turnId === 't2')).toBe(true);
  });
});
