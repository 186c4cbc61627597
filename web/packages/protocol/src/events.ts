import type {
  AgentInfo,
  AgentStartedEvent,
  Answer,
  AutoReviewRecord,
  CallPresentation,
  ContentBlock,
  ContextCompactedEvent,
  Detail,
  Event,
  Question,
  RequestAsk,
  RequestOpenedEvent,
  RequestResolution,
  RequestResolvedEvent,
  ReviewCircuitOpenEvent,
  ReviewGrant,
  ReviewGrantedEvent,
  SessionStartedEvent,
  ToolPreparingEvent,
  ToolProgressEvent,
  ToolResultEvent,
  ToolReviewedEvent,
  ToolStartEvent,
  Usage,
} from './generated';

/** The event types this client folds; any other type is skipped (it may be newer than us). */
export const KNOWN_EVENT_TYPES = [
  'session.started',
  'turn.started',
  'turn.finished',
  'step.started',
  'step.text.delta',
  'step.reasoning.delta',
  'step.reasoning.end',
  'step.finished',
  'tool.preparing',
  'tool.start',
  'tool.progress',
  'tool.result',
  'request.opened',
  'request.resolved',
  'context.compacted',
  'agent.started',
  'tool.reviewed',
  'review.granted',
  'review.circuit_open',
] as const;

/** One of [`KNOWN_EVENT_TYPES`]. */
export type KnownEventType = (typeof KNOWN_EVENT_TYPES)[number];

/** Something wrong with one event or line of a log, said so that a person can find it. */
export interface EventProblem {
  /** The line of the log (from 1), when the event came from a JSON-lines text. */
  line?: number;
  /** The event's `seq`, when it had one. */
  seq?: number;
  /** What is wrong and what was expected. */
  message: string;
}

/** What reading one value as an event gives. */
export type EventReading =
  | { kind: 'event'; event: Event }
  | { kind: 'unknown'; type: string }
  | { kind: 'invalid'; problem: EventProblem };

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

class FieldError extends Error {}

function text(fields: Fields, name: string): string {
  const value = fields[name];
  if (typeof value !== 'string') {
    throw new FieldError(`\`${name}\` should be a string, got ${describe(value)}`);
  }
  return value;
}

function optionalText(fields: Fields, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  return text(fields, name);
}

function object(fields: Fields, name: string): Fields {
  const value = fields[name];
  if (!isObject(value)) {
    throw new FieldError(`\`${name}\` should be an object, got ${describe(value)}`);
  }
  return value;
}

function list(fields: Fields, name: string): unknown[] {
  const value = fields[name];
  if (!Array.isArray(value)) {
    throw new FieldError(`\`${name}\` should be an array, got ${describe(value)}`);
  }
  return value;
}

/** A problem inside the field `outer`, named by its whole path (`ask.reason`). */
function within(outer: string, error: unknown): unknown {
  if (!(error instanceof FieldError)) return error;
  return new FieldError(error.message.replace(/^`/, `\`${outer}.`));
}

/** Reads `name` of `fields` with `read`, naming the field in front of any problem inside it. */
function nested<T>(fields: Fields, name: string, read: (value: Fields) => T): T {
  const value = object(fields, name);
  try {
    return read(value);
  } catch (error) {
    throw within(name, error);
  }
}

/** Reads every item of the array `name` with `read`; a problem names the item's index. */
function items<T>(fields: Fields, name: string, read: (value: Fields) => T): T[] {
  return list(fields, name).map((value, index) => {
    const at = `${name}[${index}]`;
    if (!isObject(value))
      throw new FieldError(`\`${at}\` should be an object, got ${describe(value)}`);
    try {
      return read(value);
    } catch (error) {
      throw within(at, error);
    }
  });
}

function optionalFlag(fields: Fields, name: string): boolean | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') {
    throw new FieldError(`\`${name}\` should be true or false, got ${describe(value)}`);
  }
  return value;
}

function strings(fields: Fields, name: string): string[] {
  return list(fields, name).map((value, index) => {
    if (typeof value !== 'string') {
      throw new FieldError(`\`${name}[${index}]\` should be a string, got ${describe(value)}`);
    }
    return value;
  });
}

