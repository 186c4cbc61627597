import type { ChecksRunOutput, GoalRecord } from '@qilin-agent/protocol';
import { callMaker, type FamilyCase } from './familyCases';

/** A check run's tail of `cargo test`, as a failing run prints it. */
const TEST_OUTPUT = `running 12 tests
test upload::tests::gives_up_after_five ... ok
test upload::tests::retries_on_5xx ... FAILED

failures:

---- upload::tests::retries_on_5xx stdout ----
thread 'upload::tests::retries_on_5xx' panicked at src/upload.rs:48:9:
assertion \`left == right\` failed: retries
  left: 3
 right: 5

test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
`;

const FAILING: ChecksRunOutput = {
  runs: [
    {
      id: 'test',
      description: 'The unit tests',
      command: 'cargo test --message-format json',
      status: 'completed',
      conclusion: 'failure',
      durationMs: 12_400,
      summary: '11 passed, 1 failed',
      annotations: [
        {
          path: 'src/upload.rs',
          line: 48,
          column: 9,
          level: 'error',
          message: 'assertion `left == right` failed: retries (left: 3, right: 5)',
        },
        {
          path: 'src/upload.rs',
          line: 12,
          column: 5,
          level: 'warning',
          message: 'unused variable: `attempt`',
        },
      ],
      omittedAnnotations: 0,
      output: TEST_OUTPUT,
      cached: false,
      startedAt: '2026-03-01T10:00:02Z',
      exitCode: 101,
    },
    {
      id: 'lint',
      description: 'Clippy, warnings denied',
      command: 'cargo clippy --all-targets -- -D warnings',
      status: 'completed',
      conclusion: 'success',
      durationMs: 3_800,
      summary: 'no warnings',
      annotations: [],
      omittedAnnotations: 0,
      output: '    Finished `dev` profile [unoptimized + debuginfo] target(s) in 3.71s\n',
      cached: true,
      startedAt: '2026-03-01T09:41:10Z',
      exitCode: 0,
    },
    {
      id: 'e2e',
      command: 'npm run e2e',
      status: 'timed_out',
      conclusion: 'failure',
      durationMs: 60_000,
      summary: 'timed out after 60 s',
      annotations: [],
      omittedAnnotations: 0,
      output: 'Running 40 tests using 2 workers\n  ✓ upload › retries (4.1s)\n',
      spill: { path: '/home/qilin/.qilin/sessions/ses_1/spill/check-e2e.txt', totalBytes: 204_800 },
      cached: false,
      startedAt: '2026-03-01T10:00:02Z',
    },
  ],
  conclusion: 'failure',
  summary: '3 checks: 1 passed, 2 failed',
};

const PASSING: ChecksRunOutput = {
  runs: [
    {
      ...(FAILING.runs[0] as ChecksRunOutput['runs'][number]),
      conclusion: 'success',
      summary: '12 tests passed',
      annotations: [],
      output: 'test result: ok. 12 passed; 0 failed; 0 ignored\n',
      exitCode: 0,
      durationMs: 11_900,
      startedAt: '2026-03-01T10:12:40Z',
    },
    { ...(FAILING.runs[1] as ChecksRunOutput['runs'][number]) },
  ],
  conclusion: 'success',
  summary: '2 checks: 2 passed',
};

const NOT_STARTED: ChecksRunOutput = {
  runs: [
    {
      id: 'typecheck',
      command: 'tsc -p web',
      status: 'failed_to_start',
      conclusion: 'failure',
      durationMs: 12,
      summary: 'failed to start: tsc: command not found',
      annotations: [],
      omittedAnnotations: 0,
      output: 'bash: line 1: tsc: command not found\n',
      cached: false,
      startedAt: '2026-03-01T10:05:00Z',
      exitCode: 127,
    },
    {
      id: 'docs',
      description: 'Links in the docs',
      command: 'scripts/check-links docs',
      status: 'completed',
      conclusion: 'neutral',
      durationMs: 450,
      summary: 'no docs changed',
      annotations: [
        { path: 'docs/goals.md', level: 'notice', message: 'not linked from the README' },
      ],
      omittedAnnotations: 51,
      output: '',
      cached: false,
      startedAt: '2026-03-01T10:05:00Z',
      exitCode: 0,
    },
  ],
  conclusion: 'failure',
  summary: '2 checks: 1 failed, 1 neutral',
};

const OBJECTIVE = 'Make the upload retries pass their tests: five attempts, backoff from 250 ms';

const GOAL: GoalRecord = {
  id: 'goal_01',
  objective: OBJECTIVE,
  status: 'active',
  budget: { tokens: 200_000, seconds: 1_800, turns: 12 },
  usage: { tokens: 0, seconds: 0, turns: 0 },
  checks: ['test', 'lint'],
  createdAt: '2026-03-01T09:40:00Z',
  updatedAt: '2026-03-01T09:40:00Z',
};

const WORKED: GoalRecord = {
  ...GOAL,
  usage: { tokens: 61_300, seconds: 640, turns: 4 },
  lastChecks: FAILING,
  updatedAt: '2026-03-01T10:01:00Z',
};

