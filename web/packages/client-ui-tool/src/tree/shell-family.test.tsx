// The shell family's cards rendered through the tree from recorded sessions: `bash` in a
// persistent shell, background receipts, interrupt receipts, job output and the terminals.
import { within } from '@testing-library/react';
import { describe, expect, test } from 'vitest';
import { announcedState, renderCall } from '../../../../test-support/tree';

describe('terminal_send', () => {
  test('at the root: the terminal card, what was typed and the output', () => {
    const { row, expand } = renderCall('terminals', 'call_7');
    expect(row).toHaveTextContent('Terminal input · hello ⏎term-1');
    const card = expand();
    expect(within(card).getByLabelText('Typed')).toHaveTextContent('hello ⏎');
    expect(within(card).getByRole('group', { name: /Output of/ })).toHaveTextContent('hello');
    expect(card).not.toHaveTextContent('Tool call');
  });

  test('nested under run_code: the same terminal card', () => {
    const { row, expand } = renderCall('terminals', 'call_8.1');
    expect(row).toHaveTextContent('Terminal input · nested ⏎term-1');
    expect(within(expand()).getByRole('group', { name: /Output of/ })).toHaveTextContent('nested');
  });

  test('while it waits: the terminal card, in flight', () => {
    const { row } = renderCall('terminals', 'call_7', { moment: 'running' });
    expect(row).toHaveClass('qp-row--running');
    expect(row).toHaveTextContent('Terminal input · hello ⏎');
  });

  test('a failed call keeps its arguments and the error, not a terminal', () => {
    const card = renderCall('terminals', 'call_9').expand();
    expect(within(card).getByText('Input')).toBeInTheDocument();
    expect(card).toHaveTextContent('term-9');
    expect(within(card).queryByRole('group', { name: /Output of/ })).toBeNull();
  });

  test('a spilled output shows as the plain text the model saw', () => {
    const { row, expand } = renderCall('terminals', 'call_18');
    expect(row).toHaveTextContent('Terminal input · seq 1 30000 ⏎term-4');
    const card = expand();
    expect(card).toHaveTextContent('[qilin: output cut; all ');
    expect(within(card).queryByRole('group', { name: /Output of/ })).toBeNull();
  });
});

describe('terminal_start', () => {
  test('a spilled output shows as the plain text the model saw', () => {
    const card = renderCall('terminals', 'call_10').expand();
    expect(card).toHaveTextContent('[qilin: output cut; all ');
    expect(within(card).queryByRole('group', { name: /Output of/ })).toBeNull();
  });

  test('a program that ended badly: its output, and the capsule after the row’s text', () => {
    const { row, expand } = renderCall('terminals', 'call_16');
    expect(row.querySelector('.qp-capsule')).toHaveTextContent('exit 3');
    const output = within(expand()).getByRole('group', { name: /Output of/ });
    expect(output).toHaveTextContent('bye');
  });

  test('a call refused before it started keeps its arguments and the error', () => {
    const { row, expand } = renderCall('terminals', 'call_19');
    expect(row).toHaveTextContent('Terminal · cat');
    expect(announcedState(row)).toBe('Failed');
    const card = expand();
    expect(within(card).getByText('Input')).toBeInTheDocument();
    expect(card).toHaveTextContent('timeout_secs');
    expect(within(card).queryByRole('group', { name: /Output of/ })).toBeNull();
  });
});

describe('bash in a persistent shell', () => {
  test('while it runs: the terminal card, naming the shell', () => {
    const { row, card } = renderCall('terminals', 'call_1', { moment: 'running' });
    expect(row).toHaveClass('qp-row--running');
    expect(row).toHaveTextContent(
      'Shell · cd src && export GREETING=hellopersistent shell default',
    );
    expect(card).not.toHaveTextContent('Tool call');
  });

  test.each([
    ['call_2', 'a command that exited 0'],
    ['call_3', 'a command cut by its timeout (partial output)'],
    ['call_4', 'a spilled output'],
    ['call_5', 'a reset shell'],
  ])('once ended (%s, %s): generic, expandable at the root, never an exit capsule', (callId) => {
    const { row, toggle, expand } = renderCall('terminals', callId);
    expect(row).toHaveTextContent('Tool call · bash');
    expect(toggle).not.toBeNull();
    expect(row.querySelector('.qp-capsule')).toBeNull();
    const card = expand();
    expect(within(card).getByText('Output')).toBeInTheDocument();
  });
});

