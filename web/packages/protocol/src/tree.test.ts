import { describe, expect, test } from 'vitest';
import {
  fixtureEvents,
  fixtureText,
  malformedFixtures,
  recordedFixtures,
} from '../../../test-support/fixtures';
import { ConversationFold, foldEvents, type ToolNode } from './tree';
import type { Event } from './generated';

type Json = Record<string, unknown>;

const TURN_KEYS = ['turnId', 'prompt', 'items', 'finished', 'message'];
const NODE_KEYS = [
  'callId',
  'toolName',
  'caller',
  'parentCallId',
  'phase',
  'arguments',
  'presentation',
  'beforeDetail',
  'progress',
  'outcome',
  'subCalls',
];
const OUTCOME_KEYS = ['status', 'errorCode', 'content', 'output', 'detail', 'durationMs'];

function pick(value: Json, keys: string[]): Json {
  return Object.fromEntries(keys.filter((key) => key in value).map((key) => [key, value[key]]));
}

/** The runtime's tree, cut down to the fields this client models (a newer runtime may add some). */
function runtimeShape(tree: Json): Json {
  const node = (raw: Json): Json => {
    const kept = pick(raw, NODE_KEYS);
    if (kept.outcome) kept.outcome = pick(kept.outcome as Json, OUTCOME_KEYS);
    kept.subCalls = (kept.subCalls as Json[]).map(node);
    return kept;
  };
  return {
    preparingArguments: tree.preparingArguments,
    turns: (tree.turns as Json[]).map((turn) => ({
      ...pick(turn, TURN_KEYS),
      items: (turn.items as Json[]).map((item) =>
        item.type === 'tool' ? { type: 'tool', ...node(item) } : item,
      ),
    })),
  };
}

/** This client's tree in the runtime's JSON shape. */
function clientShape(fold: ConversationFold): Json {
  const turns = fold.tree().turns.map((turn) => ({
    ...turn,
    items: turn.items.map((item) => (item.type === 'tool' ? { type: 'tool', ...item.node } : item)),
  }));
  return JSON.parse(
    JSON.stringify({ preparingArguments: Object.fromEntries(fold.allPreparingArguments()), turns }),
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
    fold.apply({ seq: 10_000, type: 'tool.progress', callId: second.callId, text: 'more\n' });
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
      type: 'tool.preparing',
      callId: 'c1',
      toolName: 'write',
      argumentsDelta: '',
    });
    const tree = fold.tree();
    for (let i = 0; i < 200; i += 1) {
      const change = fold.apply({
        seq: i + 2,
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
