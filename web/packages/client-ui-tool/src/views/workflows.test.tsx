// The workflow cards: their models, and the cards as a reader sees them through the tree.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test } from 'vitest';
import { inputAt, madeCall } from '../../../../test-support/calls';
import { renderWithI18n } from '../../../../test-support/render';
import { callStep, reportStep, wireRun } from '../../../../test-support/workflows';
import { formatTime } from '../models/sessionLink';
import {
  workflowRow,
  workflowRunModel,
  workflowStatusModel,
  workflowStopModel,
} from '../models/workflows';
import { registerBuiltinToolViews } from '../register';
import type { ToolCallShared } from '../slots';
import { ToolCallTree } from '../tree/ToolCallTree';

const RUN_ARGS = { workflow: 'review', args: { base: 'main' } };

/** Renders a call's card, opened; the host renders Markdown as `<div data-markdown>`. */
function open(node: ToolNode, locale: Locale = 'en') {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const tool: ToolCallShared = {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: () => undefined,
    markdown: ({ text }) => <div data-markdown="">{text}</div>,
  };
  const rendered = renderWithI18n(
    <SlotsProvider registry={registry} shared={{ tool }}>
      <ToolCallTree node={node} inspect={() => undefined} />
    </SlotsProvider>,
    locale,
  );
  const row = rendered.container.querySelector<HTMLButtonElement>('button.qp-row__main');
  if (row !== null) fireEvent.click(row);
  return rendered;
}

describe('the workflow models', () => {
  test('steps in order, one per index, an ended call step kept over a late running one', () => {
    const run = workflowRow(
      wireRun({
        steps: [
          callStep(1),
          callStep(0, { status: 'error' }),
          callStep(1, { status: 'running' }),
          reportStep(2, 'Notes', 'text'),
        ],
      }),
    );
    expect(
      run.steps.map((step) => [step.index, step.kind === 'call' ? step.status : 'report']),
    ).toEqual([
      [0, 'error'],
      [1, 'ok'],
      [2, 'report'],
    ]);
  });

  test('a call step without its tool, or an unknown status, is not a run', () => {
    expect(() => workflowRow(wireRun({ steps: [callStep(0, { tool: undefined })] }))).toThrow(
      /tool is missing/,
    );
    expect(() => workflowRow(wireRun({ status: 'paused' }))).toThrow(/status/);
    expect(() => workflowRow(wireRun({ status: 'running' }))).toThrow(/no end/);
  });

  test('workflow_run reads the run of the workflow asked for; another one is generic', () => {
    const done = workflowRunModel(
      inputAt(madeCall('c1', 'workflow_run', RUN_ARGS, { output: { run: wireRun() } })),
    );
    expect(done.kind === 'workflowRun' && done.run?.steps.length).toBe(4);
    const other = workflowRunModel(
      inputAt(
        madeCall('c1', 'workflow_run', RUN_ARGS, {
          output: { run: wireRun({ workflow: 'deploy' }) },
        }),
      ),
    );
    expect(other.kind).toBe('generic');
    const running = workflowRunModel(inputAt(madeCall('c1', 'workflow_run', RUN_ARGS), 'start'));
    expect(running).toMatchObject({ kind: 'workflowRun', state: 'running', workflow: 'review' });
  });

  test('workflow_status and workflow_stop read their runs', () => {
    const status = workflowStatusModel(
      inputAt(madeCall('c2', 'workflow_status', {}, { output: { runs: [wireRun()] } })),
    );
    expect(status.kind === 'workflowStatus' && status.runs?.length).toBe(1);
    const stop = workflowStopModel(
      inputAt(
        madeCall(
          'c3',
          'workflow_stop',
          { id: 'wf_1' },
          { output: { run: wireRun({ status: 'stopped' }) } },
        ),
      ),
    );
    expect(stop.kind === 'workflowStop' && stop.run?.status).toBe('stopped');
    const wrong = workflowStopModel(
      inputAt(madeCall('c3', 'workflow_stop', { id: 'wf_9' }, { output: { run: wireRun() } })),
    );
    expect(wrong.kind).toBe('generic');
  });
});

