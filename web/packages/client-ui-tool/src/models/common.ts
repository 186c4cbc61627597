import type {
  AutoReviewRecord,
  ChildLink,
  ContentBlock,
  ErrorCode,
  RequestNode,
  ReviewGrant,
} from '@qilin-agent/protocol';
import type { CallState } from '@qilin-agent/ui-primitives';
import type { LiveGap, ResultBlock, ToolCallOwnerProps } from '../slots';

/** What a card model reads: the raw event fields of one call, and where the session works. */
export interface CardInput {
  /** The tool's wire name. */
  readonly toolName: string;
  /** The call's phase. */
  readonly phase: 'preparing' | 'start' | 'result';
  /** The recorded arguments (absent while preparing, or for a result with no start). */
  readonly arguments?: unknown;
  /** Live output so far (its start, when `progressGap` follows). */
  readonly progress?: string;
  /** Live output left out after `progress`, and the latest output after it. */
  readonly progressGap?: LiveGap;
  /** How the call ended. */
  readonly result?: ResultBlock;
  /** The `run_code` call that made it. */
  readonly parentCallId?: string;
  /** The request the call waits on, while a person has not answered it. */
  readonly pending?: RequestNode;
  /** The child session the call started, once the runtime created it (`agent`). */
  readonly child?: ChildLink;
  /** The reviewer model's judgement of the call, when it was reviewed. */
  readonly review?: AutoReviewRecord;
  /** A person's grant for the call (given after it was refused, or used by it as a retry). */
  readonly grant?: ReviewGrant;
  /** The session's working folder. */
  readonly cwd?: string;
  /** The user's home folder. */
  readonly home?: string;
}

/** The model input of a view's props. */
export function cardInput(props: ToolCallOwnerProps): CardInput {
  const base = { toolName: props.toolName, phase: props.phase, cwd: props.cwd, home: props.home };
  if (props.phase === 'preparing') return base;
  return {
    ...base,
    arguments: props.start.arguments,
    progress: props.start.progress,
    ...(props.start.progressGap === undefined ? {} : { progressGap: props.start.progressGap }),
    parentCallId: props.start.parentCallId,
    ...(props.start.pending === undefined ? {} : { pending: props.start.pending }),
    ...(props.start.child === undefined ? {} : { child: props.start.child }),
    ...(props.start.review === undefined ? {} : { review: props.start.review }),
    ...(props.start.grant === undefined ? {} : { grant: props.start.grant }),
    ...(props.phase === 'result' ? { result: props.result } : {}),
  };
}

/** The live output of a running call, for a model: `progress`, and `progressGap` after it. */
export function liveOutput(input: CardInput): { progress?: string; progressGap?: LiveGap } {
  if (input.result !== undefined || (!input.progress && input.progressGap === undefined)) {
    return {};
  }
  return {
    progress: input.progress ?? '',
    ...(input.progressGap === undefined ? {} : { progressGap: input.progressGap }),
  };
}

/** The state a call's row shows, from its frozen data only. */
export function callState(input: Pick<CardInput, 'phase' | 'result' | 'pending'>): CallState {
  if (input.phase === 'preparing') return 'preparing';
  const result = input.result;
  if (result === undefined) return input.pending === undefined ? 'running' : 'waiting';
  if (result.status === 'interrupted' || result.errorCode === 'INTERRUPTED') return 'interrupted';
  if (result.status === 'denied') return 'denied';
  if (result.status === 'ok') return 'ok';
  return 'error';
}

/** True for a call the agent's review policy or its reviewer model denied. */
export function isAutoReviewDenied(result: ResultBlock | undefined): boolean {
  return result?.errorCode === 'AUTO_REVIEW_DENIED';
}

/** The codes of a call review refused: denied, or refused after the reviewer failed or timed out. */
const REVIEW_REFUSALS: readonly ErrorCode[] = [
  'AUTO_REVIEW_DENIED',
  'AUTO_REVIEW_FAILED',
  'AUTO_REVIEW_TIMEOUT',
];

/**
 * True for a call review refused — denied by a rule or by the reviewer model, or refused by the
 * unattended policy after the reviewer failed or timed out: it shows the denial card before any
 * view chosen by tool name.
 */
export function isReviewRefusal(result: ResultBlock | undefined): boolean {
  return result?.errorCode !== undefined && REVIEW_REFUSALS.includes(result.errorCode);
}

