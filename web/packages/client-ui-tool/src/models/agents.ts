// The cards of the agent family — `agent`, `agent_wait`, `agent_list`, `agent_stop`,
// `agent_send` — from the raw fields of each call: its arguments and the child records the
// runtime recorded as its output.
import { message, type Message } from '@qilin-agent/i18n';
import type { ChildStatus, Delivery } from '@qilin-agent/protocol';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import { sessionHref } from './sessionLink';

/**
 * Where a child session stands, as its record says (the generated `ChildStatus`): `idle` is a
 * teammate between turns, alive and waiting for a message.
 */
export type ChildState = ChildStatus;

/** Every [`ChildState`], for reading a record. */
export const CHILD_STATUSES: readonly ChildState[] = [
  'running',
  'idle',
  'completed',
  'failed',
  'interrupted',
  'out_of_budget',
];

/** True for a child that has not ended: running, or a teammate idle between turns. */
export function childAlive(status: ChildState): boolean {
  return status === 'running' || status === 'idle';
}

/** The dot of a child's status: a call's dot state, or `idle`, a teammate's quiet ring. */
export type ChildDot = CallState | 'idle';

/** One child session's record (`ChildRecord`) as the cards show it. */
export interface ChildRow {
  /** The child's session id. */
  readonly sessionId: string;
  /** The agent it runs. */
  readonly agent: string;
  /** What it was asked to do, in a few words. */
  readonly description: string;
  /** Its name, for a named child. */
  readonly name?: string;
  /** True for a child started in the background. */
  readonly background: boolean;
  /** Where it stands. */
  readonly status: ChildState;
  /** Its final answer, once it ended. */
  readonly answer?: string;
  /** Why it failed or what stopped it. */
  readonly error?: string;
  /** Model steps so far. */
  readonly steps: number;
  /** Input tokens so far. */
  readonly inputTokens: number;
  /** Output tokens so far. */
  readonly outputTokens: number;
  /** Cost so far in US dollars, when the model's price is known. */
  readonly costUsd?: number;
  /** Wall time so far, or until it ended. */
  readonly durationMs: number;
  /** The page's address of the child session. */
  readonly href: string;
}

/**
 * The static colour of a child's status: the same dot states a call's row uses, and a quiet ring
 * of its own for an idle teammate (alive, not done).
 */
export function childDot(status: ChildState): ChildDot {
  switch (status) {
    case 'running':
      return 'running';
    case 'idle':
      return 'idle';
    case 'completed':
      return 'ok';
    case 'interrupted':
      return 'interrupted';
    case 'failed':
    case 'out_of_budget':
      return 'error';
  }
}

/** A session id as given: a non-empty string. */
function sessionIdOf(fields: Fields, name: string, what: string): string {
  const id = fields.text(name);
  if (id.trim() === '') throw new Unsupported(`${what}.${name} is empty`);
  return id;
}

/**
 * One recorded child (`ChildRecord`) as a row; throws [`Unsupported`] when it does not have the
 * record's shape. `what` names it in the error.
 */
export function childRow(value: unknown, what = 'child'): ChildRow {
  const record = new Fields(value, what);
  const sessionId = sessionIdOf(record, 'sessionId', what);
  const name = record.optionalText('name');
  const answer = record.optionalText('answer');
  const error = record.optionalText('error');
  const usage = new Fields(record.raw('usage'), `${what}.usage`);
  const costUsd = usage.optionalAmount('costUsd');
  return {
    sessionId,
    agent: record.text('agent'),
    description: record.text('description'),
    ...(name === undefined || name === '' ? {} : { name }),
    background: record.flag('background'),
    status: record.oneOf('status', CHILD_STATUSES),
    ...(answer === undefined ? {} : { answer }),
    ...(error === undefined || error.trim() === '' ? {} : { error }),
    steps: record.count('steps'),
    inputTokens: usage.count('inputTokens'),
    outputTokens: usage.count('outputTokens'),
    ...(costUsd === undefined ? {} : { costUsd }),
    durationMs: record.count('durationMs'),
    href: sessionHref(sessionId),
  };
}

/** The capsule of a child that ended other than `completed` (the call itself may be `ok`). */
function childCapsule(status: ChildState): Message | undefined {
  return childAlive(status) || status === 'completed'
    ? undefined
    : message(`agents.status.${status}`);
}

/** The arguments of an `agent` call, checked. */
interface AgentArguments {
  readonly agent: string;
  readonly prompt: string;
  readonly description: string;
  readonly name?: string;
  readonly background: boolean;
}

function agentArguments(value: unknown): AgentArguments {
  const args = new Fields(value, 'arguments');
  const agent = args.text('agent');
  if (agent.trim() === '') throw new Unsupported('arguments.agent is empty');
  const name = args.optionalText('name');
  return {
    agent,
    prompt: args.text('prompt'),
    description: args.text('description'),
    ...(name === undefined || name === '' ? {} : { name }),
    background: args.optionalFlag('background') ?? false,
  };
}

