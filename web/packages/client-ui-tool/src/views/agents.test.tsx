// The agent family's cards as a reader sees them: rendered through the tree, expanded.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ChildRecord, ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test } from 'vitest';
import { renderWithI18n } from '../../../../test-support/render';
import { registerBuiltinToolViews } from '../register';
import { ToolCallTree } from '../tree/ToolCallTree';

/** A call of `toolName` with its arguments; ended `ok` with `output` unless it is running. */
function call(toolName: string, args: unknown, output?: unknown, status = 'ok'): ToolNode {
  return {
    callId: 'call_4',
    toolName,
    caller: 'direct',
    phase: output === undefined && status === 'ok' ? 'running' : 'done',
    arguments: args,
    progress: '',
    requests: [],
    ...(output === undefined && status === 'ok'
      ? {}
      : {
          outcome: {
            status: status as 'ok',
            content: [{ type: 'text', text: status === 'ok' ? 'the record' : 'no such agent' }],
            ...(output === undefined ? {} : { output }),
            durationMs: 7,
          },
        }),
    subCalls: [],
  };
}

/** Renders a call's card and opens it. */
function open(node: ToolNode, locale: Locale = 'en') {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const rendered = renderWithI18n(
    <SlotsProvider registry={registry}>
      <ToolCallTree node={node} />
    </SlotsProvider>,
    locale,
  );
  const row = rendered.container.querySelector<HTMLButtonElement>('button.qp-row__main');
  if (row === null) throw new Error('the card does not expand');
  fireEvent.click(row);
  return rendered;
}

