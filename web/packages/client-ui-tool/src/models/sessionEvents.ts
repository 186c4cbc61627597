import { message, type Message } from '@qilin-agent/i18n';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import { placeOf, sessionHref } from './sessionLink';

/** One recorded event in its compact form, as the card lists it. */
export interface SessionEventRow {
  /** Its `seq`. */
  readonly seq: number;
  /** When it was recorded (RFC 3339 UTC; shown in the viewer's time zone). */
  readonly time: string;
  /** Its type (`tool.start`, `turn.finished`, …). */
  readonly type: string;
  /** The turn it is in, when it is in one. */
  readonly turn?: number;
  /** The call it is about, when it is about one. */
  readonly callId?: string;
  /** The compact text the tool wrote for it (one or a few lines). */
  readonly text: string;
  /** The page's address of the session opened at the event's call, else at the event. */
  readonly href: string;
}

/** The card of a `session_events` call. */
export interface SessionEventsModel {
  readonly kind: 'sessionEvents';
  readonly state: CallState;
  /** The session asked about (its title once the result names it), for the row. */
  readonly summary?: string;
  /** How many events, for the row. */
  readonly suffix?: Message;
  /** The events of the page, in order. */
  readonly events?: readonly SessionEventRow[];
  /** Where the page stands: which events it holds, and whether more follow. */
  readonly paging?: readonly Message[];
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** What the page holds: its first and last `seq`, after which event it started, the next page. */
function pagingOf(
  events: readonly SessionEventRow[],
  after: number | undefined,
  next: number | undefined,
): Message[] {
  const first = events[0];
  const last = events[events.length - 1];
  const lines: Message[] = [];
  if (first === undefined || last === undefined) {
    lines.push(
      message(after === undefined ? 'sessions.events.none' : 'sessions.events.noneAfter', {
        after: after ?? 0,
      }),
    );
  } else {
    lines.push(message('sessions.events.range', { first: first.seq, last: last.seq }));
  }
  lines.push(
    next === undefined ? message('sessions.events.end') : message('sessions.events.next', { next }),
  );
  return lines;
}

/**
 * The `session_events` card: the session on the row, and the page of events as a compact list
 * (`seq`, time, type, text; each a link to its place in the session) with where the page
 * stands.
 */
export function sessionEventsModel(input: CardInput): SessionEventsModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'sessionEvents', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const asked = args.text('session');
    const after = args.optionalCount('after');
    const base = { kind: 'sessionEvents' as const, state, summary: asked };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const session = output.text('session');
    const title = output.optionalText('title');
    const events = output.list('events').map((raw): SessionEventRow => {
      const event = new Fields(raw, 'output.events[]');
      const seq = event.count('seq');
      const turn = event.optionalCount('turn');
      const callId = event.optionalText('callId');
      return {
        seq,
        time: event.text('time'),
        type: event.text('type'),
        ...(turn === undefined ? {} : { turn }),
        ...(callId === undefined ? {} : { callId }),
        text: event.text('text'),
        href: sessionHref(session, placeOf(callId, seq)),
      };
    });
    const next = output.optionalCount('next');
    return {
      ...base,
      summary: title === undefined || title === '' ? session : title,
      suffix: message('sessions.events.count', { count: events.length }),
      events,
      paging: pagingOf(events, after, next),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
