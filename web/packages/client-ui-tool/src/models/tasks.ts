// The team's task cards — `task_create`, `task_update`, `task_list` — from the raw fields of each
// call: its arguments and the task records the runtime recorded as its output.
import { message, type Message } from '@qilin-agent/i18n';
import type { TaskStatus } from '@qilin-agent/protocol';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** Where a task stands (the generated `TaskStatus`). */
export type TaskState = TaskStatus;

/** Every [`TaskState`], for reading a record. */
export const TASK_STATUSES: readonly TaskState[] = [
  'pending',
  'in_progress',
  'completed',
  'cancelled',
];

/** The static colour of a task's status: the same dot states a call's row uses. */
export function taskDot(status: TaskState): CallState {
  switch (status) {
    case 'pending':
      return 'receipt';
    case 'in_progress':
      return 'running';
    case 'completed':
      return 'ok';
    case 'cancelled':
      return 'interrupted';
  }
}

/** One note on a task (`TaskNote`). */
export interface TaskNoteRow {
  /** Who wrote it: `lead` or a teammate's name. */
  readonly by: string;
  readonly text: string;
  /** When, RFC 3339. */
  readonly at: string;
}

/** One task of the team's list (`TaskRecord`) as the cards show it. */
export interface TaskRow {
  /** `1`, `2`, … in creation order within the team. */
  readonly id: string;
  readonly title: string;
  readonly description?: string;
  readonly status: TaskState;
  /** `lead` or a teammate's name. */
  readonly assignee?: string;
  /** The ids of the tasks it waits for. */
  readonly blockedBy: readonly string[];
  /** Its notes, oldest first. */
  readonly notes: readonly TaskNoteRow[];
  readonly createdBy: string;
  /** RFC 3339. */
  readonly createdAt: string;
  /** RFC 3339. */
  readonly updatedAt: string;
}

function isTime(value: string): boolean {
  return !Number.isNaN(new Date(value).getTime());
}

function time(fields: Fields, name: string, what: string): string {
  const value = fields.text(name);
  if (!isTime(value)) throw new Unsupported(`${what}.${name} is not a time`);
  return value;
}

function nonEmpty(fields: Fields, name: string, what: string): string {
  const value = fields.text(name);
  if (value.trim() === '') throw new Unsupported(`${what}.${name} is empty`);
  return value;
}

/** A list of non-empty strings (task ids), or [`Unsupported`]. */
function ids(values: readonly unknown[], what: string): string[] {
  return values.map((value, at) => {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new Unsupported(`${what}[${at}] is not a task id`);
    }
    return value;
  });
}

/** One recorded task (`TaskRecord`); throws [`Unsupported`] for another shape. */
export function taskRow(value: unknown, what = 'task'): TaskRow {
  const fields = new Fields(value, what);
  const id = nonEmpty(fields, 'id', what);
  const description = fields.optionalText('description');
  const assignee = fields.optionalText('assignee');
  const blockedBy = ids(fields.list('blockedBy'), `${what}.blockedBy`);
  if (blockedBy.includes(id)) throw new Unsupported(`${what} is blocked by itself`);
  const notes = fields.list('notes').map((raw, at) => {
    const note = new Fields(raw, `${what}.notes[${at}]`);
    return {
      by: nonEmpty(note, 'by', `${what}.notes[${at}]`),
      text: note.text('text'),
      at: time(note, 'at', `${what}.notes[${at}]`),
    };
  });
  return {
    id,
    title: fields.text('title'),
    ...(description === undefined || description.trim() === '' ? {} : { description }),
    status: fields.oneOf('status', TASK_STATUSES),
    ...(assignee === undefined || assignee.trim() === '' ? {} : { assignee }),
    blockedBy,
    notes,
    createdBy: nonEmpty(fields, 'createdBy', what),
    createdAt: time(fields, 'createdAt', what),
    updatedAt: time(fields, 'updatedAt', what),
  };
}

/** The tasks of a `task_list` output (`{ tasks }`); throws [`Unsupported`] for another shape. */
export function taskRows(output: unknown, what = 'output'): TaskRow[] {
  const tasks = new Fields(output, what)
    .list('tasks')
    .map((value, at) => taskRow(value, `${what}.tasks[${at}]`));
  if (new Set(tasks.map((task) => task.id)).size !== tasks.length) {
    throw new Unsupported(`two tasks of ${what}.tasks share an id`);
  }
  return tasks;
}

