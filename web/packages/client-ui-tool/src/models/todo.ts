import { message, type Message } from '@qilin-agent/i18n';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

const STATUSES = ['pending', 'in_progress', 'completed'] as const;

/** Where a todo item stands. */
export type TodoStatus = (typeof STATUSES)[number];

/** One item of a todo list. */
export interface TodoItem {
  readonly id: string;
  readonly content: string;
  readonly status: TodoStatus;
}

/** One item as the card shows it, compared with the previous list. */
export interface TodoRow extends TodoItem {
  /** New in this list. */
  readonly added: boolean;
  /** Its status in the previous list, when it changed. */
  readonly previousStatus?: TodoStatus;
  /** It moved relative to the items kept from the previous list. */
  readonly moved: boolean;
}

/** The card of a `todo_write` call. */
export interface TodoModel {
  readonly kind: 'todo';
  readonly state: CallState;
  /** How far along the list is, for the row. */
  readonly summary?: Message;
  /** The list compared with the previous recorded write. */
  readonly rows?: readonly TodoRow[];
  /** Items of the previous list that this one dropped. */
  readonly removed?: readonly TodoItem[];
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The items of a todo list from raw `todos`; throws [`Unsupported`] on any other shape. */
export function todoItems(value: unknown): TodoItem[] {
  const todos = new Fields(value, 'arguments').list('todos');
  const items = todos.map((raw) => {
    const item = new Fields(raw, 'todos[]');
    return {
      id: item.text('id'),
      content: item.text('content'),
      status: item.oneOf('status', STATUSES),
    };
  });
  if (new Set(items.map((item) => item.id)).size !== items.length)
    throw new Unsupported('two items share an id');
  return items;
}

/** Indexes (into `sequence`) of one longest strictly increasing subsequence. */
function longestIncreasing(sequence: readonly number[]): Set<number> {
  const tails: number[] = [];
  const previous: number[] = new Array<number>(sequence.length).fill(-1);
  sequence.forEach((value, index) => {
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((sequence[tails[middle] as number] as number) < value) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[index] = tails[low - 1] as number;
    tails[low] = index;
  });
  const kept = new Set<number>();
  let at = tails[tails.length - 1] ?? -1;
  while (at >= 0) {
    kept.add(at);
    at = previous[at] as number;
  }
  return kept;
}

/**
 * Compares a list with the previous one: added items, changed statuses, items that moved
 * (the fewest moves that give the new order: those outside a longest run kept in order)
 * and removed items.
 */
export function compareTodos(
  current: readonly TodoItem[],
  previous: readonly TodoItem[] | undefined,
): { rows: TodoRow[]; removed: TodoItem[] } {
  if (previous === undefined) {
    return { rows: current.map((item) => ({ ...item, added: false, moved: false })), removed: [] };
  }
  const before = new Map(previous.map((item, index) => [item.id, { item, index }]));
  const ids = new Set(current.map((item) => item.id));
  const kept = current
    .map((item, index) => ({ index, was: before.get(item.id)?.index }))
    .filter((entry) => entry.was !== undefined);
  const inOrder = longestIncreasing(kept.map((entry) => entry.was as number));
  const moved = new Set(
    kept.filter((_, position) => !inOrder.has(position)).map((entry) => entry.index),
  );
  const rows = current.map((item, index): TodoRow => {
    const old = before.get(item.id)?.item;
    return {
      ...item,
      added: old === undefined,
      moved: moved.has(index),
      ...(old !== undefined && old.status !== item.status ? { previousStatus: old.status } : {}),
    };
  });
  return { rows, removed: previous.filter((item) => !ids.has(item.id)) };
}

/**
 * The todo card: the list, each item marked against the previous recorded write of the
 * session (`previous`, the arguments of that call): added, status changed, moved, removed or
 * unchanged.
 */
export function todoModel(input: CardInput, previous?: unknown): TodoModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'todo', state };
  try {
    const items = todoItems(input.arguments);
    if (endedBadly(input)) return { kind: 'todo', state, body: plainBody(input) };
    if (input.result !== undefined) new Fields(input.result.output, 'output').list('todos');
    let before: TodoItem[] | undefined;
    try {
      before = previous === undefined ? undefined : todoItems(previous);
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
    }
    const { rows, removed } = compareTodos(items, before);
    const completed = items.filter((item) => item.status === 'completed').length;
    return {
      kind: 'todo',
      state,
      summary: message('todo.progress', { completed, total: items.length }),
      rows,
      removed,
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
