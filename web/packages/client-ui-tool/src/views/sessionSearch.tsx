import { useT } from '@qilin-agent/i18n';
import { sessionSearchModel } from '../models/sessionSearch';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { RecordedTime, Snippet } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/**
 * `session_search`: the query on the row; each hit with its session's title (a link that opens
 * the session at the hit's card), the snippet with its matches highlighted, the tool and the
 * time in the viewer's time zone.
 */
export function SessionSearchView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, sessionSearchModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.session_search.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="search"
      title={title}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {model.hits !== undefined &&
        (model.hits.length === 0 ? (
          <p className="qp-caption">{t('sessions.noHits')}</p>
        ) : (
          <ol
            className="qt-hits"
            aria-label={t('sessions.hitsLabel', { query: model.summary ?? '' })}
          >
            {model.hits.map((hit) => (
              <li key={`${hit.session}:${hit.seq}`} className="qt-hit">
                <a className="qt-hit__title" href={hit.href}>
                  {hit.title ?? t('app.untitled')}
                </a>
                <Snippet parts={hit.snippet} />
                <span className="qt-hit__meta">
                  <span className="qp-caption">
                    {hit.tool === undefined
                      ? t(`sessions.field.${hit.field}`)
                      : t('sessions.inTool', {
                          tool: hit.tool,
                          field: t(`sessions.field.${hit.field}`),
                        })}
                  </span>
                  <RecordedTime at={hit.time} />
                </span>
              </li>
            ))}
          </ol>
        ))}
      {model.truncated === true && <p className="qp-caption">{t('sessions.truncated')}</p>}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
