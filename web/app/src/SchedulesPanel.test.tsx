import type { ScheduleRecord, ScheduleRun } from '@qilin-agent/protocol';
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import {
  act,
  fireEvent,
  render,
  renderHook,
  screen,
  waitFor,
  within,
} from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { SchedulesPanel } from './SchedulesPanel';
import {
  applyScheduleChange,
  readSchedule,
  scheduleChangeOf,
  shownSchedules,
  useSessionSchedules,
} from './schedules';

const RECORD: ScheduleRecord = {
  id: 'sch_1',
  sessionId: 's1',
  prompt: 'Summarise the overnight CI failures.',
  cron: '0 9 * * 1-5',
  timezone: 'UTC',
  description: 'every weekday at 09:00 (UTC)',
  target: 'this_session',
  catchUp: 'once',
  status: 'active',
  createdAt: '2026-03-01T08:00:00Z',
  nextFires: ['2026-03-02T09:00:00Z'],
  runs: 0,
};

const RUN: ScheduleRun = {
  fireTime: '2026-03-02T09:00:00Z',
  startedAt: '2026-03-02T09:00:01Z',
  sessionId: 's1',
  turnId: 'turn_2',
  outcome: 'running',
  caughtUp: false,
};

function row(record: ScheduleRecord) {
  const read = readSchedule(record);
  if (read === undefined) throw new Error('the test record is not a schedule');
  return read;
}

/** Answers every request with `answer`, recording what was asked. */
function serve(answer: (method: string, url: string) => Response) {
  const fetch = vi.fn(async (url: string, init?: RequestInit) =>
    answer(init?.method ?? 'GET', url),
  );
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

function panel(records: readonly ScheduleRecord[], locale: Locale = 'en') {
  const onDeleted = vi.fn();
  const rendered = render(
    <I18nProvider locale={locale}>
      <SchedulesPanel sessionId="s1" schedules={records.map(row)} onDeleted={onDeleted} />
    </I18nProvider>,
  );
  return { ...rendered, onDeleted };
}

describe('SchedulesPanel', () => {
  it('lists the schedules with their next fire and last run', () => {
    const ran = { ...RECORD, id: 'sch_2', lastRun: { ...RUN, outcome: 'completed' as const } };
    panel([RECORD, ran]);
    const region = screen.getByRole('region', { name: 'Schedules' });
    expect(region).toHaveTextContent('2 schedules');
    const rows = within(region).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toHaveTextContent('not run yet');
    expect(rows[2]).toHaveTextContent('completed');
    expect(within(region).getAllByRole('button', { name: /Delete the schedule/ })).toHaveLength(2);
  });

  it('is not shown while the session has no schedules', () => {
    const { container } = panel([]);
    expect(container).toBeEmptyDOMElement();
  });

  it('deletes through the server and gives the deleted id', async () => {
    const fetch = serve(() => Response.json({ ...RECORD, status: 'deleted' }));
    const { onDeleted } = panel([RECORD]);
    fireEvent.click(
      screen.getByRole('button', { name: 'Delete the schedule “every weekday at 09:00 (UTC)”' }),
    );
    await waitFor(() => expect(onDeleted).toHaveBeenCalledWith('sch_1'));
    expect(fetch).toHaveBeenCalledWith(
      '/api/sessions/s1/schedules/sch_1',
      expect.objectContaining({ method: 'DELETE' }),
    );
  });

  it('says why a deletion was refused', async () => {
    serve(() =>
      Response.json({ code: 'not_found', message: 'no schedule sch_1 in s1' }, { status: 404 }),
    );
    const { onDeleted } = panel([RECORD], 'zh-CN');
    fireEvent.click(screen.getByRole('button', { name: /删除定时任务/ }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      '定时任务未删除：no schedule sch_1 in s1',
    );
    expect(onDeleted).not.toHaveBeenCalled();
  });
});

describe('the schedules of a session', () => {
  it('reads each schedule event, and nothing else', () => {
    expect(scheduleChangeOf({ type: 'schedule.created', schedule: RECORD })).toMatchObject({
      kind: 'created',
      schedule: { id: 'sch_1' },
    });
    expect(scheduleChangeOf({ type: 'schedule.deleted', scheduleId: 'sch_1' })).toEqual({
      kind: 'deleted',
      scheduleId: 'sch_1',
    });
    expect(
      scheduleChangeOf({ type: 'schedule.fired', scheduleId: 'sch_1', run: RUN }),
    ).toMatchObject({ kind: 'run', run: { outcome: 'running', href: '/sessions/s1' } });
    expect(scheduleChangeOf({ type: 'goal.created', goal: {} })).toBeUndefined();
    expect(
      scheduleChangeOf({ type: 'schedule.created', schedule: { ...RECORD, status: 'odd' } }),
    ).toBeUndefined();
  });

  it('folds changes: created first, deleted gone, a run as the last run', () => {
    const first = row(RECORD);
    const second = row({ ...RECORD, id: 'sch_2' });
    let list = applyScheduleChange([first], { kind: 'created', schedule: second });
    expect(list.map((known) => known.id)).toEqual(['sch_2', 'sch_1']);
    const run = scheduleChangeOf({ type: 'schedule.finished', scheduleId: 'sch_1', run: RUN });
    if (run === undefined) throw new Error('the run event was not read');
    list = applyScheduleChange(list, run);
    expect(list[1]?.lastRun?.turnId).toBe('turn_2');
    list = applyScheduleChange(list, { kind: 'deleted', scheduleId: 'sch_2' });
    expect(list.map((known) => known.id)).toEqual(['sch_1']);
  });

  it('leaves deleted and unreadable schedules out of the list', () => {
    expect(
      shownSchedules([RECORD, { ...RECORD, id: 'sch_2', status: 'deleted' }, { id: 3 }]).map(
        (known) => known.id,
      ),
    ).toEqual(['sch_1']);
  });

  it('reads the server, follows events, and reads again after a run', async () => {
    const fetch = serve(() => Response.json({ schedules: [RECORD] }));
    const { result } = renderHook(() => useSessionSchedules('s1'));
    expect(result.current.schedules).toBeUndefined();
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.schedules).toHaveLength(1));
    expect(fetch).toHaveBeenLastCalledWith('/api/sessions/s1/schedules', expect.anything());
    act(() =>
      result.current.onEvents([
        { type: 'schedule.created', schedule: { ...RECORD, id: 'sch_2' } },
        { type: 'turn.started' },
      ]),
    );
    expect(result.current.schedules?.map((known) => known.id)).toEqual(['sch_2', 'sch_1']);
    expect(fetch).toHaveBeenCalledTimes(1);
    act(() => result.current.onEvents([{ type: 'schedule.fired', scheduleId: 'sch_1', run: RUN }]));
    expect(fetch).toHaveBeenCalledTimes(2);
    // The server's answer wins: it knows only sch_1.
    await waitFor(() => expect(result.current.schedules).toHaveLength(1));
    act(() => result.current.removed('sch_1'));
    expect(result.current.schedules).toEqual([]);
  });
});