const RECORD = {
  sessionId: 'ses_child1',
  agent: 'explore',
  description: 'Find the retry logic',
  background: false,
  status: 'completed',
  answer: 'Uploads retry in src/upload.rs.',
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

const ARGS = {
  agent: 'explore',
  prompt: 'Find where uploads retry.',
  description: RECORD.description,
};

describe('agent card', () => {
  test('a foreground child: description on the row, its answer, record and link', () => {
    open(call('agent', ARGS, RECORD));
    expect(
      screen.getByRole('button', { name: /Agent.*Find the retry logic.*explore · foreground/ }),
    ).toBeVisible();
    expect(screen.getByText('Uploads retry in src/upload.rs.')).toBeVisible();
    expect(screen.getByText('Find where uploads retry.')).toBeVisible();
    const record = screen.getByRole('group', { name: 'Agent' }).querySelector('dl');
    expect(record).not.toBeNull();
    const facts = within(record as HTMLElement);
    expect(facts.getByText('completed')).toBeVisible();
    expect(facts.getByText('3')).toBeVisible();
    expect(facts.getByText('12.4K in · 830 out')).toBeVisible();
    expect(facts.getByText('$0.0042')).toBeVisible();
    expect(facts.getByText('5.2 sec')).toBeVisible();
    expect(screen.getByRole('link', { name: 'Open the child session' })).toHaveAttribute(
      'href',
      '/sessions/ses_child1',
    );
  });

  test('a child that ran out of budget: a capsule beside the row, the error shown', () => {
    const { container } = open(
      call('agent', ARGS, {
        ...RECORD,
        status: 'out_of_budget',
        answer: undefined,
        error: 'step budget of 3 used',
      }),
    );
    expect(container.querySelector('.qp-capsule')?.textContent).toBe('out of budget');
    expect(screen.getByText('step budget of 3 used')).toBeVisible();
    expect(screen.queryByText('It gave no answer.')).toBeNull();
  });

  test('a background start: a receipt with no state dot, and where its result comes', () => {
    const { container } = open(
      call(
        'agent',
        { ...ARGS, background: true },
        { ...RECORD, background: true, status: 'running', answer: undefined },
      ),
    );
    expect(container.querySelector('.qp-row')?.getAttribute('data-state')).toBe('receipt');
    expect(screen.getByText(/its result comes through agent_wait/)).toBeVisible();
    expect(screen.getByRole('link', { name: 'Open the child session' })).toBeVisible();
    expect(screen.queryByText('It gave no answer.')).toBeNull();
  });

  test('a teammate: a receipt that says it stays, idle between turns; no answer asked for', () => {
    open(
      call(
        'agent',
        { ...ARGS, name: 'scout', background: true },
        { ...RECORD, name: 'scout', background: true, status: 'idle', answer: undefined },
      ),
    );
    expect(screen.getByText(/Started as the teammate scout/)).toBeVisible();
    expect(screen.getByRole('link', { name: 'Open the session of scout' })).toBeVisible();
    expect(screen.getByText('idle')).toBeVisible();
    expect(screen.queryByText('It gave no answer.')).toBeNull();
  });

  test('in Chinese', () => {
    open(call('agent', ARGS, RECORD), 'zh-CN');
    expect(
      screen.getByRole('button', { name: /子代理.*Find the retry logic.*explore · 前台/ }),
    ).toBeVisible();
    expect(screen.getByText('已完成')).toBeVisible();
    expect(screen.getByText('输入 1.24万 · 输出 830')).toBeVisible();
    expect(screen.getByRole('link', { name: '打开子会话' })).toBeVisible();
  });

  test('a failed call keeps its input and error; a record of another shape is generic', () => {
    open(call('agent', ARGS, undefined, 'error'));
    expect(screen.getByRole('button', { name: /Agent.*Find the retry logic/ })).toBeVisible();
    expect(screen.getByText('no such agent')).toBeVisible();
  });

  test('a record of another shape shows the generic card', () => {
    open(call('agent', ARGS, { sessionId: 'ses_child1' }));
    expect(screen.getByRole('button', { name: /Tool call.*agent/ })).toBeVisible();
  });
});

describe('agent_wait card', () => {
  test('finished children with their answers, the ones still running, the timeout', () => {
    open(
      call(
        'agent_wait',
        { timeout_ms: 30_000 },
        { finished: [RECORD], running: ['ses_child2'], timedOut: true },
      ),
    );
    expect(
      screen.getByRole('button', {
        name: /Wait for agents.*every running child · at most 30 sec.*timed out: 1 finished, 1 running/,
      }),
    ).toBeVisible();
    expect(screen.getByRole('link', { name: 'Find the retry logic' })).toHaveAttribute(
      'href',
      '/sessions/ses_child1',
    );
    expect(screen.getByText('Uploads retry in src/upload.rs.')).toBeVisible();
    expect(screen.getByRole('link', { name: 'ses_child2' })).toHaveAttribute(
      'href',
      '/sessions/ses_child2',
    );
    expect(screen.getByText('The wait timed out before every child finished.')).toBeVisible();
  });
});

describe('agent_list card', () => {
  test('a small table: name or description, agent, status, steps, tokens', () => {
    open(
      call(
        'agent_list',
        {},
        {
          children: [
            RECORD,
            { ...RECORD, sessionId: 'ses_child2', name: 'scout', status: 'running', steps: 1 },
          ],
        },
      ),
    );
    expect(screen.getByRole('button', { name: /Agents.*2 children, 1 running/ })).toBeVisible();
    const table = screen.getByRole('table', { name: 'Children of this session' });
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    const cells = (row: number) =>
      within(rows[row] as HTMLElement)
        .getAllByRole('cell')
        .map((cell) => cell.textContent);
    expect(cells(1)).toEqual(['Find the retry logic', 'explore', 'completed', '3', '13.2K']);
    expect(cells(2)).toEqual(['scout · Find the retry logic', 'explore', 'running', '1', '13.2K']);
    expect(within(table).getByRole('link', { name: 'scout' })).toHaveAttribute(
      'href',
      '/sessions/ses_child2',
    );
  });

  test('an idle teammate: its own quiet status, not done, counted on the row', () => {
    const { container } = open(
      call(
        'agent_list',
        {},
        {
          children: [
            RECORD,
            { ...RECORD, sessionId: 'ses_t1', name: 'scout', background: true, status: 'idle' },
          ],
        },
      ),
    );
    expect(
      screen.getByRole('button', { name: /Agents.*2 children, 0 running, 1 idle/ }),
    ).toBeVisible();
    const idle = container.querySelector('tr[data-status="idle"]');
    expect(idle).toHaveTextContent('idle');
    expect(idle).not.toHaveTextContent('completed');
    expect(idle?.querySelector('.qp-dot--idle')).not.toBeNull();
    expect(idle?.querySelector('.qp-dot--ok')).toBeNull();
  });

  test('in Chinese, with no children', () => {
    open(call('agent_list', {}, { children: [] }), 'zh-CN');
    expect(
      screen.getByRole('button', { name: /子代理列表.*0 个子代理，0 个运行中/ }),
    ).toBeVisible();
    expect(screen.getByText('此会话没有子代理。')).toBeVisible();
  });
});

describe('agent_stop card', () => {
  test('an interrupt receipt: no state dot, the request confirmed', () => {
    const { container } = open(
      call('agent_stop', { id: 'ses_child1' }, { ...RECORD, status: 'interrupted' }),
    );
    expect(container.querySelector('.qp-row')?.getAttribute('data-state')).toBe('receipt');
    expect(screen.getByText('An interrupt was requested for ses_child1.')).toBeVisible();
  });

  test('a child that had already ended', () => {
    open(call('agent_stop', { id: 'ses_child1' }, RECORD), 'zh-CN');
    expect(screen.getByText(/ses_child1 已经结束：没有中断任何内容。/)).toBeVisible();
    expect(screen.getByText('已完成')).toBeVisible();
  });
});

describe('agent_send card', () => {
  test('to whom, queued, the message and the child’s session', () => {
    open(
      call(
        'agent_send',
        { to: 'scout', message: 'Also check the tests.' },
        { to: 'scout', sessionId: 'ses_child2', delivered: 'queued' },
      ),
    );
    expect(screen.getByRole('button', { name: /Message agent.*scout.*queued/ })).toBeVisible();
    expect(screen.getByText('Queued: the child reads it before its next step.')).toBeVisible();
    expect(screen.getByText('Also check the tests.')).toBeVisible();
    expect(screen.getByRole('link', { name: 'Open the child session' })).toHaveAttribute(
      'href',
      '/sessions/ses_child2',
    );
  });

  test('while running: to whom, not yet delivered', () => {
    const { container } = renderWithI18n(
      (() => {
        const registry = new SlotRegistry();
        registerBuiltinToolViews({ slots: registry });
        return (
          <SlotsProvider registry={registry}>
            <ToolCallTree node={call('agent_send', { to: 'scout', message: 'hi' })} />
          </SlotsProvider>
        );
      })(),
    );
    expect(container.querySelector('.qp-row')?.getAttribute('data-state')).toBe('running');
    expect(screen.queryByText(/delivered|queued/)).toBeNull();
  });
});
