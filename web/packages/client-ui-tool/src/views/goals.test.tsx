// The checks and goal cards as a reader sees them: rendered through the tree, expanded.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ChecksRunOutput, GoalRecord, ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test, vi } from 'vitest';
import { madeCall } from '../../../../test-support/calls';
import { renderWithI18n } from '../../../../test-support/render';
import { formatTime } from '../models/sessionLink';
import { registerBuiltinToolViews } from '../register';
import { ToolCallTree } from '../tree/ToolCallTree';

/** A call of `toolName`; ended `ok` with `output` unless it is running, or failed. */
function call(toolName: string, args: unknown, ended?: Parameters<typeof madeCall>[3]): ToolNode {
  return madeCall('call_9', toolName, args, ended);
}

/** Renders a call's card, opened. */
function open(node: ToolNode, options: { locale?: Locale; openFile?: () => void } = {}) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const rendered = renderWithI18n(
    <SlotsProvider registry={registry}>
      <ToolCallTree
        node={node}
        {...(options.openFile === undefined ? {} : { openFile: options.openFile })}
      />
    </SlotsProvider>,
    options.locale ?? 'en',
  );
  const row = rendered.container.querySelector<HTMLButtonElement>('button.qp-row__main');
  if (row !== null) fireEvent.click(row);
  return rendered;
}

const CHECKS: ChecksRunOutput = {
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
          message: 'assertion failed: retries == 5',
        },
      ],
      omittedAnnotations: 2,
      output: 'test upload::retries ... FAILED\n',
      cached: false,
      startedAt: '2026-03-01T10:00:00Z',
      exitCode: 101,
    },
    {
      id: 'lint',
      command: 'cargo clippy',
      status: 'completed',
      conclusion: 'success',
      durationMs: 800,
      summary: 'no warnings',
      annotations: [],
      omittedAnnotations: 0,
      output: '',
      cached: true,
      startedAt: '2026-03-01T09:58:00Z',
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
      output: 'Running 40 tests…\n',
      spill: { path: '/data/ses_1/spill/check-e2e.txt', totalBytes: 204_800 },
      cached: false,
      startedAt: '2026-03-01T10:00:00Z',
    },
  ],
  conclusion: 'failure',
  summary: '3 checks: 1 passed, 2 failed',
};

const GOAL: GoalRecord = {
  id: 'goal_1',
  objective: 'Make the upload retries pass their tests',
  status: 'active',
  budget: { tokens: 200_000, seconds: 1_800 },
  usage: { tokens: 50_000, seconds: 600, turns: 3 },
  checks: ['test', 'lint'],
  createdAt: '2026-03-01T09:50:00Z',
  updatedAt: '2026-03-01T10:01:00Z',
};

describe('checks_run card', () => {
  test('the overall conclusion on the row, one row per check with its facts', () => {
    open(call('checks_run', {}, { output: CHECKS }));
    expect(
      screen.getByRole('button', { name: /Checks.*3 checks: 1 passed, 2 failed.*failed/ }),
    ).toBeVisible();
    const list = screen.getByRole('list', { name: 'Checks run by Checks' });
    const rows = within(list)
      .getAllByRole('listitem')
      .filter((item) => item.dataset.check);
    expect(rows.map((row) => row.dataset.check)).toEqual(['test', 'lint', 'e2e']);
    expect(within(rows[0] as HTMLElement).getByText('11 passed, 1 failed')).toBeVisible();
    expect(within(rows[0] as HTMLElement).getByText('12.4 sec')).toBeVisible();
    expect(within(rows[1] as HTMLElement).getByText('cached')).toBeVisible();
    expect(within(rows[2] as HTMLElement).getAllByText('timed out').length).toBeGreaterThan(0);
  });

  test('annotations open their place through the host; the spill names the whole output', () => {
    const openFile = vi.fn();
    open(call('checks_run', { ids: ['test', 'lint', 'e2e'] }, { output: CHECKS }), { openFile });
    fireEvent.click(screen.getByText('3 annotations'));
    const notes = screen.getByRole('list', { name: 'Annotations of test' });
    expect(within(notes).getByText('assertion failed: retries == 5')).toBeVisible();
    expect(within(notes).getByText('error')).toBeVisible();
    fireEvent.click(within(notes).getByRole('button', { name: 'Open src/upload.rs:48:9' }));
    expect(openFile).toHaveBeenCalledWith('src/upload.rs', { first: 48, last: 48 });
    expect(screen.getByText('… 2 more annotations not recorded')).toBeInTheDocument();
    const spill = screen.getByText(/The whole output \(200.0 KB\) is in \/data\/ses_1/);
    fireEvent.click(spill);
    expect(openFile).toHaveBeenLastCalledWith('/data/ses_1/spill/check-e2e.txt');
  });

  test('while running, the ids asked for, or every declared check', () => {
    const { container, unmount } = open(call('checks_run', { ids: ['test', 'lint'] }));
    expect(container.querySelector('.qp-row')?.textContent).toMatch(/Checks.*test, lint/);
    unmount();
    const all = open(call('checks_run', {}));
    expect(all.container.querySelector('.qp-row')?.textContent).toMatch(
      /Checks.*every declared check/,
    );
  });

  test('a run of a check the call did not ask for falls back to the generic card', () => {
    open(call('checks_run', { ids: ['lint'] }, { output: CHECKS }));
    expect(screen.getByRole('button', { name: /Tool call · checks_run/ })).toBeVisible();
  });

  test('a timed-out run that says it passed is not the agreed shape: generic card', () => {
    const lying = {
      ...CHECKS,
      runs: [{ ...CHECKS.runs[2], conclusion: 'success' }],
      conclusion: 'success',
    };
    open(call('checks_run', {}, { output: lying }));
    expect(screen.getByRole('button', { name: /Tool call · checks_run/ })).toBeVisible();
    expect(screen.getByText('the recorded result')).toBeVisible();
  });

  test('a failed call keeps its input and error', () => {
    open(call('checks_run', { ids: ['nope'] }, { status: 'error', text: 'unknown check nope' }), {
      locale: 'zh-CN',
    });
    expect(screen.getByRole('button', { name: /检查/ })).toBeVisible();
    expect(screen.getByText('unknown check nope')).toBeVisible();
  });
});