/** RFC 3339 with a date, a time and a zone (`2026-11-30T17:05:16.123Z`, `...+08:00`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The event's time. A log written before protocol v2 has none: the event is kept with an
 * empty `time` (nothing the fold needs is missing); a `time` that is there must be RFC 3339.
 */
function time(fields: Fields): string {
  const value = fields.time;
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string' || !RFC3339.test(value)) {
    throw new FieldError(
      `\`time\` should be an RFC 3339 time such as "2026-11-30T17:05:16.123Z", got ${describe(value)}`,
    );
  }
  return value;
}

function count(fields: Fields, name: string, fallback?: number): number {
  const value = fields[name];
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new FieldError(`\`${name}\` should be a number, got ${describe(value)}`);
  }
  return value;
}

/** A short description of a value for an error message. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  return `a ${typeof value}`;
}

function presentation(value: unknown): CallPresentation | undefined {
  if (!isObject(value)) return undefined;
  const { action, remark } = value;
  if (typeof action !== 'string' || typeof remark !== 'string') return undefined;
  return { action, remark };
}

function detail(value: unknown): Detail | undefined {
  return isObject(value) && typeof value.type === 'string' ? (value as Detail) : undefined;
}

/** The content blocks of a result; blocks that are not objects with a `type` are left out. */
function content(value: unknown): ContentBlock[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (block): block is ContentBlock => isObject(block) && typeof block.type === 'string',
  );
}

function sessionStarted(fields: Fields): SessionStartedEvent {
  const agent = nested(fields, 'agent', (value): AgentInfo => {
    const file = optionalText(value, 'file');
    const fileHash = optionalText(value, 'fileHash');
    return {
      name: text(value, 'name'),
      ...(file === undefined ? {} : { file }),
      ...(fileHash === undefined ? {} : { fileHash }),
    };
  });
  const parentSessionId = optionalText(fields, 'parentSessionId');
  const parentCallId = optionalText(fields, 'parentCallId');
  return {
    sessionId: text(fields, 'sessionId'),
    protocolVersion: count(fields, 'protocolVersion'),
    agent,
    model: text(fields, 'model'),
    workspace: text(fields, 'workspace'),
    ...(parentSessionId === undefined ? {} : { parentSessionId }),
    ...(parentCallId === undefined ? {} : { parentCallId }),
  };
}

function agentStarted(fields: Fields): AgentStartedEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  const name = optionalText(fields, 'name');
  const background = fields.background;
  if (typeof background !== 'boolean') {
    throw new FieldError(`\`background\` should be true or false, got ${describe(background)}`);
  }
  return {
    callId: text(fields, 'callId'),
    ...(parentCallId === undefined ? {} : { parentCallId }),
    childSessionId: text(fields, 'childSessionId'),
    agent: text(fields, 'agent'),
    description: text(fields, 'description'),
    ...(name === undefined ? {} : { name }),
    background,
  };
}

function question(fields: Fields): Question {
  const options =
    fields.options === undefined || fields.options === null
      ? undefined
      : strings(fields, 'options');
  const multiSelect = optionalFlag(fields, 'multi_select');
  return {
    id: text(fields, 'id'),
    question: text(fields, 'question'),
    ...(options === undefined ? {} : { options }),
    ...(multiSelect === undefined ? {} : { multi_select: multiSelect }),
  };
}

/**
 * What a request asks. An approval needs its reason, questions need their text; a kind this
 * client does not know is kept as written (the display shows a call waiting for a person).
 */
function ask(fields: Fields): RequestAsk {
  const kind = text(fields, 'kind');
  if (kind === 'approval') {
    const shown = detail(fields.detail);
    return {
      kind,
      reason: text(fields, 'reason'),
      presentation: presentation(fields.presentation) ?? { action: '', remark: '' },
      arguments: fields.arguments ?? null,
      ...(shown === undefined ? {} : { detail: shown }),
    };
  }
  if (kind === 'question') return { kind, questions: items(fields, 'questions', question) };
  return { ...fields, kind } as unknown as RequestAsk;
}

