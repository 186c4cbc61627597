// The scheduled-task cards — `schedule_create`, `schedule_list`, `schedule_delete` — and the parts
// the page's schedules panel shares with them: a schedule's status badge, its next fires in the
// viewer's time zone and its last run's receipt.
import { useLocale, useT } from '@qilin-agent/i18n';
import type { ReactNode } from 'react';
import {
  runDot,
  scheduleCreateModel,
  scheduleDeleteModel,
  scheduleDot,
  scheduleListModel,
  viewerTimeZone,
  type RunRow,
  type ScheduleRow,
} from '../models/schedules';
import type { ScheduleStatus } from '@qilin-agent/protocol';
import { formatDuration, formatTime } from '../models/sessionLink';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/** A schedule's status: a dot in its static colour and the word. */
export function ScheduleStatusBadge(props: { status: ScheduleStatus }) {
  const t = useT();
  return (
    <span className="qt-schedule-status" data-status={props.status}>
      <span className={`qp-dot qp-dot--${scheduleDot(props.status)}`} aria-hidden="true" />
      {t(`schedules.status.${props.status}`)}
    </span>
  );
}

/** True when `zone` names a time zone this browser knows. */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * A fire time in the viewer's time zone; with the time in the schedule's own zone beside it when
 * that zone differs from the viewer's.
 */
export function FireTime(props: { at: string; zone: string }) {
  const t = useT();
  const locale = useLocale();
  const own = props.zone !== viewerTimeZone() && knownZone(props.zone);
  return (
    <span className="qt-schedule-fire">
      <RecordedTime at={props.at} className="qt-schedule-fire__time" />
      {own && (
        <span className="qp-caption qt-schedule-fire__zone">
          {' '}
          (
          {t('schedules.inZone', {
            time: formatTime(props.at, locale, props.zone),
            zone: props.zone,
          })}
          )
        </span>
      )}
    </span>
  );
}

/** A run's receipt: its outcome, when it was for, and a link to the session its turn ran in. */
export function RunReceipt(props: { run: RunRow }) {
  const t = useT();
  const { run } = props;
  return (
    <span className="qt-schedule-run" data-outcome={run.outcome}>
      <span className={`qp-dot qp-dot--${runDot(run.outcome)}`} aria-hidden="true" />
      <span>{t(`schedules.outcome.${run.outcome}`)}</span>{' '}
      <RecordedTime at={run.fireTime} className="qp-caption" />
      {run.caughtUp && <span className="qp-caption"> · {t('schedules.caughtUp')}</span>}
      {run.message !== undefined && (
        <span className="qt-schedule-run__message">{run.message}</span>
      )}{' '}
      <a className="qt-schedule-run__link" href={run.href} title={t('schedules.openRun')}>
        {run.turnId === undefined
          ? t('schedules.openRun')
          : t('schedules.turn', { id: run.turnId })}
      </a>
    </span>
  );
}

/** The next fire of a schedule, or that it has none. */
function NextFire(props: { schedule: ScheduleRow }) {
  const t = useT();
  const next = props.schedule.nextFires[0];
  return next === undefined ? (
    <span className="qp-caption">{t('schedules.noNextFire')}</span>
  ) : (
    <FireTime at={next} zone={props.schedule.timezone} />
  );
}

function Entry(props: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </>
  );
}

/** A schedule as a call recorded it: prompt, when it fires, where it runs, its next fires. */
export function ScheduleDetails(props: { schedule: ScheduleRow }) {
  const t = useT();
  const locale = useLocale();
  const { schedule } = props;
  const { when } = schedule;
  return (
    <div className="qt-schedule" data-schedule={schedule.id}>
      <p className="qt-schedule__description">{schedule.description}</p>
      <dl className="qt-receipt">
        <Entry label={t('schedules.prompt')}>
          <span className="qt-schedule__prompt">{schedule.prompt}</span>
        </Entry>
        <Entry label={t('schedules.statusLabel')}>
          <ScheduleStatusBadge status={schedule.status} />
        </Entry>
        {when.kind === 'cron' && (
          <Entry label={t('schedules.cron')}>
            <code>{when.cron}</code>
          </Entry>
        )}
        {when.kind === 'every' && (
          <Entry label={t('schedules.every')}>{formatDuration(when.seconds * 1000, locale)}</Entry>
        )}
        {when.kind === 'at' && (
          <Entry label={t('schedules.at')}>
            <FireTime at={when.at} zone={schedule.timezone} />
          </Entry>
        )}
        <Entry label={t('schedules.timezone')}>{schedule.timezone}</Entry>
        <Entry label={t('schedules.target')}>{t(`schedules.target.${schedule.target}`)}</Entry>
        {schedule.agent !== undefined && (
          <Entry label={t('schedules.agent')}>
            <code>{schedule.agent}</code>
          </Entry>
        )}
        <Entry label={t('schedules.catchUpLabel')}>
          {t(`schedules.catchUp.${schedule.catchUp}`)}
        </Entry>
        <Entry label={t('schedules.expires')}>
          {schedule.expires === undefined ? (
            t('schedules.never')
          ) : (
            <FireTime at={schedule.expires} zone={schedule.timezone} />
          )}
        </Entry>
        <Entry label={t('schedules.nextFires')}>
          {schedule.nextFires.length === 0 ? (
            t('schedules.noNextFire')
          ) : (
            <ol className="qt-schedule__fires">
              {schedule.nextFires.map((fire) => (
                <li key={fire}>
                  <FireTime at={fire} zone={schedule.timezone} />
                </li>
              ))}
            </ol>
          )}
        </Entry>
        <Entry label={t('schedules.lastRun')}>
          {schedule.lastRun === undefined ? (
            t('schedules.noRun')
          ) : (
            <RunReceipt run={schedule.lastRun} />
          )}
        </Entry>
      </dl>
    </div>
  );
}