describe('goal cards', () => {
  test('goal_create: the objective, status, meters and dates in the viewer’s zone', () => {
    const { container } = open(
      call('goal_create', { objective: GOAL.objective, token_budget: 200_000 }, { output: GOAL }),
    );
    expect(
      screen.getByRole('button', { name: /Set goal.*Make the upload retries.*active/ }),
    ).toBeVisible();
    expect(screen.getByRole('meter', { name: /Tokens: 50K of 200K, 150K left/ })).toBeVisible();
    expect(
      screen.getByRole('meter', { name: /Time: 10 min of 30 min, 20 min left/ }),
    ).toBeVisible();
    expect(screen.getByText('3 turns, no limit')).toBeVisible();
    const times = container.querySelectorAll('time');
    expect(times[0]?.getAttribute('dateTime')).toBe(GOAL.createdAt);
    expect(times[0]?.textContent).toBe(formatTime(GOAL.createdAt, 'en'));
    expect(screen.getByText('test')).toBeVisible();
  });

  test('goal_create of another objective than asked falls back to the generic card', () => {
    open(call('goal_create', { objective: 'Something else' }, { output: GOAL }));
    expect(screen.getByRole('button', { name: /Tool call · goal_create/ })).toBeVisible();
  });

  test('goal_get: the goal as the call read it, paused with its reason; none at all', () => {
    const paused = { ...GOAL, status: 'paused', pausedBecause: 'restart', lastChecks: CHECKS };
    open(call('goal_get', {}, { output: { goal: paused } }));
    expect(
      screen.getByRole('button', { name: /Read goal.*paused: the server restarted/ }),
    ).toBeVisible();
    expect(screen.getByText('Last checks')).toBeVisible();
    expect(screen.getByRole('list', { name: 'Last checks' })).toBeVisible();
  });

  test('goal_get with no goal says so', () => {
    const { container } = open(call('goal_get', {}, { output: { goal: null } }), {
      locale: 'zh-CN',
    });
    expect(container.querySelector('.qp-row')?.textContent).toMatch(/读取目标.*没有目标/);
    expect(container.querySelector('button.qp-row__main')).toBeNull();
  });

  test('goal_get of another shape falls back to the generic card', () => {
    open(call('goal_get', {}, { output: { goal: { ...GOAL, status: 'finished' } } }));
    expect(screen.getByRole('button', { name: /Tool call · goal_get/ })).toBeVisible();
  });

  test('goal_update refused: the message and the failing checks', () => {
    open(
      call(
        'goal_update',
        { status: 'complete', reason: 'The retries work now.' },
        {
          output: {
            goal: GOAL,
            accepted: false,
            message: 'Not complete: the checks test and e2e failed.',
            checks: CHECKS,
          },
        },
      ),
    );
    expect(
      screen.getByRole('button', { name: /Update goal.*mark complete.*refused/ }),
    ).toBeVisible();
    expect(screen.getByText('Not complete: the checks test and e2e failed.')).toBeVisible();
    const failing = screen.getByRole('list', { name: 'Failing checks' });
    const ids = within(failing)
      .getAllByRole('listitem')
      .map((item) => item.dataset.check)
      .filter(Boolean);
    expect(ids).toEqual(['test', 'e2e']);
  });

  test('goal_update accepted: the goal complete, the checks that passed', () => {
    const passed: ChecksRunOutput = {
      runs: [{ ...(CHECKS.runs[1] as ChecksRunOutput['runs'][number]), cached: false }],
      conclusion: 'success',
      summary: '1 check: 1 passed',
    };
    open(
      call(
        'goal_update',
        { status: 'complete', reason: 'Done.', evidence: 'cargo test passes' },
        {
          output: {
            goal: { ...GOAL, status: 'complete', lastChecks: passed },
            accepted: true,
            message: 'The goal is complete.',
            checks: passed,
          },
        },
      ),
    );
    expect(
      screen.getByRole('button', { name: /Update goal.*mark complete.*accepted/ }),
    ).toBeVisible();
    expect(screen.getByText('cargo test passes')).toBeVisible();
    expect(screen.getByRole('list', { name: 'Checks the runtime ran' })).toBeVisible();
  });

  test('an accepted complete the goal does not show falls back to the generic card', () => {
    open(
      call(
        'goal_update',
        { status: 'complete', reason: 'Done.' },
        { output: { goal: GOAL, accepted: true, message: 'ok' } },
      ),
    );
    expect(screen.getByRole('button', { name: /Tool call · goal_update/ })).toBeVisible();
  });
});