/** The card of an `agent` call. */
export interface AgentModel {
  readonly kind: 'agent';
  /** The row's state: the call's, a receipt once a background child was started. */
  readonly state: CallState;
  /** What the child was asked to do (the row's summary); absent while preparing. */
  readonly description?: string;
  /** The agent it runs. */
  readonly agent?: string;
  /** Its name, for a named child. */
  readonly name?: string;
  /** True for a child started in the background. */
  readonly background?: boolean;
  /** The prompt the child was given. */
  readonly prompt?: string;
  /** The child's session id, once the runtime created it (the live link, else the record). */
  readonly childSessionId?: string;
  /** The page's address of the child session. */
  readonly href?: string;
  /** The child's record, once the call ended. */
  readonly record?: ChildRow;
  /** The capsule of a child that ended other than completed. */
  readonly capsule?: Message;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `agent` card: the child's description on the row with its agent and whether it runs in
 * the foreground or the background; once the call ended, the child's answer and a short record
 * (status, steps, tokens, cost, duration) and a link that opens the child session. A background
 * start is a receipt: the call only started the child (its result comes through `agent_wait`),
 * so the row shows no execution state. A foreground child that ended other than completed gets
 * a capsule; the row's own state stays the call's. The child's session is known from the live
 * link the runtime folds onto the call (`child`) before the call ends, else from the record.
 * A failed call shows its plain input and output; data of another shape the generic card.
 */
export function agentModel(input: CardInput): AgentModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'agent', state };
  try {
    const args = agentArguments(input.arguments);
    const linked = input.child?.sessionId;
    const base = {
      kind: 'agent' as const,
      state,
      description: args.description,
      agent: args.agent,
      ...(args.name === undefined ? {} : { name: args.name }),
      background: args.background,
      prompt: args.prompt,
      ...(linked === undefined ? {} : { childSessionId: linked, href: sessionHref(linked) }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const record = childRow(input.result.output, 'output');
    if (linked !== undefined && record.sessionId !== linked) {
      throw new Unsupported('the record names another child session than the call started');
    }
    if (record.background !== args.background) {
      throw new Unsupported('the record and the arguments disagree on the background');
    }
    const capsule = args.background ? undefined : childCapsule(record.status);
    return {
      ...base,
      state: args.background ? 'receipt' : state,
      childSessionId: record.sessionId,
      href: record.href,
      record,
      ...(capsule === undefined ? {} : { capsule }),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of an `agent_wait` call. */
export interface AgentWaitModel {
  readonly kind: 'agentWait';
  readonly state: CallState;
  /** The children waited for (ids or names), or `undefined` for every running child. */
  readonly ids?: readonly string[];
  /** The wait's bound in milliseconds, when the call set one. */
  readonly timeoutMs?: number;
  /** What the row says: how many finished, how many still run. */
  readonly suffix?: Message;
  /** The children that finished, each delivered here once. */
  readonly finished?: readonly ChildRow[];
  /** The ids of the children still running, with their addresses. */
  readonly running?: readonly { readonly sessionId: string; readonly href: string }[];
  /** True when the wait ended at its bound with children still running. */
  readonly timedOut?: boolean;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `agent_wait` card: which children it waited for (every running child when the call named
 * none) and its bound on the row; once ended, how many finished and how many still run, each
 * finished child's record with its answer, the ids still running (links to their sessions) and
 * whether the wait timed out. A finished record of a child the call did not wait for, or a
 * child both finished and running, is not the agreed shape: the generic card shows it.
 */
export function agentWaitModel(input: CardInput): AgentWaitModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'agentWait', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const ids = args.optionalList('ids')?.map((id, at) => {
      if (typeof id !== 'string' || id.trim() === '') {
        throw new Unsupported(`arguments.ids[${at}] is not a session id`);
      }
      return id;
    });
    const timeoutMs = args.optionalCount('timeout_ms');
    const base = {
      kind: 'agentWait' as const,
      state,
      ...(ids === undefined ? {} : { ids }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const finished = output.list('finished').map((item) => childRow(item, 'output.finished[]'));
    const running = output.list('running').map((id, at) => {
      if (typeof id !== 'string' || id.trim() === '') {
        throw new Unsupported(`output.running[${at}] is not a session id`);
      }
      return { sessionId: id, href: sessionHref(id) };
    });
    const timedOut = output.flag('timedOut');
    const finishedIds = new Set(finished.map((row) => row.sessionId));
    if (running.some((child) => finishedIds.has(child.sessionId))) {
      throw new Unsupported('a child is both finished and running');
    }
    if (ids !== undefined) {
      const asked = new Set(ids);
      const unasked = finished.find(
        (row) => !asked.has(row.sessionId) && !asked.has(row.name ?? ''),
      );
      if (unasked !== undefined) {
        throw new Unsupported(`output.finished names ${unasked.sessionId}, not waited for`);
      }
    }
    return {
      ...base,
      suffix: message(timedOut ? 'agents.wait.timedOutCounts' : 'agents.wait.counts', {
        finished: finished.length,
        running: running.length,
      }),
      finished,
      running,
      timedOut,
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of an `agent_list` call. */
export interface AgentListModel {
  readonly kind: 'agentList';
  readonly state: CallState;
  /** How many children, for the row. */
  readonly suffix?: Message;
  /** The session's children, as the runtime listed them. */
  readonly children?: readonly ChildRow[];
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `agent_list` card: how many children, how many still run and how many teammates are idle
 * on the row; a small table of each child (its name or description, agent, status, steps,
 * tokens) with a link to its session.
 */
export function agentListModel(input: CardInput): AgentListModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'agentList', state };
  try {
    new Fields(input.arguments, 'arguments');
    if (input.result === undefined) return { kind: 'agentList', state };
    if (endedBadly(input)) return { kind: 'agentList', state, body: plainBody(input) };
    const children = new Fields(input.result.output, 'output')
      .list('children')
      .map((item) => childRow(item, 'output.children[]'));
    const running = children.filter((child) => child.status === 'running').length;
    const idle = children.filter((child) => child.status === 'idle').length;
    return {
      kind: 'agentList',
      state,
      suffix:
        idle === 0
          ? message('agents.list.counts', { count: children.length, running })
          : message('agents.list.countsIdle', { count: children.length, running, idle }),
      children,
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of an `agent_stop` call: the receipt of an interrupt request. */
export interface AgentStopModel {
  readonly kind: 'agentStop';
  /** `receipt` once the request was made: the row shows no execution state. */
  readonly state: CallState;
  /** The child asked to stop, as the call named it; absent while preparing. */
  readonly target?: string;
  /** The one line the card expands to, once the request was made. */
  readonly confirmation?: Message;
  /** The status a child that had already ended ended with (nothing was interrupted). */
  readonly endedAs?: ChildState;
  /** The page's address of the child session. */
  readonly href?: string;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `agent_stop` receipt. It confirms that an interrupt was requested for the child, nothing
 * more: how the child's calls ended is the child session's (the link opens it). A child that
 * had already ended was not interrupted, and the card says so with the status it ended with.
 */
export function agentStopModel(input: CardInput): AgentStopModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'agentStop', state };
  try {
    const target = sessionIdOf(new Fields(input.arguments, 'arguments'), 'id', 'arguments');
    if (input.result === undefined) return { kind: 'agentStop', state, target };
    if (endedBadly(input)) return { kind: 'agentStop', state, target, body: plainBody(input) };
    const record = childRow(input.result.output, 'output');
    if (record.sessionId !== target && record.name !== target) {
      throw new Unsupported('the record names another child than the call stopped');
    }
    const stopped = record.status === 'interrupted' || childAlive(record.status);
    return {
      kind: 'agentStop',
      state: 'receipt',
      target,
      href: record.href,
      ...(stopped
        ? { confirmation: message('interrupt.requested', { target }) }
        : {
            confirmation: message('agents.stop.alreadyEnded', { target }),
            endedAs: record.status,
          }),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** How a message sent to a child was delivered. */
export const DELIVERIES: readonly Delivery[] = ['now', 'queued'];

/** The card of an `agent_send` call. */
export interface AgentSendModel {
  readonly kind: 'agentSend';
  readonly state: CallState;
  /** To whom, as the call named the child (its id or name); absent while preparing. */
  readonly to?: string;
  /** The message sent. */
  readonly message?: string;
  /** Delivered now, or queued for the child's next step. */
  readonly delivered?: Delivery;
  /** The page's address of the child session. */
  readonly href?: string;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `agent_send` card: to whom on the row, whether the message was delivered now or queued
 * until the child's next step; the message itself and a link to the child's session.
 */
export function agentSendModel(input: CardInput): AgentSendModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'agentSend', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const to = sessionIdOf(args, 'to', 'arguments');
    const base = { kind: 'agentSend' as const, state, to, message: args.text('message') };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    if (output.text('to') !== to) throw new Unsupported('the receipt names another recipient');
    const sessionId = sessionIdOf(output, 'sessionId', 'output');
    return {
      ...base,
      delivered: output.oneOf('delivered', DELIVERIES),
      href: sessionHref(sessionId),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** A number of tokens in `locale`'s short words, three digits at most: `950`, `12.4K`, `1.25M`. */
export function formatTokens(count: number, locale: string): string {
  return new Intl.NumberFormat(locale, {
    notation: 'compact',
    maximumSignificantDigits: 3,
  }).format(count);
}

/** A cost in US dollars in `locale`'s numbers, with four digits for amounts under a cent. */
export function formatCost(usd: number, locale: string): string {
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: usd > 0 && usd < 0.01 ? 4 : 2,
  }).format(usd);
}
