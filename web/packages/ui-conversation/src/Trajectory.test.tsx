import { I18nProvider } from '@qilin-agent/i18n';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { fixtureText, runtimeTurns } from '../../../test-support/fixtures';
import { findCall, rawText } from './callPlace';
import { ConversationStore } from '@qilin-agent/protocol';
import { CallTrajectory } from './Trajectory';

function rawEvents(name: string): Record<string, unknown>[] {
  return fixtureText(`${name}.jsonl`)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A nested call that waits for an approval, each event a second after the one before. */
function nestedApproval(): Record<string, unknown>[] {
  const at = (second: number) => `2026-11-30T12:00:${String(second).padStart(2, '0')}.250Z`;
  const presentation = { action: 'Run command', remark: 'git push' };
  return [
    { type: 'turn.started', seq: 1, time: at(0), turnId: 't1', prompt: 'first' },
    { type: 'turn.finished', seq: 2, time: at(1), turnId: 't1', reason: 'completed' },
    { type: 'turn.started', seq: 3, time: at(2), turnId: 't2', prompt: 'publish the work' },
    { type: 'step.started', seq: 4, time: at(3), turnId: 't2', step: 1 },
    { type: 'step.started', seq: 5, time: at(4), turnId: 't2', step: 2 },
    {
      type: 'tool.preparing',
      seq: 6,
      time: at(5),
      callId: 'code_1',
      toolName: 'run_code',
      argumentsDelta: '{"code"',
    },
    {
      type: 'tool.start',
      seq: 7,
      time: at(6),
      callId: 'code_1',
      toolName: 'run_code',
      caller: 'direct',
      arguments: { code: 'sdk.tool.call("bash", {"command": "git push"})' },
      presentation: { action: 'Run code', remark: '' },
    },
    {
      type: 'tool.start',
      seq: 8,
      time: at(7),
      callId: 'bash_1',
      toolName: 'bash',
      caller: 'code',
      parentCallId: 'code_1',
      arguments: { command: 'git push' },
      presentation,
    },
    {
      type: 'request.opened',
      seq: 9,
      time: at(8),
      requestId: 'req-1',
      callId: 'bash_1',
      parentCallId: 'code_1',
      toolName: 'bash',
      ask: { kind: 'approval', reason: 'pushing publishes', presentation, arguments: {} },
    },
    {
      type: 'request.resolved',
      seq: 10,
      time: at(9),
      requestId: 'req-1',
      callId: 'bash_1',
      parentCallId: 'code_1',
      resolution: { outcome: 'approved' },
      resolvedBy: 'web-tab',
    },
    {
      type: 'tool.result',
      seq: 11,
      time: at(12),
      callId: 'bash_1',
      toolName: 'bash',
      caller: 'code',
      parentCallId: 'code_1',
      status: 'ok',
      content: [{ type: 'text', text: 'pushed to origin' }],
      output: { exit_code: 0 },
      durationMs: 5000,
    },
  ];
}

/** The panel over a model, opened from a button that had focus, as the app opens it. */
function Host(props: { model: ConversationStore; first: string; onClose?: () => void }) {
  const [callId, setCallId] = useState<string | undefined>();
  return (
    <>
      <button type="button" onClick={() => setCallId(props.first)}>
        Inspect
      </button>
      {callId === undefined ? null : (
        <CallTrajectory
          snapshot={props.model.getSnapshot()}
          callId={callId}
          inspect={setCallId}
          onClose={() => {
            props.onClose?.();
            setCallId(undefined);
          }}
        />
      )}
    </>
  );
}

describe('CallTrajectory', () => {
  it("shows a nested call's arguments, result, timing, position and requests", async () => {
    const model = new ConversationStore();
    model.push(nestedApproval());
    render(
      <I18nProvider>
        <Host model={model} first="bash_1" />
      </I18nProvider>,
    );
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Inspect' }));
    const panel = screen.getByRole('complementary', { name: /Trajectory of bash/ });
    expect(within(panel).getByRole('heading', { level: 2 })).toHaveFocus();
    expect(panel).toHaveTextContent('Done');
    const position = within(panel).getByRole('region', { name: 'Position' });
    expect(position).toHaveTextContent('turn 2 — publish the work');
    expect(position).toHaveTextContent(/Step\s*2/);
    expect(position).toHaveTextContent('call 1 of 1 made by run_code');
    expect(position).toHaveTextContent('called from code');
    const timing = within(panel).getByRole('region', { name: 'Timing' });
    expect(timing).toHaveTextContent(/:07\.250/);
    expect(timing).toHaveTextContent(/:12\.250/);
    // In the viewer's time zone, which the times name.
    const zone = new Intl.DateTimeFormat('en', { timeZoneName: 'short' })
      .formatToParts(new Date('2026-11-30T12:00:12.250Z'))
      .find((part) => part.type === 'timeZoneName')?.value;
    expect(timing.textContent).toContain(zone ?? 'a time zone name');
    expect(timing).toHaveTextContent('5 s');
    expect(within(panel).getByRole('region', { name: 'Arguments' })).toHaveTextContent(
      '"command": "git push"',
    );
    expect(within(panel).getByRole('region', { name: 'Result' })).toHaveTextContent(
      'pushed to origin',
    );
    const requests = within(panel).getByRole('region', { name: 'Requests' });
    expect(requests).toHaveTextContent('Approval · Allowed by web-tab');
    expect(requests).toHaveTextContent('pushing publishes');
    expect(requests).toHaveTextContent(/opened .*:08\.250.* resolved .*:09\.250/);
  });

  it('shows a call loaded from the snapshot as one folded from events: times, step, turn', async () => {
    // The tree of the nested approval's log from its second turn on, as the server sends it.
    const whole = new ConversationStore();
    whole.push(nestedApproval());
    const turns = runtimeTurns(whole.getSnapshot().tree.turns.slice(1));
    const model = new ConversationStore();
    model.seed({
      headSeq: 11,
      totalTurns: 2,
      firstTurn: 1,
      turns,
      compactions: [],
      preparingArguments: {},
      activeTurn: null,
    });
    render(
      <I18nProvider>
        <Host model={model} first="bash_1" />
      </I18nProvider>,
    );
    await userEvent.setup().click(screen.getByRole('button', { name: 'Inspect' }));
    const panel = screen.getByRole('complementary', { name: /Trajectory of bash/ });
    const position = within(panel).getByRole('region', { name: 'Position' });
    expect(position).toHaveTextContent('turn 2 — publish the work');
    const folded = findCall(whole.getSnapshot().tree, 'bash_1')?.node;
    expect(folded?.step).toEqual(expect.any(Number));
    expect(position).toHaveTextContent(new RegExp(`Step\\s*${String(folded?.step)}`));
    const timing = within(panel).getByRole('region', { name: 'Timing' });
    expect(timing).not.toHaveTextContent(/Started\s*—/);
    expect(timing).not.toHaveTextContent(/Ended\s*—/);
    expect(timing).toHaveTextContent('5 s');
    expect(within(panel).getByRole('region', { name: 'Requests' })).toHaveTextContent(
      'Approval · Allowed by web-tab',
    );
  });

  it('walks to the parent and its nested calls, closes on Escape and gives focus back', async () => {
    const model = new ConversationStore();
    model.push(rawEvents('code-mode'));
    const onClose = vi.fn();
    render(
      <I18nProvider>
        <Host model={model} first="call_2.2" onClose={onClose} />
      </I18nProvider>,
    );
    const user = userEvent.setup();
    const opener = screen.getByRole('button', { name: 'Inspect' });
    await user.click(opener);
    let panel = screen.getByRole('complementary', { name: /Trajectory of read_image/ });
    expect(panel).toHaveTextContent('call 2 of 4 made by run_code');
    // The image's bytes are named, not dumped.
    expect(within(panel).getByRole('region', { name: 'Result' })).toHaveTextContent(
      /An image \(image\/png, about \d+ KB\)/,
    );
    await user.click(within(panel).getByRole('button', { name: /run_code call_2/ }));
    panel = screen.getByRole('complementary', { name: /Trajectory of run_code/ });
    expect(panel).toHaveTextContent('call 1 of 1 in its step');
    expect(panel).toHaveTextContent(/Step\s*2/);
    const nested = within(panel).getByRole('region', { name: 'Calls made by its code (4)' });
    expect(within(nested).getAllByRole('button')).toHaveLength(4);
    // Every action is reachable from the keyboard.
    await user.tab();
    expect(within(panel).getByRole('button', { name: 'Close the trajectory' })).toHaveFocus();
    await user.click(within(nested).getByRole('button', { name: /^bash/ }));
    expect(screen.getByRole('complementary', { name: /Trajectory of bash/ })).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(screen.queryByRole('complementary')).toBeNull();
    expect(opener).toHaveFocus();
  });

  it('says when the call is not in the conversation, and speaks Simplified Chinese', async () => {
    const model = new ConversationStore();
    model.push(nestedApproval());
    render(
      <I18nProvider locale="zh-CN">
        <Host model={model} first="bash_1" />
        <CallTrajectory
          snapshot={model.getSnapshot()}
          callId="nowhere"
          inspect={() => {}}
          onClose={() => {}}
        />
      </I18nProvider>,
    );
    expect(screen.getByRole('alert')).toHaveTextContent('此对话中没有调用 nowhere。');
    await userEvent.setup().click(screen.getByRole('button', { name: 'Inspect' }));
    const panel = screen.getByRole('complementary', { name: /bash 的调用轨迹/ });
    expect(panel).toHaveTextContent('run_code 发起的第 1 个调用，共 1 个');
    expect(within(panel).getByRole('button', { name: '关闭轨迹' })).toBeInTheDocument();
  });

  it('finds a call anywhere and cuts a long raw value with a count', () => {
    const model = new ConversationStore();
    model.push(rawEvents('code-mode'));
    const place = findCall(model.getSnapshot().tree, 'call_5.3');
    expect(place?.node.toolName).toBe('todo_write');
    expect(place?.ancestors.map((node) => node.callId)).toEqual(['call_5']);
    expect(place?.index).toBe(3);
    expect(findCall(model.getSnapshot().tree, 'call_9')).toBeUndefined();
    expect(rawText('x'.repeat(50), 20)).toEqual({ text: 'x'.repeat(20), cut: 30 });
    expect(rawText({ a: 1 })).toEqual({ text: '{\n  "a": 1\n}', cut: 0 });
  });
});
