import { createToolCallHooks, registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { ConversationStore } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Conversation, registerConversationNodes } from './Conversation';
import { REVEALED_CLASS, type RevealTarget } from './reveal';

const TIME = '2026-12-02T05:00:00.000Z';

/** A session of one turn: a `run_code` call whose code made six `read` calls, all ended ok. */
function session(): ConversationStore {
  const events: Record<string, unknown>[] = [];
  const add = (event: Record<string, unknown>) =>
    events.push({ ...event, seq: events.length + 1, time: TIME });
  add({
    type: 'session.started',
    sessionId: 's1',
    agent: { name: 'qilin', description: 'd' },
    model: 'scripted:s',
    workspace: '/w',
    protocolVersion: 2,
  });
  add({ type: 'turn.started', turnId: 't1', prompt: 'Read them all' });
  add({ type: 'step.started', turnId: 't1', step: 1 });
  const start = (callId: string, toolName: string, args: unknown, parent?: string) =>
    add({
      type: 'tool.start',
      callId,
      toolName,
      caller: parent === undefined ? 'direct' : 'code',
      ...(parent === undefined ? {} : { parentCallId: parent }),
      arguments: args,
      presentation: { action: toolName, remark: '' },
    });
  const result = (callId: string, toolName: string, parent?: string) =>
    add({
      type: 'tool.result',
      callId,
      toolName,
      caller: parent === undefined ? 'direct' : 'code',
      ...(parent === undefined ? {} : { parentCallId: parent }),
      status: 'ok',
      content: [{ type: 'text', text: 'ok' }],
      durationMs: 1,
    });
  start('call_1', 'run_code', { code: 'for p in paths: sdk.tool.call("read", {"path": p})' });
  for (let index = 1; index <= 6; index += 1) {
    start(`call_1.${index}`, 'read', { path: `f${index}.txt` }, 'call_1');
    result(`call_1.${index}`, 'read', 'call_1');
  }
  result('call_1', 'run_code');
  add({
    type: 'step.finished',
    turnId: 't1',
    step: 1,
    stopReason: 'end_turn',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 },
  });
  add({ type: 'turn.finished', turnId: 't1', reason: 'completed' });
  const model = new ConversationStore();
  model.push(events);
  return model;
}

function renderAt(model: ConversationStore, reveal: RevealTarget | undefined) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  registerConversationNodes(registry);
  const shared = { tool: createToolCallHooks(model) };
  const ui = (target: RevealTarget | undefined) => (
    <I18nProvider locale="en">
      <SlotsProvider registry={registry} shared={shared}>
        <Conversation snapshot={model.getSnapshot()} reveal={target} />
      </SlotsProvider>
    </I18nProvider>
  );
  const result = render(ui(reveal));
  return { ...result, reveal: (target: RevealTarget) => result.rerender(ui(target)) };
}

const revealed = (container: HTMLElement) =>
  [...container.querySelectorAll(`.${REVEALED_CLASS}`)].map((element) =>
    element.getAttribute('data-chat-anchor-key'),
  );

describe('revealing a place of the transcript', () => {
  it('highlights the card of the call, and then of another call, one at a time', () => {
    const { container, reveal } = renderAt(session(), { anchor: 'call:call_1.2' });
    expect(revealed(container)).toEqual(['call:call_1.2']);
    reveal({ anchor: 'call:call_1' });
    expect(revealed(container)).toEqual(['call:call_1']);
  });

  it('a nested call folded behind "Show more calls" shows as the call that made it', () => {
    const { container } = renderAt(session(), { anchor: 'call:call_1.5' });
    expect(container.querySelector('[data-chat-anchor-key="call:call_1.5"]')).toBeNull();
    expect(revealed(container)).toEqual(['call:call_1']);
  });

  it('a turn, by its anchor; nothing for a place the transcript does not have', () => {
    const { container, reveal } = renderAt(session(), { anchor: 'turn:t1' });
    expect(revealed(container)).toEqual(['turn:t1']);
    reveal({ anchor: 'call:call_9' });
    // Nothing to show: the last place stays marked.
    expect(revealed(container)).toEqual(['turn:t1']);
  });
});