/** The card of a `task_create` call. */
export interface TaskCreateModel {
  readonly kind: 'taskCreate';
  readonly state: CallState;
  /** The title asked for (the row's summary); absent while preparing. */
  readonly title?: string;
  /** To whom the call assigned it. */
  readonly assignee?: string;
  /** The task the runtime created, once the call ended `ok`. */
  readonly task?: TaskRow;
  /** A failed call's plain card (a refusal names what is wrong). */
  readonly body?: PlainBody;
}

/**
 * The `task_create` card: the title on the row, the new task's id and assignee beside it; once
 * created, the task (status, assignee, what it waits for, its description). A task of another
 * title or assignee than the call asked for, or data of another shape, falls back to the
 * generic card.
 */
export function taskCreateModel(input: CardInput): TaskCreateModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'taskCreate', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const title = nonEmpty(args, 'title', 'arguments');
    const assignee = args.optionalText('assignee');
    const blockedBy = args.optionalList('blockedBy');
    if (blockedBy !== undefined) ids(blockedBy, 'arguments.blockedBy');
    const base = {
      kind: 'taskCreate' as const,
      state,
      title,
      ...(assignee === undefined || assignee.trim() === '' ? {} : { assignee }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const task = taskRow(new Fields(input.result.output, 'output').raw('task'), 'output.task');
    if (task.title !== title) {
      throw new Unsupported('the task created has another title than the call asked for');
    }
    if (base.assignee !== undefined && task.assignee !== base.assignee) {
      throw new Unsupported('the task created has another assignee than the call asked for');
    }
    return { ...base, task };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The status a `task_update` changed: before and after. */
export interface StatusChange {
  readonly before: TaskState;
  readonly after: TaskState;
}

/** The assignee a `task_update` changed: before and after (absent: nobody). */
export interface AssigneeChange {
  readonly before?: string;
  readonly after?: string;
}

/** The card of a `task_update` call. */
export interface TaskUpdateModel {
  readonly kind: 'taskUpdate';
  readonly state: CallState;
  /** The task's id, as the call named it; absent while preparing. */
  readonly id?: string;
  /** The status the call asked for. */
  readonly askedStatus?: TaskState;
  /** The note the call added. */
  readonly note?: string;
  /** What the row says after the title when the status did not change: what else did. */
  readonly suffix?: Message;
  /** The task after the update. */
  readonly task?: TaskRow;
  /** The status before → after, when it changed. */
  readonly status?: StatusChange;
  /** The assignee before → after, when it changed. */
  readonly assignee?: AssigneeChange;
  /** A failed call's plain card (a refusal names what is wrong). */
  readonly body?: PlainBody;
}

/**
 * The `task_update` card: the task's title on the row and its status as before → after; open,
 * the status and assignee changes and the note the call added, and the task as it is now. An
 * output whose task or previous task is another one than the call named, whose status is not
 * the one asked for, whose assignee is not the one asked for, or that lacks the note the call
 * added, falls back to the generic card.
 */
export function taskUpdateModel(input: CardInput): TaskUpdateModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'taskUpdate', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const id = nonEmpty(args, 'id', 'arguments');
    const askedStatus =
      args.raw('status') === undefined || args.raw('status') === null
        ? undefined
        : args.oneOf('status', TASK_STATUSES);
    const note = args.optionalText('note');
    const askedAssignee = args.optionalText('assignee');
    const base = {
      kind: 'taskUpdate' as const,
      state,
      id,
      ...(askedStatus === undefined ? {} : { askedStatus }),
      ...(note === undefined || note.trim() === '' ? {} : { note }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const task = taskRow(output.raw('task'), 'output.task');
    const previous = taskRow(output.raw('previous'), 'output.previous');
    if (task.id !== id || previous.id !== id) {
      throw new Unsupported('the task updated is not the one the call named');
    }
    if (askedStatus !== undefined && task.status !== askedStatus) {
      throw new Unsupported(`the task is ${task.status}, not ${askedStatus} as asked`);
    }
    if (
      askedAssignee !== undefined &&
      askedAssignee.trim() !== '' &&
      task.assignee !== askedAssignee
    ) {
      throw new Unsupported(
        `the task is with ${task.assignee ?? 'nobody'}, not ${askedAssignee} as asked`,
      );
    }
    if (base.note !== undefined && !task.notes.some((entry) => entry.text === base.note)) {
      throw new Unsupported('the task updated lacks the note the call added');
    }
    const status =
      previous.status === task.status ? undefined : { before: previous.status, after: task.status };
    const assignee =
      previous.assignee === task.assignee
        ? undefined
        : {
            ...(previous.assignee === undefined ? {} : { before: previous.assignee }),
            ...(task.assignee === undefined ? {} : { after: task.assignee }),
          };
    const suffix =
      status !== undefined
        ? undefined
        : assignee !== undefined
          ? message('tasks.update.reassigned')
          : base.note !== undefined
            ? message('tasks.update.noted')
            : message('tasks.update.unchanged');
    return {
      ...base,
      task,
      ...(suffix === undefined ? {} : { suffix }),
      ...(status === undefined ? {} : { status }),
      ...(assignee === undefined ? {} : { assignee }),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** How a task of a list differs from the previous list the session read. */
export type TaskMark = 'added' | 'done' | 'changed' | 'unchanged';

/** One task of a `task_list`, compared with the previous list. */
export interface TaskListRow extends TaskRow {
  /** Added since, newly completed, otherwise changed, or the same; absent without a previous list. */
  readonly mark?: TaskMark;
  /** Its status in the previous list, when it changed. */
  readonly previousStatus?: TaskState;
  /** Its assignee in the previous list (`null`: none), when it changed. */
  readonly previousAssignee?: string | null;
}

/**
 * Compares a task list with the previous one the session read: tasks added since, tasks
 * completed since (`done`), tasks whose status, assignee, blockers or notes changed, and the
 * rest unchanged. Without a previous list nothing is marked.
 */
export function compareTasks(
  current: readonly TaskRow[],
  previous: readonly TaskRow[] | undefined,
): TaskListRow[] {
  if (previous === undefined) return current.map((task) => ({ ...task }));
  const before = new Map(previous.map((task) => [task.id, task]));
  return current.map((task): TaskListRow => {
    const old = before.get(task.id);
    if (old === undefined) return { ...task, mark: 'added' };
    const statusChanged = old.status !== task.status;
    const assigneeChanged = old.assignee !== task.assignee;
    const otherwiseChanged =
      old.title !== task.title ||
      old.description !== task.description ||
      old.notes.length !== task.notes.length ||
      old.blockedBy.join('\n') !== task.blockedBy.join('\n');
    const mark: TaskMark =
      statusChanged && task.status === 'completed'
        ? 'done'
        : statusChanged || assigneeChanged || otherwiseChanged
          ? 'changed'
          : 'unchanged';
    return {
      ...task,
      mark,
      ...(statusChanged ? { previousStatus: old.status } : {}),
      ...(assigneeChanged ? { previousAssignee: old.assignee ?? null } : {}),
    };
  });
}

/** The card of a `task_list` call. */
export interface TaskListModel {
  readonly kind: 'taskList';
  readonly state: CallState;
  /** How far along the list is, for the row. */
  readonly summary?: Message;
  /** What changed since the previous list, for the row; absent without a previous list. */
  readonly suffix?: Message;
  /** The tasks in creation order, compared with the previous list. */
  readonly rows?: readonly TaskListRow[];
  /** True when the rows are compared with a previous list. */
  readonly compared?: boolean;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `task_list` card: the team's tasks as a table (id, title, status, assignee, what each waits
 * for), each marked against the previous `task_list` of the session (`previous`, that call's
 * recorded output): added, done, changed or unchanged. A previous output of another shape is
 * ignored; a list of another shape falls back to the generic card.
 */
export function taskListModel(input: CardInput, previous?: unknown): TaskListModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'taskList', state };
  try {
    new Fields(input.arguments, 'arguments');
    if (input.result === undefined) return { kind: 'taskList', state };
    if (endedBadly(input)) return { kind: 'taskList', state, body: plainBody(input) };
    const tasks = taskRows(input.result.output);
    let before: TaskRow[] | undefined;
    try {
      before = previous === undefined ? undefined : taskRows(previous, 'previous');
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
    }
    const rows = compareTasks(tasks, before);
    const count = (mark: TaskMark) => rows.filter((row) => row.mark === mark).length;
    const open = tasks.filter((task) => task.status !== 'cancelled');
    return {
      kind: 'taskList',
      state,
      summary: message('tasks.list.progress', {
        completed: open.filter((task) => task.status === 'completed').length,
        total: open.length,
      }),
      ...(before === undefined
        ? {}
        : {
            suffix: message('tasks.list.since', {
              added: count('added'),
              done: count('done'),
              changed: count('changed'),
            }),
          }),
      rows,
      compared: before !== undefined,
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
