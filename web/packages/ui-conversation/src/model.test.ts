import { describe, expect, it } from 'vitest';
import { fixtureText, recordedFixtures } from '../../../test-support/fixtures';
import { ConversationModel, requestsOf } from './model';

/** A recorded log as the server sends it: one parsed JSON value per event. */
function rawEvents(name: string): Record<string, unknown>[] {
  return fixtureText(`${name}.jsonl`)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('ConversationModel', () => {
  it.each(recordedFixtures())('folds %s to the tree the runtime recorded', (name) => {
    const model = new ConversationModel();
    model.push(rawEvents(name));
    const expected = JSON.parse(fixtureText(`${name}.tree.json`)) as { turns: unknown[] };
    const snapshot = model.getSnapshot();
    expect(snapshot.tree.turns.length).toBe(expected.turns.length);
    expect(snapshot.session?.sessionId).toBe('fixture');
    expect(snapshot.lastSeq).toBe(rawEvents(name).length);
    expect(snapshot.running).toBe(false);
  });

  it('shows every event once when history and a resumed stream overlap', () => {
    const events = rawEvents('review');
    const whole = new ConversationModel();
    whole.push(events);
    const pieces = new ConversationModel();
    pieces.push(events.slice(0, 40));
    // The stream reconnects and repeats what the page already had, then goes on.
    pieces.push(events.slice(25, 90));
    pieces.push(events.slice(60));
    expect(JSON.stringify(pieces.getSnapshot().tree)).toBe(
      JSON.stringify(whole.getSnapshot().tree),
    );
    expect(pieces.getSnapshot().requests).toEqual(whole.getSnapshot().requests);
    expect(pieces.push(events.slice(10, 20))).toBe(false);
  });

  it('keeps requests with their answers, under the root call that waited', () => {
    const model = new ConversationModel();
    model.push(rawEvents('review'));
    const { requests, tree } = model.getSnapshot();
    const push = requests.find((request) => request.opened.toolName === 'bash');
    expect(push?.resolution).toEqual({ outcome: 'approved' });
    const denied = requests.find((request) => request.opened.requestId === 'req-2');
    expect(denied?.resolution?.outcome).toBe('denied');
    const tasks = new ConversationModel();
    tasks.push(rawEvents('tasks'));
    const question = tasks
      .getSnapshot()
      .requests.find((request) => request.opened.ask.kind === 'question');
    expect(question?.resolution?.outcome).toBe('answered');
    const roots = tasks
      .getSnapshot()
      .tree.turns.flatMap((turn) =>
        turn.items.flatMap((item) => (item.type === 'tool' ? [item.node] : [])),
      );
    const holder = roots.find((node) => node.callId === question?.opened.callId);
    expect(holder).toBeDefined();
    if (holder === undefined) throw new Error('no call holds the question');
    expect(requestsOf(holder, tasks.getSnapshot().requests)).toContain(question);
    expect(tree.turns.length).toBeGreaterThan(0);
  });

  it('sums usage per turn and says when a turn is running', () => {
    const events = rawEvents('review');
    const model = new ConversationModel();
    const firstEnd = events.findIndex((event) => event.type === 'turn.finished');
    model.push(events.slice(0, firstEnd));
    expect(model.getSnapshot().running).toBe(true);
    model.push(events.slice(firstEnd));
    const snapshot = model.getSnapshot();
    expect(snapshot.running).toBe(false);
    const steps = events.filter(
      (event) => event.type === 'step.finished' && event.turnId === 'turn-1',
    ).length;
    expect(snapshot.usage.get('turn-1')?.steps).toBe(steps);
  });

  it('skips a malformed value with a reason, and moves past an unknown type', () => {
    const model = new ConversationModel();
    model.push([{ type: 'turn.started', seq: 1, time: '2026-11-30T12:00:00.000Z' }]);
    expect(model.skipped).toHaveLength(1);
    expect(model.skipped[0]?.message).toMatch(/turnId|prompt/);
    model.push([{ type: 'from.the.future', seq: 2, time: '2026-11-30T12:00:00.000Z' }]);
    expect(model.seq).toBe(2);
    expect(model.getSnapshot().tree.turns).toHaveLength(0);
  });

  it('keeps the request list and untouched turns identical between snapshots', () => {
    const events = rawEvents('interrupts');
    const model = new ConversationModel();
    const firstEnd = events.findIndex((event) => event.type === 'turn.finished');
    const text = events.findIndex(
      (event, index) => index > firstEnd && event.type === 'step.text.delta',
    );
    expect(text).toBeGreaterThan(firstEnd);
    model.push(events.slice(0, text));
    const before = model.getSnapshot();
    expect(model.push([events[text]])).toBe(true);
    const after = model.getSnapshot();
    expect(after.requests).toBe(before.requests);
    expect(after.tree.turns[0]).toBe(before.tree.turns[0]);
  });
});
