// The team's task card models, on calls built here with the agreed output shapes.
import { describe, expect, test } from 'vitest';
import type { CardInput } from './common';
import {
  compareTasks,
  taskCreateModel,
  taskDot,
  taskListModel,
  taskRow,
  taskUpdateModel,
  type TaskRow,
} from './tasks';

/** A call of `toolName` that ended with `status` and recorded `output`. */
function ended(
  toolName: string,
  args: unknown,
  output: unknown,
  status: 'ok' | 'error' = 'ok',
): CardInput {
  return {
    toolName,
    phase: 'result',
    arguments: args,
    result: {
      status,
      content: [{ type: 'text', text: status === 'ok' ? 'recorded text' : 'unknown task 9' }],
      ...(status === 'ok' ? { output } : {}),
      durationMs: 3,
    },
  };
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

describe('taskRow', () => {
  test('reads a record, dropping an empty description and assignee', () => {
    const row = taskRow(
      task('2', { description: '', assignee: 'scout', blockedBy: ['1'], notes: [NOTE] }),
    );
    expect(row).toEqual({
      id: '2',
      title: 'Task 2',
      status: 'pending',
      assignee: 'scout',
      blockedBy: ['1'],
      notes: [NOTE],
      createdBy: 'lead',
      createdAt: '2026-03-02T08:00:00Z',
      updatedAt: '2026-03-02T08:00:00Z',
    });
  });

  test.each([
    ['an unknown status', { status: 'blocked' }],
    ['a blocker that is not an id', { blockedBy: [3] }],
    ['a task blocked by itself', { blockedBy: ['1'] }],
    ['a note without its author', { notes: [{ ...NOTE, by: '' }] }],
    ['a time that is not one', { createdAt: 'yesterday' }],
    ['no notes list', { notes: undefined }],
  ])('refuses %s', (_, changes) => {
    expect(() => taskRow(task('1', changes))).toThrow();
  });

  test('gives each status its own dot', () => {
    expect(
      new Set(['pending', 'in_progress', 'completed', 'cancelled'].map((s) => taskDot(s as never)))
        .size,
    ).toBe(4);
  });
});

describe('taskCreateModel', () => {
  const args = { title: 'Task 3', assignee: 'scout', blockedBy: ['1'] };

  test('shows the title while running and the created task once ended', () => {
    const running = taskCreateModel({ toolName: 'task_create', phase: 'start', arguments: args });
    expect(running).toMatchObject({ kind: 'taskCreate', state: 'running', title: 'Task 3' });
    expect(running).not.toHaveProperty('task');
    const model = taskCreateModel(
      ended('task_create', args, { task: task('3', { assignee: 'scout', blockedBy: ['1'] }) }),
    );
    expect(model).toMatchObject({
      kind: 'taskCreate',
      state: 'ok',
      assignee: 'scout',
      task: { id: '3', assignee: 'scout', blockedBy: ['1'] },
    });
  });

  test('a refusal shows the plain body', () => {
    const model = taskCreateModel(ended('task_create', args, undefined, 'error'));
    expect(model).toMatchObject({ kind: 'taskCreate', state: 'error' });
    expect(model.kind === 'taskCreate' && model.body?.output).toBe('unknown task 9');
  });

  test.each([
    ['another title', { task: task('3', { title: 'Other', assignee: 'scout' }) }],
    ['another assignee', { task: task('3', { assignee: 'lead' }) }],
    ['no task', {}],
  ])('falls back to the generic card for a task of %s', (_, output) => {
    expect(taskCreateModel(ended('task_create', args, output)).kind).toBe('generic');
  });

  test('falls back for arguments without a title', () => {
    expect(
      taskCreateModel({ toolName: 'task_create', phase: 'start', arguments: { title: ' ' } }).kind,
    ).toBe('generic');
  });
});

describe('taskUpdateModel', () => {
  test('a status change is before → after, with the note the call added', () => {
    const model = taskUpdateModel(
      ended(
        'task_update',
        { id: '2', status: 'completed', note: NOTE.text },
        {
          task: task('2', { status: 'completed', assignee: 'scout', notes: [NOTE] }),
          previous: task('2', { status: 'in_progress', assignee: 'scout' }),
        },
      ),
    );
    expect(model).toMatchObject({
      kind: 'taskUpdate',
      state: 'ok',
      id: '2',
      note: NOTE.text,
      status: { before: 'in_progress', after: 'completed' },
    });
    expect(model).not.toHaveProperty('assignee');
    expect(model).not.toHaveProperty('suffix');
  });

  test('a reassignment names both assignees; none is absent', () => {
    const model = taskUpdateModel(
      ended(
        'task_update',
        { id: '1', assignee: 'scout' },
        { task: task('1', { assignee: 'scout' }), previous: task('1') },
      ),
    );
    expect(model).toMatchObject({
      assignee: { after: 'scout' },
      suffix: { key: 'tasks.update.reassigned' },
    });
    expect(model.kind === 'taskUpdate' && model.assignee).not.toHaveProperty('before');
  });

  test('a note alone says so on the row', () => {
    const model = taskUpdateModel(
      ended(
        'task_update',
        { id: '1', note: NOTE.text },
        { task: task('1', { notes: [NOTE] }), previous: task('1') },
      ),
    );
    expect(model).toMatchObject({ suffix: { key: 'tasks.update.noted' } });
  });

  test.each([
    ['another task', { task: task('3'), previous: task('3') }],
    ['a status other than asked', { task: task('1'), previous: task('1') }],
    ['no previous task', { task: task('1', { status: 'in_progress' }) }],
  ])('falls back to the generic card for %s', (_, output) => {
    expect(
      taskUpdateModel(ended('task_update', { id: '1', status: 'in_progress' }, output)).kind,
    ).toBe('generic');
  });

  test('falls back when the task is not with the assignee asked for', () => {
    expect(
      taskUpdateModel(
        ended(
          'task_update',
          { id: '1', assignee: 'scout' },
          { task: task('1', { assignee: 'builder' }), previous: task('1') },
        ),
      ).kind,
    ).toBe('generic');
  });

  test('falls back when the note the call added is missing', () => {
    expect(
      taskUpdateModel(
        ended('task_update', { id: '1', note: 'seen' }, { task: task('1'), previous: task('1') }),
      ).kind,
    ).toBe('generic');
  });

  test('an unknown status asked for is not the agreed shape', () => {
    expect(
      taskUpdateModel({
        toolName: 'task_update',
        phase: 'start',
        arguments: { id: '1', status: 'done' },
      }).kind,
    ).toBe('generic');
  });
});

describe('compareTasks', () => {
  const rows = (...records: Record<string, unknown>[]): TaskRow[] =>
    records.map((record) => taskRow(record));

  test('marks nothing without a previous list', () => {
    expect(compareTasks(rows(task('1')), undefined)[0]).not.toHaveProperty('mark');
  });

  test('marks added, done, changed and unchanged tasks', () => {
    const before = rows(
      task('1', { status: 'in_progress', assignee: 'scout' }),
      task('2'),
      task('3'),
    );
    const now = rows(
      task('1', { status: 'completed', assignee: 'scout' }),
      task('2', { assignee: 'builder' }),
      task('3'),
      task('4'),
    );
    const compared = compareTasks(now, before);
    expect(compared.map((row) => row.mark)).toEqual(['done', 'changed', 'unchanged', 'added']);
    expect(compared[0]).toMatchObject({ previousStatus: 'in_progress' });
    expect(compared[0]).not.toHaveProperty('previousAssignee');
    expect(compared[1]).toMatchObject({ previousAssignee: null });
    expect(compared[1]).not.toHaveProperty('previousStatus');
  });

  test('a new note or blocker is a change; a task reopened from done is a change', () => {
    const compared = compareTasks(
      rows(task('1', { notes: [NOTE] }), task('2', { blockedBy: ['1'] }), task('3')),
      rows(task('1'), task('2'), task('3', { status: 'completed' })),
    );
    expect(compared.map((row) => row.mark)).toEqual(['changed', 'changed', 'changed']);
    expect(compared[2]).toMatchObject({ previousStatus: 'completed' });
  });
});

describe('taskListModel', () => {
  const listed = (tasks: unknown[]) => ended('task_list', {}, { tasks });

  test('counts what is done of the tasks not cancelled; no comparison without a previous list', () => {
    const model = taskListModel(
      listed([task('1', { status: 'completed' }), task('2'), task('3', { status: 'cancelled' })]),
    );
    expect(model).toMatchObject({
      kind: 'taskList',
      summary: { key: 'tasks.list.progress', values: { completed: 1, total: 2 } },
      compared: false,
    });
    expect(model).not.toHaveProperty('suffix');
  });

  test('compares with the previous list and counts the marks', () => {
    const model = taskListModel(listed([task('1', { status: 'completed' }), task('2')]), {
      tasks: [task('1', { status: 'in_progress' })],
    });
    expect(model).toMatchObject({
      compared: true,
      suffix: { key: 'tasks.list.since', values: { added: 1, done: 1, changed: 0 } },
    });
  });

  test('ignores a previous list of another shape', () => {
    const model = taskListModel(listed([task('1')]), { tasks: 'none' });
    expect(model).toMatchObject({ kind: 'taskList', compared: false });
  });

  test.each([
    ['two tasks with one id', { tasks: [task('1'), task('1')] }],
    ['a task of another shape', { tasks: [task('1', { status: 'done' })] }],
    ['no tasks list', { task: task('1') }],
  ])('falls back to the generic card for %s', (_, output) => {
    expect(taskListModel(ended('task_list', {}, output)).kind).toBe('generic');
  });

  test('an empty list is a list', () => {
    expect(taskListModel(listed([]))).toMatchObject({ kind: 'taskList', rows: [] });
  });
});
