// The session query cards as a reader sees them: rendered through the tree, expanded.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test } from 'vitest';
import { renderWithI18n } from '../../../../test-support/render';
import { formatTime } from '../models/sessionLink';
import { registerBuiltinToolViews } from '../register';
import { ToolCallTree } from '../tree/ToolCallTree';

/** A finished call of `toolName` with its arguments and recorded output. */
function call(toolName: string, args: unknown, output: unknown): ToolNode {
  return {
    callId: 'call_9',
    toolName,
    caller: 'direct',
    phase: 'done',
    arguments: args,
    progress: '',
    requests: [],
    outcome: {
      status: 'ok',
      content: [{ type: 'text', text: 'recorded data from session s-42' }],
      output,
      durationMs: 7,
    },
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

const TIME = '2026-12-02T05:00:00Z';

describe('session_search card', () => {
  const node = call(
    'session_search',
    { query: 'retry' },
    {
      query: 'retry',
      hits: [
        {
          session: 's-42',
          title: 'Retry logic',
          seq: 123,
          turn: 3,
          callId: 'call_7',
          tool: 'edit',
          field: 'arguments',
          snippet: 'change the «retry» delay',
          time: TIME,
          score: 2,
        },
        {
          session: 's-7',
          title: '',
          seq: 4,
          turn: 1,
          callId: null,
          tool: null,
          field: 'prompt',
          snippet: 'why does «retry» loop',
          time: TIME,
          score: 1,
        },
      ],
      truncated: false,
    },
  );

  test('each hit: its session as a link to the card, the match highlighted, tool and time', () => {
    open(node);
    expect(screen.getByRole('button', { name: /Search sessions.*retry.*2 hits/ })).toBeVisible();
    const hits = within(screen.getByRole('list', { name: 'Hits for retry' })).getAllByRole(
      'listitem',
    );
    expect(hits).toHaveLength(2);
    const first = within(hits[0] as HTMLElement);
    expect(first.getByRole('link', { name: 'Retry logic' })).toHaveAttribute(
      'href',
      '/sessions/s-42?at=call:call_7',
    );
    expect((hits[0] as HTMLElement).querySelector('mark')?.textContent).toBe('retry');
    expect(first.getByText('arguments of edit')).toBeVisible();
    const time = (hits[0] as HTMLElement).querySelector('time');
    expect(time).toHaveAttribute('dateTime', TIME);
    expect(time?.textContent).toBe(formatTime(TIME, 'en'));
    const second = within(hits[1] as HTMLElement);
    expect(second.getByRole('link', { name: 'Untitled session' })).toHaveAttribute(
      'href',
      '/sessions/s-7?at=seq:4',
    );
    expect(second.getByText('prompt')).toBeVisible();
  });

  test('in Chinese', () => {
    open(node, 'zh-CN');
    expect(screen.getByRole('button', { name: /搜索会话.*retry.*2 条结果/ })).toBeVisible();
    expect(screen.getByText('edit 的参数')).toBeVisible();
    expect(screen.getByRole('link', { name: '未命名会话' })).toBeVisible();
  });

  test('a result of another shape shows the generic card', () => {
    open(call('session_search', { query: 'retry' }, { hits: 'many' }));
    expect(screen.getByRole('button', { name: /Tool call.*session_search/ })).toBeVisible();
    expect(screen.getByText('recorded data from session s-42')).toBeVisible();
  });
});

describe('session_events card', () => {
  test('the compact list with links, and where the page stands', () => {
    open(
      call(
        'session_events',
        { session: 's-42' },
        {
          session: 's-42',
          title: 'Retry logic',
          events: [
            { seq: 5, time: TIME, type: 'turn.started', turn: 1, callId: null, text: 'prompt: go' },
            {
              seq: 6,
              time: TIME,
              type: 'tool.start',
              turn: 1,
              callId: 'call_1',
              text: 'edit a.rs',
            },
          ],
          next: 57,
        },
      ),
    );
    expect(
      screen.getByRole('button', { name: /Session events.*Retry logic.*2 events/ }),
    ).toBeVisible();
    const list = screen.getByRole('list', { name: 'Events of Retry logic' });
    expect(within(list).getByRole('link', { name: 'Open event 6 in its session' })).toHaveAttribute(
      'href',
      '/sessions/s-42?at=call:call_1',
    );
    expect(within(list).getByText('edit a.rs')).toBeVisible();
    expect(screen.getByText('events 5–6 · more after event 57')).toBeVisible();
  });
});

describe('session_trajectory card', () => {
  test('descendants keep their indentation, with statuses and durations', () => {
    const node = (depth: number, kind: string, extra: Record<string, unknown>) => ({
      depth,
      kind,
      turn: 2,
      callId: null,
      tool: null,
      status: null,
      summary: `${kind} ${depth}`,
      startedAt: null,
      durationMs: null,
      ...extra,
    });
    const { container } = open(
      call(
        'session_trajectory',
        { session: 's-42' },
        {
          session: 's-42',
          title: 'Retry logic',
          turn: null,
          call: null,
          nodes: [
            node(0, 'turn', { status: 'ok', startedAt: TIME, durationMs: 4100 }),
            node(1, 'call', { callId: 'call_1', tool: 'run_code', status: 'ok', durationMs: 3000 }),
            node(2, 'call', { callId: 'call_1.1', tool: 'read', status: 'error', durationMs: 3 }),
            node(1, 'text', {}),
          ],
          truncated: true,
          spill: '/tmp/trajectory.txt',
        },
      ),
    );
    const tree = screen.getByRole('list', { name: 'Trajectory of Retry logic' });
    // The nested read is inside run_code's list, itself inside the turn's.
    const read = within(tree).getByRole('link', { name: 'read' }).closest('li');
    const runCode = read?.parentElement?.closest('li');
    expect(runCode?.getAttribute('data-depth')).toBe('1');
    expect(runCode?.parentElement?.closest('li')?.getAttribute('data-kind')).toBe('turn');
    expect(read?.getAttribute('data-depth')).toBe('2');
    expect(within(read as HTMLElement).getByRole('img', { name: 'Failed' })).toBeVisible();
    expect(within(read as HTMLElement).getByText('3 ms')).toBeVisible();
    expect(within(tree).getByRole('link', { name: 'run_code' })).toHaveAttribute(
      'href',
      '/sessions/s-42?at=call:call_1',
    );
    expect(container.querySelectorAll('[data-depth="1"]')).toHaveLength(2);
    expect(screen.getByText('The whole session')).toBeVisible();
    expect(
      screen.getByText('Cut at the limit; the whole tree is in /tmp/trajectory.txt'),
    ).toBeVisible();
  });
});
