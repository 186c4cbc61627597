import type { ToolNode } from '@qilin-agent/protocol';
import { callMaker, type FamilyCase } from './familyCases';

const node = callMaker({
  errorCode: 'INVALID_ARGUMENTS',
  text: 'Recorded result.',
  durationMs: 1_800,
});

// ---- Loops -------------------------------------------------------------------------------------

const PROMPT = `Make the upload retry only on 5xx responses and timeouts, never on 4xx.
Keep the exponential backoff as it is. Add a test for each case.
When every check passes, you are done; if a check keeps failing the same way, say why in NOTES.md.
Read NOTES.md first: earlier iterations may have left what they learnt there.`;

const START_ARGS = { prompt: PROMPT, until: { checks: ['test', 'lint'] }, max_iterations: 5 };

/** An iteration that ended, its checks as given; the rest an ordinary report. */
function ended(
  number: number,
  checks: readonly [string, 'success' | 'failure' | 'neutral', string][],
  outcome: string,
  extra: Record<string, unknown> = {},
) {
  return {
    number,
    sessionId: `ses_loop_it${number}`,
    status: 'finished',
    startedAt: `2026-03-03T09:${String(number * 4).padStart(2, '0')}:00Z`,
    endedAt: `2026-03-03T09:${String(number * 4 + 3).padStart(2, '0')}:20Z`,
    durationMs: 200_000 + number * 7_000,
    files: [
      { path: 'src/upload.rs', insertions: 14 + number, deletions: 6, change: 'modified' },
      ...(number === 1
        ? [{ path: 'tests/retry_policy.rs', insertions: 48, deletions: 0, change: 'added' }]
        : []),
      ...(number === 2
        ? [{ path: 'src/retry_old.rs', insertions: 0, deletions: 31, change: 'deleted' }]
        : []),
    ],
    checks: checks.map(([id, conclusion, summary]) => ({ id, conclusion, summary })),
    inputTokens: 18_400 + number * 2_100,
    outputTokens: 2_300 + number * 400,
    costUsd: 0.07 + number * 0.01,
    promiseSeen: false,
    outcome,
    ...extra,
  };
}

const FIRST = ended(
  1,
  [
    ['test', 'failure', '11 passed, 1 failed'],
    ['lint', 'success', 'no warnings'],
  ],
  'check test failed (1 error); going on',
);
const SECOND = ended(
  2,
  [
    ['test', 'failure', '12 passed, 1 failed'],
    ['lint', 'success', 'no warnings'],
  ],
  'check test failed (1 error); going on',
);
const THIRD = ended(
  3,
  [
    ['test', 'success', '13 passed'],
    ['lint', 'success', 'no warnings'],
  ],
  'checks passed',
);

/** A running iteration: started, nothing reported yet. */
function running(number: number) {
  return {
    number,
    sessionId: `ses_loop_it${number}`,
    status: 'running',
    startedAt: `2026-03-03T09:${String(number * 4).padStart(2, '0')}:00Z`,
    inputTokens: 0,
    outputTokens: 0,
    promiseSeen: false,
  };
}

/** A loop record: running unless `overrides` finish it. */
function loop(overrides: Record<string, unknown>) {
  return {
    loopId: 'loop_7f3a',
    prompt: PROMPT,
    until: { checks: ['test', 'lint'] },
    maxIterations: 5,
    freshContext: true,
    budget: { tokens: 400_000, costUsd: 2 },
    status: 'running',
    startedAt: '2026-03-03T09:04:00Z',
    inputTokens: 0,
    outputTokens: 0,
    ...overrides,
  };
}

/** A finished loop with these iterations, their spend summed. */
function finished(reason: string, iterations: readonly Record<string, unknown>[], extra = {}) {
  const sum = (key: string) =>
    iterations.reduce((total, item) => total + (typeof item[key] === 'number' ? item[key] : 0), 0);
  return loop({
    status: 'finished',
    stopReason: reason,
    iterations,
    endedAt: '2026-03-03T09:16:20Z',
    inputTokens: sum('inputTokens'),
    outputTokens: sum('outputTokens'),
    costUsd: Math.round(sum('costUsd') * 100) / 100,
    ...extra,
  });
}

const STALLED_FAILURE: [string, 'failure', string][] = [
  ['test', 'failure', 'retry_policy::gives_up_on_404 failed'],
];