/** How a request ended; an outcome this client does not know is kept as written. */
function resolution(fields: Fields): RequestResolution {
  const outcome = text(fields, 'outcome');
  switch (outcome) {
    case 'approved':
    case 'dismissed':
    case 'cancelled':
      return { outcome };
    case 'denied': {
      const reason = optionalText(fields, 'reason');
      return { outcome, ...(reason === undefined ? {} : { reason }) };
    }
    case 'answered':
      return {
        outcome,
        answers: items(fields, 'answers', (value): Answer => ({
          id: text(value, 'id'),
          answer: strings(value, 'answer'),
        })),
      };
    default:
      return { ...fields, outcome } as unknown as RequestResolution;
  }
}

function requestOpened(fields: Fields): RequestOpenedEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  const childSessionId = optionalText(fields, 'childSessionId');
  const childName = optionalText(fields, 'childName');
  return {
    requestId: text(fields, 'requestId'),
    callId: text(fields, 'callId'),
    ...(parentCallId === undefined ? {} : { parentCallId }),
    toolName: text(fields, 'toolName'),
    ask: nested(fields, 'ask', ask),
    ...(childSessionId === undefined ? {} : { childSessionId }),
    ...(childName === undefined ? {} : { childName }),
  };
}

function requestResolved(fields: Fields): RequestResolvedEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  return {
    requestId: text(fields, 'requestId'),
    callId: text(fields, 'callId'),
    ...(parentCallId === undefined ? {} : { parentCallId }),
    resolution: nested(fields, 'resolution', resolution),
    resolvedBy: text(fields, 'resolvedBy'),
  };
}

function preparing(fields: Fields): ToolPreparingEvent {
  return {
    callId: text(fields, 'callId'),
    toolName: text(fields, 'toolName'),
    argumentsDelta: text(fields, 'argumentsDelta'),
  };
}

function start(fields: Fields): ToolStartEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  const before = detail(fields.beforeDetail);
  return {
    callId: text(fields, 'callId'),
    toolName: text(fields, 'toolName'),
    caller: fields.caller === 'code' ? 'code' : 'direct',
    ...(parentCallId === undefined ? {} : { parentCallId }),
    arguments: fields.arguments ?? null,
    presentation: presentation(fields.presentation) ?? { action: '', remark: '' },
    ...(before === undefined ? {} : { beforeDetail: before }),
  };
}

function progress(fields: Fields): ToolProgressEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  const omittedBytes =
    fields.omittedBytes === undefined || fields.omittedBytes === null
      ? undefined
      : count(fields, 'omittedBytes');
  return {
    callId: text(fields, 'callId'),
    ...(parentCallId === undefined ? {} : { parentCallId }),
    ...(omittedBytes === undefined ? {} : { omittedBytes }),
    text: text(fields, 'text'),
  };
}

function result(fields: Fields): ToolResultEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  const errorCode = optionalText(fields, 'errorCode');
  const userReason = optionalText(fields, 'userReason');
  const after = detail(fields.detail);
  return {
    callId: text(fields, 'callId'),
    toolName: text(fields, 'toolName'),
    caller: fields.caller === 'code' ? 'code' : 'direct',
    ...(parentCallId === undefined ? {} : { parentCallId }),
    // An unknown status or code is kept as written; the display treats it as a failure.
    status: text(fields, 'status') as ToolResultEvent['status'],
    ...(errorCode === undefined ? {} : { errorCode: errorCode as ToolResultEvent['errorCode'] }),
    content: content(fields.content),
    ...(userReason === undefined ? {} : { userReason }),
    ...(fields.output === undefined || fields.output === null ? {} : { output: fields.output }),
    ...(after === undefined ? {} : { detail: after }),
    durationMs: count(fields, 'durationMs', 0),
  };
}

/** A reviewer's verdict, risk or fallback: one of `choices`; anything else is refused. */
function choice<T extends string>(fields: Fields, name: string, choices: readonly T[]): T {
  const value = fields[name];
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw new FieldError(
      `\`${name}\` should be one of ${choices.join(', ')}, got ${describe(value)}`,
    );
  }
  return value as T;
}

