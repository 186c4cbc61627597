// The scheduled-task cards — `schedule_create`, `schedule_list`, `schedule_delete` — from the raw
// fields of each call: its arguments and the schedule records the runtime recorded as its output.
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import type { CatchUp, RunOutcome, ScheduleStatus, ScheduleTarget } from '@qilin-agent/protocol';
import { sessionHref } from './sessionLink';

/** Every schedule status, for reading a record. */
export const SCHEDULE_STATUSES: readonly ScheduleStatus[] = [
  'active',
  'done',
  'expired',
  'deleted',
];

/** Every run outcome, for reading a record. */
export const RUN_OUTCOMES: readonly RunOutcome[] = [
  'running',
  'completed',
  'failed',
  'interrupted',
  'out_of_budget',
  'skipped',
];

const TARGETS: readonly ScheduleTarget[] = ['this_session', 'new_session'];
const CATCH_UPS: readonly CatchUp[] = ['once', 'skip'];

/** The static colour of a schedule's status: the same dot states a call's row uses. */
export function scheduleDot(status: ScheduleStatus): CallState {
  switch (status) {
    case 'active':
      return 'running';
    case 'done':
      return 'ok';
    case 'expired':
      return 'waiting';
    case 'deleted':
      return 'interrupted';
  }
}

/** The static colour of a run's outcome. */
export function runDot(outcome: RunOutcome): CallState {
  switch (outcome) {
    case 'running':
      return 'running';
    case 'completed':
      return 'ok';
    case 'failed':
    case 'out_of_budget':
      return 'error';
    case 'interrupted':
    case 'skipped':
      return 'interrupted';
  }
}

/** One run of a schedule (`ScheduleRun`) as the cards and the panel show it. */
export interface RunRow {
  /** The scheduled time this run is for, RFC 3339. */
  readonly fireTime: string;
  readonly startedAt: string;
  readonly endedAt?: string;
  /** The session the turn ran in. */
  readonly sessionId: string;
  readonly turnId?: string;
  readonly outcome: RunOutcome;
  /** A fire missed while no server ran, run late. */
  readonly caughtUp: boolean;
  /** Why it failed, was skipped or was interrupted. */
  readonly message?: string;
  /** The page of the session the run's turn is in. */
  readonly href: string;
}

/** How a schedule fires: exactly one of a cron expression, an interval, or one time. */
export type ScheduleWhen =
  | { readonly kind: 'cron'; readonly cron: string }
  | { readonly kind: 'every'; readonly seconds: number }
  | { readonly kind: 'at'; readonly at: string };

/** A schedule record (`ScheduleRecord`) as the cards and the panel show it. */
export interface ScheduleRow {
  readonly id: string;
  readonly sessionId: string;
  readonly prompt: string;
  readonly when: ScheduleWhen;
  /** IANA time zone name of the schedule. */
  readonly timezone: string;
  /** The schedule in words, as the runtime wrote them. */
  readonly description: string;
  readonly agent?: string;
  readonly target: ScheduleTarget;
  readonly catchUp: CatchUp;
  /** RFC 3339. */
  readonly expires?: string;
  readonly status: ScheduleStatus;
  /** RFC 3339. */
  readonly createdAt: string;
  /** The next (up to three) fire times, RFC 3339 UTC. */
  readonly nextFires: readonly string[];
  readonly lastRun?: RunRow;
  /** How many runs so far. */
  readonly runs: number;
}

function isTime(value: string): boolean {
  return !Number.isNaN(new Date(value).getTime());
}

function time(fields: Fields, name: string, what: string): string {
  const value = fields.text(name);
  if (!isTime(value)) throw new Unsupported(`${what}.${name} is not a time`);
  return value;
}

function optionalTime(fields: Fields, name: string, what: string): string | undefined {
  const value = fields.optionalText(name);
  if (value !== undefined && !isTime(value)) throw new Unsupported(`${what}.${name} is not a time`);
  return value;
}

/** One recorded run (`ScheduleRun`); throws [`Unsupported`] for another shape. */
export function runRow(value: unknown, what = 'run'): RunRow {
  const fields = new Fields(value, what);
  const sessionId = fields.text('sessionId');
  if (sessionId.trim() === '') throw new Unsupported(`${what}.sessionId is empty`);
  const endedAt = optionalTime(fields, 'endedAt', what);
  const turnId = fields.optionalText('turnId');
  const message = fields.optionalText('message');
  const outcome = fields.oneOf('outcome', RUN_OUTCOMES);
  if (outcome === 'running' && endedAt !== undefined) {
    throw new Unsupported(`${what} is running yet ended`);
  }
  return {
    fireTime: time(fields, 'fireTime', what),
    startedAt: time(fields, 'startedAt', what),
    ...(endedAt === undefined ? {} : { endedAt }),
    sessionId,
    ...(turnId === undefined ? {} : { turnId }),
    outcome,
    caughtUp: fields.flag('caughtUp'),
    ...(message === undefined || message.trim() === '' ? {} : { message }),
    href: sessionHref(sessionId),
  };
}

