// The goal cards — `goal_create`, `goal_get`, `goal_update` — from the raw fields of each call:
// its arguments and the goal record the runtime recorded as its output.
import type { CallState } from '@qilin-agent/ui-primitives';
import { checksReceipt, type ChecksReceipt, type CheckRow } from './checks';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import type { GoalStatus, GoalVerdict, PauseCause } from '@qilin-agent/protocol';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** Every goal status, for reading a record. */
export const GOAL_STATUSES: readonly GoalStatus[] = [
  'active',
  'paused',
  'blocked',
  'budget_limited',
  'complete',
  'cleared',
];

/** Every reason a goal is paused, for reading a record. */
export const PAUSE_CAUSES: readonly PauseCause[] = ['user', 'stalled', 'restart'];

/** The static colour of a goal's status: the same dot states a call's row uses. */
export function goalDot(status: GoalStatus): CallState {
  switch (status) {
    case 'active':
      return 'running';
    case 'complete':
      return 'ok';
    case 'blocked':
      return 'error';
    case 'paused':
    case 'budget_limited':
      return 'waiting';
    case 'cleared':
      return 'interrupted';
  }
}

/** One measure of a goal: how much was spent, and its limit when it has one. */
export interface GoalMeasure {
  readonly used: number;
  /** The limit; absent when the goal has none for this measure. */
  readonly limit?: number;
}

/** A goal record (`GoalRecord`) as the cards and the banner show it. */
export interface GoalRow {
  readonly id: string;
  readonly objective: string;
  readonly status: GoalStatus;
  /** Why a paused goal is paused. */
  readonly pausedBecause?: PauseCause;
  /** Tokens spent, against the token budget. */
  readonly tokens: GoalMeasure;
  /** Seconds spent in the goal's turns, against the time budget. */
  readonly seconds: GoalMeasure;
  /** Turns taken, against the turn limit. */
  readonly turns: GoalMeasure;
  /** The check ids that decide completion; empty for every declared check. */
  readonly checks: readonly string[];
  /** The last run of the goal's checks the runtime made. */
  readonly lastChecks?: ChecksReceipt;
  /** Why the last change was made. */
  readonly reason?: string;
  /** What the model offered with `complete`. */
  readonly evidence?: string;
  /** RFC 3339. */
  readonly createdAt: string;
  /** RFC 3339. */
  readonly updatedAt: string;
}

