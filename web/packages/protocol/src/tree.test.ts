import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  fixtureEvents,
  fixturesDir,
  fixtureText,
  malformedFixtures,
  recordedFixtures,
  runtimeTurns,
  untilRequest,
} from '../../../test-support/fixtures';
import { readEventLog } from './events';
import { ConversationFold, TurnPageError, foldEvents, utf8Length, type TreeSeed } from './tree';
import type { CompactionNode, Event, ToolNode, TurnNode } from './generated';
import { LIVE_HEAD_BYTES, LIVE_TAIL_BYTES } from './generated';

type Json = Record<string, unknown>;

/**
 * The runtime's tree as JSON, whole: every field it writes must be one this client folds the
 * same way. The runtime leaves out an empty `compactions`.
 */
function runtimeShape(tree: Json): Json {
  return { ...tree, compactions: tree.compactions ?? [] };
}

/** This client's tree in the runtime's JSON shape. */
function clientShape(fold: ConversationFold): Json {
  return JSON.parse(
    JSON.stringify({
      preparingArguments: Object.fromEntries(fold.allPreparingArguments()),
      turns: fold.tree().turns,
      compactions: fold.tree().compactions,
    }),
  ) as Json;
}

describe('the fold matches the runtime on every recorded log', () => {
  test.each(recordedFixtures())('%s', (name) => {
    const runtime = JSON.parse(fixtureText(`${name}.tree.json`)) as Json;
    const events = fixtureEvents(name);
    expect(clientShape(foldEvents(events))).toEqual(runtimeShape(runtime));
    // Event by event, the same tree.
    const fold = new ConversationFold();
    events.forEach((event) => fold.apply(event));
    expect(clientShape(fold)).toEqual(runtimeShape(runtime));
  });
});

test.each(malformedFixtures())('a malformed log folds without throwing: %s', (name) => {
  const fold = foldEvents(fixtureEvents(name));
  expect(fold.tree().turns.length).toBeGreaterThan(0);
});

function allNodes(nodes: readonly ToolNode[]): ToolNode[] {
  return nodes.flatMap((node) => [node, ...allNodes(node.subCalls)]);
}

describe('snapshots share what an event did not touch', () => {
  const events = fixtureEvents('code-mode');
  const rootCalls = (fold: ConversationFold) =>
    fold
      .tree()
      .turns.flatMap((turn) =>
        turn.items.flatMap((item) => (item.type === 'tool' ? [item.node] : [])),
      );

  test('an event for a nested call replaces it and its ancestors only', () => {
    const fold = foldEvents(events);
    const before = fold.tree();
    const roots = rootCalls(fold);
    const parent = roots[1] as ToolNode;
    const [first, second] = parent.subCalls as [ToolNode, ToolNode];
    fold.apply({
      seq: 10_000,
      time: '',
      type: 'tool.progress',
      callId: second.callId,
      text: 'more\n',
    });
    const after = fold.tree();
    expect(after).not.toBe(before);
    const newParent = rootCalls(fold)[1] as ToolNode;
    expect(newParent).not.toBe(parent);
    expect(newParent.subCalls[1]).not.toBe(second);
    expect(newParent.subCalls[1]?.progress).toBe(`${second.progress}more\n`);
    expect(newParent.subCalls[0]).toBe(first);
    rootCalls(fold).forEach((root, index) => {
      if (index !== 1) expect(root).toBe(roots[index]);
    });
    // The old snapshot is unchanged.
    expect(second.progress).not.toContain('more');
  });

  test('argument text streams beside the tree, which keeps its snapshot', () => {
    const fold = new ConversationFold();
    fold.apply({
      seq: 1,
      time: '2026-11-30T17:05:16.123Z',
      type: 'tool.preparing',
      callId: 'c1',
      toolName: 'write',
      argumentsDelta: '',
    });
    const tree = fold.tree();
    for (let i = 0; i < 200; i += 1) {
      const change = fold.apply({
        seq: i + 2,
        time: '2026-11-30T17:05:16.123Z',
        type: 'tool.preparing',
        callId: 'c1',
        toolName: 'write',
        argumentsDelta: 'x',
      });
      expect(change).toEqual({ tree: false, preparing: 'c1' });
    }
    expect(fold.tree()).toBe(tree);
    expect(fold.preparingArguments('c1')).toHaveLength(200);
    const start: Event = {
      seq: 300,
      time: '2026-11-30T17:05:16.123Z',
      type: 'tool.start',
      callId: 'c1',
      toolName: 'write',
      caller: 'direct',
      arguments: { path: 'a', content: 'x' },
      presentation: { action: 'Write', remark: 'a' },
    };
    expect(fold.apply(start)).toEqual({ tree: true, preparing: 'c1' });
    expect(fold.preparingArguments('c1')).toBeUndefined();
    expect(fold.call('c1')?.phase).toBe('running');
  });

  test('a call keeps one id across its phases and nested calls know their parent', () => {
    const fold = foldEvents(events);
    for (const node of allNodes(rootCalls(fold))) {
      expect(fold.call(node.callId)).toBe(node);
      node.subCalls.forEach((sub) => expect(sub.parentCallId).toBe(node.callId));
    }
  });
});

