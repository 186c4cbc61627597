// The scheduled-task cards as a reader sees them: rendered through the tree, expanded.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ScheduleRecord, ScheduleRun, ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test } from 'vitest';
import { madeCall } from '../../../../test-support/calls';
import { renderWithI18n } from '../../../../test-support/render';
import { viewerTimeZone } from '../models/schedules';
import { formatTime } from '../models/sessionLink';
import { registerBuiltinToolViews } from '../register';
import { ToolCallTree } from '../tree/ToolCallTree';

/** A call of `toolName`; ended `ok` with `output` unless it is running, or failed. */
function call(toolName: string, args: unknown, ended?: Parameters<typeof madeCall>[3]): ToolNode {
  return madeCall('call_7', toolName, args, ended);
}

/** Renders a call's card, opened. */
function open(node: ToolNode, locale: Locale = 'en') {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const rendered = renderWithI18n(
    <SlotsProvider registry={registry}>
      <ToolCallTree node={node} />
    </SlotsProvider>,
    locale,
  );
  const row = rendered.container.querySelector<HTMLButtonElement>('button.qp-row__main');
  if (row !== null) fireEvent.click(row);
  return rendered;
}

/** A zone that is not the viewer's, so the card names it beside the viewer's time. */
const OTHER_ZONE = viewerTimeZone() === 'Asia/Shanghai' ? 'Europe/Paris' : 'Asia/Shanghai';

const SCHEDULE: ScheduleRecord = {
  id: 'sch_01',
  sessionId: 'ses_1',
  prompt: 'Summarise the overnight CI failures.',
  cron: '0 9 * * 1-5',
  timezone: OTHER_ZONE,
  description: `every weekday at 09:00 (${OTHER_ZONE})`,
  target: 'this_session',
  catchUp: 'once',
  expires: '2026-12-31T00:00:00Z',
  status: 'active',
  createdAt: '2026-03-01T08:00:00Z',
  nextFires: ['2026-03-02T01:00:00Z', '2026-03-03T01:00:00Z', '2026-03-04T01:00:00Z'],
  runs: 0,
};

const RUN: ScheduleRun = {
  fireTime: '2026-03-01T01:00:00Z',
  startedAt: '2026-03-01T01:00:02Z',
  endedAt: '2026-03-01T01:01:10Z',
  sessionId: 'ses_run',
  turnId: 'turn_4',
  outcome: 'failed',
  caughtUp: true,
  message: 'the model provider refused the request',
};

describe('schedule_create', () => {
  test('the schedule in words, its cron, zone, target and next fires in the viewer’s zone', () => {
    const { container } = open(
      call(
        'schedule_create',
        { prompt: SCHEDULE.prompt, cron: SCHEDULE.cron },
        { output: { schedule: SCHEDULE } },
      ),
    );
    expect(
      screen.getByRole('button', { name: /Schedule.*every weekday at 09:00.*active/ }),
    ).toBeVisible();
    expect(screen.getByText(SCHEDULE.prompt)).toBeVisible();
    expect(screen.getByText('0 9 * * 1-5')).toBeVisible();
    expect(screen.getByText('this session')).toBeVisible();
    expect(screen.getByText('run a missed fire once')).toBeVisible();
    const fires = container.querySelectorAll('.qt-schedule__fires time');
    expect([...fires].map((time) => time.getAttribute('dateTime'))).toEqual(SCHEDULE.nextFires);
    expect(fires[0]?.textContent).toBe(formatTime(SCHEDULE.nextFires[0] ?? '', 'en'));
    // The schedule's own zone is named beside the viewer's time, since it differs.
    const own = formatTime(SCHEDULE.nextFires[0] ?? '', 'en', OTHER_ZONE);
    expect(screen.getAllByText(`(${own} in ${OTHER_ZONE})`)[0]).toBeVisible();
    expect(screen.getByText('not run yet')).toBeVisible();
  });

  test('an interval says how often; zh-CN', () => {
    const every: ScheduleRecord = { ...SCHEDULE, everySeconds: 900, timezone: 'UTC' };
    delete every.cron;
    delete every.expires;
    open(
      call(
        'schedule_create',
        { prompt: SCHEDULE.prompt, every: '15m' },
        { output: { schedule: every } },
      ),
      'zh-CN',
    );
    expect(screen.getByText('间隔')).toBeVisible();
    expect(screen.getByText('永不')).toBeVisible();
    expect(screen.getByText('本会话')).toBeVisible();
  });

  test('a refused schedule keeps its input and the reason', () => {
    open(
      call(
        'schedule_create',
        { prompt: 'x', every: '10s' },
        { status: 'error', text: 'every must be at least 60 seconds; got 10s' },
      ),
    );
    expect(screen.getByText('every must be at least 60 seconds; got 10s')).toBeVisible();
  });

  test('a record with two of cron, everySeconds and at falls back to the generic card', () => {
    const both = { ...SCHEDULE, everySeconds: 60 };
    open(call('schedule_create', { prompt: SCHEDULE.prompt }, { output: { schedule: both } }));
    expect(screen.getByRole('button', { name: /Tool call · schedule_create/ })).toBeVisible();
    expect(screen.getByText('the recorded result')).toBeVisible();
  });

  test('a record of another prompt than asked falls back to the generic card', () => {
    open(call('schedule_create', { prompt: 'Other' }, { output: { schedule: SCHEDULE } }));
    expect(screen.getByRole('button', { name: /Tool call · schedule_create/ })).toBeVisible();
  });
});