function measure(used: number, limit: number | undefined): GoalMeasure {
  return limit === undefined ? { used } : { used, limit };
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** One recorded goal (`GoalRecord`); throws [`Unsupported`] for another shape. */
export function goalRow(value: unknown, what = 'goal'): GoalRow {
  const fields = new Fields(value, what);
  const id = fields.text('id');
  if (id.trim() === '') throw new Unsupported(`${what}.id is empty`);
  const status = fields.oneOf('status', GOAL_STATUSES);
  const pause = fields.raw('pausedBecause');
  const pausedBecause =
    pause === undefined || pause === null ? undefined : fields.oneOf('pausedBecause', PAUSE_CAUSES);
  const budget = new Fields(fields.raw('budget'), `${what}.budget`);
  const usage = new Fields(fields.raw('usage'), `${what}.usage`);
  const checks = fields.list('checks').map((check, at) => {
    if (typeof check !== 'string' || check.trim() === '') {
      throw new Unsupported(`${what}.checks[${at}] is not a check id`);
    }
    return check;
  });
  const last = fields.raw('lastChecks');
  const reason = nonBlank(fields.optionalText('reason'));
  const evidence = nonBlank(fields.optionalText('evidence'));
  return {
    id,
    objective: fields.text('objective'),
    status,
    ...(pausedBecause === undefined ? {} : { pausedBecause }),
    tokens: measure(usage.count('tokens'), budget.optionalCount('tokens')),
    seconds: measure(usage.count('seconds'), budget.optionalCount('seconds')),
    turns: measure(usage.count('turns'), budget.optionalCount('turns')),
    checks,
    ...(last === undefined || last === null
      ? {}
      : { lastChecks: checksReceipt(last, `${what}.lastChecks`) }),
    ...(reason === undefined ? {} : { reason }),
    ...(evidence === undefined ? {} : { evidence }),
    createdAt: fields.text('createdAt'),
    updatedAt: fields.text('updatedAt'),
  };
}

/** The card of a `goal_create` call. */
export interface GoalCreateModel {
  readonly kind: 'goalCreate';
  readonly state: CallState;
  /** The objective asked for (the row's summary); absent while preparing. */
  readonly objective?: string;
  /** The goal the runtime created, once the call ended `ok`. */
  readonly goal?: GoalRow;
  /** A failed call's plain card (a goal already active, a bad budget). */
  readonly body?: PlainBody;
}

/**
 * The `goal_create` card: the objective on the row; once created, the goal's card (status,
 * budget and what was spent, its checks, its dates). A record of another objective than the
 * call asked for, or data of another shape, falls back to the generic card.
 */
export function goalCreateModel(input: CardInput): GoalCreateModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'goalCreate', state };
  try {
    const objective = new Fields(input.arguments, 'arguments').text('objective');
    const base = { kind: 'goalCreate' as const, state, objective };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const goal = goalRow(input.result.output, 'output');
    if (goal.objective.trim() !== objective.trim()) {
      throw new Unsupported('the goal created has another objective than the call asked for');
    }
    return { ...base, goal };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `goal_get` call. */
export interface GoalGetModel {
  readonly kind: 'goalGet';
  readonly state: CallState;
  /** The session's goal as the call read it; `null` when it had none. */
  readonly goal?: GoalRow | null;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The `goal_get` card: the goal as the call read it then (not as it stands now), or none. */
export function goalGetModel(input: CardInput): GoalGetModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing' || input.result === undefined) return { kind: 'goalGet', state };
  if (endedBadly(input)) return { kind: 'goalGet', state, body: plainBody(input) };
  try {
    const output = new Fields(input.result.output, 'output');
    const value = output.raw('goal');
    if (value === undefined) throw new Unsupported('output.goal is missing');
    return { kind: 'goalGet', state, goal: value === null ? null : goalRow(value, 'output.goal') };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `goal_update` call. */
export interface GoalUpdateModel {
  readonly kind: 'goalUpdate';
  readonly state: CallState;
  /** What the call asked for; absent while preparing. */
  readonly asked?: GoalVerdict;
  /** Why, as the model said. */
  readonly reason?: string;
  /** What the model offered as evidence. */
  readonly evidence?: string;
  /** True when the runtime accepted the change; absent until the call ended `ok`. */
  readonly accepted?: boolean;
  /** The runtime's message (the failing checks it names, for a refusal). */
  readonly message?: string;
  /** The checks the runtime ran to decide. */
  readonly checks?: ChecksReceipt;
  /** The runs that failed, for a refusal. */
  readonly failing?: readonly CheckRow[];
  /** The goal after the call. */
  readonly goal?: GoalRow;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `goal_update` card: what was asked (complete or blocked) on the row with accepted or
 * refused; the runtime's message, the failing checks of a refused `complete`, the checks it ran,
 * the goal as the call left it. An accepted change the record does not show, or data of another
 * shape, falls back to the generic card.
 */
export function goalUpdateModel(input: CardInput): GoalUpdateModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'goalUpdate', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const asked = args.oneOf<GoalVerdict>('status', ['complete', 'blocked']);
    const reason = nonBlank(args.text('reason'));
    const evidence = nonBlank(args.optionalText('evidence'));
    const base = {
      kind: 'goalUpdate' as const,
      state,
      asked,
      ...(reason === undefined ? {} : { reason }),
      ...(evidence === undefined ? {} : { evidence }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const goal = goalRow(output.raw('goal'), 'output.goal');
    const accepted = output.flag('accepted');
    const checksValue = output.raw('checks');
    const checks =
      checksValue === undefined || checksValue === null
        ? undefined
        : checksReceipt(checksValue, 'output.checks');
    if (accepted && goal.status !== asked) {
      throw new Unsupported(`an accepted ${asked} left the goal ${goal.status}`);
    }
    if (accepted && asked === 'complete' && checks?.conclusion === 'failure') {
      throw new Unsupported('a complete was accepted with failing checks');
    }
    const failing = checks?.runs.filter((run) => run.conclusion === 'failure');
    return {
      ...base,
      accepted,
      message: output.text('message'),
      ...(checks === undefined ? {} : { checks }),
      ...(failing === undefined || accepted ? {} : { failing }),
      goal,
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** A measure's left amount: its limit less what was spent (never below zero). */
export function leftOf(measure: GoalMeasure): number | undefined {
  return measure.limit === undefined ? undefined : Math.max(0, measure.limit - measure.used);
}