/** A compact table of schedules: status, in words, next fire, last run. */
export function ScheduleTable(props: {
  schedules: readonly ScheduleRow[];
  label: string;
  /** A last column of actions for each schedule (the panel's delete button). */
  action?: (schedule: ScheduleRow) => ReactNode;
}) {
  const t = useT();
  return (
    <table className="qt-schedule-table" aria-label={props.label}>
      <thead>
        <tr>
          <th scope="col">{t('schedules.statusLabel')}</th>
          <th scope="col">{t('schedules.name')}</th>
          <th scope="col">{t('schedules.nextFire')}</th>
          <th scope="col">{t('schedules.lastRun')}</th>
          {props.action !== undefined && (
            <th scope="col">
              <span className="qt-visually-hidden">{t('schedulesPanel.delete')}</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {props.schedules.map((schedule) => (
          <tr key={schedule.id} data-schedule={schedule.id}>
            <td data-label={t('schedules.statusLabel')}>
              <ScheduleStatusBadge status={schedule.status} />
            </td>
            <td data-label={t('schedules.name')}>
              <span className="qt-schedule-table__description">{schedule.description}</span>
              <span className="qp-caption qt-schedule-table__prompt">{schedule.prompt}</span>
            </td>
            <td data-label={t('schedules.nextFire')}>
              <NextFire schedule={schedule} />
            </td>
            <td data-label={t('schedules.lastRun')}>
              {schedule.lastRun === undefined ? (
                <span className="qp-caption">{t('schedules.noRun')}</span>
              ) : (
                <RunReceipt run={schedule.lastRun} />
              )}
            </td>
            {props.action !== undefined && <td>{props.action(schedule)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `schedule_create`: the prompt on the row, the schedule the runtime created inside. */
export function ScheduleCreateView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, scheduleCreateModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.schedule_create.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="clock"
      title={title}
      summary={model.schedule?.description ?? model.prompt}
      suffix={
        model.schedule === undefined ? undefined : t(`schedules.status.${model.schedule.status}`)
      }
    >
      {model.schedule !== undefined && <ScheduleDetails schedule={model.schedule} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `schedule_list`: the session's schedules as a compact table. */
export function ScheduleListView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, scheduleListModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.schedule_list.title');
  const { schedules } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="clock"
      title={title}
      summary={
        schedules === undefined ? undefined : t('schedules.count', { count: schedules.length })
      }
    >
      {schedules !== undefined &&
        (schedules.length === 0 ? (
          <p className="qp-caption">{t('schedules.none')}</p>
        ) : (
          <ScheduleTable schedules={schedules} label={t('schedules.listLabel')} />
        ))}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `schedule_delete`: a receipt naming the schedule deleted. */
export function ScheduleDeleteView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, scheduleDeleteModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.schedule_delete.title');
  const { schedule } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="clock"
      title={title}
      summary={schedule?.description ?? model.id}
      suffix={schedule === undefined ? undefined : t('schedules.status.deleted')}
    >
      {schedule !== undefined && (
        <div className="qt-schedule" data-schedule={schedule.id}>
          <p className="qt-verdict">
            {t('schedules.deletedReceipt', { description: schedule.description })}
          </p>
          <dl className="qt-receipt">
            <Entry label={t('schedules.prompt')}>{schedule.prompt}</Entry>
            <Entry label={t('schedules.lastRun')}>
              {schedule.lastRun === undefined ? (
                t('schedules.noRun')
              ) : (
                <RunReceipt run={schedule.lastRun} />
              )}
            </Entry>
            <Entry label={t('schedules.runsLabel')}>
              {t('schedules.runs', { count: schedule.runs })}
            </Entry>
            <Entry label={t('schedules.name')}>
              <code>{schedule.id}</code>
            </Entry>
          </dl>
        </div>
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