/** A plain JSON object, or `undefined`. */
export function asRecord(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The reason a model cannot use the raw data: it falls back to the generic card. */
export class Unsupported extends Error {
  override name = 'Unsupported';
}

/** Readers of one JSON object's fields that throw [`Unsupported`] on a wrong type. */
export class Fields {
  private readonly record: Readonly<Record<string, unknown>>;

  constructor(
    value: unknown,
    private readonly what: string,
  ) {
    const record = asRecord(value);
    if (record === undefined) throw new Unsupported(`${what} is not an object`);
    this.record = record;
  }

  private fail(name: string, expected: string): never {
    throw new Unsupported(`${this.what}.${name} is not ${expected}`);
  }

  /** A required string. */
  text(name: string): string {
    const value = this.record[name];
    return typeof value === 'string' ? value : this.fail(name, 'a string');
  }

  /** An optional string (absent or null is `undefined`). */
  optionalText(name: string): string | undefined {
    const value = this.record[name];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string' ? value : this.fail(name, 'a string');
  }

  /** A required whole number. */
  count(name: string): number {
    const value = this.record[name];
    return typeof value === 'number' && Number.isInteger(value) && value >= 0
      ? value
      : this.fail(name, 'a count');
  }

  /** An optional whole number. */
  optionalCount(name: string): number | undefined {
    const value = this.record[name];
    if (value === undefined || value === null) return undefined;
    return this.count(name);
  }

  /** An optional amount: a finite number, zero or more (a cost). */
  optionalAmount(name: string): number | undefined {
    const value = this.record[name];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'number' && Number.isFinite(value) && value >= 0
      ? value
      : this.fail(name, 'an amount of zero or more');
  }

  /** An integer that may be negative or null (an exit code). */
  optionalInteger(name: string): number | null {
    const value = this.record[name];
    if (value === undefined || value === null) return null;
    return typeof value === 'number' && Number.isInteger(value)
      ? value
      : this.fail(name, 'an integer');
  }

  /** A required boolean. */
  flag(name: string): boolean {
    const value = this.record[name];
    return typeof value === 'boolean' ? value : this.fail(name, 'true or false');
  }

  /** An optional boolean. */
  optionalFlag(name: string): boolean | undefined {
    const value = this.record[name];
    if (value === undefined || value === null) return undefined;
    return this.flag(name);
  }

  /** A required array. */
  list(name: string): readonly unknown[] {
    const value = this.record[name];
    return Array.isArray(value) ? value : this.fail(name, 'a list');
  }

  /** An optional array. */
  optionalList(name: string): readonly unknown[] | undefined {
    const value = this.record[name];
    if (value === undefined || value === null) return undefined;
    return this.list(name);
  }

  /** One of `choices`. */
  oneOf<T extends string>(name: string, choices: readonly T[]): T {
    const value = this.record[name];
    return choices.includes(value as T)
      ? (value as T)
      : this.fail(name, `one of ${choices.join(', ')}`);
  }

  /** A raw field. */
  raw(name: string): unknown {
    return this.record[name];
  }
}

/** The text the model saw, as one string (images and JSON blocks named in place). */
export function flattenContent(content: readonly ContentBlock[] | undefined): string {
  if (content === undefined) return '';
  return content
    .map((block) => {
      if (block.type === 'text') return typeof block.text === 'string' ? block.text : '';
      if (block.type === 'image') return `[image ${String(block.mediaType)}]`;
      if (block.type === 'json') return JSON.stringify(block.value, null, 2);
      return `[${String((block as { type: unknown }).type)}]`;
    })
    .join('\n');
}

/** Arguments as the generic card shows them: pretty JSON, or the raw text as recorded. */
export function flattenArguments(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}

/** The first line of a text, trimmed. */
export function firstLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  return line.trim();
}

/** At most `max` characters, with an ellipsis when cut. */
export function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A one-line summary of arguments: the first short string value, else `key=value` pairs. */
export function summariseArguments(value: unknown): string {
  const record = asRecord(value);
  if (record === undefined) return typeof value === 'string' ? clip(firstLine(value), 80) : '';
  const entries = Object.entries(record);
  const text = entries.find(([, item]) => typeof item === 'string' && item.trim() !== '');
  if (text !== undefined) return clip(firstLine(text[1] as string), 80);
  return clip(
    entries
      .map(
        ([key, item]) =>
          `${key}=${typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item)}`,
      )
      .join(', '),
    80,
  );
}