const node = callMaker({
  errorCode: 'INVALID_ARGUMENTS',
  text: 'Recorded result.',
  durationMs: 1_250,
});

/** Every checks and goal card in its states, on outputs of the agreed shapes. */
export const GOAL_CASES: readonly FamilyCase[] = [
  { id: 'checks_run-preparing', node: node('call_c1', 'checks_run', 'preparing') },
  { id: 'checks_run-running', node: node('call_c2', 'checks_run', 'running', {}) },
  {
    id: 'checks_run-failure',
    node: node('call_c3', 'checks_run', 'done', {}, { status: 'ok', output: FAILING }),
  },
  {
    id: 'checks_run-success',
    node: node(
      'call_c4',
      'checks_run',
      'done',
      { ids: ['test', 'lint'] },
      { status: 'ok', output: PASSING },
    ),
  },
  {
    id: 'checks_run-not-started',
    node: node('call_c5', 'checks_run', 'done', {}, { status: 'ok', output: NOT_STARTED }),
  },
  {
    id: 'checks_run-failed',
    node: node(
      'call_c6',
      'checks_run',
      'done',
      { ids: ['unit'] },
      {
        status: 'error',
        text: 'No check `unit`: the declared checks are test, lint, e2e.',
      },
    ),
  },
  {
    id: 'checks_run-malformed',
    node: node(
      'call_c7',
      'checks_run',
      'done',
      {},
      { status: 'ok', output: { runs: 'all passed' }, text: '3 checks: 3 passed' },
    ),
  },
  {
    id: 'goal_create-running',
    node: node('call_g1', 'goal_create', 'running', { objective: OBJECTIVE }),
  },
  {
    id: 'goal_create-active',
    node: node(
      'call_g2',
      'goal_create',
      'done',
      {
        objective: OBJECTIVE,
        token_budget: 200_000,
        time_budget: 1_800,
        max_turns: 12,
        checks: ['test', 'lint'],
      },
      { status: 'ok', output: GOAL },
    ),
  },
  {
    id: 'goal_create-refused',
    node: node(
      'call_g3',
      'goal_create',
      'done',
      { objective: 'Also update the docs' },
      {
        status: 'error',
        text: 'A goal is active: finish it with goal_update, or ask the user to clear it (/goal clear).',
      },
    ),
  },
  {
    id: 'goal_get-active',
    node: node('call_g4', 'goal_get', 'done', {}, { status: 'ok', output: { goal: WORKED } }),
  },
  {
    id: 'goal_get-paused',
    node: node(
      'call_g5',
      'goal_get',
      'done',
      {},
      {
        status: 'ok',
        output: {
          goal: {
            ...WORKED,
            status: 'paused',
            pausedBecause: 'restart',
            reason: 'The server restarted.',
          },
        },
      },
    ),
  },
  {
    id: 'goal_get-budget-limited',
    node: node(
      'call_g6',
      'goal_get',
      'done',
      {},
      {
        status: 'ok',
        output: {
          goal: {
            ...WORKED,
            status: 'budget_limited',
            usage: { tokens: 203_400, seconds: 1_520, turns: 9 },
            reason: 'The token budget is spent.',
          },
        },
      },
    ),
  },
  {
    id: 'goal_get-none',
    node: node('call_g7', 'goal_get', 'done', {}, { status: 'ok', output: { goal: null } }),
  },
  {
    id: 'goal_update-refused',
    node: node(
      'call_g8',
      'goal_update',
      'done',
      { status: 'complete', reason: 'The retries work now.', evidence: 'Tried an upload by hand.' },
      {
        status: 'ok',
        output: {
          goal: WORKED,
          accepted: false,
          message: 'Not complete: the checks test and e2e failed. The goal stays active.',
          checks: FAILING,
        },
      },
    ),
  },
  {
    id: 'goal_update-accepted',
    node: node(
      'call_g9',
      'goal_update',
      'done',
      { status: 'complete', reason: 'The retry tests pass.', evidence: 'cargo test: 12 passed.' },
      {
        status: 'ok',
        output: {
          goal: {
            ...WORKED,
            status: 'complete',
            usage: { tokens: 88_100, seconds: 910, turns: 6 },
            lastChecks: PASSING,
            reason: 'The retry tests pass.',
            evidence: 'cargo test: 12 passed.',
            updatedAt: '2026-03-01T10:13:00Z',
          },
          accepted: true,
          message: 'The goal is complete: its checks pass.',
          checks: PASSING,
        },
      },
    ),
  },
  {
    id: 'goal_update-blocked',
    node: node(
      'call_g10',
      'goal_update',
      'done',
      {
        status: 'blocked',
        reason: 'The staging bucket refuses every upload: I cannot test retries against it.',
      },
      {
        status: 'ok',
        output: {
          goal: {
            ...WORKED,
            status: 'blocked',
            reason: 'The staging bucket refuses every upload: I cannot test retries against it.',
          },
          accepted: true,
          message: 'The goal is blocked.',
        },
      },
    ),
  },
];