describe('phase times and steps', () => {
  const at = (second: number) => `2026-11-30T17:05:${String(second).padStart(2, '0')}.000Z`;
  const events: Event[] = [
    { seq: 1, time: at(0), type: 'turn.started', turnId: 't1', prompt: 'go' },
    { seq: 2, time: at(1), type: 'step.started', turnId: 't1', step: 1 },
    {
      seq: 3,
      time: at(2),
      type: 'step.finished',
      turnId: 't1',
      step: 1,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 },
    },
    { seq: 4, time: at(3), type: 'step.started', turnId: 't1', step: 2 },
    {
      seq: 5,
      time: at(4),
      type: 'tool.preparing',
      callId: 'c1',
      toolName: 'run_code',
      argumentsDelta: '{"co',
    },
    {
      seq: 6,
      time: at(5),
      type: 'tool.preparing',
      callId: 'c1',
      toolName: 'run_code',
      argumentsDelta: 'de":"x"}',
    },
    {
      seq: 7,
      time: at(6),
      type: 'tool.start',
      callId: 'c1',
      toolName: 'run_code',
      caller: 'direct',
      arguments: { code: 'x' },
      presentation: { action: 'Run code', remark: '' },
    },
    {
      seq: 8,
      time: at(7),
      type: 'tool.start',
      callId: 'c2',
      toolName: 'read',
      caller: 'code',
      parentCallId: 'c1',
      arguments: { path: 'a' },
      presentation: { action: 'Read', remark: 'a' },
    },
    {
      seq: 9,
      time: at(8),
      type: 'tool.result',
      callId: 'c2',
      toolName: 'read',
      caller: 'code',
      parentCallId: 'c1',
      status: 'ok',
      content: [],
      durationMs: 1000,
    },
    {
      seq: 10,
      time: at(9),
      type: 'tool.result',
      callId: 'c1',
      toolName: 'run_code',
      caller: 'direct',
      status: 'ok',
      content: [],
      durationMs: 3000,
    },
  ] as Event[];

  test('a node holds when it was named, dispatched and ended, and its step', () => {
    const fold = foldEvents(events);
    expect(fold.tree().turns[0]?.latestStep).toBe(2);
    expect(fold.call('c1')).toMatchObject({
      step: 2,
      preparingAt: at(4),
      startedAt: at(6),
      finishedAt: at(9),
    });
    // A nested call was never seen preparing; it belongs to its `run_code` call's step.
    const nested = fold.call('c2');
    expect(nested).toMatchObject({ step: 2, startedAt: at(7), finishedAt: at(8) });
    expect(nested?.preparingAt).toBeUndefined();
  });

  test("a fold seeded between a step's start and its first call puts the call in that step", () => {
    const head = foldEvents(events.slice(0, 4));
    const seeded = ConversationFold.seeded(snapshotOf(head, 0));
    seeded.applyAll(events.slice(4));
    expect(seeded.call('c1')?.step).toBe(2);
    expect(seeded.call('c2')?.step).toBe(2);
  });
});

