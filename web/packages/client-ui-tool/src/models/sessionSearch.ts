import { message, type Message } from '@qilin-agent/i18n';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import { placeOf, sessionHref, snippetParts, type SnippetPart } from './sessionLink';

/** The recorded fields a search hit can be in. */
export const HIT_FIELDS = [
  'prompt',
  'text',
  'arguments',
  'result',
  'error',
  'answer',
  'tool',
] as const;

/** Where in a session's events a hit was found. */
export type HitField = (typeof HIT_FIELDS)[number];

/** One hit as the card (and the page's search) shows it. */
export interface SessionHitRow {
  /** The session's id. */
  readonly session: string;
  /** The session's title; absent for an untitled session. */
  readonly title?: string;
  /** The `seq` of the event the hit is in. */
  readonly seq: number;
  /** The turn it is in, when it is in one. */
  readonly turn?: number;
  /** The call it is in, when it is in one. */
  readonly callId?: string;
  /** That call's tool. */
  readonly tool?: string;
  /** Which recorded field matched. */
  readonly field: HitField;
  /** The snippet, its matches marked. */
  readonly snippet: readonly SnippetPart[];
  /** When the event was recorded (RFC 3339 UTC; shown in the viewer's time zone). */
  readonly time: string;
  /** The page's address of the session opened at the hit: its call's card, else its event. */
  readonly href: string;
}

/** The card of a `session_search` call. */
export interface SessionSearchModel {
  readonly kind: 'sessionSearch';
  readonly state: CallState;
  /** The query, for the row. */
  readonly summary?: string;
  /** How many hits, for the row. */
  readonly suffix?: Message;
  /** The hits, best first. */
  readonly hits?: readonly SessionHitRow[];
  /** True when more hits were left out. */
  readonly truncated?: boolean;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * One recorded search hit (`SearchHit`) as a row; throws [`Unsupported`] when it does not have
 * the hit's shape. `what` names it in the error.
 */
export function hitRow(value: unknown, what = 'hit'): SessionHitRow {
  const hit = new Fields(value, what);
  const session = hit.text('session');
  const title = hit.optionalText('title');
  const seq = hit.count('seq');
  const turn = hit.optionalCount('turn');
  const callId = hit.optionalText('callId');
  const tool = hit.optionalText('tool');
  const time = hit.text('time');
  if (typeof hit.raw('score') !== 'number') throw new Unsupported(`${what}.score is not a number`);
  return {
    session,
    ...(title === undefined || title === '' ? {} : { title }),
    seq,
    ...(turn === undefined ? {} : { turn }),
    ...(callId === undefined ? {} : { callId }),
    ...(tool === undefined ? {} : { tool }),
    field: hit.oneOf('field', HIT_FIELDS),
    snippet: snippetParts(hit.text('snippet')),
    time,
    href: sessionHref(session, placeOf(callId, seq)),
  };
}

/**
 * The `session_search` card: the query on the row, and each hit with its session's title, the
 * snippet with its matches highlighted, the tool, the time and a link that opens the session at
 * the hit's card.
 */
export function sessionSearchModel(input: CardInput): SessionSearchModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'sessionSearch', state };
  try {
    const query = new Fields(input.arguments, 'arguments').text('query');
    const base = { kind: 'sessionSearch' as const, state, summary: query };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    output.text('query');
    const hits = output.list('hits').map((hit) => hitRow(hit, 'output.hits[]'));
    const truncated = output.flag('truncated');
    return {
      ...base,
      suffix: message(truncated ? 'sessions.hitsMore' : 'sessions.hits', { count: hits.length }),
      hits,
      truncated,
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
