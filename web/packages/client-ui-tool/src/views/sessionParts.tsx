// The parts the session query cards share: a snippet with its matches highlighted, a time in the
// viewer's time zone, a duration.
import { useLocale } from '@qilin-agent/i18n';
import { formatDuration, formatTime, type SnippetPart } from '../models/sessionLink';

/** A recorded snippet, each match the search marked highlighted (`<mark>`). */
export function Snippet(props: { parts: readonly SnippetPart[]; className?: string }) {
  return (
    <span className={props.className ?? 'qt-snippet'}>
      {props.parts.map((part, index) =>
        part.match ? <mark key={index}>{part.text}</mark> : <span key={index}>{part.text}</span>,
      )}
    </span>
  );
}

/** A recorded time (RFC 3339) in the viewer's time zone, with the zone's name. */
export function RecordedTime(props: { at: string; className?: string }) {
  const locale = useLocale();
  return (
    <time className={props.className ?? 'qp-caption'} dateTime={props.at}>
      {formatTime(props.at, locale)}
    </time>
  );
}

/** A duration in milliseconds, in the viewer's words. */
export function Duration(props: { ms: number }) {
  const locale = useLocale();
  return <span className="qp-caption">{formatDuration(props.ms, locale)}</span>;
}