describe('requests, reasoning and usage', () => {
  test('a call waits while its request is open and runs again once it is resolved', () => {
    const { events, opened: request, next } = untilRequest('review', 'bash');
    const fold = foldEvents(events);
    const waiting = fold.call(request.callId);
    expect(waiting?.phase).toBe('waiting');
    expect(waiting?.requests).toEqual([
      { requestId: request.requestId, ask: request.ask, openedAt: request.time },
    ]);
    expect(request.ask).toMatchObject({ kind: 'approval', reason: 'pushing publishes the work' });
    fold.apply(next);
    const resolved = fold.call(request.callId);
    expect(resolved?.phase).toBe('running');
    expect(resolved?.requests[0]).toMatchObject({
      resolution: { outcome: 'approved' },
      resolvedBy: 'fixture',
      resolvedAt: next.time,
    });
    // The old snapshot still shows the wait.
    expect(waiting?.phase).toBe('waiting');
  });

  test('a request for a call the log never started changes nothing', () => {
    const fold = new ConversationFold();
    const change = fold.apply({
      seq: 1,
      time: '',
      type: 'request.opened',
      requestId: 'r',
      callId: 'nowhere',
      toolName: 'bash',
      ask: { kind: 'question', questions: [] },
    });
    expect(change).toEqual({ tree: false });
  });

  test('reasoning is its own item beside the text of the same step; usage sums per turn', () => {
    const at = { time: '2026-11-30T17:05:16.123Z', turnId: 't' };
    const usage = { inputTokens: 10, outputTokens: 4, cacheReadTokens: 2 };
    const fold = foldEvents([
      { ...at, seq: 1, type: 'turn.started', prompt: 'Go.' },
      { ...at, seq: 2, type: 'step.reasoning.delta', step: 1, text: 'Let me ' },
      { ...at, seq: 3, type: 'step.reasoning.delta', step: 1, text: 'think.' },
      { ...at, seq: 4, type: 'step.reasoning.end', step: 1 },
      { ...at, seq: 5, type: 'step.text.delta', step: 1, text: 'Done.' },
      { ...at, seq: 6, type: 'step.finished', step: 1, usage, stopReason: 'end_turn' },
      { ...at, seq: 7, type: 'step.reasoning.delta', step: 2, text: 'Again.' },
      { ...at, seq: 8, type: 'step.finished', step: 2, usage },
      { ...at, seq: 9, type: 'turn.finished', reason: 'max_tokens' },
    ]);
    const [turn] = fold.tree().turns;
    expect(turn?.items).toEqual([
      { type: 'reasoning', step: 1, text: 'Let me think.' },
      { type: 'text', step: 1, text: 'Done.' },
      { type: 'reasoning', step: 2, text: 'Again.' },
    ]);
    expect(turn?.usage).toEqual({ inputTokens: 20, outputTokens: 8, cacheReadTokens: 4 });
    expect(turn?.finished).toBe('max_tokens');
  });
});

/** The server's snapshot of `fold` from its turn `from` on (as JSON: nothing shared). */
function snapshotOf(fold: ConversationFold, from: number): TreeSeed {
  const tree = fold.tree();
  return {
    firstTurn: from,
    turns: runtimeTurns(tree.turns.slice(from)),
    compactions: JSON.parse(JSON.stringify(tree.compactions)) as CompactionNode[],
    preparingArguments: Object.fromEntries(fold.allPreparingArguments()),
  };
}

// Every cut point of the longest logs takes seconds on a busy machine.
describe('a fold seeded from a snapshot goes on as the whole fold', { timeout: 60_000 }, () => {
  test.each(recordedFixtures())('%s: every cut point, every first turn', (name) => {
    const events = fixtureEvents(name);
    const whole = clientShape(foldEvents(events));
    for (let cut = 0; cut <= events.length; cut += 1) {
      const head = foldEvents(events.slice(0, cut));
      const headShape = clientShape(head);
      const nextShape = clientShape(foldEvents(events.slice(0, cut + 1)));
      const turns = head.tree().turns.length;
      // The latest turns only (from each turn on), then the events after the cut, then the
      // earlier turns: an event for a call of a turn not loaded yet is the only one that could
      // differ, so the earlier turns come first for the exact check.
      for (let from = 0; from <= Math.max(0, turns - 1); from += 1) {
        const seeded = ConversationFold.seeded(snapshotOf(head, from));
        expect(seeded.tree().firstTurn).toBe(from);
        seeded.prepend({ firstTurn: 0, turns: runtimeTurns(head.tree().turns.slice(0, from)) });
        // The same tree as at the cut, argument text still streaming included; the next event
        // folds as it would have.
        expect(clientShape(seeded), `cut ${cut}, from turn ${from}`).toEqual(headShape);
        if (cut < events.length) {
          seeded.applyAll(events.slice(cut, cut + 1));
          expect(clientShape(seeded), `cut ${cut} + 1, from turn ${from}`).toEqual(nextShape);
        }
        seeded.applyAll(events.slice(cut + 1));
        expect(clientShape(seeded), `cut ${cut}, from turn ${from}`).toEqual(whole);
        expect(seeded.tree().firstTurn).toBe(0);
      }
      // From the latest turn, the events after the cut fold before the rest is loaded.
      const latest = ConversationFold.seeded(snapshotOf(head, Math.max(0, turns - 1)));
      latest.applyAll(events.slice(cut));
      latest.prepend({ firstTurn: 0, turns: runtimeTurns(head.tree().turns.slice(0, turns - 1)) });
      expect(clientShape(latest), `cut ${cut}, latest turn first`).toEqual(whole);
    }
  });
});

