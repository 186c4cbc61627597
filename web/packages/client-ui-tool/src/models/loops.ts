// The loop cards — `loop_start`, `loop_status`, `loop_stop` — from the raw fields of each call,
// and the fold of a session's `loop.*` events by loop id that keeps a `loop_start` card live.
import type {
  CheckConclusion,
  IterationStatus,
  LoopStatus,
  LoopStopReason as WireStopReason,
} from '@qilin-agent/protocol';
import type { CallState } from '@qilin-agent/ui-primitives';
import { CHECK_CONCLUSIONS } from './checks';
import { Fields, Unsupported, asRecord, clip, firstLine, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import { sessionHref } from './sessionLink';

/** Where a loop stands (the generated `LoopStatus`). */
export type LoopState = LoopStatus;

/** Why a loop stopped (the generated `LoopStopReason`). */
export type LoopStopReason = WireStopReason;

/** Where one iteration stands (the generated `IterationStatus`). */
export type IterationState = IterationStatus;

/** What an iteration did to a file, as the runtime words it. */
export type FileChangeKind = 'added' | 'modified' | 'deleted';

/** Every [`LoopState`], for reading a record. */
export const LOOP_STATES: readonly LoopState[] = ['running', 'finished'];

/** Every [`LoopStopReason`], for reading a record. */
export const LOOP_STOP_REASONS: readonly LoopStopReason[] = [
  'checks_passed',
  'promise_seen',
  'max_iterations',
  'budget',
  'stalled',
  'stopped',
  'failed',
];

/** Every [`IterationState`], for reading a record. */
export const ITERATION_STATES: readonly IterationState[] = [
  'running',
  'finished',
  'interrupted',
  'failed',
];

/** Every [`FileChangeKind`] this client has words for. */
export const FILE_CHANGE_KINDS: readonly FileChangeKind[] = ['added', 'modified', 'deleted'];

/** One file an iteration changed. */
export interface FileChangeRow {
  readonly path: string;
  readonly insertions: number;
  readonly deletions: number;
  /** `added`, `modified` or `deleted` (a word this client does not know shows as it is). */
  readonly change: string;
}

/** One check's conclusion after an iteration. */
export interface IterationCheckRow {
  readonly id: string;
  readonly conclusion: CheckConclusion;
  readonly summary?: string;
}

/** One iteration's report (`LoopIteration`) as the card shows it. */
export interface IterationRow {
  /** From 1. */
  readonly number: number;
  /** The iteration's fresh child session, when it had one. */
  readonly sessionId?: string;
  /** The page's address of that session. */
  readonly href?: string;
  readonly status: IterationState;
  /** RFC 3339. */
  readonly startedAt: string;
  /** RFC 3339, once it ended. */
  readonly endedAt?: string;
  readonly durationMs?: number;
  readonly files: readonly FileChangeRow[];
  readonly checks: readonly IterationCheckRow[];
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd?: number;
  /** True when the model's answer held the promise. */
  readonly promiseSeen: boolean;
  /** Why the loop goes on or stops, one sentence, once the iteration ended. */
  readonly outcome?: string;
}

/** A loop's budget: each limit it has. */
export interface LoopBudgetRow {
  readonly tokens?: number;
  readonly costUsd?: number;
  readonly durationSecs?: number;
}

/** A loop record (`LoopRecord`) as the cards show it. */
export interface LoopRow {
  readonly loopId: string;
  readonly prompt: string;
  /** The check ids that must pass (empty for none). */
  readonly checks: readonly string[];
  /** The text the model says when done, when the loop stops on one. */
  readonly promise?: string;
  readonly maxIterations: number;
  readonly freshContext: boolean;
  readonly budget?: LoopBudgetRow;
  readonly status: LoopState;
  readonly stopReason?: LoopStopReason;
  /** In order of their number, one per number. */
  readonly iterations: readonly IterationRow[];
  /** RFC 3339. */
  readonly startedAt: string;
  /** RFC 3339, once it finished. */
  readonly endedAt?: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd?: number;
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function idOf(fields: Fields, name: string, what: string): string {
  const id = fields.text(name);
  if (id.trim() === '') throw new Unsupported(`${what}.${name} is empty`);
  return id;
}

function fileChangeRow(value: unknown, what: string): FileChangeRow {
  const fields = new Fields(value, what);
  return {
    path: idOf(fields, 'path', what),
    insertions: fields.count('insertions'),
    deletions: fields.count('deletions'),
    change: fields.text('change'),
  };
}

function iterationCheckRow(value: unknown, what: string): IterationCheckRow {
  const fields = new Fields(value, what);
  const summary = nonBlank(fields.optionalText('summary'));
  return {
    id: idOf(fields, 'id', what),
    conclusion: fields.oneOf('conclusion', CHECK_CONCLUSIONS),
    ...(summary === undefined ? {} : { summary }),
  };
}

/** One recorded iteration (`LoopIteration`); throws [`Unsupported`] for another shape. */
export function iterationRow(value: unknown, what = 'iteration'): IterationRow {
  const fields = new Fields(value, what);
  const number = fields.count('number');
  if (number === 0) throw new Unsupported(`${what}.number counts from 1`);
  const sessionId = nonBlank(fields.optionalText('sessionId'));
  const endedAt = fields.optionalText('endedAt');
  const durationMs = fields.optionalCount('durationMs');
  const costUsd = fields.optionalAmount('costUsd');
  const outcome = nonBlank(fields.optionalText('outcome'));
  const status = fields.oneOf('status', ITERATION_STATES);
  if (status === 'running' && endedAt !== undefined) {
    throw new Unsupported(`${what}: a running iteration has no end`);
  }
  return {
    number,
    ...(sessionId === undefined ? {} : { sessionId, href: sessionHref(sessionId) }),
    status,
    startedAt: fields.text('startedAt'),
    ...(endedAt === undefined ? {} : { endedAt }),
    ...(durationMs === undefined ? {} : { durationMs }),
    files: (fields.optionalList('files') ?? []).map((item, at) =>
      fileChangeRow(item, `${what}.files[${at}]`),
    ),
    checks: (fields.optionalList('checks') ?? []).map((item, at) =>
      iterationCheckRow(item, `${what}.checks[${at}]`),
    ),
    inputTokens: fields.count('inputTokens'),
    outputTokens: fields.count('outputTokens'),
    ...(costUsd === undefined ? {} : { costUsd }),
    promiseSeen: fields.optionalFlag('promiseSeen') ?? false,
    ...(outcome === undefined ? {} : { outcome }),
  };
}

/** Iterations in order of their number, the later report of each number kept. */
function byNumber(iterations: Iterable<IterationRow>): IterationRow[] {
  const rows = new Map<number, IterationRow>();
  for (const row of iterations) {
    const known = rows.get(row.number);
    rows.set(row.number, known === undefined ? row : laterIteration(known, row));
  }
  return [...rows.values()].sort((one, other) => one.number - other.number);
}

/**
 * The later of two reports of the same iteration: an ended one over a running one, else
 * `next` (the runtime reports an iteration when it starts and again when it ends).
 */
export function laterIteration(current: IterationRow, next: IterationRow): IterationRow {
  if (current.status !== 'running' && next.status === 'running') return current;
  return next;
}

/** One recorded loop (`LoopRecord`); throws [`Unsupported`] for another shape. */
export function loopRow(value: unknown, what = 'loop'): LoopRow {
  const fields = new Fields(value, what);
  const loopId = idOf(fields, 'loopId', what);
  const until = new Fields(fields.raw('until') ?? {}, `${what}.until`);
  const checks = (until.optionalList('checks') ?? []).map((check, at) => {
    if (typeof check !== 'string' || check.trim() === '') {
      throw new Unsupported(`${what}.until.checks[${at}] is not a check id`);
    }
    return check;
  });
  const promise = nonBlank(until.optionalText('promise'));
  const budgetValue = fields.raw('budget');
  let budget: LoopBudgetRow | undefined;
  if (budgetValue !== undefined && budgetValue !== null) {
    const limits = new Fields(budgetValue, `${what}.budget`);
    const tokens = limits.optionalCount('tokens');
    const costUsd = limits.optionalAmount('costUsd');
    const durationSecs = limits.optionalCount('durationSecs');
    budget = {
      ...(tokens === undefined ? {} : { tokens }),
      ...(costUsd === undefined ? {} : { costUsd }),
      ...(durationSecs === undefined ? {} : { durationSecs }),
    };
  }
  const status = fields.oneOf('status', LOOP_STATES);
  const reason = fields.raw('stopReason');
  const stopReason =
    reason === undefined || reason === null
      ? undefined
      : fields.oneOf('stopReason', LOOP_STOP_REASONS);
  if (status === 'finished' && stopReason === undefined) {
    throw new Unsupported(`${what}: a finished loop says why it stopped`);
  }
  const endedAt = fields.optionalText('endedAt');
  const costUsd = fields.optionalAmount('costUsd');
  const iterations = (fields.optionalList('iterations') ?? []).map((item, at) =>
    iterationRow(item, `${what}.iterations[${at}]`),
  );
  return {
    loopId,
    prompt: fields.text('prompt'),
    checks,
    ...(promise === undefined ? {} : { promise }),
    maxIterations: fields.count('maxIterations'),
    freshContext: fields.optionalFlag('freshContext') ?? true,
    ...(budget === undefined ? {} : { budget }),
    status,
    ...(stopReason === undefined ? {} : { stopReason }),
    iterations: byNumber(iterations),
    startedAt: fields.text('startedAt'),
    ...(endedAt === undefined ? {} : { endedAt }),
    inputTokens: fields.count('inputTokens'),
    outputTokens: fields.count('outputTokens'),
    ...(costUsd === undefined ? {} : { costUsd }),
  };
}

/** How far a loop has gone: finished beats running, then more iterations, then more ended. */
function progressOf(row: LoopRow): [number, number, number] {
  return [
    row.status === 'finished' ? 1 : 0,
    row.iterations.length,
    row.iterations.filter((iteration) => iteration.status !== 'running').length,
  ];
}

/**
 * Two states of the same loop made one: the further of the two (finished over running, more
 * iterations over fewer) with every iteration either knows, each at its later report. Two
 * different loops give `next`.
 */
export function laterLoop(current: LoopRow | undefined, next: LoopRow): LoopRow {
  if (current === undefined || current.loopId !== next.loopId) return next;
  const [one, other] = [progressOf(current), progressOf(next)];
  const ahead =
    one[0] !== other[0]
      ? one[0] > other[0]
      : one[1] !== other[1]
        ? one[1] > other[1]
        : one[2] > other[2];
  const base = ahead ? current : next;
  return { ...base, iterations: byNumber([...current.iterations, ...next.iterations]) };
}

/** A loop with one iteration's report folded in (the later report of its number kept). */
export function withIteration(row: LoopRow, iteration: IterationRow): LoopRow {
  return { ...row, iterations: byNumber([...row.iterations, iteration]) };
}

/** What one of a session's events says about a loop. */
export type LoopEvent =
  | { readonly kind: 'record'; readonly loop: LoopRow }
  | { readonly kind: 'iteration'; readonly loopId: string; readonly iteration: IterationRow };

/**
 * What a `loop.started`, `loop.iteration` or `loop.finished` event says; `undefined` for any
 * other event, or one not of the recorded shape.
 */
export function loopOfEvent(value: unknown): LoopEvent | undefined {
  const event = asRecord(value);
  if (event === undefined) return undefined;
  try {
    if (event.type === 'loop.started' || event.type === 'loop.finished') {
      return { kind: 'record', loop: loopRow(event.loop, `${event.type}.loop`) };
    }
    if (event.type === 'loop.iteration') {
      const fields = new Fields(event, 'loop.iteration');
      return {
        kind: 'iteration',
        loopId: idOf(fields, 'loopId', 'loop.iteration'),
        iteration: iterationRow(fields.raw('iteration'), 'loop.iteration.iteration'),
      };
    }
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  return undefined;
}

type Listener = () => void;

/**
 * A session's loops as the page follows them, by loop id: the records the server lists, the
 * session's `loop.*` events, and the records calls returned, each folded into what is known (the
 * further state winning). An iteration of a loop whose record has not come is kept, and shows
 * on the card that knows the record ([`LoopBook.view`]). Listeners hear only the loops that
 * changed, so a live loop re-renders its own card alone.
 */
export class LoopBook {
  private readonly loops = new Map<string, LoopRow>();
  private readonly waiting = new Map<string, IterationRow[]>();
  private readonly versions = new Map<string, number>();
  private readonly views = new WeakMap<LoopRow, { version: number; row: LoopRow }>();
  private readonly listeners = new Map<string, Set<Listener>>();

  /** The loop's record as known; `undefined` before any record of it came. */
  get = (loopId: string): LoopRow | undefined => this.loops.get(loopId);

  /**
   * `known` (a record a call returned) with everything the book knows of the same loop folded
   * in; the same object for the same state, so a view can read it as an external store.
   */
  view = (known: LoopRow): LoopRow => {
    const version = this.versions.get(known.loopId) ?? 0;
    if (version === 0) return known;
    const cached = this.views.get(known);
    if (cached !== undefined && cached.version === version) return cached.row;
    const record = this.loops.get(known.loopId);
    let row = record === undefined ? known : laterLoop(known, record);
    for (const iteration of this.waiting.get(known.loopId) ?? []) {
      row = withIteration(row, iteration);
    }
    this.views.set(known, { version, row });
    return row;
  };

  /** Hears changes of one loop. */
  subscribe = (loopId: string, listener: Listener): (() => void) => {
    let set = this.listeners.get(loopId);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(loopId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(loopId);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(loopId);
    };
  };

  /** Folds a batch of the session's events (any type; others are passed over). */
  onEvents = (events: readonly unknown[]): void => {
    const changed = new Set<string>();
    for (const value of events) {
      const event = loopOfEvent(value);
      if (event === undefined) continue;
      if (event.kind === 'record') this.fold(event.loop, changed);
      else this.foldIteration(event.loopId, event.iteration, changed);
    }
    this.tell(changed);
  };

  /** Takes records (the server's list, a call's result). */
  take = (records: readonly LoopRow[]): void => {
    const changed = new Set<string>();
    for (const record of records) this.fold(record, changed);
    this.tell(changed);
  };

  private fold(record: LoopRow, changed: Set<string>): void {
    const known = this.loops.get(record.loopId);
    let next = laterLoop(known, record);
    const waiting = this.waiting.get(record.loopId);
    if (waiting !== undefined) {
      this.waiting.delete(record.loopId);
      for (const iteration of waiting) next = withIteration(next, iteration);
    }
    if (known !== undefined && sameLoop(known, next)) return;
    this.loops.set(record.loopId, next);
    changed.add(record.loopId);
  }

  private foldIteration(loopId: string, iteration: IterationRow, changed: Set<string>): void {
    const known = this.loops.get(loopId);
    if (known === undefined) {
      this.waiting.set(loopId, [...(this.waiting.get(loopId) ?? []), iteration]);
    } else {
      this.loops.set(loopId, withIteration(known, iteration));
    }
    changed.add(loopId);
  }

  private tell(changed: ReadonlySet<string>): void {
    for (const loopId of changed) {
      this.versions.set(loopId, (this.versions.get(loopId) ?? 0) + 1);
      this.listeners.get(loopId)?.forEach((listener) => listener());
    }
  }
}

/** True when two states of a loop show the same (no new snapshot for the listeners). */
function sameLoop(one: LoopRow, other: LoopRow): boolean {
  return JSON.stringify(one) === JSON.stringify(other);
}

/** The static colour of a loop's stop reason: done well, stopped short, or failed. */
export function stopDot(reason: LoopStopReason): CallState {
  switch (reason) {
    case 'checks_passed':
    case 'promise_seen':
      return 'ok';
    case 'stopped':
      return 'interrupted';
    case 'max_iterations':
    case 'budget':
    case 'stalled':
      return 'waiting';
    case 'failed':
      return 'error';
  }
}

/** The static colour of an iteration's status. */
export function iterationDot(status: IterationState): CallState {
  switch (status) {
    case 'running':
      return 'running';
    case 'finished':
      return 'ok';
    case 'interrupted':
      return 'interrupted';
    case 'failed':
      return 'error';
  }
}

/** The arguments of `loop_start` as the card shows them before the record comes. */
interface LoopAsked {
  readonly prompt: string;
  readonly checks: readonly string[];
  readonly promise?: string;
  readonly maxIterations: number;
}

function loopAsked(value: unknown): LoopAsked {
  const args = new Fields(value, 'arguments');
  const until = new Fields(args.raw('until') ?? {}, 'arguments.until');
  const checks = (until.optionalList('checks') ?? []).map((check, at) => {
    if (typeof check !== 'string' || check.trim() === '') {
      throw new Unsupported(`arguments.until.checks[${at}] is not a check id`);
    }
    return check;
  });
  const promise = nonBlank(until.optionalText('promise'));
  return {
    prompt: args.text('prompt'),
    checks,
    ...(promise === undefined ? {} : { promise }),
    maxIterations: args.count('max_iterations'),
  };
}

/** The card of a `loop_start` call. */
export interface LoopStartModel {
  readonly kind: 'loopStart';
  readonly state: CallState;
  /** The prompt's first line, clipped (the row's summary); absent while preparing. */
  readonly summary?: string;
  /** What the call asked for, before the record came. */
  readonly asked?: LoopAsked;
  /** The loop as the call's result recorded it (the card follows it live from there). */
  readonly loop?: LoopRow;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `loop_start` card: the prompt's first line on the row; once started, the loop's record —
 * which the view keeps live from the session's `loop.*` events. A record of another prompt than
 * the call asked for, or data of another shape, falls back to the generic card; a failed call
 * shows its plain input and error.
 */
export function loopStartModel(input: CardInput): LoopStartModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'loopStart', state };
  try {
    const asked = loopAsked(input.arguments);
    const base = {
      kind: 'loopStart' as const,
      state,
      summary: clip(firstLine(asked.prompt), 80),
      asked,
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const loop = loopRow(output.raw('loop'), 'output.loop');
    if (loop.prompt.trim() !== asked.prompt.trim()) {
      throw new Unsupported('the loop started has another prompt than the call asked for');
    }
    return { ...base, loop };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `loop_status` call. */
export interface LoopStatusModel {
  readonly kind: 'loopStatus';
  readonly state: CallState;
  /** The loop asked about; absent for every loop of the session. */
  readonly id?: string;
  /** The loops as the call read them (not as they stand now). */
  readonly loops?: readonly LoopRow[];
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The `loop_status` card: the loops as the call read them then. */
export function loopStatusModel(input: CardInput): LoopStatusModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'loopStatus', state };
  try {
    const id = nonBlank(new Fields(input.arguments ?? {}, 'arguments').optionalText('id'));
    const base = { kind: 'loopStatus' as const, state, ...(id === undefined ? {} : { id }) };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const loops = output.list('loops').map((item, at) => loopRow(item, `output.loops[${at}]`));
    if (id !== undefined && loops.some((loop) => loop.loopId !== id)) {
      throw new Unsupported(`output holds another loop than ${id}`);
    }
    return { ...base, loops };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `loop_stop` call. */
export interface LoopStopModel {
  readonly kind: 'loopStop';
  readonly state: CallState;
  /** The loop asked to stop. */
  readonly id?: string;
  /** The loop as the call left it. */
  readonly loop?: LoopRow;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The `loop_stop` card: which loop, and the loop as the call left it. */
export function loopStopModel(input: CardInput): LoopStopModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'loopStop', state };
  try {
    const id = new Fields(input.arguments, 'arguments').text('id');
    if (id.trim() === '') throw new Unsupported('arguments.id is empty');
    const base = { kind: 'loopStop' as const, state, id };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const loop = loopRow(new Fields(input.result.output, 'output').raw('loop'), 'output.loop');
    if (loop.loopId !== id) throw new Unsupported(`output.loop is not ${id}`);
    return { ...base, loop };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The number of the iteration running, when one is. */
export function currentIteration(loop: LoopRow): IterationRow | undefined {
  return loop.status === 'running'
    ? loop.iterations.findLast((iteration) => iteration.status === 'running')
    : undefined;
}

/** Lines an iteration added and removed, over all its files. */
export function changedLines(iteration: IterationRow): { insertions: number; deletions: number } {
  let insertions = 0;
  let deletions = 0;
  for (const file of iteration.files) {
    insertions += file.insertions;
    deletions += file.deletions;
  }
  return { insertions, deletions };
}