/** Every loop card in its states, on outputs of the agreed shapes. */
export const LOOP_CASES: readonly FamilyCase[] = [
  { id: 'loop_start-preparing', node: node('call_l1', 'loop_start', 'preparing') },
  {
    id: 'loop_start-starting',
    node: node('call_l2', 'loop_start', 'done', START_ARGS, {
      status: 'ok',
      output: { loop: loop({ iterations: [] }) },
    }),
  },
  {
    id: 'loop_start-running',
    node: node('call_l3', 'loop_start', 'done', START_ARGS, {
      status: 'ok',
      output: { loop: loop({ iterations: [FIRST, running(2)] }) },
    }),
  },
  {
    id: 'loop_start-passed',
    node: node('call_l4', 'loop_start', 'done', START_ARGS, {
      status: 'ok',
      output: { loop: finished('checks_passed', [FIRST, SECOND, THIRD]) },
    }),
  },
  {
    id: 'loop_start-promise',
    node: node(
      'call_l5',
      'loop_start',
      'done',
      { ...START_ARGS, until: { promise: 'ALL DONE' } },
      {
        status: 'ok',
        output: {
          loop: finished(
            'promise_seen',
            [
              ended(1, [], 'going on'),
              ended(2, [], 'promise seen', { promiseSeen: true, files: [] }),
            ],
            { until: { promise: 'ALL DONE' } },
          ),
        },
      },
    ),
  },
  {
    id: 'loop_start-stalled',
    node: node('call_l6', 'loop_start', 'done', START_ARGS, {
      status: 'ok',
      output: {
        loop: finished('stalled', [
          ended(1, STALLED_FAILURE, 'check test failed (1 error); going on'),
          ended(2, STALLED_FAILURE, 'the same failure again; going on'),
          ended(3, STALLED_FAILURE, 'the same failure three times: stalled'),
        ]),
      },
    }),
  },
  {
    id: 'loop_start-max-iterations',
    node: node(
      'call_l7',
      'loop_start',
      'done',
      { ...START_ARGS, max_iterations: 2 },
      {
        status: 'ok',
        output: {
          loop: finished(
            'max_iterations',
            [FIRST, ended(2, [['test', 'failure', '12 passed, 1 failed']], 'limit reached')],
            { maxIterations: 2 },
          ),
        },
      },
    ),
  },
  {
    id: 'loop_start-budget',
    node: node('call_l8', 'loop_start', 'done', START_ARGS, {
      status: 'ok',
      output: {
        loop: finished(
          'budget',
          [FIRST, ended(2, [['test', 'failure', '12 passed, 1 failed']], 'the budget is spent')],
          { budget: { costUsd: 0.2 } },
        ),
      },
    }),
  },
  {
    id: 'loop_start-failed-call',
    node: node(
      'call_l9',
      'loop_start',
      'done',
      { ...START_ARGS, until: { checks: ['tset'] } },
      { status: 'error', text: 'unknown check `tset`: the declared checks are test, lint' },
    ),
  },
  {
    id: 'loop_start-malformed',
    node: node('call_l10', 'loop_start', 'done', START_ARGS, {
      status: 'ok',
      output: { loop: { loopId: 'loop_7f3a', status: 'spinning' } },
    }),
  },
  {
    id: 'loop_stop-mid-iteration',
    node: node(
      'call_l11',
      'loop_stop',
      'done',
      { id: 'loop_7f3a' },
      {
        status: 'ok',
        output: {
          loop: finished('stopped', [
            FIRST,
            {
              ...running(2),
              status: 'interrupted',
              endedAt: '2026-03-03T09:09:10Z',
              durationMs: 70_000,
              inputTokens: 9_100,
              outputTokens: 800,
              outcome: 'stopped by a person',
            },
          ]),
        },
      },
    ),
  },
  {
    id: 'loop_status-one',
    node: node(
      'call_l12',
      'loop_status',
      'done',
      { id: 'loop_7f3a' },
      { status: 'ok', output: { loops: [loop({ iterations: [FIRST, running(2)] })] } },
    ),
  },
  {
    id: 'loop_status-failed-loop',
    node: node(
      'call_l13',
      'loop_status',
      'done',
      {},
      {
        status: 'ok',
        output: {
          loops: [
            finished('failed', [
              {
                ...running(1),
                status: 'failed',
                endedAt: '2026-03-03T09:04:30Z',
                durationMs: 30_000,
                outcome: 'the model provider refused the request (401)',
              },
            ]),
          ],
        },
      },
    ),
  },
];

// ---- Workflows ---------------------------------------------------------------------------------

const RUN_ARGS = { workflow: 'review', args: { base: 'main', parts: 3 } };

const PARTS = ['the upload path', 'the retry policy', 'the tests'];

/** A call step of an `agent` the workflow made. */
function agentStep(index: number, status: string, extra: Record<string, unknown> = {}) {
  return {
    index,
    kind: 'call',
    callId: `call_wa${index}`,
    tool: 'agent',
    status,
    title: `Review ${PARTS[index] ?? 'a part'}`,
    replayed: false,
    at: `2026-03-04T10:00:0${index}Z`,
    ...extra,
  };
}

const SUMMARY = `**Approve**, with one nit.

| Part | Verdict |
| --- | --- |
| the upload path | ok |
| the retry policy | ok |
| the tests | one missing case: a 429 is not retried |`;