function optionalChoice<T extends string>(
  fields: Fields,
  name: string,
  choices: readonly T[],
): T | undefined {
  const value = fields[name];
  return value === undefined || value === null ? undefined : choice(fields, name, choices);
}

/** One review of one call, as `tool.reviewed` carries it. */
function reviewRecord(fields: Fields): AutoReviewRecord {
  const risk = optionalChoice(fields, 'risk', ['low', 'medium', 'high'] as const);
  const fallback = optionalChoice(fields, 'fallback', [
    'asked_person',
    'unattended_policy',
  ] as const);
  return {
    reviewer: text(fields, 'reviewer'),
    verdict: choice(fields, 'verdict', ['allow', 'deny', 'failed', 'timed_out'] as const),
    ...(risk === undefined ? {} : { risk }),
    userReason: text(fields, 'userReason'),
    latencyMs: count(fields, 'latencyMs', 0),
    inputTokens: count(fields, 'inputTokens', 0),
    outputTokens: count(fields, 'outputTokens', 0),
    ...(fallback === undefined ? {} : { fallback }),
  };
}

function reviewed(fields: Fields): ToolReviewedEvent {
  const parentCallId = optionalText(fields, 'parentCallId');
  return {
    callId: text(fields, 'callId'),
    ...(parentCallId === undefined ? {} : { parentCallId }),
    review: nested(fields, 'review', reviewRecord),
  };
}

function granted(fields: Fields): ReviewGrantedEvent {
  return {
    grant: nested(fields, 'grant', (value): ReviewGrant => {
      const usedBy = optionalText(value, 'usedBy');
      return {
        id: text(value, 'id'),
        callId: text(value, 'callId'),
        toolName: text(value, 'toolName'),
        arguments: value.arguments ?? null,
        grantedAt: text(value, 'grantedAt'),
        ...(usedBy === undefined ? {} : { usedBy }),
      };
    }),
  };
}

function circuitOpen(fields: Fields): ReviewCircuitOpenEvent {
  return {
    turnId: text(fields, 'turnId'),
    denialsInARow: count(fields, 'denialsInARow'),
    denialsInWindow: count(fields, 'denialsInWindow'),
    message: text(fields, 'message'),
  };
}

function known(type: KnownEventType, seq: number, time: string, fields: Fields): Event {
  const at = { seq, time };
  switch (type) {
    case 'session.started':
      return { ...at, type, ...sessionStarted(fields) };
    case 'turn.started': {
      const clientTurnId = optionalText(fields, 'clientTurnId');
      return {
        ...at,
        type,
        turnId: text(fields, 'turnId'),
        prompt: text(fields, 'prompt'),
        ...(clientTurnId === undefined ? {} : { clientTurnId }),
      };
    }
    case 'turn.finished': {
      const message = optionalText(fields, 'message');
      return {
        ...at,
        type,
        turnId: text(fields, 'turnId'),
        // A reason this client does not know is kept as written.
        reason: text(fields, 'reason') as Extract<Event, { type: 'turn.finished' }>['reason'],
        ...(message === undefined ? {} : { message }),
      };
    }
    case 'step.started':
      return { ...at, type, turnId: text(fields, 'turnId'), step: count(fields, 'step') };
    case 'step.text.delta':
    case 'step.reasoning.delta':
      return {
        ...at,
        type,
        turnId: text(fields, 'turnId'),
        step: count(fields, 'step'),
        text: text(fields, 'text'),
      };
    case 'step.reasoning.end': {
      const signature = optionalText(fields, 'signature');
      const redacted = optionalText(fields, 'redacted');
      return {
        ...at,
        type,
        turnId: text(fields, 'turnId'),
        step: count(fields, 'step'),
        ...(signature === undefined ? {} : { signature }),
        ...(redacted === undefined ? {} : { redacted }),
      };
    }
    case 'step.finished': {
      // A stop reason this client does not know is kept as written.
      const stopReason = optionalText(fields, 'stopReason') as
        Extract<Event, { type: 'step.finished' }>['stopReason'] | undefined;
      return {
        ...at,
        type,
        turnId: text(fields, 'turnId'),
        step: count(fields, 'step'),
        usage: usageOf(fields),
        ...(stopReason === undefined ? {} : { stopReason }),
      };
    }
    case 'tool.preparing':
      return { ...at, type, ...preparing(fields) };
    case 'tool.start':
      return { ...at, type, ...start(fields) };
    case 'tool.progress':
      return { ...at, type, ...progress(fields) };
    case 'tool.result':
      return { ...at, type, ...result(fields) };
    case 'request.opened':
      return { ...at, type, ...requestOpened(fields) };
    case 'request.resolved':
      return { ...at, type, ...requestResolved(fields) };
    case 'context.compacted':
      return { ...at, type, ...compacted(fields) };
    case 'agent.started':
      return { ...at, type, ...agentStarted(fields) };
    case 'tool.reviewed':
      return { ...at, type, ...reviewed(fields) };
    case 'review.granted':
      return { ...at, type, ...granted(fields) };
    case 'review.circuit_open':
      return { ...at, type, ...circuitOpen(fields) };
  }
}

