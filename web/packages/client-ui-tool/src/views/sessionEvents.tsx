import { useT } from '@qilin-agent/i18n';
import { sessionEventsModel } from '../models/sessionEvents';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/**
 * `session_events`: the session on the row; the page of events as a compact list (`seq`, type,
 * time in the viewer's time zone, the compact text; each `seq` a link to its place in the
 * session) and where the page stands.
 */
export function SessionEventsView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, sessionEventsModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.session_events.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="checklist"
      title={title}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {model.events !== undefined && model.events.length > 0 && (
        <ol
          className="qt-events"
          aria-label={t('sessions.events.label', { session: model.summary ?? '' })}
        >
          {model.events.map((event) => (
            <li key={event.seq} className="qt-event" data-event-type={event.type}>
              <a
                className="qt-event__seq"
                href={event.href}
                aria-label={t('sessions.events.open', { seq: event.seq })}
              >
                #{event.seq}
              </a>
              <span className="qt-event__type">{event.type}</span>
              <RecordedTime at={event.time} className="qp-caption qt-event__time" />
              <span className="qt-event__text">{event.text}</span>
            </li>
          ))}
        </ol>
      )}
      {model.paging !== undefined && (
        <p className="qp-caption qt-events__paging">
          {model.paging.map((line) => t(line)).join(' · ')}
        </p>
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
