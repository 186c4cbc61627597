// What the session query cards and the page's search share: a recorded snippet's marked matches,
// the address that opens a session at one place, and times in the viewer's time zone.

/** One piece of a snippet: plain text, or a match the search marked. */
export interface SnippetPart {
  /** The text. */
  readonly text: string;
  /** True for a match (shown highlighted). */
  readonly match: boolean;
}

/**
 * A snippet as the search wrote it, each match wrapped as `«match»`, cut into plain and matched
 * pieces. A `«` with no `»` after it (or a `»` with no `«`) is text, shown as it is.
 */
export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const plain = (text: string) => {
    if (text === '') return;
    const last = parts[parts.length - 1];
    if (last !== undefined && !last.match)
      parts[parts.length - 1] = { text: last.text + text, match: false };
    else parts.push({ text, match: false });
  };
  let at = 0;
  for (const found of snippet.matchAll(/«([^«»]*)»/g)) {
    plain(snippet.slice(at, found.index));
    const text = found[1] ?? '';
    if (text !== '') parts.push({ text, match: true });
    at = found.index + found[0].length;
  }
  plain(snippet.slice(at));
  return parts;
}

/** A place in a session: a call's card, or the event with a `seq`. */
export type SessionPlace =
  | { readonly kind: 'call'; readonly callId: string }
  | { readonly kind: 'seq'; readonly seq: number };

/**
 * The place an `at` query parameter names; `undefined` for anything else (absent, empty, an
 * unknown kind, a `seq` that is not a positive whole number).
 */
export function parsePlace(value: string | null | undefined): SessionPlace | undefined {
  if (value === null || value === undefined) return undefined;
  const call = /^call:(.+)$/s.exec(value);
  if (call?.[1] !== undefined) return { kind: 'call', callId: call[1] };
  const seq = /^seq:([1-9][0-9]{0,15})$/.exec(value);
  if (seq?.[1] === undefined) return undefined;
  const number = Number(seq[1]);
  return Number.isSafeInteger(number) ? { kind: 'seq', seq: number } : undefined;
}

/**
 * The page's address of a session, opened at `place` when given: `/sessions/<id>?at=call:<id>`
 * or `?at=seq:<n>`.
 */
export function sessionHref(sessionId: string, place?: SessionPlace): string {
  const path = `/sessions/${encodeURIComponent(sessionId)}`;
  if (place === undefined) return path;
  // The kind's colon stays as it is (`?at=call:call_1`); the call id is encoded.
  const at =
    place.kind === 'call' ? `call:${encodeURIComponent(place.callId)}` : `seq:${place.seq}`;
  return `${path}?at=${at}`;
}

/** The place of a recorded hit or event: its call when it is in one, else its event. */
export function placeOf(callId: string | undefined, seq: number): SessionPlace {
  return callId === undefined ? { kind: 'seq', seq } : { kind: 'call', callId };
}

/**
 * An RFC 3339 time in the viewer's time zone (or `timeZone`), with the zone's name, in
 * `locale`'s words; a text that is not a time is returned as it is.
 */
export function formatTime(at: string, locale: string, timeZone?: string): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return at;
  return new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
    ...(timeZone === undefined ? {} : { timeZone }),
  }).format(date);
}

/** A duration in milliseconds, in `locale`'s words and numbers: `850 ms`, `1.2 s`, `2 min, 5 s`. */
export function formatDuration(ms: number, locale: string): string {
  const unit = (name: string, digits = 0) =>
    new Intl.NumberFormat(locale, {
      style: 'unit',
      unit: name,
      unitDisplay: 'short',
      maximumFractionDigits: digits,
    });
  if (ms < 1000) return unit('millisecond').format(ms);
  if (ms < 60_000) return unit('second', 1).format(ms / 1000);
  const total = Math.round(ms / 1000);
  const minutes = unit('minute').format(Math.floor(total / 60));
  return total % 60 === 0
    ? minutes
    : new Intl.ListFormat(locale, { style: 'narrow', type: 'unit' }).format([
        minutes,
        unit('second').format(total % 60),
      ]);
}