function usageOf(fields: Fields): Usage {
  const usage = isObject(fields.usage) ? fields.usage : {};
  return {
    inputTokens: count(usage, 'inputTokens', 0),
    outputTokens: count(usage, 'outputTokens', 0),
    cacheReadTokens: count(usage, 'cacheReadTokens', 0),
  };
}

function compacted(fields: Fields): ContextCompactedEvent {
  return {
    summary: text(fields, 'summary'),
    replacesThroughSeq: count(fields, 'replacesThroughSeq'),
    usage: usageOf(fields),
    estimatedTokensBefore: count(fields, 'estimatedTokensBefore', 0),
    estimatedTokensAfter: count(fields, 'estimatedTokensAfter', 0),
  };
}

const knownTypes: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES);

/**
 * Reads one decoded JSON value as an event. Fields the client does not know are ignored,
 * an event type it does not know is `unknown` (skipped, never an error), and an event that
 * lacks a field of its type, or has one of the wrong shape, is `invalid` with a message
 * naming the field by its whole path (`ask.questions[1].question`).
 */
export function readEvent(value: unknown): EventReading {
  if (!isObject(value)) {
    return {
      kind: 'invalid',
      problem: { message: `an event should be a JSON object, got ${describe(value)}` },
    };
  }
  const type = value.type;
  const seq = typeof value.seq === 'number' && Number.isFinite(value.seq) ? value.seq : undefined;
  const at = seq === undefined ? {} : { seq };
  if (typeof type !== 'string') {
    return {
      kind: 'invalid',
      problem: { ...at, message: `an event needs a string \`type\`, got ${describe(type)}` },
    };
  }
  if (!knownTypes.has(type)) return { kind: 'unknown', type };
  if (seq === undefined) {
    return {
      kind: 'invalid',
      problem: {
        message: `a \`${type}\` event needs a number \`seq\`, got ${describe(value.seq)}`,
      },
    };
  }
  try {
    return { kind: 'event', event: known(type as KnownEventType, seq, time(value), value) };
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    return { kind: 'invalid', problem: { seq, message: `\`${type}\` event: ${error.message}` } };
  }
}

/** A session's log read from JSON lines: the events the client folds, and what was wrong. */
export interface EventLog {
  /** The readable events of known types, in the order of the log. */
  events: Event[];
  /** Lines that were not JSON, and events missing a field or holding one of the wrong shape. */
  problems: EventProblem[];
  /** How many events had a type this client does not know (newer events are skipped). */
  skipped: number;
}

/** Reads a JSON-lines event log; blank lines are allowed, nothing in it throws. */
export function readEventLog(source: string): EventLog {
  const log: EventLog = { events: [], problems: [], skipped: 0 };
  const lines = source.split('\n');
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log.problems.push({ line: index + 1, message: `not JSON (${reason})` });
      return;
    }
    const reading = readEvent(value);
    if (reading.kind === 'event') log.events.push(reading.event);
    else if (reading.kind === 'unknown') log.skipped += 1;
    else log.problems.push({ line: index + 1, ...reading.problem });
  });
  return log;
}
