// The team's task cards as a reader sees them: rendered through the tree, expanded.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test } from 'vitest';
import { madeCall } from '../../../../test-support/calls';
import { renderWithI18n } from '../../../../test-support/render';
import { registerBuiltinToolViews } from '../register';
import type { ToolCallShared } from '../slots';
import { ToolCallTree } from '../tree/ToolCallTree';

/** A call of `toolName`; ended `ok` with `output` unless it is running, or failed. */
const call = madeCall;

/** Renders a call's card, opened; `previous` is the session's previous call of its tool. */
function open(node: ToolNode, locale: Locale = 'en', previous?: ToolNode) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const tool: ToolCallShared = {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: (callId, toolName) =>
      callId === node.callId && toolName === previous?.toolName ? previous : undefined,
  };
  const rendered = renderWithI18n(
    <SlotsProvider registry={registry} shared={{ tool }}>
      <ToolCallTree node={node} />
    </SlotsProvider>,
    locale,
  );
  const row = rendered.container.querySelector<HTMLButtonElement>('button.qp-row__main');
  if (row !== null) fireEvent.click(row);
  return rendered;
}

/** A task record of the agreed shape, with `changes` over a pending unassigned task. */
function task(id: string, changes: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    title: `Task ${id}`,
    status: 'pending',
    blockedBy: [],
    notes: [],
    createdBy: 'lead',
    createdAt: '2026-03-02T08:00:00Z',
    updatedAt: '2026-03-02T08:00:00Z',
    ...changes,
  };
}

const NOTE = { by: 'scout', text: 'Retries live in src/upload.rs.', at: '2026-03-02T08:05:00Z' };

describe('task_create', () => {
  test('the row names the title, the new id and the assignee; open, the task', () => {
    const { container } = open(
      call(
        'call_1',
        'task_create',
        { title: 'Task 2', assignee: 'scout', blockedBy: ['1'], description: 'Read the tests.' },
        {
          output: {
            task: task('2', {
              assignee: 'scout',
              blockedBy: ['1'],
              description: 'Read the tests.',
            }),
          },
        },
      ),
    );
    expect(container.querySelector('.qp-row')).toHaveTextContent('New task');
    expect(container.querySelector('.qp-row')).toHaveTextContent('#2 · scout');
    expect(container.querySelector('[aria-label="Task #2: Task 2"]')).not.toBeNull();
    expect(screen.getByText('Waits for')).toBeInTheDocument();
    expect(screen.getByText('#1')).toBeInTheDocument();
    expect(screen.getByText('Read the tests.')).toBeInTheDocument();
  });

  test('a refusal shows what the runtime said', () => {
    open(
      call(
        'call_1',
        'task_create',
        { title: 'Task 2', blockedBy: ['9'] },
        { status: 'error', text: 'blockedBy names task 9, which does not exist' },
      ),
    );
    expect(screen.getByText(/task 9, which does not exist/)).toBeInTheDocument();
  });

  test('data of another shape keeps the generic card', () => {
    const { container } = open(
      call('call_1', 'task_create', { title: 'Read the tests' }, { output: { task: task('2') } }),
    );
    // The created task has another title than asked for.
    expect(container.querySelector('.qt-task')).toBeNull();
    expect(container.querySelector('.qp-row')).toHaveTextContent('task_create');
  });
});

describe('task_update', () => {
  const update = call(
    'call_2',
    'task_update',
    { id: '1', status: 'completed', assignee: 'builder', note: NOTE.text },
    {
      output: {
        task: task('1', { status: 'completed', assignee: 'builder', notes: [NOTE] }),
        previous: task('1', { status: 'in_progress', assignee: 'scout' }),
      },
    },
  );

  test('the row shows the status before → after; open, the assignees and the note', () => {
    const { container } = open(update);
    expect(container.querySelector('.qp-row')).toHaveTextContent('#1 Task 1');
    expect(container.querySelector('.qp-row')).toHaveTextContent('in progress → done');
    const changes = container.querySelector<HTMLElement>('[aria-label="Changes to task #1"]');
    if (changes === null) throw new Error('no changes shown');
    expect(within(changes).getByText('scout')).toBeInTheDocument();
    expect(within(changes).getByText('builder')).toBeInTheDocument();
    expect(screen.getByText('Note added')).toBeInTheDocument();
    expect(screen.getAllByText(NOTE.text).length).toBeGreaterThan(0);
  });

  test('in Chinese', () => {
    const { container } = open(update, 'zh-CN');
    expect(container.querySelector('.qp-row')).toHaveTextContent('进行中 → 已完成');
    expect(screen.getByText('新增备注')).toBeInTheDocument();
  });
});

describe('task_list', () => {
  const previous = call(
    'call_3',
    'task_list',
    {},
    { output: { tasks: [task('1', { status: 'in_progress', assignee: 'scout' }), task('2')] } },
  );
  const now = call(
    'call_4',
    'task_list',
    {},
    {
      output: {
        tasks: [
          task('1', { status: 'completed', assignee: 'scout' }),
          task('2', { assignee: 'builder' }),
          task('3', { blockedBy: ['2'] }),
        ],
      },
    },
  );

  test('a table of the tasks, each marked against the previous list', () => {
    const { container } = open(now, 'en', previous);
    expect(container.querySelector('.qp-row')).toHaveTextContent('1 of 3 done');
    expect(container.querySelector('.qp-row')).toHaveTextContent(
      'since the last list: 1 added, 1 done, 1 changed',
    );
    const table = screen.getByRole('table', { name: 'The team’s tasks' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((row) => row.getAttribute('data-mark'))).toEqual(['done', 'changed', 'added']);
    expect(within(rows[0] as HTMLElement).getByText('was in progress')).toBeInTheDocument();
    expect(within(rows[1] as HTMLElement).getByText('was with unassigned')).toBeInTheDocument();
    expect(within(rows[2] as HTMLElement).getByText('#2')).toBeInTheDocument();
  });

  test('without a previous list nothing is marked and there is no comparison column', () => {
    open(now);
    const table = screen.getByRole('table', { name: 'The team’s tasks' });
    expect(within(table).queryByText('Since the last list')).toBeNull();
    expect(table.querySelectorAll('[data-mark]')).toHaveLength(0);
  });

  test('in Chinese', () => {
    open(now, 'zh-CN', previous);
    const table = screen.getByRole('table', { name: '团队的任务' });
    expect(within(table).getByText('新完成')).toBeInTheDocument();
    expect(within(table).getByText('新增')).toBeInTheDocument();
  });

  test('data of another shape keeps the generic card', () => {
    const { container } = open(
      call('call_5', 'task_list', {}, { output: { tasks: [task('1'), task('1')] } }),
    );
    expect(container.querySelector('table')).toBeNull();
    expect(container.querySelector('.qp-row')).toHaveTextContent('task_list');
  });
});
