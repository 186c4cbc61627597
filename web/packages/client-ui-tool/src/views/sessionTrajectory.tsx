import { useT } from '@qilin-agent/i18n';
import { StatusDot } from '@qilin-agent/ui-primitives';
import { sessionTrajectoryModel, type TrajectoryRow } from '../models/sessionTrajectory';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Duration, RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/** One node and the nodes under it, one level deeper. */
function Node(props: { row: TrajectoryRow }) {
  const t = useT();
  const { row } = props;
  const label = row.tool ?? t(`sessions.trajectory.kind.${row.kind}`);
  return (
    <li className="qt-trajectory__node" data-depth={row.depth} data-kind={row.kind}>
      <div className="qt-trajectory__line">
        {row.status === undefined ? (
          <span className="qt-trajectory__nodot" aria-hidden="true" />
        ) : (
          <StatusDot state={row.status} />
        )}
        {row.href === undefined ? (
          <span className="qt-trajectory__label">{label}</span>
        ) : (
          <a className="qt-trajectory__label" href={row.href}>
            {label}
          </a>
        )}
        <span className="qt-trajectory__summary">{row.summary}</span>
        {row.durationMs !== undefined && <Duration ms={row.durationMs} />}
        {row.startedAt !== undefined && <RecordedTime at={row.startedAt} />}
      </div>
      {row.children.length > 0 && (
        <ol className="qt-trajectory__children">
          {row.children.map((child, index) => (
            <Node key={index} row={child} />
          ))}
        </ol>
      )}
    </li>
  );
}

/**
 * `session_trajectory`: the session on the row; the call tree as an indented tree (each
 * descendant one level under its parent, nested code-mode calls included) with statuses,
 * durations and start times in the viewer's time zone, and where the whole text went when the
 * tree was cut.
 */
export function SessionTrajectoryView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, sessionTrajectoryModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.session_trajectory.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="tool"
      title={title}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {model.scope !== undefined && <p className="qp-caption">{t(model.scope)}</p>}
      {model.roots !== undefined && model.roots.length > 0 && (
        <ol
          className="qt-trajectory"
          aria-label={t('sessions.trajectory.label', { session: model.summary ?? '' })}
        >
          {model.roots.map((row, index) => (
            <Node key={index} row={row} />
          ))}
        </ol>
      )}
      {model.cut !== undefined && (
        <p className="qp-caption">
          {model.cut.spill === undefined
            ? t('sessions.trajectory.cut')
            : t('sessions.trajectory.spilled', { path: model.cut.spill })}
        </p>
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