describe('the workflow_run card', () => {
  test('name, description, status and duration; steps in order; the report as Markdown', () => {
    const { container } = open(
      madeCall('call_wf', 'workflow_run', RUN_ARGS, { output: { run: wireRun() } }),
    );
    expect(screen.getByText('review — Review a change in three parts, then sum up')).toBeTruthy();
    expect(container.textContent).toContain('completed · 2 min 5 sec · 4 steps');
    const steps = screen.getByRole('list', { name: 'Steps of review' });
    const items = within(steps).getAllByRole('listitem');
    expect(items.map((item) => item.dataset.kind)).toEqual(['call', 'call', 'call', 'report']);
    expect(within(items[0] as HTMLElement).getByText('agent')).toBeTruthy();
    expect(within(items[0] as HTMLElement).getByText('Review part 0')).toBeTruthy();
    expect(within(items[0] as HTMLElement).getByText('done')).toBeTruthy();
    const report = within(items[3] as HTMLElement);
    expect(report.getByRole('heading', { name: 'Summary' })).toBeTruthy();
    expect(container.querySelector('[data-markdown]')?.textContent).toBe(
      'All three parts **pass**; one nit in `upload.rs`.',
    );
    expect(screen.getAllByText(formatTime('2026-03-04T10:00:00Z', 'en')).length).toBe(1);
    expect(container.textContent).toContain('"verdict": "approve"');
  });

  test('the nested calls render under the card, as under run_code', () => {
    const node: ToolNode = {
      ...madeCall('call_wf', 'workflow_run', RUN_ARGS, { output: { run: wireRun() } }),
      subCalls: [0, 1, 2].map((index) => ({
        ...madeCall(`call_w${index}`, 'agent', {
          agent: 'general',
          description: `Review part ${index}`,
          prompt: 'Review it',
        }),
        caller: 'code' as const,
        parentCallId: 'call_wf',
      })),
    };
    const { container } = open(node);
    const nested = screen.getByRole('list', { name: 'Calls made by workflow_run' });
    expect(nested.querySelectorAll('[data-chat-call-id]').length).toBe(3);
    expect(container.querySelector('[data-chat-call-id="call_w1"]')).toBeTruthy();
  });

  test('a replayed step is marked quietly; a failed run shows its error and a capsule', () => {
    const { container } = open(
      madeCall('call_wf', 'workflow_run', RUN_ARGS, {
        output: {
          run: wireRun({
            status: 'failed',
            error: 'agent `Review part 1` failed: out of budget',
            result: undefined,
            steps: [callStep(0, { replayed: true }), callStep(1, { status: 'error' })],
          }),
        },
      }),
    );
    const replayed = screen.getByText('replayed');
    expect(replayed.getAttribute('title')).toContain('journal');
    expect(screen.getByText('agent `Review part 1` failed: out of budget')).toBeTruthy();
    expect(container.querySelector('.qp-capsule')?.textContent).toContain('failed');
  });

  test('an unknown workflow (a failed call) keeps its plain input and error', () => {
    open(
      madeCall(
        'call_wf',
        'workflow_run',
        { workflow: 'nope' },
        {
          status: 'error',
          text: 'no workflow `nope` in .qilin/workflows',
        },
      ),
    );
    expect(screen.getByText('no workflow `nope` in .qilin/workflows')).toBeTruthy();
  });

  test('data of another shape is the generic card, Inspect kept', () => {
    open(madeCall('call_wf', 'workflow_run', RUN_ARGS, { output: { run: { runId: 3 } } }));
    expect(screen.getByText('Tool call · workflow_run')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Inspect the call call_wf' })).toBeTruthy();
  });

  test('in Chinese', () => {
    open(
      madeCall('call_wf', 'workflow_run', RUN_ARGS, {
        output: { run: wireRun({ status: 'stopped' }) },
      }),
      'zh-CN',
    );
    expect(screen.getByRole('list', { name: 'review 的步骤' })).toBeTruthy();
    expect(screen.getAllByText('已停止').length).toBeGreaterThan(0);
  });
});

describe('workflow_status', () => {
  test('lists the runs as the call read them, or that there are none', () => {
    open(madeCall('call_ws', 'workflow_status', {}, { output: { runs: [] } }));
    expect(screen.getByText('No workflow runs in this session.')).toBeTruthy();
  });
});
