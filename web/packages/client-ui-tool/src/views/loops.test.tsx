// The loop cards as a reader sees them: rendered through the tree, live from a loop book.
import { act, fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test } from 'vitest';
import { madeCall } from '../../../../test-support/calls';
import { runningIteration, wireIteration, wireLoop } from '../../../../test-support/loops';
import { renderWithI18n } from '../../../../test-support/render';
import { LoopBook } from '../models/loops';
import { formatTime } from '../models/sessionLink';
import { registerBuiltinToolViews } from '../register';
import type { ToolCallShared } from '../slots';
import { createLoopHook } from '../tree/hooks';
import { ToolCallTree } from '../tree/ToolCallTree';

const START_ARGS = {
  prompt: 'Make the upload retry only on 5xx and timeouts; keep the tests green.',
  until: { checks: ['test'] },
  max_iterations: 5,
};

/** Renders a call's card with the loop book as the host's feed. */
function show(node: ToolNode, book?: LoopBook, locale: Locale = 'en') {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const tool: ToolCallShared = {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: () => undefined,
    ...(book === undefined ? {} : { useLoop: createLoopHook(book) }),
  };
  return renderWithI18n(
    <SlotsProvider registry={registry} shared={{ tool }}>
      <ToolCallTree node={node} />
    </SlotsProvider>,
    locale,
  );
}

/** The one element `selector` finds in `root`; fails the test when there is none. */
function one<E extends Element = HTMLElement>(root: ParentNode, selector: string): E {
  const found = root.querySelector<E>(selector);
  if (found === null) throw new Error(`nothing matches ${selector}`);
  return found;
}

function iterations(container: HTMLElement): string[][] {
  return [...container.querySelectorAll<HTMLElement>('.qt-loop-iteration')].map((row) => [
    row.dataset.iteration ?? '',
    row.dataset.status ?? '',
  ]);
}