describe('schedule_list', () => {
  test('a compact table: status, in words, next fire, last run linking to its session', () => {
    const ran = {
      ...SCHEDULE,
      id: 'sch_02',
      status: 'expired',
      nextFires: [],
      lastRun: RUN,
      runs: 3,
    };
    open(call('schedule_list', {}, { output: { schedules: [SCHEDULE, ran] } }));
    expect(screen.getByRole('button', { name: /Schedules.*2 schedules/ })).toBeVisible();
    const table = screen.getByRole('table', { name: 'The session’s schedules' });
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    const second = rows[2];
    if (second === undefined) throw new Error('no second row');
    expect(within(second).getByText('expired')).toBeVisible();
    expect(within(second).getByText('none')).toBeVisible();
    expect(within(second).getByText('failed')).toBeVisible();
    expect(within(second).getByText(RUN.message ?? '')).toBeVisible();
    expect(within(second).getByRole('link', { name: 'turn turn_4' })).toHaveAttribute(
      'href',
      '/sessions/ses_run',
    );
  });

  test('no schedules says so', () => {
    const { container } = open(call('schedule_list', {}, { output: { schedules: [] } }), 'zh-CN');
    expect(container.querySelector('.qp-row')?.textContent).toMatch(/定时任务列表.*0 个定时任务/);
  });

  test('a running run that has ended is not the agreed shape: generic card', () => {
    const lying = { ...SCHEDULE, lastRun: { ...RUN, outcome: 'running' } };
    open(call('schedule_list', {}, { output: { schedules: [lying] } }));
    expect(screen.getByRole('button', { name: /Tool call · schedule_list/ })).toBeVisible();
  });

  test('a status outside the agreed ones falls back to the generic card', () => {
    open(call('schedule_list', {}, { output: { schedules: [{ ...SCHEDULE, status: 'paused' }] } }));
    expect(screen.getByRole('button', { name: /Tool call · schedule_list/ })).toBeVisible();
  });
});

describe('schedule_delete', () => {
  test('a receipt naming the schedule deleted', () => {
    const deleted = {
      ...SCHEDULE,
      status: 'deleted',
      lastRun: { ...RUN, outcome: 'completed' },
      runs: 5,
    };
    open(call('schedule_delete', { id: 'sch_01' }, { output: { schedule: deleted } }));
    expect(
      screen.getByRole('button', { name: /Delete schedule.*every weekday at 09:00.*deleted/ }),
    ).toBeVisible();
    expect(screen.getByText(`Deleted: ${SCHEDULE.description}`)).toBeVisible();
    expect(screen.getByText('5 runs')).toBeVisible();
    expect(screen.getByText('completed')).toBeVisible();
  });

  test('a schedule left active by a deletion falls back to the generic card', () => {
    open(call('schedule_delete', { id: 'sch_01' }, { output: { schedule: SCHEDULE } }));
    expect(screen.getByRole('button', { name: /Tool call · schedule_delete/ })).toBeVisible();
  });

  test('the record of another schedule falls back to the generic card', () => {
    const other = { ...SCHEDULE, status: 'deleted' };
    open(call('schedule_delete', { id: 'sch_99' }, { output: { schedule: other } }));
    expect(screen.getByRole('button', { name: /Tool call · schedule_delete/ })).toBeVisible();
  });

  test('an unknown id keeps the error', () => {
    open(
      call('schedule_delete', { id: 'sch_99' }, { status: 'error', text: 'no schedule sch_99' }),
    );
    expect(screen.getByText('no schedule sch_99')).toBeVisible();
  });
});
