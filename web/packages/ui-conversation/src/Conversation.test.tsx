import { registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ReactElement } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { fixtureText } from '../../../test-support/fixtures';
import { Conversation, registerConversationNodes } from './Conversation';
import { conversationHooks } from './hooks';
import { ConversationLocale } from './messages';
import { ConversationModel } from './model';
import type { AnswerRequest } from './Request';

function rawEvents(name: string): Record<string, unknown>[] {
  return fixtureText(`${name}.jsonl`)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function renderModel(
  model: ConversationModel,
  answer?: AnswerRequest,
  locale: 'en' | 'zh-CN' = 'en',
) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews(registry);
  registerConversationNodes(registry);
  const shared = { tool: conversationHooks(model) };
  const ui = (): ReactElement => (
    <I18nProvider locale={locale}>
      <ConversationLocale.Provider value={locale}>
        <SlotsProvider registry={registry} shared={shared}>
          <Conversation
            snapshot={model.getSnapshot()}
            cwd="/home/qilin/workspace"
            {...(answer === undefined ? {} : { answer })}
          />
        </SlotsProvider>
      </ConversationLocale.Provider>
    </I18nProvider>
  );
  const result = render(ui());
  return { ...result, update: () => result.rerender(ui()) };
}

describe('Conversation', () => {
  it('renders prompts, text, every root call and how each turn ended', () => {
    const model = new ConversationModel();
    model.push(rawEvents('review'));
    const { container } = renderModel(model);
    const turns = container.querySelectorAll('[data-turn-id]');
    expect(turns.length).toBe(model.getSnapshot().tree.turns.length);
    expect(screen.getByText('Clean up and publish.')).toBeInTheDocument();
    for (const turn of model.getSnapshot().tree.turns) {
      for (const item of turn.items) {
        if (item.type !== 'tool') continue;
        expect(
          container.querySelector(`[data-chat-anchor-key="call:${item.node.callId}"]`),
        ).not.toBeNull();
      }
    }
    expect(container.querySelectorAll('[data-turn-state="completed"]').length).toBeGreaterThan(0);
    expect(screen.getAllByText(/Turn completed/).length).toBeGreaterThan(0);
    expect(screen.getAllByText(/cached tokens/).length).toBeGreaterThan(0);
    // The recorded answers show in place: no controls for a request already answered.
    expect(
      container.querySelector('[data-request-id="req-1"]')?.getAttribute('data-request-state'),
    ).toBe('approved');
    expect(screen.queryByRole('button', { name: 'Allow once' })).toBeNull();
  });

  it('renders Markdown and never raw HTML', () => {
    const model = new ConversationModel();
    model.push([
      {
        type: 'turn.started',
        seq: 1,
        time: '2026-11-30T12:00:00.000Z',
        turnId: 't1',
        prompt: 'hi',
      },
      {
        type: 'step.text.delta',
        seq: 2,
        time: '2026-11-30T12:00:00.000Z',
        turnId: 't1',
        step: 1,
        text: '**bold** and `code`\n\n<img src=x onerror="alert(1)"><script>alert(2)</script>\n\n[x](javascript:alert(3))',
      },
    ]);
    const { container } = renderModel(model);
    expect(container.querySelector('strong')?.textContent).toBe('bold');
    expect(container.querySelector('code')?.textContent).toBe('code');
    expect(container.querySelector('script')).toBeNull();
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('a')?.getAttribute('href') ?? '').not.toMatch(/javascript/);
    expect(screen.getByRole('status')).toHaveTextContent('Working…');
  });

  it('answers an open approval and question in place, then shows the answer', async () => {
    const events = rawEvents('tasks');
    const opened = events.findIndex((event) => event.type === 'request.opened');
    const model = new ConversationModel();
    model.push(events.slice(0, opened + 1));
    const answer = vi.fn<AnswerRequest>(async () => {});
    const view = renderModel(model, answer);
    const user = userEvent.setup();
    const card = view.container.querySelector('[data-request-state="open"]') as HTMLElement;
    expect(card).not.toBeNull();
    const scope = within(card);
    await user.click(scope.getByRole('radio', { name: '1.4.0' }));
    await user.type(scope.getByRole('textbox', { name: 'Your answer' }), 'Friday');
    await user.click(scope.getByRole('checkbox', { name: 'fixes' }));
    await user.click(scope.getByRole('button', { name: 'Send answer' }));
    expect(answer).toHaveBeenCalledWith('req-1', {
      reply: 'answer',
      answers: [
        { id: 'version', answer: ['1.4.0'] },
        { id: 'day', answer: ['Friday'] },
        { id: 'kinds', answer: ['fixes'] },
      ],
    });
    model.push(events.slice(opened + 1));
    view.update();
    expect(view.container.querySelector('[data-request-state="answered"]')).not.toBeNull();
  });

  it('denies an approval with a reason, and says so when sending fails', async () => {
    const events = rawEvents('review');
    const opened = events.findIndex((event) => event.type === 'request.opened');
    const model = new ConversationModel();
    model.push(events.slice(0, opened + 1));
    const answer = vi.fn<AnswerRequest>(async () => {
      throw new Error('the request was answered already');
    });
    renderModel(model, answer);
    const user = userEvent.setup();
    await user.type(screen.getByRole('textbox', { name: /Reason for denying/ }), 'not today');
    await user.click(screen.getByRole('button', { name: 'Deny' }));
    expect(answer).toHaveBeenCalledWith('req-1', { reply: 'deny', reason: 'not today' });
    expect(await screen.findByRole('alert')).toHaveTextContent('answered already');
  });

  it('shows a request raised by code under the nested call that waits, answerable there', async () => {
    const time = '2026-11-30T12:00:00.000Z';
    const presentation = { action: 'Run command', remark: 'git push' };
    const model = new ConversationModel();
    model.push([
      { type: 'turn.started', seq: 1, time, turnId: 't1', prompt: 'publish' },
      { type: 'step.started', seq: 2, time, turnId: 't1', step: 1 },
      {
        type: 'tool.start',
        seq: 3,
        time,
        callId: 'code_1',
        toolName: 'run_code',
        caller: 'direct',
        arguments: { code: 'sdk.tool.call("bash", {"command": "git push"})' },
        presentation: { action: 'Run code', remark: '' },
      },
      {
        type: 'tool.start',
        seq: 4,
        time,
        callId: 'bash_1',
        toolName: 'bash',
        caller: 'code',
        parentCallId: 'code_1',
        arguments: { command: 'git push' },
        presentation,
      },
      {
        type: 'request.opened',
        seq: 5,
        time,
        requestId: 'req-9',
        callId: 'bash_1',
        parentCallId: 'code_1',
        toolName: 'bash',
        ask: { kind: 'approval', reason: 'pushing publishes', presentation, arguments: {} },
      },
    ]);
    const answer = vi.fn<AnswerRequest>(async () => {});
    const view = renderModel(model, answer);
    const card = view.container.querySelector('[data-request-id="req-9"]') as HTMLElement;
    expect(card).not.toBeNull();
    // Under the nested call's own wrapper, inside run_code's list of calls.
    expect(card.closest('[data-chat-call-id]')?.getAttribute('data-chat-call-id')).toBe('bash_1');
    expect(card.closest('ol')).not.toBeNull();
    expect(view.container.querySelectorAll('.qc-request')).toHaveLength(1);
    expect(within(card).getByRole('heading')).toHaveTextContent('Approval needed: bash');
    await userEvent.setup().click(within(card).getByRole('button', { name: 'Allow once' }));
    expect(answer).toHaveBeenCalledWith('req-9', { reply: 'approve' });
    model.push([
      {
        type: 'request.resolved',
        seq: 6,
        time,
        requestId: 'req-9',
        callId: 'bash_1',
        parentCallId: 'code_1',
        resolution: { outcome: 'approved' },
        resolvedBy: 'web',
      },
    ]);
    view.update();
    expect(
      view.container.querySelector('[data-chat-call-id="bash_1"] [data-request-id="req-9"]'),
    ).toHaveAttribute('data-request-state', 'approved');
  });

  it('speaks Simplified Chinese', () => {
    const model = new ConversationModel();
    model.push(rawEvents('review'));
    renderModel(model, undefined, 'zh-CN');
    expect(screen.getAllByText(/本轮完成/).length).toBeGreaterThan(0);
  });
});
