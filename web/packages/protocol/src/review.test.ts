// The fold of auto review's events: the reviewer's judgement on its call (root or nested), a
// person's grants beside the turns, and the turns the circuit breaker paused; and the reader's
// checks of the three events' fields.
import { describe, expect, test } from 'vitest';
import { readEvent } from './events';
import { ConversationFold, foldEvents } from './tree';
import type { AutoReviewRecord, Event, ReviewGrant } from './generated';

const time = '2026-11-30T17:05:16.123Z';

/** A turn whose model runs `run_code` (c1), which calls bash (c2), then calls bash itself (c3). */
function turnWithCalls(): Event[] {
  const at = { time, turnId: 't1' };
  return [
    { ...at, seq: 1, type: 'turn.started', prompt: 'Publish.' },
    { ...at, seq: 2, type: 'step.started', step: 1 },
    {
      seq: 3,
      time,
      type: 'tool.start',
      callId: 'c1',
      toolName: 'run_code',
      caller: 'direct',
      arguments: { code: 'sdk.tool.call("bash", command="git push")' },
      presentation: { action: 'Run code', remark: '' },
    },
    {
      seq: 4,
      time,
      type: 'tool.start',
      callId: 'c2',
      toolName: 'bash',
      caller: 'code',
      parentCallId: 'c1',
      arguments: { command: 'git push' },
      presentation: { action: 'Run command', remark: 'git push' },
    },
    {
      seq: 5,
      time,
      type: 'tool.start',
      callId: 'c3',
      toolName: 'bash',
      caller: 'direct',
      arguments: { command: 'cargo test' },
      presentation: { action: 'Run command', remark: 'cargo test' },
    },
  ];
}

const DENIED: AutoReviewRecord = {
  reviewer: 'scripted:reviewer.yaml',
  verdict: 'deny',
  risk: 'high',
  userReason: 'pushing publishes the work',
  latencyMs: 3,
  inputTokens: 120,
  outputTokens: 30,
};

const ALLOWED: AutoReviewRecord = { ...DENIED, verdict: 'allow', risk: 'low', userReason: 'tests' };

const GRANT: ReviewGrant = {
  id: 'grant-1',
  callId: 'c2',
  toolName: 'bash',
  arguments: { command: 'git push' },
  grantedAt: time,
};

describe('tool.reviewed', () => {
  test("puts the review on its call's node, root or nested, and nowhere else", () => {
    const fold = foldEvents(turnWithCalls());
    const before = fold.tree();
    const nested = fold.apply({
      seq: 6,
      time,
      type: 'tool.reviewed',
      callId: 'c2',
      parentCallId: 'c1',
      review: DENIED,
    });
    expect(nested).toEqual({ tree: true });
    expect(fold.call('c2')?.review).toEqual(DENIED);
    expect(fold.call('c1')?.review).toBeUndefined();
    fold.apply({ seq: 7, time, type: 'tool.reviewed', callId: 'c3', review: ALLOWED });
    expect(fold.call('c3')?.review).toEqual(ALLOWED);
    // The snapshot before the reviews is left as it was.
    const [turn] = before.turns;
    const first = turn?.items.find((item) => item.type === 'tool');
    expect(first?.type === 'tool' ? first.node.subCalls[0]?.review : 'none').toBeUndefined();
  });

  test('a review of a call the log never started changes nothing', () => {
    const fold = foldEvents(turnWithCalls());
    const tree = fold.tree();
    expect(
      fold.apply({ seq: 6, time, type: 'tool.reviewed', callId: 'nowhere', review: DENIED }),
    ).toEqual({ tree: false });
    expect(fold.tree()).toBe(tree);
  });
});

describe('review.granted', () => {
  test('a grant is found under the refused call, then under the retry that used it', () => {
    const fold = foldEvents(turnWithCalls());
    expect(fold.tree().grants.size).toBe(0);
    fold.apply({ seq: 6, time, type: 'review.granted', grant: GRANT });
    const granted = fold.tree();
    expect(granted.grants.get('c2')).toEqual(GRANT);
    expect(granted.grants.get('c3')).toBeUndefined();
    const used = { ...GRANT, usedBy: 'c9' };
    fold.apply({ seq: 7, time, type: 'review.granted', grant: used });
    expect(fold.tree().grants.get('c2')).toEqual(used);
    expect(fold.tree().grants.get('c9')).toEqual(used);
    // A new map for the new snapshot: the one before does not change.
    expect(granted.grants.get('c9')).toBeUndefined();
  });

  test('grants are not part of the turns the runtime folds', () => {
    const events = turnWithCalls();
    const plain = foldEvents(events).tree().turns;
    const fold = foldEvents([...events, { seq: 6, time, type: 'review.granted', grant: GRANT }]);
    expect(JSON.stringify(fold.tree().turns)).toBe(JSON.stringify(plain));
  });
});

describe('review.circuit_open', () => {
  test('records the paused turn beside the turns, and the turn ends with its message', () => {
    const message = 'Auto review refused 3 calls in a row; the turn is paused.';
    const fold = foldEvents([
      ...turnWithCalls(),
      {
        seq: 6,
        time,
        type: 'review.circuit_open',
        turnId: 't1',
        denialsInARow: 3,
        denialsInWindow: 3,
        message,
      },
      { seq: 7, time, type: 'turn.finished', turnId: 't1', reason: 'interrupted', message },
    ]);
    expect(fold.tree().reviewPauses).toEqual([
      { turnId: 't1', denialsInARow: 3, denialsInWindow: 3, message },
    ]);
    expect(fold.tree().turns[0]).toMatchObject({ finished: 'interrupted', message });
  });

  test('a fold with no pause has none', () => {
    expect(new ConversationFold().tree().reviewPauses).toEqual([]);
  });
});

describe('reading the events', () => {
  test('a review with a verdict it does not know is invalid, naming the field', () => {
    const reading = readEvent({
      seq: 4,
      time,
      type: 'tool.reviewed',
      callId: 'c1',
      review: { ...DENIED, verdict: 'maybe' },
    });
    expect(reading).toEqual({
      kind: 'invalid',
      problem: {
        seq: 4,
        message:
          '`tool.reviewed` event: `review.verdict` should be one of allow, deny, failed, timed_out, got the string "maybe"',
      },
    });
  });

  test('a failed review without a risk, with its fallback, reads as written', () => {
    const review = {
      reviewer: 'scripted:reviewer.yaml',
      verdict: 'failed',
      userReason: 'the reviewer answered no verdict',
      latencyMs: 12,
      inputTokens: 0,
      outputTokens: 0,
      fallback: 'unattended_policy',
    };
    expect(readEvent({ seq: 4, time, type: 'tool.reviewed', callId: 'c1', review })).toEqual({
      kind: 'event',
      event: { seq: 4, time, type: 'tool.reviewed', callId: 'c1', review },
    });
  });

  test('a grant without its call id is invalid', () => {
    const grant: Partial<ReviewGrant> = { ...GRANT };
    delete grant.callId;
    const reading = readEvent({ seq: 5, time, type: 'review.granted', grant });
    expect(reading.kind).toBe('invalid');
    expect(reading.kind === 'invalid' ? reading.problem.message : '').toContain('`grant.callId`');
  });

  test('a circuit opening needs its counts', () => {
    const reading = readEvent({
      seq: 6,
      time,
      type: 'review.circuit_open',
      turnId: 't1',
      denialsInARow: 'three',
      denialsInWindow: 3,
      message: 'paused',
    });
    expect(reading.kind === 'invalid' ? reading.problem.message : '').toContain(
      '`denialsInARow` should be a number',
    );
  });
});
