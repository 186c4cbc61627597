// The agent family's card models, on calls built here with the agreed output shapes.
import type { ChildRecord } from '@qilin-agent/protocol';
import { describe, expect, test } from 'vitest';
import {
  agentListModel,
  agentModel,
  agentSendModel,
  agentStopModel,
  agentWaitModel,
  childAlive,
  childDot,
  childRow,
  formatCost,
  formatTokens,
} from './agents';
import type { CardInput } from './common';

/** A call of `toolName` that ended with `status` and recorded `output`. */
function ended(
  toolName: string,
  args: unknown,
  output: unknown,
  status: 'ok' | 'error' | 'interrupted' = 'ok',
): CardInput {
  return {
    toolName,
    phase: 'result',
    arguments: args,
    result: {
      status,
      content: [{ type: 'text', text: status === 'ok' ? 'recorded text' : 'no such agent' }],
      ...(status === 'ok' ? { output } : {}),
      durationMs: 4,
    },
  };
}

/** A call of `toolName` still running. */
function running(toolName: string, args: unknown, extra: Partial<CardInput> = {}): CardInput {
  return { toolName, phase: 'start', arguments: args, progress: '', ...extra };
}

const RECORD = {
  sessionId: 'ses_child1',
  agent: 'explore',
  description: 'Find the retry logic',
  background: false,
  status: 'completed',
  answer: 'The retry logic is in src/upload.rs, lines 40–62.',
  steps: 3,
  usage: {
    inputTokens: 12_400,
    outputTokens: 830,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0.0042,
  },
  durationMs: 5_200,
} satisfies ChildRecord;

const AGENT_ARGS = {
  agent: 'explore',
  prompt: 'Find where uploads are retried and say how.',
  description: 'Find the retry logic',
};

describe('child records', () => {
  test('a record reads into a row with its link', () => {
    expect(childRow(RECORD)).toEqual({
      sessionId: 'ses_child1',
      agent: 'explore',
      description: 'Find the retry logic',
      background: false,
      status: 'completed',
      answer: 'The retry logic is in src/upload.rs, lines 40–62.',
      steps: 3,
      inputTokens: 12_400,
      outputTokens: 830,
      costUsd: 0.0042,
      durationMs: 5_200,
      href: '/sessions/ses_child1',
    });
  });

  test.each([
    ['an unknown status', { ...RECORD, status: 'sleeping' }, 'status'],
    ['a negative step count', { ...RECORD, steps: -1 }, 'steps'],
    [
      'tokens that are not a count',
      { ...RECORD, usage: { inputTokens: 'many', outputTokens: 1 } },
      'inputTokens',
    ],
    ['a negative cost', { ...RECORD, usage: { ...RECORD.usage, costUsd: -1 } }, 'costUsd'],
    ['an empty session id', { ...RECORD, sessionId: ' ' }, 'sessionId'],
    ['no usage', { ...RECORD, usage: undefined }, 'usage'],
  ])('%s is refused, naming the field', (_, record, field) => {
    expect(() => childRow(record, 'output')).toThrow(field);
  });

  test('a child session id with reserved characters is encoded in its link', () => {
    expect(childRow({ ...RECORD, sessionId: 'a/b?c' }).href).toBe('/sessions/a%2Fb%3Fc');
  });

  test('each status has its static colour', () => {
    expect(childDot('running')).toBe('running');
    expect(childDot('completed')).toBe('ok');
    expect(childDot('failed')).toBe('error');
    expect(childDot('out_of_budget')).toBe('error');
    expect(childDot('interrupted')).toBe('interrupted');
  });

  test('tokens and costs in the viewer’s numbers', () => {
    expect(formatTokens(950, 'en')).toBe('950');
    expect(formatTokens(12_400, 'en')).toBe('12.4K');
    expect(formatTokens(1_250, 'en')).toBe('1.25K');
    expect(formatTokens(12_400, 'zh-CN')).toBe('1.24万');
    expect(formatCost(0.0042, 'en')).toBe('$0.0042');
    expect(formatCost(1.5, 'en')).toBe('$1.50');
    expect(formatCost(0, 'en')).toBe('$0.00');
  });
});

