// Auto review in the transcript: a refused call's "Allow this call" reaches the host, the grant
// that comes back in the log makes it "Allowed", a retry that used the grant is marked, and a
// turn the circuit breaker paused says so.
import { createToolCallHooks, registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { ConversationStore, type AutoReviewRecord } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ReactElement } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { Conversation, registerConversationNodes } from './Conversation';

const time = '2026-11-30T17:05:16.123Z';

const DENIED: AutoReviewRecord = {
  reviewer: 'scripted:reviewer.yaml',
  verdict: 'deny',
  risk: 'high',
  userReason: 'pushing publishes the work',
  latencyMs: 2,
  inputTokens: 90,
  outputTokens: 20,
};

/** A turn whose push is refused by the reviewer. */
function refusedTurn(): Record<string, unknown>[] {
  const at = { time, turnId: 't1' };
  return [
    { ...at, seq: 1, type: 'turn.started', prompt: 'Publish.' },
    { ...at, seq: 2, type: 'step.started', step: 1 },
    {
      seq: 3,
      time,
      type: 'tool.start',
      callId: 'call_1',
      toolName: 'bash',
      caller: 'direct',
      arguments: { command: 'git push' },
      presentation: { action: 'Run command', remark: 'git push' },
    },
    { seq: 4, time, type: 'tool.reviewed', callId: 'call_1', review: DENIED },
    {
      seq: 5,
      time,
      type: 'tool.result',
      callId: 'call_1',
      toolName: 'bash',
      caller: 'direct',
      status: 'denied',
      errorCode: 'AUTO_REVIEW_DENIED',
      content: [{ type: 'text', text: 'Pushing is not allowed here. Do not retry.' }],
      userReason: DENIED.userReason,
      durationMs: 0,
    },
  ];
}

function renderStore(store: ConversationStore, allowCall?: (callId: string) => Promise<void>) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  registerConversationNodes(registry);
  const shared = { tool: createToolCallHooks(store) };
  const ui = (): ReactElement => (
    <I18nProvider locale="en">
      <SlotsProvider registry={registry} shared={shared}>
        <Conversation
          snapshot={store.getSnapshot()}
          {...(allowCall === undefined ? {} : { allowCall })}
        />
      </SlotsProvider>
    </I18nProvider>
  );
  const result = render(ui());
  return { ...result, update: () => result.rerender(ui()) };
}

describe('auto review in the transcript', () => {
  it('allows a refused call through the host; the grant and the retry show', async () => {
    const user = userEvent.setup();
    const store = new ConversationStore(refusedTurn());
    const allowCall = vi.fn(async () => {});
    const view = renderStore(store, allowCall);
    const card = view.container.querySelector<HTMLElement>('[data-chat-call-id="call_1"]');
    if (card === null) throw new Error('no card for call_1');
    await user.click(within(card).getByRole('button', { name: 'Allow this call' }));
    expect(allowCall).toHaveBeenCalledWith('call_1');
    // The grant and the retry come back in the log, as from any other client.
    const grant = {
      id: 'grant-1',
      callId: 'call_1',
      toolName: 'bash',
      arguments: { command: 'git push' },
      grantedAt: time,
    };
    act(() => {
      store.push([
        { seq: 6, time, turnId: 't1', type: 'turn.finished', reason: 'completed' },
        { seq: 7, time, type: 'review.granted', grant },
        { seq: 8, time, turnId: 't2', type: 'turn.started', prompt: 'You may push now.' },
        { seq: 9, time, turnId: 't2', type: 'step.started', step: 1 },
        {
          seq: 10,
          time,
          type: 'tool.start',
          callId: 'call_2',
          toolName: 'bash',
          caller: 'direct',
          arguments: { command: 'git push' },
          presentation: { action: 'Run command', remark: 'git push' },
        },
        { seq: 11, time, type: 'review.granted', grant: { ...grant, usedBy: 'call_2' } },
      ]);
    });
    view.update();
    expect(within(card).getByRole('button', { name: 'Allowed' })).toHaveAttribute(
      'aria-disabled',
      'true',
    );
    const retry = view.container.querySelector<HTMLElement>('[data-chat-call-id="call_2"]');
    expect(
      within(retry as HTMLElement).getByRole('img', {
        name: 'Run because you allowed it after review refused it',
      }),
    ).toBeVisible();
  });

  it('a turn the circuit breaker paused shows the notice, with the runtime message once', () => {
    const message = 'Auto review refused 3 calls in a row, so the turn was paused.';
    const store = new ConversationStore([
      ...refusedTurn(),
      {
        seq: 6,
        time,
        type: 'review.circuit_open',
        turnId: 't1',
        denialsInARow: 3,
        denialsInWindow: 4,
        message,
      },
      { seq: 7, time, turnId: 't1', type: 'turn.finished', reason: 'interrupted', message },
    ]);
    const view = renderStore(store);
    const turn = view.container.querySelector<HTMLElement>('[data-turn-id="t1"]');
    const notice = within(turn as HTMLElement).getByRole('note');
    expect(notice).toHaveTextContent('Auto review paused this turn');
    expect(notice).toHaveTextContent(message);
    expect(notice).toHaveTextContent('3 denials in a row, 4 in the last 50 reviews');
    expect(screen.getAllByText(message)).toHaveLength(1);
    expect(turn).toHaveTextContent('Turn interrupted');
  });

  it('a turn without a pause has no notice', () => {
    const view = renderStore(new ConversationStore(refusedTurn()));
    expect(view.container.querySelector('[data-review-pause]')).toBeNull();
  });
});