describe('earlier turns put before the ones held', () => {
  // Four turns, the third with a `run_code` call and its nested calls.
  const events = fixtureEvents('interrupts');
  const whole = foldEvents(events);
  const all = whole.tree().turns;
  const calls = (turns: readonly TurnNode[]) =>
    allNodes(
      turns.flatMap((turn) => turn.items.flatMap((i) => (i.type === 'tool' ? [i.node] : []))),
    );

  test('every node held keeps its identity; the calls of both pages are indexed', () => {
    expect(all.length).toBe(4);
    const fold = ConversationFold.seeded(snapshotOf(whole, 3));
    expect(fold.prepend({ firstTurn: 1, turns: runtimeTurns(all.slice(1, 3)) })).toBe(2);
    const before = fold.tree();
    expect(before.turns).toHaveLength(3);
    expect(fold.prepend({ firstTurn: 0, turns: runtimeTurns(all.slice(0, 1)) })).toBe(1);
    const after = fold.tree();
    expect(after).not.toBe(before);
    expect(after.firstTurn).toBe(0);
    before.turns.forEach((turn, at) => expect(after.turns[at + 1]).toBe(turn));
    for (const node of calls(after.turns)) expect(fold.call(node.callId)).toBe(node);
    expect(calls(after.turns).map((node) => node.callId)).toEqual(
      calls(all).map((node) => node.callId),
    );
  });

  test('an event for a call in a prepended turn lands on it, and only its turn changes', () => {
    const fold = ConversationFold.seeded(snapshotOf(whole, all.length - 1));
    fold.prepend({ firstTurn: 0, turns: runtimeTurns(all.slice(0, all.length - 1)) });
    const [parent] = calls(fold.tree().turns.slice(2, 3)).filter(
      (node) => node.subCalls.length > 0,
    );
    const nested = (parent as ToolNode).subCalls[0] as ToolNode;
    const before = fold.tree();
    fold.apply({
      seq: 10_000,
      time: '',
      type: 'tool.progress',
      callId: nested.callId,
      text: 'late',
    });
    const after = fold.tree();
    expect(fold.call(nested.callId)?.progress).toBe(`${nested.progress}late`);
    expect(after.turns[2]).not.toBe(before.turns[2]);
    [0, 1, 3].forEach((at) => expect(after.turns[at]).toBe(before.turns[at]));
  });

  test('turns already held are skipped; a gap or a page that is not a tree is refused', () => {
    const fold = ConversationFold.seeded(snapshotOf(whole, all.length - 1));
    const tree = fold.tree();
    // A page that overlaps what is held adds only the turns before it.
    expect(fold.prepend({ firstTurn: all.length - 1, turns: runtimeTurns(all.slice(-1)) })).toBe(0);
    expect(fold.tree()).toBe(tree);
    expect(() => fold.prepend({ firstTurn: 0, turns: [] })).toThrow(TurnPageError);
    expect(() =>
      fold.prepend({ firstTurn: 2, turns: [{ prompt: 1 } as unknown as TurnNode] }),
    ).toThrow(/turns\[2\] is not a turn/);
    expect(() =>
      ConversationFold.seeded({ ...snapshotOf(whole, 0), compactions: {} as never }),
    ).toThrow(/`compactions` is not an array/);
    const broken = runtimeTurns(all.slice(0, all.length - 1));
    (broken[0]?.items as unknown[]).push({ type: 'tool', node: { callId: 'x' } });
    expect(() => fold.prepend({ firstTurn: 0, turns: broken })).toThrow(
      /items\[\d+\]\.node is not a call/,
    );
    // Nothing changed on a refused page.
    expect(fold.tree()).toBe(tree);
  });

  test('a compaction after the seed counts turns from the session start', () => {
    const fold = ConversationFold.seeded(snapshotOf(whole, all.length - 1));
    fold.apply({
      seq: 10_000,
      time: '',
      type: 'context.compacted',
      summary: 's',
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 },
      estimatedTokensBefore: 2,
      estimatedTokensAfter: 1,
      replacesThroughSeq: 9_999,
    });
    expect(fold.tree().compactions.at(-1)?.afterTurns).toBe(all.length);
  });
});