function whenOf(fields: Fields, what: string): ScheduleWhen {
  const cron = fields.optionalText('cron');
  const every = fields.optionalCount('everySeconds');
  const at = optionalTime(fields, 'at', what);
  const given = [cron, every, at].filter((value) => value !== undefined).length;
  if (given !== 1) {
    throw new Unsupported(
      `${what} has ${given} of cron, everySeconds and at; expected exactly one`,
    );
  }
  if (cron !== undefined) return { kind: 'cron', cron };
  if (every !== undefined) return { kind: 'every', seconds: every };
  return { kind: 'at', at: at ?? '' };
}

/** One recorded schedule (`ScheduleRecord`); throws [`Unsupported`] for another shape. */
export function scheduleRow(value: unknown, what = 'schedule'): ScheduleRow {
  const fields = new Fields(value, what);
  const id = fields.text('id');
  if (id.trim() === '') throw new Unsupported(`${what}.id is empty`);
  const timezone = fields.text('timezone');
  if (timezone.trim() === '') throw new Unsupported(`${what}.timezone is empty`);
  const nextFires = fields.list('nextFires').map((fire, at) => {
    if (typeof fire !== 'string' || !isTime(fire)) {
      throw new Unsupported(`${what}.nextFires[${at}] is not a time`);
    }
    return fire;
  });
  const agent = fields.optionalText('agent');
  const expires = optionalTime(fields, 'expires', what);
  const last = fields.raw('lastRun');
  return {
    id,
    sessionId: fields.text('sessionId'),
    prompt: fields.text('prompt'),
    when: whenOf(fields, what),
    timezone,
    description: fields.text('description'),
    ...(agent === undefined || agent.trim() === '' ? {} : { agent }),
    target: fields.oneOf('target', TARGETS),
    catchUp: fields.oneOf('catchUp', CATCH_UPS),
    ...(expires === undefined ? {} : { expires }),
    status: fields.oneOf('status', SCHEDULE_STATUSES),
    createdAt: time(fields, 'createdAt', what),
    nextFires,
    ...(last === undefined || last === null ? {} : { lastRun: runRow(last, `${what}.lastRun`) }),
    runs: fields.count('runs'),
  };
}

/** The viewer's own time zone (the one the page's dates are shown in). */
export function viewerTimeZone(): string {
  return new Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** The card of a `schedule_create` call. */
export interface ScheduleCreateModel {
  readonly kind: 'scheduleCreate';
  readonly state: CallState;
  /** The prompt asked for (the row's summary); absent while preparing. */
  readonly prompt?: string;
  /** The schedule the runtime created, once the call ended `ok`. */
  readonly schedule?: ScheduleRow;
  /** A failed call's plain card (a refused schedule names what is wrong). */
  readonly body?: PlainBody;
}

/**
 * The `schedule_create` card: the prompt on the row; once created, the schedule (when it fires
 * in words, its cron / interval / time, zone, target, catch-up, expiry, next fires). A record of
 * another prompt than the call asked for, or data of another shape, falls back to the generic
 * card.
 */
export function scheduleCreateModel(input: CardInput): ScheduleCreateModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'scheduleCreate', state };
  try {
    const prompt = new Fields(input.arguments, 'arguments').text('prompt');
    const base = { kind: 'scheduleCreate' as const, state, prompt };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const schedule = scheduleRow(output.raw('schedule'), 'output.schedule');
    if (schedule.prompt.trim() !== prompt.trim()) {
      throw new Unsupported('the schedule created has another prompt than the call asked for');
    }
    return { ...base, schedule };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `schedule_list` call. */
export interface ScheduleListModel {
  readonly kind: 'scheduleList';
  readonly state: CallState;
  /** The session's schedules as the call read them, newest first. */
  readonly schedules?: readonly ScheduleRow[];
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The `schedule_list` card: the session's schedules as the call read them then. */
export function scheduleListModel(input: CardInput): ScheduleListModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing' || input.result === undefined) {
    return { kind: 'scheduleList', state };
  }
  if (endedBadly(input)) return { kind: 'scheduleList', state, body: plainBody(input) };
  try {
    const output = new Fields(input.result.output, 'output');
    const schedules = output
      .list('schedules')
      .map((value, at) => scheduleRow(value, `output.schedules[${at}]`));
    return { kind: 'scheduleList', state, schedules };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `schedule_delete` call. */
export interface ScheduleDeleteModel {
  readonly kind: 'scheduleDelete';
  readonly state: CallState;
  /** The id asked for; absent while preparing. */
  readonly id?: string;
  /** The schedule as the deletion left it. */
  readonly schedule?: ScheduleRow;
  /** A failed call's plain card (an unknown id). */
  readonly body?: PlainBody;
}

/**
 * The `schedule_delete` card: a receipt naming the schedule deleted. A record of another id, or
 * one the deletion did not leave `deleted`, falls back to the generic card.
 */
export function scheduleDeleteModel(input: CardInput): ScheduleDeleteModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'scheduleDelete', state };
  try {
    const id = new Fields(input.arguments, 'arguments').text('id');
    const base = { kind: 'scheduleDelete' as const, state, id };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const schedule = scheduleRow(new Fields(input.result.output, 'output').raw('schedule'));
    if (schedule.id !== id) throw new Unsupported('the schedule deleted is not the one asked for');
    if (schedule.status !== 'deleted') {
      throw new Unsupported(`a deleted schedule is ${schedule.status}`);
    }
    return { ...base, schedule };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