describe('the loop_start card', () => {
  test('follows its loop live, iteration by iteration, to the stop reason', () => {
    const book = new LoopBook();
    const node = madeCall('call_l1', 'loop_start', START_ARGS, { output: { loop: wireLoop() } });
    const { container } = show(node, book);
    expect(screen.getByText('The first iteration is starting.')).toBeTruthy();
    expect(container.querySelector('.qt-card')?.getAttribute('data-state')).toBe('running');
    act(() => {
      book.onEvents([{ type: 'loop.iteration', loopId: 'loop_1', iteration: runningIteration(1) }]);
    });
    expect(iterations(container)).toEqual([['1', 'running']]);
    expect(screen.getByText('iteration 1 of 5')).toBeTruthy();
    act(() => {
      book.onEvents([
        { type: 'loop.iteration', loopId: 'loop_1', iteration: wireIteration(1) },
        { type: 'loop.iteration', loopId: 'loop_1', iteration: runningIteration(2) },
      ]);
    });
    expect(iterations(container)).toEqual([
      ['1', 'finished'],
      ['2', 'running'],
    ]);
    expect(screen.getByText('check test failed (1 error); going on')).toBeTruthy();
    act(() => {
      book.onEvents([
        {
          type: 'loop.finished',
          loop: wireLoop({
            status: 'finished',
            stopReason: 'checks_passed',
            endedAt: '2026-03-03T09:02:50Z',
            iterations: [
              wireIteration(1),
              wireIteration(2, {
                checks: [{ id: 'test', conclusion: 'success', summary: '12 passed' }],
                outcome: 'checks passed',
              }),
            ],
          }),
        },
      ]);
    });
    expect(iterations(container)).toEqual([
      ['1', 'finished'],
      ['2', 'finished'],
    ]);
    expect(screen.getByText('The checks passed after 2 iterations.')).toBeTruthy();
    expect(container.querySelector('.qt-card')?.getAttribute('data-state')).toBe('ok');
  });

  test('an iteration row: files with +/−, each check, tokens and cost, its session link', () => {
    const node = madeCall('call_l2', 'loop_start', START_ARGS, {
      output: { loop: wireLoop({ iterations: [wireIteration(1)] }) },
    });
    const { container } = show(node);
    const row = one<HTMLElement>(container, '.qt-loop-iteration');
    expect(within(row).getByText('Iteration 1')).toBeTruthy();
    const summary = one<HTMLElement>(row, 'summary');
    expect(summary.textContent).toBe('2 files +42 −3');
    fireEvent.click(within(row).getByText('2 files'));
    const files = within(row).getByRole('list', { name: 'Files iteration 1 changed' });
    expect(within(files).getByText('tests/retry.rs')).toBeTruthy();
    expect(within(files).getByText('added')).toBeTruthy();
    const checks = within(row).getByLabelText('Checks after iteration 1');
    expect(checks.textContent).toContain('test');
    expect(checks.textContent).toContain('failed');
    expect(row.textContent).toContain('12K in · 1.5K out · $0.04 · 40 sec');
    const link = within(row).getByRole('link', { name: 'Open the session of iteration 1' });
    expect(link.getAttribute('href')).toBe('/sessions/ses_iter_1');
    expect(row.querySelector('time')?.textContent).toBe(formatTime('2026-03-03T09:01:00Z', 'en'));
  });

  test('expanded: the prompt, the stop condition, the budget', () => {
    const node = madeCall('call_l3', 'loop_start', START_ARGS, {
      output: {
        loop: wireLoop({
          until: { checks: ['test'], promise: 'DONE' },
          budget: { tokens: 200_000, durationSecs: 1800 },
        }),
      },
    });
    const { container } = show(node);
    fireEvent.click(one<HTMLButtonElement>(container, 'button.qp-row__main'));
    const details = one<HTMLElement>(container, '.qt-card__details');
    expect(within(details).getByText(START_ARGS.prompt)).toBeTruthy();
    expect(within(details).getByText('DONE')).toBeTruthy();
    expect(details.textContent).toContain('200K tokens');
    expect(details.textContent).toContain('30 min');
    expect(details.textContent).toContain('a fresh session each iteration');
  });

  test('a loop without fresh context: the same session, compacted, linked from every row', () => {
    const iterationsOf = [1, 2].map((number) => wireIteration(number, { sessionId: 'ses_loop' }));
    const node = madeCall('call_l6', 'loop_start', START_ARGS, {
      output: { loop: wireLoop({ freshContext: false, iterations: iterationsOf }) },
    });
    const { container } = show(node);
    const links = [1, 2].map((number) =>
      screen.getByRole('link', { name: `Open the session of iteration ${number}` }),
    );
    expect(links.map((link) => link.getAttribute('href'))).toEqual([
      '/sessions/ses_loop',
      '/sessions/ses_loop',
    ]);
    fireEvent.click(one<HTMLButtonElement>(container, 'button.qp-row__main'));
    const details = one<HTMLElement>(container, '.qt-card__details');
    expect(details.textContent).toContain('the same session, compacted');
  });

  test('in Chinese, a loop stopped by the iteration limit', () => {
    const node = madeCall('call_l4', 'loop_start', START_ARGS, {
      output: {
        loop: wireLoop({
          status: 'finished',
          stopReason: 'max_iterations',
          maxIterations: 2,
          iterations: [wireIteration(1), wireIteration(2)],
        }),
      },
    });
    show(node, undefined, 'zh-CN');
    expect(screen.getByText('已在 2 次迭代的上限处停止。')).toBeTruthy();
    expect(screen.getAllByText('达到迭代上限').length).toBeGreaterThan(0);
  });

  test('data of another shape is the generic card, Inspect kept', () => {
    const node = madeCall('call_l5', 'loop_start', START_ARGS, { output: { loop: 'nope' } });
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    renderWithI18n(
      <SlotsProvider registry={registry}>
        <ToolCallTree node={node} inspect={() => undefined} />
      </SlotsProvider>,
    );
    expect(screen.getByText('Tool call · loop_start')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Inspect the call call_l5' })).toBeTruthy();
  });
});

describe('loop_status and loop_stop', () => {
  test('loop_stop shows the loop as the call left it: stopped mid-iteration', () => {
    const node = madeCall(
      'call_l6',
      'loop_stop',
      { id: 'loop_1' },
      {
        output: {
          loop: wireLoop({
            status: 'finished',
            stopReason: 'stopped',
            iterations: [
              wireIteration(1),
              { ...runningIteration(2), status: 'interrupted', endedAt: '2026-03-03T09:02:10Z' },
            ],
          }),
        },
      },
    );
    const { container } = show(node);
    fireEvent.click(one<HTMLButtonElement>(container, 'button.qp-row__main'));
    expect(iterations(container)).toEqual([
      ['1', 'finished'],
      ['2', 'interrupted'],
    ]);
    expect(screen.getByText('Stopped by a person during iteration 2.')).toBeTruthy();
  });

  test('loop_status with no loops says so', () => {
    const node = madeCall('call_l7', 'loop_status', {}, { output: { loops: [] } });
    const { container } = show(node);
    fireEvent.click(one<HTMLButtonElement>(container, 'button.qp-row__main'));
    expect(screen.getByText('No loops in this session.')).toBeTruthy();
  });
});