describe('live output is kept within the live bound, as the runtime keeps it', () => {
  const at = { time: '2026-11-30T17:05:16.123Z' };
  const started: Event[] = [
    { ...at, seq: 1, type: 'turn.started', turnId: 't', prompt: 'print' },
    {
      ...at,
      seq: 2,
      type: 'tool.start',
      callId: 'c1',
      toolName: 'bash',
      caller: 'direct',
      arguments: { command: 'yes' },
      presentation: { action: 'Run', remark: 'yes' },
    },
  ];
  const progress = (seq: number, text: string, omittedBytes?: number): Event => ({
    ...at,
    seq,
    type: 'tool.progress',
    callId: 'c1',
    text,
    ...(omittedBytes === undefined ? {} : { omittedBytes }),
  });

  test('wide characters and a gap fold to the same figures as the runtime', () => {
    // The case of `qilin_protocol::live`'s test of the same name.
    const fold = foldEvents(started);
    fold.apply(progress(3, '界'.repeat(87_382)));
    let node = fold.call('c1');
    expect(utf8Length(node?.progress ?? '')).toBe(262_143);
    expect(node?.progressTail).toBe('界');
    expect(node?.progressOmittedBytes).toBeUndefined();
    fold.apply(progress(4, 'é'.repeat(200_000)));
    node = fold.call('c1');
    expect(node?.progressOmittedBytes).toBe(137_859);
    expect(node?.progressTail).toBe('é'.repeat(131_072));
    fold.apply(progress(5, '😀 end\n', 1_000));
    node = fold.call('c1');
    expect(utf8Length(node?.progress ?? '')).toBe(262_143);
    expect(node?.progressOmittedBytes).toBe(401_003);
    expect(node?.progressTail).toBe('😀 end\n');
  });

  test('a flood recorded every byte live folds to its start, a count and its latest output', () => {
    const chunk = 'y\n'.repeat(8 * 1024);
    const events = [...started];
    for (let n = 0; n < 100; n++) events.push(progress(3 + n, chunk));
    const node = foldEvents(events).call('c1');
    expect(node?.progress.length).toBe(LIVE_HEAD_BYTES);
    expect(node?.progressTail?.length).toBe(LIVE_TAIL_BYTES);
    expect(node?.progressOmittedBytes).toBe(100 * chunk.length - LIVE_HEAD_BYTES - LIVE_TAIL_BYTES);
  });

  test('a fold seeded with a cut call goes on counting from it', () => {
    const events = [...started, progress(3, 'x'.repeat(LIVE_HEAD_BYTES)), progress(4, 'tail', 10)];
    const whole = foldEvents([...events, progress(5, ' more')]);
    const seeded = ConversationFold.seeded({
      firstTurn: 0,
      turns: runtimeTurns(foldEvents(events).tree().turns),
      compactions: [],
      preparingArguments: {},
    });
    seeded.apply(progress(5, ' more'));
    expect(seeded.call('c1')).toEqual(whole.call('c1'));
    expect(seeded.call('c1')?.progressTail).toBe('tail more');
    expect(seeded.call('c1')?.progressOmittedBytes).toBe(10);
  });
});

