import type { ChildRecord, TaskRecord, ToolNode } from '@qilin-agent/protocol';
import { callMaker, type FamilyCase } from './familyCases';

const SURVEY: TaskRecord = {
  id: '1',
  title: 'Map where uploads are retried',
  status: 'in_progress',
  assignee: 'scout',
  blockedBy: [],
  notes: [],
  createdBy: 'lead',
  createdAt: '2026-03-02T08:00:00Z',
  updatedAt: '2026-03-02T08:01:10Z',
};

const FIX: TaskRecord = {
  id: '2',
  title: 'Retry only on 5xx and timeouts',
  description: 'Today a 404 is retried five times. Keep the backoff; change what is retried.',
  status: 'pending',
  blockedBy: ['1'],
  notes: [],
  createdBy: 'lead',
  createdAt: '2026-03-02T08:00:20Z',
  updatedAt: '2026-03-02T08:00:20Z',
};

const TESTS: TaskRecord = {
  id: '3',
  title: 'Add tests for the retry policy',
  status: 'pending',
  assignee: 'builder',
  blockedBy: ['2'],
  notes: [],
  createdBy: 'lead',
  createdAt: '2026-03-02T08:00:40Z',
  updatedAt: '2026-03-02T08:00:40Z',
};

const FINDING = {
  by: 'scout',
  text: 'Retries are in src/upload.rs, lines 40–62: five attempts, backoff from 250 ms, any error.',
  at: '2026-03-02T08:06:30Z',
};

const SURVEYED: TaskRecord = {
  ...SURVEY,
  status: 'completed',
  notes: [FINDING],
  updatedAt: '2026-03-02T08:06:30Z',
};

const FIX_TAKEN: TaskRecord = {
  ...FIX,
  status: 'in_progress',
  assignee: 'builder',
  updatedAt: '2026-03-02T08:07:00Z',
};

const DOCS: TaskRecord = {
  id: '4',
  title: 'Say in the changelog what is retried now',
  status: 'pending',
  assignee: 'lead',
  blockedBy: ['2'],
  notes: [],
  createdBy: 'builder',
  createdAt: '2026-03-02T08:07:20Z',
  updatedAt: '2026-03-02T08:07:20Z',
};

/** A teammate as `agent` and `agent_list` record it (`ChildRecord`), idle or running. */
function teammate(
  sessionId: string,
  name: string,
  description: string,
  status: 'idle' | 'running',
  steps: number,
): ChildRecord {
  return {
    sessionId,
    agent: 'general',
    name,
    description,
    background: true,
    status,
    ...(status === 'idle' ? { answer: 'Task 1 done; the finding is in its note.' } : {}),
    steps,
    usage: {
      inputTokens: 9_800 * steps,
      outputTokens: 420 * steps,
      cacheReadTokens: 6_000 * steps,
      cacheWriteTokens: 0,
      costUsd: 0.0021 * steps,
    },
    durationMs: 41_000,
  };
}

const SCOUT = teammate('ses_team_scout', 'scout', 'Survey the upload code', 'idle', 5);
const BUILDER = teammate('ses_team_builder', 'builder', 'Change the retry policy', 'running', 2);
const CRITIC = teammate('ses_team_critic', 'critic', 'Review what builder changes', 'idle', 0);

const node = callMaker({
  errorCode: 'INVALID_ARGUMENTS',
  text: 'Recorded result.',
  durationMs: 12,
});

/** The first `task_list` of the lead's session: the list the later one is compared with. */
export const FIRST_LIST: ToolNode = node(
  'call_t9',
  'task_list',
  'done',
  {},
  { status: 'ok', output: { tasks: [SURVEY, FIX, TESTS] }, text: '3 tasks.' },
);

/** The `task_list` that the session's first list came before. */
export const LATER_LIST_CALL = 'call_t10';

