import { describe, expect, it } from 'vitest';
import {
  fixtureText,
  recordedFixtures,
  recordedSnapshot,
  runtimeTurns,
} from '../../../test-support/fixtures';
import type { ToolNode } from '@qilin-agent/protocol';
import { ConversationStore } from './store';

/** A recorded log as the server sends it: one parsed JSON value per event. */
function rawEvents(name: string): Record<string, unknown>[] {
  return fixtureText(`${name}.jsonl`)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Every call of a model's tree, nested calls included. */
function allCalls(model: ConversationStore): ToolNode[] {
  const out: ToolNode[] = [];
  const visit = (node: ToolNode) => {
    out.push(node);
    node.subCalls.forEach(visit);
  };
  for (const turn of model.getSnapshot().tree.turns) {
    for (const item of turn.items) if (item.type === 'tool') visit(item.node);
  }
  return out;
}

describe('ConversationStore', () => {
  it.each(recordedFixtures())('folds %s to the tree the runtime recorded', (name) => {
    const model = new ConversationStore();
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
    const whole = new ConversationStore();
    whole.push(events);
    const pieces = new ConversationStore();
    pieces.push(events.slice(0, 40));
    // The stream reconnects and repeats what the page already had, then goes on.
    pieces.push(events.slice(25, 90));
    pieces.push(events.slice(60));
    expect(JSON.stringify(pieces.getSnapshot().tree)).toBe(
      JSON.stringify(whole.getSnapshot().tree),
    );
    expect(pieces.push(events.slice(10, 20))).toBe(false);
  });

  it('reads each request, with its answer, from the call that waited', () => {
    const model = new ConversationStore();
    model.push(rawEvents('review'));
    const calls = allCalls(model);
    const push = calls.find((node) =>
      node.requests.some((request) => request.requestId === 'req-1'),
    );
    expect(push?.toolName).toBe('bash');
    expect(push?.requests[0]?.resolution).toEqual({ outcome: 'approved' });
    const denied = calls.flatMap((node) => node.requests).find((r) => r.requestId === 'req-2');
    expect(denied?.resolution?.outcome).toBe('denied');
    const tasks = new ConversationStore();
    tasks.push(rawEvents('tasks'));
    const question = allCalls(tasks)
      .flatMap((node) => node.requests)
      .find((request) => request.ask.kind === 'question');
    expect(question?.resolution?.outcome).toBe('answered');
  });

  it('sums usage per turn and says when a turn is running', () => {
    const events = rawEvents('review');
    const model = new ConversationStore();
    const firstEnd = events.findIndex((event) => event.type === 'turn.finished');
    model.push(events.slice(0, firstEnd));
    expect(model.getSnapshot().running).toBe(true);
    model.push(events.slice(firstEnd));
    const snapshot = model.getSnapshot();
    expect(snapshot.running).toBe(false);
    // The turn's usage is the fold's own sum of its steps, read from the tree.
    const steps = events.filter(
      (event) => event.type === 'step.finished' && event.turnId === 'turn-1',
    );
    expect(steps.length).toBeGreaterThan(0);
    const output = steps.reduce(
      (sum, event) => sum + (event.usage as { outputTokens: number }).outputTokens,
      0,
    );
    const turn = snapshot.tree.turns.find((each) => each.turnId === 'turn-1');
    expect(turn?.usage.outputTokens).toBe(output);
  });

  it('skips a malformed value with a reason, and moves past an unknown type', () => {
    const model = new ConversationStore();
    model.push([{ type: 'turn.started', seq: 1, time: '2026-11-30T12:00:00.000Z' }]);
    expect(model.skipped).toHaveLength(1);
    expect(model.skipped[0]?.message).toMatch(/turnId|prompt/);
    model.push([{ type: 'from.the.future', seq: 2, time: '2026-11-30T12:00:00.000Z' }]);
    expect(model.seq).toBe(2);
    expect(model.getSnapshot().tree.turns).toHaveLength(0);
  });

  it('keeps untouched turns identical between snapshots', () => {
    const events = rawEvents('interrupts');
    const model = new ConversationStore();
    const firstEnd = events.findIndex((event) => event.type === 'turn.finished');
    const text = events.findIndex(
      (event, index) => index > firstEnd && event.type === 'step.text.delta',
    );
    expect(text).toBeGreaterThan(firstEnd);
    model.push(events.slice(0, text));
    const before = model.getSnapshot();
    expect(model.push([events[text]])).toBe(true);
    const after = model.getSnapshot();
    expect(after.tree.turns[0]).toBe(before.tree.turns[0]);
  });
});

describe('a model started from the server snapshot', () => {
  const snapshotOf = recordedSnapshot;

  it.each(recordedFixtures())(
    '%s: the runtime tree, the session facts, and the earlier turns',
    (name) => {
      const events = rawEvents(name);
      const whole = new ConversationStore();
      whole.push(events);
      const total = whole.getSnapshot().tree.turns.length;
      const model = new ConversationStore();
      expect(model.seed(snapshotOf(name, total - 1), events[0])).toBe(true);
      const seeded = model.getSnapshot();
      expect(seeded.lastSeq).toBe(events.length);
      expect(seeded.session).toEqual(whole.getSnapshot().session);
      expect(seeded.tree.firstTurn).toBe(total - 1);
      // A resume that repeats what the snapshot held changes nothing.
      expect(model.push(events)).toBe(false);
      expect(model.prepend(snapshotOf(name, 0))).toBe(0);
      // The same tree, whatever order the runtime wrote each object's keys in.
      expect(JSON.parse(JSON.stringify(model.getSnapshot().tree))).toEqual(
        JSON.parse(JSON.stringify(whole.getSnapshot().tree)),
      );
      expect(model.getSnapshot().running).toBe(whole.getSnapshot().running);
      // A seeded model takes no second seed.
      expect(model.seed(snapshotOf(name, 0))).toBe(false);
    },
  );

  it('folds the events after the snapshot and loads earlier turns; seeded calls keep their times', () => {
    const events = rawEvents('interrupts');
    const model = new ConversationStore();
    const snapshot = snapshotOf('interrupts', 3);
    // The snapshot as of an earlier head: the last turn's events come from the stream.
    const firstOfLast = events.findLastIndex((event) => event.type === 'turn.started');
    const head = new ConversationStore();
    head.push(events.slice(0, firstOfLast));
    const headTree = head.getSnapshot().tree;
    expect(
      model.seed(
        {
          ...snapshot,
          headSeq: firstOfLast,
          totalTurns: 3,
          firstTurn: 2,
          turns: runtimeTurns(headTree.turns.slice(2)),
        },
        events[0],
      ),
    ).toBe(true);
    let heard = 0;
    model.subscribe(() => (heard += 1));
    expect(model.push(events)).toBe(true);
    expect(heard).toBe(1);
    expect(model.getSnapshot().tree.turns).toHaveLength(2);
    expect(() => model.prepend({ firstTurn: 0, turns: [] })).toThrow(/turn before 2/);
    const earlier = snapshotOf('interrupts', 0).turns;
    expect(model.prepend({ firstTurn: 1, turns: earlier.slice(1, 2) })).toBe(1);
    expect(heard).toBe(2);
    expect(model.prepend({ firstTurn: 0, turns: earlier.slice(0, 2) })).toBe(0);
    expect(heard).toBe(3);
    const whole = new ConversationStore();
    whole.push(events);
    expect(JSON.parse(JSON.stringify(model.getSnapshot().tree))).toEqual(
      JSON.parse(JSON.stringify(whole.getSnapshot().tree)),
    );
    const seededCall = allCalls(model).find((node) =>
      model
        .getSnapshot()
        .tree.turns[0]?.items.some((item) => item.type === 'tool' && item.node === node),
    );
    expect(seededCall).toBeDefined();
    // The snapshot carries each call's phase times: the trajectory needs no events for them.
    expect(seededCall?.startedAt).toEqual(expect.any(String));
  });
});
