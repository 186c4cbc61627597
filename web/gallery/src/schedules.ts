import type { ScheduleRecord, ScheduleRun } from '@qilin-agent/protocol';
import { callMaker, type FamilyCase } from './familyCases';

const PROMPT = 'Summarise last night’s CI failures and open an issue for each new one.';

const WEEKDAYS: ScheduleRecord = {
  id: 'sch_01',
  sessionId: 'ses_gallery',
  prompt: PROMPT,
  cron: '0 9 * * 1-5',
  timezone: 'Europe/Paris',
  description: 'every weekday at 09:00 (Europe/Paris)',
  target: 'this_session',
  catchUp: 'once',
  expires: '2026-12-31T23:00:00Z',
  status: 'active',
  createdAt: '2026-03-01T16:20:00Z',
  nextFires: ['2026-03-02T08:00:00Z', '2026-03-03T08:00:00Z', '2026-03-04T08:00:00Z'],
  runs: 0,
};

const FAILED_RUN: ScheduleRun = {
  fireTime: '2026-03-02T08:00:00Z',
  startedAt: '2026-03-02T08:03:41Z',
  endedAt: '2026-03-02T08:04:02Z',
  sessionId: 'ses_run_7',
  turnId: 'turn_3',
  outcome: 'failed',
  caughtUp: true,
  message: 'The model provider answered 529: overloaded.',
};

const EVERY: ScheduleRecord = {
  id: 'sch_02',
  sessionId: 'ses_gallery',
  prompt: 'Check the deploy queue and say if anything is stuck.',
  everySeconds: 900,
  timezone: 'UTC',
  description: 'every 15 minutes',
  agent: 'reviewer',
  target: 'new_session',
  catchUp: 'skip',
  status: 'active',
  createdAt: '2026-03-02T07:00:00Z',
  nextFires: ['2026-03-02T08:15:00Z', '2026-03-02T08:30:00Z', '2026-03-02T08:45:00Z'],
  lastRun: {
    fireTime: '2026-03-02T08:00:00Z',
    startedAt: '2026-03-02T08:00:01Z',
    endedAt: '2026-03-02T08:00:40Z',
    sessionId: 'ses_run_9',
    turnId: 'turn_1',
    outcome: 'completed',
    caughtUp: false,
  },
  runs: 4,
};

const ONCE: ScheduleRecord = {
  id: 'sch_03',
  sessionId: 'ses_gallery',
  prompt: 'Remind me to rotate the signing key.',
  at: '2026-03-01T18:00:00Z',
  timezone: 'UTC',
  description: 'once at 2026-03-01 18:00 (UTC)',
  target: 'this_session',
  catchUp: 'once',
  status: 'done',
  createdAt: '2026-03-01T09:00:00Z',
  nextFires: [],
  lastRun: {
    fireTime: '2026-03-01T18:00:00Z',
    startedAt: '2026-03-01T18:00:00Z',
    sessionId: 'ses_gallery',
    turnId: 'turn_12',
    outcome: 'running',
    caughtUp: false,
  },
  runs: 1,
};

const node = callMaker({
  errorCode: 'INVALID_ARGUMENTS',
  text: 'Recorded result.',
  durationMs: 40,
});

const CREATE_ARGS = { prompt: PROMPT, cron: '0 9 * * 1-5', timezone: 'Europe/Paris' };

/** The scheduled-task cards in their states, on the agreed output shapes. */
export const SCHEDULE_CASES: readonly FamilyCase[] = [
  { id: 'schedule_create-preparing', node: node('call_s1', 'schedule_create', 'preparing') },
  {
    id: 'schedule_create-running',
    node: node('call_s2', 'schedule_create', 'running', CREATE_ARGS),
  },
  {
    id: 'schedule_create-cron',
    node: node('call_s3', 'schedule_create', 'done', CREATE_ARGS, {
      status: 'ok',
      output: { schedule: WEEKDAYS },
      text: 'Scheduled sch_01: every weekday at 09:00 (Europe/Paris).',
    }),
  },
  {
    id: 'schedule_create-every',
    node: node(
      'call_s4',
      'schedule_create',
      'done',
      { prompt: EVERY.prompt, every: '15m', target: 'new_session', agent: 'reviewer' },
      { status: 'ok', output: { schedule: EVERY }, text: 'Scheduled sch_02: every 15 minutes.' },
    ),
  },
  {
    id: 'schedule_create-refused',
    node: node(
      'call_s5',
      'schedule_create',
      'done',
      { prompt: PROMPT, every: '10s' },
      {
        status: 'error',
        text: 'every is 10 seconds; expected at least 60 seconds ("1m", "15m", "2h").',
      },
    ),
  },
  {
    id: 'schedule_create-malformed',
    node: node('call_s6', 'schedule_create', 'done', CREATE_ARGS, {
      status: 'ok',
      output: { schedule: { ...WEEKDAYS, everySeconds: 60 } },
      text: 'Scheduled sch_01.',
    }),
  },
  { id: 'schedule_list-running', node: node('call_s7', 'schedule_list', 'running', {}) },
  {
    id: 'schedule_list-three',
    node: node(
      'call_s8',
      'schedule_list',
      'done',
      {},
      {
        status: 'ok',
        output: {
          schedules: [EVERY, { ...WEEKDAYS, lastRun: FAILED_RUN, runs: 1 }, ONCE],
        },
        text: '3 schedules.',
      },
    ),
  },
  {
    id: 'schedule_list-empty',
    node: node('call_s9', 'schedule_list', 'done', {}, { status: 'ok', output: { schedules: [] } }),
  },
  {
    id: 'schedule_list-malformed',
    node: node(
      'call_s10',
      'schedule_list',
      'done',
      {},
      { status: 'ok', output: { schedules: [{ ...WEEKDAYS, status: 'paused' }] } },
    ),
  },
  {
    id: 'schedule_delete-done',
    node: node(
      'call_s11',
      'schedule_delete',
      'done',
      { id: 'sch_01' },
      {
        status: 'ok',
        output: { schedule: { ...WEEKDAYS, status: 'deleted', lastRun: FAILED_RUN, runs: 1 } },
        text: 'Deleted sch_01.',
      },
    ),
  },
  {
    id: 'schedule_delete-unknown',
    node: node(
      'call_s12',
      'schedule_delete',
      'done',
      { id: 'sch_99' },
      { status: 'error', text: 'No schedule sch_99 in this session; schedule_list names them.' },
    ),
  },
];