describe('child sessions', () => {
  // The runtime's own test log of an agent turn (crates/qilin-agent/tests/fixtures): a
  // foreground child, a background child started from code, its end, its delivery, a message.
  const log = readFileSync(
    resolve(fixturesDir, '../../crates/qilin-agent/tests/fixtures/agent_turn.jsonl'),
    'utf8',
  );

  test('agent.started links the child to its call, nested calls too; the rest changes nothing', () => {
    const reading = readEventLog(log);
    expect(reading.problems).toEqual([]);
    const fold = foldEvents(reading.events);
    expect(fold.call('call_1')?.child).toEqual({
      sessionId: 'child-a',
      agent: 'explore',
      description: 'List crates',
      background: false,
    });
    expect(fold.call('code_1')?.child).toEqual({
      sessionId: 'child-b',
      agent: 'general',
      description: 'Count lines',
      name: 'counter',
      background: true,
    });
    expect(fold.call('code_1')?.parentCallId).toBe('call_2');
    expect(fold.call('call_2')?.child).toBeUndefined();
    expect(fold.call('call_3')?.child).toBeUndefined();
  });

  test('the link lands while the call runs: a new snapshot that keeps the siblings', () => {
    const events = readEventLog(log).events;
    const at = events.findIndex((event) => event.type === 'agent.started');
    const fold = foldEvents(events.slice(0, at));
    const before = fold.tree();
    const sibling = fold.call('call_2');
    expect(fold.call('call_1')?.child).toBeUndefined();
    expect(fold.apply(events[at] as Event).tree).toBe(true);
    expect(fold.tree()).not.toBe(before);
    expect(fold.call('call_1')?.phase).toBe('running');
    expect(fold.call('call_1')?.child?.sessionId).toBe('child-a');
    expect(fold.call('call_2')).toBe(sibling);
  });

  test('a child is linked to its parent in session.started; a link for no known call is ignored', () => {
    const [started] = readEventLog(
      JSON.stringify({
        seq: 1,
        time: '2026-12-02T09:00:00Z',
        type: 'session.started',
        sessionId: 'child-a',
        protocolVersion: 2,
        agent: { name: 'explore' },
        model: 'scripted:child.yaml',
        workspace: '/w',
        parentSessionId: 'parent',
        parentCallId: 'call_1',
      }),
    ).events;
    expect(started).toMatchObject({ parentSessionId: 'parent', parentCallId: 'call_1' });
    const fold = new ConversationFold();
    const change = fold.apply({
      seq: 2,
      time: '2026-12-02T09:00:00Z',
      type: 'agent.started',
      callId: 'call_9',
      childSessionId: 'child-z',
      agent: 'explore',
      description: 'nothing',
      background: false,
    });
    expect(change.tree).toBe(false);
  });

  test('an agent.started without its background flag is invalid, named', () => {
    const reading = readEventLog(
      '{"seq":7,"time":"2026-12-02T09:00:00Z","type":"agent.started","callId":"c","childSessionId":"s","agent":"a","description":"d"}',
    );
    expect(reading.problems[0]?.message).toMatch(/agent\.started.*background/);
  });
});

describe('a request a child opened in its parent', () => {
  const time = '2026-11-30T12:00:00.000Z';
  const lines = (events: object[]) => events.map((event) => JSON.stringify(event)).join('\n');
  const question = {
    kind: 'question',
    questions: [{ id: 'q1', question: 'Which branch?', options: [], multiSelect: false }],
  };
  const log = lines([
    { type: 'turn.started', seq: 1, time, turnId: 't1', prompt: 'go' },
    { type: 'step.started', seq: 2, time, turnId: 't1', step: 1 },
    {
      type: 'tool.start',
      seq: 3,
      time,
      callId: 'agent_1',
      toolName: 'agent',
      caller: 'direct',
      arguments: {},
    },
    {
      type: 'tool.result',
      seq: 4,
      time,
      callId: 'agent_1',
      toolName: 'agent',
      status: 'ok',
      content: [{ type: 'text', text: 'started' }],
      durationMs: 3,
    },
    {
      type: 'request.opened',
      seq: 5,
      time,
      requestId: 'req-1',
      callId: 'agent_1',
      toolName: 'question',
      ask: question,
      childSessionId: 'ses_scout',
      childName: 'scout',
    },
    {
      type: 'request.opened',
      seq: 6,
      time,
      requestId: 'req-2',
      callId: 'agent_1',
      toolName: 'question',
      ask: question,
      childSessionId: 'ses_anon',
    },
  ]);

  test('sits on the agent call, leaves its phase, and names the child', () => {
    const reading = readEventLog(log);
    expect(reading.problems).toEqual([]);
    const item = foldEvents(reading.events)
      .tree()
      .turns[0]?.items.find((at) => at.type === 'tool');
    const node = item?.type === 'tool' ? item.node : undefined;
    expect(node?.phase).toBe('done');
    expect(node?.requests.map((request) => ({ ...request }))).toEqual([
      expect.objectContaining({
        requestId: 'req-1',
        childSessionId: 'ses_scout',
        childName: 'scout',
      }),
      expect.objectContaining({ requestId: 'req-2', childSessionId: 'ses_anon' }),
    ]);
    expect(node?.requests[1]).not.toHaveProperty('childName');
  });
});
