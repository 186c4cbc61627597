// The schedules panel above a session's conversation: the session's scheduled tasks (status, in
// words, next fire, last run linking to the session its turn ran in), each with a delete button.
import { useT } from '@qilin-agent/i18n';
import { ScheduleTable, type ScheduleRow } from '@qilin-agent/client-ui-tool';
import { useState } from 'react';
import { api, ServerError } from './api';

/**
 * The panel of `sessionId`'s schedules; not shown while the session has none. A deletion's
 * answer is given to `onDeleted`; the session's stream brings the same change to other tabs.
 */
export function SchedulesPanel(props: {
  sessionId: string;
  schedules: readonly ScheduleRow[];
  onDeleted: (scheduleId: string) => void;
}) {
  const t = useT();
  const { sessionId, schedules, onDeleted } = props;
  const [busy, setBusy] = useState<string>();
  const [failure, setFailure] = useState<string>();
  if (schedules.length === 0) return null;
  const remove = async (schedule: ScheduleRow) => {
    setBusy(schedule.id);
    setFailure(undefined);
    try {
      const answer = await api.deleteSchedule(sessionId, schedule.id);
      onDeleted(answer.id);
    } catch (error) {
      setFailure(error instanceof ServerError ? error.message : String(error));
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <section className="qa-schedules" aria-label={t('schedulesPanel.label')}>
      <p className="qa-schedules__head">
        <span className="qa-schedules__label">{t('schedulesPanel.label')}</span>{' '}
        <span className="qa-muted">{t('schedules.count', { count: schedules.length })}</span>
      </p>
      <ScheduleTable
        schedules={schedules}
        label={t('schedules.listLabel')}
        action={(schedule) => (
          <button
            type="button"
            className="qc-button"
            disabled={busy !== undefined}
            aria-label={t('schedulesPanel.deleteOf', { description: schedule.description })}
            onClick={() => void remove(schedule)}
          >
            {t('schedulesPanel.delete')}
          </button>
        )}
      />
      {failure !== undefined && (
        <p className="qa-schedules__failure" role="alert">
          {t('schedulesPanel.deleteFailed', { message: failure })}
        </p>
      )}
    </section>
  );
}