describe('receipts', () => {
  test('a background start: command and folder, no output and no execution state', () => {
    const { row, expand } = renderCall('shell', 'call_8');
    expect(announcedState(row)).toBeNull();
    expect(row).not.toHaveTextContent('Done');
    const card = expand();
    const receipt = within(card).getByLabelText('Started in the background');
    expect(receipt).toHaveTextContent('for i in 1 2 3; do echo tick $i; sleep 0.1; done');
    expect(receipt).toHaveTextContent('.');
    expect(card).not.toHaveTextContent('tick 1');
    expect(within(card).queryByRole('group', { name: /Output of/ })).toBeNull();
  });

  test.each([
    ['shell', 'call_11', 'Stop job · job-2', 'job-2'],
    ['terminals', 'call_14', 'Stop terminal · term-1', 'term-1'],
  ])('an interrupt (%s %s) only confirms the request', (fixture, callId, rowText, target) => {
    const { row, expand } = renderCall(fixture, callId);
    expect(row).toHaveTextContent(rowText);
    expect(announcedState(row)).toBeNull();
    const card = expand();
    expect(card).toHaveTextContent(`An interrupt was requested for ${target}.`);
    // How the program ended stays in the recorded result.
    expect(card).not.toHaveTextContent(/SIG|exit|killed/);
  });

  test('a background start refused keeps the generic arguments and error, not a receipt', () => {
    const { row, expand } = renderCall('shell', 'call_20');
    expect(row).toHaveTextContent('Tool call · bash');
    expect(announcedState(row)).toBe('Failed');
    const card = expand();
    expect(within(card).getByText('Input')).toBeInTheDocument();
    expect(within(card).queryByLabelText('Started in the background')).toBeNull();
  });

  test('an interrupt of an unknown job is the generic failure', () => {
    const { row } = renderCall('shell', 'call_19');
    expect(row).toHaveTextContent('Tool call · job_kill');
    expect(announcedState(row)).toBe('Failed');
  });

  test('an interrupt of an unknown terminal is the generic failure', () => {
    const { row } = renderCall('terminals', 'call_15');
    expect(row).toHaveTextContent('Tool call · terminal_kill');
    expect(announcedState(row)).toBe('Failed');
  });

  test('in Chinese too, with no state announced', () => {
    const { row, expand } = renderCall('shell', 'call_11', { locale: 'zh-CN' });
    expect(row).toHaveTextContent('停止任务 · job-2');
    expect(announcedState(row)).toBeNull();
    expect(expand()).toHaveTextContent('已请求中断 job-2。');
  });
});

describe('job_output', () => {
  test('the output is the job’s own, with where the job stands', () => {
    const { row, expand } = renderCall('shell', 'call_9');
    expect(row).toHaveTextContent('Job output · job-1exited with code 0');
    const card = expand();
    const output = within(card).getByRole('group', { name: 'Output of job-1' });
    expect(output).toHaveTextContent('tick 1');
    expect(output).toHaveTextContent('tick 3');
    expect(card).toHaveTextContent('for i in 1 2 3; do echo tick $i; sleep 0.1; done');
  });

  test('the title stays neutral: no state of the call’s own, and the job’s state said once', () => {
    const { row, expand } = renderCall('shell', 'call_9');
    // A "Done" dot beside the job's state would read as the job's.
    expect(announcedState(row)).toBeNull();
    expect(row.querySelector('.qp-row__suffix')).toHaveTextContent('exited with code 0');
    const card = expand();
    // Expanded, the title leaves the state out; the details say it, with its static colour.
    expect(row.querySelector('.qp-row__suffix')).toBeNull();
    const state = card.querySelector('.qt-job-state') as HTMLElement;
    expect(state).toHaveTextContent('exited with code 0');
    expect(state.querySelector('.qp-dot')).toHaveClass('qp-dot--ok');
    expect(card.textContent?.match(/exited with code 0/g)).toHaveLength(1);
  });

  test('a job still running: said on the row, then in the details with its running dot', () => {
    const { row, expand } = renderCall('shell', 'call_17');
    expect(row).toHaveTextContent('Job output · job-4still running');
    expect(row.querySelector('.qp-capsule')).toBeNull();
    const card = expand();
    const state = card.querySelector('.qt-job-state') as HTMLElement;
    expect(state).toHaveTextContent('still running');
    expect(state.querySelector('.qp-dot')).toHaveClass('qp-dot--running');
  });

  test('a job that ended badly: the capsule while collapsed, the error dot once opened', () => {
    const { row, expand } = renderCall('shell', 'call_16');
    expect(row).toHaveTextContent('exited with code 4');
    expect(row.querySelector('.qp-capsule')).toHaveTextContent('exit 4');
    const card = expand();
    expect(row.querySelector('.qp-capsule')).toBeNull();
    const state = card.querySelector('.qt-job-state') as HTMLElement;
    expect(state).toHaveTextContent('exited with code 4');
    expect(state.querySelector('.qp-dot')).toHaveClass('qp-dot--error');
    expect(within(card).getByRole('group', { name: 'Output of job-3' })).toHaveTextContent('oops');
  });

  test('the start card is not given the job’s output', () => {
    renderCall('shell', 'call_8').expand();
    const start = document.querySelector('[data-chat-call-id="call_8"]') as HTMLElement;
    expect(start).not.toHaveTextContent('tick 1');
  });

  test('a spilled output is the plain text the model saw', () => {
    const spilled = renderCall('terminals', 'call_12').expand();
    expect(spilled).toHaveTextContent('[qilin: output cut; all ');
    expect(within(spilled).queryByRole('group', { name: /Output of/ })).toBeNull();
  });

  test('an unknown job is the generic failure', () => {
    const { row } = renderCall('shell', 'call_12');
    expect(row).toHaveTextContent('Tool call · job_output');
  });
});

describe('terminal_list', () => {
  test('a small table of terminals and one of persistent shells', () => {
    const card = renderCall('terminals', 'call_13').expand();
    const [terminals, shells] = within(card).getAllByRole('table');
    const terminalRows = within(terminals as HTMLElement).getAllByRole('row');
    expect(terminalRows.map((row) => row.textContent)).toEqual([
      'IdCommandState',
      'term-1catstill running',
      'term-2seq 1 30000; catstill running',
    ]);
    const shellRows = within(shells as HTMLElement).getAllByRole('row');
    expect(shellRows).toHaveLength(2);
    expect(shellRows[1]).toHaveTextContent('bash · default');
    expect(shellRows[1]).toHaveTextContent('echo fresh; pwd');
  });
});