/** A run of `review`. */
function run(overrides: Record<string, unknown>) {
  return {
    runId: 'wf_2c91',
    workflow: 'review',
    description: 'Review a change in three parts at once, then sum up',
    args: RUN_ARGS.args,
    status: 'completed',
    steps: [
      agentStep(0, 'ok'),
      agentStep(1, 'ok'),
      agentStep(2, 'ok'),
      {
        index: 3,
        kind: 'report',
        title: 'Summary',
        text: SUMMARY,
        replayed: false,
        at: '2026-03-04T10:02:00Z',
      },
    ],
    result: { verdict: 'approve', nits: 1 },
    startedAt: '2026-03-04T10:00:00Z',
    endedAt: '2026-03-04T10:02:05Z',
    durationMs: 125_000,
    ...overrides,
  };
}

/** The agent calls a workflow made, nested under its card. */
function nestedAgents(parent: string, phase: 'running' | 'done'): ToolNode[] {
  return PARTS.map((part, index) => ({
    ...node(
      `call_wa${index}`,
      'agent',
      phase,
      { agent: 'general', description: `Review ${part}`, prompt: `Review ${part} of the change.` },
      phase === 'done'
        ? {
            status: 'ok',
            output: {
              sessionId: `ses_wa${index}`,
              agent: 'general',
              description: `Review ${part}`,
              background: false,
              status: 'completed',
              answer: index === 2 ? 'One missing case: a 429 is not retried.' : 'Looks right.',
              steps: 4,
              usage: { inputTokens: 21_000, outputTokens: 1_900 },
              durationMs: 38_000,
            },
          }
        : undefined,
    ),
    caller: 'code' as const,
    parentCallId: parent,
  }));
}

/** Every workflow card in its states, on outputs of the agreed shapes. */
export const WORKFLOW_CASES: readonly FamilyCase[] = [
  { id: 'workflow_run-preparing', node: node('call_w1', 'workflow_run', 'preparing') },
  {
    id: 'workflow_run-running',
    node: {
      ...node('call_w2', 'workflow_run', 'running', RUN_ARGS),
      subCalls: nestedAgents('call_w2', 'running'),
    },
  },
  {
    id: 'workflow_run-completed',
    node: {
      ...node('call_w3', 'workflow_run', 'done', RUN_ARGS, {
        status: 'ok',
        output: { run: run({}) },
      }),
      subCalls: nestedAgents('call_w3', 'done'),
    },
  },
  {
    id: 'workflow_run-replayed',
    node: node('call_w4', 'workflow_run', 'done', RUN_ARGS, {
      status: 'ok',
      output: {
        run: run({
          steps: [
            agentStep(0, 'ok', { replayed: true }),
            agentStep(1, 'ok', { replayed: true }),
            agentStep(2, 'ok'),
          ],
        }),
      },
    }),
  },
  {
    id: 'workflow_run-failed',
    node: node('call_w5', 'workflow_run', 'done', RUN_ARGS, {
      status: 'ok',
      output: {
        run: run({
          status: 'failed',
          steps: [agentStep(0, 'ok'), agentStep(1, 'error'), agentStep(2, 'interrupted')],
          result: undefined,
          error: 'agent `Review the retry policy` failed: the child ran out of budget',
          durationMs: 61_000,
          endedAt: '2026-03-04T10:01:01Z',
        }),
      },
    }),
  },
  {
    id: 'workflow_run-background',
    node: node(
      'call_w6',
      'workflow_run',
      'done',
      { ...RUN_ARGS, background: true },
      {
        status: 'ok',
        output: {
          run: run({
            status: 'running',
            steps: [],
            result: undefined,
            endedAt: undefined,
            durationMs: undefined,
          }),
        },
      },
    ),
  },
  {
    id: 'workflow_run-unknown',
    node: node(
      'call_w7',
      'workflow_run',
      'done',
      { workflow: 'reveiw' },
      { status: 'error', text: 'no workflow `reveiw` in .qilin/workflows (there is: review)' },
    ),
  },
  {
    id: 'workflow_run-malformed',
    node: node('call_w8', 'workflow_run', 'done', RUN_ARGS, {
      status: 'ok',
      output: { run: { runId: 'wf_2c91', workflow: 'review', status: 'paused' } },
    }),
  },
  {
    id: 'workflow_stop-stopped',
    node: node(
      'call_w9',
      'workflow_stop',
      'done',
      { id: 'wf_2c91' },
      {
        status: 'ok',
        output: {
          run: run({
            status: 'stopped',
            steps: [agentStep(0, 'ok'), agentStep(1, 'interrupted')],
            result: undefined,
            durationMs: 40_000,
            endedAt: '2026-03-04T10:00:40Z',
          }),
        },
      },
    ),
  },
  {
    id: 'workflow_status-runs',
    node: node(
      'call_w10',
      'workflow_status',
      'done',
      {},
      {
        status: 'ok',
        output: {
          runs: [
            run({}),
            run({
              runId: 'wf_88aa',
              status: 'interrupted',
              steps: [agentStep(0, 'ok')],
              result: undefined,
              durationMs: 9_000,
              endedAt: '2026-03-04T10:00:09Z',
            }),
          ],
        },
      },
    ),
  },
];