describe('agent', () => {
  test('while preparing: identity only', () => {
    expect(agentModel({ toolName: 'agent', phase: 'preparing' })).toEqual({
      kind: 'agent',
      state: 'preparing',
    });
  });

  test('while running: the description, agent and mode; the child once linked', () => {
    const before = agentModel(running('agent', AGENT_ARGS));
    expect(before).toMatchObject({
      kind: 'agent',
      state: 'running',
      description: 'Find the retry logic',
      agent: 'explore',
      background: false,
    });
    expect(before).not.toHaveProperty('href');
    const linked = agentModel(
      running('agent', AGENT_ARGS, {
        child: {
          sessionId: 'ses_child1',
          agent: 'explore',
          description: 'Find the retry logic',
          background: false,
        },
      }),
    );
    expect(linked).toMatchObject({ childSessionId: 'ses_child1', href: '/sessions/ses_child1' });
  });

  test('a foreground child that completed: its record, the call’s state, no capsule', () => {
    const model = agentModel(ended('agent', AGENT_ARGS, RECORD));
    expect(model).toMatchObject({
      kind: 'agent',
      state: 'ok',
      childSessionId: 'ses_child1',
      href: '/sessions/ses_child1',
      record: { status: 'completed', steps: 3 },
    });
    expect(model).not.toHaveProperty('capsule');
  });

  test.each(['failed', 'interrupted', 'out_of_budget'] as const)(
    'a foreground child that ended %s: a capsule, the row stays the call’s',
    (status) => {
      const model = agentModel(
        ended('agent', AGENT_ARGS, { ...RECORD, status, answer: undefined, error: 'stopped' }),
      );
      expect(model).toMatchObject({
        state: 'ok',
        capsule: { key: `agents.status.${status}` },
        record: { error: 'stopped' },
      });
    },
  );

  test('a background start is a receipt with no capsule', () => {
    const args = { ...AGENT_ARGS, name: 'scout', background: true };
    const model = agentModel(
      ended('agent', args, { ...RECORD, name: 'scout', background: true, status: 'running' }),
    );
    expect(model).toMatchObject({ state: 'receipt', name: 'scout', background: true });
    expect(model).not.toHaveProperty('capsule');
  });

  test('a record of another child than the call linked falls back to the generic card', () => {
    const input = {
      ...ended('agent', AGENT_ARGS, RECORD),
      child: {
        sessionId: 'ses_other',
        agent: 'explore',
        description: 'Find the retry logic',
        background: false,
      },
    };
    expect(agentModel(input).kind).toBe('generic');
  });

  test('a record that disagrees with the arguments on the background is refused', () => {
    expect(agentModel(ended('agent', AGENT_ARGS, { ...RECORD, background: true })).kind).toBe(
      'generic',
    );
  });

  test('arguments without an agent or a description fall back to the generic card', () => {
    expect(agentModel(running('agent', { ...AGENT_ARGS, agent: '' })).kind).toBe('generic');
    expect(agentModel(running('agent', { agent: 'explore', prompt: 'x' })).kind).toBe('generic');
  });

  test('a failed call keeps the card with its plain input and error', () => {
    const model = agentModel(ended('agent', AGENT_ARGS, undefined, 'error'));
    expect(model).toMatchObject({ kind: 'agent', state: 'error', body: { kind: 'plain' } });
    expect(model.kind === 'agent' && model.body?.output).toBe('no such agent');
  });
});

describe('agent_wait', () => {
  const output = {
    finished: [RECORD],
    running: ['ses_child2'],
    timedOut: true,
  };

  test('counts, each finished record, the ids still running, the timeout', () => {
    const model = agentWaitModel(
      ended('agent_wait', { ids: ['ses_child1', 'ses_child2'], timeout_ms: 30_000 }, output),
    );
    expect(model).toMatchObject({
      kind: 'agentWait',
      state: 'ok',
      ids: ['ses_child1', 'ses_child2'],
      timeoutMs: 30_000,
      suffix: { key: 'agents.wait.timedOutCounts', values: { finished: 1, running: 1 } },
      finished: [{ sessionId: 'ses_child1' }],
      running: [{ sessionId: 'ses_child2', href: '/sessions/ses_child2' }],
      timedOut: true,
    });
  });

  test('with no ids it waits for every running child', () => {
    const model = agentWaitModel(
      ended('agent_wait', {}, { finished: [RECORD], running: [], timedOut: false }),
    );
    expect(model).toMatchObject({ suffix: { key: 'agents.wait.counts' } });
    expect(model).not.toHaveProperty('ids');
  });

  test('a child named by its name counts as waited for', () => {
    const named = { ...RECORD, name: 'scout' };
    const model = agentWaitModel(
      ended('agent_wait', { ids: ['scout'] }, { finished: [named], running: [], timedOut: false }),
    );
    expect(model.kind).toBe('agentWait');
  });

  test('a finished child the call did not wait for is not the agreed shape', () => {
    const model = agentWaitModel(ended('agent_wait', { ids: ['ses_child2'] }, output));
    expect(model.kind).toBe('generic');
  });

  test('a child both finished and running is not the agreed shape', () => {
    const model = agentWaitModel(
      ended('agent_wait', {}, { finished: [RECORD], running: ['ses_child1'], timedOut: false }),
    );
    expect(model.kind).toBe('generic');
  });

  test('ids that are not session ids fall back to the generic card', () => {
    expect(agentWaitModel(running('agent_wait', { ids: [3] })).kind).toBe('generic');
    expect(agentWaitModel(running('agent_wait', { timeout_ms: -5 })).kind).toBe('generic');
  });
});