/** The teammates-and-tasks cards in their states, on the agreed output shapes. */
export const TEAM_CASES: readonly FamilyCase[] = [
  { id: 'task_create-preparing', node: node('call_t1', 'task_create', 'preparing') },
  {
    id: 'task_create-running',
    node: node('call_t2', 'task_create', 'running', { title: FIX.title, blockedBy: ['1'] }),
  },
  {
    id: 'task_create-blocked',
    node: node(
      'call_t3',
      'task_create',
      'done',
      { title: FIX.title, description: FIX.description, blockedBy: ['1'] },
      { status: 'ok', output: { task: FIX }, text: 'Created task 2.' },
    ),
  },
  {
    id: 'task_create-assigned',
    node: node(
      'call_t4',
      'task_create',
      'done',
      { title: TESTS.title, assignee: 'builder', blockedBy: ['2'] },
      { status: 'ok', output: { task: TESTS }, text: 'Created task 3 for builder.' },
    ),
  },
  {
    id: 'task_create-refused',
    node: node(
      'call_t5',
      'task_create',
      'done',
      { title: 'Ship it', assignee: 'reviewer' },
      {
        status: 'error',
        text: 'assignee `reviewer` is not on the team; expected `lead` or a teammate: scout, builder, critic.',
      },
    ),
  },
  {
    id: 'task_create-malformed',
    node: node(
      'call_t6',
      'task_create',
      'done',
      { title: FIX.title },
      { status: 'ok', output: { task: { ...FIX, status: 'blocked' } } },
    ),
  },
  {
    id: 'task_update-done',
    node: node(
      'call_t7',
      'task_update',
      'done',
      { id: '1', status: 'completed', note: FINDING.text },
      { status: 'ok', output: { task: SURVEYED, previous: SURVEY }, text: 'Task 1 is completed.' },
    ),
  },
  {
    id: 'task_update-taken',
    node: node(
      'call_t8',
      'task_update',
      'done',
      { id: '2', status: 'in_progress', assignee: 'builder' },
      { status: 'ok', output: { task: FIX_TAKEN, previous: FIX }, text: 'Task 2 is in progress.' },
    ),
  },
  {
    id: 'task_update-refused',
    node: node(
      'call_t11',
      'task_update',
      'done',
      { id: '3', status: 'in_progress' },
      {
        status: 'error',
        text: 'task 3 cannot go in_progress: it waits for task 2, which is still pending.',
      },
    ),
  },
  {
    id: 'task_update-malformed',
    node: node(
      'call_t12',
      'task_update',
      'done',
      { id: '1', status: 'completed' },
      { status: 'ok', output: { task: SURVEYED, previous: TESTS } },
    ),
  },
  { id: 'task_list-running', node: node('call_t13', 'task_list', 'running', {}) },
  { id: 'task_list-first', node: FIRST_LIST },
  {
    id: 'task_list-compared',
    node: node(
      LATER_LIST_CALL,
      'task_list',
      'done',
      {},
      {
        status: 'ok',
        output: { tasks: [SURVEYED, FIX_TAKEN, TESTS, DOCS] },
        text: '4 tasks.',
      },
    ),
  },
  {
    id: 'task_list-empty',
    node: node('call_t14', 'task_list', 'done', {}, { status: 'ok', output: { tasks: [] } }),
  },
  {
    id: 'task_list-malformed',
    node: node(
      'call_t15',
      'task_list',
      'done',
      {},
      { status: 'ok', output: { tasks: [SURVEY, { ...FIX, id: '1' }] } },
    ),
  },
  {
    id: 'agent-teammate',
    node: node(
      'call_t16',
      'agent',
      'done',
      {
        agent: 'general',
        name: 'scout',
        background: true,
        description: SCOUT.description,
        prompt: 'You are scout. Take task 1 from the task list; note what you find.',
      },
      {
        status: 'ok',
        output: { ...SCOUT, status: 'running', answer: undefined, steps: 0 } satisfies ChildRecord,
      },
    ),
  },
  {
    id: 'agent_list-team',
    node: node(
      'call_t17',
      'agent_list',
      'done',
      {},
      { status: 'ok', output: { children: [SCOUT, BUILDER, CRITIC] } },
    ),
  },
];
