import type { Locale } from './catalogue';

/**
 * An RFC 3339 time as a person reads it, in their own time zone and saying which one
 * (`2 Jan 2026, 09:30:00.000 GMT+8`): a recorded time is UTC, the reader is not. `timeZone`
 * defaults to the viewer's; text that is not a time is returned as it is.
 */
export function formatDateTime(at: string, locale: Locale, timeZone?: string): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return at;
  return new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
    timeZoneName: 'short',
    ...(timeZone === undefined ? {} : { timeZone }),
  }).format(date);
}