describe('agent_list', () => {
  test('how many children and how many run; a row each', () => {
    const second = { ...RECORD, sessionId: 'ses_child2', status: 'running', answer: undefined };
    const model = agentListModel(ended('agent_list', {}, { children: [RECORD, second] }));
    expect(model).toMatchObject({
      kind: 'agentList',
      state: 'ok',
      suffix: { key: 'agents.list.counts', values: { count: 2, running: 1 } },
      children: [{ sessionId: 'ses_child1' }, { sessionId: 'ses_child2', status: 'running' }],
    });
  });

  test('idle teammates are counted apart from the running children, and are not done', () => {
    const teammate = (sessionId: string, name: string, status: string) => ({
      ...RECORD,
      sessionId,
      name,
      background: true,
      status,
    });
    const model = agentListModel(
      ended(
        'agent_list',
        {},
        {
          children: [
            RECORD,
            teammate('ses_t1', 'scout', 'idle'),
            teammate('ses_t2', 'builder', 'running'),
            teammate('ses_t3', 'critic', 'idle'),
          ],
        },
      ),
    );
    expect(model).toMatchObject({
      suffix: { key: 'agents.list.countsIdle', values: { count: 4, running: 1, idle: 2 } },
      children: [
        { status: 'completed' },
        { status: 'idle' },
        { status: 'running' },
        { status: 'idle' },
      ],
    });
    expect(childDot('idle')).toBe('idle');
    expect(childAlive('idle')).toBe(true);
    expect(childAlive('completed')).toBe(false);
  });

  test('a child record of another shape falls back to the generic card', () => {
    const model = agentListModel(ended('agent_list', {}, { children: [{ sessionId: 'x' }] }));
    expect(model.kind).toBe('generic');
  });
});

describe('agent_stop', () => {
  test('an interrupt receipt that confirms the request, and nothing more', () => {
    const model = agentStopModel(
      ended('agent_stop', { id: 'ses_child1' }, { ...RECORD, status: 'interrupted' }),
    );
    expect(model).toEqual({
      kind: 'agentStop',
      state: 'receipt',
      target: 'ses_child1',
      href: '/sessions/ses_child1',
      confirmation: { key: 'interrupt.requested', values: { target: 'ses_child1' } },
    });
  });

  test('a child that had already ended was not interrupted, and the card says so', () => {
    const model = agentStopModel(ended('agent_stop', { id: 'ses_child1' }, RECORD));
    expect(model).toMatchObject({
      state: 'receipt',
      confirmation: { key: 'agents.stop.alreadyEnded' },
      endedAs: 'completed',
    });
  });

  test('a record of another child falls back to the generic card', () => {
    const model = agentStopModel(ended('agent_stop', { id: 'ses_other' }, RECORD));
    expect(model.kind).toBe('generic');
  });

  test('a failed stop (an unknown child) keeps its plain input and error, not a receipt', () => {
    const model = agentStopModel(ended('agent_stop', { id: 'ses_gone' }, undefined, 'error'));
    expect(model).toMatchObject({ state: 'error', body: { output: 'no such agent' } });
  });
});

describe('agent_send', () => {
  test.each(['now', 'queued'] as const)('delivered %s', (delivered) => {
    const model = agentSendModel(
      ended(
        'agent_send',
        { to: 'scout', message: 'Also check the tests.' },
        { to: 'scout', sessionId: 'ses_child1', delivered },
      ),
    );
    expect(model).toEqual({
      kind: 'agentSend',
      state: 'ok',
      to: 'scout',
      message: 'Also check the tests.',
      delivered,
      href: '/sessions/ses_child1',
    });
  });

  test('a receipt for another recipient or an unknown delivery is not the agreed shape', () => {
    const args = { to: 'scout', message: 'hi' };
    expect(
      agentSendModel(
        ended('agent_send', args, { to: 'other', sessionId: 'ses_1', delivered: 'now' }),
      ).kind,
    ).toBe('generic');
    expect(
      agentSendModel(
        ended('agent_send', args, { to: 'scout', sessionId: 'ses_1', delivered: 'later' }),
      ).kind,
    ).toBe('generic');
  });
});
